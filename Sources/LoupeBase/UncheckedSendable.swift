/// A value handed to other threads whose safety the compiler cannot prove: Loupe's one
/// `@unchecked Sendable` escape hatch, so that each use is easy to find and to justify.
///
/// It is safe only under the rule every use follows: the threads that share it touch disjoint
/// parts of what it points to (workers writing their own rows of one buffer, heads of one
/// attention output), or one thread uses it at a time and hands it over through a barrier
/// (a `concurrentPerform` that returns, a queue's `sync`). Each use says which in a comment.
package struct UncheckedSendable<Value>: @unchecked Sendable {
    package var value: Value

    package init(_ value: Value) { self.value = value }
}
