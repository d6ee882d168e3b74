//! Paths over a navmesh set through the C API (the `navmesh` feature; issue #40): a 256 m
//! region of Tatooine is built with trnbake-navmesh's library into a temporary folder, opened
//! with `trnbake_navmesh_open`, and
//! - `trnbake_navmesh_path` gives the corners of `Navmesh::ground_path`, bit for bit, also from
//!   threads sharing one handle;
//! - an end off the mesh, a pair the mesh does not connect, a buffer too small, a NULL handle
//!   and a missing file give their codes and messages;
//! - `tests/c/navmesh_path.c`, compiled against the header with `-DTRNBAKE_NAVMESH` and linked
//!   with the static library (and the C++ runtime), prints the same corners.
//!
//! The real data is `../shared/data/swg` beside the workspace: with `CI=true` a missing file
//! (or compiler) is a failure, elsewhere a printed skip.

mod common;

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

use trnbake::*;
use trnbake_navmesh::{build_navmesh, Navmesh, NavmeshError, NavmeshRequest, NavmeshSettings};
use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::HeightOptions;
use trnbake_swg::report::NullReporter;
use trnbake_swg::water::WaterTables;

/// 256 m of Tatooine (2 × 2 tiles of 128 m at the default settings).
const REGION: [f64; 4] = [0.0, 0.0, 256.0, 256.0];
/// Two dry points of the region that the mesh connects (checked in the test).
const A: (f32, f32) = (50.0, 200.0);
const B: (f32, f32) = (200.0, 50.0);

fn last_error() -> Option<String> {
    let p = trnbake_last_error();
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The set, built once for all the tests of this file (they run in parallel).
fn set() -> Option<&'static Path> {
    static SET: OnceLock<Option<PathBuf>> = OnceLock::new();
    SET.get_or_init(|| {
        let (trn, root) = common::tatooine()?;
        let terrain = Terrain::load(&trn).unwrap();
        let heights = HeightEvaluator::new(&terrain, &HeightOptions { data_root: Some(root), ..Default::default() }).unwrap();
        let water = WaterTables::new(&terrain);
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi-navmesh");
        let req = NavmeshRequest {
            heights: &heights,
            water: &water,
            settings: NavmeshSettings::default(),
            region: Some(REGION),
            out_dir: out.clone(),
            source_id: "tatooine".into(),
            obj: false,
            reporter: &NullReporter,
        };
        build_navmesh(&req).unwrap();
        Some(out.join("navmesh.bin"))
    })
    .as_deref()
}

struct Handle(*mut TrnbakeNavmesh);
// SAFETY: the C API promises a navmesh handle may be shared by threads (TrnbakeNavmesh is Sync).
unsafe impl Sync for Handle {}
unsafe impl Send for Handle {}

impl Drop for Handle {
    fn drop(&mut self) {
        unsafe { trnbake_navmesh_free(self.0) };
    }
}

fn open(set: &Path) -> Handle {
    let p = CString::new(set.to_str().unwrap()).unwrap();
    let h = unsafe { trnbake_navmesh_open(p.as_ptr()) };
    assert!(!h.is_null(), "{:?}", last_error());
    Handle(h)
}

/// `trnbake_navmesh_path` into a buffer of `capacity` corners: the code, the count, the corners.
fn c_path(h: &Handle, a: (f32, f32), b: (f32, f32), wade: bool, capacity: usize) -> (i32, usize, Vec<[f32; 3]>) {
    let mut xyz = vec![f32::NAN; capacity * 3];
    let mut count = usize::MAX;
    let r = unsafe { trnbake_navmesh_path(h.0, a.0, a.1, b.0, b.1, i32::from(wade), xyz.as_mut_ptr(), capacity, &mut count) };
    let n = if r == TRNBAKE_PATH_FOUND { count } else { 0 };
    (r, count, xyz[..n * 3].chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect())
}

fn bits(path: &[[f32; 3]]) -> Vec<[u32; 3]> {
    path.iter().map(|p| p.map(f32::to_bits)).collect()
}

/// Deterministic pseudo-random points of the region (64-bit LCG, high bits).
fn points(n: usize) -> Vec<(f32, f32)> {
    let mut s = 11u64;
    let mut next = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    (0..n).map(|_| (REGION[0] as f32 + next() * 256.0, REGION[1] as f32 + next() * 256.0)).collect()
}

#[test]
fn paths_through_the_c_api_equal_the_library_s() {
    let Some(set) = set() else { return };
    let nav = Navmesh::open(set).unwrap();
    let want = nav.ground_path(A, B, false).unwrap().expect("A and B are connected");
    assert!(want.len() >= 2);
    let h = open(set);
    let (r, count, got) = c_path(&h, A, B, false, 256);
    assert_eq!((r, count), (TRNBAKE_PATH_FOUND, want.len()), "{:?}", last_error());
    assert_eq!(bits(&got), bits(&want));
    assert_eq!(last_error(), None);
    // Wading: the library's answer too (the ends are dry, so a path exists either way).
    let wade = nav.ground_path(A, B, true).unwrap().expect("connected when wading");
    assert_eq!(bits(&c_path(&h, A, B, true, 256).2), bits(&wade));

    // Four threads on one handle (they take turns on Detour's query object): the same corners.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..20 {
                    let (r, _, got) = c_path(&h, A, B, false, 256);
                    assert_eq!(r, TRNBAKE_PATH_FOUND);
                    assert_eq!(bits(&got), bits(&want));
                }
            });
        }
    });
}

#[test]
fn off_mesh_no_path_short_buffer_and_null_are_told_apart() {
    let Some(set) = set() else { return };
    let nav = Navmesh::open(set).unwrap();
    let h = open(set);

    // An end outside the region: OffMesh in Rust, TRNBAKE_PATH_OFF_MESH in C, naming the point.
    let far = (1000.0, 1000.0);
    let e = nav.ground_path(A, far, false).unwrap_err();
    assert!(matches!(e, NavmeshError::OffMesh { x, z } if (x, z) == far), "{e:?}");
    assert!(e.to_string().contains("1000,1000 is off the navmesh"), "{e}");
    let (r, count, _) = c_path(&h, far, A, false, 16);
    assert_eq!((r, count), (TRNBAKE_PATH_OFF_MESH, 0));
    assert_eq!(last_error().as_deref(), Some(e.to_string().as_str()));

    // A pair the mesh does not connect: the first random point on the mesh, and the first
    // other one that Detour cannot reach from it (Tatooine's rocks leave islands of walkable
    // polygons, and ground under the agent's radius at their feet is not walkable).
    let on_mesh: Vec<(f32, f32)> = points(400).into_iter().filter(|&(x, z)| nav.ground_path((x, z), (x, z), false).is_ok()).collect();
    assert!(on_mesh.len() > 100, "{} of 400 random points are on the mesh", on_mesh.len());
    let pair = on_mesh.iter().take(20).flat_map(|&a| on_mesh.iter().map(move |&b| (a, b))).find(|&(a, b)| nav.ground_path(a, b, false).unwrap().is_none());
    let (a, b) = pair.expect("some two points on the mesh are not connected");
    let (r, count, _) = c_path(&h, a, b, false, 16);
    assert_eq!((r, count), (TRNBAKE_NO_PATH, 0), "{a:?} → {b:?}: {:?}", last_error());
    assert_eq!(last_error(), None, "no path is an answer, not an error");

    // A buffer one corner short, and none at all: the count needed comes back.
    let want = nav.ground_path(A, B, false).unwrap().unwrap().len();
    let (r, count, _) = c_path(&h, A, B, false, want - 1);
    assert_eq!((r, count), (TRNBAKE_PATH_SHORT_BUFFER, want));
    let mut count = 0usize;
    assert_eq!(unsafe { trnbake_navmesh_path(h.0, A.0, A.1, B.0, B.1, 0, null_mut(), 0, &mut count) }, TRNBAKE_PATH_SHORT_BUFFER);
    assert_eq!(count, want);
    assert!(last_error().unwrap().contains(&format!("holds 0 corners, the path has {want}")), "{:?}", last_error());

    // NULL handle, count or buffer; a missing file, a file that is not a set.
    unsafe {
        assert_eq!(trnbake_navmesh_path(null(), A.0, A.1, B.0, B.1, 0, null_mut(), 0, &mut count), TRNBAKE_PATH_ERROR);
        assert_eq!(last_error().as_deref(), Some("the navmesh handle is NULL"));
        assert_eq!(trnbake_navmesh_path(h.0, A.0, A.1, B.0, B.1, 0, null_mut(), 0, null_mut()), TRNBAKE_PATH_ERROR);
        assert_eq!(last_error().as_deref(), Some("count is NULL"));
        assert_eq!(trnbake_navmesh_path(h.0, A.0, A.1, B.0, B.1, 0, null_mut(), 5, &mut count), TRNBAKE_PATH_ERROR);
        assert_eq!(last_error().as_deref(), Some("out_xyz is NULL"));
        let missing = CString::new("no/such/navmesh.bin").unwrap();
        assert!(trnbake_navmesh_open(missing.as_ptr()).is_null());
        assert!(last_error().unwrap().contains("no/such/navmesh.bin"), "{:?}", last_error());
        let json = CString::new(set.with_file_name("navmesh.json").to_str().unwrap()).unwrap();
        assert!(trnbake_navmesh_open(json.as_ptr()).is_null());
        assert!(last_error().unwrap().contains("not a navmesh set"), "{:?}", last_error());
        assert!(trnbake_navmesh_open(null()).is_null());
        trnbake_navmesh_free(null_mut());
    }
}

#[test]
#[cfg(target_os = "linux")]
fn c_navmesh_path_with_the_staticlib() {
    if !common::have("cc") {
        return common::skip_or_fail("no C compiler (`cc`)");
    }
    let lib = common::library("libtrnbake.a");
    let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("navmesh_path");
    let lib = lib.to_str().unwrap();
    let mut args = vec!["-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-DTRNBAKE_NAVMESH", "-Iinclude", "tests/c/navmesh_path.c", lib];
    args.extend(common::static_libs());
    common::compile("cc", &args, &exe);
    let Some(set) = set() else { return };
    let out = common::run(&exe, &[set.to_str().unwrap(), &A.0.to_string(), &A.1.to_string(), &B.0.to_string(), &B.1.to_string()]);
    println!("{out}");
    let want = Navmesh::open(set).unwrap().ground_path(A, B, false).unwrap().unwrap();
    let corners: Vec<[f32; 3]> = out
        .lines()
        .take_while(|l| !l.starts_with("off mesh"))
        .map(|l| {
            let v: Vec<f32> = l.split(',').map(|v| v.parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        })
        .collect();
    assert_eq!(bits(&corners), bits(&want), "%.9g reads back exactly");
    assert!(out.contains("off mesh: the point 7777,7777 is off the navmesh"), "{out}");
    assert!(out.contains("missing file: ") && out.contains("no/such/navmesh.bin"), "{out}");
    assert!(out.ends_with("ok\n"), "{out}");
}
