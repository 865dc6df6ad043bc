//! The events log on disk: JSON lines appended by one process (`RotatingLog`, rotated by size:
//! `FILE` → `FILE.1` → … → `FILE.{keep}`) or shared by many (`SharedLog`, numbered under a
//! lock), opened as regular files only, readable by this user only; and what a reader needs of
//! it (the rotated files in order, the highest `seq`).

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::file::{cannot_grow, ends_torn, open_to_append, open_to_read, MOST_SEQ};
use super::{EventSink, Stamped};

/// JSON lines appended to a file that other processes append to as well: an agent starts one
/// `hookd adapter` (or `hookd dispatch`) per event, each its own stream. Each line is numbered
/// after the file's last one, under an exclusive lock on the file (flock(2)), so `seq` in the
/// file is gap-free and increasing whichever process wrote the line; the `Stamped` handed to
/// other sinks keeps this process's numbering.
pub struct SharedLog {
    file: Mutex<File>,
    path: std::path::PathBuf,
    failed: AtomicBool,
    lost: Lost,
    /// Rotated past this size, keeping this many old files (a daemon's log, appended to while
    /// the daemon is gone: [`SharedLog::rotating`]).
    rotate: Option<(u64, usize)>,
}

/// Counts the events an events file could not take: the caller's decision was not recorded
/// (`--fail-closed` then denies rather than decide on the unrecorded). Shared by clones.
#[derive(Clone, Debug, Default)]
pub struct Lost(Arc<AtomicU64>);

impl Lost {
    /// Whether an event was lost since this was made.
    pub fn any(&self) -> bool {
        self.count() > 0
    }

    /// How many events were lost since this was made.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Say that an event was lost.
    pub fn set(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

impl SharedLog {
    /// Append to `path`, creating it 0600 (never through a symlink, as every events file).
    pub fn open(path: &Path) -> std::io::Result<Self> {
        Ok(SharedLog {
            file: Mutex::new(open_to_append(path)?),
            path: path.to_path_buf(),
            failed: AtomicBool::new(false),
            lost: Lost::default(),
            rotate: None,
        })
    }

    /// Rotate the file as a daemon's [`RotatingLog`] does (`FILE` → `FILE.1` … `FILE.{keep}`)
    /// when a line would take it past `max_bytes`: the processes sharing it rotate under its
    /// lock, and numbering goes on from the rotated file.
    pub fn rotating(mut self, max_bytes: u64, keep: usize) -> Self {
        self.rotate = Some((max_bytes, keep.max(1)));
        self
    }

    /// Whether `path` still names `file`.
    fn names(&self, file: &File) -> std::io::Result<bool> {
        let ours = file.metadata()?;
        Ok(std::fs::symlink_metadata(&self.path)
            .is_ok_and(|m| (m.dev(), m.ino()) == (ours.dev(), ours.ino())))
    }

    /// The last `seq` written: the file's, or, when it is empty (just rotated), the rotated one's.
    fn last_seq(&self, file: &mut File) -> std::io::Result<(u64, bool)> {
        let (last, torn) = last_seq_of(file)?;
        if last == 0 && self.rotate.is_some() && file.metadata()?.len() == 0 {
            let rotated = std::path::PathBuf::from(format!("{}.1", self.path.display()));
            if let Ok(mut older) = open_to_read(&rotated) {
                return Ok((last_seq_of(&mut older)?.0, false));
            }
        }
        Ok((last, torn))
    }

    /// Set when an event could not be written.
    pub fn lost(&self) -> Lost {
        self.lost.clone()
    }

    /// Report lost events to `lost` (shared with the caller) rather than a flag of its own.
    pub fn reporting(mut self, lost: Lost) -> Self {
        self.lost = lost;
        self
    }

    /// The file this log was opened on, if `path` still names it (it was not removed, replaced
    /// or renamed away since): else, that path opened again.
    fn current(&self, file: &mut File) -> std::io::Result<()> {
        let (now, ours) = (std::fs::symlink_metadata(&self.path), file.metadata()?);
        if !now.is_ok_and(|m| (m.dev(), m.ino()) == (ours.dev(), ours.ino())) {
            *file = open_to_append(&self.path)?;
        }
        Ok(())
    }

    fn append(&self, file: &mut File, event: &Stamped) -> std::io::Result<()> {
        // Another process may rotate the file while this one waits for its lock: the file the
        // path names then, is the one written to.
        for _ in 0..8 {
            self.current(file)?;
            lock_within(file, LOCK_WAIT)?;
            if !self.names(file)? {
                file.unlock()?;
                continue;
            }
            let full = match self.rotate {
                Some((max, _)) => {
                    let size = file.metadata()?.len();
                    size > 0 && size + event.to_json().len() as u64 + 2 > max
                }
                None => false,
            };
            if !full {
                return self.append_locked(file, event);
            }
            let rotated = self.rotate_files();
            let unlocked = file.unlock();
            rotated.and(unlocked)?;
        }
        Err(std::io::Error::other(
            "the events file kept being rotated by other processes",
        ))
    }

    /// `FILE.{keep}` goes, `FILE.{n}` becomes `FILE.{n+1}`, `FILE` becomes `FILE.1` (under the
    /// file's lock: the next append opens `FILE` anew).
    fn rotate_files(&self) -> std::io::Result<()> {
        let keep = self.rotate.map_or(1, |(_, keep)| keep);
        let numbered = |n: usize| std::path::PathBuf::from(format!("{}.{n}", self.path.display()));
        let _ = std::fs::remove_file(numbered(keep));
        for n in (1..keep).rev() {
            let _ = std::fs::rename(numbered(n), numbered(n + 1));
        }
        std::fs::rename(&self.path, numbered(1))
    }

    /// Number and write `event` after the file's last line, the file locked.
    fn append_locked(&self, file: &mut File, event: &Stamped) -> std::io::Result<()> {
        let written = (|| {
            let (last, torn) = self.last_seq(file)?;
            if last >= MOST_SEQ {
                return Err(cannot_grow(&self.path, last));
            }
            // `seq` is the first field: `{"seq":N,...`; renumber without a second serialization.
            let json = event.to_json();
            let rest = json.split_once(',').map_or("}", |(_, rest)| rest);
            let line = format!(
                "{}{{\"seq\":{},{rest}\n",
                if torn { "\n" } else { "" },
                last + 1
            );
            file.write_all(line.as_bytes())
        })();
        let unlocked = file.unlock();
        written.and(unlocked)
    }
}

/// How long a writer waits for the events file's lock: far longer than any writer holds it
/// (one line), far shorter than the agents' hook timeouts.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// `file`'s exclusive lock, waited for at most `wait`: a process that holds it (a lock taken to
/// hold up every hook) makes the event lost, said, rather than the agent's call wait on it.
fn lock_within(file: &File, wait: std::time::Duration) -> std::io::Result<()> {
    let until = std::time::Instant::now() + wait;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < until => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(std::io::Error::other(format!(
                    "another process has held its lock for over {} s",
                    wait.as_secs()
                )))
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
}

impl EventSink for SharedLog {
    fn emit(&self, event: &Stamped) {
        let Ok(mut file) = self.file.lock() else {
            self.lost.set();
            return;
        };
        if let Err(e) = self.append(&mut file, event) {
            self.lost.set();
            if !self.failed.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "cannot write events to {}: {e}; events are being lost",
                    self.path.display()
                );
            }
        }
    }
}

/// The `seq` of the last numbered line of an events file (0 when none is), and whether the
/// file ends in a torn line (a writer that died mid-line, a full disk), which the next line
/// must not be glued to. Reads back from the end only as far as the last lines' starts.
fn last_seq_of(file: &mut File) -> std::io::Result<(u64, bool)> {
    use std::io::{Read, Seek, SeekFrom};
    // A line that does not start with a number (a torn or foreign line) is passed over; after
    // this many the file is taken as holding no numbered line.
    const LINES: usize = 64;
    let len = file.seek(SeekFrom::End(0))?;
    if len == 0 {
        return Ok((0, false));
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    let torn = last[0] != b'\n';
    // The line's content is [start, end): without its own terminator.
    let mut end = if torn { len } else { len - 1 };
    for _ in 0..LINES {
        let start = newline_before(file, end)?.map_or(0, |p| p + 1);
        let mut head = [0u8; 32];
        file.seek(SeekFrom::Start(start))?;
        let got = file.read(&mut head)?;
        if let Some(seq) = seq_prefix(&head[..got]) {
            return Ok((seq, torn));
        }
        if start == 0 {
            break;
        }
        end = start - 1;
    }
    Ok((0, torn))
}

/// The position of the last `\n` before `end`, reading backwards in chunks.
fn newline_before(file: &mut File, end: u64) -> std::io::Result<Option<u64>> {
    use std::io::{Read, Seek, SeekFrom};
    const CHUNK: u64 = 8192;
    let mut buf = Vec::new();
    let mut at = end;
    while at > 0 {
        let from = at.saturating_sub(CHUNK);
        buf.resize((at - from) as usize, 0);
        file.seek(SeekFrom::Start(from))?;
        file.read_exact(&mut buf)?;
        if let Some(i) = buf.iter().rposition(|b| *b == b'\n') {
            return Ok(Some(from + i as u64));
        }
        at = from;
    }
    Ok(None)
}

/// `N` of a line starting `{"seq":N`.
fn seq_prefix(head: &[u8]) -> Option<u64> {
    let digits = head.strip_prefix(b"{\"seq\":")?;
    let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    std::str::from_utf8(&digits[..n]).ok()?.parse().ok()
}

/// The rotated files of an events log, oldest first: `FILE.{keep}` … `FILE.1`, `FILE`.
pub fn log_files(path: &Path, keep: usize) -> Vec<std::path::PathBuf> {
    (1..=keep)
        .rev()
        .map(|n| std::path::PathBuf::from(format!("{}.{n}", path.display())))
        .chain([path.to_path_buf()])
        .collect()
}

/// The highest `seq` in a log: a daemon restarted on the same log goes on numbering from there,
/// so a subscriber's `Last-Event-ID` still means one event. The maximum of the newest readable
/// file's tail, not its last line: a line written by an older hookd may be out of order. Only
/// regular files are read: a FIFO or a device among the rotated files is passed over.
pub fn last_seq_in_log(path: &Path, keep: usize) -> u64 {
    use std::io::{Seek, SeekFrom};
    for file in log_files(path, keep).iter().rev() {
        let Ok(mut f) = open_to_read(file) else {
            continue;
        };
        // Read the tail, not the whole file: numbers grow, so the maximum is near the end.
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)));
        let mut tail = Vec::new();
        if std::io::Read::read_to_end(&mut f, &mut tail).is_err() {
            continue;
        }
        let highest = String::from_utf8_lossy(&tail)
            .lines()
            .filter_map(|l| {
                serde_json::from_str::<serde_json::Value>(l)
                    .ok()
                    .and_then(|v| v["seq"].as_u64())
            })
            .max();
        if let Some(seq) = highest {
            return seq;
        }
    }
    0
}

/// JSON lines to a file that is rotated by size: `FILE` → `FILE.1` → … → `FILE.{keep}`.
///
/// Durability: each event is one `write(2)` of a whole line, made before the dispatch goes on,
/// so a process that is killed (even with SIGKILL) leaves every emitted event complete in the
/// file. The file is not fsync'd per event: a power loss can lose the last events.
///
/// Faults: a log removed, renamed away or replaced under it is noticed at the next event (one
/// `lstat` of the path) and opened again; a write that failed part-way (a full disk) leaves a
/// torn line, which the next line is never glued to; a FIFO, device or link where the log goes
/// is refused, never waited on.
pub struct RotatingLog {
    path: std::path::PathBuf,
    max_bytes: u64,
    keep: usize,
    state: Mutex<Option<Open>>,
    failed: AtomicBool,
    lost: Lost,
}

/// The file being appended to: its identity (to notice it was replaced), size, and whether it
/// ends in a torn line.
struct Open {
    file: File,
    id: (u64, u64),
    size: u64,
    torn: bool,
}

impl Open {
    fn at(path: &Path) -> std::io::Result<Open> {
        let file = open_to_append(path)?;
        let m = file.metadata()?;
        Ok(Open {
            torn: ends_torn(&file)?,
            id: (m.dev(), m.ino()),
            size: m.len(),
            file,
        })
    }

    /// Whether `path` still names this file.
    fn is_at(&self, path: &Path) -> bool {
        std::fs::symlink_metadata(path).is_ok_and(|m| (m.dev(), m.ino()) == self.id)
    }
}

impl RotatingLog {
    /// Append to `path`, rotating when it would grow past `max_bytes`, keeping `keep` old files.
    /// A log whose last event's number cannot grow (see [`super::file::MOST_SEQ`]) is refused.
    pub fn open(path: &Path, max_bytes: u64, keep: usize) -> std::io::Result<Self> {
        let last = last_seq_in_log(path, keep.max(1));
        if last >= MOST_SEQ {
            return Err(cannot_grow(path, last));
        }
        Ok(RotatingLog {
            path: path.to_path_buf(),
            max_bytes,
            keep: keep.max(1),
            state: Mutex::new(Some(Open::at(path)?)),
            failed: AtomicBool::new(false),
            lost: Lost::default(),
        })
    }

    /// Set when an event could not be written.
    pub fn lost(&self) -> Lost {
        self.lost.clone()
    }

    fn rotate(&self) -> std::io::Result<Open> {
        let numbered = |n: usize| std::path::PathBuf::from(format!("{}.{n}", self.path.display()));
        let _ = std::fs::remove_file(numbered(self.keep));
        for n in (1..self.keep).rev() {
            let _ = std::fs::rename(numbered(n), numbered(n + 1));
        }
        std::fs::rename(&self.path, numbered(1))?;
        Open::at(&self.path)
    }

    /// Write `line` to the log as it is now: opened again when it vanished or was replaced,
    /// rotated when full, after a newline when it ends torn.
    fn write(&self, state: &mut Option<Open>, line: &str) -> std::io::Result<()> {
        let reopen = match state {
            Some(open) if open.is_at(&self.path) => false,
            Some(_) => {
                tracing::warn!(
                    "the events file {} was removed or replaced; writing to it anew",
                    self.path.display()
                );
                true
            }
            None => true,
        };
        if reopen {
            *state = None;
            *state = Some(Open::at(&self.path)?);
        }
        let Some(open) = state.as_mut() else {
            return Ok(());
        };
        if open.size > 0 && open.size + line.len() as u64 > self.max_bytes {
            *state = None;
            *state = Some(self.rotate()?);
        }
        let Some(open) = state.as_mut() else {
            return Ok(());
        };
        let mut bytes = Vec::with_capacity(line.len() + 2);
        if open.torn {
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        // A write that fails part-way leaves a torn line: the next open sees it.
        open.file.write_all(&bytes)?;
        open.size += bytes.len() as u64;
        open.torn = false;
        Ok(())
    }
}

impl EventSink for RotatingLog {
    fn emit(&self, event: &Stamped) {
        let line = event.to_json();
        let Ok(mut guard) = self.state.lock() else {
            self.lost.set();
            return;
        };
        if let Err(e) = self.write(&mut guard, &line) {
            *guard = None; // open again (and see how it ends) at the next event
            self.lost.set();
            if !self.failed.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "cannot write events to {}: {e}; events are being lost",
                    self.path.display()
                );
            }
        } else {
            self.failed.store(false, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{ConfigReloaded, Event};

    fn event(seq: u64) -> Stamped {
        Stamped {
            seq,
            timestamp: "2026-11-25T00:00:00.000Z".into(),
            event: Event::ConfigReloaded(ConfigReloaded {
                sources: vec![],
                cause: crate::kinds::ReloadCause::Sighup,
                project: None,
                trust: None,
                trust_was: None,
            }),
        }
    }

    fn seqs(path: &Path) -> Vec<u64> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["seq"]
                    .as_u64()
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn a_removed_or_replaced_log_is_written_anew_and_a_torn_line_ended_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let log = RotatingLog::open(&path, 1 << 20, 3).unwrap();
        log.emit(&event(1));
        std::fs::remove_file(&path).unwrap();
        log.emit(&event(2));
        assert_eq!(seqs(&path), [2]);
        // Replaced by another file (a rename over it): that file is the log now.
        let other = dir.path().join("other");
        std::fs::write(&other, "{\"seq\":2}\n").unwrap();
        std::fs::rename(&other, &path).unwrap();
        log.emit(&event(3));
        assert_eq!(seqs(&path), [2, 3]);
        // A torn line (a full disk, a writer killed mid-line): the next line starts anew.
        use std::io::Write as _;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"seq\":4,\"timest").unwrap();
        let log = RotatingLog::open(&path, 1 << 20, 3).unwrap();
        log.emit(&event(5));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("{\"seq\":4,\"timest\n{\"seq\":5,\"timestamp\":\"2026-11-25T00:00:00.000Z\",\"type\":\"config_reloaded\",\"sources\":[],\"cause\":\"sighup\"}\n"), "{text}");
        assert!(!log.lost().any());
        // Replaced by a FIFO: refused without blocking, the event counted lost.
        std::fs::remove_file(&path).unwrap();
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
        log.emit(&event(6));
        assert!(log.lost().any());
    }

    #[test]
    fn a_log_whose_numbering_cannot_grow_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, format!("{{\"seq\":{}}}\n", u64::MAX)).unwrap();
        let e = RotatingLog::open(&path, 1 << 20, 3)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(e, format!("its last event is numbered 18446744073709551615, and hookd numbers events up to 9007199254740991: move {} (and its rotated files) away to start a new log", path.display()));
        let shared = SharedLog::open(&path).unwrap();
        shared.emit(&event(1));
        assert!(shared.lost().any());
        assert_eq!(seqs(&path), [u64::MAX]);
    }

    #[test]
    fn a_fifo_among_the_rotated_files_is_passed_over_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(dir.path().join("events.jsonl.1"), "{\"seq\":7}\n").unwrap();
        let fifo = dir.path().join("events.jsonl.3");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(last_seq_in_log(&path, 3), 7);
        let e = RotatingLog::open(&path, 1 << 20, 3)
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("it is a FIFO, not a regular file"), "{e}");
    }
}
