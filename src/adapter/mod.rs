//! Agent adapters: an agent's native hook payload becomes a dispatch, and the Outcome becomes the
//! reply that agent understands. One `.infer/` configuration, one allow-list, one event stream,
//! whatever the agent. Each agent is one [`Adapter`]: its events and their points, how to read
//! its payloads, how to answer, and where its settings live.

pub mod claude;
pub(crate) mod claude_permissions;
pub mod confine;
pub mod crush;
pub mod gemini;
#[cfg(feature = "daemon")]
pub mod handle;
pub mod install;
pub mod managed;
#[cfg(feature = "daemon")]
mod own_rules;
pub(crate) mod payload;
pub(crate) mod project_env;
mod reply;
pub mod seams;
mod unwrap;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::catalog::HookPoint;
use crate::dispatch::{Context, Outcome};
use crate::host::Host;

pub use install::{Scope, Shape};

/// What every agent's module uses of this one and of the engine.
mod kit {
    pub(super) use super::{
        additional_context, object_and_event, translate_common, Adapter, AdapterError, AgentEvent,
        AgentReply, Host, Profile, Reading, Register, Scope, Shape, Translation,
    };
    pub(super) use crate::catalog::HookPoint;
    pub(super) use crate::decision::Decision;
    pub(super) use crate::dispatch::Outcome;
}
pub use payload::parse as parse_payload;
pub use project_env::{
    drop_agent_env, enter_agent_project, set_for_agent, Entered, Unreadable, MOST_FILE_BYTES,
};

/// One event an agent sends: the point it maps to, and whether `hookd install` registers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentEvent {
    /// The agent's own name for it (`PreToolUse`).
    pub name: &'static str,
    /// The hook point, or `None` for an event hookd knows and deliberately does not act on.
    pub point: Option<HookPoint>,
    /// How install registers it.
    pub install: Register,
}

/// Whether and how `hookd install` registers an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Register {
    /// Not installed (unmapped, or too frequent to be worth a process per call).
    No,
    /// Installed.
    Yes,
    /// Installed with a tool matcher matching every tool (`"*"`).
    WithMatcher,
}

/// What an agent is, as data: its names, its events, how its settings hold hooks.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Profile {
    /// The name on the command line (`claude-code`).
    pub name: &'static str,
    /// The name people know it by (`Claude Code`).
    pub title: &'static str,
    /// Every event hookd knows from this agent; one table drives translation, install and the
    /// note for an unknown event.
    pub events: &'static [AgentEvent],
    /// How its settings file holds hooks.
    pub shape: Shape,
}

/// One agent hookd speaks to.
pub trait Adapter: Send + Sync {
    /// What it is: names, events, settings shape.
    fn profile(&self) -> &'static Profile;
    /// The name on the command line (`claude-code`).
    fn name(&self) -> &'static str {
        self.profile().name
    }
    /// The name people know it by (`Claude Code`).
    fn title(&self) -> &'static str {
        self.profile().title
    }
    /// Every event hookd knows from this agent.
    fn events(&self) -> &'static [AgentEvent] {
        self.profile().events
    }
    /// The payload field that names the event.
    fn event_field(&self) -> &'static str {
        "hook_event_name"
    }
    /// The event's name in a payload.
    fn event_name<'a>(&self, payload: &'a Map<String, Value>) -> Option<&'a str> {
        payload.get(self.event_field()).and_then(Value::as_str)
    }
    /// Read a payload.
    /// `exec_program` is the hookd that rewrites the model's confined shell calls (the
    /// engine's [`crate::dispatch::EngineBuilder::exec_program`]): at `post_tool` a call that
    /// is its rewrite is reported as the model's command; a look-alike naming another program
    /// is reported as it is.
    fn translate(
        &self,
        payload: &Value,
        exec_program: Option<&Path>,
    ) -> Result<Translation, AdapterError>;
    /// The reply to `event` for `outcome`.
    fn reply(&self, event: &str, outcome: &Outcome) -> AgentReply;
    /// The reply when hookd itself failed (`event` is `None` for a payload it could not read):
    /// let the agent go on, or with `fail_closed` deny in every form the agent understands.
    fn failure_reply(&self, event: Option<&str>, error: &str, fail_closed: bool) -> AgentReply;
    /// How its settings file holds hooks.
    fn shape(&self) -> Shape {
        self.profile().shape
    }
    /// Where its settings file is for `scope`; `env` reads the environment (the agents' own
    /// config-location variables are honoured).
    fn settings_path(&self, scope: Scope, host: &Host) -> Result<PathBuf, AdapterError>;
    /// True when the agent shows the adapter's stderr to the model on a deny: then nothing but
    /// the reason may go there (no configuration warnings, no operator hints).
    fn stderr_is_reason(&self) -> bool {
        false
    }
}

/// Every adapter, in the order `hookd install --help` lists them.
pub fn all() -> [&'static dyn Adapter; 3] {
    [&claude::ClaudeCode, &crush::Crush, &gemini::Gemini]
}

/// The adapter called `name` on the command line.
pub fn by_name(name: &str) -> Option<&'static dyn Adapter> {
    all().into_iter().find(|a| a.name() == name)
}

/// A payload read: the agent's event, the point it maps to (if any), and the context.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Translation {
    /// The agent's own event name.
    pub event: String,
    /// The hook point, or `None` for an event hookd does not act on.
    pub point: Option<HookPoint>,
    /// The dispatch context.
    pub context: Context,
}

/// What the adapter prints and exits with.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AgentReply {
    /// The reply on stdout.
    pub stdout: String,
    /// The exit code.
    pub exit_code: i32,
    /// Lines for stderr (for people; the agent does not read them, except where
    /// [`Adapter::stderr_is_reason`]).
    pub notes: Vec<String>,
}

impl AgentReply {
    /// A JSON reply on stdout, exit 0.
    pub(crate) fn json(value: &impl serde::Serialize, notes: Vec<String>) -> Self {
        AgentReply {
            stdout: serde_json::to_string(value).unwrap_or_else(|_| "{}".into()),
            exit_code: 0,
            notes,
        }
    }
}

/// How one agent's payload differs from the others' when read.
pub(crate) struct Reading<'a> {
    /// The event name, already read.
    pub event: &'a str,
    /// The tool's result, if the payload has one.
    pub result: Option<&'a Value>,
    /// Whether the tool failed.
    pub failed: bool,
    /// The hookd whose rewrites are unwrapped at `post_tool` (none: none is).
    pub exec: Option<&'a Path>,
}

impl<'a> Reading<'a> {
    /// How one agent's payload reads: its event, its tool's result, whether the tool failed.
    pub(crate) fn of(event: &'a str, result: Option<&'a Value>, failed: bool) -> Self {
        Reading {
            event,
            result,
            failed,
            exec: None,
        }
    }

    /// With `exec` the hookd whose rewrites are unwrapped at `post_tool`.
    pub(crate) fn by(mut self, exec: Option<&'a Path>) -> Self {
        self.exec = exec;
        self
    }
}

/// The shared part of every translation: find the event's point, pass the whole payload to
/// hooks (so hooks written for the agent keep working) with hookd's own `agent` and `tool`
/// fields added. `None` for an event without a point.
pub(crate) fn translate_common(
    adapter: &dyn Adapter,
    payload: &Map<String, Value>,
    read: Reading<'_>,
) -> Result<Translation, AdapterError> {
    let point = adapter
        .events()
        .iter()
        .find(|e| e.name == read.event)
        .and_then(|e| e.point);
    let Some(point) = point else {
        return Ok(Translation {
            event: read.event.to_string(),
            point: None,
            context: Context::new(),
        });
    };
    let mut payload = payload.clone();
    // After a confined call, the agent reports hookd's rewrite: hooks see the model's command.
    let confined = point == HookPoint::PostTool && unwrap_command(&mut payload, read.exec);
    let mut ctx = Context::from_json(&Value::Object(payload.clone()).to_string())?;
    ctx.set("agent", adapter.name());
    if let Some(name) = payload.get("tool_name") {
        let mut tool = Map::new();
        tool.insert("name".into(), name.clone());
        tool.insert(
            "input".into(),
            payload.get("tool_input").cloned().unwrap_or(Value::Null),
        );
        if confined {
            tool.insert("confined".into(), Value::Bool(true));
        }
        if let Some(r) = read.result {
            tool.insert("result".into(), r.clone());
        }
        if point == HookPoint::PostTool {
            tool.insert("failed".into(), Value::Bool(read.failed));
        }
        ctx.set("tool", Value::Object(tool));
    }
    Ok(Translation {
        event: read.event.to_string(),
        point: Some(point),
        context: ctx,
    })
}

/// Put the model's command back in `tool_input.command` where it holds hookd's rewrite of it:
/// whether it did.
fn unwrap_command(payload: &mut Map<String, Value>, exec: Option<&Path>) -> bool {
    let Some(exec) = exec else {
        return false;
    };
    let slot = payload
        .get_mut("tool_input")
        .and_then(|i| i.get_mut("command"));
    let Some(slot) = slot else {
        return false;
    };
    match slot
        .as_str()
        .and_then(|c| unwrap::model_command_by(c, exec))
    {
        Some(command) => {
            *slot = Value::String(command);
            true
        }
        None => false,
    }
}

/// The payload as an object, and its event name.
pub(crate) fn object_and_event<'a>(
    adapter: &dyn Adapter,
    payload: &'a Value,
) -> Result<(&'a Map<String, Value>, &'a str), AdapterError> {
    let obj = payload.as_object().ok_or(AdapterError::NotAnObject)?;
    let event = adapter
        .event_name(obj)
        .ok_or(AdapterError::NoEvent(adapter.event_field()))?;
    Ok((obj, event))
}

/// Everything the model should additionally see: the reminders, the decision's context, and the
/// files hooks pointed at (paths, not contents). Each text loses a `<system-reminder>` tag
/// around it: the agents frame hook context as a system reminder of their own and escape the
/// tag's `<` (`&lt;system-reminder>` reached the model from Claude Code 2.1.330).
pub(crate) fn additional_context(
    outcome: &Outcome,
    context: Option<&str>,
    files: &[String],
) -> Option<String> {
    let mut parts: Vec<String> = (outcome.reminders.iter())
        .map(|r| unwrapped(&r.text).to_string())
        .collect();
    if let Some(c) = context {
        parts.push(unwrapped(c).to_string());
    }
    if !files.is_empty() {
        parts.push(format!(
            "Referenced files:\n{}",
            files
                .iter()
                .map(|f| format!("- {f}"))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// `text` without one `<system-reminder>…</system-reminder>` around the whole of it.
fn unwrapped(text: &str) -> &str {
    const OPEN: &str = "<system-reminder>";
    const CLOSE: &str = "</system-reminder>";
    let inner = text
        .trim()
        .strip_prefix(OPEN)
        .and_then(|t| t.strip_suffix(CLOSE))
        .filter(|t| !t.contains(CLOSE));
    inner.map_or(text, str::trim)
}

/// The host's `$HOME`, or an error naming it.
pub(crate) fn home(host: &Host) -> Result<PathBuf, AdapterError> {
    host.home().ok_or(AdapterError::NoHome)
}

/// The host's directory, or an error saying so.
pub(crate) fn cwd(host: &Host) -> Result<&Path, AdapterError> {
    host.cwd().ok_or(AdapterError::CurrentDir)
}

/// Why an agent's payload could not be read, or its settings file not found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AdapterError {
    /// The payload is not JSON.
    #[error("the payload is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// The payload is JSON but not an object.
    #[error("the payload is not a JSON object")]
    NotAnObject,
    /// The payload does not name its event.
    #[error("the payload has no `{0}`")]
    NoEvent(&'static str),
    /// A field hookd reads has the wrong type.
    #[error(transparent)]
    Context(#[from] crate::dispatch::DispatchError),
    /// The payload could not be read.
    #[error(transparent)]
    Input(#[from] crate::dispatch::InputError),
    /// `HOME` is not set (user-scope settings live below it).
    #[error("HOME is not set")]
    NoHome,
    /// The current directory is gone or unreadable.
    #[error("cannot determine the current directory")]
    CurrentDir,
    /// The agent has no settings file of that scope.
    #[error("only Claude Code has a local settings file; use --scope project or --scope user")]
    NoLocalScope,
    /// The agent has no managed settings a project cannot override.
    #[error("Crush has no managed settings that a project cannot override; use Claude Code or Gemini CLI for `--scope managed` and `hookd run`")]
    NoManagedScope,
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_system_reminder_tag_around_the_whole_text_is_taken_off() {
        use super::unwrapped;
        let tagged = "<system-reminder>\nRead it.\n</system-reminder>";
        assert_eq!(unwrapped(tagged), "Read it.");
        assert_eq!(unwrapped("Read it."), "Read it.");
        let two = "<system-reminder>a</system-reminder> <system-reminder>b</system-reminder>";
        assert_eq!(unwrapped(two), two);
        let inside = "see <system-reminder>x</system-reminder>";
        assert_eq!(unwrapped(inside), inside);
    }

    #[test]
    fn the_catalogs_agent_event_names_agree_with_the_adapters() {
        for a in super::all() {
            for e in a.events() {
                if let Some(p) = e.point {
                    assert_eq!(
                        crate::catalog::HookPoint::for_agent_event(e.name),
                        Some(p),
                        "{} {}",
                        a.name(),
                        e.name
                    );
                }
            }
        }
        for (name, point) in crate::catalog::AGENT_EVENTS {
            assert!(
                super::all().iter().any(|a| a
                    .events()
                    .iter()
                    .any(|e| e.name == *name && e.point == Some(*point))),
                "{name}"
            );
        }
    }
}
