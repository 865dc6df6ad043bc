//! `hookd init`: a first `~/.infer/` from the shipped configurations, never over a file that
//! is there, and optionally the agent's hooks.

use super::error::{Done, Error};
use super::install::{self, Agent, Scope};
use super::out;
use hookd::config::SchemaFile;
use std::path::PathBuf;

/// `hookd init`'s arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The unattended configuration (config/headless: an exact allow-list, the model's shell
    /// commands gated, hookd's failures denied, the sandbox on) instead of the example.
    #[arg(long)]
    headless: bool,
    /// Also install this agent's hooks for your user (as `hookd install AGENT --scope user`,
    /// with --fail-closed --gate-shell-tools when --headless).
    #[arg(long, value_enum)]
    agent: Option<Agent>,
    /// Write here instead of ~/.infer.
    #[arg(long, value_name = "DIR")]
    config_dir: Option<PathBuf>,
}

/// The shipped configurations, as the repository has them (in the order of `run`'s kinds).
const EXAMPLE: [(&str, &str); 3] = [
    (
        "config.yaml",
        include_str!("../../config/example/config.yaml"),
    ),
    (
        "hooks.yaml",
        include_str!("../../config/example/hooks.yaml"),
    ),
    (
        "reminders.yaml",
        include_str!("../../config/example/reminders.yaml"),
    ),
];
const HEADLESS: [(&str, &str); 3] = [
    (
        "config.yaml",
        include_str!("../../config/headless/config.yaml"),
    ),
    (
        "hooks.yaml",
        include_str!("../../config/headless/hooks.yaml"),
    ),
    (
        "reminders.yaml",
        include_str!("../../config/headless/reminders.yaml"),
    ),
];

/// Write `bytes` to a new file at `path`; an existing file (or a link planted there) is kept,
/// never replaced. What was done goes into `said`.
fn write_new(path: &std::path::Path, bytes: &[u8], said: &mut String) -> Result<(), Error> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(mut f) => {
            use std::io::Write;
            f.write_all(bytes)
                .map_err(|e| Error::Cannot(format!("cannot write {}: {e}", path.display())))?;
            said.push_str(&format!("wrote {}\n", path.display()));
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            said.push_str(&format!(
                "kept {} (it exists; not changed)\n",
                path.display()
            ));
        }
        Err(e) => {
            return Err(Error::Cannot(format!(
                "cannot write {}: {e}",
                path.display()
            )))
        }
    }
    Ok(())
}

/// `hookd init`.
pub(super) fn run(a: Args) -> Done {
    let dir = match a
        .config_dir
        .clone()
        .or_else(|| hookd::paths::home().map(|h| h.join(".infer")))
    {
        Some(d) => d,
        None => {
            return Err(Error::Cannot(
                "HOME is not set: give --config-dir DIR".into(),
            ))
        }
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::Cannot(format!("cannot create {}: {e}", dir.display())))?;
    let files = if a.headless { HEADLESS } else { EXAMPLE };
    let schemas = dir.join("schemas");
    std::fs::create_dir_all(&schemas)
        .map_err(|e| Error::Cannot(format!("cannot create {}: {e}", schemas.display())))?;
    let mut said = String::new();
    let kinds = [SchemaFile::Config, SchemaFile::Hooks, SchemaFile::Reminders];
    for ((name, text), kind) in files.into_iter().zip(kinds) {
        // Each file names its schema, written beside it, for the editor's YAML language server.
        let schema_name = format!("{}.schema.json", kind.name());
        let body = text.split_once('\n').map_or(text, |(_, rest)| rest);
        let text = format!("# yaml-language-server: $schema=./schemas/{schema_name}\n{body}");
        write_new(&dir.join(name), text.as_bytes(), &mut said)?;
        let schema = serde_json::to_string_pretty(&kind.schema()).unwrap_or_default() + "\n";
        write_new(&schemas.join(&schema_name), schema.as_bytes(), &mut said)?;
    }
    out(&said);
    if let Some(agent) = a.agent {
        install::run(install::Args {
            agent,
            scope: Scope::User,
            fail_closed: a.headless,
            gate_shell_tools: a.headless,
            follow_symlinks: false,
        })?;
    }
    let check = match &a.config_dir {
        Some(d) => format!("hookd check --config-dir {}", d.display()),
        None => "hookd check".into(),
    };
    out(&format!(
        "next: review what it runs and allows with `{check}`{}\n",
        if a.agent.is_none() {
            ", then connect an agent: `hookd install claude-code --scope user` (or gemini, crush)"
        } else {
            ""
        }
    ));
    Ok(0)
}
