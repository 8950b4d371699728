// swift-tools-version:6.0
// Barscope: GStreamer + ZBar + cairo, driven from Swift. See ../shared/DESIGN.md for the graph.
import PackageDescription

let package = Package(
    name: "Barscope",
    products: [
        .library(name: "Barscope", targets: ["Barscope"]),
        .executable(name: "barscope", targets: ["barscope"]),
        // The GStreamer plugin: libgstbarscope.so, loadable from GST_PLUGIN_PATH.
        .library(name: "gstbarscope", type: .dynamic, targets: ["BarscopeElement"]),
    ],
    targets: [
        // One system-library target per C library, found through pkg-config, installed from Debian by scripts/setup.
        .systemLibrary(
            name: "CGStreamer", pkgConfig: "gstreamer-1.0",
            providers: [.apt(["libgstreamer1.0-dev"])]),
        .systemLibrary(
            name: "CGStreamerApp", pkgConfig: "gstreamer-app-1.0",
            providers: [.apt(["libgstreamer-plugins-base1.0-dev"])]),
        .systemLibrary(
            name: "CGStreamerVideo", pkgConfig: "gstreamer-video-1.0",
            providers: [.apt(["libgstreamer-plugins-base1.0-dev"])]),
        // The discoverer: an archive's own start time (its container's datetime tag) for `barscope index`.
        .systemLibrary(
            name: "CGStreamerPbutils", pkgConfig: "gstreamer-pbutils-1.0",
            providers: [.apt(["libgstreamer-plugins-base1.0-dev"])]),
        .systemLibrary(
            name: "CGStreamerRTSPServer", pkgConfig: "gstreamer-rtsp-server-1.0",
            providers: [.apt(["libgstrtspserver-1.0-dev"])]),
        .systemLibrary(name: "CZBar", pkgConfig: "zbar", providers: [.apt(["libzbar-dev"])]),
        .systemLibrary(name: "CCairo", pkgConfig: "cairo", providers: [.apt(["libcairo2-dev"])]),
        // libsoup 3: the service's HTTP server (`barscope serve`), on GLib's main loop.
        .systemLibrary(name: "CSoup", pkgConfig: "libsoup-3.0", providers: [.apt(["libsoup-3.0-dev"])]),
        // Events to brokers: Eclipse libmosquitto (MQTT) and librdkafka (Kafka, with its mock cluster for the tests).
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CKafka", pkgConfig: "rdkafka", providers: [.apt(["librdkafka-dev"])]),
        // The sightings index: SQLite embedded (one file), PostgreSQL shared by the nodes of a site (libpq).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // zxing-cpp, the second decoding engine (DataMatrix, Aztec, PDF417, Micro QR; character sets ZBar gets wrong).
        .systemLibrary(name: "CZXing", pkgConfig: "zxing", providers: [.apt(["libzxing-dev"])]),
        // zxing-cpp is C++: a few lines of C++ give Swift a plain C call (CZXingReader.h).
        .target(name: "CZXingReader", dependencies: ["CZXing"]),
        // The only C we write: what Swift cannot import (macros, varargs, casts, signal handlers).
        .target(
            name: "CBarscope",
            dependencies: ["CGStreamer", "CGStreamerApp", "CGStreamerVideo"]),
        .target(
            name: "Barscope",
            dependencies: [
                "CGStreamer", "CGStreamerApp", "CGStreamerVideo", "CGStreamerPbutils", "CGStreamerRTSPServer", "CZBar",
                "CCairo",
                "CQREncode", "CBarscope", "CZXingReader", "CSoup", "CMosquitto", "CKafka", "CSQLite", "CPostgres",
            ],
            // The web console of `barscope serve` and its API's OpenAPI document, compiled in (no files to install
            // beside the binary).
            resources: [
                .embedInCode("Service/Console/index.html"), .embedInCode("Service/Console/console.js"),
                .embedInCode("Service/Console/console.css"), .embedInCode("Service/openapi.json"),
            ],
            // Optimised in the debug build too: the tests (and the sanitizers) then run the scanner at the speed it
            // ships at. Unoptimised, its pixel loops (the bar-edge refiner's sampling) cost 40-60 ms a 640x360
            // frame, so the tests' live streams dropped frames where the shipped binary keeps up.
            swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        .executableTarget(name: "barscope", dependencies: ["Barscope", "CBarscope"]),
        // Fuzz targets: under libFuzzer with scripts/fuzz (-sanitize=fuzzer -DLIBFUZZER); built plainly, it replays
        // inputs (a corpus, a crash file) through the same targets.
        .target(name: "CFuzzDriver", path: "Fuzz/CFuzzDriver"),
        .executableTarget(name: "barscope-fuzz", dependencies: ["Barscope", "CFuzzDriver"], path: "Fuzz/Sources"),
        // The element's GObject and plugin boilerplate (C), and its work (Swift, the same library as the tool's).
        .target(
            name: "CBarscopePlugin", dependencies: ["CGStreamer", "CGStreamerVideo"],
            cSettings: [.define("PACKAGE", to: "\"barscope\"")]),
        .target(
            name: "BarscopeElement",
            dependencies: ["Barscope", "CBarscope", "CBarscopePlugin", "CCairo", "CGStreamer", "CGStreamerVideo"]),
        // CCairo: the accuracy tests rotate their pictures with cairo, apart from the reader's own transforms.
        .testTarget(
            name: "BarscopeTests",
            dependencies: [
                "Barscope", "CKafka", "CCairo", "CGStreamer", "CGStreamerApp", "CGStreamerVideo", "CBarscope",
                "TestSupport",
            ]),
        // What the tests check differently under a sanitizer (scripts/test --sanitize), each said in a warning.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .target(name: "CTestRTSPServer", dependencies: ["CGStreamerRTSPServer"], path: "Tests/CTestRTSPServer"),
        .testTarget(
            name: "PipelineTests",
            dependencies: [
                "Barscope", "CGStreamer", "CGStreamerApp", "CBarscope", "CCairo", "CGStreamerRTSPServer",
                "CTestRTSPServer", "TestSupport",
            ],
            exclude: ["Goldens", "Frames"]),
        .testTarget(name: "CLITests", dependencies: ["Barscope", "TestSupport"]),
        .testTarget(
            name: "ElementTests",
            dependencies: ["Barscope", "CGStreamer", "CGStreamerVideo", "CBarscope", "CCairo", "TestSupport"],
            resources: [.copy("gst-inspect-barscope.txt")]),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
