//! The program a parsed command names, vetted: no shell keyword or builtin (but `cd` in the
//! agent's shell, to a plain directory), no option that takes a variable's value as code.

use super::{refuse, Parsed, Refusal, Runs};
use crate::gate::DenyReason;

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

/// A shell reserved word where a command starts. Both paths ask this one place, so a command
/// gets the same denial whichever path reads it (a property test compares them).
pub(super) fn keyword(first: &str) -> Result<(), Refusal> {
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

pub(super) fn vet_program(parsed: Parsed, runs: Runs) -> Result<Parsed, Refusal> {
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
        return match crate::gate::wrappers::inner(&parsed.argv) {
            crate::gate::wrappers::Inner::At { .. } => Ok(parsed),
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
