/// What running one command line produced.
package struct CommandOutcome: Hashable, Sendable {
    /// What the command printed.
    package var output: String
    /// The error message when the command failed, nil when it succeeded.
    package var error: String?
    /// Requests for the TUI.
    package var requests: [UIRequest]
    /// How long the command ran, where its runner timed it (the TUI's jobs).
    package var seconds: Double?

    package init(output: String = "", error: String? = nil, requests: [UIRequest] = []) {
        self.output = output
        self.error = error
        self.requests = requests
    }

    package var succeeded: Bool { error == nil }
}
