//! The grammar's view (brush-parser): one simple command, its words decoded and its harmless
//! redirections dropped, and the coverage check that every character of the input belongs to
//! an admitted word, operator or blank.

use brush_parser::ast::{
    self, CommandPrefixOrSuffixItem as Item, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect,
};
use brush_parser::{Parser, ParserOptions};

use super::vet::vet_program;
use super::word::decode_word;
use super::{refuse, Parsed, Refusal, Runs};
use crate::gate::DenyReason;

/// Redirection operators that only discard or merge output (captured anyway, so dropped).
const HARMLESS_OPERATORS: &[&str] = &[
    ">", ">>", "1>", "1>>", "2>", "2>>", "&>", "&>>", "2>&", "1>&", ">&",
];

pub(super) fn grammar(command: &str, runs: Runs) -> Result<Parsed, Refusal> {
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
