//! What a helper of pid 1 does for one notification: the caller's `connect` or `bind` made
//! here, on the caller's socket, with the address read once from its memory; a pathname
//! socket's path resolved from the caller's directory, opened once and judged by what it leads
//! to. Every call is one of rustix's raw system calls: a helper shares pid 1's memory, and with
//! it the thread-local `errno` that libc's wrappers write.

use std::ffi::{c_int, c_void, CStr};

use nix::libc;
use rustix::fd::{AsRawFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, StatxFlags, CWD};
use rustix::net::SocketAddrAny;

use super::made::{made, remember, Key};
use super::Broker;

/// A call's return value, or its errno.
pub(super) type Answer = Result<i64, c_int>;

fn no(e: rustix::io::Errno) -> c_int {
    e.raw_os_error()
}

/// Whether the notification `id` still stands (its caller has not gone, its pid not reused).
fn standing(listener: c_int, id: u64) -> bool {
    let mut id = id;
    // SAFETY: an ioctl on this stack's value; its result is read, not errno.
    unsafe { libc::ioctl(listener, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &mut id) == 0 }
}

/// The calling thread, as its `/proc/TID/status` says.
struct Caller {
    tid: u32,
    /// Its process (thread group).
    tgid: u32,
    umask: u32,
}

impl Caller {
    fn of(tid: u32) -> Option<Caller> {
        let mut buf = [0u8; 40];
        let path = numbered(&mut buf, b"/proc/", tid, b"/status");
        let fd = rustix::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).ok()?;
        let mut text = [0u8; 4096];
        let read = rustix::io::read(&fd, &mut text).ok()?;
        let text = &text[..read];
        let field = |key: &[u8], radix: u64| -> Option<u64> {
            let at = text.windows(key.len()).position(|w| w == key)? + key.len();
            let digits = text[at..].iter().take_while(|b| b.is_ascii_digit());
            Some(digits.fold(0u64, |n, b| n * radix + u64::from(b - b'0')))
        };
        Some(Caller {
            tid,
            tgid: u32::try_from(field(b"\nTgid:\t", 10)?).ok()?,
            umask: field(b"\nUmask:\t", 8).unwrap_or(0o022) as u32 & 0o777,
        })
    }
}

/// The address a call names, as the kernel takes it.
enum Address<'a> {
    /// A pathname Unix socket: the path (at most 108 bytes, up to a NUL).
    Path(&'a CStr),
    /// An abstract Unix socket, a Unix socket with no name (`bind`: one is chosen), or another
    /// family's address.
    Other,
}

/// `connect` or `bind` as notification `n` asks, made here: its result.
pub(super) fn answer(n: &libc::seccomp_notif, listener: c_int, broker: &Broker) -> Answer {
    let caller = Caller::of(n.pid).ok_or(libc::ESRCH)?;
    let socket = socket_of(n, &caller)?;
    let mut storage = std::mem::MaybeUninit::<rustix::net::addr::SocketAddrStorage>::zeroed();
    let len = n.data.args[2] as u32 as usize;
    if !(2..=std::mem::size_of_val(&storage)).contains(&len) {
        return Err(libc::EINVAL);
    }
    read_caller(n.pid, n.data.args[1], storage.as_mut_ptr().cast(), len)?;
    // SAFETY: `len` bytes of `storage` are initialized (read, the rest zeroed), between a
    // family's 2 bytes and its size.
    let any = unsafe { SocketAddrAny::new(storage, len as u32) };
    // SAFETY: `storage` is a zeroed `sockaddr_storage`, which a `sockaddr_un` fits in.
    let un = unsafe { &*storage.as_ptr().cast::<libc::sockaddr_un>() };
    let mut name = [0u8; 109];
    let connect = i64::from(n.data.nr) == libc::SYS_connect;
    let address = address(un, len, &mut name)?;
    // A relative path is the caller's directory's.
    let cwd = match address {
        Address::Path(path) if path.to_bytes()[0] != b'/' => {
            Some(at_caller(&caller, b"/cwd", OFlags::DIRECTORY)?)
        }
        _ => None,
    };
    // Once, after everything read by the caller's thread id (its status, its memory, its
    // directory): that id was still the caller's, not a thread's that took it since.
    if !standing(listener, n.id) {
        return Err(libc::ENOENT);
    }
    match address {
        Address::Path(path) if connect => {
            connect_checked(&socket, cwd.as_ref(), path, &caller, broker)
        }
        Address::Path(path) => bind_remembered(&socket, cwd.as_ref(), path, &caller, &any),
        // An abstract name, or another family's address: as asked. The kernel judges it too
        // (Landlock's scope, ABI 6, refuses an abstract socket made outside).
        Address::Other if connect => rustix::net::connect(&socket, &any).map(|()| 0).map_err(no),
        Address::Other => rustix::net::bind(&socket, &any).map(|()| 0).map_err(no),
    }
}

/// The socket the call is on, taken from the calling thread's descriptors (`PIDFD_THREAD`,
/// Linux 6.9: a thread that unshared its table has one of its own, attack round 14's F3;
/// before 6.9, its process's).
fn socket_of(n: &libc::seccomp_notif, caller: &Caller) -> Result<OwnedFd, c_int> {
    use rustix::process::{pidfd_getfd, pidfd_open, Pid, PidfdFlags, PidfdGetfdFlags};
    const PIDFD_THREAD: u32 = libc::O_EXCL as u32;
    let thread = Pid::from_raw(n.pid as i32).ok_or(libc::ESRCH)?;
    let pidfd = match pidfd_open(thread, PidfdFlags::from_bits_retain(PIDFD_THREAD)) {
        Err(rustix::io::Errno::INVAL) => {
            let process = Pid::from_raw(caller.tgid as i32).ok_or(libc::ESRCH)?;
            pidfd_open(process, PidfdFlags::empty())
        }
        other => other,
    }
    .map_err(no)?;
    pidfd_getfd(&pidfd, n.data.args[0] as c_int, PidfdGetfdFlags::empty()).map_err(no)
}

/// `len` bytes of the caller's memory at `at`, into `to`.
fn read_caller(tid: u32, at: u64, to: *mut c_void, len: usize) -> Result<(), c_int> {
    let local = libc::iovec {
        iov_base: to,
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: at as *mut c_void,
        iov_len: len,
    };
    // SAFETY: the kernel writes at most `len` bytes at `to`, which the caller owns; the count
    // it returns is read, not errno.
    let read = unsafe { libc::process_vm_readv(tid as libc::pid_t, &local, 1, &remote, 1, 0) };
    if read == len as isize {
        Ok(())
    } else {
        Err(libc::EFAULT)
    }
}

/// What `un` (`len` bytes of it) names; a path copied into `name`, NUL-terminated.
fn address<'a>(
    un: &libc::sockaddr_un,
    len: usize,
    name: &'a mut [u8; 109],
) -> Result<Address<'a>, c_int> {
    if un.sun_family != libc::AF_UNIX as libc::sa_family_t || len == 2 {
        return Ok(Address::Other);
    }
    if len > std::mem::size_of::<libc::sockaddr_un>() {
        return Err(libc::EINVAL);
    }
    let path = &un.sun_path[..len - 2];
    if path[0] == 0 {
        return Ok(Address::Other);
    }
    for (to, c) in name.iter_mut().zip(path) {
        if *c == 0 {
            break;
        }
        *to = *c as u8;
    }
    let path = CStr::from_bytes_until_nul(&name[..]).map_err(|_| libc::EINVAL)?;
    Ok(Address::Path(path))
}

/// A number's decimal digits between `prefix` and `suffix`, in `buf`.
fn numbered<'a>(buf: &'a mut [u8; 40], prefix: &[u8], n: u32, suffix: &[u8]) -> &'a [u8] {
    let mut digits = [0u8; 10];
    let (mut n, mut len) = (n, 0);
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut at = 0;
    let all = (prefix.iter())
        .chain(digits[..len].iter().rev())
        .chain(suffix.iter());
    for b in all {
        buf[at] = *b;
        at += 1;
    }
    &buf[..at]
}

/// `/proc/TID` + `tail` of the calling thread, opened (`O_PATH`).
fn at_caller(caller: &Caller, tail: &[u8], flags: OFlags) -> Result<OwnedFd, c_int> {
    let mut buf = [0u8; 40];
    let path = numbered(&mut buf, b"/proc/", caller.tid, tail);
    rustix::fs::open(path, OFlags::PATH | OFlags::CLOEXEC | flags, Mode::empty()).map_err(no)
}

/// What `path` leads to from the caller's directory `cwd` (`None`: an absolute path), opened
/// (`O_PATH`, links followed as `connect` follows them). `/proc/self` and `/proc/thread-self` are the caller's, not this
/// helper's.
fn open_as_caller(cwd: Option<&OwnedFd>, path: &CStr, caller: &Caller) -> Result<OwnedFd, c_int> {
    let bytes = path.to_bytes();
    for (own, tail_at) in [(&b"/proc/self"[..], 10), (&b"/proc/thread-self"[..], 17)] {
        if bytes.starts_with(own) && matches!(bytes.get(tail_at), None | Some(b'/')) {
            let proc = at_caller(caller, b"", OFlags::DIRECTORY)?;
            let rest = &bytes[tail_at..];
            let rest = rest.strip_prefix(b"/").unwrap_or(rest);
            let rest = if rest.is_empty() { &b"."[..] } else { rest };
            let flags = OFlags::PATH | OFlags::CLOEXEC;
            return rustix::fs::openat(&proc, rest, flags, Mode::empty()).map_err(no);
        }
    }
    let flags = OFlags::PATH | OFlags::CLOEXEC;
    match cwd {
        Some(cwd) => rustix::fs::openat(cwd, path, flags, Mode::empty()),
        None => rustix::fs::openat(CWD, path, flags, Mode::empty()),
    }
    .map_err(no)
}

/// The identity of the file `fd` is: device, inode, birth time.
fn key_of(fd: &OwnedFd) -> Result<(Key, FileType), c_int> {
    let mask = StatxFlags::TYPE | StatxFlags::INO | StatxFlags::BTIME;
    let st = rustix::fs::statx(fd, c"", AtFlags::EMPTY_PATH, mask).map_err(no)?;
    let born = if st.stx_mask & StatxFlags::BTIME.bits() != 0 {
        (st.stx_btime.tv_sec as u64)
            .wrapping_mul(1_000_000_000)
            .wrapping_add(u64::from(st.stx_btime.tv_nsec))
    } else {
        0
    };
    let dev = rustix::fs::makedev(st.stx_dev_major, st.stx_dev_minor);
    let kind = FileType::from_raw_mode(u32::from(st.stx_mode));
    Ok((Key(dev, st.stx_ino, born), kind))
}

/// Connect `socket` to what `path` leads to, if the user listed it or the sandbox bound it (by
/// a process no less deep than the caller): through this helper's `/proc/self/fd`, so that
/// what was judged is what is connected to.
fn connect_checked(
    socket: &OwnedFd,
    cwd: Option<&OwnedFd>,
    path: &CStr,
    caller: &Caller,
    broker: &Broker,
) -> Answer {
    let target = open_as_caller(cwd, path, caller)?;
    let (key, kind) = key_of(&target)?;
    if kind != FileType::Socket {
        return Err(libc::ECONNREFUSED);
    }
    if !broker.listed.contains(&(key.0, key.1)) && !made(key) {
        return Err(libc::EACCES);
    }
    let mut buf = [0u8; 40];
    let via = numbered(&mut buf, b"/proc/self/fd/", target.as_raw_fd() as u32, b"");
    let via = rustix::net::SocketAddrUnix::new(via).map_err(no)?;
    rustix::net::connect(socket, &via).map_err(no)?;
    Ok(0)
}

/// Bind `socket` to `addr` as the caller would have (from its directory `cwd`, `None` for an
/// absolute path, with its umask), then remember what `path` is, if it is a socket born since.
fn bind_remembered(
    socket: &OwnedFd,
    cwd: Option<&OwnedFd>,
    path: &CStr,
    caller: &Caller,
    addr: &SocketAddrAny,
) -> Answer {
    use rustix::time::{clock_gettime, ClockId};
    if let Some(cwd) = cwd {
        rustix::process::fchdir(cwd).map_err(no)?;
    }
    rustix::process::umask(Mode::from_raw_mode(caller.umask));
    let t = clock_gettime(ClockId::RealtimeCoarse);
    let before = (t.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(t.tv_nsec as u64);
    rustix::net::bind(socket, addr).map_err(no)?;
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if let Ok(made) = rustix::fs::openat(CWD, path, flags, Mode::empty()) {
        if let Ok((key, FileType::Socket)) = key_of(&made) {
            if key.2 >= before {
                remember(key);
            }
        }
    }
    Ok(0)
}
