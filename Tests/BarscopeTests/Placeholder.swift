import Testing
@Test func placeholderBarscopeTests() {}
