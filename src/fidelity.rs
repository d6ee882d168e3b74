//! Fidelity checks against what the original tool baked into the real files
//! (swg-trn §2.3, §2.6, §9.2): PFPM flora ground heights, WMAP water bits and SMAP
//! rough-terrain bits. Used by tests and by `trnbake fidelity`.

use crate::eval::HeightEvaluator;
use crate::swg::header::BakedMaps;
use crate::swg::Terrain;
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
        if self.cells == 0 { 1.0 } else { self.passed as f64 / self.cells as f64 }
    }
}

/// PFPM check (swg-trn §9.2 method 2): for `n` random cells holding a flora family, the
/// baked height must lie within [min − 0.05, max + 0.05] of the heights over a 9×9 sample
/// of the cell, edges included. `None` when the file has no PIMP/PFPM.
pub fn check_pfpm(t: &Terrain, e: &HeightEvaluator, n: usize, seed: u64) -> Option<PfpmReport> {
    check_pfpm_where(t, e, n, seed, &|_, _| true)
}

/// [`check_pfpm`] over the flora cells whose centre satisfies `keep(x, z)`.
pub fn check_pfpm_where(
    t: &Terrain,
    e: &HeightEvaluator,
    n: usize,
    seed: u64,
    keep: &dyn Fn(f32, f32) -> bool,
) -> Option<PfpmReport> {
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
    let heights = e.heights_at(&points);
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
        if self.chunks == 0 { 1.0 } else { self.agree as f64 / self.chunks as f64 }
    }
}

fn baked_bits(t: &Terrain) -> Option<(&crate::swg::header::BakedMapsInfo, &[u8], &[u8])> {
    match t.baked_maps.as_ref()? {
        BakedMaps::Maps { info, water, slope } if info.bytes_per_row > 0 && info.rows > 0 => {
            Some((info, &water.0, &slope.0))
        }
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
    let hs = e.heights_at(&points);
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
    let points: Vec<(f32, f32)> = chunks
        .iter()
        .flat_map(|&(c, r)| {
            crate::surface::maps::smap_corner_points(-half + c as f32 * cw, -half + r as f32 * cw, cw)
        })
        .collect();
    let hs = e.heights_at(&points);
    let mut report = ChunkReport { chunks: n, agree: 0, misses: Vec::new() };
    for (i, &(c, r)) in chunks.iter().enumerate() {
        let (min, max) = min_max(&hs[i * 9..(i + 1) * 9]);
        let baked = bit(slope, info.bytes_per_row as usize, c, r);
        if baked == Some(crate::surface::maps::smap_rough(&hs[i * 9..(i + 1) * 9])) {
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
    fn walk(items: &mut [crate::swg::layer::LayerItem], prefixes: &[&str], out: &mut Vec<String>) {
        for it in items {
            if let crate::swg::layer::LayerItem::Layer(l) = it {
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
            let ours = crate::surface::maps::smap_rough(&hs);
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
    use crate::swg::layer::walk_layers;
    use crate::swg::rules::RuleKind;
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
        lines.iter().any(|(pts, reach)| {
            pts.windows(2).any(|w| {
                crate::eval::affector::nearest_on_segment(w[0][0], w[0][1], w[1][0], w[1][1], x, z).0 <= reach * reach
            })
        })
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
}

impl PimpReport {
    pub fn rate(&self) -> f64 {
        if self.flora_cells == 0 { 1.0 } else { self.agree as f64 / self.flora_cells as f64 }
    }
    /// The largest |observed − predicted| over the bins with at least `min_cells` cells.
    pub fn worst_calibration(&self, min_cells: usize) -> f64 {
        self.calibration.iter().filter(|b| b.cells >= min_cells).map(|b| (b.observed - b.mean_predicted).abs()).fold(0.0, f64::max)
    }
}

/// Evaluate `n` random cells of the PIMP grid (seeded) with the surface passes over the
/// height pass (normals from the 3×3 posts at the pole spacing around each sample).
/// `None` when the file has no PIMP.
pub fn check_pimp(
    t: &Terrain,
    heights: &HeightEvaluator,
    surface: &crate::surface::SurfaceEvaluator,
    normals: crate::surface::normals::NormalMethod,
    per_side: u32,
    n: usize,
    seed: u64,
) -> Option<PimpReport> {
    use rayon::prelude::*;
    let pimp = t.flora_map.as_ref()?;
    let (w, hgt) = (pimp.control.width, pimp.control.height);
    if w == 0 || hgt == 0 {
        return None;
    }
    let cell = t.header.map_width / w as f32;
    let half = t.header.map_width * 0.5;
    let pole = t.header.pole_spacing();
    let mut pick = CellPicker::new(seed);
    let cells: Vec<(u32, u32)> = (0..n).map(|_| (pick.below(u64::from(w)) as u32, pick.below(u64::from(hgt)) as u32)).collect();
    // The object lies somewhere in its cell (swg-trn §2.6): the cell's chance of a family is
    // the mean of the per-post probabilities over a `per_side`² sample of positions in it
    // (centres of equal sub-squares; 1 = the cell centre).
    let per_side = per_side.max(1);
    let predictions: Vec<(i32, f32, i32)> = cells
        .par_iter()
        .map(|&(col, row)| {
            let mut mean: Vec<(i32, f32)> = Vec::new();
            for j in 0..per_side {
                for i in 0..per_side {
                    let x = -half + (col as f32 + (i as f32 + 0.5) / per_side as f32) * cell;
                    let z = -half + (row as f32 + (j as f32 + 0.5) / per_side as f32) * cell;
                    // Snap to the pole grid, where normals and heights are defined.
                    let (gx, gz) = (((x + half) / pole).round() as i64, ((z + half) / pole).round() as i64);
                    let (x, z) = (-half + gx as f32 * pole, -half + gz as f32 * pole);
                    let mut h = [[0.0f32; 3]; 3];
                    for (dz, hrow) in h.iter_mut().enumerate() {
                        for (dx, v) in hrow.iter_mut().enumerate() {
                            *v = heights.height_at(x + (dx as f32 - 1.0) * pole, z + (dz as f32 - 1.0) * pole);
                        }
                    }
                    let normal = crate::surface::normals::post_normal(normals, &h, pole, gx, gz);
                    let ground = crate::surface::Ground { height: h[1][1], normal };
                    for (family, p) in surface.at(x, z, ground).flora[0].probabilities() {
                        match mean.iter_mut().find(|e| e.0 == family) {
                            Some(e) => e.1 += p,
                            None => mean.push((family, p)),
                        }
                    }
                }
            }
            let n = (per_side * per_side) as f32;
            mean.sort_by_key(|e| e.0);
            let (family, p) = mean.iter().fold((0, 0.0f32), |best, e| if e.1 > best.1 { *e } else { best });
            (family, p / n, pimp.get(col, row).unwrap_or(0))
        })
        .collect();
    let mut report = PimpReport { cells: cells.len(), flora_cells: 0, agree: 0, empty_cells: 0, empty_agree: 0, calibration: Vec::new() };
    let mut bins = vec![(0usize, 0.0f64, 0usize); 10];
    for &(family, p, truth) in &predictions {
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
    Some(report)
}
