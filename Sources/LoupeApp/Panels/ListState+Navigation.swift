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

extension PanelAction {
    /// A cursor over a single column of `rows` rows moved by the shared list keys: `j`/`k` (and
    /// `l`/`h`) one row, the page keys `page` rows, `g`/`G` the first and last, within the rows;
    /// the cursor as it was for any other action. For the views that keep a plain row index.
    func moved(_ cursor: Int, rows: Int, page: Int = 10) -> Int {
        let last = max(0, rows - 1)
        switch self {
        case .down, .right: return min(last, cursor + 1)
        case .up, .left: return max(0, cursor - 1)
        case .pageDown: return min(last, cursor + page)
        case .pageUp: return max(0, cursor - page)
        case .top: return 0
        case .bottom: return last
        case .open, .specific: return cursor
        }
    }
}
