//! What a confined command leaves behind that git runs later, outside the sandbox, looked at
//! once the command (and everything it started) has ended.
//!
//! git's sequencer state is not configuration, and ordinary git work writes it (a rebase, a
//! cherry-pick, a revert stopped at a conflict), so it stays writable. But its to-do list runs
//! its `exec` lines at the user's `git rebase --continue` (or an IDE's "Continue" button):
//! a confined command that made or changed one with an `exec` line (or made it anything but a
//! plain file) has its state moved aside, named, before anyone continues it.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The sequencer's states in a git directory: the state directory and its to-do list (`git am`'s
/// and `git rebase --apply`'s has none: its patches are what it applies).
const TODOS: [(&str, &str); 3] = [
    ("rebase-merge", "git-rebase-todo"),
    ("sequencer", "todo"),
    ("rebase-apply", ""),
];

/// The state directories of a stopped rebase, cherry-pick or `am` in a git directory.
pub(crate) const STATES: [&str; 3] = ["rebase-merge", "rebase-apply", "sequencer"];

/// A stopped rebase, cherry-pick or `am` as it was before the command: what a `--continue` of it
/// only ever consumes, never adds to or changes. `None` where there is none.
#[derive(Debug, PartialEq)]
struct Stopped {
    /// `orig-head` (what `--abort` resets to).
    orig_head: Option<Stamp>,
    /// The to-do list's lines (a `--continue` moves them to `done`, never adds one).
    todo: Vec<String>,
    /// `am`'s numbered patches (a `--continue` applies them as they are).
    patches: Vec<(std::ffi::OsString, Option<Stamp>)>,
}

fn stopped(state: &Path, todo: &Path) -> Option<Stopped> {
    let entries = std::fs::read_dir(state).ok()?;
    let mut patches: Vec<(std::ffi::OsString, Option<Stamp>)> = entries
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            let n = n.as_encoded_bytes();
            n.len() == 4 && n.iter().all(u8::is_ascii_digit)
        })
        .map(|e| (e.file_name(), stamp(&e.path())))
        .collect();
    patches.sort();
    Some(Stopped {
        orig_head: stamp(&state.join("orig-head")),
        todo: todo_lines(todo),
        patches,
    })
}

/// The to-do list's lines that do something (no comment, no blank).
fn todo_lines(todo: &Path) -> Vec<String> {
    let text = crate::disk::read_plain(todo, 16 << 20).unwrap_or_default();
    String::from_utf8_lossy(&text)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(String::from)
        .collect()
}

impl Stopped {
    /// Whether `now` (the same state after the command) holds something a `--continue` of this
    /// one would not: a new or changed to-do line, another `orig-head`, a patch changed.
    fn changed_into(&self, now: &Stopped) -> bool {
        let mut left = self.todo.clone();
        let new_line = now
            .todo
            .iter()
            .any(|l| match left.iter().position(|o| o == l) {
                Some(i) => {
                    left.remove(i);
                    false
                }
                None => true,
            });
        let patch_changed = now.patches.iter().any(|(n, s)| {
            self.patches.iter().any(|(o, was)| o == n && was != s)
                || !self.patches.iter().any(|(o, _)| o == n)
        });
        new_line || now.orig_head != self.orig_head || patch_changed
    }
}

/// A file as it was: inode, size, modification time, and change time (which nobody sets: a
/// command that rewrote the file in place and put its modification time back, `touch -r`,
/// changed it; attack round 11, F9).
type Stamp = (u64, u64, i64, i64, i64, i64);

fn stamp(path: &Path) -> Option<Stamp> {
    let m = path.symlink_metadata().ok()?;
    Some((
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    ))
}

/// The to-do lists of the git directories a command may write, and the index of the work tree
/// it runs in, as they were before it ran.
#[derive(Debug, Default)]
pub(crate) struct Aftermath {
    todos: Vec<(PathBuf, PathBuf, Option<Stamp>, Option<Stopped>)>,
    /// The work tree and its index as it was.
    index: Option<(PathBuf, Option<Stamp>)>,
    /// The git that looks at the index ([`crate::Policy::git`]).
    git: Option<PathBuf>,
    /// The work tree's `.git` directory, where it was one to git at the start.
    git_dir: Option<PathBuf>,
    /// Where the stopped states confined commands started are recorded (`STATE/sequencer`).
    records: Option<PathBuf>,
    /// Each git directory and the entries of its stash log as they were.
    stashes: Vec<(PathBuf, Vec<String>)>,
}

/// The entries of the stash log of the git directory `git_dir` (`logs/refs/stash`), oldest
/// first (the newest is `stash@{0}`); none where it is absent, not a plain file or larger than
/// git's stash ever grows in practice.
fn stash_entries(git_dir: &Path) -> Vec<String> {
    let log = git_dir.join("logs/refs/stash");
    let text = crate::disk::read_plain(&log, 4 << 20).unwrap_or_default();
    String::from_utf8_lossy(&text)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect()
}

/// What the stash of `git_dir` holds now that it did not before (`was`), said: a `git stash pop`
/// applies the newest entry, and one the command pushed (with a message copied from yours, it
/// looks like yours in `git stash list`) puts its content in your work tree outside the sandbox
/// (attack round 13, F8d). `git stash` works confined, so this is said, not refused.
fn stash_said(git_dir: &Path, was: &[String]) -> Option<String> {
    let now = stash_entries(git_dir);
    let mut left: Vec<&String> = was.iter().collect();
    let mut new = Vec::new();
    // Newest first, as `git stash list` numbers them.
    for (i, line) in now.iter().rev().enumerate() {
        match left.iter().position(|o| *o == line) {
            Some(k) => {
                left.remove(k);
            }
            None => new.push(format!("stash@{{{i}}}")),
        }
    }
    if new.is_empty() {
        return None;
    }
    Some(format!(
        "the confined command pushed {} onto the stash in {} ({}): `git stash pop` applies the newest entry outside the sandbox, so look at each (`git stash show -p stash@{{0}}`) and drop what is not yours",
        if new.len() == 1 { "an entry".to_string() } else { format!("{} entries", new.len()) },
        shown(git_dir),
        new.join(", ")
    ))
}

/// The record of a stopped state a confined command started, in `records`: named after the
/// state directory's path, holding its device and inode.
fn record_of(records: &Path, state: &Path) -> PathBuf {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in state.as_os_str().as_encoded_bytes() {
        hash = (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    records.join(format!("{hash:016x}"))
}

/// A state directory as the object it is: device, inode and birth time (an inode freed when
/// the command's rebase ended may be given to the next one the user starts).
fn state_id(m: &std::fs::Metadata) -> String {
    let born = (m.created().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{} {} {born}\n", m.dev(), m.ino())
}

/// Whether the stopped state `state` is one a confined command started (recorded in `records`
/// when that command ended, as the same directory): the agent's own rebase, which its later
/// commands continue. Any other is the user's, read-only to confined commands.
pub(crate) fn started_by_a_command(records: Option<&Path>, state: &Path) -> bool {
    let (Some(records), Ok(m)) = (records, state.symlink_metadata()) else {
        return false;
    };
    crate::walk_memory::read_own(&record_of(records, state))
        .is_some_and(|r| r == state_id(&m).as_bytes())
}

impl Aftermath {
    /// The state of `git_dirs`' to-do lists now (the first is the work tree `work_tree`'s).
    pub(crate) fn before(
        git_dirs: impl IntoIterator<Item = PathBuf>,
        git: Option<PathBuf>,
        records: Option<PathBuf>,
    ) -> Aftermath {
        let git_dirs: Vec<PathBuf> = git_dirs.into_iter().collect();
        let mut todos = Vec::new();
        let index = git_dirs
            .first()
            .filter(|g| g.ends_with(".git"))
            .and_then(|g| {
                let work_tree = g.parent()?.to_path_buf();
                Some((work_tree, stamp(&g.join("index"))))
            });
        let stashes = (git_dirs.iter())
            .map(|dir| (dir.clone(), stash_entries(dir)))
            .collect();
        for dir in git_dirs {
            for (state, todo) in TODOS {
                let state = dir.join(state);
                let todo = state.join(todo);
                let was = stamp(&todo);
                let held = stopped(&state, &todo);
                todos.push((state, todo, was, held));
            }
        }
        let git_dir = (index.as_ref())
            .map(|(w, _)| w.join(".git"))
            .filter(|g| crate::held::git_dir_layout(g));
        Aftermath {
            todos,
            index,
            git,
            git_dir,
            records,
            stashes,
        }
    }

    /// Once the command has ended: each to-do list it made or changed that would run a command
    /// (or is not a plain file) has its state directory moved aside (never followed: a link is
    /// moved as a link). What was moved, one sentence each, for the command's caller to say.
    pub(crate) fn settle(&self) -> Vec<String> {
        let mut said = Vec::new();
        // A `.git` made no git directory (its `HEAD` broken, its `refs` moved): git then looks
        // for a repository at the work tree itself and above it (attack round 11, F1a).
        if let Some(g) = self
            .git_dir
            .as_ref()
            .filter(|g| !crate::held::git_dir_layout(g))
        {
            said.push(format!(
                "the command left {} no git directory to git (its `HEAD`, `objects` or `refs` are not what git needs), so git looks for a repository above it: mend it before you run git there",
                shown(g)
            ));
        }
        for (state, todo, was, held) in &self.todos {
            // A rebase, cherry-pick or `am` you had stopped, into which the command put what a
            // `--continue` of it would not (a `pick` of its own commit, a patch rewritten,
            // another `orig-head` for `--abort`: attack round 12, F8): your `--continue` or
            // `--abort` would apply it, outside the sandbox. One the command continued (the
            // agent resolving a conflict) only consumed it; one it started itself is its work,
            // continued as such, unless it runs a command.
            let now = held.as_ref().and_then(|_| stopped(state, todo));
            let changed = matches!((held, &now), (Some(was), Some(now)) if was.changed_into(now));
            let what = if changed {
                "changed by the command while you had it stopped; your `--continue` or `--abort` would apply what it put there outside the sandbox"
            } else {
                let now = stamp(todo);
                if todo == state || now.is_none() || now == *was || !runs_a_command(todo) {
                    continue;
                }
                "with an `exec` line, which `git rebase --continue` (or `git cherry-pick --continue`) would run outside the sandbox"
            };
            match move_aside(state) {
                Ok(aside) => said.push(format!(
                    "the command left git's {} {what}: moved to {}; read it before you continue it yourself",
                    state.display(),
                    aside.display()
                )),
                Err(e) => said.push(format!(
                    "the command left git's {} {what}, and it could not be moved aside ({e}): do not continue it",
                    state.display()
                )),
            }
        }
        // What is left stopped once the above is moved aside.
        for (state, _, _, held) in &self.todos {
            self.record_started(state, held.is_some(), &mut said);
        }
        for (git_dir, was) in &self.stashes {
            said.extend(stash_said(git_dir, was));
        }
        said
    }
}

impl Aftermath {
    /// Record `state` as one a confined command started where it left one stopped that was
    /// not there at its start (and say so: what a `--continue` or `--abort` there applies is
    /// the command's); forget it once it is gone.
    fn record_started(&self, state: &Path, was_there: bool, said: &mut Vec<String>) {
        let Some(records) = &self.records else {
            return;
        };
        let record = record_of(records, state);
        match state.symlink_metadata() {
            Ok(m) if m.is_dir() && !was_there => {
                let _ = std::fs::create_dir_all(records);
                let _ = crate::walk_memory::replace(&record, state_id(&m).as_bytes());
                said.push(format!(
                    "the command left git's {} stopped: what `--continue` or `--abort` there applies is the command's (its commits, an `autostash`, `orig-head`); read them before you run either yourself",
                    state.display()
                ));
            }
            Ok(_) => {}
            Err(_) => {
                let _ = std::fs::remove_file(&record);
            }
        }
    }

    /// Where the command changed the index: the files it marked `--assume-unchanged` or
    /// `--skip-worktree` and changed meanwhile (hidden so from `git status` and `git diff`, the
    /// review of what a confined command did) are unmarked, and said.
    pub(crate) fn unhidden(&self) -> Vec<String> {
        let Some((work_tree, was)) = &self.index else {
            return Vec::new();
        };
        let git_dir = work_tree.join(".git");
        if stamp(&git_dir.join("index")) == *was {
            return Vec::new();
        }
        // Never a git the command could have put there (a `PATH` entry inside the project).
        let Some(program) = self.git.as_ref().filter(|g| !g.starts_with(work_tree)) else {
            return vec![format!(
                "the command changed git's index in {}, and hookd found no git outside the places it may write to look at it: run `git ls-files -v | grep -v '^H'` there to see what it marked `--assume-unchanged` or `--skip-worktree`",
                shown(work_tree)
            )];
        };
        // Told where the repository is, never left to find one: the command may have made the
        // work tree's own `.git` no git directory to git (its `HEAD` broken, its `refs` moved)
        // and laid out the root, or a directory above it, as one whose `config` runs a
        // `core.fsmonitor` (attack round 11, F1e). Nothing of the user's or the system's
        // configuration, and no fsmonitor or hook, runs either.
        let git = |args: &[&str]| {
            let mut c = std::process::Command::new(program);
            // Nothing of the process's environment (`GIT_*` a repository's `.env` named among
            // it): only what these calls need.
            c.env_clear()
                .env("PATH", "/usr/bin:/bin")
                .env("GIT_DIR", &git_dir)
                .env("GIT_WORK_TREE", work_tree)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_OPTIONAL_LOCKS", "0")
                .env("GIT_NO_REPLACE_OBJECTS", "1")
                .args([
                    "-c",
                    "core.fsmonitor=false",
                    "-c",
                    "core.hooksPath=/dev/null",
                    "-c",
                    "safe.bareRepository=explicit",
                ])
                .arg("-C")
                .arg(work_tree)
                .args(args);
            within(c, GIT_TIME)
        };
        let Some(listed) = git(&["ls-files", "-v", "-s", "-z"]) else {
            return vec![format!(
                "the command changed git's index in {}, and git could not read it there (is {} still a git directory?): run `git status` and `git ls-files -v | grep -v '^H'` there before you trust what they show",
                shown(work_tree),
                shown(&git_dir)
            )];
        };
        // `TAG MODE BLOB STAGE\tPATH`: marked ones have a lower-case tag (assume-unchanged) or
        // `S` (skip-worktree); a regular file whose content is not its blob's was changed.
        let mut marked: Vec<(String, String, String)> = Vec::new();
        for entry in listed.stdout.split(|b| *b == 0) {
            let text = String::from_utf8_lossy(entry);
            let Some((head, path)) = text.split_once('\t') else {
                continue;
            };
            let fields: Vec<&str> = head.split(' ').collect();
            let [tag, mode, blob, _] = fields[..] else {
                continue;
            };
            let hides = tag.chars().all(|c| c.is_ascii_lowercase()) || tag == "S";
            if hides {
                marked.push((path.to_string(), mode.to_string(), blob.to_string()));
            }
        }
        // Each marked entry whose file is not what the index says: another type than the
        // index's (a link where a file was, dangling or not: attack round 12, F7b), too large to
        // compare within the end's time (a sparse file of terabytes hung the end for hours,
        // F6), unreadable to hookd (F7), or of other content. Absent ones are left alone: a
        // sparse checkout marks every file it leaves out.
        let mut hidden: Vec<String> = Vec::new();
        let mut compare: Vec<(String, String)> = Vec::new();
        for (path, mode, blob) in marked {
            let Ok(meta) = work_tree.join(&path).symlink_metadata() else {
                continue;
            };
            let kind_differs = match mode.as_str() {
                // A link is not compared (its blob is its target's text): a marked one counts
                // as changed (attack round 13: a tracked link re-pointed and marked).
                "120000" => true,
                "160000" => !meta.is_dir(),
                _ => !meta.is_file(),
            };
            if kind_differs || (meta.is_file() && meta.len() > MOST_COMPARED) {
                hidden.push(path);
            } else if meta.is_file() {
                compare.push((path, blob));
            }
        }
        // One bound for all of them, not only for each: past it, what is left counts as changed
        // (a hundred marked sparse files of 64 MiB made the end last 35 s: attack round 13).
        let until = std::time::Instant::now() + GIT_TIME;
        for (path, blob) in compare {
            let same = std::time::Instant::now() < until
                && git(&["hash-object", "--no-filters", "--", &path])
                    .is_some_and(|o| String::from_utf8_lossy(&o.stdout).trim() == blob);
            if !same {
                hidden.push(path);
            }
        }
        if hidden.is_empty() {
            return Vec::new();
        }
        let mut args = vec![
            "update-index",
            "--no-assume-unchanged",
            "--no-skip-worktree",
            "--",
        ];
        args.extend(hidden.iter().map(String::as_str));
        let done = git(&args).is_some();
        vec![format!(
            "the command changed {} and marked {} in git's index so that `git status` and `git diff` would not show {}: {}",
            hidden.join(", "),
            if hidden.len() == 1 { "it" } else { "them" },
            if hidden.len() == 1 { "it" } else { "them" },
            if done { "unmarked; review the change" } else { "they could not be unmarked: run `git update-index --no-assume-unchanged --no-skip-worktree` on them and review the change" }
        )]
    }
}

/// The most bytes of a marked file the end hashes to compare it with the index; a larger one is
/// taken as changed.
const MOST_COMPARED: u64 = 64 << 20;

/// The longest one of the end's git calls may take before it is killed (and what it was to
/// tell is taken as changed or unknown, and said).
const GIT_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// `c` run with its output read, killed once it has taken `limit`: its output where it
/// succeeded in time.
fn within(
    mut c: std::process::Command,
    limit: std::time::Duration,
) -> Option<std::process::Output> {
    use std::io::Read;
    let mut child = c
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let until = std::time::Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let stdout = reader.join().ok()?;
    status.success().then_some(std::process::Output {
        status,
        stdout,
        stderr: Vec::new(),
    })
}

/// Whether the to-do list at `todo` runs a command: an `exec` (`x`) line, or not a plain file
/// hookd can read (a link, a FIFO: what git would read there is not known).
fn runs_a_command(todo: &Path) -> bool {
    let plain = todo.symlink_metadata().is_ok_and(|m| m.is_file());
    if !plain {
        return true;
    }
    let Some(text) = crate::disk::read_plain(todo, 16 << 20) else {
        return true;
    };
    String::from_utf8_lossy(&text).lines().any(|line| {
        let mut words = line.split_whitespace();
        matches!(words.next(), Some("exec" | "x"))
    })
}

/// Move `path` (what a confined command made: `what`, which `who` would read or run there)
/// aside, never following it; what was done, one sentence.
pub(crate) fn set_aside(path: &Path, what: &str, who: &str) -> String {
    match move_aside(path) {
        Ok(aside) => format!(
            "the confined command made {} ({what}): moved to {}; look at it before you rename it back",
            shown(path),
            shown(&aside)
        ),
        Err(e) => format!(
            "the confined command made {} ({what}), and it could not be moved aside ({e}): do not run {who} there before you have looked at it",
            shown(path)
        ),
    }
}

/// `path` as said to the operator where the command chose its names: control characters
/// escaped (`\r`, `\u{1b}`), so that a name cannot rewrite the terminal line that says it.
pub(crate) fn shown(path: &Path) -> String {
    let text = path.display().to_string();
    if !text.chars().any(char::is_control) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// Rename `path` to the first free `NAME.hookd-aside`, `NAME.hookd-aside-1`, … beside it (after
/// a hundred taken, a random `NAME.hookd-aside-HEX`: the command could have taken the hundred
/// on purpose): in its directory opened with no link followed on the way (another confined
/// command running meanwhile could have made a directory on it a link, to have hookd move what
/// lies elsewhere: the user's `~/.git`), and never over what is there. Where the command took
/// its own write permission off that directory (`chmod 500 web`), it is given back for the
/// rename and taken again after. The new path.
fn move_aside(path: &Path) -> std::io::Result<PathBuf> {
    use nix::libc;
    use std::os::unix::ffi::OsStrExt;
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::other("it has no directory"));
    };
    let c = |b: &[u8]| std::ffi::CString::new(b).map_err(std::io::Error::other);
    let dir_fd = open_no_links(dir)?;
    let from = c(name.as_bytes())?;
    let name = name.to_string_lossy();
    let random = std::collections::hash_map::RandomState::new();
    let mut given_back = None;
    let mut i = 0u32;
    let moved = loop {
        let aside = match i {
            0 => format!("{name}.hookd-aside"),
            1..100 => format!("{name}.hookd-aside-{i}"),
            100..200 => {
                use std::hash::BuildHasher;
                format!("{name}.hookd-aside-{:016x}", random.hash_one(i))
            }
            _ => break Err(std::io::Error::other("every name beside it is taken")),
        };
        let to = c(aside.as_bytes())?;
        let r = rustix::fs::renameat_with(
            &dir_fd,
            from.as_c_str(),
            &dir_fd,
            to.as_c_str(),
            rustix::fs::RenameFlags::NOREPLACE,
        );
        let e = match r {
            Ok(()) => break Ok(dir.join(aside)),
            Err(e) => std::io::Error::from(e),
        };
        match e.raw_os_error() {
            Some(libc::EEXIST) => i += 1,
            Some(libc::EACCES) if given_back.is_none() => match add_mode(&dir_fd, 0o300) {
                Ok(was) => given_back = Some(was),
                Err(_) => break Err(e),
            },
            _ => break Err(e),
        }
    };
    if let Some(was) = given_back {
        let _ = set_mode(&dir_fd, was);
    }
    moved
}

/// `dir` opened (`O_PATH`) with no symbolic link followed anywhere on the way.
fn open_no_links(dir: &Path) -> std::io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let no_links = ResolveFlags::NO_SYMLINKS;
    Ok(rustix::fs::openat2(
        rustix::fs::CWD,
        dir,
        flags,
        Mode::empty(),
        no_links,
    )?)
}

/// Add the owner's permission `bits` to the directory `fd` (opened by [`open_no_links`]) where
/// it is this user's own: its mode before.
fn add_mode(fd: &std::os::fd::OwnedFd, bits: u32) -> std::io::Result<u32> {
    let st = rustix::fs::fstat(fd)?;
    if st.st_uid != nix::unistd::geteuid().as_raw() {
        return Err(std::io::Error::from_raw_os_error(nix::libc::EPERM));
    }
    let was = st.st_mode & 0o7777;
    set_mode(fd, was | bits)?;
    Ok(was)
}

/// `chmod` the directory `fd` (an `O_PATH` descriptor: through its `/proc/self/fd` link, which
/// names the inode itself).
fn set_mode(fd: &std::os::fd::OwnedFd, mode: u32) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::PermissionsExt;
    let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
    std::fs::set_permissions(link, std::fs::Permissions::from_mode(mode))
}

/// Give the owner read and search permission on `dir` back (never through a link), where it is
/// this user's own directory: the end of a confined command that took them off a directory the
/// walk at its start could read (`chmod 100 web`, after making `web/.claude`), so that the
/// second walk can look in it. Whether they were given.
pub(crate) fn give_back_reading(dir: &Path) -> bool {
    open_no_links(dir).is_ok_and(|fd| add_mode(&fd, 0o500).is_ok())
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_stopped_state_is_the_commands_own_only_as_the_directory_it_left() {
        let d = tempfile::tempdir().unwrap();
        let records = d.path().join("records");
        let git = d.path().join("git");
        let state = git.join("rebase-merge");
        std::fs::create_dir_all(&state).unwrap();
        let fresh = Aftermath::before([d.path().join("none")], None, Some(records.clone()));
        let mut said = Vec::new();
        fresh.record_started(&state, false, &mut said);
        assert_eq!(said.len(), 1);
        assert!(started_by_a_command(Some(&records), &state));
        // Ended, and a new one started in its place (by the user): not the command's, whatever
        // inode it was given.
        std::fs::remove_dir(&state).unwrap();
        std::fs::create_dir(&state).unwrap();
        assert!(!started_by_a_command(Some(&records), &state));
    }
    #[test]
    fn a_file_rewritten_in_place_with_its_time_put_back_is_not_as_it_was() {
        // Attack round 11, F9: the same inode, size and modification time, a new content.
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("git-rebase-todo");
        std::fs::write(&f, "pick 1234567 a\n").unwrap();
        let mtime = f.metadata().unwrap().modified().unwrap();
        let was = super::stamp(&f);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&f, "exec touch /xy\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&f)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        assert_eq!(f.metadata().unwrap().modified().unwrap(), mtime);
        assert_ne!(super::stamp(&f), was);
    }

    use super::*;

    #[test]
    fn what_is_moved_aside_is_never_reached_through_a_link() {
        let t = tempfile::tempdir().unwrap();
        // The user's repository elsewhere, and a directory of the project made a link to it.
        std::fs::create_dir_all(t.path().join("home/.git")).unwrap();
        std::os::unix::fs::symlink(t.path().join("home"), t.path().join("sub")).unwrap();
        let said = set_aside(&t.path().join("sub/.git"), "a repository", "git");
        assert!(said.contains("could not be moved aside"), "{said}");
        assert!(t.path().join("home/.git").is_dir());
        // A name taken is not written over: the next one is used.
        std::fs::create_dir_all(t.path().join("p/.git")).unwrap();
        std::fs::create_dir_all(t.path().join("p/.git.hookd-aside")).unwrap();
        assert_eq!(
            move_aside(&t.path().join("p/.git")).unwrap(),
            t.path().join("p/.git.hookd-aside-1")
        );
    }

    /// A name the command chose cannot rewrite the line that names it (a carriage return, an
    /// escape sequence).
    #[test]
    fn control_characters_in_a_name_are_said_escaped() {
        assert_eq!(shown(Path::new("/p/web/.claude")), "/p/web/.claude");
        assert_eq!(
            shown(Path::new("/p/x\rhookd: all clear\u{1b}[2K/.claude")),
            "/p/x\\rhookd: all clear\\u{1b}[2K/.claude"
        );
    }

    /// A command that took the hundred names beside what it made (to have it left where it
    /// takes effect) gets it moved to a name it could not guess.
    #[test]
    fn a_hundred_names_taken_beside_it_do_not_keep_it_in_place() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("web/.claude")).unwrap();
        std::fs::create_dir(t.path().join("web/.claude.hookd-aside")).unwrap();
        for i in 1..100 {
            std::fs::create_dir(t.path().join(format!("web/.claude.hookd-aside-{i}"))).unwrap();
        }
        let aside = move_aside(&t.path().join("web/.claude")).unwrap();
        let name = aside.file_name().unwrap().to_string_lossy().into_owned();
        let hex = name.strip_prefix(".claude.hookd-aside-").unwrap();
        assert!(
            hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
            "{name}"
        );
        assert!(t.path().join("web/.claude").symlink_metadata().is_err());
    }

    #[test]
    fn a_new_todo_with_an_exec_line_is_moved_aside_and_a_plain_one_is_not() {
        let git = tempfile::tempdir().unwrap();
        let after = Aftermath::before([git.path().to_path_buf()], None, None);
        std::fs::create_dir_all(git.path().join("rebase-merge")).unwrap();
        std::fs::write(
            git.path().join("rebase-merge/git-rebase-todo"),
            "pick 1234 one\n  x  touch /tmp/pwned\n",
        )
        .unwrap();
        std::fs::create_dir_all(git.path().join("sequencer")).unwrap();
        std::fs::write(
            git.path().join("sequencer/todo"),
            "pick 1234 one\n# exec x\n",
        )
        .unwrap();
        let said = after.settle();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(git.path().join("rebase-merge.hookd-aside").is_dir());
        assert!(!git.path().join("rebase-merge").exists());
        assert!(git.path().join("sequencer/todo").is_file());
        // The user's own, unchanged by the command, is left alone.
        std::fs::create_dir_all(git.path().join("rebase-merge")).unwrap();
        std::fs::write(
            git.path().join("rebase-merge/git-rebase-todo"),
            "exec make\n",
        )
        .unwrap();
        assert!(Aftermath::before([git.path().to_path_buf()], None, None)
            .settle()
            .is_empty());
    }

    #[test]
    fn the_stash_entries_a_command_added_are_named_newest_first() {
        let d = tempfile::tempdir().unwrap();
        let git_dir = d.path().join(".git");
        let log = git_dir.join("logs/refs/stash");
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        let was: Vec<String> = ["a", "b"].map(String::from).into();
        std::fs::write(&log, "a\nb\n").unwrap();
        assert_eq!(stash_said(&git_dir, &was), None);
        std::fs::write(&log, "a\nb\nc\nd\n").unwrap();
        let said = stash_said(&git_dir, &was).unwrap();
        assert!(
            said.contains("pushed 2 entries") && said.contains("(stash@{0}, stash@{1})"),
            "{said}"
        );
        // One of yours popped, one of its own pushed: its own is named.
        std::fs::write(&log, "a\nx\n").unwrap();
        assert!(stash_said(&git_dir, &was)
            .unwrap()
            .contains("an entry onto the stash in"));
        // Gone, or not a plain file: nothing to say.
        std::fs::remove_file(&log).unwrap();
        assert_eq!(stash_said(&git_dir, &was), None);
    }
}
