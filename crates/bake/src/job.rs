//! The job the engine runs: a validated bake (its parameters, grid, backend, shard, outputs
//! and the surface maps' job), as [`BakeRequest::pipeline`](crate::BakeRequest::pipeline)
//! builds it.

use std::path::PathBuf;

use trnbake_raster::writers::set::ExportChoice;
use trnbake_swg::eval::Grid;

use crate::params::{Backend, BakeParams, BakeRecipe, Shard};
use crate::surface_maps::SurfaceMapsJob;

/// Validated options of one bake.
pub struct BakeJob {
    pub params: BakeParams,
    pub grid: Grid,
    pub backend: Backend,
    pub adapter_filter: Option<String>,
    pub shard: Option<Shard>,
    pub outdir: PathBuf,
    /// Where notes and progress go (the command line's renderer, or a silent one).
    pub reporter: std::sync::Arc<dyn crate::Reporter>,
    /// Output formats, preset, tiling.
    pub export: ExportChoice,
    /// Surface maps to write from the finished heights, if any.
    pub surface_maps: Option<SurfaceMapsJob>,
    /// What the bake was asked for (recorded in a shard's state for `merge`).
    pub recipe: BakeRecipe,
}
