//! `hookd trust`'s review: everything a project's files will be able to do once trusted.

use super::hooks::coverage_line;
use super::{plural, Around};
use crate::config::{self, Config, Fingerprint, Mode};
use crate::display::visible;
use crate::gate::{self, Verdict};

/// What trusting a project means, for the user to read before the record is written.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TrustReview {
    /// The review, ending with the fingerprint's line.
    pub text: String,
    /// What the trust record will hold.
    pub fingerprint: Fingerprint,
}

/// The review of `config`, loaded as if trusted; `None` when there is nothing to trust (no
/// project configuration, and none of the user's hooks runs the project's files).
pub fn trust_review(config: &Config, around: &Around) -> Option<TrustReview> {
    let fingerprint = config.fingerprint.clone()?;
    let project = &config.project_dir;
    let mut s = format!(
        "Trusting {}. Its files will be able to:\n",
        visible(&project.display().to_string())
    );
    s.push_str(&users_hooks(config, around));
    s.push_str(&project_hooks(config));
    s.push_str(&project_entries(config));
    let reminders: Vec<_> = config
        .reminders
        .reminders
        .iter()
        .filter(|r| from_project(&r.origin))
        .map(|r| visible(&r.name))
        .collect();
    s.push_str(&format!(
        "  inject {} reminder{} into the model's context{}\n",
        reminders.len(),
        plural(reminders.len()),
        if reminders.is_empty() {
            String::new()
        } else {
            format!(": {}", reminders.join(", "))
        }
    ));
    let keep = &config.hooks.project_env_keep;
    if !keep.is_empty() {
        s.push_str(&format!(
            "  keep its own variables in every hook's environment, yours included: {} (env.keep)\n",
            visible(&keep.names().join(", "))
        ));
    }
    // Not covered by trust (the agents read these files whatever hookd trusts), but what the
    // user is about to work with.
    let (seams, _) = super::lines::seam_lines(config, around);
    if !seams.is_empty() {
        s.push_str(&format!(
            "Beside its .infer/ (trust does not cover them), {seams}"
        ));
    }
    s.push_str(&format!(
        "Fingerprint sha256:{} over {}\n",
        fingerprint.sha256,
        visible(&fingerprint.files.join(", "))
    ));
    Some(TrustReview {
        text: s,
        fingerprint,
    })
}

fn from_project(o: &config::Origin) -> bool {
    o.source == config::Source::Project
}

/// The user's own hooks that run the project's files: trusting runs that code too.
fn users_hooks(config: &Config, around: &Around) -> String {
    let path = around.host.path();
    let mut s = String::new();
    for h in config
        .hooks
        .hooks
        .iter()
        .filter(|h| !from_project(&h.origin))
    {
        let Some(argv) = gate::argv_of(&h.command) else {
            continue;
        };
        let code = config::project_code(&config.project_dir, &argv, path);
        if !code.is_empty() {
            s.push_str(&format!(
                "  be run by your own hook {} `{}` ({}): {}\n",
                visible(&h.name),
                visible(&h.command),
                visible(&h.origin.to_string()),
                visible(&code.join(", "))
            ));
        }
    }
    s
}

/// The project's hooks, each with its verdict in mode standard and its code's coverage.
fn project_hooks(config: &Config) -> String {
    let gate = super::verdict::gate_of(config);
    let hooks: Vec<_> = config
        .hooks
        .hooks
        .iter()
        .filter(|h| from_project(&h.origin))
        .collect();
    let mut s = format!(
        "  run {} hook{}{}:\n",
        hooks.len(),
        plural(hooks.len()),
        if config.hooks.enabled {
            ""
        } else {
            " (hooks are disabled)"
        }
    );
    for h in &hooks {
        let verdict = match gate.verdict(&h.command, Mode::Standard) {
            Verdict::Allowed(a) => format!(
                "allowed by `{}` ({})",
                visible(&a.entry.pattern),
                visible(&a.entry.origin.to_string())
            ),
            Verdict::Denied(d) => format!("denied ({}) in mode standard", d.reason),
        };
        s.push_str(&format!(
            "    {:<16} {:<14} `{}`  {verdict}\n",
            h.hook.name(),
            visible(&h.name),
            visible(&h.command)
        ));
        if let Some(line) = coverage_line(config, &h.command) {
            s.push_str(&format!("      {line}\n"));
        }
    }
    s
}

/// The project's allow entries, the loud ones marked.
fn project_entries(config: &Config) -> String {
    let entries: Vec<_> = config
        .allow
        .all_entries()
        .filter(|e| from_project(&e.origin))
        .collect();
    let mut s = format!(
        "  allow {} command pattern{}:\n",
        entries.len(),
        plural(entries.len())
    );
    for e in &entries {
        let loud = match gate::unrestricted_probe(&e.pattern) {
            Some(probe) => format!("  UNRESTRICTED: admits `{probe}`"),
            None => gate::lint::lint_entry(&e.pattern)
                .iter()
                .find_map(|w| match w.kind {
                    gate::lint::LintKind::Wrapper => {
                        Some("  a wrapper: the command behind it must be allowed on its own")
                    }
                    gate::lint::LintKind::Interpreter => {
                        Some("  an interpreter: runs program text the gate does not read")
                    }
                    _ => None,
                })
                .unwrap_or_default()
                .to_string(),
        };
        s.push_str(&format!(
            "    {:<9} '{}' ({}){loud}\n",
            e.list.name(),
            visible(&e.pattern),
            visible(&e.origin.to_string())
        ));
    }
    s
}
