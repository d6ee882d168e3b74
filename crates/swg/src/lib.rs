//! trnbake-swg: Star Wars Galaxies procedural terrain (`.trn`), read, written and evaluated
//! exactly on the CPU. This is the crate a server emulator links for ground heights.
#![allow(clippy::neg_cmp_op_on_partial_ord)]
#![allow(clippy::collapsible_match)]
#![allow(clippy::too_many_arguments)]

pub mod iff;
pub mod grid;
pub mod lanes;
pub mod noise;
pub mod model;
pub mod plan;
pub mod eval;
pub mod water;
pub mod surface;
pub mod fidelity;
