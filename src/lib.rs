//! trnbake: bake Star Wars Galaxies procedural terrain (`.trn`) into rasters.
//!
//! The flow (see `../shared/design.md`): bytes → [`iff`] tree → [`swg::Terrain`] (typed
//! model, lossless) → plan → CPU or GPU evaluator → exports.

// `!(a < b)` is deliberate throughout: it keeps NaN semantics identical to the WGSL twins.
#![allow(clippy::neg_cmp_op_on_partial_ord)]
// Match arms name every rule kind they handle, with the condition inside, rather than guards
// that would send a kind to the catch-all arm.
#![allow(clippy::collapsible_match)]
// The evaluators take the same arguments as their WGSL twins, which have no structs of options.
#![allow(clippy::too_many_arguments)]

pub mod iff;
pub mod grid;
pub mod lanes;
pub mod noise;
pub mod swg;
pub mod app;
pub mod cli;
pub mod fsutil;
pub mod eval;
pub mod plan;
pub mod fidelity;
pub mod water;
pub mod bench;
pub mod export;
pub mod bake;
pub mod gpu;
pub mod surface;
pub mod golden;
pub mod scs;
pub mod nwn2;
