//! `trnbake scs …`: argument structs (clap) and their runners (anyhow).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};

use crate::parse::{parse_list, positive_metres};
use trnbake_raster::Grid;
use trnbake_scs::export::{export_map, ExportOptions};
use trnbake_scs::token::Token;

#[derive(Subcommand, Debug)]
pub enum ScsCommand {
    /// Summarise a map (`.mbd` + folder) or one sector: sectors, items by type, nodes, bounds.
    #[command(after_help = "Examples:\n  trnbake scs info ../shared/data/scs/modeltest.mbd")]
    Info {
        /// `NAME.mbd`, or any file of one sector (`sec+0000+0000.aux`).
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Run the in-project checks of scs §B.9 (byte accounting, quad grid sizes, width
    /// sequence, columns, tokens, node references); exit 1 on any failure, listing all.
    #[command(after_help = "Examples:\n  trnbake scs check out/map/trnbake.mbd            # a map from `trnbake scs export`")]
    Check {
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Fit a mosaic of Bezier Patch items to a heightmap (or a SWG .trn region) and write a
    /// complete map folder with manifest.json (fit error, georeference).
    #[command(after_help = "\
Examples:
  trnbake scs export ../shared/data/swg/terrain/tatooine.trn --region 0,0,1024,1024 -o out/map
  trnbake scs export out/height.tif -o out/map2 --patch 32 --max-error 0.5")]
    Export(ExportArgs),
    /// Rasterize a map's terrain to a Float32 GeoTIFF (Bezier patches exact, Terrain items
    /// approximate); an export is put back on its source's grid and coordinates.
    #[command(after_help = "Examples:\n  trnbake scs rasterize out/map/trnbake.mbd -o back.tif")]
    Rasterize {
        mbd: PathBuf,
        #[arg(long, short)]
        output: PathBuf,
        /// Post spacing in metres (default: the export's source spacing, else 1).
        #[arg(long, allow_negative_numbers = true)]
        spacing: Option<f64>,
    },
    /// Time `scs export` end to end on a synthetic heightmap (or a .trn region): seconds per
    /// stage and peak RSS.
    #[command(after_help = "Examples:\n  trnbake scs bench --size 1024 --spacing 2 --patch 32")]
    Bench(BenchArgs),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    On,
    Off,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// A SWG `.trn`, or any heightmap `trnbake convert` reads (GeoTIFF, .ter, PNG, RAW).
    pub input: PathBuf,
    /// Output folder (MAPDIR): NAME.mbd, NAME/sec*.{aux,base,data,desc,layer}, manifest.json.
    #[arg(long, short)]
    pub output: PathBuf,
    /// Region X0,Z0,X1,Z1 in the input's coordinates (x east, z north); required for a .trn.
    #[arg(long, value_name = "X0,Z0,X1,Z1", allow_hyphen_values = true)]
    pub region: Option<String>,
    /// Base patch size in metres (a whole multiple of the post spacing).
    #[arg(long, allow_negative_numbers = true, default_value_t = 32.0)]
    pub patch: f64,
    /// SCS position X,Z (X east, Z south) of the region's north-west corner.
    #[arg(long, value_name = "X,Z", allow_hyphen_values = true, default_value = "0,0")]
    pub origin: String,
    /// Terrain material token for the quads (`34` = grass_ger_main in TruckLib's sample).
    #[arg(long, default_value = "34")]
    pub material: String,
    /// Map name (NAME.mbd).
    #[arg(long, default_value = "trnbake")]
    pub name: String,
    /// Split a patch (quadtree, watertight) while its worst post misses by more than M metres;
    /// where C1 patches cannot hold M, patches of one post with C0 seams do (still watertight).
    #[arg(long, allow_negative_numbers = true, value_name = "M")]
    pub max_error: Option<f64>,
    /// Smallest patch a split may make, in metres (default 4 post spacings); below it, the C0
    /// fallback's patches of one post.
    #[arg(long, allow_negative_numbers = true, value_name = "M")]
    pub min_patch: Option<f64>,
    /// With --max-error: exit 1 (after writing the map) when some patch still misses it.
    #[arg(long)]
    pub strict: bool,
    /// Post spacing: the sampling of a .trn (default 2 m); for a heightmap, relabels its spacing like `convert --spacing`.
    #[arg(long, allow_negative_numbers = true)]
    pub spacing: Option<f64>,
    /// Columns × rows of a RAW input.
    #[arg(long, value_name = "COLSxROWS")]
    pub dims: Option<String>,
    /// Heights of raw 0 and 65535 of a PNG/R16 input.
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    pub height_range: Option<String>,
    /// Where a .trn's bitmap paths resolve.
    #[arg(long)]
    pub data_root: Option<PathBuf>,
    /// Apply the SWG road height model (a .trn input).
    #[arg(long, value_enum, default_value = "off")]
    pub roads: Switch,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Region edge in metres.
    #[arg(long, default_value_t = 4000.0)]
    pub size: f64,
    #[arg(long, default_value_t = 2.0)]
    pub spacing: f64,
    #[arg(long, default_value_t = 32.0)]
    pub patch: f64,
    #[arg(long)]
    pub max_error: Option<f64>,
    /// Use this .trn's region centred on (0, 0) instead of the synthetic heightmap.
    #[arg(long)]
    pub trn: Option<PathBuf>,
    #[arg(long)]
    pub data_root: Option<PathBuf>,
    /// Where the map goes (default: a temporary folder, removed afterwards).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: ScsCommand, quiet: bool) -> Result<()> {
    match cmd {
        ScsCommand::Info { path, json } => info(&path, json),
        ScsCommand::Check { path, json } => check(&path, json, quiet),
        ScsCommand::Export(a) => export(&a, quiet),
        ScsCommand::Rasterize { mbd, output, spacing } => rasterize(&mbd, &output, spacing, quiet),
        ScsCommand::Bench(a) => bench(&a),
    }
}

fn info(path: &Path, json: bool) -> Result<()> {
    let loaded = trnbake_scs::inspect::load(path)?;
    let i = trnbake_scs::inspect::info(&loaded);
    if json {
        println!("{}", serde_json::to_string_pretty(&i)?);
        return Ok(());
    }
    println!("map version: {}", i.version.map_or("-".into(), |v| v.to_string()));
    println!("sectors: {} ({})", i.sectors.len(), i.sectors.join(", "));
    println!("files: {}", i.files);
    for (t, n) in &i.items {
        println!("items {t}: {n}");
    }
    println!("nodes: {}", i.nodes);
    if let Some(b) = i.node_bounds {
        println!("node bounds: X {:.3}..{:.3}, Y {:.3}..{:.3}, Z {:.3}..{:.3}", b[0], b[3], b[1], b[4], b[2], b[5]);
    }
    if let Some(b) = i.item_bounds {
        println!("item k-DOP bounds: X {:.3}..{:.3}, Y {:.3}..{:.3}, Z {:.3}..{:.3}", b[0], b[3], b[1], b[4], b[2], b[5]);
    }
    if i.problems > 0 {
        println!("unreadable: {} (run `trnbake scs check`)", i.problems);
    }
    Ok(())
}

fn check(path: &Path, json: bool, quiet: bool) -> Result<()> {
    let loaded = trnbake_scs::inspect::load(path)?;
    let problems = trnbake_scs::inspect::check(&loaded);
    if json {
        println!("{}", serde_json::to_string_pretty(&problems)?);
    } else {
        for p in &problems {
            eprintln!("{p}");
        }
    }
    if !problems.is_empty() {
        bail!("{}: {} check(s) failed", path.display(), problems.len());
    }
    if !quiet && !json {
        let items: usize = loaded.files.iter().map(|f| f.file.items.len()).sum();
        let files = loaded.files.len() + loaded.other_files;
        println!(
            "{}: ok ({files} file{}, {items} item{}, every check passed)",
            path.display(),
            if files == 1 { "" } else { "s" },
            if items == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

/// Heights of the export's input on its region: (grid, heights, citation).
fn load_input(a: &ExportArgs) -> Result<(Grid, Vec<f32>, Option<String>)> {
    let region = a.region.as_deref().map(|r| parse_list(r, 4, "--region")).transpose()?;
    if let Some(r) = &region {
        if !(r[2] > r[0] && r[3] > r[1]) {
            bail!("--region X0,Z0,X1,Z1 needs X1 > X0 and Z1 > Z0");
        }
    }
    if trnbake_scs::from_swg::is_trn(&a.input) {
        let r = region.context("a .trn input needs --region X0,Z0,X1,Z1 (SWG world metres, x east, z north)")?;
        let sp = a.spacing.unwrap_or(2.0);
        if !(sp.is_finite() && sp > 0.0) {
            bail!("--spacing must be a positive number of metres");
        }
        let cols = ((r[2] - r[0]) / sp + 1e-9).floor() as u64 + 1;
        let rows = ((r[3] - r[1]) / sp + 1e-9).floor() as u64 + 1;
        if cols * rows > 1 << 28 {
            bail!("--region at {sp} m is {cols}×{rows} posts; at most 2^28");
        }
        let grid = Grid { cols: cols as u32, rows: rows as u32, x0: r[0], z0: r[1], spacing: sp };
        let h = trnbake_scs::from_swg::swg_heights(&a.input, grid, a.data_root.clone(), a.roads == Switch::On)?;
        return Ok((grid, h, None));
    }
    let dims = match &a.dims {
        Some(d) => {
            let (c, r) = d.split_once(['x', 'X']).with_context(|| format!("--dims `{d}` is not COLSxROWS"))?;
            Some((c.trim().parse()?, r.trim().parse()?))
        }
        None => None,
    };
    let hr = a.height_range.as_deref().map(|s| parse_list(s, 2, "--height-range")).transpose()?.map(|v| (v[0], v[1]));
    let opts = trnbake_raster::readers::ImportOptions { dims, spacing: a.spacing, height_range: hr, ..Default::default() };
    let imp = trnbake_raster::readers::open(&a.input, &opts)?;
    let g = imp.source.grid();
    let (c0, r0, c1, r1) = match region {
        Some(r) => {
            let c0 = ((r[0] - g.x0) / g.spacing - 1e-9).ceil().max(0.0) as u64;
            let r0 = ((r[1] - g.z0) / g.spacing - 1e-9).ceil().max(0.0) as u64;
            let c1 = (((r[2] - g.x0) / g.spacing + 1e-9).floor() as i64).min(i64::from(g.cols) - 1);
            let r1 = (((r[3] - g.z0) / g.spacing + 1e-9).floor() as i64).min(i64::from(g.rows) - 1);
            if c1 < c0 as i64 || r1 < r0 as i64 {
                bail!("--region does not overlap {} (x {}..{}, z {}..{})", a.input.display(), g.x0, g.east_x(), g.z0, g.north_z());
            }
            (c0 as u32, r0 as u32, c1 as u32, r1 as u32)
        }
        None => (0, 0, g.cols - 1, g.rows - 1),
    };
    let (cols, rows) = (c1 - c0 + 1, r1 - r0 + 1);
    let mut h = vec![0f32; cols as usize * rows as usize];
    imp.source.read_block(c0, r0, cols, rows, &mut h).with_context(|| format!("reading {}", a.input.display()))?;
    let grid = Grid { cols, rows, x0: g.x0 + f64::from(c0) * g.spacing, z0: g.z0 + f64::from(r0) * g.spacing, spacing: g.spacing };
    Ok((grid, h, imp.citation))
}

fn export_options(a: &ExportArgs) -> Result<ExportOptions> {
    let o = parse_list(&a.origin, 2, "--origin")?;
    let material = Token::new(&a.material).with_context(|| format!("--material `{}` is not a token (≤ 12 of 0-9 a-z _)", a.material))?;
    if let Some(m) = a.max_error {
        if !(m.is_finite() && m >= 0.0) {
            bail!("--max-error must be ≥ 0 metres");
        }
    }
    if !(a.patch.is_finite() && a.patch > 0.0) {
        bail!("--patch must be a positive number of metres");
    }
    // fixed3 positions are 1/256 m; an origin on that lattice keeps patch corners exact.
    let r = |v: f64| (v * 256.0).round() / 256.0;
    Ok(ExportOptions { name: a.name.clone(), patch_m: a.patch, origin: (r(o[0]), r(o[1])), material, max_error: a.max_error, min_patch_m: a.min_patch })
}

fn export(a: &ExportArgs, quiet: bool) -> Result<()> {
    let opts = export_options(a)?;
    let term = crate::report::Terminal::new(quiet);
    let pb = trnbake_bake::Progress::new(&term, 2, "steps", "scs export");
    pb.set_stage("heights");
    let (grid, h, citation) = load_input(a)?;
    pb.inc(1);
    pb.set_stage("patch fit and sectors");
    let e = export_map(&h, grid, citation, &a.input.display().to_string(), &opts, &a.output)?;
    pb.inc(1);
    pb.finish();
    let m = &e.manifest;
    if m.patch_size != a.patch && !quiet {
        eprintln!("note: base patches of {} m instead of {} m, to hold --max-error", m.patch_size, a.patch);
    }
    if m.c0_patches > 0 && !quiet {
        eprintln!(
            "note: {} patch(es) of one post ({} m) with C0 seams, where C1 patches could not hold --max-error {} m",
            m.c0_patches,
            m.georef.grid.spacing,
            a.max_error.unwrap_or(f64::NAN)
        );
    }
    if let (Some(max_error), Some(false)) = (a.max_error, m.max_error_held) {
        // Said even with --quiet: the map does not keep the promise the flag makes.
        let w = &m.over_max_error[0];
        eprintln!(
            "warning: {} patch(es) miss --max-error {max_error} m (worst {:.3} m, patch {} centred at {:.1},{:.1}, worst post at {:.1},{:.1}: {}); every one is listed in {}",
            m.over_max_error.len(),
            w.max,
            w.uid,
            w.centre[0],
            w.centre[1],
            w.worst_post[0],
            w.worst_post[1],
            w.reason,
            a.output.join("manifest.json").display()
        );
        if a.strict {
            bail!("--strict: {} patch(es) of {} miss --max-error {max_error} m (the map was written)", m.over_max_error.len(), e.mbd.display());
        }
    }
    if !quiet {
        let m = &e.manifest;
        println!(
            "{}: {} patches in {} sector(s); fit RMS {:.4} m, max {:.4} m over {} posts; worst patch {} (centre {:.1},{:.1}, {} m): RMS {:.4} m, max {:.4} m",
            e.mbd.display(),
            m.patches,
            m.sectors.len(),
            m.rms,
            m.max,
            m.posts,
            m.worst_patch.uid,
            m.worst_patch.centre[0],
            m.worst_patch.centre[1],
            m.worst_patch.size,
            m.worst_patch.rms,
            m.worst_patch.max
        );
    }
    Ok(())
}

fn rasterize(mbd: &Path, out: &Path, spacing: Option<f64>, quiet: bool) -> Result<()> {
    if let Some(s) = spacing {
        positive_metres("--spacing", s)?;
    }
    let r = trnbake_scs::raster::rasterize(mbd, spacing)?;
    trnbake_raster::write_geotiff_f32(out, &r.grid, &r.heights, &r.citation).with_context(|| format!("writing {}", out.display()))?;
    let side = serde_json::json!({
        "generator": format!("trnbake {} scs rasterize", env!("CARGO_PKG_VERSION")),
        "map": mbd.display().to_string(),
        "coordinates": if r.source_georef { "export source (manifest.json)" } else { "SCS world: x = X east, y = -Z (Z points south)" },
        "crs": r.citation,
        "grid": r.grid,
        "bezier_patches": r.patches,
        "terrain_items": r.terrain_items,
        "covered_posts": r.covered_posts,
        "approximate": r.approximate_posts > 0,
        "approximate_posts": r.approximate_posts,
        "approximate_note": "Terrain items: spine height only (profiles and noise are not public, scs §B.7/§B.8)",
    });
    let mut sp = out.as_os_str().to_owned();
    sp.push(".json");
    trnbake_raster::fsutil::write_atomic(Path::new(&sp), serde_json::to_string_pretty(&side)?.as_bytes())?;
    if !quiet {
        println!(
            "{}: {}×{} posts at {} m, {} of them covered ({} approximate), {} Bezier patches, {} Terrain items",
            out.display(),
            r.grid.cols,
            r.grid.rows,
            r.grid.spacing,
            r.covered_posts,
            r.approximate_posts,
            r.patches,
            r.terrain_items
        );
    }
    Ok(())
}

/// Peak resident set (VmHWM) in KiB, from /proc/self/status (Linux).
pub fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()
}

/// A smooth synthetic landscape with some relief at every scale (metres).
pub fn synthetic_height(x: f64, z: f64) -> f64 {
    120.0 * (x / 700.0).sin() * (z / 900.0).cos()
        + 35.0 * ((x + 2.0 * z) / 180.0).sin()
        + 6.0 * ((3.0 * x - z) / 41.0).cos()
        + 1.5 * (x / 9.0).sin() * (z / 13.0).sin()
}

fn bench(a: &BenchArgs) -> Result<()> {
    let t0 = std::time::Instant::now();
    let n = (a.size / a.spacing).round() as u32 + 1;
    let grid = Grid { cols: n, rows: n, x0: -a.size / 2.0, z0: -a.size / 2.0, spacing: a.spacing };
    let (h, source) = match &a.trn {
        Some(t) => (trnbake_scs::from_swg::swg_heights(t, grid, a.data_root.clone(), false)?, t.display().to_string()),
        None => {
            let mut h = vec![0f32; grid.len()];
            use rayon::prelude::*;
            h.par_chunks_mut(n as usize).enumerate().for_each(|(r, row)| {
                for (c, v) in row.iter_mut().enumerate() {
                    *v = synthetic_height(grid.x0 + c as f64 * a.spacing, grid.z0 + r as f64 * a.spacing) as f32;
                }
            });
            (h, "synthetic".to_string())
        }
    };
    let t_input = t0.elapsed().as_secs_f64();
    let tmp;
    let out = match &a.output {
        Some(o) => o.clone(),
        None => {
            tmp = std::env::temp_dir().join(format!("trnbake-scs-bench-{}", std::process::id()));
            tmp.clone()
        }
    };
    let opts = ExportOptions {
        name: "bench".into(),
        patch_m: a.patch,
        origin: (0.0, 0.0),
        material: Token::new("34").expect("token"),
        max_error: a.max_error,
        min_patch_m: None,
    };
    let t1 = std::time::Instant::now();
    let e = export_map(&h, grid, None, &source, &opts, &out)?;
    let t_export = t1.elapsed().as_secs_f64();
    let m = &e.manifest;
    let k = (a.patch / a.spacing).round() as usize;
    let (ind_rms, ind_max) =
        trnbake_scs::fit::independent_patch_error(trnbake_scs::fit::FitGrid { cols: grid.cols as usize, rows: grid.rows as usize, h: &h }, k);
    let report = serde_json::json!({
        "source": source,
        "posts": grid.len(),
        "size_m": a.size,
        "spacing_m": a.spacing,
        "patch_m": a.patch,
        "patches": m.patches,
        "rms_m": m.rms,
        "max_m": m.max,
        "independent_patches_rms_m": ind_rms,
        "independent_patches_max_m": ind_max,
        "seconds": {
            "input": t_input,
            "solve": m.seconds.solve,
            "refine_and_errors": m.seconds.refine,
            "build_and_write": m.seconds.build_and_write,
            "export_total": t_export,
            "total": t0.elapsed().as_secs_f64(),
        },
        "solver_share_of_export": m.seconds.solve / t_export,
        "peak_rss_mib": peak_rss_kib().map(|k| k as f64 / 1024.0),
    });
    if a.output.is_none() {
        let _ = std::fs::remove_dir_all(&out);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "scs bench: {} {}×{} posts ({} m at {} m), {} patches of {} m: input {:.2} s, solve {:.3} s, refine+errors {:.3} s, build+write {:.3} s, export {:.2} s (solver {:.1} %), total {:.2} s; RMS {:.4} m, max {:.4} m (independent per-patch LS, not watertight: RMS {:.4} m, max {:.4} m); peak RSS {} MiB",
            source,
            n,
            n,
            a.size,
            a.spacing,
            m.patches,
            a.patch,
            t_input,
            m.seconds.solve,
            m.seconds.refine,
            m.seconds.build_and_write,
            t_export,
            100.0 * m.seconds.solve / t_export,
            t0.elapsed().as_secs_f64(),
            m.rms,
            m.max,
            ind_rms,
            ind_max,
            peak_rss_kib().map_or("?".into(), |k| format!("{:.0}", k as f64 / 1024.0))
        );
    }
    Ok(())
}
