//! `hookd run AGENT -- PROGRAM ARGS…`: the launcher for unattended runs. It starts the agent
//! only where hookd holds (`crate::adapter::managed::refusals`), and otherwise says why.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

use super::error::{Done, Error};
use super::install::Agent;
use crate::host::Host;

/// `hookd run`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The agent.
    #[arg(value_enum)]
    pub(super) agent: Agent,
    /// Start the agent itself inside the sandbox (its whole process tree): it writes only the
    /// project, its own state and temporary directory, reaches only its model API's hosts and
    /// `sandbox.network`'s through hookd's proxy, and its shell calls run in a stricter sandbox
    /// nested in it. hookd stays as its parent, running the proxy, and exits as it does.
    #[arg(long)]
    pub(super) confine: bool,
    /// With --confine: a host the agent may reach besides its model API's and
    /// `sandbox.network`'s (its own API gateway; a model server on loopback is reached only
    /// when listed exactly, e.g. `127.0.0.1`). Repeatable.
    #[arg(long, value_name = "HOST", requires = "confine")]
    pub(super) allow_host: Vec<String>,
    /// The agent's command line, after `--`: its program and its arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM ARGS")]
    pub(super) command: Vec<OsString>,
}

/// `hookd run`: check, then become the agent.
pub(super) fn run(a: Args) -> Done {
    let host = Host::of_this_process();
    let Some((program, rest)) = a.command.split_first() else {
        return Err(Error::Cannot(
            "hookd run: name the agent's program after `--`".into(),
        ));
    };
    let args: Vec<String> = rest
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let refused = crate::adapter::managed::refusals(a.agent.adapter(), &host, &args);
    if !refused.is_empty() {
        return Err(Error::No(format!(
            "hookd run: {} not started: hookd would not hold in this run:\n  - {}",
            crate::display::visible(&program.to_string_lossy()),
            refused.join("\n  - ")
        )));
    }
    if a.confine {
        return super::confine::run(a.agent.adapter(), &a.command, &a.allow_host);
    }
    let err = std::process::Command::new(program).args(rest).exec();
    Err(Error::Cannot(format!(
        "hookd run: cannot start {}: {err}",
        crate::display::visible(&program.to_string_lossy())
    )))
}
