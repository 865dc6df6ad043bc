//! The gate: a command runs only if it is one plain command and an allow entry admits it.
//!
//! `Gate::verdict` is the one decision used for hook commands (and, later, for commands a
//! model proposes). A denial is a value with a category and a hint, never an error.

mod parse;
pub(crate) mod protect;

use std::fmt;
use std::sync::OnceLock;

use regex::{Regex, RegexSet};
use serde::{Deserialize, Serialize};

use crate::config::{AllowEntry, AllowLists, Mode};
pub use parse::{forbidden_char, MAX_COMMAND_BYTES};

/// Why a command was denied. Serialized as the `reason` of `hook_command_skipped` events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DenyReason {
    /// A plain command that no allow entry admits.
    #[serde(rename = "not_allowlisted")]
    NotAllowlisted,
    /// `;`, `&&`, `||`, `|`, `&`, or a newline outside quotes.
    Operator,
    /// `$( )`, backticks, `<( )`, `$(( ))`, `$[ ]`.
    Substitution,
    /// `$VAR`, `${…}`, `$'…'`, `$"…"`, `~`.
    Expansion,
    /// Unquoted `*`, `?`, `[`, or brace expansion.
    Glob,
    /// A redirection other than the harmless output ones.
    Redirection,
    /// Here-documents and here-strings.
    Heredoc,
    /// Subshells, groups, loops, conditionals, functions.
    Compound,
    /// `VAR=value cmd`.
    Assignment,
    /// A shell builtin or keyword as the program.
    Builtin,
    /// `#` outside quotes.
    Comment,
    /// A control, format (Unicode Cf) or invisible character.
    ControlCharacter,
    /// A quote that is never closed.
    UnbalancedQuotes,
    /// Longer than `MAX_COMMAND_BYTES`.
    TooLong,
    /// Nothing to run.
    Empty,
    /// `find` with an action that runs commands or writes files, admitted only by a broad entry.
    DangerousArgument,
    /// Anything the gate does not fully understand.
    Unparsable,
    /// The hook comes from a project whose `.infer/` is not trusted (not a gate verdict: the
    /// command was not even looked at).
    Untrusted,
    /// A tool call of the model would write, or a command it proposed names, one of hookd's
    /// own files (configuration, trust store, state, installed agent settings).
    ProtectedPath,
}

impl DenyReason {
    /// The snake_case name used in events and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            DenyReason::NotAllowlisted => "not_allowlisted",
            DenyReason::Operator => "operator",
            DenyReason::Substitution => "substitution",
            DenyReason::Expansion => "expansion",
            DenyReason::Glob => "glob",
            DenyReason::Redirection => "redirection",
            DenyReason::Heredoc => "heredoc",
            DenyReason::Compound => "compound",
            DenyReason::Assignment => "assignment",
            DenyReason::Builtin => "builtin",
            DenyReason::Comment => "comment",
            DenyReason::ControlCharacter => "control_character",
            DenyReason::UnbalancedQuotes => "unbalanced_quotes",
            DenyReason::TooLong => "too_long",
            DenyReason::Empty => "empty",
            DenyReason::DangerousArgument => "dangerous_argument",
            DenyReason::Unparsable => "unparsable",
            DenyReason::Untrusted => "untrusted",
            DenyReason::ProtectedPath => "protected_path",
        }
    }

    /// The sentence that tells a user what to do instead.
    pub(crate) fn advice(self) -> &'static str {
        match self {
            DenyReason::NotAllowlisted => "",
            DenyReason::Operator => "hookd runs exactly one command, without a shell; put a pipeline or a sequence in a script and allow the script by its exact path",
            DenyReason::Substitution => "nothing is substituted before a command runs; put the logic in a script and allow the script by its exact path",
            DenyReason::Expansion => "variables and `~` are not expanded; write the value literally, or single-quote a literal `$`",
            DenyReason::Glob => "patterns are not expanded; quote the argument to pass it literally, or list the files",
            DenyReason::Redirection => "output is captured for the event anyway; only `2>&1`, `>/dev/null`, `2>/dev/null` and `&>/dev/null` are accepted (and dropped)",
            DenyReason::Heredoc => "here-documents need a shell; pass the text as an argument or put it in a script",
            DenyReason::Compound => "put the logic in a script and allow the script by its exact path",
            DenyReason::Assignment => "environment prefixes are not applied; set the variable in a script, or in the environment hookd runs in",
            DenyReason::Builtin => "hookd executes programs directly, so shell builtins do not exist; use a program or a script",
            DenyReason::Comment => "remove the comment, or quote the `#`",
            DenyReason::ControlCharacter => "remove the character; control, format and invisible characters are never accepted, so what is reviewed is what runs",
            DenyReason::UnbalancedQuotes => "close the quote",
            DenyReason::TooLong => "put the command in a script and allow the script",
            DenyReason::Empty => "write the program and its arguments",
            DenyReason::DangerousArgument => "`find` actions that run commands or write files are admitted only by an entry that allows this exact command",
            DenyReason::Unparsable => "simplify the command to one program with plain or quoted arguments",
            DenyReason::Untrusted => "review the project's hooks with `hookd check`, then run `hookd trust` in the project",
            DenyReason::ProtectedPath => "with gate_shell_tools on, the model may not write or name hookd's configuration, trust store, state or the agents' hook settings; edit the file yourself, outside the agent",
        }
    }
}

impl fmt::Display for DenyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A command the gate admitted: exactly what will run, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Allowed {
    /// Program and arguments, executed directly (no shell).
    pub argv: Vec<String>,
    /// The entry that admitted it.
    pub entry: AllowEntry,
}

/// A command the gate refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
#[non_exhaustive]
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

/// Wrap an entry the way the agent CLI does: anchored over the whole command.
pub(crate) fn anchored(entry: &str) -> String {
    format!(r"\A(?s:{entry})\z")
}

/// Compile one entry. Errors are the regex crate's message.
pub fn compile_entry(entry: &str) -> Result<Regex, String> {
    regex::RegexBuilder::new(&anchored(entry))
        .size_limit(1 << 20)
        .build()
        .map_err(|e| e.to_string())
}

/// The words a command would run with (decoded), if the gate can parse it.
pub(crate) fn argv_of(command: &str) -> Option<Vec<String>> {
    parse::parse(command).ok().map(|p| p.argv)
}

/// Check an entry's syntax without compiling it (cheap enough for every configuration load).
pub(crate) fn validate_entry(entry: &str) -> Result<(), String> {
    regex_syntax::ast::parse::Parser::new()
        .parse(&anchored(entry))
        .map(|_| ())
        .map_err(|e| e.to_string())
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

/// The first dangerous probe `entry` admits, if any (`None` as well for an entry that does not
/// compile: that is reported as an error of its own).
pub fn unrestricted_probe(entry: &str) -> Option<&'static str> {
    let re = compile_entry(entry).ok()?;
    DANGEROUS_PROBES.iter().copied().find(|p| re.is_match(p))
}

/// True for `.*` and its variants: entries that admit any of [`DANGEROUS_PROBES`].
pub fn is_unrestricted(entry: &str) -> bool {
    unrestricted_probe(entry).is_some()
}

struct ModeList {
    set: RegexSet,
    entries: Vec<AllowEntry>,
}

impl ModeList {
    /// Compile a mode's entries as one set. An entry that fails to compile (over the size
    /// limit) makes the mode admit nothing and is logged: fail closed.
    fn compile(entries: Vec<AllowEntry>) -> ModeList {
        match regex::RegexSetBuilder::new(entries.iter().map(|e| anchored(&e.pattern)))
            .size_limit(1 << 24)
            .build()
        {
            Ok(set) => ModeList { set, entries },
            Err(e) => {
                tracing::error!(
                    "the allow-list cannot be compiled ({e}); nothing is allowed in this mode"
                );
                ModeList {
                    set: RegexSet::empty(),
                    entries: Vec::new(),
                }
            }
        }
    }
}

/// Allow-lists per mode, each compiled once, on its first verdict (a dispatch that runs no
/// command never pays for compiling).
pub struct Gate {
    lists: Vec<(Mode, Vec<AllowEntry>, OnceLock<ModeList>)>,
    allow_file: String,
}

impl fmt::Debug for Gate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gate")
            .field("allow_file", &self.allow_file)
            .finish_non_exhaustive()
    }
}

const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

impl Gate {
    /// Prepare the lists; nothing is compiled yet.
    pub fn new(allow: &AllowLists, allow_file: impl Into<String>) -> Gate {
        let lists = Mode::ALL
            .into_iter()
            .map(|mode| {
                (
                    mode,
                    allow.for_mode(mode).cloned().collect(),
                    OnceLock::new(),
                )
            })
            .collect();
        Gate {
            lists,
            allow_file: allow_file.into(),
        }
    }

    fn list(&self, mode: Mode) -> Option<&ModeList> {
        self.lists
            .iter()
            .find(|(m, _, _)| *m == mode)
            .map(|(_, entries, compiled)| {
                compiled.get_or_init(|| ModeList::compile(entries.clone()))
            })
    }

    /// Decide whether `command` may run in `mode`.
    pub fn verdict(&self, command: &str, mode: Mode) -> Verdict {
        let parsed = match parse::parse(command) {
            Ok(p) => p,
            Err(r) => {
                let hint = r.reason.advice().to_string();
                return Verdict::Denied(Denied {
                    reason: r.reason,
                    detail: r.detail,
                    hint,
                });
            }
        };
        let Some(list) = self.list(mode) else {
            return self.not_allowlisted(&parsed.match_text, mode);
        };
        let Some(index) = list.set.matches(&parsed.match_text).into_iter().next() else {
            return self.not_allowlisted(&parsed.match_text, mode);
        };
        let entry = &list.entries[index];
        let exact = entry.pattern == parsed.match_text
            || entry.pattern == suggested_entry(&parsed.match_text);
        let program = parsed.argv[0].rsplit('/').next().unwrap_or_default();
        if !exact && program == "find" {
            if let Some(action) = parsed.argv[1..]
                .iter()
                .find(|a| FIND_ACTIONS.contains(&a.as_str()))
            {
                return Verdict::Denied(Denied {
                    reason: DenyReason::DangerousArgument,
                    // The model reads `detail`: it says what is refused, not which entry
                    // matched (the operator's hint names it).
                    detail: format!(
                        "`find {action}` runs commands or writes files, and only an entry for this exact command admits it"
                    ),
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
        Verdict::Allowed(Allowed {
            argv: parsed.argv,
            entry: entry.clone(),
        })
    }

    fn not_allowlisted(&self, text: &str, mode: Mode) -> Verdict {
        let entry = suggested_entry(text);
        let suggestion = yaml_quote(&entry);
        // The variable splits on commas and newlines: an entry holding one cannot go there.
        let variable = if entry.contains([',', '\n']) {
            ""
        } else {
            ", or append it with INFER_TOOLS_BASH_ALLOW_APPEND"
        };
        Verdict::Denied(Denied {
            reason: DenyReason::NotAllowlisted,
            detail: format!("`{text}` is not on the allow-list for mode `{mode}`"),
            hint: format!(
                "to allow exactly this command, add {suggestion} to tools.bash.mode.{mode}.allow \
                 (or tools.bash.mode.all.allow) in {}{variable}",
                self.allow_file
            ),
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
