//! The reports of `trnbake check`: `report.md` (for people: a table, and per failing map its
//! numbers and pictures; renders as a CI job summary or a build artifact) and `junit.xml`
//! (for CI systems: one test case per map, a failure element for each that fails).

use super::{fmt_metres, CheckSummary, MapOutcome, Status};
use crate::Result;
use std::fmt::Write as _;
use std::path::Path;
use trnbake_raster::error::Context;
use trnbake_raster::fsutil::write_atomic;

pub const MARKDOWN_FILE: &str = "report.md";
pub const JUNIT_FILE: &str = "junit.xml";

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

pub fn markdown(s: &CheckSummary) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# trnbake check: {}\n", headline(s));
    let _ = writeln!(
        md,
        "Goldens `{}` · backend {} · {} posts in {:.2} s · trnbake {}\n",
        s.golden.display(),
        backend_text(s),
        s.posts,
        s.seconds,
        env!("CARGO_PKG_VERSION")
    );
    md += "| fixture | map | posts | result | max difference | posts over tolerance | PSNR | changed area (m) |\n";
    md += "|---|---|---|---|---|---|---|---|\n";
    for o in &s.outcomes {
        let size = o.size.map_or("—".into(), |(c, r)| format!("{c}×{r}"));
        let result = if o.status.is_failure() { format!("**{}**", o.status.label()) } else { o.status.label().into() };
        let (max, over, psnr) = match &o.comparison {
            Some(c) => (
                match o.lsb_metres {
                    Some(m) => format!("{} LSB ({} m)", c.max_diff, fmt_metres(c.max_diff as f64 * m)),
                    None => format!("{} LSB", c.max_diff),
                },
                format!("{} (tolerance {} LSB, {} allowed)", c.posts_over, o.tolerance_lsb, o.max_posts_over),
                if c.psnr_db.is_finite() { format!("{:.1} dB", c.psnr_db) } else { "∞".into() },
            ),
            None => ("—".into(), "—".into(), "—".into()),
        };
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
    if s.failures() > 0 {
        md += "\nIf the change is intended, run `trnbake check --bless` and commit the rewritten goldens.\n";
    }
    md
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

pub fn write_markdown(dir: &Path, s: &CheckSummary) -> Result<()> {
    let p = dir.join(MARKDOWN_FILE);
    Ok(write_atomic(&p, markdown(s).as_bytes()).with_context(|| format!("cannot write {}", p.display()))?)
}

pub fn write_junit(dir: &Path, s: &CheckSummary) -> Result<()> {
    let p = dir.join(JUNIT_FILE);
    Ok(write_atomic(&p, junit(s).as_bytes()).with_context(|| format!("cannot write {}", p.display()))?)
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
        };
        let fail = MapOutcome {
            fixture: "b".into(),
            status: Status::Fail,
            message: "1 post \"over\"".into(),
            comparison: Some(compare(&e, &a, 1)),
            images: vec!["b.height.diff.png".into(), "b.height.side-by-side.png".into()],
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
        CheckSummary { golden: "golden".into(), bless: false, backend: "cpu", adapter: None, outcomes: vec![base, fail, error], seconds: 1.25, posts: 6 }
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
    }
}
