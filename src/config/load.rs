//! Loading proper: each layer's files read, the environment's overrides, the project's trust
//! decided, then the allow-lists, the policy, hooks and reminders layered (a project adds and
//! tightens, and only once trusted). The `Loader` beside it reads and decodes each file and
//! keeps the diagnostics; `Config::from_yaml` is the same for texts an embedder holds.

use super::decode::Decoder;
use super::hooks::{self, HooksFile};
use super::reminders::{self, RemindersConfig};
use super::{
    fsread, installs, parse_bool, settings, trust, yaml, AllowEntry, AllowLists, Config,
    ConfigError, Diagnostic, Fingerprint, HooksConfig, LoadOptions, Origin, Policy, PolicyLayer,
    ProjectTrust, SandboxLayer, Severity, Source, TrustStore, PROJECT_FILES,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each directory's files, kept apart until trust is known: the user's (home or
/// --config-dir) first, then the project's.
#[derive(Default)]
struct Files {
    settings: Vec<(Source, settings::FileLists)>,
    hooks: Vec<(Source, HooksFile)>,
    reminders: Vec<(Source, RemindersConfig)>,
}

/// The allow-lists by list, as layered.
type Lists = [Option<Vec<AllowEntry>>; 5];

fn load_dirs(
    mut l: Loader,
    opts: &LoadOptions,
    dirs: Vec<(PathBuf, Source)>,
) -> Result<Config, ConfigError> {
    let project = &opts.project_dir;
    let mut files = read_files(&mut l, opts, &dirs);
    let allow_file = allow_file(&dirs, project);
    let user_allow_file = user_allow_file(&dirs, project, &allow_file);
    let gate_env = env_overrides(&mut l, opts, &mut files);
    let project_hooks = take(&mut files.hooks, true);
    let user_hooks = take(&mut files.hooks, false).unwrap_or_default();
    let project_reminders = take(&mut files.reminders, true);
    let user_reminders = take(&mut files.reminders, false).unwrap_or_default();
    let appended = appended_entries(&mut l, opts);
    let by_flag = opts.trust_project || l.env_bool(&opts.env, "HOOKD_TRUST_PROJECT") == Some(true);
    let read_project =
        project_hooks.is_some() || project_reminders.is_some() || reads_project(&files, &dirs);
    let (trust, fingerprint) = project_trust(
        &mut l,
        opts,
        (&user_hooks, project_hooks.as_ref()),
        read_project,
        by_flag,
    );
    let trusted = trust.allows_project();
    if !trusted {
        demote_project(&mut l);
    }
    if l.diags.iter().any(|d| d.is_error()) {
        let (hooks, reminders) = (HooksConfig::default(), RemindersConfig::default());
        return l
            .finish(
                project.clone(),
                hooks,
                reminders,
                Lists::default(),
                allow_file,
            )
            .map_err(|e| e.with_trust(trust));
    }
    let (user_sandbox, project_sandbox) = sandboxes(&mut files, opts);
    let (lists, ignored_allow) = allow_lists(files.settings, trusted, appended);
    let env_layer = PolicyLayer {
        gate_shell_tools: gate_env,
        ..PolicyLayer::default()
    };
    let (policy, ignored_switches) = resolve_policy(
        opts,
        &env_layer,
        (&user_hooks, user_sandbox),
        (project_hooks.as_ref(), project_sandbox),
        trusted,
    );
    let mut layered = Vec::new();
    let hooks = hooks::layer(user_hooks, project_hooks, &mut layered);
    let (reminders, ignored_reminders) =
        reminders::layer(user_reminders, project_reminders, trusted, &mut layered);
    l.diags.extend(layered);
    let mut config = l
        .finish(project.clone(), hooks, reminders, lists, allow_file)
        .map_err(|e| e.with_trust(trust.clone()))?;
    config.user_allow_file = user_allow_file;
    config.policy = policy;
    config.trust = trust;
    config.fingerprint = fingerprint;
    config.config_dir = opts.config_dir.clone();
    config.also_places = opts.also_places.clone();
    config.set_host(opts.effective_host());
    tracing::debug!(target: "hookd::config", sources = ?config.sources, trust = ?config.trust, hooks = config.hooks.hooks.len(), reminders = config.reminders.reminders.len(), "configuration loaded");
    config.ignored_allow = ignored_allow;
    config.ignored_reminders = ignored_reminders;
    config.ignored_switches = ignored_switches;
    Ok(config)
}

/// The user's own allow file: for the user's hooks, whatever the project has (empty when it is
/// the allow file itself).
fn user_allow_file(dirs: &[(PathBuf, Source)], project: &Path, allow_file: &str) -> String {
    dirs.iter()
        .rev()
        .find(|(_, s)| *s != Source::Project)
        .map(|(d, _)| display(&d.join("config.yaml"), project))
        .filter(|f| *f != allow_file)
        .unwrap_or_default()
}

/// Whether the project's settings were read or one of its files is there.
fn reads_project(files: &Files, dirs: &[(PathBuf, Source)]) -> bool {
    files.settings.iter().any(|(s, _)| *s == Source::Project)
        || dirs
            .iter()
            .any(|(d, s)| *s == Source::Project && PROJECT_FILES.iter().any(|f| d.join(f).exists()))
}

/// Every directory's config.yaml, hooks.yaml and reminders.yaml (`$INFER_REMINDERS_CONFIG`
/// standing for the user's reminders.yaml).
fn read_files(l: &mut Loader, opts: &LoadOptions, dirs: &[(PathBuf, Source)]) -> Files {
    let project = &opts.project_dir;
    let mut files = Files::default();
    let inline_reminders = opts
        .env
        .get("INFER_REMINDERS_CONFIG")
        .filter(|s| !s.trim().is_empty());
    let only_allow = |l: &mut Loader, first: usize| {
        if opts.allow_lists_only {
            l.demote(first, "not needed for the allow-list");
        }
    };
    for (dir, source) in dirs {
        let source = *source;
        if let Some(fl) = l.file(dir, project, source, "config.yaml", settings::decode) {
            files.settings.push((source, fl));
        }
        let first = l.diags.len();
        if let Some(f) = l.file(dir, project, source, "hooks.yaml", hooks::decode_file) {
            files.hooks.push((source, f));
        }
        only_allow(l, first);
        if inline_reminders.is_some() && source != Source::Project {
            continue;
        }
        let first = l.diags.len();
        if let Some(r) = l.file(dir, project, source, "reminders.yaml", reminders::decode) {
            files.reminders.push((source, r));
        }
        only_allow(l, first);
    }
    if let Some(inline) = inline_reminders {
        let name = "$INFER_REMINDERS_CONFIG";
        let r = l.source(name, inline, Source::Environment, reminders::decode);
        files
            .reminders
            .insert(0, (Source::Environment, r.unwrap_or_default()));
    }
    files
}

/// The file a user should edit to allow a command: the project's if it has one, else home's.
fn allow_file(dirs: &[(PathBuf, Source)], project: &std::path::Path) -> String {
    let allow_file = dirs
        .iter()
        .rev()
        .map(|(d, _)| d.join("config.yaml"))
        .find(|p| p.exists())
        .unwrap_or_else(|| dirs[dirs.len() - 1].0.join("config.yaml"));
    display(&allow_file, project)
}

/// The environment's switches, the user's, so they apply to every file; returns
/// `HOOKD_GATE_SHELL_TOOLS` for the policy's environment layer.
fn env_overrides(l: &mut Loader, opts: &LoadOptions, files: &mut Files) -> Option<bool> {
    if let Some(on) = l.env_bool(&opts.env, "INFER_HOOKS_ENABLED") {
        for (_, f) in &mut files.hooks {
            f.config.enabled = on;
        }
        l.sources.push("$INFER_HOOKS_ENABLED".into());
    }
    let gate_env = l.env_bool(&opts.env, "HOOKD_GATE_SHELL_TOOLS");
    if gate_env.is_some() {
        l.sources.push("$HOOKD_GATE_SHELL_TOOLS".into());
    }
    if let Some(on) = l.env_bool(&opts.env, "INFER_REMINDERS_ENABLED") {
        for (_, r) in &mut files.reminders {
            r.enabled = on;
        }
        l.sources.push("$INFER_REMINDERS_ENABLED".into());
    }
    gate_env
}

/// `$INFER_TOOLS_BASH_ALLOW_APPEND`: entries for every mode, each checked.
fn appended_entries(l: &mut Loader, opts: &LoadOptions) -> Vec<AllowEntry> {
    let key = "INFER_TOOLS_BASH_ALLOW_APPEND";
    let Some(extra) = opts.env.get(key) else {
        return Vec::new();
    };
    l.sources.push(format!("${key}"));
    let mut appended = Vec::new();
    let patterns = extra.split([',', '\n']).map(str::trim);
    for pattern in patterns.filter(|s| !s.is_empty()) {
        if let Err(e) = crate::gate::validate_entry(pattern) {
            l.diags.push(Diagnostic::whole(
                Severity::Error,
                key,
                format!("allow entry `{pattern}` is not a valid regular expression"),
                Some(e.what()),
            ));
            continue;
        }
        appended.push(AllowEntry {
            pattern: pattern.to_string(),
            list: crate::kinds::Mode::All,
            origin: Origin {
                file: key.into(),
                line: 0,
                source: Source::Environment,
            },
        });
    }
    appended
}

/// The project's trust and fingerprint: only when something was read from the project
/// (`read_project`, or diagnostics about its files), or the user's hooks run its code.
fn project_trust(
    l: &mut Loader,
    opts: &LoadOptions,
    (user_hooks, project_hooks): (&HooksFile, Option<&HooksFile>),
    read_project: bool,
    by_flag: bool,
) -> (ProjectTrust, Option<Fingerprint>) {
    let project = &opts.project_dir;
    // The user's own hooks that run the project's code (`./fmt.sh`, `sh scripts/lint.sh`):
    // that code is the project's, so the project's trust decides, and covers those files.
    let path = opts.host.path();
    let user_code: Vec<Vec<String>> = match user_hooks.config.enabled {
        true => user_hooks
            .config
            .hooks
            .iter()
            .filter_map(|h| crate::gate::argv_of(&h.command))
            .filter(|argv| !trust::project_code(project, argv, path).is_empty())
            .collect(),
        false => Vec::new(),
    };
    if user_code.is_empty() && !read_project && l.project_diags.is_empty() {
        return (ProjectTrust::NotApplicable, None);
    }
    let mut argvs: Vec<Vec<String>> = project_hooks
        .iter()
        .flat_map(|f| &f.config.hooks)
        .filter_map(|h| crate::gate::argv_of(&h.command))
        .collect();
    argvs.extend(user_code);
    let fp = trust::fingerprint(project, &argvs);
    let trust = if by_flag {
        ProjectTrust::TrustedByFlag
    } else {
        recorded_trust(l, opts, &fp)
    };
    (trust, Some(fp))
}

/// The project's errors as warnings while it is untrusted: reported, never fatal, so a
/// repository cannot make hookd fail.
fn demote_project(l: &mut Loader) {
    for &i in &l.project_diags {
        let d = &mut l.diags[i];
        if d.is_error() {
            d.severity = Severity::Warning;
            d.message = format!("{} (ignored: this project is not trusted)", d.message);
        }
    }
}

/// What the trust store says of the project at fingerprint `fp`.
fn recorded_trust(l: &mut Loader, opts: &LoadOptions, fp: &Fingerprint) -> ProjectTrust {
    let store = opts.trust_file.clone().map(TrustStore::new);
    match store.map(|s| s.get(&opts.project_dir)) {
        Some(Ok(Some(rec))) if rec.sha256 == fp.sha256 => ProjectTrust::Trusted {
            since: rec.trusted_at,
        },
        Some(Ok(Some(_))) => ProjectTrust::Untrusted { changed: true },
        Some(Ok(None)) | None => ProjectTrust::Untrusted { changed: false },
        Some(Err(e)) => {
            l.diags.push(Diagnostic::whole(
                Severity::Warning,
                &e.path.display().to_string(),
                e.cause.to_string(),
                None,
            ));
            ProjectTrust::Untrusted { changed: false }
        }
    }
}

/// The sandbox's say of the user's and the project's config.yaml, `~/` read as the home.
fn sandboxes(files: &mut Files, opts: &LoadOptions) -> (SandboxLayer, SandboxLayer) {
    let mut sandbox_of = |project: bool| -> SandboxLayer {
        let mut layer = files
            .settings
            .iter_mut()
            .find(|(s, _)| (*s == Source::Project) == project)
            .map(|(_, fl)| std::mem::take(&mut fl.sandbox))
            .unwrap_or_default();
        let lists = layer.write.iter_mut().chain(layer.read_deny.iter_mut());
        for p in lists.chain(layer.unix_sockets.iter_mut()) {
            *p = expand_home(p, opts.home_dir.as_deref());
        }
        layer
    };
    (sandbox_of(false), sandbox_of(true))
}

/// The allow-lists: the user's always; a trusted project's entries after them (an untrusted
/// one's are returned apart, to be reported); `appended` in the shared list.
fn allow_lists(
    settings: Vec<(Source, settings::FileLists)>,
    trusted: bool,
    appended: Vec<AllowEntry>,
) -> (Lists, Vec<AllowEntry>) {
    let mut lists = Lists::default();
    let mut ignored = Vec::new();
    for (source, fl) in settings {
        if source == Source::Project && !trusted {
            ignored.extend(fl.lists.into_iter().flatten().flatten());
            continue;
        }
        for (slot, list) in lists.iter_mut().zip(fl.lists) {
            if let Some(list) = list {
                slot.get_or_insert_with(Vec::new).extend(list);
            }
        }
    }
    lists[0].get_or_insert_with(Vec::new).extend(appended);
    (lists, ignored)
}

/// The policy: the user's file, then what may only tighten it (a trusted project, the
/// environment, the command line); and what an untrusted project's file would switch on.
fn resolve_policy(
    opts: &LoadOptions,
    env_layer: &PolicyLayer,
    (user_hooks, user_sandbox): (&HooksFile, SandboxLayer),
    (project_hooks, project_sandbox): (Option<&HooksFile>, SandboxLayer),
    trusted: bool,
) -> (Policy, Vec<&'static str>) {
    let mut user = user_hooks.policy.clone();
    user.sandbox = user_sandbox;
    let project =
        (project_hooks.is_some() || project_sandbox != SandboxLayer::default()).then(|| {
            let mut p = project_hooks.map(|p| p.policy.clone()).unwrap_or_default();
            p.sandbox = project_sandbox;
            p
        });
    let policy = match project.as_ref().filter(|_| trusted) {
        Some(project) => Policy::resolve(&user, &[project, env_layer, &opts.flags]),
        None => Policy::resolve(&user, &[env_layer, &opts.flags]),
    };
    let ignored = project
        .filter(|_| !trusted)
        .map(|p| p.switches_on())
        .unwrap_or_default();
    (policy, ignored)
}

impl Config {
    /// Parse configuration from texts, as a library user embedding hookd would: each is
    /// `(display name, YAML)`, read as the user's own layer (its `gate_shell_tools`,
    /// `fail_closed`, `max_continues`, `shell_tools` and `sandbox` apply as written). Nothing
    /// is read from disk or the environment: the configuration's [`Host`](crate::host::Host) is empty until
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
pub(super) struct Loader {
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

    pub(super) fn source<T>(
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

    pub(super) fn read(&mut self, path: &Path, name: &str) -> Option<String> {
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
    load_dirs(Loader::default(), opts, layers(opts))
}

/// The directories loading reads, the user's layer first: `config_dir` alone; else
/// `~/.infer/` then the project's `.infer/` (only the first when they are the same directory:
/// working in the home directory, its `.infer/` is the user's own).
pub(super) fn layers(opts: &LoadOptions) -> Vec<(PathBuf, Source)> {
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
