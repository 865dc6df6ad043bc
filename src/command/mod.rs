//! Command hooks as a provider: select the hooks due (point, matcher, result, sub-agent), let
//! the gate admit each command, run it, read its reply, and combine the replies into the
//! point's decision. Every hook becomes a `hook_command` or `hook_command_skipped` event.

mod confine;
mod report;
mod results;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use regex::Regex;
use serde_json::Value;

use crate::catalog::HookPoint;
use crate::config::{HookSpec, OnError, OnResult, ProjectTrust};
use crate::decision::{self, Contribution, Decision, Reply};
use crate::events::{self, Event};
use crate::gate::protect::{Places, ProtectedPaths, FILE_TOOLS, PATH_KEYS};
use crate::gate::{Denied, Gate, Verdict};
use crate::kinds::SkipReason;
use crate::provider::{Call, Provider};
use crate::runner::{self, RunReport, RunSpec};
use crate::state::SessionState;
use crate::view::View;

/// The longest tool name an event keeps (tools are short names: `Bash`, `run_shell_command`).
const MOST_TOOL_NAME_BYTES: usize = 256;

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
    /// The shell tools (whose `command` the sandbox rewrites to run confined).
    pub shell_tools: Vec<String>,
    /// The `hookd` program the agent runs a confined shell call with.
    pub exec_program: Option<PathBuf>,
    /// What the configuration was loaded from (`--config-dir`, the user's home), carried in
    /// the rewrite of a confined shell call so that `hookd exec` loads the same.
    pub loaded_from: (Option<PathBuf>, Option<PathBuf>),
    /// Set when the project's `.infer/` is not trusted: its hooks are skipped with this denial.
    pub untrusted: Option<Skip>,
    /// For a project trusted by record: its fingerprint, verified again before each of its hooks
    /// runs (the files may change after loading; a daemon loads once).
    pub recheck: Option<crate::config::Fingerprint>,
    /// Whether the project's configuration and code may act, and how it came to.
    pub trust: ProjectTrust,
    /// With `gate_shell_tools`: the shell tools whose commands face the gate at `pre_tool`.
    pub shell_gate: Option<Vec<String>>,
    /// Where hookd's own files are (read from the environment when the engine was built).
    pub places: Places,
    /// Those files as rules, built from `places` on first use.
    pub protected: OnceLock<ProtectedPaths>,
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
            || (point == HookPoint::PreTool && (self.shell_gate.is_some() || self.confines()))
            || self.tracks_results(point)
    }

    fn needs_state(&self, point: HookPoint) -> bool {
        // The loop guard counts consecutive continues; the audit trail follows allowed calls.
        point == HookPoint::PostSession || self.tracks_results(point)
    }

    fn decide(&self, call: &mut Call<'_>, state: &mut SessionState) {
        if call.point == HookPoint::PostSession {
            call.facts.continues = state.continues;
        }
        self.record_results(call, state);
    }

    fn provide(&self, call: &mut Call<'_>) {
        let point = call.point;
        let hooks: Vec<&Hook> = self.by_point[point.index()]
            .iter()
            .filter(|h| h.selected(call.view))
            .collect();
        let stop_hook_active = point == HookPoint::PostSession
            && (call.view.stop_hook_active.unwrap_or(false) || call.facts.continues > 0);
        let mut contributions = Vec::new();
        let gate_hint = self.gate_shell_command(call).map(|(c, hint)| {
            contributions.push(c);
            hint
        });
        // A command the gate denied needs no hook.
        if gate_hint.is_none() {
            self.run_hooks(&hooks, call, stop_hook_active, &mut contributions);
        }
        let mut decision = decision::aggregate(
            &contributions,
            decision::Inputs {
                point,
                project_dir: &self.project_dir,
                original_prompt: call.view.prompt.map(String::from),
                original_input: (call.context.tool("input"))
                    .filter(|i| decision::echoable(i))
                    .cloned(),
                stop_hook_active,
            },
        );
        if let (Decision::Tool(t), Some(hint)) = (&mut decision, gate_hint) {
            t.operator_hint = Some(hint);
        }
        self.regate_rewrite(call, &mut decision);
        self.confine_shell_call(call, &mut decision);
        if let Decision::Stop(stop) = &mut decision {
            self.loop_guard(call, stop, &contributions);
        }
        call.outcome.decision = decision;
    }

    fn needs_settle(&self, point: HookPoint) -> bool {
        point == HookPoint::PostSession
            || (point == HookPoint::PreTool && self.tracks_results(point))
    }

    fn settle(&self, call: &mut Call<'_>, state: &mut SessionState) {
        self.remember_allowed(call, state);
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

impl CommandProvider {
    /// `gate_shell_tools`: a shell tool call whose command the allow-list does not admit, or
    /// that names one of hookd's own files, and a file tool call that writes one, are denied
    /// before any hook runs. The model is told why, never how to allow it: the operator's hint
    /// goes to the event and the decision's `operator_hint` (adapters print it on stderr).
    fn gate_shell_command(&self, call: &mut Call<'_>) -> Option<(Contribution, String)> {
        let tool = call.view.tool.as_ref().and_then(|t| t.name)?;
        let input = call.context.tool("input").cloned();
        let (named, denied) = match self.gate_input(call, tool, input.as_ref()) {
            Gated::Ungated => return None,
            Gated::Allowed {
                command,
                path,
                entries,
            } => {
                tracing::debug!(tool, "the shell gate admits this call");
                self.emit_allowed(call, tool, command, path, entries);
                return None;
            }
            Gated::Denied(named, denied) => (named, denied),
        };
        tracing::debug!(tool, reason = %denied.reason, detail = %denied.detail, "the shell gate denies this call");
        let reason = format!("hookd refused this {tool} call: {}", denied.detail);
        let hint = denied.hint.clone();
        self.emit_denied(call, tool, named, denied);
        Some((
            Contribution {
                name: "hookd-gate".into(),
                reply: Reply {
                    deny: true,
                    reason: Some(reason),
                    ..Reply::default()
                },
            },
            hint,
        ))
    }

    /// With `gate_shell_tools`, a hook that rewrote the call's input (`updated_input`) faces
    /// the same gate: what the agent runs is what was checked, whoever wrote it. A rewrite the
    /// gate refuses denies the call.
    fn regate_rewrite(&self, call: &mut Call<'_>, decision: &mut Decision) {
        let Decision::Tool(t) = decision else { return };
        if t.deny || t.base.halt {
            return;
        }
        let Some(updated) = t.updated_input.clone() else {
            return;
        };
        let Some(tool) = call.view.tool.as_ref().and_then(|v| v.name) else {
            return;
        };
        let Gated::Denied(named, denied) = self.gate_input(call, tool, Some(&updated)) else {
            return;
        };
        t.deny = true;
        t.reason = Some(format!(
            "hookd refused this {tool} call as a hook rewrote it: {}",
            denied.detail
        ));
        t.synthetic_result = t
            .reason
            .as_ref()
            .map(|r| format!("hookd denied this tool call: {r}"));
        t.updated_input = None;
        t.operator_hint = Some(denied.hint.clone());
        self.emit_denied(call, tool, named, denied);
    }

    /// A shell call hookd gates or confines, in a session whose repository set a variable that
    /// makes the agent's shell (or the loader) run its code first (`BASH_ENV` in
    /// `.claude/settings.json` `env`, `LD_PRELOAD` in a `.env`): whatever hookd decides, that
    /// code runs unconfined before `hookd exec` exists, so every such call is denied. The
    /// model reads that its shell is set up by the repository; the operator's hint names the
    /// files and variables.
    fn startup_set(&self, tool: &str) -> Option<Denied> {
        let gated = self
            .shell_gate
            .as_ref()
            .is_some_and(|g| g.iter().any(|n| n == tool));
        let confined = self.confines() && self.shell_tools.iter().any(|n| n == tool);
        if !(gated || confined) {
            return None;
        }
        let set: Vec<String> = self
            .environment
            .project
            .iter()
            .filter(|v| runner::runs_code(&v.name))
            .map(|v| format!("{} sets {}", v.source, v.name))
            .collect();
        if set.is_empty() {
            return None;
        }
        Some(Denied {
            reason: crate::gate::DenyReason::AgentStartup,
            detail: "the repository's agent settings make the agent's shell run their code before hookd can check or confine a command".into(),
            hint: format!(
                "{}: {}",
                crate::display::visible(&set.join("; ")),
                crate::gate::DenyReason::AgentStartup.advice()
            ),
        })
    }

    /// The gate's verdict on a `pre_tool` call's input.
    fn gate_input(&self, call: &Call<'_>, tool: &str, input: Option<&Value>) -> Gated {
        if call.point != HookPoint::PreTool {
            return Gated::Ungated;
        }
        // Paths in the call are relative to the agent's working directory.
        let cwd = call
            .view
            .cwd
            .filter(|c| c.starts_with('/'))
            .map(PathBuf::from)
            .unwrap_or_else(|| self.project_dir.clone());
        if let Some((named, denied)) = self.sandbox_denies_write((tool, call.mode), input, &cwd) {
            return Gated::Denied(Named::Path(named), denied);
        }
        if let Some(denied) = self.startup_set(tool) {
            let command = input.and_then(|i| i.get("command")).and_then(Value::as_str);
            return Gated::Denied(Named::Command(command.unwrap_or_default().into()), denied);
        }
        let Some(names) = self.shell_gate.as_ref() else {
            return Gated::Ungated;
        };
        let path = PATH_KEYS
            .iter()
            .find_map(|k| input.and_then(|i| i.get(*k)).and_then(Value::as_str))
            .map(String::from);
        if names.iter().any(|n| n == tool) {
            let command = input.and_then(|i| i.get("command")).and_then(Value::as_str);
            // Gemini CLI runs the command in `dir_path` (older versions: `directory`), relative
            // to its working directory: relative paths in the command start there.
            let cwd = ["dir_path", "directory"]
                .iter()
                .find_map(|k| input.and_then(|i| i.get(*k)).and_then(Value::as_str))
                .filter(|d| !d.is_empty())
                .map_or(cwd.clone(), |d| cwd.join(d));
            let Some(c) = command else {
                return Gated::Denied(
                    Named::Command(String::new()),
                    Denied {
                        reason: crate::gate::DenyReason::Empty,
                        detail: format!("the {tool} call has no `command` to check"),
                        hint: "hookd gates shell tools by their `command` input".into(),
                    },
                );
            };
            let verdict = self.gate.model_verdict(c, call.mode);
            let denied = verdict
                .denied
                .clone()
                .or_else(|| self.protected().touched_by(&verdict, cwd));
            match denied {
                Some(d) => Gated::Denied(Named::Command(c.to_string()), d),
                None => Gated::Allowed {
                    command: Some(c.to_string()),
                    path: None,
                    entries: verdict
                        .admitted()
                        .map(|a| a.entry.pattern.clone())
                        .collect(),
                },
            }
        } else {
            if FILE_TOOLS.contains(&tool) {
                if let Some(t) = self.protected().written_by(input, &cwd) {
                    let denied = crate::gate::protect::file_denial(&t.named, &t.place);
                    return Gated::Denied(Named::Path(t.named), denied);
                }
            }
            Gated::Allowed {
                command: None,
                path,
                entries: Vec::new(),
            }
        }
    }

    /// The audit trail's record of a call the gate let through.
    fn emit_allowed(
        &self,
        call: &mut Call<'_>,
        tool: &str,
        command: Option<String>,
        path: Option<String>,
        entries: Vec<String>,
    ) {
        use crate::display::clip;
        let most = crate::gate::MAX_COMMAND_BYTES;
        call.emit(Event::ToolCallAllowed(events::ToolCallAllowed {
            tool: clip(tool, MOST_TOOL_NAME_BYTES).into_owned(),
            command: command.map(|c| clip(&c, most).into_owned()),
            path: path.map(|p| clip(&p, most).into_owned()),
            entries,
            mode: call.mode,
            sandbox: self.confined_under(tool),
            turn: call.outcome.turn,
            session_id: call.session_id.to_string(),
        }));
    }

    /// The event keeps what the model sent cut to the gate's own limit: a refused call of
    /// megabytes (denied as too long) must not make an event, a log line and a dashboard row
    /// of megabytes, ten thousand times over in the daemon's ring.
    fn emit_denied(&self, call: &mut Call<'_>, tool: &str, named: Named, denied: Denied) {
        use crate::display::clip;
        let most = crate::gate::MAX_COMMAND_BYTES;
        let (Named::Command(text) | Named::Path(text)) = &named;
        let text = match clip(text, most) {
            std::borrow::Cow::Borrowed(_) => text.clone(),
            cut => cut.into_owned(),
        };
        call.emit(Event::ToolCommandDenied(events::ToolCommandDenied {
            tool: clip(tool, MOST_TOOL_NAME_BYTES).into_owned(),
            // A file tool's path stays in `command` too, as events of older versions had it.
            path: matches!(named, Named::Path(_)).then(|| text.clone()),
            command: text,
            mode: call.mode,
            reason: denied.reason,
            detail: clip(&denied.detail, most).into_owned(),
            hint: clip(&denied.hint, most).into_owned(),
            turn: call.outcome.turn,
            session_id: call.session_id.to_string(),
        }));
    }

    /// hookd's own files, resolved on the first tool call that needs them, once per engine.
    fn protected(&self) -> &ProtectedPaths {
        self.protected
            .get_or_init(|| ProtectedPaths::new(&self.places))
    }
}

/// The gate's answer on a `pre_tool` call.
enum Gated {
    /// The shell gate is off, or this is not `pre_tool`.
    Ungated,
    /// It may go on: the shell command and the entries that admitted its parts, or the path
    /// another tool names.
    Allowed {
        command: Option<String>,
        path: Option<String>,
        entries: Vec<String>,
    },
    /// It may not: the command (or path) as the model wrote it, and why.
    Denied(Named, Denied),
}

/// What a refused tool call named: a shell tool's command, or a file tool's path.
enum Named {
    Command(String),
    Path(String),
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
                    Some(policy) => {
                        match crate::sandbox::prepare(policy, &self.project_dir) {
                            Ok(c) => Some(std::sync::Arc::new(c)),
                            Err(e) => {
                                return Ran::Skipped(Skip {
                                    reason: SkipReason::SandboxUnavailable,
                                    detail: e.to_string(),
                                    hint: "run hooks on a kernel with Landlock (ABI 3, Linux 6.2+) and unprivileged user namespaces, or set `sandbox.enabled: false` in your config.yaml to run them unconfined".into(),
                                })
                            }
                        }
                    }
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
