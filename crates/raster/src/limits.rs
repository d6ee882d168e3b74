//! The one place the readers' size limits live (image-tiff's `Limits`): what a hostile or
//! broken file may make them allocate. A caller can lower them through
//! [`crate::readers::ImportOptions::limits`].

/// Size limits of the readers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest decoded grid, in bytes of Float32 samples (posts × 4). Checked against the
    /// declared size before anything is allocated.
    pub decoded_bytes: u64,
}

impl Limits {
    /// A 32769² Float32 grid (a 16 km planet at 0.5 m), 4.3 GB.
    pub const DEFAULT: Limits = Limits { decoded_bytes: 32769 * 32769 * 4 };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
