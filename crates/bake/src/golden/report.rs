//! The reports of `trnbake check`, written only into the folder `--report DIR` names:
//! - `report.html`: one self-contained page (images embedded, no network, no file beside it
//!   needed), per failing map expected | actual | difference side by side and a slider that
//!   wipes from the expected map to the actual one; opens from disk as a CI artifact;
//! - `report.md`: a table, and per failing map its numbers and pictures (the PNGs beside it);
//! - `summary.md`: for a CI job summary (`$GITHUB_STEP_SUMMARY`, appended there by the command
//!   line when that variable is set): the table and, per failing map, a thumbnail of the
//!   difference drawn in coloured squares (GitHub strips `data:` images from rendered
//!   Markdown and cannot reach files of the run, so text is the picture that shows there);
//! - `junit.xml`: for CI systems, one test case per map, a failure element for each that fails.

use super::{fmt_metres, CheckSummary, MapOutcome, Status};
use crate::Result;
use std::fmt::Write as _;
use std::path::Path;
use trnbake_raster::error::Context;
use trnbake_raster::fsutil::write_atomic;

pub const MARKDOWN_FILE: &str = "report.md";
pub const JUNIT_FILE: &str = "junit.xml";
pub const HTML_FILE: &str = "report.html";
pub const SUMMARY_FILE: &str = "summary.md";

/// Thumbnails in `summary.md` are at most this many squares a side.
pub const THUMBNAIL_CELLS: u32 = 32;
/// `summary.md` draws thumbnails for this many failing maps at most (a GitHub step summary
/// holds 1 MiB).
pub const THUMBNAILS_MAX: usize = 40;

fn headline(s: &CheckSummary) -> String {
    let n = s.outcomes.len();
    match s.failures() {
        0 => format!("all {n} maps match their goldens"),
        f => format!("{f} of {n} maps fail"),
    }
}

fn backend_text(s: &CheckSummary) -> String {
    match &s.adapter {
        Some(a) => format!("{} ({a})", s.backend),
        None => s.backend.to_string(),
    }
}

/// Markdown table cells must not contain `|` or line breaks.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The line under a report's headline: goldens, backend, posts, time, version.
fn run_line(s: &CheckSummary) -> String {
    format!("Goldens `{}` · backend {} · {} posts in {:.2} s · trnbake {}", s.golden.display(), backend_text(s), s.posts, s.seconds, env!("CARGO_PKG_VERSION"))
}

pub fn markdown(s: &CheckSummary) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# trnbake check: {}\n", headline(s));
    let _ = writeln!(md, "{}\n", run_line(s));
    md += "| fixture | map | posts | result | max difference | posts over tolerance | PSNR | changed area (m) |\n";
    md += "|---|---|---|---|---|---|---|---|\n";
    for o in &s.outcomes {
        let size = o.size.map_or("—".into(), |(c, r)| format!("{c}×{r}"));
        let result = if o.status.is_failure() { format!("**{}**", o.status.label()) } else { o.status.label().into() };
        let (max, over, psnr) = figures_cells(o);
        let _ = writeln!(
            md,
            "| {} | {} | {size} | {result} | {max} | {over} | {psnr} | {} |",
            cell(&o.fixture),
            o.map,
            o.changed_area_text().unwrap_or("—".into())
        );
    }
    let failing: Vec<&MapOutcome> = s.outcomes.iter().filter(|o| o.status.is_failure()).collect();
    for o in &failing {
        let _ = writeln!(md, "\n## {} / {}: {}\n", o.fixture, o.map, o.status.label());
        let what = if o.status == Status::Error { "Terrain" } else { "Golden" };
        let _ = writeln!(md, "{what} `{}`: {}\n", o.file, o.message);
        if let [diff, sbs] = o.images.as_slice() {
            let _ = writeln!(md, "Difference (`{diff}`):\n\n![difference]({diff})\n");
            let _ = writeln!(md, "Expected | actual | difference (`{sbs}`):\n\n![side by side]({sbs})\n");
        }
    }
    if failing.iter().any(|o| !o.images.is_empty()) {
        md += "\nIn the difference images one pixel is one post, north up. Posts that did not change are \
               the expected map in dark grey; blue posts changed within the tolerance; yellow to red \
               posts exceed it (red = the largest difference, log scale).\n";
    }
    md += &bless_advice(s);
    md
}

/// "If the change is intended, run `…` and commit the rewritten goldens."
fn bless_advice(s: &CheckSummary) -> String {
    match &s.bless_command {
        Some(c) => format!("\nIf the change is intended, run `{c}` and commit the rewritten goldens.\n"),
        None => String::new(),
    }
}

/// The cells of a comparison in `| max | over | psnr |` form.
fn figures_cells(o: &MapOutcome) -> (String, String, String) {
    match &o.comparison {
        Some(c) => (
            match o.lsb_metres {
                Some(m) => format!("{} LSB ({} m)", c.max_diff, fmt_metres(c.max_diff as f64 * m)),
                None => format!("{} LSB", c.max_diff),
            },
            format!("{} (tolerance {} LSB, {} allowed)", c.posts_over, o.tolerance_lsb, o.max_posts_over),
            if c.psnr_db.is_finite() { format!("{:.1} dB", c.psnr_db) } else { "∞".into() },
        ),
        None => ("—".into(), "—".into(), "—".into()),
    }
}

/// The difference of a failing map in coloured squares, north up, at most
/// [`THUMBNAIL_CELLS`] a side: each square shows the largest difference of its posts, as the
/// heat map colours it (⬛ unchanged, 🟦 within the tolerance, 🟨 🟧 🟥 beyond it on a log
/// scale, 🟥 the largest). Returns the text and the posts a square covers a side.
pub fn thumbnail(o: &MapOutcome) -> Option<(String, u32)> {
    let (c, (w, h)) = (o.comparison.as_ref()?, o.size?);
    if c.identical() || c.per_post.len() != w as usize * h as usize {
        return None;
    }
    let k = w.max(h).div_ceil(THUMBNAIL_CELLS).max(1);
    let base = o.tolerance_lsb.max(1) as f64;
    let span = (c.max_diff as f64 / base).ln();
    let mut t = String::new();
    for r0 in (0..h).step_by(k as usize) {
        for c0 in (0..w).step_by(k as usize) {
            let mut d = 0u32;
            for r in r0..(r0 + k).min(h) {
                let row = &c.per_post[(r * w) as usize..((r + 1) * w) as usize];
                d = d.max(row[c0 as usize..(c0 + k).min(w) as usize].iter().copied().max().unwrap_or(0));
            }
            let d = u64::from(d);
            t.push(match d {
                0 => '⬛',
                d if d <= o.tolerance_lsb => '🟦',
                d => {
                    let x = if span > 0.0 { ((d as f64 / base).ln() / span).clamp(0.0, 1.0) } else { 1.0 };
                    ['🟨', '🟧', '🟥'][((x * 3.0) as usize).min(2)]
                }
            });
        }
        t.push('\n');
    }
    Some((t, k))
}

/// `summary.md`: the headline, a table of the maps that failed (all maps when none did), and
/// per failing map its numbers and a thumbnail of the difference (see [`thumbnail`]); what to
/// run if the change is intended; where the pictures are.
pub fn summary_markdown(s: &CheckSummary) -> String {
    let mut md = String::new();
    let icon = if s.failures() == 0 { "✅" } else { "❌" };
    let _ = writeln!(md, "## {icon} trnbake check: {}\n", headline(s));
    let _ = writeln!(md, "{}\n", run_line(s));
    let failing: Vec<&MapOutcome> = s.outcomes.iter().filter(|o| o.status.is_failure()).collect();
    let rows: Vec<&MapOutcome> = if failing.is_empty() { s.outcomes.iter().collect() } else { failing.clone() };
    md += "| fixture | map | result | max difference | posts over tolerance | changed area (m) |\n|---|---|---|---|---|---|\n";
    for o in &rows {
        let (max, over, _) = figures_cells(o);
        let _ = writeln!(md, "| {} | {} | {} | {max} | {over} | {} |", cell(&o.fixture), o.map, o.status.label(), o.changed_area_text().unwrap_or("—".into()));
    }
    if !failing.is_empty() {
        let _ = writeln!(md, "\n{} other maps pass.", s.outcomes.len() - failing.len());
    }
    for (i, o) in failing.iter().enumerate() {
        let _ = writeln!(md, "\n### {} / {}: {}\n", o.fixture, o.map, o.status.label());
        let what = if o.status == Status::Error { "Terrain" } else { "Golden" };
        let _ = writeln!(md, "{what} `{}`: {}\n", o.file, cell(&o.message));
        match thumbnail(o) {
            Some(_) if i >= THUMBNAILS_MAX => md += "(no thumbnail: too many failing maps for one summary; see the HTML report)\n",
            Some((t, k)) => {
                let _ = writeln!(md, "```text\n{t}```\n");
                let _ = writeln!(
                    md,
                    "<sub>The difference, north up, one square = {k}×{k} posts: ⬛ unchanged, 🟦 within the tolerance, 🟨 🟧 🟥 beyond it (🟥 = the largest difference).</sub>"
                );
            }
            None => {}
        }
    }
    if failing.iter().any(|o| o.pictures.is_some() || !o.images.is_empty()) {
        md += "\nThe pictures (expected, actual, difference, and a slider between them) are in `report.html` of the report folder.\n";
    }
    md += &bless_advice(s);
    md
}

/// A PNG as a `data:` URI.
fn data_uri(png: &[u8]) -> String {
    format!("data:image/png;base64,{}", base64(png))
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for ch in bytes.chunks(3) {
        let n = (u32::from(ch[0]) << 16) | (u32::from(*ch.get(1).unwrap_or(&0)) << 8) | u32::from(*ch.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= ch.len() {
                out.push(char::from(A[((n >> (18 - 6 * k)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

const HTML_STYLE: &str = "\
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:2em;border-top:1px solid #ccc;padding-top:1em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}
tr.fail td{background:#fde8e8}code{background:#f3f3f3;padding:0 .2em}
.panels{display:flex;flex-wrap:wrap;gap:1em;align-items:flex-start}figure{margin:0}
figcaption{font-size:.9em;color:#555}
img.map{image-rendering:pixelated;image-rendering:crisp-edges;display:block;border:1px solid #999}
.wipe{position:relative;display:inline-block;line-height:0}
.wipe img.top{position:absolute;left:0;top:0}
.wipe-row{display:flex;gap:.5em;align-items:center;font-size:.9em;color:#555}
.wipe-row input{flex:1}";

/// Moves each wipe with its slider (inline: the page is one file).
const HTML_SCRIPT: &str = "\
for (const r of document.querySelectorAll('input.wipe-slider')) {
  const top = document.getElementById(r.dataset.top);
  const set = () => { top.style.clipPath = 'inset(0 ' + (100 - r.value) + '% 0 0)'; };
  r.addEventListener('input', set);
  set();
}";

/// `report.html`: the page of the whole check, every image embedded (`data:` URIs), no
/// script or style from elsewhere, so it works opened from disk or from a CI artifact.
pub fn html(s: &CheckSummary) -> String {
    let mut h = String::new();
    let title = format!("trnbake check: {}", headline(s));
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{HTML_STYLE}\n</style>\n</head>\n<body>",
        xml(&title)
    );
    let _ = writeln!(h, "<h1>{}</h1>", xml(&title));
    let _ = writeln!(
        h,
        "<p>Goldens <code>{}</code> · backend {} · {} posts in {:.2} s · trnbake {}</p>",
        xml(&s.golden.display().to_string()),
        xml(&backend_text(s)),
        s.posts,
        s.seconds,
        env!("CARGO_PKG_VERSION")
    );
    h += "<table>\n<tr><th>fixture</th><th>map</th><th>posts</th><th>result</th><th>max difference</th><th>posts over tolerance</th><th>PSNR</th><th>changed area (m)</th></tr>\n";
    for (i, o) in s.outcomes.iter().enumerate() {
        let size = o.size.map_or("—".into(), |(c, r)| format!("{c}×{r}"));
        let (max, over, psnr) = figures_cells(o);
        let result = if o.status.is_failure() { format!("<a href=\"#m{i}\"><b>{}</b></a>", o.status.label()) } else { o.status.label().into() };
        let class = if o.status.is_failure() { " class=\"fail\"" } else { "" };
        let _ = writeln!(
            h,
            "<tr{class}><td>{}</td><td>{}</td><td>{size}</td><td>{result}</td><td>{}</td><td>{}</td><td>{psnr}</td><td>{}</td></tr>",
            xml(&o.fixture),
            xml(&o.map),
            xml(&max),
            xml(&over),
            xml(&o.changed_area_text().unwrap_or("—".into()))
        );
    }
    h += "</table>\n";
    for (i, o) in s.outcomes.iter().enumerate().filter(|(_, o)| o.status.is_failure()) {
        let _ = writeln!(h, "<h2 id=\"m{i}\">{} / {}: {}</h2>", xml(&o.fixture), xml(&o.map), o.status.label());
        let what = if o.status == Status::Error { "Terrain" } else { "Golden" };
        let _ = writeln!(h, "<p>{what} <code>{}</code>: {}</p>", xml(&o.file), xml(&o.message));
        let Some(p) = &o.pictures else { continue };
        // Small maps drawn at a whole multiple of their size, at least ~384 px a side.
        let k = 384u32.div_ceil(p.width.max(p.height).max(1)).max(1);
        let (w, ht) = (p.width * k, p.height * k);
        let img = |id: &str, class: &str, png: &[u8], alt: &str| {
            format!("<img{id} class=\"{class}\" width=\"{w}\" height=\"{ht}\" alt=\"{alt}\" src=\"{}\">", data_uri(png))
        };
        h += "<div class=\"panels\">\n";
        for (png, cap) in [(&p.expected, "expected (the golden)"), (&p.actual, "actual (this bake)"), (&p.diff, "difference")] {
            let _ = writeln!(h, "<figure>{}<figcaption>{cap}</figcaption></figure>", img("", "map", png, cap));
        }
        let _ = writeln!(
            h,
            "<figure><div class=\"wipe\">{}{}</div><div class=\"wipe-row\"><span>expected</span><input class=\"wipe-slider\" type=\"range\" min=\"0\" max=\"100\" value=\"50\" data-top=\"w{i}\" aria-label=\"wipe from expected to actual\"><span>actual</span></div><figcaption>slider: expected on the left of the wipe, actual on the right</figcaption></figure>",
            img("", "map", &p.actual, "actual"),
            img(&format!(" id=\"w{i}\""), "map top", &p.expected, "expected"),
        );
        h += "</div>\n";
    }
    if s.outcomes.iter().any(|o| o.pictures.is_some()) {
        h += "<p>One pixel is one post, north up. Expected and actual share one grey scale (colours for splat maps). \
              In the difference, posts that did not change are the expected map in dark grey; blue posts changed within the tolerance; \
              yellow to red posts exceed it (red = the largest difference, log scale).</p>\n";
    }
    if let Some(c) = &s.bless_command {
        let _ = writeln!(h, "<p>If the change is intended, run <code>{}</code> and commit the rewritten goldens.</p>", xml(c));
    }
    let _ = writeln!(h, "<script>\n{HTML_SCRIPT}\n</script>\n</body>\n</html>");
    h
}

/// Write every report into `dir` (which exists): `report.html`, `report.md`, `summary.md`
/// and `junit.xml`.
pub fn write_all(dir: &Path, s: &CheckSummary) -> Result<()> {
    for (name, text) in [(HTML_FILE, html(s)), (MARKDOWN_FILE, markdown(s)), (SUMMARY_FILE, summary_markdown(s)), (JUNIT_FILE, junit(s))] {
        let p = dir.join(name);
        write_atomic(&p, text.as_bytes()).with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(())
}

/// Append `summary.md`'s text to a CI job summary file (`$GITHUB_STEP_SUMMARY`).
pub fn append_step_summary(path: &Path, s: &CheckSummary) -> Result<()> {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path).with_context(|| format!("cannot open the job summary {}", path.display()))?;
    f.write_all(format!("{}\n", summary_markdown(s)).as_bytes()).with_context(|| format!("cannot append to the job summary {}", path.display()))?;
    Ok(())
}

/// XML text and attribute values.
fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Characters XML 1.0 cannot hold at all.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push('?'),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML as GitLab, Jenkins and the GitHub test-report actions read it: one test case per
/// map (`classname` = the fixture), `<failure>` for a map that fails, `<error>` for a fixture
/// that could not be baked.
pub fn junit(s: &CheckSummary) -> String {
    let fails = s.outcomes.iter().filter(|o| o.status == Status::Fail).count();
    let errors = s.outcomes.iter().filter(|o| o.status == Status::Error).count();
    let n = s.outcomes.len();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(x, "<testsuites name=\"trnbake check\" tests=\"{n}\" failures=\"{fails}\" errors=\"{errors}\" time=\"{:.3}\">", s.seconds);
    let _ = writeln!(
        x,
        "  <testsuite name=\"{}\" tests=\"{n}\" failures=\"{fails}\" errors=\"{errors}\" time=\"{:.3}\">",
        xml(&format!("golden {} ({} backend)", s.golden.display(), backend_text(s))),
        s.seconds
    );
    for o in &s.outcomes {
        let _ = write!(x, "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"", xml(&o.fixture), xml(&o.map), o.bake_seconds);
        match o.status {
            Status::Fail | Status::Error => {
                let tag = if o.status == Status::Fail { "failure" } else { "error" };
                let what = if o.status == Status::Error { "terrain" } else { "golden" };
                let mut body = format!("{what}: {}\n{}", o.file, o.message);
                for i in &o.images {
                    body += &format!("\nimage: {i}");
                }
                let _ = writeln!(x, ">\n      <{tag} message=\"{}\" type=\"golden\">{}</{tag}>\n    </testcase>", xml(&o.message), xml(&body));
            }
            _ => x.push_str("/>\n"),
        }
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::compare::{compare, Raster};

    fn summary() -> CheckSummary {
        let e = Raster { width: 2, height: 1, channels: 1, bits: 16, samples: vec![0, 0] };
        let a = Raster { samples: vec![0, 9], ..e.clone() };
        let base = MapOutcome {
            fixture: "a<&>".into(),
            map: "height".into(),
            file: "a.height.png".into(),
            status: Status::Pass,
            message: "identical".into(),
            size: Some((2, 1)),
            grid: Some(trnbake_swg::eval::Grid { x0: -10.0, z0: 0.0, spacing: 5.0, cols: 2, rows: 1 }),
            tolerance_lsb: 1,
            max_posts_over: 0,
            lsb_metres: Some(0.01),
            comparison: Some(compare(&e, &e, 1)),
            bake_seconds: 0.5,
            images: vec![],
            pictures: None,
        };
        let fail = MapOutcome {
            fixture: "b".into(),
            status: Status::Fail,
            message: "1 post \"over\"".into(),
            comparison: Some(compare(&e, &a, 1)),
            images: vec!["b.height.diff.png".into(), "b.height.side-by-side.png".into()],
            pictures: Some(crate::golden::image::Pictures::new(&e, &a, &[60; 6]).unwrap()),
            ..base.clone()
        };
        let error = MapOutcome {
            fixture: "c".into(),
            map: "bake".into(),
            status: Status::Error,
            comparison: None,
            message: "cannot read c.trn".into(),
            ..base.clone()
        };
        CheckSummary {
            golden: "golden".into(),
            bless: false,
            backend: "cpu",
            adapter: None,
            outcomes: vec![base, fail, error],
            seconds: 1.25,
            posts: 6,
            bless_command: Some("trnbake check --golden golden --bless --fixture b".into()),
        }
    }

    #[test]
    fn junit_counts_and_escapes() {
        let x = junit(&summary());
        assert!(x.contains("tests=\"3\" failures=\"1\" errors=\"1\""), "{x}");
        assert!(x.contains("classname=\"a&lt;&amp;&gt;\" name=\"height\" time=\"0.500\"/>"), "{x}");
        assert!(x.contains("<failure message=\"1 post &quot;over&quot;\" type=\"golden\">"), "{x}");
        assert!(x.contains("image: b.height.diff.png"), "{x}");
        assert!(x.contains("<error message=\"cannot read c.trn\""), "{x}");
    }

    #[test]
    fn markdown_lists_every_map_and_shows_failing_images() {
        let md = markdown(&summary());
        assert!(md.starts_with("# trnbake check: 2 of 3 maps fail"), "{md}");
        assert!(md.contains("| b | height | 2×1 | **FAIL** | 9 LSB (0.0900 m) | 1 (tolerance 1 LSB, 0 allowed) |"), "{md}");
        assert!(md.contains("x -5…-5, z 0…0"), "{md}");
        assert!(md.contains("![difference](b.height.diff.png)"), "{md}");
        assert!(md.contains("| a<&> | height | 2×1 | PASS | 0 LSB (0.000 m) |"), "{md}");
        assert!(md.contains("run `trnbake check --golden golden --bless --fixture b`"), "{md}");
    }

    #[test]
    fn base64_of_the_rfc_4648_vectors() {
        for (i, o) in ["", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"].iter().enumerate() {
            assert_eq!(base64(&b"foobar"[..i]), *o);
        }
    }

    #[test]
    fn summary_has_failing_maps_a_thumbnail_and_the_bless_command() {
        let md = summary_markdown(&summary());
        assert!(md.starts_with("## ❌ trnbake check: 2 of 3 maps fail"), "{md}");
        assert!(md.contains("| b | height | FAIL |") && md.contains("| c | bake | ERROR |") && !md.contains("| a<&> |"), "{md}");
        // The 2×1 map: the first post unchanged, the second the largest difference.
        assert!(md.contains("```text\n⬛🟥\n```"), "{md}");
        assert!(md.contains("one square = 1×1 posts"), "{md}");
        assert!(md.contains("`trnbake check --golden golden --bless --fixture b`"), "{md}");
        assert!(!md.contains("data:"), "GitHub strips data: images: {md}");
    }

    #[test]
    fn thumbnail_keeps_every_changed_post_visible() {
        let (w, h) = (100u32, 40u32);
        let e = Raster { width: w, height: h, channels: 1, bits: 16, samples: vec![0; (w * h) as usize] };
        let mut a = e.clone();
        a.samples[(39 * w + 99) as usize] = 1; // one post within the tolerance, south-east corner
        a.samples[5] = 1000; // one far over it, north edge
        let o = MapOutcome { comparison: Some(compare(&e, &a, 1)), size: Some((w, h)), ..summary().outcomes[1].clone() };
        let (t, k) = thumbnail(&o).unwrap();
        assert_eq!(k, 4);
        let rows: Vec<Vec<char>> = t.lines().map(|l| l.chars().collect()).collect();
        assert_eq!((rows.len(), rows[0].len()), (10, 25));
        assert_eq!((rows[0][1], rows[9][24]), ('🟥', '🟦'));
        assert_eq!(t.chars().filter(|&c| c == '⬛').count(), 248);
    }

    #[test]
    fn html_embeds_the_pictures_and_needs_no_network() {
        let h = html(&summary());
        assert!(h.starts_with("<!DOCTYPE html>") && h.trim_end().ends_with("</html>"), "{h}");
        assert_eq!(h.matches("src=\"data:image/png;base64,").count(), 5, "expected, actual, difference, and both images of the wipe");
        assert!(h.contains("type=\"range\"") && h.contains("data-top=\"w1\"") && h.contains("id=\"w1\""), "{h}");
        assert!(h.contains("<td>a&lt;&amp;&gt;</td>") && h.contains("<a href=\"#m1\"><b>FAIL</b></a>"), "{h}");
        assert!(!h.contains("http:") && !h.contains("https:"), "nothing from the network: {h}");
        assert!(h.contains("<code>trnbake check --golden golden --bless --fixture b</code>"), "{h}");
    }
}
