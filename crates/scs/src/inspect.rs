//! `scs info` and `scs check`: a map (`.mbd` + its folder) or one sector (any of its files;
//! its sibling files with the same stem are read with it).
//!
//! The checks are the in-project ones of scs §B.9: every file is consumed exactly (the
//! reader's byte accounting), quad_count = size_x · size_y, a Terrain side's rows follow the
//! width sequence, a Terrain's columns = ceil(length / step), a Bezier patch's quad grid is
//! (x_tess + 1) × (z_tess + 1) with tess ≤ 250, tokens are valid, and node references
//! resolve. Every failure names the file, the item, the field and the byte offset; all
//! failures are reported, not just the first.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use super::codec::{Item, Layout, QuadInfo, SectorFile, TerrainItem};
use super::map::{parse_sector_stem, read_sector_file, AnyFile, Map, MapError};
use super::token::Token;

/// One failed check.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Problem {
    pub file: String,
    /// `terrain 0x…` etc., or `None` for file-level problems.
    pub item: Option<String>,
    pub field: String,
    pub offset: usize,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.item {
            Some(i) => write!(f, "{}: {i}: {} at offset {}: {}", self.file, self.field, self.offset, self.message),
            None => write!(f, "{}: {} at offset {}: {}", self.file, self.field, self.offset, self.message),
        }
    }
}

/// A parsed framed file with where its items lie.
pub struct LoadedFile {
    pub path: PathBuf,
    pub file: SectorFile,
    pub layout: Layout,
}

/// The files `scs info`/`check` look at: the framed files parsed with layouts, plus the
/// problems met while reading (a file that does not parse is a problem, not an abort).
pub struct Loaded {
    pub files: Vec<LoadedFile>,
    pub other_files: usize,
    pub sectors: Vec<(i32, i32)>,
    pub problems: Vec<Problem>,
}

fn read_problem(path: &Path, e: MapError) -> Problem {
    use super::codec::CodecError as C;
    let file = path.display().to_string();
    match e {
        MapError::Codec(C::Truncated { field, offset, need, have, .. }) => {
            Problem { file, item: None, field, offset, message: format!("need {need} bytes, only {have} left") }
        }
        MapError::Codec(C::Count { field, offset, count, need, have, .. }) => {
            Problem { file, item: None, field, offset, message: format!("count {count} needs {need} bytes, only {have} left") }
        }
        MapError::Codec(C::UnknownItem { item_type, offset, .. }) => {
            Problem { file, item: None, field: "item_type".into(), offset, message: format!("item type 0x{item_type:02x} is not modelled") }
        }
        MapError::Codec(C::Trailing { offset, extra, .. }) => {
            Problem { file, item: None, field: "end of file".into(), offset, message: format!("{extra} bytes not consumed") }
        }
        MapError::Codec(C::Invalid { field, offset, message, .. }) => Problem { file, item: None, field, offset, message },
        other => Problem { file, item: None, field: "file".into(), offset: 0, message: other.to_string() },
    }
}

/// The files every sector has (its `.snd` is optional).
pub const REQUIRED_SECTOR_FILES: [&str; 5] = ["base", "aux", "data", "desc", "layer"];

/// Load `path`: a `.mbd` (the whole map) or one sector file (that sector).
pub fn load(path: &Path) -> Result<Loaded, MapError> {
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut problems = Vec::new();
    let is_mbd = path.extension().is_some_and(|e| e == "mbd");
    if is_mbd {
        let bytes = std::fs::read(path).map_err(|error| MapError::Io { path: path.to_path_buf(), error })?;
        if let Err(e) = super::codec::Mbd::read(&bytes, &path.display().to_string()) {
            problems.push(read_problem(path, e.into()));
        }
        let dir = Map::folder_of(path);
        if dir.is_dir() {
            for e in std::fs::read_dir(&dir).map_err(|error| MapError::Io { path: dir.clone(), error })? {
                let p = e.map_err(|error| MapError::Io { path: dir.clone(), error })?.path();
                if p.file_stem().and_then(|s| s.to_str()).and_then(parse_sector_stem).is_some() {
                    paths.push(p);
                }
            }
            if paths.is_empty() {
                problems.push(Problem {
                    file: dir.display().to_string(),
                    item: None,
                    field: "sectors".into(),
                    offset: 0,
                    message: "the map's sector folder holds no sector files (sec±XXXX±ZZZZ.*)".into(),
                });
            }
        } else {
            // A map is its `.mbd` and the folder of the same name beside it (scs §B.2): without
            // the folder there is nothing to check, which must not read as "every check passed".
            problems.push(Problem {
                file: dir.display().to_string(),
                item: None,
                field: "sectors".into(),
                offset: 0,
                message: "the sector folder the .mbd implies is missing".into(),
            });
        }
    } else {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if parse_sector_stem(stem).is_none() {
            return Err(MapError::Layout { path: path.to_path_buf(), message: "neither a .mbd nor a sector file named sec±XXXX±ZZZZ.EXT".into() });
        }
        if !path.exists() {
            return Err(MapError::Io { path: path.to_path_buf(), error: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file") });
        }
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        for ext in ["base", "aux", "snd", "data", "layer", "desc"] {
            let p = dir.join(format!("{stem}.{ext}"));
            if p.exists() {
                paths.push(p);
            }
        }
    }
    if paths.len() > super::map::MAX_SECTOR_FILES {
        return Err(MapError::Layout {
            path: path.to_path_buf(),
            message: format!("{} sector files; at most {} are read", paths.len(), super::map::MAX_SECTOR_FILES),
        });
    }
    paths.sort();
    // Every sector has these five files (scs §B.2; `.snd` is optional): one that is missing
    // must not read as "every check passed" (issue 37 item 7).
    let mut stems: BTreeMap<(PathBuf, String), Vec<String>> = BTreeMap::new();
    for p in &paths {
        if let (Some(stem), Some(ext)) = (p.file_stem().and_then(|s| s.to_str()), p.extension().and_then(|e| e.to_str())) {
            let dir = p.parent().map(Path::to_path_buf).unwrap_or_default();
            stems.entry((dir, stem.to_string())).or_default().push(ext.to_string());
        }
    }
    for ((dir, stem), exts) in &stems {
        for ext in REQUIRED_SECTOR_FILES {
            if !exts.iter().any(|e| e == ext) {
                problems.push(Problem {
                    file: dir.join(format!("{stem}.{ext}")).display().to_string(),
                    item: None,
                    field: "file".into(),
                    offset: 0,
                    message: format!("missing: every sector has its {} files", REQUIRED_SECTOR_FILES.map(|e| format!(".{e}")).join(", ")),
                });
            }
        }
    }
    let mut files = Vec::new();
    let mut other_files = 0;
    let mut sectors: Vec<(i32, i32)> = Vec::new();
    for p in paths {
        if let Some(k) = p.file_stem().and_then(|s| s.to_str()).and_then(parse_sector_stem) {
            if !sectors.contains(&k) {
                sectors.push(k);
            }
        }
        if std::fs::metadata(&p).map_err(|error| MapError::Io { path: p.clone(), error })?.len() == 0 {
            problems.push(Problem {
                file: p.display().to_string(),
                item: None,
                field: "file".into(),
                offset: 0,
                message: "empty file: a sector file has at least its header".into(),
            });
            continue;
        }
        let framed = matches!(p.extension().and_then(|e| e.to_str()), Some("base" | "aux" | "snd"));
        if framed {
            let bytes = std::fs::read(&p).map_err(|error| MapError::Io { path: p.clone(), error })?;
            match SectorFile::read_with_layout(&bytes, &p.display().to_string()) {
                Ok((file, layout)) => files.push(LoadedFile { path: p, file, layout }),
                Err(e) => problems.push(read_problem(&p, e.into())),
            }
        } else {
            match read_sector_file(&p) {
                Ok(AnyFile::Raw(_) | AnyFile::Desc(_)) => other_files += 1,
                Ok(AnyFile::Framed(_)) => {}
                Err(e) => problems.push(read_problem(&p, e)),
            }
        }
    }
    Ok(Loaded { files, other_files, sectors, problems })
}

/// The number of rows a Terrain side of `size` metres has (scs §B.6): widths 1, 1, 1, 2, 6,
/// 6, 10, 10, 10, 20, 40, 50, 50, 50, 100, then 100, subtracted until the size is used up.
pub fn terrain_rows(size_m: f64) -> u32 {
    const W: [f64; 15] = [1.0, 1.0, 1.0, 2.0, 6.0, 6.0, 10.0, 10.0, 10.0, 20.0, 40.0, 50.0, 50.0, 50.0, 100.0];
    let (mut left, mut rows) = (size_m, 0u32);
    while left > 1e-6 {
        left -= W.get(rows as usize).copied().unwrap_or(100.0);
        rows += 1;
    }
    rows
}

/// A Terrain's columns: ceil(length / step), with the adaptive tessellation cases of §B.6.
pub fn terrain_cols(t: &TerrainItem) -> u64 {
    let mut step = f64::from(t.step());
    let length = f64::from(t.length);
    if t.kdop.flags & (1 << 19) != 0 {
        if step == 2.0 && length < 2.0 {
            step = 0.2;
        } else if step == 16.0 && length > 64.0 {
            step = 32.0;
        }
    }
    if !(length.is_finite() && length > 0.0) {
        return 0;
    }
    (length / step - 1e-6).ceil().max(0.0) as u64
}

fn item_name(it: &Item) -> String {
    format!("{} 0x{:016x}", it.type_name(), it.kdop().uid)
}

fn tokens_of(it: &Item) -> Vec<(&'static str, Token)> {
    let mut v = Vec::new();
    let quad = |v: &mut Vec<(&'static str, Token)>, q: &QuadInfo| {
        for m in &q.materials {
            v.push(("quad_info.materials", m.material));
        }
    };
    match it {
        Item::Terrain(t) => {
            for r in &t.railings {
                v.push(("terrain.railing.model", r.model));
            }
            for s in [&t.right, &t.left] {
                v.push(("side.profile", s.profile));
                v.push(("side.prev_profile", s.prev_profile));
                for g in &s.vegetation {
                    v.push(("side.vegetation", g.vegetation));
                }
            }
            quad(&mut v, &t.quad_right);
            quad(&mut v, &t.quad_left);
            for e in &t.edges {
                v.push(("terrain.edge", *e));
            }
        }
        Item::BezierPatch(b) => {
            for g in &b.vegetation {
                v.push(("bezier.vegetation", g.vegetation));
            }
            quad(&mut v, &b.quad);
        }
        Item::Model(m) => {
            v.extend([("model.model", m.model), ("model.look", m.look), ("model.variant", m.variant), ("model.terrain_material", m.terrain_material)]);
            for p in &m.additional_parts {
                v.push(("model.additional_parts", *p));
            }
        }
    }
    v
}

fn check_quad(p: &mut Vec<Problem>, file: &str, item: &str, q: &QuadInfo, at: usize, version: u32, which: &str) {
    let want = u64::from(q.size_x) * u64::from(q.size_y);
    if q.quads.len() as u64 != want {
        p.push(Problem {
            file: file.into(),
            item: Some(item.into()),
            field: format!("{which}.quad_count"),
            offset: at + q.quad_count_offset(version),
            message: format!("{} quads, but size_x {} × size_y {} = {want}", q.quads.len(), q.size_x, q.size_y),
        });
    }
}

/// Run every check (module docs) on `loaded`.
pub fn check(loaded: &Loaded) -> Vec<Problem> {
    let mut p = loaded.problems.clone();
    let mut nodes: HashSet<u64> = HashSet::new();
    let mut items: HashSet<u64> = HashSet::new();
    for f in &loaded.files {
        nodes.extend(f.file.nodes.iter().map(|n| n.uid));
        items.extend(f.file.items.iter().map(|i| i.kdop().uid));
    }
    for f in &loaded.files {
        let file = f.path.display().to_string();
        let version = f.file.header.version;
        if !f.file.header.game_id.is_valid() {
            p.push(Problem {
                file: file.clone(),
                item: None,
                field: "header.game_id".into(),
                offset: 4,
                message: format!("invalid token 0x{:016x}", f.file.header.game_id.0),
            });
        }
        for (it, &at) in f.file.items.iter().zip(&f.layout.items) {
            let name = item_name(it);
            for (field, t) in tokens_of(it) {
                if !t.is_valid() {
                    p.push(Problem {
                        file: file.clone(),
                        item: Some(name.clone()),
                        field: field.into(),
                        offset: at,
                        message: format!("invalid token 0x{:016x}", t.0),
                    });
                }
            }
            for (k, uid) in it.node_refs().into_iter().enumerate() {
                if !nodes.contains(&uid) {
                    let (field, off) = match it {
                        Item::Terrain(_) => (if k == 0 { "terrain.node0_uid" } else { "terrain.node1_uid" }, at + 57 + 8 * k),
                        Item::BezierPatch(_) => ("bezier.node_uid", at + 57 + 192 + 4),
                        Item::Model(m) => ("model.node_uid", at + 57 + 28 + 8 * m.additional_parts.len()),
                    };
                    p.push(Problem {
                        file: file.clone(),
                        item: Some(name.clone()),
                        field: field.into(),
                        offset: off,
                        message: format!("node 0x{uid:016x} is not in the map"),
                    });
                }
            }
            match it {
                Item::Terrain(t) => {
                    let off = t.offsets(version);
                    check_quad(&mut p, &file, &name, &t.quad_right, at + off.quad_right, version, "quad_right");
                    check_quad(&mut p, &file, &name, &t.quad_left, at + off.quad_left, version, "quad_left");
                    for (side, q, qat) in [(&t.right, &t.quad_right, off.quad_right), (&t.left, &t.quad_left, off.quad_left)] {
                        let which = if std::ptr::eq(side, &t.right) { "quad_right" } else { "quad_left" };
                        let rows = terrain_rows(f64::from(side.size) / 10.0);
                        let size_x_at = at + qat + q.quad_count_offset(version) - 4;
                        if u32::from(q.size_x) != rows {
                            p.push(Problem {
                                file: file.clone(),
                                item: Some(name.clone()),
                                field: format!("{which}.size_x"),
                                offset: size_x_at,
                                message: format!(
                                    "{} rows, but a side of {} m has {rows} by the width sequence 1,1,1,2,6,6,10,…",
                                    q.size_x,
                                    f64::from(side.size) / 10.0
                                ),
                            });
                        }
                        let cols = terrain_cols(t);
                        if u64::from(q.size_y) != cols {
                            p.push(Problem {
                                file: file.clone(),
                                item: Some(name.clone()),
                                field: format!("{which}.size_y"),
                                offset: size_x_at + 2,
                                message: format!("{} columns, but ceil(length {} / step {}) = {cols}", q.size_y, t.length, t.step()),
                            });
                        }
                    }
                }
                Item::BezierPatch(b) => {
                    let qat = at + b.quad_offset();
                    check_quad(&mut p, &file, &name, &b.quad, qat, version, "quad");
                    let size_x_at = qat + b.quad.quad_count_offset(version) - 4;
                    if b.x_tess > 250 || b.z_tess > 250 {
                        p.push(Problem {
                            file: file.clone(),
                            item: Some(name.clone()),
                            field: "bezier.x_tess".into(),
                            offset: at + 57 + 192,
                            message: format!("tessellation {}×{} is over 250", b.x_tess, b.z_tess),
                        });
                    }
                    if u32::from(b.quad.size_x) != u32::from(b.x_tess) + 1 || u32::from(b.quad.size_y) != u32::from(b.z_tess) + 1 {
                        p.push(Problem {
                            file: file.clone(),
                            item: Some(name.clone()),
                            field: "quad.size_x".into(),
                            offset: size_x_at,
                            message: format!(
                                "quad grid {}×{}, but tessellation {}×{} needs {}×{}",
                                b.quad.size_x,
                                b.quad.size_y,
                                b.x_tess,
                                b.z_tess,
                                u32::from(b.x_tess) + 1,
                                u32::from(b.z_tess) + 1
                            ),
                        });
                    }
                }
                Item::Model(_) => {}
            }
        }
        for (k, n) in f.file.nodes.iter().enumerate() {
            let nat = f.layout.nodes + 4 + 56 * k;
            for (field, uid, off) in [("node.backward_item", n.backward_item, 36), ("node.forward_item", n.forward_item, 44)] {
                if uid != 0 && !items.contains(&uid) {
                    p.push(Problem {
                        file: file.clone(),
                        item: Some(format!("node 0x{:016x}", n.uid)),
                        field: field.into(),
                        offset: nat + off,
                        message: format!("item 0x{uid:016x} is not in the map"),
                    });
                }
            }
        }
    }
    p
}

/// `scs info`: counts and bounds.
#[derive(Debug, serde::Serialize)]
pub struct Info {
    pub version: Option<u32>,
    pub sectors: Vec<String>,
    pub files: usize,
    pub items: BTreeMap<String, usize>,
    pub nodes: usize,
    /// Node positions: min X, min Y, min Z, max X, max Y, max Z (metres).
    pub node_bounds: Option<[f64; 6]>,
    /// k-DOP bounds of the items over the first three axes (min X, Y, Z, max X, Y, Z).
    pub item_bounds: Option<[f64; 6]>,
    pub problems: usize,
}

pub fn info(loaded: &Loaded) -> Info {
    let mut items: BTreeMap<String, usize> = BTreeMap::new();
    let (mut nb, mut ib): (Option<[f64; 6]>, Option<[f64; 6]>) = (None, None);
    let grow = |b: &mut Option<[f64; 6]>, lo: [f64; 3], hi: [f64; 3]| {
        let e = b.get_or_insert([f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY]);
        for k in 0..3 {
            e[k] = e[k].min(lo[k]);
            e[3 + k] = e[3 + k].max(hi[k]);
        }
    };
    let mut nodes = 0;
    for f in &loaded.files {
        for it in &f.file.items {
            *items.entry(it.type_name().to_string()).or_default() += 1;
            let k = it.kdop();
            grow(&mut ib, [k.min[0], k.min[1], k.min[2]].map(f64::from), [k.max[0], k.max[1], k.max[2]].map(f64::from));
        }
        for n in &f.file.nodes {
            nodes += 1;
            let p = n.position_m();
            grow(&mut nb, p, p);
        }
    }
    let mut sectors = loaded.sectors.clone();
    sectors.sort();
    Info {
        version: loaded.files.first().map(|f| f.file.header.version),
        sectors: sectors.iter().map(|&(x, z)| super::map::sector_stem(x, z)).collect(),
        files: loaded.files.len() + loaded.other_files,
        items,
        nodes,
        node_bounds: nb,
        item_bounds: ib,
        problems: loaded.problems.len(),
    }
}
