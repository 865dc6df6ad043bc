//! Options and program text that make an admitted program run another program, or write or
//! read a file its words do not name as a path: `tar --to-command=…`, `rg --pre …`,
//! `git log --output=FILE`, `sed '1e …'`, `awk 'BEGIN{system(…)}'`. An entry like
//! `^tar( .*)?$` was written for archives, not for every program tar can start: a command
//! using one of these is refused unless its entry names the option (or is the exact command).
//!
//! The table cites where each option comes from: the tools' manuals (GNU tar, rsync, ripgrep,
//! git, GNU sed's `--sandbox`, which defines sed's set, gawk), and the options Codex's
//! safe-command rules refuse (`find -exec/-fprint`, `rg --pre/--hostname-bin/-z`, `git
//! --output/--ext-diff/--textconv/--exec/--paginate/-c`).

mod text;

use std::path::Path;
use text::{awk_program, sed_script};

/// What an option does that the allow-list cannot see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Does {
    /// Starts a program the command's words name only as an option's value or in program text.
    Runs,
    /// Writes a file no path word of the command names.
    Writes,
    /// Reads program text or settings from a file, which the gate cannot read.
    Loads,
}

impl Does {
    fn says(self) -> &'static str {
        match self {
            Does::Runs => "runs another program",
            Does::Writes => "writes a file the command does not name as a path",
            Does::Loads => "reads program text or settings the gate cannot see",
        }
    }
}

/// A program-running (or file-writing) construct found in a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Danger {
    /// How the operator writes it in an entry that admits it (`--to-command`, `-I`, `-exec`);
    /// `None` for program text (sed's `e`, awk's `system`), which only the exact command's
    /// entry admits.
    pub spelled: Option<&'static str>,
    /// What to call it in a message: `tar --to-command`, "the sed command `e`".
    pub what: String,
    pub does: Does,
}

impl Danger {
    fn new(spelled: Option<&'static str>, what: impl Into<String>, does: Does) -> Danger {
        Danger {
            spelled,
            what: what.into(),
            does,
        }
    }

    /// One sentence for the model: what is refused and why, not how to get it admitted.
    pub fn detail(&self) -> String {
        format!("{} {}, so hookd refuses it", self.what, self.does.says())
    }
}

/// How an option is written.
#[derive(Clone, Copy, Debug)]
enum Opt {
    /// `--name`, `--name=VALUE`, and any abbreviation (GNU getopt and git accept unambiguous
    /// prefixes: `tar --to-com=…`).
    Long(&'static str),
    /// A short option letter: alone (`-I cmd`), with its value attached (`-Icmd`) or in a
    /// cluster (`-xI cmd`).
    Short(char),
    /// Exactly this word (`find -exec`, `zip -TT`).
    Word(&'static str),
    /// A word starting so (`cargo +nightly`, `vim +cmd`).
    Prefix(&'static str),
}

type Rule = (Opt, Does);

use Does::{Loads, Runs, Writes};
use Opt::{Long, Prefix, Short, Word};

/// GNU tar: `--to-command`, `-I/--use-compress-program`, `--checkpoint-action=exec=`,
/// `-F/--info-script/--new-volume-script`, `--rmt-command`, `--rsh-command` run programs.
const TAR: &[Rule] = &[
    (Long("to-command"), Runs),
    (Long("use-compress-program"), Runs),
    (Short('I'), Runs),
    (Long("checkpoint-action"), Runs),
    (Long("info-script"), Runs),
    (Long("new-volume-script"), Runs),
    (Short('F'), Runs),
    (Long("rmt-command"), Runs),
    (Long("rsh-command"), Runs),
    (Long("index-file"), Writes),
];

/// rsync: `-e/--rsh` and `--rsync-path` run programs; the log and batch files are written.
const RSYNC: &[Rule] = &[
    (Long("rsh"), Runs),
    (Short('e'), Runs),
    (Long("rsync-path"), Runs),
    (Long("log-file"), Writes),
    (Long("write-batch"), Writes),
    (Long("only-write-batch"), Writes),
];

/// ripgrep: `--pre` runs a program per file, `--hostname-bin` to name the host, `-z` runs
/// decompressors.
const RG: &[Rule] = &[
    (Long("pre"), Runs),
    (Long("hostname-bin"), Runs),
    (Long("search-zip"), Runs),
    (Short('z'), Runs),
];

/// find: actions that run commands, delete, or write the names found.
const FIND: &[Rule] = &[
    (Word("-exec"), Runs),
    (Word("-execdir"), Runs),
    (Word("-ok"), Runs),
    (Word("-okdir"), Runs),
    (Word("-delete"), Writes),
    (Word("-fprint"), Writes),
    (Word("-fprint0"), Writes),
    (Word("-fprintf"), Writes),
    (Word("-fls"), Writes),
];

/// cargo: `--config` sets `target.*.runner`, `build.rustc-wrapper` or loads a file of them;
/// `+toolchain` picks the rustc rustup runs.
const CARGO: &[Rule] = &[(Long("config"), Runs), (Prefix("+"), Runs)];

/// zip: `-TT/--unzip-command` tests the archive with a program of the caller's choosing.
const ZIP: &[Rule] = &[(Word("-TT"), Runs), (Long("unzip-command"), Runs)];

/// sort: `--compress-program` compresses temporary files with any program.
const SORT: &[Rule] = &[(Long("compress-program"), Runs)];

/// GNU make: `--eval`/`-E` evaluates make text (`$(shell …)`) the makefile does not hold.
const MAKE: &[Rule] = &[(Long("eval"), Runs), (Short('E'), Runs)];

/// npm and its kin: the shell scripts run with, and options passed to every node.
const NPM: &[Rule] = &[(Long("script-shell"), Runs), (Long("node-options"), Runs)];

/// ssh, scp, sftp: a configuration file (`-F`) and options (`-o ProxyCommand=…`) name
/// programs; scp and sftp run `-S program` as their ssh.
const SSH: &[Rule] = &[(Short('F'), Loads), (Short('S'), Runs)];

/// man: `-P/--pager` runs a program of the caller's choosing.
const MAN: &[Rule] = &[(Short('P'), Runs), (Long("pager"), Runs)];

/// vim and its names: `-c`, `--cmd`, `+cmd`, `-S file` run editor commands (`:!…`).
const VIM: &[Rule] = &[
    (Short('c'), Runs),
    (Long("cmd"), Runs),
    (Prefix("+"), Runs),
    (Short('S'), Loads),
];

/// Emacs: `--eval`, `-l/--load`, `-f/--funcall` run Lisp.
const EMACS: &[Rule] = &[
    (Long("eval"), Runs),
    (Long("load"), Runs),
    (Short('l'), Runs),
    (Long("funcall"), Runs),
    (Short('f'), Runs),
];

/// C compilers: `-wrapper` runs the compiler's programs under another; `-B` picks them from a
/// directory; `-fplugin` loads code.
const CC: &[Rule] = &[
    (Word("-wrapper"), Runs),
    (Short('B'), Runs),
    (Prefix("-fplugin"), Runs),
];

/// The rules for `program` (a file name, no directory).
fn rules(program: &str) -> &'static [Rule] {
    match program {
        "tar" | "gtar" | "bsdtar" => TAR,
        "rsync" => RSYNC,
        "rg" => RG,
        "find" | "gfind" => FIND,
        "cargo" => CARGO,
        "zip" => ZIP,
        "sort" | "gsort" => SORT,
        "make" | "gmake" => MAKE,
        "npm" | "npx" | "pnpm" | "yarn" => NPM,
        "ssh" | "scp" | "sftp" => SSH,
        "man" => MAN,
        "vim" | "vi" | "nvim" | "view" | "ex" | "vimdiff" | "gvim" => VIM,
        "emacs" | "emacsclient" => EMACS,
        "cc" | "gcc" | "g++" | "c++" | "clang" | "clang++" => CC,
        _ => &[],
    }
}

/// Whether the table has anything to say about `program`: words appended to it unseen (by
/// `xargs`) could be one of its options.
pub(super) fn has_rules(program: &str) -> bool {
    !rules(program).is_empty()
        || matches!(
            program,
            "git" | "sed" | "gsed" | "awk" | "gawk" | "mawk" | "nawk" | "original-awk"
        )
}

/// Whether [`danger`] may find anything in a command of `program` (a multi-call binary runs
/// another).
pub(super) fn watches(program: &str) -> bool {
    has_rules(program) || matches!(program, "busybox" | "toybox")
}

/// The first construct of `argv` that runs another program, or writes or reads a file no word
/// names as a path, if any.
pub(super) fn danger(argv: &[String]) -> Option<Danger> {
    let program = Path::new(argv.first()?).file_name()?.to_str()?;
    // A multi-call binary runs its first argument as the program: `busybox sed …`.
    if matches!(program, "busybox" | "toybox") && argv.len() > 1 {
        return danger(&argv[1..]);
    }
    let args = &argv[1..];
    let special = match program {
        "git" => git(args),
        "sed" | "gsed" => sed(args),
        "awk" | "gawk" | "mawk" | "nawk" | "original-awk" => awk(args),
        "ssh" | "scp" | "sftp" => ssh_options(args, program),
        _ => None,
    };
    if special.is_some() {
        return special;
    }
    // tar's old style puts its letters first without a dash: `tar xIf zstd a.tar`.
    let old_style = matches!(program, "tar" | "gtar" | "bsdtar")
        && args.first().is_some_and(|w| !w.starts_with('-'));
    rules(program).iter().find_map(|(opt, does)| {
        let hit = args.iter().enumerate().any(|(i, w)| {
            uses(opt, w) || (i == 0 && old_style && matches!(opt, Short(c) if w.contains(*c)))
        });
        hit.then(|| found(program, *opt, *does))
    })
}

fn found(program: &str, opt: Opt, does: Does) -> Danger {
    let (spelled, text) = spelling(opt);
    Danger {
        spelled: Some(spelled),
        what: format!("`{program} {text}`"),
        does,
    }
}

/// How an entry names `opt`, and how a message shows it.
fn spelling(opt: Opt) -> (&'static str, String) {
    match opt {
        // An entry names a long option by its name (`to-command` in `--to-command=zstd`).
        Long(name) => (name, format!("--{name}")),
        Short(c) => (short_spelling(c), format!("-{c}")),
        Word(w) => (w, w.to_string()),
        Prefix(p) => (p, format!("{p}…")),
    }
}

/// `-X` for the short letters the table uses, as static text.
fn short_spelling(c: char) -> &'static str {
    const LETTERS: &str = "-B-E-F-I-P-S-c-e-f-l-z-O-p-x";
    LETTERS
        .match_indices('-')
        .map(|(i, _)| &LETTERS[i..i + 2])
        .find(|s| s.ends_with(c))
        .unwrap_or("-")
}

/// Whether the word `w` uses `opt`.
fn uses(opt: &Opt, w: &str) -> bool {
    match *opt {
        Long(name) => long_name(w).is_some_and(|(given, _)| abbreviates(given, name)),
        Short(c) => short_letters(w).contains(c),
        Word(word) => w == word,
        Prefix(p) => w.starts_with(p) && w.len() > p.len(),
    }
}

/// The name and value of a long option word: `--name=VALUE` → `("name", Some("VALUE"))`.
pub(super) fn long_name(w: &str) -> Option<(&str, Option<&str>)> {
    let rest = w.strip_prefix("--").filter(|r| !r.is_empty())?;
    Some(match rest.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (rest, None),
    })
}

/// Whether `given` is `full` or an abbreviation of it: GNU getopt and git's parse-options
/// take any unambiguous prefix, so the gate takes every prefix (an ambiguous one makes the
/// tool refuse, which costs nothing).
pub(super) fn abbreviates(given: &str, full: &str) -> bool {
    !given.is_empty() && full.starts_with(given)
}

/// The letters of a short-option cluster (`-xzf` → `xzf`), up to the first character that is
/// not a letter; empty for a long option or an operand.
fn short_letters(w: &str) -> &str {
    let Some(rest) = w.strip_prefix('-').filter(|r| !r.starts_with('-')) else {
        return "";
    };
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    &rest[..end]
}

/// git: global options before the subcommand (`-c`, `--config-env`, `--exec-path=DIR`,
/// `-p/--paginate`), options of any subcommand that run or write (`--output`, `--ext-diff`,
/// `--textconv`, `--exec`, `--upload-pack`, `--receive-pack`, `--extcmd`, `grep -O` /
/// `--open-files-in-pager`, `rebase -x`, `difftool -x`), and subcommands that run what they
/// are given or write the configuration that names programs (`config` other than reading it,
/// `submodule foreach`, `bisect run`, `filter-branch`).
fn git(args: &[String]) -> Option<Danger> {
    let git_danger = |spelled: Option<&'static str>, what: &str, does: Does| Danger {
        spelled,
        what: format!("`git {what}`"),
        does,
    };
    // Global options, up to the subcommand.
    let mut i = 0;
    while i < args.len() {
        let w = args[i].as_str();
        if !w.starts_with('-') {
            break;
        }
        if w == "-c" || (w.starts_with("-c") && w.len() > 2) {
            return Some(git_danger(Some("-c"), "-c", Runs));
        }
        if w == "-p" {
            return Some(git_danger(Some("-p"), "-p", Runs));
        }
        if let Some((name, value)) = long_name(w) {
            for (full, does) in [("config-env", Runs), ("paginate", Runs)] {
                if abbreviates(name, full) {
                    return Some(git_danger(Some(full), &format!("--{full}"), does));
                }
            }
            // `--exec-path` alone prints where git's programs are; with a value it picks them.
            if abbreviates(name, "exec-path") && name.len() > 4 && value.is_some() {
                return Some(git_danger(Some("exec-path"), "--exec-path", Runs));
            }
        }
        // Global options that take the next word as their value.
        if matches!(w, "-C" | "--git-dir" | "--work-tree" | "--namespace") {
            i += 1;
        }
        i += 1;
    }
    let sub = args.get(i).map(String::as_str).unwrap_or_default();
    let rest = args.get(i + 1..).unwrap_or_default();
    for w in rest {
        if let Some((name, _)) = long_name(w) {
            for full in [
                "output",
                "ext-diff",
                "textconv",
                "exec",
                "upload-pack",
                "receive-pack",
                "extcmd",
                "open-files-in-pager",
            ] {
                if abbreviates(name, full) {
                    let does = if full == "output" { Writes } else { Runs };
                    return Some(git_danger(Some(full), &format!("{sub} --{full}"), does));
                }
            }
        }
        let letters = short_letters(w);
        let short = match sub {
            "grep" => Some('O'),
            "rebase" | "difftool" => Some('x'),
            "clone" | "archive" => Some('u'),
            _ => None,
        };
        if let Some(c) = short.filter(|c| letters.contains(*c)) {
            return Some(git_danger(
                Some(short_spelling(c)),
                &format!("{sub} -{c}"),
                Runs,
            ));
        }
    }
    let subcommand = |what: &str| Some(git_danger(None, what, Runs));
    match sub {
        "config" if !config_reads_only(rest) => subcommand("config"),
        "submodule" if rest.iter().any(|w| w == "foreach") => subcommand("submodule foreach"),
        "bisect" if rest.first().is_some_and(|w| w == "run") => subcommand("bisect run"),
        "filter-branch" => subcommand("filter-branch"),
        _ => None,
    }
}

/// `git config` that only reads: `--get*`, `--list`/`-l`, `get`, `list`, or a bare name.
fn config_reads_only(args: &[String]) -> bool {
    let operands = args.iter().filter(|w| !w.starts_with('-')).count();
    let reading = args.iter().any(|w| {
        w == "-l"
            || w.starts_with("--get")
            || long_name(w).is_some_and(|(n, _)| abbreviates(n, "list") && n.len() > 1)
    });
    match args
        .iter()
        .find(|w| !w.starts_with('-'))
        .map(String::as_str)
    {
        Some("get" | "list") => true,
        Some("set" | "unset" | "rename-section" | "remove-section" | "edit") => false,
        _ => reading || (operands <= 1 && !args.iter().any(|w| is_config_writer(w))),
    }
}

/// A `git config` option that writes (in any abbreviation git accepts).
fn is_config_writer(w: &str) -> bool {
    const WRITERS: &[&str] = &[
        "add",
        "replace-all",
        "unset",
        "unset-all",
        "edit",
        "rename-section",
        "remove-section",
    ];
    w == "-e" || long_name(w).is_some_and(|(n, _)| WRITERS.iter().any(|f| abbreviates(n, f)))
}

/// ssh, scp, sftp: `-o` options that name a program (`ProxyCommand`, `LocalCommand`,
/// `KnownHostsCommand`, `PermitLocalCommand`), in a separate or attached value.
fn ssh_options(args: &[String], program: &str) -> Option<Danger> {
    const RUNNING: &[&str] = &[
        "proxycommand",
        "localcommand",
        "permitlocalcommand",
        "knownhostscommand",
        "proxyusefdpass",
        "include",
    ];
    let values = args
        .iter()
        .enumerate()
        .filter_map(|(i, w)| match w.strip_prefix("-o") {
            Some("") => args.get(i + 1).map(String::as_str),
            Some(attached) => Some(attached),
            None => None,
        });
    values.into_iter().find_map(|v| {
        let v = v.trim_start().to_ascii_lowercase();
        RUNNING.iter().any(|r| v.starts_with(r)).then(|| Danger {
            spelled: Some("ProxyCommand"),
            what: format!("`{program} -o` with a command option"),
            does: Runs,
        })
    })
}

/// sed: GNU sed's `--sandbox` set (the `e`, `r`, `R`, `w` and `W` commands and the `e` and `w`
/// flags of `s`), a script read from a file (`-f`), and a script this reader cannot follow.
fn sed(args: &[String]) -> Option<Danger> {
    let mut scripts: Vec<&str> = Vec::new();
    let mut given = false;
    let mut i = 0;
    let mut operands_only = false;
    while i < args.len() {
        let w = args[i].as_str();
        let next = args.get(i + 1).map(String::as_str);
        if operands_only || !w.starts_with('-') || w == "-" {
            if !given && scripts.is_empty() {
                scripts.push(w);
                given = true;
            }
        } else if w == "--" {
            operands_only = true;
        } else if let Some((name, value)) = long_name(w) {
            if abbreviates(name, "expression") {
                scripts.extend(value.or(next));
                given = true;
                i += usize::from(value.is_none());
            } else if abbreviates(name, "file") {
                return Some(Danger::new(Some("--file"), "`sed --file`", Loads));
            } else if abbreviates(name, "line-length") && value.is_none() {
                i += 1;
            }
        } else {
            let letters = &w[1..];
            for (at, c) in letters.char_indices() {
                let attached = &letters[at + 1..];
                match c {
                    'e' => {
                        if attached.is_empty() {
                            scripts.extend(next);
                            i += 1;
                        } else {
                            scripts.push(attached);
                        }
                        given = true;
                        break;
                    }
                    'f' => return Some(Danger::new(Some("-f"), "`sed -f`", Loads)),
                    'l' => {
                        i += usize::from(attached.is_empty());
                        break;
                    }
                    // `-i` takes the rest of the word as its backup suffix.
                    'i' => break,
                    _ => {}
                }
            }
        }
        i += 1;
    }
    in_text(
        scripts,
        sed_script,
        "the sed command",
        "a sed script the gate cannot read",
    )
}

/// What a reader of program text found first: the construct and what it does; `Err` for
/// text it cannot follow.
type TextReading = Result<Option<(&'static str, Does)>, ()>;

/// The first danger a reader of program text (`sed_script`, `awk_program`) finds in `texts`,
/// named as `kind` (`the sed command `e``); text it cannot follow is refused as `unreadable`.
fn in_text(
    texts: Vec<&str>,
    read: fn(&str) -> TextReading,
    kind: &str,
    unreadable: &str,
) -> Option<Danger> {
    texts.into_iter().find_map(|t| match read(t) {
        Ok(None) => None,
        Ok(Some((what, does))) => Some(Danger::new(None, format!("{kind} `{what}`"), does)),
        Err(()) => Some(Danger::new(None, unreadable, Runs)),
    })
}

/// awk: a program read from a file (`-f`), gawk's `-E/--exec`, `-l/--load`, `-i/--include`,
/// files gawk writes (`-o/--pretty-print`, `-p/--profile`, `-d/--dump-variables`), and
/// program text that runs a command (`system(…)`, a pipe `|` to or from one, `|&`), writes a
/// file (`print > "f"`, `printf >> "f"`) or loads an extension (`@load`, `@include`).
fn awk(args: &[String]) -> Option<Danger> {
    let mut program = AwkProgram::default();
    let mut i = 0;
    while i < args.len() {
        let w = args[i].as_str();
        let next = args.get(i + 1).map(String::as_str);
        if w == "--" || !w.starts_with('-') || w == "-" {
            // The first operand is the program, unless one was given by an option.
            let first = if w == "--" { next } else { Some(w) };
            if !program.given {
                program.texts.extend(first);
            }
            break;
        }
        let read = match long_name(w) {
            Some((name, value)) => program.long(name, value, next),
            None => program.short(&w[1..], next),
        };
        match read {
            Ok(skip) => i += 1 + skip,
            Err(danger) => return Some(danger),
        }
    }
    in_text(
        program.texts,
        awk_program,
        "the awk construct",
        "an awk program the gate cannot read",
    )
}

/// The program texts an awk command line gives (`-e`, `--source`, or its first operand).
#[derive(Default)]
struct AwkProgram<'a> {
    texts: Vec<&'a str>,
    /// A program was given by an option: operands are files then.
    given: bool,
}

impl<'a> AwkProgram<'a> {
    /// A long option `--name[=value]` (abbreviations read as gawk does): the words it takes
    /// beyond itself, or what it does that the gate cannot see.
    fn long(
        &mut self,
        name: &str,
        value: Option<&'a str>,
        next: Option<&'a str>,
    ) -> Result<usize, Danger> {
        for (full, does) in [
            ("file", Loads),
            ("exec", Loads),
            ("load", Runs),
            ("include", Loads),
            ("pretty-print", Writes),
            ("profile", Writes),
            ("dump-variables", Writes),
        ] {
            if abbreviates(name, full) {
                return Err(Danger::new(None, format!("`awk --{full}`"), does));
            }
        }
        if abbreviates(name, "source") {
            self.texts.extend(value.or(next));
            self.given = true;
            return Ok(usize::from(value.is_none()));
        }
        let takes_value = ["assign", "field-separator"]
            .iter()
            .any(|f| abbreviates(name, f));
        Ok(usize::from(value.is_none() && takes_value))
    }

    /// Short options `-letters` (a value attached or in the next word): the words they take
    /// beyond their own, or what one does that the gate cannot see.
    fn short(&mut self, letters: &'a str, next: Option<&'a str>) -> Result<usize, Danger> {
        for (at, c) in letters.char_indices() {
            let attached = &letters[at + 1..];
            match c {
                'f' | 'E' | 'i' => return Err(Danger::new(None, format!("`awk -{c}`"), Loads)),
                'l' => return Err(Danger::new(None, "`awk -l`", Runs)),
                'o' | 'p' | 'd' => return Err(Danger::new(None, format!("`awk -{c}`"), Writes)),
                'e' => {
                    self.given = true;
                    if attached.is_empty() {
                        self.texts.extend(next);
                        return Ok(1);
                    }
                    self.texts.push(attached);
                    return Ok(0);
                }
                'v' | 'F' | 'W' => return Ok(usize::from(attached.is_empty())),
                _ => {}
            }
        }
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(command: &str) -> Option<Danger> {
        let argv: Vec<String> = crate::gate::argv_of(command).expect(command);
        danger(&argv)
    }

    #[test]
    fn program_running_constructs_are_found() {
        for c in [
            "tar -xf a.tar --to-command=sh",
            "tar -x -f a.tar --to-com 'sh -c id'",
            "tar -I 'sh -c id' -xf a.tar",
            "tar -xIzstd -f a.tar",
            "tar xIf zstd a.tar",
            "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=id .",
            "tar -cf a.tar -F script .",
            "rsync -e 'sh -c id' a b:",
            "rsync --rsync-path='sh -c id' a b:",
            "rg --pre ./x pattern",
            "rg --pre=./x pattern",
            "rg -z pattern",
            "find . -exec rm '{}' ';'",
            "find . -delete",
            "git log --output=/home/u/.bashrc",
            "git diff --output /tmp/x",
            "git log --out=/tmp/x",
            "git diff --ext-diff",
            "git log --textconv",
            "git rebase --exec 'id' HEAD~1",
            "git rebase -x id HEAD~1",
            "git -p log",
            "git --paginate log",
            "git -c core.pager=id log",
            "git -ccore.pager=id log",
            "git --config-env=core.pager=X log",
            "git --exec-path=/tmp log",
            "git grep -Oid x",
            "git grep --open-files-in-pager=id x",
            "git clone --upload-pack=id x y",
            "git push --receive-pack=id origin",
            "git difftool -x id",
            "git config core.fsmonitor id",
            "git config --add core.pager id",
            "git submodule foreach id",
            "git bisect run id",
            "git filter-branch --tree-filter id",
            "cargo --config target.x86_64-unknown-linux-gnu.runner='id' run",
            "cargo +nightly build",
            "zip -TT 'sh -c id' a.zip x",
            "sort --compress-program=id x",
            "make --eval='x:=$(shell id)'",
            "npm test --script-shell=./x",
            "ssh -o ProxyCommand='id' host",
            "ssh -oProxyCommand=id host",
            "scp -S ./x a b:",
            "sed -n '1e id' README",
            "sed 's/x/id/e' README",
            "sed -e 's/x/y/' -e '1w /tmp/out' README",
            "sed --expression='1r /etc/shadow' README",
            "sed -f script.sed README",
            "sed '1!G;h;$!d;e id' x",
            "sed -n '/a/,/b/{p;e id\n}' x",
            "sed 'k' x",
            "awk 'BEGIN{system(\"id\")}'",
            "awk '{print | \"sh\"}' x",
            "awk 'BEGIN{\"id\" | getline x; print x}'",
            "awk '{print > \"/home/u/.bashrc\"}' x",
            "awk '{ printf \"%s\", $1 >> \"out\" }' x",
            "awk -f prog.awk x",
            "gawk -l filefuncs 'BEGIN{}'",
            "gawk '@load \"x\"; BEGIN{}'",
            "awk -e 'BEGIN{system(\"id\")}'",
            "busybox sed '1e id' x",
            "vim -c '!id' x",
            "gcc -wrapper ./x a.c",
        ] {
            assert!(check(c).is_some(), "not seen: {c}");
        }
    }

    #[test]
    fn everyday_uses_are_not_dangers() {
        for c in [
            "tar -xf x.tar -C build",
            "tar czf a.tgz src",
            "tar -tvf a.tar",
            "rsync -a src/ build/",
            "rg --files",
            "rg -n 'fn main' src",
            "find . -name '*.rs'",
            "git status",
            "git log --oneline -n 5",
            "git log -p",
            "git diff --stat",
            "git log -c",
            "git show HEAD:README.md",
            "git --exec-path",
            "git -C sub status",
            "git config --get user.name",
            "git config user.email",
            "git config --list",
            "git grep -n foo",
            "git format-patch -o out HEAD~1",
            "cargo test --color=always",
            "cargo build --release",
            "zip -r a.zip src",
            "sort -u -o out.txt x",
            "make test",
            "npm test",
            "ssh -o ConnectTimeout=5 host true",
            "sed -n '1,20p' README",
            "sed -i 's/foo/bar/g' src/a.rs",
            "sed -e 's/a/b/' -e '/^$/d' x",
            "sed 's|/usr|/opt|g' x",
            "sed -E 's/(a|b)+/x/2' x",
            "sed '/start/,/end/{/skip/d;s/x/y/}' x",
            "sed '$a\\\nend' x",
            "sed -n '/error/I p' x",
            "sed y/abc/xyz/ x",
            "awk '{print $1}' x",
            "awk -F: '$3 > 1000 {print $1}' /etc/passwd",
            "awk '/foo|bar/ {n++} END{print n}' x",
            "awk '{ if ($1 > 2 || $2 < 3) print ($1 > $2) }' x",
            "awk -v n=3 'NR % n == 0' x",
            "awk '{ s += $2 / 2 } END { print s / NR }' x",
            "gcc -O2 -o a a.c",
            "vim x",
        ] {
            assert_eq!(check(c), None, "refused: {c}");
        }
    }
}
