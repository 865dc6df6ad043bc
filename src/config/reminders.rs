//! `reminders.yaml`: text injected at hook points, gated by triggers.

use std::collections::BTreeMap;

use serde::Serialize;

use super::decode::{Decoder, Fields};
use super::yaml::Node;
use crate::catalog::HookPoint;
use crate::kinds::{Origin, Trigger};

/// Turns between firings of an `interval` reminder when `interval` is absent or 0.
pub const DEFAULT_INTERVAL: u64 = 10;
/// Threshold of `on_repeated_failure` and `on_stalled_todos` when absent.
pub const DEFAULT_FAILURE_THRESHOLD: u64 = 3;

/// An extra condition on the session's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum When {
    /// Only while the agent's todo list is empty (`todo_count` in the context is 0 or absent).
    TodosEmpty,
}

/// One reminder as configured, defaults applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ReminderSpec {
    /// Unique; `merge: true` overrides built-ins by name.
    pub name: String,
    /// The text, with `{placeholders}`.
    pub text: String,
    /// Where it attaches (default: the trigger's point, else `pre_stream`).
    pub hook: HookPoint,
    /// When it fires.
    pub trigger: Trigger,
    /// For `interval`.
    pub interval: u64,
    /// For `once_after`, `turns_before_max`, `on_repeated_failure`, `on_stalled_todos`.
    pub threshold: u64,
    /// Extra condition.
    pub when: Option<When>,
    /// Mode name -> text for `{guidance}` (for `on_mode_change`).
    pub guidance: BTreeMap<String, String>,
    /// Where it was written.
    pub origin: Origin,
}

/// The content of `reminders.yaml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RemindersConfig {
    /// Master switch (`INFER_REMINDERS_ENABLED` overrides).
    pub enabled: bool,
    /// In config order.
    pub reminders: Vec<ReminderSpec>,
}

const PLACEHOLDERS: [&str; 6] = [
    "tool_name",
    "count",
    "prev_mode",
    "new_mode",
    "guidance",
    "todo_list",
];

pub(crate) fn decode(d: &mut Decoder<'_>, root: &Node) -> RemindersConfig {
    let mut out = RemindersConfig::default();
    let Some(top) = d.fields(
        root,
        "reminders.yaml",
        &super::shape::REMINDERS_FILE.names(),
    ) else {
        return out;
    };
    if let Some(n) = top.get("enabled") {
        out.enabled = d.bool(n, "`enabled`").unwrap_or(false);
    }
    let merge = top
        .get("merge")
        .and_then(|n| d.bool(n, "`merge`"))
        .unwrap_or(false);
    let mut own = Vec::new();
    if let Some(list) = top.get("reminders") {
        if let Some(items) = d.seq(list, "`reminders`") {
            let mut names = super::decode::NameSet::default();
            for item in items {
                let unique = names.check(
                    d,
                    item,
                    "reminder",
                    "`merge: true` and events refer to reminders by name",
                );
                if let Some(spec) = decode_one(d, item) {
                    if unique {
                        own.push(spec);
                    }
                }
            }
        }
    }
    out.reminders = if merge { merge_onto_builtins(own) } else { own };
    out
}

/// Layer a project's reminders over the user's own (home, `--config-dir` or
/// `INFER_REMINDERS_CONFIG`): the user's apply as written (when their file enables them); a
/// project that may act adds its own after them (when its file enables them). A project
/// reminder named like one of the user's is dropped with a warning. Returns the reminders and
/// how many of the project's were dropped because it may not act.
pub(crate) fn layer(
    user: RemindersConfig,
    project: Option<RemindersConfig>,
    project_acts: bool,
    warnings: &mut Vec<super::Diagnostic>,
) -> (RemindersConfig, usize) {
    let mut out = user;
    if !out.enabled {
        out.reminders.clear();
    }
    let Some(p) = project else {
        return (out, 0);
    };
    if !p.enabled {
        return (out, 0);
    }
    if !project_acts {
        return (out, p.reminders.len());
    }
    out.enabled = true;
    for r in p.reminders {
        if out.reminders.iter().any(|u| u.name == r.name) {
            if r.origin.line == 0 {
                continue; // a built-in both files merged onto
            }
            warnings.push(super::Diagnostic {
                severity: super::Severity::Warning,
                file: r.origin.file.clone(),
                line: r.origin.line,
                col: 0,
                message: format!(
                    "reminder `{}` has the name of one of your own reminders; the project's is ignored",
                    r.name
                ),
                help: Some("rename it in the project's reminders.yaml".into()),
                snippet: None,
            });
            continue;
        }
        out.reminders.push(r);
    }
    (out, 0)
}

/// `merge: true`: the file's reminders override built-ins of the same name; others are appended.
fn merge_onto_builtins(own: Vec<ReminderSpec>) -> Vec<ReminderSpec> {
    let mut out = builtins();
    for r in own {
        match out.iter_mut().find(|b| b.name == r.name) {
            Some(slot) => *slot = r,
            None => out.push(r),
        }
    }
    out
}

/// hookd's built-in reminders, used only with `merge: true`. They name no agent-specific tool.
pub fn builtins() -> Vec<ReminderSpec> {
    let origin = Origin {
        file: "built-in".into(),
        line: 0,
        source: super::Source::BuiltIn,
    };
    let spec = |name: &str, hook, trigger, threshold, text: &str| ReminderSpec {
        name: name.into(),
        text: text.into(),
        hook,
        trigger,
        interval: DEFAULT_INTERVAL,
        threshold,
        when: None,
        guidance: BTreeMap::new(),
        origin: origin.clone(),
    };
    vec![
        spec(
            "repeated-failure",
            HookPoint::PostTool,
            Trigger::OnRepeatedFailure,
            DEFAULT_FAILURE_THRESHOLD,
            "<system-reminder>\nThe tool {tool_name} has now failed {count} times in a row with the same input. Do not retry it unchanged: check your assumptions first, then try another approach.\n</system-reminder>",
        ),
        spec(
            "truncation-continuation",
            HookPoint::PostStream,
            Trigger::OnTruncation,
            0,
            "<system-reminder>\nYour last response hit the output token limit and was cut off. Continue from where it stopped, keep the reply short, and issue any tool call you intended again.\n</system-reminder>",
        ),
        spec(
            "mode-change-reminder",
            HookPoint::PreStream,
            Trigger::OnModeChange,
            0,
            "<system-reminder>\nThe agent mode changed from {prev_mode} to {new_mode}. {guidance}\n</system-reminder>",
        ),
    ]
}

fn decode_one(d: &mut Decoder<'_>, item: &Node) -> Option<ReminderSpec> {
    let f = d.fields(item, "a reminder", &super::shape::REMINDER.names())?;
    let name = required_text(d, &f, item, "name");
    let text = required_text(d, &f, item, "text");
    let trigger = match f.get("trigger") {
        None => Some(Trigger::Always),
        Some(n) => d.one_of(n, "trigger", &Trigger::ALL.map(|t| (t.name(), t))),
    };
    let hook = reminder_point(d, &f, trigger);
    let interval = count(d, &f, "interval")?
        .filter(|v| *v > 0)
        .unwrap_or(DEFAULT_INTERVAL);
    let threshold = threshold(d, &f, item, trigger)?;
    let when = match f.get("when") {
        None => Some(None),
        Some(n) => d.string(n, "`when`").and_then(|s| match s.as_str() {
            "todos_empty" => Some(Some(When::TodosEmpty)),
            _ => {
                d.error(
                    n.pos,
                    format!("unknown condition `when: {s}`"),
                    Some("the only condition is `todos_empty`".into()),
                );
                None
            }
        }),
    };
    let guidance = guidance(d, &f);
    if let (Some(t), Some(n)) = (&text, f.get("text")) {
        for ph in unknown_placeholders(t) {
            d.warn(
                n.pos,
                format!("unknown placeholder `{{{ph}}}` is left as written"),
                Some(format!(
                    "placeholders: {}",
                    PLACEHOLDERS.map(|p| format!("{{{p}}}")).join(", ")
                )),
            );
        }
    }
    Some(ReminderSpec {
        name: name?,
        text: text?,
        hook: hook?,
        trigger: trigger?,
        interval,
        threshold,
        when: when?,
        guidance,
        origin: d.origin(item.pos.line),
    })
}

/// `name` or `text`: required, not blank.
fn required_text(d: &mut Decoder<'_>, f: &Fields<'_>, item: &Node, key: &str) -> Option<String> {
    let Some(n) = f.get(key) else {
        d.error(item.pos, format!("reminder is missing `{key}`"), None);
        return None;
    };
    let value = d.string(n, &format!("`{key}`"))?;
    if value.trim().is_empty() {
        d.error(n.pos, format!("reminder {key} is empty"), None);
        return None;
    }
    Some(value)
}

/// `hook`: the trigger's own point when it has one (a different one is an error), else
/// `pre_stream`.
fn reminder_point(
    d: &mut Decoder<'_>,
    f: &Fields<'_>,
    trigger: Option<Trigger>,
) -> Option<HookPoint> {
    let required = trigger.and_then(Trigger::required_point);
    let Some(n) = f.get("hook") else {
        return Some(required.unwrap_or(HookPoint::PreStream));
    };
    let p = d.hook_point(n)?;
    match required {
        Some(req) if req != p => {
            d.error(
                n.pos,
                format!(
                    "trigger `{}` only fires at `{req}`, not at `{p}`",
                    trigger.map(|t| t.name()).unwrap_or_default()
                ),
                Some(format!("set `hook: {req}` or leave `hook` out")),
            );
            None
        }
        _ => Some(p),
    }
}

/// A count (`interval`, `threshold`): `Some(None)` when absent, `None` when invalid.
fn count(d: &mut Decoder<'_>, f: &Fields<'_>, key: &str) -> Option<Option<u64>> {
    let Some(n) = f.get(key) else {
        return Some(None);
    };
    match d.int(n, &format!("`{key}`")) {
        Some(v) if v < 0 => {
            d.error(n.pos, format!("{key} is negative ({v})"), None);
            None
        }
        Some(v) => Some(Some(v as u64)),
        None => None,
    }
}

/// `threshold`, as the trigger needs it: required above 0 for `once_after` and
/// `turns_before_max`, above 0 with a default for the failure and stall triggers.
fn threshold(
    d: &mut Decoder<'_>,
    f: &Fields<'_>,
    item: &Node,
    trigger: Option<Trigger>,
) -> Option<u64> {
    let given = count(d, f, "threshold")?;
    let pos = f.get("threshold").map(|n| n.pos).unwrap_or(item.pos);
    match trigger {
        Some(t @ (Trigger::OnceAfter | Trigger::TurnsBeforeMax)) => match given {
            Some(v) if v > 0 => Some(v),
            _ => {
                d.error(
                    pos,
                    format!("trigger `{t}` needs `threshold` greater than 0"),
                    Some("for example `threshold: 3`".to_string()),
                );
                None
            }
        },
        Some(Trigger::OnRepeatedFailure | Trigger::OnStalledTodos) => match given {
            Some(0) => {
                d.error(pos, "threshold must be greater than 0".into(), None);
                None
            }
            Some(v) => Some(v),
            None => Some(DEFAULT_FAILURE_THRESHOLD),
        },
        _ => Some(given.unwrap_or(0)),
    }
}

/// `guidance`: a text per mode, for `{guidance}` in a mode-change reminder.
fn guidance(d: &mut Decoder<'_>, f: &Fields<'_>) -> BTreeMap<String, String> {
    let mut guidance = BTreeMap::new();
    if let Some(n) = f.get("guidance") {
        let keys = crate::kinds::Mode::ALL.map(|m| m.name());
        if let Some(g) = d.fields(n, "`guidance`", &keys) {
            for key in keys {
                if let Some(v) = g.get(key).and_then(|v| d.string(v, "guidance text")) {
                    guidance.insert(key.to_string(), v);
                }
            }
        }
    }
    guidance
}

/// `{word}` placeholders in `text` that hookd does not fill.
fn unknown_placeholders(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) => {
                let word = &after[..end];
                if !word.is_empty()
                    && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !PLACEHOLDERS.contains(&word)
                {
                    out.push(word.to_string());
                }
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    out
}
