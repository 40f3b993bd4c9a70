import KeychainAPI
import KeychainCore
import Testing

struct JSONValueTests {
    @Test func parsesEveryKindAndKeepsKeyOrder() throws {
        let value = try JSONValue.parse(#"{"b":1,"a":[true,false,null],"c":"x\n\u00e9\ud83d\ude00","d":-2.5e1,"e":{}}"#)
        guard case .object(let members) = value else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.0) == ["b", "a", "c", "d", "e"])
        #expect(value["b"] == .integer(1))
        #expect(value["a"] == .array([.bool(true), .bool(false), .null]))
        #expect(value["c"] == .string("x\né😀"))
        #expect(value["d"] == .number(-25))
        #expect(value["e"] == .object([]))
    }

    @Test func serializationRoundTrips() throws {
        let value = JSONValue.object([
            ("s", .string("quote \" backslash \\ newline \n control \u{01} é")), ("i", .integer(-7)),
            ("n", .number(1.5)), ("a", .array([.null, .bool(true)])),
        ])
        #expect(try JSONValue.parse(value.serialized()) == value)
        #expect(String(decoding: JSONValue.object([("k", .integer(1))]).serialized(), as: UTF8.self) == #"{"k":1}"#)
    }

    /// The two string writers (into an array, and into memory sized by `maxStringLength`) write
    /// the same bytes, within the bound, for escapes, control bytes, multi-byte text and the
    /// worst case, every byte escaped.
    @Test(arguments: [
        "", "plain", "quote \" backslash \\", "\n\r\t", "\u{01}\u{1F}\u{7F}", "é😀", String(repeating: "\u{01}", count: 40),
        "x" + String(repeating: "\"", count: 17) + "y",
    ])
    func stringWritersAgree(text: String) throws {
        var expected: [UInt8] = []
        JSONValue.writeString(text, to: &expected)
        let bound = JSONValue.maxStringLength(text)
        let written = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            count = JSONValue.writeString(text, into: buffer.baseAddress!)
        }
        #expect(written == expected)
        #expect(written.count <= bound)
        #expect(try JSONValue.parse(written) == .string(text))
    }

    @Test(arguments: [
        "", "{", "[1,]", #"{"a":1,}"#, #"{"a" 1}"#, "01", "1.", "-", "tru", #""unterminated"#,
        #"{"a":1,"a":2}"#, "\"\u{01}\"", #""\x""#, #""\ud800""#, "1 2", "NaN", "[1e999]",
    ])
    func refusesMalformedText(text: String) {
        #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
    }

    @Test func refusesInvalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONValue.parse([0x22, 0xFF, 0xFE, 0x22]) }
    }

    @Test func boundsNesting() throws {
        let deep = String(repeating: "[", count: JSONValue.maximumDepth + 1)
            + String(repeating: "]", count: JSONValue.maximumDepth + 1)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(deep) }
        let allowed = String(repeating: "[", count: JSONValue.maximumDepth)
            + String(repeating: "]", count: JSONValue.maximumDepth)
        _ = try JSONValue.parse(allowed)
    }

    @Test func errorBodyRoundTripsEveryCode() throws {
        for code in KeychainError.Code.allCases {
            for error in [KeychainError(code, "detail for \(code)"), KeychainError(code)] {
                let json = try JSONValue.parse(ErrorBody(error).encoded())
                #expect(ErrorBody(decoding: json)?.error == error)
                #expect(json["message"] == .string(code.message))
                #expect(json["error"] == .string(code.name))
                #expect(json["status"] == .integer(Int64(code.rawValue)))
                #expect((json["detail"] == nil) == (error.detail == nil))
            }
        }
        #expect(
            ErrorBody(KeychainError.itemNotFound("no \"x\"")).encoded()
                == Array(#"{"status":-25300,"error":"errSecItemNotFound","message":"The specified item could not be found in the keychain.","detail":"no \"x\""}"#.utf8))
    }
}
