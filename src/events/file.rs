//! Opening events files: regular files only, never blocking, never through a link. A FIFO, a
//! device or a symlink planted where a log (or one of its rotated files) goes is refused at
//! once, never waited on in open(2) nor written through.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The most `seq` an events file may reach: the highest integer a JavaScript reader (the
/// dashboard, most JSON tools) holds exactly. A log whose last line claims more cannot be
/// numbered past: it is refused, never wrapped nor repeated.
pub const MOST_SEQ: u64 = (1 << 53) - 1;

/// What a file that is not a regular one is, for messages.
fn kind_of(t: std::fs::FileType) -> &'static str {
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "a special file"
    }
}

/// Open `path` with `options`, never blocking (`O_NONBLOCK`: a FIFO with no other end returns
/// at once), never taking a terminal, never through a symlink; refused unless it is a regular
/// file (checked on the descriptor, so nothing can swap it between check and use).
pub(crate) fn open_regular(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    let flags = nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY | nix::libc::O_NOFOLLOW;
    let file = options.custom_flags(flags).open(path).map_err(|e| {
        if e.raw_os_error() == Some(nix::libc::ELOOP) {
            io::Error::new(
                e.kind(),
                "it is a symbolic link, and hookd never writes events through one",
            )
        } else {
            e
        }
    })?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(io::Error::other(format!(
            "it is {}, not a regular file: hookd reads and writes events only in regular files (remove it)",
            kind_of(kind)
        )));
    }
    Ok(file)
}

/// An events file a person named (`hookd events --file`), open to read: a link is followed,
/// but only a regular file is opened (a FIFO or a device is refused at once, never waited on).
/// Read it a line at a time (`tail::from_file` does), never whole: logs grow to 64 MiB and more.
pub fn open_named(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(io::Error::other(format!(
            "it is {}, not a regular file",
            kind_of(kind)
        )));
    }
    Ok(file)
}

/// Open an events file to read, if it is a regular file (`open_regular`: never a FIFO, a device or a link, never blocking).
pub fn open_to_read(path: &Path) -> io::Result<File> {
    open_regular(path, OpenOptions::new().read(true))
}

/// Open an events file to append to. Events carry commands and their output: the file is
/// readable by this user only (created 0600, an existing one narrowed to 0600).
pub(crate) fn open_to_append(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::PermissionsExt;
    let f = open_regular(
        path,
        OpenOptions::new()
            .create(true)
            .append(true)
            .read(true) // the last line's number and end are read back
            .mode(0o600),
    )?;
    // A second name (a hard link made before hookd first opened it) would let whoever holds
    // it rewrite what hookd appends, out of reach of any read-only hold on this name.
    let names = std::os::unix::fs::MetadataExt::nlink(&f.metadata()?);
    if names > 1 {
        return Err(io::Error::other(format!(
            "it has {names} names (hard links): another name could rewrite what hookd appends; move it away and let hookd make a new one"
        )));
    }
    if f.metadata()?.permissions().mode() & 0o077 != 0 {
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(f)
}

/// Whether `file` ends in a torn line (a writer killed mid-line, a full disk): the next line
/// must start on a line of its own.
pub(crate) fn ends_torn(file: &File) -> io::Result<bool> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    let mut last = [0u8; 1];
    file.read_exact_at(&mut last, len - 1)?;
    Ok(last[0] != b'\n')
}

/// The refusal of a log whose numbering cannot grow.
pub(crate) fn cannot_grow(path: &Path, last: u64) -> io::Error {
    io::Error::other(format!(
        "its last event is numbered {last}, and hookd numbers events up to {MOST_SEQ}: move {} (and its rotated files) away to start a new log",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_a_link_and_a_directory_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("events.jsonl");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = open_to_read(&fifo).unwrap_err().to_string();
        assert_eq!(e, "it is a FIFO, not a regular file: hookd reads and writes events only in regular files (remove it)");
        assert!(open_to_append(&fifo).is_err());
        let link = dir.path().join("link.jsonl");
        std::fs::write(dir.path().join("target"), "").unwrap();
        std::os::unix::fs::symlink(dir.path().join("target"), &link).unwrap();
        let e = open_to_append(&link).unwrap_err().to_string();
        assert_eq!(
            e,
            "it is a symbolic link, and hookd never writes events through one"
        );
        let e = open_to_read(dir.path()).unwrap_err().to_string();
        assert!(
            e.starts_with("it is a directory, not a regular file"),
            "{e}"
        );
    }
}
