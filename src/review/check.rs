//! `hookd check`'s report: every allow entry compiled and linted, what is in effect, and per
//! hook point what would run, be refused or skipped.

use super::hooks::point_sections;
use super::lines::{environment_lines, missing_installs, sandbox_line, seam_lines, trust_line};
use super::{plural, Around};
use crate::config::{Config, Mode};
use crate::dispatch::Engine;
use crate::display::visible;
use crate::gate;

/// What `hookd check` says of a configuration that loaded.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct CheckReport {
    /// Allow entries that cannot be compiled, one block each, then their count: the
    /// configuration is invalid and the rest of the report is empty.
    pub invalid: Option<String>,
    /// Entries that cannot mean what their author meant, installs that cannot start (stderr).
    pub warnings: Vec<String>,
    /// Notes on entries (wrappers: the command behind one must be allowed on its own).
    pub notes: Vec<String>,
    /// The report proper (stdout).
    pub text: String,
    /// Why hooks would not run (refused, skipped, switched off, shadowed, missing), for `--strict`: one
    /// line per hook, or per file or kernel that stops several.
    pub refused: Vec<String>,
    /// What the project's agent files do around hookd (a start-up variable, hooks switched
    /// off, hooks of their own, a bypass mode), for `--strict`.
    pub seams: Vec<String>,
    /// How many hooks would not run.
    pub not_run: usize,
    /// Keys hookd ignores (warnings to the loader, errors to an editor with hookd's schema),
    /// for `--strict`: one line each, `file:line:col: key`.
    pub ignored_keys: Vec<String>,
}

/// Review `config` for `mode`.
pub fn check(config: Config, mode: Mode, around: &Around) -> CheckReport {
    let errors = compile_errors(&config);
    if !errors.is_empty() {
        let n = errors.len();
        let invalid = format!(
            "{}\n\nhookd: the configuration has {n} error{}",
            errors.join("\n\n"),
            plural(n)
        );
        return CheckReport {
            invalid: Some(invalid),
            ..CheckReport::default()
        };
    }
    let ignored_keys = (config.warnings.iter())
        .filter(|d| d.is_ignored_key())
        .map(|d| visible(&format!("{}: {}", d.location(), d.message)).into_owned())
        .collect();
    let (mut warnings, notes) = lint(&config);
    let mut all = missing_installs(around);
    all.append(&mut warnings);
    let engine = Engine::builder(config).build();
    let config = engine.config();
    let mut refused: Vec<String> = config
        .hooks
        .off
        .iter()
        .map(|o| visible(o).into_owned())
        .collect();
    let mut text = in_effect(config, &refused, around);
    let (line, cannot) = sandbox_line(config);
    text.push_str(&line);
    let confined_out = cannot.is_some();
    refused.extend(cannot);
    refused.extend(config.hooks.shadowed.iter().cloned());
    let (lines, seams) = seam_lines(config, around);
    text.push_str(&lines);
    if let Some(t) = &around.telemetry {
        text.push_str(&format!("OpenTelemetry: {t}\n"));
    }
    let entries = config.allow.for_mode(mode).count();
    text.push_str(&format!(
        "allow-list for mode {mode}: {entries} entr{}\n",
        if entries == 1 { "y" } else { "ies" }
    ));
    let (sections, hooks_not_run) = point_sections(&engine, mode, around, &mut refused);
    text.push_str(&sections);
    // A kernel that cannot confine them skips every hook that is on.
    let not_run = config.hooks.off_hooks
        + config.hooks.shadowed.len()
        + if confined_out {
            config.hooks.hooks.len()
        } else {
            hooks_not_run
        };
    let warned = config.warnings.len() + all.len();
    text.push_str(&format!(
        "\nhookd check: configuration is valid ({warned} warning{})\n",
        plural(warned)
    ));
    CheckReport {
        invalid: None,
        warnings: all,
        notes,
        text,
        refused,
        seams,
        not_run,
        ignored_keys,
    }
}

/// Loading only checks syntax; `check` compiles every entry, as the gate will.
fn compile_errors(config: &Config) -> Vec<String> {
    config
        .allow
        .all_entries()
        .filter_map(|e| {
            gate::compile_entry(&e.pattern).err().map(|err| {
                format!(
                    "error: allow entry `{}` cannot be compiled\n  --> {}\n  = help: {}",
                    visible(&e.pattern),
                    visible(&e.origin.to_string()),
                    err.what()
                )
            })
        })
        .collect()
}

/// Entries that cannot mean what their author meant (`gate::lint`), each with its fix; and
/// the notes on wrappers.
fn lint(config: &Config) -> (Vec<String>, Vec<String>) {
    let (mut warnings, mut notes) = (Vec::new(), Vec::new());
    for e in config.allow.all_entries() {
        let list = e.list.name();
        let modes = format!("in mode{} `{list}`", if list == "all" { "s" } else { "" });
        for w in gate::lint::lint_entry(&e.pattern) {
            let what = match w.kind {
                gate::lint::LintKind::Unrestricted => {
                    format!("is UNRESTRICTED: {modes} {}", w.message)
                }
                _ => format!("{modes}: {}", w.message),
            };
            let (entry, origin) = (visible(&e.pattern), e.origin.to_string());
            if w.kind == gate::lint::LintKind::Wrapper {
                notes.push(format!(
                    "note: allow entry `{entry}` ({}) {what}",
                    visible(&origin)
                ));
            } else {
                warnings.push(format!(
                    "warning: allow entry `{entry}` ({}) {what}\n  = fix: {}",
                    visible(&origin),
                    visible(&w.fix)
                ));
            }
        }
    }
    (warnings, notes)
}

/// The lines on what is in effect: sources, trust, hooks, reminders, the model's shell
/// commands, hookd's own failures, the hooks' environment. `off` are the switched-off hooks.
fn in_effect(config: &Config, off: &[String], around: &Around) -> String {
    let sources = if config.sources.is_empty() {
        "none found (nothing configured)".to_string()
    } else {
        visible(&config.sources.join(", ")).into_owned()
    };
    let mut s = format!("sources: {sources}\n{}\n", trust_line(config));
    s.push_str(&format!(
        "hooks: {} ({} configured)\n",
        if config.hooks.enabled {
            "enabled"
        } else {
            "disabled (set `enabled: true` in hooks.yaml or INFER_HOOKS_ENABLED=true)"
        },
        config.hooks.hooks.len()
    ));
    for o in off {
        s.push_str(&format!("  {o}\n"));
    }
    // What an untrusted project's files turn on is said next to what is in effect.
    let until_trusted =
        |what: String| format!("; the project's {what}, ignored until you trust it");
    s.push_str(&format!(
        "reminders: {} ({} configured){}\n",
        if config.reminders.enabled {
            "enabled"
        } else {
            "disabled"
        },
        config.reminders.reminders.len(),
        match config.ignored_reminders {
            0 => String::new(),
            n => until_trusted(format!("reminders.yaml adds {n} reminder{}", plural(n))),
        }
    ));
    let project_gates = config.ignored_switches.contains(&"gate_shell_tools");
    s.push_str(&if config.policy.gate_shell_tools {
        "model's shell commands: gated by the allow-list at pre_tool (gate_shell_tools)\n".into()
    } else {
        format!(
            "model's shell commands: not gated (gate_shell_tools is off){}\n",
            if project_gates {
                until_trusted("hooks.yaml turns it on".into())
            } else {
                String::new()
            }
        )
    });
    if config.ignored_switches.contains(&"fail_closed") && !config.policy.fail_closed {
        s.push_str(&format!(
            "hookd's own failures: allow the call (fail_closed is off){}\n",
            until_trusted("hooks.yaml turns fail_closed on".into())
        ));
    }
    s.push_str(&environment_lines(config, around));
    s
}
