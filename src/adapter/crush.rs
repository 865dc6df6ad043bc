//! Crush: its hook payloads in; replies as its envelope (`decision`, `reason`, `context`,
//! `updated_input`, `updated_prompt`) or exit codes (2 deny, 49 halt, reason on stderr).

use serde_json::{json, Map, Value};

use super::{additional_context, AgentReply, Translation};
use crate::catalog::HookPoint;
use crate::decision::Decision;
use crate::dispatch::{Context, Outcome};

/// Crush's events and their points. Released Crush fires PreToolUse only; the others are the
/// names its next hook events use, mapped so they work when they arrive.
pub const EVENTS: [(&str, HookPoint); 4] = [
    ("PreToolUse", HookPoint::PreTool),
    ("UserPromptSubmit", HookPoint::PreSession),
    ("PostToolUse", HookPoint::PostTool),
    ("Stop", HookPoint::PostSession),
];

/// Exit code that halts Crush's whole turn.
pub const HALT_EXIT: i32 = 49;

/// Read a Crush payload (`event`, `session_id`, `cwd`, `tool_name`, `tool_input`, ...).
pub fn translate(payload: &Value) -> Result<Translation, String> {
    let obj = payload
        .as_object()
        .ok_or("the payload is not a JSON object")?;
    let event = obj
        .get("event")
        .or_else(|| obj.get("hook_event_name"))
        .and_then(Value::as_str)
        .ok_or("the payload has no `event`")?;
    let Some((_, point)) = EVENTS.iter().find(|(e, _)| *e == event) else {
        return Ok(Translation {
            event: event.to_string(),
            point: None,
            context: Context::new(),
        });
    };
    let mut ctx = Context::from_json(&payload.to_string()).map_err(|e| e.to_string())?;
    ctx.set("agent", "crush");
    if let Some(name) = obj.get("tool_name") {
        let failed = obj
            .get("error")
            .and_then(Value::as_str)
            .is_some_and(|e| !e.is_empty());
        let mut tool = Map::new();
        tool.insert("name".into(), name.clone());
        tool.insert(
            "input".into(),
            obj.get("tool_input").cloned().unwrap_or(Value::Null),
        );
        if let Some(r) = obj.get("tool_result").or_else(|| obj.get("tool_response")) {
            tool.insert("result".into(), r.clone());
        }
        if *point == HookPoint::PostTool {
            tool.insert("failed".into(), Value::Bool(failed));
        }
        ctx.set("tool", Value::Object(tool));
    }
    Ok(Translation {
        event: event.to_string(),
        point: Some(*point),
        context: ctx,
    })
}

fn exit(code: i32, reason: Option<&str>, fallback: &str) -> AgentReply {
    AgentReply {
        stdout: String::new(),
        exit_code: code,
        notes: vec![reason.unwrap_or(fallback).to_string()],
    }
}

/// Crush's reply for `outcome`: deny and halt as exit codes (every Crush version honours them),
/// the rest as its JSON envelope.
pub fn reply(outcome: &Outcome) -> AgentReply {
    let mut out = Map::new();
    let mut notes = Vec::new();
    match &outcome.decision {
        Decision::Tool(t) => {
            if t.base.halt {
                return exit(
                    HALT_EXIT,
                    t.base.halt_reason.as_deref(),
                    "turn halted by hookd",
                );
            }
            if t.deny {
                // Crush gives stderr to the model: only the reason, never `operator_hint`.
                return exit(2, t.reason.as_deref(), "denied by hookd");
            }
            if let Some(input) = &t.updated_input {
                out.insert("updated_input".into(), input.clone());
            }
            if let Some(c) =
                additional_context(outcome, t.base.context.as_deref(), &t.base.context_files)
            {
                out.insert("context".into(), json!(c));
            }
        }
        Decision::Prompt(p) => {
            if p.base.halt {
                return exit(
                    HALT_EXIT,
                    p.base.halt_reason.as_deref(),
                    "turn halted by hookd",
                );
            }
            if p.deny {
                return exit(2, p.reason.as_deref(), "prompt denied by hookd");
            }
            if let Some(u) = &p.updated_prompt {
                out.insert("updated_prompt".into(), json!(u));
            }
            if let Some(c) =
                additional_context(outcome, p.base.context.as_deref(), &p.base.context_files)
            {
                out.insert("context".into(), json!(c));
            }
        }
        Decision::Context(c) => {
            if c.halt {
                return exit(HALT_EXIT, c.halt_reason.as_deref(), "turn halted by hookd");
            }
            if let Some(text) = additional_context(outcome, c.context.as_deref(), &c.context_files)
            {
                out.insert("context".into(), json!(text));
            }
        }
        Decision::Stop(s) => {
            if s.continue_ {
                out.insert("decision".into(), json!("block"));
                out.insert("reason".into(), json!(s.reason));
            } else if let Some(refused) = &s.continue_refused {
                notes.push(format!("hookd: {refused}"));
            }
        }
        Decision::Observe {} => {}
    }
    if !out.is_empty() {
        out.insert("version".into(), json!(1));
    }
    AgentReply {
        stdout: Value::Object(out).to_string(),
        exit_code: 0,
        notes,
    }
}

/// When hookd itself failed: let Crush go on, or with `--fail-closed` deny the tool call.
pub fn failure_reply(event: Option<&str>, error: &str, fail_closed: bool) -> AgentReply {
    // Exit 2 is Crush's deny; a payload hookd could not read (no event name) is denied too.
    if fail_closed && matches!(event, None | Some("PreToolUse") | Some("UserPromptSubmit")) {
        return AgentReply {
            stdout: String::new(),
            exit_code: 2,
            notes: vec![format!("hookd failed: {error}")],
        };
    }
    AgentReply {
        stdout: "{}".into(),
        exit_code: 0,
        notes: vec![format!("hookd: {error}")],
    }
}
