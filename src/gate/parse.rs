//! Command text -> the exact argv, or the reason it is not a single plain command.
//!
//! Two independent views must agree before anything is admitted: brush-parser's bash grammar
//! gives the structure (one simple command, its words and redirections), and a coverage check
//! proves every character of the input belongs to an admitted word, to the operator of an
//! admitted redirection, or is a blank. Whatever the grammar dropped (comments, `;`, a
//! newline) is therefore seen and denied. Words are then decoded piece by piece from an
//! explicit allow-set of piece kinds; anything else is denied.
//!
//! Here: the entry points and the fast path for plain words; `chars` reads the text before
//! any grammar, `grammar` is brush-parser's view and the coverage check, `vet` judges the
//! program named, `word` decodes one word.

use super::DenyReason;
use chars::{named_descriptor, prefilter};
use grammar::grammar;
use vet::vet_program;

mod chars;
mod grammar;
mod vet;
mod word;

pub use chars::forbidden_char;
pub(super) use chars::Quote;
pub(crate) use vet::{cd_target, SHELL_ONLY};

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
