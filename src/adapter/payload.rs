//! Reading an agent's payload. Node (Claude Code, Gemini CLI) writes a string holding half of
//! a UTF-16 surrogate pair as a lone `\udXXX` escape, which strict JSON parsers refuse: read
//! it as U+FFFD instead, so the call is understood and gated (the replacement character is on
//! no allow-list) rather than failing to parse and being answered as a failure.

use serde_json::Value;

/// The payload as JSON, with lone surrogate escapes replaced by `\ufffd`.
pub fn parse(text: &str) -> Result<Value, super::AdapterError> {
    let fixed = replace_lone_surrogates(text);
    serde_json::from_str(&fixed).map_err(super::AdapterError::NotJson)
}

/// `text` with every `\uD800`–`\uDFFF` escape that is not half of a well-formed pair replaced
/// by `\ufffd`. Escaped backslashes (`\\ud800` is a backslash and text) are left alone.
fn replace_lone_surrogates(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\\u") {
        return text.into();
    }
    let b = text.as_bytes();
    let escape_at = |i: usize| -> Option<u16> {
        if b.get(i) == Some(&b'\\') && matches!(b.get(i + 1), Some(b'u')) {
            let hex = text.get(i + 2..i + 6)?;
            u16::from_str_radix(hex, 16).ok()
        } else {
            None
        }
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        match escape_at(i) {
            Some(0xD800..=0xDBFF) => match escape_at(i + 6) {
                Some(0xDC00..=0xDFFF) => i += 12,
                _ => {
                    out.push_str(&text[copied..i]);
                    out.push_str("\\ufffd");
                    i += 6;
                    copied = i;
                }
            },
            Some(0xDC00..=0xDFFF) => {
                out.push_str(&text[copied..i]);
                out.push_str("\\ufffd");
                i += 6;
                copied = i;
            }
            Some(_) => i += 6,
            // `\\`, `\"`, `\n`…: skip the escaped character with its backslash.
            None => i += 2,
        }
    }
    if copied == 0 {
        return text.into();
    }
    out.push_str(&text[copied..]);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let cmd = |json: &str| parse(json).unwrap()["c"].as_str().unwrap().to_string();
        assert_eq!(cmd(r#"{"c":"rm\ud800 -rf"}"#), "rm\u{fffd} -rf");
        assert_eq!(cmd(r#"{"c":"x\udc00"}"#), "x\u{fffd}");
        assert_eq!(cmd(r#"{"c":"\ud83d\ude00"}"#), "\u{1f600}");
        assert_eq!(cmd(r#"{"c":"\ud83d\ud83d\ude00"}"#), "\u{fffd}\u{1f600}");
        assert_eq!(cmd(r#"{"c":"a\\ud800"}"#), "a\\ud800");
        assert_eq!(cmd(r#"{"c":"\\\ud800"}"#), "\\\u{fffd}");
        assert_eq!(cmd(r#"{"c":"\u00e9\n"}"#), "\u{e9}\n");
        assert!(parse(r#"{"c":"\ud800"#).is_err());
    }
}
