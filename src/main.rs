//! The `hookd` binary: parse arguments, call the library, map the result to an exit code.

mod cli;

use clap::Parser;
use tracing_subscriber::filter::LevelFilter;

fn main() {
    // HOOKD_LOG: off, error, warn (default), info, debug or trace. Logs go to stderr.
    let level = std::env::var("HOOKD_LOG")
        .ok()
        .and_then(|v| v.parse::<LevelFilter>().ok())
        .unwrap_or(LevelFilter::WARN);
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .without_time()
        .init();
    let exit = cli::run(cli::Cli::parse());
    if let Some(msg) = exit.message {
        eprintln!("{msg}");
    }
    std::process::exit(exit.code);
}
