/// The web console that `barscope serve` answers at `/`: plain HTML, CSS and JavaScript in `Service/Console/`,
/// compiled into the program (SwiftPM's `embedInCode`), so that an installed binary serves them with nothing beside it
/// and the page needs no network but the service's own address.
public enum Console {
    static let page = PackageResources.index_html
    static let script = PackageResources.console_js
    static let style = PackageResources.console_css

    /// Served without the token: they hold no secret, and the page asks for the token before it asks for anything.
    public static let publicPaths: Set<String> = ["/", "/console.js", "/console.css"]

    /// The page may load only its own script, style and images (frames and snapshots come as blobs).
    static let securityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; media-src 'self'; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}
