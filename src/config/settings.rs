//! `config.yaml`: the bash allow-list per mode (`tools.bash.mode.<mode>.allow`), and `Mode`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::decode::Decoder;
use super::yaml::{Node, NodeKind};

/// The agent mode a dispatch runs in; it selects the allow-list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Per-call approvals; the default.
    #[default]
    Standard,
    /// Read-only planning.
    Plan,
    /// Approvals bypassed.
    Auto,
    /// Read-only sub-agents.
    Readonly,
}

impl Mode {
    /// Every mode.
    pub const ALL: [Mode; 4] = [Mode::Standard, Mode::Plan, Mode::Auto, Mode::Readonly];

    /// The key used in `config.yaml` and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Standard => "standard",
            Mode::Plan => "plan",
            Mode::Auto => "auto",
            Mode::Readonly => "readonly",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A mode name that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown mode `{given}`{}; valid modes: standard, plan, auto, readonly", suggestion.map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
pub struct UnknownMode {
    /// What was written.
    pub given: String,
    /// The nearest valid mode.
    pub suggestion: Option<&'static str>,
}

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMode {
                given: s.to_string(),
                suggestion: crate::suggest::closest(s, Mode::ALL.iter().map(|m| m.name())),
            })
    }
}

/// The list keys under `tools.bash.mode`: `all` applies to every mode.
pub(crate) const LIST_KEYS: [&str; 5] = ["all", "standard", "plan", "auto", "readonly"];

/// Who wrote a piece of configuration: everything is trusted except the project's own `.infer/`
/// (the repository the agent works in), until the user trusts it (`hookd trust`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Compiled into hookd.
    BuiltIn,
    /// The user's `~/.infer/`.
    Home,
    /// The project's `.infer/`: untrusted until trusted.
    Project,
    /// A directory named with `--config-dir` by whoever runs hookd.
    ConfigDir,
    /// An environment variable of whoever runs hookd.
    Environment,
    /// Text handed to the library by the program embedding it.
    Embedded,
}

/// Where a hook, reminder or allow entry was written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Origin {
    /// The file or environment variable.
    pub file: String,
    /// 1-based line, 0 for an environment variable.
    pub line: usize,
    /// Who wrote it.
    pub source: Source,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.file)
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// One allow-list entry: an anchored regular expression over the whole command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AllowEntry {
    /// The regular expression as written.
    pub pattern: String,
    /// `all` or a mode name.
    pub list: &'static str,
    /// Where it was written.
    pub origin: Origin,
}

/// The allow-lists of one `config.yaml`: `None` where the file does not set that list.
#[derive(Clone, Debug, Default)]
pub(crate) struct FileLists {
    pub lists: [Option<Vec<AllowEntry>>; 5],
}

/// Read the allow-lists out of an agent's `config.yaml`. Keys hookd does not use are the
/// agent's business and are not reported, except misspelt mode names under `tools.bash.mode`.
pub(crate) fn decode(d: &mut Decoder<'_>, root: &Node) -> FileLists {
    let mut out = FileLists::default();
    let NodeKind::Map(_) = &root.kind else {
        d.error(
            root.pos,
            format!(
                "expected config.yaml to be a mapping, found {}",
                root.describe()
            ),
            None,
        );
        return out;
    };
    let Some(mode) = child(root, "tools")
        .and_then(|t| child(t, "bash"))
        .and_then(|b| child(b, "mode"))
    else {
        return out;
    };
    let Some(fields) = d.fields(mode, "tools.bash.mode", &LIST_KEYS) else {
        return out;
    };
    for (i, key) in LIST_KEYS.iter().enumerate() {
        let Some(list_node) = fields.get(key) else {
            continue;
        };
        let what = format!("tools.bash.mode.{key}");
        let Some(f) = d.fields(list_node, &what, &["allow"]) else {
            continue;
        };
        let Some(allow) = f.get("allow") else {
            continue;
        };
        let Some(items) = d.seq(allow, &format!("{what}.allow")) else {
            continue;
        };
        let mut entries = Vec::new();
        for item in items {
            let Some(pattern) = d.string(item, "an allow entry") else {
                continue;
            };
            if pattern.trim().is_empty() {
                d.warn(item.pos, "empty allow entry is ignored".into(), None);
                continue;
            }
            if let Err(e) = crate::gate::validate_entry(&pattern) {
                d.error(
                    item.pos,
                    format!("allow entry `{pattern}` is not a valid regular expression"),
                    Some(e.what()),
                );
                continue;
            }
            entries.push(AllowEntry {
                pattern,
                list: LIST_KEYS[i],
                origin: d.origin(item.pos.line),
            });
        }
        out.lists[i] = Some(entries);
    }
    out
}

fn child<'n>(node: &'n Node, key: &str) -> Option<&'n Node> {
    match &node.kind {
        NodeKind::Map(entries) => entries
            .iter()
            .find(|(k, _)| matches!(&k.kind, NodeKind::Scalar { value, .. } if value == key))
            .map(|(_, v)| v),
        _ => None,
    }
}
