//! Writing files hookd owns or edits (trust store, session state, token, agents' settings):
//! whole or not at all, and readable by this user only. The new content goes to a temporary
//! file created in the same directory (`O_EXCL`, mode 0600, never through a symlink: `tempfile`), is synced, then
//! renamed over the target, so a reader never sees half a file and a planted symlink at the
//! target is replaced, not followed.

use std::io::Write;
use std::path::Path;

/// Replace `path` with `bytes`, mode 0600.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Open (creating it 0600 if needed) a lock file beside hookd's own files.
pub(crate) fn lock_file(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn files_are_private_and_a_planted_link_is_replaced() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let target = d.path().join("trust.json");
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        write_private(&target, b"{}").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let meta = std::fs::symlink_metadata(&target).unwrap();
        assert!(meta.file_type().is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let lock = d.path().join("x.lock");
        lock_file(&lock).unwrap();
        let mode = std::fs::metadata(&lock).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
