//! trnbake-capi: the exact ground heights of [`trnbake_swg`] behind a C ABI, for server
//! emulators written in C or C++ (`libtrnbake.so` / `libtrnbake.a`, header
//! `crates/capi/include/trnbake.h`, generated from this file by cbindgen).
//!
//! The rules every exported function keeps (docs/src/c-api.md):
//!
//! - **Errors are values.** A failing call returns NULL, NaN or a negative `int` and leaves a
//!   message for [`trnbake_last_error`]: the error's text and its `source()` chain joined with
//!   `": "`, so it names the file, the IFF chunk path and the byte offset as the Rust errors do.
//!   Each call clears the message first, so it always belongs to the last call of the thread.
//! - **No unwinding into C.** A panic inside is caught (`catch_unwind`) and becomes an error
//!   return with the panic's message; a NULL pointer is an error, never a crash.
//! - **Nothing on the host's stderr, no abort.** A caught panic is not printed (the panic hook
//!   stays silent inside the API's calls), and every allocation whose size a caller chooses is
//!   reserved fallibly (`try_reserve`): too large is an error return.
//! - **Messages go to the caller, never to stderr.** The library prints nothing: its notes and
//!   warnings (a layer whose fractal family is missing, say) go to the callback of
//!   [`trnbake_set_message_callback`], or nowhere.
//! - **One handle, many threads.** A [`TrnbakeTerrain`] is immutable once opened, so one handle
//!   may be shared by any number of threads; it is freed once, after all of them are done.
//!
//! - **Paths too, as a feature.** With the cargo feature `navmesh`, the library also loads a
//!   navmesh set of `trnbake navmesh` through Detour and answers straight paths (the module
//!   `navmesh`; declared in the header under `#if defined(TRNBAKE_NAVMESH)`).
//!
//! The functions are `unsafe` because they read and write through the caller's pointers; the
//! rlib crate type lets Rust tests and the bench call them exactly as C does.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use trnbake_swg::eval::{HeightEvaluator, OffMap, CPU_CULL_BLOCK};
use trnbake_swg::grid::{Grid, GridError};
use trnbake_swg::model::{default_data_root, LoadError, Terrain};
use trnbake_swg::plan::{HeightOptions, PlanError};
use trnbake_swg::query::QueryError;
use trnbake_swg::report::{Level, Reporter};
use trnbake_swg::water::WaterTables;

#[cfg(feature = "navmesh")]
pub mod navmesh;
#[cfg(feature = "navmesh")]
pub use navmesh::*;

/// Why a call failed; its text (with the `source()` chain) is what [`trnbake_last_error`] returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CapiError {
    #[error("{0} is NULL")]
    Null(&'static str),
    #[error("{0} is not valid UTF-8")]
    NotUtf8(&'static str),
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The plan of the heights could not be built (a bitmap family that does not resolve under
    /// the data root, most often); the `.trn` is named first, the layer and bitmap after.
    #[error("{}", path.display())]
    Plan {
        path: PathBuf,
        #[source]
        error: PlanError,
    },
    #[error("region: {0}")]
    Grid(#[from] GridError),
    /// A point or region off the map (the message names it and the map's extent).
    #[error(transparent)]
    OffMap(#[from] OffMap),
    /// Some points of a batch are off the map: their heights are NaN, the others are set.
    #[error("{count} of {n} points are off the map (their heights are NaN); the first: {first}")]
    SomeOffMap { count: usize, n: usize, first: OffMap },
    #[error("the output buffer holds {have} floats, the region of {cols}x{rows} posts needs {need}")]
    ShortBuffer { have: usize, need: usize, cols: u32, rows: u32 },
    #[error("{what} of {n} floats is larger than memory can hold")]
    TooLong { what: &'static str, n: usize },
    /// A query's input refused (a step that is not positive, a box of too many posts, …).
    #[error(transparent)]
    Query(#[from] QueryError),
    /// Some segments of a batch were refused (-1 in the output), the others are set.
    #[error("{count} of {n} segments are refused (-1); the first, segment {first}: {why}")]
    SomeRefused { count: usize, n: usize, first: usize, why: String },
    /// A navmesh set that cannot be loaded, a point off the navmesh, a failing Detour query.
    #[cfg(feature = "navmesh")]
    #[error(transparent)]
    Navmesh(#[from] trnbake_navmesh::NavmeshError),
    /// A path with more corners than the caller's buffer holds.
    #[cfg(feature = "navmesh")]
    #[error("the output buffer holds {have} corners, the path has {need}")]
    ShortPath { have: usize, need: usize },
    #[error("panic inside {function}: {message}")]
    Panic { function: &'static str, message: String },
}

thread_local! {
    // Per thread, so concurrent callers never see each other's messages; the CString lives
    // here so the pointer handed to C stays valid until this thread's next call.
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// The error's text and its `source()` chain, joined with `": "`; a cause whose text the
/// message already holds (an error that shows its source, `region: empty grid 0x5`) is not
/// said twice.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !message.ends_with(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = s.source();
    }
    message
}

fn set_error(e: &dyn std::error::Error) {
    // An interior NUL (from a file name, say) would cut the message short in C; show it instead.
    let text = error_chain(e).replace('\0', "\\0");
    let c = CString::new(text).expect("NULs were replaced");
    LAST_ERROR.with(|slot| *slot.borrow_mut() = Some(c));
}

fn clear_error() {
    LAST_ERROR.with(|slot| {
        // Only touch the slot when it holds something: the hot path of trnbake_height_at pays
        // a borrow check, not a drop.
        let mut slot = slot.borrow_mut();
        if slot.is_some() {
            *slot = None;
        }
    });
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_string()
    }
}

thread_local! {
    // How deep this thread is inside `guard`: a panic there is caught and reported through
    // `trnbake_last_error`, so the panic hook must not also print it on the host's stderr.
    static GUARDED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Installs, once, a panic hook that stays silent for panics that `guard` catches on this
/// thread and hands every other panic to the hook that was there before (the host's or Rust's
/// default), so the library never writes to the host's stderr.
fn quiet_caught_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(|g| g.get()) == 0 {
                previous(info);
            }
        }));
    });
}

/// Runs the body of an exported function: clears the last error, catches a panic, and turns
/// an `Err` or a panic into `on_error` with the message set. Public (hidden) so the error
/// paths can be tested from Rust with a body that panics.
#[doc(hidden)]
pub fn guard<T>(function: &'static str, on_error: T, body: impl FnOnce() -> Result<T, CapiError>) -> T {
    clear_error();
    quiet_caught_panics();
    GUARDED.with(|g| g.set(g.get() + 1));
    // AssertUnwindSafe: after a panic the handle is only read again, never left half-written
    // (every exported function takes it by shared reference), and the caller's buffers are
    // documented as unspecified on error.
    let result = catch_unwind(AssertUnwindSafe(body));
    GUARDED.with(|g| g.set(g.get() - 1));
    match result {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            set_error(&e);
            on_error
        }
        Err(payload) => {
            set_error(&CapiError::Panic { function, message: panic_message(payload.as_ref()) });
            on_error
        }
    }
}

/// An opened terrain: its height evaluator and water tables. Opaque to C.
///
/// Immutable after `trnbake_terrain_open`, so it is `Send + Sync`: share one handle between
/// threads, and free it once with `trnbake_terrain_free` after all of them are done.
pub struct TrnbakeTerrain {
    heights: HeightEvaluator,
    water: WaterTables,
    map_width: f32,
}

// The promise the header makes to C++ threads, checked when this crate compiles.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<TrnbakeTerrain>();
};

impl TrnbakeTerrain {
    /// A terrain in memory, with the given height options (the Rust way in; C opens a file).
    /// The plan's warnings go to `reporter`.
    pub fn new(terrain: &Terrain, opts: &HeightOptions, reporter: &dyn Reporter) -> Result<TrnbakeTerrain, PlanError> {
        let heights = HeightEvaluator::new(terrain, opts)?;
        for w in &heights.plan.warnings {
            reporter.warn(w);
        }
        Ok(TrnbakeTerrain { heights, water: WaterTables::new(terrain), map_width: terrain.header.map_width })
    }

    /// Loads `path`, with bitmaps resolving under `data_root` (default: [`default_data_root`]);
    /// the plan's warnings go to `reporter` (C: the callback of [`trnbake_set_message_callback`]).
    pub fn open(path: &Path, data_root: Option<PathBuf>, reporter: &dyn Reporter) -> Result<TrnbakeTerrain, CapiError> {
        let terrain = Terrain::load(path)?;
        let opts = HeightOptions { data_root: data_root.or_else(|| default_data_root(path)), ..Default::default() };
        TrnbakeTerrain::new(&terrain, &opts, reporter).map_err(|error| CapiError::Plan { path: path.to_owned(), error })
    }

    /// The evaluator behind the handle.
    pub fn heights(&self) -> &HeightEvaluator {
        &self.heights
    }
}

/// A path from a C string: its bytes as they are on Unix (file names need not be UTF-8).
unsafe fn c_path(p: *const c_char, what: &'static str) -> Result<PathBuf, CapiError> {
    if p.is_null() {
        return Err(CapiError::Null(what));
    }
    let bytes = CStr::from_ptr(p).to_bytes();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(bytes).map(PathBuf::from).map_err(|_| CapiError::NotUtf8(what))
    }
}

unsafe fn terrain<'a>(t: *const TrnbakeTerrain) -> Result<&'a TrnbakeTerrain, CapiError> {
    t.as_ref().ok_or(CapiError::Null("the terrain handle"))
}

/// `n` floats from `p` may form one slice (`slice::from_raw_parts` needs at most isize::MAX bytes).
fn check_len(what: &'static str, n: usize) -> Result<(), CapiError> {
    if n > isize::MAX as usize / std::mem::size_of::<f32>() {
        return Err(CapiError::TooLong { what, n });
    }
    Ok(())
}

/// Opens a `.trn` file and builds its height evaluator.
///
/// `path` is the `.trn` file; `data_root` the folder under which its bitmap paths
/// (`terrain/x.tga`) resolve, or NULL for the default: the folder above the file's own
/// `terrain/` folder (the client's data layout). Returns NULL on failure; then
/// `trnbake_last_error()` says why (the file, and for a damaged file the chunk path and byte
/// offset). Free the handle with `trnbake_terrain_free`.
///
/// # Safety
/// `path` and `data_root` are NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn trnbake_terrain_open(path: *const c_char, data_root: *const c_char) -> *mut TrnbakeTerrain {
    guard("trnbake_terrain_open", std::ptr::null_mut(), || {
        let path = c_path(path, "path")?;
        let data_root = if data_root.is_null() { None } else { Some(c_path(data_root, "data_root")?) };
        Ok(Box::into_raw(Box::new(TrnbakeTerrain::open(&path, data_root, &CallbackReporter)?)))
    })
}

/// The level of a message: a status line.
pub const TRNBAKE_INFO: c_int = 0;
/// The level of a message: something the caller may want to know, nothing wrong.
pub const TRNBAKE_NOTE: c_int = 1;
/// The level of a message: something probably not what the caller meant (a layer whose
/// fractal family is missing, say).
pub const TRNBAKE_WARNING: c_int = 2;

/// A function that receives the library's messages: `level` is `TRNBAKE_INFO`, `TRNBAKE_NOTE`
/// or `TRNBAKE_WARNING`, `message` one line of UTF-8 (valid only during the call: copy it to
/// keep it), `user_data` the pointer given to `trnbake_set_message_callback`.
pub type TrnbakeMessageCallback = Option<unsafe extern "C" fn(level: c_int, message: *const c_char, user_data: *mut c_void)>;

/// The callback and its user data (as an address: the library never reads through it).
static CALLBACK: std::sync::Mutex<Option<(unsafe extern "C" fn(c_int, *const c_char, *mut c_void), usize)>> = std::sync::Mutex::new(None);

/// The C side's [`Reporter`]: messages to the callback set by [`trnbake_set_message_callback`],
/// nowhere without one.
pub struct CallbackReporter;

impl Reporter for CallbackReporter {
    fn message(&self, level: Level, text: &str) {
        let Some((callback, user_data)) = *CALLBACK.lock().unwrap_or_else(|e| e.into_inner()) else { return };
        let level = match level {
            Level::Info => TRNBAKE_INFO,
            Level::Warning => TRNBAKE_WARNING,
            _ => TRNBAKE_NOTE,
        };
        let text = CString::new(text.replace('\0', "\\0")).expect("NULs were replaced");
        // SAFETY: the caller of trnbake_set_message_callback promised a callable function and
        // a user_data it may receive from any thread.
        unsafe { callback(level, text.as_ptr(), user_data as *mut c_void) };
    }
}

/// Sets the function that receives the library's notes and warnings (the library never
/// prints); NULL removes it, and then messages are dropped (the default).
///
/// The callback may run on any thread that calls into the library (during
/// `trnbake_terrain_open`, for the warnings of the terrain's plan), possibly on several at
/// once: it must be thread-safe, and must not call back into the library.
///
/// # Safety
/// `callback` is NULL or a function callable with the arguments above from any thread until
/// it is replaced; `user_data` is whatever that function expects (passed through untouched).
#[no_mangle]
pub unsafe extern "C" fn trnbake_set_message_callback(callback: TrnbakeMessageCallback, user_data: *mut c_void) {
    guard("trnbake_set_message_callback", (), || {
        *CALLBACK.lock().unwrap_or_else(|e| e.into_inner()) = callback.map(|f| (f, user_data as usize));
        Ok(())
    })
}

/// The last error message of this thread, or NULL when the last call succeeded.
///
/// The string is owned by the library and valid until the next call of this thread into the
/// library; copy it to keep it. Errors are per thread: another thread's failure never shows here.
#[no_mangle]
pub extern "C" fn trnbake_last_error() -> *const c_char {
    LAST_ERROR.with(|slot| slot.borrow().as_ref().map_or(std::ptr::null(), |c| c.as_ptr()))
}

/// The library's version (`"0.1.0"`), a static string.
#[no_mangle]
pub extern "C" fn trnbake_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The exact ground height at world (x, z) in metres: x east, z north, the origin at the map
/// centre. The same height, bit for bit, as `trnbake sample` and a bake.
///
/// Returns NaN with `trnbake_last_error()` set on error: a NULL handle, or a point off the
/// map (outside -width/2 .. width/2 on either axis, edges included on the map, or NaN); the
/// message names the point and the map's extent.
///
/// # Safety
/// `t` is NULL or a handle from `trnbake_terrain_open` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn trnbake_height_at(t: *const TrnbakeTerrain, x: f32, z: f32) -> f32 {
    guard("trnbake_height_at", f32::NAN, || Ok(terrain(t)?.heights.try_height_at(x, z)?))
}

/// Heights at `n` points (`xs[i]`, `zs[i]`) into `out[i]`, evaluated in parallel on the
/// library's thread pool (all cores). Equal, bit for bit, to `n` calls of `trnbake_height_at`.
///
/// `out` may be `xs` or `zs` (the points are read before any height is written). Returns 0
/// when every point is on the map. A point off the map gets NaN, as in `trnbake_height_at`:
/// then the return is the number of such points (positive), the other heights are set, and
/// `trnbake_last_error()` names the first one. A negative return is a failure (a NULL
/// pointer, a list too long for memory), with `trnbake_last_error()` set and `out` unspecified.
///
/// # Safety
/// `t` is NULL or a live handle; `xs`, `zs` and `out` are NULL or point to `n` floats each.
#[no_mangle]
pub unsafe extern "C" fn trnbake_heights(t: *const TrnbakeTerrain, n: usize, xs: *const f32, zs: *const f32, out: *mut f32) -> c_int {
    guard("trnbake_heights", -1, || {
        // In parallel, each point with the layers that touch it: bit-identical to single calls.
        point_batch(t, n, xs, zs, out, |h, points, out| h.heights_at_into(points, out))
    })
}

/// The body of the batch point queries (`trnbake_heights`, `trnbake_slopes`): checks the
/// pointers and length, copies the points (so an `out` that is `xs` or `zs` never aliases a
/// live shared slice; reserved fallibly, so a list larger than memory is an error return,
/// never an abort), runs `eval` (which writes NaN off the map and returns how many such
/// points), and names the first off-map point in `trnbake_last_error()`.
///
/// # Safety
/// As the callers': `xs`, `zs` and `out` are NULL or point to `n` floats each.
unsafe fn point_batch(
    t: *const TrnbakeTerrain,
    n: usize,
    xs: *const f32,
    zs: *const f32,
    out: *mut f32,
    eval: impl FnOnce(&HeightEvaluator, &[(f32, f32)], &mut [f32]) -> usize,
) -> Result<c_int, CapiError> {
    let t = terrain(t)?;
    for (p, what) in [(xs, "xs"), (zs, "zs"), (out.cast_const(), "out")] {
        if p.is_null() {
            return Err(CapiError::Null(what));
        }
    }
    check_len("the point list", n)?;
    let mut points: Vec<(f32, f32)> = Vec::new();
    points.try_reserve_exact(n).map_err(|_| CapiError::TooLong { what: "the point list", n })?;
    {
        let (xs, zs) = (std::slice::from_raw_parts(xs, n), std::slice::from_raw_parts(zs, n));
        points.extend(xs.iter().copied().zip(zs.iter().copied()));
    }
    let off = eval(&t.heights, &points, std::slice::from_raw_parts_mut(out, n));
    if off > 0 {
        let &(x, z) = points.iter().find(|&&(x, z)| !t.heights.on_map(x, z)).expect("a point is off the map");
        let first = OffMap::Point { x, z, half: t.heights.half_width() };
        set_error(&CapiError::SomeOffMap { count: off, n, first });
        return Ok(c_int::try_from(off).unwrap_or(c_int::MAX));
    }
    Ok(0)
}

/// Heights of a region of posts into the caller's buffer: `cols × rows` posts at
/// (x0 + i·spacing, z0 + j·spacing), row-major with row 0 the southernmost, so post (i, j) is
/// `out[j * cols + i]`. Post positions are computed in single precision as the bake's grid
/// does (`(float)x0 + (float)i * (float)spacing`), so a region gives the same heights as a bake
/// of the same grid. Evaluated in parallel, in blocks that each skip the layers not touching them.
///
/// A region reaching past the map's edge is baked as `trnbake bake` bakes it (the posts outside
/// hold what the rules give there); a region wholly off the map, or whose posts are not finite
/// single-precision coordinates (x0 = 1e300, say), is refused.
///
/// Returns 0 on success; non-zero with `trnbake_last_error()` set when the handle or `out` is
/// NULL, the region is empty or off the map, `spacing` is not finite and positive, or
/// `out_len < cols * rows`.
///
/// # Safety
/// `t` is NULL or a live handle; `out` is NULL or points to `out_len` floats.
#[no_mangle]
pub unsafe extern "C" fn trnbake_bake_region(
    t: *const TrnbakeTerrain,
    x0: f64,
    z0: f64,
    spacing: f64,
    cols: u32,
    rows: u32,
    out: *mut f32,
    out_len: usize,
) -> c_int {
    guard("trnbake_bake_region", -1, || {
        let t = terrain(t)?;
        if out.is_null() {
            return Err(CapiError::Null("out"));
        }
        let grid = Grid { cols, rows, x0, z0, spacing };
        grid.check_dims()?;
        t.heights.check_region(&grid)?;
        let need = grid.len();
        if out_len < need {
            return Err(CapiError::ShortBuffer { have: out_len, need, cols, rows });
        }
        check_len("out", need)?;
        let out = std::slice::from_raw_parts_mut(out, need);
        t.heights.grid_region(&grid, 0, 0, cols, rows, CPU_CULL_BLOCK, out);
        Ok(0)
    })
}

/// The water surface height at world (x, z): the highest of the global water table and the
/// local tables (polygons, rectangles, rivers, ribbons) covering the point.
///
/// Returns 1 and sets `*out` when there is water there, 0 (leaving `*out` alone) when there is
/// none, and a negative value with `trnbake_last_error()` set on error (a NULL pointer, a
/// point off the map as `trnbake_height_at` refuses it).
///
/// # Safety
/// `t` is NULL or a live handle; `out` is NULL or points to one float.
#[no_mangle]
pub unsafe extern "C" fn trnbake_water_height_at(t: *const TrnbakeTerrain, x: f32, z: f32, out: *mut f32) -> c_int {
    guard("trnbake_water_height_at", -1, || {
        let t = terrain(t)?;
        let out = out.as_mut().ok_or(CapiError::Null("out"))?;
        if !t.heights.on_map(x, z) {
            return Err(OffMap::Point { x, z, half: t.heights.half_width() }.into());
        }
        Ok(match t.water.height_at(x, z) {
            Some(h) => {
                *out = h;
                1
            }
            None => 0,
        })
    })
}

/// The map's width in metres (the map spans -width/2 .. width/2 on both axes), or NaN with
/// `trnbake_last_error()` set for a NULL handle.
///
/// # Safety
/// `t` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn trnbake_map_width(t: *const TrnbakeTerrain) -> f32 {
    guard("trnbake_map_width", f32::NAN, || Ok(terrain(t)?.map_width))
}

/// The ground's unit normal at world (x, z) into `out[0..3]` (x east, y up, z north): central
/// differences of the exact heights 2 m either side.
///
/// Returns 0, or a negative value with `trnbake_last_error()` set (a NULL pointer, a point off
/// the map; `out` is then left alone).
///
/// # Safety
/// `t` is NULL or a live handle; `out` is NULL or points to 3 floats.
#[no_mangle]
pub unsafe extern "C" fn trnbake_normal_at(t: *const TrnbakeTerrain, x: f32, z: f32, out: *mut f32) -> c_int {
    guard("trnbake_normal_at", -1, || {
        let t = terrain(t)?;
        if out.is_null() {
            return Err(CapiError::Null("out"));
        }
        let n = t.heights.normal_at(x, z)?;
        std::slice::from_raw_parts_mut(out, 3).copy_from_slice(&n);
        Ok(0)
    })
}

/// The ground's slope at world (x, z) in degrees (0 flat), from `trnbake_normal_at`; NaN with
/// `trnbake_last_error()` set on error (a NULL handle, a point off the map).
///
/// # Safety
/// `t` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn trnbake_slope_at(t: *const TrnbakeTerrain, x: f32, z: f32) -> f32 {
    guard("trnbake_slope_at", f32::NAN, || Ok(terrain(t)?.heights.slope_at(x, z)?))
}

/// Slopes at `n` points (`xs[i]`, `zs[i]`) into `out[i]`, in parallel; equal to `n` calls of
/// `trnbake_slope_at`. Returns as `trnbake_heights` does: 0, the number of points off the map
/// (NaN there, `trnbake_last_error()` names the first), or a negative value on failure.
///
/// # Safety
/// `t` is NULL or a live handle; `xs`, `zs` and `out` are NULL or point to `n` floats each.
#[no_mangle]
pub unsafe extern "C" fn trnbake_slopes(t: *const TrnbakeTerrain, n: usize, xs: *const f32, zs: *const f32, out: *mut f32) -> c_int {
    guard("trnbake_slopes", -1, || point_batch(t, n, xs, zs, out, |h, points, out| h.slopes_at_into(points, out)))
}

/// The lowest and highest ground over the box [x0, x1] × [z0, z1] into `*min` and `*max`,
/// exact at the posts (x0 + i·spacing, z0 + j·spacing) and along the box's east and north
/// edges (Core3's highest / lowest / height-difference queries). Evaluated in parallel.
///
/// Returns 0, or a negative value with `trnbake_last_error()` set (a NULL pointer, a box not
/// wholly on the map, a spacing that is not positive, more than 2^30 posts).
///
/// # Safety
/// `t` is NULL or a live handle; `min` and `max` are NULL or point to one float each.
#[no_mangle]
pub unsafe extern "C" fn trnbake_height_range(
    t: *const TrnbakeTerrain,
    x0: f32,
    z0: f32,
    x1: f32,
    z1: f32,
    spacing: f32,
    min: *mut f32,
    max: *mut f32,
) -> c_int {
    guard("trnbake_height_range", -1, || {
        let t = terrain(t)?;
        let min = min.as_mut().ok_or(CapiError::Null("min"))?;
        let max = max.as_mut().ok_or(CapiError::Null("max"))?;
        let r = t.heights.height_range(x0, z0, x1, z1, spacing)?;
        (*min, *max) = (r.min, r.max);
        Ok(0)
    })
}

/// Whether the segment from (ax, ay, az) to (bx, by, bz) (y up) clears the terrain: 1 clear,
/// 0 blocked (the ground is above the segment at a sample), negative with
/// `trnbake_last_error()` set on error (an end off the map, a height not finite, a step that
/// is not positive). The ground is sampled at both ends and at most `step` m apart between
/// (horizontally); a ridge narrower than `step` may fall between samples (docs/src/servers.md).
///
/// # Safety
/// `t` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn trnbake_line_of_sight(t: *const TrnbakeTerrain, ax: f32, ay: f32, az: f32, bx: f32, by: f32, bz: f32, step: f32) -> c_int {
    guard("trnbake_line_of_sight", -1, || Ok(c_int::from(terrain(t)?.heights.line_of_sight([ax, ay, az], [bx, by, bz], step)?)))
}

/// `trnbake_line_of_sight` of `n` segments in parallel: segment i is `segments[6i .. 6i+6]`
/// = ax, ay, az, bx, by, bz; `out[i]` is 1 clear, 0 blocked, -1 refused. Returns 0 when none
/// is refused, the number refused (positive; `trnbake_last_error()` names the first), or a
/// negative value on failure (a NULL pointer, a step that is not positive).
///
/// # Safety
/// `t` is NULL or a live handle; `segments` is NULL or points to `6 n` floats, `out` to `n` ints.
#[no_mangle]
pub unsafe extern "C" fn trnbake_lines_of_sight(t: *const TrnbakeTerrain, n: usize, segments: *const f32, step: f32, out: *mut c_int) -> c_int {
    guard("trnbake_lines_of_sight", -1, || {
        let t = terrain(t)?;
        if segments.is_null() {
            return Err(CapiError::Null("segments"));
        }
        if out.is_null() {
            return Err(CapiError::Null("out"));
        }
        check_len("the segment list", n.saturating_mul(6))?;
        let mut segs: Vec<[f32; 6]> = Vec::new();
        segs.try_reserve_exact(n).map_err(|_| CapiError::TooLong { what: "the segment list", n })?;
        segs.extend(std::slice::from_raw_parts(segments, n * 6).chunks_exact(6).map(|c| [c[0], c[1], c[2], c[3], c[4], c[5]]));
        let mut flags = Vec::new();
        flags.try_reserve_exact(n).map_err(|_| CapiError::TooLong { what: "the segment list", n })?;
        flags.resize(n, 0i8);
        let refused = t.heights.lines_of_sight_into(&segs, step, &mut flags)?;
        for (o, &f) in std::slice::from_raw_parts_mut(out, n).iter_mut().zip(&flags) {
            *o = c_int::from(f);
        }
        if refused > 0 {
            let first = flags.iter().position(|&f| f < 0).expect("a segment is refused");
            let s = segs[first];
            let why = match t.heights.line_of_sight([s[0], s[1], s[2]], [s[3], s[4], s[5]], step) {
                Err(e) => e.to_string(),
                Ok(_) => "refused".into(),
            };
            set_error(&CapiError::SomeRefused { count: refused, n, first, why });
            return Ok(c_int::try_from(refused).unwrap_or(c_int::MAX));
        }
        Ok(0)
    })
}

/// Frees a handle from `trnbake_terrain_open`. NULL is ignored. Call it once, after every
/// thread using the handle is done with it.
///
/// # Safety
/// `t` is NULL or a live handle, not used again afterwards.
#[no_mangle]
pub unsafe extern "C" fn trnbake_terrain_free(t: *mut TrnbakeTerrain) {
    guard("trnbake_terrain_free", (), || {
        if !t.is_null() {
            drop(Box::from_raw(t));
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last_error() -> Option<String> {
        let p = trnbake_last_error();
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }

    #[test]
    fn a_panic_becomes_an_error_return() {
        let v = guard("test_fn", -7, || -> Result<i32, CapiError> { panic!("boom {}", 42) });
        assert_eq!(v, -7);
        assert_eq!(last_error().as_deref(), Some("panic inside test_fn: boom 42"));
        // A static-string panic too, and the next successful call clears the message.
        let v = guard("test_fn", f32::NAN, || -> Result<f32, CapiError> { panic!("static") });
        assert!(v.is_nan());
        assert_eq!(last_error().as_deref(), Some("panic inside test_fn: static"));
        assert_eq!(guard("test_fn", 0, || Ok(1)), 1);
        assert_eq!(last_error(), None);
    }

    #[test]
    fn errors_are_per_thread() {
        let _ = unsafe { trnbake_height_at(std::ptr::null(), 0.0, 0.0) };
        assert!(last_error().is_some());
        std::thread::spawn(|| assert_eq!(last_error(), None)).join().unwrap();
    }

    #[test]
    fn the_chain_is_joined() {
        let e = CapiError::Plan { path: "a/b.trn".into(), error: PlanError::TooDeep(99) };
        assert!(error_chain(&e).starts_with("a/b.trn: the layer tree is nested 99 deep"), "{}", error_chain(&e));
    }

    #[test]
    fn interior_nul_is_shown() {
        set_error(&CapiError::Null("a\0b"));
        assert_eq!(last_error().as_deref(), Some("a\\0b is NULL"));
    }

    #[test]
    fn version_is_the_crate_version() {
        let v = unsafe { CStr::from_ptr(trnbake_version()) };
        assert_eq!(v.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }
}
