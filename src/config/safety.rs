//! The user's own safety switches (`fail_closed`, `gate_shell_tools`), read from the user's
//! `hooks.yaml` alone: when something else is broken (a project's file, the payload, the
//! daemon), an adapter still knows whether the user asked it to deny rather than allow.

use super::{hooks, parse_bool, LoadOptions, Loader, Source};

/// What the user's layer asks for when hookd itself fails.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Safety {
    /// `fail_closed: true` in the user's hooks.yaml.
    pub fail_closed: bool,
    /// `gate_shell_tools: true` in the user's hooks.yaml, or `HOOKD_GATE_SHELL_TOOLS`.
    pub gate_shell_tools: bool,
}

/// The user's switches: `--config-dir`'s hooks.yaml, else `~/.infer/hooks.yaml`, whatever
/// state the rest of the configuration is in. A file that is not YAML at all is scanned for
/// the keys, and so is a value the decoder refused: a switch hookd cannot read is taken as on, never silently off.
pub fn user_safety(opts: &LoadOptions) -> Safety {
    let mut safety = Safety::default();
    if let Some(v) = opts.env.get("HOOKD_GATE_SHELL_TOOLS") {
        safety.gate_shell_tools = parse_bool(v).unwrap_or(true);
    }
    let (dir, source) = match (&opts.config_dir, &opts.home_dir) {
        (Some(d), _) => (d.clone(), Source::ConfigDir),
        (None, Some(h)) => (h.join(".infer"), Source::Home),
        (None, None) => return safety,
    };
    let mut l = Loader::default();
    let Some(text) = l.read(&dir.join("hooks.yaml"), "hooks.yaml") else {
        return safety;
    };
    if let Some(file) = l.source("hooks.yaml", &text, source, hooks::decode_file) {
        safety.fail_closed |= file.config.fail_closed;
        safety.gate_shell_tools |= file.config.gate_shell_tools;
    }
    // A value the decoder could not read (`fail_closed: maybe`), or a file that is not YAML.
    safety.fail_closed |= key_not_off(&text, "fail_closed");
    safety.gate_shell_tools |= key_not_off(&text, "gate_shell_tools");
    safety
}

/// Whether a line of `text` sets top-level `key` to anything but a clear "off".
fn key_not_off(text: &str, key: &str) -> bool {
    text.lines().any(|line| {
        line.strip_prefix(key)
            .and_then(|rest| rest.trim_start().strip_prefix(':'))
            .is_some_and(|value| {
                let value = value.split('#').next().unwrap_or_default();
                let value = value.trim().trim_matches(['"', '\'']);
                parse_bool(value) != Some(false)
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn opts(home: &Path) -> LoadOptions {
        LoadOptions {
            project_dir: home.join("proj"),
            home_dir: Some(home.to_path_buf()),
            ..LoadOptions::default()
        }
    }

    #[test]
    fn read_from_the_users_file_even_when_it_is_broken() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".infer")).unwrap();
        let file = d.path().join(".infer/hooks.yaml");
        let at = |text: &str| {
            std::fs::write(&file, text).unwrap();
            user_safety(&opts(d.path()))
        };
        assert_eq!(at("enabled: true\n"), Safety::default());
        let s = at("fail_closed: true\nhooks:\n  - name: x\n    hook: nowhere\n");
        assert!(s.fail_closed && !s.gate_shell_tools, "{s:?}");
        let s = at("gate_shell_tools: yes\nhooks: [\n");
        assert!(s.gate_shell_tools && !s.fail_closed, "{s:?}");
        let s = at("fail_closed: false  # off\nhooks: {{{\n");
        assert!(!s.fail_closed, "{s:?}");
        let s = at("fail_closed: maybe\n: :\n");
        assert!(s.fail_closed, "{s:?}");
    }
}
