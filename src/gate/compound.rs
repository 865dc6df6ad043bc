//! A model's shell command: lists and pipelines of simple commands, each vetted and matched alone.
//!
//! The agent's own shell runs what the model proposed; hookd only decides. A command is admitted
//! when it splits at `&&`, `||`, `;`, `|` and `|&` into parts that are each one plain simple
//! command (the same vetting as a hook command, with `cd` as the one builtin) and each admitted
//! by the allow-list on its own. Two views must agree, as for single commands: a quote-aware
//! splitter finds the parts, and brush-parser's bash grammar, given the whole command, must
//! read exactly those simple commands with exactly those words. Newlines, `&` (background),
//! subshells, groups and everything a part may not contain are refused.

use super::parse::Quote as Q;
use brush_parser::ast::{self, CommandPrefixOrSuffixItem as Item};
use brush_parser::{Parser, ParserOptions};

use super::parse::{self, Parsed, Refusal, Runs};
use super::DenyReason;

/// How a part is joined to the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Joint {
    /// `;`
    Then,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `|`
    Pipe,
    /// `|&` (the previous part's stderr goes into the pipe too)
    PipeAll,
}

impl Joint {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Joint::Then => ";",
            Joint::And => "&&",
            Joint::Or => "||",
            Joint::Pipe => "|",
            Joint::PipeAll => "|&",
        }
    }
}

/// One simple command of a model's command, as written, and how it joins the one before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub text: String,
    pub joint: Option<Joint>,
}

fn refuse<T>(reason: DenyReason, detail: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal {
        reason,
        detail: detail.into(),
    })
}

/// Split `command` at the list and pipeline operators outside quotes. Only splits; what each
/// piece contains is vetted by the single-command parser, which refuses any operator, quote
/// or expansion it finds, so a piece this splitter got wrong is refused, never admitted.
pub(crate) fn split(command: &str) -> Result<Vec<Piece>, Refusal> {
    let mut s = Splitter {
        command,
        pieces: Vec::new(),
        start: 0,
        joint: None,
    };
    let mut q = Q::None;
    let mut prev = ' ';
    let mut chars = command.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        match (&q, c) {
            (Q::Single, '\'') | (Q::Ansi, '\'') | (Q::Double, '"') => q = Q::None,
            (Q::Single, _) => {}
            (Q::Ansi | Q::Double | Q::None, '\\') => {
                if next == Some('\n') && q == Q::None {
                    return refuse(
                        DenyReason::Operator,
                        "a backslash-newline continues the line; write the command on one line",
                    );
                }
                chars.next();
                prev = 'x';
                continue;
            }
            (Q::Ansi | Q::Double, _) => {}
            (Q::None, '\'') if prev == '$' => q = Q::Ansi,
            (Q::None, '\'') => q = Q::Single,
            (Q::None, '"') => q = Q::Double,
            (Q::None, '\n' | '\r') => {
                return refuse(
                    DenyReason::Operator,
                    "a newline separates commands here; join them on one line with `&&` or `;`",
                )
            }
            (Q::None, ';' | '|' | '&') => {
                // `&&`, `||`, `|&`: the operator's second character is read here.
                for _ in 0..s.operator(i, c, prev, next)? {
                    chars.next();
                }
            }
            _ => {}
        }
        prev = c;
    }
    if q != Q::None {
        return refuse(DenyReason::UnbalancedQuotes, "a quote is never closed");
    }
    s.finish()
}

/// The pieces found so far, and where the current one starts and how it was joined.
struct Splitter<'a> {
    command: &'a str,
    pieces: Vec<Piece>,
    start: usize,
    joint: Option<Joint>,
}

impl Splitter<'_> {
    /// `c` at `i`, outside quotes, after `prev` and before `next`: a list or pipeline operator
    /// ends the current piece. Returns how many characters after `c` belong to the operator
    /// (1 for `&&`, `||`, `|&`); redirections (`>|`, `>&`, `&>`) are left to the part, which
    /// refuses them.
    fn operator(
        &mut self,
        i: usize,
        c: char,
        prev: char,
        next: Option<char>,
    ) -> Result<usize, Refusal> {
        let (joint, width) = match c {
            ';' if matches!(next, Some(';' | '&')) => {
                return refuse(
                    DenyReason::Compound,
                    format!("`;{}` belongs to a `case` statement", next.unwrap_or(';')),
                );
            }
            ';' => (Joint::Then, 1),
            '|' if prev == '>' => return Ok(0),
            '|' => match next {
                Some('|') => (Joint::Or, 2),
                Some('&') => (Joint::PipeAll, 2),
                _ => (Joint::Pipe, 1),
            },
            '&' if prev == '>' || next == Some('>') => return Ok(0),
            '&' if next != Some('&') => {
                return refuse(
                    DenyReason::Operator,
                    "`&` runs a command in the background, where nothing waits for it",
                );
            }
            _ => (Joint::And, 2),
        };
        self.pieces
            .push(piece(self.command, self.start, i, self.joint));
        self.joint = Some(joint);
        self.start = i + width;
        Ok(width - 1)
    }

    /// The last piece, and the check that no piece is empty.
    fn finish(mut self) -> Result<Vec<Piece>, Refusal> {
        let last = piece(self.command, self.start, self.command.len(), self.joint);
        // A final `;` is allowed (`make;`): bash reads nothing after it.
        if !(last.text.is_empty() && self.joint == Some(Joint::Then) && !self.pieces.is_empty()) {
            self.pieces.push(last);
        }
        let pieces = self.pieces;
        if let Some(empty) = pieces.iter().position(|p| p.text.is_empty()) {
            let around = match (
                pieces[empty].joint,
                pieces.get(empty + 1).and_then(|p| p.joint),
            ) {
                (Some(j), _) => format!("after `{}`", j.as_str()),
                (None, Some(j)) => format!("before `{}`", j.as_str()),
                (None, None) => String::new(),
            };
            return refuse(
                DenyReason::Empty,
                format!("there is no command {around}")
                    .trim_end()
                    .to_string(),
            );
        }
        Ok(pieces)
    }
}

fn piece(command: &str, start: usize, end: usize, joint: Option<Joint>) -> Piece {
    Piece {
        text: command[start..end].trim_matches([' ', '\t']).to_string(),
        joint,
    }
}

/// The second view: bash's grammar reads the whole command as a list of pipelines of simple
/// commands whose words, as written, are exactly the parts' (`expected`, one string each,
/// words joined by one space, harmless redirections left out). Anything else is refused.
pub(crate) fn cross_check(command: &str, expected: &[&Parsed]) -> Result<(), Refusal> {
    let read = std::panic::catch_unwind(|| words_per_command(command)).unwrap_or_else(|_| {
        refuse(
            DenyReason::Unparsable,
            "the shell grammar could not parse this command",
        )
    })?;
    let same = read.len() == expected.len()
        && read
            .iter()
            .zip(expected)
            .all(|(words, parsed)| *words == parsed.match_text);
    if same {
        Ok(())
    } else {
        refuse(
            DenyReason::Unparsable,
            "the shell would read this command differently from the parts hookd checked",
        )
    }
}

fn words_per_command(command: &str) -> Result<Vec<String>, Refusal> {
    let opts = ParserOptions::default();
    let program = Parser::new(std::io::Cursor::new(command.as_bytes()), &opts)
        .parse_program()
        .or_else(|e| refuse(DenyReason::Unparsable, e.to_string()))?;
    let mut out = Vec::new();
    for complete in &program.complete_commands {
        for ast::CompoundListItem(and_or, sep) in &complete.0 {
            if matches!(sep, ast::SeparatorOperator::Async) {
                return refuse(DenyReason::Operator, "`&` runs a command in the background");
            }
            let pipelines =
                std::iter::once(&and_or.first).chain(and_or.additional.iter().map(|a| match a {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => p,
                }));
            for pipeline in pipelines {
                if pipeline.timed.is_some() || pipeline.bang {
                    return refuse(DenyReason::Builtin, "`time` or `!` before a pipeline");
                }
                for command in &pipeline.seq {
                    let ast::Command::Simple(simple) = command else {
                        return refuse(
                            DenyReason::Compound,
                            "a subshell, group, loop, conditional or function",
                        );
                    };
                    out.push(words_of(simple)?);
                }
            }
        }
    }
    Ok(out)
}

fn words_of(simple: &ast::SimpleCommand) -> Result<String, Refusal> {
    if simple.prefix.is_some() {
        return refuse(
            DenyReason::Assignment,
            "something before the program (an assignment or a redirection)",
        );
    }
    let mut words: Vec<&str> = simple
        .word_or_name
        .iter()
        .map(|w| w.value.as_str())
        .collect();
    for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
        match item {
            Item::Word(w) | Item::AssignmentWord(_, w) => words.push(&w.value),
            Item::IoRedirect(_) => {}
            Item::ProcessSubstitution(..) => {
                return refuse(DenyReason::Substitution, "process substitution")
            }
        }
    }
    Ok(words.join(" "))
}

/// A part and what the single-command parser made of it.
pub(crate) type ParsedPiece = (Piece, Result<Parsed, Refusal>);

/// Split and vet every part (each as its own simple command run by the shell).
pub(crate) fn parse_parts(command: &str) -> Result<Vec<ParsedPiece>, Refusal> {
    parse::precheck(command)?;
    let pieces = split(command)?;
    Ok(pieces
        .into_iter()
        .map(|p| {
            let parsed = parse::parse_as(&p.text, Runs::Shell);
            (p, parsed)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(cmd: &str) -> Vec<(Option<&'static str>, String)> {
        split(cmd)
            .unwrap()
            .into_iter()
            .map(|p| (p.joint.map(Joint::as_str), p.text))
            .collect()
    }

    #[test]
    fn splits_at_operators_outside_quotes_only() {
        assert_eq!(
            texts("cd web && npm test"),
            [(None, "cd web".into()), (Some("&&"), "npm test".into())]
        );
        assert_eq!(
            texts("cargo test 2>&1 | tail -50"),
            [
                (None, "cargo test 2>&1".into()),
                (Some("|"), "tail -50".into())
            ]
        );
        assert_eq!(
            texts("a |& b || c; d"),
            [
                (None, "a".into()),
                (Some("|&"), "b".into()),
                (Some("||"), "c".into()),
                (Some(";"), "d".into())
            ]
        );
        assert_eq!(
            texts("grep 'a|b' \"c;d\" e\\&f"),
            [(None, "grep 'a|b' \"c;d\" e\\&f".into())]
        );
        assert_eq!(texts("ls &>/dev/null"), [(None, "ls &>/dev/null".into())]);
        assert_eq!(texts("make;"), [(None, "make".into())]);
    }

    #[test]
    fn refuses_what_it_cannot_split_soundly() {
        for (cmd, reason) in [
            ("ls & rm x", DenyReason::Operator),
            ("ls\nrm x", DenyReason::Operator),
            ("ls \\\n x", DenyReason::Operator),
            ("&& ls", DenyReason::Empty),
            ("ls ||", DenyReason::Empty),
            ("ls ;; x", DenyReason::Compound),
            ("echo 'a", DenyReason::UnbalancedQuotes),
        ] {
            assert_eq!(split(cmd).unwrap_err().reason, reason, "{cmd:?}");
        }
    }
}
