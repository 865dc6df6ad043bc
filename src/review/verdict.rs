//! `hookd allow`'s answer: the gate's verdict on one command, as words for people or as JSON.

use crate::config::{Config, Mode};
use crate::gate::{self, Verdict};
use std::path::Path;

/// A verdict as `hookd allow` prints it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct VerdictReport {
    /// Whether the command may run.
    pub allowed: bool,
    /// What to print: the verdict in words, or one line of JSON.
    pub text: String,
    /// For stderr: a refusal that an untrusted project's entries would have admitted.
    pub note: Option<String>,
}

impl VerdictReport {
    fn new(allowed: bool, text: String, config: &Config) -> Self {
        let ignored = config.ignored_allow.len();
        let note = (!allowed && ignored > 0).then(|| {
            format!(
                "note: {ignored} allow entr{} in this project's .infer/config.yaml {} ignored: the project is not trusted (`hookd check`, then `hookd trust`)",
                if ignored == 1 { "y" } else { "ies" },
                if ignored == 1 { "is" } else { "are" }
            )
        });
        VerdictReport {
            allowed,
            text,
            note,
        }
    }
}

/// The verdict on a hook's command: one simple command, which hookd runs itself.
pub fn command_verdict(config: &Config, command: &str, mode: Mode, json: bool) -> VerdictReport {
    let verdict = gate_of(config).verdict(command, mode);
    let text = match (&verdict, json) {
        (_, true) => format!("{}\n", verdict_json(&verdict)),
        (Verdict::Allowed(a), false) => format!(
            "allowed\n  by `{}` ({})\n  runs {:?}\n",
            a.entry.pattern, a.entry.origin, a.argv
        ),
        (Verdict::Denied(d), false) => {
            format!("denied: {}: {}\n  hint: {}\n", d.reason, d.detail, d.hint)
        }
    };
    VerdictReport::new(verdict.is_allowed(), text, config)
}

/// The verdict on the model's shell command, part by part, as the adapter gives it: after the
/// allow-list, hookd's own files and the agents' settings, seen from `cwd`.
pub fn model_verdict(
    config: &Config,
    command: &str,
    mode: Mode,
    cwd: &Path,
    json: bool,
) -> VerdictReport {
    let mut verdict = gate_of(config).model_verdict(command, mode);
    if verdict.denied.is_none() {
        let own = gate::OwnFiles::at(config.places());
        verdict.denied = own.command(&verdict, cwd);
    }
    let text = if json {
        let mut v = match &verdict.denied {
            None => serde_json::json!({"allowed": true, "reason": null, "hint": null}),
            Some(d) => verdict_json(&Verdict::Denied(d.clone())),
        };
        v["parts"] = verdict
            .parts
            .iter()
            .map(|p| {
                let mut part = verdict_json(&p.verdict);
                part["joint"] = serde_json::json!(p.joint);
                part["text"] = serde_json::json!(p.text);
                part
            })
            .collect();
        format!("{v}\n")
    } else {
        let mut text = match &verdict.denied {
            None => "allowed\n".to_string(),
            Some(d) => format!("denied: {}: {}\n  hint: {}\n", d.reason, d.detail, d.hint),
        };
        for (i, p) in verdict.parts.iter().enumerate() {
            let joint = p.joint.map(|j| format!("{j} ")).unwrap_or_default();
            let said = match &p.verdict {
                Verdict::Allowed(a) => {
                    format!("allowed by `{}` ({})", a.entry.pattern, a.entry.origin)
                }
                Verdict::Denied(d) => format!("denied: {}", d.reason),
            };
            text.push_str(&format!("  part {}: {joint}`{}`: {said}\n", i + 1, p.text));
        }
        text
    };
    VerdictReport::new(verdict.is_allowed(), text, config)
}

/// The gate of `config`, knowing the entries an untrusted project's file would add (to say so).
pub(super) fn gate_of(config: &Config) -> gate::Gate {
    gate::Gate::new(&config.allow, config.allow_file.clone()).with_untrusted(&config.ignored_allow)
}

/// One verdict as `hookd allow --json` prints it.
pub fn verdict_json(verdict: &Verdict) -> serde_json::Value {
    match verdict {
        Verdict::Allowed(a) => serde_json::json!({
            "allowed": true, "reason": null, "hint": null, "argv": a.argv,
            "entry": a.entry.pattern, "origin": a.entry.origin.to_string(),
        }),
        Verdict::Denied(d) => {
            serde_json::json!({"allowed": false, "reason": d.reason, "hint": d.hint, "detail": d.detail})
        }
    }
}
