//! A confined command that the process asking waits for itself (`hookd exec`, the agent's
//! rewritten shell call, [`crate::run_command`]): pid 1 of the namespaces is cloned from that
//! process directly, with no waiter between (`spawn.rs`'s waiter is one more fork of hookd, of
//! its memory: 0.2 to 0.4 ms of every `hookd exec`). Meanwhile the process passes the signals
//! it catches on to pid 1, as the waiter does, and puts its own handlers back after. The
//! handlers are the process's: one such command at a time; another one meanwhile takes the
//! waiter's way.

use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::libc;

use super::spawn::{
    check, close_inherited_descriptors, forward, pid_one_confined, pid_one_starts, read_full,
    FORWARDED, FORWARD_TO,
};
use super::vfork::Exec;
use super::Confinement;

/// Whether a command started here is running (its signals are being passed on).
static BUSY: AtomicBool = AtomicBool::new(false);

/// Run `cmd` (made by the crate: no stdio, `pre_exec` or `arg0` of a caller's; `exec` what it
/// execs) confined by `c` until it has ended, `keep.0` its descriptor `keep.1`. `None` where
/// another one runs in this process, or `cmd`'s directory cannot be named to the kernel (a NUL
/// byte): the caller takes the waiter's way.
pub(super) fn run(
    c: &Confinement,
    cmd: &Command,
    exec: &Exec,
    keep: Option<(RawFd, RawFd)>,
) -> Option<std::io::Result<ExitStatus>> {
    use std::os::unix::ffi::OsStrExt;
    let cwd = match cmd.get_current_dir() {
        Some(dir) => Some(CString::new(dir.as_os_str().as_bytes()).ok()?),
        None => None,
    };
    if BUSY.swap(true, Ordering::AcqRel) {
        return None;
    }
    reap_ended();
    let ran = run_here(c, cwd.as_deref(), exec, keep);
    BUSY.store(false, Ordering::Release);
    Some(ran)
}

fn run_here(
    c: &Confinement,
    cwd: Option<&CStr>,
    exec: &Exec,
    keep: Option<(RawFd, RawFd)>,
) -> std::io::Result<ExitStatus> {
    use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
    let (mine, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        SockFlag::SOCK_CLOEXEC,
    )?;
    let handlers = Handlers::forward();
    let flags = super::linux::namespaces(c) | libc::SIGCHLD | libc::CLONE_PIDFD;
    let mut pidfd: libc::c_int = -1;
    // SAFETY: a clone as `fork` makes it (no memory shared, no new stack): the child runs
    // `child`, which makes raw system calls only and never returns. The kernel writes pid 1's
    // pidfd to `pidfd` (`parent_tid`, the third argument on x86_64 and aarch64).
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::c_ulong::from(flags as u32),
            0,
            &mut pidfd as *mut libc::c_int,
            0,
            0,
        )
    };
    if pid == 0 {
        // SAFETY: in the child just cloned, single-threaded.
        unsafe { child(c, theirs.as_raw_fd(), mine.as_raw_fd(), cwd, keep, exec) }
    }
    let cloned = std::io::Error::last_os_error();
    drop(theirs);
    if pid < 0 {
        return Err(cloned);
    }
    let pid = pid as libc::pid_t;
    // SAFETY: the kernel made this descriptor for this process alone.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
    FORWARD_TO.store(pid, Ordering::Relaxed);
    handlers.unblock();
    let mut reported = [0i32; 2];
    // SAFETY: a read into this stack's value.
    let got = unsafe { read_full(mine.as_raw_fd(), &mut reported) };
    drop(handlers);
    match (got, reported) {
        // Pid 1 ended before it reported (killed): its end is the command's.
        (false, _) => Ok(ExitStatus::from_raw(wait(pid))),
        (true, [-1, errno]) => {
            wait(pid);
            Err(std::io::Error::from_raw_os_error(errno))
        }
        // Not the program: its namespaces, mounts or filters (a place gone meanwhile).
        (true, [-2, errno]) => {
            wait(pid);
            let why = std::io::Error::from_raw_os_error(errno);
            let said = format!("its sandbox could not be set up: {why}");
            Err(std::io::Error::new(why.kind(), said))
        }
        // Its exit takes the namespaces down (0.3 to 0.5 ms): not waited for; reaped later.
        (true, [status, _]) => {
            reap_ended();
            let mut ending = ENDING.lock().unwrap_or_else(|p| p.into_inner());
            ending.push(pidfd);
            Ok(ExitStatus::from_raw(status))
        }
    }
}

/// Pids 1 (their pidfds) that reported their command's end and were not waited for: their
/// exit takes the namespaces down (0.3 to 0.5 ms). Each is reaped when the next command here
/// starts or ends ([`reap_ended`]), or, where the process ends first (`hookd exec`), by
/// whoever adopts it. A thread that waited instead made every `hookd exec` 0.35 to 0.45 ms
/// slower (its start, and a process exit that then ends two threads: docs/benchmarks.md). By
/// pidfd, not pid: a pid reaped meanwhile by someone else (a process that reaps all its
/// children) may be another child's by then.
static ENDING: std::sync::Mutex<Vec<OwnedFd>> = std::sync::Mutex::new(Vec::new());

/// Reap the pids 1 of [`ENDING`] that have exited (none is waited for).
fn reap_ended() {
    let mut ending = ENDING.lock().unwrap_or_else(|p| p.into_inner());
    ending.retain(|pidfd| {
        let flags = libc::WEXITED | libc::WNOHANG | libc::__WALL;
        // SAFETY: waitid on this stack's value (WNOHANG: it never blocks), then its `si_pid`,
        // which waitid filled in (0: the process has not exited).
        unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let id = pidfd.as_raw_fd() as libc::id_t;
            let r = libc::waitid(libc::P_PIDFD, id, &mut info, flags);
            // Still running: kept. Reaped now, or already (an error): dropped, pidfd closed.
            r == 0 && info.si_pid() == 0
        }
    });
}

/// Reap `pid`: its wait status (exit 1 where it cannot be had).
fn wait(pid: libc::pid_t) -> libc::c_int {
    loop {
        let mut status = 0;
        // SAFETY: waitpid on this stack's value.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
        if r == pid {
            return status;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return libc::W_EXITCODE(1, 0);
        }
    }
}

/// This process's handlers of the signals passed on ([`FORWARDED`]), replaced by [`forward`]
/// and put back when dropped; those signals blocked in this thread until [`Handlers::unblock`].
struct Handlers {
    old: [libc::sigaction; FORWARDED.len()],
    mask: libc::sigset_t,
}

impl Handlers {
    fn forward() -> Handlers {
        // SAFETY: sigaction and sigprocmask on this stack's values.
        unsafe {
            let mut handlers = Handlers {
                old: std::mem::zeroed(),
                mask: std::mem::zeroed(),
            };
            let set = forwarded();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut handlers.mask);
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = forward as *const () as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            for (sig, old) in FORWARDED.iter().zip(handlers.old.iter_mut()) {
                libc::sigaction(*sig, &sa, old);
            }
            handlers
        }
    }

    /// The signals that came meanwhile are passed on now ([`FORWARD_TO`] set).
    fn unblock(&self) {
        // SAFETY: sigprocmask on this value.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.mask, std::ptr::null_mut()) };
    }
}

impl Drop for Handlers {
    fn drop(&mut self) {
        // SAFETY: sigaction and sigprocmask on this value's fields. Blocked while the old
        // handlers come back: a signal meanwhile goes to them, not to a pid 1 that has gone.
        unsafe {
            let set = forwarded();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            for (sig, old) in FORWARDED.iter().zip(self.old.iter()) {
                libc::sigaction(*sig, old, std::ptr::null_mut());
            }
            FORWARD_TO.store(0, Ordering::Relaxed);
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.mask, std::ptr::null_mut());
        }
    }
}

fn forwarded() -> libc::sigset_t {
    // SAFETY: sigset operations on this stack's value.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in FORWARDED {
            libc::sigaddset(&mut set, sig);
        }
        set
    }
}

/// Pid 1, just cloned into the namespaces: what std's spawn and the waiter do for the command
/// (SIGPIPE back to its default, hookd ignores it; no descriptor but stdio and `keep`; the
/// working directory), this user's ids mapped, then [`pid_one_confined`] and
/// [`pid_one_starts`]. Where it fails before the command has started, it reports `[-2, errno]`
/// (the sandbox could not be set up) or `[-1, errno]` (the command could not start) and exits.
///
/// # Safety
/// In the child of `run_here`'s clone, single-threaded; raw system calls only.
unsafe fn child(
    c: &Confinement,
    report: RawFd,
    parents: RawFd,
    cwd: Option<&CStr>,
    keep: Option<(RawFd, RawFd)>,
    exec: &Exec,
) -> ! {
    // SAFETY: the caller's contract.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_SETMASK, &all, std::ptr::null_mut());
        libc::close(parents);
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut report = report;
        let (code, e) = match start(c, &mut report, cwd, keep, exec) {
            Err(failed) => failed,
            Ok(()) => (-1, std::io::Error::from_raw_os_error(libc::EIO)),
        };
        let errno = e.raw_os_error().unwrap_or(libc::EIO);
        libc::write(report, [code, errno].as_ptr().cast(), 8);
        libc::_exit(127)
    }
}

/// What pid 1 does until the command runs (it returns only where that fails): the descriptors
/// and the directory as std's spawn makes them, the namespaces entered and confined, the
/// command started. The failure, with the code it is reported with: `-1` the command could not
/// start, `-2` its sandbox could not be set up.
///
/// # Safety
/// As [`child`]'s.
unsafe fn start(
    c: &Confinement,
    report: &mut RawFd,
    cwd: Option<&CStr>,
    keep: Option<(RawFd, RawFd)>,
    exec: &Exec,
) -> Result<(), (i32, std::io::Error)> {
    let command = |e| (-1, e);
    // SAFETY: the caller's contract; raw system calls only.
    unsafe {
        if let Some((fd, to)) = keep {
            if *report == to {
                *report = libc::fcntl(*report, libc::F_DUPFD_CLOEXEC, to + 1);
                check(*report).map_err(command)?;
            }
            if fd != to {
                check(libc::dup2(fd, to)).map_err(command)?;
            }
        }
        close_inherited_descriptors();
        if let Some((_, to)) = keep {
            check(libc::fcntl(to, libc::F_SETFD, 0)).map_err(command)?;
        }
        if let Some(dir) = cwd {
            check(libc::chdir(dir.as_ptr())).map_err(command)?;
        }
        (super::linux::enter(c).and_then(|()| pid_one_confined(c, *report)))
            .map_err(|e| (-2, e))?;
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        pid_one_starts(*report, &c.locks, &none, Some(exec), c.broker.as_ref()).map_err(command)
    }
}
