//! trnbake: bake Star Wars Galaxies procedural terrain (`.trn`) into rasters.
//!
//! The flow (see `../shared/design.md`): bytes → [`iff`] tree → [`trn::Terrain`] (typed
//! model, lossless) → plan → CPU or GPU evaluator → exports.

pub mod bitmap;
pub mod iff;
pub mod noise;
pub mod trn;
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
