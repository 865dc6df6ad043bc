//! Where `hookd install --scope user` put hookd's hooks, recorded in `~/.infer/installed.json`.
//! The gate protects those settings files whatever the environment says later: a repository's
//! Claude Code settings may hand the agent's hooks a `CLAUDE_CONFIG_DIR` of its choosing, which
//! would otherwise hide the user's own (moved) settings directory from hookd.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The record, below the user's home.
pub const RECORD: &str = ".infer/installed.json";
/// The most of the record read: thousands of paths.
const MOST_BYTES: u64 = 1 << 20;

#[derive(Default, Serialize, Deserialize)]
struct Record {
    /// The settings files, absolute, sorted, each once.
    settings: Vec<PathBuf>,
}

fn read(path: &Path) -> Result<Record, String> {
    match super::fsread::read_regular(path, MOST_BYTES) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| e.to_string()),
        Err(super::fsread::ReadError::NotFound) => Ok(Record::default()),
        Err(e) => Err(e.to_string()),
    }
}

/// The settings files recorded below `home` (none when there is no record; one that cannot be
/// read is logged and adds nothing).
pub(crate) fn recorded(home: &Path) -> Vec<PathBuf> {
    let path = home.join(RECORD);
    match read(&path) {
        Ok(r) => r.settings.into_iter().filter(|p| p.is_absolute()).collect(),
        Err(e) => {
            tracing::warn!(target: "hookd::config", "{}: {e}; the settings files it names are not protected", path.display());
            Vec::new()
        }
    }
}

/// Add `settings` (absolute paths) to the record below `home`, created 0600 if need be, under a
/// lock. A record that cannot be read is an error, not overwritten.
pub fn remember(home: &Path, settings: &[&Path]) -> std::io::Result<()> {
    let path = home.join(RECORD);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let lock = crate::atomic::lock_file(&path.with_extension("lock"))?;
    lock.lock()?;
    let mut record = read(&path).map_err(|e| {
        let why = format!(
            "{}: {e}; fix or remove it, hookd changed nothing",
            path.display()
        );
        std::io::Error::new(std::io::ErrorKind::InvalidData, why)
    })?;
    let before = record.settings.len();
    record.settings.extend(
        settings
            .iter()
            .filter(|p| p.is_absolute())
            .map(|p| p.to_path_buf()),
    );
    record.settings.sort();
    record.settings.dedup();
    if record.settings.len() == before && path.exists() {
        return Ok(());
    }
    let mut text = serde_json::to_string_pretty(&record).map_err(std::io::Error::other)?;
    text.push('\n');
    crate::atomic::write_private(&path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_remembered_is_recorded_once_and_read_back() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("cc/settings.json");
        remember(d.path(), &[&a, Path::new("relative.json")]).unwrap();
        remember(d.path(), &[&a]).unwrap();
        assert_eq!(recorded(d.path()), [a]);
        std::fs::write(d.path().join(RECORD), "not json").unwrap();
        assert!(recorded(d.path()).is_empty());
        assert!(remember(d.path(), &[Path::new("/x")]).is_err());
        assert_eq!(
            std::fs::read_to_string(d.path().join(RECORD)).unwrap(),
            "not json"
        );
    }
}
