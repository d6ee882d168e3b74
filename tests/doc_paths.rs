//! Every repository path the kernels' comments and the docs name exists.
//!
//! Scanned: the comments of `kernels/*.wgsl`, the Markdown of `docs/src/` and `README.md`.
//! A path is a word that starts at one of the repository's top folders (`crates/`, `kernels/`,
//! `src/`, `tests/`, `docs/`, …); `{a,b}` alternatives are expanded, a `*` matches within one
//! folder, and a path with a placeholder (an upper-case word such as `NAME`, or `…`) is not
//! checked. A bare `NAME.wgsl` is a kernel in `kernels/`. In `docs/src/`, relative Markdown link
//! targets resolve against the page's folder. `docs/src/spec/` is left out of the path scan: the
//! specifications cite the files of other projects (`src/shaders/…`), not this repository's.

use std::path::{Path, PathBuf};

/// The repository's top folders a path may start at.
const ROOTS: &[&str] = &["crates", "kernels", "src", "tests", "docs", "scripts", "golden", "fuzz", "python", ".ci"];

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '*' | '…')
}

/// The repository-relative paths named in `text`, as written (braces unexpanded).
fn paths_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if i > 0 && is_path_char(chars[i - 1]) {
            i += 1;
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 16)].iter().collect();
        let Some(root) = ROOTS.iter().find(|r| rest.starts_with(&format!("{r}/"))) else {
            i += 1;
            continue;
        };
        let mut j = i + root.chars().count() + 1;
        let mut depth = 0;
        while j < chars.len() {
            let c = chars[j];
            if c == '{' {
                depth += 1;
            } else if c == '}' && depth > 0 {
                depth -= 1;
            } else if !(is_path_char(c) || depth > 0 && c == ',') {
                break;
            }
            j += 1;
        }
        let mut p: String = chars[i..j].iter().collect();
        while p.ends_with(['.', ',', '-']) {
            p.pop();
        }
        out.push(p);
        i = j;
    }
    out
}

/// `a/{b,c}.rs` → `a/b.rs`, `a/c.rs` (one level of braces, several groups).
fn expand(p: &str) -> Vec<String> {
    let Some(open) = p.find('{') else { return vec![p.to_string()] };
    let Some(close) = p[open..].find('}').map(|c| open + c) else { return vec![p.to_string()] };
    p[open + 1..close].split(',').flat_map(|alt| expand(&format!("{}{alt}{}", &p[..open], &p[close + 1..]))).collect()
}

/// A placeholder path (`kernels/NAME.wgsl`, `crates/…/x.rs`, `golden/FIXTURE/`) is not checked.
fn is_placeholder(p: &str) -> bool {
    p.contains('…')
        || p.split('/').any(|part| {
            let stem = part.split('.').next().unwrap_or("");
            stem.len() > 1 && stem.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        })
}

/// Whether `p` (relative to `base`, `*` matching within one folder) names something that exists.
fn exists(base: &Path, p: &str) -> bool {
    let mut candidates = vec![base.to_path_buf()];
    for part in p.trim_end_matches('/').split('/') {
        let mut next = Vec::new();
        for c in &candidates {
            if part.contains('*') {
                let (pre, post) = part.split_once('*').unwrap();
                for e in std::fs::read_dir(c).into_iter().flatten().flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if name.len() >= pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post) {
                        next.push(e.path());
                    }
                }
            } else if c.join(part).exists() {
                next.push(c.join(part));
            }
        }
        candidates = next;
    }
    !candidates.is_empty()
}

/// Bare kernel names (`walk.wgsl`, not `kernels/walk.wgsl`) in `text`.
fn kernel_names_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(".wgsl") {
        let before = &rest[..i];
        let start = before.rfind(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')).map_or(0, |s| s + 1);
        let stem = &before[start..];
        let prev = before[..start].chars().next_back();
        if !stem.is_empty() && !matches!(prev, Some('/' | '{' | ',' | '.' | '-')) {
            out.push(format!("{stem}.wgsl"));
        }
        rest = &rest[i + ".wgsl".len()..];
    }
    out
}

/// Relative Markdown link targets (`[text](target)`), anchors removed.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap().trim();
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") && !target.contains(' ') {
            out.push(target.to_string());
        }
    }
    out
}

/// The text of a kernel's comments (`//` to the end of each line).
fn wgsl_comments(text: &str) -> String {
    text.lines().filter_map(|l| l.find("//").map(|i| &l[i..])).collect::<Vec<_>>().join("\n")
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            markdown_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

#[test]
fn the_scanner_finds_paths_braces_globs_and_placeholders() {
    let text = "port of crates/swg/src/eval/walk.rs (and `kernels/{normals,surface}.wgsl`), see tests/x.rs.\n\
                not ../shared/data/swg/x.trn nor /home/u/src/y.rs; docs/src/usage.md#flags, kernels/NAME.wgsl, kernels/*.wgsl";
    let found = paths_in(text);
    assert_eq!(
        found,
        ["crates/swg/src/eval/walk.rs", "kernels/{normals,surface}.wgsl", "tests/x.rs", "docs/src/usage.md", "kernels/NAME.wgsl", "kernels/*.wgsl"]
    );
    assert_eq!(expand("kernels/{normals,surface}.wgsl"), ["kernels/normals.wgsl", "kernels/surface.wgsl"]);
    assert!(is_placeholder("kernels/NAME.wgsl") && is_placeholder("crates/…/x.rs") && !is_placeholder("tests/x.rs"));
    let root = workspace();
    assert!(exists(&root, "kernels/*.wgsl") && exists(&root, "crates/swg/src/eval/walk.rs") && !exists(&root, "tests/x.rs"));
    assert_eq!(kernel_names_in("walk.wgsl and kernels/height.wgsl, {a,b}.wgsl; noise.wgsl."), ["walk.wgsl", "noise.wgsl"]);
    assert_eq!(link_targets("[a](usage.md#x), [b](https://x.invalid/y), [c](#z), [d](spec/gpu.md)"), ["usage.md", "spec/gpu.md"]);
}

#[test]
fn every_path_named_in_the_kernels_and_the_docs_exists() {
    let root = workspace();
    let mut sources: Vec<(PathBuf, String)> = Vec::new();
    for e in std::fs::read_dir(root.join("kernels")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "wgsl") {
            sources.push((p.clone(), wgsl_comments(&std::fs::read_to_string(&p).unwrap())));
        }
    }
    let mut pages = Vec::new();
    markdown_files(&root.join("docs/src"), &mut pages);
    assert!(pages.len() >= 20, "{} pages", pages.len());
    for p in pages.iter().chain([&root.join("README.md")]) {
        sources.push((p.clone(), std::fs::read_to_string(p).unwrap()));
    }
    assert!(sources.len() >= 35, "the kernels and the pages were read: {}", sources.len());

    let mut missing = Vec::new();
    let mut checked = 0;
    for (file, text) in &sources {
        let rel = file.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
        let is_spec = rel.starts_with("docs/src/spec/");
        if !is_spec {
            for p in paths_in(text) {
                if is_placeholder(&p) {
                    continue;
                }
                for q in expand(&p) {
                    checked += 1;
                    if !exists(&root, &q) {
                        missing.push(format!("{rel}: {q}"));
                    }
                }
            }
            for k in kernel_names_in(text) {
                checked += 1;
                if !root.join("kernels").join(&k).is_file() {
                    missing.push(format!("{rel}: {k} (no such kernel in kernels/)"));
                }
            }
        }
        if rel.ends_with(".md") {
            let dir = file.parent().unwrap();
            for t in link_targets(text) {
                checked += 1;
                if !exists(dir, &t) {
                    missing.push(format!("{rel}: link to {t}"));
                }
            }
        }
    }
    assert!(checked >= 100, "only {checked} paths were checked");
    assert!(missing.is_empty(), "paths named in comments and docs that do not exist:\n{}", missing.join("\n"));
}
