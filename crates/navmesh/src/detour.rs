//! Detour over a loaded set: what a server does with `navmesh.bin` (load every tile, find the
//! polygon under a point, its height, a path and its straight path), used by `trnbake navmesh
//! path`, the C API, the Python package and the tests.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use recastnavigation_sys as rc;

use crate::error::NavmeshError;
use crate::set::{read_set, NavmeshSet, SetParams};
use crate::settings::{FLAG_SHALLOW_WATER, FLAG_WALK};

/// Nodes of the path search (Detour's A*): 65,535 is its largest, and 4,096 ran out on a
/// third of 1 km paths (issue #40's notes).
pub const MAX_NODES: i32 = 65_535;
/// Polygons of a path at most.
pub const MAX_PATH_POLYS: usize = 8_192;
/// Half sizes of the box in which [`Navmesh::ground_path`] looks for each end's polygon
/// (the ends are on the ground already, so a small box; 1 m up and down for the detail mesh).
pub const PATH_EXTENTS: [f32; 3] = [0.5, 1.0, 0.5];

fn failed(status: rc::dtStatus) -> bool {
    status & rc::DT_FAILURE != 0
}

/// A `dtNavMeshQuery`: it keeps its node pool and open list between calls, so one may run at a
/// time (the Mutex in [`Navmesh`]).
struct Query(*mut rc::dtNavMeshQuery);

/// A Detour navmesh with every tile of a set loaded, and one query object behind a mutex.
///
/// `Send + Sync`: the `dtNavMesh` is only read once its tiles are loaded (every query reads
/// it through `const` methods), the query object, which is not thread-safe, is used only under
/// the lock, and the filter is plain data (Detour built without `DT_VIRTUAL_QUERYFILTER`)
/// changed only through `&mut self`. Threads sharing one `Navmesh` take turns on the query;
/// open one per thread for parallel queries.
pub struct Navmesh {
    mesh: *mut rc::dtNavMesh,
    query: Mutex<Query>,
    filter: rc::dtQueryFilter,
    /// The set's parameters.
    pub params: SetParams,
    /// Tiles loaded.
    pub tiles: usize,
}

impl Drop for Navmesh {
    fn drop(&mut self) {
        let query = self.query.get_mut().unwrap_or_else(|e| e.into_inner()).0;
        // SAFETY: both came from dtAlloc* and are freed once; the query before the mesh it reads.
        unsafe {
            if !query.is_null() {
                rc::dtFreeNavMeshQuery(query);
            }
            if !self.mesh.is_null() {
                rc::dtFreeNavMesh(self.mesh);
            }
        }
    }
}

// SAFETY: the Detour objects are owned by this value alone and have no thread affinity.
unsafe impl Send for Navmesh {}
// SAFETY: see the type's documentation: the mesh is read-only after `from_set`, the query is
// only reached through the Mutex, and `&self` methods only read the filter.
unsafe impl Sync for Navmesh {}

impl Navmesh {
    /// Loads a set file (`navmesh.bin`) into Detour; every tile must load.
    pub fn open(path: &Path) -> Result<Navmesh, NavmeshError> {
        Navmesh::from_set(read_set(path)?)
    }

    /// Loads a set read into memory into Detour; every tile must load.
    pub fn from_set(set: NavmeshSet) -> Result<Navmesh, NavmeshError> {
        let p = set.params;
        let params = rc::dtNavMeshParams { orig: p.orig, tileWidth: p.tile_width, tileHeight: p.tile_height, maxTiles: p.max_tiles, maxPolys: p.max_polys };
        // SAFETY: allocation results are checked; tile data is handed over in dtAlloc'd
        // buffers with DT_TILE_FREE_DATA, so Detour frees them with the mesh.
        unsafe {
            let mut nm =
                Navmesh { mesh: rc::dtAllocNavMesh(), query: Mutex::new(Query(rc::dtAllocNavMeshQuery())), filter: default_filter(), params: p, tiles: 0 };
            let query = nm.query.get_mut().unwrap_or_else(|e| e.into_inner()).0;
            if nm.mesh.is_null() || query.is_null() {
                return Err(NavmeshError::Detour { what: "allocation".into(), status: 0 });
            }
            let st = (*nm.mesh).init(&params);
            if failed(st) {
                return Err(NavmeshError::Detour { what: format!("dtNavMesh::init (maxTiles {}, maxPolys {})", p.max_tiles, p.max_polys), status: st });
            }
            for (i, (tile_ref, data)) in set.tiles.into_iter().enumerate() {
                let buf = rc::dtAlloc(data.len(), rc::dtAllocHint_DT_ALLOC_PERM) as *mut u8;
                if buf.is_null() {
                    return Err(NavmeshError::Detour { what: format!("allocating tile {i}"), status: 0 });
                }
                std::ptr::copy_nonoverlapping(data.as_ptr(), buf, data.len());
                let st = (*nm.mesh).addTile(buf, data.len() as i32, rc::dtTileFlags_DT_TILE_FREE_DATA as i32, tile_ref, std::ptr::null_mut());
                if failed(st) {
                    rc::dtFree(buf.cast());
                    return Err(NavmeshError::Detour { what: format!("dtNavMesh::addTile of tile {i} (ref {tile_ref:#x})"), status: st });
                }
                nm.tiles += 1;
            }
            let st = (*query).init(nm.mesh, MAX_NODES);
            if failed(st) {
                return Err(NavmeshError::Detour { what: "dtNavMeshQuery::init".into(), status: st });
            }
            Ok(nm)
        }
    }

    /// The query object, for one call at a time. A panic while it was held (in Rust code
    /// around a Detour call, never inside one) leaves it as consistent as Detour left it: every
    /// query starts by resetting its own state.
    fn query(&self) -> MutexGuard<'_, Query> {
        self.query.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Only polygons with any of `include` and none of `exclude` (the `FLAG_*` constants) are
    /// used by the queries that follow (Detour's `dtQueryFilter::passFilter`).
    pub fn set_flags(&mut self, include: u16, exclude: u16) {
        self.filter.m_includeFlags = include;
        self.filter.m_excludeFlags = exclude;
    }

    /// The nearest polygon to (x, y, z) within `extents` (half sizes), and the nearest point on
    /// it; None when no polygon is that close.
    pub fn nearest(&self, pos: [f32; 3], extents: [f32; 3]) -> Result<Option<(u32, [f32; 3])>, NavmeshError> {
        nearest(&self.query(), &self.filter, pos, extents)
    }

    /// The navmesh's height at (x, z): the nearest polygon under or over the point within
    /// `reach` metres vertically (searched around height `y`), and the detail mesh's height
    /// there; None when no polygon covers (x, z).
    pub fn height_at(&self, x: f32, y: f32, z: f32, reach: f32) -> Result<Option<f32>, NavmeshError> {
        let q = self.query();
        let Some((r, p)) = nearest(&q, &self.filter, [x, y, z], [0.01, reach, 0.01])? else { return Ok(None) };
        if (p[0] - x).abs() > 1e-3 || (p[2] - z).abs() > 1e-3 {
            return Ok(None);
        }
        let mut h = 0.0f32;
        // SAFETY: the query is live and held; the position is a local array of 3 floats.
        let st = unsafe { (*q.0).getPolyHeight(r, [x, y, z].as_ptr(), &mut h) };
        if failed(st) {
            return Ok(None);
        }
        Ok(Some(h))
    }

    /// The polygon under world (x, z) and the navmesh's height there, searched over every
    /// height (the surface of a planet has one layer); None when no polygon (of the filter's
    /// flags) covers the point.
    pub fn ground_at(&self, x: f32, z: f32) -> Result<Option<(u32, f32)>, NavmeshError> {
        ground_at(&self.query(), &self.filter, x, z)
    }

    /// The straight path (corner points) from `a` to `b` over the polygons between them, or
    /// None when either end is off the mesh (farther than `extents`) or they do not connect
    /// (the path ends short of `b`: Detour's partial result).
    pub fn straight_path(&self, a: [f32; 3], b: [f32; 3], extents: [f32; 3]) -> Result<Option<Vec<[f32; 3]>>, NavmeshError> {
        straight_path(&self.query(), &self.filter, a, b, extents)
    }

    /// The straight path between two points given without heights, as `trnbake navmesh path`,
    /// the C API's `trnbake_navmesh_path` and Python's `Navmesh.path` ask for it: each end is
    /// put on the polygon under it (at any height: [`Navmesh::ground_at`]), then Detour's
    /// path and straight path join them. Only walkable polygons are used, shallow water too
    /// when `wade` (its own filter: the one of [`Navmesh::set_flags`] is left alone).
    ///
    /// The corners are `[x, y, z]` (y up: the mesh's height), from `a` to `b`. An end with no
    /// usable polygon under it is [`NavmeshError::OffMesh`]; ends that Detour does not connect
    /// give `Ok(None)`.
    pub fn ground_path(&self, a: (f32, f32), b: (f32, f32), wade: bool) -> Result<Option<Vec<[f32; 3]>>, NavmeshError> {
        let filter = rc::dtQueryFilter { m_includeFlags: FLAG_WALK, m_excludeFlags: if wade { 0 } else { FLAG_SHALLOW_WATER }, ..default_filter() };
        // One lock for the whole query, so another thread's call cannot come between its steps.
        let q = self.query();
        let ground = |(x, z): (f32, f32)| -> Result<[f32; 3], NavmeshError> {
            match ground_at(&q, &filter, x, z)? {
                Some((_, y)) => Ok([x, y, z]),
                None => Err(NavmeshError::OffMesh { x, z }),
            }
        };
        let (pa, pb) = (ground(a)?, ground(b)?);
        straight_path(&q, &filter, pa, pb, PATH_EXTENTS)
    }
}

fn nearest(q: &Query, filter: &rc::dtQueryFilter, pos: [f32; 3], extents: [f32; 3]) -> Result<Option<(u32, [f32; 3])>, NavmeshError> {
    let mut r: rc::dtPolyRef = 0;
    let mut nearest = [0.0f32; 3];
    // SAFETY: the query is live and its lock held; the pointers are to local arrays of 3 floats.
    let st = unsafe { (*q.0).findNearestPoly(pos.as_ptr(), extents.as_ptr(), filter, &mut r, nearest.as_mut_ptr()) };
    if failed(st) {
        return Err(NavmeshError::Detour { what: "findNearestPoly".into(), status: st });
    }
    Ok((r != 0).then_some((r, nearest)))
}

fn ground_at(q: &Query, filter: &rc::dtQueryFilter, x: f32, z: f32) -> Result<Option<(u32, f32)>, NavmeshError> {
    let mut polys = [0 as rc::dtPolyRef; 256];
    let mut n = 0i32;
    let centre = [x, 0.0, z];
    // SAFETY: the query is live and its lock held; the buffer holds the 256 references Detour
    // is told of.
    let st = unsafe { (*q.0).queryPolygons(centre.as_ptr(), [0.01, 1.0e5, 0.01].as_ptr(), filter, polys.as_mut_ptr(), &mut n, 256) };
    if failed(st) {
        return Err(NavmeshError::Detour { what: "queryPolygons".into(), status: st });
    }
    for &r in &polys[..n.max(0) as usize] {
        let mut h = 0.0f32;
        // SAFETY: as above; getPolyHeight fails when (x, z) is outside the polygon.
        let st = unsafe { (*q.0).getPolyHeight(r, centre.as_ptr(), &mut h) };
        if !failed(st) {
            return Ok(Some((r, h)));
        }
    }
    Ok(None)
}

fn straight_path(q: &Query, filter: &rc::dtQueryFilter, a: [f32; 3], b: [f32; 3], extents: [f32; 3]) -> Result<Option<Vec<[f32; 3]>>, NavmeshError> {
    let (Some((ra, pa)), Some((rb, pb))) = (nearest(q, filter, a, extents)?, nearest(q, filter, b, extents)?) else { return Ok(None) };
    let mut polys = vec![0 as rc::dtPolyRef; MAX_PATH_POLYS];
    let mut npolys = 0i32;
    // SAFETY: the query is live and its lock held; buffers are sized as Detour is told.
    unsafe {
        let st = (*q.0).findPath(ra, rb, pa.as_ptr(), pb.as_ptr(), filter, polys.as_mut_ptr(), &mut npolys, MAX_PATH_POLYS as i32);
        if failed(st) {
            return Err(NavmeshError::Detour { what: "findPath".into(), status: st });
        }
        if npolys == 0 || polys[npolys as usize - 1] != rb || st & rc::DT_PARTIAL_RESULT != 0 {
            return Ok(None);
        }
        let mut pts = vec![0.0f32; MAX_PATH_POLYS * 3];
        let mut flags = vec![0u8; MAX_PATH_POLYS];
        let mut refs = vec![0 as rc::dtPolyRef; MAX_PATH_POLYS];
        let mut n = 0i32;
        let st = (*q.0).findStraightPath(
            pa.as_ptr(),
            pb.as_ptr(),
            polys.as_ptr(),
            npolys,
            pts.as_mut_ptr(),
            flags.as_mut_ptr(),
            refs.as_mut_ptr(),
            &mut n,
            MAX_PATH_POLYS as i32,
            0,
        );
        if failed(st) {
            return Err(NavmeshError::Detour { what: "findStraightPath".into(), status: st });
        }
        Ok(Some((0..n as usize).map(|i| [pts[i * 3], pts[i * 3 + 1], pts[i * 3 + 2]]).collect()))
    }
}

/// `dtQueryFilter()`'s defaults: every area costs 1, every polygon included.
fn default_filter() -> rc::dtQueryFilter {
    rc::dtQueryFilter { m_areaCost: [1.0; rc::DT_MAX_AREAS as usize], m_includeFlags: 0xffff, m_excludeFlags: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{build_navmesh, NavmeshRequest, NavmeshSettings};
    use trnbake_swg::eval::HeightEvaluator;
    use trnbake_swg::plan::HeightOptions;
    use trnbake_swg::report::NullReporter;
    use trnbake_swg::water::WaterTables;

    // The promise the C API and Python make (one navmesh shared by threads), checked at compile time.
    const _: () = {
        const fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Navmesh>();
    };

    /// A navmesh of 128 m of the built-in demo terrain (one tile), built into a temp folder.
    fn demo_navmesh() -> Navmesh {
        let terrain = trnbake_swg::model::json::demo_terrain();
        let heights = HeightEvaluator::new(&terrain, &HeightOptions::default()).unwrap();
        let water = WaterTables::new(&terrain);
        let out = std::env::temp_dir().join(format!("trnbake-navmesh-detour-{}", std::process::id()));
        let req = NavmeshRequest {
            heights: &heights,
            water: &water,
            settings: NavmeshSettings::default(),
            region: Some([0.0, 0.0, 128.0, 128.0]),
            out_dir: out.clone(),
            source_id: "demo".into(),
            obj: false,
            reporter: &NullReporter,
        };
        build_navmesh(&req).unwrap();
        let nav = Navmesh::open(&out.join("navmesh.bin")).unwrap();
        let _ = std::fs::remove_dir_all(&out);
        nav
    }

    #[test]
    fn ground_paths_start_and_end_on_the_ground_under_their_points() {
        let mut nav = demo_navmesh();
        // Points of a 4 m lattice with a polygon under them (dry feet).
        nav.set_flags(FLAG_WALK, FLAG_SHALLOW_WATER);
        let on: Vec<(f32, f32)> =
            (1..32).flat_map(|i| (1..32).map(move |j| (i as f32 * 4.0, j as f32 * 4.0))).filter(|&(x, z)| nav.ground_at(x, z).unwrap().is_some()).collect();
        assert!(on.len() > 500, "{} of 961 lattice points are on the mesh", on.len());
        let (a, b) = (on[0], on[on.len() - 1]);
        let path = nav.ground_path(a, b, false).unwrap().expect("the corners of the region are connected");
        let (first, last) = (path[0], path[path.len() - 1]);
        assert_eq!((first[0], first[2]), a);
        assert_eq!((last[0], last[2]), b);
        // The ends' heights are those of the polygons under them, as `ground_at` finds them.
        assert_eq!(first[1], nav.ground_at(a.0, a.1).unwrap().unwrap().1);
        assert_eq!(last[1], nav.ground_at(b.0, b.1).unwrap().unwrap().1);

        // Outside the region: OffMesh, naming the point, whichever end it is.
        for (p, q) in [(a, (500.0, 500.0)), ((500.0, 500.0), a)] {
            match nav.ground_path(p, q, true) {
                Err(NavmeshError::OffMesh { x, z }) => assert_eq!((x, z), (500.0, 500.0)),
                other => panic!("{other:?}"),
            }
        }

        // Threads sharing the navmesh get the same corners (they take turns on the query).
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..10 {
                        assert_eq!(nav.ground_path(a, b, false).unwrap().as_ref(), Some(&path));
                    }
                });
            }
        });
    }
}
