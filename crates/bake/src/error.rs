//! The error of a bake: the pipeline's own refusals, by name where a user can act on them (the
//! folder is in use, not writable or has something in the way of trnbake's own files, an
//! output cannot be written, a shard is missing, unfinished or of another bake, a tile is damaged, the
//! region is off the map), else in words; and the causes from the crates it drives (the plan,
//! the GPU, the raster writers, the file system) kept as sources.

use std::io;
use std::path::PathBuf;

/// An error of the bake pipeline, the surface maps or a golden check.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A job that cannot run or an input that cannot be used, in words.
    #[error("{0}")]
    Invalid(String),
    /// The output folder cannot be created or written into (permissions, a read-only file
    /// system): choose another folder, or fix its permissions.
    #[error("cannot write into {} (bake into a folder you may write to)", dir.display())]
    FolderNotWritable {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Another bake or merge holds the output folder (its lock, `folder::LOCK_FILE`): wait for
    /// it, or bake into another folder.
    #[error("{} is in use by {}; wait for it to finish, or bake into another folder", dir.display(), match pid { Some(p) => format!("another trnbake (PID {p})"), None => "another trnbake".into() })]
    FolderInUse { dir: PathBuf, pid: Option<u32> },
    /// A folder given to a merge is not a shard's output folder (it has no `bake-state.json`).
    #[error("{} is not a shard folder (no bake-state.json)", dir.display())]
    NotAShard {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Shards of the bake are missing from a merge: give the folders of all `count` shards.
    #[error("shard {} is missing: give the folders of all {count} shards (found {})", list(missing, *count), list(found, *count))]
    ShardMissing { missing: Vec<u32>, count: u32, found: Vec<u32> },
    /// A shard folder of a merge has not finished its work: re-run that shard to resume it.
    #[error("shard {}/{} ({}) has not finished (its bake-state.json says incomplete); re-run it to resume", shard.index, shard.count, dir.display())]
    ShardIncomplete { dir: PathBuf, shard: crate::Shard },
    /// A shard folder of a merge belongs to another bake than the first one given (`why`:
    /// another terrain, other heights, grid, backend, maps or options).
    #[error("shard {}/{} ({}) belongs to another bake than shard {}/{} ({}): {why}", shard.index, shard.count, dir.display(), first.index, first.count, first_dir.display())]
    ShardForeign { dir: PathBuf, shard: crate::Shard, first_dir: PathBuf, first: crate::Shard, why: &'static str },
    /// A tile is in none of the folders of a merge (its shard's checkpoints were removed).
    #[error("tile at post ({col}, {row}) is missing from every shard folder")]
    TileMissing { col: u32, row: u32 },
    /// A checkpoint tile is damaged (wrong size or checksum) and finished in no other folder:
    /// re-run the bake or shard that wrote it to recompute it.
    #[error("the tile at post ({col}, {row}) is damaged in {} (size or checksum) and is finished in no other folder; re-run that bake or shard to recompute it", path.display())]
    TileDamaged { col: u32, row: u32, path: PathBuf },
    /// A checkpoint tile belongs to another bake or place and is finished in no other folder.
    #[error("the tile at post ({col}, {row}) in {} belongs to another bake or place and is finished in no other folder; re-run that bake or shard to recompute it", path.display())]
    TileForeign { col: u32, row: u32, path: PathBuf },
    /// The region asked for lies entirely off the map.
    #[error("the region {},{},{},{} lies entirely off the map ({extent})", region[0], region[1], region[2], region[3])]
    OffMap { region: [f64; 4], extent: String },
    /// A file or folder of the user's sits where trnbake keeps `what` (a file named
    /// `.trnbake-tiles`, a folder named `manifest.json`): move it aside, or bake elsewhere.
    #[error("{} is in the way: trnbake keeps {what} there; move it aside or bake into another folder", path.display())]
    InTheWay { path: PathBuf, what: &'static str },
    /// An output or checkpoint could not be written (a full disk, most often): free space or
    /// bake elsewhere, then run the same command again to resume.
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    #[error(transparent)]
    Raster(#[from] trnbake_raster::Error),
    #[error(transparent)]
    Grid(#[from] trnbake_swg::grid::GridError),
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error(transparent)]
    Gpu(#[from] trnbake_gpu::GpuError),
    #[error(transparent)]
    Plan(#[from] trnbake_swg::plan::PlanError),
    #[error(transparent)]
    Load(#[from] trnbake_swg::model::LoadError),
    #[error(transparent)]
    JsonTerrain(#[from] trnbake_swg::model::json::JsonTerrainError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// `1/4, 3/4`: shard numbers of `count`.
fn list(shards: &[u32], count: u32) -> String {
    shards.iter().map(|k| format!("{k}/{count}")).collect::<Vec<_>>().join(", ")
}

/// [`Error::Write`] of `path`, the cause kept as its source: `.map_err(writing(&path))`.
pub(crate) fn writing<E: std::error::Error + Send + Sync + 'static>(path: &std::path::Path) -> impl FnOnce(E) -> Error + '_ {
    move |e| Error::Write { path: path.to_path_buf(), source: Box::new(e) }
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
