//! One navmesh tile: the exact heights at the source lattice over the tile and its border, two
//! triangles a lattice cell with their area ids (ground, shallow water, or not walkable), then
//! Recast's pipeline (rasterize, filter, compact, erode, regions, contours, polygons, detail
//! mesh) and `dtCreateNavMeshData`, as Recast's demo builds a tile (`Sample_TileMesh.cpp`).

use recastnavigation_sys as rc;
use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::grid::Grid;
use trnbake_swg::water::WaterTables;

use crate::error::NavmeshError;
use crate::settings::{NavmeshSettings, AREA_GROUND, AREA_SHALLOW_WATER, FLAG_SHALLOW_WATER, FLAG_WALK};

/// Where the tiles and the source lattice lie: tile (tx, ty) covers
/// `orig + (tx, ty) · tile_metres` to one tile further; the lattice's post (0, 0) is far enough
/// south-west of `orig` that every tile's border has non-negative post indices.
#[derive(Clone, Debug)]
pub struct TileLayout {
    /// South-west corner of tile (0, 0) (x, z).
    pub orig: [f32; 2],
    /// Tiles east and north.
    pub tiles_x: i32,
    pub tiles_z: i32,
    /// The source lattice (posts at `source_spacing`), indices from its own south-west origin.
    pub lattice: Grid,
    /// The map spans −half..half in x and z; geometry beyond is not walkable.
    pub half_width: f32,
}

impl TileLayout {
    /// The tiles covering `region` ([west, south, east, north], metres) at `settings`.
    pub fn new(settings: &NavmeshSettings, region: [f64; 4], half_width: f32) -> Result<TileLayout, NavmeshError> {
        let [w, s, e, n] = region;
        let half = f64::from(half_width);
        if !(w < e && s < n) {
            return Err(NavmeshError::Region(format!("{w},{s},{e},{n} is empty (X1 must be > X0 and Z1 > Z0)")));
        }
        if w < -half || s < -half || e > half || n > half {
            return Err(NavmeshError::Region(format!("{w},{s},{e},{n} reaches off the map (x and z from {} to {half} m)", -half)));
        }
        let tm = f64::from(settings.tile_metres());
        let tiles_x = ((e - w) / tm).ceil().max(1.0) as i32;
        let tiles_z = ((n - s) / tm).ceil().max(1.0) as i32;
        let sp = f64::from(settings.source_spacing);
        // Enough posts south-west of the first tile for its border and one more lattice cell.
        let pad = ((f64::from(settings.border_cells()) * f64::from(settings.cell_size)) / sp).ceil() + 2.0;
        let cols = ((f64::from(tiles_x) * tm) / sp).ceil() + 2.0 * pad + 1.0;
        let rows = ((f64::from(tiles_z) * tm) / sp).ceil() + 2.0 * pad + 1.0;
        let lattice = Grid { cols: cols as u32, rows: rows as u32, x0: w - pad * sp, z0: s - pad * sp, spacing: sp };
        Ok(TileLayout { orig: [w as f32, s as f32], tiles_x, tiles_z, lattice, half_width })
    }

    /// The tile's box in x and z without its border: [west, south, east, north].
    pub fn tile_box(&self, settings: &NavmeshSettings, tx: i32, ty: i32) -> [f32; 4] {
        let tm = settings.tile_metres();
        let x0 = self.orig[0] + tx as f32 * tm;
        let z0 = self.orig[1] + ty as f32 * tm;
        [x0, z0, x0 + tm, z0 + tm]
    }
}

/// The triangle lattice of one tile (with its border): vertices (x, y, z), triangles, areas.
pub struct TileGeometry {
    pub verts: Vec<f32>,
    pub tris: Vec<i32>,
    pub areas: Vec<u8>,
    /// Lowest and highest ground of the lattice, m.
    pub y_range: [f32; 2],
    /// Posts a row and rows of the lattice (`verts` is row-major from the south-west post).
    pub cols: u32,
    pub rows: u32,
}

impl TileGeometry {
    /// The lattice surface's height at (x, z): linear over the same two triangles a cell that
    /// Recast rasterized (exact at the posts). Outside the lattice, the nearest edge's.
    pub fn surface_height(&self, x: f32, z: f32) -> f32 {
        let (x0, z0) = (self.verts[0], self.verts[2]);
        let sp = if self.cols > 1 { self.verts[3] - x0 } else { 1.0 };
        let fx = ((x - x0) / sp).clamp(0.0, (self.cols - 1) as f32);
        let fz = ((z - z0) / sp).clamp(0.0, (self.rows - 1) as f32);
        let c = (fx.floor() as u32).min(self.cols.saturating_sub(2));
        let r = (fz.floor() as u32).min(self.rows.saturating_sub(2));
        let (u, v) = (fx - c as f32, fz - r as f32);
        let y = |c: u32, r: u32| self.verts[((r * self.cols + c) * 3 + 1) as usize];
        let (sw, se, nw, ne) = (y(c, r), y(c + 1, r), y(c, r + 1), y(c + 1, r + 1));
        if u + v <= 1.0 {
            sw + u * (se - sw) + v * (nw - sw)
        } else {
            ne + (1.0 - u) * (nw - ne) + (1.0 - v) * (se - ne)
        }
    }
}

/// The heights and areas of the lattice posts covering `[x0, z0, x1, z1]`.
pub fn tile_geometry(heights: &HeightEvaluator, water: &WaterTables, settings: &NavmeshSettings, layout: &TileLayout, area: [f32; 4]) -> TileGeometry {
    let g = &layout.lattice;
    let col = |x: f32| ((f64::from(x) - g.x0) / g.spacing).floor().max(0.0) as u32;
    let row = |z: f32| ((f64::from(z) - g.z0) / g.spacing).floor().max(0.0) as u32;
    let (c0, r0) = (col(area[0]), row(area[1]));
    let (c1, r1) = ((col(area[2]) + 1).min(g.cols - 1), (row(area[3]) + 1).min(g.rows - 1));
    let (cols, rows) = (c1 - c0 + 1, r1 - r0 + 1);
    let mut y = vec![0.0f32; cols as usize * rows as usize];
    heights.grid_block(g, c0, r0, cols, rows, &mut y);

    // Per post: on the map, and how deep the water over it is (0 when dry).
    let half = layout.half_width;
    let mut verts = Vec::with_capacity(y.len() * 3);
    let mut deep = Vec::with_capacity(y.len());
    let mut wet = Vec::with_capacity(y.len());
    let mut y_range = [f32::INFINITY, f32::NEG_INFINITY];
    for r in 0..rows {
        for c in 0..cols {
            let (x, z) = g.post(c0 + c, r0 + r);
            let h = y[(r * cols + c) as usize];
            verts.extend([x, h, z]);
            y_range = [y_range[0].min(h), y_range[1].max(h)];
            let on_map = (-half..=half).contains(&x) && (-half..=half).contains(&z);
            let depth = water.height_at(x, z).map_or(0.0, |w| w - h);
            deep.push(!on_map || depth > settings.water_depth);
            wet.push(depth > 0.0);
        }
    }

    // Two triangles a lattice cell, wound so that Recast's normal (v1−v0)×(v2−v0) points up
    // (+y) with x east and z north: (sw, nw, se) and (se, nw, ne).
    let cos_slope = settings.agent_max_slope.to_radians().cos();
    let nt = 2 * (cols as usize - 1) * (rows as usize - 1);
    let mut tris = Vec::with_capacity(nt * 3);
    let mut areas = Vec::with_capacity(nt);
    let idx = |c: u32, r: u32| (r * cols + c) as i32;
    for r in 0..rows - 1 {
        for c in 0..cols - 1 {
            let (sw, se, nw, ne) = (idx(c, r), idx(c + 1, r), idx(c, r + 1), idx(c + 1, r + 1));
            for t in [[sw, nw, se], [se, nw, ne]] {
                tris.extend(t);
                let p = |i: i32| [verts[i as usize * 3], verts[i as usize * 3 + 1], verts[i as usize * 3 + 2]];
                let (a, b, cc) = (p(t[0]), p(t[1]), p(t[2]));
                let e0 = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
                let e1 = [cc[0] - a[0], cc[1] - a[1], cc[2] - a[2]];
                let n = [e0[1] * e1[2] - e0[2] * e1[1], e0[2] * e1[0] - e0[0] * e1[2], e0[0] * e1[1] - e0[1] * e1[0]];
                let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                let steep = !(n[1] > cos_slope * len);
                let area = if steep || t.iter().any(|&i| deep[i as usize]) {
                    rc::RC_NULL_AREA
                } else if t.iter().any(|&i| wet[i as usize]) {
                    AREA_SHALLOW_WATER
                } else {
                    AREA_GROUND
                };
                areas.push(area);
            }
        }
    }
    TileGeometry { verts, tris, areas, y_range, cols, rows }
}

/// Frees a Recast object when dropped (every exit of the pipeline, errors included).
struct Owned<T> {
    ptr: *mut T,
    free: unsafe fn(*mut T),
}

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: `ptr` came from the matching rcAlloc* and is freed once, here.
            unsafe { (self.free)(self.ptr) }
        }
    }
}

unsafe fn free_context(p: *mut rc::rcContext) {
    rc::DeleteContext(p)
}
unsafe fn free_hf(p: *mut rc::rcHeightfield) {
    rc::rcFreeHeightField(p)
}
unsafe fn free_chf(p: *mut rc::rcCompactHeightfield) {
    rc::rcFreeCompactHeightfield(p)
}
unsafe fn free_cset(p: *mut rc::rcContourSet) {
    rc::rcFreeContourSet(p)
}
unsafe fn free_pmesh(p: *mut rc::rcPolyMesh) {
    rc::rcFreePolyMesh(p)
}
unsafe fn free_dmesh(p: *mut rc::rcPolyMeshDetail) {
    rc::rcFreePolyMeshDetail(p)
}

/// A built tile: Detour's tile data (empty when nothing is walkable) and its polygon counts.
#[derive(Clone, Debug, Default)]
pub struct BuiltTile {
    pub data: Vec<u8>,
    pub polys: u32,
    /// Polygons of each area id (index: area id).
    pub polys_by_area: [u32; 3],
}

/// Builds tile (tx, ty) of `layout`.
pub fn build_tile(
    heights: &HeightEvaluator,
    water: &WaterTables,
    settings: &NavmeshSettings,
    layout: &TileLayout,
    tx: i32,
    ty: i32,
) -> Result<BuiltTile, NavmeshError> {
    let cs = settings.cell_size;
    let ch = settings.cell_height;
    let border = settings.border_cells();
    let tb = layout.tile_box(settings, tx, ty);
    let bm = border as f32 * cs;
    // The geometry reaches one lattice cell past the border so every border cell is covered.
    let sp = settings.source_spacing;
    let geo = tile_geometry(heights, water, settings, layout, [tb[0] - bm - sp, tb[1] - bm - sp, tb[2] + bm + sp, tb[3] + bm + sp]);
    if geo.areas.iter().all(|&a| a == rc::RC_NULL_AREA) {
        return Ok(BuiltTile::default());
    }
    let size = settings.tile_size as i32 + 2 * border;
    let bmin = [tb[0] - bm, geo.y_range[0] - 1.0, tb[1] - bm];
    let bmax = [tb[2] + bm, geo.y_range[1] + settings.agent_height + 1.0, tb[3] + bm];
    let fail = |step: &'static str| NavmeshError::Recast { tx, ty, step };
    let walkable_height = settings.walkable_height();
    let walkable_climb = settings.walkable_climb();

    // SAFETY: every pointer below is either checked non-null after its allocation or points
    // into a live Vec of the size Recast is told; each object is freed once by its Owned.
    unsafe {
        let ctx = Owned { ptr: rc::CreateContext(false), free: free_context };
        let hf = Owned { ptr: rc::rcAllocHeightfield(), free: free_hf };
        if ctx.ptr.is_null() || hf.ptr.is_null() {
            return Err(fail("allocation"));
        }
        if !rc::rcCreateHeightfield(ctx.ptr, hf.ptr, size, size, bmin.as_ptr(), bmax.as_ptr(), cs, ch) {
            return Err(fail("rcCreateHeightfield"));
        }
        let nv = (geo.verts.len() / 3) as i32;
        let nt = geo.areas.len() as i32;
        if !rc::rcRasterizeTriangles(ctx.ptr, geo.verts.as_ptr(), nv, geo.tris.as_ptr(), geo.areas.as_ptr(), nt, hf.ptr, walkable_climb) {
            return Err(fail("rcRasterizeTriangles"));
        }
        rc::rcFilterLowHangingWalkableObstacles(ctx.ptr, walkable_climb, hf.ptr);
        rc::rcFilterLedgeSpans(ctx.ptr, walkable_height, walkable_climb, hf.ptr);
        rc::rcFilterWalkableLowHeightSpans(ctx.ptr, walkable_height, hf.ptr);

        let chf = Owned { ptr: rc::rcAllocCompactHeightfield(), free: free_chf };
        if chf.ptr.is_null() || !rc::rcBuildCompactHeightfield(ctx.ptr, walkable_height, walkable_climb, hf.ptr, chf.ptr) {
            return Err(fail("rcBuildCompactHeightfield"));
        }
        drop(hf);
        if !rc::rcErodeWalkableArea(ctx.ptr, settings.walkable_radius(), chf.ptr) {
            return Err(fail("rcErodeWalkableArea"));
        }
        if !rc::rcBuildDistanceField(ctx.ptr, chf.ptr) {
            return Err(fail("rcBuildDistanceField"));
        }
        let min_area = (settings.region_min_size * settings.region_min_size) as i32;
        let merge_area = (settings.region_merge_size * settings.region_merge_size) as i32;
        if !rc::rcBuildRegions(ctx.ptr, chf.ptr, border, min_area, merge_area) {
            return Err(fail("rcBuildRegions"));
        }
        let cset = Owned { ptr: rc::rcAllocContourSet(), free: free_cset };
        let max_edge = (settings.edge_max_len / cs) as i32;
        let flags = rc::rcBuildContoursFlags_RC_CONTOUR_TESS_WALL_EDGES as i32;
        if cset.ptr.is_null() || !rc::rcBuildContours(ctx.ptr, chf.ptr, settings.edge_max_error, max_edge, cset.ptr, flags) {
            return Err(fail("rcBuildContours"));
        }
        if (*cset.ptr).nconts == 0 {
            return Ok(BuiltTile::default());
        }
        let pmesh = Owned { ptr: rc::rcAllocPolyMesh(), free: free_pmesh };
        if pmesh.ptr.is_null() || !rc::rcBuildPolyMesh(ctx.ptr, cset.ptr, settings.verts_per_poly as i32, pmesh.ptr) {
            return Err(fail("rcBuildPolyMesh"));
        }
        let dmesh = Owned { ptr: rc::rcAllocPolyMeshDetail(), free: free_dmesh };
        if dmesh.ptr.is_null()
            || !rc::rcBuildPolyMeshDetail(ctx.ptr, pmesh.ptr, chf.ptr, settings.detail_sample_dist, settings.detail_sample_max_error, dmesh.ptr)
        {
            return Err(fail("rcBuildPolyMeshDetail"));
        }
        drop(chf);
        drop(cset);

        let pm = &mut *pmesh.ptr;
        if pm.npolys == 0 || pm.nverts == 0 {
            return Ok(BuiltTile::default());
        }
        if pm.nverts >= 0xffff {
            return Err(fail("rcBuildPolyMesh (more than 65,535 vertices: use a smaller --tile-size)"));
        }
        // Flags from the areas: every polygon is walked; shallow water is marked so that a
        // filter may keep out of it.
        let npolys = pm.npolys as usize;
        let areas = std::slice::from_raw_parts(pm.areas, npolys);
        let flags = std::slice::from_raw_parts_mut(pm.flags, npolys);
        let mut by_area = [0u32; 3];
        for (f, &a) in flags.iter_mut().zip(areas) {
            *f = if a == AREA_SHALLOW_WATER { FLAG_WALK | FLAG_SHALLOW_WATER } else { FLAG_WALK };
            if let Some(n) = by_area.get_mut(a as usize) {
                *n += 1;
            }
        }
        // Put the vertices on the ground (NavmeshSettings::snap_to_ground): Recast's heights are
        // span tops, rounded up to the cell height and the highest point of the terrain in each
        // cell (on a 40° slope, a 0.5 m cell's top is ~0.4 m above its centre), and
        // rcBuildPolyMeshDetail adds one cell height. The polygon vertices are cell units above
        // bmin (rounded to the nearest cell height), the detail vertices floats.
        let dm = &mut *dmesh.ptr;
        if settings.snap_to_ground {
            let nv = pm.nverts as usize;
            for v in std::slice::from_raw_parts_mut(pm.verts, nv * 3).chunks_mut(3) {
                let (x, z) = (pm.bmin[0] + f32::from(v[0]) * cs, pm.bmin[2] + f32::from(v[2]) * cs);
                let h = ((geo.surface_height(x, z) - pm.bmin[1]) / ch).round();
                v[1] = h.clamp(0.0, 65_534.0) as u16;
            }
            for v in std::slice::from_raw_parts_mut(dm.verts, dm.nverts as usize * 3).chunks_mut(3) {
                v[1] = geo.surface_height(v[0], v[2]);
            }
        }
        let mut params: rc::dtNavMeshCreateParams = std::mem::zeroed();
        params.verts = pm.verts;
        params.vertCount = pm.nverts;
        params.polys = pm.polys;
        params.polyAreas = pm.areas;
        params.polyFlags = pm.flags;
        params.polyCount = pm.npolys;
        params.nvp = pm.nvp;
        params.detailMeshes = dm.meshes;
        params.detailVerts = dm.verts;
        params.detailVertsCount = dm.nverts;
        params.detailTris = dm.tris;
        params.detailTriCount = dm.ntris;
        params.walkableHeight = settings.agent_height;
        params.walkableRadius = settings.agent_radius;
        params.walkableClimb = settings.agent_max_climb;
        params.tileX = tx;
        params.tileY = ty;
        params.tileLayer = 0;
        params.bmin = pm.bmin;
        params.bmax = pm.bmax;
        params.cs = cs;
        params.ch = ch;
        params.buildBvTree = true;
        let mut out: *mut u8 = std::ptr::null_mut();
        let mut out_len: i32 = 0;
        if !rc::dtCreateNavMeshData(&mut params, &mut out, &mut out_len) || out.is_null() {
            return Err(fail("dtCreateNavMeshData"));
        }
        let data = std::slice::from_raw_parts(out, out_len as usize).to_vec();
        rc::dtFree(out.cast());
        Ok(BuiltTile { data, polys: npolys as u32, polys_by_area: by_area })
    }
}
