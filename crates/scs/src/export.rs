//! Heightmap → SCS map folder: a mosaic of Bezier Patch items (scs §B.8 option (b)) fitted by
//! [`super::fit`], one node per patch at its centre, items split into the game's 4 km
//! sectors by their centre (§B.2), plus `manifest.json` with the fit error and the
//! georeference that `scs rasterize` uses to map the result back onto the source grid.
//!
//! Coordinates: the fitted region's north-west corner lands on SCS (origin X, origin Z);
//! SCS X = origin X + (x − west x) and SCS Z = origin Z + (north z − z), because SCS's Z axis
//! points south while the heightmap's z (SWG and GeoTIFF alike) points north. Heights are
//! kept as they are (SCS Y = source height).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::codec::{BezierPatchItem, Desc, Item, Kdop, Node, PatchVegetation, QuadInfo, RawSectorFile, SectorFile, ITEM_BEZIER_PATCH};
use super::fit::{fit, mosaic_error, FitError, FitGrid, FitOptions, Leaf};
use super::map::{sector_of, Map, MapError, Sector};
use super::patch::CONTROL_POINT_ORDER;
use super::token::Token;
use trnbake_raster::Grid;

/// High bits of every uid the exporter makes (map, items, nodes): deterministic output.
pub const UID_BASE: u64 = 0x5CB0_0000_0000_0000;
/// Bezier Patch flags: noise 0 % (value 2 in bits 2–3, scs §B.8).
pub const PATCH_FLAGS: u32 = 2 << 2;
/// Default view distance ÷ 10 (400 m, scs §B.4).
pub const VIEW_DISTANCE: u8 = 40;
/// Name of the export's sidecar in MAPDIR.
pub const MANIFEST: &str = "manifest.json";

/// What to build.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    pub name: String,
    /// Base patch size (metres, a whole multiple of the grid spacing, ≥ 3 spacings).
    pub patch_m: f64,
    /// SCS position (X east, Z south) of the region's north-west corner.
    pub origin: (f64, f64),
    pub material: Token,
    /// Split patches whose worst post misses by more (metres).
    pub max_error: Option<f64>,
    /// Smallest patch a split may make (metres); default 4 spacings.
    pub min_patch_m: Option<f64>,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    #[error(transparent)]
    Fit(#[from] FitError),
    #[error(transparent)]
    Map(#[from] MapError),
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: std::io::Error },
    #[error("{0}")]
    Options(String),
}

/// Error figures of one patch.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PatchReport {
    pub uid: String,
    /// SCS centre (X, Z).
    pub centre: [f64; 2],
    pub size: f64,
    pub rms: f64,
    pub max: f64,
}

/// A patch the fit could not bring within `--max-error`, and why.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MissReport {
    pub uid: String,
    /// SCS centre (X, Z).
    pub centre: [f64; 2],
    pub size: f64,
    pub max: f64,
    /// The worst post (SCS X, Z).
    pub worst_post: [f64; 2],
    pub reason: String,
}

/// The facts `scs rasterize` needs to put heights back on the source grid.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Georef {
    /// The fitted posts in the source's coordinates (x east, z north).
    pub grid: Grid,
    /// The source CRS citation (GeoTIFF inputs), if any.
    pub citation: Option<String>,
    /// SCS (X, Z) of the grid's north-west post.
    pub origin: [f64; 2],
}

/// `manifest.json`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    pub generator: String,
    pub input: String,
    pub map: String,
    pub georef: Georef,
    pub patch_size: f64,
    pub min_patch_size: f64,
    pub max_error: Option<f64>,
    pub material: String,
    pub patches: usize,
    /// Patch count per size (metres, as text).
    pub patches_by_size: BTreeMap<String, usize>,
    /// Fit error over every fitted post (each counted once): RMS and max |error| (metres).
    pub rms: f64,
    pub max: f64,
    pub posts: usize,
    pub worst_patch: PatchReport,
    /// With `--max-error`: whether every post is within it.
    pub max_error_held: Option<bool>,
    /// Patches of one post interval with C0 seams: the fallback where C1 patches cannot hold
    /// `--max-error` (the fit module's docs).
    #[serde(default)]
    pub c0_patches: usize,
    /// The patches that miss `--max-error` (worst first), each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over_max_error: Vec<MissReport>,
    pub sectors: Vec<String>,
    pub files: Vec<String>,
    pub seconds: Seconds,
}

#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Seconds {
    pub solve: f64,
    pub refine: f64,
    pub build_and_write: f64,
}

/// Round to fixed3 (1/256 m).
fn fixed(v: f64) -> i32 {
    (v * 256.0).round().clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32
}

/// Quads per axis for a patch of `size` m over posts `spacing` apart: one quad per post
/// interval (at least 1 m), at most 251 (tess ≤ 250, scs §B.6).
pub fn tessellation(size: f64, spacing: f64) -> u16 {
    let quads = (size / spacing.max(1.0)).round().clamp(1.0, 251.0) as u16;
    quads - 1
}

/// The item and node of one leaf. `x_w`, `z_n`: SCS west X and north Z of the patch.
pub fn build_patch(bez: &[[f64; 4]; 4], x_w: f64, z_n: f64, size: f64, tess: u16, material: Token, item_uid: u64, node_uid: u64) -> (BezierPatchItem, Node) {
    let mean = bez.iter().flatten().sum::<f64>() / 16.0;
    let pos = [fixed(x_w + size / 2.0), fixed(mean), fixed(z_n + size / 2.0)];
    let o = pos.map(|p| f64::from(p) / 256.0);
    let mut control = [[0f32; 3]; 16];
    let (mut lo, mut hi) = ([f64::INFINITY; 5], [f64::NEG_INFINITY; 5]);
    for iz in 0..4 {
        for ix in 0..4 {
            // iz steps south in SCS; the fit's rows step north.
            let (x, y, z) = (x_w + ix as f64 * size / 3.0, bez[3 - iz][ix], z_n + iz as f64 * size / 3.0);
            control[CONTROL_POINT_ORDER[iz][ix]] = [(x - o[0]) as f32, (y - o[1]) as f32, (z - o[2]) as f32];
            // k-DOP axes X, Y, Z, (X+Z)/2, (X−Z)/2: inferred from modeltest's Model item
            // (scs §B.4 leaves them undocumented); the control net bounds the surface.
            for (k, v) in [x, y, z, (x + z) / 2.0, (x - z) / 2.0].into_iter().enumerate() {
                lo[k] = lo[k].min(v);
                hi[k] = hi[k].max(v);
            }
        }
    }
    let item = BezierPatchItem {
        kdop: Kdop { uid: item_uid, min: lo.map(|v| v as f32), max: hi.map(|v| v as f32), flags: PATCH_FLAGS, view_distance: VIEW_DISTANCE },
        control,
        x_tess: tess,
        z_tess: tess,
        node: node_uid,
        rnd_seed: (item_uid & 0xffff_ffff) as u32,
        vegetation: [PatchVegetation::default(); 3],
        spheres: Vec::new(),
        quad: QuadInfo::uniform(material, tess + 1, tess + 1),
    };
    let node = Node { uid: node_uid, position: pos, rotation: [1.0, 0.0, 0.0, 0.0], backward_item: 0, forward_item: item_uid, flags: 0 };
    (item, node)
}

/// The result of [`export_map`].
pub struct Exported {
    pub manifest: Manifest,
    pub mbd: PathBuf,
    pub leaves: Vec<Leaf>,
}

/// Fit `heights` (row-major, row 0 = south, on `grid`) and write the map into `out_dir`.
pub fn export_map(heights: &[f32], grid: Grid, citation: Option<String>, input: &str, opts: &ExportOptions, out_dir: &Path) -> Result<Exported, ExportError> {
    let s = grid.spacing;
    let k = (opts.patch_m / s).round();
    if !(k >= 1.0 && (k * s - opts.patch_m).abs() <= 1e-6 * opts.patch_m.max(1.0)) {
        return Err(ExportError::Options(format!("--patch {} m is not a whole multiple of the grid spacing {s} m", opts.patch_m)));
    }
    if opts.name.is_empty() || !opts.name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-') {
        return Err(ExportError::Options(format!("--name `{}`: use letters, digits, `_` and `-`", opts.name)));
    }
    let k = k as usize;
    let min_patch_m = opts.min_patch_m.unwrap_or(4.0 * s);
    let min_posts = ((min_patch_m / s).ceil() as usize).max(2);
    let fg = FitGrid { cols: grid.cols as usize, rows: grid.rows as usize, h: heights };
    let mosaic = fit(fg, &FitOptions { patch_posts: k, max_error: opts.max_error, min_patch_posts: min_posts })?;
    // The base size the fit settled on (smaller than asked when that was needed to hold
    // --max-error, fit module docs).
    let k = mosaic.patch_posts;
    let t_build = std::time::Instant::now();
    let (rms, max, posts) = mosaic_error(fg, &mosaic, k);
    let fitted = Grid { cols: (mosaic.nx * k + 1) as u32, rows: (mosaic.nz * k + 1) as u32, x0: grid.x0, z0: grid.z0, spacing: s };
    let lz = (mosaic.nz * k) as f64 * s;
    let (ox, oz) = (opts.origin.0, opts.origin.1);

    let mut map = Map::new(&opts.name, UID_BASE);
    let mut by_size: BTreeMap<String, usize> = BTreeMap::new();
    let mut worst: Option<PatchReport> = None;
    for (i, l) in mosaic.leaves.iter().enumerate() {
        let size = l.n as f64 * s;
        let x_w = ox + l.c0 as f64 * s;
        let z_n = oz + (lz - (l.r0 + l.n) as f64 * s);
        let (item_uid, node_uid) = (UID_BASE | (2 * i as u64 + 1), UID_BASE | (2 * i as u64 + 2));
        let (item, node) = build_patch(&l.bez, x_w, z_n, size, tessellation(size, s), opts.material, item_uid, node_uid);
        let key = sector_of(x_w + size / 2.0, z_n + size / 2.0);
        let sector = map.sectors.entry(key).or_insert_with(|| Sector {
            base: Some(SectorFile::empty()),
            aux: Some(SectorFile::empty()),
            snd: None,
            data: Some(RawSectorFile::default_empty()),
            layer: Some(RawSectorFile::default_empty()),
            desc: Some(Desc::for_sector(key.0, key.1)),
        });
        let aux = sector.aux.as_mut().expect("aux is created with the sector");
        aux.items.push(Item::BezierPatch(item));
        aux.nodes.push(node);
        *by_size.entry(format!("{size}")).or_default() += 1;
        if worst.as_ref().is_none_or(|w| l.max > w.max) {
            worst = Some(PatchReport { uid: format!("0x{item_uid:016x}"), centre: [x_w + size / 2.0, z_n + size / 2.0], size, rms: l.rms, max: l.max });
        }
    }
    let mut over_max_error = Vec::new();
    if let Some(m) = opts.max_error {
        let mut over = mosaic.over(m);
        over.sort_by(|a, b| b.max.total_cmp(&a.max));
        for l in over {
            let i = mosaic.leaves.iter().position(|x| std::ptr::eq(x, l)).expect("a leaf of the mosaic");
            let size = l.n as f64 * s;
            let x_w = ox + l.c0 as f64 * s;
            let z_n = oz + (lz - (l.r0 + l.n) as f64 * s);
            let worst = [ox + l.worst_post.0 as f64 * s, oz + (lz - l.worst_post.1 as f64 * s)];
            let reason = if l.n / 2 < min_posts.max(2) || !l.n.is_multiple_of(2) {
                if l.worst_on_edge {
                    format!("at the smallest patch ({size} m), its worst post lies on an edge it shares with its neighbours, which the C1 mosaic fits jointly")
                } else {
                    format!("at the smallest patch ({size} m; --min-patch), no C1 bicubic follows the terrain there")
                }
            } else {
                "its worst post lies on an edge shared with its neighbours: a split keeps the edge, and smaller base patches did no better".to_string()
            };
            over_max_error.push(MissReport {
                uid: format!("0x{:016x}", UID_BASE | (2 * i as u64 + 1)),
                centre: [x_w + size / 2.0, z_n + size / 2.0],
                size,
                max: l.max,
                worst_post: worst,
                reason,
            });
        }
    }
    debug_assert!(map.sectors.values().all(|s| s.aux.as_ref().is_some_and(|a| a.items.iter().all(|i| i.type_code() == ITEM_BEZIER_PATCH))));
    std::fs::create_dir_all(out_dir).map_err(|error| ExportError::Io { path: out_dir.to_path_buf(), error })?;
    let written = map.save(out_dir)?;
    let manifest = Manifest {
        generator: format!("trnbake {} scs export", env!("CARGO_PKG_VERSION")),
        input: input.to_string(),
        map: format!("{}.mbd", opts.name),
        georef: Georef { grid: fitted, citation, origin: [ox, oz] },
        patch_size: k as f64 * s,
        min_patch_size: min_posts as f64 * s,
        max_error: opts.max_error,
        material: opts.material.to_string(),
        patches: mosaic.leaves.len(),
        patches_by_size: by_size,
        rms,
        max,
        posts,
        worst_patch: worst.expect("a mosaic has at least one patch"),
        max_error_held: opts.max_error.map(|_| over_max_error.is_empty()),
        c0_patches: mosaic.leaves.iter().filter(|l| l.c0_fallback).count(),
        over_max_error,
        sectors: map.sectors.keys().map(|&(x, z)| super::map::sector_stem(x, z)).collect(),
        files: written.iter().map(|p| p.strip_prefix(out_dir).unwrap_or(p).display().to_string()).collect(),
        seconds: Seconds { solve: mosaic.solve_seconds, refine: mosaic.refine_seconds, build_and_write: t_build.elapsed().as_secs_f64() },
    };
    let mpath = out_dir.join(MANIFEST);
    let json = serde_json::to_vec_pretty(&manifest).expect("manifest serialises");
    trnbake_raster::fsutil::write_atomic(&mpath, &json).map_err(|error| ExportError::Io { path: mpath, error })?;
    Ok(Exported { manifest, mbd: out_dir.join(format!("{}.mbd", opts.name)), leaves: mosaic.leaves })
}
