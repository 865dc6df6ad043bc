//! Agent adapters: an agent's native hook payload becomes a dispatch, and the Outcome becomes the
//! reply that agent understands. One `.infer/` configuration, one allow-list, one event stream,
//! whatever the agent.

pub mod claude;
pub mod crush;
pub mod gemini;
pub mod install;

use crate::catalog::HookPoint;
use crate::dispatch::{Context, Outcome};

/// A payload read: the agent's event, the point it maps to (if any), and the context.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The agent's own event name.
    pub event: String,
    /// The hook point, or `None` for an event hookd does not act on.
    pub point: Option<HookPoint>,
    /// The dispatch context.
    pub context: Context,
}

/// What the adapter prints and exits with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentReply {
    /// The reply on stdout.
    pub stdout: String,
    /// The exit code.
    pub exit_code: i32,
    /// Lines for stderr (for people; the agent does not read them).
    pub notes: Vec<String>,
}

/// Everything the model should additionally see: the reminders, the decision's context, and the
/// files hooks pointed at (paths, not contents).
pub(crate) fn additional_context(
    outcome: &Outcome,
    context: Option<&str>,
    files: &[String],
) -> Option<String> {
    let mut parts: Vec<String> = outcome.reminders.iter().map(|r| r.text.clone()).collect();
    if let Some(c) = context {
        parts.push(c.to_string());
    }
    if !files.is_empty() {
        parts.push(format!(
            "Referenced files:\n{}",
            files
                .iter()
                .map(|f| format!("- {f}"))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}
