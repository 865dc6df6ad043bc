//! What a confined command's end did not look at, judged by the next command's start: where
//! the walks at its start read more than [`crate::below::LOOKS_AGAIN_UP_TO`] directories, the
//! end does not walk the tree again (it would double every command's cost there), and what the
//! command made below was left (attack round 22: a repository planted in `node_modules/q` and
//! `a/x -> ../node_modules/q`, 3 of 3). Its record ([`Below`], with when its sandbox ended) is
//! kept in `STATE/deferred` instead; the next confined command in the same project walks the
//! tree anyway, and each protected place its walk finds that is not what that command's start
//! recorded, and was not born after its end, is moved aside before anything is held
//! (`held.rs`). What is left: the time between that end and the next confined command.

use std::path::{Path, PathBuf};

use crate::below::Below;

/// One command's record, kept for the next start ([`load`]).
pub(crate) struct Deferred {
    pub(crate) file: PathBuf,
    pub(crate) below: Below,
    /// Whether it is this command's project's (not one holding it): this start's walk reads
    /// its whole tree, and it is removed once judged.
    pub(crate) whole: bool,
}

/// Keep `below` in `dir` (made where absent, this user's alone), stamped with now as its
/// sandbox's end. Failing (no state, a full disk) leaves what the command made as before.
pub(crate) fn keep(dir: &Path, below: &Below) {
    use std::io::Write;
    use std::os::unix::fs::DirBuilderExt;
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir);
    let Ok(mut tmp) = tempfile::Builder::new()
        .prefix(".writing-")
        .tempfile_in(dir)
    else {
        return;
    };
    if tmp.write_all(&below.to_bytes()).is_err() {
        return;
    }
    let name = format!("{}-{}", std::process::id(), random_suffix());
    let _ = tmp.persist(dir.join(name));
}

/// Move the record at `file` (a killed command's, settled late: `unsettled.rs`) into `dir`,
/// keeping its stamp (when its sandbox ended, where pid 1 could say).
pub(crate) fn take(file: &Path, dir: &Path) -> bool {
    use std::os::unix::fs::DirBuilderExt;
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir);
    let name = format!("{}-{}", std::process::id(), random_suffix());
    std::fs::rename(file, dir.join(name)).is_ok()
}

/// A name no other record in the directory has.
fn random_suffix() -> String {
    use std::hash::BuildHasher;
    let random =
        std::collections::hash_map::RandomState::new().hash_one(std::time::SystemTime::now());
    format!("{random:016x}")
}

/// The records in `dir` of commands run in `project` or in a project holding it (their first
/// root: a command run from `big/d5` once the command before planted `big/d5/.git` takes `d5`
/// for its project, attack round 23), each read whole and of this user's alone, its end the
/// file's stamp; others' projects' are left for their next command, a record that is none is
/// removed.
pub(crate) fn load(dir: &Path, project: &Path) -> Vec<Deferred> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let file = entry.path();
        if entry.file_name().to_string_lossy().starts_with(".writing-") {
            continue;
        }
        let read = crate::walk_memory::read_own(&file).and_then(|b| Below::from_bytes(&b));
        let Some(mut below) = read else {
            let _ = std::fs::remove_file(&file);
            continue;
        };
        let Some(root) = below.roots.first().cloned() else {
            continue;
        };
        if !project.starts_with(&root) {
            continue;
        }
        let stamp = std::fs::symlink_metadata(&file).and_then(|m| m.modified());
        below.ended = stamp.ok().filter(|m| *m > std::time::UNIX_EPOCH);
        let whole = root == project;
        out.push(Deferred { file, below, whole });
    }
    out
}
