//! Progress of long work on stderr, one helper for every command: a bar on a terminal, a plain
//! line every few seconds when stderr is a file or a pipe (CI logs, batch jobs), nothing with
//! `quiet`.
//!
//! ```
//! use trnbake_bake::progress::Progress;
//!
//! let p = Progress::new(64, "tiles", "height", true); // quiet: shows nothing
//! for _ in 0..64 {
//!     p.inc(1); // from any thread
//! }
//! p.finish();
//! ```
//!
//! In line mode a ticker thread prints `height: 12/64 tiles (18%), 10 s` every
//! [`ProgressMode::auto`] interval (5 s; `TRNBAKE_PROGRESS_SECS` changes it), and
//! [`Progress::finish`] prints a last line when the work took at least one interval, so a
//! short command stays silent. [`Progress::set_stage`] names the step in progress, for work
//! that advances in a few long steps.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How a [`Progress`] shows itself.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ProgressMode {
    Hidden,
    /// An indicatif bar (stderr is a terminal).
    Bar,
    /// A plain line on stderr every `every`.
    Lines {
        every: Duration,
    },
}

/// The interval of line mode when `TRNBAKE_PROGRESS_SECS` does not set one.
pub const DEFAULT_LINE_INTERVAL: Duration = Duration::from_secs(5);

impl ProgressMode {
    /// Hidden when `quiet`; a bar when stderr is a terminal; else lines every
    /// `TRNBAKE_PROGRESS_SECS` seconds (default 5, at least 0.05).
    pub fn auto(quiet: bool) -> Self {
        if quiet {
            ProgressMode::Hidden
        } else if std::io::stderr().is_terminal() {
            ProgressMode::Bar
        } else {
            let secs = std::env::var("TRNBAKE_PROGRESS_SECS").ok().and_then(|s| s.trim().parse::<f64>().ok()).filter(|s| s.is_finite());
            let every = secs.map_or(DEFAULT_LINE_INTERVAL, |s| Duration::from_secs_f64(s.max(0.05)));
            ProgressMode::Lines { every }
        }
    }
}

struct State {
    what: String,
    unit: String,
    total: AtomicU64,
    done: AtomicU64,
    stage: Mutex<String>,
    start: Instant,
    /// Set when the work is finished: the ticker stops.
    stopped: Mutex<bool>,
    wake: Condvar,
}

impl State {
    /// One progress line, e.g. `height: 12/64 tiles (18%), 10 s` or `nwn2 export: 1/4 steps
    /// (25%), 3 s, walkmesh`.
    fn line(&self) -> String {
        let (done, total) = (self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed));
        let secs = self.start.elapsed().as_secs();
        let mut s = match (done.min(total) * 100).checked_div(total) {
            Some(percent) => format!("{}: {done}/{total} {} ({percent}%), {secs} s", self.what, self.unit),
            None => format!("{}: {done} {}, {secs} s", self.what, self.unit),
        };
        // The rate and what is left at it, once there is a second of work to measure.
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
}

/// Progress of one piece of work counted in `unit`s (tiles, blocks, steps).
pub struct Progress {
    state: Arc<State>,
    bar: Option<indicatif::ProgressBar>,
    ticker: Option<std::thread::JoinHandle<()>>,
    every: Option<Duration>,
}

impl Progress {
    /// Progress of `total` `unit`s of `what` (0: not known yet, see [`Progress::set_total`]),
    /// shown as [`ProgressMode::auto`] decides.
    pub fn new(total: u64, unit: &str, what: &str, quiet: bool) -> Self {
        Self::with_mode(total, unit, what, ProgressMode::auto(quiet))
    }

    pub fn with_mode(total: u64, unit: &str, what: &str, mode: ProgressMode) -> Self {
        let state = Arc::new(State {
            what: what.to_string(),
            unit: unit.to_string(),
            total: AtomicU64::new(total),
            done: AtomicU64::new(0),
            stage: Mutex::new(String::new()),
            start: Instant::now(),
            stopped: Mutex::new(false),
            wake: Condvar::new(),
        });
        let mut p = Progress { state, bar: None, ticker: None, every: None };
        match mode {
            ProgressMode::Hidden => {}
            ProgressMode::Bar => {
                let pb = indicatif::ProgressBar::new(total);
                let template = format!("{{msg}} [{{bar:40}}] {{pos}}/{{len}} {unit}, {{per_sec}}, {{elapsed}} (eta {{eta}})");
                pb.set_style(indicatif::ProgressStyle::with_template(&template).expect("valid template").progress_chars("=> "));
                pb.set_message(what.to_string());
                // Redrawn every second, so a long step still shows the time passing.
                pb.enable_steady_tick(Duration::from_secs(1));
                p.bar = Some(pb);
            }
            ProgressMode::Lines { every } => {
                let state = Arc::clone(&p.state);
                p.every = Some(every);
                p.ticker = Some(std::thread::spawn(move || {
                    let mut stopped = state.stopped.lock().unwrap_or_else(|e| e.into_inner());
                    // Checked before every wait: the work may finish before this thread first
                    // takes the lock.
                    while !*stopped {
                        let (guard, timeout) = state.wake.wait_timeout(stopped, every).unwrap_or_else(|e| e.into_inner());
                        stopped = guard;
                        if !*stopped && timeout.timed_out() {
                            eprintln!("{}", state.line());
                        }
                    }
                }));
            }
        }
        p
    }

    /// The total, once it is known (or when it changes).
    pub fn set_total(&self, total: u64) {
        self.state.total.store(total, Ordering::Relaxed);
        if let Some(pb) = &self.bar {
            pb.set_length(total);
        }
    }

    /// `n` more units are done (callable from any thread).
    pub fn inc(&self, n: u64) {
        self.state.done.fetch_add(n, Ordering::Relaxed);
        if let Some(pb) = &self.bar {
            pb.inc(n);
        }
    }

    /// Names the step in progress (shown after the count; empty: none).
    pub fn set_stage(&self, stage: &str) {
        *self.state.stage.lock().unwrap_or_else(|e| e.into_inner()) = stage.to_string();
        if let Some(pb) = &self.bar {
            pb.set_message(if stage.is_empty() { self.state.what.clone() } else { format!("{} ({stage})", self.state.what) });
        }
    }

    /// Runs `f` (which prints) with the bar out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(pb) => pb.suspend(f),
            None => f(),
        }
    }

    /// The work is done: the bar is cleared; in line mode, a work that took at least one
    /// interval gets a last line (`height: 64/64 tiles (100%), 52 s`).
    pub fn finish(mut self) {
        self.stop(true);
    }

    fn stop(&mut self, report: bool) {
        if let Some(pb) = self.bar.take() {
            pb.finish_and_clear();
        }
        if let Some(t) = self.ticker.take() {
            *self.state.stopped.lock().unwrap_or_else(|e| e.into_inner()) = true;
            self.state.wake.notify_all();
            let _ = t.join();
            if report && self.every.is_some_and(|every| self.state.start.elapsed() >= every) {
                self.state.stage.lock().unwrap_or_else(|e| e.into_inner()).clear();
                eprintln!("{}", self.state.line());
            }
        }
    }
}

impl Drop for Progress {
    /// Unfinished (an error ended the work): the bar is cleared and the ticker stopped, with
    /// no last line.
    fn drop(&mut self) {
        self.stop(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_name_the_count_the_share_and_the_stage() {
        let p = Progress::with_mode(64, "tiles", "height", ProgressMode::Hidden);
        p.inc(12);
        assert_eq!(p.state.line(), "height: 12/64 tiles (18%), 0 s");
        p.set_total(0);
        assert_eq!(p.state.line(), "height: 12 tiles, 0 s");
        p.set_total(4);
        p.inc(7); // more than the total (a total set late) stays at 100 %
        p.set_stage("walkmesh");
        assert_eq!(p.state.line(), "height: 19/4 tiles (100%), 0 s, walkmesh");
        p.finish();
    }

    #[test]
    fn the_ticker_stops_with_the_work() {
        // A ticker that never prints (a long interval) still ends at once on finish and drop.
        let t = Instant::now();
        let p = Progress::with_mode(2, "steps", "test", ProgressMode::Lines { every: Duration::from_secs(3600) });
        p.inc(2);
        p.finish();
        drop(Progress::with_mode(2, "steps", "test", ProgressMode::Lines { every: Duration::from_secs(3600) }));
        assert!(t.elapsed() < Duration::from_secs(60));
    }
}
