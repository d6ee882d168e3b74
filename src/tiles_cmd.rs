//! `trnbake tiles` (web map tiles and the viewer page of a bake, crates/tiles) and `trnbake
//! serve` (a folder over HTTP on 127.0.0.1 with range requests, which PMTiles readers need).

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::TilesArgs;
use crate::parse::{parse_region, positive_metres};

/// `height`: the evaluator options of `args.height` (resolved by the caller, `app`).
pub fn tiles(args: &TilesArgs, height: trnbake_swg::plan::HeightOptions, term: &std::sync::Arc<crate::report::Terminal>) -> Result<()> {
    let mut bake = match &args.file {
        Some(p) => trnbake_bake::BakeRequest::from_file(p, &args.output)?,
        None => trnbake_bake::BakeRequest::demo(&args.output),
    };
    bake.region = args.region.as_deref().map(parse_region).transpose()?;
    bake.spacing = args.spacing.map(|s| positive_metres("--spacing", s)).transpose()?;
    bake.height = height;
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
/// single byte ranges (RFC 9110 §14), a thread a connection, one request a connection
/// (`Connection: close`: no keep-alive state to get wrong); runs until interrupted.
pub fn serve(dir: &Path, port: u16) -> Result<()> {
    if !dir.is_dir() {
        bail!("{}: no such folder", dir.display());
    }
    let root = std::fs::canonicalize(dir).with_context(|| format!("cannot open {}", dir.display()))?;
    let listener = std::net::TcpListener::bind(("127.0.0.1", port)).with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    let addr = listener.local_addr()?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "serving {} at http://{addr}/ (Ctrl-C stops)", dir.display())?;
        out.flush()?;
    }
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let root = root.clone();
        std::thread::spawn(move || {
            // A client that hung up is no error of the server's.
            let _ = answer(&root, stream);
        });
    }
    Ok(())
}

fn answer(root: &Path, mut stream: std::net::TcpStream) -> std::io::Result<()> {
    use std::io::{BufRead, Read, Seek};
    stream.set_read_timeout(Some(std::time::Duration::from_secs(30)))?;
    let mut reader = std::io::BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    let mut range = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("range") {
                range = Some(v.trim().to_string());
            }
        }
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    let reply = |stream: &mut std::net::TcpStream, status: &str, headers: &str, body: &[u8]| -> std::io::Result<()> {
        write!(stream, "HTTP/1.1 {status}\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n", body.len())?;
        stream.write_all(body)
    };
    let head = method == "HEAD";
    if !(head || method == "GET") {
        return reply(&mut stream, "405 Method Not Allowed", "Allow: GET, HEAD\r\n", b"method not allowed\n");
    }
    let url = target.split(['?', '#']).next().unwrap_or("/");
    let Some(mut file) =
        local_path(root, url).and_then(|p| std::fs::File::open(&p).ok().map(|f| (p, f))).filter(|(_, f)| f.metadata().is_ok_and(|m| m.is_file()))
    else {
        return reply(&mut stream, "404 Not Found", "", b"not found\n");
    };
    let len = file.1.metadata()?.len();
    let kind = content_type(&file.0);
    let (status, start, end) = match range.as_deref().map(|r| parse_range(r, len)) {
        None => ("200 OK", 0, len),
        Some(Some((a, b))) => ("206 Partial Content", a, b),
        Some(None) => return reply(&mut stream, "416 Range Not Satisfiable", &format!("Content-Range: bytes */{len}\r\n"), b""),
    };
    let mut headers = format!("Content-Type: {kind}\r\nAccept-Ranges: bytes\r\n");
    if status.starts_with("206") {
        headers.push_str(&format!("Content-Range: bytes {start}-{}/{len}\r\n", end - 1));
    }
    write!(stream, "HTTP/1.1 {status}\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n", end - start)?;
    if !head {
        file.1.seek(std::io::SeekFrom::Start(start))?;
        std::io::copy(&mut (&mut file.1).take(end - start), &mut stream)?;
    }
    stream.flush()
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
