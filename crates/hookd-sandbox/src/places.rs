//! The places a policy holds, as data: absolute paths held read-only or hidden, files held by
//! the start of their name, and names held in the project's directories (and in a git
//! directory's), with the homes git's user configuration is read from.

use std::path::PathBuf;

/// What the sandbox does to a place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Never writable: held read-only (a bind mount) wherever it lies in a writable place.
    ReadOnly,
    /// Unreadable: an empty read-only mount (a directory) or `/dev/null` (a file) over it.
    Hidden,
    /// Cannot be moved or removed (a mount point), its contents as other rows say.
    Pinned,
    /// A name ([`Places::by_name`]) read only when a program starts: held read-only where it
    /// exists, as [`Hold::ReadOnly`]; where it does not, no stand-in (each costs the command a
    /// link, a mount and an unlink), and one the command made is moved aside when it ends, as
    /// below the project's root.
    Watched,
    /// Nothing.
    Open,
}

/// The places a [`crate::Policy`] holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Places {
    /// Absolute places held read-only where they lie in a writable place.
    pub read_only: Vec<PathBuf>,
    /// Absolute places made unreadable.
    pub hidden: Vec<PathBuf>,
    /// Absolute files among `read_only` that a program reads at each of its starts and fails on
    /// anything but a file (git's global configuration, cargo's): where one is absent, its
    /// stand-in (a socket, on disk) is shown to the command as an empty file (`/dev/null` bound
    /// over it), so that the program runs confined as it would without the file.
    pub read_at_start: Vec<PathBuf>,
    /// Files of a directory held by the start of their name (a daemon's socket and token),
    /// found when a command is confined: the directory, the start, and what is done to each.
    pub prefixed: Vec<(PathBuf, String, Hold)>,
    /// Names held in the project's root and in every directory from it to the command's
    /// working directory, and in every other writable root (and, for `.git`, pinned); paths
    /// inside a git directory as `.git/NAME`.
    pub by_name: Vec<(String, Hold)>,
    /// The homes and configuration homes: where git's user configuration is (its
    /// `core.hooksPath` and includes are held too, see [`crate::git`]).
    pub homes: Vec<PathBuf>,
    /// See `homes`.
    pub config_homes: Vec<PathBuf>,
    /// How far below the project (and the other writable roots) `by_name` is looked for.
    pub walk: crate::walk::Bounds,
}

impl Places {
    /// The files the prefixed places name now, with what the sandbox does to each.
    pub fn prefixed_now(&self) -> Vec<(PathBuf, Hold)> {
        let mut out = Vec::new();
        for (dir, prefix, what) in &self.prefixed {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            for e in entries.flatten() {
                if e.file_name().to_string_lossy().starts_with(prefix.as_str()) {
                    out.push((e.path(), *what));
                }
            }
        }
        out
    }

    /// Add `other`'s absolute places, prefixed places and homes (not its names), each once.
    pub fn extend(&mut self, other: Places) {
        fn add<T: PartialEq>(to: &mut Vec<T>, from: Vec<T>) {
            for x in from {
                if !to.contains(&x) {
                    to.push(x);
                }
            }
        }
        add(&mut self.read_only, other.read_only);
        add(&mut self.hidden, other.hidden);
        add(&mut self.prefixed, other.prefixed);
        add(&mut self.homes, other.homes);
        add(&mut self.config_homes, other.config_homes);
    }
}
