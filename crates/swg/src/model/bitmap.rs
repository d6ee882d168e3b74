//! TGA loading for bitmap families (swg-trn §3.6, FBIT §5.6) and colour ramps
//! (swg-trn §3.7).
//!
//! The real files are type 3 (uncompressed 8-bit greyscale, bottom-left
//! origin) and type 2 (24/32-bit colour). We also accept the RLE variants and
//! either origin, because modders re-save these files with other tools. The
//! pixels are decoded here (uncompressed and RLE, four origins: a few dozen
//! lines, so the crate a server emulator links needs no image library); the
//! tests check the decoder against the `image` crate's on random files. The
//! pixel cap and the data length are checked against the header before
//! anything is allocated, errors name the file, and it never panics.

use std::path::{Path, PathBuf};

/// Largest accepted width × height (2^28 pixels, 256 MiB of greyscale).
pub const MAX_PIXELS: u64 = 1 << 28;

/// TGA header size (fixed by the format).
const HEADER_LEN: usize = 18;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BitmapError {
    #[error("cannot read bitmap {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A parse error, tagged with the file it came from (`load_tga`).
    #[error("invalid bitmap {}", path.display())]
    InFile {
        path: PathBuf,
        #[source]
        source: Box<BitmapError>,
    },
    #[error("unsupported TGA image type {image_type} (expected {expected})")]
    UnsupportedImageType { image_type: u8, expected: &'static str },
    #[error("unsupported TGA: {bits} bits per pixel for image type {image_type} (expected {expected})")]
    UnsupportedBitsPerPixel { image_type: u8, bits: u8, expected: &'static str },
    #[error("unsupported TGA: colour-mapped (colour map type {color_map_type}); SWG bitmaps have no colour map")]
    ColorMapped { color_map_type: u8 },
    #[error("truncated TGA: {what} needs {needed} bytes at offset {offset}, but the data has {len}")]
    Truncated { what: &'static str, offset: usize, needed: usize, len: usize },
    #[error("TGA size {width}x{height} rejected: {reason}")]
    HostileSize { width: u32, height: u32, reason: &'static str },
}

/// A greyscale bitmap with row 0 = the SOUTH (bottom) row, as swg-trn
/// §3.6/§5.6 define.
#[derive(Clone, Debug, PartialEq)]
pub struct Bitmap {
    pub width: u32,
    pub height: u32,
    /// Row-major, row 0 = bottom row.
    pub pixels: Vec<u8>,
}

/// The fields of the 18-byte TGA header that we use.
#[derive(Clone, Copy, Debug)]
struct TgaHeader {
    image_type: u8,
    width: u32,
    height: u32,
    bits: u8,
    /// Offset of the pixel data (after the id field).
    data_offset: usize,
}

fn truncated(what: &'static str, offset: usize, needed: usize, len: usize) -> BitmapError {
    BitmapError::Truncated { what, offset, needed, len }
}

/// Parses and validates the header against the caller's accepted image types
/// (uncompressed, RLE) and bits per pixel.
fn parse_header(bytes: &[u8], types: [u8; 2], types_text: &'static str, bits_ok: &[u8], bits_text: &'static str) -> Result<TgaHeader, BitmapError> {
    if bytes.len() < HEADER_LEN {
        return Err(truncated("header", 0, HEADER_LEN, bytes.len()));
    }
    let u16le = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]) as u32;
    let id_len = bytes[0] as usize;
    let color_map_type = bytes[1];
    let image_type = bytes[2];
    let width = u16le(12);
    let height = u16le(14);
    let bits = bytes[16];

    if !types.contains(&image_type) {
        return Err(BitmapError::UnsupportedImageType { image_type, expected: types_text });
    }
    if color_map_type != 0 {
        return Err(BitmapError::ColorMapped { color_map_type });
    }
    if !bits_ok.contains(&bits) {
        return Err(BitmapError::UnsupportedBitsPerPixel { image_type, bits, expected: bits_text });
    }
    if width == 0 || height == 0 {
        return Err(BitmapError::HostileSize { width, height, reason: "empty image" });
    }
    if width as u64 * height as u64 > MAX_PIXELS {
        return Err(BitmapError::HostileSize { width, height, reason: "more than 2^28 pixels" });
    }
    let data_offset = HEADER_LEN + id_len;
    if bytes.len() < data_offset {
        return Err(truncated("image id field", HEADER_LEN, id_len, bytes.len()));
    }
    Ok(TgaHeader { image_type, width, height, bits, data_offset })
}

/// The pixel data must hold at least this many bytes: all of it when uncompressed, and for RLE
/// at least one packet (1 + bpp bytes, at most 128 pixels) per 128 pixels. Checked before the
/// decoder allocates, so a hostile header with little data is a clear error, not a 256 MiB buffer.
fn check_pixel_data(bytes: &[u8], h: &TgaHeader, rle: bool) -> Result<(), BitmapError> {
    let bpp = (h.bits / 8) as usize;
    let count = h.width as usize * h.height as usize; // ≤ 2^28, checked
    let avail = bytes.len() - h.data_offset;
    if !rle && avail < count * bpp {
        return Err(truncated("pixel data", h.data_offset, count * bpp, bytes.len()));
    }
    if rle && (avail / (1 + bpp)).saturating_mul(128) < count {
        return Err(truncated("RLE pixel data", h.data_offset, count.div_ceil(128) * (1 + bpp), bytes.len()));
    }
    Ok(())
}

/// Decodes the pixel data after [`parse_header`] and [`check_pixel_data`] accepted the header:
/// uncompressed or RLE packets (a packet may cross rows; one that runs past the last pixel is
/// clipped), any of the four origins (descriptor bits 4 and 5). Returns `bits / 8` bytes a pixel
/// in the file's channel order (B, G, R(, A) for colour), rows bottom first (swg-trn §3.6), each
/// left to right. The attribute-bit count is not read: re-saved SWG bitmaps carry arbitrary
/// values there while the pixel bytes are the same.
fn decode(bytes: &[u8], h: &TgaHeader) -> Result<Vec<u8>, BitmapError> {
    let bpp = (h.bits / 8) as usize;
    let (w, rows) = (h.width as usize, h.height as usize);
    let len = w * rows * bpp; // ≤ 2^28 · 4, checked by parse_header
    let data = &bytes[h.data_offset..];
    let stored = if h.image_type >= 9 {
        let mut out = Vec::with_capacity(len);
        let mut at = 0usize;
        while out.len() < len {
            let eof = || truncated("RLE pixel data", h.data_offset, data.len() + 1, bytes.len());
            let head = *data.get(at).ok_or_else(eof)?;
            at += 1;
            let n = (head & 0x7f) as usize + 1;
            if head & 0x80 != 0 {
                let px = data.get(at..at + bpp).ok_or_else(eof)?;
                at += bpp;
                for _ in 0..n.min((len - out.len()) / bpp) {
                    out.extend_from_slice(px);
                }
            } else {
                let run = data.get(at..at + n * bpp).ok_or_else(eof)?;
                at += n * bpp;
                out.extend_from_slice(&run[..run.len().min(len - out.len())]);
            }
        }
        out
    } else {
        data[..len].to_vec() // length checked by check_pixel_data
    };
    let descriptor = bytes[17];
    let top_first = descriptor & 0x20 != 0;
    let right_to_left = descriptor & 0x10 != 0;
    let row_len = w * bpp;
    let mut out = Vec::with_capacity(len);
    for r in 0..rows {
        let src = if top_first { rows - 1 - r } else { r };
        let row = &stored[src * row_len..(src + 1) * row_len];
        if right_to_left {
            row.chunks_exact(bpp).rev().for_each(|px| out.extend_from_slice(px));
        } else {
            out.extend_from_slice(row);
        }
    }
    Ok(out)
}

impl Bitmap {
    /// Decodes an 8-bit greyscale TGA: type 3, or type 11 (RLE). Honours the
    /// descriptor's origin bits so that row 0 is always the bottom row
    /// (swg-trn §3.6); rejects colour-mapped and colour images.
    pub fn from_tga_bytes(bytes: &[u8]) -> Result<Self, BitmapError> {
        let h = parse_header(bytes, [3, 11], "3 (greyscale) or 11 (RLE greyscale)", &[8], "8")?;
        check_pixel_data(bytes, &h, h.image_type == 11)?;
        Ok(Bitmap { width: h.width, height: h.height, pixels: decode(bytes, &h)? })
    }

    /// Reads and decodes a greyscale TGA file.
    pub fn load_tga(path: &Path) -> Result<Self, BitmapError> {
        let bytes = std::fs::read(path).map_err(|source| BitmapError::Io { path: path.to_path_buf(), source })?;
        Self::from_tga_bytes(&bytes).map_err(|e| BitmapError::InFile { path: path.to_path_buf(), source: Box::new(e) })
    }

    /// Pixel at column `col`, row `row_from_bottom` (row 0 = south edge,
    /// swg-trn §3.6). Panics when out of range, like slice indexing.
    #[inline]
    pub fn pixel(&self, col: u32, row_from_bottom: u32) -> u8 {
        assert!(col < self.width && row_from_bottom < self.height, "pixel out of range");
        self.pixels[row_from_bottom as usize * self.width as usize + col as usize]
    }

    /// The FBIT bilinear sample of swg-trn §5.6 steps 1–2, given u, v in image
    /// units; returns B in [0, 1]. f32, no `mul_add`, the spec's operation order.
    ///
    /// The spec clamps only the upper end (u ≤ W − 1, v ≤ H − 1); we also clamp
    /// below at 0 (and map NaN to 0) so rounding just outside the layer extent
    /// cannot index out of bounds. i1/j1 are clamped to the image, unlike CORE3.
    pub fn sample_bilinear(&self, u: f32, v: f32) -> f32 {
        if self.width == 0 || self.height == 0 {
            return 0.0;
        }
        let wm1 = (self.width - 1) as f32;
        let hm1 = (self.height - 1) as f32;
        let u = if u > wm1 { wm1 } else { u };
        let v = if v > hm1 { hm1 } else { v };
        let u = if u >= 0.0 { u } else { 0.0 };
        let v = if v >= 0.0 { v } else { 0.0 };
        let i0f = u.floor();
        let j0f = v.floor();
        let i0 = i0f as u32;
        let j0 = j0f as u32;
        let i1 = (i0 + 1).min(self.width - 1);
        let j1 = (j0 + 1).min(self.height - 1);
        let fu = u - i0f;
        let fv = v - j0f;
        let p00 = self.pixel(i0, j0) as f32;
        let p10 = self.pixel(i1, j0) as f32;
        let p01 = self.pixel(i0, j1) as f32;
        let p11 = self.pixel(i1, j1) as f32;
        ((1.0 - fv) * (1.0 - fu) * p00 + (1.0 - fv) * fu * p10 + fv * (1.0 - fu) * p01 + fv * fu * p11) / 255.0
    }
}

/// Loads a 24/32-bit colour TGA (type 2, or type 10 RLE) colour ramp
/// (swg-trn §3.7) and returns the RGB of its bottom row, left to right.
/// TGA stores pixels as B, G, R(, A); alpha is dropped.
pub fn load_color_ramp_tga(bytes: &[u8]) -> Result<Vec<[u8; 3]>, BitmapError> {
    let h = parse_header(bytes, [2, 10], "2 (true colour) or 10 (RLE true colour)", &[24, 32], "24 or 32")?;
    check_pixel_data(bytes, &h, h.image_type == 10)?;
    let bpp = (h.bits / 8) as usize;
    let pixels = decode(bytes, &h)?;
    // Row 0 of the decoded pixels is the bottom row; TGA stores B, G, R(, A).
    Ok(pixels[..h.width as usize * bpp].chunks_exact(bpp).map(|p| [p[2], p[1], p[0]]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a TGA: header, optional id field, pixel payload as given.
    fn tga(image_type: u8, w: u16, h: u16, bits: u8, descriptor: u8, id: &[u8], data: &[u8]) -> Vec<u8> {
        let mut v = vec![id.len() as u8, 0, image_type, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        v.extend_from_slice(&w.to_le_bytes());
        v.extend_from_slice(&h.to_le_bytes());
        v.push(bits);
        v.push(descriptor);
        v.extend_from_slice(id);
        v.extend_from_slice(data);
        v
    }

    /// 3×2 image, bottom row [10, 20, 30], top row [40, 50, 60].
    fn bottom_up() -> Vec<u8> {
        tga(3, 3, 2, 8, 0x08, &[], &[10, 20, 30, 40, 50, 60])
    }

    #[test]
    fn origins_agree() {
        let a = Bitmap::from_tga_bytes(&bottom_up()).unwrap();
        // Top-left origin: top row stored first; with an id field to skip.
        let b = Bitmap::from_tga_bytes(&tga(3, 3, 2, 8, 0x28, b"hello", &[40, 50, 60, 10, 20, 30])).unwrap();
        // Bottom-right origin: rows bottom-up, each right to left.
        let c = Bitmap::from_tga_bytes(&tga(3, 3, 2, 8, 0x18, &[], &[30, 20, 10, 60, 50, 40])).unwrap();
        // Top-right origin.
        let d = Bitmap::from_tga_bytes(&tga(3, 3, 2, 8, 0x38, &[], &[60, 50, 40, 30, 20, 10])).unwrap();
        assert_eq!((a.width, a.height), (3, 2));
        assert_eq!(a.pixel(0, 0), 10);
        assert_eq!(a.pixel(2, 0), 30);
        assert_eq!(a.pixel(0, 1), 40);
        assert_eq!(a.pixel(2, 1), 60);
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(a, d);
    }

    #[test]
    fn trailing_footer_is_ignored() {
        let mut v = bottom_up();
        v.extend_from_slice(&[0u8; 8]);
        v.extend_from_slice(b"TRUEVISION-XFILE.\0");
        assert_eq!(Bitmap::from_tga_bytes(&v).unwrap(), Bitmap::from_tga_bytes(&bottom_up()).unwrap());
    }

    #[test]
    fn rle_greyscale() {
        // 4×2: bottom row [7,7,7,1], top row [2,3,9,9]; packets cross the row.
        let data = [0x82, 7, 0x01, 1, 2, 0x00, 3, 0x81, 9];
        let a = Bitmap::from_tga_bytes(&tga(11, 4, 2, 8, 0x08, &[], &data)).unwrap();
        assert_eq!(a.pixels, vec![7, 7, 7, 1, 2, 3, 9, 9]);
        // Top origin flips rows.
        let b = Bitmap::from_tga_bytes(&tga(11, 4, 2, 8, 0x28, &[], &data)).unwrap();
        assert_eq!(b.pixels, vec![2, 3, 9, 9, 7, 7, 7, 1]);
        // A run longer than the image is clipped.
        let c = Bitmap::from_tga_bytes(&tga(11, 2, 2, 8, 0, &[], &[0xff, 5])).unwrap();
        assert_eq!(c.pixels, vec![5; 4]);
        // Missing packets: error.
        assert!(matches!(Bitmap::from_tga_bytes(&tga(11, 4, 2, 8, 0, &[], &[0x82, 7])), Err(BitmapError::Truncated { .. })));
    }

    #[test]
    fn rejections() {
        let e = Bitmap::from_tga_bytes(&tga(2, 1, 1, 24, 0, &[], &[1, 2, 3])).unwrap_err();
        assert!(matches!(e, BitmapError::UnsupportedImageType { image_type: 2, .. }), "{e}");
        let e = Bitmap::from_tga_bytes(&tga(1, 1, 1, 8, 0, &[], &[1])).unwrap_err();
        assert!(matches!(e, BitmapError::UnsupportedImageType { image_type: 1, .. }), "{e}");
        let e = Bitmap::from_tga_bytes(&tga(3, 1, 1, 16, 0, &[], &[1, 2])).unwrap_err();
        assert!(matches!(e, BitmapError::UnsupportedBitsPerPixel { bits: 16, .. }), "{e}");
        let mut cm = bottom_up();
        cm[1] = 1;
        let e = Bitmap::from_tga_bytes(&cm).unwrap_err();
        assert!(matches!(e, BitmapError::ColorMapped { color_map_type: 1 }), "{e}");
        let e = Bitmap::from_tga_bytes(&tga(3, 0, 5, 8, 0, &[], &[])).unwrap_err();
        assert!(matches!(e, BitmapError::HostileSize { .. }), "{e}");
        let e = Bitmap::from_tga_bytes(&tga(3, 65535, 65535, 8, 0, &[], &[0; 64])).unwrap_err();
        assert!(matches!(e, BitmapError::HostileSize { .. }), "{e}");
        // Large but allowed size with little data: truncated, without allocating.
        let e = Bitmap::from_tga_bytes(&tga(11, 16384, 16384, 8, 0, &[], &[0xff, 1])).unwrap_err();
        assert!(matches!(e, BitmapError::Truncated { .. }), "{e}");
        // Messages name the problem.
        assert!(e.to_string().contains("truncated"));
    }

    #[test]
    fn truncated_inputs_error() {
        let full = tga(3, 3, 2, 8, 0, b"id", &[10, 20, 30, 40, 50, 60]);
        assert!(Bitmap::from_tga_bytes(&full).is_ok());
        for n in 0..full.len() {
            let e = Bitmap::from_tga_bytes(&full[..n]).unwrap_err();
            assert!(matches!(e, BitmapError::Truncated { .. }), "len {n}: {e}");
        }
    }

    #[test]
    fn bilinear_corners_edges_centre() {
        let b = Bitmap::from_tga_bytes(&bottom_up()).unwrap();
        let p = |c, r| b.pixel(c, r) as f32 / 255.0;
        // Corners.
        assert_eq!(b.sample_bilinear(0.0, 0.0), p(0, 0));
        assert_eq!(b.sample_bilinear(2.0, 0.0), p(2, 0));
        assert_eq!(b.sample_bilinear(0.0, 1.0), p(0, 1));
        assert_eq!(b.sample_bilinear(2.0, 1.0), p(2, 1));
        // Beyond the image (u = W, v = H, as §5.6 step 1 produces at maxX/maxZ): clamped.
        assert_eq!(b.sample_bilinear(3.0, 2.0), p(2, 1));
        assert_eq!(b.sample_bilinear(1e9, 1e9), p(2, 1));
        assert_eq!(b.sample_bilinear(-0.5, -3.0), p(0, 0));
        assert_eq!(b.sample_bilinear(f32::NAN, f32::NAN), p(0, 0));
        // Edges: halfway along the bottom row and up the right column.
        assert!((b.sample_bilinear(0.5, 0.0) - 15.0 / 255.0).abs() < 1e-7);
        assert!((b.sample_bilinear(2.0, 0.5) - 45.0 / 255.0).abs() < 1e-7);
        // Last column with a fraction in v only: i1 clamped, no OOB.
        assert!((b.sample_bilinear(2.9, 0.25) - (0.75 * 30.0 + 0.25 * 60.0) / 255.0).abs() < 1e-6);
        // Centre of the first cell: mean of 10, 20, 40, 50.
        assert!((b.sample_bilinear(0.5, 0.5) - 30.0 / 255.0).abs() < 1e-7);
        // Bilinear, not nearest: (1.25, 0.75).
        let want = (0.25 * 0.75 * 20.0 + 0.25 * 0.25 * 30.0 + 0.75 * 0.75 * 50.0 + 0.75 * 0.25 * 60.0) / 255.0;
        assert!((b.sample_bilinear(1.25, 0.75) - want).abs() < 1e-6);
        // 255 everywhere gives exactly 1.0 (step 4 of §5.6 then applies downstream).
        let w = Bitmap { width: 2, height: 2, pixels: vec![255; 4] };
        assert_eq!(w.sample_bilinear(0.3, 0.7), 1.0);
    }

    #[test]
    fn color_ramp() {
        // 3×2, 24-bit BGR, bottom-left origin: bottom row is stored first.
        let data = [3, 2, 1, 6, 5, 4, 9, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let r = load_color_ramp_tga(&tga(2, 3, 2, 24, 0, &[], &data)).unwrap();
        assert_eq!(r, vec![[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
        // Top-left origin, 32-bit: bottom row is stored last.
        let data = [0, 0, 0, 255, 0, 0, 0, 255, 3, 2, 1, 255, 6, 5, 4, 255];
        let r = load_color_ramp_tga(&tga(2, 2, 2, 32, 0x28, &[], &data)).unwrap();
        assert_eq!(r, vec![[1, 2, 3], [4, 5, 6]]);
        // RLE 24-bit, 4×1: run of 3 then one raw pixel.
        let data = [0x82, 30, 20, 10, 0x00, 3, 2, 1];
        let r = load_color_ramp_tga(&tga(10, 4, 1, 24, 0, &[], &data)).unwrap();
        assert_eq!(r, vec![[10, 20, 30], [10, 20, 30], [10, 20, 30], [1, 2, 3]]);
        // Greyscale is not a colour ramp; truncation errors.
        assert!(load_color_ramp_tga(&bottom_up()).is_err());
        assert!(matches!(load_color_ramp_tga(&tga(2, 4, 1, 24, 0, &[], &[1, 2, 3])), Err(BitmapError::Truncated { .. })));
    }

    /// xorshift64, so the test needs no RNG crate.
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    #[test]
    fn random_and_truncated_inputs_never_panic() {
        let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
        let seeds = [
            bottom_up(),
            tga(11, 4, 2, 8, 0x28, &[], &[0x82, 7, 0x01, 1, 2, 0x00, 3, 0x81, 9]),
            tga(2, 3, 1, 24, 0, &[], &[3, 2, 1, 6, 5, 4, 9, 8, 7]),
            tga(10, 4, 1, 32, 0x20, b"x", &[0x83, 1, 2, 3, 4]),
        ];
        for k in 0..20_000 {
            let bytes: Vec<u8> = match k % 3 {
                // Pure random bytes with a plausible header length.
                0 => {
                    let n = (rng.next() % 64) as usize;
                    (0..n).map(|_| rng.next() as u8).collect()
                }
                // A valid file, mutated in a few bytes (header included).
                1 => {
                    let mut v = seeds[(rng.next() % 4) as usize].clone();
                    for _ in 0..1 + rng.next() % 4 {
                        let i = (rng.next() as usize) % v.len();
                        v[i] = rng.next() as u8;
                    }
                    v
                }
                // A valid file, truncated at a random point.
                _ => {
                    let v = &seeds[(rng.next() % 4) as usize];
                    v[..(rng.next() as usize) % (v.len() + 1)].to_vec()
                }
            };
            if let Ok(b) = Bitmap::from_tga_bytes(&bytes) {
                assert_eq!(b.pixels.len(), b.width as usize * b.height as usize);
                let u = (rng.next() % 1000) as f32 / 10.0 - 10.0;
                let v = (rng.next() % 1000) as f32 / 10.0 - 10.0;
                let s = b.sample_bilinear(u, v);
                assert!((0.0..=1.0).contains(&s));
            }
            if let Ok(r) = load_color_ramp_tga(&bytes) {
                assert!(!r.is_empty());
            }
        }
    }

    /// The CORE3 test bitmap (swg-trn §5.6): 2000×2000, bottom-left origin.
    /// The `image` crate's TGA decoder (what this module used before it decoded pixels itself),
    /// as the reference: greyscale bottom row first, colour ramps as RGB of the bottom row.
    fn decode_with_image(bytes: &[u8], colour: bool) -> Option<Vec<u8>> {
        use image::ImageDecoder;
        use std::io::Read;
        let mut header = [0u8; HEADER_LEN];
        header.copy_from_slice(bytes.get(..HEADER_LEN)?);
        let attribute_bits = if header[16] == 32 { 8 } else { 0 };
        header[17] = (header[17] & 0xf0) | attribute_bits;
        let stream = std::io::Cursor::new(header).chain(&bytes[HEADER_LEN..]);
        let decoder = image::codecs::tga::TgaDecoder::new(stream).ok()?;
        let _ = decoder.dimensions();
        let img = image::DynamicImage::from_decoder(decoder).ok()?;
        if colour {
            let rgb = img.into_rgb8();
            rgb.rows().next_back().map(|row| row.flat_map(|p| p.0).collect())
        } else {
            let mut grey = img.into_luma8();
            image::imageops::flip_vertical_in_place(&mut grey);
            Some(grey.into_raw())
        }
    }

    /// Our decoder against the `image` crate's on random small files of every accepted type,
    /// origin and packet layout: wherever both decode, the pixels are identical, and every file
    /// `image` decodes, we decode too.
    #[test]
    fn decoder_matches_the_image_crate() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let (mut both, mut ours_only) = (0, 0);
        for _ in 0..20_000 {
            let (ty, bits) = [(3u8, 8u8), (11, 8), (2, 24), (2, 32), (10, 24), (10, 32)][(rng.next() % 6) as usize];
            let (w, h) = (1 + (rng.next() % 7) as u16, 1 + (rng.next() % 5) as u16);
            let descriptor = ((rng.next() % 4) as u8) << 4;
            let bpp = bits as usize / 8;
            let n = w as usize * h as usize;
            let data: Vec<u8> = if ty >= 9 {
                let mut v = Vec::new();
                let mut left = n as i64 + (rng.next() % 3) as i64 - 1;
                while left > 0 {
                    let k = 1 + (rng.next() % 6) as usize;
                    if rng.next().is_multiple_of(2) {
                        v.push(0x80 | (k - 1) as u8);
                        v.extend((0..bpp).map(|_| rng.next() as u8));
                    } else {
                        v.push((k - 1) as u8);
                        v.extend((0..k * bpp).map(|_| rng.next() as u8));
                    }
                    left -= k as i64;
                }
                v
            } else {
                (0..n * bpp).map(|_| rng.next() as u8).collect()
            };
            let file = tga(ty, w, h, bits, descriptor, &[], &data);
            let colour = ty == 2 || ty == 10;
            let ours = if colour {
                load_color_ramp_tga(&file).ok().map(|r| r.into_iter().flatten().collect::<Vec<u8>>())
            } else {
                Bitmap::from_tga_bytes(&file).ok().map(|b| b.pixels)
            };
            match (ours, decode_with_image(&file, colour)) {
                (Some(a), Some(b)) => {
                    assert_eq!(a, b, "type {ty} {bits} bit {w}x{h} descriptor {descriptor:#x}");
                    both += 1;
                }
                (None, Some(_)) => panic!("image decodes what we refuse: type {ty} {bits} bit {w}x{h} descriptor {descriptor:#x}"),
                (Some(_), None) => ours_only += 1,
                (None, None) => {}
            }
        }
        assert!(both > 15_000, "{both} decoded by both, {ours_only} by ours alone");
    }

    #[test]
    fn real_mustafar_height() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/swg/terrain/mustafar_height.tga");
        if !path.exists() {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("{} is missing and CI=true", path.display());
            }
            eprintln!("skipping real_mustafar_height: {} not found", path.display());
            return;
        }
        let b = Bitmap::load_tga(&path).unwrap();
        assert_eq!((b.width, b.height), (2000, 2000));
        assert_eq!(b.pixels.len(), 4_000_000);
        // Bottom-left origin and no id field: stored order is our order.
        let raw = std::fs::read(&path).unwrap();
        assert_eq!(raw[17] & 0x20, 0);
        assert_eq!(&b.pixels[..], &raw[18..18 + 4_000_000]);
        let s = b.sample_bilinear(999.5, 1234.25);
        assert!((0.0..=1.0).contains(&s));
    }

    #[test]
    fn missing_file_names_the_path() {
        let e = Bitmap::load_tga(Path::new("/nonexistent/dir/x.tga")).unwrap_err();
        assert!(matches!(e, BitmapError::Io { .. }));
        assert!(e.to_string().contains("/nonexistent/dir/x.tga"), "{e}");
    }
}
