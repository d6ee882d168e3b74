//! `include/trnbake.h` is what cbindgen generates from `src/lib.rs` today: a C user never
//! compiles against a header that has drifted from the library.
//!
//! `TRNBAKE_BLESS=1 cargo test -p trnbake-capi --test header` rewrites the file.

use std::path::Path;

fn generate(crate_dir: &Path) -> String {
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    // `with_src` parses the one source file directly; `with_crate` would run `cargo metadata`
    // (and may want the network) for the same result, since the API lives in lib.rs alone.
    let bindings = cbindgen::Builder::new().with_config(config).with_src(crate_dir.join("src/lib.rs")).generate().expect("cbindgen generates the header");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("the header is UTF-8")
}

#[test]
fn the_checked_in_header_is_fresh() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = dir.join("include/trnbake.h");
    let fresh = generate(dir);
    if std::env::var_os("TRNBAKE_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write include/trnbake.h");
        return;
    }
    let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
    if checked_in != fresh {
        let first = checked_in.lines().zip(fresh.lines()).position(|(a, b)| a != b);
        let hint = match first {
            Some(i) => format!(
                "first difference at line {}:\n  checked in: {}\n  generated:  {}",
                i + 1,
                checked_in.lines().nth(i).unwrap_or(""),
                fresh.lines().nth(i).unwrap_or("")
            ),
            None => format!("one is a prefix of the other ({} vs {} lines)", checked_in.lines().count(), fresh.lines().count()),
        };
        panic!(
            "crates/capi/include/trnbake.h is stale: the C API in src/lib.rs changed.\n{hint}\n\
             Regenerate it with:\n  TRNBAKE_BLESS=1 cargo test -p trnbake-capi --test header\n\
             (then `git diff crates/capi/include/trnbake.h` shows the change)"
        );
    }
    // The header is what the C programs need: the opaque handle and every function.
    for name in [
        "typedef struct TrnbakeTerrain TrnbakeTerrain;",
        "trnbake_terrain_open",
        "trnbake_last_error",
        "trnbake_height_at",
        "trnbake_heights",
        "trnbake_bake_region",
        "trnbake_water_height_at",
        "trnbake_map_width",
        "trnbake_terrain_free",
        "#ifndef TRNBAKE_H",
    ] {
        assert!(fresh.contains(name), "the header lacks `{name}`");
    }
    // The `navmesh` feature's declarations are there whatever this build's features (the
    // header is generated from the source), each under the guard a C program defines.
    for name in [
        "typedef struct TrnbakeNavmesh TrnbakeNavmesh;",
        "TrnbakeNavmesh *trnbake_navmesh_open(",
        "int trnbake_navmesh_path(",
        "void trnbake_navmesh_free(",
        "#define TRNBAKE_NO_PATH 1",
    ] {
        let at = fresh.find(name).unwrap_or_else(|| panic!("the header lacks `{name}`"));
        let guard = fresh[..at].rfind("#if defined(TRNBAKE_NAVMESH)").expect("a navmesh guard before it");
        assert!(!fresh[guard..at].contains("#endif"), "`{name}` is outside `#if defined(TRNBAKE_NAVMESH)`");
    }
}
