//! Flags for the integration tests (`tests/common/mod.rs`), so that a test that needs what this
//! machine lacks shows as *ignored*, not passed:
//! - `no_shared_data`: the real game files, `../shared/data/swg` beside the repository, are absent;
//! - `no_gpu_adapter`: no Vulkan driver is installed (no ICD manifest in
//!   `/usr/share/vulkan/icd.d` or `/etc/vulkan/icd.d`; lavapipe's counts).
//!
//! Neither is ever set with `CI=true`: CI must fail on missing data or a missing adapter, and
//! the tests' runtime helpers do. Cargo reruns this script when `CI` changes and when the
//! folders it looked at change; a folder that did not exist is not watched (watching its
//! parent would scan every sibling), so after adding `../shared/data` or installing a Vulkan
//! driver where there was none, `touch build.rs` (or `cargo clean -p trnbake`).

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_shared_data)");
    println!("cargo::rustc-check-cfg=cfg(no_gpu_adapter)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CI");
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");

    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let data = Path::new(&manifest).join("../shared/data");
    // The data folder is small (a few hundred files): cargo scans it for changes.
    if data.is_dir() {
        println!("cargo::rerun-if-changed={}", data.display());
    }
    if !ci && !data.join("swg").is_dir() {
        println!("cargo::rustc-cfg=no_shared_data");
    }

    let mut icd = false;
    for dir in ["/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"] {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        println!("cargo::rerun-if-changed={dir}");
        icd |= entries.flatten().any(|e| e.path().extension().is_some_and(|x| x == "json"));
    }
    if !ci && !icd {
        println!("cargo::rustc-cfg=no_gpu_adapter");
    }
}
