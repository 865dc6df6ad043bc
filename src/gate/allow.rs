//! The allow-lists the gate decides by: entries, each an anchored regular expression over the
//! whole command, kept per list (`all`, then one per mode), and what one entry is: compiled,
//! validated, probed for what it admits, suggested for a command. The gate owns these types;
//! configuration loading fills them.

use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

use super::{lint, Gate};
use crate::kinds::{Mode, Origin, LISTS};

/// One allow-list entry: an anchored regular expression over the whole command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AllowEntry {
    /// The regular expression as written.
    pub pattern: String,
    /// The list it is on: `all` ([`Mode::All`]) or a mode's own.
    pub list: Mode,
    /// Where it was written.
    pub origin: Origin,
}

/// The effective allow-lists, by list key (`all`, then each mode).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AllowLists {
    lists: [Vec<AllowEntry>; 5],
}

impl AllowLists {
    /// Build from entries (each names its list).
    pub fn from_entries(entries: impl IntoIterator<Item = AllowEntry>) -> Self {
        let mut out = AllowLists::default();
        for e in entries {
            if let Some(i) = LISTS.iter().position(|k| *k == e.list) {
                out.lists[i].push(e);
            }
        }
        out
    }

    /// The entries that apply in `mode`: `all` first, then the mode's own.
    pub fn for_mode(&self, mode: Mode) -> impl Iterator<Item = &AllowEntry> {
        // `all` is the shared list alone; every other mode adds its own list to it.
        let own = LISTS
            .iter()
            .position(|k| *k == mode)
            .filter(|i| *i > 0)
            .map_or(&[][..], |i| &self.lists[i][..]);
        self.lists[0].iter().chain(own.iter())
    }

    /// From the lists in `LISTS` order (`all`, then each mode).
    pub(crate) fn from_lists(lists: [Vec<AllowEntry>; 5]) -> Self {
        AllowLists { lists }
    }

    /// Every entry, in list order.
    pub fn all_entries(&self) -> impl Iterator<Item = &AllowEntry> {
        self.lists.iter().flatten()
    }
}

/// Wrap an entry the way the agent CLI does: anchored over the whole command.
pub(crate) fn anchored(entry: &str) -> String {
    format!(r"\A(?s:{entry})\z")
}

/// The most memory one compiled entry may take.
pub(super) const ENTRY_SIZE_LIMIT: usize = 1 << 20;

/// Why an allow entry is not usable.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum EntryError {
    /// It is not a regular expression (on its own: see [`compile_entry`]).
    #[error("{0}")]
    Syntax(#[source] Box<regex_syntax::Error>),
    /// Compiled, it would take more memory than an entry may.
    #[error("compiled, the entry exceeds the size limit of {limit} bytes")]
    TooBig {
        /// The limit, in bytes.
        limit: usize,
    },
    /// Anything else the regex crate refused.
    #[error("{0}")]
    Other(#[source] regex::Error),
}

impl EntryError {
    /// What is wrong, in one line (the error's `Display` also shows the pattern with a caret
    /// under the place).
    pub fn what(&self) -> String {
        match self {
            EntryError::Syntax(e) => match &**e {
                regex_syntax::Error::Parse(a) => a.kind().to_string(),
                regex_syntax::Error::Translate(h) => h.kind().to_string(),
                other => other.to_string(),
            },
            other => other.to_string(),
        }
    }
}

/// Compile one entry, anchored over the whole command.
pub fn compile_entry(entry: &str) -> Result<Regex, EntryError> {
    standalone(entry)?;
    let anchored = anchored(entry);
    regex::RegexBuilder::new(&anchored)
        .size_limit(ENTRY_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => EntryError::TooBig { limit },
            // The regex crate's syntax error is text; its parser gives the typed error.
            regex::Error::Syntax(_) => match regex_syntax::Parser::new().parse(&anchored) {
                Err(typed) => EntryError::Syntax(Box::new(typed)),
                Ok(_) => EntryError::Other(e),
            },
            e => EntryError::Other(e),
        })
}

/// An entry must be a regular expression on its own, not only inside the anchors: `a)|(.*`
/// is valid once wrapped (`\A(?s:a)|(.*)\z`) and would then match anything.
pub(super) fn standalone(entry: &str) -> Result<(), EntryError> {
    regex_syntax::ast::parse::Parser::new()
        .parse(entry)
        .map(|_| ())
        .map_err(|e| EntryError::Syntax(Box::new(e.into())))
}

/// Check an entry's syntax without compiling it (cheap enough for every configuration load).
/// A pattern that parses on its own parses inside the anchors' group too.
pub(crate) fn validate_entry(entry: &str) -> Result<(), EntryError> {
    standalone(entry)
}

/// Commands no restricted entry should admit: each runs arbitrary code, fetches it, or
/// destroys data. An entry that admits any of them is reported as unrestricted, naming it.
/// Each is one plain command (the parser admits it, except the builtin `eval`), matched as
/// the gate matches: against the whole command text.
pub const DANGEROUS_PROBES: &[&str] = &[
    "rm -rf /",
    "bash -c x",
    "sh -c x",
    "zsh -c x",
    "curl x",
    "wget x",
    "python3 -c x",
    "python -c x",
    "perl -e x",
    "ruby -e x",
    "node -e x",
    "eval x",
    "sudo x",
    "env x",
    "xargs x",
    "nc -e /bin/sh x 1",
    "ssh x",
    "dd if=/dev/zero of=/dev/sda",
    "chmod -R 777 /",
    "chown -R x /",
    "git push --force",
    "git config core.hooksPath x",
    "npx x",
    "pip install x",
    "npm install x",
    "docker run x",
    "find / -delete",
];

/// The first dangerous command `entry` lets through the gate, if any (`None` as well for an
/// entry that does not compile: that is reported as an error of its own). The gate itself
/// judges each probe with this one entry, so what it refuses anyway is no alarm (`find / -delete`
/// under `^find( .*)?$`, `env x` once `env` is unwrapped); and each probe is also tried with
/// the entry's literal end after it, so `^.* --version$` is caught by `bash -c x --version`
/// and `^git .* main$` by `git push --force main`.
pub fn unrestricted_probe(entry: &str) -> Option<String> {
    compile_entry(entry).ok()?;
    let end = literal_suffix(lint::strip_anchors(entry).0);
    let gate = Gate::new(
        &AllowLists::from_entries([AllowEntry {
            pattern: entry.to_string(),
            list: crate::kinds::Mode::All,
            origin: crate::kinds::Origin {
                file: "probe".into(),
                line: 0,
                source: crate::kinds::Source::Embedded,
            },
        }]),
        "probe",
    );
    let admits = |probe: &str| gate.verdict(probe, Mode::Standard).is_allowed();
    let plain = DANGEROUS_PROBES.iter().map(|p| p.to_string());
    let ended = DANGEROUS_PROBES
        .iter()
        .filter(|_| !end.is_empty())
        .flat_map(|p| [format!("{p}{end}"), format!("{p} x{end}")]);
    plain.chain(ended).find(|t| admits(t))
}

/// The literal text an entry's body ends with (` --version` of `.* --version`): plain
/// characters and escaped punctuation, read back from the end.
pub(super) fn literal_suffix(body: &str) -> String {
    let chars: Vec<char> = body.chars().collect();
    let mut out = Vec::new();
    let mut i = chars.len();
    while i > 0 {
        let c = chars[i - 1];
        let escaped = i >= 2 && chars[i - 2] == '\\' && !(i >= 3 && chars[i - 3] == '\\');
        if escaped && c.is_ascii_punctuation() {
            out.push(c);
            i -= 2;
        } else if !escaped && (c.is_alphanumeric() || " -_/=:,@%".contains(c)) {
            out.push(c);
            i -= 1;
        } else {
            break;
        }
    }
    out.iter().rev().collect()
}

/// True for `.*` and its variants: entries that let one of [`DANGEROUS_PROBES`] through.
pub fn is_unrestricted(entry: &str) -> bool {
    unrestricted_probe(entry).is_some()
}

/// One allow entry, compiled on first need. Entries whose text starts with a literal (most:
/// `^git status`, `cargo test`) are compiled only for commands that start with it, so a long
/// list costs a verdict little more than a short one.
pub(super) struct Compiled {
    pub(super) entry: AllowEntry,
    pub(super) prefix: String,
    pub(super) regex: OnceLock<Option<Regex>>,
    /// The one command the entry admits, when it admits exactly one.
    pub(super) only: OnceLock<Option<String>>,
}

impl Compiled {
    pub(super) fn new(entry: AllowEntry) -> Compiled {
        Compiled {
            prefix: literal_prefix(&entry.pattern),
            entry,
            regex: OnceLock::new(),
            only: OnceLock::new(),
        }
    }

    /// Whether the entry admits `text` and nothing else (`^git status$`, an escaped command):
    /// the operator wrote down this exact command, options and wrappers included.
    pub(super) fn is_exactly(&self, text: &str) -> bool {
        self.only
            .get_or_init(|| only_text(&self.entry.pattern))
            .as_deref()
            == Some(text)
    }

    /// Whether this entry admits `text`. An entry that does not compile (over the size limit)
    /// admits nothing and is logged; `hookd check` reports it as an error.
    pub(super) fn admits(&self, text: &str) -> bool {
        if !text.starts_with(&self.prefix) {
            return false;
        }
        let regex = self
            .regex
            .get_or_init(|| match compile_entry(&self.entry.pattern) {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::error!(
                        "allow entry `{}` ({}) cannot be compiled ({e}); it admits nothing",
                        self.entry.pattern,
                        self.entry.origin
                    );
                    None
                }
            });
        regex.as_ref().is_some_and(|r| r.is_match(text))
    }
}

/// The one text `pattern` matches, when it is a literal between anchors (`^git status$`,
/// `cargo\ test`, `regex::escape`'s output); `None` for anything with a choice in it.
fn only_text(pattern: &str) -> Option<String> {
    use regex_syntax::hir::{Hir, HirKind};
    fn walk(h: &Hir, out: &mut Vec<u8>) -> bool {
        match h.kind() {
            HirKind::Empty | HirKind::Look(_) => true,
            HirKind::Literal(l) => {
                out.extend_from_slice(&l.0);
                true
            }
            HirKind::Capture(c) => walk(&c.sub, out),
            HirKind::Concat(v) => v.iter().all(|h| walk(h, out)),
            _ => false,
        }
    }
    let hir = regex_syntax::Parser::new().parse(&anchored(pattern)).ok()?;
    let mut out = Vec::new();
    walk(&hir, &mut out).then_some(())?;
    String::from_utf8(out).ok()
}

/// Whether `pattern`'s top level is an alternation (`a|b`, not `(a|b)` or `[|]`). A scan of
/// escapes, groups and (nested) classes answers for the common entries; flags (`(?x)` makes
/// `#` a comment) and anything the scan does not follow take regex-syntax's parser, which costs
/// more (it ran for every entry on every verdict before, and was most of a long list's cost).
fn top_level_alternation(pattern: &str) -> bool {
    if !pattern.contains('|') {
        return false;
    }
    let parsed = || {
        !matches!(
            regex_syntax::ast::parse::Parser::new().parse(pattern),
            Ok(ast) if !matches!(ast, regex_syntax::ast::Ast::Alternation(_))
        )
    };
    if pattern.contains('#') || pattern.contains("(?") {
        return parsed();
    }
    let (mut groups, mut classes) = (0usize, 0usize);
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' => {
                classes += 1;
                // `]` first in a class (after an optional `^`) is a literal.
                if chars.peek() == Some(&'^') {
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    chars.next();
                }
            }
            ']' if classes > 0 => classes -= 1,
            _ if classes > 0 => {}
            '(' => groups += 1,
            ')' if groups > 0 => groups -= 1,
            ')' => return parsed(),
            '|' if groups == 0 => return true,
            _ => {}
        }
    }
    if groups != 0 || classes != 0 {
        return parsed();
    }
    false
}

/// The literal text every match of `pattern` (anchored at the start, as the gate matches)
/// begins with, read without compiling it: leading `^`/`\A`, then plain characters and escaped
/// punctuation, up to the first other regex syntax. A character followed by a quantifier is
/// not part of it, and a pattern with `|` outside a group or class has none (either side may
/// match). Sound by construction: it only ever under-approximates.
pub(crate) fn literal_prefix(pattern: &str) -> String {
    // `^a|^b` starts with either: a pattern whose top is an alternation has no prefix.
    if top_level_alternation(pattern) {
        return String::new();
    }
    let rest = pattern
        .strip_prefix('^')
        .or_else(|| pattern.strip_prefix("\\A"))
        .unwrap_or(pattern);
    let mut out = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        let literal = match c {
            '\\' => match chars.next() {
                Some(e) if e.is_ascii_punctuation() => e,
                _ => break,
            },
            '.' | '+' | '*' | '?' | '(' | ')' | '|' | '[' | ']' | '{' | '}' | '^' | '$' | '#' => {
                break
            }
            c if c.is_whitespace() && c != ' ' => break,
            c => c,
        };
        if matches!(chars.peek(), Some('?' | '*' | '{' | '+')) {
            break;
        }
        out.push(literal);
    }
    out
}

/// The allow entry that admits exactly `text`: anchored, with regex metacharacters escaped.
pub fn suggested_entry(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    out.push('^');
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '.'
                | '+'
                | '*'
                | '?'
                | '('
                | ')'
                | '|'
                | '['
                | ']'
                | '{'
                | '}'
                | '^'
                | '$'
                | '#'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('$');
    out
}

/// Quote a string as a single-quoted YAML scalar.
pub(super) fn yaml_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}
