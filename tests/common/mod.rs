//! What the integration tests share, each written once: the `trnbake()` runner, temp folders,
//! the real data beside the repository (`../shared/data`, with the CI=true-fails rule), the GPU
//! context, evaluator construction, GDAL from outside, and in submodules the IFF builders
//! ([`iff`]) and the counting allocator ([`alloc`]).
//!
//! A test that needs the real data or a GPU adapter says so with an attribute, so that it shows
//! as *ignored* (not passed) where they are missing:
//! `#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]` and
//! `#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]`. The root package's `build.rs`
//! sets those flags (never when `CI=true`, where a missing file or adapter fails); the runtime
//! helpers below still skip, or fail in CI, for anything finer (one file, one adapter).
#![allow(dead_code)]

pub mod alloc;
pub mod iff;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::HeightOptions;
use trnbake_swg::surface::{SurfaceEvaluator, SurfaceOptions};

/// Whether this run is CI's (`CI=true`), where every skip is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// The `trnbake` binary of this package, with no job-array scheduler variable (nor progress
/// or log setting) of the machine running the tests leaking into it (`--shard auto`).
pub fn trnbake() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_trnbake"));
    for v in [
        "SLURM_ARRAY_TASK_ID",
        "SLURM_ARRAY_TASK_MIN",
        "SLURM_ARRAY_TASK_STEP",
        "SLURM_ARRAY_TASK_COUNT",
        "AWS_BATCH_JOB_ARRAY_INDEX",
        "AWS_BATCH_JOB_ARRAY_SIZE",
        "CLOUD_RUN_TASK_INDEX",
        "CLOUD_RUN_TASK_COUNT",
        "JOB_COMPLETION_INDEX",
        "TRNBAKE_PROGRESS_SECS",
        "RUST_LOG",
    ] {
        c.env_remove(v);
    }
    c
}

/// Run `cmd`, asserting that it succeeds (its stderr in the message otherwise).
pub fn run_ok(cmd: &mut Command) -> Output {
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{cmd:?} failed: {}", String::from_utf8_lossy(&o.stderr));
    o
}

/// Bytes of a command's output as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A command's stdout then stderr, as text.
pub fn output_text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// A fresh path for this test binary's `name` under cargo's temp folder for tests
/// (`target/tmp`), removed if an earlier run left it; not created.
pub fn tmp_path(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{}-{name}-{}", env!("CARGO_CRATE_NAME"), std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// A fresh, empty folder for this test binary's `name` (as [`tmp_path`], created).
pub fn tmp(name: &str) -> PathBuf {
    let d = tmp_path(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `../shared/data/swg` relative to the crate root.
pub fn swg_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/swg")
}

/// A real data file under `../shared/data/GAME_REL`, or `None` with a printed skip. In CI
/// (`CI=true`) a missing file fails.
pub fn shared_data_file(rel: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data").join(rel);
    if p.exists() {
        return Some(p);
    }
    if in_ci() {
        panic!("test data {} is missing (required in CI)", p.display());
    }
    eprintln!("skipping: test data {} is missing", p.display());
    None
}

/// A real SWG data file (relative to `../shared/data/swg`), as [`shared_data_file`].
pub fn real_file(rel: &str) -> Option<PathBuf> {
    shared_data_file(&format!("swg/{rel}"))
}

/// The GPU context, or `None` (skip with a message) outside CI; in CI (`CI=true`) a missing
/// adapter fails.
pub fn gpu() -> Option<trnbake_gpu::GpuContext> {
    match trnbake_gpu::GpuContext::new(false, None) {
        Ok(c) => Some(c),
        Err(e) if in_ci() => panic!("CI needs a GPU adapter (lavapipe): {e}"),
        Err(e) => {
            eprintln!("skipping GPU test: {e}");
            None
        }
    }
}

/// A real planet, `../shared/data/swg/terrain/NAME.trn`, loaded; `None` as [`real_file`].
pub fn planet(name: &str) -> Option<Terrain> {
    let p = real_file(&format!("terrain/{name}.trn"))?;
    Some(Terrain::load(&p).unwrap())
}

/// Height options that resolve bitmaps under `../shared/data/swg`.
pub fn real_options() -> HeightOptions {
    HeightOptions { data_root: Some(swg_root()), ..Default::default() }
}

/// [`real_options`] with missing bitmaps read as zero (`--missing-bitmaps zero`).
pub fn lenient_options() -> HeightOptions {
    HeightOptions { missing_bitmaps_zero: true, ..real_options() }
}

/// The height and surface evaluators of `t` under the same height options.
pub fn evaluators(t: &Terrain, opts: &HeightOptions, surface: SurfaceOptions) -> (HeightEvaluator, SurfaceEvaluator) {
    (HeightEvaluator::new(t, opts).unwrap(), SurfaceEvaluator::new(t, opts, surface).unwrap())
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

/// GDAL's command-line tools (`gdal-bin`), for checking exports from outside.
pub struct Gdal;

impl Gdal {
    /// `Some` when `gdalinfo` runs; with `CI=true` a missing GDAL fails the test.
    pub fn find() -> Option<Gdal> {
        let ok = Command::new("gdalinfo").arg("--version").output().is_ok_and(|o| o.status.success());
        if ok {
            return Some(Gdal);
        }
        if in_ci() {
            panic!("gdalinfo is not on PATH (required when CI=true; install gdal-bin)");
        }
        eprintln!("skipping GDAL checks: gdalinfo not on PATH");
        None
    }

    /// `gdalinfo -json -stats`, without writing a .aux.xml sidecar; fails on any GDAL warning.
    pub fn info(&self, path: &Path) -> serde_json::Value {
        let out = Command::new("gdalinfo").args(["--config", "GDAL_PAM_ENABLED", "NO", "-json", "-stats"]).arg(path).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "gdalinfo failed: {stderr}");
        // GDAL 3.6's `-json` output builds a STAC block that asks PROJ for the ellipsoid of the
        // CRS; an engineering CRS has none, so it prints two `proj_get_ellipsoid` errors for any
        // local CRS, including files GDAL itself wrote with `-a_srs LOCAL_CS[...]`. Plain
        // `gdalinfo` is silent. Anything else on stderr is a failure.
        let complaints: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty() && !l.contains("PROJ: proj_get_ellipsoid")).collect();
        assert!(complaints.is_empty(), "gdalinfo complained about {}: {stderr}", path.display());
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// `gdallocationinfo -valonly [-geoloc]` for several points (fed on stdin); raw band values.
    pub fn location(&self, path: &Path, geoloc: bool, pts: &[(f64, f64)]) -> Vec<f64> {
        let mut cmd = Command::new("gdallocationinfo");
        cmd.args(["--config", "GDAL_PAM_ENABLED", "NO", "-valonly"]);
        if geoloc {
            cmd.arg("-geoloc");
        }
        let mut child = cmd.arg(path).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        {
            let mut stdin = child.stdin.take().unwrap();
            for (x, y) in pts {
                writeln!(stdin, "{x:?} {y:?}").unwrap();
            }
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && stderr.trim().is_empty(), "gdallocationinfo: {stderr}");
        let vals: Vec<f64> = String::from_utf8_lossy(&out.stdout).lines().map(|l| l.trim().parse::<f64>().unwrap()).collect();
        assert_eq!(vals.len(), pts.len(), "gdallocationinfo output: {:?}", String::from_utf8_lossy(&out.stdout));
        vals
    }
}

/// gdalinfo's `minimum`/`maximum` are rounded to 3 decimals in `-json`; the band metadata
/// `STATISTICS_MINIMUM`/`MAXIMUM` carry 14 significant digits, enough to recover an f32 exactly.
pub fn stats_min_max(band: &serde_json::Value) -> (f64, f64) {
    let md = &band["metadata"][""];
    let p = |k: &str| md[k].as_str().unwrap_or_else(|| panic!("no {k} in {band}")).parse::<f64>().unwrap();
    (p("STATISTICS_MINIMUM"), p("STATISTICS_MAXIMUM"))
}

/// A Python with GDAL's bindings (`python3-gdal`): the COG validator and statistics GDAL
/// computes itself. `python3` first, then Debian's `/usr/bin/python3` (a pyenv `python3` on
/// PATH may lack the system packages). `None` with a printed skip; with `CI=true` a missing
/// one fails.
pub struct GdalPython(PathBuf);

impl GdalPython {
    pub fn find() -> Option<GdalPython> {
        for py in ["python3", "/usr/bin/python3"] {
            let ok =
                Command::new(py).args(["-c", "from osgeo_utils.samples import validate_cloud_optimized_geotiff"]).output().is_ok_and(|o| o.status.success());
            if ok {
                return Some(GdalPython(PathBuf::from(py)));
            }
        }
        if in_ci() {
            panic!("no python3 with osgeo_utils (required when CI=true; install python3-gdal)");
        }
        eprintln!("skipping COG checks: no python3 with GDAL's bindings (python3-gdal)");
        None
    }

    /// GDAL's own validator, with the full check of the block leaders and trailers; panics
    /// with its report when the file is not a valid Cloud-Optimized GeoTIFF.
    pub fn validate_cog(&self, path: &Path) {
        let out = Command::new(&self.0).args(["-m", "osgeo_utils.samples.validate_cloud_optimized_geotiff", "--full-check=yes"]).arg(path).output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success() && text.contains("is a valid cloud optimized GeoTIFF") && !text.contains("arning"), "{}: {text}", path.display());
    }

    /// What GDAL sees in a GeoTIFF: `stored` (the STATISTICS_* items of the file, min, max,
    /// mean, stddev), `computed` (GDAL's own `ComputeStatistics` over every pixel), the
    /// overview sizes, `IMAGE_STRUCTURE` metadata, the CRS name, the block size and the
    /// distinct values of the smallest overview (at most 1000).
    pub fn inspect(&self, path: &Path) -> serde_json::Value {
        const SCRIPT: &str = r#"
import json, sys
import numpy as np
from osgeo import gdal
gdal.UseExceptions()
gdal.SetConfigOption("GDAL_PAM_ENABLED", "NO")
ds = gdal.Open(sys.argv[1]); b = ds.GetRasterBand(1)
md = b.GetMetadata()
stored = [float(md[k]) for k in ("STATISTICS_MINIMUM", "STATISTICS_MAXIMUM", "STATISTICS_MEAN", "STATISTICS_STDDEV") if k in md]
ds2 = gdal.Open(sys.argv[1]); computed = ds2.GetRasterBand(1).ComputeStatistics(False)
ovr = [b.GetOverview(i) for i in range(b.GetOverviewCount())]
small = (ovr[-1] if ovr else b).ReadAsArray()
vals = np.unique(small[np.isfinite(small)]) if small.dtype.kind == "f" else np.unique(small)
srs = ds.GetSpatialRef()
print(json.dumps({"stored": stored, "computed": computed, "overviews": [[o.XSize, o.YSize] for o in ovr],
    "structure": ds.GetMetadata("IMAGE_STRUCTURE"), "crs": srs.GetName() if srs else None,
    "block": b.GetBlockSize(), "smallest_values": [float(v) for v in vals[:1000]]}))
"#;
        let out = Command::new(&self.0).args(["-c", SCRIPT]).arg(path).output().unwrap();
        assert!(out.status.success(), "{}: {}", path.display(), String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }
}
