//! The one catalog of hook points: parsing, help text, docs and JSON all come from `HookPoint`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A fixed point of an agent's loop where hooks may act. Declared in loop order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum HookPoint {
    /// Once, before the first turn of a run.
    PreSession,
    /// Before every model request.
    PreStream,
    /// After every model response.
    PostStream,
    /// Before a tool call (or batch) runs.
    PreTool,
    /// After a tool call ran.
    PostTool,
    /// Before queued user messages are taken in.
    PreQueueDrain,
    /// After queued user messages were taken in.
    PostQueueDrain,
    /// The agent finished generating.
    PostSession,
}

/// What a hook at a point may do besides observing. The reply protocol (`decision`) drops,
/// and names, whatever a point does not allow; docs and `hookd points` render this table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Capabilities {
    /// Add text (`context`, `context_files`) to the model's context.
    pub add_context: bool,
    /// Stop the turn.
    pub halt: bool,
    /// Veto: the tool call at `pre_tool` (a synthetic error result), the prompt at `pre_session`.
    pub deny: bool,
    /// Replace the tool input (`updated_input`).
    pub replace_input: bool,
    /// Replace the user's prompt (`updated_prompt`).
    pub update_prompt: bool,
    /// Ask the agent to keep working (with a loop guard).
    #[serde(rename = "continue")]
    pub continue_: bool,
}

impl Capabilities {
    const OBSERVE: Capabilities = Capabilities {
        add_context: false,
        halt: false,
        deny: false,
        replace_input: false,
        update_prompt: false,
        continue_: false,
    };

    /// True when a hook here can only observe.
    pub fn observe_only(self) -> bool {
        self == Self::OBSERVE
    }

    /// The capabilities as the words users read in docs and help.
    pub fn words(self) -> Vec<&'static str> {
        if self.observe_only() {
            return vec!["observe"];
        }
        let mut out = Vec::new();
        if self.deny {
            out.push("deny");
        }
        if self.replace_input {
            out.push("replace input");
        }
        if self.update_prompt {
            out.push("replace prompt");
        }
        if self.add_context {
            out.push("add context");
        }
        if self.halt {
            out.push("halt");
        }
        if self.continue_ {
            out.push("observe, or continue (with a loop guard)");
        }
        out
    }
}

impl HookPoint {
    /// Every point, in loop order.
    pub const ALL: [HookPoint; 8] = [
        HookPoint::PreSession,
        HookPoint::PreStream,
        HookPoint::PostStream,
        HookPoint::PreTool,
        HookPoint::PostTool,
        HookPoint::PreQueueDrain,
        HookPoint::PostQueueDrain,
        HookPoint::PostSession,
    ];

    /// The name used in YAML, on the command line and in events.
    pub const fn name(self) -> &'static str {
        match self {
            HookPoint::PreSession => "pre_session",
            HookPoint::PreStream => "pre_stream",
            HookPoint::PostStream => "post_stream",
            HookPoint::PreTool => "pre_tool",
            HookPoint::PostTool => "post_tool",
            HookPoint::PreQueueDrain => "pre_queue_drain",
            HookPoint::PostQueueDrain => "post_queue_drain",
            HookPoint::PostSession => "post_session",
        }
    }

    /// When the point fires, in one sentence.
    pub const fn fires(self) -> &'static str {
        match self {
            HookPoint::PreSession => {
                "once, before the first turn of a run (carries the user prompt; may deny or rewrite it)"
            }
            HookPoint::PreStream => "before every model request",
            HookPoint::PostStream => "after every model response",
            HookPoint::PreTool => "before a tool call (or batch) runs",
            HookPoint::PostTool => "after a tool call ran; knows success or failure",
            HookPoint::PreQueueDrain => "before queued user messages are taken in",
            HookPoint::PostQueueDrain => "after queued user messages were taken in",
            HookPoint::PostSession => "the agent finished generating",
        }
    }

    /// What a hook at this point may do.
    pub const fn capabilities(self) -> Capabilities {
        let none = Capabilities::OBSERVE;
        match self {
            HookPoint::PreStream | HookPoint::PostTool => Capabilities {
                add_context: true,
                halt: true,
                ..none
            },
            HookPoint::PreSession => Capabilities {
                add_context: true,
                halt: true,
                deny: true,
                update_prompt: true,
                ..none
            },
            HookPoint::PreTool => Capabilities {
                add_context: true,
                halt: true,
                deny: true,
                replace_input: true,
                ..none
            },
            HookPoint::PostSession => Capabilities {
                continue_: true,
                ..none
            },
            HookPoint::PostStream | HookPoint::PreQueueDrain | HookPoint::PostQueueDrain => none,
        }
    }

    /// Position in loop order; indexes per-point tables.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The closest valid name to `given`, for "did you mean" hints.
    pub fn suggest(given: &str) -> Option<&'static str> {
        crate::suggest::closest(given, Self::ALL.iter().map(|p| p.name()))
    }

    /// The point an agent's own event name maps to (`Stop` → `post_session`), for the hint
    /// when a configuration names an agent's event where a hookd point belongs. The adapters'
    /// tables agree with this one (tested in `adapter`).
    pub fn for_agent_event(event: &str) -> Option<HookPoint> {
        AGENT_EVENTS
            .iter()
            .find(|(name, _)| *name == event)
            .map(|(_, p)| *p)
    }

    /// All names joined for messages: `pre_session, pre_stream, ...`.
    pub fn names_joined() -> String {
        Self::ALL
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The catalog for people (`hookd points`): each point, when it fires, what a hook may do.
    pub fn docs_text() -> String {
        let mut s = String::new();
        for p in HookPoint::ALL {
            s.push_str(&format!(
                "{:<17} {}\n{:<17} may: {}\n",
                p.name(),
                p.fires(),
                "",
                p.capabilities().words().join(", ")
            ));
        }
        s
    }

    /// The catalog for scripts (`hookd points --json`): name, when it fires, capabilities.
    pub fn docs_json() -> serde_json::Value {
        HookPoint::ALL
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name(),
                    "fires": p.fires(),
                    "observe_only": p.capabilities().observe_only(),
                    "capabilities": p.capabilities(),
                })
            })
            .collect()
    }

    /// The catalog as the Markdown page `docs/hook-points.md` (checked by a test).
    pub fn docs_markdown() -> String {
        let mut out = String::from(
            "# Hook points\n\n\
             <!-- Generated from `HookPoint` in src/catalog.rs by `hookd points --markdown`; \
             a test keeps it in sync. -->\n\n\
             The fixed catalog, in loop order. `pre_session` fires once per run; the middle \
             points repeat for every model request and tool call; `post_session` closes the run.\n\n\
             | point | fires | a hook may |\n| --- | --- | --- |\n",
        );
        for p in Self::ALL {
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                p.name(),
                p.fires(),
                p.capabilities().words().join(", ")
            ));
        }
        out.push_str(
            "\nCommand hooks (`hooks.yaml`) and reminders (`reminders.yaml`) attach to these \
             names; any other name is a configuration error with a suggestion.\n",
        );
        out
    }
}

impl fmt::Display for HookPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Agents' event names with a hookd point: Claude Code, Crush (`UserPromptSubmit`,
/// `PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `Stop`) and Gemini CLI (`Before*`,
/// `After*`).
pub(crate) const AGENT_EVENTS: &[(&str, HookPoint)] = &[
    ("UserPromptSubmit", HookPoint::PreSession),
    ("PreToolUse", HookPoint::PreTool),
    ("PostToolUse", HookPoint::PostTool),
    ("PostToolUseFailure", HookPoint::PostTool),
    ("Stop", HookPoint::PostSession),
    ("BeforeAgent", HookPoint::PreSession),
    ("BeforeModel", HookPoint::PreStream),
    ("AfterModel", HookPoint::PostStream),
    ("BeforeTool", HookPoint::PreTool),
    ("AfterTool", HookPoint::PostTool),
    ("AfterAgent", HookPoint::PostSession),
];

/// A name that is not in the catalog.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown hook point `{given}`{}", suggestion.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
pub struct UnknownHookPoint {
    /// What was written.
    pub given: String,
    /// The nearest valid name, if any is close.
    pub suggestion: Option<&'static str>,
}

impl FromStr for HookPoint {
    type Err = UnknownHookPoint;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownHookPoint {
                given: s.to_string(),
                suggestion: Self::suggest(s),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_in_loop_order() {
        for (i, p) in HookPoint::ALL.into_iter().enumerate() {
            assert_eq!(p.index(), i);
            assert_eq!(p.name().parse::<HookPoint>(), Ok(p));
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.name()));
        }
    }

    #[test]
    fn misspelling_suggests_nearest() {
        let err = "post_sesion".parse::<HookPoint>().unwrap_err();
        assert_eq!(err.suggestion, Some("post_session"));
        assert_eq!(
            err.to_string(),
            "unknown hook point `post_sesion` (did you mean `post_session`?)"
        );
        assert_eq!("zzz".parse::<HookPoint>().unwrap_err().suggestion, None);
    }

    #[test]
    fn observe_only_points_cannot_decide() {
        for p in [
            HookPoint::PostStream,
            HookPoint::PreQueueDrain,
            HookPoint::PostQueueDrain,
        ] {
            assert!(p.capabilities().observe_only(), "{p}");
        }
        assert!(HookPoint::PreTool.capabilities().deny);
        assert!(!HookPoint::PostTool.capabilities().deny);
        assert!(HookPoint::PostSession.capabilities().continue_);
    }
}
