//! The sandbox's part of a `pre_tool` call: a shell call rewritten to run confined with the
//! adapter's decision carried to `hookd exec`, and the file tools held by its write policy (read
//! only in the modes `sandbox.read_only_modes` names).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ToolGate;
use crate::catalog::HookPoint;
use crate::decision::Decision;
use crate::gate::protect::{FILE_TOOLS, PATH_KEYS};
use crate::gate::Denied;
use crate::provider::Call;

impl ToolGate {
    /// With the sandbox on, a shell tool call that goes ahead is rewritten so that the agent
    /// runs it confined: `hookd exec DECIDED --shell='COMMAND'` (see
    /// [`crate::sandbox::shell_rewrite`]), the command inside exactly the one that was checked,
    /// `DECIDED` what this engine decided ([`crate::sandbox::Decided`]). Where it cannot be confined (the
    /// kernel, an embedder that named no hookd program) the call is denied: never run
    /// unconfined; see [`crate::sandbox::confined_call`].
    pub(super) fn confine_shell_call(&self, call: &mut Call<'_>, decision: &mut Decision) {
        if call.point != HookPoint::PreTool || !self.confines() {
            return;
        }
        let Decision::Tool(t) = decision else { return };
        if t.deny || t.base.halt {
            return;
        }
        let Some(tool) = call.view.tool.as_ref().and_then(|v| v.name) else {
            return;
        };
        if !self.shell_tools.iter().any(|n| n == tool) {
            return;
        }
        let mut input = match t
            .updated_input
            .clone()
            .or_else(|| call.context.tool("input").cloned())
        {
            Some(Value::Object(m)) => m,
            _ => return,
        };
        let Some(command) = input.get("command").and_then(Value::as_str) else {
            return;
        };
        let Some(policy) = self.sandbox_for(call.mode) else {
            return;
        };
        let program = self.exec_program.as_deref();
        let decided = self.decided(call, tool, &input, &policy);
        let wrapped = match crate::sandbox::confined_call(program, &policy, &decided, tool, command)
        {
            Ok(w) => w,
            Err(why) => {
                t.deny = true;
                t.reason = Some(format!("hookd refused this {tool} call: {why}"));
                t.synthetic_result = t.reason.clone();
                t.updated_input = None;
                return;
            }
        };
        input.insert("command".into(), Value::String(wrapped));
        t.updated_input = Some(Value::Object(input));
        t.confined = true;
        t.gate_admitted = self.shell_gate.is_some();
    }

    /// The sandbox for a call in `mode`: read-only when `sandbox.read_only_modes` names it.
    fn sandbox_for(&self, mode: crate::config::Mode) -> Option<crate::config::SandboxPolicy> {
        let mut policy = self.sandbox.clone()?;
        policy.read_only |= policy.read_only_modes.contains(&mode);
        Some(policy)
    }

    /// What the rewrite of a confined shell call carries to `hookd exec`: the project, where
    /// the call starts (the agent's directory; for Gemini CLI, its `dir_path` from there; for
    /// Crush, whose payload names its session's directory and not its shell's, none: the
    /// shell's own inside the project), the configuration's origin and whether it is read-only.
    fn decided(
        &self,
        call: &Call<'_>,
        tool: &str,
        input: &serde_json::Map<String, Value>,
        policy: &crate::config::SandboxPolicy,
    ) -> crate::sandbox::Decided {
        let (config_dir, home) = self.loaded_from.clone();
        let decided = crate::sandbox::Decided::in_project(&self.project_dir)
            .config_dir(config_dir)
            .user_home(home)
            .read_only(policy.read_only)
            .session(call.session_id);
        if tool == crate::sandbox::CRUSH_SHELL_TOOL {
            return decided;
        }
        let mut start = call
            .view
            .cwd
            .filter(|c| c.starts_with('/'))
            .map(PathBuf::from)
            .unwrap_or_else(|| self.project_dir.clone());
        if tool == crate::sandbox::GEMINI_SHELL_TOOL {
            if let Some(dir) = input.get("dir_path").and_then(Value::as_str) {
                // `.` and the like normalised away (`P/.` is `P`).
                start = start.join(dir).components().collect();
            }
        }
        decided.starting_in(start)
    }

    /// Whether the sandbox is on (hooks confined, file tools held by its write policy).
    pub(super) fn confines(&self) -> bool {
        self.sandbox.as_ref().is_some_and(|s| s.enabled)
    }

    /// With the sandbox on, a file tool's write outside the places confined commands may write,
    /// or into one of the read-only places inside the project, is denied: the agent writes
    /// the file itself, so the path is all there is to judge.
    pub(super) fn sandbox_denies_write(
        &self,
        (tool, mode): (&str, crate::config::Mode),
        input: Option<&Value>,
        cwd: &Path,
    ) -> Option<(String, Denied)> {
        let policy = self.sandbox_for(mode).filter(|s| s.enabled)?;
        let policy = &policy;
        if !FILE_TOOLS.contains(&tool) {
            return None;
        }
        let input = input?;
        PATH_KEYS
            .iter()
            .filter_map(|k| input.get(*k).and_then(Value::as_str))
            .find_map(|named| {
                crate::sandbox::write_refused(policy, &self.project_dir, &cwd.join(named)).map(
                    |why| {
                        (
                            named.to_string(),
                            Denied {
                                reason: crate::gate::DenyReason::ProtectedPath,
                                detail: format!("`{named}` is {why}"),
                                hint: "the sandbox's write policy holds the model's file tools too; only `sandbox.write` in your own config.yaml widens it".into(),
                            },
                        )
                    },
                )
            })
    }
}
