//! Where things are: the project a run belongs to, and the user's home as the user database
//! says (the places variables name are read from a [`crate::host::Host`]). The infer CLI reads
//! the `.infer/` of its working directory; hookd does the same when there is one, and otherwise
//! looks up the tree for the nearest `.infer/`, stopping at the repository root (a directory
//! with `.git`) and never reaching into the home directory, whose `.infer/` is the user's own.

use std::path::{Path, PathBuf};

/// The project configuration files a fingerprint covers, in `.infer/`.
pub const PROJECT_FILES: [&str; 3] = ["config.yaml", "hooks.yaml", "reminders.yaml"];

pub use hookd_sandbox::user_home;

/// The project directory for a run started in `start`: the nearest directory at or above it
/// holding `.infer/`, not above the repository root (`.git`) and not the home directory; the
/// repository root when no `.infer/` is found below it; else `start` itself.
pub fn find_project(start: &Path, home: Option<&Path>) -> PathBuf {
    let home = home.and_then(|h| h.canonicalize().ok());
    let mut dir = Some(start);
    while let Some(d) = dir {
        let real = d.canonicalize().ok();
        if real.is_some() && real == home {
            break;
        }
        if d.join(".infer").is_dir() {
            return d.to_path_buf();
        }
        if d.join(".git").exists() {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    start.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_infer_not_above_the_repository_nor_into_home() {
        let d = tempfile::tempdir().unwrap();
        let home = d.path().join("home");
        let repo = home.join("src/repo");
        let deep = repo.join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir_all(home.join(".infer")).unwrap();
        // No .infer, no .git: the start.
        assert_eq!(find_project(&deep, Some(&home)), deep);
        // A repository root: there.
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        assert_eq!(find_project(&deep, Some(&home)), repo);
        // Its .infer/ (or one nearer): there.
        std::fs::create_dir_all(repo.join(".infer")).unwrap();
        assert_eq!(find_project(&deep, Some(&home)), repo);
        std::fs::create_dir_all(repo.join("a/.infer")).unwrap();
        assert_eq!(find_project(&deep, Some(&home)), repo.join("a"));
        // An .infer above the repository root is not the repository's.
        std::fs::create_dir_all(home.join("src/.infer")).unwrap();
        std::fs::remove_dir_all(repo.join(".infer")).unwrap();
        std::fs::remove_dir_all(repo.join("a/.infer")).unwrap();
        assert_eq!(find_project(&deep, Some(&home)), repo);
        // Home's own .infer is never the project's.
        let loose = home.join("notes/x");
        std::fs::create_dir_all(&loose).unwrap();
        std::fs::remove_dir_all(home.join("src/.infer")).unwrap();
        assert_eq!(find_project(&loose, Some(&home)), loose);
    }
}
