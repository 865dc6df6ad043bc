//! Who may talk to the daemon over HTTP: a bearer token (generated when none is given, kept in a
//! 0600 file beside the socket), a `Host` naming the listening address, and no foreign `Origin`.
//! A web page can make a browser send requests to loopback; these rules are what stops it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// A fresh token: 32 bytes from the operating system's random source, as hex.
pub(crate) fn generate_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(crate::display::hex(&bytes))
}

/// Where a generated token is kept: beside the socket, `hookd.sock` → `hookd.token`.
pub fn token_file(socket: &Path) -> PathBuf {
    socket.with_extension("token")
}

/// Write `token` to `path` readable by this user only: created new (`O_EXCL`, mode 0600 from
/// the start, never through a symlink) in the same directory, then renamed over `path`, so a
/// symlink or stale file there is replaced, not followed, and a reader never sees half a token.
pub(crate) fn write_token_file(path: &Path, token: &str) -> std::io::Result<()> {
    crate::atomic::write_private(path, token.as_bytes())
}

/// A token for a daemon whose HTTP side has none given, kept in [`token_file`] beside `socket`
/// (its directory created) for the operator's curl and Prometheus' `credentials_file`: the
/// one a previous start kept there, so that an open dashboard page (its key derives from the
/// token) and a scraper resume after a restart; a new one when `rotate` is set or the file is
/// not one this user alone can read holding a token of hookd's shape. Returns the token and
/// the file.
pub fn kept_token_file(socket: &Path, rotate: bool) -> Result<(String, PathBuf), TokenError> {
    let path = token_file(socket);
    if !rotate {
        if let Some(token) = kept_token(&path) {
            return Ok((token, path));
        }
    }
    new_token_file(socket)
}

/// The token in `path` if it is a regular file of this user's, unreadable by anyone else, that
/// holds 64 hex digits (what [`generate_token`] writes).
/// The checks are made on the descriptor read, opened without following a link, so the file
/// cannot be swapped between them (found in review: the path was checked, then opened again);
/// the directory must be this user's and writable by no one else.
fn kept_token(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let me = nix::unistd::getuid().as_raw();
    let private = |m: &std::fs::Metadata, bits: u32| m.mode() & bits == 0 && m.uid() == me;
    let dir = std::fs::symlink_metadata(path.parent()?).ok()?;
    if !dir.is_dir() || !private(&dir, 0o022) {
        return None;
    }
    let flags = nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.file_type().is_file() || !private(&meta, 0o077) {
        return None;
    }
    let mut token = String::new();
    file.take(65).read_to_string(&mut token).ok()?;
    (token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit())).then_some(token)
}

/// A new token, written to [`token_file`] beside `socket` (see [`kept_token_file`]).
pub fn new_token_file(socket: &Path) -> Result<(String, PathBuf), TokenError> {
    let path = token_file(socket);
    let token = generate_token().map_err(TokenError::Random)?;
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    write_token_file(&path, &token).map_err(|source| TokenError::Write {
        path: path.clone(),
        source,
    })?;
    Ok((token, path))
}

/// Why no token could be provided.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The operating system's random source failed.
    #[error("cannot generate a token: {0}")]
    Random(getrandom::Error),
    /// The token file could not be written.
    #[error("cannot write the token file {}: {source}", path.display())]
    Write {
        /// The token file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// `Authorization: Bearer TOKEN` carries `token`; compared in constant time (over digests, so
/// neither the length nor the first differing byte shows in the timing).
pub(crate) fn bearer_matches(header: Option<&str>, token: &str) -> bool {
    let given = header
        .and_then(|h| h.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim())
        .unwrap_or("");
    let (a, b) = (
        Sha256::digest(given.as_bytes()),
        Sha256::digest(token.as_bytes()),
    );
    let diff = a
        .iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0 && !given.is_empty()
}

/// A `Host` (or an `Origin`'s host) that names this daemon: the listening address itself, or
/// `localhost` with its port (or none). On an unspecified address (`0.0.0.0`), any IP literal
/// with the port: a name other than `localhost` is what DNS rebinding would send.
pub(crate) fn host_allowed(host: &str, listen: SocketAddr) -> bool {
    let host = host.trim().to_ascii_lowercase();
    if host == "localhost" || host == format!("localhost:{}", listen.port()) {
        return true;
    }
    if host == listen.to_string() {
        return true;
    }
    listen.ip().is_unspecified()
        && host
            .parse::<SocketAddr>()
            .is_ok_and(|a| a.port() == listen.port())
}

/// An `Origin` header a browser on this daemon's own address would send; `null` and every
/// other site are foreign.
pub(crate) fn origin_allowed(origin: &str, listen: SocketAddr) -> bool {
    origin
        .trim()
        .strip_prefix("http://")
        .map(|rest| rest.strip_suffix('/').unwrap_or(rest))
        .is_some_and(|host| !host.contains('/') && host_allowed(host, listen))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins() {
        let l: SocketAddr = "127.0.0.1:7878".parse().unwrap();
        for ok in ["127.0.0.1:7878", "localhost:7878", "LOCALHOST", "localhost"] {
            assert!(host_allowed(ok, l), "{ok}");
        }
        for bad in [
            "attacker.example",
            "attacker.example:7878",
            "127.0.0.1:80",
            "localhost:1",
            "",
            "127.0.0.1",
        ] {
            assert!(!host_allowed(bad, l), "{bad}");
        }
        assert!(origin_allowed("http://localhost:7878", l));
        assert!(origin_allowed("http://127.0.0.1:7878/", l));
        for bad in [
            "null",
            "http://attacker.example",
            "https://127.0.0.1:7878",
            "http://127.0.0.1:7878/x",
        ] {
            assert!(!origin_allowed(bad, l), "{bad}");
        }
        let any: SocketAddr = "0.0.0.0:7878".parse().unwrap();
        assert!(host_allowed("192.168.1.5:7878", any));
        assert!(!host_allowed("evil.example:7878", any));
    }

    #[test]
    fn bearer_tokens() {
        assert!(bearer_matches(Some("Bearer s3cret"), "s3cret"));
        assert!(bearer_matches(Some("bearer s3cret"), "s3cret"));
        assert!(!bearer_matches(Some("Bearer s3cre"), "s3cret"));
        assert!(!bearer_matches(Some("Basic s3cret"), "s3cret"));
        assert!(!bearer_matches(None, "s3cret"));
        assert!(!bearer_matches(Some("Bearer "), ""));
        assert_eq!(generate_token().unwrap().len(), 64);
    }

    #[test]
    fn the_token_file_replaces_a_symlink_instead_of_following_it() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let path = dir.path().join("hookd.token");
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        write_token_file(&path, "t0k").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.file_type().is_file());
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "t0k");
    }

    #[test]
    fn a_token_is_kept_only_from_a_private_file_in_a_private_directory() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        mode(dir.path(), 0o700);
        let token = "ab".repeat(32);
        let path = dir.path().join("hookd.token");
        write_token_file(&path, &token).unwrap();
        assert_eq!(kept_token(&path).as_deref(), Some(token.as_str()));
        // A link to a private file holding a token: not followed.
        let real = dir.path().join("real");
        std::fs::rename(&path, &real).unwrap();
        std::os::unix::fs::symlink(&real, &path).unwrap();
        assert_eq!(kept_token(&path), None);
        std::fs::remove_file(&path).unwrap();
        std::fs::rename(&real, &path).unwrap();
        // A directory others may write (who could swap the file): not kept.
        mode(dir.path(), 0o777);
        assert_eq!(kept_token(&path), None);
        mode(dir.path(), 0o700);
        // Readable by others, or not of a token's shape: not kept.
        mode(&path, 0o644);
        assert_eq!(kept_token(&path), None);
        mode(&path, 0o600);
        std::fs::write(&path, "z".repeat(64)).unwrap();
        assert_eq!(kept_token(&path), None);
    }
}
