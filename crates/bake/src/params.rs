//! What determines a bake: its parameters (every number: the resume, merge and checkpoint
//! fingerprint), the backend and maps asked for, the shard, and the recipe a shard records so
//! that `merge` rebuilds the same bake. Plain data, used by every other module.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use trnbake_raster::writers::set::ExportChoice;

use crate::Result;
use trnbake_swg::maps::MapKind;
use trnbake_swg::plan::HeightOptions;
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::SurfaceOptions;

/// Which evaluator runs the height pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A hardware GPU adapter when one exists, else the CPU backend (a software adapter
    /// such as lavapipe is slower than the CPU backend; `gpu` still uses it).
    Auto,
    Gpu,
    Cpu,
}

/// Everything that determines the bake's numbers (the resume/merge fingerprint).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BakeParams {
    pub input: String,
    pub input_sha256: String,
    pub spacing: f64,
    /// West, south, east, north post positions (world metres).
    pub region: [f64; 4],
    pub cols: u32,
    pub rows: u32,
    pub tile: u32,
    pub roads: bool,
    pub bitmap_gain: bool,
    /// SHA-256 of the height plan: every record, fractal table and bitmap pixel the height
    /// pass reads. It changes with anything that changes a tile (the terrain, the data root
    /// and the bitmaps found there, the missing-bitmap policy, roads, the bitmap gain), so a
    /// resume or a merge never mixes tiles of different inputs.
    pub plan_sha256: String,
}

/// SHA-256 (hex) of what the height pass of `plan` reads, for [`BakeParams::plan_sha256`].
pub fn plan_sha256(plan: &trnbake_swg::plan::BakePlan) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    let mut part = |name: &str, bytes: &[u8]| {
        // Each part with its name and length, so no two plans hash alike by shifting bytes.
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    part("half_width", &plan.half_width.to_le_bytes());
    part("layers", bytemuck::cast_slice(&plan.layers));
    part("boundaries", bytemuck::cast_slice(&plan.boundaries));
    part("points", bytemuck::cast_slice(&plan.points));
    part("filters", bytemuck::cast_slice(&plan.filters));
    part("affectors", bytemuck::cast_slice(&plan.affectors));
    part("roads", bytemuck::cast_slice(&plan.roads));
    part("road_segments", bytemuck::cast_slice(&plan.road_segments));
    part("road_samples", bytemuck::cast_slice(&plan.road_samples));
    part("road_heights", bytemuck::cast_slice(&plan.road_heights));
    part("fractal_records", bytemuck::cast_slice(&plan.fractal_records));
    part("perm", bytemuck::cast_slice(&plan.perm_table()));
    part("gradients", bytemuck::cast_slice(&plan.gradient_table()));
    part("bitmap_records", bytemuck::cast_slice(&plan.bitmap_records));
    part("bitmaps", bytemuck::cast_slice(&plan.bitmap_words()));
    trnbake_raster::hex(&h.finalize())
}

/// A shard of the tile list: tiles whose index is ≡ index−1 (mod count).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (k, n) = s.split_once('/').ok_or("expected K/N, e.g. 2/8")?;
        let index: u32 = k.trim().parse().map_err(|_| format!("`{k}` is not a shard number"))?;
        let count: u32 = n.trim().parse().map_err(|_| format!("`{n}` is not a shard count"))?;
        if count == 0 || index == 0 || index > count {
            return Err(format!("shard {index}/{count}: K must be in 1..=N"));
        }
        Ok(Shard { index, count })
    }
}

/// Posts from `a` to `b` (inclusive) at `spacing`.
pub fn post_count(a: f64, b: f64, spacing: f64) -> Result<u32> {
    Ok(trnbake_swg::grid::post_count(a, b, spacing)?)
}

/// A map `--maps` names: `auto` (every map the terrain feeds) or one of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MapRequest {
    Auto,
    Map(MapKind),
}

impl From<MapKind> for MapRequest {
    fn from(m: MapKind) -> Self {
        MapRequest::Map(m)
    }
}

impl std::str::FromStr for MapRequest {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s.trim() == "auto" {
            Ok(MapRequest::Auto)
        } else {
            s.parse().map(MapRequest::Map)
        }
    }
}

/// What a bake was asked for, recorded in a shard's state so that `merge` rebuilds the very
/// same bake (its surface maps and legends need the terrain and options, not only the
/// checkpoints): every field of [`BakeRequest`](crate::BakeRequest) that changes an output.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BakeRecipe {
    pub input: String,
    pub input_sha256: String,
    /// Where the terrain file was read from (absolute), when it was a file.
    pub input_path: Option<PathBuf>,
    pub name: String,
    pub height: HeightOptions,
    pub surface: SurfaceOptions,
    pub normals: NormalMethod,
    pub flora_supersample: u32,
    /// Absent from the recipes of bakes before the spawnable map: the defaults.
    #[serde(default)]
    pub spawn: trnbake_swg::spawn::SpawnRule,
    pub region: Option<[f64; 4]>,
    pub spacing: Option<f64>,
    pub tile: Option<u32>,
    pub band_rows: Option<u32>,
    pub maps: Vec<MapRequest>,
    pub export: ExportChoice,
    /// The backend asked for (it picks the default tile size).
    pub backend: Backend,
}
