//! A build without the `confine` feature: nothing confines, so [`crate::support`] says so and
//! [`crate::Confinement::prepare`] fails before any of these is reached; they fail too.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use super::{Confinement, Support};

/// No seccomp program.
pub(super) type Filter = ();

const NOT_BUILT: &str = "this build does not confine (the `confine` feature)";

pub(super) fn probe() -> Support {
    Support {
        landlock_abi: None,
        namespaces: false,
        built: false,
    }
}

pub(super) fn probe_landlock() -> Support {
    probe()
}

pub(super) fn temp_rights() -> u64 {
    0
}

pub(super) fn ruleset(
    _writable: &[PathBuf],
    _no_links: &[PathBuf],
    _sockets: &[PathBuf],
) -> Result<OwnedFd, String> {
    Err(NOT_BUILT.into())
}

pub(super) fn network_filter(_network: bool, _listener: bool) -> Result<Filter, String> {
    Err(NOT_BUILT.into())
}

/// # Safety
/// None needed: it only fails.
pub(super) unsafe fn unshare(_c: &Confinement) -> std::io::Result<()> {
    Err(std::io::Error::other(NOT_BUILT))
}

/// No namespace.
pub(super) fn namespaces(_c: &Confinement) -> nix::libc::c_int {
    0
}

/// # Safety
/// None needed: it only fails.
pub(super) unsafe fn enter(_c: &Confinement) -> std::io::Result<()> {
    Err(std::io::Error::other(NOT_BUILT))
}

/// # Safety
/// None needed: it only fails.
pub(super) unsafe fn confine(_c: &Confinement) -> std::io::Result<()> {
    Err(std::io::Error::other(NOT_BUILT))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::{Confinement, Policy, Unavailable};

    #[test]
    fn nothing_confined_runs_and_the_spawn_path_remains() {
        let missing = crate::support().missing();
        assert_eq!(
            missing,
            ["confinement in this build (hookd's `sandbox` feature, hookd-sandbox's `confine`)"]
        );
        let dir = tempfile::tempdir().unwrap();
        let err = Confinement::prepare(&Policy::default(), dir.path()).unwrap_err();
        assert_eq!(err, Unavailable::Kernel(missing));
        // Unconfined, a command starts by the same path: its waiter, no inherited descriptor.
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "ls /proc/self/fd | wc -l"]);
        crate::prepare_spawn(&mut cmd, None::<Arc<Confinement>>, None, None);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        // stdin, stdout, stderr and the one `ls` reads the directory with.
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "4");
    }
}
