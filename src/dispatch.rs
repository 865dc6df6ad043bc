//! The seam: `Engine::dispatch(point, context) -> Outcome`. Providers say what is due, the gate
//! admits commands, the runner runs them, and every action becomes an event.
//!
//! Providers run in a fixed order (reminders, the model's tool gate, then command hooks), each
//! in config order, so the Outcome is deterministic. A new action kind is a new `Provider`; callers do not change.

use std::sync::Arc;
use std::time::Duration;

pub use crate::context::{Context, DispatchError, InputError};
pub use crate::kinds::SkipReason;
pub use crate::outcome::{CommandOut, CommandStatus, Outcome, ReminderOut};
pub(crate) use crate::provider::{Call, Provider};

use crate::catalog::HookPoint;
use crate::command::{CommandProvider, Hook};
use crate::config::{Config, Mode, ProjectTrust};
use crate::decision::Decision;
use crate::events::{Event, EventSink, NullSink, Stream};
use crate::gate::Gate;
use crate::reminder::ReminderProvider;
use crate::state::{MemoryStore, SessionFacts, SessionState, StateStore};
use crate::tool_gate::ToolGate;

/// Builds an [`Engine`].
pub struct EngineBuilder {
    config: Config,
    sink: Arc<dyn EventSink>,
    store: Arc<dyn StateStore>,
    mode: Mode,
    grace: Option<Duration>,
    max_output: Option<usize>,
    stream: Option<Arc<Stream>>,
    runner: Arc<dyn crate::runner::Runner>,
    cancel: crate::runner::Cancel,
    project_env: Vec<crate::runner::ProjectVar>,
    exec_program: Option<std::path::PathBuf>,
    observer: Option<Arc<dyn DispatchObserver>>,
}

/// One finished dispatch, as an observer sees it: when, what it answered, and the events it
/// emitted (in order).
#[non_exhaustive]
pub struct Dispatched<'a> {
    /// The point.
    pub point: HookPoint,
    /// When the dispatch began and ended.
    pub started: std::time::SystemTime,
    /// When it ended.
    pub ended: std::time::SystemTime,
    /// What it answered.
    pub outcome: &'a Outcome,
    /// The events it emitted, in order.
    pub events: &'a [crate::events::Stamped],
    /// The configuration it ran with (a hook's timeout, by name).
    pub config: &'a Config,
}

/// Told of every dispatch when it ends (OpenTelemetry traces are built from this). Called on
/// the dispatching thread: keep it short, hand the work to another thread.
pub trait DispatchObserver: Send + Sync {
    /// A dispatch ended (not called when its context was unusable).
    fn dispatched(&self, d: &Dispatched<'_>);

    /// A confined model call's connections through hookd's proxy, which ran outside any
    /// dispatch (`hookd exec` in the agent's shell reports them when the call ends), each
    /// naming its session ([`Engine::connections`]). Nothing by default.
    fn connected(&self, connections: &[crate::events::NetworkRequest]) {
        let _ = connections;
    }
}

impl EngineBuilder {
    /// Tell `observer` of every dispatch when it ends. Without one, dispatch keeps nothing.
    pub fn observer(mut self, observer: Arc<dyn DispatchObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// The `hookd` program (by absolute path) an agent runs a model's shell call with when the
    /// sandbox is on: the call is rewritten to `PROGRAM exec --shell 'COMMAND'`. Without one,
    /// such calls are denied rather than run unconfined. The binary passes its own path.
    pub fn exec_program(mut self, program: impl Into<std::path::PathBuf>) -> Self {
        self.exec_program = Some(program.into());
        self
    }

    /// The process the engine works for (default: the configuration's, see
    /// [`Config::host`]): its variables are the hooks' environment before hookd removes what
    /// it removes, its `PATH` finds their programs, the places it names are protected, and
    /// confined commands write in its `TMPDIR`. A configuration from [`Config::from_yaml`] has
    /// an empty one: hooks get `PATH=/usr/local/bin:/usr/bin:/bin` and no home is protected
    /// until one is given (`Host::of_this_process()` for this process's).
    pub fn host(mut self, host: crate::host::Host) -> Self {
        self.config.set_host(host);
        self
    }

    /// What a repository's files set for the agent (see `adapter::enter_agent_project`): its
    /// variables are removed from hooks' environment unless the user's `env.keep` keeps the
    /// user's own value of one, or a trusted project's keeps its own.
    pub fn project_env(mut self, vars: Vec<crate::runner::ProjectVar>) -> Self {
        self.project_env = vars;
        self
    }

    /// Send events to `sink`, numbered from 1 (default: discard).
    pub fn sink(mut self, sink: Arc<dyn EventSink>) -> Self {
        self.sink = sink;
        self
    }

    /// Emit into `stream` instead (it has its own sink and numbering). Engines that replace each
    /// other (a daemon reloading its configuration) share one, so `seq` never restarts and
    /// never goes out of order between them.
    pub fn stream(mut self, stream: Arc<Stream>) -> Self {
        self.stream = Some(stream);
        self
    }

    /// Run admitted commands with `runner` (default: as processes). A test's own runner lets
    /// the engine's decisions be checked without starting anything.
    pub fn runner(mut self, runner: Arc<dyn crate::runner::Runner>) -> Self {
        self.runner = runner;
        self
    }

    /// Stop this engine's runs with `cancel` (default: a token of its own, see
    /// [`Engine::canceller`]). Engines that replace each other share one.
    pub fn cancel(mut self, cancel: crate::runner::Cancel) -> Self {
        self.cancel = cancel;
        self
    }

    /// Keep session state in `store` (default: in memory).
    pub fn state_store(mut self, store: Arc<dyn StateStore>) -> Self {
        self.store = store;
        self
    }

    /// The mode used when the context names none (default: standard).
    pub fn default_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// SIGTERM-to-SIGKILL grace for timed-out commands (default: `grace` of hooks.yaml).
    pub fn grace(mut self, grace: Duration) -> Self {
        self.grace = Some(grace);
        self
    }

    /// Bytes kept per output stream (default: `max_output` of hooks.yaml; a hook's own wins).
    pub fn max_output(mut self, bytes: usize) -> Self {
        self.max_output = Some(bytes);
        self
    }

    /// Compile the gate and index hooks and reminders by point.
    pub fn build(self) -> Engine {
        let gate = Arc::new(
            Gate::new(&self.config.allow, self.config.allow_file.clone())
                .with_untrusted(&self.config.ignored_allow),
        );
        // The user's hooks are allowed in the user's own file: their hints name it.
        let user_gate = match self.config.user_allow_file.as_str() {
            "" => gate.clone(),
            file => Arc::new(gate.naming(file)),
        };
        let mut by_point: [Vec<Hook>; 8] = Default::default();
        if self.config.hooks.enabled {
            for h in &self.config.hooks.hooks {
                by_point[h.hook.index()].push(Hook::new(h.clone()));
            }
        }
        let reminders = ReminderProvider::new(&self.config.reminders);
        let environment = hooks_environment(&self.config, self.project_env);
        let providers: Vec<Box<dyn Provider>> = vec![
            Box::new(reminders),
            Box::new(ToolGate {
                gate: gate.clone(),
                project_dir: self.config.project_dir.clone(),
                sandbox: Some(self.config.policy.sandbox.clone()),
                shell_tools: self.config.policy.shell_tools.clone(),
                exec_program: self.exec_program,
                loaded_from: (self.config.config_dir.clone(), self.config.host().home()),
                shell_gate: self
                    .config
                    .policy
                    .gate_shell_tools
                    .then(|| self.config.policy.shell_tools.clone()),
                places: if self.config.policy.gate_shell_tools {
                    self.config.places().clone()
                } else {
                    Default::default()
                },
                protected: Default::default(),
                environment: environment.clone(),
            }),
            Box::new(CommandProvider {
                by_point,
                gate: gate.clone(),
                user_gate: user_gate.clone(),
                project_dir: self.config.project_dir.clone(),
                grace: self.grace.unwrap_or(self.config.hooks.grace),
                max_output: self.max_output.unwrap_or(self.config.hooks.max_output),
                max_continues: self.config.policy.max_continues,
                sandbox: Some(self.config.policy.sandbox.clone()),
                untrusted: untrusted_denial(&self.config),
                recheck: match (&self.config.trust, &self.config.fingerprint) {
                    (ProjectTrust::Trusted { .. }, Some(fp)) => Some(fp.clone()),
                    _ => None,
                },
                trust: self.config.trust.clone(),
                environment,
                runner: self.runner,
                cancel: self.cancel.clone(),
            }),
        ];
        Engine {
            providers,
            observer: self.observer,
            stream: self.stream.unwrap_or_else(|| Stream::new(self.sink, 0)),
            cancel: self.cancel,
            store: self.store,
            mode: self.mode,
            gate,
            user_gate,
            config: Arc::new(self.config),
        }
    }
}

/// What hooks' environment is made of: the host, the user's keep list, the project's when it
/// is trusted, the repository's variables.
fn hooks_environment(
    config: &Config,
    project: Vec<crate::runner::ProjectVar>,
) -> Arc<crate::runner::Environment> {
    Arc::new(crate::runner::Environment {
        host: config.host().clone(),
        keep: config.hooks.env_keep.clone(),
        project_keep: if config.trust.allows_project() {
            config.hooks.project_env_keep.clone()
        } else {
            Default::default()
        },
        project,
    })
}

/// The denial for hooks of an untrusted project, naming what to do.
fn untrusted_denial(config: &Config) -> Option<crate::command::Skip> {
    let ProjectTrust::Untrusted { changed } = &config.trust else {
        return None;
    };
    let project = config.project_dir.display();
    Some(crate::command::Skip {
        reason: crate::kinds::SkipReason::Untrusted,
        detail: if *changed {
            format!("the project's .infer/ changed since it was trusted ({project})")
        } else {
            format!("the project's .infer/ is not trusted ({project})")
        },
        hint: format!(
            "review what it would run with `hookd check`, then run `hookd trust` in {project} \
             (for CI on your own repository: HOOKD_TRUST_PROJECT=1)"
        ),
    })
}

/// A loaded configuration, ready to dispatch. `Send + Sync`: share it across threads.
pub struct Engine {
    providers: Vec<Box<dyn Provider>>,
    observer: Option<Arc<dyn DispatchObserver>>,
    /// Numbers, times and delivers every event: one per `hookd dispatch` process or daemon.
    stream: Arc<Stream>,
    /// Stops its runs.
    cancel: crate::runner::Cancel,
    store: Arc<dyn StateStore>,
    mode: Mode,
    gate: Arc<Gate>,
    /// The same, naming the user's own file in its hints (for the user's hooks).
    #[cfg_attr(not(feature = "cli"), allow(dead_code))]
    user_gate: Arc<Gate>,
    config: Arc<Config>,
}

impl Engine {
    /// Start building an engine for `config`.
    pub fn builder(config: Config) -> EngineBuilder {
        EngineBuilder {
            config,
            sink: Arc::new(NullSink),
            store: Arc::new(MemoryStore::default()),
            mode: Mode::Standard,
            grace: None,
            max_output: None,
            stream: None,
            runner: Arc::new(crate::runner::Processes),
            cancel: crate::runner::Cancel::new(),
            project_env: Vec::new(),
            exec_program: None,
            observer: None,
        }
    }

    /// The gate compiled from the configuration.
    pub fn gate(&self) -> &Gate {
        &self.gate
    }

    /// The gate for a hook written by `source`: its hints name the file that would allow it
    /// (the user's own `config.yaml` for the user's hooks).
    #[cfg(feature = "cli")]
    pub(crate) fn gate_for(&self, source: crate::config::Source) -> &Gate {
        if source == crate::config::Source::Project {
            &self.gate
        } else {
            &self.user_gate
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The token that stops this engine's runs: `canceller().cancel()` kills every command it
    /// is running and starts no new one (SIGINT to `hookd dispatch`, a daemon's shutdown).
    pub fn canceller(&self) -> &crate::runner::Cancel {
        &self.cancel
    }

    /// Stamp `event` with the next sequence number and the time, and send it to the sink: every
    /// event goes through here, from a dispatch or not (a daemon's `config_reloaded`).
    pub fn emit(&self, event: Event) {
        self.stream.emit(event);
    }

    /// A confined model call's connections through hookd's proxy, reported after the call by
    /// `hookd exec` (not made by this engine's hooks): each a `network_request` event, and
    /// told to the observer ([`DispatchObserver::connected`]: spans of their session's trace).
    pub fn connections(&self, connections: Vec<crate::events::NetworkRequest>) {
        if let Some(o) = &self.observer {
            o.connected(&connections);
        }
        for c in connections {
            self.emit(Event::NetworkRequest(c));
        }
    }

    /// Resolve and perform what is due at `point`. Hook failures are outcomes, not errors;
    /// only an unusable context is an error.
    pub fn dispatch(&self, point: HookPoint, context: &Context) -> Result<Outcome, DispatchError> {
        let Some(observer) = &self.observer else {
            return self.run(point, context, None);
        };
        let started = std::time::SystemTime::now();
        let kept = std::sync::Mutex::new(Vec::new());
        let result = self.run(point, context, Some(&kept));
        if let Ok(outcome) = &result {
            let events = kept.into_inner().unwrap_or_else(|p| p.into_inner());
            observer.dispatched(&Dispatched {
                point,
                started,
                ended: std::time::SystemTime::now(),
                outcome,
                events: &events,
                config: &self.config,
            });
        }
        result
    }

    /// The dispatch itself; with `kept`, its events are also kept there for the observer.
    fn run(
        &self,
        point: HookPoint,
        context: &Context,
        kept: Option<&std::sync::Mutex<Vec<crate::events::Stamped>>>,
    ) -> Result<Outcome, DispatchError> {
        let view = context.view()?;
        let outcome = self.blank_outcome(point, &view)?;
        let mode = outcome.mode;
        tracing::debug!(%point, session = outcome.session_id.as_str(), %mode, "dispatch");
        // Providers with something due here, and those that only keep their books here.
        let active: Vec<&dyn Provider> = self
            .providers
            .iter()
            .filter(|p| p.wants(point) || p.keeps_books(point))
            .map(|p| p.as_ref())
            .collect();
        if active.is_empty() {
            tracing::debug!(%point, "nothing configured at this point");
            return Ok(outcome); // the hot path: nothing can be due here
        }
        let session_id = outcome.session_id.clone();
        let wanted: Vec<&dyn Provider> =
            active.iter().copied().filter(|p| p.wants(point)).collect();
        let emit = |e: Event| match kept {
            None => self.emit(e),
            Some(k) => {
                let stamped = self.stream.emit_kept(e);
                k.lock().unwrap_or_else(|p| p.into_inner()).push(stamped);
            }
        };
        let mut call = Call {
            point,
            context,
            view: &view,
            session_id: &session_id,
            mode,
            facts: SessionFacts::default(),
            outcome,
            emit: &emit,
        };
        self.decide(&mut call, &active);
        for p in &wanted {
            p.provide(&mut call);
        }
        for p in &wanted {
            p.review(&mut call);
        }
        self.settle(&mut call, &wanted);
        let o = &call.outcome;
        tracing::info!(
            %point,
            session = session_id.as_str(),
            reminders = o.reminders.len(),
            commands = o.commands.len(),
            skipped = o.commands.iter().filter(|c| c.status == CommandStatus::Skipped).count(),
            "dispatched"
        );
        Ok(call.outcome)
    }

    /// The Outcome before anything is due: the session (by its key), the mode (the context's
    /// or the engine's), the turns, the notices of hooks switched off.
    fn blank_outcome(
        &self,
        point: HookPoint,
        view: &crate::view::View<'_>,
    ) -> Result<Outcome, DispatchError> {
        // An over-long id (agents send UUIDs) is known by its digest from here on: in the
        // session's state, its events and what its hooks are given, so a client sending
        // megabytes as an id makes no event, hook environment or dashboard row that large.
        let session_key = crate::state::session_key(view.session_id.unwrap_or_default());
        let mode = match view.mode {
            Some(m) => m
                .parse::<Mode>()
                .map_err(|e| DispatchError::Context(e.to_string()))?,
            None => self.mode,
        };
        Ok(Outcome {
            hook: point,
            session_id: session_key.into_owned(),
            turn: view.turn.unwrap_or(0),
            session_turn: view.session_turn.or(view.turn).unwrap_or(0),
            mode,
            reminders: Vec::new(),
            commands: Vec::new(),
            decision: Decision::none(point),
            notices: self.config.hooks.off.clone(),
            unrecorded: false,
        })
    }

    /// The providers' decisions under the session's lock. The session's state is read (and
    /// locked) only when something needs it: bookkeeping at this point, a provider's decision,
    /// or the turn for events when the agent sent none.
    fn decide(&self, call: &mut Call<'_>, active: &[&dyn Provider]) {
        let point = call.point;
        let (turn, session_turn) = (call.view.turn, call.view.session_turn);
        let counts_turns = || {
            self.providers
                .iter()
                .any(|p| p.keeps_books(HookPoint::PreStream))
        };
        let needs_state = active
            .iter()
            .any(|p| p.keeps_books(point) || p.needs_state(point))
            || (turn.is_none() && counts_turns());
        if !needs_state {
            return;
        }
        let session_id = call.session_id;
        let mut locked = |state: &mut SessionState| {
            // The turn as counted so far; a provider counting turns updates it.
            call.outcome.turn = turn.unwrap_or(state.turns);
            call.outcome.session_turn = session_turn.or(turn).unwrap_or(state.turns);
            for p in active {
                p.decide(call, state);
            }
        };
        let result = if session_id.is_empty() {
            locked(&mut SessionState::default()); // no session: nothing to remember
            Ok(())
        } else {
            self.store.update(session_id, &mut locked)
        };
        if let Err(e) = result {
            tracing::warn!("{e}; this dispatch goes on without session state");
            locked(&mut SessionState::default());
        }
    }

    /// What providers record after the hooks ran (the loop guard), under the session's lock.
    fn settle(&self, call: &mut Call<'_>, wanted: &[&dyn Provider]) {
        let settling: Vec<&&dyn Provider> = wanted
            .iter()
            .filter(|p| p.needs_settle(call.point))
            .collect();
        if settling.is_empty() || call.session_id.is_empty() {
            return;
        }
        let session_id = call.session_id;
        let mut settle = |state: &mut SessionState| {
            for p in &settling {
                p.settle(call, state);
            }
        };
        if let Err(e) = self.store.update(session_id, &mut settle) {
            tracing::warn!("{e}; the loop guard could not record this dispatch");
        }
    }
}
