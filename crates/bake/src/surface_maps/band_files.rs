//! Surface band checkpoints: the per-post values every requested surface map is written from,
//! one file per band of rows, so that the surface passes stream (memory bounded by a band, not
//! the grid), the map writers read each band as soon as it is finished, and a killed bake
//! resumes with the bands it has.
//!
//! A band file (`.trnbake-tiles/surface-r{R0}-{ROWS}.bin`) holds the band's posts (row-major
//! from the south) in chunks of [`CHUNK_ROWS`] rows: per chunk, one block per [`Plane`] of the
//! [`BandLayout`] (its fixed-size values, LZ4-compressed unless that saves too little; see
//! [`pack_block`]). Then come the flora probabilities of every family per post and class (when
//! the per-family maps or the scatter are wanted: per class a `u16` count a post, then
//! `(i32 family, f32 probability)` entries), then a JSON [`BandMeta`] (with the blocks'
//! sizes) and its length, then the tile checkpoints' trailer (`TBK1` and the CRC-32 of
//! everything before it).
//!
//! Why compressed: the ids, masks and splat weights repeat over large areas, so a full 2 m
//! planet's checkpoints shrink from 76 to about 13 bytes a post (5.1 GB → 0.86 GB on disk and in
//! the page cache), and writing them was the surface stage's largest single cost.
//!
//! The values of the last two bands written are also held in memory ([`BandSet::hold`]): the
//! map writers that stream read a band soon after it is finished, and decoding the blocks
//! read back from the files took 2.4 % of an every-map bake's CPU (1.4 % now, the whole-grid
//! writers'). The files remain what a resume, a merge and the writers that need the whole
//! grid read.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use trnbake_raster::source::read_exact_at;
use trnbake_swg::grid::{Grid, TileSpec};

use crate::row_progress::RowProgress;
use crate::store::{Checkpoint, Fingerprint};

/// One per-post value of a band file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Plane {
    /// The normals map's RGB bytes.
    Normals,
    /// The preview's RGB bytes where they do not depend on the grid's height range (a shader
    /// family's legend colour, water), else 0.
    Preview,
    /// The preview's hillshade (f32) of the posts tinted by height, whose colour needs the
    /// whole grid's height range and is made by the writer ([`PREVIEW_COLOURED`] elsewhere):
    /// a shard knows no such range.
    PreviewShade,
    /// The dominant shader family (f32, as `shader_id.tif` encodes it).
    ShaderId,
    /// The post's splat byte of each family of the band ([`BandMeta::splat_families`]), a
    /// block per family (0 where the post lacks it), so that each `splat_k.png` reads only
    /// its own four families.
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
    /// The slope in degrees (f32, `trnbake_swg::spawn::slope_degrees`).
    Slope,
    /// The spawnable code byte (`trnbake_swg::spawn`).
    Spawnable,
}

impl Plane {
    /// Bytes a post (of each family's block, for [`Plane::Splat`]).
    pub fn bytes(self) -> usize {
        match self {
            Plane::Normals | Plane::Preview | Plane::Color => 3,
            Plane::ShaderId | Plane::FloraId(_) | Plane::FloraProbability(_) | Plane::WaterLevel | Plane::Environment | Plane::PreviewShade | Plane::Slope => 4,
            Plane::WaterMask | Plane::Exclude | Plane::Passable | Plane::Splat | Plane::Spawnable => 1,
        }
    }
}

/// What a band file holds: its planes, in order, and whether the probabilities follow.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BandLayout {
    pub planes: Vec<Plane>,
    pub probabilities: bool,
}

/// The [`Plane::PreviewShade`] of a post whose preview colour is final in [`Plane::Preview`]
/// (no hillshade is negative).
pub const PREVIEW_COLOURED: f32 = -1.0;

/// What a band found that the maps need over the whole grid.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BandMeta {
    /// The bake this band belongs to ([`crate::store::Fingerprint::of_bands`], hex) and its
    /// place (first grid row, rows): inside the checksummed bytes, so a band file of another
    /// bake or another band is never taken for this one.
    #[serde(default)]
    pub bake: String,
    #[serde(default)]
    pub place: (u32, u32),
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
    /// The stored size of every block of planes, chunk by chunk (from the south) and plane by
    /// plane (the layout's order) within a chunk, the blocks following one another from the
    /// file's start: `4 · bytes + kind` (0 LZ4, 1 stored as it is, 2 runs; see [`pack_block`]).
    pub blocks: Vec<u64>,
}

/// Rows of a chunk of a band file: the unit its planes are compressed in (and what a reader of
/// a few rows decompresses). Eight rows of a full planet (8193 posts) make 64 Ki posts a chunk,
/// and a band of 128 rows 16 chunks, which the band's threads encode in parallel.
pub const CHUNK_ROWS: u32 = 8;

/// The chunks of a band of `rows` rows, as (first row in the band, rows).
pub fn band_chunks(rows: u32) -> impl Iterator<Item = (u32, u32)> {
    (0..rows).step_by(CHUNK_ROWS as usize).map(move |r| (r, CHUNK_ROWS.min(rows - r)))
}

/// The blocks of a chunk, in order: a block per plane of `planes`, the Splat plane's one per
/// splat family of the band (`splat_families` of them).
pub fn chunk_blocks(planes: &[Plane], splat_families: usize) -> impl Iterator<Item = Plane> + '_ {
    planes.iter().flat_map(move |&p| std::iter::repeat_n(p, if p == Plane::Splat { splat_families } else { 1 }))
}

/// Append `raw` (values of `unit` bytes) to `out` as one block of a band file; returns its
/// [`BandMeta::blocks`] entry. A block is stored as runs of equal values when they are long
/// (ids, masks and splat weights mostly; LZ4's overlapping copies of such runs decode a byte
/// at a time), else LZ4-compressed when that saves at least a quarter, else as it is. A long
/// block whose first [`LZ4_PROBE`] bytes do not shrink by a third is stored without
/// compressing the rest. Why so demanding: compressing and decoding a byte cost more CPU than
/// the two page copies (write, read back) of a byte stored, so LZ4 pays where it saves most of
/// a block (ids, flora probabilities: 4 bytes a post to about 0.6); on the noisy planes
/// (normals, colour, shaded preview, which it shrank by 0–27 %) it spent a third of the
/// encoder's LZ4 time to save 1.2 bytes a post (docs/src/performance.md).
pub fn pack_block(raw: &[u8], unit: usize, out: &mut Vec<u8>) -> u64 {
    let start = out.len();
    // The values as fixed-size arrays, so that comparing them is a compare, not a call.
    let runs = match unit {
        1 => pack_runs::<1>(raw, out),
        3 => pack_runs::<3>(raw, out),
        4 => pack_runs::<4>(raw, out),
        _ => false,
    };
    let kind = if runs {
        BlockKind::Runs
    } else if raw.len() >= 4 * LZ4_PROBE && with_lz4(&raw[..LZ4_PROBE], |packed| packed.len() * 3 > LZ4_PROBE * 2) {
        // The probe did not shrink by a third.
        out.extend_from_slice(raw);
        BlockKind::Stored
    } else {
        with_lz4(raw, |packed| {
            if packed.len() * 4 <= raw.len() * 3 {
                out.extend_from_slice(packed);
                BlockKind::Lz4
            } else {
                out.extend_from_slice(raw);
                BlockKind::Stored
            }
        })
    };
    4 * (out.len() - start) as u64 + kind as u64
}

/// Bytes of a block [`pack_block`] tries LZ4 on first.
const LZ4_PROBE: usize = 16 * 1024;

/// `then(the LZ4 block of raw)`, compressed into a buffer the thread keeps: zeroing room
/// for the worst case before each block (the output must be initialised) cost a sixth of
/// LZ4's own instructions (docs/src/performance.md).
fn with_lz4<R>(raw: &[u8], then: impl FnOnce(&[u8]) -> R) -> R {
    thread_local! {
        static PACKED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    PACKED.with_borrow_mut(|packed| {
        let room = lz4_flex::block::get_maximum_output_size(raw.len());
        if packed.len() < room {
            packed.resize(room, 0);
        }
        // `compress_into` fails only on too little room, which `room` rules out; a failure
        // reads as a block that did not shrink.
        match lz4_flex::block::compress_into(raw, &mut packed[..room]) {
            Ok(n) => then(&packed[..n]),
            Err(_) => then(raw),
        }
    })
}

/// Append `raw` to `out` as (count, value) runs if they take at most a sixteenth of it.
fn pack_runs<const U: usize>(raw: &[u8], out: &mut Vec<u8>) -> bool {
    let values = || raw.chunks_exact(U).map(|v| <[u8; U]>::try_from(v).expect("U bytes"));
    // Counted until there are too many (a noisy plane stops within its first few values).
    let most = raw.len() / ((RUN_COUNT_BYTES + U) * 16);
    if raw.len() < U || most == 0 || values().zip(values().skip(1)).filter(|(a, b)| a != b).nth(most - 1).is_some() {
        return false;
    }
    let mut run: Option<([u8; U], u32)> = None;
    for v in values() {
        match &mut run {
            Some((value, n)) if *value == v => *n += 1,
            _ => {
                if let Some((value, n)) = run {
                    out.extend_from_slice(&n.to_le_bytes());
                    out.extend_from_slice(&value);
                }
                run = Some((v, 1));
            }
        }
    }
    if let Some((value, n)) = run {
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&value);
    }
    true
}

/// Bytes of a run's count (u32 LE) in a [`BlockKind::Runs`] block.
const RUN_COUNT_BYTES: usize = 4;

/// How a block of a band file is stored (the low two bits of its [`BandMeta::blocks`] entry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockKind {
    Lz4 = 0,
    Stored = 1,
    /// (count u32, value) runs.
    Runs = 2,
}

/// Where a block lies in its band file and how it is stored.
#[derive(Clone, Copy, Debug)]
struct BlockAt {
    offset: u64,
    stored: u64,
    kind: BlockKind,
    /// Bytes of a value.
    unit: usize,
}

impl BlockAt {
    /// The block's values, `len` bytes of them, from its `stored` bytes. LZ4 decodes into
    /// fresh capacity (bounds-checked by `lz4_flex`), so the values are not zeroed first.
    fn decode(&self, stored: &[u8], len: usize) -> Result<Vec<u8>, &'static str> {
        match self.kind {
            BlockKind::Stored if stored.len() == len => Ok(stored.to_vec()),
            BlockKind::Stored => Err("a stored block of the wrong length"),
            BlockKind::Lz4 => match lz4_flex::block::decompress(stored, len) {
                Ok(values) if values.len() == len => Ok(values),
                _ => Err("a damaged LZ4 block"),
            },
            BlockKind::Runs => {
                let mut out = vec![0u8; len];
                let mut at = 0;
                for run in stored.chunks_exact(RUN_COUNT_BYTES + self.unit) {
                    let n = u32::from_le_bytes(run[..RUN_COUNT_BYTES].try_into().expect("4 bytes")) as usize;
                    let end = n.checked_mul(self.unit).and_then(|b| b.checked_add(at)).filter(|&end| end <= out.len() && n > 0).ok_or("a damaged run")?;
                    fill_pattern(&mut out[at..end], &run[RUN_COUNT_BYTES..]);
                    at = end;
                }
                if at != out.len() {
                    return Err("runs of the wrong length");
                }
                Ok(out)
            }
        }
    }
}

/// Fill `dst` with copies of `pattern` (its length a multiple of the pattern's), doubling the
/// copied part each time.
fn fill_pattern(dst: &mut [u8], pattern: &[u8]) {
    if let [b] = pattern {
        dst.fill(*b);
        return;
    }
    let mut filled = pattern.len().min(dst.len());
    dst[..filled].copy_from_slice(&pattern[..filled]);
    while filled < dst.len() {
        let n = filled.min(dst.len() - filled);
        dst.copy_within(..n, filled);
        filled += n;
    }
}

/// The blocks of one band file: `per_chunk` a chunk, in the layout's order (the Splat plane's
/// a family at a time).
struct BandIndex {
    blocks: Vec<BlockAt>,
    per_chunk: usize,
    /// Each layout plane's first block in a chunk.
    first: Vec<usize>,
    /// The band's splat families: the order of the Splat plane's blocks.
    splat_families: Vec<i32>,
}

impl BandIndex {
    /// The block of splat family `family` in a chunk (the Splat plane being layout plane `p`),
    /// if the band has it.
    fn splat_block(&self, p: usize, family: i32) -> Option<usize> {
        self.splat_families.binary_search(&family).ok().map(|k| self.first[p] + k)
    }

    /// The index of `meta`'s blocks, `None` unless it has one block per chunk and plane (and
    /// splat family) of `layout` for a band of `rows` rows, each of a plausible size, all
    /// before `body_end`.
    fn of(meta: &BandMeta, layout: &BandLayout, cols: usize, rows: u32, body_end: u64) -> Option<BandIndex> {
        let kinds: Vec<Plane> = chunk_blocks(&layout.planes, meta.splat_families.len()).collect();
        let first = layout.planes.iter().map(|p| kinds.iter().position(|k| k == p).unwrap_or(kinds.len())).collect();
        let per_chunk = kinds.len();
        if meta.blocks.len() != band_chunks(rows).count() * per_chunk || !meta.splat_families.is_sorted() {
            return None;
        }
        let mut blocks = Vec::with_capacity(meta.blocks.len());
        let mut offset = 0u64;
        let mut entries = meta.blocks.iter();
        for (_, chunk_rows) in band_chunks(rows) {
            for (&plane, &entry) in kinds.iter().zip(entries.by_ref()) {
                let (stored, unit) = (entry / 4, plane.bytes());
                let raw_len = (cols * chunk_rows as usize * unit) as u64;
                let kind = [BlockKind::Lz4, BlockKind::Stored, BlockKind::Runs].into_iter().find(|k| *k as u64 == entry % 4)?;
                // An LZ4 block expands at most 255-fold; a stored one is exactly the raw size;
                // runs are whole (count, value) pairs.
                let plausible = match kind {
                    BlockKind::Lz4 => stored > 0 && stored.saturating_mul(255) >= raw_len,
                    BlockKind::Stored => stored == raw_len,
                    BlockKind::Runs => stored > 0 && stored % (RUN_COUNT_BYTES + unit) as u64 == 0,
                };
                if !plausible {
                    return None;
                }
                blocks.push(BlockAt { offset, stored, kind, unit });
                offset = offset.checked_add(stored)?;
            }
        }
        (offset <= body_end).then_some(BandIndex { blocks, per_chunk, first, splat_families: meta.splat_families.clone() })
    }
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

/// What the band file at `path` holds for band (`r0`, `rows`) of bake `bake`, with its meta
/// when it is finished: the right trailer and checksum, this bake and place, and the blocks of
/// `layout` for a band of `cols` × `rows` posts.
pub fn band_checkpoint(path: &Path, layout: &BandLayout, cols: u32, r0: u32, rows: u32, bake: &Fingerprint) -> (Checkpoint, Option<BandMeta>) {
    let Ok(bytes) = std::fs::read(path) else { return (Checkpoint::Missing, None) };
    let n = bytes.len();
    if n < 12 || &bytes[n - 8..n - 4] != MAGIC || bytes[n - 4..] != crc32fast::hash(&bytes[..n - 8]).to_le_bytes() {
        return (Checkpoint::Damaged, None);
    }
    let meta = (|| {
        let len = u32::from_le_bytes(bytes[n - 12..n - 8].try_into().ok()?) as usize;
        let start = (n - 12).checked_sub(len)?;
        let meta: BandMeta = serde_json::from_slice(&bytes[start..n - 12]).ok()?;
        Some((meta, start))
    })();
    let Some((meta, start)) = meta else { return (Checkpoint::Damaged, None) };
    if meta.bake != bake.hex() || meta.place != (r0, rows) {
        return (Checkpoint::Foreign, None);
    }
    if BandIndex::of(&meta, layout, cols as usize, rows, start as u64).is_none() {
        return (Checkpoint::Foreign, None);
    }
    (Checkpoint::Done, Some(meta))
}

/// The meta of a band file already verified (or just written) by this bake.
pub fn read_meta(path: &Path) -> io::Result<BandMeta> {
    read_meta_and_body_end(path).map(|(meta, _)| meta)
}

/// [`read_meta`], and where the meta starts (the end of the blocks and probabilities).
fn read_meta_and_body_end(path: &Path) -> io::Result<(BandMeta, u64)> {
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(named)?;
    let n = file.metadata().map_err(named)?.len();
    let mut tail = [0u8; 12];
    read_exact_at(&file, &mut tail, n.checked_sub(12).ok_or_else(|| named(io::Error::other("short band file")))?).map_err(named)?;
    let len = u64::from(u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")));
    let start = (n - 12).checked_sub(len).ok_or_else(|| named(io::Error::other("band meta longer than the file")))?;
    let mut json = vec![0u8; len as usize];
    read_exact_at(&file, &mut json, start).map_err(named)?;
    let meta = serde_json::from_slice(&json).map_err(|e| named(io::Error::other(e)))?;
    Ok((meta, start))
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

/// Band (r0, rows) of `grid` as a full-width tile, for [`RowProgress`].
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
    /// The checkpoint folders bands are looked up in (a bake's own first, where it writes the
    /// bands it computes; a merge's are the shards').
    dirs: Vec<PathBuf>,
    /// The bake the bands belong to.
    pub bake: Fingerprint,
    /// Where each finished band was found (by first row), when not in the first folder.
    located: std::sync::Mutex<std::collections::HashMap<u32, PathBuf>>,
    /// Which bands are finished (a band is one full-width "tile" of `band_rows` rows), the
    /// same bookkeeping as the height tiles' (`row_progress::RowProgress`).
    progress: RowProgress,
    /// Each finished band file's blocks (keyed by its first row), read at its first read.
    indexes: std::sync::Mutex<std::collections::HashMap<u32, std::sync::Arc<BandIndex>>>,
    /// The blocks decompressed last: readers of a few rows (a GeoTIFF strip, the row above a
    /// PNG job) straddle chunks, and their neighbours read the same ones.
    recent: std::sync::Mutex<std::collections::VecDeque<(BlockKey, std::sync::Arc<Vec<u8>>)>>,
    /// The values of the bands finished last ([`BandSet::hold`]), by first row, oldest first:
    /// the streamed writers read them from here instead of reading and decoding their files.
    held: std::sync::Mutex<std::collections::VecDeque<(u32, std::sync::Arc<BlockValues>)>>,
    /// Chunk blocks read from [`BandSet::held`] bands and from band files ([`BandReads`]).
    reads_held: std::sync::atomic::AtomicU64,
    reads_from_files: std::sync::atomic::AtomicU64,
}

/// Each block's values of a band (or of a chunk), in a band file's order ([`BandMeta::blocks`]).
pub type BlockValues = Vec<Vec<u8>>;

/// How the map writers read the bands: chunk blocks from the bands held in memory and from the
/// band files (bands no longer held: those the writers reached late, resumed or merged ones).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BandReads {
    pub held: u64,
    pub from_files: u64,
}

/// Bands [`BandSet::hold`] keeps: the streamed writers read a band soon after it is finished
/// (at 2 m on 2 cores, 98 % of their reads found it among the last two; 100 % among the last
/// three, for 100 MB more), and the ones that reach it later read its file. A band of a
/// planet's default maps is ~75 bytes a post, 80 MB at 2 m and 160 MB at 1 m.
const HELD_BANDS: usize = 2;

/// The order of the rows [`BandSet::read_blocks`] puts out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Order {
    SouthFirst,
    /// File order: row 0 is the north edge.
    NorthFirst,
}

/// A block of a band file: the band's first row, the chunk's index in the band and the
/// block's in the chunk.
type BlockKey = (u32, u32, usize);

/// Blocks [`BandSet::recent`] keeps: a few for each of the map writers reading at once.
const RECENT_BLOCKS: usize = 64;

impl BandSet {
    /// The bands of `grid` in the checkpoint folders `dirs` (non-empty; bands this bake
    /// computes go to the first).
    pub fn new(grid: Grid, layout: BandLayout, band_rows: u32, dirs: Vec<PathBuf>, bake: Fingerprint) -> Self {
        assert!(!dirs.is_empty(), "a band set has a folder");
        let all: Vec<TileSpec> = bands_north_first(&grid, band_rows).into_iter().map(|(r0, rows)| band_tile(&grid, r0, rows)).collect();
        let progress = RowProgress::new(&grid, band_rows, &all);
        BandSet {
            grid,
            layout,
            band_rows,
            dirs,
            bake,
            located: Default::default(),
            progress,
            indexes: Default::default(),
            recent: Default::default(),
            held: Default::default(),
            reads_held: Default::default(),
            reads_from_files: Default::default(),
        }
    }

    /// Keep the values of band (r0, rows), just written with `meta` (`blocks`: each block's
    /// values in the file's order), for the writers to read without its file; the oldest held
    /// band is let go past [`HELD_BANDS`]. Call before [`BandSet::done`] marks it finished.
    pub fn hold(&self, r0: u32, rows: u32, meta: &BandMeta, blocks: BlockValues) {
        let cols = self.grid.cols as usize;
        // (A meta that does not fit the layout is this bake's bug: the writers then read the
        // file, which refuses it with its name.)
        let Some(index) = BandIndex::of(meta, &self.layout, cols, rows, u64::MAX) else { return };
        let sizes = band_chunks(rows).flat_map(|(_, n)| index.blocks[..index.per_chunk].iter().map(move |at| cols * n as usize * at.unit));
        if blocks.len() != index.blocks.len() || !sizes.zip(&blocks).all(|(n, b)| b.len() == n) {
            debug_assert!(false, "the held blocks of band {r0} are not its meta's");
            return;
        }
        self.indexes.lock().unwrap_or_else(|e| e.into_inner()).insert(r0, std::sync::Arc::new(index));
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.push_back((r0, std::sync::Arc::new(blocks)));
        if held.len() > HELD_BANDS {
            held.pop_front();
        }
    }

    /// How the writers read the bands so far.
    pub fn reads(&self) -> BandReads {
        use std::sync::atomic::Ordering::Relaxed;
        BandReads { held: self.reads_held.load(Relaxed), from_files: self.reads_from_files.load(Relaxed) }
    }

    /// Looks band (r0, rows) up in every folder: finished in one of them (which its reads then
    /// use), or what the first folder holding a file of it holds (damaged or foreign), or
    /// missing.
    pub fn locate(&self, r0: u32, rows: u32) -> Checkpoint {
        let mut seen = Checkpoint::Missing;
        for dir in &self.dirs {
            let path = band_path(dir, r0, rows);
            match band_checkpoint(&path, &self.layout, self.grid.cols, r0, rows, &self.bake).0 {
                Checkpoint::Done => {
                    self.located.lock().unwrap_or_else(|e| e.into_inner()).insert(r0, path);
                    return Checkpoint::Done;
                }
                Checkpoint::Missing => {}
                other if seen == Checkpoint::Missing => seen = other,
                _ => {}
            }
        }
        seen
    }

    /// The bands, north first, as (first grid row, rows).
    pub fn bands(&self) -> Vec<(u32, u32)> {
        bands_north_first(&self.grid, self.band_rows)
    }

    /// The file of band (r0, rows): where [`BandSet::locate`] found it, else in the first folder.
    pub fn path(&self, r0: u32, rows: u32) -> PathBuf {
        match self.located.lock().unwrap_or_else(|e| e.into_inner()).get(&r0) {
            Some(p) => p.clone(),
            None => band_path(&self.dirs[0], r0, rows),
        }
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

    /// The blocks of the finished band (r0, rows).
    fn index(&self, r0: u32, rows: u32) -> io::Result<std::sync::Arc<BandIndex>> {
        let mut indexes = self.indexes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(index) = indexes.get(&r0) {
            return Ok(index.clone());
        }
        let path = self.path(r0, rows);
        let (meta, body_end) = read_meta_and_body_end(&path)?;
        let index = BandIndex::of(&meta, &self.layout, self.grid.cols as usize, rows, body_end)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("{}: the blocks are not those of this bake's planes", path.display())))?;
        let index = std::sync::Arc::new(index);
        indexes.insert(r0, index.clone());
        Ok(index)
    }

    /// Plane `plane`'s bytes of file rows `rows` (0 = the north edge) into `out`, north row
    /// first: what the image writers read.
    pub fn read_plane_north(&self, plane: Plane, rows: std::ops::Range<u32>, out: &mut [u8]) -> io::Result<()> {
        let p = self.plane_index(plane)?;
        self.read_blocks(plane.bytes(), self.grid.rows - rows.end, rows.len() as u32, Order::NorthFirst, out, |index| Some(index.first[p]))
    }

    /// Family `family`'s splat bytes of file rows `rows` into `out`, north row first.
    pub fn read_splat_north(&self, family: i32, rows: std::ops::Range<u32>, out: &mut [u8]) -> io::Result<()> {
        let p = self.splat_index()?;
        self.read_blocks(1, self.grid.rows - rows.end, rows.len() as u32, Order::NorthFirst, out, |index| index.splat_block(p, family))
    }

    /// Plane `plane`'s bytes of grid rows `r0..r0 + rows` (south first), from the band files
    /// (not the Splat plane: [`BandSet::read_splat`]).
    pub fn read_plane(&self, plane: Plane, r0: u32, rows: u32, out: &mut [u8]) -> io::Result<()> {
        let p = self.plane_index(plane)?;
        self.read_blocks(plane.bytes(), r0, rows, Order::SouthFirst, out, |index| Some(index.first[p]))
    }

    /// Family `family`'s splat bytes of grid rows `r0..r0 + rows` (south first): 0 in the
    /// bands without it.
    pub fn read_splat(&self, family: i32, r0: u32, rows: u32, out: &mut [u8]) -> io::Result<()> {
        let p = self.splat_index()?;
        self.read_blocks(1, r0, rows, Order::SouthFirst, out, |index| index.splat_block(p, family))
    }

    /// The position of `plane` (not the Splat plane) in the layout.
    fn plane_index(&self, plane: Plane) -> io::Result<usize> {
        let p = self.layout.planes.iter().position(|&x| x == plane).filter(|_| plane != Plane::Splat);
        p.ok_or_else(|| io::Error::other(format!("the band files hold no {plane:?} plane")))
    }

    /// The position of the Splat plane in the layout.
    fn splat_index(&self) -> io::Result<usize> {
        self.layout.planes.iter().position(|&x| x == Plane::Splat).ok_or_else(|| io::Error::other("the band files hold no splat weights"))
    }

    /// Grid rows `r0..r0 + rows` of the blocks `block(band)` picks in each chunk of each band
    /// (`bytes` a post; zeros where it picks none) into `out`, in `order`: copied from a band
    /// held in memory, else from its file, where stored blocks are read in place and the
    /// others decoded a chunk at a time.
    fn read_blocks(&self, bytes: usize, r0: u32, rows: u32, order: Order, out: &mut [u8], block: impl Fn(&BandIndex) -> Option<usize>) -> io::Result<()> {
        let row_bytes = self.grid.cols as usize * bytes;
        assert_eq!(out.len(), rows as usize * row_bytes);
        // Grid rows first..first + n as rows of `out`: where they start, and whether reversed.
        let place = |first: u32, n: u32| -> (std::ops::Range<usize>, bool) {
            let (a, b) = match order {
                Order::SouthFirst => (first - r0, first + n - r0),
                Order::NorthFirst => (r0 + rows - (first + n), r0 + rows - first),
            };
            (a as usize * row_bytes..b as usize * row_bytes, order == Order::NorthFirst)
        };
        // Copy `n` rows of `src` (south first) to their rows of `out`.
        let put = |out: &mut [u8], first: u32, src: &[u8]| {
            let (range, reversed) = place(first, (src.len() / row_bytes.max(1)) as u32);
            if reversed {
                for (dst, row) in out[range].chunks_exact_mut(row_bytes.max(1)).zip(src.chunks_exact(row_bytes.max(1)).rev()) {
                    dst.copy_from_slice(row);
                }
            } else {
                out[range].copy_from_slice(src);
            }
        };
        // Where a band's values are read from.
        enum From {
            Held(std::sync::Arc<BlockValues>),
            File(std::fs::File),
        }
        let mut scratch = Vec::new();
        let mut row = r0;
        while row < r0 + rows {
            let (b0, brows) = self.band_of(row);
            let end = (b0 + brows).min(r0 + rows);
            let index = self.index(b0, brows)?;
            let Some(which) = block(&index) else {
                out[place(row, end - row).0].fill(0);
                row = end;
                continue;
            };
            let held = self.held.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(at, _)| *at == b0).map(|(_, blocks)| blocks.clone());
            let path = self.path(b0, brows);
            let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
            let from = match held {
                Some(blocks) => From::Held(blocks),
                None => From::File(std::fs::File::open(&path).map_err(named)?),
            };
            while row < end {
                let chunk = (row - b0) / CHUNK_ROWS;
                let c0 = b0 + chunk * CHUNK_ROWS;
                let crows = CHUNK_ROWS.min(b0 + brows - c0);
                let take = (c0 + crows).min(end) - row;
                let k = chunk as usize * index.per_chunk + which;
                let at = index.blocks[k];
                let len = take as usize * row_bytes;
                match &from {
                    From::Held(blocks) => {
                        self.reads_held.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        put(out, row, &blocks[k][(row - c0) as usize * row_bytes..][..len]);
                    }
                    From::File(file) if at.kind == BlockKind::Stored => {
                        self.reads_from_files.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let offset = at.offset + ((row - c0) as usize * row_bytes) as u64;
                        match order {
                            Order::SouthFirst => read_exact_at(file, &mut out[place(row, take).0], offset).map_err(named)?,
                            Order::NorthFirst => {
                                scratch.resize(len, 0);
                                read_exact_at(file, &mut scratch, offset).map_err(named)?;
                                put(out, row, &scratch);
                            }
                        }
                    }
                    From::File(file) => {
                        self.reads_from_files.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let values = self.decompressed((b0, chunk, which), at, crows as usize * row_bytes, file).map_err(named)?;
                        put(out, row, &values[(row - c0) as usize * row_bytes..][..len]);
                    }
                }
                row += take;
            }
        }
        Ok(())
    }

    /// The values of LZ4 or runs block `key` (`len` bytes), from the recent blocks or decoded
    /// from `file`.
    fn decompressed(&self, key: BlockKey, block: BlockAt, len: usize, file: &std::fs::File) -> io::Result<std::sync::Arc<Vec<u8>>> {
        let recent = || self.recent.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, values)) = recent().iter().find(|(k, _)| *k == key) {
            return Ok(values.clone());
        }
        let mut packed = vec![0u8; block.stored as usize];
        read_exact_at(file, &mut packed, block.offset)?;
        let values = block
            .decode(&packed, len)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("block {} of chunk {} of the band: {e}", key.2, key.1)))?;
        let values = std::sync::Arc::new(values);
        let mut recent = recent();
        if recent.len() == RECENT_BLOCKS {
            recent.pop_front();
        }
        recent.push_back((key, values.clone()));
        Ok(values)
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

    /// The test's value of `plane` (its byte `b` of a post) at grid post (c, r); splat family
    /// `f`'s byte where a band has it.
    fn value(plane: Plane, f: i32, c: u32, r: u32, b: usize) -> u8 {
        match plane {
            // Constant runs (LZ4 blocks) …
            Plane::ShaderId => ((r / 5) as u8).wrapping_add(b as u8),
            Plane::Splat => ((c / 7 + r) as u8) ^ (f as u8),
            // … and noise (stored blocks).
            _ => ((c.wrapping_mul(2_654_435_761) ^ r.wrapping_mul(40_503) ^ (b as u32 * 97)) >> 7) as u8,
        }
    }

    fn reversed_rows(bytes: &[u8], row_bytes: usize) -> Vec<u8> {
        bytes.chunks_exact(row_bytes).rev().flatten().copied().collect()
    }

    /// The splat families of the band starting at row `r0`.
    fn families(r0: u32) -> Vec<i32> {
        match r0 {
            0 => vec![3, 9],
            128 => vec![9],
            _ => vec![],
        }
    }

    /// Write the band files of `set` as the bake does: per chunk, a block per plane (and
    /// splat family). Returns each band's (first row, rows), meta and blocks' values.
    fn write_bands(set: &BandSet) -> Vec<((u32, u32), BandMeta, BlockValues)> {
        let cols = set.grid.cols;
        let mut written = Vec::new();
        for (r0, rows) in set.bands() {
            let mut values = Vec::new();
            let mut body = Vec::new();
            let mut meta = BandMeta { splat_families: families(r0), bake: set.bake.hex(), place: (r0, rows), ..Default::default() };
            for (c0, crows) in band_chunks(rows) {
                let mut families = meta.splat_families.clone().into_iter();
                for plane in chunk_blocks(&set.layout.planes, meta.splat_families.len()).collect::<Vec<_>>() {
                    let f = if plane == Plane::Splat { families.next().unwrap() } else { 0 };
                    let mut raw = Vec::new();
                    for r in r0 + c0..r0 + c0 + crows {
                        for c in 0..cols {
                            raw.extend((0..plane.bytes()).map(|b| value(plane, f, c, r, b)));
                        }
                    }
                    meta.blocks.push(pack_block(&raw, plane.bytes(), &mut body));
                    values.push(raw);
                }
            }
            std::fs::write(set.path(r0, rows), band_file_bytes(body, &meta)).unwrap();
            written.push(((r0, rows), meta, values));
        }
        written
    }

    /// Grid rows `r0..r0 + rows` of `plane` as [`value`] makes them.
    fn want_rows(plane: Plane, cols: u32, r0: u32, rows: u32) -> Vec<u8> {
        (r0..r0 + rows).flat_map(|r| (0..cols).flat_map(move |c| (0..plane.bytes()).map(move |b| value(plane, 0, c, r, b)))).collect()
    }

    #[test]
    fn held_bands_are_read_from_memory_until_let_go() {
        let grid = Grid { x0: 0.0, z0: 0.0, spacing: 1.0, cols: 37, rows: 300 };
        let dir = std::env::temp_dir().join(format!("trnbake-held-bands-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let layout = BandLayout { planes: vec![Plane::ShaderId, Plane::Splat, Plane::Normals], probabilities: false };
        let bake = Fingerprint([7; 32]);
        let written = write_bands(&BandSet::new(grid, layout.clone(), 128, vec![dir.clone()], bake));
        let set = BandSet::new(grid, layout, 128, vec![dir.clone()], bake);
        // The last two bands held stay (bands are held north first).
        for (k, ((r0, rows), meta, values)) in written.into_iter().enumerate() {
            set.hold(r0, rows, &meta, values);
            set.done(k);
        }
        // The held bands' files are gone: their rows come from memory.
        for (r0, rows) in [(128, 128), (0, 128)] {
            std::fs::remove_file(set.path(r0, rows)).unwrap();
        }
        for (r0, rows) in [(0, 256), (5, 9), (120, 20), (255, 1)] {
            for plane in [Plane::ShaderId, Plane::Normals] {
                let want = want_rows(plane, 37, r0, rows);
                let mut got = vec![0u8; want.len()];
                set.read_plane(plane, r0, rows, &mut got).unwrap();
                assert_eq!(got, want, "{plane:?} rows {r0}+{rows}");
                set.read_plane_north(plane, 300 - (r0 + rows)..300 - r0, &mut got).unwrap();
                assert_eq!(got, reversed_rows(&want, 37 * plane.bytes()), "{plane:?} rows {r0}+{rows}, north first");
            }
            // Family 3 is in the southern band only.
            let mut got = vec![0u8; rows as usize * 37];
            set.read_splat(3, r0, rows, &mut got).unwrap();
            let want: Vec<u8> = (r0..r0 + rows).flat_map(|r| (0..37).map(move |c| if r < 128 { value(Plane::Splat, 3, c, r, 0) } else { 0 })).collect();
            assert_eq!(got, want, "splat rows {r0}+{rows}");
        }
        assert_eq!(set.reads().from_files, 0, "a held band was read from its file");
        assert!(set.reads().held > 0);
        // The first band held was let go: read from its file.
        let want = want_rows(Plane::ShaderId, 37, 256, 44);
        let mut got = vec![0u8; want.len()];
        set.read_plane(Plane::ShaderId, 256, 44, &mut got).unwrap();
        assert_eq!(got, want);
        assert_eq!(set.reads().from_files, 6, "a block per chunk of the band let go");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn long_blocks_are_stored_when_their_start_does_not_compress() {
        let noise = |i: usize| {
            // SplitMix64 of the index.
            let mut z = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB).to_le_bytes()[7]
        };
        let pattern = |i: usize| (i % 251) as u8 ^ (i / 4096) as u8;
        // Noise with a short repeat in every 32 bytes: LZ4 saves a little (as on the colour
        // and preview planes), too little to pay for its time.
        let weak = |i: usize| if i % 32 < 24 { noise(i) } else { 0x5a };
        let len = 4 * LZ4_PROBE + 5;
        let weak_block: Vec<u8> = (0..len).map(weak).collect();
        let lz4 = lz4_flex::block::compress(&weak_block).len();
        assert!(lz4 * 8 < len * 7 && lz4 * 4 > len * 3, "the weak block shrinks by {lz4} / {len}");
        let cases: [(Vec<u8>, BlockKind); 4] = [
            ((0..len).map(noise).collect(), BlockKind::Stored),
            (weak_block, BlockKind::Stored),
            ((0..len).map(pattern).collect(), BlockKind::Lz4),
            // Noise for the probe, repeats after it: stored whole, as the probe predicts.
            ((0..len).map(|i| if i < LZ4_PROBE { noise(i) } else { pattern(i) }).collect(), BlockKind::Stored),
        ];
        for (raw, kind) in cases {
            let mut stored = vec![7u8; 3];
            let entry = pack_block(&raw, 3, &mut stored);
            assert_eq!(entry % 4, kind as u64);
            let at = BlockAt { offset: 3, stored: entry / 4, kind, unit: 3 };
            assert_eq!(stored.len() as u64, 3 + at.stored);
            let out = at.decode(&stored[3..], raw.len()).unwrap();
            assert_eq!(out, raw, "{kind:?}");
            assert!(at.decode(&stored[3..], raw.len() + 1).is_err(), "{kind:?} decoded to a longer block");
        }
    }

    #[test]
    fn runs_decode_to_their_values_and_damaged_runs_are_refused() {
        let raw: Vec<u8> = [[1u8, 2, 3, 4]; 300].iter().chain(&[[9u8, 9, 9, 9]; 5]).flatten().copied().collect();
        let mut stored = Vec::new();
        let entry = pack_block(&raw, 4, &mut stored);
        assert_eq!(entry % 4, BlockKind::Runs as u64);
        let at = BlockAt { offset: 0, stored: entry / 4, kind: BlockKind::Runs, unit: 4 };
        assert_eq!(at.decode(&stored, raw.len()).unwrap(), raw);
        let mut long = stored.clone();
        long[0] += 1;
        assert!(at.decode(&long, raw.len()).is_err(), "a run past the end");
        let mut short = stored.clone();
        short[0] -= 1;
        assert!(at.decode(&short, raw.len()).is_err(), "runs short of the block");
        let mut empty = stored;
        empty[..4].copy_from_slice(&0u32.to_le_bytes());
        assert!(at.decode(&empty, raw.len()).is_err(), "an empty run");
    }

    #[test]
    fn band_files_read_back_every_plane_and_a_damaged_file_is_refused() {
        let grid = Grid { x0: 0.0, z0: 0.0, spacing: 1.0, cols: 37, rows: 300 };
        assert_eq!(bands_north_first(&grid, 128), vec![(256, 44), (128, 128), (0, 128)]);
        let dir = std::env::temp_dir().join(format!("trnbake-bands-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let layout = BandLayout { planes: vec![Plane::ShaderId, Plane::Splat, Plane::Normals], probabilities: false };
        let bake = Fingerprint([7; 32]);
        let set = BandSet::new(grid, layout.clone(), 128, vec![dir.clone()], bake);
        write_bands(&set);
        for (r0, rows) in set.bands() {
            let (status, meta) = band_checkpoint(&set.path(r0, rows), &layout, grid.cols, r0, rows, &bake);
            assert_eq!(status, Checkpoint::Done);
            assert_eq!(meta.expect("a whole band file").splat_families, families(r0));
            assert_eq!(set.locate(r0, rows), Checkpoint::Done);
        }
        // Every kind of block is there.
        let meta = read_meta(&set.path(0, 128)).unwrap();
        for kind in [BlockKind::Lz4, BlockKind::Stored, BlockKind::Runs] {
            assert!(meta.blocks.iter().any(|b| b % 4 == kind as u64), "no {kind:?} block in {:?}", meta.blocks);
        }

        // Row ranges inside a chunk, across chunks and across bands, twice (the recent blocks).
        for _ in 0..2 {
            for (r0, rows) in [(0, 300), (3, 2), (5, 9), (120, 20), (127, 140), (299, 1)] {
                for plane in [Plane::ShaderId, Plane::Normals] {
                    let mut got = vec![0u8; rows as usize * 37 * plane.bytes()];
                    set.read_plane(plane, r0, rows, &mut got).unwrap();
                    let want: Vec<u8> =
                        (r0..r0 + rows).flat_map(|r| (0..37).flat_map(move |c| (0..plane.bytes()).map(move |b| value(plane, 0, c, r, b)))).collect();
                    assert_eq!(got, want, "{plane:?} rows {r0}+{rows}");
                    // The same rows in file order.
                    set.read_plane_north(plane, 300 - (r0 + rows)..300 - r0, &mut got).unwrap();
                    assert_eq!(got, reversed_rows(&want, 37 * plane.bytes()), "{plane:?} rows {r0}+{rows}, north first");
                }
                for f in [3, 9, 5] {
                    let mut got = vec![0u8; rows as usize * 37];
                    set.read_splat(f, r0, rows, &mut got).unwrap();
                    let want: Vec<u8> = (r0..r0 + rows)
                        .flat_map(|r| (0..37).map(move |c| if families(r - r % 128).contains(&f) { value(Plane::Splat, f, c, r, 0) } else { 0 }))
                        .collect();
                    assert_eq!(got, want, "splat family {f} rows {r0}+{rows}");
                    set.read_splat_north(f, 300 - (r0 + rows)..300 - r0, &mut got).unwrap();
                    assert_eq!(got, reversed_rows(&want, 37), "splat family {f} rows {r0}+{rows}, north first");
                }
            }
        }
        let mut north = vec![0u8; 2 * 37 * 4];
        set.read_plane_north(Plane::ShaderId, 0..2, &mut north).unwrap();
        assert_eq!(&north[..4], &[59, 60, 61, 62], "file row 0 is grid row 299");
        assert!(set.read_plane(Plane::Splat, 0, 1, &mut [0u8; 37]).is_err(), "the Splat plane is read a family at a time");

        let path = set.path(0, 128);
        let bytes = std::fs::read(&path).unwrap();
        let other = BandLayout { planes: vec![Plane::ShaderId, Plane::Splat], probabilities: false };
        let status = |layout: &BandLayout, cols: u32, r0: u32, bake: &Fingerprint| band_checkpoint(&path, layout, cols, r0, 128, bake).0;
        assert_eq!(status(&other, grid.cols, 0, &bake), Checkpoint::Foreign, "another layout");
        assert_eq!(status(&layout, grid.cols + 1, 0, &bake), Checkpoint::Foreign, "another width");
        assert_eq!(status(&layout, grid.cols, 128, &bake), Checkpoint::Foreign, "another band's place");
        assert_eq!(status(&layout, grid.cols, 0, &Fingerprint([8; 32])), Checkpoint::Foreign, "another bake");
        // A neighbour's file copied in place of this band is refused by its place.
        std::fs::copy(set.path(128, 128), &path).unwrap();
        assert_eq!(status(&layout, grid.cols, 0, &bake), Checkpoint::Foreign, "a neighbour's band");
        let mut bad = bytes.clone();
        bad[5] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        assert_eq!(status(&layout, grid.cols, 0, &bake), Checkpoint::Damaged, "checksum");
        std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert_eq!(status(&layout, grid.cols, 0, &bake), Checkpoint::Damaged, "truncated");
        // A set over two folders reads a band from the folder that has it.
        let second = dir.join("second");
        std::fs::create_dir_all(&second).unwrap();
        std::fs::write(band_path(&second, 0, 128), &bytes).unwrap();
        let both = BandSet::new(grid, layout.clone(), 128, vec![dir.clone(), second.clone()], bake);
        assert_eq!(both.locate(0, 128), Checkpoint::Done);
        assert_eq!(both.path(0, 128), band_path(&second, 0, 128));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
