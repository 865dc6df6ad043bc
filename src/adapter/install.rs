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

/// How an agent's settings file holds hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `hooks.<Event>: [{matcher?, hooks: [{type: "command", command}]}]` (Claude Code, Gemini CLI).
    Nested,
    /// `hooks.<Event>: [{name, command}]` (Crush).
    Flat,
}

/// Where and how hookd's adapter is installed for one agent.
#[derive(Clone, Copy, Debug)]
pub struct AgentSpec {
    /// The adapter's name on the command line (`claude-code`).
    pub name: &'static str,
    /// The events to install for, and whether each takes a tool matcher.
    pub events: &'static [(&'static str, bool)],
    /// The settings shape.
    pub shape: Shape,
}

/// Claude Code.
pub const CLAUDE: AgentSpec = AgentSpec {
    name: "claude-code",
    events: &[
        ("UserPromptSubmit", false),
        ("PreToolUse", true),
        ("PostToolUse", true),
        ("PostToolUseFailure", true),
        ("Stop", false),
    ],
    shape: Shape::Nested,
};

/// Gemini CLI. AfterModel fires for every streamed chunk, so it is not installed by default.
pub const GEMINI: AgentSpec = AgentSpec {
    name: "gemini",
    events: &[
        ("BeforeAgent", false),
        ("BeforeModel", false),
        ("BeforeTool", true),
        ("AfterTool", true),
        ("AfterAgent", false),
    ],
    shape: Shape::Nested,
};

/// Crush: its released versions fire PreToolUse only.
pub const CRUSH: AgentSpec = AgentSpec {
    name: "crush",
    events: &[("PreToolUse", false)],
    shape: Shape::Flat,
};

/// The command the agent runs: this hookd binary's adapter.
pub fn adapter_command(hookd: &Path, agent: &str) -> String {
    let path = hookd.display().to_string();
    let quoted = if path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        path
    } else {
        format!("'{}'", path.replace('\'', r"'\''"))
    };
    format!("{quoted} adapter {agent}")
}

/// True for a hook command that runs some hookd's adapter for `agent` (wherever installed).
fn is_ours(command: &str, agent: &str) -> bool {
    let words: Vec<String> = command
        .split_whitespace()
        .map(|w| w.trim_matches('\'').to_string())
        .collect();
    match words.as_slice() {
        [program, adapter, a, ..] => {
            program.rsplit('/').next() == Some("hookd") && adapter == "adapter" && a == agent
        }
        _ => false,
    }
}

/// The commands of a hook entry, in either shape.
fn entry_commands(group: &Value, shape: Shape) -> Vec<&str> {
    match shape {
        Shape::Flat => group
            .get("command")
            .and_then(Value::as_str)
            .into_iter()
            .collect(),
        Shape::Nested => group
            .get("hooks")
            .and_then(Value::as_array)
            .map(|hs| {
                hs.iter()
                    .filter_map(|h| h.get("command").and_then(Value::as_str))
                    .collect()
            })
            .unwrap_or_default(),
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

/// Add hookd's adapter to the agent's settings at `path` for every event it handles.
pub fn install(spec: &AgentSpec, path: &Path, hookd: &Path) -> Result<Change, InstallError> {
    let existing = read(path)?;
    let existed = existing.is_some();
    let mut settings = existing.unwrap_or_else(|| json!({}));
    let command = adapter_command(hookd, spec.name);
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
    for &(event, matcher) in spec.events {
        let groups = hooks.entry(event).or_insert_with(|| json!([]));
        let groups = groups.as_array_mut().ok_or_else(|| {
            err("a hook event is not a list; fix it first, hookd changed nothing")
        })?;
        if groups
            .iter()
            .any(|g| entry_commands(g, spec.shape).contains(&command.as_str()))
        {
            continue;
        }
        let mut group = Map::new();
        match spec.shape {
            Shape::Nested => {
                if matcher {
                    group.insert("matcher".into(), json!("*"));
                }
                group.insert(
                    "hooks".into(),
                    json!([{"type": "command", "command": command}]),
                );
            }
            Shape::Flat => {
                group.insert("name".into(), json!("hookd"));
                group.insert("command".into(), json!(command));
            }
        }
        groups.push(Value::Object(group));
        changed = true;
    }
    if !changed {
        return Ok(Change::Unchanged);
    }
    write(path, existed, &settings)
}

/// Remove every hook entry that runs hookd's adapter for the agent, and the groups, event lists
/// and `hooks` object that only held them. Everything else is left as it was.
pub fn uninstall(spec: &AgentSpec, path: &Path) -> Result<Change, InstallError> {
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
        let mut removed_from = 0;
        groups.retain_mut(|g| match spec.shape {
            Shape::Flat => {
                let ours = g
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_ours(c, spec.name));
                removed_from += usize::from(ours);
                !ours
            }
            Shape::Nested => {
                let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
                    return true;
                };
                let n = hs.len();
                hs.retain(|h| {
                    !h.get("command")
                        .and_then(Value::as_str)
                        .is_some_and(|c| is_ours(c, spec.name))
                });
                if hs.len() == n {
                    return true;
                }
                removed_from += 1;
                !hs.is_empty() // a group that only held hookd goes too
            }
        });
        if removed_from > 0 {
            changed = true;
            if groups.is_empty() {
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
