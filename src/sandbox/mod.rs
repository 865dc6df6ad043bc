//! Confinement for the commands hookd lets run: the kernel, not the command's words, bounds
//! what an admitted program (and every process it starts) may write, read and reach.
//!
//! Three mechanisms, all unprivileged: Landlock (the outer write boundary: only the project,
//! the command's own temporary directory and the policy's `write` places; no link or rename of
//! a file from outside into them), a user + mount namespace (inside the project, `.infer/`,
//! `.git/hooks`, `.git/config` and the agents' settings bound read-only; credential stores
//! hidden under empty read-only mounts; an empty tmpfs over `/tmp`, `$TMPDIR` and the places
//! where services keep their sockets, see `private.rs`; which places are read-only or hidden
//! comes from the catalog, `crate::places`) and a seccomp filter (socket families by
//! allow-list, io_uring, terminal injection). Landlock only grants: a hole in a granted tree
//! needs the mounts. All are inherited by every descendant and cannot be dropped
//! (no_new_privs; a Landlocked process cannot change mounts).
//!
//! [`Confinement::prepare`] does everything that allocates, in the parent; the forked child
//! only makes syscalls (`spawn`: the one way hooks and `hookd exec` start, with a PID namespace
//! that nothing the command starts outlives). Where the kernel cannot enforce the policy
//! ([`support`]), nothing runs unconfined: [`Confinement::prepare`] fails and says what is
//! missing.

mod egress;
mod linux;
mod rewrite;

pub use egress::proxy::NetworkRequest;
pub use egress::{invalid_entry as invalid_host_entry, proxy_vars, Egress, PROXY_ADDR};

pub use rewrite::{
    channel_dir, channel_file, confined_call, gemini_refuses, run_shell, shell_argv, shell_quote,
    shell_rewrite, Decided, ShellRun, CRUSH_SHELL_TOOL, GEMINI_SHELL_TOOL,
};
mod nested;
mod spawn;

pub(crate) use spawn::{prepare as prepare_spawn, prepare_unwaited};
mod held;
mod placeholder;
mod private;

use held::held;
use placeholder::Placeholders;

pub use nested::AGENT_VAR;
pub use private::SOCKET_VARIABLES;

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;

use crate::places::{Anchors, Sandbox, SandboxPlaces};

/// The sandbox every command hookd lets run is confined by (see docs/security.md).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SandboxPolicy {
    /// Confine at all.
    pub enabled: bool,
    /// Let confined commands use the network.
    pub network: bool,
    /// With `network` off: the hosts confined commands reach through hookd's proxy
    /// (`sandbox.network: {allow, deny}`); `None`: no network at all.
    pub egress: Option<Egress>,
    /// Writable besides the project and the temporary directory.
    pub write: Vec<PathBuf>,
    /// Unreadable besides the credential stores hookd always hides.
    pub read_deny: Vec<PathBuf>,
    /// Nothing writable but the command's own temporary directory: not the project, not the
    /// `write` places (`hookd exec --read-only`; a call in one of `read_only_modes`).
    pub read_only: bool,
    /// The agent modes whose shell calls and file tools are held read-only
    /// (`sandbox.read_only_modes`).
    pub read_only_modes: Vec<crate::kinds::Mode>,
    /// The user's home, where those credential stores are.
    #[serde(skip)]
    pub home: Option<PathBuf>,
    /// The host's temporary directory (`$TMPDIR`), writable unless it holds a home; `None`:
    /// `/tmp`.
    #[serde(skip)]
    pub temp: Option<PathBuf>,
    /// hookd's session state as the host names it (`$HOOKD_STATE_DIR`, …): hidden.
    #[serde(skip)]
    pub state: Option<PathBuf>,
    /// The places held read-only, pinned or hidden, from the catalog of places
    /// ([`crate::places`]) at the host's anchors; empty: those of the homes alone.
    #[serde(skip)]
    pub places: SandboxPlaces,
    /// Unix sockets a confined command may connect to although something outside made them
    /// (`sandbox.unix_sockets`, the user's layer only).
    pub unix_sockets: Vec<PathBuf>,
    /// Secret-carrying variables confined commands get all the same: names, or a prefix and
    /// `*` (`sandbox.env.keep`, the user's layer only; see [`crate::vars::carries_secret`]).
    pub keep_env: Vec<String>,
    /// The user's runtime directory as the host names it (`$XDG_RUNTIME_DIR`): covered, as
    /// `/run/user/UID` is.
    #[serde(skip)]
    pub runtime: Option<PathBuf>,
    /// The host says it runs inside a confined agent (`hookd run --confine` sets
    /// [`AGENT_VAR`]): where that is evidently so, commands get the nested sandbox
    /// (`nested.rs`) instead of none.
    #[serde(skip)]
    pub nested: bool,
    /// Places hookd's state would hide that stay as they are: a confined agent's hooks
    /// (`hookd adapter`) keep their state there (`hookd run --confine`).
    #[serde(skip)]
    pub shown: Vec<PathBuf>,
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
}

/// Landlock's third ABI (Linux 6.2): the first that also bounds `truncate(2)` and refers
/// (links, renames) across directories; older ones leave a confined command able to truncate
/// or hard-link files outside what it may write.
pub const MIN_LANDLOCK_ABI: i32 = 3;

impl Support {
    /// What is missing for the policy to be enforced, one phrase each; empty when nothing is.
    pub fn missing(&self) -> Vec<String> {
        let mut out = Vec::new();
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
pub fn missing_for(policy: &SandboxPolicy) -> Vec<String> {
    let missing = support().missing();
    if nested::here(policy, &missing) {
        Vec::new()
    } else {
        missing
    }
}

/// What this kernel offers, probed once per process.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(linux::probe)
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
    /// Read-only bind mounts: the path and the flags its mount already has (a remount in a
    /// user namespace must keep them).
    read_only: Vec<(CString, u64)>,
    /// Directories hidden under an empty read-only tmpfs.
    hidden_dirs: Vec<CString>,
    /// Files hidden under `/dev/null`.
    hidden_files: Vec<CString>,
    /// The seccomp program: socket families by allow-list, io_uring, the terminal injection
    /// `ioctl`s.
    network_filter: seccompiler::BpfProgram,
    /// The private temporary directory and socket places, in mount order.
    places: Vec<private::Mount>,
    /// The temporary directory, as the command sees it (its own, empty).
    temp: PathBuf,
    /// The Landlock rights granted on the command's own temporary directory (a rule the child
    /// adds once its tmpfs is mounted).
    temp_rights: u64,
    /// `sandbox.unix_sockets`: variables naming one are kept.
    unix_sockets: Vec<PathBuf>,
    /// `sandbox.env.keep`: secret-carrying variables kept all the same.
    keep_env: Vec<String>,
    summary: String,
    /// The stand-ins of absent held places: removed, where this command is their last holder,
    /// when it is dropped (after the command ended).
    _stand_ins: Placeholders,
    /// Under a host list: the command's end of the channel its waiter hands the proxy its
    /// listening socket over, and the proxy (stopped when this is dropped).
    egress_channel: Option<OwnedFd>,
    proxy: Option<egress::proxy::Proxy>,
    /// Inside a confined agent: the nested sandbox's own (`nested.rs`).
    nested: Option<nested::Nested>,
}

/// The catalog's places for `policy`: its own, or, when it has none (a configuration without
/// a host), those of its home and the user database's.
fn places_of(policy: &SandboxPolicy) -> SandboxPlaces {
    if policy.places != SandboxPlaces::default() {
        return policy.places.clone();
    }
    let mut homes: Vec<PathBuf> = policy.home.iter().cloned().collect();
    let user = crate::paths::user_home();
    homes.extend(user.filter(|h| !homes.contains(h)));
    SandboxPlaces::of(&Anchors::new(homes, |_| None), &[])
}

/// What a confined command may not read: the catalog's hidden places (credential stores,
/// histories, hookd's own) in the home `HOME` names and in the one the user database does (a
/// repository's settings may have set `HOME` for the agent), hookd's session state where the
/// host puts it and where it is by default, and the policy's `read_deny`.
fn hidden(policy: &SandboxPolicy, places: &SandboxPlaces) -> Vec<PathBuf> {
    let mut out = places.hidden.clone();
    out.extend(
        places
            .prefixed_now()
            .into_iter()
            .filter(|(_, what)| *what == Sandbox::Hidden)
            .map(|(p, _)| p),
    );
    out.extend(policy.state.iter().cloned());
    out.extend(default_state().filter(|s| policy.state.as_ref() != Some(s)));
    out.extend(policy.read_deny.iter().cloned());
    out.retain(|p| !policy.shown.contains(p));
    out
}

/// hookd's state where it is by default (`~/.local/state/hookd` of the user database's home).
fn default_state() -> Option<PathBuf> {
    crate::paths::user_home().map(|h| h.join(".local/state/hookd"))
}

/// hookd's state: where the host puts it, else where it is by default (both hidden).
fn state_of(policy: &SandboxPolicy) -> Option<PathBuf> {
    policy.state.clone().or_else(default_state)
}

impl Confinement {
    /// Prepare the confinement of a command run in `project` (from its root) under `policy`.
    pub fn prepare(policy: &SandboxPolicy, project: &Path) -> Result<Confinement, Unavailable> {
        Confinement::prepare_in(policy, project, project)
    }

    /// Prepare the confinement of a command run in `project` from `cwd` under `policy`.
    pub fn prepare_in(
        policy: &SandboxPolicy,
        project: &Path,
        cwd: &Path,
    ) -> Result<Confinement, Unavailable> {
        let missing = support().missing();
        if nested::here(policy, &missing) {
            return nested::prepare(policy, project, &temp_dir(policy));
        }
        if !missing.is_empty() {
            return Err(Unavailable::Kernel(missing));
        }
        let project = project
            .canonicalize()
            .map_err(|e| Unavailable::Prepare(format!("the project {}: {e}", project.display())))?;
        let temp = temp_dir(policy);
        // The locks of the stand-ins are made first, so that they are hidden with the state.
        let mut stand_ins = Placeholders::new(state_of(policy).map(|s| s.join("placeholders")));
        let places = places_of(policy);
        let hidden = hidden(policy, &places);
        let private = private::plan(policy, &project, &hidden)?;
        // Read-only: nothing but the command's own temporary directory (granted in the child
        // once its tmpfs is mounted); the host's when it cannot be replaced.
        let mut writable = Vec::new();
        writable.extend((!policy.read_only).then(|| project.clone()));
        // The host's temporary directory only where it is not replaced by the command's own.
        writable.extend((!private.temp_covered).then(|| temp.clone()));
        if !policy.read_only {
            writable.extend(policy.write.iter().cloned());
        }
        let ruleset =
            linux::ruleset(&writable, &policy.unix_sockets).map_err(Unavailable::Prepare)?;
        let real_writable: Vec<PathBuf> = writable.iter().map(|w| resolve(w)).collect();
        let mut held = held(&places, &project, cwd, &real_writable, &mut stand_ins)?;
        let mut hidden_dirs = Vec::new();
        let mut hidden_files = Vec::new();
        for path in hidden.iter().chain(&private.hidden_files) {
            match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => hidden_dirs.push(c_path(path)?),
                Ok(_) => hidden_files.push(c_path(path)?),
                Err(_) => continue,
            }
            held.pin_ancestors(&resolve(path), &real_writable);
        }
        for path in held.read_only.clone() {
            held.pin_ancestors(&resolve(&path), &real_writable);
        }
        held.sort();
        let pinned = held
            .pinned
            .iter()
            .map(|p| c_path(p))
            .collect::<Result<Vec<_>, _>>()?;
        let read_only = held
            .read_only
            .iter()
            .map(|p| Ok((c_path(p)?, linux::mount_flags(p))))
            .collect::<Result<Vec<_>, Unavailable>>()?;
        let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
        let own_temp = private.temp_covered.then_some(temp.as_path());
        let summary = summary(&writable, own_temp, policy);
        let (proxy, egress_channel) = start_proxy(policy)?;
        Ok(Confinement {
            ruleset,
            setgroups: CString::from(c"deny"),
            uid_map: cstring(format!("{uid} {uid} 1"))?,
            gid_map: cstring(format!("{gid} {gid} 1"))?,
            pinned,
            read_only,
            hidden_dirs,
            hidden_files,
            network_filter: linux::network_filter(policy.network || proxy.is_some())
                .map_err(Unavailable::Prepare)?,
            places: private.mounts,
            temp_rights: linux::temp_rights(),
            temp,
            unix_sockets: policy.unix_sockets.clone(),
            keep_env: policy.keep_env.clone(),
            summary,
            _stand_ins: stand_ins,
            egress_channel,
            proxy,
            nested: None,
        })
    }

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
    /// nor one carrying a secret, unless `sandbox.env.keep` keeps it.
    pub fn keeps_var(&self, name: &std::ffi::OsStr, value: &std::ffi::OsStr) -> bool {
        private::keeps_var(&self.unix_sockets, name, value) && !self.secret_gone(name)
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

    /// Whether the variable `name` carries a secret ([`crate::vars::carries_secret`]) that
    /// `sandbox.env.keep` does not keep: a confined command does not get it.
    fn secret_gone(&self, name: &std::ffi::OsStr) -> bool {
        let Some(name) = name.to_str() else {
            return false;
        };
        let kept = self.keep_env.iter().any(|k| match k.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => k == name,
        });
        crate::vars::carries_secret(name) && !kept
    }
}

/// Under a host list (and the network not on): hookd's proxy for the command, and the end of
/// the channel its waiter hands the proxy the listening socket over.
type Started = (Option<egress::proxy::Proxy>, Option<OwnedFd>);

fn start_proxy(policy: &SandboxPolicy) -> Result<Started, Unavailable> {
    match policy.egress.as_ref().filter(|_| !policy.network) {
        Some(e) => {
            let (p, ch) = egress::proxy::Proxy::start(e.clone(), None)
                .map_err(|e| Unavailable::Prepare(format!("hookd's proxy: {e}")))?;
            Ok((Some(p), Some(ch)))
        }
        None => Ok((None, None)),
    }
}

/// What the command may write and reach, in a line: the writable places (the command's own
/// temporary directory, `own_temp`, second) and the network.
fn summary(writable: &[PathBuf], own_temp: Option<&Path>, policy: &SandboxPolicy) -> String {
    let mut writes: Vec<String> = writable.iter().map(|p| p.display().to_string()).collect();
    if let Some(t) = own_temp {
        let at = writes.len().min(1);
        writes.insert(at, format!("{} (its own, empty)", t.display()));
    }
    let network = match (&policy.egress, policy.network) {
        (_, true) => "on".to_string(),
        (Some(e), false) => format!(
            "through hookd's proxy to {}{}",
            e.allow_words(),
            if e.deny.is_empty() {
                String::new()
            } else {
                format!(" (not {})", e.deny.join(", "))
            }
        ),
        (None, false) => "off".to_string(),
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

/// The user's home as the user database has it.
/// The temporary directory confined commands may write: the host's `$TMPDIR` (else `/tmp`),
/// unless it holds a home directory (`TMPDIR=$HOME` would make the home writable): then `/tmp`.
pub fn temp_dir(policy: &SandboxPolicy) -> PathBuf {
    let tmp = policy.temp.clone().unwrap_or_else(|| PathBuf::from("/tmp"));
    let real = tmp.canonicalize().unwrap_or_else(|_| tmp.clone());
    let holds_home = policy
        .home
        .iter()
        .cloned()
        .chain(crate::paths::user_home())
        .any(|h| h.canonicalize().unwrap_or(h).starts_with(&real));
    if holds_home {
        PathBuf::from("/tmp")
    } else {
        tmp
    }
}

/// Where `policy` lets a confined command write (for the file tools' check and people): the
/// project, the temporary directory and the `write` entries.
pub fn writable_places(policy: &SandboxPolicy, project: &Path) -> Vec<PathBuf> {
    if policy.read_only {
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
    let mut cmd = std::process::Command::new(&argv[0]);
    cmd.args(&argv[1..]).current_dir(cwd);
    confined_env(&mut cmd, &confinement, vars);
    spawn::prepare(&mut cmd, Some(confinement), keep_fd, None);
    cmd
}

/// `cmd`'s environment for a confined command: `vars` less those naming sockets outside
/// ([`Confinement::keeps_var`]), and `TMPDIR` the command's own.
pub(crate) fn confined_env<'a>(
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

/// Run `argv` confined by `policy` (even where `enabled` is off) in `cwd`, stdio inherited, no
/// other descriptor but `keep_fd`, with `host`'s variables as [`command`] passes them on: its
/// exit status as a shell reports it (128 + N when signal N ended it). It never runs unconfined.
pub fn run(
    policy: &SandboxPolicy,
    project: &Path,
    argv: &[String],
    cwd: &Path,
    keep_fd: Option<std::os::fd::RawFd>,
    host: &crate::host::Host,
) -> Result<i32, RunError> {
    use std::os::unix::process::ExitStatusExt;
    let confinement = Confinement::prepare_in(policy, project, cwd)?;
    let status = command(
        std::sync::Arc::new(confinement),
        argv,
        cwd,
        keep_fd,
        host.vars(),
    )
    .status()
    .map_err(|source| RunError::Start {
        program: argv.first().cloned().unwrap_or_default(),
        source,
    })?;
    Ok(status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1))
}

/// Why a write to `path` (absolute) breaks `policy`: outside the places confined commands may
/// write, or inside one of the project's read-only places. `None` when it may. Symlinks are
/// followed as the kernel would, dangling ones included (a write through one creates its
/// target).
pub fn write_refused(policy: &SandboxPolicy, project: &Path, path: &Path) -> Option<String> {
    let real = resolve(path);
    let project = resolve(project);
    let writable = writable_places(policy, &project);
    if !writable.iter().any(|w| real.starts_with(resolve(w))) {
        return Some(format!(
            "outside the places the sandbox lets commands write ({})",
            writable
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(rel) = real
        .strip_prefix(&project)
        .ok()
        .and_then(crate::places::by_name)
    {
        return Some(format!(
            "inside `{}` of the project, which the sandbox keeps read-only",
            rel.display()
        ));
    }
    let places = places_of(policy);
    places
        .read_only
        .iter()
        .chain(&places.hidden)
        .find(|p| real.starts_with(resolve(p)))
        .map(|p| {
            format!(
                "inside {}, which the sandbox keeps from confined commands",
                p.display()
            )
        })
}

/// `path` with `.`, `..` and every symlink resolved, component by component, as far as they
/// exist; what does not exist yet is kept as named.
fn resolve(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::from("/");
    let mut pending: Vec<std::ffi::OsString> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
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
                out.pop();
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                pending.extend(target.components().rev().filter_map(|c| match c {
                    Component::Normal(n) => Some(n.to_os_string()),
                    Component::ParentDir => Some("..".into()),
                    _ => None,
                }));
            }
            _ => {}
        }
    }
    out
}
