//! `hookd events`: the event stream printed for people, from the daemon or a file.

use super::error::{Done, Error};
use super::{out, LOG_KEEP};
use hookd::display::visible;
use std::path::PathBuf;

/// `hookd events`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Keep printing new events as they come.
    #[arg(long, short)]
    pub(super) follow: bool,
    /// Only events after this sequence number.
    #[arg(long, value_name = "SEQ", default_value_t = 0)]
    pub(super) since: u64,
    /// Read this events file (and its rotated FILE.1 … FILE.3) instead of the daemon.
    #[arg(long, value_name = "FILE")]
    pub(super) file: Option<PathBuf>,
    /// Print the events' JSON lines instead.
    #[arg(long)]
    pub(super) json: bool,
    /// Only this session's events (and configuration events, which concern every session).
    #[arg(long, value_name = "ID")]
    pub(super) session: Option<String>,
}

/// `hookd events`.
pub(super) fn run(a: Args) -> Done {
    events_cmd(a.follow, a.since, a.file, a.json, a.session.as_deref())
}

/// One event as a line for people: `#seq time point type name details`.
pub(super) fn event_line(json: &str) -> String {
    let Ok(e) = serde_json::from_str::<serde_json::Value>(json) else {
        return visible(json).into_owned();
    };
    let s = hookd::events::Summary::of(&e);
    // The session, short enough for a column: its first 12 characters.
    let session = match s.session.char_indices().nth(12) {
        Some((i, _)) => format!("{}…", &s.session[..i]),
        None => s.session.clone(),
    };
    // Names, commands and reasons come from a project's files: one line, nothing hidden.
    visible(&format!(
        "#{:<6} {:<12}  {session:<13} {:<16} {:<20} {}",
        s.seq, s.time, s.point, s.kind, s.what
    ))
    .into_owned()
}

/// A query value, percent-encoded (everything but unreserved characters).
pub(super) fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

pub(super) fn events_cmd(
    follow: bool,
    since: u64,
    file: Option<PathBuf>,
    json: bool,
    session: Option<&str>,
) -> Done {
    // The daemon filters by session itself; an events file is filtered here, the same way.
    let of_session = |line: &str| {
        session.is_none_or(|s| {
            let v = serde_json::from_str::<serde_json::Value>(line).unwrap_or_default();
            v["session_id"].as_str().is_none_or(|id| {
                id == s || hookd::state::session_key(id) == hookd::state::session_key(s)
            })
        })
    };
    let print = |line: &str| {
        if !of_session(line) {
            return;
        }
        out(&format!(
            "{}\n",
            if json {
                line.to_string()
            } else {
                event_line(line)
            }
        ));
    };
    let seq_of = |line: &str| {
        serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|v| v["seq"].as_u64())
            .unwrap_or(0)
    };
    if let Some(path) = file {
        let mut seen = 0usize;
        let files = hookd::events::log_files(&path, LOG_KEEP);
        for p in &files[..files.len() - 1] {
            if let Ok(text) = std::fs::read_to_string(p) {
                text.lines().filter(|l| seq_of(l) > since).for_each(print);
            }
        }
        loop {
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if !follow => {
                    return Err(Error::Read {
                        path: path.to_path_buf(),
                        source: e,
                    })
                }
                Err(_) => String::new(),
            };
            let lines: Vec<&str> = text.lines().collect();
            if lines.len() < seen {
                seen = 0; // rotated under us
            }
            lines[seen..]
                .iter()
                .filter(|l| seq_of(l) > since)
                .for_each(|l| print(l));
            seen = lines.len();
            if !follow {
                return Ok(0);
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }
    let Some(socket) =
        hookd::daemon::default_socket().filter(|s| hookd::daemon::client::answers(s))
    else {
        return Err(Error::Cannot(
            "no hookd daemon answers (see `hookd serve`); to read an events file, pass --file FILE"
                .into(),
        ));
    };
    let mut path = format!("/v1/events?since={since}&follow={follow}");
    if let Some(s) = session {
        path.push_str(&format!("&session={}", percent_encode(s)));
    }
    let mut last = since;
    let mut shutdown = false;
    let result = hookd::daemon::client::sse(&socket, &path, None, |event, id, data| {
        match event {
            "missed" => eprintln!("hookd: {data}: events were missed"),
            "shutdown" => shutdown = true,
            _ => {
                last = id.unwrap_or(last);
                print(data);
            }
        }
        true
    });
    match result {
        // Following, the stream only ends when the daemon goes away.
        Ok(()) if follow => Err(Error::DaemonGone(format!(
            "hookd: the daemon at {} {}; the last event was {last} (resume with --since {last})",
            socket.display(),
            if shutdown { "shut down" } else { "went away" }
        ))),
        Ok(()) => Ok(0),
        Err(e) => Err(Error::Cannot(format!("reading the daemon's events: {e}"))),
    }
}
