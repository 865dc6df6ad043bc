//! Gemini CLI: its hook payloads in, its replies out (`decision`, `reason`, `continue`,
//! `stopReason`, `systemMessage`, `hookSpecificOutput`).

use std::path::PathBuf;

use serde_json::{Map, Value};

use super::claude::event;
use super::kit::*;
use super::reply::{HookReply, Specific};

/// Gemini CLI's adapter.
#[derive(Clone, Copy, Debug)]
pub struct Gemini;

/// Gemini CLI's events and their points. AfterModel fires for every streamed chunk (so it is not
/// installed by default); only the chunk that ends the response (it carries a `finishReason`)
/// becomes `post_stream`. BeforeToolSelection only filters tools: nothing of hookd's applies.
const EVENTS: &[AgentEvent] = &[
    event("BeforeAgent", Some(HookPoint::PreSession), Register::Yes),
    event("BeforeModel", Some(HookPoint::PreStream), Register::Yes),
    event("AfterModel", Some(HookPoint::PostStream), Register::No),
    event(
        "BeforeTool",
        Some(HookPoint::PreTool),
        Register::WithMatcher,
    ),
    event(
        "AfterTool",
        Some(HookPoint::PostTool),
        Register::WithMatcher,
    ),
    event("AfterAgent", Some(HookPoint::PostSession), Register::Yes),
    event("BeforeToolSelection", None, Register::No),
    event("SessionStart", None, Register::No),
    event("SessionEnd", None, Register::No),
    event("Notification", None, Register::No),
    event("PreCompress", None, Register::No),
];

/// Gemini CLI, as data.
const PROFILE: Profile = Profile {
    name: "gemini",
    title: "Gemini CLI",
    events: EVENTS,
    shape: Shape::Nested,
};

impl Adapter for Gemini {
    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    fn translate(
        &self,
        payload: &Value,
        exec_program: Option<&std::path::Path>,
    ) -> Result<Translation, AdapterError> {
        let (obj, event) = object_and_event(self, payload)?;
        let finish = if event == "AfterModel" {
            match finish_reason(obj) {
                Some(r) => Some(r),
                // A chunk in the middle of a response.
                None => {
                    return Ok(Translation {
                        event: event.to_string(),
                        point: None,
                        context: crate::dispatch::Context::new(),
                    })
                }
            }
        } else {
            None
        };
        let result = obj.get("tool_response");
        let failed = result
            .and_then(|r| r.get("error"))
            .is_some_and(|e| !e.is_null());
        let mut t = translate_common(
            self,
            obj,
            Reading::of(event, result, failed).by(exec_program),
        )?;
        if let (Some(r), Some(_)) = (finish, t.point) {
            t.context.set("finish_reason", r);
        }
        Ok(t)
    }

    /// Gemini CLI's reply to `event` for `outcome`.
    fn reply(&self, event: &str, outcome: &Outcome) -> AgentReply {
        let mut out = HookReply::default();
        let mut notes = Vec::new();
        match &outcome.decision {
            Decision::Prompt(p) => {
                out = HookReply::to_prompt(p, (event, outcome), ("deny", "Gemini CLI"), &mut notes)
            }
            Decision::Tool(t) => {
                // How to allow it is for the operator (stderr), never in the reason the model reads.
                notes.extend(t.operator_hint.iter().map(|h| format!("hookd: {h}")));
                if t.deny || t.base.halt {
                    out.decision = Some("deny");
                    out.reason = t.reason.clone().or_else(|| t.base.halt_reason.clone());
                    if t.base.halt {
                        out.halt(t.base.halt_reason.as_ref());
                    }
                } else {
                    if let Some(input) = &t.updated_input {
                        out.hook_specific_output = Some(Specific {
                            tool_input: Some(input.clone()),
                            ..Specific::new(event)
                        });
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
                    out.halt(c.halt_reason.as_ref());
                } else if let Some(text) =
                    additional_context(outcome, c.context.as_deref(), &c.context_files)
                {
                    if event == "AfterTool" {
                        out.hook_specific_output = Some(Specific::context(event, text));
                    } else {
                        notes.push(format!(
                            "hookd: Gemini CLI takes no context at {event}; it was not injected"
                        ));
                    }
                }
            }
            // AfterAgent: a deny rejects the response and sends the reason as a new prompt.
            Decision::Stop(s) => out = HookReply::to_stop(s, "deny"),
            Decision::Observe {} => {}
        }
        AgentReply::json(&out, notes)
    }

    /// When hookd itself failed: let Gemini CLI go on, or with `--fail-closed` deny.
    fn failure_reply(&self, event: Option<&str>, error: &str, fail_closed: bool) -> AgentReply {
        let reason = format!("hookd failed: {error}");
        let deny = HookReply::refusal("deny", Some(reason.clone()));
        let out = match (fail_closed, event) {
            (true, Some("BeforeTool" | "BeforeAgent")) => deny,
            // No event name to shape a reply for: deny on stdout and exit 2, which Gemini CLI reads
            // as a blocking error at every event, with stderr as the reason.
            (true, None) => return HookReply::unreadable_payload(&deny, reason),
            _ => HookReply::default(),
        };
        AgentReply::json(&out, vec![format!("hookd: {error}")])
    }

    fn settings_path(&self, scope: Scope, host: &Host) -> Result<PathBuf, AdapterError> {
        match scope {
            Scope::Project => Ok(super::cwd(host)?.join(".gemini/settings.json")),
            // GEMINI_CLI_HOME replaces the home directory for everything Gemini CLI keeps.
            Scope::User => Ok(match host.dir("GEMINI_CLI_HOME") {
                Some(h) => h.join(".gemini/settings.json"),
                None => super::home(host)?.join(".gemini/settings.json"),
            }),
            // The system settings, which override every other file; Gemini CLI's own variable
            // moves them.
            Scope::Managed => Ok(host
                .dir("GEMINI_CLI_SYSTEM_SETTINGS_PATH")
                .unwrap_or_else(|| PathBuf::from(super::managed::GEMINI_SYSTEM))),
            Scope::Local => Err(AdapterError::NoLocalScope),
        }
    }
}

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
