//! Variables a repository sets for its agent. Gemini CLI loads the project's `.env` (or
//! `.gemini/.env`) into its environment, and Claude Code applies the `env` of the project's
//! `.claude/settings*.json`; hooks, hookd's adapter among them, inherit both. A repository
//! could so trust itself (`HOOKD_TRUST_PROJECT`), grant itself allow entries
//! (`INFER_TOOLS_BASH_ALLOW_APPEND`), switch the user's hooks off (`INFER_HOOKS_ENABLED`),
//! move the user's configuration (`HOME`, `XDG_CONFIG_HOME`), put its own programs first on
//! `PATH`, or make the user's own hooks run its code (`GIT_CONFIG_*` for `git status`,
//! `PYTHONPATH`, `RUSTC_WRAPPER`). The adapter reads those files as the agents do, from where
//! they start, and drops every variable they name from its own environment before anything
//! reads it; hooks get none of them unless the user keeps one (see `runner::Environment`).

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::host::Host;
use crate::runner::{steers_hookd, ProjectVar};

/// What to do with the process environment.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Scrub {
    /// Variables to remove.
    pub remove: Vec<String>,
    /// Variables to set instead (`HOME` from the user database, `PATH` without the project).
    pub set: Vec<(String, String)>,
    /// One line per variable, for stderr.
    pub notes: Vec<String>,
}

/// A variable a project file sets for the agent, and that is set in the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Assignment {
    /// The variable.
    pub name: String,
    /// The file that sets it.
    pub file: PathBuf,
    /// Whether the value in the environment may be the one this file gives: it appears in one
    /// of the file's assignments of the name (read generously, so that a value the agent took
    /// from the file is never mistaken for the user's own), or it is empty or spans lines.
    gives: bool,
}

/// The value of a variable in the environment, if it is set (read lossily: only compared).
pub(crate) type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The most of one agent file read, the bound `hookd check` already reads settings files with:
/// a real `.env` or settings file is a few kilobytes, and a call must cost the same whatever a
/// repository's files hold. The agents would read far more, so a larger file is not skipped
/// (a cap would let a padded file set anything): it is [`Unreadable`], and the call refused.
pub const MOST_FILE_BYTES: u64 = 1024 * 1024;

/// An agent file hookd would not read (over [`MOST_FILE_BYTES`], a FIFO, a device, a read
/// error): what it sets for the agent is unknown.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unreadable {
    /// The file.
    pub file: PathBuf,
    /// Why (`is over 1048576 bytes`, `is a FIFO, not a regular file`).
    pub why: String,
    /// The agent that reads it (its adapter's name: `gemini` for a `.env`, `claude-code` for
    /// `.claude/settings*.json`): another agent's calls are not refused for it.
    pub read_by: &'static str,
}

impl Unreadable {
    /// Whether the agent whose adapter is named `agent` reads this file: `None` (not known,
    /// as for `hookd exec`, which an agent's shell runs) counts as every agent.
    pub fn read_by_agent(&self, agent: Option<&str>) -> bool {
        agent.is_none_or(|a| a == self.read_by)
    }
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let file = crate::display::visible(&self.file.display().to_string()).into_owned();
        write!(f, "{file} {}", self.why)
    }
}

/// Whether looking at a file failed in a way the agent's own look fails too, so that it sets
/// nothing for the agent: absent, not searchable or not readable by this user (the agent runs
/// as the same user), or below something that is not a directory (a file named `.claude`).
fn agent_finds_nothing(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{NotADirectory, NotFound, PermissionDenied};
    matches!(e.kind(), NotFound | PermissionDenied | NotADirectory)
}

/// Whether an agent would find `path`: it is there, and not a directory (a FIFO or a device
/// counts: the agents would read it). A file it can look at but not read counts too.
fn present(path: &Path) -> bool {
    match std::fs::metadata(path) {
        Ok(m) => !m.is_dir(),
        Err(e) => !agent_finds_nothing(&e),
    }
}

/// `file` read, at most [`MOST_FILE_BYTES`] and never from a FIFO or a device; `None` (and
/// why, in `bad`) when it is not read.
fn read_bounded(file: &Path, read_by: &'static str, bad: &mut Vec<Unreadable>) -> Option<Vec<u8>> {
    use crate::config::ReadError;
    match crate::config::read_regular(file, MOST_FILE_BYTES) {
        Ok(bytes) => Some(bytes),
        Err(ReadError::NotFound) => None,
        Err(ReadError::Io(e)) if agent_finds_nothing(&e) => None,
        Err(e) => {
            bad.push(Unreadable {
                file: file.to_path_buf(),
                why: e.to_string(),
                read_by,
            });
            None
        }
    }
}

/// The adapter names of the agents that read each kind of file.
const GEMINI: &str = "gemini";
const CLAUDE_CODE: &str = "claude-code";

/// What the project's files set for the agent, read as the agents read them from each of
/// `starts` (the directories an agent may have started in), for the names `env` has a value of:
/// - Gemini CLI: walking up from the start, the first directory with a `.gemini/.env` or a
///   `.env` (both are read there), up to `/`; the home's own (`~/.env`, `~/.gemini/.env`) are
///   the user's and end the walk;
/// - Claude Code: the `env` of `.claude/settings.json` and `.claude/settings.local.json` in
///   the start directory and every directory up to its project (never the home's own).
///
/// Files are read whole up to [`MOST_FILE_BYTES`], never from a FIFO or a device; one that is
/// not read is added to `bad` (what it sets is unknown: the caller refuses).
pub(crate) fn set_by(
    starts: &[PathBuf],
    home: Option<&Path>,
    env: EnvLookup,
    bad: &mut Vec<Unreadable>,
) -> Vec<Assignment> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    let stop = |d: &Path| home.is_some_and(|h| d == h);
    for start in starts {
        for d in start.ancestors() {
            if stop(d) {
                break;
            }
            let found: Vec<PathBuf> = [d.join(".gemini/.env"), d.join(".env")]
                .into_iter()
                .filter(|p| present(p))
                .collect();
            if found.is_empty() {
                continue;
            }
            for f in found {
                if !files.contains(&f) {
                    if let Some(bytes) = read_bounded(&f, GEMINI, bad) {
                        out.extend(dotenv_file(&f, &bytes, env));
                    }
                    files.push(f);
                }
            }
            break;
        }
        let project = crate::paths::find_project(start, home);
        for d in start.ancestors() {
            if stop(d) {
                break;
            }
            for name in ["settings.json", "settings.local.json"] {
                let f = d.join(".claude").join(name);
                if !files.contains(&f) && present(&f) {
                    if let Some(bytes) = read_bounded(&f, CLAUDE_CODE, bad) {
                        out.extend(claude_settings(&f, &bytes, env, bad));
                    }
                    files.push(f);
                }
            }
            if d == project {
                break;
            }
        }
    }
    out
}

/// What a repository's files set for an agent started in one of `starts`: each variable with
/// the file that sets it, as `hookd adapter` reads them (for `hookd check`); `home` is the
/// host's `$HOME`. Files hookd would not read (over the bound, not regular) are left out: `hookd check` names them.
pub fn set_for_agent(starts: &[PathBuf], home: Option<&Path>) -> Vec<(String, PathBuf)> {
    agent_files(starts, home).0
}

/// [`set_for_agent`], and the files hookd would not read (what they set is unknown).
pub(crate) fn agent_files(
    starts: &[PathBuf],
    home: Option<&Path>,
) -> (Vec<(String, PathBuf)>, Vec<Unreadable>) {
    let every_name = |_: &str| Some(String::new());
    let mut bad = Vec::new();
    let set = set_by(
        starts,
        walk_stop(home, starts).as_deref(),
        &every_name,
        &mut bad,
    )
    .into_iter()
    .map(|a| (a.name, a.file))
    .collect();
    (set, bad)
}

/// The names set by `set_by`.
pub(crate) fn names(set: &[Assignment]) -> BTreeSet<String> {
    set.iter().map(|a| a.name.clone()).collect()
}

/// Whether `value` may be what an assignment whose text after the name is `given` sets.
fn may_give(given: &str, value: &str) -> bool {
    value.is_empty() || value.contains(['\n', '\r']) || given.contains(value)
}

/// The names a dotenv file (`bytes`, read from `file`) assigns that `env` has a value of, line
/// by line.
fn dotenv_file(file: &Path, bytes: &[u8], env: EnvLookup) -> Vec<Assignment> {
    let mut found: Vec<Assignment> = Vec::new();
    for line in bytes.split(|b| *b == b'\n') {
        let text = String::from_utf8_lossy(line);
        let Some((name, given)) = dotenv_assignment(&text) else {
            continue;
        };
        let Some(value) = env(name) else { continue };
        let gives = may_give(given, &value);
        match found.iter_mut().find(|a| a.name == name) {
            Some(a) => a.gives |= gives,
            None => found.push(Assignment {
                name: name.to_string(),
                file: file.to_path_buf(),
                gives,
            }),
        }
    }
    found
}

/// The `env` of a Claude Code settings file (`bytes`, read from `file`), for the names `env`
/// has a value of.
/// Read as Claude Code reads it (JavaScript's `JSON.parse`): a lone surrogate escape is text,
/// and of a key given twice the last counts. A file that is not JSON even so is unreadable:
/// what it sets is unknown, never "nothing" (a typed parse that failed on a duplicate `env` or
/// a `\ud800` let a repository's `HOOKD_TRUST_PROJECT` through unscrubbed).
fn claude_settings(
    file: &Path,
    bytes: &[u8],
    env: EnvLookup,
    bad: &mut Vec<Unreadable>,
) -> Vec<Assignment> {
    let text = String::from_utf8_lossy(bytes);
    if text.trim().is_empty() {
        return Vec::new();
    }
    let settings = match super::payload::parse(&text) {
        Ok(v) => v,
        Err(e) => {
            bad.push(Unreadable {
                file: file.to_path_buf(),
                why: format!("is not JSON ({e})"),
                read_by: CLAUDE_CODE,
            });
            return Vec::new();
        }
    };
    let Some(vars) = settings.get("env").and_then(serde_json::Value::as_object) else {
        return Vec::new();
    };
    vars.clone()
        .into_iter()
        .filter_map(|(name, given)| {
            let value = env(&name)?;
            let given = match given {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            Some(Assignment {
                gives: may_give(&given, &value),
                name,
                file: file.to_path_buf(),
            })
        })
        .collect()
}

/// The name a dotenv line assigns (`NAME=…`, `export NAME=…`, `NAME: …`) and the text after
/// it, read generously: a line of a multi-line value that looks like an assignment counts too.
fn dotenv_assignment(line: &str) -> Option<(&str, &str)> {
    let line = line.trim_start();
    let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
    let (name, given) = line.split_once(['=', ':'])?;
    let name = name.trim_end();
    let ok = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-');
    ok.then_some((name, given))
}

/// The project's variables other than those that steer hookd, with their values in `env`:
/// what hooks must not get unless kept. A value is the user's own only when no file that
/// sets the name may give it (Gemini CLI keeps a value already set; Claude Code replaces it).
pub(crate) fn project_vars(
    set: &[Assignment],
    env: &dyn Fn(&str) -> Option<OsString>,
    relative_to: &Path,
) -> Vec<ProjectVar> {
    names(set)
        .into_iter()
        .filter(|name| !steers_hookd(name))
        .filter_map(|name| {
            let value = env(&name)?;
            let by: Vec<&Assignment> = set.iter().filter(|a| a.name == name).collect();
            let file = &by[0].file;
            Some(ProjectVar {
                source: file
                    .strip_prefix(relative_to)
                    .unwrap_or(file)
                    .display()
                    .to_string(),
                users: !by.iter().any(|a| a.gives),
                name,
                value,
            })
        })
        .collect()
}

/// What to change in `env` (name → value) when the project's files name `set_by_project`.
pub(crate) fn scrub(
    set_by_project: &BTreeSet<String>,
    env: &dyn Fn(&str) -> Option<String>,
    projects: &[PathBuf],
    user_home: Option<PathBuf>,
) -> Scrub {
    let mut s = Scrub::default();
    for name in set_by_project {
        let Some(value) = env(name) else { continue };
        // The value is the repository's: shown with control characters escaped.
        let shown = crate::display::visible(&value);
        if crate::vars::has(name, crate::vars::Role::OnlyOn) {
            if crate::config::parse_bool(&value) != Some(true) {
                s.remove.push(name.clone());
                s.notes.push(format!(
                    "hookd: ignoring {name}={shown}: the project's files set it, and a project may turn it on, not off"
                ));
            }
            continue;
        }
        if !steers_hookd(name) {
            continue;
        }
        match name.as_str() {
            "HOME" => match &user_home {
                Some(h) => {
                    s.set.push((name.clone(), h.display().to_string()));
                    s.notes.push(format!(
                        "hookd: ignoring HOME={shown}: the project's files set it; using {}",
                        h.display()
                    ));
                }
                None => {
                    s.remove.push(name.clone());
                    s.notes.push(format!(
                        "hookd: ignoring HOME={shown}: the project's files set it"
                    ));
                }
            },
            "PATH" => {
                let kept: Vec<&str> = value
                    .split(':')
                    .filter(|d| {
                        d.starts_with('/') && !projects.iter().any(|p| Path::new(d).starts_with(p))
                    })
                    .collect();
                if kept.len() != value.split(':').count() {
                    s.set.push((name.clone(), kept.join(":")));
                    s.notes.push(
                        "hookd: PATH is set by the project's files; its entries inside the project or relative are dropped for hookd's hooks"
                            .to_string(),
                    );
                }
            }
            _ => {
                s.remove.push(name.clone());
                s.notes.push(format!(
                    "hookd: ignoring {name}: the project's files (.env, .claude/settings*.json) set it, and a repository may not change what hookd trusts, allows or reads"
                ));
            }
        }
    }
    s
}

/// The variables in which an agent says where its project is. A project's files may set them
/// too, and the project they name decides which files hookd reads for the scrub.
const PROJECT_VARS: [&str; 2] = ["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"];

/// What entering the agent's project found: what to tell the operator, and the variables the
/// repository's files set for the agent (gone from this process; see
/// `EngineBuilder::project_env`).
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Entered {
    /// One line each, for stderr (never for the model).
    pub notes: Vec<String>,
    /// The repository's variables other than hookd's own, with the values the agent had.
    pub project_env: Vec<ProjectVar>,
    /// Variables naming hookd's or the agents' places (`CLAUDE_CONFIG_DIR`, `HOME`, …) that the
    /// scrub removed or changed, with the values the agent had: still protected, since which of
    /// the user's and the repository's values the agent itself uses cannot be told from here.
    pub moved_places: Vec<(String, std::path::PathBuf)>,
    /// Agent files hookd would not read: what they set is unknown, so a tool call or a prompt
    /// is denied and nothing else is decided (see `handle`).
    pub unreadable: Vec<Unreadable>,
}

/// Place variables a drop took away, with the values they had (see [`Entered::moved_places`]).
pub type MovedPlaces = Vec<(String, PathBuf)>;

/// Drop from `host` what the agent's project's files set for its agent, as
/// [`enter_agent_project`] does, staying in its working directory (`hookd exec`: an agent runs
/// a model's confined call through its own shell, whose environment a repository may have set:
/// its `HOME` would choose which `config.yaml` applies, its `TMPDIR` where confined commands
/// may write). With the `project` an adapter decided (`hookd exec --project`), that project's
/// files are read too, whatever directory the shell stands in (a directory with a `.git` of its
/// own would otherwise end the walk before them). `Err` names the agent files hookd would not
/// read: what they set is unknown. With the host, the place variables the drop took away with
/// the values they had ([`Entered::moved_places`]): the user's own value of a variable the
/// repository only names (`KUBECONFIG=x` in its `.env`) is one of them, and its store must stay
/// hidden from the confined command.
pub fn drop_agent_env(
    mut host: Host,
    project: Option<&Path>,
) -> Result<(Host, MovedPlaces), Vec<Unreadable>> {
    let here = host.cwd().map(Path::to_path_buf);
    let payload = project.map(|p| serde_json::json!({ "cwd": p }));
    let entered = enter_agent_project(payload.as_ref(), &mut host);
    if !entered.unreadable.is_empty() {
        return Err(entered.unreadable);
    }
    if let Some(here) = here {
        host.set_cwd(here);
    }
    Ok((host, entered.moved_places))
}

/// Enter the agent's project in `host` and drop from it what the project's files set for its
/// agent (see `adapter::project_env`). `host` is the process as the agent started it; the
/// binary then makes its own process match (`Host` is a value: nothing here touches the
/// process).
///
/// The project is `CLAUDE_PROJECT_DIR` (Claude Code; Gemini CLI sets it too, with
/// `GEMINI_PROJECT_DIR`), else the payload's `cwd`, absolute ones only; then the project that
/// directory belongs to (its `.infer/`, else the nearest one up to the repository root). The
/// files are read from where the agent may have started: the directory it started hookd in,
/// the payload's `cwd`, and the project directory it names. The repository must not choose
/// where hookd looks for what it set: a project variable those files set is not believed.
pub fn enter_agent_project(payload: Option<&serde_json::Value>, host: &mut Host) -> Entered {
    let mut notes = Vec::new();
    let home = host.home();
    let cwd = payload
        .and_then(|p| p.get("cwd"))
        .and_then(|c| c.as_str())
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && d.is_dir());
    let mut starts: Vec<PathBuf> = Vec::new();
    starts.extend(host.cwd().map(Path::to_path_buf));
    starts.extend(cwd.clone().filter(|c| !starts.contains(c)));
    let stop = walk_stop(home.as_deref(), &starts);
    let seen = host.clone();
    let env = |k: &str| seen.var_text(k);
    let mut bad = Vec::new();
    let mut set = set_by(&starts, stop.as_deref(), &env, &mut bad);
    let names = names(&set);
    let from_env = PROJECT_VARS.iter().find_map(|k| {
        let v = host.var(k).filter(|v| !v.is_empty())?;
        if names.contains(*k) {
            notes.push(format!(
                "hookd: ignoring {k}={}: the project's files set it, and a repository may not say where the project is",
                crate::display::visible(&v.to_string_lossy())
            ));
            return None;
        }
        Some(PathBuf::from(v))
    });
    let dir = from_env
        .into_iter()
        .chain(cwd)
        .find(|d| d.is_absolute() && d.is_dir());
    if let Some(dir) = &dir {
        if !starts.contains(dir) {
            set.extend(set_by(
                std::slice::from_ref(dir),
                stop.as_deref(),
                &env,
                &mut bad,
            ));
            starts.push(dir.clone());
        }
        // The project is the agent's: hookd works there, whatever directory it was started in.
        host.set_cwd(crate::paths::find_project(dir, home.as_deref()));
    }
    let here = host.cwd().map(Path::to_path_buf);
    if let Some(here) = here.as_ref().filter(|h| !starts.contains(h)) {
        set.extend(set_by(
            std::slice::from_ref(here),
            stop.as_deref(),
            &env,
            &mut bad,
        ));
        starts.push(here.clone());
    }
    let mut moved_places = Vec::new();
    let said = (&mut notes, &mut moved_places);
    let project_env = drop_what_it_set(host, &set, &starts, said);
    Entered {
        notes,
        project_env,
        moved_places,
        unreadable: bad,
    }
}

/// Drop from `host` what `set` (read from `starts`) set for the agent: restore what the scrub
/// can (a `HOME` from the user database), remove the rest; returns what was removed, to keep
/// from the hooks too.
fn drop_what_it_set(
    host: &mut Host,
    set: &[Assignment],
    starts: &[PathBuf],
    (notes, moved): (&mut Vec<String>, &mut Vec<(String, PathBuf)>),
) -> Vec<ProjectVar> {
    let names = self::names(set);
    if names.is_empty() {
        return Vec::new();
    }
    let home = host.home();
    let projects: Vec<PathBuf> = starts
        .iter()
        .map(|d| crate::paths::find_project(d, home.as_deref()))
        .chain(starts.iter().cloned())
        .collect();
    let user_home = if names.contains("HOME") {
        crate::paths::user_home()
    } else {
        None
    };
    let s = scrub(&names, &|k: &str| host.var_text(k), &projects, user_home);
    let before: Vec<(&str, Option<std::ffi::OsString>)> =
        crate::vars::with(crate::vars::Role::Place)
            .map(|k| (k, host.var(k).map(ToOwned::to_owned)))
            .collect();
    let here = host.cwd().unwrap_or(Path::new("/")).to_path_buf();
    let project_env = project_vars(set, &|k: &str| host.var(k).map(ToOwned::to_owned), &here);
    for k in &s.remove {
        host.remove_var(k);
    }
    for (k, v) in &s.set {
        host.set_var(k, v);
    }
    for v in &project_env {
        host.remove_var(&v.name);
    }
    for (k, old) in before {
        if let Some(old) = old.filter(|v| !v.is_empty() && host.var(k) != Some(v.as_os_str())) {
            moved.push((k.to_string(), std::path::PathBuf::from(old)));
        }
    }
    notes.extend(s.notes);
    let present: Vec<&str> = project_env.iter().map(|v| v.name.as_str()).collect();
    if !present.is_empty() {
        notes.push(format!(
            "hookd: the project's files set {} for the agent: removed from hookd and its hooks (keep one of yours with `env: {{keep: [NAME]}}` in ~/.infer/hooks.yaml)",
            crate::display::visible(&present.join(", "))
        ));
    }
    project_env
}

/// Where the walk up for `.env` files stops: the home directory, whose files are the user's.
/// `HOME` itself may be the project's doing: where it would stop a walk, the user database
/// says where the home really is (looked up only then: it costs a file read).
fn walk_stop(home: Option<&Path>, starts: &[PathBuf]) -> Option<PathBuf> {
    home.filter(|h| starts.iter().any(|s| s.starts_with(h)))
        .and_then(|_| crate::paths::user_home())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_names(set: &[Assignment]) -> Vec<String> {
        names(set).into_iter().collect()
    }

    /// Every name counts as set (as `hookd check` reads the files).
    fn any(_: &str) -> Option<String> {
        Some(String::new())
    }

    #[test]
    fn names_come_from_the_first_dotenv_up_from_each_start_and_claude_settings_up_to_the_project() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        let project = home.join("src/proj");
        let web = project.join("web");
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::fs::create_dir_all(web.join(".claude")).unwrap();
        std::fs::write(home.join(".env"), "HOME_ONLY=1\n").unwrap();
        std::fs::write(
            home.join("src/.env"),
            "# c\nexport HOOKD_TRUST_PROJECT=1\n INFER_TOOLS_BASH_ALLOW_APPEND = .*\nPATH: /x\n",
        )
        .unwrap();
        std::fs::write(
            project.join(".claude/settings.json"),
            r#"{"env":{"XDG_CONFIG_HOME":"/tmp/x"}}"#,
        )
        .unwrap();
        let set = set_by(
            std::slice::from_ref(&project),
            Some(&home),
            &any,
            &mut vec![],
        );
        assert_eq!(
            set_names(&set),
            [
                "HOOKD_TRUST_PROJECT",
                "INFER_TOOLS_BASH_ALLOW_APPEND",
                "PATH",
                "XDG_CONFIG_HOME"
            ]
        );
        // Started below the root: the first .env up from there, and the settings of every
        // directory up to the project.
        std::fs::write(web.join(".env"), "PYTHONPATH=web\n").unwrap();
        std::fs::write(
            web.join(".claude/settings.local.json"),
            r#"{"env":{"GIT_CONFIG_COUNT":1}}"#,
        )
        .unwrap();
        assert_eq!(
            set_names(&set_by(
                std::slice::from_ref(&web),
                Some(&home),
                &any,
                &mut vec![]
            )),
            ["GIT_CONFIG_COUNT", "PYTHONPATH", "XDG_CONFIG_HOME"]
        );
        // Both of a directory's files are read.
        std::fs::create_dir_all(project.join(".gemini")).unwrap();
        std::fs::write(project.join(".gemini/.env"), "HOOKD_FAIL_CLOSED=0\n").unwrap();
        std::fs::write(project.join(".env"), "RUSTC_WRAPPER=./w\n").unwrap();
        let names = set_names(&set_by(
            std::slice::from_ref(&project),
            Some(&home),
            &any,
            &mut vec![],
        ));
        assert!(
            names.contains(&"HOOKD_FAIL_CLOSED".to_string()),
            "{names:?}"
        );
        assert!(names.contains(&"RUSTC_WRAPPER".to_string()), "{names:?}");
        assert!(
            !names.contains(&"HOOKD_TRUST_PROJECT".to_string()),
            "{names:?}"
        );
        // Outside the home the walk goes to the root.
        let outside = d.path().join("tmp/repo");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(d.path().join("tmp/.env"), "EDITOR=evil\n").unwrap();
        assert_eq!(
            set_names(&set_by(
                std::slice::from_ref(&outside),
                Some(&home),
                &any,
                &mut vec![]
            )),
            ["EDITOR"]
        );
    }

    #[test]
    fn a_value_is_the_users_only_when_no_file_may_give_it() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".claude")).unwrap();
        std::fs::write(
            d.path().join(".env"),
            "RUSTC_WRAPPER=\"/evil/wrap\" # c\nMULTI=\"a\\nb\"\nEMPTY=\n",
        )
        .unwrap();
        std::fs::write(
            d.path().join(".claude/settings.json"),
            r#"{"env":{"PYTHONPATH":"/evil/py","N":3}}"#,
        )
        .unwrap();
        let value = |k: &str| {
            Some(
                match k {
                    "RUSTC_WRAPPER" => "/home/u/bin/sccache",
                    "MULTI" => "a\nb",
                    "EMPTY" => "",
                    "PYTHONPATH" => "/evil/py",
                    "N" => "3",
                    _ => return None,
                }
                .to_string(),
            )
        };
        let set = set_by(&[d.path().to_path_buf()], None, &value, &mut vec![]);
        let env = |k: &str| value(k).map(OsString::from);
        let vars = project_vars(&set, &env, d.path());
        let users: Vec<(&str, bool)> = vars.iter().map(|v| (v.name.as_str(), v.users)).collect();
        assert_eq!(
            users,
            [
                ("EMPTY", false),
                ("MULTI", false),
                ("N", false),
                ("PYTHONPATH", false),
                ("RUSTC_WRAPPER", true)
            ]
        );
        assert_eq!(vars[3].source, ".claude/settings.json");
        assert_eq!(vars[4].source, ".env");
    }

    #[test]
    fn guarded_names_are_dropped_and_switches_only_turn_on() {
        let project = Path::new("/p");
        let names: BTreeSet<String> = [
            "HOOKD_TRUST_PROJECT",
            "HOOKD_FAIL_CLOSED",
            "HOOKD_GATE_SHELL_TOOLS",
            "HOME",
            "PATH",
            "EDITOR",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let env = |k: &str| {
            Some(
                match k {
                    "HOOKD_TRUST_PROJECT" => "1",
                    "HOOKD_FAIL_CLOSED" => "0",
                    "HOOKD_GATE_SHELL_TOOLS" => "yes",
                    "HOME" => "/p/fake",
                    "PATH" => "/p/bin:bin:/usr/bin",
                    _ => "vi",
                }
                .to_string(),
            )
        };
        let s = scrub(
            &names,
            &env,
            &[project.to_path_buf()],
            Some(PathBuf::from("/home/u")),
        );
        assert_eq!(s.remove, vec!["HOOKD_FAIL_CLOSED", "HOOKD_TRUST_PROJECT"]);
        assert_eq!(
            s.set,
            vec![
                ("HOME".to_string(), "/home/u".to_string()),
                ("PATH".to_string(), "/usr/bin".to_string())
            ]
        );
        assert_eq!(s.notes.len(), 4);
    }
}
