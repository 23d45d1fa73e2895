/// Why a tool call was refused or failed.
///
/// The first two are protocol errors (JSON-RPC "method not found"/"invalid params"); a tool
/// that ran and could not do its work (no such trace) answers a result marked `isError`, so the
/// agent reads the reason as it would read a command's message.
package enum ToolCallError: Error, Hashable, Sendable, CustomStringConvertible {
    case unknownTool(String)
    case invalidArguments(String, String)
    case failed(String)

    package var description: String {
        switch self {
        case .unknownTool(let name): "no tool named '\(name.prefix(80))' (tools/list names them)"
        case .invalidArguments(let tool, let message): "\(tool): \(message)"
        case .failed(let message): message
        }
    }
}
