//! trnbake-nwn2: Neverwinter Nights 2 area terrain. [`load`] and [`save`] read and write the
//! files losslessly; [`export`] builds an area from heights (a SWG region through
//! [`from_swg`], or any heightmap), [`walkmesh`] bakes its walkmesh and pathing tables, and
//! [`check`] reports every rule a file breaks. The `trnbake nwn2` commands are thin shells over
//! these.
//!
//! # Example
//!
//! ```
//! use trnbake_nwn2::walkmesh::VertexGrid;
//!
//! // Vertices sit 40/24 m apart, megatiles 40 m: vertex 24 starts the second megatile.
//! assert_eq!(VertexGrid::xy(24, 0), [40.0, 0.0]);
//! // Footstep materials by texture name (nwn2 §A.6.2).
//! let grass = trnbake_nwn2::export::texture_material("tt_grass_01");
//! assert_ne!(grass, 0);
//! ```
//!
//! Neverwinter Nights 2 area terrain: the `.trn` (toolset) and `.trx` (game) files of spec
//! `nwn2.md` — read, write, check, and export from SWG terrain or any heightmap.
//!
//! Layout of this folder:
//! - [`model`]: the typed, lossless model (container, TRWH, TRRN, WATR, ASWM with tiles, path
//!   tables and islands; unknown packets raw). Fixed records are `Pod` (bytes ↔ structs).
//! - [`codec`]: bytes ↔ model with hostile-size limits (nwn2 §A.2–A.6). An unmodified file
//!   rewrites byte-exact: the ASWM's original zlib stream is kept and reused while the
//!   walkmesh still encodes to the bytes it decompressed to.
//! - [`serde_util`]: the JSON shapes of `decompile`/`compile` (arrays as base64 of file bytes).
//! - [`check`]: every check of nwn2 §A.8 (parse-time ones live in `codec`), each finding
//!   naming packet, index and rule; [`info`]: the summary of `nwn2 info`.
//! - [`walkmesh`]: the ASWM bake of nwn2 §A.7 from a vertex grid: checkerboard triangles,
//!   edges, slope-walkable flags, tiles, per-tile path tables (fewest-triangle next hops) and
//!   islands with their path table; TRN style (whole area) or TRX style (border dropped).
//! - [`export`]: heights on the area's vertex grid → TRWH + TRRN (vertex normals, blend-map
//!   DDS) + WATR + ASWM; heightmap sampling (region stretched onto the area) and the height
//!   range ([`export::GAME_HEIGHT_RANGE`], a project choice: the spec states no limit).
//! - [`from_swg`]: the only file that touches the SWG model and evaluators: heights at the
//!   vertices themselves, water levels per megatile, splat weights for the blend maps.
//!
//! Conventions: area (x, y) = (world x − X0, world z − Z0) for SWG input; vertex (c, r) at
//! the toolset's own f32 positions ([`walkmesh::VertexGrid::xy`]); row 0 and blend-map row 0
//! at the area's minimum y; the checkerboard diagonal of nwn2 §A.1 in TRRN and ASWM alike.

use std::path::{Path, PathBuf};

pub mod check;
pub mod codec;
pub mod export;
pub mod from_swg;
pub mod info;
pub mod materials;
pub mod model;
pub mod serde_util;
pub mod walkmesh;

// Records are read and written as their in-memory bytes (`bytemuck`), which are the file's
// little-endian bytes only on little-endian targets.
#[cfg(target_endian = "big")]
compile_error!("the nwn2 codec assumes a little-endian target");

pub use model::Nwn2File;

/// Bytes that do not parse: where (absolute byte offset; inside the ASWM, offset within the
/// decompressed data), which packet and field, and why.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{context} at byte {offset}: {message}")]
pub struct ParseError {
    pub offset: u64,
    pub context: String,
    pub message: String,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Nwn2Error {
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: std::io::Error },
    #[error("{}: {error}", path.display())]
    Parse { path: PathBuf, error: ParseError },
    #[error("{}: {error}", path.display())]
    Write { path: PathBuf, error: codec::WriteError },
}

/// Read and parse a `.trn` / `.trx`.
pub fn load(path: &Path) -> Result<Nwn2File, Nwn2Error> {
    let bytes = std::fs::read(path).map_err(|error| Nwn2Error::Io { path: path.into(), error })?;
    codec::read(&bytes).map_err(|error| Nwn2Error::Parse { path: path.into(), error })
}

/// Serialize and write atomically (temp file + rename).
pub fn save(path: &Path, file: &Nwn2File) -> Result<(), Nwn2Error> {
    let mut failed = None;
    let r = trnbake_raster::fsutil::write_atomic_with(path, |w| match codec::write_to(file, w) {
        Ok(()) => Ok(()),
        Err(codec::WriteFail::Io(e)) => Err(e),
        Err(codec::WriteFail::Write(e)) => {
            failed = Some(e);
            Err(std::io::Error::other("invalid model"))
        }
    });
    if let Some(error) = failed {
        return Err(Nwn2Error::Write { path: path.into(), error });
    }
    r.map_err(|error| Nwn2Error::Io { path: path.into(), error })
}
