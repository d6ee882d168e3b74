//! Where a creature may stand: the rule behind the `spawnable` map (issue #40,
//! docs/src/servers.md) and the facts it reads that the other maps do not give — the slope of
//! the ground at a post and whether a flatten affector holds the post.
//!
//! A post is spawnable when it is dry or under no more than [`SpawnRule::water_depth`] of
//! water, no steeper than [`SpawnRule::max_slope`], not excluded by an exclude affector (AEXC,
//! swg-trn §5.10) and not on a flattened pad (inside a bounded layer whose height-constant
//! affector replaces the height at full strength, with no height affector after it, swg-trn
//! §5.7: the pads the game flattens for cities, camps and points of interest, which servers
//! fill with their own objects). Every post that is
//! not gets the code of the first reason that rules it out ([`SPAWN_LEGEND`]).

use rayon::prelude::*;

use crate::eval::walk::{walk_point, PassState};
use crate::eval::{Grid, HeightEvaluator};
use crate::plan::{AffectorRecord, BakePlan, FilterRecord, AFFECTOR_HEIGHT_CONSTANT, MAX_DEPTH};

/// The spawnable map's code of a post a creature may stand on.
pub const SPAWNABLE: u8 = 1;
/// Under more than [`SpawnRule::water_depth`] of water.
pub const DEEP_WATER: u8 = 2;
/// Steeper than [`SpawnRule::max_slope`].
pub const TOO_STEEP: u8 = 3;
/// Excluded by an exclude affector (AEXC).
pub const EXCLUDED: u8 = 4;
/// On a flattened pad: the last height affector is a bounded full-strength replace.
pub const FLATTENED: u8 = 5;

/// Every code of the spawnable map: (value, name, meaning), for its legend and category names.
pub const SPAWN_LEGEND: &[(u8, &str, &str)] = &[
    (SPAWNABLE, "spawnable", "a creature may stand here"),
    (DEEP_WATER, "deep_water", "under more water than --water-depth"),
    (TOO_STEEP, "too_steep", "steeper than --max-slope"),
    (EXCLUDED, "excluded", "an exclude affector (AEXC) keeps objects and flora off"),
    (FLATTENED, "flattened", "on a flattened pad: the last height affector is a bounded height-constant replace at full strength (city, camp and POI pads)"),
];

/// The spawn rule's limits (`bake --max-slope`, `--water-depth`). The defaults are those of
/// the navmesh's agent (`trnbake-navmesh`'s settings read them from here), so the spawnable
/// map and the navmesh agree on what is walkable.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SpawnRule {
    /// Steepest walkable ground, degrees.
    pub max_slope: f32,
    /// Deepest walkable water, m (0: dry ground only).
    pub water_depth: f32,
}

impl SpawnRule {
    /// 45°: Recast's demo agent's limit and the one the navmesh uses.
    pub const DEFAULT_MAX_SLOPE: f32 = 45.0;
    /// 1 m: knee-deep wading.
    pub const DEFAULT_WATER_DEPTH: f32 = 1.0;
}

impl Default for SpawnRule {
    fn default() -> Self {
        SpawnRule { max_slope: Self::DEFAULT_MAX_SLOPE, water_depth: Self::DEFAULT_WATER_DEPTH }
    }
}

/// What the spawn rule reads of a post.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpawnPost {
    pub height: f32,
    /// The water surface over the post, if any.
    pub water: Option<f32>,
    /// Degrees ([`slope_degrees`]).
    pub slope: f32,
    pub excluded: bool,
    pub flattened: bool,
}

impl SpawnRule {
    /// The post's code: [`SPAWNABLE`], else the first reason in [`SPAWN_LEGEND`]'s order.
    pub fn classify(&self, p: &SpawnPost) -> u8 {
        if p.water.is_some_and(|w| w - p.height > self.water_depth) {
            DEEP_WATER
        } else if p.slope > self.max_slope {
            TOO_STEEP
        } else if p.excluded {
            EXCLUDED
        } else if p.flattened {
            FLATTENED
        } else {
            SPAWNABLE
        }
    }
}

/// The slope in degrees (0 flat, 90 vertical) of the central-difference normal from heights
/// `d` m east, west, north and south of a point: the one formula of `slope_at` (at
/// [`crate::query::NORMAL_STEP`]) and the `slope` map (at the bake's spacing), so the map at
/// the native 2 m equals the query at its posts bit for bit.
pub fn slope_degrees(east: f32, west: f32, north: f32, south: f32, d: f32) -> f32 {
    slope_of_normal(central_normal(east - west, north - south, d))
}

/// The slope in degrees of a unit normal (y up).
pub fn slope_of_normal(n: [f32; 3]) -> f32 {
    n[1].clamp(-1.0, 1.0).acos().to_degrees()
}

/// The unit normal (x east, y up, z north) from the height differences east − west and
/// north − south over 2·`d` m.
pub fn central_normal(dx: f32, dz: f32, d: f32) -> [f32; 3] {
    let n = [-dx, 2.0 * d, -dz];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    [n[0] / len, n[1] / len, n[2] / len]
}

/// Whether a height-constant affector flattens: it replaces the height (operation 0,
/// swg-trn §5.7) rather than adding to or scaling it.
fn flattens(a: &AffectorRecord) -> bool {
    a.kind == AFFECTOR_HEIGHT_CONSTANT && a.operation == 0
}

/// The height walk of a post, noting whether its final height is a flatten's: the last height
/// affector was a bounded replace at full strength. (Terrains use bounded replaces to sculpt
/// too — naboo's coast, lake basins and river beds are −200 m and −213 m replaces that later
/// fractals shape — so a replace that acted earlier does not make a pad.)
struct FlattenWalk<'p> {
    plan: &'p BakePlan,
    h: f32,
    /// bounded[d]: whether the open layer at depth d or one of its ancestors has boundaries.
    bounded: [bool; MAX_DEPTH + 2],
    /// Whether the layer whose affectors come next is bounded.
    current_bounded: bool,
    flattened: bool,
}

impl PassState for FlattenWalk<'_> {
    fn filter_value(&self, plan: &BakePlan, f: &FilterRecord, extent: [f32; 4], x: f32, z: f32) -> f32 {
        crate::eval::filter::filter_value_height_pass(plan, f, extent, self.h, x, z)
    }
    fn apply(&mut self, plan: &BakePlan, a: &AffectorRecord, t: f32, x: f32, z: f32) {
        // The last height affector decides: a full-strength bounded replace leaves the ground
        // flat at its constant; anything after it (a fractal, a feathered rim) shapes it again.
        self.flattened = self.current_bounded && flattens(a) && t >= 1.0;
        self.h = crate::eval::affector::apply_height_affector(plan, a, self.h, t, x, z);
    }
    fn trace_layer(&mut self, layer: usize, _boundary: f32) {
        let l = &self.plan.layers[layer];
        let depth = (l.depth as usize).min(MAX_DEPTH);
        let bounded = self.bounded[depth] || l.boundary_count > 0;
        self.bounded[depth + 1] = bounded;
        self.current_bounded = bounded;
    }
}

impl HeightEvaluator {
    /// Whether each post is on a flattened pad of [c0, c0+cols) × [r0, r0+rows) of `grid`
    /// (row-major from the south, into `out`), in parallel blocks; a block whose culled layers
    /// hold no flatten is settled without a walk, so most of a planet costs nothing.
    pub fn flattened_region(&self, grid: &Grid, c0: u32, r0: u32, cols: u32, rows: u32, out: &mut [bool]) {
        assert_eq!(out.len(), cols as usize * rows as usize);
        const BLOCK: u32 = 64;
        let plan = &self.plan;
        let blocks: Vec<(u32, u32)> = (0..rows).step_by(BLOCK as usize).flat_map(|r| (0..cols).step_by(BLOCK as usize).map(move |c| (c, r))).collect();
        let parts: Vec<(u32, u32, Vec<bool>)> = blocks
            .into_par_iter()
            .filter_map(|(bc, br)| {
                let (w, h) = (BLOCK.min(cols - bc), BLOCK.min(rows - br));
                let tile = plan.tile_layers(grid.area(c0 + bc, r0 + br, c0 + bc + w - 1, r0 + br + h - 1));
                let any = tile.layers.iter().any(|e| {
                    let l = &plan.layers[e.layer as usize];
                    plan.affectors[l.affector_start as usize..(l.affector_start + l.affector_count) as usize].iter().any(flattens)
                });
                if !any {
                    return None;
                }
                let mut part = vec![false; (w * h) as usize];
                for r in 0..h {
                    for c in 0..w {
                        let (x, z) = grid.post(c0 + bc + c, r0 + br + r);
                        let mut walk = FlattenWalk { plan, h: 0.0, bounded: [false; MAX_DEPTH + 2], current_bounded: false, flattened: false };
                        walk_point(plan, &tile, x, z, &mut walk);
                        part[(r * w + c) as usize] = walk.flattened;
                    }
                }
                Some((bc, br, part))
            })
            .collect();
        out.fill(false);
        for (bc, br, part) in parts {
            let w = BLOCK.min(cols - bc) as usize;
            for (r, row) in part.chunks_exact(w).enumerate() {
                let at = (br as usize + r) * cols as usize + bc as usize;
                out[at..at + w].copy_from_slice(row);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_reason_wins_and_shallow_water_is_spawnable() {
        let rule = SpawnRule::default();
        let dry = SpawnPost { height: 10.0, ..Default::default() };
        assert_eq!(rule.classify(&dry), SPAWNABLE);
        assert_eq!(rule.classify(&SpawnPost { water: Some(10.9), ..dry }), SPAWNABLE, "0.9 m of water is wadeable");
        assert_eq!(rule.classify(&SpawnPost { water: Some(11.5), slope: 60.0, excluded: true, ..dry }), DEEP_WATER);
        assert_eq!(rule.classify(&SpawnPost { slope: 45.5, excluded: true, ..dry }), TOO_STEEP);
        assert_eq!(rule.classify(&SpawnPost { slope: 45.0, excluded: true, flattened: true, ..dry }), EXCLUDED);
        assert_eq!(rule.classify(&SpawnPost { flattened: true, ..dry }), FLATTENED);
        let strict = SpawnRule { max_slope: 10.0, water_depth: 0.0 };
        assert_eq!(strict.classify(&SpawnPost { water: Some(10.1), ..dry }), DEEP_WATER);
        assert_eq!(strict.classify(&SpawnPost { slope: 10.5, ..dry }), TOO_STEEP);
    }

    #[test]
    fn slope_degrees_of_known_planes() {
        assert_eq!(slope_degrees(5.0, 5.0, 5.0, 5.0, 2.0), 0.0);
        // A rise of 4 m over 4 m east–west: 45°.
        assert!((slope_degrees(2.0, -2.0, 0.0, 0.0, 2.0) - 45.0).abs() < 1e-4);
        assert!((slope_degrees(0.0, 0.0, 0.0, 4.0 * 3f32.sqrt(), 2.0) - 60.0).abs() < 1e-3);
    }

    #[test]
    fn the_legend_lists_every_code_once() {
        let codes: Vec<u8> = SPAWN_LEGEND.iter().map(|c| c.0).collect();
        assert_eq!(codes, [SPAWNABLE, DEEP_WATER, TOO_STEEP, EXCLUDED, FLATTENED]);
    }
}
