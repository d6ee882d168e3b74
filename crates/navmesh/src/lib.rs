//! trnbake-navmesh: Recast/Detour navigation meshes of SWG terrain for game servers
//! (docs/src/servers.md).
//!
//! The heights come from [`trnbake_swg`]'s exact evaluator at a source lattice (1 m by
//! default), two triangles a lattice cell; water deeper than a depth is not walkable. Tiles are
//! built by Recast itself (`recastnavigation-sys` builds the C++ library from source) in
//! parallel, checkpointed for a resume, and written as the all-tiles `MSET` set of Recast's
//! demo, which Detour-based servers load. [`detour::Navmesh`] loads a set back through Detour.

pub mod detour;
pub mod error;
pub mod job;
pub mod set;
pub mod settings;
pub mod tile;

pub use detour::Navmesh;
pub use error::NavmeshError;
pub use job::{build_navmesh, NavmeshReport, NavmeshRequest};
pub use settings::NavmeshSettings;
