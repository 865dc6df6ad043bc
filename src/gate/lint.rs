//! Allow-list lint: entries that cannot mean what their author meant, each with the fix.
//!
//! The gate matches an entry against the whole command (`\A(?s:ENTRY)\z`), as the words were
//! written, joined by one space. Authors used to prefix matching or to shell globs write
//! entries that admit less (`^gofmt` is not a prefix), more (`.` is any character) or nothing
//! (`^make; make test` is never one simple command) than they think. `hookd check` prints these.

use regex_syntax::ast::{self, Ast};

use super::parse::SHELL_ONLY;
use super::{compile_entry, literal_prefix, unrestricted_probe};

/// What is wrong with an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LintKind {
    /// Literal text without `$`, read as a prefix by its author; it admits only that command.
    Prefix,
    /// A `.` matching any character where a literal dot was meant.
    Dot,
    /// No command the gate can admit could ever match it.
    Unreachable,
    /// It admits one of the dangerous probes.
    Unrestricted,
    /// It admits a wrapper (`timeout`, `env`, `xargs`): a note on what the gate does with the
    /// command behind it.
    Wrapper,
    /// It admits an interpreter (`python3`, `bash`) with arguments: the program text or script
    /// it runs is not read by the gate.
    Interpreter,
}

/// Programs that run program text or a script file they are given.
const INTERPRETERS: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "python",
    "python3",
    "perl",
    "ruby",
    "node",
    "deno",
    "bun",
    "php",
    "lua",
    "Rscript",
    "pwsh",
    "osascript",
    "tclsh",
    "awk",
    "gawk",
];

/// One warning on one entry: what is wrong, and the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LintWarning {
    /// Which problem.
    pub kind: LintKind,
    /// What is wrong, naming the entry's text.
    pub message: String,
    /// What to write instead.
    pub fix: String,
}

/// The warnings for one allow entry. An entry that is not a valid expression gets none here
/// (loading reports it as an error).
pub fn lint_entry(entry: &str) -> Vec<LintWarning> {
    let Ok(parsed) = ast::parse::Parser::new().parse(entry) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(w) = unreachable(entry) {
        out.push(w);
    } else if let Some(w) = prefix(entry) {
        out.push(w);
    }
    if let Some(w) = dots(entry, &parsed) {
        out.push(w);
    }
    if let Some(probe) = unrestricted_probe(entry) {
        out.push(LintWarning {
            kind: LintKind::Unrestricted,
            message: format!("it admits `{probe}`, which no restricted entry should admit"),
            fix: "replace it by entries for the exact commands needed; `hookd allow -- 'CMD'` prints one for each".into(),
        });
    } else if let Some(w) = runs_others(entry) {
        out.push(w);
    }
    out
}

/// An entry whose program runs another program (a wrapper) or program text (an interpreter),
/// with arguments the entry leaves open.
fn runs_others(entry: &str) -> Option<LintWarning> {
    let (body, ended) = strip_anchors(entry);
    let start = literal_prefix(body);
    let program = start.split(' ').next().filter(|p| !p.is_empty())?;
    // `^python3 scripts/gen\.py$` names its script: nothing left open.
    if ended && unescape(body).is_some() {
        return None;
    }
    if super::wrappers::is_wrapper(program) {
        return Some(LintWarning {
            kind: LintKind::Wrapper,
            message: format!(
                "it admits `{program}`, which runs another command: the gate judges that command on its own against the allow-list (`{program} … cargo test` also needs an entry for `cargo test`), refuses variables that change what runs, and refuses a `{program}` whose command it cannot determine"
            ),
            fix: "nothing to do; list the wrapped commands' own entries".into(),
        });
    }
    if INTERPRETERS.contains(&program) {
        return Some(LintWarning {
            kind: LintKind::Interpreter,
            message: format!(
                "it admits `{program}` with open arguments: the script or program text it runs can do anything, and the gate does not read it"
            ),
            fix: format!(
                "allow the exact scripts (`^{program} scripts/gen\\.py$`); the trust review fingerprints scripts inside the project"
            ),
        });
    }
    None
}

/// The entry without a leading `^`/`\A` and a trailing `$`/`\z`, and whether it had the end.
pub(super) fn strip_anchors(entry: &str) -> (&str, bool) {
    let body = entry
        .strip_prefix('^')
        .or_else(|| entry.strip_prefix("\\A"))
        .unwrap_or(entry);
    match body.strip_suffix("\\z").or_else(|| {
        body.strip_suffix('$')
            .filter(|b| !b.ends_with('\\') || b.ends_with("\\\\"))
    }) {
        Some(b) => (b, true),
        None => (body, false),
    }
}

/// `^gofmt`, `git status`: literal text with no `$`. The gate anchors it anyway, so it admits
/// exactly that command and nothing with arguments, which is rarely what was meant.
fn prefix(entry: &str) -> Option<LintWarning> {
    let (body, ended) = strip_anchors(entry);
    if ended || body.is_empty() || literal_prefix(body) != unescape(body)? {
        return None;
    }
    let exact = format!("^{body}$");
    Some(LintWarning {
        kind: LintKind::Prefix,
        message: format!(
            "it reads like a prefix, but entries match the whole command: it admits only `{}` itself, never with arguments",
            unescape(body)?
        ),
        fix: format!(
            "write `{exact}` to say exactly this command, or list the arguments to allow (`^{body}( -l)?$`; `^{body}( .*)?$` admits any)"
        ),
    })
}

/// The literal text of a pattern made only of plain characters and escaped punctuation.
fn unescape(body: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next().filter(char::is_ascii_punctuation)?),
            '.' | '+' | '*' | '?' | '(' | ')' | '|' | '[' | ']' | '{' | '}' | '^' | '$' | '#' => {
                return None
            }
            c => out.push(c),
        }
    }
    Some(out)
}

/// `.` outside a repetition (`.*`, `.+`, `.?`, `.{2}` are meant as wildcards): almost always a
/// literal dot (`gofmt -w .`, `./check.sh`, `make.sh`) that admits any character there.
fn dots(entry: &str, parsed: &Ast) -> Option<LintWarning> {
    let mut spans = Vec::new();
    lone_dots(parsed, &mut spans);
    if spans.is_empty() {
        return None;
    }
    let mut fixed = entry.to_string();
    for &at in spans.iter().rev() {
        fixed.replace_range(at..at + 1, "\\.");
    }
    let mut wrongly = entry.to_string();
    for &at in spans.iter().rev() {
        wrongly.replace_range(at..at + 1, "x");
    }
    // A command it admits by accident, when the rest of the entry is plain text.
    let example = unescape(strip_anchors(&wrongly).0)
        .filter(|w| compile_entry(entry).is_ok_and(|re| re.is_match(w)))
        .map(|w| format!(" (it admits `{w}`)"))
        .unwrap_or_default();
    Some(LintWarning {
        kind: LintKind::Dot,
        message: format!("`.` matches any character, not only a dot{example}"),
        fix: format!("write `\\.` for a literal dot: `{fixed}`"),
    })
}

fn lone_dots(node: &Ast, out: &mut Vec<usize>) {
    match node {
        Ast::Dot(span) => out.push(span.start.offset),
        Ast::Repetition(_) => {}
        Ast::Group(g) => lone_dots(&g.ast, out),
        Ast::Alternation(a) => a.asts.iter().for_each(|n| lone_dots(n, out)),
        Ast::Concat(c) => c.asts.iter().for_each(|n| lone_dots(n, out)),
        _ => {}
    }
}

/// Text no admitted command contains: the entry's literal start, read as a command would be,
/// has an operator, `$` or a backtick outside quotes, a blank where words are joined by one
/// space, or a shell builtin as its program.
fn unreachable(entry: &str) -> Option<LintWarning> {
    let (body, ended) = strip_anchors(entry);
    let text = match unescape(body) {
        Some(all) => all,
        None => literal_prefix(body),
    };
    let whole = unescape(body).is_some() && ended;
    let why = never_in_a_command(&text, whole)?;
    Some(LintWarning {
        kind: LintKind::Unreachable,
        message: format!("no command can ever match it: {why}"),
        fix: "the gate admits one simple command per entry (a model's `a && b` needs an entry for `a` and one for `b`); remove or rewrite the entry, and check it with `hookd allow -- 'CMD'`".into(),
    })
}

fn never_in_a_command(text: &str, whole: bool) -> Option<String> {
    if text.starts_with(' ') {
        return Some("a command never starts with a blank".into());
    }
    if whole && text.ends_with(' ') {
        return Some("a command never ends with a blank".into());
    }
    let program = text.split(' ').next().unwrap_or_default();
    if text.contains(' ') || whole {
        if let Some(b) = SHELL_ONLY.iter().find(|b| **b == program && **b != "cd") {
            return Some(format!(
                "`{b}` is a shell builtin or keyword, which the gate never admits as a program"
            ));
        }
    }
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut prev = 'x';
    for c in text.chars() {
        if escaped {
            escaped = false;
            prev = 'x';
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '\t' | '\n' if !single && !double => {
                return Some("words are joined by one space, never a tab or newline".into())
            }
            ' ' if prev == ' ' && !single && !double => {
                return Some("words are joined by one space, never two".into())
            }
            '$' | '`' if !single => {
                return Some(format!("`{c}` is never admitted outside single quotes"))
            }
            ';' | '|' | '&' | '<' | '>' if !single && !double => {
                return Some(format!(
                    "`{c}` outside quotes is an operator or a redirection, never part of a simple command's words"
                ))
            }
            _ => {}
        }
        prev = c;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(entry: &str) -> Vec<LintKind> {
        lint_entry(entry).into_iter().map(|w| w.kind).collect()
    }

    #[test]
    fn good_entries_get_no_warning() {
        for e in [
            "^git status$",
            "^cargo (test|build)( --release)?$",
            r"^gofmt -l \.$",
            "^npm test$",
            "^git log( --oneline)?( -[0-9]+)?$",
            r"^\./scripts/check\.sh$",
            "^grep -rn '[a-z]+' src$",
            "^cd [a-z]+$",
            "^tail -[0-9]+$",
        ] {
            assert_eq!(kinds(e), [], "{e}");
        }
    }

    #[test]
    fn each_kind_is_found() {
        assert_eq!(kinds("^gofmt"), [LintKind::Prefix]);
        assert_eq!(kinds("git status"), [LintKind::Prefix]);
        assert_eq!(kinds("^gofmt -w .$"), [LintKind::Dot]);
        assert_eq!(kinds("^./check.sh$"), [LintKind::Dot]);
        assert_eq!(kinds("^make; make test$"), [LintKind::Unreachable]);
        assert_eq!(kinds("^make  test$"), [LintKind::Unreachable]);
        assert_eq!(kinds("^export PATH=.*"), [LintKind::Unreachable]);
        assert_eq!(kinds(r"^echo \$HOME$"), [LintKind::Unreachable]);
        assert_eq!(kinds("^git .*$"), [LintKind::Unrestricted]);
        // Quoted operators are words: reachable.
        assert_eq!(kinds("^grep 'a|b' src$"), []);
    }

    #[test]
    fn the_dot_warning_shows_the_fix_and_what_it_admits() {
        let w = &lint_entry("^gofmt -w .$")[0];
        assert_eq!(
            w.message,
            "`.` matches any character, not only a dot (it admits `gofmt -w x`)"
        );
        assert_eq!(w.fix, r"write `\.` for a literal dot: `^gofmt -w \.$`");
    }
}
