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
        match why_left_out(entry, &others, disk) {
            None => kept.push(entry.clone()),
            Some(why) => said.push(format!(
                "the `sandbox.write` entry {} {why}: it was not writable to the command; remove the link, or list the place it leads to",
                crate::aftermath::shown(entry)
            )),
        }
    }
    (kept, said)
}

/// Why `entry` is left out, if it is: a link met anywhere on the way to it (its own
/// components, and those of every link's target in turn, as the kernel resolves it: attack
/// round 12, F4, a user's link into the project that a confined command re-pointed one link
/// further) lies in a place a confined command may write; or the links lead to a wider place.
fn why_left_out(entry: &Path, others: &[PathBuf], disk: &Disk) -> Option<String> {
    let Some(met) = links_met(entry) else {
        return Some("is reached through too many links".to_string());
    };
    for link in &met {
        let dir = link.parent().unwrap_or(Path::new("/"));
        if others.iter().any(|w| dir.starts_with(w)) {
            return Some(format!(
                "is reached through the link {}, in a place confined commands may write (one could have made it)",
                crate::aftermath::shown(link)
            ));
        }
    }
    let real = disk.real(entry);
    let wider = real != entry
        && (entry.starts_with(&real) || real.components().count() <= 2)
        && entry.symlink_metadata().is_ok();
    wider.then(|| {
        format!(
            "leads through a link to {}, a wider place than itself",
            crate::aftermath::shown(&real)
        )
    })
}

/// The links the kernel meets resolving `path`, each named in a directory reached without a
/// link (so its place is where it really is); `None` past 40 of them (the kernel's own limit).
fn links_met(path: &Path) -> Option<Vec<PathBuf>> {
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
    Some(met)
}

/// The user's `sandbox.unix_sockets` entries less those a confined command could replace: one
/// in a place it may write (`writable`: a link put there to the session bus would be connected
/// to as listed; sandbox-runtime drops such entries too), or reached through a link that lies
/// in one. One sentence for each left out.
pub(crate) fn listed_sockets(
    sockets: &[PathBuf],
    writable: &[PathBuf],
    disk: &Disk,
) -> (Vec<PathBuf>, Vec<String>) {
    let writable: Vec<PathBuf> = writable.iter().map(|w| disk.real(w)).collect();
    let mut kept = Vec::new();
    let mut said = Vec::new();
    for socket in sockets {
        let parent = socket.parent().unwrap_or(Path::new("/"));
        let why = if writable.iter().any(|w| disk.real(parent).starts_with(w)) {
            Some("lies in a place confined commands may write (one could put a link to another socket there)".to_string())
        } else {
            why_left_out(socket, &writable, disk)
        };
        match why {
            None => kept.push(socket.clone()),
            Some(why) => said.push(format!(
                "the `sandbox.unix_sockets` entry {} {why}: it was not reachable by the command; list a socket outside the places it may write",
                crate::aftermath::shown(socket)
            )),
        }
    }
    (kept, said)
}
