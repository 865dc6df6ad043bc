//! Which reminders are due: triggers evaluated against the context and the session's state.

use crate::view::{Todo, View};

use crate::catalog::HookPoint;
use crate::config::{Mode, ReminderSpec, RemindersConfig, Trigger, When};
use crate::events::{Event, SystemReminder};
use crate::outcome::ReminderOut;
use crate::provider::{Call, Provider};
use crate::state::{observe, SessionFacts, SessionState, Tracking};

pub(crate) struct ReminderProvider {
    by_point: [Vec<ReminderSpec>; 8],
    /// The session bookkeeping these reminders rely on (theirs to keep).
    tracking: Tracking,
}

impl ReminderProvider {
    pub fn new(config: &RemindersConfig) -> Self {
        let mut by_point: [Vec<ReminderSpec>; 8] = Default::default();
        if config.enabled {
            for r in &config.reminders {
                by_point[r.hook.index()].push(r.clone());
            }
        }
        let tracking = Self::tracking(&by_point);
        ReminderProvider { by_point, tracking }
    }

    /// The session bookkeeping these reminders rely on.
    fn tracking(by_point: &[Vec<ReminderSpec>; 8]) -> Tracking {
        let all = || by_point.iter().flatten();
        Tracking {
            turns: all().any(|r| {
                matches!(
                    r.trigger,
                    Trigger::Interval
                        | Trigger::OnceAfter
                        | Trigger::TurnsBeforeMax
                        | Trigger::OnModeChange
                )
            }),
            failures: all().any(|r| r.trigger == Trigger::OnRepeatedFailure),
        }
    }
}

/// What the trigger decision needs beyond the spec.
struct Facts<'a> {
    ctx: &'a View<'a>,
    mode: Mode,
    turn: u64,
    session_turn: u64,
    session: &'a SessionFacts,
}

impl Provider for ReminderProvider {
    fn wants(&self, point: HookPoint) -> bool {
        !self.by_point[point.index()].is_empty()
    }

    fn keeps_books(&self, point: HookPoint) -> bool {
        (point == HookPoint::PreStream && self.tracking.turns)
            || (point == HookPoint::PostTool && self.tracking.failures)
    }

    fn needs_state(&self, _point: HookPoint) -> bool {
        true // `once` and its kin must be remembered, atomically with the decision
    }

    fn decide(&self, call: &mut Call<'_>, state: &mut SessionState) {
        // The books first: a turn counted here is this dispatch's turn (unless the agent said).
        let observed = observe(
            call.point,
            call.context,
            call.view,
            call.mode,
            self.tracking,
            state,
        );
        call.facts.prev_mode = observed.prev_mode;
        call.facts.mode_changed = observed.mode_changed;
        call.facts.failures = observed.failures;
        call.outcome.turn = call.view.turn.unwrap_or(state.turns);
        call.outcome.session_turn = call
            .view
            .session_turn
            .or(call.view.turn)
            .unwrap_or(state.turns);
        let facts = Facts {
            ctx: call.view,
            mode: call.mode,
            turn: call.outcome.turn,
            session_turn: call.outcome.session_turn,
            session: &call.facts,
        };
        let mut due = Vec::new();
        for spec in &self.by_point[call.point.index()] {
            if !when_holds(spec, facts.ctx) || !fires(spec, &facts, state) {
                continue;
            }
            if matches!(
                spec.trigger,
                Trigger::Once | Trigger::OnceAfter | Trigger::TurnsBeforeMax
            ) {
                state.fired.insert(spec.name.clone());
            }
            let role = if spec.trigger == Trigger::OnRepeatedFailure {
                crate::kinds::Role::Tool
            } else {
                crate::kinds::Role::User
            };
            due.push((
                ReminderOut {
                    name: spec.name.clone(),
                    text: fill(spec, &facts),
                    role,
                },
                spec.trigger,
            ));
        }
        for (out, trigger) in due {
            call.emit(Event::SystemReminder(SystemReminder {
                kind: "system_reminder".into(),
                role: out.role,
                content: out.text.clone(),
                hidden: true,
                turn: call.outcome.turn,
                session_turn: call.outcome.session_turn,
                hook: call.point,
                name: out.name.clone(),
                trigger,
                session_id: call.session_id.to_string(),
            }));
            call.outcome.reminders.push(out);
        }
    }
}

fn when_holds(spec: &ReminderSpec, ctx: &View<'_>) -> bool {
    match spec.when {
        None => true,
        Some(When::TodosEmpty) => ctx.todo_count.unwrap_or(0) == 0,
    }
}

fn fires(spec: &ReminderSpec, f: &Facts<'_>, state: &SessionState) -> bool {
    let fired = state.fired.contains(&spec.name);
    match spec.trigger {
        Trigger::Always => true,
        Trigger::Interval => f.session_turn > 0 && f.session_turn.is_multiple_of(spec.interval),
        Trigger::Once => !fired,
        Trigger::OnceAfter => !fired && f.session_turn >= spec.threshold,
        Trigger::TurnsBeforeMax => {
            let max = f.ctx.max_turns.unwrap_or(0);
            !fired && max > 0 && max.saturating_sub(f.turn) <= spec.threshold
        }
        Trigger::OnFailure => f.ctx.tool_failed(),
        Trigger::OnRepeatedFailure => f.session.failures >= spec.threshold,
        Trigger::OnModeChange => f.session.mode_changed,
        Trigger::OnTruncation => f.ctx.finish_reason == Some("length"),
        Trigger::OnStalledTodos => {
            let open = f
                .ctx
                .incomplete_todos
                .as_ref()
                .is_some_and(|a| !a.is_empty());
            let strikes = f.ctx.stalled_strikes.unwrap_or(0);
            open && strikes < spec.threshold
        }
    }
}

/// The most bytes one filled reminder may hold: a template that repeats `{todo_list}` must not
/// turn an agent's payload into a reply hundreds of times its size.
pub(crate) const MOST_FILLED_BYTES: usize = 64 * 1024;

/// Fill `{tool_name}`, `{count}`, `{prev_mode}`, `{new_mode}`, `{guidance}`, `{todo_list}` in
/// one pass over the template: what a value brings in (a tool named `{count}`) is never filled
/// again. The result is cut at [`MOST_FILLED_BYTES`].
fn fill(spec: &ReminderSpec, f: &Facts<'_>) -> String {
    let text = &spec.text;
    if !text.contains('{') {
        return text.clone();
    }
    let value = |name: &str| -> Option<String> {
        Some(match name {
            "tool_name" => f.ctx.tool_name().to_string(),
            "count" => f.session.failures.to_string(),
            "prev_mode" => f.session.prev_mode.clone().unwrap_or_default(),
            "new_mode" => f.mode.name().to_string(),
            "guidance" => spec
                .guidance
                .get(f.mode.name())
                .cloned()
                .unwrap_or_else(|| format!("You are now in {} mode.", f.mode.name())),
            "todo_list" => f
                .ctx
                .incomplete_todos
                .iter()
                .flatten()
                .map(|t| match t {
                    Todo::Text(s) => format!("- {s}\n"),
                    Todo::Item { status, content } => format!(
                        "- [{}] {}\n",
                        status.unwrap_or("pending"),
                        content.unwrap_or_default()
                    ),
                })
                .collect(),
            _ => return None,
        })
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after
            .find('}')
            .and_then(|close| Some((close, value(&after[..close])?)))
        {
            Some((close, filled)) => {
                out.push_str(&filled);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
        if out.len() > MOST_FILLED_BYTES {
            break;
        }
    }
    if out.len() <= MOST_FILLED_BYTES {
        out.push_str(rest);
    }
    crate::display::clip(&out, MOST_FILLED_BYTES).into_owned()
}
