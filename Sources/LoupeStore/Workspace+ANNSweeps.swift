import Foundation
import GRDB

extension Workspace {
    /// Stores the sweeps of one benchmark run (Loupe's and its peers'), all or none.
    package func record(_ sweeps: [ANNSweepRecord]) throws(WorkspaceError) {
        try write { db in
            for sweep in sweeps {
                var sweep = sweep
                try sweep.insert(db)
            }
        }
    }

    /// The latest sweep of every (workload, engine), by workload and then engine.
    package func latestANNSweeps() throws(WorkspaceError) -> [ANNSweepRecord] {
        try read { db in
            try ANNSweepRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM ann_sweeps WHERE id IN
                        (SELECT MAX(id) FROM ann_sweeps GROUP BY workload, engine)
                    ORDER BY workload, engine
                    """)
        }
    }
}
