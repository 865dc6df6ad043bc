//! The shape of each configuration file: its keys, what each holds, the ranges and the rules
//! between keys. The decoders take their known keys and ranges from here, and `hookd schema`
//! renders the same shapes as JSON Schema (draft 2020-12), so an editor underlines what
//! `hookd check` would reject. What JSON Schema cannot say (unique names, a Rust regular
//! expression's syntax, an allow entry that admits too much) only `hookd check` reports.

use serde_json::{json, Map, Value};

use crate::catalog::HookPoint;
use crate::kinds::{Trigger, LISTS};

/// The largest `timeout` accepted, in seconds (one hour).
pub const MAX_TIMEOUT_SECS: u64 = 3600;
/// The largest `max_output` accepted (16 MiB).
pub const MAX_MAX_OUTPUT: usize = 16 * 1024 * 1024;
/// The largest `grace` accepted.
pub const MAX_GRACE_SECS: u64 = 60;
/// The most `max_continues` accepted.
pub(crate) const MAX_MAX_CONTINUES: i64 = 1000;

/// What a value must be.
#[derive(Clone, Copy)]
pub(crate) enum Ty {
    Bool,
    /// Any text.
    Text,
    /// Text with something besides whitespace.
    Words,
    /// A regular expression (`format: regex`: a validator that asserts formats checks it; the
    /// loader checks it as Rust's `regex` reads it).
    Regex,
    /// A whole number in a range.
    Int(i64, i64),
    /// One of a fixed set of names.
    Choice(fn() -> Vec<&'static str>),
    /// A hook point of the catalog.
    Point,
    List(&'static Ty),
    Object(&'static Shape),
    /// An absolute path, or one from the home (`~`, `~/…`).
    Path,
    /// A variable name, or a prefix followed by `*`; never one that steers hookd.
    VarPattern,
    /// `true`, `false`, or a mapping of this shape.
    BoolOr(&'static Shape),
    /// A host name, `*.` and a name, or an IP address.
    Host,
    /// A mapping of names to texts.
    Pairs,
}

/// One key of a mapping.
pub(crate) struct Key {
    pub(crate) name: &'static str,
    pub(crate) ty: Ty,
    pub(crate) doc: &'static str,
}

/// A mapping: its keys, the required ones, whether others are allowed (an agent's own keys in
/// a file it shares), and the rules between keys.
pub(crate) struct Shape {
    pub(crate) doc: &'static str,
    pub(crate) keys: &'static [Key],
    pub(crate) required: &'static [&'static str],
    pub(crate) open: bool,
    pub(crate) rules: fn() -> Vec<Value>,
}

impl Shape {
    /// The names of its keys, for the decoder's unknown-key warning.
    pub(crate) fn names(&self) -> Vec<&'static str> {
        self.keys.iter().map(|k| k.name).collect()
    }
}

const fn key(name: &'static str, ty: Ty, doc: &'static str) -> Key {
    Key { name, ty, doc }
}

fn no_rules() -> Vec<Value> {
    Vec::new()
}

const MAX_OUTPUT: Ty = Ty::Int(1, MAX_MAX_OUTPUT as i64);
const TEXTS: Ty = Ty::List(&Ty::Words);

/// `hooks.yaml`.
pub(crate) const HOOKS_FILE: Shape = Shape {
    doc: "hookd's command hooks (~/.infer/hooks.yaml, or a project's .infer/hooks.yaml).",
    keys: &[
        key(
            "enabled",
            Ty::Bool,
            "Run this file's hooks (off unless true, or INFER_HOOKS_ENABLED=true).",
        ),
        key(
            "hooks",
            Ty::List(&Ty::Object(&HOOK)),
            "The hooks, in the order they run.",
        ),
        key(
            "max_output",
            MAX_OUTPUT,
            "Bytes kept of each of a hook's stdout and stderr (default 65536).",
        ),
        key(
            "grace",
            Ty::Int(0, MAX_GRACE_SECS as i64),
            "Seconds between SIGTERM and SIGKILL when a hook times out (default 2).",
        ),
        key(
            "parallel",
            Ty::Bool,
            "Run this file's hooks of a point at once (a hook's own `parallel` wins).",
        ),
        key(
            "max_continues",
            Ty::Int(0, MAX_MAX_CONTINUES),
            "Consecutive `continue` replies honoured at post_session (default 8).",
        ),
        key(
            "gate_shell_tools",
            Ty::Bool,
            "Check the model's shell tool calls against the bash allow-list.",
        ),
        key(
            "shell_tools",
            TEXTS,
            "More tool names whose input.command is a shell command.",
        ),
        key(
            "fail_closed",
            Ty::Bool,
            "Deny when hookd itself fails (an adapter's bad payload, a broken configuration).",
        ),
        key("env", Ty::Object(&ENV), "The environment hooks get."),
    ],
    required: &[],
    open: false,
    rules: no_rules,
};

const ENV: Shape = Shape {
    doc: "The environment hooks get.",
    keys: &[key(
        "keep",
        Ty::List(&Ty::VarPattern),
        "Variables hooks get although hookd would remove them: NAME, or PREFIX*.",
    )],
    required: &[],
    open: false,
    rules: no_rules,
};

/// One hook.
pub(crate) const HOOK: Shape = Shape {
    doc: "One command hook.",
    keys: &[
        key(
            "name",
            Ty::Words,
            "Unique within the file: events and `hookd check` name hooks by it.",
        ),
        key("hook", Ty::Point, "The point it attaches to."),
        key(
            "command",
            Ty::Words,
            "The command line, checked against the bash allow-list before it runs.",
        ),
        key(
            "timeout",
            Ty::Int(0, MAX_TIMEOUT_SECS as i64),
            "Seconds before it is stopped (0: the default, 30).",
        ),
        key(
            "max_output",
            MAX_OUTPUT,
            "Bytes kept of each of its stdout and stderr.",
        ),
        key(
            "matcher",
            Ty::Regex,
            "At pre_tool and post_tool: a regular expression the whole tool name must match.",
        ),
        key(
            "on",
            Ty::Choice(on_results),
            "At post_tool: run for every finished tool call, or only successes or failures.",
        ),
        key(
            "include_sub_agents",
            Ty::Bool,
            "Also run for sub-agents' tool calls.",
        ),
        key(
            "on_error",
            Ty::Choice(on_errors),
            "What its failure means: nothing (ignore), or deny where the point can deny or halt.",
        ),
        key(
            "parallel",
            Ty::Bool,
            "Run at once with the point's other parallel hooks.",
        ),
        key("description", Ty::Text, "For people."),
    ],
    required: &["name", "hook", "command"],
    open: false,
    rules: hook_rules,
};

fn mode_names() -> Vec<&'static str> {
    crate::kinds::Mode::ALL.iter().map(|m| m.name()).collect()
}

fn on_results() -> Vec<&'static str> {
    crate::kinds::ON.iter().map(|(name, _)| *name).collect()
}

fn on_errors() -> Vec<&'static str> {
    crate::kinds::ON_ERROR
        .iter()
        .map(|(name, _)| *name)
        .collect()
}

/// `matcher` only at tool points, `on` only at post_tool, `on_error: deny` only where a hook can
/// deny or halt.
fn hook_rules() -> Vec<Value> {
    let points = |keep: fn(HookPoint) -> bool| -> Vec<&'static str> {
        HookPoint::ALL
            .iter()
            .filter(|p| !keep(**p))
            .map(|p| p.name())
            .collect()
    };
    let at = |others: Vec<&'static str>, then: Value| {
        json!({
            "if": {"required": ["hook"], "properties": {"hook": {"enum": others}}},
            "then": then,
        })
    };
    vec![
        at(
            points(|p| matches!(p, HookPoint::PreTool | HookPoint::PostTool)),
            json!({"properties": {"matcher": {"type": "null"}}}),
        ),
        at(
            points(|p| p == HookPoint::PostTool),
            json!({"properties": {"on": {"type": "null"}}}),
        ),
        at(
            points(|p| p.capabilities().deny || p.capabilities().halt),
            json!({"properties": {"on_error": {"not": {"const": "deny"}}}}),
        ),
    ]
}

/// `reminders.yaml`.
pub(crate) const REMINDERS_FILE: Shape = Shape {
    doc:
        "hookd's reminders: text injected at hook points (~/.infer/reminders.yaml, or a project's).",
    keys: &[
        key(
            "enabled",
            Ty::Bool,
            "Inject this file's reminders (INFER_REMINDERS_ENABLED overrides).",
        ),
        key(
            "merge",
            Ty::Bool,
            "Add these to the built-in reminders (a reminder named like a built-in replaces it).",
        ),
        key(
            "reminders",
            Ty::List(&Ty::Object(&REMINDER)),
            "The reminders.",
        ),
    ],
    required: &[],
    open: false,
    rules: no_rules,
};

/// One reminder.
pub(crate) const REMINDER: Shape = Shape {
    doc: "One reminder.",
    keys: &[
        key("name", Ty::Words, "Unique within the file."),
        key("text", Ty::Words, "What is injected; {tool_name}, {count}, {prev_mode}, {new_mode}, {guidance} and {todo_list} are filled in."),
        key("hook", Ty::Point, "Where it is injected (default pre_stream, or the point its trigger needs)."),
        key("trigger", Ty::Choice(triggers), "When it fires (default always)."),
        key("interval", Ty::Int(0, i64::MAX), "Turns between firings, for `interval` (0: the default)."),
        key("threshold", Ty::Int(0, i64::MAX), "The count that fires once_after, turns_before_max, on_repeated_failure, on_stalled_todos."),
        key("when", Ty::Choice(conditions), "A further condition."),
        key("guidance", Ty::Object(&GUIDANCE), "Text for {guidance}, per mode."),
    ],
    required: &["name", "text"],
    open: false,
    rules: reminder_rules,
};

fn triggers() -> Vec<&'static str> {
    Trigger::ALL.iter().map(|t| t.name()).collect()
}

fn conditions() -> Vec<&'static str> {
    vec!["todos_empty"]
}

const GUIDANCE: Shape = Shape {
    doc: "Text for {guidance}, per mode.",
    keys: &[
        key("standard", Ty::Text, "In standard mode."),
        key("plan", Ty::Text, "In plan mode."),
        key("auto", Ty::Text, "In auto mode."),
        key("readonly", Ty::Text, "In readonly mode."),
        key("all", Ty::Text, "In every mode without its own."),
    ],
    required: &[],
    open: false,
    rules: no_rules,
};

/// A trigger tied to a point allows no other; some need a threshold above 0.
fn reminder_rules() -> Vec<Value> {
    let mut rules: Vec<Value> = Trigger::ALL
        .iter()
        .filter_map(|t| {
            let point = t.required_point()?;
            Some(json!({
                "if": {"required": ["trigger"], "properties": {"trigger": {"const": t.name()}}},
                "then": {"properties": {"hook": {"enum": [point.name(), null]}}},
            }))
        })
        .collect();
    rules.push(json!({
        "if": {"required": ["trigger"], "properties": {"trigger": {"enum": ["once_after", "turns_before_max"]}}},
        "then": {"required": ["threshold"], "properties": {"threshold": {"type": "integer", "minimum": 1}}},
    }));
    rules.push(json!({
        "if": {"required": ["trigger"], "properties": {"trigger": {"enum": ["on_repeated_failure", "on_stalled_todos"]}}},
        "then": {"properties": {"threshold": {"type": ["integer", "null"], "minimum": 1}}},
    }));
    rules
}

/// `config.yaml`, shared with the agent: hookd reads `tools.bash.mode` and `sandbox`, the rest
/// is the agent's.
pub(crate) const CONFIG_FILE: Shape = Shape {
    doc: "The agent's config.yaml: hookd reads the bash allow-lists (tools.bash.mode) and the sandbox; other keys are the agent's.",
    keys: &[
        key("tools", Ty::Object(&TOOLS), "The agent's tools."),
        key("sandbox", Ty::Object(&SANDBOX), "Where confined commands may write and connect."),
        key("telemetry", Ty::Object(&TELEMETRY), "Where hookd's OpenTelemetry export goes (your own file only; the OTEL_* variables override each key)."),
    ],
    required: &[],
    open: true,
    rules: no_rules,
};

const TOOLS: Shape = Shape {
    doc: "The agent's tools.",
    keys: &[key("bash", Ty::Object(&BASH), "The shell tool.")],
    required: &[],
    open: true,
    rules: no_rules,
};

const BASH: Shape = Shape {
    doc: "The shell tool.",
    keys: &[key(
        "mode",
        Ty::Object(&MODES),
        "The allow-list per mode: a mode's list is `all` plus its own.",
    )],
    required: &[],
    open: true,
    rules: no_rules,
};

/// The allow-lists, one per list key; generated from the catalog of list keys.
pub(crate) const MODES: Shape = Shape {
    doc: "The allow-list per mode.",
    keys: &[
        key(LISTS[0].name(), Ty::Object(&LIST), "Allowed in every mode."),
        key(
            LISTS[1].name(),
            Ty::Object(&LIST),
            "Also allowed in standard mode.",
        ),
        key(
            LISTS[2].name(),
            Ty::Object(&LIST),
            "Also allowed in plan mode.",
        ),
        key(
            LISTS[3].name(),
            Ty::Object(&LIST),
            "Also allowed in auto mode.",
        ),
        key(
            LISTS[4].name(),
            Ty::Object(&LIST),
            "Also allowed in readonly mode.",
        ),
    ],
    required: &[],
    open: false,
    rules: no_rules,
};

const LIST: Shape = Shape {
    doc: "One allow-list.",
    keys: &[key(
        "allow",
        Ty::List(&Ty::Regex),
        "Regular expressions, each matched against the whole command (write ^ and $).",
    )],
    required: &[],
    open: false,
    rules: no_rules,
};

/// `sandbox.network: {allow, deny}` in config.yaml.
pub(crate) const NETWORK: Shape = Shape {
    doc: "The hosts confined commands reach through hookd's proxy (docs/security.md, Egress by domain).",
    keys: &[
        key(
            "allow",
            Ty::List(&Ty::Host),
            "Hosts reached: names, `*.` wildcards (the names beneath), IP addresses (your own file only).",
        ),
        key(
            "deny",
            Ty::List(&Ty::Host),
            "Hosts refused even when `allow` lists them.",
        ),
    ],
    required: &[],
    open: false,
    rules: no_rules,
};

/// `sandbox.walk:` in config.yaml: how far below the project protected names are looked for.
pub(crate) const WALK: Shape = Shape {
    doc: "How far below the project (and the other writable roots) the sandbox looks for protected names before each confined command (docs/security.md, Below the project's root). Your own file only.",
    keys: &[
        key(
            "depth",
            Ty::Int(1, hookd_sandbox::walk::MAX_DEPTH as i64),
            "A name is found at most this many components below a root (default 3; 1: none below the root).",
        ),
        key(
            "most_dirs",
            Ty::Int(1, MAX_WALK_DIRS),
            "The most directories one walk reads; where a tree has more, confined commands do not run (default 20000).",
        ),
        key(
            "skip",
            Ty::List(&Ty::Words),
            "Directory names never entered, besides node_modules (e.g. vendor): protected names in them are not held.",
        ),
    ],
    required: &[],
    open: false,
    rules: no_rules,
};

/// The largest `sandbox.walk.most_dirs`.
pub(crate) const MAX_WALK_DIRS: i64 = 1_000_000;

/// `sandbox:` in config.yaml.
pub(crate) const SANDBOX: Shape = Shape {
    doc: "Where confined commands may write and connect (docs/security.md, The sandbox).",
    keys: &[
        key(
            "enabled",
            Ty::Bool,
            "Confine hooks and the model's shell commands.",
        ),
        key(
            "network",
            Ty::BoolOr(&NETWORK),
            "Let confined commands open network connections (default false), or reach only the listed hosts through hookd's proxy.",
        ),
        key(
            "write",
            Ty::List(&Ty::Path),
            "More places confined commands may write (your own file only).",
        ),
        key(
            "read_deny",
            Ty::List(&Ty::Path),
            "More places confined commands may not read.",
        ),
        key(
            "unix_sockets",
            Ty::List(&Ty::Path),
            "Unix sockets made outside that confined commands may connect to (your own file only).",
        ),
        key(
            "read_only_modes",
            Ty::List(&Ty::Choice(mode_names)),
            "Agent modes (e.g. plan) whose shell calls and file tools may write nothing but hookd's temporary directory (a project may add modes).",
        ),
        key(
            "env",
            Ty::Object(&ENV),
            "The environment confined commands get: `keep` names secret-carrying variables they get all the same (your own file only).",
        ),
        key(
            "walk",
            Ty::Object(&WALK),
            "How far below the project protected names are looked for: `depth`, `most_dirs`, `skip` (your own file only).",
        ),
    ],
    required: &[],
    open: false,
    rules: no_rules,
};

/// `telemetry:` in config.yaml (docs/daemon.md, OpenTelemetry); each key stands for an
/// `OTEL_*` variable (`super::telemetry::KEYS`).
pub(crate) const TELEMETRY: Shape = Shape {
    doc: "Where hookd's OpenTelemetry export goes: OTLP over plain HTTP with protobuf (docs/daemon.md). Read from your own config.yaml only; each OTEL_* variable overrides its key.",
    keys: &[
        key(
            "endpoint",
            Ty::Text,
            "http://host:port: traces go to /v1/traces, logs to /v1/logs under it (OTEL_EXPORTER_OTLP_ENDPOINT).",
        ),
        key(
            "headers",
            Ty::Pairs,
            "Headers sent with every export, e.g. authorization (OTEL_EXPORTER_OTLP_HEADERS).",
        ),
        key(
            "service_name",
            Ty::Words,
            "The resource's service.name (default hookd; OTEL_SERVICE_NAME).",
        ),
        key(
            "resource_attributes",
            Ty::Pairs,
            "More resource attributes, e.g. deployment.environment (OTEL_RESOURCE_ATTRIBUTES).",
        ),
        key(
            "timeout",
            Ty::Int(1, super::telemetry::MAX_TIMEOUT_MS),
            "Milliseconds one export may take (the daemon: default 10000; one-shot processes: 20 unless set; OTEL_EXPORTER_OTLP_TIMEOUT).",
        ),
        key(
            "protocol",
            Ty::Choice(protocols),
            "http/protobuf, the only one hookd speaks (OTEL_EXPORTER_OTLP_PROTOCOL).",
        ),
    ],
    required: &[],
    open: false,
    rules: no_rules,
};

fn protocols() -> Vec<&'static str> {
    vec!["http/protobuf"]
}

/// A file hookd reads, whose JSON Schema `hookd schema` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaFile {
    /// `hooks.yaml`.
    Hooks,
    /// `reminders.yaml`.
    Reminders,
    /// `config.yaml` (the allow-lists and `sandbox:`).
    Config,
}

impl SchemaFile {
    /// Every file, in the order docs list them.
    pub const ALL: [SchemaFile; 3] = [SchemaFile::Hooks, SchemaFile::Reminders, SchemaFile::Config];

    /// The word `hookd schema` takes: `hooks`, `reminders`, `config`.
    pub const fn name(self) -> &'static str {
        match self {
            SchemaFile::Hooks => "hooks",
            SchemaFile::Reminders => "reminders",
            SchemaFile::Config => "config",
        }
    }

    /// The file's JSON Schema (draft 2020-12), from the shapes the loader reads it with.
    pub fn schema(self) -> Value {
        let (shape, file) = match self {
            SchemaFile::Hooks => (&HOOKS_FILE, "hooks.yaml"),
            SchemaFile::Reminders => (&REMINDERS_FILE, "reminders.yaml"),
            SchemaFile::Config => (&CONFIG_FILE, "config.yaml"),
        };
        schema(shape, &format!("urn:hookd:schema:{}", self.name()), file)
    }
}

/// The schema of a whole file.
fn schema(shape: &Shape, id: &str, title: &str) -> Value {
    let mut v = object(shape);
    // An empty file (or one of comments only) is a null document, which the loader accepts.
    v["type"] = json!(["object", "null"]);
    if let Value::Object(m) = &mut v {
        let mut head = Map::new();
        head.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        head.insert("$id".into(), json!(id));
        head.insert("title".into(), json!(title));
        head.append(m);
        return Value::Object(head);
    }
    v
}

fn object(shape: &Shape) -> Value {
    let mut props = Map::new();
    for k in shape.keys {
        let mut v = ty(&k.ty);
        // Absent and null are the same to the loader, except for required keys.
        if !shape.required.contains(&k.name) {
            v = json!({"anyOf": [v, {"type": "null"}]});
        }
        if let Value::Object(m) = &mut v {
            m.insert("description".into(), json!(k.doc));
        }
        props.insert(k.name.into(), v);
    }
    let mut out = json!({
        "type": "object",
        "description": shape.doc,
        "properties": props,
        "additionalProperties": shape.open,
    });
    if !shape.required.is_empty() {
        out["required"] = json!(shape.required);
    }
    let rules = (shape.rules)();
    if !rules.is_empty() {
        out["allOf"] = json!(rules);
    }
    out
}

fn ty(t: &Ty) -> Value {
    match *t {
        Ty::Bool => json!({"type": "boolean"}),
        Ty::Text => json!({"type": "string"}),
        Ty::Words => json!({"type": "string", "pattern": "\\S"}),
        Ty::Regex => json!({"type": "string", "format": "regex"}),
        Ty::Int(lo, hi) if hi == i64::MAX => json!({"type": "integer", "minimum": lo}),
        Ty::Int(lo, hi) => json!({"type": "integer", "minimum": lo, "maximum": hi}),
        Ty::Choice(names) => json!({"enum": names()}),
        Ty::Point => json!({"enum": HookPoint::ALL.iter().map(|p| p.name()).collect::<Vec<_>>()}),
        Ty::List(item) => json!({"type": "array", "items": ty(item)}),
        Ty::Object(shape) => object(shape),
        Ty::Path => json!({"type": "string", "pattern": "^(/|~$|~/)"}),
        Ty::BoolOr(shape) => json!({"anyOf": [{"type": "boolean"}, object(shape)]}),
        Ty::Pairs => {
            json!({"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}})
        }
        Ty::Host => json!({"type": "string", "pattern": "^(\\*\\.)?[A-Za-z0-9_.:\\[\\]-]+$"}),
        Ty::VarPattern => json!({
            "type": "string",
            "pattern": "^[A-Za-z_][A-Za-z0-9_]*\\*?$",
            "not": {"pattern": steering_pattern()},
        }),
    }
}

/// What `env.keep` may not name: a variable of hookd's catalog (`crate::vars`), or a prefix of
/// one followed by `*`.
fn steering_pattern() -> String {
    let mut alts = Vec::new();
    for name in crate::vars::VARS.iter().map(|v| v.name) {
        alts.push(regex::escape(name));
        for end in 1..=name.len() {
            alts.push(format!("{}\\*", regex::escape(&name[..end])));
        }
    }
    alts.sort();
    alts.dedup();
    format!("^(?:{})$", alts.join("|"))
}

/// Guidance keys are the modes' names: keep the shape's list and the catalog one list.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guidance_keys_are_the_modes() {
        let mut modes: Vec<_> = crate::kinds::Mode::ALL.iter().map(|m| m.name()).collect();
        let mut keys = GUIDANCE.names();
        modes.sort();
        keys.sort();
        assert_eq!(modes, keys);
    }
}
