//! Arbitrary bytes through the TGA readers of bitmap families (`Bitmap::from_tga_bytes`,
//! swg-trn §3.6) and colour ramps (`load_color_ramp_tga`, §3.7). Asserts:
//! * never a panic;
//! * an accepted greyscale bitmap has `width · height` pixels and round-trips: written as an
//!   uncompressed bottom-left type 3 TGA, it reads back equal; an accepted ramp has one colour
//!   per column of the header's width;
//! * memory: at most 512 bytes per input byte + 1 MiB at once. The header is checked against
//!   the data before decoding (uncompressed: all pixels present; RLE: at least one packet per
//!   128 pixels), so an RLE file decodes to at most 128/(1+bpp) pixels per input byte: 64
//!   greyscale bytes, or 25.6 RGBA pixels (102 bytes) + their RGB copy for a 32-bit ramp;
//!   512 leaves room for the decoder's own buffer.

#![no_main]

#[path = "common/alloc.rs"]
mod alloc;

use libfuzzer_sys::fuzz_target;
use trnbake_swg::model::bitmap::{load_color_ramp_tga, Bitmap};

/// An uncompressed, bottom-left-origin 8-bit greyscale TGA of `b` (rows are stored bottom
/// first, which is `Bitmap`'s order).
fn to_tga(b: &Bitmap) -> Vec<u8> {
    let mut v = vec![0u8, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    v.extend_from_slice(&(b.width as u16).to_le_bytes());
    v.extend_from_slice(&(b.height as u16).to_le_bytes());
    v.extend_from_slice(&[8, 0]);
    v.extend_from_slice(&b.pixels);
    v
}

fuzz_target!(|data: &[u8]| {
    let (grey, peak) = alloc::peak_alloc(|| Bitmap::from_tga_bytes(data));
    alloc::assert_bound("Bitmap::from_tga_bytes", peak, data.len(), 512, 1 << 20);
    if let Ok(b) = grey {
        assert_eq!(b.pixels.len(), b.width as usize * b.height as usize, "pixel count");
        let back = Bitmap::from_tga_bytes(&to_tga(&b)).expect("a written bitmap reads back");
        assert!(back == b, "read(write(bitmap)) != bitmap");
    }
    let (ramp, peak) = alloc::peak_alloc(|| load_color_ramp_tga(data));
    alloc::assert_bound("load_color_ramp_tga", peak, data.len(), 512, 1 << 20);
    if let Ok(r) = ramp {
        let width = u16::from_le_bytes([data[12], data[13]]) as usize;
        assert_eq!(r.len(), width, "one ramp colour per column");
    }
});
