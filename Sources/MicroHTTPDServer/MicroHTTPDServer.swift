internal import CMicroHTTPD
import Foundation
import KeychainAPI
import KeychainCore
public import KeychainHTTP
public import Logging
import Synchronization

/// Serves an `HTTPResponder` on libmicrohttpd: an internal epoll polling thread with a pool of
/// worker threads, each calling the responder synchronously.
///
/// Per request, the first access-handler call attaches a `PendingRequest` and, for a request
/// without a body, answers nothing yet (queuing a response there would make libmicrohttpd close
/// the keep-alive connection). A request that declares a body is put to the responder on its
/// head first (`HTTPResponder.respond(toHead:)`): a refusal is answered at once and the
/// connection closed, so no body byte of an unauthenticated request is kept. Upload pieces are
/// appended to the pending request; the answer is queued on the call where no upload data is
/// left, and the body is wiped once the handler is done. A request that `offloads` picks is
/// answered on an `Offload` thread instead, its connection suspended meanwhile, and its answer
/// queued on the call that follows the resume. The completion callback releases the
/// state, also for aborted requests. Each connection is watched by `HeaderDeadline` from its
/// start to its close.
public final class MicroHTTPDServer: Sendable {
    private let responder: any HTTPResponder
    private let settings: ServerSettings
    private let logger: Logger
    private let daemon: Mutex<DaemonHandle?> = Mutex(nil)
    /// Requests between their first callback and their completion.
    let inFlight = Atomic<Int>(0)
    /// False once `stop` begins: a new connection is then closed at once (not `MHD_quiesce_daemon`,
    /// which in 0.9.75 with a worker pool on epoll races the workers and may abort the process).
    let accepting = Atomic<Bool>(true)
    let headerDeadline: HeaderDeadline
    /// Whether a request would keep its worker waiting (keychaind: a write, which waits for a
    /// storage commit), so that it is better answered on an `offload` thread. Unless it is the
    /// only request in progress: then no other waits behind it, and it is spared the hop.
    let offloads: @Sendable (HTTPRequest) -> Bool
    let offload = Offload(maxThreads: 64)
    /// Requests suspended until a token exchange ends (`DeferredAnswer`), until resumed.
    let deferredAnswers = Atomic<Int>(0)

    public init(
        responder: any HTTPResponder, settings: ServerSettings, logger: Logger,
        offloads: @escaping @Sendable (HTTPRequest) -> Bool = { _ in false }
    ) {
        self.responder = responder
        self.settings = settings
        self.logger = logger
        self.offloads = offloads
        headerDeadline = HeaderDeadline(seconds: settings.headerTimeoutSeconds, logger: logger)
    }

    /// Whether the linked libmicrohttpd can serve HTTPS.
    public static var supportsTLS: Bool { CMicroHTTPD_has_tls() != 0 }

    /// Binds and starts the worker threads. Throws when the address is taken or invalid.
    public func start() throws {
        try daemon.withLock { handle in
            precondition(handle == nil, "server already started")
            handle = try DaemonHandle.start(server: self, settings: settings)
        }
        headerDeadline.start()
    }

    /// The port actually listened on (the chosen one when started with port 0).
    public var port: UInt16 {
        daemon.withLock { $0.map { CMicroHTTPD_bound_port($0.pointer) } ?? 0 }
    }

    /// Stops accepting connections, waits (at most the grace period) for in-flight requests to be
    /// answered, then closes every connection and joins the threads. Idempotent.
    public func stop() {
        guard let handle = daemon.withLock({ handle -> DaemonHandle? in
            defer { handle = nil }
            return handle
        }) else { return }
        accepting.store(false, ordering: .releasing)
        let deadline = Date().addingTimeInterval(Double(settings.shutdownGraceSeconds))
        while inFlight.load(ordering: .acquiring) > 0, Date() < deadline {
            usleep(10_000)
        }
        let abandoned = inFlight.load(ordering: .acquiring)
        if abandoned > 0 { logger.warning("stopping with \(abandoned) request(s) unfinished after the grace period") }
        // libmicrohttpd may not stop with a connection suspended: offloaded answers resume theirs first.
        while offload.unfinished > 0 || deferredAnswers.load(ordering: .acquiring) > 0 { usleep(1_000) }
        handle.stop()
        headerDeadline.stop()
    }

    // MARK: Called from libmicrohttpd's threads

    /// The answer for a fully received request; a deferred one when it must wait for a token
    /// exchange, which no thread of ours waits for (`answerLater`).
    func answer(_ request: HTTPRequest) -> HTTPResponse { responder.respond(to: request, exchangeWait: .handOff) }

    /// Answers a suspended request once the exchange it waits for ends (or its wait limit passes):
    /// the answer is made on an offload thread, then the connection resumed. A provider that
    /// hangs holds no worker and no offload thread, only the suspended connections of its callers.
    func answerLater(_ deferred: DeferredAnswer, _ suspended: Suspended) {
        deferredAnswers.add(1, ordering: .relaxed)
        deferred.exchange.whenFinished(orAfter: deferred.waitLimit) { [self] in
            offload.run { [self] in
                suspended.pending.answer = deferred.answer()
                suspended.pending.wipeBody()
                MHD_resume_connection(suspended.connection)
                deferredAnswers.subtract(1, ordering: .releasing)
            }
        }
    }

    /// The answer to a request refused on its head, or nil to read its body.
    func answer(head request: HTTPRequest) -> HTTPResponse? { responder.respond(toHead: request) }

    /// The refusals below are answered in the shape of the route the request was for
    /// (`HTTPResponder.refusal`): keychaind's, or Vault's on the Vault surface.
    func bodyTooLarge(_ head: @autoclosure () -> HTTPRequest) -> HTTPResponse {
        logger.info("- unmatched 413 client=-")
        return responder.refusal(
            KeychainError.param("request body exceeds the limit of \(settings.maxBodyBytes) bytes"), status: 413, to: head())
    }

    func badFraming(_ problem: String, _ head: @autoclosure () -> HTTPRequest) -> HTTPResponse {
        logger.info("request", metadata: ["route": "unmatched", "status": "400", "client": "-"])
        return responder.refusal(KeychainError.param("the request's length is ambiguous: \(problem)"), status: nil, to: head())
    }

    func queryNotUTF8(_ head: @autoclosure () -> HTTPRequest) -> HTTPResponse {
        logger.info("request", metadata: ["route": "unmatched", "status": "400", "client": "-"])
        return responder.refusal(KeychainError.param("the query string does not decode to UTF-8"), status: nil, to: head())
    }

    var maxBodyBytes: Int { settings.maxBodyBytes }
    var trustedProxies: TrustedProxies { settings.trustedProxies }
}

/// Owns the `MHD_Daemon` and the retained reference to the server its callbacks use.
final class DaemonHandle: @unchecked Sendable {
    // @unchecked: the pointer is only used by start/stop, which MicroHTTPDServer
    // serialises behind its Mutex, and by libmicrohttpd itself.
    let pointer: OpaquePointer
    private let context: Unmanaged<MicroHTTPDServer>
    private var stopped = false

    private init(pointer: OpaquePointer, context: Unmanaged<MicroHTTPDServer>) {
        self.pointer = pointer
        self.context = context
    }

    static func start(server: MicroHTTPDServer, settings: ServerSettings) throws -> DaemonHandle {
        let address = try SocketAddress(host: settings.host, port: settings.port)
        try address.checkAvailable()
        let context = Unmanaged.passRetained(server)
        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        if settings.tls != nil { flags |= MHD_USE_TLS.rawValue }
        let keyPEM = settings.tls.map { strdup($0.keyPEM) } ?? nil
        let certificatePEM = settings.tls.map { strdup($0.certificatePEM) } ?? nil
        // libmicrohttpd parses the priorities into GnuTLS's cache at start and keeps no pointer.
        let priorities = settings.tls.map { strdup($0.priorities) } ?? nil
        defer {
            if let keyPEM {
                explicit_bzero(keyPEM, strlen(keyPEM))
                free(keyPEM)
            }
            free(certificatePEM)
            free(priorities)
        }
        let pointer = address.withSockaddr { sockaddr -> OpaquePointer? in
            var options = CMicroHTTPD_settings(
                flags: flags, address: sockaddr, thread_pool_size: UInt32(max(1, settings.threads)),
                connection_limit: UInt32(settings.maxConnections),
                connection_memory_limit: settings.connectionMemoryBytes,
                connection_timeout: UInt32(settings.idleTimeoutSeconds),
                per_ip_connection_limit: UInt32(clamping: max(0, settings.maxConnectionsPerAddress)),
                accept_policy: acceptPolicy, accept_policy_cls: context.toOpaque(),
                handler: accessHandler, handler_cls: context.toOpaque(),
                completed: requestCompleted, completed_cls: context.toOpaque(),
                connection_notify: connectionNotified, connection_notify_cls: context.toOpaque(),
                https_key_pem: UnsafePointer(keyPEM), https_cert_pem: UnsafePointer(certificatePEM),
                https_priorities: UnsafePointer(priorities),
                max_query_parameters: UInt32(clamping: max(0, settings.maxQueryParameters)))
            return CMicroHTTPD_start_daemon(&options)
        }
        guard let pointer else {
            context.release()
            throw ServerStartError(
                description: "cannot listen on \(settings.host):\(settings.port): libmicrohttpd refused to start"
                    + (settings.tls != nil ? " (check the TLS certificate and key, and tls.priorities)" : ""))
        }
        return DaemonHandle(pointer: pointer, context: context)
    }

    func stop() {
        guard !stopped else { return }
        stopped = true
        MHD_stop_daemon(pointer)
        context.release()
    }

    deinit { stop() }
}

private let accessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, _, uploadData, uploadDataSize, requestState in
    guard let context, let connection, let uploadDataSize, let requestState else { return .NO }
    let server = Unmanaged<MicroHTTPDServer>.fromOpaque(context).takeUnretainedValue()

    guard let statePointer = requestState.pointee else {
        // First call: headers only. Attach state; answer on a later call (an answer queued now
        // is an "early response" after which libmicrohttpd closes the connection).
        let pending = PendingRequest()
        requestState.pointee = Unmanaged.passRetained(pending).toOpaque()
        server.inFlight.add(1, ordering: .relaxed)
        markWatched(connection, waitingSince: HeaderDeadline.Connection.answering)
        pending.headers = values(of: connection, kind: .HEADER_KIND, strict: false, lowercasingNames: true) ?? []
        let framing = Framing(pending.headers, connection: connection, method: method)
        if let problem = framing.problem {
            // Ambiguous framing (request smuggling's raw material): refuse at once; an early
            // answer makes libmicrohttpd close the connection, so nothing after it is read.
            pending.state = .answered
            return queue(server.badFraming(problem, refusedHead(url, method, pending)), on: connection)
        }
        let declared = framing.contentLength.flatMap(Int.init)
        if let declared, declared > server.maxBodyBytes {
            // Too large by its own account: answer at once, before `100 Continue`, and let the
            // connection close rather than read the body.
            pending.state = .answered
            return queue(server.bodyTooLarge(refusedHead(url, method, pending)), on: connection)
        }
        pending.clientAddress = server.trustedProxies.clientAddress(
            peer: remoteAddress(of: connection), headers: pending.headers)
        guard (declared ?? 0) > 0 || framing.isChunked else { return .YES }
        // A body is coming: the route and the caller are decided on the head first, so a request
        // that will be refused (no such route, no valid token, an address over its failed-auth
        // budget) is answered now and its connection closed, with no byte of its body kept.
        guard let query = values(of: connection, kind: .GET_ARGUMENT_KIND, strict: true, lowercasingNames: false, percentDecoding: true) else {
            pending.state = .answered
            return queue(server.queryNotUTF8(refusedHead(url, method, pending)), closing: true, on: connection)
        }
        let head = HTTPRequest(
            method: requestMethod(method),
            path: url.map { String(cString: $0) } ?? "/",
            queryItems: query.map { HTTPRequest.QueryItem(name: $0.name, value: $0.value) },
            lowercasedHeaders: pending.headers, body: [], remoteAddress: pending.clientAddress)
        if let refusal = server.answer(head: head) {
            pending.state = .answered
            return queue(refusal, closing: true, on: connection)
        }
        if let declared { pending.reserveBody(declared) }
        return .YES
    }
    let pending = Unmanaged<PendingRequest>.fromOpaque(statePointer).takeUnretainedValue()
    if let answer = pending.answer {
        // Resumed after an offloaded answer (written before the resume, which orders it).
        pending.answer = nil
        return queue(answer, on: connection)
    }

    if uploadDataSize.pointee > 0 {
        let size = uploadDataSize.pointee
        if pending.state == .reading, pending.body.count + size > server.maxBodyBytes {
            // A body without Content-Length (chunked) outgrew the limit: keep nothing more, let
            // the rest stream past, and answer 413 at its end, so memory stays bounded and the
            // client reads a clean answer.
            pending.state = .tooLarge
            pending.wipeBody()
        }
        if pending.state == .reading, let uploadData {
            uploadData.withMemoryRebound(to: UInt8.self, capacity: size) { bytes in
                pending.append(UnsafeBufferPointer(start: bytes, count: size))
            }
        }
        uploadDataSize.pointee = 0
        return .YES
    }

    switch pending.state {
    case .reading: break
    case .tooLarge: return queue(server.bodyTooLarge(refusedHead(url, method, pending)), on: connection)
    case .answered: return .YES
    }
    // Query arguments percent-decode to any bytes: not UTF-8 (`%FF`) is refused rather than
    // repaired into U+FFFD (which would match a different value); `%00` is kept, not cut off.
    guard let query = values(of: connection, kind: .GET_ARGUMENT_KIND, strict: true, lowercasingNames: false, percentDecoding: true) else {
        pending.wipeBody()
        return queue(server.queryNotUTF8(refusedHead(url, method, pending)), on: connection)
    }
    let body = pending.body
    let request = HTTPRequest(
        method: requestMethod(method),
        path: url.map { String(cString: $0) } ?? "/",
        queryItems: query.map { HTTPRequest.QueryItem(name: $0.name, value: $0.value) },
        lowercasedHeaders: pending.headers,
        body: body,
        remoteAddress: pending.clientAddress)
    if server.offloads(request), server.inFlight.load(ordering: .relaxed) > 1 {
        MHD_suspend_connection(connection)
        let suspended = Suspended(connection: connection, pending: pending)
        server.offload.run {
            let response = server.answer(request)
            if let deferred = response.deferred { return server.answerLater(deferred, suspended) }
            suspended.pending.answer = response
            if !body.isEmpty { suspended.pending.wipeBody() }
            MHD_resume_connection(suspended.connection)
        }
        return .YES
    }
    let response = server.answer(request)
    if let deferred = response.deferred {
        // The body stays for the deferred answer (which reads the request again) and is wiped after it.
        MHD_suspend_connection(connection)
        server.answerLater(deferred, Suspended(connection: connection, pending: pending))
        return .YES
    }
    // The handler is done with the body: its bytes (a secret, perhaps) are zeroed now.
    if !body.isEmpty { pending.wipeBody() }
    return queue(response, on: connection)
}

private let requestCompleted: MHD_RequestCompletedCallback = { context, connection, requestState, _ in
    if let connection { markWatched(connection, waitingSince: HeaderDeadline.now()) }
    guard let context, let requestState, let statePointer = requestState.pointee else { return }
    let server = Unmanaged<MicroHTTPDServer>.fromOpaque(context).takeUnretainedValue()
    Unmanaged<PendingRequest>.fromOpaque(statePointer).release()
    requestState.pointee = nil
    server.inFlight.subtract(1, ordering: .releasing)
}

/// Starts and ends `HeaderDeadline`'s watch of a connection; the watched connection is the
/// connection's socket context, retained until the close.
private let acceptPolicy: MHD_AcceptPolicyCallback = { context, _, _ in
    guard let context else { return .NO }
    let server = Unmanaged<MicroHTTPDServer>.fromOpaque(context).takeUnretainedValue()
    return server.accepting.load(ordering: .acquiring) ? .YES : .NO
}

private let connectionNotified: MHD_NotifyConnectionCallback = { context, connection, socketContext, code in
    guard let context, let connection, let socketContext else { return }
    let server = Unmanaged<MicroHTTPDServer>.fromOpaque(context).takeUnretainedValue()
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        let watched = server.headerDeadline.connectionStarted(
            descriptor: CMicroHTTPD_connection_fd(connection), remoteAddress: clientAddress(connection))
        socketContext.pointee = Unmanaged.passRetained(watched).toOpaque()
    case .CONNECTION_NOTIFY_CLOSED:
        guard let pointer = socketContext.pointee else { return }
        let watched = Unmanaged<HeaderDeadline.Connection>.fromOpaque(pointer)
        server.headerDeadline.connectionClosed(watched.takeUnretainedValue())
        watched.release()
        socketContext.pointee = nil
    @unknown default:
        return
    }
}

/// Sets when the watched connection began to wait for a request's head (`answering` while one
/// is answered). Without counting a reference: the socket context holds one until the close.
private func markWatched(_ connection: OpaquePointer, waitingSince: Int64) {
    guard let pointer = CMicroHTTPD_socket_context(connection) else { return }
    Unmanaged<HeaderDeadline.Connection>.fromOpaque(pointer)._withUnsafeGuaranteedRef {
        $0.waitingSince.store(waitingSince, ordering: .relaxed)
    }
}

/// Queues `response` (its body, or its file when it has one); `closing` adds `Connection: close` (libmicrohttpd then closes the
/// connection once the answer is sent, reading nothing more of it).
private func queue(_ response: HTTPResponse, closing: Bool = false, on connection: OpaquePointer) -> MHD_Result {
    let handle =
        if let file = response.bodyFile { ResponseBody.handle(for: file) } else { ResponseBody.handle(for: response.body) }
    guard let handle else { return .NO }
    for header in response.headers {
        // withCString borrows a native string's bytes; passing the String itself would copy it.
        _ = header.name.withCString { name in header.value.withCString { MHD_add_response_header(handle, name, $0) } }
    }
    if closing { _ = MHD_add_response_header(handle, "Connection", "close") }
    let result = MHD_queue_response(connection, UInt32(response.status), handle)
    MHD_destroy_response(handle)
    return result
}

/// The head of a request the transport refuses (no query: it may be what was refused), for the
/// shape of the refusal.
private func refusedHead(
    _ url: UnsafePointer<CChar>?, _ method: UnsafePointer<CChar>?, _ pending: PendingRequest
) -> HTTPRequest {
    HTTPRequest(
        method: requestMethod(method), path: url.map { String(cString: $0) } ?? "/", queryItems: [],
        lowercasedHeaders: pending.headers, body: [], remoteAddress: pending.clientAddress)
}

/// The request's method; the usual ones without decoding a string (this runs on every request).
private func requestMethod(_ name: UnsafePointer<CChar>?) -> HTTPMethod {
    guard let name else { return HTTPMethod("") }
    if strcmp(name, "GET") == 0 { return .get }
    if strcmp(name, "POST") == 0 { return .post }
    if strcmp(name, "PUT") == 0 { return .put }
    if strcmp(name, "DELETE") == 0 { return .delete }
    if strcmp(name, "PATCH") == 0 { return .patch }
    if strcmp(name, "HEAD") == 0 { return .head }
    // Vault's, for listing (libmicrohttpd passes any token as the method, its body read as GET's).
    if strcmp(name, "LIST") == 0 { return .list }
    return HTTPMethod(String(cString: name))
}

/// The peer's address, as formatted when the connection started.
private func remoteAddress(of connection: OpaquePointer) -> String? {
    guard let pointer = CMicroHTTPD_socket_context(connection) else { return clientAddress(connection) }
    return Unmanaged<HeaderDeadline.Connection>.fromOpaque(pointer)._withUnsafeGuaranteedRef { $0.remoteAddress }
}

private func clientAddress(_ connection: OpaquePointer) -> String? {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN) + 1) { buffer in
        guard CMicroHTTPD_client_address(connection, buffer.baseAddress, socklen_t(buffer.count)) != 0 else { return nil }
        return String(cString: buffer.baseAddress!)
    }
}
