//! The `hookd` binary's command line: one module per subcommand, each owning its arguments;
//! this one parses, dispatches to them, and holds what they share.

mod adapter;
mod allow;
mod check;
mod dispatch;
mod error;
mod events;
mod imports;
mod install;
mod load;
mod points;
mod serve;
mod trust;

pub(crate) use self::error::Done;
use self::imports::ImportFrom;
use clap::{Parser, Subcommand};
use hookd::catalog::HookPoint;
use hookd::config::{self, Mode};
use std::io::{IsTerminal, Read, Write};

/// The largest dispatch context read from stdin.
pub(super) const MAX_CONTEXT_BYTES: usize = 16 * 1024 * 1024;

/// hookd: YAML-configured hooks for AI coding agents, gated by a bash allow-list.
#[derive(Debug, Parser)]
#[command(name = "hookd", version, about, long_about = None, after_help = "Configuration lives in .infer/ (hooks.yaml, reminders.yaml, config.yaml). See docs/ for the guide.")]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the hook points in loop order, with what a hook at each may do.
    Points(points::Args),
    /// Validate every configuration file and show what would run where.
    Check(check::Args),
    /// Ask the gate whether a command may run. Exit 0 allowed, 1 denied.
    Allow(allow::Args),
    /// Trust this project's .infer/ as it is now, after showing what it would run and allow.
    /// Any later change to those files (or to a script a hook runs) untrusts it again.
    Trust(trust::Args),
    /// Be an agent's hook command: read its payload on stdin, dispatch, reply in its format.
    Adapter(adapter::Args),
    /// Add hookd's adapter to an agent's settings (merging; run twice changes nothing).
    Install(install::Args),
    /// Print another tool's permission rules as hookd allow entries (never writes anything).
    Import {
        #[command(subcommand)]
        from: ImportFrom,
    },
    /// Remove exactly the entries `hookd install` added.
    Uninstall(install::UninstallArgs),
    /// Run the daemon: agents dispatch over a Unix socket (and optionally loopback HTTP);
    /// dashboards follow GET /v1/events. Stops cleanly on SIGTERM or SIGINT.
    Serve(serve::Args),
    /// Print the event stream for a person: from the running daemon, or from an events file.
    Events(events::Args),
    /// Run what is due at POINT: context JSON on stdin, Outcome JSON on stdout.
    Dispatch(dispatch::Args),
}

/// An on/off environment variable read with the one parser ([`config::parse_bool`]). Unset is
/// off; a value that is neither on nor off is reported on stderr and taken as `unreadable`.
pub(super) fn env_switch(name: &str, unreadable: bool) -> bool {
    let Some(value) = std::env::var_os(name) else {
        return false;
    };
    match value.to_str().and_then(config::parse_bool) {
        Some(on) => on,
        None => {
            eprintln!(
                "hookd: {name}={} is not on or off (1/true/yes/on, 0/false/no/off); taken as {}",
                value.to_string_lossy().escape_debug(),
                if unreadable { "on" } else { "off" }
            );
            unreadable
        }
    }
}

pub(super) fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse::<Mode>().map_err(|e| e.to_string())
}

pub(super) fn parse_point(s: &str) -> Result<HookPoint, String> {
    s.parse::<HookPoint>()
        .map_err(|e| format!("{e}; valid points: {}", HookPoint::names_joined()))
}

/// Run the parsed command line.
pub(crate) fn run(cli: Cli) -> Done {
    match cli.command {
        Command::Points(a) => points::run(a),
        Command::Check(a) => check::run(a),
        Command::Allow(a) => allow::run(a),
        Command::Trust(a) => trust::run(a),
        Command::Events(a) => events::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Adapter(a) => adapter::run(a),
        Command::Install(a) => install::run(a),
        Command::Uninstall(a) => install::run_uninstall(a),
        Command::Import { from } => imports::run(from),
        Command::Dispatch(a) => dispatch::run(a),
    }
}

pub(super) fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

pub(super) fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub(super) fn read_stdin() -> Result<String, String> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(String::new());
    }
    let mut buf = Vec::new();
    stdin
        .lock()
        .take(MAX_CONTEXT_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    if buf.len() > MAX_CONTEXT_BYTES {
        return Err(format!("stdin is over {MAX_CONTEXT_BYTES} bytes"));
    }
    String::from_utf8(buf).map_err(|_| "stdin is not UTF-8".to_string())
}

/// Rotated events files kept beside the current one.
pub(super) const LOG_KEEP: usize = 3;
