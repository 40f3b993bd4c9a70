import Foundation

/// A listening address parsed from its text form, as the sockaddr libmicrohttpd binds.
struct SocketAddress {
    private enum Storage {
        case v4(sockaddr_in)
        case v6(sockaddr_in6)
    }

    private let storage: Storage
    let host: String
    let port: UInt16

    var isIPv6: Bool { if case .v6 = storage { true } else { false } }

    init(host: String, port: UInt16) throws {
        self.host = host
        self.port = port
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            storage = .v4(v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            storage = .v6(v6)
            return
        }
        throw ServerStartError(description: "listen address \"\(host)\" is not an IPv4 or IPv6 address")
    }

    func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>) -> R) -> R {
        switch storage {
        case .v4(var address):
            withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        case .v6(var address):
            withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1, body) }
        }
    }

    /// Binds a throwaway socket to tell "address in use" apart from other failures with a clear
    /// message; libmicrohttpd itself only says that it failed.
    func checkAvailable() throws {
        let descriptor = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var reuse: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        let length = socklen_t(isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let result = withSockaddr { bind(descriptor, $0, length) }
        guard result != 0 else { return }
        let reason = errno == EADDRINUSE ? "the port is already in use" : String(cString: strerror(errno))
        throw ServerStartError(description: "cannot listen on \(host):\(port): \(reason)")
    }
}
