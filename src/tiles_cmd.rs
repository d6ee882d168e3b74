//! `trnbake tiles` (web map tiles and the viewer page of a bake, crates/tiles) and `trnbake
//! serve` (a folder over HTTP on 127.0.0.1 with range requests, which PMTiles readers need).

use anyhow::{bail, Context, Result};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::app::height_options;
use crate::cli::{HeightArgs, SurfaceArgs};
use crate::parse::{parse_region, positive_metres};

/// Options of `tiles`.
#[derive(Args, Debug, Clone)]
pub struct TilesArgs {
    /// The .trn file (omit for the built-in demo terrain).
    pub file: Option<PathBuf>,
    /// Output folder: tiles/, tiles.json, index.html (created if missing).
    #[arg(long, short, default_value = "tiles-out")]
    pub output: PathBuf,
    /// Post spacing of the bake in metres (default: the file's pole spacing, 2 m on planets).
    #[arg(long, allow_negative_numbers = true)]
    pub spacing: Option<f64>,
    /// Region `X0,Z0,X1,Z1` in world metres (default: the whole map).
    #[arg(long, value_name = "X0,Z0,X1,Z1", allow_hyphen_values = true)]
    pub region: Option<String>,
    /// Layers, comma-separated: height (Terrarium), color (the preview), splat (splat
    /// preview), water, flora (density of --flora-class), shader and flora_id (lossless ids
    /// for the page's popup). Default: all; a map the terrain does not feed is left out.
    #[arg(long, value_delimiter = ',')]
    pub layers: Option<Vec<trnbake_tiles::Layer>>,
    /// Max zoom (default: the least zoom whose pixels are no wider than the spacing; 16 at 2 m).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=24))]
    pub max_zoom: Option<u8>,
    /// Min zoom (default: the greatest zoom at which the map fits in one tile).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=24))]
    pub min_zoom: Option<u8>,
    /// The flora class whose density the `flora` layer shows.
    #[arg(long, default_value = "collidable")]
    pub flora_class: String,
    /// Also write one PMTiles archive per layer (OUT/LAYER.pmtiles); open the page with `?pmtiles`.
    #[arg(long)]
    pub pmtiles: bool,
    /// Copy the page's libraries from this node_modules folder (an `npm ci` in viewer/) into
    /// OUT/lib, so the folder works offline; default: load them from a CDN with SRI.
    #[arg(long, value_name = "NODE_MODULES")]
    pub assets: Option<PathBuf>,
    /// Keep the bake's outputs (OUT/bake) instead of removing them at the end.
    #[arg(long)]
    pub keep_bake: bool,
    #[arg(long, value_enum, default_value_t = trnbake_bake::Backend::Auto)]
    pub backend: trnbake_bake::Backend,
    #[command(flatten)]
    pub height: HeightArgs,
    #[command(flatten)]
    pub surface: SurfaceArgs,
}

pub const TILES_EXAMPLES: &str = "\
Examples:
  trnbake tiles ../shared/data/swg/terrain/tatooine.trn -o tatooine-web --region 3000,-5200,3511,-4689 --spacing 1 --backend cpu
  trnbake tiles -o demo-web --spacing 8 --pmtiles   # the built-in demo terrain
  trnbake serve demo-web --port 8080 &              # then open http://127.0.0.1:8080/";

pub fn tiles(args: &TilesArgs, term: &std::sync::Arc<crate::report::Terminal>) -> Result<()> {
    let mut bake = match &args.file {
        Some(p) => trnbake_bake::BakeRequest::from_file(p, &args.output)?,
        None => trnbake_bake::BakeRequest::demo(&args.output),
    };
    bake.region = args.region.as_deref().map(parse_region).transpose()?;
    bake.spacing = args.spacing.map(|s| positive_metres("--spacing", s)).transpose()?;
    bake.height = height_options(&args.height, args.file.as_deref());
    bake.surface = args.surface.options();
    bake.normals = args.surface.normals;
    bake.backend = args.backend;
    bake.reporter = term.clone();
    if let (Some(a), Some(b)) = (args.min_zoom, args.max_zoom) {
        if a > b {
            bail!("--min-zoom {a} is above --max-zoom {b}");
        }
    }
    let assets = match &args.assets {
        None => trnbake_tiles::viewer::Assets::Cdn,
        Some(d) if d.is_dir() => trnbake_tiles::viewer::Assets::Local(d.clone()),
        Some(d) => bail!("--assets {}: no such folder (run `npm ci` in viewer/ and pass viewer/node_modules)", d.display()),
    };
    let r = trnbake_tiles::run(trnbake_tiles::TilesRequest {
        bake,
        out: args.output.clone(),
        layers: args.layers.clone().unwrap_or_else(|| trnbake_tiles::DEFAULT_LAYERS.to_vec()),
        max_zoom: args.max_zoom,
        min_zoom: args.min_zoom,
        flora_class: args.flora_class.clone(),
        pmtiles: args.pmtiles,
        assets,
        keep_bake: args.keep_bake,
    })?;
    if !term.quiet() {
        let g = r.grid;
        eprintln!(
            "tiled {}×{} posts at {} m: {} tiles ({:.1} MB) of {} at zooms {}..{} in {:.2} s (bake {:.2} s, tiles {:.2} s)",
            g.cols,
            g.rows,
            g.spacing,
            r.tiles,
            r.tile_bytes as f64 / 1e6,
            r.layers.join(", "),
            r.min_zoom,
            r.max_zoom,
            r.bake_seconds + r.tile_seconds,
            r.bake_seconds,
            r.tile_seconds
        );
        for p in &r.pmtiles {
            eprintln!("  wrote {}", p.display());
        }
        eprintln!("  wrote {}", args.output.join("index.html").display());
    }
    Ok(())
}

/// `trnbake serve`: files of `dir` on 127.0.0.1:`port` (0: any free port), GET and HEAD with
/// single byte ranges; runs until interrupted.
pub fn serve(dir: &Path, port: u16) -> Result<()> {
    if !dir.is_dir() {
        bail!("{}: no such folder", dir.display());
    }
    let root = std::fs::canonicalize(dir).with_context(|| format!("cannot open {}", dir.display()))?;
    let server = tiny_http::Server::http(("127.0.0.1", port)).map_err(|e| anyhow::anyhow!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    let addr = server.server_addr().to_ip().context("no IP address")?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "serving {} at http://{addr}/ (Ctrl-C stops)", dir.display())?;
        out.flush()?;
    }
    let server = std::sync::Arc::new(server);
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (server, root) = (server.clone(), root.clone());
            std::thread::spawn(move || {
                while let Ok(req) = server.recv() {
                    // A client that hung up is no error of the server's.
                    let _ = answer(&root, req);
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    Ok(())
}

fn header(name: &str, value: &str) -> tiny_http::Header {
    tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("valid header")
}

fn answer(root: &Path, req: tiny_http::Request) -> std::io::Result<()> {
    use tiny_http::{Method, Response};
    let head = *req.method() == Method::Head;
    if !(head || *req.method() == Method::Get) {
        return req.respond(Response::from_string("method not allowed").with_status_code(405));
    }
    let url = req.url().split(['?', '#']).next().unwrap_or("/").to_string();
    let Some(path) = local_path(root, &url) else {
        return req.respond(Response::from_string("not found").with_status_code(404));
    };
    let Ok(mut file) = std::fs::File::open(&path) else {
        return req.respond(Response::from_string("not found").with_status_code(404));
    };
    let len = file.metadata()?.len();
    let kind = content_type(&path);
    let range = req.headers().iter().find(|h| h.field.equiv("Range")).map(|h| h.value.as_str().to_string());
    let (status, start, end) = match range.as_deref().map(|r| parse_range(r, len)) {
        None => (200, 0, len),
        Some(Some((a, b))) => (206, a, b),
        Some(None) => {
            let r = Response::empty(416).with_header(header("Content-Range", &format!("bytes */{len}")));
            return req.respond(r);
        }
    };
    use std::io::{Read, Seek};
    file.seek(std::io::SeekFrom::Start(start))?;
    let body: Box<dyn Read + Send> = if head { Box::new(std::io::empty()) } else { Box::new(file.take(end - start)) };
    let mut r = Response::new(
        tiny_http::StatusCode(status),
        vec![header("Content-Type", kind), header("Accept-Ranges", "bytes")],
        body,
        Some((end - start) as usize),
        None,
    );
    if status == 206 {
        r = r.with_header(header("Content-Range", &format!("bytes {start}-{}/{len}", end - 1)));
    }
    req.respond(r)
}

/// The file under `root` a URL path names (`/` → index.html); `None` for anything that
/// would leave the folder.
fn local_path(root: &Path, url: &str) -> Option<PathBuf> {
    let mut p = root.to_path_buf();
    for part in url.split('/').filter(|s| !s.is_empty()) {
        let part = percent_decode(part)?;
        if part == "." || part == ".." || part.contains(['/', '\\', '\0']) {
            return None;
        }
        p.push(part);
    }
    if p.is_dir() {
        p.push("index.html");
    }
    Some(p)
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// One `bytes=` range of a file of `len` bytes as `[start, end)`; `None` when unsatisfiable.
fn parse_range(h: &str, len: u64) -> Option<(u64, u64)> {
    let spec = h.trim().strip_prefix("bytes=")?;
    let (a, b) = spec.split(',').next()?.trim().split_once('-')?;
    let (a, b) = (a.trim(), b.trim());
    let (start, end) = if a.is_empty() {
        let n: u64 = b.parse().ok()?;
        (len.saturating_sub(n), len)
    } else {
        let s: u64 = a.parse().ok()?;
        let e = if b.is_empty() { len } else { b.parse::<u64>().ok()?.saturating_add(1).min(len) };
        (s, e)
    };
    (start < end && start < len).then_some((start, end))
}

fn content_type(p: &Path) -> &'static str {
    match p.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "png" => "image/png",
        "webp" => "image/webp",
        "pmtiles" => "application/vnd.pmtiles",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_range("bytes=0-99", 1000), Some((0, 100)));
        assert_eq!(parse_range("bytes=900-", 1000), Some((900, 1000)));
        assert_eq!(parse_range("bytes=-100", 1000), Some((900, 1000)));
        assert_eq!(parse_range("bytes=990-2000", 1000), Some((990, 1000)));
        assert_eq!(parse_range("bytes=1000-", 1000), None);
        assert_eq!(parse_range("items=0-1", 1000), None);
    }

    #[test]
    fn paths_stay_inside() {
        let root = Path::new("/srv/x");
        assert_eq!(local_path(root, "/tiles/a%20b.png"), Some(PathBuf::from("/srv/x/tiles/a b.png")));
        assert_eq!(local_path(root, "/../etc/passwd"), None);
        assert_eq!(local_path(root, "/%2e%2e/etc"), None);
        assert_eq!(local_path(root, "/a%2fb"), None);
    }
}
