//! The contract between the engine and an action kind (reminders, commands): what a provider
//! is given for one dispatch ([`Call`]) and the steps it takes ([`Provider`]).

use crate::catalog::HookPoint;
use crate::context::Context;
use crate::events::Event;
use crate::kinds::Mode;
use crate::outcome::Outcome;
use crate::state::{SessionFacts, SessionState};

/// Everything a provider may read and write during one dispatch.
pub(crate) struct Call<'a> {
    pub point: HookPoint,
    pub context: &'a Context,
    /// The fields hookd reads from `context`, typed.
    pub view: &'a crate::view::View<'a>,
    pub session_id: &'a str,
    pub mode: Mode,
    pub facts: SessionFacts,
    pub outcome: Outcome,
    pub emit: &'a dyn Fn(Event),
}

impl Call<'_> {
    pub fn emit(&self, event: Event) {
        (self.emit)(event)
    }

    /// Whether the agent is stopping again after a `continue` (its own flag, or one hookd
    /// counted): at `post_session` only.
    pub fn stop_hook_active(&self) -> bool {
        self.point == HookPoint::PostSession
            && (self.view.stop_hook_active.unwrap_or(false) || self.facts.continues > 0)
    }

    /// What a provider's contributions are combined with into the point's decision
    /// ([`crate::decision::aggregate`]) for a project at `project_dir`.
    pub fn decision_inputs<'p>(
        &self,
        project_dir: &'p std::path::Path,
    ) -> crate::decision::Inputs<'p> {
        crate::decision::Inputs {
            point: self.point,
            project_dir,
            original_prompt: self.view.prompt.map(String::from),
            original_input: (self.context.tool("input"))
                .filter(|i| crate::decision::echoable(i))
                .cloned(),
            stop_hook_active: self.stop_hook_active(),
        }
    }
}

/// An action kind. It says cheaply whether anything may be due, decides with the session's
/// state (under its lock), then acts (outside the lock, so slow commands never hold it).
pub(crate) trait Provider: Send + Sync {
    /// False when nothing can be due at `point`: the dispatch then does no work at all.
    fn wants(&self, point: HookPoint) -> bool;
    /// True when the provider records something in the session's state at `point` even when
    /// nothing of it is due there (reminders count turns at `pre_stream`); its `decide` is
    /// then called at `point` too. A provider that keeps books at `pre_stream` counts turns.
    fn keeps_books(&self, _point: HookPoint) -> bool {
        false
    }
    /// True when deciding at `point` needs the session's state.
    fn needs_state(&self, _point: HookPoint) -> bool {
        false
    }
    /// Decide under the session lock, recording in `state` what must be remembered.
    fn decide(&self, _call: &mut Call<'_>, _state: &mut SessionState) {}
    /// Act on what is due, recording it in `call.outcome` and emitting events.
    fn provide(&self, _call: &mut Call<'_>) {}
    /// After every provider acted, look again at the decision they reached (the tool gate
    /// checks a hook's rewrite of the call and confines what goes ahead).
    fn review(&self, _call: &mut Call<'_>) {}
    /// True when, after acting, the provider must record something in the session's state.
    fn needs_settle(&self, _point: HookPoint) -> bool {
        false
    }
    /// Record, under the session lock again, what acting produced.
    fn settle(&self, _call: &mut Call<'_>, _state: &mut SessionState) {}
}
