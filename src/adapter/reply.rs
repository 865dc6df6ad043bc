//! The replies Claude Code and Gemini CLI read, as types: Gemini's hook protocol descends from
//! Claude Code's, so one struct serialises both; absent fields are left out.

use serde::Serialize;
use serde_json::Value;

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
}
