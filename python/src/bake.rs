//! The bake of the Python package, in plain Rust (no Python objects, so it runs with the GIL
//! released and its unit tests need no interpreter): the grid the command line would bake,
//! its heights, and the surface maps as the command line computes them, each an array of
//! posts with the north row first.

use trnbake_swg::eval::{HeightEvaluator, CPU_CULL_BLOCK};
use trnbake_swg::grid::{post_count, Grid};
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::FLORA_CLASSES;
use trnbake_swg::report::{Progress, Reporter};
use trnbake_swg::surface::grid::{evaluate, water_levels, PostSurface};
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::SurfaceEvaluator;
use trnbake_swg::water::WaterTables;

/// The map names `Terrain.bake(maps=…)` takes, in the order their arrays are made.
pub const MAP_NAMES: [&str; 8] = ["height", "normals", "splat", "flora", "water", "env", "color", "exclude"];

/// The grid of a bake of `region` (west, south, east, north; world metres) at `spacing`, as
/// `trnbake bake --region … --spacing …` places it: the first post on the south-west corner,
/// the last ones at or before the east and north bounds.
pub fn bake_grid(region: [f64; 4], spacing: f64) -> Result<Grid, String> {
    // The command line's post count (`trnbake_swg::grid::post_count`).
    let cols = post_count(region[0], region[2], spacing).map_err(|e| e.0)?;
    let rows = post_count(region[1], region[3], spacing).map_err(|e| e.0)?;
    Ok(Grid { cols, rows, x0: region[0], z0: region[1], spacing })
}

/// The GDAL geotransform of the grid's rasters: the command line writes its GeoTIFFs as
/// PixelIsPoint with post (0, 0) at the north-west post, which GDAL reports as pixel corners
/// half a post to the north-west (GDAL's default reading of PixelIsPoint).
pub fn geotransform(g: &Grid) -> [f64; 6] {
    let half = g.spacing / 2.0;
    [g.x0 - half, g.spacing, 0.0, g.north_z() + half, 0.0, -g.spacing]
}

/// The samples of one output array.
pub enum Samples {
    F32(Vec<f32>),
    I32(Vec<i32>),
    U8(Vec<u8>),
    Bool(Vec<bool>),
}

/// One output array: its name, its shape (rows, cols[, channels]) and samples, north row
/// first.
pub struct MapArray {
    pub name: String,
    pub shape: Vec<usize>,
    pub samples: Samples,
}

/// Values of a grid given row-major from the south (as every evaluator makes them),
/// re-ordered north row first (as GeoTIFF, numpy images and the CLI's files have them);
/// `per_post` values a post.
pub fn north_first<T: Copy>(south_first: &[T], cols: usize, per_post: usize) -> Vec<T> {
    let stride = (cols * per_post).max(1);
    south_first.chunks_exact(stride).rev().flatten().copied().collect()
}

/// What a bake computes: the heights, and the surface maps named in `maps` (names of
/// [`MAP_NAMES`]).
pub struct BakeInputs<'a> {
    pub terrain: &'a Terrain,
    pub heights: &'a HeightEvaluator,
    /// Needed when `maps` names a surface map.
    pub surface: Option<&'a SurfaceEvaluator>,
    pub grid: Grid,
    pub maps: &'a [String],
    /// Told the progress: the heights in posts (`height`), then the surface maps in steps.
    pub reporter: &'a dyn Reporter,
}

/// The result of [`run`]: the arrays, and the shader families of the `splat_weights`
/// channels (in channel order).
pub struct BakeOutput {
    pub arrays: Vec<MapArray>,
    pub splat_families: Vec<i32>,
}

/// Bakes the heights of the grid (the CPU backend's whole-grid pass, bit for bit what
/// `trnbake bake --backend cpu` writes), then the surface maps asked for.
pub fn run(inp: &BakeInputs) -> BakeOutput {
    let g = inp.grid;
    let (cols, rows) = (g.cols as usize, g.rows as usize);
    let want = |m: &str| inp.maps.iter().any(|x| x == m);
    let heights = grid_heights(inp.heights, &g, inp.reporter);
    let mut arrays = Vec::new();
    let mut splat_families = Vec::new();
    let plane = |name: &str, samples: Samples| MapArray { name: name.into(), shape: vec![rows, cols], samples };
    let f32s = |v: Vec<f32>| Samples::F32(north_first(&v, cols, 1));
    let i32s = |v: Vec<i32>| Samples::I32(north_first(&v, cols, 1));
    let bools = |v: Vec<bool>| Samples::Bool(north_first(&v, cols, 1));

    let surface_maps = ["normals", "splat", "flora", "env", "color", "exclude"];
    let surface = match inp.surface {
        Some(se) if surface_maps.iter().any(|m| want(m)) => {
            let p = Progress::new(inp.reporter, 1, "steps", "surface maps");
            let s = evaluate(&g, &heights, inp.heights, se, NormalMethod::default());
            p.inc(1);
            p.finish();
            Some(s)
        }
        _ => None,
    };
    if want("height") {
        arrays.push(plane("height", f32s(heights.clone())));
    }
    if let Some(s) = &surface {
        let res = &s.results;
        let map = |f: &dyn Fn(&PostSurface) -> i32| res.iter().map(f).collect::<Vec<i32>>();
        if want("normals") {
            let v: Vec<f32> = s.normals.iter().flatten().copied().collect();
            arrays.push(MapArray { name: "normals".into(), shape: vec![rows, cols, 3], samples: Samples::F32(north_first(&v, cols, 3)) });
        }
        if want("splat") {
            // As shader_id.tif: the family id, 0 where no shader applies.
            arrays.push(plane("shader_id", i32s(map(&|r| r.shader.max(0)))));
            // The channels of the CLI's splat_N.png: every shader family that claims some post.
            let mut families: Vec<i32> = res.iter().flat_map(|r| r.splat.iter().filter(|e| e.0 != 0 && e.1 > 0.0).map(|e| e.0)).collect();
            families.sort_unstable();
            families.dedup();
            let mut w = Vec::with_capacity(res.len() * families.len());
            for r in res {
                w.extend(splat_weights(r, &families));
            }
            arrays.push(MapArray {
                name: "splat_weights".into(),
                shape: vec![rows, cols, families.len()],
                samples: Samples::F32(north_first(&w, cols, families.len())),
            });
            splat_families = families;
        }
        if want("flora") {
            for (class, name) in FLORA_CLASSES.iter().enumerate() {
                arrays.push(plane(&format!("flora_{name}_id"), i32s(map(&|r| r.flora[class].0.max(0)))));
                let p: Vec<f32> = res.iter().map(|r| r.flora[class].1).collect();
                arrays.push(plane(&format!("flora_{name}_density"), f32s(p)));
            }
        }
        if want("env") {
            arrays.push(plane("env_id", i32s(map(&|r| r.environment.max(0)))));
        }
        if want("color") {
            let v: Vec<u8> = res.iter().flat_map(|r| r.color.map(|c| (c.clamp(0.0, 1.0) * 255.0).round() as u8)).collect();
            arrays.push(MapArray { name: "color".into(), shape: vec![rows, cols, 3], samples: Samples::U8(north_first(&v, cols, 3)) });
        }
        if want("exclude") {
            arrays.push(plane("exclude", bools(res.iter().map(|r| r.excluded).collect())));
            // As passable.png: a post without a passable rule is passable.
            arrays.push(plane("passable", bools(res.iter().map(|r| r.passable.unwrap_or(1) != 0).collect())));
        }
    }
    if want("water") {
        let levels = water_levels(&g, &WaterTables::new(inp.terrain));
        let mask: Vec<bool> = levels.iter().zip(&heights).map(|(w, h)| w.is_some_and(|w| *h < w)).collect();
        arrays.push(plane("water_height", f32s(levels.iter().map(|w| w.unwrap_or(f32::NAN)).collect())));
        arrays.push(plane("water_mask", bools(mask)));
    }
    BakeOutput { arrays, splat_families }
}

/// The heights of `grid` as [`HeightEvaluator::grid_heights`] computes them (bands of whole
/// culling blocks, so the same blocks, bit for bit), a band at a time for the progress.
fn grid_heights(e: &HeightEvaluator, g: &Grid, reporter: &dyn Reporter) -> Vec<f32> {
    let mut out = vec![0.0f32; g.len()];
    let p = Progress::new(reporter, g.len() as u64, "posts", "height");
    // About a million posts a band, in whole blocks of rows.
    let band = ((1u64 << 20) / u64::from(g.cols.max(1)) / u64::from(CPU_CULL_BLOCK)).max(1) as u32 * CPU_CULL_BLOCK;
    for (k, chunk) in out.chunks_mut((g.cols as usize * band as usize).max(1)).enumerate() {
        let rows = (chunk.len() / g.cols as usize) as u32;
        e.grid_region(g, 0, k as u32 * band, g.cols, rows, CPU_CULL_BLOCK, chunk);
        p.inc(chunk.len() as u64);
    }
    p.finish();
    out
}

/// The splat weights of one post for `families`, summing to 1 where the post has any shader,
/// all 0 elsewhere: the shares the CLI's `splat_N.png` rounds to bytes summing to 255.
pub(crate) fn splat_weights(r: &PostSurface, families: &[i32]) -> Vec<f32> {
    let total: f32 = r.splat.iter().filter(|e| e.0 != 0).map(|e| e.1).sum();
    if total <= 0.0 {
        return vec![0.0; families.len()];
    }
    families.iter().map(|f| r.splat.iter().filter(|e| e.0 == *f).map(|e| e.1).sum::<f32>() / total).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transform_puts_pixel_corners_half_a_post_out() {
        // As crates/raster's VRT test: x0 −4, spacing 2, three rows from −2 → north post 2.
        let g = Grid { cols: 5, rows: 3, x0: -4.0, z0: -2.0, spacing: 2.0 };
        assert_eq!(geotransform(&g), [-5.0, 2.0, 0.0, 3.0, 0.0, -2.0]);
    }

    #[test]
    fn north_first_reverses_rows_only() {
        let v = [1, 2, 3, 4, 5, 6];
        assert_eq!(north_first(&v, 3, 1), [4, 5, 6, 1, 2, 3]);
        assert_eq!(north_first(&v, 1, 3), [4, 5, 6, 1, 2, 3]);
        assert_eq!(north_first(&v, 3, 2), v);
    }

    #[test]
    fn demo_bake_has_every_map() {
        let t = trnbake_swg::model::json::demo_terrain();
        let opts = trnbake_swg::plan::HeightOptions::default();
        let he = HeightEvaluator::new(&t, &opts).unwrap();
        let se = SurfaceEvaluator::new(&t, &opts, Default::default()).unwrap();
        let maps: Vec<String> = MAP_NAMES.iter().map(|s| s.to_string()).collect();
        let grid = bake_grid([-100.0, -60.0, 100.0, 60.0], 8.0).unwrap();
        let out = run(&BakeInputs { terrain: &t, heights: &he, surface: Some(&se), grid, maps: &maps, reporter: &trnbake_swg::report::NullReporter });
        let names: Vec<&str> = out.arrays.iter().map(|a| a.name.as_str()).collect();
        for n in [
            "height",
            "normals",
            "shader_id",
            "splat_weights",
            "flora_radial_far_density",
            "env_id",
            "color",
            "exclude",
            "passable",
            "water_height",
            "water_mask",
        ] {
            assert!(names.contains(&n), "{n} missing from {names:?}");
        }
        let h = &out.arrays[0];
        assert_eq!(h.shape, [16, 26]);
        let Samples::F32(hs) = &h.samples else { panic!("heights are f32") };
        // North row first: the first row is the grid's last (northernmost) row.
        let (x, z) = grid.post(0, grid.rows - 1);
        assert_eq!(hs[0], he.height_at(x, z));
    }
}
