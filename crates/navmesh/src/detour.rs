//! Detour over a loaded set: what a server does with `navmesh.bin` (load every tile, find the
//! polygon under a point, its height, a path and its straight path), used by `trnbake navmesh
//! path` and the tests.

use std::path::Path;

use recastnavigation_sys as rc;

use crate::error::NavmeshError;
use crate::set::{read_set, NavmeshSet, SetParams};

/// Nodes of the path search (Detour's A*): 65,535 is its largest, and 4,096 ran out on a
/// third of 1 km paths (issue #40's notes).
pub const MAX_NODES: i32 = 65_535;
/// Polygons of a path at most.
pub const MAX_PATH_POLYS: usize = 8_192;

fn failed(status: rc::dtStatus) -> bool {
    status & rc::DT_FAILURE != 0
}

/// A Detour navmesh with every tile of a set loaded, and one query object (not shared between
/// threads: open one `Navmesh` per thread).
pub struct Navmesh {
    mesh: *mut rc::dtNavMesh,
    query: *mut rc::dtNavMeshQuery,
    filter: rc::dtQueryFilter,
    /// The set's parameters.
    pub params: SetParams,
    /// Tiles loaded.
    pub tiles: usize,
}

impl Drop for Navmesh {
    fn drop(&mut self) {
        // SAFETY: both came from dtAlloc* and are freed once; the query before the mesh it reads.
        unsafe {
            if !self.query.is_null() {
                rc::dtFreeNavMeshQuery(self.query);
            }
            if !self.mesh.is_null() {
                rc::dtFreeNavMesh(self.mesh);
            }
        }
    }
}

// SAFETY: the Detour objects are owned by this value alone and have no thread affinity; moving
// them to another thread is fine (sharing them is not, hence no Sync).
unsafe impl Send for Navmesh {}

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
            let mut nm = Navmesh { mesh: rc::dtAllocNavMesh(), query: rc::dtAllocNavMeshQuery(), filter: default_filter(), params: p, tiles: 0 };
            if nm.mesh.is_null() || nm.query.is_null() {
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
            let st = (*nm.query).init(nm.mesh, MAX_NODES);
            if failed(st) {
                return Err(NavmeshError::Detour { what: "dtNavMeshQuery::init".into(), status: st });
            }
            Ok(nm)
        }
    }

    /// Only polygons with all of `include` and none of `exclude` (the `FLAG_*` constants) are
    /// used by the queries that follow.
    pub fn set_flags(&mut self, include: u16, exclude: u16) {
        self.filter.m_includeFlags = include;
        self.filter.m_excludeFlags = exclude;
    }

    /// The nearest polygon to (x, y, z) within `extents` (half sizes), and the nearest point on
    /// it; None when no polygon is that close.
    pub fn nearest(&self, pos: [f32; 3], extents: [f32; 3]) -> Result<Option<(u32, [f32; 3])>, NavmeshError> {
        let mut r: rc::dtPolyRef = 0;
        let mut nearest = [0.0f32; 3];
        // SAFETY: the query is live; the pointers are to local arrays of 3 floats.
        let st = unsafe { (*self.query).findNearestPoly(pos.as_ptr(), extents.as_ptr(), &self.filter, &mut r, nearest.as_mut_ptr()) };
        if failed(st) {
            return Err(NavmeshError::Detour { what: "findNearestPoly".into(), status: st });
        }
        Ok((r != 0).then_some((r, nearest)))
    }

    /// The navmesh's height at (x, z): the nearest polygon under or over the point within
    /// `reach` metres vertically (searched around height `y`), and the detail mesh's height
    /// there; None when no polygon covers (x, z).
    pub fn height_at(&self, x: f32, y: f32, z: f32, reach: f32) -> Result<Option<f32>, NavmeshError> {
        let Some((r, p)) = self.nearest([x, y, z], [0.01, reach, 0.01])? else { return Ok(None) };
        if (p[0] - x).abs() > 1e-3 || (p[2] - z).abs() > 1e-3 {
            return Ok(None);
        }
        let mut h = 0.0f32;
        // SAFETY: as in `nearest`.
        let st = unsafe { (*self.query).getPolyHeight(r, [x, y, z].as_ptr(), &mut h) };
        if failed(st) {
            return Ok(None);
        }
        Ok(Some(h))
    }

    /// The polygon under world (x, z) and the navmesh's height there, searched over every
    /// height (the surface of a planet has one layer); None when no polygon (of the filter's
    /// flags) covers the point.
    pub fn ground_at(&self, x: f32, z: f32) -> Result<Option<(u32, f32)>, NavmeshError> {
        let mut polys = [0 as rc::dtPolyRef; 256];
        let mut n = 0i32;
        let centre = [x, 0.0, z];
        // SAFETY: the query is live; the buffer holds the 256 references Detour is told of.
        let st = unsafe { (*self.query).queryPolygons(centre.as_ptr(), [0.01, 1.0e5, 0.01].as_ptr(), &self.filter, polys.as_mut_ptr(), &mut n, 256) };
        if failed(st) {
            return Err(NavmeshError::Detour { what: "queryPolygons".into(), status: st });
        }
        for &r in &polys[..n.max(0) as usize] {
            let mut h = 0.0f32;
            // SAFETY: as above; getPolyHeight fails when (x, z) is outside the polygon.
            let st = unsafe { (*self.query).getPolyHeight(r, centre.as_ptr(), &mut h) };
            if !failed(st) {
                return Ok(Some((r, h)));
            }
        }
        Ok(None)
    }

    /// The straight path (corner points) from `a` to `b` over the polygons between them, or
    /// None when either end is off the mesh (farther than `extents`) or they do not connect
    /// (the path ends short of `b`: Detour's partial result).
    pub fn straight_path(&self, a: [f32; 3], b: [f32; 3], extents: [f32; 3]) -> Result<Option<Vec<[f32; 3]>>, NavmeshError> {
        let (Some((ra, pa)), Some((rb, pb))) = (self.nearest(a, extents)?, self.nearest(b, extents)?) else { return Ok(None) };
        let mut polys = vec![0 as rc::dtPolyRef; MAX_PATH_POLYS];
        let mut npolys = 0i32;
        // SAFETY: buffers are sized as Detour is told.
        unsafe {
            let st = (*self.query).findPath(ra, rb, pa.as_ptr(), pb.as_ptr(), &self.filter, polys.as_mut_ptr(), &mut npolys, MAX_PATH_POLYS as i32);
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
            let st = (*self.query).findStraightPath(
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
}

/// `dtQueryFilter()`'s defaults: every area costs 1, every polygon included.
fn default_filter() -> rc::dtQueryFilter {
    rc::dtQueryFilter { m_areaCost: [1.0; rc::DT_MAX_AREAS as usize], m_includeFlags: 0xffff, m_excludeFlags: 0 }
}
