//! Build script of trnbake-gpu: concatenate the WGSL kernels of the height pass into
//! `$OUT_DIR/height_pass.wgsl` (exposed as `gpu::records::HEIGHT_PASS_WGSL`) and those of the
//! surface passes into `$OUT_DIR/surface_pass.wgsl` (`gpu::records::SURFACE_PASS_WGSL`), then
//! parse and validate each with naga so that a broken kernel fails `cargo build` with a
//! readable message instead of failing at run time on the GPU.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The kernel files both modules start with, in concatenation order: the records and the
/// ports of the evaluator's helpers. WGSL allows module-scope declarations to be used before
/// they appear, so the order only matters for readability.
const HELPER_FILES: &[&str] = &[
    "kernels/records.wgsl",
    "kernels/noise.wgsl",
    "kernels/feather.wgsl",
    "kernels/boundary.wgsl",
    "kernels/filter.wgsl",
    "kernels/affector.wgsl",
    "kernels/plan_bindings.wgsl",
];

/// The height pass's own files, after [`HELPER_FILES`]: the strip walk (several posts per
/// invocation), then its bindings and entry point.
const HEIGHT_PASS_FILES: &[&str] = &["kernels/walk_strip.wgsl", "kernels/height.wgsl"];

/// The surface passes' own files (normals, shader, later, water), after [`HELPER_FILES`].
const SURFACE_PASS_FILES: &[&str] = &["kernels/walk.wgsl", "kernels/normals.wgsl", "kernels/surface.wgsl", "kernels/water.wgsl"];

/// Where one kernel file starts in the concatenated source (1-based line).
struct Part {
    file: &'static str,
    first_line: usize,
    line_count: usize,
}

fn main() {
    println!("cargo:rerun-if-changed=../../kernels");
    println!("cargo:rerun-if-changed=build.rs");
    // The kernels live at the workspace root (`kernels/`, as the project was specified), two
    // folders above this crate; file names below are relative to that root.
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR")).join("../..");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let modules = [("height pass", "height_pass.wgsl", HEIGHT_PASS_FILES), ("surface passes", "surface_pass.wgsl", SURFACE_PASS_FILES)];
    if let Err(msg) = modules.iter().try_for_each(|&(what, out, files)| build_module(&manifest, &out_dir, what, out, files)) {
        // Cargo prints a failed build script's stderr under "--- stderr".
        eprintln!("{msg}");
        std::process::exit(1);
    }
}

fn build_module(manifest: &Path, out_dir: &Path, what: &str, out_name: &str, files: &[&'static str]) -> Result<(), String> {
    let mut source = String::new();
    let mut parts = Vec::new();
    for &file in HELPER_FILES.iter().chain(files) {
        let path = manifest.join(file);
        println!("cargo:rerun-if-changed=../../{file}");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        // A marker line, then the file, then a newline so files never run together.
        writeln!(source, "// ---- {file} ----").unwrap();
        let first_line = source.lines().count() + 1;
        source.push_str(&text);
        if !text.ends_with('\n') {
            source.push('\n');
        }
        parts.push(Part { file, first_line, line_count: text.lines().count() });
    }

    let out_path = out_dir.join(out_name);
    std::fs::write(&out_path, &source).map_err(|e| format!("cannot write {}: {e}", out_path.display()))?;

    let display = out_path.display().to_string();
    let module = naga::front::wgsl::parse_str(&source).map_err(|e| {
        let at = e.location(&source).map(|l| locate(&parts, l.line_number as usize)).unwrap_or_default();
        format!("WGSL parse error in the {what} kernels{at}:\n{}", e.emit_to_string_with_path(&source, &display))
    })?;
    let mut validator = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::default());
    validator.validate(&module).map_err(|e| {
        let at = e.location(&source).map(|l| locate(&parts, l.line_number as usize)).unwrap_or_default();
        format!("WGSL validation error in the {what} kernels{at}:\n{}", e.emit_to_string_with_path(&source, &display))
    })?;
    Ok(())
}

/// " (kernels/x.wgsl line N)" for a 1-based line of the concatenated source.
fn locate(parts: &[Part], line: usize) -> String {
    for p in parts {
        if line >= p.first_line && line < p.first_line + p.line_count.max(1) {
            return format!(" ({} line {})", p.file, line - p.first_line + 1);
        }
    }
    String::new()
}
