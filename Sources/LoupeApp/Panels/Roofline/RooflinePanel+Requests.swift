import LoupeKit

extension RooflinePanel {
    /// The workspace's machine profiles with their roofs and kernels; only the runs `focus`
    /// names (a trace step's forward pass) when there is one.
    package struct LoadRoofline: PortRequest {
        package var focus: RooflineFocus?

        package init(focus: RooflineFocus? = nil) { self.focus = focus }

        package func ask(_ port: RooflineBrowser) throws -> RooflineModel {
            try focus.map(port.model(focus:)) ?? port.model()
        }
    }
}
