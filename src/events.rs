//! Typed events, one JSON object per line, and the sinks they go to.
//!
//! Field names are a superset of the agent CLI's stream events, so its consumers keep working.

use std::fs::{File, OpenOptions};
use std::io::{LineWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use serde::Serialize;

use crate::catalog::HookPoint;
use crate::config::Mode;
use crate::gate::DenyReason;

/// A command hook ran (or was started and failed to).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HookCommand {
    /// RFC 3339, UTC, milliseconds.
    pub timestamp: String,
    /// The hook's name.
    pub name: String,
    /// The point it ran at.
    pub hook: HookPoint,
    /// The command as configured.
    pub command: String,
    /// The agent's turn.
    pub turn: u64,
    /// Exit code, or -1 when it did not exit normally (timeout, signal, failed to start).
    pub exit_code: i32,
    /// Wall time.
    pub duration_ms: u64,
    /// stdout then stderr, each capped (compatible with the original's combined output).
    pub output: String,
    /// Empty on success; otherwise why it failed, for people.
    pub error: String,
    /// The session.
    pub session_id: String,
    /// Position in this stream.
    pub seq: u64,
    /// The mode whose allow-list admitted it.
    pub mode: Mode,
    /// Exactly what was executed.
    pub argv: Vec<String>,
    /// The allow entry that admitted it, and where it was written.
    pub allowed_by: String,
    /// Captured stdout.
    pub stdout: String,
    /// Captured stderr.
    pub stderr: String,
    /// True when any output was dropped.
    pub truncated: bool,
    /// Bytes of stdout dropped over the cap.
    pub stdout_dropped_bytes: u64,
    /// Bytes of stderr dropped over the cap.
    pub stderr_dropped_bytes: u64,
    /// True when the timeout killed it.
    pub timed_out: bool,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    /// True when descendants held its output open after it exited and were killed.
    pub leaked: bool,
    /// True when a process outside its group (setsid) still held the output when hookd stopped
    /// reading: the output may be partial.
    pub held_open: bool,
    /// What its reply decided: `deny` (reply or exit 2), `allow`, or null.
    pub decision: Option<&'static str>,
    /// Its reply asked to stop the turn.
    pub halt: bool,
    /// Its reply asked the agent to keep working.
    #[serde(rename = "continue")]
    pub continue_: bool,
    /// Reply fields its point does not take (or that do not exist), dropped, never applied.
    pub ignored: Vec<String>,
}

/// A command hook did not run, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HookCommandSkipped {
    /// RFC 3339, UTC, milliseconds.
    pub timestamp: String,
    /// The hook's name.
    pub name: String,
    /// The point.
    pub hook: HookPoint,
    /// The command as configured.
    pub command: String,
    /// The mode whose allow-list was consulted.
    pub mode: Mode,
    /// The category (`not_allowlisted`, `operator`, ...).
    pub reason: DenyReason,
    /// What the user can do.
    pub hint: String,
    /// What exactly was wrong.
    pub detail: String,
    /// The agent's turn.
    pub turn: u64,
    /// The session.
    pub session_id: String,
    /// Position in this stream.
    pub seq: u64,
}

/// A command the agent's model proposed (a shell tool call) was denied by the gate at
/// `pre_tool` (`gate_shell_tools`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolCommandDenied {
    /// RFC 3339, UTC, milliseconds.
    pub timestamp: String,
    /// The tool (`Bash`, ...).
    pub tool: String,
    /// The command the model proposed.
    pub command: String,
    /// The mode whose allow-list was consulted.
    pub mode: Mode,
    /// The gate's category.
    pub reason: DenyReason,
    /// What exactly was wrong.
    pub detail: String,
    /// What the operator can do (never told to the model).
    pub hint: String,
    /// The agent's turn.
    pub turn: u64,
    /// The session.
    pub session_id: String,
    /// Position in this stream.
    pub seq: u64,
}

/// The daemon loaded a changed configuration and uses it from now on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConfigReloaded {
    /// RFC 3339, UTC, milliseconds.
    pub timestamp: String,
    /// The files and variables read.
    pub sources: Vec<String>,
    /// Why it reloaded: `changed` (a file changed) or `sighup`.
    pub cause: String,
    /// Position in this stream.
    pub seq: u64,
}

/// The daemon found a changed configuration invalid and keeps the one it was using.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConfigError {
    /// RFC 3339, UTC, milliseconds.
    pub timestamp: String,
    /// The file (or variable) of the first error.
    pub file: String,
    /// Its line (0 when it is about the whole file).
    pub line: usize,
    /// Its message.
    pub message: String,
    /// Every diagnostic, as `hookd check` prints them.
    pub diagnostics: String,
    /// Why it tried to reload: `changed` or `sighup`.
    pub cause: String,
    /// Position in this stream.
    pub seq: u64,
}

/// A reminder was injected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SystemReminder {
    /// Always `system_reminder`.
    pub kind: &'static str,
    /// `user`, or `tool` when it belongs appended to the last tool result.
    pub role: &'static str,
    /// The text, placeholders filled.
    pub content: String,
    /// Always true: reminders are for the model, not shown to the user.
    pub hidden: bool,
    /// RFC 3339, UTC, milliseconds.
    pub timestamp: String,
    /// The agent's turn.
    pub turn: u64,
    /// Model requests so far in the session.
    pub session_turn: u64,
    /// The point.
    pub hook: HookPoint,
    /// The reminder's name.
    pub name: String,
    /// Its trigger.
    pub trigger: crate::config::Trigger,
    /// The session.
    pub session_id: String,
    /// Position in this stream.
    pub seq: u64,
}

/// Every event hookd emits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// See [`HookCommand`].
    HookCommand(HookCommand),
    /// See [`HookCommandSkipped`].
    HookCommandSkipped(HookCommandSkipped),
    /// See [`SystemReminder`].
    SystemReminder(SystemReminder),
    /// See [`ToolCommandDenied`].
    ToolCommandDenied(ToolCommandDenied),
    /// See [`ConfigReloaded`].
    ConfigReloaded(ConfigReloaded),
    /// See [`ConfigError`].
    ConfigError(ConfigError),
}

impl Event {
    /// Its position in the stream.
    pub fn seq(&self) -> u64 {
        match self {
            Event::HookCommand(e) => e.seq,
            Event::HookCommandSkipped(e) => e.seq,
            Event::SystemReminder(e) => e.seq,
            Event::ToolCommandDenied(e) => e.seq,
            Event::ConfigReloaded(e) => e.seq,
            Event::ConfigError(e) => e.seq,
        }
    }

    /// Set the stream position and time; done by the engine as the event is emitted.
    pub(crate) fn stamp(&mut self, seq: u64, timestamp: String) {
        let (s, t) = match self {
            Event::HookCommand(e) => (&mut e.seq, &mut e.timestamp),
            Event::HookCommandSkipped(e) => (&mut e.seq, &mut e.timestamp),
            Event::SystemReminder(e) => (&mut e.seq, &mut e.timestamp),
            Event::ToolCommandDenied(e) => (&mut e.seq, &mut e.timestamp),
            Event::ConfigReloaded(e) => (&mut e.seq, &mut e.timestamp),
            Event::ConfigError(e) => (&mut e.seq, &mut e.timestamp),
        };
        *s = seq;
        *t = timestamp;
    }

    /// The event as one line of JSON (no newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(
                "{{\"type\":\"serialization_error\",\"error\":{:?}}}",
                e.to_string()
            )
        })
    }
}

/// Now, as RFC 3339 in UTC with milliseconds.
pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// Where events go. Emitting never fails a dispatch: a sink that cannot write reports it once.
pub trait EventSink: Send + Sync {
    /// Take one event.
    fn emit(&self, event: &Event);
}

/// Discards events.
#[derive(Debug, Default)]
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _: &Event) {}
}

/// Keeps events in memory (for tests and embedders).
#[derive(Debug, Default)]
pub struct Collector {
    events: Mutex<Vec<Event>>,
}

impl Collector {
    /// Everything emitted so far.
    pub fn events(&self) -> Vec<Event> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl EventSink for Collector {
    fn emit(&self, event: &Event) {
        if let Ok(mut e) = self.events.lock() {
            e.push(event.clone());
        }
    }
}

/// Writes JSON lines, one per event, flushed per line.
pub struct JsonLines {
    out: Mutex<Box<dyn Write + Send>>,
    failed: AtomicBool,
    name: String,
}

impl JsonLines {
    /// Write to any writer; `name` is used in the one warning a failing writer produces.
    pub fn new(w: impl Write + Send + 'static, name: impl Into<String>) -> Self {
        JsonLines {
            out: Mutex::new(Box::new(LineWriter::new(w))),
            failed: AtomicBool::new(false),
            name: name.into(),
        }
    }

    /// Write to standard error.
    pub fn stderr() -> Self {
        Self::new(std::io::stderr(), "stderr")
    }

    /// Append to a file, creating it.
    pub fn append(path: &Path) -> std::io::Result<Self> {
        let f: File = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self::new(f, path.display().to_string()))
    }
}

impl EventSink for JsonLines {
    fn emit(&self, event: &Event) {
        let mut line = event.to_json();
        line.push('\n');
        let result = match self.out.lock() {
            Ok(mut w) => w.write_all(line.as_bytes()).and_then(|_| w.flush()),
            Err(_) => return,
        };
        if let Err(e) = result {
            if !self.failed.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "cannot write events to {}: {e}; events are being lost",
                    self.name
                );
            }
        }
    }
}

/// Sends every event to each of several sinks, in order.
pub struct Fanout(pub Vec<std::sync::Arc<dyn EventSink>>);

impl EventSink for Fanout {
    fn emit(&self, event: &Event) {
        for s in &self.0 {
            s.emit(event);
        }
    }
}

/// The rotated files of an events log, oldest first: `FILE.{keep}` … `FILE.1`, `FILE`.
pub fn log_files(path: &Path, keep: usize) -> Vec<std::path::PathBuf> {
    (1..=keep)
        .rev()
        .map(|n| std::path::PathBuf::from(format!("{}.{n}", path.display())))
        .chain([path.to_path_buf()])
        .collect()
}

/// The events in a log (and its rotated files) with `after < seq < before`, oldest first, as
/// `(seq, json line)`. Lines that do not parse are passed over.
pub fn read_log(path: &Path, keep: usize, after: u64, before: u64) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    for file in log_files(path, keep) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for line in text.lines() {
            let seq = serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|v| v["seq"].as_u64());
            if let Some(seq) = seq.filter(|s| *s > after && *s < before) {
                out.push((seq, line.to_string()));
            }
        }
    }
    out
}

/// The highest `seq` in a log: a daemon restarted on the same log goes on numbering from there,
/// so a subscriber's `Last-Event-ID` still means one event.
pub fn last_seq_in_log(path: &Path, keep: usize) -> u64 {
    use std::io::{Seek, SeekFrom};
    for file in log_files(path, keep).iter().rev() {
        let Ok(mut f) = File::open(file) else {
            continue;
        };
        // The last line is all that matters: read the tail, not the whole file.
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = f.seek(SeekFrom::Start(len.saturating_sub(64 * 1024)));
        let mut tail = String::new();
        if std::io::Read::read_to_string(&mut f, &mut tail).is_err() {
            continue;
        }
        let last = tail.lines().rev().find_map(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .ok()
                .and_then(|v| v["seq"].as_u64())
        });
        if let Some(seq) = last {
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

impl RotatingLog {
    /// Append to `path`, rotating when it would grow past `max_bytes`, keeping `keep` old files.
    pub fn open(path: &Path, max_bytes: u64, keep: usize) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
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
        Ok((
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)?,
            0,
        ))
    }
}

impl EventSink for RotatingLog {
    fn emit(&self, event: &Event) {
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
                    (
                        OpenOptions::new()
                            .create(true)
                            .append(true)
                            .open(&self.path)?,
                        0,
                    )
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
