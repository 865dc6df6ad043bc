//! Properties of the gate, checked against real bash: what the gate admits is exactly the argv
//! bash would build, and re-quoting an admitted argv gives the same verdict and argv.

use std::path::Path;
use std::process::Command;

use hookd::config::{AllowEntry, AllowLists, Mode, Origin};
use hookd::{Gate, Verdict};
use proptest::prelude::*;

fn open_gate() -> Gate {
    let e = AllowEntry {
        pattern: ".*".into(),
        list: hookd::config::Mode::All,
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

/// Programs replaced by recorders in the compound property below.
const RECORDED: &[&str] = &["rec", "git", "ls", "grep", "tail"];

/// A PATH of recorders (each appends its name and argv, NUL-separated and ended by a marker,
/// to `$RECORD` in one write) and a working directory where `cd d1` always succeeds.
fn recorder_dirs() -> tempfile::TempDir {
    let dir = fixture_dir();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    // Links to a script in the repository, never one written here: a file just written can
    // be held open by another test thread's fork, and exec'ing it then fails (ETXTBSY).
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/recorder.sh");
    for name in RECORDED {
        std::os::unix::fs::symlink(&script, bin.join(name)).unwrap();
    }
    std::os::unix::fs::symlink(".", dir.path().join("d1")).unwrap();
    dir
}

/// What bash ran for `cmd`, one argv per program run, in order.
fn bash_ran(cmd: &str, dir: &std::path::Path) -> Vec<Vec<String>> {
    let record = dir.join("record");
    let _ = std::fs::remove_file(&record);
    // PATH holds only the recorders, so bash itself is found here.
    let bash = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("bash"))
        .find(|p| p.is_file())
        .expect("bash on PATH");
    Command::new(bash)
        .args(["--noprofile", "--norc", "-c", cmd])
        .current_dir(dir)
        .env_clear()
        .env("HOME", "/home-expanded")
        .env("PATH", dir.join("bin"))
        .env("RECORD", &record)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&record).unwrap_or_default();
    let mut runs = Vec::new();
    let mut argv = Vec::new();
    for word in text.split_terminator('\0') {
        if word == "--end--" {
            runs.push(std::mem::take(&mut argv));
        } else {
            argv.push(word.to_string());
        }
    }
    runs
}

/// Compound commands of recorded programs with shell-meaningful arguments and joints.
fn compound() -> impl Strategy<Value = String> {
    let program = prop::sample::select(vec!["rec", "git", "ls", "grep", "tail", "cd d1"]);
    let benign = prop::sample::select(vec![
        "a",
        "-x",
        "'a b'",
        "\"c d\"",
        "'$X'",
        "a\\ b",
        "'*'",
        "\"a;b\"",
        "'|'",
        "\"&&\"",
        "'#'",
        "2>&1",
        ">/dev/null",
        "2>/dev/null",
        "\\;",
        "a=b",
        "@",
        "é",
        "\"x|y\"",
        "'a&&b'",
    ]);
    let risky = prop::sample::select(vec![
        "$X", "*", "~", "`x`", "(", "{a,b}", "#", "'", "\\", ">x", "<x", "$'a'", "a\\\nb",
    ]);
    let arg = prop_oneof![6 => benign, 1 => risky];
    let good_joint = prop::sample::select(vec![
        " && ", "&&", " || ", "||", "; ", ";", " | ", "|", " |& ", "|&",
    ]);
    let bad_joint = prop::sample::select(vec![" & ", "\n", " ;; ", " ", " \\\n ", "&", ";\n"]);
    let joint = prop_oneof![6 => good_joint, 1 => bad_joint];
    let part = (program, prop::collection::vec(arg, 0..4)).prop_map(|(p, args)| {
        let mut s = p.to_string();
        for a in args {
            s.push(' ');
            s.push_str(a);
        }
        s
    });
    (part.clone(), prop::collection::vec((joint, part), 0..4)).prop_map(|(first, rest)| {
        let mut s = first;
        for (j, p) in rest {
            s.push_str(j);
            s.push_str(&p);
        }
        s
    })
}

/// The runs bash must make for an admitted model command whose programs all succeed: every
/// part but `cd` (a builtin), except pipelines after `||`, which a success skips. Pipeline
/// members run at once, so each pipeline is compared as a sorted group.
fn expected_runs(v: &hookd::gate::ModelVerdict) -> Vec<Vec<Vec<String>>> {
    let mut groups: Vec<Vec<Vec<String>>> = Vec::new();
    let mut skipping = false;
    for part in &v.parts {
        let Verdict::Allowed(a) = &part.verdict else {
            unreachable!("an admitted command has only admitted parts")
        };
        match part.joint {
            Some("|") | Some("|&") => {}
            joint => {
                skipping = joint == Some("||");
                groups.push(Vec::new());
            }
        }
        if !skipping && a.argv[0] != "cd" {
            groups.last_mut().unwrap().push(a.argv.clone());
        }
    }
    groups.retain(|g| !g.is_empty());
    groups
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// For every admitted compound command, bash with each program replaced by a recorder runs
    /// exactly the simple commands the gate checked, with the same argv.
    #[test]
    fn bash_runs_exactly_the_parts_the_gate_admitted(cmd in compound()) {
        let gate = open_gate();
        let v = gate.model_verdict(&cmd, Mode::Auto);
        if v.is_allowed() {
            let dir = recorder_dirs();
            let mut ran = bash_ran(&cmd, dir.path()).into_iter();
            for group in expected_runs(&v) {
                let mut want = group.clone();
                let mut got: Vec<Vec<String>> = ran.by_ref().take(want.len()).collect();
                want.sort();
                got.sort();
                prop_assert_eq!(got, want, "command {:?}", cmd);
            }
            prop_assert_eq!(ran.next(), None, "bash ran more than the gate checked: {:?}", cmd);
        }
    }
}

#[test]
fn the_compound_generator_admits_a_real_share() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let gate = open_gate();
    let mut runner = TestRunner::deterministic();
    let strategy = compound();
    let total = 500;
    let (mut admitted, mut compound_admitted) = (0, 0);
    for _ in 0..total {
        let cmd = strategy.new_tree(&mut runner).unwrap().current();
        let v = gate.model_verdict(&cmd, Mode::Auto);
        if v.is_allowed() {
            admitted += 1;
            compound_admitted += usize::from(v.parts.len() > 1);
        }
    }
    assert!(
        admitted * 10 >= total * 2,
        "only {admitted} of {total} admitted"
    );
    assert!(
        compound_admitted * 10 >= total,
        "only {compound_admitted} compounds admitted"
    );
    eprintln!("{admitted} of {total} generated compound commands admitted ({compound_admitted} with several parts)");
}
