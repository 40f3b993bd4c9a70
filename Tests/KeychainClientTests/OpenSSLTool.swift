import Foundation

/// The openssl command line: the other implementation the SecKey tests check against.
enum OpenSSLTool {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// openssl's standard output for `arguments` with `input` on its standard input; throws when it fails.
    @discardableResult
    static func run(_ arguments: [String], input: Data = Data()) throws -> Data {
        let (status, output) = try exec(arguments, input: input)
        guard status == 0 else { throw Failure(description: "openssl \(arguments.joined(separator: " ")) exited \(status)") }
        return output
    }

    private static func exec(_ arguments: [String], input: Data) throws -> (Int32, Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        try process.run()
        stdin.fileHandleForWriting.write(input)
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    static func sha1(_ data: Data) -> Data { (try? run(["dgst", "-sha1", "-binary"], input: data)) ?? Data() }
    static func sha256(_ data: Data) -> Data { (try? run(["dgst", "-sha256", "-binary"], input: data)) ?? Data() }

    /// Whether openssl accepts `signature` (SHA-256; PKCS #1 v1.5 or ECDSA by the key) of `message`.
    static func verifies(_ signature: Data, of message: Data, publicKeyPEM: Data) throws -> Bool {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("seckey-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("public.pem"), signatureFile = directory.appendingPathComponent("signature")
        try publicKeyPEM.write(to: keyFile)
        try signature.write(to: signatureFile)
        let arguments = ["dgst", "-sha256", "-verify", keyFile.path, "-signature", signatureFile.path]
        return try exec(arguments, input: message).0 == 0
    }

    /// The bytes of a hex block such as openssl's `-text` prints under `label` (`priv:`, `pub:`).
    static func hexBlock(after label: String, in text: String) -> Data {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0.hasPrefix(label) }) else { return Data() }
        let hex = lines[(start + 1)...].prefix { $0.hasPrefix(" ") }.joined().filter(\.isHexDigit)
        var bytes = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }
}
