//! trnbake-bake: the bake pipeline. A [`BakeRequest`] (plain fields with the command line's
//! defaults) becomes a validated [`Pipeline`], which tiles the grid, picks the backend (a GPU
//! when there is one; the CPU where the kernels cannot compute an option exactly, decided once
//! in [`surface_maps::surface_on_backend`]), checkpoints tiles so a killed bake resumes, streams
//! the height files while tiles finish, writes the surface maps and the manifest. [`golden`]
//! re-bakes fixtures and compares them with expected images.
//!
//! # Example
//!
//! ```
//! use trnbake_bake::{Backend, BakeRequest, MapKind};
//!
//! let out = std::env::temp_dir().join(format!("trnbake-bake-doc-{}", std::process::id()));
//! let mut request = BakeRequest::demo(&out);      // the built-in 4 km demo terrain
//! request.spacing = Some(64.0);                   // 65 x 65 posts
//! request.maps = vec![MapKind::Height.into(), MapKind::Splat.into()];
//! request.backend = Backend::Cpu;
//! // Silent by default: `request.reporter` takes notes and progress (see `report`).
//! let report = request.pipeline()?.run()?;
//! assert_eq!(report.posts, 65 * 65);
//! assert!(out.join("height.tif").is_file() && out.join("manifest.json").is_file());
//! # std::fs::remove_dir_all(&out)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `trnbake bake`: a height grid over a region, tile by tile on the GPU or CPU backend, with
//! checkpointed tiles (a killed bake resumes), deterministic shards for job arrays, and
//! atomically written outputs plus a manifest.
//!
//! Tiles are blocks of posts; every post is evaluated from its global indices, so the result
//! does not depend on the tile size or on which shard computed it (design.md "Tiles in post
//! coordinates").

mod backend;
mod engine;
pub mod error;
pub mod folder;
pub mod golden;
mod height_stage;
mod job;
mod manifest;
mod merge;
mod params;
mod request;
mod row_progress;
pub mod shard;
pub mod store;
pub mod surface_maps;

pub use backend::{backend_name, choose_gpu, heights_in_memory};
pub use engine::run_bake;
pub use error::{Error, Result};
pub use job::BakeJob;
pub use manifest::BakeReport;
pub use merge::merge;
pub use params::{plan_sha256, post_count, Backend, BakeParams, BakeRecipe, MapRequest, Shard};
pub use request::{BakeRequest, Pipeline};
pub use store::{BakeState, CheckpointSource, Fingerprint};
pub use surface_maps::{SurfaceMapsJob, SurfaceMapsOutput, SurfaceTiming};
pub use trnbake_swg::eval::CPU_CULL_BLOCK;
pub use trnbake_swg::maps::{MapInfo, MapKind, MAPS};
pub use trnbake_swg::report;
pub use trnbake_swg::report::{Level, NullReporter, Progress, Reporter};
