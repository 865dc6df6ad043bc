//! The user's `sandbox.write` entries as the sandbox takes them: an entry reached through a
//! link that a confined command could have made (one in a place it may write), or one whose
//! link leads to a wider place (an ancestor of the entry, a top-level directory), is left out
//! of this command's writable places, and said. A confined command that replaced an absent
//! entry in the project with a link to `~/.ssh` would otherwise have the next one write there;
//! sandbox-runtime skips such entries too (`symlink-write-path.test.ts`).

use std::path::{Path, PathBuf};

use crate::disk::Disk;

/// `entries` less those reached through such a link, and one sentence for each left out.
/// `base` are the other places the command may write (the project, the temporary directory).
pub(crate) fn writable_entries(
    entries: &[PathBuf],
    base: &[PathBuf],
    disk: &Disk,
) -> (Vec<PathBuf>, Vec<String>) {
    let mut kept = Vec::new();
    let mut said = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        // The places a confined command may write besides this entry, resolved.
        let others: Vec<PathBuf> = (base.iter())
            .chain(
                entries
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, e)| e),
            )
            .map(|w| disk.real(w))
            .collect();
        match why_left_out(entry, &others) {
            // Taken as the path its links led to in the one resolution that was checked, which
            // has none: the sandbox opens it refusing any link (`RESOLVE_NO_SYMLINKS`), so a
            // link put on the way after this check (a directory on the chain swapped at that
            // moment: attack round 13, F6) makes the entry not writable rather than writable
            // where it leads.
            Ok(to) => kept.push(to),
            Err(why) => said.push(format!(
                "the `sandbox.write` entry {} {why}: it was not writable to the command; remove the link, or list the place it leads to",
                crate::aftermath::shown(entry)
            )),
        }
    }
    (kept, said)
}

/// Where `entry` leads (a path with no link), or why it is left out: a link met anywhere on
/// the way to it (its own components, and those of every link's target in turn, as the kernel
/// resolves it: attack round 12, F4, a user's link into the project that a confined command
/// re-pointed one link further) lies in a place a confined command may write; or the links
/// lead to a wider place. One resolution, checked and returned (two let a swap between them
/// win: attack round 13, F6).
fn why_left_out(entry: &Path, others: &[PathBuf]) -> Result<PathBuf, String> {
    let Some((met, real)) = links_met(entry) else {
        return Err("is reached through too many links".to_string());
    };
    for link in &met {
        let dir = link.parent().unwrap_or(Path::new("/"));
        if others.iter().any(|w| dir.starts_with(w)) {
            return Err(format!(
                "is reached through the link {}, in a place confined commands may write (one could have made it)",
                crate::aftermath::shown(link)
            ));
        }
    }
    let wider = !met.is_empty()
        && real != entry
        && (entry.starts_with(&real) || real.components().count() <= 2);
    if wider {
        return Err(format!(
            "leads through a link to {}, a wider place than itself",
            crate::aftermath::shown(&real)
        ));
    }
    Ok(real)
}

/// The links the kernel meets resolving `path`, each named in a directory reached without a
/// link (so its place is where it really is), and the path they lead to (which has none);
/// `None` past 40 of them (the kernel's own limit).
fn links_met(path: &Path) -> Option<(Vec<PathBuf>, PathBuf)> {
    use std::collections::VecDeque;
    use std::path::Component;
    let parts = |p: &Path| -> Vec<std::ffi::OsString> {
        p.components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n.to_os_string()),
                Component::ParentDir => Some("..".into()),
                _ => None,
            })
            .collect()
    };
    let mut rest: VecDeque<std::ffi::OsString> = parts(path).into();
    let mut done = PathBuf::from("/");
    let mut met = Vec::new();
    while let Some(name) = rest.pop_front() {
        if name == ".." {
            done.pop();
            continue;
        }
        let next = done.join(&name);
        match next.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => {
                if met.len() >= 40 {
                    return None;
                }
                let target = std::fs::read_link(&next).ok()?;
                met.push(next);
                if target.is_absolute() {
                    done = PathBuf::from("/");
                }
                for part in parts(&target).into_iter().rev() {
                    rest.push_front(part);
                }
            }
            _ => done = next,
        }
    }
    Some((met, done))
}

/// Why a listed socket in a writable place is left out.
const LIES_IN: &str =
    "lies in a place confined commands may write (one could put a link to another socket there)";

/// The user's `sandbox.unix_sockets` entries less those a confined command could replace: one
/// in a place it may write (`writable`: a link put there to the session bus would be connected
/// to as listed; sandbox-runtime drops such entries too), or reached through a link that lies
/// in one. Each kept as where it leads (and as spelled, where that differs); one sentence for
/// each left out.
pub(crate) fn listed_sockets(
    sockets: &[PathBuf],
    writable: &[PathBuf],
    disk: &Disk,
) -> (Vec<PathBuf>, Vec<String>) {
    let writable: Vec<PathBuf> = writable.iter().map(|w| disk.real(w)).collect();
    let mut kept = Vec::new();
    let mut said = Vec::new();
    for socket in sockets {
        // One resolution, checked and kept (two let a swap between them win: attack round 13,
        // F6): where it leads, a path with no link, all of it outside the writable places.
        let lies_in = |dir: &Path| writable.iter().any(|w| dir.starts_with(w));
        let spelled = disk.real(socket.parent().unwrap_or(Path::new("/")));
        let why = if lies_in(&spelled) {
            Err(LIES_IN.to_string())
        } else {
            why_left_out(socket, &writable).and_then(|real| {
                match lies_in(real.parent().unwrap_or(Path::new("/"))) {
                    true => Err(LIES_IN.to_string()),
                    false => Ok(real),
                }
            })
        };
        match why {
            Ok(real) => {
                kept.push(real.clone());
                if real != *socket {
                    // As the user spelled it too: a variable naming it so is kept.
                    kept.push(socket.clone());
                }
            }
            Err(why) => said.push(format!(
                "the `sandbox.unix_sockets` entry {} {why}: it was not reachable by the command; list a socket outside the places it may write",
                crate::aftermath::shown(socket)
            )),
        }
    }
    (kept, said)
}

#[cfg(all(test, feature = "confine"))]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_taken_where_its_links_lead_and_a_link_put_there_later_grants_nothing() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("p/a/cache")).unwrap();
        std::fs::create_dir_all(root.join("b")).unwrap();
        std::fs::create_dir_all(root.join("outside")).unwrap();
        std::os::unix::fs::symlink(root.join("p/a/cache"), root.join("b/cache")).unwrap();
        let disk = Disk::default();
        // The user's link lies outside the writable places: kept, as where it leads.
        let (kept, said) = writable_entries(&[root.join("b/cache")], &[root.join("p")], &disk);
        assert!(said.is_empty(), "{said:?}");
        assert_eq!(kept, [root.join("p/a/cache")]);
        // A confined command swaps `a` for a directory whose `cache` is a link outside, after
        // the check (attack round 13, F6): the entry, opened refusing links, grants nothing.
        std::fs::rename(root.join("p/a"), root.join("p/a.old")).unwrap();
        std::fs::create_dir(root.join("p/a")).unwrap();
        std::os::unix::fs::symlink(root.join("outside"), root.join("p/a/cache")).unwrap();
        let ruleset = crate::linux::ruleset(&kept, &kept, &[]);
        assert!(ruleset.is_ok());
        assert!(crate::linux::open_path(&kept[0], true).is_err());
        assert!(crate::linux::open_path(&kept[0], false).is_ok());
    }
}
