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
//! The last confined command holding a directory's placeholders removes them when it ends.
//! Each directory holding some has a lock file in hookd's state (hidden from confined
//! commands), named after the directory, on which each holder keeps a shared lock and which
//! records each place hookd made there (before making it). The one that gets the lock
//! exclusive at its end removes the recorded places that are still as made (a socket, the `.`
//! file) and empties the record. Removing them earlier would detach the mount in the
//! namespaces of the commands still running, leaving the name free to them. A hookd killed
//! outright leaves its placeholders, recorded; the next command there that ends last removes
//! them. A directory's sockets are links to one lasting socket inode of that directory in
//! hookd's state (`HASH.sock` beside its lock file `HASH.lock`: hidden from confined commands
//! like it): a name costs a sixth of an inode on ext4 (24 made and removed: 0.07 against 0.4
//! ms), and on an ext4 without a journal a new inode is looked for past every one freed in the
//! last minute (a `mknod` 45 µs instead of 6 for a link after a few hundred commands). One per
//! directory, not one for all: a confined command can change a stand-in's mode and times
//! (the bind is not read-only), and a socket shared by every project would carry them to the
//! commands of another (attack round 12, F3); those of one directory may write it anyway.
//! Where the state is on another filesystem (or the link fails), a directory's first socket is
//! made (`mknod`) and its others are links to that one. The
//! lock files stay while there are at most [`MOST_LOCKS`] (the next command in the same
//! directories reuses them); beyond, a command that ends removes every idle one (`sweep`:
//! locked exclusive, still the file at its path, recording nothing), so they do not grow with
//! every directory ever held. A command waiting on a removed file finds it gone once it gets
//! its lock and opens the path again (`lock`).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
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

/// The texts a [`Stand::File`] may hold, as records name them.
const FILE_TEXTS: [&str; 2] = [".\n", ""];

/// The most lock files kept before a command that ends removes the idle ones.
pub(super) const MOST_LOCKS: usize = 256;

/// The placeholders one command holds, with their directories' locks: released, and the places
/// removed where this command is the last holder, when it is dropped.
#[derive(Debug, Default)]
pub(super) struct Placeholders {
    /// Where the lock files are (`None`: no placeholder can be made).
    dir: Option<PathBuf>,
    held: Vec<Held>,
}

/// The placeholders held in one directory.
#[derive(Debug)]
struct Held {
    /// The directory as the caller names it, and resolved.
    named: PathBuf,
    real: PathBuf,
    lock: File,
    /// A socket this command made there (a descriptor on it, not its name: what is linked is
    /// that inode, whatever the name has become).
    socket: Option<OwnedFd>,
    /// The names this command recorded there (before making them).
    recorded: Vec<OsString>,
    /// The name of its lock file and lasting socket in the lock files' directory.
    name: String,
    /// Its lasting socket (`None` inside: none could be had), looked for at the first socket
    /// this command makes there.
    lasting: Option<Option<OwnedFd>>,
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

    /// The lasting socket a directory's stand-ins are linked to, at `path`: made where absent,
    /// and made again where something else is there (only a socket of this user's is linked
    /// into a project: a file's contents would be shown there).
    fn lasting(path: &Path) -> Option<OwnedFd> {
        use nix::fcntl::{open, OFlag};
        use nix::sys::stat::{fstat, mknod, Mode, SFlag};
        let ours = |fd: &OwnedFd| {
            fstat(fd).is_ok_and(|st| {
                st.st_mode & libc::S_IFMT == libc::S_IFSOCK
                    && st.st_uid == nix::unistd::geteuid().as_raw()
            })
        };
        let flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        for _ in 0..2 {
            match open(path, flags, Mode::empty()) {
                Ok(fd) if ours(&fd) => return Some(fd),
                Ok(_) => {
                    let _ = std::fs::remove_file(path);
                }
                // A link (`O_NOFOLLOW` with `O_PATH` opens the link itself, so this is rare).
                Err(nix::errno::Errno::ELOOP) => {
                    let _ = std::fs::remove_file(path);
                }
                Err(_) => {}
            }
            match mknod(path, SFlag::S_IFSOCK, Mode::from_bits_truncate(0o600), 0) {
                Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
                Err(_) => return None,
            }
        }
        None
    }

    /// The descriptors of the directories' locks this command holds, in the order taken (the
    /// project's root first): pid 1 keeps them open, so that the locks last as long as the
    /// sandbox does, not only as long as the hookd that made it.
    pub(super) fn lock_fds(&self) -> Vec<std::os::fd::RawFd> {
        self.held.iter().map(|h| h.lock.as_raw_fd()).collect()
    }

    /// Make sure `path` exists to be held as a stand-in: made (and recorded) where it is
    /// absent, and its directory locked where it is, or may be, one (another command's, or a
    /// leftover). `false`: it is a place of its own (or cannot be made here), not a stand-in.
    #[cfg(test)]
    pub(super) fn provide(&mut self, path: &Path, stand: Stand) -> Result<bool, Unavailable> {
        let absent = path.symlink_metadata().is_err();
        Ok(self.provide_known(path, stand, absent)? != Provided::Not)
    }

    /// [`Placeholders::provide`], where the caller knows whether `path` is `absent` (its
    /// directory's listing): what it is now.
    pub(super) fn provide_known(
        &mut self,
        path: &Path,
        stand: Stand,
        absent: bool,
    ) -> Result<Provided, Unavailable> {
        // What the listing said may be gone: another command's stand-in, removed when that
        // command ended (it held the directory's lock alone). Taken for a place of its own, it
        // was held by nothing, and a command started meanwhile made `.envrc` at the root (23
        // of 150 runs of two commands at once). Absent now, it gets a stand-in.
        let there = if absent {
            Found::Absent
        } else {
            found(path, stand)
        };
        if there == Found::Own {
            return Ok(Provided::Not);
        }
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Ok(Provided::Not);
        };
        let Some(dir) = self.dir.clone() else {
            return Err(Unavailable::Prepare(format!(
                "{} is absent and hookd has no state directory for the lock of the stand-in it holds there (set HOME or HOOKD_STATE_DIR)",
                path.display()
            )));
        };
        let held = Self::held_in(&mut self.held, &dir, parent)?;
        // Under the lock nobody removes a stand-in here; one removed before it was taken is made
        // again.
        if there == Found::StandIn {
            match found(path, stand) {
                Found::StandIn => return Ok(Provided::There),
                Found::Own => return Ok(Provided::Not),
                Found::Absent => {}
            }
        }
        if !held.recorded.iter().any(|n| n == name) {
            let lock_err = |e: std::io::Error| {
                Unavailable::Prepare(format!("the lock of {}: {e}", path.display()))
            };
            (&held.lock)
                .write_all(&record(stand, name))
                .map_err(lock_err)?;
            held.recorded.push(name.to_os_string());
        }
        if stand == Stand::Socket && held.lasting.is_none() {
            held.lasting = Some(Self::lasting(&dir.join(format!("{}.sock", held.name))));
        }
        let lasting = held.lasting.as_ref().and_then(Option::as_ref);
        match make(path, stand, held.socket.as_ref().or(lasting)) {
            Ok(made) => {
                if held.socket.is_none() {
                    held.socket = made;
                }
                Ok(Provided::Made)
            }
            // Made meanwhile: another command's stand-in, held as it is found; anything else is
            // a place of its own (a file of the user's), held as the catalog says (read-only),
            // not as a stand-in (pinned only: its contents would stay writable).
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Ok(match found(path, stand) {
                    Found::StandIn => Provided::There,
                    _ => Provided::Not,
                })
            }
            // A directory hookd may not write to (a read-only checkout, another user's):
            // the command, with the same user and no capability, cannot make it either.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EACCES | libc::EPERM | libc::EROFS)
                ) =>
            {
                Ok(Provided::Not)
            }
            Err(e) => Err(Unavailable::Prepare(format!(
                "{} is absent and could not be made to be held read-only: {e}",
                path.display()
            ))),
        }
    }

    /// Record at once the places in `dir` that may be made next (absent now), before any is:
    /// one write to its lock instead of one a place. A record of a place that is not made is
    /// harmless (the end removes only what is still as made).
    pub(super) fn record_ahead(
        &mut self,
        dir: &Path,
        places: &[(Stand, &OsStr)],
    ) -> Result<(), Unavailable> {
        let Some(locks) = self.dir.clone() else {
            return Ok(()); // `provide_known` says why nothing can be made
        };
        if places.is_empty() {
            return Ok(());
        }
        let held = Self::held_in(&mut self.held, &locks, dir)?;
        let mut records = Vec::new();
        for (stand, name) in places {
            if !held.recorded.iter().any(|n| n == name) {
                records.extend(record(*stand, name));
                held.recorded.push(name.to_os_string());
            }
        }
        (&held.lock)
            .write_all(&records)
            .map_err(|e| Unavailable::Prepare(format!("the lock of {}: {e}", dir.display())))
    }

    /// The placeholders held in `dir` (named as the caller names it), its lock (in `locks`)
    /// taken the first time.
    fn held_in<'a>(
        held: &'a mut Vec<Held>,
        locks: &Path,
        dir: &Path,
    ) -> Result<&'a mut Held, Unavailable> {
        if let Some(i) = held.iter().position(|h| h.named == dir) {
            return Ok(&mut held[i]);
        }
        let real = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let name = lock_name(&real);
        let lock = lock(locks, &name, &real)?;
        let i = held.len();
        held.push(Held {
            named: dir.to_path_buf(),
            real,
            lock,
            socket: None,
            recorded: Vec::new(),
            name,
            lasting: None,
        });
        Ok(&mut held[i])
    }
}

/// What [`Placeholders::provide_known`] found or made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Provided {
    /// A place of its own (or none can be made here): not a stand-in.
    Not,
    /// A stand-in that was there (another command's, a leftover), or made meanwhile.
    There,
    /// Just made by this command.
    Made,
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        for mut held in self.held.drain(..) {
            // SAFETY: flock on a descriptor this value owns.
            let last =
                unsafe { libc::flock(held.lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
            if !last {
                continue;
            }
            let mut said = Vec::new();
            let _ = held
                .lock
                .rewind()
                .and_then(|()| held.lock.read_to_end(&mut said));
            for (stand, name) in records(&said) {
                let path = held.real.join(&name);
                if as_made(&path, stand) {
                    let _ = std::fs::remove_file(&path);
                }
            }
            let _ = held.lock.set_len(0);
        }
        if let Some(dir) = &self.dir {
            sweep(dir);
        }
    }
}

/// The record of a place made: `s NAME` or `f TEXT NAME` (each hex), a line.
fn record(stand: Stand, name: &OsStr) -> Vec<u8> {
    let hex = |b: &[u8]| b.iter().map(|c| format!("{c:02x}")).collect::<String>();
    let line = match stand {
        Stand::Socket => format!("s {}\n", hex(name.as_bytes())),
        Stand::File(text) => format!("f {} {}\n", hex(text.as_bytes()), hex(name.as_bytes())),
    };
    line.into_bytes()
}

/// The places a lock file records (lines it cannot read are skipped).
fn records(said: &[u8]) -> Vec<(Stand, OsString)> {
    let unhex = |s: &str| -> Option<Vec<u8>> {
        s.len()
            .is_multiple_of(2)
            .then(|| (0..s.len()).step_by(2))?
            .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
            .collect()
    };
    let name =
        |s: &str| unhex(s).filter(|n| !matches!(&n[..], b"" | b"." | b"..") && !n.contains(&b'/'));
    let text = String::from_utf8_lossy(said);
    text.lines()
        .filter_map(|line| {
            let mut f = line.split(' ');
            let stand = match (f.next()?, f.next()?, f.next()) {
                ("s", n, None) => (Stand::Socket, name(n)?),
                ("f", t, Some(n)) => {
                    let t = unhex(t)?;
                    let text = FILE_TEXTS.iter().find(|x| x.as_bytes() == t)?;
                    (Stand::File(text), name(n)?)
                }
                _ => return None,
            };
            Some((
                stand.0,
                OsString::from(std::ffi::OsStr::from_bytes(&stand.1)),
            ))
        })
        .collect()
}

/// Remove the idle lock files of `dir` when there are more than [`MOST_LOCKS`]: each one no
/// command holds (locked exclusive without waiting), still the file at its path (not one another
/// command removed and made again), and recording no placeholder (one a killed hookd left
/// stays, so that the next command removes its stand-ins). A lock file of an earlier hookd
/// (one per place, `made`) is idle too.
fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let files: Vec<PathBuf> = (entries.flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_none_or(|x| x != "sock"))
        .collect();
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
        if same && (said.is_empty() || said == b"made\n") {
            let _ = std::fs::remove_file(&path);
            // Its lasting socket, linked nowhere now (none is recorded), with it.
            let _ = std::fs::remove_file(path.with_extension("sock"));
        }
    }
}

/// Whether `path` is as hookd makes a placeholder: a socket, or its file.
fn as_made(path: &Path, stand: Stand) -> bool {
    found(path, stand) == Found::StandIn
}

/// What is at a place that is to be, or may be, a stand-in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Found {
    Absent,
    /// As hookd makes a stand-in (a socket, or its file): this command's, another's, or one a
    /// killed hookd left.
    StandIn,
    /// A place of its own.
    Own,
}

/// What is at `path` now, not following a last link (one `lstat`; a file's text read where
/// the stand-in is a file).
fn found(path: &Path, stand: Stand) -> Found {
    let Ok(meta) = path.symlink_metadata() else {
        return Found::Absent;
    };
    let made = match stand {
        Stand::Socket => {
            use std::os::unix::fs::FileTypeExt;
            meta.file_type().is_socket()
        }
        Stand::File(content) => {
            meta.is_file()
                && crate::disk::read_plain(path, 64).is_some_and(|b| b == content.as_bytes())
        }
    };
    if made {
        Found::StandIn
    } else {
        Found::Own
    }
}

/// Make the placeholder of `path`: a socket a link to `socket` where there is one (the
/// lasting one, or one this command made in the same directory) and the link can be made, else
/// a new one, and then a descriptor on it.
fn make(path: &Path, stand: Stand, socket: Option<&OwnedFd>) -> std::io::Result<Option<OwnedFd>> {
    match stand {
        Stand::File(content) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)?;
            f.write_all(content.as_bytes())?;
            Ok(None)
        }
        Stand::Socket => {
            if let Some(fd) = socket {
                let from = format!("/proc/self/fd/{}", fd.as_raw_fd());
                let linked = nix::unistd::linkat(
                    nix::fcntl::AT_FDCWD,
                    from.as_str(),
                    nix::fcntl::AT_FDCWD,
                    path,
                    nix::fcntl::AtFlags::AT_SYMLINK_FOLLOW,
                );
                match linked {
                    Ok(()) => return Ok(None),
                    Err(nix::errno::Errno::EEXIST) => {
                        return Err(std::io::ErrorKind::AlreadyExists.into())
                    }
                    // No /proc, too many links: a socket of its own.
                    Err(_) => {}
                }
            }
            use nix::sys::stat::{mknod, Mode, SFlag};
            mknod(path, SFlag::S_IFSOCK, Mode::from_bits_truncate(0o600), 0)
                .map_err(std::io::Error::from)?;
            // O_PATH: a socket cannot be opened otherwise; checked to be the socket just made.
            let fd = nix::fcntl::open(
                path,
                nix::fcntl::OFlag::O_PATH
                    | nix::fcntl::OFlag::O_NOFOLLOW
                    | nix::fcntl::OFlag::O_CLOEXEC,
                Mode::empty(),
            )
            .ok();
            Ok(fd.filter(|fd| {
                use std::os::unix::fs::FileTypeExt;
                nix::sys::stat::fstat(fd)
                    .is_ok_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFSOCK)
                    && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_socket())
            }))
        }
    }
}

/// The name of the lock file and the lasting socket of the directory `real` (resolved): FNV-1a,
/// the same for the same directory in every hookd.
fn lock_name(real: &Path) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in real.as_os_str().as_bytes().iter().chain(b"/") {
        hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The lock file `name.lock` of the directory `real` (resolved) in `dir`, locked shared: opened again when
/// it was removed or replaced between the open and the lock.
fn lock(dir: &Path, name: &str, real: &Path) -> Result<File, Unavailable> {
    let file = dir.join(format!("{name}.lock"));
    let err = |e: std::io::Error| {
        Unavailable::Prepare(format!(
            "the lock {} of the stand-ins in {}: {e}",
            file.display(),
            real.display()
        ))
    };
    loop {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
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

    fn ino(p: &Path) -> (u64, u64) {
        let m = p.symlink_metadata().unwrap();
        (m.dev(), m.ino())
    }

    #[test]
    fn one_directory_has_one_lock_however_it_is_spelled_and_the_last_holder_removes() {
        let locks = tempfile::tempdir().unwrap();
        let p = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(p.path().join("sub")).unwrap();
        std::fs::create_dir_all(p.path().join("x")).unwrap();
        let mut a = Placeholders::new(Some(locks.path().to_path_buf()));
        let mut b = Placeholders::new(Some(locks.path().to_path_buf()));
        assert!(a
            .provide(&p.path().join("sub/../x/.env"), Stand::Socket)
            .unwrap());
        assert!(b.provide(&p.path().join("x/.env"), Stand::Socket).unwrap());
        assert_eq!(
            a.held[0].lock.metadata().unwrap().ino(),
            b.held[0].lock.metadata().unwrap().ino()
        );
        drop(a);
        assert!(
            p.path().join("x/.env").symlink_metadata().is_ok(),
            "removed under a holder"
        );
        drop(b);
        assert!(
            p.path().join("x/.env").symlink_metadata().is_err(),
            "left behind"
        );
    }

    #[test]
    fn the_sockets_of_a_directory_are_one_inode_and_a_users_file_is_never_removed() {
        let locks = tempfile::tempdir().unwrap();
        let p = tempfile::tempdir().unwrap();
        let mut a = Placeholders::new(Some(locks.path().to_path_buf()));
        for name in [".env", ".envrc", ".mcp.json"] {
            assert!(a.provide(&p.path().join(name), Stand::Socket).unwrap());
        }
        assert!(a
            .provide(&p.path().join("commondir"), Stand::File(".\n"))
            .unwrap());
        assert_eq!(
            ino(&p.path().join(".env")),
            ino(&p.path().join(".mcp.json"))
        );
        assert_eq!(std::fs::read(p.path().join("commondir")).unwrap(), b".\n");
        // A place of its own is not a stand-in.
        std::fs::write(p.path().join("own"), "x").unwrap();
        assert!(!a.provide(&p.path().join("own"), Stand::Socket).unwrap());
        // Replaced meanwhile by a file of the user's: kept.
        std::fs::remove_file(p.path().join(".envrc")).unwrap();
        std::fs::write(p.path().join(".envrc"), "mine").unwrap();
        drop(a);
        let left: Vec<String> = std::fs::read_dir(p.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let mut left = left;
        left.sort();
        assert_eq!(left, [".envrc", "own"]);
    }

    #[test]
    fn a_directorys_sockets_are_its_lasting_one_which_outlives_them() {
        let locks = tempfile::tempdir().unwrap();
        let p = tempfile::tempdir().unwrap();
        std::fs::create_dir(p.path().join("sub")).unwrap();
        let lasting = |dir: &Path| {
            let real = dir.canonicalize().unwrap();
            locks.path().join(format!("{}.sock", lock_name(&real)))
        };
        // Something else where the root's lasting socket goes: a file of the user's is not
        // shown in a project, it is replaced.
        std::fs::write(lasting(p.path()), "secret").unwrap();
        let mut a = Placeholders::new(Some(locks.path().to_path_buf()));
        assert!(a.provide(&p.path().join(".env"), Stand::Socket).unwrap());
        assert!(a.provide(&p.path().join(".envrc"), Stand::Socket).unwrap());
        assert!(a
            .provide(&p.path().join("sub/.env"), Stand::Socket)
            .unwrap());
        assert_eq!(ino(&p.path().join(".env")), ino(&lasting(p.path())));
        assert_eq!(ino(&p.path().join(".envrc")), ino(&lasting(p.path())));
        // Another directory's are another inode: nothing a command does to one reaches the
        // commands of another (attack round 12, F3).
        assert_eq!(
            ino(&p.path().join("sub/.env")),
            ino(&lasting(&p.path().join("sub")))
        );
        assert_ne!(ino(&p.path().join(".env")), ino(&p.path().join("sub/.env")));
        drop(a);
        assert!(p.path().join(".env").symlink_metadata().is_err());
        assert!(p.path().join("sub/.env").symlink_metadata().is_err());
        use std::os::unix::fs::FileTypeExt;
        let meta = lasting(p.path()).symlink_metadata().unwrap();
        assert!(meta.file_type().is_socket());
        assert_eq!(meta.nlink(), 1);
        // The next command in the directory links the same one.
        let mut b = Placeholders::new(Some(locks.path().to_path_buf()));
        assert!(b
            .provide(&p.path().join(".mcp.json"), Stand::Socket)
            .unwrap());
        assert_eq!(ino(&p.path().join(".mcp.json")), ino(&lasting(p.path())));
    }

    #[test]
    fn a_stand_in_removed_after_its_directory_was_listed_is_made_again() {
        let locks = tempfile::tempdir().unwrap();
        let p = tempfile::tempdir().unwrap();
        let envrc = p.path().join(".envrc");
        // Another command's stand-in, seen by this one's listing, removed at that command's end.
        let mut other = Placeholders::new(Some(locks.path().to_path_buf()));
        assert!(other.provide(&envrc, Stand::Socket).unwrap());
        drop(other);
        assert!(envrc.symlink_metadata().is_err());
        let mut a = Placeholders::new(Some(locks.path().to_path_buf()));
        assert_eq!(
            a.provide_known(&envrc, Stand::Socket, false).unwrap(),
            Provided::Made
        );
        use std::os::unix::fs::FileTypeExt;
        assert!(envrc.symlink_metadata().unwrap().file_type().is_socket());
        // Its own file, listed, is a place of its own; a stand-in there is held as it is.
        std::fs::write(p.path().join(".env"), "x").unwrap();
        let env = p.path().join(".env");
        assert_eq!(
            a.provide_known(&env, Stand::Socket, false).unwrap(),
            Provided::Not
        );
        assert_eq!(
            a.provide_known(&envrc, Stand::Socket, false).unwrap(),
            Provided::There
        );
        // Listed absent, made meanwhile by the user: a place of its own, not a stand-in.
        let mcp = p.path().join(".mcp.json");
        std::fs::write(&mcp, "{}").unwrap();
        assert_eq!(
            a.provide_known(&mcp, Stand::Socket, true).unwrap(),
            Provided::Not
        );
        drop(a);
        assert!(envrc.symlink_metadata().is_err(), "left behind");
        assert_eq!(std::fs::read(&env).unwrap(), b"x");
        assert_eq!(std::fs::read(&mcp).unwrap(), b"{}");
    }

    #[test]
    fn records_read_back_and_forged_ones_name_nothing_outside() {
        let mut said = record(Stand::Socket, OsStr::new(".env"));
        said.extend(record(Stand::File(""), OsStr::new("inc")));
        said.extend(b"s 2e2e2f78\ns 2e2e\nf 41 6161\ngarbage\n");
        let got = records(&said);
        assert_eq!(
            got,
            [
                (Stand::Socket, OsString::from(".env")),
                (Stand::File(""), OsString::from("inc"))
            ]
        );
    }
}
