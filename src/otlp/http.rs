//! One OTLP/HTTP export: a POST of protobuf bytes over plain HTTP/1.1, bounded by a deadline in
//! every step (connect, write, read), so a collector that is down or slow costs at most that.
//! Writes and reads wait in slices of [`SLICE`], each time asking the deadline again: the
//! daemon's stop moves it earlier, and an export under way then ends by the new one.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::settings::Target;

/// The longest one blocking read or write waits before the deadline is asked again.
const SLICE: Duration = Duration::from_millis(100);

/// The longest one connection attempt waits before the deadline is asked again (and, if
/// time is left, a new attempt made): longer than any round trip to a collector.
const CONNECT_SLICE: Duration = Duration::from_secs(1);

/// POST `body` to `target`; the response's status. Gives up at `deadline()`, asked again at
/// every step (it may move earlier meanwhile).
pub(crate) fn post(
    target: &Target,
    body: &[u8],
    deadline: &dyn Fn() -> Instant,
) -> Result<u16, String> {
    let left = || {
        deadline()
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| "timed out".to_string())
    };
    let addrs: Vec<_> = target
        .authority
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", target.authority))?
        .collect();
    let mut stream = None;
    let mut last = String::from("no address");
    'addrs: for addr in addrs {
        loop {
            match TcpStream::connect_timeout(&addr, left()?.min(CONNECT_SLICE)) {
                Ok(s) => {
                    stream = Some(s);
                    break 'addrs;
                }
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                    last = format!("cannot connect to {addr}: {e}");
                }
                Err(e) => {
                    last = format!("cannot connect to {addr}: {e}");
                    continue 'addrs;
                }
            }
        }
    }
    let mut stream = stream.ok_or(last)?;
    let _ = stream.set_nodelay(true);
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-protobuf\r\nContent-Length: {}\r\nConnection: close\r\n",
        if target.path.is_empty() { "/" } else { &target.path },
        target.authority,
        body.len()
    );
    for (k, v) in &target.headers {
        // A header value with a line break would start another header: drop it.
        if !k.contains(['\r', '\n', ':']) && !v.contains(['\r', '\n']) {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    head.push_str("\r\n");
    send(&mut stream, head.as_bytes(), &left)?;
    send(&mut stream, body, &left)?;
    read_status(&mut stream, left)
}

/// Write all of `bytes`, a slice of time at a time, until `left` says the time is up.
fn send(
    stream: &mut TcpStream,
    mut bytes: &[u8],
    left: &dyn Fn() -> Result<Duration, String>,
) -> Result<(), String> {
    while !bytes.is_empty() {
        stream
            .set_write_timeout(Some(left()?.min(SLICE)))
            .map_err(|e| e.to_string())?;
        match stream.write(bytes) {
            Ok(0) => return Err("cannot send: the collector closed the connection".into()),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if waited(&e) => {}
            Err(e) => return Err(format!("cannot send: {e}")),
        }
    }
    Ok(())
}

/// A blocking call's slice of time ran out (or a signal interrupted it): ask the deadline.
fn waited(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{Interrupted, TimedOut, WouldBlock};
    matches!(e.kind(), WouldBlock | TimedOut | Interrupted)
}

/// The status line's code, read within the deadline.
fn read_status(
    stream: &mut TcpStream,
    left: impl Fn() -> Result<Duration, String>,
) -> Result<u16, String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        stream
            .set_read_timeout(Some(left()?.min(SLICE)))
            .map_err(|e| e.to_string())?;
        let n = match stream.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if waited(&e) => continue,
            Err(e) => return Err(format!("no answer: {e}")),
        };
        if n == 0 {
            return Err("the collector closed the connection without answering".into());
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        if let Err(e) = response.parse(&buf) {
            return Err(format!("a malformed answer: {e}"));
        }
        if let Some(code) = response.code {
            return Ok(code);
        }
        if buf.len() >= 64 * 1024 {
            return Err("an answer without a status line".into());
        }
    }
}
