//! `trnbake fidelity --explain` (swg-trn §5.9): a missed PIMP cell must be traceable to the
//! rule that removed, blocked or outranked SOE's family, from the CSV alone.

use trnbake_swg::eval::HeightEvaluator;
use trnbake_swg::fidelity::{explain_csv, explain_pimp, PimpSampling};
use trnbake_swg::model::header::{Bytes, PackedIntMap, PackedMapControl};
use trnbake_swg::plan::HeightOptions;
use trnbake_swg::surface::normals::NormalMethod;
use trnbake_swg::surface::{SurfaceEvaluator, SurfaceOptions};

mod common;

/// A real planet, the options of its surface checks and its height evaluator, or `None` with
/// a printed skip (a failure in CI).
fn planet(name: &str) -> Option<(trnbake_swg::model::Terrain, HeightOptions, HeightEvaluator)> {
    let t = common::planet(name)?;
    let opts = common::lenient_options();
    let he = HeightEvaluator::new(&t, &opts).unwrap();
    Some((t, opts, he))
}

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
    let demo: serde_json::Value = serde_json::from_str(trnbake_swg::model::json::DEMO_TERRAIN_JSON).unwrap();
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
    let mut t = trnbake_swg::model::json::terrain_from_json(&json.to_string(), "explain test").unwrap();
    // swg-trn §2.4: 0 bits per element → every cell holds the minimum value, family 5.
    t.flora_map = Some(PackedIntMap { control: PackedMapControl { width: 16, height: 16, bits_per_element: 0, minimum_value: 5 }, data: Bytes(vec![0]) });
    let opts = HeightOptions::default();
    let (he, se) = common::evaluators(&t, &opts, SurfaceOptions::default());
    let ex =
        explain_pimp(&t, &he, &se, NormalMethod::Faces, PimpSampling { per_side: 4, reach: 0.0 }, trnbake_swg::fidelity::PimpCells::Random { n: 200, seed: 3 })
            .unwrap();
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

/// Per-planet PIMP agreement (swg-trn §5.9) of the finding that made the tree walk the
/// default, pinned so it cannot silently drop: 4,000 random cells (seed 1, the `fidelity
/// --cells 1000` sample), 4×4 posts per cell over the whole cell, with the readings of that
/// time (FSLP on the final heights, full flora density), for the separate passes and for the
/// tree walk (`--surface-walk tree`), each ≥ its measured figure − 0.5 %. Measured (separate / tree): tatooine 98.05 / 98.05, yavin4 97.97 / 98.18,
/// naboo 93.36 / 93.62, dathomir 35.24 / 95.84, mustafar 100 / 100, kashyyyk_main 87.50 /
/// 87.50. The tree walk must not be below the separate passes on any planet, and stays
/// calibrated: every probability bin of ≥ 100 cells within 0.1 of the observed share.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn pimp_agreement_is_pinned_per_planet() {
    use trnbake_swg::fidelity::{pimp_predictions, pimp_report, PimpCells};
    use trnbake_swg::surface::{FloraAmount, SlopeHeight, SurfaceWalk};
    let planets = [
        ("tatooine", 0.9805, 0.9805),
        ("yavin4", 0.9797, 0.9818),
        ("naboo", 0.9336, 0.9362),
        ("dathomir", 0.3524, 0.9584),
        ("mustafar", 1.0, 1.0),
        ("kashyyyk_main", 0.8750, 0.8750),
    ];
    for (name, separate, tree) in planets {
        let Some((t, opts, he)) = planet(name) else { continue };
        let mut rates = Vec::new();
        for (walk, measured) in [(SurfaceWalk::Separate, separate), (SurfaceWalk::Tree, tree)] {
            let reading = SurfaceOptions { walk, slope_height: SlopeHeight::Final, flora_amount: FloraAmount::Any, ..Default::default() };
            let se = SurfaceEvaluator::new(&t, &opts, reading).unwrap();
            let sampling = PimpSampling { per_side: 4, reach: 0.0 };
            let r = pimp_report(&pimp_predictions(&t, &he, &se, NormalMethod::Faces, sampling, PimpCells::Random { n: 4000, seed: 1 }).unwrap());
            eprintln!(
                "{name} {walk:?}: {}/{} = {:.2} % (pinned {:.2} %), worst calibration gap {:.3}",
                r.agree,
                r.flora_cells,
                100.0 * r.rate(),
                100.0 * measured,
                r.worst_calibration(100)
            );
            assert!(r.rate() >= measured - 0.005, "{name} {walk:?}: PIMP agreement {:.4} fell below {:.4} − 0.005", r.rate(), measured);
            if walk == SurfaceWalk::Tree {
                assert!(r.worst_calibration(100) <= 0.1, "{name}: calibration gap {:.3} > 0.1", r.worst_calibration(100));
            }
            rates.push(r.rate());
        }
        assert!(rates[1] >= rates[0], "{name}: the tree walk ({:.4}) is below the separate passes ({:.4})", rates[1], rates[0]);
    }
}

/// What is left on kashyyyk_main and naboo is not a rule this project misreads (README,
/// Surface maps; swg-trn §5.5, §5.9):
/// - kashyyyk_main, every cell of its 256² PIMP once (the random sample meets only 16 of its
///   493 flora cells): 471/493 = 95.54 % (94.73 % with the previous default reading). Its
///   misses are all `TreeAttempt`, whose FSLP
///   passes only slopes in the open interval (0°, 1°): 2 cm over a post spacing, below PFPM's
///   own 1/32 m resolution. Counting perfectly flat posts in (`--slope-flat include`) matches
///   more flora cells but puts trees on over a thousand flat cells where SOE placed none, and
///   wrecks the calibration: the strict interval stays.
/// - naboo (4,000 cells): the same-chances ceiling is below 97 % (96.77 %). Its largest mixed
///   group, LIANORM_SWAMP_e3's Rocks (36) under DecdTrees (40), both 0.412 (chances 0.242 /
///   0.412), is 46 cells with identical chances that PIMP fills 23 / 23 (the stack's odds
///   give 40 in 0.412 / 0.654 = 63 % of them): the original tool's random family draw (the
///   placement RNG does not give it), so no rule reading the chances gets more than half.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn kashyyyk_every_cell_and_the_naboo_random_draw_ceiling() {
    use trnbake_swg::fidelity::{pimp_predictions, pimp_report, PimpCells};
    use trnbake_swg::surface::SlopeFlat;
    if let Some((t, opts, he)) = planet("kashyyyk_main") {
        let sampling = PimpSampling::header_box(&t, 4);
        let mut reports = Vec::new();
        for slope_flat in [SlopeFlat::Exclude, SlopeFlat::Include] {
            let se = SurfaceEvaluator::new(&t, &opts, SurfaceOptions { slope_flat, ..Default::default() }).unwrap();
            let r = pimp_report(&pimp_predictions(&t, &he, &se, NormalMethod::Faces, sampling, PimpCells::Every).unwrap());
            eprintln!(
                "kashyyyk_main {slope_flat:?}: {}/{} flora cells, {}/{} empty cells, worst calibration gap {:.3}",
                r.agree,
                r.flora_cells,
                r.empty_agree,
                r.empty_cells,
                r.worst_calibration(100)
            );
            reports.push(r);
        }
        let (strict, include) = (&reports[0], &reports[1]);
        assert_eq!(strict.flora_cells, 493);
        assert!(strict.rate() >= 0.9554 - 0.005, "kashyyyk_main every cell: {:.4} fell below 0.9554 − 0.005", strict.rate());
        assert!(
            include.empty_agree + 1000 < strict.empty_agree,
            "flat posts should put trees on > 1000 empty cells: {} vs {}",
            include.empty_agree,
            strict.empty_agree
        );
        assert!(include.worst_calibration(100) > 0.5, "--slope-flat include calibration gap {:.3}", include.worst_calibration(100));
    }
    if let Some((t, opts, he)) = planet("naboo") {
        let sampling = PimpSampling::header_box(&t, 4);
        let se = SurfaceEvaluator::new(&t, &opts, SurfaceOptions::default()).unwrap();
        let r = pimp_report(&pimp_predictions(&t, &he, &se, NormalMethod::Faces, sampling, PimpCells::Random { n: 4000, seed: 1 }).unwrap());
        eprintln!(
            "naboo: {}/{} = {:.2} %, ceiling {}/{} = {:.2} %",
            r.agree,
            r.flora_cells,
            100.0 * r.rate(),
            r.same_chances_best,
            r.flora_cells,
            100.0 * r.ceiling()
        );
        assert!(r.ceiling() < 0.97, "naboo's same-chances ceiling {:.4} reached 97 %: the random-draw explanation no longer holds", r.ceiling());
        let swamp = r
            .mixed_groups
            .iter()
            .find(|g| g.chances.iter().map(|e| e.0).eq([36, 40]) && (g.chances[1].1 - 0.412).abs() < 0.001)
            .expect("LIANORM_SWAMP_e3's Rocks/DecdTrees group");
        let share_40 = swamp.truths.iter().find(|e| e.0 == 40).map_or(0, |e| e.1) as f64 / swamp.cells as f64;
        let predicted = 0.412 / (0.412 + 0.588 * 0.412);
        eprintln!("naboo Rocks/DecdTrees: {} cells, PIMP family 40 in {:.3} (stack odds {predicted:.3})", swamp.cells, share_40);
        assert!(
            swamp.cells >= 40 && (0.3..=0.7).contains(&share_40),
            "{} cells, share {share_40:.3}: both families should fill a good part of the group",
            swamp.cells
        );
    }
}

/// The default reading (README, Surface maps): FSLP on the heights built so far
/// (`--slope-height tree`), a flora add's density scaled by the layer amount (`--flora-amount
/// scale`), and each PIMP cell sampled over the box its object lies in (`fidelity
/// --pimp-reach` defaults to 1 − the header's collidable tileBorder, swg-trn §2.2: the
/// placement RNG puts the object at border + u·(16 − 2·border)). It beats or ties the
/// previous default (final slopes, full density, whole cell) on every planet and is
/// calibrated everywhere (every bin of ≥ 100 cells within 0.1; dathomir's worst is 0.045,
/// against 0.143 with tree slopes alone). Measured (4,000 cells, seed 1; kashyyyk_main on
/// every cell): tatooine 98.17, yavin4 98.74, naboo 93.71, dathomir 99.74, mustafar 100,
/// kashyyyk_main 95.54 (previous default 98.05 / 98.18 / 93.62 / 95.84 / 100 / 94.73).
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn default_reading_is_pinned_calibrated_and_beats_the_previous_default() {
    use trnbake_swg::fidelity::{pimp_predictions, pimp_report, PimpCells};
    use trnbake_swg::surface::{FloraAmount, SlopeHeight};
    let planets = [("tatooine", 0.9817), ("yavin4", 0.9874), ("naboo", 0.9371), ("dathomir", 0.9974), ("mustafar", 1.0), ("kashyyyk_main", 0.9554)];
    for (name, measured) in planets {
        let Some((t, opts, he)) = planet(name) else { continue };
        let cells = if name == "kashyyyk_main" { PimpCells::Every } else { PimpCells::Random { n: 4000, seed: 1 } };
        let header_box = PimpSampling::header_box(&t, 4);
        assert_eq!(header_box.reach, 1.0 - t.header.collidable_flora.tile_border, "{name}: the header box is the cell shrunk by tileBorder − 1");
        let previous = SurfaceOptions { slope_height: SlopeHeight::Final, flora_amount: FloraAmount::Any, ..Default::default() };
        let mut rates = Vec::new();
        for (reading, sampling) in [(previous, PimpSampling { per_side: 4, reach: 0.0 }), (SurfaceOptions::default(), header_box)] {
            let se = SurfaceEvaluator::new(&t, &opts, reading).unwrap();
            let r = pimp_report(&pimp_predictions(&t, &he, &se, NormalMethod::Faces, sampling, cells).unwrap());
            eprintln!(
                "{name} reach {:.2}: {}/{} = {:.2} %, worst calibration gap {:.3}",
                sampling.reach,
                r.agree,
                r.flora_cells,
                100.0 * r.rate(),
                r.worst_calibration(100)
            );
            rates.push((r.rate(), r.worst_calibration(100)));
        }
        let ((previous, _), (default, gap)) = (rates[0], rates[1]);
        assert!(default >= measured - 0.005, "{name}: {default:.4} fell below {measured:.4} − 0.005");
        assert!(default >= previous, "{name}: the default {default:.4} is below the previous default's {previous:.4}");
        assert!(gap <= 0.1, "{name}: calibration gap {gap:.3} > 0.1");
    }
}
