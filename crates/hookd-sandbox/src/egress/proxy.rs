//! The proxy a confined command's connections go through: outside the sandbox, in the process
//! that started the command (`hookd exec`, the hook's runner, the daemon), for as long as the
//! command's [`super::super::Confinement`] lives. It accepts on the listening socket the
//! command's waiter handed over ([`super::inside`]), reads an HTTP `CONNECT host:port`, a plain
//! HTTP request in absolute form or a SOCKS5 `CONNECT` ([`super::socks`]), judges the host ([`super::Egress::judge`]), resolves it
//! itself, refuses loopback and link-local answers unless the name is listed exactly, and
//! relays bytes both ways. A refusal is an HTTP 403 whose status line and body say why.
//!
//! Bounded: at most [`MAX_CONNECTIONS`] at once, [`HEAD_TIMEOUT`] to send the request,
//! [`CONNECT_TIMEOUT`] to reach the host, [`IDLE_TIMEOUT`] without a byte either way.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{is_local, Egress, Verdict};

/// Connections relayed at once; more are answered 503.
pub(crate) const MAX_CONNECTIONS: usize = 256;
/// Time a client has to send its request's head.
pub(crate) const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// Time to reach the host.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Time a relayed connection may carry nothing either way.
pub(crate) const IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// The longest request head read.
const MAX_HEAD: usize = 32 * 1024;

/// One connection a confined command made through the proxy (the `network_request` event's
/// content).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct NetworkRequest {
    /// The host as the client named it.
    pub host: String,
    /// The port.
    pub port: u16,
    /// `allowed` or `refused`.
    pub verdict: &'static str,
    /// Why it was refused (or could not be reached); empty when it went through.
    pub reason: String,
    /// Bytes from the command to the host.
    pub bytes_out: u64,
    /// Bytes from the host to the command.
    pub bytes_in: u64,
    /// From the request to the end of the connection, in milliseconds.
    pub duration_ms: u64,
}

/// What is called with each connection once it ends.
pub type Sink = Arc<dyn Fn(&NetworkRequest) + Send + Sync>;

/// The shared state of one proxy.
struct Shared {
    egress: Egress,
    /// The proxy this one is nested in (see `chain.rs`): hosts are reached through it.
    via: Option<SocketAddr>,
    /// Listening sockets being accepted on, for [`Proxy`]'s drop to shut down.
    listeners: Mutex<Vec<RawFd>>,
    stopped: AtomicBool,
    active: AtomicUsize,
    log: Mutex<Vec<NetworkRequest>>,
    sink: Option<Sink>,
}

/// A running proxy; dropping it stops it accepting (connections in flight end with the
/// command's).
pub(crate) struct Proxy {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("egress", &self.shared.egress)
            .finish()
    }
}

impl Proxy {
    /// Start a proxy for `egress`: the end of the channel the command's waiter hands its
    /// listening socket over (close-on-exec) and the proxy.
    pub(crate) fn start(egress: Egress, sink: Option<Sink>) -> std::io::Result<(Proxy, OwnedFd)> {
        Proxy::start_via(egress, None, sink)
    }

    /// [`Proxy::start`], reaching hosts through the proxy at `via` when given (a proxy nested
    /// in a confined agent's sandbox, `chain.rs`).
    pub(crate) fn start_via(
        egress: Egress,
        via: Option<SocketAddr>,
        sink: Option<Sink>,
    ) -> std::io::Result<(Proxy, OwnedFd)> {
        use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::Stream,
            None,
            SockFlag::SOCK_CLOEXEC,
        )?;
        let shared = Arc::new(Shared {
            egress,
            via,
            listeners: Mutex::new(Vec::new()),
            stopped: AtomicBool::new(false),
            active: AtomicUsize::new(0),
            log: Mutex::new(Vec::new()),
            sink,
        });
        let s = shared.clone();
        std::thread::Builder::new()
            .name("hookd-egress".into())
            .spawn(move || receive(ours, s))?;
        Ok((Proxy { shared }, theirs))
    }

    /// The connections made so far.
    pub(crate) fn requests(&self) -> Vec<NetworkRequest> {
        self.shared
            .log
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }
}

impl Proxy {
    /// The connections made, once none is open or `wait` has passed.
    pub(crate) fn requests_settled(&self, wait: Duration) -> Vec<NetworkRequest> {
        let until = Instant::now() + wait;
        while self.shared.active.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.requests()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        if let Ok(list) = self.shared.listeners.lock() {
            for fd in list.iter() {
                // SAFETY: the accept thread removes its descriptor under this lock before it
                // closes it, so `fd` is still that listener; accept then fails and it ends.
                unsafe { nix::libc::shutdown(*fd, nix::libc::SHUT_RDWR) };
            }
        }
    }
}

/// Receive listening sockets over `channel` until every sender has closed it.
fn receive(channel: OwnedFd, shared: Arc<Shared>) {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
    loop {
        let mut byte = [0u8; 1];
        let mut iov = [std::io::IoSliceMut::new(&mut byte)];
        let mut space = nix::cmsg_space!([RawFd; 1]);
        let fds: Vec<RawFd> = match recvmsg::<()>(
            channel.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Ok(msg) if msg.bytes == 0 => return,
            Ok(msg) => msg
                .cmsgs()
                .into_iter()
                .flatten()
                .filter_map(|c| match c {
                    ControlMessageOwned::ScmRights(fds) => Some(fds),
                    _ => None,
                })
                .flatten()
                .collect(),
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return,
        };
        for fd in fds {
            // SAFETY: the descriptor was just received and is owned by no one else.
            let listener = unsafe { TcpListener::from_raw_fd(fd) };
            let s = shared.clone();
            if let Ok(mut list) = shared.listeners.lock() {
                list.push(fd);
            }
            let _ = std::thread::Builder::new()
                .name("hookd-egress-accept".into())
                .spawn(move || accept(listener, s));
        }
    }
}

/// Accept connections on `listener` until the proxy is dropped.
fn accept(listener: TcpListener, shared: Arc<Shared>) {
    let fd = listener.as_raw_fd();
    while !shared.stopped.load(Ordering::SeqCst) {
        let conn = match listener.accept() {
            Ok((c, _)) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if shared.active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            shared.active.fetch_sub(1, Ordering::SeqCst);
            let mut conn = conn;
            let _ = answer(
                &mut conn,
                503,
                "hookd's proxy has too many connections open",
            );
            continue;
        }
        let s = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("hookd-egress-conn".into())
            .spawn(move || {
                let r = serve(conn, &s);
                s.active.fetch_sub(1, Ordering::SeqCst);
                if let Some(sink) = &s.sink {
                    sink(&r);
                }
                if let Ok(mut log) = s.log.lock() {
                    log.push(r);
                }
            });
        if spawned.is_err() {
            shared.active.fetch_sub(1, Ordering::SeqCst);
        }
    }
    if let Ok(mut list) = shared.listeners.lock() {
        list.retain(|l| *l != fd);
        drop(listener);
    }
}

/// Write an HTTP answer of `code` saying `why` (status line and body), and close.
fn answer(conn: &mut TcpStream, code: u16, why: &str) -> std::io::Result<()> {
    let reason: String = why.chars().filter(|c| !c.is_control()).collect();
    let body = format!("{reason}\n");
    let text = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(text.as_bytes())?;
    conn.flush()
}

/// A request's head, parsed: what the client asked for.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Head {
    /// `CONNECT`, or the method of a plain request.
    pub(crate) method: String,
    pub(crate) host: String,
    pub(crate) port: u16,
    /// The head to send the host (plain requests; empty for `CONNECT`).
    pub(crate) forward: Vec<u8>,
}

/// Read the request head (up to the blank line): it and the bytes read after it.
fn read_head(conn: &mut TcpStream) -> Result<(Vec<u8>, Vec<u8>), String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok((buf, rest));
        }
        if buf.len() > MAX_HEAD {
            return Err("the request's head is too long".into());
        }
        match conn.read(&mut chunk) {
            Ok(0) => return Err("the client closed before sending a request".into()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("reading the request: {e}")),
        }
    }
}

/// `host[:port]` (IPv6 in brackets) with `default` as the port.
fn host_port(authority: &str, default: u16) -> Result<(String, u16), String> {
    let bad = || format!("`{authority}` is not a host and port");
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') || h.ends_with(']') => {
            (h.to_string(), p.parse::<u16>().map_err(|_| bad())?)
        }
        _ => (authority.to_string(), default),
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host, port))
}

/// Parse a request head: `CONNECT host:port`, or a plain request to an `http://` URL (rewritten
/// to the origin form, without the proxy's own headers, the connection closed after it).
pub(crate) fn parse_head(head: &[u8]) -> Result<Head, String> {
    let text = std::str::from_utf8(head).map_err(|_| "the request is not text".to_string())?;
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(format!("`{first}` is not an HTTP request line"));
    };
    if method == "CONNECT" {
        let (host, port) = host_port(target, 443)?;
        return Ok(Head {
            method: method.into(),
            host,
            port,
            forward: Vec::new(),
        });
    }
    let Some(rest) = target.strip_prefix("http://") else {
        return Err(format!(
            "`{target}` is not an http:// URL (use CONNECT for https)"
        ));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let (host, port) = host_port(authority, 80)?;
    // The host judged is the host named: a `Host` header of the client's own would reach another
    // site served from the same address.
    let mut forward = format!("{method} {path} {version}\r\nHost: {authority}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line
            .split(':')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if name.starts_with("proxy-")
            || ["connection", "keep-alive", "host"].contains(&name.as_str())
        {
            continue;
        }
        forward.push_str(line);
        forward.push_str("\r\n");
    }
    forward.push_str("Connection: close\r\n\r\n");
    Ok(Head {
        method: method.into(),
        host,
        port,
        forward: forward.into_bytes(),
    })
}

/// Where `host:port` may be reached under `exact` (see [`Verdict::Allowed`]).
fn addresses(host: &str, port: u16, exact: bool) -> Result<Vec<SocketAddr>, String> {
    let all: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("hookd could not resolve {host}: {e}"))?
        .collect();
    let usable: Vec<SocketAddr> = all
        .iter()
        .copied()
        .filter(|a| exact || !is_local(a.ip()))
        .collect();
    match (usable.is_empty(), all.first()) {
        (false, _) => Ok(usable),
        (true, Some(a)) => Err(format!(
            "hookd refused {host}: it resolves to {}, a local or private address, reached only when `sandbox.network.allow` lists the name itself (not a wildcard)",
            a.ip()
        )),
        (true, None) => Err(format!("hookd could not resolve {host}")),
    }
}

/// Serve one connection to its end: what became of it.
fn serve(mut conn: TcpStream, shared: &Shared) -> NetworkRequest {
    let egress = &shared.egress;
    let started = Instant::now();
    let mut req = NetworkRequest {
        host: String::new(),
        port: 0,
        verdict: "refused",
        reason: String::new(),
        bytes_out: 0,
        bytes_in: 0,
        duration_ms: 0,
    };
    let _ = conn.set_read_timeout(Some(HEAD_TIMEOUT));
    let mut socks = false;
    let outcome = open(&mut conn, egress, shared.via, &mut req, &mut socks);
    match outcome {
        Ok((upstream, rest)) => {
            req.verdict = "allowed";
            let (out, inn) = relay(conn, upstream, rest, &shared.stopped);
            req.bytes_out = out;
            req.bytes_in = inn;
        }
        Err((code, why)) => {
            let _ = if socks {
                super::socks::reply(&mut conn, code)
            } else {
                answer(&mut conn, code, &why)
            };
            req.reason = why;
        }
    }
    req.duration_ms = started.elapsed().as_millis() as u64;
    req
}

/// Read the request, judge it and reach the host: the upstream connection and what to send it
/// first, or the HTTP status and reason to answer.
fn open(
    conn: &mut TcpStream,
    egress: &Egress,
    via: Option<SocketAddr>,
    req: &mut NetworkRequest,
    socks: &mut bool,
) -> Result<(TcpStream, Vec<u8>), (u16, String)> {
    let mut byte = [0u8; 1];
    *socks = conn.peek(&mut byte).is_ok_and(|n| n == 1) && byte[0] == super::socks::VERSION;
    let head = if *socks {
        let (host, port) = super::socks::read_request(conn).map_err(|e| (400, e))?;
        Head {
            method: "SOCKS".into(),
            host,
            port,
            forward: Vec::new(),
        }
    } else {
        let (head, rest) = read_head(conn).map_err(|e| (400, e))?;
        let mut head = parse_head(&head).map_err(|e| (400, e))?;
        head.forward.extend_from_slice(&rest);
        head
    };
    req.host = head.host.clone();
    req.port = head.port;
    let exact = match egress.judge(&head.host) {
        Verdict::Allowed { exact } => exact,
        Verdict::Refused(why) => return Err((403, why)),
    };
    let mut upstream = match via {
        Some(via) => super::chain::connect(via, &head.host, head.port, CONNECT_TIMEOUT)?,
        None => direct(&head.host, head.port, exact)?,
    };
    let greeted = match head.method.as_str() {
        "SOCKS" => super::socks::reply(conn, 200),
        "CONNECT" => conn.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n"),
        _ => Ok(()),
    };
    greeted.map_err(|e| (500, e.to_string()))?;
    upstream
        .write_all(&head.forward)
        .map_err(|e| (502, format!("hookd could not write to {}: {e}", head.host)))?;
    Ok((upstream, head.forward))
}

/// A connection to `host:port`, resolved here (local addresses only when `exact`).
fn direct(host: &str, port: u16, exact: bool) -> Result<TcpStream, (u16, String)> {
    let addrs = addresses(host, port, exact).map_err(|e| (403, e))?;
    let mut last = String::new();
    for a in addrs {
        match TcpStream::connect_timeout(&a, CONNECT_TIMEOUT) {
            Ok(s) => return Ok(s),
            Err(e) => last = e.to_string(),
        }
    }
    Err((502, format!("hookd could not reach {host}:{port}: {last}")))
}

/// Relay bytes both ways until both sides are done, nothing moves for [`IDLE_TIMEOUT`] or the
/// proxy is stopped (`stopped`: its command has ended): bytes sent to the host (`first`
/// counted) and received from it.
fn relay(
    client: TcpStream,
    upstream: TcpStream,
    first: Vec<u8>,
    stopped: &AtomicBool,
) -> (u64, u64) {
    let start = Instant::now();
    let last = AtomicU64::new(0);
    let (Ok(c2), Ok(u2)) = (client.try_clone(), upstream.try_clone()) else {
        return (first.len() as u64, 0);
    };
    let (up, down) = std::thread::scope(|s| {
        let up = s.spawn(|| pump(c2, u2, &last, start, stopped));
        let down = pump(upstream, client, &last, start, stopped);
        (up.join().unwrap_or(0), down)
    });
    (up + first.len() as u64, down)
}

/// What one step of a relay did.
enum Step {
    /// Bytes went from one side to the other.
    Moved(usize),
    /// The sending side ended.
    End,
    /// Nothing came within the tick.
    Idle,
    /// Reading failed.
    ReadFailed,
    /// Writing failed.
    WriteFailed,
}

/// The most moved in one step.
const CHUNK: usize = 256 * 1024;

/// Move what `from` has to `to` through `pipe` with `splice(2)`: no copy through this process.
fn splice_some(from: &TcpStream, to: &TcpStream, pipe: &(OwnedFd, OwnedFd)) -> Step {
    use nix::libc;
    let flags = libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE;
    let null = std::ptr::null_mut::<libc::loff_t>();
    // SAFETY: splice on descriptors this function borrows, with no offsets.
    let n = unsafe {
        libc::splice(
            from.as_raw_fd(),
            null,
            pipe.1.as_raw_fd(),
            null,
            CHUNK,
            flags,
        )
    };
    if n == 0 {
        return Step::End;
    }
    if n < 0 {
        return match std::io::Error::last_os_error().kind() {
            std::io::ErrorKind::Interrupted
            | std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut => Step::Idle,
            _ => Step::ReadFailed,
        };
    }
    let mut left = n as usize;
    while left > 0 {
        // SAFETY: as above.
        let m =
            unsafe { libc::splice(pipe.0.as_raw_fd(), null, to.as_raw_fd(), null, left, flags) };
        if m < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if m <= 0 {
            return Step::WriteFailed;
        }
        left -= m as usize;
    }
    Step::Moved(n as usize)
}

/// Move what `from` has to `to` through `buf` (where no pipe could be made).
fn copy_some(from: &mut TcpStream, to: &mut TcpStream, buf: &mut [u8]) -> Step {
    match from.read(buf) {
        Ok(0) => Step::End,
        Ok(n) => match to.write_all(&buf[..n]) {
            Ok(()) => Step::Moved(n),
            Err(_) => Step::WriteFailed,
        },
        Err(e) => match e.kind() {
            std::io::ErrorKind::Interrupted
            | std::io::ErrorKind::WouldBlock
            | std::io::ErrorKind::TimedOut => Step::Idle,
            _ => Step::ReadFailed,
        },
    }
}

/// Copy `from` to `to` until the end, the idle limit or `stopped`; the bytes copied.
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    last: &AtomicU64,
    start: Instant,
    stopped: &AtomicBool,
) -> u64 {
    let tick = Duration::from_secs(1).min(IDLE_TIMEOUT);
    let _ = from.set_read_timeout(Some(tick));
    let pipe = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).ok();
    let mut buf = if pipe.is_some() {
        Vec::new()
    } else {
        vec![0u8; CHUNK]
    };
    let mut total = 0u64;
    loop {
        let step = match &pipe {
            Some(p) => splice_some(&from, &to, p),
            None => copy_some(&mut from, &mut to, &mut buf),
        };
        match step {
            Step::End => break,
            Step::Moved(n) => {
                total += n as u64;
                last.store(start.elapsed().as_millis() as u64, Ordering::Relaxed);
            }
            Step::Idle => {
                let idle = start.elapsed().as_millis() as u64 - last.load(Ordering::Relaxed);
                if idle >= IDLE_TIMEOUT.as_millis() as u64 || stopped.load(Ordering::SeqCst) {
                    let _ = from.shutdown(Shutdown::Both);
                    let _ = to.shutdown(Shutdown::Both);
                    break;
                }
            }
            Step::ReadFailed => {
                let _ = to.shutdown(Shutdown::Both);
                break;
            }
            Step::WriteFailed => {
                let _ = from.shutdown(Shutdown::Both);
                break;
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand `listener` to the proxy as the waiter does.
    fn hand(channel: &OwnedFd, listener: &TcpListener) {
        use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};
        let fds = [listener.as_raw_fd()];
        let iov = [std::io::IoSlice::new(b"x")];
        let cmsg = [ControlMessage::ScmRights(&fds)];
        sendmsg::<()>(channel.as_raw_fd(), &iov, &cmsg, MsgFlags::empty(), None).unwrap();
    }

    #[test]
    fn the_proxy_serves_until_it_is_dropped_and_bounds_what_it_reads() {
        let egress = Egress {
            allow: vec!["localhost".into()],
            deny: Vec::new(),
        };
        let (proxy, channel) = Proxy::start(egress, None).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        hand(&channel, &listener);
        drop(listener);
        let ask = |what: &[u8]| -> String {
            let mut c = TcpStream::connect(addr).unwrap();
            c.write_all(what).unwrap();
            let mut out = String::new();
            let _ = c.read_to_string(&mut out);
            out
        };
        let refused = ask(b"CONNECT example.com:443 HTTP/1.1\r\n\r\n");
        assert!(
            refused.starts_with("HTTP/1.1 403 hookd refused example.com: not in"),
            "{refused}"
        );
        let long = ask(&vec![b'a'; MAX_HEAD + 8192]);
        assert!(
            long.starts_with("HTTP/1.1 400 the request's head is too long"),
            "{long}"
        );
        let log = proxy.requests_settled(Duration::from_secs(1));
        assert_eq!(log.len(), 2);
        assert_eq!(
            (log[0].host.as_str(), log[0].verdict),
            ("example.com", "refused")
        );
        drop(proxy);
        std::thread::sleep(Duration::from_millis(50));
        // Gone with its command: nothing accepts any more.
        let after = TcpStream::connect(addr).map(|mut c| {
            let _ = c.write_all(b"CONNECT localhost:1 HTTP/1.1\r\n\r\n");
            let mut out = String::new();
            let _ = c.read_to_string(&mut out);
            out
        });
        assert!(after.as_ref().map_or(true, |o| o.is_empty()), "{after:?}");
    }

    #[test]
    fn a_connection_still_open_ends_within_a_tick_of_the_proxy_stopping() {
        // A host that accepts and then says nothing, keeping the connection open.
        let host = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = host.local_addr().unwrap().port();
        let held = std::thread::spawn(move || host.accept().map(|(c, _)| c));
        let egress = Egress {
            allow: vec!["localhost".into()],
            deny: Vec::new(),
        };
        let (proxy, channel) = Proxy::start(egress, None).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        hand(&channel, &listener);
        drop(listener);
        let mut c = TcpStream::connect(addr).unwrap();
        write!(c, "CONNECT localhost:{port} HTTP/1.1\r\n\r\n").unwrap();
        let mut got = [0u8; 39];
        c.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"HTTP/1.1 200 Connection established\r\n\r\n");
        let _upstream = held.join().unwrap().unwrap();
        let stopped = Instant::now();
        drop(proxy);
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let n = c.read(&mut [0u8; 8]).unwrap_or(0);
        assert_eq!(n, 0);
        assert!(
            stopped.elapsed() < Duration::from_secs(3),
            "{:?}",
            stopped.elapsed()
        );
    }

    #[test]
    fn heads_are_parsed() {
        let h =
            parse_head(b"CONNECT crates.io:443 HTTP/1.1\r\nHost: crates.io:443\r\n\r\n").unwrap();
        assert_eq!(
            (h.method.as_str(), h.host.as_str(), h.port),
            ("CONNECT", "crates.io", 443)
        );
        let h = parse_head(b"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((h.host.as_str(), h.port), ("::1", 8443));
        let h = parse_head(
            b"GET http://u:p@example.org:8080/a?b HTTP/1.1\r\nHost: evil.example.net\r\nProxy-Connection: keep-alive\r\nAccept: */*\r\n\r\n",
        )
        .unwrap();
        assert_eq!((h.host.as_str(), h.port), ("example.org", 8080));
        assert_eq!(
            String::from_utf8(h.forward).unwrap(),
            "GET /a?b HTTP/1.1\r\nHost: example.org:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(
            parse_head(b"GET /x HTTP/1.1\r\n\r\n").unwrap_err(),
            "`/x` is not an http:// URL (use CONNECT for https)"
        );
    }
}
