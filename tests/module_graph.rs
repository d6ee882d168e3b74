//! The crate's module graph (README "Map of the house"): no import cycle among the top-level
//! modules, the command-line layer (`app`, `cli`) imported by nothing, and each game's model
//! folder independent of the other games'.
//!
//! The graph is read from the source: every `crate::NAME` path outside comments is an edge from
//! the top-level module holding the file to `NAME`. `use crate::{a, b}` groups are expanded.

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

/// The top-level module a file belongs to (`src/eval/block.rs` → `eval`, `src/plan.rs` → `plan`).
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

fn crate_graph() -> Graph {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
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

#[test]
fn top_level_modules_have_no_import_cycle() {
    let g = crate_graph();
    assert!(g.contains_key("swg") && g["bake"].contains("grid"), "the graph was read: {g:?}");
    if let Some(cycle) = find_cycle(&g) {
        panic!("import cycle among the crate's modules: {}", cycle.join(" → "));
    }
}

#[test]
fn the_command_line_layer_is_imported_by_nothing() {
    let g = crate_graph();
    for (m, ts) in &g {
        for layer in ["app", "cli"] {
            // `app` runs what `cli` parsed; nothing else may depend on either.
            if ts.contains(layer) && !(m == "app" && layer == "cli") {
                panic!("`{m}` imports `{layer}`; library code must not depend on the command-line layer");
            }
        }
    }
}

#[test]
fn each_game_model_stands_alone() {
    // A game's folder may reach another game only through a bridge file named for it
    // (`src/nwn2/from_swg.rs` bakes a SWG region for an NWN2 area); its model, codec and
    // checks never do.
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let games = ["swg", "nwn2", "scs"];
    for game in games {
        let dir = src.join(game);
        if !dir.is_dir() {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            for other in targets(&text) {
                if games.contains(&other.as_str()) && other != game && stem != format!("from_{other}") {
                    panic!("{} imports `{other}`: each game's model lives in its own folder over game-neutral code; bridge through src/{game}/from_{other}.rs", f.display());
                }
            }
        }
    }
}
