//! `hookd exec`: run anything confined by the configured sandbox, for people and scripts.

use super::error::{Done, Error};
use super::load::{load, ConfigArgs};
use hookd::sandbox::RunError;
use nix::sys::signal::{signal, SigHandler, Signal};

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
    pub(super) cwd_file: Option<std::path::PathBuf>,
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
    let config = load(a.cfg)?;
    let cwd = std::env::current_dir().map_err(Error::CurrentDir)?;
    let (policy, project) = (&config.policy.sandbox, &config.project_dir);
    // Ctrl-C and Ctrl-\ in a terminal reach the command through its waiter (it has no terminal
    // of its own); hookd waits for it and passes on how it ended, as a shell does. A handler
    // that does nothing, not "ignore": the command must not inherit an ignored SIGINT.
    extern "C" fn wait_on(_: nix::libc::c_int) {}
    for sig in [Signal::SIGINT, Signal::SIGQUIT] {
        // SAFETY: the handler does nothing, so it is async-signal-safe.
        let _ = unsafe { signal(sig, SigHandler::Handler(wait_on)) };
    }
    let host = config.host();
    let ran = match &a.shell {
        Some(command) => {
            let channel = a.cwd_file.as_deref();
            hookd::sandbox::run_shell(policy, project, command, &cwd, channel, host).map(|r| {
                if let Some(note) = r.note {
                    eprintln!("{note}");
                }
                r.status
            })
        }
        None => hookd::sandbox::run(policy, project, &a.argv, &cwd, None, host),
    };
    match ran {
        Ok(code) => Ok(code),
        Err(RunError::Unavailable(e)) => Err(Error::Confine(e.to_string())),
        Err(e) => Err(Error::Cannot(e.to_string())),
    }
}
