//! Agent adapters: an agent's native hook payload becomes a dispatch, and the Outcome becomes the
//! reply that agent understands. One `.infer/` configuration, one allow-list, one event stream,
//! whatever the agent.

pub mod claude;
pub mod install;

use crate::catalog::HookPoint;
use crate::dispatch::Context;

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
