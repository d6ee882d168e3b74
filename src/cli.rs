//! Command-line interface (clap derive). `main` parses, then hands over to [`crate::app`].

use clap::{Parser, Subcommand};
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
}
