import Testing
@Test func placeholderPipelineTests() {}
