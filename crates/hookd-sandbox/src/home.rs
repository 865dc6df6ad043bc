//! The user's home as the user database says, not as `HOME` does.

use std::path::PathBuf;

/// The user's home directory from the user database, not from `HOME` (which a repository may
/// have set for its agent, and which a host may not have at all).
///
/// Read from `/etc/passwd` first: a statically linked program has no NSS (glibc would load
/// its modules with the dynamic loader, which a static binary keeps out); a dynamically linked
/// one then asks NSS (LDAP, sssd) for a user the file does not list.
///
/// Looked up once per process (one `hookd exec` asked seven times): the database does not
/// change under a running command, and a daemon takes a changed home at its next start.
pub fn user_home() -> Option<PathBuf> {
    static HOME: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        let uid = nix::unistd::getuid().as_raw();
        std::fs::read_to_string("/etc/passwd")
            .ok()
            .and_then(|text| passwd_home(&text, uid))
            .or_else(|| nss_home(uid))
    })
    .clone()
}

/// The home of `uid` in passwd(5) text: `name:password:uid:gid:gecos:home:shell`.
fn passwd_home(text: &str, uid: u32) -> Option<PathBuf> {
    text.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        match fields.as_slice() {
            [_, _, id, _, _, home, ..] if id.parse() == Ok(uid) && !home.is_empty() => {
                Some(PathBuf::from(home))
            }
            _ => None,
        }
    })
}

#[cfg(not(target_feature = "crt-static"))]
fn nss_home(uid: u32) -> Option<PathBuf> {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map(|u| u.dir)
}

#[cfg(target_feature = "crt-static")]
fn nss_home(_uid: u32) -> Option<PathBuf> {
    None
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    #[test]
    fn the_passwd_file_gives_the_users_home() {
        let text = "root:x:0:0:root:/root:/bin/bash\n# comment\nbad line\nann:x:1000:1000:Ann,,,:/home/ann:/bin/sh\nnohome:x:7:7:::/bin/sh\n";
        assert_eq!(
            super::passwd_home(text, 1000),
            Some(PathBuf::from("/home/ann"))
        );
        assert_eq!(super::passwd_home(text, 0), Some(PathBuf::from("/root")));
        assert_eq!(super::passwd_home(text, 7), None);
        assert_eq!(super::passwd_home(text, 42), None);
    }
}
