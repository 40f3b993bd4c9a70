import Foundation
import KeychainCore
import Testing

@Suite struct AttributeParsingTests {
    enum Expect: Sendable {
        case success(AttributeValue)
        case failure(KeychainError.Code)
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let itemClass: ItemClass
        let name: String
        let value: WireValue
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
            #expect(try attribute.parse(testCase.value) == value)
        case .failure(let code):
            do {
                _ = try attribute.parse(testCase.value)
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
        #expect(AttributeValue.date(Date(timeIntervalSince1970: 1_795_255_200.123)).wireValue
            == .string("2026-11-21T10:00:00.123Z"))
    }

    @Test func dataIsAnsweredInPaddedBase64() {
        #expect(AttributeValue.data([0, 1]).wireValue == .string("AAE="))
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
    func fields(_ pairs: [(String, WireValue)]) -> [WireValue.Field] { pairs.map { .init($0.0, $0.1) } }

    func queryStatus(_ pairs: [(String, WireValue)], _ operation: ItemOperation) -> KeychainError.Code? {
        queryStatus(.genericPassword, pairs, operation)
    }

    func queryStatus(_ itemClass: ItemClass, _ pairs: [(String, WireValue)], _ operation: ItemOperation)
        -> KeychainError.Code?
    {
        status { try ItemRequestParser.query(itemClass, fields(pairs), for: operation) }
    }

    @Test func limits() throws {
        func limit(_ text: String) throws -> MatchLimit {
            try ItemRequestParser.query(.genericPassword, fields([("limit", .text(text))]), for: .copyMatching).limit
        }
        #expect(try ItemRequestParser.query(.genericPassword, [], for: .copyMatching).limit == .one)
        #expect(try limit("one") == .one)
        #expect(try limit("all") == .all)
        #expect(try limit("5") == .count(5))
        #expect(try limit("1").isSingle)
        for bad in ["0", "-1", "many", ""] {
            #expect(queryStatus([("limit", .text(bad))], .copyMatching) == .param)
        }
    }

    @Test func returnKinds() throws {
        func kinds(_ text: String) throws -> ReturnKinds {
            try ItemRequestParser.query(.genericPassword, fields([("return", .text(text))]), for: .copyMatching).returnKinds
        }
        #expect(try ItemRequestParser.query(.genericPassword, [], for: .copyMatching).returnKinds == .attributes)
        #expect(try kinds("data") == .data)
        #expect(try kinds("attributes,data") == [.attributes, .data])
        #expect(try kinds("ref") == .ref)
        #expect(try kinds("none") == .none)
        #expect(try kinds(" data ,  ref,attributes ") == [.attributes, .data, .ref])
        #expect(try kinds("data,data") == .data)
        for bad in ["", "secret", "none,data", "data,", ",data", " ", "data,,ref", "dáta", "data\u{301}", ",\u{301}data", "da ta"] {
            #expect(queryStatus([("return", .text(bad))], .copyMatching) == .param)
        }
    }

    @Test func aNameGivenTwiceIsNamedInTheError() throws {
        for count in [2, 5, 16, 17, 40] {
            var pairs = (0..<(count - 1)).map { ("label\($0)", WireValue.text("x")) }
            pairs.insert(("label0", .text("y")), at: count / 2)
            #expect(throws: KeychainError.param("\"label0\" is given more than once")) {
                _ = try ItemRequestParser.query(.genericPassword, fields(pairs), for: .copyMatching)
            }
        }
    }

    @Test func synchronizableFilter() throws {
        func sync(_ pairs: [(String, WireValue)]) throws -> SynchronizableFilter {
            try ItemRequestParser.query(.genericPassword, fields(pairs), for: .copyMatching).synchronizable
        }
        #expect(try sync([]) == .nonSynchronizable)
        #expect(try sync([("synchronizable", .text("true"))]) == .synchronizable)
        #expect(try sync([("synchronizable", .text("any"))]) == .any)
        #expect(queryStatus([("synchronizable", .text("maybe"))], .copyMatching) == .param)
    }

    struct QueryCase: Sendable, CustomTestStringConvertible {
        let operation: ItemOperation
        let itemClass: ItemClass
        let pairs: [(String, WireValue)]
        let expected: KeychainError.Code?
        var testDescription: String { "\(operation) \(itemClass.rawValue) \(pairs.map(\.0))" }
        init(_ operation: ItemOperation, _ pairs: [(String, WireValue)], _ expected: KeychainError.Code?) {
            self.init(operation, .genericPassword, pairs, expected)
        }
        init(_ operation: ItemOperation, _ itemClass: ItemClass, _ pairs: [(String, WireValue)], _ expected: KeychainError.Code?) {
            self.operation = operation
            self.itemClass = itemClass
            self.pairs = pairs
            self.expected = expected
        }
    }

    static let queryCases: [QueryCase] = [
        QueryCase(.copyMatching, [("service", .text("s")), ("caseInsensitive", .text("true"))], nil),
        QueryCase(.copyMatching, [("nonsense", .text("x"))], .noSuchAttr),
        QueryCase(.copyMatching, [("server", .text("x"))], .noSuchAttr),
        QueryCase(.copyMatching, .certificate, [("applicationTag", .text("AAE="))], .noSuchAttr),
        QueryCase(.delete, .certificate, [("applicationTag", .text("AAE="))], .noSuchAttr),
        QueryCase(.copyMatching, .identity, [("applicationTag", .text("AAE=")), ("issuer", .text("AAE="))], nil),
        QueryCase(.copyMatching, [("all", .text("true"))], .param),
        QueryCase(.copyMatching, [("service", .text("a")), ("service", .text("b"))], .param),
        QueryCase(.update, [("limit", .text("one"))], .param),
        QueryCase(.update, [("caseInsensitive", .text("true"))], .param),
        QueryCase(.update, [("return", .text("data"))], .param),
        QueryCase(.update, [("cursor", .text("x"))], .param),
        QueryCase(.delete, [("limit", .text("all"))], .param),
        QueryCase(.delete, [("caseInsensitive", .text("false"))], .param),
        QueryCase(.delete, [("return", .text("data")), ("service", .text("s"))], nil),
        QueryCase(.delete, [("all", .text("true"))], nil),
        QueryCase(.delete, [("all", .text("sure"))], .param),
        QueryCase(.copyMatching, [("cursor", .text("garbage"))], .param),
        QueryCase(.copyMatching, [("persistentRef", .text("short"))], .param),
        QueryCase(.copyMatching, [("value", .text("x")), ("data", .text("AAE="))], .param),
    ]

    @Test(arguments: queryCases)
    func queryRules(_ testCase: QueryCase) {
        #expect(queryStatus(testCase.itemClass, testCase.pairs, testCase.operation) == testCase.expected)
    }

    struct BodyCase: Sendable, CustomTestStringConvertible {
        let itemClass: ItemClass
        let pairs: [(String, WireValue)]
        let expected: KeychainError.Code?
        var testDescription: String { "\(itemClass.rawValue) \(pairs.map(\.0))" }
        init(_ pairs: [(String, WireValue)], _ expected: KeychainError.Code?) {
            self.init(.genericPassword, pairs, expected)
        }
        init(_ itemClass: ItemClass, _ pairs: [(String, WireValue)], _ expected: KeychainError.Code?) {
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
        #expect(status { try ItemRequestParser.newItem(testCase.itemClass, fields(testCase.pairs)) } == testCase.expected)
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
        #expect(status { try ItemRequestParser.update(testCase.itemClass, fields(testCase.pairs)) } == testCase.expected)
    }

    @Test func cursorRoundTrips() throws {
        let cursor = PageCursor(after: ItemCursor(afterSequence: 42), remaining: 7)
        #expect(PageCursor(encoded: cursor.encoded) == cursor)
        let open = PageCursor(after: ItemCursor(afterSequence: 9), remaining: nil)
        #expect(PageCursor(encoded: open.encoded) == open)
    }
}
