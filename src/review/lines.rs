//! `hookd check`'s one-subject lines: the project's trust, the sandbox, the hooks'
//! environment, and agents' settings that run a hookd that is not there.

use super::{plural, Around};
use crate::adapter::{self, install::Scope};
use crate::config::{self, Config};
use crate::display::visible;
use std::path::{Path, PathBuf};

/// One line on whether the project's configuration acts.
pub(super) fn trust_line(config: &Config) -> String {
    let hooks = config
        .hooks
        .hooks
        .iter()
        .filter(|h| h.origin.source == config::Source::Project)
        .count();
    match &config.trust {
        config::ProjectTrust::NotApplicable => "project trust: not applicable (no project configuration read)".into(),
        config::ProjectTrust::Trusted { since } => format!("project trust: trusted since {since}"),
        config::ProjectTrust::TrustedByFlag => "project trust: trusted for this run (--trust-project or HOOKD_TRUST_PROJECT)".into(),
        config::ProjectTrust::Untrusted { changed } => format!(
            "project trust: UNTRUSTED ({}): its {hooks} hook{} will be skipped, {} allow entr{} and {} reminder{} are ignored.\n  Review what follows, then run `hookd trust` here to let it act.",
            if *changed { "changed since it was trusted" } else { "never trusted" },
            plural(hooks),
            config.ignored_allow.len(),
            if config.ignored_allow.len() == 1 { "y" } else { "ies" },
            config.ignored_reminders,
            plural(config.ignored_reminders),
        ),
    }
}

/// The sandbox: on or off, what it lets confined commands do, and whether this kernel
/// enforces it; when it is on and cannot be enforced, the sentence `--strict` fails on (every
/// hook would be skipped).
pub(super) fn sandbox_line(config: &Config) -> (String, Option<String>) {
    let policy = &config.policy.sandbox;
    let missing = crate::sandbox::support().missing();
    let kernel = match crate::sandbox::support().landlock_abi {
        Some(abi) if missing.is_empty() => {
            format!("this kernel enforces it with Landlock ABI {abi} and user namespaces")
        }
        _ => format!(
            "this kernel cannot enforce it: it lacks {}",
            missing.join(" and ")
        ),
    };
    if !policy.enabled {
        return (
            format!(
                "sandbox: off: hooks run with all your rights; `sandbox: {{enabled: true}}` in your config.yaml confines them ({})\n",
                kernel.replace("enforces it with", "can, with")
            ),
            None,
        );
    }
    let places = crate::sandbox::writable_places(policy, &config.project_dir)
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let modes: Vec<&str> = policy.read_only_modes.iter().map(|m| m.name()).collect();
    let read_only = match modes.as_slice() {
        [] => String::new(),
        m => format!(
            "; the model's calls in {} mode: read-only (nothing but their own temporary directory)",
            m.join(", ")
        ),
    };
    let line = format!(
        "sandbox: on: hooks and `hookd exec` run confined: writes only in {}{read_only}; network {}; {}{}\n",
        visible(&places),
        network_words(policy),
        kernel,
        walk_words(&policy.walk),
    );
    let cannot = (!missing.is_empty()).then(|| {
        format!(
            "the sandbox is on and this kernel cannot enforce it (it lacks {}): every hook would be skipped",
            missing.join(" and ")
        )
    });
    (line, cannot)
}

/// The user's `sandbox.walk`, where it is not the default: how far below the project
/// protected names are looked for.
fn walk_words(walk: &hookd_sandbox::walk::Bounds) -> String {
    if *walk == hookd_sandbox::walk::Bounds::default() {
        return String::new();
    }
    let skip = match walk.skip.as_slice() {
        [] => String::new(),
        names => format!(", not entering {}", visible(&names.join(", "))),
    };
    format!(
        "; protected names looked for {} level(s) below the project, in at most {} directories{skip} (`sandbox.walk`)",
        walk.depth, walk.most_dirs
    )
}

/// The network confined commands get, in a few words.
fn network_words(policy: &crate::sandbox::SandboxPolicy) -> String {
    match (&policy.egress, policy.network) {
        (_, true) => "on".into(),
        (Some(e), false) => {
            let deny = if e.deny.is_empty() {
                String::new()
            } else {
                format!(", never {}", e.deny.join(", "))
            };
            visible(&format!(
                "only through hookd's proxy, to {}{deny}",
                e.allow_words()
            ))
            .into_owned()
        }
        (None, false) => "off".into(),
    }
}

/// What hooks' environment is made of: what the user keeps, what the project asks to keep,
/// what the project's files set for the agent and what is set here that runs code, each
/// removed unless kept (docs/security.md, "The environment").
pub(super) fn environment_lines(config: &Config, around: &Around) -> String {
    let mut s = String::from(
        "hooks' environment: yours, less code-running variables and what the project's files set for the agent\n",
    );
    let keep = &config.hooks.env_keep;
    if !keep.is_empty() {
        s.push_str(&format!(
            "  you keep: {} (env.keep)\n",
            visible(&keep.names().join(", "))
        ));
    }
    let asked = &config.hooks.project_env_keep;
    if !asked.is_empty() {
        s.push_str(&format!(
            "  the project asks to keep its own: {} (env.keep in its hooks.yaml){}\n",
            visible(&asked.names().join(", ")),
            if config.trust.allows_project() {
                ""
            } else {
                ": ignored until you trust it"
            }
        ));
    }
    s.push_str(&set_for_agent_lines(config, around));
    let mut here: Vec<String> = around
        .host
        .vars()
        .filter_map(|(k, _)| k.to_str().map(String::from))
        .filter(|k| crate::runner::runs_code(k) && !keep.matches(k))
        .collect();
    here.sort();
    if !here.is_empty() {
        s.push_str(&format!(
            "  set here and removed from hooks (they run code; keep one with `env: {{keep: [NAME]}}` in your hooks.yaml): {}\n",
            visible(&here.join(", "))
        ));
    }
    s
}

/// Where an agent may start: the project, and the directory hookd was run from.
fn agent_starts(config: &Config, around: &Around) -> Vec<PathBuf> {
    let mut starts = vec![config.project_dir.clone()];
    starts.extend(
        around
            .host
            .cwd()
            .filter(|d| *d != config.project_dir)
            .map(Into::into),
    );
    starts
}

/// One line per file of the project that sets variables for the agent.
fn set_for_agent_lines(config: &Config, around: &Around) -> String {
    let starts = agent_starts(config, around);
    let mut by_file: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for (name, file) in adapter::set_for_agent(&starts, around.host.home().as_deref()) {
        match by_file.iter_mut().find(|(f, _)| *f == file) {
            Some((_, names)) => names.push(name),
            None => by_file.push((file, vec![name])),
        }
    }
    let mut s = String::new();
    for (file, names) in by_file {
        let file = file.strip_prefix(&config.project_dir).unwrap_or(&file);
        const SHOWN: usize = 12;
        let more = match names.len().saturating_sub(SHOWN) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        s.push_str(&format!(
            "  {} sets {}{more} for the agent: removed from the hooks hookd runs (the agent itself still has them)\n",
            visible(&file.display().to_string()),
            visible(&names[..names.len().min(SHOWN)].join(", "))
        ));
    }
    s
}

/// The agents' settings (each agent, each scope, resolved as `hookd install` does) whose hookd
/// entries run a program that is not there: the agent cannot start such a hook and goes on
/// without it, `--fail-closed` or not.
pub(super) fn missing_installs(around: &Around) -> Vec<String> {
    let mut out = Vec::new();
    for agent in adapter::all() {
        for scope in [Scope::Project, Scope::Local, Scope::User, Scope::Managed] {
            let Ok(path) = agent.settings_path(scope, &around.host) else {
                continue;
            };
            let Ok(Some(programs)) = adapter::install::installed_programs(agent, &path) else {
                continue;
            };
            for program in programs {
                let at = Path::new(&program);
                if at.is_absolute() && !at.is_file() {
                    out.push(missing_install(agent.name(), scope, &path, &program));
                }
            }
        }
    }
    out
}

/// The warning for one settings file that runs a hookd that is not there.
fn missing_install(agent: &str, scope: Scope, path: &Path, program: &str) -> String {
    format!(
        "warning: {} runs hookd at {}, which does not exist: {agent} cannot start the hook and goes on without it, so nothing is checked (not even with --fail-closed)\n  = fix: run `hookd install {agent} --scope {}` again on this machine{}",
        visible(&path.display().to_string()),
        visible(program),
        match scope {
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::User => "user",
            Scope::Managed => "managed",
        },
        if matches!(scope, Scope::Project) {
            " (a project-scope install names this machine's path in a file the team shares; prefer --scope user)"
        } else {
            ""
        }
    )
}

/// What the project's agent files do around hookd (`adapter::seams`), for `hookd check` and
/// `hookd trust`: one line each, and the same lines for `--strict`.
pub(super) fn seam_lines(config: &Config, around: &Around) -> (String, Vec<String>) {
    let starts = agent_starts(config, around);
    let found: Vec<String> = adapter::seams::found(&starts, around.host.home().as_deref())
        .into_iter()
        .map(|mut f| {
            if let Ok(rel) = f.file.strip_prefix(&config.project_dir) {
                f.file = rel.to_path_buf();
            }
            f.to_string()
        })
        .collect();
    if found.is_empty() {
        return (String::new(), found);
    }
    let mut s = String::from(
        "the project's agent files open ways around hookd (remove them, or do not run an agent here unattended):\n",
    );
    for f in &found {
        s.push_str(&format!("  {f}\n"));
    }
    (s, found)
}
