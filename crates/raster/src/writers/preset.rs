//! Engine presets (`docs/src/spec/exports.md` §4.2, §5): the heightmap sizes Unreal, Unity and
//! Godot accept, the file format and row order each expects, and the import settings that
//! put the heights back in metres. A preset resamples the grid to the nearest accepted size
//! not above the bake's (Unreal has no 8193: a 16384 m planet at 2 m becomes 8161 posts a
//! side; Unity stops at 4097), see [`super::set`].

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::{Grid, RowOrder};

/// A game engine's heightmap conventions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// Unreal Engine landscapes: 16-bit PNG (or R16), sizes components × quads + 1.
    Unreal,
    /// Unity terrains: 16-bit little-endian RAW, 2^n+1 from 33 to 4097, south row first.
    Unity,
    /// Godot (HTerrain 2^n+1 from 65 to 4097, Terrain3D r16): 16-bit little-endian R16.
    Godot,
}

/// Unreal quads per section (spec §4.2, Epic's landscape technical guide).
const UNREAL_SECTION_QUADS: [u32; 6] = [7, 15, 31, 63, 127, 255];
/// Epic recommends at most 32×32 components.
const UNREAL_MAX_COMPONENTS: u32 = 32;

/// One way to build an Unreal landscape of a given size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct UnrealLayout {
    pub quads_per_section: u32,
    /// Sections per component side: 1 (1×1) or 2 (2×2).
    pub sections_per_component: u32,
    /// Components per side.
    pub components: u32,
}

impl UnrealLayout {
    pub fn size(&self) -> u32 {
        self.components * self.sections_per_component * self.quads_per_section + 1
    }
}

/// The Unreal layout of `n` posts a side with the fewest components (fewer, larger components
/// render faster; Epic's guide), or `None` if `n` is not an Unreal landscape size.
pub fn unreal_layout(n: u32) -> Option<UnrealLayout> {
    let mut best: Option<UnrealLayout> = None;
    for q in UNREAL_SECTION_QUADS {
        for s in [1, 2] {
            let cq = q * s;
            if n < 2 || !(n - 1).is_multiple_of(cq) {
                continue;
            }
            let k = (n - 1) / cq;
            if !(1..=UNREAL_MAX_COMPONENTS).contains(&k) {
                continue;
            }
            let l = UnrealLayout { quads_per_section: q, sections_per_component: s, components: k };
            if best.is_none_or(|b| k < b.components) {
                best = Some(l);
            }
        }
    }
    best
}

impl Preset {
    pub fn name(self) -> &'static str {
        match self {
            Preset::Unreal => "unreal",
            Preset::Unity => "unity",
            Preset::Godot => "godot",
        }
    }

    /// Every heightmap size (posts a side) the engine accepts, ascending.
    pub fn valid_sizes(self) -> Vec<u32> {
        let pow2 = |lo: u32, hi: u32| (lo..=hi).map(|n| (1u32 << n) + 1).collect::<Vec<_>>();
        match self {
            Preset::Unreal => {
                let mut v: Vec<u32> =
                    UNREAL_SECTION_QUADS.iter().flat_map(|&q| [q, 2 * q]).flat_map(|cq| (1..=UNREAL_MAX_COMPONENTS).map(move |k| k * cq + 1)).collect();
                v.sort_unstable();
                v.dedup();
                v
            }
            // 33 … 4097 (`TerrainData.heightmapResolution`).
            Preset::Unity => pow2(5, 12),
            // HTerrain's SUPPORTED_RESOLUTIONS, 65 … 4097.
            Preset::Godot => pow2(6, 12),
        }
    }

    pub fn is_valid_size(self, n: u32) -> bool {
        self.valid_sizes().contains(&n)
    }

    /// The accepted size closest to `n` from below (least resampling, no invented detail);
    /// the smallest accepted size when `n` is below all of them.
    pub fn fit_size(self, n: u32) -> u32 {
        let v = self.valid_sizes();
        v.iter().rev().copied().find(|&s| s <= n).unwrap_or(v[0])
    }

    /// Formats written when `--format` is not given.
    pub fn default_formats(self) -> &'static [&'static str] {
        match self {
            Preset::Unreal => &["png"],
            Preset::Unity => &["raw"],
            Preset::Godot => &["r16"],
        }
    }

    /// Row order of RAW files (§4.2; PNG is always north first, `.ter` south first).
    pub fn raw_row_order(self) -> RowOrder {
        match self {
            // Unity's heightmap row 0 is the terrain's z = 0 (south/back) edge (§4.2).
            Preset::Unity => RowOrder::SouthFirst,
            // Unreal and Godot take image order: row 0 at the landscape's minimum Y / −Z edge.
            Preset::Unreal | Preset::Godot => RowOrder::NorthFirst,
        }
    }

    /// Whether tile index y counts from the north edge. Tiles follow the row order of the
    /// engine's heightmaps: Unreal's tile `_y` grows with +Y (down the image, southward) and
    /// Godot's with +Z (south); Unity's with its z axis (north), like the default (L3DT, §5).
    pub fn tile_y_from_north(self) -> bool {
        matches!(self, Preset::Unreal | Preset::Godot)
    }

    /// Import settings that reproduce the heights in metres, for the manifest. `tile` is the
    /// grid of one heightmap (a tile, or the whole map), `min`/`max` the height range mapped
    /// onto 0..=65535 (spec §4.1–4.2).
    pub fn engine_settings(self, tile: &Grid, min: f64, max: f64) -> serde_json::Value {
        let span = max - min;
        let step = span / 65535.0;
        match self {
            Preset::Unreal => {
                // §4.2: local height = (v − 32768)/128 · ScaleZ cm; v = 0 ↦ min, v = 65535 ↦ max.
                let scale_z = 12800.0 * span / 65535.0;
                json!({
                    "engine": "unreal",
                    "heightmap_size": [tile.cols, tile.rows],
                    "landscape": unreal_layout(tile.cols),
                    "scale_cm": [tile.spacing * 100.0, tile.spacing * 100.0, scale_z],
                    "location_z_cm": 100.0 * min + 256.0 * scale_z,
                    "height_step_m": step,
                    "axes": "SWG x (east) = Unreal +X; SWG z (north) = Unreal -Y: image row 0, the north edge, is the landscape's minimum Y",
                })
            }
            Preset::Unity => json!({
                "engine": "unity",
                "heightmap_resolution": tile.cols,
                "depth_bits": 16,
                "byte_order": "Windows (little-endian)",
                "flip_vertically": false,
                "terrain_size_m": [tile.east_x() - tile.x0, span, tile.north_z() - tile.z0],
                "terrain_position_m": [tile.x0, min, tile.z0],
                "height_step_m": step,
                "axes": "SWG x (east) = Unity +X, SWG z (north) = Unity +Z; the RAW's first row is the south (z = 0) edge",
            }),
            Preset::Godot => json!({
                "engine": "godot",
                "resolution": tile.cols,
                "format": "R16: unsigned 16-bit little-endian, no header",
                "min_height_m": min,
                "max_height_m": max,
                "cell_size_m": tile.spacing,
                "height_step_m": step,
                "axes": "SWG x (east) = Godot +X, SWG z (north) = Godot -Z: the first row is the north edge",
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreal_sizes_follow_epics_table() {
        // Epic's recommended sizes (spec §4.2) are all valid; 8193 is not.
        for n in [8129, 4033, 2017, 1009, 505, 253, 127, 8161] {
            assert!(Preset::Unreal.is_valid_size(n), "{n}");
            assert_eq!(unreal_layout(n).unwrap().size(), n);
        }
        assert!(!Preset::Unreal.is_valid_size(8193));
        assert!(unreal_layout(8193).is_none());
        let l = unreal_layout(8129).unwrap();
        assert_eq!((l.quads_per_section, l.sections_per_component, l.components), (127, 2, 32));
        // The bake sizes of a 16384 m planet map to the largest size not above them.
        assert_eq!(Preset::Unreal.fit_size(8193), 8161);
        assert_eq!(Preset::Unreal.fit_size(4097), 4081);
        assert_eq!(Preset::Unreal.fit_size(16385), 16321);
        assert_eq!(Preset::Unreal.fit_size(2), 8);
    }

    #[test]
    fn unity_and_godot_sizes() {
        assert_eq!(Preset::Unity.valid_sizes(), vec![33, 65, 129, 257, 513, 1025, 2049, 4097]);
        assert_eq!(Preset::Unity.fit_size(8193), 4097);
        assert_eq!(Preset::Unity.fit_size(1025), 1025);
        assert_eq!(Preset::Unity.fit_size(1024), 513);
        assert_eq!(Preset::Godot.valid_sizes().first(), Some(&65));
        assert_eq!(Preset::Godot.fit_size(16385), 4097);
    }

    #[test]
    fn unreal_import_settings_reproduce_metres() {
        let g = Grid { cols: 8161, rows: 8161, x0: -8192.0, z0: -8192.0, spacing: 16384.0 / 8160.0 };
        let (min, max) = (-120.0, 873.5);
        let s = Preset::Unreal.engine_settings(&g, min, max);
        let scale_z = s["scale_cm"][2].as_f64().unwrap();
        let loc = s["location_z_cm"].as_f64().unwrap();
        // World height (cm) of stored value v: actor Z + (v − 32768)/128 · ScaleZ.
        let world_m = |v: f64| (loc + (v - 32768.0) / 128.0 * scale_z) / 100.0;
        assert!((world_m(0.0) - min).abs() < 1e-9);
        assert!((world_m(65535.0) - max).abs() < 1e-9);
        assert!((s["scale_cm"][0].as_f64().unwrap() - 200.784).abs() < 1e-3);
        assert_eq!(s["landscape"]["components"], 16);
    }
}
