//! `trnbake._native`: the Python extension module of trnbake (the pure-Python package
//! `trnbake` re-exports it). Python gets heights and surface maps of a `.trn` as numpy
//! arrays, computed by `trnbake-swg` on the CPU with the GIL released; the arrays and their
//! georeferencing equal what `trnbake bake --backend cpu` writes.

pub mod bake;
pub mod dataset;
#[cfg(feature = "navmesh")]
pub mod navmesh;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use numpy::ndarray::{ArrayD, IxDyn};
use numpy::{AllowTypeChange, IntoPyArray, PyArrayLikeDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyFileNotFoundError, PyIsADirectoryError, PyOSError, PyPermissionError, PyRuntimeWarning, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::IntoPyObjectExt;
use trnbake_swg::eval::{HeightEvaluator, OffMap};
use trnbake_swg::model::{default_data_root, LoadError, Terrain as Model};
use trnbake_swg::plan::{HeightOptions, PlanError};
use trnbake_swg::report::{Level, Reporter, Task};
use trnbake_swg::surface::SurfaceEvaluator;

use bake::{BakeInputs, MapArray, Samples, MAP_NAMES};

/// An `OSError` of the subclass Python raises for this kind of failure, with `errno`,
/// `strerror` and `filename` set, so `except FileNotFoundError` works as for `open()`.
fn os_error(error: &std::io::Error, message: String, path: &Path) -> PyErr {
    // Python appends the file name itself ("[Errno 2] message: 'path'").
    let args = (error.raw_os_error(), message, path.display().to_string());
    match error.kind() {
        std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(args),
        std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(args),
        std::io::ErrorKind::IsADirectory => PyIsADirectoryError::new_err(args),
        _ => PyOSError::new_err(args),
    }
}

fn load_error(e: LoadError) -> PyErr {
    match e {
        LoadError::Io { path, error } => {
            // The OS's words without Rust's " (os error N)": Python shows the errno already.
            let text = error.to_string();
            let text = match error.raw_os_error() {
                Some(n) => text.trim_end_matches(&format!(" (os error {n})")).to_string(),
                None => text,
            };
            os_error(&error, format!("cannot read terrain file: {text}"), &path)
        }
        LoadError::Format { path, error } => PyValueError::new_err(format!(
            "{} is not a valid terrain file: chunk `{}` at byte offset {}: {}",
            path.display(),
            error.path,
            error.offset,
            error.message
        )),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A plan that cannot be built: a bitmap that is not there is a missing file (an `OSError`
/// the caller can fix with `data_root`), anything else a bad terrain (`ValueError`).
fn plan_error(e: PlanError, trn: &Path) -> PyErr {
    let message = format!("{}: {e}", trn.display());
    match e {
        PlanError::MissingBitmap { path, .. } => PyFileNotFoundError::new_err((2, message, path)),
        _ => PyValueError::new_err(message),
    }
}

/// Emits a `RuntimeWarning` (which the caller may turn into an error with `warnings`).
fn warn(py: Python<'_>, message: String) -> PyResult<()> {
    let message = std::ffi::CString::new(message.replace('\0', "\\0")).expect("NULs were replaced");
    PyErr::warn(py, py.get_type::<PyRuntimeWarning>().as_any(), &message, 1)
}

/// A Star Wars Galaxies terrain file (`.trn`), loaded and ready to evaluate.
///
/// `Terrain(path, data_root=None, *, roads=False, bitmap_gain=True, missing_bitmaps="error")`
///
/// `data_root` is the folder in which the file's bitmap paths (`terrain/x.tga`) resolve;
/// by default the folder above the file's `terrain/` folder (the client data layout), as
/// `trnbake --data-root`. `roads`, `bitmap_gain` and `missing_bitmaps` ("error" or "zero")
/// are the command line's height options of the same names, with the same defaults.
///
/// Raises `OSError` (`FileNotFoundError`, …) when the file or a bitmap it needs cannot be
/// read, `ValueError` when the file is not a valid terrain (the message names the file, the
/// chunk and the byte offset). A `Terrain` is immutable and may be shared between threads.
#[pyclass(frozen, module = "trnbake", name = "Terrain")]
pub struct PyTerrain {
    path: PathBuf,
    data_root: Option<PathBuf>,
    model: Model,
    options: HeightOptions,
    heights: HeightEvaluator,
    /// Built on the first bake that needs a surface map (its plans cost a few times the
    /// height plan, which height-only users should not pay).
    surface: OnceLock<Result<SurfaceEvaluator, String>>,
}

/// What the library reports during a call, for Python: notes and warnings are kept until the
/// GIL is back ([`PyReporter::warn_all`] makes them `warnings.warn`), progress goes to the
/// callable `progress(done, total, label)` at once (taking the GIL for the call). The first
/// exception the callable raises is kept, and no further progress is sent.
struct PyReporter {
    messages: Mutex<Vec<(Level, String)>>,
    progress: Option<Py<PyAny>>,
    error: Mutex<Option<PyErr>>,
}

impl PyReporter {
    fn new(progress: Option<Py<PyAny>>) -> Self {
        PyReporter { messages: Mutex::new(Vec::new()), progress, error: Mutex::new(None) }
    }

    fn report(&self, task: &Task) {
        let Some(callback) = &self.progress else { return };
        let mut error = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if error.is_none() {
            Python::attach(|py| {
                if let Err(e) = callback.call1(py, (task.done(), task.total(), task.label())) {
                    *error = Some(e);
                }
            });
        }
    }

    /// Each note and warning as a `RuntimeWarning` (`warnings.warn`, pointing at the caller's
    /// line); then the callable's exception, if it raised one.
    fn warn_all(self, py: Python<'_>) -> PyResult<()> {
        for (level, text) in self.messages.into_inner().unwrap_or_else(|e| e.into_inner()) {
            if level >= Level::Note {
                warn(py, text)?;
            }
        }
        match self.error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

impl Reporter for PyReporter {
    fn message(&self, level: Level, text: &str) {
        self.messages.lock().unwrap_or_else(|e| e.into_inner()).push((level, text.to_string()));
    }
    fn start(&self, task: &Arc<Task>) {
        self.report(task);
    }
    fn inc(&self, task: &Task, _: u64) {
        self.report(task);
    }
    fn set_total(&self, task: &Task, _: u64) {
        self.report(task);
    }
}

impl PyTerrain {
    /// The surface evaluator, built on first use (its plan's warnings to `reporter` then).
    fn surface(&self, reporter: &dyn Reporter) -> PyResult<&SurfaceEvaluator> {
        let built = self.surface.get_or_init(|| {
            let se = SurfaceEvaluator::new(&self.model, &self.options, Default::default()).map_err(|e| format!("{}: {e}", self.path.display()))?;
            for w in &se.plan.warnings {
                reporter.warn(w);
            }
            Ok(se)
        });
        built.as_ref().map_err(|e| PyValueError::new_err(e.clone()))
    }

    /// The short name in the CRS (`SWG NAME local metres`): the file stem, as the CLI's.
    fn name(&self) -> String {
        self.path.file_stem().map_or("terrain".into(), |s| s.to_string_lossy().into_owned())
    }
}

/// A query's points: the input's shape and its (x, z) pairs in order.
type QueryPoints = (Vec<usize>, Vec<(f32, f32)>);

impl PyTerrain {
    /// The points of a query (`xs`, `zs` as in `sample`): their shape and (x, z) pairs; a
    /// single point off the map is a `ValueError`, off-map points of an array one warning
    /// (saying their `what`, "heights" say, are NaN).
    fn query_points(
        &self,
        py: Python<'_>,
        xs: &PyArrayLikeDyn<'_, f32, AllowTypeChange>,
        zs: &PyArrayLikeDyn<'_, f32, AllowTypeChange>,
        what: &str,
    ) -> PyResult<QueryPoints> {
        if xs.shape() != zs.shape() {
            return Err(PyValueError::new_err(format!("xs and zs must have the same shape, got {:?} and {:?}", xs.shape(), zs.shape())));
        }
        let shape = xs.shape().to_vec();
        let points: Vec<(f32, f32)> = xs.as_array().iter().zip(zs.as_array().iter()).map(|(&x, &z)| (x, z)).collect();
        if let Some((x, z)) = points.iter().find(|(x, z)| !(x.is_finite() && z.is_finite())) {
            return Err(PyValueError::new_err(format!("coordinates must be finite, got ({x}, {z})")));
        }
        let off_map = |&&(x, z): &&(f32, f32)| !self.heights.on_map(x, z);
        if let Some(&(x, z)) = points.iter().find(off_map) {
            let first = OffMap::Point { x, z, half: self.heights.half_width() };
            if shape.is_empty() {
                return Err(PyValueError::new_err(first.to_string()));
            }
            let count = points.iter().filter(off_map).count();
            warn(py, format!("{count} of {} points are off the map (their {what} are NaN); the first: {first}", points.len()))?;
        }
        Ok((shape, points))
    }
}

#[pymethods]
impl PyTerrain {
    #[new]
    #[pyo3(signature = (path, data_root=None, *, roads=false, bitmap_gain=true, missing_bitmaps="error"))]
    fn new(py: Python<'_>, path: PathBuf, data_root: Option<PathBuf>, roads: bool, bitmap_gain: bool, missing_bitmaps: &str) -> PyResult<Self> {
        let missing_bitmaps_zero = match missing_bitmaps {
            "error" => false,
            "zero" => true,
            other => return Err(PyValueError::new_err(format!("missing_bitmaps must be \"error\" or \"zero\", not {other:?}"))),
        };
        let data_root = data_root.or_else(|| default_data_root(&path));
        let options = HeightOptions { roads, bitmap_gain, data_root: data_root.clone(), missing_bitmaps_zero };
        // Reading the file and its bitmaps takes a while for a planet: other threads run meanwhile.
        let reporter = PyReporter::new(None);
        let (model, heights) = py.detach(|| -> PyResult<_> {
            let model = Model::load(&path).map_err(load_error)?;
            let heights = HeightEvaluator::new(&model, &options).map_err(|e| plan_error(e, &path))?;
            for w in &heights.plan.warnings {
                (&reporter as &dyn Reporter).warn(w);
            }
            Ok((model, heights))
        })?;
        // The plan's warnings (a bitmap family read as black, a missing fractal) as `RuntimeWarning`s.
        reporter.warn_all(py)?;
        Ok(PyTerrain { path, data_root, model, options, heights, surface: OnceLock::new() })
    }

    /// The path the terrain was loaded from.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The folder bitmap paths resolve in, or None.
    #[getter]
    fn data_root(&self) -> Option<PathBuf> {
        self.data_root.clone()
    }

    /// Width of the square map in metres (the map spans ±map_width/2 on both axes).
    #[getter]
    fn map_width(&self) -> f64 {
        f64::from(self.model.header.map_width)
    }

    /// The file's post spacing in metres: the default spacing of a bake.
    #[getter]
    fn pole_spacing(&self) -> f64 {
        f64::from(self.model.header.pole_spacing())
    }

    fn __repr__(&self) -> String {
        format!("Terrain({:?}, map_width={}, pole_spacing={})", self.path.display().to_string(), self.map_width(), self.pole_spacing())
    }

    /// Exact ground heights at world points (x east, z north, metres, origin at the map
    /// centre), as `trnbake sample` computes them.
    ///
    /// `xs` and `zs` are array-likes of the same shape (converted to float32, as the command
    /// line reads coordinates); returns a float32 array of that shape. Evaluated in parallel
    /// with the GIL released.
    ///
    /// A point off the map (outside ±map_width/2 on either axis) has no height: a single
    /// point (scalar `xs` and `zs`) raises `ValueError` naming it and the map's extent; in an
    /// array it gets NaN, and one `RuntimeWarning` says how many points are off the map.
    fn sample<'py>(
        &self,
        py: Python<'py>,
        xs: PyArrayLikeDyn<'py, f32, AllowTypeChange>,
        zs: PyArrayLikeDyn<'py, f32, AllowTypeChange>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (shape, points) = self.query_points(py, &xs, &zs, "heights")?;
        let heights = py.detach(|| self.heights.heights_at(&points));
        let array = ArrayD::from_shape_vec(IxDyn(&shape), heights).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(array.into_pyarray(py).into_any())
    }

    /// Ground slopes in degrees (0 flat, 90 vertical) at world points, from central
    /// differences of the exact heights 2 m either side (`trnbake_swg::query`, the C API's
    /// `trnbake_slope_at`).
    ///
    /// `xs` and `zs` as in `sample`: a single point off the map raises `ValueError`; in an
    /// array it gets NaN, with one `RuntimeWarning`. Evaluated in parallel, GIL released.
    fn slope<'py>(
        &self,
        py: Python<'py>,
        xs: PyArrayLikeDyn<'py, f32, AllowTypeChange>,
        zs: PyArrayLikeDyn<'py, f32, AllowTypeChange>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (shape, points) = self.query_points(py, &xs, &zs, "slopes")?;
        let mut out = vec![0.0f32; points.len()];
        py.detach(|| self.heights.slopes_at_into(&points, &mut out));
        let array = ArrayD::from_shape_vec(IxDyn(&shape), out).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(array.into_pyarray(py).into_any())
    }

    /// Unit ground normals (x east, y up, z north) at world points: an array of the points'
    /// shape plus a last axis of 3. Off-map points as in `slope`.
    fn normal<'py>(
        &self,
        py: Python<'py>,
        xs: PyArrayLikeDyn<'py, f32, AllowTypeChange>,
        zs: PyArrayLikeDyn<'py, f32, AllowTypeChange>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (mut shape, points) = self.query_points(py, &xs, &zs, "normals")?;
        let normals: Vec<f32> = py.detach(|| {
            use rayon::prelude::*;
            points.par_iter().flat_map_iter(|&(x, z)| self.heights.normal_at(x, z).unwrap_or([f32::NAN; 3])).collect()
        });
        shape.push(3);
        let array = ArrayD::from_shape_vec(IxDyn(&shape), normals).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(array.into_pyarray(py).into_any())
    }

    /// The lowest and highest ground `(min, max)` over the box [x0, x1] x [z0, z1], exact at
    /// the posts (x0 + i*spacing, z0 + j*spacing) and along the box's east and north edges.
    /// Raises `ValueError` for a box not wholly on the map or a spacing that is not positive.
    #[pyo3(signature = (x0, z0, x1, z1, spacing=1.0))]
    fn height_range(&self, py: Python<'_>, x0: f32, z0: f32, x1: f32, z1: f32, spacing: f32) -> PyResult<(f32, f32)> {
        let r = py.detach(|| self.heights.height_range(x0, z0, x1, z1, spacing)).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((r.min, r.max))
    }

    /// Whether the segment from `a` to `b` (each `(x, y, z)`, y up) clears the terrain. The
    /// ground is sampled at both ends and at most `step` metres apart between (horizontally);
    /// a ridge narrower than `step` may fall between samples. Raises `ValueError` for an end
    /// off the map, a height that is not finite or a step that is not positive.
    #[pyo3(signature = (a, b, step=0.5))]
    fn line_of_sight(&self, a: (f32, f32, f32), b: (f32, f32, f32), step: f32) -> PyResult<bool> {
        self.heights.line_of_sight([a.0, a.1, a.2], [b.0, b.1, b.2], step).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// `line_of_sight` of many segments: `segments` is an (N, 6) array-like of rows
    /// ax, ay, az, bx, by, bz; returns a float32 array of N: 1.0 clear, 0.0 blocked, NaN for a
    /// segment refused (an end off the map, a height not finite), with one `RuntimeWarning`.
    /// Raises `ValueError` for a shape that is not (N, 6) or a step that is not positive.
    #[pyo3(signature = (segments, step=0.5))]
    fn lines_of_sight<'py>(&self, py: Python<'py>, segments: PyArrayLikeDyn<'py, f32, AllowTypeChange>, step: f32) -> PyResult<Bound<'py, PyAny>> {
        let shape = segments.shape().to_vec();
        if shape.len() != 2 || shape[1] != 6 {
            return Err(PyValueError::new_err(format!("segments must have the shape (N, 6), got {shape:?}")));
        }
        let flat: Vec<f32> = segments.as_array().iter().copied().collect();
        let segs: Vec<[f32; 6]> = flat.chunks_exact(6).map(|c| [c[0], c[1], c[2], c[3], c[4], c[5]]).collect();
        let mut flags = vec![0i8; segs.len()];
        let refused = py.detach(|| self.heights.lines_of_sight_into(&segs, step, &mut flags)).map_err(|e| PyValueError::new_err(e.to_string()))?;
        if refused > 0 {
            let first = flags.iter().position(|&f| f < 0).expect("a segment is refused");
            warn(py, format!("{refused} of {} segments are refused (their results are NaN); the first is segment {first}", segs.len()))?;
        }
        let out: Vec<f32> = flags.iter().map(|&f| if f < 0 { f32::NAN } else { f32::from(f) }).collect();
        Ok(ArrayD::from_shape_vec(IxDyn(&[segs.len()]), out).map_err(|e| PyValueError::new_err(e.to_string()))?.into_pyarray(py).into_any())
    }

    /// Bakes a grid of posts, as `trnbake bake --backend cpu` does, into numpy arrays.
    ///
    /// `region` is (west, south, east, north) in world metres, the whole map by default;
    /// `spacing` the metres between posts, the file's pole spacing by default. Posts start
    /// at the south-west corner and stop at or before the east and north bounds (the
    /// command line's post count). `maps` names what to compute: "height", "normals",
    /// "splat", "flora", "water", "env", "color", "exclude". `backend` must be "cpu": this
    /// package bakes on the CPU (the command line has the GPU backend, with the same heights).
    ///
    /// A region wholly off the map, or whose posts are not finite single-precision numbers,
    /// raises `ValueError`; one reaching past the map's edge is baked as the command line bakes
    /// it (the posts outside hold what the rules give there), with a `RuntimeWarning`.
    ///
    /// `progress`, if given, is called as `progress(done, total, label)` while the bake runs:
    /// `label` "height" counts posts, "surface maps" steps (an exception it raises ends the
    /// reports and is raised when the bake returns). Notes and warnings of the bake (the
    /// surface plan's, on the first bake that needs it) are `RuntimeWarning`s.
    ///
    /// Returns a `Bake`; the arrays have the north row first. Computed with the GIL released.
    #[pyo3(signature = (region=None, spacing=None, maps=None, backend="cpu", progress=None))]
    fn bake(
        &self,
        py: Python<'_>,
        region: Option<(f64, f64, f64, f64)>,
        spacing: Option<f64>,
        maps: Option<Vec<String>>,
        backend: &str,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<PyBake> {
        if backend != "cpu" {
            return Err(PyValueError::new_err(format!(
                "backend {backend:?}: the Python package bakes on the CPU only (backend=\"cpu\"); the trnbake command line has the GPU backend"
            )));
        }
        let maps = maps.unwrap_or_else(|| vec!["height".into()]);
        if let Some(bad) = maps.iter().find(|m| !MAP_NAMES.contains(&m.as_str())) {
            return Err(PyValueError::new_err(format!("unknown map {bad:?}; the known maps are {}", MAP_NAMES.join(", "))));
        }
        let half = self.map_width() / 2.0;
        let region = region.map_or([-half, -half, half, half], |r| [r.0, r.1, r.2, r.3]);
        let spacing = spacing.unwrap_or(self.pole_spacing());
        let grid = bake::bake_grid(region, spacing).map_err(PyValueError::new_err)?;
        self.heights.check_region(&grid).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let on_map = |x: f64, z: f64| self.model.header.on_map(x, z);
        if !(on_map(grid.x0, grid.z0) && on_map(grid.east_x(), grid.north_z())) {
            warn(
                py,
                format!(
                    "the region {},{},{},{} reaches past the map's edge ({}); posts outside it hold what the rules give there",
                    region[0],
                    region[1],
                    region[2],
                    region[3],
                    self.model.header.extent_text()
                ),
            )?;
        }
        if let Some(p) = &progress {
            if !p.bind(py).is_callable() {
                return Err(PyValueError::new_err("progress must be a callable progress(done, total, label), or None"));
            }
        }
        let reporter = PyReporter::new(progress);
        let out = py.detach(|| -> PyResult<_> {
            let surface = if maps.iter().any(|m| m != "height" && m != "water") { Some(self.surface(&reporter)?) } else { None };
            Ok(bake::run(&BakeInputs { terrain: &self.model, heights: &self.heights, surface, grid, maps: &maps, reporter: &reporter }))
        });
        reporter.warn_all(py)?;
        let out = out?;
        let arrays = PyDict::new(py);
        for a in out.arrays {
            let name = a.name.clone();
            arrays.set_item(name, to_numpy(py, a)?)?;
        }
        Ok(PyBake {
            arrays: arrays.unbind(),
            transform: bake::geotransform(&grid).into(),
            crs: trnbake_raster::writers::vrt::local_cs_wkt(&format!("SWG {} local metres", self.name())),
            spacing: grid.spacing,
            region: (grid.x0, grid.z0, grid.east_x(), grid.north_z()),
            shape: (grid.rows as usize, grid.cols as usize),
            splat_families: out.splat_families,
        })
    }

    /// A summary of the file as `trnbake info --json` gives it: the header fields (version,
    /// map_width, chunk_width, tiles_per_chunk, pole_spacing, posts_per_side, global_water),
    /// the family counts by kind, layer and rule counts, the bitmap files the layers need,
    /// and warnings; plus "path" and "data_root".
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let mut v = serde_json::to_value(self.model.info()).map_err(|e| PyValueError::new_err(e.to_string()))?;
        if let serde_json::Value::Object(m) = &mut v {
            m.insert("path".into(), self.path.display().to_string().into());
            m.insert("data_root".into(), self.data_root.as_ref().map(|p| p.display().to_string()).into());
        }
        json_to_py(py, &v)
    }
}

fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value as J;
    match v {
        J::Null => Ok(py.None().into_bound(py)),
        J::Bool(b) => b.into_bound_py_any(py),
        J::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_bound_py_any(py),
            (None, Some(u)) => u.into_bound_py_any(py),
            _ => n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py),
        },
        J::String(s) => s.into_bound_py_any(py),
        J::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(json_to_py(py, x)?)?;
            }
            Ok(l.into_any())
        }
        J::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            Ok(d.into_any())
        }
    }
}

fn to_numpy(py: Python<'_>, a: MapArray) -> PyResult<Bound<'_, PyAny>> {
    let shape = IxDyn(&a.shape);
    let bad = |e: numpy::ndarray::ShapeError| PyValueError::new_err(format!("{}: {e}", a.name));
    Ok(match a.samples {
        Samples::F32(v) => ArrayD::from_shape_vec(shape, v).map_err(bad)?.into_pyarray(py).into_any(),
        Samples::I32(v) => ArrayD::from_shape_vec(shape, v).map_err(bad)?.into_pyarray(py).into_any(),
        Samples::U8(v) => ArrayD::from_shape_vec(shape, v).map_err(bad)?.into_pyarray(py).into_any(),
        Samples::Bool(v) => ArrayD::from_shape_vec(shape, v).map_err(bad)?.into_pyarray(py).into_any(),
    })
}

/// The result of `Terrain.bake`: arrays of posts, north row first, and their georeferencing.
///
/// `arrays` maps names to numpy arrays: "height" (float32, metres), "normals" (float32,
/// rows × cols × 3: x east, y up, z north), "shader_id" and "splat_weights" (int32; float32
/// rows × cols × len(splat_families), summing to 1 where a shader applies), per flora class
/// C in collidable, noncollidable, radial_near, radial_far "flora_C_id" (int32) and
/// "flora_C_density" (float32, the placement probability of that family), "water_height"
/// (float32, NaN where no water) and "water_mask" (bool, ground below the water), "env_id"
/// (int32), "color" (uint8, rows × cols × 3), "exclude" and "passable" (bool). Family ids
/// are 0 where no family applies, as in the command line's files.
#[pyclass(frozen, module = "trnbake", name = "Bake")]
pub struct PyBake {
    /// The arrays by name (see the class docstring).
    #[pyo3(get)]
    arrays: Py<PyDict>,
    /// The GDAL geotransform (x of the west edge, pixel width, 0, z of the north edge, 0,
    /// −pixel height): posts are pixel centres, as GDAL reads the command line's GeoTIFFs.
    #[pyo3(get)]
    transform: (f64, f64, f64, f64, f64, f64),
    /// The CRS as WKT: the local metric CRS `SWG <file stem> local metres` of the CLI's files.
    #[pyo3(get)]
    crs: String,
    /// Metres between posts.
    #[pyo3(get)]
    spacing: f64,
    /// (west, south, east, north): world positions of the outermost posts.
    #[pyo3(get)]
    region: (f64, f64, f64, f64),
    /// (rows, cols).
    #[pyo3(get)]
    shape: (usize, usize),
    /// The shader family ids of the channels of "splat_weights", in order.
    #[pyo3(get)]
    splat_families: Vec<i32>,
}

#[pymethods]
impl PyBake {
    fn __repr__(&self, py: Python<'_>) -> String {
        let names: Vec<String> = self.arrays.bind(py).keys().iter().map(|k| k.to_string()).collect();
        format!("Bake(shape={:?}, spacing={}, region={:?}, arrays={names:?})", self.shape, self.spacing, self.region)
    }
}

/// trnbake's native module: `Terrain`, `Bake` and `Navmesh` (see the `trnbake` package).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTerrain>()?;
    m.add_class::<PyBake>()?;
    m.add("MAP_NAMES", MAP_NAMES.to_vec())?;
    dataset::register(m)?;
    #[cfg(feature = "navmesh")]
    navmesh::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
