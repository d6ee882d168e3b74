//! What each subcommand does: validated arguments in, library calls, output out.

use crate::cli::{Cli, Command};
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
