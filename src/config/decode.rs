//! Typed reads from the spanned YAML tree, collecting every problem instead of stopping at one.

use super::diag::{Diagnostic, Severity};
use super::yaml::{Node, NodeKind, Pos};

/// Reads one source (a file or an environment variable) and collects its diagnostics.
pub(crate) struct Decoder<'s> {
    pub file: String,
    source: &'s str,
    /// Who wrote what this decoder reads.
    pub origin_source: super::Source,
    pub diags: Vec<Diagnostic>,
}

/// The entries of a mapping, looked up by key.
pub(crate) struct Fields<'n> {
    entries: &'n [(Node, Node)],
}

impl<'n> Fields<'n> {
    /// The value of `key`, if present and not null.
    pub fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _)| matches!(&k.kind, NodeKind::Scalar { value, .. } if value == key))
            .map(|(_, v)| v)
            .filter(|v| !v.is_null())
    }
}

impl<'s> Decoder<'s> {
    pub fn new(file: impl Into<String>, source: &'s str, origin_source: super::Source) -> Self {
        Decoder {
            file: file.into(),
            source,
            origin_source,
            diags: Vec::new(),
        }
    }

    /// Where something at `line` of this source was written.
    pub fn origin(&self, line: usize) -> super::Origin {
        super::Origin {
            file: self.file.clone(),
            line,
            source: self.origin_source,
        }
    }

    pub fn error(&mut self, pos: Pos, message: String, help: Option<String>) {
        self.diags.push(Diagnostic::at(
            Severity::Error,
            &self.file,
            self.source,
            pos,
            message,
            help,
        ));
    }

    pub fn warn(&mut self, pos: Pos, message: String, help: Option<String>) {
        self.diags.push(Diagnostic::at(
            Severity::Warning,
            &self.file,
            self.source,
            pos,
            message,
            help,
        ));
    }

    /// The entries of a mapping; warns about keys not in `known` (with a suggestion).
    pub fn fields<'n>(&mut self, node: &'n Node, what: &str, known: &[&str]) -> Option<Fields<'n>> {
        let NodeKind::Map(entries) = &node.kind else {
            self.error(
                node.pos,
                format!("expected {what} to be a mapping, found {}", node.describe()),
                None,
            );
            return None;
        };
        for (k, _) in entries {
            if let NodeKind::Scalar { value, .. } = &k.kind {
                if !known.contains(&value.as_str()) {
                    let help = match crate::suggest::closest(value, known.iter().copied()) {
                        Some(s) => {
                            format!("did you mean `{s}`? (known keys: {})", known.join(", "))
                        }
                        None => format!("known keys: {}", known.join(", ")),
                    };
                    self.warn(
                        k.pos,
                        format!("{}`{value}` in {what} is ignored", super::UNKNOWN_KEY),
                        Some(help),
                    );
                }
            }
        }
        Some(Fields { entries })
    }

    /// The items of a list.
    pub fn seq<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n [Node]> {
        match &node.kind {
            NodeKind::Seq(items) => Some(items),
            _ => {
                self.error(
                    node.pos,
                    format!("expected {what} to be a list, found {}", node.describe()),
                    None,
                );
                None
            }
        }
    }

    /// A string (any scalar: `timeout: 30` read as a string is "30").
    pub fn string(&mut self, node: &Node, what: &str) -> Option<String> {
        match &node.kind {
            NodeKind::Scalar { value, .. } => Some(value.clone()),
            _ => {
                self.error(
                    node.pos,
                    format!("expected {what} to be text, found {}", node.describe()),
                    None,
                );
                None
            }
        }
    }

    /// One of a fixed set of names (`hook`, `trigger`): unknown ones get "did you mean" and the
    /// full list.
    pub fn one_of<T: Copy>(
        &mut self,
        node: &Node,
        noun: &str,
        options: &[(&'static str, T)],
    ) -> Option<T> {
        let given = self.string(node, &format!("`{noun}`"))?;
        if let Some((_, v)) = options.iter().find(|(name, _)| *name == given) {
            return Some(*v);
        }
        let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
        let list = names.join(", ");
        let help = match crate::suggest::closest(&given, names.iter().copied()) {
            Some(s) => format!("did you mean `{s}`? valid {noun}s: {list}"),
            None => format!("valid {noun}s: {list}"),
        };
        self.error(node.pos, format!("unknown {noun} `{given}`"), Some(help));
        None
    }

    /// A hook point of the catalog. An agent's own event name (`Stop`) gets the point it maps
    /// to as the suggestion.
    pub fn hook_point(&mut self, node: &Node) -> Option<crate::catalog::HookPoint> {
        if let NodeKind::Scalar { value, .. } = &node.kind {
            if let Some(p) = crate::catalog::HookPoint::for_agent_event(value) {
                self.error(
                    node.pos,
                    format!("unknown hook point `{value}`"),
                    Some(format!(
                        "`{value}` is an agent's event name; hookd's point for it is `{p}`: write `hook: {p}`"
                    )),
                );
                return None;
            }
        }
        let options: Vec<_> = crate::catalog::HookPoint::ALL
            .iter()
            .map(|p| (p.name(), *p))
            .collect();
        self.one_of(node, "hook point", &options)
    }

    /// `true` or `false`.
    pub fn bool(&mut self, node: &Node, what: &str) -> Option<bool> {
        if let NodeKind::Scalar { value, plain: true } = &node.kind {
            match value.as_str() {
                "true" | "True" | "TRUE" => return Some(true),
                "false" | "False" | "FALSE" => return Some(false),
                _ => {}
            }
        }
        self.error(
            node.pos,
            format!(
                "expected {what} to be true or false, found {}",
                node.describe()
            ),
            None,
        );
        None
    }

    /// A whole number (negative allowed; callers check ranges to give a precise message).
    pub fn int(&mut self, node: &Node, what: &str) -> Option<i64> {
        if let NodeKind::Scalar { value, plain: true } = &node.kind {
            if let Ok(n) = value.replace('_', "").parse::<i64>() {
                return Some(n);
            }
        }
        self.error(
            node.pos,
            format!(
                "expected {what} to be a whole number, found {}",
                node.describe()
            ),
            None,
        );
        None
    }
}

/// Names seen so far in a list, to report duplicates even when an earlier entry is invalid.
#[derive(Default)]
pub(crate) struct NameSet {
    seen: Vec<(String, usize)>,
}

impl NameSet {
    /// Record the `name` of `item`; false (and an error) when it was already used.
    pub fn check(&mut self, d: &mut Decoder<'_>, item: &Node, what: &str, why: &str) -> bool {
        let NodeKind::Map(entries) = &item.kind else {
            return true;
        };
        let Some((key, NodeKind::Scalar { value, .. })) = entries
            .iter()
            .find(|(k, _)| matches!(&k.kind, NodeKind::Scalar { value, .. } if value == "name"))
            .map(|(k, v)| (k, &v.kind))
        else {
            return true;
        };
        if let Some((_, line)) = self.seen.iter().find(|(n, _)| n == value) {
            d.error(
                key.pos,
                format!("duplicate {what} name `{value}` (first defined on line {line})"),
                Some(format!("give each {what} a unique name; {why}")),
            );
            return false;
        }
        self.seen.push((value.clone(), key.pos.line));
        true
    }
}
