//! Where the links a walk lists lead, as the walk takes them: a directory inside one of its
//! roots is entered as the directory the link stands for ([`Targets`]); a link whose way passes
//! one of `/proc`'s per-process links, or to a directory that cannot be named, is not judged
//! ([`Led::Unjudged`]); a cut walk names the links it entered ([`through_links`]).

use std::path::{Path, PathBuf};

use super::{Bounds, MAX_DEPTH};

/// What a cut walk says of the links it entered, where `dirs` of the directories it counted
/// were reached through one: the first few, and how to keep the walk out (attack round 20: one
/// link `deps -> node_modules` made the walk count every package; the message named none).
pub(super) fn through_links(through: &[(PathBuf, PathBuf)], dirs: usize) -> String {
    if dirs == 0 || through.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = (through.iter().take(3))
        .map(|(link, target)| {
            format!(
                "{} -> {}",
                crate::aftermath::shown(link),
                crate::aftermath::shown(target)
            )
        })
        .collect();
    let more = through.len().saturating_sub(shown.len());
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "; {dirs} of them through links the walk entered as the directories they lead to ({}{more}): remove such a link, or name it in `sandbox.walk.skip` to keep the walk out of where it leads",
        shown.join(", ")
    )
}

/// `link` opened (`O_PATH`) without passing a "magic" link of `/proc` (`/proc/self/cwd`,
/// `/proc/PID/root`, `/proc/self/fd/N`, `/dev/fd/N`): those lead, for each process, to its own
/// working directory, root or files, so hookd resolving the link in its own process finds
/// another directory than the user's shell in `a/` does (attack round 20: `a/x ->
/// /proc/self/cwd/../node_modules/q` was dangling to hookd's end, started in the project's
/// root, and `node_modules/q` to a shell in `a/`, whose `git status` ran the command's
/// `core.fsmonitor` there). `Err(true)` where its way passes one; `Err(false)` where it leads
/// nowhere (a loop of plain links included: nowhere for anyone).
fn open_without_magic(link: &Path) -> Result<std::os::fd::OwnedFd, bool> {
    use rustix::fs::{openat2, Mode, OFlags, ResolveFlags, CWD};
    use rustix::io::Errno;
    let flags = OFlags::PATH | OFlags::CLOEXEC;
    match openat2(CWD, link, flags, Mode::empty(), ResolveFlags::NO_MAGICLINKS) {
        Ok(fd) => Ok(fd),
        Err(Errno::LOOP) => {
            let plain = openat2(CWD, link, flags, Mode::empty(), ResolveFlags::empty());
            Err(!matches!(plain, Err(Errno::LOOP)))
        }
        Err(_) => Err(false),
    }
}

/// Where the links a walk lists lead: a directory inside one of its roots is entered, at its
/// own (canonical) path, as the directory the link stands for; each such directory once (by
/// device and inode: ten thousand links to one package cost one reading of it), never the
/// root itself (`self -> .`). A link leading outside the roots leads where a confined command
/// cannot write: nothing it made is there.
pub(super) struct Targets {
    within: Vec<PathBuf>,
    entered: std::collections::HashSet<(u64, u64)>,
    /// The names the walk looks for (which it does not enter).
    names: Vec<Vec<u8>>,
}

impl Targets {
    pub(super) fn new(root: &Path, within: &[PathBuf], names: &[&str]) -> Targets {
        use std::os::unix::fs::MetadataExt;
        let mut entered = std::collections::HashSet::new();
        if let Ok(m) = root.metadata() {
            entered.insert((m.dev(), m.ino()));
        }
        // Resolved once: a link's target is compared as resolved.
        let within = (std::iter::once(root).chain(within.iter().map(PathBuf::as_path)))
            .map(|r| r.canonicalize().unwrap_or_else(|_| r.to_path_buf()))
            .collect();
        let names = names.iter().map(|n| n.as_bytes().to_vec()).collect();
        Targets {
            within,
            entered,
            names,
        }
    }

    /// Whether `real` (resolved) is the git directory of a repository the walk finds by its
    /// own path (a `.git` in a directory it reads): that repository's places are held by the
    /// catalog's `.git/…` rows, and entered as a directory of its own it would be held as a bare
    /// repository, its `HEAD` read-only (`x -> .git` broke `git checkout`). Not a directory
    /// inside it: a repository the command lays out in `.git/evil` is one to git in `x/`
    /// through `x -> .git/evil`, and entered, it is judged as any other.
    fn is_a_walked_git_dir(&self, real: &Path, bounds: &Bounds) -> bool {
        use std::os::unix::ffi::OsStrExt;
        let Some(root) = self.within.iter().find(|w| real.starts_with(w)) else {
            return false;
        };
        let Ok(rel) = real.strip_prefix(root) else {
            return false;
        };
        let parts: Vec<&[u8]> = rel.iter().map(|c| c.as_bytes()).collect();
        let Some(git) = parts.iter().position(|c| *c == b".git") else {
            return false;
        };
        if git + 1 != parts.len() {
            return false;
        }
        // Its repository's directory is read by the walk: within its depth, reached through
        // names it enters.
        git < bounds.depth.min(MAX_DEPTH)
            && (parts[..git].iter()).all(|c| bounds.enters(c) && !self.names.iter().any(|n| n == c))
    }

    /// Where `link` leads, as the walk takes it.
    pub(super) fn entered(&mut self, link: &Path, bounds: &Bounds) -> Led {
        use std::os::unix::ffi::OsStrExt;
        let named = link.file_name().map(OsStrExt::as_bytes);
        if !named.is_some_and(|n| bounds.enters(n)) {
            return Led::Elsewhere;
        }
        let st = match open_without_magic(link).map(|fd| rustix::fs::fstat(&fd)) {
            Ok(Ok(st)) => st,
            Err(true) => return Led::Unjudged,
            Ok(Err(_)) | Err(false) => return Led::Elsewhere,
        };
        let dir =
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory;
        if !dir || !self.entered.insert((st.st_dev, st.st_ino)) {
            return Led::Elsewhere;
        }
        match std::fs::canonicalize(link) {
            Ok(real) if self.is_a_walked_git_dir(&real, bounds) => Led::Elsewhere,
            Ok(real) if self.within.iter().any(|w| real.starts_with(w)) => Led::Into(real),
            Ok(_) => Led::Elsewhere,
            // A directory there that cannot be named (a way longer than a path may be, or
            // changed meanwhile): what it holds cannot be looked at.
            Err(_) => Led::Unjudged,
        }
    }
}

/// Where a link leads, as the walk takes it ([`Targets::entered`]).
pub(super) enum Led {
    /// A directory inside a root, not entered yet: entered, at this (its own) path.
    Into(PathBuf),
    /// Nowhere the walk enters: nothing, a file, outside the roots, a directory entered
    /// already, or through a name it does not enter.
    Elsewhere,
    /// Somewhere it cannot tell as every process would ([`Found::unjudged`]).
    Unjudged,
}
