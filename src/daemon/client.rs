//! Talking to a running daemon over its Unix socket: one HTTP/1.1 request per connection
//! (`Connection: close`), so the response ends where the stream ends. The only peer is hookd's
//! own server; a full HTTP client and an async runtime would cost every dispatch its startup.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// True when a daemon accepts connections on `socket`.
pub fn answers(socket: &Path) -> bool {
    UnixStream::connect(socket).is_ok()
}

/// `POST path` with a JSON body; returns the status and the body.
pub fn post(
    socket: &Path,
    path: &str,
    body: &str,
    timeout: Duration,
) -> std::io::Result<(u16, String)> {
    let mut s = UnixStream::connect(socket)?;
    s.set_read_timeout(Some(timeout))?;
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: hookd\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    let raw = String::from_utf8_lossy(&raw);
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("the daemon's answer has no body"))?;
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("the daemon's answer has no status"))?;
    Ok((status, body.to_string()))
}
