//! One word of a command decoded into its exact text: unquoted text, single and double quotes
//! and the escapes bash reads literally, from an explicit allow-set of piece kinds. Any
//! expansion (`$`, backticks, globs, braces, tilde) is a refusal, never a guess.

use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::ParserOptions;

use super::{refuse, Refusal};
use crate::gate::DenyReason;

/// The literal value of one word, or why it is not a literal.
pub(super) fn decode_word(raw: &str) -> Result<String, Refusal> {
    let pieces = word::parse(raw, &ParserOptions::default()).map_err(|e| Refusal {
        reason: DenyReason::Unparsable,
        detail: e.to_string(),
    })?;
    let mut out = String::new();
    let mut unquoted_text = String::new();
    for (i, p) in pieces.iter().enumerate() {
        match &p.piece {
            WordPiece::Text(t) => {
                vet_unquoted(t, i == 0, &out)?;
                unquoted_text.push_str(t);
                out.push_str(t);
            }
            WordPiece::SingleQuotedText(t) => out.push_str(t),
            WordPiece::EscapeSequence(s) => {
                let c = s.strip_prefix('\\').unwrap_or(s);
                if c.contains('\n') || c.is_empty() {
                    return refuse(
                        DenyReason::Operator,
                        "a backslash-newline continues the line",
                    );
                }
                out.push_str(c);
            }
            WordPiece::DoubleQuotedSequence(inner) => decode_double_quoted(inner, &mut out)?,
            WordPiece::AnsiCQuotedText(_) => {
                return refuse(DenyReason::Expansion, format!("`$'…'` quoting in `{raw}`"))
            }
            WordPiece::GettextDoubleQuotedSequence(_) => {
                return refuse(
                    DenyReason::Expansion,
                    format!("`$\"…\"` quoting in `{raw}`"),
                )
            }
            WordPiece::TildeExpansion(_) => {
                return refuse(
                    DenyReason::Expansion,
                    format!("`~` expands to a home directory in `{raw}`"),
                )
            }
            WordPiece::ParameterExpansion(_) => {
                return refuse(
                    DenyReason::Expansion,
                    format!("a variable expansion in `{raw}`"),
                )
            }
            WordPiece::CommandSubstitution(_) | WordPiece::BackquotedCommandSubstitution(_) => {
                return refuse(
                    DenyReason::Substitution,
                    format!("command substitution in `{raw}`"),
                )
            }
            WordPiece::ArithmeticExpression(_) => {
                return refuse(
                    DenyReason::Substitution,
                    format!("arithmetic expansion in `{raw}`"),
                )
            }
        }
    }
    if let Some(open) = unquoted_text.find('{') {
        let rest = &unquoted_text[open..];
        if rest.contains('}') && (rest.contains(',') || rest.contains("..")) {
            return refuse(DenyReason::Glob, format!("brace expansion in `{raw}`"));
        }
    }
    Ok(out)
}

/// Unquoted text must be plain: no glob, expansion or operator characters.
fn vet_unquoted(t: &str, first_piece: bool, before: &str) -> Result<(), Refusal> {
    if let Some(c) = t.chars().find(|c| matches!(c, '*' | '?' | '[')) {
        return refuse(
            DenyReason::Glob,
            format!("unquoted `{c}` is a glob pattern; quote it to pass it literally"),
        );
    }
    if let Some(c) = t.chars().find(|c| matches!(c, '$' | '`')) {
        return refuse(DenyReason::Expansion, format!("unquoted `{c}`"));
    }
    if let Some(c) = t.chars().find(|c| {
        matches!(
            c,
            '(' | ')' | ';' | '&' | '|' | '<' | '>' | '!' | '\n' | '"' | '\'' | '\\'
        )
    }) {
        return refuse(
            DenyReason::Unparsable,
            format!("unquoted `{}`; quote it", c.escape_default()),
        );
    }
    if (first_piece && before.is_empty() && t.starts_with('#')) || t.contains(" #") {
        return refuse(DenyReason::Comment, "`#` starts a comment");
    }
    // Tilde expands at the start of a word and after `=` or `:` in assignment-like words.
    let tilde_expands = t.char_indices().any(|(i, c)| {
        c == '~'
            && (i == 0 && before.is_empty() || matches!(t[..i].chars().last(), Some('=' | ':')))
    });
    if tilde_expands {
        return refuse(
            DenyReason::Expansion,
            "`~` expands to a home directory; quote it",
        );
    }
    Ok(())
}

fn decode_double_quoted(inner: &[WordPieceWithSource], out: &mut String) -> Result<(), Refusal> {
    for p in inner {
        match &p.piece {
            WordPiece::Text(t) => {
                if let Some(c) = t.chars().find(|c| matches!(c, '$' | '`')) {
                    return refuse(DenyReason::Expansion, format!("`{c}` inside double quotes"));
                }
                out.push_str(t);
            }
            WordPiece::EscapeSequence(s) => match s.as_str() {
                "\\\"" | "\\\\" | "\\$" | "\\`" => out.push_str(&s[1..]),
                _ if s.contains('\n') => {
                    return refuse(
                        DenyReason::Operator,
                        "a backslash-newline inside double quotes",
                    )
                }
                _ => out.push_str(s),
            },
            WordPiece::CommandSubstitution(_) | WordPiece::BackquotedCommandSubstitution(_) => {
                return refuse(
                    DenyReason::Substitution,
                    "command substitution inside double quotes",
                )
            }
            WordPiece::ArithmeticExpression(_) => {
                return refuse(
                    DenyReason::Substitution,
                    "arithmetic expansion inside double quotes",
                )
            }
            _ => return refuse(DenyReason::Expansion, "an expansion inside double quotes"),
        }
    }
    Ok(())
}
