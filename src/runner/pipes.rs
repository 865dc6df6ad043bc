//! A child's pipes served on the calling thread: stdin written, stdout and stderr read, and the
//! leader's exit watched, all in one `poll` loop. A descendant that holds a pipe open therefore
//! costs hookd no thread, and once the run is over no descriptor either: hookd closes its ends.

use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};
use std::process::{ChildStderr, ChildStdin, ChildStdout};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::wait::{waitid, Id, WaitPidFlag};
use nix::unistd::Pid;

use super::capture::{Captured, Sink};

/// Why `Pipes::serve` returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wake {
    /// The leader exited (it is not reaped: its pid, the group id, stays reserved).
    Exited,
    /// The deadline passed first.
    Deadline,
    /// Nothing is left to wait for: no exit watch and both outputs closed.
    Idle,
}

/// The parent's ends of a child's three pipes, non-blocking.
pub(crate) struct Pipes {
    stdin: Option<OwnedFd>,
    input: Vec<u8>,
    written: usize,
    outputs: [Option<OwnedFd>; 2],
    sinks: [Sink; 2],
}

/// Bytes read per stream per wake-up; a fast writer cannot keep the loop from its deadlines.
const CHUNK: usize = 64 * 1024;

fn nonblocking(fd: OwnedFd) -> Option<OwnedFd> {
    let flags = OFlag::from_bits_truncate(fcntl(&fd, FcntlArg::F_GETFL).ok()?);
    fcntl(&fd, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).ok()?;
    Some(fd)
}

impl Pipes {
    pub(crate) fn new(
        stdin: Option<ChildStdin>,
        input: Vec<u8>,
        stdout: Option<ChildStdout>,
        stderr: Option<ChildStderr>,
        cap: usize,
    ) -> Self {
        // A pipe end that cannot be made non-blocking is closed rather than risk a blocked loop.
        Pipes {
            stdin: stdin.and_then(|s| nonblocking(s.into())),
            input,
            written: 0,
            outputs: [
                stdout.and_then(|s| nonblocking(s.into())),
                stderr.and_then(|s| nonblocking(s.into())),
            ],
            sinks: [Sink::new(cap), Sink::new(cap)],
        }
    }

    /// True while stdout or stderr has not reached its end.
    pub(crate) fn outputs_open(&self) -> bool {
        self.outputs.iter().any(Option::is_some)
    }

    /// Stop feeding stdin: the leader is gone, and a descendant gets EOF rather than hookd's time.
    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Move bytes until `exit` becomes readable, `until` passes (never, for `None`), or nothing
    /// is left to serve.
    pub(crate) fn serve(&mut self, exit: Option<BorrowedFd<'_>>, until: Option<Instant>) -> Wake {
        let mut buf = vec![0u8; CHUNK];
        loop {
            let timeout = match until {
                None => PollTimeout::NONE,
                Some(t) => {
                    let left = t.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Wake::Deadline;
                    }
                    // Round up: a 0 ms poll before the deadline would spin.
                    PollTimeout::try_from(left + Duration::from_micros(999))
                        .unwrap_or(PollTimeout::MAX)
                }
            };
            // Slots: 0 exit, 1 stdin, 2 stdout, 3 stderr.
            let mut slots: Vec<usize> = Vec::with_capacity(4);
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(4);
            if let Some(e) = exit {
                slots.push(0);
                fds.push(PollFd::new(e, PollFlags::POLLIN));
            }
            if let Some(fd) = &self.stdin {
                slots.push(1);
                fds.push(PollFd::new(fd.as_fd(), PollFlags::POLLOUT));
            }
            for (i, fd) in self.outputs.iter().enumerate() {
                if let Some(fd) = fd {
                    slots.push(2 + i);
                    fds.push(PollFd::new(fd.as_fd(), PollFlags::POLLIN));
                }
            }
            if exit.is_none() && !self.outputs_open() {
                return Wake::Idle;
            }
            match poll(&mut fds, timeout) {
                Ok(_) => {}
                Err(Errno::EINTR) => continue,
                Err(e) => {
                    // Not expected with valid descriptors; stop serving rather than spin.
                    tracing::warn!("poll on a hook's pipes failed: {e}");
                    return Wake::Deadline;
                }
            }
            let ready: Vec<usize> = slots
                .iter()
                .zip(&fds)
                .filter(|(_, fd)| fd.revents().is_some_and(|r| !r.is_empty()))
                .map(|(slot, _)| *slot)
                .collect();
            drop(fds);
            let mut exited = false;
            for slot in ready {
                match slot {
                    0 => exited = true,
                    1 => self.write_stdin(),
                    i => self.read_output(i - 2, &mut buf),
                }
            }
            if exited {
                return Wake::Exited;
            }
        }
    }

    fn write_stdin(&mut self) {
        let Some(fd) = &self.stdin else { return };
        match nix::unistd::write(fd, &self.input[self.written..]) {
            Ok(n) => {
                self.written += n;
                if self.written >= self.input.len() {
                    self.stdin = None; // all written: EOF for the child
                }
            }
            Err(Errno::EAGAIN | Errno::EINTR) => {}
            // EPIPE: the child does not read its stdin, which is its right.
            Err(_) => self.stdin = None,
        }
    }

    fn read_output(&mut self, i: usize, buf: &mut [u8]) {
        let Some(fd) = &self.outputs[i] else { return };
        match nix::unistd::read(fd, buf) {
            Ok(0) => self.outputs[i] = None,
            Ok(n) => self.sinks[i].push(&buf[..n]),
            Err(Errno::EAGAIN | Errno::EINTR) => {}
            Err(_) => self.outputs[i] = None,
        }
    }

    /// Close every end and hand over what was read: (stdout, stderr).
    pub(crate) fn finish(self) -> (Captured, Captured) {
        let [out, err] = self.sinks;
        (out.finish(), err.finish())
    }
}

/// A descriptor that becomes readable when `pid` exits, without reaping it: a pidfd where the
/// kernel has them (Linux 5.3), else a pipe whose writer, a thread waiting with `WNOWAIT`,
/// closes it.
pub(crate) fn exit_watch(pid: Pid) -> std::io::Result<OwnedFd> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid.as_raw(), 0) };
        if fd >= 0 {
            // SAFETY: the kernel just returned this descriptor to us; nothing else owns it.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) });
        }
    }
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    std::thread::Builder::new()
        .name("hookd-exit-watch".into())
        .spawn(move || {
            while let Err(Errno::EINTR) =
                waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT)
            {}
            drop(write);
        })?;
    Ok(read)
}
