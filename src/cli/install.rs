//! `hookd install` and `hookd uninstall`: hookd's adapter in an agent's settings.

use super::error::{Done, Error};
use super::out;
use crate::adapter::{self, install, Scope};
use crate::config::remember_install;

/// `hookd install`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The agent.
    #[arg(value_enum)]
    pub(super) agent: Agent,
    /// Which settings file. `managed` (as root) is the one a project cannot switch off or add
    /// hooks beside, which `hookd run` requires.
    #[arg(long, value_enum, default_value = "project")]
    pub(super) scope: Scope,
    /// Install the adapter with --fail-closed: if hookd itself fails, the agent is denied.
    /// Use it for unattended agents; the flag lives in the agent's settings, so it holds
    /// even where the agent strips its hooks' environment.
    #[arg(long)]
    pub(super) fail_closed: bool,
    /// Install the adapter with --gate-shell-tools: the model's shell commands face the gate.
    #[arg(long)]
    pub(super) gate_shell_tools: bool,
    /// Write through a settings file or directory that is a symbolic link.
    #[arg(long)]
    pub(super) follow_symlinks: bool,
    /// Install even into a settings file whose `env` sets a variable that runs code in the
    /// agent's shell before hookd can confine a call (`BASH_ENV`, `LD_PRELOAD`, …): the
    /// repository's code would run first, unconfined.
    #[arg(long)]
    pub(super) force: bool,
}

/// `hookd uninstall`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct UninstallArgs {
    /// The agent.
    #[arg(value_enum)]
    pub(super) agent: Agent,
    /// Which settings file.
    #[arg(long, value_enum, default_value = "project")]
    pub(super) scope: Scope,
    /// Write through a settings file or directory that is a symbolic link.
    #[arg(long)]
    pub(super) follow_symlinks: bool,
}

/// The agents with adapters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Agent {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// Charm's Crush.
    Crush,
    /// Google's Gemini CLI.
    Gemini,
}

impl Agent {
    pub(super) fn adapter(self) -> &'static dyn adapter::Adapter {
        match self {
            Agent::ClaudeCode => &adapter::claude::ClaudeCode,
            Agent::Crush => &adapter::crush::Crush,
            Agent::Gemini => &adapter::gemini::Gemini,
        }
    }
}

/// Install (or with `remove`, uninstall) and say what changed.
fn install(agent: Agent, scope: Scope, remove: bool, opts: install::InstallOptions<'_>) -> Done {
    let (spec, host) = (agent.adapter(), crate::host::Host::of_this_process());
    let path = spec.settings_path(scope, &host).map_err(Error::library)?;
    let change = if remove {
        install::uninstall(spec, &path, opts)
    } else {
        let hookd = std::env::current_exe()
            .and_then(|p| p.canonicalize())
            .map_err(|e| Error::Cannot(format!("cannot find this hookd binary: {e}")))?;
        let change = install::install(spec, &path, &hookd, opts);
        // Protected from the model wherever the agent is told its settings are later.
        if let (Ok(_), Scope::User, Some(home)) = (&change, scope, host.home()) {
            let real = path.canonicalize().unwrap_or_else(|_| path.clone());
            remember_install(&home, &[&path, &real]).map_err(Error::library)?;
        }
        if matches!(change, Ok(install::Change::Written { .. })) && matches!(scope, Scope::Project)
        {
            eprintln!("{}", install::shared_install_warning(spec, &path, &hookd));
        }
        change
    }
    .map_err(Error::library)?;
    out(&format!("{}\n", change.said(&path, remove)));
    Ok(0)
}

/// `hookd install AGENT`.
pub(super) fn run(a: Args) -> Done {
    let flags = [
        a.fail_closed.then_some("--fail-closed"),
        a.gate_shell_tools.then_some("--gate-shell-tools"),
    ];
    let flags: Vec<&str> = flags.into_iter().flatten().collect();
    let opts = install::InstallOptions {
        flags: &flags,
        follow_symlinks: a.follow_symlinks,
        force: a.force,
        managed: matches!(a.scope, Scope::Managed),
    };
    install(a.agent, a.scope, false, opts)
}

/// `hookd uninstall AGENT`.
pub(super) fn run_uninstall(a: UninstallArgs) -> Done {
    let opts = install::InstallOptions {
        flags: &[],
        follow_symlinks: a.follow_symlinks,
        force: true,
        managed: matches!(a.scope, Scope::Managed),
    };
    install(a.agent, a.scope, true, opts)
}
