//! `config.yaml`: the bash allow-list per mode (`tools.bash.mode.<mode>.allow`), and `Mode`.

use super::decode::Decoder;
use super::yaml::{Node, NodeKind};
use crate::gate::AllowEntry;
use crate::kinds::LIST_KEYS;

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
