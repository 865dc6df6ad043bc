//! The `hookd` binary: parse arguments, call the library, map the result to an exit code.

mod cli;

use clap::Parser;
use tracing_subscriber::filter::LevelFilter;

fn main() {
    // A statically linked hookd started with a loader variable starts again without it.
    cli::loader::start_clear();
    // Every child of this process is hookd's: an unconfined hook's leftovers are reaped here,
    // without a waiter process per hook.
    hookd::runner::reap_here();
    // First, before anything reads the environment (the log level, the arguments' variables):
    // an adapter call drops what the agent's project set there.
    let early = cli::early();
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
    // Every error is rendered here, once, with the exit code that belongs to it.
    let code = match cli::run(cli::Cli::parse(), early) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            e.code()
        }
    };
    cli::telemetry::flush_at_exit();
    std::process::exit(code);
}
