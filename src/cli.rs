//! Command-line interface (clap derive). `main` parses, then hands over to [`crate::app`].

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "trnbake", version, about = "Bake Star Wars Galaxies procedural terrain (.trn) into heightmaps and other rasters")]
pub struct Cli {
    /// Print only errors.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Summarise a .trn: header, families, layer and rule counts, referenced bitmaps, warnings.
    ///
    /// Example: trnbake info ../shared/data/swg/terrain/tatooine.trn --tree
    Info {
        /// The .trn file (omit for the built-in demo terrain).
        file: Option<PathBuf>,
        /// Also print the layer tree.
        #[arg(long)]
        tree: bool,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the typed model of a .trn as JSON (floats round-trip exactly).
    ///
    /// Example: trnbake decompile naboo.trn -o naboo.json
    Decompile {
        file: PathBuf,
        /// Output JSON file (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Validate a JSON terrain (reporting every problem) and write it as a .trn.
    ///
    /// Example: trnbake compile naboo.json -o naboo.trn
    Compile {
        file: PathBuf,
        #[arg(long, short)]
        output: PathBuf,
    },
    /// Print exact ground heights at points: `x,z` in, `x,z,height` out (4 decimals), in input order.
    ///
    /// Examples: trnbake sample tatooine.trn --data-root ../shared/data/swg --at 3528,-4804
    ///           trnbake sample tatooine.trn --points points.csv
    Sample {
        /// The .trn file (omit for the built-in demo terrain).
        file: Option<PathBuf>,
        /// A CSV of `x,z` lines (world metres; x east, z north, origin at the map centre); `-` for stdin.
        #[arg(long, conflicts_with = "at")]
        points: Option<PathBuf>,
        /// A single point `X,Z`.
        #[arg(long, value_name = "X,Z", allow_hyphen_values = true)]
        at: Option<String>,
        #[command(flatten)]
        height: HeightArgs,
    },
    /// Measure fidelity against the maps the original tool baked into a 0015 file:
    /// PFPM flora heights, WMAP water and SMAP rough-terrain bits (swg-trn §9.2).
    ///
    /// Example: trnbake fidelity ../shared/data/swg/terrain/yavin4.trn --data-root ../shared/data/swg
    Fidelity {
        file: PathBuf,
        /// Random cells/chunks per check.
        #[arg(long, default_value_t = 1000)]
        cells: usize,
        /// Seed of the cell choice.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        height: HeightArgs,
    },
    /// Bake a height grid (GPU or CPU) into OUTDIR/height.tif, height.png and manifest.json.
    ///
    /// Examples: trnbake bake -o out                        (the built-in demo terrain)
    ///           trnbake bake tatooine.trn --data-root ../shared/data/swg -o out --spacing 8
    ///           trnbake bake tatooine.trn -o out --region -1024,-1024,1022,1022 --backend cpu
    ///           trnbake bake naboo.trn -o shard3 --shard 3/8   then   trnbake merge out shard1 … shard8
    Bake(BakeArgs),
    /// Assemble the shard folders of one sharded bake into OUT.
    Merge {
        /// Output folder.
        #[arg(long, short)]
        output: PathBuf,
        /// Shard folders.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        #[arg(long, value_delimiter = ',', default_value = "tif,png")]
        format: Vec<String>,
    },
    /// Re-bake every fixture of a golden folder and compare each map with its expected image
    /// (per-post difference in LSB, posts over tolerance, PSNR); writes a Markdown report, a
    /// JUnit XML file and, per failing map, a diff heat map and a side-by-side image. Exits 1
    /// when a map fails. `--bless` rewrites the goldens that differ instead.
    ///
    /// Examples: trnbake check                              (trnbake's own corpus in golden/)
    ///           trnbake check --golden ci/goldens --report out/golden-report
    ///           trnbake check --golden ci/goldens --bless  (after an intended change)
    Check {
        /// The golden folder (holding golden.json).
        #[arg(long, default_value = "golden")]
        golden: PathBuf,
        #[arg(long, value_enum, default_value_t = crate::bake::Backend::Auto)]
        backend: crate::bake::Backend,
        /// Rewrite the images (and golden.json) of maps that differ, atomically, and print what changed.
        #[arg(long)]
        bless: bool,
        /// Where report.md, junit.xml and the images of failing maps go (not written by --bless).
        #[arg(long, value_name = "DIR", default_value = "check-report")]
        report: PathBuf,
        /// Only this fixture (repeatable).
        #[arg(long, value_name = "NAME")]
        fixture: Vec<String>,
    },
    /// List the GPU adapters wgpu sees.
    Adapters,
    /// Measure posts/second of the height pass on the CPU and GPU backends in one run.
    ///
    /// Example: trnbake bench ../shared/data/swg/terrain/tatooine.trn --data-root ../shared/data/swg
    Bench {
        /// The .trn file (omit for the built-in demo terrain).
        file: Option<PathBuf>,
        /// Repetitions per case (the best is reported).
        #[arg(long, default_value_t = 2)]
        repeat: usize,
        /// Print the results as JSON.
        #[arg(long)]
        json: bool,
        /// Also bake the full map at 16 m spacing on the CPU backend (the CPU reference figure of the height issue).
        #[arg(long)]
        full_16m: bool,
        #[command(flatten)]
        height: HeightArgs,
    },
}

/// Options of `bake`.
#[derive(Args, Debug, Clone)]
pub struct BakeArgs {
    /// The .trn file (omit for the built-in demo terrain).
    pub file: Option<PathBuf>,
    /// Output folder (created if missing).
    #[arg(long, short, default_value = "out")]
    pub output: PathBuf,
    /// Post spacing in metres (default: the file's pole spacing, 2 m on planets).
    #[arg(long)]
    pub spacing: Option<f64>,
    /// Region `X0,Z0,X1,Z1` in world metres (west, south, east, north posts; default: the whole map).
    #[arg(long, value_name = "X0,Z0,X1,Z1", allow_hyphen_values = true)]
    pub region: Option<String>,
    #[arg(long, value_enum, default_value_t = crate::bake::Backend::Auto)]
    pub backend: crate::bake::Backend,
    /// Only GPU adapters whose name contains this (e.g. `llvmpipe`, `NVIDIA`).
    #[arg(long)]
    pub adapter: Option<String>,
    /// Tile size in posts a side (default: 512 on the CPU; on a GPU the largest that fits
    /// one storage binding, at most 2048).
    #[arg(long)]
    pub tile: Option<u32>,
    /// Bake only shard K of N (a deterministic subset of tiles), for job arrays; assemble
    /// the shard folders with `trnbake merge`.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<crate::bake::Shard>,
    /// Output formats, comma-separated: tif (f32 GeoTIFF), png (16-bit, scale/offset in the manifest).
    #[arg(long, value_delimiter = ',', default_value = "tif,png")]
    pub format: Vec<String>,
    #[command(flatten)]
    pub height: HeightArgs,
}

/// Options of every command that evaluates heights.
#[derive(Args, Debug, Clone)]
pub struct HeightArgs {
    /// Where bitmap paths resolve: `terrain/x.tga` is read from DIR/terrain/x.tga.
    /// Defaults to the directory above the .trn's directory when that holds the bitmaps.
    #[arg(long, value_name = "DIR")]
    pub data_root: Option<PathBuf>,
    /// Road and river height model of swg-trn §5.12 (unvalidated). Off by default: the
    /// original tool's baked flora heights match the road-less terrain (see README).
    #[arg(long, value_enum, default_value_t = OnOff::Off)]
    pub roads: OnOff,
    /// The FBIT gain term of swg-trn §5.6 (matches the 0015 Tatooine vectors when on).
    #[arg(long, value_enum, default_value_t = OnOff::On)]
    pub bitmap_gain: OnOff,
    /// What a bitmap that cannot be found does: stop with an error, or warn and read as black.
    #[arg(long, value_enum, default_value_t = MissingBitmaps::Error)]
    pub missing_bitmaps: MissingBitmaps,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnOff {
    On,
    Off,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingBitmaps {
    Error,
    Zero,
}
