//! What a confined command's end looks at below its roots: the protected places there, and on
//! the way to its working directory, as they were at its start ([`Below`], kept in hookd's
//! state while it runs: `unsettled.rs`), and what the second walk finds made since ([`Again`]),
//! which the end moves aside.

use std::path::{Path, PathBuf};

use crate::held::{bare_layout, BARE_HEAD, LAYOUT};
use crate::walk::GiveBack;

/// The protected names that existed below the roots, and on the way to the working directory,
/// when the command started, each as the object it was (device and inode): what the command
/// made is what exists there when it has ended and was not there before as that object
/// ([`Below::again`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Below {
    pub(super) roots: Vec<PathBuf>,
    pub(super) on_path: Vec<PathBuf>,
    pub(super) names: Vec<String>,
    pub(super) before: std::collections::HashMap<PathBuf, Identity>,
    /// How many directories the walks visited.
    pub(super) read: usize,
    /// How far they went (the user's `sandbox.walk`).
    pub(super) bounds: crate::walk::Bounds,
    /// Where what they read is kept for the next walks (`STATE/walks`; none without a state).
    pub(super) memory: Option<PathBuf>,
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

/// What `path` is now, not following a last link (but any on its way: `.github/hooks` through
/// `.github -> …`), with its change time: `None` where nothing is there, or where it is a socket (hookd's stand-ins are sockets, its own or another
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

/// The first component of `name`, a name of several components outside a git directory
/// (`.github` of `.github/hooks`); `None` for one of one component or a `.git/NAME`.
fn nested_first(name: &str) -> Option<&str> {
    (!name.starts_with(".git/"))
        .then(|| name.split_once('/'))
        .flatten()
        .map(|(first, _)| first)
}

/// How far the kernel's stamps (change and birth times) may lag the clock a start was read
/// from: a clock tick. What a command made at once after its start was stamped before it (the
/// tests saw 50 µs).
const STAMP_LAG: std::time::Duration = std::time::Duration::from_millis(50);

/// Whether `now` is the object recorded as `was`: the same device and inode and, where it was
/// watched, the same change time (a link made to it or taken from it changes that).
fn same(was: &Identity, now: &Identity) -> bool {
    (was.0, was.1) == (now.0, now.1) && (was.2 == 0 || was.2 == now.2)
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
    /// The links the walks entered, each with the directory it leads to: a place made there
    /// is said with the link it is reached through ([`Again::reached_through`]).
    pub(super) through: Vec<(PathBuf, PathBuf)>,
    /// The links the command made that the walks could not follow as every process would
    /// (`crate::walk::Found::unjudged`): what they lead to cannot be judged; moved aside.
    pub(super) unjudged: Vec<PathBuf>,
}

impl Again {
    /// The link through which `place` (a place made, at its own path) is reached, where a
    /// walk entered one leading to a directory it lies in: the nearest.
    pub(super) fn reached_through(&self, place: &Path) -> Option<&Path> {
        (self.through.iter())
            .filter(|(_, target)| place.starts_with(target))
            .max_by_key(|(_, target)| target.as_os_str().len())
            .map(|(link, _)| link.as_path())
    }
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
        // Absolute paths only, names of plain components (`.env`, `.github/hooks`): anything
        // else is not a record of ours.
        let absolute = below
            .roots
            .iter()
            .chain(&below.on_path)
            .all(|p| p.is_absolute());
        let names = below.names.iter().all(|n| {
            !n.is_empty()
                && Path::new(n)
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
        });
        (r.0.is_empty() && absolute && names && !below.roots.is_empty()).then_some(below)
    }

    /// The protected places that exist now and were not there (as the same object) when the
    /// command started: on the way to the working directory and at the roots, and below the
    /// roots off the way, at most the walk's depth (`web/.claude`, a new `sub/.git`), and in the
    /// directories the links there lead to, as the walk enters them (`pkgs -> node_modules/p`
    /// holding a new `sub/.git`: attack round 19). Walked
    /// after the command's end ([`crate::walk::walk_confined`]); a walk cut short reports what it
    /// found and why; where the walks at the start read more than [`LOOKS_AGAIN_UP_TO`]
    /// directories, only the way and the roots are looked at.
    pub(super) fn again(&self) -> Again {
        let mut out = Again::default();
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        let walked = self.walked();
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
        if !self.looks_below() {
            return out;
        }
        for root in &self.roots {
            let memory = self.memory.as_deref();
            let (bounds, within) = (&self.bounds, &self.roots);
            let at = match self.ended {
                Some(ended) => GiveBack::ChangedBy(ended),
                None => GiveBack::Always,
            };
            let found = crate::walk::walk_confined(root, &walked, bounds, memory, within, at);
            out.given_back.extend(found.given_back);
            out.cut.extend(found.cut);
            out.through.extend(found.through);
            // One there at the start, as the same link, is not the command's (an earlier
            // confined command's end moved its own aside).
            out.unjudged
                .extend(found.unjudged.into_iter().filter(|l| self.fresh(l)));
            for dir in found.dirs {
                if !looked.contains(&&dir) {
                    self.made_in(&dir, &names, &mut out.made);
                }
            }
        }
        out
    }

    /// Whether the end walks the tree below the roots again ([`LOOKS_AGAIN_UP_TO`]): where it
    /// does not, what the command made there is judged by the next command's start
    /// (`deferred.rs`).
    pub(super) fn looks_below(&self) -> bool {
        self.read <= LOOKS_AGAIN_UP_TO
    }

    /// [`Below::made_in`] with this record's names: what the command made in `dir`, a directory
    /// a later walk found holding a protected name (`deferred.rs`).
    pub(super) fn made_in_found(&self, dir: &Path) -> Vec<PathBuf> {
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        let mut made = Vec::new();
        self.made_in(dir, &names, &mut made);
        made
    }

    /// Whether this record's walks read `dir` by its own path: inside its roots, within their
    /// depth (`links`: above their last level, where they looked where links lead). For a
    /// record of another project than the later command judging it (one holding it, or inside
    /// it): what lies elsewhere was never recorded, and a place of the user's there would be
    /// taken for one the command made. (A record of the same project is judged wherever that
    /// command's walk goes, which is where its own went, links included.)
    pub(super) fn reads(&self, dir: &Path, links: bool) -> bool {
        let deepest = self.bounds.depth.min(crate::walk::MAX_DEPTH) - usize::from(links);
        self.roots.iter().any(|r| {
            dir.strip_prefix(r)
                .is_ok_and(|rel| rel.components().count() < deepest)
        })
    }

    /// The protected places in `dir` that are not what was there at the start (made, or made
    /// again in place of what was), sockets aside: what the command made.
    fn made_in(&self, dir: &Path, names: &[&str], made: &mut Vec<PathBuf>) {
        let fresh = |p: &Path| self.fresh(p);
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
            if let Some(first) = nested_first(name) {
                // A name of several components reached through a link at its first (`.github ->
                // node_modules/gh` holding `hooks/`): the end cannot move it aside through the
                // link, so the link it is reached through is moved aside where the command made
                // it (attack round 17, F2: Copilot's hooks stayed).
                // So is one an earlier command made while where it leads held nothing, filled
                // by this one (attack round 18, F1), or pointed by this one, through a link on
                // its way, at what an earlier one made (attack round 19, F2): the name reached
                // through it is not what was there at the start.
                let first = dir.join(first);
                if first.is_symlink() {
                    let filled = || {
                        let led = std::fs::metadata(&first)
                            .ok()
                            .map(|m| crate::walk::changed(&m));
                        let here = p.symlink_metadata().ok().map(|m| crate::walk::changed(&m));
                        self.since()
                            .is_some_and(|since| led.max(here).is_some_and(|c| c > since))
                    };
                    let changed = || fresh(&first) || fresh(&p) || filled();
                    if p.exists() && changed() && !made.contains(&first) {
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

    /// Whether `path` exists and is not what was there at the start (as the same object): made
    /// by the command (not after the sandbox of an end settled late had ended).
    pub(super) fn fresh(&self, path: &Path) -> bool {
        identity(path).is_some_and(|now| {
            !self.before.get(path).is_some_and(|was| same(was, &now))
                && !self.born_after_the_end(path)
        })
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

    /// The names the walks look for, at the start and at the end alike (the walk's memory is
    /// kept under them): [`walked`] of the names held below.
    pub(super) fn walked(&self) -> Vec<&str> {
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        walked(&names)
    }

    /// When the command started, less the clock's tick by which the kernel's stamps may lag
    /// the clock it was read from: what changed after is the command's.
    fn since(&self) -> Option<std::time::SystemTime> {
        (self.started).map(|s| s - STAMP_LAG)
    }

    /// Record, as it is at the start, the link in `dir` that the name `name` of several
    /// components is reached through, if its first component is one ([`Below::made_in`]).
    pub(super) fn was_link_above(&mut self, dir: &Path, name: &str) {
        if let Some(first) = nested_first(name) {
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
        let since = since - STAMP_LAG;
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
}

/// The names the walk looks for, of the names held below (`names`): each of one component,
/// and the first component of each of several (`.github` for `.github/hooks`: a directory
/// holding one is looked in, as one holding any other name; Copilot's CLI reads the hooks of
/// the directory it was started in, attack round 16, F3), each once, in order.
fn walked<'a>(names: &[&'a str]) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        let first = nested_first(n).unwrap_or(n);
        if !out.contains(&first) {
            out.push(first);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ends_record_reads_back_exactly_and_anything_else_is_none() {
        let below = Below {
            roots: vec![PathBuf::from("/p"), PathBuf::from("/w/r\nx")],
            on_path: vec![PathBuf::from("/p/web")],
            names: vec![".claude".into(), ".env".into(), ".github/hooks".into()],
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
        // A name climbing out of its directory, or absolute: none.
        for name in ["../x", ".github/../../x", "/etc"] {
            let mut climbing = below.clone();
            climbing.names.push(name.into());
            assert!(Below::from_bytes(&climbing.to_bytes()).is_none(), "{name}");
        }
    }
}
