//! Windows of a bake for the lazy xarray Dataset (`trnbake.open_dataset`): each Dask chunk is
//! one call of [`run_window`], which evaluates posts [c0, c0 + cols) × [r0, r0 + rows) of the
//! whole bake's grid (global post indices, so every post has the position, heights and
//! surface values it has in the whole-grid bake) with the aprons the surface passes need:
//! the heights one post around the window (for the normals), each post's normal from its
//! 3×3 heights and global parity, and the surface passes in the grid's own 128² culling
//! blocks clipped to the window, as the command line's streamed bands clip them to rows.
//!
//! The Python side (`trnbake/_dataset.py`) builds the Dask graph; the functions here are the
//! native half: the grid, the default maps and legends of a terrain, and a window's arrays.

use numpy::ndarray::{ArrayD, IxDyn};
use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rayon::prelude::*;
use trnbake_swg::eval::height::CPU_CULL_BLOCK;
use trnbake_swg::eval::{height_at_point, HeightEvaluator};
use trnbake_swg::grid::Grid;
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::FLORA_CLASSES;
use trnbake_swg::surface::grid::{window_normals, PostSurface};
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::{Ground, SurfaceEvaluator, SurfaceResult};
use trnbake_swg::water::WaterTables;

use crate::bake::{MapArray, Samples, MAP_NAMES};
use crate::PyTerrain;

/// The culling block of the surface passes (`trnbake_swg::surface::grid`'s `BLOCK`): windows
/// clip the grid's blocks, counted from its south-west post.
const BLOCK: u32 = 128;

/// The arrays (Dataset variables) each map of [`MAP_NAMES`] gives, with the names of
/// `Terrain.bake`'s arrays and the command line's files.
pub fn map_arrays(map: &str) -> Vec<String> {
    match map {
        "height" => vec!["height".into()],
        "normals" => vec!["normals".into()],
        "splat" => vec!["shader_id".into(), "splat_weights".into()],
        "flora" => FLORA_CLASSES.iter().flat_map(|c| [format!("flora_{c}_id"), format!("flora_{c}_density")]).collect(),
        "water" => vec!["water_height".into(), "water_mask".into()],
        "env" => vec!["env_id".into()],
        "color" => vec!["color".into()],
        "exclude" => vec!["exclude".into(), "passable".into()],
        _ => Vec::new(),
    }
}

/// The maps the command line bakes by default (`bake --maps auto`: the catalogue's
/// [`trnbake_swg::maps::default_maps`]) that this package gives as arrays: height and normals
/// always, each other map when some rule or table of the file feeds it (the shaded `preview`
/// image is left out).
pub fn default_maps(t: &Terrain, surface: &SurfaceEvaluator) -> Vec<String> {
    trnbake_swg::maps::default_maps(t, surface).into_iter().map(|m| m.name()).filter(|m| MAP_NAMES.contains(m)).map(String::from).collect()
}

/// A rectangle of posts of the bake's grid: [c0, c0 + cols) × [r0, r0 + rows), rows counted
/// from the south as the grid counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub c0: u32,
    pub r0: u32,
    pub cols: u32,
    pub rows: u32,
}

/// What a window computes.
pub struct WindowInputs<'a> {
    pub terrain: &'a Terrain,
    pub heights: &'a HeightEvaluator,
    /// Needed when an array other than height and water is asked for.
    pub surface: Option<&'a SurfaceEvaluator>,
    pub water: Option<&'a WaterTables>,
    pub grid: Grid,
    pub window: Window,
    /// Array names of [`map_arrays`].
    pub arrays: &'a [String],
    /// The shader families of the `splat_weights` channels, in channel order.
    pub splat_families: &'a [i32],
    pub normals: NormalMethod,
}

/// The arrays named in `inp.arrays` over the window, north row first: (rows, cols) planes,
/// and (channels, rows, cols) for normals, color and splat_weights. Each value equals the
/// whole-grid bake's ([`crate::bake::run`], the command line's) at the same post.
pub fn run_window(inp: &WindowInputs) -> Result<Vec<MapArray>, String> {
    let (g, w) = (inp.grid, inp.window);
    if w.cols == 0 || w.rows == 0 || w.c0 + w.cols > g.cols || w.r0 + w.rows > g.rows {
        return Err(format!("window {w:?} does not lie inside the {}×{} grid", g.cols, g.rows));
    }
    let want = |n: &str| inp.arrays.iter().any(|a| a == n);
    let surface_arrays = ["shader_id", "splat_weights", "env_id", "color", "exclude", "passable"];
    let need_surface = surface_arrays.iter().any(|a| want(a)) || inp.arrays.iter().any(|a| a.starts_with("flora_"));
    let need_normals = need_surface || want("normals");
    let (cols, rows) = (w.cols as usize, w.rows as usize);
    let n = cols * rows;

    // Heights: with the 1-post apron when normals are needed, else the window alone.
    let padded = need_normals.then(|| padded_heights(inp.heights, &g, w));
    let heights: Vec<f32> = match &padded {
        Some(p) => (0..rows).flat_map(|r| p[(r + 1) * (cols + 2) + 1..(r + 1) * (cols + 2) + 1 + cols].iter().copied()).collect(),
        None if want("height") || want("water_mask") => {
            let mut out = vec![0.0f32; n];
            inp.heights.grid_region(&g, w.c0, w.r0, w.cols, w.rows, CPU_CULL_BLOCK, &mut out);
            out
        }
        None => Vec::new(),
    };
    let half_width = inp.heights.plan.half_width;
    let normals = padded.as_ref().map(|p| window_normals(&g, w.c0, w.r0, w.cols, w.rows, p, half_width, inp.normals));
    // The surface arrays are filled as the blocks of the surface passes finish, so the
    // per-post results never exist for the whole window at once.
    let mut sinks: Vec<SurfaceSink> = inp.arrays.iter().filter_map(|a| SurfaceSink::new(a, n, inp.splat_families.len())).collect();
    if need_surface {
        let se = inp.surface.ok_or("the surface maps need the surface evaluator")?;
        let nm = normals.as_ref().expect("normals are computed with the surface");
        window_results(&g, w, &heights, nm, se, |r, c0, posts| {
            let north_row = rows - 1 - (r - w.r0) as usize;
            let at = north_row * cols + (c0 - w.c0) as usize;
            for sink in &mut sinks {
                sink.write(at, n, posts, inp.splat_families);
            }
        });
    }

    let plane = |name: &str, samples: Samples| MapArray { name: name.into(), shape: vec![rows, cols], samples };
    let planes = |name: &str, k: usize, samples: Samples| MapArray { name: name.into(), shape: vec![k, rows, cols], samples };
    let mut out = Vec::new();
    for name in inp.arrays {
        let a = match name.as_str() {
            "height" => plane(name, Samples::F32(plane_of(rows, cols, |i| heights[i]))),
            "normals" => {
                let nm = normals.as_ref().expect("normals");
                planes(name, 3, Samples::F32(channels_of(3, rows, cols, |i, o| o.copy_from_slice(&nm[i]))))
            }
            "water_height" | "water_mask" => {
                let levels = water_levels(&g, w, inp.water.ok_or("the water maps need the water tables")?);
                if name == "water_height" {
                    plane(name, Samples::F32(plane_of(rows, cols, |i| levels[i].unwrap_or(f32::NAN))))
                } else {
                    plane(name, Samples::Bool(plane_of(rows, cols, |i| levels[i].is_some_and(|l| heights[i] < l))))
                }
            }
            other => {
                let Some(at) = sinks.iter().position(|s| s.name == *other) else { return Err(format!("unknown array {other:?}")) };
                let sink = sinks.swap_remove(at);
                MapArray { name: sink.name, shape: if sink.k == 1 { vec![rows, cols] } else { vec![sink.k, rows, cols] }, samples: sink.samples }
            }
        };
        out.push(a);
    }
    debug_assert_eq!(n, rows * cols);
    Ok(out)
}

/// What a surface array takes from each post's [`PostSurface`].
#[derive(Clone, Copy)]
enum SurfaceKind {
    Shader,
    Splat,
    Env,
    Color,
    Exclude,
    Passable,
    FloraId(usize),
    FloraDensity(usize),
}

/// A surface array of the window being filled: `k` (rows, cols) planes, channel first,
/// north row first.
struct SurfaceSink {
    name: String,
    kind: SurfaceKind,
    k: usize,
    samples: Samples,
}

impl SurfaceSink {
    /// The sink of array `name` over `n` posts, or `None` when it is not a surface array.
    fn new(name: &str, n: usize, splat_channels: usize) -> Option<SurfaceSink> {
        use SurfaceKind::*;
        let flora = |suffix: &str| FLORA_CLASSES.iter().position(|c| name == format!("flora_{c}_{suffix}"));
        let (kind, k) = match name {
            "shader_id" => (Shader, 1),
            "splat_weights" => (Splat, splat_channels),
            "env_id" => (Env, 1),
            "color" => (Color, 3),
            "exclude" => (Exclude, 1),
            "passable" => (Passable, 1),
            _ => match (flora("id"), flora("density")) {
                (Some(c), _) => (FloraId(c), 1),
                (_, Some(c)) => (FloraDensity(c), 1),
                _ => return None,
            },
        };
        let samples = match kind {
            Shader | Env | FloraId(_) => Samples::I32(vec![0; n]),
            Splat | FloraDensity(_) => Samples::F32(vec![0.0; n * k]),
            Color => Samples::U8(vec![0; n * 3]),
            Exclude | Passable => Samples::Bool(vec![false; n]),
        };
        Some(SurfaceSink { name: name.into(), kind, k, samples })
    }

    /// Writes the values of consecutive posts of one row, the first at north-first index `at`
    /// of the `n` posts of a plane; the values are those of the CLI's files (ids 0 where no
    /// family applies).
    fn write(&mut self, at: usize, n: usize, posts: &[PostSurface], splat_families: &[i32]) {
        use SurfaceKind::*;
        for (j, p) in posts.iter().enumerate() {
            let i = at + j;
            match (self.kind, &mut self.samples) {
                (Shader, Samples::I32(v)) => v[i] = p.shader.max(0),
                (Env, Samples::I32(v)) => v[i] = p.environment.max(0),
                (FloraId(c), Samples::I32(v)) => v[i] = p.flora[c].0.max(0),
                (FloraDensity(c), Samples::F32(v)) => v[i] = p.flora[c].1,
                (Exclude, Samples::Bool(v)) => v[i] = p.excluded,
                // As passable.png: a post without a passable rule is passable.
                (Passable, Samples::Bool(v)) => v[i] = p.passable.unwrap_or(1) != 0,
                (Color, Samples::U8(v)) => {
                    for (ch, c) in p.color.iter().enumerate() {
                        v[ch * n + i] = (c.clamp(0.0, 1.0) * 255.0).round() as u8;
                    }
                }
                (Splat, Samples::F32(v)) => {
                    for (ch, x) in crate::bake::splat_weights(p, splat_families).into_iter().enumerate() {
                        v[ch * n + i] = x;
                    }
                }
                _ => unreachable!("each kind has its sample type"),
            }
        }
    }
}

/// A (rows, cols) plane, north row first, of `f(i)` at each post i of the window (row-major
/// from the south, as the evaluators give them).
fn plane_of<T>(rows: usize, cols: usize, f: impl Fn(usize) -> T) -> Vec<T> {
    let mut v = Vec::with_capacity(rows * cols);
    for r in (0..rows).rev() {
        v.extend((0..cols).map(|c| f(r * cols + c)));
    }
    v
}

/// `k` (rows, cols) planes, channel first, north row first: `f(i, values)` gives post i's `k`
/// values (i row-major from the south).
fn channels_of<T: Copy + Default>(k: usize, rows: usize, cols: usize, f: impl Fn(usize, &mut [T])) -> Vec<T> {
    let n = rows * cols;
    let mut v = vec![T::default(); k * n];
    let mut post = vec![T::default(); k];
    for r in 0..rows {
        let north_row = rows - 1 - r;
        for c in 0..cols {
            f(r * cols + c, &mut post);
            for (ch, x) in post.iter().enumerate() {
                v[ch * n + north_row * cols + c] = *x;
            }
        }
    }
    v
}

/// The heights of the window with a 1-post apron: (cols + 2) × (rows + 2) posts, row-major
/// from the south, padded (0, 0) being post (c0 − 1, r0 − 1). Posts inside the grid are the
/// height pass's (bit-identical whatever the block: culling is exact), posts outside it are
/// evaluated exactly at the positions the whole-grid apron gives them (what the rules give
/// there, on the map or not).
fn padded_heights(he: &HeightEvaluator, g: &Grid, w: Window) -> Vec<f32> {
    let stride = w.cols as usize + 2;
    let mut padded = vec![0.0f32; stride * (w.rows as usize + 2)];
    let (pc0, pr0) = (i64::from(w.c0) - 1, i64::from(w.r0) - 1);
    // The last padded column and row (inclusive).
    let (pc1, pr1) = (i64::from(w.c0 + w.cols), i64::from(w.r0 + w.rows));
    // The part inside the grid.
    let (ic0, ir0) = (pc0.max(0) as u32, pr0.max(0) as u32);
    let (ic1, ir1) = (pc1.min(i64::from(g.cols) - 1) as u32, pr1.min(i64::from(g.rows) - 1) as u32);
    let (icols, irows) = (ic1 - ic0 + 1, ir1 - ir0 + 1);
    let mut inside = vec![0.0f32; icols as usize * irows as usize];
    he.grid_region(g, ic0, ir0, icols, irows, CPU_CULL_BLOCK, &mut inside);
    for (k, row) in inside.chunks_exact(icols as usize).enumerate() {
        let pr = (i64::from(ir0) + k as i64 - pr0) as usize;
        let pc = (i64::from(ic0) - pc0) as usize;
        padded[pr * stride + pc..pr * stride + pc + icols as usize].copy_from_slice(row);
    }
    // The posts outside the grid (as `band_apron_heights` places them).
    let mut ring: Vec<(i64, i64)> = Vec::new();
    for r in pr0..=pr1 {
        for c in pc0..=pc1 {
            if c < 0 || r < 0 || c >= i64::from(g.cols) || r >= i64::from(g.rows) {
                ring.push((c, r));
            }
        }
    }
    if !ring.is_empty() {
        let points: Vec<(f32, f32)> =
            ring.iter().map(|&(c, r)| (g.x0 as f32 + c as f32 * g.spacing as f32, g.z0 as f32 + r as f32 * g.spacing as f32)).collect();
        // What the rules give at each point, on the map or not (`band_apron_heights`' apron
        // heights; `HeightEvaluator::height_at` may refuse points off the map).
        let anywhere = |&(x, z): &(f32, f32)| height_at_point(&he.plan, &he.plan.tile_layers([x, z, x, z]), x, z);
        let heights: Vec<f32> = points.par_iter().map(anywhere).collect();
        for (&(c, r), h) in ring.iter().zip(heights) {
            padded[(r - pr0) as usize * stride + (c - pc0) as usize] = h;
        }
    }
    padded
}

/// Both surface passes at every post of the window, in the grid's 128² blocks clipped to the
/// window, in parallel (`band_results` on a window): `each(row, c0, posts)` gets the results
/// of grid row `row` from grid column `c0`, a block's width at a time.
fn window_results(g: &Grid, w: Window, heights: &[f32], normals: &[[f32; 3]], se: &SurfaceEvaluator, mut each: impl FnMut(u32, u32, &[PostSurface])) {
    let cols = w.cols as usize;
    let (c_end, r_end) = (w.c0 + w.cols, w.r0 + w.rows);
    let blocks: Vec<(u32, u32, u32, u32)> = (w.r0 - w.r0 % BLOCK..r_end)
        .step_by(BLOCK as usize)
        .flat_map(|br| {
            (w.c0 - w.c0 % BLOCK..c_end)
                .step_by(BLOCK as usize)
                .map(move |bc| (bc.max(w.c0), br.max(w.r0), (bc + BLOCK).min(c_end) - 1, (br + BLOCK).min(r_end) - 1))
        })
        .collect();
    let ground = |c: u32, r: u32| {
        let i = (r - w.r0) as usize * cols + (c - w.c0) as usize;
        Ground { height: heights[i], normal: normals[i] }
    };
    let compute = |&(c0, r0, c1, r1): &(u32, u32, u32, u32)| {
        let block = se.grid_block(g, c0, r0, c1, r1);
        let mut out = Vec::with_capacity(((c1 - c0 + 1) * (r1 - r0 + 1)) as usize);
        if se.walks_rows() {
            se.block_rows(&block, (c0, r0, c1, r1), ground, |_, row: &[SurfaceResult]| out.extend(row.iter().map(PostSurface::of)));
        } else {
            for r in r0..=r1 {
                for c in c0..=c1 {
                    out.push(PostSurface::of(&se.at_grid_post(&block, c, r, ground(c, r))));
                }
            }
        }
        ((c0, r0, c1, r1), out)
    };
    // Four rows of blocks at a time, each group's blocks in parallel: the blocks' results wait
    // for their copy a group at a time, not the whole window's at once.
    let per_row = (w.c0 - w.c0 % BLOCK..c_end).step_by(BLOCK as usize).count();
    for group in blocks.chunks(per_row * 4) {
        let computed: Vec<_> = group.par_iter().map(compute).collect();
        for ((c0, r0, c1, r1), block) in computed {
            let bw = (c1 - c0 + 1) as usize;
            for r in r0..=r1 {
                let src = (r - r0) as usize * bw;
                each(r, c0, &block[src..src + bw]);
            }
        }
    }
}

/// The water surface height at every post of the window, row-major from the south.
fn water_levels(g: &Grid, w: Window, water: &WaterTables) -> Vec<Option<f32>> {
    let cols = w.cols as usize;
    (0..cols * w.rows as usize)
        .into_par_iter()
        .map(|i| {
            let (x, z) = g.post(w.c0 + (i % cols) as u32, w.r0 + (i / cols) as u32);
            water.height_at(x, z)
        })
        .collect()
}

// ---- Python functions (module `trnbake._native`; used by `trnbake._dataset`) ----

fn grid_of(grid: (f64, f64, f64, u32, u32)) -> Result<Grid, String> {
    let g = Grid { x0: grid.0, z0: grid.1, spacing: grid.2, cols: grid.3, rows: grid.4 };
    g.check_dims().map_err(|e| e.0)?;
    Ok(g)
}

/// `_grid(terrain, region, spacing)`: the grid `Terrain.bake(region, spacing)` would bake, as
/// a dict: x0, z0 (the south-west post), spacing, cols, rows, transform (GDAL geotransform)
/// and crs (WKT).
#[pyfunction]
#[pyo3(signature = (terrain, region=None, spacing=None))]
fn _grid<'py>(py: Python<'py>, terrain: &PyTerrain, region: Option<(f64, f64, f64, f64)>, spacing: Option<f64>) -> PyResult<Bound<'py, PyDict>> {
    let half = terrain.map_width() / 2.0;
    let region = region.map_or([-half, -half, half, half], |r| [r.0, r.1, r.2, r.3]);
    let spacing = spacing.unwrap_or(terrain.pole_spacing());
    let g = crate::bake::bake_grid(region, spacing).map_err(PyValueError::new_err)?;
    let d = PyDict::new(py);
    d.set_item("x0", g.x0)?;
    d.set_item("z0", g.z0)?;
    d.set_item("spacing", g.spacing)?;
    d.set_item("cols", g.cols)?;
    d.set_item("rows", g.rows)?;
    d.set_item("transform", crate::bake::geotransform(&g).to_vec())?;
    d.set_item("crs", trnbake_raster::writers::vrt::local_cs_wkt(&format!("SWG {} local metres", terrain.name())))?;
    Ok(d)
}

/// `_default_maps(terrain)`: the maps `trnbake bake` writes by default, less `preview`.
#[pyfunction]
fn _default_maps(py: Python<'_>, terrain: &PyTerrain) -> PyResult<Vec<String>> {
    let se = py.detach(|| terrain.surface(&trnbake_swg::report::NullReporter))?;
    Ok(default_maps(&terrain.model, se))
}

/// `_legends(terrain)`: the families of the file by kind ("shader", "flora", "radial",
/// "environment"), each a list of (id, name, (r, g, b)).
#[pyfunction]
fn _legends<'py>(py: Python<'py>, terrain: &PyTerrain) -> PyResult<Bound<'py, PyDict>> {
    let g = &terrain.model.generator;
    let d = PyDict::new(py);
    let list = |v: Vec<(i32, String, [u8; 3])>| PyList::new(py, v);
    d.set_item("shader", list(g.shader_families.families().iter().map(|f| (f.id, f.name.clone(), f.color)).collect())?)?;
    d.set_item("flora", list(g.flora_families.families().iter().map(|f| (f.id, f.name.clone(), f.color)).collect())?)?;
    d.set_item("radial", list(g.radial_families.families().iter().map(|f| (f.id, f.name.clone(), f.color)).collect())?)?;
    d.set_item("environment", list(g.environment_families.families().iter().map(|f| (f.id, f.name.clone(), f.color)).collect())?)?;
    Ok(d)
}

/// `_window(terrain, grid, window, arrays, splat_families)`: the arrays of posts
/// window = (c0, r0, cols, rows) (rows from the south) of grid = (x0, z0, spacing, cols,
/// rows), as a dict of numpy arrays, north row first, channels first. One call, the GIL
/// released for all of it.
#[pyfunction]
#[pyo3(signature = (terrain, grid, window, arrays, splat_families=Vec::new()))]
fn _window<'py>(
    py: Python<'py>,
    terrain: &PyTerrain,
    grid: (f64, f64, f64, u32, u32),
    window: (u32, u32, u32, u32),
    arrays: Vec<String>,
    splat_families: Vec<i32>,
) -> PyResult<Bound<'py, PyDict>> {
    let g = grid_of(grid).map_err(PyValueError::new_err)?;
    let window = Window { c0: window.0, r0: window.1, cols: window.2, rows: window.3 };
    let known: Vec<String> = MAP_NAMES.iter().flat_map(|m| map_arrays(m)).collect();
    if let Some(bad) = arrays.iter().find(|a| !known.contains(a)) {
        return Err(PyValueError::new_err(format!("unknown array {bad:?}; the known arrays are {}", known.join(", "))));
    }
    let out = py.detach(|| -> PyResult<_> {
        let surface_free = ["height", "water_height", "water_mask"];
        let surface =
            if arrays.iter().any(|a| !surface_free.contains(&a.as_str())) { Some(terrain.surface(&trnbake_swg::report::NullReporter)?) } else { None };
        let water = arrays.iter().any(|a| a.starts_with("water_")).then(|| WaterTables::new(&terrain.model));
        let inp = WindowInputs {
            terrain: &terrain.model,
            heights: &terrain.heights,
            surface,
            water: water.as_ref(),
            grid: g,
            window,
            arrays: &arrays,
            splat_families: &splat_families,
            normals: NormalMethod::default(),
        };
        run_window(&inp).map_err(PyValueError::new_err)
    })?;
    let d = PyDict::new(py);
    for a in out {
        let shape = IxDyn(&a.shape);
        let bad = |e: numpy::ndarray::ShapeError| PyValueError::new_err(format!("{}: {e}", a.name));
        let v = match a.samples {
            Samples::F32(v) => ArrayD::from_shape_vec(shape, v).map_err(bad)?.into_pyarray(py).into_any(),
            Samples::I32(v) => ArrayD::from_shape_vec(shape, v).map_err(bad)?.into_pyarray(py).into_any(),
            Samples::U8(v) => ArrayD::from_shape_vec(shape, v).map_err(bad)?.into_pyarray(py).into_any(),
            Samples::Bool(v) => ArrayD::from_shape_vec(shape, v).map_err(bad)?.into_pyarray(py).into_any(),
        };
        d.set_item(&a.name, v)?;
    }
    Ok(d)
}

/// Adds the Dataset's native functions and `MAP_ARRAYS` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_grid, m)?)?;
    m.add_function(wrap_pyfunction!(_default_maps, m)?)?;
    m.add_function(wrap_pyfunction!(_legends, m)?)?;
    m.add_function(wrap_pyfunction!(_window, m)?)?;
    let arrays = PyDict::new(m.py());
    for map in MAP_NAMES {
        arrays.set_item(map, map_arrays(map))?;
    }
    m.add("MAP_ARRAYS", arrays)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bake::{bake_grid, run, BakeInputs};

    /// Every window of a grid, stitched, equals the whole-grid bake, array for array, bit for bit.
    #[test]
    fn windows_equal_the_whole_grid() {
        let t = trnbake_swg::model::json::demo_terrain();
        let opts = trnbake_swg::plan::HeightOptions::default();
        let he = HeightEvaluator::new(&t, &opts).unwrap();
        let se = SurfaceEvaluator::new(&t, &opts, Default::default()).unwrap();
        let water = WaterTables::new(&t);
        let maps: Vec<String> = MAP_NAMES.iter().map(|s| s.to_string()).collect();
        // A grid wider than a culling block, with ragged windows that cross block edges.
        let grid = bake_grid([-1000.0, -700.0, 1000.0, 700.0], 7.5).unwrap();
        let whole = run(&BakeInputs { terrain: &t, heights: &he, surface: Some(&se), grid, maps: &maps, reporter: &trnbake_swg::report::NullReporter });
        let arrays: Vec<String> = MAP_NAMES.iter().flat_map(|m| map_arrays(m)).collect();
        let fams = whole.splat_families.clone();
        let (cols, rows) = (grid.cols as usize, grid.rows as usize);
        for (wc, wr) in [(100u32, 90u32), (128, 128), (grid.cols, grid.rows)] {
            for r0 in (0..grid.rows).step_by(wr as usize) {
                for c0 in (0..grid.cols).step_by(wc as usize) {
                    let window = Window { c0, r0, cols: wc.min(grid.cols - c0), rows: wr.min(grid.rows - r0) };
                    let inp = WindowInputs {
                        terrain: &t,
                        heights: &he,
                        surface: Some(&se),
                        water: Some(&water),
                        grid,
                        window,
                        arrays: &arrays,
                        splat_families: &fams,
                        normals: NormalMethod::default(),
                    };
                    let out = run_window(&inp).unwrap();
                    assert_eq!(out.len(), arrays.len());
                    for a in &out {
                        let whole_a = whole.arrays.iter().find(|x| x.name == a.name).unwrap();
                        // Compare post by post: whole arrays are (rows, cols[, k]) north first,
                        // window arrays ([k,] rows, cols) north first.
                        let k_ch = if a.shape.len() == 3 { a.shape[0] } else { 1 };
                        let (wrows, wcols) = (window.rows as usize, window.cols as usize);
                        for ch in 0..k_ch {
                            for i in 0..wrows {
                                for j in 0..wcols {
                                    let wi = ch * wrows * wcols + i * wcols + j;
                                    let gy = rows - (window.r0 as usize + wrows) + i;
                                    let gx = window.c0 as usize + j;
                                    let gi = (gy * cols + gx) * k_ch + ch;
                                    let same = match (&a.samples, &whole_a.samples) {
                                        (Samples::F32(x), Samples::F32(y)) => x[wi].to_bits() == y[gi].to_bits(),
                                        (Samples::I32(x), Samples::I32(y)) => x[wi] == y[gi],
                                        (Samples::U8(x), Samples::U8(y)) => x[wi] == y[gi],
                                        (Samples::Bool(x), Samples::Bool(y)) => x[wi] == y[gi],
                                        _ => false,
                                    };
                                    assert!(same, "{} differs at row {gy} col {gx} channel {ch} (windows {wc}×{wr})", a.name);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
