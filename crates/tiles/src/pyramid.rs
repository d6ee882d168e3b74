//! The XYZ pyramid of one layer, built one strip (a row of tiles) at a time: the max zoom's
//! strips come from the bake's rows; each finished strip is written as tiles and halved into
//! the strip of the zoom below, which is written once both its halves (or the last rows) are
//! in. Memory: one strip per zoom, never the whole planet.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::mercator::{terrarium, TILE_PX};
use crate::{Error, Result};

const T: usize = TILE_PX as usize;

/// A pixel of a strip: a height (NaN: no data yet) or RGBA bytes (alpha 0: no data).
pub trait Pixel: Copy + Send + Sync + 'static {
    const MISSING: Self;
    /// The parent pixel of four children (top-left, top-right, bottom-left, bottom-right).
    fn down(children: [Self; 4], pick: bool) -> Self;
}

impl Pixel for f32 {
    const MISSING: f32 = f32::NAN;
    /// Heights are samples at the pixels' north-west corners (MapLibre's DEM reading, see
    /// the crate docs): the parent's corner is its top-left child's, so lower zooms hold the
    /// max zoom's samples unchanged (the next child where that one is missing).
    #[inline]
    fn down(c: [f32; 4], _: bool) -> f32 {
        c.into_iter().find(|v| !v.is_nan()).unwrap_or(f32::NAN)
    }
}

impl Pixel for [u8; 4] {
    const MISSING: [u8; 4] = [0; 4];
    #[inline]
    fn down(c: [[u8; 4]; 4], pick: bool) -> [u8; 4] {
        if pick {
            // Ids are not averaged: the first child that holds one.
            return c.into_iter().find(|p| p[3] != 0).unwrap_or([0; 4]);
        }
        // Colours averaged by their alpha (a transparent child adds no colour).
        let a: u32 = c.iter().map(|p| u32::from(p[3])).sum();
        if a == 4 * 255 {
            // All opaque (most pixels): (255·Σ + 510) / 1020 = (Σ + 2) / 4 exactly, with no
            // division by a variable.
            let ch = |k: usize| ((c.iter().map(|p| u32::from(p[k])).sum::<u32>() + 2) / 4) as u8;
            return [ch(0), ch(1), ch(2), 255];
        }
        if a == 0 {
            return [0; 4];
        }
        let ch = |k: usize| ((c.iter().map(|p| u32::from(p[k]) * u32::from(p[3])).sum::<u32>() + a / 2) / a) as u8;
        [ch(0), ch(1), ch(2), ((a + 2) / 4) as u8]
    }
}

/// How a strip's tiles are encoded.
pub trait Encode: Pixel {
    fn encode(tile: &mut [Self]) -> std::io::Result<Vec<u8>>;
}

impl Encode for f32 {
    /// Terrarium RGB. Pixels with no data (a lower zoom's tile reaching past the map) take
    /// their nearest neighbour's height along the row, then the column, so the terrain
    /// ends in a flat apron instead of a cliff.
    fn encode(tile: &mut [f32]) -> std::io::Result<Vec<u8>> {
        fill_nan(tile);
        let mut rgb = vec![0; T * T * 3];
        for (o, &h) in rgb.chunks_exact_mut(3).zip(tile.iter()) {
            o.copy_from_slice(&terrarium(if h.is_nan() { 0.0 } else { h }));
        }
        png_bytes(&rgb, png::ColorType::Rgb)
    }
}

impl Encode for [u8; 4] {
    /// RGBA, or RGB where every pixel is opaque (a quarter fewer bytes to filter and
    /// compress; decoders give alpha 255). The all-transparent tile (a map layer's tiles
    /// past its edges, water's dry land) is encoded once and its bytes reused.
    fn encode(tile: &mut [[u8; 4]]) -> std::io::Result<Vec<u8>> {
        static EMPTY: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
        if tile.iter().all(|p| *p == [0; 4]) {
            if let Some(b) = EMPTY.get() {
                return Ok(b.clone());
            }
            let b = png_bytes(tile.as_flattened(), png::ColorType::Rgba)?;
            return Ok(EMPTY.get_or_init(|| b).clone());
        }
        if tile.iter().all(|p| p[3] == 255) {
            let rgb: Vec<u8> = tile.iter().flat_map(|p| [p[0], p[1], p[2]]).collect();
            return png_bytes(&rgb, png::ColorType::Rgb);
        }
        png_bytes(tile.as_flattened(), png::ColorType::Rgba)
    }
}

fn png_bytes(data: &[u8], colour: png::ColorType) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut e = png::Encoder::new(&mut out, TILE_PX, TILE_PX);
    e.set_color(colour);
    e.set_depth(png::BitDepth::Eight);
    e.set_compression(png::Compression::Fast);
    // Paeth on every row instead of the adaptive choice of Fast (which filters each row five
    // ways): as small on these tiles (heights, colours, ids) and 10–30 % faster to encode.
    e.set_filter(png::Filter::Paeth);
    let mut w = e.write_header().map_err(std::io::Error::other)?;
    w.write_image_data(data).map_err(std::io::Error::other)?;
    w.finish().map_err(std::io::Error::other)?;
    Ok(out)
}

/// Replace NaN by the nearest value along its row, then along its column.
fn fill_nan(tile: &mut [f32]) {
    if !tile.iter().any(|v| v.is_nan()) {
        return;
    }
    let fill_line = |get: &dyn Fn(usize) -> usize, tile: &mut [f32]| {
        let line: Vec<f32> = (0..T).map(|i| tile[get(i)]).collect();
        let mut next = vec![None; T + 1];
        for i in (0..T).rev() {
            next[i] = if line[i].is_nan() { next[i + 1] } else { Some(i) };
        }
        let mut last: Option<usize> = None;
        for i in 0..T {
            if !line[i].is_nan() {
                last = Some(i);
                continue;
            }
            // Nearest: the next value ahead if closer than the last one behind.
            let ahead = next[i];
            tile[get(i)] = match (last, ahead) {
                (Some(b), Some(a)) if a - i < i - b => line[a],
                (Some(b), _) => line[b],
                (None, Some(a)) => line[a],
                (None, None) => return,
            };
        }
    };
    for r in 0..T {
        fill_line(&|i| r * T + i, tile);
    }
    for c in 0..T {
        fill_line(&|i| i * T + c, tile);
    }
}

/// One zoom's current strip.
struct Level<P> {
    z: u8,
    /// Tile columns and rows of this zoom, inclusive.
    range: [u32; 4],
    row: Option<u32>,
    px: Vec<P>,
}

impl<P: Pixel> Level<P> {
    fn width(&self) -> usize {
        (self.range[2] - self.range[0] + 1) as usize * T
    }
}

/// Tiles written (count, bytes), shared by the layers.
#[derive(Default)]
pub struct Written {
    pub tiles: AtomicU64,
    pub bytes: AtomicU64,
}

/// A layer's pyramid from `min_zoom` to `max_zoom`.
pub struct Pyramid<P> {
    dir: PathBuf,
    min_zoom: u8,
    pick: bool,
    levels: Vec<Level<P>>,
}

impl<P: Encode> Pyramid<P> {
    /// `ranges[z - min_zoom]`: the tiles of zoom z (`[x0, y0, x1, y1]`); `pick`: lower zooms
    /// pick a child's value (ids) instead of averaging.
    pub fn new(dir: &Path, min_zoom: u8, ranges: &[[u32; 4]], pick: bool) -> Self {
        let levels = ranges.iter().enumerate().map(|(i, r)| Level { z: min_zoom + i as u8, range: *r, row: None, px: Vec::new() }).collect();
        Self { dir: dir.to_owned(), min_zoom, pick, levels }
    }

    /// The max zoom's strip of tile row `ty` (`width × 512` pixels, row-major, north first).
    pub fn push_top(&mut self, ty: u32, strip: &[P], written: &Written) -> Result<()> {
        let top = self.levels.len() - 1;
        self.emit(top, ty, strip, written)
    }

    /// Write the zooms below the max that still hold rows.
    pub fn finish(&mut self, written: &Written) -> Result<()> {
        for i in (0..self.levels.len().saturating_sub(1)).rev() {
            self.flush(i, written)?;
        }
        Ok(())
    }

    fn emit(&mut self, i: usize, ty: u32, strip: &[P], written: &Written) -> Result<()> {
        let l = &self.levels[i];
        write_strip(&self.dir, l.z, l.range, ty, strip, written)?;
        if i > 0 {
            self.push_into(i - 1, ty, strip, written)?;
        }
        Ok(())
    }

    fn push_into(&mut self, i: usize, child_ty: u32, child: &[P], written: &Written) -> Result<()> {
        let pty = child_ty / 2;
        if self.levels[i].row.is_some_and(|r| r != pty) {
            self.flush(i, written)?;
        }
        let child_x0 = self.levels[i + 1].range[0] as usize * T;
        let child_w = self.levels[i + 1].width();
        let pick = self.pick;
        let l = &mut self.levels[i];
        let w = l.width();
        if l.row.is_none() {
            l.row = Some(pty);
            l.px.clear();
            l.px.resize(w * T, P::MISSING);
        }
        let parent_x0 = l.range[0] as usize * T;
        let half = (child_ty % 2) as usize;
        let at = |r: usize, c_abs: usize| -> P {
            match c_abs.checked_sub(child_x0) {
                Some(c) if c < child_w => child[r * child_w + c],
                _ => P::MISSING,
            }
        };
        l.px[half * (T / 2) * w..(half + 1) * (T / 2) * w].par_chunks_mut(w).enumerate().for_each(|(pr, row)| {
            let r = 2 * pr;
            let (top, bottom) = (&child[r * child_w..(r + 1) * child_w], &child[(r + 1) * child_w..(r + 2) * child_w]);
            for (pc, p) in row.iter_mut().enumerate() {
                let ca = 2 * (parent_x0 + pc);
                *p = match ca.checked_sub(child_x0) {
                    // Both children columns in the child strip (all but its ends).
                    Some(c) if c + 1 < child_w => P::down([top[c], top[c + 1], bottom[c], bottom[c + 1]], pick),
                    _ => P::down([at(r, ca), at(r, ca + 1), at(r + 1, ca), at(r + 1, ca + 1)], pick),
                };
            }
        });
        Ok(())
    }

    fn flush(&mut self, i: usize, written: &Written) -> Result<()> {
        let Some(row) = self.levels[i].row.take() else { return Ok(()) };
        let strip = std::mem::take(&mut self.levels[i].px);
        self.emit(i, row, &strip, written)?;
        self.levels[i].px = strip;
        Ok(())
    }

    /// The lowest zoom of this pyramid.
    pub fn min_zoom(&self) -> u8 {
        self.min_zoom
    }
}

/// Write the tiles of one strip: `DIR/{z}/{x}/{y}.png`, each through a temp file and a rename.
fn write_strip<P: Encode>(dir: &Path, z: u8, range: [u32; 4], ty: u32, strip: &[P], written: &Written) -> Result<()> {
    let n = (range[2] - range[0] + 1) as usize;
    let w = n * T;
    (0..n).into_par_iter().try_for_each(|k| {
        let tx = range[0] + k as u32;
        let mut tile: Vec<P> = Vec::with_capacity(T * T);
        for r in 0..T {
            tile.extend_from_slice(&strip[r * w + k * T..r * w + (k + 1) * T]);
        }
        let folder = dir.join(z.to_string()).join(tx.to_string());
        let path = folder.join(format!("{ty}.png"));
        let bytes = P::encode(&mut tile).map_err(|e| Error::io(&path, e))?;
        std::fs::create_dir_all(&folder).map_err(|e| Error::io(&folder, e))?;
        trnbake_raster::fsutil::write_renamed(&path, &bytes).map_err(|e| Error::io(&path, e))?;
        written.tiles.fetch_add(1, Ordering::Relaxed);
        written.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_fill_takes_the_nearest() {
        let mut t = vec![f32::NAN; T * T];
        t[5] = 1.0;
        t[10] = 2.0;
        fill_nan(&mut t);
        assert_eq!(t[0], 1.0);
        assert_eq!(t[7], 1.0);
        assert_eq!(t[9], 2.0);
        assert_eq!(t[T - 1], 2.0);
        // Rows without a value take the column's.
        assert_eq!(t[3 * T + 9], 2.0);
    }

    #[test]
    fn downsampling() {
        assert_eq!(f32::down([1.0, 2.0, f32::NAN, 3.0], false), 1.0);
        assert_eq!(f32::down([f32::NAN, 2.0, f32::NAN, 3.0], false), 2.0);
        assert!(f32::down([f32::NAN; 4], false).is_nan());
        assert_eq!(<[u8; 4]>::down([[0; 4], [0, 9, 0, 255], [1, 2, 3, 255], [0; 4]], true), [0, 9, 0, 255]);
        assert_eq!(<[u8; 4]>::down([[100, 0, 0, 255], [0; 4], [0; 4], [200, 0, 0, 255]], false), [150, 0, 0, 128]);
        // All opaque (the shortcut): as the alpha-weighted mean, (255·Σ + a/2) / a.
        for c in [
            [[0, 1, 2, 255], [3, 4, 5, 255], [6, 7, 8, 255], [9, 10, 11, 255]],
            [[255, 254, 1, 255], [255, 255, 2, 255], [254, 255, 0, 255], [255, 255, 0, 255]],
        ] {
            let want: [u8; 4] = std::array::from_fn(|k| if k == 3 { 255 } else { ((c.iter().map(|p| u32::from(p[k]) * 255).sum::<u32>() + 510) / 1020) as u8 });
            assert_eq!(<[u8; 4]>::down(c, false), want);
        }
    }
}
