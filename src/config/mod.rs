//! Configuration: the `.infer/` files found by the lookup rules, plus environment overrides,
//! validated into one `Config`. Every problem is a `Diagnostic` with file, line and column.

mod decode;
mod diag;
mod fsread;
mod hooks;
mod installs;
mod load;
pub use load::load;
mod policy;
mod reminders;
mod safety;
mod settings;
mod shape;
mod starter;
mod switch;
mod telemetry;
mod trust;
mod yaml;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::host::Host;

pub(crate) use diag::UNKNOWN_KEY;
pub use diag::{Diagnostic, Severity};
pub use hooks::{
    HookSpec, HooksConfig, DEFAULT_GRACE_SECS, DEFAULT_MAX_CONTINUES, DEFAULT_MAX_OUTPUT,
    DEFAULT_TIMEOUT_SECS,
};
pub use installs::{remember as remember_install, RECORD as INSTALLS_RECORD};
pub use policy::{Policy, PolicyLayer, SandboxLayer, SandboxPolicy, WalkLayer};
pub use reminders::{builtins as builtin_reminders, ReminderSpec, RemindersConfig, When};
pub use safety::user_policy;
pub use shape::SchemaFile;
pub use shape::{MAX_GRACE_SECS, MAX_MAX_OUTPUT, MAX_TIMEOUT_SECS};
pub use starter::{next_step, write_starter, Starter, StarterError, Wrote};
// The allow-list belongs to the gate, the shared words to `kinds`; here for loading's users.
pub use crate::gate::{AllowEntry, AllowLists};
pub use crate::kinds::{Mode, OnError, OnResult, Origin, Source, Trigger, UnknownMode};
pub use switch::{parse_bool, Switch};
pub use telemetry::{telemetry, Telemetry, TelemetrySetting};
// Reading a small file without blocking on a FIFO or a device (adapters read agents' files).
pub use crate::paths::PROJECT_FILES;
#[cfg(feature = "adapters")]
pub(crate) use fsread::read_head;
#[cfg(any(feature = "adapters", feature = "daemon"))]
pub(crate) use fsread::{read_regular, ReadError};
pub use trust::{
    fingerprint, project_code, still_matches, Fingerprint, ProjectTrust, TrustCause, TrustError,
    TrustRecord, TrustStore,
};
// What the fingerprint covers of each hook's code, for the review (`hookd trust`, `hookd check`).
pub use trust::Coverage;

/// The configuration could not be loaded; every diagnostic (errors and warnings) is included.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", render(.diagnostics))]
pub struct ConfigError {
    /// Errors first, in the order found, then warnings.
    pub diagnostics: Vec<Diagnostic>,
    /// The project's trust the configuration was loaded with, when it was known before the
    /// errors stopped loading.
    pub trust: Option<ProjectTrust>,
}

impl ConfigError {
    /// Only the errors.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    /// The `config_error` event of this error: its first error and every diagnostic.
    pub fn event(&self, cause: crate::kinds::ReloadCause) -> crate::events::ConfigError {
        let first = self.errors().next();
        crate::events::ConfigError {
            file: first.map(|d| d.file.clone()).unwrap_or_default(),
            line: first.map(|d| d.line).unwrap_or(0),
            message: first.map(|d| d.message.clone()).unwrap_or_default(),
            diagnostics: self.to_string(),
            cause,
            hook: None,
            session_id: None,
            fail_closed: None,
            project: None,
            trust: self.trust.as_ref().map(ProjectTrust::state),
            trust_pending: None,
        }
    }

    /// The error, with the project's trust it was loaded with.
    pub(crate) fn with_trust(mut self, trust: ProjectTrust) -> Self {
        self.trust = Some(trust);
        self
    }

    /// The error as printed for people: every diagnostic (the project's text escaped), then
    /// the count of errors.
    pub fn report(&self) -> String {
        let n = self.errors().count();
        format!(
            "{}\n\nhookd: the configuration has {n} error{}",
            crate::display::visible_lines(&self.to_string()),
            crate::display::plural(n)
        )
    }
}

fn render(diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Where to look, and the environment to honour. [`LoadOptions::from_host`] takes them from a
/// [`Host`] (the binary's: this process's).
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// `--config-dir DIR`: read only DIR.
    pub config_dir: Option<PathBuf>,
    /// The project (the agent's working directory); `.infer/` below it is read.
    pub project_dir: PathBuf,
    /// The user's home; `~/.infer/` is read. `None` skips it.
    pub home_dir: Option<PathBuf>,
    /// Environment variables (`INFER_*` and `HOOKD_*` ones matter).
    pub env: BTreeMap<String, String>,
    /// `--trust-project`: act on the project's `.infer/` without a trust record.
    pub trust_project: bool,
    /// Where trust records are kept (`None`: the project is never trusted by record).
    pub trust_file: Option<PathBuf>,
    /// Only the allow-lists are wanted (`hookd allow`): errors in hooks.yaml and
    /// reminders.yaml are warnings, so a broken hook file does not stop a gate question.
    pub allow_lists_only: bool,
    /// What the command line says about the policy (`--gate-shell-tools`, `--fail-closed`):
    /// like the environment, it can only tighten what the files set.
    pub flags: PolicyLayer,
    /// Places to protect besides those the variables name: values of place variables (`NAME`,
    /// path) that an adapter's scrub took away, which the agent may still use.
    pub also_places: Vec<(String, PathBuf)>,
    /// The process the configuration is for: its variables are the hooks' environment (before
    /// hookd removes what it removes), its `PATH` finds their programs, its `TMPDIR` is where
    /// confined commands write. `env` and `home_dir` are laid over it. Default: empty.
    pub host: Host,
}

impl LoadOptions {
    /// The project of the host's directory (its own `.infer/`, else the nearest one up to the
    /// repository root: see docs/configuration.md), its `$HOME` and its environment. An error
    /// when the host has no working directory.
    pub fn from_host(host: &Host, config_dir: Option<PathBuf>) -> std::io::Result<Self> {
        let home_dir = host.home();
        let Some(project_dir) = host.project() else {
            let why = "the host's working directory is gone or unreadable";
            return Err(std::io::Error::new(std::io::ErrorKind::NotFound, why));
        };
        Ok(LoadOptions {
            config_dir,
            project_dir,
            home_dir,
            env: host
                .vars()
                .filter_map(|(k, v)| {
                    Some((k.to_str()?.to_string(), v.to_string_lossy().into_owned()))
                })
                .filter(|(k, _)| {
                    k.starts_with("INFER_")
                        || k.starts_with("HOOKD_")
                        || crate::vars::has(k, crate::vars::Role::Place)
                })
                .collect(),
            trust_project: false,
            trust_file: None,
            allow_lists_only: false,
            flags: PolicyLayer::default(),
            also_places: Vec::new(),
            host: host.clone(),
        }
        .with_default_trust_file())
    }

    /// The host a loaded configuration keeps: [`LoadOptions::host`] with the options'
    /// variables and home laid over it.
    pub(crate) fn effective_host(&self) -> Host {
        let mut host = self.host.clone();
        for (k, v) in &self.env {
            host.set_var(k, v);
        }
        if let Some(home) = &self.home_dir {
            host.set_var("HOME", home);
        }
        host
    }

    /// A digest of what decides the configuration besides its files, the project and the
    /// variables ([`LoadOptions::input_vars`]): the home, `--config-dir`, `--trust-project`
    /// and a trust file other than the one the variables name. A daemon answers a client's
    /// dispatch only when both digests match and the client's variables agree
    /// ([`differing_var`]). (`--gate-shell-tools` travels on its own: a daemon whose
    /// configuration gates the shell tools, by flag or by hooks.yaml, answers a client that
    /// asks for the gate.)
    pub fn inputs(&self) -> String {
        use sha2::{Digest, Sha256};
        // The default trust file follows the variables, compared one by one.
        let own_trust_file = self.trust_file.as_ref().filter(|f| {
            TrustStore::default_path(&self.env, self.home_dir.as_deref()).as_ref() != Some(*f)
        });
        let text = serde_json::json!({
            "home": self.home_dir,
            "config_dir": self.config_dir,
            "trust_project": self.trust_project,
            "trust_file": own_trust_file,
        })
        .to_string();
        crate::display::hex(&Sha256::digest(text.as_bytes()))
    }

    /// The variables that decide what is loaded and those naming the places the gate
    /// protects, as this client has them: each name with a digest of its value. (Not `HOME`:
    /// [`LoadOptions::inputs`] has it; nor `HOOKD_SOCKET`, which names the daemon, which may
    /// have been given `--socket`; nor `HOOKD_EVENTS`: the daemon's hooks hold its own events
    /// file, the client's holds its.) An agent may strip some from its hooks (Gemini CLI in
    /// CI mode passes a handful): one the client lacks is unknown, and the daemon's value
    /// applies; the daemon protects the places at its values and at the defaults too.
    pub fn input_vars(&self) -> BTreeMap<String, String> {
        use crate::vars::{with, Role};
        use sha2::{Digest, Sha256};
        let places =
            with(Role::Place).filter(|k| !matches!(*k, "HOME" | "HOOKD_SOCKET" | "HOOKD_EVENTS"));
        with(Role::Config)
            .chain(places)
            .filter_map(|k| {
                let v = self.env.get(k)?;
                Some((
                    k.to_string(),
                    crate::display::hex(&Sha256::digest(v.as_bytes())),
                ))
            })
            .collect()
    }

    /// Use the default trust file (see [`TrustStore::default_path`]).
    pub fn with_default_trust_file(mut self) -> Self {
        self.trust_file = TrustStore::default_path(&self.env, self.home_dir.as_deref());
        self
    }
}

/// A loaded, valid configuration.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    /// The process the configuration is for, as loading saw it (see [`LoadOptions::host`]);
    /// empty for one built otherwise until [`crate::dispatch::EngineBuilder::host`] gives one.
    pub(crate) host: Host,
    /// Places protected besides those (see [`LoadOptions::also_places`]).
    pub(crate) also_places: Vec<(String, PathBuf)>,
    /// Where hookd's and the agents' files are (see [`Config::places`]): worked out once per
    /// host (it reads the user database and the install record), for the sandbox and the gate.
    pub(crate) places: std::sync::OnceLock<crate::gate::protect::Places>,
    /// `hooks.yaml`, with `INFER_HOOKS_ENABLED` applied.
    pub hooks: HooksConfig,
    /// The safety policy, resolved once from the user's file, a trusted project's, the
    /// environment and the command line (see [`Policy::resolve`]).
    pub policy: Policy,
    /// `reminders.yaml` (or `INFER_REMINDERS_CONFIG`), with `INFER_REMINDERS_ENABLED` applied.
    pub reminders: RemindersConfig,
    /// The bash allow-lists.
    pub allow: AllowLists,
    /// Warnings found while loading.
    pub warnings: Vec<Diagnostic>,
    /// The files and variables read, in reading order.
    pub sources: Vec<String>,
    /// The directory hooks run in.
    pub project_dir: PathBuf,
    /// `--config-dir DIR`, when the configuration was read from there alone.
    pub config_dir: Option<PathBuf>,
    /// The `config.yaml` a user should edit to allow a command.
    pub allow_file: String,
    /// The user's own `config.yaml` (or `--config-dir`'s), to allow a command of the user's
    /// own hooks; empty when it is [`Config::allow_file`].
    pub user_allow_file: String,
    /// Whether the project's `.infer/` may act.
    pub trust: ProjectTrust,
    /// The fingerprint of the project's configuration, when one was read.
    pub fingerprint: Option<Fingerprint>,
    /// Allow entries of an untrusted project, ignored.
    pub ignored_allow: Vec<AllowEntry>,
    /// How many reminders of an untrusted project were dropped.
    pub ignored_reminders: usize,
    /// Switches an untrusted project's hooks.yaml turns on (`gate_shell_tools`,
    /// `fail_closed`), ignored until it is trusted.
    pub ignored_switches: Vec<&'static str>,
}

impl Config {
    /// Where hookd's and the agents' files are for this configuration: the places its host
    /// names (relative ones taken from the host's directory; the user database's home when
    /// the host names none). Worked out on first use after the host was set, then kept.
    pub(crate) fn places(&self) -> &crate::gate::protect::Places {
        self.places.get_or_init(|| self.find_places())
    }

    /// [`Config::places`], worked out.
    fn find_places(&self) -> crate::gate::protect::Places {
        let config_dir = self.config_dir.as_deref();
        use crate::gate::protect::Places;
        // A host without a home (a configuration from text, an embedder's bare host) still
        // protects the user's: the one the user database names.
        let var = |k: &str| match (k, self.host.dir(k)) {
            ("HOME", None) => crate::paths::user_home(),
            // Where a client without the variable finds the daemon (`Host::socket`).
            ("XDG_RUNTIME_DIR", None) => crate::host::own_runtime_dir(),
            (_, v) => v,
        };
        let base = self.host.cwd().unwrap_or(Path::new("/")).to_path_buf();
        let mut places = Places::new(&self.project_dir, &self.sources, config_dir, var);
        for (name, path) in &self.also_places {
            let var = |k: &str| (k == name).then(|| path.clone());
            let mut extra = Places::new(&self.project_dir, &[], None, var);
            extra.base = base.clone();
            places.extra.push(extra);
        }
        // The user database's home is the user's too, whatever `HOME` says.
        if let Some(home) = crate::paths::user_home() {
            places.anchors.add_home(home);
        }
        // Where `hookd install --scope user` put hookd's hooks, whatever the variables say now.
        if let Some(home) = var("HOME") {
            places.installed = installs::recorded(&home);
        }
        places.base = base;
        places.walk = self.policy.sandbox.walk.clone();
        // Kept where the sandbox keeps its walks' (hookd's state, hidden from confined commands).
        places.walk_memory =
            crate::sandbox::state_dir(&self.policy.sandbox).map(|s| s.join("walks"));
        places
    }

    /// The process this configuration is for (see [`LoadOptions::host`]).
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// For the process `host`: the places it names are protected, the hooks' environment is
    /// made from its variables, and the sandbox keeps its home, temporary and state
    /// directories as it names them.
    pub fn set_host(&mut self, host: Host) {
        self.policy.sandbox.home = host.home();
        self.policy.sandbox.temp = Some(host.temp_dir());
        self.policy.sandbox.state = host.state_dir();
        self.policy.sandbox.runtime = host.dir("XDG_RUNTIME_DIR");
        self.policy.sandbox.named_sockets = (crate::sandbox::SOCKET_VARIABLES.iter())
            .filter_map(|name| host.var(name))
            .flat_map(hookd_sandbox::socket_paths)
            .collect();
        self.policy.sandbox.nested = host.var(crate::sandbox::AGENT_VAR).is_some();
        self.policy.sandbox.path = host.path().map(ToOwned::to_owned);
        self.host = host;
        self.places = Default::default();
        self.hold_places();
    }

    /// The sandbox's places from the catalog at this configuration's places (the gate's), so
    /// that the two hold the same ones.
    pub(crate) fn hold_places(&mut self) {
        use crate::places::sandbox_places;
        let places = self.places();
        let mut held = sandbox_places(&places.anchors, &places.runtime());
        for (dir, stem) in places.installed_prefixes() {
            held.prefixed
                .push((dir, stem, crate::places::Sandbox::ReadOnly));
        }
        for extra in &places.extra {
            held.extend(sandbox_places(&extra.anchors, &[]));
        }
        self.policy.sandbox.places = held;
    }

    /// The warnings as printed for people, one block each (the project's text escaped).
    pub fn warning_lines(&self) -> Vec<String> {
        self.warnings
            .iter()
            .map(|w| format!("{}\n", crate::display::visible_lines(&w.to_string())))
            .collect()
    }

    /// An empty configuration: hooks and reminders off, nothing allowed.
    pub fn empty(project_dir: impl Into<PathBuf>) -> Self {
        Config {
            hooks: HooksConfig::default(),
            policy: Policy::default(),
            reminders: RemindersConfig::default(),
            allow: AllowLists::default(),
            warnings: Vec::new(),
            sources: Vec::new(),
            project_dir: project_dir.into(),
            config_dir: None,
            allow_file: ".infer/config.yaml".into(),
            user_allow_file: String::new(),
            trust: ProjectTrust::NotApplicable,
            fingerprint: None,
            ignored_allow: Vec::new(),
            ignored_reminders: 0,
            ignored_switches: Vec::new(),
            host: Host::default(),
            also_places: Vec::new(),
            places: Default::default(),
        }
    }
}

/// The first variable a client sets to another value than the daemon (both as
/// [`LoadOptions::input_vars`] gives them), or sets where the daemon does not: such a client
/// is not answered. A variable the client lacks is not one (the daemon's value applies).
pub fn differing_var<'a>(
    client: &'a BTreeMap<String, String>,
    daemon: &BTreeMap<String, String>,
) -> Option<&'a str> {
    client
        .iter()
        .find(|(k, v)| daemon.get(*k) != Some(v))
        .map(|(k, _)| k.as_str())
}
