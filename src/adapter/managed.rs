//! The agents' managed settings, which no project can switch off or add hooks beside: where
//! `hookd install --scope managed` writes, the switch it turns on there, and what `hookd run`
//! checks before it starts an unattended agent ([`refusals`]).

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::install::{installed_programs, Scope};
use super::Adapter;
use crate::host::Host;

/// Claude Code's managed settings on Linux (it has no variable that moves them).
pub const CLAUDE_MANAGED: &str = "/etc/claude-code/managed-settings.json";
/// Gemini CLI's system settings on Linux, unless `GEMINI_CLI_SYSTEM_SETTINGS_PATH` moves them.
pub const GEMINI_SYSTEM: &str = "/etc/gemini-cli/settings.json";

/// The key (an object path) the managed install sets to `true` for the agent, and what it does:
/// Claude Code's `allowManagedHooksOnly` runs only the managed file's hooks (a project's
/// `disableAllHooks` and its own hooks no longer count); Gemini CLI's system settings override
/// every other file, so `hooksConfig.enabled` there holds against a project's `false`.
pub fn switch(agent: &dyn Adapter) -> Option<(&'static [&'static str], &'static str)> {
    match agent.name() {
        "claude-code" => Some((
            &["allowManagedHooksOnly"],
            "the project's own hooks would run beside hookd's",
        )),
        "gemini" => Some((
            &["hooksConfig", "enabled"],
            "a project's `hooksConfig.enabled: false` would switch hookd off",
        )),
        _ => None,
    }
}

/// Set the agent's [`switch`] in `root`: what it held before when that changed it (`Null`
/// for nothing), or what is in the way.
pub(crate) fn turn_on(
    agent: &dyn Adapter,
    root: &mut Map<String, Value>,
) -> Result<Option<Value>, &'static str> {
    let Some((path, _)) = switch(agent) else {
        return Ok(None);
    };
    let mut at = root;
    for (i, key) in path.iter().enumerate() {
        if i + 1 == path.len() {
            let before = at.get(*key).cloned().unwrap_or(Value::Null);
            at.insert((*key).to_string(), Value::Bool(true));
            return Ok((before != Value::Bool(true)).then_some(before));
        }
        at = at
            .entry(*key)
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .ok_or("a key hookd sets for the managed install is not an object; fix it first, hookd changed nothing")?;
    }
    Ok(None)
}

/// The record, beside the managed settings at `settings`, that hookd turned the switch on and
/// what it held before (root's, like the file).
pub(crate) fn switch_record(settings: &Path) -> PathBuf {
    settings.with_extension("json.hookd-switch")
}

/// Put the agent's [`switch`] in `root` back as [`switch_record`] says it was before hookd set
/// it (taking the key, and an object left empty, away when there was none): whether it did.
/// Without a record (the operator set it), it stays.
pub(crate) fn restore_switch(
    agent: &dyn Adapter,
    settings: &Path,
    root: &mut Map<String, Value>,
) -> bool {
    let Some((path, _)) = switch(agent) else {
        return false;
    };
    let Some(before) = json_of(&switch_record(settings)).map(|r| r["before"].clone()) else {
        return false;
    };
    let Some((last, parents)) = path.split_last() else {
        return false;
    };
    let mut at = &mut *root;
    for key in parents {
        match at.get_mut(*key).and_then(Value::as_object_mut) {
            Some(m) => at = m,
            None => return false,
        }
    }
    if before.is_null() {
        at.remove(*last);
    } else {
        at.insert((*last).to_string(), before);
    }
    // An object hookd made for the switch alone (`hooksConfig: {}`) goes too.
    if let Some(first) = parents.first() {
        if root
            .get(*first)
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
        {
            root.remove(*first);
        }
    }
    true
}

/// Why an unattended `agent` must not start in the host's directory (empty: it may): hookd's
/// adapter is not in the agent's managed settings, or their switch is off, or the project's
/// agent files open a way around hookd ([`super::seams`]), or (Gemini CLI, which runs no hooks
/// at all in a folder it does not trust) the folder is not trusted. `args` is the agent's
/// command line after its program.
pub fn refusals(agent: &dyn Adapter, host: &Host, args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let name = agent.name();
    let again = format!("run `hookd install {name} --scope managed` (as root)");
    let path = match agent.settings_path(Scope::Managed, host) {
        Ok(p) => p,
        Err(e) => return vec![e.to_string()],
    };
    let shown = crate::display::visible(&path.display().to_string()).into_owned();
    if let Err(why) = held_by_root(&path) {
        out.push(format!(
            "{shown} is not the machine's to decide ({why}): Gemini CLI skips such settings, and whoever can write them can take hookd out; make it and its directories root's, writable by root only"
        ));
    }
    match installed_programs(agent, &path) {
        Err(e) => out.push(format!("{e}")),
        Ok(Some(programs)) if !programs.is_empty() => {
            for p in programs {
                let program = crate::display::visible(&p).into_owned();
                if !Path::new(&p).is_file() {
                    out.push(format!(
                        "{shown} runs hookd at {program}, which does not exist: the agent would go on without it; {again}"
                    ));
                } else if let Err(why) = held_by_root(Path::new(&p)) {
                    out.push(format!(
                        "{shown} runs hookd at {program}, which is not root's alone ({why}): whoever can write it decides every verdict; install hookd where only root can write (e.g. /usr/local/bin), then {again}"
                    ));
                }
            }
        }
        Ok(_) => out.push(format!(
            "{shown} does not run hookd's adapter: a project can switch off, or add hooks beside, every other settings file; {again}"
        )),
    }
    if let Some((key, without)) = switch(agent) {
        if !switched_on(&path, key) && path.exists() {
            out.push(format!(
                "{shown} does not set \"{}\": true, so {without}; {again}",
                key.join(".")
            ));
        }
    }
    let Some(dir) = host.cwd() else {
        out.push("the current directory is gone or unreadable".into());
        return out;
    };
    let home = host.home();
    for f in super::seams::found(&[dir.to_path_buf()], home.as_deref()) {
        out.push(f.to_string());
    }
    for f in super::seams::in_arguments(name, args, dir, home.as_deref()) {
        let said = f.to_string();
        if !out.contains(&said) {
            out.push(said);
        }
    }
    if name == "gemini" {
        if let Err(why) = gemini_trusted(host, dir, &path, args) {
            out.push(why);
        }
    }
    out
}

/// Whether `path` (if it is there) and every directory above it belong to root and are
/// writable by root only, links followed, as Gemini CLI requires of its system settings.
fn held_by_root(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    for p in [path, real.as_path()] {
        for at in p.ancestors() {
            let Ok(m) = std::fs::metadata(at) else {
                continue;
            };
            let at = crate::display::visible(&at.display().to_string()).into_owned();
            if m.uid() != 0 {
                return Err(format!("{at} belongs to user {}, not root", m.uid()));
            }
            if m.mode() & 0o022 != 0 {
                return Err(format!(
                    "{at} is writable by its group or others (mode {:o})",
                    m.mode() & 0o7777
                ));
            }
        }
    }
    Ok(())
}

/// The settings file at `path` as JSON, if it is there and is.
fn json_of(path: &Path) -> Option<Value> {
    let bytes = crate::config::read_regular(path, 1024 * 1024).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn switched_on(path: &Path, key: &[&str]) -> bool {
    let pointer: String = key.iter().map(|k| format!("/{k}")).collect();
    json_of(path).is_some_and(|v| v.pointer(&pointer) == Some(&Value::Bool(true)))
}

/// Whether Gemini CLI will trust `dir` (its `checkPathTrust`): its variables and
/// `--skip-trust`, then `security.folderTrust.enabled` (system over user settings), then the
/// longest matching rule of its trusted folders file.
fn gemini_trusted(host: &Host, dir: &Path, system: &Path, args: &[String]) -> Result<(), String> {
    let var = |n: &str| host.var_text(n);
    let shown = crate::display::visible(&dir.display().to_string()).into_owned();
    let untrusted = |why: String| {
        format!(
            "Gemini CLI runs no hooks, hookd's included, in a folder it does not trust, and {why}"
        )
    };
    if var("GEMINI_RESTRICTED_MODE").as_deref() == Some("true")
        || var("GEMINI_CLI_TRUST_WORKSPACE").as_deref() == Some("false")
    {
        return Err(untrusted(
            "GEMINI_RESTRICTED_MODE or GEMINI_CLI_TRUST_WORKSPACE tells it not to trust this one"
                .into(),
        ));
    }
    if var("GEMINI_CLI_TRUST_WORKSPACE").as_deref() == Some("true")
        || args.iter().any(|a| a == "--skip-trust")
    {
        return Ok(());
    }
    let gemini_dir = host
        .dir("GEMINI_CLI_HOME")
        .or_else(|| host.home())
        .map(|h| h.join(".gemini"));
    let user = gemini_dir.as_ref().map(|d| d.join("settings.json"));
    let enabled = [Some(system.to_path_buf()), user]
        .into_iter()
        .flatten()
        .find_map(|p| {
            json_of(&p)?
                .pointer("/security/folderTrust/enabled")?
                .as_bool()
        });
    if enabled == Some(false) {
        return Ok(());
    }
    let file = host
        .dir("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
        .or_else(|| gemini_dir.map(|d| d.join("trustedFolders.json")));
    let rules = file.as_deref().and_then(json_of);
    match rules.as_ref().and_then(|r| longest_rule(r, dir)) {
        Some(true) => Ok(()),
        Some(false) => Err(untrusted(format!("its trusted folders file marks {shown} DO_NOT_TRUST"))),
        None => Err(untrusted(format!(
            "{shown} is not trusted: add it to {} (\"{shown}\": \"TRUST_FOLDER\"), or pass --skip-trust",
            file.map(|f| f.display().to_string())
                .unwrap_or_else(|| "~/.gemini/trustedFolders.json".into())
        ))),
    }
}

/// The trust of the longest rule of a trusted folders file that covers `dir`, if any.
fn longest_rule(rules: &Value, dir: &Path) -> Option<bool> {
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let dir = real(dir);
    let mut best: Option<(usize, bool)> = None;
    for (rule, level) in rules.as_object()? {
        let (covered, trusted) = match level.as_str() {
            Some("TRUST_PARENT") => (Path::new(rule).parent().map(PathBuf::from), true),
            Some("TRUST_FOLDER") => (Some(PathBuf::from(rule)), true),
            Some("DO_NOT_TRUST") => (Some(PathBuf::from(rule)), false),
            _ => continue,
        };
        let Some(covered) = covered.map(|c| real(&c)) else {
            continue;
        };
        if dir.starts_with(&covered) && best.is_none_or(|(n, _)| rule.len() > n) {
            best = Some((rule.len(), trusted));
        }
    }
    best.map(|(_, trusted)| trusted)
}
