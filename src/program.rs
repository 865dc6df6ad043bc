//! Where a program is found, as a hook's run finds it: a path as written (relative to the
//! working directory), else the first executable file of that name on the `PATH`, sanitized
//! as for a run (relative entries dropped). Shared by the runner, `hookd check` and the trust
//! fingerprint (which project file a hook runs), so the three never disagree.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::host::Host;

/// `PATH` when the caller has none.
pub(crate) const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// `v` without its relative entries (a hook's `PATH`; `DEFAULT_PATH` if none is left to join).
pub(crate) fn clean_path(v: &OsStr) -> OsString {
    let kept: Vec<PathBuf> = std::env::split_paths(v)
        .filter(|p| p.is_absolute())
        .collect();
    std::env::join_paths(kept).unwrap_or_else(|_| DEFAULT_PATH.into())
}

/// Why a program could not be found (a hook that cannot start: an outcome, reported as its
/// `error`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotFound {
    /// A path (it has a `/`) that does not exist.
    #[error("`{0}` does not exist")]
    Path(String),
    /// A name found in no directory of the sanitized `PATH`.
    #[error("`{0}` was not found on PATH; is it installed?")]
    OnPath(String),
}

/// Where a hook run from `cwd` with `host`'s `PATH` (sanitized as for a run) would find
/// `program`, or the sentence a run that cannot start reports (`` `gofmt` was not found on
/// PATH; is it installed? ``): what `hookd check` asks before any hook runs.
pub fn find_program(program: &str, cwd: &Path, host: &Host) -> Result<PathBuf, NotFound> {
    let path = host.path().map(clean_path);
    resolve(program, cwd, path.as_ref())
}

/// Where a run would find `program`, with the host's `path` sanitized as for a run.
pub(crate) fn program_path(
    program: &str,
    cwd: &Path,
    path: Option<&std::ffi::OsStr>,
) -> Option<PathBuf> {
    let path = path.map(clean_path);
    resolve(program, cwd, path.as_ref()).ok()
}

/// Find `program` the way a shell would, but only on the sanitized `PATH`.
pub(crate) fn resolve(
    program: &str,
    cwd: &Path,
    path: Option<&OsString>,
) -> Result<PathBuf, NotFound> {
    if program.contains('/') {
        let p = Path::new(program);
        let full = if p.is_absolute() {
            p.to_path_buf()
        } else {
            cwd.join(p)
        };
        return if full.exists() {
            Ok(full)
        } else {
            Err(NotFound::Path(program.to_string()))
        };
    }
    let path = path.cloned().unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(program);
        if let Ok(meta) = candidate.metadata() {
            use std::os::unix::fs::PermissionsExt;
            if meta.is_file() && meta.permissions().mode() & 0o111 != 0 {
                return Ok(candidate);
            }
        }
    }
    Err(NotFound::OnPath(program.to_string()))
}
