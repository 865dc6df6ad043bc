//! Pid 1's helpers: processes sharing its memory (each on a stack of its own), started as the
//! command's calls need them and kept, each taking one notification after another from the
//! listener, making the call (`answer.rs`) and answering it. A helper started and kept saves
//! a process's start and end at every call (a `/proc` directory made and dropped among them:
//! 150 to 250 µs a connection on this machine, against tens). One waits for the next call;
//! when a helper takes one and none is left waiting, it asks pid 1 (an eventfd) for another,
//! up to [`HELPERS`]: a connection that never completes holds its helper, not the others.
//! Helpers are started and reaped by pid 1 only, and killed when the command ends.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};

use nix::libc;

use super::{answer, Broker};

/// How many helpers at most (calls made at once); the next call waits until one is free.
const HELPERS: usize = 32;
/// Each helper's memory: its stack, with its [`Helper`] at the bottom.
const HELPER_MEMORY: usize = 128 * 1024;

/// A helper's state, at the bottom of its memory.
#[repr(C)]
struct Helper {
    /// The call it is answering (taken from the listener).
    notif: libc::seccomp_notif,
    /// Whether it has taken a call it has not answered yet (else it waits for one).
    busy: AtomicBool,
    listener: c_int,
    /// Written when it took a call and no other helper was left waiting.
    more: c_int,
    broker: *const Broker,
}

/// The helpers' pids, in their slots (0: none).
static PIDS: [AtomicI32; HELPERS] = [const { AtomicI32::new(0) }; HELPERS];
/// The helpers' memory, in their slots (mapped the first time a slot is used, kept).
static MEMORY: [AtomicPtr<Helper>; HELPERS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; HELPERS];

/// Whether a helper is waiting for a call.
fn one_waits() -> bool {
    (0..HELPERS).any(|i| {
        let helper = MEMORY[i].load(Ordering::Acquire);
        PIDS[i].load(Ordering::Acquire) > 0
            // SAFETY: a slot's memory, once mapped, is never unmapped.
            && !helper.is_null() && unsafe { !(*helper).busy.load(Ordering::Acquire) }
    })
}

extern "C" fn child_ended(_: c_int) {}

/// Pid 1 until `command` ends (its wait status): orphans reaped, and every call the command's
/// processes make through `listener` answered by its helpers, started on demand. The helpers
/// still there then are killed.
///
/// # Safety
/// In pid 1 after the command started, single-threaded; raw syscalls only.
pub(crate) unsafe fn serve(command: libc::pid_t, listener: c_int, broker: &Broker) -> c_int {
    // SAFETY: the caller's contract; raw syscalls on this stack's values.
    unsafe {
        let more = libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK);
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = child_ended as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGCHLD, &sa, std::ptr::null_mut());
        let mut chld: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut chld);
        libc::sigaddset(&mut chld, libc::SIGCHLD);
        let mut waiting: libc::sigset_t = std::mem::zeroed();
        libc::sigprocmask(libc::SIG_BLOCK, &chld, &mut waiting);
        libc::sigdelset(&mut waiting, libc::SIGCHLD);
        // Whether the listener stirred before any helper was started.
        let mut called = false;
        // Whether no process is left that can call (the listener hung up): the command's end
        // is near, and no helper is started for it (one was, at every command's end, 0.1 ms).
        let mut hung_up = false;
        let status = loop {
            if let Some(status) = reap(command, listener) {
                break status;
            }
            let mut asked = 0u64;
            libc::read(more, (&raw mut asked).cast(), 8);
            let started = PIDS.iter().any(|p| p.load(Ordering::Acquire) > 0);
            if (started || called) && !one_waits() {
                if !start_helper(listener, more, broker) && !started && called {
                    // No helper, and none could be started (the command used up the
                    // processes or memory it may have): the call is refused rather than left
                    // waiting, pid 1 polling it for ever.
                    refuse_one(listener);
                }
                called = false;
            }
            let started = PIDS.iter().any(|p| p.load(Ordering::Acquire) > 0);
            // Before the first helper, the listener itself; after, the helpers' requests.
            let mut fds = [
                libc::pollfd {
                    fd: if started || hung_up { -1 } else { listener },
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: more,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let r = libc::ppoll(fds.as_mut_ptr(), 2, std::ptr::null(), &waiting);
            if r <= 0 {
                continue; // a child ended (EINTR), or a signal passed on
            }
            // A call, or anything else the listener says: a helper starts and waits on it.
            // (POLLERR is not the end: the kernel says it when a signal interrupted its poll,
            // and pid 1 taking it for the end stopped answering: attack round 14's F2. The
            // command's end is its exit, reaped above.) Hung up without a call: no process
            // that can call is left (the kernel's count of the filter's users is 0, and only
            // they start more), so the listener is not polled again, nor a helper started.
            let (stirred, hup) = (fds[0].revents, libc::POLLHUP);
            hung_up |= stirred & hup != 0 && stirred & libc::POLLIN == 0;
            called |= stirred != 0 && !hung_up;
        };
        for slot in &PIDS {
            let pid = slot.load(Ordering::Acquire);
            if pid > 0 {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), libc::__WALL);
            }
        }
        libc::close(listener);
        libc::close(more);
        status
    }
}

/// Reap every child that ended: the command's wait status once it has. A helper killed (a
/// command may signal its sandbox's helpers) leaves the call it had taken EINTR, not waiting
/// for ever: the call the kernel handed it, by the id the kernel wrote into its memory (which
/// is pid 1's), whether or not it had marked itself busy yet (a SIGKILL is taken on the
/// ioctl's way back, after the kernel handed the call over: attack round 15's F6, every caller
/// stuck). An id already answered is refused by the kernel (ENOENT); ids are never reused.
unsafe fn reap(command: libc::pid_t, listener: c_int) -> Option<c_int> {
    loop {
        let mut status = 0;
        // SAFETY: waitpid on this stack's value.
        let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::__WALL) };
        if r == command {
            return Some(status);
        }
        if r <= 0 {
            return None;
        }
        let Some(i) = PIDS.iter().position(|p| p.load(Ordering::Acquire) == r) else {
            continue; // an orphan of the namespace
        };
        PIDS[i].store(0, Ordering::Release);
        // SAFETY: the helper is gone; its memory, mapped, is pid 1's again.
        let helper = unsafe { &*MEMORY[i].load(Ordering::Acquire) };
        // Zeroed before each wait for a call: not 0, a call was taken.
        // SAFETY: a read of memory no other process writes now.
        let id = unsafe { std::ptr::read_volatile(&raw const helper.notif.id) };
        if id != 0 {
            // SAFETY: an ioctl; ENOENT where it had answered after all.
            unsafe { respond(listener, id, Err(libc::EINTR)) };
        }
    }
}

/// Take the call waiting in `listener` and answer it EAGAIN (none taken: nothing done).
unsafe fn refuse_one(listener: c_int) {
    // SAFETY: an ioctl on this stack's value, zeroed as the kernel asks; it does not block
    // (the listener said a call waits, or it says ENOENT).
    unsafe {
        let mut notif: libc::seccomp_notif = std::mem::zeroed();
        if libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut notif) == 0 {
            respond(listener, notif.id, Err(libc::EAGAIN));
        }
    }
}

/// Start one more helper in a free slot (its memory mapped the first time), if there is one:
/// whether one was started.
unsafe fn start_helper(listener: c_int, more: c_int, broker: &Broker) -> bool {
    let Some(i) = PIDS.iter().position(|p| p.load(Ordering::Acquire) == 0) else {
        return false; // all busy: the call waits in the listener until one is free
    };
    // SAFETY: raw syscalls; slot `i`'s memory is the new helper's alone.
    unsafe {
        let mut helper = MEMORY[i].load(Ordering::Acquire);
        if helper.is_null() {
            let m = libc::mmap(
                std::ptr::null_mut(),
                HELPER_MEMORY,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            );
            if m == libc::MAP_FAILED {
                return false;
            }
            helper = m.cast();
            MEMORY[i].store(helper, Ordering::Release);
        }
        helper.write(Helper {
            notif: std::mem::zeroed(),
            busy: AtomicBool::new(false),
            listener,
            more,
            broker,
        });
        let top = helper.cast::<u8>().add(HELPER_MEMORY).cast::<c_void>();
        let pid = libc::clone(
            serve_calls,
            top,
            libc::CLONE_VM | libc::SIGCHLD,
            helper.cast(),
        );
        if pid > 0 {
            PIDS[i].store(pid, Ordering::Release);
        }
        pid > 0
    }
}

/// Answer notification `id`: the call's return value, or its errno.
unsafe fn respond(listener: c_int, id: u64, result: Result<i64, c_int>) {
    let mut resp = libc::seccomp_notif_resp {
        id,
        val: 0,
        error: 0,
        flags: 0,
    };
    match result {
        Ok(v) => resp.val = v,
        Err(e) => resp.error = -e,
    }
    // SAFETY: an ioctl on this stack's value.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_SEND, &mut resp) };
}

/// A helper: takes a call, makes it, answers; again, until pid 1 kills it. It shares pid 1's
/// memory (its own stack) but not its descriptors, directory or signal mask.
extern "C" fn serve_calls(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is this helper's `Helper`, in memory pid 1 keeps for it; raw syscalls.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_SETMASK, &all, std::ptr::null_mut());
        let helper = arg.cast::<Helper>();
        let (listener, more) = ((*helper).listener, (*helper).more);
        loop {
            let notif = &raw mut (*helper).notif;
            std::ptr::write_bytes(notif, 0, 1);
            if libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_RECV, notif) != 0 {
                // The caller went away before it was taken: wait again (not a spin).
                let pause = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 1_000_000,
                };
                libc::nanosleep(&pause, std::ptr::null_mut());
                continue;
            }
            (*helper).busy.store(true, Ordering::Release);
            if !one_waits() {
                libc::write(more, (&1u64 as *const u64).cast(), 8);
            }
            let n = &*notif;
            let result = answer::answer(n, listener, &*(*helper).broker);
            respond(listener, n.id, result);
            (*helper).busy.store(false, Ordering::Release);
        }
    }
}
