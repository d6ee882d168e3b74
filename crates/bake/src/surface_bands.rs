//! Surface band checkpoints: the per-post values every requested surface map is written from,
//! one file per band of rows, so that the surface passes stream (memory bounded by a band, not
//! the grid), the map writers read each band as soon as it is finished, and a killed bake
//! resumes with the bands it has.
//!
//! A band file (`.trnbake-tiles/surface-r{R0}-{ROWS}.bin`) holds, for the band's posts
//! (row-major from the south), one fixed-size plane per [`Plane`] of the [`BandLayout`], then
//! the flora probabilities of every family per post and class (when the per-family maps or the
//! scatter are wanted: per class a `u16` count a post, then `(i32 family, f32 probability)`
//! entries), then a JSON [`BandMeta`] and its length, then the tile checkpoints' trailer
//! (`TBK1` and the CRC-32 of everything before it).

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use trnbake_raster::source::read_exact_at;
use trnbake_swg::grid::{Grid, TileSpec};

use crate::bands::BandProgress;

/// One per-post value of a band file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Plane {
    /// The normals map's RGB bytes.
    Normals,
    /// The preview's RGB bytes.
    Preview,
    /// The dominant shader family (f32, as `shader_id.tif` encodes it).
    ShaderId,
    /// Up to four (family i32, splat byte u8) pairs: the post's splat weights, family 0 unused.
    Splat,
    /// Per flora class: the most likely family (f32) and its probability (f32).
    FloraId(u8),
    FloraProbability(u8),
    /// The water surface height (f32, NaN where none) and the mask byte.
    WaterLevel,
    WaterMask,
    /// The environment family (f32).
    Environment,
    /// The colour map's RGB bytes.
    Color,
    /// The exclusion and passability mask bytes.
    Exclude,
    Passable,
}

impl Plane {
    /// Bytes a post.
    pub fn bytes(self) -> usize {
        match self {
            Plane::Normals | Plane::Preview | Plane::Color => 3,
            Plane::ShaderId | Plane::FloraId(_) | Plane::FloraProbability(_) | Plane::WaterLevel | Plane::Environment => 4,
            Plane::Splat => 20,
            Plane::WaterMask | Plane::Exclude | Plane::Passable => 1,
        }
    }
}

/// What a band file holds: its planes, in order, and whether the probabilities follow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BandLayout {
    pub planes: Vec<Plane>,
    pub probabilities: bool,
}

impl BandLayout {
    /// Byte offset of `plane` in a band of `posts` posts.
    pub fn offset(&self, plane: Plane, posts: usize) -> Option<u64> {
        let mut at = 0u64;
        for p in &self.planes {
            if *p == plane {
                return Some(at);
            }
            at += (p.bytes() * posts) as u64;
        }
        None
    }

    /// Bytes of the fixed planes of a band of `posts` posts.
    pub fn planes_bytes(&self, posts: usize) -> u64 {
        self.planes.iter().map(|p| (p.bytes() * posts) as u64).sum()
    }
}

/// What a band found that the maps need over the whole grid.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BandMeta {
    /// Every shader family with some splat weight in the band, ascending.
    pub splat_families: Vec<i32>,
    /// Per flora class: every most likely family in the band (0 left out), ascending.
    pub flora_ids: [Vec<i32>; 4],
    /// Per flora class: the finite range of the most likely family's probability.
    pub flora_range: [Option<(f32, f32)>; 4],
    /// Per flora class: every family with a probability somewhere in the band, ascending
    /// (with [`BandLayout::probabilities`]).
    pub probability_families: [Vec<i32>; 4],
    /// Per flora class: byte offsets of the counts and of the entries of the probabilities.
    pub probability_offsets: [(u64, u64); 4],
}

const MAGIC: &[u8; 4] = b"TBK1";

/// The file of the band starting at grid row `r0`.
pub fn band_path(tile_dir: &Path, r0: u32, rows: u32) -> PathBuf {
    tile_dir.join(format!("surface-r{r0}-{rows}.bin"))
}

/// A band file's bytes: the planes and probabilities (`body`), then the meta and trailer.
pub fn band_file_bytes(mut body: Vec<u8>, meta: &BandMeta) -> Vec<u8> {
    let json = serde_json::to_vec(meta).expect("a band meta serialises");
    body.extend_from_slice(&json);
    body.extend_from_slice(&(json.len() as u32).to_le_bytes());
    let crc = crc32fast::hash(&body);
    body.extend_from_slice(MAGIC);
    body.extend_from_slice(&crc.to_le_bytes());
    body
}

/// The meta of a finished band file, `None` when the file is missing, damaged (size, trailer
/// or checksum) or of another layout (`expect_body` bytes of planes before the probabilities).
pub fn verified_meta(path: &Path, expect_planes: u64) -> Option<BandMeta> {
    let bytes = std::fs::read(path).ok()?;
    let n = bytes.len();
    if n < 12 || &bytes[n - 8..n - 4] != MAGIC || bytes[n - 4..] != crc32fast::hash(&bytes[..n - 8]).to_le_bytes() {
        return None;
    }
    let len = u32::from_le_bytes(bytes[n - 12..n - 8].try_into().ok()?) as usize;
    let start = (n - 12).checked_sub(len)?;
    let meta: BandMeta = serde_json::from_slice(&bytes[start..n - 12]).ok()?;
    (start as u64 >= expect_planes).then_some(meta)
}

/// The meta of a band file already verified (or just written) by this bake.
pub fn read_meta(path: &Path) -> io::Result<BandMeta> {
    let file = std::fs::File::open(path)?;
    let n = file.metadata()?.len();
    let mut tail = [0u8; 12];
    read_exact_at(&file, &mut tail, n.checked_sub(12).ok_or_else(|| io::Error::other("short band file"))?)?;
    let len = u64::from(u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")));
    let mut json = vec![0u8; len as usize];
    read_exact_at(&file, &mut json, n - 12 - len)?;
    serde_json::from_slice(&json).map_err(|e| io::Error::other(format!("{}: {e}", path.display())))
}

/// The bands of a grid, `rows` rows each from the south edge (the northmost ragged), listed
/// from the north: the order they are computed and written in.
pub fn bands_north_first(grid: &Grid, rows: u32) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = (0..grid.rows).step_by(rows as usize).map(|r0| (r0, rows.min(grid.rows - r0))).collect();
    out.reverse();
    out
}

/// A band's probabilities of one flora class: the families a post, then every post's
/// (family, probability) entries in post order.
pub type BandProbabilities = (Vec<u16>, Vec<(i32, f32)>);

/// Band (r0, rows) of `grid` as a full-width tile, for [`BandProgress`].
fn band_tile(grid: &Grid, r0: u32, rows: u32) -> TileSpec {
    TileSpec { c0: 0, r0, cols: grid.cols, rows }
}

/// The band files of a bake and which of them are finished, shared by the band computation
/// and the map writers (which wait in [`BandSet::wait_north_rows`]).
pub struct BandSet {
    pub grid: Grid,
    pub layout: BandLayout,
    /// Rows a band (the last one, at the north edge, may have fewer).
    pub band_rows: u32,
    tile_dir: PathBuf,
    /// Which bands are finished (a band is one full-width "tile" of `band_rows` rows), the
    /// same bookkeeping as the height tiles' (`bands::BandProgress`).
    progress: BandProgress,
}

impl BandSet {
    pub fn new(grid: Grid, layout: BandLayout, band_rows: u32, tile_dir: PathBuf) -> Self {
        let all: Vec<TileSpec> = bands_north_first(&grid, band_rows).into_iter().map(|(r0, rows)| band_tile(&grid, r0, rows)).collect();
        let progress = BandProgress::new(&grid, band_rows, &all);
        BandSet { grid, layout, band_rows, tile_dir, progress }
    }

    /// The bands, north first, as (first grid row, rows).
    pub fn bands(&self) -> Vec<(u32, u32)> {
        bands_north_first(&self.grid, self.band_rows)
    }

    pub fn path(&self, r0: u32, rows: u32) -> PathBuf {
        band_path(&self.tile_dir, r0, rows)
    }

    /// The band holding grid row `row`: its first row and rows.
    fn band_of(&self, row: u32) -> (u32, u32) {
        let r0 = row - row % self.band_rows;
        (r0, self.band_rows.min(self.grid.rows - r0))
    }

    /// Band `index` (from the north) is finished.
    pub fn done(&self, index: usize) {
        let (r0, rows) = self.bands()[index];
        self.progress.tile_done(&self.grid, self.band_rows, &band_tile(&self.grid, r0, rows), None);
    }

    /// The computation stopped: waiting writers give up.
    pub fn fail(&self) {
        self.progress.fail();
    }

    /// Block until the `rows` northmost rows are finished (or the computation failed).
    pub fn wait_north_rows(&self, rows: u32) -> io::Result<()> {
        self.progress.wait_north_rows(rows)
    }

    /// Plane `plane`'s bytes of file rows `rows` (0 = the north edge), north row first: what
    /// the image writers read.
    pub fn read_plane_north(&self, plane: Plane, rows: std::ops::Range<u32>) -> io::Result<Vec<u8>> {
        let row_bytes = self.grid.cols as usize * plane.bytes();
        let mut south_first = vec![0u8; rows.len() * row_bytes];
        self.read_plane(plane, self.grid.rows - rows.end, rows.len() as u32, &mut south_first)?;
        let mut north_first = Vec::with_capacity(south_first.len());
        for row in south_first.chunks_exact(row_bytes.max(1)).rev() {
            north_first.extend_from_slice(row);
        }
        Ok(north_first)
    }

    /// Plane `plane`'s bytes of grid rows `r0..r0 + rows` (south first), from the band files.
    pub fn read_plane(&self, plane: Plane, r0: u32, rows: u32, out: &mut [u8]) -> io::Result<()> {
        let cols = self.grid.cols as usize;
        let row_bytes = cols * plane.bytes();
        assert_eq!(out.len(), rows as usize * row_bytes);
        let mut row = r0;
        while row < r0 + rows {
            let (b0, brows) = self.band_of(row);
            let take = (b0 + brows).min(r0 + rows) - row;
            let path = self.path(b0, brows);
            let file = std::fs::File::open(&path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            let base = self.layout.offset(plane, cols * brows as usize).ok_or_else(|| io::Error::other(format!("the band files hold no {plane:?} plane")))?;
            let at = base + ((row - b0) as usize * row_bytes) as u64;
            let dst = (row - r0) as usize * row_bytes;
            read_exact_at(&file, &mut out[dst..dst + take as usize * row_bytes], at).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            row += take;
        }
        Ok(())
    }

    /// Every family's probability per post of band (r0, rows) for flora class `class`:
    /// (count a post, entries).
    pub fn read_probabilities(&self, r0: u32, rows: u32, class: usize, meta: &BandMeta) -> io::Result<BandProbabilities> {
        let posts = self.grid.cols as usize * rows as usize;
        let path = self.path(r0, rows);
        let file = std::fs::File::open(&path)?;
        let (counts_at, entries_at) = meta.probability_offsets[class];
        let mut counts = vec![0u8; posts * 2];
        read_exact_at(&file, &mut counts, counts_at)?;
        let counts: Vec<u16> = counts.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
        let total: usize = counts.iter().map(|&c| usize::from(c)).sum();
        let mut entries = vec![0u8; total * 8];
        read_exact_at(&file, &mut entries, entries_at)?;
        let entries = entries
            .chunks_exact(8)
            .map(|b| (i32::from_le_bytes(b[..4].try_into().expect("4 bytes")), f32::from_le_bytes(b[4..].try_into().expect("4 bytes"))))
            .collect();
        Ok((counts, entries))
    }
}

/// The pairs (family, byte) of one post of the Splat plane (4 family ids, then 4 bytes; id 0:
/// unused slot).
pub(crate) fn splat_pairs(post: &[u8]) -> impl Iterator<Item = (i32, u8)> + '_ {
    (0..4).map(|k| (i32::from_le_bytes([post[k * 4], post[k * 4 + 1], post[k * 4 + 2], post[k * 4 + 3]]), post[16 + k])).filter(|p| p.0 != 0)
}

/// Bytes of `shares` (non-negative, summing to 255) that sum to exactly 255: each share's
/// floor, then one more for the largest remainders (ties to the first), so no rounding
/// leaves a post with 254 or 256. Shared by the splat plane and the engine splat maps
/// resampled from it.
pub fn largest_remainder_bytes(shares: &[f32], out: &mut [u8]) {
    let mut given = 0u32;
    for (o, s) in out.iter_mut().zip(shares) {
        *o = s.floor() as u8;
        given += u32::from(*o);
    }
    // The order is total (ties by index), so an unstable sort gives the stable order; up to 16
    // shares sort on the stack.
    let mut short = [0usize; 16];
    let mut long: Vec<usize>;
    let order: &mut [usize] = if shares.len() <= short.len() {
        &mut short[..shares.len()]
    } else {
        long = vec![0; shares.len()];
        &mut long
    };
    for (k, o) in order.iter_mut().enumerate() {
        *o = k;
    }
    order.sort_unstable_by(|&a, &b| (shares[b] - shares[b].floor()).total_cmp(&(shares[a] - shares[a].floor())).then(a.cmp(&b)));
    for &k in order.iter().take(255u32.saturating_sub(given) as usize) {
        out[k] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_the_grid_from_the_north_and_a_damaged_file_is_refused() {
        let grid = Grid { x0: 0.0, z0: 0.0, spacing: 1.0, cols: 3, rows: 300 };
        assert_eq!(bands_north_first(&grid, 128), vec![(256, 44), (128, 128), (0, 128)]);
        let dir = std::env::temp_dir().join(format!("trnbake-bands-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("b.bin");
        let meta = BandMeta { splat_families: vec![3, 9], ..Default::default() };
        let bytes = band_file_bytes(vec![7u8; 40], &meta);
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(verified_meta(&path, 40), Some(meta.clone()));
        assert_eq!(read_meta(&path).unwrap(), meta);
        assert_eq!(verified_meta(&path, 41 + bytes.len() as u64), None, "another layout");
        let mut bad = bytes.clone();
        bad[5] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        assert_eq!(verified_meta(&path, 40), None, "checksum");
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert_eq!(verified_meta(&path, 40), None, "truncated");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
