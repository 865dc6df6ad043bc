//! Claude Code's `permissions` Bash rules, read as hookd allow entries (`hookd import claude-code`).
//!
//! Claude Code's rule forms (its permissions documentation): `Bash(ls)` is exactly that
//! command; `Bash(npm run test:*)` (legacy prefix form) is the prefix alone or followed by a
//! space and anything; in `Bash(git diff *)` each `*` matches any characters, and a single
//! trailing ` *` is optional (`git diff` alone matches too); `Bash` and `Bash(*)` are any
//! command. The translation is printed for the operator to read and copy; nothing is written.
//! Deny and ask rules have no equivalent (hookd has no deny list and never asks): they are
//! listed, and any produced entry that would admit what a deny rule refuses is flagged.
// `hookd import` (the command line) reads all of it; an adapter's own rules the rule regex.
#![cfg_attr(not(feature = "cli"), allow(dead_code))]

use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::gate::{suggested_entry, unrestricted_probe};

/// One allow entry made from one rule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Translated {
    /// The hookd allow entry (an anchored regular expression).
    pub entry: String,
    /// The rule it came from, as written in the settings file.
    pub rule: String,
    /// A dangerous command the entry admits (`hookd check` would call it UNRESTRICTED).
    pub unrestricted: Option<String>,
}

/// A rule with no hookd equivalent, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Untranslated {
    /// `allow`, `deny` or `ask`.
    pub list: &'static str,
    /// The rule as written.
    pub rule: String,
    /// Why it has no equivalent, and what to do.
    pub why: String,
}

/// What a settings file's rules come to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Import {
    /// The allow entries, one per distinct rule.
    pub entries: Vec<Translated>,
    /// The rules with no equivalent.
    pub untranslated: Vec<Untranslated>,
}

/// Claude Code's settings files of `project` that exist: `.claude/settings.json` and
/// `.claude/settings.local.json`.
pub fn project_settings(project: &Path) -> Vec<PathBuf> {
    ["settings.json", "settings.local.json"]
        .iter()
        .map(|n| project.join(".claude").join(n))
        .filter(|p| p.is_file())
        .collect()
}

/// A settings file that could not be imported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// It could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is not JSON.
    #[error("{} is not JSON: {source}\n  --> {}:{}:{}", path.display(), path.display(), source.line(), source.column())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// Where and why.
        source: serde_json::Error,
    },
}

/// The rules of every file in `files`, merged: each distinct entry once, every rule with no
/// equivalent.
pub fn import_files(files: &[PathBuf]) -> Result<Import, ImportError> {
    let mut all = Import::default();
    for path in files {
        let text = std::fs::read_to_string(path).map_err(|source| ImportError::Read {
            path: path.clone(),
            source,
        })?;
        let value: Value = serde_json::from_str(&text).map_err(|source| ImportError::NotJson {
            path: path.clone(),
            source,
        })?;
        let one = import(&value);
        for e in one.entries {
            if !all.entries.iter().any(|x| x.entry == e.entry) {
                all.entries.push(e);
            }
        }
        all.untranslated.extend(one.untranslated);
    }
    Ok(all)
}

/// Read the `permissions` of one Claude Code settings document.
pub fn import(settings: &Value) -> Import {
    let mut out = Import::default();
    let rules = |list: &str| -> Vec<String> {
        settings
            .pointer(&format!("/permissions/{list}"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|r| r.as_str().map_or_else(|| r.to_string(), str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    for rule in rules("allow") {
        match translate(&rule) {
            Ok(entry) => {
                if !out.entries.iter().any(|e| e.entry == entry) {
                    out.entries.push(Translated {
                        unrestricted: unrestricted_probe(&entry),
                        entry,
                        rule,
                    });
                }
            }
            Err(why) => out.untranslated.push(Untranslated {
                list: "allow",
                rule,
                why,
            }),
        }
    }
    for rule in rules("deny") {
        let why = deny_note(&out.entries, &rule);
        out.untranslated.push(Untranslated {
            list: "deny",
            rule,
            why,
        });
    }
    for rule in rules("ask") {
        out.untranslated.push(Untranslated {
            list: "ask",
            rule,
            why: "hookd never asks: a command is admitted or refused; allow it or leave it out"
                .into(),
        });
    }
    out
}

/// Why a deny rule has no equivalent, naming the entries above that admit what it refuses.
fn deny_note(entries: &[Translated], rule: &str) -> String {
    let denied = match translate(rule) {
        Ok(denied) => denied,
        Err(why) if !why.starts_with("any command") => return why,
        Err(_) => return "hookd has no deny list: what no entry admits is refused".to_string(),
    };
    // Whether any command matches both the entry and the rule, not one sample:
    // `^git .* main$` admits `git push main`, which `Bash(git push:*)` refuses.
    let admitting: Vec<(String, String)> = entries
        .iter()
        .filter_map(|e| {
            crate::gate::common_command(&e.entry, &denied).map(|c| (e.entry.clone(), c))
        })
        .collect();
    if admitting.is_empty() {
        return "hookd has no deny list: what no entry admits is refused, and no entry above admits a command this rule refuses".to_string();
    }
    let list = |pick: fn(&(String, String)) -> &String| {
        admitting
            .iter()
            .map(|x| format!("`{}`", pick(x)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "hookd has no deny list, and {} above admit{} {}, which this rule refuses in Claude Code: narrow {}",
        list(|x| &x.0),
        if admitting.len() == 1 { "s" } else { "" },
        list(|x| &x.1),
        if admitting.len() == 1 { "it" } else { "them" }
    )
}

/// The content of a `Bash(…)` rule, or why the rule is not one.
fn bash_content(rule: &str) -> Result<&str, String> {
    let rule = rule.trim();
    if rule == "Bash" {
        return Err(
            "any command: its equivalent `.*` admits everything (UNRESTRICTED); list the commands instead"
                .into(),
        );
    }
    let Some(content) = rule.strip_prefix("Bash(").and_then(|r| r.strip_suffix(')')) else {
        let tool = rule.split('(').next().unwrap_or(rule);
        return Err(format!(
            "a `{tool}` rule, not a shell command: hookd gates shell commands (and protects its own files with gate_shell_tools)"
        ));
    };
    match content.trim() {
        "" | "*" | ":*" => Err(
            "any command: its equivalent `.*` admits everything (UNRESTRICTED); list the commands instead"
                .into(),
        ),
        c => Ok(c),
    }
}

/// The allow entry equivalent to one `Bash(…)` rule.
fn translate(rule: &str) -> Result<String, String> {
    let content = bash_content(rule)?;
    if let Some(prefix) = content.strip_suffix(":*") {
        return Ok(format!("{}( .*)?$", strip_end(&suggested_entry(prefix))));
    }
    if !content.contains('*') {
        if crate::gate::Gate::new(&crate::config::AllowLists::default(), "")
            .model_verdict(content, crate::config::Mode::Standard)
            .parts
            .len()
            > 1
        {
            return Err("a compound command: hookd allows each simple command on its own; import or write one rule per part".into());
        }
        return Ok(suggested_entry(content));
    }
    // One trailing ` *` is optional: `git diff *` matches `git diff` too.
    if let Some(prefix) = content.strip_suffix(" *").filter(|p| !p.contains('*')) {
        return Ok(format!("{}( .*)?$", strip_end(&suggested_entry(prefix))));
    }
    let pieces: Vec<String> = content
        .split('*')
        .map(|p| strip_end(&suggested_entry(p))[1..].to_string())
        .collect();
    Ok(format!("^{}$", pieces.join(".*")))
}

/// What a `Bash(…)` rule matches, as a regular expression over a whole command (`Bash` and
/// `Bash(*)`: any command); `None` for a rule of another tool or one that does not compile.
/// A rule without a wildcard matches its text exactly, a compound one (`Bash(a && b)`) too:
/// Claude Code would match it against the whole command.
#[cfg(feature = "daemon")]
pub(crate) fn rule_regex(rule: &str) -> Option<regex::Regex> {
    let pattern = match bash_content(rule) {
        Ok(c) if !c.contains('*') => suggested_entry(c),
        Ok(_) => translate(rule).ok()?,
        Err(why) if why.starts_with("any command") => ".*".to_string(),
        Err(_) => return None,
    };
    regex::Regex::new(&pattern).ok()
}

/// `suggested_entry` without its final `$`.
fn strip_end(entry: &str) -> &str {
    entry.strip_suffix('$').unwrap_or(entry)
}

/// The YAML a user pastes into `config.yaml`, with the rest as comments.
pub fn to_yaml(import: &Import, source: &str) -> String {
    let mut s = format!(
        "# hookd allow entries for Claude Code's permission rules in {source}\n# (printed only: review them, then add what you want to your config.yaml).\n# With gate_shell_tools on they judge the model's shell commands, each part of a\n# compound command on its own.\n"
    );
    if import.entries.is_empty() {
        s.push_str("# no allow rule of a shell command could be translated\n");
    } else {
        s.push_str("tools:\n  bash:\n    mode:\n      all:\n        allow:\n");
        for e in &import.entries {
            s.push_str(&format!(
                "          - '{}'  # {}\n",
                e.entry.replace('\'', "''"),
                e.rule
            ));
        }
    }
    let flagged: Vec<&Translated> = import
        .entries
        .iter()
        .filter(|e| e.unrestricted.is_some())
        .collect();
    if !flagged.is_empty() {
        s.push_str("# warnings:\n");
        for e in flagged {
            s.push_str(&format!(
                "#   '{}' ({}) is UNRESTRICTED: it admits `{}`; prefer the exact commands\n",
                e.entry,
                e.rule,
                e.unrestricted.as_deref().unwrap_or_default()
            ));
        }
    }
    if !import.untranslated.is_empty() {
        s.push_str("# not translated:\n");
        for u in &import.untranslated {
            s.push_str(&format!("#   {} {}: {}\n", u.list, u.rule, u.why));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_form() {
        for (rule, entry) in [
            ("Bash(ls)", "^ls$"),
            ("Bash(npm run test:*)", r"^npm run test( .*)?$"),
            ("Bash(git diff *)", r"^git diff( .*)?$"),
            ("Bash(git * main)", r"^git .* main$"),
            ("Bash(* --version)", r"^.* --version$"),
            ("Bash(ls*)", "^ls.*$"),
            ("Bash(make test.sh)", r"^make test\.sh$"),
        ] {
            assert_eq!(translate(rule).as_deref(), Ok(entry), "{rule}");
        }
        for rule in [
            "Bash",
            "Bash(*)",
            "Read(./.env)",
            "Bash(npm test && npm run lint)",
        ] {
            assert!(translate(rule).is_err(), "{rule}");
        }
    }
}
