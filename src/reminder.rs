//! Which reminders are due: triggers evaluated against the context and the session's state.

use std::sync::Arc;

use serde_json::Value;

use crate::catalog::HookPoint;
use crate::config::{Mode, ReminderSpec, RemindersConfig, Trigger, When};
use crate::dispatch::{Call, Context, Provider, ReminderOut};
use crate::events::{Event, SystemReminder};
use crate::state::{SessionState, StateStore};

pub(crate) struct ReminderProvider {
    by_point: [Vec<ReminderSpec>; 8],
    store: Arc<dyn StateStore>,
    /// Some reminder needs the session's turn count or mode history (kept at `pre_stream`).
    tracks_stream: bool,
    /// Some reminder needs consecutive tool failures (kept at `post_tool`).
    tracks_failures: bool,
}

impl ReminderProvider {
    pub fn new(config: &RemindersConfig, store: Arc<dyn StateStore>) -> Self {
        let mut by_point: [Vec<ReminderSpec>; 8] = Default::default();
        if config.enabled {
            for r in &config.reminders {
                by_point[r.hook.index()].push(r.clone());
            }
        }
        let all = || by_point.iter().flatten();
        let tracks_stream = all().any(|r| {
            !matches!(
                r.trigger,
                Trigger::OnFailure
                    | Trigger::OnRepeatedFailure
                    | Trigger::OnTruncation
                    | Trigger::OnStalledTodos
                    | Trigger::Always
            )
        });
        let tracks_failures = all().any(|r| r.trigger == Trigger::OnRepeatedFailure);
        ReminderProvider {
            by_point,
            store,
            tracks_stream,
            tracks_failures,
        }
    }
}

/// What the trigger decision needs beyond the spec.
struct Facts<'a> {
    ctx: &'a Context,
    mode: Mode,
    turn: u64,
    session_turn: u64,
    prev_mode: Option<String>,
    mode_changed: bool,
    failures: u64,
}

impl Provider for ReminderProvider {
    fn wants(&self, point: HookPoint) -> bool {
        !self.by_point[point.index()].is_empty()
            || (point == HookPoint::PreStream && self.tracks_stream)
            || (point == HookPoint::PostTool && self.tracks_failures)
    }

    fn provide(&self, call: &mut Call<'_>) {
        let point = call.point;
        let ctx = call.context;
        let mode = call.mode;
        let explicit_turn = ctx.u64_field("turn").ok().flatten();
        let explicit_session_turn = ctx.u64_field("session_turn").ok().flatten();
        let specs = &self.by_point[point.index()];
        let mut due: Vec<(ReminderOut, Trigger)> = Vec::new();
        let mut facts_out = (0, 0);
        let mut update = |state: &mut SessionState| {
            let mut prev_mode = None;
            let mut mode_changed = false;
            if point == HookPoint::PreStream {
                state.turns += 1;
                prev_mode = state.last_mode.replace(mode.name().to_string());
                mode_changed = prev_mode.as_deref().is_some_and(|p| p != mode.name());
            }
            if point == HookPoint::PostTool {
                observe_tool(state, ctx);
            }
            let session_turn = explicit_session_turn
                .or(explicit_turn)
                .unwrap_or(state.turns);
            let turn = explicit_turn.unwrap_or(state.turns);
            let facts = Facts {
                ctx,
                mode,
                turn,
                session_turn,
                prev_mode,
                mode_changed,
                failures: state.failure_count,
            };
            facts_out = (turn, session_turn);
            for spec in specs {
                if !when_holds(spec, ctx) || !fires(spec, &facts, state) {
                    continue;
                }
                if matches!(
                    spec.trigger,
                    Trigger::Once | Trigger::OnceAfter | Trigger::TurnsBeforeMax
                ) {
                    state.fired.insert(spec.name.clone());
                }
                let role = if spec.trigger == Trigger::OnRepeatedFailure {
                    "tool"
                } else {
                    "user"
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
        };
        let result = if call.session_id.is_empty() {
            // No session: nothing to remember across dispatches.
            update(&mut SessionState::default());
            Ok(())
        } else {
            self.store.update(call.session_id, &mut update)
        };
        if let Err(e) = result {
            tracing::warn!("{e}; reminders at this dispatch use no session state");
            update(&mut SessionState::default());
        }
        let (turn, session_turn) = facts_out;
        call.outcome.turn = turn;
        call.outcome.session_turn = session_turn;
        for (out, trigger) in due {
            call.emit(Event::SystemReminder(SystemReminder {
                kind: "system_reminder",
                role: out.role,
                content: out.text.clone(),
                hidden: true,
                timestamp: String::new(),
                turn,
                session_turn,
                hook: point,
                name: out.name.clone(),
                trigger,
                session_id: call.session_id.to_string(),
                seq: 0,
            }));
            call.outcome.reminders.push(out);
        }
    }
}

/// Track consecutive failures of the same tool call (same name and input).
fn observe_tool(state: &mut SessionState, ctx: &Context) {
    let failed = ctx.tool("failed").and_then(Value::as_bool).unwrap_or(false);
    if !failed {
        state.failure_key = None;
        state.failure_count = 0;
        return;
    }
    let key = format!(
        "{}\u{0}{}",
        ctx.tool("name").and_then(Value::as_str).unwrap_or_default(),
        ctx.tool("input").map(Value::to_string).unwrap_or_default()
    );
    if state.failure_key.as_deref() == Some(key.as_str()) {
        state.failure_count += 1;
    } else {
        state.failure_key = Some(key);
        state.failure_count = 1;
    }
}

fn when_holds(spec: &ReminderSpec, ctx: &Context) -> bool {
    match spec.when {
        None => true,
        Some(When::TodosEmpty) => ctx.u64_field("todo_count").ok().flatten().unwrap_or(0) == 0,
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
            let max = f.ctx.u64_field("max_turns").ok().flatten().unwrap_or(0);
            !fired && max > 0 && max.saturating_sub(f.turn) <= spec.threshold
        }
        Trigger::OnFailure => f
            .ctx
            .tool("failed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        Trigger::OnRepeatedFailure => f.failures >= spec.threshold,
        Trigger::OnModeChange => f.mode_changed,
        Trigger::OnTruncation => f.ctx.str_field("finish_reason").ok().flatten() == Some("length"),
        Trigger::OnStalledTodos => {
            let open = f
                .ctx
                .get("incomplete_todos")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
            let strikes = f
                .ctx
                .u64_field("stalled_strikes")
                .ok()
                .flatten()
                .unwrap_or(0);
            open && strikes < spec.threshold
        }
    }
}

/// Fill `{tool_name}`, `{count}`, `{prev_mode}`, `{new_mode}`, `{guidance}`, `{todo_list}`.
fn fill(spec: &ReminderSpec, f: &Facts<'_>) -> String {
    let text = &spec.text;
    if !text.contains('{') {
        return text.clone();
    }
    let tool = f
        .ctx
        .tool("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let guidance = spec
        .guidance
        .get(f.mode.name())
        .cloned()
        .unwrap_or_else(|| format!("You are now in {} mode.", f.mode.name()));
    let todos = f
        .ctx
        .get("incomplete_todos")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .map(|t| match t {
                    Value::String(s) => format!("- {s}\n"),
                    other => format!(
                        "- [{}] {}\n",
                        other
                            .get("status")
                            .and_then(Value::as_str)
                            .unwrap_or("pending"),
                        other
                            .get("content")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                    ),
                })
                .collect::<String>()
        })
        .unwrap_or_default();
    text.replace("{tool_name}", tool)
        .replace("{count}", &f.failures.to_string())
        .replace("{prev_mode}", f.prev_mode.as_deref().unwrap_or(""))
        .replace("{new_mode}", f.mode.name())
        .replace("{guidance}", &guidance)
        .replace("{todo_list}", &todos)
}
