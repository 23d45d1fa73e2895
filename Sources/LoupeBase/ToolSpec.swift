/// A tool as a model sees it: a name, what it does, and its arguments' JSON schema. Shared by the
/// agents that offer tools (LoupeAgents) and the grammar that holds a local model's calls to
/// them (LoupeModels), which cannot see each other.
package struct ToolSpec: Hashable, Sendable {
    package var name: String
    package var description: String
    package var parameters: JSONValue

    package init(name: String, description: String, parameters: JSONValue) {
        self.name = name
        self.description = description
        self.parameters = parameters
    }
}
