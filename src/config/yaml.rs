//! YAML text -> a small tree whose every node knows its line and column, with hard limits.
//!
//! serde would lose positions and could not report unknown keys as warnings, so the files
//! are read event by event with `saphyr-parser` and decoded by hand in `config::decode`.
//! Aliases are expanded here under a node budget, which is what defuses alias bombs.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// Where a node starts: 1-based line and column, and how many characters it spans on that line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Pos {
    pub line: usize,
    pub col: usize,
    pub len: usize,
}

impl Pos {
    fn from_span(span: &Span) -> Pos {
        let len = if span.end.line() == span.start.line() {
            span.end.col().saturating_sub(span.start.col())
        } else {
            1
        };
        Pos {
            line: span.start.line(),
            col: span.start.col() + 1,
            len: len.max(1),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum NodeKind {
    /// A scalar; `plain` is false when it was quoted or a block scalar (always a string then).
    Scalar {
        value: String,
        plain: bool,
    },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub kind: NodeKind,
    pub pos: Pos,
    /// Nodes in this subtree, itself included; what an alias to it costs.
    size: usize,
}

impl Node {
    /// A plain `null`, `~` or empty scalar.
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, NodeKind::Scalar { value, plain: true } if matches!(value.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    /// What a user would call this node's type, for "expected X, found Y" messages.
    pub fn describe(&self) -> String {
        match &self.kind {
            NodeKind::Scalar { .. } if self.is_null() => "nothing (null)".to_string(),
            NodeKind::Scalar { value, .. } => format!("`{}`", truncate(value, 40)),
            NodeKind::Seq(_) => "a list".to_string(),
            NodeKind::Map(_) => "a mapping".to_string(),
        }
    }
}

fn truncate(s: &str, max: usize) -> String {
    let mut out: String = s.chars().take(max).collect();
    if s.chars().count() > max {
        out.push('…');
    }
    out.replace('\n', "\\n")
}

/// Bounds on what one file may cost to read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub max_bytes: usize,
    pub max_nodes: usize,
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 1024 * 1024,
            max_nodes: 100_000,
            max_depth: 64,
        }
    }
}

/// Why a text is not a YAML tree we accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct YamlError {
    pub pos: Pos,
    pub message: String,
    pub help: Option<String>,
}

enum Frame {
    Seq {
        items: Vec<Node>,
        pos: Pos,
        anchor: usize,
    },
    Map {
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
        pos: Pos,
        anchor: usize,
    },
}

/// The parser's complaint in plain words, at the place a person must edit. A tab is reported
/// as a tab, on the line that holds it (the parser may notice it only later, or at the end of
/// the previous line's value); an unclosed quote at the quote that opens it.
fn plain_words(text: &str, pos: Pos, info: &str) -> YamlError {
    let tab = info.contains("tab");
    if tab {
        // The first tab in the indentation of a line at or after the reported one.
        let found = text
            .lines()
            .enumerate()
            .skip(pos.line.saturating_sub(1))
            .find_map(|(i, l)| {
                let indent = l.len() - l.trim_start_matches([' ', '\t']).len();
                l[..indent].find('\t').map(|c| (i + 1, c + 1))
            });
        let (line, col) = found.unwrap_or((pos.line, pos.col));
        return YamlError {
            pos: Pos { line, col, len: 1 },
            message: "invalid YAML: a tab in the indentation; YAML indents with spaces only".into(),
            help: Some("replace the tab with spaces (as many as the lines around it use)".into()),
        };
    }
    let (message, help) = if info.contains("quoted scalar") && info.contains("end of stream") {
        (
            "invalid YAML: a quoted string is never closed".to_string(),
            Some("close the quote that opens here on the same value".to_string()),
        )
    } else if info.contains("mapping values are not allowed") {
        (
            "invalid YAML: a `:` followed by a space inside a value".to_string(),
            Some(
                "quote the value (`command: \"echo a: b\"`), or fix the indentation of the line"
                    .to_string(),
            ),
        )
    } else if info.contains("did not find expected key")
        || info.contains("did not find expected '-'")
    {
        (
            "invalid YAML: this line is not indented like its neighbours".to_string(),
            Some("align it with the keys (or `- ` items) of the block it belongs to".to_string()),
        )
    } else {
        (format!("invalid YAML: {info}"), None)
    };
    YamlError { pos, message, help }
}

/// Parse one YAML document. `Ok(None)` for an empty file.
pub(crate) fn parse(text: &str, limits: Limits) -> Result<Option<Node>, YamlError> {
    if text.len() > limits.max_bytes {
        return Err(YamlError {
            pos: Pos {
                line: 1,
                col: 1,
                len: 1,
            },
            message: format!(
                "the file is {} bytes; configuration files are limited to {} bytes",
                text.len(),
                limits.max_bytes
            ),
            help: Some("keep hook configuration small; move long texts into scripts".into()),
        });
    }
    let mut parser = Parser::new_from_str(text);
    let mut tree = Tree {
        limits,
        ..Tree::default()
    };
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| {
            let pos = Pos {
                line: e.marker().line(),
                col: e.marker().col() + 1,
                len: 1,
            };
            plain_words(text, pos, e.info())
        })?;
        let pos = Pos::from_span(&span);
        if let Some((node, anchor)) = tree.event(event, pos)? {
            tree.attach(node, anchor)?;
        }
    }
    Ok(tree.root)
}

/// The tree being built from the parser's events, within its limits.
#[derive(Default)]
struct Tree {
    limits: Limits,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    root: Option<Node>,
    documents: usize,
    nodes: usize,
}

impl Tree {
    /// One event: a node that is complete (a scalar, an alias's copy, a closed collection)
    /// with its anchor, or nothing yet.
    fn event(&mut self, event: Event<'_>, pos: Pos) -> Result<Option<(Node, usize)>, YamlError> {
        Ok(match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing | Event::DocumentEnd => None,
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err(YamlError {
                        pos,
                        message: "expected one YAML document, found a second one".into(),
                        help: Some("remove the `---` separator and merge the documents".into()),
                    });
                }
                None
            }
            Event::Scalar(value, style, anchor, _tag) => {
                let plain = matches!(style, ScalarStyle::Plain);
                let value = value.into_owned();
                let kind = NodeKind::Scalar { value, plain };
                Some((Node { kind, pos, size: 1 }, anchor))
            }
            Event::Alias(id) => Some((self.alias(id, pos)?, 0)),
            Event::SequenceStart(anchor, _) => {
                self.open(Frame::Seq {
                    items: Vec::new(),
                    pos,
                    anchor,
                })?;
                None
            }
            Event::MappingStart(anchor, _) => {
                self.open(Frame::Map {
                    entries: Vec::new(),
                    key: None,
                    pos,
                    anchor,
                })?;
                None
            }
            Event::SequenceEnd | Event::MappingEnd => Some(self.close(pos)?),
        })
    }

    /// A copy of an anchored node, accounted for whole before it is made: the alias-bomb guard.
    fn alias(&mut self, id: usize, pos: Pos) -> Result<Node, YamlError> {
        let target = self.anchors.get(&id).ok_or_else(|| YamlError {
            pos,
            message: "alias refers to an unknown anchor".into(),
            help: None,
        })?;
        self.nodes = self.nodes.saturating_add(target.size);
        if self.nodes > self.limits.max_nodes {
            return Err(budget_error(pos, self.limits));
        }
        let mut copy = target.clone();
        copy.pos = pos;
        Ok(copy)
    }

    /// A collection starts, within the depth limit.
    fn open(&mut self, frame: Frame) -> Result<(), YamlError> {
        let pos = match &frame {
            Frame::Seq { pos, .. } | Frame::Map { pos, .. } => *pos,
        };
        if self.stack.len() >= self.limits.max_depth {
            return Err(depth_error(pos, self.limits));
        }
        self.stack.push(frame);
        Ok(())
    }

    /// The innermost collection ends: its node, sized by its children, and its anchor.
    fn close(&mut self, at: Pos) -> Result<(Node, usize), YamlError> {
        match self.stack.pop() {
            Some(Frame::Seq { items, pos, anchor }) => {
                let size = 1 + items.iter().map(|n| n.size).sum::<usize>();
                let kind = NodeKind::Seq(items);
                Ok((Node { kind, pos, size }, anchor))
            }
            Some(Frame::Map {
                entries,
                pos,
                anchor,
                ..
            }) => {
                let size = 1 + entries.iter().map(|(k, v)| k.size + v.size).sum::<usize>();
                let kind = NodeKind::Map(entries);
                Ok((Node { kind, pos, size }, anchor))
            }
            None => Err(internal(at)),
        }
    }

    /// A complete node counted, remembered under its anchor, and put in its parent (a mapping's
    /// key must be a name, once).
    fn attach(&mut self, node: Node, anchor: usize) -> Result<(), YamlError> {
        // Children were counted as they finished; each node counts itself once here.
        self.nodes = self.nodes.saturating_add(1);
        if self.nodes > self.limits.max_nodes {
            return Err(budget_error(node.pos, self.limits));
        }
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                Some(k) => entries.push((k, node)),
                None => {
                    if !matches!(node.kind, NodeKind::Scalar { .. }) {
                        return Err(YamlError {
                            pos: node.pos,
                            message: "mapping keys must be plain names".into(),
                            help: None,
                        });
                    }
                    if let Some((dup, _)) = entries.iter().find(|(k, _)| same_key(k, &node)) {
                        return Err(YamlError {
                            pos: node.pos,
                            message: format!(
                                "duplicate key {} (first set on line {})",
                                node.describe(),
                                dup.pos.line
                            ),
                            help: Some("remove one of the two".into()),
                        });
                    }
                    *key = Some(node);
                }
            },
        }
        Ok(())
    }
}

fn same_key(a: &Node, b: &Node) -> bool {
    matches!((&a.kind, &b.kind), (NodeKind::Scalar { value: x, .. }, NodeKind::Scalar { value: y, .. }) if x == y)
}

fn budget_error(pos: Pos, limits: Limits) -> YamlError {
    YamlError {
        pos,
        message: format!(
            "the document expands to more than {} nodes (an alias bomb?)",
            limits.max_nodes
        ),
        help: Some("use fewer anchors and aliases".into()),
    }
}

fn depth_error(pos: Pos, limits: Limits) -> YamlError {
    YamlError {
        pos,
        message: format!("nesting deeper than {} levels", limits.max_depth),
        help: None,
    }
}

fn internal(pos: Pos) -> YamlError {
    YamlError {
        pos,
        message: "unbalanced YAML structure".into(),
        help: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Option<Node>, YamlError> {
        parse(text, Limits::default())
    }

    #[test]
    fn positions_are_one_based() {
        let root = p("a: 1\nhooks:\n  - name: x\n    hook: post_sesion\n")
            .unwrap()
            .unwrap();
        let NodeKind::Map(entries) = root.kind else {
            panic!()
        };
        let NodeKind::Seq(items) = &entries[1].1.kind else {
            panic!()
        };
        let NodeKind::Map(hook) = &items[0].kind else {
            panic!()
        };
        assert_eq!(
            hook[1].1.pos,
            Pos {
                line: 4,
                col: 11,
                len: 11
            }
        );
    }

    #[test]
    fn empty_file_is_none() {
        assert!(p("").unwrap().is_none());
        assert!(p("# only a comment\n").unwrap().is_none());
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let e = p("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!(e.pos.line, 3);
        assert!(
            e.message
                .contains("duplicate key `a` (first set on line 1)"),
            "{}",
            e.message
        );
    }

    #[test]
    fn alias_bomb_is_refused_quickly() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let prev = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
            ));
        }
        let start = std::time::Instant::now();
        let e = p(&text).unwrap_err();
        assert!(e.message.contains("alias bomb"), "{}", e.message);
        assert!(start.elapsed() < std::time::Duration::from_secs(2));
    }

    #[test]
    fn small_aliases_expand() {
        let root = p("base: &b {timeout: 5}\nother: *b\n").unwrap().unwrap();
        let NodeKind::Map(entries) = root.kind else {
            panic!()
        };
        assert!(matches!(entries[1].1.kind, NodeKind::Map(_)));
        assert_eq!(entries[1].1.pos.line, 2);
    }

    #[test]
    fn oversized_and_deep_inputs_are_refused() {
        let big = "a: ".to_string() + &"x".repeat(2 * 1024 * 1024);
        assert!(p(&big).unwrap_err().message.contains("limited to"));
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(p(&deep).unwrap_err().message.contains("nesting deeper"));
    }

    #[test]
    fn syntax_errors_have_positions() {
        let e = p("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(e.message.starts_with("invalid YAML"), "{}", e.message);
        assert!(e.pos.line >= 1);
    }
}
