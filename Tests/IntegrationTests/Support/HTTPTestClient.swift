import Foundation

/// A deliberately small HTTP/1.1 client over a loopback TCP socket, so tests control exactly
/// which bytes go out and when (pieces, pauses, keep-alive).
struct HTTPTestClient {
    let port: UInt16

    struct Response {
        let status: Int
        let headers: [String: String]
        let body: Data

        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
        }
        var text: String { String(decoding: body, as: UTF8.self) }

        /// The value of an unlabelled sample `name` in a Prometheus text answer (`/v1/metrics`).
        func sample(_ name: String) -> Double? {
            let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            return line.flatMap { Double($0.split(separator: " ").last ?? "") }
        }
    }

    /// One request on a new connection.
    func send(
        _ method: String, _ path: String, headers: [String: String] = [:], body: Data? = nil, token: String? = nil
    ) throws -> Response {
        let connection = try TestConnection(port: port)
        var allHeaders = headers
        if let token { allHeaders["Authorization"] = "Bearer \(token)" }
        if body != nil, allHeaders["Content-Type"] == nil { allHeaders["Content-Type"] = "application/json" }
        try connection.write(Self.head(method, path, headers: allHeaders, bodyLength: body?.count))
        if let body { try connection.write(body) }
        return try connection.readResponse(hasBody: method != "HEAD")
    }

    func json(_ method: String, _ path: String, _ object: Any, token: String? = nil) throws -> Response {
        try send(method, path, body: try JSONSerialization.data(withJSONObject: object), token: token)
    }

    static func head(_ method: String, _ path: String, headers: [String: String], bodyLength: Int?) -> Data {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let bodyLength { text += "Content-Length: \(bodyLength)\r\n" }
        text += "\r\n"
        return Data(text.utf8)
    }
}

/// A TCP connection to 127.0.0.1 with a receive timeout, for raw requests.
final class TestConnection {
    private let descriptor: Int32
    private var buffer = Data()

    /// `source`: another loopback address (127.0.0.0/8) to connect from.
    ///
    /// The socket becomes `descriptor` only once connected: an initializer that throws after
    /// every property is set still runs `deinit`, whose `close` would then close the number a
    /// second time, by then perhaps another thread's new socket (a refused connect under load sent
    /// one request's body down another's connection).
    init(port: UInt16, timeoutSeconds: Int = 10, source: String? = nil) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw ProcessFailure(description: "socket() failed") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            guard Self.withIPv4(source, port: 0, { bind(socket, $0, $1) }) == 0 else {
                close(socket)
                throw ProcessFailure(description: "cannot bind to \(source)")
            }
        }
        guard Self.withIPv4("127.0.0.1", port: port, { connect(socket, $0, $1) }) == 0 else {
            close(socket)
            throw ProcessFailure(description: "cannot connect to 127.0.0.1:\(port)")
        }
        descriptor = socket
    }

    /// Calls `body` (`bind`, `connect`) with the IPv4 socket address of `address`:`port`.
    private static func withIPv4(
        _ address: String, port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
    ) -> Int32 {
        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = port.bigEndian
        socketAddress.sin_addr.s_addr = inet_addr(address)
        return withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    deinit { close(descriptor) }

    /// The port of this end of the connection (how the server's side of it is found).
    var localPort: UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        return UInt16(bigEndian: address.sin_port)
    }

    func write(_ data: Data) throws {
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let sent = Foundation.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { throw ProcessFailure(description: "send failed: errno \(errno)") }
                offset += sent
            }
        }
    }

    func write(_ text: String) throws { try write(Data(text.utf8)) }

    /// Reads one response (Content-Length framed; no body follows an answer to HEAD). A
    /// `100 Continue` is skipped, or answered as the response when `interim`. Throws on timeout
    /// or a closed connection.
    func readResponse(hasBody: Bool = true, interim: Bool = false) throws -> HTTPTestClient.Response {
        while true {
            if let end = buffer.range(of: Data("\r\n\r\n".utf8)) {
                let head = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
                    throw ProcessFailure(description: "bad status line")
                }
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
                        .trimmingCharacters(in: .whitespaces)
                }
                if status == 100 {
                    buffer.removeSubrange(buffer.startIndex..<end.upperBound)
                    if interim { return HTTPTestClient.Response(status: status, headers: headers, body: Data()) }
                    continue
                }
                let length = hasBody ? Int(headers["content-length"] ?? "0") ?? 0 : 0
                while buffer.count - (end.upperBound - buffer.startIndex) < length { try fill() }
                let bodyStart = end.upperBound
                let body = buffer[bodyStart..<(bodyStart + length)]
                let response = HTTPTestClient.Response(status: status, headers: headers, body: Data(body))
                buffer.removeSubrange(buffer.startIndex..<(bodyStart + length))
                return response
            }
            try fill()
        }
    }

    /// True when the server closed the connection (read returns 0) within the timeout.
    func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        return recv(descriptor, &byte, 1, 0) == 0
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = recv(descriptor, &chunk, chunk.count, 0)
        guard count > 0 else { throw ProcessFailure(description: "connection closed or timed out (recv \(count), errno \(errno))") }
        buffer.append(contentsOf: chunk[0..<count])
    }
}
