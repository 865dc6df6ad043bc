//! `hooks.yaml`: command hooks, each a command at a hook point with a timeout.

use std::time::Duration;

use serde::Serialize;

use super::decode::Decoder;
use super::settings::Origin;
use super::yaml::Node;
use crate::catalog::HookPoint;

/// Seconds a hook may run when `timeout` is absent or 0.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;
/// The largest `timeout` accepted, in seconds (one hour).
pub const MAX_TIMEOUT_SECS: u64 = 3600;

const HOOK_KEYS: [&str; 4] = ["name", "hook", "command", "timeout"];

/// One command hook as configured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
    /// Where it was written.
    pub origin: Origin,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_secs())
}

/// The content of `hooks.yaml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HooksConfig {
    /// The feature flag: off unless the file or `INFER_HOOKS_ENABLED` says so.
    pub enabled: bool,
    /// In config order.
    pub hooks: Vec<HookSpec>,
}

pub(crate) fn decode(d: &mut Decoder<'_>, root: &Node) -> HooksConfig {
    let mut out = HooksConfig::default();
    let Some(top) = d.fields(root, "hooks.yaml", &["enabled", "hooks"]) else {
        return out;
    };
    if let Some(n) = top.get("enabled") {
        out.enabled = d.bool(n, "`enabled`").unwrap_or(false);
    }
    let Some(list) = top.get("hooks") else {
        return out;
    };
    let Some(items) = d.seq(list, "`hooks`") else {
        return out;
    };
    let mut names = super::decode::NameSet::default();
    for item in items {
        let unique = names.check(
            d,
            item,
            "hook",
            "events and `hookd check` refer to hooks by name",
        );
        if let Some(spec) = decode_hook(d, item) {
            if unique {
                out.hooks.push(spec);
            }
        }
    }
    out
}

fn decode_hook(d: &mut Decoder<'_>, item: &Node) -> Option<HookSpec> {
    let f = d.fields(item, "a hook", &HOOK_KEYS)?;
    let name = match f.get("name") {
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
    };
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
    let command = match f.get("command") {
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
    };
    let mut timeout = Some(Duration::from_secs(DEFAULT_TIMEOUT_SECS));
    if let Some(n) = f.get("timeout") {
        timeout = match d.int(n, "`timeout`") {
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
        };
    }
    Some(HookSpec {
        name: name?,
        hook: hook?,
        command: command?,
        timeout: timeout?,
        origin: Origin {
            file: d.file.clone(),
            line: item.pos.line,
        },
    })
}
