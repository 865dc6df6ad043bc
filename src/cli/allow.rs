//! `hookd allow`: the gate's verdict on one command, as a hook or as the model's.

use super::error::Done;
use super::load::{load_for, print_warnings, ConfigArgs, GateArgs};
use super::out;
use hookd::config::Mode;
use hookd::gate::{self, Verdict};

/// `hookd allow`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(flatten)]
    pub(super) gate: GateArgs,
    /// Print {"allowed":bool,"reason":..,"hint":..} (with --model, also "parts": one
    /// verdict per simple command).
    #[arg(long)]
    pub(super) json: bool,
    /// Judge it as the model's shell command (gate_shell_tools): the agent's shell runs
    /// it, so `&&`, `||`, `;`, `|` and `|&` may join simple commands, each allowed on its
    /// own. Without it: as a hook command, which hookd runs itself, one simple command.
    #[arg(long)]
    pub(super) model: bool,
    /// The command, as one quoted string (several words are joined by spaces).
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub(super) command: Vec<String>,
}

/// `hookd allow`.
pub(super) fn run(a: Args) -> Done {
    allow(
        a.gate.cfg,
        a.gate.mode,
        a.json,
        a.model,
        &a.command.join(" "),
    )
}

pub(super) fn allow(cfg: ConfigArgs, mode: Mode, json: bool, model: bool, command: &str) -> Done {
    // Only the allow-list matters here: a broken hooks.yaml is a warning, not a stop.
    let config = load_for(cfg, true)?;
    print_warnings(&config);
    let gate = gate::Gate::new(&config.allow, config.allow_file.clone())
        .with_untrusted(&config.ignored_allow);
    let allowed = if model {
        let mut verdict = gate.model_verdict(command, mode);
        // The adapter's verdict: after the allow-list, hookd's own files and the agents'
        // settings, seen from here.
        if verdict.denied.is_none() {
            let cwd = std::env::current_dir().unwrap_or_else(|_| config.project_dir.clone());
            let own = gate::OwnFiles::from_process(
                &config.project_dir,
                &config.sources,
                config.config_dir.as_deref(),
            );
            verdict.denied = own.command(&verdict, &cwd);
        }
        if json {
            let mut v = match &verdict.denied {
                None => serde_json::json!({"allowed": true, "reason": null, "hint": null}),
                Some(d) => verdict_json(&gate::Verdict::Denied(d.clone())),
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
            out(&format!("{v}\n"));
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
            out(&text);
        }
        verdict.is_allowed()
    } else {
        let verdict = gate.verdict(command, mode);
        if json {
            out(&format!("{}\n", verdict_json(&verdict)));
        } else {
            match &verdict {
                Verdict::Allowed(a) => out(&format!(
                    "allowed\n  by `{}` ({})\n  runs {:?}\n",
                    a.entry.pattern, a.entry.origin, a.argv
                )),
                Verdict::Denied(d) => out(&format!(
                    "denied: {}: {}\n  hint: {}\n",
                    d.reason, d.detail, d.hint
                )),
            }
        }
        verdict.is_allowed()
    };
    if !allowed && !config.ignored_allow.is_empty() {
        eprintln!(
            "note: {} allow entr{} in this project's .infer/config.yaml {} ignored: the project is not trusted (`hookd check`, then `hookd trust`)",
            config.ignored_allow.len(),
            if config.ignored_allow.len() == 1 { "y" } else { "ies" },
            if config.ignored_allow.len() == 1 { "is" } else { "are" }
        );
    }
    Ok(if allowed { 0 } else { 1 })
}

/// One verdict as `hookd allow --json` prints it.
pub(super) fn verdict_json(verdict: &Verdict) -> serde_json::Value {
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
