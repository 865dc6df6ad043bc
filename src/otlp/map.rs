//! hookd's dispatches and events as OpenTelemetry spans and log records.

use std::time::{SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::common::v1::{
    any_value, AnyValue, ArrayValue, KeyValue, KeyValueList,
};
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::trace::v1::{span, status, Span, Status};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::dispatch::Dispatched;
use crate::events::{Event, Stamped};

pub(crate) fn kv(key: &str, value: AnyValue) -> KeyValue {
    KeyValue {
        key: key.into(),
        value: Some(value),
        ..Default::default()
    }
}

/// The most of one string an attribute carries (commands, hooks' output, paths, reasons); the
/// rest is cut and said (see [`capped`]).
pub(crate) const FIELD_BYTES: usize = 4096;

/// The most items of one array an attribute carries; the rest are counted in a last item.
pub(crate) const FIELD_ITEMS: usize = 64;

/// `s` cut to [`FIELD_BYTES`] on a character boundary, ending with a visible marker that says
/// how much was left out: a collector's reader sees the field was cut, and where.
pub(crate) fn capped(s: String) -> String {
    if s.len() <= FIELD_BYTES {
        return s;
    }
    capped_str(&s)
}

/// [`capped`] from a borrowed string: only what is kept is copied (a cut `String` would keep
/// its whole allocation).
pub(crate) fn capped_str(s: &str) -> String {
    if s.len() <= FIELD_BYTES {
        return s.to_string();
    }
    let mut end = FIELD_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}… [hookd: {} more bytes not exported]",
        &s[..end],
        s.len() - end
    )
}

/// A string attribute value, capped ([`capped`]).
pub(crate) fn string(s: String) -> AnyValue {
    AnyValue {
        value: Some(any_value::Value::StringValue(capped(s))),
    }
}

fn boolean(b: bool) -> AnyValue {
    AnyValue {
        value: Some(any_value::Value::BoolValue(b)),
    }
}

fn int(n: i64) -> AnyValue {
    AnyValue {
        value: Some(any_value::Value::IntValue(n)),
    }
}

/// A JSON value as an attribute value: objects as key-value lists, arrays as arrays.
fn json(v: &Value) -> AnyValue {
    let value = match v {
        Value::Null => return string(String::new()),
        Value::Bool(b) => any_value::Value::BoolValue(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => any_value::Value::IntValue(i),
            None => any_value::Value::DoubleValue(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => any_value::Value::StringValue(capped_str(s)),
        Value::Array(a) => {
            let mut values: Vec<_> = a.iter().take(FIELD_ITEMS).map(json).collect();
            if a.len() > FIELD_ITEMS {
                values.push(string(format!(
                    "… [hookd: {} more items not exported]",
                    a.len() - FIELD_ITEMS
                )));
            }
            any_value::Value::ArrayValue(ArrayValue { values })
        }
        Value::Object(o) => {
            let mut values: Vec<_> = o
                .iter()
                .take(FIELD_ITEMS)
                .map(|(k, v)| kv(&capped_str(k), json(v)))
                .collect();
            if o.len() > FIELD_ITEMS {
                values.push(kv(
                    "…",
                    string(format!(
                        "[hookd: {} more keys not exported]",
                        o.len() - FIELD_ITEMS
                    )),
                ));
            }
            any_value::Value::KvlistValue(KeyValueList { values })
        }
    };
    AnyValue { value: Some(value) }
}

/// The trace of a session: the first 16 bytes of a SHA-256 of its id, so every process that
/// dispatches for the session (one-shot adapters, the daemon) puts its spans in one trace. A
/// dispatch without a session gets a trace of its own.
pub(crate) fn trace_id(session: &str) -> Vec<u8> {
    if session.is_empty() {
        return random(16);
    }
    Sha256::new()
        .chain_update(b"hookd-session\0")
        .chain_update(session.as_bytes())
        .finalize()[..16]
        .to_vec()
}

fn random(n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    if getrandom::fill(&mut b).is_err() || b.iter().all(|x| *x == 0) {
        // Never all zeros (an invalid id): a clock-derived one instead.
        let nanos = nanos(SystemTime::now()).to_le_bytes();
        for (i, x) in b.iter_mut().enumerate() {
            *x = nanos[i % 8] ^ (i as u8 + 1);
        }
    }
    b
}

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// An event's time.
fn at(e: &Stamped) -> u64 {
    humantime::parse_rfc3339(&e.timestamp).map_or_else(|_| nanos(SystemTime::now()), nanos)
}

/// The dispatch's span (named after its point) and one child per hook command, skipped hook
/// and gate denial.
pub(crate) fn spans(d: &Dispatched<'_>) -> Vec<Span> {
    let o = d.outcome;
    let mut root = Span {
        trace_id: trace_id(&o.session_id),
        span_id: random(8),
        name: d.point.name().into(),
        kind: span::SpanKind::Internal as i32,
        start_time_unix_nano: nanos(d.started),
        end_time_unix_nano: nanos(d.ended),
        attributes: vec![
            kv("hookd.point", string(d.point.name().into())),
            kv("hookd.session_id", string(o.session_id.clone())),
            kv(
                "hookd.project",
                string(d.config.project_dir.display().to_string()),
            ),
            kv("hookd.mode", string(o.mode.name().into())),
            kv("hookd.turn", int(i64::try_from(o.turn).unwrap_or(i64::MAX))),
            kv("hookd.commands", int(o.commands.len() as i64)),
            kv("hookd.reminders", int(o.reminders.len() as i64)),
        ],
        ..Default::default()
    };
    let mut out = Vec::new();
    for e in d.events {
        let end = at(e);
        let child = match &e.event {
            Event::HookCommand(h) => hook_span(h, d, end),
            Event::HookCommandSkipped(h) => Span {
                start_time_unix_nano: end,
                end_time_unix_nano: end,
                name: h.name.clone(),
                attributes: vec![
                    kv("hookd.hook.name", string(h.name.clone())),
                    kv("process.command", string(h.command.clone())),
                    kv("hookd.skipped", boolean(true)),
                    kv("hookd.cause", string(h.reason.as_str().into())),
                ],
                ..Default::default()
            },
            Event::ToolCommandDenied(t) => {
                root.attributes
                    .push(kv("hookd.cause", string(t.reason.as_str().into())));
                // A file tool names a path, a shell tool a command: each its own attribute.
                let named = match &t.path {
                    Some(path) => kv("hookd.tool.path", string(path.clone())),
                    None => kv("hookd.tool.command", string(t.command.clone())),
                };
                Span {
                    start_time_unix_nano: end,
                    end_time_unix_nano: end,
                    name: "tool_command_denied".into(),
                    attributes: vec![
                        kv("hookd.tool.name", string(t.tool.clone())),
                        named,
                        kv("hookd.cause", string(t.reason.as_str().into())),
                    ],
                    ..Default::default()
                }
            }
            Event::NetworkRequest(n) => network_span(n, end),
            _ => continue,
        };
        out.push(Span {
            trace_id: root.trace_id.clone(),
            span_id: random(8),
            parent_span_id: root.span_id.clone(),
            kind: span::SpanKind::Internal as i32,
            ..child
        });
    }
    out.insert(0, root);
    out
}

/// A confined model call's connections (`hookd exec`'s, reported when it ended at `ended`): per
/// session, an `exec` span in the session's trace from the first connection's start to
/// `ended`, one child per connection.
pub(crate) fn exec_spans(
    connections: &[crate::events::NetworkRequest],
    ended: SystemTime,
) -> Vec<Span> {
    let end = nanos(ended);
    let mut out = Vec::new();
    let mut sessions: Vec<&str> = connections.iter().map(|c| c.session_id.as_str()).collect();
    sessions.sort_unstable();
    sessions.dedup();
    for session in sessions {
        let mine = connections.iter().filter(|c| c.session_id == session);
        let children: Vec<Span> = mine.map(|n| network_span(n, end)).collect();
        let start = children.iter().map(|c| c.start_time_unix_nano).min();
        let root = Span {
            trace_id: trace_id(session),
            span_id: random(8),
            name: "exec".into(),
            kind: span::SpanKind::Internal as i32,
            start_time_unix_nano: start.unwrap_or(end),
            end_time_unix_nano: end,
            attributes: vec![
                kv(
                    "hookd.point",
                    string(crate::catalog::HookPoint::PreTool.name().into()),
                ),
                kv("hookd.session_id", string(session.into())),
                kv("hookd.hook.name", string("exec".into())),
            ],
            ..Default::default()
        };
        let (trace, parent) = (root.trace_id.clone(), root.span_id.clone());
        out.push(root);
        out.extend(children.into_iter().map(|child| Span {
            trace_id: trace.clone(),
            span_id: random(8),
            parent_span_id: parent.clone(),
            kind: span::SpanKind::Internal as i32,
            ..child
        }));
    }
    out
}

/// A connection through hookd's proxy, ending when its event was written (`end`).
fn network_span(n: &crate::events::NetworkRequest, end: u64) -> Span {
    Span {
        start_time_unix_nano: end.saturating_sub(n.duration_ms.saturating_mul(1_000_000)),
        end_time_unix_nano: end,
        name: format!("{} {}:{}", n.verdict, n.host, n.port),
        attributes: vec![
            kv("hookd.hook.name", string(n.name.clone())),
            kv("server.address", string(n.host.clone())),
            kv("server.port", int(n.port.into())),
            kv("hookd.network.verdict", string(n.verdict.clone())),
            kv(
                "hookd.network.bytes_out",
                int(i64::try_from(n.bytes_out).unwrap_or(i64::MAX)),
            ),
            kv(
                "hookd.network.bytes_in",
                int(i64::try_from(n.bytes_in).unwrap_or(i64::MAX)),
            ),
            kv("hookd.cause", string(n.reason.clone())),
        ],
        ..Default::default()
    }
}

/// A hook's run, from its measured start to its end (`started_at` and `duration_ns`); an event
/// without them (an embedder's own) is taken to end when it was written (`written`).
fn hook_span(h: &crate::events::HookCommand, d: &Dispatched<'_>, written: u64) -> Span {
    let (start, end) = match humantime::parse_rfc3339(&h.started_at) {
        Ok(t) => (nanos(t), nanos(t).saturating_add(h.duration_ns)),
        Err(_) => (
            written.saturating_sub(h.duration_ms.saturating_mul(1_000_000)),
            written,
        ),
    };
    let timeout = d
        .config
        .hooks
        .hooks
        .iter()
        .find(|s| s.name == h.name)
        .map_or(0, |s| s.timeout.as_secs());
    let failed = h.exit_code != 0 || !h.error.is_empty();
    Span {
        name: h.name.clone(),
        start_time_unix_nano: start,
        end_time_unix_nano: end,
        attributes: vec![
            kv("hookd.hook.name", string(h.name.clone())),
            kv("process.command", string(h.command.clone())),
            kv("process.command_args", json(&serde_json::json!(h.argv))),
            kv("process.exit.code", int(h.exit_code.into())),
            kv(
                "hookd.hook.timeout_s",
                int(i64::try_from(timeout).unwrap_or(i64::MAX)),
            ),
            kv(
                "hookd.hook.duration_ms",
                int(i64::try_from(h.duration_ms).unwrap_or(i64::MAX)),
            ),
            kv(
                "hookd.hook.duration_ns",
                int(i64::try_from(h.duration_ns).unwrap_or(i64::MAX)),
            ),
        ],
        status: failed.then(|| Status {
            code: status::StatusCode::Error as i32,
            message: if h.error.is_empty() {
                format!("exit {}", h.exit_code)
            } else {
                capped(h.error.clone())
            },
        }),
        ..Default::default()
    }
}

/// The severity of an event: warnings for refusals, errors for failures, info otherwise.
fn severity(e: &Event) -> (i32, &'static str) {
    match e {
        Event::HookCommand(h) if h.exit_code != 0 || !h.error.is_empty() => (17, "ERROR"),
        Event::ConfigError(_) => (17, "ERROR"),
        Event::HookCommandSkipped(_)
        | Event::ToolCommandDenied(_)
        | Event::ClientRefused(_)
        | Event::ContinueRefused(_) => (13, "WARN"),
        Event::NetworkRequest(n) if n.verdict != "allowed" => (13, "WARN"),
        _ => (9, "INFO"),
    }
}

/// An event as a log record: its type as the event name and body, every field an attribute
/// (`hookd.FIELD`), in its session's trace.
pub(crate) fn log_record(e: &Stamped) -> LogRecord {
    let fields = serde_json::to_value(e).unwrap_or_default();
    let kind = e.event.kind();
    let (number, text) = severity(&e.event);
    let session = e.event.session_id().unwrap_or_default();
    LogRecord {
        time_unix_nano: at(e),
        observed_time_unix_nano: nanos(SystemTime::now()),
        severity_number: number,
        severity_text: text.into(),
        body: Some(string(kind.into())),
        event_name: format!("hookd.{kind}"),
        trace_id: if session.is_empty() {
            Vec::new()
        } else {
            trace_id(session)
        },
        attributes: fields
            .as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| kv(&format!("hookd.{k}"), json(v)))
                    .collect()
            })
            .unwrap_or_default(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_field_is_cut_on_a_character_boundary_with_a_marker() {
        assert_eq!(capped("short".into()), "short");
        // A 3-byte character straddles the limit: the cut is before it.
        let s = format!("{}€{}", "a".repeat(FIELD_BYTES - 1), "b".repeat(10_000));
        let cut = capped(s.clone());
        assert_eq!(
            cut,
            format!(
                "{}… [hookd: {} more bytes not exported]",
                "a".repeat(FIELD_BYTES - 1),
                s.len() - (FIELD_BYTES - 1)
            )
        );
        let many = serde_json::json!((0..100).collect::<Vec<_>>());
        let Some(any_value::Value::ArrayValue(a)) = json(&many).value else {
            panic!("an array")
        };
        assert_eq!(a.values.len(), FIELD_ITEMS + 1);
        assert_eq!(
            a.values[FIELD_ITEMS].value,
            Some(any_value::Value::StringValue(
                "… [hookd: 36 more items not exported]".into()
            ))
        );
    }
}
