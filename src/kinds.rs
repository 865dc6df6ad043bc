//! The words every layer shares, so that none has to depend on another for them: the agent's
//! [`Mode`], why a command was refused ([`DenyReason`]), when a reminder fires ([`Trigger`]),
//! who wrote a piece of configuration ([`Source`], [`Origin`]), why a variable was kept
//! from a hook ([`RemovedVar`]), the names a hook keeps ([`Keep`]) and when a hook runs and
//! what its failure means ([`OnResult`], [`OnError`]). A leaf: it depends on the catalog of
//! points only.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::catalog::HookPoint;

/// The agent mode a dispatch runs in; it selects the allow-list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Per-call approvals; the default.
    #[default]
    Standard,
    /// Read-only planning.
    Plan,
    /// Approvals bypassed.
    Auto,
    /// Read-only sub-agents.
    Readonly,
    /// The shared list alone (`tools.bash.mode.all`): what infer gives a mode that is not one
    /// of the four above, and what `--mode all` asks for.
    All,
}

impl Mode {
    /// Every mode.
    pub const ALL: [Mode; 5] = [
        Mode::Standard,
        Mode::Plan,
        Mode::Auto,
        Mode::Readonly,
        Mode::All,
    ];

    /// The key used in `config.yaml` and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Standard => "standard",
            Mode::Plan => "plan",
            Mode::Auto => "auto",
            Mode::Readonly => "readonly",
            Mode::All => "all",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A mode name that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode `{given}`{}; valid modes: standard, plan, auto, readonly, all", suggestion.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
pub struct UnknownMode {
    /// What was written.
    pub given: String,
    /// The nearest valid mode.
    pub suggestion: Option<&'static str>,
}

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMode {
                given: s.to_string(),
                suggestion: crate::suggest::closest(s, Mode::ALL.iter().map(|m| m.name())),
            })
    }
}

/// The lists under `tools.bash.mode`, in their order: `all` applies to every mode, then one
/// per mode (a list is named by the mode it is for).
pub(crate) const LISTS: [Mode; 5] = [
    Mode::All,
    Mode::Standard,
    Mode::Plan,
    Mode::Auto,
    Mode::Readonly,
];

/// Who wrote a piece of configuration: everything is trusted except the project's own `.infer/`
/// (the repository the agent works in), until the user trusts it (`hookd trust`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Source {
    /// Compiled into hookd.
    BuiltIn,
    /// The user's `~/.infer/`.
    Home,
    /// The project's `.infer/`: untrusted until trusted.
    Project,
    /// A directory named with `--config-dir` by whoever runs hookd.
    ConfigDir,
    /// An environment variable of whoever runs hookd.
    Environment,
    /// Text handed to the library by the program embedding it.
    Embedded,
}

/// Where a hook, reminder or allow entry was written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// The file or environment variable.
    pub file: String,
    /// 1-based line, 0 for an environment variable.
    pub line: usize,
    /// Who wrote it.
    pub source: Source,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.file)
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// When a reminder fires, among the firings of its hook point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Trigger {
    /// Every time the point fires.
    Always,
    /// On every `interval`-th turn of the session.
    Interval,
    /// The first time the point fires in a session.
    Once,
    /// Once, from turn `threshold` on.
    OnceAfter,
    /// Once, when `max_turns - turn <= threshold`.
    TurnsBeforeMax,
    /// After a tool call that failed (`post_tool`).
    OnFailure,
    /// After the same tool call failed `threshold` times in a row (`post_tool`).
    OnRepeatedFailure,
    /// When the mode differs from the previous model request (`pre_stream`).
    OnModeChange,
    /// When the model's response was cut by the token limit (`post_stream`).
    OnTruncation,
    /// When open todos remain and the response had no tool calls (`post_stream`).
    OnStalledTodos,
}

impl Trigger {
    /// Every trigger, in documentation order.
    pub const ALL: [Trigger; 10] = [
        Trigger::Always,
        Trigger::Interval,
        Trigger::Once,
        Trigger::OnceAfter,
        Trigger::TurnsBeforeMax,
        Trigger::OnFailure,
        Trigger::OnRepeatedFailure,
        Trigger::OnModeChange,
        Trigger::OnTruncation,
        Trigger::OnStalledTodos,
    ];

    /// The name used in YAML.
    pub const fn name(self) -> &'static str {
        match self {
            Trigger::Always => "always",
            Trigger::Interval => "interval",
            Trigger::Once => "once",
            Trigger::OnceAfter => "once_after",
            Trigger::TurnsBeforeMax => "turns_before_max",
            Trigger::OnFailure => "on_failure",
            Trigger::OnRepeatedFailure => "on_repeated_failure",
            Trigger::OnModeChange => "on_mode_change",
            Trigger::OnTruncation => "on_truncation",
            Trigger::OnStalledTodos => "on_stalled_todos",
        }
    }

    /// The only point where the trigger can ever fire, if it is tied to one.
    pub const fn required_point(self) -> Option<HookPoint> {
        match self {
            Trigger::OnFailure | Trigger::OnRepeatedFailure => Some(HookPoint::PostTool),
            Trigger::OnModeChange => Some(HookPoint::PreStream),
            Trigger::OnTruncation | Trigger::OnStalledTodos => Some(HookPoint::PostStream),
            _ => None,
        }
    }
}

impl fmt::Display for Trigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a command was denied. Serialized as the `reason` of `hook_command_skipped` events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DenyReason {
    /// A plain command that no allow entry admits.
    #[serde(rename = "not_allowlisted")]
    NotAllowlisted,
    /// `;`, `&&`, `||`, `|`, `&`, or a newline outside quotes.
    Operator,
    /// `$( )`, backticks, `<( )`, `$(( ))`, `$[ ]`.
    Substitution,
    /// `$VAR`, `${…}`, `$'…'`, `$"…"`, `~`.
    Expansion,
    /// Unquoted `*`, `?`, `[`, or brace expansion.
    Glob,
    /// A redirection other than the harmless output ones.
    Redirection,
    /// Here-documents and here-strings.
    Heredoc,
    /// Subshells, groups, loops, conditionals, functions.
    Compound,
    /// `VAR=value cmd`.
    Assignment,
    /// A shell builtin or keyword as the program.
    Builtin,
    /// `#` outside quotes.
    Comment,
    /// A control, format (Unicode Cf) or invisible character.
    ControlCharacter,
    /// A quote that is never closed.
    UnbalancedQuotes,
    /// Longer than `MAX_COMMAND_BYTES`.
    TooLong,
    /// Nothing to run.
    Empty,
    /// An option or program text that runs another program, or writes or reads a file the
    /// command does not name (`find -exec`, `tar --to-command`, `sed e`), under an entry that
    /// does not name it.
    DangerousArgument,
    /// Anything the gate does not fully understand.
    Unparsable,
    /// A tool call of the model would write, or a command it proposed names, one of hookd's
    /// own files (configuration, trust store, state, installed agent settings).
    ProtectedPath,
    /// The repository's agent files set a variable that makes the agent's shell or the loader
    /// run code before hookd can gate or confine the model's shell call (`BASH_ENV`, …).
    AgentStartup,
}

impl DenyReason {
    /// The snake_case name used in events and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            DenyReason::NotAllowlisted => "not_allowlisted",
            DenyReason::Operator => "operator",
            DenyReason::Substitution => "substitution",
            DenyReason::Expansion => "expansion",
            DenyReason::Glob => "glob",
            DenyReason::Redirection => "redirection",
            DenyReason::Heredoc => "heredoc",
            DenyReason::Compound => "compound",
            DenyReason::Assignment => "assignment",
            DenyReason::Builtin => "builtin",
            DenyReason::Comment => "comment",
            DenyReason::ControlCharacter => "control_character",
            DenyReason::UnbalancedQuotes => "unbalanced_quotes",
            DenyReason::TooLong => "too_long",
            DenyReason::Empty => "empty",
            DenyReason::DangerousArgument => "dangerous_argument",
            DenyReason::Unparsable => "unparsable",
            DenyReason::ProtectedPath => "protected_path",
            DenyReason::AgentStartup => "agent_startup",
        }
    }

    /// The sentence that tells a user what to do instead.
    pub(crate) fn advice(self) -> &'static str {
        match self {
            DenyReason::NotAllowlisted => "",
            DenyReason::Operator => "hookd runs a hook command itself, without a shell: exactly one simple command; put a pipeline or a sequence in a script and allow the script by its exact path (the model's own shell commands may chain allowed commands: `hookd allow --model`)",
            DenyReason::Substitution => "nothing is substituted before a command runs; put the logic in a script and allow the script by its exact path",
            DenyReason::Expansion => "variables and `~` are not expanded; write the value literally, or single-quote a literal `$`",
            DenyReason::Glob => "patterns are not expanded; quote the argument to pass it literally, or list the files",
            DenyReason::Redirection => "output is captured for the event anyway; only `2>&1`, `>/dev/null`, `2>/dev/null` and `&>/dev/null` are accepted (and dropped)",
            DenyReason::Heredoc => "here-documents need a shell; pass the text as an argument or put it in a script",
            DenyReason::Compound => "put the logic in a script and allow the script by its exact path",
            DenyReason::Assignment => "environment prefixes are not applied; set the variable in a script, or in the environment hookd runs in",
            DenyReason::Builtin => "hookd executes programs directly, so shell builtins do not exist; use a program or a script",
            DenyReason::Comment => "remove the comment, or quote the `#`",
            DenyReason::ControlCharacter => "remove the character; control, format and invisible characters are never accepted, so what is reviewed is what runs",
            DenyReason::UnbalancedQuotes => "close the quote",
            DenyReason::TooLong => "put the command in a script and allow the script",
            DenyReason::Empty => "write the program and its arguments",
            DenyReason::DangerousArgument => "options and program text that run other programs or write files their words do not name (`find -exec`, `tar --to-command`, `sed e`, `awk system`) are admitted only by an entry that names the option, or that allows this exact command",
            DenyReason::Unparsable => "simplify the command to one program with plain or quoted arguments",
            DenyReason::ProtectedPath => "with gate_shell_tools on, the model may not write or name hookd's configuration, trust store, state or the agents' hook settings; edit the file yourself, outside the agent",
            DenyReason::AgentStartup => "remove the variable from the repository's agent settings (`hookd check` names each file and variable), then start a new session: no allow entry lifts this",
        }
    }
}

impl fmt::Display for DenyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a command hook was not run: the gate refused its command, or hookd never asked the gate.
/// Serialized as one snake_case name (`not_allowlisted`, …, `untrusted`, `internal`): the
/// `reason` of `hook_command_skipped` events and of the Outcome's skipped commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SkipReason {
    /// The gate's verdict on the command.
    Denied(DenyReason),
    /// The hook comes from a project whose `.infer/` is not trusted (or changed since): its
    /// command was not even looked at.
    Untrusted,
    /// hookd failed while running it (its runner thread panicked): a bug, reported as one.
    Internal,
    /// The sandbox is on and this kernel cannot confine the command: it did not run.
    SandboxUnavailable,
}

impl SkipReason {
    /// The reasons that are not the gate's verdict.
    pub const NOT_THE_GATES: [SkipReason; 3] = [
        SkipReason::Untrusted,
        SkipReason::Internal,
        SkipReason::SandboxUnavailable,
    ];

    /// The snake_case name used in events, JSON and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Denied(r) => r.as_str(),
            SkipReason::Untrusted => "untrusted",
            SkipReason::Internal => "internal",
            SkipReason::SandboxUnavailable => "sandbox_unavailable",
        }
    }
}

impl From<DenyReason> for SkipReason {
    fn from(r: DenyReason) -> Self {
        SkipReason::Denied(r)
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for SkipReason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for SkipReason {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "SkipReason".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        // The gate's reasons, and those that are not the gate's.
        let gate = generator.subschema_for::<DenyReason>();
        let own: Vec<&str> = SkipReason::NOT_THE_GATES.map(|r| r.as_str()).to_vec();
        schemars::json_schema!({
            "anyOf": [gate, {"enum": own}]
        })
    }
}

impl<'de> Deserialize<'de> for SkipReason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        if let Some(own) = SkipReason::NOT_THE_GATES
            .into_iter()
            .find(|r| r.as_str() == name)
        {
            return Ok(own);
        }
        Ok(SkipReason::Denied(DenyReason::deserialize(
            serde::de::value::StrDeserializer::<D::Error>::new(&name),
        )?))
    }
}

/// Which finished tool calls a `post_tool` hook runs for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OnResult {
    /// Every tool call.
    #[default]
    Any,
    /// Only those that succeeded.
    Success,
    /// Only those that failed.
    Failure,
}

/// What a hook that fails (non-zero exit other than 2, timeout, unreadable reply, not started,
/// refused by the gate) means for the decision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OnError {
    /// Nothing: the failure is reported, no decision is taken.
    #[default]
    Ignore,
    /// Fail closed: deny (where the point can deny), else halt.
    Deny,
}

/// `on:` values, as written.
pub(crate) const ON: [(&str, OnResult); 3] = [
    ("any", OnResult::Any),
    ("success", OnResult::Success),
    ("failure", OnResult::Failure),
];

/// `on_error:` values, as written.
pub(crate) const ON_ERROR: [(&str, OnError); 2] =
    [("ignore", OnError::Ignore), ("deny", OnError::Deny)];

/// Variable names kept in hooks' environment although hookd would remove them: exact names,
/// or a prefix followed by `*` (`GIT_CONFIG_*`). Written as `env: {keep: [...]}` in
/// `hooks.yaml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Keep(Vec<String>);

impl Keep {
    /// A keep list of these names and `PREFIX*` patterns (validated by the configuration).
    pub fn new(names: impl IntoIterator<Item = String>) -> Self {
        Keep(names.into_iter().collect())
    }

    /// Whether `name` is kept.
    pub fn matches(&self, name: &str) -> bool {
        self.0.iter().any(|k| match k.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => k == name,
        })
    }

    /// The names and patterns, as written.
    pub fn names(&self) -> &[String] {
        &self.0
    }

    /// True when nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skip_reasons_read_back_as_written_and_keep_the_gates_names() {
        for (reason, name) in [
            (SkipReason::Untrusted, "untrusted"),
            (SkipReason::Internal, "internal"),
            (SkipReason::SandboxUnavailable, "sandbox_unavailable"),
            (DenyReason::NotAllowlisted.into(), "not_allowlisted"),
            (DenyReason::ControlCharacter.into(), "control_character"),
            (DenyReason::ProtectedPath.into(), "protected_path"),
        ] {
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<SkipReason>(&json).unwrap(), reason);
            assert_eq!(reason.to_string(), name);
        }
        assert!(serde_json::from_str::<SkipReason>("\"bored\"").is_err());
        // Not a gate verdict: the gate's reasons do not include them.
        assert!(serde_json::from_str::<DenyReason>("\"untrusted\"").is_err());
    }
}

/// What a hook's reply decided about the tool call or prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum HookDecision {
    /// `{"decision": "deny"}`, or exit 2.
    Deny,
    /// `{"decision": "allow"}`.
    Allow,
}

/// Why the daemon read its configuration again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ReloadCause {
    /// A watched file appeared, changed or went away.
    Changed,
    /// SIGHUP.
    Sighup,
    /// Not a reload: an agent's call (a one-shot `hookd adapter` or `hookd dispatch`) loaded it
    /// to dispatch, and no hook ran.
    Dispatch,
}

impl ReloadCause {
    /// The name events and messages use.
    pub const fn name(self) -> &'static str {
        match self {
            ReloadCause::Changed => "changed",
            ReloadCause::Sighup => "sighup",
            ReloadCause::Dispatch => "dispatch",
        }
    }
}

/// Where a reminder goes in the model's conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Role {
    /// A message of its own, from the user's side.
    User,
    /// Appended to the last tool result (`on_repeated_failure`).
    Tool,
}

/// Why a variable was removed from a hook's environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EnvCause {
    /// A repository's files set it for the agent (`.env`, `.claude/settings.json` `env`).
    Project,
    /// It makes a shell, a runtime or git run code or change how a command is read.
    RunsCode,
}

/// A variable removed from a hook's environment, as events report it (its value is not said).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RemovedVar {
    /// The variable's name.
    pub name: String,
    /// Why.
    pub cause: EnvCause,
    /// For `project`: the file that set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}
