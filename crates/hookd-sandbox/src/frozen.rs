//! The rest of the filesystem, read-only in the command's mount namespace: Landlock bounds
//! writing a file's contents, not its metadata (`chmod`, `chown`, `utimensat`, `setxattr`), so
//! a confined command could make the user's files world-writable or setuid, or change hookd's
//! own configuration's mode. Every mount the command inherits is remounted read-only (as
//! bubblewrap's `--ro-bind / /` does for Codex), then each writable place is bound back onto
//! itself writable (with what is mounted inside it: the held places keep their read-only binds).
//! Planned in the parent; applied by the child before the other mounts.

use std::ffi::CString;
use std::path::{Path, PathBuf};

use super::{c_path, Unavailable};

/// The mounts to make read-only (with the flags each must keep) and the places to bind back
/// writable (with theirs).
#[derive(Debug, Default)]
pub(super) struct Frozen {
    mounts: Vec<(CString, u64)>,
    writable: Vec<(CString, u64)>,
}

/// A mount point as `/proc/self/mountinfo` writes it: space, tab, newline and backslash as
/// octal escapes.
fn unescape(field: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], octal) {
            (b'\\', Some(d)) => {
                out.push(((d[0] - b'0') << 6) | ((d[1] - b'0') << 3) | (d[2] - b'0'));
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

/// Plan it for a command that may write `writable` (resolved): every mount of this process but
/// `/proc` (the command gets its own), outermost first.
pub(super) fn plan(writable: &[PathBuf]) -> Result<Frozen, Unavailable> {
    let info = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| Unavailable::Prepare(format!("/proc/self/mountinfo: {e}")))?;
    let mut points: Vec<PathBuf> = info
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(unescape)
        .filter(|p| !p.starts_with("/proc"))
        .collect();
    points.sort();
    points.dedup();
    // A mount at or below a writable place stays as it is (`write: ['/']` leaves everything);
    // a writable place that is itself a mount point needs no binding back (and `/` could not
    // be: a mount on `/` is not the process's root).
    points.retain(|p| !writable.iter().any(|w| p.starts_with(w)));
    let flagged = |p: &Path| Ok((c_path(p)?, super::linux::mount_flags(p)));
    Ok(Frozen {
        mounts: points
            .iter()
            .map(|p| flagged(p))
            .collect::<Result<_, Unavailable>>()?,
        writable: writable
            .iter()
            .filter(|w| w.exists() && !is_mount_point(w))
            .map(|w| flagged(w))
            .collect::<Result<_, Unavailable>>()?,
    })
}

/// Whether `path` is a mount point (its device differs from its parent's, or it is `/`).
fn is_mount_point(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(parent) = path.parent() else {
        return true;
    };
    match (path.metadata(), parent.metadata()) {
        (Ok(a), Ok(b)) => a.dev() != b.dev(),
        _ => false,
    }
}

/// In the child, in its own mount namespace: each mount read-only (`/` must be; another that
/// refuses stays as it was: Landlock still bounds writing into it), then the writable places
/// bound back writable.
///
/// # Safety
/// In the child between fork and exec: raw syscalls on values the parent prepared.
pub(super) unsafe fn apply(f: &Frozen) -> std::io::Result<()> {
    use nix::libc;
    let check = |r: libc::c_int| match r {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    };
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: raw syscalls on C strings prepared by the parent; nothing allocates.
    unsafe {
        for (path, kept) in &f.mounts {
            let r = libc::mount(
                null,
                path.as_ptr(),
                null,
                libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | *kept,
                std::ptr::null(),
            );
            if r != 0 && path.as_bytes() == b"/" {
                return Err(std::io::Error::last_os_error());
            }
        }
        for (path, kept) in &f.writable {
            check(libc::mount(
                path.as_ptr(),
                path.as_ptr(),
                null,
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ))?;
            // A place read-only on the host stays so (the kernel refuses to lift that).
            libc::mount(
                null,
                path.as_ptr(),
                null,
                libc::MS_BIND | libc::MS_REMOUNT | *kept,
                std::ptr::null(),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_are_unescaped() {
        assert_eq!(unescape(r"/a\040b\011c\134d"), PathBuf::from("/a b\tc\\d"));
        assert_eq!(unescape(r"/plain\0x"), PathBuf::from(r"/plain\0x"));
    }
}
