//! SCS map items: codec round trips (real `modeltest` and built items), the §B.9 checks with
//! one mutated item per check, the Bezier-mosaic export (exactness, a real SWG region, the
//! watertight refinement) judged by an evaluator written here (de Casteljau on the stored
//! control points, not the fitter's code), and export → rasterize round trips.

mod common;

use common::{tmp, trnbake};

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use trnbake_raster::Grid;
use trnbake_scs::codec::*;
use trnbake_scs::export::{export_map, ExportOptions, Manifest};
use trnbake_scs::inspect;
use trnbake_scs::map::Map;
use trnbake_scs::token::Token;

fn scs_data(rel: &str) -> Option<PathBuf> {
    common::shared_data_file(&format!("scs/{rel}"))
}

/// `trnbake ARGS`, run to its end.
fn run(args: &[&str]) -> std::process::Output {
    trnbake().args(args).output().unwrap()
}

// ---------------------------------------------------------------------------------------
// 1. Codec
// ---------------------------------------------------------------------------------------

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn modeltest_round_trips_byte_exact() {
    let Some(mbd) = scs_data("modeltest.mbd") else { return };
    let map = Map::load(&mbd).unwrap();
    assert_eq!(map.mbd.header.version, 907);
    assert_eq!(map.mbd.normal_scale, 19.0);
    let s = &map.sectors[&(0, 0)];
    let aux = s.aux.as_ref().unwrap();
    assert_eq!(aux.items.len(), 1);
    assert_eq!(aux.nodes.len(), 1);
    assert_eq!(aux.items[0].node_refs(), vec![aux.nodes[0].uid]);
    assert_eq!(s.base.as_ref().unwrap().items.len(), 0);
    assert_eq!(s.desc.unwrap().climate.to_string(), "default");
    let files = map.files();
    assert_eq!(files.len(), 6, "mbd + aux, base, data, desc, layer");
    let root = mbd.parent().unwrap();
    for (rel, bytes) in files {
        let disk = std::fs::read(root.join(&rel)).unwrap();
        assert_eq!(bytes, disk, "{} does not round-trip", rel.display());
    }
    // Saved elsewhere, it loads back equal.
    let out = tmp("modeltest");
    map.save(&out).unwrap();
    assert_eq!(Map::load(&out.join("modeltest.mbd")).unwrap(), map);
}

fn side(size_m: u16, rows_for: bool) -> TerrainSide {
    let _ = rows_for;
    TerrainSide {
        size: size_m * 10,
        profile: Token::new("profile12").unwrap(),
        coefficient: 0.0,
        prev_profile: Token::new("profile0").unwrap(),
        prev_coefficient: 1.0,
        vegetation: [
            TerrainVegetation { vegetation: Token::new("grass").unwrap(), density: 15, high_poly_distance: 50, scale_type: 3, start: 0, end: 200 },
            TerrainVegetation::default(),
            TerrainVegetation { vegetation: Token::new("bush_a").unwrap(), density: 7, high_poly_distance: 20, scale_type: 8, start: 10, end: 300 },
        ],
        no_detail_from: 0,
        no_detail_to: 0,
    }
}

/// A Terrain item with both sides populated (different sizes, materials, offsets, normals).
fn terrain_item(version: u32, uid: u64, n0: u64, n1: u64) -> TerrainItem {
    let mut qr = QuadInfo::uniform(Token::new("34").unwrap(), inspect::terrain_rows(10.0) as u16, 5);
    qr.materials.push(QuadMaterial { material: Token(0xB823), rotation: if version >= 884 { 900 } else { 0 } });
    qr.colors.push([10, 20, 30, 40]);
    qr.quads[3] = 0x1111_2001;
    qr.offsets.push(VertexData { x: 1, y: 2, data: [0.5, -1.25, 3.0] });
    qr.normals.push(VertexData { x: 0, y: 0, data: [0.0, 1.0, 0.0] });
    let mut ql = QuadInfo::uniform(Token::new("grass_ger").unwrap(), inspect::terrain_rows(60.0) as u16, 5);
    ql.offsets.push(VertexData { x: 4, y: 5, data: [1.0, 2.0, -3.5] });
    TerrainItem {
        kdop: Kdop { uid, min: [1.0; 5], max: [2.0; 5], flags: (2 | (2 << 24)) | (1 << 21) | (1 << 23), view_distance: 40 },
        node0: n0,
        node1: n1,
        node0_offset: [0.0, 0.5, 0.0],
        node1_offset: [0.0, -0.5, 0.0],
        length: 20.0,
        previous_length: (version >= 903).then_some(12.5),
        rnd_seed: 7,
        railings: [Railing { model: Token::new("rail1").unwrap(), offset: -150 }, Railing::default(), Railing::default()],
        right: side(10, true),
        left: side(60, true),
        spheres: vec![VegetationSphere { position: [1.0, 2.0, 3.0], radius: 5.0, kind: 1 }],
        quad_right: qr,
        quad_left: ql,
        edges: [Token::new("edge_a").unwrap(), Token(0), Token::new("edge_b").unwrap(), Token::new("look").unwrap()],
        uv_rotation: (875..=883).contains(&version).then_some([0.25, -0.5]),
    }
}

fn node(uid: u64, x: f64, z: f64, fwd: u64, bwd: u64) -> Node {
    Node { uid, position: [(x * 256.0) as i32, 256, (z * 256.0) as i32], rotation: [1.0, 0.0, 0.0, 0.0], backward_item: bwd, forward_item: fwd, flags: 0 }
}

fn sector_with_terrain(version: u32) -> SectorFile {
    let mut f = SectorFile::empty();
    f.header.version = version;
    f.items.push(Item::Terrain(terrain_item(version, 0x100, 0x200, 0x201)));
    // Step 4 m (flags bits 4–5 = 0), length 20 → 5 columns.
    f.nodes.push(node(0x200, 0.0, 0.0, 0x100, 0));
    f.nodes.push(node(0x201, 0.0, -20.0, 0, 0x100));
    f.visibility.push(0xdead_beef);
    f
}

#[test]
fn terrain_items_with_both_sides_round_trip_at_every_layout() {
    // 907/903 (previous_length), 884–902, 875–883 (bare material tokens, UV rotations), ≤ 874.
    for version in [907, 903, 902, 884, 883, 875, 874] {
        let f = sector_with_terrain(version);
        let bytes = f.to_bytes();
        let back = SectorFile::read(&bytes, "t.aux").unwrap_or_else(|e| panic!("{version}: {e}"));
        assert_eq!(back, f, "version {version}");
        assert_eq!(back.to_bytes(), bytes);
    }
    // The layouts really differ: 903 adds 4 bytes (previous_length), 884 adds 2 per material.
    let len = |v| sector_with_terrain(v).to_bytes().len();
    assert_eq!(len(903), len(902) + 4);
    assert_eq!(len(884), len(883) - 8 + 2 * 3, "883 has 8 bytes of UV rotation, 884 two u16 per material (3 materials)");
    assert_eq!(len(875), len(874) + 8);
}

fn arb_quad() -> impl Strategy<Value = QuadInfo> {
    (
        prop::collection::vec((any::<u64>(), any::<u16>()), 0..4),
        prop::collection::vec(any::<[u8; 4]>(), 0..3),
        0u16..6,
        0u16..6,
        prop::collection::vec((any::<u16>(), any::<u16>(), prop::array::uniform3(-1e3f32..1e3)), 0..3),
    )
        .prop_map(|(m, colors, sx, sy, offs)| QuadInfo {
            materials: m.into_iter().map(|(t, r)| QuadMaterial { material: Token(t), rotation: r }).collect(),
            colors,
            size_x: sx,
            size_y: sy,
            quads: (0..sx as u32 * sy as u32).map(|i| i.wrapping_mul(2654435761)).collect(),
            offsets: offs.iter().map(|&(x, y, data)| VertexData { x, y, data }).collect(),
            normals: offs.iter().rev().map(|&(x, y, data)| VertexData { x: y, y: x, data }).collect(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn built_items_read_back_equal(
        seed in any::<u32>(), flags in any::<u32>(), rs in 0u16..6500, ls in 0u16..6500,
        qr in arb_quad(), ql in arb_quad(), qb in arb_quad(),
        ctrl in prop::array::uniform16(prop::array::uniform3(-1e4f32..1e4)),
        length in 0.1f32..1000.0, tess in (0u16..251, 0u16..251),
    ) {
        let mut t = terrain_item(907, 1, 2, 3);
        t.rnd_seed = seed;
        t.kdop.flags = flags;
        t.right.size = rs;
        t.left.size = ls;
        t.length = length;
        t.quad_right = qr;
        t.quad_left = ql;
        let b = BezierPatchItem {
            kdop: Kdop { uid: 9, min: [0.0; 5], max: [1.0; 5], flags: 8, view_distance: 40 },
            control: ctrl, x_tess: tess.0, z_tess: tess.1, node: 2, rnd_seed: seed,
            vegetation: [PatchVegetation { vegetation: Token(5), density: 3, scale_type: 1 }, PatchVegetation::default(), PatchVegetation::default()],
            spheres: vec![VegetationSphere { position: [1.0, 2.0, 3.0], radius: 4.0, kind: 2 }],
            quad: qb,
        };
        let mut f = SectorFile::empty();
        f.items = vec![Item::Terrain(t), Item::BezierPatch(b)];
        f.nodes = vec![node(2, 1.0, 2.0, 1, 0), node(3, 5.0, 2.0, 0, 1)];
        let bytes = f.to_bytes();
        let back = SectorFile::read(&bytes, "p.aux").unwrap();
        prop_assert_eq!(&back, &f);
        prop_assert_eq!(back.to_bytes(), bytes);
    }
}

// ---------------------------------------------------------------------------------------
// 2. info / check, one mutated item per check
// ---------------------------------------------------------------------------------------

/// A valid one-sector map with a Terrain and a Bezier patch in its .aux, and the sector's
/// other files as `scs export` writes them; returns the .aux path.
fn write_sector(dir: &Path, f: &SectorFile) -> PathBuf {
    let p = dir.join("sec+0000+0000.aux");
    std::fs::write(&p, f.to_bytes()).unwrap();
    std::fs::write(dir.join("sec+0000+0000.base"), SectorFile::empty().to_bytes()).unwrap();
    std::fs::write(dir.join("sec+0000+0000.data"), RawSectorFile::default_empty().to_bytes()).unwrap();
    std::fs::write(dir.join("sec+0000+0000.layer"), RawSectorFile::default_empty().to_bytes()).unwrap();
    std::fs::write(dir.join("sec+0000+0000.desc"), Desc::for_sector(0, 0).to_bytes()).unwrap();
    p
}

fn valid_sector() -> SectorFile {
    let mut f = sector_with_terrain(907);
    let b = trnbake_scs::export::build_patch(&[[1.0; 4]; 4], 0.0, 0.0, 32.0, 15, Token::new("34").unwrap(), 0x300, 0x301);
    f.items.push(Item::BezierPatch(b.0));
    f.nodes.push(b.1);
    f
}

fn problems_of(dir: &Path, f: &SectorFile) -> (Vec<inspect::Problem>, Vec<u8>) {
    let p = write_sector(dir, f);
    let loaded = inspect::load(&p).unwrap();
    (inspect::check(&loaded), std::fs::read(&p).unwrap())
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

#[test]
fn check_passes_a_valid_sector_and_info_counts_it() {
    let d = tmp("check-ok");
    let f = valid_sector();
    let (p, _) = problems_of(&d, &f);
    assert!(p.is_empty(), "{p:?}");
    let i = inspect::info(&inspect::load(&d.join("sec+0000+0000.aux")).unwrap());
    assert_eq!(i.items.get("terrain"), Some(&1));
    assert_eq!(i.items.get("bezier_patch"), Some(&1));
    assert_eq!(i.nodes, 3);
    let out = run(&["scs", "check", d.join("sec+0000+0000.aux").to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Issue 37 item 16: each count with its noun in the number it takes (the line said
    // "(1 files, …)" for one file).
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("ok (5 files, 2 items, every check passed)"), "{said}");
    let out = run(&["scs", "info", "--json", d.join("sec+0000+0000.aux").to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["items"]["terrain"], 1);
    assert_eq!(v["nodes"], 3);
}

#[test]
fn check_quad_count_must_equal_rows_times_cols() {
    let d = tmp("check-quads");
    let mut f = valid_sector();
    let Item::BezierPatch(b) = &mut f.items[1] else { unreachable!() };
    b.quad.quads.pop();
    let (p, bytes) = problems_of(&d, &f);
    let q = p.iter().find(|p| p.field == "quad.quad_count").unwrap_or_else(|| panic!("{p:?}"));
    assert!(q.item.as_deref().unwrap().contains("bezier_patch 0x0000000000000300"));
    // The offset points at the stored quad_count (16·16 − 1).
    assert_eq!(u32_at(&bytes, q.offset), 255);
    let out = run(&["scs", "check", d.join("sec+0000+0000.aux").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("quad.quad_count"));
}

#[test]
fn check_terrain_rows_follow_the_width_sequence() {
    assert_eq!(inspect::terrain_rows(10.0), 5, "scs §B.6 example: 1+1+1+2+6 ≥ 10");
    assert_eq!(inspect::terrain_rows(11.0), 5);
    assert_eq!(inspect::terrain_rows(12.0), 6);
    assert_eq!(inspect::terrain_rows(47.0), 9, "1+1+1+2+6+6+10+10+10 = 47");
    assert_eq!(inspect::terrain_rows(357.0), 15, "the sum of the 15 listed widths");
    assert_eq!(inspect::terrain_rows(500.0), 17, "then 100 m rows");
    assert_eq!(inspect::terrain_rows(0.0), 0);
    let d = tmp("check-rows");
    let mut f = valid_sector();
    let Item::Terrain(t) = &mut f.items[0] else { unreachable!() };
    t.right.size = 120; // 12 m needs 6 rows; the quad grid still has 5
    let (p, bytes) = problems_of(&d, &f);
    let q = p.iter().find(|p| p.field == "quad_right.size_x").unwrap_or_else(|| panic!("{p:?}"));
    assert_eq!(u16::from_le_bytes(bytes[q.offset..q.offset + 2].try_into().unwrap()), 5);
    assert_eq!(p.len(), 1, "{p:?}");
}

#[test]
fn check_terrain_cols_are_ceil_length_over_step() {
    let d = tmp("check-cols");
    let mut f = valid_sector();
    let Item::Terrain(t) = &mut f.items[0] else { unreachable!() };
    t.length = 20.5; // ceil(20.5 / 4) = 6, grids have 5
    let (p, bytes) = problems_of(&d, &f);
    let fields: Vec<&str> = p.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(fields, ["quad_right.size_y", "quad_left.size_y"], "{p:?}");
    for q in &p {
        assert_eq!(u16::from_le_bytes(bytes[q.offset..q.offset + 2].try_into().unwrap()), 5);
    }
}

#[test]
fn check_tokens_are_valid() {
    let d = tmp("check-token");
    let mut f = valid_sector();
    let Item::Terrain(t) = &mut f.items[0] else { unreachable!() };
    t.left.profile = Token(u64::MAX);
    let (p, _) = problems_of(&d, &f);
    assert_eq!(p.len(), 1, "{p:?}");
    assert_eq!(p[0].field, "side.profile");
    assert!(p[0].message.contains("invalid token"));
}

#[test]
fn check_node_references_resolve() {
    let d = tmp("check-nodes");
    let mut f = valid_sector();
    f.nodes.retain(|n| n.uid != 0x301);
    let (p, bytes) = problems_of(&d, &f);
    let q = p.iter().find(|p| p.field == "bezier.node_uid").unwrap_or_else(|| panic!("{p:?}"));
    assert_eq!(u64::from_le_bytes(bytes[q.offset..q.offset + 8].try_into().unwrap()), 0x301);
    // A node whose forward item does not exist.
    let mut f = valid_sector();
    f.nodes[0].forward_item = 0x999;
    let (p, bytes) = problems_of(&d, &f);
    let q = p.iter().find(|p| p.field == "node.forward_item").unwrap_or_else(|| panic!("{p:?}"));
    assert_eq!(u64::from_le_bytes(bytes[q.offset..q.offset + 8].try_into().unwrap()), 0x999);
}

#[test]
fn check_each_file_is_consumed_exactly() {
    let d = tmp("check-trailing");
    let f = valid_sector();
    let p = write_sector(&d, &f);
    let mut b = std::fs::read(&p).unwrap();
    let n = b.len();
    b.extend_from_slice(&[0, 0, 0]);
    std::fs::write(&p, &b).unwrap();
    let probs = inspect::check(&inspect::load(&p).unwrap());
    assert_eq!(probs.len(), 1, "{probs:?}");
    assert_eq!((probs[0].field.as_str(), probs[0].offset), ("end of file", n));
    // Truncated inside an item: names the field and offset.
    std::fs::write(&p, &b[..200]).unwrap();
    let probs = inspect::check(&inspect::load(&p).unwrap());
    assert_eq!(probs.len(), 1);
    assert!(probs[0].offset <= 200 && !probs[0].field.is_empty(), "{probs:?}");
    let out = run(&["scs", "check", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
}

// ---------------------------------------------------------------------------------------
// 3–5. Export, judged independently
// ---------------------------------------------------------------------------------------

/// The test's own patch evaluator: de Casteljau on the 16 stored points (f64), world
/// coordinates = node position + control point. Control points on disk are rows of constant
/// Z with X fastest (the documented CONTROL_POINT_ORDER; asserted below).
#[derive(Clone, Debug)]
struct P {
    /// [row z][col x] world (X, Y, Z).
    pts: [[[f64; 3]; 4]; 4],
}

fn lerp3(a: [f64; 3], b: [f64; 3], t: f64) -> [f64; 3] {
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]
}

fn casteljau(mut p: [[f64; 3]; 4], t: f64) -> [f64; 3] {
    for k in (1..4).rev() {
        for i in 0..k {
            p[i] = lerp3(p[i], p[i + 1], t);
        }
    }
    p[0]
}

impl P {
    fn at(&self, u: f64, v: f64) -> [f64; 3] {
        let cols = [0, 1, 2, 3].map(|r| casteljau(self.pts[r], u));
        casteljau(cols, v)
    }
    /// The ground rectangle (west X, north Z, size): exports are axis-aligned squares.
    fn rect(&self) -> (f64, f64, f64) {
        (self.pts[0][0][0], self.pts[0][0][2], self.pts[0][3][0] - self.pts[0][0][0])
    }
    fn height_at(&self, x: f64, z: f64) -> f64 {
        let (w, n, s) = self.rect();
        self.at((x - w) / s, (z - n) / s)[1]
    }
}

fn read_patches(mbd: &Path) -> Vec<P> {
    let map = Map::load(mbd).unwrap();
    let mut nodes = std::collections::HashMap::new();
    let mut items = Vec::new();
    for s in map.sectors.values() {
        let aux = s.aux.as_ref().unwrap();
        for n in &aux.nodes {
            nodes.insert(n.uid, *n);
        }
        for it in &aux.items {
            let Item::BezierPatch(b) = it else { panic!("export writes only Bezier patches") };
            items.push(b.clone());
        }
    }
    items
        .iter()
        .map(|b| {
            let n = nodes[&b.node];
            let o = n.position.map(|v| v as f64 / 256.0);
            let mut pts = [[[0.0; 3]; 4]; 4];
            for k in 0..16 {
                let c = b.control[k];
                pts[k / 4][k % 4] = [o[0] + c[0] as f64, o[1] + c[1] as f64, o[2] + c[2] as f64];
            }
            let p = P { pts };
            // Disk order: X fastest, then Z (south).
            assert!(p.pts[0][1][0] > p.pts[0][0][0] && p.pts[1][0][2] > p.pts[0][0][2], "control point order");
            p
        })
        .collect()
}

/// RMS and max over the posts of the manifest's grid, `h(col, row)` with row 0 = south:
/// post (c, r) is at SCS X = origin X + c·spacing, Z = origin Z + (rows − 1 − r)·spacing
/// (the north-west post at the origin, Z southwards); each post from one patch containing it.
fn independent_error(patches: &[P], m: &Manifest, h: &dyn Fn(usize, usize) -> f64) -> (f64, f64, usize) {
    let g = m.georef.grid;
    let (ox, oz) = (m.georef.origin[0], m.georef.origin[1]);
    // Index patches by their west/north corner on a lattice of the smallest size.
    let smallest = patches.iter().map(|p| p.rect().2).fold(f64::INFINITY, f64::min);
    let mut idx = std::collections::HashMap::new();
    for (i, p) in patches.iter().enumerate() {
        let (w, n, s) = p.rect();
        let k = (s / smallest).round() as i64;
        let (a, b) = (((w - ox) / smallest).round() as i64, ((n - oz) / smallest).round() as i64);
        for da in 0..k {
            for db in 0..k {
                idx.insert((a + da, b + db), i);
            }
        }
    }
    let (mut ss, mut mx, mut n) = (0.0, 0.0f64, 0usize);
    for r in 0..g.rows as usize {
        for c in 0..g.cols as usize {
            let x = ox + c as f64 * g.spacing;
            let z = oz + (g.rows as usize - 1 - r) as f64 * g.spacing;
            let a = (((x - ox) / smallest).floor() as i64).min((((g.cols - 1) as f64 * g.spacing) / smallest).round() as i64 - 1);
            let b = (((z - oz) / smallest).floor() as i64).min((((g.rows - 1) as f64 * g.spacing) / smallest).round() as i64 - 1);
            let p = &patches[idx[&(a, b)]];
            let e = p.height_at(x, z) - h(c, r);
            ss += e * e;
            mx = mx.max(e.abs());
            n += 1;
        }
    }
    ((ss / n as f64).sqrt(), mx, n)
}

fn opts(name: &str, patch: f64, max_error: Option<f64>) -> ExportOptions {
    ExportOptions { name: name.into(), patch_m: patch, origin: (100.0, 200.0), material: Token::new("34").unwrap(), max_error, min_patch_m: None }
}

#[test]
fn bicubic_bezier_heightmap_fits_within_1e4() {
    // One bicubic Bezier surface over 128 m, sampled at 2 m, fitted with 32 m patches: the
    // C1 mosaic space contains it, so the fit must reproduce it.
    let ctrl = [[3.0, -7.0, 12.0, 4.0], [20.0, -15.0, 8.0, 30.0], [-5.0, 25.0, -12.0, 6.0], [10.0, 0.0, 40.0, -20.0]];
    let bern = |t: f64| [(1.0 - t).powi(3), 3.0 * t * (1.0 - t).powi(2), 3.0 * t * t * (1.0 - t), t.powi(3)];
    let n = 65;
    let mut h = vec![0f32; n * n];
    let mut exact = vec![0f64; n * n];
    for r in 0..n {
        for c in 0..n {
            let (bu, bv) = (bern(c as f64 / 64.0), bern(r as f64 / 64.0));
            let mut s = 0.0;
            for i in 0..4 {
                for j in 0..4 {
                    s += bv[i] * bu[j] * ctrl[i][j];
                }
            }
            // Heights around 300 m, as f32 would hold them.
            exact[r * n + c] = 300.0 + s;
            h[r * n + c] = (300.0 + s) as f32;
        }
    }
    let d = tmp("bicubic");
    let grid = Grid { cols: n as u32, rows: n as u32, x0: -64.0, z0: -64.0, spacing: 2.0 };
    let e = export_map(&h, grid, None, "bicubic", &opts("bicubic", 32.0, None), &d).unwrap();
    assert_eq!(e.manifest.patches, 16);
    assert!(e.manifest.max <= 1e-4, "fitter's own max {}", e.manifest.max);
    let patches = read_patches(&e.mbd);
    let (rms, max, posts) = independent_error(&patches, &e.manifest, &|c, r| h[r * n + c] as f64);
    assert_eq!(posts, n * n);
    assert!(max <= 1e-4 && rms <= 1e-4, "independent: rms {rms}, max {max}");
    let (_, max_exact, _) = independent_error(&patches, &e.manifest, &|c, r| exact[r * n + c]);
    assert!(max_exact <= 1e-4, "vs the exact surface: {max_exact}");
    let out = run(&["scs", "check", e.mbd.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn real_swg_region_2m_32m_patches_reproduced_independently() {
    let Some(trn) = common::real_file("terrain/tatooine.trn") else { return };
    let d = tmp("swg");
    let root = common::swg_root();
    let out = run(&[
        "scs",
        "export",
        trn.to_str().unwrap(),
        "--region",
        "3000,-5000,3512,-4488",
        "--patch",
        "32",
        "--spacing",
        "2",
        "--data-root",
        root.to_str().unwrap(),
        "--origin",
        "1000,2000",
        "-o",
        d.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let m: Manifest = serde_json::from_slice(&std::fs::read(d.join("manifest.json")).unwrap()).unwrap();
    eprintln!(
        "tatooine 512 m at 2 m, 32 m patches: RMS {:.4} m, max {:.4} m, worst patch rms {:.4} max {:.4}",
        m.rms, m.max, m.worst_patch.rms, m.worst_patch.max
    );
    assert_eq!(m.patches, 256);
    assert_eq!((m.georef.grid.cols, m.georef.grid.rows), (257, 257));
    // The heights again, from the SWG evaluator, and the patches from the files.
    let g = m.georef.grid;
    let h = trnbake_scs::from_swg::swg_heights(&trn, g, Some(root), false).unwrap();
    let patches = read_patches(&d.join("trnbake.mbd"));
    let (rms, max, posts) = independent_error(&patches, &m, &|c, r| h[r * g.cols as usize + c] as f64);
    assert_eq!(posts, m.posts);
    assert!((rms - m.rms).abs() <= 1e-4 * m.rms.max(1.0), "rms {rms} vs manifest {}", m.rms);
    assert!((max - m.max).abs() <= 1e-3, "max {max} vs manifest {}", m.max);
    assert!(m.rms > 0.01 && m.rms < 5.0, "a real region does not fit exactly, nor terribly: {}", m.rms);
    let out = run(&["scs", "check", d.join("trnbake.mbd").to_str().unwrap()]);
    assert!(out.status.success());
}

#[test]
fn refined_mosaic_is_watertight_across_sizes() {
    // Rough terrain and a tight --max-error: patches of several sizes side by side (the fit
    // settles on 16 m base patches here, split down to 8 m where they miss).
    let n = 129;
    let mut h = vec![0f32; n * n];
    for r in 0..n {
        for c in 0..n {
            let (x, z) = (c as f64 * 2.0, r as f64 * 2.0);
            let bump = if (x - 90.0).powi(2) + (z - 150.0).powi(2) < 400.0 { 6.0 } else { 0.0 };
            h[r * n + c] = (40.0 * (x / 70.0).sin() + 10.0 * (z / 23.0).cos() * (x / 31.0).sin() + bump) as f32;
        }
    }
    let d = tmp("watertight");
    let grid = Grid { cols: n as u32, rows: n as u32, x0: 0.0, z0: 0.0, spacing: 2.0 };
    let e = export_map(&h, grid, None, "rough", &opts("rough", 32.0, Some(0.3)), &d).unwrap();
    let sizes = &e.manifest.patches_by_size;
    assert!(sizes.len() >= 2, "expected mixed patch sizes, got {sizes:?}");
    let patches = read_patches(&e.mbd);
    let mut seams = 0;
    let mut worst = 0.0f64;
    for a in &patches {
        let (aw, an, asz) = a.rect();
        for b in &patches {
            let (bw, bn, bsz) = b.rect();
            // b east of a: shared x, overlapping z.
            if (aw + asz - bw).abs() < 1e-6 {
                let (lo, hi) = (an.max(bn), (an + asz).min(bn + bsz));
                if hi - lo > 1e-6 {
                    seams += 1;
                    for k in 0..=16 {
                        let z = lo + (hi - lo) * k as f64 / 16.0;
                        let ya = a.at(1.0, (z - an) / asz)[1];
                        let yb = b.at(0.0, (z - bn) / bsz)[1];
                        worst = worst.max((ya - yb).abs());
                    }
                }
            }
            // b south of a (SCS Z grows south).
            if (an + asz - bn).abs() < 1e-6 {
                let (lo, hi) = (aw.max(bw), (aw + asz).min(bw + bsz));
                if hi - lo > 1e-6 {
                    seams += 1;
                    for k in 0..=16 {
                        let x = lo + (hi - lo) * k as f64 / 16.0;
                        let ya = a.at((x - aw) / asz, 1.0)[1];
                        let yb = b.at((x - bw) / bsz, 0.0)[1];
                        worst = worst.max((ya - yb).abs());
                    }
                }
            }
        }
    }
    assert!(seams > patches.len(), "{seams} seams for {} patches", patches.len());
    assert!(worst <= 1e-4, "a crack of {worst} m");
    // Refinement helped, and the independent evaluator agrees with the manifest.
    let coarse = export_map(&h, grid, None, "rough", &opts("rough", 32.0, None), &tmp("watertight-coarse")).unwrap();
    assert!(e.manifest.rms < coarse.manifest.rms);
    let (rms, max, _) = independent_error(&patches, &e.manifest, &|c, r| h[r * n + c] as f64);
    assert!((rms - e.manifest.rms).abs() < 1e-4 && (max - e.manifest.max).abs() < 1e-3, "{rms} {max} vs {} {}", e.manifest.rms, e.manifest.max);
}

#[test]
fn items_are_split_into_sectors_by_centre() {
    // 64 m straddling the X = 4000 sector line.
    let n = 33;
    let h = vec![5.0f32; n * n];
    let d = tmp("sectors");
    let grid = Grid { cols: n as u32, rows: n as u32, x0: 0.0, z0: 0.0, spacing: 2.0 };
    let mut o = opts("split", 16.0, None);
    o.origin = (3968.0, -32.0);
    let e = export_map(&h, grid, None, "flat", &o, &d).unwrap();
    assert_eq!(e.manifest.sectors, ["sec+0000-0001", "sec+0000+0000", "sec+0001-0001", "sec+0001+0000"]);
    let map = Map::load(&e.mbd).unwrap();
    for (&(sx, sz), s) in &map.sectors {
        let aux = s.aux.as_ref().unwrap();
        assert_eq!(aux.items.len(), 4, "sector {sx},{sz}");
        for nd in &aux.nodes {
            let p = nd.position_m();
            assert_eq!(trnbake_scs::map::sector_of(p[0], p[2]), (sx, sz));
        }
        assert_eq!(s.desc.unwrap().min, [sx * 4000 * 256, sz * 4000 * 256]);
    }
    let out = run(&["scs", "check", e.mbd.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn export_then_rasterize_overlays_the_input() {
    // A GeoTIFF input with its own georeference → scs export → scs rasterize: the raster
    // lands on the input's posts, in its coordinates, within the fit error.
    let n = 97;
    let mut h = vec![0f32; n * n];
    for r in 0..n {
        for c in 0..n {
            let (x, z) = (c as f64 * 4.0, r as f64 * 4.0);
            h[r * n + c] = (200.0 + 30.0 * (x / 90.0).sin() * (z / 60.0).cos() + 0.002 * x * z) as f32;
        }
    }
    let d = tmp("raster");
    let src = d.join("in.tif");
    let grid = Grid { cols: n as u32, rows: n as u32, x0: 500000.0, z0: 4100000.0, spacing: 4.0 };
    trnbake_raster::write_geotiff_f32(&src, &grid, &h, "test CRS").unwrap();
    let map = d.join("map");
    let out = run(&["scs", "export", src.to_str().unwrap(), "--patch", "32", "--origin", "-2000,1000", "-o", map.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let m: Manifest = serde_json::from_slice(&std::fs::read(map.join("manifest.json")).unwrap()).unwrap();
    let back = d.join("back.tif");
    let out = run(&["scs", "rasterize", map.join("trnbake.mbd").to_str().unwrap(), "-o", back.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let imp = trnbake_raster::readers::open(&back, &Default::default()).unwrap();
    let g = imp.source.grid();
    assert_eq!(g, grid, "same posts, same coordinates");
    assert_eq!(imp.citation.as_deref(), Some("test CRS"));
    let mut got = vec![0f32; g.len()];
    imp.source.read_rows(0, g.rows, &mut got).unwrap();
    let worst = got.iter().zip(&h).map(|(a, b)| (a - b).abs() as f64).fold(0.0, f64::max);
    assert!(worst <= m.max + 1e-3, "round trip off by {worst}, fit max {}", m.max);
    assert!(m.max > 0.0 && m.max < 1.0, "{}", m.max);
    let side: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("back.tif.json")).unwrap()).unwrap();
    assert_eq!(side["approximate"], false);
    assert_eq!(side["coordinates"], "export source (manifest.json)");
    // --region picks the posts inside it (in the input's coordinates), snapped inwards.
    let sub = d.join("sub");
    let out = run(&["scs", "export", src.to_str().unwrap(), "--patch", "16", "--region", "500001,4100010,500130,4100200", "-o", sub.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let m: Manifest = serde_json::from_slice(&std::fs::read(sub.join("manifest.json")).unwrap()).unwrap();
    let g = m.georef.grid;
    assert_eq!((g.x0, g.z0, g.spacing), (500004.0, 4100012.0, 4.0));
    // 500004..500128 holds 31 intervals → 7 patches of 4; 4100012..4100200 holds 47 → 11.
    assert_eq!((g.cols, g.rows, m.patches), (29, 45, 77));
}

#[test]
fn rasterize_without_manifest_uses_scs_world_and_marks_terrain_approximate() {
    let d = tmp("raster-world");
    let mut f = valid_sector();
    // A straight 20 m Terrain along −Z from (0, 1, 0) to (0, 1, −20), 10 m right, 60 m left;
    // and the flat patch at height 1 m over X 0..32, Z 0..32.
    let mut map = Map::new("w", 1);
    map.sectors.insert((0, 0), trnbake_scs::map::Sector { aux: Some(std::mem::replace(&mut f, SectorFile::empty())), ..Default::default() });
    map.save(&d).unwrap();
    let out = d.join("w.tif");
    let o = run(&["scs", "rasterize", d.join("w.mbd").to_str().unwrap(), "-o", out.to_str().unwrap(), "--spacing", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let side: serde_json::Value = serde_json::from_slice(&std::fs::read(d.join("w.tif.json")).unwrap()).unwrap();
    assert_eq!(side["approximate"], true);
    assert_eq!(side["terrain_items"], 1);
    let imp = trnbake_raster::readers::open(&out, &Default::default()).unwrap();
    let g = imp.source.grid();
    let mut v = vec![0f32; g.len()];
    imp.source.read_rows(0, g.rows, &mut v).unwrap();
    // World y = −Z: SCS (16, 16) is at grid (x 16, y −16): the patch height 1.
    let c = ((16.0 - g.x0) / g.spacing).round() as usize;
    let r = ((-16.0 - g.z0) / g.spacing).round() as usize;
    assert!((v[r * g.cols as usize + c] - 1.0).abs() < 1e-5);
    assert!(imp.citation.unwrap_or_default().contains("SCS world"));
    // The Terrain: spine from (0, 1.5, 0) to (0, 0.5, −20) (node offsets ±0.5), tangents
    // (0, 0, −20), 5 columns; the right side's vertex (column 1, row 2) — 2 m east of the
    // station at Z = −4 — carries a height offset of −1.25 m.
    let spine_y = |s: f64| 1.5 * (2.0 * s.powi(3) - 3.0 * s * s + 1.0) + 0.5 * (-2.0 * s.powi(3) + 3.0 * s * s);
    let at = |x: f64, z: f64| {
        let c = ((x - g.x0) / g.spacing).round() as usize;
        let r = ((-z - g.z0) / g.spacing).round() as usize;
        v[r * g.cols as usize + c] as f64
    };
    assert!((at(2.0, -4.0) - (spine_y(0.2) - 1.25)).abs() < 1e-4, "{} vs {}", at(2.0, -4.0), spine_y(0.2) - 1.25);
    assert!((at(0.0, -12.0) - spine_y(0.6)).abs() < 1e-4);
    assert!((at(-40.0, -12.0) - spine_y(0.6)).abs() < 1e-4, "the 60 m left side");
    assert!(at(14.0, -12.0).is_nan(), "beyond the 10 m right side");
    assert_eq!(side["approximate_posts"].as_u64().unwrap() as usize, {
        // Every covered post outside the patch's 17 × 17 came from the Terrain.
        v.iter().filter(|h| !h.is_nan()).count() - 17 * 17
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// What the fuzz target checks, on mutations of a valid sector: no panic, and an accepted
    /// input rewrites to the same bytes.
    #[test]
    fn mutated_sectors_never_panic_and_accepted_ones_rewrite_equal(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut b = valid_sector().to_bytes();
        for (i, v) in &edits {
            let k = i.index(b.len());
            b[k] = *v;
        }
        let b = &b[..cut.index(b.len() + 1).max(b.len() * 3 / 4)];
        if let Ok(f) = SectorFile::read(b, "m.aux") {
            prop_assert_eq!(f.to_bytes(), b.to_vec());
        }
    }
}

/// Issue #26 case 5: a `.mbd` whose sector folder is missing, or empty, fails `scs check`
/// (it used to say "ok (0 files, 0 items, every check passed)").
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn check_fails_without_the_sector_folder_or_with_an_empty_one() {
    let Some(mbd) = scs_data("modeltest.mbd") else { return };
    let d = tmp("no-sectors");
    let other = d.join("other.mbd");
    std::fs::copy(&mbd, &other).unwrap();
    let out = run(&["scs", "check", other.to_str().unwrap()]);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("the sector folder the .mbd implies is missing"), "{text}");
    std::fs::create_dir_all(d.join("other")).unwrap();
    let out = run(&["scs", "check", other.to_str().unwrap()]);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("holds no sector files"), "{text}");
    // The real map beside its folder still passes.
    assert_eq!(run(&["scs", "check", mbd.to_str().unwrap()]).status.code(), Some(0));
    std::fs::remove_dir_all(&d).unwrap();
}

/// Issue 37 item 7: a sector with a missing or empty `.aux`, `.base`, `.data`, `.desc` or
/// `.layer` fails `scs check`, naming the file (it said "every check passed"); a missing
/// `.snd` is fine. Checked on a map from `scs export` and on one sector file given alone.
#[test]
fn check_fails_for_a_missing_or_empty_sector_file() {
    let d = tmp("sector-files");
    let grid = Grid { cols: 65, rows: 65, x0: 0.0, z0: 0.0, spacing: 2.0 };
    let h: Vec<f32> = (0..grid.len()).map(|i| ((i % 65) as f32 * 0.1).sin() * 3.0 + (i / 65) as f32 * 0.05).collect();
    let e = export_map(&h, grid, None, "files", &opts("files", 32.0, None), &d).unwrap();
    let mbd = e.mbd.to_str().unwrap().to_string();
    let folder = Map::folder_of(&e.mbd);
    let stem = std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().path()).find(|p| p.extension().is_some_and(|x| x == "aux")).unwrap();
    let stem = stem.file_stem().unwrap().to_str().unwrap().to_string();
    assert!(!folder.join(format!("{stem}.snd")).exists());
    let out = run(&["scs", "check", &mbd]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for ext in ["aux", "base", "data", "desc", "layer"] {
        let p = folder.join(format!("{stem}.{ext}"));
        let good = std::fs::read(&p).unwrap();
        let other = if ext == "aux" { "base" } else { "aux" };
        for (how, what) in [("missing", "missing"), ("empty", "empty file")] {
            if how == "missing" {
                std::fs::remove_file(&p).unwrap();
            } else {
                std::fs::write(&p, b"").unwrap();
            }
            for target in [mbd.clone(), folder.join(format!("{stem}.{other}")).display().to_string()] {
                let out = run(&["scs", "check", &target]);
                let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
                assert_eq!(out.status.code(), Some(1), "{how} .{ext}, checking {target}: {text}");
                assert!(text.contains(&format!("{stem}.{ext}")) && text.contains(what), "{how} .{ext}: the file is not named: {text}");
            }
            std::fs::write(&p, &good).unwrap();
        }
    }
    assert!(run(&["scs", "check", &mbd]).status.success());
    std::fs::remove_dir_all(&d).unwrap();
}

/// A GeoTIFF heightmap of `side`² posts 1 m apart from `f(x, z)`.
fn heightmap(dir: &Path, name: &str, side: u32, f: impl Fn(f64, f64) -> f64) -> PathBuf {
    let grid = trnbake_raster::Grid { cols: side, rows: side, x0: 0.0, z0: 0.0, spacing: 1.0 };
    let h: Vec<f32> = (0..side * side).map(|i| f(f64::from(i % side), f64::from(i / side)) as f32).collect();
    let p = dir.join(name);
    trnbake_raster::write_geotiff_f32(&p, &grid, &h, "test local metres").unwrap();
    p
}

/// A 1 km region of mustafar (2 m posts) rough enough that C1 patches of 8 m miss 1 m.
const ROUGH_REGION: &str = "-512,-512,512,512";

fn export_manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

/// Issue #26 case 9 and issue 37 item 19: `--max-error` holds. On smooth terrain that 32 m
/// patches cannot follow within 5 cm, the fit halves the base patches until it can, and every
/// post is then within the bound; on a 10 m cliff no C1 mosaic can follow, so the patches
/// that miss become patches of one post with C0 seams (said on the console and counted in the
/// manifest): the bound holds there too, no patch is named, `--strict` passes, and the
/// mosaic stays watertight.
#[test]
fn max_error_is_held_on_smooth_terrain_and_on_a_cliff() {
    let d = tmp("max-error");
    let smooth = heightmap(&d, "smooth.tif", 129, |x, z| 5.0 * (x / 6.0).sin() * (z / 7.0).cos());
    let out = d.join("smooth");
    let o = run(&["scs", "export", smooth.to_str().unwrap(), "--patch", "32", "--max-error", "0.05", "--strict", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let m = export_manifest(&out);
    assert_eq!(m["max_error_held"], true, "{m}");
    assert!(m["max"].as_f64().unwrap() <= 0.05, "{m}");
    assert!(m["patch_size"].as_f64().unwrap() < 32.0, "smaller base patches were needed: {m}");
    assert_eq!(m["c0_patches"], 0, "{m}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("instead of 32 m, to hold --max-error"));

    let cliff = heightmap(&d, "cliff.tif", 129, |x, _| if x < 64.5 { 0.0 } else { 10.0 });
    let out = d.join("cliff");
    let o = run(&["scs", "export", cliff.to_str().unwrap(), "--patch", "32", "--max-error", "0.5", "--strict", "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("with C0 seams") && !err.contains("miss --max-error"), "{err}");
    let m = export_manifest(&out);
    assert_eq!(m["max_error_held"], true, "{m}");
    assert!(m.get("over_max_error").is_none(), "{m}");
    assert!(m["max"].as_f64().unwrap() <= 0.5, "{m}");
    assert!(m["c0_patches"].as_u64().unwrap() > 0 && m["patches_by_size"]["1"].as_u64() == m["c0_patches"].as_u64(), "{m}");
    // Judged independently: every post within the bound, and no crack.
    let mbd = out.join("trnbake.mbd");
    let patches = read_patches(&mbd);
    let manifest: Manifest = serde_json::from_value(m.clone()).unwrap();
    let h = |c: usize, _r: usize| if (c as f64) < 64.5 { 0.0 } else { 10.0 };
    let (_, max, posts) = independent_error(&patches, &manifest, &h);
    assert!(max <= 0.5 + 1e-6 && posts == 129 * 129, "independent max {max} over {posts} posts");
    assert!(worst_crack(&patches).1 <= 1e-4, "a crack of {} m", worst_crack(&patches).1);
    std::fs::remove_dir_all(&d).unwrap();
}

/// (seams, worst height difference) between every pair of patches sharing an edge; the
/// patches are grouped by their west and north lines (in 1/256 m, SCS fixed point), so a
/// mosaic of tens of thousands of patches is checked in a moment.
fn worst_crack(patches: &[P]) -> (usize, f64) {
    let key = |v: f64| (v * 256.0).round() as i64;
    let mut by_west: std::collections::HashMap<i64, Vec<usize>> = std::collections::HashMap::new();
    let mut by_north: std::collections::HashMap<i64, Vec<usize>> = std::collections::HashMap::new();
    for (i, p) in patches.iter().enumerate() {
        let (w, n, _) = p.rect();
        by_west.entry(key(w)).or_default().push(i);
        by_north.entry(key(n)).or_default().push(i);
    }
    let mut seams = 0;
    let mut worst = 0.0f64;
    for a in patches {
        let (aw, an, asz) = a.rect();
        // b east of a: shared x, overlapping z.
        for &j in by_west.get(&key(aw + asz)).map_or(&[][..], |v| v.as_slice()) {
            let (_, bn, bsz) = patches[j].rect();
            let (lo, hi) = (an.max(bn), (an + asz).min(bn + bsz));
            if hi - lo > 1e-6 {
                seams += 1;
                for k in 0..=16 {
                    let z = lo + (hi - lo) * k as f64 / 16.0;
                    worst = worst.max((a.at(1.0, (z - an) / asz)[1] - patches[j].at(0.0, (z - bn) / bsz)[1]).abs());
                }
            }
        }
        // b south of a (SCS Z grows south).
        for &j in by_north.get(&key(an + asz)).map_or(&[][..], |v| v.as_slice()) {
            let (bw, _, bsz) = patches[j].rect();
            let (lo, hi) = (aw.max(bw), (aw + asz).min(bw + bsz));
            if hi - lo > 1e-6 {
                seams += 1;
                for k in 0..=16 {
                    let x = lo + (hi - lo) * k as f64 / 16.0;
                    worst = worst.max((a.at((x - aw) / asz, 1.0)[1] - patches[j].at((x - bw) / bsz, 0.0)[1]).abs());
                }
            }
        }
    }
    (seams, worst)
}

/// Issue 37 item 19: on a 1 km dantooine region at `--patch 32 --max-error 1`, 1,147 patches
/// used to miss the bound (max 3.17 m) because patches stopped at 8 m. Dantooine is not among
/// the test data; a 1 km region of mustafar misses the same way (2,001 patches of 8 m over
/// 1 m with C1 alone). Now the bound holds with no patch named, judged by the evaluator here
/// on the heights a bake gives, and the mosaic is watertight.
#[test]
fn max_error_holds_on_a_real_rough_region() {
    let Some(trn) = common::real_file("terrain/mustafar.trn") else { return };
    let d = tmp("rough-region");
    let root = common::swg_root();
    let out = d.join("map");
    let o = run(&[
        "scs",
        "export",
        trn.to_str().unwrap(),
        "--data-root",
        root.to_str().unwrap(),
        "--region",
        ROUGH_REGION,
        "--patch",
        "32",
        "--max-error",
        "1",
        "--strict",
        "-o",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let m = export_manifest(&out);
    assert_eq!(m["max_error_held"], true, "{m}");
    assert!(m.get("over_max_error").is_none() && m["max"].as_f64().unwrap() <= 1.0, "{err}");
    assert!(m["c0_patches"].as_u64().unwrap() > 1000, "the C1 mosaic alone misses here: {}", m["c0_patches"]);
    assert!(err.contains("with C0 seams"), "{err}");
    // The heights the export fitted, from a bake of the same posts, judged independently.
    let g: Grid = serde_json::from_value(m["georef"]["grid"].clone()).unwrap();
    let bake = d.join("bake");
    let region = format!("{},{},{},{}", g.x0, g.z0, g.east_x(), g.north_z());
    let o = run(&[
        "bake",
        trn.to_str().unwrap(),
        "--data-root",
        root.to_str().unwrap(),
        "--region",
        &region,
        "--spacing",
        &g.spacing.to_string(),
        "--maps",
        "height",
        "--backend",
        "cpu",
        "--format",
        "r32",
        "-q",
        "-o",
        bake.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let raw: Vec<f32> = std::fs::read(bake.join("height.r32")).unwrap().chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let (cols, rows) = (g.cols as usize, g.rows as usize);
    assert_eq!(raw.len(), cols * rows);
    // height.r32 is north row first; the fit's rows count from the south.
    let h = |c: usize, r: usize| f64::from(raw[(rows - 1 - r) * cols + c]);
    let patches = read_patches(&out.join("trnbake.mbd"));
    let manifest: Manifest = serde_json::from_value(m.clone()).unwrap();
    let (_, max, _) = independent_error(&patches, &manifest, &h);
    assert!(max <= 1.0 + 1e-3, "independent max {max}");
    assert!(worst_crack(&patches).1 <= 1e-4, "a crack of {} m", worst_crack(&patches).1);
    let out_check = run(&["scs", "check", out.join("trnbake.mbd").to_str().unwrap()]);
    assert!(out_check.status.success(), "{}", String::from_utf8_lossy(&out_check.stderr));
    std::fs::remove_dir_all(&d).unwrap();
}
