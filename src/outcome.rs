//! What a dispatch answers: the reminders to inject, how each command hook went, and the
//! decision for the agent. It reads back from its JSON (a daemon's answer).

use serde::{Deserialize, Serialize};

use crate::catalog::HookPoint;
use crate::decision::Decision;
use crate::kinds::{Mode, Role};
use serde_json::Value;

/// A reminder to inject.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReminderOut {
    /// Its name.
    pub name: String,
    /// The text to inject (placeholders filled).
    pub text: String,
    /// `user`, or `tool` when it should be appended to the last tool result.
    pub role: Role,
}

/// How one command hook went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CommandStatus {
    /// Exit code 0.
    Ok,
    /// Non-zero exit.
    Failed,
    /// Killed at its timeout.
    TimedOut,
    /// Ended by a signal.
    Killed,
    /// Could not start (not found, permission, working directory).
    NotStarted,
    /// It denied (exit code 2).
    Denied,
    /// The gate did not admit it.
    Skipped,
}

impl CommandStatus {
    /// The snake_case name used in JSON, events and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            CommandStatus::Ok => "ok",
            CommandStatus::Failed => "failed",
            CommandStatus::TimedOut => "timed_out",
            CommandStatus::Killed => "killed",
            CommandStatus::NotStarted => "not_started",
            CommandStatus::Denied => "denied",
            CommandStatus::Skipped => "skipped",
        }
    }
}

/// One command hook in the Outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CommandOut {
    /// The hook's name.
    pub name: String,
    /// The command as configured.
    pub command: String,
    /// How it went.
    pub status: CommandStatus,
    /// Exit code, -1 when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Wall time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// For skipped commands: why (the gate's category, `untrusted` or `internal`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<crate::kinds::SkipReason>,
    /// For skipped commands: what to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Why it did not start, failed to reply or was stopped (`` `gofmt` was not found on
    /// PATH; is it installed? ``), as its `hook_command` event says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a dispatch did and what the agent should do with it. It reads back from its JSON (a
/// daemon's answer): the decision's shape is taken from `hook`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "OutcomeWire")]
#[non_exhaustive]
pub struct Outcome {
    /// The point.
    pub hook: HookPoint,
    /// The session ("" when the agent sent none; an id over [`crate::state::MAX_SESSION_KEY_BYTES`]
    /// as `sha256:HEX`, see [`crate::state::session_key`]).
    pub session_id: String,
    /// The agent's turn (from the context, else hookd's count).
    pub turn: u64,
    /// Model requests so far in the session.
    pub session_turn: u64,
    /// The mode the allow-list was taken from.
    pub mode: Mode,
    /// Reminders to inject, in config order.
    pub reminders: Vec<ReminderOut>,
    /// Command hooks, in config order.
    pub commands: Vec<CommandOut>,
    /// What the hooks decided; its shape is fixed by the point (see docs/protocol.md).
    pub decision: Decision,
    /// Sentences for the operator about why less happened than configured (hooks switched
    /// off, for one); never for the model. Absent when empty.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub notices: Vec<String>,
    /// True when an event of this dispatch could not be written to the events file: the
    /// decision went unrecorded (an adapter failing closed then denies). Absent when false.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub unrecorded: bool,
}
#[derive(Deserialize)]
struct OutcomeWire {
    hook: HookPoint,
    session_id: String,
    turn: u64,
    session_turn: u64,
    mode: Mode,
    reminders: Vec<ReminderOut>,
    commands: Vec<CommandOut>,
    decision: Value,
    #[serde(default)]
    notices: Vec<String>,
    #[serde(default)]
    unrecorded: bool,
}

impl TryFrom<OutcomeWire> for Outcome {
    type Error = serde_json::Error;

    fn try_from(w: OutcomeWire) -> Result<Self, Self::Error> {
        let decision = match Decision::none(w.hook) {
            Decision::Prompt(_) => Decision::Prompt(serde_json::from_value(w.decision)?),
            Decision::Tool(_) => Decision::Tool(serde_json::from_value(w.decision)?),
            Decision::Context(_) => Decision::Context(serde_json::from_value(w.decision)?),
            Decision::Stop(_) => Decision::Stop(serde_json::from_value(w.decision)?),
            Decision::Observe {} => Decision::Observe {},
        };
        Ok(Outcome {
            hook: w.hook,
            session_id: w.session_id,
            turn: w.turn,
            session_turn: w.session_turn,
            mode: w.mode,
            reminders: w.reminders,
            commands: w.commands,
            decision,
            notices: w.notices,
            unrecorded: w.unrecorded,
        })
    }
}
