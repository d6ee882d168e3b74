//! The C API from C and C++: `tests/c/ground_height.c` (an emulator's ground height under a
//! spawn, linked with the staticlib) and `tests/c/threads.cpp` (one handle shared by four
//! std::threads, linked with the cdylib), compiled with the system `cc` / `c++` against the
//! checked-in header and the library this `cargo test` built, then run on Tatooine.
//!
//! The real data is `../shared/data/swg` beside the workspace: with `CI=true` a missing file
//! (or compiler) is a failure, elsewhere a printed skip.

use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The folder holding `libtrnbake.a` and `libtrnbake.so`. This test runs from
/// `<profile>/deps/` (`target/debug`, `target/release`), where cargo built the library's
/// cdylib and staticlib along with the rlib, since the library declares those crate types.
/// `cargo test` leaves them there; `cargo build` also copies them up to `<profile>/`, which is
/// the fallback when a build came first.
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let deps = exe.parent().expect("<profile>/deps/<test>");
    if deps.join("libtrnbake.a").is_file() {
        deps.to_path_buf()
    } else {
        deps.parent().expect("<profile>/deps").to_path_buf()
    }
}

fn skip_or_fail(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{why} (CI=true)");
    }
    eprintln!("skipped: {why}");
}

fn tatooine() -> Option<(PathBuf, PathBuf)> {
    let root = crate_dir().join("../../../shared/data/swg");
    let trn = root.join("terrain/tatooine.trn");
    if !trn.is_file() {
        skip_or_fail(&format!("{} is missing", trn.display()));
        return None;
    }
    Some((trn.canonicalize().unwrap(), root.canonicalize().unwrap()))
}

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

fn compile(compiler: &str, args: &[&str], exe: &Path) {
    let out = Command::new(compiler).args(args).arg("-o").arg(exe).current_dir(crate_dir()).output().expect("run the compiler");
    assert!(out.status.success(), "{compiler} {} failed:\n{}{}", args.join(" "), String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

fn run(exe: &Path, trn: &Path, root: &Path) -> String {
    let out = Command::new(exe).arg(trn).arg(root).output().expect("run the program");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{} failed:\n{stdout}{}", exe.display(), String::from_utf8_lossy(&out.stderr));
    stdout
}

fn library(name: &str) -> PathBuf {
    let lib = library_dir().join(name);
    assert!(lib.is_file(), "{} was not built (cargo builds it with the tests: crate-type in Cargo.toml)", lib.display());
    lib
}

#[test]
#[cfg(target_os = "linux")]
fn c_ground_height_with_the_staticlib() {
    if !have("cc") {
        return skip_or_fail("no C compiler (`cc`)");
    }
    let lib = library("libtrnbake.a");
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ground_height");
    // The system libraries the Rust standard library needs when linked statically
    // (`cargo rustc -p trnbake-capi --lib --crate-type staticlib -- --print native-static-libs`).
    let lib = lib.to_str().unwrap();
    compile(
        "cc",
        &[
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-pedantic",
            "-Werror",
            "-Iinclude",
            "tests/c/ground_height.c",
            lib,
            "-lgcc_s",
            "-lutil",
            "-lrt",
            "-lpthread",
            "-lm",
            "-ldl",
            "-lc",
        ],
        &exe,
    );
    let Some((trn, root)) = tatooine() else { return };
    let out = run(&exe, &trn, &root);
    println!("{out}");
    assert!(out.contains("height at 3528,-4804: 4.0399\n"), "{out}");
    assert!(out.contains("equal to single calls: yes"), "{out}");
    assert!(out.contains("water at 3528,-4804: none; at 6677,5457: 1.0000\n"), "{out}");
    assert!(out.contains("missing file: ") && out.contains("no/such/planet.trn"), "{out}");
    assert!(out.ends_with("ok\n"), "{out}");
}

#[test]
#[cfg(target_os = "linux")]
fn cpp_threads_share_one_handle_with_the_cdylib() {
    if !have("c++") {
        return skip_or_fail("no C++ compiler (`c++`)");
    }
    library("libtrnbake.so");
    let dir = library_dir();
    let dir = dir.to_str().unwrap();
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("threads");
    let rpath = format!("-Wl,-rpath,{dir}");
    compile("c++", &["-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread", "-Iinclude", "tests/c/threads.cpp", "-L", dir, "-ltrnbake", &rpath], &exe);
    let Some((trn, root)) = tatooine() else { return };
    let out = run(&exe, &trn, &root);
    println!("{out}");
    assert!(out.contains("4 threads x 2000 points: 0 mismatches"), "{out}");
}
