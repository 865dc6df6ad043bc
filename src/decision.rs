//! Hooks that steer: a hook's reply, what its point lets it decide, and how the replies of all
//! hooks at a point combine, in config order, into one typed decision.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::catalog::{Capabilities, HookPoint};

/// The most text `reason` and `context` carry after joining (characters).
pub const MAX_JOINED_CHARS: usize = 10_000;
const TRUNCATED: &str = "\n[… truncated by hookd]";

/// What one hook asked for, already filtered by its point's capabilities.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Reply {
    pub allow: bool,
    pub deny: bool,
    pub reason: Option<String>,
    pub context: Vec<String>,
    pub updated_input: Option<Map<String, Value>>,
    pub updated_prompt: Option<String>,
    pub halt: bool,
    pub continue_: bool,
    pub context_files: Vec<String>,
    /// Fields present in the reply that this point does not take (or that do not exist).
    pub ignored: Vec<String>,
}

/// Why a hook's reply on stdout could not be read (the hook then failed).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReplyError {
    /// It starts like JSON and is not a JSON object.
    #[error("the reply is not a valid JSON object: {0}")]
    NotJson(serde_json::Error),
    /// A field hookd reads holds a value of another type.
    #[error("reply field `{key}` must be {expected}")]
    Field {
        /// The field.
        key: String,
        /// What it must be.
        expected: &'static str,
    },
}

/// Parse stdout as a reply when it is a JSON object (it starts with `{`); `Ok(None)` otherwise.
/// An object that does not parse, or whose fields have the wrong types, is an error: the hook
/// then counts as failed.
pub(crate) fn parse_reply(stdout: &str, caps: Capabilities) -> Result<Option<Reply>, ReplyError> {
    let text = stdout.trim_start();
    if !text.starts_with('{') {
        return Ok(None);
    }
    let obj: Map<String, Value> =
        serde_json::from_str(text.trim_end()).map_err(ReplyError::NotJson)?;
    let mut r = Reply::default();
    for (key, value) in &obj {
        read_field(&mut r, key, value, caps).map_err(|expected| ReplyError::Field {
            key: key.clone(),
            expected,
        })?;
    }
    r.ignored.sort();
    Ok(Some(r))
}

/// One field of a reply read into `r` as its point allows (a field it may not set is listed
/// as ignored); `Err` names the type the field must have.
fn read_field(
    r: &mut Reply,
    key: &str,
    value: &Value,
    caps: Capabilities,
) -> Result<(), &'static str> {
    let drop_field = |r: &mut Reply, key: &str| r.ignored.push(key.to_string());
    match key {
        "decision" => match value.as_str() {
            Some("allow") => r.allow = caps.deny,
            Some("deny") if caps.deny => r.deny = true,
            Some("deny") => drop_field(r, key),
            _ => return Err("\"allow\" or \"deny\""),
        },
        "reason" => match value {
            Value::String(s) => r.reason = Some(s.clone()),
            Value::Null => {}
            _ => return Err("a string"),
        },
        "context" => {
            let items = match value {
                Value::String(s) => vec![s.clone()],
                Value::Array(a) if a.iter().all(Value::is_string) => a
                    .iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect(),
                Value::Null => vec![],
                _ => return Err("a string or a list of strings"),
            };
            if caps.add_context {
                r.context = items.into_iter().filter(|s| !s.is_empty()).collect();
            } else if !items.is_empty() {
                drop_field(r, key);
            }
        }
        "updated_input" => match value {
            Value::Object(m) if caps.replace_input => r.updated_input = Some(m.clone()),
            Value::Object(_) => drop_field(r, key),
            _ => return Err("an object"),
        },
        "updated_prompt" => match value {
            Value::String(s) if caps.update_prompt => r.updated_prompt = Some(s.clone()),
            Value::String(_) => drop_field(r, key),
            _ => return Err("a string"),
        },
        "halt" => match value {
            Value::Bool(b) if caps.halt => r.halt = *b,
            Value::Bool(false) => {}
            Value::Bool(true) => drop_field(r, key),
            _ => return Err("true or false"),
        },
        "continue" => match value {
            Value::Bool(b) if caps.continue_ => r.continue_ = *b,
            Value::Bool(false) => {}
            Value::Bool(true) => drop_field(r, key),
            _ => return Err("true or false"),
        },
        "context_files" => match value {
            Value::Array(a) if a.iter().all(Value::is_string) => {
                if caps.add_context {
                    r.context_files = a
                        .iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect();
                } else if !a.is_empty() {
                    drop_field(r, key);
                }
            }
            _ => return Err("a list of strings"),
        },
        _ => drop_field(r, key),
    }
    Ok(())
}

/// One hook's contribution, in config order.
#[derive(Clone, Debug)]
pub(crate) struct Contribution {
    pub name: String,
    pub reply: Reply,
}

/// The decision at `pre_session`: the prompt may be denied or rewritten.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct PromptDecision {
    /// The prompt must not reach the model.
    pub deny: bool,
    /// Why (joined reasons of the denying and halting hooks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The prompt the agent sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_prompt: Option<String>,
    /// The prompt to send instead (last writer wins; dropped on deny or halt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_prompt: Option<String>,
    /// Context, halt and files.
    #[serde(flatten)]
    pub base: ContextDecision,
}

/// The decision at `pre_tool`: the call may be denied (with a synthetic error result) or its
/// input replaced.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ToolDecision {
    /// The tool call must not run.
    pub deny: bool,
    /// Why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// On deny: the text of the error result to give the model for this call, so every tool
    /// call still gets a result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub synthetic_result: Option<String>,
    /// The input the agent sent, when its JSON is at most about 64 KiB (a larger one is not
    /// echoed back: the agent has it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_input: Option<Value>,
    /// The input to use instead (last writer wins; dropped on deny or halt).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// hookd rewrote a shell call's `command` so that the agent runs it in the sandbox
    /// (`updated_input` holds the rewrite; `original_input` what was checked).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confined: bool,
    /// The shell gate (`gate_shell_tools`) judged the call and admitted it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gate_admitted: bool,
    /// The agent's own rule that asks before this call (a Claude Code `permissions.ask` rule
    /// matching the model's command): the agent asks its user about the call, confined as
    /// rewritten.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked_by: Option<String>,
    /// When hookd's gate denied the call (`gate_shell_tools`): how an operator could allow it.
    /// For people only, never for the model: adapters print it on stderr.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator_hint: Option<String>,
    /// Context, halt and files.
    #[serde(flatten)]
    pub base: ContextDecision,
}

/// The decision at `pre_stream` and `post_tool` (and the shared part of the others).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct ContextDecision {
    /// Text to add to the model's context (joined in config order, capped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Stop the turn.
    pub halt: bool,
    /// Why the turn stops.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub halt_reason: Option<String>,
    /// Project files the model may want to read (relative to the project; dropped on deny or halt).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub context_files: Vec<String>,
}

/// The decision at `post_session`: keep working, within the loop guard.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[non_exhaustive]
pub struct StopDecision {
    /// Keep working instead of stopping.
    #[serde(rename = "continue")]
    pub continue_: bool,
    /// What to tell the model (joined reasons).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// True when these checks followed a continue (hooks saw `stop_hook_active: true`).
    pub stop_hook_active: bool,
    /// Set when a continue was asked for but not honoured, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub continue_refused: Option<String>,
}

/// What the hooks at a point decided. The variant is fixed by the point, so a decision a point
/// cannot take has no field to live in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Decision {
    /// `pre_session`.
    Prompt(PromptDecision),
    /// `pre_tool`.
    Tool(ToolDecision),
    /// `pre_stream`, `post_tool`.
    Context(ContextDecision),
    /// `post_session`.
    Stop(StopDecision),
    /// Observe-only points: nothing to decide.
    Observe {},
}

impl Decision {
    /// The empty decision of `point`.
    pub fn none(point: HookPoint) -> Decision {
        match point {
            HookPoint::PreSession => Decision::Prompt(PromptDecision::default()),
            HookPoint::PreTool => Decision::Tool(ToolDecision::default()),
            HookPoint::PreStream | HookPoint::PostTool => {
                Decision::Context(ContextDecision::default())
            }
            HookPoint::PostSession => Decision::Stop(StopDecision::default()),
            HookPoint::PostStream | HookPoint::PreQueueDrain | HookPoint::PostQueueDrain => {
                Decision::Observe {}
            }
        }
    }

    /// True when the agent must stop the turn or not run what was asked (deny or halt).
    pub fn blocks(&self) -> bool {
        match self {
            Decision::Prompt(p) => p.deny || p.base.halt,
            Decision::Tool(t) => t.deny || t.base.halt,
            Decision::Context(c) => c.halt,
            Decision::Stop(_) | Decision::Observe {} => false,
        }
    }
}

/// A reply stops later hooks from counting (short-circuit) when it denies or halts.
pub(crate) fn short_circuits(reply: &Reply) -> bool {
    reply.deny || reply.halt
}

fn join_capped(parts: &[String]) -> Option<String> {
    if parts.is_empty() {
        return None;
    }
    let joined = parts.join("\n");
    if joined.chars().count() <= MAX_JOINED_CHARS {
        return Some(joined);
    }
    let mut out: String = joined.chars().take(MAX_JOINED_CHARS).collect();
    out.push_str(TRUNCATED);
    Some(out)
}

/// Resolve `context_files` against the project: deduplicated, existing, inside it (symlinks
/// resolved), shown relative to it. Anything else is dropped.
fn resolve_files(files: &[String], project: &Path) -> Vec<String> {
    let Ok(root) = project.canonicalize() else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for f in files {
        let candidate: PathBuf = if Path::new(f).is_absolute() {
            PathBuf::from(f)
        } else {
            root.join(f)
        };
        let Ok(real) = candidate.canonicalize() else {
            continue;
        };
        let Ok(rel) = real.strip_prefix(&root) else {
            continue;
        };
        let rel = rel.display().to_string();
        if !rel.is_empty() && !out.contains(&rel) {
            out.push(rel);
        }
    }
    out
}

/// The most of a tool's input an Outcome echoes back as `original_input` (its JSON text, about):
/// a larger one is left out. The agent has it; echoed, a 12 MiB `Write` doubled what each
/// dispatch held and sent back.
pub(crate) const MOST_ECHOED_INPUT: usize = 64 * 1024;

/// Whether `input` is small enough to echo back ([`MOST_ECHOED_INPUT`]): its strings, keys
/// and a few bytes per value counted, stopping as soon as it is over.
pub(crate) fn echoable(input: &Value) -> bool {
    /// Take `n` from `budget`; whether some is left.
    fn take(budget: &mut usize, n: usize) -> bool {
        *budget = budget.saturating_sub(n);
        *budget > 0
    }
    fn size(v: &Value, budget: &mut usize) -> bool {
        match v {
            Value::String(s) => take(budget, s.len() + 2),
            Value::Array(a) => take(budget, 2) && a.iter().all(|x| size(x, budget)),
            Value::Object(o) => {
                take(budget, 2)
                    && o.iter()
                        .all(|(k, x)| take(budget, k.len() + 4) && size(x, budget))
            }
            _ => take(budget, 8),
        }
    }
    let mut budget = MOST_ECHOED_INPUT;
    size(input, &mut budget)
}

/// What aggregation needs to know about the dispatch.
pub(crate) struct Inputs<'a> {
    pub point: HookPoint,
    pub project_dir: &'a Path,
    pub original_prompt: Option<String>,
    pub original_input: Option<Value>,
    pub stop_hook_active: bool,
}

/// Combine contributions, in config order: halt is sticky and deny beats allow (both
/// short-circuit: later replies do not count); reasons and context are joined and capped;
/// `updated_*` is the last writer's and dropped on deny or halt; files likewise.
pub(crate) fn aggregate(contribs: &[Contribution], inputs: Inputs<'_>) -> Decision {
    let f = Folded::fold(contribs);
    let blocked = f.deny || f.halt;
    let reason_if = |on: bool, reasons: &[String]| if on { join_capped(reasons) } else { None };
    let base = ContextDecision {
        context: join_capped(&f.context),
        halt: f.halt,
        halt_reason: reason_if(f.halt, &f.halt_reasons),
        context_files: if blocked {
            Vec::new()
        } else {
            resolve_files(&f.files, inputs.project_dir)
        },
    };
    match inputs.point {
        HookPoint::PreSession => Decision::Prompt(PromptDecision {
            deny: f.deny,
            reason: reason_if(f.deny, &f.deny_reasons),
            original_prompt: inputs.original_prompt,
            updated_prompt: if blocked { None } else { f.updated_prompt },
            base,
        }),
        HookPoint::PreTool => {
            let reason = reason_if(f.deny, &f.deny_reasons);
            Decision::Tool(ToolDecision {
                deny: f.deny,
                synthetic_result: reason
                    .as_ref()
                    .map(|r| format!("hookd denied this tool call: {r}")),
                reason,
                original_input: inputs.original_input,
                updated_input: if blocked { None } else { f.updated_input },
                confined: false,
                gate_admitted: false,
                asked_by: None,
                operator_hint: None,
                base,
            })
        }
        HookPoint::PreStream | HookPoint::PostTool => Decision::Context(base),
        HookPoint::PostSession => Decision::Stop(StopDecision {
            continue_: f.continue_,
            reason: reason_if(f.continue_, &f.continue_reasons),
            stop_hook_active: inputs.stop_hook_active,
            continue_refused: None,
        }),
        HookPoint::PostStream | HookPoint::PreQueueDrain | HookPoint::PostQueueDrain => {
            Decision::Observe {}
        }
    }
}

/// The replies folded in config order, before the point shapes them into its decision.
#[derive(Default)]
struct Folded {
    deny: bool,
    halt: bool,
    continue_: bool,
    deny_reasons: Vec<String>,
    halt_reasons: Vec<String>,
    continue_reasons: Vec<String>,
    context: Vec<String>,
    files: Vec<String>,
    updated_input: Option<Value>,
    updated_prompt: Option<String>,
}

impl Folded {
    fn fold(contribs: &[Contribution]) -> Folded {
        let mut f = Folded::default();
        for c in contribs {
            let r = &c.reply;
            let reason = |default: String| r.reason.clone().unwrap_or(default);
            if r.deny {
                f.deny = true;
                f.deny_reasons
                    .push(reason(format!("denied by hook `{}`", c.name)));
            }
            if r.halt {
                f.halt = true;
                f.halt_reasons
                    .push(reason(format!("halted by hook `{}`", c.name)));
            }
            if r.continue_ {
                f.continue_ = true;
                f.continue_reasons
                    .push(reason(format!("hook `{}` asks to keep working", c.name)));
            }
            f.context.extend(r.context.iter().cloned());
            f.files.extend(r.context_files.iter().cloned());
            if r.updated_input.is_some() {
                f.updated_input = r.updated_input.clone().map(Value::Object);
            }
            if r.updated_prompt.is_some() {
                f.updated_prompt = r.updated_prompt.clone();
            }
            if short_circuits(r) {
                break;
            }
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(json: &str, point: HookPoint) -> Reply {
        parse_reply(json, point.capabilities()).unwrap().unwrap()
    }

    fn c(name: &str, json: &str, point: HookPoint) -> Contribution {
        Contribution {
            name: name.into(),
            reply: reply(json, point),
        }
    }

    fn agg(contribs: &[Contribution], point: HookPoint) -> Decision {
        aggregate(
            contribs,
            Inputs {
                point,
                project_dir: Path::new("."),
                original_prompt: None,
                original_input: None,
                stop_hook_active: false,
            },
        )
    }

    #[test]
    fn fields_a_point_cannot_take_are_dropped_and_named() {
        let r = reply(
            r#"{"decision":"deny","updated_input":{},"context":"x","halt":true,"bogus":1}"#,
            HookPoint::PostStream,
        );
        assert!(!r.deny && !r.halt && r.context.is_empty() && r.updated_input.is_none());
        assert_eq!(
            r.ignored,
            ["bogus", "context", "decision", "halt", "updated_input"]
        );
        let r = reply(
            r#"{"updated_prompt":"p","continue":true}"#,
            HookPoint::PreTool,
        );
        assert_eq!(r.ignored, ["continue", "updated_prompt"]);
    }

    #[test]
    fn every_point_takes_exactly_what_its_capabilities_say() {
        let all = r#"{"decision":"deny","context":"c","updated_input":{},"updated_prompt":"p","halt":true,"continue":true,"context_files":["f"]}"#;
        for point in HookPoint::ALL {
            let caps = point.capabilities();
            let r = reply(all, point);
            let mut expected_ignored = Vec::new();
            for (field, allowed, applied) in [
                ("context", caps.add_context, !r.context.is_empty()),
                (
                    "context_files",
                    caps.add_context,
                    !r.context_files.is_empty(),
                ),
                ("continue", caps.continue_, r.continue_),
                ("decision", caps.deny, r.deny),
                ("halt", caps.halt, r.halt),
                (
                    "updated_input",
                    caps.replace_input,
                    r.updated_input.is_some(),
                ),
                (
                    "updated_prompt",
                    caps.update_prompt,
                    r.updated_prompt.is_some(),
                ),
            ] {
                assert_eq!(applied, allowed, "{field} at {point}");
                if !allowed {
                    expected_ignored.push(field.to_string());
                }
            }
            assert_eq!(r.ignored, expected_ignored, "{point}");
            // And the typed decision of the point has a place only for what it allows.
            let d = agg(
                &[Contribution {
                    name: "h".into(),
                    reply: r,
                }],
                point,
            );
            assert_eq!(d.blocks(), caps.deny || caps.halt, "{point}");
        }
    }

    #[test]
    fn non_json_output_is_not_a_reply_and_bad_json_is_an_error() {
        let caps = HookPoint::PreTool.capabilities();
        assert_eq!(parse_reply("formatted 3 files\n", caps).unwrap(), None);
        let e = parse_reply("{not json", caps).unwrap_err();
        assert!(matches!(e, ReplyError::NotJson(_)), "{e:?}");
        assert!(e
            .to_string()
            .starts_with("the reply is not a valid JSON object"));
        let e = parse_reply(r#"{"halt":"yes"}"#, caps).unwrap_err();
        assert!(
            matches!(&e, ReplyError::Field { key, expected: "true or false" } if key == "halt"),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "reply field `halt` must be true or false");
    }

    #[test]
    fn truth_table_of_two_decisions_at_pre_tool() {
        let p = HookPoint::PreTool;
        let replies = [
            ("none", r#"{}"#),
            ("allow", r#"{"decision":"allow"}"#),
            ("deny", r#"{"decision":"deny","reason":"no"}"#),
            ("halt", r#"{"halt":true,"reason":"stop"}"#),
            ("update", r#"{"updated_input":{"command":"ls"}}"#),
        ];
        for (n1, r1) in replies {
            for (n2, r2) in replies {
                let Decision::Tool(t) = agg(&[c("a", r1, p), c("b", r2, p)], p) else {
                    panic!()
                };
                let first_blocks = matches!(n1, "deny" | "halt");
                let deny = n1 == "deny" || (!first_blocks && n2 == "deny");
                let halt = n1 == "halt" || (!first_blocks && n2 == "halt");
                assert_eq!(t.deny, deny, "{n1} then {n2}");
                assert_eq!(t.base.halt, halt, "{n1} then {n2}");
                let update =
                    (n1 == "update" || (!first_blocks && n2 == "update")) && !deny && !halt;
                assert_eq!(t.updated_input.is_some(), update, "{n1} then {n2}");
                assert_eq!(t.synthetic_result.is_some(), deny, "{n1} then {n2}");
            }
        }
    }

    #[test]
    fn context_joins_in_order_and_is_capped() {
        let p = HookPoint::PostTool;
        let d = agg(
            &[
                c("a", r#"{"context":["one","two"]}"#, p),
                c("b", r#"{"context":"three"}"#, p),
            ],
            p,
        );
        assert_eq!(
            d,
            Decision::Context(ContextDecision {
                context: Some("one\ntwo\nthree".into()),
                ..Default::default()
            })
        );
        let big = format!(r#"{{"context":"{}"}}"#, "x".repeat(MAX_JOINED_CHARS + 5));
        let Decision::Context(d) = agg(&[c("a", &big, p)], p) else {
            panic!()
        };
        let text = d.context.unwrap();
        assert!(text.ends_with(TRUNCATED));
        assert_eq!(
            text.chars().count(),
            MAX_JOINED_CHARS + TRUNCATED.chars().count()
        );
    }

    #[test]
    fn last_writer_wins_for_prompts() {
        let p = HookPoint::PreSession;
        let Decision::Prompt(d) = agg(
            &[
                c("a", r#"{"updated_prompt":"1"}"#, p),
                c("b", r#"{"updated_prompt":"2"}"#, p),
            ],
            p,
        ) else {
            panic!()
        };
        assert_eq!(d.updated_prompt.as_deref(), Some("2"));
        let Decision::Prompt(d) = agg(
            &[
                c("a", r#"{"updated_prompt":"1"}"#, p),
                c("b", r#"{"decision":"deny"}"#, p),
            ],
            p,
        ) else {
            panic!()
        };
        assert!(d.deny && d.updated_prompt.is_none());
        assert_eq!(d.reason.as_deref(), Some("denied by hook `b`"));
    }
}
