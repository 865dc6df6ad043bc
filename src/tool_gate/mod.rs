//! The model's own tool calls as a provider, at `pre_tool` before any command hook: with
//! `gate_shell_tools`, a shell call faces the allow-list and a file tool's path hookd's own
//! files; with the sandbox on, a file tool's write faces its write policy, and a shell call
//! that goes ahead is rewritten to run confined. A call set up to run the repository's code
//! before hookd can check it (the agent's start-up) is denied. After the hooks ran, a hook's
//! rewrite of the call faces the same gate. Every verdict is an event, and what became of
//! each call it let through is followed to its result.

mod confine;
mod input;
mod results;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use crate::catalog::HookPoint;
use crate::decision::{self, Contribution, Decision, Reply};
use crate::events::{self, Event};
use crate::gate::protect::{Places, ProtectedPaths};
use crate::gate::{Denied, Gate};
use crate::provider::{Call, Provider};
use crate::runner;
use crate::state::SessionState;

/// The longest tool name an event keeps (tools are short names: `Bash`, `run_shell_command`).
const MOST_TOOL_NAME_BYTES: usize = 256;

/// The tool gate: what it checks a model's call against, and what it confines it with.
pub(crate) struct ToolGate {
    pub gate: Arc<Gate>,
    pub project_dir: PathBuf,
    /// The sandbox shell calls are confined by (`None` or not `enabled`: unconfined).
    pub sandbox: Option<crate::config::SandboxPolicy>,
    /// The shell tools (whose `command` the sandbox rewrites to run confined).
    pub shell_tools: Vec<String>,
    /// The `hookd` program the agent runs a confined shell call with.
    pub exec_program: Option<PathBuf>,
    /// What the configuration was loaded from (`--config-dir`, the user's home), carried in
    /// the rewrite of a confined shell call so that `hookd exec` loads the same.
    pub loaded_from: (Option<PathBuf>, Option<PathBuf>),
    /// With `gate_shell_tools`: the shell tools whose commands face the gate at `pre_tool`.
    pub shell_gate: Option<Vec<String>>,
    /// Where hookd's own files are (read from the environment when the engine was built).
    pub places: Places,
    /// Those files as rules, built from `places` on first use.
    pub protected: OnceLock<ProtectedPaths>,
    /// What the repository set for the agent (the start-up check reads it).
    pub environment: Arc<runner::Environment>,
}

impl Provider for ToolGate {
    fn wants(&self, point: HookPoint) -> bool {
        (point == HookPoint::PreTool && (self.shell_gate.is_some() || self.confines()))
            || self.tracks_results(point)
    }

    fn needs_state(&self, point: HookPoint) -> bool {
        self.tracks_results(point)
    }

    fn decide(&self, call: &mut Call<'_>, state: &mut SessionState) {
        if call.point == HookPoint::PostSession {
            // As the command hooks' provider reads it: the point's decision says whether a
            // stop hook is active even when no hook is configured there.
            call.facts.continues = state.continues;
        }
        self.record_results(call, state);
    }

    /// The gate's verdict, before any hook runs: a call it denies is the point's decision, and
    /// no hook runs for it (see `CommandProvider::provide`). The point's decision is shaped
    /// here as the command hooks' provider shapes it, so that it is the same whether or not a
    /// hook is configured at the point.
    fn provide(&self, call: &mut Call<'_>) {
        let mut contributions = Vec::new();
        let gate_hint = self.gate_shell_command(call).map(|(c, hint)| {
            contributions.push(c);
            hint
        });
        let mut decision =
            decision::aggregate(&contributions, call.decision_inputs(&self.project_dir));
        if let (Decision::Tool(t), Some(hint)) = (&mut decision, gate_hint) {
            t.operator_hint = Some(hint);
        }
        call.outcome.decision = decision;
    }

    /// After the hooks: their rewrite faces the gate, and the call that goes ahead is confined.
    fn review(&self, call: &mut Call<'_>) {
        let mut decision =
            std::mem::replace(&mut call.outcome.decision, Decision::none(call.point));
        self.regate_rewrite(call, &mut decision);
        self.confine_shell_call(call, &mut decision);
        call.outcome.decision = decision;
    }

    fn needs_settle(&self, point: HookPoint) -> bool {
        matches!(point, HookPoint::PreTool | HookPoint::PostSession) && self.tracks_results(point)
    }

    fn settle(&self, call: &mut Call<'_>, state: &mut SessionState) {
        self.remember_allowed(call, state);
        // As the command hooks' provider settles the loop guard, for a post_session with no
        // hook of its own: a stop that does not continue ends the run of continues.
        if let Decision::Stop(stop) = &call.outcome.decision {
            if !stop.continue_ {
                state.continues = 0;
            }
        }
    }
}

impl ToolGate {
    /// `gate_shell_tools`: a shell tool call whose command the allow-list does not admit, or
    /// that names one of hookd's own files, and a file tool call that writes one, are denied
    /// before any hook runs. The model is told why, never how to allow it: the operator's hint
    /// goes to the event and the decision's `operator_hint` (adapters print it on stderr).
    fn gate_shell_command(&self, call: &mut Call<'_>) -> Option<(Contribution, String)> {
        let tool = call.view.tool.as_ref().and_then(|t| t.name)?;
        let input = call.context.tool("input").cloned();
        let (named, denied) = match self.gate_input(call, tool, input.as_ref()) {
            Gated::Ungated => return None,
            Gated::Allowed {
                command,
                path,
                entries,
            } => {
                tracing::debug!(tool, "the shell gate admits this call");
                self.emit_allowed(call, tool, command, path, entries);
                return None;
            }
            Gated::Denied(named, denied) => (named, denied),
        };
        tracing::debug!(tool, reason = %denied.reason, detail = %denied.detail, "the shell gate denies this call");
        let reason = format!("hookd refused this {tool} call: {}", denied.detail);
        let hint = denied.hint.clone();
        self.emit_denied(call, tool, named, denied);
        Some((
            Contribution {
                name: "hookd-gate".into(),
                reply: Reply {
                    deny: true,
                    reason: Some(reason),
                    ..Reply::default()
                },
            },
            hint,
        ))
    }

    /// With `gate_shell_tools`, a hook that rewrote the call's input (`updated_input`) faces
    /// the same gate: what the agent runs is what was checked, whoever wrote it. A rewrite the
    /// gate refuses denies the call.
    fn regate_rewrite(&self, call: &mut Call<'_>, decision: &mut Decision) {
        let Decision::Tool(t) = decision else { return };
        if t.deny || t.base.halt {
            return;
        }
        let Some(updated) = t.updated_input.clone() else {
            return;
        };
        let Some(tool) = call.view.tool.as_ref().and_then(|v| v.name) else {
            return;
        };
        let Gated::Denied(named, denied) = self.gate_input(call, tool, Some(&updated)) else {
            return;
        };
        t.deny = true;
        t.reason = Some(format!(
            "hookd refused this {tool} call as a hook rewrote it: {}",
            denied.detail
        ));
        t.synthetic_result = t
            .reason
            .as_ref()
            .map(|r| format!("hookd denied this tool call: {r}"));
        t.updated_input = None;
        t.operator_hint = Some(denied.hint.clone());
        self.emit_denied(call, tool, named, denied);
    }

    /// The audit trail's record of a call the gate let through.
    fn emit_allowed(
        &self,
        call: &mut Call<'_>,
        tool: &str,
        command: Option<String>,
        path: Option<String>,
        entries: Vec<String>,
    ) {
        use crate::display::clip;
        let most = crate::gate::MAX_COMMAND_BYTES;
        call.emit(Event::ToolCallAllowed(events::ToolCallAllowed {
            tool: clip(tool, MOST_TOOL_NAME_BYTES).into_owned(),
            command: command.map(|c| clip(&c, most).into_owned()),
            path: path.map(|p| clip(&p, most).into_owned()),
            entries,
            mode: call.mode,
            sandbox: self.confined_under(tool),
            turn: call.outcome.turn,
            session_id: call.session_id.to_string(),
        }));
    }

    /// The event keeps what the model sent cut to the gate's own limit: a refused call of
    /// megabytes (denied as too long) must not make an event, a log line and a dashboard row
    /// of megabytes, ten thousand times over in the daemon's ring.
    fn emit_denied(&self, call: &mut Call<'_>, tool: &str, named: Named, denied: Denied) {
        use crate::display::clip;
        let most = crate::gate::MAX_COMMAND_BYTES;
        let (Named::Command(text) | Named::Path(text)) = &named;
        let text = match clip(text, most) {
            std::borrow::Cow::Borrowed(_) => text.clone(),
            cut => cut.into_owned(),
        };
        call.emit(Event::ToolCommandDenied(events::ToolCommandDenied {
            tool: clip(tool, MOST_TOOL_NAME_BYTES).into_owned(),
            // A file tool's path stays in `command` too, as events of older versions had it.
            path: matches!(named, Named::Path(_)).then(|| text.clone()),
            command: text,
            mode: call.mode,
            reason: denied.reason,
            detail: clip(&denied.detail, most).into_owned(),
            hint: clip(&denied.hint, most).into_owned(),
            turn: call.outcome.turn,
            session_id: call.session_id.to_string(),
        }));
    }

    /// hookd's own files, resolved on the first tool call that needs them, once per engine.
    fn protected(&self) -> &ProtectedPaths {
        self.protected
            .get_or_init(|| ProtectedPaths::new(&self.places))
    }
}

/// The gate's answer on a `pre_tool` call.
enum Gated {
    /// The shell gate is off, or this is not `pre_tool`.
    Ungated,
    /// It may go on: the shell command and the entries that admitted its parts, or the path
    /// another tool names.
    Allowed {
        command: Option<String>,
        path: Option<String>,
        entries: Vec<String>,
    },
    /// It may not: the command (or path) as the model wrote it, and why.
    Denied(Named, Denied),
}

/// What a refused tool call named: a shell tool's command, or a file tool's path.
enum Named {
    Command(String),
    Path(String),
}
