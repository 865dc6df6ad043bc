//! The confined command started by pid 1 without a copy of its memory: a child that shares it
//! until it execs, as `posix_spawn`'s does (a `fork` copies the page tables of what hookd has
//! mapped, 0.15 to 0.3 ms on every `hookd exec`). Its program, arguments and environment are
//! made into C strings before hookd forks the waiter, so that nothing is allocated after.

use std::ffi::{c_char, c_int, c_void, CString};

use nix::libc;

/// A command's program, arguments and environment as `execvp` takes them.
pub(crate) struct Exec {
    program: CString,
    argv: Vec<*const c_char>,
    envp: Vec<*const c_char>,
    /// What `argv` and `envp` point into.
    _strings: Vec<CString>,
}

// SAFETY: the pointers point into `_strings`, owned by the same value and never changed; they
// are only read (in a child process, through `execvp`).
unsafe impl Send for Exec {}
// SAFETY: as above.
unsafe impl Sync for Exec {}

impl Exec {
    /// What `cmd` would exec: its program and arguments (`arg0` its `argv[0]` where given),
    /// and exactly the variables set on it (its callers clear the environment first:
    /// `crate::confined_env`, the runner).
    pub(crate) fn of(
        cmd: &std::process::Command,
        arg0: Option<&std::ffi::OsStr>,
    ) -> std::io::Result<Exec> {
        use std::os::unix::ffi::OsStrExt;
        let c = |bytes: &[u8]| {
            CString::new(bytes).map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "a NUL byte in the command or its environment",
                )
            })
        };
        let program = c(cmd.get_program().as_bytes())?;
        let mut strings = vec![c(arg0.unwrap_or(cmd.get_program()).as_bytes())?];
        for a in cmd.get_args() {
            strings.push(c(a.as_bytes())?);
        }
        let args = strings.len();
        for (k, v) in cmd.get_envs() {
            if let Some(v) = v {
                strings.push(c(&[k.as_bytes(), b"=", v.as_bytes()].concat())?);
            }
        }
        let ptrs = |s: &[CString]| {
            (s.iter().map(|s| s.as_ptr()))
                .chain(std::iter::once(std::ptr::null()))
                .collect::<Vec<_>>()
        };
        Ok(Exec {
            program,
            argv: ptrs(&strings[..args]),
            envp: ptrs(&strings[args..]),
            _strings: strings,
        })
    }
}

/// What the child reads, and where it says why it could not exec.
struct Start<'a> {
    exec: &'a Exec,
    old: &'a libc::sigset_t,
    /// The broker's program (`broker.rs`), installed just before the exec; its listener is
    /// written to `listener`, in the descriptors the child shares with pid 1 until it execs.
    filter: Option<&'a [libc::sock_filter]>,
    listener: c_int,
    errno: c_int,
}

/// The stack the child runs on until it execs.
const STACK: usize = 64 * 1024;

/// In pid 1, all signals blocked: start the command (leading its own group, `old` its signal
/// mask, `filter` installed) and return its pid once it has exec'd, with the filter's
/// listener; the reason it could not, otherwise.
///
/// # Safety
/// Only in pid 1 of a confined command (a single-threaded child of hookd), with every signal
/// blocked; it makes raw system calls only and allocates nothing.
pub(crate) unsafe fn start_command(
    exec: &Exec,
    old: &libc::sigset_t,
    filter: Option<&[libc::sock_filter]>,
) -> std::io::Result<(libc::pid_t, Option<c_int>)> {
    // SAFETY: the caller's contract; the child runs `child` on its own mapped stack and shares
    // this process's memory until it execs or exits (CLONE_VFORK suspends this one meanwhile).
    unsafe {
        let stack = libc::mmap(
            std::ptr::null_mut(),
            STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        );
        if stack == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let mut start = Start {
            exec,
            old,
            filter,
            listener: -1,
            errno: 0,
        };
        let top = stack.cast::<u8>().add(STACK).cast::<c_void>();
        // With a filter, the descriptors shared until the exec (which unshares them and
        // closes the listener, close-on-exec, in the command's copy): the listener stays here.
        let files = if filter.is_some() {
            libc::CLONE_FILES
        } else {
            0
        };
        let flags = libc::CLONE_VM | libc::CLONE_VFORK | files | libc::SIGCHLD;
        let pid = libc::clone(child, top, flags, (&raw mut start).cast());
        let cloned = std::io::Error::last_os_error();
        libc::munmap(stack, STACK);
        if pid < 0 {
            return Err(cloned);
        }
        // Written by the child in this memory before it exited.
        let errno = std::ptr::read_volatile(&raw const start.errno);
        let listener = std::ptr::read_volatile(&raw const start.listener);
        if errno != 0 {
            libc::waitpid(pid, std::ptr::null_mut(), 0);
            if listener >= 0 {
                libc::close(listener);
            }
            return Err(std::io::Error::from_raw_os_error(errno));
        }
        Ok((pid, (listener >= 0).then_some(listener)))
    }
}

/// The command's process until it execs: its own group in pid 1's session, the broker's filter,
/// its signal mask back, the environment it is given, then `execvp` as std's `Command` does it.
extern "C" fn child(arg: *mut c_void) -> c_int {
    extern "C" {
        static mut environ: *const *const c_char;
    }
    // SAFETY: `arg` is pid 1's `Start`, alive until this process has exec'd or exited; raw
    // system calls only.
    unsafe {
        let start = &mut *arg.cast::<Start<'_>>();
        let filtered = match start.filter {
            Some(filter) => {
                let listener = super::broker::install(filter);
                std::ptr::write_volatile(&raw mut start.listener, listener);
                listener >= 0
            }
            None => true,
        };
        if filtered && libc::setpgid(0, 0) == 0 {
            libc::sigprocmask(libc::SIG_SETMASK, start.old, std::ptr::null_mut());
            environ = start.exec.envp.as_ptr();
            libc::execvp(start.exec.program.as_ptr(), start.exec.argv.as_ptr());
        }
        let errno = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        std::ptr::write_volatile(&raw mut start.errno, errno.max(1));
        libc::_exit(127)
    }
}
