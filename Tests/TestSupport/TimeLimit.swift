import Testing

extension Trait where Self == TimeLimitTrait {
    /// Every suite's limit for each of its tests: a test still running after it fails loudly, naming itself
    /// (`Time limit was exceeded`), rather than holding the run until CI's own limit. A sanitizer's build runs
    /// several times slower, so its limit is stated apart. `scripts/test` also bounds the whole `swift test` run.
    public static var suiteLimit: Self { .timeLimit(.minutes(Sanitizer.active ? 40 : 10)) }
}
