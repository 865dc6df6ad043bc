//! The event stream read back for people (`hookd events`): from an events file and its rotated
//! ones, or from a running daemon; after a sequence number, one session's, following or not.

pub mod sessions;

use crate::display::visible;
use std::path::Path;
use std::time::Duration;

/// Which events, and whether to wait for more.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Query {
    /// Only events after this sequence number.
    pub since: u64,
    /// Only this session's events (and configuration events, which concern every session).
    pub session: Option<String>,
    /// Keep reading new events as they come.
    pub follow: bool,
}

impl Query {
    /// Events after `since`, of `session` if given; `follow` to keep reading.
    pub fn new(since: u64, session: Option<String>, follow: bool) -> Self {
        Query {
            since,
            session,
            follow,
        }
    }

    /// Whether `line` (one event's JSON) is asked for: after `since`, of the session.
    fn wants(&self, line: &str) -> bool {
        let v = serde_json::from_str::<serde_json::Value>(line).unwrap_or_default();
        v["seq"].as_u64().unwrap_or(0) > self.since
            && self.session.as_deref().is_none_or(|s| {
                v["session_id"]
                    .as_str()
                    .is_none_or(|id| crate::state::session_selects(s, id))
            })
    }
}

/// An events file that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {}: {source}", path.display())]
pub struct ReadError {
    /// The file.
    pub path: std::path::PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// How often a followed file is read again.
const POLL: Duration = Duration::from_millis(200);

/// The longest line read as an event; a longer one is passed over (no event of hookd's is:
/// it carries at most 64 KiB of each output).
const MOST_LINE: u64 = 4 * 1024 * 1024;

/// Hand each event of `path` (its rotated files `keep` deep first) that `query` asks for to
/// `each`; following, read what is appended (and start over when the file is rotated under
/// the reader) until `each` returns false. An unreadable file is an error unless following.
/// Files are read a line at a time, never whole, and a followed file only from where the last
/// read ended: memory is one line, whatever the log's size.
pub fn from_file(
    path: &Path,
    keep: usize,
    query: &Query,
    mut each: impl FnMut(&str) -> bool,
) -> Result<(), ReadError> {
    let files = crate::events::log_files(path, keep);
    for p in &files[..files.len() - 1] {
        if let Ok(file) = crate::events::open_named(p) {
            if matches!(lines_from(file, 0, true, query, &mut each), Ok(None)) {
                return Ok(());
            }
        }
    }
    // Where the next read starts, in which file (its device and inode).
    let (mut at, mut read) = (0u64, None);
    loop {
        let file = match crate::events::open_named(path) {
            Ok(f) => f,
            Err(source) if !query.follow => {
                let path = path.to_path_buf();
                return Err(ReadError { path, source });
            }
            Err(_) => {
                std::thread::sleep(POLL);
                continue;
            }
        };
        let meta = file.metadata().ok();
        let id = meta.as_ref().map(|m| {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        });
        if id != read || meta.is_some_and(|m| m.len() < at) {
            at = 0; // another file, or rotated under us
            read = id;
        }
        match lines_from(file, at, !query.follow, query, &mut each) {
            Ok(None) => return Ok(()),
            Ok(Some(next)) => at = next,
            Err(source) if !query.follow => {
                let path = path.to_path_buf();
                return Err(ReadError { path, source });
            }
            Err(_) => {}
        }
        if !query.follow {
            return Ok(());
        }
        std::thread::sleep(POLL);
    }
}

/// Hand the lines of `file` from byte `from` on that `query` wants to `each`, one line in
/// memory at a time: where the next read starts (after the last whole line), or `None` when
/// `each` said stop. A last line without its newline is one only when `tail` (the file is read
/// to its end once); otherwise its writer may not be done with it.
fn lines_from(
    file: std::fs::File,
    from: u64,
    tail: bool,
    query: &Query,
    each: &mut impl FnMut(&str) -> bool,
) -> std::io::Result<Option<u64>> {
    use std::io::{BufRead, Read, Seek};
    let mut r = std::io::BufReader::new(file);
    r.seek(std::io::SeekFrom::Start(from))?;
    let (mut at, mut line, mut overlong) = (from, Vec::new(), false);
    loop {
        line.clear();
        let n = (&mut r).take(MOST_LINE).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(Some(at));
        }
        let whole = line.last() == Some(&b'\n');
        if !whole && n as u64 == MOST_LINE {
            // Too long to be an event: passed over, to its newline.
            overlong = true;
            at += n as u64;
            continue;
        }
        if !whole && !tail {
            return Ok(Some(at));
        }
        at += n as u64;
        if std::mem::take(&mut overlong) {
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\n', '\r']);
        if query.wants(text) && !each(text) {
            return Ok(None);
        }
    }
}

/// How a daemon's stream ended.
#[cfg(feature = "daemon")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Ended {
    /// The last event's sequence number (`since` when none came).
    pub last: u64,
    /// The daemon said it shuts down (else it went away, or the stream was read to its end).
    pub shutdown: bool,
}

#[cfg(feature = "daemon")]
impl Ended {
    /// How a followed stream from the daemon at `socket` ended, and where to resume.
    pub fn said(&self, socket: &Path) -> String {
        format!(
            "hookd: the daemon at {} {}; the last event was {} (resume with --since {})",
            socket.display(),
            if self.shutdown {
                "shut down"
            } else {
                "went away"
            },
            self.last,
            self.last
        )
    }
}

/// Read the daemon's stream at `socket`: each event to `each`, each `missed` notice to
/// `missed`. The daemon filters by session itself.
#[cfg(feature = "daemon")]
pub fn from_daemon(
    socket: &Path,
    query: &Query,
    mut each: impl FnMut(&str),
    mut missed: impl FnMut(&str),
) -> std::io::Result<Ended> {
    let mut path = format!("/v1/events?since={}&follow={}", query.since, query.follow);
    if let Some(s) = &query.session {
        path.push_str(&format!("&session={}", percent_encode(s)));
    }
    let mut ended = Ended {
        last: query.since,
        shutdown: false,
    };
    crate::daemon::client::sse(socket, &path, None, |event, id, data| {
        match event {
            "missed" => missed(data),
            "shutdown" => ended.shutdown = true,
            _ => {
                ended.last = id.unwrap_or(ended.last);
                each(data);
            }
        }
        true
    })?;
    Ok(ended)
}

/// A query value, percent-encoded (everything but unreserved characters).
#[cfg(feature = "daemon")]
fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One event as printed: its JSON line as it is (`json`), else [`line()`].
pub fn shown(json_line: &str, json: bool) -> String {
    if json {
        json_line.to_string()
    } else {
        line(json_line)
    }
}

/// One event as a line for people: `#seq time session point type details`; anything that is
/// not an event's JSON is shown as it is, escaped.
pub fn line(json: &str) -> String {
    let Ok(e) = serde_json::from_str::<serde_json::Value>(json) else {
        return visible(json).into_owned();
    };
    let s = crate::events::Summary::of(&e);
    // The session, short enough for a column, as `--session` accepts it.
    let session = crate::state::session_shown(&s.session);
    // Names, commands and reasons come from a project's files: one line, nothing hidden.
    visible(&format!(
        "#{:<6} {:<12}  {session:<13} {:<16} {:<20} {}",
        s.seq, s.time, s.point, s.kind, s.what
    ))
    .into_owned()
}
