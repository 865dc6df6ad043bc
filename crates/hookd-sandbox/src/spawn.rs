//! The one way hookd starts a command, for hooks and `hookd exec` alike: what it inherits (no
//! descriptor but stdio and one named), and what cannot outlive it.
//!
//! Between fork and exec the forked child (the waiter) stays behind and waits. Confined, it
//! enters new user, mount and PID namespaces and forks pid 1 of the namespace, which confines
//! itself (a /proc of the namespace alone, the mounts, no capability, the filters), starts a new
//! session (no controlling terminal: `TIOCSTI` and `TIOCLINUX` are refused) and forks the
//! command; when the command ends pid 1 exits, and the kernel kills whatever is left in the
//! namespace, detached or not. Unconfined, the waiter is a child subreaper outside the command's
//! process group: when the command ends it kills and reaps every descendant left, `setsid` ones
//! included. Either way the waiter ends as the command did (its exit code or its signal), and
//! signals sent to it are passed on to the command. A command the crate makes and waits for
//! itself (`crate::run_command`: `hookd exec`, the rewritten shell call) has no waiter:
//! the process asking clones pid 1 itself and passes its signals on meanwhile (`direct.rs`).

use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

use nix::libc;

use super::Confinement;

/// Where this process passes the signals it catches on: a pid, or minus a process group.
pub(super) static FORWARD_TO: AtomicI32 = AtomicI32::new(0);

/// The signals passed on to the command (those a terminal, a timeout or a user sends, and
/// every other one whose default would end hookd without its end: `timeout -s ALRM` ended
/// `hookd exec` before it moved aside what the command made, attack round 9).
pub(super) const FORWARDED: [libc::c_int; 14] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGWINCH,
    libc::SIGCONT,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGPWR,
    libc::SIGIO,
    libc::SIGXCPU,
];

pub(super) extern "C" fn forward(sig: libc::c_int) {
    let to = FORWARD_TO.load(Ordering::Relaxed);
    if to != 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(to, sig) };
    }
}

/// Make `cmd` start the way every command hookd runs starts (see the module's header):
/// confined by `confinement` when there is one; `keep_fd` the one descriptor above 2 it
/// inherits; `leftovers`, when given, the write end (close-on-exec) of a pipe on which the
/// waiter first names the process group to signal (4 bytes, native order: the command's own
/// group unconfined, the waiter's confined), written before `spawn` returns, then writes a
/// byte when the command left processes behind that had to be killed.
///
/// `cmd` may still be changed afterwards (pid 1 forks the command, which std then execs as
/// `cmd` is when it is spawned); [`prepare_to_spawn_now`] is the cheaper way for a `cmd`
/// spawned at once.
pub fn prepare(
    cmd: &mut Command,
    confinement: Option<Arc<Confinement>>,
    keep_fd: Option<RawFd>,
    leftovers: Option<RawFd>,
) {
    prepare_exec(cmd, confinement, keep_fd, leftovers, None);
}

/// [`prepare`] for a `cmd` spawned right after it, unchanged: confined, pid 1 execs the
/// command itself (`vfork.rs`, no copy of its memory) from what `cmd` is NOW: its program,
/// its arguments (`arg0` the `argv[0]` where `cmd` was given one with `CommandExt::arg0`,
/// which `Command` does not tell) and exactly the variables set on it, so its environment
/// must have been cleared first (as `crate::confined_env` and the runner do). A change to
/// `cmd` after this call would not reach the command.
pub fn prepare_to_spawn_now(
    cmd: &mut Command,
    confinement: Option<Arc<Confinement>>,
    keep_fd: Option<RawFd>,
    leftovers: Option<RawFd>,
    arg0: Option<&std::ffi::OsStr>,
) {
    let exec = confined_exec(cmd, confinement.as_deref(), arg0);
    prepare_exec(cmd, confinement, keep_fd, leftovers, exec);
}

fn prepare_exec(
    cmd: &mut Command,
    confinement: Option<Arc<Confinement>>,
    keep_fd: Option<RawFd>,
    leftovers: Option<RawFd>,
    exec: Option<super::vfork::Exec>,
) {
    // SAFETY: the closure runs in the forked child before exec and makes raw syscalls only
    // (close_range, fcntl, sigprocmask, fork, wait, and the sandbox's unshare, mount, prctl,
    // landlock), on what was prepared before the fork; it allocates and locks nothing.
    let parent = std::process::id() as libc::pid_t;
    unsafe {
        cmd.pre_exec(move || {
            start(
                parent,
                confinement.as_deref(),
                keep_fd,
                leftovers.unwrap_or(-1),
                -1,
                exec.as_ref(),
            )
        });
    }
}

/// Start `cmd` as [`prepare`] does (without a leftovers pipe) and wait until the command has
/// ended, as its waiter reports it: the wait status, written on a pipe once nothing the
/// command started is left, before the waiter (confined: before pid 1 too) exits. Their exits,
/// in which the kernel takes the namespaces down (0.3 to 0.5 ms), are not waited for: a thread
/// reaps the waiter. Where the waiter reports nothing (killed), its own end is the command's.
/// Confined, pid 1 execs the command from `cmd` as it is at this call, as
/// [`prepare_to_spawn_now`] says: its environment cleared first and set on it.
pub fn run(
    cmd: &mut Command,
    confinement: Option<Arc<Confinement>>,
    keep_fd: Option<RawFd>,
) -> std::io::Result<std::process::ExitStatus> {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::ExitStatusExt;
    let (done_r, done_w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let done = done_w.as_raw_fd();
    let exec = confined_exec(cmd, confinement.as_deref(), None);
    // SAFETY: as `prepare`'s closure.
    unsafe {
        let parent = std::process::id() as libc::pid_t;
        cmd.pre_exec(move || {
            start(
                parent,
                confinement.as_deref(),
                keep_fd,
                -1,
                done,
                exec.as_ref(),
            )
        });
    }
    let mut child = cmd.spawn()?;
    drop(done_w);
    let mut status = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match nix::unistd::read(&done_r, &mut status[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        }
    }
    if got < 4 {
        return child.wait();
    }
    std::thread::spawn(move || child.wait());
    Ok(std::process::ExitStatus::from_raw(i32::from_ne_bytes(
        status,
    )))
}

/// [`run`] for a `cmd` the crate made ([`crate::run_command_keeping`]: no stdio, `pre_exec` or
/// `arg0` of a caller's), `keep.0` the command's descriptor `keep.1`: confined (not nested),
/// this process clones pid 1 itself, no waiter between (`direct.rs`).
pub(super) fn run_made(
    mut cmd: Command,
    confinement: Arc<Confinement>,
    keep: Option<(RawFd, RawFd)>,
) -> std::io::Result<std::process::ExitStatus> {
    if let Some(exec) = confined_exec(&cmd, Some(&confinement), None) {
        if let Some(ran) = super::direct::run(&confinement, &cmd, &exec, keep) {
            return ran;
        }
    }
    if let Some((fd, to)) = keep.filter(|(fd, to)| fd != to) {
        // SAFETY: dup2 in the forked child, before `run`'s own closure marks the others.
        unsafe { cmd.pre_exec(move || check(libc::dup2(fd, to))) };
    }
    run(&mut cmd, Some(confinement), keep.map(|(_, to)| to))
}

/// Confined (not nested), what pid 1 execs for `cmd` (`vfork.rs`); where that cannot be made
/// (a NUL byte: std's own spawn then refuses it), pid 1 forks the command as before.
fn confined_exec(
    cmd: &Command,
    confinement: Option<&Confinement>,
    arg0: Option<&std::ffi::OsStr>,
) -> Option<super::vfork::Exec> {
    match confinement {
        Some(c) if c.nested.is_none() => super::vfork::Exec::of(cmd, arg0).ok(),
        _ => None,
    }
}

/// Make `cmd` start with no waiter: inherited descriptors closed, nothing else (std's
/// `process_group(0)` makes it lead its own group). Only for a process that kills and reaps
/// itself what the command leaves behind (see `runner::reap_here`).
pub fn prepare_unwaited(cmd: &mut Command) {
    // SAFETY: the closure makes raw syscalls only (close_range or fcntl) in the forked child.
    unsafe {
        cmd.pre_exec(|| {
            close_inherited_descriptors();
            Ok(())
        });
    }
}

/// In the forked child: returns only in the process that is to exec the command.
unsafe fn start(
    parent: libc::pid_t,
    confinement: Option<&Confinement>,
    keep_fd: Option<RawFd>,
    leftovers: RawFd,
    done: RawFd,
    exec: Option<&super::vfork::Exec>,
) -> std::io::Result<()> {
    close_inherited_descriptors();
    // SAFETY: plain syscalls on this stack's values.
    unsafe {
        if let Some(fd) = keep_fd {
            // Not open (EBADF): nothing to keep; the command finds it closed, as it would have.
            libc::fcntl(fd, libc::F_SETFD, 0);
        }
        // Signals wait until each process has its handlers; the command gets `old` back.
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_SETMASK, &all, &mut old);
        match confinement {
            Some(c) if c.nested.is_some() => {
                // Nested (no PID namespace of its own to end with it): the waiter ends the
                // command and all it started when the process that spawned it dies, killed or
                // ended by a signal (attack round 15's F7: `kill -9` of a nested `hookd exec`
                // left its command running until the agent ended).
                on_parent_death(spawner_died)?;
                if libc::getppid() != parent {
                    libc::_exit(1); // the spawner died before the death signal was set
                }
                unconfined(&old, leftovers, done, Some(c))
            }
            Some(c) => {
                // Killed with the thread that spawned it (the runner, which waits for it): then
                // pid 1's own parent-death signal ends the namespace. Before, a dispatcher
                // killed outright (SIGKILL, a terminal's SIGHUP) left its confined hook running
                // with no timeout (attack round 9).
                check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
                if libc::getppid() != parent {
                    libc::_exit(1); // the runner died before the death signal was set
                }
                confined(c, &old, leftovers, done, exec)
            }
            None => unconfined(&old, leftovers, done, None),
        }
    }
}

/// The waiter of a confined command: the namespaces, then pid 1 forked. It reports the
/// command's end as pid 1 reported it (once nothing it started is left) on `done`, before
/// reaping pid 1, whose exit takes the namespaces down.
unsafe fn confined(
    c: &Confinement,
    old: &libc::sigset_t,
    leftovers: RawFd,
    done: RawFd,
    exec: Option<&super::vfork::Exec>,
) -> std::io::Result<()> {
    // SAFETY: the caller's contract; raw syscalls only.
    unsafe {
        super::linux::unshare(c)?;
        let mut pair = [-1; 2];
        check(libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            pair.as_mut_ptr(),
        ))?;
        match libc::fork() {
            -1 => Err(std::io::Error::last_os_error()),
            0 => {
                libc::close(pair[0]);
                pid_one(c, pair[1], old, exec)
            }
            pid1 => {
                libc::close(pair[1]);
                // Signals to the waiter's group reach pid 1 through the waiter.
                let me = libc::getpid();
                libc::write(leftovers, (&raw const me).cast(), 4);
                close_all_but(pair[0], leftovers, &[done]);
                FORWARD_TO.store(pid1, Ordering::Relaxed);
                handle(FORWARDED.iter(), forward as *const () as libc::sighandler_t);
                // What pid 1 reported of the command; its own end when it reported nothing.
                let mut reported = [0i32; 2];
                let status = if read_full(pair[0], &mut reported) {
                    if reported[1] != 0 {
                        libc::write(leftovers, c"1".as_ptr().cast(), 1);
                    }
                    reported[0]
                } else {
                    wait_for(pid1)
                };
                report(done, status);
                wait_for(pid1);
                exit_as(status)
            }
        }
    }
}

/// Read `buf`'s 8 bytes from `fd`: whether they all came.
pub(super) unsafe fn read_full(fd: RawFd, buf: &mut [i32; 2]) -> bool {
    let mut got = 0usize;
    while got < 8 {
        // SAFETY: read into this stack's value, within its bounds.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast::<u8>().add(got).cast(), 8 - got) };
        if n > 0 {
            got += n as usize;
        } else if n == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return false;
        }
    }
    true
}

/// Write the wait status `status` on `done` (`-1`: nobody asked).
unsafe fn report(done: RawFd, status: libc::c_int) {
    if done >= 0 {
        // SAFETY: write of this stack's value.
        unsafe { libc::write(done, (&raw const status).cast(), 4) };
    }
}

/// Pid 1 of the namespace: confine, a new session, fork the command, wait for it, report its
/// status to the waiter and exit (which ends everything left in the namespace).
pub(super) unsafe fn pid_one(
    c: &Confinement,
    report: RawFd,
    old: &libc::sigset_t,
    exec: Option<&super::vfork::Exec>,
) -> std::io::Result<()> {
    // SAFETY: the caller's contract.
    unsafe {
        pid_one_confined(c, report)?;
        pid_one_starts(report, &c.locks, old, exec, c.broker.as_ref())
    }
}

/// [`pid_one`]'s first half: killed with its parent, a session of its own, confined.
///
/// # Safety
/// As [`pid_one`]'s.
pub(super) unsafe fn pid_one_confined(c: &Confinement, report: RawFd) -> std::io::Result<()> {
    // SAFETY: the caller's contract; raw syscalls only.
    unsafe {
        // Ended with its parent (a SIGKILL to it, to its group): then nothing is left either.
        // Not by a SIGKILL of its own: pid 1's exit closes its descriptors, the stand-ins'
        // locks among them, before the kernel kills the rest of the namespace, and another
        // command ending in that moment could remove the stand-ins under a command still
        // running. The signal is caught (set before it is asked for: pid 1 of a namespace
        // ignores a signal it does not handle), and what is left is killed and reaped first.
        RECORD.store(c.record, Ordering::Relaxed);
        // Taken at once (the others wait until the command exists): nothing of the command
        // starts once the parent has gone.
        let mut death: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut death);
        libc::sigaddset(&mut death, libc::SIGRTMAX());
        on_parent_death(orphaned)?;
        libc::sigprocmask(libc::SIG_UNBLOCK, &death, std::ptr::null_mut());
        let mut alive = libc::pollfd {
            fd: report,
            events: 0,
            revents: 0,
        };
        if libc::poll(&mut alive, 1, 0) != 0 {
            libc::_exit(1); // the waiter died before the death signal was set
        }
        check(libc::setsid())?;
        super::linux::confine(c)
    }
}

/// The descriptor of the command's end record (`unsettled.rs`) in pid 1, or -1.
static RECORD: AtomicI32 = AtomicI32::new(-1);

/// Pid 1's parent died: everything else in the namespace killed and reaped (none can fork
/// with SIGKILL pending); the end record stamped with this moment (what was made below after
/// it is not the command's: the late end leaves it); then pid 1 exits, and its descriptors
/// close only then.
extern "C" fn orphaned(_: libc::c_int) {
    // SAFETY: kill, waitpid, futimens and _exit are async-signal-safe.
    unsafe {
        libc::kill(-1, libc::SIGKILL);
        while libc::waitpid(-1, std::ptr::null_mut(), libc::__WALL) > 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
        let record = RECORD.load(Ordering::Relaxed);
        if record >= 0 {
            libc::futimens(record, std::ptr::null());
        }
        libc::_exit(1)
    }
}

/// [`pid_one`]'s second half: the command started, waited for, reported; pid 1 exits.
///
/// # Safety
/// As [`pid_one`]'s, once [`pid_one_confined`] has run.
pub(super) unsafe fn pid_one_starts(
    report: RawFd,
    locks: &[RawFd],
    old: &libc::sigset_t,
    exec: Option<&super::vfork::Exec>,
    broker: Option<&super::broker::Broker>,
) -> std::io::Result<()> {
    // SAFETY: the caller's contract; raw syscalls only.
    unsafe {
        // Not to be traced by the command (same uid, same Landlock domain): stopped, pid 1
        // would never report and hookd would wait for ever; written to, it could report an
        // end while what the command started runs on. Before the command exists: made after
        // the fork, a command that traced pid 1 at once won the race (64 of 200 runs of a
        // static program here). The command's own memory is dumpable again once it execs.
        check(libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0))?;
        let filter = broker.map(|b| b.filter.as_slice());
        // Forked (not `vfork.rs`'s), the command's process hands the broker's listener over.
        let mut pair = [-1; 2];
        if exec.is_none() && filter.is_some() {
            check(libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                pair.as_mut_ptr(),
            ))?;
        }
        let (forked, mut listener) = match exec {
            Some(exec) => super::vfork::start_command(exec, old, filter)?,
            None => (libc::fork(), None),
        };
        match forked {
            -1 => Err(std::io::Error::last_os_error()),
            0 => {
                // The command leads its own group in the new session; signals as it had them.
                check(libc::setpgid(0, 0))?;
                if let Some(filter) = filter {
                    libc::close(pair[0]);
                    check(super::broker::install_and_hand(filter, pair[1]))?;
                    libc::close(pair[1]);
                }
                libc::sigprocmask(libc::SIG_SETMASK, old, std::ptr::null_mut());
                Ok(())
            }
            command => {
                if exec.is_none() && filter.is_some() {
                    libc::close(pair[1]);
                    listener = super::broker::receive(pair[0]);
                    libc::close(pair[0]);
                }
                // The stand-ins' locks stay with pid 1 (close-on-exec: not the command's): a
                // SIGKILL to hookd released them while its sandbox still ran, for the 1 to 4 ms
                // before pid 1's parent-death signal ended it, and another command ending then
                // removed the stand-ins under it (an attack round made `.mcp.json` at the root
                // so, once in 150 to 300 kills).
                close_all_but(report, listener.unwrap_or(-1), locks);
                FORWARD_TO.store(-command, Ordering::Relaxed);
                handle(FORWARDED.iter(), forward as *const () as libc::sighandler_t);
                // Orphans of the namespace are reaped until the command itself ends, and
                // the broker's calls answered meanwhile.
                let status = match (listener, broker) {
                    (Some(listener), Some(broker)) => {
                        super::broker::serve(command, listener, broker)
                    }
                    _ => wait_for(command),
                };
                let left = has_children();
                if left {
                    // Everything else in the namespace, killed and reaped (orphans become pid
                    // 1's children; with SIGKILL pending none can fork): once none is left,
                    // the report means that nothing the command started runs.
                    libc::kill(-1, libc::SIGKILL);
                    while libc::waitpid(-1, std::ptr::null_mut(), 0) > 0
                        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
                    {
                    }
                }
                libc::write(report, [status, i32::from(left)].as_ptr().cast(), 8);
                libc::_exit(0)
            }
        }
    }
}

/// The waiter of an unconfined command: a child subreaper outside the command's group (so a
/// kill of the group leaves it to clean up), which kills what the command left. With `nested`
/// (inside a confined agent), the command confines itself first (`nested.rs`).
unsafe fn unconfined(
    old: &libc::sigset_t,
    leftovers: RawFd,
    done: RawFd,
    nested: Option<&Confinement>,
) -> std::io::Result<()> {
    // SAFETY: the caller's contract; raw syscalls only.
    unsafe {
        check(libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))?;
        match libc::fork() {
            -1 => Err(std::io::Error::last_os_error()),
            0 => {
                // The command leads its own group: it cannot leave it (setsid fails for a
                // group leader), so a signal to the group always reaches it.
                match nested {
                    Some(c) => super::nested::confine(c)?,
                    None => check(libc::setpgid(0, 0))?,
                }
                libc::sigprocmask(libc::SIG_SETMASK, old, std::ptr::null_mut());
                Ok(())
            }
            command => {
                // The runner signals the command's group, never the waiter's: a SIGKILL at the
                // timeout leaves the waiter to clean up.
                // (A nested command makes its own session, which a group made here would stop.)
                if nested.is_none() {
                    libc::setpgid(command, command);
                }
                libc::write(leftovers, (&raw const command).cast(), 4);
                close_all_but(leftovers, done, &[]);
                let ignored = [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT, libc::SIGTERM];
                handle(ignored.iter(), libc::SIG_IGN);
                let status = wait_for(command);
                if has_children() {
                    libc::write(leftovers, c"1".as_ptr().cast(), 1);
                    kill_descendants();
                }
                report(done, status);
                exit_as(status)
            }
        }
    }
}

/// Set `action` for `signals`, then unblock every signal.
unsafe fn handle<'a>(signals: impl Iterator<Item = &'a libc::c_int>, action: libc::sighandler_t) {
    // SAFETY: sigaction and sigprocmask on this stack's values.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = action;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        for sig in signals {
            libc::sigaction(*sig, &sa, std::ptr::null_mut());
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    }
}

/// Reap children until `pid` ends: its wait status.
unsafe fn wait_for(pid: libc::pid_t) -> libc::c_int {
    loop {
        let mut status = 0;
        // SAFETY: waitpid on this stack's value.
        let r = unsafe { libc::waitpid(-1, &mut status, 0) };
        if r == pid {
            return status;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return libc::W_EXITCODE(1, 0);
        }
    }
}

/// Whether this process has a child (/proc lists it).
unsafe fn has_children() -> bool {
    let mut byte = 0u8;
    // SAFETY: open, read and close on this stack's values.
    unsafe {
        let fd = libc::open(
            c"/proc/thread-self/children".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return false;
        }
        let n = libc::read(fd, (&raw mut byte).cast(), 1);
        libc::close(fd);
        n == 1
    }
}

/// `handler` for SIGRTMAX, then SIGRTMAX as this process's parent-death signal: caught, not a
/// SIGKILL, so that the handler ends what this process started first (and set before it is
/// asked for: a namespace's pid 1 ignores a signal it does not handle). The caller checks that
/// the parent had not died already.
///
/// # Safety
/// Between fork and exec: raw syscalls on this stack's values.
unsafe fn on_parent_death(handler: extern "C" fn(libc::c_int)) -> std::io::Result<()> {
    // SAFETY: the caller's contract.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as libc::sighandler_t;
        libc::sigfillset(&mut sa.sa_mask);
        check(libc::sigaction(libc::SIGRTMAX(), &sa, std::ptr::null_mut()))?;
        check(libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGRTMAX(),
            0,
            0,
            0,
        ))
    }
}

/// A nested command's waiter, its spawner gone: every descendant killed and reaped, then it
/// exits.
extern "C" fn spawner_died(_: libc::c_int) {
    // SAFETY: kill_descendants makes raw, async-signal-safe calls only; then _exit.
    unsafe {
        kill_descendants();
        libc::_exit(1)
    }
}

/// SIGKILL every child (this process is a subreaper: every descendant left becomes one as its
/// parent dies) and reap it, until none is left. Where /proc does not list them, they are left.
unsafe fn kill_descendants() {
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: open, read, kill and close on this stack's values.
        unsafe {
            let fd = libc::open(
                c"/proc/thread-self/children".as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            );
            if fd < 0 {
                return;
            }
            let mut pid: libc::pid_t = 0;
            loop {
                let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
                if n <= 0 {
                    break;
                }
                for &b in &buf[..n as usize] {
                    if b.is_ascii_digit() {
                        pid = pid * 10 + libc::pid_t::from(b - b'0');
                    } else if pid != 0 {
                        libc::kill(pid, libc::SIGKILL);
                        pid = 0;
                    }
                }
            }
            if pid != 0 {
                libc::kill(pid, libc::SIGKILL);
            }
            libc::close(fd);
            if libc::waitpid(-1, std::ptr::null_mut(), 0) < 0
                && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)
            {
                return; // ECHILD: none left
            }
        }
    }
}

/// End this process as wait status `status` says the command ended.
unsafe fn exit_as(status: libc::c_int) -> ! {
    // SAFETY: plain syscalls; the process ends here.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            libc::signal(sig, libc::SIG_DFL);
            let none = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &none);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig)
        }
        libc::_exit(if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else {
            1
        })
    }
}

/// How many descriptors [`close_all_but`] keeps besides the first two (no allocation after a
/// fork).
const MOST_KEPT: usize = 31;

/// Close every descriptor above 2 but `first`, `second` and those in `keep` (`-1`: none; at most
/// [`MOST_KEPT`], the rest closed: a command run from a directory 30 levels deep keeps its
/// deepest directories' stand-ins locked by hookd alone), std's exec-error pipe among them:
/// only the process that execs may hold it.
unsafe fn close_all_but(first: RawFd, second: RawFd, keep: &[RawFd]) {
    let mut kept = [-1; MOST_KEPT + 2];
    kept[0] = first;
    kept[1] = second;
    for (slot, fd) in kept[2..].iter_mut().zip(keep) {
        *slot = *fd;
    }
    kept.sort_unstable();
    let mut from: u32 = 3;
    for keep in kept {
        if keep < 3 || (keep as u32) < from {
            continue;
        }
        // SAFETY: close_range on descriptor numbers.
        unsafe { close_range(from, keep as u32 - 1) };
        from = keep as u32 + 1;
    }
    // SAFETY: as above.
    unsafe { close_range(from, u32::MAX) };
}

/// Close descriptors `first..=last`.
unsafe fn close_range(first: u32, last: u32) {
    if first > last {
        return;
    }
    // SAFETY: close_range and close on descriptor numbers.
    unsafe {
        if libc::syscall(libc::SYS_close_range, first, last, 0u32) != 0 {
            // Kernels before 5.9.
            for fd in first..=last.min(65_535) {
                libc::close(fd as RawFd);
            }
        }
    }
}

/// Whatever descriptor the caller of hookd leaked to it (one opened without `O_CLOEXEC`, a
/// daemon's socket, a token file) must not reach the command: every descriptor above 2 is
/// marked close-on-exec. Marked, not closed, so std's own exec-error pipe keeps working.
pub(super) fn close_inherited_descriptors() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: plain syscalls on descriptor numbers; no memory is touched.
    let done =
        unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) } == 0;
    if !done {
        // Kernels before 5.11: mark them one by one (numbers that are not open fail with EBADF).
        for fd in 3..65_536 {
            // SAFETY: F_SETFD on a number that may not be open just fails with EBADF.
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        }
    }
}

/// A syscall's 0-or-error result as `io::Result`.
pub(super) fn check(r: libc::c_int) -> std::io::Result<()> {
    if r >= 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
