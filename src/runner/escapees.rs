//! Unconfined commands without a waiter, in a process whose children are all hookd's (the
//! hookd binary, its daemon). The process is a child subreaper, so whatever a command leaves
//! behind (`setsid` escapees, background children, theirs) becomes its child as their parents
//! end. When the command's leader exits, every child no other running command owns is killed
//! and reaped, until none is left: what the per-command waiter does (`sandbox::prepare_to_spawn_now`),
//! for one fork per command instead of two. Only while no other command of this process runs
//! (that one's leftovers could not be told apart): a command started meanwhile, a confined
//! one, or one in an embedder's process (whose other children are its own) has its waiter.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::sys::wait::waitpid;
use nix::unistd::Pid;

/// Set by [`reap_here`]: every child of this process is hookd's.
static OWNS_CHILDREN: AtomicBool = AtomicBool::new(false);

/// Set once this process is a child subreaper (`super::become_subreaper`).
pub(super) static SUBREAPER: AtomicBool = AtomicBool::new(false);

/// Declare that every child of this process is hookd's (the hookd binary calls it first
/// thing): an unconfined command then starts without a waiter while no other command runs
/// here, and this process kills and reaps what it left when its leader exits. Never call it
/// in a process that starts children of its own: they would be killed as a command's
/// leftovers.
pub fn reap_here() {
    OWNS_CHILDREN.store(true, Ordering::SeqCst);
}

/// Whether a command may start without a waiter: unconfined, in a process that owns its
/// children and is their subreaper, with no other command running (`running` empty).
pub(super) fn unwaited(confined: bool, running: &[i32]) -> bool {
    !confined
        && running.is_empty()
        && OWNS_CHILDREN.load(Ordering::SeqCst)
        && SUBREAPER.load(Ordering::SeqCst)
}

/// The leader `leader` of an unwaited command exited: kill and reap every child of this
/// process that no other running command owns (its own pid left for the runner to reap),
/// until none is left. True when there was one. Bounded like `super::reap_group`.
pub(super) fn kill_left(leader: i32) -> bool {
    let until = Instant::now() + Duration::from_secs(2);
    let mut any = false;
    loop {
        // Under the lock, the killing and reaping too: a command spawning now is registered
        // before it is seen, and none can start (and take a pid just reaped elsewhere) while
        // these are killed and waited for.
        let running = super::RUNNING.lock().unwrap_or_else(|p| p.into_inner());
        let others: Vec<i32> = running.iter().copied().filter(|p| *p != leader).collect();
        let owned = |p: i32| {
            let group = nix::unistd::getpgid(Some(Pid::from_raw(p))).map(|g| g.as_raw());
            others.contains(&p) || group.is_ok_and(|g| others.contains(&g))
        };
        let strays: Vec<i32> = children()
            .into_iter()
            .filter(|p| *p != leader && !owned(*p))
            .collect();
        if strays.is_empty() {
            return any;
        }
        any = true;
        for p in &strays {
            let _ = kill(Pid::from_raw(*p), Signal::SIGKILL);
        }
        for p in &strays {
            // Another thread's `reap_orphans` may have reaped it first (ECHILD): gone.
            while let Err(nix::errno::Errno::EINTR) = waitpid(Pid::from_raw(*p), None) {}
        }
        drop(running);
        if Instant::now() >= until {
            tracing::warn!("a command's leftovers kept coming back; some may outlive it");
            return any;
        }
    }
}

/// This process's children, as /proc lists them for each of its threads.
fn children() -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<i32>>()
        })
        .collect()
}
