//! Confinement for the commands hookd lets run: the kernel, not the command's words, bounds
//! what an admitted program (and every process it starts) may write, read and reach.
//!
//! Three mechanisms, all unprivileged: Landlock (the outer write boundary: only the project,
//! the command's own temporary directory and the policy's `write` places; no link or rename of
//! a file from outside into them), a user + mount namespace (inside the project, `.infer/`,
//! `.git/hooks`, `.git/config` and the agents' settings bound read-only; credential stores
//! hidden under empty read-only mounts; an empty tmpfs over `/tmp`, `$TMPDIR` and the places
//! where services keep their sockets, see `places.rs`) and a seccomp filter (socket families by
//! allow-list, io_uring, terminal injection). Landlock only grants: a hole in a granted tree
//! needs the mounts. All are inherited by every descendant and cannot be dropped
//! (no_new_privs; a Landlocked process cannot change mounts).
//!
//! [`Confinement::prepare`] does everything that allocates, in the parent; the forked child
//! only makes syscalls ([`Confinement::enter`]). Where the kernel cannot enforce the policy
//! ([`support`]), nothing runs unconfined: [`Confinement::prepare`] fails and says what is
//! missing.

mod linux;
mod places;

pub use places::SOCKET_VARIABLES;

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;

/// The sandbox every command hookd lets run is confined by (see docs/security.md).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SandboxPolicy {
    /// Confine at all.
    pub enabled: bool,
    /// Let confined commands use the network.
    pub network: bool,
    /// Writable besides the project and the temporary directory.
    pub write: Vec<PathBuf>,
    /// Unreadable besides the credential stores hookd always hides.
    pub read_deny: Vec<PathBuf>,
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
    /// Unix sockets a confined command may connect to although something outside made them
    /// (`sandbox.unix_sockets`, the user's layer only).
    pub unix_sockets: Vec<PathBuf>,
    /// The user's runtime directory as the host names it (`$XDG_RUNTIME_DIR`): covered, as
    /// `/run/user/UID` is.
    #[serde(skip)]
    pub runtime: Option<PathBuf>,
    /// hookd's daemon socket as the host names it (its token beside it): hidden.
    #[serde(skip)]
    pub socket: Option<PathBuf>,
}

/// What this kernel offers the sandbox.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Support {
    /// The Landlock ABI version, when Landlock is enabled.
    pub landlock_abi: Option<i32>,
    /// Whether an unprivileged process may create user, mount and network namespaces.
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
                "unprivileged user namespaces (for the read-only places inside the project and \
                 the network; some distributions restrict them, e.g. Ubuntu's AppArmor \
                 `kernel.apparmor_restrict_unprivileged_userns`)"
                    .into(),
            );
        }
        out
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

/// The credential stores confined commands never read, below the home directory.
pub const HIDDEN_IN_HOME: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".config/hookd",
    // Sockets of services the user runs: screen's sessions, Docker Desktop's engine, git's
    // credential cache (it hands a cached token to whoever connects).
    ".screen",
    ".docker/run",
    ".cache/git/credential",
    ".git-credential-cache",
    // hookd's daemon where it is when there is no runtime directory, and its token.
    ".infer/hookd.sock",
    ".infer/hookd.token",
];

/// Places inside the project that stay read-only: hookd's and the agents' settings, git's
/// configuration and hooks (ordinary git work, which writes `.git/objects`, `.git/refs` and
/// `.git/index`, keeps working).
pub const READ_ONLY_IN_PROJECT: &[&str] = &[
    ".infer",
    ".claude",
    ".gemini",
    "crush.json",
    ".crush.json",
    ".git/config",
    ".git/config.worktree",
    ".git/hooks",
    ".git/info",
];

/// Directories among [`READ_ONLY_IN_PROJECT`] that are created (empty) when absent, so that
/// they can be held read-only too: a confined command must not create them.
const CREATED_WHEN_ABSENT: &[&str] = &[".infer", ".claude", ".gemini", ".git/hooks"];

/// One command's confinement, prepared in the parent.
#[derive(Debug)]
pub struct Confinement {
    ruleset: OwnedFd,
    setgroups: CString,
    uid_map: CString,
    gid_map: CString,
    /// Read-only bind mounts: the path and the flags its mount already has (a remount in a
    /// user namespace must keep them).
    read_only: Vec<(CString, u64)>,
    /// Directories hidden under an empty read-only tmpfs.
    hidden_dirs: Vec<CString>,
    /// Files hidden under `/dev/null`.
    hidden_files: Vec<CString>,
    /// The seccomp program: socket families by allow-list, io_uring, the terminal injection
    /// `ioctl`s (always set; an `Option` for the child's code).
    network_filter: Option<seccompiler::BpfProgram>,
    /// The private temporary directory and socket places, in mount order.
    places: Vec<places::Mount>,
    /// The temporary directory, as the command sees it (its own, empty).
    temp: PathBuf,
    /// The Landlock rights granted on the command's own temporary directory (a rule the child
    /// adds once its tmpfs is mounted).
    temp_rights: u64,
    /// `sandbox.unix_sockets`: variables naming one are kept.
    unix_sockets: Vec<PathBuf>,
    summary: String,
}

/// What a confined command may not read: the credential stores in the home `HOME` names and
/// in the one the user database does (a repository's settings may have set `HOME` for the
/// agent), hookd's session state where the host puts it and where it is by default, and the
/// policy's `read_deny`.
fn hidden(policy: &SandboxPolicy) -> Vec<PathBuf> {
    let user = crate::paths::user_home();
    let mut homes: Vec<PathBuf> = policy.home.iter().cloned().collect();
    homes.extend(user.clone().filter(|h| !homes.contains(h)));
    let mut out: Vec<PathBuf> = homes
        .iter()
        .flat_map(|h| HIDDEN_IN_HOME.iter().map(move |rel| h.join(rel)))
        .collect();
    out.extend(policy.state.iter().cloned());
    let default_state = user.map(|h| h.join(".local/state/hookd"));
    out.extend(default_state.filter(|s| policy.state.as_ref() != Some(s)));
    out.extend(policy.read_deny.iter().cloned());
    out
}

impl Confinement {
    /// Prepare the confinement of a command run in `project` under `policy`.
    pub fn prepare(policy: &SandboxPolicy, project: &Path) -> Result<Confinement, Unavailable> {
        let missing = support().missing();
        if !missing.is_empty() {
            return Err(Unavailable::Kernel(missing));
        }
        let project = project
            .canonicalize()
            .map_err(|e| Unavailable::Prepare(format!("the project {}: {e}", project.display())))?;
        let temp = temp_dir(policy);
        let read_only = read_only_places(&project)?;
        let hidden = hidden(policy);
        let places = places::plan(policy, &project, &hidden)?;
        let mut writable = vec![project.clone()];
        // The host's temporary directory only where it is not replaced by the command's own.
        writable.extend((!places.temp_covered).then(|| temp.clone()));
        writable.extend(policy.write.iter().cloned());
        let ruleset =
            linux::ruleset(&writable, &policy.unix_sockets).map_err(Unavailable::Prepare)?;
        let mut hidden_dirs = Vec::new();
        let mut hidden_files = Vec::new();
        for path in hidden.iter().chain(&places.hidden_files) {
            match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => hidden_dirs.push(c_path(path)?),
                Ok(_) => hidden_files.push(c_path(path)?),
                Err(_) => {}
            }
        }
        let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
        let mut writes: Vec<String> = writable.iter().map(|p| p.display().to_string()).collect();
        if places.temp_covered {
            writes.insert(1, format!("{} (its own, empty)", temp.display()));
        }
        let summary = format!(
            "writes: {}; network: {}",
            writes.join(", "),
            if policy.network { "on" } else { "off" }
        );
        Ok(Confinement {
            ruleset,
            setgroups: CString::from(c"deny"),
            uid_map: cstring(format!("{uid} {uid} 1"))?,
            gid_map: cstring(format!("{gid} {gid} 1"))?,
            read_only,
            hidden_dirs,
            hidden_files,
            network_filter: Some(
                linux::network_filter(policy.network).map_err(Unavailable::Prepare)?,
            ),
            places: places.mounts,
            temp_rights: linux::temp_rights(),
            temp,
            unix_sockets: policy.unix_sockets.clone(),
            summary,
        })
    }

    /// Enter the confinement: in the forked child, before exec.
    ///
    /// # Safety
    ///
    /// Only in a child between fork and exec: it changes the calling process's namespaces,
    /// mounts and Landlock domain for good. It makes raw syscalls only (no allocation, no lock).
    pub unsafe fn enter(&self) -> std::io::Result<()> {
        // SAFETY: the caller's contract.
        unsafe { linux::enter(self) }
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
    /// or a session outside ([`SOCKET_VARIABLES`]), unless it names a socket the policy lists.
    pub fn keeps_var(&self, name: &std::ffi::OsStr, value: &std::ffi::OsStr) -> bool {
        places::keeps_var(&self.unix_sockets, name, value)
    }
}

/// The places inside `project` that are held read-only (bind mounts), the ones to create
/// first created (see [`CREATED_WHEN_ABSENT`]).
fn read_only_places(project: &Path) -> Result<Vec<(CString, u64)>, Unavailable> {
    let mut read_only = Vec::new();
    let git_dir = project.join(".git").is_dir();
    for rel in READ_ONLY_IN_PROJECT {
        if rel.starts_with(".git/") && !git_dir {
            continue;
        }
        let path = project.join(rel);
        if !path.exists() && CREATED_WHEN_ABSENT.contains(rel) {
            // Held read-only from now on; git does not see an empty directory.
            let _ = std::fs::create_dir(&path);
        }
        // Not through a symlink: the link itself is in the project and could be replaced
        // by a confined command, but what it points to is not the project's to protect.
        match path.symlink_metadata() {
            Ok(m) if !m.file_type().is_symlink() => {
                read_only.push((c_path(&path)?, linux::mount_flags(&path)));
            }
            _ => {}
        }
    }
    Ok(read_only)
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
    let mut out = vec![project.to_path_buf(), temp_dir(policy)];
    out.extend(policy.write.iter().cloned());
    out
}

/// `argv` as a [`std::process::Command`] that enters `confinement` between fork and exec
/// (`hookd exec`): stdio inherited, run in `cwd`, with the variables `vars` less those naming
/// sockets outside (see [`Confinement::keeps_var`]) and `TMPDIR` its own.
pub fn command<'a>(
    confinement: std::sync::Arc<Confinement>,
    argv: &[String],
    cwd: &Path,
    vars: impl IntoIterator<Item = (&'a std::ffi::OsStr, &'a std::ffi::OsStr)>,
) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(cwd)
        .env_clear()
        .envs(
            vars.into_iter()
                .filter(|(k, v)| confinement.keeps_var(k, v)),
        )
        .env("TMPDIR", confinement.temp_dir());
    // SAFETY: `enter` makes raw syscalls only, on what `prepare` allocated in the parent.
    unsafe {
        cmd.pre_exec(move || confinement.enter());
    }
    cmd
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

/// Run `argv` confined by `policy` (even where `enabled` is off) in `cwd`, stdio inherited,
/// with `host`'s variables as [`command`] passes them on: its exit status as a shell reports it
/// (128 + N when signal N ended it). It never runs unconfined.
pub fn run(
    policy: &SandboxPolicy,
    project: &Path,
    argv: &[String],
    cwd: &Path,
    host: &crate::host::Host,
) -> Result<i32, RunError> {
    use std::os::unix::process::ExitStatusExt;
    let confinement = Confinement::prepare(policy, project)?;
    let status = command(std::sync::Arc::new(confinement), argv, cwd, host.vars())
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
    if let Some(rel) = READ_ONLY_IN_PROJECT
        .iter()
        .find(|rel| real.starts_with(project.join(rel)))
    {
        return Some(format!(
            "inside `{rel}` of the project, which the sandbox keeps read-only"
        ));
    }
    let writable = writable_places(policy, &project);
    if writable.iter().any(|w| real.starts_with(resolve(w))) {
        return None;
    }
    Some(format!(
        "outside the places the sandbox lets commands write ({})",
        writable
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
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

/// `text` as one single-quoted shell word: every byte as it is, `'` written `'\''`.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A model's shell call rewritten so that the agent runs it confined, in the agent's own shell:
/// `PROGRAM exec --cwd-fd 3 --shell='COMMAND'`, where `COMMAND` is, byte for byte, the one that
/// was checked. The words around it use shell builtins only (no program a repository's `PATH`
/// could replace runs unconfined): they carry back the directory the command ends in (agents
/// such as Claude Code keep their shell's directory from one call to the next) and its exit
/// status, and leave its stdout and stderr where they were.
pub fn shell_rewrite(program: &Path, command: &str) -> String {
    format!(
        "{{ __hookd_cwd=$({} exec --cwd-fd 3 --shell={} 3>&1 1>&4 4>&-); }} 4>&1; \
         __hookd_status=$?; [ -n \"$__hookd_cwd\" ] && cd -- \"$__hookd_cwd\" 2>/dev/null; \
         (exit $__hookd_status)",
        shell_quote(&program.display().to_string()),
        shell_quote(command)
    )
}

/// The argv `hookd exec --shell COMMAND` runs: bash with `COMMAND` as its script, preceded,
/// with `cwd_fd`, by a trap that writes the directory it ends in to that descriptor.
pub fn shell_argv(command: &str, cwd_fd: Option<u8>) -> Vec<String> {
    let script = match cwd_fd {
        Some(fd) => format!("trap 'pwd -P >&{fd} 2>/dev/null' EXIT\n{command}"),
        None => command.to_string(),
    };
    vec!["bash".into(), "-c".into(), script]
}
