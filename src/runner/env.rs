//! The environment a hook runs in: the caller's, minus what changes how programs behave
//! behind the gate's back and what a repository set for its agent, plus the HOOKD_* context
//! variables. What is removed is reported, so the operator sees it.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use crate::host::Host;
use crate::kinds::Keep;
use crate::program::{clean_path, DEFAULT_PATH};

pub use crate::kinds::{EnvCause, RemovedVar};

/// Variables removed by name: each makes a shell, runtime or tool run code or change parsing.
const REMOVED: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PROMPT_COMMAND",
    "PS4",
    "IFS",
    "CDPATH",
    "GLOBIGNORE",
    "ZDOTDIR",
    "NODE_OPTIONS",
    "PERL5OPT",
    "RUBYOPT",
    "PYTHONSTARTUP",
    "PYTHONINSPECT",
    "GIT_EXEC_PATH",
    // git reads configuration from the environment: `core.fsmonitor`, `core.pager` or an alias
    // set there runs a program at the next `git status`.
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
];
/// Variables removed by prefix: exported bash functions, dynamic-loader controls, and git's
/// numbered configuration entries (`GIT_CONFIG_KEY_0`, `GIT_CONFIG_VALUE_0`, …).
const REMOVED_PREFIXES: &[&str] = &[
    "BASH_FUNC_",
    "LD_",
    "DYLD_",
    "GIT_CONFIG_KEY_",
    "GIT_CONFIG_VALUE_",
];
/// Whether `name` steers hookd itself (what it loads, trusts, reads, where it reports, and the
/// process's `HOME` and `PATH`): a repository's files may not set it (the adapter's scrub drops
/// or corrects it first), and no keep list hands a repository's value to hooks
/// ([`crate::vars::Role::Steering`]).
pub(crate) fn steers_hookd(name: &str) -> bool {
    crate::vars::has(name, crate::vars::Role::Steering)
}

/// Whether `name` is one of hookd's secrets ([`crate::vars::Role::Secret`]): never handed to
/// hooks, whatever a keep list says.
fn secret(name: &str) -> bool {
    crate::vars::has(name, crate::vars::Role::Secret)
}

/// Whether hookd removes `name` from every hook's environment unless the user keeps it: it
/// makes a shell, a runtime or git run code.
pub fn runs_code(name: &str) -> bool {
    removed(OsStr::new(name))
}

/// [`runs_code`] for a name as the process holds it.
pub(crate) fn removed(name: &OsStr) -> bool {
    let b = name.as_bytes();
    REMOVED.iter().any(|r| r.as_bytes() == b)
        || REMOVED_PREFIXES.iter().any(|p| b.starts_with(p.as_bytes()))
}

/// A variable a repository's files set for the agent, as this process found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectVar {
    /// The variable's name.
    pub name: String,
    /// The file that sets it, for people.
    pub source: String,
    /// Its value in the agent's environment.
    pub value: OsString,
    /// True when that value is the user's own and not the one the file gives: the agent kept
    /// a value already set (as Gemini CLI does). Only then may the user's keep list keep it.
    pub users: bool,
}

/// What a hook's environment is made from: the host's variables, what the user keeps, what a
/// repository set.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    /// The process the hooks run for (the caller's): its variables are the base.
    pub host: Host,
    /// The user's `env.keep`: these reach hooks whatever hookd would remove, with the user's
    /// value (never a repository's).
    pub keep: Keep,
    /// A trusted project's `env.keep`: its own variables it may hand to hooks.
    pub project_keep: Keep,
    /// What a repository's files set for its agent; already gone from this process (see
    /// `adapter::enter_agent_project`), reported as removed unless kept.
    pub project: Vec<ProjectVar>,
}

impl Environment {
    /// The environment for a hook, from the host's variables (see [`Environment::build`]).
    pub fn for_hook(&self) -> (Vec<(OsString, OsString)>, Vec<RemovedVar>) {
        let vars = self.host.vars().map(|(k, v)| (k.to_owned(), v.to_owned()));
        self.build(vars)
    }

    /// The environment for a hook, from `vars`: `PATH` keeps only absolute
    /// entries, code-running variables and the project's go unless kept, secrets always go.
    /// Returns the variables and what was removed, sorted by name.
    pub fn build(
        &self,
        vars: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> (Vec<(OsString, OsString)>, Vec<RemovedVar>) {
        // hookd's own variables, HOME and PATH are the adapter's scrub's business: a project
        // variable of those names is not this function's to drop or keep.
        let project: Vec<&ProjectVar> = self
            .project
            .iter()
            .filter(|p| !steers_hookd(&p.name))
            .collect();
        let mut out: Vec<(OsString, OsString)> = Vec::new();
        let mut gone = Vec::new();
        let mut path = None;
        for (k, v) in vars {
            let name = k.to_string_lossy();
            if secret(&name) || project.iter().any(|p| p.name == name) {
                continue;
            }
            if k == "PATH" {
                path = Some(clean_path(&v));
                continue;
            }
            if removed(&k) && !self.keep.matches(&name) {
                gone.push(RemovedVar {
                    name: name.into_owned(),
                    cause: EnvCause::RunsCode,
                    source: None,
                });
                continue;
            }
            out.push((k, v));
        }
        for p in project {
            let runs_code = runs_code(&p.name);
            let kept = (p.users && self.keep.matches(&p.name))
                || (!runs_code && self.project_keep.matches(&p.name));
            if kept {
                out.push((p.name.clone().into(), p.value.clone()));
            } else {
                gone.push(RemovedVar {
                    name: p.name.clone(),
                    cause: EnvCause::Project,
                    source: Some(p.source.clone()),
                });
            }
        }
        out.push(("PATH".into(), path.unwrap_or_else(|| DEFAULT_PATH.into())));
        gone.sort_by(|a, b| a.name.cmp(&b.name));
        (out, gone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sanitized environment built from `vars` with nothing kept and no project variables.
    fn sanitize(vars: Vec<(OsString, OsString)>) -> Vec<(OsString, OsString)> {
        Environment::default().build(vars).0
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn strips_dangerous_variables_and_relative_path_entries() {
        let out = sanitize(vars(&[
            ("BASH_ENV", "/tmp/evil"),
            ("BASH_FUNC_ls%%", "() { evil; }"),
            ("LD_PRELOAD", "/tmp/x.so"),
            ("DYLD_INSERT_LIBRARIES", "x"),
            ("IFS", "x"),
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
            ("GIT_CONFIG_VALUE_0", "touch /tmp/x"),
            ("GIT_CONFIG_PARAMETERS", "'core.pager'='x'"),
            ("HOOKD_TOKEN", "secret"),
            ("HOME", "/home/u"),
            ("PATH", "/usr/bin::.:bin:/bin"),
        ]));
        let names: Vec<_> = out
            .iter()
            .map(|(k, _)| k.to_string_lossy().to_string())
            .collect();
        assert_eq!(names, ["HOME", "PATH"]);
        assert_eq!(out[1].1, "/usr/bin:/bin");
    }

    #[test]
    fn the_user_keeps_by_name_or_prefix_and_what_is_removed_is_said() {
        let env = Environment {
            keep: Keep::new(["GIT_CONFIG_*".to_string(), "HOOKD_TOKEN".to_string()]),
            ..Default::default()
        };
        let (out, gone) = env.build(vars(&[
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_CONFIG_KEY_0", "user.name"),
            ("LD_PRELOAD", "x.so"),
            ("HOOKD_TOKEN", "secret"),
        ]));
        let names: Vec<_> = out.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(names, ["GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "PATH"]);
        assert_eq!(
            gone,
            [RemovedVar {
                name: "LD_PRELOAD".into(),
                cause: EnvCause::RunsCode,
                source: None
            }]
        );
    }

    #[test]
    fn a_projects_variable_goes_unless_the_user_keeps_their_own_value_or_a_trusted_project_keeps_it(
    ) {
        let var = |name: &str, users: bool| ProjectVar {
            name: name.into(),
            source: ".gemini/.env".into(),
            value: format!("{name}-value").into(),
            users,
        };
        let env = Environment {
            host: Host::default(),
            keep: Keep::new(["RUSTC_WRAPPER".to_string(), "PYTHONPATH".to_string()]),
            project_keep: Keep::new(["DATABASE_URL".to_string(), "GIT_CONFIG_*".to_string()]),
            project: vec![
                var("RUSTC_WRAPPER", true),
                var("PYTHONPATH", false),
                var("DATABASE_URL", false),
                var("GIT_CONFIG_COUNT", false),
                var("EDITOR", true),
                var("HOOKD_TRUST_PROJECT", false),
            ],
        };
        let (out, gone) = env.build(vars(&[("PYTHONPATH", "stale"), ("TERM", "xterm")]));
        let names: Vec<_> = out.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert_eq!(names, ["TERM", "RUSTC_WRAPPER", "DATABASE_URL", "PATH"]);
        let gone: Vec<_> = gone.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(gone, ["EDITOR", "GIT_CONFIG_COUNT", "PYTHONPATH"]);
    }
}
