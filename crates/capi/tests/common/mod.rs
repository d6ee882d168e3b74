//! What the tests that compile and run C programs share (`c_programs.rs`, `navmesh_paths.rs`): the
//! library cargo built, the compilers, the real data (a printed skip when missing, a failure
//! with `CI=true`).

#![allow(dead_code)] // each test file uses its own part

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The folder holding `libtrnbake.a` and `libtrnbake.so`. This test runs from
/// `<profile>/deps/` (`target/debug`, `target/release`), where cargo built the library's
/// cdylib and staticlib along with the rlib, since the library declares those crate types.
/// `cargo test` leaves them there; `cargo build` also copies them up to `<profile>/`, which is
/// the fallback when a build came first. The names carry no feature set: the files are those of
/// the last build, which is this test's own (`cargo test` builds the library before running it).
pub fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let deps = exe.parent().expect("<profile>/deps/<test>");
    if deps.join("libtrnbake.a").is_file() {
        deps.to_path_buf()
    } else {
        deps.parent().expect("<profile>/deps").to_path_buf()
    }
}

pub fn skip_or_fail(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{why} (CI=true)");
    }
    eprintln!("skipped: {why}");
}

/// `../shared/data/swg/terrain/tatooine.trn` and its data root, or None (after the skip).
pub fn tatooine() -> Option<(PathBuf, PathBuf)> {
    let root = crate_dir().join("../../../shared/data/swg");
    let trn = root.join("terrain/tatooine.trn");
    if !trn.is_file() {
        skip_or_fail(&format!("{} is missing", trn.display()));
        return None;
    }
    Some((trn.canonicalize().unwrap(), root.canonicalize().unwrap()))
}

pub fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

pub fn compile(compiler: &str, args: &[&str], exe: &Path) {
    let out = Command::new(compiler).args(args).arg("-o").arg(exe).current_dir(crate_dir()).output().expect("run the compiler");
    assert!(out.status.success(), "{compiler} {} failed:\n{}{}", args.join(" "), String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// Runs `exe` with `args`; its standard output, after asserting it succeeded.
pub fn run<S: AsRef<std::ffi::OsStr>>(exe: &Path, args: &[S]) -> String {
    let out = Command::new(exe).args(args).output().expect("run the program");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{} failed:\n{stdout}{}", exe.display(), String::from_utf8_lossy(&out.stderr));
    stdout
}

pub fn library(name: &str) -> PathBuf {
    let lib = library_dir().join(name);
    assert!(lib.is_file(), "{} was not built (cargo builds it with the tests: crate-type in Cargo.toml)", lib.display());
    lib
}

/// The system libraries `libtrnbake.a` needs when linked statically (`cargo rustc -p
/// trnbake-capi --lib --crate-type staticlib -- --print native-static-libs`): the Rust standard
/// library's, and with the `navmesh` feature the C++ runtime of Recast/Detour before them.
pub fn static_libs() -> Vec<&'static str> {
    let cpp: &[&str] = if cfg!(feature = "navmesh") { &["-lstdc++"] } else { &[] };
    [cpp, &["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"]].concat()
}
