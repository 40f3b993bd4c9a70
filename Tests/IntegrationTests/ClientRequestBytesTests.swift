import Foundation
import KeychainAPI
@testable import KeychainClient
import Testing

/// What KeychainClient puts on the wire, read by a one-shot loopback listener that answers `{}`.
@Suite
struct ClientRequestBytesTests {
    /// Listens on 127.0.0.1:0, accepts one connection (waiting at most 10 s), reads the request
    /// head and body, answers 200 `{}` and closes.
    final class OneShotListener: @unchecked Sendable {
        // @unchecked: `received` is written by the accepting thread before `done` is signalled
        // and read only after waiting for it.
        let port: UInt16
        private let descriptor: Int32
        private var received = ""
        private let done = DispatchSemaphore(value: 0)

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, length) == 0 && listen(descriptor, 1) == 0
                        && getsockname(descriptor, $0, &length) == 0
                }
            }
            guard descriptor >= 0, bound else {
                close(descriptor)
                throw ProcessFailure(description: "cannot listen on 127.0.0.1")
            }
            self.descriptor = descriptor
            port = UInt16(bigEndian: address.sin_port)
            Thread { [self] in serveOnce() }.start()
        }

        private func serveOnce() {
            defer {
                close(descriptor)
                done.signal()
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 10_000) == 1 else { return }
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { return }
            defer { close(connection) }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var bytes = Data()
            var chunk = [UInt8](repeating: 0, count: 4096)
            // The head, then as many body bytes as Content-Length says.
            while true {
                if let end = bytes.range(of: Data("\r\n\r\n".utf8)) {
                    let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).lowercased()
                    let length = head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    if bytes.count - (end.upperBound - bytes.startIndex) >= length { break }
                }
                let count = recv(connection, &chunk, chunk.count, 0)
                guard count > 0 else { break }
                bytes.append(contentsOf: chunk[0..<count])
            }
            received = String(decoding: bytes, as: UTF8.self)
            let answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
            _ = answer.withCString { Foundation.send(connection, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        }

        /// The request as received (empty when none came within the 10 s).
        func request() -> String {
            done.wait()
            return received
        }
    }

    @Test func pathSegmentsAndQueryItemsArePercentEncodedAsBefore() async throws {
        let listener = try OneShotListener()
        let keychain = try KeychainClient(
            baseURL: URL(string: "http://127.0.0.1:\(listener.port)/")!, token: "kc_wire-test", timeout: 10)
        let service = "svc a?b#c%d&e=f+g é/"
        _ = try await keychain.send(
            "PUT", "/tokens/" + KeychainClient.pathSegment(service),
            query: queryParameters([("user", "gus/x@naver.com&y=1 #z"), ("accessGroup", "a+b")]),
            body: JSONValue.object([("accessToken", .string("at"))]).serialized())
        let request = listener.request()
        // The bytes the URLSession client sent: the path segment escaped but for `&=+` (allowed in
        // a path), each query key and value escaped to RFC 3986 unreserved characters.
        #expect(request.hasPrefix(
            "PUT /v1/tokens/svc%20a%3Fb%23c%25d&e=f+g%20%C3%A9%2F?user=gus%2Fx%40naver.com%26y%3D1%20%23z&accessGroup=a%2Bb HTTP/1.1\r\n"))
        let lines = request.components(separatedBy: "\r\n").map { $0.lowercased() }
        #expect(lines.contains("authorization: bearer kc_wire-test"))
        #expect(lines.contains("content-type: application/json"))
        #expect(lines.contains("accept: application/json"))
        #expect(request.hasSuffix("\r\n\r\n{\"accessToken\":\"at\"}"))
    }

    @Test func theSynchronousPathSendsTheSameRequest() throws {
        let listener = try OneShotListener()
        let keychain = try KeychainClient(
            baseURL: URL(string: "http://127.0.0.1:\(listener.port)")!, token: "kc_wire-test", timeout: 10)
        _ = try keychain.sendSynchronously(
            "GET", "/items/genericPassword", query: queryParameters([("service", "a b/c"), ("account", "ü;x")]))
        #expect(listener.request().hasPrefix(
            "GET /v1/items/genericPassword?service=a%20b%2Fc&account=%C3%BC%3Bx HTTP/1.1\r\n"))
    }
}

extension ClientRequestBytesTests {
    @Test func aClosedPortIsNotAvailableAtOnceNamingTheServer() async throws {
        let keychain = try KeychainClient(baseURL: URL(string: "http://127.0.0.1:9")!, token: "kc_secret-token", timeout: 10)
        for synchronous in [false, true] {
            do {
                if synchronous {
                    _ = try keychain.sendSynchronously("GET", "/health")
                } else {
                    _ = try await keychain.send("GET", "/health")
                }
                Issue.record("nothing listens on port 9")
            } catch let error as KeychainError {
                #expect(error.code == .notAvailable)
                #expect(error.detail?.hasPrefix("cannot reach http://127.0.0.1:9: ") == true)
                #expect(error.detail?.lowercased().contains("refused") == true)
                #expect(error.detail?.contains("kc_secret-token") == false)
            }
        }
    }
}

extension ClientRequestBytesTests {
    @Test func aTokenNoHeaderCanCarryIsRefusedAtCreationWithoutEchoingIt() throws {
        #expect {
            _ = try KeychainClient(baseURL: URL(string: "http://127.0.0.1:9")!, token: "kc_secret-token\n")
        } throws: { error in
            guard let error = error as? KeychainError else { return false }
            return error.code == .param && error.detail?.contains("newline") == true
                && error.detail?.contains("kc_secret") == false
        }
    }
}

/// A query string for the client's `send`, from name/value pairs.
func queryParameters(_ pairs: [(String, String)]) -> [QueryParameter] {
    pairs.map { QueryParameter(name: $0.0, value: $0.1) }
}
