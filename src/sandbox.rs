//! The sandbox as hookd uses it. The mechanism (Landlock, namespaces, mounts, seccomp, the
//! egress proxy, the one spawn path) is the crate `hookd_sandbox` (crates/hookd-sandbox),
//! which knows nothing of hookd; here hookd builds its [`hookd_sandbox::Policy`] from the
//! configuration ([`SandboxPolicy`]) and the catalog of places ([`crate::places`]), checks the
//! model's file tools against it ([`write_refused`]), and rewrites the agents' shell calls so
//! that they run confined (`rewrite.rs`).
//!
//! Without the `sandbox` feature every command still starts by the same spawn path, and a
//! policy with the sandbox on fails closed ([`support`] says what is missing).

mod rewrite;

pub use rewrite::{
    channel_dir, channel_file, confined_call, gemini_refuses, run_shell, shell_argv, shell_quote,
    shell_rewrite, Decided, ShellRun, CRUSH_SHELL_TOOL, GEMINI_SHELL_TOOL,
};

pub use hookd_sandbox::{
    command, invalid_host_entry, proxy_vars, support, Confinement, Egress, NetworkRequest,
    RunError, Support, Unavailable, AGENT_VAR, MIN_LANDLOCK_ABI, PROXY_ADDR, SOCKET_VARIABLES,
};
pub(crate) use hookd_sandbox::{prepare_to_spawn_now, prepare_unwaited};

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::places::{Anchors, SandboxPlaces};

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
    /// How far below the project (and `write`) protected names are looked for
    /// (`sandbox.walk`, the user's layer only).
    #[serde(skip)]
    pub walk: hookd_sandbox::walk::Bounds,
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
    pub places: crate::places::SandboxPlaces,
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
    /// Temporary and runtime directories the process's variables named before a repository's
    /// files named those variables too (`TMPDIR=x` in its `.env`; `hookd exec` drops the value):
    /// covered as the user's runtime directory is, since they may be the user's own.
    #[serde(skip)]
    pub covered: Vec<PathBuf>,
    /// The sockets the host's socket variables name (`SSH_AUTH_SOCK`, `DOCKER_HOST`, …): hidden
    /// wherever they are.
    #[serde(skip)]
    pub named_sockets: Vec<PathBuf>,
    /// The host says it runs inside a confined agent (`hookd run --confine` sets
    /// [`AGENT_VAR`]): where that is evidently so, commands get the nested sandbox
    /// (crates/hookd-sandbox's `nested.rs`) instead of none.
    #[serde(skip)]
    pub nested: bool,
    /// This is a confined agent's policy, whose commands get sandboxes of their own inside it
    /// ([`hookd_sandbox::Policy::nests`]).
    #[serde(skip)]
    pub nests: bool,
    /// Places hookd's state would hide that stay as they are: a confined agent's hooks
    /// (`hookd adapter`) keep their state there (`hookd run --confine`).
    #[serde(skip)]
    pub shown: Vec<PathBuf>,
    /// The host's `PATH`, where the git that looks at a command's index afterwards is found
    /// ([`hookd_sandbox::Policy::git`]).
    #[serde(skip)]
    pub path: Option<std::ffi::OsString>,
}

impl SandboxPolicy {
    /// The mechanism's policy ([`hookd_sandbox::Policy`]) for a command: the catalog's places
    /// (those of the homes alone where the configuration has none), hookd's state hidden where
    /// the host puts it and where it is by default, and hookd's secret-carrying variables
    /// ([`crate::vars::carries_secret`]) withheld unless `sandbox.env.keep` keeps them.
    pub fn confinement(&self) -> hookd_sandbox::Policy {
        let mut out = self.base();
        out.places = places_of(self);
        out.places.walk = self.walk.clone();
        // Found only here, when a command is confined (not for the gate's checks of a path).
        out.git = crate::program::program_path("git", Path::new("/"), self.path.as_deref());
        // hookd itself, which the agents run unconfined at every tool call (`hookd install`
        // names this file): held read-only where a confined command may write (a `write` entry
        // holding `~/.cargo`, the agent started in the home: attack round 11, F8).
        if let Ok(me) = std::env::current_exe().and_then(|p| p.canonicalize()) {
            out.places.read_only.push(me);
        }
        out
    }

    /// [`SandboxPolicy::confinement`] without the places (what the temporary directory and
    /// the writable places need).
    fn base(&self) -> hookd_sandbox::Policy {
        let mut out = hookd_sandbox::Policy::default();
        out.network = match (&self.egress, self.network) {
            (_, true) => hookd_sandbox::Network::All,
            (Some(e), false) => hookd_sandbox::Network::Proxy(e.clone()),
            (None, false) => hookd_sandbox::Network::None,
        };
        out.write = self.write.clone();
        // hookd's state where it is by default, besides where the host puts it.
        let default = default_state();
        out.read_deny = (self.state.is_some() && self.state != default)
            .then_some(default)
            .flatten()
            .into_iter()
            .chain(self.read_deny.iter().cloned())
            .collect();
        out.read_only = self.read_only;
        out.home = self.home.clone();
        out.temp = self.temp.clone();
        out.state = state_dir(self);
        out.unix_sockets = self.unix_sockets.clone();
        out.secret = crate::vars::carries_secret;
        out.keep_env = self.keep_env.clone();
        out.runtime = self.runtime.clone();
        out.covered = self.covered.clone();
        out.named_sockets = self.named_sockets.clone();
        out.nested = self.nested;
        out.nests = self.nests;
        out.shown = self.shown.clone();
        out
    }
}

/// What this kernel lacks to confine a command under `policy`, one phrase each
/// ([`Support::missing`]), empty where the nested sandbox of a confined agent stands in.
pub fn missing_for(policy: &SandboxPolicy) -> Vec<String> {
    hookd_sandbox::missing_for(&policy.base())
}

/// The event of a confined command's connection `n` through hookd's proxy: made by the hook
/// `name` at `hook` (`exec` at `pre_tool` for a model's call) in `session`.
pub(crate) fn network_event(
    n: NetworkRequest,
    name: String,
    hook: crate::catalog::HookPoint,
    session: String,
) -> crate::events::NetworkRequest {
    crate::events::NetworkRequest {
        host: n.host,
        port: n.port,
        verdict: n.verdict.into(),
        reason: n.reason,
        bytes_out: n.bytes_out,
        bytes_in: n.bytes_in,
        duration_ms: n.duration_ms,
        name,
        hook,
        session_id: session,
    }
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
    crate::places::sandbox_places(&Anchors::new(homes, |_| None), &[])
}

/// hookd's state where it is by default (`~/.local/state/hookd` of the user database's home).
fn default_state() -> Option<PathBuf> {
    crate::paths::user_home().map(|h| h.join(".local/state/hookd"))
}

/// hookd's state directory as a confined command's sandbox hides it: the host's, else the
/// user database's home's `~/.local/state/hookd`.
pub(crate) fn state_dir(policy: &SandboxPolicy) -> Option<PathBuf> {
    policy.state.clone().or_else(default_state)
}

/// Prepare the confinement of a command run in `project` (from its root) under `policy`.
pub fn prepare(policy: &SandboxPolicy, project: &Path) -> Result<Confinement, Unavailable> {
    Confinement::prepare(&confined(policy, project), project)
}

/// Prepare the confinement of a command run in `project` from `cwd` under `policy`.
pub fn prepare_in(
    policy: &SandboxPolicy,
    project: &Path,
    cwd: &Path,
) -> Result<Confinement, Unavailable> {
    Confinement::prepare_in(&confined(policy, project), project, cwd)
}

/// [`prepare_in`] for a command started as soon as it is prepared (`hookd exec`, the model's
/// rewritten shell call): the kernel's namespaces are not probed first
/// ([`hookd_sandbox::Policy::start_at_once`]); a start that then fails is explained by
/// [`started`].
pub(crate) fn prepare_to_start(
    policy: &SandboxPolicy,
    project: &Path,
    cwd: &Path,
) -> Result<Confinement, RunError> {
    let mut confined = confined(policy, project);
    confined.start_at_once = true;
    Confinement::prepare_in(&confined, project, cwd).map_err(|e| {
        // All the probe says is missing, where anything is (Landlock alone was asked; the
        // preparation may have failed on what is missing).
        match missing_for(policy) {
            missing if !missing.is_empty() => Unavailable::Kernel(missing),
            _ => e,
        }
        .into()
    })
}

/// What starting `program` confined under `policy` gave: where it could not start, what the
/// kernel lacks (the namespaces, probed now: [`prepare_to_start`] did not), else why.
pub(crate) fn started<T>(
    policy: &SandboxPolicy,
    program: &str,
    started: std::io::Result<T>,
) -> Result<T, RunError> {
    started.map_err(|source| match missing_for(policy) {
        missing if !missing.is_empty() => RunError::Unavailable(Unavailable::Kernel(missing)),
        _ => RunError::Start {
            program: program.to_string(),
            source,
        },
    })
}

/// The confinement of a command in `project` under `policy`, hookd's own places made first.
fn confined(policy: &SandboxPolicy, project: &Path) -> hookd_sandbox::Policy {
    let mut policy = policy.confinement();
    make_own_places(&policy, project);
    // Crush keeps its sessions in the project (`.crush/crush.db`, its logs): every tool result
    // of the agent's own, unconfined, keys it read from hidden stores among them; a confined
    // command read them and wrote a turn into the session (attack round 11, F7). Hidden, as
    // the other agents' transcripts are in the home.
    let crush = project.join(CRUSH_DATA);
    if crush.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        policy.read_deny.push(crush);
    }
    policy
}

/// Crush's data directory in a project (its `options.data_directory` by default).
const CRUSH_DATA: &str = ".crush";

/// hookd's own directories (its configuration's `hookd/`, its state) that are absent where a
/// confined command may write (the agent started in the home): made, empty and this user's
/// alone, so that the sandbox hides them as it hides them where they exist. Absent, the
/// command could make one and forge what hookd reads there (a trust record for its project).
fn make_own_places(policy: &hookd_sandbox::Policy, project: &Path) {
    use std::os::unix::fs::DirBuilderExt;
    let writable = hookd_sandbox::writable_places(policy, project);
    let own = (policy.places.hidden.iter())
        .filter(|p| p.file_name().is_some_and(|n| n == "hookd"))
        .chain(policy.state.iter());
    for dir in own {
        if dir.symlink_metadata().is_ok() {
            continue;
        }
        // Beneath a writable place, by its nearest existing ancestor (as the kernel sees it).
        let Some(real) = dir.ancestors().find_map(|a| a.canonicalize().ok()) else {
            continue;
        };
        if writable.iter().any(|w| real.starts_with(w)) {
            let _ = std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir);
        }
    }
}

/// The temporary directory confined commands may write ([`hookd_sandbox::temp_dir`]).
pub fn temp_dir(policy: &SandboxPolicy) -> PathBuf {
    hookd_sandbox::temp_dir(&policy.base())
}

/// Where `policy` lets a confined command write (for the file tools' check and people): the
/// project, the temporary directory and the `write` entries.
pub fn writable_places(policy: &SandboxPolicy, project: &Path) -> Vec<PathBuf> {
    hookd_sandbox::writable_places(&policy.base(), project)
}

/// A confined command that ran: its exit status as a shell reports it (128 + N when signal N
/// ended it), and what it left that git would have run later, moved aside
/// ([`Confinement::settle`]), one sentence each for the caller to say.
#[derive(Debug)]
#[non_exhaustive]
pub struct Ran {
    /// The exit status.
    pub status: i32,
    /// What was moved aside.
    pub moved: Vec<String>,
}

/// Run `argv` confined by `policy` (even where `enabled` is off) in `cwd`, stdio inherited, no
/// other descriptor but `keep_fd`, with `host`'s variables as [`command`] passes them on. It
/// never runs unconfined.
pub fn run(
    policy: &SandboxPolicy,
    project: &Path,
    argv: &[String],
    cwd: &Path,
    keep_fd: Option<std::os::fd::RawFd>,
    host: &crate::host::Host,
) -> Result<Ran, RunError> {
    use std::os::unix::process::ExitStatusExt;
    let confinement = std::sync::Arc::new(prepare_to_start(policy, project, cwd)?);
    let program = argv.first().map_or("", String::as_str);
    let status = started(
        policy,
        program,
        hookd_sandbox::run_command(confinement.clone(), argv, cwd, keep_fd, host.vars()),
    )?;
    let status = (status.code())
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    Ok(Ran {
        status,
        moved: confinement.settle(),
    })
}

/// Why a write to `path` (absolute) breaks `policy`: outside the places confined commands may
/// write, or inside one of the project's read-only places. `None` when it may. Symlinks are
/// followed as the kernel would, dangling ones included (a write through one creates its
/// target).
pub fn write_refused(policy: &SandboxPolicy, project: &Path, path: &Path) -> Option<String> {
    let real = hookd_sandbox::resolve(path);
    let project = hookd_sandbox::resolve(project);
    let writable = writable_places(policy, &project);
    if !writable
        .iter()
        .any(|w| real.starts_with(hookd_sandbox::resolve(w)))
    {
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
    if crate::places::lays_out_a_repository(&real) {
        return Some(crate::places::LAYS_OUT_A_REPOSITORY.into());
    }
    let places = places_of(policy);
    places
        .read_only
        .iter()
        .chain(&places.hidden)
        .find(|p| real.starts_with(hookd_sandbox::resolve(p)))
        .map(|p| {
            format!(
                "inside {}, which the sandbox keeps from confined commands",
                p.display()
            )
        })
}
