//! The `hookd` binary's command line (the `cli` feature): one module per subcommand, each
//! owning its arguments; this one parses, dispatches to them, and holds what they share. Its
//! one public item is [`main`], the whole program: `src/main.rs` calls it and nothing else,
//! so the command line's helpers stay private to the crate.

mod adapter;
mod allow;
mod check;
mod completions;
mod confine;
mod dispatch;
mod error;
mod events;
mod exec;
mod imports;
mod init;
mod install;
mod load;
mod loader;
mod man;
mod points;
mod run;
mod schema;
mod serve;
mod telemetry;
mod trust;

pub(crate) use self::error::Done;
use self::imports::ImportFrom;
use crate::catalog::HookPoint;
use crate::config::Mode;
pub(super) use crate::display::plural;
use crate::host::Host;
use clap::builder::TypedValueParser as _;
use clap::{Parser, Subcommand};
use std::io::{IsTerminal, Write};

/// The `hookd` program: parse the process's arguments, run the subcommand, print its error;
/// the exit code. Reads and changes the process (its environment first: an adapter call drops
/// what the agent's project set there, before anything reads it), so only a binary calls it.
pub fn main() -> i32 {
    // A statically linked hookd started with a loader variable starts again without it.
    loader::start_clear();
    // Every child of this process is hookd's: an unconfined hook's leftovers are reaped here,
    // without a waiter process per hook.
    crate::runner::reap_here();
    // First, before anything reads the environment (the log level, the arguments' variables):
    // an adapter call drops what the agent's project set there.
    let early = early();
    // HOOKD_LOG: off, error, warn (default), info, debug or trace. Logs go to stderr.
    let level = std::env::var("HOOKD_LOG")
        .ok()
        .and_then(|v| v.parse::<tracing_subscriber::filter::LevelFilter>().ok())
        .unwrap_or(tracing_subscriber::filter::LevelFilter::WARN);
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .without_time()
        .init();
    // Every error is rendered here, once, with the exit code that belongs to it.
    let code = match run(Cli::parse_hot_first(), early) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{e}");
            e.code()
        }
    };
    telemetry::flush_at_exit();
    code
}

/// hookd: YAML-configured hooks for AI coding agents, gated by a bash allow-list.
#[derive(Debug, Parser)]
#[command(name = "hookd", version, about, long_about = None, after_help = "Configuration lives in .infer/ (hooks.yaml, reminders.yaml, config.yaml). See docs/ for the guide.")]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

impl Cli {
    /// The process's arguments; `hookd adapter` and `hookd exec` (every tool call of an agent
    /// runs one) by [`Hot`], which builds only that subcommand's arguments: clap building
    /// every subcommand's cost each call 0.17 ms, and the other one's 15 µs more. What `Hot`
    /// does not take (`--help`, an error) goes to the whole parser, which says it as ever.
    fn parse_hot_first() -> Cli {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        let first = args.get(1).and_then(|a| a.to_str());
        let hot = match first {
            Some("adapter") => Hot::<HotAdapter>::try_parse_from(&args)
                .map(|h| match h.command {
                    HotAdapter::Adapter(a) => Command::Adapter(a),
                })
                .ok(),
            Some("exec") => Hot::<HotExec>::try_parse_from(&args)
                .map(|h| match h.command {
                    HotExec::Exec(a) => Command::Exec(a),
                })
                .ok(),
            _ => None,
        };
        match hot {
            Some(command) => Cli { command },
            None => Cli::parse_from(args),
        }
    }
}

/// [`Cli`] with one of the two subcommands agents run on every call, the one the call names
/// (`C`: [`HotAdapter`] or [`HotExec`]), and nothing else to build.
#[derive(Debug, Parser)]
#[command(name = "hookd")]
struct Hot<C: Subcommand> {
    #[command(subcommand)]
    command: C,
}

/// [`Command`]'s `Adapter` alone, the same arguments (never shown: help and errors come from
/// [`Cli`]).
#[derive(Debug, Subcommand)]
enum HotAdapter {
    Adapter(adapter::Args),
}

/// [`Command`]'s `Exec` alone, as [`HotAdapter`].
#[derive(Debug, Subcommand)]
enum HotExec {
    Exec(exec::Args),
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
    /// Start an unattended agent (`hookd run claude-code -- claude -p …`) only where hookd
    /// holds: installed in the agent's managed settings, which the project cannot switch off,
    /// the project's agent files opening no way around it. Otherwise refuse, saying why.
    Run(run::Args),
    /// Remove exactly the entries `hookd install` added.
    Uninstall(install::UninstallArgs),
    /// Run the daemon: agents dispatch over a Unix socket (and optionally loopback HTTP);
    /// dashboards follow GET /v1/events. Stops cleanly on SIGTERM or SIGINT.
    Serve(serve::Args),
    /// Print the event stream for a person: from the running daemon, or from an events file.
    Events(events::Args),
    /// Run what is due at POINT: context JSON on stdin, Outcome JSON on stdout.
    Dispatch(dispatch::Args),
    /// Write a first ~/.infer/ (the example configuration, or --headless the unattended one);
    /// never over a file that exists. --agent also installs that agent's hooks.
    Init(init::Args),
    /// Print shell completions for bash, zsh, fish, elvish or PowerShell (hook points complete
    /// after `dispatch`).
    Completions(completions::Args),
    /// Print the JSON Schema of hooks.yaml, reminders.yaml, config.yaml or of an event.
    Schema(schema::Args),
    /// Print hookd's manual page (roff), every subcommand included: `hookd man | man -l -`.
    Man,
    /// Run a program confined by the configured sandbox (writes only in the project and the
    /// temporary directory, credential stores hidden, no network, or only the hosts
    /// `sandbox.network` lists, through hookd's proxy). Exit 126 when this kernel cannot
    /// confine it.
    Exec(exec::Args),
}

/// What must happen before the command line is parsed: the library's
/// [`crate::adapter::handle::settle_process`], for what the first argument names (`hookd` has
/// no options before its subcommand), so that nothing after it (the log level, clap's `env =`
/// variables) reads a repository's values.
pub(crate) fn early() -> Option<crate::adapter::handle::Arrival> {
    use crate::adapter::handle::{settle_process, Settled, Start};
    let start = match std::env::args_os()
        .nth(1)
        .as_deref()
        .and_then(|s| s.to_str())
    {
        Some("adapter") => Start::Adapter,
        Some("exec") => Start::ConfinedCall(exec_project()),
        _ => Start::Other,
    };
    // `TMPDIR` names no place of the catalog, so the drop does not report it: looked at here.
    let temp = std::env::var_os("TMPDIR");
    match settle_process(start, read_stdin) {
        Settled::Adapter(a) => Some(*a),
        Settled::Confined(mut moved) => {
            let temp = temp.filter(|t| std::env::var_os("TMPDIR").as_ref() != Some(t));
            moved.extend(temp.map(|t| ("TMPDIR".to_string(), t.into())));
            let _ = MOVED_PLACES.set(moved);
            None
        }
        Settled::Refused(bad) => {
            // Read by the model (the agent's shell shows it): what happened, no recipe.
            for u in bad {
                eprintln!(
                    "hookd: {u}: what it sets for the agent is unknown, so hookd exec runs nothing"
                );
            }
            std::process::exit(126);
        }
        _ => None,
    }
}

/// The place variables [`early`]'s drop took from `hookd exec`'s environment, with the values
/// they had: the sandbox still hides and holds what they name.
pub(super) static MOVED_PLACES: std::sync::OnceLock<Vec<(String, std::path::PathBuf)>> =
    std::sync::OnceLock::new();

/// `hookd exec --project=DIR`'s project, read from the arguments before they are parsed (the
/// scrub of what the project set for its agent must read that project's files first); `exec`
/// checks that the parsed arguments say the same.
pub(super) fn exec_project() -> Option<std::path::PathBuf> {
    static PROJECT: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    PROJECT
        .get_or_init(|| {
            let mut args = std::env::args_os().skip(2);
            while let Some(arg) = args.next() {
                let Some(text) = arg.to_str() else { continue };
                match text {
                    // The command's own words follow.
                    "--" | "--shell" => return None,
                    "--project" => return args.next().map(Into::into),
                    // A flag whose value is the next word.
                    "--config-dir" | "--cwd-file" | "--start-dir" | "--user-home" | "--session" => {
                        args.next();
                        continue;
                    }
                    _ if text.starts_with("--shell=") || !text.starts_with('-') => return None,
                    _ => {}
                }
                if let Some(dir) = text.strip_prefix("--project=") {
                    return Some(dir.into());
                }
            }
            None
        })
        .clone()
}

/// clap's value parser for a file argument whose variable may be set empty (`HOOKD_EVENTS=`):
/// any path, empty included; [`given_path`] then reads empty as not given.
pub(super) fn path_arg() -> impl clap::builder::TypedValueParser<Value = std::path::PathBuf> {
    clap::builder::OsStringValueParser::new().map(std::path::PathBuf::from)
}

/// A file argument as given, an empty one (`HOOKD_EVENTS=`) as not given.
pub(super) fn given_path(path: Option<std::path::PathBuf>) -> Option<std::path::PathBuf> {
    path.filter(|p| !p.as_os_str().is_empty())
}

pub(super) fn parse_mode(s: &str) -> Result<Mode, String> {
    s.parse::<Mode>().map_err(|e| e.to_string())
}

/// The mode argument: [`parse_mode`]'s messages, and the modes' names for completions (not
/// file names) and help.
#[derive(Clone, Copy, Debug)]
pub(super) struct ModeArg;

impl clap::builder::TypedValueParser for ModeArg {
    type Value = Mode;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Mode, clap::Error> {
        let parse: fn(&str) -> Result<Mode, String> = parse_mode;
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            Mode::ALL
                .into_iter()
                .map(|m| clap::builder::PossibleValue::new(m.name())),
        ))
    }
}

/// The hook point argument: [`parse_point`]'s messages, and the catalog's names for
/// completions and help.
#[derive(Clone, Copy, Debug)]
pub(super) struct PointArg;

impl clap::builder::TypedValueParser for PointArg {
    type Value = HookPoint;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<HookPoint, clap::Error> {
        let parse: fn(&str) -> Result<HookPoint, String> = parse_point;
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            HookPoint::ALL
                .into_iter()
                .map(|p| clap::builder::PossibleValue::new(p.name())),
        ))
    }
}

pub(super) fn parse_point(s: &str) -> Result<HookPoint, String> {
    s.parse::<HookPoint>()
        .map_err(|e| format!("{e}; valid points: {}", HookPoint::names_joined()))
}

/// Run the parsed command line.
pub(crate) fn run(cli: Cli, early: Option<crate::adapter::handle::Arrival>) -> Done {
    match cli.command {
        Command::Points(a) => points::run(a),
        Command::Check(a) => check::run(a),
        Command::Allow(a) => allow::run(a),
        Command::Trust(a) => trust::run(a),
        Command::Events(a) => events::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Adapter(a) => adapter::run(a, early),
        Command::Install(a) => install::run(a),
        Command::Run(a) => run::run(a),
        Command::Uninstall(a) => install::run_uninstall(a),
        Command::Import { from } => imports::run(from),
        Command::Dispatch(a) => dispatch::run(a),
        Command::Exec(a) => exec::run(a),
        Command::Completions(a) => completions::run(a),
        Command::Schema(a) => schema::run(a),
        Command::Init(a) => init::run(a),
        Command::Man => man::man(),
    }
}

/// What the library's reports read of this process: its directory, its environment, where
/// telemetry goes.
pub(super) fn around(opts: Option<&crate::config::LoadOptions>) -> crate::review::Around {
    crate::review::Around {
        host: Host::of_this_process(),
        telemetry: telemetry::exporter(opts).map(|e| e.settings().describe()),
    }
}

pub(super) fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Standard input as text (none from a terminal), bounded.
pub(super) fn read_stdin() -> Result<String, crate::dispatch::InputError> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(String::new());
    }
    crate::dispatch::Context::read_text(stdin.lock(), "stdin")
}

/// Rotated events files kept beside the current one.
pub(super) const LOG_KEEP: usize = crate::daemon::LOG_KEEP;
