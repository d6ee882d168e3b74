//! The `trnbake` command line: clap flags become jobs for the library crates in `crates/`
//! (docs/src/architecture.md), and errors are printed once, here.

mod app;
mod bench;
mod cli;
mod nwn2_cmd;
mod scs_cmd;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Mesa's Vulkan drivers print "XDG_RUNTIME_DIR is invalid or not set" on every adapter
    // probe when it is unset (containers, CI). Point it at the temp folder first, while the
    // process is still single-threaded, so `--backend auto` stays quiet.
    if std::env::var_os("XDG_RUNTIME_DIR").is_none() {
        std::env::set_var("XDG_RUNTIME_DIR", std::env::temp_dir());
    }
    let cli = cli::Cli::parse();
    #[cfg(unix)]
    exit_cleanly_on_signals();
    let level = if cli.quiet { "error" } else { "warn" };
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| level.into()))
        .with_writer(std::io::stderr)
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
