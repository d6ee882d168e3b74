//! The writers: one module per file format, and [`set`], which writes a chosen set of formats
//! (and engine presets, tiles) from one height source.

pub mod categories;
pub mod geotiff;
pub mod png16;
pub mod png8;
pub mod png_image;
pub mod preset;
pub mod raw;
pub mod set;
pub mod ter;
mod tiff_ifd;
pub mod vrt;
