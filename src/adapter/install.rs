//! `hookd install` / `uninstall`: add hookd's hook entries to an agent's settings file, merging
//! with what is there, and take exactly those entries out again.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

/// Why settings could not be changed. Nothing was written.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct InstallError {
    /// The settings file.
    pub path: PathBuf,
    /// What is wrong.
    pub message: String,
}

/// What `install` or `uninstall` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Nothing to do: the settings already were as asked.
    Unchanged,
    /// Written; the previous file was saved to `backup` (absent when there was no file).
    Written {
        /// Where the previous content was saved.
        backup: Option<PathBuf>,
    },
}

/// The Claude Code events hookd's adapter is installed for, and whether each takes a matcher.
const CLAUDE_EVENTS: [(&str, bool); 5] = [
    ("UserPromptSubmit", false),
    ("PreToolUse", true),
    ("PostToolUse", true),
    ("PostToolUseFailure", true),
    ("Stop", false),
];

/// The command Claude Code runs: this hookd binary's adapter.
pub fn claude_command(hookd: &Path) -> String {
    let path = hookd.display().to_string();
    let quoted = if path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        path
    } else {
        format!("'{}'", path.replace('\'', r"'\''"))
    };
    format!("{quoted} adapter claude-code")
}

/// True for a hook command that runs some hookd's Claude Code adapter (ours, wherever installed).
fn is_ours(command: &str) -> bool {
    let words: Vec<String> = command
        .split_whitespace()
        .map(|w| w.trim_matches('\'').to_string())
        .collect();
    match words.as_slice() {
        [program, adapter, agent, ..] => {
            program.rsplit('/').next() == Some("hookd")
                && adapter == "adapter"
                && agent == "claude-code"
        }
        _ => false,
    }
}

fn read(path: &Path) -> Result<Option<Value>, InstallError> {
    let err = |message: String| InstallError {
        path: path.to_path_buf(),
        message,
    };
    match fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(Some(json!({}))),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(v @ Value::Object(_)) => Ok(Some(v)),
            Ok(_) => Err(err(
                "is not a JSON object; fix it first, hookd changed nothing".into(),
            )),
            Err(e) => Err(err(format!(
                "is not valid JSON ({e}); fix it first, hookd changed nothing"
            ))),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(err(e.to_string())),
    }
}

fn write(path: &Path, existed: bool, value: &Value) -> Result<Change, InstallError> {
    let err = |e: std::io::Error| InstallError {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(err)?;
    }
    let backup = if existed {
        let b = path.with_extension("json.hookd-backup");
        fs::copy(path, &b).map_err(err)?;
        Some(b)
    } else {
        None
    };
    let tmp = path.with_extension("json.hookd-tmp");
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    fs::write(&tmp, text).map_err(err)?;
    fs::rename(&tmp, path).map_err(err)?;
    Ok(Change::Written { backup })
}

/// Add hookd's adapter to the Claude Code settings at `path` for every event it handles.
pub fn install_claude(path: &Path, hookd: &Path) -> Result<Change, InstallError> {
    let existing = read(path)?;
    let existed = existing.is_some();
    let mut settings = existing.unwrap_or_else(|| json!({}));
    let command = claude_command(hookd);
    let err = |message: &str| InstallError {
        path: path.to_path_buf(),
        message: message.into(),
    };
    let root = settings
        .as_object_mut()
        .ok_or_else(|| err("is not a JSON object"))?;
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let hooks = hooks
        .as_object_mut()
        .ok_or_else(|| err("`hooks` is not an object; fix it first, hookd changed nothing"))?;
    let mut changed = false;
    for (event, matcher) in CLAUDE_EVENTS {
        let groups = hooks.entry(event).or_insert_with(|| json!([]));
        let groups = groups.as_array_mut().ok_or_else(|| {
            err("a hook event is not a list; fix it first, hookd changed nothing")
        })?;
        let present = groups.iter().any(|g| {
            g.get("hooks").and_then(Value::as_array).is_some_and(|hs| {
                hs.iter()
                    .any(|h| h.get("command").and_then(Value::as_str) == Some(command.as_str()))
            })
        });
        if present {
            continue;
        }
        let mut group = Map::new();
        if matcher {
            group.insert("matcher".into(), json!("*"));
        }
        group.insert(
            "hooks".into(),
            json!([{"type": "command", "command": command}]),
        );
        groups.push(Value::Object(group));
        changed = true;
    }
    if !changed {
        return Ok(Change::Unchanged);
    }
    write(path, existed, &settings)
}

/// Remove every hook entry that runs hookd's Claude Code adapter, and the groups, event lists and
/// `hooks` object that only held them. Everything else is left as it was.
pub fn uninstall_claude(path: &Path) -> Result<Change, InstallError> {
    let Some(mut settings) = read(path)? else {
        return Ok(Change::Unchanged);
    };
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return Ok(Change::Unchanged);
    };
    let mut changed = false;
    let mut emptied_events = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        let before = groups.len();
        let mut removed_from = 0;
        groups.retain_mut(|g| {
            let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let n = hs.len();
            hs.retain(|h| {
                !h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(is_ours)
            });
            if hs.len() == n {
                return true;
            }
            removed_from += 1;
            !hs.is_empty() // a group that only held hookd goes too
        });
        if removed_from > 0 {
            changed = true;
            if groups.is_empty() && before > 0 {
                emptied_events.push(event.clone());
            }
        }
    }
    if !changed {
        return Ok(Change::Unchanged);
    }
    for e in emptied_events {
        hooks.remove(&e);
    }
    if hooks.is_empty() {
        if let Some(root) = settings.as_object_mut() {
            root.remove("hooks");
        }
    }
    write(path, true, &settings)
}
