//! Robustness against hostile input (issue: Robustness): real files truncated and corrupted
//! at random offsets must give an `Err` or a model that writes back stably, never a panic,
//! with bounded memory (a 4 GB size field must not allocate 4 GB) and bounded time.
//!
//! The properties below run 10,000+ cases in all; `fuzz/` has a cargo-fuzz target for more.

mod common;

use common::alloc::{peak_alloc, Counting};
use common::iff::{chunk, form};

use proptest::prelude::*;
use std::path::PathBuf;
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};
use trnbake_swg::iff::{self, Limits, Node};
use trnbake_swg::model::Terrain;

// The counting allocator (tests/common/alloc.rs): per-thread current and peak bytes while a
// measurement is active.
#[global_allocator]
static ALLOC: Counting = Counting;

/// The memory bound of the issue: 64 bytes per input byte plus 16 MiB.
fn memory_bound(input_len: usize) -> usize {
    64 * input_len + (16 << 20)
}

// ---------------------------------------------------------------------------------------
// The corpus: small and medium real files, loaded once, with the offsets of every IFF size
// field and tag found by walking the tree.
// ---------------------------------------------------------------------------------------

const CORPUS: &[&str] = &[
    "terrain/simple.trn",
    "extra/test_terrain.trn",
    "terrain/10.trn",
    "terrain/creature_test.trn",
    "terrain/floratest.trn",
    "terrain/dungeon1.trn",
    "terrain/kashyyyk_north_dungeons.trn",
    "terrain/rivertest.trn",
    "terrain/runtimerules.trn",
];

struct Sample {
    name: &'static str,
    bytes: Vec<u8>,
    /// Offset of the 4-byte big-endian size of every node.
    size_fields: Vec<usize>,
    /// Offset of every tag: a chunk's tag, a FORM's `FORM` literal and its type.
    tag_fields: Vec<usize>,
    /// Every node, in file order.
    nodes: Vec<NodeAt>,
}

/// Where a node of a real file is.
struct NodeAt {
    /// Tags from the root, e.g. `/PTAT/0015/TGEN/0000/SGRP/0006/SFAM`.
    path: String,
    /// Offset of the node's header.
    at: usize,
    /// Offset just past the node.
    end: usize,
    chunk: bool,
}

fn walk(n: &Node, parent: &str, out: &mut Vec<NodeAt>) {
    let (at, end) = (n.offset(), n.offset() + n.encoded_len());
    match n {
        Node::Form(f) => {
            let path = format!("{parent}/{}", f.tag);
            out.push(NodeAt { path: path.clone(), at, end, chunk: false });
            for c in &f.children {
                walk(c, &path, out);
            }
        }
        Node::Chunk(c) => out.push(NodeAt { path: format!("{parent}/{}", c.tag), at, end, chunk: true }),
    }
}

fn corpus() -> &'static [Sample] {
    static C: OnceLock<Vec<Sample>> = OnceLock::new();
    C.get_or_init(|| {
        let mut v = Vec::new();
        for &name in CORPUS {
            let Some(path) = common::real_file(name) else { continue };
            let bytes = std::fs::read(&path).unwrap();
            let root = iff::parse(&bytes, &Limits::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let mut nodes = Vec::new();
            walk(&root, "", &mut nodes);
            let size_fields = nodes.iter().map(|n| n.at + 4).collect();
            let tag_fields = nodes.iter().flat_map(|n| if n.chunk { vec![n.at] } else { vec![n.at, n.at + 8] }).collect();
            v.push(Sample { name, bytes, size_fields, tag_fields, nodes });
        }
        v
    })
}

// ---------------------------------------------------------------------------------------
// Mutations.
// ---------------------------------------------------------------------------------------

/// Tags and version types the reader dispatches on: swapping them in drives real payloads
/// into other decoders.
const TAGS: &[&[u8; 4]] = &[
    b"FORM", b"PTAT", b"TGEN", b"LYRS", b"LAYR", b"IHDR", b"ADTA", b"DATA", b"PARM", b"SGRP", b"FGRP", b"RGRP", b"EGRP", b"MGRP", b"SFAM", b"FFAM", b"RFAM",
    b"EFAM", b"MFAM", b"MFRC", b"HDTA", b"SGMT", b"PIMP", b"PFPM", b"CNTL", b"WMAP", b"SMAP", b"BCIR", b"BREC", b"BPOL", b"BPLN", b"FHGT", b"FFRA", b"FBIT",
    b"FSLP", b"FDIR", b"FSHD", b"AHCN", b"AHFR", b"AHTR", b"ACCN", b"ACRH", b"ACRF", b"ASCN", b"ASRP", b"AENV", b"AEXC", b"APAS", b"AFSC", b"AFSN", b"AFDN",
    b"AFDF", b"AROA", b"ARIV", b"ARIB", b"0000", b"0001", b"0002", b"0003", b"0004", b"0005", b"0006", b"0007", b"0008", b"0013", b"0014", b"0015",
];

/// A position chosen at random, mapped into whatever range it is used for.
#[derive(Clone, Copy, Debug)]
struct Index(usize);

impl Index {
    fn index(self, len: usize) -> usize {
        self.0 % len
    }
}

impl Arbitrary for Index {
    type Parameters = ();
    type Strategy = prop::strategy::Map<prop::num::usize::Any, fn(usize) -> Index>;
    fn arbitrary_with(_: ()) -> Self::Strategy {
        any::<usize>().prop_map(Index)
    }
}

#[derive(Clone, Debug)]
enum SizeValue {
    Max,
    I32Max,
    Pow31,
    FileLenPlus1,
    Zero,
    Delta(i32),
    Any(u32),
}

#[derive(Clone, Debug)]
enum Mutation {
    /// Overwrite 1–8 bytes at random offsets.
    Bytes(Vec<(Index, u8)>),
    /// Overwrite the size field of a real node.
    Size(Index, SizeValue),
    /// Overwrite a real tag with one the reader knows.
    Tag(Index, Index),
    /// Insert bytes at an offset.
    Insert(Index, Vec<u8>),
    /// Delete up to 16 bytes at an offset.
    Delete(Index, usize),
}

fn size_value() -> impl Strategy<Value = SizeValue> {
    prop_oneof![
        Just(SizeValue::Max),
        Just(SizeValue::I32Max),
        Just(SizeValue::Pow31),
        Just(SizeValue::FileLenPlus1),
        Just(SizeValue::Zero),
        (-16i32..=16).prop_map(SizeValue::Delta),
        any::<u32>().prop_map(SizeValue::Any),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => prop::collection::vec((any::<Index>(), any::<u8>()), 1..=8).prop_map(Mutation::Bytes),
        3 => (any::<Index>(), size_value()).prop_map(|(i, v)| Mutation::Size(i, v)),
        2 => (any::<Index>(), any::<Index>()).prop_map(|(i, t)| Mutation::Tag(i, t)),
        1 => (any::<Index>(), prop::collection::vec(any::<u8>(), 1..=16)).prop_map(|(i, b)| Mutation::Insert(i, b)),
        1 => (any::<Index>(), 1usize..=16).prop_map(|(i, n)| Mutation::Delete(i, n)),
    ]
}

fn apply(s: &Sample, bytes: &mut Vec<u8>, m: &Mutation) {
    let len = bytes.len();
    if len == 0 {
        return;
    }
    // Offsets found in the original file may be past the end after an earlier deletion.
    let put = |bytes: &mut Vec<u8>, at: usize, v: &[u8]| {
        for (k, b) in v.iter().enumerate() {
            if let Some(x) = bytes.get_mut(at + k) {
                *x = *b;
            }
        }
    };
    match m {
        Mutation::Bytes(v) => {
            for (i, b) in v {
                bytes[i.index(len)] = *b;
            }
        }
        Mutation::Size(i, v) => {
            let at = s.size_fields[i.index(s.size_fields.len())];
            let old = bytes.get(at..at + 4).map_or(0, |b| u32::from_be_bytes(b.try_into().unwrap()));
            let new = match v {
                SizeValue::Max => u32::MAX,
                SizeValue::I32Max => 0x7fff_ffff,
                SizeValue::Pow31 => 0x8000_0000,
                SizeValue::FileLenPlus1 => len as u32 + 1,
                SizeValue::Zero => 0,
                SizeValue::Delta(d) => old.wrapping_add(*d as u32),
                SizeValue::Any(x) => *x,
            };
            put(bytes, at, &new.to_be_bytes());
        }
        Mutation::Tag(i, t) => {
            let at = s.tag_fields[i.index(s.tag_fields.len())];
            put(bytes, at, TAGS[t.index(TAGS.len())]);
        }
        Mutation::Insert(i, b) => {
            let at = i.index(len + 1);
            bytes.splice(at..at, b.iter().copied());
        }
        Mutation::Delete(i, n) => {
            let at = i.index(len);
            let end = (at + n).min(len);
            bytes.drain(at..end);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The checks every input gets.
// ---------------------------------------------------------------------------------------

/// Equal models, where NaN equals NaN (`Terrain`'s `PartialEq` follows f32's; exact float
/// bits are checked through the written bytes instead).
fn same_model(a: &Terrain, b: &Terrain) -> bool {
    a == b || format!("{a:?}") == format!("{b:?}")
}

/// Parse hostile bytes. Must not panic; when it succeeds the model must write bytes that read
/// back to the same model and write the same bytes again, and JSON, `validate` and `info`
/// must not panic either. Returns whether the parse succeeded.
fn check_input(input: &[u8]) -> bool {
    let t = match Terrain::from_bytes(input) {
        Err(e) => {
            assert!(e.offset <= input.len(), "error offset {} past the input ({} bytes): {e}", e.offset, input.len());
            return false;
        }
        Ok(t) => t,
    };
    let out = t.to_bytes();
    // The reader keeps everything it does not type, so any file it accepts is written back
    // byte for byte (src/trn/mod.rs).
    assert!(out == input, "write(read(b)) != b for an accepted input of {} bytes", input.len());
    let back = Terrain::from_bytes(&out).unwrap_or_else(|e| panic!("the written bytes do not read back: {e}"));
    assert!(same_model(&t, &back), "read(write(t)) != t");
    assert!(back.to_bytes() == out, "writing is not stable");
    let json = serde_json::to_string(&t).expect("JSON serialisation failed");
    let _ = serde_json::from_str::<Terrain>(&json);
    let _ = t.validate();
    let _ = t.info();
    true
}

/// [`check_input`] without the second parse and the JSON read (the sweeps run many cases; an
/// accepted input must still be written back byte for byte, which implies the rest).
fn check_input_light(input: &[u8]) {
    let Ok(t) = Terrain::from_bytes(input) else { return };
    assert!(t.to_bytes() == input, "write(read(b)) != b for an accepted input of {} bytes", input.len());
    serde_json::to_string(&t).expect("JSON serialisation failed");
    let _ = t.validate();
    let _ = t.info();
}

// ---------------------------------------------------------------------------------------
// Properties: 2,000 truncations + 3,000 truncations with fixed sizes + 7,500 corruptions
// = 12,500 cases.
// ---------------------------------------------------------------------------------------

const TRUNCATION_CASES: u32 = 2_000;
const FIXED_TRUNCATION_CASES: u32 = 3_000;
const CORRUPTION_CASES: u32 = 7_500;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(TRUNCATION_CASES))]

    /// Any truncation strictly inside a file is an error.
    #[test]
    #[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
    fn truncated_real_files_are_errors(file in any::<Index>(), cut in any::<Index>()) {
        let c = corpus();
        if c.is_empty() {
            return Ok(());
        }
        let s = &c[file.index(c.len())];
        let cut = cut.index(s.bytes.len());
        let r = Terrain::from_bytes(&s.bytes[..cut]);
        prop_assert!(r.is_err(), "{} truncated to {cut} bytes parsed", s.name);
        let e = r.unwrap_err();
        prop_assert!(e.offset <= cut, "{}: offset {} past the {cut} bytes: {e}", s.name, e.offset);
    }
}

/// `s` cut at `cut`, with the size of every node whose header is whole and that runs past
/// the cut shrunk to end there: a well-formed IFF prefix, so the cut lands in whatever
/// payload or list it falls in instead of failing at the root's size.
fn truncated_with_sizes_fixed(s: &Sample, cut: usize) -> Vec<u8> {
    let mut b = s.bytes[..cut].to_vec();
    for n in &s.nodes {
        if n.at + 8 <= cut && n.end > cut {
            b[n.at + 4..n.at + 8].copy_from_slice(&((cut - n.at - 8) as u32).to_be_bytes());
        }
    }
    b
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(FIXED_TRUNCATION_CASES))]

    /// Truncations whose enclosing sizes are fixed up reach every decoder with a short
    /// payload or list: an error, or a shorter file that writes back stably.
    #[test]
    #[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
    fn truncated_with_sizes_fixed_never_panic(file in any::<Index>(), cut in any::<Index>()) {
        let c = corpus();
        if c.is_empty() {
            return Ok(());
        }
        let s = &c[file.index(c.len())];
        let b = truncated_with_sizes_fixed(s, cut.index(s.bytes.len()));
        check_input(&b);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CORRUPTION_CASES))]

    /// Corrupted files (random bytes, size fields, tags, insertions, deletions) parse to an
    /// error or to a model that writes back stably, never a panic.
    #[test]
    #[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
    fn corrupted_real_files_never_panic(file in any::<Index>(), ms in prop::collection::vec(mutation(), 1..=3)) {
        let c = corpus();
        if c.is_empty() {
            return Ok(());
        }
        let s = &c[file.index(c.len())];
        let mut bytes = s.bytes.clone();
        for m in &ms {
            apply(s, &mut bytes, m);
        }
        check_input(&bytes);
    }
}

// ---------------------------------------------------------------------------------------
// Deterministic sweeps over the smallest files.
// ---------------------------------------------------------------------------------------

/// Every truncation point of the smallest files, and every size field of them set to each
/// hostile value.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn every_truncation_and_every_size_field_of_small_files() {
    let mut cases = 0;
    for s in corpus().iter().filter(|s| s.bytes.len() <= 4096) {
        for cut in 0..s.bytes.len() {
            assert!(Terrain::from_bytes(&s.bytes[..cut]).is_err(), "{} cut at {cut}", s.name);
            check_input(&truncated_with_sizes_fixed(s, cut));
            cases += 2;
        }
        for &at in &s.size_fields {
            for v in [u32::MAX, 0x7fff_ffff, 0x8000_0000, s.bytes.len() as u32 + 1, 0] {
                let mut b = s.bytes.clone();
                b[at..at + 4].copy_from_slice(&v.to_be_bytes());
                let (_, peak) = peak_alloc(|| check_input(&b));
                assert!(peak < memory_bound(b.len()), "{} size at {at} = {v:#x}: peak {peak}", s.name);
                cases += 1;
            }
        }
    }
    eprintln!("{cases} deterministic cases");
}

/// Edge values written as 4 little-endian bytes: NaN, -inf, f32::MAX, the smallest normal
/// float, i32::MAX (also a NaN), i32::MIN (also -0.0), -1 (also a NaN).
const EDGE_WORDS: &[u32] = &[0x7fc0_0000, 0xff80_0000, 0x7f7f_ffff, 0x0080_0000, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff];

/// Every payload offset of the first chunk of each kind (by its last three tags) in the small files,
/// overwritten with each edge value: random bytes rarely make a float tiny or infinite, and
/// the model's derived values (`info`, `validate`) divide and convert them.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn edge_values_in_every_payload_field_of_small_files() {
    let mut cases = 0;
    let mut failures = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for s in corpus().iter().filter(|s| s.bytes.len() <= 12_000) {
        let kind = |p: &str| p.rsplitn(4, '/').take(3).collect::<Vec<_>>().join("/");
        for n in s.nodes.iter().filter(|n| n.chunk && seen.insert((s.bytes[20..24].to_vec(), kind(&n.path)))) {
            let (data, end) = (n.at + 8, n.end.min(n.at + 8 + 128));
            for o in data..end.saturating_sub(3) {
                for &w in EDGE_WORDS {
                    let mut b = s.bytes.clone();
                    b[o..o + 4].copy_from_slice(&w.to_le_bytes());
                    if let Err(p) = std::panic::catch_unwind(|| check_input_light(&b)) {
                        let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                        failures.push(format!("{} {} +{} = {w:#010x}: {msg}", s.name, n.path, o - data));
                    }
                    cases += 1;
                }
            }
        }
    }
    eprintln!("{cases} edge-value cases");
    assert!(failures.is_empty(), "{} of {cases} cases panicked, e.g.:\n{}", failures.len(), failures[..failures.len().min(20)].join("\n"));
}

// ---------------------------------------------------------------------------------------
// Error locations.
// ---------------------------------------------------------------------------------------

/// A truncated real file's error names a place inside PTAT and an offset inside the file.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn truncated_file_error_has_ptat_path_and_offset() {
    let Some(s) = corpus().iter().find(|s| s.name == "terrain/dungeon1.trn") else { return };
    for cut in [s.bytes.len() / 3, s.bytes.len() / 2, s.bytes.len() - 1] {
        let e = Terrain::from_bytes(&s.bytes[..cut]).unwrap_err();
        assert!(e.path.starts_with("PTAT/"), "cut at {cut}: path `{}` ({e})", e.path);
        assert!(e.offset <= cut, "cut at {cut}: offset {} ({e})", e.offset);
    }
}

/// The same with the enclosing sizes fixed up: the error is where the cut landed.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn truncated_payload_error_has_ptat_path_and_offset() {
    let Some(s) = corpus().iter().find(|s| s.name == "terrain/dungeon1.trn") else { return };
    let mut errors = 0;
    for k in 1..64 {
        let cut = s.bytes.len() * k / 64;
        let Err(e) = Terrain::from_bytes(&truncated_with_sizes_fixed(s, cut)) else { continue };
        assert!(e.path.starts_with("PTAT/"), "cut at {cut}: path `{}` ({e})", e.path);
        assert!(e.offset <= cut, "cut at {cut}: offset {} ({e})", e.offset);
        errors += 1;
    }
    assert!(errors > 0);
}

// ---------------------------------------------------------------------------------------
// Bounded memory.
// ---------------------------------------------------------------------------------------

/// Parse on a fresh thread under the allocation counter and a wall-clock budget (the test
/// fails once the budget is spent, without waiting for a runaway parse to finish).
fn parse_bounded(what: &str, bytes: &[u8], budget: Duration) -> Result<Terrain, iff::FormatError> {
    let len = bytes.len();
    let owned = bytes.to_vec();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let t0 = Instant::now();
        let (r, peak) = peak_alloc(|| Terrain::from_bytes(&owned));
        let _ = tx.send((r, peak, t0.elapsed()));
    });
    let (r, peak, took) = match rx.recv_timeout(budget) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: parsing {len} bytes took over {budget:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: the parse panicked"),
    };
    assert!(peak < memory_bound(len), "{what}: peak allocation {peak} bytes for {len} input bytes (bound {})", memory_bound(len));
    if len > 100_000 {
        eprintln!("{what}: {len} bytes, {took:?}, peak {peak} bytes ({:.1} per input byte)", peak as f64 / len as f64);
    }
    r
}

/// A tiny file whose chunk declares 4 GB, and real files whose list counts say 0x7fffffff,
/// error at once without allocating for the declared sizes.
#[test]
fn huge_sizes_and_counts_error_without_allocating() {
    let quick = Duration::from_secs(1);
    // FORM PTAT { FORM 0015 { DATA (size 0xffffffff) … } }
    let mut tiny = form(b"PTAT", &form(b"0015", &chunk(b"DATA", &[0; 8])));
    tiny[28..32].copy_from_slice(&u32::MAX.to_be_bytes());
    let e = parse_bounded("4 GB chunk", &tiny, quick).unwrap_err();
    assert!(e.message.contains("runs past"), "{e}");
    let (_, peak) = peak_alloc(|| Terrain::from_bytes(&tiny));
    assert!(peak < 64 << 10, "a 4 GB size allocated {peak} bytes");
    // The root FORM itself says 4 GB.
    let mut root = tiny.clone();
    root[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
    parse_bounded("4 GB root", &root, quick).unwrap_err();

    // List counts (little-endian i32 payload fields) of 0x7fffffff and -1.
    let mut hit = 0;
    for s in corpus() {
        let counts: Vec<usize> = s
            .nodes
            .iter()
            .filter_map(|n| {
                let (p, data) = (&n.path, n.at + 8);
                if !n.chunk {
                    return None;
                }
                if p.ends_with("/SFAM") {
                    // id, name, surface properties, colour, shader size, feather clamp, children.
                    let b = &s.bytes[data..];
                    let n1 = 4 + b[4..].iter().position(|&x| x == 0)? + 1;
                    let n2 = n1 + b[n1..].iter().position(|&x| x == 0)? + 1;
                    Some(data + n2 + 3 + 4 + 4)
                } else if ((p.contains("/ARIV/") || p.contains("/AROA/")) && p.ends_with("/DATA/DATA"))
                    || (p.contains("/BPOL/") && p.ends_with("/DATA") && !p.contains("/IHDR/"))
                {
                    Some(data)
                } else {
                    None
                }
            })
            .collect();
        for at in counts {
            for n in [0x7fff_ffffi32, -1, 0x1000_0000] {
                let mut b = s.bytes.clone();
                b[at..at + 4].copy_from_slice(&n.to_le_bytes());
                let e = parse_bounded(&format!("{} count at {at} = {n}", s.name), &b, quick).unwrap_err();
                assert!(e.message.contains("count"), "{}: {e}", s.name);
                hit += 1;
            }
        }
    }
    assert!(hit > 0 || corpus().is_empty(), "no list count found to corrupt");
}

/// Corrupted real files parse within the memory bound.
#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn corrupted_real_files_stay_within_the_memory_bound() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut worst = 0f64;
    for s in corpus() {
        for round in 0..60 {
            let mut b = s.bytes.clone();
            let m = match round % 4 {
                0 => Mutation::Size(Index(rnd() as usize), SizeValue::Max),
                1 => Mutation::Size(Index(rnd() as usize), SizeValue::Any(rnd() as u32)),
                2 => Mutation::Bytes((0..8).map(|_| (Index(rnd() as usize), rnd() as u8)).collect()),
                _ => Mutation::Tag(Index(rnd() as usize), Index(rnd() as usize)),
            };
            apply(s, &mut b, &m);
            let (_, peak) = peak_alloc(|| Terrain::from_bytes(&b));
            assert!(peak < memory_bound(b.len()), "{} {m:?}: peak {peak}", s.name);
            worst = worst.max(peak as f64 / b.len() as f64);
        }
    }
    eprintln!("worst peak allocation: {worst:.1} bytes per input byte");
}

/// Wrap `body` in a minimal valid PTAT 0015 around an empty TGEN, putting `lyrs` inside LYRS
/// and `extra` after TGEN.
fn synthetic_terrain(lyrs: &[u8], extra: &[u8]) -> Vec<u8> {
    // Header 0015: source file, map width, chunk width, tiles per chunk, global water flag,
    // height, shader size, shader name, cycle time, 4 × flora params (5 × 4 bytes).
    let mut header = b"x\0".to_vec();
    for _ in 0..6 {
        header.extend_from_slice(&0u32.to_le_bytes());
    }
    header.push(0);
    header.extend_from_slice(&0u32.to_le_bytes());
    header.extend_from_slice(&[0; 80]);
    let mut groups = Vec::new();
    for (g, v) in [(b"SGRP", b"0006"), (b"FGRP", b"0008"), (b"RGRP", b"0004"), (b"EGRP", b"0002"), (b"MGRP", b"0000")] {
        groups.extend(form(g, &form(v, &[])));
    }
    groups.extend(form(b"LYRS", lyrs));
    let tgen = form(b"TGEN", &form(b"0000", &groups));
    let mut body = chunk(b"DATA", &header);
    body.extend(tgen);
    body.extend_from_slice(extra);
    form(b"PTAT", &form(b"0015", &body))
}

#[test]
fn synthetic_terrain_is_valid() {
    let t = Terrain::from_bytes(&synthetic_terrain(&[], &[])).unwrap();
    assert_eq!(t.version, 15);
}

/// Many tiny nodes (the densest input: 8 bytes per node) in the places the reader keeps
/// them: raw layer items in LYRS and extra nodes after TGEN. Memory and time must stay
/// proportional to the input.
#[test]
fn many_tiny_nodes_stay_within_memory_and_time() {
    let n = 200_000;
    let many: Vec<u8> = (0..n).flat_map(|_| chunk(b"XXXX", &[])).collect();
    for (what, bytes) in [("empty chunks in LYRS", synthetic_terrain(&many, &[])), ("empty chunks after TGEN", synthetic_terrain(&[], &many))] {
        let t = parse_bounded(what, &bytes, Duration::from_secs(5)).unwrap();
        assert!(t.to_bytes() == bytes);
    }
}

// ---------------------------------------------------------------------------------------
// Deep nesting.
// ---------------------------------------------------------------------------------------

/// 10,000 nested FORMs: an error, not a stack overflow.
#[test]
fn ten_thousand_nested_forms_are_an_error() {
    let depth = 10_000;
    let inner = chunk(b"DATA", &[]);
    let mut bytes = Vec::with_capacity(depth * 12 + inner.len());
    for i in 0..depth {
        let size = 4 + 12 * (depth - 1 - i) + inner.len();
        bytes.extend_from_slice(b"FORM");
        bytes.extend_from_slice(&(size as u32).to_be_bytes());
        bytes.extend_from_slice(if i == 0 { b"PTAT" } else { b"DEEP" });
    }
    bytes.extend_from_slice(&inner);
    let e = iff::parse(&bytes, &Limits::default()).unwrap_err();
    assert!(e.message.contains("nesting"), "{e}");
    let e = parse_bounded("10,000 nested FORMs", &bytes, Duration::from_secs(1)).unwrap_err();
    assert!(e.message.contains("nesting"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Regressions found by the fuzzer.
// ---------------------------------------------------------------------------------------

/// Every input under tests/fuzz_regressions/ parses without a panic.
#[test]
fn fuzz_regressions_replay() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    files.sort();
    for p in files {
        let bytes = std::fs::read(&p).unwrap();
        let r = std::panic::catch_unwind(|| check_input(&bytes));
        assert!(r.is_ok(), "{} panicked", p.display());
    }
}

/// The first fuzzer find: a 16384 m map whose chunk width is 6e-36 makes the pole spacing so
/// small that `map_width / spacing` saturates `u64` and `posts_per_side` (`+ 1`) overflowed
/// (a panic with overflow checks, a silent 0 in release builds, which CI uses).
#[test]
fn info_posts_per_side_does_not_wrap() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions/info_posts_per_side_overflow.trn");
    let t = Terrain::from_bytes(&std::fs::read(p).unwrap()).unwrap();
    assert!(t.header.map_width > 0.0 && t.header.pole_spacing() > 0.0);
    let posts = std::panic::catch_unwind(|| t.info().posts_per_side).expect("info() panicked");
    assert!(posts > 0, "posts_per_side wrapped to {posts}");
}

/// The second fuzzer find (`cargo fuzz run parse_trn`, ~86,000 runs), rebuilt here from
/// bytes made in code: a 0015 file whose flora map control block (PIMP `CNTL`, swg-trn §2.4)
/// says 2^32−1 × 2^32−1 elements of 2^32−1 bits. `validate` multiplied the three in u64,
/// which overflowed (a panic with overflow checks, a wrong size check in release builds); it
/// must report the control block instead.
#[test]
fn validate_flora_map_size_overflow_is_a_problem() {
    let mut cntl = Vec::new();
    for v in [u32::MAX, u32::MAX, u32::MAX, 0] {
        cntl.extend_from_slice(&v.to_le_bytes());
    }
    let mut body = chunk(b"CNTL", &cntl);
    body.extend(chunk(b"DATA", &[0; 16]));
    let pimp = form(b"PIMP", &form(b"0000", &body));
    let bytes = synthetic_terrain(&[], &pimp);
    let t = Terrain::from_bytes(&bytes).expect("the file is well formed");
    assert_eq!(t.flora_map.as_ref().map(|m| m.control.width), Some(u32::MAX));
    let problems = std::panic::catch_unwind(|| t.validate()).expect("validate panicked");
    assert!(problems.iter().any(|p| p.path == "flora_map.control" && p.message.contains("more data than any file can hold")), "{problems:?}");
    assert!(t.to_bytes() == bytes);
}
