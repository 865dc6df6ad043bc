//! Configuration: the `.infer/` files found by the lookup rules, plus environment overrides,
//! validated into one `Config`. Every problem is a `Diagnostic` with file, line and column.

mod decode;
mod diag;
mod hooks;
mod reminders;
mod settings;
mod trust;
mod yaml;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use diag::{Diagnostic, Severity};
pub use hooks::{
    HookSpec, HooksConfig, OnError, OnResult, DEFAULT_GRACE_SECS, DEFAULT_MAX_CONTINUES,
    DEFAULT_MAX_OUTPUT, DEFAULT_TIMEOUT_SECS, MAX_GRACE_SECS, MAX_MAX_OUTPUT, MAX_TIMEOUT_SECS,
};
pub use reminders::{builtins as builtin_reminders, ReminderSpec, RemindersConfig, Trigger, When};
pub use settings::{AllowEntry, Mode, Origin, Source, UnknownMode};
pub use trust::{
    fingerprint, still_matches, Fingerprint, ProjectTrust, TrustError, TrustRecord, TrustStore,
    PROJECT_FILES,
};
// What the fingerprint covers of each hook's code, for the review (`hookd trust`, `hookd check`).
pub(crate) use trust::coverage;

use decode::Decoder;
use settings::LIST_KEYS;

/// The configuration could not be loaded; every diagnostic (errors and warnings) is included.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}", render(.diagnostics))]
pub struct ConfigError {
    /// Errors first, in the order found, then warnings.
    pub diagnostics: Vec<Diagnostic>,
}

impl ConfigError {
    /// Only the errors.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }
}

fn render(diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Where to look, and the environment to honour. `from_process` reads the real ones.
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
}

impl LoadOptions {
    /// The current directory, `$HOME` and the process environment.
    pub fn from_process(config_dir: Option<PathBuf>) -> std::io::Result<Self> {
        Ok(LoadOptions {
            config_dir,
            project_dir: std::env::current_dir()?,
            home_dir: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
            env: std::env::vars()
                .filter(|(k, _)| {
                    k.starts_with("INFER_") || k.starts_with("HOOKD_") || k == "XDG_CONFIG_HOME"
                })
                .collect(),
            trust_project: false,
            trust_file: None,
        }
        .with_default_trust_file())
    }

    /// Use the default trust file (see [`TrustStore::default_path`]).
    pub fn with_default_trust_file(mut self) -> Self {
        self.trust_file = TrustStore::default_path(&self.env, self.home_dir.as_deref());
        self
    }
}

/// The effective allow-lists, by list key (`all`, then each mode).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowLists {
    lists: [Vec<AllowEntry>; 5],
}

impl AllowLists {
    /// Build from entries (each names its list).
    pub fn from_entries(entries: impl IntoIterator<Item = AllowEntry>) -> Self {
        let mut out = AllowLists::default();
        for e in entries {
            if let Some(i) = LIST_KEYS.iter().position(|k| *k == e.list) {
                out.lists[i].push(e);
            }
        }
        out
    }

    /// The entries that apply in `mode`: `all` first, then the mode's own.
    pub fn for_mode(&self, mode: Mode) -> impl Iterator<Item = &AllowEntry> {
        let i = LIST_KEYS
            .iter()
            .position(|k| *k == mode.name())
            .unwrap_or(0);
        self.lists[0].iter().chain(self.lists[i].iter())
    }

    /// Every entry, in list order.
    pub fn all_entries(&self) -> impl Iterator<Item = &AllowEntry> {
        self.lists.iter().flatten()
    }
}

/// A loaded, valid configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// `hooks.yaml`, with `INFER_HOOKS_ENABLED` applied.
    pub hooks: HooksConfig,
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
    /// The `config.yaml` a user should edit to allow a command.
    pub allow_file: String,
    /// Whether the project's `.infer/` may act.
    pub trust: ProjectTrust,
    /// The fingerprint of the project's configuration, when one was read.
    pub fingerprint: Option<Fingerprint>,
    /// Allow entries of an untrusted project, ignored.
    pub ignored_allow: Vec<AllowEntry>,
    /// How many reminders of an untrusted project were dropped.
    pub ignored_reminders: usize,
}

impl Config {
    /// An empty configuration: hooks and reminders off, nothing allowed.
    pub fn empty(project_dir: impl Into<PathBuf>) -> Self {
        Config {
            hooks: HooksConfig::default(),
            reminders: RemindersConfig::default(),
            allow: AllowLists::default(),
            warnings: Vec::new(),
            sources: Vec::new(),
            project_dir: project_dir.into(),
            allow_file: ".infer/config.yaml".into(),
            trust: ProjectTrust::NotApplicable,
            fingerprint: None,
            ignored_allow: Vec::new(),
            ignored_reminders: 0,
        }
    }

    /// Parse configuration from texts, as a library user embedding hookd would: each is
    /// `(display name, YAML)`. Nothing is read from disk or the environment.
    pub fn from_yaml(
        project_dir: impl Into<PathBuf>,
        config_yaml: Option<(&str, &str)>,
        hooks_yaml: Option<(&str, &str)>,
        reminders_yaml: Option<(&str, &str)>,
    ) -> Result<Config, ConfigError> {
        let mut l = Loader::default();
        let mut lists: [Option<Vec<AllowEntry>>; 5] = Default::default();
        let mut allow_file = ".infer/config.yaml".to_string();
        if let Some((name, text)) = config_yaml {
            allow_file = name.to_string();
            if let Some(fl) = l.source(name, text, Source::Embedded, settings::decode) {
                lists = fl.lists;
            }
        }
        let hooks = hooks_yaml
            .and_then(|(n, t)| l.source(n, t, Source::Embedded, hooks::decode))
            .unwrap_or_default();
        let reminders = reminders_yaml
            .and_then(|(n, t)| l.source(n, t, Source::Embedded, reminders::decode))
            .unwrap_or_default();
        l.finish(project_dir.into(), hooks, reminders, lists, allow_file)
    }
}

#[derive(Default)]
struct Loader {
    diags: Vec<Diagnostic>,
    sources: Vec<String>,
}

impl Loader {
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
        match std::fs::read(path) {
            Ok(bytes) => match String::from_utf8(bytes) {
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
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                self.diags.push(Diagnostic::whole(
                    Severity::Error,
                    name,
                    format!("cannot read the file: {e}"),
                    Some("check its permissions".into()),
                ));
                None
            }
        }
    }

    fn env_bool(&mut self, env: &BTreeMap<String, String>, key: &str) -> Option<bool> {
        let v = env.get(key)?;
        match v.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Some(true),
            "0" | "false" | "no" | "off" | "" => Some(false),
            _ => {
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
        if self.diags.iter().any(|d| d.is_error()) {
            self.diags.sort_by_key(|d| !d.is_error());
            return Err(ConfigError {
                diagnostics: self.diags,
            });
        }
        let allow = AllowLists {
            lists: lists.map(|l| l.unwrap_or_default()),
        };
        Ok(Config {
            hooks,
            reminders,
            allow,
            warnings: self.diags,
            sources: self.sources,
            project_dir,
            allow_file,
            trust: ProjectTrust::NotApplicable,
            fingerprint: None,
            ignored_allow: Vec::new(),
            ignored_reminders: 0,
        })
    }
}

/// How a path is shown to the user: relative to the project when inside it.
fn display(path: &Path, project: &Path) -> String {
    path.strip_prefix(project)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

/// Load the configuration by the lookup rules of DESIGN.md, then apply trust.
///
/// Without `config_dir`: `config.yaml` from `~/.infer/` merged under `./.infer/` (a list the
/// project sets replaces the home one of the same key); `hooks.yaml` and `reminders.yaml` from
/// the project if present, else from home. With `config_dir`, only that directory is read.
/// What comes from the project's `.infer/` acts only when the project is trusted
/// ([`ProjectTrust`]): otherwise its allow entries and reminders are dropped and its hooks are
/// kept only to be reported as skipped.
pub fn load(opts: &LoadOptions) -> Result<Config, ConfigError> {
    let l = Loader::default();
    let project = &opts.project_dir;
    let same_dir = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    };
    let dirs: Vec<(PathBuf, Source)> = match &opts.config_dir {
        Some(dir) => vec![(dir.clone(), Source::ConfigDir)],
        None => {
            let mut v = Vec::new();
            let project_infer = project.join(".infer");
            if let Some(home) = &opts.home_dir {
                let home_infer = home.join(".infer");
                if same_dir(&home_infer, &project_infer) {
                    // Working in the home directory: its .infer/ is the user's own.
                    return load_dirs(l, opts, vec![(home_infer, Source::Home)]);
                }
                v.push((home_infer, Source::Home));
            }
            v.push((project_infer, Source::Project));
            v
        }
    };
    load_dirs(l, opts, dirs)
}

fn load_dirs(
    mut l: Loader,
    opts: &LoadOptions,
    dirs: Vec<(PathBuf, Source)>,
) -> Result<Config, ConfigError> {
    let project = &opts.project_dir;

    // config.yaml of each directory, kept apart until trust is known.
    let mut per_dir: Vec<(Source, settings::FileLists)> = Vec::new();
    for (dir, source) in &dirs {
        let path = dir.join("config.yaml");
        let name = display(&path, project);
        if let Some(text) = l.read(&path, &name) {
            if let Some(fl) = l.source(&name, &text, *source, settings::decode) {
                per_dir.push((*source, fl));
            }
        }
    }
    // The file a user should edit to allow a command: the project's if it has one, else home's.
    let allow_file = dirs
        .iter()
        .rev()
        .map(|(d, _)| d.join("config.yaml"))
        .find(|p| p.exists())
        .unwrap_or_else(|| dirs[dirs.len() - 1].0.join("config.yaml"));
    let allow_file = display(&allow_file, project);

    // hooks.yaml and reminders.yaml: the first directory (project first) that has the file.
    let first_with = |file: &str| {
        dirs.iter()
            .rev()
            .map(|(d, s)| (d.join(file), *s))
            .find(|(p, _)| p.exists())
    };
    let mut hooks = HooksConfig::default();
    if let Some((path, source)) = first_with("hooks.yaml") {
        let name = display(&path, project);
        if let Some(text) = l.read(&path, &name) {
            hooks = l
                .source(&name, &text, source, hooks::decode)
                .unwrap_or_default();
        }
    }
    let mut reminders = RemindersConfig::default();
    if let Some(inline) = opts
        .env
        .get("INFER_REMINDERS_CONFIG")
        .filter(|s| !s.trim().is_empty())
    {
        reminders = l
            .source(
                "$INFER_REMINDERS_CONFIG",
                inline,
                Source::Environment,
                reminders::decode,
            )
            .unwrap_or_default();
    } else if let Some((path, source)) = first_with("reminders.yaml") {
        let name = display(&path, project);
        if let Some(text) = l.read(&path, &name) {
            reminders = l
                .source(&name, &text, source, reminders::decode)
                .unwrap_or_default();
        }
    }

    // Environment overrides.
    if let Some(on) = l.env_bool(&opts.env, "INFER_HOOKS_ENABLED") {
        hooks.enabled = on;
        l.sources.push("$INFER_HOOKS_ENABLED".into());
    }
    if let Some(on) = l.env_bool(&opts.env, "HOOKD_GATE_SHELL_TOOLS") {
        hooks.gate_shell_tools |= on;
        l.sources.push("$HOOKD_GATE_SHELL_TOOLS".into());
    }
    if let Some(on) = l.env_bool(&opts.env, "INFER_REMINDERS_ENABLED") {
        reminders.enabled = on;
        l.sources.push("$INFER_REMINDERS_ENABLED".into());
    }
    let mut appended = Vec::new();
    if let Some(extra) = opts.env.get("INFER_TOOLS_BASH_ALLOW_APPEND") {
        let key = "INFER_TOOLS_BASH_ALLOW_APPEND";
        l.sources.push(format!("${key}"));
        for pattern in extra
            .split([',', '\n'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            if let Err(e) = crate::gate::validate_entry(pattern) {
                l.diags.push(Diagnostic::whole(
                    Severity::Error,
                    key,
                    format!("allow entry `{pattern}` is not a valid regular expression"),
                    Some(e.lines().last().unwrap_or_default().trim().to_string()),
                ));
                continue;
            }
            appended.push(AllowEntry {
                pattern: pattern.to_string(),
                list: "all",
                origin: Origin {
                    file: key.into(),
                    line: 0,
                    source: Source::Environment,
                },
            });
        }
    }
    let trust_flag = opts.trust_project
        || l.env_bool(&opts.env, "HOOKD_TRUST_PROJECT")
            .unwrap_or(false);
    if l.diags.iter().any(|d| d.is_error()) {
        return l.finish(
            project.clone(),
            hooks,
            reminders,
            Default::default(),
            allow_file,
        );
    }

    // Trust: only when something was read from the project.
    let from_project = per_dir.iter().any(|(s, _)| *s == Source::Project)
        || hooks
            .hooks
            .iter()
            .any(|h| h.origin.source == Source::Project)
        || reminders
            .reminders
            .iter()
            .any(|r| r.origin.source == Source::Project)
        || dirs.iter().any(|(d, s)| {
            *s == Source::Project && trust::PROJECT_FILES.iter().any(|f| d.join(f).exists())
        });
    let (trust, fingerprint) = if !from_project {
        (ProjectTrust::NotApplicable, None)
    } else {
        let argvs: Vec<Vec<String>> = hooks
            .hooks
            .iter()
            .filter(|h| h.origin.source == Source::Project)
            .filter_map(|h| crate::gate::argv_of(&h.command))
            .collect();
        let fp = trust::fingerprint(project, &argvs);
        let trust = if trust_flag {
            ProjectTrust::TrustedByFlag
        } else {
            let store = opts.trust_file.clone().map(TrustStore::new);
            match store.map(|s| s.get(project)) {
                Some(Ok(Some(rec))) if rec.sha256 == fp.sha256 => ProjectTrust::Trusted {
                    since: rec.trusted_at,
                },
                Some(Ok(Some(_))) => ProjectTrust::Untrusted { changed: true },
                Some(Ok(None)) | None => ProjectTrust::Untrusted { changed: false },
                Some(Err(e)) => {
                    l.diags.push(Diagnostic::whole(
                        Severity::Warning,
                        &e.path.display().to_string(),
                        e.message.clone(),
                        None,
                    ));
                    ProjectTrust::Untrusted { changed: false }
                }
            }
        };
        (trust, Some(fp))
    };
    let trusted = trust.allows_project();

    // Allow lists: home (or --config-dir) first; the project's replace per list when trusted.
    let mut lists: [Option<Vec<AllowEntry>>; 5] = Default::default();
    let mut ignored_allow = Vec::new();
    for (source, fl) in per_dir {
        if source == Source::Project && !trusted {
            ignored_allow.extend(fl.lists.into_iter().flatten().flatten());
            continue;
        }
        for (slot, list) in lists.iter_mut().zip(fl.lists) {
            if list.is_some() {
                *slot = list;
            }
        }
    }
    lists[0].get_or_insert_with(Vec::new).extend(appended);
    let before = reminders.reminders.len();
    if !trusted {
        reminders
            .reminders
            .retain(|r| r.origin.source != Source::Project);
    }
    let ignored_reminders = before - reminders.reminders.len();
    let mut config = l.finish(project.clone(), hooks, reminders, lists, allow_file)?;
    config.trust = trust;
    config.fingerprint = fingerprint;
    config.ignored_allow = ignored_allow;
    config.ignored_reminders = ignored_reminders;
    Ok(config)
}
