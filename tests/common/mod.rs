//! Shared helpers for integration tests: locating the read-only real data beside the repo.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/data/swg` relative to the crate root.
pub fn swg_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/swg")
}

/// A real data file, or `None` with a printed skip. In CI (`CI=true`) a missing file fails.
pub fn real_file(rel: &str) -> Option<PathBuf> {
    let p = swg_root().join(rel);
    if p.exists() {
        return Some(p);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("test data {} is missing (required in CI)", p.display());
    }
    eprintln!("skipping: test data {} is missing", p.display());
    None
}

/// Every `.trn` under `../shared/data/swg` (terrain/ and extra/), sorted.
pub fn all_trn_files() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for dir in ["terrain", "extra"] {
        let Some(d) = real_file(dir) else { return v };
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "trn") {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}
