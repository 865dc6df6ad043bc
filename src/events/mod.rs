//! Typed events, one JSON object per line, and the sinks they go to.
//!
//! Field names are a superset of the agent CLI's stream events, so its consumers keep working.

use std::io::{LineWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::catalog::HookPoint;
use crate::kinds::{DenyReason, Mode, SkipReason, Trigger};

#[cfg(feature = "daemon")]
mod cursor;
mod file;
mod log;
mod summary;
#[cfg(feature = "daemon")]
pub(crate) use cursor::LogCursor;
#[cfg(feature = "adapters")]
pub(crate) use file::open_to_append;
pub use file::{open_named, open_to_read, MOST_SEQ};
pub use log::{last_seq_in_log, log_files, Lost, RotatingLog, SharedLog};
pub use summary::Summary;

/// A command hook ran (or was started and failed to).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct HookCommand {
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
    /// Wall time, in whole milliseconds (the agent CLI's field).
    pub duration_ms: u64,
    /// When it was started: RFC 3339, UTC, nanoseconds (absent in events of older versions).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub started_at: String,
    /// Wall time from its start to the end of its output, in nanoseconds (0 in events of older
    /// versions).
    #[serde(default)]
    pub duration_ns: u64,
    /// stdout then stderr, each capped (compatible with the original's combined output).
    pub output: String,
    /// Empty on success; otherwise why it failed, for people.
    pub error: String,
    /// The session.
    pub session_id: String,
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
    pub decision: Option<crate::kinds::HookDecision>,
    /// Its reply asked to stop the turn.
    pub halt: bool,
    /// Its reply asked the agent to keep working.
    #[serde(rename = "continue")]
    pub continue_: bool,
    /// Reply fields its point does not take (or that do not exist), dropped, never applied.
    pub ignored: Vec<String>,
    /// Variables removed from its environment and why: set by the repository's files for the
    /// agent (`project`, with the file) or code-running (`runs_code`). Absent when none was.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_removed: Vec<crate::kinds::RemovedVar>,
    /// When it ran in the sandbox: what it could write and reach. Absent when unconfined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
}

/// A command hook did not run, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct HookCommandSkipped {
    /// The hook's name.
    pub name: String,
    /// The point.
    pub hook: HookPoint,
    /// The command as configured.
    pub command: String,
    /// The mode whose allow-list was consulted.
    pub mode: Mode,
    /// The category: the gate's (`not_allowlisted`, `operator`, ...), `untrusted`, or
    /// `internal`.
    pub reason: SkipReason,
    /// What the user can do.
    pub hint: String,
    /// What exactly was wrong.
    pub detail: String,
    /// The agent's turn.
    pub turn: u64,
    /// The session.
    pub session_id: String,
}

/// A command the agent's model proposed (a shell tool call) was denied by the gate at
/// `pre_tool` (`gate_shell_tools`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ToolCommandDenied {
    /// The tool (`Bash`, ...).
    pub tool: String,
    /// The command the model proposed; for a file tool, the path it named (as `path`).
    pub command: String,
    /// The file a file tool call named (`Write`, `Edit`, ...); absent for a shell tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
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
}

/// A tool call of the model that hookd let through at `pre_tool` with `gate_shell_tools` on:
/// the audit trail records what was allowed, not only what was refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ToolCallAllowed {
    /// The tool (`Bash`, `Read`, `Edit`, ...).
    pub tool: String,
    /// The shell command, for a shell tool (cut to the gate's limit); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The file the call names, for a file tool; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The allow entries that admitted each part of a shell command, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entries: Vec<String>,
    /// The mode whose allow-list was consulted.
    pub mode: Mode,
    /// When the sandbox rewrites the call to run confined (`hookd exec`): the policy it runs
    /// under, what it may write and reach. Absent: the agent runs it as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// The agent's turn.
    pub turn: u64,
    /// The session.
    pub session_id: String,
}

/// What became of a tool call the gate let through (`tool_call_allowed`): at `post_tool` the
/// agent reports it ran or failed; at `post_session`, a call it never reported was not run
/// (the agent's own permissions or the person refused it, or the turn was interrupted).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ToolResult {
    /// The point it was recorded at (`post_tool`, or `post_session` for `not_run`).
    pub hook: HookPoint,
    /// The tool.
    pub tool: String,
    /// A shell tool's command: the model's, also when hookd rewrote it to run confined.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The file another tool names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `ran`, `failed` or `not_run`.
    pub outcome: ToolOutcome,
    /// When it ran confined: the policy (as `tool_call_allowed` said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// The agent's turn.
    pub turn: u64,
    /// The session.
    pub session_id: String,
}

/// What became of a tool call, as the agent reported it (or did not).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ToolOutcome {
    /// The agent ran it and reported its result.
    Ran,
    /// The agent ran it and reported a failure.
    Failed,
    /// Allowed, and never reported: the agent did not run it.
    NotRun,
}

/// The daemon refused a client's dispatch and the client ran it in its own process: said in
/// the daemon's stream (and its `--events` log), so an audit trail that stays empty is seen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ClientRefused {
    /// The HTTP status answered (409: a project it cannot serve; 412: other settings; 503:
    /// busy; 4xx: a request it could not read).
    pub status: u16,
    /// Why, and what to do.
    pub reason: String,
    /// The point the client asked to dispatch (absent when the request could not be read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<HookPoint>,
    /// The session, when the context named one.
    pub session_id: String,
    /// The project the client named, when it named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// The daemon loaded a changed configuration and uses it from now on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ConfigReloaded {
    /// The files and variables read.
    pub sources: Vec<String>,
    /// Why it reloaded: `changed` (a file changed) or `sighup`.
    pub cause: crate::kinds::ReloadCause,
    /// The project whose configuration it is (a daemon serves every project its clients
    /// dispatch for; the project's files are named relative to it in `sources`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The project's trust in the configuration now in use (absent in events of older
    /// versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<TrustState>,
    /// The project's trust before, when this reload changed it: a trust change (`hookd trust`,
    /// a covered file edited) took effect. Absent when the trust did not change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_was: Option<TrustState>,
}

/// A project's trust, as configuration events say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TrustState {
    /// No project configuration was read.
    NotApplicable,
    /// Trusted with `hookd trust`, unchanged since.
    Trusted,
    /// Trusted for the run by `--trust-project` or `HOOKD_TRUST_PROJECT=1`.
    TrustedByFlag,
    /// Never trusted: its hooks, allow entries and reminders are inert.
    Untrusted,
    /// Trusted once and changed since: inert until trusted again.
    Changed,
}

impl TrustState {
    /// Its name, as in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            TrustState::NotApplicable => "not_applicable",
            TrustState::Trusted => "trusted",
            TrustState::TrustedByFlag => "trusted_by_flag",
            TrustState::Untrusted => "untrusted",
            TrustState::Changed => "changed",
        }
    }
}

/// The daemon found a changed configuration invalid and keeps the one it was using; or an
/// agent's call found it invalid, and no hook ran (`cause: dispatch`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ConfigError {
    /// The file (or variable) of the first error.
    pub file: String,
    /// Its line (0 when it is about the whole file).
    pub line: usize,
    /// Its message.
    pub message: String,
    /// Every diagnostic, as `hookd check` prints them.
    pub diagnostics: String,
    /// Why it tried to reload: `changed` or `sighup`; `dispatch` for an agent's call.
    pub cause: crate::kinds::ReloadCause,
    /// For an agent's call: the point it asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hook: Option<HookPoint>,
    /// For an agent's call: its session (absent for the daemon's reloads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// For an agent's call: whether hookd failed closed (denied the tool call, blocked the
    /// prompt where the agent can be told so) or let the agent go on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_closed: Option<bool>,
    /// The project whose configuration it is, for a daemon's reload (a daemon serves every
    /// project its clients dispatch for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The project's trust in the configuration in use: for the daemon's reloads, the one it
    /// keeps; for an agent's call, the failed one's (absent when not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust: Option<TrustState>,
    /// The trust the invalid configuration was loaded with, when it differs from `trust`: a
    /// trust change (`hookd trust`) that did not take effect, and will once the errors are
    /// fixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trust_pending: Option<TrustState>,
}

/// A reminder was injected.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct SystemReminder {
    /// Always `system_reminder`.
    pub kind: String,
    /// `user`, or `tool` when it belongs appended to the last tool result.
    pub role: crate::kinds::Role,
    /// The text, placeholders filled.
    pub content: String,
    /// Always true: reminders are for the model, not shown to the user.
    pub hidden: bool,
    /// The agent's turn.
    pub turn: u64,
    /// Model requests so far in the session.
    pub session_turn: u64,
    /// The point.
    pub hook: HookPoint,
    /// The reminder's name.
    pub name: String,
    /// Its trigger.
    pub trigger: Trigger,
    /// The session.
    pub session_id: String,
}

/// The hooks at `post_session` asked the agent to keep working, and hookd ended the session
/// instead: the loop guard (`max_continues` in hooks.yaml) had honoured that many `continue`
/// replies in a row. The hooks' own `hook_command` events still say what they asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct ContinueRefused {
    /// The point (`post_session`).
    pub hook: HookPoint,
    /// The hooks whose reply asked to continue.
    pub hooks: Vec<String>,
    /// Consecutive `continue` replies honoured before this one.
    pub continues: u64,
    /// The limit in effect.
    pub max_continues: u64,
    /// What the agent is told, and where the limit is set.
    pub reason: String,
    /// The agent's turn.
    pub turn: u64,
    /// The session.
    pub session_id: String,
}

/// A connection a confined command made through hookd's proxy (`sandbox.network: {allow,
/// deny}`), allowed or refused, once it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct NetworkRequest {
    /// The host as the command named it.
    pub host: String,
    /// The port.
    pub port: u16,
    /// `allowed` or `refused`.
    pub verdict: String,
    /// Why it was refused or could not be reached (naming the key that would allow it); empty
    /// when it went through.
    pub reason: String,
    /// Bytes from the command to the host.
    pub bytes_out: u64,
    /// Bytes from the host to the command.
    pub bytes_in: u64,
    /// From the request to the end of the connection, in milliseconds.
    pub duration_ms: u64,
    /// The hook whose command made it.
    pub name: String,
    /// The point that hook ran at.
    pub hook: HookPoint,
    /// The session.
    pub session_id: String,
}

/// Every event hookd emits.
// Each event is built once and moved into the stream; boxing the large one buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
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
    /// See [`ToolCallAllowed`].
    ToolCallAllowed(ToolCallAllowed),
    /// See [`ClientRefused`].
    ClientRefused(ClientRefused),
    /// See [`ContinueRefused`].
    ContinueRefused(ContinueRefused),
    /// See [`NetworkRequest`].
    NetworkRequest(NetworkRequest),
    /// See [`ToolResult`].
    ToolResult(ToolResult),
}

impl Event {
    /// The event's type, as its JSON `type` names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::HookCommand(_) => "hook_command",
            Event::HookCommandSkipped(_) => "hook_command_skipped",
            Event::SystemReminder(_) => "system_reminder",
            Event::ToolCommandDenied(_) => "tool_command_denied",
            Event::ConfigReloaded(_) => "config_reloaded",
            Event::ConfigError(_) => "config_error",
            Event::ToolCallAllowed(_) => "tool_call_allowed",
            Event::ClientRefused(_) => "client_refused",
            Event::ContinueRefused(_) => "continue_refused",
            Event::NetworkRequest(_) => "network_request",
            Event::ToolResult(_) => "tool_result",
        }
    }

    /// The hook point the event happened at (configuration events happen at none).
    pub fn point(&self) -> Option<HookPoint> {
        match self {
            Event::HookCommand(e) => Some(e.hook),
            Event::HookCommandSkipped(e) => Some(e.hook),
            Event::SystemReminder(e) => Some(e.hook),
            Event::ClientRefused(e) => e.hook,
            Event::ContinueRefused(e) => Some(e.hook),
            Event::NetworkRequest(e) => Some(e.hook),
            Event::ToolResult(e) => Some(e.hook),
            // The gate decides on the model's tool calls before they run.
            Event::ToolCommandDenied(_) | Event::ToolCallAllowed(_) => Some(HookPoint::PreTool),
            Event::ConfigError(e) => e.hook,
            Event::ConfigReloaded(_) => None,
        }
    }

    /// What happened, in one line for people (`hookd events`): the hook and how it ended, why
    /// it was skipped or denied, the reminder's start (see [`Summary`]).
    pub fn summary(&self) -> String {
        serde_json::to_value(self)
            .map(|v| Summary::of(&v).what)
            .unwrap_or_default()
    }

    /// The session the event belongs to (configuration events belong to none).
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Event::HookCommand(e) => Some(&e.session_id),
            Event::HookCommandSkipped(e) => Some(&e.session_id),
            Event::SystemReminder(e) => Some(&e.session_id),
            Event::ToolCommandDenied(e) => Some(&e.session_id),
            Event::ToolCallAllowed(e) => Some(&e.session_id),
            Event::ClientRefused(e) => Some(&e.session_id),
            Event::ContinueRefused(e) => Some(&e.session_id),
            Event::NetworkRequest(e) => Some(&e.session_id),
            Event::ToolResult(e) => Some(&e.session_id),
            Event::ConfigError(e) => e.session_id.as_deref(),
            Event::ConfigReloaded(_) => None,
        }
    }
}

/// An event as it leaves hookd: numbered and timed once, where it is delivered.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Stamped {
    /// Position in the stream: gap-free and increasing in the order sinks receive events.
    pub seq: u64,
    /// RFC 3339, UTC, milliseconds.
    pub timestamp: String,
    /// What happened.
    #[serde(flatten)]
    pub event: Event,
}

/// The JSON Schema (draft 2020-12) of one event as hookd writes it (a line of an events file,
/// the `data` of an SSE frame), derived from these types.
#[cfg(feature = "schema")]
pub fn schema() -> serde_json::Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(Stamped)).unwrap_or_default();
    if let Some(m) = schema.as_object_mut() {
        m.insert("$id".into(), "urn:hookd:schema:events".into());
        m.insert("title".into(), "hookd event".into());
    }
    schema
}

impl Stamped {
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

/// Where events are numbered, timed and delivered, under one lock: however many dispatches
/// emit at once, numbers have no gaps and every sink receives them in order. Engines that
/// replace each other (a daemon reloading its configuration) share one stream.
pub struct Stream {
    sink: Arc<dyn EventSink>,
    last: Mutex<u64>,
}

impl Stream {
    /// Deliver to `sink`, numbering from `last + 1` (a daemon continues its log's numbering).
    pub fn new(sink: Arc<dyn EventSink>, last: u64) -> Arc<Stream> {
        Arc::new(Stream {
            sink,
            last: Mutex::new(last),
        })
    }

    /// The number of the last event delivered (where the stream started, before any).
    pub fn last(&self) -> u64 {
        *self.last.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Number, time and deliver `event`; returns its number.
    pub fn emit(&self, event: Event) -> u64 {
        self.emit_kept(event).seq
    }

    /// Number, time and deliver `event`; returns it as delivered.
    pub(crate) fn emit_kept(&self, event: Event) -> Stamped {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        *last = last.saturating_add(1);
        let stamped = Stamped {
            seq: *last,
            timestamp: now_rfc3339(),
            event,
        };
        self.sink.emit(&stamped);
        stamped
    }
}

/// Now, as RFC 3339 in UTC with milliseconds.
pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// Where events go. Emitting never fails a dispatch: a sink that cannot write reports it once.
pub trait EventSink: Send + Sync {
    /// Take one event.
    fn emit(&self, event: &Stamped);
}

/// Discards events.
#[derive(Debug, Default)]
pub struct NullSink;

impl EventSink for NullSink {
    fn emit(&self, _: &Stamped) {}
}

/// Keeps events in memory (for tests and embedders).
#[derive(Debug, Default)]
pub struct Collector {
    events: Mutex<Vec<Stamped>>,
}

impl Collector {
    /// Everything emitted so far.
    pub fn events(&self) -> Vec<Stamped> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl EventSink for Collector {
    fn emit(&self, event: &Stamped) {
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
}

impl EventSink for JsonLines {
    fn emit(&self, event: &Stamped) {
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
pub struct Fanout(pub Vec<Arc<dyn EventSink>>);

impl EventSink for Fanout {
    fn emit(&self, event: &Stamped) {
        for s in &self.0 {
            s.emit(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::OpenOptions;

    #[test]
    fn a_logs_last_number_is_its_highest_not_its_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("events.jsonl");
        std::fs::write(&log, "{\"seq\":5}\n{\"seq\":7}\nnot json\n{\"seq\":6}\n").unwrap();
        assert_eq!(last_seq_in_log(&log, 3), 7);
        assert_eq!(last_seq_in_log(&dir.path().join("none"), 3), 0);
    }

    fn event(seq: u64, output: &str) -> Stamped {
        Stamped {
            seq,
            timestamp: "2026-11-25T00:00:00.000Z".into(),
            event: Event::ConfigReloaded(ConfigReloaded {
                sources: vec![output.into()],
                cause: crate::kinds::ReloadCause::Sighup,
                project: None,
                trust: None,
                trust_was: None,
            }),
        }
    }

    #[test]
    fn a_shared_log_numbers_each_line_after_the_files_last() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("events.jsonl");
        let seqs = || -> Vec<u64> {
            std::fs::read_to_string(&log)
                .unwrap()
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .map(|v| v["seq"].as_u64().unwrap())
                .collect()
        };
        // Two processes' streams, each numbering from 1, interleaved into one file.
        let a = SharedLog::open(&log).unwrap();
        let b = SharedLog::open(&log).unwrap();
        a.emit(&event(1, "a"));
        b.emit(&event(1, "b"));
        a.emit(&event(2, "a"));
        assert_eq!(seqs(), [1, 2, 3]);
        // A last line longer than one read-back chunk.
        b.emit(&event(2, &"x".repeat(100_000)));
        a.emit(&event(3, "a"));
        assert_eq!(seqs(), [1, 2, 3, 4, 5]);
        // A torn line (a writer died mid-line) and a foreign one are passed over, and the next
        // line is not glued to the torn one.
        use std::io::Write as _;
        let mut f = OpenOptions::new().append(true).open(&log).unwrap();
        f.write_all(b"not an event\n{\"seq\":6,\"timest").unwrap();
        b.emit(&event(3, "b"));
        let text = std::fs::read_to_string(&log).unwrap();
        assert!(text.contains("{\"seq\":6,\"timest\n{\"seq\":7,"), "{text}");
        assert_eq!(seqs(), [1, 2, 3, 4, 5, 7]);
        // A file of no events of ours starts at 1.
        let other = dir.path().join("other.jsonl");
        std::fs::write(&other, "hello\nworld\n").unwrap();
        SharedLog::open(&other).unwrap().emit(&event(9, "a"));
        assert!(std::fs::read_to_string(&other)
            .unwrap()
            .ends_with("world\n{\"seq\":1,\"timestamp\":\"2026-11-25T00:00:00.000Z\",\"type\":\"config_reloaded\",\"sources\":[\"a\"],\"cause\":\"sighup\"}\n"));
    }
}
