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

/// An on/off flag or its variable as given, read with the one parser
/// ([`parse_bool`]). Parsing never fails: a value that is neither on nor off is kept as
/// `Unreadable`, and the command says so and decides what it means (an adapter owes its agent
/// an answer, never a usage error).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Switch {
    /// On.
    On,
    /// Off.
    Off,
    /// Neither: the value as given.
    Unreadable(String),
}

impl Switch {
    /// Read a value (a command-line parser's shape: it never fails).
    pub fn parse(value: &str) -> Result<Switch, std::convert::Infallible> {
        Ok(match parse_bool(value) {
            Some(true) => Switch::On,
            Some(false) => Switch::Off,
            None => Switch::Unreadable(value.to_string()),
        })
    }

    /// Whether it is on; an unreadable value counts as `unreadable`.
    pub fn is_on(switch: Option<&Switch>, unreadable: bool) -> bool {
        match switch {
            None | Some(Switch::Off) => false,
            Some(Switch::On) => true,
            Some(Switch::Unreadable(_)) => unreadable,
        }
    }

    /// What to tell the user about an unreadable value of `name`.
    pub fn note(switch: Option<&Switch>, name: &str, unreadable: bool) -> Option<String> {
        let Some(Switch::Unreadable(value)) = switch else {
            return None;
        };
        Some(format!(
            "hookd: {name}={} is not on or off (1/true/yes/on, 0/false/no/off); taken as {}",
            value.escape_debug(),
            if unreadable { "on" } else { "off" }
        ))
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
