//! Command text -> the exact argv, or the reason it is not a single plain command.
//!
//! Two independent views must agree before anything is admitted: brush-parser's bash grammar
//! gives the structure (one simple command, its words and redirections), and a coverage check
//! proves every character of the input belongs to an admitted word, to the operator of an
//! admitted redirection, or is a blank. Whatever the grammar dropped (comments, `;`, a
//! newline) is therefore seen and denied. Words are then decoded piece by piece from an
//! explicit allow-set of piece kinds; anything else is denied.

use brush_parser::ast::{
    self, CommandPrefixOrSuffixItem as Item, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect,
};
use brush_parser::{Parser, ParserOptions};

use super::DenyReason;
use word::decode_word;

mod word;

/// The largest command the gate reads, in bytes.
pub const MAX_COMMAND_BYTES: usize = 8 * 1024;

/// A command the grammar admits: what will run, and the text allow entries are matched against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parsed {
    /// The program and its arguments, quotes removed.
    pub argv: Vec<String>,
    /// The words as written (quotes kept), joined by one space; harmless redirections dropped.
    pub match_text: String,
    /// The words as written, one per argument (`match_text` is them joined); `None` when they
    /// are `argv` itself (plain words: nothing quoted), which saves a copy on the fast path.
    pub words: Option<Vec<String>>,
}

impl Parsed {
    /// The command from word `at` on, vetted as a program a wrapper starts (`timeout 5 cargo
    /// test` → `cargo test`): without a shell, so builtins do not exist.
    pub(crate) fn tail(&self, at: usize) -> Result<Parsed, Refusal> {
        let words = self.words.as_ref().unwrap_or(&self.argv)[at..].to_vec();
        vet_program(
            Parsed {
                argv: self.argv[at..].to_vec(),
                match_text: words.join(" "),
                words: Some(words),
            },
            Runs::Hookd,
        )
    }
}

/// Why a command is not admitted, with a detail naming the offending part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub reason: DenyReason,
    pub detail: String,
}

fn refuse<T>(reason: DenyReason, detail: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal {
        reason,
        detail: detail.into(),
    })
}

/// Programs that only mean something inside a shell, or that evaluate their arguments as code.
pub(crate) const SHELL_ONLY: &[&str] = &[
    ".",
    ":",
    "[[",
    "]]",
    "{",
    "}",
    "!",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "case",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "coproc",
    "declare",
    "dirs",
    "disown",
    "do",
    "done",
    "elif",
    "else",
    "enable",
    "esac",
    "eval",
    "exec",
    "exit",
    "export",
    "fc",
    "fg",
    "fi",
    "for",
    "function",
    "getopts",
    "hash",
    "history",
    "if",
    "in",
    "jobs",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "pushd",
    "read",
    "readarray",
    "readonly",
    "return",
    "select",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "then",
    "time",
    "times",
    "trap",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "until",
    "wait",
    "while",
];

/// Redirection operators that only discard or merge output (captured anyway, so dropped).
const HARMLESS_OPERATORS: &[&str] = &[
    ">", ">>", "1>", "1>>", "2>", "2>>", "&>", "&>>", "2>&", "1>&", ">&",
];

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
fn named_descriptor(command: &str) -> Option<&str> {
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

/// Who runs a command, which decides the programs it may name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Runs {
    /// hookd itself, without a shell: shell builtins do not exist.
    Hookd,
    /// The agent's shell (a model's command, one part of it): `cd` is the one builtin admitted.
    Shell,
}

/// Parse and vet `command` as hookd would run it.
pub(crate) fn parse(command: &str) -> Result<Parsed, Refusal> {
    parse_as(command, Runs::Hookd)
}

/// What any command must pass, whole, before its words are read: not empty, not too long,
/// no control or invisible character, no named-descriptor redirection.
pub(crate) fn precheck(command: &str) -> Result<(), Refusal> {
    if command.trim().is_empty() {
        return refuse(DenyReason::Empty, "the command is empty");
    }
    if command.len() > MAX_COMMAND_BYTES {
        return refuse(
            DenyReason::TooLong,
            format!(
                "the command is {} bytes, over the limit of {MAX_COMMAND_BYTES}",
                command.len()
            ),
        );
    }
    if let Some((i, c)) = command
        .chars()
        .enumerate()
        .find(|(_, c)| forbidden_char(*c))
    {
        return refuse(
            DenyReason::ControlCharacter,
            format!(
                "character U+{:04X} at position {} is a control or invisible character",
                c as u32,
                i + 1
            ),
        );
    }

    if let Some(m) = named_descriptor(command) {
        return refuse(
            DenyReason::Redirection,
            format!("`{m}` is a named-descriptor redirection: bash would assign a variable"),
        );
    }

    Ok(())
}

/// Parse and vet one simple command, run by hookd or by the agent's shell.
pub(crate) fn parse_as(command: &str, runs: Runs) -> Result<Parsed, Refusal> {
    precheck(command)?;
    if let Some(parsed) = plain_words(command) {
        return vet_program(parsed, runs);
    }
    parse_with_grammar(command, runs)
}

/// The fast path for the commonest commands: words made only of characters that no shell
/// treats specially, separated by blanks. For this sublanguage the grammar's answer is the
/// blank-split (a property test holds the two paths equal); anything else takes the grammar.
fn plain_words(command: &str) -> Option<Parsed> {
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"_./:,@%+=-".contains(&b);
    if !command.bytes().all(|b| plain(b) || b == b' ' || b == b'\t') {
        return None;
    }
    let argv: Vec<String> = command
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect();
    // `NAME=value` first is an assignment: leave it to the grammar, which says so.
    if argv.first()?.contains('=') {
        return None;
    }
    Some(Parsed {
        match_text: argv.join(" "),
        words: None,
        argv,
    })
}

/// A shell reserved word where a command starts. Both paths ask this one place, so a command
/// gets the same denial whichever path reads it (a property test compares them).
fn keyword(first: &str) -> Result<(), Refusal> {
    match first {
        "{" | "if" | "for" | "while" | "until" | "case" | "select" | "function" | "coproc" => {
            refuse(
                DenyReason::Compound,
                format!("`{first}` starts a group, loop, conditional, function or coprocess; put the logic in a script"),
            )
        }
        "}" | "do" | "done" | "then" | "else" | "elif" | "fi" | "esac" | "in" | "time" | "!"
        | "[[" | "]]" => refuse(DenyReason::Builtin, format!("`{first}` is a shell keyword")),
        _ => Ok(()),
    }
}

fn vet_program(parsed: Parsed, runs: Runs) -> Result<Parsed, Refusal> {
    let program_name = &parsed.argv[0];
    if program_name.is_empty() {
        return refuse(DenyReason::Unparsable, "the program name is empty");
    }
    keyword(program_name)?;
    variable_options(&parsed.argv)?;
    if runs == Runs::Shell && program_name == "cd" {
        return vet_cd(parsed);
    }
    // In the agent's shell `command CMD` and `exec CMD` run CMD (the gate's wrapper reader
    // then judges it as a command of its own); without one they change or query the shell.
    if runs == Runs::Shell && matches!(program_name.as_str(), "command" | "exec") {
        return match super::wrappers::inner(&parsed.argv) {
            super::wrappers::Inner::At { .. } => Ok(parsed),
            _ => refuse(
                DenyReason::Builtin,
                format!(
                    "`{program_name}` without a command to run changes or queries the shell itself"
                ),
            ),
        };
    }
    if SHELL_ONLY.contains(&program_name.as_str()) {
        return refuse(
            DenyReason::Builtin,
            format!("`{program_name}` is a shell builtin or keyword; hookd runs programs without a shell"),
        );
    }
    Ok(parsed)
}

/// The directory a vetted `cd` part goes to, as bash reads its arguments (`-L`/`-P` first, then
/// `--` ends the options): `None` when it goes home (`cd`, `cd -P`, `cd --`).
pub(crate) fn cd_target(argv: &[String]) -> Option<&str> {
    let args: Vec<&str> = argv[1..]
        .iter()
        .map(String::as_str)
        .skip_while(|a| matches!(*a, "-L" | "-P"))
        .collect();
    match args.as_slice() {
        [] | ["--"] => None,
        ["--", dir] | [dir] => Some(dir),
        _ => None,
    }
}

/// Bash builtins (run as such in a model's command, whatever PATH holds) whose options assign
/// or test a shell variable by name: the name's array subscript is evaluated as arithmetic,
/// which runs a `$(…)` hidden in a quoted word (`printf -v 'a[$(id)]' x`), and `printf -v PATH`
/// changes what later parts run. Refused, whoever runs them.
fn variable_options(argv: &[String]) -> Result<(), Refusal> {
    let program = argv[0].as_str();
    let named = |flags: &[&str]| {
        argv[1..]
            .iter()
            .find(|a| flags.iter().any(|f| a.starts_with(f)))
    };
    let hit = match program {
        "printf" => named(&["-v"]),
        "test" | "[" => named(&["-v", "-R"]),
        _ => None,
    };
    match hit {
        Some(flag) => refuse(
            DenyReason::Builtin,
            format!("`{program} {flag}` names a shell variable, which the shell evaluates"),
        ),
        None => Ok(()),
    }
}

/// `cd` in a model's command: where later parts run must stay knowable, so `cd -` (back to
/// `$OLDPWD`) and options other than `-L`/`-P` are refused; the directory is a plain word.
fn vet_cd(parsed: Parsed) -> Result<Parsed, Refusal> {
    let args: Vec<&str> = parsed.argv[1..]
        .iter()
        .map(String::as_str)
        .skip_while(|a| matches!(*a, "-L" | "-P"))
        .collect();
    match args.as_slice() {
        [] => Ok(parsed),
        ["-"] | ["--", "-"] => refuse(
            DenyReason::Expansion,
            "`cd -` goes back to `$OLDPWD`, a directory the command does not show",
        ),
        [dir] if dir.starts_with('-') && *dir != "--" => refuse(
            DenyReason::Unparsable,
            format!("`cd {dir}`: only the options -L and -P are understood"),
        ),
        [_] | ["--", _] => Ok(parsed),
        _ => refuse(DenyReason::Unparsable, "`cd` takes one directory"),
    }
}

/// The grammar path, fail closed even if the third-party parser panics: brush-parser 0.4
/// unwraps an `i32` parse of redirection fd numbers (`020040000000>c` panics; found by
/// fuzzing), so such numbers are refused up front and any other panic becomes a denial.
fn parse_with_grammar(command: &str, runs: Runs) -> Result<Parsed, Refusal> {
    prefilter(command)?;
    std::panic::catch_unwind(|| grammar(command, runs)).unwrap_or_else(|_| {
        refuse(
            DenyReason::Unparsable,
            "the shell grammar could not parse this command",
        )
    })
}

/// Refuse, before the grammar sees them, constructs that are always denied and that can make a
/// backtracking grammar slow: parentheses outside quotes (subshells, functions, `$(`, `<(`,
/// extglobs; nested ones made brush-parser take seconds, found by fuzzing), unquoted glob
/// characters (`[`, `*`, `?`; runs of `[` and `\` were slow too), backticks, and `$(`, `${`,
/// `$[` outside single quotes. It only ever denies: whatever it lets through still faces
/// the grammar, so a mistake here can refuse too much but never admit anything.
fn prefilter(command: &str) -> Result<(), Refusal> {
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
pub(super) enum Quote {
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

fn grammar(command: &str, runs: Runs) -> Result<Parsed, Refusal> {
    let opts = ParserOptions::default();
    let program = Parser::new(std::io::Cursor::new(command.as_bytes()), &opts)
        .parse_program()
        .or_else(|e| {
            let msg = e.to_string();
            if msg.contains("unterminated") {
                refuse(DenyReason::UnbalancedQuotes, msg)
            } else {
                refuse(DenyReason::Unparsable, msg)
            }
        })?;

    let simple = single_simple_command(&program)?;
    if let Some(prefix) = &simple.prefix {
        return match prefix.0.first() {
            Some(Item::AssignmentWord(_, w)) => refuse(
                DenyReason::Assignment,
                format!("`{}` sets a variable for the command", w.value),
            ),
            Some(Item::ProcessSubstitution(..)) => {
                refuse(DenyReason::Substitution, "process substitution")
            }
            _ => refuse(DenyReason::Redirection, "a redirection before the command"),
        };
    }
    let Some(name) = &simple.word_or_name else {
        return refuse(DenyReason::Redirection, "a redirection without a command");
    };

    let chars: Vec<char> = command.chars().collect();
    let mut covered = vec![false; chars.len()];
    let mut words = vec![name];
    let mut redirect_targets = Vec::new();
    if let Some(suffix) = &simple.suffix {
        for item in &suffix.0 {
            match item {
                Item::Word(w) | Item::AssignmentWord(_, w) => words.push(w),
                Item::ProcessSubstitution(..) => {
                    return refuse(
                        DenyReason::Substitution,
                        "process substitution `<(…)` or `>(…)`",
                    )
                }
                Item::IoRedirect(r) => redirect_targets.push(harmless_redirect(r)?),
            }
        }
    }

    let mut argv = Vec::with_capacity(words.len());
    let mut raw = Vec::with_capacity(words.len());
    for w in &words {
        mark(&chars, &mut covered, w)?;
        argv.push(decode_word(&w.value)?);
        raw.push(w.value.as_str());
    }
    for target in &redirect_targets {
        mark(&chars, &mut covered, target)?;
    }
    check_uncovered(&chars, &covered, &redirect_targets)?;

    // The words as written are kept only when one differs from what runs (quoted, escaped).
    let words = raw
        .iter()
        .zip(&argv)
        .any(|(r, a)| *r != a.as_str())
        .then(|| raw.iter().map(|w| w.to_string()).collect());
    vet_program(
        Parsed {
            argv,
            match_text: raw.join(" "),
            words,
        },
        runs,
    )
}

fn single_simple_command(program: &ast::Program) -> Result<&ast::SimpleCommand, Refusal> {
    if program.complete_commands.is_empty() {
        return refuse(DenyReason::Comment, "the command is only a comment");
    }
    let [complete] = program.complete_commands.as_slice() else {
        return refuse(
            DenyReason::Operator,
            "more than one command (`;` or a newline)",
        );
    };
    let [item] = complete.0.as_slice() else {
        return refuse(
            DenyReason::Operator,
            "more than one command (`;` or a newline)",
        );
    };
    if matches!(item.1, ast::SeparatorOperator::Async) {
        return refuse(
            DenyReason::Operator,
            "`&` runs the command in the background",
        );
    }
    let and_or = &item.0;
    if !and_or.additional.is_empty() {
        return refuse(DenyReason::Operator, "`&&` or `||` chains commands");
    }
    let pipeline = &and_or.first;
    if pipeline.timed.is_some() {
        return refuse(DenyReason::Builtin, "`time` is a shell keyword");
    }
    if pipeline.bang {
        return refuse(DenyReason::Builtin, "`!` negates a pipeline");
    }
    let [command] = pipeline.seq.as_slice() else {
        return refuse(DenyReason::Operator, "`|` or `|&` pipes commands");
    };
    match command {
        ast::Command::Simple(s) => Ok(s),
        ast::Command::Compound(..) => refuse(
            DenyReason::Compound,
            "a subshell, group, loop or conditional (`( )`, `{ }`, `if`, `for`, `while`, `case`)",
        ),
        ast::Command::Function(_) => refuse(DenyReason::Compound, "a function definition"),
        ast::Command::ExtendedTest(..) => {
            refuse(DenyReason::Builtin, "`[[ … ]]` is a shell keyword")
        }
    }
}

/// Accept only redirections that discard or merge output; return the target word to cover.
fn harmless_redirect(r: &IoRedirect) -> Result<&ast::Word, Refusal> {
    let to_null = |w: &ast::Word| w.value == "/dev/null";
    match r {
        IoRedirect::File(
            fd,
            IoFileRedirectKind::Write | IoFileRedirectKind::Append,
            IoFileRedirectTarget::Filename(w),
        ) if matches!(fd, None | Some(1) | Some(2)) && to_null(w) => Ok(w),
        IoRedirect::File(
            Some(2),
            IoFileRedirectKind::DuplicateOutput,
            IoFileRedirectTarget::Duplicate(w),
        ) if w.value == "1" => Ok(w),
        IoRedirect::File(
            None | Some(1),
            IoFileRedirectKind::DuplicateOutput,
            IoFileRedirectTarget::Duplicate(w),
        ) if w.value == "2" => Ok(w),
        IoRedirect::OutputAndError(w, _) if to_null(w) => Ok(w),
        IoRedirect::HereDocument(..) => refuse(DenyReason::Heredoc, "a here-document (`<<`)"),
        IoRedirect::HereString(..) => refuse(DenyReason::Heredoc, "a here-string (`<<<`)"),
        IoRedirect::File(_, _, IoFileRedirectTarget::ProcessSubstitution(..)) => refuse(
            DenyReason::Substitution,
            "process substitution in a redirection",
        ),
        _ => refuse(
            DenyReason::Redirection,
            "only `2>&1`, `>/dev/null`, `2>/dev/null` and `&>/dev/null` may redirect",
        ),
    }
}

/// Mark a word's characters as accounted for. The word's text must be exactly its source:
/// anything the grammar rewrote (a backslash-newline continuation) is refused.
fn mark(chars: &[char], covered: &mut [bool], w: &ast::Word) -> Result<(), Refusal> {
    let Some(loc) = &w.loc else {
        return refuse(
            DenyReason::Unparsable,
            format!("no source position for `{}`", w.value),
        );
    };
    let (start, end) = (loc.start.index, loc.end.index);
    if start > end || end > covered.len() {
        return refuse(DenyReason::Unparsable, "inconsistent source positions");
    }
    let source = &chars[start..end];
    if !source.iter().copied().eq(w.value.chars()) {
        return if source.contains(&'\n') {
            refuse(
                DenyReason::Operator,
                "a backslash-newline continues the line",
            )
        } else {
            refuse(
                DenyReason::Unparsable,
                format!("`{}` does not match its source text", w.value),
            )
        };
    }
    covered[start..end].iter_mut().for_each(|c| *c = true);
    Ok(())
}

/// Every character outside words must be a blank or the operator of an admitted redirection.
fn check_uncovered(
    chars: &[char],
    covered: &[bool],
    targets: &[&ast::Word],
) -> Result<(), Refusal> {
    let mut operators = 0usize;
    let mut i = 0;
    while i < chars.len() {
        if covered[i] || chars[i] == ' ' || chars[i] == '\t' {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && !covered[i] && chars[i] != ' ' && chars[i] != '\t' {
            i += 1;
        }
        let token: String = chars[start..i].iter().collect();
        if HARMLESS_OPERATORS.contains(&token.as_str()) {
            operators += 1;
            continue;
        }
        return Err(classify_stray(&token));
    }
    if operators != targets.len() {
        return refuse(
            DenyReason::Unparsable,
            "redirections do not match the parse",
        );
    }
    Ok(())
}

fn classify_stray(token: &str) -> Refusal {
    let (reason, detail) = if token.contains('#') {
        (
            DenyReason::Comment,
            format!("`{}` starts a comment", token.trim()),
        )
    } else if token.contains('\n') {
        (
            DenyReason::Operator,
            "a newline outside quotes separates commands".to_string(),
        )
    } else if token.contains([';', '&', '|']) {
        (
            DenyReason::Operator,
            format!("`{}` separates or chains commands", token.trim()),
        )
    } else if token.contains(['<', '>']) {
        (
            DenyReason::Redirection,
            format!("`{}` redirects input or output", token.trim()),
        )
    } else {
        (
            DenyReason::Unparsable,
            format!("`{}` is not part of any word", token.trim()),
        )
    };
    Refusal { reason, detail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// The fast path and the grammar agree on every command the fast path takes.
        #[test]
        fn fast_path_equals_grammar(cmd in "[ \t]{0,2}[a-zA-Z0-9_./:,@%+=-]{1,8}([ \t]{1,2}[a-zA-Z0-9_./:,@%+=-]{1,8}){0,5}[ \t]{0,2}") {
            if let Some(fast) = plain_words(&cmd) {
                let fast = vet_program(fast, Runs::Hookd);
                let slow = parse_with_grammar(&cmd, Runs::Hookd);
                match (&fast, &slow) {
                    (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                    (Err(a), Err(b)) => prop_assert_eq!(a.reason, b.reason),
                    _ => prop_assert!(false, "fast {:?} vs grammar {:?} for {:?}", fast, slow, cmd),
                }
            }
        }
    }

    /// The words the property above only rarely generates: every reserved word gets the same
    /// denial from both paths.
    #[test]
    fn reserved_words_get_one_denial_from_both_paths() {
        for w in [
            "do", "done", "then", "else", "elif", "fi", "esac", "in", "time", "if", "for", "while",
            "until", "case", "select", "function", "coproc",
        ] {
            for cmd in [w.to_string(), format!("{w} x")] {
                let fast =
                    vet_program(plain_words(&cmd).expect("plain words"), Runs::Hookd).unwrap_err();
                let slow = parse_with_grammar(&cmd, Runs::Hookd).unwrap_err();
                assert_eq!(fast.reason, slow.reason, "{cmd}");
            }
        }
    }

    #[test]
    fn fast_path_declines_what_it_must() {
        for cmd in [
            "a=b ls",
            "echo 'x'",
            "ls *",
            "echo $HOME",
            "echo ~",
            "ls #x",
            "echo a;b",
            "echo \\x",
        ] {
            assert!(plain_words(cmd).is_none(), "{cmd}");
        }
        assert_eq!(
            plain_words("git  status\t--short").unwrap().argv,
            ["git", "status", "--short"]
        );
    }
}
