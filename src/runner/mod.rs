//! Running one admitted command: its own process group, context JSON on stdin, output captured
//! up to a cap, a timeout that kills the whole group, and every outcome reported as a value.

mod capture;
mod env;
mod escapees;
mod pipes;

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

pub use crate::kinds::Keep;
use crate::program::resolve;
pub use crate::program::{find_program, NotFound};
pub use capture::Captured;
#[cfg(feature = "adapters")]
pub(crate) use env::steers_hookd;
pub use env::{runs_code, EnvCause, Environment, ProjectVar, RemovedVar};
pub use escapees::reap_here;
use pipes::Wake;

/// How long descendants may keep the output pipes open after the leader exited.
pub const LEAK_DRAIN: Duration = Duration::from_millis(250);

/// What to run and under which bounds.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// Program and arguments exactly as the gate admitted them.
    pub argv: Vec<String>,
    /// Working directory (the project).
    pub cwd: PathBuf,
    /// Written to the child's stdin.
    pub stdin: Vec<u8>,
    /// Extra variables (HOOKD_*), added after sanitizing.
    pub env: Vec<(String, String)>,
    /// What the environment is made from besides the process's own: what the user keeps,
    /// what a repository set (removed unless kept). Default: nothing kept, no project.
    pub environment: Arc<Environment>,
    /// Wall-clock bound for the process to exit.
    pub timeout: Duration,
    /// SIGTERM-to-SIGKILL grace on timeout.
    pub grace: Duration,
    /// Bytes kept per stream.
    pub max_output: usize,
    /// The sandbox the command enters between fork and exec (`None`: unconfined).
    pub confinement: Option<Arc<crate::sandbox::Confinement>>,
}

/// How a run ended. Every variant is an outcome, not an error.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunReport {
    /// The exit code, when the process exited by itself.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// True when the timeout expired and the group was killed.
    pub timed_out: bool,
    /// True when descendants outlived the leader and had to be killed.
    pub leaked: bool,
    /// True when, even after that, a process outside the group held the output pipes: hookd
    /// closed its ends, so what that process wrote later is lost and the output may be partial.
    pub held_open: bool,
    /// Start to the end of the last output.
    pub duration: Duration,
    /// Captured stdout.
    pub stdout: Captured,
    /// Captured stderr.
    pub stderr: Captured,
    /// Why it did not run or did not finish normally, for people.
    pub error: Option<String>,
    /// Variables removed from its environment, and why.
    pub env_removed: Vec<RemovedVar>,
    /// When it ran confined: what it could write and reach ([`crate::sandbox::Confinement::summary`]).
    pub confined: Option<String>,
    /// Under a host list: the connections it made through hookd's proxy.
    pub network: Vec<crate::sandbox::NetworkRequest>,
    /// When it ran confined: what it left that git would have run later, moved aside
    /// ([`crate::sandbox::Confinement::settle`]).
    pub moved: Vec<String>,
}

impl RunReport {
    fn failed_to_start(error: String, started: Instant) -> Self {
        RunReport {
            error: Some(error),
            duration: started.elapsed(),
            ..Default::default()
        }
    }

    /// `exit_code`, or -1 when the process did not exit normally.
    pub fn exit_code_or_minus_one(&self) -> i32 {
        self.exit_code.unwrap_or(-1)
    }

    /// True for exit code 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }
}

/// Process groups of commands running now in this process, so `reap_orphans` leaves them to
/// their runners. (Children are process-wide; stopping them is not: see [`Cancel`].)
static RUNNING: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Stops the runs made with it: `cancel` kills their process groups at once, and a run started
/// afterwards does not start (each reports `error: "interrupted"`). One per engine (a
/// `hookd dispatch` process, a daemon across reloads), never process-wide: cancelling one
/// engine's runs leaves another's alone. Clones share the token.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<CancelState>);

#[derive(Debug, Default)]
struct CancelState {
    cancelled: AtomicBool,
    groups: Mutex<Vec<i32>>,
}

impl Cancel {
    /// A token not yet cancelled.
    pub fn new() -> Self {
        Self::default()
    }

    /// Kill every running group of this token and refuse to start new runs.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        let groups = self.0.groups.lock().unwrap_or_else(|p| p.into_inner());
        for pgid in groups.iter() {
            let _ = killpg(Pid::from_raw(*pgid), Signal::SIGKILL);
        }
    }

    /// True once `cancel` was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    fn register(&self, pgid: i32) {
        let mut groups = self.0.groups.lock().unwrap_or_else(|p| p.into_inner());
        groups.push(pgid);
        // A cancellation that came between spawn and registration still reaches this group.
        if self.is_cancelled() {
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
    }

    fn unregister(&self, pgid: i32) {
        let mut groups = self.0.groups.lock().unwrap_or_else(|p| p.into_inner());
        groups.retain(|p| *p != pgid);
    }
}

/// What runs a hook's command: processes by default; a test or an embedder may put its own in
/// (`EngineBuilder::runner`), so the engine's decisions can be tested without processes.
pub trait Runner: Send + Sync {
    /// Run `spec` to completion within its bounds; `cancel` may stop it.
    fn run(&self, spec: &RunSpec, cancel: &Cancel) -> RunReport;
}

/// Runs commands as processes ([`run_with`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Processes;

impl Runner for Processes {
    fn run(&self, spec: &RunSpec, cancel: &Cancel) -> RunReport {
        run_with(spec, cancel)
    }
}

/// Registers a running command (for the orphan reaper and its cancel token) for as long as it
/// lives: its waiter's pid and the process group to signal.
struct Registered {
    pid: i32,
    pgid: i32,
    cancel: Cancel,
    /// Started without a waiter (`escapees`): this process kills what it leaves.
    unwaited: bool,
}

impl Registered {
    /// Spawn `cmd` and register it in one step under the lock, so that `reap_orphans` never
    /// sees an unregistered waiter of ours and reaps it in its runner's place. The group to
    /// signal is the one the waiter names on `report` (the command's own group, unconfined: it
    /// leads it, so it cannot leave it), else the waiter's.
    ///
    /// Started as every command is (`sandbox::prepare_to_spawn_now`: inherited descriptors closed,
    /// the sandbox entered, a waiter that kills what it leaves), or, unconfined in the hookd
    /// binary while no other command runs, without the waiter (see `escapees`). `arg0` is the
    /// `argv[0]` `cmd` was given (confined, pid 1 execs it from these).
    fn spawn(
        cmd: &mut Command,
        arg0: &str,
        cancel: &Cancel,
        confinement: Option<Arc<crate::sandbox::Confinement>>,
        (report, report_w): (Option<&OwnedFd>, Option<&OwnedFd>),
    ) -> std::io::Result<(std::process::Child, Registered)> {
        let arg0 = Some(std::ffi::OsStr::new(arg0));
        let mut running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
        let unwaited = escapees::unwaited(confinement.is_some(), &running);
        if unwaited {
            crate::sandbox::prepare_unwaited(cmd);
        } else {
            let raw = report_w.map(std::os::fd::AsRawFd::as_raw_fd);
            // Spawned right below, unchanged (pid 1 execs it from what it is now).
            crate::sandbox::prepare_to_spawn_now(cmd, confinement, None, raw, arg0);
        }
        let child = cmd.spawn()?;
        let pid = child.id() as i32;
        let mut named = [0u8; 4];
        let pgid = match report.map(|r| nix::unistd::read(r, &mut named)) {
            Some(Ok(4)) => i32::from_ne_bytes(named),
            _ => pid,
        };
        running.extend([pid, pgid]);
        drop(running);
        cancel.register(pgid);
        let cancel = cancel.clone();
        Ok((
            child,
            Registered {
                pid,
                pgid,
                cancel,
                unwaited,
            },
        ))
    }
}

/// Reap the exited processes this process adopted as a child subreaper: descendants of hooks
/// that left their group (`setsid`) and outlived their parent. Without this they stay zombies
/// under a long-running daemon. Runs' own leaders and group members are left to their runner.
///
/// Only for a process whose children are all hookd's (the daemon): it reaps any other exited
/// child too, which would steal the status from an embedder's own `Child::wait`.
pub fn reap_orphans() -> usize {
    use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
    let mut reaped = 0;
    loop {
        let running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
        // Peek at one exited child without reaping it.
        let peek = waitid(
            Id::All,
            WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT,
        );
        let pid = match peek.ok().and_then(|s| s.pid()) {
            Some(pid) => pid,
            None => return reaped, // no child, or none has exited
        };
        let group = nix::unistd::getpgid(Some(pid)).map(|g| g.as_raw()).ok();
        if running.contains(&pid.as_raw()) || group.is_some_and(|g| running.contains(&g)) {
            // A run's own process: its runner reaps it shortly; a later call tries again.
            return reaped;
        }
        match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(_) => return reaped,
            Ok(_) => reaped += 1,
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.cancel.unregister(self.pgid);
        let mut running = RUNNING.lock().unwrap_or_else(|p| p.into_inner());
        running.retain(|p| *p != self.pid && *p != self.pgid);
    }
}

fn signal_group(pgid: Pid, sig: Signal) -> bool {
    killpg(pgid, sig).is_ok()
}

/// Make this process the reaper of orphaned descendants, so that a killed group's members
/// become our children and can be waited for. Linux only; elsewhere groups are still killed.
fn become_subreaper() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(target_os = "linux")]
        match nix::sys::prctl::set_child_subreaper(true) {
            Ok(()) => escapees::SUBREAPER.store(true, Ordering::SeqCst),
            Err(e) => tracing::warn!("cannot become a child subreaper ({e}); killed descendants may outlive a dispatch briefly"),
        }
    });
}

/// Wait until no process of the (already SIGKILLed) group is left, reaping those that were
/// orphaned to us. Bounded: a member that left our reach is logged, not waited for forever.
fn reap_group(pgid: Pid) {
    use nix::sys::wait::waitpid;
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        // Until ECHILD: none of our children is left in the group.
        while let Ok(_) | Err(nix::errno::Errno::EINTR) =
            waitpid(Pid::from_raw(-pgid.as_raw()), None)
        {}
        // Signal 0 probes: ESRCH means the group is empty.
        if killpg(pgid, None).is_err() {
            return;
        }
        if Instant::now() >= until {
            tracing::warn!("process group {pgid} still has members that hookd cannot reap");
            return;
        }
        let _ = killpg(pgid, Signal::SIGKILL);
        thread::sleep(Duration::from_millis(1));
    }
}

/// Run `spec` to completion within its bounds, not cancellable. See [`run_with`].
pub fn run(spec: &RunSpec) -> RunReport {
    run_with(spec, &Cancel::default())
}

/// Run `spec` to completion within its bounds, stopped early by `cancel`. Never returns while a
/// process the command started lives: its waiter kills what it left, detached or not (see
/// `sandbox::prepare_to_spawn_now` and docs/security.md), or, without one, this process does
/// (`escapees`).
pub fn run_with(spec: &RunSpec, cancel: &Cancel) -> RunReport {
    let started = Instant::now();
    // The waiter names the group to signal here, then writes a byte when the command left
    // processes behind (it kills them).
    use nix::fcntl::OFlag;
    let (leftovers, leftovers_w) = match nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK) {
        Ok((r, w)) => (Some(r), Some(w)),
        Err(_) => (None, None),
    };
    let (mut cmd, env_removed) = match command(spec, cancel) {
        Ok(c) => c,
        Err((why, env_removed)) => {
            return RunReport {
                env_removed,
                ..RunReport::failed_to_start(why, started)
            }
        }
    };
    become_subreaper();
    let confinement = spec.confinement.clone();
    let report = (leftovers.as_ref(), leftovers_w.as_ref());
    // `command` gave it the name it was called by as `argv[0]`.
    let arg0 = spec.argv.first().map_or("", String::as_str);
    let spawned = Registered::spawn(&mut cmd, arg0, cancel, confinement, report);
    let (mut child, registered) = match spawned {
        Ok(c) => c,
        Err(e) => {
            return RunReport {
                env_removed,
                ..RunReport::failed_to_start(spawn_failure(&spec.argv[0], &e), started)
            };
        }
    };
    drop(leftovers_w);
    let pid = Pid::from_raw(registered.pid);
    let pgid = Pid::from_raw(registered.pgid);
    let mut pipes = pipes::Pipes::new(
        child.stdin.take(),
        spec.stdin.clone(),
        child.stdout.take(),
        child.stderr.take(),
        spec.max_output,
    );
    let mut report = RunReport {
        env_removed,
        confined: spec.confinement.as_ref().map(|c| c.summary().to_string()),
        ..RunReport::default()
    };
    bound(&mut pipes, (pid, pgid), spec, started, &mut report);
    // Without a waiter, what the leader left is this process's to kill, as the waiter would.
    if registered.unwaited && escapees::kill_left(registered.pid) {
        report.leaked = true;
    }
    drain(&mut pipes, pgid, &mut report);
    // Descendants that closed their output but still run are killed too. (The unreaped leader
    // is still a group member, so success here says nothing about descendants.)
    signal_group(pgid, Signal::SIGKILL);
    let status = child.wait();
    reap_group(pgid);
    if leftovers.is_some_and(|r| nix::unistd::read(&r, &mut [0u8]) == Ok(1)) {
        report.leaked = true;
    }
    report.duration = started.elapsed();
    (report.stdout, report.stderr) = pipes.finish();
    if let Some(c) = &spec.confinement {
        report.network = c.network_requests_settled();
        report.moved = c.settle();
    }
    match status {
        Ok(s) => {
            report.exit_code = s.code();
            report.signal = s.signal();
        }
        Err(e) => report.error = Some(format!("could not collect the exit status: {e}")),
    }
    let note = final_note(&mut report, spec, cancel);
    // An error found earlier (the exit could not be watched or collected) says more.
    if report.error.is_none() {
        report.error = note;
    }
    report
}

/// The command to spawn: the program resolved on the hook's PATH, its sanitized environment,
/// its own process group, piped stdio; started as every command is (`sandbox::prepare_to_spawn_now`:
/// inherited descriptors closed, the sandbox entered, nothing it starts outliving it). Or why it cannot start, with what was removed from its environment.
fn command(spec: &RunSpec, cancel: &Cancel) -> Result<(Command, Removed), (String, Removed)> {
    let Some(program) = spec.argv.first() else {
        return Err(("empty command".into(), Vec::new()));
    };
    if cancel.is_cancelled() {
        return Err(("interrupted".into(), Vec::new()));
    }
    if !spec.cwd.is_dir() {
        let why = format!("working directory {} does not exist", spec.cwd.display());
        return Err((why, Vec::new()));
    }
    let (mut vars, env_removed) = spec.environment.for_hook();
    if let Some(c) = &spec.confinement {
        // Nothing that names a socket or a session outside; its own temporary directory.
        vars.retain(|(k, v)| c.keeps_var(k, v) && k != "TMPDIR");
        vars.push(("TMPDIR".into(), c.temp_dir().into()));
        // Under a host list: the proxy's variables, in place of any of the same name.
        let added = c.added_vars();
        vars.retain(|(k, _)| !added.iter().any(|(n, _)| k == n));
        vars.extend(added.into_iter().map(|(k, v)| (k.into(), v.into())));
    }
    let path = vars.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v);
    let resolved = match resolve(program, &spec.cwd, path) {
        Ok(p) => p,
        Err(e) => return Err((e.to_string(), env_removed)),
    };
    let mut cmd = Command::new(&resolved);
    cmd.arg0(program)
        .args(&spec.argv[1..])
        .current_dir(&spec.cwd)
        .env_clear()
        .envs(vars)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Ok((cmd, env_removed))
}

/// What the hook's environment lost (see [`RunReport::env_removed`]).
type Removed = Vec<RemovedVar>;

/// Why `program` could not start, in a sentence.
fn spawn_failure(program: &str, e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::PermissionDenied => format!("permission denied executing `{program}`"),
        std::io::ErrorKind::NotFound => {
            format!("`{program}` could not be executed (missing interpreter?)")
        }
        _ => format!("`{program}` could not start: {e}"),
    }
}

/// Serve the pipes until the waiter `pid` exits or the timeout: then SIGTERM (and SIGCONT) to
/// the group `pgid`, the grace period, SIGKILL.
fn bound(
    pipes: &mut pipes::Pipes,
    (pid, pgid): (Pid, Pid),
    spec: &RunSpec,
    started: Instant,
    report: &mut RunReport,
) {
    match pipes::exit_watch(pid) {
        Ok(exit) => {
            let exit = Some(exit.as_fd());
            if pipes.serve(exit, Some(started + spec.timeout)) != Wake::Exited {
                report.timed_out = true;
                signal_group(pgid, Signal::SIGTERM);
                signal_group(pgid, Signal::SIGCONT);
                if pipes.serve(exit, Some(Instant::now() + spec.grace)) != Wake::Exited {
                    signal_group(pgid, Signal::SIGKILL);
                    pipes.serve(exit, None);
                }
            }
        }
        Err(e) => {
            // Without a way to learn of its exit the command cannot be bounded: stop it now.
            signal_group(pgid, Signal::SIGKILL);
            report.error = Some(format!("cannot watch the command's exit: {e}"));
        }
    }
}

/// The leader is gone. Give descendants holding the pipes a short drain, then kill the group;
/// whoever still holds them after that left the group (setsid) and is out of reach: hookd
/// closes its ends and keeps what was written.
fn drain(pipes: &mut pipes::Pipes, pgid: Pid, report: &mut RunReport) {
    pipes.close_stdin();
    if pipes.serve(None, Some(Instant::now() + LEAK_DRAIN)) == Wake::Deadline {
        report.leaked = true;
        signal_group(pgid, Signal::SIGKILL);
        if pipes.serve(None, Some(Instant::now() + LEAK_DRAIN)) == Wake::Deadline {
            report.held_open = true;
        }
    }
}

/// What to say of how the run ended (a timeout clears the exit code).
fn final_note(report: &mut RunReport, spec: &RunSpec, cancel: &Cancel) -> Option<String> {
    if cancel.is_cancelled() && (report.signal.is_some() || report.timed_out) {
        Some("interrupted".to_string())
    } else if report.timed_out {
        report.exit_code = None;
        Some(format!(
            "timed out after {}s; the process group was killed",
            spec.timeout.as_secs_f64()
        ))
    } else if let Some(sig) = report.signal {
        let name = Signal::try_from(sig)
            .map(|s| s.as_str())
            .unwrap_or("unknown signal");
        Some(format!("killed by {name}"))
    } else if let Some(code) = report.exit_code.filter(|c| *c != 0) {
        Some(format!("exit status {code}"))
    } else if report.held_open {
        Some(HELD_OPEN.to_string())
    } else {
        None
    }
}

/// The note for a run whose output a process outside the group kept open.
pub const HELD_OPEN: &str = "a process that left the command's process group (setsid) kept its \
     output open; hookd used what was written until then";
