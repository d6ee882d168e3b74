//! How the command line shows what the libraries report (`trnbake_swg::report`): messages as
//! `note: …` / `warning: …` lines on stderr, and progress as a bar on a terminal, a plain line
//! every few seconds when stderr is a file or a pipe (CI logs, batch jobs), nothing with
//! `--quiet`.
//!
//! In line mode a ticker thread prints `height: 12/64 tiles (18%), 10 s` every
//! [`ProgressMode::auto`] interval (5 s; `TRNBAKE_PROGRESS_SECS` changes it), and a finished
//! task prints a last line when it took at least one interval, so a short command stays silent.

use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use trnbake_swg::report::{Level, Reporter, Task};

/// How progress shows itself.
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

/// A line-mode ticker: its thread, and the flag that stops it.
struct Ticker {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: std::thread::JoinHandle<()>,
    every: Duration,
}

enum Shown {
    Bar(indicatif::ProgressBar),
    Ticker(Ticker),
}

/// The command line's [`Reporter`]: stderr, as [`ProgressMode::auto`] decides; silent with
/// `quiet` (messages included).
pub struct Terminal {
    quiet: bool,
    mode: ProgressMode,
    colour: bool,
    shown: Mutex<HashMap<u64, Shown>>,
}

impl Terminal {
    pub fn new(quiet: bool) -> Self {
        Self::with_mode(quiet, ProgressMode::auto(quiet))
    }

    pub fn with_mode(quiet: bool, mode: ProgressMode) -> Self {
        Terminal { quiet, mode, colour: std::io::stderr().is_terminal(), shown: Mutex::new(HashMap::new()) }
    }

    /// Whether `--quiet` was given.
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// Runs `f` (which prints) with every bar out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        let bars: Vec<indicatif::ProgressBar> = self
            .shown
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter_map(|s| match s {
                Shown::Bar(b) => Some(b.clone()),
                Shown::Ticker(_) => None,
            })
            .collect();
        fn under<R>(bars: &[indicatif::ProgressBar], f: impl FnOnce() -> R) -> R {
            match bars.split_first() {
                Some((b, rest)) => b.suspend(|| under(rest, f)),
                None => f(),
            }
        }
        under(&bars, f)
    }

    fn bar(&self, task: &Task) -> Option<indicatif::ProgressBar> {
        match self.shown.lock().unwrap_or_else(|e| e.into_inner()).get(&task.id()) {
            Some(Shown::Bar(b)) => Some(b.clone()),
            _ => None,
        }
    }
}

impl Reporter for Terminal {
    fn message(&self, level: Level, text: &str) {
        if self.quiet {
            return;
        }
        let (word, ansi) = match level {
            Level::Info => ("", ""),
            Level::Note => ("note", ""),
            Level::Warning => ("warning", "33"),
            _ => ("note", ""),
        };
        let line = match (word, self.colour && !ansi.is_empty()) {
            ("", _) => text.to_string(),
            (w, true) => format!("\x1b[{ansi}m{w}\x1b[0m: {text}"),
            (w, false) => format!("{w}: {text}"),
        };
        self.suspend(|| eprintln!("{line}"));
    }

    fn start(&self, task: &Arc<Task>) {
        let shown = match self.mode {
            ProgressMode::Hidden => return,
            ProgressMode::Bar => {
                let pb = indicatif::ProgressBar::new(task.total());
                let template = format!("{{msg}} [{{bar:40}}] {{pos}}/{{len}} {}, {{per_sec}}, {{elapsed}} (eta {{eta}})", task.unit());
                pb.set_style(indicatif::ProgressStyle::with_template(&template).expect("valid template").progress_chars("=> "));
                pb.set_message(task.label().to_string());
                // Redrawn every second, so a long step still shows the time passing.
                pb.enable_steady_tick(Duration::from_secs(1));
                Shown::Bar(pb)
            }
            ProgressMode::Lines { every } => {
                let stop = Arc::new((Mutex::new(false), Condvar::new()));
                let (flag, task) = (Arc::clone(&stop), Arc::clone(task));
                let thread = std::thread::spawn(move || {
                    let (lock, wake) = &*flag;
                    let mut stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
                    // Checked before every wait: the work may finish before this thread first
                    // takes the lock.
                    while !*stopped {
                        let (guard, timeout) = wake.wait_timeout(stopped, every).unwrap_or_else(|e| e.into_inner());
                        stopped = guard;
                        if !*stopped && timeout.timed_out() {
                            eprintln!("{}", task.line());
                        }
                    }
                });
                Shown::Ticker(Ticker { stop, thread, every })
            }
        };
        self.shown.lock().unwrap_or_else(|e| e.into_inner()).insert(task.id(), shown);
    }

    fn inc(&self, task: &Task, n: u64) {
        if let Some(b) = self.bar(task) {
            b.inc(n);
        }
    }

    fn set_total(&self, task: &Task, total: u64) {
        if let Some(b) = self.bar(task) {
            b.set_length(total);
        }
    }

    fn set_stage(&self, task: &Task, stage: &str) {
        if let Some(b) = self.bar(task) {
            b.set_message(if stage.is_empty() { task.label().to_string() } else { format!("{} ({stage})", task.label()) });
        }
    }

    /// The bar is cleared; in line mode, a task that took at least one interval and finished
    /// gets a last line (`height: 64/64 tiles (100%), 52 s`), one cut short by an error none.
    fn finish(&self, task: &Task, completed: bool) {
        let shown = self.shown.lock().unwrap_or_else(|e| e.into_inner()).remove(&task.id());
        match shown {
            None => {}
            Some(Shown::Bar(b)) => b.finish_and_clear(),
            Some(Shown::Ticker(t)) => {
                *t.stop.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
                t.stop.1.notify_all();
                let _ = t.thread.join();
                if completed && task.elapsed() >= t.every {
                    task.clear_stage();
                    eprintln!("{}", task.line());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;
    use trnbake_swg::report::Progress;

    #[test]
    fn the_ticker_stops_with_the_work() {
        // A ticker that never prints (a long interval) still ends at once on finish and drop.
        let t = Instant::now();
        let term = Terminal::with_mode(false, ProgressMode::Lines { every: Duration::from_secs(3600) });
        let p = Progress::new(&term, 2, "steps", "test");
        p.inc(2);
        p.finish();
        drop(Progress::new(&term, 2, "steps", "test"));
        assert!(t.elapsed() < Duration::from_secs(60));
        assert!(term.shown.lock().unwrap().is_empty());
    }
}
