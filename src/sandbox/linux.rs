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

pub(super) fn probe() -> Support {
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
        namespaces: namespaces_work(),
    }
}

/// Whether a child may create the namespaces and mount a /proc of its PID namespace (a fork
/// that tries and exits; a container that masks parts of /proc refuses the mount).
fn namespaces_work() -> bool {
    use nix::sys::wait::{waitpid, WaitStatus};
    use nix::unistd::{fork, ForkResult};
    // SAFETY: the child makes raw syscalls and exits without returning into Rust code.
    match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            // SAFETY: unshare, mount, fork, waitpid and _exit are async-signal-safe.
            unsafe { libc::_exit(if proc_in_new_namespaces() { 0 } else { 1 }) }
        }
        Ok(ForkResult::Parent { child }) => loop {
            match waitpid(child, None) {
                Ok(WaitStatus::Exited(_, code)) => return code == 0,
                Err(nix::errno::Errno::EINTR) => continue,
                _ => return false,
            }
        },
        Err(_) => false,
    }
}

/// In a throwaway child: new user, mount and PID namespaces, and pid 1 mounting /proc.
unsafe fn proc_in_new_namespaces() -> bool {
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: raw syscalls; the caller exits right after.
    unsafe {
        if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID) != 0
            || libc::mount(
                null,
                c"/".as_ptr(),
                null,
                libc::MS_REC | libc::MS_PRIVATE,
                null.cast(),
            ) != 0
        {
            return false;
        }
        match libc::fork() {
            -1 => false,
            0 => {
                let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                let proc = c"proc".as_ptr();
                let r = libc::mount(proc, c"/proc".as_ptr(), proc, flags, null.cast());
                libc::_exit(if r == 0 { 0 } else { 1 })
            }
            pid => {
                let mut status = 0;
                while libc::waitpid(pid, &mut status, 0) < 0 {
                    if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                        return false;
                    }
                }
                libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
            }
        }
    }
}

/// The write rights Landlock handles: everything that creates, changes, removes, links or
/// renames a file. Reading and executing are not handled (reads are bounded by the mounts).
fn write_rights(abi: ABI) -> landlock::BitFlags<AccessFs> {
    AccessFs::from_write(abi) & !AccessFs::Execute
}

/// A ruleset that lets writes happen beneath `writable` (and to the few devices every program
/// writes) and nowhere else; the fd the child restricts itself with.
pub(super) fn ruleset(writable: &[PathBuf]) -> Result<OwnedFd, String> {
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
        .create()
        .map_err(|e| e.to_string())?;
    let devices = [
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
    let places = writable
        .iter()
        .map(PathBuf::as_path)
        .chain(devices.iter().map(Path::new));
    for place in places {
        // A place that does not exist (yet) grants nothing; it is not an error.
        let Ok(fd) = PathFd::new(place) else { continue };
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
    Option::<OwnedFd>::from(ruleset)
        .ok_or_else(|| format!("Landlock ABI {MIN_LANDLOCK_ABI} is not available on this kernel"))
}

/// The network filter: `socket(2)` for IPv4 and IPv6 (and io_uring, which can open sockets
/// without that call) fails with EACCES; Unix sockets and everything else are untouched. A
/// syscall of another ABI (32-bit, x32) than the native one ends the process.
pub(super) fn network_filter() -> Result<seccompiler::BpfProgram, String> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    };
    let family = |f: libc::c_int| -> Result<SeccompRule, String> {
        let c = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, f as u64)
            .map_err(|e| e.to_string())?;
        SeccompRule::new(vec![c]).map_err(|e| e.to_string())
    };
    let mut rules = std::collections::BTreeMap::new();
    let socket_rules = vec![family(libc::AF_INET)?, family(libc::AF_INET6)?];
    let mut numbers = vec![(libc::SYS_socket, socket_rules)];
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        numbers.push((nr, Vec::new()));
    }
    for (nr, r) in numbers {
        // x32 reaches the same calls with bit 30 set, under the x86_64 ABI's audit value.
        #[cfg(target_arch = "x86_64")]
        rules.insert(nr | 0x4000_0000, r.clone());
        rules.insert(nr, r);
    }
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
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())
}

/// The flags `path`'s mount has that a remount inside a user namespace must keep (the kernel
/// refuses to clear them: they are locked).
pub(super) fn mount_flags(path: &Path) -> u64 {
    let Ok(st) = nix::sys::statvfs::statvfs(path) else {
        return 0;
    };
    use nix::sys::statvfs::FsFlags;
    let f = st.flags();
    let mut out = 0u64;
    for (has, flag) in [
        (FsFlags::ST_NOSUID, libc::MS_NOSUID),
        (FsFlags::ST_NODEV, libc::MS_NODEV),
        (FsFlags::ST_NOEXEC, libc::MS_NOEXEC),
        (FsFlags::ST_NOATIME, libc::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, libc::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if f.contains(has) {
            out |= flag;
        }
    }
    out
}

/// A syscall's 0-or-error result as `io::Result` (the child can report only the OS error).
fn check(r: libc::c_int) -> std::io::Result<()> {
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
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: raw syscalls on C strings prepared by the parent; nothing allocates.
    unsafe {
        check(libc::unshare(
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID,
        ))?;
        write_file(c"/proc/self/setgroups", &c.setgroups)?;
        write_file(c"/proc/self/uid_map", &c.uid_map)?;
        write_file(c"/proc/self/gid_map", &c.gid_map)?;
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
        // The caller's processes (an agent's shell and its descriptors) are not in it.
        check(libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        ))?;
        mounts(c)?;
        drop_capabilities()?;
        check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
        if let Some(filter) = &c.network_filter {
            let prog = libc::sock_fprog {
                len: filter.len() as u16,
                filter: filter.as_ptr() as *mut libc::sock_filter,
            };
            check(libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog,
            ))?;
        }
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
            check(libc::mount(
                path.as_ptr(),
                path.as_ptr(),
                null,
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ))?;
        }
        for (path, kept) in &c.read_only {
            check(libc::mount(
                path.as_ptr(),
                path.as_ptr(),
                null,
                libc::MS_BIND | libc::MS_REC,
                std::ptr::null(),
            ))?;
            check(libc::mount(
                null,
                path.as_ptr(),
                null,
                libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | *kept,
                std::ptr::null(),
            ))?;
        }
        for path in &c.hidden_dirs {
            check(libc::mount(
                c"tmpfs".as_ptr(),
                path.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                c"size=4k,mode=0500".as_ptr().cast(),
            ))?;
        }
        for path in &c.hidden_files {
            check(libc::mount(
                c"/dev/null".as_ptr(),
                path.as_ptr(),
                null,
                libc::MS_BIND,
                std::ptr::null(),
            ))?;
        }
        // The working directory was entered before the mounts, so it still stands on the
        // mounts beneath them (a pinned project's read-only places would be bypassed by relative
        // paths): enter it again by its path, through the mounts just made.
        let mut cwd = [0u8; libc::PATH_MAX as usize];
        if !libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()).is_null() {
            check(libc::chdir(cwd.as_ptr().cast()))?;
        }
    }
    Ok(())
}

/// No capability, now or after any exec: the bounding set emptied, root given nothing by exec
/// (securebits `NOROOT`, locked), the ambient set cleared, then every set zeroed. (Run as root,
/// the user namespace's uid 0 would otherwise keep a full set across exec.)
unsafe fn drop_capabilities() -> std::io::Result<()> {
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
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        let r = libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr());
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
