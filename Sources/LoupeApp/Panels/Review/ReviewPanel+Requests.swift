import LoupeKit

extension ReviewPanel {
    /// The queues with their progress, and who labels.
    package struct ListQueues: PortRequest {
        package init() {}

        package func ask(_ port: ReviewBrowser) throws -> ReviewBrowser.Overview { try port.overview() }
    }

    /// The annotator's next item in a queue after `key` (their first open one when nil).
    package struct NextItem: PortRequest {
        package var queue: String
        package var after: String?
        /// Tells answers apart: only the newest item read is shown.
        package var serial: Int

        package init(queue: String, after: String? = nil, serial: Int) {
            self.queue = queue
            self.after = after
            self.serial = serial
        }

        package func ask(_ port: ReviewBrowser) throws -> ReviewBrowser.Opened {
            try port.next(queue: queue, after: after)
        }
    }

    /// One item of a queue (`[`, `]`, a disagreement opened from the calibration).
    package struct OpenItem: PortRequest {
        package var queue: String
        package var key: String
        package var serial: Int

        package init(queue: String, key: String, serial: Int) {
            self.queue = queue
            self.key = key
            self.serial = serial
        }

        package func ask(_ port: ReviewBrowser) throws -> ReviewBrowser.Opened { try port.open(queue: queue, key: key) }
    }

    /// Labels an item on one criterion (its own transaction, origin `review`).
    package struct LabelItem: PortRequest {
        package var queue: String
        package var key: String
        package var criterion: String
        package var value: String
        package var serial: Int

        package init(queue: String, key: String, criterion: String, value: String, serial: Int) {
            self.queue = queue
            self.key = key
            self.criterion = criterion
            self.value = value
            self.serial = serial
        }

        package func ask(_ port: ReviewBrowser) throws -> ReviewBrowser.Opened {
            try port.label(queue: queue, key: key, criterion: criterion, text: value)
        }
    }

    /// Skips an item (it comes back after the rest) and opens the next.
    package struct SkipItem: PortRequest {
        package var queue: String
        package var key: String
        package var serial: Int

        package init(queue: String, key: String, serial: Int) {
            self.queue = queue
            self.key = key
            self.serial = serial
        }

        package func ask(_ port: ReviewBrowser) throws -> ReviewBrowser.Opened { try port.skip(queue: queue, key: key) }
    }

    /// Takes back the annotator's last label in the queue and opens the item it was on.
    package struct UndoLabel: PortRequest {
        package var queue: String
        /// The item on show, kept open when there is nothing to undo.
        package var key: String?
        package var serial: Int

        package init(queue: String, key: String?, serial: Int) {
            self.queue = queue
            self.key = key
            self.serial = serial
        }

        package func ask(_ port: ReviewBrowser) throws -> ReviewBrowser.Opened { try port.undo(queue: queue, at: key) }
    }

    /// A run's scorer against the queue's labels (nil scorer: the run's first).
    package struct Calibrate: PortRequest {
        package var queue: String
        package var scorer: String?

        package init(queue: String, scorer: String? = nil) {
            self.queue = queue
            self.scorer = scorer
        }

        package func ask(_ port: ReviewBrowser) throws -> ReviewBrowser.Calibration {
            try port.calibration(queue: queue, scorer: scorer)
        }
    }
}
