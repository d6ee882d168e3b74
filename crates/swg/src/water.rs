//! Water tables (swg-trn §5.11): the global table of the header plus local tables of water
//! boundaries (BPOL/BREC with the water flag), rivers with a water table and ribbons, in
//! enabled layers. Where several apply, the
//! highest wins (the PSWG reading the spec recommends).

use crate::eval::affector::nearest_on_segment;
use crate::eval::boundary::{boundary_influence, boundary_span};
use crate::model::layer::{walk_layers, Layer};
use crate::model::rules::RuleKind;
use crate::model::Terrain;
use crate::plan::{BoundaryRecord, BOUNDARY_POLYGON, BOUNDARY_RECTANGLE};

/// One local water table.
#[derive(Clone, Debug)]
pub struct LocalWater {
    pub boundary: BoundaryRecord,
    pub height: f32,
    /// 0 water, 1 lava.
    pub water_type: i32,
}

/// A water (or lava) surface along a line: a river's water table or a ribbon (swg-trn
/// §5.11, §5.12 [?]): within `half_width` of the polyline, the surface height interpolated
/// along its nearest segment.
#[derive(Clone, Debug)]
pub struct WaterLine {
    /// (x, z, surface height) per vertex.
    pub points: Vec<[f32; 3]>,
    pub half_width: f32,
    /// 0 water, 1 lava.
    pub water_type: i32,
    /// min x, min z, max x, max z of where it can apply.
    pub bounds: [f32; 4],
}

impl WaterLine {
    fn new(points: Vec<[f32; 3]>, half_width: f32, water_type: i32) -> Option<WaterLine> {
        if points.len() < 2 || !(half_width > 0.0) {
            return None;
        }
        let mut b = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for p in &points {
            b = [b[0].min(p[0]), b[1].min(p[1]), b[2].max(p[0]), b[3].max(p[1])];
        }
        let bounds = [b[0] - half_width, b[1] - half_width, b[2] + half_width, b[3] + half_width];
        Some(WaterLine { points, half_width, water_type, bounds })
    }

    /// The surface height at (x, z), if the point lies within half the width.
    pub fn height_at(&self, x: f32, z: f32) -> Option<f32> {
        let b = self.bounds;
        if x < b[0] || x > b[2] || z < b[1] || z > b[3] {
            return None;
        }
        let mut best: Option<(f32, f32)> = None;
        for w in self.points.windows(2) {
            let (d2, u) = nearest_on_segment(w[0][0], w[0][1], w[1][0], w[1][1], x, z);
            if best.is_none_or(|(bd, _)| d2 < bd) {
                best = Some((d2, w[0][2] + (w[1][2] - w[0][2]) * u));
            }
        }
        best.filter(|(d2, _)| *d2 <= self.half_width * self.half_width).map(|(_, h)| h)
    }
}

#[derive(Clone, Debug, Default)]
pub struct WaterTables {
    pub global: Option<f32>,
    pub local: Vec<LocalWater>,
    /// Rivers with a local water table, and ribbons.
    pub lines: Vec<WaterLine>,
    points: Vec<[f32; 2]>,
}

fn layer_enabled_path(terrain: &Terrain) -> Vec<&Layer> {
    // Layers whose whole ancestry is enabled.
    let mut out = Vec::new();
    let mut stack_enabled: Vec<bool> = Vec::new();
    walk_layers(&terrain.generator.layers, 0, &mut |l, depth| {
        stack_enabled.truncate(depth);
        let ok = l.enabled.get() && stack_enabled.iter().all(|&e| e);
        stack_enabled.push(l.enabled.get());
        if ok {
            out.push(l);
        }
    });
    out
}

impl WaterTables {
    pub fn new(terrain: &Terrain) -> WaterTables {
        let h = &terrain.header;
        let mut w = WaterTables { global: h.use_global_water_table.get().then_some(h.global_water_height), ..Default::default() };
        for layer in layer_enabled_path(terrain) {
            for rule in layer.rules().filter(|r| r.enabled.get()) {
                match &rule.kind {
                    RuleKind::Polygon(p) if p.water_enabled.get() && p.points.len() >= 3 => {
                        let start = w.points.len() as u32;
                        w.points.extend(p.points.iter().map(|q| [q.x, q.z]));
                        let xs = p.points.iter().map(|q| q.x);
                        let zs = p.points.iter().map(|q| q.z);
                        let bounds = [
                            xs.clone().fold(f32::MAX, f32::min),
                            zs.clone().fold(f32::MAX, f32::min),
                            xs.fold(f32::MIN, f32::max),
                            zs.fold(f32::MIN, f32::max),
                        ];
                        w.local.push(LocalWater {
                            boundary: BoundaryRecord {
                                kind: BOUNDARY_POLYGON,
                                point_start: start,
                                point_count: p.points.len() as u32,
                                bounds,
                                ..Default::default()
                            },
                            height: p.water_height,
                            water_type: p.water_type.unwrap_or(0),
                        });
                    }
                    RuleKind::Rectangle(r) if r.water.as_ref().is_some_and(|wt| wt.enabled.get()) => {
                        let wt = r.water.as_ref().expect("checked");
                        let b = [r.x0.min(r.x1), r.z0.min(r.z1), r.x0.max(r.x1), r.z0.max(r.z1)];
                        w.local.push(LocalWater {
                            boundary: BoundaryRecord { kind: BOUNDARY_RECTANGLE, params: b, bounds: b, ..Default::default() },
                            height: wt.height,
                            water_type: r.water_type.unwrap_or(0),
                        });
                    }
                    RuleKind::River(r) if r.has_local_water_table.get() => {
                        // The water stands water_depth below the river's profile (its HDTA
                        // samples, x/height/z), over its water width (§5.12 [?]).
                        let points: Vec<[f32; 3]> = r.segments.iter().flatten().map(|q| [q.a, q.c, q.b - r.water_depth]).collect();
                        let half = if r.water_width > 0.0 { r.water_width } else { r.width } * 0.5;
                        w.lines.extend(WaterLine::new(points, half, r.water_type.unwrap_or(0)));
                    }
                    RuleKind::Ribbon(r) => {
                        // A ribbon is a water or lava surface through its 3-D points (x, z, height).
                        let points: Vec<[f32; 3]> = r.points.iter().map(|q| [q.a, q.b, q.c]).collect();
                        w.lines.extend(WaterLine::new(points, r.width * 0.5, r.water_type));
                    }
                    _ => {}
                }
            }
        }
        w
    }

    /// The polygon vertices (x, z) the local water boundaries index.
    pub fn points(&self) -> &[[f32; 2]] {
        &self.points
    }

    /// Whether the terrain has any water table (global or local).
    pub fn has_any(&self) -> bool {
        self.global.is_some() || !self.local.is_empty() || !self.lines.is_empty()
    }

    /// The water surface height at (x, z), if any table covers it.
    pub fn height_at(&self, x: f32, z: f32) -> Option<f32> {
        let mut best = self.global;
        for lw in &self.local {
            if boundary_influence(&lw.boundary, &self.points, x, z) > 0.0 {
                best = highest(best, lw.height);
            }
        }
        for line in &self.lines {
            if let Some(h) = line.height_at(x, z) {
                best = highest(best, h);
            }
        }
        best
    }

    /// The water surface heights of a row of posts (`xs` ascending, all at `z`) into `out`:
    /// [`WaterTables::height_at`] of each post, with each table applied only over the lanes
    /// its bounds can reach ([`boundary_span`]), in the same order, so every post's result is
    /// the same bits at a fraction of the cost (most tables miss most rows).
    pub fn row_heights(&self, xs: &[f32], z: f32, out: &mut [Option<f32>]) {
        debug_assert_eq!(xs.len(), out.len());
        out.fill(self.global);
        for lw in &self.local {
            let lanes = boundary_span(&lw.boundary, xs, z);
            for (best, &x) in out[lanes.clone()].iter_mut().zip(&xs[lanes]) {
                if boundary_influence(&lw.boundary, &self.points, x, z) > 0.0 {
                    *best = highest(*best, lw.height);
                }
            }
        }
        for line in &self.lines {
            let [x0, z0, x1, z1] = line.bounds;
            if z < z0 || z > z1 {
                continue;
            }
            // The lanes `WaterLine::height_at`'s own bounds test lets through (all of them
            // where a bound is not a number, which that test never rejects on).
            let (lo, hi) = if x0.is_nan() || x1.is_nan() {
                (0, xs.len())
            } else {
                let lo = xs.partition_point(|&x| x < x0);
                (lo, xs.partition_point(|&x| x <= x1).max(lo))
            };
            for (best, &x) in out[lo..hi].iter_mut().zip(&xs[lo..hi]) {
                if let Some(h) = line.height_at(x, z) {
                    *best = highest(*best, h);
                }
            }
        }
    }
}

#[cfg(test)]
mod line_tests {
    use super::WaterLine;

    #[test]
    fn water_lines_interpolate_along_the_nearest_segment_within_half_the_width() {
        let line = WaterLine::new(vec![[0.0, 0.0, 10.0], [100.0, 0.0, 20.0], [100.0, 100.0, 0.0]], 5.0, 1).unwrap();
        assert_eq!(line.height_at(50.0, 4.0), Some(15.0));
        assert_eq!(line.height_at(50.0, 6.0), None, "beyond half the width");
        assert_eq!(line.height_at(103.0, 50.0), Some(10.0), "the second segment");
        assert_eq!(line.height_at(-200.0, 0.0), None, "outside the bounds");
        assert!(WaterLine::new(vec![[0.0, 0.0, 1.0]], 5.0, 0).is_none(), "one point is no line");
        assert!(WaterLine::new(vec![[0.0, 0.0, 1.0], [1.0, 0.0, 1.0]], 0.0, 0).is_none(), "no width");
    }
}

/// The water surface over a post that `best` (the tables so far) and a table of height `h`
/// cover: the highest wins (the PSWG reading, module docs).
fn highest(best: Option<f32>, h: f32) -> Option<f32> {
    Some(best.map_or(h, |b| b.max(h)))
}

#[cfg(test)]
mod row_tests {
    use super::*;

    /// Every table kind, overlapping, plus a line whose bounds are not numbers: a row's
    /// heights are each post's `height_at`, bit for bit, on rows that cross and miss them.
    #[test]
    fn row_heights_are_each_posts_height_at() {
        let polygon = vec![[10.0, 10.0], [60.0, 15.0], [40.0, 70.0]];
        let local = vec![
            LocalWater {
                boundary: BoundaryRecord { kind: BOUNDARY_POLYGON, point_start: 0, point_count: 3, bounds: [10.0, 10.0, 60.0, 70.0], ..Default::default() },
                height: 5.0,
                water_type: 0,
            },
            LocalWater {
                boundary: BoundaryRecord {
                    kind: BOUNDARY_RECTANGLE,
                    params: [30.0, -20.0, 90.0, 40.0],
                    bounds: [30.0, -20.0, 90.0, 40.0],
                    ..Default::default()
                },
                height: 7.5,
                water_type: 1,
            },
        ];
        let mut lines = vec![WaterLine::new(vec![[-50.0, 0.0, 2.0], [50.0, 50.0, 12.0], [80.0, 90.0, 3.0]], 6.0, 0).unwrap()];
        let mut odd = WaterLine::new(vec![[0.0, 30.0, 1.0], [100.0, 30.0, 9.0]], 4.0, 0).unwrap();
        odd.bounds[2] = f32::NAN;
        lines.push(odd);
        for global in [None, Some(6.0), Some(-1.0)] {
            let tables = WaterTables { global, local: local.clone(), lines: lines.clone(), points: polygon.clone() };
            let xs: Vec<f32> = (0..161).map(|c| -60.0 + c as f32 * 1.0).collect();
            let mut wet = 0;
            for r in 0..141 {
                let z = -30.0 + r as f32 * 0.75;
                let mut row = vec![Some(f32::INFINITY); xs.len()];
                tables.row_heights(&xs, z, &mut row);
                for (&x, got) in xs.iter().zip(&row) {
                    let want = tables.height_at(x, z);
                    assert_eq!(got.map(f32::to_bits), want.map(f32::to_bits), "post ({x}, {z}), global {global:?}");
                    wet += usize::from(want != global);
                }
            }
            assert!(wet > 1000, "the tables cover posts ({wet})");
        }
    }
}
