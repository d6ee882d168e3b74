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
