/// A JSON syntax error: what was expected and where (1-based line and column).
package struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    package var message: String
    package var line: Int
    package var column: Int
    /// Whether the text ended where more was needed: a stream's next chunk may complete it.
    package var ranOut = false
    package var description: String { "line \(line), column \(column): \(message)" }

    package init(message: String, line: Int, column: Int) {
        self.message = message
        self.line = line
        self.column = column
    }
}
