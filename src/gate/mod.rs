//! The gate: a command runs only if it is one plain command and an allow entry admits it.
//!
//! `Gate::verdict` decides hook commands (hookd runs them, without a shell: one simple
//! command). `Gate::model_verdict` decides the shell commands a model proposes (the agent's
//! shell runs them): lists and pipelines of simple commands, each admitted on its own. A
//! denial is a value with a category and a hint, never an error.

mod allow;
mod bulk;
mod compound;
pub mod lint;
mod options;
// Only `hookd import claude-code` asks whether two entries overlap.
#[cfg(feature = "adapters")]
mod overlap;
#[cfg(feature = "adapters")]
pub(crate) use overlap::common_command;
mod parse;
pub(crate) mod protect;
mod wrappers;

use std::fmt;
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

pub use crate::kinds::DenyReason;
use crate::kinds::Mode;
pub use allow::{AllowEntry, AllowLists};
pub(crate) use parse::cd_target;
pub use parse::{forbidden_char, MAX_COMMAND_BYTES};
pub use protect::OwnFiles;

/// A command the gate admitted: exactly what will run, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Allowed {
    /// Program and arguments, executed directly (no shell).
    pub argv: Vec<String>,
    /// The entry that admitted it.
    pub entry: AllowEntry,
}

/// A command the gate refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Denied {
    /// The category.
    pub reason: DenyReason,
    /// What exactly was wrong.
    pub detail: String,
    /// What the user can do.
    pub hint: String,
}

/// The gate's answer for one command.
#[derive(Clone, Debug, PartialEq, Eq)]
// Exhaustive on purpose: a gate admits or refuses, there is no third answer to handle.
pub enum Verdict {
    /// Run `argv`.
    Allowed(Allowed),
    /// Do not run it.
    Denied(Denied),
}

impl Verdict {
    /// True when allowed.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Verdict::Allowed(_))
    }
}

/// One simple command of a model's command, with its own verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Part {
    /// The operator joining it to the part before: `&&`, `||`, `;`, `|` or `|&` (`None` for
    /// the first).
    pub joint: Option<&'static str>,
    /// The part as written.
    pub text: String,
    /// Its own verdict.
    pub verdict: Verdict,
}

/// The gate's answer for a shell command a model proposed (the agent's shell runs it).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelVerdict {
    /// Each simple command in order, as far as the command could be split (none when the
    /// command as a whole was refused first).
    pub parts: Vec<Part>,
    /// Why it may not run: the first part refused, or what is wrong with the whole. `None`
    /// when every part is admitted.
    pub denied: Option<Denied>,
}

impl ModelVerdict {
    /// True when every part is admitted.
    pub fn is_allowed(&self) -> bool {
        self.denied.is_none()
    }

    /// The argv of each admitted part, in order (all of them when the command is allowed).
    pub fn admitted(&self) -> impl Iterator<Item = &Allowed> {
        self.parts.iter().filter_map(|p| match &p.verdict {
            Verdict::Allowed(a) => Some(a),
            Verdict::Denied(_) => None,
        })
    }
}

/// `ln -s …`, `cp -s …` and their long forms: commands that make symbolic links.
fn makes_links(argv: &[String]) -> bool {
    let program = argv[0].rsplit('/').next().unwrap_or_default();
    let long: &[&str] = match program {
        "ln" => &["--symbolic"],
        "cp" => &["--symbolic-link"],
        _ => return false,
    };
    argv[1..].iter().any(|a| {
        long.iter().any(|l| a.starts_with(l))
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('s'))
    })
}

/// The advice on a model's command, where it differs from a hook command's: the agent's
/// shell runs it, so lists and pipelines of admitted commands are fine.
fn model_advice(reason: DenyReason) -> &'static str {
    match reason {
        DenyReason::Operator => "commands may be joined with `&&`, `||`, `;`, `|` and `|&` on one line; `&` (background), newlines and line continuations are refused",
        DenyReason::Builtin => "`cd` is the one shell builtin a model's command may use; use programs",
        DenyReason::Compound | DenyReason::Substitution => "a model's command may only chain plain commands; subshells, groups, loops and substitutions are refused",
        r => r.advice(),
    }
}

/// Wrap an entry the way the agent CLI does: anchored over the whole command.
pub(crate) fn anchored(entry: &str) -> String {
    format!(r"\A(?s:{entry})\z")
}

/// The most memory one compiled entry may take.
const ENTRY_SIZE_LIMIT: usize = 1 << 20;

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

/// The words a command would run with (decoded), if the gate can parse it as one plain command.
pub fn argv_of(command: &str) -> Option<Vec<String>> {
    parse::parse(command).ok().map(|p| p.argv)
}

/// An entry must be a regular expression on its own, not only inside the anchors: `a)|(.*`
/// is valid once wrapped (`\A(?s:a)|(.*)\z`) and would then match anything.
fn standalone(entry: &str) -> Result<(), EntryError> {
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
fn literal_suffix(body: &str) -> String {
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
struct Compiled {
    entry: AllowEntry,
    prefix: String,
    regex: OnceLock<Option<Regex>>,
    /// The one command the entry admits, when it admits exactly one.
    only: OnceLock<Option<String>>,
}

impl Compiled {
    fn new(entry: AllowEntry) -> Compiled {
        Compiled {
            prefix: literal_prefix(&entry.pattern),
            entry,
            regex: OnceLock::new(),
            only: OnceLock::new(),
        }
    }

    /// Whether the entry admits `text` and nothing else (`^git status$`, an escaped command):
    /// the operator wrote down this exact command, options and wrappers included.
    fn is_exactly(&self, text: &str) -> bool {
        self.only
            .get_or_init(|| only_text(&self.entry.pattern))
            .as_deref()
            == Some(text)
    }

    /// Whether this entry admits `text`. An entry that does not compile (over the size limit)
    /// admits nothing and is logged; `hookd check` reports it as an error.
    fn admits(&self, text: &str) -> bool {
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
fn literal_prefix(pattern: &str) -> String {
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

/// Allow-lists per mode, each compiled once, on its first verdict (a dispatch that runs no
/// command never pays for compiling).
pub struct Gate {
    /// Shared with the gates [`Gate::naming`] makes: compiled once for all of them.
    lists: std::sync::Arc<Vec<(Mode, OnceLock<Vec<Compiled>>)>>,
    allow: AllowLists,
    allow_file: String,
    /// Entries of a project that is not trusted: they admit nothing, but a command one of them
    /// would admit is refused with the hint to review and trust, not to add an entry.
    untrusted: Vec<AllowEntry>,
}

impl fmt::Debug for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gate")
            .field("allow_file", &self.allow_file)
            .finish_non_exhaustive()
    }
}

impl Gate {
    /// Prepare the lists; nothing is compiled yet.
    pub fn new(allow: &AllowLists, allow_file: impl Into<String>) -> Gate {
        Gate {
            lists: std::sync::Arc::new(
                Mode::ALL
                    .into_iter()
                    .map(|mode| (mode, OnceLock::new()))
                    .collect(),
            ),
            allow: allow.clone(),
            allow_file: allow_file.into(),
            untrusted: Vec::new(),
        }
    }

    /// The same gate, knowing the allow entries of an untrusted project (which it ignores):
    /// a command one of them admits gets the hint to trust the project.
    pub fn with_untrusted(mut self, entries: &[AllowEntry]) -> Gate {
        self.untrusted = entries.to_vec();
        self
    }

    /// The same gate (its lists compiled once, for both), whose hints name `allow_file` as the
    /// file to edit: for a user's hook, the user's own `config.yaml`, not the project's.
    pub fn naming(&self, allow_file: impl Into<String>) -> Gate {
        Gate {
            lists: self.lists.clone(),
            allow: self.allow.clone(),
            allow_file: allow_file.into(),
            untrusted: self.untrusted.clone(),
        }
    }

    fn list(&self, mode: Mode) -> &[Compiled] {
        self.lists
            .iter()
            .find(|(m, _)| *m == mode)
            .map(|(_, list)| {
                list.get_or_init(|| {
                    self.allow
                        .for_mode(mode)
                        .cloned()
                        .map(Compiled::new)
                        .collect()
                })
            })
            .map_or(&[], Vec::as_slice)
    }

    /// Decide whether `command` may run in `mode`, as hookd runs it: one simple command,
    /// without a shell.
    pub fn verdict(&self, command: &str, mode: Mode) -> Verdict {
        match parse::parse(command) {
            Ok(p) => self.judge(p, mode),
            Err(r) => {
                let hint = r.reason.advice().to_string();
                Verdict::Denied(Denied {
                    reason: r.reason,
                    detail: r.detail,
                    hint,
                })
            }
        }
    }

    /// Decide whether the model's `command` may run in `mode`, as the agent's shell runs it:
    /// every simple command of its lists and pipelines must be admitted on its own.
    pub fn model_verdict(&self, command: &str, mode: Mode) -> ModelVerdict {
        let whole = |r: parse::Refusal| ModelVerdict {
            parts: Vec::new(),
            denied: Some(Denied {
                hint: model_advice(r.reason).to_string(),
                reason: r.reason,
                detail: r.detail,
            }),
        };
        let pieces = match compound::parse_parts(command) {
            Ok(p) => p,
            Err(r) => return whole(r),
        };
        let several = pieces.len() > 1;
        let mut cross = Ok(());
        if several {
            let parsed: Option<Vec<&parse::Parsed>> =
                pieces.iter().map(|(_, p)| p.as_ref().ok()).collect();
            if let Some(parsed) = parsed {
                cross = compound::cross_check(command, &parsed);
            }
        }
        let mut parts = Vec::with_capacity(pieces.len());
        let mut denied = None;
        for (piece, parsed) in pieces {
            let verdict = match parsed {
                Ok(p) => self.judge(p, mode),
                Err(r) => Verdict::Denied(Denied {
                    hint: model_advice(r.reason).to_string(),
                    reason: r.reason,
                    detail: if several {
                        format!("in `{}`: {}", piece.text, r.detail)
                    } else {
                        r.detail
                    },
                }),
            };
            if let (None, Verdict::Denied(d)) = (&denied, &verdict) {
                denied = Some(d.clone());
            }
            parts.push(Part {
                joint: piece.joint.map(compound::Joint::as_str),
                text: piece.text,
                verdict,
            });
        }
        // A link made by one part would change what a later part's paths resolve to, after
        // the gate resolved them: such a part must run on its own.
        if let Some(i) = parts
            .iter()
            .take(parts.len().saturating_sub(1))
            .position(|p| matches!(&p.verdict, Verdict::Allowed(a) if makes_links(&a.argv)))
        {
            let d = Denied {
                reason: DenyReason::DangerousArgument,
                detail: format!(
                    "`{}` makes a symbolic link that later parts of the same command would go through unchecked; run it on its own",
                    parts[i].text
                ),
                hint: "a command that makes links must be a call of its own, so the next call is judged with the link in place".into(),
            };
            if denied.is_none() {
                denied = Some(d.clone());
            }
            parts[i].verdict = Verdict::Denied(d);
        }
        if let (None, Err(r)) = (&denied, cross) {
            denied = Some(Denied {
                hint: model_advice(r.reason).to_string(),
                reason: r.reason,
                detail: r.detail,
            });
        }
        ModelVerdict { parts, denied }
    }

    /// Match one vetted simple command against the mode's allow-list.
    fn judge(&self, parsed: parse::Parsed, mode: Mode) -> Verdict {
        self.judge_at(parsed, mode, 0)
    }

    /// [`Gate::judge`] for a command `depth` wrappers deep.
    fn judge_at(&self, parsed: parse::Parsed, mode: Mode, depth: usize) -> Verdict {
        let Some(compiled) = self
            .list(mode)
            .iter()
            .find(|c| c.admits(&parsed.match_text))
        else {
            return self.not_allowlisted(&parsed.match_text, mode);
        };
        let entry = &compiled.entry;
        // Most programs are neither in the option table nor wrappers: nothing more to ask.
        let program = parsed.argv[0].rsplit('/').next().unwrap_or_default();
        if !options::watches(program) && !wrappers::is_wrapper(program) {
            return Verdict::Allowed(Allowed {
                argv: parsed.argv,
                entry: entry.clone(),
            });
        }
        // The entry is this command, as written (`find . -delete`), suggested or escaped.
        let exact = entry.pattern == parsed.match_text
            || entry.pattern == suggested_entry(&parsed.match_text)
            || compiled.is_exactly(&parsed.match_text);
        if let Some(danger) = options::danger(&parsed.argv) {
            let named = danger
                .spelled
                .is_some_and(|spelled| entry.pattern.contains(spelled));
            if !exact && !named {
                return Verdict::Denied(Denied {
                    reason: DenyReason::DangerousArgument,
                    // The model reads `detail`: it says what is refused, not which entry
                    // matched (the operator's hint names it).
                    detail: danger.detail(),
                    hint: format!(
                        "entry `{}` matched but is broad; {}; add `{}` to tools.bash.mode.{mode}.allow in {}",
                        entry.pattern,
                        DenyReason::DangerousArgument.advice(),
                        yaml_quote(&suggested_entry(&parsed.match_text)),
                        self.allow_file
                    ),
                });
            }
        }
        if !exact {
            if let Some(denied) = self.wrapped(&parsed, entry, mode, depth) {
                return Verdict::Denied(denied);
            }
        }
        Verdict::Allowed(Allowed {
            argv: parsed.argv,
            entry: entry.clone(),
        })
    }

    /// Why the command a wrapper runs may not run (`timeout 5 curl x` under `^timeout( .*)?$`):
    /// the inner command faces the gate as a command of its own, variables `env` sets must be
    /// harmless or named by the wrapper's entry, and a wrapper whose command cannot be
    /// determined is refused. `None` when it may run (or is no wrapper).
    fn wrapped(
        &self,
        parsed: &parse::Parsed,
        entry: &AllowEntry,
        mode: Mode,
        depth: usize,
    ) -> Option<Denied> {
        const MOST_WRAPPERS: usize = 8;
        let refused = |detail: String| Denied {
            reason: DenyReason::DangerousArgument,
            detail,
            hint: format!(
                "entry `{}` admits a program that runs another; {}",
                entry.pattern,
                DenyReason::DangerousArgument.advice()
            ),
        };
        let (at, appended, sets) = match wrappers::inner(&parsed.argv) {
            wrappers::Inner::None => return None,
            wrappers::Inner::Unknown(why) => return Some(refused(why)),
            wrappers::Inner::At { .. } if depth >= MOST_WRAPPERS => {
                return Some(refused("too many wrappers in a row".into()))
            }
            wrappers::Inner::At { at, appended, sets } => (at, appended, sets),
        };
        if let Some(name) = sets
            .iter()
            .find(|n| !wrappers::harmless_variable(n) && !entry.pattern.contains(&format!("{n}=")))
        {
            return Some(Denied {
                reason: DenyReason::Assignment,
                detail: format!(
                    "`{}` sets {name}, which can change what the command runs",
                    parsed.argv[0]
                ),
                hint: format!(
                    "entry `{}` admits a program that sets variables; only an entry that names `{name}=` admits setting it",
                    entry.pattern
                ),
            });
        }
        let inner = match parsed.tail(at) {
            Ok(inner) => inner,
            Err(r) => return Some(refused(format!("the command it runs: {}", r.detail))),
        };
        let shown = inner.match_text.clone();
        if appended {
            // xargs adds words from its input: the inner command's entry must admit it with
            // any words after it, so probes of words a narrow entry would not admit must pass.
            let probes = [" x", " -rf /", " --output=/etc/passwd"];
            let open = probes.iter().all(|probe| {
                self.list(mode)
                    .iter()
                    .any(|c| c.admits(&format!("{}{probe}", inner.match_text)))
            });
            if !open {
                return Some(refused(format!(
                    "`{shown}` would get words from input the gate cannot see, and not every word is admitted after it"
                )));
            }
        }
        match self.judge_at(inner, mode, depth + 1) {
            Verdict::Allowed(_) => None,
            Verdict::Denied(d) => Some(Denied {
                reason: d.reason,
                detail: format!(
                    "the command `{}` runs, `{shown}`: {}",
                    parsed.argv[0], d.detail
                ),
                hint: d.hint,
            }),
        }
    }

    fn not_allowlisted(&self, text: &str, mode: Mode) -> Verdict {
        let detail = format!("`{text}` is not on the allow-list for mode `{mode}`");
        if let Some(e) = self.untrusted.iter().find(|e| {
            (e.list == Mode::All || e.list == mode)
                && compile_entry(&e.pattern).is_ok_and(|re| re.is_match(text))
        }) {
            return Verdict::Denied(Denied {
                reason: DenyReason::NotAllowlisted,
                detail,
                hint: format!(
                    "the project's entry `{}` ({}) would admit it, but the project is not trusted (never, or changed since): review it with `hookd check`, then run `hookd trust`",
                    e.pattern, e.origin
                ),
            });
        }
        let entry = suggested_entry(text);
        let suggestion = yaml_quote(&entry);
        // The variable splits on commas and newlines: an entry holding one cannot go there.
        let variable = if entry.contains([',', '\n']) {
            ""
        } else {
            ", or append it with INFER_TOOLS_BASH_ALLOW_APPEND"
        };
        let near = self
            .near_miss(text, mode)
            .map(|n| format!("; {n}"))
            .unwrap_or_default();
        let or_all = if mode == Mode::All {
            ""
        } else {
            " (or tools.bash.mode.all.allow)"
        };
        Verdict::Denied(Denied {
            reason: DenyReason::NotAllowlisted,
            detail,
            hint: format!(
                "to allow exactly this command, add {suggestion} to tools.bash.mode.{mode}.allow\
                 {or_all} in {}{variable}{near}",
                self.allow_file
            ),
        })
    }

    /// The entry that came closest to admitting `text`, for the operator: one for the same
    /// program that matches the start of the command (entries match the whole of it), or else
    /// the first one for the same program. Only those entries are compiled, and only here.
    fn near_miss(&self, text: &str, mode: Mode) -> Option<String> {
        let program = text.split(' ').next()?;
        let same_program: Vec<&AllowEntry> = self
            .list(mode)
            .iter()
            .filter(|c| c.prefix.split(' ').next() == Some(program))
            .map(|c| &c.entry)
            .collect();
        let start_of = |e: &AllowEntry| {
            // Without its end anchor, to see how far it gets.
            let body = lint::strip_anchors(&e.pattern).0;
            standalone(body).ok()?;
            let re = regex::RegexBuilder::new(&format!(r"\A(?s:{body})"))
                .size_limit(1 << 20)
                .build()
                .ok()?;
            re.find(text).map(|m| m.as_str().to_string())
        };
        if let Some((e, start)) = same_program
            .iter()
            .find_map(|e| start_of(e).filter(|s| !s.is_empty()).map(|s| (e, s)))
        {
            return Some(format!(
                "entry `{}` ({}) came closest: it matches `{start}` but not the rest, and an entry admits a command only if it matches all of it",
                e.pattern, e.origin
            ));
        }
        same_program.first().map(|e| {
            format!(
                "entry `{}` ({}) is for `{program}` but does not admit these arguments",
                e.pattern, e.origin
            )
        })
    }
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
fn yaml_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn entry_errors_are_typed_and_say_what_in_one_line() {
        let e = compile_entry("^git (status").unwrap_err();
        assert!(matches!(e, EntryError::Syntax(_)), "{e:?}");
        assert_eq!(e.what(), "unclosed group");
        // Valid only inside the anchors' group: refused on its own.
        let e = compile_entry("a)|(.*").unwrap_err();
        assert_eq!(e.what(), "unopened group");
        // Parses as a pattern, fails in translation (a Unicode class that does not exist).
        let e = compile_entry(r"\p{NoSuchScript}").unwrap_err();
        assert_eq!(e.what(), "Unicode property not found");
        let e = compile_entry("(a{1000}){1000}").unwrap_err();
        assert!(
            matches!(e, EntryError::TooBig { limit } if limit == ENTRY_SIZE_LIMIT),
            "{e:?}"
        );
    }

    /// Issue 32, item 8: UNRESTRICTED is what the gate lets through, not what fixed probes
    /// match: a broad entry caught by its literal end, no alarm for what the gate refuses.
    #[test]
    fn unrestricted_is_what_the_gate_lets_through() {
        assert_eq!(
            unrestricted_probe("^.* --version$").as_deref(),
            Some("rm -rf / --version")
        );
        assert_eq!(
            unrestricted_probe("^git .* main$").as_deref(),
            Some("git push --force main")
        );
        assert_eq!(unrestricted_probe(".*").as_deref(), Some("rm -rf /"));
        for quiet in [
            "^find( .*)?$",
            "^env( .*)?$",
            "^xargs( .*)?$",
            "^timeout( .*)?$",
            "^git status$",
            "^echo .*",
            "^cargo test( .*)?$",
        ] {
            assert_eq!(unrestricted_probe(quiet), None, "{quiet}");
        }
        assert_eq!(literal_suffix(".* --version"), " --version");
        assert_eq!(literal_suffix("git .* main\\.rs"), " main.rs");
        assert_eq!(literal_suffix("a( .*)?"), "");
    }

    #[test]
    fn literal_prefixes() {
        for (pattern, prefix) in [
            ("^git status$", "git status"),
            ("git (status|diff)", "git "),
            (r"^\./scripts/check\.sh$", "./scripts/check.sh"),
            ("^cargo tests?$", "cargo test"),
            ("^a|^b", ""),
            ("(?i)git", ""),
            (r"\Agofmt -l \.", "gofmt -l ."),
            (r"^a\d", "a"),
            ("^npm run test:.*", "npm run test:"),
            ("x{2}", ""),
            ("^tool1 (build|test)( --[a-z-]+)*$", "tool1 "),
            ("^a[|]b", "a"),
            ("^a[]|]b|c", ""),
            ("^a[^]|]b", "a"),
            (r"^a\|b", "a|b"),
            (r"^a\\|b", ""),
            ("^(?x)a # (\n|b", ""),
        ] {
            assert_eq!(literal_prefix(pattern), prefix, "{pattern}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 5000, ..ProptestConfig::default() })]

        /// Whatever an entry matches starts with its literal prefix: the prefix only ever saves
        /// a compile, never loses a match.
        #[test]
        fn every_match_starts_with_the_literal_prefix(
            pattern in r"\^?([ab .|()?*+{}\[\]\\^$#]|\\[.ab |\[\]]|\(\?[ix]\)|\[\^?\]?|\n){0,10}",
            text in "[ab .]{0,6}",
        ) {
            if let Ok(re) = compile_entry(&pattern) {
                if re.is_match(&text) {
                    let prefix = literal_prefix(&pattern);
                    prop_assert!(text.starts_with(&prefix), "{pattern:?} matches {text:?} but prefix is {prefix:?}");
                }
            }
        }
    }
}
