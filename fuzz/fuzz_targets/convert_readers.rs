//! Arbitrary bytes through the heightmap readers of `trnbake convert`
//! (`trnbake_raster::readers::open`, the same entry point the command uses). The first byte picks the
//! reader (`% 4`): 0 Terragen `.ter`, 1 GeoTIFF, 2 16-bit PNG, 3 RAW. For RAW the next 8 bytes
//! are `--dims` (two u32 LE, any value, so hostile sizes are tried) and 1 byte picks R16/R32;
//! the rest is the file. The readers take paths, so each run writes its input to a temp file.
//! Asserts:
//! * never a panic; an accepted input has a usable grid and every post reads back;
//! * RAW: every height is exactly the sample at its place (R16 with `--height-range 0,65535`
//!   is the raw value; rows are north first);
//! * `.ter`: an accepted file written back with its own encoding reads back to the same
//!   heights (within one raw step: re-encoding an f32 height may round the other way);
//! * memory while opening and reading every post:
//!   - `.ter`, RAW: at most 8 bytes per input byte + 1 MiB (the file holds 2 or 4 bytes a
//!     post, checked before anything is allocated; posts are read as 4-byte f32);
//!   - GeoTIFF, PNG: decompression expands, so the bound is per declared post: 32 bytes a post
//!     (decoded samples up to 8 bytes, the f32 heights, the PNG output buffer) + 8 bytes per
//!     input byte + 16 MiB, for at most `Limits::DEFAULT.decoded_bytes / 4` posts (the reader's limit).
//!     Images that declare more than `FUZZ_MAX_POSTS` posts but no more than that limit are
//!     skipped: they may legitimately allocate gigabytes, over libFuzzer's -rss_limit_mb.

#![no_main]

#[path = "common/alloc.rs"]
mod alloc;

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use trnbake_raster::readers::{self, ImportOptions, InputFormat};
use trnbake_raster::Limits;
use trnbake_raster::writers::ter::{write_ter_from, TerSource};
use trnbake_raster::HeightSource;

/// Images with more declared posts than this (and no more than the reader's limit) are skipped.
const FUZZ_MAX_POSTS: u64 = 1 << 22;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("trnbake-fuzz-convert-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    })
}

/// Declared posts of a PNG (IHDR follows the signature) or TIFF (first IFD), if readable.
fn declared_posts(format: InputFormat, file: &[u8]) -> Option<u64> {
    match format {
        InputFormat::Png if file.len() >= 24 => {
            let w = u32::from_be_bytes(file[16..20].try_into().ok()?);
            let h = u32::from_be_bytes(file[20..24].try_into().ok()?);
            Some(u64::from(w) * u64::from(h))
        }
        InputFormat::Tif => {
            let mut d = tiff::decoder::Decoder::new(std::io::Cursor::new(file)).ok()?;
            let (w, h) = d.dimensions().ok()?;
            Some(u64::from(w) * u64::from(h))
        }
        _ => None,
    }
}

/// Every post of `src`, row 0 = south.
fn read_all(src: &dyn HeightSource) -> Vec<f32> {
    let g = src.grid();
    g.check_dims().expect("an accepted input has a usable grid");
    let mut h = vec![0.0f32; g.cols as usize * g.rows as usize];
    src.read_rows(0, g.rows, &mut h).expect("every post of an accepted input reads");
    h
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let mut opts = ImportOptions { spacing: Some(1.0), ..Default::default() };
    let (format, file, name) = match sel % 4 {
        0 => (InputFormat::Ter, rest, "in.ter"),
        1 => (InputFormat::Tif, rest, "in.tif"),
        2 => (InputFormat::Png, rest, "in.png"),
        _ => {
            if rest.len() < 9 {
                return;
            }
            let cols = u32::from_le_bytes(rest[0..4].try_into().unwrap());
            let rows = u32::from_le_bytes(rest[4..8].try_into().unwrap());
            opts.dims = Some((cols, rows));
            let f = if rest[8] & 1 == 1 { InputFormat::R32 } else { InputFormat::R16 };
            (f, &rest[9..], if f == InputFormat::R32 { "in.r32" } else { "in.r16" })
        }
    };
    opts.format = Some(format);
    opts.height_range = Some((0.0, 65535.0));
    if let Some(n) = declared_posts(format, file) {
        if n > FUZZ_MAX_POSTS && n.saturating_mul(4) <= Limits::DEFAULT.decoded_bytes {
            return;
        }
    }
    let path = dir().join(name);
    std::fs::write(&path, file).expect("write the input");

    let (heights, peak) = alloc::peak_alloc(|| readers::open(&path, &opts).map(|imp| (read_all(&*imp.source), imp.source.grid())));
    match format {
        InputFormat::Tif | InputFormat::Png => {
            let posts = declared_posts(format, file).unwrap_or(0).min(Limits::DEFAULT.decoded_bytes / 4) as usize;
            alloc::assert_bound("readers::open (image)", peak, data.len(), 8, posts.saturating_mul(32) + (16 << 20));
        }
        _ => alloc::assert_bound("readers::open (.ter/RAW)", peak, data.len(), 8, 1 << 20),
    }
    let Ok((heights, grid)) = heights else { return };

    match format {
        InputFormat::R16 | InputFormat::R32 => {
            let (cols, rows) = (grid.cols as usize, grid.rows as usize);
            let size = if format == InputFormat::R32 { 4 } else { 2 };
            assert_eq!(file.len(), cols * rows * size, "RAW accepted with the wrong size");
            for (i, &h) in heights.iter().enumerate() {
                let (c, r) = (i % cols, i / cols);
                let at = ((rows - 1 - r) * cols + c) * size;
                let want = if size == 4 {
                    f32::from_le_bytes(file[at..at + 4].try_into().unwrap())
                } else {
                    f32::from(u16::from_le_bytes([file[at], file[at + 1]]))
                };
                assert!(h.to_bits() == want.to_bits(), "RAW post ({c}, {r}) is {h}, the file says {want}");
            }
        }
        InputFormat::Ter => {
            let t = TerSource::open(&path).expect("opens again");
            let enc = t.encoding();
            let writable = enc.hs >= 1
                && enc.scal.is_finite()
                && enc.scal <= 1e6
                && grid.cols <= 65535
                && grid.rows <= 65535
                && heights.iter().all(|h| h.is_finite());
            if !writable {
                return;
            }
            let out = dir().join("out.ter");
            write_ter_from(&out, &t, &enc).expect("an accepted .ter writes back with its own encoding");
            let back = read_all(&TerSource::open(&out).expect("the written .ter reads back"));
            let step = enc.step().abs() * 1.001;
            for (i, (a, b)) in heights.iter().zip(&back).enumerate() {
                let tol = step + f64::from(a.abs()) * 1e-6;
                assert!(f64::from((a - b).abs()) <= tol, "post {i}: {a} written and read back as {b}");
            }
        }
        _ => {}
    }
});
