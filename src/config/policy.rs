//! The safety policy: the settings a repository may only tighten, resolved in one place.
//!
//! Four layers have a say: the user's own `hooks.yaml` (`~/.infer/` or `--config-dir`), a
//! trusted project's `hooks.yaml`, the environment (`HOOKD_GATE_SHELL_TOOLS`) and the command
//! line (`--gate-shell-tools`, `--fail-closed`). The user's layer sets each setting; every other
//! layer can only tighten it: switches are turned on, never off; shell tools are added, never
//! removed; `max_continues` is lowered, never raised. [`Policy::resolve`] is the one place they
//! are merged; everything else reads the resolved [`Policy`].

use std::path::PathBuf;

use serde::Serialize;

use super::hooks::{DEFAULT_MAX_CONTINUES, DEFAULT_SHELL_TOOLS};
pub use crate::sandbox::SandboxPolicy;

/// What one layer says about the policy; `None` (or empty) where it says nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PolicyLayer {
    /// `gate_shell_tools`.
    pub gate_shell_tools: Option<bool>,
    /// `fail_closed`.
    pub fail_closed: Option<bool>,
    /// `max_continues`.
    pub max_continues: Option<u64>,
    /// `shell_tools`: added to the defaults.
    pub shell_tools: Vec<String>,
    /// `sandbox:` in config.yaml.
    pub sandbox: SandboxLayer,
}

/// What one layer says about the sandbox (`sandbox:` in config.yaml).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxLayer {
    /// `enabled`.
    pub enabled: Option<bool>,
    /// `network`: `true` or `false`.
    pub network: Option<bool>,
    /// `network: {allow, deny}`: the hosts reached through hookd's proxy (a project's `allow`
    /// is not read: it may only add `deny`).
    pub egress: Option<crate::sandbox::Egress>,
    /// `write`: more places confined commands may write (absolute, `~` expanded).
    pub write: Vec<PathBuf>,
    /// `read_deny`: more places confined commands may not read.
    pub read_deny: Vec<PathBuf>,
    /// `unix_sockets`: sockets made outside that confined commands may connect to.
    pub unix_sockets: Vec<PathBuf>,
    /// `env.keep`: secret-carrying variables confined commands get all the same.
    pub env_keep: Vec<String>,
    /// `read_only_modes`: the modes whose calls run read-only (a layer may only add).
    pub read_only_modes: Vec<crate::kinds::Mode>,
    /// `walk`: how far below the project protected names are looked for (the user's layer
    /// only).
    pub walk: WalkLayer,
}

/// `sandbox.walk: {depth, most_dirs, skip}` as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WalkLayer {
    /// `depth`.
    pub depth: Option<usize>,
    /// `most_dirs`.
    pub most_dirs: Option<usize>,
    /// `skip`.
    pub skip: Vec<String>,
}

impl PolicyLayer {
    /// The command line's layer: a flag given turns its switch on.
    pub fn flags(gate_shell_tools: bool, fail_closed: bool) -> PolicyLayer {
        PolicyLayer {
            gate_shell_tools: gate_shell_tools.then_some(true),
            fail_closed: fail_closed.then_some(true),
            ..PolicyLayer::default()
        }
    }

    /// Whether the layer turns anything on or lowers anything (what an untrusted project's
    /// file would do once trusted).
    pub(crate) fn switches_on(&self) -> Vec<&'static str> {
        let mut on = Vec::new();
        if self.gate_shell_tools == Some(true) {
            on.push("gate_shell_tools");
        }
        if self.fail_closed == Some(true) {
            on.push("fail_closed");
        }
        if self.sandbox.enabled == Some(true) {
            on.push("sandbox");
        }
        on
    }
}

/// The resolved policy every part of hookd reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Policy {
    /// At `pre_tool`, deny a shell tool call whose command the allow-list does not admit, and
    /// a tool call that writes hookd's or the agents' own files.
    pub gate_shell_tools: bool,
    /// Adapters deny when hookd itself fails.
    pub fail_closed: bool,
    /// Consecutive `continue` replies honoured at `post_session`.
    pub max_continues: u64,
    /// The tools whose `input.command` is a shell command: the defaults plus any configured.
    pub shell_tools: Vec<String>,
    /// The sandbox.
    pub sandbox: SandboxPolicy,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            gate_shell_tools: false,
            fail_closed: false,
            max_continues: DEFAULT_MAX_CONTINUES,
            shell_tools: DEFAULT_SHELL_TOOLS.iter().map(|s| s.to_string()).collect(),
            sandbox: SandboxPolicy::default(),
        }
    }
}

impl Policy {
    /// The user's layer as written (the defaults where it is silent), then each of
    /// `tightening` in order (a trusted project, the environment, the command line), each of
    /// which can only tighten what it finds.
    pub fn resolve(user: &PolicyLayer, tightening: &[&PolicyLayer]) -> Policy {
        let mut p = Policy::default();
        p.gate_shell_tools = user.gate_shell_tools.unwrap_or(p.gate_shell_tools);
        p.fail_closed = user.fail_closed.unwrap_or(p.fail_closed);
        p.max_continues = user.max_continues.unwrap_or(p.max_continues);
        p.add_tools(&user.shell_tools);
        p.sandbox = SandboxPolicy {
            enabled: user.sandbox.enabled.unwrap_or(false),
            network: user.sandbox.network.unwrap_or(false) && user.sandbox.egress.is_none(),
            egress: user.sandbox.egress.clone(),
            write: user.sandbox.write.clone(),
            read_deny: user.sandbox.read_deny.clone(),
            unix_sockets: user.sandbox.unix_sockets.clone(),
            keep_env: user.sandbox.env_keep.clone(),
            read_only: false,
            read_only_modes: user.sandbox.read_only_modes.clone(),
            walk: hookd_sandbox::walk::Bounds::new(
                user.sandbox.walk.depth,
                user.sandbox.walk.most_dirs,
                user.sandbox.walk.skip.clone(),
            ),
            home: None,
            temp: None,
            state: None,
            runtime: None,
            covered: Vec::new(),
            named_sockets: Vec::new(),
            places: Default::default(),
            nested: false,
            nests: false,
            shown: Vec::new(),
            path: None,
        };
        for layer in tightening {
            p.gate_shell_tools |= layer.gate_shell_tools == Some(true);
            p.fail_closed |= layer.fail_closed == Some(true);
            if let Some(m) = layer.max_continues {
                p.max_continues = p.max_continues.min(m);
            }
            p.add_tools(&layer.shell_tools);
            // The sandbox: switched on, never off; the network switched off, never on; more
            // places hidden. Where commands write and which sockets they reach is the user's
            // alone (a layer's `write` and `unix_sockets` are not read here: the decoder warns
            // about a project's).
            let s = &layer.sandbox;
            p.sandbox.enabled |= s.enabled == Some(true);
            if s.network == Some(false) {
                p.sandbox.network = false;
                p.sandbox.egress = None;
            }
            // A host list narrows: the network on becomes every name through the proxy, less
            // the layer's `deny`; a list gets the layer's `deny` added.
            if let Some(e) = &s.egress {
                if p.sandbox.network {
                    p.sandbox.network = false;
                    let mut every = crate::sandbox::Egress::default();
                    every.allow = vec!["*".into()];
                    p.sandbox.egress = Some(every);
                }
                p.sandbox.egress = p.sandbox.egress.take().map(|mine| mine.narrowed(e));
            }
            for path in &s.read_deny {
                if !p.sandbox.read_deny.contains(path) {
                    p.sandbox.read_deny.push(path.clone());
                }
            }
            // More modes read-only, never fewer.
            for mode in &s.read_only_modes {
                if !p.sandbox.read_only_modes.contains(mode) {
                    p.sandbox.read_only_modes.push(*mode);
                }
            }
        }
        p
    }

    fn add_tools(&mut self, tools: &[String]) {
        for t in tools {
            if !self.shell_tools.contains(t) {
                self.shell_tools.push(t.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(
        gate: Option<bool>,
        closed: Option<bool>,
        max: Option<u64>,
        tools: &[&str],
    ) -> PolicyLayer {
        PolicyLayer {
            gate_shell_tools: gate,
            fail_closed: closed,
            max_continues: max,
            shell_tools: tools.iter().map(|t| t.to_string()).collect(),
            sandbox: SandboxLayer::default(),
        }
    }

    #[test]
    fn the_user_sets_and_every_other_layer_only_tightens() {
        let user = layer(Some(true), Some(false), Some(20), &["mysh"]);
        // A project that tries to switch the gate off, raise the limit and drop a tool.
        let project = layer(Some(false), None, Some(100), &[]);
        let p = Policy::resolve(&user, &[&project]);
        assert!(p.gate_shell_tools);
        assert_eq!(p.max_continues, 20);
        assert!(p.shell_tools.contains(&"mysh".to_string()));
        // Tightening: on, lower, more tools.
        let project = layer(None, Some(true), Some(3), &["xsh"]);
        let env = layer(Some(true), None, None, &[]);
        let p = Policy::resolve(&layer(None, None, None, &[]), &[&project, &env]);
        assert!(p.gate_shell_tools && p.fail_closed);
        assert_eq!(p.max_continues, 3);
        assert!(p.shell_tools.ends_with(&["xsh".to_string()]));
        assert!(p.shell_tools.starts_with(&Policy::default().shell_tools));
        // The user may lower what is the default and switch off what is off by default.
        let p = Policy::resolve(&layer(Some(false), Some(false), Some(0), &[]), &[]);
        assert_eq!(
            (p.gate_shell_tools, p.fail_closed, p.max_continues),
            (false, false, 0)
        );
        // Flags only turn on.
        let flags = PolicyLayer::flags(false, true);
        let p = Policy::resolve(&PolicyLayer::default(), &[&flags]);
        assert!(p.fail_closed && !p.gate_shell_tools);
    }
}
