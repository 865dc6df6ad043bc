//! The replies Claude Code and Gemini CLI read, as types: Gemini's hook protocol descends from
//! Claude Code's, so one struct serialises both; absent fields are left out.

use serde::Serialize;
use serde_json::Value;

use super::{additional_context, AgentReply};
use crate::decision::{PromptDecision, StopDecision};
use crate::dispatch::Outcome;

/// The top level of a reply on stdout.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HookReply {
    /// `false` stops the agent's turn.
    #[serde(rename = "continue", skip_serializing_if = "Option::is_none")]
    pub continue_: Option<bool>,
    /// Why the turn stopped (shown to the user).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// `block` (Claude Code) or `deny` (Gemini CLI).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<&'static str>,
    /// Why, for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A line for the user.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    /// Event-specific answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<Specific>,
}

/// `hookSpecificOutput`.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Specific {
    /// The event answered.
    pub hook_event_name: String,
    /// Claude Code's `deny` or `ask`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision: Option<&'static str>,
    /// Why, for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_decision_reason: Option<String>,
    /// Claude Code's rewritten tool input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// Gemini CLI's rewritten tool input.
    #[serde(rename = "tool_input", skip_serializing_if = "Option::is_none")]
    pub tool_input: Option<Value>,
    /// Text the model sees in addition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
}

impl Specific {
    pub(crate) fn new(event: &str) -> Self {
        Specific {
            hook_event_name: event.to_string(),
            ..Default::default()
        }
    }

    /// Only additional context.
    pub(crate) fn context(event: &str, text: String) -> Self {
        Specific {
            additional_context: Some(text),
            ..Specific::new(event)
        }
    }

    /// True when it answers nothing.
    pub(crate) fn is_empty(&self) -> bool {
        self.permission_decision.is_none()
            && self.updated_input.is_none()
            && self.tool_input.is_none()
            && self.additional_context.is_none()
    }
}

impl HookReply {
    /// Stop the turn.
    pub(crate) fn halt(&mut self, reason: Option<&String>) {
        self.continue_ = Some(false);
        self.stop_reason = reason.cloned();
    }

    /// A refusal in the agent's word for it (`block`, `deny`), with the reason the model reads.
    pub(crate) fn refusal(word: &'static str, reason: Option<String>) -> Self {
        HookReply {
            decision: Some(word),
            reason,
            ..HookReply::default()
        }
    }

    /// The reply to a prompt (`refuse`: the agent's word for a block): halt, refusal, or the
    /// context to add; a rewrite neither agent can apply is said in `notes`.
    pub(crate) fn to_prompt(
        p: &PromptDecision,
        (event, outcome): (&str, &Outcome),
        (refuse, agent): (&'static str, &str),
        notes: &mut Vec<String>,
    ) -> Self {
        let mut out = HookReply::default();
        if p.base.halt {
            out.halt(p.base.halt_reason.as_ref());
        } else if p.deny {
            out = HookReply::refusal(refuse, p.reason.clone());
        } else if let Some(c) =
            additional_context(outcome, p.base.context.as_deref(), &p.base.context_files)
        {
            out.hook_specific_output = Some(Specific::context(event, c));
        }
        if p.updated_prompt.is_some() {
            notes.push(format!(
                "hookd: {agent} cannot replace a prompt; `updated_prompt` was not applied"
            ));
        }
        out
    }

    /// The reply at the end of a turn: `continue` as a refusal of the stop (its reason the next
    /// prompt), or the loop guard's refusal of it as a line for the user.
    pub(crate) fn to_stop(s: &StopDecision, refuse: &'static str) -> Self {
        if s.continue_ {
            HookReply::refusal(refuse, s.reason.clone())
        } else {
            HookReply {
                system_message: s.continue_refused.clone(),
                ..HookReply::default()
            }
        }
    }

    /// hookd's own failure when the payload named no event: `refusal` on stdout and exit 2,
    /// which both agents read as blocking at every event, the reason on stderr.
    pub(crate) fn unreadable_payload(refusal: &HookReply, reason: String) -> AgentReply {
        AgentReply {
            exit_code: 2,
            ..AgentReply::json(refusal, vec![reason])
        }
    }
}
