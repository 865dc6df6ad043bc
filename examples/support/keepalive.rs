//! One keep-alive HTTP/1.1 connection to `hookd serve`'s Unix socket, for the load generator
//! and the dashboard benchmark (the CLI's client closes each connection; load comes from
//! agents' adapters holding theirs).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// One keep-alive HTTP/1.1 connection, as an agent adapter would hold.
pub struct Conn {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl Conn {
    pub fn open(socket: &Path) -> std::io::Result<Conn> {
        let s = UnixStream::connect(socket)?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        Ok(Conn {
            reader: BufReader::new(s.try_clone()?),
            writer: s,
        })
    }

    /// POST a dispatch and read the whole answer; the status code.
    pub fn dispatch(&mut self, point: &str, session: &str) -> std::io::Result<u16> {
        let body = format!(r#"{{"point":"{point}","context":{{"session_id":"{session}"}}}}"#);
        write!(
            self.writer,
            "POST /v1/dispatch HTTP/1.1\r\nHost: hookd\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )?;
        self.answer()
    }

    /// GET /v1/health: the same HTTP round trip without a dispatch, the baseline.
    pub fn health(&mut self) -> std::io::Result<u16> {
        self.writer
            .write_all(b"GET /v1/health HTTP/1.1\r\nHost: hookd\r\n\r\n")?;
        self.answer()
    }

    fn answer(&mut self) -> std::io::Result<u16> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut length = 0;
        loop {
            line.clear();
            self.reader.read_line(&mut line)?;
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body)?;
        Ok(status)
    }
}
