//! NWN2 `.trn`/`.trx`: real-file round trips, checks, export, pathing and CLI (spec nwn2.md).

mod common;

use std::path::PathBuf;

use trnbake::nwn2::{codec, model::*};

/// A real NWN2 file under `../shared/data/nwn2`, or `None` with a skip (CI: missing fails).
fn nwn2_file(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/nwn2").join(name);
    if p.exists() {
        return Some(p);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("test data {} is missing (required in CI)", p.display());
    }
    eprintln!("skipping: test data {} is missing", p.display());
    None
}

const SAMPLES: [&str; 2] = ["TestImportExportTRN.trn", "TestImportExportTRN.trx"];

#[test]
fn real_files_rewrite_byte_exact() {
    for name in SAMPLES {
        let Some(p) = nwn2_file(name) else { return };
        let bytes = std::fs::read(&p).unwrap();
        let f = codec::read(&bytes).unwrap();
        assert_eq!(codec::write(&f).unwrap(), bytes, "{name}");
    }
}

#[test]
fn real_aswm_reencodes_byte_exact_when_decompressed() {
    for name in SAMPLES {
        let Some(p) = nwn2_file(name) else { return };
        let mut f = trnbake::nwn2::load(&p).unwrap();
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

use std::process::Command;
use trnbake::nwn2::check::check;
use trnbake::nwn2::walkmesh::{self, VertexGrid, WalkOptions};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_trnbake"))
}

fn tmp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trnbake-nwn2-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `trnbake nwn2 ARGS`; returns (success, stdout + stderr).
fn nwn2(args: &[&str]) -> (bool, String) {
    let o = bin().arg("nwn2").args(args).output().unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr))
}

#[test]
fn real_files_pass_check_and_trx_passes_strict() {
    for name in SAMPLES {
        let Some(p) = nwn2_file(name) else { return };
        let f = trnbake::nwn2::load(&p).unwrap();
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
fn decompile_compile_round_trips_byte_exact() {
    let d = tmp_dir("json");
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
    assert_eq!(trnbake::nwn2::load(&out_p).unwrap().aswm().unwrap().border_size, 9);
    std::fs::remove_dir_all(&d).ok();
}

/// The TRX sample with `mutate` applied, written to a temp file and checked by the CLI
/// (`--strict`): it must fail, naming `expect`.
fn fails_with(tag: &str, mutate: impl Fn(&mut Nwn2File), expect: &str) {
    let Some(p) = nwn2_file(SAMPLES[1]) else { return };
    let mut f = trnbake::nwn2::load(&p).unwrap();
    mutate(&mut f);
    let d = tmp_dir(tag);
    let q = d.join("bad.trx");
    trnbake::nwn2::save(&q, &f).unwrap();
    let (ok, out) = nwn2(&["check", "--strict", q.to_str().unwrap()]);
    assert!(!ok, "{tag}: the check passed\n{out}");
    assert!(out.contains(expect), "{tag}: expected `{expect}` in\n{out}");
    std::fs::remove_dir_all(&d).ok();
}

/// Same, checked in memory only (for rules the writer cannot express in bytes).
fn fails_in_memory(mutate: impl Fn(&mut Nwn2File), strict: bool, expect: &str) {
    let Some(p) = nwn2_file(SAMPLES[1]) else { return };
    let mut f = trnbake::nwn2::load(&p).unwrap();
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
rule!(rule_trrn_triangle_index, |f: &mut Nwn2File| trrn(f, 0).triangles[5][1] = 625, "packet #1 TRRN: triangle 5: vertex index 625 is not below the vertex count 625");
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
                a.triangles[t].island == k as u16 && !a.triangles[t].linked_triangles.iter().any(|&n| a.triangles.get(n as usize).is_some_and(|o| u32::from(o.island) == adj))
            })
            .unwrap();
        a.islands[k].exits[0] = member as u32;
    },
    "has no neighbour in adjacent island"
);
rule!(rule_island_path_next, |f: &mut Nwn2File| aswm(f).island_paths[7].next = 500, "island path table: entry 7: next 500");

#[test]
fn rule_watr_flag_count_in_memory() {
    fails_in_memory(|f| drop(watr(f).triangle_flags.pop()), false, "flags for 1152 triangles (one per triangle)");
}

#[test]
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
fn rule_island_path_table_length_in_memory() {
    fails_in_memory(|f| drop(aswm(f).island_paths.pop()), false, "island path table: 11235 entries, must be island_count² = 11236");
}

/// Parse-time rules of nwn2 §A.8: mutated bytes are refused with packet, field and offset.
#[test]
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
