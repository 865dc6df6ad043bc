//! Claude Code: its hook payloads in, hook points and contexts out; Outcomes in, its replies out.

use serde_json::{json, Map, Value};

use super::{additional_context, AgentReply, Translation};
use crate::catalog::HookPoint;
use crate::decision::Decision;
use crate::dispatch::{Context, Outcome};

/// Claude Code's events that hookd acts on, and the point each maps to. Every other event
/// (SessionStart, SessionEnd, PreCompact, SubagentStop, Notification, PermissionRequest, ...) maps
/// to nothing: `pre_session` already fires once per prompt at UserPromptSubmit and `post_session`
/// at Stop, so no point fires twice for one prompt.
pub const EVENTS: [(&str, HookPoint); 5] = [
    ("UserPromptSubmit", HookPoint::PreSession),
    ("PreToolUse", HookPoint::PreTool),
    ("PostToolUse", HookPoint::PostTool),
    ("PostToolUseFailure", HookPoint::PostTool),
    ("Stop", HookPoint::PostSession),
];

/// Claude Code's permission mode -> hookd's mode (which selects the allow-list).
fn mode(permission_mode: Option<&str>) -> &'static str {
    match permission_mode {
        Some("plan") => "plan",
        Some("bypassPermissions") | Some("dontAsk") => "auto",
        _ => "standard",
    }
}

/// Read a Claude Code payload.
pub fn translate(payload: &Value) -> Result<Translation, String> {
    let obj = payload
        .as_object()
        .ok_or("the payload is not a JSON object")?;
    let event = obj
        .get("hook_event_name")
        .and_then(Value::as_str)
        .ok_or("the payload has no `hook_event_name`")?;
    let Some((_, point)) = EVENTS.iter().find(|(e, _)| *e == event) else {
        return Ok(Translation {
            event: event.to_string(),
            point: None,
            context: Context::new(),
        });
    };
    // The whole payload goes to hooks (so hooks written for Claude Code keep working), plus
    // hookd's own fields.
    let mut ctx = Context::from_json(&payload.to_string()).map_err(|e| e.to_string())?;
    ctx.set("agent", "claude-code");
    ctx.set(
        "mode",
        mode(obj.get("permission_mode").and_then(Value::as_str)),
    );
    if let Some(name) = obj.get("tool_name") {
        let failed = event == "PostToolUseFailure";
        let result = if failed {
            obj.get("error")
        } else {
            obj.get("tool_response")
        };
        let mut tool = Map::new();
        tool.insert("name".into(), name.clone());
        tool.insert(
            "input".into(),
            obj.get("tool_input").cloned().unwrap_or(Value::Null),
        );
        if let Some(r) = result {
            tool.insert("result".into(), r.clone());
        }
        if *point == HookPoint::PostTool {
            tool.insert("failed".into(), Value::Bool(failed));
        }
        ctx.set("tool", Value::Object(tool));
    }
    if obj.get("agent_id").is_some() {
        ctx.set("is_sub_agent", true);
    }
    Ok(Translation {
        event: event.to_string(),
        point: Some(*point),
        context: ctx,
    })
}

/// Claude Code's reply to `event` for `outcome`.
pub fn reply(event: &str, outcome: &Outcome) -> AgentReply {
    let mut out = Map::new();
    let mut notes = Vec::new();
    let specific = |extra: Map<String, Value>| {
        let mut m = Map::new();
        m.insert("hookEventName".into(), json!(event));
        m.extend(extra);
        Value::Object(m)
    };
    match &outcome.decision {
        Decision::Prompt(p) => {
            if p.base.halt {
                out.insert("continue".into(), json!(false));
                out.insert("stopReason".into(), json!(p.base.halt_reason));
            } else if p.deny {
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(p.reason));
            }
            if p.updated_prompt.is_some() {
                notes.push(
                    "hookd: Claude Code cannot replace a prompt; `updated_prompt` was not applied"
                        .to_string(),
                );
            }
            if let Some(ctx) =
                additional_context(outcome, p.base.context.as_deref(), &p.base.context_files)
            {
                if !p.deny && !p.base.halt {
                    out.insert(
                        "hookSpecificOutput".into(),
                        specific(Map::from_iter([("additionalContext".into(), json!(ctx))])),
                    );
                }
            }
        }
        Decision::Tool(t) => {
            let mut hso = Map::new();
            // How to allow it is for the operator (stderr), never in the reason the model reads.
            notes.extend(t.operator_hint.iter().map(|h| format!("hookd: {h}")));
            if t.deny || t.base.halt {
                let reason = t.reason.clone().or_else(|| t.base.halt_reason.clone());
                hso.insert("permissionDecision".into(), json!("deny"));
                hso.insert("permissionDecisionReason".into(), json!(reason));
            } else if let Some(input) = &t.updated_input {
                // A rewritten call still goes through the user's approval: hookd never approves.
                hso.insert("permissionDecision".into(), json!("ask"));
                hso.insert(
                    "permissionDecisionReason".into(),
                    json!("hookd hooks rewrote this call's input"),
                );
                hso.insert("updatedInput".into(), input.clone());
            }
            if t.base.halt {
                out.insert("continue".into(), json!(false));
                out.insert("stopReason".into(), json!(t.base.halt_reason));
            }
            if !t.deny && !t.base.halt {
                if let Some(ctx) =
                    additional_context(outcome, t.base.context.as_deref(), &t.base.context_files)
                {
                    hso.insert("additionalContext".into(), json!(ctx));
                }
            }
            if !hso.is_empty() {
                out.insert("hookSpecificOutput".into(), specific(hso));
            }
        }
        Decision::Context(c) => {
            if c.halt {
                out.insert("continue".into(), json!(false));
                out.insert("stopReason".into(), json!(c.halt_reason));
            } else if let Some(ctx) =
                additional_context(outcome, c.context.as_deref(), &c.context_files)
            {
                out.insert(
                    "hookSpecificOutput".into(),
                    specific(Map::from_iter([("additionalContext".into(), json!(ctx))])),
                );
            }
        }
        Decision::Stop(s) => {
            if s.continue_ {
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(s.reason));
            } else if let Some(refused) = &s.continue_refused {
                out.insert("systemMessage".into(), json!(refused));
            }
        }
        Decision::Observe {} => {}
    }
    AgentReply {
        stdout: Value::Object(out).to_string(),
        exit_code: 0,
        notes,
    }
}

/// The reply when hookd itself failed: let the agent go on, unless the user chose to fail
/// closed, in which case a tool call is denied and a prompt blocked.
pub fn failure_reply(event: Option<&str>, error: &str, fail_closed: bool) -> AgentReply {
    let reason = format!("hookd failed: {error}");
    let out = match (fail_closed, event) {
        (true, Some("PreToolUse")) => {
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}})
        }
        (true, Some("UserPromptSubmit")) => json!({"decision": "block", "reason": reason}),
        // A payload hookd could not read has no event name to shape a reply for. Exit 2 is the
        // one answer Claude Code reads as "block" at every event (stdout is ignored then).
        (true, None) => {
            return AgentReply {
                stdout: json!({"decision": "block", "reason": reason}).to_string(),
                exit_code: 2,
                notes: vec![reason],
            }
        }
        _ => json!({}),
    };
    AgentReply {
        stdout: out.to_string(),
        exit_code: 0,
        notes: vec![format!("hookd: {error}")],
    }
}
