//! Issue 28, item 1: wrappers are unwrapped. Under an entry for the wrapper (`^env( .*)?$`,
//! `^timeout( .*)?$`), the model's commands ran programs no entry names. Each attack runs for
//! real with bash first (a marker proves the inner program ran), then the Claude Code adapter
//! with the shell gate on must deny it; wrapped commands whose inner command is allowed go.

use hookd::config::{AllowEntry, AllowLists, Mode, Origin};
use hookd::Gate;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::support::{claude_pre_tool, gated, stdout, Project};

const WRAPPER_ENTRIES: &[&str] = &[
    "^env( .*)?$",
    "^timeout( .*)?$",
    "^nice( .*)?$",
    "^nohup( .*)?$",
    "^stdbuf( .*)?$",
    "^setsid( .*)?$",
    "^flock( .*)?$",
    "^xargs( .*)?$",
    "^command( .*)?$",
    "^exec( .*)?$",
    "^echo( .*)?$",
    "^cargo test( .*)?$",
    "^grep( .*)?$",
    "^git status$",
];

fn bash(p: &Project, command: &str) {
    p.bash(command);
}

fn reply(p: &Project, command: &str) -> Value {
    let adapter = p.cmd(&["adapter", "claude-code", "--no-daemon"]);
    claude_pre_tool(adapter, p.path(), "Bash", json!({"command": command}))
}

#[test]
fn programs_behind_wrappers_face_the_gate() {
    let p = gated(WRAPPER_ENTRIES);
    bash(&p, "git init -q");
    let marker = p.path().join("M");
    for command in [
        "env touch M",
        "env -i touch M",
        "env -S 'touch M'",
        "env -- touch M",
        "timeout 5 touch M",
        "timeout -s KILL 5 bash -c 'touch M'",
        "nice touch M",
        "nice -n 5 timeout 5 touch M",
        "nohup touch M",
        "stdbuf -oL touch M",
        "setsid -w touch M",
        "flock /tmp/hookd-wrapper-lock -c 'touch M'",
        "echo M | xargs touch",
        "echo M | xargs -I{} touch {}",
        "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch M' git status",
        "env LD_PRELOAD=/nonexistent.so touch M",
        "command touch M",
        "command -p touch M",
        "exec touch M",
        "exec -a x touch M",
        "git status && exec touch M",
        "command exec timeout 5 touch M",
    ] {
        let _ = std::fs::remove_file(&marker);
        bash(&p, command);
        assert!(marker.exists(), "the attack did not run: {command}");
        let r = reply(&p, command);
        assert_eq!(
            r["hookSpecificOutput"]["permissionDecision"], "deny",
            "admitted: {command} -> {r}"
        );
        let reason = r["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        // What the model hears names no entry and no file to edit.
        for leak in ["entry", "config.yaml", "^"] {
            assert!(!reason.contains(leak), "{leak} in {reason}");
        }
    }
}

#[test]
fn wrapped_commands_whose_inner_command_is_allowed_go() {
    let p = gated(WRAPPER_ENTRIES);
    for command in [
        "timeout 600 cargo test",
        "timeout --signal=TERM 10m cargo test --workspace",
        "env RUST_LOG=debug cargo test",
        "env RUST_BACKTRACE=1 LC_ALL=C timeout 60 cargo test",
        "nice -n 10 cargo test",
        "xargs -0 grep -l unsafe",
        "echo src | xargs grep -rl unsafe",
        "git status",
        "command cargo test",
        "exec cargo test --workspace",
        "git status && exec timeout 60 cargo test",
    ] {
        assert_eq!(reply(&p, command), json!({}), "{command}");
    }
    // A variable that changes what runs is refused, and the operator learns that an entry naming
    // it would admit it.
    let o = p.run(&["allow", "--model", "--", "env PYTHONPATH=. cargo test"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).starts_with("denied: assignment: `env` sets PYTHONPATH, which can change what the command runs\n  hint: entry `^env( .*)?$` admits a program that sets variables; only an entry that names `PYTHONPATH=` admits setting it\n"),
        "{}",
        stdout(&o)
    );
    // Without a command to run, `command` and `exec` change or query the shell: refused.
    for command in ["command -v cargo", "exec", "exec 3</dev/null"] {
        assert_eq!(
            reply(&p, command)["hookSpecificOutput"]["permissionDecision"],
            "deny",
            "{command}"
        );
    }
    // The inner command's own refusal is what the model hears.
    let o = p.run(&["allow", "--model", "--", "timeout 5 curl http://x"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o)
            .starts_with("denied: not_allowlisted: the command `timeout` runs, `curl http://x`: "),
        "{}",
        stdout(&o)
    );
}

fn gate(entries: &[&str]) -> Gate {
    let origin = Origin {
        file: "t".into(),
        line: 1,
        source: hookd::config::Source::Embedded,
    };
    Gate::new(
        &AllowLists::from_entries(entries.iter().map(|e| AllowEntry {
            pattern: e.to_string(),
            list: hookd::config::Mode::All,
            origin: origin.clone(),
        })),
        "t",
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    /// Unwrapping never admits what the inner command alone would not: under broad wrapper
    /// entries, a wrapped command is admitted only if its inner command is.
    #[test]
    fn a_wrapper_admits_nothing_its_inner_command_would_not(
        wrappers in proptest::collection::vec(
            prop::sample::select(vec![
                "timeout 5", "nice", "nice -n 3", "env", "env -i", "env RUST_LOG=x", "nohup",
                "stdbuf -oL", "setsid", "timeout -k 1 5", "env LD_PRELOAD=x", "xargs", "xargs -0",
                "command", "command -p", "exec", "exec -a x",
            ]),
            1..4,
        ),
        inner in prop::sample::select(vec![
            "cargo test", "cargo build", "grep -r x", "rm -rf /", "curl http://x", "ls",
            "bash -c id", "git status", "git -c core.pager=id log", "tar -xf a --to-command=sh",
            "sed -n 1p x", "echo hi",
        ]),
    ) {
        let g = gate(&[
            "^env( .*)?$", "^timeout( .*)?$", "^nice( .*)?$", "^nohup( .*)?$", "^stdbuf( .*)?$",
            "^setsid( .*)?$", "^xargs( .*)?$", "^cargo test( .*)?$", "^grep( .*)?$", "^ls$",
            "^git( .*)?$", "^tar( .*)?$", "^sed( .*)?$", "^echo( .*)?$", "^command( .*)?$",
            "^exec( .*)?$",
        ]);
        let command = format!("{} {inner}", wrappers.join(" "));
        let wrapped = g.model_verdict(&command, Mode::Standard).is_allowed();
        let alone = g.model_verdict(inner, Mode::Standard).is_allowed();
        prop_assert!(!wrapped || alone, "{command} admitted, {inner} alone is not");
    }
}
