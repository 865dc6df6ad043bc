//! Gemini CLI: its hook payloads in, its replies out (`decision`, `reason`, `continue`,
//! `stopReason`, `systemMessage`, `hookSpecificOutput`).

use serde_json::{json, Map, Value};

use super::{additional_context, AgentReply, Translation};
use crate::catalog::HookPoint;
use crate::decision::Decision;
use crate::dispatch::{Context, Outcome};

/// Gemini CLI's events and their points. AfterModel fires for every streamed chunk; only the
/// chunk that ends the response (it carries a `finishReason`) becomes `post_stream`.
pub const EVENTS: [(&str, HookPoint); 7] = [
    ("BeforeAgent", HookPoint::PreSession),
    ("BeforeModel", HookPoint::PreStream),
    ("AfterModel", HookPoint::PostStream),
    ("BeforeTool", HookPoint::PreTool),
    ("AfterTool", HookPoint::PostTool),
    ("AfterAgent", HookPoint::PostSession),
    ("BeforeToolSelection", HookPoint::PreStream),
];

/// The finish reason of the last chunk, if this AfterModel payload ends the response.
fn finish_reason(obj: &Map<String, Value>) -> Option<String> {
    let candidates = obj.get("llm_response")?.get("candidates")?.as_array()?;
    let reason = candidates
        .iter()
        .filter_map(|c| c.get("finishReason").and_then(Value::as_str))
        .find(|r| !r.is_empty() && *r != "FINISH_REASON_UNSPECIFIED")?;
    Some(match reason {
        "MAX_TOKENS" => "length".to_string(),
        other => other.to_ascii_lowercase(),
    })
}

/// Read a Gemini CLI payload.
pub fn translate(payload: &Value) -> Result<Translation, String> {
    let obj = payload
        .as_object()
        .ok_or("the payload is not a JSON object")?;
    let event = obj
        .get("hook_event_name")
        .and_then(Value::as_str)
        .ok_or("the payload has no `hook_event_name`")?;
    let none = || {
        Ok(Translation {
            event: event.to_string(),
            point: None,
            context: Context::new(),
        })
    };
    // BeforeToolSelection only filters tools: nothing of hookd's applies there.
    let Some((_, point)) = EVENTS
        .iter()
        .find(|(e, _)| *e == event && *e != "BeforeToolSelection")
    else {
        return none();
    };
    let mut ctx = Context::from_json(&payload.to_string()).map_err(|e| e.to_string())?;
    ctx.set("agent", "gemini");
    if event == "AfterModel" {
        match finish_reason(obj) {
            Some(r) => ctx.set("finish_reason", r),
            None => return none(), // a chunk in the middle of a response
        };
    }
    if let Some(name) = obj.get("tool_name") {
        let error = obj
            .get("tool_response")
            .and_then(|r| r.get("error"))
            .filter(|e| !e.is_null());
        let mut tool = Map::new();
        tool.insert("name".into(), name.clone());
        tool.insert(
            "input".into(),
            obj.get("tool_input").cloned().unwrap_or(Value::Null),
        );
        if let Some(r) = obj.get("tool_response") {
            tool.insert("result".into(), r.clone());
        }
        if *point == HookPoint::PostTool {
            tool.insert("failed".into(), Value::Bool(error.is_some()));
        }
        ctx.set("tool", Value::Object(tool));
    }
    Ok(Translation {
        event: event.to_string(),
        point: Some(*point),
        context: ctx,
    })
}

/// Gemini CLI's reply to `event` for `outcome`.
pub fn reply(event: &str, outcome: &Outcome) -> AgentReply {
    let mut out = Map::new();
    let mut notes = Vec::new();
    let specific = |extra: Map<String, Value>| {
        let mut m = Map::new();
        m.insert("hookEventName".into(), json!(event));
        m.extend(extra);
        Value::Object(m)
    };
    let halt = |reason: &Option<String>, out: &mut Map<String, Value>| {
        out.insert("continue".into(), json!(false));
        out.insert("stopReason".into(), json!(reason));
    };
    match &outcome.decision {
        Decision::Prompt(p) => {
            if p.base.halt {
                halt(&p.base.halt_reason, &mut out);
            } else if p.deny {
                out.insert("decision".into(), json!("deny"));
                out.insert("reason".into(), json!(p.reason));
            } else if let Some(c) =
                additional_context(outcome, p.base.context.as_deref(), &p.base.context_files)
            {
                out.insert(
                    "hookSpecificOutput".into(),
                    specific(Map::from_iter([("additionalContext".into(), json!(c))])),
                );
            }
            if p.updated_prompt.is_some() {
                notes.push(
                    "hookd: Gemini CLI cannot replace a prompt; `updated_prompt` was not applied"
                        .into(),
                );
            }
        }
        Decision::Tool(t) => {
            // How to allow it is for the operator (stderr), never in the reason the model reads.
            notes.extend(t.operator_hint.iter().map(|h| format!("hookd: {h}")));
            if t.deny || t.base.halt {
                out.insert("decision".into(), json!("deny"));
                out.insert(
                    "reason".into(),
                    json!(t.reason.clone().or_else(|| t.base.halt_reason.clone())),
                );
                if t.base.halt {
                    halt(&t.base.halt_reason, &mut out);
                }
            } else {
                if let Some(input) = &t.updated_input {
                    out.insert(
                        "hookSpecificOutput".into(),
                        specific(Map::from_iter([("tool_input".into(), input.clone())])),
                    );
                }
                if additional_context(outcome, t.base.context.as_deref(), &t.base.context_files)
                    .is_some()
                {
                    notes.push("hookd: Gemini CLI takes no context before a tool runs; it was not injected".into());
                }
            }
        }
        Decision::Context(c) => {
            if c.halt {
                halt(&c.halt_reason, &mut out);
            } else if let Some(text) =
                additional_context(outcome, c.context.as_deref(), &c.context_files)
            {
                if event == "AfterTool" {
                    out.insert(
                        "hookSpecificOutput".into(),
                        specific(Map::from_iter([("additionalContext".into(), json!(text))])),
                    );
                } else {
                    notes.push(format!(
                        "hookd: Gemini CLI takes no context at {event}; it was not injected"
                    ));
                }
            }
        }
        Decision::Stop(s) => {
            if s.continue_ {
                // AfterAgent: a deny rejects the response and sends the reason as a new prompt.
                out.insert("decision".into(), json!("deny"));
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

/// When hookd itself failed: let Gemini CLI go on, or with `--fail-closed` deny.
pub fn failure_reply(event: Option<&str>, error: &str, fail_closed: bool) -> AgentReply {
    let reason = format!("hookd failed: {error}");
    let out = match (fail_closed, event) {
        (true, Some("BeforeTool" | "BeforeAgent")) => json!({"decision": "deny", "reason": reason}),
        // No event name to shape a reply for: deny on stdout and exit 2, which Gemini CLI reads
        // as a blocking error at every event, with stderr as the reason.
        (true, None) => {
            return AgentReply {
                stdout: json!({"decision": "deny", "reason": reason}).to_string(),
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
