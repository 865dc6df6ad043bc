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

/// Open `GET path` and hand each Server-Sent Event (`event` name, `id`, `data`) to `each` until
/// the stream ends or `each` returns false. The body is decoded from chunked transfer encoding
/// (as hookd's server sends event streams) or read as it comes otherwise.
pub fn sse(
    socket: &Path,
    path: &str,
    mut each: impl FnMut(&str, Option<u64>, &str) -> bool,
) -> std::io::Result<()> {
    use std::io::BufRead;
    let mut s = UnixStream::connect(socket)?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: hookd\r\nAccept: text/event-stream\r\n\r\n"
    )?;
    let mut r = std::io::BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line)?;
    if !line.starts_with("HTTP/1.1 200") {
        return Err(std::io::Error::other(format!(
            "the daemon answered {}",
            line.trim()
        )));
    }
    let mut chunked = false;
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 || line == "\r\n" {
            break; // end of headers
        }
        chunked |= line.to_ascii_lowercase().starts_with("transfer-encoding:")
            && line.to_ascii_lowercase().contains("chunked");
    }
    let mut text = String::new();
    loop {
        // Next piece of the body.
        let piece = if chunked {
            line.clear();
            if r.read_line(&mut line)? == 0 {
                return Ok(());
            }
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16)
                .map_err(|_| std::io::Error::other("a malformed chunk from the daemon"))?;
            if size == 0 {
                return Ok(());
            }
            let mut chunk = vec![0u8; size + 2]; // the chunk and its CRLF
            r.read_exact(&mut chunk)?;
            chunk.truncate(size);
            chunk
        } else {
            let mut chunk = vec![0u8; 8192];
            let n = r.read(&mut chunk)?;
            if n == 0 {
                return Ok(());
            }
            chunk.truncate(n);
            chunk
        };
        text.push_str(&String::from_utf8_lossy(&piece));
        // Complete events end with a blank line.
        while let Some(end) = text.find("\n\n") {
            let block: String = text.drain(..end + 2).collect();
            let (mut event, mut id, mut data) = (String::new(), None, String::new());
            for l in block.lines() {
                if let Some(v) = l.strip_prefix("event:") {
                    event = v.trim().to_string();
                } else if let Some(v) = l.strip_prefix("id:") {
                    id = v.trim().parse().ok();
                } else if let Some(v) = l.strip_prefix("data:") {
                    data.push_str(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            if !data.is_empty() && !each(&event, id, &data) {
                return Ok(());
            }
        }
    }
}
