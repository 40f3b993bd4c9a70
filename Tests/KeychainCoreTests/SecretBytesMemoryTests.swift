import Foundation
import KeychainCore
import Testing

/// Issue 29, core dumps: keys live on pages of their own that are left out of core dumps
/// (`MADV_DONTDUMP`, the `dd` flag of their mapping in /proc/self/smaps); a secret that only
/// passes through a request (`lockedInMemory: false`) does not pay for that.
struct SecretBytesMemoryTests {
    /// The VmFlags of the mapping that holds `address`, from /proc/self/smaps.
    static func mappingFlags(of address: UnsafeRawPointer) throws -> [Substring] {
        // Read to the end: /proc files report a size of 0.
        let smaps = String(decoding: try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/smaps")).readToEnd() ?? Data(), as: UTF8.self)
        let target = UInt(bitPattern: address)
        var inside = false
        for line in smaps.split(separator: "\n") {
            if let dash = line.firstIndex(of: "-"), let space = line.firstIndex(of: " "), dash < space,
                let start = UInt(line[..<dash], radix: 16), let end = UInt(line[line.index(after: dash)..<space], radix: 16)
            {
                inside = start <= target && target < end
            } else if inside, line.hasPrefix("VmFlags:") {
                return line.dropFirst("VmFlags:".count).split(separator: " ")
            }
        }
        throw CocoaError(.fileReadCorruptFile)
    }

    static func base(_ secret: SecretBytes) -> UnsafeRawPointer { secret.withUnsafeBytes { $0.baseAddress! } }

    @Test func keysAreLeftOutOfCoreDumpsOnPagesOfTheirOwn() throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let key = SecretBytes([UInt8](repeating: 0x5A, count: 32))
        let filled = SecretBytes(count: 32) { $0.initializeMemory(as: UInt8.self, repeating: 1) }
        for secret in [key, filled] {
            #expect(Int(bitPattern: Self.base(secret)) % page == 0, "page-aligned")
            #expect(try Self.mappingFlags(of: Self.base(secret)).contains("dd"), "MADV_DONTDUMP")
        }
        // Two keys never share a page, so releasing one leaves the other's protection alone.
        let pages = Set([key, filled].map { Int(bitPattern: Self.base($0)) / page })
        #expect(pages.count == 2)
        let passing = SecretBytes(count: 32, lockedInMemory: false) { $0.initializeMemory(as: UInt8.self, repeating: 2) }
        #expect(try !Self.mappingFlags(of: Self.base(passing)).contains("dd"))
        #expect(key.count == 32 && filled.count == 32)
    }
}
