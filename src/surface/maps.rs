//! Surface maps of a baked height grid (swg-trn §5.2 steps 2–4, §5.9–§5.11; exports.md
//! §4.6–§4.7): normals, splat weights and shader ids, flora ids and probabilities per class,
//! water, environment, colour, exclusion, passability, SMAP rough-terrain chunks and a
//! shaded preview. The CPU reference; every map is a grid of the bake's posts.

use super::normals::{post_normal, NormalMethod};
use super::{Ground, SurfaceEvaluator, SurfaceResult};
use crate::eval::{Grid, HeightEvaluator};
use crate::export::{self, PostGrid, WrittenFile};
use crate::plan::FLORA_CLASSES;
use crate::swg::Terrain;
use crate::water::WaterTables;
use rayon::prelude::*;
use std::io;
use std::path::Path;

const CHANNELS: [&str; 4] = ["r", "g", "b", "a"];

/// Every map `bake --maps` knows, in the order they are written. `flora_families` (a
/// probability map per flora family) and `scatter` (instance points) are only written when
/// named.
pub const MAP_NAMES: [&str; 12] =
    ["height", "normals", "splat", "flora", "flora_families", "scatter", "water", "env", "color", "exclude", "smap", "preview"];

/// The maps the file uses (the default of `bake --maps`): height and normals always, the
/// preview always, and each other map when some rule or table feeds it.
pub fn default_maps(t: &Terrain, surface: &SurfaceEvaluator) -> Vec<String> {
    use crate::plan::*;
    let kinds: Vec<u32> = surface.plan.affectors.iter().map(|a| a.kind).collect();
    let has = |ks: &[u32]| kinds.iter().any(|k| ks.contains(k));
    let mut maps = vec!["height", "normals"];
    if has(&[AFFECTOR_SHADER_CONSTANT, AFFECTOR_SHADER_REPLACE, AFFECTOR_ROAD_SHADER]) {
        maps.push("splat");
    }
    if kinds.iter().any(|k| (AFFECTOR_FLORA_BASE..AFFECTOR_FLORA_BASE + 4).contains(k)) {
        maps.push("flora");
    }
    if WaterTables::new(t).has_any() {
        maps.push("water");
    }
    if has(&[AFFECTOR_ENVIRONMENT]) {
        maps.push("env");
    }
    if has(&[AFFECTOR_COLOR_CONSTANT, AFFECTOR_COLOR_RAMP_HEIGHT, AFFECTOR_COLOR_RAMP_FRACTAL]) {
        maps.push("color");
    }
    if has(&[AFFECTOR_EXCLUDE, AFFECTOR_PASSABLE]) {
        maps.push("exclude");
    }
    maps.push("preview");
    maps.into_iter().map(String::from).collect()
}

/// What the maps keep of one post's [`SurfaceResult`] (the flora stacks reduced to their
/// most likely family), so a grid costs ~90 bytes a post.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PostSurface {
    pub shader: i32,
    pub splat: [(i32, f32); super::SPLAT_LAYERS],
    /// Per flora class: (most likely family, its probability).
    pub flora: [(i32, f32); 4],
    pub environment: i32,
    pub color: [f32; 3],
    pub excluded: bool,
    pub passable: Option<u8>,
}

impl From<SurfaceResult> for PostSurface {
    fn from(r: SurfaceResult) -> Self {
        PostSurface {
            shader: r.shader.family,
            splat: r.shader.splat,
            flora: std::array::from_fn(|k| r.flora[k].most_likely()),
            environment: r.environment,
            color: r.color,
            excluded: r.excluded,
            passable: r.passable,
        }
    }
}

/// The per-post results of the surface passes over a grid, row-major from the south.
pub struct SurfaceGrid {
    pub grid: Grid,
    pub normals: Vec<[f32; 3]>,
    pub results: Vec<PostSurface>,
    /// The water surface height per post ([`WaterTables::height_at`]), when a backend has
    /// computed it already (the GPU's water pass); `None` leaves it to [`write_maps`], which
    /// computes it on the CPU where a map needs it.
    pub water: Option<Vec<Option<f32>>>,
}

/// Side of the blocks the surface pass culls its layer list for.
const BLOCK: u32 = 128;

/// Evaluate normals and both surface passes at every post of `grid`, given its finished
/// `heights` (row-major from the south).
pub fn evaluate(grid: &Grid, heights: &[f32], he: &HeightEvaluator, se: &SurfaceEvaluator, method: NormalMethod) -> SurfaceGrid {
    let normals = grid_normals(grid, heights, he, se.plan.half_width, method);
    let results = surface_results(grid, heights, &normals, se, PassSelection::Both);
    SurfaceGrid { grid: *grid, normals, results, water: None }
}

/// The unit normal of every post (swg-trn §5.2 step 2). Edge posts use heights one post
/// outside the grid, evaluated exactly (the 1-post apron).
pub fn grid_normals(grid: &Grid, heights: &[f32], he: &HeightEvaluator, half_width: f32, method: NormalMethod) -> Vec<[f32; 3]> {
    let (cols, rows) = (grid.cols as usize, grid.rows as usize);
    let padded = apron_heights(grid, heights, he);
    let (gc0, gr0) = global_post_index(grid, half_width);
    (0..rows * cols)
        .into_par_iter()
        .with_min_len(1024)
        .map(|i| {
            let (c, r) = (i % cols, i / cols);
            let mut h = [[0.0f32; 3]; 3];
            for (dz, hrow) in h.iter_mut().enumerate() {
                // Padded row r + dz is grid row r + dz − 1.
                let at = (r + dz) * (cols + 2) + c;
                hrow.copy_from_slice(&padded[at..at + 3]);
            }
            post_normal(method, &h, grid.spacing as f32, gc0 + c as i64, gr0 + r as i64)
        })
        .collect()
}

/// The grid's heights with a 1-post apron: (cols + 2) × (rows + 2) posts, row-major from the
/// south, padded row/column 0 being grid row/column −1. The apron ring comes from the height
/// pass (exact heights one post outside the grid).
pub fn apron_heights(grid: &Grid, heights: &[f32], he: &HeightEvaluator) -> Vec<f32> {
    let (cols, rows) = (grid.cols as usize, grid.rows as usize);
    assert_eq!(heights.len(), cols * rows);
    let mut ring = Vec::new();
    for c in -1..=cols as i64 {
        ring.push((c, -1));
        ring.push((c, rows as i64));
    }
    for r in 0..rows as i64 {
        ring.push((-1, r));
        ring.push((cols as i64, r));
    }
    let ring_points: Vec<(f32, f32)> = ring
        .iter()
        .map(|&(c, r)| (grid.x0 as f32 + c as f32 * grid.spacing as f32, grid.z0 as f32 + r as f32 * grid.spacing as f32))
        .collect();
    let ring_heights = he.heights_at(&ring_points);
    let stride = cols + 2;
    let mut padded = vec![0.0f32; stride * (rows + 2)];
    for (r, row) in heights.chunks_exact(cols.max(1)).enumerate().take(rows) {
        padded[(r + 1) * stride + 1..(r + 1) * stride + 1 + cols].copy_from_slice(row);
    }
    for (&(c, r), h) in ring.iter().zip(ring_heights) {
        padded[(r + 1) as usize * stride + (c + 1) as usize] = h;
    }
    padded
}

/// Global post indices of the grid's first post, counted from the map's south-west edge:
/// they fix the quad diagonals of the normals (swg-trn §5.1).
pub fn global_post_index(grid: &Grid, half_width: f32) -> (i64, i64) {
    let half = f64::from(half_width);
    (((grid.x0 + half) / grid.spacing).round() as i64, ((grid.z0 + half) / grid.spacing).round() as i64)
}

/// Which traversals [`surface_results`] runs (the benchmark times them apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassSelection {
    /// The shader pass only (swg-trn §5.2 step 3).
    Shader,
    /// The shader pass, then the flora / environment / colour / exclude / passable pass.
    Both,
}

/// Both surface passes (or the shader pass alone) at every post, in parallel blocks with
/// their own culled layer lists.
pub fn surface_results(grid: &Grid, heights: &[f32], normals: &[[f32; 3]], se: &SurfaceEvaluator, passes: PassSelection) -> Vec<PostSurface> {
    let cols = grid.cols as usize;
    let mut results = vec![PostSurface::default(); cols * grid.rows as usize];
    let blocks: Vec<(u32, u32)> = (0..grid.rows).step_by(BLOCK as usize).flat_map(|r| (0..grid.cols).step_by(BLOCK as usize).map(move |c| (c, r))).collect();
    let computed: Vec<((u32, u32), Vec<PostSurface>)> = blocks
        .par_iter()
        .map(|&(c0, r0)| {
            let (c1, r1) = ((c0 + BLOCK).min(grid.cols) - 1, (r0 + BLOCK).min(grid.rows) - 1);
            let block = se.grid_block(grid, c0, r0, c1, r1);
            let mut out = Vec::with_capacity(((c1 - c0 + 1) * (r1 - r0 + 1)) as usize);
            for r in r0..=r1 {
                for c in c0..=c1 {
                    let i = r as usize * cols + c as usize;
                    let ground = Ground { height: heights[i], normal: normals[i] };
                    out.push(match passes {
                        PassSelection::Both => se.at_grid_post(&block, c, r, ground).into(),
                        PassSelection::Shader => {
                            let s = se.shader_at_grid_post(&block, c, r, ground);
                            PostSurface { shader: s.family, splat: s.splat, ..Default::default() }
                        }
                    });
                }
            }
            ((c0, r0), out)
        })
        .collect();
    for ((c0, r0), out) in computed {
        let w = ((c0 + BLOCK).min(grid.cols) - c0) as usize;
        for (k, res) in out.into_iter().enumerate() {
            let (dc, dr) = (k % w, k / w);
            results[(r0 as usize + dr) * cols + c0 as usize + dc] = res;
        }
    }
    results
}

/// Write an 8-bit PNG of `channels` (1 = grey, 3 = RGB, 4 = RGBA) from row-major-from-south
/// samples: image row 0 is the north edge, as every image viewer expects.
pub fn write_png8(path: &Path, cols: u32, rows: u32, channels: usize, data: &[u8]) -> io::Result<WrittenFile> {
    assert_eq!(data.len(), cols as usize * rows as usize * channels);
    let stride = cols as usize * channels;
    let north_first: Vec<u8> = data.chunks_exact(stride.max(1)).rev().flatten().copied().collect();
    // Maps such as normals and the preview are noisy: the fast deflate level costs a little
    // size and saves most of the write time.
    crate::export::png_image::write_png_image(path, cols, rows, channels as u32, false, crate::export::png_image::PngEffort::Fast, &north_first)?;
    WrittenFile::of_file(path, if channels == 1 { "png8" } else if channels == 3 { "png-rgb8" } else { "png-rgba8" })
}

/// Splat weights of one post for `families` (the splat channels), summing to 255 where the
/// post has any shader (largest-remainder rounding), all 0 elsewhere.
pub fn splat_bytes(r: &PostSurface, families: &[i32]) -> Vec<u8> {
    let total: f32 = r.splat.iter().filter(|e| e.0 != 0).map(|e| e.1).sum();
    let mut out = vec![0u8; families.len()];
    if total <= 0.0 {
        return out;
    }
    let shares: Vec<f32> = families
        .iter()
        .map(|f| r.splat.iter().filter(|e| e.0 == *f).map(|e| e.1).sum::<f32>() / total * 255.0)
        .collect();
    let mut given = 0u32;
    for (o, s) in out.iter_mut().zip(&shares) {
        *o = s.floor() as u8;
        given += u32::from(*o);
    }
    let mut order: Vec<usize> = (0..shares.len()).collect();
    order.sort_by(|&a, &b| (shares[b] - shares[b].floor()).total_cmp(&(shares[a] - shares[a].floor())).then(a.cmp(&b)));
    for &k in order.iter().take(255u32.saturating_sub(given) as usize) {
        out[k] += 1;
    }
    out
}

/// A hillshade value in [0, 1] for a unit normal: light from the north-west at 45°.
pub fn hillshade(n: [f32; 3]) -> f32 {
    let l = [-0.5f32, std::f32::consts::FRAC_1_SQRT_2, 0.5];
    (n[0] * l[0] + n[1] * l[1] + n[2] * l[2]).clamp(0.0, 1.0)
}

/// What [`write_maps`] needs besides the surface grid.
pub struct MapInputs<'a> {
    pub terrain: &'a Terrain,
    pub heights: &'a [f32],
    pub height_evaluator: &'a HeightEvaluator,
    pub citation: &'a str,
}

/// Write the requested surface `maps` (names of [`MAP_NAMES`] other than `height`) into
/// `outdir`; returns the files written.
pub fn write_maps(outdir: &Path, maps: &[String], s: &SurfaceGrid, se: &SurfaceEvaluator, inp: &MapInputs) -> anyhow::Result<Vec<WrittenFile>> {
    use anyhow::Context;
    let g = &s.grid;
    let (cols, rows) = (g.cols, g.rows);
    let n = cols as usize * rows as usize;
    let pg = PostGrid { cols, rows, west_x: g.x0, south_z: g.z0, spacing: g.spacing };
    let want = |m: &str| maps.iter().any(|x| x == m);
    let mut files = Vec::new();
    let generator = &inp.terrain.generator;

    if want("normals") {
        let bytes: Vec<u8> = s.normals.iter().flat_map(|v| [v[0], v[2], v[1]].map(|c| ((c * 0.5 + 0.5) * 255.0).round() as u8)).collect();
        files.push(write_png8(&outdir.join("normals.png"), cols, rows, 3, &bytes).context("cannot write normals.png")?);
    }
    if want("splat") {
        // Channels: every shader family that claims some post, by id.
        let mut families: Vec<i32> = s.results.iter().flat_map(|r| r.splat.iter().filter(|e| e.0 != 0 && e.1 > 0.0).map(|e| e.0)).collect();
        families.sort_unstable();
        families.dedup();
        let ids: Vec<f32> = s.results.iter().map(|r| r.shader.max(0) as f32).collect();
        files.push(export::write_geotiff_u16(&outdir.join("shader_id.tif"), &pg, &ids, inp.citation, 1.0, 0.0)?);
        let mut legend = Vec::new();
        for (k, chunk) in families.chunks(4).enumerate() {
            let mut bytes = Vec::with_capacity(n * 4);
            for r in &s.results {
                let w = splat_bytes(r, &families);
                let base = k * 4;
                for ch in 0..4 {
                    bytes.push(if ch < chunk.len() { w[base + ch] } else { 0 });
                }
            }
            let name = format!("splat_{k}.png");
            files.push(write_png8(&outdir.join(&name), cols, rows, 4, &bytes).with_context(|| format!("cannot write {name}"))?);
            for (ch, f) in chunk.iter().enumerate() {
                let fam = generator.shader_families.families().iter().find(|x| x.id == *f);
                legend.push(serde_json::json!({
                    "image": name, "channel": CHANNELS[ch], "family_id": f,
                    "name": fam.map(|x| x.name.clone()), "surface_properties": fam.map(|x| x.surface_properties.clone()),
                    "color": fam.map(|x| x.color), "shaders": fam.map(|x| x.children.iter().map(|c| c.name.clone()).collect::<Vec<_>>()),
                }));
            }
        }
        files.push(write_json(&outdir.join("splat_legend.json"), &serde_json::json!({ "channels": legend, "weights": "per post, summing to 255 where a shader applies" }))?);
    }
    if want("flora") {
        let mut legend = serde_json::Map::new();
        for (class, name) in FLORA_CLASSES.iter().enumerate() {
            let best: Vec<(i32, f32)> = s.results.iter().map(|r| r.flora[class]).collect();
            let ids: Vec<f32> = best.iter().map(|b| b.0.max(0) as f32).collect();
            files.push(export::write_geotiff_u16(&outdir.join(format!("flora_{name}_id.tif")), &pg, &ids, inp.citation, 1.0, 0.0)?);
            let probs: Vec<f32> = best.iter().map(|b| b.1).collect();
            files.push(export::write_png16(&outdir.join(format!("flora_{name}_density.png")), &pg, &probs, 1.0 / 65535.0, 0.0)?);
            let mut used: Vec<i32> = ids.iter().map(|&i| i as i32).filter(|&i| i != 0).collect();
            used.sort_unstable();
            used.dedup();
            let entries: Vec<serde_json::Value> = used
                .iter()
                .map(|id| {
                    let (fname, density) = if class < 2 {
                        generator.flora_families.families().iter().find(|f| f.id == *id).map(|f| (f.name.clone(), f.density)).unzip()
                    } else {
                        generator.radial_families.families().iter().find(|f| f.id == *id).map(|f| (f.name.clone(), f.density)).unzip()
                    };
                    serde_json::json!({ "family_id": id, "name": fname, "density": density })
                })
                .collect();
            legend.insert(name.to_string(), serde_json::Value::Array(entries));
        }
        files.push(write_json(
            &outdir.join("flora_legend.json"),
            &serde_json::json!({ "classes": legend, "density_png": "placement probability of the most likely family, 0..65535 = 0..1 (swg-trn §5.9 stack reading)" }),
        )?);
    }
    if want("flora_families") || want("scatter") {
        let probs = flora_probabilities(s, inp.heights, se);
        if want("flora_families") {
            files.extend(write_flora_family_maps(outdir, &pg, &probs)?);
        }
        if want("scatter") {
            files.extend(write_scatter(outdir, s, &probs, inp.height_evaluator, se.plan.half_width)?);
        }
    }
    let water_levels: Vec<Option<f32>> = match &s.water {
        _ if !(want("water") || want("preview")) => Vec::new(),
        Some(levels) => {
            assert_eq!(levels.len(), n, "one water level a post");
            levels.clone()
        }
        None => water_levels(g, &WaterTables::new(inp.terrain)),
    };
    if want("water") {
        let levels: Vec<f32> = water_levels.iter().map(|w| w.unwrap_or(f32::NAN)).collect();
        files.push(export::write_geotiff_f32(&outdir.join("water_height.tif"), &pg, &levels, inp.citation)?);
        let mask: Vec<u8> = water_levels.iter().zip(inp.heights).map(|(w, h)| if w.is_some_and(|w| *h < w) { 255 } else { 0 }).collect();
        files.push(write_png8(&outdir.join("water_mask.png"), cols, rows, 1, &mask).context("cannot write water_mask.png")?);
    }
    if want("env") {
        let ids: Vec<f32> = s.results.iter().map(|r| r.environment.max(0) as f32).collect();
        files.push(export::write_geotiff_u16(&outdir.join("env_id.tif"), &pg, &ids, inp.citation, 1.0, 0.0)?);
    }
    if want("color") {
        let bytes: Vec<u8> = s.results.iter().flat_map(|r| r.color.map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8)).collect();
        files.push(write_png8(&outdir.join("color.png"), cols, rows, 3, &bytes).context("cannot write color.png")?);
    }
    if want("exclude") {
        let ex: Vec<u8> = s.results.iter().map(|r| if r.excluded { 255 } else { 0 }).collect();
        files.push(write_png8(&outdir.join("exclude.png"), cols, rows, 1, &ex).context("cannot write exclude.png")?);
        let pass: Vec<u8> = s.results.iter().map(|r| if r.passable.unwrap_or(1) != 0 { 255 } else { 0 }).collect();
        files.push(write_png8(&outdir.join("passable.png"), cols, rows, 1, &pass).context("cannot write passable.png")?);
    }
    if want("smap") {
        files.extend(write_smap(outdir, g, inp)?);
    }
    if want("preview") {
        let (lo, hi) = export::finite_min_max(inp.heights).unwrap_or((0.0, 1.0));
        let span = (hi - lo).max(1e-3);
        let colors: std::collections::HashMap<i32, [u8; 3]> = generator.shader_families.families().iter().map(|f| (f.id, f.color)).collect();
        let bytes: Vec<u8> = (0..n)
            .into_par_iter()
            .flat_map_iter(|i| {
                let shade = 0.35 + 0.65 * hillshade(s.normals[i]);
                let h = inp.heights[i];
                let base = match colors.get(&s.results[i].shader) {
                    Some(c) => c.map(|v| f32::from(v) / 255.0),
                    // Height tint: low sand → high grey-brown.
                    None => {
                        let u = ((h - lo) / span).clamp(0.0, 1.0);
                        [0.78 - 0.3 * u, 0.70 - 0.3 * u, 0.52 - 0.2 * u]
                    }
                };
                let mut rgb = base.map(|c| c * shade);
                if water_levels.get(i).copied().flatten().is_some_and(|w| h < w) {
                    rgb = [0.12, 0.30, 0.55].map(|c| c * (0.8 + 0.2 * shade));
                }
                rgb.map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8)
            })
            .collect();
        files.push(write_png8(&outdir.join("preview.png"), cols, rows, 3, &bytes).context("cannot write preview.png")?);
    }
    let _ = se;
    Ok(files)
}

/// The water surface height at every post of `grid`, row-major from the south, on the CPU
/// (the reference of `crate::gpu::water`).
pub fn water_levels(g: &Grid, water: &WaterTables) -> Vec<Option<f32>> {
    let cols = g.cols as usize;
    (0..cols * g.rows as usize)
        .into_par_iter()
        .map(|i| {
            let (x, z) = g.post((i % cols) as u32, (i / cols) as u32);
            water.height_at(x, z)
        })
        .collect()
}

/// Every family's placement probability at one post, per flora class: `[class] → [(family, probability)]`.
type ClassProbabilities = [Vec<(i32, f32)>; 4];

/// Every family's placement probability per post and flora class (swg-trn §5.9 stack
/// reading), re-walking the later pass.
fn flora_probabilities(s: &SurfaceGrid, heights: &[f32], se: &SurfaceEvaluator) -> Vec<ClassProbabilities> {
    let g = &s.grid;
    let cols = g.cols as usize;
    let rows: Vec<Vec<ClassProbabilities>> = (0..g.rows)
        .into_par_iter()
        .map(|r| {
            let block = se.grid_block(g, 0, r, g.cols - 1, r);
            (0..g.cols)
                .map(|c| {
                    let i = r as usize * cols + c as usize;
                    let res = se.at_grid_post(&block, c, r, Ground { height: heights[i], normal: s.normals[i] });
                    std::array::from_fn(|k| res.flora[k].probabilities())
                })
                .collect()
        })
        .collect();
    rows.into_iter().flatten().collect()
}

/// `flora_<class>_family_<id>.png`: each family's placement probability (16-bit, 0..65535 =
/// 0..1), for every family that can be placed somewhere in the grid.
fn write_flora_family_maps(outdir: &Path, pg: &PostGrid, probs: &[ClassProbabilities]) -> anyhow::Result<Vec<WrittenFile>> {
    let mut files = Vec::new();
    for (class, name) in FLORA_CLASSES.iter().enumerate() {
        let mut families: Vec<i32> = probs.iter().flat_map(|p| p[class].iter().map(|e| e.0)).collect();
        families.sort_unstable();
        families.dedup();
        for f in families {
            let map: Vec<f32> = probs.iter().map(|p| p[class].iter().find(|e| e.0 == f).map_or(0.0, |e| e.1)).collect();
            files.push(export::write_png16(&outdir.join(format!("flora_{name}_family_{f}.png")), pg, &map, 1.0 / 65535.0, 0.0)?);
        }
    }
    Ok(files)
}

/// A uniform number in [0, 1) from a post's global indices and a stream (SplitMix64), so a
/// post scatters the same way whichever grid or tile holds it.
fn post_random(gc: i64, gr: i64, stream: u64) -> f64 {
    let mut z = (gc as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (gr as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F) ^ stream.wrapping_mul(0x1656_67B1_9E37_79F9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// `flora_<class>_points.csv` (`x,z,height,family_id`): a deterministic scatter from the
/// probabilities — each post's cell (one spacing wide, centred on the post) holds at most one
/// instance, of family k with probability P(k), at a jittered position in the cell, with the
/// exact ground height there. Not the original client's placement (swg-trn §5.9: its seeds
/// are not public), but the same densities.
fn write_scatter(outdir: &Path, s: &SurfaceGrid, probs: &[ClassProbabilities], he: &HeightEvaluator, half: f32) -> anyhow::Result<Vec<WrittenFile>> {
    let g = &s.grid;
    let cols = g.cols as usize;
    let gc0 = ((g.x0 + f64::from(half)) / g.spacing).round() as i64;
    let gr0 = ((g.z0 + f64::from(half)) / g.spacing).round() as i64;
    let mut files = Vec::new();
    for (class, name) in FLORA_CLASSES.iter().enumerate() {
        let points: Vec<(f32, f32, i32)> = (0..probs.len())
            .into_par_iter()
            .filter_map(|i| {
                let (c, r) = ((i % cols) as i64, (i / cols) as i64);
                let (gc, gr) = (gc0 + c, gr0 + r);
                let stream = class as u64 * 3;
                let u = post_random(gc, gr, stream);
                let mut acc = 0.0f64;
                let family = probs[i][class].iter().find(|e| {
                    acc += f64::from(e.1);
                    u < acc
                })?;
                let (x, z) = g.post(c as u32, r as u32);
                let jx = (post_random(gc, gr, stream + 1) - 0.5) * g.spacing;
                let jz = (post_random(gc, gr, stream + 2) - 0.5) * g.spacing;
                let inside = |v: f32| v.clamp(-half, half);
                Some((inside(x + jx as f32), inside(z + jz as f32), family.0))
            })
            .collect();
        let heights = he.heights_at(&points.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>());
        let path = outdir.join(format!("flora_{name}_points.csv"));
        crate::fsutil::write_atomic_with(&path, |w| {
            use std::io::Write;
            writeln!(w, "x,z,height,family_id")?;
            for (p, h) in points.iter().zip(&heights) {
                writeln!(w, "{:.3},{:.3},{:.4},{}", p.0, p.1, h, p.2)?;
            }
            Ok(())
        })?;
        files.push(WrittenFile::of_file(&path, "csv")?);
    }
    Ok(files)
}

/// The SMAP rough-terrain rule of swg-trn §2.3 over the 8 m chunks that lie inside the grid:
/// a chunk is rough when its 3×3 tile-corner posts (4 m apart) span more than 4 m.
/// Returns (chunk cols, chunk rows, west x, south z, bits, row-major from the south).
pub fn smap_chunks(g: &Grid, he: &HeightEvaluator, half: f32) -> (u32, u32, f64, f64, Vec<bool>) {
    let chunk = 8.0f64;
    let half = f64::from(half);
    let x1 = g.x0 + f64::from(g.cols.saturating_sub(1)) * g.spacing;
    let z1 = g.z0 + f64::from(g.rows.saturating_sub(1)) * g.spacing;
    let c0 = ((g.x0 + half) / chunk).ceil() as i64;
    let r0 = ((g.z0 + half) / chunk).ceil() as i64;
    let c1 = ((x1 + half) / chunk - 1.0).floor() as i64;
    let r1 = ((z1 + half) / chunk - 1.0).floor() as i64;
    let (cc, rr) = ((c1 - c0 + 1).max(0) as u32, (r1 - r0 + 1).max(0) as u32);
    let west = -half + c0 as f64 * chunk;
    let south = -half + r0 as f64 * chunk;
    let bits: Vec<bool> = (0..cc as usize * rr as usize)
        .into_par_iter()
        .with_min_len(64)
        .map(|i| {
            let (c, r) = ((i % cc as usize) as f64, (i / cc as usize) as f64);
            let corners = smap_corner_points((west + c * chunk) as f32, (south + r * chunk) as f32, chunk as f32);
            smap_rough(&corners.map(|(x, z)| he.height_at(x, z)))
        })
        .collect();
    (cc, rr, west, south, bits)
}

/// The 3×3 tile-corner posts of the chunk with south-west corner (x0, z0) (swg-trn §2.3).
pub fn smap_corner_points(x0: f32, z0: f32, chunk_width: f32) -> [(f32, f32); 9] {
    std::array::from_fn(|i| (x0 + (i % 3) as f32 * chunk_width * 0.5, z0 + (i / 3) as f32 * chunk_width * 0.5))
}

/// The SMAP rule (swg-trn §2.3): rough when the corner heights span more than 4 m.
pub fn smap_rough(corner_heights: &[f32]) -> bool {
    let lo = corner_heights.iter().copied().fold(f32::MAX, f32::min);
    let hi = corner_heights.iter().copied().fold(f32::MIN, f32::max);
    hi - lo > 4.0
}

fn write_smap(outdir: &Path, g: &Grid, inp: &MapInputs) -> anyhow::Result<Vec<WrittenFile>> {
    let (cc, rr, west, south, bits) = smap_chunks(g, inp.height_evaluator, inp.height_evaluator.plan.half_width);
    if cc == 0 || rr == 0 {
        return Ok(Vec::new());
    }
    let bytes: Vec<u8> = bits.iter().map(|&b| if b { 255 } else { 0 }).collect();
    let png = write_png8(&outdir.join("smap.png"), cc, rr, 1, &bytes)?;
    let meta = serde_json::json!({
        "map": "smap.png", "chunk_metres": 8.0, "cols": cc, "rows": rr,
        "west_x": west, "south_z": south,
        "rule": "255 where the 3x3 tile-corner posts (4 m apart) of the 8 m chunk span more than 4 m (swg-trn §2.3)",
    });
    Ok(vec![png, write_json(&outdir.join("smap.json"), &meta)?])
}

fn write_json(path: &Path, v: &serde_json::Value) -> anyhow::Result<WrittenFile> {
    crate::fsutil::write_atomic(path, serde_json::to_string_pretty(v)?.as_bytes())?;
    Ok(WrittenFile::of_file(path, "json")?)
}
