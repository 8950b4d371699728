extension Duration {
    /// The duration in seconds, as a Double (for rates, bounds and meters).
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
