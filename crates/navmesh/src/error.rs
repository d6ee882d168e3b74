//! The crate's one error type: each variant names what a user acts on, and the file.

use std::path::PathBuf;

/// Why building, writing or reading a navmesh failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NavmeshError {
    /// A setting out of range (its name and why).
    #[error("navmesh setting {0}")]
    Settings(String),
    /// The region is empty or off the map.
    #[error("region: {0}")]
    Region(String),
    /// A point off the map, or one the navmesh does not cover.
    #[error(transparent)]
    OffMap(#[from] trnbake_swg::eval::OffMap),
    /// A point given without a height has no walkable polygon of the navmesh under it (outside
    /// the set's region, on ground too steep or too close to an edge, in deep water, or in
    /// shallow water when wading is off).
    #[error("the point {x},{z} is off the navmesh: no walkable polygon under it (outside the set's region, too steep, in deep water, or in shallow water without wading)")]
    OffMesh { x: f32, z: f32 },
    /// Recast failed on a tile (the step that failed).
    #[error("tile {tx},{ty}: Recast's {step} failed")]
    Recast { tx: i32, ty: i32, step: &'static str },
    /// Detour refused a tile or a query (its status bits in hex).
    #[error("Detour: {what} failed (status {status:#010x})")]
    Detour { what: String, status: u32 },
    /// A single tile has more polygons than 32-bit polygon references can address (a region
    /// whose tiles only together pass the limit is written as several sets instead).
    #[error("{tiles} tiles of up to {max_polys} polygons: one tile does not fit Detour's 32-bit polygon references (polygon bits must be ≤ 22); use a smaller --tile-size; the tiles stay checkpointed")]
    TooManyPolys { tiles: usize, max_polys: usize },
    /// A file that is not what it should be (its path and what is wrong).
    #[error("{}: {why}", path.display())]
    BadFile { path: PathBuf, why: String },
    /// Reading or writing a file failed.
    #[error("{}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// The output folder holds a build of other settings or another terrain.
    #[error("{}: holds a navmesh build of other settings or another terrain (delete it, or choose another folder)", path.display())]
    OtherBuild { path: PathBuf },
    /// The build was interrupted (Ctrl-C); finished tiles are kept for a resume.
    #[error("interrupted; {done} of {total} tiles are kept and a rerun resumes")]
    Interrupted { done: usize, total: usize },
}

impl NavmeshError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        NavmeshError::Io { path: path.into(), error }
    }
}
