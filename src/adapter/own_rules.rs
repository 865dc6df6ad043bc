//! The agent's own permission rules, kept in force when hookd rewrites a shell call to run
//! confined: Claude Code matches its `permissions.deny` and `ask` rules against the command it
//! is handed, and the rewrite (`hookd exec --shell='…'`) matches none of them, so hookd's
//! `allow` would switch them off. Before answering for a rewritten call, the rules are applied
//! to the model's own command, whole and part by part, as Claude Code would: a deny rule
//! turns the answer into a deny, an ask rule into `ask` for the rewritten, confined call
//! (Claude Code asks its user, or refuses in `-p` mode). The call stays confined either way: a
//! repository's own `ask` rule must not be a way to have a call run unconfined.

use std::path::PathBuf;

use serde_json::Value;

use super::{Adapter, Scope};
use crate::decision::{Decision, ToolDecision};
use crate::dispatch::Outcome;
use crate::host::Host;

/// The most of one settings file read.
const MOST: u64 = 1024 * 1024;

/// Claude Code's managed settings on Linux: an organisation's rules, above every other file.
const MANAGED: &str = "/etc/claude-code/managed-settings.json";

/// Which of the agent's lists a rule is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Deny,
    Ask,
}

/// Apply Claude Code's own deny and ask rules (managed, user, project and local settings, as
/// `host` places them) to a shell call in `outcome` that hookd rewrote to run confined.
/// Returns a line for the operator when a rule changed the answer.
pub(crate) fn apply(agent: &dyn Adapter, host: &Host, outcome: &mut Outcome) -> Option<String> {
    if agent.name() != "claude-code" {
        return None;
    }
    let Decision::Tool(t) = &mut outcome.decision else {
        return None;
    };
    if !t.confined || t.deny || t.base.halt {
        return None;
    }
    let command = t
        .original_input
        .as_ref()
        .and_then(|i| i.get("command"))
        .and_then(Value::as_str)?
        .to_string();
    let mut files = vec![PathBuf::from(MANAGED)];
    files.extend(
        [Scope::User, Scope::Project, Scope::Local]
            .into_iter()
            .filter_map(|s| agent.settings_path(s, host).ok()),
    );
    let (list, rule, file) = first_match(&files, &command)?;
    let file = crate::display::visible(&file.display().to_string()).into_owned();
    match list {
        List::Deny => {
            deny(t, &rule);
            Some(format!(
                "hookd: your Claude Code rule `{rule}` ({file}) denies `{command}`: denied, although hookd's allow-list admits it"
            ))
        }
        List::Ask => {
            t.asked_by = Some(rule.clone());
            Some(format!(
                "hookd: your Claude Code rule `{rule}` ({file}) asks before `{command}`: Claude Code asks, about the confined call"
            ))
        }
    }
}

fn deny(t: &mut ToolDecision, rule: &str) {
    t.deny = true;
    t.updated_input = None;
    t.confined = false;
    t.reason = Some(format!(
        "Permission to use Bash has been denied by your Claude Code rule {rule}"
    ));
}

/// The first deny rule, else ask rule, of `files` that matches `command` or one of its parts.
fn first_match(files: &[PathBuf], command: &str) -> Option<(List, String, PathBuf)> {
    let gate = crate::gate::Gate::new(&crate::config::AllowLists::default(), "");
    let verdict = gate.model_verdict(command, crate::config::Mode::Standard);
    let mut texts: Vec<String> = vec![command.to_string()];
    texts.extend(verdict.parts.iter().map(|p| p.text.clone()));
    for list in [List::Deny, List::Ask] {
        for file in files {
            let Ok(bytes) = crate::config::read_regular(file, MOST) else {
                continue;
            };
            let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
                continue;
            };
            let name = if list == List::Deny { "deny" } else { "ask" };
            let rules = value
                .pointer(&format!("/permissions/{name}"))
                .and_then(Value::as_array);
            for rule in rules.into_iter().flatten().filter_map(Value::as_str) {
                let Some(re) = super::claude_permissions::rule_regex(rule) else {
                    continue;
                };
                if texts.iter().any(|t| re.is_match(t.trim())) {
                    return Some((list, rule.to_string(), file.clone()));
                }
            }
        }
    }
    None
}
