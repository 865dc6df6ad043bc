//! `config.yaml`: the bash allow-list per mode (`tools.bash.mode.<mode>.allow`), and `Mode`.

use super::decode::Decoder;
use super::yaml::{Node, NodeKind};
use crate::gate::AllowEntry;
use crate::kinds::{Mode, LISTS};

/// The allow-lists of one `config.yaml`: `None` where the file does not set that list.
#[derive(Clone, Debug, Default)]
pub(crate) struct FileLists {
    pub lists: [Option<Vec<AllowEntry>>; 5],
    /// `sandbox:`, paths as written (`~/` expanded by the loader, which knows the home).
    pub sandbox: super::SandboxLayer,
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
    if let Some((_, node)) = child_at(root, "sandbox") {
        out.sandbox = sandbox(d, node);
    }
    // Read for export by `telemetry::telemetry`; here for what `hookd check` reports.
    if let Some((key, node)) = child_at(root, "telemetry") {
        super::telemetry::decode(d, key, node);
    }
    let bash = child(root, "tools").and_then(|t| child(t, "bash"));
    if let Some(legacy) = bash.and_then(|b| child_at(b, "whitelist")) {
        legacy_whitelist(d, legacy);
    }
    let Some(mode) = bash.and_then(|b| child(b, "mode")) else {
        return out;
    };
    let keys = LISTS.map(Mode::name);
    let Some(fields) = d.fields(mode, "tools.bash.mode", &keys) else {
        return out;
    };
    for (i, key) in keys.iter().enumerate() {
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
                list: LISTS[i],
                origin: d.origin(item.pos.line),
            });
        }
        out.lists[i] = Some(entries);
    }
    out
}

/// `sandbox: {enabled, network, write, read_deny, unix_sockets, env}` (docs/security.md, "The
/// sandbox").
fn sandbox(d: &mut Decoder<'_>, node: &Node) -> super::SandboxLayer {
    let mut out = super::SandboxLayer::default();
    let Some(f) = d.fields(node, "`sandbox`", &super::shape::SANDBOX.names()) else {
        return out;
    };
    if let Some(n) = f.get("enabled") {
        out.enabled = d.bool(n, "`sandbox.enabled`");
    }
    if let Some(n) = f.get("network") {
        if matches!(n.kind, NodeKind::Map(_)) {
            out.egress = egress(d, n);
        } else {
            out.network = d.bool(n, "`sandbox.network` (or a mapping of `allow` and `deny`)");
        }
    }
    if let Some(n) = f.get("read_only_modes") {
        out.read_only_modes = read_only_modes(d, n);
    }
    if let Some(n) = f.get("env") {
        let keep = super::hooks::env_keep(d, n);
        if d.origin_source == super::Source::Project {
            if !keep.names().is_empty() {
                d.warn(
                    n.pos,
                    "a project cannot hand confined commands more of your secrets; `sandbox.env` is ignored".to_string(),
                    Some("put it under `sandbox.env.keep` in your own ~/.infer/config.yaml".into()),
                );
            }
        } else {
            out.env_keep = keep.names().to_vec();
        }
    }
    if let Some(n) = f.get("walk") {
        out.walk = walk(d, n);
    }
    for (key, list) in [
        ("write", &mut out.write),
        ("read_deny", &mut out.read_deny),
        ("unix_sockets", &mut out.unix_sockets),
    ] {
        let Some(n) = f.get(key) else { continue };
        for item in d.seq(n, &format!("`sandbox.{key}`")).unwrap_or_default() {
            let Some(path) = d.string(item, "a path") else {
                continue;
            };
            if !(path.starts_with('/') || path == "~" || path.starts_with("~/")) {
                d.error(
                    item.pos,
                    format!("`sandbox.{key}` entry `{path}` is not an absolute path"),
                    Some("write it from `/`, or from your home as `~/…`".into()),
                );
                continue;
            }
            if key != "read_deny" && d.origin_source == super::Source::Project {
                let what = if key == "write" {
                    "where confined commands write"
                } else {
                    "which sockets confined commands reach"
                };
                d.warn(
                    item.pos,
                    format!("a project cannot widen {what}; `{path}` is ignored"),
                    Some(format!(
                        "put it under `sandbox.{key}` in your own ~/.infer/config.yaml"
                    )),
                );
                continue;
            }
            if key == "write" {
                if let Some((holds, instead)) = holds_code(&path) {
                    d.warn(
                        item.pos,
                        format!("`sandbox.write` entry `{path}` holds {holds}: a confined command could change what a later, unconfined build runs"),
                        Some(instead.to_string()),
                    );
                }
            }
            list.push(std::path::PathBuf::from(path));
        }
    }
    out
}

/// `sandbox.walk: {depth, most_dirs, skip}`: numbers in range, names of one component. A
/// project's is checked, then ignored with a warning (its own `web/` skipped would leave
/// `web/.claude` writable).
fn walk(d: &mut Decoder<'_>, node: &Node) -> super::WalkLayer {
    let walk = walk_as_written(d, node);
    if d.origin_source != super::Source::Project {
        return walk;
    }
    if walk != super::WalkLayer::default() {
        d.warn(
            node.pos,
            "a project cannot change how far below it hookd looks for protected places; `sandbox.walk` is ignored".to_string(),
            Some("put it under `sandbox.walk` in your own ~/.infer/config.yaml".into()),
        );
    }
    super::WalkLayer::default()
}

fn walk_as_written(d: &mut Decoder<'_>, node: &Node) -> super::WalkLayer {
    let mut out = super::WalkLayer::default();
    let Some(f) = d.fields(node, "`sandbox.walk`", &super::shape::WALK.names()) else {
        return out;
    };
    let max_depth = hookd_sandbox::walk::MAX_DEPTH as i64;
    for (key, max, default, slot) in [
        (
            "depth",
            max_depth,
            hookd_sandbox::walk::DEPTH,
            &mut out.depth,
        ),
        (
            "most_dirs",
            super::shape::MAX_WALK_DIRS,
            hookd_sandbox::walk::MOST_DIRS,
            &mut out.most_dirs,
        ),
    ] {
        let Some(n) = f.get(key) else { continue };
        match d.int(n, &format!("`sandbox.walk.{key}`")) {
            Some(v) if (1..=max).contains(&v) => *slot = Some(v as usize),
            Some(v) => d.error(
                n.pos,
                format!("`sandbox.walk.{key}` {v} is out of range"),
                Some(format!("use 1 to {max} (default {default})")),
            ),
            None => {}
        }
    }
    if let Some(n) = f.get("skip") {
        for item in d.seq(n, "`sandbox.walk.skip`").unwrap_or_default() {
            let Some(name) = d.string(item, "a directory name") else {
                continue;
            };
            if name.is_empty() || name == "." || name == ".." || name.contains('/') {
                d.error(
                    item.pos,
                    format!("`sandbox.walk.skip` entry `{name}` is not a directory name"),
                    Some("name a directory by its name alone (vendor, third_party); it is skipped at every level".into()),
                );
                continue;
            }
            if !out.skip.contains(&name) {
                out.skip.push(name);
            }
        }
    }
    out
}

/// `sandbox.read_only_modes: [plan, …]`: mode names; an unknown one is an error naming the
/// nearest (any layer may write it: a project's only adds modes, which narrows).
fn read_only_modes(d: &mut Decoder<'_>, node: &Node) -> Vec<crate::kinds::Mode> {
    let mut out = Vec::new();
    for item in d.seq(node, "`sandbox.read_only_modes`").unwrap_or_default() {
        let Some(name) = d.string(item, "a mode") else {
            continue;
        };
        match name.parse::<crate::kinds::Mode>() {
            Ok(m) if !out.contains(&m) => out.push(m),
            Ok(_) => {}
            Err(e) => d.error(
                item.pos,
                format!("`sandbox.read_only_modes`: {e}"),
                e.suggestion.map(|s| format!("write `{s}`")),
            ),
        }
    }
    out
}

/// Places in a download cache that later, unconfined builds trust without checking them
/// against anything a confined command cannot change, what they are, and what to do instead.
/// cargo checks a crate's checksum only when it downloads it: a `.crate` already in
/// `registry/cache` is unpacked as it is (with `--locked` too), and the index names the address
/// crates are downloaded from; git's refs in `git/db` name what is checked out.
const CODE_IN_CACHES: &[(&str, &str, &str)] = &[
    (
        "~/.cargo/registry",
        "cargo's registry (~/.cargo/registry), whose cached crates a later cargo unpacks without checking them and whose index names where crates are downloaded from",
        "give the agent a cargo home of its own (start it with `CARGO_HOME=~/.cache/hookd/cargo` and write `~/.cache/hookd/cargo`): what its commands download is then never what your own builds run",
    ),
    (
        "~/.cargo/git",
        "cargo's git dependencies (~/.cargo/git), whose refs and checkouts later builds compile and run",
        "give the agent a cargo home of its own (start it with `CARGO_HOME=~/.cache/hookd/cargo` and write `~/.cache/hookd/cargo`)",
    ),
    (
        "~/go/pkg/mod",
        "Go's extracted module sources (~/go/pkg/mod), which later builds compile",
        "grant the checksummed parts instead: `~/go/pkg/mod/cache/download` (checked against go.sum)",
    ),
    (
        "~/.npm/_npx",
        "the packages npx runs (~/.npm/_npx)",
        "grant the checksummed parts instead: `~/.npm/_cacache` (checked against the lockfile's integrity)",
    ),
    (
        "~/.cache/pip/wheels",
        "the wheels pip built (~/.cache/pip/wheels), installed later without a check",
        "grant the checksummed parts instead: `~/.cache/pip/http-v2`",
    ),
];

/// What code of [`CODE_IN_CACHES`] the `write` entry `path` (as written) holds (the place, a
/// place inside it or above it), and what to do instead.
fn holds_code(path: &str) -> Option<(&'static str, &'static str)> {
    let entry = path.trim_end_matches('/');
    let under = |a: &str, b: &str| a.strip_prefix(b).is_some_and(|r| r.starts_with('/'));
    CODE_IN_CACHES
        .iter()
        .find(|(place, _, _)| *place == entry || under(place, entry) || under(entry, place))
        .map(|(_, holds, instead)| (*holds, *instead))
}

/// `sandbox.network: {allow, deny}`: the hosts confined commands reach through hookd's proxy,
/// each entry checked. A project's `allow` entries are ignored with a warning (it may only
/// narrow); its `deny` entries are kept.
fn egress(d: &mut Decoder<'_>, node: &Node) -> Option<crate::sandbox::Egress> {
    let f = d.fields(node, "`sandbox.network`", &super::shape::NETWORK.names())?;
    let mut out = crate::sandbox::Egress::default();
    for (key, list) in [("allow", &mut out.allow), ("deny", &mut out.deny)] {
        let Some(n) = f.get(key) else { continue };
        for item in d
            .seq(n, &format!("`sandbox.network.{key}`"))
            .unwrap_or_default()
        {
            let Some(host) = d.string(item, "a host") else {
                continue;
            };
            if let Some(why) = crate::sandbox::invalid_host_entry(&host) {
                d.error(
                    item.pos,
                    format!("`sandbox.network.{key}` entry: {why}"),
                    Some("write a name (`crates.io`), a wildcard for the names beneath one (`*.crates.io`) or an address (`10.0.0.7`)".into()),
                );
                continue;
            }
            if key == "allow" && d.origin_source == super::Source::Project {
                d.warn(
                    item.pos,
                    format!("a project cannot widen which hosts confined commands reach; `{host}` is ignored"),
                    Some("put it under `sandbox.network.allow` in your own ~/.infer/config.yaml".into()),
                );
                continue;
            }
            list.push(host.trim().to_string());
        }
    }
    Some(out)
}

/// infer's former allow-list, `tools.bash.whitelist` (`commands`: a program and any
/// arguments; `patterns`: regular expressions found anywhere in the command), which infer no
/// longer reads either. hookd does not read it (it would admit far more than it seems to:
/// `^git log` also admitted `git log --output=~/.bashrc`); it says so where it is written,
/// with the entries to write instead.
fn legacy_whitelist(d: &mut Decoder<'_>, (key, node): (&Node, &Node)) {
    let list = |name: &str| -> Vec<String> {
        match child(node, name).map(|n| &n.kind) {
            Some(NodeKind::Seq(items)) => items
                .iter()
                .filter_map(|i| match &i.kind {
                    NodeKind::Scalar { value, .. } if !value.trim().is_empty() => {
                        Some(value.trim().to_string())
                    }
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    };
    let mut entries: Vec<String> = list("commands")
        .iter()
        .map(|c| format!("'^{}( .*)?$'", regex::escape(c)))
        .collect();
    let mut unanchored = Vec::new();
    for p in list("patterns") {
        match (p.starts_with('^'), p.ends_with('$') && !p.ends_with("\\$")) {
            (true, true) => entries.push(format!("'{}'", p.replace('\'', "''"))),
            // A match at the start was enough: the rest of the command was anything.
            (true, false) => entries.push(format!("'{}.*'", p.replace('\'', "''"))),
            (false, _) => unanchored.push(format!("`{p}`")),
        }
    }
    let mut help = String::from(
        "write it as `tools.bash.mode.all.allow` (which infer reads too), each entry matching a whole command",
    );
    if !entries.is_empty() {
        help.push_str(&format!(
            "; as written it admitted what these admit: [{}] (narrow them: `hookd check` warns about each that admits too much)",
            entries.join(", ")
        ));
    }
    if !unanchored.is_empty() {
        help.push_str(&format!(
            "; {} matched anywhere in a command: write the commands it meant",
            unanchored.join(", ")
        ));
    }
    d.warn(
        key.pos,
        "`tools.bash.whitelist` is infer's old allow-list, which hookd does not read: nothing it lists is allowed".into(),
        Some(help),
    );
}

/// The key node and the value of `key` in a mapping.
pub(super) fn child_at<'n>(node: &'n Node, key: &str) -> Option<(&'n Node, &'n Node)> {
    match &node.kind {
        NodeKind::Map(entries) => entries
            .iter()
            .find(|(k, _)| matches!(&k.kind, NodeKind::Scalar { value, .. } if value == key))
            .map(|(k, v)| (k, v)),
        _ => None,
    }
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
