//! What each subcommand does: validated arguments in, library calls, output out.

use crate::cli::{Cli, Command, HeightArgs, MissingBitmaps, OnOff};
use crate::eval::HeightEvaluator;
use crate::plan::HeightOptions;
use crate::fsutil::write_atomic;
use crate::trn::{info::tree_text, Terrain};
use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::Path;

/// The built-in demo terrain, authored as JSON (see `golden/demo.json`).
pub const DEMO_TERRAIN_JSON: &str = include_str!("../golden/demo.json");

pub fn demo_terrain() -> Terrain {
    serde_json::from_str(DEMO_TERRAIN_JSON).expect("the built-in demo terrain is valid JSON")
}

/// Load a terrain, or the demo when no file is given.
pub fn load_terrain(file: Option<&Path>) -> Result<Terrain> {
    match file {
        Some(p) => Ok(Terrain::load(p)?),
        None => Ok(demo_terrain()),
    }
}

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Info { file, tree, json } => info(file.as_deref(), tree, json),
        Command::Decompile { file, output } => decompile(&file, output.as_deref()),
        Command::Compile { file, output } => compile(&file, &output),
        Command::Sample { file, points, at, height } => sample(file.as_deref(), points.as_deref(), at.as_deref(), &height),
        Command::Fidelity { file, cells, seed, json, height } => fidelity(&file, cells, seed, json, &height),
        Command::Bake(args) => bake(&args, cli.quiet),
        Command::Merge { output, shards, format } => {
            let r = crate::bake::merge(&output, &shards, &format, cli.quiet)?;
            if !cli.quiet {
                eprintln!("merged {} posts into {} ({} files)", r.posts, output.display(), r.outputs.len());
            }
            Ok(())
        }
        Command::Check { golden, backend, bless, report, fixture } => check(golden, backend, bless, report, fixture, cli.quiet),
        Command::Adapters => adapters(),
        Command::Bench { file, repeat, json, full_16m, height } => bench(file.as_deref(), repeat, json, full_16m, &height),
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

/// Parse and validate a JSON terrain, reporting every problem with its JSON path.
pub fn terrain_from_json(text: &str, name: &str) -> Result<Terrain> {
    let de = &mut serde_json::Deserializer::from_str(text);
    let t: Terrain = serde_path_to_error::deserialize(de)
        .map_err(|e| anyhow::anyhow!("{name}: at `{}`: {}", e.path(), e.inner()))?;
    let problems = t.validate();
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
        bail!("{name}: {} problem(s):\n{}", problems.len(), list.join("\n"));
    }
    Ok(t)
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
    let data_root = args.data_root.clone().or_else(|| {
        let dir = file?.parent()?;
        (dir.file_name()? == "terrain").then(|| dir.parent().map(Path::to_path_buf)).flatten()
    });
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

/// Parse `x,z` (surrounding spaces allowed).
fn parse_point(s: &str) -> Option<(f32, f32)> {
    let (x, z) = s.split_once(',')?;
    let x: f32 = x.trim().parse().ok()?;
    let z: f32 = z.trim().parse().ok()?;
    (x.is_finite() && z.is_finite()).then_some((x, z))
}

fn sample(file: Option<&Path>, points: Option<&Path>, at: Option<&str>, args: &HeightArgs) -> Result<()> {
    let t = load_terrain(file)?;
    let pts: Vec<(f32, f32)> = match (at, points) {
        (Some(a), _) => vec![parse_point(a).with_context(|| format!("--at `{a}` is not X,Z (two numbers)"))?],
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
                let p = parse_point(l)
                    .with_context(|| format!("{} line {}: `{l}` is not `x,z` (two numbers)", p.display(), i + 1))?;
                v.push(p);
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

fn fidelity(file: &Path, cells: usize, seed: u64, json: bool, args: &HeightArgs) -> Result<()> {
    use crate::fidelity::{check_pfpm, check_smap, check_wmap};
    let t = Terrain::load(file)?;
    let e = height_evaluator(&t, args, Some(file))?;
    let pfpm = check_pfpm(&t, &e, cells, seed);
    let near = crate::fidelity::near_roads(&t, 0.0);
    let pfpm_roads = crate::fidelity::check_pfpm_where(&t, &e, cells, seed, &near);
    let wmap = check_wmap(&t, &e, cells, 9, seed);
    let smap = check_smap(&t, &e, cells, seed);
    let mut out = std::io::stdout().lock();
    if json {
        let v = serde_json::json!({ "file": file.display().to_string(), "pfpm": pfpm, "pfpm_on_roads": pfpm_roads, "wmap": wmap, "smap": smap });
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

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(bytes);
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parse `X0,Z0,X1,Z1`.
fn parse_region(s: &str) -> Result<[f64; 4]> {
    let v: Vec<f64> = s
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| anyhow::anyhow!("--region `{s}` is not four numbers X0,Z0,X1,Z1"))?;
    if v.len() != 4 || v.iter().any(|x| !x.is_finite()) {
        bail!("--region `{s}` is not four numbers X0,Z0,X1,Z1");
    }
    if v[2] < v[0] || v[3] < v[1] {
        bail!("--region `{s}`: X1 must be ≥ X0 and Z1 ≥ Z0");
    }
    Ok([v[0], v[1], v[2], v[3]])
}

/// Turn `bake` arguments into a validated job.
pub fn bake_job(args: &crate::cli::BakeArgs, t: &Terrain, quiet: bool) -> Result<crate::bake::BakeJob> {
    use crate::bake::{post_count, BakeJob, BakeParams, Backend};
    let (input, input_sha256) = match &args.file {
        Some(p) => (p.display().to_string(), sha256_hex(&std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?)),
        None => ("(built-in demo terrain)".to_string(), sha256_hex(DEMO_TERRAIN_JSON.as_bytes())),
    };
    let half = f64::from(t.header.map_width) / 2.0;
    let spacing = args.spacing.unwrap_or(f64::from(t.header.pole_spacing()));
    let region = match &args.region {
        Some(r) => parse_region(r)?,
        None => [-half, -half, half, half],
    };
    let cols = post_count(region[0], region[2], spacing)?;
    let rows = post_count(region[1], region[3], spacing)?;
    let tile = match args.tile {
        Some(0) => bail!("--tile must be at least 1"),
        Some(n) => n,
        None if args.backend == Backend::Cpu => 512,
        None => 2048,
    };
    for f in &args.format {
        if !matches!(f.as_str(), "tif" | "png") {
            bail!("unknown --format `{f}` (tif, png)");
        }
    }
    let opts = height_options(&args.height, args.file.as_deref());
    let params = BakeParams {
        input,
        input_sha256,
        spacing,
        region: [region[0], region[1], region[0] + (cols - 1) as f64 * spacing, region[1] + (rows - 1) as f64 * spacing],
        cols,
        rows,
        tile,
        roads: opts.roads,
        bitmap_gain: opts.bitmap_gain,
    };
    Ok(BakeJob {
        grid: crate::eval::Grid { x0: region[0], z0: region[1], spacing, cols, rows },
        params,
        backend: args.backend,
        adapter_filter: args.adapter.clone(),
        shard: args.shard,
        outdir: args.output.clone(),
        quiet,
        formats: args.format.clone(),
    })
}

fn bake(args: &crate::cli::BakeArgs, quiet: bool) -> Result<()> {
    let t = load_terrain(args.file.as_deref())?;
    let job = bake_job(args, &t, quiet)?;
    let e = height_evaluator(&t, &args.height, args.file.as_deref())?;
    let r = crate::bake::run_bake(&job, &e)?;
    if !quiet {
        let what = match job.shard {
            Some(s) => format!("shard {}/{} of ", s.index, s.count),
            None => String::new(),
        };
        eprintln!(
            "baked {what}{}×{} posts at {} m on the {} backend in {:.2} s ({:.2} M posts/s end to end); heights {:.2} .. {:.2} m",
            job.grid.cols,
            job.grid.rows,
            job.grid.spacing,
            r.backend,
            r.total_seconds,
            r.posts as f64 / r.total_seconds.max(1e-9) / 1e6,
            r.min_height,
            r.max_height
        );
        for o in &r.outputs {
            eprintln!("  wrote {} ({} bytes)", job.outdir.join(&o.path).display(), o.bytes);
        }
    }
    Ok(())
}

fn check(golden: std::path::PathBuf, backend: crate::bake::Backend, bless: bool, report: std::path::PathBuf, only: Vec<String>, quiet: bool) -> Result<()> {
    use crate::golden::{report::MARKDOWN_FILE, run, CheckOptions};
    let s = run(&CheckOptions { golden, backend, bless, report: report.clone(), only, quiet })?;
    let n = s.outcomes.len();
    let failures = s.failures();
    let what = if s.bless { "blessed" } else { "checked" };
    if !quiet {
        eprintln!("{what} {n} maps ({} posts) on the {} backend in {:.2} s", s.posts, s.backend, s.seconds);
    }
    match (failures, s.bless) {
        (0, _) => Ok(()),
        (f, false) => bail!("{f} of {n} maps differ from their goldens beyond tolerance or could not be checked; see {}", report.join(MARKDOWN_FILE).display()),
        (f, true) => bail!("{f} of {n} fixtures could not be baked, so their goldens were not rewritten"),
    }
}

fn adapters() -> Result<()> {
    let list = crate::gpu::list_adapters();
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

fn bench(file: Option<&Path>, repeat: usize, json: bool, full_16m: bool, args: &HeightArgs) -> Result<()> {
    let t = load_terrain(file)?;
    let e = height_evaluator(&t, args, file)?;
    let cases = crate::bench::run_standard(&t, &e, repeat, full_16m)?;
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
