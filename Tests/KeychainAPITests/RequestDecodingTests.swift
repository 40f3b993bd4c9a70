import Foundation
import KeychainAPI
import KeychainCore
import KeychainTestSupport
import Testing

@Suite struct AttributeParsingTests {
    enum Expect: Sendable {
        case success(AttributeValue)
        case failure(KeychainError.Code)
    }

    /// A value as a JSON body gives it, or as a query string does.
    enum Spelled: Sendable {
        case json(JSONValue)
        case text(String)

        static func string(_ text: String) -> Spelled { .json(.string(text)) }
        static func integer(_ number: Int64) -> Spelled { .json(.integer(number)) }
        static func number(_ number: Double) -> Spelled { .json(.number(number)) }
        static func bool(_ flag: Bool) -> Spelled { .json(.bool(flag)) }
        static var null: Spelled { .json(.null) }

        func typed(for attribute: Attribute) throws -> AttributeValue {
            switch self {
            case .json(let value): try attribute.value(json: value)
            case .text(let text): try attribute.value(text: text)
            }
        }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let itemClass: ItemClass
        let name: String
        let value: Spelled
        let expected: Expect
        var testDescription: String { "\(itemClass.rawValue).\(name) = \(value)" }
    }

    static let cases: [Case] = [
        Case(itemClass: .genericPassword, name: "account", value: .string("me"), expected: .success(.string("me"))),
        Case(itemClass: .genericPassword, name: "account", value: .text("me"), expected: .success(.string("me"))),
        Case(itemClass: .genericPassword, name: "account", value: .integer(3), expected: .failure(.param)),
        Case(itemClass: .genericPassword, name: "account", value: .null, expected: .failure(.param)),
        Case(itemClass: .internetPassword, name: "port", value: .integer(8080), expected: .success(.integer(8080))),
        Case(itemClass: .internetPassword, name: "port", value: .text("8080"), expected: .success(.integer(8080))),
        Case(itemClass: .internetPassword, name: "port", value: .string("8080"), expected: .failure(.param)),
        Case(itemClass: .internetPassword, name: "port", value: .number(1.5), expected: .failure(.param)),
        Case(itemClass: .internetPassword, name: "port", value: .text("80x"), expected: .failure(.param)),
        Case(itemClass: .genericPassword, name: "isInvisible", value: .bool(true), expected: .success(.bool(true))),
        Case(itemClass: .genericPassword, name: "isInvisible", value: .text("false"), expected: .success(.bool(false))),
        Case(itemClass: .genericPassword, name: "isInvisible", value: .integer(1), expected: .failure(.param)),
        Case(itemClass: .genericPassword, name: "isInvisible", value: .text("yes"), expected: .failure(.param)),
        Case(itemClass: .genericPassword, name: "generic", value: .string("AAEC"), expected: .success(.data([0, 1, 2]))),
        Case(itemClass: .genericPassword, name: "generic", value: .string("AAE="), expected: .success(.data([0, 1]))),
        Case(itemClass: .genericPassword, name: "generic", value: .string("AAE"), expected: .failure(.param)),
        Case(itemClass: .genericPassword, name: "generic", value: .string("AA-_"), expected: .failure(.param)),
        Case(itemClass: .genericPassword, name: "generic", value: .string("AA E="), expected: .failure(.param)),
        Case(itemClass: .internetPassword, name: "protocol", value: .string("https"), expected: .success(.string("https"))),
        Case(itemClass: .internetPassword, name: "protocol", value: .string("htps"), expected: .failure(.param)),
        Case(itemClass: .internetPassword, name: "protocol", value: .string("HTTPS"), expected: .failure(.param)),
        Case(itemClass: .internetPassword, name: "authenticationType", value: .text("httpBasic"), expected: .success(.string("httpBasic"))),
        Case(itemClass: .key, name: "keyType", value: .string("ec"), expected: .success(.string("ecsecPrimeRandom"))),
        Case(itemClass: .key, name: "keyType", value: .string("ecdsa"), expected: .success(.string("ecsecPrimeRandom"))),
        Case(itemClass: .key, name: "keyType", value: .integer(42), expected: .failure(.param)),
        Case(itemClass: .key, name: "keyClass", value: .string("private"), expected: .success(.string("private"))),
        Case(itemClass: .genericPassword, name: "accessible", value: .string("afterFirstUnlock"), expected: .success(.string("afterFirstUnlock"))),
        Case(itemClass: .genericPassword, name: "accessible", value: .string("sometimes"), expected: .failure(.param)),
        Case(itemClass: .genericPassword, name: "creationDate", value: .string("2026-11-21T10:00:00.123Z"),
             expected: .success(.date(Date(timeIntervalSince1970: 1_795_255_200.123)))),
        Case(itemClass: .genericPassword, name: "creationDate", value: .string("2026-11-21T11:00:00.1239+01:00"),
             expected: .success(.date(Date(timeIntervalSince1970: 1_795_255_200.123)))),
        Case(itemClass: .genericPassword, name: "creationDate", value: .string("2026-11-21"), expected: .failure(.param)),
        Case(itemClass: .genericPassword, name: "creationDate", value: .string("2026-02-30T00:00:00Z"), expected: .failure(.param)),
    ]

    @Test(arguments: cases)
    func parse(_ testCase: Case) throws {
        let attribute = try #require(Attribute.named(testCase.name))
        switch testCase.expected {
        case .success(let value):
            #expect(try testCase.value.typed(for: attribute) == value)
        case .failure(let code):
            do {
                _ = try testCase.value.typed(for: attribute)
                Issue.record("expected \(code)")
            } catch let error as KeychainError {
                #expect(error.code == code)
                #expect(error.detail?.contains("\"\(testCase.name)\"") == true, "detail names the attribute")
            }
        }
    }

    @Test func datesAreAnsweredInUTCWithMilliseconds() {
        #expect(RFC3339.format(Date(timeIntervalSince1970: 1_795_255_200.123)) == "2026-11-21T10:00:00.123Z")
        #expect(RFC3339.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.format(Date(timeIntervalSinceReferenceDate: 0)) == "2001-01-01T00:00:00.000Z")
        #expect(RFC3339.parse("2024-02-29T23:59:59.5Z").map(RFC3339.format) == "2024-02-29T23:59:59.500Z")
        #expect(written(.date(Date(timeIntervalSince1970: 1_795_255_200.123))) == #""2026-11-21T10:00:00.123Z""#)
        #expect(AttributeValue.date(Date(timeIntervalSince1970: 1_795_255_200.123)).queryText == "2026-11-21T10:00:00.123Z")
    }

    /// Issue 40, findings 1 and 6: year 12026 was written as 2026 (in the past), and a date
    /// beyond Int64's milliseconds trapped. Now neither is written wrapped nor parsed.
    @Test func datesOutsideFourDigitYearsAreNeitherWrittenWrappedNorParsed() {
        let tenThousandYears = Date(timeIntervalSince1970: 1_795_255_200 + 315_576_000_000)
        #expect(RFC3339.format(tenThousandYears) == "9999-12-31T23:59:59.999Z")
        #expect(RFC3339.format(millisecondsSince1970: .max) == "9999-12-31T23:59:59.999Z")
        #expect(RFC3339.format(millisecondsSince1970: .min) == "0000-01-01T00:00:00.000Z")
        #expect(RFC3339.parse("0000-01-01T00:00:00Z")?.millisecondsSince1970 == RFC3339.representable.lowerBound)
        #expect(RFC3339.parse("9999-12-31T23:59:59.999Z")?.millisecondsSince1970 == RFC3339.representable.upperBound)
        #expect(RFC3339.parse("0000-01-01T00:00:00+00:01") == nil)
        #expect(RFC3339.parse("9999-12-31T23:59:59.999-00:01") == nil)
        #expect(Date(timeIntervalSince1970: 1e300).millisecondsSince1970 == .max)
        #expect(Date(timeIntervalSince1970: -1e300).millisecondsSince1970 == .min)
        #expect(Date(timeIntervalSince1970: .nan).millisecondsSince1970 == 0)
        #expect(Date(millisecondsSince1970: .max).millisecondsSince1970 == .max)
        #expect(RFC3339.format(Date(timeIntervalSince1970: .infinity)) == "9999-12-31T23:59:59.999Z")
        #expect(written(.date(Date(timeIntervalSince1970: -.infinity))) == #""0000-01-01T00:00:00.000Z""#)
    }

    @Test func dataIsAnsweredInPaddedBase64() {
        #expect(written(.data([0, 1])) == #""AAE=""#)
        #expect(AttributeValue.data([0, 1]).queryText == "AAE=")
    }

    @Test func otherValuesAreAnsweredAsJSON() {
        #expect(written(.string("a\"b")) == #""a\"b""#)
        #expect(written(.integer(-443)) == "-443")
        #expect(written(.bool(true)) == "true")
        #expect(AttributeValue.integer(-443).queryText == "-443")
        #expect(AttributeValue.bool(false).queryText == "false")
    }

    func written(_ value: AttributeValue) -> String {
        var writer = JSONWriter()
        value.write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

    @Test func enumerationsAreTheirCatalogueEntries() {
        #expect(Attribute.keyType.valueType == .enumeration(.keyType))
        #expect(Enumeration.keyType != Enumeration.keyClass)
        #expect(Set([Enumeration.keyType, .keyType, .accessible]).count == 2)
        #expect(Enumeration.keyType.canonical("ecdsa") == "ecsecPrimeRandom")
        #expect(Enumeration.keyClass.canonical("ec") == nil)
        #expect(Enumeration.certificateEncoding.names == ["der"])
    }

@Suite struct RequestParsingTests {
    static func parameters(_ pairs: [(String, String)]) -> [QueryParameter] {
        pairs.map { QueryParameter(name: $0.0, value: $0.1) }
    }

    static func query(
        _ pairs: [(String, String)], _ itemClass: ItemClass = .genericPassword, for operation: ItemOperation = .copyMatching
    ) throws -> ItemQuery {
        try ItemQuery(decoding: parameters(pairs), of: itemClass, for: operation)
    }

    func queryStatus(_ pairs: [(String, String)], _ operation: ItemOperation) -> KeychainError.Code? {
        queryStatus(.genericPassword, pairs, operation)
    }

    func queryStatus(_ itemClass: ItemClass, _ pairs: [(String, String)], _ operation: ItemOperation)
        -> KeychainError.Code?
    {
        status { try Self.query(pairs, itemClass, for: operation) }
    }

    @Test func limits() throws {
        func limit(_ text: String) throws -> MatchLimit {
            try Self.query([("limit", text)]).limit
        }
        #expect(try Self.query([]).limit == .one)
        #expect(try limit("one") == .one)
        #expect(try limit("all") == .all)
        #expect(try limit("5") == .count(5))
        #expect(try limit("1").isSingle)
        for bad in ["0", "-1", "many", ""] {
            #expect(queryStatus([("limit", bad)], .copyMatching) == .param)
        }
    }

    @Test func returnKinds() throws {
        func kinds(_ text: String) throws -> ReturnKinds {
            try Self.query([("return", text)]).returnKinds
        }
        #expect(try Self.query([]).returnKinds == .attributes)
        #expect(try kinds("data") == .data)
        #expect(try kinds("attributes,data") == [.attributes, .data])
        #expect(try kinds("ref") == .ref)
        #expect(try kinds("none") == .none)
        #expect(try kinds(" data ,  ref,attributes ") == [.attributes, .data, .ref])
        #expect(try kinds("data,data") == .data)
        for bad in ["", "secret", "none,data", "data,", ",data", " ", "data,,ref", "dáta", "data\u{301}", ",\u{301}data", "da ta"] {
            #expect(queryStatus([("return", bad)], .copyMatching) == .param)
        }
    }

    @Test func aNameGivenTwiceIsNamedInTheError() throws {
        for count in [2, 5, 16, 17, 40] {
            var pairs = (0..<(count - 1)).map { ("label\($0)", "x") }
            pairs.insert(("label0", "y"), at: count / 2)
            #expect(throws: KeychainError.param("\"label0\" is given more than once")) {
                _ = try Self.query(pairs)
            }
        }
    }

    @Test func synchronizableFilter() throws {
        func sync(_ pairs: [(String, String)]) throws -> SynchronizableFilter {
            try Self.query(pairs).synchronizable
        }
        #expect(try sync([]) == .nonSynchronizable)
        #expect(try sync([("synchronizable", "true")]) == .synchronizable)
        #expect(try sync([("synchronizable", "any")]) == .any)
        #expect(queryStatus([("synchronizable", "maybe")], .copyMatching) == .param)
    }

    struct QueryCase: Sendable, CustomTestStringConvertible {
        let operation: ItemOperation
        let itemClass: ItemClass
        let pairs: [(String, String)]
        let expected: KeychainError.Code?
        var testDescription: String { "\(operation) \(itemClass.rawValue) \(pairs.map(\.0))" }
        init(_ operation: ItemOperation, _ pairs: [(String, String)], _ expected: KeychainError.Code?) {
            self.init(operation, .genericPassword, pairs, expected)
        }
        init(_ operation: ItemOperation, _ itemClass: ItemClass, _ pairs: [(String, String)], _ expected: KeychainError.Code?) {
            self.operation = operation
            self.itemClass = itemClass
            self.pairs = pairs
            self.expected = expected
        }
    }

    static let queryCases: [QueryCase] = [
        QueryCase(.copyMatching, [("service", "s"), ("caseInsensitive", "true")], nil),
        QueryCase(.copyMatching, [("nonsense", "x")], .noSuchAttr),
        QueryCase(.copyMatching, [("server", "x")], .noSuchAttr),
        QueryCase(.copyMatching, .certificate, [("applicationTag", "AAE=")], .noSuchAttr),
        QueryCase(.delete, .certificate, [("applicationTag", "AAE=")], .noSuchAttr),
        QueryCase(.copyMatching, .identity, [("applicationTag", "AAE="), ("issuer", "AAE=")], nil),
        QueryCase(.copyMatching, [("all", "true")], .param),
        QueryCase(.copyMatching, [("service", "a"), ("service", "b")], .param),
        QueryCase(.update, [("limit", "one")], .param),
        QueryCase(.update, [("caseInsensitive", "true")], .param),
        QueryCase(.update, [("return", "data")], .param),
        QueryCase(.update, [("cursor", "x")], .param),
        QueryCase(.delete, [("limit", "all")], .param),
        QueryCase(.delete, [("caseInsensitive", "false")], .param),
        QueryCase(.delete, [("return", "data"), ("service", "s")], nil),
        QueryCase(.delete, [("all", "true")], nil),
        QueryCase(.delete, [("all", "sure")], .param),
        QueryCase(.copyMatching, [("persistentRef", "short")], .param),
        QueryCase(.copyMatching, [("value", "x"), ("data", "AAE=")], .param),
    ]

    @Test(arguments: queryCases)
    func queryRules(_ testCase: QueryCase) {
        #expect(queryStatus(testCase.itemClass, testCase.pairs, testCase.operation) == testCase.expected)
    }

    struct BodyCase: Sendable, CustomTestStringConvertible {
        let itemClass: ItemClass
        let pairs: [(String, JSONValue)]
        let expected: KeychainError.Code?
        var testDescription: String { "\(itemClass.rawValue) \(pairs.map(\.0))" }
        init(_ pairs: [(String, JSONValue)], _ expected: KeychainError.Code?) {
            self.init(.genericPassword, pairs, expected)
        }
        init(_ itemClass: ItemClass, _ pairs: [(String, JSONValue)], _ expected: KeychainError.Code?) {
            self.itemClass = itemClass
            self.pairs = pairs
            self.expected = expected
        }
    }

    static let addCases: [BodyCase] = [
        BodyCase([("service", .string("s")), ("value", .string("pw"))], nil),
        BodyCase([("service", .string("s")), ("data", .string("AAE="))], nil),
        BodyCase([("value", .string("pw")), ("data", .string("AAE="))], .param),
        BodyCase([("value", .integer(1))], .param),
        BodyCase([("value", .null)], .param),
        BodyCase([("data", .string("not base64!"))], .param),
        BodyCase([("creationDate", .string("2026-11-21T10:00:00.123Z"))], .param),
        BodyCase([("modificationDate", .string("2026-11-21T10:00:00.123Z"))], .param),
        BodyCase([("persistentRef", .string("AAAAAAAAAAAAAAAAAAAAAA"))], .param),
        BodyCase(.certificate, [("issuer", .string("AAE="))], .param),
        BodyCase(.certificate, [("serialNumber", .string("AAE="))], .param),
        BodyCase([("limit", .string("one"))], .param),
        BodyCase([("caseInsensitive", .bool(true))], .param),
        BodyCase([("class", .string("genericPassword"))], .noSuchAttr),
        BodyCase([("server", .string("x"))], .noSuchAttr),
        BodyCase([("synchronizable", .string("any"))], .param),
        BodyCase([("return", .bool(true))], .param),
        BodyCase(.identity, [("certificate", .string("AAE="))], .param),
        BodyCase(.identity, [("certificate", .string("AAE=")), ("privateKey", .string("AAE="))], nil),
        BodyCase(.identity, [("data", .string("AAE="))], .param),
        BodyCase(.identity, [("value", .string("pw")), ("certificate", .string("AAE=")), ("privateKey", .string("AAE="))], .param),
    ]

    @Test(arguments: addCases)
    func addBodies(_ testCase: BodyCase) {
        #expect(
            status { try ItemAddRequest(decoding: JSONBody(testCase.pairs), of: testCase.itemClass) } == testCase.expected)
    }

    static let updateCases: [BodyCase] = [
        BodyCase([("value", .string("new"))], nil),
        BodyCase([("label", .string("l")), ("data", .string("AAE="))], nil),
        BodyCase([("value", .string("a")), ("data", .string("AAE="))], .param),
        BodyCase([("class", .string("genericPassword"))], .noSuchAttr),
        BodyCase([("return", .string("data"))], .noSuchAttr),
        BodyCase([("limit", .string("all"))], .noSuchAttr),
        BodyCase([("server", .string("x"))], .noSuchAttr),
        BodyCase([("creationDate", .string("2026-11-21T10:00:00.123Z"))], .param),
        BodyCase([("persistentRef", .string("AAAAAAAAAAAAAAAAAAAAAA"))], .param),
        BodyCase([("data", .integer(3))], .param),
        BodyCase([("port", .string("1"))], .noSuchAttr),
        BodyCase(.internetPassword, [("port", .string("1"))], .param),
    ]

    @Test(arguments: updateCases)
    func updateBodies(_ testCase: BodyCase) {
        #expect(status { try ItemUpdate(decoding: JSONBody(testCase.pairs), of: testCase.itemClass) } == testCase.expected)
    }

    @Test func aCursorIsKeptAsSentForTheServiceToOpen() throws {
        let query = try ItemQuery(
            decoding: [QueryParameter(name: "limit", value: "all"), QueryParameter(name: "cursor", value: "garbage")],
            of: .genericPassword, for: .copyMatching)
        #expect(query.cursor == PageCursor(token: "garbage"))
        #expect(query.queryParameters(for: .copyMatching).contains { $0.name == "cursor" && $0.value == "garbage" })
    }
}
