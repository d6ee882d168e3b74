//! `trnbake navmesh …`: Recast/Detour navmesh tiles of a planet for game servers
//! (docs/src/servers.md), and `navmesh path` to try a built set with Detour.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use sha2::{Digest, Sha256};

use trnbake_navmesh::{build_navmesh, Navmesh, NavmeshRequest, NavmeshSettings};
use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::HeightOptions;
use trnbake_swg::water::WaterTables;

use crate::parse::{parse_point, parse_region};

const NAVMESH_EXAMPLES: &str = "Examples:
  trnbake navmesh ../shared/data/swg/terrain/tatooine.trn -o tatooine-nav --region 0,0,256,256
  trnbake navmesh path tatooine-nav/navmesh.bin 128,128 230,30";

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true, after_help = NAVMESH_EXAMPLES)]
pub struct NavmeshArgs {
    #[command(subcommand)]
    pub command: Option<NavmeshCommand>,
    #[command(flatten)]
    pub build: NavmeshBuildArgs,
}

#[derive(Subcommand, Debug)]
pub enum NavmeshCommand {
    /// Load a navmesh set with Detour and print the straight path between two points:
    /// `x,y,z` corners, one a line (y up: the ground height of the mesh).
    #[command(after_help = NAVMESH_EXAMPLES)]
    Path {
        /// The set (`OUT/navmesh.bin` of `trnbake navmesh`).
        file: PathBuf,
        /// Start `X,Z` (world metres: x east, z north).
        #[arg(allow_hyphen_values = true)]
        from: String,
        /// End `X,Z`.
        #[arg(allow_hyphen_values = true)]
        to: String,
        /// Also walk through shallow water (by default paths keep dry feet).
        #[arg(long)]
        wade: bool,
    },
}

/// Options of `navmesh` (the build). Settings left out take the defaults of
/// `NavmeshSettings` (given as "default"; docs/src/servers.md says why).
#[derive(Args, Debug)]
pub struct NavmeshBuildArgs {
    /// The .trn file.
    #[arg(required = true)]
    pub file: Option<PathBuf>,
    /// Output folder (created if missing): navmesh.bin (or navmesh_COL_ROW.bin when a region needs several sets), navmesh.json, tile checkpoints.
    #[arg(long, short, default_value = "navmesh")]
    pub output: PathBuf,
    /// Region `X0,Z0,X1,Z1` in world metres (west, south, east, north; default: the whole map).
    #[arg(long, value_name = "X0,Z0,X1,Z1", allow_hyphen_values = true)]
    pub region: Option<String>,
    /// Where bitmap paths resolve: `terrain/x.tga` is read from DIR/terrain/x.tga (default:
    /// the directory above the .trn's directory, the client's layout). The other height options
    /// are the validated defaults (roads off, the bitmap gain on, a missing bitmap an error).
    #[arg(long, value_name = "DIR")]
    pub data_root: Option<PathBuf>,
    /// Recast cell size, m (default 0.5).
    #[arg(long)]
    pub cell_size: Option<f32>,
    /// Recast cell height, m (default 0.1).
    #[arg(long)]
    pub cell_height: Option<f32>,
    /// Spacing of the exact heights fed to Recast, m (default 1).
    #[arg(long)]
    pub source_spacing: Option<f32>,
    /// Agent radius, m (default 0.5).
    #[arg(long)]
    pub agent_radius: Option<f32>,
    /// Agent height, m (default 2).
    #[arg(long)]
    pub agent_height: Option<f32>,
    /// Highest step the agent climbs, m (default 0.9).
    #[arg(long)]
    pub max_climb: Option<f32>,
    /// Steepest walkable slope, degrees (default 45).
    #[arg(long)]
    pub max_slope: Option<f32>,
    /// Tile size in cells a side (default 256).
    #[arg(long)]
    pub tile_size: Option<u32>,
    /// Water deeper than this is not walkable, m (default 1); shallower water is walkable with its own area.
    #[arg(long)]
    pub water_depth: Option<f32>,
    /// Detail mesh sample distance, m (default 2).
    #[arg(long)]
    pub detail_sample_dist: Option<f32>,
    /// Detail mesh max height error, m (default 0.25).
    #[arg(long)]
    pub detail_max_error: Option<f32>,
    /// Keep Recast's vertex heights (by default the vertices are moved onto the ground: Recast's
    /// sit 1.5 cell heights above it, more on slopes).
    #[arg(long)]
    pub no_snap: bool,
    /// Also write OUT/navmesh-input.obj, the triangles fed to Recast over the region (for
    /// RecastDemo; use a small --region).
    #[arg(long)]
    pub obj: bool,
}

impl NavmeshBuildArgs {
    fn settings(&self) -> NavmeshSettings {
        let d = NavmeshSettings::default();
        NavmeshSettings {
            cell_size: self.cell_size.unwrap_or(d.cell_size),
            cell_height: self.cell_height.unwrap_or(d.cell_height),
            source_spacing: self.source_spacing.unwrap_or(d.source_spacing),
            agent_radius: self.agent_radius.unwrap_or(d.agent_radius),
            agent_height: self.agent_height.unwrap_or(d.agent_height),
            agent_max_climb: self.max_climb.unwrap_or(d.agent_max_climb),
            agent_max_slope: self.max_slope.unwrap_or(d.agent_max_slope),
            tile_size: self.tile_size.unwrap_or(d.tile_size),
            water_depth: self.water_depth.unwrap_or(d.water_depth),
            detail_sample_dist: self.detail_sample_dist.unwrap_or(d.detail_sample_dist),
            detail_sample_max_error: self.detail_max_error.unwrap_or(d.detail_sample_max_error),
            snap_to_ground: !self.no_snap,
            ..d
        }
    }
}

pub fn run(args: &NavmeshArgs, term: &Arc<crate::report::Terminal>) -> Result<()> {
    match &args.command {
        Some(NavmeshCommand::Path { file, from, to, wade }) => path(file, from, to, *wade),
        None => build(&args.build, term),
    }
}

fn build(args: &NavmeshBuildArgs, term: &Arc<crate::report::Terminal>) -> Result<()> {
    let file = args.file.as_deref().context("a .trn file is required")?;
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let t = Terrain::load(file)?;
    // Not `app::height_options`: `cli` names this module, so it may not reach `app` (no
    // module cycles, tests/crate_graph.rs).
    let opts = HeightOptions { data_root: args.data_root.clone().or_else(|| trnbake_swg::model::default_data_root(file)), ..Default::default() };
    let heights = HeightEvaluator::new(&t, &opts)?;
    let reporter: &dyn trnbake_swg::report::Reporter = term.as_ref();
    for w in &heights.plan.warnings {
        reporter.warn(w);
    }
    let water = WaterTables::new(&t);
    // The source a resume must match: the file's bytes and every height option.
    let mut h = Sha256::new();
    h.update(&bytes);
    h.update(format!("{:?}|{}|{}|{}", opts.data_root, opts.roads, opts.bitmap_gain, opts.missing_bitmaps_zero).as_bytes());
    let name = file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
    let source_id = format!("{name} sha256:{:x}", h.finalize());
    let region = args.region.as_deref().map(parse_region).transpose()?;
    let req = NavmeshRequest {
        heights: &heights,
        water: &water,
        settings: args.settings(),
        region,
        out_dir: args.output.clone(),
        source_id,
        obj: args.obj,
        reporter: term.as_ref(),
    };
    let start = std::time::Instant::now();
    let r = build_navmesh(&req).with_context(|| format!("navmesh of {}", file.display()))?;
    reporter.info(format!(
        "navmesh: {}x{} tiles ({} with polygons, {} built, {} resumed), {} polygons ({} ground, {} shallow water; at most {} a tile), {} {} bytes, {:.1} s",
        r.tiles_x,
        r.tiles_z,
        r.tiles_with_polys,
        r.tiles_built,
        r.tiles_resumed,
        r.polys,
        r.polys_ground,
        r.polys_shallow_water,
        r.max_polys_per_tile,
        if r.sets == 1 { "navmesh.bin".to_string() } else { format!("{} sets (navmesh_COL_ROW.bin, see navmesh.json)", r.sets) },
        r.bytes,
        start.elapsed().as_secs_f64()
    ));
    Ok(())
}

fn path(file: &std::path::Path, from: &str, to: &str, wade: bool) -> Result<()> {
    let point = |s: &str| parse_point(s).with_context(|| format!("`{s}` is not X,Z (two numbers)"));
    let (a, b) = (point(from)?, point(to)?);
    let nav = Navmesh::open(file)?;
    let Some(corners) = nav.ground_path(a, b, wade).with_context(|| file.display().to_string())? else {
        bail!("{}: no path from {from} to {to} (they are not connected on the mesh)", file.display());
    };
    let mut out = std::io::stdout().lock();
    for p in corners {
        use std::io::Write;
        writeln!(out, "{:.3},{:.3},{:.3}", p[0], p[1], p[2])?;
    }
    Ok(())
}
