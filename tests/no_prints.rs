//! Libraries report, the binary speaks (issue #36): no library crate writes to stdout or
//! stderr. Notes, warnings and progress go through a `trnbake_swg::report::Reporter`, which the
//! command line renders and a library user (C, Python, a server) captures or silences. Only the
//! binary's `src/` may print.
//!
//! Read from the sources of every crate in `crates/` and of the Python package: outside
//! comments and before a file's `#[cfg(test)]` (tests may say why they skip), no `println!`,
//! `print!`, `eprintln!`, `eprint!`, `dbg!`, `stdout()` or `stderr()`.

use std::path::{Path, PathBuf};

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

const PRINTS: [&str; 7] = ["println!", "print!", "eprintln!", "eprint!", "dbg!", "stdout()", "stderr()"];

/// `file:line: text` of every print in the library code of `text`.
fn prints(file: &Path, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim() == "#[cfg(test)]" {
            break;
        }
        let code = match line.find("//") {
            Some(k) => &line[..k],
            None => line,
        };
        // `print!` inside `eprint!`/`println!` is the same print: one hit a line is enough.
        if PRINTS.iter().any(|p| code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '!' || c == '(' || c == ')')).any(|w| w.starts_with(p))) {
            found.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
        }
    }
    found
}

#[test]
fn library_crates_never_print() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates")).unwrap().map(|e| e.unwrap().path().join("src")).filter(|p| p.is_dir()).collect();
    dirs.push(root.join("python/src"));
    assert!(dirs.len() >= 8, "the library crates and the Python package: {dirs:?}");
    let mut found = Vec::new();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        let mut files = Vec::new();
        rust_files(dir, &mut files);
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            found.extend(prints(f.strip_prefix(&root).unwrap(), &text));
        }
    }
    assert!(
        found.is_empty(),
        "library code prints (send it to the Reporter, `report.note(…)` / `Progress::new(&reporter, …)`, and let the binary render it):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_finds_prints_and_skips_comments_and_tests() {
    let text = "fn a() {\n    eprintln!(\"x\");\n    // println!(\"in a comment\")\n    let _ = std::io::stderr();\n}\n#[cfg(test)]\nmod tests { fn b() { println!(\"a test may\"); } }\n";
    let found = prints(Path::new("f.rs"), text);
    assert_eq!(found, ["f.rs:2: eprintln!(\"x\");", "f.rs:4: let _ = std::io::stderr();"]);
}
