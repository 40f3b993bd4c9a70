import Foundation

/// One HTTP/1.1 request on a new loopback connection (`Connection: close`), its answer read to
/// the connection's end: enough for `TestApp.live` and a test serving a router of its own.
public enum LoopbackHTTP {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    public static func send(
        _ method: String, _ target: String, headers: [(name: String, value: String)], body: [UInt8]?, port: UInt16
    ) throws -> TestResponse {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket() failed: errno \(errno)") }
        defer { close(socket) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw Failure(description: "cannot connect to 127.0.0.1:\(port): errno \(errno)") }

        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + (body ?? [])
        var offset = 0
        while offset < request.count {
            let sent = request[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Failure(description: "send failed: errno \(errno)") }
            offset += sent
        }

        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = recv(socket, &chunk, chunk.count, 0)
            if count == 0 { break }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw Failure(description: "recv failed: errno \(errno)")
            }
            received += chunk[0..<count]
        }
        return try parse(received, method: method)
    }

    /// Status line, headers and a Content-Length framed body (none after HEAD; interim 1xx skipped).
    static func parse(_ bytes: [UInt8], method: String) throws -> TestResponse {
        var rest = bytes[...]
        while true {
            guard let end = headEnd(rest) else { throw Failure(description: "no complete answer head") }
            let lines = String(decoding: rest[rest.startIndex..<end], as: UTF8.self).components(separatedBy: "\r\n")
            let statusLine = lines[0].split(separator: " ")
            guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
                throw Failure(description: "bad status line \(lines[0])")
            }
            var headers: [(name: String, value: String)] = []
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            rest = rest[(end + 4)...]
            if (100..<200).contains(status) { continue }
            let length = method == "HEAD" ? 0 : headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? rest.count
            guard rest.count >= length else { throw Failure(description: "answer body cut short") }
            return TestResponse(status: status, headers: headers, body: Array(rest.prefix(length)))
        }
    }

    private static func headEnd(_ bytes: ArraySlice<UInt8>) -> Int? {
        var index = bytes.startIndex
        while index + 3 < bytes.endIndex {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 { return index }
            index += 1
        }
        return nil
    }
}
