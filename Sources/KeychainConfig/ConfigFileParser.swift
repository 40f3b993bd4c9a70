/// Reads the config file: a small subset of TOML. `key = value` lines, `[section]` headers that
/// prefix the keys after them (`[limits]` + `maxBodyBytes` → `limits.maxBodyBytes`), `#` comments,
/// values as "double-quoted strings", integers, booleans or one-line arrays of strings
/// (`["10.0.0.0/8", "::1"]`, read as their environment spelling: the strings joined by commas).
enum ConfigFileParser {
    static func parse(_ text: String, path: String) throws -> [ConfigurationLoader.Setting] {
        var settings: [ConfigurationLoader.Setting] = []
        var section = ""
        var seen = Set<String>()
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let where_ = "\(path):\(offset + 1)"
            let line = stripComment(Substring(rawLine)).trimmed()
            if line.isEmpty { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), line.count > 2 else {
                    throw ConfigurationError("\(where_): malformed section header")
                }
                section = String(line.dropFirst().dropLast()).trimmed()
                continue
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw ConfigurationError("\(where_): expected key = value")
            }
            let name = String(line[..<equals]).trimmed()
            let key = section.isEmpty ? name : "\(section).\(name)"
            guard !name.isEmpty else { throw ConfigurationError("\(where_): missing key") }
            guard seen.insert(key).inserted else { throw ConfigurationError("\(where_): \(key) given twice") }
            let value = try parseValue(String(line[line.index(after: equals)...]).trimmed(), key: key, at: where_)
            settings.append(ConfigurationLoader.Setting(key: key, value: value, source: where_))
        }
        return settings
    }

    private static func parseValue(_ text: String, key: String, at where_: String) throws -> String {
        if text.hasPrefix("[") {
            guard text.hasSuffix("]") else { throw ConfigurationError("\(where_): \(key): unterminated array") }
            // Cut at commas first: a string in an array holds none (its environment spelling could not).
            let elements = text.dropFirst().dropLast().split(separator: ",").map { $0.trimmed() }.filter { !$0.isEmpty }
            return try elements.map { element in
                guard element.hasPrefix("\"") else {
                    throw ConfigurationError("\(where_): \(key): an array holds \"strings\" only")
                }
                return try parseValue(element, key: key, at: where_)
            }.joined(separator: ",")
        }
        if text.hasPrefix("\"") {
            guard text.count >= 2, text.hasSuffix("\"") else {
                throw ConfigurationError("\(where_): \(key): unterminated string")
            }
            let inner = text.dropFirst().dropLast()
            guard !inner.contains("\"") && !inner.contains("\\") else {
                throw ConfigurationError("\(where_): \(key): escapes are not supported in strings")
            }
            return String(inner)
        }
        guard !text.isEmpty, text.allSatisfy({ $0.isNumber || $0 == "-" || $0.isLetter }) else {
            throw ConfigurationError("\(where_): \(key): expected a \"string\", an integer or a boolean")
        }
        return text
    }

    /// Drops a `#` comment that is not inside a string.
    private static func stripComment(_ line: Substring) -> Substring {
        var inString = false
        for index in line.indices {
            switch line[index] {
            case "\"": inString.toggle()
            case "#" where !inString: return line[..<index]
            default: continue
            }
        }
        return line
    }
}

extension StringProtocol {
    func trimmed() -> String {
        var view = Substring(self)
        while let first = view.first, first.isWhitespace { view = view.dropFirst() }
        while let last = view.last, last.isWhitespace { view = view.dropLast() }
        return String(view)
    }
}
