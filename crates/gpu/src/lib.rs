//! trnbake-gpu: the GPU backend of trnbake. The host passes named for what they run —
//! [`GpuHeightPass`] (`kernels/height.wgsl` with `walk_strip.wgsl`), [`surface_pass`]
//! (`kernels/surface.wgsl`, `normals.wgsl`, `walk.wgsl`) and [`water_pass`]
//! (`kernels/water.wgsl`) — over the same plan the CPU evaluator of `trnbake-swg` reads. On
//! lavapipe they agree with the CPU bit for bit (gpu.md's float rules). The build script
//! validates every kernel with naga, so a broken kernel fails `cargo build`.
//!
//! # Example
//!
//! ```
//! use trnbake_gpu::{GpuContext, GpuHeightPass};
//! use trnbake_swg::eval::{Grid, HeightEvaluator};
//!
//! let terrain = trnbake_swg::model::json::demo_terrain();
//! let heights = HeightEvaluator::new(&terrain, &Default::default())?;
//! let grid = Grid { cols: 65, rows: 65, x0: -2048.0, z0: -2048.0, spacing: 64.0 };
//! match GpuContext::new(false, None) {
//!     Ok(ctx) => {
//!         let on_gpu = GpuHeightPass::new(&ctx, &heights.plan).run_grid(&grid, ctx.max_tile(2048))?;
//!         assert_eq!(on_gpu.len(), grid.len());
//!     }
//!     Err(e) => eprintln!("no GPU adapter here ({e}); the CPU evaluator bakes instead"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The GPU backend: a wgpu compute pipeline running `kernels/height.wgsl` over the same
//! [`BakePlan`](trnbake_swg::plan::BakePlan) the CPU reference evaluates (gpu.md §1.2), tile by tile, with two tiles in
//! flight so the GPU computes tile k+1 while the CPU consumes tile k (gpu.md §2.4).

pub mod records;
pub mod surface_pass;
pub mod water_pass;

mod context;
mod height_pass;
mod upload;

pub use context::*;
pub use height_pass::GpuHeightPass;
pub use trnbake_swg::grid::TileSpec;
pub(crate) use upload::{block_lists, block_lists_grown, plan_buffers, storage_buffer, two_in_flight, BlockLists, Readback};
