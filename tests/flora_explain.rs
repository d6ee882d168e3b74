//! `trnbake fidelity --explain` (swg-trn §5.9): a missed PIMP cell must be traceable to the
//! rule that removed, blocked or outranked SOE's family, from the CSV alone.

use trnbake::eval::HeightEvaluator;
use trnbake::fidelity::{explain_csv, explain_pimp};
use trnbake::plan::HeightOptions;
use trnbake::surface::normals::NormalMethod;
use trnbake::surface::{SurfaceEvaluator, SurfaceOptions};
use trnbake::swg::header::{Bytes, PackedIntMap, PackedMapControl};

fn rect(name: &str, x0: f32, z0: f32, x1: f32, z1: f32) -> serde_json::Value {
    serde_json::json!({"enabled": true, "name": name, "type": "rectangle", "x0": x0, "z0": z0, "x1": x1, "z1": z1, "feather_type": 0, "feather_amount": 0.0,
        "water": {"enabled": false, "use_global_height": false, "height": 0.0, "shader_size": 2.0, "shader": ""}, "water_type": 0})
}

fn flora(name: &str, family: i32, add: bool, remove_all: bool) -> serde_json::Value {
    serde_json::json!({"enabled": true, "name": name, "type": "flora_collidable", "family_id": family, "add": add, "remove_all": remove_all, "use_density_override": false, "density_override": 1.0})
}

fn layer(name: &str, children: Vec<serde_json::Value>) -> serde_json::Value {
    serde_json::json!({"type": "layer", "enabled": true, "name": name, "invert_boundaries": false, "invert_filters": false, "expanded": true, "notes": "", "children": children})
}

/// A 256 m map whose PIMP holds family 5 in every 16 m cell. The ground is flat at 50 m.
/// West half: `grove` adds 5, then `clearing` removes all. Everywhere: `meadow` adds 5 under
/// a 99–101 m height filter (never passes). North-east quarter: `rocks` adds family 7.
/// So every cell misses: west ones removed by `clearing`, east ones blocked by the FHGT of
/// `meadow` (north-east: family 7 predicted instead).
#[test]
fn explain_names_the_rule_that_removed_blocked_or_outranked_the_family() {
    let demo: serde_json::Value = serde_json::from_str(trnbake::swg::json::DEMO_TERRAIN_JSON).unwrap();
    let mut header = demo["header"].clone();
    header["map_width"] = 256.0.into();
    let flora_family = |id: i32, name: &str| serde_json::json!({"id": id, "name": name, "color": [0, 0, 0], "density": 1.0, "floats": false, "children": []});
    let generator = serde_json::json!({
        "shader_families": {"version": 6, "families": []},
        "flora_families": {"version": 8, "families": [flora_family(5, "shrubs"), flora_family(7, "boulders")]},
        "radial_families": {"version": 4, "families": []},
        "environment_families": {"version": 2, "families": []},
        "fractal_families": {"version": 0, "families": []},
        "layers": [
            layer("ground", vec![serde_json::json!({"enabled": true, "name": "flat", "type": "height_constant", "operation": 0, "height": 50.0})]),
            layer("grove", vec![rect("west", -128.0, -128.0, 0.0, 128.0), flora("plant shrubs", 5, true, false)]),
            layer("clearing", vec![rect("west", -128.0, -128.0, 0.0, 128.0), flora("clear all", 5, false, true)]),
            layer("meadow", vec![
                serde_json::json!({"enabled": true, "name": "too high", "type": "filter_height", "low": 99.0, "high": 101.0, "feather_type": 0, "feather_amount": 0.0}),
                flora("plant shrubs", 5, true, false),
            ]),
            layer("rocks", vec![rect("north-east", 0.0, 0.0, 128.0, 128.0), flora("drop boulders", 7, true, false)]),
        ],
    });
    let json = serde_json::json!({"version": demo["version"].clone(), "header": header, "generator": generator});
    let mut t = trnbake::swg::json::terrain_from_json(&json.to_string(), "explain test").unwrap();
    // swg-trn §2.4: 0 bits per element → every cell holds the minimum value, family 5.
    t.flora_map = Some(PackedIntMap { control: PackedMapControl { width: 16, height: 16, bits_per_element: 0, minimum_value: 5 }, data: Bytes(vec![0]) });
    let opts = HeightOptions::default();
    let he = HeightEvaluator::new(&t, &opts).unwrap();
    let se = SurfaceEvaluator::new(&t, &opts, SurfaceOptions::default()).unwrap();
    let ex = explain_pimp(&t, &he, &se, NormalMethod::Faces, 4, 200, 3).unwrap();
    assert_eq!(ex.report.agree, 0, "every cell misses");
    assert_eq!(ex.misses.len(), ex.report.flora_cells);
    let csv = explain_csv(&ex);
    let mut seen = [false; 3];
    for m in &ex.misses {
        let c = &m.cell;
        let lines: Vec<&str> = csv.lines().filter(|l| l.starts_with(&format!("{},{},", c.col, c.row))).collect();
        assert!(!lines.is_empty(), "cell ({}, {}) has CSV lines", c.col, c.row);
        let x = m.x;
        if x < 0.0 {
            // West: the add acted, then the remove-all.
            assert_eq!(c.family, 0);
            assert!(m.reason.starts_with("removed by clearing"), "{}", m.reason);
            assert!(lines.iter().any(|l| l.contains(",removes all,") && l.contains(",clearing,") && l.contains(",16,16,")), "{lines:#?}");
            assert!(lines.iter().any(|l| l.contains(",adds soe,5,") && l.contains(",grove,")));
            seen[0] = true;
        } else {
            // East: meadow's height filter stopped family 5 at every post, with the input.
            assert!(m.reason.contains("blocked: meadow: FHGT \"too high\" [99, 101]"), "{}", m.reason);
            let meadow = lines.iter().find(|l| l.contains(",adds soe,5,") && l.contains(",meadow,")).expect("a meadow line");
            assert!(meadow.contains("input 50.00") && meadow.contains("(16/16)") && meadow.contains("weight 0.00"), "{meadow}");
            if m.z > 0.0 {
                assert_eq!(c.family, 7);
                assert!(lines.iter().any(|l| l.contains(",adds predicted,7,") && l.contains(",rocks,") && l.contains("\"\"drop boulders\"\"")), "{lines:#?}");
                seen[2] = true;
            } else {
                assert_eq!(c.family, 0);
                seen[1] = true;
            }
        }
    }
    assert!(seen.iter().all(|&s| s), "the sample covers all three regions: {seen:?}");
}
