import Foundation
import KeychaindTesting
import Testing

/// The walking skeleton against the real binary: start-up, refusals, routing shapes, limits and
/// shutdown, over real HTTP on an ephemeral loopback port.
@Suite(.serialized)
struct ServerLifecycleTests {
    @Test func initialisesAnEmptyDataDirectoryAndAnswersHealth() throws {
        let server = try KeychaindProcess()
        defer { server.stop() }
        let response = try server.client().send("GET", "/v1/health")
        #expect(response.status == 200)
        #expect(response.json["status"] as? String == "ok")
        #expect(response.json["locked"] as? Bool == false)
        #expect(response.json["version"] is String)
        // The plain spelling is the same route.
        #expect(try server.client().send("GET", "/health").status == 200)

        for file in ["master.key", "admin.token", "keychain.db"] {
            let path = server.dataDir.appendingPathComponent(file).path
            #expect(FileManager.default.fileExists(atPath: path), "\(file) missing")
        }
        for file in ["master.key", "admin.token", "keychain.db"] {
            let attributes = try FileManager.default.attributesOfItem(
                atPath: server.dataDir.appendingPathComponent(file).path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(file) must be 0600")
        }
        let key = try Data(contentsOf: server.dataDir.appendingPathComponent("master.key"))
        #expect(key.count == 32)
        #expect(try server.adminToken().hasPrefix("kc_"))
        #expect(server.log.contains(server.dataDir.appendingPathComponent("admin.token").path))
        // The wiring's lines name the executable as their source, as before it moved into KeychaindApp.
        #expect(server.log.contains("[keychaind] data directory ready"), "\(server.log)")
        #expect(server.log.contains("[keychaind] audit log"), "\(server.log)")

        // At `info` the log has events only: requests are in the audit log.
        #expect(server.stop() == 0)
        #expect(!server.log.contains("GET /health"), "\(server.log)")
        #expect(server.log.contains("stopped"))
    }

    /// Two worker threads per core unless `threads` says otherwise; the start line names them.
    @Test(arguments: [nil, "3"])
    func runsTheConfiguredWorkerThreads(threads: String?) throws {
        let expected = threads.flatMap { Int($0) } ?? 2 * ProcessInfo.processInfo.activeProcessorCount
        let server = try KeychaindProcess(environment: threads.map { ["KEYCHAIND_THREADS": $0] } ?? [:])
        defer { server.stop() }
        #expect(try server.client().send("GET", "/v1/health").status == 200)
        #expect(server.log.contains("workers=\(expected) "), "\(server.log)")
        // libmicrohttpd names its pool's threads, each thread itself once it first runs (on a busy
        // machine, after the first answer): count them in the running process until all are named.
        let tasks = "/proc/\(server.process.processIdentifier)/task"
        var names: [String] = []
        let named = try waitUntil {
            names = try FileManager.default.contentsOfDirectory(atPath: tasks).map {
                try String(contentsOfFile: "\(tasks)/\($0)/comm", encoding: .utf8)
            }
            return names.filter { $0.hasPrefix("MHD-worker") }.count >= expected
        }
        #expect(named && names.filter { $0.hasPrefix("MHD-worker") }.count == expected, "\(names)")
    }

    @Test func logsALinePerRequestAtDebug() throws {
        let server = try KeychaindProcess(environment: ["KEYCHAIND_LOG_LEVEL": "debug"])
        defer { server.stop() }
        #expect(try server.client().send("GET", "/v1/health").status == 200)
        // One line per request, UTC timestamp in milliseconds, written out by the time the
        // server has stopped.
        #expect(server.stop() == 0)
        let requestLine = #"(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z debug keychaind: \[KeychainHTTP\] GET /health 200 [0-9.]+ms client=-$"#
        #expect(server.log.range(of: requestLine, options: .regularExpression) != nil, "\(server.log)")
    }

    @Test func oversizedBodyIs413WithErrSecParam() throws {
        let server = try KeychaindProcess(environment: ["KEYCHAIND_LIMITS_MAX_BODY_BYTES": "1024"])
        defer { server.stop() }
        let response = try server.client().send(
            "POST", "/v1/items/genericPassword", body: Data(repeating: 0x41, count: 4096), token: "kc_unused")
        #expect(response.status == 413)
        #expect(response.json["status"] as? Int == -50)
        #expect(response.json["error"] as? String == "errSecParam")

        // The same limit holds for a chunked body, which announces no length (from a caller
        // with a valid token: without one, the head alone is refused and no body read).
        let connection = try TestConnection(port: server.port)
        try connection.write(
            "POST /v1/items/genericPassword HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                + "Authorization: Bearer \(try server.adminToken())\r\nContent-Type: application/json\r\n\r\n")
        for _ in 0..<3 { try connection.write("400\r\n" + String(repeating: "a", count: 1024) + "\r\n") }
        try connection.write("0\r\n\r\n")
        let chunked = try connection.readResponse()
        #expect(chunked.status == 413)
        #expect(server.stop() == 0)
    }

    @Test func refusesAMasterKeyReadableByOthers() throws {
        let first = try KeychaindProcess()
        #expect(first.stop() == 0)
        let keyPath = first.dataDir.appendingPathComponent("master.key").path
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: keyPath)

        let second = try KeychaindProcess(dataDir: first.dataDir, waitForListening: false)
        let status = second.waitForExit()
        #expect(status != nil && status != 0)
        #expect(second.log.contains("readable by group or others"))
    }

    @Test func refusesADataDirectoryThatIsAFile() throws {
        let file = KeychaindProcess.temporaryDirectory().appendingPathComponent("not-a-dir")
        try Data("x".utf8).write(to: file)
        let server = try KeychaindProcess(dataDir: file, waitForListening: false)
        let status = server.waitForExit()
        #expect(status != nil && status != 0)
        #expect(server.log.contains("not a directory"))
    }

    @Test func refusesATakenPort() throws {
        let first = try KeychaindProcess()
        defer { first.stop() }
        let second = try KeychaindProcess(
            arguments: [
                "serve", "--listen", "127.0.0.1:\(first.port)", "--data-dir",
                KeychaindProcess.temporaryDirectory().appendingPathComponent("data").path,
            ], waitForListening: false)
        let status = second.waitForExit()
        #expect(status != nil && status != 0)
        #expect(second.log.contains("already in use"))
    }

    @Test func initRefusesAnInitialisedDirectory() throws {
        let directory = KeychaindProcess.temporaryDirectory().appendingPathComponent("data")
        let first = try KeychaindProcess(
            dataDir: directory, arguments: ["init", "--data-dir", directory.path], waitForListening: false)
        #expect(first.waitForExit() == 0)
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("admin.token").path))
        let token = try first.adminToken()

        let second = try KeychaindProcess(
            dataDir: directory, arguments: ["init", "--data-dir", directory.path], waitForListening: false)
        let status = second.waitForExit()
        #expect(status != nil && status != 0)
        #expect(second.log.contains("already initialized"))
        #expect(try second.adminToken() == token, "a refused init must not touch the directory")
    }

    @Test func badConfigurationStopsStartWithTheKeyNamed() throws {
        let server = try KeychaindProcess(
            environment: ["KEYCHAIND_LIMITS_MAX_BODY_BYTES": "lots"], waitForListening: false)
        let status = server.waitForExit()
        #expect(status != nil && status != 0)
        #expect(server.log.contains("limits.maxBodyBytes"))
    }

    @Test func sigtermLetsAnInFlightRequestFinishAndExitsZero() throws {
        let server = try KeychaindProcess()
        defer { server.stop() }
        let connection = try TestConnection(port: server.port)
        let body = Data(#"{"service":"inflight","account":"a","value":"v"}"#.utf8)
        // The head alone, asking for `100 Continue`: libmicrohttpd sends it once keychaind has
        // taken the request's head, so from then on the request is in flight.
        try connection.write(
            HTTPTestClient.head(
                "POST", "/v1/items/genericPassword",
                headers: [
                    "Authorization": "Bearer \(try server.adminToken())", "Content-Type": "application/json",
                    "Expect": "100-continue",
                ],
                bodyLength: body.count))
        #expect(try connection.readResponse(interim: true).status == 100)
        server.signal(SIGTERM)
        #expect(server.logShows("shutting down"))
        #expect(server.process.isRunning, "the server must wait for the in-flight request")
        // Accepting has stopped: a connection made now is closed at once, unanswered.
        let late = try TestConnection(port: server.port, timeoutSeconds: 3)
        #expect(late.isClosedByPeer())
        #expect(server.process.isRunning)
        // Answered after the server began to shut down: it waited for the request.
        try connection.write(body)
        let response = try connection.readResponse()
        #expect(response.status == 201, "\(response.text)")
        #expect(server.waitForExit() == 0)
        #expect(server.log.contains("stopped"))
    }

    @Test func aBodyDeliveredInSeveralTCPPiecesIsAssembled() throws {
        let server = try KeychaindProcess()
        defer { server.stop() }
        let token = try server.adminToken()
        let body = Data(#"{"service":"pieces","account":"acct","value":"assembled from pieces"}"#.utf8)
        let connection = try TestConnection(port: server.port)
        try connection.write(
            HTTPTestClient.head(
                "POST", "/v1/items/genericPassword",
                headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"],
                bodyLength: body.count))
        var offset = 0
        while offset < body.count {
            let end = min(offset + 7, body.count)
            try connection.write(body[offset..<end])
            usleep(20_000)  // pacing, the point: each piece reaches the server on its own
            offset = end
        }
        let created = try connection.readResponse()
        #expect(created.status == 201, "\(created.text)")

        // Same connection (keep-alive): read it back.
        try connection.write(
            HTTPTestClient.head(
                "GET", "/v1/items/genericPassword?service=pieces&account=acct&return=data",
                headers: ["Authorization": "Bearer \(token)"], bodyLength: nil))
        let read = try connection.readResponse()
        #expect(read.status == 200)
        #expect((read.json["item"] as? [String: Any])?["value"] as? String == "assembled from pieces")
    }
}
