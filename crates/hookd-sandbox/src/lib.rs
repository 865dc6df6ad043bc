//! Confinement for the commands a program lets run, on Linux: the kernel, not the command's
//! words, bounds what an admitted program (and every process it starts) may write, read and
//! reach. This is hookd's sandbox as a crate of its own: the mechanism, with no notion of hooks,
//! agents or configuration files; hookd builds the [`Policy`] from its catalog of places and its
//! configuration and hands it here.
//!
//! # What it confines
//!
//! Three mechanisms, all unprivileged: Landlock (the outer write boundary: only the project,
//! the command's own temporary directory and the policy's `write` places; no link or rename of
//! a file from outside into them), a user + mount namespace (the policy's read-only places
//! bound read-only where they lie in a writable place, `.git` and the ancestors of held places
//! pinned, hidden places under empty read-only mounts; an empty tmpfs over `/tmp`, `$TMPDIR`
//! and the places where services keep their sockets, see `private.rs`) and a seccomp filter
//! (socket families by allow-list, io_uring, terminal injection). Landlock only grants: a hole
//! in a granted tree needs the mounts. All are inherited by every descendant and cannot be
//! dropped (no_new_privs; a Landlocked process cannot change mounts). Under a host list
//! ([`Network::Proxy`]) the command has a network namespace of its own whose only way out is a
//! proxy run outside, which judges each host ([`Egress`]).
//!
//! # Prepare in the parent, enter in the child, one spawn path
//!
//! [`Confinement::prepare`] does everything that allocates, in the parent; the forked child
//! only makes syscalls ([`prepare_spawn`]: the one way a command starts, confined or not, with
//! no descriptor above 2 but one named, and a waiter that leaves nothing the command started
//! behind; confined, in a PID namespace that nothing the command starts outlives). Where the
//! kernel (or this build: the `confine` feature) cannot enforce the policy ([`support`]),
//! nothing runs unconfined: [`Confinement::prepare`] fails and says what is missing.
//!
//! # The policy
//!
//! A [`Policy`] is plain data: the places a command may write ([`Policy::write`], besides the
//! project and its own temporary directory), those it may not read ([`Policy::read_deny`]),
//! the places held read-only, pinned or hidden as absolute paths and names ([`Places`], with
//! what git reads besides `.git` found on disk, [`git`]), the network ([`Network`]: none, all,
//! or hosts through the proxy) and which variables the command does not get.
//!
//! ```no_run
//! use std::path::Path;
//! use hookd_sandbox::{Confinement, Network, Policy};
//!
//! let mut policy = Policy::default();
//! policy.network = Network::None;
//! policy.places.by_name.push((".git/hooks".into(), hookd_sandbox::Hold::ReadOnly));
//! let confinement = Confinement::prepare(&policy, Path::new("/home/ann/project"))?;
//! let argv = ["make".to_string(), "test".to_string()];
//! let vars = [(std::ffi::OsStr::new("PATH"), std::ffi::OsStr::new("/usr/bin:/bin"))];
//! let status = hookd_sandbox::command(
//!     std::sync::Arc::new(confinement),
//!     &argv,
//!     Path::new("/home/ann/project"),
//!     None,
//!     vars,
//! )
//! .status()?;
//! println!("{status}: {}", "wrote nothing outside the project and its own /tmp");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![cfg_attr(not(feature = "confine"), allow(dead_code, unused_imports))]

mod aftermath;
mod below;
mod broker;
mod deferred;
mod direct;
mod disk;
mod egress;
mod entries;
mod frozen;
pub mod git;
mod home;
#[cfg_attr(not(feature = "confine"), path = "unconfined.rs")]
mod linux;
mod places;
mod spawn;
mod vfork;
pub mod walk;
mod walk_memory;

pub use egress::proxy::NetworkRequest;
pub use egress::{invalid_entry as invalid_host_entry, proxy_vars, Egress, PROXY_ADDR};
pub use home::user_home;
pub use places::{Hold, Places};
pub use spawn::{
    prepare as prepare_spawn, prepare_to_spawn_now, prepare_unwaited, run as run_spawned,
};
mod held;
#[cfg_attr(not(feature = "confine"), path = "nested_unconfined.rs")]
mod nested;
mod placeholder;
mod prepare;
mod private;
mod unsettled;

use disk::Disk;
use placeholder::Placeholders;

pub use nested::AGENT_VAR;
pub use private::{socket_paths, SOCKET_VARIABLES};

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What a confined command may reach over the network.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Network {
    /// Nothing: no socket family but Unix (and those only to what the mounts leave).
    #[default]
    None,
    /// Everything, as the host has it.
    All,
    /// The hosts `Egress` allows, through a proxy run outside the sandbox (the command gets
    /// [`proxy_vars`]); no other way out.
    Proxy(Egress),
}

/// One command's sandbox, as data: what it may write, read and reach.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Policy {
    /// The network.
    pub network: Network,
    /// Writable besides the project and the temporary directory.
    pub write: Vec<PathBuf>,
    /// Unreadable besides [`Places::hidden`] and [`Policy::state`].
    pub read_deny: Vec<PathBuf>,
    /// Nothing writable but the command's own temporary directory: not the project, not the
    /// `write` places.
    pub read_only: bool,
    /// The user's home as the host names it (`HOME`), besides the user database's
    /// ([`user_home`]): a temporary directory holding either is not made writable.
    pub home: Option<PathBuf>,
    /// The host's temporary directory (`$TMPDIR`), writable unless it holds a home; `None`:
    /// `/tmp`.
    pub temp: Option<PathBuf>,
    /// The caller's own state: hidden, and where the locks of the stand-ins of absent held
    /// places are kept (`STATE/placeholders`).
    pub state: Option<PathBuf>,
    /// The places held read-only, pinned or hidden.
    pub places: Places,
    /// Unix sockets a confined command may connect to although something outside made them.
    pub unix_sockets: Vec<PathBuf>,
    /// Which variables carry a secret: a confined command does not get them, unless
    /// `keep_env` keeps them.
    pub secret: fn(&str) -> bool,
    /// Secret-carrying variables confined commands get all the same: names, or a prefix and
    /// `*`.
    pub keep_env: Vec<String>,
    /// The user's runtime directory as the host names it (`$XDG_RUNTIME_DIR`): covered, as
    /// `/run/user/UID` is.
    pub runtime: Option<PathBuf>,
    /// Other directories covered by an empty read-only tmpfs as the runtime directory is (the
    /// caller's own temporary or runtime directory, where it cannot tell whether it is the
    /// user's: hookd's `TMPDIR` that a repository's `.env` also names).
    pub covered: Vec<PathBuf>,
    /// The sockets the caller's [`SOCKET_VARIABLES`] name ([`socket_paths`] of their values):
    /// hidden wherever they are, unless `unix_sockets` lists them.
    pub named_sockets: Vec<PathBuf>,
    /// The host says it runs inside a confined agent (`hookd run --confine` sets
    /// [`AGENT_VAR`]): where that is evidently so, commands get the nested sandbox
    /// (`nested.rs`) instead of none.
    pub nested: bool,
    /// Commands nested in this one get sandboxes of their own inside it: a confined agent's
    /// (`hookd run --confine`). Below Landlock ABI 9 its `connect` and `bind` are then its own,
    /// not made by pid 1 (`broker/`), whose helpers would make its nested commands' calls in
    /// the agent's domain.
    pub nests: bool,
    /// The command is started as soon as it is prepared (`hookd exec`): the namespaces are not
    /// probed first ([`support_unprobed`]); where it then fails to start, the caller asks
    /// [`missing_for`], which probes them and says what the kernel lacks. Not with `nested`
    /// (whether the nested sandbox stands in depends on the probe).
    pub start_at_once: bool,
    /// Places hookd's state would hide that stay as they are: a confined agent's hooks
    /// (`hookd adapter`) keep their state there (`hookd run --confine`).
    pub shown: Vec<PathBuf>,
    /// The git the caller found (an absolute path on its sanitized `PATH`): what looks at the
    /// index a command changed once it has ended ([`Confinement::settle`]). None, or one inside
    /// the project (which the command could have replaced), and the index is not looked at.
    pub git: Option<PathBuf>,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            network: Network::None,
            write: Vec::new(),
            read_deny: Vec::new(),
            read_only: false,
            home: None,
            temp: None,
            state: None,
            places: Places::default(),
            unix_sockets: Vec::new(),
            secret: |_| false,
            keep_env: Vec::new(),
            runtime: None,
            covered: Vec::new(),
            named_sockets: Vec::new(),
            nested: false,
            nests: false,
            start_at_once: false,
            shown: Vec::new(),
            git: None,
        }
    }
}

/// What this kernel offers the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Support {
    /// The Landlock ABI version, when Landlock is enabled.
    pub landlock_abi: Option<i32>,
    /// Whether an unprivileged process may create user, mount and PID namespaces and mount a
    /// /proc of its PID namespace.
    pub namespaces: bool,
    /// Whether this build confines at all (the `confine` feature).
    pub built: bool,
}

/// Landlock's third ABI (Linux 6.2): the first that also bounds `truncate(2)` and refers
/// (links, renames) across directories; older ones leave a confined command able to truncate
/// or hard-link files outside what it may write.
pub const MIN_LANDLOCK_ABI: i32 = 3;

impl Support {
    /// What is missing for the policy to be enforced, one phrase each; empty when nothing is.
    pub fn missing(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.built {
            out.push(
                "confinement in this build (hookd's `sandbox` feature, hookd-sandbox's `confine`)"
                    .into(),
            );
            return out;
        }
        match self.landlock_abi {
            None => out.push("Landlock (Linux 5.13+, enabled at boot: `lsm=…,landlock`)".into()),
            Some(v) if v < MIN_LANDLOCK_ABI => out.push(format!(
                "Landlock ABI {MIN_LANDLOCK_ABI} (Linux 6.2+); this kernel has ABI {v}"
            )),
            Some(_) => {}
        }
        if !self.namespaces {
            out.push(
                "unprivileged user namespaces, with a PID namespace that may mount its own /proc \
                 (for the read-only places inside the project, the network and the processes; \
                 some distributions restrict them, e.g. Ubuntu's AppArmor \
                 `kernel.apparmor_restrict_unprivileged_userns`; a container that masks parts of \
                 /proc refuses the mount)"
                    .into(),
            );
        }
        out
    }
}

/// What this kernel lacks to confine a command under `policy`, one phrase each ([`Support::missing`]),
/// empty where the nested sandbox of a confined agent stands in (`nested.rs`).
pub fn missing_for(policy: &Policy) -> Vec<String> {
    let missing = support().missing();
    if nested::here(policy, &missing) {
        Vec::new()
    } else {
        missing
    }
}

/// What this kernel offers, probed once per process.
pub fn support() -> &'static Support {
    PROBED.get_or_init(linux::probe)
}

/// [`support`]'s answer, once probed.
static PROBED: OnceLock<Support> = OnceLock::new();

/// [`support`] without the namespaces' probe (a child cloned into new namespaces and its
/// teardown waited for: 0.2 to 0.3 ms of every `hookd exec`): Landlock's ABI asked, the
/// namespaces taken to work unless the probe already ran and said otherwise. Only for a caller
/// that starts the command at once and, where it fails to start, asks [`support`] what is
/// missing ([`Policy::start_at_once`]): a kernel without them refuses the command's own
/// namespaces as it refuses the probe's, so nothing runs unconfined either way.
pub fn support_unprobed() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    if let Some(probed) = PROBED.get() {
        return probed.clone();
    }
    SUPPORT.get_or_init(linux::probe_landlock).clone()
}

/// Landlock's ABI on this kernel (asked once per process), without the namespaces' probe.
fn landlock_abi() -> Option<i32> {
    support_unprobed().landlock_abi
}

/// The sandbox could not be set up: the command must not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unavailable {
    /// The kernel lacks what the policy needs.
    #[error("this kernel cannot confine it: it lacks {}", .0.join(" and "))]
    Kernel(Vec<String>),
    /// Preparing the rules failed.
    #[error("the sandbox could not be prepared: {0}")]
    Prepare(String),
}

/// One command's confinement, prepared in the parent.
#[derive(Debug)]
pub struct Confinement {
    ruleset: OwnedFd,
    setgroups: CString,
    uid_map: CString,
    gid_map: CString,
    /// Directories bound onto themselves first, so that they cannot be moved or removed (a
    /// mount point cannot): `.git`, and the ancestors of held places inside writable ones.
    pinned: Vec<CString>,
    /// Links in a writable place on the way to a held place outside every writable one, bound
    /// onto themselves without being followed ([`held::Held::links`]).
    pinned_links: Vec<CString>,
    /// Read-only bind mounts.
    read_only: Vec<CString>,
    /// Directories hidden under an empty read-only tmpfs, each with whether it may be gone by
    /// the time it is mounted over ([`Hidden`]).
    hidden_dirs: Vec<Hidden>,
    /// Files hidden under `/dev/null`, as `hidden_dirs`.
    hidden_files: Vec<Hidden>,
    /// The seccomp program: socket families by allow-list, io_uring, the terminal injection
    /// `ioctl`s.
    network_filter: linux::Filter,
    /// Below Landlock ABI 9, pid 1's answers to the command's `connect` and `bind`
    /// (`broker/`).
    broker: Option<broker::Broker>,
    /// The private temporary directory and socket places, in mount order.
    places: Vec<private::Mount>,
    /// The temporary directory, as the command sees it (its own, empty).
    temp: PathBuf,
    /// The Landlock rights granted on the command's own temporary directory (a rule the child
    /// adds once its tmpfs is mounted).
    temp_rights: u64,
    /// [`Policy::unix_sockets`]: variables naming one are kept.
    unix_sockets: Vec<PathBuf>,
    /// [`Policy::keep_env`]: secret-carrying variables kept all the same.
    keep_env: Vec<String>,
    /// Which variables carry a secret ([`Policy::secret`]).
    secret: fn(&str) -> bool,
    summary: String,
    /// The stand-ins of absent held places: removed, where this command is their last holder,
    /// when it is dropped (after the command ended).
    _stand_ins: Placeholders,
    /// Their locks' descriptors, which pid 1 keeps open ([`Placeholders::lock_fds`]): listed
    /// here, before the fork, since pid 1 may not allocate.
    pub(crate) locks: Vec<std::os::fd::RawFd>,
    /// The end record's descriptor among them (-1: none), which pid 1 stamps when its parent
    /// dies (`spawn::orphaned`).
    pub(crate) record: std::os::fd::RawFd,
    /// Under a host list: the command's end of the channel its waiter hands the proxy its
    /// listening socket over, and the proxy (stopped when this is dropped).
    egress_channel: Option<OwnedFd>,
    proxy: Option<egress::proxy::Proxy>,
    /// Inside a confined agent: the nested sandbox's own (`nested.rs`).
    nested: Option<nested::Nested>,
    /// What git would run later of what the command leaves, looked at when it has ended.
    aftermath: aftermath::Aftermath,
    /// The rest of the filesystem, read-only ([`frozen`]).
    frozen: frozen::Frozen,
    /// The protected names the walk found below the roots ([`Confinement::settle`]).
    below: below::Below,
    /// That, recorded in hookd's state until the end has settled it (`unsettled.rs`).
    _pending: Option<unsettled::Pending>,
    /// Where an end that does not walk below keeps its record for the next start
    /// (`deferred.rs`): `STATE/deferred`.
    deferred: Option<PathBuf>,
    /// What the ends of commands whose hookd was killed would have said, settled before this
    /// one started: said at its end.
    settled_before: Vec<String>,
}

/// What a link the walk could not judge is (`walk::Found::unjudged`), and why, said where one is
/// moved aside and where one found at a start is named.
const UNJUDGED: (&str, &str) = (
    "a link hookd cannot follow as your shell, an agent or git would",
    "its way passes a link of /proc, which leads each process somewhere else, or is longer than a path may be",
);

/// What an end's second walk found ([`below::Below::again`]), dealt with: what the command made
/// moved aside, the reading it took given back; one sentence each, added to `said`.
fn said(again: below::Again, said: &mut Vec<String>) {
    for dir in &again.given_back {
        said.push(format!(
            "the confined command had taken its owner's reading off {}, which the walk at its start read: given back (u+rx) to look for what it made there",
            aftermath::shown(dir)
        ));
    }
    for cut in &again.cut {
        said.push(format!(
            "{cut}: what the confined command made below the project may not all have been moved aside; the next confined command here does not run until that is mended, and look for new `.claude/`, `.env` or `.git` below the project before you start an agent or git there"
        ));
    }
    for link in &again.unjudged {
        let (what, why) = UNJUDGED;
        let what = format!("{what}: {why}; what they would find through it cannot be looked at");
        said.push(aftermath::set_aside(
            link,
            &what,
            "an agent, an editor or git",
        ));
    }
    for made in &again.made {
        // Moved aside, never left where it takes effect: a place made is one that confined
        // commands may not write where it exists (held read-only), and an agent, an editor
        // or git there would read or run it outside the sandbox.
        let (what, who) = if made.file_name().is_some_and(|n| n == ".git") {
            (
                "a repository below the project, whose configuration git would run at your next `git status` there",
                "git",
            )
        } else {
            (
                "a place agents, editors or git read on their own, which confined commands may not write",
                "an agent, an editor or git",
            )
        };
        // Found where a link leads (`sub -> node_modules/pkg`): the link is said too, since
        // the place is where the user would not look.
        let what = match again.reached_through(made) {
            Some(link) => format!(
                "{what}; reached through the link {}",
                aftermath::shown(link)
            ),
            None => what.to_string(),
        };
        said.push(aftermath::set_aside(made, &what, who));
    }
}

/// What a confined command may not read: the hidden places (credential stores, histories,
/// the caller's own), those held hidden by the start of their name, the caller's state and
/// the policy's `read_deny`.
fn hidden(policy: &Policy) -> Vec<PathBuf> {
    let places = &policy.places;
    let mut out = places.hidden.clone();
    out.extend(
        places
            .prefixed_now()
            .into_iter()
            .filter(|(_, what)| *what == Hold::Hidden)
            .map(|(p, _)| p),
    );
    out.extend(policy.state.iter().cloned());
    // An entry that is a link is hidden where it leads (a mount on the link would fail, and
    // hiding only removes reading: sandbox-runtime resolves deny paths the same way).
    out.extend(policy.read_deny.iter().map(|p| {
        let link = p
            .symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink());
        if link {
            p.canonicalize().unwrap_or_else(|_| p.clone())
        } else {
            p.clone()
        }
    }));
    out.retain(|p| !policy.shown.contains(p));
    out
}

/// A place hidden from a confined command, found at the preparation; `may_go`: it lies outside
/// the places the command may write, so that where it is gone by the time pid 1 mounts over it
/// (removed meanwhile: another command's stand-in in the home, a restarted service's socket),
/// nothing is mounted there and the command still starts, as if it had been absent.
#[derive(Debug)]
pub(crate) struct Hidden {
    pub(crate) path: CString,
    pub(crate) may_go: bool,
}

impl Confinement {
    /// What the command may write and reach, for events and people.
    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// The temporary directory the command gets (`TMPDIR`): its own, empty at the start, where
    /// the host's was.
    pub fn temp_dir(&self) -> &Path {
        &self.temp
    }

    /// Whether the command gets the variable `name` of value `value`: not one naming a socket
    /// or a session outside ([`SOCKET_VARIABLES`]), unless it names a socket the policy lists,
    /// nor one carrying a secret, unless [`Policy::keep_env`] keeps it.
    pub fn keeps_var(&self, name: &std::ffi::OsStr, value: &std::ffi::OsStr) -> bool {
        private::keeps_var(&self.unix_sockets, name, value) && !self.secret_gone(name, value)
    }

    /// The variables the command gets besides its own (under a host list: the proxy's,
    /// [`proxy_vars`]).
    pub fn added_vars(&self) -> Vec<(&'static str, String)> {
        if self.proxy.is_some() {
            egress::proxy_vars_at(self.nested.as_ref().and_then(|n| n.proxy))
        } else {
            Vec::new()
        }
    }

    /// The connections the command made through hookd's proxy so far (under a host list).
    pub fn network_requests(&self) -> Vec<NetworkRequest> {
        self.proxy
            .as_ref()
            .map(|p| p.requests())
            .unwrap_or_default()
    }

    /// Once the command has ended: what it left that git would run outside the sandbox later
    /// (a rebase's to-do list with an `exec` line), and the protected places it made below the
    /// project (and the other writable roots), off the way to its working directory, where
    /// absent ones cannot be held (`mkdir web/.claude`, `git init sub`), and the links it made
    /// to such places where the walk does not enter, moved aside; one sentence each of what was
    /// moved or given back, for the caller to say (on stderr, in the hook's report). Walks the
    /// project again: once per command.
    pub fn settle(&self) -> Vec<String> {
        let mut said = self.settled_before.clone();
        said.extend(self.aftermath.settle());
        self::said(self.below.again(), &mut said);
        if !self.below.looks_below() {
            // The tree below was not walked again: the next start judges it.
            if let Some(dir) = &self.deferred {
                deferred::keep(dir, &self.below);
            }
        }
        // Last: it runs git, bounded in time, and what it could not tell is said (attack round
        // 12: a sparse file it hashed for hours kept the checks above from running).
        said.extend(self.aftermath.unhidden());
        said
    }

    /// The connections the command made through hookd's proxy, once those still open have
    /// ended (the command has; at most a second's wait).
    pub fn network_requests_settled(&self) -> Vec<NetworkRequest> {
        self.proxy
            .as_ref()
            .map(|p| p.requests_settled(std::time::Duration::from_secs(1)))
            .unwrap_or_default()
    }

    /// The descriptor the waiter hands the proxy's listening socket over, under a host list.
    pub(crate) fn egress_channel(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.egress_channel.as_ref().map(|f| f.as_raw_fd())
    }

    /// Whether the variable `name` carries a secret (its name, [`Policy::secret`]; or its
    /// value, a URL with a password: `postgres://user:pw@db/x`) that [`Policy::keep_env`] does
    /// not keep: a confined command does not get it.
    fn secret_gone(&self, name: &std::ffi::OsStr, value: &std::ffi::OsStr) -> bool {
        let Some(name) = name.to_str() else {
            return false;
        };
        let kept = self.keep_env.iter().any(|k| match k.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => k == name,
        });
        ((self.secret)(name) || private::has_password(value)) && !kept
    }
}

/// What the command may write and reach, in a line: the writable places (the command's own
/// temporary directory, `own_temp`, second) and the network.
fn summary(writable: &[PathBuf], own_temp: Option<&Path>, policy: &Policy) -> String {
    let mut writes: Vec<String> = writable.iter().map(|p| p.display().to_string()).collect();
    if let Some(t) = own_temp {
        let at = writes.len().min(1);
        writes.insert(at, format!("{} (its own, empty)", t.display()));
    }
    let network = match &policy.network {
        Network::All => "on".to_string(),
        Network::Proxy(e) => format!(
            "through hookd's proxy to {}{}",
            e.allow_words(),
            if e.deny.is_empty() {
                String::new()
            } else {
                format!(" (not {})", e.deny.join(", "))
            }
        ),
        Network::None => "off".to_string(),
    };
    format!("writes: {}; network: {network}", writes.join(", "))
}

fn c_path(path: &Path) -> Result<CString, Unavailable> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Unavailable::Prepare(format!("{} has a NUL byte", path.display())))
}

fn cstring(s: String) -> Result<CString, Unavailable> {
    CString::new(s).map_err(|e| Unavailable::Prepare(e.to_string()))
}

/// The temporary directory confined commands may write: the host's `$TMPDIR` (else `/tmp`),
/// unless it holds a home directory (`TMPDIR=$HOME` would make the home writable): then `/tmp`.
pub fn temp_dir(policy: &Policy) -> PathBuf {
    let tmp = policy.temp.clone().unwrap_or_else(|| PathBuf::from("/tmp"));
    let real = tmp.canonicalize().unwrap_or_else(|_| tmp.clone());
    let holds_home = policy
        .home
        .iter()
        .cloned()
        .chain(user_home())
        .any(|h| h.canonicalize().unwrap_or(h).starts_with(&real));
    if holds_home {
        PathBuf::from("/tmp")
    } else {
        tmp
    }
}

/// Whether a command confined by `policy` in `project` may write nothing but its own temporary
/// directory: `--read-only`, or a project that is the filesystem's root (a command run from `/`
/// outside any repository: its project would make everything writable and hold no name in it,
/// attack round 17, F5).
fn read_only(policy: &Policy, project: &Path) -> bool {
    policy.read_only || project.parent().is_none()
}

/// Where `policy` lets a confined command write (for the file tools' check and people): the
/// project, the temporary directory and the `write` entries.
pub fn writable_places(policy: &Policy, project: &Path) -> Vec<PathBuf> {
    if read_only(policy, project) {
        return vec![temp_dir(policy)];
    }
    let mut out = vec![project.to_path_buf(), temp_dir(policy)];
    out.extend(policy.write.iter().cloned());
    out
}

/// `argv` as a [`std::process::Command`] that runs confined by `confinement` (`hookd exec`):
/// stdio inherited, run in `cwd`, in a new session (no controlling terminal) and PID namespace
/// (nothing it starts outlives it), with no descriptor above 2 but `keep_fd`, with the
/// variables `vars` less those naming sockets outside ([`Confinement::keeps_var`]) and
/// `TMPDIR` its own.
pub fn command<'a>(
    confinement: std::sync::Arc<Confinement>,
    argv: &[String],
    cwd: &Path,
    keep_fd: Option<std::os::fd::RawFd>,
    vars: impl IntoIterator<Item = (&'a std::ffi::OsStr, &'a std::ffi::OsStr)>,
) -> std::process::Command {
    let mut cmd = unprepared(&confinement, argv, cwd, vars);
    spawn::prepare(&mut cmd, Some(confinement), keep_fd, None);
    cmd
}

/// Run the command [`command`] makes until it has ended (what it started ended too; the
/// namespaces' teardown not waited for: its pid 1 is reaped when the next command here starts
/// or ends, or by whoever adopts it when this process ends first). This process passes on the
/// signals it catches meanwhile (`SIGINT`, `SIGTERM`, … as [`run_spawned`]'s waiter does), its
/// own handlers put back after.
pub fn run_command<'a>(
    confinement: std::sync::Arc<Confinement>,
    argv: &[String],
    cwd: &Path,
    keep_fd: Option<std::os::fd::RawFd>,
    vars: impl IntoIterator<Item = (&'a std::ffi::OsStr, &'a std::ffi::OsStr)>,
) -> std::io::Result<std::process::ExitStatus> {
    run_command_keeping(confinement, argv, cwd, keep_fd.map(|fd| (fd, fd)), vars)
}

/// [`run_command`], this process's descriptor `keep.0` the command's `keep.1` (the rewritten
/// shell call's report channel).
pub fn run_command_keeping<'a>(
    confinement: std::sync::Arc<Confinement>,
    argv: &[String],
    cwd: &Path,
    keep: Option<(std::os::fd::RawFd, std::os::fd::RawFd)>,
    vars: impl IntoIterator<Item = (&'a std::ffi::OsStr, &'a std::ffi::OsStr)>,
) -> std::io::Result<std::process::ExitStatus> {
    let cmd = unprepared(&confinement, argv, cwd, vars);
    spawn::run_made(cmd, confinement, keep)
}

/// `argv` in `cwd` with [`confined_env`]'s variables, not yet made to start confined.
fn unprepared<'a>(
    confinement: &Confinement,
    argv: &[String],
    cwd: &Path,
    vars: impl IntoIterator<Item = (&'a std::ffi::OsStr, &'a std::ffi::OsStr)>,
) -> std::process::Command {
    let mut cmd = std::process::Command::new(&argv[0]);
    cmd.args(&argv[1..]).current_dir(cwd);
    confined_env(&mut cmd, confinement, vars);
    cmd
}

/// `cmd`'s environment for a confined command: `vars` less those naming sockets outside
/// ([`Confinement::keeps_var`]), and `TMPDIR` the command's own.
pub fn confined_env<'a>(
    cmd: &mut std::process::Command,
    confinement: &Confinement,
    vars: impl IntoIterator<Item = (&'a std::ffi::OsStr, &'a std::ffi::OsStr)>,
) {
    cmd.env_clear()
        .envs(
            vars.into_iter()
                .filter(|(k, v)| confinement.keeps_var(k, v)),
        )
        .envs(confinement.added_vars())
        .env("TMPDIR", confinement.temp_dir());
}

/// Why [`run`] did not run a command.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// It cannot be confined here, so it did not run.
    #[error(transparent)]
    Unavailable(#[from] Unavailable),
    /// It could not start.
    #[error("`{program}` could not start confined: {source}")]
    Start {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Run `argv` confined by `policy` in `cwd` (inside `project`), stdio inherited, no other
/// descriptor but `keep_fd`, with the variables `vars` as [`command`] passes them on: its exit
/// status as a shell reports it (128 + N when signal N ended it). It never runs unconfined.
pub fn run<'a>(
    policy: &Policy,
    project: &Path,
    argv: &[String],
    cwd: &Path,
    keep_fd: Option<std::os::fd::RawFd>,
    vars: impl IntoIterator<Item = (&'a std::ffi::OsStr, &'a std::ffi::OsStr)>,
) -> Result<i32, RunError> {
    use std::os::unix::process::ExitStatusExt;
    let confinement = std::sync::Arc::new(Confinement::prepare_in(policy, project, cwd)?);
    let status = run_command(confinement.clone(), argv, cwd, keep_fd, vars).map_err(|source| {
        RunError::Start {
            program: argv.first().cloned().unwrap_or_default(),
            source,
        }
    })?;
    // What it left that git would run later was moved aside, and what it made below that
    // could not be held: said where its own stderr went.
    for said in confinement.settle() {
        eprintln!("hookd: {said}");
    }
    Ok(status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1))
}

/// `path` with `.`, `..` and every symlink resolved, component by component, as far as they
/// exist; what does not exist yet is kept as named (as the kernel would follow them: a write
/// through a dangling link creates its target).
pub fn resolve(path: &Path) -> PathBuf {
    resolve_noting(path, |_| {})
}

/// [`resolve`], telling `met` each link it follows, where the link lies (its directory
/// resolved), in the order the kernel would meet them; at most 40 are followed.
pub(crate) fn resolve_noting(path: &Path, mut met: impl FnMut(&Path)) -> PathBuf {
    use std::path::Component;
    let parts = |p: &Path| -> Vec<std::ffi::OsString> {
        (p.components().rev())
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect()
    };
    let mut out = PathBuf::from("/");
    let mut pending = parts(path);
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == ".." {
            out.pop();
            continue;
        }
        out.push(&part);
        match std::fs::read_link(&out) {
            Ok(target) if links < 40 => {
                links += 1;
                met(&out);
                out.pop();
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                pending.extend(parts(&target));
            }
            _ => {}
        }
    }
    out
}
