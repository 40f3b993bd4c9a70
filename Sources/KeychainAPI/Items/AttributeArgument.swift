public import KeychainCore

/// What an item request says about one attribute of its class, read leniently for the audit log
/// (which records a refused request as well): the typed value, or the value as sent when the
/// attribute does not take it.
public enum AttributeArgument: Sendable {
    case typed(AttributeValue)
    /// A value the attribute refuses: a string's text, any other JSON value as JSON text.
    case sent(String)

    /// The arguments of a query string that name attributes of `itemClass`, in order (control
    /// keys, secrets and unknown names are left out).
    public static func arguments(
        of itemClass: ItemClass, in query: [QueryParameter]
    ) -> [(name: String, argument: AttributeArgument)] {
        query.compactMap { parameter in
            guard let attribute = Attribute.named(parameter.name), attribute.belongs(to: itemClass) else { return nil }
            let argument = (try? attribute.value(text: parameter.value)).map(typed) ?? .sent(parameter.value)
            return (parameter.name, argument)
        }
    }

    /// The same for a JSON body's members.
    public static func arguments(
        of itemClass: ItemClass, in body: JSONBody
    ) -> [(name: String, argument: AttributeArgument)] {
        body.members.compactMap { name, value in
            guard let attribute = Attribute.named(name), attribute.belongs(to: itemClass) else { return nil }
            if let typed = try? attribute.value(json: value) { return (name, .typed(typed)) }
            if case .string(let text) = value { return (name, .sent(text)) }
            return (name, .sent(String(decoding: value.serialized(), as: UTF8.self)))
        }
    }
}
