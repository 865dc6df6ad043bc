//! One OTLP/HTTP export: a POST of protobuf bytes over plain HTTP/1.1, bounded by a deadline in
//! every step (connect, write, read), so a collector that is down or slow costs at most that.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::settings::Target;

/// POST `body` to `target`; the response's status. Gives up at `deadline`.
pub(crate) fn post(target: &Target, body: &[u8], deadline: Instant) -> Result<u16, String> {
    let left = || {
        deadline
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
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, left()?) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = format!("cannot connect to {addr}: {e}"),
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
    stream
        .set_write_timeout(Some(left()?))
        .map_err(|e| e.to_string())?;
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body))
        .map_err(|e| format!("cannot send: {e}"))?;
    read_status(&mut stream, left)
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
            .set_read_timeout(Some(left()?))
            .map_err(|e| e.to_string())?;
        let n = stream
            .read(&mut chunk)
            .map_err(|e| format!("no answer: {e}"))?;
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
