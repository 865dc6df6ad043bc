//! A command's confinement, prepared in the parent ([`Confinement::prepare_in`]), in the order
//! it must be: what earlier commands left judged first; the writable places and their Landlock
//! rules; the places held and hidden, as found on disk; then everything the forked child needs,
//! allocated here so that the child only makes syscalls.

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use crate::{
    aftermath, broker, c_path, cstring, deferred, egress, entries, frozen, git, held, linux,
    nested, private, summary, support, support_unprobed, temp_dir, unsettled, Confinement, Disk,
    Hidden, Network, Placeholders, Places, Policy, Unavailable, UNJUDGED,
};

impl Confinement {
    /// Prepare the confinement of a command run in `project` (from its root) under `policy`.
    pub fn prepare(policy: &Policy, project: &Path) -> Result<Confinement, Unavailable> {
        Confinement::prepare_in(policy, project, project)
    }

    /// Prepare the confinement of a command run in `project` from `cwd` under `policy`.
    pub fn prepare_in(
        policy: &Policy,
        project: &Path,
        cwd: &Path,
    ) -> Result<Confinement, Unavailable> {
        let missing = if policy.start_at_once && !policy.nested {
            support_unprobed().missing()
        } else {
            support().missing()
        };
        if nested::here(policy, &missing) {
            return nested::prepare(policy, project, &temp_dir(policy));
        }
        if !missing.is_empty() {
            return Err(Unavailable::Kernel(missing));
        }
        let project = project
            .canonicalize()
            .map_err(|e| Unavailable::Prepare(format!("the project {}: {e}", project.display())))?;
        if let Some(why) = read_deny_over(policy, &project) {
            return Err(Unavailable::Prepare(why));
        }
        let mut earlier = Earlier::load(policy, &project);
        // The locks of the stand-ins are made first, so that they are hidden with the state.
        let mut stand_ins =
            Placeholders::new(policy.state.as_ref().map(|s| s.join("placeholders")));
        // What the walks below the roots read, kept for the next command's (`walk_memory.rs`).
        let walks = policy.state.as_ref().map(|s| s.join("walks"));
        let hidden = crate::hidden(policy);
        let disk = Disk::remembering(walks);
        let roots = Roots::plan(policy, &project, &hidden, &disk, &mut earlier.said)?;
        let run = held::Run {
            project: &project,
            cwd,
        };
        let mut held = held::held(
            &policy.places,
            run,
            &roots.real,
            &mut stand_ins,
            &hidden,
            &disk,
            &earlier.deferred,
        )?;
        earlier.judged(&mut held, &disk, &project);
        let records = policy.state.as_ref().map(|s| s.join("sequencer"));
        let git_dirs = git_dirs(&project, &policy.places);
        hold_stopped(&mut held, &git_dirs, records.as_deref(), &roots.real, &disk)?;
        held.sort();
        let also = &roots.private.hidden_files;
        let (hidden_dirs, hidden_files) = hidden_mounts(&mut held, &hidden, also, &roots, &disk)?;
        for path in held.read_only.clone() {
            held.pin_ancestors(&disk.real(&path), &roots.real);
        }
        held.sort();
        held.unpin_inside_read_only(&disk);
        let hidden = (hidden_dirs, hidden_files);
        let found = Found {
            held,
            hidden,
            git_dirs,
            records,
            stand_ins,
        };
        assemble(policy, roots, earlier, found, &disk)
    }
}

/// What earlier commands left, judged before this one holds anything: what a command whose
/// hookd was killed made below its project (`unsettled.rs`), and the records of ends that did
/// not walk a large tree again (`deferred.rs`), judged by this start's walk.
struct Earlier {
    /// What to say at this command's end of what was judged.
    said: Vec<String>,
    unsettled: Option<PathBuf>,
    idle: Option<unsettled::Idle>,
    running_since: Option<std::time::SystemTime>,
    deferred_dir: Option<PathBuf>,
    deferred: Vec<deferred::Deferred>,
}

impl Earlier {
    fn load(policy: &Policy, project: &Path) -> Earlier {
        let unsettled = policy.state.as_ref().map(|s| s.join("unsettled"));
        let deferred_dir = policy.state.as_ref().map(|s| s.join("deferred"));
        let mut said = Vec::new();
        let orphans = (unsettled.as_deref())
            .map(|u| unsettled::orphans(u, deferred_dir.as_deref()))
            .unwrap_or_default();
        for again in orphans.settled {
            crate::said(again, &mut said);
        }
        let deferred = (deferred_dir.as_deref())
            .map(|d| deferred::load(d, project))
            .unwrap_or_default();
        Earlier {
            said,
            unsettled,
            idle: orphans.idle,
            running_since: orphans.running_since,
            deferred_dir,
            deferred,
        }
    }

    /// Once the places are held: the records judged removed, and what the holding said added.
    fn judged(&mut self, held: &mut held::Held, disk: &Disk, project: &Path) {
        // Judged: what was made is aside, said; a record of a project holding this one is
        // kept for a command of its own, whose walk reads the rest of its tree.
        for d in self.deferred.iter().filter(|d| d.whole) {
            let _ = std::fs::remove_file(&d.file);
        }
        self.said.append(&mut held.said);
        if let Some(since) = self.running_since {
            // Another confined command runs: what was made or linked since, it may have.
            held.below.watch_changed_after(since);
        }
        for link in &held.unjudged {
            let (what, why) = UNJUDGED;
            self.said.push(format!(
                "{} is {what} ({why}): look at it, and remove it unless you made it, before you run git or an agent below it",
                aftermath::shown(link)
            ));
        }
        // A project that is a place held read-only (a dotfiles repository in `~/.config/nvim`):
        // nothing in it can be written; said at the end, or its commands fail without a word
        // why (attack round 21, F4). (One that lies further in keeps its own writable mount.)
        let project_real = disk.real(project);
        if let Some(place) = (held.read_only.iter()).find(|p| disk.real(p) == project_real) {
            self.said.push(format!(
                "the project {} is a place the sandbox keeps read-only (agents, editors or git run what is there): confined commands cannot write in it; work on it outside the sandbox, or on a copy elsewhere",
                aftermath::shown(place)
            ));
        }
    }
}

/// Where the command may write: the project (unless read-only), the host's temporary directory
/// where it is not replaced by the command's own, and the user's entries as this command takes
/// them; the Landlock ruleset granting them; the private places covering the rest.
struct Roots {
    /// As named (for the summary).
    writable: Vec<PathBuf>,
    /// As they are on disk.
    real: Vec<PathBuf>,
    sockets: Vec<PathBuf>,
    ruleset: OwnedFd,
    private: private::Places,
    temp: PathBuf,
}

impl Roots {
    fn plan(
        policy: &Policy,
        project: &Path,
        hidden: &[PathBuf],
        disk: &Disk,
        said: &mut Vec<String>,
    ) -> Result<Roots, Unavailable> {
        let temp = temp_dir(policy);
        // The user's entries as this command takes them: one a confined command could have
        // redirected through a link is left out, and said at the end (`entries.rs`).
        // (The host's temporary directory is the command's own unless it is the project or an
        // entry: not a place it could have written otherwise.)
        let base = [project.to_path_buf()];
        let (write, said_of) = entries::writable_entries(&policy.write, &base, disk);
        said.extend(said_of);
        let all: Vec<PathBuf> = base.iter().chain(&write).cloned().collect();
        let (sockets, said_of) = entries::listed_sockets(&policy.unix_sockets, &all, disk);
        said.extend(said_of);
        let private = private::plan(policy, project, hidden, &temp, disk, &write, &sockets)?;
        // Read-only: nothing but the command's own temporary directory (granted in the child
        // once its tmpfs is mounted); the host's when it cannot be replaced.
        let read_only = crate::read_only(policy, project);
        let mut writable = Vec::new();
        writable.extend((!read_only).then(|| project.to_path_buf()));
        // The host's temporary directory only where it is not replaced by the command's own.
        writable.extend((!private.temp_covered).then(|| temp.clone()));
        let entries = if read_only { Vec::new() } else { write };
        writable.extend(entries.iter().cloned());
        let ruleset =
            linux::ruleset(&writable, &entries, &sockets).map_err(Unavailable::Prepare)?;
        let real = writable.iter().map(|w| disk.real(w)).collect();
        Ok(Roots {
            writable,
            real,
            sockets,
            ruleset,
            private,
            temp,
        })
    }
}

/// What was found on disk for the command: the places held, the hidden ones' mounts (files and
/// directories), the project's git directories, where the sequencer's records are kept, the
/// stand-ins made.
struct Found {
    held: held::Held,
    hidden: (Vec<Hidden>, Vec<Hidden>),
    git_dirs: Vec<PathBuf>,
    records: Option<PathBuf>,
    stand_ins: Placeholders,
}

/// A rebase, cherry-pick or `am` the user had stopped is theirs to continue: read-only to the
/// command, whose `--continue` or `--abort` would otherwise apply what it put there (its own
/// commit as `autostash`, `orig-head`, `sequencer/head`, a patch: attack rounds 12 and 13). One
/// the command starts is its own.
fn hold_stopped(
    held: &mut held::Held,
    git_dirs: &[PathBuf],
    records: Option<&Path>,
    real_writable: &[PathBuf],
    disk: &Disk,
) -> Result<(), Unavailable> {
    for dir in git_dirs {
        for state in aftermath::STATES {
            let path = dir.join(state);
            let users = path.is_dir() && !aftermath::started_by_a_command(records, &path);
            if users
                && real_writable
                    .iter()
                    .any(|w| disk.real(&path).starts_with(w))
            {
                held.hold_read_only(path, real_writable, disk)?;
            }
        }
    }
    Ok(())
}

/// The mounts that hide `hidden` and the private places' sockets (`also`) where they exist
/// (where they lead, for a link), directories and files apart, each once ([`uncovered`]), their
/// ancestors and the links on their way in writable places held; the stand-ins a program reads
/// at each start shown as an empty file (`Places::read_at_start`).
fn hidden_mounts(
    held: &mut held::Held,
    hidden: &[PathBuf],
    also: &[PathBuf],
    roots: &Roots,
    disk: &Disk,
) -> Result<(Vec<Hidden>, Vec<Hidden>), Unavailable> {
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    for path in hidden.iter().chain(also) {
        if !disk.exists(path) {
            continue;
        }
        // Covered where it lies: a cover moved onto a link is refused (a directory onto a
        // link: `~/.ssh -> dotfiles/ssh` stopped every command with "Invalid argument").
        let real = disk.real(path);
        // Outside the places the command may write, one removed meanwhile (another command's
        // stand-in in the home, a service's socket) is as if absent at the start: the command
        // cannot make it again. Inside, it must be hidden or nothing runs.
        let outside = !roots.real.iter().any(|w| real.starts_with(w));
        // A link on the way that lies in a writable place is held where it lies: replaced by a
        // directory of the command's, it would be what your next `ssh` reads (round 27, B1).
        held.pin_links_on_the_way(path, &roots.real, disk);
        let hidden = Hidden {
            path: c_path(&real)?,
            may_go: outside,
        };
        match std::fs::metadata(&real) {
            Ok(m) if m.is_dir() => dirs.push((real.clone(), hidden)),
            Ok(_) => files.push((real.clone(), hidden)),
            // A link to a place the command may write that does not exist: what it would make
            // there is what the link's readers read (`~/.kube -> dotfiles/kube`: its config,
            // written through the link, ran at the user's next `kubectl`: attack round 28, B2).
            Err(_) if !outside && disk_link(path) => {
                return Err(Unavailable::Prepare(format!(
                    "{} is a symbolic link to {}, which does not exist: a confined command could make it there, and hookd hides that place (remove the link, or make what it leads to)",
                    crate::aftermath::shown(path),
                    crate::aftermath::shown(&real)
                )));
            }
            Err(_) => continue,
        }
        held.pin_ancestors(&real, &roots.real);
    }
    for p in &held.emptied {
        let path = c_path(p)?;
        files.push((
            p.clone(),
            Hidden {
                path,
                may_go: false,
            },
        ));
    }
    Ok(uncovered(dirs, files))
}

/// The confinement, from what was prepared: the paths as C strings, the id maps, the seccomp
/// program, the proxy, the broker, the git the end runs, the end's record.
fn assemble(
    policy: &Policy,
    roots: Roots,
    earlier: Earlier,
    found: Found,
    disk: &Disk,
) -> Result<Confinement, Unavailable> {
    let Found {
        mut held,
        hidden: (hidden_dirs, hidden_files),
        git_dirs,
        records,
        stand_ins,
    } = found;
    let (pinned, read_only) = (c_paths(&held.pinned)?, c_paths(&held.read_only)?);
    let pinned_links = c_paths(&held.links)?;
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    let own_temp = roots.private.temp_covered.then_some(roots.temp.as_path());
    let summary = summary(&roots.writable, own_temp, policy);
    let (proxy, egress_channel) = start_proxy(policy)?;
    // Never a git the command could write (a `PATH` entry in a writable place); the system's
    // where that one is (a planted `.venv/bin/git` turned the check off: attack round 11, F3b).
    let outside = |g: &PathBuf| !roots.real.iter().any(|w| disk.real(g).starts_with(w));
    let git = (policy.git.clone()).filter(outside).or_else(|| {
        ["/usr/bin/git", "/usr/local/bin/git", "/bin/git"]
            .iter()
            .map(PathBuf::from)
            .find(|g| g.is_file() && outside(g))
    });
    // Kept until the end has settled it; pid 1 holds its lock first of all.
    let pending = (earlier.unsettled.as_deref())
        .and_then(|d| unsettled::Pending::record(d, &held.below, earlier.idle));
    // Where Landlock holds pathname Unix sockets itself (ABI 9), no broker; nor for a confined
    // agent ([`Policy::nests`]). Landlock's ABI only: the namespaces' probe ([`support`]) would
    // cost a command that starts at once 0.2 to 0.3 ms for nothing.
    let broker = (crate::landlock_abi().unwrap_or(0) < 9 && !policy.nests)
        .then(|| broker::Broker::new(&roots.sockets))
        .flatten();
    let mut locks: Vec<std::os::fd::RawFd> = pending.iter().map(|p| p.fd()).collect();
    locks.extend(stand_ins.lock_fds());
    Ok(Confinement {
        ruleset: roots.ruleset,
        setgroups: CString::from(c"deny"),
        uid_map: cstring(format!("{uid} {uid} 1"))?,
        gid_map: cstring(format!("{gid} {gid} 1"))?,
        pinned,
        pinned_links,
        read_only,
        hidden_dirs,
        hidden_files,
        network_filter: linux::network_filter(
            policy.network == Network::All || proxy.is_some(),
            broker.is_some(),
        )
        .map_err(Unavailable::Prepare)?,
        broker,
        places: roots.private.mounts,
        temp_rights: linux::temp_rights(),
        temp: roots.temp,
        unix_sockets: roots.sockets,
        keep_env: policy.keep_env.clone(),
        secret: policy.secret,
        summary,
        locks,
        record: pending.as_ref().map_or(-1, |p| p.fd()),
        _stand_ins: stand_ins,
        _pending: pending,
        deferred: earlier.deferred_dir,
        settled_before: earlier.said,
        egress_channel,
        proxy,
        nested: None,
        aftermath: aftermath::Aftermath::before(git_dirs, git, records),
        frozen: frozen::plan(&roots.real)?,
        below: std::mem::take(&mut held.below),
    })
}

/// Whether `path` itself is a symbolic link.
fn disk_link(path: &Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
}

/// `paths` as C strings, for the child.
fn c_paths(paths: &[PathBuf]) -> Result<Vec<CString>, Unavailable> {
    paths.iter().map(|p| c_path(p)).collect()
}

/// The git directories of the project's work tree: its `.git`, or the one its `.git` file
/// names, and the common one a `commondir` names.
fn git_dirs(project: &Path, places: &Places) -> Vec<PathBuf> {
    let dot = project.join(".git");
    let mut dirs: Vec<PathBuf> = dot.is_dir().then_some(dot).into_iter().collect();
    dirs.extend(git::indirections(project, &places.homes, &places.config_homes).git_dirs);
    dirs
}

/// The `read_deny` entry of `policy` that holds `project` (or is it), with a sentence saying so:
/// the command must see the project it runs in.
fn read_deny_over(policy: &Policy, project: &Path) -> Option<String> {
    policy.read_deny.iter().find_map(|e| {
        let real = e.canonicalize().unwrap_or_else(|_| e.clone());
        project.starts_with(&real).then(|| {
            format!(
                "the `sandbox.read_deny` entry {} holds the project {}, which a confined command must see to run in it: list what you want hidden inside it, or beside the project, not above it",
                aftermath::shown(e),
                aftermath::shown(project)
            )
        })
    })
}

/// The hidden places that need a mount of their own: not one named twice (the user's home and
/// `$HOME` may name the same state directory), nor one below a hidden directory (its cover
/// hides it already; mounted after it, it would be gone).
fn uncovered(
    dirs: Vec<(PathBuf, Hidden)>,
    files: Vec<(PathBuf, Hidden)>,
) -> (Vec<Hidden>, Vec<Hidden>) {
    let covers: Vec<PathBuf> = dirs.iter().map(|(p, _)| p.clone()).collect();
    let mut seen = Vec::new();
    let mut keep = |(path, hidden): (PathBuf, Hidden)| {
        let below = covers.iter().any(|d| path != *d && path.starts_with(d));
        (!below && !seen.contains(&hidden.path)).then(|| {
            seen.push(hidden.path.clone());
            hidden
        })
    };
    let dirs = dirs.into_iter().filter_map(&mut keep).collect();
    let files = files.into_iter().filter_map(&mut keep).collect();
    (dirs, files)
}

/// Under a host list (and the network not on): hookd's proxy for the command, and the end of
/// the channel its waiter hands the proxy the listening socket over.
type Started = (Option<egress::proxy::Proxy>, Option<OwnedFd>);

fn start_proxy(policy: &Policy) -> Result<Started, Unavailable> {
    match &policy.network {
        Network::Proxy(e) => {
            let (p, ch) = egress::proxy::Proxy::start(e.clone(), None)
                .map_err(|e| Unavailable::Prepare(format!("hookd's proxy: {e}")))?;
            Ok((Some(p), Some(ch)))
        }
        Network::None | Network::All => Ok((None, None)),
    }
}
