//! The `trnbake` command line: clap flags become jobs for the library crates in `crates/`
//! (docs/src/architecture.md), and errors are printed once, here.

// `!(a < b)` is deliberate where it appears: it keeps NaN semantics identical to the WGSL twins.
#![allow(clippy::neg_cmp_op_on_partial_ord)]
#![allow(clippy::too_many_arguments)]

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
            ExitCode::from(1)
        }
    }
}
