//! The policy when loading fails: the user's own `hooks.yaml` read alone, so that when
//! something else is broken (a project's file, the payload, the daemon) an adapter still knows
//! whether the user asked it to deny rather than allow.

use super::load::Loader;
use super::{hooks, parse_bool, LoadOptions, Policy, PolicyLayer, Source};

/// The policy from the user's layer alone (`--config-dir`'s hooks.yaml, else
/// `~/.infer/hooks.yaml`), the environment and the command line, resolved as
/// [`Policy::resolve`] always does, whatever state the rest of the configuration is in. A file
/// that is not YAML at all is scanned for the keys, and so is a value the decoder refused: a
/// switch hookd cannot read is taken as on, never silently off.
pub fn user_policy(opts: &LoadOptions) -> Policy {
    let env = PolicyLayer {
        gate_shell_tools: opts
            .env
            .get("HOOKD_GATE_SHELL_TOOLS")
            .map(|v| parse_bool(v).unwrap_or(true)),
        ..PolicyLayer::default()
    };
    let mut user = PolicyLayer::default();
    let dir = match (&opts.config_dir, &opts.home_dir) {
        (Some(d), _) => Some((d.clone(), Source::ConfigDir)),
        (None, Some(h)) => Some((h.join(".infer"), Source::Home)),
        (None, None) => None,
    };
    if let Some((dir, source)) = dir {
        let mut l = Loader::default();
        if let Some(text) = l.read(&dir.join("hooks.yaml"), "hooks.yaml") {
            if let Some(file) = l.source("hooks.yaml", &text, source, hooks::decode_file) {
                user = file.policy;
            }
            // A value the decoder could not read (`fail_closed: maybe`), or a file that is not
            // YAML: on.
            if key_not_off(&text, "fail_closed") && user.fail_closed.is_none() {
                user.fail_closed = Some(true);
            }
            if key_not_off(&text, "gate_shell_tools") && user.gate_shell_tools.is_none() {
                user.gate_shell_tools = Some(true);
            }
        }
    }
    Policy::resolve(&user, &[&env, &opts.flags])
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
            user_policy(&opts(d.path()))
        };
        assert_eq!(at("enabled: true\n"), Policy::default());
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
