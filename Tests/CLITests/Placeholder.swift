import Testing
@Test func placeholderCLITests() {}
