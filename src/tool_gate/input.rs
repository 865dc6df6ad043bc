//! The tool gate's verdict on a `pre_tool` call's input: the sandbox's write policy for file
//! tools, the agent's start-up set by the repository, the allow-list for shell commands and
//! hookd's own files for file tools.

use std::path::PathBuf;

use serde_json::Value;

use super::{Gated, Named, ToolGate};
use crate::catalog::HookPoint;
use crate::gate::protect::{FILE_TOOLS, PATH_KEYS};
use crate::gate::Denied;
use crate::provider::Call;
use crate::runner;

impl ToolGate {
    /// A shell call hookd gates or confines, in a session whose repository set a variable that
    /// makes the agent's shell (or the loader) run its code first (`BASH_ENV` in
    /// `.claude/settings.json` `env`, `LD_PRELOAD` in a `.env`): whatever hookd decides, that
    /// code runs unconfined before `hookd exec` exists, so every such call is denied. The
    /// model reads that its shell is set up by the repository; the operator's hint names the
    /// files and variables.
    pub(super) fn startup_set(&self, tool: &str) -> Option<Denied> {
        let gated = self
            .shell_gate
            .as_ref()
            .is_some_and(|g| g.iter().any(|n| n == tool));
        let confined = self.confines() && self.shell_tools.iter().any(|n| n == tool);
        if !(gated || confined) {
            return None;
        }
        let set: Vec<String> = self
            .environment
            .project
            .iter()
            .filter(|v| runner::runs_code(&v.name))
            .map(|v| format!("{} sets {}", v.source, v.name))
            .collect();
        if set.is_empty() {
            return None;
        }
        Some(Denied {
            reason: crate::gate::DenyReason::AgentStartup,
            detail: "the repository's agent settings make the agent's shell run their code before hookd can check or confine a command".into(),
            hint: format!(
                "{}: {}",
                crate::display::visible(&set.join("; ")),
                crate::gate::DenyReason::AgentStartup.advice()
            ),
        })
    }

    /// The gate's verdict on a `pre_tool` call's input.
    pub(super) fn gate_input(&self, call: &Call<'_>, tool: &str, input: Option<&Value>) -> Gated {
        if call.point != HookPoint::PreTool {
            return Gated::Ungated;
        }
        // Paths in the call are relative to the agent's working directory.
        let cwd = call
            .view
            .cwd
            .filter(|c| c.starts_with('/'))
            .map(PathBuf::from)
            .unwrap_or_else(|| self.project_dir.clone());
        if let Some((named, denied)) = self.sandbox_denies_write((tool, call.mode), input, &cwd) {
            return Gated::Denied(Named::Path(named), denied);
        }
        if let Some(denied) = self.startup_set(tool) {
            let command = input.and_then(|i| i.get("command")).and_then(Value::as_str);
            return Gated::Denied(Named::Command(command.unwrap_or_default().into()), denied);
        }
        let Some(names) = self.shell_gate.as_ref() else {
            return Gated::Ungated;
        };
        let path = PATH_KEYS
            .iter()
            .find_map(|k| input.and_then(|i| i.get(*k)).and_then(Value::as_str))
            .map(String::from);
        if names.iter().any(|n| n == tool) {
            let command = input.and_then(|i| i.get("command")).and_then(Value::as_str);
            // Gemini CLI runs the command in `dir_path` (older versions: `directory`), relative
            // to its working directory: relative paths in the command start there.
            let cwd = ["dir_path", "directory"]
                .iter()
                .find_map(|k| input.and_then(|i| i.get(*k)).and_then(Value::as_str))
                .filter(|d| !d.is_empty())
                .map_or(cwd.clone(), |d| cwd.join(d));
            let Some(c) = command else {
                return Gated::Denied(
                    Named::Command(String::new()),
                    Denied {
                        reason: crate::gate::DenyReason::Empty,
                        detail: format!("the {tool} call has no `command` to check"),
                        hint: "hookd gates shell tools by their `command` input".into(),
                    },
                );
            };
            let verdict = self.gate.model_verdict(c, call.mode);
            let denied = verdict
                .denied
                .clone()
                .or_else(|| self.protected().touched_by(&verdict, cwd));
            match denied {
                Some(d) => Gated::Denied(Named::Command(c.to_string()), d),
                None => Gated::Allowed {
                    command: Some(c.to_string()),
                    path: None,
                    entries: verdict
                        .admitted()
                        .map(|a| a.entry.pattern.clone())
                        .collect(),
                },
            }
        } else {
            if FILE_TOOLS.contains(&tool) {
                if let Some(t) = self.protected().written_by(input, &cwd) {
                    let denied = crate::gate::protect::file_denial(&t.named, &t.place);
                    return Gated::Denied(Named::Path(t.named), denied);
                }
                if let Some((p, denied)) = lays_out_a_repository(path.as_deref(), &cwd) {
                    return Gated::Denied(Named::Path(p), denied);
                }
            }
            Gated::Allowed {
                command: None,
                path,
                entries: Vec::new(),
            }
        }
    }
}

/// A file tool's write of `path` (from `cwd`) that would put a `HEAD` outside `.git`
/// ([`crate::places::lays_out_a_repository`]), refused.
fn lays_out_a_repository(path: Option<&str>, cwd: &std::path::Path) -> Option<(String, Denied)> {
    let p = path.filter(|p| crate::places::lays_out_a_repository(&cwd.join(p)))?;
    let detail = format!("`{p}` is {}", crate::places::LAYS_OUT_A_REPOSITORY);
    Some((p.to_string(), crate::gate::protect::denial(detail)))
}
