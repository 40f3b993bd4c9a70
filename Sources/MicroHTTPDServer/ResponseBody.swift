internal import CMicroHTTPD
import Glibc
import KeychainCore

/// An answer's body lent to libmicrohttpd without a copy: the response points at the array's
/// own storage, and this box keeps the array alive until libmicrohttpd destroys the response
/// (once the last byte is sent or the connection is gone) and calls `release`, which wipes the
/// bytes (they may hold a secret or a token) and lets the array go.
///
/// A native Swift array keeps its elements at one address while it is alive and not mutated;
/// nothing mutates it but the wipe in `release`, which zeroes the bytes where they lie (a `let`:
/// no exclusivity check on each access).
final class ResponseBody {
    private let bytes: [UInt8]

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// A libmicrohttpd response for `body`, or nil when libmicrohttpd cannot make one.
    static func handle(for body: [UInt8]) -> OpaquePointer? {
        guard !body.isEmpty else { return MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT) }
        let owner = Unmanaged.passRetained(ResponseBody(body))
        let base = owner.takeUnretainedValue().bytes.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress!) }
        guard let handle = MHD_create_response_from_buffer_with_free_callback_cls(body.count, base, release, owner.toOpaque())
        else {
            owner.release()
            return nil
        }
        return handle
    }

    private static let release: MHD_ContentReaderFreeCallback = { context in
        guard let context else { return }
        let owner = Unmanaged<ResponseBody>.fromOpaque(context)
        owner.takeUnretainedValue().bytes.withUnsafeBytes { bytes in
            explicit_bzero(UnsafeMutableRawPointer(mutating: bytes.baseAddress!), bytes.count)
        }
        owner.release()
    }
}

extension ResponseBody {
    /// A libmicrohttpd response that sends `file` from its descriptor (sendfile on plain HTTP,
    /// reads of a block at a time under TLS), never holding it in memory. libmicrohttpd owns the
    /// descriptor from here and closes it when it destroys the response; nil when the descriptor
    /// was handed over already or libmicrohttpd cannot make a response (it is then closed here).
    static func handle(for file: ReadOnlyFile) -> OpaquePointer? {
        guard let descriptor = file.takeDescriptor() else { return nil }
        guard let handle = MHD_create_response_from_fd64(file.size, descriptor) else {
            close(descriptor)
            return nil
        }
        return handle
    }
}
