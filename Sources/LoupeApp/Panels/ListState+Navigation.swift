import LoupeTUI

extension ListState {
    /// The shared list keys: `j`/`k` one row, `ctrl+d`/`ctrl+u` a page of `page` rows, `g`/`G` the
    /// first and last row, within `0..<count`. Every panel's lists move through here.
    ///
    /// - Returns: false for an action that is not list navigation (the caller handles it).
    @discardableResult
    mutating func navigate(_ action: PanelAction, count: Int, page: Int = 10) -> Bool {
        switch action {
        case .down: move(by: 1, count: count)
        case .up: move(by: -1, count: count)
        case .pageDown: move(by: max(1, page), count: count)
        case .pageUp: move(by: -max(1, page), count: count)
        case .top: jump(toEnd: false, count: count)
        case .bottom: jump(toEnd: true, count: count)
        case .left, .right, .open, .specific: return false
        }
        return true
    }
}
