//! The workspace's layering (docs/src/architecture.md, "Map of the crates"), enforced:
//! - each library crate depends only on the crates below it (the allowed map here);
//! - `trnbake-swg`, what a server emulator links, pulls no GPU, command-line, image or
//!   TIFF crate and stays small; no library crate uses anyhow, and clap only behind its
//!   optional `clap` feature;
//! - inside each crate and the binary, no import cycle among its top-level modules;
//! - each game's crate reaches the SWG model and evaluators only through its `from_swg.rs`.
//!
//! Module edges are read from the source: every `crate::NAME` path outside comments is an edge
//! from the top-level module holding the file to `NAME`. `use crate::{a, b}` groups are expanded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file belongs to (`src/eval/walk_strip.rs` → `eval`, `src/plan/mod.rs` → `plan`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_string()
}

/// Top-level modules named by `crate::` paths in a source text, comments removed.
fn targets(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a::X, b}`: each first segment of the group (one-line groups).
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let name: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if !name.is_empty() {
                        out.insert(name);
                    }
                }
            } else {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The module graph of the crate whose sources are in `src`.
fn module_graph(src: &Path) -> Graph {
    let src = src.to_path_buf();
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut g = Graph::new();
    for f in files {
        let m = module_of(&src, &f);
        if m == "main" || m == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let entry = g.entry(m.clone()).or_default();
        for t in targets(&text) {
            if t != m {
                entry.insert(t);
            }
        }
    }
    g
}

/// One cycle of the graph, if it has any (depth-first search with colours).
fn find_cycle(g: &Graph) -> Option<Vec<String>> {
    fn visit(g: &Graph, v: &str, state: &mut BTreeMap<String, u8>, stack: &mut Vec<String>) -> Option<Vec<String>> {
        state.insert(v.to_string(), 1);
        stack.push(v.to_string());
        for w in g.get(v).into_iter().flatten() {
            match state.get(w.as_str()).copied().unwrap_or(0) {
                1 => {
                    let start = stack.iter().position(|s| s == w).unwrap();
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(w.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(g, w, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(v.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for v in g.keys() {
        if state.get(v.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(g, v, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_checker_sees_edges_and_cycles() {
    // The checker itself: a grouped import, a comment that must not count, and a cycle.
    let t = targets("use crate::{eval::Grid, plan};\n// crate::app is only mentioned\nlet x = crate::swg::Terrain::load(p);");
    assert_eq!(t.into_iter().collect::<Vec<_>>(), ["eval", "plan", "swg"]);
    let mut g = Graph::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&g), None);
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(find_cycle(&g), Some(vec!["a".to_string(), "b".into(), "c".into(), "a".into()]));
}

/// The library crates and the workspace crates each may depend on (normal dependencies).
const ALLOWED: &[(&str, &[&str])] = &[
    ("trnbake-swg", &[]),
    ("trnbake-raster", &["trnbake-swg"]),
    ("trnbake-gpu", &["trnbake-swg"]),
    ("trnbake-nwn2", &["trnbake-swg", "trnbake-raster"]),
    ("trnbake-scs", &["trnbake-swg", "trnbake-raster"]),
    ("trnbake-bake", &["trnbake-swg", "trnbake-raster", "trnbake-gpu"]),
    // Web map tiles of a bake: runs the bake pipeline, reads its files back.
    ("trnbake-tiles", &["trnbake-swg", "trnbake-raster", "trnbake-bake"]),
    // The C API for server emulators: heights, so the same lean tree as trnbake-swg; paths
    // over navmesh sets only behind the optional `navmesh` feature (checked below).
    ("trnbake-capi", &["trnbake-swg", "trnbake-navmesh"]),
    // Recast/Detour navmeshes for servers: the exact heights, and raster's atomic writes.
    ("trnbake-navmesh", &["trnbake-swg", "trnbake-raster"]),
];

/// The `[dependencies]` of a manifest as (name, optional) pairs (a minimal reading of the
/// table: one `name = ...` or `name.workspace = true` per line).
fn dependencies(manifest: &Path) -> Vec<(String, bool)> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if !inside || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let name: String = line.chars().take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_').collect();
        out.push((name, line.contains("optional = true")));
    }
    out
}

#[test]
fn library_crates_depend_only_downwards() {
    for (krate, allowed) in ALLOWED {
        let dir = workspace().join("crates").join(krate.trim_start_matches("trnbake-"));
        let deps = dependencies(&dir.join("Cargo.toml"));
        assert!(deps.iter().any(|(d, _)| d == "thiserror"), "{krate}: the manifest was read (every library has typed errors): {deps:?}");
        for (d, optional) in &deps {
            if d.starts_with("trnbake-") {
                assert!(allowed.contains(&d.as_str()), "{krate} depends on {d}; allowed: {allowed:?}");
            }
            assert_ne!(d, "anyhow", "{krate}: anyhow belongs to the binary; libraries return typed errors");
            assert_ne!(d, "tracing-subscriber", "{krate}: the subscriber is the binary's choice");
            if d == "clap" {
                assert!(optional, "{krate}: clap only behind the optional `clap` feature");
            }
            if *krate == "trnbake-capi" && d == "trnbake-navmesh" {
                // Recast/Detour is C++ built with cmake and libclang: never in the default C library.
                assert!(optional, "{krate}: trnbake-navmesh only behind the optional `navmesh` feature");
            }
        }
    }
}

#[test]
fn the_emulator_crates_stay_lean() {
    // What a library user of trnbake-swg, or a C program linking trnbake-capi, compiles: its
    // normal dependency tree (cbindgen is only the C API's dev-dependency).
    for krate in ["trnbake-swg", "trnbake-capi"] {
        let out = std::process::Command::new(env!("CARGO"))
            .args(["tree", "-p", krate, "-e", "normal", "--prefix", "none", "--offline"])
            .current_dir(workspace())
            .output()
            .expect("cargo tree");
        assert!(out.status.success(), "cargo tree: {}", String::from_utf8_lossy(&out.stderr));
        let mut crates: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().filter_map(|l| l.split_whitespace().next().map(String::from)).collect();
        crates.sort();
        crates.dedup();
        assert!(crates.contains(&krate.to_string()) && crates.contains(&"thiserror".to_string()), "{crates:?}");
        for banned in ["wgpu", "clap", "image", "tiff", "png", "indicatif", "anyhow", "tracing-subscriber", "naga", "cbindgen"] {
            assert!(!crates.iter().any(|c| c == banned), "{krate} pulls {banned}: {crates:?}");
        }
        assert!(crates.len() <= 40, "{krate}'s tree has {} crates (at most ~40): {crates:?}", crates.len());
    }
}

#[test]
fn the_raster_crate_stays_free_of_gpu_and_command_line_crates() {
    // What a GIS tool linking trnbake-raster compiles: the format crates (TIFF with its
    // Deflate, LZW and Zstandard codecs, PNG), never the GPU or the command line.
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "-p", "trnbake-raster", "-e", "normal", "--prefix", "none", "--offline"])
        .current_dir(workspace())
        .output()
        .expect("cargo tree");
    assert!(out.status.success(), "cargo tree: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let crates: BTreeSet<&str> = text.lines().filter_map(|l| l.split_whitespace().next()).collect();
    for needed in ["tiff", "flate2", "weezl", "zstd", "png"] {
        assert!(crates.contains(needed), "trnbake-raster lacks {needed}: {crates:?}");
    }
    for banned in ["wgpu", "naga", "clap", "indicatif", "anyhow", "tracing-subscriber"] {
        assert!(!crates.contains(banned), "trnbake-raster pulls {banned}: {crates:?}");
    }
}

#[test]
fn no_crate_has_a_module_cycle() {
    let mut seen = 0;
    for e in std::fs::read_dir(workspace().join("crates")).unwrap() {
        let src = e.unwrap().path().join("src");
        let g = module_graph(&src);
        if let Some(cycle) = find_cycle(&g) {
            panic!("import cycle among the modules of {}: {}", src.display(), cycle.join(" → "));
        }
        seen += 1;
    }
    assert!(seen >= 7);
    // The binary's modules too (`app` ↔ `cli` ↔ `scs_cmd` once shared parsers through a circle;
    // they live in the leaf `parse` now).
    let bin = module_graph(&workspace().join("src"));
    if let Some(cycle) = find_cycle(&bin) {
        panic!("import cycle among the modules of the binary (src/): {}", cycle.join(" → "));
    }
    assert!(bin["app"].contains("cli") && bin["scs_cmd"].contains("parse"), "the binary's graph was read: {bin:?}");
    let swg = module_graph(&workspace().join("crates/swg/src"));
    assert!(swg["eval"].contains("plan") && swg["surface"].contains("eval"), "the graph was read: {swg:?}");
}

#[test]
fn each_game_model_stands_alone() {
    // A game crate may reach the SWG model and evaluators only through a bridge file
    // (`crates/nwn2/src/from_swg.rs` bakes a SWG region for an NWN2 area); its model, codec and
    // checks never do. The game-neutral grid is fine everywhere.
    for game in ["nwn2", "scs"] {
        let mut files = Vec::new();
        rust_files(&workspace().join("crates").join(game).join("src"), &mut files);
        assert!(files.len() > 5);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            for m in ["model", "eval", "plan", "surface", "water", "fidelity"] {
                let path = format!("trnbake_swg::{m}");
                let used = text.lines().any(|l| l.split("//").next().unwrap().contains(&path));
                if used && stem != "from_swg" {
                    panic!("{} uses {path}: each game's crate bridges to SWG through crates/{game}/src/from_swg.rs", f.display());
                }
            }
        }
    }
}

/// The kernel ↔ CPU twin table of docs/src/architecture.md ("Kernels and their CPU twins"), the
/// one list of twins: (kernel file name, twin module path such as `eval::affector`, or `None`
/// where the row names no module).
fn twin_table() -> Vec<(String, Option<String>)> {
    let text = std::fs::read_to_string(workspace().join("docs/src/architecture.md")).unwrap();
    let mut rows = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("| kernel | CPU twin") {
            inside = true;
            continue;
        }
        if !inside || line.starts_with("|---") {
            continue;
        }
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let kernel = cells[1].trim_matches('`').to_string();
        let twin = cells[2].strip_prefix('`').map(|rest| rest[..rest.find('`').unwrap()].to_string());
        rows.push((kernel, twin));
    }
    rows
}

#[test]
fn every_kernel_has_a_cpu_twin_of_the_same_name() {
    // vello's rule: `kernels/NAME.wgsl` is ported from (or to) the module `NAME` (`NAME.rs` or
    // `NAME/mod.rs`) somewhere in trnbake-swg, so either side is found from the other by name.
    // The twins are listed once, in docs/src/architecture.md's table, checked here both ways:
    // each kernel has a row and each row's module exists. `plan_bindings.wgsl` only declares
    // the plan's bindings; the host names them.
    let table = twin_table();
    assert!(table.len() >= 13, "the twin table of docs/src/architecture.md was read: {table:?}");
    let swg = workspace().join("crates/swg/src");
    for (kernel, twin) in &table {
        assert!(workspace().join("kernels").join(kernel).is_file(), "docs/src/architecture.md lists kernels/{kernel}, which does not exist");
        let stem = kernel.trim_end_matches(".wgsl");
        let Some(twin) = twin else {
            assert_eq!(stem, "plan_bindings", "docs/src/architecture.md names no CPU twin for kernels/{kernel}");
            continue;
        };
        // The longest leading part of the path that is a module (`eval::walk_strip::height_row`
        // names a function of the module `eval::walk_strip`).
        let segments: Vec<&str> = twin.split("::").collect();
        let module = (1..=segments.len()).rev().map(|n| &segments[..n]).find(|m| {
            let rel = m.join("/");
            swg.join(format!("{rel}.rs")).is_file() || swg.join(&rel).join("mod.rs").is_file()
        });
        let Some(module) = module else { panic!("the CPU twin of kernels/{kernel}, `{twin}`, is in no module of crates/swg/src") };
        assert_eq!(module.last(), Some(&stem), "kernels/{kernel}'s CPU twin `{twin}` is not in a module of its name");
    }
    let mut kernels = 0;
    for e in std::fs::read_dir(workspace().join("kernels")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "wgsl") {
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        assert!(table.iter().any(|(k, _)| *k == name), "kernels/{name} is missing from the twin table of docs/src/architecture.md");
        kernels += 1;
    }
    assert!(kernels >= 13, "{kernels} kernels found");
}
