//! Writing a PNG of raw samples (grey, grey + alpha, RGB or RGBA; 8 or 16 bits), atomically:
//! the one PNG path of the 8-bit surface maps and the golden images. Height PNGs, with their
//! encoding in tEXt chunks, are `png16`.

use crate::fsutil::write_atomic_with;
use std::io;
use std::path::Path;

/// Write `data` (samples in image order — row 0 is the north edge — big-endian when 16-bit)
/// as a `width × height` PNG of `channels` samples per pixel.
pub fn write_png_image(path: &Path, width: u32, height: u32, channels: u32, sixteen_bit: bool, compression: png::Compression, data: &[u8]) -> io::Result<()> {
    let bytes_per_sample = if sixteen_bit { 2 } else { 1 };
    assert_eq!(data.len(), width as usize * height as usize * channels as usize * bytes_per_sample, "one sample per channel and pixel");
    let color = match channels {
        1 => png::ColorType::Grayscale,
        2 => png::ColorType::GrayscaleAlpha,
        3 => png::ColorType::Rgb,
        _ => png::ColorType::Rgba,
    };
    write_atomic_with(path, |w| {
        let mut enc = png::Encoder::new(w, width, height);
        enc.set_color(color);
        enc.set_depth(if sixteen_bit { png::BitDepth::Sixteen } else { png::BitDepth::Eight });
        enc.set_compression(compression);
        let mut writer = enc.write_header().map_err(io::Error::other)?;
        writer.write_image_data(data).map_err(io::Error::other)?;
        writer.finish().map_err(io::Error::other)
    })
}
