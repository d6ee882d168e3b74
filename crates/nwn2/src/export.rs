//! Area export (nwn2 §A.1–A.7): heights on the area's vertex grid → TRWH, one TRRN per
//! megatile (vertex normals, white tint, blend maps), WATR where there is water, and the
//! computed walkmesh of [`super::walkmesh`].
//!
//! Coordinates: area (x, y) = (world x − X0, world z − Z0), vertex (c, r) at (c, r)·5/3 m,
//! row 0 at the area's minimum y (south). Heights are the area's z.

use std::io;

use super::model::*;
use super::walkmesh::{self, quad_triangles, VertexGrid, WalkOptions};
use trnbake_raster::HeightSource;

/// Vertices along one side of a megatile, and quads.
pub const MT_VERTS: u32 = 25;
pub const MT_QUADS: u32 = 24;
/// Blend-map size (nwn2 §A.4: both DDS are 128 × 128).
pub const BLEND_SIZE: usize = 128;
/// The height range exports must fit unless `--height-range` rescales them. The spec does not
/// state a limit of the game; this range is this project's conservative choice (documented in
/// the README), wide enough for any toolset-made area.
pub const GAME_HEIGHT_RANGE: (f32, f32) = (-100.0, 100.0);

#[derive(Clone, Debug)]
pub struct AreaOptions {
    /// Width and height in megatiles.
    pub megatiles: (u32, u32),
    /// TRWH id, also the 6-digit prefix of the TRRN names.
    pub id: u32,
    /// Area name inside the TRRN names.
    pub name: String,
    /// Up to six texture names (texture 0 covers the whole area).
    pub textures: Vec<String>,
    /// `terrainmaterials.2da`, when given: the textures' footstep materials and colours.
    pub materials: Option<super::materials::TerrainMaterials>,
    pub walk: WalkOptions,
    /// Blend weights per cell; `None`: texture 0 everywhere.
    pub blend: Option<Blend>,
}

/// Texture weights on a grid of cells, `res × res` per megatile, row-major from the area's
/// minimum y; each cell's six weights sum to 255 (nwn2 §A.4). The 128² blend-map pixels
/// take the cell they fall in.
#[derive(Clone, Debug)]
pub struct Blend {
    pub res: u32,
    pub weights: Vec<[u8; 6]>,
}

impl Blend {
    /// Weights at area position (x, y).
    pub fn at(&self, cols: u32, x: f32, y: f32) -> [u8; 6] {
        let rows = self.weights.len() as u32 / cols.max(1);
        let c = ((x / 40.0 * self.res as f32) as u32).min(cols - 1);
        let r = ((y / 40.0 * self.res as f32) as u32).min(rows - 1);
        self.weights[(r * cols + c) as usize]
    }
}

/// The footstep material bit of a texture by its name (nwn2 §A.6.2, the `Material` column of
/// `terrainmaterials.2da`; guessed from the name where `--materials` does not give the table).
pub fn texture_material(name: &str) -> u16 {
    let n = name.to_ascii_lowercase();
    if n.contains("grass") {
        0x10
    } else if n.contains("cliff") || n.contains("rock") || n.contains("stone") {
        0x20
    } else if n.contains("mud") {
        0x400
    } else if n.contains("swamp") {
        0x200
    } else if n.contains("leaves") || n.contains("leaf") {
        0x800
    } else if n.contains("wood") {
        0x40
    } else {
        0x08 // dirt, sand and anything else
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    #[error("{0} x {1} megatiles: each side must be 1–64 (pass --megatiles WxH, or a smaller --region)")]
    BadSize(u32, u32),
    #[error("{0} textures given; an area has at most 6")]
    TooManyTextures(usize),
    #[error("texture name `{0}` is longer than 31 bytes")]
    LongTexture(String),
    #[error("heights {lo} … {hi} m are outside the game range {} … {} m; pass --height-range MIN,MAX to rescale them", GAME_HEIGHT_RANGE.0, GAME_HEIGHT_RANGE.1)]
    OutOfRange { lo: f32, hi: f32 },
    #[error("height-range {0} … {1}: must be finite, MIN < MAX, inside {lo} … {hi}", lo = GAME_HEIGHT_RANGE.0, hi = GAME_HEIGHT_RANGE.1)]
    BadRange(f32, f32),
    #[error("the input has no finite height at vertex ({0}, {1})")]
    NotFinite(u32, u32),
    #[error("reading heights: {0}")]
    Io(#[from] io::Error),
    #[error(transparent)]
    Walk(#[from] walkmesh::WalkError),
}

/// Check the size and return the vertex grid's (cols, rows).
pub fn grid_size(w: u32, h: u32) -> Result<(u32, u32), ExportError> {
    if !(1..=64).contains(&w) || !(1..=64).contains(&h) {
        return Err(ExportError::BadSize(w, h));
    }
    Ok((MT_QUADS * w + 1, MT_QUADS * h + 1))
}

/// Bilinear samples of `src` on the area's vertex grid, with the region `[x0, x1] × [z0, z1]`
/// (in the source's own coordinates) stretched onto the area's `cols × rows` vertices.
pub fn sample_source(src: &dyn HeightSource, region: [f64; 4], cols: u32, rows: u32) -> Result<Vec<f32>, ExportError> {
    let g = src.grid();
    let [x0, z0, x1, z1] = region;
    // Source posts covering the region (one extra on each side for interpolation).
    let to_c = |x: f64| (x - g.x0) / g.spacing;
    let to_r = |z: f64| (z - g.z0) / g.spacing;
    let (c_lo, c_hi) = (to_c(x0.min(x1)).floor().max(0.0), to_c(x0.max(x1)).ceil().min(f64::from(g.cols - 1)));
    let (r_lo, r_hi) = (to_r(z0.min(z1)).floor().max(0.0), to_r(z0.max(z1)).ceil().min(f64::from(g.rows - 1)));
    if c_hi < c_lo
        || r_hi < r_lo
        || to_c(x0.min(x1)) < -1e-6
        || to_r(z0.min(z1)) < -1e-6
        || to_c(x0.max(x1)) > f64::from(g.cols - 1) + 1e-6
        || to_r(z0.max(z1)) > f64::from(g.rows - 1) + 1e-6
    {
        return Err(ExportError::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("region {x0},{z0},{x1},{z1} is not inside the heightmap's extent {},{},{},{}", g.x0, g.z0, g.east_x(), g.north_z()),
        )));
    }
    let (bc, br) = (c_lo as u32, r_lo as u32);
    let (bw, bh) = (c_hi as u32 - bc + 1, r_hi as u32 - br + 1);
    let mut block = vec![0f32; bw as usize * bh as usize];
    src.read_block(bc, br, bw, bh, &mut block)?;
    let at = |c: u32, r: u32| block[(r * bw + c) as usize];
    let mut out = Vec::with_capacity(cols as usize * rows as usize);
    for r in 0..rows {
        let z = z0 + (z1 - z0) * f64::from(r) / f64::from(rows - 1);
        let fr = (to_r(z) - f64::from(br)).clamp(0.0, f64::from(bh - 1));
        let r0 = (fr.floor() as u32).min(bh.saturating_sub(2));
        let tr = fr - f64::from(r0);
        for c in 0..cols {
            let x = x0 + (x1 - x0) * f64::from(c) / f64::from(cols - 1);
            let fc = (to_c(x) - f64::from(bc)).clamp(0.0, f64::from(bw - 1));
            let c0 = (fc.floor() as u32).min(bw.saturating_sub(2));
            let tc = fc - f64::from(c0);
            let (c1, r1) = ((c0 + 1).min(bw - 1), (r0 + 1).min(bh - 1));
            let s = f64::from(at(c0, r0)) * (1.0 - tc) + f64::from(at(c1, r0)) * tc;
            let n = f64::from(at(c0, r1)) * (1.0 - tc) + f64::from(at(c1, r1)) * tc;
            out.push((s * (1.0 - tr) + n * tr) as f32);
        }
    }
    Ok(out)
}

/// Fit heights into the game range: unchanged when they fit and no range is given, linearly
/// mapped from their own min … max onto `range` when one is. Returns the map as
/// (scale, offset), `new = old · scale + offset`, for water levels.
pub fn fit_heights(h: &mut [f32], cols: u32, range: Option<(f32, f32)>) -> Result<(f64, f64), ExportError> {
    if let Some(i) = h.iter().position(|v| !v.is_finite()) {
        return Err(ExportError::NotFinite(i as u32 % cols, i as u32 / cols));
    }
    let (lo, hi) = h.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    match range {
        None if lo < GAME_HEIGHT_RANGE.0 || hi > GAME_HEIGHT_RANGE.1 => Err(ExportError::OutOfRange { lo, hi }),
        None => Ok((1.0, 0.0)),
        Some((a, b)) => {
            if !(a.is_finite() && b.is_finite() && a < b && a >= GAME_HEIGHT_RANGE.0 && b <= GAME_HEIGHT_RANGE.1) {
                return Err(ExportError::BadRange(a, b));
            }
            let span = f64::from(hi) - f64::from(lo);
            let scale = if span > 0.0 { (f64::from(b) - f64::from(a)) / span } else { 0.0 };
            let offset = f64::from(a) - f64::from(lo) * scale;
            for v in h.iter_mut() {
                *v = (f64::from(*v) * scale + offset).clamp(f64::from(a), f64::from(b)) as f32;
            }
            Ok((scale, offset))
        }
    }
}

/// Build the area file. `water[k]` is the water level of megatile k (row-major) or `None`.
pub fn build(grid: &VertexGrid, water: &[Option<f32>], opts: &AreaOptions) -> Result<Nwn2File, ExportError> {
    let (w, h) = opts.megatiles;
    let (cols, rows) = grid_size(w, h)?;
    assert_eq!((grid.cols, grid.rows), (cols, rows), "grid matches the megatiles");
    if opts.textures.len() > 6 {
        return Err(ExportError::TooManyTextures(opts.textures.len()));
    }
    if let Some(t) = opts.textures.iter().find(|t| t.len() > 31) {
        return Err(ExportError::LongTexture(t.clone()));
    }
    let normals = vertex_normals(grid);
    let mut packets = vec![Packet::Trwh(Trwh { width: w, height: h, id: opts.id })];
    for my in 0..h {
        for mx in 0..w {
            packets.push(Packet::Trrn(Box::new(trrn(grid, &normals, mx, my, opts))));
        }
    }
    for my in 0..h {
        for mx in 0..w {
            if let Some(level) = water.get((my * w + mx) as usize).copied().flatten() {
                packets.push(Packet::Watr(Box::new(watr(grid, mx, my, level))));
            }
        }
    }
    let aswm = bake_walkmesh(grid, opts)?;
    packets.push(Packet::Aswm(Box::new(AswmPacket { compressed: true, original: None, aswm })));
    Ok(Nwn2File { version_major: 2, version_minor: 3, packets })
}

/// The texture names of an area (texture 0 first).
pub fn texture_names(opts: &AreaOptions) -> Vec<&str> {
    if opts.textures.is_empty() {
        vec![DEFAULT_TEXTURE]
    } else {
        opts.textures.iter().map(|s| s.as_str()).collect()
    }
}

/// The walkmesh of an area, footstep materials from the dominant texture under each centroid.
pub fn bake_walkmesh(grid: &VertexGrid, opts: &AreaOptions) -> Result<Aswm, ExportError> {
    let names = texture_names(opts);
    let mats: Vec<u16> = names.iter().map(|n| opts.materials.as_ref().and_then(|t| t.get(n)).map_or_else(|| texture_material(n), |m| m.material)).collect();
    let cells = opts.megatiles.0 * opts.blend.as_ref().map_or(1, |b| b.res);
    let material = |c: [f32; 2]| match &opts.blend {
        None => mats[0],
        Some(b) => {
            let w = b.at(cells, c[0], c[1]);
            let k = (0..mats.len()).max_by_key(|&k| (w[k], usize::MAX - k)).unwrap_or(0);
            mats[k]
        }
    };
    Ok(walkmesh::bake_with(grid, &opts.walk, &material)?)
}

/// Smooth vertex normals from central differences on the whole area grid (one-sided at the
/// edges), so normals agree across megatile seams.
fn vertex_normals(g: &VertexGrid) -> Vec<[f32; 3]> {
    let s = walkmesh::VERTEX_SPACING;
    let hgt = |c: u32, r: u32| f64::from(g.heights[(r * g.cols + c) as usize]);
    let mut out = Vec::with_capacity(g.heights.len());
    for r in 0..g.rows {
        for c in 0..g.cols {
            let (cl, ch) = (c.saturating_sub(1), (c + 1).min(g.cols - 1));
            let (rl, rh) = (r.saturating_sub(1), (r + 1).min(g.rows - 1));
            let dx = (hgt(ch, r) - hgt(cl, r)) / (f64::from(ch - cl) * s);
            let dy = (hgt(c, rh) - hgt(c, rl)) / (f64::from(rh - rl) * s);
            let len = (dx * dx + dy * dy + 1.0).sqrt();
            out.push([(-dx / len) as f32, (-dy / len) as f32, (1.0 / len) as f32]);
        }
    }
    out
}

fn trrn(g: &VertexGrid, normals: &[[f32; 3]], mx: u32, my: u32, opts: &AreaOptions) -> Trrn {
    let (c0, r0) = (mx * MT_QUADS, my * MT_QUADS);
    let origin = [mx as f32 * 40.0, my as f32 * 40.0];
    let mut vertices = Vec::with_capacity((MT_VERTS * MT_VERTS) as usize);
    for r in 0..MT_VERTS {
        for c in 0..MT_VERTS {
            let position = g.pos(c0 + c, r0 + r);
            let (xl, yl) = (position[0] - origin[0], position[1] - origin[1]);
            vertices.push(TrrnVertex {
                position,
                normal: normals[((r0 + r) * g.cols + c0 + c) as usize],
                tint: [255; 4],
                // nwn2 §A.4: uv = (−x_local/4, y_local/4), weights = local/40.
                uv: [-xl / 4.0, yl / 4.0],
                weights: [xl / 40.0, yl / 40.0],
            });
        }
    }
    let mut triangles = Vec::with_capacity(2 * (MT_QUADS * MT_QUADS) as usize);
    for j in 0..MT_QUADS {
        for i in 0..MT_QUADS {
            // Global quad indices decide the diagonal (nwn2 §A.1); indices are local.
            for tri in quad_triangles(c0 + i, r0 + j) {
                triangles.push(tri.map(|(c, r)| ((r - r0) * MT_VERTS + (c - c0)) as u16));
            }
        }
    }
    let mut textures = [[0u8; 32]; 6];
    let mut colors = [[1.0f32; 3]; 6];
    let names = texture_names(opts);
    for (k, n) in names.iter().enumerate() {
        textures[k] = fixed_name(n);
        colors[k] = match opts.materials.as_ref().and_then(|t| t.get(n)).and_then(|m| m.rgb) {
            Some(rgb) => rgb.map(|c| f32::from(c) / 255.0),
            None => texture_color(n),
        };
    }
    Trrn {
        name: fixed_name(&format!("{:06}{}{:02}x{:02}y", opts.id, opts.name, mx, my)),
        textures,
        colors,
        vertices,
        triangles,
        // Textures 0–3 in R, G, B, A of dds_a, 4–5 in R, G of dds_b; pixels are stored
        // B, G, R, A; pixel (px, py) covers local ((p + 0.5)·40/128), row 0 at minimum y.
        dds_a: dds_argb(|px, py| {
            let w = pixel_weights(opts, mx, my, px, py);
            [w[2], w[1], w[0], w[3]]
        }),
        dds_b: dds_argb(|px, py| {
            let w = pixel_weights(opts, mx, my, px, py);
            [0, w[5], w[4], 0]
        }),
        grass: Vec::new(),
    }
}

fn pixel_weights(opts: &AreaOptions, mx: u32, my: u32, px: usize, py: usize) -> [u8; 6] {
    match &opts.blend {
        None => [255, 0, 0, 0, 0, 0],
        Some(b) => {
            let (x, y) = (mx as f32 * 40.0 + (px as f32 + 0.5) * 40.0 / 128.0, my as f32 * 40.0 + (py as f32 + 0.5) * 40.0 / 128.0);
            b.at(opts.megatiles.0 * b.res, x, y)
        }
    }
}

/// A 128 × 128 A8R8G8B8 DDS with the header of toolset blend maps (nwn2 §A.4).
pub fn dds_argb(px: impl Fn(usize, usize) -> [u8; 4]) -> Vec<u8> {
    let mut out = dds_header(0x41, 32, [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0xFF00_0000], 0x1002);
    for y in 0..BLEND_SIZE {
        for x in 0..BLEND_SIZE {
            out.extend_from_slice(&px(x, y));
        }
    }
    out
}

/// The 128-byte header (magic included) of a 128 × 128 uncompressed DDS.
fn dds_header(pf_flags: u32, bits: u32, masks: [u32; 4], caps: u32) -> Vec<u8> {
    let mut h = vec![0u8; 128];
    let mut put = |o: usize, v: u32| h[o..o + 4].copy_from_slice(&v.to_le_bytes());
    put(4, 124);
    put(8, 0x1007);
    put(12, BLEND_SIZE as u32);
    put(16, BLEND_SIZE as u32);
    put(76, 32);
    put(80, pf_flags);
    put(88, bits);
    for (k, m) in masks.iter().enumerate() {
        put(92 + 4 * k, *m);
    }
    put(108, caps);
    h[..4].copy_from_slice(b"DDS ");
    h
}

/// Water of megatile (mx, my) at `level` (nwn2 §A.5): a 25 × 25 grid at constant z,
/// triangles flagged water where any corner's ground is below the level, and an 8-bit
/// luminance mask (255 = water) sampled at pixel centres.
fn watr(g: &VertexGrid, mx: u32, my: u32, level: f32) -> Watr {
    let (c0, r0) = (mx * MT_QUADS, my * MT_QUADS);
    let origin = [mx as f32 * 40.0, my as f32 * 40.0];
    let mut vertices = Vec::with_capacity(625);
    for r in 0..MT_VERTS {
        for c in 0..MT_VERTS {
            let [x, y, _] = g.pos(c0 + c, r0 + r);
            let (xl, yl) = (x - origin[0], y - origin[1]);
            vertices.push(WatrVertex { position: [x, y, level], uv5: [xl / 8.0, yl / 8.0], uv: [xl / 40.0, yl / 40.0] });
        }
    }
    let mut triangles = Vec::with_capacity(1152);
    let mut flags = Vec::with_capacity(1152);
    for j in 0..MT_QUADS {
        for i in 0..MT_QUADS {
            for tri in quad_triangles(c0 + i, r0 + j) {
                let wet = tri.iter().any(|&(c, r)| g.heights[(r * g.cols + c) as usize] < level);
                triangles.push(tri.map(|(c, r)| ((r - r0) * MT_VERTS + (c - c0)) as u16));
                flags.push(u32::from(!wet));
            }
        }
    }
    let mut dds = dds_header(0x20000, 8, [0xFF, 0, 0, 0], 0x1000);
    for py in 0..BLEND_SIZE {
        for px in 0..BLEND_SIZE {
            // Nearest vertex to the pixel centre (pixel (px, py) covers local ((p + 0.5)·40/128)).
            let c = (((px as f64 + 0.5) * 40.0 / 128.0) / walkmesh::VERTEX_SPACING).round() as u32;
            let r = (((py as f64 + 0.5) * 40.0 / 128.0) / walkmesh::VERTEX_SPACING).round() as u32;
            let ground = g.heights[((r0 + r) * g.cols + c0 + c) as usize];
            dds.push(if ground < level { 255 } else { 0 });
        }
    }
    Watr {
        name: [0; 32],
        unknown: [0; 96],
        color: WATER_COLOR,
        ripple: WATER_RIPPLE,
        smoothness: WATER_SMOOTHNESS,
        reflect_bias: WATER_REFLECT_BIAS,
        reflect_power: 1.0,
        specular_power: 180.0,
        specular_coefficient: 0.5,
        textures: WATER_TEXTURES.map(|(d, rate)| WaterTexture { name: fixed_name(WATER_TEXTURE), direction: d, rate, angle: 0.0 }),
        uv_offset: [5.0 * mx as f32, 5.0 * my as f32],
        vertices,
        triangles,
        triangle_flags: flags,
        dds,
        megatile: [mx, my],
    }
}

// Defaults taken from the toolset TRN sample (nwn2 §A.11): its base texture and the water of
// its WATR packets.
/// Texture 0 when `--textures` is not given: the toolset's default grass.
pub const DEFAULT_TEXTURE: &str = "TT_GG_Grass_19";
const WATER_TEXTURE: &str = "WT_LAKE01_n";
const WATER_COLOR: [f32; 3] = [193.0 / 255.0, 219.0 / 255.0, 247.0 / 255.0];
const WATER_RIPPLE: [f32; 2] = [0.1, 0.038];
const WATER_SMOOTHNESS: f32 = 0.471;
const WATER_REFLECT_BIAS: f32 = 0.3365;
const WATER_TEXTURES: [([f32; 2], f32); 3] =
    [([std::f32::consts::FRAC_1_SQRT_2, std::f32::consts::FRAC_1_SQRT_2], 0.096), ([-1.0, 0.0], 0.048), ([0.206_564_72, -0.978_432_95], 0.096)];

/// The four textures of the toolset sample (grass, dirt, rock, mud).
pub const DEFAULT_PALETTE: [&str; 4] = ["TT_GG_Grass_19", "TT_GD_Dirt_01", "TT_GR_Cliff_02", "TT_GM_Mud_02"];

/// The sand texture of the default map. Not in the toolset sample: the name follows its
/// `TT_G<kind>_<Name>_NN` pattern (G grass, D dirt, R rock, M mud) and is not verified against
/// the game's `terrainmaterials.2da`; `--textures` names another.
pub const SAND_TEXTURE: &str = "TT_GS_Sand_01";

/// The NWN2 texture a SWG shader family becomes when `--textures` is not given, by the
/// family's name: grass → grass, rock/cliff/stone → rock, sand/dune/desert → sand,
/// mud/swamp/marsh → mud, anything else → dirt. Returns the texture and the word that chose it
/// (`None`: no word matched, the dirt fallback).
pub fn default_texture(family: &str) -> (&'static str, Option<&'static str>) {
    let n = family.to_ascii_lowercase();
    const BY_NAME: &[(&str, &str)] = &[
        ("grass", "TT_GG_Grass_19"),
        ("moss", "TT_GG_Grass_19"),
        ("rock", "TT_GR_Cliff_02"),
        ("cliff", "TT_GR_Cliff_02"),
        ("stone", "TT_GR_Cliff_02"),
        ("sand", SAND_TEXTURE),
        ("dune", SAND_TEXTURE),
        ("desert", SAND_TEXTURE),
        ("mud", "TT_GM_Mud_02"),
        ("swamp", "TT_GM_Mud_02"),
        ("marsh", "TT_GM_Mud_02"),
    ];
    match BY_NAME.iter().find(|(word, _)| n.contains(word)) {
        Some(&(word, texture)) => (texture, Some(word)),
        None => ("TT_GD_Dirt_01", None),
    }
}

/// Colour of a texture (nwn2 §A.4: `terrainmaterials.2da` R, G, B / 255, as the TRN sample
/// stores them); white when unknown.
pub fn texture_color(name: &str) -> [f32; 3] {
    let rgb: [u8; 3] = match name {
        "TT_GG_Grass_19" => [64, 202, 54],
        "TT_GD_Dirt_01" => [124, 109, 27],
        "TT_GR_Cliff_02" => [139, 109, 79],
        "TT_GM_Mud_02" => [132, 121, 96],
        _ => return [1.0; 3],
    };
    rgb.map(|c| f32::from(c) / 255.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trnbake_raster::{Grid, MemSource};

    #[test]
    fn default_textures_follow_the_family_name() {
        assert_eq!(default_texture("grass_dark"), ("TT_GG_Grass_19", Some("grass")));
        assert_eq!(default_texture("Rock_Cliff_Red"), ("TT_GR_Cliff_02", Some("rock")));
        assert_eq!(default_texture("cliff face"), ("TT_GR_Cliff_02", Some("cliff")));
        assert_eq!(default_texture("Sand_light"), (SAND_TEXTURE, Some("sand")));
        assert_eq!(default_texture("mud_wet"), ("TT_GM_Mud_02", Some("mud")));
        assert_eq!(default_texture("dirt"), ("TT_GD_Dirt_01", None));
        assert_eq!(default_texture(""), ("TT_GD_Dirt_01", None));
    }

    #[test]
    fn region_is_stretched_onto_the_vertex_grid() {
        // A plane is reproduced exactly by bilinear sampling: h = x + 2z.
        let g = Grid { cols: 101, rows: 81, x0: -50.0, z0: 10.0, spacing: 1.0 };
        let h: Vec<f32> = (0..g.len()).map(|i| (-50.0 + (i % 101) as f32) + 2.0 * (10.0 + (i / 101) as f32)).collect();
        let src = MemSource::south_first(g, h).unwrap();
        let (cols, rows) = grid_size(1, 1).unwrap();
        let region = [-40.0, 20.0, 30.0, 60.0];
        let out = sample_source(&src, region, cols, rows).unwrap();
        for r in 0..rows {
            for c in 0..cols {
                let x = -40.0 + 70.0 * f64::from(c) / 24.0;
                let z = 20.0 + 40.0 * f64::from(r) / 24.0;
                let got = out[(r * cols + c) as usize];
                assert!((f64::from(got) - (x + 2.0 * z)).abs() < 1e-3, "({c}, {r}): {got}");
            }
        }
        // A region leaving the heightmap is an error naming both extents.
        let e = sample_source(&src, [-60.0, 20.0, 0.0, 40.0], cols, rows).unwrap_err().to_string();
        assert!(e.contains("not inside the heightmap's extent -50,10,50,90"), "{e}");
    }

    #[test]
    fn heights_fit_or_are_rescaled() {
        let mut h = vec![-5.0, 0.0, 120.0];
        let e = fit_heights(&mut h, 3, None).unwrap_err().to_string();
        assert!(e.contains("-5 … 120 m are outside the game range -100 … 100 m"), "{e}");
        let (s, o) = fit_heights(&mut h, 3, Some((0.0, 50.0))).unwrap();
        assert_eq!(h, vec![0.0, 2.0, 50.0]);
        assert!((120.0 * s + o - 50.0).abs() < 1e-9);
        let mut h = vec![1.0, f32::NAN];
        assert!(fit_heights(&mut h, 2, None).unwrap_err().to_string().contains("vertex (1, 0)"));
        assert!(fit_heights(&mut [0.0], 1, Some((10.0, 5.0))).is_err());
    }
}
