//! `hookd events`: the event stream printed for people, from the daemon or a file.

use super::error::{Done, Error};
use super::{out, LOG_KEEP};
use crate::tail::sessions::Sessions;
use crate::tail::{self, Query};
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
    /// Only this session's events (and configuration events, which concern every session);
    /// an id cut with `…`, as the events are shown, selects every session it begins.
    #[arg(long, value_name = "ID")]
    pub(super) session: Option<String>,
    /// Print one line per session instead: calls allowed and refused, hooks failed and
    /// skipped, continues refused, configuration errors. Exit 1 when a session ended badly (a
    /// post_session hook's last run failed or did not run, a continue was refused, the
    /// configuration did not load).
    #[arg(long, conflicts_with_all = ["follow", "json"])]
    pub(super) summary: bool,
}

/// `hookd events`.
pub(super) fn run(a: Args) -> Done {
    if a.summary {
        return summary(a);
    }
    let query = Query::new(a.since, a.session, a.follow);
    let print = |line: &str| out(&format!("{}\n", tail::shown(line, a.json)));
    if let Some(path) = a.file {
        let read = tail::from_file(&path, LOG_KEEP, &query, |l| {
            print(l);
            true
        });
        return read.map(|()| 0).map_err(Error::library);
    }
    let socket = daemon()?;
    let missed = |data: &str| eprintln!("hookd: {data}: events were missed");
    match tail::from_daemon(&socket, &query, print, missed) {
        // Following, the stream only ends when the daemon goes away.
        Ok(ended) if a.follow => Err(Error::DaemonGone(ended.said(&socket))),
        Ok(_) => Ok(0),
        Err(e) => Err(Error::Cannot(format!("reading the daemon's events: {e}"))),
    }
}

/// The socket of the daemon that answers, or what to do instead.
fn daemon() -> Result<PathBuf, Error> {
    let socket = crate::host::Host::of_this_process().socket();
    socket
        .filter(|s| crate::daemon::client::answers(s))
        .ok_or_else(|| {
            Error::Cannot(
                "no hookd daemon answers (see `hookd serve`); to read an events file, pass --file FILE"
                    .into(),
            )
        })
}

/// `hookd events --summary`: one line per session; 1 when one ended badly.
fn summary(a: Args) -> Done {
    let query = Query::new(a.since, a.session, false);
    let mut sessions = Sessions::default();
    if let Some(path) = a.file {
        tail::from_file(&path, LOG_KEEP, &query, |l| {
            sessions.add(l);
            true
        })
        .map_err(Error::library)?;
    } else {
        let socket = daemon()?;
        let missed = |data: &str| eprintln!("hookd: {data}: events were missed");
        tail::from_daemon(&socket, &query, |l| sessions.add(l), missed)
            .map_err(|e| Error::Cannot(format!("reading the daemon's events: {e}")))?;
    }
    for s in sessions.all() {
        out(&format!("{}\n", s.line()));
    }
    Ok(i32::from(sessions.any_ended_badly()))
}
