//! One agent hook call answered: payload in, reply out. hookd's own failures are answered as
//! the user's policy says (fail closed or not), a running daemon for this project answers when
//! it can, and what the repository set for its agent is kept from the hooks.

use super::{Adapter, AdapterError, AgentReply};
use crate::catalog::HookPoint;
use crate::config::{self, LoadOptions, Policy, PolicyLayer};
use crate::dispatch::{InputError, Outcome};
use crate::host::Host;
use crate::route::{self, ClientSettings, DaemonUse, Here, RouteError, Routed, Trouble};
use std::cell::OnceCell;
use std::time::Duration;

/// A call as it arrives, prepared before anything reads the environment: the payload read (it
/// names the agent's project), the move into that project, and the scrub of what the project
/// set there for its agent (.env, .claude/settings*.json), which may not decide what hookd
/// trusts, allows or reads. Its diagnostics wait for the reply.
#[non_exhaustive]
pub struct Arrival {
    /// The payload, or why it could not be read.
    pub payload: Result<serde_json::Value, AdapterError>,
    /// What was noticed on the way (for stderr with the reply).
    pub diagnostics: Vec<String>,
    /// What the repository's files set for the agent, now gone from this process.
    pub project_env: Vec<crate::runner::ProjectVar>,
    /// Place variables the scrub removed or changed, with the agent's values (still protected).
    pub moved_places: Vec<(String, std::path::PathBuf)>,
    /// Agent files hookd would not read ([`super::Unreadable`]): the call is refused.
    pub unreadable: Vec<super::Unreadable>,
    /// The process as the call should see it: in the agent's project, without what the
    /// project set. The binary makes its own process match it before anything else reads it.
    pub host: Host,
}

impl Arrival {
    /// Read the payload from `text`; from `host` (the process as the agent started it), move to
    /// the agent's project and drop the project's variables.
    pub fn enter(text: Result<String, InputError>, mut host: Host) -> Arrival {
        let payload = text
            .map_err(AdapterError::from)
            .and_then(|t| super::parse_payload(&t));
        let entered = super::enter_agent_project(payload.as_ref().ok(), &mut host);
        Arrival {
            payload,
            diagnostics: entered.notes,
            project_env: entered.project_env,
            moved_places: entered.moved_places,
            unreadable: entered.unreadable,
            host,
        }
    }

    /// This process's adapter call, its payload `text`: [`Arrival::enter`] from the process
    /// as the agent started it, then this process made its host (see [`Host::make_this_process`]).
    pub fn of_this_process(text: Result<String, InputError>) -> Arrival {
        let mut a = Arrival::enter(text, Host::of_this_process());
        a.settle();
        a
    }

    /// Make this process the arrival's host (see [`Host::make_this_process`]): the binary's
    /// edge, called first, while the process has one thread. A directory it cannot enter is
    /// said with the reply.
    pub(crate) fn settle(&mut self) {
        if let (Err(e), Some(dir)) = (self.host.make_this_process(), self.host.cwd()) {
            let dir = dir.display();
            let line = format!("hookd: cannot work in the agent's project {dir}: {e}");
            self.diagnostics.push(line);
        }
    }
}

/// What an agent started this process for, which decides what [`settle_process`] drops.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Start {
    /// An agent's hook call (`hookd adapter`): its payload on stdin names the project.
    Adapter,
    /// The model's call run confined (`hookd exec`), by the agent's own shell; with the
    /// project the adapter decided, when its rewrite carries one (`--project`), whose files are
    /// read too whatever directory the shell stands in.
    ConfinedCall(Option<std::path::PathBuf>),
    /// Anything else: the environment is the operator's.
    Other,
}

/// How [`settle_process`] left this process.
#[non_exhaustive]
pub enum Settled {
    /// An adapter call: moved into the agent's project, the project's variables dropped.
    Adapter(Box<Arrival>),
    /// The project's variables dropped, in the directory the agent started it in.
    Ready,
    /// A confined call (`hookd exec`): the project's variables dropped, and the place
    /// variables the drop took away with the values they had, still to be protected (see
    /// `LoadOptions::also_places`).
    Confined(Vec<(String, std::path::PathBuf)>),
    /// The agent's files could not be read: what they set is unknown, so nothing may run.
    Refused(Vec<super::Unreadable>),
}

/// The first call of a program built on hookd that an agent starts (before it reads any
/// variable: its log level, its options' variables): drop from this process what the agent's
/// repository set for its agent (`.env`, `.claude/settings.json` `env`), and for an adapter
/// call move into the agent's project. `stdin` reads the adapter's payload. Call it while the
/// process has one thread (it changes the process's environment and directory).
pub fn settle_process(start: Start, stdin: impl FnOnce() -> Result<String, InputError>) -> Settled {
    match start {
        Start::Adapter => Settled::Adapter(Box::new(Arrival::of_this_process(stdin()))),
        Start::ConfinedCall(project) => {
            match super::drop_agent_env(Host::of_this_process(), project.as_deref()) {
                Ok((host, moved_places)) => {
                    let _ = host.make_this_process();
                    Settled::Confined(moved_places)
                }
                Err(unread) => Settled::Refused(unread),
            }
        }
        Start::Other => Settled::Ready,
    }
}

/// Why a call's configuration cannot be loaded: hookd's failure, answered as the user's policy
/// says (fail closed or not).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unloadable {
    /// The process's directory is gone or unreadable ([`LoadOptions::from_host`]).
    #[error("error: cannot determine the current directory: {0}")]
    CurrentDir(#[source] std::io::Error),
    /// The configuration directory given (`--config-dir`) is not a directory.
    #[error("error: --config-dir {} is not a directory", .0.display())]
    NotADirectory(std::path::PathBuf),
}

/// Everything one call is answered with, beyond the payload.
#[non_exhaustive]
pub struct Call {
    /// What loading reads (the process and the command line's policy layer); `Err` when not
    /// even the process could be read (its directory is gone): then `flags` hold.
    pub options: Result<LoadOptions, Unloadable>,
    /// Why loading cannot start although the process was read (a configuration directory that
    /// is not one): hookd's failure, answered by the policy.
    pub unusable: Option<Unloadable>,
    /// The command line's policy layer (`--fail-closed`, `--gate-shell-tools`).
    pub flags: PolicyLayer,
    /// How long a running daemon has to take the dispatch, if one may.
    pub daemon: Option<Duration>,
    /// What a daemon must share with this call to answer it.
    pub client: ClientSettings,
    /// How the engine is built when the dispatch runs here.
    pub here: Here,
    /// Place variables the scrub took away ([`Arrival::moved_places`]): protected here, and a
    /// daemon (which does not know them) is not asked.
    pub moved_places: Vec<(String, std::path::PathBuf)>,
    /// Agent files hookd would not read ([`Arrival::unreadable`]): what they set is unknown, so
    /// a tool call or a prompt is denied, and no other event decided.
    pub unreadable: Vec<super::Unreadable>,
}

impl Call {
    /// A call loading with `options` and the command line's `flags`, dispatched here.
    pub fn new(options: Result<LoadOptions, Unloadable>, flags: PolicyLayer) -> Self {
        let client =
            ClientSettings::new(options.as_ref().ok(), flags.gate_shell_tools == Some(true));
        Call {
            options,
            unusable: None,
            flags,
            daemon: None,
            client,
            here: Here::default(),
            moved_places: Vec::new(),
            unreadable: Vec::new(),
        }
    }
}

/// The reply, and hookd's own lines for stderr.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Handled {
    /// What the agent reads.
    pub reply: AgentReply,
    /// hookd's lines for stderr (configuration warnings, daemon trouble, the reply's notes);
    /// an agent that shows stderr to the model as a deny's reason gets only the notes then.
    pub stderr: Vec<String>,
}

/// Answer `payload` for `agent`. `diagnostics` are what was noticed before (unreadable
/// switches, the move into the agent's project).
pub fn handle(
    agent: &dyn Adapter,
    call: Call,
    payload: Result<serde_json::Value, AdapterError>,
    diagnostics: Vec<String>,
) -> Handled {
    let mut answer = Answer {
        agent,
        diagnostics,
        safety: OnceCell::new(),
        options: &call.options,
        flags: &call.flags,
    };
    let reply = answer.reply(&call, payload);
    let mut stderr = if agent.stderr_is_reason() && reply.exit_code != 0 {
        Vec::new()
    } else {
        answer.diagnostics
    };
    stderr.extend(reply.notes.iter().cloned());
    Handled { reply, stderr }
}

/// One call being answered.
struct Answer<'a> {
    agent: &'a dyn Adapter,
    diagnostics: Vec<String>,
    /// The user's own policy, read alone so a broken project file or payload cannot hide it;
    /// read only when something fails: the path that succeeds pays nothing for it.
    safety: OnceCell<Policy>,
    options: &'a Result<LoadOptions, Unloadable>,
    flags: &'a PolicyLayer,
}

impl Answer<'_> {
    /// Whether hookd's failure at `event` denies: `fail_closed`, or the shell tools gated and
    /// the call possibly a shell command (an event hookd cannot read, or one at pre_tool).
    fn closed_for(&self, event: Option<&str>) -> bool {
        let policy = self.safety.get_or_init(|| match self.options {
            Ok(o) => config::user_policy(o),
            Err(_) => Policy::resolve(&PolicyLayer::default(), &[self.flags]),
        });
        policy.fail_closed
            || (policy.gate_shell_tools
                && event.is_none_or(|e| {
                    self.agent
                        .events()
                        .iter()
                        .any(|a| a.name == e && a.point == Some(HookPoint::PreTool))
                }))
    }

    fn failure(&self, event: Option<&str>, error: &str, project_closed: bool) -> AgentReply {
        let closed = project_closed || self.closed_for(event);
        self.agent.failure_reply(event, error, closed)
    }

    fn reply(
        &mut self,
        call: &Call,
        payload: Result<serde_json::Value, AdapterError>,
    ) -> AgentReply {
        // What the repository's unread files set may be anything, HOOKD_FAIL_CLOSED=0 among it;
        // a file only another agent reads sets nothing for this one.
        let unreadable: Vec<&super::Unreadable> = (call.unreadable.iter())
            .filter(|u| u.read_by_agent(Some(self.agent.name())))
            .collect();
        let unread = !unreadable.is_empty();
        for u in &unreadable {
            self.diagnostics.push(format!(
                "hookd: {u}: what it sets for the agent is unknown, so hookd denies every tool call and prompt and runs no hook; make it a regular file of at most {} bytes (or remove it)",
                super::MOST_FILE_BYTES
            ));
        }
        let payload = match payload {
            Ok(p) => p,
            Err(e) => return self.failure(None, &e.to_string(), unread),
        };
        let event = payload
            .as_object()
            .and_then(|o| self.agent.event_name(o))
            .map(String::from);
        if unread {
            return self.refuse_unread(event.as_deref(), &unreadable);
        }
        let t = match self
            .agent
            .translate(&payload, call.here.exec_program.as_deref())
        {
            Ok(t) => t,
            Err(e) => return self.failure(event.as_deref(), &e.to_string(), false),
        };
        let Some(point) = t.point else {
            return self.unmapped(&t.event);
        };
        // A running daemon answers for every session on the machine, only a client with the
        // same settings; its Outcome is the one this process would have computed. One it could
        // not use: dispatch here, for the same verdict; never an answer not the daemon's.
        // Nor a daemon when the scrub took place variables away: it protects the places of its
        // own environment, not the ones the agent was handed.
        let daemon = call.daemon.filter(|_| call.moved_places.is_empty());
        let mut here = call.here.clone();
        if let Some(wait) = daemon {
            match self.via_daemon(point, &t.context, &call.client, wait) {
                Ok(o) => return self.decided(&t.event, o, call, false, &t.context),
                // None answers: the events file of one that went away gets this call's events.
                Err(false) => {
                    if let Some((file, note)) = route::fallback_events(&call.client) {
                        self.diagnostics.extend(note);
                        here.daemon_events = Some(file);
                    }
                }
                Err(true) => {}
            }
        }
        self.here(&t, point, call, here)
    }

    /// The dispatch in this process: the configuration loaded (a failure answered as the
    /// agent's failure, and recorded), the engine built, the Outcome replied.
    fn here(
        &mut self,
        t: &super::Translation,
        point: HookPoint,
        call: &Call,
        here: Here,
    ) -> AgentReply {
        let event = Some(t.event.as_str());
        let opts = match (&call.options, &call.unusable) {
            (_, Some(why)) | (Err(why), None) => {
                return self.failure(event, &why.to_string(), false)
            }
            (Ok(o), None) => o,
        };
        let mut opts = opts.clone();
        opts.also_places = call.moved_places.clone();
        let config = match config::load(&opts) {
            Ok(c) => c,
            Err(e) => {
                // An event too, so an audit trail does not stay empty (its own failure noted).
                let session = t.context.get("session_id").and_then(|s| s.as_str());
                let closed = self.closed_for(event);
                if let Err(w) = here.config_failed(point, session.unwrap_or(""), &e, Some(closed)) {
                    self.diagnostics.push(format!("hookd: {w}"));
                }
                return self.failure(event, &e.report(), false);
            }
        };
        // The policy resolved with the project's file (a trusted one may turn fail_closed on).
        let project_closed = config.policy.fail_closed;
        self.diagnostics.extend(config.warning_lines());
        let lost = here.lost.clone();
        let engine = match here.engine(config) {
            Ok(e) => e,
            Err(e) => return self.failure(event, &format!("error: {e}"), project_closed),
        };
        match engine.dispatch(point, &t.context) {
            Ok(mut outcome) => {
                outcome.unrecorded |= lost.any();
                self.decided(&t.event, outcome, call, project_closed, &t.context)
            }
            Err(e) => self.failure(event, &format!("error: {e}"), project_closed),
        }
    }

    /// The reply to a dispatch's Outcome, here or the daemon's. Decided and not recorded (an
    /// event could not be written): failing closed, the call is refused rather than let
    /// through with no trace (the operator is told why on stderr by the log).
    fn decided(
        &mut self,
        event: &str,
        outcome: Outcome,
        call: &Call,
        project_closed: bool,
        context: &crate::dispatch::Context,
    ) -> AgentReply {
        if outcome.unrecorded && (project_closed || self.closed_for(Some(event))) {
            let why = "hookd could not record this call in its events file";
            return self.failure(Some(event), why, true);
        }
        self.with_outcome(event, outcome, call, context)
    }

    /// The reply when agent files could not be read: what they set for the agent (and so for
    /// this process) is unknown, so nothing is loaded or run. A tool call or a prompt is denied
    /// (the model is told which file, in one sentence; the operator why and what to do, on
    /// stderr); any other event is let go with a note.
    fn refuse_unread(&self, event: Option<&str>, bad: &[&super::Unreadable]) -> AgentReply {
        let files: Vec<String> = bad
            .iter()
            .map(|u| crate::display::visible(&u.file.display().to_string()).into_owned())
            .collect();
        let why = format!(
            "{} cannot be read, so what the repository sets for the agent is unknown",
            files.join(", ")
        );
        self.agent.failure_reply(event, &why, true)
    }

    /// The daemon's Outcome, or why not to dispatch here: `false` when none answers, `true`
    /// when one answered and could not be used (why, among the diagnostics). The choice is
    /// [`route::route`]'s, as for `hookd dispatch`, but an agent's call always gets an answer,
    /// so a daemon that took the dispatch and stopped is answered for here too.
    fn via_daemon(
        &mut self,
        point: HookPoint,
        context: &crate::dispatch::Context,
        client: &ClientSettings,
        wait: Duration,
    ) -> Result<Outcome, bool> {
        let here = |socket: &std::path::Path, why: &dyn std::fmt::Display| {
            format!(
                "hookd: the hookd daemon at {}: {why}; dispatching in this process",
                socket.display()
            )
        };
        let note = match route::route(point, context, DaemonUse::IfRunning(wait), client) {
            Ok(Routed::Daemon { socket, outcome }) => match serde_json::from_str(&outcome) {
                Ok(o) => return Ok(o),
                Err(e) => Some(here(&socket, &format!("its answer is not an Outcome: {e}"))),
            },
            Ok(Routed::Here { note }) => note,
            Err(RouteError::Lost(socket)) => Some(here(&socket, &Trouble::Lost)),
            Err(e) => Some(format!("hookd: {e}; dispatching in this process")),
        };
        let answered = note.is_some();
        self.diagnostics.extend(note);
        Err(answered)
    }

    /// The reply to an Outcome; its notices (hooks switched off…) join hookd's diagnostics.
    fn with_outcome(
        &mut self,
        event: &str,
        mut outcome: Outcome,
        call: &Call,
        context: &crate::dispatch::Context,
    ) -> AgentReply {
        self.diagnostics
            .extend(outcome.notices.iter().map(|n| format!("hookd: {n}")));
        // The agent's own deny and ask rules still hold for a call hookd rewrote to run
        // confined (they would not match the rewrite).
        if let Ok(opts) = &call.options {
            let host = opts.effective_host();
            let starts: Vec<std::path::PathBuf> = (context.get("cwd").and_then(|c| c.as_str()))
                .map(std::path::PathBuf::from)
                .into_iter()
                .chain(host.dir("CLAUDE_PROJECT_DIR"))
                .collect();
            let rules = super::own_rules::apply(self.agent, &host, &starts, &mut outcome);
            if let Some(note) = rules {
                self.diagnostics.push(note);
            }
        }
        self.agent.reply(event, &outcome)
    }

    /// An event hookd does not act on: an empty reply, and a note when the agent's table does
    /// not know it either.
    fn unmapped(&self, event: &str) -> AgentReply {
        let mut r = AgentReply {
            stdout: "{}".into(),
            exit_code: 0,
            notes: vec![],
        };
        if !self.agent.events().iter().any(|e| e.name == event) {
            r.notes.push(format!(
                "hookd: {} event `{event}` is not mapped to a hook point; ignored",
                self.agent.name()
            ));
        }
        r
    }
}
