//! The gate's verdict table: every bypass class denied (several spellings each, with broad
//! entries configured), and commands admitted exactly as the user meant them.

use hookd::config::{AllowEntry, AllowLists, Mode, Origin};
use hookd::{DenyReason as R, Gate, Verdict};

fn entry(list: &str, pattern: &str) -> AllowEntry {
    AllowEntry {
        pattern: pattern.into(),
        list: list.parse::<Mode>().expect("a list key"),
        origin: Origin {
            file: "test".into(),
            line: 1,
            source: hookd::config::Source::Embedded,
        },
    }
}

fn broad_gate() -> Gate {
    let entries = [
        "echo( .*)?",
        "ls( .*)?",
        "git( .*)?",
        "find( .*)?",
        "cat .*",
        "grep .*",
        "printf .*",
        r"^gofmt -w \.$",
        r"\./scripts/fmt\.sh",
        "/usr/bin/find .*",
        "eval .*",
        "source .*",
        "exec .*",
        "declare .*",
        "let .*",
        "read .*",
        r"\[\[ .*",
        "time .*",
        "cd .*",
        "export .*",
        "command .*",
        "builtin .*",
        "set .*",
        "trap .*",
        r"\. .*",
        "env( .*)?",
        "FOO=1 echo a",
        "true",
    ];
    let mut all: Vec<AllowEntry> = entries.iter().map(|p| entry("all", p)).collect();
    all.push(entry("standard", r"cargo fmt --check"));
    Gate::new(&AllowLists::from_entries(all), ".infer/config.yaml")
}

enum Expect {
    Allow(&'static [&'static str]),
    Deny(R),
}
use Expect::{Allow, Deny};

fn cases() -> Vec<(String, Expect)> {
    let s = |c: &str, e: Expect| (c.to_string(), e);
    vec![
        // Operators: one command only.
        s("echo a; rm -rf /", Deny(R::Operator)),
        s("echo a;rm x", Deny(R::Operator)),
        s("echo a && rm x", Deny(R::Operator)),
        s("echo a || rm x", Deny(R::Operator)),
        s("echo a | sh", Deny(R::Operator)),
        s("echo a |& sh", Deny(R::Operator)),
        s("echo a & rm x", Deny(R::Operator)),
        s("echo a &", Deny(R::Operator)),
        s("echo a\nrm x", Deny(R::Operator)),
        s("echo a;", Deny(R::Operator)),
        s("ls\n", Deny(R::Operator)),
        s("echo a\\\nb", Deny(R::Operator)),
        s("echo a\n", Deny(R::Operator)),
        s("git status && git push", Deny(R::Operator)),
        s("ls | grep x", Deny(R::Operator)),
        // Command, process and arithmetic substitution.
        s("echo $(id)", Deny(R::Substitution)),
        s("echo `id`", Deny(R::Substitution)),
        s("echo \"$(id)\"", Deny(R::Substitution)),
        s("echo \"`id`\"", Deny(R::Substitution)),
        s("cat <(id)", Deny(R::Substitution)),
        s("echo >(id)", Deny(R::Substitution)),
        s("echo $((1+2))", Deny(R::Substitution)),
        s("echo $[1+2]", Deny(R::Substitution)),
        s("echo a$(id)b", Deny(R::Substitution)),
        s("$(id)", Deny(R::Substitution)),
        s("echo \"x$((2*3))\"", Deny(R::Substitution)),
        s("git log `whoami`", Deny(R::Substitution)),
        // Parameter expansion in every spelling.
        s("echo $HOME", Deny(R::Expansion)),
        s("echo ${HOME}", Deny(R::Expansion)),
        s("echo \"$HOME\"", Deny(R::Expansion)),
        s("echo $'\\x41'", Deny(R::Expansion)),
        // In `$'…'` a `\'` does not end the string: what follows the real end is unquoted.
        s("echo $'a\\'b' | sh", Deny(R::Operator)),
        s("echo $'\\'' ; id", Deny(R::Operator)),
        // After a redirection operator a word starts, so `#` starts a comment (bash: `>#x` is a
        // syntax error), whatever quote follows it.
        s("echo a >#x", Deny(R::Comment)),
        s("echo a <#h\"", Deny(R::Comment)),
        // `$$'…'` is the pid then an ordinary single-quoted string, not `$'…'`.
        s("echo $$'x\\' ; id", Deny(R::Expansion)),
        // bash: `$` then a quote; brush-parser: ANSI-C quoting. Refused rather than guessed.
        s("echo \\$'a b'", Deny(R::UnbalancedQuotes)),
        s("echo \\$'\\''\n7707771111>", Deny(R::UnbalancedQuotes)),
        s("echo '$'\"a b\"", Allow(&["echo", "$a b"])),
        s("echo $\"x\"", Deny(R::Expansion)),
        s("echo ${PATH//:/ }", Deny(R::Expansion)),
        s("echo $1", Deny(R::Expansion)),
        s("echo $@", Deny(R::Expansion)),
        s("echo a$HOME", Deny(R::Expansion)),
        s("echo ${!x}", Deny(R::Expansion)),
        s("echo \"${x:-$(id)}\"", Deny(R::Expansion)),
        s("echo $_", Deny(R::Expansion)),
        s("echo \"a$\"", Deny(R::Expansion)),
        // Tilde expansion.
        s("echo ~", Deny(R::Expansion)),
        s("echo ~/x", Deny(R::Expansion)),
        s("echo ~root", Deny(R::Expansion)),
        s("ls --dir=~/x", Deny(R::Expansion)),
        s("ls a:~/x", Deny(R::Expansion)),
        (format!("~{}/", "3".repeat(49)), Deny(R::Expansion)),
        s("echo ~+2", Deny(R::Expansion)),
        // Globs and braces, unquoted.
        s("ls *", Deny(R::Glob)),
        s("ls *.rs", Deny(R::Glob)),
        s("ls ?", Deny(R::Glob)),
        s("ls [ab]", Deny(R::Glob)),
        s("echo {a,b}", Deny(R::Glob)),
        s("echo {1..3}", Deny(R::Glob)),
        s("echo a{b,c}d", Deny(R::Glob)),
        s("cat /etc/pass*", Deny(R::Glob)),
        // Redirections other than the harmless ones.
        s("echo a > out.txt", Deny(R::Redirection)),
        s("echo a >> out.txt", Deny(R::Redirection)),
        s("cat < /etc/passwd", Deny(R::Redirection)),
        s("echo a 2> err.txt", Deny(R::Redirection)),
        s("echo a >| f", Deny(R::Redirection)),
        s("echo a &> out", Deny(R::Redirection)),
        s("echo a 3>&1", Deny(R::Redirection)),
        s("echo a <> f", Deny(R::Redirection)),
        s("echo a >/dev/nul", Deny(R::Redirection)),
        s("echo a >~/.bashrc", Deny(R::Redirection)),
        s("echo a > ~/.bashrc", Deny(R::Expansion)),
        s("echo a >&3", Deny(R::Redirection)),
        s("> f echo a", Deny(R::Redirection)),
        s("020040000000>c", Deny(R::Redirection)),
        (
            format!("{}h(){}o", "(".repeat(24), "(".repeat(4)),
            Deny(R::Compound),
        ),
        s("echo 99999999999>/dev/null", Deny(R::Redirection)),
        // Here-documents and here-strings.
        s("cat <<EOF\nx\nEOF", Deny(R::Heredoc)),
        s("cat <<< hi", Deny(R::Heredoc)),
        s("cat <<-EOF\n\tx\nEOF", Deny(R::Heredoc)),
        s(r#"ce<<-'''''' ''''''#q''' '''''#q "#, Deny(R::Heredoc)),
        // Subshells, groups, control flow, functions.
        s("(echo a)", Deny(R::Compound)),
        s("{ echo a; }", Deny(R::Compound)),
        s("if true; then echo; fi", Deny(R::Compound)),
        s("for i in 1; do echo; done", Deny(R::Compound)),
        s("while true; do echo; done", Deny(R::Compound)),
        s("until false; do echo; done", Deny(R::Compound)),
        s("case a in a) echo;; esac", Deny(R::Compound)),
        s("f() { echo; }", Deny(R::Compound)),
        s("function f { echo; }", Deny(R::Compound)),
        // Assignments and environment prefixes, even when an entry spells them out.
        s("FOO=1 echo a", Deny(R::Assignment)),
        s("BASH_ENV=/tmp/x echo", Deny(R::Assignment)),
        s("PATH=. ls", Deny(R::Assignment)),
        s("LD_PRELOAD=/tmp/x.so ls", Deny(R::Assignment)),
        s("a=b", Deny(R::Assignment)),
        // Builtins and keywords as the program, even with a matching entry.
        s("eval echo hi", Deny(R::Builtin)),
        s("source ./x", Deny(R::Builtin)),
        s(". ./x", Deny(R::Builtin)),
        s("exec ls", Deny(R::Builtin)),
        s("declare -x a", Deny(R::Builtin)),
        s("let a", Deny(R::Builtin)),
        s("read x", Deny(R::Builtin)),
        s("[[ -f x ]]", Deny(R::Builtin)),
        s("export A", Deny(R::Builtin)),
        s("cd /", Deny(R::Builtin)),
        s("set -e", Deny(R::Builtin)),
        s("trap x EXIT", Deny(R::Builtin)),
        s("builtin echo", Deny(R::Builtin)),
        s("command ls", Deny(R::Builtin)),
        s("time ls", Deny(R::Builtin)),
        s("! ls", Deny(R::Builtin)),
        // Comments.
        s("echo a # rm -rf /", Deny(R::Comment)),
        s("echo a #", Deny(R::Comment)),
        s("# just a comment", Deny(R::Comment)),
        s("ls #-la", Deny(R::Comment)),
        // Control and invisible characters, anywhere.
        s("echo a\0b", Deny(R::ControlCharacter)),
        s("echo \u{200B}", Deny(R::ControlCharacter)),
        s("echo a\u{202E}b", Deny(R::ControlCharacter)),
        s("echo a\u{00A0}b", Deny(R::ControlCharacter)),
        s("echo \x1b[31mred", Deny(R::ControlCharacter)),
        s("echo a\rb", Deny(R::ControlCharacter)),
        s("echo a\r\nrm x", Deny(R::ControlCharacter)),
        s("echo \u{2028}", Deny(R::ControlCharacter)),
        s("echo \u{FEFF}x", Deny(R::ControlCharacter)),
        s("echo 'a\u{200D}b'", Deny(R::ControlCharacter)),
        s("echo \"\u{7F}\"", Deny(R::ControlCharacter)),
        // Unbalanced quotes.
        s("echo 'a", Deny(R::UnbalancedQuotes)),
        s("echo \"a", Deny(R::UnbalancedQuotes)),
        s("echo a'", Deny(R::UnbalancedQuotes)),
        s("echo \"a'b", Deny(R::UnbalancedQuotes)),
        // Size and emptiness.
        (format!("echo {}", "a".repeat(9000)), Deny(R::TooLong)),
        s("", Deny(R::Empty)),
        s("   ", Deny(R::Empty)),
        s("\t", Deny(R::Empty)),
        // find with actions, under broad entries.
        s("find . -exec rm {} \\;", Deny(R::DangerousArgument)),
        s("find . -delete", Deny(R::DangerousArgument)),
        s("find . -execdir sh -c x \\;", Deny(R::DangerousArgument)),
        s("find / -fprint /tmp/x", Deny(R::DangerousArgument)),
        s("find . -ok rm \\;", Deny(R::DangerousArgument)),
        s("find . -fls x", Deny(R::DangerousArgument)),
        s("/usr/bin/find . -delete", Deny(R::DangerousArgument)),
        s("find . -exec rm {} ;", Deny(R::Operator)),
        // Not on the list: anchored entries mean the whole command.
        s("rm -rf /", Deny(R::NotAllowlisted)),
        s("curl http://example.invalid", Deny(R::NotAllowlisted)),
        s("gofmt -w src", Deny(R::NotAllowlisted)),
        s("gofmt -w . extra", Deny(R::NotAllowlisted)),
        s("xecho a", Deny(R::NotAllowlisted)),
        s("echox a", Deny(R::NotAllowlisted)),
        s("./scripts/fmt.sh --all", Deny(R::NotAllowlisted)),
        s("cat", Deny(R::NotAllowlisted)),
        // Admitted, as the user meant.
        s("echo hello", Allow(&["echo", "hello"])),
        s("echo", Allow(&["echo"])),
        s("true", Allow(&["true"])),
        s("echo 'a && b'", Allow(&["echo", "a && b"])),
        s("echo \"a && b\"", Allow(&["echo", "a && b"])),
        s(
            "grep --search \"a && b\" src",
            Allow(&["grep", "--search", "a && b", "src"]),
        ),
        s("echo 'line1\nline2'", Allow(&["echo", "line1\nline2"])),
        s("echo \"line1\nline2\"", Allow(&["echo", "line1\nline2"])),
        s("echo '$(rm -rf /)'", Allow(&["echo", "$(rm -rf /)"])),
        s(
            "echo '$HOME' '`id`' '*' '~'",
            Allow(&["echo", "$HOME", "`id`", "*", "~"]),
        ),
        s("echo \"a\\\"b\"", Allow(&["echo", "a\"b"])),
        s("echo \"\\$HOME\"", Allow(&["echo", "$HOME"])),
        s("echo \"a\\qb\"", Allow(&["echo", "a\\qb"])),
        s("echo a\\ b", Allow(&["echo", "a b"])),
        s("echo a\\ ~b", Allow(&["echo", "a ~b"])),
        s("echo a\\;b", Allow(&["echo", "a;b"])),
        s("echo 'it''s'", Allow(&["echo", "its"])),
        s("echo \"it's\"", Allow(&["echo", "it's"])),
        s("echo 'a'\"b\"c", Allow(&["echo", "abc"])),
        s("ls -la", Allow(&["ls", "-la"])),
        s("ls -la 2>/dev/null", Allow(&["ls", "-la"])),
        s("ls >/dev/null 2>&1", Allow(&["ls"])),
        s("ls &>/dev/null", Allow(&["ls"])),
        s("ls 2>&1", Allow(&["ls"])),
        s("ls > /dev/null", Allow(&["ls"])),
        s("ls >>/dev/null", Allow(&["ls"])),
        s("echo a >&2", Allow(&["echo", "a"])),
        s("echo a 1>&2", Allow(&["echo", "a"])),
        s("gofmt -w .", Allow(&["gofmt", "-w", "."])),
        s("gofmt -w . 2>&1", Allow(&["gofmt", "-w", "."])),
        s("git show stash@{0}", Allow(&["git", "show", "stash@{0}"])),
        s("git diff HEAD~1", Allow(&["git", "diff", "HEAD~1"])),
        s(
            "git log --format='%H %s'",
            Allow(&["git", "log", "--format=%H %s"]),
        ),
        s(
            "git commit -m 'fix: a; b && c | d'",
            Allow(&["git", "commit", "-m", "fix: a; b && c | d"]),
        ),
        s("echo é ü 日本", Allow(&["echo", "é", "ü", "日本"])),
        s("echo a=b", Allow(&["echo", "a=b"])),
        s("echo --x=1", Allow(&["echo", "--x=1"])),
        s("echo ''", Allow(&["echo", ""])),
        s("echo \"\"", Allow(&["echo", ""])),
        s("./scripts/fmt.sh", Allow(&["./scripts/fmt.sh"])),
        s("echo\tx", Allow(&["echo", "x"])),
        s("  echo   spaced  ", Allow(&["echo", "spaced"])),
        s("echo a#b", Allow(&["echo", "a#b"])),
        s("echo 'a#b'", Allow(&["echo", "a#b"])),
        s("echo 100%", Allow(&["echo", "100%"])),
        s("echo a,b", Allow(&["echo", "a,b"])),
        s("echo {}", Allow(&["echo", "{}"])),
        s("echo -- -x", Allow(&["echo", "--", "-x"])),
        s("echo 'a\tb'", Allow(&["echo", "a\tb"])),
        s(
            "find . -name '*.rs'",
            Allow(&["find", ".", "-name", "*.rs"]),
        ),
        s("env", Allow(&["env"])),
        s("cargo fmt --check", Allow(&["cargo", "fmt", "--check"])),
    ]
}

#[test]
fn verdict_table() {
    let gate = broad_gate();
    let cases = cases();
    assert!(cases.len() >= 150, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for (cmd, expect) in &cases {
        let got = gate.verdict(cmd, Mode::Standard);
        let ok = match (expect, &got) {
            (Allow(argv), Verdict::Allowed(a)) => {
                a.argv == argv.iter().map(|s| s.to_string()).collect::<Vec<_>>()
            }
            (Deny(reason), Verdict::Denied(d)) => d.reason == *reason && !d.hint.is_empty(),
            _ => false,
        };
        if !ok {
            failures.push(format!("{cmd:?}: got {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn modes_select_lists() {
    let gate = broad_gate();
    assert!(gate
        .verdict("cargo fmt --check", Mode::Standard)
        .is_allowed());
    let Verdict::Denied(d) = gate.verdict("cargo fmt --check", Mode::Plan) else {
        panic!()
    };
    assert_eq!(d.reason, R::NotAllowlisted);
    assert!(d.hint.contains("tools.bash.mode.plan.allow"), "{}", d.hint);
    assert!(
        gate.verdict("echo hi", Mode::Plan).is_allowed(),
        "`all` applies to every mode"
    );
}

#[test]
fn an_empty_list_admits_nothing() {
    let gate = Gate::new(&AllowLists::default(), ".infer/config.yaml");
    for cmd in ["true", "echo hi", "ls"] {
        let Verdict::Denied(d) = gate.verdict(cmd, Mode::Standard) else {
            panic!("{cmd} allowed")
        };
        assert_eq!(d.reason, R::NotAllowlisted);
    }
}

#[test]
fn unrestricted_entries_still_face_the_parser() {
    let gate = Gate::new(&AllowLists::from_entries([entry("all", ".*")]), "c.yaml");
    assert!(gate.verdict("rm -rf /tmp/x", Mode::Auto).is_allowed());
    for cmd in ["echo a; rm x", "echo $(id)", "FOO=1 ls", "eval x", "ls > f"] {
        assert!(!gate.verdict(cmd, Mode::Auto).is_allowed(), "{cmd}");
    }
    assert!(hookd::gate::is_unrestricted(".*"));
    assert!(hookd::gate::is_unrestricted("^.*$"));
    assert!(hookd::gate::is_unrestricted("(?s).+"));
    assert!(!hookd::gate::is_unrestricted("echo .*"));
    assert!(
        hookd::gate::is_unrestricted("[^;]*"),
        "admits every command without `;`: flagged"
    );
    assert!(!hookd::gate::is_unrestricted("git status"));
}

#[test]
fn hint_for_an_unlisted_command_is_an_entry_that_admits_exactly_it() {
    let gate = broad_gate();
    for cmd in [
        "rm -rf ./tmp",
        "cargo test -- --nocapture",
        "make 'a.b+c(d)|e'",
    ] {
        let Verdict::Denied(d) = gate.verdict(cmd, Mode::Plan) else {
            panic!("{cmd}")
        };
        assert_eq!(d.reason, R::NotAllowlisted, "{cmd}");
        let suggested = hookd::gate::suggested_entry(cmd);
        let quoted = format!("'{}'", suggested.replace('\'', "''"));
        assert!(d.hint.contains(&quoted), "{}", d.hint);
        assert!(d.hint.contains(".infer/config.yaml"), "{}", d.hint);
        let g2 = Gate::new(
            &AllowLists::from_entries([entry("plan", &suggested)]),
            "c.yaml",
        );
        assert!(
            g2.verdict(cmd, Mode::Plan).is_allowed(),
            "{cmd} with {suggested}"
        );
        assert!(!g2.verdict(&format!("{cmd} x"), Mode::Plan).is_allowed());
    }
}

/// Inputs the fuzzer found to panic or hang the grammar: each is denied, promptly.
#[test]
fn fuzz_findings_are_denied_promptly() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gate");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let command = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let gate = Gate::new(&AllowLists::from_entries([entry_for_all(".*")]), "t");
            let _ = tx.send(gate.verdict(&command, Mode::Standard));
        });
        let verdict = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("{} took over 5 s", path.display()));
        assert!(!verdict.is_allowed(), "{}: {verdict:?}", path.display());
        n += 1;
    }
    assert!(n >= 5);
}

fn entry_for_all(pattern: &str) -> AllowEntry {
    entry("all", pattern)
}

#[test]
fn a_quoted_digit_run_before_a_quoted_angle_is_just_a_word() {
    let gate = Gate::new(&AllowLists::from_entries([entry_for_all(".*")]), "t");
    for cmd in ["7707711171\">+\"", "'7707711171>+'", "echo '12345678901>x'"] {
        assert!(gate.verdict(cmd, Mode::Standard).is_allowed(), "{cmd}");
    }
    assert!(!gate
        .verdict("echo 12345678901>x", Mode::Standard)
        .is_allowed());
}
