//! The map catalogue: every map a bake can write, in one table ([`MAPS`]) that the command line
//! (`--maps`), the bake pipeline, golden checks, the C API and the Python package read. Adding a
//! map is one row here plus its encoder where the maps are written (a `match` on [`MapKind`]
//! there has no catch-all arm, so the compiler names every place that needs it).
//!
//! ```
//! use trnbake_swg::maps::MapKind;
//!
//! let m: MapKind = "flora_families".parse().unwrap();
//! assert_eq!(m.name(), "flora_families");
//! assert!(m.info().needs_surface_passes && !m.info().default);
//! assert_eq!(MapKind::ALL.len(), trnbake_swg::maps::MAPS.len());
//! ```

use crate::model::Terrain;
use crate::surface::SurfaceEvaluator;
use crate::water::WaterTables;

/// One map of a bake. The order is the order maps are written and listed in a manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "clap", value(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum MapKind {
    Height,
    Normals,
    Splat,
    Flora,
    FloraFamilies,
    Scatter,
    Water,
    Env,
    Color,
    Exclude,
    Smap,
    Preview,
    Slope,
    Spawnable,
}

/// What a map's files hold, in a form a reader can decide on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Samples {
    /// Float32 metres (GeoTIFF), with 16-bit PNG/RAW renderings.
    Metres,
    /// 8-bit RGB or grey images (PNG).
    Bytes,
    /// Family ids (UInt16 GeoTIFF, no unit), named in a legend.
    Ids,
    /// Probabilities 0..1 as 16-bit PNG (0..65535).
    Probability,
    /// Points (CSV) or chunk flags with a JSON description.
    Other,
    /// Float32 degrees (GeoTIFF).
    Degrees,
    /// UInt8 codes (GeoTIFF), named in a legend.
    Codes,
}

/// A row of the catalogue.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct MapInfo {
    pub kind: MapKind,
    /// The name `--maps` takes and manifests use.
    pub name: &'static str,
    /// The files the map writes (`{class}`: each flora class; `{k}`, `{i}`, `{j}`: a number;
    /// `{family}`: a family id; `{layer}`: an engine layer name; `{ext}`: a format's extension).
    /// Every georeferenced PNG has its world file (`.pgw`).
    pub files: &'static [&'static str],
    pub samples: Samples,
    /// What the map shows, for `--help` and the docs.
    pub description: &'static str,
    /// Whether the map reads the shader or later surface passes (swg-trn §5.2 steps 2–4);
    /// normals, water and SMAP read the heights only.
    pub needs_surface_passes: bool,
    /// Whether a figure of the whole grid decides how the map is written (splat channels,
    /// flora density ranges and legends, the families present, the preview's height tint), so
    /// a sharded bake's merge takes it from the shards' band summaries.
    pub whole_grid_figure: bool,
    /// The legend file that names the map's values, if any.
    pub legend: Option<&'static str>,
    /// GDAL's colour interpretation of the map's images (`Gray`, `RGB`, `RGBA`, `Undefined`).
    pub gdal_colour: &'static str,
    /// Written by default (`--maps auto`) when the terrain feeds it.
    pub default: bool,
}

/// Every map, in [`MapKind`] order.
pub const MAPS: &[MapInfo] = &[
    MapInfo {
        kind: MapKind::Height,
        name: "height",
        files: &[
            "height.tif",
            "height.png",
            "height.pgw",
            "height.ter",
            "height.raw",
            "height.r16",
            "height.r32",
            "height_u16.tif",
            "height.vrt",
            "height_u16.vrt",
            "height_x{i}_y{j}.{ext}",
            "height_u16_x{i}_y{j}.{ext}",
        ],
        samples: Samples::Metres,
        description: "ground height in metres (every --format)",
        needs_surface_passes: false,
        whole_grid_figure: true,
        legend: None,
        gdal_colour: "Gray",
        default: true,
    },
    MapInfo {
        kind: MapKind::Normals,
        name: "normals",
        files: &["normals.png", "normals.pgw"],
        samples: Samples::Bytes,
        description: "surface normals, RGB = (x, z, y) · 0.5 + 0.5",
        needs_surface_passes: false,
        whole_grid_figure: false,
        legend: None,
        gdal_colour: "RGB",
        default: true,
    },
    MapInfo {
        kind: MapKind::Splat,
        name: "splat",
        files: &[
            "shader_id.tif",
            "shader_id.tif.aux.xml",
            "splat_{k}.png",
            "splat_{k}.pgw",
            "splat_legend.json",
            "splat_preview.png",
            "splat_preview.pgw",
            "splat_unreal_{layer}.png",
            "splat_unreal_layers.json",
            "splat_unity_{k}.png",
            "splat_unity.json",
        ],
        samples: Samples::Bytes,
        description: "shader family weights (4 a PNG, summing to 255) and the dominant family id",
        needs_surface_passes: true,
        whole_grid_figure: true,
        legend: Some("splat_legend.json"),
        gdal_colour: "RGBA",
        default: true,
    },
    MapInfo {
        kind: MapKind::Flora,
        name: "flora",
        files: &["flora_{class}_id.tif", "flora_{class}_id.tif.aux.xml", "flora_{class}_density.png", "flora_{class}_density.pgw", "flora_legend.json"],
        samples: Samples::Ids,
        description: "per flora class, the most likely family and its placement probability",
        needs_surface_passes: true,
        whole_grid_figure: true,
        legend: Some("flora_legend.json"),
        gdal_colour: "Gray",
        default: true,
    },
    MapInfo {
        kind: MapKind::FloraFamilies,
        name: "flora_families",
        files: &["flora_{class}_family_{family}.png", "flora_{class}_family_{family}.pgw"],
        samples: Samples::Probability,
        description: "per flora family, its placement probability",
        needs_surface_passes: true,
        whole_grid_figure: true,
        legend: None,
        gdal_colour: "Gray",
        default: false,
    },
    MapInfo {
        kind: MapKind::Scatter,
        name: "scatter",
        files: &["flora_{class}_points.csv"],
        samples: Samples::Other,
        description: "a deterministic scatter of flora instances (x, z, height, family)",
        needs_surface_passes: true,
        whole_grid_figure: false,
        legend: None,
        gdal_colour: "Undefined",
        default: false,
    },
    MapInfo {
        kind: MapKind::Water,
        name: "water",
        files: &["water_height.tif", "water_mask.png", "water_mask.pgw"],
        samples: Samples::Metres,
        description: "the water surface height (NaN where dry) and the under-water mask",
        needs_surface_passes: false,
        whole_grid_figure: false,
        legend: None,
        gdal_colour: "Gray",
        default: true,
    },
    MapInfo {
        kind: MapKind::Env,
        name: "env",
        files: &["env_id.tif", "env_id.tif.aux.xml"],
        samples: Samples::Ids,
        description: "the environment family id",
        needs_surface_passes: true,
        whole_grid_figure: false,
        legend: None,
        gdal_colour: "Gray",
        default: true,
    },
    MapInfo {
        kind: MapKind::Color,
        name: "color",
        files: &["color.png", "color.pgw"],
        samples: Samples::Bytes,
        description: "the colour affectors' RGB",
        needs_surface_passes: true,
        whole_grid_figure: false,
        legend: None,
        gdal_colour: "RGB",
        default: true,
    },
    MapInfo {
        kind: MapKind::Exclude,
        name: "exclude",
        files: &["exclude.png", "exclude.pgw", "passable.png", "passable.pgw"],
        samples: Samples::Bytes,
        description: "the exclusion and passability masks (255 = excluded / passable)",
        needs_surface_passes: true,
        whole_grid_figure: false,
        legend: None,
        gdal_colour: "Gray",
        default: true,
    },
    MapInfo {
        kind: MapKind::Smap,
        name: "smap",
        files: &["smap.png", "smap.pgw", "smap.json"],
        samples: Samples::Other,
        description: "the 8 m rough-terrain chunks (swg-trn §2.3)",
        needs_surface_passes: false,
        whole_grid_figure: false,
        legend: None,
        gdal_colour: "Gray",
        default: false,
    },
    MapInfo {
        kind: MapKind::Preview,
        name: "preview",
        files: &["preview.png", "preview.pgw"],
        samples: Samples::Bytes,
        description: "a shaded colour preview (legend colours, water, else a height tint)",
        needs_surface_passes: true,
        whole_grid_figure: true,
        legend: None,
        gdal_colour: "RGB",
        default: true,
    },
    MapInfo {
        kind: MapKind::Slope,
        name: "slope",
        files: &["slope.tif"],
        samples: Samples::Degrees,
        description: "the ground's slope in degrees (central differences one post either side; at 2 m, `slope_at`)",
        needs_surface_passes: false,
        whole_grid_figure: false,
        legend: None,
        gdal_colour: "Gray",
        default: false,
    },
    MapInfo {
        kind: MapKind::Spawnable,
        name: "spawnable",
        files: &["spawnable.tif", "spawnable.tif.aux.xml", "spawnable_legend.json"],
        samples: Samples::Codes,
        description: "1 where a creature may stand (--water-depth, --max-slope, no exclusion or flatten), else the reason (legend)",
        needs_surface_passes: true,
        whole_grid_figure: false,
        legend: Some("spawnable_legend.json"),
        gdal_colour: "Gray",
        default: false,
    },
];

impl MapKind {
    /// Every map, in order.
    pub const ALL: [MapKind; 14] = [
        MapKind::Height,
        MapKind::Normals,
        MapKind::Splat,
        MapKind::Flora,
        MapKind::FloraFamilies,
        MapKind::Scatter,
        MapKind::Water,
        MapKind::Env,
        MapKind::Color,
        MapKind::Exclude,
        MapKind::Smap,
        MapKind::Preview,
        MapKind::Slope,
        MapKind::Spawnable,
    ];

    /// The map's row of [`MAPS`].
    pub fn info(self) -> &'static MapInfo {
        &MAPS[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The names of every map, `, `-separated (for messages).
    pub fn names() -> String {
        MAPS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
    }
}

impl std::fmt::Display for MapKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for MapKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        MAPS.iter().find(|m| m.name == s).map(|m| m.kind).ok_or_else(|| format!("unknown map `{s}` (auto, {})", MapKind::names()))
    }
}

/// The maps the terrain feeds (what `--maps auto` bakes): each [`MapInfo::default`] map that
/// some rule or table of the file feeds; height, normals and the preview always.
pub fn default_maps(t: &Terrain, surface: &SurfaceEvaluator) -> Vec<MapKind> {
    use crate::plan::*;
    let kinds: Vec<u32> = surface.plan.affectors.iter().map(|a| a.kind).collect();
    let has = |ks: &[u32]| kinds.iter().any(|k| ks.contains(k));
    let fed = |m: MapKind| match m {
        MapKind::Height | MapKind::Normals | MapKind::Preview => true,
        MapKind::Splat => has(&[AFFECTOR_SHADER_CONSTANT, AFFECTOR_SHADER_REPLACE, AFFECTOR_ROAD_SHADER]),
        MapKind::Flora => kinds.iter().any(|k| (AFFECTOR_FLORA_BASE..AFFECTOR_FLORA_BASE + 4).contains(k)),
        MapKind::Water => WaterTables::new(t).has_any(),
        MapKind::Env => has(&[AFFECTOR_ENVIRONMENT]),
        MapKind::Color => has(&[AFFECTOR_COLOR_CONSTANT, AFFECTOR_COLOR_RAMP_HEIGHT, AFFECTOR_COLOR_RAMP_FRACTAL]),
        MapKind::Exclude => has(&[AFFECTOR_EXCLUDE, AFFECTOR_PASSABLE]),
        MapKind::FloraFamilies | MapKind::Scatter | MapKind::Smap | MapKind::Slope | MapKind::Spawnable => false,
    };
    MapKind::ALL.into_iter().filter(|&m| m.info().default && fed(m)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_kind_order_and_names_parse_back() {
        for (k, m) in MAPS.iter().enumerate() {
            assert_eq!(m.kind as usize, k, "{} is out of order", m.name);
            assert_eq!(MapKind::ALL[k], m.kind);
            assert_eq!(m.name.parse::<MapKind>(), Ok(m.kind));
            assert_eq!(serde_json::to_value(m.kind).unwrap(), m.name, "serde uses the table's name");
        }
        assert!("heights".parse::<MapKind>().unwrap_err().contains("flora_families"));
    }
}
