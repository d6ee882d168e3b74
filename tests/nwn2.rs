//! NWN2 `.trn`/`.trx`: real-file round trips, checks, export, pathing and CLI (spec nwn2.md).

mod common;

use common::{tmp, trnbake};

use std::path::PathBuf;

use trnbake_nwn2::{codec, model::*};

fn nwn2_file(rel: &str) -> Option<PathBuf> {
    common::shared_data_file(&format!("nwn2/{rel}"))
}

const SAMPLES: [&str; 2] = ["TestImportExportTRN.trn", "TestImportExportTRN.trx"];

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn real_files_rewrite_byte_exact() {
    for name in SAMPLES {
        let Some(p) = nwn2_file(name) else { return };
        let bytes = std::fs::read(&p).unwrap();
        let f = codec::read(&bytes).unwrap();
        assert_eq!(codec::write(&f).unwrap(), bytes, "{name}");
    }
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn real_aswm_reencodes_byte_exact_when_decompressed() {
    for name in SAMPLES {
        let Some(p) = nwn2_file(name) else { return };
        let mut f = trnbake_nwn2::load(&p).unwrap();
        let Some(Packet::Aswm(a)) = f.packets.iter_mut().find(|p| matches!(p, Packet::Aswm(_))) else { panic!("no ASWM in {name}") };
        let orig = a.original.take().expect("the samples compress their ASWM");
        // The decompressed data, re-encoded from the model, equals what the stream held.
        let mut inflated = Vec::new();
        use std::io::Read;
        flate2::read::ZlibDecoder::new(&orig.stream[..]).read_to_end(&mut inflated).unwrap();
        assert_eq!(codec::write_aswm(&a.aswm).unwrap(), inflated, "{name}");
        // Without the original stream the file is recompressed, and reads back to the same walkmesh.
        let again = codec::read(&codec::write(&f).unwrap()).unwrap();
        assert_eq!(codec::write_aswm(again.aswm().unwrap()).unwrap(), inflated);
    }
}

use trnbake_nwn2::check::check;
use trnbake_nwn2::walkmesh::{self, VertexGrid, WalkOptions};

/// Runs `trnbake nwn2 ARGS`; returns (success, stdout + stderr).
fn nwn2(args: &[&str]) -> (bool, String) {
    let o = trnbake().arg("nwn2").args(args).output().unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr))
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn real_files_pass_check_and_trx_passes_strict() {
    for name in SAMPLES {
        let Some(p) = nwn2_file(name) else { return };
        let f = trnbake_nwn2::load(&p).unwrap();
        assert_eq!(check(&f, false), vec![], "{name}");
        let (ok, out) = nwn2(&["check", p.to_str().unwrap()]);
        assert!(ok, "{out}");
    }
    let Some(p) = nwn2_file(SAMPLES[1]) else { return };
    let (ok, out) = nwn2(&["check", "--strict", p.to_str().unwrap()]);
    assert!(ok && out.contains("all checks pass (strict)"), "{out}");
    // The toolset TRN stores mesh-wide counts in its tiles (nwn2 §A.6.3): strict says so.
    let Some(p) = nwn2_file(SAMPLES[0]) else { return };
    let (ok, out) = nwn2(&["check", "--strict", p.to_str().unwrap()]);
    assert!(!ok && out.contains("tile 0: vertex/edge counts 21025/62496 differ from the unique 49/120"), "{out}");
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn info_reports_size_counts_walkable_islands_textures() {
    let Some(p) = nwn2_file(SAMPLES[1]) else { return };
    let (ok, out) = nwn2(&["info", "--json", p.to_str().unwrap()]);
    assert!(ok, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["megatiles"], serde_json::json!([6, 6]));
    assert_eq!(v["packets"][1], serde_json::json!(["TRRN", 36]));
    assert_eq!(v["walkmesh"]["triangles"], 4608);
    assert_eq!(v["walkmesh"]["walkable_triangles"], 3703);
    assert_eq!(v["walkmesh"]["islands"], 106);
    assert_eq!(v["textures"]["TT_GG_Grass_19"], 36);
    let (ok, out) = nwn2(&["info", p.to_str().unwrap()]);
    assert!(ok && out.contains("6 x 6 megatiles") && out.contains("80.4 % walkable") && out.contains("106 islands"), "{out}");
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn decompile_compile_round_trips_byte_exact() {
    let d = tmp("json");
    for name in SAMPLES {
        let Some(p) = nwn2_file(name) else { return };
        let json = d.join(format!("{name}.json"));
        let back = d.join(name);
        let (ok, out) = nwn2(&["decompile", p.to_str().unwrap(), "-o", json.to_str().unwrap()]);
        assert!(ok, "{out}");
        let (ok, out) = nwn2(&["compile", json.to_str().unwrap(), "-o", back.to_str().unwrap()]);
        assert!(ok, "{out}");
        assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&p).unwrap(), "{name}");
    }
    // An edited JSON compiles (the walkmesh is recompressed) and the edit is there.
    let Some(p) = nwn2_file(SAMPLES[1]) else { return };
    let json = d.join("edit.json");
    nwn2(&["decompile", p.to_str().unwrap(), "-o", json.to_str().unwrap()]);
    let text = std::fs::read_to_string(&json).unwrap().replacen("\"border_size\": 8", "\"border_size\": 9", 1);
    std::fs::write(&json, text).unwrap();
    let out_p = d.join("edit.trx");
    let (ok, out) = nwn2(&["compile", json.to_str().unwrap(), "-o", out_p.to_str().unwrap()]);
    assert!(ok, "{out}");
    assert_eq!(trnbake_nwn2::load(&out_p).unwrap().aswm().unwrap().border_size, 9);
    std::fs::remove_dir_all(&d).ok();
}

/// The TRX sample with `mutate` applied, written to a temp file and checked by the CLI
/// (`--strict`): it must fail, naming `expect`.
fn fails_with(tag: &str, mutate: impl Fn(&mut Nwn2File), expect: &str) {
    let Some(p) = nwn2_file(SAMPLES[1]) else { return };
    let mut f = trnbake_nwn2::load(&p).unwrap();
    mutate(&mut f);
    let d = tmp(tag);
    let q = d.join("bad.trx");
    trnbake_nwn2::save(&q, &f).unwrap();
    let (ok, out) = nwn2(&["check", "--strict", q.to_str().unwrap()]);
    assert!(!ok, "{tag}: the check passed\n{out}");
    assert!(out.contains(expect), "{tag}: expected `{expect}` in\n{out}");
    std::fs::remove_dir_all(&d).ok();
}

/// Same, checked in memory only (for rules the writer cannot express in bytes).
fn fails_in_memory(mutate: impl Fn(&mut Nwn2File), strict: bool, expect: &str) {
    let Some(p) = nwn2_file(SAMPLES[1]) else { return };
    let mut f = trnbake_nwn2::load(&p).unwrap();
    mutate(&mut f);
    let found = check(&f, strict);
    assert!(found.iter().any(|x| x.to_string().contains(expect)), "expected `{expect}` in {found:#?}");
}

fn trrn(f: &mut Nwn2File, k: usize) -> &mut Trrn {
    f.packets.iter_mut().filter_map(|p| if let Packet::Trrn(t) = p { Some(&mut **t) } else { None }).nth(k).unwrap()
}
fn watr(f: &mut Nwn2File) -> &mut Watr {
    f.packets.iter_mut().find_map(|p| if let Packet::Watr(t) = p { Some(&mut **t) } else { None }).unwrap()
}
fn aswm(f: &mut Nwn2File) -> &mut Aswm {
    f.aswm_mut().unwrap()
}
/// The first tile with walkable nodes.
fn busy_tile(a: &Aswm) -> usize {
    a.tiles.iter().position(|t| t.node_count() > 2).unwrap()
}

macro_rules! rule {
    ($name:ident, $mutate:expr, $expect:expr) => {
        #[test]
        #[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
        fn $name() {
            fails_with(stringify!($name), $mutate, $expect);
        }
    };
}

rule!(rule_container_version, |f: &mut Nwn2File| f.version_minor = 2, "header: version 2.2 (xoreos accepts only 2.3)");
rule!(rule_trrn_dds_parses, |f: &mut Nwn2File| trrn(f, 3).dds_a[0] = b'X', "packet #4 TRRN: dds_a: not a DDS file");
rule!(rule_trrn_dds_format, |f: &mut Nwn2File| trrn(f, 0).dds_b[80..84].copy_from_slice(&0x200u32.to_le_bytes()), "dds_b: unsupported pixel format");
rule!(
    rule_trrn_blend_maps_same_size,
    |f: &mut Nwn2File| {
        let t = trrn(f, 0);
        t.dds_b[12..16].copy_from_slice(&64u32.to_le_bytes());
        t.dds_b[16..20].copy_from_slice(&64u32.to_le_bytes());
    },
    "blend maps 128x128 32-bit and 64x64 32-bit"
);
rule!(rule_trrn_vertex_nan, |f: &mut Nwn2File| trrn(f, 1).vertices[7].position[2] = f32::NAN, "packet #2 TRRN: vertex 7: position is NaN");
rule!(
    rule_trrn_triangle_index,
    |f: &mut Nwn2File| trrn(f, 0).triangles[5][1] = 625,
    "packet #1 TRRN: triangle 5: vertex index 625 is not below the vertex count 625"
);
rule!(rule_watr_vertex_nan, |f: &mut Nwn2File| watr(f).vertices[0].position[0] = f32::NAN, "WATR: vertex 0: position is NaN");
rule!(rule_watr_triangle_index, |f: &mut Nwn2File| watr(f).triangles[2][0] = 900, "WATR: triangle 2: vertex index 900");
rule!(rule_watr_strict_flags, |f: &mut Nwn2File| watr(f).triangle_flags[4] = 2, "WATR: triangle flag 4: 2 (strict: must be 0 or 1)");
rule!(rule_watr_dds, |f: &mut Nwn2File| watr(f).dds.truncate(100), "WATR: dds: not a DDS file");
rule!(rule_aswm_version, |f: &mut Nwn2File| aswm(f).version = 0x6B, "accepts only 0x6C");
rule!(rule_aswm_vertex_nan, |f: &mut Nwn2File| aswm(f).vertices[3][1] = f32::NAN, "ASWM: vertex 3: coordinate is NaN");
rule!(rule_edge_vertex, |f: &mut Nwn2File| aswm(f).edges[9].vertices[1] = 1_000_000, "ASWM: edge 9: vertices [");
rule!(rule_edge_triangle, |f: &mut Nwn2File| aswm(f).edges[9].triangles[1] = 1_000_000, "edge 9: triangles");
rule!(rule_triangle_vertex, |f: &mut Nwn2File| aswm(f).triangles[11].vertices[0] = 99_999, "triangle 11: vertices [99999");
rule!(rule_triangle_edge_not_minus_one, |f: &mut Nwn2File| aswm(f).triangles[11].linked_edges[2] = u32::MAX, "(-1 is not allowed)");
rule!(rule_triangle_neighbour, |f: &mut Nwn2File| aswm(f).triangles[11].linked_triangles[2] = 77_777, "triangle 11: linked_triangles");
rule!(
    rule_linked_slot_matches_edge,
    |f: &mut Nwn2File| {
        let t = &mut aswm(f).triangles[12];
        t.linked_triangles.swap(0, 1);
        t.linked_triangles.swap(1, 2);
    },
    "triangle 12: linked slot"
);
rule!(rule_island_index, |f: &mut Nwn2File| aswm(f).triangles[0].island = 5000, "triangle 0: island 5000 is not 0xFFFF or below the island count 106");
rule!(
    rule_no_islands_means_ffff,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        a.islands.clear();
        a.island_paths.clear();
    },
    "with no islands it must be 0xFFFF (strict)"
);
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn rule_tile_grid_complete_in_memory() {
    // In bytes the grid size decides how many tiles are read, so a short grid is a parse
    // error (the tile records run into what follows); in memory it is this rule.
    fails_in_memory(|f| aswm(f).grid_width = 25, false, "ASWM: tiles: 576 tiles for a 25x24 grid");
}
rule!(rule_tile_width, |f: &mut Nwn2File| aswm(f).tile_width = 0.0, "tile_width 0 must be > 0");
rule!(rule_tile_counts_sum, |f: &mut Nwn2File| aswm(f).tiles[300].triangle_count += 1, "tile triangle counts add up to 4609");
rule!(
    rule_local_to_node_length,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = busy_tile(a);
        a.tiles[k].local_to_node.pop();
    },
    "local_to_node has 71 entries: must be 0 or the triangle count 72"
);
rule!(
    rule_triangles_offset,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = busy_tile(a);
        a.tiles[k].triangles_offset = 4608;
    },
    "triangles_offset 4608 must be below the triangle count 4608"
);
rule!(
    rule_offset_plus_table,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = busy_tile(a);
        a.tiles[k].triangles_offset = 4600;
    },
    "+ local_to_node length 72 exceeds the triangle count 4608"
);
rule!(
    rule_strict_unique_counts,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = busy_tile(a);
        a.tiles[k].vertex_count += 1;
    },
    "vertex/edge counts 50/120 differ from the unique 49/120"
);
rule!(
    rule_strict_centroid_in_tile,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = busy_tile(a);
        let t = a.tiles[k].triangles_offset as usize;
        a.triangles[t].centroid[0] += 10.0;
    },
    "is outside the tile's square (strict)"
);
rule!(
    rule_node_value_range,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = busy_tile(a);
        a.tiles[k].nodes[1] = 0x7E;
    },
    "node entry 1 = 0x7e: must be 0xFF or name a node below"
);
rule!(
    rule_local_to_node_value,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = busy_tile(a);
        a.tiles[k].local_to_node[0] = 0x7D;
    },
    "local_to_node[0] = 125: must be 0xFF or below the node count"
);
rule!(
    rule_node_to_local_range,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = busy_tile(a);
        a.tiles[k].node_to_local[0] = 72;
    },
    "node_to_local[0] = 72: must be below the tile's triangle count 72"
);
rule!(
    rule_triangle_in_two_tiles,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = busy_tile(a);
        let next = (k + 1..a.tiles.len()).find(|&j| a.tiles[j].triangle_count > 0).unwrap();
        a.tiles[next].triangles_offset = a.tiles[k].triangles_offset;
    },
    "also belongs to tile"
);
rule!(rule_island_index_position, |f: &mut Nwn2File| aswm(f).islands[4].index = 9, "island 4: index 9 differs from its position 4");
rule!(rule_island_lists_equal, |f: &mut Nwn2File| aswm(f).islands[4].distances.push(1.0), "island 4: ");
rule!(
    rule_island_adjacent_range,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = a.islands.iter().position(|i| !i.adjacent.is_empty()).unwrap();
        a.islands[k].adjacent[0] = 4000;
    },
    "adjacent island 0 = 4000 is not below the island count 106"
);
rule!(
    rule_island_exit_range,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = a.islands.iter().position(|i| !i.adjacent.is_empty()).unwrap();
        a.islands[k].exits[0] = 99_999;
    },
    "exit triangle 0 = 99999 is not below the triangle count 4608"
);
rule!(
    rule_island_exit_belongs,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = a.islands.iter().position(|i| !i.adjacent.is_empty()).unwrap();
        let other = a.triangles.iter().position(|t| t.island != k as u16 && t.island != 0xFFFF).unwrap();
        a.islands[k].exits[0] = other as u32;
    },
    "not this one"
);
rule!(
    rule_island_exit_neighbour,
    |f: &mut Nwn2File| {
        let a = aswm(f);
        let k = a.islands.iter().position(|i| i.adjacent.len() >= 2).unwrap();
        // An island's exit toward one neighbour, given as the exit toward another of a
        // different tile side, usually has no neighbour there; pick a member with none.
        let adj = a.islands[k].adjacent[0];
        let member = (0..a.triangles.len())
            .find(|&t| {
                a.triangles[t].island == k as u16
                    && !a.triangles[t].linked_triangles.iter().any(|&n| a.triangles.get(n as usize).is_some_and(|o| u32::from(o.island) == adj))
            })
            .unwrap();
        a.islands[k].exits[0] = member as u32;
    },
    "has no neighbour in adjacent island"
);
rule!(rule_island_path_next, |f: &mut Nwn2File| aswm(f).island_paths[7].next = 500, "island path table: entry 7: next 500");

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn rule_watr_flag_count_in_memory() {
    fails_in_memory(
        |f| {
            watr(f).triangle_flags.pop();
        },
        false,
        "flags for 1152 triangles (one per triangle)",
    );
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn rule_nodes_length_in_memory() {
    fails_in_memory(
        |f| {
            let a = aswm(f);
            let k = busy_tile(a);
            a.tiles[k].nodes.pop();
        },
        false,
        "node entries, must be node_count²",
    );
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn rule_island_path_table_length_in_memory() {
    fails_in_memory(
        |f| {
            aswm(f).island_paths.pop();
        },
        false,
        "island path table: 11235 entries, must be island_count² = 11236",
    );
}

/// Parse-time rules of nwn2 §A.8: mutated bytes are refused with packet, field and offset.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn parse_rules_refuse_bad_bytes() {
    let Some(p) = nwn2_file(SAMPLES[1]) else { return };
    let bytes = std::fs::read(&p).unwrap();
    let f = codec::read(&bytes).unwrap();
    let err = |b: &[u8]| codec::read(b).unwrap_err().to_string();
    // Table type differs from the packet's own type.
    let mut b = bytes.clone();
    b[12 + 8] = b'X';
    assert!(err(&b).contains("the table says \"XRRN\" but the packet says \"TRRN\""), "{}", err(&b));
    // A TRRN with a trailing byte: grow its payload size by one (the next packet's tag byte).
    let off = u32::from_le_bytes(b[24..28].try_into().unwrap()) as usize;
    let mut b = bytes.clone();
    let size = u32::from_le_bytes(b[off + 4..off + 8].try_into().unwrap());
    b[off + 4..off + 8].copy_from_slice(&(size + 1).to_le_bytes());
    assert!(err(&b).contains("trailing bytes"), "{}", err(&b));
    // The ASWM's uncompressed_size one larger than the stream inflates to.
    let aswm_off = bytes.len() - {
        let Packet::Aswm(a) = f.packets.last().unwrap() else { panic!() };
        a.original.as_ref().unwrap().stream.len() + 20
    };
    let mut b = bytes.clone();
    assert_eq!(&b[aswm_off..aswm_off + 4], b"ASWM");
    let u = u32::from_le_bytes(b[aswm_off + 16..aswm_off + 20].try_into().unwrap());
    b[aswm_off + 16..aswm_off + 20].copy_from_slice(&(u + 1).to_le_bytes());
    assert!(err(&b).contains("uncompressed_size says"), "{}", err(&b));
    // Decompressed-data rules: owns_data, version, path-table flags, exact end.
    let a = f.aswm().unwrap();
    let data = codec::write_aswm(a).unwrap();
    let mut d = data.clone();
    d[36] = 0;
    assert!(codec::read_aswm(&d, "ASWM").unwrap_err().to_string().contains("owns_data at byte 36: 0, must be 1"));
    let mut d = data.clone();
    d[0] = 0x68;
    assert!(codec::read_aswm(&d, "ASWM").unwrap_err().to_string().contains("is not one of 0x69"));
    let mut d = data.clone();
    d.push(0);
    assert!(codec::read_aswm(&d, "ASWM").unwrap_err().to_string().contains("1 trailing bytes"));
    let mut a2 = a.clone();
    a2.tiles[0].path_flags = 2;
    let d = codec::write_aswm(&a2).unwrap();
    assert!(codec::read_aswm(&d, "ASWM").unwrap_err().to_string().contains("tile 0 path table flags"));
}

/// Heights of the TRN sample on its vertex grid, from its TRRN vertices (position decides
/// the megatile, nwn2 §A.4: names can be stale).
fn sample_grid(f: &Nwn2File) -> VertexGrid {
    let t = f.trwh().unwrap();
    let (cols, rows) = (24 * t.width + 1, 24 * t.height + 1);
    let mut heights = vec![f32::NAN; (cols * rows) as usize];
    for m in f.trrns() {
        let (mx, my) = ((m.vertices[0].position[0] / 40.0).round() as u32, (m.vertices[0].position[1] / 40.0).round() as u32);
        for (k, v) in m.vertices.iter().enumerate() {
            let (c, r) = (mx * 24 + k as u32 % 25, my * 24 + k as u32 / 25);
            heights[(r * cols + c) as usize] = v.position[2];
        }
    }
    assert!(heights.iter().all(|h| h.is_finite()));
    VertexGrid { cols, rows, heights }
}

fn area_opts(w: u32, h: u32, trx: bool) -> trnbake_nwn2::export::AreaOptions {
    trnbake_nwn2::export::AreaOptions {
        megatiles: (w, h),
        id: 1478,
        name: "TestImportExportTRN".into(),
        textures: vec![],
        materials: None,
        walk: WalkOptions { trx, ..Default::default() },
        blend: None,
    }
}

/// Our export of the sample's own heights reproduces the toolset's conventions: TRRN
/// triangle lists and vertex positions (checkerboard diagonal, nwn2 §A.1), uv/weights,
/// blend-map DDS headers (§A.4), and the walkmesh's walkable set and TRX shape (§A.6.4, A.7).
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn export_of_sample_heights_matches_toolset_conventions() {
    let Some(p) = nwn2_file(SAMPLES[0]) else { return };
    let Some(px) = nwn2_file(SAMPLES[1]) else { return };
    let sample = trnbake_nwn2::load(&p).unwrap();
    let sample_trx = trnbake_nwn2::load(&px).unwrap();
    let grid = sample_grid(&sample);
    let ours = trnbake_nwn2::export::build(&grid, &[], &area_opts(6, 6, false)).unwrap();
    for (a, b) in ours.trrns().zip(sample.trrns()) {
        assert_eq!(a.triangles, b.triangles);
        for (va, vb) in a.vertices.iter().zip(&b.vertices) {
            assert_eq!(va.position, vb.position);
            for k in 0..2 {
                assert!((va.uv[k] - vb.uv[k]).abs() < 1e-5 && (va.weights[k] - vb.weights[k]).abs() < 1e-6, "{va:?} vs {vb:?}");
            }
        }
        assert_eq!(a.dds_a[..128], b.dds_a[..128]);
        assert_eq!(a.dds_a.len(), b.dds_a.len());
        assert_eq!(a.dds_b.len(), b.dds_b.len());
    }
    // TRN walkmesh: same triangles (as vertex sets) and the same walkable set.
    let (wa, wb) = (ours.aswm().unwrap(), sample.aswm().unwrap());
    assert_eq!((wa.vertices.len(), wa.edges.len(), wa.triangles.len()), (wb.vertices.len(), wb.edges.len(), wb.triangles.len()));
    let walk = |a: &Aswm| a.triangles.iter().filter(|t| t.flags & FLAG_WALKABLE != 0).count();
    assert_eq!(walk(wa), walk(wb));
    // TRX: border dropped, every triangle clockwise with the flag, same counts and the same
    // per-tile islands as the toolset's bake.
    let trx = walkmesh::bake(&grid, &WalkOptions { trx: true, ..Default::default() }).unwrap();
    let st = sample_trx.aswm().unwrap();
    assert_eq!((trx.vertices.len(), trx.edges.len(), trx.triangles.len()), (st.vertices.len(), st.edges.len(), st.triangles.len()));
    assert_eq!(walk(&trx), walk(st));
    assert!(trx.triangles.iter().all(|t| t.flags & FLAG_CLOCKWISE != 0 && t.normal[2] > 0.0));
    assert_eq!(trx.islands.len(), st.islands.len());
    let nodes = |a: &Aswm| a.tiles.iter().map(|t| t.node_count()).collect::<Vec<_>>();
    assert_eq!(nodes(&trx), nodes(st));
}

/// A SWG region exported through the CLI passes every strict check, in both forms, and
/// rewrites byte-exact; the TRRN vertices equal the walkmesh vertices (nwn2 §A.1).
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn swg_region_export_passes_strict_and_round_trips() {
    let Some(trn) = common::real_file("terrain/tatooine.trn") else { return };
    let d = tmp("swg");
    let out = d.join("mos.trn");
    let root = common::swg_root();
    let (ok, msg) = nwn2(&[
        "export",
        trn.to_str().unwrap(),
        "--data-root",
        root.to_str().unwrap(),
        "--region",
        "3400,-4900,3600,-4700",
        "--megatiles",
        "5x5",
        "--height-range",
        "-10,30",
        "--trx",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{msg}");
    for p in [out.clone(), out.with_extension("trx")] {
        let (ok, msg) = nwn2(&["check", "--strict", p.to_str().unwrap()]);
        assert!(ok, "{msg}");
        let bytes = std::fs::read(&p).unwrap();
        let f = codec::read(&bytes).unwrap();
        assert_eq!(codec::write(&f).unwrap(), bytes);
        assert_eq!(f.trwh().unwrap().width, 5);
        assert_eq!(f.trrns().count(), 25);
        let a = f.aswm().unwrap();
        assert!(!a.islands.is_empty() && a.tiles.iter().any(|t| t.node_count() > 0));
        // Heights lie in the requested range.
        assert!(a.vertices.iter().all(|v| (-10.0..=30.0).contains(&v[2])));
    }
    let f = trnbake_nwn2::load(&out).unwrap();
    let a = f.aswm().unwrap();
    // Blend maps from the SWG splat: every pixel's six weights sum to 255 (nwn2 §A.4), more
    // than one texture is used, and each triangle carries one footstep material bit.
    let mut used = [0u64; 6];
    for t in f.trrns() {
        assert!(trnbake_nwn2::check::parse_dds(&t.dds_a).is_ok());
        for (pa, pb) in t.dds_a[128..].chunks_exact(4).zip(t.dds_b[128..].chunks_exact(4)) {
            let w = [pa[2], pa[1], pa[0], pa[3], pb[2], pb[1]];
            assert_eq!(w.iter().map(|&x| u32::from(x)).sum::<u32>(), 255);
            for k in 0..6 {
                used[k] += u64::from(w[k]);
            }
        }
    }
    assert!(used.iter().filter(|&&u| u > 0).count() > 1, "{used:?}");
    assert!(a.triangles.iter().all(|t| (t.flags & MATERIAL_FLAGS).count_ones() == 1));
    let t0 = f.trrns().next().unwrap();
    for (k, v) in t0.vertices.iter().enumerate() {
        let (c, r) = (k % 25, k / 25);
        assert_eq!(a.vertices[r * 121 + c], v.position);
    }
    // Without --height-range the same heights are taken as they are, or refused with the range.
    let (ok, msg) = nwn2(&[
        "export",
        trn.to_str().unwrap(),
        "--data-root",
        root.to_str().unwrap(),
        "--region",
        "-7000,-7000,-6880,-6880",
        "-o",
        d.join("x.trn").to_str().unwrap(),
    ]);
    if !ok {
        assert!(msg.contains("outside the game range -100 … 100 m; pass --height-range"), "{msg}");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// A heightmap (Terragen .ter) exported with its region stretched onto the area; heights out
/// of the game range are an error naming the range, and `--height-range` rescales them.
#[test]
fn heightmap_export_range_error_and_rescale() {
    use trnbake_raster::{Grid, MemSource};
    let d = tmp("ter");
    let g = Grid { cols: 129, rows: 129, x0: 0.0, z0: 0.0, spacing: 2.0 };
    let h: Vec<f32> = (0..129 * 129).map(|i| ((i % 129) as f32 * 0.05).sin() * 150.0 + (i / 129) as f32).collect();
    let src = MemSource::south_first(g, h).unwrap();
    let ter = d.join("hm.ter");
    let enc = trnbake_raster::writers::ter::TerEncoding::for_range(-200.0, 300.0, 2.0).unwrap();
    trnbake_raster::writers::ter::write_ter_from(&ter, &src, &enc).unwrap();
    let out = d.join("hm.trn");
    let (ok, msg) = nwn2(&["export", ter.to_str().unwrap(), "--megatiles", "5x5", "-o", out.to_str().unwrap()]);
    assert!(!ok && msg.contains("outside the game range -100 … 100 m"), "{msg}");
    let (ok, msg) = nwn2(&[
        "export",
        ter.to_str().unwrap(),
        "--megatiles",
        "5x5",
        "--height-range",
        "-50,50",
        "--region",
        "-100,-100,100,100",
        "--textures",
        "TT_GD_Dirt_01,TT_GG_Grass_19",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{msg}");
    let (ok, msg) = nwn2(&["check", "--strict", out.to_str().unwrap()]);
    assert!(ok, "{msg}");
    let f = trnbake_nwn2::load(&out).unwrap();
    let (lo, hi) = f.aswm().unwrap().vertices.iter().fold((f32::MAX, f32::MIN), |(a, b), v| (a.min(v[2]), b.max(v[2])));
    assert!((lo + 50.0).abs() < 1e-3 && (hi - 50.0).abs() < 1e-3, "{lo} {hi}");
    assert_eq!(name_str(&f.trrns().next().unwrap().textures[1]), "TT_GG_Grass_19");
    // Without --materials texture 0 (dirt) gives the dirt footstep bit everywhere.
    let walkable_material = |f: &trnbake_nwn2::model::Nwn2File| -> Vec<u16> {
        let mut m: Vec<u16> = f.aswm().unwrap().triangles.iter().map(|t| t.flags & 0x3ff8).collect();
        m.sort_unstable();
        m.dedup();
        m
    };
    assert_eq!(walkable_material(&f), [0x08]);
    // terrainmaterials.2da gives texture 0 the metal footstep material and its colour.
    let table = d.join("terrainmaterials.2da");
    std::fs::write(
        &table,
        "2DA V2.0\n\n   Terrain         Material  R   G   B\n0  TT_GD_Dirt_01   Metal     10  20  30\n1  TT_GG_Grass_19  Grass     ****  0  0\n",
    )
    .unwrap();
    let (ok, msg) = nwn2(&[
        "export",
        ter.to_str().unwrap(),
        "--megatiles",
        "5x5",
        "--height-range",
        "-50,50",
        "--region",
        "-100,-100,100,100",
        "--textures",
        "TT_GD_Dirt_01,TT_GG_Grass_19",
        "--materials",
        table.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{msg}");
    let f = trnbake_nwn2::load(&out).unwrap();
    assert_eq!(walkable_material(&f), [0x100]);
    let colors = f.trrns().next().unwrap().colors;
    assert_eq!(colors[0], [10.0 / 255.0, 20.0 / 255.0, 30.0 / 255.0]);
    // Grass has no colour in the table: the built-in colour of the sample's grass stays.
    assert_eq!(colors[1], [64.0 / 255.0, 202.0 / 255.0, 54.0 / 255.0]);
    // A bad table is an error naming the file and the line.
    std::fs::write(&table, "2DA V2.0\n\n Terrain Material\n0 TT_GD_Dirt_01 Lava\n").unwrap();
    let (ok, msg) = nwn2(&[
        "export",
        ter.to_str().unwrap(),
        "--megatiles",
        "5x5",
        "--height-range",
        "-50,50",
        "--materials",
        table.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(!ok && msg.contains("terrainmaterials.2da: line 4") && msg.contains("Lava"), "{msg}");
    std::fs::remove_dir_all(&d).ok();
}

// ---- Pathing (nwn2 §A.7 step 7) ----

/// A grid of `tw × th` tiles with heights h(x, y), no border.
fn tiles_grid(tw: u32, th: u32, h: impl Fn(f64, f64) -> f64) -> VertexGrid {
    let (cols, rows) = (6 * tw + 1, 6 * th + 1);
    let mut heights = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            heights.push(h(f64::from(c) * walkmesh::VERTEX_SPACING, f64::from(r) * walkmesh::VERTEX_SPACING) as f32);
        }
    }
    VertexGrid { cols, rows, heights }
}

fn no_border() -> WalkOptions {
    WalkOptions { border: 0, ..Default::default() }
}

/// Follow the island path table from `a` to `b`; the islands visited, or `None`.
fn island_route(m: &Aswm, a: usize, b: usize) -> Option<Vec<usize>> {
    let n = m.islands.len();
    let mut route = vec![a];
    let mut x = a;
    while x != b {
        let next = m.island_paths[x * n + b].next;
        if next == NO_ISLAND || route.len() > n {
            return None;
        }
        assert!(m.islands[x].adjacent.contains(&u32::from(next)), "each hop is an adjacent island");
        x = usize::from(next);
        route.push(x);
    }
    Some(route)
}

fn island_at(m: &Aswm, x: f32, y: f32) -> usize {
    let t = m.triangles.iter().find(|t| (t.centroid[0] - x).abs() < 1.0 && (t.centroid[1] - y).abs() < 1.0 && t.island != NO_ISLAND).unwrap();
    usize::from(t.island)
}

#[test]
fn ramp_joins_two_halves_ridge_separates_them() {
    // Left half (x < 10) at 0 m, right half (x > 30) at 10 m, 4 x 2 tiles of 10 m.
    let ramp = tiles_grid(4, 2, |x, _| ((x - 10.0) / 20.0).clamp(0.0, 1.0) * 10.0); // 26.6°
    let ridge = tiles_grid(4, 2, |x, _| if x < 20.0 { 0.0 } else { 10.0 }); // one 80° step
    for (grid, joined) in [(ramp, true), (ridge, false)] {
        let m = walkmesh::bake(&grid, &no_border()).unwrap();
        let f = Nwn2File {
            version_major: 2,
            version_minor: 3,
            packets: vec![Packet::Aswm(Box::new(AswmPacket { compressed: true, original: None, aswm: m.clone() }))],
        };
        assert_eq!(check(&f, true), vec![]);
        let (a, b) = (island_at(&m, 3.0, 3.0), island_at(&m, 37.0, 17.0));
        let route = island_route(&m, a, b);
        assert_eq!(route.is_some(), joined, "joined = {joined}: {route:?}");
        if let Some(r) = route {
            // The route crosses the four tile columns at least once each.
            assert!(r.len() >= 4);
            assert_eq!(
                m.island_paths[a * m.islands.len() + b].weight,
                m.islands[a].distances[m.islands[a].adjacent.iter().position(|&x| x as usize == r[1]).unwrap()]
            );
        }
    }
}

/// Independent adjacency: triangles sharing two vertices.
fn brute_neighbours(m: &Aswm, t: usize) -> Vec<usize> {
    let vs = m.triangles[t].vertices;
    (0..m.triangles.len()).filter(|&o| o != t && m.triangles[o].vertices.iter().filter(|v| vs.contains(v)).count() == 2).collect()
}

#[test]
fn path_tables_follow_shortest_paths_of_each_tile() {
    // Bumps steep enough to make holes and several walkable parts per tile.
    let grid = tiles_grid(3, 2, |x, y| 2.2 * ((x * 0.9).sin() * (y * 0.7).cos()) + 0.8 * (x * 2.1 + y).sin());
    let m = walkmesh::bake(&grid, &WalkOptions { max_slope_deg: 40.0, ..no_border() }).unwrap();
    let mut hops = 0;
    let mut unreachable = 0;
    for tile in &m.tiles {
        let off = tile.triangles_offset as usize;
        let n = tile.node_count();
        let in_tile = |t: usize| (off..off + tile.triangle_count as usize).contains(&t);
        let walkable = |t: usize| m.triangles[t].flags & FLAG_WALKABLE != 0;
        for from in 0..n {
            // Brute-force BFS over the tile's walkable triangles.
            let s = off + tile.node_to_local[from] as usize;
            let mut dist = std::collections::HashMap::from([(s, 0usize)]);
            let mut q = std::collections::VecDeque::from([s]);
            while let Some(x) = q.pop_front() {
                for y in brute_neighbours(&m, x) {
                    if in_tile(y) && walkable(y) && !dist.contains_key(&y) {
                        dist.insert(y, dist[&x] + 1);
                        q.push_back(y);
                    }
                }
            }
            for to in 0..n {
                let t = off + tile.node_to_local[to] as usize;
                let entry = tile.nodes[from * n + to];
                if from == to {
                    assert_eq!(entry, 0xFF);
                    continue;
                }
                match dist.get(&t) {
                    None => {
                        assert_eq!(entry, 0xFF, "unreachable pair must be 0xFF");
                        unreachable += 1;
                    }
                    Some(&d) => {
                        // Follow the table: every hop a real walkable neighbour in the tile,
                        // and exactly the BFS distance long.
                        let (mut x, mut steps) = (from, 0);
                        while x != to {
                            let e = tile.nodes[x * n + to];
                            assert_ne!(e, 0xFF);
                            let y = usize::from(e & 0x7F);
                            let (tx, ty) = (off + tile.node_to_local[x] as usize, off + tile.node_to_local[y] as usize);
                            assert!(brute_neighbours(&m, tx).contains(&ty) && in_tile(ty) && walkable(ty));
                            x = y;
                            steps += 1;
                            assert!(steps <= d);
                        }
                        assert_eq!(steps, d);
                        hops += steps;
                    }
                }
            }
        }
    }
    assert!(hops > 500 && unreachable > 0, "the terrain exercises both cases: {hops} hops, {unreachable} unreachable pairs");
    // Islands are exactly the connected walkable parts of each tile.
    for t in m.triangles.iter().filter(|t| t.flags & FLAG_WALKABLE == 0) {
        assert_eq!(t.island, NO_ISLAND);
    }
}

/// What the fuzz target asserts, on a few thousand deterministic mutations of a small
/// export: no panic in the reader, the checks or the summary; an accepted input rewrites to
/// bytes that read back and rewrite equal.
#[test]
fn mutated_bytes_never_panic_and_accepted_ones_rewrite_stably() {
    let grid = tiles_grid(2, 2, |x, y| (x * 0.3).sin() * 3.0 + y * 0.1);
    let m = walkmesh::bake(&grid, &no_border()).unwrap();
    let f = Nwn2File {
        version_major: 2,
        version_minor: 3,
        packets: vec![Packet::Trwh(Trwh { width: 0, height: 0, id: 1 }), Packet::Aswm(Box::new(AswmPacket { compressed: false, original: None, aswm: m }))],
    };
    let base = codec::write(&f).unwrap();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut accepted = 0;
    for _ in 0..3000 {
        let mut b = base.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() % b.len() as u64) as usize;
            b[i] = match next() % 3 {
                0 => next() as u8,
                1 => 0xFF,
                _ => b[i] ^ (1 << (next() % 8)),
            };
        }
        if next() % 5 == 0 {
            b.truncate((next() % b.len() as u64) as usize);
        }
        let Ok(f) = codec::read(&b) else { continue };
        accepted += 1;
        let _ = check(&f, true);
        let _ = trnbake_nwn2::info::info(&f).text();
        let out = codec::write(&f).unwrap();
        let back = codec::read(&out).unwrap();
        assert_eq!(codec::write(&back).unwrap(), out);
    }
    assert!(accepted > 100, "{accepted} accepted");
}

/// SWG water becomes WATR packets (nwn2 §A.5) where the ground dips below it: a 25 × 25 grid
/// at the (rescaled) water level, triangles flagged water where the ground is below.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn swg_water_becomes_watr() {
    let Some(trn) = common::real_file("terrain/naboo.trn") else { return };
    let d = tmp("water");
    let out = d.join("lake.trn");
    let root = common::swg_root();
    let (ok, msg) = nwn2(&[
        "export",
        trn.to_str().unwrap(),
        "--data-root",
        root.to_str().unwrap(),
        "--region",
        "0,0,240,240",
        "--height-range",
        "-20,40",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{msg}");
    let (ok, msg) = nwn2(&["check", "--strict", out.to_str().unwrap()]);
    assert!(ok, "{msg}");
    let f = trnbake_nwn2::load(&out).unwrap();
    let waters: Vec<&Watr> = f.watrs().collect();
    assert!(!waters.is_empty());
    let grid = sample_grid(&f);
    for w in waters {
        let [mx, my] = w.megatile;
        assert_eq!(w.uv_offset, [5.0 * mx as f32, 5.0 * my as f32]);
        assert_eq!((w.vertices.len(), w.triangles.len()), (625, 1152));
        let level = w.vertices[0].position[2];
        assert!(w.vertices.iter().all(|v| v.position[2] == level));
        assert!((-20.0..=40.0).contains(&level));
        // A triangle is water exactly when a corner's ground is below the level.
        for (t, &flag) in w.triangles.iter().zip(&w.triangle_flags) {
            let wet = t.iter().any(|&v| {
                let (c, r) = (mx * 24 + u32::from(v) % 25, my * 24 + u32::from(v) / 25);
                grid.heights[(r * grid.cols + c) as usize] < level
            });
            assert_eq!(flag, u32::from(!wet));
        }
        assert!(w.triangle_flags.contains(&0));
    }
    std::fs::remove_dir_all(&d).ok();
}
