//! trnbake-scs: SCS Software maps as Bezier-patch mosaics. [`export`] fits a heightmap with a
//! watertight mosaic of patches and writes the map folder; [`raster`] turns a map back into
//! a height grid; [`inspect`] gives `scs info` and `scs check`.
//!
//! # Example
//!
//! ```
//! use trnbake_scs::token::Token;
//!
//! // SCS names are base-38 tokens (§B.1).
//! let t = Token::new("trnbake").expect("a valid token");
//! assert_eq!(t.decode().as_deref(), Some("trnbake"));
//! assert!(Token::new("Upper Case").is_none());
//! ```
//!
//! SCS Software maps (Euro Truck Simulator 2 / American Truck Simulator): the export target of
//! `trnbake scs` (spec: `docs/src/spec/scs.md`).
//!
//! Files:
//! - [`token`]: the base-38 token type (§B.1).
//! - [`codec`]: byte reader/writer for the sector framing, nodes, the k-DOP header, the
//!   Terrain item (all layouts of §B.5), `quad_info`, the Bezier Patch, and the Model item,
//!   `.desc` and `.mbd` as inferred from TruckLib's `modeltest` map; hostile-size limits.
//! - [`map`]: a map folder (`NAME.mbd` + `NAME/sec±XXXX±ZZZZ.*`), load and atomic save.
//! - [`inspect`]: `scs info` (counts, bounds) and `scs check` (the in-project checks of §B.9).
//! - [`patch`]: Bezier patch geometry, the ONE on-disk control-point order constant
//!   ([`patch::CONTROL_POINT_ORDER`]), evaluation and ground-plane inversion.
//! - [`fit`]: the global C1 least-squares fit of a patch mosaic (separable banded solve) and
//!   its watertight quadtree refinement.
//! - [`export`]: heightmap → map folder (items split into sectors) + `manifest.json`.
//! - [`raster`]: map → height grid (Bezier patches exactly, Terrain items approximately).
//! - [`from_swg`]: the one file that uses the SWG model/evaluator (heights of a `.trn` region).

pub mod codec;
pub mod export;
pub mod fit;
pub mod from_swg;
pub mod inspect;
pub mod map;
pub mod patch;
pub mod raster;
pub mod token;
