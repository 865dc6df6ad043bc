//! Command hooks as a provider: select the hooks due (point, matcher, result, sub-agent), let
//! the gate admit each command, run it, read its reply, and combine the replies into the
//! point's decision. Every hook becomes a `hook_command` or `hook_command_skipped` event.

mod report;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;

use crate::catalog::HookPoint;
use crate::config::{HookSpec, OnError, OnResult, ProjectTrust};
use crate::decision::{self, Contribution, Decision, Reply};
use crate::events::{self, Event};
use crate::gate::{Denied, Gate, Verdict};
use crate::kinds::SkipReason;
use crate::provider::{Call, Provider};
use crate::runner::{self, RunReport, RunSpec};
use crate::state::SessionState;
use crate::view::View;

/// A hook with its matcher compiled.
pub(crate) struct Hook {
    pub spec: HookSpec,
    pub matcher: Option<Regex>,
}

impl Hook {
    pub fn new(spec: HookSpec) -> Hook {
        // Validated when the configuration loaded; a matcher that fails now matches nothing.
        let matcher = spec.matcher.as_ref().map(|m| {
            Regex::new(&format!("^(?:{m})$"))
                .unwrap_or_else(|_| Regex::new("[^\\s\\S]").expect("a regex that matches nothing"))
        });
        Hook { spec, matcher }
    }

    /// Whether this hook is due for this context (matcher, `on`, sub-agents).
    fn selected(&self, ctx: &View<'_>) -> bool {
        let name = &self.spec.name;
        let is_sub_agent = ctx.is_sub_agent.unwrap_or(false);
        if is_sub_agent && !self.spec.include_sub_agents {
            tracing::debug!(hook = %name, "not selected: a sub-agent's call (include_sub_agents is off)");
            return false;
        }
        if let Some(m) = &self.matcher {
            let tool = ctx.tool_name();
            if !m.is_match(tool) {
                tracing::debug!(hook = %name, tool, matcher = m.as_str(), "not selected: the tool does not match");
                return false;
            }
        }
        let failed = ctx.tool_failed();
        let selected = match self.spec.on {
            OnResult::Any => true,
            OnResult::Success => !failed,
            OnResult::Failure => failed,
        };
        if selected {
            tracing::debug!(hook = %name, "selected");
        } else {
            tracing::debug!(hook = %name, on = ?self.spec.on, failed, "not selected: `on` does not match the tool's result");
        }
        selected
    }
}

pub(crate) struct CommandProvider {
    pub by_point: [Vec<Hook>; 8],
    pub gate: Arc<Gate>,
    /// The gate for the user's own hooks: its hints name the user's `config.yaml`.
    pub user_gate: Arc<Gate>,
    pub project_dir: PathBuf,
    pub grace: Duration,
    pub max_output: usize,
    pub max_continues: u64,
    /// The sandbox hooks are confined by (`None` or not `enabled`: unconfined).
    pub sandbox: Option<crate::config::SandboxPolicy>,
    /// Set when the project's `.infer/` is not trusted: its hooks are skipped with this denial.
    pub untrusted: Option<Skip>,
    /// For a project trusted by record: its fingerprint, verified again before each of its hooks
    /// runs (the files may change after loading; a daemon loads once).
    pub recheck: Option<crate::config::Fingerprint>,
    /// Whether the project's configuration and code may act, and how it came to.
    pub trust: ProjectTrust,
    /// What hooks' environment is made of: the user's keep list, the repository's variables.
    pub environment: Arc<runner::Environment>,
    /// What runs an admitted command (processes, unless a test put its own in).
    pub runner: Arc<dyn runner::Runner>,
    /// Stops this engine's runs (SIGINT to `hookd dispatch`, a daemon's shutdown).
    pub cancel: runner::Cancel,
}

/// Where a hook runs: what its process needs to know (shared by parallel runs).
struct At<'a> {
    point: HookPoint,
    session_id: &'a str,
    mode: crate::config::Mode,
    turn: u64,
}

/// What happened to one hook, before it is turned into an event and a contribution.
// Each is built once and moved into its event; boxing the large one buys nothing.
#[allow(clippy::large_enum_variant)]
enum Ran {
    Skipped(Skip),
    Ran {
        argv: Vec<String>,
        allowed_by: String,
        report: RunReport,
        /// When it was started (the runner measures how long it took).
        started: std::time::SystemTime,
    },
}

impl Provider for CommandProvider {
    fn wants(&self, point: HookPoint) -> bool {
        !self.by_point[point.index()].is_empty()
    }

    fn needs_state(&self, point: HookPoint) -> bool {
        point == HookPoint::PostSession // the loop guard counts consecutive continues
    }

    fn decide(&self, call: &mut Call<'_>, state: &mut SessionState) {
        if call.point == HookPoint::PostSession {
            call.facts.continues = state.continues;
        }
    }

    fn provide(&self, call: &mut Call<'_>) {
        // A call an earlier provider denied (the tool gate) needs no hook: its decision stands.
        if call.outcome.decision.blocks() {
            return;
        }
        let point = call.point;
        let hooks: Vec<&Hook> = self.by_point[point.index()]
            .iter()
            .filter(|h| h.selected(call.view))
            .collect();
        let stop_hook_active = call.stop_hook_active();
        let mut contributions = Vec::new();
        self.run_hooks(&hooks, call, stop_hook_active, &mut contributions);
        let mut decision =
            decision::aggregate(&contributions, call.decision_inputs(&self.project_dir));
        if let Decision::Stop(stop) = &mut decision {
            self.loop_guard(call, stop, &contributions);
        }
        call.outcome.decision = decision;
    }

    fn needs_settle(&self, point: HookPoint) -> bool {
        point == HookPoint::PostSession
    }

    fn settle(&self, call: &mut Call<'_>, state: &mut SessionState) {
        if let Decision::Stop(stop) = &call.outcome.decision {
            state.continues = if stop.continue_ {
                state.continues + 1
            } else {
                0
            };
        }
    }
}

impl CommandProvider {
    /// Run the selected hooks in config order, consecutive parallel ones together, each given
    /// the context on stdin; a deny or a halt stops the rest.
    fn run_hooks(
        &self,
        hooks: &[&Hook],
        call: &mut Call<'_>,
        stop_hook_active: bool,
        contributions: &mut Vec<Contribution>,
    ) {
        let point = call.point;
        let mut ctx = call.context.clone();
        ctx.set("hook", point.name())
            .set("turn", call.outcome.turn)
            .set("session_id", call.session_id)
            .set("mode", call.mode.name());
        if point == HookPoint::PostSession {
            ctx.set("stop_hook_active", stop_hook_active);
        }
        let stdin = ctx.to_json_bytes();
        let at = At {
            point,
            session_id: call.session_id,
            mode: call.mode,
            turn: call.outcome.turn,
        };
        let mut i = 0;
        while i < hooks.len() {
            if self.cancel.is_cancelled() {
                return; // hookd is being stopped: start nothing new
            }
            // Consecutive parallel hooks run together; others one at a time.
            let end = if hooks[i].spec.parallel {
                i + hooks[i..].iter().take_while(|h| h.spec.parallel).count()
            } else {
                i + 1
            };
            let batch = &hooks[i..end];
            let results = self.run_batch(batch, &at, &stdin);
            // Results are reported and counted in config order, whatever order they finished in.
            for (hook, ran) in batch.iter().zip(results) {
                let reply = self.report(hook, ran, call, point.capabilities());
                let stop = decision::short_circuits(&reply);
                contributions.push(Contribution {
                    name: hook.spec.name.clone(),
                    reply,
                });
                if stop {
                    return; // a deny or a halt: later hooks do not run, or do not count
                }
            }
            i = end;
        }
    }

    /// One batch: a hook alone, or parallel hooks each on a thread of its own.
    fn run_batch(&self, batch: &[&Hook], at: &At<'_>, stdin: &[u8]) -> Vec<Ran> {
        if let [one] = batch {
            return vec![self.run_one(one, at, stdin)];
        }
        std::thread::scope(|s| {
            let handles: Vec<_> = batch
                .iter()
                .map(|h| s.spawn(|| self.run_one(h, at, stdin)))
                .collect();
            handles
                .into_iter()
                .map(|t| t.join().unwrap_or_else(|_| Ran::Skipped(panicked())))
                .collect()
        })
    }

    /// The stop loop guard: past `max_continues` consecutive continues, `continue` is refused
    /// (and said, as `continue_refused`).
    fn loop_guard(
        &self,
        call: &mut Call<'_>,
        stop: &mut decision::StopDecision,
        contributions: &[Contribution],
    ) {
        if !stop.continue_ || call.facts.continues < self.max_continues {
            return;
        }
        let reason = format!(
            "hookd stopped honouring `continue` after {} consecutive continues (max_continues in hooks.yaml)",
            call.facts.continues
        );
        stop.continue_ = false;
        stop.continue_refused = Some(reason.clone());
        call.emit(Event::ContinueRefused(events::ContinueRefused {
            hook: call.point,
            hooks: contributions
                .iter()
                .filter(|c| c.reply.continue_)
                .map(|c| c.name.clone())
                .collect(),
            continues: call.facts.continues,
            max_continues: self.max_continues,
            reason,
            turn: call.outcome.turn,
            session_id: call.session_id.to_string(),
        }));
    }
}

/// Why a hook was not run, with what was wrong and what to do.
#[derive(Clone, Debug)]
pub(crate) struct Skip {
    pub reason: SkipReason,
    pub detail: String,
    pub hint: String,
}

impl From<Denied> for Skip {
    fn from(d: Denied) -> Self {
        Skip {
            reason: d.reason.into(),
            detail: d.detail,
            hint: d.hint,
        }
    }
}

fn panicked() -> Skip {
    Skip {
        reason: SkipReason::Internal,
        detail: "the hook's runner thread panicked".into(),
        hint: "a bug in hookd: please report it with the hook's configuration".into(),
    }
}

impl CommandProvider {
    /// A hook from the user's configuration whose words run a file of the project (`./fmt.sh`,
    /// `sh scripts/lint.sh`) runs the project's code: it runs only when the project is trusted
    /// and its trust covered exactly that file, unchanged. The skip, otherwise.
    fn users_hook_runs_project_code(&self, argv: &[String]) -> Option<Skip> {
        let path = self.environment.host.path();
        let code = crate::config::project_code(&self.project_dir, argv, path);
        let why = if let Some(f) = self.trust.uncovered(self.recheck.as_ref(), &code) {
            match self.trust {
                ProjectTrust::Trusted { .. } => format!("the project's trust does not cover {f}"),
                _ => "code in the project runs only when the project is trusted, and it is not"
                    .to_string(),
            }
        } else if let Some(fp) = self
            .recheck
            .as_ref()
            .filter(|fp| !code.is_empty() && !crate::config::still_matches(&self.project_dir, fp))
        {
            format!(
                "a file the trust record covers changed since the configuration was loaded ({})",
                fp.files.join(", ")
            )
        } else {
            return None;
        };
        let files = code.join(", ");
        Some(Skip {
            reason: SkipReason::Untrusted,
            detail: format!("runs the project's {files}: {why}"),
            hint: format!(
                "review {files}, then run `hookd trust` in {}",
                self.project_dir.display()
            ),
        })
    }

    fn run_one(&self, hook: &Hook, at: &At<'_>, stdin: &[u8]) -> Ran {
        if hook.spec.origin.source == crate::config::Source::Project {
            if let Some(denied) = &self.untrusted {
                return Ran::Skipped(denied.clone());
            }
            if let Some(fp) = &self.recheck {
                if !crate::config::still_matches(&self.project_dir, fp) {
                    return Ran::Skipped(Skip {
                        reason: SkipReason::Untrusted,
                        detail: format!(
                            "a file the trust record covers changed since the configuration was loaded ({})",
                            fp.files.join(", ")
                        ),
                        hint: format!(
                            "review the change, then run `hookd trust` in {}",
                            self.project_dir.display()
                        ),
                    });
                }
            }
        }
        let gate = if hook.spec.origin.source == crate::config::Source::Project {
            &self.gate
        } else {
            &self.user_gate
        };
        match gate.verdict(&hook.spec.command, at.mode) {
            Verdict::Denied(d) => Ran::Skipped(d.into()),
            Verdict::Allowed(a) => {
                if hook.spec.origin.source != crate::config::Source::Project {
                    if let Some(skip) = self.users_hook_runs_project_code(&a.argv) {
                        return Ran::Skipped(skip);
                    }
                }
                // Confined when the sandbox is on; never run unconfined when it cannot be.
                let confinement = match self.sandbox.as_ref().filter(|s| s.enabled) {
                    None => None,
                    Some(policy) => match crate::sandbox::prepare(policy, &self.project_dir) {
                        Ok(c) => Some(std::sync::Arc::new(c)),
                        Err(e) => {
                            let hint = match e {
                                    crate::sandbox::Unavailable::Kernel(_) => "run hooks on a kernel with Landlock (ABI 3, Linux 6.2+) and unprivileged user namespaces, or set `sandbox.enabled: false` in your config.yaml to run them unconfined",
                                    _ => "fix what the detail names in the project (a symbolic link where a held place is, a tree too large to walk, a directory of yours that cannot be read), or set `sandbox.enabled: false` in your config.yaml to run hooks unconfined",
                                };
                            return Ran::Skipped(Skip {
                                reason: SkipReason::SandboxUnavailable,
                                detail: e.to_string(),
                                hint: hint.into(),
                            });
                        }
                    },
                };
                let spec = RunSpec {
                    confinement,
                    argv: a.argv.clone(),
                    cwd: self.project_dir.clone(),
                    stdin: stdin.to_vec(),
                    env: vec![
                        ("HOOKD_HOOK".into(), at.point.name().into()),
                        ("HOOKD_SESSION_ID".into(), at.session_id.into()),
                        ("HOOKD_TURN".into(), at.turn.to_string()),
                        (
                            "HOOKD_PROJECT_DIR".into(),
                            self.project_dir.display().to_string(),
                        ),
                    ],
                    environment: self.environment.clone(),
                    timeout: hook.spec.timeout,
                    grace: self.grace,
                    max_output: hook.spec.max_output.unwrap_or(self.max_output),
                };
                let started = std::time::SystemTime::now();
                let report = self.runner.run(&spec, &self.cancel);
                Ran::Ran {
                    argv: a.argv,
                    allowed_by: format!("{} ({})", a.entry.pattern, a.entry.origin),
                    report,
                    started,
                }
            }
        }
    }
}

/// A failed hook decides nothing, unless it is `on_error: deny`: then it denies where the point
/// can deny, else halts.
fn fail_closed(spec: &HookSpec, caps: crate::catalog::Capabilities, why: &str) -> Reply {
    let mut reply = Reply::default();
    if spec.on_error == OnError::Deny {
        let reason = format!(
            "hook `{}` failed and is set to fail closed: {why}",
            spec.name
        );
        if caps.deny {
            reply.deny = true;
        } else {
            reply.halt = caps.halt;
        }
        reply.reason = Some(reason);
    }
    reply
}
