//! Properties of the gate, checked against real bash: what the gate admits is exactly the argv
//! bash would build, and re-quoting an admitted argv gives the same verdict and argv.

use std::process::Command;

use hookd::config::{AllowEntry, AllowLists, Mode, Origin};
use hookd::{Gate, Verdict};
use proptest::prelude::*;

fn open_gate() -> Gate {
    let e = AllowEntry {
        pattern: ".*".into(),
        list: "all",
        origin: Origin {
            file: "t".into(),
            line: 1,
            source: hookd::config::Source::Embedded,
        },
    };
    Gate::new(&AllowLists::from_entries([e]), "t")
}

/// Quote one argument for bash: single quotes, with `'` as `'\''`.
fn sh_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// The argv bash builds for `cmd` (its first word replaced by a printing function), in a
/// directory with files a glob would match and a HOME a tilde would expand to.
fn bash_argv(cmd: &str, dir: &std::path::Path) -> Option<Vec<String>> {
    let script = format!("__p() {{ printf '%s\\0' \"$@\"; }}\n__p {cmd}");
    let out = Command::new("bash")
        .arg("--noprofile")
        .arg("--norc")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env_clear()
        .env("HOME", "/home-expanded")
        .env("PATH", "/usr/bin:/bin")
        .env("X", "expanded")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.split_terminator('\0').map(String::from).collect())
}

fn fixture_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for f in ["a", "b", "ab", "a b", "x.rs"] {
        std::fs::write(dir.path().join(f), "").unwrap();
    }
    dir
}

/// Commands built from shell-meaningful pieces: most are denied; those admitted must agree with bash.
fn shellish() -> impl Strategy<Value = String> {
    let risky = prop::sample::select(vec![
        "'",
        "\"",
        "\\",
        "$X",
        "${X}",
        "$(echo z)",
        "`echo z`",
        "*",
        "?",
        "[a]",
        "{a,b}",
        "~",
        "#",
        ";",
        "&",
        "|",
        "\n",
        "!",
        "(",
        ")",
        "$'q'",
        "<",
        "a=~",
        "{1..2}",
    ]);
    let benign = prop::sample::select(vec![
        " ", " ", "a", "b", "-x", "é", "=", ":", ",", "'a b'", "\"c d\"", "'$X'", "\"\\$X\"",
        "a\\ b", "'*'", "\"'\"", "'\"'", "\\'", "'#'", "\"a;b\"", "'|'", "\t", "\"\\\\\"", "{}",
        "@{0}", "HEAD~1",
    ]);
    let piece = prop_oneof![1 => risky.prop_map(String::from), 5 => benign.prop_map(String::from), 1 => "[a-z]{1,3}"];
    prop::collection::vec(piece, 1..10).prop_map(|v| format!("echo {}", v.concat()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn admitted_commands_mean_to_bash_what_they_mean_to_the_gate(cmd in shellish()) {
        let gate = open_gate();
        if let Verdict::Allowed(a) = gate.verdict(&cmd, Mode::Auto) {
            prop_assume!(!cmd.contains('>')); // harmless redirections are dropped, bash would apply them
            let dir = fixture_dir();
            let bash = bash_argv(&cmd, dir.path());
            prop_assert_eq!(Some(a.argv), bash, "command {:?}", cmd);
        }
    }

    #[test]
    fn requoting_an_admitted_argv_is_a_fixed_point(args in prop::collection::vec("\\PC{0,12}", 0..6)) {
        prop_assume!(!args.iter().any(|a| a.chars().any(hookd::gate::forbidden_char)));
        let gate = open_gate();
        let mut argv = vec!["echo".to_string()];
        argv.extend(args);
        let cmd = argv.iter().map(|a| sh_quote(a)).collect::<Vec<_>>().join(" ");
        let Verdict::Allowed(first) = gate.verdict(&cmd, Mode::Auto) else {
            return Err(TestCaseError::fail(format!("quoted argv denied: {cmd:?}")));
        };
        prop_assert_eq!(&first.argv, &argv);
        let again = first.argv.iter().map(|a| sh_quote(a)).collect::<Vec<_>>().join(" ");
        let Verdict::Allowed(second) = gate.verdict(&again, Mode::Auto) else {
            return Err(TestCaseError::fail("re-quoted argv denied".to_string()));
        };
        prop_assert_eq!(second.argv, argv);
    }

    #[test]
    fn the_verdict_never_panics(cmd in "\\PC{0,64}") {
        let _ = open_gate().verdict(&cmd, Mode::Standard);
    }
}

/// The differential property is only worth something if many generated commands are admitted.
#[test]
fn the_generator_admits_a_real_share() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let gate = open_gate();
    let mut runner = TestRunner::deterministic();
    let strategy = shellish();
    let total = 500;
    let admitted = (0..total)
        .filter(|_| {
            let cmd = strategy.new_tree(&mut runner).unwrap().current();
            gate.verdict(&cmd, Mode::Auto).is_allowed()
        })
        .count();
    assert!(
        admitted * 10 >= total * 3,
        "only {admitted} of {total} generated commands admitted"
    );
    eprintln!("{admitted} of {total} generated commands admitted");
}
