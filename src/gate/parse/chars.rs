//! Command text read character by character, before any grammar: characters no command may
//! contain, named-descriptor redirections, and the prefilter's walk through the quoting.

use super::vet::keyword;
use super::{refuse, Refusal};
use crate::gate::DenyReason;

/// Characters no command may contain, wherever they are: controls and invisible or
/// look-alike characters that make what a reviewer reads differ from what runs.
pub fn forbidden_char(c: char) -> bool {
    match c {
        '\t' | '\n' => false,
        c if c.is_control() => true,
        c if c.is_ascii() => false,
        c if hidden_unicode(c) => true,
        '\u{00A0}'
        | '\u{00AD}'
        | '\u{034F}'
        | '\u{061C}'
        | '\u{115F}'
        | '\u{1160}'
        | '\u{17B4}'
        | '\u{17B5}'
        | '\u{180E}'
        | '\u{2000}'..='\u{200F}'
        | '\u{2028}'..='\u{202F}'
        | '\u{205F}'..='\u{206F}'
        | '\u{2800}'
        | '\u{3000}'
        | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{FEFF}'
        | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}'
        | '\u{E0000}'..='\u{E007F}' => true,
        _ => false,
    }
}

/// Unicode's own classes of characters that show nothing or reorder what is shown: format
/// characters (Cf: U+1D173, U+180E, U+0600, U+13430, U+2066, …), every separator (Z*: U+1680
/// and the other non-ASCII spaces, line and paragraph separators), default-ignorable code points
/// (variation selectors U+E0100…, Mongolian free variation selectors), private-use characters
/// and code points not assigned yet (a later Unicode may make them format characters). Taken
/// from the regex crate's Unicode tables (Unicode 16.0) rather than a hand list, which missed
/// U+1D173 and others; only non-ASCII characters get here.
fn hidden_unicode(c: char) -> bool {
    static HIDDEN: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"[\p{Cf}\p{Z}\p{Default_Ignorable_Code_Point}\p{Co}\p{Cn}]").ok()
    });
    let mut buf = [0u8; 4];
    match &*HIDDEN {
        Some(re) => re.is_match(c.encode_utf8(&mut buf)),
        None => true, // cannot happen (a constant pattern); fail closed if it did
    }
}

/// A named-descriptor redirection, `{name}>…` or `{name}<…`: bash assigns a new descriptor to
/// the variable `name` where the grammar sees a word. Refused wherever it appears, quoted or
/// not, since that costs nothing real commands need.
pub(super) fn named_descriptor(command: &str) -> Option<&str> {
    let b = command.as_bytes();
    for (i, _) in command.match_indices('{') {
        if i > 0 && !b" \t;&|()".contains(&b[i - 1]) {
            continue;
        }
        let rest = &b[i + 1..];
        let len = rest
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        if len == 0 || rest[0].is_ascii_digit() {
            continue;
        }
        if rest.get(len) == Some(&b'}') && matches!(rest.get(len + 1), Some(b'<' | b'>')) {
            return Some(&command[i..i + len + 3]);
        }
    }
    None
}

/// Refuse, before the grammar sees them, constructs that are always denied and that can make a
/// backtracking grammar slow: parentheses outside quotes (subshells, functions, `$(`, `<(`,
/// extglobs; nested ones made brush-parser take seconds, found by fuzzing), unquoted glob
/// characters (`[`, `*`, `?`; runs of `[` and `\` were slow too), backticks, and `$(`, `${`,
/// `$[` outside single quotes. It only ever denies: whatever it lets through still faces
/// the grammar, so a mistake here can refuse too much but never admit anything.
pub(super) fn prefilter(command: &str) -> Result<(), Refusal> {
    if command.trim_start().starts_with("[[") {
        return refuse(DenyReason::Builtin, "`[[ … ]]` is a shell keyword");
    }
    keyword(command.split_whitespace().next().unwrap_or_default())?;
    let mut q = Q::None;
    let mut chars = command.chars().peekable();
    let mut prev = ' ';
    let mut digits = 0usize; // unquoted digits just before this character
    while let Some(c) = chars.next() {
        // A file-descriptor number no shell accepts (`020040000000>c` made brush-parser panic).
        if q == Q::None && matches!(c, '<' | '>') && digits > 9 {
            return refuse(
                DenyReason::Redirection,
                "a file descriptor number this large is not valid",
            );
        }
        digits = if q == Q::None && c.is_ascii_digit() {
            digits + 1
        } else {
            0
        };
        match (&q, c) {
            (Q::Single, '\'') => q = Q::None,
            (Q::Single, _) => {}
            (Q::Ansi, '\'') => q = Q::None,
            (Q::Ansi, c) if c != '\\' => {}
            (_, '\\') => {
                escaped(chars.next(), chars.peek().copied(), &q)?;
                prev = 'x'; // an escaped character is an ordinary one
                continue;
            }
            (Q::None, '\'') if prev == '$' => q = Q::Ansi,
            (Q::None, '\'') => q = Q::Single,
            (Q::None, '"') => q = Q::Double,
            (Q::Double, '"') => q = Q::None,
            (_, '`') => {
                return refuse(
                    DenyReason::Substitution,
                    "backticks substitute a command's output",
                )
            }
            (_, '$') => dollar(&q, chars.peek().copied())?,
            (Q::None, c) => unquoted(c, prev, chars.peek().copied())?,
            _ => {}
        }
        prev = c;
    }
    Ok(())
}

/// Where a reader of command text is (the prefilter, the compound splitter): outside quotes,
/// or in which kind.
#[derive(PartialEq)]
pub(in crate::gate) enum Quote {
    None,
    Single,
    Double,
    /// `$'…'`: ANSI-C quoting, where `\'` does not end the string.
    Ansi,
}

use Quote as Q;

/// A backslash and what it escapes (`escaped`, followed by `then`), in quoting state `q`.
fn escaped(escaped: Option<char>, then: Option<char>, q: &Q) -> Result<(), Refusal> {
    if escaped == Some('\n') {
        return refuse(
            DenyReason::Operator,
            "a backslash-newline continues the line",
        );
    }
    // bash reads `\$'…'` as `$` then a plain quote; brush-parser as ANSI-C quoting. Parsers
    // that disagree on where a quote ends must not both be trusted.
    if escaped == Some('$') && matches!(then, Some('\'' | '"')) && *q != Q::Ansi {
        return refuse(
            DenyReason::UnbalancedQuotes,
            "`\\$` before a quote is read differently by different shells; quote the `$` as '$'",
        );
    }
    Ok(())
}

/// A `$` outside single quotes, followed by `next`: substitutions and expansions.
fn dollar(q: &Q, next: Option<char>) -> Result<(), Refusal> {
    match next {
        Some('(' | '[') => refuse(
            DenyReason::Substitution,
            "`$(…)`, `$((…))` or `$[…]` substitutes before the command runs",
        ),
        // `$$`, `$NAME`, `$1`, `$@`…: an expansion, whatever follows. Refusing it here also
        // keeps `$$'…'` from being mistaken for ANSI-C quoting.
        Some(n)
            if matches!(q, Q::None | Q::Double)
                && (n.is_ascii_alphanumeric() || "$_@*#?!-".contains(n)) =>
        {
            refuse(DenyReason::Expansion, "`$NAME` or `$$` expands a variable")
        }
        Some('{') => refuse(DenyReason::Expansion, "`${…}` expands a variable"),
        _ => Ok(()),
    }
}

/// A character outside quotes (after `prev`, before `next`) that the shell reads as syntax.
fn unquoted(c: char, prev: char, next: Option<char>) -> Result<(), Refusal> {
    match c {
        // A comment ends the command for a shell: nothing after it is quoted or parsed. It
        // starts wherever a word does, after a redirection operator too (`>#x`).
        '#' if matches!(prev, ' ' | '\t' | '\n' | '<' | '>') => refuse(DenyReason::Comment, "`#` starts a comment"),
        '\n' => refuse(DenyReason::Operator, "a newline outside quotes separates commands"),
        ';' => refuse(DenyReason::Operator, "`;` separates commands"),
        '|' if prev != '>' => refuse(DenyReason::Operator, "`|` or `|&` pipes commands"),
        '&' if prev != '>' && next != Some('>') => {
            refuse(DenyReason::Operator, "`&`, `&&` run in the background or chain commands")
        }
        '<' if next == Some('<') => {
            refuse(DenyReason::Heredoc, "a here-document or here-string (`<<`, `<<<`)")
        }
        '(' if matches!(prev, '<' | '>') => {
            refuse(DenyReason::Substitution, "process substitution `<(…)` or `>(…)`")
        }
        '~' if matches!(prev, ' ' | '\t' | '=' | ':') => {
            refuse(DenyReason::Expansion, "`~` expands to a home directory; quote it")
        }
        '[' | '*' | '?' => refuse(
            DenyReason::Glob,
            format!("unquoted `{c}` is a glob pattern; quote it to pass it literally"),
        ),
        '(' | ')' => refuse(
            DenyReason::Compound,
            "unquoted parentheses: a subshell, function or pattern; quote them to pass them literally",
        ),
        _ => Ok(()),
    }
}
