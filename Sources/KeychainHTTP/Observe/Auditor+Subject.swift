import KeychainAPI
import KeychainCore

/// What an entry says about the request's target, as its route declares it (`AuditTarget`), and
/// the HMAC tags that stand for values.
extension Auditor {
    /// What the entry of an authenticated request says about its target, as `target` (the
    /// route's declaration) has it, read from the request the handler reads (its body parsed
    /// once for both). Of an item, only names that are attributes of the class are kept (never
    /// `value`, `data`, `privateKey`, control keys or unknown names).
    func subject(of context: RequestContext, target: AuditTarget) -> Subject {
        var subject = Subject()
        switch target {
        case .none, .unaudited:
            break
        case .item:
            if let ref = context.parameters["persistentRef"], PersistentRef(ref) != nil { subject.persistentRef = ref }
            guard let itemClass = ItemClass(rawValue: context.parameters["class"] ?? "") else { break }
            subject.itemClass = itemClass.rawValue
            if context.request.method == .post {
                subject.attributes = tags(Self.bodyArguments(of: itemClass, in: context))
            } else {
                subject.attributes = tags(AttributeArgument.arguments(of: itemClass, in: context.request.queryItems))
                if context.request.method == .patch {
                    subject.changes = tags(Self.bodyArguments(of: itemClass, in: context))
                }
            }
        case .pathParameters, .client:
            func add(_ name: String, _ value: String) {
                let plain = target == .client && Client.isValidName(value)
                subject.parameters.append((name, plain ? value : tag(name, Self.raw(value))))
            }
            // In name order; most routes have one parameter, which needs no sorting.
            if context.parameters.count > 1 {
                for (name, value) in context.parameters.sorted(by: { $0.name < $1.name }) { add(name, value) }
            } else {
                for (name, value) in context.parameters { add(name, value) }
            }
        }
        return subject
    }

    /// The body's attribute arguments; none when the body is not a JSON object.
    private static func bodyArguments(
        of itemClass: ItemClass, in context: RequestContext
    ) -> [(name: String, argument: AttributeArgument)] {
        guard let body = try? context.jsonBody() else { return [] }
        return AttributeArgument.arguments(of: itemClass, in: body)
    }

    /// Each attribute argument with the tag of its value: of the typed value, or of the value as
    /// sent when the attribute does not take it.
    private func tags(_ arguments: [(name: String, argument: AttributeArgument)]) -> [(String, String)] {
        arguments.map { name, argument in
            switch argument {
            case .typed(let value): (name, tag(name, Self.canonical(value)))
            case .sent(let text): (name, tag(name, Self.raw(text)))
            }
        }
    }

    /// base64url(HMAC-SHA-256(auditKey, name ‖ 0x00 ‖ canonical value)[0..<16]), worked out for
    /// every value: the message and the MAC are written into one temporary allocation (on the
    /// stack for the usual short values), and an HMAC on the prepared key costs about what
    /// looking a remembered tag up did (docs/decisions.md, "Audit tags: every tag computed, none remembered").
    func tag(_ name: String, _ canonical: [UInt8]) -> String {
        let nameLength = name.utf8.count
        let messageLength = nameLength + 1 + canonical.count
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: messageLength + Self.macSize) { memory in
            let start = memory.baseAddress!
            _ = UnsafeMutableBufferPointer(start: start, count: nameLength).initialize(from: name.utf8)
            start[nameLength] = 0
            canonical.withUnsafeBufferPointer { value in
                if let bytes = value.baseAddress { (start + nameLength + 1).initialize(from: bytes, count: value.count) }
            }
            let message = UnsafeRawBufferPointer(start: start, count: messageLength)
            let digest = UnsafeMutableRawBufferPointer(start: start + messageLength, count: Self.macSize)
            guard mac(message, digest) else { return "locked" }
            return Base64URL.encode(UnsafeRawBufferPointer(rebasing: digest[0..<Self.tagBytes]))
        }
    }

    private static let macSize = 32
    /// The MAC's bytes a tag keeps.
    private static let tagBytes = 16

    /// A type byte and the value, as the server stores it (so `port=443` in a query and `443`
    /// in a body, or `ecdsa` and `ecsecPrimeRandom`, give the same tag).
    static func canonical(_ value: AttributeValue) -> [UInt8] {
        switch value {
        case .string(let text): typed("s", text.utf8)
        case .data(let bytes): typed("d", bytes)
        case .integer(let number): typed("i", String(number).utf8)
        case .bool(let flag): typed("b", (flag ? "true" : "false").utf8)
        case .date(let date): typed("t", String(date.millisecondsSince1970).utf8)
        }
    }

    /// A value the attribute refused, as sent.
    static func raw(_ text: String) -> [UInt8] { typed("r", text.utf8) }

    /// The type byte and the value's bytes, in one allocation.
    private static func typed(_ type: Unicode.Scalar, _ value: some Collection<UInt8>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1 + value.count)
        bytes.append(UInt8(ascii: type))
        bytes.append(contentsOf: value)
        return bytes
    }

}
