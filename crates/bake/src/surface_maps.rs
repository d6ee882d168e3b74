//! Surface maps of a baked height grid (swg-trn §5.2 steps 2–4, §5.9–§5.11; exports.md
//! §4.6–§4.7): normals, splat weights and shader ids, flora ids and probabilities per class,
//! water, environment, colour, exclusion, passability, SMAP rough-terrain chunks and a
//! shaded preview, written from a [`SurfaceGrid`] (evaluated by `trnbake_swg::surface::grid`
//! on the CPU or `trnbake_gpu::surface_pass`); every map is a grid of the bake's posts.

use trnbake_swg::surface::smap::smap_chunks;
use trnbake_swg::surface::supersample::flora_supersampled;
use trnbake_gpu::{GpuContext, GpuError};
use trnbake_swg::surface::grid::{evaluate, water_levels, PostSurface, SurfaceGrid};
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::{Ground, SurfaceEvaluator};
use trnbake_swg::eval::{Grid, HeightEvaluator};
use trnbake_raster::WrittenFile;
use trnbake_swg::plan::FLORA_CLASSES;
use trnbake_swg::model::Terrain;
use trnbake_swg::water::WaterTables;
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
    use trnbake_swg::plan::*;
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

/// The surface maps of a bake: what to write, and the plans and options to compute them with.
pub struct SurfaceMapsJob {
    pub terrain: Terrain,
    pub surface: SurfaceEvaluator,
    /// Map names from [`MAP_NAMES`], without `height`.
    pub maps: Vec<String>,
    pub normals: NormalMethod,
    /// The outputs' CRS name (`SWG NAME local metres`).
    pub citation: String,
    /// Flora maps read the mean over N × N sub-posts of each post's square (`bake
    /// --flora-supersample N`, on the CPU: [`trnbake_swg::surface::supersample`]); 1 reads
    /// the post alone.
    pub flora_supersample: u32,
}

/// What [`SurfaceMapsJob::run`] wrote, and on which backend (`"gpu"` or `"cpu"`) it computed
/// the surface passes.
pub struct SurfaceMapsOutput {
    pub files: Vec<WrittenFile>,
    pub backend: &'static str,
}

/// A surface grid and the backend that computed it.
pub struct SurfaceOnBackend {
    pub surface: SurfaceGrid,
    /// `"gpu"` or `"cpu"`.
    pub backend: &'static str,
    /// Why the CPU ran it although a GPU context was given (the kernels cannot compute these
    /// options exactly).
    pub cpu_because: Option<String>,
}

/// The surface passes on the backend that baked the heights: the GPU when there is a context
/// and its kernels compute the options exactly, else the CPU. The one place that falls back.
pub fn surface_on_backend(gpu: Option<&GpuContext>, grid: &Grid, heights: &[f32], he: &HeightEvaluator, se: &SurfaceEvaluator, normals: NormalMethod) -> crate::Result<SurfaceOnBackend> {
    let cpu = |why: Option<String>| SurfaceOnBackend { surface: evaluate(grid, heights, he, se, normals), backend: "cpu", cpu_because: why };
    match gpu.map(|ctx| trnbake_gpu::surface_pass::evaluate(ctx, grid, heights, he, se, normals)) {
        Some(Ok(surface)) => Ok(SurfaceOnBackend { surface, backend: "gpu", cpu_because: None }),
        Some(Err(GpuError::Unsupported(why))) => Ok(cpu(Some(why))),
        Some(Err(e)) => Err(e.into()),
        None => Ok(cpu(None)),
    }
}

impl SurfaceMapsJob {
    /// Computes the surface passes over the finished `heights` of `grid` (on the GPU when the
    /// heights were baked there) and writes every map into `outdir`.
    pub fn run(&self, outdir: &Path, grid: &Grid, heights: &[f32], he: &HeightEvaluator, gpu: Option<&GpuContext>, quiet: bool) -> crate::Result<SurfaceMapsOutput> {
        let on = surface_on_backend(gpu, grid, heights, he, &self.surface, self.normals)?;
        if let (Some(why), false) = (&on.cpu_because, quiet) {
            eprintln!("note: surface maps on the CPU: {}", GpuError::Unsupported(why.clone()));
        }
        let mut s = on.surface;
        // The water levels too, when a map shows them (the water maps, the preview's tint).
        if let (Some(ctx), "gpu") = (gpu, on.backend) {
            if self.maps.iter().any(|m| m == "water" || m == "preview") {
                s.water = Some(trnbake_gpu::water_pass::evaluate(ctx, grid, &WaterTables::new(&self.terrain))?);
            }
        }
        let flora_maps = ["flora", "flora_families", "scatter"].iter().any(|m| self.maps.iter().any(|x| x == m));
        let flora_chances = (self.flora_supersample > 1 && flora_maps).then(|| flora_supersampled(grid, he, &self.surface, self.normals, self.flora_supersample));
        for (r, chances) in s.results.iter_mut().zip(flora_chances.iter().flatten()) {
            r.flora = std::array::from_fn(|k| trnbake_swg::fidelity::most_likely(&chances[k]));
        }
        let inputs = MapInputs { terrain: &self.terrain, heights, height_evaluator: he, citation: &self.citation, flora_chances: flora_chances.as_deref() };
        let files = write_maps(outdir, &self.maps, &s, &self.surface, &inputs)?;
        Ok(SurfaceMapsOutput { files, backend: on.backend })
    }
}

/// Write an 8-bit PNG of `channels` (1 = grey, 3 = RGB, 4 = RGBA) from row-major-from-south
/// samples: image row 0 is the north edge, as every image viewer expects.
pub fn write_png8(path: &Path, cols: u32, rows: u32, channels: usize, data: &[u8]) -> io::Result<WrittenFile> {
    assert_eq!(data.len(), cols as usize * rows as usize * channels);
    let stride = cols as usize * channels;
    let north_first: Vec<u8> = data.chunks_exact(stride.max(1)).rev().flatten().copied().collect();
    // Maps such as normals and the preview are noisy: the fast deflate level costs a little
    // size and saves most of the write time.
    trnbake_raster::writers::png_image::write_png_image(path, cols, rows, channels as u32, false, trnbake_raster::writers::png_image::PngEffort::Fast, &north_first)?;
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
    /// Each post's flora chances when they come from sub-posts (`flora_supersample` > 1);
    /// `None`: the posts' own, re-walked.
    pub flora_chances: Option<&'a [ClassProbabilities]>,
}

/// Write the requested surface `maps` (names of [`MAP_NAMES`] other than `height`) into
/// `outdir`; returns the files written.
pub fn write_maps(outdir: &Path, maps: &[String], s: &SurfaceGrid, se: &SurfaceEvaluator, inp: &MapInputs) -> crate::Result<Vec<WrittenFile>> {
    use trnbake_raster::error::Context;
    let g = &s.grid;
    let (cols, rows) = (g.cols, g.rows);
    let n = cols as usize * rows as usize;
    let pg = Grid { cols, rows, x0: g.x0, z0: g.z0, spacing: g.spacing };
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
        files.push(trnbake_raster::write_geotiff_u16(&outdir.join("shader_id.tif"), &pg, &ids, inp.citation, 1.0, 0.0)?);
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
            files.push(trnbake_raster::write_geotiff_u16(&outdir.join(format!("flora_{name}_id.tif")), &pg, &ids, inp.citation, 1.0, 0.0)?);
            let probs: Vec<f32> = best.iter().map(|b| b.1).collect();
            files.push(trnbake_raster::write_png16(&outdir.join(format!("flora_{name}_density.png")), &pg, &probs, 1.0 / 65535.0, 0.0)?);
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
        let probs = inp.flora_chances.map_or_else(|| std::borrow::Cow::Owned(flora_probabilities(s, inp.heights, se)), std::borrow::Cow::Borrowed);
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
        files.push(trnbake_raster::write_geotiff_f32(&outdir.join("water_height.tif"), &pg, &levels, inp.citation)?);
        let mask: Vec<u8> = water_levels.iter().zip(inp.heights).map(|(w, h)| if w.is_some_and(|w| *h < w) { 255 } else { 0 }).collect();
        files.push(write_png8(&outdir.join("water_mask.png"), cols, rows, 1, &mask).context("cannot write water_mask.png")?);
    }
    if want("env") {
        let ids: Vec<f32> = s.results.iter().map(|r| r.environment.max(0) as f32).collect();
        files.push(trnbake_raster::write_geotiff_u16(&outdir.join("env_id.tif"), &pg, &ids, inp.citation, 1.0, 0.0)?);
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
        let (lo, hi) = trnbake_raster::finite_min_max(inp.heights).unwrap_or((0.0, 1.0));
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

/// Every family's placement probability at one post, per flora class: `[class] → [(family, probability)]`.
type ClassProbabilities = trnbake_swg::surface::supersample::FloraChances;

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
fn write_flora_family_maps(outdir: &Path, pg: &Grid, probs: &[ClassProbabilities]) -> crate::Result<Vec<WrittenFile>> {
    let mut files = Vec::new();
    for (class, name) in FLORA_CLASSES.iter().enumerate() {
        let mut families: Vec<i32> = probs.iter().flat_map(|p| p[class].iter().map(|e| e.0)).collect();
        families.sort_unstable();
        families.dedup();
        for f in families {
            let map: Vec<f32> = probs.iter().map(|p| p[class].iter().find(|e| e.0 == f).map_or(0.0, |e| e.1)).collect();
            files.push(trnbake_raster::write_png16(&outdir.join(format!("flora_{name}_family_{f}.png")), pg, &map, 1.0 / 65535.0, 0.0)?);
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
fn write_scatter(outdir: &Path, s: &SurfaceGrid, probs: &[ClassProbabilities], he: &HeightEvaluator, half: f32) -> crate::Result<Vec<WrittenFile>> {
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
        trnbake_raster::fsutil::write_atomic_with(&path, |w| {
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

fn write_smap(outdir: &Path, g: &Grid, inp: &MapInputs) -> crate::Result<Vec<WrittenFile>> {
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

fn write_json(path: &Path, v: &serde_json::Value) -> crate::Result<WrittenFile> {
    trnbake_raster::fsutil::write_atomic(path, serde_json::to_string_pretty(v)?.as_bytes())?;
    Ok(WrittenFile::of_file(path, "json")?)
}
