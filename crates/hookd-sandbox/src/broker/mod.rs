//! A confined command's `connect` and `bind`, made by pid 1 where Landlock cannot hold Unix
//! sockets (below ABI 9): the command's calls wait on a seccomp user notification, a helper
//! of pid 1 makes each one itself on the command's socket (taken with `pidfd_getfd`) with the
//! address it read once, and answers with the result (`answer.rs`, helpers in `pool.rs`). A
//! pathname Unix socket is connected to only when what its path leads to (opened once,
//! connected to through the helper's `/proc/self/fd`) is one the user listed
//! (`sandbox.unix_sockets`) or one the sandbox bound (`made.rs`): a service listening outside,
//! wherever its socket is, answers EACCES, as Landlock ABI 9 would. Datagram Unix sockets are
//! refused (EACCES): each `sendmsg` may name an address where seccomp cannot read it. Nothing
//! the command changes after it asked (the address, the descriptor, a link on the path)
//! changes what is made: no call is ever left to the kernel after a helper looked at it.
//!
//! Not for a confined agent (`hookd run --confine`, [`crate::Policy::nests`]): its commands get
//! Landlock domains of their own inside its (`nested.rs`), which calls made by the agent's
//! helpers, in the agent's domain, would escape.

mod answer;
mod made;
mod pool;

pub(crate) use pool::serve;

use std::ffi::c_int;

use nix::libc;

/// What pid 1 needs to answer for a command: prepared in the parent (pid 1 allocates nothing).
#[derive(Debug)]
pub(crate) struct Broker {
    /// The program the command installs before it execs; its listener goes to pid 1.
    pub(crate) filter: Vec<libc::sock_filter>,
    /// The listed sockets (`sandbox.unix_sockets`, as they were resolved): device and inode.
    listed: Vec<(u64, u64)>,
}

impl Broker {
    /// A broker for a command whose listed sockets are `sockets`; `None` where this
    /// architecture has no program here.
    pub(crate) fn new(sockets: &[std::path::PathBuf]) -> Option<Broker> {
        use std::os::unix::fs::MetadataExt;
        let listed = sockets
            .iter()
            .filter_map(|s| std::fs::metadata(s).ok())
            .map(|m| (m.dev(), m.ino()))
            .collect();
        Some(Broker {
            filter: program()?,
            listed,
        })
    }
}

#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64

/// The command's program: `connect` and `bind` to pid 1; `socket` and `socketpair` of the Unix
/// family only as streams or sequenced packets; a filter with a listener of its own refused.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn program() -> Option<Vec<libc::sock_filter>> {
    const LD: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const JSET: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
    const AND: u16 = (libc::BPF_ALU | libc::BPF_AND | libc::BPF_K) as u16;
    const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    let op = |code, k, jt, jf| libc::sock_filter { code, jt, jf, k };
    // `seccomp_data`: nr at 0, arch at 4, the arguments from 16 (low halves first).
    let (nr, arch, arg0, arg1) = (0, 4, 16, 24);
    let allow = libc::SECCOMP_RET_ALLOW;
    let refuse = libc::SECCOMP_RET_ERRNO | libc::EACCES as u32;
    let notify = libc::SECCOMP_RET_USER_NOTIF;
    #[allow(clippy::unnecessary_cast)]
    let listener = libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as u32;
    let n = |x: libc::c_long| x as u32;
    Some(vec![
        /* 0 */ op(LD, arch, 0, 0),
        /* 1 */ op(JEQ, ARCH, 0, 20), // another ABI: hookd's other filter's
        /* 2 */ op(LD, nr, 0, 0),
        /* 3 */ op(JEQ, n(libc::SYS_connect), 17, 0),
        /* 4 */ op(JEQ, n(libc::SYS_bind), 16, 0),
        /* 5 */ op(JEQ, n(libc::SYS_socket), 3, 0),
        /* 6 */ op(JEQ, n(libc::SYS_socketpair), 2, 0),
        /* 7 */ op(JEQ, n(libc::SYS_seccomp), 8, 0),
        /* 8 */ op(RET, allow, 0, 0),
        /* 9 */ op(LD, arg0, 0, 0),
        /* 10 */ op(JEQ, libc::AF_UNIX as u32, 0, 11),
        /* 11 */ op(LD, arg1, 0, 0),
        /* 12 */ op(AND, 0xf, 0, 0),
        /* 13 */ op(JEQ, libc::SOCK_STREAM as u32, 8, 0),
        /* 14 */ op(JEQ, libc::SOCK_SEQPACKET as u32, 7, 5),
        /* 15 */ op(RET, allow, 0, 0),
        /* 16 */ op(LD, arg0, 0, 0),
        /* 17 */ op(JEQ, libc::SECCOMP_SET_MODE_FILTER, 0, 4),
        /* 18 */ op(LD, arg1, 0, 0),
        /* 19 */ op(JSET, listener, 0, 2),
        /* 20 */ op(RET, refuse, 0, 0),
        /* 21 */ op(RET, notify, 0, 0),
        /* 22 */ op(RET, allow, 0, 0),
    ])
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn program() -> Option<Vec<libc::sock_filter>> {
    None
}

/// Install `filter` on this process (between fork and exec): its listener's descriptor.
///
/// # Safety
/// Raw syscall; no_new_privs set.
pub(crate) unsafe fn install(filter: &[libc::sock_filter]) -> c_int {
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr().cast_mut(),
    };
    // SAFETY: seccomp(2) reads `prog` only.
    unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &prog as *const libc::sock_fprog,
        ) as c_int
    }
}

/// In the command's process forked by pid 1 (not `vfork.rs`'s): `filter` installed, its
/// listener handed to pid 1 on `to` (one end of a socket pair), then closed here.
///
/// # Safety
/// Between fork and exec; raw syscalls on this stack's values.
pub(crate) unsafe fn install_and_hand(filter: &[libc::sock_filter], to: c_int) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        let listener = install(filter);
        if listener < 0 {
            return -1;
        }
        let (mut space, mut byte) = ([0u64; 4], 0u8);
        let mut iov = one_byte(&mut byte);
        let mut msg = message(&mut iov, &mut space);
        msg.msg_controllen = libc::CMSG_SPACE(4) as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(4) as _;
        libc::CMSG_DATA(cmsg)
            .cast::<c_int>()
            .write_unaligned(listener);
        let sent = libc::sendmsg(to, &msg, 0);
        libc::close(listener);
        if sent == 1 {
            0
        } else {
            -1
        }
    }
}

/// In pid 1: the listener [`install_and_hand`] sent on `from`; `None` where none came (the
/// command's process ended before).
///
/// # Safety
/// Raw syscalls on this stack's values.
pub(crate) unsafe fn receive(from: c_int) -> Option<c_int> {
    // SAFETY: the caller's contract.
    unsafe {
        let (mut space, mut byte) = ([0u64; 4], 0u8);
        let mut iov = one_byte(&mut byte);
        let mut msg = message(&mut iov, &mut space);
        if libc::recvmsg(from, &mut msg, libc::MSG_CMSG_CLOEXEC) != 1 {
            return None;
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() || (*cmsg).cmsg_type != libc::SCM_RIGHTS {
            return None;
        }
        Some(libc::CMSG_DATA(cmsg).cast::<c_int>().read_unaligned())
    }
}

/// One byte's buffer, as a message's data.
fn one_byte(byte: &mut u8) -> libc::iovec {
    libc::iovec {
        iov_base: (byte as *mut u8).cast(),
        iov_len: 1,
    }
}

/// A message of `iov` with `space` for its control data (one descriptor's).
fn message(iov: &mut libc::iovec, space: &mut [u64; 4]) -> libc::msghdr {
    // SAFETY: a `msghdr` of zeroes is an empty one.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov;
    msg.msg_iovlen = 1;
    msg.msg_control = space.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(space) as _;
    msg
}
