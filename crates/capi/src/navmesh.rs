//! Paths over a navmesh set from C (the optional `navmesh` feature): a set written by
//! `trnbake navmesh` loaded through Detour ([`trnbake_navmesh::Navmesh`]), and the straight
//! path between two points given without heights, as `trnbake navmesh path` prints it.
//!
//! The feature builds Recast/Detour from C++ sources (cmake, libclang), so the default library
//! leaves it out; in the header these declarations are inside `#if defined(TRNBAKE_NAVMESH)`:
//! a program that uses them defines `TRNBAKE_NAVMESH` and links a library built with
//! `--features navmesh` (and the C++ runtime, `-lstdc++`, with the static library).

use std::ffi::{c_char, c_int};

use trnbake_navmesh::{Navmesh, NavmeshError};

use crate::{c_path, check_len, guard, set_error, CapiError};

/// `trnbake_navmesh_path`: the path was found; `*count` corners are in `out_xyz`.
pub const TRNBAKE_PATH_FOUND: c_int = 0;
/// `trnbake_navmesh_path`: both ends are on the navmesh but it does not connect them;
/// `*count` is 0.
pub const TRNBAKE_NO_PATH: c_int = 1;
/// `trnbake_navmesh_path`: a NULL handle or pointer, a failing Detour query, or a caught panic
/// (`trnbake_last_error()` says which).
pub const TRNBAKE_PATH_ERROR: c_int = -1;
/// `trnbake_navmesh_path`: an end has no walkable polygon under it (outside the set's region,
/// too steep, in deep water, or in shallow water without wading); the message names the point.
pub const TRNBAKE_PATH_OFF_MESH: c_int = -2;
/// `trnbake_navmesh_path`: the path has more corners than `capacity`; `*count` is set to the
/// number needed (call again with a buffer of `3 * *count` floats), `out_xyz` is unspecified.
pub const TRNBAKE_PATH_SHORT_BUFFER: c_int = -3;

/// A navmesh set loaded into Detour, with its query object. Opaque to C.
///
/// One handle may be shared by threads: the calls on it take turns on Detour's query object
/// (it is not thread-safe); open one handle per thread for parallel paths. Free it once with
/// `trnbake_navmesh_free` after all of them are done.
pub struct TrnbakeNavmesh {
    nav: Navmesh,
}

// The promise the header makes to C++ threads, checked when this crate compiles.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<TrnbakeNavmesh>();
};

/// Opens a navmesh set (`navmesh.bin`, or one `navmesh_COL_ROW.bin` of a split region, as
/// `trnbake navmesh` writes them) and loads every tile into Detour.
///
/// Returns NULL on failure; then `trnbake_last_error()` says why (a missing file, a file that
/// is not a set, a tile Detour refuses). Free the handle with `trnbake_navmesh_free`.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn trnbake_navmesh_open(path: *const c_char) -> *mut TrnbakeNavmesh {
    guard("trnbake_navmesh_open", std::ptr::null_mut(), || {
        let path = c_path(path, "path")?;
        let nav = Navmesh::open(&path)?;
        Ok(Box::into_raw(Box::new(TrnbakeNavmesh { nav })))
    })
}

/// The straight path from world (x0, z0) to (x1, z1) (x east, z north): each end is put on the
/// navmesh's polygon under it, at any height, and Detour's path joins them; its corners go to
/// `out_xyz` as x, y, z triples (y up: the mesh's height), from the start to the end. Only
/// walkable polygons are used, shallow water too when `wade` is non-zero. The same corners as
/// `trnbake navmesh path` prints.
///
/// `out_xyz` holds `capacity` corners (`3 * capacity` floats); it may be NULL when `capacity`
/// is 0, to ask for the count alone.
///
/// Returns `TRNBAKE_PATH_FOUND` (0) with the corners written and `*count` set to their number;
/// `TRNBAKE_NO_PATH` (1) when the navmesh does not connect the ends (`*count` = 0); or a
/// negative code with `trnbake_last_error()` set: `TRNBAKE_PATH_OFF_MESH` (an end with no
/// walkable polygon under it), `TRNBAKE_PATH_SHORT_BUFFER` (`*count` = the corners needed),
/// `TRNBAKE_PATH_ERROR` (a NULL handle or `count`, `out_xyz` NULL with a non-zero capacity, a
/// failing Detour query).
///
/// # Safety
/// `nav` is NULL or a handle from `trnbake_navmesh_open` not yet freed; `out_xyz` is NULL or
/// points to `3 * capacity` floats; `count` is NULL or points to one `size_t`.
#[no_mangle]
pub unsafe extern "C" fn trnbake_navmesh_path(
    nav: *const TrnbakeNavmesh,
    x0: f32,
    z0: f32,
    x1: f32,
    z1: f32,
    wade: c_int,
    out_xyz: *mut f32,
    capacity: usize,
    count: *mut usize,
) -> c_int {
    guard("trnbake_navmesh_path", TRNBAKE_PATH_ERROR, || {
        let nav = nav.as_ref().ok_or(CapiError::Null("the navmesh handle"))?;
        let count = count.as_mut().ok_or(CapiError::Null("count"))?;
        if out_xyz.is_null() && capacity > 0 {
            return Err(CapiError::Null("out_xyz"));
        }
        check_len("out_xyz", capacity.saturating_mul(3))?;
        *count = 0;
        let corners = match nav.nav.ground_path((x0, z0), (x1, z1), wade != 0) {
            Ok(Some(c)) => c,
            Ok(None) => return Ok(TRNBAKE_NO_PATH),
            Err(e @ NavmeshError::OffMesh { .. }) => {
                set_error(&CapiError::from(e));
                return Ok(TRNBAKE_PATH_OFF_MESH);
            }
            Err(e) => return Err(e.into()),
        };
        if corners.len() > capacity {
            *count = corners.len();
            set_error(&CapiError::ShortPath { have: capacity, need: corners.len() });
            return Ok(TRNBAKE_PATH_SHORT_BUFFER);
        }
        if !corners.is_empty() {
            // Not for an empty path: `out_xyz` may then be NULL, which no slice may be.
            let out = std::slice::from_raw_parts_mut(out_xyz, corners.len() * 3);
            for (o, c) in out.chunks_exact_mut(3).zip(&corners) {
                o.copy_from_slice(c);
            }
        }
        *count = corners.len();
        Ok(TRNBAKE_PATH_FOUND)
    })
}

/// Frees a handle from `trnbake_navmesh_open`. NULL is ignored. Call it once, after every
/// thread using the handle is done with it.
///
/// # Safety
/// `nav` is NULL or a live handle, not used again afterwards.
#[no_mangle]
pub unsafe extern "C" fn trnbake_navmesh_free(nav: *mut TrnbakeNavmesh) {
    guard("trnbake_navmesh_free", (), || {
        if !nav.is_null() {
            drop(Box::from_raw(nav));
        }
        Ok(())
    })
}
