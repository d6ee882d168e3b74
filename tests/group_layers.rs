//! Pure group layers (swg-trn §5.3 "Points to note", amended in turn 3 to PSWG's reading): a
//! layer with no enabled boundaries, no enabled filters and no enabled affectors, only child
//! layers, passes amount 1 to its children whatever its invert flags. A layer that holds an
//! affector keeps the pseudocode (no filters + invertFilters = 1 − 1 = 0: silent). Checked on
//! a constructed terrain, on the CPU and bit for bit on the GPU (lavapipe in CI), under the
//! tree walk (the default) and the separate passes.

mod common;

use serde_json::{json, Value};
use trnbake_swg::eval::{Grid, HeightEvaluator};
use trnbake_swg::model::Terrain;
use trnbake_swg::plan::{BakePlan, HeightOptions, LAYER_INVERT_BOUNDARIES, LAYER_INVERT_FILTERS};
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::{Ground, SurfaceEvaluator, SurfaceOptions, SurfaceWalk};

fn layer(name: &str, invert_boundaries: bool, invert_filters: bool, children: Vec<Value>) -> Value {
    json!({"type": "layer", "enabled": true, "name": name, "invert_boundaries": invert_boundaries, "invert_filters": invert_filters, "expanded": true, "notes": "", "children": children})
}

fn flora(kind: &str, family: i32, density: Option<f32>) -> Value {
    json!({"enabled": true, "name": format!("add {family}"), "type": kind, "family_id": family, "add": true, "remove_all": false,
        "use_density_override": density.is_some(), "density_override": density.unwrap_or(1.0)})
}

fn height(operation: i32, value: f32) -> Value {
    json!({"enabled": true, "name": format!("op {operation} {value}"), "type": "height_constant", "operation": operation, "height": value})
}

/// A 256 m map, flat at 50 m (`ground`), then:
/// - `mountain shader`: invertFilters, no filters, one *disabled* boundary, no affectors — a pure
///   group (like talus's layer of that name). Its child `mountain needles` (west half) sets
///   shader 3 and adds collidable family 20 (its FFAM density 0.6); its child `lift` adds 10 m.
/// - `grass group`: invertBoundaries, no rules: a pure group; its child adds non-collidable
///   family 22 at 0.5 everywhere.
/// - `control`: invertFilters, no filters, one collidable add of family 21 (a flora affector, so
///   not a group: 1 − 1 = 0). Its child would add 1000 m. In the height plan `control` keeps
///   no affector record, so the rule must be judged on the file, not on what a pass keeps.
fn terrain() -> Terrain {
    let demo: Value = serde_json::from_str(trnbake_swg::model::json::DEMO_TERRAIN_JSON).unwrap();
    let mut header = demo["header"].clone();
    header["map_width"] = 256.0.into();
    let family = |id: i32, density: f32| json!({"id": id, "name": format!("f{id}"), "color": [0, 0, 0], "density": density, "floats": false, "children": []});
    let shader = json!({"id": 3, "name": "needle rock", "surface_properties": "", "color": [120, 110, 100], "shader_size": 2.0, "feather_clamp": 1.0, "children": [{"name": "rock_a", "weight": 1.0}]});
    let disabled_circle = json!({"enabled": false, "name": "old area", "type": "circle", "center_x": 0.0, "center_z": 0.0, "radius": 10.0, "feather_type": 0, "feather_amount": 0.0});
    let west = json!({"enabled": true, "name": "west", "type": "rectangle", "x0": -128.0, "z0": -128.0, "x1": 0.0, "z1": 128.0, "feather_type": 0, "feather_amount": 0.0});
    let needles = layer(
        "mountain needles",
        false,
        false,
        vec![
            west,
            json!({"enabled": true, "name": "rock", "type": "shader_constant", "family_id": 3, "use_feather_clamp_override": false, "feather_clamp_override": 1.0}),
            flora("flora_collidable", 20, None),
        ],
    );
    let generator = json!({
        "shader_families": {"version": 6, "families": [shader]},
        "flora_families": {"version": 8, "families": [family(20, 0.6), family(21, 1.0), family(22, 1.0)]},
        "radial_families": {"version": 4, "families": []},
        "environment_families": {"version": 2, "families": []},
        "fractal_families": {"version": 0, "families": []},
        "layers": [
            layer("ground", false, false, vec![height(0, 50.0)]),
            layer("mountain shader", false, true, vec![disabled_circle, needles, layer("lift", false, false, vec![height(1, 10.0)])]),
            layer("grass group", true, false, vec![layer("grass", false, false, vec![flora("flora_non_collidable", 22, Some(0.5))])]),
            layer("control", false, true, vec![flora("flora_collidable", 21, None), layer("never", false, false, vec![height(1, 1000.0)])]),
        ],
    });
    let doc = json!({"version": demo["version"].clone(), "header": header, "generator": generator});
    trnbake_swg::model::json::terrain_from_json(&doc.to_string(), "group layers").unwrap()
}

fn evaluators(t: &Terrain, walk: SurfaceWalk) -> (HeightEvaluator, SurfaceEvaluator) {
    common::evaluators(t, &HeightOptions::default(), SurfaceOptions { walk, ..Default::default() })
}

/// The plans drop a pure group's invert flags (so both evaluators read §5.3 alike) and keep
/// those of a layer with an affector, in every pass's plan.
#[test]
fn plans_drop_the_invert_flags_of_pure_groups_only() {
    let t = terrain();
    let opts = HeightOptions::default();
    let flags = |plan: &BakePlan, name: &str| {
        plan.names.layers.iter().position(|n| n == name).map(|i| plan.layers[i].flags & (LAYER_INVERT_BOUNDARIES | LAYER_INVERT_FILTERS))
    };
    let heights = BakePlan::for_heights(&t, &opts).unwrap();
    assert_eq!(flags(&heights, "mountain shader"), Some(0));
    assert_eq!(flags(&heights, "control"), Some(LAYER_INVERT_FILTERS), "control holds a flora affector: the height plan keeps its inversion");
    let surface = BakePlan::for_surface(&t, &opts).unwrap();
    assert_eq!(flags(&surface, "mountain shader"), Some(0));
    assert_eq!(flags(&surface, "grass group"), Some(0));
    assert_eq!(flags(&surface, "control"), Some(LAYER_INVERT_FILTERS));
}

/// On the CPU: the groups' children act with amount 1 (heights 60, shader 3 and family 20 at
/// its density in the west, family 22 at 0.5 everywhere); `control` and its child never act.
#[test]
fn pure_groups_pass_amount_one_to_their_children_on_the_cpu() {
    let t = terrain();
    for walk in [SurfaceWalk::Tree, SurfaceWalk::Separate] {
        let (he, se) = evaluators(&t, walk);
        for (x, z, west) in [(-64.0, 10.0, true), (-3.0, -100.0, true), (64.0, 10.0, false), (100.0, 100.0, false)] {
            let h = he.height_at(x, z);
            assert_eq!(h, 60.0, "({x}, {z}): the group's `lift` adds 10 m, `control`'s child never acts");
            let r = se.at(x, z, Ground { height: h, normal: [0.0, 1.0, 0.0] });
            let (shader, collidable) = if west { (3, (20, 0.6)) } else { (0, (0, 0.0)) };
            assert_eq!(r.shader.family, shader, "{walk:?} ({x}, {z})");
            assert_eq!(r.flora[0].most_likely(), collidable, "{walk:?} ({x}, {z}): collidable flora");
            assert_eq!(r.flora[1].most_likely(), (22, 0.5), "{walk:?} ({x}, {z}): non-collidable flora under the inverted-boundaries group");
        }
    }
}

/// The GPU's height and surface passes agree with the CPU bit for bit on every post.
#[test]
#[cfg_attr(no_gpu_adapter, ignore = "needs a GPU adapter")]
fn pure_groups_match_on_the_gpu() {
    let Some(ctx) = common::gpu() else { return };
    let t = terrain();
    let grid = Grid { x0: -128.0, z0: -128.0, spacing: 4.0, cols: 65, rows: 65 };
    for walk in [SurfaceWalk::Tree, SurfaceWalk::Separate] {
        let (he, se) = evaluators(&t, walk);
        let cpu_heights = he.grid_heights(&grid);
        let gpu_heights = trnbake_gpu::GpuHeightPass::new(&ctx, &he.plan).run_grid(&grid, 32).unwrap();
        assert!(cpu_heights.iter().all(|&h| h == 60.0));
        assert_eq!(cpu_heights.iter().map(|h| h.to_bits()).collect::<Vec<_>>(), gpu_heights.iter().map(|h| h.to_bits()).collect::<Vec<_>>(), "heights");
        let cpu = trnbake_swg::surface::grid::evaluate(&grid, &cpu_heights, &he, &se, NormalMethod::Faces);
        let gpu = trnbake_gpu::surface_pass::evaluate(&ctx, &grid, &cpu_heights, &he, &se, NormalMethod::Faces).unwrap();
        let west = cpu.results.iter().filter(|r| r.shader == 3 && r.flora[0] == (20, 0.6)).count();
        assert_eq!(west, 33 * 65, "{walk:?}: the west half (x ≤ 0) has the group's shader and flora");
        assert!(cpu.results.iter().all(|r| r.flora[1] == (22, 0.5) && r.flora[0].0 != 21), "{walk:?}");
        for (i, (c, g)) in cpu.results.iter().zip(&gpu.results).enumerate() {
            let bits = |p: &trnbake_swg::surface::grid::PostSurface| (p.shader, p.flora.map(|f| (f.0, f.1.to_bits())), p.splat.map(|s| (s.0, s.1.to_bits())));
            assert_eq!(bits(c), bits(g), "{walk:?}: post {i} differs between the CPU and the GPU");
        }
    }
}
