//! The events log on disk: JSON lines appended by one process (`RotatingLog`, rotated by size:
//! `FILE` → `FILE.1` → … → `FILE.{keep}`) or shared by many (`SharedLog`, numbered under a
//! lock), opened as regular files only, readable by this user only; and what a reader needs of
//! it (the rotated files in order, the highest `seq`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::{EventSink, Stamped};

/// JSON lines appended to a file that other processes append to as well: an agent starts one
/// `hookd adapter` (or `hookd dispatch`) per event, each its own stream. Each line is numbered
/// after the file's last one, under an exclusive lock on the file (flock(2)), so `seq` in the
/// file is gap-free and increasing whichever process wrote the line; the `Stamped` handed to
/// other sinks keeps this process's numbering.
pub struct SharedLog {
    file: Mutex<File>,
    name: String,
    failed: AtomicBool,
}

impl SharedLog {
    /// Append to `path`, creating it 0600 (never through a symlink, as every events file).
    pub fn open(path: &Path) -> std::io::Result<Self> {
        Ok(SharedLog {
            file: Mutex::new(open_log(path)?),
            name: path.display().to_string(),
            failed: AtomicBool::new(false),
        })
    }

    fn append(file: &mut File, event: &Stamped) -> std::io::Result<()> {
        file.lock()?;
        let written = (|| {
            let (last, torn) = last_seq_of(file)?;
            // `seq` is the first field: `{"seq":N,...`; renumber without a second serialization.
            let json = event.to_json();
            let rest = json.split_once(',').map_or("}", |(_, rest)| rest);
            let line = format!(
                "{}{{\"seq\":{},{rest}\n",
                if torn { "\n" } else { "" },
                last.saturating_add(1) // a line claiming u64::MAX must not wrap the file to 0
            );
            file.write_all(line.as_bytes())
        })();
        let unlocked = file.unlock();
        written.and(unlocked)
    }
}

impl EventSink for SharedLog {
    fn emit(&self, event: &Stamped) {
        let Ok(mut file) = self.file.lock() else {
            return;
        };
        if let Err(e) = Self::append(&mut file, event) {
            if !self.failed.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "cannot write events to {}: {e}; events are being lost",
                    self.name
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
/// file's tail, not its last line: a line written by an older hookd may be out of order.
pub fn last_seq_in_log(path: &Path, keep: usize) -> u64 {
    use std::io::{Seek, SeekFrom};
    for file in log_files(path, keep).iter().rev() {
        let Ok(mut f) = File::open(file) else {
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
pub struct RotatingLog {
    path: std::path::PathBuf,
    max_bytes: u64,
    keep: usize,
    state: Mutex<Option<(File, u64)>>,
    failed: AtomicBool,
}

/// Open an events file to append to. Events carry commands and their output: the file is
/// readable by this user only (created 0600, an existing one narrowed to 0600), and never
/// opened through a symlink (one planted where the log goes would make hookd append to, and
/// widen, whatever it points at).
fn open_log(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::PermissionsExt;
    let f = OpenOptions::new()
        .create(true)
        .append(true)
        .read(true) // SharedLog reads back the last line's number
        .mode(0o600)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) {
                std::io::Error::new(
                    e.kind(),
                    "it is a symbolic link, and hookd never writes events through one",
                )
            } else {
                e
            }
        })?;
    if f.metadata()?.permissions().mode() & 0o077 != 0 {
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(f)
}

impl RotatingLog {
    /// Append to `path`, rotating when it would grow past `max_bytes`, keeping `keep` old files.
    pub fn open(path: &Path, max_bytes: u64, keep: usize) -> std::io::Result<Self> {
        let file = open_log(path)?;
        let size = file.metadata()?.len();
        Ok(RotatingLog {
            path: path.to_path_buf(),
            max_bytes,
            keep: keep.max(1),
            state: Mutex::new(Some((file, size))),
            failed: AtomicBool::new(false),
        })
    }

    fn rotate(&self) -> std::io::Result<(File, u64)> {
        let numbered = |n: usize| std::path::PathBuf::from(format!("{}.{n}", self.path.display()));
        let _ = std::fs::remove_file(numbered(self.keep));
        for n in (1..self.keep).rev() {
            let _ = std::fs::rename(numbered(n), numbered(n + 1));
        }
        std::fs::rename(&self.path, numbered(1))?;
        Ok((open_log(&self.path)?, 0))
    }
}

impl EventSink for RotatingLog {
    fn emit(&self, event: &Stamped) {
        let mut line = event.to_json();
        line.push('\n');
        let Ok(mut guard) = self.state.lock() else {
            return;
        };
        let result = (|| -> std::io::Result<()> {
            let needs_rotation = matches!(&*guard, Some((_, size)) if *size > 0 && size + line.len() as u64 > self.max_bytes);
            if needs_rotation || guard.is_none() {
                *guard = Some(if needs_rotation {
                    self.rotate()?
                } else {
                    let file = open_log(&self.path)?;
                    let size = file.metadata()?.len();
                    (file, size)
                });
            }
            if let Some((file, size)) = guard.as_mut() {
                file.write_all(line.as_bytes())?;
                *size += line.len() as u64;
            }
            Ok(())
        })();
        if let Err(e) = result {
            *guard = None; // try to reopen on the next event
            if !self.failed.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "cannot write events to {}: {e}; events are being lost",
                    self.path.display()
                );
            }
        }
    }
}
