extension GGUFFile {
    /// The value of `key`; the error says the key is missing.
    package func value(_ key: String) throws(ModelError) -> GGUFValue {
        guard let value = metadata[key] else { throw ModelError(file: fileName, message: "\(key): missing") }
        return value
    }

    /// The string at `key`.
    package func string(_ key: String) throws(ModelError) -> String {
        let value = try value(key)
        guard let text = value.stringValue else { throw mismatch(key, value, expected: "a string") }
        return text
    }

    /// The integer at `key`, of any GGUF integer type that fits an `Int`.
    package func integer(_ key: String) throws(ModelError) -> Int {
        let value = try value(key)
        guard let number = value.integerValue else { throw mismatch(key, value, expected: "an integer") }
        return number
    }

    /// The float32 or float64 at `key` (a float64 is rounded to float32).
    package func float(_ key: String) throws(ModelError) -> Float {
        let value = try value(key)
        guard let number = value.floatValue else { throw mismatch(key, value, expected: "a float") }
        return number
    }

    /// The array of strings at `key`.
    package func strings(_ key: String) throws(ModelError) -> [String] {
        let value = try value(key)
        guard case .array(let elements) = value else { throw mismatch(key, value, expected: "an array of strings") }
        var texts: [String] = []
        texts.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard let text = element.stringValue else {
                throw mismatch("\(key)[\(index)]", element, expected: "a string")
            }
            texts.append(text)
        }
        return texts
    }

    /// The array of integers at `key`, each of any GGUF integer type that fits an `Int`.
    package func integers(_ key: String) throws(ModelError) -> [Int] {
        let value = try value(key)
        guard case .array(let elements) = value else { throw mismatch(key, value, expected: "an array of integers") }
        var numbers: [Int] = []
        numbers.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard let number = element.integerValue else {
                throw mismatch("\(key)[\(index)]", element, expected: "an integer")
            }
            numbers.append(number)
        }
        return numbers
    }

    private func mismatch(_ key: String, _ value: GGUFValue, expected: String) -> ModelError {
        if value.integerValue == nil, case .uint64(let number) = value {
            return ModelError(file: fileName, message: "\(key): \(number) does not fit a 64-bit signed integer")
        }
        let article = ["int", "array", "empty"].contains { value.typeName.hasPrefix($0) } ? "an" : "a"
        return ModelError(file: fileName, message: "\(key): is \(article) \(value.typeName), not \(expected)")
    }
}
