// swift-tools-version:6.1
import PackageDescription

let strictSwift6: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "loupe",
    products: [
        .executable(name: "loupe", targets: ["loupe"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // The OTLP receiver (LoupeReceiver): HTTP, gRPC, the generated protobuf messages.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.2"),
        .package(url: "https://github.com/grpc/grpc-swift-protobuf", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // bench receive's load generator: an event-loop HTTP client light enough to leave the
        // cores to the server it loads (URLSession on Linux used as much CPU as loupe serve).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // A team's workspace on PostgreSQL (LoupeStore's second backend).
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // `loupe mcp`: the Model Context Protocol server (LoupeMCP) that coding agents talk to.
        .package(url: "https://github.com/modelcontextprotocol/swift-sdk", exact: "0.12.1"),
        // `loupe serve`'s /metrics in Prometheus text (LoupeServing).
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // System-library shims: the only places C headers enter the build.
        .systemLibrary(
            name: "CNCurses",
            providers: [.apt(["libncursesw5-dev"])]
        ),
        .systemLibrary(
            name: "CReadline",
            providers: [.apt(["libreadline-dev"])]
        ),
        .systemLibrary(
            name: "COpenBLAS",
            providers: [.apt(["libopenblas-dev"])]
        ),
        // Zip members of Inspect AI `.eval` logs: deflate (zlib) and, since Inspect 0.3.206, zstd.
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CZstd", providers: [.apt(["libzstd-dev"])]),

        // Small shared utilities every module may use: a JSON value, zip and zstd, a parallel map,
        // seeded random numbers, the one unchecked-Sendable box, the user-facing error protocol.
        .target(name: "LoupeBase", dependencies: ["CZlib", "CZstd"], swiftSettings: strictSwift6),

        // Engine: tensors and kernels (OpenBLAS), models. Pure computation: no workspace, no terminal
        // (LoupeProfiling opens Nsight Systems exports, SQLite files, read-only through GRDB).
        .target(name: "CKernels", cSettings: [.unsafeFlags(["-O3"])]),
        .target(
            name: "LoupeTensor", dependencies: ["LoupeBase", "COpenBLAS", "CKernels"], swiftSettings: strictSwift6),
        .target(
            name: "LoupeModels", dependencies: ["LoupeBase", "LoupeTensor", "CKernels"], swiftSettings: strictSwift6),
        .target(
            name: "LoupeRetrieval", dependencies: ["LoupeBase", "LoupeTensor", "CKernels"], swiftSettings: strictSwift6),
        .target(
            name: "LoupeProfiling",
            // GRDB: Nsight Systems exports are SQLite files, read through it.
            dependencies: ["LoupeBase", "CKernels", "LoupeTensor", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strictSwift6),
        // Agents: the trace model, importers and exporters. Pure: no SQLite, no terminal.
        .target(name: "LoupeAgents", dependencies: ["LoupeBase"], swiftSettings: strictSwift6),
        // Evals: suites (YAML), scorers and statistics. Pure: no SQLite, no terminal.
        .target(
            name: "LoupeEvals", dependencies: ["LoupeBase", "LoupeAgents", .product(name: "Yams", package: "Yams")],
            swiftSettings: strictSwift6),

        // Pure terminal-UI model: cells, frames, layout, widgets, themes. No C, no I/O; text widths and
        // untrusted-text sanitizing come from LoupeBase, which the command line shares.
        .target(name: "LoupeTUI", dependencies: ["LoupeBase"], swiftSettings: strictSwift6),
        // The only TUI code that touches C: ncurses and the headless test backend.
        .target(
            name: "LoupeTerminal", dependencies: ["LoupeBase", "LoupeTUI", "CNCurses"], swiftSettings: strictSwift6),
        // The workspace: one SQLite file through GRDB (LoupePostgres: a PostgreSQL database).
        .target(
            name: "LoupeStore",
            dependencies: [
                "LoupeBase", .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API for what GRDB does not wrap: incremental blob reads.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strictSwift6
        ),
        // The workspace on PostgreSQL: its wire protocol (postgres-nio), an event loop to run it on,
        // TLS. Apart from LoupeStore, so that what links the Store alone (the fuzzer) builds none of it.
        .target(
            name: "LoupePostgres",
            dependencies: [
                "LoupeStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift6
        ),
        // Services: jobs with progress and cancellation, theme loading, notebooks.
        .target(
            name: "LoupeKit",
            dependencies: [
                "LoupeBase", "LoupeStore", "LoupeTUI", "LoupeTensor", "LoupeModels", "LoupeProfiling", "LoupeRetrieval",
                "LoupeAgents", "LoupeEvals", "LoupeOTLP",
            ],
            swiftSettings: strictSwift6
        ),
        // OTLP's messages, generated once by swift-protobuf's plugin from the official protos
        // (Generated/, scripts/generate-otlp), and their reading into the trace model. Pure: no
        // network, so the fuzzer builds it without the servers.
        .target(
            name: "LoupeOTLP",
            dependencies: ["LoupeBase", "LoupeAgents", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            exclude: ["Generated/README.md"],
            swiftSettings: strictSwift6
        ),
        // Loupe as an OTLP endpoint: OTLP/HTTP (Hummingbird) and OTLP/gRPC (grpc-swift-2, its service
        // generated into Generated/), handing spans to LoupeKit's TraceIngest. Never writes SQL.
        .target(
            name: "LoupeReceiver",
            dependencies: [
                "LoupeBase", "LoupeKit", "LoupeOTLP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            exclude: ["Generated/README.md"],
            swiftSettings: strictSwift6
        ),
        // OpenAI's request and error shapes, read and checked field by field, and W3C `traceparent`.
        // Pure: no network, so the fuzzer builds it without the servers (as LoupeOTLP).
        .target(
            name: "LoupeOpenAI",
            dependencies: ["LoupeBase", "LoupeKit", "LoupeModels", "LoupeAgents"],
            swiftSettings: strictSwift6
        ),
        // `loupe serve`'s OpenAI-compatible endpoint (`/v1/chat/completions`…): requests scheduled on the
        // local model (LoupeModels), each recorded as a trace through the receiver's ingest.
        .target(
            name: "LoupeServing",
            dependencies: [
                "LoupeBase", "LoupeKit", "LoupeModels", "LoupeAgents", "LoupeOpenAI", "LoupeReceiver",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strictSwift6
        ),
        // The workspace as MCP tools for coding agents (`loupe mcp`): the Kit services the panels use,
        // over stdio or streamable HTTP (Hummingbird). Never sees the screen.
        .target(
            name: "LoupeMCP",
            dependencies: [
                "LoupeBase", "LoupeKit", "LoupeStore", "LoupeAgents", "LoupeEvals", "LoupeModels", "LoupeProfiling",
                "LoupeRetrieval",
                .product(name: "MCP", package: "swift-sdk"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift6
        ),
        // The TUI program: state, messages, update, render, panels, keymaps, the loop.
        .target(
            name: "LoupeApp",
            dependencies: [
                "LoupeBase", "LoupeTUI", "LoupeTerminal", "LoupeKit", "LoupeStore", "LoupeRetrieval", "LoupeAgents",
                "LoupeEvals", "LoupeProfiling",
            ],
            swiftSettings: strictSwift6
        ),
        // The command language shared by the CLI, the `:` line, the palette, the REPL and notebooks.
        .target(
            name: "LoupeCommands",
            dependencies: [
                "LoupeBase", "LoupeKit", "LoupeStore", "LoupeTUI", "LoupeModels", "LoupeTensor",
                "LoupeProfiling", "LoupeRetrieval", "LoupeAgents", "LoupeEvals", "LoupeReceiver", "LoupeOTLP",
                "LoupePostgres", "LoupeMCP", "LoupeServing", "CReadline",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSwift6
        ),
        // `loupe bench …`: measurements of Loupe itself, beside their peers. Above both the command
        // language (its commands are LoupeCommands') and the TUI (RenderBench drives the panels
        // in-process); the executable adds the `bench` group to the command tree.
        .target(
            name: "LoupeBench",
            dependencies: [
                "LoupeBase", "LoupeCommands", "LoupeApp", "LoupeKit", "LoupeStore", "LoupeTUI", "LoupeModels",
                "LoupeTensor", "LoupeProfiling", "LoupeRetrieval", "LoupeAgents", "LoupeEvals", "LoupeOTLP",
                "LoupePostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSwift6
        ),
        // The composition root: builds the session, the model library, the panels' ports and the TUI,
        // and hands the command language a TUIHost and the benches. With LoupeBench, the only module
        // that sees both LoupeApp and LoupeCommands.
        .executableTarget(
            name: "loupe",
            dependencies: [
                "LoupeCommands", "LoupeBench", "LoupeApp", "LoupeKit", "LoupeStore", "LoupeTUI", "LoupeTerminal",
                "LoupeReceiver",
            ],
            swiftSettings: strictSwift6),

        .target(
            name: "LoupeTestSupport",
            dependencies: ["LoupeBase", "LoupeTUI", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Tests/LoupeTestSupport",
            swiftSettings: strictSwift6
        ),
        .testTarget(name: "LoupeBaseTests", dependencies: ["LoupeBase"], swiftSettings: strictSwift6),
        .testTarget(
            name: "LoupeRetrievalTests", dependencies: ["CKernels", "LoupeRetrieval"], exclude: ["Fixtures"],
            swiftSettings: strictSwift6),
        .testTarget(
            name: "LoupeEvalsTests", dependencies: ["LoupeBase", "LoupeEvals", "LoupeAgents"], exclude: ["Fixtures"],
            swiftSettings: strictSwift6),
        .testTarget(name: "LoupeTensorTests", dependencies: ["LoupeTensor", "CKernels"], swiftSettings: strictSwift6),
        .testTarget(
            name: "LoupeAgentsTests", dependencies: ["LoupeBase", "LoupeAgents"], exclude: ["Fixtures"],
            swiftSettings: strictSwift6),
        .testTarget(
            name: "LoupeProfilingTests",
            dependencies: [
                "LoupeBase", "LoupeProfiling", "LoupeTensor", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "LoupeModelsTests",
            dependencies: ["CKernels", "LoupeBase", "LoupeModels", "LoupeTensor"],
            exclude: ["Fixtures"],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "LoupeTUITests", dependencies: ["LoupeBase", "LoupeTUI", "LoupeTestSupport"],
            exclude: ["__snapshots__"],
            swiftSettings: strictSwift6),
        .testTarget(
            name: "LoupeTerminalTests",
            dependencies: ["LoupeBase", "LoupeTerminal", "LoupeTUI", "CNCurses"],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "LoupeStoreTests",
            dependencies: [
                "LoupeStore", "LoupePostgres", "LoupeTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "LoupeKitTests",
            dependencies: [
                "LoupeBase", "LoupeKit", "LoupeStore", "LoupeTUI", "LoupeAgents", "LoupeEvals", "LoupeModels",
                "LoupeProfiling", "LoupeRetrieval", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "LoupeReceiverTests",
            dependencies: [
                "LoupeReceiver", "LoupeOTLP", "LoupeKit", "LoupeStore", "LoupeAgents", "LoupeBase",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2", package: "grpc-swift-nio-transport"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
            ],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "LoupeAppTests",
            dependencies: [
                "LoupeBase", "LoupeApp", "LoupeKit", "LoupeTUI", "LoupeTerminal", "LoupeStore", "LoupeTestSupport",
                "LoupeRetrieval", "LoupeAgents", "LoupeEvals", "LoupeProfiling", "LoupeModels", "LoupeTensor",
            ],
            exclude: ["__snapshots__", "Fixtures"],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "LoupeServingTests", dependencies: ["LoupeServing", "LoupeOpenAI", "LoupeBase", "LoupeModels"],
            swiftSettings: strictSwift6),
        .testTarget(
            name: "LoupeMCPTests",
            dependencies: [
                "LoupeMCP", "LoupeBase", "LoupeKit", "LoupeStore", "LoupeAgents", "LoupeEvals",
                .product(name: "MCP", package: "swift-sdk"),
            ],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "LoupeCommandsTests",
            dependencies: [
                "LoupeBase", "LoupeCommands", "LoupeApp", "LoupeKit", "LoupeStore", "LoupeRetrieval", "LoupeTUI",
                "LoupeTerminal", "LoupeAgents", "LoupeModels", "LoupeTensor", "LoupeTestSupport", "LoupePostgres",
                "LoupeServing", "LoupeBench", "loupe", .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: strictSwift6
        ),
        .testTarget(
            name: "LoupeBenchTests", dependencies: ["LoupeBench", "LoupeModels"], swiftSettings: strictSwift6),
    ]
)

// Coverage-guided fuzzing: one executable, `LoupeFuzz TARGET`, with one target per decoder
// (`scripts/fuzz` builds and runs it). It is part of this package only when `LOUPE_FUZZ=1`, so that
// it sees `package` symbols while a normal `swift build` neither builds nor resolves it. The
// sanitizer flags come from `scripts/fuzz`, so that every module is instrumented for coverage.
if Context.environment["LOUPE_FUZZ"] == "1" {
    package.targets += [
        .target(name: "CFuzzDriver", path: "Fuzz/CFuzzDriver"),
        .executableTarget(
            name: "LoupeFuzz",
            dependencies: [
                "CFuzzDriver", "LoupeBase", "LoupeAgents", "LoupeProfiling", "LoupeModels", "LoupeEvals",
                "LoupeRetrieval", "LoupeKit", "LoupeOTLP", "LoupeStore", "LoupeOpenAI",
            ],
            path: "Fuzz/LoupeFuzz", swiftSettings: strictSwift6),
    ]
}
