//! The process hookd runs in, as a value: its environment variables and its working directory.
//! The binary reads them once, at its edge ([`Host::of_this_process`], after an adapter's scrub);
//! the library reads this value and never the process, so a program embedding hookd says what
//! loading, the gate's protected places and the hooks' environment see, and two engines in one
//! process can see different ones.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// A process's variables and directory. Empty by default: no variables (hooks then get a
/// `PATH` of `/usr/local/bin:/usr/bin:/bin` and nothing else), no directory. Its `Debug` shows
/// the variables' names, never their values (an environment holds tokens and keys, and a
/// `Config` or `LoadOptions` printed for debugging carries its host).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Host {
    vars: BTreeMap<OsString, OsString>,
    cwd: Option<PathBuf>,
}

impl Host {
    /// These variables, in this directory.
    pub fn new(vars: impl IntoIterator<Item = (OsString, OsString)>, cwd: Option<PathBuf>) -> Host {
        Host {
            vars: vars.into_iter().collect(),
            cwd,
        }
    }

    /// This process's environment and directory: with [`Host::make_this_process`], the only
    /// place the library touches them. The binary calls it at its edge, after an adapter call
    /// dropped what the agent's project set (see `adapter::handle::Arrival::enter`).
    pub fn of_this_process() -> Host {
        Host::new(std::env::vars_os(), std::env::current_dir().ok())
    }

    /// Make this process's environment and directory this host's: the binary's second edge,
    /// after an adapter's scrub decided on a value what the process keeps. Call it first,
    /// while the process has one thread (changing the environment of a process whose other
    /// threads read it is undefined behaviour in C). An error when the directory cannot be
    /// entered; the variables are set in any case.
    pub fn make_this_process(&self) -> std::io::Result<()> {
        let now = Host::of_this_process();
        for (k, _) in now.vars().filter(|(k, _)| self.var(k).is_none()) {
            std::env::remove_var(k);
        }
        for (k, v) in self.vars().filter(|(k, v)| now.var(k) != Some(v)) {
            std::env::set_var(k, v);
        }
        match &self.cwd {
            Some(dir) if now.cwd.as_ref() != Some(dir) => std::env::set_current_dir(dir),
            _ => Ok(()),
        }
    }

    /// With `name` set to `value`.
    pub fn with_var(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Host {
        self.set_var(name, value);
        self
    }

    /// With the working directory `dir`.
    pub fn with_cwd(mut self, dir: impl Into<PathBuf>) -> Host {
        self.cwd = Some(dir.into());
        self
    }

    /// Set `name` to `value`.
    pub fn set_var(&mut self, name: impl Into<OsString>, value: impl Into<OsString>) {
        self.vars.insert(name.into(), value.into());
    }

    /// Remove `name`.
    pub fn remove_var(&mut self, name: impl AsRef<OsStr>) {
        self.vars.remove(name.as_ref());
    }

    /// Work in `dir`.
    pub fn set_cwd(&mut self, dir: impl Into<PathBuf>) {
        self.cwd = Some(dir.into());
    }

    /// One variable's value.
    pub fn var(&self, name: impl AsRef<OsStr>) -> Option<&OsStr> {
        self.vars.get(name.as_ref()).map(OsString::as_os_str)
    }

    /// One variable as text (lossy), for code that reads names and switches.
    pub fn var_text(&self, name: impl AsRef<OsStr>) -> Option<String> {
        self.var(name).map(|v| v.to_string_lossy().into_owned())
    }

    /// Every variable, by name.
    pub fn vars(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.vars
            .iter()
            .map(|(k, v)| (k.as_os_str(), v.as_os_str()))
    }

    /// The working directory, if the process could read it.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// A directory a variable names: set and not empty.
    pub fn dir(&self, name: &str) -> Option<PathBuf> {
        self.var(name).filter(|v| !v.is_empty()).map(PathBuf::from)
    }

    /// `$HOME`.
    pub fn home(&self) -> Option<PathBuf> {
        self.dir("HOME")
    }

    /// `$PATH`, as set.
    pub fn path(&self) -> Option<&OsStr> {
        self.var("PATH")
    }

    /// The temporary directory: `$TMPDIR`, else `/tmp` (as the standard library decides).
    pub fn temp_dir(&self) -> PathBuf {
        self.dir("TMPDIR").unwrap_or_else(|| PathBuf::from("/tmp"))
    }

    /// The project of the working directory: the nearest directory at or above it holding
    /// `.infer/`, not above the repository root (`.git`) and not the home directory; the
    /// repository root when no `.infer/` is found below it; else the directory itself.
    pub fn project(&self) -> Option<PathBuf> {
        let home = self.home();
        self.cwd()
            .map(|d| crate::paths::find_project(d, home.as_deref()))
    }

    /// Session state: `$HOOKD_STATE_DIR`, else `$XDG_STATE_HOME/hookd`, else
    /// `~/.local/state/hookd`.
    pub fn state_dir(&self) -> Option<PathBuf> {
        self.dir("HOOKD_STATE_DIR")
            .or_else(|| self.dir("XDG_STATE_HOME").map(|p| p.join("hookd")))
            .or_else(|| self.home().map(|h| h.join(".local/state/hookd")))
    }

    /// The daemon's socket: `$HOOKD_SOCKET`, else `$XDG_RUNTIME_DIR/hookd.sock`, else
    /// `/run/user/UID/hookd.sock` where that directory is this user's own (owner and mode
    /// 0700: what `XDG_RUNTIME_DIR` names where a login made one, for an agent that strips
    /// the variable from its hooks, as Gemini CLI in CI mode does), else `~/.infer/hookd.sock`.
    #[cfg(feature = "daemon")]
    pub fn socket(&self) -> Option<PathBuf> {
        self.dir("HOOKD_SOCKET")
            .or_else(|| self.dir("XDG_RUNTIME_DIR").map(|d| d.join("hookd.sock")))
            .or_else(|| own_runtime_dir().map(|d| d.join("hookd.sock")))
            .or_else(|| self.home().map(|h| h.join(".infer/hookd.sock")))
    }
}

/// `/run/user/UID` when it is a directory (not a link) of this user's, mode 0700: where a
/// client without `XDG_RUNTIME_DIR` looks for the daemon, held by the gate as
/// `$XDG_RUNTIME_DIR/hookd*` is.
pub(crate) fn own_runtime_dir() -> Option<PathBuf> {
    runtime_dir_in(Path::new("/run/user"), nix::unistd::getuid().as_raw())
}

/// `root/UID` when it is a directory (not a link) owned by `uid`, mode 0700.
fn runtime_dir_in(root: &Path, uid: u32) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let dir = root.join(uid.to_string());
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    (meta.is_dir() && meta.uid() == uid && meta.mode() & 0o777 == 0o700).then_some(dir)
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("vars", &self.vars.keys().collect::<Vec<_>>())
            .field("cwd", &self.cwd)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_come_from_the_value_not_the_process() {
        let h = Host::default()
            .with_var("HOME", "/h")
            .with_var("XDG_STATE_HOME", "")
            .with_cwd("/nowhere");
        assert_eq!(h.home(), Some(PathBuf::from("/h")));
        // An empty variable names no directory.
        assert_eq!(h.dir("XDG_STATE_HOME"), None);
        assert_eq!(h.state_dir(), Some(PathBuf::from("/h/.local/state/hookd")));
        assert_eq!(h.temp_dir(), PathBuf::from("/tmp"));
        assert_eq!(h.project(), Some(PathBuf::from("/nowhere")));
        assert_eq!(Host::default().home(), None);
        assert_eq!(Host::default().project(), None);
    }

    /// The runtime directory a login makes is taken only when it is the user's own and
    /// private: not a link, not another user's, not open to others.
    #[test]
    fn a_runtime_directory_is_taken_only_when_it_is_the_users_own() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let uid = nix::unistd::getuid().as_raw();
        let dir = root.path().join(uid.to_string());
        assert_eq!(runtime_dir_in(root.path(), uid), None);
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(runtime_dir_in(root.path(), uid), None);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(runtime_dir_in(root.path(), uid), Some(dir.clone()));
        // Another user's: this user's private directory, looked up for uid + 1.
        let other = root.path().join((uid + 1).to_string());
        std::fs::create_dir(&other).unwrap();
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(runtime_dir_in(root.path(), uid + 1), None);
        // A link to a private directory of this user's.
        std::fs::create_dir(root.path().join("private")).unwrap();
        std::fs::remove_dir(&dir).unwrap();
        std::os::unix::fs::symlink(root.path().join("private"), &dir).unwrap();
        assert_eq!(runtime_dir_in(root.path(), uid), None);
    }

    #[test]
    fn debug_names_the_variables_and_hides_their_values() {
        let h = Host::default().with_var("ANTHROPIC_API_KEY", "sk-secret");
        let shown = format!("{h:?}");
        assert!(shown.contains("ANTHROPIC_API_KEY"), "{shown}");
        assert!(!shown.contains("sk-secret"), "{shown}");
    }
}
