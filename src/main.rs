//! The `trnbake` command line: clap flags become jobs for the library crates in `crates/`
//! (docs/src/architecture.md), and errors are printed once, here.

mod app;
mod bench;
mod cli;
mod navmesh_cmd;
mod nwn2_cmd;
mod parse;
mod report;
mod scs_cmd;
mod tiles_cmd;

use clap::Parser;
use std::process::ExitCode;
use tracing_subscriber::fmt::{format, FmtContext, FormatEvent, FormatFields};

/// Log events as `warning: MESSAGE`, like the program's own `note:` and `error:` lines: no
/// timestamp or module path, and colour (of the level word) only on a terminal.
struct PlainEvents {
    colour: bool,
}

impl<S, N> FormatEvent<S, N> for PlainEvents
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut writer: format::Writer<'_>, event: &tracing::Event<'_>) -> std::fmt::Result {
        let (word, ansi) = match *event.metadata().level() {
            tracing::Level::ERROR => ("error", "31"),
            tracing::Level::WARN => ("warning", "33"),
            tracing::Level::INFO => ("info", "32"),
            tracing::Level::DEBUG => ("debug", "34"),
            tracing::Level::TRACE => ("trace", "35"),
        };
        if self.colour {
            write!(writer, "\x1b[{ansi}m{word}\x1b[0m: ")?;
        } else {
            write!(writer, "{word}: ")?;
        }
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// Keep freed memory for reuse instead of handing it back to the kernel (glibc). A streamed
/// bake frees and allocates the same band-sized buffers (hundreds of MB) for every band; glibc
/// serves blocks above its mmap threshold (32 MB at most) with fresh mappings, so every band
/// paid page faults and zeroing again: ≈ 8 s of system time on the 2 m planet (issue #23,
/// docs/src/performance.md). Raising both thresholds reuses them, at no cost in peak memory.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 30);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

fn main() -> ExitCode {
    keep_freed_memory();
    // Mesa's Vulkan drivers print "XDG_RUNTIME_DIR is invalid or not set" on every adapter
    // probe when it is unset (containers, CI). Point it at the temp folder first, while the
    // process is still single-threaded, so `--backend auto` stays quiet.
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir());
    }
    // One exit-code rule (README, Exit codes): 0 success, 1 any error, usage errors included;
    // --help and --version print to standard output and succeed.
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(1) } else { ExitCode::SUCCESS };
        }
    };
    #[cfg(unix)]
    exit_cleanly_on_signals();
    let level = if cli.quiet { "error" } else { "warn" };
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| level.into()))
        .with_writer(std::io::stderr)
        .with_ansi(colour)
        .event_format(PlainEvents { colour })
        .init();
    match app::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A closed pipe (`trnbake info x | head`) is not an error.
            if e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)) {
                return ExitCode::SUCCESS;
            }
            eprintln!("error: {e:#}");
            if let Some(hint) = flag_hint(&e) {
                eprintln!("hint: {hint}");
            }
            ExitCode::from(1)
        }
    }
}

/// The command-line flags that fix an error the libraries describe in their own terms.
fn flag_hint(e: &anyhow::Error) -> Option<String> {
    use trnbake_swg::plan::PlanError;
    e.chain().find_map(|c| {
        // A plan error reaches here itself, or inside the bake's error (transparent there).
        let plan = c.downcast_ref::<PlanError>().or_else(|| match c.downcast_ref::<trnbake_bake::Error>() {
            Some(trnbake_bake::Error::Plan(p)) => Some(p),
            _ => None,
        });
        match plan {
            Some(PlanError::MissingBitmap { path, .. }) => {
                Some(format!("pass --data-root DIR so that `{path}` resolves to DIR/{path}, or --missing-bitmaps=zero to treat it as black"))
            }
            _ => None,
        }
    })
}

/// SIGINT and SIGTERM end the run cleanly: no temp file is left beside the outputs, the user is
/// told what was kept for a resume, and the exit code is 128 + the signal (130, 143).
#[cfg(unix)]
fn exit_cleanly_on_signals() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else { return };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let removed = trnbake_raster::fsutil::interrupt();
            let name = if signal == SIGINT { "SIGINT" } else { "SIGTERM" };
            eprintln!("interrupted ({name}): removed {removed} temporary file(s)");
            if let Some(note) = trnbake_bake::folder::interrupt_note() {
                eprintln!("  {note}");
            }
            std::process::exit(128 + signal);
        }
    });
}
