//! The sockets the sandbox bound, as pid 1's helpers bound them: a pathname socket by its
//! device, inode and birth time (an inode number freed and given to a socket made outside is
//! not the same socket), an abstract one by its name, a TCP or UDP one by its port; each with
//! how many seccomp filters the process that bound it had. In pid 1's memory, which its helpers share, without allocation.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What a socket is known by.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Key {
    /// Device, inode, birth time in nanoseconds.
    Path(u64, u64, u64),
    /// A hash of the name (its bytes after the leading NUL) and its length.
    Abstract(u64, u64),
    /// A TCP or UDP port bound (for a nested caller's connections).
    Port(u16),
}

impl Key {
    pub(super) fn abstract_name(name: &[u8]) -> Key {
        // FNV-1a, 64 bits: names are short, and a collision only lets a connect through to a
        // socket the kernel then judges again (Landlock's scope: made in this sandbox).
        let hash = name.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
        });
        Key::Abstract(hash, name.len() as u64)
    }

    fn words(self) -> [u64; 3] {
        match self {
            // Device 0 is never a mounted filesystem's: it marks an empty entry.
            Key::Path(dev, ino, born) => [dev.max(1), ino, born],
            Key::Abstract(hash, len) => [u64::MAX, hash, len],
            Key::Port(port) => [u64::MAX - 1, u64::from(port), 0],
        }
    }
}

/// How many binds are remembered; a socket bound after is not reachable by path.
const MADE: usize = 1 << 15;
/// Each entry: its key's three words, then the binder's depth (filters).
static ENTRIES: [AtomicU64; 4 * MADE] = [const { AtomicU64::new(0) }; 4 * MADE];
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// Whether a socket known by `key` was bound by a process with at least `depth` filters:
/// one as deep as the caller or deeper (a command nested inside it), never one around it.
pub(super) fn made(key: Key, depth: u64) -> bool {
    let want = key.words();
    let count = COUNT.load(Ordering::Acquire).min(MADE);
    (0..count).any(|i| {
        let e = &ENTRIES[4 * i..4 * i + 4];
        e[0].load(Ordering::Acquire) == want[0]
            && e[1].load(Ordering::Relaxed) == want[1]
            && e[2].load(Ordering::Relaxed) == want[2]
            && e[3].load(Ordering::Relaxed) >= depth
    })
}

/// Remember a socket bound by a process with `depth` filters.
pub(super) fn remember(key: Key, depth: u64) {
    let words = key.words();
    let i = COUNT.fetch_add(1, Ordering::AcqRel);
    if i < MADE {
        let e = &ENTRIES[4 * i..4 * i + 4];
        e[1].store(words[1], Ordering::Relaxed);
        e[2].store(words[2], Ordering::Relaxed);
        e[3].store(depth, Ordering::Relaxed);
        e[0].store(words[0], Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_is_known_by_all_of_its_key_and_to_callers_no_deeper_than_its_binder() {
        let key = Key::Path(2049, 77, 1_700_000_000_123);
        assert!(!made(key, 2));
        remember(key, 3);
        assert!(made(key, 2));
        assert!(made(key, 3));
        assert!(!made(key, 4), "a caller nested deeper than the binder");
        assert!(
            !made(Key::Path(2049, 77, 1_700_000_000_124), 2),
            "born later"
        );
        assert!(!made(Key::Path(2050, 77, 1_700_000_000_123), 2));
        let name = Key::abstract_name(b"hookd-test");
        remember(name, 2);
        assert!(made(Key::abstract_name(b"hookd-test"), 2));
        assert!(!made(Key::abstract_name(b"hookd-tesu"), 2));
        assert!(!made(Key::abstract_name(b"hookd-test\0"), 2));
    }
}
