//! `hookd exec`: run anything confined by the configured sandbox, for people and scripts, and
//! the model's shell calls as an adapter's rewrite carries them (with the adapter's decision).

use super::error::{Done, Error};
use super::load::{checked_options, options_for, ConfigArgs};
use crate::host::Host;
use crate::sandbox::RunError;
use nix::sys::signal::{signal, SigHandler, Signal};
use std::path::{Path, PathBuf};

/// `hookd exec`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    pub(super) cfg: ConfigArgs,
    /// Run this shell command (with bash) instead of ARGV: how an agent runs a model's shell
    /// call confined (the adapters rewrite the call to this).
    #[arg(long, value_name = "COMMAND", conflicts_with = "argv")]
    pub(super) shell: Option<String>,
    /// With --shell: once the command has ended, write the directory it ended in to FILE, if
    /// that is a directory inside the project (the agent's shell goes there afterwards, as it
    /// would have after the command itself). FILE must be in hookd's state directory, which
    /// confined commands cannot see.
    #[arg(long, value_name = "FILE", requires = "shell")]
    pub(super) cwd_file: Option<PathBuf>,
    /// The project, as the adapter decided it (its rewrite of a model's call carries it): the
    /// configuration is that project's and the user's, whatever directory the shell is in and
    /// whatever its HOME says.
    #[arg(long, value_name = "DIR")]
    pub(super) project: Option<PathBuf>,
    /// With --project: start the command in DIR (default: the current directory when it is
    /// inside the project, else the project).
    #[arg(long, value_name = "DIR", requires = "project")]
    pub(super) start_dir: Option<PathBuf>,
    /// With --project: the user's layer is DIR/.infer (default: the home the user database
    /// names, never the shell's HOME).
    #[arg(long, value_name = "DIR", requires = "project")]
    pub(super) user_home: Option<PathBuf>,
    /// Nothing writable but the command's own temporary directory: not the project, not the
    /// policy's `write` places.
    #[arg(long)]
    pub(super) read_only: bool,
    /// The agent's session the command belongs to (the adapter's rewrite carries it): its
    /// connections through hookd's proxy are that session's `network_request` events.
    #[arg(long, value_name = "ID")]
    pub(super) session: Option<String>,
    /// The program and its arguments (after `--`).
    #[arg(
        required_unless_present = "shell",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub(super) argv: Vec<String>,
}

/// `hookd exec -- ARGV`: the configured `sandbox:` (confined even where `enabled` is off; the
/// policy's `write`, `network` and `read_deny` apply), stdio inherited, its exit status passed
/// on (128 + N when signal N ended it). Exit 126 when it cannot be confined, naming what the
/// kernel lacks: it never runs unconfined.
pub(super) fn run(a: Args) -> Done {
    if a.project.is_none() && a.cfg.config_dir.is_none() {
        unsure_home()?;
    }
    let (opts, cwd) = match &a.project {
        Some(project) => as_decided(&a, project)?,
        None => (
            checked_options(&a.cfg)?,
            std::env::current_dir().map_err(Error::CurrentDir)?,
        ),
    };
    // What the repository's files only named (`KUBECONFIG=x`, `HOOKD_SOCKET=x`) was dropped
    // from this process; the user's store and hookd's socket there stay hidden and held.
    let mut opts = opts;
    opts.also_places
        .extend(super::MOVED_PLACES.get().into_iter().flatten().cloned());
    // The running daemon's events file, wherever it is (docs/headless.md puts it in the
    // project): hidden as the adapters' own, or a confined command empties and forges it.
    let socket = opts.effective_host().socket();
    if let Some(events) = socket.as_deref().and_then(crate::daemon::trail::events_of) {
        opts.also_places.push(("HOOKD_EVENTS".into(), events));
    }
    let config = crate::config::load(&opts).map_err(Error::Config)?;
    let mut policy = config.policy.sandbox.clone();
    policy.read_only |= a.read_only;
    // The temporary and runtime directories those variables named: sockets (an ssh-agent's in
    // `$TMPDIR`, gpg-agent's in the runtime directory) are kept there.
    policy.covered = (super::MOVED_PLACES.get().into_iter().flatten())
        .filter(|(name, path)| {
            matches!(name.as_str(), "TMPDIR" | "XDG_RUNTIME_DIR") && path.is_absolute()
        })
        .map(|(_, path)| path.clone())
        .collect();
    let (policy, project) = (&policy, &config.project_dir);
    // Ctrl-C and Ctrl-\ in a terminal reach the command through its waiter (it has no terminal
    // of its own); hookd waits for it and passes on how it ended, as a shell does. A handler
    // that does nothing, not "ignore": the command must not inherit an ignored SIGINT.
    extern "C" fn wait_on(_: nix::libc::c_int) {}
    for sig in [Signal::SIGINT, Signal::SIGQUIT] {
        // SAFETY: the handler does nothing, so it is async-signal-safe.
        let _ = unsafe { signal(sig, SigHandler::Handler(wait_on)) };
    }
    let host = config.host();
    // The audit file is made (as the adapters make it) before the command runs, so that the
    // sandbox holds it: a command that made it first could keep a second name for it.
    if let Some(events) = host.dir("HOOKD_EVENTS").filter(|p| p.as_os_str() != "-") {
        if let Err(e) = crate::events::open_to_append(&events) {
            eprintln!("hookd: the events file {}: {e}", events.display());
        }
    }
    let ran = match &a.shell {
        Some(command) => {
            let channel = a.cwd_file.as_deref();
            crate::sandbox::run_shell(policy, project, command, &cwd, channel, host).map(|r| {
                if let Some(note) = r.note {
                    eprintln!("{note}");
                }
                r.moved.iter().for_each(|m| eprintln!("hookd: {m}"));
                let session = crate::state::session_key(a.session.as_deref().unwrap_or(""));
                record(r.network, &session, &opts, host);
                r.status
            })
        }
        None => crate::sandbox::run(policy, project, &a.argv, &cwd, None, host).map(|r| {
            r.moved.iter().for_each(|m| eprintln!("hookd: {m}"));
            r.status
        }),
    };
    match ran {
        Ok(code) => Ok(code),
        Err(RunError::Unavailable(e)) => Err(Error::Confine(e.to_string())),
        Err(e) => Err(Error::Cannot(e.to_string())),
    }
}

/// A model's call's connections through hookd's proxy, as `network_request` events of
/// `session`: handed to the daemon at the host's socket when one runs (its stream, metrics,
/// dashboard, events file and OpenTelemetry export have them, as a hook's own), else where
/// hooks' events go here: `HOOKD_EVENTS`, the events file of a daemon gone from the socket, and
/// the user's OpenTelemetry export. What cannot be written is said on stderr; the call has run.
fn record(
    network: Vec<crate::sandbox::NetworkRequest>,
    session: &str,
    opts: &crate::config::LoadOptions,
    host: &Host,
) {
    if network.is_empty() {
        return;
    }
    let client = crate::route::ClientSettings::new(Some(opts), false);
    let (wait, _) = crate::route::DaemonWait::wait(None);
    // A daemon that answers numbers its own file: only a gone one's is appended to (as a
    // client's fallback does), never one a live daemon writes.
    let (left, gone) = match crate::route::daemon_connections(&client, session, &network, wait) {
        None => (network, true),
        Some(Ok(())) => return,
        Some(Err((why, done))) => {
            eprintln!(
                "hookd: the hookd daemon at {}: {why}; this call's connections are written here",
                client.socket.as_deref().unwrap_or(Path::new("?")).display()
            );
            (network.into_iter().skip(done).collect(), false)
        }
    };
    let events = host.dir("HOOKD_EVENTS");
    let daemon_events = (client.socket.as_deref())
        .filter(|_| gone)
        .and_then(crate::daemon::trail::read)
        .map(|t| crate::route::DaemonLog {
            path: t.events,
            max_bytes: t.max_bytes,
        })
        .filter(|e| events.as_ref() != Some(&e.path));
    let mut here = crate::route::Here {
        events,
        daemon_events,
        ..Default::default()
    };
    if let Some(e) = super::telemetry::exporter(Some(opts)) {
        here.export(e);
    }
    if let Err(e) = here.exec_connections(left, session) {
        eprintln!("hookd: {e}");
    }
}

/// A `HOME` the repository's files name is replaced by the user database's home for the
/// user's layer. Where the `HOME` this process had differs and holds a hookd configuration, it
/// may be the user's own (its `read_deny`, `network` and `write` lost with it) or the
/// repository's (`write: ['/']`): which cannot be told, so nothing runs. An adapter's rewrite
/// says (`--user-home`), and so does `--config-dir`.
fn unsure_home() -> Result<(), Error> {
    let moved = super::MOVED_PLACES.get().into_iter().flatten();
    let Some((_, home)) = moved.into_iter().find(|(name, _)| name == "HOME") else {
        return Ok(());
    };
    if crate::paths::user_home().as_deref() == Some(home) || !home.join(".infer").is_dir() {
        return Ok(());
    }
    Err(Error::Confine(format!(
        "the project's files (.env, .claude/settings*.json) set HOME, and the HOME this process had, {}, holds a hookd configuration (.infer/) that is not the user database's home's: whose it is cannot be told (docs/security.md, \"What a repository sets for its agent\")",
        crate::display::visible(&home.display().to_string())
    )))
}

/// The configuration and start directory an adapter decided (`--project`, `--start-dir`,
/// `--user-home`, `--config-dir`), read from those flags and never from the shell's directory
/// or HOME: the project's and the user's layers as the adapter loaded them.
fn as_decided(a: &Args, project: &Path) -> Result<(crate::config::LoadOptions, PathBuf), Error> {
    if super::exec_project().as_deref() != Some(project) {
        return Err(Error::Cannot(
            "--project must be given before the command, as `--project=DIR`".into(),
        ));
    }
    let start = match &a.start_dir {
        Some(dir) => dir.clone(),
        None => shell_dir_inside(project),
    };
    for (flag, dir) in [("--project", project), ("--start-dir", &start)] {
        if !dir.is_absolute() || !dir.is_dir() {
            return Err(Error::Cannot(format!(
                "{flag} {} is not an absolute path to a directory",
                dir.display()
            )));
        }
    }
    checked_options(&a.cfg)?;
    let mut opts = options_for(&a.cfg, &Host::of_this_process().with_cwd(&start))?;
    opts.project_dir = project.to_path_buf();
    opts.home_dir = a.user_home.clone().or_else(crate::paths::user_home);
    Ok((opts, start))
}

/// The current directory when it is inside `project` (resolved), else `project`: where a call
/// whose agent names no start directory (Crush) starts.
fn shell_dir_inside(project: &Path) -> PathBuf {
    let here = std::env::current_dir().ok();
    let (Some(here), Ok(root)) = (here, project.canonicalize()) else {
        return project.to_path_buf();
    };
    match here.canonicalize() {
        Ok(real) if real.starts_with(&root) => here,
        _ => project.to_path_buf(),
    }
}
