//! What the last walk of a root read, kept between commands in hookd's state (hidden from
//! confined commands): a directory whose inode and change time are as they were when it was
//! read is not read again; only its `lstat` is made instead of an open and two `getdents` (a
//! remembered walk takes about half the time: docs/benchmarks.md, "The walk, remembered").
//!
//! Why that is enough: adding, removing or renaming a name in a directory sets its change
//! time to the current time, and nothing, `utimes` included, sets it to anything else; a
//! directory moved or replaced is another inode, or has a new change time too (a rename sets
//! the moved one's). So a directory with the same device, inode and change time lists the same
//! names. Two limits, each failing towards reading the directory again:
//! - **Racy stamps.** The kernel stamps with a clock that ticks every few milliseconds, so a
//!   change made within a tick of the read could leave the change time as it was read. A
//!   directory changed less than [`MARGIN_NS`] before the walk started is trusted by no later
//!   walk until it is read again when older (git's "racy index" rule, with a margin of
//!   seconds), and is not kept.
//! - **Filesystems.** Only local filesystems that keep change times and inode numbers as above
//!   (ext2/3/4, XFS, Btrfs, tmpfs, F2FS, ZFS, ramfs), and only the root's own device; a
//!   directory on any other (a FUSE, network or overlay mount inside the project) is read at
//!   every walk.
//!
//! A memory that cannot be read whole and exactly (another version's, cut short, corrupted), or
//! that is not a plain file of the user's own that nobody else may write, is no memory: the
//! walk reads everything and writes a new one. It is written by whoever walks last (a temporary
//! file renamed over it), at most [`MOST_KEPT`] of them; what it holds is only ever a reason to
//! read less, for a directory whose stamp still matches.

use foldhash::{HashMap, HashMapExt};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// How long before the walk's start a directory must have last changed for its reading to be
/// trusted by the next walks (the kernel's timestamps tick every 1 to 10 ms).
pub(crate) const MARGIN_NS: i128 = 2_000_000_000;

/// Filesystems whose directories' change times and inode numbers mean what the module's header
/// says (`statfs`'s `f_type`).
const TRUSTED_FS: [i64; 7] = [
    0xEF53,     // ext2, ext3, ext4
    0x58465342, // XFS
    0x9123683E, // Btrfs
    0x01021994, // tmpfs
    0xF2F52010, // F2FS
    0x2FC12FC1, // ZFS
    0x858458F6, // ramfs
];

/// The format's name and version, first in the file and in its key (so that two versions of
/// hookd in turn each keep their own instead of reading each other's as none).
const MAGIC: &[u8] = b"hookd walk memory 3\n";

/// A directory as a walk read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Seen {
    pub(crate) stamp: Stamp,
    /// Its entries, counted ([`crate::walk::MOST_ENTRIES`]).
    pub(crate) entries: u32,
    /// Whether it holds one of the walk's names.
    pub(crate) holds: bool,
    /// Whether it holds a symbolic link the walk enters: every walk lists it again, to look
    /// where its links lead now.
    pub(crate) links: bool,
    /// Whether its subdirectories were taken (it was read above the walk's last level), and
    /// which: the names of the directories the walk enters, each ended by a NUL byte (one
    /// allocation however many there are).
    pub(crate) entered: bool,
    pub(crate) subdirs: Vec<u8>,
    /// Whether it had not changed for [`MARGIN_NS`] when the walk that read it started, on a
    /// trusted filesystem: only then may a later walk take it as it is.
    pub(crate) trusted: bool,
}

/// Device, inode, change time (seconds, nanoseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) ctime: (i64, u32),
}

impl Seen {
    /// The names of [`Seen::subdirs`].
    pub(crate) fn subdirs(&self) -> impl Iterator<Item = &[u8]> {
        self.subdirs.split(|b| *b == 0).filter(|n| !n.is_empty())
    }
}

impl Stamp {
    pub(crate) fn of(st: &rustix::fs::Stat) -> Stamp {
        Stamp {
            dev: st.st_dev,
            ino: st.st_ino,
            ctime: (st.st_ctime, st.st_ctime_nsec as u32),
        }
    }

    fn ns(&self) -> i128 {
        i128::from(self.ctime.0) * 1_000_000_000 + i128::from(self.ctime.1)
    }
}

/// `root` opened (never through a link), with its device, where its filesystem is one whose
/// directories a walk may remember.
fn trusted_root(root: &Path) -> Option<(std::os::fd::OwnedFd, u64)> {
    use rustix::fs::{Mode, OFlags, CWD};
    // `f_type`'s type is the platform's (i64 here, u32 or i32 elsewhere).
    #[allow(clippy::unnecessary_cast)]
    let trusted = |s: &rustix::fs::StatFs| TRUSTED_FS.contains(&(s.f_type as i64));
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(CWD, root, flags, Mode::empty()).ok()?;
    rustix::fs::fstatfs(&fd).ok().filter(trusted)?;
    let dev = rustix::fs::fstat(&fd).ok()?.st_dev;
    Some((fd, dev))
}

/// Whether a walk of `root` can be remembered (its filesystem is trusted).
#[cfg(test)]
pub(crate) fn remembers(root: &Path) -> bool {
    trusted_root(root).is_some()
}

/// The memory of one root's walk with one set of names and bounds, loaded at its start.
#[derive(Debug)]
pub(crate) struct Memory {
    file: PathBuf,
    key: Vec<u8>,
    /// What the last walk read, by the directory's path.
    last: HashMap<Vec<u8>, Seen>,
    /// When this walk started (nanoseconds since the epoch, the kernel's real-time clock).
    started: i128,
    /// The root's device, when its filesystem is trusted.
    trusted_dev: Option<u64>,
    /// The root as named, and a descriptor of it: the directories below are `lstat`ed relative
    /// to it (a shorter path walk: about 0.3 µs a directory less here, docs/benchmarks.md).
    root: PathBuf,
    root_fd: Option<std::os::fd::OwnedFd>,
}

impl Memory {
    /// The memory in `dir` of walking `root` for `names` within `bounds` (none yet, or none
    /// readable: empty).
    pub(crate) fn load(dir: &Path, root: &Path, names: &[&str], key_rest: &[u8]) -> Memory {
        let mut key = MAGIC.to_vec();
        key.extend_from_slice(root.as_os_str().as_bytes());
        for n in names {
            key.push(0);
            key.extend_from_slice(n.as_bytes());
        }
        key.push(0);
        key.extend_from_slice(key_rest);
        let file = dir.join(format!("{:016x}", fnv1a(&key)));
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        let (root_fd, trusted_dev) = trusted_root(root).unzip();
        let last = match trusted_dev.and_then(|_| read_own(&file)) {
            Some(bytes) => parse(&bytes, &key).unwrap_or_default(),
            None => HashMap::new(),
        };
        Memory {
            file,
            key,
            last,
            started,
            trusted_dev,
            root: root.to_path_buf(),
            root_fd,
        }
    }

    /// `dir`'s stamp now, never through a link at `dir` itself: relative to the root's
    /// descriptor where `dir` lies below the root as named.
    pub(crate) fn stamp(&self, dir: &Path) -> Option<Stamp> {
        use rustix::fs::AtFlags;
        let (path, root) = (dir.as_os_str().as_bytes(), self.root.as_os_str().as_bytes());
        let below = path
            .strip_prefix(root)
            .and_then(|rest| rest.strip_prefix(b"/"))
            .filter(|rest| !rest.is_empty());
        let st = match (&self.root_fd, below) {
            (Some(fd), Some(rest)) => {
                let rest = std::ffi::OsStr::from_bytes(rest);
                rustix::fs::statat(fd, rest, AtFlags::SYMLINK_NOFOLLOW)
            }
            _ => rustix::fs::lstat(dir),
        };
        st.ok().map(|st| Stamp::of(&st))
    }

    /// What the last walk read of `dir`, where its stamp now is `now` and that reading can be
    /// trusted, read as this walk reads it (`entered`).
    pub(crate) fn recall(&self, dir: &Path, now: &Stamp, entered: bool) -> Option<&Seen> {
        let seen = self.last.get(dir.as_os_str().as_bytes())?;
        (seen.trusted && seen.stamp == *now && seen.entered == entered).then_some(seen)
    }

    /// Whether a directory read now with stamp `stamp` may be trusted by a later walk.
    pub(crate) fn trusts(&self, stamp: &Stamp) -> bool {
        self.trusted_dev == Some(stamp.dev) && stamp.ns() < self.started - MARGIN_NS
    }

    /// Whether this memory can hold anything (the root's filesystem is trusted).
    pub(crate) fn in_use(&self) -> bool {
        self.trusted_dev.is_some()
    }

    /// Keep what this walk saw of the directories it may trust later (of `seen`, every
    /// directory it visited, read or recalled) as the memory for the next walk, unless that is
    /// what was loaded: a directory changed lately (the project's root, where every command's
    /// stand-ins come and go) is read again anyway, and is not kept. Failing to write only
    /// costs the next walk.
    pub(crate) fn keep(&self, seen: &[(PathBuf, Option<Seen>)]) {
        if !self.in_use() {
            return;
        }
        // `None`: recalled, as the memory has it (trusted, or it would not have been).
        let recalled = seen.iter().filter(|(_, s)| s.is_none()).count();
        let fresh = seen.iter().filter_map(|(p, s)| Some((p, s.as_ref()?)));
        let mut unchanged = true;
        let mut kept = recalled;
        for (p, s) in fresh.filter(|(_, s)| s.trusted) {
            kept += 1;
            unchanged &= self.last.get(p.as_os_str().as_bytes()) == Some(s);
        }
        if unchanged && kept == self.last.len() {
            return;
        }
        let seen = (seen.iter()).filter_map(|(p, s)| match s {
            Some(s) => s.trusted.then_some((p, s)),
            None => self.last.get(p.as_os_str().as_bytes()).map(|s| (p, s)),
        });
        let seen: Vec<(&PathBuf, &Seen)> = seen.collect();
        let Some(dir) = self.file.parent() else {
            return;
        };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let mut out = Vec::with_capacity(64 + seen.len() * 64);
        out.extend_from_slice(MAGIC);
        put_bytes(&mut out, &self.key);
        out.extend_from_slice(&(seen.len() as u32).to_le_bytes());
        for (path, s) in seen {
            put_bytes(&mut out, path.as_os_str().as_bytes());
            out.extend_from_slice(&s.stamp.dev.to_le_bytes());
            out.extend_from_slice(&s.stamp.ino.to_le_bytes());
            out.extend_from_slice(&s.stamp.ctime.0.to_le_bytes());
            out.extend_from_slice(&s.stamp.ctime.1.to_le_bytes());
            out.extend_from_slice(&s.entries.to_le_bytes());
            let flags = u8::from(s.holds)
                | u8::from(s.entered) << 1
                | u8::from(s.trusted) << 2
                | u8::from(s.links) << 3;
            out.push(flags);
            put_bytes(&mut out, &s.subdirs);
        }
        if replace(&self.file, &out).is_ok() {
            sweep(dir, &self.file);
        }
    }
}

/// The most memories kept (one per root walked, names and bounds): beyond, the least recently
/// written go (a project not walked for a while is read whole once more).
const MOST_KEPT: usize = 256;

/// Remove the least recently written memories in `dir` beyond [`MOST_KEPT`], never `keep`.
fn sweep(dir: &Path, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let modified = e.metadata().ok()?.modified().ok()?;
            Some((modified, e.path()))
        })
        .collect();
    if files.len() <= MOST_KEPT {
        return;
    }
    files.sort();
    let extra = files.len() - MOST_KEPT;
    for (_, path) in files.into_iter().filter(|(_, p)| p != keep).take(extra) {
        let _ = std::fs::remove_file(path);
    }
}

/// `dir` made where absent (with its parents), this user's alone: where hookd's state keeps
/// its records. Failing is left to the write that follows.
pub(crate) fn own_dir(dir: &Path) {
    use std::os::unix::fs::DirBuilderExt;
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir);
}

/// Write `bytes` to a new file beside `file` (a random name, made exclusively, mode 0600:
/// `tempfile`, as hookd's `atomic::write_private`), then rename it over `file`: a reader sees
/// the old memory or the new one whole, and two walks writing at once (a daemon's concurrent
/// hooks) each write their own. No `fsync`: a memory lost in a crash, or cut short, is read as
/// none.
pub(crate) fn replace(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.persist(file).map_err(|e| e.error)?;
    Ok(())
}

/// `file`'s bytes where it is a plain file of this user's that nobody else may write (as
/// [`replace`] makes it), never through a link: anything else is no memory.
pub(crate) fn read_own(file: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(file)
        .ok()?;
    let m = f.metadata().ok()?;
    let own = m.is_file() && m.uid() == nix::unistd::geteuid().as_raw() && m.mode() & 0o022 == 0;
    let mut bytes = Vec::with_capacity(m.len() as usize);
    (own && f.read_to_end(&mut bytes).is_ok()).then_some(bytes)
}

pub(crate) fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// `bytes` as written by [`Memory::keep`] for `key`; `None` where it is anything else.
fn parse(bytes: &[u8], key: &[u8]) -> Option<HashMap<Vec<u8>, Seen>> {
    let mut r = Reader(bytes.strip_prefix(MAGIC)?);
    if r.bytes()? != key {
        return None;
    }
    let count = r.u32()? as usize;
    // Each record takes at least 41 bytes: a count beyond what is there is a corrupt file.
    if count > r.0.len() / 41 {
        return None;
    }
    let mut last = HashMap::with_capacity(count);
    for _ in 0..count {
        let path = r.bytes()?.to_vec();
        let stamp = Stamp {
            dev: r.u64()?,
            ino: r.u64()?,
            ctime: (r.u64()? as i64, r.u32()?),
        };
        let entries = r.u32()?;
        let flags = r.take(1)?[0];
        // Only what may be trusted is kept.
        if flags & 4 == 0 {
            return None;
        }
        let subdirs = r.bytes()?;
        // Names of one component each, each ended by NUL: never empty, `.`, `..` or holding a
        // `/`.
        if subdirs.last().is_some_and(|b| *b != 0) {
            return None;
        }
        let mut names = subdirs.split(|b| *b == 0);
        names.next_back();
        if names.any(|n| n.is_empty() || n == b"." || n == b".." || n.contains(&b'/')) {
            return None;
        }
        let subdirs = subdirs.to_vec();
        let seen = Seen {
            stamp,
            entries,
            holds: flags & 1 != 0,
            links: flags & 8 != 0,
            entered: flags & 2 != 0,
            subdirs,
            trusted: flags & 4 != 0,
        };
        last.insert(path, seen);
    }
    r.0.is_empty().then_some(last)
}

pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub(crate) fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

/// FNV-1a, 64 bits: the memory's file name (the key itself is checked inside).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(trusted: bool) -> Seen {
        Seen {
            stamp: Stamp {
                dev: 7,
                ino: 42,
                ctime: (1_700_000_000, 5),
            },
            entries: 3,
            holds: true,
            links: true,
            entered: true,
            subdirs: b"web\0a b\0".to_vec(),
            trusted,
        }
    }

    #[test]
    fn a_memory_is_read_back_exactly_and_anything_else_is_none() {
        let d = tempfile::tempdir().unwrap();
        let m = Memory::load(d.path(), d.path(), &[".env"], b"3");
        if !m.in_use() {
            eprintln!("skipped: the temporary directory's filesystem is not one a walk trusts");
            return;
        }
        let records = vec![
            (d.path().join("x"), Some(seen(true))),
            (d.path().join("y"), Some(seen(false))),
        ];
        m.keep(&records);
        let bytes = std::fs::read(&m.file).unwrap();
        let back = parse(&bytes, &m.key).unwrap();
        assert_eq!(back.len(), 1, "what may not be trusted is not kept");
        assert_eq!(back[d.path().join("x").as_os_str().as_bytes()], seen(true));
        // One that others may write is none.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&m.file, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(read_own(&m.file).is_none());
        std::fs::set_permissions(&m.file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_own(&m.file).unwrap(), bytes);
        // Another key, cut short, one byte more, a name with a slash: no memory.
        assert!(parse(&bytes, b"other").is_none());
        assert!(parse(&bytes[..bytes.len() - 1], &m.key).is_none());
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(parse(&longer, &m.key).is_none());
        let mut bad = seen(true);
        bad.subdirs = b"../x\0".to_vec();
        m.keep(&[(d.path().join("x"), Some(bad))]);
        assert!(parse(&std::fs::read(&m.file).unwrap(), &m.key).is_none());
    }

    #[test]
    fn a_stamp_below_the_root_is_the_one_its_full_path_gives_and_never_a_links_target() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("r");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("l")).unwrap();
        let m = Memory::load(d.path(), &root, &[".env"], b"");
        let lstat = |p: &Path| Stamp::of(&rustix::fs::lstat(p).unwrap());
        for p in [
            root.clone(),
            root.join("a"),
            root.join("a/b"),
            root.join("l"),
        ] {
            assert_eq!(m.stamp(&p), Some(lstat(&p)), "{}", p.display());
        }
        assert_ne!(m.stamp(&root.join("l")), m.stamp(&root.join("a")));
        assert_eq!(m.stamp(&root.join("gone")), None);
        // Outside the root (a name that only starts like it): by its full path.
        std::fs::create_dir_all(d.path().join("rx")).unwrap();
        assert_eq!(
            m.stamp(&d.path().join("rx")),
            Some(lstat(&d.path().join("rx")))
        );
    }

    /// Walks writing the same memory at once (a daemon's concurrent hooks) each write a file
    /// of their own: what is left is one of theirs, whole, and nothing else.
    #[test]
    fn memories_written_at_once_leave_one_whole() {
        let d = tempfile::tempdir().unwrap();
        let m = Memory::load(d.path(), d.path(), &[".env"], b"");
        if !m.in_use() {
            eprintln!("skipped: the temporary directory's filesystem is not one a walk trusts");
            return;
        }
        std::thread::scope(|s| {
            for t in 0..8u64 {
                let (m, dir) = (&m, d.path());
                s.spawn(move || {
                    for i in 0..20u64 {
                        let mut one = seen(true);
                        one.stamp.ino = t * 100 + i;
                        m.keep(&[(dir.join(format!("x{t}")), Some(one))]);
                    }
                });
            }
        });
        let files: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(files.len(), 1, "{files:?}");
        let back = parse(&std::fs::read(&m.file).unwrap(), &m.key).unwrap();
        assert_eq!(back.len(), 1);
    }

    #[test]
    fn beyond_the_most_kept_the_least_recently_written_go() {
        let d = tempfile::tempdir().unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for i in 0..MOST_KEPT + 2 {
            let f = std::fs::File::create(d.path().join(format!("{i:04}"))).unwrap();
            let at = old + std::time::Duration::from_secs(i as u64);
            f.set_modified(at).unwrap();
        }
        let keep = d.path().join("0000");
        sweep(d.path(), &keep);
        let mut left: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left.len(), MOST_KEPT);
        // The oldest is the one being kept: the next two oldest went.
        assert_eq!(&left[..2], ["0000", "0003"]);
    }

    #[test]
    fn a_stamp_is_trusted_only_well_before_the_walk_and_on_the_roots_device() {
        let d = tempfile::tempdir().unwrap();
        let m = Memory::load(d.path(), d.path(), &[".env"], b"");
        let Some(dev) = m.trusted_dev else {
            eprintln!("skipped: the temporary directory's filesystem is not one a walk trusts");
            return;
        };
        let at = |ns: i128, dev| Stamp {
            dev,
            ino: 1,
            ctime: ((ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as u32),
        };
        assert!(m.trusts(&at(m.started - MARGIN_NS - 1_000_000_000, dev)));
        assert!(!m.trusts(&at(m.started - MARGIN_NS / 2, dev)));
        assert!(!m.trusts(&at(m.started + 1_000_000_000, dev)));
        assert!(!m.trusts(&at(m.started - 10 * MARGIN_NS, dev + 1)));
    }
}
