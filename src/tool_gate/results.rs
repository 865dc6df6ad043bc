//! What became of the model's tool calls the gate let through (issue 41 item 9). Each allowed
//! call is remembered in the session's state at `pre_tool`; the agent's `post_tool` report of it
//! is recorded as `tool_result` (`ran` or `failed`); at `post_session`, a call it never reported
//! is recorded as `not_run`: the agent's own permissions or the person refused it (Claude Code
//! calls no hook then), or the turn was interrupted. `tool_call_allowed` alone would read as if
//! it ran.

use serde_json::Value;

use super::ToolGate;
use crate::catalog::HookPoint;
use crate::decision::Decision;
use crate::events::{Event, ToolOutcome, ToolResult};
use crate::gate::protect::PATH_KEYS;
use crate::provider::Call;
use crate::state::{PendingCall, SessionState};

/// The most calls remembered per session; older ones are dropped (never reported as not run).
const MOST_PENDING: usize = 64;

impl ToolGate {
    /// Whether the audit trail follows the gate's allowed calls at `point`.
    pub(super) fn tracks_results(&self, point: HookPoint) -> bool {
        self.shell_gate.is_some()
            && matches!(
                point,
                HookPoint::PreTool | HookPoint::PostTool | HookPoint::PostSession
            )
    }

    /// The policy a call of `tool` will be rewritten to run under, if it will be
    /// ([`Self::confine_shell_call`]): the sandbox on, a shell tool, a kernel that confines.
    pub(super) fn confined_under(&self, tool: &str) -> Option<String> {
        let policy = self.sandbox.as_ref().filter(|s| s.enabled)?;
        if !self.shell_tools.iter().any(|n| n == tool)
            || !crate::sandbox::missing_for(policy).is_empty()
        {
            return None;
        }
        let mut writes = vec![
            self.project_dir.display().to_string(),
            crate::sandbox::temp_dir(policy).display().to_string(),
        ];
        writes.extend(policy.write.iter().map(|p| p.display().to_string()));
        let network = match (&policy.egress, policy.network) {
            (_, true) => "on".to_string(),
            (Some(e), false) => format!("through hookd's proxy to {}", e.allow_words()),
            (None, false) => "off".to_string(),
        };
        Some(format!("writes: {}; network: {network}", writes.join(", ")))
    }

    /// At `pre_tool`, after the hooks: a call that goes ahead is remembered until its report.
    pub(super) fn remember_allowed(&self, call: &Call<'_>, state: &mut SessionState) {
        if call.point != HookPoint::PreTool || !self.tracks_results(call.point) {
            return;
        }
        let Decision::Tool(t) = &call.outcome.decision else {
            return;
        };
        if t.deny || t.base.halt {
            return;
        }
        let Some(mut pending) = self.pending_of(call) else {
            return;
        };
        pending.sandbox = self.confined_under(&pending.tool);
        state.pending.push(pending);
        let over = state.pending.len().saturating_sub(MOST_PENDING);
        state.pending.drain(..over);
    }

    /// At `post_tool`, the agent's report of a remembered call; at `post_session`, the calls it
    /// never reported.
    pub(super) fn record_results(&self, call: &mut Call<'_>, state: &mut SessionState) {
        if !self.tracks_results(call.point) {
            return;
        }
        let (turn, session_id) = (call.outcome.turn, call.session_id.to_string());
        let result = |p: PendingCall, hook, outcome| {
            Event::ToolResult(ToolResult {
                hook,
                tool: p.tool,
                command: p.command,
                path: p.path,
                outcome,
                sandbox: p.sandbox,
                turn,
                session_id: session_id.clone(),
            })
        };
        match call.point {
            HookPoint::PostTool => {
                let Some(reported) = self.pending_of(call) else {
                    return;
                };
                let same = |p: &PendingCall| {
                    p.tool == reported.tool
                        && p.command == reported.command
                        && p.path == reported.path
                };
                let Some(at) = state.pending.iter().position(same) else {
                    return; // not one the gate let through in this session's memory
                };
                let pending = state.pending.remove(at);
                let outcome = if call.view.tool_failed() {
                    ToolOutcome::Failed
                } else {
                    ToolOutcome::Ran
                };
                call.emit(result(pending, HookPoint::PostTool, outcome));
            }
            HookPoint::PostSession => {
                for p in std::mem::take(&mut state.pending) {
                    call.emit(result(p, HookPoint::PostSession, ToolOutcome::NotRun));
                }
            }
            _ => {}
        }
    }

    /// The call as the audit trail names it: its tool, a shell tool's command, the file it
    /// names (the model's input: at `post_tool`, hookd's rewrite is already mapped back).
    fn pending_of(&self, call: &Call<'_>) -> Option<PendingCall> {
        let tool = call.view.tool.as_ref().and_then(|t| t.name)?.to_string();
        let input = call.context.tool("input");
        let text = |k: &str| input.and_then(|i| i.get(k)).and_then(Value::as_str);
        let command = if self.shell_tools.contains(&tool)
            || self.shell_gate.iter().flatten().any(|n| *n == tool)
        {
            text("command").map(String::from)
        } else {
            None
        };
        let path = PATH_KEYS.iter().find_map(|k| text(k)).map(String::from);
        Some(PendingCall {
            tool,
            command,
            path,
            sandbox: None,
        })
    }
}
