//! Reading a file a repository may have planted: never block, never follow it into a device or a
//! FIFO, never read more than the limit. A FIFO as `config.yaml` must not hang hookd, and a link
//! to `/dev/zero` must not fill memory.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Why a file could not be read as configuration.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Absent (or a dangling link, or below a name that is not a directory), or a socket
    /// (nobody can open one to read it: it sets nothing; the sandbox's stand-in for an absent
    /// place is one).
    #[error("not found")]
    NotFound,
    /// A FIFO, socket, device or directory where a regular file was expected.
    #[error("is {0}, not a regular file")]
    NotRegular(&'static str),
    /// Larger than the limit.
    #[error("is over {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
        /// The file's size, as its metadata said when it was opened.
        size: u64,
    },
    /// Any other I/O error.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Read `path` (symlinks followed) if it is a regular file of at most `limit` bytes.
///
/// The file is opened with `O_NONBLOCK | O_NOCTTY`, so opening a FIFO with no writer returns at
/// once, and its type is checked on the opened descriptor (no window between check and read).
/// Reading stops at `limit + 1` bytes whatever the file claims its size is.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let (file, size) = open_regular(path)?;
    read_capped(file, limit, size)
}

/// The first `n` bytes of `path` (fewer if it is shorter), if it is a regular file: opened as
/// [`read_regular`] opens, so a FIFO or a device is refused without blocking.
pub(crate) fn read_head(path: &Path, n: u64) -> Result<Vec<u8>, ReadError> {
    let (file, _) = open_regular(path)?;
    let mut buf = Vec::new();
    file.take(n).read_to_end(&mut buf)?;
    Ok(buf)
}

/// `path` opened for reading if it is a regular file (see [`read_regular`]), with its size:
/// for a reader that streams it.
pub(crate) fn open_regular(path: &Path) -> Result<(File, u64), ReadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match (e.kind(), e.raw_os_error()) {
            (io::ErrorKind::NotFound, _) => ReadError::NotFound,
            // Below a file (`.claude` a socket): nothing is there; a socket: opening fails.
            (_, Some(nix::libc::ENOTDIR | nix::libc::ENXIO)) => ReadError::NotFound,
            _ => ReadError::Io(e),
        })?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(ReadError::NotRegular(if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_dir() {
            "a directory"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else {
            "a special file"
        }));
    }
    Ok((file, meta.len()))
}

fn read_capped(file: File, limit: u64, size: u64) -> Result<Vec<u8>, ReadError> {
    let mut buf = Vec::new();
    file.take(limit + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit, size });
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_fifos_devices_and_oversize_files_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(matches!(
            read_regular(&fifo, 10),
            Err(ReadError::NotRegular("a FIFO"))
        ));
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(matches!(
            read_regular(&zero, 10),
            Err(ReadError::NotRegular("a device"))
        ));
        let big = dir.path().join("big");
        std::fs::write(&big, [b'a'; 11]).unwrap();
        assert!(matches!(
            read_regular(&big, 10),
            Err(ReadError::TooLarge {
                limit: 10,
                size: 11
            })
        ));
        std::fs::write(&big, [b'a'; 10]).unwrap();
        assert_eq!(read_regular(&big, 10).unwrap().len(), 10);
        assert!(matches!(
            read_regular(&dir.path().join("none"), 10),
            Err(ReadError::NotFound)
        ));
        // A socket, and a path below a file, hold nothing anyone can read.
        let socket = dir.path().join("socket");
        let mode = nix::sys::stat::Mode::from_bits_truncate(0o600);
        nix::sys::stat::mknod(&socket, nix::sys::stat::SFlag::S_IFSOCK, mode, 0).unwrap();
        assert!(matches!(
            read_regular(&socket, 10),
            Err(ReadError::NotFound)
        ));
        assert!(matches!(
            read_regular(&big.join("below"), 10),
            Err(ReadError::NotFound)
        ));
    }
}
