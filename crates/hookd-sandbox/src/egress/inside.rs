//! The command's side of the channel to the proxy, made by its waiter between fork and exec
//! (raw syscalls only): in the new network namespace, `lo` brought up and a TCP socket listening
//! on [`super::PROXY_ADDR`], whose descriptor goes to the proxy outside over a socket pair
//! (`SCM_RIGHTS`) and is closed here. The proxy then accepts on it from outside: nothing is
//! relayed inside, and no process inside holds the listening socket.

use std::os::fd::RawFd;

use nix::libc;

/// `struct ifreq` with the flags member (40 bytes on every Linux target).
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Bring `lo` up in this (new) network namespace.
unsafe fn loopback_up() -> std::io::Result<()> {
    // SAFETY: socket, ioctl and close on values on this stack.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: 0,
            _pad: [0; 22],
        };
        req.name[..2].copy_from_slice(b"lo");
        let mut r = libc::ioctl(s, libc::SIOCGIFFLAGS as _, &mut req as *mut IfReq);
        if r == 0 {
            req.flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            r = libc::ioctl(s, libc::SIOCSIFFLAGS as _, &req as *const IfReq);
        }
        let e = std::io::Error::last_os_error();
        libc::close(s);
        if r != 0 {
            return Err(e);
        }
    }
    Ok(())
}

/// A TCP socket listening on `127.0.0.1:port` in this network namespace.
unsafe fn listener(port: u16) -> std::io::Result<RawFd> {
    // SAFETY: socket, bind, listen and close on values on this stack.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be(),
            },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        if libc::bind(s, (&raw const addr).cast(), len) != 0 || libc::listen(s, 128) != 0 {
            let e = std::io::Error::last_os_error();
            libc::close(s);
            return Err(e);
        }
        Ok(s)
    }
}

/// Send `fd` over the Unix socket `channel` (one byte, the descriptor as `SCM_RIGHTS`).
unsafe fn send_fd(channel: RawFd, fd: RawFd) -> std::io::Result<()> {
    // SAFETY: sendmsg on buffers on this stack, sized by CMSG_SPACE.
    unsafe {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut control = [0u64; 4];
        let space = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as usize;
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::copy_nonoverlapping(
            (&raw const fd).cast::<u8>(),
            libc::CMSG_DATA(cmsg),
            std::mem::size_of::<RawFd>(),
        );
        if libc::sendmsg(channel, &msg, libc::MSG_NOSIGNAL) != 1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// In the waiter, right after it entered its new user and network namespaces (it holds every
/// capability of that user namespace): `lo` up, the proxy's listening socket made and handed
/// over `channel`, then closed here.
pub(crate) unsafe fn hand_over(channel: RawFd) -> std::io::Result<()> {
    // SAFETY: the caller's contract; raw syscalls only.
    unsafe {
        loopback_up()?;
        let l = listener(super::PROXY_PORT)?;
        let sent = send_fd(channel, l);
        libc::close(l);
        sent
    }
}
