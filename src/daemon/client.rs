//! Talking to a running daemon over its Unix socket: one HTTP/1.1 request per connection
//! (`Connection: close`), so the response ends where the stream ends, or requests one after
//! another on a kept [`Connection`]; response heads and chunk sizes are parsed by `httparse`. The only peer is hookd's own server; an async runtime would cost every
//! dispatch its startup. [`dispatch`] speaks the typed request ([`super::wire`]).
//!
//! The socket is trusted only when it is this user's: its owner, and the process answering on
//! it (`SO_PEERCRED`), must be our own uid. Another user's socket at our path is refused.

use std::io::{BufRead, BufReader, Read, Write};
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
    /// The request is larger than the daemon takes ([`super::MAX_REQUEST_BYTES`]).
    #[error("the request is {size} bytes, over its limit of {limit}")]
    TooLarge {
        /// The request's size.
        size: usize,
        /// The daemon's limit.
        limit: usize,
    },
    /// The daemon's answer is not HTTP as hookd's server writes it.
    #[error("the daemon's answer is malformed: {0}")]
    Malformed(Malformed),
    /// The exchange failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What is wrong with an answer that is not HTTP as hookd's server writes it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Malformed {
    /// The connection ended with no answer at all.
    #[error("no answer")]
    NoAnswer,
    /// A kept connection was closed before the next answer.
    #[error("the daemon closed the connection")]
    Closed,
    /// An answer on a kept connection gives no way to find its end.
    #[error("an answer on a kept connection says neither its length nor chunked")]
    NoLength,
    /// The connection ended inside the head.
    #[error("the head ends early")]
    HeadEndsEarly,
    /// The head is larger than any hookd writes.
    #[error("the head is over 64 KiB")]
    HeadTooLarge,
    /// The head could not be parsed whole.
    #[error("an incomplete head")]
    IncompleteHead,
    /// The head is not HTTP.
    #[error("{0}")]
    Http(httparse::Error),
    /// The status line has no code.
    #[error("no status")]
    NoStatus,
    /// `Content-Length` is not a number.
    #[error("a Content-Length that is no number")]
    BadLength,
    /// A chunk larger than this machine can address.
    #[error("a chunk too large")]
    ChunkTooLarge,
    /// A chunk's size is not hexadecimal.
    #[error("a malformed chunk size")]
    BadChunkSize,
}

/// The daemon's answer to a dispatch.
#[derive(Debug)]
#[non_exhaustive]
pub enum Answer {
    /// 200: the Outcome's JSON, as the daemon wrote it.
    Outcome(String),
    /// The daemon did not run it (another project 409, other settings 412, busy 503, …) and
    /// said why.
    Refused {
        /// The HTTP status.
        status: u16,
        /// The daemon's `error`, or its body when it had none.
        error: String,
    },
}

/// Dispatch `request` through the daemon at `socket` (see [`post`] for the two deadlines).
pub fn dispatch(
    socket: &Path,
    request: &super::wire::DispatchRequest,
    accept: Duration,
    answer: Duration,
) -> Result<Answer, ClientError> {
    let body = serde_json::to_string(request).map_err(|e| ClientError::Io(e.into()))?;
    if body.len() > super::MAX_REQUEST_BYTES {
        return Err(ClientError::TooLarge {
            size: body.len(),
            limit: super::MAX_REQUEST_BYTES,
        });
    }
    Ok(match post(socket, "/v1/dispatch", &body, accept, answer)? {
        (200, outcome) => Answer::Outcome(outcome),
        (status, text) => Answer::Refused {
            status,
            error: serde_json::from_str::<super::wire::ErrorBody>(&text)
                .map(|e| e.error)
                .unwrap_or(text),
        },
    })
}

/// Report a confined model call's connections to the daemon at `socket` (`POST
/// /v1/connections`): `Ok(None)` when it recorded them, else its refusal (status, reason).
pub fn connections(
    socket: &Path,
    request: &super::wire::ConnectionsRequest,
    accept: Duration,
) -> Result<Option<(u16, String)>, ClientError> {
    let body = serde_json::to_string(request).map_err(|e| ClientError::Io(e.into()))?;
    let limit = super::connections::MAX_CONNECTIONS_BYTES;
    if body.len() > limit {
        return Err(ClientError::TooLarge {
            size: body.len(),
            limit,
        });
    }
    Ok(
        match post(socket, "/v1/connections", &body, accept, accept)? {
            (200, _) => None,
            (status, text) => Some((
                status,
                serde_json::from_str::<super::wire::ErrorBody>(&text)
                    .map(|e| e.error)
                    .unwrap_or(text),
            )),
        },
    )
}

/// One request on an open connection (a Unix socket or loopback TCP) with `Connection: close`;
/// the status and the body, decoded from chunked transfer encoding when it is chunked. `Host`
/// defaults to `hookd` and a POST's `Content-Type` to JSON; `headers` add to or replace them.
/// For tools and tests that speak to the daemon directly: agents go through [`dispatch`].
pub fn exchange<S: Read + Write>(
    stream: &mut S,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<(u16, String), ClientError> {
    write_request(stream, method, path, headers, body, true)?;
    let mut reader = BufReader::new(stream);
    let head = read_head(&mut reader)?.ok_or(ClientError::Malformed(Malformed::NoAnswer))?;
    let text = read_body(&mut reader, &head, method, true)?;
    Ok((head.status, text))
}

/// A kept-alive connection to the daemon: requests one after another on one stream, as an
/// agent's adapter holding its connection would send them (the load generator, the benchmarks).
/// Each answer must say where it ends (`Content-Length` or chunked), as hookd's server's do.
pub struct Connection<S: Read + Write> {
    stream: BufReader<S>,
}

impl Connection<UnixStream> {
    /// Connect to the daemon at `socket` if it and the process behind it are this user's;
    /// `timeout` bounds the connect and each read.
    pub fn open(socket: &Path, timeout: Duration) -> Result<Self, ClientError> {
        let s = connect(socket, timeout)?;
        s.set_read_timeout(Some(timeout))?;
        Ok(Connection::new(s))
    }
}

impl<S: Read + Write> Connection<S> {
    /// Keep `stream` (a Unix socket or loopback TCP) for requests.
    pub fn new(stream: S) -> Self {
        Connection {
            stream: BufReader::new(stream),
        }
    }

    /// One request on the kept connection, with the headers [`exchange`] adds; the status and
    /// the body.
    pub fn request(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Result<(u16, String), ClientError> {
        // A whole answer was read before, so nothing of it waits in the buffer.
        write_request(self.stream.get_mut(), method, path, headers, body, false)?;
        let head = read_head(&mut self.stream)?.ok_or(ClientError::Malformed(Malformed::Closed))?;
        let text = read_body(&mut self.stream, &head, method, false)?;
        Ok((head.status, text))
    }
}

/// Write one request: `close` asks the server to end the connection after its answer.
fn write_request(
    stream: &mut impl Write,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
    close: bool,
) -> Result<(), ClientError> {
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\n{}Content-Length: {}\r\n",
        if close { "Connection: close\r\n" } else { "" },
        body.len()
    );
    if !has("host") {
        req.push_str("Host: hookd\r\n");
    }
    if method == "POST" && !has("content-type") {
        req.push_str("Content-Type: application/json\r\n");
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    stream.write_all(req.as_bytes())?;
    Ok(())
}

/// The body after `head`: chunked, or as long as it says, or (`to_end`, the connection closing
/// after it) whatever comes until the end. An answer to HEAD, 1xx, 204 and 304 has none.
fn read_body(
    reader: &mut impl BufRead,
    head: &Head,
    method: &str,
    to_end: bool,
) -> Result<String, ClientError> {
    if method == "HEAD" || head.status < 200 || head.status == 204 || head.status == 304 {
        return Ok(String::new());
    }
    let mut raw = Vec::new();
    if head.chunked {
        while let Some(piece) = next_chunk(reader)? {
            raw.extend_from_slice(&piece);
        }
        if !to_end {
            // The trailer section, up to its blank line, before the next answer.
            let mut line = Vec::new();
            while reader.read_until(b'\n', &mut line)? > 0 && line != b"\r\n" && line != b"\n" {
                line.clear();
            }
        }
    } else if let (Some(length), false) = (head.length, to_end) {
        raw.resize(length, 0);
        reader.read_exact(&mut raw)?;
    } else if to_end {
        reader.read_to_end(&mut raw)?;
    } else {
        return Err(ClientError::Malformed(Malformed::NoLength));
    }
    Ok(String::from_utf8_lossy(&raw).into_owned())
}

/// A response's status and the headers hookd's client reads.
struct Head {
    status: u16,
    chunked: bool,
    /// `Content-Length`, when it says one.
    length: Option<usize>,
}

/// Read a response head (status line and headers, up to the blank line) and parse it.
fn read_head(reader: &mut impl BufRead) -> Result<Option<Head>, ClientError> {
    let mut raw = Vec::new();
    loop {
        let before = raw.len();
        if reader.read_until(b'\n', &mut raw)? == 0 {
            // The connection ended before a head (none at all: the caller decides what it means).
            return if raw.is_empty() {
                Ok(None)
            } else {
                Err(ClientError::Malformed(Malformed::HeadEndsEarly))
            };
        }
        if raw.len() > 64 * 1024 {
            return Err(ClientError::Malformed(Malformed::HeadTooLarge));
        }
        if &raw[before..] == b"\r\n" || &raw[before..] == b"\n" {
            break;
        }
    }
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    match response.parse(&raw) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => {
            return Err(ClientError::Malformed(Malformed::IncompleteHead))
        }
        Err(e) => return Err(ClientError::Malformed(Malformed::Http(e))),
    }
    let status = response
        .code
        .ok_or(ClientError::Malformed(Malformed::NoStatus))?;
    let chunked = response.headers.iter().any(|h| {
        h.name.eq_ignore_ascii_case("transfer-encoding")
            && String::from_utf8_lossy(h.value)
                .to_ascii_lowercase()
                .contains("chunked")
    });
    let length = response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .map(|h| {
            std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .ok_or(ClientError::Malformed(Malformed::BadLength))
        })
        .transpose()?;
    Ok(Some(Head {
        status,
        chunked,
        length,
    }))
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
    let mut reader = BufReader::new(s.try_clone()?);
    let mut head = read_head(&mut reader)
        .map_err(|e| match e {
            ClientError::Io(io) => timed_out(io),
            e => e,
        })?
        .ok_or(ClientError::Malformed(Malformed::NoAnswer))?;
    if head.status == 100 {
        // Taken: the dispatch runs there from now on.
        s.set_write_timeout(Some(answer))?;
        s.write_all(body.as_bytes())?;
        s.set_read_timeout(Some(answer))?;
        head = match read_head(&mut reader) {
            Ok(Some(h)) => h,
            Ok(None) => return Err(ClientError::Lost),
            Err(ClientError::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Err(ClientError::Lost)
            }
            Err(e) => return Err(e),
        };
    }
    let text = if head.chunked {
        let mut text = String::new();
        while let Some(piece) = next_chunk(&mut reader)? {
            text.push_str(&String::from_utf8_lossy(&piece));
        }
        text
    } else {
        let mut raw = Vec::new();
        reader.read_to_end(&mut raw)?;
        String::from_utf8_lossy(&raw).into_owned()
    };
    Ok((head.status, text))
}

/// Open `GET path` and hand each Server-Sent Event (`event` name, `id`, `data`) to `each` until
/// the stream ends, `each` returns false, or (with `quiet`) nothing came for that long. The body
/// is decoded from chunked transfer encoding (as hookd's server sends event streams) or read as
/// it comes otherwise.
pub fn sse(
    socket: &Path,
    path: &str,
    quiet: Option<Duration>,
    mut each: impl FnMut(&str, Option<u64>, &str) -> bool,
) -> std::io::Result<()> {
    let mut s = connect(socket, Duration::from_secs(2)).map_err(std::io::Error::other)?;
    s.set_read_timeout(quiet)?;
    let quiet_ended = |e: &std::io::Error| {
        quiet.is_some()
            && matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            )
    };
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: hookd\r\nAccept: text/event-stream\r\n\r\n"
    )?;
    let mut r = BufReader::new(s);
    let head = read_head(&mut r)
        .map_err(std::io::Error::other)?
        .ok_or_else(|| std::io::Error::other("the daemon closed the connection"))?;
    if head.status != 200 {
        return Err(std::io::Error::other(format!(
            "the daemon answered {}",
            head.status
        )));
    }
    let chunked = head.chunked;
    let mut text = String::new();
    loop {
        // Next piece of the body.
        let piece = if chunked {
            match next_chunk(&mut r) {
                Ok(Some(chunk)) => chunk,
                Ok(None) => return Ok(()),
                Err(ClientError::Io(e)) if quiet_ended(&e) => return Ok(()),
                Err(e) => return Err(std::io::Error::other(e)),
            }
        } else {
            let mut chunk = vec![0u8; 8192];
            let n = match r.read(&mut chunk) {
                Err(e) if quiet_ended(&e) => return Ok(()),
                n => n?,
            };
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

/// The next chunk of a chunked body (`httparse` reads its size line); `None` at the last one.
fn next_chunk(r: &mut impl BufRead) -> Result<Option<Vec<u8>>, ClientError> {
    let mut line = Vec::new();
    if r.read_until(b'\n', &mut line)? == 0 {
        return Ok(None);
    }
    let size = match httparse::parse_chunk_size(&line) {
        Ok(httparse::Status::Complete((_, size))) => {
            usize::try_from(size).map_err(|_| ClientError::Malformed(Malformed::ChunkTooLarge))?
        }
        _ => return Err(ClientError::Malformed(Malformed::BadChunkSize)),
    };
    if size == 0 {
        return Ok(None);
    }
    let mut chunk = vec![0u8; size + 2]; // the chunk and its CRLF
    r.read_exact(&mut chunk)?;
    chunk.truncate(size);
    Ok(Some(chunk))
}
