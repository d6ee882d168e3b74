//! The CPU reference evaluator over a [`BakePlan`](crate::plan::BakePlan): the oracle the GPU kernels are tested
//! against and the fallback backend. Each function has a WGSL twin of the same name in
//! `kernels/`, with the same f32 operation order (swg-trn §6.5, gpu.md §3.5); `kernels/NAME.wgsl`
//! is the twin of the module `NAME` (the table of twins: docs/src/architecture.md).

pub mod affector;
pub mod boundary;
pub mod feather;
pub mod filter;
pub mod height;
pub mod row_ops;
pub mod walk;
pub mod walk_strip;

pub use crate::grid::Grid;
pub use height::{height_at_point, HeightEvaluator, HeightState, CPU_CULL_BLOCK};
pub use walk::{walk_point, PassState};
