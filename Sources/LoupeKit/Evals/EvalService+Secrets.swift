import LoupeBase
import LoupeEvals

extension EvalService {
    /// The suite text a run queued for workers keeps in the workspace, where everyone who opens
    /// it reads it.
    ///
    /// - Throws: ``EvalError`` when a URL in the suite (a `base_url`) carries a password or a
    ///   key: workers answer with the suite as stored, so it cannot be stored without it, and the
    ///   workspace must not hold it.
    static func storableSuiteText(_ loaded: LoadedSuite) throws -> String {
        let text = loaded.suiteText
        // A quoted YAML value may hold spaces: the text is read both as words and as quoted words.
        let placeholder = SecretRedactor.placeholder
        guard URLCredentials.redactingURLs(inText: text, placeholder: placeholder) == text,
            URLCredentials.redactingURLs(inCommandLine: text, placeholder: placeholder) == text
        else {
            throw EvalError(
                "\(loaded.suite.file): a URL in the suite carries a password, and a run queued for workers keeps its "
                    + "suite in the shared workspace; take the credentials out of base_url (set OPENAI_BASE_URL "
                    + "where each worker runs and leave base_url out), or run without --workers")
        }
        return text
    }
}
