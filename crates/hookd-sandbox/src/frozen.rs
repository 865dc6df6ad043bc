//! The rest of the filesystem, read-only in the command's mount namespace: Landlock bounds
//! writing a file's contents, not its metadata (`chmod`, `chown`, `utimensat`, `setxattr`), so
//! a confined command could make the user's files world-writable or setuid, or change hookd's
//! own configuration's mode. Every mount the command inherits is remounted read-only (as
//! bubblewrap's `--ro-bind / /` does for Codex), then each writable place is bound back onto
//! itself writable (with what is mounted inside it: the held places keep their read-only binds).
//! Planned in the parent; applied by the child before the other mounts.

use std::ffi::CString;
use std::path::PathBuf;

use super::{c_path, Unavailable};

/// What stays writable: each writable place that is not a mount point of its own, bound back
/// onto itself, and the mounts at or below a writable place (a tmpfs on the project's
/// `node_modules`, `/tmp`), made writable again where the host has them so.
#[derive(Debug, Default)]
pub(super) struct Frozen {
    /// Writable places bound back onto themselves.
    writable: Vec<CString>,
    /// Mount points at or below a writable place (the bound-back places among them).
    kept: Vec<CString>,
    /// Every other mount point, outermost first: each made read-only on its own where the
    /// recursive change is refused (one mount refusing fails it whole).
    each: Vec<CString>,
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

/// `/proc/self/mountinfo`, read in large pieces: the kernel writes it afresh for each read,
/// and `read_to_string` starts small (the file says it is empty), doubling eight times.
fn mountinfo() -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::with_capacity(64 * 1024);
    std::fs::File::open("/proc/self/mountinfo")?.read_to_string(&mut text)?;
    Ok(text)
}

/// Plan it for a command that may write `writable` (resolved).
pub(super) fn plan(writable: &[PathBuf]) -> Result<Frozen, Unavailable> {
    let info =
        mountinfo().map_err(|e| Unavailable::Prepare(format!("/proc/self/mountinfo: {e}")))?;
    let mut points: Vec<PathBuf> = info
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(unescape)
        .collect();
    points.sort();
    points.dedup();
    // A mount at or below a writable place stays as it is (`write: ['/']` leaves everything).
    let (mut points, each): (Vec<PathBuf>, Vec<PathBuf>) =
        (points.into_iter()).partition(|p| writable.iter().any(|w| p.starts_with(w)));
    // A writable place that is itself a mount point needs no binding back (and `/` could not
    // be: a mount on `/` is not the process's root).
    let bound: Vec<&PathBuf> = (writable.iter())
        .filter(|w| w.exists() && !points.contains(w))
        .collect();
    points.extend(bound.iter().map(|w| w.to_path_buf()));
    points.sort();
    points.dedup();
    Ok(Frozen {
        writable: bound.iter().map(|w| c_path(w)).collect::<Result<_, _>>()?,
        kept: points.iter().map(|p| c_path(p)).collect::<Result<_, _>>()?,
        each: each.iter().map(|p| c_path(p)).collect::<Result<_, _>>()?,
    })
}

/// In the child, in its own mount namespace, before any other mount: every mount read-only at
/// once (`mount_setattr` on `/`, recursively; the flags each has are kept; one by one where
/// that is refused), then the writable
/// places bound back and, with the mounts below them, made writable again (where the host has
/// a mount read-only the kernel keeps it so).
///
/// # Safety
/// In the child between fork and exec: raw syscalls on values the parent prepared.
#[cfg(feature = "confine")]
pub(super) unsafe fn apply(f: &Frozen) -> std::io::Result<()> {
    use super::linux::{bind_onto_itself, check, read_only};
    // SAFETY: raw syscalls on C strings prepared by the parent; nothing allocates.
    unsafe {
        if read_only(c"/", true, true) != 0 {
            // `/` must be read-only; another mount that refuses stays as it was (Landlock
            // still bounds writing into it).
            check(read_only(c"/", true, false))?;
            for path in &f.each {
                read_only(path, true, false);
            }
        }
        for path in &f.writable {
            bind_onto_itself(path)?;
        }
        for path in &f.kept {
            read_only(path, false, false);
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
