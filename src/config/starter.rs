//! A first configuration directory (`hookd init`): the shipped example or unattended files,
//! each naming its JSON Schema, written beside it; never over a file that is there.

use super::SchemaFile;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Which shipped configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Starter {
    /// config/example: reminders and a few hooks, for a person at the keyboard.
    Example,
    /// config/headless: an exact allow-list, the model's shell commands gated, hookd's
    /// failures denied, the sandbox on.
    Headless,
}

/// The shipped files, as the repository has them, with the schema each is checked against.
fn files(starter: Starter) -> [(&'static str, &'static str, SchemaFile); 3] {
    match starter {
        Starter::Example => [
            (
                "config.yaml",
                include_str!("../../config/example/config.yaml"),
                SchemaFile::Config,
            ),
            (
                "hooks.yaml",
                include_str!("../../config/example/hooks.yaml"),
                SchemaFile::Hooks,
            ),
            (
                "reminders.yaml",
                include_str!("../../config/example/reminders.yaml"),
                SchemaFile::Reminders,
            ),
        ],
        Starter::Headless => [
            (
                "config.yaml",
                include_str!("../../config/headless/config.yaml"),
                SchemaFile::Config,
            ),
            (
                "hooks.yaml",
                include_str!("../../config/headless/hooks.yaml"),
                SchemaFile::Hooks,
            ),
            (
                "reminders.yaml",
                include_str!("../../config/headless/reminders.yaml"),
                SchemaFile::Reminders,
            ),
        ],
    }
}

/// What happened to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Wrote {
    /// Written.
    New(PathBuf),
    /// It was there (a file, or a link planted there): kept as it is.
    Kept(PathBuf),
}

impl std::fmt::Display for Wrote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Wrote::New(p) => write!(f, "wrote {}", p.display()),
            Wrote::Kept(p) => write!(f, "kept {} (it exists; not changed)", p.display()),
        }
    }
}

/// A file or directory that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot {what} {}: {source}", path.display())]
pub struct StarterError {
    /// `create` or `write`.
    what: &'static str,
    /// The path.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// What `hookd init` tells a person to do next: review the configuration (`config_dir`, when
/// it was written elsewhere than `~/.infer`), then connect an agent unless one was.
pub fn next_step(config_dir: Option<&Path>, agent_installed: bool) -> String {
    let check = match config_dir {
        Some(d) => format!("hookd check --config-dir {}", d.display()),
        None => "hookd check".into(),
    };
    let connect = match agent_installed {
        true => "",
        false => {
            ", then connect an agent: `hookd install claude-code --scope user` (or gemini, crush)"
        }
    };
    format!("next: review what it runs and allows with `{check}`{connect}\n")
}

/// Write `starter`'s files into `dir` (created), and their schemas into `dir/schemas/`.
pub fn write_starter(dir: &Path, starter: Starter) -> Result<Vec<Wrote>, StarterError> {
    let schemas = dir.join("schemas");
    for d in [dir, &schemas] {
        std::fs::create_dir_all(d).map_err(|source| StarterError {
            what: "create",
            path: d.to_path_buf(),
            source,
        })?;
    }
    let mut wrote = Vec::new();
    for (name, text, kind) in files(starter) {
        // Each file names its schema, written beside it, for the editor's YAML language server.
        let schema_name = format!("{}.schema.json", kind.name());
        let body = text.split_once('\n').map_or(text, |(_, rest)| rest);
        let text = format!("# yaml-language-server: $schema=./schemas/{schema_name}\n{body}");
        wrote.push(write_new(&dir.join(name), text.as_bytes())?);
        let schema = serde_json::to_string_pretty(&kind.schema()).unwrap_or_default() + "\n";
        wrote.push(write_new(&schemas.join(&schema_name), schema.as_bytes())?);
    }
    Ok(wrote)
}

/// Write `bytes` to a new file at `path`; an existing file (or a link planted there) is kept,
/// never replaced.
fn write_new(path: &Path, bytes: &[u8]) -> Result<Wrote, StarterError> {
    let failed = |source| StarterError {
        what: "write",
        path: path.to_path_buf(),
        source,
    };
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(mut f) => {
            f.write_all(bytes).map_err(failed)?;
            Ok(Wrote::New(path.to_path_buf()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Ok(Wrote::Kept(path.to_path_buf()))
        }
        Err(e) => Err(failed(e)),
    }
}
