//! trnbake-swg: Star Wars Galaxies procedural terrain (`.trn`), read, written and evaluated
//! exactly on the CPU. This is the crate a server emulator links for ground heights: it needs
//! no GPU, image or command-line crates.
//!
//! The flow (docs/src/architecture.md): bytes → [`iff`] tree → [`model::Terrain`] (typed,
//! lossless: [`model::Terrain::to_bytes`] writes the file back byte for byte) → [`plan`] (the
//! layer tree flattened into `Pod` records, shared with the GPU kernels) → [`eval`] (the CPU
//! evaluator: heights, spec `swg-trn` §5–§6) and [`surface`] (shader, flora, environment,
//! colour maps). [`water`] gives water levels, [`fidelity`] checks heights against the maps the
//! original tool baked into the file. [`report`] is how the libraries tell their user about notes,
//! warnings and progress instead of printing.
//!
//! Each WGSL kernel `kernels/NAME.wgsl` has its CPU twin here, a module named `NAME`. The
//! table of twins is kept once, in docs/src/architecture.md ("Kernels and their CPU twins");
//! `tests/crate_graph.rs` checks it against `kernels/` and this crate's modules.
//!
//! # Example
//!
//! The height at a point of the built-in demo terrain (a `.trn` file loads with
//! [`model::Terrain::load`]; bitmap families then resolve under
//! [`plan::HeightOptions::data_root`]):
//!
//! ```
//! use trnbake_swg::eval::HeightEvaluator;
//! use trnbake_swg::plan::HeightOptions;
//!
//! let terrain = trnbake_swg::model::json::demo_terrain();
//! let heights = HeightEvaluator::new(&terrain, &HeightOptions::default())?;
//! let h = heights.height_at(100.0, -250.0); // x east, z north, world metres
//! assert!(h.is_finite());
//! // Many points at once, in parallel:
//! let hs = heights.heights_at(&[(100.0, -250.0), (0.0, 0.0)]);
//! assert_eq!(hs[0], h);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod eval;
pub mod fidelity;
pub mod grid;
pub mod iff;
pub mod lanes;
pub mod maps;
pub mod model;
pub mod noise;
pub mod plan;
pub mod query;
pub mod report;
pub mod rounding;
pub mod spawn;
pub mod surface;
pub mod water;
