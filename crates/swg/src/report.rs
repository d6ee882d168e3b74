//! Notes, warnings and progress of long work, reported rather than printed: the libraries never
//! write to stdout or stderr, they tell a [`Reporter`], and whoever runs them decides what to
//! show. The command line renders them (a bar on a terminal, plain lines in a log, nothing with
//! `--quiet`); the C API hands messages to a callback; the Python package turns notes into
//! `warnings.warn` and progress into a callable; a server passes [`NullReporter`] or its own.
//!
//! ```
//! use std::sync::Mutex;
//! use trnbake_swg::report::{Level, Progress, Reporter};
//!
//! /// Keeps every message.
//! #[derive(Default)]
//! struct Capture(Mutex<Vec<(Level, String)>>);
//!
//! impl Reporter for Capture {
//!     fn message(&self, level: Level, text: &str) {
//!         self.0.lock().unwrap().push((level, text.to_string()));
//!     }
//! }
//!
//! let capture = Capture::default();
//! let reporter: &dyn Reporter = &capture;
//! reporter.note(format!("{} tiles resumed", 3));
//! let p = Progress::new(reporter, 64, "tiles", "height");
//! p.inc(64); // from any thread
//! p.finish();
//! assert_eq!(capture.0.lock().unwrap()[0], (Level::Note, "3 tiles resumed".to_string()));
//! ```
//!
//! Progress is a [`Task`] (label, unit, total, count, stage) shared between the library's
//! [`Progress`] handle, which counts, and the reporter, which is told of each change and may
//! read the task at any time (a ticker thread printing a line every few seconds does).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How much a message matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Level {
    /// A status line: which backend bakes, what a resume kept (the command line prints it as
    /// it is).
    Info,
    /// Something the user may want to know, nothing wrong (`note: …` on the command line).
    Note,
    /// Something probably not what the user meant (`warning: …`).
    Warning,
}

impl Level {
    /// `info`, `note` or `warning`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Note => "note",
            Level::Warning => "warning",
        }
    }
}

/// Where a library's notes, warnings and progress go. Every method but [`Reporter::message`]
/// does nothing by default, so a reporter of messages alone is one method.
///
/// Called from any thread (a bake's workers report progress), hence `Send + Sync`; the calls
/// should be cheap ([`Reporter::inc`] may come thousands of times a second).
pub trait Reporter: Send + Sync {
    /// A note, warning or status line (one line of text, no `note:` prefix, no newline).
    fn message(&self, level: Level, text: &str);

    /// A piece of work starts (its label, unit and total are on `task`; a total of 0 is not
    /// known yet).
    fn start(&self, task: &Arc<Task>) {
        let _ = task;
    }

    /// `n` more units of `task` are done ([`Task::done`] already counts them).
    fn inc(&self, task: &Task, n: u64) {
        let _ = (task, n);
    }

    /// The total of `task` is now known, or changed ([`Task::total`] already says it).
    fn set_total(&self, task: &Task, total: u64) {
        let _ = (task, total);
    }

    /// `task` moved to the step `stage` (empty: none).
    fn set_stage(&self, task: &Task, stage: &str) {
        let _ = (task, stage);
    }

    /// `task` ended: `completed` when it finished, `false` when an error cut it short.
    fn finish(&self, task: &Task, completed: bool) {
        let _ = (task, completed);
    }
}

impl dyn Reporter + '_ {
    /// [`Level::Info`]: `reporter.info(format!("backend: CPU ({n} threads)"))`.
    pub fn info(&self, text: impl AsRef<str>) {
        self.message(Level::Info, text.as_ref());
    }

    /// [`Level::Note`].
    pub fn note(&self, text: impl AsRef<str>) {
        self.message(Level::Note, text.as_ref());
    }

    /// [`Level::Warning`].
    pub fn warn(&self, text: impl AsRef<str>) {
        self.message(Level::Warning, text.as_ref());
    }
}

/// Shown as `Reporter` (so a request that holds one can derive `Debug`).
impl std::fmt::Debug for dyn Reporter + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reporter")
    }
}

/// Reports nothing: for a library user who wants silence (and the command line's `--quiet`).
#[derive(Clone, Copy, Debug, Default)]
pub struct NullReporter;

impl Reporter for NullReporter {
    fn message(&self, _: Level, _: &str) {}
}

/// A shared [`NullReporter`], the default of a request that names no reporter.
pub fn null() -> Arc<dyn Reporter> {
    Arc::new(NullReporter)
}

/// One piece of work counted in units (tiles, posts, files, steps).
#[derive(Debug)]
pub struct Task {
    id: u64,
    label: String,
    unit: String,
    total: AtomicU64,
    done: AtomicU64,
    stage: Mutex<String>,
    start: Instant,
}

impl Task {
    /// Unique in the process: tells apart tasks that run at the same time.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// What the work is (`height`, `surface maps`, `writing`).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// What it counts (`tiles`, `posts`, `files`).
    pub fn unit(&self) -> &str {
        &self.unit
    }

    /// Units in all (0: not known yet).
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Units done so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// The step in progress (empty: none).
    pub fn stage(&self) -> String {
        self.stage.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Time since the work started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// The task as one plain line, e.g. `height: 12/64 tiles (18%), 10 s, 1 tiles/s, eta 52 s`
    /// or `nwn2 export: 1/4 steps (25%), 3 s, walkmesh`: the count, the share, the time, then
    /// once a second has passed the rate and what is left at it, then the stage.
    pub fn line(&self) -> String {
        let (done, total) = (self.done(), self.total());
        let secs = self.start.elapsed().as_secs();
        let mut s = match (done.min(total) * 100).checked_div(total) {
            Some(percent) => format!("{}: {done}/{total} {} ({percent}%), {secs} s", self.label, self.unit),
            None => format!("{}: {done} {}, {secs} s", self.label, self.unit),
        };
        let elapsed = self.start.elapsed().as_secs_f64();
        if elapsed >= 1.0 && done > 0 {
            let rate = done as f64 / elapsed;
            s.push_str(&format!(", {rate:.0} {}/s", self.unit));
            if total > done {
                s.push_str(&format!(", eta {:.0} s", (total - done) as f64 / rate));
            }
        }
        let stage = self.stage.lock().unwrap_or_else(|e| e.into_inner());
        if !stage.is_empty() {
            s.push_str(", ");
            s.push_str(&stage);
        }
        s
    }

    /// Clears the stage (a finished task's last line names none).
    pub fn clear_stage(&self) {
        self.stage.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

static NEXT_TASK: AtomicU64 = AtomicU64::new(1);

/// The library's handle on one [`Task`]: counts, and tells the reporter. Cheap: an atomic add
/// and a call of the reporter per [`Progress::inc`]. Dropped unfinished (an error ended the
/// work), it tells the reporter the task ended incomplete.
pub struct Progress<'a> {
    reporter: &'a dyn Reporter,
    task: Arc<Task>,
    finished: bool,
}

impl<'a> Progress<'a> {
    /// Starts `total` `unit`s of `label` (0: not known yet, see [`Progress::set_total`]).
    pub fn new(reporter: &'a dyn Reporter, total: u64, unit: &str, label: &str) -> Self {
        let task = Arc::new(Task {
            id: NEXT_TASK.fetch_add(1, Ordering::Relaxed),
            label: label.to_string(),
            unit: unit.to_string(),
            total: AtomicU64::new(total),
            done: AtomicU64::new(0),
            stage: Mutex::new(String::new()),
            start: Instant::now(),
        });
        reporter.start(&task);
        Progress { reporter, task, finished: false }
    }

    /// The total, once it is known (or when it changes).
    pub fn set_total(&self, total: u64) {
        self.task.total.store(total, Ordering::Relaxed);
        self.reporter.set_total(&self.task, total);
    }

    /// `n` more units are done (callable from any thread).
    pub fn inc(&self, n: u64) {
        self.task.done.fetch_add(n, Ordering::Relaxed);
        self.reporter.inc(&self.task, n);
    }

    /// Names the step in progress (empty: none).
    pub fn set_stage(&self, stage: &str) {
        *self.task.stage.lock().unwrap_or_else(|e| e.into_inner()) = stage.to_string();
        self.reporter.set_stage(&self.task, stage);
    }

    /// The task this handle counts.
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The work is done.
    pub fn finish(mut self) {
        self.finished = true;
        self.reporter.finish(&self.task, true);
    }
}

impl Drop for Progress<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.reporter.finish(&self.task, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Events(Mutex<Vec<String>>);

    impl Reporter for Events {
        fn message(&self, level: Level, text: &str) {
            self.0.lock().unwrap().push(format!("{}: {text}", level.name()));
        }
        fn start(&self, task: &Arc<Task>) {
            self.0.lock().unwrap().push(format!("start {} {} {}", task.label(), task.total(), task.unit()));
        }
        fn inc(&self, task: &Task, n: u64) {
            self.0.lock().unwrap().push(format!("inc {n} -> {}", task.done()));
        }
        fn set_total(&self, _: &Task, total: u64) {
            self.0.lock().unwrap().push(format!("total {total}"));
        }
        fn set_stage(&self, _: &Task, stage: &str) {
            self.0.lock().unwrap().push(format!("stage {stage}"));
        }
        fn finish(&self, task: &Task, completed: bool) {
            self.0.lock().unwrap().push(format!("finish {} {completed}", task.done()));
        }
    }

    #[test]
    fn progress_forwards_every_change() {
        let e = Events::default();
        let r: &dyn Reporter = &e;
        r.warn("w");
        let p = Progress::new(r, 0, "files", "writing");
        p.set_total(3);
        p.inc(2);
        p.set_stage("png");
        p.finish();
        drop(Progress::new(r, 1, "steps", "cut short"));
        assert_eq!(
            *e.0.lock().unwrap(),
            ["warning: w", "start writing 0 files", "total 3", "inc 2 -> 2", "stage png", "finish 2 true", "start cut short 1 steps", "finish 0 false"]
        );
    }

    #[test]
    fn lines_name_the_count_the_share_and_the_stage() {
        let p = Progress::new(&NullReporter, 64, "tiles", "height");
        p.inc(12);
        assert_eq!(p.task().line(), "height: 12/64 tiles (18%), 0 s");
        p.set_total(0);
        assert_eq!(p.task().line(), "height: 12 tiles, 0 s");
        p.set_total(4);
        p.inc(7); // more than the total (a total set late) stays at 100 %
        p.set_stage("walkmesh");
        assert_eq!(p.task().line(), "height: 19/4 tiles (100%), 0 s, walkmesh");
        p.finish();
    }
}
