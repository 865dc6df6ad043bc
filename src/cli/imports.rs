//! `hookd import`: another tool's permission rules printed as allow entries.

use super::error::{Done, Error};
use super::out;
use clap::Subcommand;
use hookd::adapter;
use std::path::PathBuf;

/// Where `hookd import` reads rules from.
#[derive(Subcommand, Debug)]
pub(super) enum ImportFrom {
    /// Claude Code's `permissions.allow`/`deny`/`ask` Bash rules, from FILE or, by default,
    /// the project's .claude/settings.json and .claude/settings.local.json.
    ClaudeCode {
        /// A Claude Code settings file.
        file: Option<PathBuf>,
        /// Print {"entries":[…],"untranslated":[…]} instead of YAML.
        #[arg(long)]
        json: bool,
    },
}

/// `hookd import claude-code`: the rules of FILE, or of the project's Claude Code settings.
pub(super) fn import_claude_code(file: Option<PathBuf>, json: bool) -> Done {
    let files: Vec<PathBuf> = match file {
        Some(f) => vec![f],
        None => {
            let cwd = std::env::current_dir().unwrap_or_default();
            let project = hookd::paths::find_project(&cwd, hookd::paths::home().as_deref());
            let found: Vec<PathBuf> = ["settings.json", "settings.local.json"]
                .iter()
                .map(|n| project.join(".claude").join(n))
                .filter(|p| p.is_file())
                .collect();
            if found.is_empty() {
                return Err(Error::Cannot(format!(
                        "no Claude Code settings in {}: neither .claude/settings.json nor .claude/settings.local.json exists\n  = help: name the file: `hookd import claude-code ~/.claude/settings.json`",
                        project.display()
                    )));
            }
            found
        }
    };
    let mut all = adapter::claude_permissions::Import::default();
    for f in &files {
        let text = match std::fs::read_to_string(f) {
            Ok(t) => t,
            Err(e) => {
                return Err(Error::Read {
                    path: f.to_path_buf(),
                    source: e,
                })
            }
        };
        let value: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                return Err(Error::Cannot(format!(
                    "{} is not JSON: {e}\n  --> {}:{}:{}",
                    f.display(),
                    f.display(),
                    e.line(),
                    e.column()
                )))
            }
        };
        let one = adapter::claude_permissions::import(&value);
        for e in one.entries {
            if !all.entries.iter().any(|x| x.entry == e.entry) {
                all.entries.push(e);
            }
        }
        all.untranslated.extend(one.untranslated);
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    if json {
        out(&format!(
            "{}\n",
            serde_json::to_string(&all).unwrap_or_default()
        ));
    } else {
        out(&adapter::claude_permissions::to_yaml(
            &all,
            &names.join(" and "),
        ));
    }
    Ok(0)
}

/// `hookd import FROM`.
pub(super) fn run(from: ImportFrom) -> Done {
    match from {
        ImportFrom::ClaudeCode { file, json } => import_claude_code(file, json),
    }
}
