/// A non-owning view of an 8-bit luma plane: ZBar reads it in place, whatever the row padding.
///
/// Valid only inside the closure that lends it (see `VideoFrameMapping.withLumaPlane`).
public struct LumaImage {
    public let base: UnsafeRawPointer
    public let width: Int
    public let height: Int
    /// Bytes from one row to the next (at least `width`; GStreamer pads GRAY8 rows to a multiple of 4).
    public let stride: Int

    public init(base: UnsafeRawPointer, width: Int, height: Int, stride: Int) {
        precondition(width > 0 && height > 0 && stride >= width, "bad luma geometry")
        self.base = base
        self.width = width
        self.height = height
        self.stride = stride
    }
}
