//! `trnbake.Navmesh`: a navmesh set of `trnbake navmesh` loaded through Detour, and straight
//! paths over it (`trnbake_navmesh::Navmesh::ground_path`, as `trnbake navmesh path` and the
//! C API's `trnbake_navmesh_path`). Behind the crate's default feature `navmesh`.

use std::path::PathBuf;

use numpy::ndarray::Array2;
use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use trnbake_navmesh::{Navmesh, NavmeshError};

use crate::os_error;

fn navmesh_error(e: NavmeshError) -> PyErr {
    match e {
        NavmeshError::Io { path, error } => os_error(&error, format!("cannot read navmesh set: {error}"), &path),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A navmesh set (`navmesh.bin`, or one `navmesh_COL_ROW.bin`, as `trnbake navmesh` writes
/// them) with every tile loaded into Detour.
///
/// `Navmesh(path)`. Raises `OSError` (`FileNotFoundError`, …) when the file cannot be read,
/// `ValueError` when it is not a set or Detour refuses a tile. A `Navmesh` may be shared
/// between threads (their paths take turns on Detour's query object).
#[pyclass(frozen, module = "trnbake", name = "Navmesh")]
pub struct PyNavmesh {
    file: PathBuf,
    nav: Navmesh,
}

#[pymethods]
impl PyNavmesh {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let nav = py.detach(|| Navmesh::open(&path)).map_err(navmesh_error)?;
        Ok(PyNavmesh { file: path, nav })
    }

    /// The file the set was loaded from (`path` is the method that finds paths).
    #[getter]
    fn file(&self) -> PathBuf {
        self.file.clone()
    }

    /// Tiles loaded.
    #[getter]
    fn tiles(&self) -> usize {
        self.nav.tiles
    }

    fn __repr__(&self) -> String {
        format!("Navmesh({:?}, tiles={})", self.file.display().to_string(), self.nav.tiles)
    }

    /// The straight path from `a` to `b`, each `(x, z)` in world metres (x east, z north): each
    /// end is put on the polygon under it, at any height, and Detour's path joins them. Only
    /// walkable polygons are used, shallow water too when `wade`.
    ///
    /// Returns the corners as a float32 array of shape (n, 3), rows x, y, z (y up: the mesh's
    /// height) from `a` to `b`, the same as `trnbake navmesh path` prints; None when the
    /// navmesh does not connect the ends. Raises `ValueError` for an end with no walkable
    /// polygon under it (outside the set's region, too steep, in water). GIL released.
    #[pyo3(signature = (a, b, wade=false))]
    fn path<'py>(&self, py: Python<'py>, a: (f32, f32), b: (f32, f32), wade: bool) -> PyResult<Option<Bound<'py, PyAny>>> {
        let corners = py.detach(|| self.nav.ground_path(a, b, wade)).map_err(navmesh_error)?;
        Ok(corners.map(|c| {
            let n = c.len();
            let array = Array2::from_shape_vec((n, 3), c.into_iter().flatten().collect()).expect("n rows of 3");
            array.into_pyarray(py).into_any()
        }))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNavmesh>()
}
