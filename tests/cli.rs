//! The command line as a user meets it: every example of every `--help` runs as written, one
//! exit-code rule (usage errors included), negative numbers as values, points and regions off
//! the map named with the map's extent, plain warnings and progress lines when stderr is not a
//! terminal, a clear message for a file that is not IFF, and `--shard auto` from the variables
//! of each job-array scheduler, merged equal to the unsharded bake.

mod common;

use common::{text, tmp, trnbake};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    trnbake().args(args).output().unwrap()
}

/// The subcommand paths (`["bake"]`, `["nwn2", "export"]`) listed under `Commands:` of `help`.
fn subcommands(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line.starts_with("Commands:") {
            inside = true;
        } else if inside && line.starts_with("  ") {
            let name = line.split_whitespace().next().unwrap();
            if name != "help" {
                out.push(name.to_string());
            }
        } else if inside {
            break;
        }
    }
    out
}

/// The command lines under `Examples:` (two-space indent, one a line, until a blank line).
fn examples(help: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in help.lines() {
        if line == "Examples:" {
            inside = true;
        } else if inside && line.starts_with("  ") {
            out.push(line.trim().to_string());
        } else if inside {
            break;
        }
    }
    out
}

/// Every leaf command with the examples of its `--help`, in the order `--help` lists them.
fn all_examples(path: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    let o = trnbake().args(path.iter()).arg("--help").output().unwrap();
    assert!(o.status.success(), "{path:?} --help: {}", text(&o.stderr));
    let help = text(&o.stdout);
    let subs = subcommands(&help);
    if subs.is_empty() {
        out.push((path.join(" "), examples(&help)));
    }
    for s in subs {
        path.push(s);
        all_examples(path, out);
        path.pop();
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn every_help_example_runs() {
    let Some(shared) = common::shared_data_file("swg/terrain/tatooine.trn").map(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared")) else {
        return;
    };
    let mut list = Vec::new();
    all_examples(&mut Vec::new(), &mut list);
    assert!(list.len() >= 20, "{list:?}");
    for (cmd, ex) in &list {
        assert!(!ex.is_empty(), "`trnbake {cmd} --help` shows no example");
        for e in ex {
            // One command a line, naming trnbake and no placeholder.
            assert!(e.starts_with("trnbake ") || e.contains(" trnbake "), "{cmd}: `{e}`");
            let command = e.split(" # ").next().unwrap();
            assert!(!command.contains('…') && !command.contains("..."), "{cmd}: `{e}` is not runnable as written");
        }
    }
    // As a user would: from a folder beside `../shared`, with `trnbake` on the PATH.
    let root = tmp("examples");
    std::os::unix::fs::symlink(std::fs::canonicalize(&shared).unwrap(), root.join("shared")).unwrap();
    let work = root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("points.csv"), "x,z\n3528,-4804\n0,0\n").unwrap();
    // `check --bless` rewrites the goldens it is given: a copy of trnbake's corpus.
    copy_tree(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden"), &work.join("golden"));
    let bin = Path::new(env!("CARGO_BIN_EXE_trnbake")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let run_line = |line: &str| {
        let mut c = Command::new("sh");
        c.arg("-c").arg(line).current_dir(&work).env("PATH", &path).env("TRNBAKE_PROGRESS_SECS", "3600");
        c.env("CI", "false"); // the examples are commands, not tests
        c.output().unwrap()
    };
    // Examples may read what earlier ones wrote (`scs check` reads the map of `scs export`,
    // listed after it): what fails on the first pass runs again after all the others.
    let mut failed = Vec::new();
    for line in list.iter().flat_map(|(_, ex)| ex) {
        let o = run_line(line);
        if !o.status.success() {
            failed.push(line.clone());
        }
    }
    let mut errors = Vec::new();
    for line in &failed {
        let o = run_line(line);
        if !o.status.success() {
            errors.push(format!("`{line}` exits {:?}:\n{}", o.status.code(), text(&o.stderr)));
        }
    }
    assert!(errors.is_empty(), "help examples that fail:\n{}", errors.join("\n"));
    let n: usize = list.iter().map(|(_, ex)| ex.len()).sum();
    eprintln!("{n} help examples of {} commands ran", list.len());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn one_exit_code_rule_usage_errors_included() {
    // 0 success (help and version print to stdout), 1 every error, a usage error too.
    for args in [&["--help"][..], &["--version"], &["bake", "--help"], &["help", "bake"]] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
        assert!(!o.stdout.is_empty(), "{args:?}");
    }
    for (args, says) in [
        (&["bake", "--bogus"][..], "unexpected argument '--bogus'"),
        (&[][..], "Usage:"),
        (&["nope"], "unrecognized subcommand"),
        (&["bake", "--backend", "tpu"], "invalid value 'tpu'"),
        (&["merge", "shard1"], "--output"),
        (&["info", "/nonexistent/x.trn"], "cannot read /nonexistent/x.trn"),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains(says), "{args:?}: {}", text(&o.stderr));
    }
    // The README states the rule.
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert!(readme.contains("usage errors included"), "README's exit codes");
}

#[test]
fn negative_numbers_are_values() {
    // Parsed as values; a negative spacing is refused by name.
    for args in [
        &["bake", "--spacing", "-1"][..],
        &["bake", "--spacing=-8"],
        &["convert", "a.ter", "b.tif", "--spacing", "-2"],
        &["scs", "rasterize", "x.mbd", "-o", "y.tif", "--spacing", "-1"],
    ] {
        let o = run(args);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("--spacing -") && err.contains("must be a positive number of metres"), "{args:?}: {err}");
    }
    let out = tmp("negative");
    let o = run(&["bake", "-q", "--backend", "cpu", "--region", "-100,-100,100,100", "--spacing", "50", "--maps", "height", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let m: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["parameters"]["region"], serde_json::json!([-100.0, -100.0, 100.0, 100.0]));
    let o = run(&["sample", "--at", "-5,-5"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).starts_with("-5,-5,"), "{}", text(&o.stdout));
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn off_the_map_names_the_extent() {
    // The demo terrain is 4096 m wide.
    let extent = "x and z from -2048 to 2048 m";
    let o = run(&["sample", "--at", "20000,20000"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains(&format!("--at 20000,20000 is off the map ({extent})")), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    let dir = tmp("offmap");
    let csv = dir.join("p.csv");
    std::fs::write(&csv, "x,z\n0,0\n3000,0\n").unwrap();
    let o = run(&["sample", "--points", csv.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains(&format!("line 3: 3000,0 is off the map ({extent})")), "{}", text(&o.stderr));
    // A region entirely off the map is refused; one reaching past the edge is baked with a
    // warning, plain (no colour, no timestamp) since stderr is not a terminal here.
    let out = dir.join("out");
    let o = run(&["bake", "--backend", "cpu", "--region", "20000,20000,20100,20100", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains(&format!("the region 20000,20000,20100,20100 lies entirely off the map ({extent})")), "{}", text(&o.stderr));
    let o = run(&["bake", "--backend", "cpu", "--region", "1900,0,2200,100", "--spacing", "50", "--maps", "height", "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    let warning = err.lines().find(|l| l.contains("reaches past the map's edge")).unwrap_or_else(|| panic!("no warning: {err}"));
    assert_eq!(warning, format!("warning: the region 1900,0,2200,100 reaches past the map's edge ({extent}); posts outside it hold what the rules give there"));
    assert!(!err.contains('\x1b'), "colour codes in a file: {err:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_file_that_is_not_a_trn_says_so() {
    let dir = tmp("notiff");
    let f = dir.join("notes.trn");
    std::fs::write(&f, "hello, this is a text file\n").unwrap();
    let o = run(&["info", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr).trim_end(), format!("error: {}: start of file at byte offset 0: not an IFF file (expected FORM, found `hell`)", f.display()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn progress_lines_when_stderr_is_not_a_terminal() {
    let dir = tmp("progress");
    let bake = |quiet: bool| {
        let mut c = trnbake();
        c.args(["bake", "--backend", "cpu", "--spacing", "4", "--tile", "64", "--maps", "height", "-o"])
            .arg(dir.join("out"))
            .env("TRNBAKE_PROGRESS_SECS", "0.05");
        if quiet {
            c.arg("-q");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stderr)
    };
    // 1025² posts in 17² tiles: the ticker prints while they compute, and a last line at the end.
    let err = bake(false);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("height: ")).collect();
    assert!(!lines.is_empty(), "no progress line: {err}");
    assert!(lines.iter().all(|l| l.contains("/289 tiles (") && l.ends_with(" s")), "{lines:?}");
    assert!(lines.last().unwrap().starts_with("height: 289/289 tiles (100%)"), "{lines:?}");
    assert!(!err.contains('\x1b') && !err.contains('\r'), "a bar's control codes in a file: {err:?}");
    // --quiet: none.
    assert!(!bake(true).contains("height: "));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shard_auto_from_each_scheduler_merges_to_the_unsharded_bake() {
    let dir = tmp("auto");
    let bake = |out: &str, extra: &[&str], env: &[(&str, &str)]| {
        let mut c = trnbake();
        c.args(["bake", "--backend", "cpu", "--spacing", "16", "--tile", "48", "--maps", "height", "-o"]).arg(dir.join(out)).args(extra);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let o = bake("single", &["-q"], &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Two tasks of a 2-task array under each scheduler's variables (Slurm counted from
    // --array=1-2 and from 0-1); each pair merges to the unsharded bake, byte for byte.
    type Env<'a> = &'a [(&'a str, &'a str)];
    let cases: [(&str, [Env; 2]); 5] = [
        (
            "auto",
            [
                &[("SLURM_ARRAY_TASK_ID", "1"), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "2")],
                &[("SLURM_ARRAY_TASK_ID", "2"), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "2")],
            ],
        ),
        (
            "auto",
            [
                &[("SLURM_ARRAY_TASK_ID", "0"), ("SLURM_ARRAY_TASK_MIN", "0"), ("SLURM_ARRAY_TASK_COUNT", "2")],
                &[("SLURM_ARRAY_TASK_ID", "1"), ("SLURM_ARRAY_TASK_MIN", "0"), ("SLURM_ARRAY_TASK_COUNT", "2")],
            ],
        ),
        (
            "auto",
            [
                &[("AWS_BATCH_JOB_ARRAY_INDEX", "0"), ("AWS_BATCH_JOB_ARRAY_SIZE", "2")],
                &[("AWS_BATCH_JOB_ARRAY_INDEX", "1"), ("AWS_BATCH_JOB_ARRAY_SIZE", "2")],
            ],
        ),
        ("auto", [&[("CLOUD_RUN_TASK_INDEX", "0"), ("CLOUD_RUN_TASK_COUNT", "2")], &[("CLOUD_RUN_TASK_INDEX", "1"), ("CLOUD_RUN_TASK_COUNT", "2")]]),
        ("auto/2", [&[("JOB_COMPLETION_INDEX", "0")], &[("JOB_COMPLETION_INDEX", "1")]]),
    ];
    for (i, (flag, tasks)) in cases.iter().enumerate() {
        let mut shards = Vec::new();
        for (k, env) in tasks.iter().enumerate() {
            let name = format!("case{i}-task{k}");
            let o = bake(&name, &["--shard", flag], env);
            let err = text(&o.stderr);
            assert!(o.status.success(), "{env:?}: {err}");
            assert!(err.contains(&format!("shard {}/2 from ", k + 1)), "{env:?}: {err}");
            shards.push(dir.join(name));
        }
        let merged = dir.join(format!("case{i}-merged"));
        let o = trnbake().args(["merge", "-q", "-o"]).arg(&merged).args(&shards).output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        for f in ["height.tif", "height.png"] {
            assert_eq!(std::fs::read(dir.join("single").join(f)).unwrap(), std::fs::read(merged.join(f)).unwrap(), "case {i}: {f} differs");
        }
    }
    // No variable: an error naming them.
    let o = bake("none", &["--shard", "auto"], &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    for v in
        ["SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT", "AWS_BATCH_JOB_ARRAY_INDEX", "CLOUD_RUN_TASK_INDEX", "JOB_COMPLETION_INDEX"]
    {
        assert!(err.contains(v), "{v}: {err}");
    }
    // Kubernetes without the count.
    let o = bake("k8s", &["--shard", "auto"], &[("JOB_COMPLETION_INDEX", "0")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("--shard auto/N"), "{}", text(&o.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[cfg_attr(no_shared_data, ignore = "needs ../shared/data")]
fn nwn2_textures_follow_the_swg_family_names_and_are_printed() {
    let Some(trn) = common::real_file("terrain/tatooine.trn") else { return };
    let dir = tmp("nwn2-textures");
    let out = dir.join("area.trn");
    let o = run(&["nwn2", "export", trn.to_str().unwrap(), "--region", "3400,-4900,3480,-4820", "--height-range", "-20,60", "-o", out.to_str().unwrap()]);
    let err = text(&o.stderr);
    assert!(o.status.success(), "{err}");
    // Tatooine's sand is sand in NWN2 (not the toolset sample's grass), its rock is rock.
    assert!(err.contains("TT_GS_Sand_01: SWG shader family 2 `Sand_light` (by name: sand)"), "{err}");
    assert!(err.lines().filter(|l| l.starts_with("texture ")).all(|l| !l.contains("Grass") || l.contains("grass")), "{err}");
    let f = trnbake_nwn2::load(&out).unwrap();
    let names: Vec<String> = f.trrns().next().unwrap().textures.iter().map(|t| String::from_utf8_lossy(t).trim_end_matches('\0').to_string()).collect();
    assert_eq!(names[0], "TT_GS_Sand_01", "{names:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
