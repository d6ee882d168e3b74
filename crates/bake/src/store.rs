//! The checkpoint store of a bake: the folder layout (`bake-state.json`, `.trnbake-tiles/`),
//! the height tile files and their identity, and the folders a merge reads them from.
//!
//! Both stages checkpoint into it: the height stage a file per tile
//! (`.trnbake-tiles/r{R0}-c{C0}-{COLS}x{ROWS}.f32`), the surface stage a file per band
//! (`surface_bands`). Every checkpoint names, inside its checksummed bytes, the bake it belongs
//! to (a [`Fingerprint`] of the terrain, data, options and backend) and its place (the tile's or
//! band's rectangle), so a file copied from a neighbour, swapped with another or left by another
//! bake in the same folder is never taken for this one's: it is recomputed, with a note.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use trnbake_raster::source::{check_block, read_exact_at};
use trnbake_raster::HeightSource;
use trnbake_swg::eval::Grid;
use trnbake_swg::grid::{tiles, TileSpec};

use crate::{BakeParams, Shard};

/// The state file of a bake in progress or of a finished shard.
pub const STATE_FILE: &str = "bake-state.json";
/// The folder of the checkpoints inside an output folder.
pub const CHECKPOINT_DIR: &str = ".trnbake-tiles";

/// The identity of a bake's checkpoints: SHA-256 of everything that determines their values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    /// The height tiles' identity: the bake's parameters (terrain, plan, grid, tiles, options)
    /// and the backend class that computes them (a hardware GPU may differ from the CPU in the
    /// last bits). The shard is left out: the shards of one bake share it.
    pub fn of_heights(params: &BakeParams, backend_class: &str) -> Fingerprint {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        h.update(b"trnbake heights v2\0");
        h.update(serde_json::to_vec(params).expect("bake parameters serialise"));
        h.update(b"\0");
        h.update(backend_class.as_bytes());
        Fingerprint(h.finalize().into())
    }

    /// The surface bands' identity: the heights' and the surface maps' fingerprint.
    pub fn of_bands(heights: &Fingerprint, surface: &str, band_rows: u32) -> Fingerprint {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        h.update(b"trnbake bands v1\0");
        h.update(heights.0);
        h.update(surface.as_bytes());
        h.update(band_rows.to_le_bytes());
        Fingerprint(h.finalize().into())
    }

    pub fn hex(&self) -> String {
        trnbake_raster::hex(&self.0)
    }
}

/// The checkpoint of a bake in progress (or of a finished shard): what a resume compares and
/// what `merge` checks and rebuilds the bake from.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BakeState {
    pub params: BakeParams,
    pub shard: Option<Shard>,
    /// Which evaluator computed the checkpoints (`cpu`, or `gpu: ADAPTER (BACKEND)`): a
    /// hardware GPU may differ from the CPU in the last bits, so tiles of one are never
    /// resumed by the other.
    pub backend: String,
    pub complete: bool,
    /// The surface maps' fingerprint (`SurfaceMapsJob::fingerprint`) the surface band
    /// checkpoints were computed for, when any maps are wanted.
    #[serde(default)]
    pub surface: Option<String>,
    /// What the bake was asked for, so that `merge` writes what the unsharded bake writes.
    #[serde(default)]
    pub recipe: Option<crate::params::BakeRecipe>,
    /// What the manifest says of the backend (`cpu`/`gpu`, the adapter, where the surface
    /// maps ran), carried from the shards into the merged manifest.
    #[serde(default)]
    pub manifest_backend: Option<serde_json::Value>,
}

/// The file of tile `t` in the output (or shard) folder `outdir`.
pub fn tile_path(outdir: &Path, t: &TileSpec) -> PathBuf {
    outdir.join(CHECKPOINT_DIR).join(format!("r{}-c{}-{}x{}.f32", t.r0, t.c0, t.cols, t.rows))
}

/// The trailer after a tile's Float32 posts: this magic, the bake's [`Fingerprint`], the tile's
/// place (c0, r0, cols, rows as u32 LE), then the CRC-32 of everything before it. Tiles are
/// renamed into place without fsync, so a power loss can leave a file of the right size
/// holding zeros: the checksum tells it from a finished tile, and the identity tells a finished
/// tile of this bake and place from one of another.
const TILE_MAGIC: &[u8; 4] = b"TBK2";
const TILE_TRAILER: u64 = 4 + 32 + 16 + 4;

/// A checkpoint tile's bytes: the posts, then the trailer.
pub fn tile_bytes(data: &[f32], bake: &Fingerprint, t: &TileSpec) -> Vec<u8> {
    let posts: &[u8] = bytemuck::cast_slice(data);
    let mut out = Vec::with_capacity(posts.len() + TILE_TRAILER as usize);
    out.extend_from_slice(posts);
    out.extend_from_slice(TILE_MAGIC);
    out.extend_from_slice(&bake.0);
    for v in [t.c0, t.r0, t.cols, t.rows] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// What a checkpoint file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checkpoint {
    Missing,
    /// Finished, of this bake and place: the right size, and the bytes match their checksum.
    Done,
    /// Present but not a finished checkpoint (wrong size, no trailer, or a checksum mismatch).
    Damaged,
    /// A finished checkpoint of another bake, or of another tile or band.
    Foreign,
}

impl Checkpoint {
    /// Why a present checkpoint is recomputed, for the note a bake prints.
    pub fn why(self) -> &'static str {
        match self {
            Checkpoint::Damaged => "is damaged (size or checksum)",
            Checkpoint::Foreign => "belongs to another bake or place",
            Checkpoint::Missing | Checkpoint::Done => "",
        }
    }
}

/// Reads and verifies the checkpoint of tile `t` of bake `bake` at `path`.
pub fn tile_checkpoint(path: &Path, t: &TileSpec, bake: &Fingerprint) -> Checkpoint {
    let posts = u64::from(t.cols) * u64::from(t.rows) * 4;
    match std::fs::metadata(path) {
        Err(_) => return Checkpoint::Missing,
        Ok(m) if m.len() != posts + TILE_TRAILER => return Checkpoint::Damaged,
        Ok(_) => {}
    }
    let Ok(bytes) = std::fs::read(path) else { return Checkpoint::Damaged };
    let n = bytes.len();
    let (body, crc) = bytes.split_at(n - 4);
    if crc != crc32fast::hash(body).to_le_bytes() || &body[posts as usize..posts as usize + 4] != TILE_MAGIC {
        return Checkpoint::Damaged;
    }
    let trailer = &body[posts as usize + 4..];
    let mut place = [0u32; 4];
    for (k, v) in place.iter_mut().enumerate() {
        *v = u32::from_le_bytes(trailer[32 + 4 * k..36 + 4 * k].try_into().expect("4 bytes"));
    }
    if trailer[..32] != bake.0 || place != [t.c0, t.r0, t.cols, t.rows] {
        return Checkpoint::Foreign;
    }
    Checkpoint::Done
}

/// Remove the surface band checkpoints of a checkpoint folder, keeping the height tiles.
pub fn remove_surface_bands(tile_dir: &Path) {
    for e in std::fs::read_dir(tile_dir).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with("surface-") {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The finished tile checkpoints of a bake (in one folder, or spread over shard folders) as
/// one [`HeightSource`]: blocks are read straight from the tile files with positioned reads,
/// so writing the outputs never holds the whole grid (a 16385² bake is 1 GiB of f32).
pub struct CheckpointSource {
    grid: Grid,
    tile: u32,
    tiles_x: u32,
    /// Tile files in [`tiles`] order (row-major from the south-west).
    files: Vec<PathBuf>,
}

impl CheckpointSource {
    /// Find every tile of `grid` of bake `bake` in `sources` (a verified file), or name the
    /// first missing or damaged one.
    pub fn new(grid: &Grid, tile: u32, sources: &[PathBuf], bake: &Fingerprint) -> crate::Result<Self> {
        let mut files = Vec::new();
        for t in tiles(grid, tile) {
            let found: Vec<(PathBuf, Checkpoint)> = sources
                .iter()
                .map(|s| tile_path(s, &t))
                .map(|p| {
                    let c = tile_checkpoint(&p, &t, bake);
                    (p, c)
                })
                .collect();
            match found.iter().find(|(_, c)| *c == Checkpoint::Done) {
                Some((p, _)) => files.push(p.clone()),
                None => match found.iter().find(|(_, c)| *c != Checkpoint::Missing) {
                    Some((p, c)) => {
                        let (col, row, path) = (t.c0, t.r0, p.clone());
                        return Err(match c {
                            Checkpoint::Foreign => crate::Error::TileForeign { col, row, path },
                            _ => crate::Error::TileDamaged { col, row, path },
                        });
                    }
                    None => return Err(crate::Error::TileMissing { col: t.c0, row: t.r0 }),
                },
            }
        }
        Ok(Self::with_files(grid, tile, files))
    }

    /// The checkpoints a bake into `outdir` is still writing: every tile's file name, whether
    /// it exists yet or not (a `row_progress::StreamedCheckpoints` reads a tile only once it is done).
    pub fn pending(grid: &Grid, tile: u32, outdir: &Path) -> Self {
        let files = tiles(grid, tile).iter().map(|t| tile_path(outdir, t)).collect();
        Self::with_files(grid, tile, files)
    }

    fn with_files(grid: &Grid, tile: u32, files: Vec<PathBuf>) -> Self {
        Self { grid: *grid, tile, tiles_x: grid.cols.div_ceil(tile), files }
    }
}

impl HeightSource for CheckpointSource {
    fn grid(&self) -> Grid {
        self.grid
    }

    fn read_block(&self, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [f32]) -> std::io::Result<()> {
        check_block(&self.grid, c0, r0, cols, rows, out)?;
        if cols == 0 || rows == 0 {
            return Ok(());
        }
        let t = self.tile;
        let mut buf = Vec::new();
        for ty in r0 / t..=(r0 + rows - 1) / t {
            for tx in c0 / t..=(c0 + cols - 1) / t {
                let path = &self.files[(ty * self.tiles_x + tx) as usize];
                let file = std::fs::File::open(path).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
                let (tc0, tr0) = (tx * t, ty * t);
                let tile_cols = t.min(self.grid.cols - tc0);
                // The part of this tile inside the block.
                let (a, b) = (c0.max(tc0), (c0 + cols).min(tc0 + tile_cols));
                let (ra, rb) = (r0.max(tr0), (r0 + rows).min(tr0 + t));
                buf.resize((b - a) as usize * 4, 0);
                for r in ra..rb {
                    let pos = (u64::from(r - tr0) * u64::from(tile_cols) + u64::from(a - tc0)) * 4;
                    read_exact_at(&file, &mut buf, pos).map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
                    let dst = (r - r0) as usize * cols as usize + (a - c0) as usize;
                    for (h, c) in out[dst..dst + (b - a) as usize].iter_mut().zip(buf.chunks_exact(4)) {
                        *h = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("trnbake-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join(CHECKPOINT_DIR)).unwrap();
        d
    }

    #[test]
    fn a_tile_is_only_taken_by_its_own_bake_and_place() {
        let dir = tmp("identity");
        let (a, b) = (Fingerprint([1; 32]), Fingerprint([2; 32]));
        let t = TileSpec { c0: 0, r0: 0, cols: 3, rows: 2 };
        let u = TileSpec { c0: 3, r0: 0, cols: 3, rows: 2 };
        let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let path = tile_path(&dir, &t);
        assert_eq!(tile_checkpoint(&path, &t, &a), Checkpoint::Missing);
        std::fs::write(&path, tile_bytes(&data, &a, &t)).unwrap();
        assert_eq!(tile_checkpoint(&path, &t, &a), Checkpoint::Done);
        assert_eq!(tile_checkpoint(&path, &t, &b), Checkpoint::Foreign, "another bake's tile");
        // The neighbour's file copied over this one: right size and checksum, wrong place.
        std::fs::write(&path, tile_bytes(&data, &a, &u)).unwrap();
        assert_eq!(tile_checkpoint(&path, &t, &a), Checkpoint::Foreign, "another tile's file");
        let mut bytes = tile_bytes(&data, &a, &t);
        bytes[5] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(tile_checkpoint(&path, &t, &a), Checkpoint::Damaged, "a flipped bit");
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert_eq!(tile_checkpoint(&path, &t, &a), Checkpoint::Damaged, "a short file");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
