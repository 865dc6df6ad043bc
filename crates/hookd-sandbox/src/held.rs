//! The places a confined command may not write or move, found on disk for one command: the
//! catalog's names at the project's root and on the way to the working directory, those that
//! exist below the roots off that way (`crate::walk`), what git reads there besides `.git`
//! (`crate::git`), the catalog's places inside writable ones; absent ones get stand-ins
//! (`placeholder`) except below, and a link where one lies, or above it in a writable place,
//! stops the command.

use std::path::{Path, PathBuf};

use super::placeholder::{Placeholders, Provided, Stand};
use super::{Disk, Unavailable};
use crate::below::{Again, Below};
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
    /// Links in a writable place on the way to a held place that lies outside every writable
    /// one (`~/.nvm -> /opt/nvm`), or to a hidden place wherever it lies (`~/.ssh ->
    /// dotfiles/ssh`): what they lead to is held, but the link itself could be replaced by a
    /// directory of the command's, which your next shell or `ssh` would read (attack rounds 27
    /// and 28, B1). Each is bound onto itself without being followed, where it lies.
    pub(super) links: Vec<PathBuf>,
    /// Stand-ins shown to the command as an empty file (`Finder::read_at_start`).
    pub(super) emptied: Vec<PathBuf>,
    /// What the judging of earlier commands' deferred records moved aside, said
    /// (`deferred.rs`).
    pub(super) said: Vec<String>,
    /// The links below the roots the walk could not judge at the start
    /// (`crate::walk::Found::unjudged`): said, since only the end of a command that made one
    /// moves it aside, and no end looks in a tree too large for its second walk.
    pub(super) unjudged: Vec<PathBuf>,
    /// What the walk found below the roots, to tell what the command made there.
    pub(super) below: Below,
}

/// The name git looks for, beside `objects/` and `refs/` (or a `commondir`), to take a directory
/// without a `.git` for a repository of its own (a bare one): `git status` there runs that
/// directory's `config` (`core.fsmonitor`). The walk looks for it with the catalog's names; a
/// directory laid out so is held as a `.git` is, and one laid out so by the command is moved
/// aside at its end (its `HEAD`), as a `.git` it made would be (no new repository below).
pub(super) const BARE_HEAD: &str = "HEAD";

/// What makes a directory a repository's layout besides its `HEAD` ([`bare_layout`]).
pub(super) const LAYOUT: [&str; 4] = [BARE_HEAD, "objects", "refs", "commondir"];

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

    /// Pin the links on the way to `path`, a held place, that lie in a writable place
    /// ([`links_on_the_way`]), each once.
    pub(super) fn pin_links_on_the_way(&mut self, path: &Path, writable: &[PathBuf], real: &Disk) {
        for link in links_on_the_way(path, writable, real) {
            if !self.links.contains(&link) {
                self.links.push(link);
            }
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

    /// Drop the pinned places that lie in a read-only directory (or are one): its read-only
    /// mount keeps them from being renamed or removed already, and a place bound onto itself
    /// before it would be carried into its bind writable (`mount_setattr` makes the top mount
    /// read-only, not those below it, which are left so for a writable root that lies inside:
    /// a project in `~/.vim/pack/`). `~/.vscode-server/data` and `data/User`, pinned for the
    /// hidden `data/User/globalStorage`, left `data/Machine/settings.json` writable with the
    /// agent started in the home.
    pub(super) fn unpin_inside_read_only(&mut self, real: &Disk) {
        let dirs: Vec<PathBuf> = (self.read_only.iter())
            .filter(|p| p.is_dir())
            .map(|p| real.real(p))
            .collect();
        if dirs.is_empty() {
            return;
        }
        self.pinned.retain(|p| {
            let p = real.real(p);
            !dirs.iter().any(|d| p.starts_with(d))
        });
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
    /// Whether the place at `path` is one a program reads at each of its starts, failing where
    /// it cannot read one that is there ([`Places::read_at_start`]): a socket made git exit 128
    /// (`unable to access '~/.gitconfig': No such device or address`: attack round 21, F3, with
    /// the home writable and no `~/.gitconfig`) and every cargo command fail (`could not load
    /// Cargo configuration`: round 27, F1). Its stand-in stays a socket on disk (what other
    /// commands and ends know for one), and is shown to the command as an empty file: bound
    /// over by `/dev/null`, as a hidden file is. Compared where they lie, resolved (a place
    /// found by name at a root that is the home is the home's row).
    fn read_at_start(&self, path: &Path) -> bool {
        let list = &self.places.read_at_start;
        list.iter().any(|p| p == path) || {
            let real = self.real.real(path);
            list.iter().any(|p| self.real.real(p) == real)
        }
    }

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
        if first == path && stand == Stand::Socket && self.read_at_start(&path) {
            self.held.emptied.push(path.clone());
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
    names: &[&str],
    places: &Places,
    root: &Path,
    memory: Option<&Path>,
    roots: &[PathBuf],
) -> Result<crate::walk::Found, Unavailable> {
    let at = crate::walk::GiveBack::Never;
    let found = crate::walk::walk_confined(root, names, &places.walk, memory, roots, at);
    match found.cut {
        Some(cut) => Err(Unavailable::Prepare(format!(
            "{cut}; a place below it could not be held read-only"
        ))),
        None => Ok(found),
    }
}

/// What the records of earlier commands whose ends did not look below (`deferred`) say they
/// made in `dir`, added to `judged` (each once); a record of another project only where its
/// walks read ([`Below::reads`]).
fn judge_deferred(deferred: &[crate::deferred::Deferred], dir: &Path, judged: &mut Again) {
    for d in deferred
        .iter()
        .filter(|d| d.whole || d.below.reads(dir, false))
    {
        for made in d.below.made_in_found(dir) {
            if !judged.made.contains(&made) {
                judged.made.push(made);
            }
        }
    }
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

/// Where a command runs: its project, and the directory it is run from.
pub(super) struct Run<'a> {
    pub(super) project: &'a Path,
    pub(super) cwd: &'a Path,
}

/// What `policy` holds for a command in `run`'s project run from its directory, with
/// `writable` the places it may write; absent places held by name get stand-ins from
/// `stand_ins`. What earlier commands' ends left for this start to judge (`deferred`) is
/// moved aside first.
pub(super) fn held(
    places: &Places,
    run: Run<'_>,
    writable: &[PathBuf],
    stand_ins: &mut Placeholders,
    hidden: &[PathBuf],
    real: &Disk,
    deferred: &[crate::deferred::Deferred],
) -> Result<Held, Unavailable> {
    let Run { project, cwd } = run;
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
    // The roots besides the project (computed here: what earlier commands left on them is
    // judged first, with the way).
    let roots: Vec<PathBuf> = (writable.iter())
        .filter(|w| !w.starts_with(project) && w.is_dir())
        .cloned()
        .collect();
    // What earlier commands' ends left to this start on the way to its working directory and
    // at the roots (`deferred.rs`): judged before anything there is held, as below (attack
    // round 23: a repository planted in `big/d5` in a large tree, where the agent's shell went
    // next, was held as found and kept for good).
    let mut judged = Again::default();
    for dir in on_path.iter().chain(&roots) {
        judge_deferred(deferred, dir, &mut judged);
    }
    crate::said(judged, &mut find.held.said);
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
        // The names the end's walk looks for too (its memory is kept under them).
        let walked: Vec<String> = (find.held.below.walked().into_iter())
            .map(String::from)
            .collect();
        let walked: Vec<&str> = walked.iter().map(String::as_str).collect();
        let all = find.held.below.roots.clone();
        for root in &all {
            let found = below(&walked, places, root, memory, &all)?;
            find.held.below.read += found.read;
            let mut judged = Again::default();
            for link in found.unjudged {
                let in_record = |d: &crate::deferred::Deferred| {
                    let dir = link.parent().unwrap_or(&link);
                    (d.whole || d.below.reads(dir, true)) && d.below.fresh(&link)
                };
                if deferred.iter().any(in_record) {
                    judged.unjudged.push(link);
                    continue;
                }
                find.held.below.was(&link);
                find.held.unjudged.push(link);
            }
            for dir in found.dirs.iter().filter(|d| !on_path.contains(d)) {
                judge_deferred(deferred, dir, &mut judged);
            }
            // Moved aside before anything below is held or recorded.
            crate::said(judged, &mut find.held.said);
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
        } else {
            held.pin_links_on_the_way(&path, writable, real);
        }
    }
    held.sort();
    Ok(held)
}

/// The links met on the way to `path` (itself included), resolved as the kernel resolves it
/// ([`crate::resolve_noting`]), that lie in one of `writable`, where they lie: a link reached
/// only through another one (`~/.nvm -> l2 -> /opt/nvm`: attack round 28, B1, `l2` replaced)
/// is one.
pub(super) fn links_on_the_way(path: &Path, writable: &[PathBuf], real: &Disk) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if real.real(path) == path {
        return out; // no link on the way (resolved once, remembered)
    }
    crate::resolve_noting(path, |link| {
        let dir = link.parent().unwrap_or(link);
        if writable.iter().any(|w| dir.starts_with(w)) && !out.iter().any(|l| l == link) {
            out.push(link.to_path_buf());
        }
    });
    out
}
