//! The static viewer page, `OUT/index.html`: MapLibre GL with the height tiles as 3-D terrain
//! and hillshade, the map layers, a scale in metres and a click popup naming the families
//! under the cursor. Its libraries (the npm packages `maplibre-gl` and `pmtiles`, pinned in
//! the repository's `viewer/package.json` and its lock) come from a public CDN with
//! subresource integrity (the hashes in `viewer/libs.json`, computed from the npm-installed
//! files by `viewer/sri.mjs`), or, with [`Assets::Local`], are copied beside the page so
//! the folder works offline.

use std::path::{Path, PathBuf};

use sha2::Digest;
use trnbake_bake::Reporter;

use crate::{Error, Result};

/// The pinned library files and their SRI hashes (`viewer/libs.json`).
pub const LIBS_JSON: &str = include_str!("../../../viewer/libs.json");
const PAGE: &str = include_str!("viewer.html");
/// Where the page loads the pinned packages from by default (a CDN serving npm packages).
pub const CDN: &str = "https://cdn.jsdelivr.net/npm";

/// How the page loads its libraries.
#[derive(Clone, Debug, Default)]
pub enum Assets {
    /// From the CDN, with subresource integrity.
    #[default]
    Cdn,
    /// Copied from a `node_modules` folder (an `npm ci` in `viewer/`) into `OUT/lib/`.
    Local(PathBuf),
}

/// One pinned file of a package.
#[derive(Clone, Debug)]
pub struct LibFile {
    pub package: String,
    pub version: String,
    /// Path inside the package (`dist/maplibre-gl.js`).
    pub file: String,
    /// `sha384-…` (base64).
    pub integrity: String,
}

/// The files of [`LIBS_JSON`].
pub fn lib_files() -> Vec<LibFile> {
    let v: serde_json::Value = serde_json::from_str(LIBS_JSON).expect("viewer/libs.json is JSON");
    let mut out = Vec::new();
    for (package, p) in v["packages"].as_object().expect("packages") {
        let version = p["version"].as_str().expect("version").to_string();
        for (file, integrity) in p["files"].as_object().expect("files") {
            out.push(LibFile {
                package: package.clone(),
                version: version.clone(),
                file: file.clone(),
                integrity: integrity.as_str().expect("hash").to_string(),
            });
        }
    }
    out
}

/// The SRI value (`sha384-…`) of some bytes.
pub fn sri(bytes: &[u8]) -> String {
    format!("sha384-{}", base64(&sha2::Sha384::digest(bytes)))
}

fn base64(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// Write `OUT/index.html` (and, for [`Assets::Local`], `OUT/lib/`).
pub fn write_page(out: &Path, meta: &serde_json::Value, assets: &Assets, reporter: &dyn Reporter) -> Result<()> {
    let mut tags = String::new();
    for f in lib_files() {
        let base = Path::new(&f.file).file_name().and_then(|n| n.to_str()).unwrap_or(&f.file).to_string();
        let (src, integrity) = match assets {
            Assets::Cdn => (format!("{CDN}/{}@{}/{}", f.package, f.version, f.file), Some(f.integrity.clone())),
            Assets::Local(modules) => {
                let from = modules.join(&f.package).join(&f.file);
                let bytes = std::fs::read(&from).map_err(|e| Error::io(&from, e))?;
                if sri(&bytes) != f.integrity {
                    reporter.warn(format!("{}: not the pinned {}@{} (its hash differs from viewer/libs.json)", from.display(), f.package, f.version));
                }
                let to = out.join("lib").join(&base);
                std::fs::create_dir_all(out.join("lib")).map_err(|e| Error::io(&out.join("lib"), e))?;
                trnbake_raster::fsutil::write_atomic(&to, &bytes).map_err(|e| Error::io(&to, e))?;
                (format!("lib/{base}"), None)
            }
        };
        let sri = integrity.map_or(String::new(), |i| format!(" integrity=\"{i}\" crossorigin=\"anonymous\""));
        if base.ends_with(".css") {
            tags.push_str(&format!("<link rel=\"stylesheet\" href=\"{src}\"{sri}>\n"));
        } else {
            tags.push_str(&format!("<script src=\"{src}\"{sri}></script>\n"));
        }
    }
    let title = meta["name"].as_str().unwrap_or("terrain");
    let page = PAGE.replace("<!--LIBS-->", &tags).replace("<!--TITLE-->", &html_escape(title));
    let path = out.join("index.html");
    trnbake_raster::fsutil::write_atomic(&path, page.as_bytes()).map_err(|e| Error::io(&path, e))
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn libs_are_pinned_with_sri() {
        let files = lib_files();
        assert!(files.iter().any(|f| f.package == "maplibre-gl" && f.file.ends_with(".js")));
        assert!(files.iter().any(|f| f.package == "pmtiles"));
        for f in files {
            assert!(f.integrity.starts_with("sha384-") && f.integrity.len() == 71, "{f:?}");
            assert!(f.version.chars().all(|c| c.is_ascii_digit() || c == '.'), "{f:?} is not an exact version");
        }
    }
}
