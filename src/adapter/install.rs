//! `hookd install` / `uninstall`: add hookd's hook entries to an agent's settings file, merging
//! with what is there, and take exactly those entries out again.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::{Adapter, Register};

/// Why settings could not be changed. Nothing was written. Each names the settings file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// Reading or writing it (or its backup) failed.
    #[error("{path}: {source}")]
    Io {
        /// The settings file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// It is not JSON.
    #[error("{path}: is not valid JSON ({source}); fix it first, hookd changed nothing")]
    NotJson {
        /// The settings file.
        path: PathBuf,
        /// Where and why.
        #[source]
        source: serde_json::Error,
    },
    /// It is JSON of another shape than the agent's settings.
    #[error("{path}: {what}")]
    Shape {
        /// The settings file.
        path: PathBuf,
        /// What is not as expected, and what to do.
        what: &'static str,
    },
    /// Its `env` sets variables that make the agent's shell or the loader run code before
    /// hookd exists for a call: hookd's hooks there would not hold.
    #[error("{path}: its `env` sets {names}: the agent's shell (or the dynamic loader) runs the repository's code before hookd can gate or confine a call, so hookd's hooks in this file would not hold. Remove it from `env`, or run again with --force to install anyway")]
    RunsCode {
        /// The settings file.
        path: PathBuf,
        /// The variables, comma-separated.
        names: String,
    },
    /// It, or its directory, is a symbolic link, and following was not asked for.
    #[error("{path}: {what} {} is a symbolic link; hookd does not write through links (a repository can point one at your files). Check where it leads, then run again with --follow-symlinks to write there", link.display())]
    Link {
        /// The settings file.
        path: PathBuf,
        /// "the settings file" or "its directory".
        what: &'static str,
        /// The link.
        link: PathBuf,
    },
    /// Its backup's path is a symbolic link.
    #[error("{path}: the backup path {} is a symbolic link; remove it, hookd changed nothing", backup.display())]
    BackupLink {
        /// The settings file.
        path: PathBuf,
        /// The backup's path.
        backup: PathBuf,
    },
    /// A link asked to be followed leads nowhere readable.
    #[error("{path}: cannot follow the link: {source}")]
    Follow {
        /// The settings file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// What `install` or `uninstall` did.
// Exhaustive on purpose: a settings file was left alone, written, or removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Nothing to do: the settings already were as asked.
    Unchanged,
    /// Written; the previous file was saved to `backup` (absent when there was no file, and
    /// after `uninstall`, whose previous content only ran hookd).
    Written {
        /// Where the previous content was saved.
        backup: Option<PathBuf>,
    },
    /// `uninstall` took out the last of the file's content: the file is gone, and so is the
    /// backup `install` left.
    Removed,
}

impl Change {
    /// What was done to `path`, in a line for people; `removing` for `uninstall`.
    pub fn said(&self, path: &Path, removing: bool) -> String {
        let path = path.display();
        match self {
            Change::Unchanged if removing => {
                format!("hookd: {path} already has no hookd entries; nothing changed")
            }
            Change::Unchanged => format!("hookd: {path} already runs hookd; nothing changed"),
            Change::Written { backup } => {
                let saved = backup
                    .as_ref()
                    .map(|b| format!(" (previous version saved as {})", b.display()))
                    .unwrap_or_default();
                let what = if removing {
                    "removed hookd's entries from"
                } else {
                    "added hookd's adapter to"
                };
                format!("hookd: {what} {path}{saved}")
            }
            Change::Removed => format!("hookd: removed {path}: it held only hookd's entries"),
        }
    }
}

/// The warning after a project-scope install: the shared file names this machine's `hookd`.
pub fn shared_install_warning(spec: &dyn Adapter, path: &Path, hookd: &Path) -> String {
    format!(
        "warning: {} is shared with everyone who clones the project, and it now runs {} by that path. On a machine where it does not exist, {} cannot start the hook and goes on without it (a hook that cannot start does not block), so --fail-closed cannot hold there. Install with --scope user{} on each machine instead, or keep hookd at this path everywhere.",
        path.display(),
        hookd.display(),
        spec.name(),
        if spec.name() == "claude-code" { " (or local)" } else { "" }
    )
}

/// How an agent's settings file holds hooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Shape {
    /// `hooks.<Event>: [{matcher?, hooks: [{type: "command", command}]}]` (Claude Code, Gemini CLI).
    Nested,
    /// `hooks.<Event>: [{name, command}]` (Crush).
    Flat,
}

/// Which settings file `hookd install` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[non_exhaustive]
pub enum Scope {
    /// The project's settings, shared with the team (`.claude/settings.json`,
    /// `.gemini/settings.json`, `crush.json`).
    Project,
    /// The project's personal settings, not committed (Claude Code's `.claude/settings.local.json`).
    Local,
    /// Your settings, for every project (`~/.claude/settings.json`, `~/.gemini/settings.json`,
    /// `~/.config/crush/crush.json`); `hookd install` records the file in
    /// `~/.infer/installed.json`, which keeps it from the model's writes under `gate_shell_tools`.
    User,
    /// The machine's managed settings, which no project can switch off or add hooks beside
    /// (Claude Code's `/etc/claude-code/managed-settings.json` with `allowManagedHooksOnly`,
    /// Gemini CLI's `/etc/gemini-cli/settings.json` or `GEMINI_CLI_SYSTEM_SETTINGS_PATH` with
    /// `hooksConfig.enabled`); needs root. What `hookd run` requires.
    Managed,
}

/// How `install` may write, and what it writes into the agent's command.
#[derive(Clone, Copy, Debug, Default)]
pub struct InstallOptions<'a> {
    /// Flags appended to the adapter command (`--fail-closed`, `--gate-shell-tools`): the agent
    /// passes them on every call, whatever environment it gives its hooks.
    pub flags: &'a [&'a str],
    /// Write through a settings file (or its directory) that is a symlink, to the file it names.
    /// Off by default: a cloned repository's `.claude/settings.json` may point anywhere.
    pub follow_symlinks: bool,
    /// Install into a settings file whose `env` sets a variable that runs code in the agent's
    /// shell before hookd can confine a call (`BASH_ENV`, `LD_PRELOAD`, …): refused unless
    /// this is set.
    pub force: bool,
    /// The file is the agent's managed settings ([`Scope::Managed`]): also turn on the switch
    /// that makes only its hooks run ([`super::managed::switch`]), and leave the file readable
    /// by every user (the agent runs as them).
    pub managed: bool,
}

/// The command the agent runs: this hookd binary's adapter.
pub fn adapter_command(hookd: &Path, agent: &str) -> String {
    adapter_command_with(hookd, agent, &[])
}

/// The adapter command with `flags` appended.
pub fn adapter_command_with(hookd: &Path, agent: &str, flags: &[&str]) -> String {
    let mut c = adapter_command_plain(hookd, agent);
    for f in flags {
        c.push(' ');
        c.push_str(f);
    }
    c
}

fn adapter_command_plain(hookd: &Path, agent: &str) -> String {
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

/// True for a hook command that runs some hookd's adapter for `agent`, wherever installed and
/// however quoted: the command is read into words as a shell would (so a path with spaces, in
/// quotes, is one word), then its program's file name must be `hookd`.
fn is_ours(command: &str, agent: &str) -> bool {
    let Some(words) = crate::gate::argv_of(command) else {
        return false;
    };
    match words.as_slice() {
        [program, adapter, a, ..] => {
            std::path::Path::new(program).file_name() == Some(std::ffi::OsStr::new("hookd"))
                && adapter == "adapter"
                && a == agent
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
    let path = path.to_path_buf();
    match fs::read_to_string(&path) {
        Ok(text) if text.trim().is_empty() => Ok(Some(json!({}))),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(v @ Value::Object(_)) => Ok(Some(v)),
            Ok(_) => Err(InstallError::Shape {
                path,
                what: "is not a JSON object; fix it first, hookd changed nothing",
            }),
            Err(source) => Err(InstallError::NotJson { path, source }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(InstallError::Io { path, source }),
    }
}

/// Refuse a settings file, its directory or its backup that is a symlink (unless asked), and
/// say where a followed link leads. Returns the path to write.
fn target(path: &Path, follow: bool) -> Result<PathBuf, InstallError> {
    let is_link = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    let dir = path.parent().unwrap_or(Path::new("."));
    for (p, what) in [(path, "the settings file"), (dir, "its directory")] {
        if is_link(p) && !follow {
            return Err(InstallError::Link {
                path: path.to_path_buf(),
                what,
                link: p.to_path_buf(),
            });
        }
    }
    let backup = path.with_extension("json.hookd-backup");
    if is_link(&backup) {
        return Err(InstallError::BackupLink {
            path: path.to_path_buf(),
            backup,
        });
    }
    if follow && is_link(path) {
        return fs::canonicalize(path).map_err(|source| InstallError::Follow {
            path: path.to_path_buf(),
            source,
        });
    }
    Ok(path.to_path_buf())
}

/// Write `value` to `path` atomically, never through a link: the backup and the new content are
/// each written whole by [`crate::atomic::write_private`] (a fresh temporary file in the same
/// directory, synced, renamed into place: a directory entry replaced, never followed).
fn write(path: &Path, existed: bool, value: &Value) -> Result<Change, InstallError> {
    let err = |source: std::io::Error| InstallError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(err)?;
    let backup = if existed {
        let b = path.with_extension("json.hookd-backup");
        let old = fs::read(path).map_err(err)?;
        crate::atomic::write_private(&b, &old).map_err(err)?;
        Some(b)
    } else {
        None
    };
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    crate::atomic::write_private(path, text.as_bytes()).map_err(err)?;
    Ok(Change::Written { backup })
}

/// Add hookd's adapter to the agent's settings at `path` for every event it handles.
pub fn install(
    spec: &dyn Adapter,
    path: &Path,
    hookd: &Path,
    opts: InstallOptions<'_>,
) -> Result<Change, InstallError> {
    let path = &target(path, opts.follow_symlinks)?;
    let existing = read(path)?;
    let existed = existing.is_some();
    let mut settings = existing.unwrap_or_else(|| json!({}));
    let runs_code: Vec<&str> = settings
        .get("env")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|env| env.keys())
        .map(String::as_str)
        .filter(|k| crate::runner::runs_code(k))
        .collect();
    if !runs_code.is_empty() && !opts.force {
        return Err(InstallError::RunsCode {
            path: path.to_path_buf(),
            names: runs_code.join(", "),
        });
    }
    let command = adapter_command_with(hookd, spec.name(), opts.flags);
    let err = |what: &'static str| InstallError::Shape {
        path: path.to_path_buf(),
        what,
    };
    let root = settings
        .as_object_mut()
        .ok_or_else(|| err("is not a JSON object"))?;
    let switched = match opts.managed {
        true => super::managed::turn_on(spec, root).map_err(err)?,
        false => None,
    };
    let mut changed = switched.is_some();
    let hooks = root.entry("hooks").or_insert_with(|| json!({}));
    let hooks = hooks
        .as_object_mut()
        .ok_or_else(|| err("`hooks` is not an object; fix it first, hookd changed nothing"))?;
    changed |= add_entries(spec, hooks, &command).map_err(err)?;
    if !changed {
        return Ok(Change::Unchanged);
    }
    let change = write(path, existed, &settings)?;
    if opts.managed {
        // Read by the agent as whichever user runs it; written by root only.
        use std::os::unix::fs::PermissionsExt;
        let io = |source| InstallError::Io {
            path: path.to_path_buf(),
            source,
        };
        fs::set_permissions(path, fs::Permissions::from_mode(0o644)).map_err(io)?;
        // What the switch held before hookd set it, for `uninstall` to put back.
        if let Some(before) = switched {
            let record = json!({ "before": before }).to_string();
            let at = super::managed::switch_record(path);
            crate::atomic::write_private(&at, record.as_bytes()).map_err(io)?;
        }
    }
    Ok(change)
}

/// hookd's entry running `command` for every event the agent registers; true if one was added
/// or updated.
fn add_entries(
    spec: &dyn Adapter,
    hooks: &mut Map<String, Value>,
    command: &str,
) -> Result<bool, &'static str> {
    let mut changed = false;
    for e in spec.events() {
        let matcher = match e.install {
            Register::No => continue,
            Register::Yes => false,
            Register::WithMatcher => true,
        };
        let groups = hooks.entry(e.name).or_insert_with(|| json!([]));
        let groups = groups
            .as_array_mut()
            .ok_or("a hook event is not a list; fix it first, hookd changed nothing")?;
        if groups
            .iter()
            .any(|g| entry_commands(g, spec.shape()).contains(&command))
        {
            continue;
        }
        // Installed before with other flags (or from another path): update it in place.
        if update_ours(groups, spec, command) {
            changed = true;
            continue;
        }
        let mut group = Map::new();
        match spec.shape() {
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
    Ok(changed)
}

/// Point hookd's existing entries for the agent at `command`; true if there was one.
fn update_ours(groups: &mut [Value], spec: &dyn Adapter, command: &str) -> bool {
    let mut found = false;
    for g in groups.iter_mut() {
        let slots: Vec<&mut Value> = match spec.shape() {
            Shape::Flat => g.get_mut("command").into_iter().collect(),
            Shape::Nested => g
                .get_mut("hooks")
                .and_then(Value::as_array_mut)
                .map(|hs| hs.iter_mut().filter_map(|h| h.get_mut("command")).collect())
                .unwrap_or_default(),
        };
        for slot in slots {
            if slot.as_str().is_some_and(|c| is_ours(c, spec.name())) {
                *slot = json!(command);
                found = true;
            }
        }
    }
    found
}

/// Remove every hook entry that runs hookd's adapter for the agent, and the groups, event lists
/// and `hooks` object that only held them. Everything else is left as it was.
pub fn uninstall(
    spec: &dyn Adapter,
    path: &Path,
    opts: InstallOptions<'_>,
) -> Result<Change, InstallError> {
    let path = &target(path, opts.follow_symlinks)?;
    let Some(mut settings) = read(path)? else {
        return Ok(Change::Unchanged);
    };
    // The switch the managed install turned on, put back as it was (when hookd set it).
    let switched_back = opts.managed
        && settings
            .as_object_mut()
            .is_some_and(|root| super::managed::restore_switch(spec, path, root));
    let mut changed = switched_back;
    if let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) {
        let (removed, emptied_events) = remove_ours(spec, hooks);
        changed |= removed;
        for e in emptied_events {
            hooks.remove(&e);
        }
        if hooks.is_empty() {
            if let Some(root) = settings.as_object_mut() {
                root.remove("hooks");
            }
        }
    }
    if !changed {
        return Ok(Change::Unchanged);
    }
    // The backup `install` left holds hookd's entries too: restoring it would install hookd
    // again, so it goes, and the file goes when nothing but hookd's entries was in it.
    let backup = path.with_extension("json.hookd-backup");
    let err = |source: std::io::Error| InstallError::Io {
        path: path.clone(),
        source,
    };
    let gone = |p: &Path| match fs::remove_file(p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(err(e)),
        _ => Ok(()),
    };
    if switched_back {
        gone(&super::managed::switch_record(path))?;
    }
    if settings.as_object().is_some_and(|o| o.is_empty()) {
        gone(path)?;
        gone(&backup)?;
        return Ok(Change::Removed);
    }
    write(path, false, &settings)?;
    if opts.managed {
        // Still read by the agent as whichever user runs it.
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o644)).map_err(err)?;
    }
    gone(&backup)?;
    Ok(Change::Written { backup: None })
}

/// Take hookd's entries out of `hooks` (each event's groups): whether any was there, and the
/// events left with no group.
fn remove_ours(spec: &dyn Adapter, hooks: &mut Map<String, Value>) -> (bool, Vec<String>) {
    let mut changed = false;
    let mut emptied_events = Vec::new();
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        let mut removed_from = 0;
        groups.retain_mut(|g| match spec.shape() {
            Shape::Flat => {
                let ours = g
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_ours(c, spec.name()));
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
                        .is_some_and(|c| is_ours(c, spec.name()))
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
    (changed, emptied_events)
}

/// The programs the hook entries of `path` run as hookd's adapter for the agent (`None` when
/// the file does not exist): what `hookd check` looks for on disk.
pub fn installed_programs(
    spec: &dyn Adapter,
    path: &Path,
) -> Result<Option<Vec<String>>, InstallError> {
    let Some(settings) = read(path)? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    let events = settings.get("hooks").and_then(Value::as_object);
    for groups in events.into_iter().flat_map(|o| o.values()) {
        for group in groups.as_array().into_iter().flatten() {
            for command in entry_commands(group, spec.shape()) {
                if is_ours(command, spec.name()) {
                    if let Some(program) =
                        crate::gate::argv_of(command).and_then(|w| w.into_iter().next())
                    {
                        if !out.contains(&program) {
                            out.push(program);
                        }
                    }
                }
            }
        }
    }
    Ok(Some(out))
}
