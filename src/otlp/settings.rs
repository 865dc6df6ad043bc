//! Where and how to export, from the standard OpenTelemetry variables (read by the caller, so
//! the library never reads the process itself): `OTEL_EXPORTER_OTLP_ENDPOINT`, the per-signal
//! `…_TRACES_ENDPOINT` / `…_LOGS_ENDPOINT`, `…_HEADERS` (and per signal), `…_TIMEOUT`,
//! `…_PROTOCOL`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_SDK_DISABLED`,
//! `OTEL_TRACES_EXPORTER` / `OTEL_LOGS_EXPORTER` (`none`).

use std::time::Duration;

/// One signal's destination.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// `host:port`, for the connection and the `Host` header.
    pub authority: String,
    /// The request path, e.g. `/v1/traces`.
    pub path: String,
    /// Headers sent with every export.
    pub headers: Vec<(String, String)>,
}

/// What to export, where.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Settings {
    /// Spans go here (`None`: no traces).
    pub traces: Option<Target>,
    /// Log records go here (`None`: no logs).
    pub logs: Option<Target>,
    /// The resource: `service.name` and the rest of `OTEL_RESOURCE_ATTRIBUTES`.
    pub resource: Vec<(String, String)>,
    /// Each export's bound (`OTEL_EXPORTER_OTLP_TIMEOUT`, default 10 s).
    pub timeout: Duration,
    /// Whether `OTEL_EXPORTER_OTLP_TIMEOUT` was set (one-shot processes otherwise use a few ms).
    pub timeout_given: bool,
    /// Where each setting came from, for `hookd check`: the variable's name, or the
    /// configuration's key and file:line ([`Settings::from_sources`]).
    pub origins: Vec<String>,
}

/// Why the variables set no export, for `hookd check` and the daemon's start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// Not `http://host[:port][/path]`.
    #[error("{var}=`{value}`: hookd exports OTLP over plain HTTP (http://host:port); for https, run an OpenTelemetry Collector on this machine and point hookd at it")]
    Endpoint {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// A protocol other than http/protobuf.
    #[error("OTEL_EXPORTER_OTLP_PROTOCOL=`{0}`: hookd exports http/protobuf only; unset it or set it to http/protobuf")]
    Protocol(String),
}

impl Settings {
    /// The settings the variables give (`lookup` reads one), `Ok(None)` when they set no
    /// endpoint or disable the SDK.
    pub fn from_vars(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Settings>, SettingsError> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        if let Some(p) = var("OTEL_EXPORTER_OTLP_PROTOCOL") {
            if p.trim() != "http/protobuf" {
                return Err(SettingsError::Protocol(p));
            }
        }
        let base = var("OTEL_EXPORTER_OTLP_ENDPOINT");
        let headers = parse_pairs(&var("OTEL_EXPORTER_OTLP_HEADERS").unwrap_or_default());
        let signal = |own: &'static str, exporter: &str, own_headers: &str, path: &str| {
            if var(exporter).is_some_and(|v| v.trim() == "none") {
                return Ok(None);
            }
            // A per-signal endpoint is used as written; the base gets the signal's path.
            let (name, url, full) = match (var(own), &base) {
                (Some(u), _) => (own, u, true),
                (None, Some(b)) => ("OTEL_EXPORTER_OTLP_ENDPOINT", b.clone(), false),
                (None, None) => return Ok(None),
            };
            let mut target = parse_url(&url).ok_or(SettingsError::Endpoint {
                var: name,
                value: url.clone(),
            })?;
            if !full {
                target.path = format!("{}{path}", target.path.trim_end_matches('/'));
            }
            target.headers = headers.clone();
            for (k, v) in parse_pairs(&var(own_headers).unwrap_or_default()) {
                target.headers.retain(|(h, _)| !h.eq_ignore_ascii_case(&k));
                target.headers.push((k, v));
            }
            Ok(Some(target))
        };
        let traces = signal(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "OTEL_TRACES_EXPORTER",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
            "/v1/traces",
        )?;
        let logs = signal(
            "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
            "OTEL_LOGS_EXPORTER",
            "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
            "/v1/logs",
        )?;
        if traces.is_none() && logs.is_none() {
            return Ok(None);
        }
        let mut resource = parse_pairs(&var("OTEL_RESOURCE_ATTRIBUTES").unwrap_or_default());
        let service = var("OTEL_SERVICE_NAME")
            .or_else(|| {
                resource
                    .iter()
                    .find(|(k, _)| k == "service.name")
                    .map(|(_, v)| v.clone())
            })
            .unwrap_or_else(|| "hookd".into());
        resource.retain(|(k, _)| k != "service.name");
        resource.insert(0, ("service.name".into(), service));
        if !resource.iter().any(|(k, _)| k == "service.version") {
            resource.push(("service.version".into(), env!("CARGO_PKG_VERSION").into()));
        }
        let timeout_ms =
            var("OTEL_EXPORTER_OTLP_TIMEOUT").and_then(|t| t.trim().parse::<u64>().ok());
        Ok(Some(Settings {
            traces,
            logs,
            resource,
            timeout: Duration::from_millis(timeout_ms.unwrap_or(10_000)),
            timeout_given: timeout_ms.is_some(),
            origins: Vec::new(),
        }))
    }

    /// As [`Settings::from_vars`], each variable from `env` when it holds something, else from
    /// `file` (a configuration's value and where it was written: `config.yaml`'s
    /// `telemetry:`), the origins kept for [`Settings::describe`].
    pub fn from_sources(
        env: impl Fn(&str) -> Option<String>,
        file: impl Fn(&str) -> Option<(String, String)>,
    ) -> Result<Option<Settings>, SettingsError> {
        let used = std::cell::RefCell::new(Vec::<String>::new());
        let lookup = |name: &str| {
            let (value, origin) = match env(name).filter(|v| !v.trim().is_empty()) {
                Some(v) => (v, name.to_string()),
                None => file(name)?,
            };
            let mut used = used.borrow_mut();
            if !used.contains(&origin) {
                used.push(origin);
            }
            Some(value)
        };
        let settings = Self::from_vars(lookup)?;
        Ok(settings.map(|mut s| {
            s.origins = used.take();
            s
        }))
    }

    /// With the machine's `host.name` in the resource, unless the variables named one.
    pub fn with_host_name(mut self) -> Self {
        if !self.resource.iter().any(|(k, _)| k == "host.name") {
            if let Ok(host) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
                self.resource
                    .push(("host.name".into(), host.trim().to_string()));
            }
        }
        self
    }
}

impl Settings {
    /// One line for `hookd check`: where traces and logs go, as whom (header values are not
    /// shown: they are often tokens).
    pub fn describe(&self) -> String {
        let to = |t: &Option<Target>| match t {
            Some(t) => format!("http://{}{}", t.authority, t.path),
            None => "not exported".into(),
        };
        let service = self
            .resource
            .iter()
            .find(|(k, _)| k == "service.name")
            .map_or("hookd", |(_, v)| v.as_str());
        let mut headers: Vec<&str> = Vec::new();
        for t in self.traces.iter().chain(&self.logs) {
            for (k, _) in &t.headers {
                if !headers.contains(&k.as_str()) {
                    headers.push(k);
                }
            }
        }
        let mut line = format!(
            "traces to {}, logs to {}, as service `{service}`",
            to(&self.traces),
            to(&self.logs)
        );
        if !headers.is_empty() {
            line.push_str(&format!(" (headers: {})", headers.join(", ")));
        }
        if !self.origins.is_empty() {
            line.push_str(&format!("\n  set by {}", self.origins.join(", ")));
        }
        line
    }
}

/// `http://host[:port][/path]` → the target (port 80 when none; https is not spoken).
fn parse_url(url: &str) -> Option<Target> {
    let rest = url.trim().strip_prefix("http://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let authority = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    Some(Target {
        authority,
        path: path.to_string(),
        headers: Vec::new(),
    })
}

/// `k=v,k2=v2` with percent-encoded values (the W3C Baggage form the specification uses).
fn parse_pairs(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            let (k, v) = (k.trim(), percent_decode(v.trim()));
            (!k.is_empty()).then(|| (k.to_string(), v))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|c| hex(*c)),
            b.get(i + 2).and_then(|c| hex(*c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<Option<Settings>, SettingsError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::from_vars(|n| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()))
    }

    #[test]
    fn the_standard_variables_set_targets_headers_and_the_resource() {
        assert_eq!(from(&[]), Ok(None));
        let s = from(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            (
                "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
                "http://logs:9000/ingest",
            ),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "authorization=Bearer%20abc,x-team=a",
            ),
            ("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "x-team=b"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment=ci,service.name=agents",
            ),
        ])
        .unwrap()
        .unwrap();
        let traces = s.traces.unwrap();
        assert_eq!(
            (traces.authority.as_str(), traces.path.as_str()),
            ("collector:4318", "/v1/traces")
        );
        assert_eq!(
            traces.headers[0],
            ("authorization".into(), "Bearer abc".into())
        );
        let logs = s.logs.unwrap();
        assert_eq!(
            (logs.authority.as_str(), logs.path.as_str()),
            ("logs:9000", "/ingest")
        );
        assert_eq!(logs.headers[1], ("x-team".into(), "b".into()));
        assert_eq!(s.resource[0], ("service.name".into(), "agents".into()));
        assert_eq!(
            s.resource[1],
            ("deployment.environment".into(), "ci".into())
        );
        assert_eq!(
            from(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_SDK_DISABLED", "true")
            ]),
            Ok(None)
        );
        let only_logs = from(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"),
            ("OTEL_TRACES_EXPORTER", "none"),
        ])
        .unwrap()
        .unwrap();
        assert!(only_logs.traces.is_none());
        assert_eq!(only_logs.logs.unwrap().authority, "c:80");
        assert!(matches!(
            from(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c:4318")]),
            Err(SettingsError::Endpoint { .. })
        ));
        assert!(matches!(
            from(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
            ]),
            Err(SettingsError::Protocol(_))
        ));
    }
}
