//! Wrappers: programs that run another program given in their arguments (`timeout 600 cargo
//! test`, `env RUST_LOG=debug cargo test`, `nice make`, `xargs -0 grep -l x`). An entry for the
//! wrapper (`^timeout( .*)?$`) says nothing about what it runs, so the inner command faces the
//! gate as a command of its own; a wrapper whose inner command cannot be determined is refused.
//!
//! Options are read as GNU coreutils, util-linux and findutils document them; an option this
//! reader does not know makes the inner command undetermined, never skipped.

use super::options::{abbreviates, long_name};

/// What a wrapper command runs.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Inner {
    /// Not a wrapper, or a wrapper given no command (`env` alone prints the environment).
    None,
    /// The inner command starts at this word. `appended` when the wrapper adds words the gate
    /// cannot see (xargs's input); `sets` names the variables it assigns (`env A=1 cmd`).
    At {
        at: usize,
        appended: bool,
        sets: Vec<String>,
    },
    /// A wrapper whose inner command this reader cannot determine: why.
    Unknown(String),
}

/// How a wrapper's options are read.
#[derive(Clone, Copy)]
struct Spec {
    /// Short options that take a value (`-s SIG`, `-sSIG`).
    short_value: &'static str,
    /// Short options without a value.
    short_flag: &'static str,
    /// Long options that take a value (`--signal=SIG`, `--signal SIG`).
    long_value: &'static [&'static str],
    /// Long options whose value is optional, given only with `=`.
    long_optional: &'static [&'static str],
    /// Long options without a value.
    long_flag: &'static [&'static str],
    /// Options (short letters or long names) after which no command runs or that run a shell
    /// string: their presence makes the inner command undetermined.
    refused: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `flock FILE`, `chrt PRIORITY`).
    operands: usize,
}

const NONE: &[&str] = &[];

/// A wrapper that takes no option and no operand (`nohup CMD`); the table's rows start here.
const BARE: Spec = Spec {
    short_value: "",
    short_flag: "",
    long_value: NONE,
    long_optional: NONE,
    long_flag: NONE,
    refused: NONE,
    operands: 0,
};

/// What each wrapper takes, by its names (its options per [`Spec`]).
const SPECS: &[(&[&str], Spec)] = &[
    (
        &["timeout"],
        Spec {
            short_value: "sk",
            short_flag: "v",
            long_value: &["signal", "kill-after"],
            long_flag: &["preserve-status", "foreground", "verbose"],
            operands: 1,
            ..BARE
        },
    ),
    (
        &["nice"],
        Spec {
            short_value: "n",
            long_value: &["adjustment"],
            ..BARE
        },
    ),
    // bash's builtins, in a model's command only (hooks run without a shell):
    // `command -v/-V` describe a name instead of running it.
    (
        &["command"],
        Spec {
            short_flag: "p",
            refused: &["v", "V"],
            ..BARE
        },
    ),
    (
        &["exec"],
        Spec {
            short_value: "a",
            short_flag: "cl",
            ..BARE
        },
    ),
    (
        &["nohup", "unbuffer", "catchsegv", "dbus-run-session"],
        BARE,
    ),
    (
        &["stdbuf"],
        Spec {
            short_value: "ioe",
            long_value: &["input", "output", "error"],
            ..BARE
        },
    ),
    (
        &["ionice"],
        Spec {
            short_value: "cn",
            short_flag: "tu",
            long_value: &["class", "classdata"],
            long_flag: &["ignore"],
            refused: &["p", "P", "u", "pid", "pgid", "uid"],
            ..BARE
        },
    ),
    (
        &["setsid"],
        Spec {
            short_flag: "cfw",
            long_flag: &["ctty", "fork", "wait"],
            ..BARE
        },
    ),
    (
        &["taskset"],
        Spec {
            short_flag: "ac",
            long_flag: &["all-tasks", "cpu-list"],
            refused: &["p", "pid"],
            operands: 1,
            ..BARE
        },
    ),
    (
        &["chrt"],
        Spec {
            short_value: "TPD",
            short_flag: "bdfiorRamv",
            long_value: &["sched-runtime", "sched-period", "sched-deadline"],
            long_flag: &[
                "batch",
                "deadline",
                "fifo",
                "idle",
                "other",
                "rr",
                "reset-on-fork",
                "all-tasks",
                "max",
                "verbose",
            ],
            refused: &["p", "m", "pid", "max"],
            operands: 1,
            ..BARE
        },
    ),
    (
        &["flock"],
        Spec {
            short_value: "Ew",
            short_flag: "sxunoF",
            long_value: &["conflict-exit-code", "timeout", "wait"],
            long_flag: &[
                "shared",
                "exclusive",
                "unlock",
                "nonblock",
                "nb",
                "close",
                "no-fork",
                "verbose",
            ],
            refused: &["c", "command"],
            operands: 1,
            ..BARE
        },
    ),
    (
        &["time"],
        Spec {
            short_value: "of",
            short_flag: "apvq",
            long_value: &["output", "format"],
            long_flag: &["append", "portability", "verbose", "quiet"],
            ..BARE
        },
    ),
    (
        &["strace", "ltrace"],
        Spec {
            short_value: "abeEIoOpPsSuUX",
            short_flag: "cCdDfFhiqrtTvVwxyYzZkn",
            long_value: &[
                "output",
                "signal",
                "trace",
                "env",
                "string-limit",
                "user",
                "attach",
                "trace-path",
            ],
            long_flag: &[
                "follow-forks",
                "output-separately",
                "summary-only",
                "summary",
            ],
            refused: &["p", "attach"],
            ..BARE
        },
    ),
];

fn spec(program: &str) -> Option<Spec> {
    SPECS
        .iter()
        .find(|(names, _)| names.contains(&program))
        .map(|(_, spec)| *spec)
}

impl Spec {
    /// The long option `w` (`--name[=value]`): how many words it takes, itself included, or
    /// why the gate cannot read past it.
    fn long(
        &self,
        program: &str,
        w: &str,
        name: &str,
        value: Option<&str>,
    ) -> Result<usize, String> {
        // An unambiguous abbreviation, or the full name.
        let pick = |list: &[&'static str]| {
            let mut hits = list.iter().filter(|full| abbreviates(name, full));
            match (hits.next(), hits.next()) {
                (Some(one), None) => Some(*one),
                _ => list.iter().find(|full| **full == name).copied(),
            }
        };
        if pick(self.refused).is_some() {
            return Err(format!("`{program} {w}` runs no command the gate can see"));
        }
        if pick(self.long_value).is_some() {
            Ok(if value.is_some() { 1 } else { 2 })
        } else if pick(self.long_optional).is_some()
            || (pick(self.long_flag).is_some() && value.is_none())
        {
            Ok(1)
        } else {
            Err(format!(
                "`{program}` option `{w}` is not one the gate reads"
            ))
        }
    }

    /// Short options `-letters`: how many words they take, theirs included, or why the gate
    /// cannot read past them.
    fn short(&self, program: &str, letters: &str) -> Result<usize, String> {
        // `nice -10 cmd`: the old form of `-n 10`.
        if program == "nice" && letters.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(1);
        }
        for (at, c) in letters.char_indices() {
            if self
                .refused
                .iter()
                .any(|r| r.len() == 1 && r.starts_with(c))
            {
                return Err(format!("`{program} -{c}` runs no command the gate can see"));
            }
            if self.short_value.contains(c) {
                // Its value is the rest of the word, or the next word.
                return Ok(if at + c.len_utf8() == letters.len() {
                    2
                } else {
                    1
                });
            }
            if !self.short_flag.contains(c) {
                return Err(format!(
                    "`{program}` option `-{c}` is not one the gate reads"
                ));
            }
        }
        Ok(1)
    }
}

/// Variables an `env NAME=VALUE` may set before an inner command: settings known not to load
/// or run code (locale, colours, logging, test knobs). Any other name, or one an entry does not
/// name, is an assignment the gate refuses, as it refuses `NAME=VALUE cmd` (PATH, LD_PRELOAD,
/// GIT_CONFIG_*, PYTHONPATH, RUSTC_WRAPPER, TAR_OPTIONS… all change what runs).
const HARMLESS_VARIABLES: &[&str] = &[
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "CI",
    "DEBUG",
    "VERBOSE",
    "LOG_LEVEL",
    "RUST_LOG",
    "RUST_BACKTRACE",
    "RUST_TEST_THREADS",
    "RUST_MIN_STACK",
    "CARGO_TERM_COLOR",
    "CARGO_TERM_VERBOSE",
    "CARGO_INCREMENTAL",
    "NODE_ENV",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONHASHSEED",
    "PYTHONIOENCODING",
    "GOTRACEBACK",
    "GOMAXPROCS",
    "CGO_ENABLED",
    "GOOS",
    "GOARCH",
];

/// Whether `name` is one of [`HARMLESS_VARIABLES`].
pub(super) fn harmless_variable(name: &str) -> bool {
    HARMLESS_VARIABLES
        .iter()
        .any(|h| match h.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => *h == name,
        })
}

/// Programs that write or remove the files named by their arguments: under `xargs`, those
/// names come from its input, which neither the gate nor the protected-path check sees.
const WRITES_ITS_ARGUMENTS: &[&str] = &[
    "rm", "rmdir", "unlink", "shred", "mv", "cp", "ln", "install", "touch", "truncate", "tee",
    "dd", "chmod", "chown", "chgrp", "chattr", "setfacl", "mkdir", "mkfifo", "mknod", "sed",
    "perl", "ruby", "python", "python3", "patch", "tar", "unzip", "rsync", "git", "sh", "bash",
    "zsh", "dash", "env", "xargs", "find", "awk", "gawk", "mawk",
];

/// Whether `program` is a wrapper this module unwraps.
pub(super) fn is_wrapper(program: &str) -> bool {
    matches!(program, "env" | "xargs" | "busybox" | "toybox") || spec(program).is_some()
}

/// What `argv` (already admitted as a whole) runs, if it is a wrapper.
pub(super) fn inner(argv: &[String]) -> Inner {
    let Some(program) = std::path::Path::new(&argv[0])
        .file_name()
        .and_then(|n| n.to_str())
    else {
        return Inner::None;
    };
    match program {
        "env" => env(argv),
        "xargs" => xargs(argv),
        "busybox" | "toybox" if argv.len() > 1 => match inner(&argv[1..]) {
            Inner::At { at, appended, sets } => Inner::At {
                at: at + 1,
                appended,
                sets,
            },
            other => other,
        },
        _ => match spec(program) {
            Some(spec) => by_spec(program, &spec, argv),
            None => Inner::None,
        },
    }
}

/// Where a wrapper's options end, reading from `argv[1]`: after `--`, or at the first word
/// `read` calls an operand (`None`); `read` says how many words an option takes, itself
/// included, or why the gate cannot read past it.
fn options_end(
    argv: &[String],
    mut read: impl FnMut(&str) -> Option<Result<usize, String>>,
) -> Result<usize, String> {
    let mut i = 1;
    while let Some(w) = argv.get(i) {
        if w == "--" {
            return Ok(i + 1);
        }
        match read(w) {
            Some(words) => i += words?,
            None => break,
        }
    }
    Ok(i)
}

/// A wrapper read by its [`Spec`]. These wrappers stop reading options at the first operand
/// (their getopt strings start with `+`): what follows their fixed operands is the command.
fn by_spec(program: &str, spec: &Spec, argv: &[String]) -> Inner {
    let options = options_end(argv, |w| {
        if let Some((name, value)) = long_name(w) {
            Some(spec.long(program, w, name, value))
        } else {
            let letters = w.strip_prefix('-').filter(|l| !l.is_empty())?;
            Some(spec.short(program, letters))
        }
    });
    let mut i = match options {
        Ok(i) => i,
        Err(why) => return Inner::Unknown(why),
    };
    i += spec.operands;
    // `flock FILE -c STRING` runs a shell string.
    if argv
        .get(i)
        .is_some_and(|w| spec.refused.contains(&"command") && (w == "-c" || w == "--command"))
    {
        return Inner::Unknown(format!("`{program} … -c` runs a shell string"));
    }
    if i >= argv.len() {
        // Nothing runs (`nice` alone prints the niceness; `timeout 5` is an error).
        return Inner::None;
    }
    Inner::At {
        at: i,
        appended: false,
        sets: Vec::new(),
    }
}

/// `env [-i] [-u NAME] [NAME=VALUE…] [COMMAND…]`. `-S` (a split string) and `-C` (another
/// directory, from which the command's paths would be read) make the command undetermined.
fn env(argv: &[String]) -> Inner {
    let mut i = 1;
    let mut sets = Vec::new();
    while i < argv.len() {
        let w = argv[i].as_str();
        if w == "--" || w == "-" {
            i += 1;
            continue;
        }
        let long = w.strip_prefix("--");
        let abbreviates = |full: &str| {
            long.is_some_and(|l| {
                !l.is_empty() && full.starts_with(l.split('=').next().unwrap_or(l))
            })
        };
        if abbreviates("split-string")
            || abbreviates("chdir")
            || (w.starts_with('-') && !w.starts_with("--") && (w.contains('S') || w.contains('C')))
        {
            return Inner::Unknown(format!(
                "`env {w}` makes the command one the gate cannot read"
            ));
        }
        if abbreviates("unset") && !w.contains('=') {
            i += 2;
            continue;
        }
        if long.is_some() {
            let known = [
                "ignore-environment",
                "null",
                "unset",
                "debug",
                "block-signal",
                "default-signal",
                "ignore-signal",
                "list-signal-handling",
            ];
            if !known.iter().any(|k| abbreviates(k)) {
                return Inner::Unknown(format!("`env` option `{w}` is not one the gate reads"));
            }
            i += 1;
            continue;
        }
        if let Some(letters) = w.strip_prefix('-') {
            if letters.ends_with('u') {
                i += 2;
                continue;
            }
            if letters.contains('u') || letters.chars().all(|c| matches!(c, 'i' | '0' | 'v')) {
                i += 1;
                continue;
            }
            return Inner::Unknown(format!("`env` option `{w}` is not one the gate reads"));
        }
        break;
    }
    // After the options, assignments until the command (options end at the first operand).
    while let Some((name, _)) = argv.get(i).and_then(|w| w.split_once('=')) {
        sets.push(name.to_string());
        i += 1;
    }
    if i >= argv.len() {
        return Inner::None;
    }
    Inner::At {
        at: i,
        appended: false,
        sets,
    }
}

/// xargs's options (GNU findutils): short ones taking a value, short flags, long ones.
const XARGS_VALUE: &str = "adEILnPs";
/// xargs's short flags.
const XARGS_FLAG: &str = "0oprtx";
/// xargs's long options taking a value.
const XARGS_LONG_VALUE: &[&str] = &[
    "arg-file",
    "delimiter",
    "max-args",
    "max-procs",
    "max-chars",
    "process-slot-var",
];
/// xargs's long options with an optional attached value.
const XARGS_LONG_OPTIONAL: &[&str] = &["eof", "replace", "max-lines"];
/// xargs's long flags.
const XARGS_LONG_FLAG: &[&str] = &[
    "null",
    "open-tty",
    "interactive",
    "no-run-if-empty",
    "verbose",
    "exit",
    "show-limits",
];

/// `xargs [OPTIONS] [COMMAND [ARGS]]`: the command (default `echo`) gets words from xargs's
/// input appended, or put in place of `-I`'s placeholder.
fn xargs(argv: &[String]) -> Inner {
    let options = options_end(argv, |w| {
        if let Some((name, value)) = long_name(w) {
            let is = |list: &[&str]| list.iter().any(|f| abbreviates(name, f));
            return Some(if is(XARGS_LONG_VALUE) {
                Ok(if value.is_some() { 1 } else { 2 })
            } else if is(XARGS_LONG_OPTIONAL) || is(XARGS_LONG_FLAG) {
                Ok(1)
            } else {
                Err(format!("`xargs` option `{w}` is not one the gate reads"))
            });
        }
        let letters = w.strip_prefix('-').filter(|l| !l.is_empty())?;
        for (at, c) in letters.char_indices() {
            // `-e[EOF]`, `-i[REPLACE]`, `-l[N]` take only an attached value.
            if matches!(c, 'e' | 'i' | 'l') {
                break;
            }
            if XARGS_VALUE.contains(c) {
                return Some(Ok(if at + 1 == letters.len() { 2 } else { 1 }));
            }
            if !XARGS_FLAG.contains(c) {
                return Some(Err(format!(
                    "`xargs` option `-{c}` is not one the gate reads"
                )));
            }
        }
        Some(Ok(1))
    });
    let i = match options {
        Ok(i) => i,
        Err(why) => return Inner::Unknown(why),
    };
    if i >= argv.len() {
        // The default command is `echo`.
        return Inner::None;
    }
    let program = std::path::Path::new(&argv[i])
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if WRITES_ITS_ARGUMENTS.contains(&program) || super::options::has_rules(program) {
        return Inner::Unknown(format!(
            "`xargs {program}` gets words from its input that the gate cannot check"
        ));
    }
    Inner::At {
        at: i,
        appended: true,
        sets: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(command: &str) -> Inner {
        inner(&crate::gate::argv_of(command).expect(command))
    }

    fn at(command: &str) -> Option<String> {
        let argv = crate::gate::argv_of(command).unwrap();
        match inner(&argv) {
            Inner::At { at, .. } => Some(argv[at..].join(" ")),
            _ => None,
        }
    }

    #[test]
    fn the_inner_command_is_found() {
        for (command, inner) in [
            ("timeout 600 cargo test", "cargo test"),
            ("timeout -s KILL 5 make", "make"),
            ("timeout --signal=TERM -k 3 5s make -j4", "make -j4"),
            ("timeout --preserve-status 5 ls", "ls"),
            ("nice make", "make"),
            ("nice -n 10 make", "make"),
            ("nice -10 make", "make"),
            ("nohup cargo build", "cargo build"),
            ("stdbuf -oL grep x", "grep x"),
            ("stdbuf -o L grep x", "grep x"),
            ("ionice -c3 make", "make"),
            ("setsid -f sleep 1", "sleep 1"),
            ("taskset -c 0 make", "make"),
            ("taskset 0x1 make", "make"),
            ("chrt -b 0 make", "make"),
            ("flock /tmp/l make", "make"),
            ("flock -w 5 /tmp/l make", "make"),
            ("env RUST_LOG=debug cargo test", "cargo test"),
            ("env -i PATH=/bin ls", "ls"),
            ("env -u HOME ls", "ls"),
            ("env -- ls", "ls"),
            ("xargs grep -l unsafe", "grep -l unsafe"),
            ("xargs -0 -n 1 grep -l x", "grep -l x"),
            ("xargs -I{} echo {}", "echo {}"),
            ("busybox timeout 5 ls", "ls"),
            ("/usr/bin/time -v make", "make"),
            ("strace -f -o /tmp/t make", "make"),
        ] {
            assert_eq!(at(command).as_deref(), Some(inner), "{command}");
        }
    }

    #[test]
    fn undetermined_and_absent_commands() {
        for command in [
            "env -S 'touch x'",
            "env --split-string='touch x'",
            "env -C /tmp touch x",
            "env --chdir=/tmp touch x",
            "timeout --bogus 5 ls",
            "flock -c 'touch x' /tmp/l",
            "flock /tmp/l -c 'touch x'",
            "ionice -p 1",
            "taskset -p 1",
            "xargs rm",
            "xargs -0 sed -i s/a/b/",
            "xargs tar -xf a.tar",
            "xargs --bogus ls",
        ] {
            assert!(
                matches!(of(command), Inner::Unknown(_)),
                "{command}: {:?}",
                of(command)
            );
        }
        for command in [
            "env",
            "env -i",
            "nice",
            "timeout 5",
            "xargs",
            "xargs -0",
            "ls -l",
            "cargo test",
        ] {
            assert_eq!(of(command), Inner::None, "{command}");
        }
    }
}
