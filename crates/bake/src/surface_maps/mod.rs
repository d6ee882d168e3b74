//! Surface maps of a baked height grid (swg-trn §5.2 steps 2–4, §5.9–§5.11; exports.md
//! §4.6–§4.7): normals, splat weights and shader ids, flora ids and probabilities per class,
//! water, environment, colour, exclusion, passability, SMAP rough-terrain chunks and a shaded
//! preview; every map is a grid of the bake's posts.
//!
//! Streamed by bands of rows from the north edge ([`SurfaceMapsJob::stream`]): each band's
//! heights and 1-post apron are read from the height checkpoints, its normals and surface
//! passes are evaluated (on the GPU with `trnbake_gpu::surface_pass`, else on the CPU with
//! `trnbake_swg::surface::grid`), and the per-post values every map needs are written to a
//! band checkpoint (`band_files`); the map writers — one thread each — encode their rows as
//! soon as the band is finished, from its values still held in memory (the last two bands),
//! else from its checkpoint. Memory is bounded by a few bands, whatever the grid; a killed
//! bake resumes with the bands it has. The maps that need a figure of the whole grid (the
//! splat channels, the flora legends and density ranges, the per-family flora maps, the
//! scatter) are written from the band checkpoints once every band is finished.

//!
//! The module by concern: this file holds the job (what to write, its band layout and
//! fingerprint) and the stage's inputs; `stage` the band loop (resume, compute, checkpoint);
//! `encode` each post's values as the band files store them; `band_files` the band
//! checkpoint format; `sources` the band files as the writers' rows; `writers` which file
//! each map writes; `scatter`, `smap` and `engine_splat` the maps with writers of their own.

mod band_files;
mod encode;
mod engine_splat;
mod scatter;
mod smap;
mod sources;
mod stage;
mod writers;

pub use band_files::BandReads;
pub(crate) use band_files::{BandLayout, Plane};
use encode::*;
pub use encode::{hillshade, round_to_byte, splat_bytes, splat_bytes_into};
use scatter::*;
use smap::*;
use sources::*;

use crate::folder::write_json;
use crate::store::{Checkpoint, CheckpointSource, Fingerprint, CHECKPOINT_DIR};
use crate::Shard;
use band_files::{
    band_chunks, band_file_bytes, chunk_blocks, largest_remainder_bytes, pack_block, read_meta, BandMeta, BandSet, BlockValues, PREVIEW_COLOURED,
};
use rayon::prelude::*;
use serde::Serialize;
use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::time::Instant;
use trnbake_gpu::surface_pass::{GpuSurfacePass, SurfacePasses};
use trnbake_gpu::GpuHeightPass;
use trnbake_gpu::{GpuContext, GpuError};
use trnbake_raster::writers::categories::write_category_names;
use trnbake_raster::writers::geotiff::{write_geotiff_from, GeoTiffOptions, TiffSample};
use trnbake_raster::writers::png16::{write_png16_from, Png16Options};
use trnbake_raster::writers::png8::{write_png8_from, write_png8_south_first, ByteRows, Png8Coding, RowFilter};
use trnbake_raster::writers::set::ExportSummary;
use trnbake_raster::{HeightSource, WrittenFile};
use trnbake_swg::eval::{Grid, HeightEvaluator};
use trnbake_swg::grid::TileSpec;
use trnbake_swg::maps::MapKind;
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::FLORA_CLASSES;
use trnbake_swg::spawn::{slope_degrees, SpawnPost, SpawnRule, SPAWN_LEGEND};
use trnbake_swg::surface::grid::{
    band_apron_heights, band_normals, band_results, evaluate, ClassProbabilities, HeightsView, PassSelection, PostSurface, SurfaceGrid,
};
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::smap::smap_chunks;
use trnbake_swg::surface::supersample::flora_supersampled_rows;
use trnbake_swg::surface::{SurfaceEvaluator, SPLAT_LAYERS};
use trnbake_swg::water::WaterTables;

const CHANNELS: [&str; 4] = ["r", "g", "b", "a"];

/// Most posts a surface band holds (its rows are a multiple of the CPU's 128-post culling
/// block, at least one block): ~2 M posts keep a band's transient state (heights, normals,
/// results, encoded planes; ~250 bytes a post) near 0.5 GB whatever the grid.
const BAND_POSTS: u64 = 2 << 20;
/// The culling block of the surface passes (`trnbake_swg::surface::grid`'s `BLOCK`).
const BAND_ROW_MULTIPLE: u32 = 128;
/// The surface maps of a bake: what to write, and the plans and options to compute them with.
pub struct SurfaceMapsJob {
    pub terrain: Terrain,
    pub surface: SurfaceEvaluator,
    /// The maps to write but [`MapKind::Height`] (which the height stage writes).
    pub maps: Vec<MapKind>,
    pub normals: NormalMethod,
    /// The outputs' CRS name (`SWG NAME local metres`).
    pub citation: String,
    /// How the GeoTIFF maps are written (`--cog`, `--compress`); id maps use them
    /// [`for_ids`](trnbake_raster::GeoTiffOptions::for_ids).
    pub tiff: GeoTiffOptions,
    /// Rows a band; `None`: [`SurfaceMapsJob::band_rows`] of the grid's width.
    pub band_rows: Option<u32>,
    /// Flora maps read the mean over N × N sub-posts of each post's square (`bake
    /// --flora-supersample N`, on the CPU: [`trnbake_swg::surface::supersample`]); 1 reads
    /// the post alone.
    pub flora_supersample: u32,
    /// The spawnable map's limits (`--max-slope`, `--water-depth`).
    pub spawn: SpawnRule,
}

/// What [`SurfaceMapsJob::stream`] wrote, and how.
pub struct SurfaceMapsOutput {
    pub files: Vec<WrittenFile>,
    /// `"gpu"` or `"cpu"`: where the surface passes ran.
    pub backend: &'static str,
    pub timing: SurfaceTiming,
}

/// Where the time of the surface maps went, in seconds (the manifest's `timing.surface`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct SurfaceTiming {
    /// Rows of posts a band.
    pub band_rows: u32,
    pub bands_computed: usize,
    pub bands_resumed: usize,
    /// Reading each band's heights and evaluating its apron, then its normals.
    pub heights_and_normals_seconds: f64,
    /// The shader and later passes (one tree walk a post by default).
    pub passes_seconds: f64,
    /// The water surface at every post.
    pub water_seconds: f64,
    /// Turning the results into the maps' values (the band checkpoints' bytes). On the GPU
    /// backend this runs on a thread of its own beside the next band's passes, so there the
    /// figures add up to more than `total_seconds`.
    pub checkpoint_seconds: f64,
    /// Writing the band checkpoints, on a thread of their own beside the next bands.
    pub checkpoint_write_seconds: f64,
    /// From the last band to the last map written (the writers that need the whole grid).
    pub writing_after_compute_seconds: f64,
    /// Chunk blocks the map writers read from the bands held in memory, and from band files.
    pub band_reads: BandReads,
    pub total_seconds: f64,
    /// Surface posts per second over the whole stage.
    pub posts_per_second: f64,
}

/// A surface grid and the backend that computed it.
pub struct SurfaceOnBackend {
    pub surface: SurfaceGrid,
    /// `"gpu"` or `"cpu"`.
    pub backend: &'static str,
    /// Why the CPU ran it although a GPU context was given (the kernels cannot compute these
    /// options exactly).
    pub cpu_because: Option<String>,
}

/// The surface passes over a whole grid held in memory (the golden checks' small fixtures) on
/// the backend that baked the heights: the GPU when there is a context and its kernels compute
/// the options exactly, else the CPU.
pub fn surface_on_backend(
    gpu: Option<&GpuContext>,
    grid: &Grid,
    heights: &[f32],
    he: &HeightEvaluator,
    se: &SurfaceEvaluator,
    normals: NormalMethod,
) -> crate::Result<SurfaceOnBackend> {
    let cpu = |why: Option<String>| SurfaceOnBackend { surface: evaluate(grid, heights, he, se, normals), backend: "cpu", cpu_because: why };
    match gpu.map(|ctx| trnbake_gpu::surface_pass::evaluate(ctx, grid, heights, he, se, normals)) {
        Some(Ok(surface)) => Ok(SurfaceOnBackend { surface, backend: "gpu", cpu_because: None }),
        Some(Err(GpuError::Unsupported(why))) => Ok(cpu(Some(why))),
        Some(Err(e)) => Err(e.into()),
        None => Ok(cpu(None)),
    }
}

/// The GPU surface passes when the kernels compute the options exactly, else `None` (the CPU):
/// the one place the surface maps fall back, decided once a bake.
fn gpu_surface_pass<'a>(
    gpu: Option<&'a GpuContext>,
    se: &'a SurfaceEvaluator,
    normals: NormalMethod,
    reporter: &dyn crate::Reporter,
) -> crate::Result<Option<GpuSurfacePass<'a>>> {
    let Some(ctx) = gpu else { return Ok(None) };
    match GpuSurfacePass::new(ctx, se, normals) {
        Ok(pass) => Ok(Some(pass)),
        Err(GpuError::Unsupported(why)) => {
            reporter.note(format!("surface maps on the CPU: {}", GpuError::Unsupported(why)));
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// What the surface stage does with the bands of a grid.
pub enum StageRole<'a> {
    /// The whole bake: compute the bands not yet checkpointed from the finished height tiles,
    /// and write every map.
    Bake,
    /// One shard of a bake: compute its share of the bands (band k from the north when
    /// k ≡ K−1 mod N), their heights evaluated for them on the bake's backend (the height tiles
    /// around them are other shards'), and write no map.
    Shard { shard: Shard, gpu_heights: Option<&'a GpuHeightPass<'a>> },
    /// A merge: every band is in the shard folders (each named with its shard); write every map.
    Merge { shards: &'a [(Shard, PathBuf)] },
}

/// What [`SurfaceMapsJob::stream`] reads: the finished heights and where to write.
pub struct StreamInputs<'a> {
    pub outdir: &'a Path,
    pub grid: &'a Grid,
    /// The finished height tiles (of the whole grid, but in a shard, which reads none).
    pub heights: &'a CheckpointSource,
    /// The height tiles' identity, which the bands' includes.
    pub heights_fingerprint: Fingerprint,
    /// The folders holding the band checkpoints (in their checkpoint folders): the bake's own
    /// output folder, or a merge's shard folders.
    pub checkpoint_dirs: Vec<PathBuf>,
    pub role: StageRole<'a>,
    /// The finite height range of the grid (the preview's tint).
    pub range: (f32, f32),
    pub height_evaluator: &'a HeightEvaluator,
    pub gpu: Option<&'a GpuContext>,
    pub reporter: &'a dyn crate::Reporter,
    /// The height export already written (its preset, resampled grid, tiles and engine
    /// settings): the engine splat maps match its heightmap.
    pub export: Option<&'a ExportSummary>,
}

impl SurfaceMapsJob {
    fn want(&self, map: MapKind) -> bool {
        self.maps.contains(&map)
    }

    /// The per-post planes the wanted maps are written from.
    pub fn layout(&self) -> BandLayout {
        let mut planes = Vec::new();
        let w = |m: MapKind| self.want(m);
        if w(MapKind::Normals) {
            planes.push(Plane::Normals);
        }
        if w(MapKind::Splat) {
            planes.extend([Plane::ShaderId, Plane::Splat]);
        }
        if w(MapKind::Flora) {
            for k in 0..4 {
                planes.extend([Plane::FloraId(k), Plane::FloraProbability(k)]);
            }
        }
        if w(MapKind::Water) {
            planes.extend([Plane::WaterLevel, Plane::WaterMask]);
        }
        if w(MapKind::Env) {
            planes.push(Plane::Environment);
        }
        if w(MapKind::Color) {
            planes.push(Plane::Color);
        }
        if w(MapKind::Exclude) {
            planes.extend([Plane::Exclude, Plane::Passable]);
        }
        if w(MapKind::Preview) {
            planes.extend([Plane::Preview, Plane::PreviewShade]);
        }
        if w(MapKind::Slope) {
            planes.push(Plane::Slope);
        }
        if w(MapKind::Spawnable) {
            planes.push(Plane::Spawnable);
        }
        BandLayout { planes, probabilities: w(MapKind::FloraFamilies) || w(MapKind::Scatter) }
    }

    /// Whether any wanted map reads the shader or later pass (normals, water and SMAP do not).
    fn needs_passes(&self) -> bool {
        self.maps.iter().any(|m| m.info().needs_surface_passes)
    }

    /// Rows a band of a grid `cols` posts wide: the job's own choice rounded up to a multiple
    /// of the culling block (so bands cull exactly as the whole grid), else about
    /// 2 M posts (`BAND_POSTS`).
    pub fn band_rows(&self, cols: u32) -> u32 {
        match self.band_rows {
            Some(rows) => rows.max(1).div_ceil(BAND_ROW_MULTIPLE) * BAND_ROW_MULTIPLE,
            None => ((BAND_POSTS / u64::from(cols.max(1))) as u32 / BAND_ROW_MULTIPLE).max(1) * BAND_ROW_MULTIPLE,
        }
    }

    /// SHA-256 of everything that determines the band checkpoints besides the heights: the
    /// surface plans, options, normals method and the planes (a resume with other maps or
    /// options starts the surface bands afresh).
    pub fn fingerprint(&self) -> String {
        use sha2::Digest;
        let se = &self.surface;
        let mut h = sha2::Sha256::new();
        for plan in [&se.plan, &se.shader_plan, &se.later_plan, &se.all_plan] {
            h.update(crate::plan_sha256(plan).as_bytes());
            let ramps: Vec<u8> = plan.ramps.iter().flat_map(|r| r.iter().flatten().copied()).collect();
            h.update((ramps.len() as u64).to_le_bytes());
            h.update(&ramps);
        }
        h.update(format!("{:?}|{:?}|{:?}|{}|{}|v2", se.opts, self.normals, self.layout(), self.citation, self.flora_supersample).as_bytes());
        // The spawn rule changes the spawnable plane only (older fingerprints stay as they were).
        if self.want(MapKind::Spawnable) {
            h.update(format!("|{:?}", self.spawn).as_bytes());
        }
        trnbake_raster::hex(&h.finalize())
    }
}
