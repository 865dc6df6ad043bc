//! What one command's preparation reads of the disk, read once: where a path really is and
//! whether it exists (the catalog's few hundred places share a few directories).

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use foldhash::{HashMap, HashMapExt};

/// What one command's preparation reads of the disk, read once: where a path really is
/// ([`super::resolve`], each directory's components read once: the catalog's places share a few, the
/// home, `~/.config`) and whether a path exists (its directory listed once instead of a
/// `stat` of each of the catalog's names in it, most of them absent). Only for the time of one
/// preparation, which adds to a directory's listing what it makes there.
///
/// Paths are keys as they are spelled (their bytes): hashing a `Path` parses its components,
/// which cost more than the lookups saved (a spelling with `//` or `./` is a second entry, read
/// again).
#[derive(Debug, Default)]
pub(crate) struct Disk {
    real: std::cell::RefCell<HashMap<OsString, PathBuf>>,
    /// Each directory's names, each with whether it may be a link (its type as the listing
    /// gives it: a link, or not told); `None` where it could not be listed.
    names: std::cell::RefCell<HashMap<OsString, Option<Names>>>,
    sockets: std::cell::RefCell<HashMap<OsString, bool>>,
    /// Where the walks below the roots keep what they read for the next command's
    /// (`walk_memory.rs`): hookd's `STATE/walks`; none without a state.
    walks: Option<PathBuf>,
}

/// A directory's names, each with whether it may be a link.
type Names = HashMap<OsString, bool>;

/// What a directory's listing (read already) says of one of its names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Listed {
    /// The directory was not listed (or could not be).
    Unknown,
    Absent,
    /// There, and not a link.
    Plain,
    /// There, a link or of a type the listing did not tell.
    MayLink,
}

/// A directory with more names than this is not listed (each name then costs a `stat`).
const MOST_NAMES: usize = 4096;

impl Disk {
    /// A preparation's reading whose walks are remembered in `walks` (a directory of hookd's
    /// state).
    pub(crate) fn remembering(walks: Option<PathBuf>) -> Disk {
        Disk {
            walks,
            ..Disk::default()
        }
    }

    /// Where the walks are remembered.
    pub(crate) fn walks(&self) -> Option<&Path> {
        self.walks.as_deref()
    }

    /// What [`super::resolve`] says of `path`.
    pub(crate) fn real(&self, path: &Path) -> PathBuf {
        use std::path::Component;
        let plain = path.is_absolute()
            && path
                .components()
                .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
        if !plain {
            return self.real_dotted(path);
        }
        if let Some(known) = self.real.borrow().get(path.as_os_str()) {
            return known.clone();
        }
        let real = match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => {
                // The parent is real: only the last component can be a link; not one its
                // directory's listing (read already) says is absent or of another type.
                let here = self.real(parent).join(name);
                match self.listed(path) {
                    Listed::Absent | Listed::Plain => here,
                    Listed::MayLink | Listed::Unknown => match std::fs::read_link(&here) {
                        Ok(_) => super::resolve(&here),
                        Err(_) => here,
                    },
                }
            }
            _ => PathBuf::from("/"),
        };
        self.real
            .borrow_mut()
            .insert(path.as_os_str().to_os_string(), real.clone());
        real
    }

    /// [`Disk::real`] of an absolute path with a `.` or `..` in it (a `HOME` of `/p/../home`):
    /// resolved up to its last such component once, the rest as a plain path below that (every
    /// place in such a home read the whole path again, a `readlink` per component: 1,098 of
    /// them per `hookd exec -- true` in a small project, now 164; 124 with the home named
    /// plainly). A relative path is resolved as it is.
    fn real_dotted(&self, path: &Path) -> PathBuf {
        use std::path::Component;
        let parts: Vec<Component> = path.components().collect();
        let last = parts
            .iter()
            .rposition(|c| !matches!(c, Component::RootDir | Component::Normal(_)));
        let Some(last) = last.filter(|_| path.is_absolute()) else {
            return super::resolve(path);
        };
        let prefix: PathBuf = parts[..=last].iter().collect();
        let known = self.real.borrow().get(prefix.as_os_str()).cloned();
        let base = known.unwrap_or_else(|| {
            let base = super::resolve(&prefix);
            (self.real.borrow_mut()).insert(prefix.into_os_string(), base.clone());
            base
        });
        let rest: PathBuf = parts[last + 1..].iter().collect();
        if rest.as_os_str().is_empty() {
            base
        } else {
            self.real(&base.join(rest))
        }
    }

    /// Whether `path` exists (a link, dangling or not, does), as its directory's listing says.
    pub(crate) fn exists(&self, path: &Path) -> bool {
        let Some((dir, name)) = split(path) else {
            return path.symlink_metadata().is_ok();
        };
        if let Some(listed) = self.names.borrow().get(dir.as_os_str()) {
            return match listed {
                Some(names) => names.contains_key(name),
                None => path.symlink_metadata().is_ok(),
            };
        }
        // A directory whose own directory's listing lacks it (or one above it) is absent: no
        // need to open it.
        let listed = if self.known_absent(dir) {
            Some(Names::new())
        } else {
            list(dir)
        };
        let exists = match &listed {
            Some(names) => names.contains_key(name),
            None => path.symlink_metadata().is_ok(),
        };
        self.names
            .borrow_mut()
            .insert(dir.as_os_str().to_os_string(), listed);
        exists
    }

    /// What `path`'s directory's listing (by [`Disk::exists`]) says of it.
    fn listed(&self, path: &Path) -> Listed {
        let Some((dir, name)) = split(path) else {
            return Listed::Unknown;
        };
        match self.names.borrow().get(dir.as_os_str()) {
            Some(Some(names)) => match names.get(name) {
                None => Listed::Absent,
                Some(false) => Listed::Plain,
                Some(true) => Listed::MayLink,
            },
            _ => Listed::Unknown,
        }
    }

    /// Whether `path`, or a directory above it, is absent from its directory's listing.
    fn known_absent(&self, path: &Path) -> bool {
        let mut at = path;
        loop {
            if self.listed(at) == Listed::Absent {
                return true;
            }
            match split(at) {
                Some((dir, _)) if dir != at => at = dir,
                _ => return false,
            }
        }
    }

    /// Whether `path` exists as [`std::fs::canonicalize`] says (its links followed): where it
    /// really is, or `None`. Relative paths are canonicalized.
    pub(crate) fn existing(&self, path: &Path) -> Option<PathBuf> {
        if !path.is_absolute() {
            return path.canonicalize().ok();
        }
        let real = self.real(path);
        self.exists(&real).then_some(real)
    }

    /// Whether `path` is a socket (a stand-in), not following a last link; asked once.
    pub(crate) fn is_socket(&self, path: &Path) -> bool {
        use std::os::unix::fs::FileTypeExt;
        if let Some(known) = self.sockets.borrow().get(path.as_os_str()) {
            return *known;
        }
        let socket = (path.symlink_metadata()).is_ok_and(|m| m.file_type().is_socket());
        self.sockets
            .borrow_mut()
            .insert(path.as_os_str().to_os_string(), socket);
        socket
    }

    /// The preparation made `path` (a stand-in, a directory): it exists from now on.
    pub(crate) fn made(&self, path: &Path) {
        let Some((dir, name)) = split(path) else {
            return;
        };
        if let Some(Some(names)) = self.names.borrow_mut().get_mut(dir.as_os_str()) {
            names.insert(name.to_os_string(), false);
        }
        self.sockets.borrow_mut().remove(path.as_os_str());
    }
}

/// `path`'s directory and last name, split at its last `/` (`Path::parent` parses every
/// component, and this is asked of a few hundred places); `None` where the last name is not a
/// name (`/`, `x/`, `x/.`, `x/..`, a relative name alone).
fn split(path: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    let at = bytes.iter().rposition(|b| *b == b'/')?;
    let name = &bytes[at + 1..];
    if name.is_empty() || name == b"." || name == b".." {
        return None;
    }
    let dir = if at == 0 { &bytes[..1] } else { &bytes[..at] };
    Some((
        Path::new(std::ffi::OsStr::from_bytes(dir)),
        std::ffi::OsStr::from_bytes(name),
    ))
}

/// The names in `dir`, each with whether it may be a link (the type the listing gives, without
/// a `stat`): none where there is no directory (nothing is in it), `None` where it cannot be
/// listed or holds more than [`MOST_NAMES`].
fn list(dir: &Path) -> Option<Names> {
    use rustix::io::Errno;
    let mut names = Names::new();
    let listed = each_name(dir, false, |name, kind| {
        let may_link = matches!(kind, Kind::Link | Kind::Unknown);
        names.insert(std::ffi::OsStr::from_bytes(name).to_os_string(), may_link);
        names.len() <= MOST_NAMES
    });
    match listed {
        Ok(true) => Some(names),
        Ok(false) => None,
        Err(Errno::NOENT | Errno::NOTDIR) => Some(Names::new()),
        Err(_) => None,
    }
}

/// What a directory entry says its name is, without a `stat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Dir,
    Link,
    /// A file, socket, FIFO or device.
    Other,
    /// The filesystem does not say.
    Unknown,
}

/// Call `f` with each name in `dir` (`.` and `..` left out) and its [`Kind`], until it returns
/// false: `Ok(false)` then, `Ok(true)` when every name was seen. With `nofollow`, a link at
/// `dir` itself is not listed (ELOOP). By raw `getdents64` (rustix): libc's `opendir` adds an
/// `fstat` and two `fcntl`s to each directory, and nix's iterator an `lseek`.
pub(super) fn each_name(
    dir: &Path,
    nofollow: bool,
    f: impl FnMut(&[u8], Kind) -> bool,
) -> Result<bool, rustix::io::Errno> {
    names_in(&open_dir(dir, nofollow)?, f)
}

/// `dir` opened to be listed by [`names_in`]; with `nofollow`, a link there is ELOOP.
pub(super) fn open_dir(
    dir: &Path,
    nofollow: bool,
) -> Result<std::os::fd::OwnedFd, rustix::io::Errno> {
    use rustix::fs::{Mode, OFlags, CWD};
    let mut flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    if nofollow {
        flags |= OFlags::NOFOLLOW;
    }
    rustix::fs::openat(CWD, dir, flags, Mode::empty())
}

/// [`each_name`] of a directory opened by [`open_dir`].
pub(super) fn names_in(
    fd: &std::os::fd::OwnedFd,
    mut f: impl FnMut(&[u8], Kind) -> bool,
) -> Result<bool, rustix::io::Errno> {
    use rustix::fs::{FileType, RawDir};
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 16 * 1024];
    let mut entries = RawDir::new(fd, &mut buf);
    while let Some(entry) = entries.next() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let kind = match entry.file_type() {
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Link,
            FileType::Unknown => Kind::Unknown,
            _ => Kind::Other,
        };
        if !f(name, kind) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The bytes of `path` where it is a regular file of at most `limit` bytes, read without ever
/// blocking: opened with `O_NONBLOCK` (a FIFO a confined command put where git reads its
/// configuration opens at once, and is refused by its type on the open descriptor, not by a
/// name looked at first), never a device, never more than `limit` bytes (attack round 11, F2:
/// a FIFO as a nested repository's `config` hung every later command's preparation).
pub(crate) fn read_plain(path: &Path, limit: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let (file, len) = open_plain(path)?;
    if len > limit {
        return None;
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= limit).then_some(bytes)
}

/// The first `n` bytes of `path` where it is a regular file, read as [`read_plain`] reads.
pub(crate) fn read_plain_head(path: &Path, n: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let (file, _) = open_plain(path)?;
    let mut bytes = Vec::new();
    file.take(n).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// `path` opened to read without waiting (`O_NONBLOCK`), with its length, where the opened
/// file is a regular file.
fn open_plain(path: &Path) -> Option<(std::fs::File, u64)> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY | nix::libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    meta.is_file().then_some((file, meta.len()))
}

/// [`read_plain`] as text (lossy), for files git reads.
pub(crate) fn read_plain_text(path: &Path, limit: u64) -> Option<String> {
    read_plain(path, limit).map(|b| String::from_utf8_lossy(&b).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_directory_tells_links_from_the_rest_and_absent_names_from_present_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("b/c")).unwrap();
        std::os::unix::fs::symlink(root.join("b"), root.join("a")).unwrap();
        std::os::unix::fs::symlink(root.join("gone"), root.join("dangling")).unwrap();
        let disk = Disk::default();
        // Listing the directory first: its link is still followed, the rest taken as named.
        assert!(disk.exists(&root.join("a")));
        assert!(disk.exists(&root.join("dangling")));
        assert!(!disk.exists(&root.join("gone")));
        assert_eq!(disk.real(&root.join("a/c")), root.join("b/c"));
        assert_eq!(disk.real(&root.join("b/c")), root.join("b/c"));
        assert_eq!(disk.real(&root.join("gone/x")), root.join("gone/x"));
        // Below an absent directory nothing is opened, and nothing exists.
        assert!(!disk.exists(&root.join("gone/x/y")));
        assert_eq!(disk.existing(&root.join("a/c")), Some(root.join("b/c")));
        assert_eq!(disk.existing(&root.join("dangling")), None);
    }

    /// A path with `..` (a `HOME` of `/p/../home`) resolves as the kernel would, through a link
    /// before its `..`, and the part before its last `..` is resolved once for all below it.
    #[test]
    fn a_dotted_path_resolves_as_the_kernel_does_and_its_prefix_once() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("x/y")).unwrap();
        std::fs::create_dir_all(root.join("x/home/.config")).unwrap();
        std::os::unix::fs::symlink(root.join("x/y"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("x/home/.config"), root.join("x/home/cfg")).unwrap();
        let disk = Disk::default();
        let home = root.join("link/../home");
        for below in ["", ".config/git/config", "cfg/git", "absent/x", "./cfg"] {
            let path = if below.is_empty() {
                home.clone()
            } else {
                home.join(below)
            };
            assert_eq!(disk.real(&path), super::super::resolve(&path), "{below}");
        }
        assert_eq!(
            disk.real(&home.join("cfg/git")),
            root.join("x/home/.config/git")
        );
        assert_eq!(disk.real(&home), root.join("x/home"));
        let prefix = root.join("link/..");
        assert_eq!(
            disk.real.borrow().get(prefix.as_os_str()),
            Some(&root.join("x"))
        );
    }

    #[test]
    fn a_path_splits_into_its_directory_and_name_or_not_at_all() {
        let p = |s: &str| split(Path::new(s)).map(|(d, n)| (d.to_path_buf(), n.to_os_string()));
        assert_eq!(p("/a/b"), Some(("/a".into(), "b".into())));
        assert_eq!(p("/a"), Some(("/".into(), "a".into())));
        assert_eq!(p("/a/.env"), Some(("/a".into(), ".env".into())));
        for none in ["/", "/a/", "/a/.", "/a/..", "a", ""] {
            assert_eq!(p(none), None, "{none}");
        }
    }
}
