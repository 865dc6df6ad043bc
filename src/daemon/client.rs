//! Talking to a running daemon over its Unix socket: one HTTP/1.1 request per connection
//! (`Connection: close`), so the response ends where the stream ends. The only peer is hookd's
//! own server; a full HTTP client and an async runtime would cost every dispatch its startup.
//!
//! The socket is trusted only when it is this user's: its owner, and the process answering on
//! it (`SO_PEERCRED`), must be our own uid. Another user's socket at our path is refused.

use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// Why a request to the daemon got no answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// Nothing listens there (no file, or a stale socket).
    #[error("no daemon listens at {0}")]
    NotRunning(String),
    /// The socket, or the process behind it, belongs to another user.
    #[error("{0} belongs to uid {1}, not to this user (uid {2}); refusing to trust its answers")]
    NotOurs(String, u32, u32),
    /// The path is not a socket.
    #[error("{0} is not a socket")]
    NotASocket(String),
    /// The daemon did not take the request within the deadline.
    #[error("no answer within {0} ms (HOOKD_DAEMON_TIMEOUT_MS)")]
    Timeout(u128),
    /// The daemon took the dispatch and closed the connection without an answer: it stopped
    /// (or was killed) meanwhile. Its hooks may have run; dispatching again may run them twice.
    #[error("the daemon took the dispatch and stopped before answering (its hooks may have run)")]
    Lost,
    /// The exchange failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Connect to `socket` if it and the daemon behind it are this user's, within `timeout`.
fn connect(socket: &Path, timeout: Duration) -> Result<UnixStream, ClientError> {
    let name = socket.display().to_string();
    let me = nix::unistd::geteuid().as_raw();
    let meta = std::fs::metadata(socket).map_err(|_| ClientError::NotRunning(name.clone()))?;
    if !meta.file_type().is_socket() {
        return Err(ClientError::NotASocket(name));
    }
    if meta.uid() != me {
        return Err(ClientError::NotOurs(name, meta.uid(), me));
    }
    // `connect` on a Unix socket blocks while the listener's backlog is full: bound it.
    let (tx, rx) = std::sync::mpsc::channel();
    let path = socket.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(UnixStream::connect(path));
    });
    let stream = match rx.recv_timeout(timeout) {
        Ok(Ok(s)) => s,
        Ok(Err(_)) => return Err(ClientError::NotRunning(name)),
        Err(_) => return Err(ClientError::Timeout(timeout.as_millis())),
    };
    // The file's owner could differ from the process that bound it: ask the kernel.
    let peer = nix::sys::socket::getsockopt(&stream, nix::sys::socket::sockopt::PeerCredentials)
        .map_err(std::io::Error::from)?;
    if peer.uid() != me {
        return Err(ClientError::NotOurs(name, peer.uid(), me));
    }
    Ok(stream)
}

/// True when a daemon of this user's accepts connections on `socket`.
pub fn answers(socket: &Path) -> bool {
    connect(socket, Duration::from_secs(2)).is_ok()
}

/// `POST path` with a JSON body; returns the status and the body. `accept` bounds the time to
/// connect and for the daemon to take the request (it asks for the body with `100 Continue`
/// once a dispatch slot is free); `answer` bounds the wait for the result after that, which
/// runs hooks under their own timeouts. A request the daemon never took ran nothing there.
pub fn post(
    socket: &Path,
    path: &str,
    body: &str,
    accept: Duration,
    answer: Duration,
) -> Result<(u16, String), ClientError> {
    let start = Instant::now();
    let left = || {
        accept
            .checked_sub(start.elapsed())
            .filter(|d| !d.is_zero())
            .ok_or(ClientError::Timeout(accept.as_millis()))
    };
    let timed_out = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            ClientError::Timeout(accept.as_millis())
        }
        _ => ClientError::Io(e),
    };
    let mut s = connect(socket, accept)?;
    s.set_write_timeout(Some(left()?))?;
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: hookd\r\nConnection: close\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .map_err(timed_out)?;
    s.set_read_timeout(Some(left()?))?;
    let mut reader = std::io::BufReader::new(s.try_clone()?);
    let mut status_line = String::new();
    std::io::BufRead::read_line(&mut reader, &mut status_line).map_err(timed_out)?;
    if status_line.starts_with("HTTP/1.1 100") {
        // Taken: the rest of the interim answer is a blank line.
        let mut blank = String::new();
        std::io::BufRead::read_line(&mut reader, &mut blank)?;
        s.set_write_timeout(Some(answer))?;
        s.write_all(body.as_bytes())?;
        s.set_read_timeout(Some(answer))?;
        status_line.clear();
        match std::io::BufRead::read_line(&mut reader, &mut status_line) {
            Ok(0) => return Err(ClientError::Lost),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Err(ClientError::Lost)
            }
            Err(e) => return Err(e.into()),
        }
    }
    let mut raw = Vec::new();
    reader.read_to_end(&mut raw)?;
    let raw = String::from_utf8_lossy(&raw);
    let (_, body) = raw
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("the daemon's answer has no body"))?;
    let status = status_line
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
    let mut s = connect(socket, Duration::from_secs(2)).map_err(std::io::Error::other)?;
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
