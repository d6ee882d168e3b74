//! What a bake or merge reports ([`BakeReport`]) and the `manifest.json` written last, once
//! every output is in place.

use std::path::Path;

use serde::Serialize;
use trnbake_raster::fsutil::write_atomic;
use trnbake_raster::writers::set::ExportSummary;
use trnbake_raster::WrittenFile;

use crate::surface_maps::SurfaceTiming;
use crate::{BakeParams, Result};

/// What a finished bake reports.
#[derive(Debug, Serialize)]
pub struct BakeReport {
    pub backend: String,
    pub adapter: Option<trnbake_gpu::AdapterSummary>,
    pub posts: u64,
    pub tiles_computed: usize,
    pub tiles_resumed: usize,
    pub compute_seconds: f64,
    pub total_seconds: f64,
    pub min_height: f32,
    pub max_height: f32,
    pub outputs: Vec<WrittenFile>,
    /// Time spent on the surface maps, when any were asked for.
    pub maps_seconds: Option<f64>,
    /// The backend that computed the surface maps (`"gpu"` or `"cpu"`), when any were asked for.
    pub maps_backend: Option<String>,
    /// Preset, resampling, tiles and engine settings of the outputs.
    pub export: Option<ExportSummary>,
    /// Where the surface maps' time went, when any were asked for.
    pub surface_timing: Option<SurfaceTiming>,
    /// The adapter as the shards' manifests had it (a merge, which runs on none).
    #[serde(skip)]
    pub adapter_json: Option<serde_json::Value>,
}

impl BakeReport {
    /// A report of `posts` posts before anything is timed or written.
    pub(crate) fn new(backend: String, adapter: Option<trnbake_gpu::AdapterSummary>, posts: u64) -> Self {
        BakeReport {
            backend,
            adapter,
            posts,
            tiles_computed: 0,
            tiles_resumed: 0,
            compute_seconds: 0.0,
            total_seconds: 0.0,
            min_height: f32::NAN,
            max_height: f32::NAN,
            outputs: Vec::new(),
            maps_seconds: None,
            maps_backend: None,
            export: None,
            surface_timing: None,
            adapter_json: None,
        }
    }
}

pub(crate) fn write_manifest(outdir: &Path, params: &BakeParams, report: &BakeReport) -> Result<()> {
    let adapter = report.adapter_json.clone().unwrap_or_else(|| serde_json::json!(report.adapter));
    let v = serde_json::json!({
        "trnbake_version": env!("CARGO_PKG_VERSION"),
        "status": "complete",
        "parameters": params,
        "backend": report.backend,
        "surface_maps_backend": report.maps_backend,
        "adapter": adapter,
        "posts": report.posts,
        "min_height": report.min_height,
        "max_height": report.max_height,
        "export": report.export,
        "outputs": report.outputs,
        "timing": {
            "compute_seconds": report.compute_seconds,
            "maps_seconds": report.maps_seconds,
            "surface": report.surface_timing,
            "total_seconds": report.total_seconds,
            "posts_per_second_end_to_end": report.posts as f64 / report.total_seconds.max(1e-9),
            "tiles_computed": report.tiles_computed,
            "tiles_resumed": report.tiles_resumed,
        },
    });
    let path = outdir.join("manifest.json");
    write_atomic(&path, serde_json::to_string_pretty(&v)?.as_bytes()).map_err(crate::error::writing(&path))?;
    Ok(())
}
