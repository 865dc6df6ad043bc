//! `hookd install` and `hookd uninstall`: hookd's adapter in an agent's settings.

use super::error::{Done, Error};
use super::out;
use hookd::adapter;
use std::path::PathBuf;

/// `hookd install`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The agent.
    #[arg(value_enum)]
    pub(super) agent: Agent,
    /// Which settings file.
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

/// Where `hookd install` writes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(super) enum Scope {
    /// The project's settings, shared with the team (`.claude/settings.json`,
    /// `.gemini/settings.json`, `crush.json`).
    Project,
    /// The project's personal settings, not committed (Claude Code's `.claude/settings.local.json`).
    Local,
    /// Your settings, for every project (`~/.claude/settings.json`, `~/.gemini/settings.json`,
    /// `~/.config/crush/crush.json`).
    User,
}

pub(super) fn settings_path(agent: Agent, scope: Scope) -> Result<PathBuf, Error> {
    let scope = match scope {
        Scope::Project => adapter::Scope::Project,
        Scope::Local => adapter::Scope::Local,
        Scope::User => adapter::Scope::User,
    };
    agent
        .adapter()
        .settings_path(scope, &|name| std::env::var_os(name))
        .map_err(Error::library)
}

pub(super) fn install(
    agent: Agent,
    scope: Scope,
    remove: bool,
    opts: adapter::install::InstallOptions<'_>,
) -> Done {
    let path = settings_path(agent, scope)?;
    let result = if remove {
        adapter::install::uninstall(agent.adapter(), &path, opts)
    } else {
        let hookd = match std::env::current_exe().and_then(|p| p.canonicalize()) {
            Ok(p) => p,
            Err(e) => return Err(Error::Cannot(format!("cannot find this hookd binary: {e}"))),
        };
        adapter::install::install(agent.adapter(), &path, &hookd, opts)
    };
    match result {
        Ok(adapter::install::Change::Unchanged) => {
            out(&format!(
                "hookd: {} already {}; nothing changed\n",
                path.display(),
                if remove {
                    "has no hookd entries"
                } else {
                    "runs hookd"
                }
            ));
            Ok(0)
        }
        Ok(adapter::install::Change::Written { backup }) => {
            let saved = backup
                .map(|b| format!(" (previous version saved as {})", b.display()))
                .unwrap_or_default();
            let what = if remove {
                "removed hookd's entries from"
            } else {
                "added hookd's adapter to"
            };
            out(&format!("hookd: {what} {}{saved}\n", path.display()));
            if !remove && matches!(scope, Scope::Project) {
                eprintln!(
                    "warning: {} is shared with everyone who clones the project, and it now runs {} by that path. On a machine where it does not exist, {} cannot start the hook and goes on without it (a hook that cannot start does not block), so --fail-closed cannot hold there. Install with --scope user{} on each machine instead, or keep hookd at this path everywhere.",
                    path.display(),
                    std::env::current_exe()
                        .and_then(|p| p.canonicalize())
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                    agent.adapter().name(),
                    if matches!(agent, Agent::ClaudeCode) { " (or local)" } else { "" }
                );
            }
            Ok(0)
        }
        Ok(adapter::install::Change::Removed) => {
            out(&format!(
                "hookd: removed {}: it held only hookd's entries\n",
                path.display()
            ));
            Ok(0)
        }
        Err(e) => Err(Error::library(e)),
    }
}

/// `hookd install AGENT`.
pub(super) fn run(a: Args) -> Done {
    let flags: Vec<&str> = [
        (a.fail_closed, "--fail-closed"),
        (a.gate_shell_tools, "--gate-shell-tools"),
    ]
    .into_iter()
    .filter_map(|(on, f)| on.then_some(f))
    .collect();
    let opts = adapter::install::InstallOptions {
        flags: &flags,
        follow_symlinks: a.follow_symlinks,
    };
    install(a.agent, a.scope, false, opts)
}

/// `hookd uninstall AGENT`.
pub(super) fn run_uninstall(a: UninstallArgs) -> Done {
    let opts = adapter::install::InstallOptions {
        flags: &[],
        follow_symlinks: a.follow_symlinks,
    };
    install(a.agent, a.scope, true, opts)
}
