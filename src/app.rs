//! What each subcommand does: validated arguments in, library calls, output out.

use crate::cli::{Cli, Command, HeightArgs, MissingBitmaps, OnOff};
use crate::parse::{parse_pair, parse_point, parse_region, positive_metres};
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::Path;
use trnbake_raster::fsutil::write_atomic;
use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::model::json::{demo_terrain, terrain_from_json};
use trnbake_swg::model::{info::tree_text, Terrain};
use trnbake_swg::plan::HeightOptions;
use trnbake_swg::report::Reporter;

/// Load a terrain, or the demo when no file is given.
pub fn load_terrain(file: Option<&Path>) -> Result<Terrain> {
    match file {
        Some(p) => Ok(Terrain::load(p)?),
        None => Ok(demo_terrain()),
    }
}

pub fn run(cli: Cli) -> Result<()> {
    // What the libraries report (notes, warnings, progress), shown on stderr; silent with -q.
    let term = std::sync::Arc::new(crate::report::Terminal::new(cli.quiet));
    match cli.command {
        Command::Info { file, tree, json } => info(file.as_deref(), tree, json),
        Command::Decompile { file, output } => decompile(&file, output.as_deref()),
        Command::Compile { file, output } => compile(&file, &output),
        Command::Sample { file, points, at, height } => sample(file.as_deref(), points.as_deref(), at.as_deref(), &height),
        Command::Fidelity { file, cells, seed, json, height, surface, pimp_samples, pimp_reach, pimp_every_cell, explain, out, dump_cells, dump_rect } => {
            // Resolved per terrain: the default reach comes from its header.
            let pimp_samples = PimpSamplingArg { per_side: pimp_samples, reach: pimp_reach };
            let pimp_cells =
                if pimp_every_cell { trnbake_swg::fidelity::PimpCells::Every } else { trnbake_swg::fidelity::PimpCells::Random { n: cells * 4, seed } };
            if let Some(path) = dump_cells {
                let t = Terrain::load(&file)?;
                let e = height_evaluator(&t, &height, Some(&file))?;
                let se = trnbake_swg::surface::SurfaceEvaluator::new(&t, &height_options(&height, Some(&file)), surface.options())?;
                let rect = match dump_rect.as_deref() {
                    None => None,
                    Some(&[c0, r0, c1, r1]) => Some([c0, r0, c1, r1]),
                    Some(v) => anyhow::bail!("--dump-rect takes four numbers C0,R0,C1,R1, got {}", v.len()),
                };
                let list = trnbake_swg::fidelity::dump_cell_list(&t, pimp_cells, rect);
                let text = trnbake_swg::fidelity::dump_cells(&t, &e, &se, surface.normals, &list);
                return trnbake_raster::fsutil::write_atomic(&path, text.as_bytes()).with_context(|| format!("writing {}", path.display()));
            }
            if explain {
                fidelity_explain(&file, pimp_cells, &height, &surface, pimp_samples, &out)
            } else {
                fidelity(&file, cells, seed, pimp_cells, json, &height, &surface, pimp_samples)
            }
        }
        Command::Bake(args) => bake(&args, &term),
        Command::Merge { output, shards, export } => {
            // The shards' own outputs unless an export flag is given.
            let given = export.format.is_some()
                || export.preset.is_some()
                || export.size.is_some()
                || export.tiles.is_some()
                || export.cog
                || export.compress != trnbake_raster::writers::geotiff::Compression::Deflate;
            let choice = if given { Some(export_choice(&export)?) } else { None };
            if let Some(c) = &choice {
                preset_note_before(c, &*term);
            }
            let r = trnbake_bake::merge(&output, &shards, choice.as_ref(), &*term)?;
            preset_note_after(r.export.as_ref(), &*term);
            if !cli.quiet {
                let files = r.outputs.len();
                eprintln!("merged {} posts into {} ({files} file{})", r.posts, output.display(), if files == 1 { "" } else { "s" });
            }
            Ok(())
        }
        Command::Check { golden, backend, bless, report, fixture } => check(golden, backend, bless, report, fixture, &term),
        Command::Adapters => adapters(),
        Command::Bench { file, repeat, json, full_16m, planet, planet_cpu, planet_tile, backends, height, surface } => {
            let planet = planet.map(|spacings| (spacings, planet_tile, planet_cpu));
            bench(file.as_deref(), repeat, json, full_16m, planet, backends, &height, &surface)
        }
        Command::Convert(args) => convert(&args, &term),
        Command::Scs(cmd) => crate::scs_cmd::run(cmd, cli.quiet),
        Command::Nwn2(args) => crate::nwn2_cmd::run(&args, cli.quiet),
        Command::Tiles(args) => crate::tiles_cmd::tiles(&args, height_options(&args.height, args.file.as_deref()), &term),
        Command::Serve { dir, port } => crate::tiles_cmd::serve(&dir, port),
        Command::Navmesh(args) => crate::navmesh_cmd::run(&args, &term),
        Command::BenchExport { posts, dir, format, json } => bench_export(posts, dir, format.as_deref(), json),
    }
}

fn info(file: Option<&Path>, tree: bool, json: bool) -> Result<()> {
    let t = load_terrain(file)?;
    let info = t.info();
    let mut out = std::io::stdout().lock();
    if json {
        let mut v = serde_json::to_value(&info)?;
        if tree {
            v["tree"] = serde_json::Value::String(tree_text(&t.generator.layers));
        }
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    let name = file.map_or_else(|| "built-in demo terrain".to_string(), |p| p.display().to_string());
    writeln!(out, "{name}: PTAT {:04}", info.version)?;
    writeln!(out, "  source file        {}", info.source_file)?;
    writeln!(
        out,
        "  map                {} m wide, chunk {} m, {} tiles/chunk, poles every {} m ({} posts a side)",
        info.map_width, info.chunk_width, info.tiles_per_chunk, info.pole_spacing, info.posts_per_side
    )?;
    match info.global_water {
        Some(h) => writeln!(out, "  global water       {h} m")?,
        None => writeln!(out, "  global water       none")?,
    }
    let fams: Vec<String> = info.families.iter().map(|(k, v)| format!("{v} {k}")).collect();
    writeln!(out, "  families           {}", fams.join(", "))?;
    writeln!(out, "  layers             {} ({} enabled), depth {}", info.layers, info.enabled_layers, info.max_depth)?;
    writeln!(out, "  rules (tag version: count, disabled)")?;
    for (k, c) in &info.rules {
        writeln!(out, "    {k}  {:5}  {:5}", c.total, c.disabled)?;
    }
    let ids = |s: &std::collections::BTreeSet<i32>| s.iter().map(i32::to_string).collect::<Vec<_>>().join(" ");
    writeln!(out, "  fractal families used  {}", ids(&info.referenced_fractal_families))?;
    writeln!(out, "  bitmap families used   {}", ids(&info.referenced_bitmap_families))?;
    for f in &info.bitmap_files {
        writeln!(out, "  needs bitmap       {f}")?;
    }
    writeln!(out, "  baked maps         {}", if info.has_baked_maps { "WMAP/SMAP" } else { "none" })?;
    writeln!(out, "  flora maps         {}", if info.has_flora_maps { "PIMP/PFPM" } else { "none" })?;
    for w in &info.warnings {
        writeln!(out, "  warning: {w}")?;
    }
    if tree {
        writeln!(out, "\nlayer tree:")?;
        out.write_all(tree_text(&t.generator.layers).as_bytes())?;
    }
    Ok(())
}

fn decompile(file: &Path, output: Option<&Path>) -> Result<()> {
    let t = Terrain::load(file)?;
    let json = serde_json::to_string_pretty(&t)?;
    match output {
        Some(o) => write_atomic(o, json.as_bytes()).with_context(|| format!("cannot write {}", o.display()))?,
        None => writeln!(std::io::stdout().lock(), "{json}")?,
    }
    Ok(())
}

fn compile(file: &Path, output: &Path) -> Result<()> {
    let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    let t = terrain_from_json(&text, &file.display().to_string())?;
    write_atomic(output, &t.to_bytes()).with_context(|| format!("cannot write {}", output.display()))?;
    Ok(())
}

/// Turn the height flags into evaluator options. Without `--data-root`, a .trn inside a
/// `terrain/` folder uses that folder's parent (the client data layout, swg-trn §3.6).
pub fn height_options(args: &HeightArgs, file: Option<&Path>) -> HeightOptions {
    let data_root = args.data_root.clone().or_else(|| trnbake_swg::model::default_data_root(file?));
    HeightOptions {
        roads: args.roads == OnOff::On,
        bitmap_gain: args.bitmap_gain == OnOff::On,
        data_root,
        missing_bitmaps_zero: args.missing_bitmaps == MissingBitmaps::Zero,
    }
}

/// Build the height evaluator of a terrain, printing plan warnings.
pub fn height_evaluator(t: &Terrain, args: &HeightArgs, file: Option<&Path>) -> Result<HeightEvaluator> {
    let e = HeightEvaluator::new(t, &height_options(args, file))?;
    for w in &e.plan.warnings {
        tracing::warn!("{w}");
    }
    Ok(e)
}

fn sample(file: Option<&Path>, points: Option<&Path>, at: Option<&str>, args: &HeightArgs) -> Result<()> {
    let t = load_terrain(file)?;
    let pts: Vec<(f32, f32)> = match (at, points) {
        (Some(a), _) => {
            let p = parse_point(a).with_context(|| format!("--at `{a}` is not X,Z (two numbers)"))?;
            if !t.header.on_map(f64::from(p.0), f64::from(p.1)) {
                bail!("--at {a} is off the map ({})", t.header.extent_text());
            }
            vec![p]
        }
        (None, Some(p)) => {
            let text = if p == Path::new("-") {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(p).with_context(|| format!("cannot read {}", p.display()))?
            };
            let mut v = Vec::new();
            for (i, line) in text.lines().enumerate() {
                let l = line.trim();
                if l.is_empty() || l.starts_with('#') || (i == 0 && l.chars().next().is_some_and(|c| c.is_alphabetic())) {
                    continue; // blank, comment or a header such as `x,z`
                }
                let point = parse_point(l).with_context(|| format!("{} line {}: `{l}` is not `x,z` (two numbers)", p.display(), i + 1))?;
                if !t.header.on_map(f64::from(point.0), f64::from(point.1)) {
                    bail!("{} line {}: {l} is off the map ({})", p.display(), i + 1, t.header.extent_text());
                }
                v.push(point);
            }
            v
        }
        (None, None) => bail!("give --at X,Z or --points FILE.csv (or - for standard input)"),
    };
    let e = height_evaluator(&t, args, file)?;
    let hs = e.heights_at(&pts);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for ((x, z), h) in pts.iter().zip(hs) {
        writeln!(out, "{x},{z},{h:.4}")?;
    }
    out.flush()?;
    Ok(())
}

/// `fidelity --pimp-samples N [--pimp-reach R]` before the terrain is loaded.
#[derive(Clone, Copy)]
struct PimpSamplingArg {
    per_side: u32,
    reach: Option<f32>,
}

impl PimpSamplingArg {
    fn resolve(self, t: &Terrain) -> trnbake_swg::fidelity::PimpSampling {
        match self.reach {
            Some(reach) => trnbake_swg::fidelity::PimpSampling { per_side: self.per_side, reach },
            None => trnbake_swg::fidelity::PimpSampling::header_box(t, self.per_side),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn fidelity(
    file: &Path,
    cells: usize,
    seed: u64,
    pimp_cells: trnbake_swg::fidelity::PimpCells,
    json: bool,
    args: &HeightArgs,
    surface_args: &crate::cli::SurfaceArgs,
    pimp_samples: PimpSamplingArg,
) -> Result<()> {
    use trnbake_swg::fidelity::{check_pfpm, check_smap, check_wmap};
    let t = Terrain::load(file)?;
    let pimp_samples = pimp_samples.resolve(&t);
    let e = height_evaluator(&t, args, Some(file))?;
    let surface = trnbake_swg::surface::SurfaceEvaluator::new(&t, &height_options(args, Some(file)), surface_args.options())?;
    let pimp = trnbake_swg::fidelity::pimp_predictions(&t, &e, &surface, surface_args.normals, pimp_samples, pimp_cells)
        .map(|p| trnbake_swg::fidelity::pimp_report(&p));
    let pfpm = check_pfpm(&t, &e, cells, seed);
    let near = trnbake_swg::fidelity::near_roads(&t, 0.0);
    let pfpm_roads = trnbake_swg::fidelity::check_pfpm_where(&t, &e, cells, seed, &near);
    let wmap = check_wmap(&t, &e, cells, 9, seed);
    let smap = check_smap(&t, &e, cells, seed);
    let mut out = std::io::stdout().lock();
    if json {
        let v = serde_json::json!({ "file": file.display().to_string(), "pfpm": pfpm, "pfpm_on_roads": pfpm_roads, "wmap": wmap, "smap": smap, "pimp": pimp });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(out, "{}", file.display())?;
    match &pfpm {
        Some(r) => {
            writeln!(out, "  PFPM heights  {}/{} cells within [min-0.05, max+0.05] of a 9x9 sample ({:.2} %)", r.passed, r.cells, 100.0 * r.rate())?;
            for m in r.misses.iter().take(20) {
                writeln!(out, "    miss: cell ({}, {}) family {} baked {:.3} range [{:.3}, {:.3}]", m.col, m.row, m.family, m.baked, m.min, m.max)?;
            }
        }
        None => writeln!(out, "  PFPM heights  (no PIMP/PFPM in this file)")?,
    }
    match &pimp {
        Some(r) => {
            writeln!(
                out,
                "  PIMP flora    {}/{} flora cells hold the most likely collidable family ({:.2} %); empty cells predicted empty {}/{}",
                r.agree,
                r.flora_cells,
                100.0 * r.rate(),
                r.empty_agree,
                r.empty_cells
            )?;
            for b in &r.calibration {
                writeln!(out, "    p in [{:.1}, {:.1}): {:>5} cells, predicted {:.3}, observed {:.3}", b.lo, b.hi, b.cells, b.mean_predicted, b.observed)?;
            }
            write_ceiling(&mut out, r)?;
        }
        None => writeln!(out, "  PIMP flora    (no PIMP in this file)")?,
    }
    if let Some(r) = pfpm_roads.filter(|r| r.cells > 0) {
        writeln!(out, "  PFPM on roads {}/{} cells whose centre lies within a road's width ({:.2} %)", r.passed, r.cells, 100.0 * r.rate())?;
    }
    match &wmap {
        Some(r) => {
            writeln!(out, "  WMAP water    {}/{} chunks agree ({:.2} %)", r.agree, r.chunks, 100.0 * r.rate())?;
            for (c, r, b, min, max) in r.misses.iter().take(10) {
                writeln!(out, "    miss: chunk ({c}, {r}) baked {} heights [{min:.3}, {max:.3}] water {}", *b as u8, t.header.global_water_height)?;
            }
        }
        None => writeln!(out, "  WMAP water    (no global water table or no baked maps)")?,
    }
    match &smap {
        Some(r) => {
            writeln!(out, "  SMAP rough    {}/{} chunks agree ({:.2} %)", r.agree, r.chunks, 100.0 * r.rate())?;
            for (c, r, b, min, max) in r.misses.iter().take(10) {
                writeln!(out, "    miss: chunk ({c}, {r}) baked {} range {:.3} m", *b as u8, max - min)?;
            }
        }
        None => writeln!(out, "  SMAP rough    (no baked maps)")?,
    }
    Ok(())
}

/// The same-chances ceiling of a PIMP report and its largest mixed groups.
fn write_ceiling(out: &mut impl Write, r: &trnbake_swg::fidelity::PimpReport) -> Result<()> {
    writeln!(
        out,
        "    ceiling: {}/{} flora cells ({:.2} %) for any rule reading these chances (cells with equal chances that PIMP fills differently)",
        r.same_chances_best,
        r.flora_cells,
        100.0 * r.ceiling()
    )?;
    for g in r.mixed_groups.iter().take(5) {
        let chances: Vec<String> = g.chances.iter().map(|(f, p)| format!("{f}: {p:.3}")).collect();
        let chances = if chances.is_empty() { "no flora predicted".to_string() } else { format!("chances {{{}}}", chances.join(", ")) };
        let truths: Vec<String> = g.truths.iter().map(|(f, n)| format!("{f} ×{n}")).collect();
        writeln!(out, "      {:>4} cells with {chances} hold {}", g.cells, truths.join(", "))?;
    }
    Ok(())
}

/// `trnbake fidelity --explain`: the PIMP check (cells × 4 cells, as `fidelity`) with every
/// miss traced to its rules, written to OUT/misses.csv and OUT/misses.png.
fn fidelity_explain(
    file: &Path,
    pimp_cells: trnbake_swg::fidelity::PimpCells,
    args: &HeightArgs,
    surface_args: &crate::cli::SurfaceArgs,
    pimp_samples: PimpSamplingArg,
    out_dir: &Path,
) -> Result<()> {
    let t = Terrain::load(file)?;
    let pimp_samples = pimp_samples.resolve(&t);
    let e = height_evaluator(&t, args, Some(file))?;
    let surface = trnbake_swg::surface::SurfaceEvaluator::new(&t, &height_options(args, Some(file)), surface_args.options())?;
    let Some(ex) = trnbake_swg::fidelity::explain_pimp(&t, &e, &surface, surface_args.normals, pimp_samples, pimp_cells) else {
        anyhow::bail!("{}: no PIMP flora map (only 0015 files carry one)", file.display());
    };
    std::fs::create_dir_all(out_dir).with_context(|| format!("creating {}", out_dir.display()))?;
    let csv = out_dir.join("misses.csv");
    trnbake_raster::fsutil::write_atomic(&csv, trnbake_swg::fidelity::explain_csv(&ex).as_bytes()).with_context(|| format!("writing {}", csv.display()))?;
    let png = out_dir.join("misses.png");
    let (w, h, rgb) = trnbake_swg::fidelity::explain_picture(&t, &ex);
    trnbake_raster::writers::png8::write_png8_south_first(&png, w, h, 3, &rgb).with_context(|| format!("writing {}", png.display()))?;
    let r = &ex.report;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", file.display())?;
    writeln!(out, "  PIMP flora    {}/{} flora cells hold the most likely collidable family ({:.2} %)", r.agree, r.flora_cells, 100.0 * r.rate())?;
    write_ceiling(&mut out, r)?;
    let none = ex.misses.iter().filter(|m| m.cell.family == 0).count();
    writeln!(out, "  misses        {} ({} predicted none, {} another family)", ex.misses.len(), none, ex.misses.len() - none)?;
    // The causes, most common first.
    let mut causes: Vec<(String, usize)> = Vec::new();
    for m in &ex.misses {
        let key = format!("family {} → {}: {}", m.cell.truth, m.cell.family, m.reason);
        match causes.iter_mut().find(|c| c.0 == key) {
            Some(c) => c.1 += 1,
            None => causes.push((key, 1)),
        }
    }
    causes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (k, n) in causes.iter().take(25) {
        writeln!(out, "    {n:>5}  {k}")?;
    }
    if causes.len() > 25 {
        writeln!(out, "    … {} more causes in {}", causes.len() - 25, csv.display())?;
    }
    writeln!(out, "  wrote {} and {}", csv.display(), png.display())?;
    Ok(())
}

/// Turn `bake` arguments into a validated pipeline (the flags' own checks here, with their
/// names; everything else is the library's).
pub fn bake_pipeline(args: &crate::cli::BakeArgs, term: &std::sync::Arc<crate::report::Terminal>) -> Result<trnbake_bake::Pipeline> {
    let quiet = term.quiet();
    let mut request = match &args.file {
        Some(p) => trnbake_bake::BakeRequest::from_file(p, &args.output)?,
        None => trnbake_bake::BakeRequest::demo(&args.output),
    };
    if args.tile == Some(0) {
        bail!("--tile must be at least 1");
    }
    request.region = args.region.as_deref().map(parse_region).transpose()?;
    request.spacing = args.spacing.map(|s| positive_metres("--spacing", s)).transpose()?;
    request.tile = args.tile;
    request.band_rows = args.band_rows;
    request.height = height_options(&args.height, args.file.as_deref());
    request.surface = args.surface.options();
    request.normals = args.surface.normals;
    request.maps = args.maps.clone();
    request.flora_supersample = args.flora_supersample;
    if !(0.0..=90.0).contains(&args.max_slope) {
        bail!("--max-slope {} must be 0..=90 degrees", args.max_slope);
    }
    if !(args.water_depth.is_finite() && args.water_depth >= 0.0) {
        bail!("--water-depth {} must be 0 or more metres", args.water_depth);
    }
    request.spawn = trnbake_swg::spawn::SpawnRule { max_slope: args.max_slope, water_depth: args.water_depth };
    request.export = export_choice(&args.export)?;
    request.backend = args.backend;
    request.adapter_filter = args.adapter.clone();
    request.shard = match args.shard {
        None => None,
        Some(choice) => {
            let resolved = choice.resolve(|k| std::env::var(k).ok()).map_err(|e| anyhow::anyhow!("--shard auto: {e}"))?;
            if !quiet && matches!(choice, trnbake_bake::shard::ShardChoice::Auto { .. }) {
                eprintln!("shard {}/{} from {}", resolved.shard.index, resolved.shard.count, resolved.source);
            }
            Some(resolved.shard)
        }
    };
    request.reporter = term.clone();
    Ok(request.pipeline()?)
}

/// `--format/--preset/--size/--tiles` → what to export. Formats default to the preset's
/// engine format, else `tif,png` (the bake's historical outputs).
pub fn export_choice(args: &crate::cli::ExportArgs) -> Result<trnbake_raster::writers::set::ExportChoice> {
    use trnbake_raster::writers::geotiff::TiffLayout;
    use trnbake_raster::writers::set::{ExportChoice, Format};
    let names: Vec<String> = match (&args.format, args.preset) {
        (Some(f), _) => f.clone(),
        (None, Some(p)) => p.default_formats().iter().map(|s| s.to_string()).collect(),
        (None, None) => vec!["tif".into(), "png".into()],
    };
    let mut formats: Vec<Format> = Vec::new();
    for n in &names {
        let f: Format = n.parse().map_err(|e: String| anyhow::anyhow!("--format: {e}"))?;
        if !formats.contains(&f) {
            formats.push(f);
        }
    }
    if formats.is_empty() {
        bail!("--format: give at least one format ({})", trnbake_raster::writers::set::FORMAT_NAMES);
    }
    if args.size.is_some() && args.preset.is_none() {
        bail!("--size chooses an engine heightmap size and needs --preset");
    }
    let tiff = trnbake_raster::GeoTiffOptions {
        layout: if args.cog { TiffLayout::Cog } else { TiffLayout::Striped },
        compression: args.compress,
        ..Default::default()
    };
    Ok(ExportChoice { formats, preset: args.preset, size: args.size, tiles: args.tiles, tiff })
}

fn convert(args: &crate::cli::ConvertArgs, term: &crate::report::Terminal) -> Result<()> {
    let quiet = term.quiet();
    use trnbake_raster::readers::{open, ImportOptions};
    use trnbake_raster::writers::set::{dir_and_stem, export, ExportSpec, Format, Output, Tiles};
    use trnbake_raster::RowOrder;
    let dims = match &args.dims {
        Some(d) => {
            let (c, r) = d.split_once(['x', 'X']).with_context(|| format!("--dims `{d}` is not COLSxROWS"))?;
            let c: u32 = c.trim().parse().with_context(|| format!("--dims `{d}` is not COLSxROWS"))?;
            let r: u32 = r.trim().parse().with_context(|| format!("--dims `{d}` is not COLSxROWS"))?;
            Some((c, r))
        }
        None => None,
    };
    let opts = ImportOptions {
        format: args.input_format,
        dims,
        spacing: args.spacing,
        origin: args.origin.as_deref().map(|o| parse_pair(o, "--origin")).transpose()?,
        height_range: args.height_range.as_deref().map(|o| parse_pair(o, "--height-range")).transpose()?,
        row_order: args.row_order.map(|r| match r {
            crate::cli::RowOrderArg::North => RowOrder::NorthFirst,
            crate::cli::RowOrderArg::South => RowOrder::SouthFirst,
        }),
        limits: Default::default(),
    };
    if let Some(s) = args.spacing {
        positive_metres("--spacing", s)?;
    }

    // The output: one format, from --format or OUT's extension; `.vrt` = GeoTIFF tiles + mosaic.
    let ext = args.output.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let format = match &args.export.format {
        Some(f) if f.len() == 1 => f[0].parse::<Format>().map_err(|e| anyhow::anyhow!("--format: {e}"))?,
        Some(_) => bail!("convert writes one format; give one --format"),
        None if ext == "vrt" => Format::Tif,
        None => Format::from_extension(&args.output).with_context(|| {
            format!("cannot tell the output format from `{}`; give --format ({})", args.output.display(), trnbake_raster::writers::set::FORMAT_NAMES)
        })?,
    };
    let mut choice = export_choice(&crate::cli::ExportArgs { format: Some(vec![format.name().to_string()]), ..args.export.clone() })?;
    if ext == "vrt" {
        if !matches!(format, Format::Tif | Format::Tif16) {
            bail!("a .vrt mosaics GeoTIFF tiles; --format must be tif or tif16");
        }
        choice.tiles.get_or_insert(Tiles::Count(1));
    }
    let (dir, stem) = dir_and_stem(&args.output)?;
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // Temp files (`.NAME.PID.partial`) that a killed convert (or bake) left here, as a bake
    // sweeps its folder: only those of processes that are gone.
    let swept = trnbake_raster::fsutil::sweep_stale_temps(&dir).with_context(|| format!("cannot sweep temporary files in {}", dir.display()))?;
    if !swept.is_empty() && !quiet {
        eprintln!("note: removed {} temporary file(s) left in {} by an interrupted run", swept.len(), dir.display());
    }

    let input = open(&args.input, &opts)?;
    let citation = input.citation.clone().unwrap_or_else(|| "trnbake local metres".to_string());
    let out_ext = if ext == "vrt" || ext.is_empty() { format.extension().to_string() } else { ext.clone() };
    let spec = ExportSpec { outputs: vec![Output { format, stem: stem.clone(), ext: out_ext }], ..ExportSpec::for_bake(&choice, citation) };
    let pb = trnbake_bake::Progress::new(term, 0, "files", "convert");
    let report = export(input.source.as_ref(), None, &spec, &dir, &|total| {
        pb.set_total(total);
        pb.inc(1);
    })?;
    pb.finish();
    preset_note_after(Some(&report.summary), term);

    // The sidecar: what RAW files cannot say about themselves, and the engine settings.
    let side_path = {
        let mut p = args.output.as_os_str().to_owned();
        p.push(".json");
        std::path::PathBuf::from(p)
    };
    let v = serde_json::json!({
        "trnbake_version": env!("CARGO_PKG_VERSION"),
        "input": { "path": args.input.display().to_string(), "format": input.format, "grid": input.source.grid() },
        "export": report.summary,
        "outputs": report.files,
    });
    write_atomic(&side_path, serde_json::to_string_pretty(&v)?.as_bytes()).with_context(|| format!("cannot write {}", side_path.display()))?;
    if !quiet {
        let g = report.summary.grid;
        eprintln!(
            "converted {} ({}x{} posts at {} m, heights {:.3} .. {:.3} m)",
            args.input.display(),
            g.cols,
            g.rows,
            g.spacing,
            report.summary.height_min,
            report.summary.height_max
        );
        for f in &report.files {
            eprintln!("  wrote {} ({} bytes)", dir.join(&f.path).display(), f.bytes);
        }
        eprintln!("  wrote {}", side_path.display());
    }
    Ok(())
}

fn bench_export(posts: u32, dir: Option<std::path::PathBuf>, formats: Option<&[String]>, json: bool) -> Result<()> {
    use trnbake_raster::writers::set::Format;
    let formats: Vec<Format> = match formats {
        Some(f) => f.iter().map(|n| n.parse::<Format>().map_err(|e| anyhow::anyhow!("--format: {e}"))).collect::<Result<_>>()?,
        None => vec![Format::Tif, Format::Tif16, Format::Png, Format::Ter, Format::R16, Format::R32],
    };
    let dir = dir.unwrap_or_else(std::env::temp_dir);
    let r = crate::bench::run_export(posts, &dir, &formats)?;
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&r)?)?;
        return Ok(());
    }
    writeln!(
        out,
        "{}x{} posts ({} rayon threads), synthetic terrain streamed from a raw file; MB/s of samples written (atomic write, fsync and SHA-256 included):",
        posts,
        posts,
        rayon::current_num_threads()
    )?;
    for c in &r.cases {
        writeln!(
            out,
            "  {:<6} {:<12} {:>9.1} MB samples → {:>9.1} MB file  {:>7.2} s  {:>7.1} MB/s",
            c.format,
            c.compression,
            c.sample_bytes as f64 / 1e6,
            c.file_bytes as f64 / 1e6,
            c.seconds,
            c.mb_per_s
        )?;
    }
    writeln!(out, "peak RSS of this process: {:.0} MiB", r.peak_rss_bytes as f64 / (1u64 << 20) as f64)?;
    Ok(())
}

/// What a preset leaves out that its flags do not say (before the bake): `--preset unreal`
/// without `png` writes no `height.png`, the file Unreal's landscape import reads.
fn preset_note_before(choice: &trnbake_raster::writers::set::ExportChoice, reporter: &dyn Reporter) {
    use trnbake_raster::writers::{preset::Preset, set::Format};
    if choice.preset == Some(Preset::Unreal) && !choice.formats.contains(&Format::Png) {
        reporter
            .note("--preset unreal without png in --format writes no height.png, the 16-bit PNG Unreal's landscape import reads; add png to --format for it");
    }
}

/// What a preset did to the grid (after the export): the heightmap's size when the preset
/// resampled the grid to a size its engine accepts.
fn preset_note_after(summary: Option<&trnbake_raster::writers::set::ExportSummary>, reporter: &dyn Reporter) {
    let Some(s) = summary else { return };
    let Some(resampling) = s.resampling else { return };
    let (g0, g) = (s.source_grid, s.grid);
    let preset = s.preset.map_or("the preset", |p| p.name());
    reporter.note(format!(
        "--preset {preset} resampled the {}×{} posts at {} m to a {}×{} heightmap at {:.4} m ({resampling}: the sizes its engine accepts; --size N picks another)",
        g0.cols, g0.rows, g0.spacing, g.cols, g.rows, g.spacing,
    ));
}

fn bake(args: &crate::cli::BakeArgs, term: &std::sync::Arc<crate::report::Terminal>) -> Result<()> {
    let quiet = term.quiet();
    let pipeline = bake_pipeline(args, term)?;
    preset_note_before(&pipeline.job.export, &**term);
    let r = pipeline.run()?;
    let job = &pipeline.job;
    preset_note_after(r.export.as_ref(), &**term);
    if !quiet {
        // A shard computes part of the tiles and knows no height range: it says its tiles.
        let (what, rate, range) = match job.shard {
            Some(s) => {
                (format!("shard {}/{} ({} tiles computed, {} resumed) of ", s.index, s.count, r.tiles_computed, r.tiles_resumed), String::new(), String::new())
            }
            None => (
                String::new(),
                format!(" ({:.2} M posts/s end to end)", r.posts as f64 / r.total_seconds.max(1e-9) / 1e6),
                format!("; heights {:.2} .. {:.2} m", r.min_height, r.max_height),
            ),
        };
        eprintln!(
            "baked {what}{}×{} posts at {} m on the {} backend in {:.2} s{rate}{range}",
            job.grid.cols, job.grid.rows, job.grid.spacing, r.backend, r.total_seconds
        );
        for o in &r.outputs {
            eprintln!("  wrote {} ({} bytes)", job.outdir.join(&o.path).display(), o.bytes);
        }
    }
    Ok(())
}

fn check(
    golden: std::path::PathBuf,
    backend: trnbake_bake::Backend,
    bless: bool,
    report: Option<std::path::PathBuf>,
    only: Vec<String>,
    term: &crate::report::Terminal,
) -> Result<()> {
    use trnbake_bake::golden::{report, run, CheckOptions};
    let quiet = term.quiet();
    // Each map's line on stdout as it is known (only failures with --quiet), the bar out of the way.
    let mut print = |o: &trnbake_bake::golden::MapOutcome| {
        if !quiet || o.status.is_failure() {
            term.suspend(|| println!("{}", o.line()));
        }
    };
    let s = run(&CheckOptions { golden, backend, bless, report: report.clone(), only }, term, &mut print)?;
    let n = s.outcomes.len();
    let failures = s.failures();
    let what = if s.bless { "blessed" } else { "checked" };
    if !quiet {
        eprintln!("{what} {n} maps ({} posts) on the {} backend in {:.2} s", s.posts, s.backend, s.seconds);
    }
    if !s.bless {
        // A GitHub Actions job summary (docs/src/golden.md, "In GitHub Actions").
        if let Some(p) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
            report::append_step_summary(std::path::Path::new(&p), &s)?;
        }
    }
    let see = match &report {
        Some(dir) => format!("see {}", dir.join(report::HTML_FILE).display()),
        None => "add --report DIR for report.html (pictures of every failing map), report.md, summary.md and junit.xml".into(),
    };
    let bless_hint = s.bless_command.as_ref().map_or(String::new(), |c| format!("\nif the change is intended: {c}"));
    match (failures, s.bless) {
        (0, _) => Ok(()),
        (f, false) => bail!("{f} of {n} maps differ from their goldens beyond tolerance or could not be checked; {see}{bless_hint}"),
        (f, true) => bail!("{f} of {n} fixtures could not be baked, so their goldens were not rewritten"),
    }
}

fn adapters() -> Result<()> {
    let list = trnbake_gpu::list_adapters();
    let mut out = std::io::stdout().lock();
    if list.is_empty() {
        writeln!(out, "wgpu sees no adapter (install a Vulkan driver; for a software one: apt-get install mesa-vulkan-drivers)")?;
    }
    for a in list {
        writeln!(
            out,
            "{} — {} {}, driver {} {}, storage binding ≤ {} MiB, {} storage buffers/stage",
            a.name,
            a.backend,
            a.device_type,
            a.driver,
            a.driver_info,
            a.max_storage_buffer_binding_size >> 20,
            a.max_storage_buffers_per_shader_stage
        )?;
    }
    Ok(())
}

/// `trnbake bench`: the standard cases, or with `planet` = (spacings, tile, with CPU) only the
/// full-planet case.
#[allow(clippy::too_many_arguments)]
fn bench(
    file: Option<&Path>,
    repeat: usize,
    json: bool,
    full_16m: bool,
    planet: Option<(Vec<f64>, Option<u32>, bool)>,
    backends: crate::cli::BenchBackends,
    args: &HeightArgs,
    surface_args: &crate::cli::SurfaceArgs,
) -> Result<()> {
    use crate::cli::BenchBackends;
    let (cpu, gpu) = (backends != BenchBackends::Gpu, backends != BenchBackends::Cpu);
    let t = load_terrain(file)?;
    let e = height_evaluator(&t, args, file)?;
    let cases = match planet {
        Some((spacings, tile, with_cpu)) => crate::bench::run_planet(&t, &e, &spacings, tile, with_cpu)?,
        None => {
            let mut cases = crate::bench::run_standard(&t, &e, repeat, full_16m, cpu, gpu)?;
            let surface = trnbake_swg::surface::SurfaceEvaluator::new(&t, &height_options(args, file), surface_args.options())?;
            cases.extend(crate::bench::run_surface(&t, &e, &surface, cpu, gpu)?);
            cases
        }
    };
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(&cases)?)?;
        return Ok(());
    }
    for c in &cases {
        writeln!(out, "{:<44} {:<4} {:>11} posts {:>8.3} s {:>8.2} M posts/s", c.name, c.backend, c.posts, c.seconds, c.posts_per_second / 1e6)?;
    }
    Ok(())
}
