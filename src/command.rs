//! Command hooks as a provider: the gate admits each command, the runner runs it, and the
//! result becomes a `hook_command` or `hook_command_skipped` event and an Outcome entry.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::catalog::HookPoint;
use crate::config::HookSpec;
use crate::dispatch::{Call, CommandOut, CommandStatus, Provider};
use crate::events::{self, Event};
use crate::gate::{Gate, Verdict};
use crate::runner::{self, RunSpec};

/// Command hooks: gate, run, report.
pub(crate) struct CommandProvider {
    pub by_point: [Vec<HookSpec>; 8],
    pub gate: Arc<Gate>,
    pub project_dir: PathBuf,
    pub grace: Duration,
    pub max_output: usize,
}

impl Provider for CommandProvider {
    fn wants(&self, point: HookPoint) -> bool {
        !self.by_point[point.index()].is_empty()
    }

    fn provide(&self, call: &mut Call<'_>) {
        for hook in &self.by_point[call.point.index()] {
            if runner::interrupted() {
                break; // hookd is being stopped: start nothing new
            }
            let turn = call.outcome.turn;
            let (status, exit_code, duration_ms, reason, hint, event) =
                match self.gate.verdict(&hook.command, call.mode) {
                    Verdict::Denied(d) => {
                        let event = Event::HookCommandSkipped(events::HookCommandSkipped {
                            timestamp: String::new(),
                            name: hook.name.clone(),
                            hook: call.point,
                            command: hook.command.clone(),
                            mode: call.mode,
                            reason: d.reason,
                            hint: d.hint.clone(),
                            detail: d.detail,
                            turn,
                            session_id: call.session_id.to_string(),
                            seq: 0,
                        });
                        (
                            CommandStatus::Skipped,
                            None,
                            None,
                            Some(d.reason),
                            Some(d.hint),
                            event,
                        )
                    }
                    Verdict::Allowed(a) => {
                        let mut ctx = call.context.clone();
                        ctx.set("hook", call.point.name())
                            .set("turn", turn)
                            .set("session_id", call.session_id);
                        ctx.set("mode", call.mode.name());
                        let spec = RunSpec {
                            argv: a.argv.clone(),
                            cwd: self.project_dir.clone(),
                            stdin: ctx.to_json_bytes(),
                            env: vec![
                                ("HOOKD_HOOK".into(), call.point.name().into()),
                                ("HOOKD_SESSION_ID".into(), call.session_id.into()),
                                ("HOOKD_TURN".into(), turn.to_string()),
                                (
                                    "HOOKD_PROJECT_DIR".into(),
                                    self.project_dir.display().to_string(),
                                ),
                            ],
                            timeout: hook.timeout,
                            grace: self.grace,
                            max_output: hook.max_output.unwrap_or(self.max_output),
                        };
                        let r = runner::run(&spec);
                        let status = if r.timed_out {
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
                        let duration_ms = r.duration.as_millis() as u64;
                        let exit_code = r.exit_code_or_minus_one();
                        let event = Event::HookCommand(events::HookCommand {
                            timestamp: String::new(),
                            name: hook.name.clone(),
                            hook: call.point,
                            command: hook.command.clone(),
                            turn,
                            exit_code,
                            duration_ms,
                            output: format!("{}{}", r.stdout.text, r.stderr.text),
                            error: r.error.clone().unwrap_or_default(),
                            session_id: call.session_id.to_string(),
                            seq: 0,
                            mode: call.mode,
                            argv: a.argv,
                            allowed_by: format!("{} ({})", a.entry.pattern, a.entry.origin),
                            truncated: r.stdout.truncated() || r.stderr.truncated(),
                            stdout_dropped_bytes: r.stdout.dropped,
                            stderr_dropped_bytes: r.stderr.dropped,
                            stdout: r.stdout.text,
                            stderr: r.stderr.text,
                            timed_out: r.timed_out,
                            signal: r.signal,
                            leaked: r.leaked,
                        });
                        (
                            status,
                            Some(exit_code),
                            Some(duration_ms),
                            None,
                            None,
                            event,
                        )
                    }
                };
            call.emit(event);
            call.outcome.commands.push(CommandOut {
                name: hook.name.clone(),
                command: hook.command.clone(),
                status,
                exit_code,
                duration_ms,
                reason,
                hint,
            });
        }
    }
}
