//! A whole map on disk (scs §B.2): `NAME.mbd` beside a folder `NAME/` holding the sector
//! files `sec±XXXX±ZZZZ.{base,aux,snd,data,desc,layer}`. Loading keeps every file as read so
//! that saving writes the same bytes; a single sector file can be opened on its own too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use super::codec::SECTOR_SIZE;
use super::codec::{CodecError, Desc, Mbd, RawSectorFile, SectorFile};

/// Largest number of sector files a map folder may hold (hostile-size limit).
pub const MAX_SECTOR_FILES: usize = 1 << 16;

/// Loading or saving a map failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MapError {
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: std::io::Error },
    #[error(transparent)]
    Codec(#[from] CodecError),
    #[error("{}: {message}", path.display())]
    Layout { path: PathBuf, message: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MapError + '_ {
    move |error| MapError::Io { path: path.to_path_buf(), error }
}

/// The files of one sector; absent files are `None`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sector {
    pub base: Option<SectorFile>,
    pub aux: Option<SectorFile>,
    pub snd: Option<SectorFile>,
    pub data: Option<RawSectorFile>,
    pub layer: Option<RawSectorFile>,
    pub desc: Option<Desc>,
}

impl Sector {
    /// The framed item files with their extension.
    pub fn item_files(&self) -> impl Iterator<Item = (&'static str, &SectorFile)> {
        [("base", &self.base), ("aux", &self.aux), ("snd", &self.snd)].into_iter().filter_map(|(e, f)| f.as_ref().map(|f| (e, f)))
    }
}

/// A map: the `.mbd` and its sectors by index (X, Z).
#[derive(Clone, Debug, PartialEq)]
pub struct Map {
    pub name: String,
    pub mbd: Mbd,
    pub sectors: BTreeMap<(i32, i32), Sector>,
}

/// `sec+0000+0000` for sector (0, 0), `sec-0001+0002` for (-1, 2).
pub fn sector_stem(sx: i32, sz: i32) -> String {
    format!("sec{sx:+05}{sz:+05}")
}

/// The sector index of a position: floor(coordinate / 4000) (scs §B.2).
pub fn sector_of(x: f64, z: f64) -> (i32, i32) {
    ((x / SECTOR_SIZE).floor() as i32, (z / SECTOR_SIZE).floor() as i32)
}

/// Parses `sec±XXXX±ZZZZ`.
pub fn parse_sector_stem(stem: &str) -> Option<(i32, i32)> {
    let s = stem.strip_prefix("sec")?;
    if s.len() != 10 || !s.is_ascii() {
        return None;
    }
    let (a, b) = s.split_at(5);
    let p = |t: &str| -> Option<i32> {
        if !(t.starts_with('+') || t.starts_with('-')) || !t[1..].bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    };
    Some((p(a)?, p(b)?))
}

/// One parsed sector file of any kind.
pub enum AnyFile {
    Framed(SectorFile),
    Raw(RawSectorFile),
    Desc(Desc),
}

/// Read one sector file by its extension.
pub fn read_sector_file(path: &Path) -> Result<AnyFile, MapError> {
    let bytes = std::fs::read(path).map_err(io(path))?;
    let name = path.display().to_string();
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    Ok(match ext {
        "base" | "aux" | "snd" => AnyFile::Framed(SectorFile::read(&bytes, &name)?),
        "data" | "layer" => AnyFile::Raw(RawSectorFile::read(&bytes, &name)?),
        "desc" => AnyFile::Desc(Desc::read(&bytes, &name)?),
        _ => {
            return Err(MapError::Layout {
                path: path.to_path_buf(),
                message: format!("`.{ext}` is not a sector file extension (base, aux, snd, data, layer, desc)"),
            })
        }
    })
}

impl Map {
    /// A new empty map.
    pub fn new(name: &str, uid: u64) -> Map {
        Map { name: name.to_string(), mbd: Mbd::new(uid), sectors: BTreeMap::new() }
    }

    /// The folder of sector files beside `mbd`.
    pub fn folder_of(mbd: &Path) -> PathBuf {
        mbd.with_extension("")
    }

    /// Load `NAME.mbd` and every sector file in `NAME/`.
    pub fn load(mbd_path: &Path) -> Result<Map, MapError> {
        let bytes = std::fs::read(mbd_path).map_err(io(mbd_path))?;
        let mbd = Mbd::read(&bytes, &mbd_path.display().to_string())?;
        let name = mbd_path.file_stem().and_then(|s| s.to_str()).unwrap_or("map").to_string();
        let dir = Self::folder_of(mbd_path);
        let mut sectors: BTreeMap<(i32, i32), Sector> = BTreeMap::new();
        if dir.is_dir() {
            let mut entries: Vec<PathBuf> =
                std::fs::read_dir(&dir).map_err(io(&dir))?.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>().map_err(io(&dir))?;
            if entries.len() > MAX_SECTOR_FILES {
                return Err(MapError::Layout { path: dir, message: format!("{} files; at most {MAX_SECTOR_FILES} are read", entries.len()) });
            }
            entries.sort();
            for p in entries {
                let Some(stem) = p.file_stem().and_then(|s| s.to_str()) else { continue };
                let Some(key) = parse_sector_stem(stem) else { continue };
                let s = sectors.entry(key).or_default();
                match (p.extension().and_then(|e| e.to_str()), read_sector_file(&p)?) {
                    (Some("base"), AnyFile::Framed(f)) => s.base = Some(f),
                    (Some("aux"), AnyFile::Framed(f)) => s.aux = Some(f),
                    (Some("snd"), AnyFile::Framed(f)) => s.snd = Some(f),
                    (Some("data"), AnyFile::Raw(f)) => s.data = Some(f),
                    (Some("layer"), AnyFile::Raw(f)) => s.layer = Some(f),
                    (_, AnyFile::Desc(d)) => s.desc = Some(d),
                    _ => unreachable!("read_sector_file dispatches on the extension"),
                }
            }
        }
        Ok(Map { name, mbd, sectors })
    }

    /// Every file of the map as (relative path, bytes), the `.mbd` first.
    pub fn files(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = vec![(PathBuf::from(format!("{}.mbd", self.name)), self.mbd.to_bytes())];
        for (&(sx, sz), s) in &self.sectors {
            let stem = sector_stem(sx, sz);
            let p = |ext: &str| PathBuf::from(&self.name).join(format!("{stem}.{ext}"));
            for (ext, f) in s.item_files() {
                out.push((p(ext), f.to_bytes()));
            }
            if let Some(d) = &s.data {
                out.push((p("data"), d.to_bytes()));
            }
            if let Some(d) = &s.desc {
                out.push((p("desc"), d.to_bytes()));
            }
            if let Some(d) = &s.layer {
                out.push((p("layer"), d.to_bytes()));
            }
        }
        out
    }

    /// Write the map into `dir` (`dir/NAME.mbd`, `dir/NAME/…`), each file atomically.
    pub fn save(&self, dir: &Path) -> Result<Vec<PathBuf>, MapError> {
        let sub = dir.join(&self.name);
        std::fs::create_dir_all(&sub).map_err(io(&sub))?;
        let mut written = Vec::new();
        for (rel, bytes) in self.files() {
            let p = dir.join(rel);
            trnbake_raster::fsutil::write_atomic(&p, &bytes).map_err(io(&p))?;
            written.push(p);
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sector_names() {
        assert_eq!(sector_stem(0, 0), "sec+0000+0000");
        assert_eq!(sector_stem(-1, 12), "sec-0001+0012");
        assert_eq!(parse_sector_stem("sec-0001+0012"), Some((-1, 12)));
        assert_eq!(parse_sector_stem("sec+00a1+0012"), None);
        assert_eq!(sector_of(-0.5, 3999.9), (-1, 0));
        assert_eq!(sector_of(4000.0, 0.0), (1, 0));
    }
}
