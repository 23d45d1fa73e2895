import Foundation
import GRDB

extension Workspace {
    package var leaseTables: LeaseTables { LeaseTables(self) }
}
