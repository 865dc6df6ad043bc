//! The environment a hook runs in: the caller's, minus what changes how programs behave
//! behind the gate's back, plus the HOOKD_* context variables.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Variables removed by name: each makes a shell or runtime run code or change parsing.
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
    // hookd's own secrets: the daemon's HTTP token is for clients of the daemon, not its hooks.
    "HOOKD_TOKEN",
];
/// Variables removed by prefix: exported bash functions and dynamic-loader controls.
const REMOVED_PREFIXES: &[&str] = &["BASH_FUNC_", "LD_", "DYLD_"];
/// `PATH` when the caller has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

pub(crate) fn removed(name: &OsStr) -> bool {
    let b = name.as_bytes();
    REMOVED.iter().any(|r| r.as_bytes() == b)
        || REMOVED_PREFIXES.iter().any(|p| b.starts_with(p.as_bytes()))
}

/// The sanitized environment built from `vars`. `PATH` keeps only absolute entries.
pub(crate) fn sanitize(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let mut out: Vec<(OsString, OsString)> = Vec::new();
    let mut path = None;
    for (k, v) in vars {
        if removed(&k) {
            continue;
        }
        if k == "PATH" {
            path = Some(clean_path(&v));
            continue;
        }
        out.push((k, v));
    }
    out.push(("PATH".into(), path.unwrap_or_else(|| DEFAULT_PATH.into())));
    out
}

fn clean_path(v: &OsStr) -> OsString {
    let kept: Vec<PathBuf> = std::env::split_paths(v)
        .filter(|p| p.is_absolute())
        .collect();
    std::env::join_paths(kept).unwrap_or_else(|_| DEFAULT_PATH.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_dangerous_variables_and_relative_path_entries() {
        let vars = [
            ("BASH_ENV", "/tmp/evil"),
            ("BASH_FUNC_ls%%", "() { evil; }"),
            ("LD_PRELOAD", "/tmp/x.so"),
            ("DYLD_INSERT_LIBRARIES", "x"),
            ("IFS", "x"),
            ("HOME", "/home/u"),
            ("PATH", "/usr/bin::.:bin:/bin"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let out = sanitize(vars);
        let names: Vec<_> = out
            .iter()
            .map(|(k, _)| k.to_string_lossy().to_string())
            .collect();
        assert_eq!(names, ["HOME", "PATH"]);
        assert_eq!(out[1].1, "/usr/bin:/bin");
    }
}
