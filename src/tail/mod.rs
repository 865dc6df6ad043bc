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

/// How much of the log is read at a time.
const READ_BYTES: usize = 1 << 20;

/// How often a followed file is read again.
const POLL: Duration = Duration::from_millis(200);

/// Hand each event of `path` (its rotated files `keep` deep first) that `query` asks for to
/// `each`; following, read what is appended (through a rotation, by [`crate::events::LogCursor`]:
/// nothing lost, nothing twice) until `each` returns false. An unreadable file is an error
/// unless following.
pub fn from_file(
    path: &Path,
    keep: usize,
    query: &Query,
    mut each: impl FnMut(&str) -> bool,
) -> Result<(), ReadError> {
    if !query.follow {
        if let Err(source) = crate::events::open_named(path) {
            let path = path.to_path_buf();
            return Err(ReadError { path, source });
        }
    }
    // The one reader of the log: a rotation under it loses and repeats nothing.
    let mut cursor = crate::events::LogCursor::named(path.to_path_buf(), keep);
    loop {
        let lines = cursor.read(query.since, u64::MAX, READ_BYTES);
        if lines.is_empty() {
            if !query.follow {
                return Ok(());
            }
            std::thread::sleep(POLL);
            continue;
        }
        for line in lines.iter().filter(|l| query.wants(&l.json)) {
            if !each(&line.json) {
                return Ok(());
            }
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
