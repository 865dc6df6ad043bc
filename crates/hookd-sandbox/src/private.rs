//! What a confined command does not share with its agent: a temporary directory of its own (an
//! empty tmpfs over `/tmp`, `$TMPDIR` and `/dev/shm`), empty places where the host's services keep their
//! sockets (the user's runtime directory, screen's, D-Bus's, Docker's), the variables that name
//! such sockets, and what of the host shows through those places again (the project, the home,
//! `sandbox.write`, `sandbox.unix_sockets`). Planned here, in the parent; mounted by the child
//! (`linux::private_places`).

use std::ffi::{CString, OsStr};
use std::path::{Path, PathBuf};

use super::{c_path, Disk, Policy, Unavailable};

/// Variables that name a socket, a session, a display or a service outside the sandbox (an
/// agent, a terminal multiplexer, a bus, a container engine, an editor, hookd's daemon): not
/// handed to a confined command, unless the value is a socket listed in `sandbox.unix_sockets`.
/// `TMPDIR` is set to the command's own temporary directory.
pub const SOCKET_VARIABLES: &[&str] = &[
    // Claude Code's own channel to its session (a socket and the token beside it).
    "CLAUDE_CODE_MESSAGING_SOCKET",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "GNOME_KEYRING_CONTROL",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DBUS_STARTER_ADDRESS",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "TMUX",
    "TMUX_PANE",
    "TMUX_TMPDIR",
    "STY",
    "WINDOW",
    "ZELLIJ",
    "ZELLIJ_SESSION_NAME",
    "XDG_RUNTIME_DIR",
    "WAYLAND_DISPLAY",
    "DISPLAY",
    "XAUTHORITY",
    "PULSE_SERVER",
    "NOTIFY_SOCKET",
    "VSCODE_IPC_HOOK_CLI",
    "VSCODE_GIT_IPC_HANDLE",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "SWAYSOCK",
    "I3SOCK",
    "HOOKD_SOCKET",
    "HOOKD_TOKEN",
];

/// Where services keep their sockets: each covered by an empty read-only tmpfs (the user's
/// runtime directory, `/run/user/UID` and `$XDG_RUNTIME_DIR`, is added: systemd's user manager,
/// the session bus, gpg-agent, keyrings, editors, Wayland, hookd's socket by default).
const SOCKET_DIRS: &[&str] = &[
    "/run/screen",
    "/var/run/screen",
    "/run/dbus",
    "/var/run/dbus",
    "/run/docker",
    "/var/run/docker",
    "/run/containerd",
    "/run/podman",
    "/run/buildkit",
    "/run/libvirt",
    "/var/run/libvirt",
    // Not sockets: the secrets a container or a pod is given (Docker's and Compose's, a
    // Kubernetes service account's token, where kubectl and every client-go program look
    // in-cluster). Attack round 9 (2026-11-27) read both from a confined command in CI.
    "/run/secrets",
    "/var/run/secrets",
];

/// Single sockets hidden under `/dev/null`: container engines, snapd, and systemd's private
/// manager socket (root's `systemctl` and `systemd-run` go through it: a command confined as
/// root would start units outside).
const SOCKET_FILES: &[&str] = &[
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/systemd/private",
    "/run/snapd.socket",
    "/run/snapd-snap.socket",
    "/var/lib/lxd/unix.socket",
    "/var/snap/lxd/common/lxd/unix.socket",
    "/var/lib/incus/unix.socket",
];

/// The most places shown again through the private ones (the child keeps their mount trees in
/// an array on its stack).
pub(super) const MAX_SHOWN: usize = 64;

/// One mount of the command's private places, in the order they are made (by path: what is
/// beneath another place comes after it).
#[derive(Debug)]
pub(super) struct Mount {
    pub(super) path: CString,
    /// Directories to make first, outermost first (where it lies beneath another mount).
    pub(super) parents: Vec<CString>,
    pub(super) kind: Kind,
}

/// What a [`Mount`] puts there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A fresh tmpfs: the temporary directory (writable, as the host's was), or an empty,
    /// read-only place where sockets were.
    Cover { writable: bool },
    /// The host's own place, shown again beneath a cover (its mount tree, cloned before the
    /// covers were made); held read-only (a home below the temporary directory) keeping these
    /// mount flags.
    Show { dir: bool, read_only: bool },
}

/// The private places of one command.
#[derive(Debug, Default)]
pub(super) struct Places {
    pub(super) mounts: Vec<Mount>,
    /// Sockets to hide under `/dev/null` (with the other hidden files).
    pub(super) hidden_files: Vec<PathBuf>,
    /// The temporary directory is one of the covers (the host's is then out of reach, and
    /// Landlock grants the tmpfs instead).
    pub(super) temp_covered: bool,
}

/// The homes whose credential stores are hidden ([`super::hidden`]'s), as they are on disk.
fn homes(policy: &Policy, disk: &Disk) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = policy.home.iter().cloned().collect();
    out.extend(crate::user_home());
    out.iter().filter_map(|h| disk.existing(h)).collect()
}

/// The directories to cover, as they are on disk (existing ones only), each with whether it is
/// writable: `/tmp` and the temporary directory; the user's runtime directories
/// (`/run/user/UID`, `$XDG_RUNTIME_DIR`), the policy's `covered` and [`SOCKET_DIRS`]. A place that stays writable
/// (`writable`) is not covered.
fn covers(policy: &Policy, writable: &[PathBuf], temp: &Path, disk: &Disk) -> Vec<(PathBuf, bool)> {
    let uid = nix::unistd::getuid();
    let mut wanted: Vec<(PathBuf, bool)> = vec![
        (PathBuf::from("/tmp"), true),
        (temp.to_path_buf(), true),
        // Shared memory is a temporary directory too: links planted there, other processes'
        // segments overwritten.
        (PathBuf::from("/dev/shm"), true),
        (PathBuf::from(format!("/run/user/{uid}")), false),
    ];
    wanted.extend(policy.runtime.iter().map(|p| (p.clone(), false)));
    wanted.extend(policy.covered.iter().map(|p| (p.clone(), false)));
    wanted.extend(SOCKET_DIRS.iter().map(|p| (PathBuf::from(p), false)));
    let mut out: Vec<(PathBuf, bool)> = Vec::new();
    for (path, w) in wanted {
        let Some(path) = (disk.existing(&path)).filter(|p| p.is_dir() && p != Path::new("/"))
        else {
            continue;
        };
        if !writable.contains(&path) && !out.iter().any(|(c, _)| *c == path) {
            out.push((path, w));
        }
    }
    out
}

/// Plan the private places of a command run in `project` (canonical) under `policy`, its
/// temporary directory `temp` ([`super::temp_dir`]); `hidden` are the places hidden anyway (a place
/// listed inside one stays hidden); `write` and `sockets` the user's entries as this command takes
/// them (`entries.rs`).
pub(super) fn plan(
    policy: &Policy,
    project: &Path,
    hidden: &[PathBuf],
    temp: &Path,
    disk: &Disk,
    write: &[PathBuf],
    sockets: &[PathBuf],
) -> Result<Places, Unavailable> {
    let mut writable: Vec<PathBuf> = vec![project.to_path_buf()];
    writable.extend(write.iter().filter_map(|w| disk.existing(w)));
    let mut covers = covers(policy, &writable, temp, disk);
    // A socket place inside a place hidden anyway (a runtime directory inside hookd's state) is
    // hidden with it: covering it too failed every command, its path gone under the hiding.
    covers.retain(|(path, w)| *w || !hidden.iter().any(|h| path.starts_with(h)));
    let temp_covered = (disk.existing(temp)).is_some_and(|t| covers.contains(&(t, true)));
    // The cover `p` lies strictly beneath, the deepest.
    let under = |p: &Path| -> Option<&PathBuf> {
        covers
            .iter()
            .filter(|(c, _)| p != c && p.starts_with(c))
            .map(|(c, _)| c)
            .max()
    };
    let mut mounts: Vec<(PathBuf, Vec<CString>, Kind)> = Vec::new();
    for (path, w) in &covers {
        let parents = match under(path) {
            Some(outer) => between(outer, path)?,
            None => Vec::new(),
        };
        mounts.push((path.clone(), parents, Kind::Cover { writable: *w }));
    }
    // What shows through: the project and `write` as they are, the homes read-only, the listed
    // sockets; not what is hidden anyway.
    let mut show: Vec<(PathBuf, bool)> = writable.into_iter().map(|p| (p, false)).collect();
    show.extend(homes(policy, disk).into_iter().map(|h| (h, true)));
    show.extend(
        sockets
            .iter()
            .filter_map(|s| disk.existing(s))
            .map(|s| (s, false)),
    );
    show.sort();
    show.dedup_by(|a, b| a.0 == b.0);
    for (path, ro) in show {
        let Some(outer) = under(&path) else { continue };
        if hidden.iter().any(|h| path.starts_with(h)) {
            continue;
        }
        let kind = Kind::Show {
            dir: path.is_dir(),
            read_only: ro,
        };
        mounts.push((path.clone(), between(outer, &path)?, kind));
    }
    let shown = mounts
        .iter()
        .filter(|m| matches!(m.2, Kind::Show { .. }))
        .count();
    if shown > MAX_SHOWN {
        return Err(Unavailable::Prepare(format!(
            "more than {MAX_SHOWN} places would show through the command's temporary directory"
        )));
    }
    mounts.sort_by(|a, b| a.0.cmp(&b.0));
    let mut files: Vec<PathBuf> = SOCKET_FILES
        .iter()
        .filter_map(|f| disk.existing(Path::new(f)))
        .collect();
    // The sockets [`SOCKET_VARIABLES`] name, wherever they are: the variables are not handed
    // on, but the path was one `connect` away (Docker Desktop's `~/.docker/desktop/docker.sock`,
    // an `ssh-agent -a ~/.cache/agent.sock`: attack round 10), unless `sandbox.unix_sockets`
    // lists it.
    for path in &policy.named_sockets {
        let listed = sockets.contains(path);
        let socket = std::fs::symlink_metadata(path)
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()));
        if socket && !listed && path.is_absolute() && path.parent().is_some() {
            files.push(path.clone());
        }
    }
    files.sort();
    files.dedup();
    Ok(Places {
        mounts: mounts
            .into_iter()
            .map(|(path, parents, kind)| {
                Ok(Mount {
                    path: c_path(&path)?,
                    parents,
                    kind,
                })
            })
            .collect::<Result<_, Unavailable>>()?,
        hidden_files: files,
        temp_covered,
    })
}

/// The directories strictly between `outer` and `inner` (beneath it), outermost first.
fn between(outer: &Path, inner: &Path) -> Result<Vec<CString>, Unavailable> {
    let mut dirs: Vec<&Path> = inner
        .ancestors()
        .skip(1)
        .take_while(|a| *a != outer && a.starts_with(outer))
        .collect();
    dirs.reverse();
    dirs.into_iter().map(c_path).collect()
}

/// The absolute paths a socket variable's value names: itself (`SSH_AUTH_SOCK`), after a
/// scheme (`unix:///run/docker.sock`, `unix:path=/run/user/1000/bus,guid=…`, kitty's
/// `unix:/tmp/kitty`), or as the first field of a list (`GPG_AGENT_INFO`'s `path:pid:1`,
/// `TMUX`'s `path,pid,n`).
pub fn socket_paths(value: &OsStr) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = value.as_bytes();
    let mut out = Vec::new();
    for part in bytes.split(|b| matches!(b, b',' | b';' | b' ')) {
        let part = [&b"unix://"[..], b"unix:path=", b"unix:"]
            .iter()
            .find_map(|p| part.strip_prefix(*p))
            .unwrap_or(part);
        if part.first() != Some(&b'/') {
            continue;
        }
        let path = part.split(|b| *b == b':').next().unwrap_or(part);
        out.push(PathBuf::from(OsStr::from_bytes(path)));
    }
    out
}

/// Whether a confined command keeps the variable `name` of value `value`: not one of
/// [`SOCKET_VARIABLES`], unless it names a socket the policy lists.
pub(super) fn keeps_var(policy_sockets: &[PathBuf], name: &OsStr, value: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return true;
    };
    !SOCKET_VARIABLES.contains(&name) || policy_sockets.iter().any(|s| s.as_os_str() == value)
}

/// Whether `value` holds a secret by what it is, whatever the variable's name: a URL with a
/// password in it (`scheme://user:password@host…`, the user possibly empty: `redis://:pw@cache`;
/// the password may hold a `/`, as base64 does), or a token as its user
/// (`https://ghp_…@github.com/o/r.git`), anywhere in it (a list of URLs, `DSN=…`); a
/// connection string's password (`jdbc:…?password=…`, `Server=…;Password=…`); a private key.
pub(super) fn has_password(value: &OsStr) -> bool {
    let text = value.as_encoded_bytes();
    let lower = text.to_ascii_lowercase();
    if find(&lower, b"private key-----").is_some()
        || [&b"password="[..], b"pwd=", b"passwd="]
            .iter()
            .any(|k| find(&lower, k).is_some())
    {
        return true;
    }
    let mut rest = text;
    while let Some(at) = find(rest, b"://") {
        let after = &rest[at + 3..];
        // The URL ends at a blank or a list's separator; its user part at the last `@` before
        // the path that follows it.
        let end = after
            .iter()
            .position(|b| matches!(b, b' ' | b',' | b';'))
            .unwrap_or(after.len());
        let url = &after[..end];
        if let Some(userinfo_end) = url.iter().rposition(|b| *b == b'@') {
            let userinfo = &url[..userinfo_end];
            if !userinfo.iter().any(|b| matches!(b, b'?' | b'#')) {
                match userinfo.iter().position(|b| *b == b':') {
                    Some(colon) if colon + 1 < userinfo.len() => return true,
                    None if is_token(userinfo) => return true,
                    _ => {}
                }
            }
        }
        rest = after;
    }
    false
}

/// Whether `user` is a forge's access token by its prefix (GitHub's, GitLab's), as tokens are
/// put in clone URLs.
fn is_token(user: &[u8]) -> bool {
    const PREFIXES: [&[u8]; 8] = [
        b"ghp_",
        b"gho_",
        b"ghu_",
        b"ghs_",
        b"ghr_",
        b"github_pat_",
        b"glpat-",
        b"x-access-token",
    ];
    PREFIXES.iter().any(|p| user.starts_with(p))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_with_a_password_is_found() {
        for v in [
            "postgres://u:pw@db/x",
            "redis://:pw@cache:6379/0",
            "https://a.example/x https://bot:t0k@git.example/repo.git",
            "amqp://guest:guest@localhost",
            // Found by attack round 9 (2026-11-27): each reached a confined command.
            "http://AKIAX:SECRET/env+slash@proxy.example:3128",
            "https://ghp_0123456789abcdef@github.com/o/r.git",
            "jdbc:postgresql://db/x?user=u&password=hunter2",
            "Server=db;Database=x;User Id=u;Password=hunter2;",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIE...",
        ] {
            assert!(has_password(OsStr::new(v)), "{v}");
        }
        for v in [
            "postgres://db/x",
            "https://user@git.example/repo",
            "http://127.0.0.1:8080/",
            "https://u:@host/",
            "/usr/bin:/bin",
            "a:b@c",
        ] {
            assert!(!has_password(OsStr::new(v)), "{v}");
        }
    }

    #[test]
    fn a_socket_variables_paths_are_found() {
        let paths = |v: &str| socket_paths(OsStr::new(v));
        assert_eq!(
            paths("/home/u/.ssh/agent.sock"),
            [PathBuf::from("/home/u/.ssh/agent.sock")]
        );
        assert_eq!(
            paths("unix:///home/u/.docker/desktop/docker.sock"),
            [PathBuf::from("/home/u/.docker/desktop/docker.sock")]
        );
        assert_eq!(
            paths("unix:path=/run/user/1000/bus,guid=abc;unix:abstract=/tmp/x"),
            [PathBuf::from("/run/user/1000/bus")]
        );
        assert_eq!(
            paths("/run/gpg/S.gpg-agent:123:1"),
            [PathBuf::from("/run/gpg/S.gpg-agent")]
        );
        assert_eq!(
            paths("/tmp/tmux-0/default,42,0"),
            [PathBuf::from("/tmp/tmux-0/default")]
        );
        assert!(paths("tcp://127.0.0.1:2375").is_empty());
        assert!(paths(":0").is_empty());
    }

    #[test]
    fn between_lists_the_directories_to_make() {
        let d = between(Path::new("/tmp"), Path::new("/tmp/a/b/p")).unwrap();
        assert_eq!(d, [c"/tmp/a".to_owned(), c"/tmp/a/b".to_owned()]);
        assert!(between(Path::new("/tmp"), Path::new("/tmp/p"))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn socket_variables_go_unless_they_name_a_listed_socket() {
        let listed = [PathBuf::from("/tmp/agent.sock")];
        let keeps = |n: &str, v: &str| keeps_var(&listed, OsStr::new(n), OsStr::new(v));
        assert!(!keeps("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"));
        assert!(keeps("SSH_AUTH_SOCK", "/tmp/agent.sock"));
        assert!(!keeps("TMUX", "/tmp/tmux-0/default,1,0"));
        assert!(keeps("TERM", "xterm"));
    }
}
