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

    @Test func errorBodyRoundTripsEveryCode() {
        for code in KeychainError.Code.allCases {
            let error = KeychainError(code, "detail for \(code)")
            #expect(KeychainError(errorBody: error.errorBody) == error)
            #expect(error.errorBody["message"] == .string(code.message))
            #expect(error.errorBody["error"] == .string(code.name))
        }
    }
}
