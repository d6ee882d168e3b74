//! The agent and build settings of a navmesh, their defaults and why (docs/src/servers.md).

use serde::{Deserialize, Serialize};

use crate::error::NavmeshError;

/// Area id of walkable dry ground (Detour's per-polygon area; cost 1 in a default filter).
pub const AREA_GROUND: u8 = 1;
/// Area id of walkable shallow water: wet, but no deeper than [`NavmeshSettings::water_depth`].
pub const AREA_SHALLOW_WATER: u8 = 2;
/// Polygon flag of every walkable polygon (ground and shallow water).
pub const FLAG_WALK: u16 = 0x01;
/// Polygon flag of shallow-water polygons (exclude it in a `dtQueryFilter` to keep feet dry).
pub const FLAG_SHALLOW_WATER: u16 = 0x02;

/// How a navmesh is built. Lengths in metres, angles in degrees.
///
/// The defaults were chosen from measurements on real planets (issue #40's notes,
/// docs/src/servers.md): Recast's detail mesh sits about 1.5 cell heights above the ground,
/// so the cell height is 0.1 m (0.2 m leaves only ~95 % of points within 0.5 m); source
/// geometry at the native 2 m cuts across cliffs, so heights are evaluated every metre.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NavmeshSettings {
    /// Recast's cell size (xz), m. 0.5 m resolves a 0.5 m agent radius in one cell.
    pub cell_size: f32,
    /// Recast's cell height (y), m; see the type's note on the detail mesh offset.
    pub cell_height: f32,
    /// Spacing of the exact heights fed to Recast as a triangle lattice (two triangles a
    /// lattice cell), m; at most 1 m is clean on cliffs.
    pub source_spacing: f32,
    /// Agent radius, m: walkable area is eroded by it from walls, ledges and deep water.
    pub agent_radius: f32,
    /// Agent height, m: the clearance a walkable span needs.
    pub agent_height: f32,
    /// Highest step the agent climbs, m.
    pub agent_max_climb: f32,
    /// Steepest walkable slope, degrees.
    pub agent_max_slope: f32,
    /// Tile size in cells a side (256 cells of 0.5 m: 128 m tiles).
    pub tile_size: u32,
    /// Water deeper than this (water surface minus ground), m, is not walkable; shallower
    /// water is walkable with its own area id ([`AREA_SHALLOW_WATER`]).
    pub water_depth: f32,
    /// Regions smaller than this many cells (a side, squared) are dropped.
    pub region_min_size: u32,
    /// Regions smaller than this many cells (a side, squared) are merged into neighbours.
    pub region_merge_size: u32,
    /// Longest polygon edge along a border, m (0: no limit).
    pub edge_max_len: f32,
    /// Largest distance of a simplified contour from the raw one, in cells.
    pub edge_max_error: f32,
    /// Vertices a polygon at most (Detour's limit is 6).
    pub verts_per_poly: u32,
    /// Detail mesh sample distance, m (0: no detail samples beyond the polygon vertices). 2 m
    /// with a 0.25 m error: on a 4 km tatooine region 3 m / 0.1 m left 1.1 % of dry points more
    /// than 0.5 m off the ground, 2 m / 0.25 m 0.5 %, in about the same time (2 m / 0.1 m took
    /// half as long again for 0.6 %).
    pub detail_sample_dist: f32,
    /// Largest height error of the detail mesh against the heightfield, m (see
    /// `detail_sample_dist`).
    pub detail_sample_max_error: f32,
    /// Move the finished tile's polygon and detail vertices onto the ground (the source
    /// lattice's surface): Recast's detail mesh sits about 1.5 cell heights above flat ground
    /// (span tops are rounded up, half a cell on average, and `rcBuildPolyMeshDetail` adds one
    /// cell height) and higher on slopes (a span's top is the highest terrain in its cell).
    /// Off keeps Recast's heights.
    pub snap_to_ground: bool,
}

impl Default for NavmeshSettings {
    fn default() -> Self {
        NavmeshSettings {
            cell_size: 0.5,
            cell_height: 0.1,
            source_spacing: 1.0,
            agent_radius: 0.5,
            agent_height: 2.0,
            agent_max_climb: 0.9,
            agent_max_slope: trnbake_swg::spawn::SpawnRule::DEFAULT_MAX_SLOPE,
            tile_size: 256,
            water_depth: trnbake_swg::spawn::SpawnRule::DEFAULT_WATER_DEPTH,
            region_min_size: 8,
            region_merge_size: 20,
            edge_max_len: 12.0,
            edge_max_error: 1.3,
            verts_per_poly: 6,
            detail_sample_dist: 2.0,
            detail_sample_max_error: 0.25,
            snap_to_ground: true,
        }
    }
}

impl NavmeshSettings {
    /// Checks every value; the error names the first one out of range.
    pub fn validate(&self) -> Result<(), NavmeshError> {
        let bad = |name: &str, why: &str| Err(NavmeshError::Settings(format!("{name}: {why}")));
        let positive =
            [("cell_size", self.cell_size), ("cell_height", self.cell_height), ("source_spacing", self.source_spacing), ("agent_height", self.agent_height)];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return bad(name, &format!("{v} must be a positive number of metres"));
            }
        }
        let non_negative = [
            ("agent_radius", self.agent_radius),
            ("agent_max_climb", self.agent_max_climb),
            ("water_depth", self.water_depth),
            ("edge_max_len", self.edge_max_len),
            ("edge_max_error", self.edge_max_error),
            ("detail_sample_dist", self.detail_sample_dist),
            ("detail_sample_max_error", self.detail_sample_max_error),
        ];
        for (name, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return bad(name, &format!("{v} must be a finite number ≥ 0"));
            }
        }
        if !(self.agent_max_slope > 0.0 && self.agent_max_slope < 90.0) {
            return bad("agent_max_slope", &format!("{} must be between 0 and 90 degrees", self.agent_max_slope));
        }
        if !(16..=4096).contains(&self.tile_size) {
            return bad("tile_size", &format!("{} must be 16..4096 cells", self.tile_size));
        }
        if !(3..=6).contains(&self.verts_per_poly) {
            return bad("verts_per_poly", &format!("{} must be 3..6 (Detour's limit)", self.verts_per_poly));
        }
        if self.source_spacing > 4.0 * self.cell_size.max(1.0) {
            return bad("source_spacing", &format!("{} m is much coarser than the cells; use at most 1 m", self.source_spacing));
        }
        Ok(())
    }

    /// The tile's side in metres.
    pub fn tile_metres(&self) -> f32 {
        self.tile_size as f32 * self.cell_size
    }

    /// Agent height in cells (Recast's `walkableHeight`).
    pub fn walkable_height(&self) -> i32 {
        (self.agent_height / self.cell_height).ceil() as i32
    }

    /// Max climb in cells (Recast's `walkableClimb`).
    pub fn walkable_climb(&self) -> i32 {
        (self.agent_max_climb / self.cell_height).floor() as i32
    }

    /// Agent radius in cells (Recast's `walkableRadius`).
    pub fn walkable_radius(&self) -> i32 {
        (self.agent_radius / self.cell_size).ceil() as i32
    }

    /// Cells of border around each tile, so neighbouring tiles meet (Recast's demo: radius + 3).
    pub fn border_cells(&self) -> i32 {
        self.walkable_radius() + 3
    }
}
