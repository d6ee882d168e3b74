//! The WGSL twins in `kernels/records.wgsl` must have exactly the layout of the Rust records
//! (src/plan.rs, src/gpu/records.rs), the same constants, and the bindings the host expects.
//! Checked through naga on the concatenated source that build.rs validated.

use std::any::type_name;
use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};

use naga::{AddressSpace, ArraySize, Expression, Literal, Module, ScalarKind, StorageAccess, TypeInner};
use trnbake_gpu::records::{binding, GpuParams, HEIGHT_PASS_ENTRY, HEIGHT_PASS_WGSL, HEIGHT_PASS_WORKGROUP, SURFACE_PASS_WGSL};
use trnbake_gpu::surface_pass::{GpuPostRecord, GpuSurfaceParams};
use trnbake_gpu::water_pass::{GpuLocalWater, GpuWaterLine, GpuWaterParams, GpuWaterPost};
use trnbake_swg::plan::*;

fn module() -> Module {
    naga::front::wgsl::parse_str(HEIGHT_PASS_WGSL).unwrap_or_else(|e| panic!("height pass WGSL does not parse:\n{}", e.emit_to_string(HEIGHT_PASS_WGSL)))
}

fn surface_module() -> Module {
    naga::front::wgsl::parse_str(SURFACE_PASS_WGSL).unwrap_or_else(|e| panic!("surface pass WGSL does not parse:\n{}", e.emit_to_string(SURFACE_PASS_WGSL)))
}

/// `std::any::type_name` of a field's type, read through a projection closure.
fn field_type<T, F>(_: fn(&T) -> &F) -> (&'static str, usize) {
    (type_name::<F>(), size_of::<F>())
}

/// A naga type in Rust spelling: `u32`, `f32`, `[u32; 3]`, or the struct's name.
fn naga_type_name(m: &Module, ty: naga::Handle<naga::Type>) -> String {
    let t = &m.types[ty];
    match &t.inner {
        TypeInner::Scalar(s) => scalar_name(s.kind, s.width),
        TypeInner::Vector { size, scalar } => format!("[{}; {}]", scalar_name(scalar.kind, scalar.width), *size as u32),
        TypeInner::Array { base, size: ArraySize::Constant(n), .. } => format!("[{}; {}]", naga_type_name(m, *base), n),
        TypeInner::Array { base, size: ArraySize::Dynamic, .. } => format!("[{}]", naga_type_name(m, *base)),
        _ => t.name.clone().unwrap_or_else(|| format!("{:?}", t.inner)),
    }
}

fn scalar_name(kind: ScalarKind, width: u8) -> String {
    let k = match kind {
        ScalarKind::Sint => "i",
        ScalarKind::Uint => "u",
        ScalarKind::Float => "f",
        ScalarKind::Bool => return "bool".into(),
        other => return format!("{other:?}"),
    };
    format!("{k}{}", width as u32 * 8)
}

/// Member (name, offset, type) list and span of the WGSL struct `name`.
fn wgsl_struct(m: &Module, name: &str) -> (Vec<(String, u32, String)>, u32) {
    let (_, ty) = m.types.iter().find(|(_, t)| t.name.as_deref() == Some(name)).unwrap_or_else(|| panic!("kernels/records.wgsl has no struct `{name}`"));
    let TypeInner::Struct { members, span } = &ty.inner else { panic!("`{name}` is not a struct in WGSL") };
    let members = members.iter().map(|mb| (mb.name.clone().unwrap_or_default(), mb.offset, naga_type_name(m, mb.ty))).collect();
    (members, *span)
}

/// Compare one Rust struct with its WGSL twin: every field (name, order, offset, type) and
/// the size. The field list must cover the whole Rust struct: the field sizes must add up to
/// `size_of` (these records are `Pod`, so they have no padding).
macro_rules! check_struct {
    ($rust:ty, $wgsl:expr, [$($field:ident),+ $(,)?]) => {
        check_struct!(module(), $rust, $wgsl, [$($field),+])
    };
    ($module:expr, $rust:ty, $wgsl:expr, [$($field:ident),+ $(,)?]) => {{
        let m = $module;
        let (members, span) = wgsl_struct(&m, $wgsl);
        let rust: Vec<(&str, usize, &str, usize)> = vec![
            $((stringify!($field), offset_of!($rust, $field), field_type(|r: &$rust| &r.$field).0, field_type(|r: &$rust| &r.$field).1)),+
        ];
        let covered: usize = rust.iter().map(|f| f.3).sum();
        assert_eq!(covered, size_of::<$rust>(), "{}: the field list of the test misses fields", stringify!($rust));
        assert_eq!(
            members.iter().map(|mb| mb.0.as_str()).collect::<Vec<_>>(),
            rust.iter().map(|f| f.0).collect::<Vec<_>>(),
            "{} vs WGSL `{}`: field names or order differ",
            stringify!($rust),
            $wgsl
        );
        for ((name, offset, wty), (_, roff, rty, _)) in members.iter().zip(&rust) {
            assert_eq!(*offset as usize, *roff, "{}.{}: WGSL offset {} vs Rust {}", stringify!($rust), name, offset, roff);
            // type_name spells arrays `[u32; 3]` and scalars `u32`, like naga_type_name.
            assert_eq!(wty, rty, "{}.{}: WGSL type {} vs Rust {}", stringify!($rust), name, wty, rty);
        }
        assert_eq!(span as usize, size_of::<$rust>(), "{}: WGSL size {} vs Rust {}", stringify!($rust), span, size_of::<$rust>());
        // Alignment 4 everywhere, so an array<T> of records has stride == size on both sides.
        assert_eq!(std::mem::align_of::<$rust>(), 4, "{}", stringify!($rust));
    }};
}

#[test]
fn layer_record_layout() {
    check_struct!(
        LayerRecord,
        "LayerRecord",
        [subtree_end, depth, flags, boundary_start, boundary_count, filter_start, filter_count, affector_start, affector_count, slope_rank, _pad, bounds]
    );
}

#[test]
fn boundary_record_layout() {
    check_struct!(BoundaryRecord, "BoundaryRecord", [kind, feather_type, point_start, point_count, params, extra, _pad, bounds]);
}

#[test]
fn filter_record_layout() {
    check_struct!(FilterRecord, "FilterRecord", [kind, feather_type, family, has_gain, feather_amount, low, high, value]);
}

#[test]
fn affector_record_layout() {
    check_struct!(AffectorRecord, "AffectorRecord", [kind, operation, index, _pad, value, value2, _pad2]);
}

#[test]
fn road_record_layout() {
    check_struct!(
        RoadRecord,
        "RoadRecord",
        [point_start, point_count, segment_start, heights_start, fixed_heights, feather_type, half_width, feather_amount, depth, _pad]
    );
}

#[test]
fn fractal_record_layout() {
    check_struct!(
        FractalRecord,
        "FractalRecord",
        [
            octaves,
            combination_rule,
            use_bias,
            use_gain,
            frequency_x,
            frequency_z,
            offset_x,
            offset_z,
            octave_frequency_multiplier,
            amplitude,
            norm,
            bias_exponent,
            gain_exponent,
            table_offset,
            _pad
        ]
    );
}

#[test]
fn bitmap_record_layout() {
    check_struct!(BitmapRecord, "BitmapRecord", [width, height, byte_offset, _pad]);
}

#[test]
fn tile_layer_layout() {
    check_struct!(TileLayer, "TileLayer", [layer, skip_to, boundary_start, boundary_count]);
}

#[test]
fn params_layout() {
    check_struct!(GpuParams, "Params", [x0, z0, spacing, half_width, grid_cols, grid_rows, tile_c0, tile_r0, tile_cols, tile_rows, blocks_per_row, _pad]);
    assert_eq!(size_of::<GpuParams>(), 48);
}

#[test]
fn surface_params_layout() {
    check_struct!(
        surface_module(),
        GpuSurfaceParams,
        "SurfaceParams",
        [
            x0,
            z0,
            spacing,
            half_width,
            tile_c0,
            tile_r0,
            tile_cols,
            tile_rows,
            block,
            blocks_per_row,
            parity_c0,
            parity_r0,
            feather_clamp,
            direction,
            normal_method,
            walk,
            slope_tree,
            keep_zero,
            flora_scale,
            slope_layers
        ]
    );
    // The plan records of the surface module are the height module's (one records.wgsl).
    check_struct!(
        surface_module(),
        LayerRecord,
        "LayerRecord",
        [subtree_end, depth, flags, boundary_start, boundary_count, filter_start, filter_count, affector_start, affector_count, slope_rank, _pad, bounds]
    );
    check_struct!(surface_module(), TileLayer, "TileLayer", [layer, skip_to, boundary_start, boundary_count]);
}

#[test]
fn post_record_layout() {
    check_struct!(
        surface_module(),
        GpuPostRecord,
        "PostRecord",
        [shader, splat_family, splat_weight, flora_family, flora_probability, environment, color, excluded, passable, flora_overflow]
    );
}

/// The surface module's own constants match Rust, and its bindings are the host's: 0–16 as
/// in the height pass, then blocks, ramps, heights, normals, surface.
#[test]
fn surface_constants_bindings_and_entry_points() {
    use trnbake_gpu::surface_pass::{binding as sb, FLORA_STACK_DEPTH, STORAGE_BUFFERS};
    let m = surface_module();
    let consts = wgsl_constants(&m);
    assert_eq!(consts.get("SPLAT_LAYERS"), Some(&Literal::U32(trnbake_swg::surface::SPLAT_LAYERS as u32)));
    assert_eq!(consts.get("FLORA_STACK_DEPTH"), Some(&Literal::U32(FLORA_STACK_DEPTH as u32)));
    assert_eq!(consts.get("FLORA_ADD"), Some(&Literal::I32(FLORA_ADD)));
    assert_eq!(consts.get("FLORA_REMOVE_ALL"), Some(&Literal::I32(FLORA_REMOVE_ALL)));
    for name in ["AFFECTOR_SHADER_CONSTANT", "AFFECTOR_FLORA_BASE", "AFFECTOR_ROAD_SHADER", "FILTER_SHADER"] {
        assert!(consts.contains_key(name), "{name}");
    }
    let mut found = BTreeMap::new();
    for (_, g) in m.global_variables.iter() {
        let Some(b) = &g.binding else { continue };
        assert_eq!(b.group, 0, "{:?}", g.name);
        found.insert(b.binding, (g.name.clone().unwrap(), g.space));
    }
    // The water pass's own bindings (water_layout_bindings_and_entry_point) follow.
    found.retain(|&b, _| b < sb::COUNT);
    assert_eq!(found.len(), sb::COUNT as usize, "{found:?}");
    for i in 1..binding::TILE_BOUNDARIES + 1 {
        assert_eq!(found[&i].0, binding::NAMES[i as usize], "binding {i}");
        assert_eq!(found[&i].1, AddressSpace::Storage { access: StorageAccess::LOAD }, "binding {i}");
    }
    let names = [(sb::BLOCKS, "blocks"), (sb::RAMPS, "ramps"), (sb::HEIGHTS, "heights"), (sb::NORMALS, "normals"), (sb::SURFACE, "surface")];
    for (b, name) in names {
        assert_eq!(found[&b].0, name, "binding {b}");
        let rw = matches!(b, sb::NORMALS | sb::SURFACE);
        let access = if rw { StorageAccess::LOAD | StorageAccess::STORE } else { StorageAccess::LOAD };
        assert_eq!(found[&b].1, AddressSpace::Storage { access }, "binding {b} ({name})");
    }
    assert_eq!(found[&0].1, AddressSpace::Uniform);
    assert_eq!(STORAGE_BUFFERS, sb::COUNT - 1);
    for name in ["normals_pass", "shader_pass", "later_pass"] {
        let ep = m.entry_points.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("entry point {name}"));
        assert_eq!(ep.workgroup_size, [8, 8, 1], "{name}");
    }
}

#[test]
fn water_records_layout() {
    check_struct!(surface_module(), GpuWaterParams, "WaterParams", [global_height, has_global, local_count, line_count]);
    check_struct!(surface_module(), GpuLocalWater, "LocalWaterRecord", [height, water_type]);
    check_struct!(surface_module(), GpuWaterLine, "WaterLineRecord", [point_start, point_count, half_width, water_type, bounds]);
    check_struct!(surface_module(), GpuWaterPost, "WaterPost", [height, covered]);
}

/// The water pass binds what the host's layout holds (`gpu::water::binding`): the surface
/// passes' params, boundaries and points, then its own five, past the surface passes' last.
#[test]
fn water_bindings_and_entry_point() {
    use trnbake_gpu::surface_pass::binding as sb;
    use trnbake_gpu::water_pass::{binding as wb, WATER_PASS_ENTRY};
    let m = surface_module();
    let mut found = BTreeMap::new();
    for (_, g) in m.global_variables.iter() {
        let Some(b) = &g.binding else { continue };
        assert_eq!(b.group, 0, "{:?}", g.name);
        found.insert(b.binding, (g.name.clone().unwrap(), g.space));
    }
    let ro = AddressSpace::Storage { access: StorageAccess::LOAD };
    let expected = [
        (wb::PARAMS, "params", AddressSpace::Uniform),
        (wb::BOUNDARIES, "boundaries", ro),
        (wb::POINTS, "points", ro),
        (wb::WATER_PARAMS, "water_params", AddressSpace::Uniform),
        (wb::LOCAL_WATER, "local_water", ro),
        (wb::WATER_LINES, "water_lines", ro),
        (wb::WATER_LINE_POINTS, "water_line_points", ro),
        (wb::WATER, "water", AddressSpace::Storage { access: StorageAccess::LOAD | StorageAccess::STORE }),
    ];
    assert_eq!(expected.map(|e| e.0), wb::ALL);
    for (b, name, space) in expected {
        assert_eq!(found[&b], (name.to_string(), space), "binding {b}");
    }
    assert!(wb::ALL[3..].iter().all(|&b| b >= sb::COUNT), "the water pass's own bindings follow the surface passes'");
    assert_eq!(found.len(), sb::COUNT as usize + 5, "{found:?}");
    let ep = m.entry_points.iter().find(|e| e.name == WATER_PASS_ENTRY).expect("water_pass");
    assert_eq!(ep.workgroup_size, [8, 8, 1]);
}

/// The WGSL `const` declarations and their values (u32/i32/f32 only), by name.
fn wgsl_constants(m: &Module) -> BTreeMap<String, Literal> {
    m.constants
        .iter()
        .filter_map(|(_, c)| match m.global_expressions[c.init] {
            Expression::Literal(l) => Some((c.name.clone()?, l)),
            _ => None,
        })
        .collect()
}

#[test]
fn constants_match_rust() {
    let m = module();
    let consts = wgsl_constants(&m);
    let u = |name: &str| match consts.get(name) {
        Some(Literal::U32(v)) => *v,
        other => panic!("WGSL const `{name}`: expected a u32, found {other:?}"),
    };
    let f = |name: &str| match consts.get(name) {
        Some(Literal::F32(v)) => *v,
        other => panic!("WGSL const `{name}`: expected an f32, found {other:?}"),
    };
    let expected: &[(&str, u32)] = &[
        ("MAX_DEPTH", MAX_DEPTH as u32),
        ("LAYER_INVERT_BOUNDARIES", LAYER_INVERT_BOUNDARIES),
        ("LAYER_INVERT_FILTERS", LAYER_INVERT_FILTERS),
        ("LAYER_NEEDS_EXTENT", LAYER_NEEDS_EXTENT),
        ("BOUNDARY_CIRCLE", BOUNDARY_CIRCLE),
        ("BOUNDARY_RECTANGLE", BOUNDARY_RECTANGLE),
        ("BOUNDARY_POLYGON", BOUNDARY_POLYGON),
        ("BOUNDARY_POLYLINE", BOUNDARY_POLYLINE),
        ("FILTER_HEIGHT", FILTER_HEIGHT),
        ("FILTER_FRACTAL", FILTER_FRACTAL),
        ("FILTER_BITMAP", FILTER_BITMAP),
        ("FILTER_SLOPE", FILTER_SLOPE),
        ("FILTER_DIRECTION", FILTER_DIRECTION),
        ("FILTER_SHADER", FILTER_SHADER),
        ("AFFECTOR_HEIGHT_CONSTANT", AFFECTOR_HEIGHT_CONSTANT),
        ("AFFECTOR_HEIGHT_FRACTAL", AFFECTOR_HEIGHT_FRACTAL),
        ("AFFECTOR_HEIGHT_TERRACE", AFFECTOR_HEIGHT_TERRACE),
        ("AFFECTOR_ROAD", AFFECTOR_ROAD),
        ("PERLIN_TABLE_LEN", trnbake_swg::noise::PERLIN_TABLE_LEN as u32),
        ("HEIGHT_CULL_BLOCK", trnbake_gpu::records::HEIGHT_CULL_BLOCK),
    ];
    // A culling block is whole workgroups, so the block index is uniform in a workgroup.
    for side in HEIGHT_PASS_WORKGROUP {
        assert_eq!(trnbake_gpu::records::HEIGHT_CULL_BLOCK % side, 0);
    }
    for &(name, want) in expected {
        assert_eq!(u(name), want, "WGSL const {name}");
    }
    assert_eq!(f("UNBOUNDED").to_bits(), UNBOUNDED.to_bits());
    assert_eq!(f("F32_MAX").to_bits(), f32::MAX.to_bits());
    assert_eq!(f32::from_bits(u("F32_INF_BITS")), f32::INFINITY);
}

/// Every `pub const NAME: u32 = N;` of crates/swg/src/plan/records.rs with a kernel-relevant prefix has a WGSL
/// twin with the same value, so a constant added on the Rust side cannot be forgotten.
#[test]
fn every_plan_constant_has_a_wgsl_twin() {
    let consts = wgsl_constants(&module());
    let plan_rs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/crates/swg/src/plan/records.rs")).unwrap();
    let mut seen = 0;
    for line in plan_rs.lines() {
        let Some(rest) = line.trim().strip_prefix("pub const ") else { continue };
        let Some((name, rest)) = rest.split_once(':') else { continue };
        if !["LAYER_", "BOUNDARY_", "FILTER_", "AFFECTOR_"].iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let value: u32 = rest
            .trim()
            .strip_prefix("u32 =")
            .and_then(|v| v.trim().strip_suffix(';'))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("crates/swg/src/plan/records.rs: cannot read `{}`", line.trim()));
        assert_eq!(consts.get(name), Some(&Literal::U32(value)), "WGSL twin of {name} = {value}");
        seen += 1;
    }
    assert!(seen >= 17, "only {seen} plan constants found; did the parser break?");
}

#[test]
fn bindings_match_the_host_list() {
    let m = module();
    let mut found = BTreeMap::new();
    for (_, g) in m.global_variables.iter() {
        let Some(b) = &g.binding else { continue };
        assert_eq!(b.group, 0, "{:?}", g.name);
        let name = g.name.clone().unwrap();
        assert!(found.insert(b.binding, (name, g.space, naga_type_name(&m, g.ty))).is_none(), "binding {} twice", b.binding);
    }
    assert_eq!(found.len(), binding::COUNT as usize, "{found:?}");
    let element = [
        "Params",
        "[LayerRecord]",
        "[BoundaryRecord]",
        "[FilterRecord]",
        "[AffectorRecord]",
        "[RoadRecord]",
        "[[f32; 2]]",
        "[[u32; 2]]",
        "[[f32; 4]]",
        "[f32]",
        "[FractalRecord]",
        "[u32]",
        "[[f32; 2]]",
        "[BitmapRecord]",
        "[u32]",
        "[TileLayer]",
        "[u32]",
        "[f32]",
        "[[u32; 2]]",
    ];
    for (i, name) in binding::NAMES.iter().enumerate() {
        let (wname, space, ty) = &found[&(i as u32)];
        assert_eq!(wname, name, "binding {i}");
        assert_eq!(ty, element[i], "binding {i} ({name}) type");
        let want = match i as u32 {
            binding::PARAMS => AddressSpace::Uniform,
            binding::HEIGHTS => AddressSpace::Storage { access: StorageAccess::LOAD | StorageAccess::STORE },
            _ => AddressSpace::Storage { access: StorageAccess::LOAD },
        };
        assert_eq!(*space, want, "binding {i} ({name}) address space");
    }
    // The Rust element types of the plan buffers have the WGSL element sizes.
    assert_eq!(size_of::<[f32; 2]>(), 8);
    assert_eq!(size_of::<[u32; 2]>(), 8);
    assert_eq!(size_of::<[f32; 4]>(), 16);
}

#[test]
fn entry_point() {
    let m = module();
    let ep = m.entry_points.iter().find(|e| e.name == HEIGHT_PASS_ENTRY).expect("height_pass entry point");
    assert_eq!(ep.stage, naga::ShaderStage::Compute);
    assert_eq!(ep.workgroup_size, [HEIGHT_PASS_WORKGROUP[0], HEIGHT_PASS_WORKGROUP[1], 1]);
    // A culling block must be whole workgroups at the widest strip (8 invocations × 4 posts
    // across): the kernel reads one block's list for a whole workgroup.
    assert_eq!(trnbake_gpu::records::HEIGHT_CULL_BLOCK % (HEIGHT_PASS_WORKGROUP[0] * 4), 0);
    assert_eq!(trnbake_gpu::records::HEIGHT_CULL_BLOCK % HEIGHT_PASS_WORKGROUP[1], 0);
    // The strip's override constant exists, and its default is the widest strip.
    let (_, strip) = m.overrides.iter().find(|(_, o)| o.name.as_deref() == Some("STRIP")).expect("override STRIP");
    assert!(strip.init.is_some(), "STRIP has a default");
}

/// The embedded source is the current kernels (build.rs reruns when `kernels/` changes).
#[test]
fn embedded_source_is_current() {
    for file in ["records", "noise", "feather", "boundary", "filter", "affector", "walk_strip", "height"] {
        let path = format!("{}/kernels/{file}.wgsl", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(HEIGHT_PASS_WGSL.contains(&text), "{path} is not in HEIGHT_PASS_WGSL (stale build?)");
    }
    for file in ["records", "noise", "feather", "boundary", "filter", "affector", "walk", "normals", "surface"] {
        let path = format!("{}/kernels/{file}.wgsl", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(SURFACE_PASS_WGSL.contains(&text), "{path} is not in SURFACE_PASS_WGSL (stale build?)");
    }
}

/// The kernels use only built-ins that lavapipe computes exactly like Rust: no `pow`, `exp`,
/// `log`, `fma`, `mix`, trigonometry or `inverseSqrt` (gpu.md §3.5). `sqrt` is correctly
/// rounded on lavapipe (LLVM's sqrt) and in Rust; `min` is only used on u32.
#[test]
fn only_exact_builtins() {
    use naga::MathFunction as M;
    let m = module();
    let allowed = [M::Abs, M::Floor, M::Sqrt, M::Min];
    let check = |name: &str, f: &naga::Function| {
        for (_, e) in f.expressions.iter() {
            if let Expression::Math { fun, .. } = e {
                assert!(allowed.contains(fun), "`{name}` uses {fun:?}, which a GPU may compute differently from the CPU reference");
            }
        }
    };
    for m in [m, surface_module()] {
        for (_, f) in m.functions.iter() {
            check(f.name.as_deref().unwrap_or("?"), f);
        }
        for ep in &m.entry_points {
            check(&ep.name, &ep.function);
        }
    }
}
