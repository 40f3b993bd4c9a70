import Foundation
import KeychainAPI
import KeychainCore
import PropertyBased
import Testing

/// Issue 9, fuzzing: property-based tests of the JSON parser and the request parser. Counts grow
/// with `KEYCHAIND_HARDENING=full` (docs/reliability.md).
struct ParserFuzzTests {
    static let count = ProcessInfo.processInfo.environment["KEYCHAIND_HARDENING"] == "full" ? 20_000 : 500

    /// Arbitrary bytes.
    static let bytes = Gen<UInt8>.value(in: 0...255).array(of: 0...256)

    /// Byte soup from JSON's own pieces, so that many inputs get deep into the parser.
    static let pieces: [String] = [
        "{", "}", "[", "]", ":", ",", " ", "\n", "\"", "\"a\"", "\"k\"", "\"\\u0000\"", "\"\\ud83d\\ude00\"",
        "\"\\ud800\"", "\"\\udc00\"", "\"\\\\\"", "\"\\x\"", "\"\u{7F}\"", "\"é\"", "0", "-0", "1", "-12.5e3",
        "1e400", "9223372036854775807", "9223372036854775808", "0.1", "01", "1.", ".5", "true", "false", "null",
        "nul", "\u{0}", "\t",
    ]
    static let soup = Gen.element(of: pieces).map { $0 ?? "" }.array(of: 0...40).map { $0.joined() }

    @Test func arbitraryBytesNeverCrashTheJSONParserAndWhatParsesRoundTrips() async {
        await propertyCheck(count: Self.count, input: Self.bytes) { bytes in
            Self.checkJSON(bytes)
        }
    }

    @Test func jsonPieceSoupNeverCrashesAndWhatParsesRoundTrips() async {
        await propertyCheck(count: Self.count, input: Self.soup) { text in
            Self.checkJSON(Array(text.utf8))
        }
    }

    @Test func generatedValuesRoundTripThroughSerializeAndParse() async {
        await propertyCheck(count: Self.count, input: Gen<UInt64>.value()) { seed in
            var random = SplitMix(seed: seed)
            let value = Self.randomJSON(&random, depth: 0)
            let text = value.serialized()
            #expect((try? JSONValue.parse(text)) == value, "\(String(decoding: text, as: UTF8.self))")
        }
    }

    @Test func nestingBeyondTheLimitIsAnErrorNotACrash() {
        for depth in [JSONValue.maximumDepth, JSONValue.maximumDepth + 1, 100_000] {
            let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let parsed = try? JSONValue.parse(text)
            #expect((parsed != nil) == (depth <= JSONValue.maximumDepth))
        }
    }

    /// Names: real attributes, control keys, and junk; values of every JSON kind, and query texts.
    static let names: [String] =
        Attribute.all.map(\.name) + ["limit", "return", "caseInsensitive", "cursor", "all", "persistentRef", "value", "data",
                                     "synchronizable", "certificate", "privateKey", "", "\u{0}", "nope", "accessGroup"]
    static let jsonValues: [JSONValue] = [
        .null, .bool(true), .bool(false), .integer(0), .integer(-1), .integer(Int64.max), .integer(Int64.min),
        .number(0.5), .number(-1e300), .string(""), .string("a\u{0}b"), .string("one"), .string("all"), .string("any"),
        .string("attributes,data,ref"), .string("none"), .string("QUJD"), .string("QUJD="), .string("2026-01-01T00:00:00Z"),
        .string("whenUnlocked"), .string("https"), .array([]), .array([.integer(1)]), .object([]), .object([("a", .null)]),
    ]
    static let texts: [String] = [
        "", "5", "-5", "0", "true", "false", "any", "one", "all", "none", "99999999999999999999", "attributes, data",
        "\u{FFFD}", "QUJD", "QUJD=", "2026-01-01T00:00:00Z", "whenUnlocked", "https", "AAAAAAAAAAAAAAAAAAAAAA",
    ]
    static let members = PropertyBased.zip(Gen.element(of: names), Gen.element(of: jsonValues))
        .map { ($0 ?? "", $1 ?? .null) }.array(of: 0...12)
    static let parameters = PropertyBased.zip(Gen.element(of: names), Gen.element(of: texts))
        .map { QueryParameter(name: $0 ?? "", value: $1 ?? "") }.array(of: 0...12)
    static let classes = Gen<ItemClass>.case

    @Test func requestDecodersOnlyEverThrowKeychainErrors() async {
        await propertyCheck(count: Self.count, input: Self.classes, Self.members, Self.parameters) { itemClass, members, parameters in
            let body = JSONBody(members)
            Self.expectKeychainErrorOnly { _ = try ItemAddRequest(decoding: body, of: itemClass) }
            Self.expectKeychainErrorOnly { _ = try ItemUpdate(decoding: body, of: itemClass) }
            Self.expectKeychainErrorOnly { _ = try TokenPutRequest(decoding: body) }
            Self.expectKeychainErrorOnly { _ = try ClientCreateRequest(decoding: body) }
            for operation in [ItemOperation.add, .copyMatching, .update, .delete] {
                Self.expectKeychainErrorOnly { _ = try ItemQuery(decoding: parameters, of: itemClass, for: operation) }
            }
            Self.expectKeychainErrorOnly {
                _ = try ItemQuery(
                    decoding: parameters, of: itemClass, for: .copyMatching, persistentRef: "AAAAAAAAAAAAAAAAAAAAAA")
            }
            Self.expectKeychainErrorOnly { _ = try TokenNaming(service: "s", decoding: parameters) }
        }
    }

    // MARK: Helpers

    static func checkJSON(_ bytes: [UInt8]) {
        // Typed throws: any failure is a JSONParseError by construction; it must not trap.
        guard let value = try? JSONValue.parse(bytes) else { return }
        let again = try? JSONValue.parse(value.serialized())
        #expect(again.map { sameJSON($0, value) } == true, "round trip of \(String(decoding: bytes, as: UTF8.self))")
    }

    /// Equal, with a whole-valued `.number` equal to the same `.integer`: `-12.5e3` parses as
    /// number -12500.0 and serializes as `-12500`, which parses as an integer (found by this
    /// fuzzing; the same number, so not a defect).
    static func sameJSON(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.integer(let x), .number(let y)), (.number(let y), .integer(let x)): return Double(x) == y
        case (.array(let x), .array(let y)): return x.count == y.count && Swift.zip(x, y).allSatisfy { sameJSON($0, $1) }
        case (.object(let x), .object(let y)):
            return x.count == y.count && Swift.zip(x, y).allSatisfy { $0.0 == $1.0 && sameJSON($0.1, $1.1) }
        default: return a == b
        }
    }

    static func expectKeychainErrorOnly(_ body: () throws -> Void) {
        do { try body() } catch is KeychainError {} catch { Issue.record("not a KeychainError: \(type(of: error)) \(error)") }
    }

    static func randomJSON(_ random: inout SplitMix, depth: Int) -> JSONValue {
        switch random.next() % (depth > 4 ? 5 : 7) {
        case 0: return .null
        case 1: return .bool(random.next() % 2 == 0)
        case 2: return .integer(Int64(bitPattern: random.next()) >> (random.next() % 64))
        case 3:
            let double = Double(bitPattern: random.next())
            return double.isFinite && double.rounded() != double ? .number(double) : .number(Double(random.next() % 1000) + 0.25)
        case 4: return .string(randomString(&random))
        case 5: return .array((0..<Int(random.next() % 5)).map { _ in randomJSON(&random, depth: depth + 1) })
        default:
            var seen = Set<String>()
            var members: [(String, JSONValue)] = []
            for _ in 0..<Int(random.next() % 5) {
                let key = randomString(&random)
                if seen.insert(key).inserted { members.append((key, randomJSON(&random, depth: depth + 1))) }
            }
            return .object(members)
        }
    }

    static func randomString(_ random: inout SplitMix) -> String {
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int(random.next() % 12) {
            let candidates: [UInt32] = [UInt32(random.next() % 0x80), UInt32(random.next() % 0x20), 0x22, 0x5C,
                                        UInt32(random.next() % 0x10FFFF)]
            if let scalar = Unicode.Scalar(candidates[Int(random.next() % UInt64(candidates.count))]) { scalars.append(scalar) }
        }
        return String(scalars)
    }
}

/// A small deterministic generator for building values from a seed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
