//! What a confined command's end must look at, kept in hookd's state while the command runs
//! (`STATE/unsettled`, hidden from confined commands): the protected places below the project
//! as they were at the start ([`crate::below::Below`]). Its end moves aside what the command made
//! there and removes the record. A hookd killed outright (an agent's or CI's SIGKILL, the OOM
//! killer) never reaches its end: its record stays, and the next confined command's
//! preparation settles it first, once nothing of that sandbox is left.
//!
//! Nothing of it is left when the record's lock is free: the process that prepared the command
//! and the sandbox's pid 1 hold it (one open file, pid 1 keeps it open as it keeps the
//! stand-ins' locks, and closes it only once it has killed and reaped its namespace), and the
//! settling takes it without waiting. A new record is written under a temporary name, locked,
//! then renamed into place, so that none is ever seen unlocked before its command has ended.
//!
//! A record is emptied, not removed, at its command's end, and the next command here takes
//! it again while its lock is free (an empty record settles nothing): no file is made and
//! removed at every command (on an ext4 without a journal a new inode is looked for past every
//! one freed in the last minute, tens of microseconds after a few hundred commands). The next
//! preparation keeps one idle record and removes the others (left by commands run at once).

use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::below::Below;

/// The prefix of a record being written: never settled.
pub(crate) const WRITING: &str = ".writing-";

/// This command's record, locked shared for as long as it runs; removed when dropped (its end
/// has moved aside what it made, or it never started).
#[derive(Debug)]
pub(crate) struct Pending {
    path: PathBuf,
    file: std::fs::File,
}

impl Pending {
    /// Record `below` in `dir` (made where absent, this user's alone), in `idle` where
    /// [`orphans`] found one. `None` where it cannot be written (no state, a full disk): the
    /// command runs, and a kill then leaves what it made unsettled as before.
    pub(crate) fn record(dir: &Path, below: &Below, idle: Option<Idle>) -> Option<Pending> {
        use std::io::Write;
        use std::os::unix::fs::FileExt;
        if let Some(Idle { path, file }) = idle {
            // Empty, and locked by this preparation since it was found so.
            let written = file.write_all_at(&below.to_bytes(), 0).is_ok()
                && file.set_modified(std::time::UNIX_EPOCH).is_ok();
            if written {
                return Some(Pending { path, file });
            }
            let _ = std::fs::remove_file(&path);
            return None;
        }
        crate::walk_memory::own_dir(dir);
        let mut tmp = tempfile::Builder::new()
            .prefix(WRITING)
            .tempfile_in(dir)
            .ok()?;
        tmp.write_all(&below.to_bytes()).ok()?;
        // Not stamped yet (the epoch): pid 1 stamps it with the moment its sandbox ended when
        // hookd is killed (`spawn::orphaned`).
        tmp.as_file().set_modified(std::time::UNIX_EPOCH).ok()?;
        lock(tmp.as_file().as_raw_fd(), nix::libc::LOCK_EX).then_some(())?;
        let path = dir.join(format!(
            "{}-{}",
            std::process::id(),
            tmp.path()
                .file_name()?
                .to_string_lossy()
                .trim_start_matches(WRITING)
        ));
        let file = tmp.persist(&path).ok()?;
        Some(Pending { path, file })
    }

    /// The lock's descriptor, for pid 1 to keep open.
    pub(crate) fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

impl Drop for Pending {
    /// Emptied for the next command here (removed where it cannot be).
    fn drop(&mut self) {
        if self.file.set_len(0).is_err() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// An empty record no command holds, locked by this preparation, for [`Pending::record`].
#[derive(Debug)]
pub(crate) struct Idle {
    path: PathBuf,
    file: std::fs::File,
}

/// What one record in the directory is, to the preparation that looks at it.
enum Found {
    /// Held: its command runs (or another preparation looks at it).
    Held,
    /// Held by a command that runs, which started then (its walks' start).
    Running(std::time::SystemTime),
    Idle(Idle),
    /// Its command ended without its end: what the end would have found.
    Settled(crate::below::Again),
}

/// What [`orphans`] found in the records' directory.
#[derive(Default)]
pub(crate) struct Orphans {
    /// What the ends of commands whose hookd was killed found, for the caller to move aside
    /// and say.
    pub(crate) settled: Vec<crate::below::Again>,
    /// One empty record for this command's.
    pub(crate) idle: Option<Idle>,
    /// The earliest start of the confined commands running now (their records held):
    /// [`Below::watch_changed_after`].
    pub(crate) running_since: Option<std::time::SystemTime>,
}

/// Settle the records in `dir` whose commands ended without their end: each one whose lock is
/// free (nothing of its sandbox is left), still linked, of this user's and read back whole, is
/// walked again as its end would have ([`Below::again`]) and removed, or moved to `deferred`
/// where its tree was too large for that walk (`deferred.rs`). What was found, one empty
/// record for this command's (the other empty ones are removed), and when the commands still
/// running started.
pub(crate) fn orphans(dir: &Path, deferred: Option<&Path>) -> Orphans {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Orphans::default();
    };
    let mut found = Orphans::default();
    let (out, kept) = (&mut found.settled, &mut found.idle);
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with(WRITING) {
            continue;
        }
        match settle(&entry.path(), deferred) {
            Found::Held => {}
            Found::Running(at) => {
                let since = found.running_since.get_or_insert(at);
                *since = (*since).min(at);
            }
            Found::Settled(again) => out.push(again),
            Found::Idle(idle) if kept.is_none() => *kept = Some(idle),
            Found::Idle(idle) => {
                let _ = std::fs::remove_file(&idle.path);
            }
        }
    }
    found
}

/// One record at `path` settled, if its command has ended.
fn settle(path: &Path, deferred: Option<&Path>) -> Found {
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(path)
    else {
        return Found::Held; // removed meanwhile, or not a file of ours: nothing to do
    };
    if !lock(file.as_raw_fd(), nix::libc::LOCK_EX | nix::libc::LOCK_NB) {
        // Its command runs (or another preparation settles it): when it started, where its
        // record says (an empty one, being written again, says nothing).
        let started = (crate::walk_memory::read_own(path))
            .and_then(|b| Below::from_bytes(&b))
            .and_then(|b| b.started);
        return started.map_or(Found::Held, Found::Running);
    }
    // Removed by another settling since it was listed: nothing to do.
    let Ok(meta) = file.metadata() else {
        return Found::Held;
    };
    if meta.nlink() == 0 {
        return Found::Held;
    }
    if meta.len() == 0 && meta.is_file() && meta.uid() == nix::unistd::geteuid().as_raw() {
        let path = path.to_path_buf();
        return Found::Idle(Idle { path, file });
    }
    let Some(mut below) = crate::walk_memory::read_own(path).and_then(|b| Below::from_bytes(&b))
    else {
        // Not a record of ours, or cut short by a full disk: nothing to settle by.
        let _ = std::fs::remove_file(path);
        return Found::Held;
    };
    // Stamped by pid 1 when the sandbox ended: what was made or changed below after then is
    // not the command's (the user's own work since, a clone made again in its place: attack
    // round 10). Not stamped (pid 1 killed outright): all of it is taken as the command's.
    below.ended = meta.modified().ok().filter(|m| *m > std::time::UNIX_EPOCH);
    let again = below.again();
    // A tree too large for the second walk: the rest is judged by this preparation's walk,
    // as a live end's would be (`deferred.rs`).
    let kept = !below.looks_below() && deferred.is_some_and(|d| crate::deferred::take(path, d));
    if !kept {
        let _ = std::fs::remove_file(path);
    }
    Found::Settled(again)
}

/// `flock(fd, how)`, retried when interrupted: whether it was taken.
fn lock(fd: RawFd, how: nix::libc::c_int) -> bool {
    loop {
        // SAFETY: flock on a descriptor the caller owns.
        if unsafe { nix::libc::flock(fd, how) } == 0 {
            return true;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(nix::libc::EINTR) {
            return false;
        }
    }
}
