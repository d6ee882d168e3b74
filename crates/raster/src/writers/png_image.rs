//! Writing a PNG of raw samples (grey, grey + alpha, RGB or RGBA; 8 or 16 bits) through the
//! `image` crate's encoder, atomically: the one PNG path of the 8-bit surface maps, the
//! preview, golden images and the check's pictures. Height PNGs, which stream a full planet
//! row by row and carry their encoding in tEXt chunks, are `png16`.

use crate::fsutil::write_atomic_with;
use image::codecs::png::{CompressionType, FilterType, PngEncoder};
use image::{ExtendedColorType, ImageEncoder};
use std::borrow::Cow;
use std::io;
use std::path::Path;

/// How hard the encoder deflates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PngEffort {
    /// Noisy maps (normals, the preview): a little larger, most of the write time saved.
    Fast,
    /// Small images kept in a repository (goldens, check pictures).
    Balanced,
}

/// Write `data` (samples in image order — row 0 is the north edge — big-endian when 16-bit,
/// as PNG stores them) as a `width × height` PNG of `channels` samples per pixel.
pub fn write_png_image(path: &Path, width: u32, height: u32, channels: u32, sixteen_bit: bool, effort: PngEffort, data: &[u8]) -> io::Result<()> {
    let bytes_per_sample = if sixteen_bit { 2 } else { 1 };
    assert_eq!(data.len(), width as usize * height as usize * channels as usize * bytes_per_sample, "one sample per channel and pixel");
    let color = match (channels, sixteen_bit) {
        (1, false) => ExtendedColorType::L8,
        (2, false) => ExtendedColorType::La8,
        (3, false) => ExtendedColorType::Rgb8,
        (_, false) => ExtendedColorType::Rgba8,
        (1, true) => ExtendedColorType::L16,
        (2, true) => ExtendedColorType::La16,
        (3, true) => ExtendedColorType::Rgb16,
        (_, true) => ExtendedColorType::Rgba16,
    };
    // `image` takes 16-bit samples in native byte order and writes them big-endian.
    let samples: Cow<[u8]> =
        if sixteen_bit { Cow::Owned(data.chunks_exact(2).flat_map(|b| u16::from_be_bytes([b[0], b[1]]).to_ne_bytes()).collect()) } else { Cow::Borrowed(data) };
    let compression = match effort {
        PngEffort::Fast => CompressionType::Fast,
        PngEffort::Balanced => CompressionType::Default,
    };
    write_atomic_with(path, |w| {
        PngEncoder::new_with_quality(w, compression, FilterType::Adaptive).write_image(&samples, width, height, color).map_err(io::Error::other)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_and_eight_bit_samples_read_back_as_written() {
        let dir = std::env::temp_dir().join(format!("trnbake-png-image-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // 3×2 grey 16-bit, big-endian in, north row first.
        let grey: Vec<u16> = vec![0, 1, 256, 65535, 4660, 43981];
        let be: Vec<u8> = grey.iter().flat_map(|v| v.to_be_bytes()).collect();
        let p16 = dir.join("g16.png");
        write_png_image(&p16, 3, 2, 1, true, PngEffort::Balanced, &be).unwrap();
        let img = image::open(&p16).unwrap().into_luma16();
        assert_eq!(img.as_raw(), &grey);
        // 2×2 RGBA 8-bit.
        let rgba: Vec<u8> = (0..16).map(|i| i * 13).collect();
        let p8 = dir.join("c8.png");
        write_png_image(&p8, 2, 2, 4, false, PngEffort::Fast, &rgba).unwrap();
        assert_eq!(image::open(&p8).unwrap().into_rgba8().as_raw(), &rgba);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
