//! `hookd run AGENT --confine`: the agent itself started inside the sandbox, its whole process
//! tree with it. [`policy`] makes the agent's sandbox from the configured one: the same places
//! held and hidden, plus what the agent needs and nothing a command needs: its own state
//! writable (`~/.claude`, `~/.claude.json`, `~/.gemini`), its credentials and transcripts
//! shown to it, its API key kept, hookd's session state and trust readable to its hooks, and
//! its model API's hosts reached through hookd's proxy. Its settings and hooks stay read-only.
//!
//! The model's shell calls, rewritten to `hookd exec` by the adapter as always, then run in a
//! sandbox nested in this one, made from the configuration alone (Landlock domains, mounts,
//! seccomp filters only add up): they see none of the agent's grants. Their proxy reaches hosts
//! through the agent's ([`crate::sandbox::AGENT_VAR`]).

use std::path::{Path, PathBuf};

use super::Adapter;
use crate::host::Host;
use crate::sandbox::SandboxPolicy;

/// What one agent needs of its own, beyond what its commands get.
struct Needs {
    /// Its model API's hosts.
    hosts: &'static [&'static str],
    /// Its state, relative to the home: directories and files it writes.
    state: &'static [&'static str],
    /// Inside its state, what stays read-only: its settings and what declares hooks.
    held: &'static [&'static str],
    /// Variables that carry its credentials.
    keys: &'static [&'static str],
    /// A variable that moves its state directory (and where in it the state then is).
    state_var: Option<&'static str>,
}

fn needs(agent: &dyn Adapter) -> Option<Needs> {
    match agent.name() {
        "claude-code" => Some(Needs {
            hosts: &["api.anthropic.com"],
            state: &[".claude", ".claude.json"],
            held: &[
                ".claude/settings.json",
                ".claude/settings.local.json",
                ".claude/skills",
                ".claude/agents",
                ".claude/commands",
                ".claude/plugins",
                ".claude/hooks",
            ],
            keys: &[
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN",
                "CLAUDE_CODE_OAUTH_TOKEN",
            ],
            state_var: Some("CLAUDE_CONFIG_DIR"),
        }),
        "gemini" => Some(Needs {
            hosts: &[
                "generativelanguage.googleapis.com",
                "cloudcode-pa.googleapis.com",
                "oauth2.googleapis.com",
            ],
            state: &[".gemini"],
            held: &[
                ".gemini/settings.json",
                ".gemini/.env",
                ".gemini/extensions",
                ".gemini/commands",
                ".gemini/policies",
                ".gemini/agents",
                ".gemini/skills",
                ".gemini/trustedFolders.json",
            ],
            keys: &[
                "GEMINI_API_KEY",
                "GOOGLE_API_KEY",
                "GOOGLE_CLOUD_ACCESS_TOKEN",
            ],
            state_var: None,
        }),
        _ => None,
    }
}

/// The agent's model API hosts that `hookd run AGENT --confine` allows besides
/// `sandbox.network`'s list and `--allow-host`.
pub fn api_hosts(agent: &dyn Adapter) -> &'static [&'static str] {
    needs(agent).map(|n| n.hosts).unwrap_or(&[])
}

/// The sandbox the agent itself runs in, from `base` (the configuration's, at the host's
/// places) for an agent working in `project`: see the module's header. `extra_hosts` are the operator's `--allow-host` entries
/// (a loopback model server is reached only when listed exactly). Made where they are absent:
/// the agent's state directories and hookd's (a grant on a place that does not exist would
/// grant nothing).
pub fn policy(
    agent: &dyn Adapter,
    base: &SandboxPolicy,
    host: &Host,
    project: &Path,
    extra_hosts: &[String],
) -> Result<SandboxPolicy, String> {
    let Some(needs) = needs(agent) else {
        return Err(format!(
            "--confine does not know what {} needs (only claude-code and gemini)",
            agent.name()
        ));
    };
    let home = host
        .home()
        .ok_or("HOME is not set, so the agent's state has no place")?;
    let mut p = base.clone();
    p.enabled = true;
    p.read_only = false;
    p.nests = true;
    if p.network {
        return Err("`sandbox.network: true` in your ~/.infer/config.yaml would give the agent and its commands the whole network; list the hosts instead (`network: {allow: [...]}`), the agent's own API is added".into());
    }
    p.egress = Some(hosts(
        p.egress.take().unwrap_or_default(),
        &needs,
        extra_hosts,
    )?);
    let mut state: Vec<PathBuf> = needs.state.iter().map(|s| home.join(s)).collect();
    if let Some(dir) = needs.state_var.and_then(|v| host.dir(v)) {
        state.push(dir);
    }
    if agent.name() == "gemini" {
        if let Some(dir) = host.dir("GEMINI_CLI_HOME") {
            state.push(dir.join(".gemini"));
        }
    }
    let hookd_state = host.state_dir();
    for dir in state.iter().chain(hookd_state.iter()) {
        if dir.extension().is_none_or(|e| e != "json") {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
    }
    p.write.extend(state.iter().cloned());
    p.write.extend(hookd_state.iter().cloned());
    let events = events_file(host, project)?;
    p.write.extend(events.iter().cloned());
    p.shown.extend(hookd_state.iter().cloned());
    unhide(
        &mut p,
        &state,
        hookd_state.as_deref(),
        events.as_deref(),
        host,
    );
    // What the walks below a project read, which the next walk trusts (hookd's own in the
    // user's unconfined runs, the sandbox's of this agent's next session): hidden from the agent,
    // which could otherwise write a memory that keeps a place below from being held.
    if let Some(walks) = hookd_state.as_ref().map(|s| s.join("walks")) {
        std::fs::create_dir_all(&walks).map_err(|e| format!("{}: {e}", walks.display()))?;
        p.places.hidden.push(walks);
    }
    for rel in needs.held {
        let at = home.join(rel);
        // Absent, it could be made from inside and read by the agent's next, unconfined start:
        // made first (an empty settings file, an empty directory) and held like the rest.
        made(&at)?;
        if !p.places.read_only.contains(&at) {
            p.places.read_only.push(at);
        }
    }
    for key in needs.keys {
        if host.var(key).is_some() && !p.keep_env.iter().any(|k| k == key) {
            p.keep_env.push(key.to_string());
        }
    }
    Ok(p)
}

/// `argv` (the agent's program and arguments) as a command confined by `confinement`, the
/// sandbox [`policy`] made: started in `cwd` with `host`'s variables, told it is a confined
/// agent ([`crate::sandbox::AGENT_VAR`], so that its commands get the nested sandbox), and with
/// no `NO_PROXY` (the agent's API is often on loopback in tests and behind a gateway in
/// companies: nothing bypasses the proxy, there is no other way out of its network namespace).
pub fn command(
    confinement: std::sync::Arc<crate::sandbox::Confinement>,
    policy: &SandboxPolicy,
    argv: &[String],
    cwd: &Path,
    host: &Host,
) -> std::process::Command {
    let mut cmd = crate::sandbox::command(confinement, argv, cwd, None, host.vars());
    if policy.egress.is_some() {
        cmd.env_remove("NO_PROXY")
            .env_remove("no_proxy")
            .env(crate::sandbox::AGENT_VAR, "1");
    }
    cmd
}

/// `at` made where it is absent, as what it is: a JSON settings file holding `{}`, an empty
/// `.env`, else an empty directory (this user's alone).
fn made(at: &Path) -> Result<(), String> {
    if at.symlink_metadata().is_ok() {
        return Ok(());
    }
    let fail = |e: std::io::Error| format!("{}: {e}", at.display());
    if let Some(dir) = at.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let text = match at.extension().and_then(|e| e.to_str()) {
        Some("json") => Some("{}\n"),
        _ if at.file_name().is_some_and(|n| n == ".env") => Some(""),
        _ => None,
    };
    match text {
        Some(text) => crate::atomic::write_private(at, text.as_bytes()).map_err(fail),
        None => {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(at)
                .map_err(fail)
        }
    }
}

/// The agent's list: `e` (the configuration's) with its API hosts and the operator's `extra`.
fn hosts(
    mut e: crate::sandbox::Egress,
    needs: &Needs,
    extra: &[String],
) -> Result<crate::sandbox::Egress, String> {
    let listed = needs.hosts.iter().map(|h| h.to_string());
    for h in listed.chain(extra.iter().cloned()) {
        if let Some(why) = crate::sandbox::invalid_host_entry(&h) {
            return Err(format!("--allow-host: {why}"));
        }
        if !e.allow.contains(&h) {
            e.allow.push(h);
        }
    }
    Ok(e)
}

/// The events file the agent's hooks append to (`HOOKD_EVENTS`), made where it is absent (a
/// grant on an absent file grants nothing); refused inside the project, which the agent's
/// commands may write (the nested sandbox cannot hold it read-only as the other one does).
fn events_file(host: &Host, project: &Path) -> Result<Option<PathBuf>, String> {
    let Some(events) = host.dir("HOOKD_EVENTS") else {
        return Ok(None);
    };
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let dir = events.parent().map(real).unwrap_or_default();
    if dir.starts_with(real(project)) {
        return Err(format!(
            "HOOKD_EVENTS {} lies in the project, which the agent's commands may write (the nested sandbox cannot hold it read-only as hookd's other sandbox does): name a file outside it",
            events.display()
        ));
    }
    // As the hooks will open it: a regular file of this user's alone, never through a link.
    crate::events::open_to_append(&events)
        .map_err(|e| format!("HOOKD_EVENTS {}: {e}", events.display()))?;
    Ok(Some(events))
}

/// What the catalog hides or holds that the agent and its hooks must reach: its credentials and
/// transcripts (beneath its state), hookd's state and trust (read by its hooks), the events file
/// (appended to by them).
fn unhide(
    p: &mut SandboxPolicy,
    state: &[PathBuf],
    hookd_state: Option<&Path>,
    events: Option<&Path>,
    host: &Host,
) {
    let trust = host.dir("HOOKD_TRUST_FILE");
    let config_hookd = host
        .dir("XDG_CONFIG_HOME")
        .or_else(|| host.home().map(|h| h.join(".config")))
        .map(|c| c.join("hookd"));
    let mine = |h: &PathBuf| {
        state.iter().any(|s| h.starts_with(s))
            || hookd_state.is_some_and(|s| h.starts_with(s))
            || Some(h) == trust.as_ref()
            || Some(h) == config_hookd.as_ref()
    };
    p.places.hidden.retain(|h| !mine(h));
    // Its settings (`~/.claude/settings*`, hidden from commands: its users put API keys in
    // their `env`) are its own to read, never to write.
    for (dir, name, kind) in &mut p.places.prefixed {
        if *kind == crate::places::Sandbox::Hidden && mine(&dir.join(&*name)) {
            *kind = crate::places::Sandbox::ReadOnly;
        }
    }
    let hidden: Vec<PathBuf> = p.places.hidden.clone();
    p.shown.extend(
        [trust, config_hookd]
            .into_iter()
            .flatten()
            .filter(|t| !hidden.contains(t)),
    );
    if let Some(events) = events {
        p.places.read_only.retain(|r| r != events);
        p.places
            .prefixed
            .retain(|(dir, name, _)| dir.join(name) != events);
    }
}
