//! A library bake reports what the command line prints (issue #36): notes, status lines and
//! progress reach the request's `Reporter`, and a bake without one is silent. The errors a user
//! may act on come as named variants of `trnbake_bake::Error`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use trnbake_bake::report::{Level, Reporter, Task};
use trnbake_bake::{Backend, BakeRequest, Error, MapKind, Shard};

/// What a reporter was told, in order.
#[derive(Clone, Debug, PartialEq)]
enum Event {
    Message(Level, String),
    Start { label: String, unit: String, total: u64 },
    Finish { label: String, done: u64, total: u64, completed: bool },
}

#[derive(Default)]
struct Capture {
    events: Mutex<Vec<Event>>,
    incs: Mutex<u64>,
}

impl Reporter for Capture {
    fn message(&self, level: Level, text: &str) {
        self.events.lock().unwrap().push(Event::Message(level, text.to_string()));
    }
    fn start(&self, task: &Arc<Task>) {
        self.events.lock().unwrap().push(Event::Start { label: task.label().into(), unit: task.unit().into(), total: task.total() });
    }
    fn inc(&self, _: &Task, n: u64) {
        *self.incs.lock().unwrap() += n;
    }
    fn finish(&self, task: &Task, completed: bool) {
        self.events.lock().unwrap().push(Event::Finish { label: task.label().into(), done: task.done(), total: task.total(), completed });
    }
}

impl Capture {
    fn events(&self) -> Vec<Event> {
        self.events.lock().unwrap().clone()
    }
    fn messages(&self, level: Level) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Message(l, m) if l == level => Some(m),
                _ => None,
            })
            .collect()
    }
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("trnbake-reporter-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The demo at 64 m (65² posts) in 16-post tiles (25 tiles), heights only, on the CPU.
fn request(out: &Path, reporter: &Arc<Capture>) -> BakeRequest {
    let mut r = BakeRequest::demo(out);
    r.spacing = Some(64.0);
    r.tile = Some(16);
    r.maps = vec![MapKind::Height.into()];
    r.backend = Backend::Cpu;
    r.reporter = reporter.clone();
    r
}

#[test]
fn a_bake_reports_its_backend_and_progress() {
    let out = tmp("progress");
    let capture = Arc::new(Capture::default());
    let report = request(&out, &capture).pipeline().unwrap().run().unwrap();
    assert_eq!(report.posts, 65 * 65);
    let events = capture.events();
    assert!(matches!(&events[0], Event::Message(Level::Info, m) if m.starts_with("backend: CPU (")), "{events:?}");
    assert!(events.contains(&Event::Start { label: "height".into(), unit: "tiles".into(), total: 25 }), "{events:?}");
    assert!(events.contains(&Event::Finish { label: "height".into(), done: 25, total: 25, completed: true }), "{events:?}");
    // The PNG needs the height range: written after the compute, counted in files.
    assert!(events.iter().any(|e| matches!(e, Event::Finish { label, completed: true, .. } if label == "writing")), "{events:?}");
    assert!(*capture.incs.lock().unwrap() >= 25);
    assert!(capture.messages(Level::Note).is_empty(), "{events:?}");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_resumed_bake_says_what_it_kept_and_what_it_recomputes() {
    let out = tmp("resume");
    let silent = Arc::new(Capture::default());
    let mut shard = request(&out, &silent);
    shard.shard = Some(Shard { index: 1, count: 2 });
    shard.pipeline().unwrap().run().unwrap();
    // What an unsharded bake killed midway leaves: shard 1/2's tiles, marked incomplete.
    let state_path = out.join("bake-state.json");
    let mut state: serde_json::Value = serde_json::from_slice(&std::fs::read(&state_path).unwrap()).unwrap();
    state["shard"] = serde_json::Value::Null;
    state["complete"] = false.into();
    std::fs::write(&state_path, serde_json::to_vec(&state).unwrap()).unwrap();
    // And one of its tiles zeroed, as a power loss may leave it.
    let mut tiles: Vec<PathBuf> = std::fs::read_dir(out.join(".trnbake-tiles")).unwrap().map(|e| e.unwrap().path()).collect();
    tiles.sort();
    let len = std::fs::metadata(&tiles[0]).unwrap().len();
    std::fs::write(&tiles[0], vec![0u8; len as usize]).unwrap();

    let capture = Arc::new(Capture::default());
    request(&out, &capture).pipeline().unwrap().run().unwrap();
    let notes = capture.messages(Level::Note);
    assert!(notes.iter().any(|n| n.ends_with("is damaged (size or checksum); recomputing it")), "{:?}", capture.events());
    assert!(notes.iter().all(|n| !n.starts_with("note:")), "messages come without the command line's prefix: {notes:?}");
    let info = capture.messages(Level::Info);
    assert!(info.contains(&"resuming: 12 of 25 tiles already done".to_string()), "{info:?}");
    assert!(capture.events().contains(&Event::Start { label: "height".into(), unit: "tiles".into(), total: 13 }), "{:?}", capture.events());
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn the_backend_choice_says_why_on_the_reporter() {
    // Whatever this machine has: a hardware GPU is named, a software adapter (lavapipe) or
    // none is a note and the CPU bakes.
    let capture = Capture::default();
    let gpu = trnbake_bake::choose_gpu(Backend::Auto, None, &capture).unwrap();
    let (notes, info) = (capture.messages(Level::Note), capture.messages(Level::Info));
    match &gpu {
        Some(c) => assert_eq!(info, [format!("backend: GPU, adapter {} ({}, {})", c.adapter.name, c.adapter.backend, c.adapter.driver_info)]),
        None => {
            assert_eq!(notes.len(), 1, "{notes:?}");
            assert!(notes[0].starts_with("only a software GPU adapter (") || notes[0].starts_with("no usable GPU adapter ("), "{notes:?}");
            assert!(info[0].starts_with("backend: CPU ("), "{info:?}");
        }
    }
}

#[test]
fn a_request_without_a_reporter_is_silent_and_errors_are_named() {
    // The default reporter: nothing to capture, nothing printed (the library never prints).
    let out = tmp("errors");
    let mut r = BakeRequest::demo(&out);
    r.spacing = Some(64.0);
    r.maps = vec![MapKind::Height.into()];
    r.backend = Backend::Cpu;
    r.region = Some([50_000.0, 50_000.0, 51_000.0, 51_000.0]);
    assert!(matches!(r.clone().pipeline(), Err(Error::OffMap { region, .. }) if region[0] == 50_000.0));

    // One owner per folder.
    let capture = Capture::default();
    let held = trnbake_bake::folder::OutputFolder::claim(&out, None, &capture).unwrap();
    let err = trnbake_bake::folder::OutputFolder::claim(&out, None, &capture).err().expect("a second claim fails");
    assert!(matches!(&err, Error::FolderInUse { pid: Some(p), .. } if *p == std::process::id()), "{err:?}");
    assert!(err.to_string().contains("is in use by another trnbake (PID "), "{err}");
    drop(held);

    // Merge: a shard left out, a folder that is no shard, a shard of another bake.
    let (s1, s2, other, merged) = (tmp("s1"), tmp("s2"), tmp("other"), tmp("merged"));
    let silent = Arc::new(Capture::default());
    for (dir, index, spacing) in [(&s1, 1, 64.0), (&s2, 2, 64.0), (&other, 2, 32.0)] {
        let mut r = request(dir, &silent);
        r.spacing = Some(spacing);
        r.shard = Some(Shard { index, count: 2 });
        r.pipeline().unwrap().run().unwrap();
    }
    let merge = |shards: &[PathBuf]| trnbake_bake::merge(&merged, shards, None, &capture).expect_err("the merge fails");
    let err = merge(std::slice::from_ref(&s1));
    assert!(matches!(&err, Error::ShardMissing { missing, count: 2, found } if *missing == [2] && *found == [1]), "{err:?}");
    assert!(err.to_string().starts_with("shard 2/2 is missing: give the folders of all 2 shards (found 1/2)"), "{err}");
    assert!(matches!(merge(&[s1.clone(), out.clone()]), Error::NotAShard { dir, .. } if dir == out));
    assert!(matches!(merge(&[s1.clone(), other.clone()]), Error::ShardForeign { dir, .. } if dir == other));
    // A damaged tile finished nowhere else.
    let mut tiles: Vec<PathBuf> = std::fs::read_dir(s2.join(".trnbake-tiles")).unwrap().map(|e| e.unwrap().path()).collect();
    tiles.sort();
    let len = std::fs::metadata(&tiles[0]).unwrap().len();
    std::fs::write(&tiles[0], vec![0u8; len as usize]).unwrap();
    assert!(matches!(merge(&[s1.clone(), s2.clone()]), Error::TileDamaged { path, .. } if path == tiles[0]));
    for d in [out, s1, s2, other, merged] {
        let _ = std::fs::remove_dir_all(d);
    }
}
