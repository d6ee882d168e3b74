//! The flattened evaluation plan: the layer tree of one pass as `#[repr(C)]` records in
//! pre-order, shared by the CPU reference (`eval`) and the GPU kernels (`kernels/`).
//!
//! Only what the pass can see is kept: disabled items are dropped (swg-trn §4.1), and for
//! the height pass every layer whose subtree holds no height affector is pruned, which is
//! exact because filters and boundaries have no side effects. Each layer record carries the
//! bounding box where it can be non-zero, so tiles (and single points) skip whole subtrees.
//!
//! Every record here has a WGSL twin in `kernels/records.wgsl`; keep them in sync (a test
//! compares the layouts through naga).
//!
//! Files: [`records`] (the GPU layout and kind constants), `builder` (terrain → plan),
//! `bitmaps` (loading bitmap families and colour ramps).

mod bitmaps;
mod builder;
pub mod records;

pub use records::*;

use crate::model::bitmap::{Bitmap, BitmapError};
use crate::model::layer::LayerItem;
use crate::model::Terrain;
use crate::noise::Fractal;
use builder::{Builder, EVERYWHERE};
use std::collections::HashMap;
use std::path::PathBuf;

/// Options that change what the height pass computes.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct HeightOptions {
    /// Apply the road and river height model of swg-trn §5.12 (unvalidated, \[I\]).
    pub roads: bool,
    /// Apply the FBIT gain of swg-trn §5.6 step 3.
    pub bitmap_gain: bool,
    /// Where bitmap paths such as `terrain/x.tga` resolve.
    pub data_root: Option<PathBuf>,
    /// A missing bitmap is an error (false) or a warning with an all-zero bitmap (true).
    pub missing_bitmaps_zero: bool,
}

impl Default for HeightOptions {
    fn default() -> Self {
        HeightOptions { roads: false, bitmap_gain: true, data_root: None, missing_bitmaps_zero: false }
    }
}

/// Building a plan failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The message says what to change in the library's terms ([`HeightOptions::data_root`],
    /// [`HeightOptions::missing_bitmaps_zero`]); the command line adds its flags as a hint.
    #[error("layer `{layer}` needs bitmap family {family} (`{path}`), but {reason}; set the data root to the folder DIR in which `{path}` resolves to DIR/{path}, or read missing bitmaps as black")]
    MissingBitmap { layer: String, family: i32, path: String, reason: String },
    #[error("layer `{layer}`: bitmap `{}`: {error}", path.display())]
    Bitmap { layer: String, path: PathBuf, error: BitmapError },
    #[error("the layer tree is nested {0} deep; at most {MAX_DEPTH} is supported")]
    TooDeep(usize),
}

/// The flattened height pass of one terrain.
#[derive(Clone, Debug, Default)]
pub struct BakePlan {
    pub layers: Vec<LayerRecord>,
    pub boundaries: Vec<BoundaryRecord>,
    pub filters: Vec<FilterRecord>,
    pub affectors: Vec<AffectorRecord>,
    pub roads: Vec<RoadRecord>,
    /// Polygon/polyline/road control points (x, z).
    pub points: Vec<[f32; 2]>,
    /// `[sample_start, sample_count]` into `road_samples`, per road control segment.
    pub road_segments: Vec<[u32; 2]>,
    /// Road profile samples (x, height, z).
    pub road_samples: Vec<[f32; 4]>,
    pub road_heights: Vec<f32>,
    pub fractal_records: Vec<FractalRecord>,
    /// Colour ramps of the surface pass (ACRH/ACRF), 64 RGB entries each, and their paths.
    pub ramps: Vec<Vec<[u8; 3]>>,
    pub ramp_names: Vec<String>,
    /// The same fractals for the CPU evaluator.
    pub fractals: Vec<Fractal>,
    pub bitmap_records: Vec<BitmapRecord>,
    pub bitmaps: Vec<Bitmap>,
    /// Half the map width: the map spans [−half, +half] in x and z.
    pub half_width: f32,
    /// Warnings met while planning (missing bitmaps in zero mode, unknown operations).
    pub warnings: Vec<String>,
    /// Where each record came from in the file, for explanations (`trnbake fidelity --explain`).
    pub names: PlanNames,
}

/// The file names of a plan's records, parallel to `layers`, `filters` and `affectors`:
/// a layer's path in the tree (`top/child/grandchild`), a rule's tag and editor name
/// (`FHGT "height band"`).
#[derive(Clone, Debug, Default)]
pub struct PlanNames {
    pub layers: Vec<String>,
    pub filters: Vec<String>,
    pub affectors: Vec<String>,
}

/// A rule's tag and its editor name, as [`PlanNames`] holds them.
pub fn rule_label(rule: &crate::model::rules::Rule) -> String {
    let (tag, _) = rule.kind.tag_and_version();
    format!("{} \"{}\"", String::from_utf8_lossy(tag), rule.name)
}

/// The culled program of one tile (or one point).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileList {
    pub layers: Vec<TileLayer>,
    pub boundaries: Vec<u32>,
}

impl BakePlan {
    /// Flatten the height pass of `terrain`, loading the bitmaps it needs.
    pub fn for_heights(terrain: &Terrain, opts: &HeightOptions) -> Result<BakePlan, PlanError> {
        Self::for_pass(terrain, opts, Pass::Height)
    }

    /// Flatten the surface passes of `terrain` (swg-trn §5.2 steps 3–4), with the colour
    /// ramps they reference (a missing ramp is treated like a missing bitmap).
    pub fn for_surface(terrain: &Terrain, opts: &HeightOptions) -> Result<BakePlan, PlanError> {
        Self::for_pass(terrain, opts, Pass::Surface)
    }

    /// Flatten one pass of `terrain`: layers whose subtrees hold none of the pass's affectors
    /// are pruned (exact: filters and boundaries have no side effects).
    pub fn for_pass(terrain: &Terrain, opts: &HeightOptions, pass: Pass) -> Result<BakePlan, PlanError> {
        let mut b = Builder {
            terrain,
            opts,
            pass,
            plan: BakePlan { half_width: terrain.header.map_width * 0.5, ..Default::default() },
            fractal_index: HashMap::new(),
            bitmap_index: HashMap::new(),
            path: Vec::new(),
        };
        for item in &terrain.generator.layers {
            if let LayerItem::Layer(l) = item {
                b.layer(l, 0, EVERYWHERE)?;
            }
        }
        let mut rank = 0;
        for l in &mut b.plan.layers {
            rank += b.plan.filters[l.filter_start as usize..(l.filter_start + l.filter_count) as usize].iter().any(|f| f.kind == FILTER_SLOPE) as u32;
            l.slope_rank = rank;
        }
        Ok(b.plan)
    }

    /// Per layer: whether it or a layer of its subtree holds an affector `holds` accepts. The
    /// marked layers are closed under ancestors, as [`TileList::keeping`] needs.
    pub fn subtrees_holding(&self, holds: impl Fn(&AffectorRecord) -> bool) -> Vec<bool> {
        let own: Vec<bool> =
            self.layers.iter().map(|l| self.affectors[l.affector_start as usize..(l.affector_start + l.affector_count) as usize].iter().any(&holds)).collect();
        (0..self.layers.len()).map(|i| own[i..(self.layers[i].subtree_end as usize).max(i + 1)].iter().any(|&b| b)).collect()
    }

    /// How many layers hold an FSLP filter (the last layer's `slope_rank`).
    pub fn slope_layer_count(&self) -> u32 {
        self.layers.last().map_or(0, |l| l.slope_rank)
    }

    /// The culled program of a tile covering `area` (min x, min z, max x, max z): the
    /// layers whose bounds meet it, in pre-order, with skip targets inside the list, and for
    /// each the boundaries that meet it. A layer with boundaries none of which meet the tile
    /// has amount 0 there (1 when inverted: then it is kept with an empty boundary list).
    pub fn tile_layers(&self, area: [f32; 4]) -> TileList {
        let meets = |b: [f32; 4]| !(b[0] > area[2] || b[2] < area[0] || b[1] > area[3] || b[3] < area[1]);
        let mut out = TileList::default();
        let mut i = 0usize;
        // Stack of (out index, layer subtree end) to patch skip targets.
        let mut open: Vec<(usize, u32)> = Vec::new();
        while i < self.layers.len() {
            while let Some(&(at, end)) = open.last() {
                if (i as u32) < end {
                    break;
                }
                out.layers[at].skip_to = out.layers.len() as u32;
                open.pop();
            }
            let l = &self.layers[i];
            if !meets(l.bounds) {
                i = l.subtree_end as usize;
                continue;
            }
            let boundary_start = out.boundaries.len() as u32;
            let range = l.boundary_start..l.boundary_start + l.boundary_count;
            out.boundaries.extend(range.filter(|&b| meets(self.boundaries[b as usize].bounds)));
            let boundary_count = out.boundaries.len() as u32 - boundary_start;
            if l.boundary_count > 0 && boundary_count == 0 && l.flags & LAYER_INVERT_BOUNDARIES == 0 {
                i = l.subtree_end as usize;
                continue;
            }
            open.push((out.layers.len(), l.subtree_end));
            out.layers.push(TileLayer { layer: i as u32, skip_to: 0, boundary_start, boundary_count });
            i += 1;
        }
        while let Some((at, _)) = open.pop() {
            out.layers[at].skip_to = out.layers.len() as u32;
        }
        out
    }
}

impl TileList {
    /// The entries whose layers `keep` marks, with skip targets inside the new list. `keep`
    /// must mark whole subtrees and every ancestor of a marked layer
    /// ([`BakePlan::subtrees_holding`]): then a walk of the new list meets the marked layers
    /// with the same parent amounts as a walk of this one, and skips only what has no
    /// effect on what they compute.
    pub fn keeping(&self, keep: &[bool]) -> TileList {
        // Each old position's new index: the count of kept entries before it.
        let mut new_at = Vec::with_capacity(self.layers.len() + 1);
        let mut kept = 0u32;
        for e in &self.layers {
            new_at.push(kept);
            kept += u32::from(keep[e.layer as usize]);
        }
        new_at.push(kept);
        let mut out = TileList::default();
        for e in self.layers.iter().filter(|e| keep[e.layer as usize]) {
            let boundary_start = out.boundaries.len() as u32;
            out.boundaries.extend_from_slice(&self.boundaries[e.boundary_start as usize..(e.boundary_start + e.boundary_count) as usize]);
            out.layers.push(TileLayer { layer: e.layer, skip_to: new_at[e.skip_to as usize], boundary_start, boundary_count: e.boundary_count });
        }
        out
    }
}

impl BakePlan {
    /// All bitmaps packed 4 pixels per u32 word, for the GPU.
    pub fn bitmap_words(&self) -> Vec<u32> {
        let mut bytes = Vec::new();
        for b in &self.bitmaps {
            bytes.extend_from_slice(&b.pixels);
            bytes.resize(bytes.len().next_multiple_of(4), 0);
        }
        bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    /// Permutation tables of all fractals, concatenated (514 entries each).
    pub fn perm_table(&self) -> Vec<u32> {
        self.fractals.iter().flat_map(|f| f.tables.perm.iter().copied()).collect()
    }

    /// g2 gradients of all fractals, concatenated.
    pub fn gradient_table(&self) -> Vec<[f32; 2]> {
        self.fractals.iter().flat_map(|f| f.tables.g2.iter().copied()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Layers 0 { 1 { 2 } 3 } 4, each with one boundary; affectors on layers 3 and 4 only.
    fn plan_and_tile() -> (BakePlan, TileList) {
        let mut plan = BakePlan::default();
        for (i, (end, affectors)) in [(4u32, 0u32), (3, 0), (3, 0), (4, 1), (5, 1)].into_iter().enumerate() {
            plan.layers.push(LayerRecord { subtree_end: end, affector_start: plan.affectors.len() as u32, affector_count: affectors, ..Default::default() });
            for _ in 0..affectors {
                plan.affectors.push(AffectorRecord { kind: if i == 3 { AFFECTOR_HEIGHT_FRACTAL } else { AFFECTOR_FLORA_BASE }, ..Default::default() });
            }
        }
        let skips = [4u32, 3, 3, 4, 5];
        let tile = TileList {
            layers: (0..5).map(|i| TileLayer { layer: i, skip_to: skips[i as usize], boundary_start: i, boundary_count: 1 }).collect(),
            boundaries: vec![10, 11, 12, 13, 14],
        };
        (plan, tile)
    }

    #[test]
    fn subtrees_holding_marks_ancestors_and_whole_subtrees() {
        let (plan, _) = plan_and_tile();
        assert_eq!(plan.subtrees_holding(|a| moves_height(a.kind)), [true, false, false, true, false]);
        assert_eq!(plan.subtrees_holding(|_| true), [true, false, false, true, true]);
    }

    #[test]
    fn keeping_renumbers_skip_targets_and_boundaries() {
        let (plan, tile) = plan_and_tile();
        let kept = tile.keeping(&plan.subtrees_holding(|a| moves_height(a.kind)));
        // Layer 0's subtree now ends after layer 3: both skip to the end of the new list.
        assert_eq!(
            kept.layers,
            [
                TileLayer { layer: 0, skip_to: 2, boundary_start: 0, boundary_count: 1 },
                TileLayer { layer: 3, skip_to: 2, boundary_start: 1, boundary_count: 1 }
            ]
        );
        assert_eq!(kept.boundaries, [10, 13]);
        let all = tile.keeping(&[true; 5]);
        assert_eq!(all, tile);
    }
}
