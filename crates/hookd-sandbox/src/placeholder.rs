//! Held places that are absent when a command starts (`.env`, `.mcp.json`, `.vscode`,
//! `.git/worktrees`, a `.git` where there is none, `core.hooksPath`'s directory): a confined
//! command must not create them, and a bind mount needs a place that exists. A socket inode
//! (`mknod`, nothing listens) is made in each one's stead and held read-only with the others:
//! nothing can be made there or below it, opening it fails (`ENXIO`), and git neither lists nor
//! adds it, nor takes it for a repository. `.git/commondir` gets a file naming `.` (git reads
//! it as the git directory itself; it cannot read a socket there), a file git's configuration
//! includes an empty file. Not an empty directory: making and removing one costs a disk block
//! (3.5 ms a pair on an ext4 with online discard; an inode costs 10 µs).
//!
//! The last confined command holding a placeholder removes it when it ends. Each holder keeps a
//! shared lock on a file named after the place in hookd's state (hidden from confined
//! commands); the one that gets the lock exclusive at its end removes the place when the lock
//! file records that hookd made it and it is still as made (a socket, the `.` file).
//! Removing it earlier would detach the mount in the namespaces of the commands still running,
//! leaving the name free to them. A hookd killed outright leaves its placeholders; the next
//! command that holds one removes it. The lock files stay while there are at most
//! [`MOST_LOCKS`] (the next command on the same places reuses them: making and removing twenty
//! files costs each command 0.4 ms); beyond, a command that ends removes every idle one (`sweep`:
//! locked exclusive, still the file at its path, recording no placeholder), so they do not grow
//! with every place ever held. A command waiting on a removed file finds it gone once it gets
//! its lock and opens the path again (`lock`).

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::libc;

use super::Unavailable;

/// What is made in an absent place's stead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stand {
    /// A socket inode.
    Socket,
    /// A file holding this text (`.git/commondir`: `.`; an included configuration file: nothing).
    File(&'static str),
}

/// What the lock file of a place hookd made says.
const MADE: &[u8] = b"made\n";

/// The most lock files kept before a command that ends removes the idle ones.
pub(super) const MOST_LOCKS: usize = 256;

/// The placeholders one command holds, with their locks: released, and the places removed where
/// this command is the last holder, when it is dropped.
#[derive(Debug, Default)]
pub(super) struct Placeholders {
    /// Where the lock files are (`None`: no placeholder can be made).
    dir: Option<PathBuf>,
    held: Vec<(PathBuf, Stand, File)>,
}

impl Placeholders {
    /// Placeholders whose lock files are in `dir` (made now, so that it is hidden with hookd's
    /// state).
    pub(super) fn new(dir: Option<PathBuf>) -> Placeholders {
        let dir = dir.filter(|d| std::fs::create_dir_all(d).is_ok());
        Placeholders {
            dir,
            held: Vec::new(),
        }
    }

    /// Make sure `path` exists to be held as a stand-in: made (and recorded) where it is
    /// absent, and locked where it is, or may be, one (another command's, or a leftover).
    /// `false`: it is a place of its own (or cannot be made here), not a stand-in.
    pub(super) fn provide(&mut self, path: &Path, stand: Stand) -> Result<bool, Unavailable> {
        if path.symlink_metadata().is_ok() && !as_made(path, stand) {
            return Ok(false);
        }
        let Some(dir) = self.dir.clone() else {
            return Err(Unavailable::Prepare(format!(
                "{} is absent and hookd has no state directory for the lock of the stand-in it holds there (set HOME or HOOKD_STATE_DIR)",
                path.display()
            )));
        };
        let mut lock = lock(&dir, path)?;
        if path.symlink_metadata().is_err() {
            match make(path, stand) {
                Ok(()) => {
                    lock.set_len(0)
                        .and_then(|()| lock.write_all(MADE))
                        .map_err(|e| {
                            Unavailable::Prepare(format!("the lock of {}: {e}", path.display()))
                        })?;
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                // A directory hookd may not write to (a read-only checkout, another user's):
                // the command, with the same user and no capability, cannot make it either.
                Err(e)
                    if matches!(
                        e.raw_os_error(),
                        Some(libc::EACCES | libc::EPERM | libc::EROFS)
                    ) =>
                {
                    return Ok(false)
                }
                Err(e) => {
                    return Err(Unavailable::Prepare(format!(
                        "{} is absent and could not be made to be held read-only: {e}",
                        path.display()
                    )))
                }
            }
        }
        self.held.push((path.to_path_buf(), stand, lock));
        Ok(true)
    }
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        for (path, stand, mut lock) in self.held.drain(..) {
            // SAFETY: flock on a descriptor this value owns.
            let last = unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
            if !last {
                continue;
            }
            let mut said = Vec::new();
            let _ = lock.rewind().and_then(|()| lock.read_to_end(&mut said));
            if said == MADE && as_made(&path, stand) && std::fs::remove_file(&path).is_ok() {
                let _ = lock.set_len(0);
            }
        }
        if let Some(dir) = &self.dir {
            sweep(dir);
        }
    }
}

/// Remove the idle lock files of `dir` when there are more than [`MOST_LOCKS`]: each one no
/// command holds (locked exclusive without waiting), still the file at its path (not one another
/// command removed and made again), and recording no placeholder (one a killed hookd left
/// stays, so that the next command removes its stand-in).
fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    if files.len() <= MOST_LOCKS {
        return;
    }
    for path in files {
        let Ok(mut f) = std::fs::OpenOptions::new().read(true).open(&path) else {
            continue;
        };
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            continue;
        }
        let same = match (f.metadata(), std::fs::symlink_metadata(&path)) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        };
        let mut said = Vec::new();
        let _ = f.read_to_end(&mut said);
        if same && said != MADE {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Whether `path` is as hookd makes a placeholder: a socket, or its file.
fn as_made(path: &Path, stand: Stand) -> bool {
    let Ok(meta) = path.symlink_metadata() else {
        return false;
    };
    match stand {
        Stand::Socket => {
            use std::os::unix::fs::FileTypeExt;
            meta.file_type().is_socket()
        }
        Stand::File(content) => {
            meta.is_file() && std::fs::read(path).is_ok_and(|b| b == content.as_bytes())
        }
    }
}

/// Make the placeholder of `path`.
fn make(path: &Path, stand: Stand) -> std::io::Result<()> {
    match stand {
        Stand::File(content) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)?;
            f.write_all(content.as_bytes())
        }
        Stand::Socket => {
            use nix::sys::stat::{mknod, Mode, SFlag};
            mknod(path, SFlag::S_IFSOCK, Mode::from_bits_truncate(0o600), 0)
                .map_err(std::io::Error::from)
        }
    }
}

/// The lock file of `place` in `dir`, locked shared: opened again when it was removed or
/// replaced between the open and the lock.
fn lock(dir: &Path, place: &Path) -> Result<File, Unavailable> {
    use std::os::unix::ffi::OsStrExt;
    // One place, one name, however it was spelled (`P/sub/../x/.git` is `P/x/.git`): its
    // directory resolved. Two names for one place let one command remove the stand-in another
    // still held (found in review: a `.git` was then made confined).
    let resolved = match (place.parent().map(std::fs::canonicalize), place.file_name()) {
        (Some(Ok(parent)), Some(name)) => parent.join(name),
        _ => place.to_path_buf(),
    };
    // FNV-1a: the same name for the same place in every hookd.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in resolved.as_os_str().as_bytes() {
        hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    let file = dir.join(format!("{hash:016x}.lock"));
    let err = |e: std::io::Error| {
        Unavailable::Prepare(format!(
            "the lock {} of {}: {e}",
            file.display(),
            place.display()
        ))
    };
    loop {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&file)
            .map_err(err)?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH) } != 0 {
            return Err(err(std::io::Error::last_os_error()));
        }
        let same = match (f.metadata(), std::fs::metadata(&file)) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        };
        if same {
            return Ok(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_place_has_one_lock_however_it_is_spelled() {
        use std::os::unix::fs::MetadataExt;
        let locks = tempfile::tempdir().unwrap();
        let p = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(p.path().join("sub")).unwrap();
        std::fs::create_dir_all(p.path().join("x")).unwrap();
        let a = lock(locks.path(), &p.path().join("sub/../x/.git")).unwrap();
        let b = lock(locks.path(), &p.path().join("x/.git")).unwrap();
        assert_eq!(a.metadata().unwrap().ino(), b.metadata().unwrap().ino());
    }
}
