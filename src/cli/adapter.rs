//! `hookd adapter AGENT`: be the agent's hook command, payload in, reply out.

use super::dispatch::{client_settings, engine, interruptible, via_daemon};
use super::error::Done;
use super::install::Agent;
use super::load::{load, options, warnings, ConfigArgs};
use super::{given_path, out, path_arg, read_stdin, Millis, Switch};
use hookd::adapter;
use hookd::catalog::HookPoint;
use hookd::config;
use std::path::PathBuf;

/// `hookd adapter`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The agent.
    #[arg(value_enum)]
    pub(super) agent: Agent,
    #[command(flatten)]
    pub(super) cfg: ConfigArgs,
    /// Append events as JSON lines to FILE (`-` for stderr).
    #[arg(long, value_name = "FILE", env = "HOOKD_EVENTS", value_parser = path_arg())]
    pub(super) events: Option<PathBuf>,
    /// If hookd itself fails, deny the tool call or block the prompt instead of letting the
    /// agent go on. A value of the variable that is neither on nor off turns it on.
    #[arg(long, env = "HOOKD_FAIL_CLOSED", num_args = 0, default_missing_value = "on", value_parser = Switch::parse, value_name = "ON")]
    pub(super) fail_closed: Option<Switch>,
    /// Dispatch in this process even when a daemon answers.
    #[arg(long, env = "HOOKD_NO_DAEMON", num_args = 0, default_missing_value = "on", value_parser = Switch::parse, value_name = "ON")]
    pub(super) no_daemon: Option<Switch>,
    /// How long a running daemon has to take the dispatch before it runs in this process
    /// instead [default: 2000].
    #[arg(long, value_name = "MS", env = "HOOKD_DAEMON_TIMEOUT_MS", value_parser = Millis::parse)]
    pub(super) daemon_timeout_ms: Option<Millis>,
}

/// What `hookd adapter` does before its arguments are parsed (see [`super::early`]): the
/// payload read (it names the agent's project), the move into that project, and the scrub of
/// what the project set in the environment. Its diagnostics wait for the reply.
pub(crate) struct Early {
    payload: Result<serde_json::Value, String>,
    diagnostics: Vec<String>,
    /// What the repository's files set for the agent, now gone from this process.
    project_env: Vec<hookd::runner::ProjectVar>,
}

impl Early {
    /// Read the payload, move to the agent's project, drop the project's variables.
    pub(crate) fn prepare() -> Early {
        let payload =
            read_stdin().and_then(|t| adapter::parse_payload(&t).map_err(|e| e.to_string()));
        // The project is the agent's: hookd works there, whatever directory it was started in.
        // Then, before anything reads the environment: what the repository set for its agent
        // (.env, .claude/settings*.json) may not decide what hookd trusts, allows or reads.
        let entered = adapter::enter_agent_project(payload.as_ref().ok());
        Early {
            payload,
            diagnostics: entered.notes,
            project_env: entered.project_env,
        }
    }
}

/// `hookd adapter AGENT`. `early` is what `main` prepared before parsing; it is always there
/// when `hookd adapter` is the first argument, as clap requires, and prepared here otherwise.
pub(super) fn run(mut a: Args, early: Option<Early>) -> Done {
    let Early {
        payload,
        mut diagnostics,
        project_env,
    } = early.unwrap_or_else(Early::prepare);
    // A safety switch: a value hookd cannot read turns it on, never silently off.
    a.cfg.fail_closed = Switch::is_on(a.fail_closed.as_ref(), true);
    let no_daemon = Switch::is_on(a.no_daemon.as_ref(), false);
    let (daemon_wait, wait_note) = Millis::wait(a.daemon_timeout_ms.as_ref());
    diagnostics.extend(Switch::note(
        a.fail_closed.as_ref(),
        "HOOKD_FAIL_CLOSED",
        true,
    ));
    diagnostics.extend(Switch::note(a.no_daemon.as_ref(), "HOOKD_NO_DAEMON", false));
    diagnostics.extend(wait_note);
    // With --config-dir the daemon's configuration is not this call's.
    let daemon = (!no_daemon && a.cfg.config_dir.is_none()).then_some(daemon_wait);
    adapter(
        a.agent,
        a.cfg,
        given_path(a.events),
        daemon,
        payload,
        diagnostics,
        project_env,
    )
}

/// The adapter proper: `daemon` is how long a running daemon has to take the dispatch, if one
/// may; `cfg` carries `--fail-closed` with the other flags of the policy.
fn adapter(
    agent: Agent,
    cfg: ConfigArgs,
    events: Option<PathBuf>,
    daemon: Option<std::time::Duration>,
    payload: Result<serde_json::Value, String>,
    diagnostics: Vec<String>,
    project_env: Vec<hookd::runner::ProjectVar>,
) -> Done {
    // hookd's own diagnostics for this call (configuration warnings, daemon trouble). An agent
    // that shows stderr to the model as a deny's reason gets only the reason then.
    let diagnostics = std::cell::RefCell::new(diagnostics);
    // The user's own `fail_closed` and `gate_shell_tools` (hooks.yaml of --config-dir or
    // ~/.infer), read alone, so a broken project file or payload cannot hide them. With the
    // shell tools gated, a call hookd cannot read may be a shell command: it is denied.
    // Read only when something fails: the path that succeeds pays nothing for it.
    let safety = std::cell::OnceCell::new();
    let safety = || {
        safety.get_or_init(|| match options(&cfg) {
            Ok(o) => config::user_policy(&o),
            // Not even the process could be read (its directory is gone): the flags hold.
            Err(_) => {
                let flags = config::PolicyLayer::flags(cfg.gate_shell_tools, cfg.fail_closed);
                config::Policy::resolve(&config::PolicyLayer::default(), &[&flags])
            }
        })
    };
    let agent = agent.adapter();
    let closed_for = |event: Option<&str>| {
        let policy = safety();
        policy.fail_closed
            || (policy.gate_shell_tools
                && event.is_none_or(|e| {
                    agent
                        .events()
                        .iter()
                        .any(|a| a.name == e && a.point == Some(HookPoint::PreTool))
                }))
    };
    let emit = |r: adapter::AgentReply| {
        if !(agent.stderr_is_reason() && r.exit_code != 0) {
            for d in diagnostics.borrow().iter() {
                eprintln!("{d}");
            }
        }
        for n in &r.notes {
            eprintln!("{n}");
        }
        if !r.stdout.is_empty() {
            out(&format!("{}\n", r.stdout));
        }
        Ok(r.exit_code)
    };
    let payload = match payload {
        Ok(p) => p,
        Err(e) => return emit(agent.failure_reply(None, &e, closed_for(None))),
    };
    let event = payload
        .as_object()
        .and_then(|o| agent.event_name(o))
        .map(String::from);
    let t = match agent.translate(&payload) {
        Ok(t) => t,
        Err(e) => {
            let closed = closed_for(event.as_deref());
            return emit(agent.failure_reply(event.as_deref(), &e.to_string(), closed));
        }
    };
    let Some(point) = t.point else {
        let mut r = adapter::AgentReply {
            stdout: "{}".into(),
            exit_code: 0,
            notes: vec![],
        };
        if !agent.events().iter().any(|e| e.name == t.event) {
            r.notes.push(format!(
                "hookd: {} event `{}` is not mapped to a hook point; ignored",
                agent.name(),
                t.event
            ));
        }
        return emit(r);
    };
    let closed = || closed_for(Some(&t.event));
    // A running daemon answers for every session on the machine: one configuration, one
    // stream. It answers only a client with the same settings (home, variables, flags); its
    // Outcome is then the one this process would have computed with the same files.
    // A daemon it could not use (too large a payload, busy, slow, not this user's, other
    // settings, gone): dispatch here, for the same verdict; never an answer not the daemon's.
    let client = client_settings(&cfg);
    if let Some((socket, answer)) =
        daemon.and_then(|wait| via_daemon(point, &t.context, &client, wait))
    {
        let outcome = answer.map_err(|t| t.to_string()).and_then(|json| {
            serde_json::from_str::<hookd::dispatch::Outcome>(&json)
                .map_err(|e| format!("its answer is not an Outcome: {e}"))
        });
        match outcome {
            Ok(o) => {
                notices(&diagnostics, &o);
                return emit(agent.reply(&t.event, &o));
            }
            Err(e) => diagnostics.borrow_mut().push(format!(
                "hookd: the hookd daemon at {}: {e}; dispatching in this process",
                socket.display()
            )),
        }
    }
    let config = match load(cfg.clone()) {
        Ok(c) => c,
        Err(e) => return emit(agent.failure_reply(Some(&t.event), &e.to_string(), closed())),
    };
    // The policy resolved with the project's file (a trusted one may turn fail_closed on).
    let project_closed = config.policy.fail_closed;
    let closed = || project_closed || closed();
    diagnostics.borrow_mut().extend(warnings(&config));
    let engine = match engine(config, events, project_env) {
        Ok(e) => e,
        Err(e) => return emit(agent.failure_reply(Some(&t.event), &e.to_string(), closed())),
    };
    let (result, _caught) =
        interruptible(engine.canceller(), || engine.dispatch(point, &t.context));
    match result {
        Ok(outcome) => {
            notices(&diagnostics, &outcome);
            emit(agent.reply(&t.event, &outcome))
        }
        Err(e) => emit(agent.failure_reply(Some(&t.event), &e.to_string(), closed())),
    }
}

/// The Outcome's notices (hooks switched off…), for stderr with hookd's other diagnostics.
pub(super) fn notices(
    diagnostics: &std::cell::RefCell<Vec<String>>,
    outcome: &hookd::dispatch::Outcome,
) {
    diagnostics
        .borrow_mut()
        .extend(outcome.notices.iter().map(|n| format!("hookd: {n}")));
}
