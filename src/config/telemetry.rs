//! `config.yaml`'s `telemetry:`: where hookd's OpenTelemetry export goes, read from the user's
//! own file only (a project's could send your sessions' events to its collector), as the
//! standard `OTEL_*` variables each key stands for; the variables themselves, read by the
//! caller, win key by key. Written here, it reaches hooks whose agent strips `OTEL_*`.

use super::decode::Decoder;
use super::diag::{Diagnostic, Severity};
use super::yaml::{Node, NodeKind};
use super::{LoadOptions, Source};

/// Each key of `telemetry:` and the variable it stands for.
pub(crate) const KEYS: [(&str, &str); 6] = [
    ("endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT"),
    ("headers", "OTEL_EXPORTER_OTLP_HEADERS"),
    ("service_name", "OTEL_SERVICE_NAME"),
    ("resource_attributes", "OTEL_RESOURCE_ATTRIBUTES"),
    ("timeout", "OTEL_EXPORTER_OTLP_TIMEOUT"),
    ("protocol", "OTEL_EXPORTER_OTLP_PROTOCOL"),
];

/// The longest `telemetry.timeout` accepted, in milliseconds (one minute).
pub(crate) const MAX_TIMEOUT_MS: i64 = 60_000;

/// One setting of `telemetry:`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TelemetrySetting {
    /// The variable it stands for (`OTEL_EXPORTER_OTLP_ENDPOINT`, …), in the variable's form.
    pub var: &'static str,
    /// Its value, as that variable would hold it (`headers` as `k=v,k2=v2`, percent-encoded).
    pub value: String,
    /// Where it was written: `telemetry.KEY (FILE:LINE)`.
    pub origin: String,
}

/// The user's `telemetry:` as [`telemetry`] read it.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct Telemetry {
    /// The settings that were valid (an invalid one is left out, and reported).
    pub settings: Vec<TelemetrySetting>,
    /// What was wrong (warnings: telemetry never stops a dispatch; `hookd check` shows them).
    pub problems: Vec<Diagnostic>,
}

impl Telemetry {
    /// The setting standing for `var`: its value and where it was written.
    pub fn get(&self, var: &str) -> Option<(String, String)> {
        self.settings
            .iter()
            .find(|s| s.var == var)
            .map(|s| (s.value.clone(), s.origin.clone()))
    }
}

/// The `telemetry:` of the user's own `config.yaml` (`~/.infer/`, or `--config-dir`'s): never
/// a project's. Reads that one file only, so a one-shot adapter that a daemon answers pays
/// little for it.
pub fn telemetry(opts: &LoadOptions) -> Telemetry {
    let Some((dir, source)) = super::load::layers(opts)
        .into_iter()
        .find(|(_, s)| *s != Source::Project)
    else {
        return Telemetry::default();
    };
    let path = dir.join("config.yaml");
    let name = path.display().to_string();
    let limit = super::yaml::Limits::default().max_bytes as u64;
    let Ok(bytes) = super::fsread::read_regular(&path, limit) else {
        return Telemetry::default();
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return Telemetry::default();
    };
    let Ok(Some(root)) = super::yaml::parse(&text, super::yaml::Limits::default()) else {
        return Telemetry::default();
    };
    let Some((key, node)) = super::settings::child_at(&root, "telemetry") else {
        return Telemetry::default();
    };
    let mut d = Decoder::new(name, &text, source);
    let settings = decode(&mut d, key, node);
    Telemetry {
        settings,
        problems: d.diags,
    }
}

/// `telemetry:` in a `config.yaml`. A project's is refused with a warning at its line; the
/// user's is read, each problem a warning and the setting left out.
pub(crate) fn decode(d: &mut Decoder<'_>, key: &Node, node: &Node) -> Vec<TelemetrySetting> {
    if d.origin_source == Source::Project {
        d.warn(
            key.pos,
            "a project's `telemetry:` is ignored: it could send your sessions' events to another collector".into(),
            Some("set `telemetry:` in your own ~/.infer/config.yaml".into()),
        );
        return Vec::new();
    }
    let first = d.diags.len();
    let out = settings(d, node);
    for diag in &mut d.diags[first..] {
        diag.severity = Severity::Warning;
    }
    out
}

fn settings(d: &mut Decoder<'_>, node: &Node) -> Vec<TelemetrySetting> {
    let names = super::shape::TELEMETRY.names();
    let what = "`telemetry` (hookd exports OTLP over plain HTTP with protobuf)";
    let Some(f) = d.fields(node, what, &names) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, var) in KEYS {
        let Some(n) = f.get(key) else { continue };
        let value = match key {
            "headers" | "resource_attributes" => pairs(d, n, key),
            "timeout" => d.int(n, "`telemetry.timeout`").and_then(|ms| {
                let ok = (1..=MAX_TIMEOUT_MS).contains(&ms);
                if !ok {
                    let why = format!(
                        "`telemetry.timeout` must be 1 to {MAX_TIMEOUT_MS} milliseconds, not {ms}"
                    );
                    d.error(n.pos, why, None);
                }
                ok.then(|| ms.to_string())
            }),
            _ => scalar(d, n, key),
        };
        if let Some(value) = value {
            out.push(TelemetrySetting {
                var,
                value,
                origin: format!("telemetry.{key} ({}:{})", d.file, n.pos.line),
            });
        }
    }
    out
}

/// `endpoint`, `service_name`, `protocol`: text, checked as the exporter would.
fn scalar(d: &mut Decoder<'_>, n: &Node, key: &str) -> Option<String> {
    let value = d
        .string(n, &format!("`telemetry.{key}`"))?
        .trim()
        .to_string();
    let problem = match key {
        "endpoint" if !plain_http(&value) => Some((
            format!("`telemetry.endpoint` `{value}`: hookd exports OTLP over plain HTTP (http://host:port)"),
            "for https, run an OpenTelemetry Collector on this machine and point hookd at it",
        )),
        "protocol" if value != "http/protobuf" => Some((
            format!("`telemetry.protocol` `{value}`: hookd exports http/protobuf only"),
            "remove the key or write `http/protobuf`",
        )),
        _ if value.is_empty() => Some((format!("`telemetry.{key}` is empty"), "remove the key")),
        _ => None,
    };
    match problem {
        Some((message, help)) => {
            d.error(n.pos, message, Some(help.into()));
            None
        }
        None => Some(value),
    }
}

/// `http://host[:port][/path]`, as the exporter takes it.
fn plain_http(url: &str) -> bool {
    url.strip_prefix("http://")
        .map(|rest| rest.split('/').next().unwrap_or(""))
        .is_some_and(|host| !host.is_empty() && !host.contains('@'))
}

/// A mapping of names to texts, as the variables' `k=v,k2=v2` with values percent-encoded.
fn pairs(d: &mut Decoder<'_>, n: &Node, key: &str) -> Option<String> {
    let NodeKind::Map(entries) = &n.kind else {
        let found = n.describe();
        d.error(
            n.pos,
            format!("expected `telemetry.{key}` to be a mapping of names to texts, found {found}"),
            None,
        );
        return None;
    };
    let mut out = Vec::new();
    for (k, v) in entries {
        let (Some(name), Some(value)) = (d.string(k, "a name"), d.string(v, "a value")) else {
            continue;
        };
        if name.is_empty() || name.contains([',', '=', ' ', '\r', '\n', ':']) {
            d.error(
                k.pos,
                format!("`telemetry.{key}`: `{name}` is not a valid name"),
                None,
            );
            continue;
        }
        out.push(format!("{name}={}", percent_encode(&value)));
    }
    (!out.is_empty()).then(|| out.join(","))
}

fn percent_encode(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/:;+".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str, source: Source) -> (Vec<TelemetrySetting>, Vec<Diagnostic>) {
        let root = super::super::yaml::parse(text, Default::default())
            .unwrap()
            .unwrap();
        let (key, node) = super::super::settings::child_at(&root, "telemetry").unwrap();
        let mut d = Decoder::new("c.yaml", text, source);
        let out = decode(&mut d, key, node);
        (out, d.diags)
    }

    #[test]
    fn keys_become_the_variables_they_stand_for() {
        let (s, problems) = read(
            "telemetry:\n  endpoint: http://c:4318\n  headers: {authorization: 'Bearer a,b'}\n  timeout: 500\n  resource_attributes: {team: x}\n",
            Source::Home,
        );
        assert!(problems.is_empty(), "{problems:?}");
        let got: Vec<_> = s.iter().map(|s| (s.var, s.value.as_str())).collect();
        assert_eq!(
            got,
            [
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20a%2Cb"),
                ("OTEL_RESOURCE_ATTRIBUTES", "team=x"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "500"),
            ]
        );
        assert_eq!(s[0].origin, "telemetry.endpoint (c.yaml:2)");
    }

    #[test]
    fn what_the_exporter_cannot_do_is_refused_and_a_project_is_never_read() {
        let (s, problems) = read(
            "telemetry:\n  endpoint: https://c\n  protocol: grpc\n  compression: gzip\n",
            Source::Home,
        );
        assert!(s.is_empty());
        let said: Vec<_> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(said, [
            "unknown key `compression` in `telemetry` (hookd exports OTLP over plain HTTP with protobuf) is ignored",
            "`telemetry.endpoint` `https://c`: hookd exports OTLP over plain HTTP (http://host:port)",
            "`telemetry.protocol` `grpc`: hookd exports http/protobuf only",
        ]);
        assert!(problems.iter().all(|p| !p.is_error()));
        let (s, problems) = read("telemetry:\n  endpoint: http://evil\n", Source::Project);
        assert!(s.is_empty());
        assert_eq!((problems[0].line, problems[0].is_error()), (1, false));
    }
}
