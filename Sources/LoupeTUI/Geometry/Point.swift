/// A cell position, `x` to the right and `y` down from the top-left corner.
package struct Point: Hashable, Sendable {
    package var x: Int
    package var y: Int

    package init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }
}
