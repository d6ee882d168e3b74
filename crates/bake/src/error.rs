//! The error of a bake: the pipeline's own refusals in words, and the causes from the crates it
//! drives (the plan, the GPU, the raster writers, the file system) kept as sources.

use std::io;

/// An error of the bake pipeline, the surface maps or a golden check.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A job that cannot run or an input that cannot be used, in words.
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Raster(#[from] trnbake_raster::Error),
    #[error(transparent)]
    Grid(#[from] trnbake_swg::grid::GridError),
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error(transparent)]
    Gpu(#[from] trnbake_gpu::GpuError),
    #[error(transparent)]
    Plan(#[from] trnbake_swg::plan::PlanError),
    #[error(transparent)]
    Load(#[from] trnbake_swg::model::LoadError),
    #[error(transparent)]
    JsonTerrain(#[from] trnbake_swg::model::json::JsonTerrainError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
