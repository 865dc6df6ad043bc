//! The walk that finds the protected names that exist below a root off the way to the
//! command's working directory (`web/.claude`, `web/.env`, a nested repository's `.git`):
//! breadth first, a few levels deep, and never trusting what the confined command can write to
//! decide what is skipped (no `.gitignore`, no marker file). A link to a directory inside a
//! root is entered as the directory it stands for, at that directory's own path: `cd pkgs/sub
//! && git status` through `pkgs -> node_modules/p` reads `node_modules/p/sub/.git`, so the walk
//! finds it there as it would below a `pkgs/` of its own.
//! The sandbox holds what it finds as it holds the root's; the gate reads the nested
//! repositories' indirections from the same walk.
//!
//! Why these bounds (docs/security.md, "Below the project's root"): a place held once keeps
//! its ancestors pinned, so nothing found can be moved out of reach of the next walk; what a
//! bound leaves out could be written by the command whatever the bound. Only names are read
//! (one `getdents` per directory, no `stat`): its cost is the number of directories and
//! entries it reads, measured in docs/benchmarks.md.

use std::path::{Path, PathBuf};

use crate::walk_memory::{Memory, Seen, Stamp};

mod links;
use links::{through_links, Led, Targets};

/// How deep the walk finds names: a name at most this many components below the root
/// (`a/b/.env`, `web/.claude`, `vendor/lib/.git`). sandbox-runtime's Linux search lists files
/// at most 3 deep (`rg --max-depth 3`), so it finds `a/b/.mcp.json` and `sub/.git/config` but
/// not `sub/.git/hooks/*`; a directory found here is held whole, and a `.git` with all its
/// places, so this depth finds everything it finds and more.
pub const DEPTH: usize = 3;

/// The most directories one walk reads. Where a level would take it beyond, the walk stops
/// before reading that level and says so ([`Found::cut`]).
pub const MOST_DIRS: usize = 20_000;

/// The most entries one walk reads (all directories together), checked after each level.
pub const MOST_ENTRIES: usize = 1_000_000;

/// Directories never entered, by name (they are not entered because what is in them is not a
/// place anyone starts an agent, git or an editor in: `node_modules` holds installed packages,
/// code the user's next `npm test` runs anyway; sandbox-runtime skips it too). The names
/// protected themselves are not entered either: each is held whole, or is a `.git` whose
/// places are held by their own names.
pub const NOT_ENTERED: &[&str] = &["node_modules"];

/// The deepest [`Bounds::depth`] a user may set: each level multiplies what is read.
pub const MAX_DEPTH: usize = 8;

/// How far one walk goes: the user's `sandbox.walk` (docs/security.md, "Below the project's
/// root"), [`DEPTH`], [`MOST_DIRS`] and [`NOT_ENTERED`] where it is silent. The user's alone:
/// a repository that could set it would hide its own `web/.claude` below a skipped name.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Bounds {
    /// A name is found at most this many components below the root (1: none below it).
    pub depth: usize,
    /// The most directories one walk reads; beyond, the command does not run.
    pub most_dirs: usize,
    /// Directory names never entered, besides [`NOT_ENTERED`] (`vendor`, `third_party`):
    /// what is in them is not held.
    pub skip: Vec<String>,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            depth: DEPTH,
            most_dirs: MOST_DIRS,
            skip: Vec::new(),
        }
    }
}

impl Bounds {
    /// The default bounds with `depth`, `most_dirs` and `skip` where given.
    pub fn new(depth: Option<usize>, most_dirs: Option<usize>, skip: Vec<String>) -> Bounds {
        let d = Bounds::default();
        Bounds {
            depth: depth.unwrap_or(d.depth),
            most_dirs: most_dirs.unwrap_or(d.most_dirs),
            skip,
        }
    }

    fn enters(&self, name: &[u8]) -> bool {
        !NOT_ENTERED.iter().any(|n| n.as_bytes() == name)
            && !self.skip.iter().any(|n| n.as_bytes() == name)
    }
}

/// Levels with at least this many directories are read by several threads (directories are
/// independent; on a large tree the kernel's work is most of the cost).
const PARALLEL_FROM: usize = 256;

/// What one walk found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The directories below the root (not the root itself) that hold at least one of the
    /// names, outermost first.
    pub dirs: Vec<PathBuf>,
    /// How many directories it visited.
    pub read: usize,
    /// How many of them it listed (the others were as the last walk read them:
    /// [`walk_remembered`]).
    pub listed: usize,
    /// How many of them the memory now holds as read (unchanged for seconds, on a trusted
    /// filesystem): the next walk of the same root takes those from it, at an `lstat` each,
    /// unless they change meanwhile. None without a memory.
    pub kept: usize,
    /// The user's own directories the walk gave their owner's reading back, to read them
    /// (a confined command's end: the command had taken it).
    pub given_back: Vec<PathBuf>,
    /// The links it entered, each with the directory it leads to (read at that directory's own
    /// path, once however many links lead there).
    pub through: Vec<(PathBuf, PathBuf)>,
    /// The links it could not follow as every process would: their way passes a link of
    /// `/proc` that leads somewhere else for each (`/proc/self/cwd/../node_modules/q`:
    /// `open_without_magic`), or a directory they lead to could not be resolved (a way longer than a path
    /// may be). What is there cannot be judged.
    pub unjudged: Vec<PathBuf>,
    /// Where the walk stopped short of its depth, why, and what to do. The caller fails closed
    /// on it (an attacker could make the tree that large, or a directory of its own unreadable,
    /// on purpose to keep a place from being found).
    pub cut: Option<String>,
}

/// What reading some directories of one level gave.
#[derive(Default)]
struct Read {
    /// The directories read that hold one of the names.
    holding: Vec<PathBuf>,
    /// Their subdirectories to read at the next level.
    next: Vec<PathBuf>,
    entries: usize,
    /// Directories of this user's that could not be read (or a part of the level a thread
    /// failed to read): the walk cannot say what is in them.
    unreadable: Vec<PathBuf>,
    /// How many were listed (not recalled).
    listed: usize,
    /// The user's own directories given their owner's reading back to be read.
    given_back: Vec<PathBuf>,
    /// The links in the directories listed, to enter where they lead ([`Targets`]).
    links: Vec<PathBuf>,
    /// Each directory visited, as it was read (`None`: recalled), for the next walk's memory.
    seen: Vec<(PathBuf, Option<Seen>)>,
}

/// The directories below `root`, at most `bounds.depth` levels down (the user's
/// `sandbox.walk`; [`Bounds::default`] where it is silent), that hold one of `names` (exact
/// names of entries, any type). Directories named in `names`, [`NOT_ENTERED`] or
/// `bounds.skip` are not entered; a link named otherwise that leads to a directory below `root`
/// is, as that directory, at the level the link stands at, read at its own path, once.
pub fn walk(root: &Path, names: &[&str], bounds: &Bounds) -> Found {
    walk_remembered(root, names, bounds, None)
}

/// [`walk`], with what the last walk of `root` (for the same names and bounds) read kept in
/// `memory` where given, a directory of hookd's state that confined commands cannot see: a
/// directory as it was then (same inode and change time, unchanged for seconds before) is not
/// listed again (`walk_memory.rs` says why that is sound). Same result, fewer system calls on
/// a large tree.
pub fn walk_remembered(
    root: &Path,
    names: &[&str],
    bounds: &Bounds,
    memory: Option<&Path>,
) -> Found {
    walk_with(root, names, bounds, memory, GiveBack::Never, &[])
}

/// [`walk_remembered`] for a confined command, at its start or its end (`at`), where a link may
/// lead to a directory in any of `within` (the command's writable roots), not only below
/// `root`. At an end, after every process of the command has ended, a directory of the user's
/// own that the command made unreadable (`chmod 100 web` after making `web/.claude`: an agent
/// started in `web/` still reads it) is given its owner's read and search permission back and
/// read, rather than cutting the walk there ([`Found::given_back`]).
pub(crate) fn walk_confined(
    root: &Path,
    names: &[&str],
    bounds: &Bounds,
    memory: Option<&Path>,
    within: &[PathBuf],
    at: GiveBack,
) -> Found {
    walk_with(root, names, bounds, memory, at, within)
}

/// When a confined command's walk is made, which says whether it gives a directory's owner its
/// reading back ([`walk_confined`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum GiveBack {
    /// At its start: never.
    Never,
    /// At its end: always.
    Always,
    /// At an end settled late (`unsettled.rs`, the sandbox ended then): only to a directory
    /// last changed at or before then (a `chmod` the user made since is theirs).
    ChangedBy(std::time::SystemTime),
}

impl GiveBack {
    fn gives(self, dir: &Path) -> bool {
        match self {
            GiveBack::Never => false,
            GiveBack::Always => true,
            GiveBack::ChangedBy(until) => changed_at_or_before(dir, until),
        }
    }
}

/// Whether `path`'s change time (not following a last link) is at or before `until`, with the
/// kernel's clock tick to spare.
fn changed_at_or_before(path: &Path, until: std::time::SystemTime) -> bool {
    path.symlink_metadata()
        .is_ok_and(|m| changed(&m) <= until + std::time::Duration::from_millis(20))
}

/// `m`'s change time.
pub(crate) fn changed(m: &std::fs::Metadata) -> std::time::SystemTime {
    use std::os::unix::fs::MetadataExt;
    std::time::UNIX_EPOCH
        + std::time::Duration::new(m.ctime().max(0) as u64, m.ctime_nsec().max(0) as u32)
}

fn walk_with(
    root: &Path,
    names: &[&str],
    bounds: &Bounds,
    memory: Option<&Path>,
    give_back: GiveBack,
    within: &[PathBuf],
) -> Found {
    let memory = memory
        .map(|dir| Memory::load(dir, root, names, &key(bounds)))
        .filter(Memory::in_use);
    let mut seen = Vec::new();
    let mut found = Found::default();
    // Each level: the directories reached by their own path, and those reached through a link
    // (never remembered: the memory's stamps are of the path, and a link on the way can be
    // pointed elsewhere without any directory of the tree changing: attack round 19).
    let mut level = vec![root.to_path_buf()];
    let mut linked: Vec<PathBuf> = Vec::new();
    // Made at the first link met (most trees have none in the directories walked).
    let mut targets: Option<Targets> = None;
    let (mut dirs, mut entries, mut via_links) = (0usize, 0usize, 0usize);
    let (most, deepest) = (bounds.most_dirs, bounds.depth.min(MAX_DEPTH));
    let what_to_do = "remove what makes the tree that large, run the command from a smaller project, or bound the walk in your ~/.infer/config.yaml: `sandbox.walk.skip` (directory names not entered), `sandbox.walk.depth`, `sandbox.walk.most_dirs`";
    for depth in 1..=deepest {
        if level.is_empty() && linked.is_empty() {
            break;
        }
        let here = level.len() + linked.len();
        let why = if dirs + here > most {
            format!(
                "{} directories to read, more than the {most} it reads ({what_to_do})",
                dirs + here
            )
        } else if entries > MOST_ENTRIES {
            format!("{entries} entries read, more than the {MOST_ENTRIES} it reads ({what_to_do})")
        } else {
            String::new()
        };
        if !why.is_empty() {
            found.cut = Some(format!(
                "the walk for protected places below {} stopped at depth {}: {why}{}",
                root.display(),
                depth - 1,
                through_links(&found.through, via_links + linked.len())
            ));
            return found;
        }
        via_links += linked.len();
        dirs += here;
        found.read = dirs;
        let enter = depth < deepest;
        let read = read_level(&level, names, enter, bounds, memory.as_ref(), give_back);
        let through = read_level(&linked, names, enter, bounds, None, give_back);
        if let Some(dir) = read.unreadable.first().or(through.unreadable.first()) {
            found.cut = Some(format!(
                "the walk for protected places below {} could not read {}, which is yours: a confined command could have made it unreadable to keep a place in it from being held (make it readable: chmod u+rx '{}')",
                crate::aftermath::shown(root),
                crate::aftermath::shown(dir),
                crate::aftermath::shown(dir)
            ));
            return found;
        }
        entries += read.entries + through.entries;
        found.listed += read.listed + through.listed;
        found.given_back.extend(read.given_back);
        found.given_back.extend(through.given_back);
        seen.extend(read.seen);
        let holding = read.holding.into_iter().chain(through.holding);
        found.dirs.extend(holding.filter(|d| d != root));
        level = read.next;
        linked = through.next;
        if enter {
            for link in read.links.iter().chain(&through.links) {
                let targets = targets.get_or_insert_with(|| Targets::new(root, within, names));
                match targets.entered(link, bounds) {
                    Led::Into(target) => {
                        linked.push(target.clone());
                        found.through.push((link.clone(), target));
                    }
                    Led::Unjudged => found.unjudged.push(link.clone()),
                    Led::Elsewhere => {}
                }
            }
        }
    }
    // A directory reached both by its own path and through a link is held once.
    let mut once = std::collections::HashSet::new();
    found.dirs.retain(|d| once.insert(d.clone()));
    if let Some(memory) = &memory {
        // `None`: recalled, so trusted (as the memory had it).
        found.kept = (seen.iter())
            .filter(|(_, s)| s.as_ref().is_none_or(|s| s.trusted))
            .count();
        memory.keep(&seen);
    }
    found
}

/// What besides the root and the names decides what a walk reads (its memory is kept per
/// key): the depth and the names never entered (this version's and the user's `skip`).
fn key(bounds: &Bounds) -> Vec<u8> {
    let mut key = format!(
        "{}\0{}",
        bounds.depth.min(MAX_DEPTH),
        NOT_ENTERED.join("\0")
    );
    for s in &bounds.skip {
        key.push('\0');
        key.push_str(s);
    }
    key.into_bytes()
}

/// Read the directories of one level (by several threads where there are many).
fn read_level(
    level: &[PathBuf],
    names: &[&str],
    enter: bool,
    bounds: &Bounds,
    memory: Option<&Memory>,
    give_back: GiveBack,
) -> Read {
    if level.len() < PARALLEL_FROM {
        return read_dirs(level, names, enter, bounds, memory, give_back);
    }
    // Asked only here: it reads the cgroup's files each time (four system calls or more).
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4);
    if threads < 2 {
        return read_dirs(level, names, enter, bounds, memory, give_back);
    }
    let chunk = level.len().div_ceil(threads);
    let parts: Vec<Read> = std::thread::scope(|s| {
        let handles: Vec<_> = level
            .chunks(chunk)
            .map(|part| {
                let h = s.spawn(move || read_dirs(part, names, enter, bounds, memory, give_back));
                (part, h)
            })
            .collect();
        handles
            .into_iter()
            .map(|(part, h)| {
                h.join().unwrap_or_else(|_| Read {
                    unreadable: part.to_vec(),
                    ..Read::default()
                })
            })
            .collect()
    });
    let mut out = Read::default();
    for p in parts {
        out.holding.extend(p.holding);
        out.next.extend(p.next);
        out.entries += p.entries;
        out.unreadable.extend(p.unreadable);
        out.listed += p.listed;
        out.seen.extend(p.seen);
        out.given_back.extend(p.given_back);
        out.links.extend(p.links);
    }
    out
}

/// Read each of `dirs` (opened without following a link): whether it holds one of `names`,
/// and, with `enter`, its subdirectories to read next.
fn read_dirs(
    dirs: &[PathBuf],
    names: &[&str],
    enter: bool,
    bounds: &Bounds,
    memory: Option<&Memory>,
    give_back: GiveBack,
) -> Read {
    use rustix::io::Errno;
    use std::os::unix::ffi::OsStrExt;
    let mut out = Read::default();
    for dir in dirs {
        if let Some(memory) = memory {
            // As the last walk read it: taken as it is (one `lstat`, no listing).
            let now = memory.stamp(dir);
            // One holding a link is listed again: where a link leads may have changed though
            // the directory did not (attack rounds 18 and 19: a link left as made before, where
            // it led filled later with a `.git`, or a link on its way pointed elsewhere).
            let recalled = now.and_then(|now| memory.recall(dir, &now, enter));
            let recalled = recalled.filter(|s| !s.links);
            if let Some(seen) = recalled {
                out.entries += seen.entries as usize;
                if seen.holds {
                    out.holding.push(dir.clone());
                }
                let subdirs = seen.subdirs();
                out.next
                    .extend(subdirs.map(|n| dir.join(std::ffi::OsStr::from_bytes(n))));
                out.seen.push((dir.clone(), None));
                continue;
            }
        }
        out.listed += 1;
        match list(dir, names, enter, bounds, memory.is_some(), give_back) {
            Ok(l) => {
                if l.given_back {
                    out.given_back.push(dir.clone());
                }
                out.links.extend(l.links);
                if let (Some(memory), Some(stamp), true) = (memory, l.stamp, l.whole) {
                    let mut subdirs = Vec::new();
                    for name in l.next.iter().filter_map(|p: &PathBuf| p.file_name()) {
                        subdirs.extend_from_slice(name.as_bytes());
                        subdirs.push(0);
                    }
                    let seen = Seen {
                        stamp,
                        entries: u32::try_from(l.entries).unwrap_or(u32::MAX),
                        holds: l.holds,
                        links: l.has_links,
                        entered: enter,
                        subdirs,
                        trusted: memory.trusts(&stamp),
                    };
                    out.seen.push((dir.clone(), Some(seen)));
                }
                out.entries += l.entries;
                out.next.extend(l.next);
                if l.holds {
                    out.holding.push(dir.clone());
                }
            }
            // The user's own directory made unreadable (`chmod 000 web`): the command could
            // make it readable again once its places are no longer found. Another user's
            // stays as it is (the command cannot change its mode).
            Err(Errno::ACCESS | Errno::PERM) if owned(dir) => {
                out.unreadable.push(dir.clone());
            }
            // Gone, or a link: nothing in it counts.
            Err(_) => {}
        }
    }
    out
}

/// What listing one directory gave.
struct Listing {
    /// Whether it was read to its end (a listing cut by an error is not remembered).
    whole: bool,
    /// Whether its owner's reading or search was given back to read it (`give_back`).
    given_back: bool,
    /// Its symbolic links (where entered: [`Targets`]).
    links: Vec<PathBuf>,
    /// Whether it holds a symbolic link (or an entry of a type not told) that the walk enters
    /// where it leads (read above the last level).
    has_links: bool,
    holds: bool,
    entries: usize,
    /// Its subdirectories to read next (where entered).
    next: Vec<PathBuf>,
    /// Its stamp, taken before it was listed (where `stamp` was asked).
    stamp: Option<Stamp>,
}

/// List `dir` (opened without following a link): whether it holds one of `names`, its entries,
/// and with `enter` its subdirectories to read next. Unreadable partway, what was read counts
/// (as nix's iterator, whose errors the walk skipped).
fn list(
    dir: &Path,
    names: &[&str],
    enter: bool,
    bounds: &Bounds,
    stamp: bool,
    give_back: GiveBack,
) -> Result<Listing, rustix::io::Errno> {
    use super::disk::{names_in, open_dir, Kind};
    use rustix::io::Errno;
    use std::os::unix::ffi::OsStrExt;
    // The command's end (`give_back`): one of the user's own directories that the command made
    // unreadable or unsearchable (`chmod 000 web`, `chmod 600 web`: its names are there, but
    // whether `web/.claude` exists cannot be asked, and git and the agents go through it again
    // once its owner gives the search back) is given its owner's reading and search back (never
    // through a link: `aftermath::give_back_reading`), and read. At a command's start, such a
    // directory is unreadable: the walk is cut, the command does not run. Root needs neither.
    let mut given_back = false;
    let mut give = |why: Errno| {
        if give_back.gives(dir) && owned(dir) && crate::aftermath::give_back_reading(dir) {
            given_back = true;
            Ok(())
        } else {
            Err(why)
        }
    };
    let fd = match open_dir(dir, true) {
        Err(e @ (Errno::ACCESS | Errno::PERM)) => {
            give(e)?;
            open_dir(dir, true)?
        }
        opened => opened?,
    };
    // Asked here, not once per process: a test's child walks as another user after a fork.
    let me = nix::unistd::geteuid().as_raw();
    let st = (stamp || me != 0)
        .then(|| rustix::fs::fstat(&fd).ok())
        .flatten();
    if st.is_some_and(|st| me != 0 && st.st_uid == me && st.st_mode & 0o500 != 0o500) {
        give(Errno::ACCESS)?;
    }
    let mut l = Listing {
        whole: false,
        given_back,
        links: Vec::new(),
        has_links: false,
        holds: false,
        entries: 0,
        next: Vec::new(),
        // Stamped before it is read, from the directory read: a change meanwhile leaves a newer
        // change time than the one kept, so the next walk reads it again.
        stamp: st.filter(|_| stamp).map(|st| Stamp::of(&st)),
    };
    let read = names_in(&fd, |name, kind| {
        l.entries += 1;
        if names.iter().any(|n| n.as_bytes() == name) {
            l.holds = true;
            return true;
        }
        // Where its links are entered (above the last level), it is listed again at every walk.
        l.has_links |= enter && matches!(kind, Kind::Link | Kind::Unknown);
        if enter && matches!(kind, Kind::Link | Kind::Unknown) {
            let path = dir.join(std::ffi::OsStr::from_bytes(name));
            if kind == Kind::Link || path.symlink_metadata().is_ok_and(|m| m.is_symlink()) {
                l.links.push(path);
                return true;
            }
        }
        if !enter || !bounds.enters(name) {
            return true;
        }
        let path = dir.join(std::ffi::OsStr::from_bytes(name));
        // The type from the directory entry itself (no `stat`, except on a filesystem that
        // does not say); a link is not a directory here.
        let is_dir = match kind {
            Kind::Unknown => path.symlink_metadata().is_ok_and(|m| m.is_dir()),
            kind => kind == Kind::Dir,
        };
        if is_dir {
            l.next.push(path);
        }
        true
    });
    l.whole = read.is_ok();
    Ok(l)
}

/// Whether `dir` belongs to this process's user.
fn owned(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    dir.symlink_metadata()
        .is_ok_and(|m| m.uid() == nix::unistd::geteuid().as_raw())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_three_levels_down_and_not_below() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for dir in [
            "web/.claude",
            "a/b/.git/hooks",
            "a/b/c/.claude",
            "node_modules/x/.claude",
            ".claude/y/.env",
            "t/linked",
        ] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
        }
        std::fs::write(r.join("web/.env"), "").unwrap();
        std::fs::write(r.join(".env"), "").unwrap();
        std::os::unix::fs::symlink(r.join("web"), r.join("t/link")).unwrap();
        let f = walk(r, &[".claude", ".env", ".git"], &Bounds::default());
        assert_eq!(f.dirs, [r.join("web"), r.join("a/b")]);
        assert_eq!(f.cut, None);
    }

    #[test]
    fn bounds_skip_names_reach_deeper_and_move_the_refusal() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for dir in ["vendor/x/.claude", "a/b/c/.claude", "web/.claude"] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
        }
        let names = [".claude"];
        let skip = Bounds::new(None, None, vec!["vendor".into()]);
        assert_eq!(walk(r, &names, &skip).dirs, [r.join("web")]);
        let deeper = Bounds::new(Some(4), None, Vec::new());
        let mut found = walk(r, &names, &deeper).dirs;
        found.sort();
        assert_eq!(found, [r.join("a/b/c"), r.join("vendor/x"), r.join("web")]);
        assert!(walk(r, &names, &Bounds::new(Some(1), None, Vec::new()))
            .dirs
            .is_empty());
        let few = walk(r, &names, &Bounds::new(None, Some(3), Vec::new()));
        assert!(few
            .cut
            .is_some_and(|c| c.contains("more than the 3 it reads")));
    }

    /// Attack round 19: a link in a walked directory exposes where it leads as if it stood
    /// there (`git status` in `pkgs/sub` through `pkgs -> node_modules/p` reads `p/sub/.git`).
    /// The walk enters it, at the link's level, at the directory's own path: through a chain of
    /// links, below `node_modules`, to the walk's depth counted from the link; each directory
    /// once however many links lead to it; never outside the roots, never the root again, never
    /// by a name it does not enter.
    #[test]
    fn a_link_is_entered_as_the_directory_it_leads_to_once_and_only_inside_the_roots() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let top = d.path().canonicalize().unwrap();
        let r = top.join("p");
        for dir in [
            "node_modules/p/sub/.git",
            "node_modules/q/.claude",
            "node_modules/r/.vscode",
            "node_modules/s/.claude",
            "deep/1/2/3/.vscode",
            "a",
            "w",
            "many",
        ] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
        }
        std::fs::create_dir_all(top.join("outside/.claude")).unwrap();
        symlink("node_modules/p", r.join("pkgs")).unwrap();
        // A chain: the walk reads where it ends.
        symlink("q", r.join("node_modules/chain")).unwrap();
        symlink("node_modules/chain", r.join("c1")).unwrap();
        // Deeper than the walk reads by the tree, one level below by the link.
        symlink("deep/1/2", r.join("far")).unwrap();
        symlink("../outside", r.join("out")).unwrap();
        symlink(".", r.join("self")).unwrap();
        symlink("../node_modules/r", r.join("w/node_modules")).unwrap();
        for i in 0..1000 {
            symlink("../node_modules/p", r.join(format!("many/l{i}"))).unwrap();
        }
        // At the walk's last level, a link is not entered (as a directory there is not).
        std::fs::create_dir_all(r.join("a/b")).unwrap();
        symlink("../../node_modules/s", r.join("a/b/s")).unwrap();
        let f = walk(&r, &[".git", ".claude", ".vscode"], &Bounds::default());
        assert_eq!(f.cut, None);
        let mut dirs = f.dirs.clone();
        dirs.sort();
        assert_eq!(
            dirs,
            [
                r.join("deep/1/2/3"),
                r.join("node_modules/p/sub"),
                r.join("node_modules/q"),
            ]
        );
        let mut through: Vec<_> = f.through.iter().map(|(l, _)| l.clone()).collect();
        through.sort();
        assert_eq!(through, [r.join("c1"), r.join("far"), r.join("pkgs")]);
        // The thousand links to `p` cost a `stat` each, not a reading: `p` and `sub` once.
        assert!(f.read < 20, "{} directories read", f.read);
    }

    /// A walk cut by what a link leads to says which link, and how to keep the walk out
    /// (attack round 20, F2: `deps -> node_modules` made every later command refused with a
    /// message naming neither); a link's name in `skip` keeps it out.
    #[test]
    fn a_walk_cut_through_a_link_names_it() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path().canonicalize().unwrap().join("p");
        for i in 0..10 {
            std::fs::create_dir_all(r.join(format!("node_modules/p{i}"))).unwrap();
        }
        std::os::unix::fs::symlink("node_modules", r.join("deps")).unwrap();
        let cut = walk(&r, &[".git"], &Bounds::new(None, Some(8), Vec::new())).cut;
        assert_eq!(
            cut.as_deref(),
            Some(
                format!(
                    "the walk for protected places below {} stopped at depth 2: 12 directories to read, more than the 8 it reads (remove what makes the tree that large, run the command from a smaller project, or bound the walk in your ~/.infer/config.yaml: `sandbox.walk.skip` (directory names not entered), `sandbox.walk.depth`, `sandbox.walk.most_dirs`); 11 of them through links the walk entered as the directories they lead to ({} -> {}): remove such a link, or name it in `sandbox.walk.skip` to keep the walk out of where it leads",
                    r.display(),
                    r.join("deps").display(),
                    r.join("node_modules").display()
                )
                .as_str()
            )
        );
        let skip = Bounds::new(None, Some(8), vec!["deps".into()]);
        assert_eq!(walk(&r, &[".git"], &skip).cut, None);
    }

    /// A link whose way passes `/proc/self/cwd` leads each process somewhere else, and one to a
    /// directory whose path is longer than a path may be cannot be followed by name: neither
    /// is entered, both said apart (attack round 20, F1); a loop of plain links is neither.
    #[test]
    fn a_link_through_proc_is_told_apart() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let r = d.path().canonicalize().unwrap().join("p");
        std::fs::create_dir_all(r.join("a")).unwrap();
        symlink("/proc/self/cwd/../node_modules/q", r.join("a/x")).unwrap();
        symlink("/proc/self/root/tmp", r.join("a/y")).unwrap();
        symlink("l2", r.join("a/l1")).unwrap();
        symlink("l1", r.join("a/l2")).unwrap();
        symlink("/tmp", r.join("a/plain")).unwrap();
        // A directory whose own path is longer than a path may be (reached through two links,
        // each short enough): it cannot be named, so not looked in.
        let names: Vec<String> = (0..25).map(|i| format!("{i:0>200}")).collect();
        let mut dir = rustix::fs::open(&r, rustix::fs::OFlags::DIRECTORY, 0.into()).unwrap();
        for n in &names {
            rustix::fs::mkdirat(&dir, n.as_str(), 0o755.into()).unwrap();
            dir = rustix::fs::openat(&dir, n.as_str(), rustix::fs::OFlags::DIRECTORY, 0.into())
                .unwrap();
        }
        symlink(format!("../{}", names[..12].join("/")), r.join("a/half")).unwrap();
        symlink(format!("half/{}", names[12..].join("/")), r.join("a/long")).unwrap();
        let f = walk(&r, &[".git"], &Bounds::default());
        let mut unjudged = f.unjudged.clone();
        unjudged.sort();
        assert_eq!(unjudged, [r.join("a/long"), r.join("a/x"), r.join("a/y")]);
    }

    /// A remembered walk lists a directory holding a link again, though it did not change:
    /// the link's target may have (a link on its way pointed elsewhere, attack round 19, F1).
    #[test]
    fn a_remembered_walk_looks_again_where_a_link_leads() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let (r, memory) = (
            d.path().canonicalize().unwrap().join("p"),
            d.path().join("walks"),
        );
        for dir in ["node_modules/p", "node_modules/q/.git", "src/lib"] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
        }
        symlink("p", r.join("node_modules/a")).unwrap();
        symlink("node_modules/a", r.join("pkgs")).unwrap();
        if !crate::walk_memory::remembers(&r) {
            eprintln!("skipped: the temporary directory's filesystem is not one a walk trusts");
            return;
        }
        std::thread::sleep(std::time::Duration::from_nanos(
            crate::walk_memory::MARGIN_NS as u64 + 200_000_000,
        ));
        let remembered = || walk_remembered(&r, &[".git"], &Bounds::default(), Some(&memory));
        assert!(remembered().dirs.is_empty());
        let again = remembered();
        assert!(again.dirs.is_empty());
        // `src` and `src/lib` recalled; the root (it holds the link) and `p` read again.
        assert_eq!((again.read, again.listed), (4, 2));
        std::fs::remove_file(r.join("node_modules/a")).unwrap();
        symlink("q", r.join("node_modules/a")).unwrap();
        assert_eq!(remembered().dirs, [r.join("node_modules/q")]);
    }

    /// A second walk lists only what changed since the first (which is old enough to trust),
    /// and finds what a plain walk finds: a name made in a remembered directory, a directory
    /// replaced by a link, a directory made unreadable; a memory that is not one is ignored.
    #[test]
    fn a_remembered_walk_lists_only_what_changed_and_finds_what_a_plain_one_does() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let (r, memory) = (d.path().join("p"), d.path().join("walks"));
        for dir in ["web/src", "a/b/c", "lib/x", "lib/y", "other/.claude"] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
        }
        let names = [".claude", ".env", ".git"];
        let plain = || walk(&r, &names, &Bounds::default());
        let remembered = || walk_remembered(&r, &names, &Bounds::default(), Some(&memory));
        // Made just now: no walk trusts what it reads of them (their change time is too recent).
        let first = remembered();
        if !crate::walk_memory::remembers(&r) {
            eprintln!("skipped: the temporary directory's filesystem is not one a walk trusts");
            return;
        }
        assert_eq!((first.listed, first.read, first.kept), (9, 9, 0));
        assert_eq!(remembered().listed, 9, "too recent to be trusted");
        std::thread::sleep(std::time::Duration::from_nanos(
            crate::walk_memory::MARGIN_NS as u64 + 200_000_000,
        ));
        let old = remembered();
        assert_eq!(
            (old.listed, old.kept),
            (9, 9),
            "read again once old enough, and kept"
        );
        let again = remembered();
        assert_eq!((again.listed, again.read, again.kept), (0, 9, 9));
        assert_eq!(again.dirs, plain().dirs);
        assert_eq!(again.dirs, [r.join("other")]);

        // A name made in a remembered directory: that directory alone is read again.
        std::fs::create_dir(r.join("a/b/.claude")).unwrap();
        let made = remembered();
        // Read again, and not kept: it changed within the margin before this walk.
        assert_eq!((made.listed, made.kept), (1, 8));
        assert_eq!(made.dirs, [r.join("other"), r.join("a/b")]);

        // A remembered directory replaced by a link to one holding a name: not entered.
        std::fs::create_dir_all(d.path().join("elsewhere/deep/.env")).unwrap();
        std::fs::remove_dir_all(r.join("lib")).unwrap();
        std::os::unix::fs::symlink(d.path().join("elsewhere"), r.join("lib")).unwrap();
        let linked = remembered();
        assert_eq!(linked.dirs, plain().dirs);
        assert_eq!(linked.dirs, [r.join("other"), r.join("a/b")]);

        // A remembered directory made unreadable: the walk is cut as a plain one is.
        if !nix::unistd::geteuid().is_root() {
            std::fs::set_permissions(r.join("web"), PermissionsExt::from_mode(0o000)).unwrap();
            assert!(remembered().cut.is_some());
            std::fs::set_permissions(r.join("web"), PermissionsExt::from_mode(0o755)).unwrap();
        }

        // Anything in the memory's place but a memory: everything is read.
        for file in std::fs::read_dir(&memory).unwrap() {
            let file = file.unwrap().path();
            let mut bytes = std::fs::read(&file).unwrap();
            let last = bytes.len() - 1;
            bytes[last] ^= 0xff;
            bytes.truncate(last);
            std::fs::write(&file, bytes).unwrap();
        }
        let corrupt = remembered();
        assert_eq!(corrupt.listed, corrupt.read);
        assert_eq!(corrupt.dirs, plain().dirs);
    }

    /// A directory of the user's own made unreadable (`chmod 000 web`, which a confined command
    /// can do between two commands) cuts the walk; as root, run as another user who owns it.
    #[test]
    fn an_unreadable_directory_of_ones_own_cuts_the_walk() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let web = d.path().join("web");
        std::fs::create_dir_all(web.join(".claude")).unwrap();
        let root = nix::unistd::geteuid().is_root();
        let nobody = nix::unistd::Uid::from_raw(65534);
        if root {
            for p in [&web, &web.join(".claude"), &d.path().to_path_buf()] {
                nix::unistd::chown(p.as_path(), Some(nobody), None).unwrap();
            }
        }
        std::fs::set_permissions(&web, std::fs::Permissions::from_mode(0o000)).unwrap();
        let cut = |f: Found| {
            f.cut.is_some_and(|c| {
                c.contains(&format!("could not read {}, which is yours", web.display()))
            })
        };
        if !root {
            assert!(cut(walk(d.path(), &[".claude"], &Bounds::default())));
        } else {
            // SAFETY: the child only drops to another user, walks and exits.
            match unsafe { nix::unistd::fork() }.unwrap() {
                nix::unistd::ForkResult::Child => {
                    let ok = nix::unistd::setgid(nix::unistd::Gid::from_raw(65534)).is_ok()
                        && nix::unistd::setuid(nobody).is_ok()
                        && cut(walk(d.path(), &[".claude"], &Bounds::default()));
                    std::process::exit(if ok { 0 } else { 1 });
                }
                nix::unistd::ForkResult::Parent { child } => {
                    let status = nix::sys::wait::waitpid(child, None).unwrap();
                    assert_eq!(status, nix::sys::wait::WaitStatus::Exited(child, 0));
                }
            }
        }
        std::fs::set_permissions(&web, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}
