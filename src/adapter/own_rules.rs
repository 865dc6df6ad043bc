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

/// Which of the agent's lists a rule is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    Deny,
    Ask,
}

/// Apply Claude Code's own deny and ask rules (managed, user, project and local settings, as
/// `host` places them) to a shell call in `outcome` that hookd rewrote to run confined.
/// `starts` are the directories the agent may have started in (the payload's `cwd`,
/// `CLAUDE_PROJECT_DIR`): Claude Code reads the project's settings there, which may lie below
/// the project hookd found (a `.git` further up); each directory from a start up to hookd's
/// project is read, since more files can only add rules. A settings file that is there but
/// cannot be read or parsed denies the call: its rules are unknown, and `allow` would switch
/// them off. Returns a line for the operator when a rule (or an unread file) changed the answer.
pub(crate) fn apply(
    agent: &dyn Adapter,
    host: &Host,
    starts: &[PathBuf],
    outcome: &mut Outcome,
) -> Option<String> {
    if agent.name() != "claude-code" {
        return None;
    }
    let Decision::Tool(t) = &mut outcome.decision else {
        return None;
    };
    if !t.confined || t.deny || t.base.halt {
        return None;
    }
    // The model's command: as it came, or (too large to be echoed back) from the rewrite,
    // which holds it byte for byte.
    let command_of = |i: &Option<Value>| {
        i.as_ref()
            .and_then(|i| i.get("command"))
            .and_then(Value::as_str)
            .map(String::from)
    };
    let command = command_of(&t.original_input)
        .or_else(|| command_of(&t.updated_input).and_then(|c| super::unwrap::model_command(&c)))?;
    let rules = Rules::read(&files(agent, host, starts));
    if let Some((file, why)) = rules.unread.first() {
        let file = crate::display::visible(&file.display().to_string()).into_owned();
        t.deny = true;
        t.updated_input = None;
        t.confined = false;
        t.reason = Some(format!(
            "Permission to use Bash has been denied: hookd cannot read the Claude Code settings {file}, whose rules apply to it"
        ));
        return Some(format!(
            "hookd: your Claude Code settings {file} {why}: its deny and ask rules are unknown, so `{command}` is denied; fix or remove the file"
        ));
    }
    let (list, rule, file) = rules.first_match(&command)?;
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

/// The settings files whose rules apply: managed, user, then the project's and local ones of
/// the project and of every directory from a start up to it.
fn files(agent: &dyn Adapter, host: &Host, starts: &[PathBuf]) -> Vec<PathBuf> {
    // Claude Code's managed settings: an organisation's rules, above every other file.
    let mut files = vec![PathBuf::from(super::managed::CLAUDE_MANAGED)];
    files.extend(
        [Scope::User, Scope::Project, Scope::Local]
            .into_iter()
            .filter_map(|s| agent.settings_path(s, host).ok()),
    );
    let Some(project) = host.cwd() else {
        return files;
    };
    // A start outside the project (the model's `cd /tmp`) is not where Claude Code reads.
    for start in starts.iter().filter(|s| s.starts_with(project)) {
        for d in start.ancestors().take_while(|d| *d != project) {
            for name in ["settings.json", "settings.local.json"] {
                let f = d.join(".claude").join(name);
                if !files.contains(&f) {
                    files.push(f);
                }
            }
        }
    }
    files
}

fn deny(t: &mut ToolDecision, rule: &str) {
    t.deny = true;
    t.updated_input = None;
    t.confined = false;
    t.reason = Some(format!(
        "Permission to use Bash has been denied by your Claude Code rule {rule}"
    ));
}

/// The deny and ask rules of a set of settings files, each file read once.
#[derive(Default)]
struct Rules {
    /// Each rule, its list and its file, in the files' order.
    rules: Vec<(List, String, PathBuf)>,
    /// Files that are there but were not read or parsed, and why.
    unread: Vec<(PathBuf, String)>,
}

impl Rules {
    fn read(files: &[PathBuf]) -> Rules {
        use crate::config::ReadError;
        let mut out = Rules::default();
        for file in files {
            let bytes = match crate::config::read_regular(file, MOST) {
                Ok(b) => b,
                Err(ReadError::NotFound) => continue,
                // Not for this user either: Claude Code reads nothing there.
                Err(ReadError::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::NotADirectory
                    ) =>
                {
                    continue
                }
                Err(e) => {
                    out.unread.push((file.clone(), e.to_string()));
                    continue;
                }
            };
            let text = String::from_utf8_lossy(&bytes);
            if text.trim().is_empty() {
                continue;
            }
            // Read as Claude Code reads it: the last of a key given twice, lenient escapes.
            let value = match super::payload::parse(&text) {
                Ok(v) => v,
                Err(e) => {
                    out.unread
                        .push((file.clone(), format!("is not JSON ({e})")));
                    continue;
                }
            };
            for (list, name) in [(List::Deny, "deny"), (List::Ask, "ask")] {
                let rules = value
                    .pointer(&format!("/permissions/{name}"))
                    .and_then(Value::as_array);
                for rule in rules.into_iter().flatten().filter_map(Value::as_str) {
                    out.rules.push((list, rule.to_string(), file.clone()));
                }
            }
        }
        out
    }

    /// The first deny rule, else ask rule, that matches `command` or one of its parts.
    fn first_match(&self, command: &str) -> Option<(List, String, PathBuf)> {
        let gate = crate::gate::Gate::new(&crate::config::AllowLists::default(), "");
        let verdict = gate.model_verdict(command, crate::config::Mode::Standard);
        let mut texts: Vec<String> = vec![command.to_string()];
        texts.extend(verdict.parts.iter().map(|p| p.text.clone()));
        for want in [List::Deny, List::Ask] {
            for (list, rule, file) in self.rules.iter().filter(|r| r.0 == want) {
                let Some(re) = super::claude_permissions::rule_regex(rule) else {
                    continue;
                };
                if texts.iter().any(|t| re.is_match(t.trim())) {
                    return Some((*list, rule.clone(), file.clone()));
                }
            }
        }
        None
    }
}
