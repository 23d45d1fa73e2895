import LoupeKit

extension RooflinePanel {
    /// The workspace's machine profiles with their roofs and kernels.
    package struct LoadRoofline: PortRequest {
        package init() {}

        package func ask(_ port: RooflineBrowser) throws -> RooflineModel { try port.model() }
    }
}
