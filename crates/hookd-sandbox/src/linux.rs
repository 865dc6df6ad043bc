//! The Linux mechanisms: Landlock through the `landlock` crate and the network filter through
//! `seccompiler` (both prepared in the parent), the namespaces and mounts with raw syscalls
//! (made in the child).

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, ABI,
};
use nix::libc;

use super::{Confinement, Support, MIN_LANDLOCK_ABI};

/// A seccomp program.
pub(super) type Filter = seccompiler::BpfProgram;

pub(super) fn probe() -> Support {
    Support {
        namespaces: namespaces_work(),
        ..probe_landlock()
    }
}

/// Landlock's ABI alone, the namespaces taken to work ([`crate::support_unprobed`]).
pub(super) fn probe_landlock() -> Support {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only returns a
    // number.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32,
        )
    };
    Support {
        landlock_abi: (abi > 0).then_some(abi as i32),
        namespaces: true,
        built: true,
    }
}

/// Whether a child may create the namespaces and mount a /proc of its PID namespace (a
/// container that masks parts of /proc refuses the mount): a child cloned into new user,
/// mount and PID namespaces at once (pid 1 of its namespace), sharing this process's memory
/// until it exits as `posix_spawn`'s does, so that no page table is copied (a `fork` of hookd
/// and a second one for pid 1 cost 0.4 to 0.9 ms of every `hookd exec`).
fn namespaces_work() -> bool {
    const STACK: usize = 64 * 1024;
    let mut stack = vec![0u128; STACK / 16];
    let flags = libc::CLONE_VM
        | libc::CLONE_VFORK
        | libc::CLONE_NEWUSER
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWPID
        | libc::SIGCHLD;
    // SAFETY: the child runs `probe_child` on its own stack (the end of `stack`, 16-aligned),
    // makes raw syscalls only and exits; CLONE_VFORK suspends this thread until it has, and
    // every signal is blocked meanwhile so that no handler of this process runs in it.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let top = stack.as_mut_ptr().add(stack.len()).cast::<libc::c_void>();
        let pid = libc::clone(probe_child, top, flags, std::ptr::null_mut());
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        if pid < 0 {
            return false;
        }
        let mut status = 0;
        while libc::waitpid(pid, &mut status, 0) < 0 {
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return false;
            }
        }
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
    }
}

/// The probe's child, pid 1 of new user, mount and PID namespaces: its mounts private, then a
/// /proc of its own; exits 0 when both worked.
extern "C" fn probe_child(_: *mut libc::c_void) -> libc::c_int {
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: raw syscalls on static C strings; the process ends here.
    unsafe {
        let private = libc::mount(
            null,
            c"/".as_ptr(),
            null,
            libc::MS_REC | libc::MS_PRIVATE,
            null.cast(),
        );
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        let proc = c"proc".as_ptr();
        let ok =
            private == 0 && libc::mount(proc, c"/proc".as_ptr(), proc, flags, null.cast()) == 0;
        libc::_exit(if ok { 0 } else { 1 })
    }
}

/// The write rights Landlock handles: everything that creates, changes, removes, links or
/// renames a file. Reading and executing are not handled (reads are bounded by the mounts).
fn write_rights(abi: ABI) -> landlock::BitFlags<AccessFs> {
    AccessFs::from_write(abi) & !AccessFs::Execute
}

/// The rights a rule on the command's own temporary directory grants: every write right the
/// ruleset handles (the ABI it was made for, or less: the kernel then refuses the rule).
pub(super) fn temp_rights() -> u64 {
    write_rights(ABI::V3).bits()
}

/// Grant `rights` beneath `path` in the ruleset `ruleset`: in the child, for a place that did
/// not exist when the ruleset was made (the command's own temporary directory).
unsafe fn grant(ruleset: libc::c_int, path: &std::ffi::CStr, rights: u64) -> std::io::Result<()> {
    // SAFETY: as the caller's.
    unsafe { add_path_rule(ruleset, path, rights, libc::O_DIRECTORY) }
}

/// [`grant`] for a file (a device) in place of a directory: `rights` only those of a file.
unsafe fn grant_file(
    ruleset: libc::c_int,
    path: &std::ffi::CStr,
    rights: u64,
) -> std::io::Result<()> {
    // SAFETY: as the caller's.
    unsafe { add_path_rule(ruleset, path, rights, 0) }
}

unsafe fn add_path_rule(
    ruleset: libc::c_int,
    path: &std::ffi::CStr,
    rights: u64,
    flags: libc::c_int,
) -> std::io::Result<()> {
    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
    // SAFETY: raw syscalls on a C string and a struct on the stack.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | flags);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let attr = PathBeneathAttr {
            allowed_access: rights,
            parent_fd: fd,
        };
        let r = libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        );
        let e = std::io::Error::last_os_error();
        libc::close(fd);
        if r != 0 {
            return Err(e);
        }
    }
    Ok(())
}

/// The devices every program writes.
pub(super) const DEVICES: [&str; 9] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// A ruleset that lets writes happen beneath `writable` (and to the few devices every program
/// writes) and nowhere else; where the kernel offers it (ABI 9), connections to pathname Unix
/// sockets made outside the command only to `sockets`. The fd the child restricts itself with.
pub(super) fn ruleset(
    writable: &[PathBuf],
    no_links: &[PathBuf],
    sockets: &[PathBuf],
) -> Result<OwnedFd, String> {
    let abi = ABI::V3;
    let rights = write_rights(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(rights)
        .map_err(|e| e.to_string())?
        // Where the kernel offers it (ABI 6): no signals to processes outside, no connecting
        // to abstract Unix sockets made outside.
        .set_compatibility(CompatLevel::BestEffort)
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .map_err(|e| e.to_string())?
        // Where the kernel offers it (ABI 9): no connecting to a pathname Unix socket made
        // outside, but to the listed ones (sockets the command makes itself stay reachable).
        .handle_access(AccessFs::ResolveUnix)
        .map_err(|e| e.to_string())?
        .create()
        .map_err(|e| e.to_string())?;
    let places = writable
        .iter()
        .map(PathBuf::as_path)
        .chain(DEVICES.iter().map(Path::new));
    for place in places {
        // A place that does not exist (yet) grants nothing; it is not an error. One of
        // `no_links` (the user's `write` entries, as the links they were reached through lead:
        // `entries.rs`) is opened refusing any link: one put on the way since grants nothing.
        let Ok(fd) = open_path(place, no_links.iter().any(|p| p == place)) else {
            continue;
        };
        let on_file = place.is_file() || place.starts_with("/dev/") && !place.is_dir();
        let granted = if on_file {
            // Rights that only mean something for directories cannot be granted on a file.
            rights & AccessFs::from_file(abi)
        } else {
            rights
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, granted))
            .map_err(|e| format!("{}: {e}", place.display()))?;
    }
    for socket in sockets {
        let Ok(fd) = PathFd::new(socket) else {
            continue;
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, AccessFs::ResolveUnix))
            .map_err(|e| format!("{}: {e}", socket.display()))?;
    }
    Option::<OwnedFd>::from(ruleset)
        .ok_or_else(|| format!("Landlock ABI {MIN_LANDLOCK_ABI} is not available on this kernel"))
}

/// The socket families a confined command may open: Unix sockets always; with the network on,
/// IPv4, IPv6 and netlink's routing protocol (what `getaddrinfo`'s `AI_ADDRCONFIG`,
/// `getifaddrs` and `ip addr` read). Everything else (`AF_PACKET`, `AF_VSOCK`, Bluetooth,
/// `AF_ALG`, other netlink protocols, …) is refused: an allow-list, so a family a later kernel
/// adds is refused too.
pub(super) fn socket_families(network: bool) -> &'static [libc::c_int] {
    if network {
        &[
            libc::AF_UNIX,
            libc::AF_INET,
            libc::AF_INET6,
            libc::AF_NETLINK,
        ]
    } else {
        &[libc::AF_UNIX]
    }
}

/// The terminal `ioctl`s that put input in a terminal's queue, as if typed (`TIOCSTI`), or
/// reach the Linux console's functions (`TIOCLINUX`, which can paste the selection): a command
/// that shares the agent's or the user's terminal would type the next command there.
/// (The `libc` crate types them `c_ulong` for glibc and `c_int` for musl: both positive.)
#[allow(clippy::unnecessary_cast)]
const TERMINAL_INJECTION: [u64; 2] = [libc::TIOCSTI as u64, libc::TIOCLINUX as u64];

/// `path` opened (`O_PATH`), where `no_links` only if no component of it is a symbolic link
/// (`openat2`'s `RESOLVE_NO_SYMLINKS`).
pub(super) fn open_path(path: &Path, no_links: bool) -> std::io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let resolve = if no_links {
        ResolveFlags::NO_SYMLINKS
    } else {
        ResolveFlags::empty()
    };
    let flags = OFlags::PATH | OFlags::CLOEXEC;
    Ok(rustix::fs::openat2(
        rustix::fs::CWD,
        path,
        flags,
        Mode::empty(),
        resolve,
    )?)
}

/// The seccomp filter every confined command gets: `socket(2)` and `socketpair(2)` of a family
/// outside [`socket_families`] (and a netlink socket of a protocol other than routing), a send
/// with `MSG_FASTOPEN`, the terminal injection `ioctl`s, a seccomp filter with a listener, io_uring (which opens sockets
/// and runs `ioctl`s without those calls) and the keyring calls (`keyctl`, `add_key`, `request_key`) fail with EACCES. A
/// syscall of another ABI (32-bit) than the native one ends the process; every x32 call fails
/// with EACCES ([`no_x32`]).
///
/// With `listener` (pid 1 brokers the command's sockets, `broker.rs`), a filter with a listener
/// is not refused here: pid 1 keeps this program, and the command installs the broker's, which
/// refuses it from then on.
pub(super) fn network_filter(network: bool, listener: bool) -> Result<Filter, String> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    };
    let cond = |arg: u8, op: SeccompCmpOp, v: u64| {
        SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, v).map_err(|e| e.to_string())
    };
    let rule = |c: Vec<SeccompCondition>| SeccompRule::new(c).map_err(|e| e.to_string());
    // Refused: a family that is none of the allowed ones (every condition holds)…
    let outside = socket_families(network)
        .iter()
        .map(|f| cond(0, SeccompCmpOp::Ne, *f as u64))
        .collect::<Result<Vec<_>, _>>()?;
    let mut socket_rules = vec![rule(outside)?];
    // …or netlink for anything but the routing tables.
    if network {
        socket_rules.push(rule(vec![
            cond(0, SeccompCmpOp::Eq, libc::AF_NETLINK as u64)?,
            cond(2, SeccompCmpOp::Ne, libc::NETLINK_ROUTE as u64)?,
        ])?);
    }
    let pair_rules = vec![rule(vec![cond(
        0,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )?])?];
    let ioctl_rules = TERMINAL_INJECTION
        .iter()
        .map(|r| rule(vec![cond(1, SeccompCmpOp::Eq, *r)?]))
        .collect::<Result<Vec<_>, _>>()?;
    // A seccomp filter of the command's own with a listener (`SECCOMP_FILTER_FLAG_NEW_LISTENER`):
    // hookd's `SECCOMP_RET_ERRNO` outranks a listener's answers whatever is stacked, but
    // sandbox-runtime refuses it, and nothing a command needs asks for it (the held-out replay
    // of 2026-11-28, L6).
    #[allow(clippy::unnecessary_cast)]
    let new_listener = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u64;
    let seccomp_rules = vec![rule(vec![
        cond(
            0,
            SeccompCmpOp::Eq,
            u64::from(libc::SECCOMP_SET_MODE_FILTER),
        )?,
        cond(1, SeccompCmpOp::MaskedEq(new_listener), new_listener)?,
    ])?];
    // TCP Fast Open: a `sendto`/`sendmsg`/`sendmmsg` with `MSG_FASTOPEN` connects an unconnected
    // TCP socket with no `connect` call, so neither Landlock's TCP rule (a nested command's: its
    // proxy's port alone) nor anything judging `connect` sees it (attack round 15's F2: a
    // command nested in a confined agent used the agent's proxy). No tool needs it; a client
    // asked for it gets EACCES.
    #[allow(clippy::unnecessary_cast)]
    let fastopen = libc::MSG_FASTOPEN as u64;
    let fast = |arg: u8| -> Result<Vec<SeccompRule>, String> {
        Ok(vec![rule(vec![cond(
            arg,
            SeccompCmpOp::MaskedEq(fastopen),
            fastopen,
        )?])?])
    };
    let mut numbers = vec![
        (libc::SYS_socket, socket_rules),
        (libc::SYS_socketpair, pair_rules),
        (libc::SYS_ioctl, ioctl_rules),
        (libc::SYS_sendto, fast(3)?),
        (libc::SYS_sendmsg, fast(2)?),
        (libc::SYS_sendmmsg, fast(3)?),
    ];
    if !listener {
        numbers.push((libc::SYS_seccomp, seccomp_rules));
    }
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        // The kernel's keyrings: the caller's session and user keyrings (a login's, Kerberos'
        // caches, credential helpers') would be read and written through these.
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
    ] {
        numbers.push((nr, Vec::new()));
    }
    let rules = numbers
        .into_iter()
        .collect::<std::collections::BTreeMap<_, _>>();
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let program = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    no_x32(program)
}

/// `program` refusing every x32 system call (EACCES). x32 reaches the kernel's calls with bit
/// 30 of the number set, under the x86_64 ABI's audit value: the rules above, keyed by x86_64's
/// numbers, would not see them. seccompiler matches numbers one by one (each rule again for x32
/// made the program twice as long: 129 instructions, 80 µs to load against 31 µs for 21, and
/// run at every call the command makes), so two instructions go in after its check of the
/// architecture and its load of the number: set, refused. x32 programs are all but gone (Codex's
/// filter lets them through; this one refuses them all).
#[cfg(target_arch = "x86_64")]
fn no_x32(mut program: Filter) -> Result<Filter, String> {
    const X32_BIT: u32 = 0x4000_0000;
    let ld_abs = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    let stmt = |code: u32, k: u32| seccompiler::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    // seccompiler's prelude: the architecture loaded, compared, a mismatch killed; the
    // number loaded (`seccomp_data`: `nr` at offset 0, `arch` at 4).
    let prelude = program
        .get(..4)
        .map(|p| (p[0].code, p[0].k, p[3].code, p[3].k));
    if prelude != Some((ld_abs, 4, ld_abs, 0)) {
        return Err(format!(
            "the seccomp program does not start as seccompiler's did: {:?}",
            program.get(..4)
        ));
    }
    let refuse = libc::SECCOMP_RET_ERRNO | libc::EACCES as u32;
    let mut test = stmt(libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K, X32_BIT);
    test.jf = 1;
    program.splice(4..4, [test, stmt(libc::BPF_RET | libc::BPF_K, refuse)]);
    Ok(program)
}

#[cfg(not(target_arch = "x86_64"))]
fn no_x32(program: Filter) -> Result<Filter, String> {
    Ok(program)
}

/// Bind `path` onto itself with what is mounted below it: a mount point, which cannot be moved
/// or removed, and whose flags can then be changed alone.
///
/// # Safety
/// Raw syscall; callable between fork and exec.
pub(super) unsafe fn bind_onto_itself(path: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: mount on a C string; no memory is touched.
    check(unsafe {
        libc::mount(
            path.as_ptr(),
            path.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    })
}

/// The symbolic link at `path` bound onto itself, not followed (`open_tree` and `move_mount`
/// without following a last link): a mount point cannot be removed, renamed or replaced, and
/// the link still leads where it led. A link in a writable place leading to a held place
/// outside every writable one (`~/.nvm -> /opt/nvm`) could otherwise be replaced by a directory
/// of the command's (attack round 27, B1).
///
/// # Safety
/// Raw syscalls on a C string of the caller's; callable between fork and exec.
pub(super) unsafe fn pin_link(path: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: the caller's contract.
    unsafe {
        let flags = OPEN_TREE_CLONE
            | libc::O_CLOEXEC as libc::c_uint
            | libc::AT_SYMLINK_NOFOLLOW as libc::c_uint;
        let tree = opened(
            libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, path.as_ptr(), flags) as libc::c_int,
        )?;
        put_tree(tree, path)
    }
}

/// Make the mount at `path` read-only (`on`) or writable again, with what is mounted below it
/// when `recursive`; its other flags stay (`mount_setattr`, Linux 5.12, older than the
/// Landlock ABI the sandbox needs). The raw result: 0, or -1 and errno.
///
/// # Safety
/// Raw syscall; callable between fork and exec.
pub(super) unsafe fn read_only(path: &std::ffi::CStr, on: bool, recursive: bool) -> libc::c_int {
    /// `struct mount_attr`.
    #[repr(C)]
    struct MountAttr {
        set: u64,
        clear: u64,
        propagation: u64,
        userns: u64,
    }
    const MOUNT_ATTR_RDONLY: u64 = 1;
    const AT_RECURSIVE: libc::c_uint = 0x8000;
    let attr = MountAttr {
        set: if on { MOUNT_ATTR_RDONLY } else { 0 },
        clear: if on { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns: 0,
    };
    let flags = if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: mount_setattr on a C string and this stack's value.
    unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        ) as libc::c_int
    }
}

/// A syscall's 0-or-error result as `io::Result` (the child can report only the OS error).
pub(super) fn check(r: libc::c_int) -> std::io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Write `text` to the file at `path` (a /proc file of this process).
unsafe fn write_file(path: &std::ffi::CStr, text: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: plain syscalls on a path and a buffer that outlive them.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let bytes = text.to_bytes();
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let e = std::io::Error::last_os_error();
        libc::close(fd);
        if n != bytes.len() as isize {
            return Err(e);
        }
    }
    Ok(())
}

/// The first half of entering the confinement, in the process that will wait for the command
/// (see `spawn`): new user, mount and PID namespaces (the next child this process forks is pid 1
/// of the PID namespace), this user mapped to itself, and mounts made private.
pub(super) unsafe fn unshare(c: &Confinement) -> std::io::Result<()> {
    // SAFETY: unshare of this process; then as `enter`.
    unsafe {
        check(libc::unshare(namespaces(c)))?;
        enter(c)
    }
}

/// The namespaces a confined command gets: user, mount, PID, IPC (the System V shared memory,
/// message queues and semaphores of the user's other processes, and POSIX message queues, are
/// not there), and under a host list a network namespace too (only the proxy leads out).
pub(super) fn namespaces(c: &Confinement) -> libc::c_int {
    let net = if c.egress_channel().is_some() {
        libc::CLONE_NEWNET
    } else {
        0
    };
    libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC | net
}

/// Just in the new [`namespaces`] (by `unshare` or `clone`): this user's ids mapped, the
/// proxy's socket handed over (under a host list), and no mount shared with the parent's.
///
/// # Safety
/// In a child between fork and exec: raw syscalls on values the parent prepared.
pub(super) unsafe fn enter(c: &Confinement) -> std::io::Result<()> {
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: raw syscalls on C strings prepared by the parent; nothing allocates.
    unsafe {
        write_file(c"/proc/self/setgroups", &c.setgroups)?;
        write_file(c"/proc/self/uid_map", &c.uid_map)?;
        write_file(c"/proc/self/gid_map", &c.gid_map)?;
        if let Some(channel) = c.egress_channel() {
            super::egress::inside::hand_over(channel)?;
        }
        // Nothing done here may reach the parent's mounts.
        check(libc::mount(
            null,
            c"/".as_ptr(),
            null,
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
    }
    Ok(())
}

/// The second half, in pid 1 of the new PID namespace: a /proc of this namespace only, the
/// read-only and hidden places, no capability at all, then no_new_privs, the network filter
/// and Landlock. Everything forked from here on inherits all of it.
pub(super) unsafe fn confine(c: &Confinement) -> std::io::Result<()> {
    // SAFETY: raw syscalls on C strings prepared by the parent; nothing allocates.
    unsafe {
        // Everything read-only first; what is mounted from here on is as it is made.
        super::frozen::apply(&c.frozen)?;
        // The caller's processes (an agent's shell and its descriptors) are not in it.
        check(libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        ))?;
        own_terminals(c)?;
        mounts(c)?;
        drop_capabilities(c.broker.is_some())?;
        restrict_self(c)
    }
}

/// A devpts instance of its own on `/dev/pts` (and its `ptmx` on `/dev/ptmx`): the terminals
/// the command opens are its own, and the user's others (the agent's, an ssh session's, a tmux
/// pane's) are not there to be opened by path, read from or typed into. The descriptors it
/// inherited stay as they are. Granted to the ruleset as the devices were.
unsafe fn own_terminals(c: &Confinement) -> std::io::Result<()> {
    // SAFETY: raw syscalls on static C strings; nothing allocates.
    unsafe {
        // No terminals at all here (a container without devpts): none to hide.
        if libc::access(c"/dev/pts".as_ptr(), libc::F_OK) != 0 {
            return Ok(());
        }
        check(libc::mount(
            c"devpts".as_ptr(),
            c"/dev/pts".as_ptr(),
            c"devpts".as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
        ))?;
        check(libc::mount(
            c"/dev/pts/ptmx".as_ptr(),
            c"/dev/ptmx".as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        ))?;
        grant(c.ruleset.as_raw_fd(), c"/dev/pts", c.temp_rights)?;
        let file = (write_rights(ABI::V3) & AccessFs::from_file(ABI::V3)).bits();
        grant_file(c.ruleset.as_raw_fd(), c"/dev/ptmx", file)
    }
}

/// The last steps of confining, the same in a nested sandbox (`nested.rs`): no new
/// privileges, the seccomp filter, then the Landlock domain.
///
/// # Safety
/// In the child between fork and exec: raw syscalls on values the parent prepared.
pub(super) unsafe fn restrict_self(c: &Confinement) -> std::io::Result<()> {
    // SAFETY: as the caller's; nothing allocates.
    unsafe {
        // A session keyring of its own, anonymous and empty, instead of the caller's (which
        // the filter below then keeps it from reaching anyway: `/proc/keys` lists nothing of
        // the caller's). A kernel without keyrings says ENOSYS: nothing to leave.
        libc::syscall(
            libc::SYS_keyctl,
            libc::KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<libc::c_char>(),
        );
        check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
        let filter = &c.network_filter;
        let prog = libc::sock_fprog {
            len: filter.len() as u16,
            filter: filter.as_ptr() as *mut libc::sock_filter,
        };
        check(libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &prog as *const libc::sock_fprog,
        ))?;
        let r = libc::syscall(
            libc::SYS_landlock_restrict_self,
            c.ruleset.as_raw_fd(),
            0u32,
        );
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The pinned places bound onto themselves, the read-only places bound read-only, the hidden
/// ones covered; then the working directory entered again through them.
unsafe fn mounts(c: &Confinement) -> std::io::Result<()> {
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: raw syscalls on C strings prepared by the parent; nothing allocates.
    unsafe {
        for path in &c.pinned {
            bind_onto_itself(path)?;
        }
        for path in &c.pinned_links {
            pin_link(path)?;
        }
        for path in &c.read_only {
            bind_onto_itself(path)?;
            // Its top mount only: a writable root that lies inside stays writable; nothing
            // pinned lies inside (`Held::unpin_inside_read_only`).
            check(read_only(path, true, false))?;
        }
        hide_dirs(&c.hidden_dirs)?;
        for hidden in &c.hidden_files {
            gone_or(
                hidden,
                check(libc::mount(
                    c"/dev/null".as_ptr(),
                    hidden.path.as_ptr(),
                    null,
                    libc::MS_BIND,
                    std::ptr::null(),
                )),
            )?;
        }
        private_places(c)?;
        // The working directory was entered before the mounts, so it still stands on the
        // mounts beneath them (a pinned project's read-only places would be bypassed by relative
        // paths): enter it again by its path, through the mounts just made.
        // One that cannot be named again (removed, longer than PATH_MAX) is an error: relative
        // paths would bypass the read-only places.
        let mut cwd = [0u8; libc::PATH_MAX as usize];
        if libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()).is_null() {
            return Err(std::io::Error::last_os_error());
        }
        check(libc::chdir(cwd.as_ptr().cast()))?;
    }
    Ok(())
}

/// Each hidden directory covered by an empty, read-only tmpfs: one made on the first of them
/// (a new superblock costs three times a clone of a mount), clones of it on the others. The
/// clones come from a descriptor of that mount, not from its path, which a later cover may hide.
///
/// # Safety
/// In the child between fork and exec: raw syscalls on values the parent prepared.
unsafe fn hide_dirs(dirs: &[super::Hidden]) -> std::io::Result<()> {
    let mut empty: libc::c_int = -1;
    // SAFETY: raw syscalls on C strings prepared by the parent and on a descriptor opened here.
    unsafe {
        for hidden in dirs {
            let covered = if empty < 0 {
                check(libc::mount(
                    c"tmpfs".as_ptr(),
                    hidden.path.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"size=4k,mode=0500".as_ptr().cast(),
                ))
                .and_then(|()| {
                    let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
                    empty = opened(libc::open(hidden.path.as_ptr(), flags))?;
                    Ok(())
                })
            } else {
                clone_onto(empty, &hidden.path)
            };
            gone_or(hidden, covered)?;
        }
        if empty >= 0 {
            libc::close(empty);
        }
    }
    Ok(())
}

/// A clone of the mount `fd` is the root of (what is mounted below it not included) put on
/// `path`.
///
/// # Safety
/// Raw syscalls on a descriptor and a C string of the caller's.
unsafe fn clone_onto(fd: libc::c_int, path: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: the caller's contract.
    unsafe {
        let flags =
            OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | libc::AT_EMPTY_PATH as libc::c_uint;
        let tree =
            opened(libc::syscall(libc::SYS_open_tree, fd, c"".as_ptr(), flags) as libc::c_int)?;
        put_tree(tree, path)
    }
}

/// The detached mount tree `tree` moved onto `path`, then closed.
///
/// # Safety
/// Raw syscalls on a descriptor and a C string of the caller's.
unsafe fn put_tree(tree: libc::c_int, path: &std::ffi::CStr) -> std::io::Result<()> {
    // SAFETY: the caller's contract.
    unsafe {
        let r = libc::syscall(
            libc::SYS_move_mount,
            tree,
            c"".as_ptr(),
            libc::AT_FDCWD,
            path.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        );
        let e = std::io::Error::last_os_error();
        libc::close(tree);
        if r != 0 {
            return Err(e);
        }
    }
    Ok(())
}

/// A syscall's descriptor-or-error result as `io::Result` (nix's `Errno::result`).
fn opened(fd: libc::c_int) -> std::io::Result<libc::c_int> {
    Ok(nix::errno::Errno::result(fd)?)
}

/// A hidden place's mount's result `r`: an error but where the place may go and is gone.
fn gone_or(hidden: &super::Hidden, r: std::io::Result<()>) -> std::io::Result<()> {
    match r {
        Err(e) if hidden.may_go && e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
        other => other,
    }
}

/// No capability after any exec: the bounding set emptied, root given nothing by exec
/// (securebits `NOROOT`, locked), the ambient set cleared, then every set zeroed but, with
/// `ptrace`, pid 1's own `CAP_SYS_PTRACE`. (Run as root, the user namespace's uid 0 would
/// otherwise keep a full set across exec.)
unsafe fn drop_capabilities(ptrace: bool) -> std::io::Result<()> {
    const SECURE: libc::c_ulong = (1 << 0) // NOROOT
        | (1 << 1) // NOROOT_LOCKED
        | (1 << 2) // NO_SETUID_FIXUP
        | (1 << 3) // NO_SETUID_FIXUP_LOCKED
        | (1 << 5) // KEEP_CAPS_LOCKED
        | (1 << 6) // NO_CAP_AMBIENT_RAISE
        | (1 << 7); // NO_CAP_AMBIENT_RAISE_LOCKED
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    // SAFETY: prctl and capset on values on this stack.
    unsafe {
        for cap in 0..64 {
            // EINVAL past the last capability this kernel knows.
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                break;
            }
        }
        check(libc::prctl(libc::PR_SET_SECUREBITS, SECURE, 0, 0, 0))?;
        check(libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        ))?;
        let mut header = Header {
            version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
            pid: 0,
        };
        // With the broker, pid 1 keeps `CAP_SYS_PTRACE` in its namespace, in its own sets only:
        // its helpers take the sockets of commands that made themselves non-dumpable (ssh-agent,
        // gpg-agent). The bounding set is empty and nothing is inheritable or ambient, so the
        // command has none once it execs.
        let kept = if ptrace { 1 << 19 } else { 0 }; // CAP_SYS_PTRACE
        let mut data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        data[0].effective = kept;
        data[0].permitted = kept;
        let r = libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr());
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// `open_tree(2)`'s and `move_mount(2)`'s flags (not all in `libc` for every target).
const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;

/// The command's private places ([`super::private`]), in the child after the read-only and hidden
/// mounts: the trees of the places shown again are cloned first (with what is mounted inside
/// them), then, in path order, each cover gets a fresh tmpfs and each shown place its tree back;
/// the read-only covers are made read-only last.
pub(super) unsafe fn private_places(c: &Confinement) -> std::io::Result<()> {
    use super::private::{Kind, MAX_SHOWN};
    let mut trees: [libc::c_int; MAX_SHOWN] = [-1; MAX_SHOWN];
    // SAFETY: raw syscalls on C strings prepared by the parent and on descriptors opened here;
    // nothing allocates.
    unsafe {
        let shown = c
            .places
            .iter()
            .filter(|m| matches!(m.kind, Kind::Show { .. }));
        for (slot, m) in trees.iter_mut().zip(shown) {
            let fd = libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                m.path.as_ptr(),
                OPEN_TREE_CLONE | libc::O_CLOEXEC as libc::c_uint | AT_RECURSIVE,
            );
            if fd < 0 {
                return Err(std::io::Error::last_os_error());
            }
            *slot = fd as libc::c_int;
        }
        let mut next = trees.iter();
        for m in &c.places {
            for dir in &m.parents {
                libc::mkdir(dir.as_ptr(), 0o755);
            }
            match m.kind {
                Kind::Cover { writable } => cover(c, &m.path, writable)?,
                Kind::Show { dir, read_only } => {
                    let tree = next.next().copied().unwrap_or(-1);
                    show(&m.path, tree, dir, read_only)?;
                }
            }
        }
        for m in &c.places {
            if m.kind == (Kind::Cover { writable: false }) {
                check(libc::mount(
                    std::ptr::null(),
                    m.path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
                    c"mode=0755,size=64k".as_ptr().cast(),
                ))?;
            }
        }
    }
    Ok(())
}

/// A fresh tmpfs on `path` (made first where it lies beneath another cover); writable ones are
/// granted to the ruleset.
unsafe fn cover(c: &Confinement, path: &std::ffi::CStr, writable: bool) -> std::io::Result<()> {
    let data = if writable {
        c"mode=1777"
    } else {
        c"mode=0755,size=64k"
    };
    // SAFETY: raw syscalls on C strings prepared by the parent.
    unsafe {
        libc::mkdir(path.as_ptr(), 0o755);
        check(libc::mount(
            c"tmpfs".as_ptr(),
            path.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            data.as_ptr().cast(),
        ))?;
        if writable {
            grant(c.ruleset.as_raw_fd(), path, c.temp_rights)?;
        }
    }
    Ok(())
}

/// The cloned mount tree `tree` put back on `path` (its mount point made first: a directory,
/// or an empty file for a socket), then closed; read-only with `read_only`.
unsafe fn show(
    path: &std::ffi::CStr,
    tree: libc::c_int,
    dir: bool,
    read_only: bool,
) -> std::io::Result<()> {
    // SAFETY: raw syscalls on a C string prepared by the parent and a descriptor opened here.
    unsafe {
        if dir {
            libc::mkdir(path.as_ptr(), 0o755);
        } else {
            let flags = libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW;
            let fd = libc::open(path.as_ptr(), flags, 0o600);
            if fd >= 0 {
                libc::close(fd);
            }
        }
        put_tree(tree, path)?;
        if read_only {
            check(self::read_only(path, true, false))?;
        }
    }
    Ok(())
}
