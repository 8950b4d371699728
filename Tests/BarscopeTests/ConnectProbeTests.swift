import Barscope
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Why an RTSP source could not be reached, asked of the network itself (rtspsrc says the same for every cause).
@Suite(.suiteLimit) struct ConnectProbeTests {
    /// A loopback TCP socket bound to a free port; listening or not.
    final class Port {
        let fd: Int32
        let number: Int
        init(listening: Bool) throws {
            let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            if listening { listen(socketFD, 4) }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(socketFD, $0, &length) }
            }
            fd = socketFD
            number = Int(UInt16(bigEndian: address.sin_port))
            try #require(bound == 0)
        }
        deinit { close(fd) }
    }

    @Test func aClosedPortIsNamedWithoutTheCredentials() throws {
        let port = try Port(listening: false)  // bound, not listening: connections are refused
        let reason = ConnectProbe.diagnose(uri: "rtsp://admin:s3cret@127.0.0.1:\(port.number)/cam")
        #expect(reason == "nothing listens on 127.0.0.1:\(port.number) (connection refused)")
    }

    @Test func aListeningPortIsNotTheFault() throws {
        let port = try Port(listening: true)
        #expect(ConnectProbe.diagnose(uri: "rtsp://127.0.0.1:\(port.number)/cam") == nil)
    }

    @Test func aURIWithoutAHostSaysNothing() {
        #expect(ConnectProbe.diagnose(uri: "rtsp:///cam") == nil)
        #expect(ConnectProbe.diagnose(uri: "not a uri") == nil)
    }
}
