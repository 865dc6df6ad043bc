//! The one boolean parser for every on/off switch hookd reads from the environment or a flag
//! value, so `HOOKD_FAIL_CLOSED=yes` means what `INFER_HOOKS_ENABLED=yes` means.

/// `1`, `true`, `yes`, `on` are on; `0`, `false`, `no`, `off` and the empty string are off
/// (case and surrounding blanks ignored). Anything else is `None`: the caller decides, and a
/// safety switch treats it as on.
pub fn parse_bool(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" | "" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::parse_bool;

    #[test]
    fn every_spelling() {
        for on in ["1", "true", "TRUE", "Yes", "on", " ON "] {
            assert_eq!(parse_bool(on), Some(true), "{on}");
        }
        for off in ["0", "false", "False", "no", "OFF", "", "  "] {
            assert_eq!(parse_bool(off), Some(false), "{off:?}");
        }
        for bad in ["2", "enabled", "y", "t"] {
            assert_eq!(parse_bool(bad), None, "{bad}");
        }
    }
}
