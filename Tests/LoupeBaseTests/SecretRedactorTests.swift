import Testing

@testable import LoupeBase

struct SecretRedactorTests {
    @Test func knownSecretsAreRedactedWhereverTheyOccur() {
        let redactor = SecretRedactor(secrets: ["sk-TESTSECRET123", nil, "ab"])
        #expect(
            redactor.redact("HTTP 401: Incorrect API key provided: Bearer sk-TESTSECRET123.")
                == "HTTP 401: Incorrect API key provided: Bearer [redacted].")
    }

    @Test(arguments: [
        (
            "agent run \"q\" --base-url http://user:hunter2@127.0.0.1:9/ --retries 0",
            "agent run \"q\" --base-url http://user:[redacted]@127.0.0.1:9/ --retries 0"
        ),
        ("agent run q --api-key abcdef123 --model m", "agent run q --api-key [redacted] --model m"),
        ("agent run q --api-key=abcdef123", "agent run q --api-key=[redacted]"),
        ("curl -H 'Authorization: Bearer eyJhbGciOi'", "curl -H 'Authorization: Bearer [redacted]'"),
        ("ask https://h/v1?key=AIzaXYZ&x=1", "ask https://h/v1?key=[redacted]&x=1"),
        ("note sk-proj-abcdefghijkl done", "note [redacted] done"),
        ("search \"password reset\" --k 5", "search \"password reset\" --k 5"),
        (
            "trace export 3 --to http://h:4318 --header 'Authorization=Basic cGstbGY6c2s=' --header x-api-key=k123",
            "trace export 3 --to http://h:4318 --header 'Authorization=[redacted]' --header x-api-key=[redacted]"
        ),
        (
            "trace export 3 --header \"Authorization: Basic cGstbGY6c2s=\"",
            "trace export 3 --header \"Authorization:[redacted]\""
        ),
    ])
    func credentialShapedPartsOfACommandLineAreRedacted(line: String, expected: String) {
        #expect(SecretRedactor(secrets: []).redactCredentials(in: line) == expected)
    }
}
