//! The one error type of the raster crate: what was being done, and why it failed.
//!
//! Readers and writers report the file they were working on and the problem in its own
//! terms (`x.tif: 4097x4097 Float32 needs 67 MB but the file holds 64 bytes`); a lower-level
//! cause (an I/O error, a TIFF or PNG decoder error) is kept as the [`std::error::Error::source`],
//! so `{:#}` with anyhow, or walking `source()`, prints the whole chain.

use std::error::Error as StdError;
use std::io;

/// An error of a raster reader or writer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error with nothing to add.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A grid that cannot hold heights.
    #[error(transparent)]
    Grid(#[from] trnbake_swg::grid::GridError),
    /// Input or a request that cannot be honoured, in words.
    #[error("{0}")]
    Invalid(String),
    /// What was being done, and the cause.
    #[error("{context}")]
    Context {
        context: String,
        #[source]
        source: Box<dyn StdError + Send + Sync + 'static>,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Adds what was being done to a failure (`cannot open x.tif`), keeping the cause as the source.
pub trait Context<T> {
    fn context(self, context: impl Into<String>) -> Result<T>;
    fn with_context(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: StdError + Send + Sync + 'static> Context<T> for std::result::Result<T, E> {
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.map_err(|e| Error::Context { context: context.into(), source: Box::new(e) })
    }
    fn with_context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::Context { context: context(), source: Box::new(e) })
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.ok_or_else(|| Error::Invalid(context.into()))
    }
    fn with_context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.ok_or_else(|| Error::Invalid(context()))
    }
}

/// Returns early with [`Error::Invalid`] and a formatted message.
#[macro_export]
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::Error::Invalid(format!($($arg)*)).into())
    };
}
