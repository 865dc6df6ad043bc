//! Claude Code: its hook payloads in, hook points and contexts out; Outcomes in, its replies out.

use std::path::PathBuf;

use serde_json::Value;

use super::kit::*;
use super::reply::{HookReply, Specific};

/// Claude Code's adapter.
#[derive(Clone, Copy, Debug)]
pub struct ClaudeCode;

/// Claude Code's events. `pre_session` fires once per prompt at UserPromptSubmit and
/// `post_session` at Stop, so the session and compaction events map to nothing and no point
/// fires twice for one prompt.
const EVENTS: &[AgentEvent] = &[
    event(
        "UserPromptSubmit",
        Some(HookPoint::PreSession),
        Register::Yes,
    ),
    event(
        "PreToolUse",
        Some(HookPoint::PreTool),
        Register::WithMatcher,
    ),
    event(
        "PostToolUse",
        Some(HookPoint::PostTool),
        Register::WithMatcher,
    ),
    event(
        "PostToolUseFailure",
        Some(HookPoint::PostTool),
        Register::WithMatcher,
    ),
    event("Stop", Some(HookPoint::PostSession), Register::Yes),
    event("SessionStart", None, Register::No),
    event("SessionEnd", None, Register::No),
    event("PreCompact", None, Register::No),
    event("SubagentStop", None, Register::No),
    event("Notification", None, Register::No),
    event("PermissionRequest", None, Register::No),
    event("PermissionDenied", None, Register::No),
];

pub(crate) const fn event(
    name: &'static str,
    point: Option<HookPoint>,
    install: Register,
) -> AgentEvent {
    AgentEvent {
        name,
        point,
        install,
    }
}

/// Claude Code's permission mode -> hookd's mode (which selects the allow-list).
fn mode(permission_mode: Option<&str>) -> &'static str {
    match permission_mode {
        Some("plan") => "plan",
        Some("bypassPermissions") | Some("dontAsk") => "auto",
        _ => "standard",
    }
}

/// Claude Code, as data.
const PROFILE: Profile = Profile {
    name: "claude-code",
    title: "Claude Code",
    events: EVENTS,
    shape: Shape::Nested,
};

impl Adapter for ClaudeCode {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    fn translate(
        &self,
        payload: &Value,
        exec_program: Option<&std::path::Path>,
    ) -> Result<Translation, AdapterError> {
        let (obj, event) = object_and_event(self, payload)?;
        let failed = event == "PostToolUseFailure";
        let result = if failed {
            obj.get("error")
        } else {
            obj.get("tool_response")
        };
        let mut t = translate_common(
            self,
            obj,
            Reading::of(event, result, failed).by(exec_program),
        )?;
        if t.point.is_some() {
            t.context.set(
                "mode",
                mode(obj.get("permission_mode").and_then(Value::as_str)),
            );
            if obj.get("agent_id").is_some() {
                t.context.set("is_sub_agent", true);
            }
        }
        Ok(t)
    }

    /// Claude Code's reply to `event` for `outcome`.
    fn reply(&self, event: &str, outcome: &Outcome) -> AgentReply {
        let mut out = HookReply::default();
        let mut notes = Vec::new();
        match &outcome.decision {
            Decision::Prompt(p) => {
                out =
                    HookReply::to_prompt(p, (event, outcome), ("block", "Claude Code"), &mut notes)
            }
            Decision::Tool(t) => tool_reply(event, outcome, t, &mut out, &mut notes),
            Decision::Context(c) => {
                if c.halt {
                    out.halt(c.halt_reason.as_ref());
                } else if let Some(ctx) =
                    additional_context(outcome, c.context.as_deref(), &c.context_files)
                {
                    out.hook_specific_output = Some(Specific::context(event, ctx));
                }
            }
            Decision::Stop(s) => out = HookReply::to_stop(s, "block"),
            Decision::Observe {} => {}
        }
        AgentReply::json(&out, notes)
    }

    /// The reply when hookd itself failed: let the agent go on, unless the user chose to fail
    /// closed, in which case a tool call is denied and a prompt blocked.
    fn failure_reply(&self, event: Option<&str>, error: &str, fail_closed: bool) -> AgentReply {
        let reason = format!("hookd failed: {error}");
        let block = HookReply::refusal("block", Some(reason.clone()));
        let out = match (fail_closed, event) {
            (true, Some("PreToolUse")) => HookReply {
                hook_specific_output: Some(Specific {
                    permission_decision: Some("deny"),
                    permission_decision_reason: Some(reason),
                    ..Specific::new("PreToolUse")
                }),
                ..Default::default()
            },
            (true, Some("UserPromptSubmit")) => block,
            // A payload hookd could not read has no event name to shape a reply for. Exit 2 is the
            // one answer Claude Code reads as "block" at every event (stdout is ignored then).
            (true, None) => return HookReply::unreadable_payload(&block, reason),
            _ => HookReply::default(),
        };
        AgentReply::json(&out, vec![format!("hookd: {error}")])
    }

    fn settings_path(&self, scope: Scope, host: &Host) -> Result<PathBuf, AdapterError> {
        Ok(match scope {
            Scope::Project => super::cwd(host)?.join(".claude/settings.json"),
            Scope::Local => super::cwd(host)?.join(".claude/settings.local.json"),
            // Claude Code keeps its user settings in CLAUDE_CONFIG_DIR when that is set.
            Scope::User => match host.dir("CLAUDE_CONFIG_DIR") {
                Some(dir) => dir.join("settings.json"),
                None => super::home(host)?.join(".claude/settings.json"),
            },
            Scope::Managed => PathBuf::from(super::managed::CLAUDE_MANAGED),
        })
    }
}

/// Claude Code's reply to a tool call (`PreToolUse`): a deny, a rewrite and who approves it,
/// context; how to allow a refused call goes to the operator's `notes`, never to the model.
fn tool_reply(
    event: &str,
    outcome: &Outcome,
    t: &crate::decision::ToolDecision,
    out: &mut HookReply,
    notes: &mut Vec<String>,
) {
    let mut hso = Specific::new(event);
    notes.extend(t.operator_hint.iter().map(|h| format!("hookd: {h}")));
    if t.deny || t.base.halt {
        hso.permission_decision = Some("deny");
        hso.permission_decision_reason = t.reason.clone().or_else(|| t.base.halt_reason.clone());
    } else if let Some(input) = &t.updated_input {
        // A hook's rewrite still goes through the user's approval: hookd never approves it.
        // The sandbox's rewrite of a call the shell gate admitted is allowed (the allow-list
        // decided; Claude Code's own rules would not match the rewrite); one the gate did not
        // judge goes through Claude Code's permissions as rewritten (Claude Code 2.1.330
        // applies `updatedInput` without a decision; `ask` in `-p` mode refuses the call).
        let asked = t.asked_by.as_ref().map(|rule| {
            format!(
                "your Claude Code rule {rule} asks before this command; it runs in hookd's sandbox"
            )
        });
        let (decision, why) = match (t.confined, t.gate_admitted) {
            (true, _) if asked.is_some() => (Some("ask"), ""),
            (true, true) => (
                Some("allow"),
                "hookd's allow-list admits it; it runs in hookd's sandbox",
            ),
            (true, false) => (None, "it runs in hookd's sandbox"),
            (false, _) => (Some("ask"), "hookd hooks rewrote this call's input"),
        };
        hso.permission_decision = decision;
        hso.permission_decision_reason = Some(asked.unwrap_or_else(|| why.into()));
        hso.updated_input = Some(input.clone());
    }
    if t.base.halt {
        out.halt(t.base.halt_reason.as_ref());
    }
    if !t.deny && !t.base.halt {
        hso.additional_context =
            additional_context(outcome, t.base.context.as_deref(), &t.base.context_files);
    }
    if !hso.is_empty() {
        out.hook_specific_output = Some(hso);
    }
}
