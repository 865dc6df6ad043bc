//! Variables a repository sets for its agent. Gemini CLI loads the project's `.env` (or
//! `.gemini/.env`) into its environment, and Claude Code applies the `env` of the project's
//! `.claude/settings*.json`; hooks, hookd's adapter among them, inherit both. A repository
//! could so trust itself (`HOOKD_TRUST_PROJECT`), grant itself allow entries
//! (`INFER_TOOLS_BASH_ALLOW_APPEND`), switch the user's hooks off (`INFER_HOOKS_ENABLED`),
//! move the user's configuration (`HOME`, `XDG_CONFIG_HOME`) or put its own programs first on
//! `PATH`. The adapter drops every such variable a project file names before anything reads
//! the environment, and says so.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Variables that decide what hookd loads, trusts or runs: a project may not set them.
const GUARDED: &[&str] = &[
    "HOOKD_TRUST_PROJECT",
    "HOOKD_TRUST_FILE",
    "INFER_TOOLS_BASH_ALLOW_APPEND",
    "INFER_HOOKS_ENABLED",
    "INFER_REMINDERS_ENABLED",
    "INFER_REMINDERS_CONFIG",
    "HOOKD_STATE_DIR",
    "HOOKD_EVENTS",
    "HOOKD_SOCKET",
    // hookd's logs go to stderr, which some agents show the model.
    "HOOKD_LOG",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "HOME",
    "PATH",
];

/// Switches a project may turn on but not off.
const ONLY_ON: &[&str] = &["HOOKD_FAIL_CLOSED", "HOOKD_GATE_SHELL_TOOLS"];

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

/// The variable names the project's files set for the agent: `.env` files Gemini CLI would
/// load (walking up from `project`, the first `.gemini/.env` or `.env`, not the home's own)
/// and the `env` keys of `.claude/settings.json` and `.claude/settings.local.json`.
pub(crate) fn names_set_by(project: &Path, home: Option<&Path>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut dir = Some(project);
    while let Some(d) = dir {
        if Some(d) == home {
            break;
        }
        let found = [d.join(".gemini/.env"), d.join(".env")]
            .into_iter()
            .find(|p| p.is_file());
        if let Some(file) = found {
            if let Ok(bytes) = crate::config::read_limited(&file, 1 << 20) {
                names.extend(dotenv_names(&String::from_utf8_lossy(&bytes)));
            }
            break;
        }
        dir = d.parent();
    }
    for file in ["settings.json", "settings.local.json"] {
        let path = project.join(".claude").join(file);
        let Ok(bytes) = crate::config::read_limited(&path, 1 << 20) else {
            continue;
        };
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes) {
            if let Some(env) = v.get("env").and_then(|e| e.as_object()) {
                names.extend(env.keys().cloned());
            }
        }
    }
    names
}

/// Every name a dotenv file assigns (`NAME=…`, `export NAME=…`), read generously: a line of
/// a multi-line value that looks like an assignment counts too.
fn dotenv_names(text: &str) -> impl Iterator<Item = String> + '_ {
    text.lines().filter_map(|line| {
        let line = line.trim_start();
        let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
        let (name, _) = line.split_once(['=', ':'])?;
        let name = name.trim_end();
        let ok = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-');
        ok.then(|| name.to_string())
    })
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
        if ONLY_ON.contains(&name.as_str()) {
            if crate::config::parse_bool(&value) != Some(true) {
                s.remove.push(name.clone());
                s.notes.push(format!(
                    "hookd: ignoring {name}={value}: the project's files set it, and a project may turn it on, not off"
                ));
            }
            continue;
        }
        if !GUARDED.contains(&name.as_str()) {
            continue;
        }
        match name.as_str() {
            "HOME" => match &user_home {
                Some(h) => {
                    s.set.push((name.clone(), h.display().to_string()));
                    s.notes.push(format!(
                        "hookd: ignoring HOME={value}: the project's files set it; using {}",
                        h.display()
                    ));
                }
                None => {
                    s.remove.push(name.clone());
                    s.notes.push(format!(
                        "hookd: ignoring HOME={value}: the project's files set it"
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

/// The user's home directory from the user database, not from `HOME`.
pub(crate) fn user_home() -> Option<PathBuf> {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.dir)
}

/// The variables in which an agent says where its project is. A project's files may set them
/// too, and the project they name decides which files hookd reads for the scrub.
const PROJECT_VARS: [&str; 2] = ["CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"];

/// Enter the agent's project and drop from this process's environment what the project's files
/// set for its agent and may not decide (see `adapter::project_env`); returns what to tell the
/// operator. Called first, while this process has one thread.
///
/// The project is `CLAUDE_PROJECT_DIR` (Claude Code; Gemini CLI sets it too, with
/// `GEMINI_PROJECT_DIR`), else the payload's `cwd`, absolute ones only; then the project that
/// directory belongs to (its `.infer/`, else the nearest one up to the repository root). The
/// repository must not choose where hookd looks for what it set: the files of the project of
/// the payload's `cwd` and of the directory the agent started hookd in are read as well, and a
/// project variable one of them sets is not believed.
pub fn enter_agent_project(payload: Option<&serde_json::Value>) -> Vec<String> {
    let mut notes = Vec::new();
    let home = crate::paths::home();
    let cwd = payload
        .and_then(|p| p.get("cwd"))
        .and_then(|c| c.as_str())
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && d.is_dir());
    let mut projects: Vec<PathBuf> = Vec::new();
    let mut names = BTreeSet::new();
    // A project's own directory belongs to that project: the common call (started in the
    // project, `cwd` the project) looks its project up once.
    let read = |dir: &Path, projects: &mut Vec<PathBuf>, names: &mut BTreeSet<String>| {
        if projects.iter().any(|p| p == dir) {
            return;
        }
        let project = crate::paths::find_project(dir, home.as_deref());
        if !projects.contains(&project) {
            names.extend(names_set_by(&project, walk_stop(&project).as_deref()));
            projects.push(project);
        }
    };
    for dir in std::env::current_dir().ok().iter().chain(cwd.iter()) {
        read(dir, &mut projects, &mut names);
    }
    let from_env = PROJECT_VARS.iter().find_map(|k| {
        let v = std::env::var_os(k).filter(|v| !v.is_empty())?;
        if names.contains(*k) {
            notes.push(format!(
                "hookd: ignoring {k}={}: the project's files set it, and a repository may not say where the project is",
                v.to_string_lossy()
            ));
            return None;
        }
        Some(PathBuf::from(v))
    });
    let dir = from_env
        .into_iter()
        .chain(cwd)
        .find(|d| d.is_absolute() && d.is_dir());
    if let Some(dir) = dir {
        let project = crate::paths::find_project(&dir, home.as_deref());
        // The project is the agent's: hookd works there, whatever directory it was started in.
        if let Err(e) = std::env::set_current_dir(&project) {
            notes.push(format!(
                "hookd: cannot work in the agent's project {}: {e}",
                project.display()
            ));
        }
    }
    if let Ok(here) = std::env::current_dir() {
        read(&here, &mut projects, &mut names);
    }
    if names.is_empty() {
        return notes;
    }
    let user_home = if names.contains("HOME") {
        user_home()
    } else {
        None
    };
    let env = |k: &str| std::env::var_os(k).map(|v| v.to_string_lossy().into_owned());
    let s = scrub(&names, &env, &projects, user_home);
    for k in &s.remove {
        std::env::remove_var(k);
    }
    for (k, v) in &s.set {
        std::env::set_var(k, v);
    }
    notes.extend(s.notes);
    notes
}

/// Where the walk up for `.env` files stops: the home directory, whose files are the user's.
/// `HOME` itself may be the project's doing: where it would stop the walk, the user database
/// says where the home really is (looked up only then: it costs a file read).
fn walk_stop(project: &Path) -> Option<PathBuf> {
    crate::paths::home()
        .filter(|h| project.starts_with(h))
        .and_then(|_| user_home())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_first_dotenv_up_the_tree_and_claude_settings() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        let project = home.join("src/proj");
        std::fs::create_dir_all(project.join(".claude")).unwrap();
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
        let names = names_set_by(&project, Some(&home));
        let want: BTreeSet<String> = [
            "HOOKD_TRUST_PROJECT",
            "INFER_TOOLS_BASH_ALLOW_APPEND",
            "PATH",
            "XDG_CONFIG_HOME",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(names, want);
        std::fs::create_dir_all(project.join(".gemini")).unwrap();
        std::fs::write(project.join(".gemini/.env"), "HOOKD_FAIL_CLOSED=0\n").unwrap();
        assert!(names_set_by(&project, Some(&home)).contains("HOOKD_FAIL_CLOSED"));
        assert!(!names_set_by(&project, Some(&home)).contains("HOOKD_TRUST_PROJECT"));
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
