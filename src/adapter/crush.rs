//! Crush: its hook payloads in; replies as its envelope (`decision`, `reason`, `context`,
//! `updated_input`, `updated_prompt`) or exit codes (2 deny, 49 halt, reason on stderr).

use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use super::claude::event;
use super::kit::*;

/// Crush's adapter.
#[derive(Clone, Copy, Debug)]
pub struct Crush;

/// Crush's events and their points. Released Crush fires PreToolUse only (the one installed);
/// the others are the names its next hook events use, mapped so they work when they arrive.
const EVENTS: &[AgentEvent] = &[
    event("PreToolUse", Some(HookPoint::PreTool), Register::Yes),
    event(
        "UserPromptSubmit",
        Some(HookPoint::PreSession),
        Register::No,
    ),
    event("PostToolUse", Some(HookPoint::PostTool), Register::No),
    event("Stop", Some(HookPoint::PostSession), Register::No),
];

/// Exit code that halts Crush's whole turn.
pub const HALT_EXIT: i32 = 49;

/// Crush's JSON envelope.
#[derive(Debug, Default, Serialize)]
struct CrushReply {
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decision: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_input: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    updated_prompt: Option<String>,
}

/// Crush, as data.
const PROFILE: Profile = Profile {
    name: "crush",
    title: "Crush",
    events: EVENTS,
    shape: Shape::Flat,
};

impl Adapter for Crush {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    fn event_field(&self) -> &'static str {
        "event"
    }

    fn event_name<'a>(&self, payload: &'a Map<String, Value>) -> Option<&'a str> {
        payload
            .get("event")
            .or_else(|| payload.get("hook_event_name"))
            .and_then(Value::as_str)
    }

    /// A Crush payload: `event`, `session_id`, `cwd`, `tool_name`, `tool_input`, ...
    fn translate(
        &self,
        payload: &Value,
        exec_program: Option<&std::path::Path>,
    ) -> Result<Translation, AdapterError> {
        let (obj, event) = object_and_event(self, payload)?;
        let failed = obj
            .get("error")
            .and_then(Value::as_str)
            .is_some_and(|e| !e.is_empty());
        let result = obj.get("tool_result").or_else(|| obj.get("tool_response"));
        translate_common(
            self,
            obj,
            Reading::of(event, result, failed).by(exec_program),
        )
    }

    /// Crush's reply for `outcome`: deny and halt as exit codes (every Crush version honours them),
    /// the rest as its JSON envelope.
    fn reply(&self, _event: &str, outcome: &Outcome) -> AgentReply {
        let mut out = CrushReply::default();
        let mut notes = Vec::new();
        // What the point's decision shares (halt, context), and a denial with its fallback words.
        let (base, denied) = match &outcome.decision {
            Decision::Tool(t) => {
                out.updated_input = t.updated_input.clone();
                let denied = t.deny.then_some((t.reason.as_deref(), "denied by hookd"));
                (Some(&t.base), denied)
            }
            Decision::Prompt(p) => {
                out.updated_prompt = p.updated_prompt.clone();
                let denied = p
                    .deny
                    .then_some((p.reason.as_deref(), "prompt denied by hookd"));
                (Some(&p.base), denied)
            }
            Decision::Context(c) => (Some(c), None),
            Decision::Stop(s) => {
                if s.continue_ {
                    out.decision = Some("block");
                    out.reason = s.reason.clone();
                } else if let Some(refused) = &s.continue_refused {
                    notes.push(format!("hookd: {refused}"));
                }
                (None, None)
            }
            Decision::Observe {} => (None, None),
        };
        if let Some(b) = base {
            if b.halt {
                return exit(HALT_EXIT, b.halt_reason.as_deref(), "turn halted by hookd");
            }
            if let Some((reason, fallback)) = denied {
                // Crush gives stderr to the model: only the reason, never `operator_hint`.
                return exit(2, reason, fallback);
            }
            out.context = additional_context(outcome, b.context.as_deref(), &b.context_files);
        }
        let empty = out.decision.is_none()
            && out.context.is_none()
            && out.updated_input.is_none()
            && out.updated_prompt.is_none();
        if !empty {
            out.version = Some(1);
        }
        AgentReply::json(&out, notes)
    }

    /// When hookd itself failed: let Crush go on, or with `--fail-closed` deny the tool call.
    fn failure_reply(&self, event: Option<&str>, error: &str, fail_closed: bool) -> AgentReply {
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

    fn settings_path(&self, scope: Scope, host: &Host) -> Result<PathBuf, AdapterError> {
        match scope {
            Scope::Project => {
                let dir = super::cwd(host)?;
                // Crush reads either name; use the one the project already has.
                Ok(
                    if dir.join(".crush.json").exists() && !dir.join("crush.json").exists() {
                        dir.join(".crush.json")
                    } else {
                        dir.join("crush.json")
                    },
                )
            }
            Scope::User => {
                // Crush's own override names the directory that holds crush.json.
                if let Some(dir) = host.dir("CRUSH_GLOBAL_CONFIG") {
                    return Ok(dir.join("crush.json"));
                }
                let base = match host.dir("XDG_CONFIG_HOME") {
                    Some(x) => x,
                    None => super::home(host)?.join(".config"),
                };
                Ok(base.join("crush/crush.json"))
            }
            Scope::Local => Err(AdapterError::NoLocalScope),
            Scope::Managed => Err(AdapterError::NoManagedScope),
        }
    }

    /// Crush gives the model the adapter's stderr as a deny's reason.
    fn stderr_is_reason(&self) -> bool {
        true
    }
}

fn exit(code: i32, reason: Option<&str>, fallback: &str) -> AgentReply {
    AgentReply {
        stdout: String::new(),
        exit_code: code,
        notes: vec![reason.unwrap_or(fallback).to_string()],
    }
}
