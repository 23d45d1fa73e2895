import Foundation
import Synchronization

/// The process's standard output.
package struct StandardOutputSink: OutputSink {
    package init() {}
    package func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
