//! The C API from C and C++: `tests/c/ground_height.c` (an emulator's ground height under a
//! spawn, linked with the staticlib) and `tests/c/threads.cpp` (one handle shared by four
//! std::threads, linked with the cdylib), compiled with the system `cc` / `c++` against the
//! checked-in header and the library this `cargo test` built, then run on Tatooine.
//!
//! The real data is `../shared/data/swg` beside the workspace: with `CI=true` a missing file
//! (or compiler) is a failure, elsewhere a printed skip.

mod common;

use std::path::PathBuf;

use common::{compile, have, library, library_dir, run, skip_or_fail, static_libs, tatooine};

#[test]
#[cfg(target_os = "linux")]
fn c_ground_height_with_the_staticlib() {
    if !have("cc") {
        return skip_or_fail("no C compiler (`cc`)");
    }
    let lib = library("libtrnbake.a");
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ground_height");
    let lib = lib.to_str().unwrap();
    let mut args = vec!["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-Iinclude", "tests/c/ground_height.c", lib];
    args.extend(static_libs());
    compile("cc", &args, &exe);
    let Some((trn, root)) = tatooine() else { return };
    let out = run(&exe, &[&trn, &root]);
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
    let out = run(&exe, &[&trn, &root]);
    println!("{out}");
    assert!(out.contains("4 threads x 2000 points: 0 mismatches"), "{out}");
}
