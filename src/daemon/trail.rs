//! The audit trail a daemon leaves beside its socket (`hookd.events` beside `hookd.sock`):
//! the events file it writes and the highest number it served. A client that finds no daemon
//! appends its events to that file, so a session whose daemon went away stays in one audit
//! trail; a daemon started again numbers past what was served, even if the log was removed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Where a daemon writes its events, and the highest `seq` it served.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Trail {
    /// The events file (absolute).
    pub events: PathBuf,
    /// The highest event number served.
    pub seq: u64,
}

/// The trail's file beside `socket`.
pub fn trail_file(socket: &Path) -> PathBuf {
    socket.with_extension("events")
}

/// The marker of a client having said that it fell back (cleared when a daemon starts).
fn fallback_marker(socket: &Path) -> PathBuf {
    socket.with_extension("fallback")
}

/// Write the trail beside `socket` (0600, whole or not at all); a daemon without an events
/// file leaves none.
pub(crate) fn write(socket: &Path, trail: Option<&Trail>) -> std::io::Result<()> {
    let _ = std::fs::remove_file(fallback_marker(socket));
    match trail {
        Some(t) => {
            let json = serde_json::to_vec(t).map_err(std::io::Error::other)?;
            crate::atomic::write_private(&trail_file(socket), &json)
        }
        None => match std::fs::remove_file(trail_file(socket)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
    }
}

/// The trail the daemon at `socket` left, if it is this user's own private regular file and
/// names an events file that is one (absent, empty, or a hookd events log: its first line
/// numbered).
pub fn read(socket: &Path) -> Option<Trail> {
    use std::os::unix::fs::MetadataExt;
    let path = trail_file(socket);
    let meta = std::fs::symlink_metadata(&path).ok()?;
    let mine = meta.uid() == nix::unistd::getuid().as_raw() && meta.mode() & 0o077 == 0;
    if !meta.file_type().is_file() || !mine {
        return None;
    }
    let trail = read_own(socket)?;
    // Removed since: appending makes it anew.
    let mut head = Vec::new();
    match crate::events::open_to_read(&trail.events) {
        Ok(file) => {
            std::io::Read::read_to_end(&mut std::io::Read::take(file, 7), &mut head).ok()?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(_) => return None,
    }
    (trail.events.is_absolute() && (head.is_empty() || head == b"{\"seq\":")).then_some(trail)
}

/// True the first time a client falls back since the daemon at `socket` started: that client
/// says so on stderr, the next ones do not.
pub fn first_fallback(socket: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(fallback_marker(socket))
        .is_ok()
}

/// The highest number served at `log`, as the trail beside `socket` remembers it (0: none).
pub(crate) fn served(socket: &Path, log: &Path) -> u64 {
    match read_own(socket) {
        Some(t) if t.events == log => t.seq,
        _ => 0,
    }
}

/// The trail as written, whatever its events file is now (removed, for one).
fn read_own(socket: &Path) -> Option<Trail> {
    let file = crate::events::open_to_read(&trail_file(socket)).ok()?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, 64 * 1024), &mut bytes).ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trail_names_only_an_events_file() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("hookd.sock");
        let events = dir.path().join("events.jsonl");
        std::fs::write(&events, "{\"seq\":1}\n").unwrap();
        let trail = Trail {
            events: events.clone(),
            seq: 9,
        };
        write(&socket, Some(&trail)).unwrap();
        assert_eq!(read(&socket), Some(trail));
        assert_eq!(served(&socket, &events), 9);
        assert!(first_fallback(&socket));
        assert!(!first_fallback(&socket));
        // A trail pointing at a file that is not an events log is not followed.
        let rc = dir.path().join(".bashrc");
        std::fs::write(&rc, "alias ls=ls\n").unwrap();
        let bad = Trail { events: rc, seq: 1 };
        write(&socket, Some(&bad)).unwrap();
        assert_eq!(read(&socket), None);
        write(&socket, None).unwrap();
        assert_eq!(read(&socket), None);
        assert_eq!(served(&socket, &events), 0);
    }
}
