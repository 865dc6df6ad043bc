//! The places a confined command may not write or move, found on disk for one command: the
//! catalog's names at the project's root and on the way to the working directory, those that
//! exist below the roots off that way (`crate::walk`), what git reads there besides `.git`
//! (`crate::git`), the catalog's places inside writable ones; absent ones get stand-ins
//! (`placeholder`) except below, and a link where one lies, or above it in a writable place,
//! stops the command.

use std::path::{Path, PathBuf};

use super::placeholder::{Placeholders, Provided, Stand};
use super::{Disk, Unavailable};
use crate::{Hold, Places};

/// Directories the catalog holds read-only at the project's root that are created (empty) when
/// absent, so that they can be held read-only too: a confined command must not create them
/// (git does not see an empty directory).
const CREATED_WHEN_ABSENT: &[&str] = &[".infer", ".claude", ".gemini", ".git/hooks"];

/// The places a confined command may not write or move, found on disk: `pinned` (bound onto
/// themselves) and `read_only`, each sorted outermost first.
#[derive(Default)]
pub(super) struct Held {
    pub(super) pinned: Vec<PathBuf>,
    pub(super) read_only: Vec<PathBuf>,
    /// What the walk found below the roots, to tell what the command made there.
    pub(super) below: Below,
}

/// The protected names that existed below the roots, and on the way to the working directory,
/// when the command started, each as the object it was (device and inode): what the command
/// made is what exists there when it has ended and was not there before as that object
/// ([`Below::again`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Below {
    roots: Vec<PathBuf>,
    on_path: Vec<PathBuf>,
    names: Vec<String>,
    before: std::collections::HashMap<PathBuf, Identity>,
    /// How many directories the walks visited.
    read: usize,
    /// How far they went (the user's `sandbox.walk`).
    bounds: crate::walk::Bounds,
    /// Where what they read is kept for the next walks (`STATE/walks`; none without a state).
    memory: Option<PathBuf>,
    /// When the walks at the start began (before the command): a link changed since is the
    /// command's.
    pub(super) started: Option<std::time::SystemTime>,
    /// For an end settled late (`unsettled.rs`): when the sandbox ended, if known. A place born,
    /// or a link or a directory changed, after then is not the command's.
    pub(super) ended: Option<std::time::SystemTime>,
}

/// A place as the object it is: its device and inode, and, for one watched
/// ([`Below::watch_changed_after`]), its change time in nanoseconds (0: not watched).
type Identity = (u64, u64, u64);

/// What `path` is now, not following a last link, with its change time: `None` where nothing
/// is there, or where it is a socket (hookd's stand-ins are sockets, its own or another
/// command's; a socket is read as nothing by agents, editors and git).
fn identity(path: &Path) -> Option<Identity> {
    use std::os::unix::fs::FileTypeExt;
    let m = path.symlink_metadata().ok()?;
    (!m.file_type().is_socket()).then(|| stamped(&m))
}

/// `m`'s device, inode and change time (in nanoseconds, at least 1).
fn stamped(m: &std::fs::Metadata) -> Identity {
    use std::os::unix::fs::MetadataExt;
    let ns = (m.ctime().max(0) as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(m.ctime_nsec().max(0) as u64);
    (m.dev(), m.ino(), ns.max(1))
}

/// When `path` (its metadata `m`) may last have been bound to its name: its own change time
/// (made, linked there), or the latest change time of the directories it lies in below the
/// root it is in (one of `roots`, itself left out: it cannot be renamed, and it changes with
/// every name made in it), since a directory renamed into the tree brings what it holds with
/// its own times (attack round 17: a file an earlier command made in `node_modules/p`, then
/// `node_modules/p` renamed to `pkg`, was taken for one there before).
fn bound_at(roots: &[PathBuf], path: &Path, m: &std::fs::Metadata) -> std::time::SystemTime {
    let mut latest = crate::walk::changed(m);
    let root = roots
        .iter()
        .filter(|r| path.starts_with(r))
        .max_by_key(|r| r.as_os_str().len());
    let Some(root) = root else {
        return latest;
    };
    let mut dir = path.parent();
    while let Some(d) = dir.filter(|d| *d != root.as_path() && d.starts_with(root)) {
        if let Ok(dm) = d.symlink_metadata() {
            latest = latest.max(crate::walk::changed(&dm));
        }
        dir = d.parent();
    }
    latest
}

/// Whether `now` is the object recorded as `was`: the same device and inode and, where it was
/// watched, the same change time (a link made to it or taken from it changes that).
fn same(was: &Identity, now: &Identity) -> bool {
    (was.0, was.1) == (now.0, now.1) && (was.2 == 0 || was.2 == now.2)
}

/// The name git looks for, beside `objects/` and `refs/` (or a `commondir`), to take a directory
/// without a `.git` for a repository of its own (a bare one): `git status` there runs that
/// directory's `config` (`core.fsmonitor`). The walk looks for it with the catalog's names; a
/// directory laid out so is held as a `.git` is, and one laid out so by the command is moved
/// aside at its end (its `HEAD`), as a `.git` it made would be (no new repository below).
pub(super) const BARE_HEAD: &str = "HEAD";

/// What makes a directory a repository's layout besides its `HEAD` ([`bare_layout`]).
const LAYOUT: [&str; 4] = [BARE_HEAD, "objects", "refs", "commondir"];

/// Whether `dir` may be a git directory of its own to git (a bare one, or laid out as one),
/// judged leniently, never by parsing what git would parse: a `HEAD` of any kind (a file
/// whatever its text, a link, dangling or not) with `objects` or `refs` beside it, or a
/// `commondir`. Whatever `.git` the directory has does not count: the command may have broken
/// it (git then looks at `dir` itself), or made one that the end moves aside (attack round 12:
/// `ref:refs/…`, a `HEAD` with junk after its id, a dangling link, a `.git` decoy). A `HEAD`
/// made there is moved aside; one there at the start has the directory held as a `.git` is.
pub(super) fn bare_layout(dir: &Path) -> bool {
    let is = |n: &str| dir.join(n).symlink_metadata().is_ok();
    is(BARE_HEAD) && (is("objects") || is("refs") || is("commondir"))
}

/// Whether git takes the `.git` directory `dir` for a git directory, as git's
/// `is_git_directory` asks: `objects` and `refs` directories it may enter (in the directory its
/// `commondir` names, where it has one), and a `HEAD` that is a link whose text starts with
/// `refs/`, or a file naming a ref (`ref:`, any blanks, `refs/`) or starting with an object
/// id. What is uncertain is taken as no git directory (hookd then says so).
pub(super) fn git_dir_layout(dir: &Path) -> bool {
    let common = crate::disk::read_plain_text(&dir.join("commondir"), 4096)
        .map(|c| dir.join(c.trim_end_matches(['\n', '\r'])))
        .unwrap_or_else(|| dir.to_path_buf());
    let enters = |n: &str| {
        let p = common.join(n);
        p.is_dir() && nix::unistd::access(&p, nix::unistd::AccessFlags::X_OK).is_ok()
    };
    let head_path = dir.join(BARE_HEAD);
    let head = match head_path.symlink_metadata() {
        Ok(m) if m.file_type().is_symlink() => std::fs::read_link(&head_path)
            .is_ok_and(|t| t.as_os_str().as_encoded_bytes().starts_with(b"refs/")),
        Ok(m) if m.is_file() => crate::disk::read_plain_head(&head_path, 255).is_some_and(|h| {
            let id = h.iter().take_while(|b| b.is_ascii_hexdigit()).count();
            match h.strip_prefix(b"ref:") {
                // git's blanks there: space, tab, CR, LF (not a form feed: attack round 13).
                Some(rest) => {
                    let blank = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
                    let n = rest.iter().take_while(|b| blank(b)).count();
                    rest[n..].starts_with(b"refs/")
                }
                None => id >= 40,
            }
        }),
        _ => false,
    };
    head && enters("objects") && enters("refs")
}

/// Up to how many directories the walks at the start read (within their depth) the command's
/// end looks again. Bounded by the tree alone, never by what the memory holds: a command can
/// change hundreds of directories just before the next one starts, so that their memory is too
/// recent to be trusted (an attack round found that a budget counting remembered directories
/// at a half let such a burst skip the next command's second walk). The second walk costs about
/// what the first did (3-6 µs a directory listed; less where the first left them in its
/// memory); beyond, what was made is found by the next command's walk and held from then on.
pub(super) const LOOKS_AGAIN_UP_TO: usize = 2_000;

/// What the second walk, at the command's end, found.
#[derive(Default)]
pub(super) struct Again {
    /// The protected places made below ([`Below::again`]).
    pub(super) made: Vec<PathBuf>,
    /// The user's own directories the command had made unreadable, their reading given back.
    pub(super) given_back: Vec<PathBuf>,
    /// Where a walk stopped short, why (what it found so far is in `made`).
    pub(super) cut: Vec<String>,
    /// The links the command made below to a place the walk does not enter, where agents or
    /// git would read what it holds ([`Below::again`]).
    pub(super) links: Vec<PathBuf>,
}

/// The format's name and version, first in a record ([`Below::to_bytes`]).
const RECORD: &[u8] = b"hookd unsettled end 2\n";

impl Below {
    /// What the end needs, as bytes ([`crate::unsettled`] keeps them while the command runs).
    pub(super) fn to_bytes(&self) -> Vec<u8> {
        use crate::walk_memory::put_bytes;
        use std::os::unix::ffi::OsStrExt;
        let mut out = RECORD.to_vec();
        let paths = |out: &mut Vec<u8>, list: &[PathBuf]| {
            out.extend_from_slice(&(list.len() as u32).to_le_bytes());
            for p in list {
                put_bytes(out, p.as_os_str().as_bytes());
            }
        };
        paths(&mut out, &self.roots);
        paths(&mut out, &self.on_path);
        out.extend_from_slice(&(self.names.len() as u32).to_le_bytes());
        for n in &self.names {
            put_bytes(&mut out, n.as_bytes());
        }
        out.extend_from_slice(&(self.before.len() as u32).to_le_bytes());
        for (p, (dev, ino, changed)) in &self.before {
            put_bytes(&mut out, p.as_os_str().as_bytes());
            out.extend_from_slice(&dev.to_le_bytes());
            out.extend_from_slice(&ino.to_le_bytes());
            out.extend_from_slice(&changed.to_le_bytes());
        }
        out.extend_from_slice(&(self.read as u64).to_le_bytes());
        out.extend_from_slice(&(self.bounds.depth as u64).to_le_bytes());
        out.extend_from_slice(&(self.bounds.most_dirs as u64).to_le_bytes());
        out.extend_from_slice(&(self.bounds.skip.len() as u32).to_le_bytes());
        for n in &self.bounds.skip {
            put_bytes(&mut out, n.as_bytes());
        }
        let memory = self.memory.as_deref().map(|m| m.as_os_str().as_bytes());
        put_bytes(&mut out, memory.unwrap_or_default());
        let started = (self.started)
            .and_then(|s| s.duration_since(std::time::UNIX_EPOCH).ok())
            .unwrap_or_default();
        out.extend_from_slice(&started.as_secs().to_le_bytes());
        out.extend_from_slice(&started.subsec_nanos().to_le_bytes());
        out
    }

    /// [`Below::to_bytes`]' bytes read back; `None` where they are anything else.
    pub(super) fn from_bytes(bytes: &[u8]) -> Option<Below> {
        use crate::walk_memory::Reader;
        use std::os::unix::ffi::OsStrExt;
        let mut r = Reader(bytes.strip_prefix(RECORD)?);
        let path = |b: &[u8]| PathBuf::from(std::ffi::OsStr::from_bytes(b));
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).ok();
        // Each entry takes at least 4 bytes: a count beyond what is there is a corrupt file.
        let count = |r: &mut Reader| r.u32().map(|n| n as usize).filter(|n| *n <= r.0.len() / 4);
        let mut below = Below::default();
        for list in [&mut below.roots, &mut below.on_path] {
            for _ in 0..count(&mut r)? {
                list.push(path(r.bytes()?));
            }
        }
        for _ in 0..count(&mut r)? {
            below.names.push(text(r.bytes()?)?);
        }
        for _ in 0..count(&mut r)? {
            let p = path(r.bytes()?);
            below.before.insert(p, (r.u64()?, r.u64()?, r.u64()?));
        }
        below.read = r.u64()? as usize;
        below.bounds.depth = r.u64()? as usize;
        below.bounds.most_dirs = r.u64()? as usize;
        for _ in 0..count(&mut r)? {
            below.bounds.skip.push(text(r.bytes()?)?);
        }
        let memory = r.bytes()?;
        below.memory = (!memory.is_empty()).then(|| path(memory));
        let (secs, nanos) = (r.u64()?, r.u32()?);
        below.started = std::time::UNIX_EPOCH
            .checked_add(std::time::Duration::new(secs, nanos.min(999_999_999)));
        // Absolute paths only, names of one component: anything else is not a record of ours.
        let absolute = below
            .roots
            .iter()
            .chain(&below.on_path)
            .all(|p| p.is_absolute());
        let names = below
            .names
            .iter()
            .all(|n| !n.is_empty() && n != "." && n != "..");
        (r.0.is_empty() && absolute && names && !below.roots.is_empty()).then_some(below)
    }

    /// The protected places that exist now and were not there (as the same object) when the
    /// command started: on the way to the working directory and at the roots, and below the
    /// roots off the way, at most the walk's depth (`web/.claude`, a new `sub/.git`). Walked
    /// after the command's end ([`crate::walk::walk_after`]); a walk cut short reports what it
    /// found and why; where the walks at the start read more than [`LOOKS_AGAIN_UP_TO`]
    /// directories, only the way and the roots are looked at.
    pub(super) fn again(&self) -> Again {
        let mut out = Again::default();
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        // The walk finds single names (one of several components, `.github/hooks`, by its
        // first); its memory is kept under the same names as at the start.
        let walked = walked(&names);
        // On the way to the working directory every name is held (a stand-in where it was
        // absent), so nothing should change there; but another confined command's end can
        // rename a place this one held, or remove its stand-ins, and the name is free to it
        // (two commands at once made `.envrc` in the working directory of one of them). A few
        // `lstat`s a directory: looked at whatever the tree's size.
        let looked: Vec<&PathBuf> = (self.on_path.iter())
            .chain(self.roots.iter().filter(|r| !self.on_path.contains(r)))
            .collect();
        for dir in &looked {
            self.made_in(dir, &names, &mut out.made);
        }
        if self.read > LOOKS_AGAIN_UP_TO {
            return out;
        }
        let mut holding = Vec::new();
        let mut links = Vec::new();
        for root in &self.roots {
            let memory = self.memory.as_deref();
            let found = match self.ended {
                Some(ended) => {
                    crate::walk::walk_after_ended(root, &walked, &self.bounds, memory, ended)
                }
                None => crate::walk::walk_after(root, &walked, &self.bounds, memory),
            };
            out.given_back.extend(found.given_back);
            out.cut.extend(found.cut);
            links.extend(found.links);
            for dir in found.dirs {
                holding.push(dir.clone());
                if !looked.contains(&&dir) {
                    self.made_in(&dir, &names, &mut out.made);
                }
            }
        }
        out.links = links
            .into_iter()
            .filter(|l| self.links_beyond(l, &names, &holding))
            .collect();
        out
    }

    /// The protected places in `dir` that are not what was there at the start (made, or made
    /// again in place of what was), sockets aside: what the command made.
    fn made_in(&self, dir: &Path, names: &[&str], made: &mut Vec<PathBuf>) {
        let fresh = |p: &Path| {
            identity(p).is_some_and(|now| {
                !self.before.get(p).is_some_and(|was| same(was, &now))
                    && !self.born_after_the_end(p)
            })
        };
        for name in names {
            let p = dir.join(name);
            if *name == BARE_HEAD {
                // A repository's layout any part of which the command made (its `HEAD` made
                // by one command and its `objects` and `refs` by the next: attack round 13).
                // (A `commondir` naming `.` is hookd's own stand-in, or names the directory
                // itself, whose `objects` and `refs` are looked at.)
                let names_elsewhere = |p: &Path| {
                    crate::disk::read_plain(p, 64).is_none_or(|t| t.trim_ascii() != b".")
                };
                let laid = bare_layout(dir)
                    && LAYOUT.iter().any(|n| {
                        let p = dir.join(n);
                        fresh(&p) && (*n != "commondir" || names_elsewhere(&p))
                    });
                if laid {
                    made.push(p);
                }
                continue;
            }
            if let Some((first, _)) = name.split_once('/').filter(|_| !name.starts_with(".git/")) {
                // A name of several components reached through a link at its first (`.github ->
                // node_modules/gh` holding `hooks/`): the end cannot move it aside through the
                // link, so the link it is reached through is moved aside where the command made
                // it (attack round 17, F2: Copilot's hooks stayed).
                let first = dir.join(first);
                if first.is_symlink() {
                    if p.exists() && fresh(&first) && !made.contains(&first) {
                        made.push(first);
                    }
                    continue;
                }
            }
            if fresh(&p) {
                made.push(p);
            }
        }
    }

    /// Whether `path` was made after the sandbox of an end settled late had ended (its birth
    /// time, where the filesystem keeps one; where it does not, it is taken as the command's).
    fn born_after_the_end(&self, path: &Path) -> bool {
        let Some(ended) = self.ended else {
            return false;
        };
        let born = path.symlink_metadata().and_then(|m| m.created());
        born.is_ok_and(|b| b > ended + std::time::Duration::from_millis(20))
    }

    /// Record, as it is at the start, the link in `dir` that the name `name` of several
    /// components is reached through, if its first component is one ([`Below::made_in`]).
    pub(super) fn was_link_above(&mut self, dir: &Path, name: &str) {
        if let Some((first, _)) = name.split_once('/').filter(|_| !name.starts_with(".git/")) {
            let first = dir.join(first);
            if first.is_symlink() {
                self.was(&first);
            }
        }
    }

    /// Record `path` as it is at the start (nothing where it is absent or a socket).
    pub(super) fn was(&mut self, path: &Path) {
        if let Some((dev, ino, _)) = identity(path) {
            self.before.insert(path.to_path_buf(), (dev, ino, 0));
        }
    }

    /// Watch the places recorded at the start that changed after `since` (made, or linked to
    /// their name: either changes the file's change time), when another confined command was
    /// already running (`unsettled.rs`: the earliest start of those still running): such a
    /// command may have made one, and it can take the name away and give it back under this
    /// command's hold (a second link made, the name unlinked, which detaches this command's
    /// mount in its namespace, then linked again: attack round 16, F1, two commands at once
    /// kept a made `opencode.json` or `web/.mcp.json` for good). A watched place whose change
    /// time is not what it was at the start (every link or unlink of it changes that) is taken
    /// at the end for one this command made, and moved aside. One unchanged since `since` was
    /// there before those commands started: they hold it as this one does. Not a
    /// directory: it cannot be linked twice, and renamed it takes this command's mount along
    /// (the name stays free, a new one made there is fresh); its change time also moves with
    /// every name made in it (a repository of yours committed to meanwhile).
    pub(super) fn watch_changed_after(&mut self, since: std::time::SystemTime) {
        // The kernel stamps with a clock that may lag the one `since` was read from by a tick:
        // a file made at once by that command was stamped before it (the test saw 50 µs).
        let since = since - std::time::Duration::from_millis(50);
        for (path, id) in &mut self.before {
            let Ok(m) = path.symlink_metadata() else {
                continue;
            };
            if m.is_dir() {
                continue;
            }
            let now = stamped(&m);
            // Not its birth time: a file born before may have been linked to the name since.
            if (now.0, now.1) == (id.0, id.1) && bound_at(&self.roots, path, &m) > since {
                id.2 = now.2;
            }
        }
    }

    /// [`bound_at`] for this record's roots.
    fn bound_at(&self, path: &Path, m: &std::fs::Metadata) -> std::time::SystemTime {
        bound_at(&self.roots, path, m)
    }

    /// Whether `link`, a symbolic link below a root, was made or changed during the command and
    /// leads to a directory in a root that the walk does not enter (`node_modules`, a fourth
    /// level, a name `sandbox.walk.skip` names) which is a protected place or holds one: `cd
    /// sub && git status` through `sub -> node_modules/pkg` runs that `.git`'s configuration,
    /// which the command could write. One the walk does enter (`holding`: the directories
    /// holding a name) holds its places already.
    fn links_beyond(&self, link: &Path, names: &[&str], holding: &[PathBuf]) -> bool {
        let (Some(started), Ok(m)) = (self.started, link.symlink_metadata()) else {
            return false;
        };
        // The kernel stamps with a clock that may lag the one read at the start by a tick.
        let since = started - std::time::Duration::from_millis(50);
        // Its own change time, or the latest of the directories it is in below its root: a
        // link an earlier command made where the walk does not look, then carried into the
        // tree by renaming a directory holding it, keeps its own (attack round 17, F6).
        let changed = self.bound_at(link, &m);
        // A late end (`unsettled.rs`): a link changed after the sandbox ended is not its.
        let late = (self.ended).is_some_and(|e| changed > e + std::time::Duration::from_millis(20));
        if changed < since || late {
            return false;
        }
        let Ok(target) = std::fs::canonicalize(link) else {
            return false;
        };
        if !target.is_dir() || !self.roots.iter().any(|r| target.starts_with(r)) {
            return false;
        }
        let is_place = target
            .file_name()
            .is_some_and(|n| names.iter().any(|name| n == *name));
        let held =
            |dir: &Path| holding.iter().any(|h| h == dir) || self.on_path.iter().any(|p| p == dir);
        if is_place {
            return !target.parent().is_some_and(held);
        }
        let holds = names
            .iter()
            .any(|n| target.join(n).symlink_metadata().is_ok());
        holds && !held(&target)
    }
}

impl Held {
    /// Hold `path` as `what`, where it exists. A symbolic link fails: the link lies in a
    /// writable place, so a bind through it would protect its target and leave the link free
    /// to be replaced; the command must not run (Codex refuses the same). So does a link among
    /// its ancestors that lies in one of `writable` (`~/.config -> dotfiles/config`): the bind
    /// would land on the target, and the link could be replaced by a directory holding another
    /// `git/config`.
    fn hold(
        &mut self,
        path: PathBuf,
        what: Hold,
        writable: &[PathBuf],
        real: &Disk,
    ) -> Result<(), Unavailable> {
        if let Some(link) = linked_ancestor(&path, writable, real) {
            return Err(Unavailable::Prepare(format!(
                "{} is a symbolic link in a writable place: the sandbox holds {} read-only and cannot hold it through a link (replace the link with the directory itself)",
                link.display(),
                path.display()
            )));
        }
        match path.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => Err(Unavailable::Prepare(format!(
                "{} is a symbolic link: the sandbox holds it read-only and cannot hold a link (replace the link with the directory or file itself)",
                path.display()
            ))),
            Ok(_) => {
                self.push(path, what);
                Ok(())
            }
            Err(_) => Ok(()),
        }
    }

    /// Hold `path` read-only where it exists ([`Held::hold`]).
    pub(super) fn hold_read_only(
        &mut self,
        path: PathBuf,
        writable: &[PathBuf],
        real: &Disk,
    ) -> Result<(), Unavailable> {
        self.hold(path, Hold::ReadOnly, writable, real)
    }

    /// Hold `path` as `what`, as it is.
    fn push(&mut self, path: PathBuf, what: Hold) {
        match what {
            Hold::Pinned => self.pinned.push(path),
            _ => self.read_only.push(path),
        }
    }

    /// Pin every ancestor of `path` strictly between a writable root and `path`: renaming an
    /// ancestor would carry the mount away and leave the name free (`mv ~/.config x`).
    pub(super) fn pin_ancestors(&mut self, path: &Path, writable: &[PathBuf]) {
        for root in writable.iter().filter(|w| path.starts_with(w)) {
            let mut dir = path.parent();
            while let Some(d) = dir.filter(|d| d != root && d.starts_with(root)) {
                if d.is_dir() && !self.pinned.iter().any(|p| p == d) {
                    self.pinned.push(d.to_path_buf());
                }
                dir = d.parent();
            }
        }
    }

    pub(super) fn sort(&mut self) {
        let depth = |p: &PathBuf| p.components().count();
        self.pinned.sort_by_key(depth);
        self.pinned.dedup();
        self.read_only.sort_by_key(depth);
        self.read_only.dedup();
    }
}

/// The first ancestor of `path` that is a symbolic link lying in one of `writable` (resolved).
fn linked_ancestor(path: &Path, writable: &[PathBuf], real: &Disk) -> Option<PathBuf> {
    let mut at = PathBuf::new();
    let mut components = path.components().peekable();
    while let Some(c) = components.next() {
        at.push(c);
        if components.peek().is_none() {
            break;
        }
        // A writable root and what is above it: no link there lies in a writable place.
        if writable.iter().all(|w| w.starts_with(&at)) {
            continue;
        }
        let link = at
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink());
        if link {
            let parent = real.real(at.parent().unwrap_or(Path::new("/")));
            if writable.iter().any(|w| parent.starts_with(w)) {
                return Some(at);
            }
        }
    }
    None
}

/// The directories whose protected names are held: the project's root and each directory from
/// it down to `cwd` when `cwd` is inside it (an agent started in `web/` reads `web/.claude/`).
fn name_dirs(project: &Path, cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![project.to_path_buf()];
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    if let Ok(rel) = cwd.strip_prefix(project) {
        let mut d = project.to_path_buf();
        for c in rel.components() {
            d.push(c);
            dirs.push(d.clone());
        }
    }
    dirs
}

/// Finding the places a command may not write: where it may (`writable`, resolved) and what
/// stands in for the absent ones.
struct Finder<'a> {
    places: &'a Places,
    writable: &'a [PathBuf],
    stand_ins: &'a mut Placeholders,
    real: &'a Disk,
    /// Whether absent places get a stand-in (not for a command run from `/`: no project).
    makes: bool,
    held: Held,
}

impl Finder<'_> {
    /// Hold `path` as `what`. Where it is absent, its first missing component (itself, or the
    /// directory it would be in) gets a stand-in (`stand` for the place itself, a socket for a
    /// directory above it), held: nothing can be made there. `real`: its directory is one of
    /// the project's, resolved (no link above it to look for).
    fn hold(
        &mut self,
        path: PathBuf,
        what: Hold,
        stand: Stand,
        real: bool,
    ) -> Result<(), Unavailable> {
        let writable = if real { &[][..] } else { self.writable };
        if !self.makes || linked_ancestor(&path, writable, self.real).is_some() {
            return self.held.hold(path, what, writable, self.real);
        }
        // The place, or the first missing component above it, or a stand-in above it (another
        // command's, or one a killed hookd left): held as a stand-in, locked while this command
        // runs so that nobody removes it under it.
        let mut first = path.clone();
        let mut up = path.parent().map(Path::to_path_buf);
        while !self.real.exists(&first) {
            match up {
                Some(parent) if !self.real.exists(&parent) => {
                    up = parent.parent().map(Path::to_path_buf);
                    first = parent;
                }
                Some(parent) if self.real.is_socket(&parent) => {
                    first = parent;
                    break;
                }
                _ => break,
            }
        }
        let stand = if first == path { stand } else { Stand::Socket };
        let absent = !self.real.exists(&first);
        let provided = self.stand_ins.provide_known(&first, stand, absent)?;
        if provided == Provided::Not {
            return self.held.hold(path, what, writable, self.real);
        }
        if absent {
            self.real.made(&first);
        }
        // A socket needs no read-only mount: nothing opens it to write, nothing is made below
        // it, and a mount point cannot be removed or replaced; pinned, it costs one mount.
        let what = match stand {
            Stand::Socket => Hold::Pinned,
            Stand::File(_) => Hold::ReadOnly,
        };
        if provided == Provided::Made {
            // Just made, no link above it (looked for first): nothing to look at again.
            self.held.push(first, what);
            return Ok(());
        }
        self.held.hold(first, what, writable, self.real)
    }

    /// The places held by name in `dir` (a directory of the project on the way to the
    /// command's working directory, or, `below`, one the walk found off that way), and what
    /// its git reads besides. Below, only the names that exist are held (no stand-in: a name
    /// cannot be kept from being made in every directory), but a `.git` directory found there
    /// is held whole as the root's is.
    fn names_in(&mut self, dir: &Path, root: bool, below: bool) -> Result<(), Unavailable> {
        let dot = dir.join(".git").symlink_metadata();
        let git_dir = dot.as_ref().is_ok_and(|m| m.is_dir());
        let pointer = dot.as_ref().is_ok_and(|m| m.is_file());
        if !below && self.makes {
            // The stand-ins this directory may get, recorded in one go.
            let ahead: Vec<(Stand, &std::ffi::OsStr)> = (self.places.by_name.iter())
                .filter(|(name, what)| *what != Hold::Watched && !name.contains('/'))
                .map(|(name, _)| name.as_str())
                .filter(|name| !CREATED_WHEN_ABSENT.contains(name))
                .filter(|name| !self.real.exists(&dir.join(name)))
                .map(|name| (stand_for(name), std::ffi::OsStr::new(name)))
                .collect();
            self.stand_ins.record_ahead(dir, &ahead)?;
        }
        for (name, what) in &self.places.by_name {
            if name.starts_with(".git/") && !git_dir {
                continue;
            }
            let path = dir.join(name);
            // A `.git` file is a pointer: rewriting it redirects git, so it is read-only.
            let what = if name == ".git" && pointer {
                Hold::ReadOnly
            } else {
                *what
            };
            if what == Hold::Watched {
                // No stand-in: where it exists, held read-only; one the command makes is moved
                // aside at its end ([`Below::again`]).
                if below {
                    self.held.below.was_link_above(dir, name);
                }
                if self.real.exists(&path) {
                    if below {
                        self.held.below.was(&path);
                    }
                    self.held.hold(path, Hold::ReadOnly, &[], self.real)?;
                }
                continue;
            }
            if below && !name.starts_with(".git/") {
                // Most of the catalog's names are absent there: the directory's listing (read
                // once) says so without a `stat` of each.
                if self.real.exists(&path) {
                    self.held.below.was(&path);
                    self.held.hold(path, what, &[], self.real)?;
                }
                continue;
            }
            // `.gitmodules` matters only beside a `.git` (where there is none, its stand-in
            // keeps a repository from being made).
            if name == ".gitmodules" && dot.is_err() {
                continue;
            }
            if root && self.makes && CREATED_WHEN_ABSENT.contains(&name.as_str()) && !path.exists()
            {
                // Held read-only from now on; git does not see an empty directory.
                if std::fs::create_dir(&path).is_ok() {
                    self.real.made(&path);
                }
            }
            // `.git/NAME`: `.git` itself, held first, is refused where it is a link.
            self.hold(path, what, stand_for(name), true)?;
        }
        if !below {
            // What the command's end compares with: these names are held, so what is there at
            // the end is what was unless someone else's end freed one ([`Below::again`]).
            for (name, _) in self.places.by_name.iter() {
                self.held.below.was_link_above(dir, name);
                let p = dir.join(name);
                if !name.starts_with(".git/") && self.real.exists(&p) {
                    self.held.below.was(&p);
                }
            }
        }
        let head = dir.join(BARE_HEAD);
        if self.real.exists(&head) {
            // What the end compares with; and a repository of its own without a `.git` (a bare
            // one, or laid out as one) has its `config`, `hooks`, … held as a `.git`'s.
            for part in LAYOUT {
                self.held.below.was(&dir.join(part));
            }
            if bare_layout(dir) {
                for (name, what) in &self.places.by_name {
                    if let Some(rest) = name.strip_prefix(".git/") {
                        self.hold(dir.join(rest), *what, stand_for(rest), true)?;
                    }
                }
                // Its layout too, so that one command cannot make it unrecognised for the next
                // (an odd `HEAD`, `refs` moved away) and have its `hooks` unheld (attack round
                // 12, F5): `HEAD` read-only, `objects` and `refs` pinned (git's work in them goes
                // on).
                if head.symlink_metadata().is_ok_and(|m| m.is_file()) {
                    self.hold(head.clone(), Hold::ReadOnly, Stand::Socket, true)?;
                }
                for kept in ["objects", "refs"] {
                    let p = dir.join(kept);
                    if p.symlink_metadata().is_ok_and(|m| m.is_dir()) {
                        self.hold(p, Hold::Pinned, Stand::Socket, true)?;
                    }
                }
            }
        }
        let git = crate::git::indirections(dir, &self.places.homes, &self.places.config_homes);
        for g in &git.git_dirs {
            if !self.is_writable(g) {
                continue;
            }
            let absent = g.symlink_metadata().is_err();
            self.hold(g.clone(), Hold::Pinned, Stand::Socket, false)?;
            if absent {
                // Its stand-in is read-only as a whole.
                continue;
            }
            for (name, what) in &self.places.by_name {
                if let Some(rest) = name.strip_prefix(".git/") {
                    self.hold(g.join(rest), *what, stand_for(rest), false)?;
                }
            }
        }
        for h in &git.hooks_paths {
            if self.is_writable(h) {
                self.hold(h.clone(), Hold::ReadOnly, Stand::Socket, false)?;
            }
        }
        for f in &git.includes {
            if self.is_writable(f) {
                self.hold(f.clone(), Hold::ReadOnly, Stand::File(""), false)?;
            }
        }
        // What a hook manager's installed hooks run at the next `git commit` (husky's
        // `.husky/pre-commit`, pre-commit's and lefthook's configuration): attack round 11, F5.
        for f in &git.hook_configs {
            if self.is_writable(f) {
                self.hold(f.clone(), Hold::ReadOnly, Stand::Socket, false)?;
            }
        }
        Ok(())
    }

    fn is_writable(&self, path: &Path) -> bool {
        let real = self.real.real(path);
        self.writable.iter().any(|w| real.starts_with(w))
    }
}

/// The directories below `root` that the walk finds holding a protected name; a walk cut short
/// stops the command (an attacker could grow the tree on purpose to hide a place).
fn below(
    places: &Places,
    root: &Path,
    memory: Option<&Path>,
) -> Result<crate::walk::Found, Unavailable> {
    let names: Vec<&str> = (places.by_name.iter())
        .filter(|(n, _)| !n.starts_with(".git/"))
        .map(|(n, _)| n.as_str())
        .chain(std::iter::once(BARE_HEAD))
        .collect();
    let found = crate::walk::walk_remembered(root, &walked(&names), &places.walk, memory);
    match found.cut {
        Some(cut) => Err(Unavailable::Prepare(format!(
            "{cut}; a place below it could not be held read-only"
        ))),
        None => Ok(found),
    }
}

/// The names the walk looks for, of the names held below (`names`): each of one component,
/// and the first component of each of several (`.github` for `.github/hooks`: a directory
/// holding one is looked in, as one holding any other name; Copilot's CLI reads the hooks of
/// the directory it was started in, attack round 16, F3), each once, in order.
fn walked<'a>(names: &[&'a str]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        let first = n.split('/').next().unwrap_or(n);
        if !out.contains(&first) {
            out.push(first);
        }
    }
    out
}

/// What stands in for the absent place named `name`: a file naming `.` for `commondir` (git
/// cannot read anything else there), a socket for every other.
fn stand_for(name: &str) -> Stand {
    if name.ends_with("commondir") {
        Stand::File(".\n")
    } else {
        Stand::Socket
    }
}

/// What `policy` holds for a command in `project` run from `cwd`, with `writable` the places
/// it may write; absent places held by name get stand-ins from `stand_ins`.
pub(super) fn held(
    places: &Places,
    project: &Path,
    cwd: &Path,
    writable: &[PathBuf],
    stand_ins: &mut Placeholders,
    hidden: &[PathBuf],
    real: &Disk,
) -> Result<Held, Unavailable> {
    let memory = real.walks();
    let mut find = Finder {
        places,
        writable,
        stand_ins,
        real,
        // Never at the filesystem's root (a command run from `/` has no project).
        makes: project.parent().is_some(),
        held: Held::default(),
    };
    let on_path = name_dirs(project, cwd);
    for dir in &on_path {
        find.names_in(dir, dir == project, false)?;
        // The directories on the way are pinned: renamed away, they took their stand-ins and
        // read-only places with them (left in the user's tree for good), and a new `web/`
        // with a `.git` of the command's stood where the agent works (attack round 12, F9).
        if dir != project && find.makes {
            find.held.hold(dir.clone(), Hold::Pinned, &[], real)?;
        }
    }
    // The names are held at every other writable root too (Codex holds `.git` and `.codex` in
    // each): to git and the agents a `sandbox.write` entry is a project of its own.
    let roots: Vec<PathBuf> = (writable.iter())
        .filter(|w| !w.starts_with(project) && w.is_dir())
        .cloned()
        .collect();
    for dir in &roots {
        find.names_in(dir, false, false)?;
    }
    // The names that exist below each root, off the way to the working directory (`web/.env`,
    // a nested repository's `.git`), found by a bounded walk (`crate::walk`).
    if find.makes {
        let names = (places.by_name.iter()).filter(|(n, _)| !n.starts_with(".git/"));
        find.held.below.names = (names.map(|(n, _)| n.clone()))
            .chain(std::iter::once(BARE_HEAD.to_string()))
            .collect();
        find.held.below.roots = std::iter::once(project.to_path_buf())
            .chain(roots.iter().cloned())
            .collect();
        find.held.below.on_path = on_path.clone();
        find.held.below.bounds = places.walk.clone();
        find.held.below.memory = memory.map(Path::to_path_buf);
        find.held.below.started = Some(std::time::SystemTime::now());
        for root in std::iter::once(&project.to_path_buf()).chain(&roots) {
            let found = below(places, root, memory)?;
            find.held.below.read += found.read;
            for dir in found.dirs {
                if !on_path.contains(&dir) {
                    find.names_in(&dir, false, true)?;
                }
            }
        }
    }
    // The catalog's absolute places that are absent where the command may write (the home the
    // agent was started in): a stand-in where they would be, as for the names, or the command
    // could make them (`~/.config/git/config`, `~/.npmrc`) for your next unconfined start.
    if find.makes {
        // Whether a place is writable is its nearest existing directory's (what lies below it
        // does not exist: no link to follow), resolved once for the places that share it
        // (`Disk::real` remembers it).
        for path in places.read_only.iter().chain(hidden) {
            if real.exists(path) {
                continue;
            }
            let Some(dir) = path.ancestors().skip(1).find(|a| real.exists(a)) else {
                continue;
            };
            if find.is_writable(dir) {
                find.hold(path.clone(), Hold::ReadOnly, Stand::Socket, false)?;
            }
        }
    }
    let mut held = find.held;
    let prefixed = places.prefixed_now();
    let read_only = places.read_only.iter().cloned().chain(
        prefixed
            .into_iter()
            .filter(|(_, what)| *what == Hold::ReadOnly)
            .map(|(p, _)| p),
    );
    for path in read_only {
        let resolved = real.real(&path);
        if writable.iter().any(|w| resolved.starts_with(w)) {
            held.hold(path, Hold::ReadOnly, writable, real)?;
        }
    }
    held.sort();
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ends_record_reads_back_exactly_and_anything_else_is_none() {
        let below = Below {
            roots: vec![PathBuf::from("/p"), PathBuf::from("/w/r\nx")],
            on_path: vec![PathBuf::from("/p/web")],
            names: vec![".claude".into(), ".env".into()],
            before: [(PathBuf::from("/p/.claude"), (1, 2, 3))]
                .into_iter()
                .collect(),
            read: 7,
            bounds: crate::walk::Bounds {
                skip: vec!["vendor2".into()],
                ..Default::default()
            },
            memory: Some(PathBuf::from("/s/walks")),
            started: Some(std::time::UNIX_EPOCH + std::time::Duration::new(5, 6)),
            ended: None,
        };
        let bytes = below.to_bytes();
        let back = Below::from_bytes(&bytes).unwrap();
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(back.before, below.before);
        assert_eq!(back.bounds, below.bounds);
        // Cut short, lengthened, another format, a relative root: none.
        assert!(Below::from_bytes(&bytes[..bytes.len() - 1]).is_none());
        assert!(Below::from_bytes(&[&bytes[..], b"x"].concat()).is_none());
        assert!(Below::from_bytes(b"hookd walk memory 2\n").is_none());
        let mut relative = below.clone();
        relative.roots = vec![PathBuf::from("p")];
        assert!(Below::from_bytes(&relative.to_bytes()).is_none());
    }
}
