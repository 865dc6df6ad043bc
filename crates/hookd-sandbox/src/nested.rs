//! A command's sandbox inside a confined agent's (`hookd run --confine`): the model's shell
//! calls (`hookd exec`) and the agent's hooks, confined again, more narrowly.
//!
//! A Landlocked process may not mount (the kernel refuses `mount(2)` to it, in any namespace),
//! so the nested sandbox cannot make mounts of its own; it narrows with what nests:
//!
//! - Landlock, a domain inside the agent's: writes only in the project, its own temporary
//!   directory (a fresh directory in the agent's, removed when it ends: it cannot plant a link
//!   in the agent's) and the policy's `write` places; TCP connections only to its own proxy's
//!   port (Landlock ABI 4), so nothing the agent listens on, nor the agent's proxy, is reached;
//!   no signal to, nor abstract socket of, the agent (ABI 6).
//! - its own proxy, with the configuration's list, which reaches hosts through the agent's
//!   (`egress/chain.rs`): a host is reached only when both lists allow it.
//! - the same seccomp filter, no_new_privs, a session of its own (no terminal to type into),
//!   killed with its waiter.
//!
//! What the agent's sandbox holds read-only and hides (the project's `.infer/`, `.git/hooks`,
//! the credential stores) it holds for these commands too: they run in its mounts. What it
//! shows the agent alone (its credentials and transcripts, hookd's session state and trust)
//! these commands can neither write nor read: the domain handles reading files and grants it on
//! everything but the places the full sandbox hides ([`readable`]; docs/security.md, "The whole
//! agent, confined").
//!
//! The mode is taken only where the agent's sandbox is evidently around this process (its
//! variable set, no network interface but loopback, no_new_privs and a seccomp filter on, and
//! no namespaces to be had): elsewhere a command is confined fully or not run.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};
use nix::libc;

use super::{Confinement, Network, Policy, Unavailable};

/// Set in a confined agent's environment by `hookd run --confine`: its commands and hooks get
/// the nested sandbox (where it is evidently there: see `nested.rs`), whose proxy reaches hosts through
/// the agent's at [`super::PROXY_ADDR`] (nothing else in the agent's network namespace can
/// listen there).
pub const AGENT_VAR: &str = "HOOKD_CONFINED_AGENT";

/// What a nested confinement holds beyond the common fields: its temporary directory, removed
/// when it is dropped, and its proxy's address.
#[derive(Debug)]
pub(super) struct Nested {
    temp: PathBuf,
    pub(super) proxy: Option<std::net::SocketAddr>,
}

impl Drop for Nested {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.temp);
    }
}

/// Whether this process runs inside a confined agent's sandbox (see the module's header), which
/// `missing` (what the full sandbox lacks here) says cannot be made again.
pub(super) fn here(policy: &Policy, missing: &[String]) -> bool {
    if !policy.nested || missing.is_empty() {
        return false;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .unwrap_or_default()
            .to_string()
    };
    let dev = std::fs::read_to_string("/proc/net/dev").unwrap_or_default();
    let interfaces: Vec<&str> = dev
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(str::trim)
        .collect();
    policy.nested
        && !missing.is_empty()
        && super::support().landlock_abi >= Some(super::MIN_LANDLOCK_ABI)
        && field("NoNewPrivs:") == "1"
        && field("Seccomp:") == "2"
        && interfaces == ["lo"]
}

/// Prepare the nested confinement of a command run in `project` from `cwd` under `policy`.
pub(super) fn prepare(
    policy: &Policy,
    project: &Path,
    temp_root: &Path,
) -> Result<Confinement, Unavailable> {
    let prep = |what: &str, e: &dyn std::fmt::Display| Unavailable::Prepare(format!("{what}: {e}"));
    let project = project
        .canonicalize()
        .map_err(|e| prep(&project.display().to_string(), &e))?;
    let temp = make_temp(temp_root).map_err(|e| prep("its temporary directory", &e))?;
    // Removed again if what follows fails.
    let mut nested = Nested {
        temp: temp.clone(),
        proxy: None,
    };
    let mut writable = vec![temp.clone()];
    if !super::read_only(policy, &project) {
        writable.push(project.clone());
        writable.extend(policy.write.iter().cloned());
    }
    // Under a host list, a proxy of its own on a loopback port, reaching hosts through the
    // agent's; without Landlock's TCP rules (ABI 4) no TCP at all.
    let net_abi = super::support().landlock_abi.is_some_and(|v| v >= 4);
    let listed = match &policy.network {
        Network::Proxy(e) if net_abi => Some(e.clone()),
        _ => None,
    };
    let (proxy, addr) = match listed {
        Some(e) => {
            let (p, addr) = start_proxy(e).map_err(|e| prep("hookd's proxy", &e))?;
            nested.proxy = Some(addr);
            (Some(p), Some(addr))
        }
        None => (None, None),
    };
    // What the full sandbox would hide, unreadable (the agent's sandbox shows the agent its
    // credentials, transcripts and hookd's state; its commands must not read them).
    let hidden: Vec<PathBuf> = super::hidden(policy)
        .iter()
        .filter_map(|h| h.canonicalize().ok())
        .collect();
    let ruleset =
        ruleset(&writable, &hidden, addr.map(|a| a.port())).map_err(|e| prep("Landlock", &e))?;
    let filter =
        super::linux::network_filter(addr.is_some(), false).map_err(Unavailable::Prepare)?;
    let summary = super::summary(&writable, None, policy) + "; nested in the agent's sandbox";
    let empty = || std::ffi::CString::default();
    Ok(Confinement {
        ruleset,
        setgroups: empty(),
        uid_map: empty(),
        gid_map: empty(),
        pinned: Vec::new(),
        pinned_links: Vec::new(),
        read_only: Vec::new(),
        hidden_dirs: Vec::new(),
        hidden_files: Vec::new(),
        network_filter: filter,
        broker: None,
        places: Vec::new(),
        temp,
        temp_rights: 0,
        unix_sockets: policy.unix_sockets.clone(),
        keep_env: policy.keep_env.clone(),
        secret: policy.secret,
        summary,
        _stand_ins: super::Placeholders::new(None),
        locks: Vec::new(),
        record: -1,
        egress_channel: None,
        proxy,
        nested: Some(nested),
        aftermath: super::aftermath::Aftermath::before(
            project.join(".git").is_dir().then(|| project.join(".git")),
            policy.git.clone(),
            None,
        ),
        frozen: Default::default(),
        below: Default::default(),
        _pending: None,
        deferred: None,
        settled_before: Vec::new(),
    })
}

/// A fresh directory beneath `root` (the agent's temporary directory), this user's alone.
fn make_temp(root: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    for n in 0..100u32 {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        let dir = root.join(format!("hookd-exec-{}-{t:x}{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free name"))
}

/// hookd's proxy on a loopback port of the agent's network namespace, reaching hosts through
/// the agent's proxy.
fn start_proxy(
    e: super::Egress,
) -> std::io::Result<(super::egress::proxy::Proxy, std::net::SocketAddr)> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
    let via = super::PROXY_ADDR.parse().ok();
    let (proxy, channel) = super::egress::proxy::Proxy::start_via(e, via, None)?;
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let fds = [listener.as_raw_fd()];
    let iov = [std::io::IoSlice::new(b"x")];
    let cmsg = [ControlMessage::ScmRights(&fds)];
    sendmsg::<()>(channel.as_raw_fd(), &iov, &cmsg, MsgFlags::empty(), None)?;
    Ok((proxy, addr))
}

/// The nested domain: writes beneath `writable` and to the usual devices; files read anywhere
/// but in `hidden` (canonical paths); with `connect`, TCP connections to that port alone (none
/// without).
fn ruleset(
    writable: &[PathBuf],
    hidden: &[PathBuf],
    connect: Option<u16>,
) -> Result<OwnedFd, String> {
    let abi = ABI::V3;
    let rights = AccessFs::from_write(abi) & !AccessFs::Execute;
    let s = |e: landlock::RulesetError| e.to_string();
    let mut r = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(rights | AccessFs::ReadFile)
        .map_err(s)?
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessNet::ConnectTcp)
        .map_err(s)?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .map_err(s)?
        .create()
        .map_err(s)?;
    let devices = super::linux::DEVICES.iter().map(Path::new);
    for place in writable.iter().map(PathBuf::as_path).chain(devices) {
        let Ok(fd) = PathFd::new(place) else { continue };
        let on_file = !place.is_dir();
        let granted = if on_file {
            rights & AccessFs::from_file(abi)
        } else {
            rights
        };
        r = r.add_rule(PathBeneath::new(fd, granted)).map_err(s)?;
    }
    for place in readable(Path::new("/"), hidden) {
        let Ok(fd) = PathFd::new(&place) else {
            continue;
        };
        r = r
            .add_rule(PathBeneath::new(fd, AccessFs::ReadFile))
            .map_err(s)?;
    }
    if let Some(port) = connect {
        r = r
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(s)?;
    }
    Option::<OwnedFd>::from(r).ok_or_else(|| "Landlock is not available".to_string())
}

/// The places beneath `dir` to grant reading on so that everything is readable but `hidden`:
/// each entry that neither is nor holds a hidden place whole, and the entries of those that
/// hold one, recursively (Landlock only grants: a rule on a directory covers all beneath it).
fn readable(dir: &Path, hidden: &[PathBuf]) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = e.path();
        if hidden.contains(&path) {
            continue;
        }
        let kind = e.file_type();
        // A rule is made on what a link points to: one to (or into, or above) a hidden place
        // is left out, its target granted (or not) where it really is.
        if kind.as_ref().is_ok_and(|t| t.is_symlink()) {
            let Ok(target) = path.canonicalize() else {
                continue;
            };
            if !hidden
                .iter()
                .any(|h| h.starts_with(&target) || target.starts_with(h))
            {
                out.push(path);
            }
            continue;
        }
        let holds = hidden.iter().any(|h| h.starts_with(&path));
        if holds && kind.is_ok_and(|t| t.is_dir()) {
            out.extend(readable(&path, hidden));
        } else {
            out.push(path);
        }
    }
    out
}

/// In the command's process, between fork and exec: a session of its own, killed with its
/// waiter, no new privileges, the filter, the nested domain.
pub(super) unsafe fn confine(c: &Confinement) -> std::io::Result<()> {
    use super::linux::check;
    // SAFETY: raw syscalls on values prepared by the parent; nothing allocates.
    unsafe {
        // setsid returns the new session's id.
        if libc::setsid() < 0 {
            return Err(std::io::Error::last_os_error());
        }
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
        super::linux::restrict_self(c)
    }
}
