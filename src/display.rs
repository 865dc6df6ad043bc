//! Showing text from a project's files or events to a person: every character that could hide,
//! move or repaint what is on the screen is escaped visibly, so a review cannot be forged.

use std::borrow::Cow;

/// `text` as it may be printed to a terminal: control characters (C0, DEL, C1, so ESC and CR
/// too), Unicode format characters (category Cf, bidi controls among them), line and paragraph
/// separators and invisible or blank look-alikes are written as escapes (`\x1b`, `\r`,
/// `\u{202e}`). Everything else, backslashes included, is shown as it is.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push(&mut out, c);
    }
    Cow::Owned(out)
}

/// Like [`visible`], but keeps line breaks: for text made of several lines (a diagnostic with
/// its source excerpt), where only the lines themselves must not be forged.
pub fn visible_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && hidden(c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c == '\n' {
            out.push(c);
        } else {
            push(&mut out, c);
        }
    }
    Cow::Owned(out)
}

/// `text` cut to at most `most` bytes at a character boundary, ended with `…` when anything was
/// cut: for what an agent sends that hookd keeps or shows (a name, a refused command).
pub fn clip(text: &str, most: usize) -> Cow<'_, str> {
    if text.len() <= most {
        return Cow::Borrowed(text);
    }
    let end = (0..=most)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0);
    Cow::Owned(format!("{}…", &text[..end]))
}

fn push(out: &mut String, c: char) {
    use std::fmt::Write;
    if !hidden(c) {
        out.push(c);
        return;
    }
    let _ = match c {
        '\n' => write!(out, "\\n"),
        '\r' => write!(out, "\\r"),
        '\t' => write!(out, "\\t"),
        c if (c as u32) < 0x100 => write!(out, "\\x{:02x}", c as u32),
        c => write!(out, "\\u{{{:x}}}", c as u32),
    };
}

/// Whether `c` must be escaped to be seen for what it is.
fn hidden(c: char) -> bool {
    c.is_control() || format_char(c) || invisible(c)
}

/// General category Cf (format), as of Unicode 16.0 (DerivedGeneralCategory.txt): soft hyphen,
/// Arabic number signs, zero-width and bidi controls, word joiners, BOM, interlinear
/// annotation, Egyptian hieroglyph and musical format controls, shorthand controls, tags.
/// Hand-listed: a crate for one predicate over twenty ranges is not worth the dependency.
fn format_char(c: char) -> bool {
    matches!(c,
        '\u{00AD}'
        | '\u{0600}'..='\u{0605}'
        | '\u{061C}'
        | '\u{06DD}'
        | '\u{070F}'
        | '\u{0890}'..='\u{0891}'
        | '\u{08E2}'
        | '\u{180E}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{206F}'
        | '\u{FEFF}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{110BD}'
        | '\u{110CD}'
        | '\u{13430}'..='\u{1343F}'
        | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0001}'
        | '\u{E0020}'..='\u{E007F}')
}

/// Not Cf, but blank or invisible all the same: line and paragraph separators, spaces other
/// than U+0020, fillers, the combining grapheme joiner and variation selectors.
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00A0}'
        | '\u{034F}'
        | '\u{115F}'..='\u{1160}'
        | '\u{17B4}'..='\u{17B5}'
        | '\u{1680}'
        | '\u{2000}'..='\u{200A}'
        | '\u{2028}'..='\u{2029}'
        | '\u{202F}'
        | '\u{205F}'
        | '\u{2800}'
        | '\u{3000}'
        | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{FFA0}'
        | '\u{E0100}'..='\u{E01EF}')
}

/// `bytes` as lowercase hexadecimal (digests, tokens, nonces): the one spelling of it.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

/// `s` after a count of one thing or several (none, or more than one).
pub fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_and_unchanged() {
        assert!(matches!(visible("fmt ./a b\\c é"), Cow::Borrowed(_)));
        assert_eq!(visible("fmt ./a b\\c é"), "fmt ./a b\\c é");
    }

    #[test]
    fn every_hiding_character_is_escaped() {
        let cases = [
            ("a\u{1b}[2Kb", "a\\x1b[2Kb"),
            ("a\rb\nc\td", "a\\rb\\nc\\td"),
            ("\u{7f}\u{85}\u{9b}", "\\x7f\\x85\\x9b"),
            (
                "x\u{202e}y\u{2066}\u{2069}",
                "x\\u{202e}y\\u{2066}\\u{2069}",
            ),
            (
                "\u{200b}\u{200e}\u{200f}\u{feff}",
                "\\u{200b}\\u{200e}\\u{200f}\\u{feff}",
            ),
            (
                "\u{180e}\u{1d173}\u{600}\u{13430}",
                "\\u{180e}\\u{1d173}\\u{600}\\u{13430}",
            ),
            (
                "\u{a0}\u{2028}\u{e0041}\u{fe0f}",
                "\\xa0\\u{2028}\\u{e0041}\\u{fe0f}",
            ),
        ];
        for (raw, shown) in cases {
            assert_eq!(visible(raw), shown, "{raw:?}");
        }
    }

    #[test]
    fn lines_keep_their_breaks_only() {
        assert_eq!(visible_lines("a\u{1b}\nb\r\n"), "a\\x1b\nb\\r\n");
    }

    #[test]
    fn hex_is_lowercase_two_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(hex(&[]), "");
    }
}
