//! `hooks.yaml`: command hooks, each a command at a hook point with a timeout.

use std::time::Duration;

use serde::Serialize;

use super::decode::Decoder;
use super::shape::{MAX_GRACE_SECS, MAX_MAX_OUTPUT, MAX_TIMEOUT_SECS};
use super::yaml::Node;
use crate::catalog::HookPoint;
use crate::kinds::{Keep, OnError, OnResult, Origin, ON, ON_ERROR};

/// Seconds a hook may run when `timeout` is absent or 0.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;

/// Bytes of stdout and of stderr kept per run, unless `max_output` says otherwise.
pub const DEFAULT_MAX_OUTPUT: usize = 64 * 1024;
/// Seconds between SIGTERM and SIGKILL at a timeout, unless `grace` says otherwise.
pub const DEFAULT_GRACE_SECS: u64 = 2;

/// Tools whose `input.command` is a shell command, gated when `gate_shell_tools` is on:
/// Claude Code's and infer's `Bash`, Crush's `bash`, Gemini CLI's `run_shell_command`, `shell`.
pub const DEFAULT_SHELL_TOOLS: [&str; 4] = ["Bash", "bash", "run_shell_command", "shell"];

/// Consecutive `continue` replies honoured at `post_session`, unless `max_continues` says otherwise.
pub const DEFAULT_MAX_CONTINUES: u64 = 8;

/// One command hook as configured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HookSpec {
    /// Unique within the file.
    pub name: String,
    /// Where it attaches.
    pub hook: HookPoint,
    /// The command line, checked by the gate before anything runs.
    pub command: String,
    /// Wall-clock bound for the run.
    #[serde(serialize_with = "secs")]
    pub timeout: Duration,
    /// Bytes kept per output stream, when this hook overrides the file's `max_output`.
    pub max_output: Option<usize>,
    /// At tool points: a regular expression the whole tool name must match.
    pub matcher: Option<String>,
    /// At `post_tool`: run for successful, failed or all tool calls.
    pub on: OnResult,
    /// Also run for tool calls of sub-agents (context `is_sub_agent: true`).
    pub include_sub_agents: bool,
    /// What a failure of this hook means.
    pub on_error: OnError,
    /// Run concurrently with the other parallel hooks of its point.
    pub parallel: bool,
    /// Where it was written.
    pub origin: Origin,
    /// Where its `timeout:` is written (the hook's own line when it has none): a timed-out
    /// run names it, so the operator knows what to raise.
    pub timeout_at: Origin,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_secs())
}

/// The content of `hooks.yaml`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HooksConfig {
    /// The feature flag: off unless the file or `INFER_HOOKS_ENABLED` says so.
    pub enabled: bool,
    /// In config order.
    pub hooks: Vec<HookSpec>,
    /// Bytes kept per output stream (each of stdout and stderr).
    pub max_output: usize,
    /// SIGTERM-to-SIGKILL grace at a timeout.
    #[serde(serialize_with = "secs")]
    pub grace: Duration,
    /// The user's `env.keep`: variables hooks get although hookd would remove them.
    #[serde(skip_serializing_if = "Keep::is_empty")]
    pub env_keep: Keep,
    /// The project's `env.keep`, as written: applied only when the project is trusted (and
    /// shown by the trust review before).
    #[serde(skip_serializing_if = "Keep::is_empty")]
    pub project_env_keep: Keep,
    /// Files whose hooks are not run because hooks are off there, one sentence each: a
    /// dispatch says so rather than doing nothing silently.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub off: Vec<String>,
    /// How many hooks those files hold.
    #[serde(skip)]
    pub off_hooks: usize,
    /// The project's hooks that do not run because one of the user's has their name, one
    /// sentence each naming both: `hookd check --strict` fails on them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shadowed: Vec<String>,
}

impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig {
            enabled: false,
            hooks: Vec::new(),
            max_output: DEFAULT_MAX_OUTPUT,
            grace: Duration::from_secs(DEFAULT_GRACE_SECS),
            env_keep: Keep::default(),
            project_env_keep: Keep::default(),
            off: Vec::new(),
            off_hooks: 0,
            shadowed: Vec::new(),
        }
    }
}

/// `env: {keep: [NAME, PREFIX*, …]}`: the variables hooks get although hookd would remove them.
pub(super) fn env_keep(d: &mut Decoder<'_>, node: &Node) -> Keep {
    let mut names = Vec::new();
    let Some(f) = d.fields(node, "`env`", &["keep"]) else {
        return Keep::default();
    };
    let Some(list) = f.get("keep") else {
        return Keep::default();
    };
    for item in d.seq(list, "`env.keep`").unwrap_or_default() {
        let Some(name) = d.string(item, "a variable name") else {
            continue;
        };
        let stem = name.strip_suffix('*').unwrap_or(&name);
        let well_formed = !stem.is_empty()
            && !stem.starts_with(|c: char| c.is_ascii_digit())
            && stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !well_formed {
            d.error(
                item.pos,
                format!("`{name}` is not a variable name"),
                Some(
                    "name each variable (RUSTC_WRAPPER), or a prefix followed by * (GIT_CONFIG_*)"
                        .into(),
                ),
            );
        } else if let Some(steering) = crate::vars::named_by_pattern(&name) {
            d.error(
                item.pos,
                format!("`{name}` cannot be kept: {steering} steers hookd itself, names a place it protects, or is its secret"),
                Some("hookd never removes your own value of it and never hands a repository's to hooks; remove it from `env.keep`".into()),
            );
        } else if !names.contains(&name) {
            names.push(name);
        }
    }
    Keep::new(names)
}

/// Read a byte count in 1..=MAX_MAX_OUTPUT.
fn output_cap(d: &mut Decoder<'_>, node: &Node) -> Option<usize> {
    match d.int(node, "`max_output`")? {
        n if n < 1 || n as usize > MAX_MAX_OUTPUT => {
            d.error(
                node.pos,
                format!("max_output {n} is out of range"),
                Some(format!(
                    "use bytes from 1 to {MAX_MAX_OUTPUT} (default {DEFAULT_MAX_OUTPUT})"
                )),
            );
            None
        }
        n => Some(n as usize),
    }
}

/// One `hooks.yaml` as read, with what layering needs to know beyond its content.
#[derive(Clone, Debug, Default)]
pub(crate) struct HooksFile {
    pub(crate) config: HooksConfig,
    /// What the file says about the safety policy (`gate_shell_tools`, `fail_closed`,
    /// `max_continues`, `shell_tools`), merged with the other layers by `Policy::resolve`.
    pub(crate) policy: super::PolicyLayer,
}

/// Layer a project's `hooks.yaml` over the user's own (home, or `--config-dir`).
///
/// The user's file always applies as written: its `enabled` governs its hooks, its settings
/// stand. A project adds its hooks after the user's (governed by the project file's own
/// `enabled`; an untrusted project's are kept only to be reported as skipped). A project's
/// `max_output` applies to its own hooks; its `grace` is ignored. A project hook named like one
/// of the user's is dropped with a warning naming both (and listed in `shadowed`), so events
/// and state keep meaning one hook per name.
/// (The safety settings are layered by `Policy::resolve`.)
pub(crate) fn layer(
    user: HooksFile,
    project: Option<HooksFile>,
    warnings: &mut Vec<super::Diagnostic>,
) -> HooksConfig {
    let mut out = user.config;
    if !out.enabled {
        if let Some(note) = off_note(&out.hooks) {
            out.off.push(note);
            out.off_hooks += out.hooks.len();
        }
        out.hooks.clear();
    }
    let Some(project) = project else {
        return out;
    };
    let p = project.config;
    // Shown by the trust review either way; applied only when the project may act.
    out.project_env_keep = p.env_keep.clone();
    if !p.enabled {
        if let Some(note) = off_note(&p.hooks) {
            out.off.push(note);
            out.off_hooks += p.hooks.len();
        }
    }
    if p.enabled {
        out.enabled = true;
        for mut h in p.hooks {
            if let Some(user) = out.hooks.iter().find(|u| u.name == h.name) {
                let (name, yours) = (&h.name, &user.origin);
                out.shadowed.push(format!(
                    "hook `{name}` ({}) is shadowed by your own hook `{name}` ({yours}): the project's does not run",
                    h.origin
                ));
                warnings.push(super::Diagnostic {
                    severity: super::Severity::Warning,
                    file: h.origin.file.clone(),
                    line: h.origin.line,
                    col: 0,
                    message: format!(
                        "hook `{name}` has the name of your own hook at {yours}, which runs instead: the project's does not run"
                    ),
                    help: Some(format!(
                        "rename it in the project's hooks.yaml, or remove yours from {}",
                        yours.file
                    )),
                    snippet: None,
                });
                continue;
            }
            h.max_output.get_or_insert(p.max_output);
            out.hooks.push(h);
        }
    }
    out
}

/// The sentence for a file whose `hooks` are switched off (`None` when it has none).
fn off_note(hooks: &[HookSpec]) -> Option<String> {
    let first = hooks.first()?;
    let n = hooks.len();
    Some(format!(
        "hooks are off in {}: its {n} hook{} did not run; set `enabled: true` there (or INFER_HOOKS_ENABLED=true) to run {}",
        first.origin.file,
        if n == 1 { "" } else { "s" },
        if n == 1 { "it" } else { "them" },
    ))
}

/// The safety policy's keys of a hooks.yaml (`gate_shell_tools`, `fail_closed`, `shell_tools`,
/// `max_continues`), for `Policy::resolve` to merge with the other layers.
fn decode_policy(
    d: &mut Decoder<'_>,
    top: &super::decode::Fields<'_>,
    policy: &mut super::PolicyLayer,
) {
    if let Some(n) = top.get("gate_shell_tools") {
        policy.gate_shell_tools = d.bool(n, "`gate_shell_tools`");
    }
    if let Some(n) = top.get("fail_closed") {
        policy.fail_closed = d.bool(n, "`fail_closed`");
    }
    if let Some(n) = top.get("shell_tools") {
        for item in d.seq(n, "`shell_tools`").unwrap_or_default() {
            if let Some(name) = d.string(item, "a tool name") {
                if !policy.shell_tools.contains(&name) {
                    policy.shell_tools.push(name);
                }
            }
        }
    }
    if let Some(n) = top.get("max_continues") {
        match d.int(n, "`max_continues`") {
            Some(m) if (0..=super::shape::MAX_MAX_CONTINUES).contains(&m) => {
                policy.max_continues = Some(m as u64);
            }
            Some(m) => d.error(
                n.pos,
                format!("max_continues {m} is out of range"),
                Some("use 0 to 1000 (default 8)".into()),
            ),
            None => {}
        }
    }
}

pub(crate) fn decode_file(d: &mut Decoder<'_>, root: &Node) -> HooksFile {
    let mut file = HooksFile::default();
    let out = &mut file.config;
    let policy = &mut file.policy;
    let Some(top) = d.fields(root, "hooks.yaml", &super::shape::HOOKS_FILE.names()) else {
        return file;
    };
    if let Some(n) = top.get("env") {
        out.env_keep = env_keep(d, n);
    }
    let parallel = top
        .get("parallel")
        .and_then(|n| d.bool(n, "`parallel`"))
        .unwrap_or(false);
    decode_policy(d, &top, policy);
    if let Some(cap) = top.get("max_output").and_then(|n| output_cap(d, n)) {
        out.max_output = cap;
    }
    if let Some(n) = top.get("grace") {
        match d.int(n, "`grace`") {
            Some(g) if (0..=MAX_GRACE_SECS as i64).contains(&g) => {
                out.grace = Duration::from_secs(g as u64)
            }
            Some(g) => d.error(
                n.pos,
                format!("grace {g} is out of range"),
                Some(format!(
                    "use seconds from 0 to {MAX_GRACE_SECS} (default {DEFAULT_GRACE_SECS})"
                )),
            ),
            None => {}
        }
    }
    if let Some(n) = top.get("enabled") {
        out.enabled = d.bool(n, "`enabled`").unwrap_or(false);
    }
    let Some(list) = top.get("hooks") else {
        return file;
    };
    let Some(items) = d.seq(list, "`hooks`") else {
        return file;
    };
    let mut names = super::decode::NameSet::default();
    for item in items {
        let unique = names.check(
            d,
            item,
            "hook",
            "events and `hookd check` refer to hooks by name",
        );
        if let Some(spec) = decode_hook(d, item, parallel) {
            if unique {
                out.hooks.push(spec);
            }
        }
    }
    file
}

/// A hook's `timeout:` (absent or 0: the default); `None` after an error.
fn hook_timeout(d: &mut Decoder<'_>, node: Option<&Node>) -> Option<Duration> {
    let Some(n) = node else {
        return Some(Duration::from_secs(DEFAULT_TIMEOUT_SECS));
    };
    match d.int(n, "`timeout`") {
        Some(t) if t < 0 => {
            d.error(n.pos, format!("timeout is negative ({t})"), Some(format!("use seconds from 1 to {MAX_TIMEOUT_SECS}, or 0 for the default {DEFAULT_TIMEOUT_SECS}")));
            None
        }
        Some(0) => Some(Duration::from_secs(DEFAULT_TIMEOUT_SECS)),
        Some(t) if t as u64 > MAX_TIMEOUT_SECS => {
            d.error(
                n.pos,
                format!("timeout {t} is over the maximum of {MAX_TIMEOUT_SECS} seconds"),
                None,
            );
            None
        }
        Some(t) => Some(Duration::from_secs(t as u64)),
        None => None,
    }
}

/// A hook's `matcher:`: a regular expression the whole tool name must match, at tool points
/// only; `None` after an error.
fn hook_matcher(
    d: &mut Decoder<'_>,
    n: &Node,
    hook: Option<HookPoint>,
    tool_point: bool,
) -> Option<String> {
    let pattern = d.string(n, "`matcher`")?;
    if hook.is_some() && !tool_point {
        d.error(
            n.pos,
            "`matcher` selects tools, so it only works at `pre_tool` and `post_tool`".into(),
            None,
        );
        return None;
    }
    if let Err(e) = regex::Regex::new(&format!("^(?:{pattern})$")) {
        d.error(
            n.pos,
            format!("matcher `{pattern}` is not a valid regular expression"),
            Some(
                e.to_string()
                    .lines()
                    .last()
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
            ),
        );
        return None;
    }
    Some(pattern)
}

/// A hook's `name:`, required and not blank; `None` after an error.
fn hook_name(d: &mut Decoder<'_>, node: Option<&Node>, item: &Node) -> Option<String> {
    match node {
        Some(n) => d.string(n, "`name`").filter(|s| {
            let ok = !s.trim().is_empty();
            if !ok {
                d.error(n.pos, "hook name is empty".into(), None);
            }
            ok
        }),
        None => {
            d.error(
                item.pos,
                "hook is missing `name`".into(),
                Some("add `name: <unique name>`".into()),
            );
            None
        }
    }
}

/// A hook's `command:`, required and not blank; `None` after an error.
fn hook_command(d: &mut Decoder<'_>, node: Option<&Node>, item: &Node) -> Option<String> {
    match node {
        Some(n) => d.string(n, "`command`").filter(|s| {
            let ok = !s.trim().is_empty();
            if !ok {
                d.error(
                    n.pos,
                    "command is empty".into(),
                    Some("write the program and its arguments, e.g. `gofmt -w .`".into()),
                );
            }
            ok
        }),
        None => {
            d.error(item.pos, "hook is missing `command`".into(), None);
            None
        }
    }
}

/// A hook's `on:`, at `post_tool` only; `None` after an error.
fn hook_on(d: &mut Decoder<'_>, n: &Node, hook: Option<HookPoint>) -> Option<OnResult> {
    let on = d.one_of(n, "`on` value", &ON)?;
    if hook.is_some() && hook != Some(HookPoint::PostTool) {
        d.error(
            n.pos,
            "`on` filters finished tool calls, so it only works at `post_tool`".into(),
            None,
        );
        return None;
    }
    Some(on)
}

/// A hook's `on_error:`; `deny` only where a hook can deny or halt. `None` after an error.
fn hook_on_error(d: &mut Decoder<'_>, n: &Node, hook: Option<HookPoint>) -> Option<OnError> {
    let e = d.one_of(n, "`on_error` value", &ON_ERROR)?;
    if let Some(p) = hook {
        let caps = p.capabilities();
        if e == OnError::Deny && !caps.deny && !caps.halt {
            d.error(n.pos, format!("`on_error: deny` has no effect at `{p}`: a hook there can neither deny nor halt"), Some("use it at pre_session, pre_stream, pre_tool or post_tool".into()));
            return None;
        }
    }
    Some(e)
}

fn decode_hook(d: &mut Decoder<'_>, item: &Node, file_parallel: bool) -> Option<HookSpec> {
    let f = d.fields(item, "a hook", &super::shape::HOOK.names())?;
    let name = hook_name(d, f.get("name"), item);
    let hook = match f.get("hook") {
        Some(n) => d.hook_point(n),
        None => {
            d.error(
                item.pos,
                "hook is missing `hook` (the point it attaches to)".into(),
                Some(format!("valid points: {}", HookPoint::names_joined())),
            );
            None
        }
    };
    let command = hook_command(d, f.get("command"), item);
    let timeout_at = d.origin(f.get("timeout").map_or(item.pos.line, |n| n.pos.line));
    let timeout = hook_timeout(d, f.get("timeout"));
    let max_output = match f.get("max_output") {
        Some(n) => Some(output_cap(d, n)?),
        None => None,
    };
    let tool_point = matches!(hook, Some(HookPoint::PreTool | HookPoint::PostTool));
    let matcher = match f.get("matcher") {
        None => None,
        Some(n) => Some(hook_matcher(d, n, hook, tool_point)?),
    };
    let on = match f.get("on") {
        None => OnResult::Any,
        Some(n) => hook_on(d, n, hook)?,
    };
    let include_sub_agents = match f.get("include_sub_agents") {
        None => false,
        Some(n) => d.bool(n, "`include_sub_agents`")?,
    };
    let on_error = match f.get("on_error") {
        None => OnError::Ignore,
        Some(n) => hook_on_error(d, n, hook)?,
    };
    let parallel = match f.get("parallel") {
        None => file_parallel,
        Some(n) => d.bool(n, "`parallel`")?,
    };
    if let Some(n) = f.get("description") {
        d.string(n, "`description`")?;
    }
    Some(HookSpec {
        matcher,
        on,
        include_sub_agents,
        on_error,
        parallel,
        max_output,
        name: name?,
        hook: hook?,
        command: command?,
        timeout: timeout?,
        origin: d.origin(item.pos.line),
        timeout_at,
    })
}
