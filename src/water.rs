//! Water tables (swg-trn §5.11): the global table of the header plus local tables of water
//! boundaries (BPOL/BREC with the water flag) in enabled layers. Where several apply, the
//! highest wins (the PSWG reading the spec recommends).

use crate::eval::boundary::boundary_influence;
use crate::plan::{BoundaryRecord, BOUNDARY_POLYGON, BOUNDARY_RECTANGLE};
use crate::trn::layer::{walk_layers, Layer};
use crate::trn::rules::RuleKind;
use crate::trn::Terrain;

/// One local water table.
#[derive(Clone, Debug)]
pub struct LocalWater {
    pub boundary: BoundaryRecord,
    pub height: f32,
    /// 0 water, 1 lava.
    pub water_type: i32,
}

#[derive(Clone, Debug, Default)]
pub struct WaterTables {
    pub global: Option<f32>,
    pub local: Vec<LocalWater>,
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
                    _ => {}
                }
            }
        }
        w
    }

    /// Whether the terrain has any water table (global or local).
    pub fn has_any(&self) -> bool {
        self.global.is_some() || !self.local.is_empty()
    }

    /// The water surface height at (x, z), if any table covers it.
    pub fn height_at(&self, x: f32, z: f32) -> Option<f32> {
        let mut best = self.global;
        for lw in &self.local {
            if boundary_influence(&lw.boundary, &self.points, x, z) > 0.0 {
                best = Some(best.map_or(lw.height, |b| b.max(lw.height)));
            }
        }
        best
    }
}
