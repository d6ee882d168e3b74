//! Reading golden PNGs (with the `png` crate: their encoding numbers live in tEXt chunks,
//! which `image` does not expose) and drawing the pictures of a failed check (with `image`): a diff heat map and an
//! expected | actual | difference side-by-side image (8-bit RGB PNGs, one pixel per post,
//! north up like every trnbake image).

use super::compare::{Comparison, Raster};
use image::{imageops, Rgb, RgbImage};
use std::io;
use std::path::Path;
use trnbake_raster::writers::png_image::{write_png_image, PngEffort};

/// A decoded golden image and its tEXt chunks (trnbake writes its encoding numbers there).
#[derive(Debug)]
pub struct DecodedPng {
    pub raster: Raster,
    pub text: Vec<(String, String)>,
}

impl DecodedPng {
    pub fn text(&self, key: &str) -> Option<&str> {
        self.text.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// Read a greyscale, grey+alpha, RGB or RGBA PNG of 8 or 16 bits per sample, as stored (no
/// gamma or palette transformations: the samples are data, not colours).
pub fn read_png(path: &Path) -> Result<DecodedPng, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bad = |e: &dyn std::fmt::Display| format!("{} is not a readable PNG: {e}", path.display());
    let mut dec = png::Decoder::new(io::Cursor::new(&bytes));
    dec.set_transformations(png::Transformations::IDENTITY);
    let mut reader = dec.read_info().map_err(|e| bad(&e))?;
    let info = reader.info();
    let channels = match info.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Indexed => return Err(format!("{} is a palette PNG; goldens store samples (grey or RGB)", path.display())),
    };
    let bits: u8 = match info.bit_depth {
        png::BitDepth::Eight => 8,
        png::BitDepth::Sixteen => 16,
        other => return Err(format!("{} has {other:?} bits per sample; goldens use 8 or 16", path.display())),
    };
    let text = info.uncompressed_latin1_text.iter().map(|t| (t.keyword.clone(), t.text.clone())).collect();
    let mut buf = vec![0; reader.output_buffer_size().ok_or_else(|| bad(&"image too large"))?];
    let frame = reader.next_frame(&mut buf).map_err(|e| bad(&e))?;
    let data = &buf[..frame.buffer_size()];
    let samples = if bits == 16 {
        data.chunks_exact(2).map(|b| i32::from(u16::from_be_bytes([b[0], b[1]]))).collect()
    } else {
        data.iter().map(|&b| i32::from(b)).collect()
    };
    Ok(DecodedPng { raster: Raster { width: frame.width, height: frame.height, channels, bits, samples }, text })
}

/// Write a [`Raster`] (grey, grey + alpha, RGB or RGBA; 8 or 16 bits) as a PNG, atomically.
pub fn write_raster_png(path: &Path, r: &Raster) -> io::Result<()> {
    let data: Vec<u8> = if r.bits == 16 {
        r.samples.iter().flat_map(|&v| (v.clamp(0, 65535) as u16).to_be_bytes()).collect()
    } else {
        r.samples.iter().map(|&v| v.clamp(0, 255) as u8).collect()
    };
    write_png_image(path, r.width, r.height, r.channels, r.bits == 16, PngEffort::Balanced, &data)
}

/// Write an 8-bit RGB PNG atomically.
pub fn write_rgb_png(path: &Path, width: u32, height: u32, rgb: &[u8]) -> io::Result<()> {
    write_png_image(path, width, height, 3, false, PngEffort::Balanced, rgb)
}

/// Colour of a post within the tolerance but not identical.
pub const WITHIN_TOLERANCE: [u8; 3] = [0, 128, 255];

/// One RGB pixel per post of an image, for display: 1- and 2-channel images (heights, masks)
/// as grey stretched over `[lo, hi]` of channel 0, 3- and 4-channel ones as their colour.
fn display_rgb(r: &Raster, lo: i32, hi: i32) -> Vec<u8> {
    let ch = r.channels as usize;
    let mut out = Vec::with_capacity(r.posts() * 3);
    for px in r.samples.chunks_exact(ch) {
        if ch >= 3 {
            let max = r.max_value();
            out.extend(px[..3].iter().map(|&v| (i64::from(v.clamp(0, max)) * 255 / i64::from(max)) as u8));
        } else {
            let g = if hi > lo { ((i64::from(px[0].clamp(lo, hi) - lo) * 255) / i64::from(hi - lo)) as u8 } else { 128 };
            out.extend([g, g, g]);
        }
    }
    out
}

/// The display range of channel 0 over both images, within the image's range.
fn common_range(a: &Raster, b: &Raster) -> (i32, i32) {
    let ch = a.channels as usize;
    let it = a.samples.iter().step_by(ch).chain(b.samples.iter().step_by(ch)).map(|&v| v.clamp(0, a.max_value()));
    it.fold((i32::MAX, i32::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

/// The heat map of a comparison, one pixel per post: posts that did not change are the
/// expected image, dimmed to dark grey (for orientation); changed posts are never grey —
/// blue within the tolerance, and beyond it yellow (just over) to red (the largest
/// difference) on a log scale. So the coloured pixels are exactly the changed posts.
pub fn heat_map(expected: &Raster, actual: &Raster, cmp: &Comparison, tolerance: u64) -> Vec<u8> {
    let (lo, hi) = common_range(expected, actual);
    let background = display_rgb(expected, lo, hi);
    let base = tolerance.max(1) as f64;
    let span = (cmp.max_diff as f64 / base).ln();
    let mut out = Vec::with_capacity(cmp.per_post.len() * 3);
    for (&d, bg) in cmp.per_post.iter().zip(background.chunks_exact(3)) {
        let d = u64::from(d);
        if d == 0 {
            // Dark grey, R = G = B, at most 80 of 255.
            let g = (16 + (u32::from(bg[0]) + u32::from(bg[1]) + u32::from(bg[2])) / 12) as u8;
            out.extend([g, g, g]);
        } else if d <= tolerance {
            out.extend(WITHIN_TOLERANCE);
        } else {
            let t = if span > 0.0 { ((d as f64 / base).ln() / span).clamp(0.0, 1.0) } else { 1.0 };
            out.extend([255, (255.0 * (1.0 - t)).round() as u8, 0]);
        }
    }
    out
}

/// A failing map's pictures as PNG files in memory (8-bit RGB, one pixel per post, north up),
/// for reports that embed them: the expected and actual maps on one display range, and the
/// heat map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pictures {
    pub width: u32,
    pub height: u32,
    pub expected: Vec<u8>,
    pub actual: Vec<u8>,
    pub diff: Vec<u8>,
}

impl Pictures {
    pub fn new(expected: &Raster, actual: &Raster, heat: &[u8]) -> io::Result<Pictures> {
        let (lo, hi) = common_range(expected, actual);
        let (w, h) = (expected.width, expected.height);
        Ok(Pictures {
            width: w,
            height: h,
            expected: encode_rgb_png(w, h, &display_rgb(expected, lo, hi))?,
            actual: encode_rgb_png(w, h, &display_rgb(actual, lo, hi))?,
            diff: encode_rgb_png(w, h, heat)?,
        })
    }
}

/// An 8-bit RGB PNG in memory.
pub fn encode_rgb_png(width: u32, height: u32, rgb: &[u8]) -> io::Result<Vec<u8>> {
    use image::codecs::png::{CompressionType, FilterType, PngEncoder};
    use image::{ExtendedColorType, ImageEncoder};
    let mut out = Vec::new();
    PngEncoder::new_with_quality(&mut out, CompressionType::Default, FilterType::Adaptive)
        .write_image(rgb, width, height, ExtendedColorType::Rgb8)
        .map_err(io::Error::other)?;
    Ok(out)
}

/// Gap between the panels of [`side_by_side`], in pixels.
pub const PANEL_GAP: u32 = 4;

/// Expected | actual | heat map, side by side, the first two on one display range so the
/// same height is the same grey in both. Returns (width, height, RGB).
pub fn side_by_side(expected: &Raster, actual: &Raster, heat: &[u8]) -> (u32, u32, Vec<u8>) {
    let (lo, hi) = common_range(expected, actual);
    let (w, h) = (expected.width, expected.height);
    let mut canvas = RgbImage::from_pixel(3 * w + 2 * PANEL_GAP, h, Rgb([255, 255, 255]));
    for (k, panel) in [display_rgb(expected, lo, hi), display_rgb(actual, lo, hi), heat.to_vec()].into_iter().enumerate() {
        let panel = RgbImage::from_raw(w, h, panel).expect("one RGB pixel per post");
        imageops::replace(&mut canvas, &panel, i64::from(k as u32 * (w + PANEL_GAP)), 0);
    }
    (canvas.width(), canvas.height(), canvas.into_raw())
}

#[cfg(test)]
mod tests {
    use super::super::compare::compare;
    use super::*;

    #[test]
    fn heat_map_colours_exactly_the_changed_posts() {
        let e = Raster { width: 4, height: 1, channels: 1, bits: 16, samples: vec![0, 100, 200, 300] };
        let a = Raster { samples: vec![0, 101, 260, 1300], ..e.clone() };
        let c = compare(&e, &a, 1);
        let h = heat_map(&e, &a, &c, 1);
        let px: Vec<[u8; 3]> = h.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
        assert!(px[0][0] == px[0][1] && px[0][1] == px[0][2] && px[0][0] <= 80, "unchanged is dark grey: {:?}", px[0]);
        assert_eq!(px[1], WITHIN_TOLERANCE);
        assert_eq!(px[3], [255, 0, 0], "the largest difference is red");
        assert!(px[2][0] == 255 && px[2][1] > 0 && px[2][2] == 0, "over the tolerance: yellow to red: {:?}", px[2]);
    }

    #[test]
    fn png_round_trip_and_side_by_side() {
        let dir = std::env::temp_dir().join(format!("trnbake-golden-image-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = Raster { width: 3, height: 2, channels: 1, bits: 16, samples: vec![0, 1, 2, 3, 4, 5] };
        let heat = vec![9u8; 18];
        let (w, h, rgb) = side_by_side(&e, &e, &heat);
        assert_eq!((w, h), (9 + 2 * PANEL_GAP, 2));
        let p = dir.join("s.png");
        write_rgb_png(&p, w, h, &rgb).unwrap();
        let back = read_png(&p).unwrap().raster;
        assert_eq!((back.width, back.height, back.channels, back.bits), (w, h, 3, 8));
        assert_eq!(back.samples.iter().map(|&v| v as u8).collect::<Vec<_>>(), rgb);
        // The heat map panel sits last, after two gaps.
        let last = ((w - 3) * 3) as usize;
        assert_eq!(&rgb[last..last + 9], &[9; 9]);
        assert!(read_png(&dir.join("missing.png")).unwrap_err().contains("missing.png"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
