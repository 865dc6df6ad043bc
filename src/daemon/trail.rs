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
    /// The size past which the daemon rotated the file (`--events-max-bytes`): clients that
    /// append to it when the daemon is gone rotate it as it would.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
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

/// The trail the daemon at `socket` left, if it is this user's own private regular file (checked
/// on the descriptor read, opened without following a link) and names an events file that is a
/// hookd events log: there, non-empty, its first line numbered. A client appends to it and never
/// creates it: a trail naming a file that is not there (`~/.bash_login`), or an empty one, would
/// have hookd itself write the model's commands into a file a shell runs.
pub fn read(socket: &Path) -> Option<Trail> {
    let trail = read_own(socket)?;
    let mut head = Vec::new();
    let file = crate::events::open_to_read(&trail.events).ok()?;
    std::io::Read::read_to_end(&mut std::io::Read::take(file, 7), &mut head).ok()?;
    (trail.events.is_absolute() && head == b"{\"seq\":").then_some(trail)
}

/// The events file the daemon at `socket` writes, as its trail says, whatever it holds now
/// (a command may have emptied it): to hide from confined commands, never to append to.
pub fn events_of(socket: &Path) -> Option<PathBuf> {
    read_own(socket)
        .map(|t| t.events)
        .filter(|e| e.is_absolute())
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

/// The trail as written, whatever its events file is now (removed, for one), if its file is
/// this user's and no one else's (on the descriptor: nothing can swap it between check and read).
fn read_own(socket: &Path) -> Option<Trail> {
    use std::os::unix::fs::MetadataExt;
    let file = crate::events::open_to_read(&trail_file(socket)).ok()?;
    let meta = file.metadata().ok()?;
    if meta.uid() != nix::unistd::getuid().as_raw() || meta.mode() & 0o077 != 0 {
        return None;
    }
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
            max_bytes: Some(1 << 20),
        };
        write(&socket, Some(&trail)).unwrap();
        assert_eq!(read(&socket), Some(trail.clone()));
        assert_eq!(served(&socket, &events), 9);
        assert!(first_fallback(&socket));
        assert!(!first_fallback(&socket));
        // A trail pointing at a file that is not an events log is not followed.
        let rc = dir.path().join(".bashrc");
        std::fs::write(&rc, "alias ls=ls\n").unwrap();
        let bad = Trail {
            events: rc,
            seq: 1,
            max_bytes: None,
        };
        write(&socket, Some(&bad)).unwrap();
        assert_eq!(read(&socket), None);
        // Nor one naming a file that is not there, or an empty one (the client would make it,
        // or write the model's commands into a login script).
        for (name, text) in [("absent", None), (".bash_login", Some(""))] {
            let file = dir.path().join(name);
            if let Some(t) = text {
                std::fs::write(&file, t).unwrap();
            }
            let bad = Trail {
                events: file,
                seq: 1,
                max_bytes: None,
            };
            write(&socket, Some(&bad)).unwrap();
            assert_eq!(read(&socket), None, "{name}");
        }
        // Nor a trail file others may read or write.
        write(&socket, Some(&trail)).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::Permissions::from_mode(0o666);
        std::fs::set_permissions(trail_file(&socket), mode).unwrap();
        assert_eq!(read(&socket), None);
        write(&socket, None).unwrap();
        assert_eq!(read(&socket), None);
        assert_eq!(served(&socket, &events), 0);
    }
}
