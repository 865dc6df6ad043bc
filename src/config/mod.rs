//! Configuration: the `.infer/` files found by the lookup rules, plus environment overrides,
//! validated into one `Config`. Every problem is a `Diagnostic` with file, line and column.

mod decode;
mod diag;
mod fsread;
mod hooks;
mod installs;
mod load;
mod policy;
mod reminders;
mod safety;
mod settings;
mod shape;
mod starter;
mod switch;
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
pub use policy::{Policy, PolicyLayer, SandboxLayer, SandboxPolicy};
pub use reminders::{builtins as builtin_reminders, ReminderSpec, RemindersConfig, When};
pub use safety::user_policy;
pub use shape::SchemaFile;
pub use shape::{MAX_GRACE_SECS, MAX_MAX_OUTPUT, MAX_TIMEOUT_SECS};
pub use starter::{next_step, write_starter, Starter, StarterError, Wrote};
// The allow-list belongs to the gate, the shared words to `kinds`; here for loading's users.
pub use crate::gate::{AllowEntry, AllowLists};
pub use crate::kinds::{Mode, OnError, OnResult, Origin, Source, Trigger, UnknownMode};
pub use switch::{parse_bool, Switch};
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

use decode::Decoder;

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

    /// A digest of what decides the configuration besides its files and the project: the
    /// home, `--config-dir`, the variables loading reads and those naming protected places
    /// (`CLAUDE_CONFIG_DIR`, `XDG_STATE_HOME`, …), and `--trust-project`. A daemon
    /// answers a client's dispatch only when both digests match. (`--gate-shell-tools` travels
    /// on its own: a daemon whose configuration gates the shell tools, by flag or by
    /// hooks.yaml, answers a client that asks for the gate.)
    pub fn inputs(&self) -> String {
        use sha2::{Digest, Sha256};
        // The variables that decide what is loaded, and those naming the places the gate
        // protects: a daemon protecting other places than this client's must not answer it.
        // (Not `HOOKD_SOCKET`: it names the daemon, which may have been given `--socket`; nor
        // `HOOKD_EVENTS`: the daemon's hooks hold its own events file, the client's holds its.)
        use crate::vars::{with, Role};
        let places =
            with(Role::Place).filter(|k| !matches!(*k, "HOME" | "HOOKD_SOCKET" | "HOOKD_EVENTS"));
        let env: BTreeMap<&str, &str> = with(Role::Config)
            .chain(places)
            .filter_map(|k| self.env.get(k).map(|v| (k, v.as_str())))
            .collect();
        let text = serde_json::json!({
            "home": self.home_dir,
            "config_dir": self.config_dir,
            "env": env,
            "trust_project": self.trust_project,
            "trust_file": self.trust_file,
        })
        .to_string();
        crate::display::hex(&Sha256::digest(text.as_bytes()))
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
        self.policy.sandbox.nested = host.var(crate::sandbox::AGENT_VAR).is_some();
        self.host = host;
        self.places = Default::default();
        self.hold_places();
    }

    /// The sandbox's places from the catalog at this configuration's places (the gate's), so
    /// that the two hold the same ones.
    pub(crate) fn hold_places(&mut self) {
        use crate::places::SandboxPlaces;
        let places = self.places();
        let mut held = SandboxPlaces::of(&places.anchors, &places.runtime());
        for (dir, stem) in places.installed_prefixes() {
            held.prefixed
                .push((dir, stem, crate::places::Sandbox::ReadOnly));
        }
        for extra in &places.extra {
            held.extend(SandboxPlaces::of(&extra.anchors, &[]));
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

    /// Parse configuration from texts, as a library user embedding hookd would: each is
    /// `(display name, YAML)`, read as the user's own layer (its `gate_shell_tools`,
    /// `fail_closed`, `max_continues`, `shell_tools` and `sandbox` apply as written). Nothing
    /// is read from disk or the environment: the configuration's [`Host`] is empty until
    /// [`crate::dispatch::EngineBuilder::host`] (or [`Config::set_host`]) gives one.
    pub fn from_yaml(
        project_dir: impl Into<PathBuf>,
        config_yaml: Option<(&str, &str)>,
        hooks_yaml: Option<(&str, &str)>,
        reminders_yaml: Option<(&str, &str)>,
    ) -> Result<Config, ConfigError> {
        let mut l = Loader::default();
        let mut lists: [Option<Vec<AllowEntry>>; 5] = Default::default();
        let mut allow_file = ".infer/config.yaml".to_string();
        // The texts are the user's own layer: their policy keys (`gate_shell_tools`,
        // `fail_closed`, `max_continues`, `shell_tools`, `sandbox`) apply as written.
        let mut sandbox = SandboxLayer::default();
        if let Some((name, text)) = config_yaml {
            allow_file = name.to_string();
            if let Some(fl) = l.source(name, text, Source::Embedded, settings::decode) {
                lists = fl.lists;
                sandbox = fl.sandbox;
            }
        }
        let hooks = hooks_yaml
            .and_then(|(n, t)| l.source(n, t, Source::Embedded, hooks::decode_file))
            .unwrap_or_default();
        let reminders = reminders_yaml
            .and_then(|(n, t)| l.source(n, t, Source::Embedded, reminders::decode))
            .unwrap_or_default();
        let mut config = l.finish(
            project_dir.into(),
            hooks.config,
            reminders,
            lists,
            allow_file,
        )?;
        let mut user = hooks.policy;
        user.sandbox = sandbox;
        config.policy = Policy::resolve(&user, &[]);
        config.hold_places();
        Ok(config)
    }
}

#[derive(Default)]
struct Loader {
    diags: Vec<Diagnostic>,
    sources: Vec<String>,
    /// Which of `diags` are about the project's own files: while it is untrusted they are
    /// reported as warnings, so a repository cannot make a dispatch fail (or an agent fail open).
    project_diags: Vec<usize>,
}

impl Loader {
    /// Read and decode `dir/file` if it exists (`None` if absent or unreadable).
    fn file<T: Default>(
        &mut self,
        dir: &Path,
        project: &Path,
        source: Source,
        file: &str,
        f: impl FnOnce(&mut Decoder<'_>, &yaml::Node) -> T,
    ) -> Option<T> {
        let path = dir.join(file);
        let name = display(&path, project);
        let first = self.diags.len();
        let out = self
            .read(&path, &name)
            .map(|text| self.source(&name, &text, source, f).unwrap_or_default());
        if source == Source::Project {
            self.project_diags.extend(first..self.diags.len());
        }
        out
    }

    fn source<T>(
        &mut self,
        name: &str,
        text: &str,
        source: Source,
        f: impl FnOnce(&mut Decoder<'_>, &yaml::Node) -> T,
    ) -> Option<T> {
        self.sources.push(name.to_string());
        let mut d = Decoder::new(name, text, source);
        let out = match yaml::parse(text, yaml::Limits::default()) {
            Ok(Some(root)) => Some(f(&mut d, &root)),
            Ok(None) => None,
            Err(e) => {
                d.error(e.pos, e.message, e.help);
                None
            }
        };
        self.diags.extend(d.diags);
        out
    }

    fn read(&mut self, path: &Path, name: &str) -> Option<String> {
        let limit = yaml::Limits::default().max_bytes as u64;
        let bytes = match fsread::read_regular(path, limit) {
            Ok(bytes) => bytes,
            Err(fsread::ReadError::NotFound) => return None,
            Err(e) => {
                let (message, help) = match e {
                    fsread::ReadError::NotRegular(_) => (
                        format!("cannot read the file: it {e}"),
                        "replace it with a regular file",
                    ),
                    fsread::ReadError::TooLarge { limit, size } => {
                        self.diags.push(Diagnostic {
                            severity: Severity::Error,
                            file: name.to_string(),
                            line: 1,
                            col: 1,
                            message: if size > limit {
                                format!("the file is {size} bytes; configuration files are limited to {limit} bytes")
                            } else {
                                format!("the file grew past {limit} bytes while it was read; configuration files are limited to {limit} bytes")
                            },
                            help: Some(
                                "keep hook configuration small; move long texts into scripts"
                                    .into(),
                            ),
                            snippet: None,
                        });
                        return None;
                    }
                    _ => (
                        format!("cannot read the file: {e}"),
                        "check its permissions",
                    ),
                };
                self.diags.push(Diagnostic::whole(
                    Severity::Error,
                    name,
                    message,
                    Some(help.into()),
                ));
                return None;
            }
        };
        match String::from_utf8(bytes) {
            Ok(s) => Some(s),
            Err(e) => {
                self.diags.push(Diagnostic::whole(
                    Severity::Error,
                    name,
                    format!(
                        "the file is not UTF-8 text (invalid byte at offset {})",
                        e.utf8_error().valid_up_to()
                    ),
                    Some("save it as UTF-8".into()),
                ));
                None
            }
        }
    }

    /// Errors from `first` on become warnings, saying why they do not count.
    fn demote(&mut self, first: usize, why: &str) {
        for d in &mut self.diags[first..] {
            if d.is_error() {
                d.severity = Severity::Warning;
                d.message = format!("{} (ignored: {why})", d.message);
            }
        }
    }

    fn env_bool(&mut self, env: &BTreeMap<String, String>, key: &str) -> Option<bool> {
        let v = env.get(key)?;
        match parse_bool(v) {
            Some(b) => Some(b),
            None => {
                self.diags.push(Diagnostic::whole(
                    Severity::Error,
                    key,
                    format!("`{v}` is not a boolean"),
                    Some("use true or false".into()),
                ));
                None
            }
        }
    }

    fn finish(
        mut self,
        project_dir: PathBuf,
        hooks: HooksConfig,
        reminders: RemindersConfig,
        lists: [Option<Vec<AllowEntry>>; 5],
        allow_file: String,
    ) -> Result<Config, ConfigError> {
        Diagnostic::sort(&mut self.diags);
        if self.diags.iter().any(|d| d.is_error()) {
            return Err(ConfigError {
                diagnostics: self.diags,
                trust: None,
            });
        }
        let allow = AllowLists::from_lists(lists.map(|l| l.unwrap_or_default()));
        Ok(Config {
            hooks,
            reminders,
            allow,
            warnings: self.diags,
            sources: self.sources,
            allow_file,
            ..Config::empty(project_dir)
        })
    }
}

/// `~` and `~/…` from `home` (left as written without one: it then names nothing).
fn expand_home(path: &Path, home: Option<&Path>) -> PathBuf {
    match (path.strip_prefix("~"), home) {
        (Ok(rest), Some(home)) => home.join(rest),
        _ => path.to_path_buf(),
    }
}

/// The project's (or else the user's) entry of a per-directory list.
fn take<T>(v: &mut Vec<(Source, T)>, project: bool) -> Option<T> {
    v.iter()
        .position(|(s, _)| (*s == Source::Project) == project)
        .map(|i| v.remove(i).1)
}

/// How a path is shown to the user: relative to the project when inside it.
fn display(path: &Path, project: &Path) -> String {
    path.strip_prefix(project)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

/// Load the configuration, then apply trust and layer the project over the user.
///
/// Without `config_dir`: the user's `~/.infer/` files always apply as written; the project's
/// `./.infer/` files add hooks, allow entries and reminders on top once the project is trusted
/// ([`ProjectTrust`]), and can only tighten settings (see docs/configuration.md). While it is
/// untrusted, its hooks are kept only to be reported as skipped, the rest of it is ignored, and
/// its errors are warnings. With `config_dir`, only that directory is read, as the user's layer.
pub fn load(opts: &LoadOptions) -> Result<Config, ConfigError> {
    load::load_dirs(Loader::default(), opts, layers(opts))
}

/// The directories loading reads, the user's layer first: `config_dir` alone; else
/// `~/.infer/` then the project's `.infer/` (only the first when they are the same directory:
/// working in the home directory, its `.infer/` is the user's own).
fn layers(opts: &LoadOptions) -> Vec<(PathBuf, Source)> {
    if let Some(dir) = &opts.config_dir {
        return vec![(dir.clone(), Source::ConfigDir)];
    }
    let same_dir = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    };
    let mut v = Vec::new();
    let project_infer = opts.project_dir.join(".infer");
    if let Some(home) = &opts.home_dir {
        let home_infer = home.join(".infer");
        if same_dir(&home_infer, &project_infer) {
            return vec![(home_infer, Source::Home)];
        }
        v.push((home_infer, Source::Home));
    }
    v.push((project_infer, Source::Project));
    v
}

impl LoadOptions {
    /// Every file whose change can change what [`load`] returns, present or not: each
    /// configuration file of each layer it reads, the trust records (trusting a project takes
    /// effect without a restart) and the record of user-scope installs (protected places). A
    /// daemon watches these to reload.
    pub fn watched_files(&self) -> Vec<PathBuf> {
        let home = self.home_dir.as_ref();
        layers(self)
            .iter()
            .flat_map(|(d, _)| PROJECT_FILES.iter().map(move |f| d.join(f)))
            .chain(self.trust_file.clone())
            .chain(home.map(|h| h.join(installs::RECORD)))
            .collect()
    }
}
