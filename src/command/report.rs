//! A hook's run reported: its event, its line in the Outcome, and what its reply contributes
//! to the point's decision (read as its point allows, failed ones as `on_error` says).

use super::{fail_closed, CommandProvider, Hook, Ran, Skip};
use crate::catalog::Capabilities;
use crate::config::{HookSpec, OnError};
use crate::decision::{self, Reply};
use crate::events::{self, Event};
use crate::kinds::HookDecision;
use crate::outcome::{CommandOut, CommandStatus};
use crate::provider::Call;
use crate::runner::{self, RunReport};

impl CommandProvider {
    /// Emit the hook's event, record it in the Outcome, and return what it contributes.
    pub(super) fn report(
        &self,
        hook: &Hook,
        ran: Ran,
        call: &mut Call<'_>,
        caps: Capabilities,
    ) -> Reply {
        let spec = &hook.spec;
        match ran {
            Ran::Skipped(d) => {
                tracing::debug!(target: "hookd::command", hook = %spec.name, reason = %d.reason, detail = %d.detail, "skipped");
                skipped(spec, d, call, caps)
            }
            Ran::Ran {
                argv,
                allowed_by,
                report,
                started,
            } => {
                tracing::debug!(
                    target: "hookd::command",
                    hook = %spec.name,
                    ?argv,
                    allowed_by = %allowed_by,
                    exit_code = ?report.exit_code,
                    timed_out = report.timed_out,
                    duration_ms = report.duration.as_millis() as u64,
                    "ran"
                );
                ran_hook(spec, (argv, allowed_by), (started, report), call, caps)
            }
        }
    }
}

/// A hook that was not run: `hook_command_skipped`, and a failure as `on_error` says.
fn skipped(spec: &HookSpec, d: Skip, call: &mut Call<'_>, caps: Capabilities) -> Reply {
    let reply = fail_closed(
        spec,
        caps,
        &format!("it was not run ({}: {})", d.reason, d.detail),
    );
    call.emit(Event::HookCommandSkipped(events::HookCommandSkipped {
        name: spec.name.clone(),
        hook: call.point,
        command: spec.command.clone(),
        mode: call.mode,
        reason: d.reason,
        hint: d.hint.clone(),
        detail: d.detail,
        turn: call.outcome.turn,
        session_id: call.session_id.to_string(),
    }));
    call.outcome.commands.push(CommandOut {
        name: spec.name.clone(),
        command: spec.command.clone(),
        status: CommandStatus::Skipped,
        exit_code: None,
        duration_ms: None,
        reason: Some(d.reason),
        hint: Some(d.hint),
        error: None,
    });
    reply
}

/// What a run comes to: its status, its error text, and its reply.
struct Judged {
    status: CommandStatus,
    error: String,
    reply: Reply,
}

/// Read a finished run: exit 2 denies (stderr the reason) where the point can deny; exit 0's
/// stdout is the reply; anything else fails, closed if `on_error: deny`.
fn judge(spec: &HookSpec, r: &RunReport, caps: Capabilities) -> Judged {
    let mut status = if r.timed_out {
        CommandStatus::TimedOut
    } else if r.signal.is_some() {
        CommandStatus::Killed
    } else if r.exit_code.is_none() {
        CommandStatus::NotStarted
    } else if r.success() {
        CommandStatus::Ok
    } else {
        CommandStatus::Failed
    };
    let mut error = r.error.clone().unwrap_or_default();
    if r.timed_out {
        error = format!(
            "{error} (its limit is `timeout:` at {}; raise it there if the hook needs longer)",
            spec.timeout_at
        );
    }
    let mut reply = match r.exit_code {
        Some(2) if caps.deny => {
            let reason = r.stderr.text.trim();
            status = CommandStatus::Denied;
            error.clear();
            Reply {
                deny: true,
                reason: Some(if reason.is_empty() {
                    format!("denied by hook `{}`", spec.name)
                } else {
                    reason.to_string()
                }),
                ..Reply::default()
            }
        }
        Some(2) => Reply {
            ignored: vec!["decision".into()],
            ..Reply::default()
        },
        Some(0) => match decision::parse_reply(&r.stdout.text, caps) {
            Ok(reply) => reply.unwrap_or_default(),
            Err(e) => {
                status = CommandStatus::Failed;
                error = e.to_string();
                fail_closed(spec, caps, &error)
            }
        },
        _ => fail_closed(spec, caps, &error),
    };
    // Output a process outside the group kept open may be partial: a hook set to fail closed
    // denies on what is uncertain, even if what was read allowed.
    if r.held_open && spec.on_error == OnError::Deny && !reply.deny {
        status = CommandStatus::Failed;
        let closed = fail_closed(spec, caps, runner::HELD_OPEN);
        reply.deny = closed.deny;
        reply.halt |= closed.halt;
        reply.allow = false;
        reply.reason = closed.reason;
    }
    if reply.deny && status == CommandStatus::Ok {
        status = CommandStatus::Denied;
    }
    Judged {
        status,
        error,
        reply,
    }
}

/// A hook's connections through hookd's proxy, each a `network_request` event.
fn network_events(
    network: Vec<crate::sandbox::NetworkRequest>,
    spec: &HookSpec,
    call: &mut Call<'_>,
) {
    for n in network {
        let (name, session) = (spec.name.clone(), call.session_id.to_string());
        let event = crate::sandbox::network_event(n, name, call.point, session);
        call.emit(Event::NetworkRequest(event));
    }
}

/// A hook that ran: `hook_command`, its line in the Outcome, a notice when it did not start.
fn ran_hook(
    spec: &HookSpec,
    (argv, allowed_by): (Vec<String>, String),
    (started, mut r): (std::time::SystemTime, RunReport),
    call: &mut Call<'_>,
    caps: Capabilities,
) -> Reply {
    let network = std::mem::take(&mut r.network);
    let moved = std::mem::take(&mut r.moved);
    let Judged {
        status,
        error,
        reply,
    } = judge(spec, &r, caps);
    let duration_ms = r.duration.as_millis() as u64;
    let exit_code = r.exit_code_or_minus_one();
    let error_text = error.trim().to_string();
    call.emit(Event::HookCommand(events::HookCommand {
        name: spec.name.clone(),
        hook: call.point,
        command: spec.command.clone(),
        turn: call.outcome.turn,
        exit_code,
        duration_ms,
        started_at: humantime::format_rfc3339_nanos(started).to_string(),
        duration_ns: u64::try_from(r.duration.as_nanos()).unwrap_or(u64::MAX),
        output: format!("{}{}", r.stdout.text, r.stderr.text),
        error,
        session_id: call.session_id.to_string(),
        mode: call.mode,
        argv,
        allowed_by,
        truncated: r.stdout.truncated() || r.stderr.truncated(),
        stdout_dropped_bytes: r.stdout.dropped,
        stderr_dropped_bytes: r.stderr.dropped,
        stdout: r.stdout.text,
        stderr: r.stderr.text,
        timed_out: r.timed_out,
        signal: r.signal,
        leaked: r.leaked,
        held_open: r.held_open,
        decision: match (reply.deny, reply.allow) {
            (true, _) => Some(HookDecision::Deny),
            (false, true) => Some(HookDecision::Allow),
            (false, false) => None,
        },
        halt: reply.halt,
        continue_: reply.continue_,
        ignored: reply.ignored.clone(),
        env_removed: r.env_removed,
        sandbox: r.confined,
    }));
    network_events(network, spec, call);
    // What it left that git would have run later, moved aside: said to the operator.
    for m in moved {
        call.outcome
            .notices
            .push(format!("hook `{}` ({}): {m}", spec.name, spec.origin));
    }
    // A hook that could not start did nothing the user asked for: said to the operator
    // (stderr of `hookd dispatch` and the adapters), not only in the event.
    if status == CommandStatus::NotStarted {
        call.outcome.notices.push(format!(
            "hook `{}` ({}) did not start: {}",
            spec.name, spec.origin, error_text
        ));
    }
    call.outcome.commands.push(CommandOut {
        name: spec.name.clone(),
        command: spec.command.clone(),
        status,
        exit_code: Some(exit_code),
        duration_ms: Some(duration_ms),
        reason: None,
        hint: None,
        error: (!error_text.is_empty()).then_some(error_text),
    });
    reply
}
