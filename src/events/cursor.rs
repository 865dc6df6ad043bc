//! Reading the events log back, one reader for every caller: a cursor's place in the log and
//! its rotated files (the file by its inode, so a rotation under it loses nothing and repeats
//! nothing; the offset of the next line), a budget of bytes at a time. A resume far into a
//! large log finds its place by bisection, not by reading the log from its start; a line
//! still being written is left for the next read. The daemon's subscribers that fell behind
//! (`daemon::backlog`) and `hookd events --file` (`tail`) read through it.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// A line longer than this is passed over (events are far smaller; a damaged file might not
/// have newlines).
const MOST_LINE_BYTES: u64 = 64 * 1024 * 1024;

/// What a line is read for: its number and session.
#[derive(Deserialize)]
struct Head {
    seq: u64,
    session_id: Option<String>,
}

/// One event read back: its number, session and JSON line.
#[derive(Debug)]
pub(crate) struct Line {
    pub(crate) seq: u64,
    pub(crate) session: Option<String>,
    pub(crate) json: String,
}

/// A reader's place in the events log and its rotated files.
#[derive(Debug)]
pub(crate) struct LogCursor {
    path: PathBuf,
    keep: usize,
    /// The file (device, inode) and the offset of the next line to read in it.
    at: Option<(u64, u64, u64)>,
    /// How its files are opened: hookd's own log never through a link
    /// ([`crate::events::open_to_read`]); a file a person named as named
    /// ([`crate::events::open_named`]).
    open: fn(&Path) -> std::io::Result<File>,
}

impl LogCursor {
    /// At the start of hookd's own log `path` (`keep` rotated files beside it).
    pub(crate) fn new(path: PathBuf, keep: usize) -> LogCursor {
        LogCursor {
            path,
            keep,
            at: None,
            open: crate::events::open_to_read,
        }
    }

    /// At the start of the log a person named (`hookd events --file`): a link is followed.
    #[cfg(feature = "cli")]
    pub(crate) fn named(path: PathBuf, keep: usize) -> LogCursor {
        LogCursor {
            open: crate::events::open_named,
            ..LogCursor::new(path, keep)
        }
    }

    /// The events with `after < seq < before`, oldest first, at most `budget` bytes of them (at
    /// least one if there is one). Empty: the log has no more of them.
    pub(crate) fn read(&mut self, after: u64, before: u64, budget: usize) -> Vec<Line> {
        let files = crate::events::log_files(&self.path, self.keep);
        let opened: Vec<(File, u64, u64)> = files
            .iter()
            .filter_map(|f| {
                let file = (self.open)(f).ok()?;
                let m = file.metadata().ok()?;
                Some((file, m.dev(), m.ino()))
            })
            .collect();
        // Rotation renames files: the one this cursor was in is found by its inode.
        let (first, offset) = match self.at {
            Some((dev, ino, off)) => opened
                .iter()
                .position(|(_, d, i)| (*d, *i) == (dev, ino))
                .map_or((0, 0), |n| (n, off)),
            None => place(&opened, after),
        };
        let mut out = Vec::new();
        let mut bytes = 0;
        for (n, (file, dev, ino)) in opened.into_iter().enumerate().skip(first) {
            let start = if n == first { offset } else { 0 };
            let (end, full) = read_lines(file, start, after, before, budget, &mut bytes, &mut out);
            self.at = Some((dev, ino, end));
            if full {
                break;
            }
        }
        out
    }
}

/// Bisection stops when the range is this small; the rest is read line by line.
const NEAR: u64 = 64 * 1024;

/// Where a new cursor starts for the events after `after`: the newest file whose first line
/// is not after them, and in it, found by bisection, a line at or before the first of them.
fn place(opened: &[(File, u64, u64)], after: u64) -> (usize, u64) {
    let n = opened
        .iter()
        .rposition(|(f, _, _)| line_at(f, 0).is_some_and(|(_, seq)| seq <= after.saturating_add(1)))
        .unwrap_or(0);
    let Some((file, _, _)) = opened.get(n) else {
        return (0, 0);
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let (mut lo, mut hi) = (0u64, len);
    // `lo` is a line's start at or before the first line numbered above `after`.
    while lo + NEAR < hi {
        let mid = lo + (hi - lo) / 2;
        match line_at(file, mid) {
            Some((start, seq)) if seq <= after => lo = start,
            _ => hi = mid,
        }
    }
    (n, lo)
}

/// The first whole line starting at `from` (at 0) or after it, and its `seq`; `None` when no
/// line starts within [`NEAR`] bytes or its head is not numbered.
fn line_at(file: &File, from: u64) -> Option<(u64, u64)> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; NEAR as usize];
    let n = file.read_at(&mut buf, from).ok()?;
    let buf = &buf[..n];
    let start = if from == 0 {
        0
    } else {
        buf.iter().position(|b| *b == b'\n')? + 1
    };
    let head = buf.get(start..)?.strip_prefix(b"{\"seq\":")?;
    let digits = head.iter().take_while(|b| b.is_ascii_digit()).count();
    let seq = std::str::from_utf8(&head[..digits]).ok()?.parse().ok()?;
    Some((from + start as u64, seq))
}

/// Read `file` from `start`, appending the lines in `(after, before)` to `out` until `bytes`
/// reaches `budget` or a line at `before` or later. Returns the offset after the last line
/// read and whether reading should stop there.
fn read_lines(
    file: File,
    start: u64,
    after: u64,
    before: u64,
    budget: usize,
    bytes: &mut usize,
    out: &mut Vec<Line>,
) -> (u64, bool) {
    let mut reader = BufReader::new(file);
    if reader.seek(SeekFrom::Start(start)).is_err() {
        return (start, false);
    }
    let mut offset = start;
    let mut buf = Vec::new();
    loop {
        if !out.is_empty() && *bytes >= budget {
            return (offset, true);
        }
        buf.clear();
        let Ok(n) = reader
            .by_ref()
            .take(MOST_LINE_BYTES)
            .read_until(b'\n', &mut buf)
        else {
            return (offset, false);
        };
        // The end, or a line still being written: come back to it.
        if n == 0 || buf.last() != Some(&b'\n') {
            return (offset, false);
        }
        let line = &buf[..n - 1];
        let Ok(head) = serde_json::from_slice::<Head>(line) else {
            offset += n as u64;
            continue;
        };
        if head.seq >= before {
            return (offset, true);
        }
        offset += n as u64;
        if head.seq > after {
            *bytes += line.len();
            out.push(Line {
                seq: head.seq,
                session: head.session_id,
                json: String::from_utf8_lossy(line).into_owned(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(seq: u64) -> String {
        format!(
            "{{\"seq\":{seq},\"type\":\"x\",\"session_id\":\"s{}\"}}\n",
            seq % 2
        )
    }

    #[test]
    fn reads_in_budgets_across_a_rotation_each_line_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let old: String = (1..=5).map(event).collect();
        let new: String = (6..=9).map(event).collect();
        std::fs::write(dir.path().join("events.jsonl.1"), old).unwrap();
        std::fs::write(&path, format!("{new}{{\"seq\":10,")).unwrap();
        let mut c = LogCursor::new(path.clone(), 3);
        let line = event(1).len() - 1;
        let mut seen = Vec::new();
        loop {
            let got = c.read(2, 9, 2 * line);
            if got.is_empty() {
                break;
            }
            assert!(got.len() <= 2, "{got:?}");
            seen.extend(got.iter().map(|l| l.seq));
        }
        assert_eq!(seen, [3, 4, 5, 6, 7, 8]);
        // The file rotates under the cursor: it goes on in the renamed file.
        let mut c = LogCursor::new(path.clone(), 3);
        assert_eq!(c.read(0, 100, line).len(), 1);
        std::fs::rename(
            dir.path().join("events.jsonl.1"),
            dir.path().join("events.jsonl.2"),
        )
        .unwrap();
        std::fs::rename(&path, dir.path().join("events.jsonl.1")).unwrap();
        std::fs::write(&path, event(10)).unwrap();
        let rest: Vec<u64> = std::iter::from_fn(|| Some(c.read(0, 100, 1000)))
            .take_while(|b| !b.is_empty())
            .flatten()
            .map(|l| l.seq)
            .collect();
        assert_eq!(rest, [2, 3, 4, 5, 6, 7, 8, 9, 10]);
    }

    #[test]
    fn a_resume_far_into_a_large_log_starts_near_its_place_and_passes_a_fifo_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let pad = "x".repeat(200);
        let line = |seq: u64| format!("{{\"seq\":{seq},\"type\":\"x\",\"pad\":\"{pad}\"}}\n");
        std::fs::write(
            dir.path().join("events.jsonl.2"),
            (1..=3000).map(line).collect::<String>(),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("events.jsonl.1"),
            (3001..=6000).map(line).collect::<String>(),
        )
        .unwrap();
        std::fs::write(&path, (6001..=6100).map(line).collect::<String>()).unwrap();
        nix::unistd::mkfifo(
            &dir.path().join("events.jsonl.3"),
            nix::sys::stat::Mode::S_IRWXU,
        )
        .unwrap();
        for after in [0, 1, 2999, 3000, 4321, 6000, 6050] {
            let mut c = LogCursor::new(path.clone(), 3);
            let got = c.read(after, 7000, 1000);
            assert_eq!(got.first().map(|l| l.seq), Some(after + 1), "after {after}");
        }
        // Found by bisection: the first read-back starts within a few lines of its place.
        let opened: Vec<_> = crate::events::log_files(&path, 3)
            .iter()
            .filter_map(|f| crate::events::open_to_read(f).ok())
            .map(|f| (f, 0, 0))
            .collect();
        let (file, offset) = place(&opened, 4321);
        assert_eq!(file, 1);
        let at = (4321 - 3001) * line(3001).len() as u64;
        assert!(offset <= at && at - offset <= 2 * NEAR, "{offset} {at}");
    }
}
