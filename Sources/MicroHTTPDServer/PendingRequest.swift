import Glibc
import KeychainHTTP
import KeychainCore

/// A request being received: its head, then the body pieces as they arrive.
final class PendingRequest {
    /// Collected once, on the first call (the framing check and the request both use them).
    var headers: [(name: String, value: String)] = []
    /// The client's address, resolved once from the peer and the headers (`TrustedProxies`).
    var clientAddress: String?
    /// The body so far. It may hold a secret: every buffer it leaves behind is wiped (see `append`
    /// and `wipeBody`).
    private(set) var body: [UInt8] = []
    var state = State.reading
    /// The answer an `Offload` thread made, set before it resumes the connection.
    var answer: HTTPResponse?

    enum State {
        /// The body is kept as it arrives.
        case reading
        /// The body outgrew the limit: the rest streams past, and the answer is 413.
        case tooLarge
        /// An answer was queued on the head: nothing more of the request is kept or answered.
        case answered
    }

    /// Room for a body of `declared` bytes (its Content-Length), so that it never moves.
    func reserveBody(_ declared: Int) { body.reserveCapacity(declared) }

    /// Appends a piece of the body. A body that outgrows its buffer (chunked, or longer than
    /// declared) moves to a larger one, and the one it left is wiped.
    func append(_ piece: UnsafeBufferPointer<UInt8>) {
        if body.count + piece.count > body.capacity {
            var larger: [UInt8] = []
            larger.reserveCapacity(max(body.count + piece.count, 2 * body.capacity))
            larger.append(contentsOf: body)
            wipeBody()
            body = larger
        }
        body.append(contentsOf: piece)
    }

    /// Zeroes the body's bytes where they lie (also while an `HTTPRequest` made from it is still
    /// held: the bytes are shared, not copied) and lets the buffer go.
    func wipeBody() {
        body.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { explicit_bzero(UnsafeMutableRawPointer(mutating: base), bytes.count) }
        }
        body = []
    }

    deinit { if !body.isEmpty { wipeBody() } }
}
