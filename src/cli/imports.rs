//! `hookd import`: another tool's permission rules printed as allow entries.

use super::error::{Done, Error};
use super::out;
use crate::adapter::claude_permissions;
use crate::host::Host;
use clap::Subcommand;
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
fn import_claude_code(file: Option<PathBuf>, json: bool) -> Done {
    let files = match file {
        Some(f) => vec![f],
        None => {
            let cwd = std::env::current_dir().map_err(Error::CurrentDir)?;
            let project =
                crate::paths::find_project(&cwd, Host::of_this_process().home().as_deref());
            let found = claude_permissions::project_settings(&project);
            if found.is_empty() {
                return Err(Error::Cannot(format!(
                    "no Claude Code settings in {}: neither .claude/settings.json nor .claude/settings.local.json exists\n  = help: name the file: `hookd import claude-code ~/.claude/settings.json`",
                    project.display()
                )));
            }
            found
        }
    };
    let all = claude_permissions::import_files(&files).map_err(Error::library)?;
    if json {
        out(&format!(
            "{}\n",
            serde_json::to_string(&all).unwrap_or_default()
        ));
    } else {
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        out(&claude_permissions::to_yaml(&all, &names.join(" and ")));
    }
    Ok(0)
}

/// `hookd import FROM`.
pub(super) fn run(from: ImportFrom) -> Done {
    match from {
        ImportFrom::ClaudeCode { file, json } => import_claude_code(file, json),
    }
}
