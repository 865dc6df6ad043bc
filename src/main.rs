//! The `hookd` binary: parse arguments, call the library, map the result to an exit code.

use clap::Parser;

fn main() {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("HOOKD_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .without_time()
        .init();
    let exit = hookd::cli::run(hookd::cli::Cli::parse());
    if let Some(msg) = exit.message {
        eprintln!("{msg}");
    }
    std::process::exit(exit.code);
}
