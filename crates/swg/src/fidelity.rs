//! Fidelity checks against what the original tool baked into the real files
//! (swg-trn §2.3, §2.6, §9.2): PFPM flora ground heights, WMAP water bits and SMAP
//! rough-terrain bits. Used by tests and by `trnbake fidelity`.

use crate::eval::HeightEvaluator;
use crate::model::header::BakedMaps;
use crate::model::Terrain;
use serde::Serialize;

/// A small deterministic generator for choosing cells (SplitMix64).
pub struct CellPicker(u64);

impl CellPicker {
    pub fn new(seed: u64) -> Self {
        CellPicker(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// One PFPM cell whose baked height fell outside the evaluated range.
#[derive(Clone, Debug, Serialize)]
pub struct PfpmMiss {
    pub col: u32,
    pub row: u32,
    pub baked: f32,
    pub min: f32,
    pub max: f32,
    pub family: i32,
}

#[derive(Clone, Debug, Serialize)]
pub struct PfpmReport {
    pub cells: usize,
    pub passed: usize,
    pub misses: Vec<PfpmMiss>,
}

impl PfpmReport {
    pub fn rate(&self) -> f64 {
        if self.cells == 0 {
            1.0
        } else {
            self.passed as f64 / self.cells as f64
        }
    }
}

/// PFPM check (swg-trn §9.2 method 2): for `n` random cells holding a flora family, the
/// baked height must lie within [min − 0.05, max + 0.05] of the heights over a 9×9 sample
/// of the cell, edges included. `None` when the file has no PIMP/PFPM.
pub fn check_pfpm(t: &Terrain, e: &HeightEvaluator, n: usize, seed: u64) -> Option<PfpmReport> {
    check_pfpm_where(t, e, n, seed, &|_, _| true)
}

/// [`check_pfpm`] over the flora cells whose centre satisfies `keep(x, z)`.
pub fn check_pfpm_where(t: &Terrain, e: &HeightEvaluator, n: usize, seed: u64, keep: &dyn Fn(f32, f32) -> bool) -> Option<PfpmReport> {
    let (pimp, pfpm) = (t.flora_map.as_ref()?, t.flora_height_map.as_ref()?);
    let (w, hgt) = (pimp.control.width, pimp.control.height);
    if w == 0 || hgt == 0 {
        return None;
    }
    let cell = t.header.map_width / w as f32;
    let half = t.header.map_width * 0.5;
    // Cells that hold a family, in a deterministic random order.
    let mut flora_cells = Vec::new();
    for row in 0..hgt {
        for col in 0..w {
            let (cx, cz) = (-half + (col as f32 + 0.5) * cell, -half + (row as f32 + 0.5) * cell);
            if pimp.get(col, row).is_some_and(|f| f != 0) && keep(cx, cz) {
                flora_cells.push((col, row));
            }
        }
    }
    let mut pick = CellPicker::new(seed);
    for i in (1..flora_cells.len()).rev() {
        let j = pick.below(i as u64 + 1) as usize;
        flora_cells.swap(i, j);
    }
    flora_cells.truncate(n);
    let mut points = Vec::with_capacity(flora_cells.len() * 81);
    for &(col, row) in &flora_cells {
        let x0 = -half + col as f32 * cell;
        let z0 = -half + row as f32 * cell;
        for j in 0..9 {
            for i in 0..9 {
                points.push((x0 + i as f32 * cell / 8.0, z0 + j as f32 * cell / 8.0));
            }
        }
    }
    let heights = e.heights_anywhere(&points);
    let mut report = PfpmReport { cells: flora_cells.len(), passed: 0, misses: Vec::new() };
    for (k, &(col, row)) in flora_cells.iter().enumerate() {
        let hs = &heights[k * 81..(k + 1) * 81];
        let min = hs.iter().copied().fold(f32::MAX, f32::min);
        let max = hs.iter().copied().fold(f32::MIN, f32::max);
        let baked = pfpm.get(col, row).unwrap_or(f32::NAN);
        if baked >= min - 0.05 && baked <= max + 0.05 {
            report.passed += 1;
        } else {
            report.misses.push(PfpmMiss { col, row, baked, min, max, family: pimp.get(col, row).unwrap_or(0) });
        }
    }
    Some(report)
}

#[derive(Clone, Debug, Serialize)]
pub struct ChunkReport {
    pub chunks: usize,
    pub agree: usize,
    /// Disagreeing chunks: (col, row, baked bit, evaluated min height, evaluated max height).
    pub misses: Vec<(u32, u32, bool, f32, f32)>,
}

impl ChunkReport {
    pub fn rate(&self) -> f64 {
        if self.chunks == 0 {
            1.0
        } else {
            self.agree as f64 / self.chunks as f64
        }
    }
}

fn baked_bits(t: &Terrain) -> Option<(&crate::model::header::BakedMapsInfo, &[u8], &[u8])> {
    match t.baked_maps.as_ref()? {
        BakedMaps::Maps { info, water, slope } if info.bytes_per_row > 0 && info.rows > 0 => Some((info, &water.0, &slope.0)),
        _ => None,
    }
}

/// The chunk grid of the baked maps: (chunk width, chunks per side, half map width), from
/// the PTAT header (swg-trn §2.3: trust the header over the maps' own DATA).
fn chunk_grid(t: &Terrain) -> (f32, u32, f32) {
    let cw = t.header.chunk_width;
    (cw, (t.header.map_width / cw) as u32, t.header.map_width * 0.5)
}

fn min_max(s: &[f32]) -> (f32, f32) {
    (s.iter().copied().fold(f32::MAX, f32::min), s.iter().copied().fold(f32::MIN, f32::max))
}

fn bit(bits: &[u8], bytes_per_row: usize, col: u32, row: u32) -> Option<bool> {
    let byte = *bits.get(row as usize * bytes_per_row + col as usize / 8)?;
    Some(byte >> (col % 8) & 1 == 1)
}

/// WMAP check (swg-trn §2.3, §9.2 method 4): for `n` random chunks, the water bit equals
/// "some post of a `k`×`k` sample of the chunk (edges included) lies below the water
/// table there" — the global table or a local one (swg-trn §5.11), the highest applying.
/// `None` without global water or baked maps.
pub fn check_wmap(t: &Terrain, e: &HeightEvaluator, n: usize, k: u32, seed: u64) -> Option<ChunkReport> {
    if !t.header.use_global_water_table.get() {
        return None;
    }
    let (info, water, _) = baked_bits(t)?;
    let tables = crate::water::WaterTables::new(t);
    let (cw, count, half) = chunk_grid(t);
    let mut pick = CellPicker::new(seed);
    let chunks: Vec<(u32, u32)> = (0..n).map(|_| (pick.below(count as u64) as u32, pick.below(count as u64) as u32)).collect();
    let step = cw / (k - 1) as f32;
    let points: Vec<(f32, f32)> = chunks
        .iter()
        .flat_map(|&(c, r)| {
            let (x0, z0) = (-half + c as f32 * cw, -half + r as f32 * cw);
            (0..k * k).map(move |i| (x0 + (i % k) as f32 * step, z0 + (i / k) as f32 * step))
        })
        .collect();
    let hs = e.heights_anywhere(&points);
    let kk = (k * k) as usize;
    let mut report = ChunkReport { chunks: n, agree: 0, misses: Vec::new() };
    for (i, &(c, r)) in chunks.iter().enumerate() {
        let s = &hs[i * kk..(i + 1) * kk];
        let (min, max) = min_max(s);
        let wet = s.iter().zip(&points[i * kk..(i + 1) * kk]).any(|(&h, &(x, z))| tables.height_at(x, z).is_some_and(|w| h < w));
        let baked = bit(water, info.bytes_per_row as usize, c, r);
        if baked == Some(wet) {
            report.agree += 1;
        } else {
            report.misses.push((c, r, baked.unwrap_or(false), min, max));
        }
    }
    Some(report)
}

/// SMAP check (swg-trn §2.3): the bit is set when the height range over the chunk's 3×3
/// tile-corner posts exceeds 4 m.
pub fn check_smap(t: &Terrain, e: &HeightEvaluator, n: usize, seed: u64) -> Option<ChunkReport> {
    let (info, _, slope) = baked_bits(t)?;
    let (cw, count, half) = chunk_grid(t);
    let mut pick = CellPicker::new(seed);
    let chunks: Vec<(u32, u32)> = (0..n).map(|_| (pick.below(count as u64) as u32, pick.below(count as u64) as u32)).collect();
    let points: Vec<(f32, f32)> =
        chunks.iter().flat_map(|&(c, r)| crate::surface::smap::smap_corner_points(-half + c as f32 * cw, -half + r as f32 * cw, cw)).collect();
    let hs = e.heights_anywhere(&points);
    let mut report = ChunkReport { chunks: n, agree: 0, misses: Vec::new() };
    for (i, &(c, r)) in chunks.iter().enumerate() {
        let (min, max) = min_max(&hs[i * 9..(i + 1) * 9]);
        let baked = bit(slope, info.bytes_per_row as usize, c, r);
        if baked == Some(crate::surface::smap::smap_rough(&hs[i * 9..(i + 1) * 9])) {
            report.agree += 1;
        } else {
            report.misses.push((c, r, baked.unwrap_or(false), min, max));
        }
    }
    Some(report)
}

/// Layers added after the original tool last baked SMAP (swg-trn §2.3 "stale areas"), by
/// planet (the file stem) and layer-name prefix. Evidence, whole map at 4 m (every 8 m chunk):
/// dathomir agrees in 99.207 % of chunks as it stands and in 100.000 % (3 misses in 4,194,304)
/// with its five `outbreak*` layers disabled; the spec reports endor's north-west corner going
/// from 66 % to 97.5 % with the `Battlefield 3*` layers disabled (no endor file here). No
/// other planet measured has one: on yavin4, disabling any of seven candidate height layers
/// only lowers agreement (99.583 % → 95.1–99.58 %), its misses are spread over 2,474 of 4,096
/// 256 m blocks (the worst holds 135 of 1,024 chunks), and the miss rate is a bell around the
/// 4 m cut (28 % at ±0.05 m, 1 % at ±0.5 m) — noise at the cut, not stale content.
pub const SMAP_STALE_LAYERS: &[(&str, &[&str])] = &[("dathomir", &["outbreak"]), ("endor", &["Battlefield 3"])];

/// The stale-layer prefixes of [`SMAP_STALE_LAYERS`] for a planet (file stem), if any.
pub fn smap_stale_layers(planet: &str) -> &'static [&'static str] {
    SMAP_STALE_LAYERS.iter().find(|(p, _)| *p == planet).map_or(&[], |(_, l)| l)
}

/// `t` with every layer whose name starts with one of `prefixes` disabled (subtrees included,
/// as a disabled layer's children do not run). Returns the names disabled.
pub fn disable_layers(t: &mut Terrain, prefixes: &[&str]) -> Vec<String> {
    fn walk(items: &mut [crate::model::layer::LayerItem], prefixes: &[&str], out: &mut Vec<String>) {
        for it in items {
            if let crate::model::layer::LayerItem::Layer(l) = it {
                if l.enabled.get() && prefixes.iter().any(|p| l.name.starts_with(p)) {
                    l.enabled = false.into();
                    out.push(l.name.clone());
                }
                walk(&mut l.children, prefixes, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(&mut t.generator.layers, prefixes, &mut out);
    out
}

/// The SMAP rule over every chunk of the map against the baked SMAP.
#[derive(Clone, Debug, Serialize)]
pub struct SmapWholeMap {
    /// Chunks per side; the bits below are row-major from the south.
    pub per_side: u32,
    pub chunks: usize,
    pub agree: usize,
    /// Chunks whose 3×3 corner heights the stale layers change (the known stale area).
    pub stale_chunks: usize,
    /// Agreeing chunks outside the stale area.
    pub agree_outside_stale: usize,
    /// The rule's bit per chunk, from our heights.
    #[serde(skip)]
    pub bits: Vec<bool>,
}

impl SmapWholeMap {
    pub fn rate(&self) -> f64 {
        self.agree as f64 / self.chunks.max(1) as f64
    }
    pub fn rate_outside_stale(&self) -> f64 {
        self.agree_outside_stale as f64 / (self.chunks - self.stale_chunks).max(1) as f64
    }
}

/// SMAP check over the whole map (swg-trn §2.3): heights on the 4 m tile-corner grid of the
/// entire map, the 3×3 range rule per chunk, compared with every baked bit — no sampling.
/// `stale_layers` (see [`SMAP_STALE_LAYERS`]) marks the known stale area: the chunks where
/// disabling those layers changes a corner height. `None` without baked maps.
pub fn check_smap_whole_map(t: &Terrain, opts: &crate::plan::HeightOptions, stale_layers: &[&str]) -> Option<SmapWholeMap> {
    use crate::eval::Grid;
    let (info, _, slope) = baked_bits(t)?;
    let (cw, n, half) = chunk_grid(t);
    let posts = 2 * n + 1;
    let grid = Grid { x0: -f64::from(half), z0: -f64::from(half), spacing: f64::from(cw) * 0.5, cols: posts, rows: posts };
    let heights = |t: &Terrain| -> Option<Vec<f32>> {
        let he = HeightEvaluator::new(t, opts).ok()?;
        let mut h = vec![0f32; posts as usize * posts as usize];
        he.grid_region(&grid, 0, 0, posts, posts, 256, &mut h);
        Some(h)
    };
    let h = heights(t)?;
    let fresh = if stale_layers.is_empty() {
        None
    } else {
        let mut t2 = t.clone();
        disable_layers(&mut t2, stale_layers);
        Some(heights(&t2)?)
    };
    let (p, n) = (posts as usize, n as usize);
    let corner = |c: usize, r: usize, k: usize| (2 * r + k / 3) * p + 2 * c + k % 3;
    let mut report = SmapWholeMap { per_side: n as u32, chunks: n * n, agree: 0, stale_chunks: 0, agree_outside_stale: 0, bits: Vec::with_capacity(n * n) };
    for r in 0..n {
        for c in 0..n {
            let hs: [f32; 9] = std::array::from_fn(|k| h[corner(c, r, k)]);
            let ours = crate::surface::smap::smap_rough(&hs);
            let ok = bit(slope, info.bytes_per_row as usize, c as u32, r as u32) == Some(ours);
            let stale = fresh.as_ref().is_some_and(|f| (0..9).any(|k| f[corner(c, r, k)] != hs[k]));
            report.bits.push(ours);
            report.agree += usize::from(ok);
            report.stale_chunks += usize::from(stale);
            report.agree_outside_stale += usize::from(ok && !stale);
        }
    }
    Some(report)
}

/// The SMAP bit the original tool baked for chunk (col, row) (row 0 = south), if any.
pub fn baked_smap_bit(t: &Terrain, col: u32, row: u32) -> Option<bool> {
    let (info, _, slope) = baked_bits(t)?;
    bit(slope, info.bytes_per_row as usize, col, row)
}

/// Whether (x, z) lies within `margin` metres of the road width of any enabled road or river
/// (used to measure the road model where it can matter).
pub fn near_roads(t: &Terrain, margin: f32) -> impl Fn(f32, f32) -> bool {
    use crate::model::layer::walk_layers;
    use crate::model::rules::RuleKind;
    let mut lines: Vec<(Vec<[f32; 2]>, f32)> = Vec::new();
    walk_layers(&t.generator.layers, 0, &mut |l, _| {
        if !l.enabled.get() {
            return;
        }
        for r in l.rules().filter(|r| r.enabled.get()) {
            match &r.kind {
                RuleKind::Road(road) => lines.push((road.points.iter().map(|p| [p.x, p.z]).collect(), road.width * 0.5 + margin)),
                RuleKind::River(river) => lines.push((river.points.iter().map(|p| [p.x, p.z]).collect(), river.width * 0.5 + margin)),
                _ => {}
            }
        }
    });
    move |x, z| {
        lines
            .iter()
            .any(|(pts, reach)| pts.windows(2).any(|w| crate::eval::affector::nearest_on_segment(w[0][0], w[0][1], w[1][0], w[1][1], x, z).0 <= reach * reach))
    }
}

/// One calibration bin of [`PimpReport`]: cells whose predicted probability lies in
/// [lo, hi), the mean prediction and how often PIMP holds the predicted family.
#[derive(Clone, Debug, Serialize)]
pub struct CalibrationBin {
    pub lo: f32,
    pub hi: f32,
    pub cells: usize,
    pub mean_predicted: f64,
    pub observed: f64,
}

/// PIMP check (swg-trn §5.9): the most likely collidable flora family at cell centres against
/// the family the original tool placed, plus the calibration of the predicted probabilities.
#[derive(Clone, Debug, Serialize)]
pub struct PimpReport {
    /// Random cells evaluated (all cells, flora or not).
    pub cells: usize,
    /// Of those, cells where PIMP holds a family, and where the most likely family equals it.
    pub flora_cells: usize,
    pub agree: usize,
    /// Cells where PIMP is 0 and the prediction is "none" too.
    pub empty_cells: usize,
    pub empty_agree: usize,
    pub calibration: Vec<CalibrationBin>,
    /// The most flora cells any rule that sees only the chances could match: flora cells
    /// with the same chances (to 0.001) that PIMP fills with different families agree at
    /// most in the commonest of them. A ceiling for the reading, not for the semantics: it
    /// says how much of what is left is the original tool's own random family draw
    /// (swg-trn §5.9), which no reading of the stack recovers.
    pub same_chances_best: usize,
    /// The groups of identical chances where PIMP's families differ, most cells lost first
    /// (at most [`MIXED_GROUPS_KEPT`]).
    pub mixed_groups: Vec<MixedGroup>,
}

/// How many [`MixedGroup`]s a [`PimpReport`] keeps.
pub const MIXED_GROUPS_KEPT: usize = 8;

/// Flora cells that share their predicted chances but not PIMP's family.
#[derive(Clone, Debug, Serialize)]
pub struct MixedGroup {
    /// The shared chances (family, probability), by id.
    pub chances: Vec<(i32, f32)>,
    pub cells: usize,
    /// PIMP's families over the group with their counts, commonest first.
    pub truths: Vec<(i32, usize)>,
}

impl PimpReport {
    pub fn rate(&self) -> f64 {
        if self.flora_cells == 0 {
            1.0
        } else {
            self.agree as f64 / self.flora_cells as f64
        }
    }
    /// [`PimpReport::same_chances_best`] as a share of the flora cells.
    pub fn ceiling(&self) -> f64 {
        if self.flora_cells == 0 {
            1.0
        } else {
            self.same_chances_best as f64 / self.flora_cells as f64
        }
    }
    /// The largest |observed − predicted| over the bins with at least `min_cells` cells.
    pub fn worst_calibration(&self, min_cells: usize) -> f64 {
        self.calibration.iter().filter(|b| b.cells >= min_cells).map(|b| (b.observed - b.mean_predicted).abs()).fold(0.0, f64::max)
    }
}

/// Where a PIMP cell is sampled: `per_side`² positions (1 = the centre) over the cell grown
/// by `reach` metres on each side (0 = the cell; the header's collidable tile border lets an
/// object stray that far, swg-trn §2.2 [?]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PimpSampling {
    pub per_side: u32,
    pub reach: f32,
}

impl PimpSampling {
    /// `per_side`² samples over the header box of each cell ([`PimpSampling::header_box_reach`]).
    pub fn header_box(t: &Terrain, per_side: u32) -> PimpSampling {
        PimpSampling { per_side, reach: Self::header_box_reach(t) }
    }

    /// The default reach: 1 − the header's collidable tileBorder, i.e. the cell shrunk to the
    /// box where the placement RNG puts its object (swg-trn §2.2 [?]), less 1 m so the
    /// snapped samples still fall inside it. Never grows the cell, never shrinks it below a
    /// 2 m square (a hostile or odd header).
    pub fn header_box_reach(t: &Terrain) -> f32 {
        let w = t.flora_map.as_ref().map_or(1, |p| p.control.width.max(1));
        let cell = t.header.map_width / w as f32;
        let reach = 1.0 - t.header.collidable_flora.tile_border;
        if reach.is_finite() && cell.is_finite() {
            reach.clamp((1.0 - 0.5 * cell).min(0.0), 0.0)
        } else {
            0.0
        }
    }
}

/// Which PIMP cells a check evaluates: `n` random cells (seeded, with repeats), or every
/// cell of the grid once (`fidelity --pimp-every-cell`: 65,536 on a 4 km map, where the
/// random sample sees only a few dozen flora cells; 1,048,576 on a 16 km planet).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PimpCells {
    Random { n: usize, seed: u64 },
    Every,
}

impl PimpCells {
    /// The (col, row) list for a PIMP grid of `w` × `h` cells.
    pub fn list(self, w: u32, h: u32) -> Vec<(u32, u32)> {
        match self {
            PimpCells::Random { n, seed } => {
                let mut pick = CellPicker::new(seed);
                (0..n).map(|_| (pick.below(u64::from(w)) as u32, pick.below(u64::from(h)) as u32)).collect()
            }
            PimpCells::Every => (0..h).flat_map(|r| (0..w).map(move |c| (c, r))).collect(),
        }
    }
}

/// The sample posts of PIMP cell (col, row) with their ground. The object lies somewhere in
/// its cell (swg-trn §2.6): the cell is sampled at the centres of `per_side`² equal
/// sub-squares (1 = the cell centre), each snapped to the pole grid where heights and normals
/// are defined (normals from the 3×3 posts at the pole spacing).
pub fn pimp_cell_posts(
    t: &Terrain,
    heights: &HeightEvaluator,
    normals: crate::surface::normals::NormalMethod,
    sampling: PimpSampling,
    col: u32,
    row: u32,
) -> Vec<(f32, f32, crate::surface::Ground)> {
    let PimpSampling { per_side, reach } = sampling;
    let w = t.flora_map.as_ref().map_or(1, |p| p.control.width.max(1));
    let cell = t.header.map_width / w as f32;
    let half = t.header.map_width * 0.5;
    let pole = t.header.pole_spacing();
    let per_side = per_side.max(1);
    let mut out = Vec::with_capacity((per_side * per_side) as usize);
    for j in 0..per_side {
        for i in 0..per_side {
            // The sampled square: the cell grown by `reach` on each side.
            let side = cell + 2.0 * reach;
            let x = -half + col as f32 * cell - reach + (i as f32 + 0.5) / per_side as f32 * side;
            let z = -half + row as f32 * cell - reach + (j as f32 + 0.5) / per_side as f32 * side;
            let (gx, gz) = (((x + half) / pole).round() as i64, ((z + half) / pole).round() as i64);
            let (x, z) = (-half + gx as f32 * pole, -half + gz as f32 * pole);
            let mut h = [[0.0f32; 3]; 3];
            for (dz, hrow) in h.iter_mut().enumerate() {
                for (dx, v) in hrow.iter_mut().enumerate() {
                    *v = heights.height_anywhere(x + (dx as f32 - 1.0) * pole, z + (dz as f32 - 1.0) * pole);
                }
            }
            let normal = crate::surface::normals::post_normal(normals, &h, pole, gx, gz);
            out.push((x, z, crate::surface::Ground { height: h[1][1], normal }));
        }
    }
    out
}

/// A cell's chance of each collidable family: the mean over its sample posts of the
/// per-post probabilities (swg-trn §5.9 stack reading), sorted by family id.
pub fn pimp_cell_chances(_t: &Terrain, surface: &crate::surface::SurfaceEvaluator, posts: &[(f32, f32, crate::surface::Ground)]) -> Vec<(i32, f32)> {
    let mut mean: Vec<(i32, f32)> = Vec::new();
    for &(x, z, ground) in posts {
        for (family, p) in surface.at(x, z, ground).flora[0].probabilities() {
            match mean.iter_mut().find(|e| e.0 == family) {
                Some(e) => e.1 += p,
                None => mean.push((family, p)),
            }
        }
    }
    let n = posts.len().max(1) as f32;
    for e in &mut mean {
        e.1 /= n;
    }
    mean.sort_by_key(|e| e.0);
    mean
}

/// The most likely family of sorted chances and its probability; (0, 0) for none. Ties go
/// to the lower id.
pub fn most_likely(chances: &[(i32, f32)]) -> (i32, f32) {
    crate::surface::most_likely_of(chances)
}

/// Evaluate `n` random cells of the PIMP grid (seeded) with the surface passes over the
/// height pass (normals from the 3×3 posts at the pole spacing around each sample), each
/// cell sampled over its header box ([`PimpSampling::header_box`]). `None` when the file has
/// no PIMP.
pub fn check_pimp(
    t: &Terrain,
    heights: &HeightEvaluator,
    surface: &crate::surface::SurfaceEvaluator,
    normals: crate::surface::normals::NormalMethod,
    per_side: u32,
    n: usize,
    seed: u64,
) -> Option<PimpReport> {
    Some(pimp_report(&pimp_predictions(t, heights, surface, normals, PimpSampling::header_box(t, per_side), PimpCells::Random { n, seed })?))
}

/// One evaluated PIMP cell: the baked chances, the most likely family and PIMP's family.
#[derive(Clone, Debug, Serialize)]
pub struct CellPrediction {
    pub col: u32,
    pub row: u32,
    /// Each family's chance (mean over the cell's sample posts), sorted by id.
    pub chances: Vec<(i32, f32)>,
    /// The most likely family (0 = none) and its chance.
    pub family: i32,
    pub p: f32,
    /// The family the original tool placed (0 = none).
    pub truth: i32,
}

/// The predictions behind [`check_pimp`] for the chosen cells, `None` without PIMP.
pub fn pimp_predictions(
    t: &Terrain,
    heights: &HeightEvaluator,
    surface: &crate::surface::SurfaceEvaluator,
    normals: crate::surface::normals::NormalMethod,
    sampling: PimpSampling,
    choice: PimpCells,
) -> Option<Vec<CellPrediction>> {
    predict_cells(t, choice, |col, row| pimp_cell_chances(t, surface, &pimp_cell_posts(t, heights, normals, sampling, col, row)))
}

/// A [`CellPrediction`] for each chosen PIMP cell from `chances(col, row)` (in parallel),
/// `None` without PIMP.
fn predict_cells(t: &Terrain, choice: PimpCells, chances: impl Fn(u32, u32) -> Vec<(i32, f32)> + Sync) -> Option<Vec<CellPrediction>> {
    use rayon::prelude::*;
    let pimp = t.flora_map.as_ref()?;
    let (w, hgt) = (pimp.control.width, pimp.control.height);
    if w == 0 || hgt == 0 {
        return None;
    }
    Some(
        choice
            .list(w, hgt)
            .par_iter()
            .map(|&(col, row)| {
                let chances = chances(col, row);
                let (family, p) = most_likely(&chances);
                CellPrediction { col, row, chances, family, p, truth: pimp.get(col, row).unwrap_or(0) }
            })
            .collect(),
    )
}

/// The PIMP check of a flora map baked at PIMP's own spacing with its posts on the cell
/// centres (issue #27 part 3): each cell's chances are those of its post under
/// `bake --flora-supersample N` ([`crate::surface::supersample`]: the mean over N × N
/// sub-posts of the cell; N = 1 reads the post alone, with normals and slopes from the
/// neighbouring posts one cell away, as a coarse bake has them). `None` without PIMP.
pub fn pimp_map_predictions(
    t: &Terrain,
    heights: &HeightEvaluator,
    surface: &crate::surface::SurfaceEvaluator,
    normals: crate::surface::normals::NormalMethod,
    supersample: u32,
    choice: PimpCells,
) -> Option<Vec<CellPrediction>> {
    let pimp = t.flora_map.as_ref()?;
    let cell = f64::from(t.header.map_width) / f64::from(pimp.control.width.max(1));
    let half = f64::from(t.header.map_width) * 0.5;
    predict_cells(t, choice, |col, row| {
        let centre = |i: u32| -half + (f64::from(i) + 0.5) * cell;
        let post = crate::eval::Grid { x0: centre(col), z0: centre(row), spacing: cell, cols: 1, rows: 1 };
        let [chances, ..] = crate::surface::supersample::flora_supersampled(&post, heights, surface, normals, supersample).swap_remove(0);
        chances
    })
}

/// Agreement and calibration of a set of predictions (swg-trn §5.9).
pub fn pimp_report(predictions: &[CellPrediction]) -> PimpReport {
    let cells = predictions;
    let mut report = PimpReport {
        cells: cells.len(),
        flora_cells: 0,
        agree: 0,
        empty_cells: 0,
        empty_agree: 0,
        calibration: Vec::new(),
        same_chances_best: 0,
        mixed_groups: Vec::new(),
    };
    let mut bins = vec![(0usize, 0.0f64, 0usize); 10];
    for &CellPrediction { family, p, truth, .. } in predictions {
        if truth != 0 {
            report.flora_cells += 1;
            report.agree += usize::from(family == truth);
        } else {
            report.empty_cells += 1;
            report.empty_agree += usize::from(family == 0);
        }
        if family != 0 {
            let b = &mut bins[((p * 10.0) as usize).min(9)];
            b.0 += 1;
            b.1 += f64::from(p);
            b.2 += usize::from(family == truth);
        }
    }
    report.calibration = bins
        .iter()
        .enumerate()
        .filter(|(_, b)| b.0 > 0)
        .map(|(i, b)| CalibrationBin {
            lo: i as f32 / 10.0,
            hi: (i + 1) as f32 / 10.0,
            cells: b.0,
            mean_predicted: b.1 / b.0 as f64,
            observed: b.2 as f64 / b.0 as f64,
        })
        .collect();
    (report.same_chances_best, report.mixed_groups) = same_chances_groups(predictions);
    report
}

/// [`PimpReport::same_chances_best`] and the mixed groups behind it.
fn same_chances_groups(predictions: &[CellPrediction]) -> (usize, Vec<MixedGroup>) {
    use std::collections::BTreeMap;
    // The group key: the chances in thousandths, zeros dropped. A BTreeMap keeps the groups
    // in key order, so ties among the mixed groups fall in a fixed order.
    type Group = (Vec<(i32, f32)>, BTreeMap<i32, usize>); // the chances, PIMP's families counted
    let thousandths = |p: f32| (p * 1000.0).round() as i32;
    let mut groups: BTreeMap<Vec<(i32, i32)>, Group> = BTreeMap::new();
    for c in predictions.iter().filter(|c| c.truth != 0) {
        let chances: Vec<(i32, f32)> = c.chances.iter().copied().filter(|e| thousandths(e.1) != 0).collect();
        let key = chances.iter().map(|&(f, p)| (f, thousandths(p))).collect();
        *groups.entry(key).or_insert_with(|| (chances, BTreeMap::new())).1.entry(c.truth).or_default() += 1;
    }
    let mut best = 0;
    let mut mixed = Vec::new();
    for (chances, truths) in groups.into_values() {
        let mut truths: Vec<(i32, usize)> = truths.into_iter().collect();
        truths.sort_by_key(|t| std::cmp::Reverse(t.1)); // stable: equal counts stay by id
        best += truths[0].1;
        if truths.len() > 1 {
            mixed.push(MixedGroup { chances, cells: truths.iter().map(|t| t.1).sum(), truths });
        }
    }
    // Most cells lost first, then the larger group (stable: then key order).
    mixed.sort_by_key(|g| std::cmp::Reverse((g.cells - g.truths[0].1, g.cells)));
    mixed.truncate(MIXED_GROUPS_KEPT);
    (best, mixed)
}

/// One rule on the way to a missed PIMP cell's flora (`trnbake fidelity --explain`),
/// aggregated over the cell's sample posts.
#[derive(Clone, Debug, Serialize)]
pub struct MissRule {
    /// What the rule does to the two families: `adds soe`, `adds predicted`, `removes soe`,
    /// `removes predicted` (a (0,0) affector, swg-trn §5.9) or `removes all`.
    pub role: &'static str,
    pub family: i32,
    /// The density the add pushes (override or the family's).
    pub density: f32,
    /// The layer's path in the tree and the affector's tag and name.
    pub layer: String,
    pub affector: String,
    /// `b` / `f` where the layer inverts its boundaries / filters.
    pub inverted: String,
    pub samples: usize,
    /// Sample posts where the affector acted, and its mean amount T there.
    pub fired: usize,
    pub mean_t: f32,
    /// Where it did not act: the most common first stop on the way down the tree (layer
    /// path, then `boundaries` or the filter with weight 0 and its input), with its count.
    pub blocked_by: String,
    /// The layer's own filters: tag, name, parameters, input (mean, range) and weight.
    pub filters: String,
}

/// A missed flora cell: PIMP holds a family and the most likely family differs.
#[derive(Clone, Debug, Serialize)]
pub struct PimpMiss {
    pub cell: CellPrediction,
    /// The cell centre (world metres).
    pub x: f32,
    pub z: f32,
    /// One-line cause: which rule added, blocked or removed SOE's family.
    pub reason: String,
    pub rules: Vec<MissRule>,
}

/// `trnbake fidelity --explain`: the PIMP check with every miss traced to its rules.
#[derive(Clone, Debug, Serialize)]
pub struct PimpExplain {
    pub report: PimpReport,
    pub predictions: Vec<CellPrediction>,
    pub misses: Vec<PimpMiss>,
}

/// The input a filter reads at a post (before its interval and feather): height (m), slope
/// (degrees), fractal value × scaleY, the shader family, the aspect (degrees); NaN for FBIT
/// (its weight says it all).
fn filter_input(plan: &crate::plan::BakePlan, f: &crate::plan::FilterRecord, ground: &crate::surface::Ground, shader: i32, x: f32, z: f32) -> f32 {
    use crate::plan::{FILTER_DIRECTION, FILTER_FRACTAL, FILTER_HEIGHT, FILTER_SHADER, FILTER_SLOPE};
    match f.kind {
        FILTER_HEIGHT => ground.height,
        FILTER_SLOPE => ground.normal[1].clamp(-1.0, 1.0).acos().to_degrees(),
        FILTER_FRACTAL => plan.fractals.get(f.family as usize).map_or(f32::NAN, |fr| fr.value(x, z) * f.value),
        FILTER_SHADER => shader as f32,
        FILTER_DIRECTION => ground.normal[0].atan2(ground.normal[2]).to_degrees(),
        _ => f32::NAN,
    }
}

/// A filter's parameters as the file states them (FSLP back in degrees).
fn filter_params(f: &crate::plan::FilterRecord) -> String {
    use crate::plan::{FILTER_SHADER, FILTER_SLOPE};
    match f.kind {
        FILTER_SHADER => format!("family {}", f.family),
        FILTER_SLOPE => {
            let deg = |c: f32| c.clamp(-1.0, 1.0).acos().to_degrees();
            format!("[{:.1}°, {:.1}°] feather {} {:.2}", deg(f.high), deg(f.low), f.feather_type, f.feather_amount)
        }
        _ => format!("[{}, {}] feather {} {:.2}", f.low, f.high, f.feather_type, f.feather_amount),
    }
}

/// Run the PIMP check like [`check_pimp`] and trace every miss (swg-trn §5.9): for each
/// collidable-flora affector over the cell that adds or removes SOE's or the predicted family,
/// or removes all and acted, where it acted and what stopped it elsewhere.
#[allow(clippy::too_many_arguments)]
pub fn explain_pimp(
    t: &Terrain,
    heights: &HeightEvaluator,
    surface: &crate::surface::SurfaceEvaluator,
    normals: crate::surface::normals::NormalMethod,
    sampling: PimpSampling,
    choice: PimpCells,
) -> Option<PimpExplain> {
    use crate::plan::{AFFECTOR_FLORA_BASE, FLORA_ADD, FLORA_REMOVE_ALL, LAYER_INVERT_BOUNDARIES, LAYER_INVERT_FILTERS};
    use crate::surface::explain::{affector_layers, layer_parents, PostTrace};
    use rayon::prelude::*;
    let predictions = pimp_predictions(t, heights, surface, normals, sampling, choice)?;
    let report = pimp_report(&predictions);
    let plan = surface.traced_plan();
    let parents = layer_parents(plan);
    let owners = affector_layers(plan);
    let w = t.flora_map.as_ref().map_or(1, |p| p.control.width.max(1));
    let cell = t.header.map_width / w as f32;
    let half = t.header.map_width * 0.5;
    let name = |v: &[String], i: usize| v.get(i).cloned().unwrap_or_default();
    // The first stop on the way from the top of the tree down to layer `li` at one post.
    let culprit = |trace: &PostTrace, li: usize, post: &(f32, f32, crate::surface::Ground)| -> Option<String> {
        let mut chain = vec![li];
        while let Some(p) = parents[*chain.last().unwrap()] {
            chain.push(p);
        }
        for &a in chain.iter().rev() {
            let path = name(&plan.names.layers, a);
            let Some(v) = &trace.visits[a] else { return Some(format!("{path}: not reached")) };
            match v.amount {
                None => return Some(format!("{path}: boundaries")),
                Some(x) if x <= 0.0 => {
                    return Some(match v.filters.iter().find(|f| f.1 <= 0.0) {
                        Some(&(fi, _)) => {
                            let f = &plan.filters[fi];
                            let input = filter_input(plan, f, &post.2, trace.result.shader.family, post.0, post.1);
                            format!("{path}: {} {} input {input:.2}", name(&plan.names.filters, fi), filter_params(f))
                        }
                        None => format!("{path}: inverted filters"),
                    })
                }
                _ => {}
            }
        }
        None
    };
    let missed: Vec<&CellPrediction> = predictions.iter().filter(|c| c.truth != 0 && c.family != c.truth).collect();
    let misses: Vec<PimpMiss> = missed
        .par_iter()
        .map(|c| {
            let posts = pimp_cell_posts(t, heights, normals, sampling, c.col, c.row);
            let traces: Vec<PostTrace> = posts.iter().map(|&(x, z, g)| surface.trace_at(x, z, g)).collect();
            let (x0, z0) = (-half + c.col as f32 * cell, -half + c.row as f32 * cell);
            let area = [x0, z0, x0 + cell, z0 + cell];
            let meets = |b: [f32; 4]| !(b[0] > area[2] || b[2] < area[0] || b[1] > area[3] || b[3] < area[1]);
            let mut rules = Vec::new();
            for (ai, a) in plan.affectors.iter().enumerate() {
                if a.kind != AFFECTOR_FLORA_BASE {
                    continue;
                }
                let li = owners[ai];
                let family = a.index as i32;
                let fired: Vec<f32> = traces.iter().filter_map(|tr| tr.fired.iter().find(|e| e.0 == ai).map(|e| e.1)).collect();
                let role = if a.operation & FLORA_REMOVE_ALL != 0 {
                    if fired.is_empty() {
                        continue;
                    }
                    "removes all"
                } else if family == c.truth || (family == c.family && c.family != 0) {
                    if !meets(plan.layers[li].bounds) {
                        continue;
                    }
                    match (a.operation & FLORA_ADD != 0, family == c.truth) {
                        (true, true) => "adds soe",
                        (true, false) => "adds predicted",
                        (false, true) => "removes soe",
                        (false, false) => "removes predicted",
                    }
                } else {
                    continue;
                };
                // The most common first stop where it did not act.
                let mut stops: Vec<(String, usize)> = Vec::new();
                for (tr, post) in traces.iter().zip(&posts) {
                    if tr.fired.iter().any(|e| e.0 == ai) {
                        continue;
                    }
                    let s = culprit(tr, li, post).unwrap_or_else(|| "?".into());
                    match stops.iter_mut().find(|e| e.0 == s) {
                        Some(e) => e.1 += 1,
                        None => stops.push((s, 1)),
                    }
                }
                stops.sort_by_key(|e| std::cmp::Reverse(e.1));
                let blocked_by = stops.first().map_or(String::new(), |(s, k)| format!("{s} ({k}/{})", posts.len()));
                let l = &plan.layers[li];
                let mut filters = Vec::new();
                for fi in l.filter_start as usize..(l.filter_start + l.filter_count) as usize {
                    let f = &plan.filters[fi];
                    let mut inputs = Vec::new();
                    let mut weights = Vec::new();
                    for (tr, post) in traces.iter().zip(&posts) {
                        if let Some(Some(v)) = tr.visits.get(li) {
                            if let Some(&(_, w)) = v.filters.iter().find(|e| e.0 == fi) {
                                weights.push(w);
                                inputs.push(filter_input(plan, f, &post.2, tr.result.shader.family, post.0, post.1));
                            }
                        }
                    }
                    let label = format!("{} {}", name(&plan.names.filters, fi), filter_params(f));
                    if weights.is_empty() {
                        filters.push(format!("{label}: not evaluated"));
                        continue;
                    }
                    let mean_w = weights.iter().sum::<f32>() / weights.len() as f32;
                    let input = if f.kind == crate::plan::FILTER_SHADER {
                        let mut ids: Vec<i32> = inputs.iter().map(|&v| v as i32).collect();
                        ids.sort_unstable();
                        ids.dedup();
                        format!("shader {ids:?}")
                    } else if inputs.iter().all(|v| v.is_nan()) {
                        String::new()
                    } else {
                        let (lo, hi) = min_max(&inputs);
                        format!("input {:.2} [{lo:.2}, {hi:.2}]", inputs.iter().sum::<f32>() / inputs.len() as f32)
                    };
                    filters.push(format!("{label}: {input} weight {mean_w:.2} over {} posts", weights.len()));
                }
                let inverted =
                    format!("{}{}", if l.flags & LAYER_INVERT_BOUNDARIES != 0 { "b" } else { "" }, if l.flags & LAYER_INVERT_FILTERS != 0 { "f" } else { "" });
                rules.push(MissRule {
                    role,
                    family,
                    density: a.value,
                    layer: name(&plan.names.layers, li),
                    affector: name(&plan.names.affectors, ai),
                    inverted,
                    samples: posts.len(),
                    fired: fired.len(),
                    mean_t: if fired.is_empty() { 0.0 } else { fired.iter().sum::<f32>() / fired.len() as f32 },
                    blocked_by,
                    filters: filters.join("; "),
                });
            }
            let reason = miss_reason(c, &rules);
            PimpMiss { cell: (*c).clone(), x: x0 + cell * 0.5, z: z0 + cell * 0.5, reason, rules }
        })
        .collect();
    Some(PimpExplain { report, predictions, misses })
}

/// The one-line cause of a miss from its rules: SOE's family never added over the cell,
/// blocked (by which stop), removed afterwards, or outranked by the predicted family's add.
fn miss_reason(c: &CellPrediction, rules: &[MissRule]) -> String {
    let soe_adds: Vec<&MissRule> = rules.iter().filter(|r| r.role == "adds soe").collect();
    if soe_adds.is_empty() {
        return format!("no collidable add of family {} over the cell", c.truth);
    }
    if let Some(best) = soe_adds.iter().filter(|r| r.fired > 0).max_by_key(|r| r.fired) {
        if c.family != 0 {
            let by = rules.iter().filter(|r| r.role == "adds predicted" && r.fired > 0).max_by_key(|r| r.fired);
            return match by {
                Some(p) => format!("outranked by {} {} (density {}) over {} (density {})", p.layer, p.affector, p.density, best.layer, best.density),
                None => format!("outranked (family {}) over {}", c.family, best.layer),
            };
        }
        if let Some(r) = rules.iter().rev().find(|r| (r.role == "removes all" || r.role == "removes soe") && r.fired > 0) {
            return format!("removed by {} {}", r.layer, r.affector);
        }
        return format!("added by {} at density {} but below the cut", best.layer, best.density);
    }
    // No add of SOE's family acted: the stop of the newest add that a filter (not its
    // boundaries, i.e. not merely an area next to the cell) stopped, else the newest.
    let by_filter = soe_adds.iter().rev().find(|r| !r.blocked_by.contains(": boundaries ("));
    let stop = by_filter.or(soe_adds.last()).map_or("", |r| r.blocked_by.as_str());
    // Without the per-cell input and count, so that causes group.
    let stop = stop.rsplit_once(" (").map_or(stop, |s| s.0);
    let stop = stop.split(" input ").next().unwrap_or(stop);
    format!("blocked: {stop}")
}

/// `misses.csv` of [`PimpExplain`]: one line per (missed cell, rule), cells in sample order.
pub fn explain_csv(ex: &PimpExplain) -> String {
    fn q(s: &str) -> String {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    }
    let mut out = String::from("col,row,x,z,soe_family,predicted_family,p_predicted,p_soe,chances,reason,role,family,density,layer,affector,inverted,fired,samples,mean_t,blocked_by,filters\n");
    for m in &ex.misses {
        let c = &m.cell;
        let p_soe = c.chances.iter().find(|e| e.0 == c.truth).map_or(0.0, |e| e.1);
        let chances: Vec<String> = c.chances.iter().map(|(f, p)| format!("{f}:{p:.3}")).collect();
        let head = format!("{},{},{},{},{},{},{:.3},{:.3},{},{}", c.col, c.row, m.x, m.z, c.truth, c.family, c.p, p_soe, q(&chances.join(" ")), q(&m.reason));
        if m.rules.is_empty() {
            out.push_str(&format!("{head},none,,,,,,,,,,\n"));
        }
        for r in &m.rules {
            out.push_str(&format!(
                "{head},{},{},{},{},{},{},{},{},{:.3},{},{}\n",
                r.role,
                r.family,
                r.density,
                q(&r.layer),
                q(&r.affector),
                r.inverted,
                r.fired,
                r.samples,
                r.mean_t,
                q(&r.blocked_by),
                q(&r.filters)
            ));
        }
    }
    out
}

/// `misses.png` of [`PimpExplain`]: the PIMP grid (row 0 south) as RGB, each evaluated cell
/// a dot — hits green, misses (another family) red, "predicted none" blue, and, dim yellow,
/// empty cells where a family was predicted. Returns (width, height, rgb), south row first.
pub fn explain_picture(t: &Terrain, ex: &PimpExplain) -> (u32, u32, Vec<u8>) {
    let (w, h) = t.flora_map.as_ref().map_or((1, 1), |p| (p.control.width.max(1), p.control.height.max(1)));
    // At most 1024 pixels a side; a dot of 3×3 pixels per cell so sparse samples show.
    let scale = (1024.0 / w.max(h) as f32).min(1.0);
    let (pw, ph) = (((w as f32 * scale) as u32).max(1), ((h as f32 * scale) as u32).max(1));
    let mut img = vec![24u8; pw as usize * ph as usize * 3];
    for c in &ex.predictions {
        let colour = match (c.truth, c.family) {
            (0, 0) => continue,
            (0, _) => [90, 90, 20],
            (a, b) if a == b => [40, 200, 60],
            (_, 0) => [60, 120, 255],
            _ => [235, 50, 50],
        };
        let (cx, cy) = ((c.col as f32 * scale) as i64, (c.row as f32 * scale) as i64);
        for dy in -1..=1 {
            for dx in -1..=1 {
                let (x, y) = (cx + dx, cy + dy);
                if x >= 0 && y >= 0 && x < i64::from(pw) && y < i64::from(ph) {
                    let i = (y as usize * pw as usize + x as usize) * 3;
                    img[i..i + 3].copy_from_slice(&colour);
                }
            }
        }
    }
    (pw, ph, img)
}

/// `trnbake fidelity --dump-cells`: for analysis of the flora placement (swg-trn §5.9), one
/// JSON line per PIMP cell: (col, row), PIMP's family, PFPM's height and, for each of the
/// cell's 9×9 posts at the pole spacing (edges included, row-major from the south-west
/// corner), [height, normal x, y, z, [[family, density], …] (the collidable stack, oldest
/// first)]. `cells` lists the cells; see [`dump_cell_list`].
pub fn dump_cells(
    t: &Terrain,
    heights: &HeightEvaluator,
    surface: &crate::surface::SurfaceEvaluator,
    normals: crate::surface::normals::NormalMethod,
    cells: &[(u32, u32)],
) -> String {
    use rayon::prelude::*;
    let (Some(pimp), pfpm) = (t.flora_map.as_ref(), t.flora_height_map.as_ref()) else { return String::new() };
    let w = pimp.control.width.max(1);
    let cell = t.header.map_width / w as f32;
    let half = t.header.map_width * 0.5;
    let pole = t.header.pole_spacing();
    let n = (cell / pole).round() as i64 + 1;
    let lines: Vec<String> = cells
        .par_iter()
        .map(|&(col, row)| {
            let gx0 = ((col as f32 * cell) / pole).round() as i64;
            let gz0 = ((row as f32 * cell) / pole).round() as i64;
            // Heights with a 1-post apron for the normals.
            let m = (n + 2) as usize;
            let mut h = vec![0f32; m * m];
            for j in 0..m {
                for i in 0..m {
                    let (gx, gz) = (gx0 + i as i64 - 1, gz0 + j as i64 - 1);
                    h[j * m + i] = heights.height_anywhere(-half + gx as f32 * pole, -half + gz as f32 * pole);
                }
            }
            let mut posts = Vec::new();
            for j in 0..n as usize {
                for i in 0..n as usize {
                    let (gx, gz) = (gx0 + i as i64, gz0 + j as i64);
                    let mut hh = [[0f32; 3]; 3];
                    for (dz, r) in hh.iter_mut().enumerate() {
                        for (dx, v) in r.iter_mut().enumerate() {
                            *v = h[(j + dz) * m + i + dx];
                        }
                    }
                    let normal = crate::surface::normals::post_normal(normals, &hh, pole, gx, gz);
                    let (x, z) = (-half + gx as f32 * pole, -half + gz as f32 * pole);
                    let ground = crate::surface::Ground { height: hh[1][1], normal };
                    let r = surface.at(x, z, ground);
                    posts.push(serde_json::json!([ground.height, normal[0], normal[1], normal[2], r.flora[0].0]));
                }
            }
            serde_json::json!({
                "col": col, "row": row,
                "truth": pimp.get(col, row).unwrap_or(0),
                "pfpm": pfpm.and_then(|p| p.get(col, row)),
                "posts": posts,
            })
            .to_string()
        })
        .collect();
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// The cells of `--dump-cells`: those of [`pimp_predictions`] for `choice`, or every cell of
/// the rectangle [c0, c1) × [r0, r1) when `rect` is given.
pub fn dump_cell_list(t: &Terrain, choice: PimpCells, rect: Option<[u32; 4]>) -> Vec<(u32, u32)> {
    let Some(pimp) = t.flora_map.as_ref() else { return Vec::new() };
    let (w, hgt) = (pimp.control.width, pimp.control.height);
    if let Some([c0, r0, c1, r1]) = rect {
        return (r0..r1.min(hgt)).flat_map(|r| (c0..c1.min(w)).map(move |c| (c, r))).collect();
    }
    choice.list(w, hgt)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prediction(col: u32, chances: &[(i32, f32)], truth: i32) -> CellPrediction {
        let (family, p) = most_likely(chances);
        CellPrediction { col, row: 0, chances: chances.to_vec(), family, p, truth }
    }

    /// Cells with equal chances that PIMP fills differently agree at most in the commonest
    /// family; a lone cell or a group PIMP fills alike costs nothing; empty cells do not count.
    #[test]
    fn the_same_chances_ceiling_counts_the_commonest_family_of_each_group() {
        let mixed = [(36, 0.242), (40, 0.412)];
        let mut cells: Vec<CellPrediction> = (0..5).map(|i| prediction(i, &mixed, if i < 3 { 40 } else { 36 })).collect();
        // The same chances up to rounding (0.001) fall in the same group.
        cells.push(prediction(5, &[(36, 0.2421), (40, 0.4119)], 36));
        cells.push(prediction(6, &[(7, 1.0)], 7));
        cells.push(prediction(7, &[(7, 1.0)], 7));
        cells.push(prediction(8, &[(7, 0.5)], 9));
        cells.push(prediction(9, &mixed, 0));
        let r = pimp_report(&cells);
        assert_eq!(r.flora_cells, 9);
        // The mixed group: 6 cells, 3 × 40 and 3 × 36 → 3; the rest: 2 + 1.
        assert_eq!(r.same_chances_best, 6);
        assert_eq!(r.mixed_groups.len(), 1);
        let g = &r.mixed_groups[0];
        assert_eq!((g.cells, g.truths.clone()), (6, vec![(36, 3), (40, 3)]));
        assert!(r.ceiling() >= r.rate(), "the most likely family is a rule reading the chances");
    }

    #[test]
    fn every_cell_lists_the_grid_once_row_by_row() {
        assert_eq!(PimpCells::Every.list(3, 2), vec![(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]);
        let random = PimpCells::Random { n: 50, seed: 1 }.list(3, 2);
        assert_eq!(random.len(), 50);
        assert!(random.iter().all(|&(c, r)| c < 3 && r < 2));
    }
}
