//! The CPU reference evaluator over a [`BakePlan`](crate::plan::BakePlan): the oracle the GPU kernels are tested
//! against and the fallback backend. Each function has a WGSL twin of the same name in
//! `kernels/`, with the same f32 operation order (swg-trn §6.5, gpu.md §3.5).//!
//! Twins: `walk.wgsl` ↔ [`walk`], `height.wgsl` ↔ [`height`], `walk_strip.wgsl` ↔
//! [`walk_strip`], `boundary.wgsl` ↔ [`boundary`], `filter.wgsl` ↔ [`filter`],
//! `affector.wgsl` ↔ [`affector`], `feather.wgsl` ↔ [`feather`].

pub mod affector;
pub mod boundary;
pub mod feather;
pub mod filter;
pub mod height;
pub mod row_ops;
pub mod walk;
pub mod walk_strip;

pub use crate::grid::Grid;
pub use height::{height_at_point, HeightEvaluator, HeightState, OffMap, CPU_CULL_BLOCK};
pub use walk::{walk_point, PassState};
