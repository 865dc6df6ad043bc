//! A child's output as hookd keeps it: up to a cap, the rest counted, never buffered.

/// One stream's captured text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Captured {
    /// What was kept, as UTF-8 (invalid bytes replaced by U+FFFD).
    pub text: String,
    /// Bytes read but not kept.
    pub dropped: u64,
}

impl Captured {
    /// True when anything was dropped.
    pub fn truncated(&self) -> bool {
        self.dropped > 0
    }
}

/// One stream being read: keeps up to `cap` bytes and counts the rest, never buffering it.
#[derive(Debug)]
pub(crate) struct Sink {
    kept: Vec<u8>,
    dropped: u64,
    cap: usize,
}

impl Sink {
    pub(crate) fn new(cap: usize) -> Self {
        Sink {
            kept: Vec::with_capacity(cap.min(8192)),
            dropped: 0,
            cap,
        }
    }

    /// Take in bytes just read.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.kept.len());
        let take = room.min(bytes.len());
        self.kept.extend_from_slice(&bytes[..take]);
        self.dropped += (bytes.len() - take) as u64;
    }

    /// What was read, as text.
    pub(crate) fn finish(mut self) -> Captured {
        if self.dropped > 0 {
            // Do not end inside a multi-byte character: move the partial bytes to `dropped`.
            let keep = complete_utf8_prefix(&self.kept);
            self.dropped += (self.kept.len() - keep) as u64;
            self.kept.truncate(keep);
        }
        Captured {
            text: String::from_utf8_lossy(&self.kept).into_owned(),
            dropped: self.dropped,
        }
    }
}

/// Length of `b` without an incomplete UTF-8 sequence at its end.
fn complete_utf8_prefix(b: &[u8]) -> usize {
    let n = b.len();
    for back in 1..=n.min(4) {
        let byte = b[n - back];
        if byte & 0b1100_0000 == 0b1000_0000 {
            continue; // continuation byte: keep looking for the lead byte
        }
        let need = match byte {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return n, // invalid lead byte: lossy decoding replaces it
        };
        return if need > back { n - back } else { n };
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(bytes: &[u8], cap: usize) -> Captured {
        let mut sink = Sink::new(cap);
        // In small reads, as a pipe delivers them.
        for chunk in bytes.chunks(3) {
            sink.push(chunk);
        }
        sink.finish()
    }

    #[test]
    fn cap_inside_a_multibyte_character_keeps_whole_characters() {
        let text = "aé€😀".repeat(3); // 1 + 2 + 3 + 4 bytes per round
        for cap in 0..text.len() {
            let c = capture(text.as_bytes(), cap);
            assert!(text.starts_with(&c.text), "cap {cap}: {:?}", c.text);
            assert_eq!(
                c.text.len() as u64 + c.dropped,
                text.len() as u64,
                "cap {cap}"
            );
            assert!(!c.text.contains('\u{FFFD}'));
        }
    }

    #[test]
    fn invalid_bytes_are_replaced_not_lost() {
        let c = capture(&b"ok\xff\xfeok"[..], 1024);
        assert_eq!(c.text, "ok\u{FFFD}\u{FFFD}ok");
        assert_eq!(c.dropped, 0);
    }
}
