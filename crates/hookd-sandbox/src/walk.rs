//! The walk that finds the protected names that exist below a root off the way to the
//! command's working directory (`web/.claude`, `web/.env`, a nested repository's `.git`):
//! breadth first, a few levels deep, never through a link, and never trusting what the
//! confined command can write to decide what is skipped (no `.gitignore`, no marker file).
//! The sandbox holds what it finds as it holds the root's; the gate reads the nested
//! repositories' indirections from the same walk.
//!
//! Why these bounds (docs/security.md, "Below the project's root"): a place held once keeps
//! its ancestors pinned, so nothing found can be moved out of reach of the next walk; what a
//! bound leaves out could be written by the command whatever the bound. Only names are read
//! (one `getdents` per directory, no `stat`): its cost is the number of directories and
//! entries it reads, measured in docs/benchmarks.md.

use std::path::{Path, PathBuf};

/// How deep the walk finds names: a name at most this many components below the root
/// (`a/b/.env`, `web/.claude`, `vendor/lib/.git`). sandbox-runtime's Linux search lists files
/// at most 3 deep (`rg --max-depth 3`), so it finds `a/b/.mcp.json` and `sub/.git/config` but
/// not `sub/.git/hooks/*`; a directory found here is held whole, and a `.git` with all its
/// places, so this depth finds everything it finds and more.
pub const DEPTH: usize = 3;

/// The most directories one walk reads. Beyond it the walk stops and says so
/// ([`Found::cut`]); the command does not run (see [`Found::cut`]).
pub const MOST_DIRS: usize = 20_000;

/// The most entries one walk reads (all directories together).
pub const MOST_ENTRIES: usize = 1_000_000;

/// Directories never entered, by name (they are not entered because what is in them is not a
/// place anyone starts an agent, git or an editor in: `node_modules` holds installed packages,
/// code the user's next `npm test` runs anyway; sandbox-runtime skips it too). The names
/// protected themselves are not entered either: each is held whole, or is a `.git` whose
/// places are held by their own names.
pub const NOT_ENTERED: &[&str] = &["node_modules"];

/// What one walk found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The directories below the root (not the root itself) that hold at least one of the
    /// names, outermost first.
    pub dirs: Vec<PathBuf>,
    /// Where the walk stopped short of its depth: the first directory it did not read, and
    /// why. The caller fails closed on it (an attacker could make the tree that large on
    /// purpose to keep a place from being found).
    pub cut: Option<String>,
}

/// The directories below `root`, at most [`DEPTH`] levels down, that hold one of `names`
/// (exact names of entries, any type). Directories named in `names` or [`NOT_ENTERED`], and
/// links, are not entered.
pub fn walk(root: &Path, names: &[&str]) -> Found {
    let mut found = Found::default();
    let mut level = vec![root.to_path_buf()];
    let (mut dirs, mut entries) = (0usize, 0usize);
    for depth in 1..=DEPTH {
        let mut next = Vec::new();
        for dir in &level {
            if dirs == MOST_DIRS || entries >= MOST_ENTRIES {
                found.cut = Some(format!(
                    "the walk for protected places below {} stopped at {} after {dirs} directories and {entries} entries (at most {MOST_DIRS} directories and {MOST_ENTRIES} entries, {DEPTH} levels deep)",
                    root.display(),
                    dir.display()
                ));
                return found;
            }
            dirs += 1;
            let Ok(read) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut holds = false;
            for e in read.flatten() {
                entries += 1;
                let name = e.file_name();
                let name = name.to_str().unwrap_or_default();
                if names.contains(&name) {
                    holds = true;
                    continue;
                }
                // The type from the directory entry itself (no `stat`); a link is not a
                // directory here.
                let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                if is_dir && depth < DEPTH && !NOT_ENTERED.contains(&name) {
                    next.push(e.path());
                }
            }
            if holds && dir != root {
                found.dirs.push(dir.clone());
            }
        }
        level = next;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_three_levels_down_and_not_below() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for dir in [
            "web/.claude",
            "a/b/.git/hooks",
            "a/b/c/.claude",
            "node_modules/x/.claude",
            ".claude/y/.env",
            "t/linked",
        ] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
        }
        std::fs::write(r.join("web/.env"), "").unwrap();
        std::fs::write(r.join(".env"), "").unwrap();
        std::os::unix::fs::symlink(r.join("web"), r.join("t/link")).unwrap();
        let f = walk(r, &[".claude", ".env", ".git"]);
        assert_eq!(f.dirs, [r.join("web"), r.join("a/b")]);
        assert_eq!(f.cut, None);
    }
}
