//! The pathname sockets the sandbox bound, as pid 1's helpers bound them: by device, inode and
//! birth time (an inode number freed and given to a socket made outside is not the same
//! socket). In pid 1's memory, which its helpers share, without allocation.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What a socket is known by: device, inode, birth time in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Key(pub(super) u64, pub(super) u64, pub(super) u64);

impl Key {
    fn words(self) -> [u64; 3] {
        // Device 0 is never a mounted filesystem's: it marks an empty entry.
        [self.0.max(1), self.1, self.2]
    }
}

/// How many binds are remembered; a socket bound after is reachable as the others only through
/// a descriptor, not by its path.
const MADE: usize = 1 << 15;
/// Each entry: its key's three words.
static ENTRIES: [AtomicU64; 3 * MADE] = [const { AtomicU64::new(0) }; 3 * MADE];
static COUNT: AtomicUsize = AtomicUsize::new(0);

/// Whether the sandbox bound the socket known by `key`.
pub(super) fn made(key: Key) -> bool {
    let want = key.words();
    let count = COUNT.load(Ordering::Acquire).min(MADE);
    (0..count).any(|i| {
        let e = &ENTRIES[3 * i..3 * i + 3];
        e[0].load(Ordering::Acquire) == want[0]
            && e[1].load(Ordering::Relaxed) == want[1]
            && e[2].load(Ordering::Relaxed) == want[2]
    })
}

/// Remember a socket the sandbox bound.
pub(super) fn remember(key: Key) {
    let words = key.words();
    let i = COUNT.fetch_add(1, Ordering::AcqRel);
    if i < MADE {
        let e = &ENTRIES[3 * i..3 * i + 3];
        e[1].store(words[1], Ordering::Relaxed);
        e[2].store(words[2], Ordering::Relaxed);
        e[0].store(words[0], Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_socket_is_known_by_all_of_its_key() {
        let key = Key(2049, 77, 1_700_000_000_123);
        assert!(!made(key));
        remember(key);
        assert!(made(key));
        assert!(!made(Key(2049, 77, 1_700_000_000_124)), "born later");
        assert!(!made(Key(2050, 77, 1_700_000_000_123)));
        assert!(!made(Key(2049, 78, 1_700_000_000_123)));
    }
}
