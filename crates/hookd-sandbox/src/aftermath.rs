//! What a confined command leaves behind that git runs later, outside the sandbox, looked at
//! once the command (and everything it started) has ended.
//!
//! git's sequencer state is not configuration, and ordinary git work writes it (a rebase, a
//! cherry-pick, a revert stopped at a conflict), so it stays writable. But its to-do list runs
//! its `exec` lines at the user's `git rebase --continue` (or an IDE's "Continue" button):
//! a confined command that made or changed one with an `exec` line (or made it anything but a
//! plain file) has its state moved aside, named, before anyone continues it.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The sequencer's states in a git directory: the state directory and its to-do list.
const TODOS: [(&str, &str); 2] = [("rebase-merge", "git-rebase-todo"), ("sequencer", "todo")];

/// A file as it was: inode, size, modification time.
type Stamp = (u64, u64, i64, i64);

fn stamp(path: &Path) -> Option<Stamp> {
    let m = path.symlink_metadata().ok()?;
    Some((m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
}

/// The to-do lists of the git directories a command may write, as they were before it ran.
#[derive(Debug, Default)]
pub(crate) struct Aftermath {
    todos: Vec<(PathBuf, PathBuf, Option<Stamp>)>,
}

impl Aftermath {
    /// The state of `git_dirs`' to-do lists now.
    pub(crate) fn before(git_dirs: impl IntoIterator<Item = PathBuf>) -> Aftermath {
        let mut todos = Vec::new();
        for dir in git_dirs {
            for (state, todo) in TODOS {
                let state = dir.join(state);
                let todo = state.join(todo);
                let was = stamp(&todo);
                todos.push((state, todo, was));
            }
        }
        Aftermath { todos }
    }

    /// Once the command has ended: each to-do list it made or changed that would run a command
    /// (or is not a plain file) has its state directory moved aside (never followed: a link is
    /// moved as a link). What was moved, one sentence each, for the command's caller to say.
    pub(crate) fn settle(&self) -> Vec<String> {
        let mut said = Vec::new();
        for (state, todo, was) in &self.todos {
            let now = stamp(todo);
            if now.is_none() || now == *was || !runs_a_command(todo) {
                continue;
            }
            let Some(aside) = free_name(state) else {
                continue;
            };
            match std::fs::rename(state, &aside) {
                Ok(()) => said.push(format!(
                    "the command left git's {} with an `exec` line, which `git rebase --continue` (or `git cherry-pick --continue`) would run outside the sandbox: moved to {}; read it before you continue it yourself",
                    state.display(),
                    aside.display()
                )),
                Err(e) => said.push(format!(
                    "the command left git's {} with an `exec` line, which git would run outside the sandbox, and it could not be moved aside ({e}): do not continue it",
                    state.display()
                )),
            }
        }
        said
    }
}

/// Whether the to-do list at `todo` runs a command: an `exec` (`x`) line, or not a plain file
/// hookd can read (a link, a FIFO: what git would read there is not known).
fn runs_a_command(todo: &Path) -> bool {
    let plain = todo.symlink_metadata().is_ok_and(|m| m.is_file());
    if !plain {
        return true;
    }
    let Ok(text) = std::fs::read(todo) else {
        return true;
    };
    String::from_utf8_lossy(&text).lines().any(|line| {
        let mut words = line.split_whitespace();
        matches!(words.next(), Some("exec" | "x"))
    })
}

/// `state` with `.hookd-aside` (and a number, where that is taken) added.
fn free_name(state: &Path) -> Option<PathBuf> {
    let name = state.file_name()?.to_string_lossy().into_owned();
    (0..100)
        .map(|i| match i {
            0 => state.with_file_name(format!("{name}.hookd-aside")),
            i => state.with_file_name(format!("{name}.hookd-aside-{i}")),
        })
        .find(|p| p.symlink_metadata().is_err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_todo_with_an_exec_line_is_moved_aside_and_a_plain_one_is_not() {
        let git = tempfile::tempdir().unwrap();
        let after = Aftermath::before([git.path().to_path_buf()]);
        std::fs::create_dir_all(git.path().join("rebase-merge")).unwrap();
        std::fs::write(
            git.path().join("rebase-merge/git-rebase-todo"),
            "pick 1234 one\n  x  touch /tmp/pwned\n",
        )
        .unwrap();
        std::fs::create_dir_all(git.path().join("sequencer")).unwrap();
        std::fs::write(
            git.path().join("sequencer/todo"),
            "pick 1234 one\n# exec x\n",
        )
        .unwrap();
        let said = after.settle();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(git.path().join("rebase-merge.hookd-aside").is_dir());
        assert!(!git.path().join("rebase-merge").exists());
        assert!(git.path().join("sequencer/todo").is_file());
        // The user's own, unchanged by the command, is left alone.
        std::fs::create_dir_all(git.path().join("rebase-merge")).unwrap();
        std::fs::write(
            git.path().join("rebase-merge/git-rebase-todo"),
            "exec make\n",
        )
        .unwrap();
        assert!(Aftermath::before([git.path().to_path_buf()])
            .settle()
            .is_empty());
    }
}
