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
use crate::unsettled::WRITING;

/// One command's record, kept for the next start ([`load`]).
pub(crate) struct Deferred {
    pub(crate) file: PathBuf,
    pub(crate) below: Below,
    /// Whether it is this command's project's (not one holding it): this start's walk reads
    /// its whole tree, and it is removed once judged.
    pub(crate) whole: bool,
}

/// Keep `below` in `dir` (made where absent, this user's alone), stamped with now as its
/// sandbox's end, under a name no other record has (this process's id, then `tempfile`'s
/// random part, as `unsettled.rs` names its records). Failing (no state, a full disk) leaves
/// what the command made as before.
pub(crate) fn keep(dir: &Path, below: &Below) {
    use std::io::Write;
    crate::walk_memory::own_dir(dir);
    let Ok(mut tmp) = tempfile::Builder::new().prefix(WRITING).tempfile_in(dir) else {
        return;
    };
    if tmp.write_all(&below.to_bytes()).is_err() {
        return;
    }
    let Some(random) = tmp
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
    else {
        return;
    };
    let name = format!(
        "{}-{}",
        std::process::id(),
        random.trim_start_matches(WRITING)
    );
    let _ = tmp.persist(dir.join(name));
}

/// Move the record at `file` (a killed command's, settled late: `unsettled.rs`, whose names are
/// unique already) into `dir`, keeping its name and its stamp (when its sandbox ended, where
/// pid 1 could say).
pub(crate) fn take(file: &Path, dir: &Path) -> bool {
    crate::walk_memory::own_dir(dir);
    file.file_name()
        .is_some_and(|name| std::fs::rename(file, dir.join(name)).is_ok())
}

/// The records in `dir` of commands run in `project`, in a project holding it (their first
/// root: a command run from `big/d5` once the command before planted `big/d5/.git` takes `d5`
/// for its project, attack round 23) or in one inside it (round 24), each read whole and of
/// this user's alone, its end the
/// file's stamp; others' projects' are left for their next command, a record that is none, or
/// of a project that is gone, is removed.
pub(crate) fn load(dir: &Path, project: &Path) -> Vec<Deferred> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let file = entry.path();
        if entry.file_name().to_string_lossy().starts_with(WRITING) {
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
        // Of this project, of one holding it (a planted `.git` made a subdirectory the
        // project), or of one inside it (the next command is the parent's: attack round 24).
        if !project.starts_with(&root) && !root.starts_with(project) {
            // A project gone (a temporary one, removed): nothing is left to judge there.
            if root.symlink_metadata().is_err() {
                let _ = std::fs::remove_file(&file);
            }
            continue;
        }
        let stamp = std::fs::symlink_metadata(&file).and_then(|m| m.modified());
        below.ended = stamp.ok().filter(|m| *m > std::time::UNIX_EPOCH);
        let whole = root == project;
        out.push(Deferred { file, below, whole });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(root: &Path) -> Below {
        Below {
            roots: vec![root.to_path_buf()],
            names: vec![".claude".into()],
            read: 3_000,
            ..Below::default()
        }
    }

    /// A record is taken by a command of its project (whole), of one inside it or holding it
    /// (kept), left for others, removed where its project is gone or it is no record; it
    /// judges only where its walks read.
    #[test]
    fn records_are_taken_by_their_project_and_those_inside_it() {
        let d = tempfile::tempdir().unwrap();
        let (dir, p) = (d.path().join("deferred"), d.path().join("p"));
        // Made during that command (before its end): its walks read `a/b`, not `a/b/c`.
        for made in ["a/b/.claude", "a/b/c/.claude", "../q/.claude", "sub"] {
            std::fs::create_dir_all(p.join(made)).unwrap();
        }
        keep(&dir, &record(&p));
        keep(&dir, &record(&d.path().join("gone")));
        keep(&dir, &record(&d.path().join("other")));
        std::fs::create_dir_all(d.path().join("other")).unwrap();
        std::fs::write(dir.join("junk"), b"not a record").unwrap();
        let count = || std::fs::read_dir(&dir).unwrap().count();
        assert_eq!(count(), 4);
        let inside = load(&dir, &p.join("sub"));
        assert_eq!(inside.len(), 1);
        assert!(!inside[0].whole);
        assert!(inside[0].below.ended.is_some());
        // The gone project's and the junk are removed; the other project's is left.
        assert_eq!(count(), 2);
        let below = &inside[0].below;
        assert_eq!(below.made_in_found(&p.join("a/b")), [p.join("a/b/.claude")]);
        assert!(below.reads(&p.join("a/b"), false));
        assert!(!below.reads(&p.join("a/b"), true));
        assert!(!below.reads(&p.join("a/b/c"), false));
        assert!(!below.reads(&d.path().join("q"), false));
        let own = load(&dir, &p);
        assert_eq!(own.len(), 1);
        assert!(own[0].whole);
        // A project holding it takes it too, kept.
        let holding = load(&dir, d.path());
        assert_eq!(holding.len(), 2);
        assert!(holding.iter().all(|r| !r.whole));
    }
}
