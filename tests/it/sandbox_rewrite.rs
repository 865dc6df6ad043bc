//! Issue 41 item 1: the confined call's rewrite runs under every agent hookd installs into. It
//! holds no command substitution, backticks or process substitution (Gemini CLI refuses every
//! call that does), and the directory it carries back cannot be forged by the confined command.

use std::path::Path;

use serde_json::Value;

use crate::sandbox::{confinable, hookd, project};
use crate::sandbox_agents::{as_the_agent, bash_reply};
use crate::support::{stderr, stdout, with_stdin, Project};

/// Gemini CLI's own check, ported in the library (`hookd::sandbox::gemini_refuses`): its
/// `stripShellWrapper` and `detectBashSubstitution` in `packages/core/src/utils/shell-utils.ts`
/// (google-gemini/gemini-cli at 5411f113ca; the same functions are in the 0.61.0 npm bundle),
/// which `ShellToolInvocation.execute` (`packages/core/src/tools/shell.ts`) applies to the whole
/// command: true means "Command injection detected … the command was blocked".
fn gemini_refuses(command: &str) -> bool {
    hookd::sandbox::gemini_refuses(command)
}

#[test]
fn the_port_agrees_with_gemini_clis_own_cases() {
    // packages/core/src/tools/shell.test.ts, "command injection detection", and the quoting
    // rules its header comment states.
    for refused in [
        "echo $(whoami)",
        "echo `whoami`",
        "diff <(ls a) <(ls b)",
        "tee >(cat)",
        "echo \"$(id)\"",
        "echo \"`id`\"",
        "x=$(pwd); cd \"$x\"",
        "bash -c 'echo $(id)'",
        "/bin/sh -c \"echo \\$(id)\"",
        "BASH -c $(id)",
    ] {
        assert!(gemini_refuses(refused), "{refused}");
    }
    for allowed in [
        "echo hello",
        "echo '$(not substituted)'",
        "echo \\`hello\\`",
        "echo \"\\$(x)\"",
        "echo \"<(x)\"",
        "ls > out.txt 2>&1 < in.txt",
        "echo ${HOME} $? $$",
        "bash -c 'echo hi'",
    ] {
        assert!(!gemini_refuses(allowed), "{allowed}");
    }
}

/// The rewrite of `command` each agent's adapter replies with (`None`: refused).
fn rewrites(p: &Project, tmp: &Path, command: &str) -> Vec<(&'static str, Option<String>)> {
    let claude = bash_reply(p, tmp, command)["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .map(String::from);
    let gemini = serde_json::json!({
        "session_id": "s", "cwd": p.path(), "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command", "tool_input": {"command": command, "dir_path": "."},
    });
    let o = with_stdin(
        hookd(p, tmp, &["adapter", "gemini", "--no-daemon"]),
        &gemini.to_string(),
    );
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let gemini = r["hookSpecificOutput"]["tool_input"]["command"]
        .as_str()
        .map(String::from);
    let crush = serde_json::json!({
        "event": "PreToolUse", "cwd": p.path(), "session_id": "c",
        "tool_name": "bash", "tool_input": {"command": command},
    });
    let o = with_stdin(
        hookd(p, tmp, &["adapter", "crush", "--no-daemon"]),
        &crush.to_string(),
    );
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let crush = r["updated_input"]["command"].as_str().map(String::from);
    vec![
        ("claude-code", claude),
        ("gemini", gemini),
        ("crush", crush),
    ]
}

#[test]
fn no_agents_rewrite_holds_a_substitution() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    for command in [
        "make test",
        "git add -A && git commit -m \"it's $(date)\" `id` <(ls) >(cat)",
        "printf '%s\\n' \"$(pwd)\"",
    ] {
        for (agent, rewrite) in rewrites(&p, &tmp, command) {
            // Gemini CLI refuses a substitution in the model's command: so does hookd there.
            let refused = agent == "gemini" && gemini_refuses(command);
            assert_eq!(rewrite.is_none(), refused, "{agent}: {command}");
            let Some(rewrite) = rewrite else { continue };
            let quoted = hookd::sandbox::shell_quote(command);
            assert_eq!(rewrite.matches(&quoted).count(), 1, "{agent}: {rewrite}");
            let around = rewrite.replace(&quoted, "'CMD'");
            for token in ["$(", "`", "<(", ">("] {
                assert!(!around.contains(token), "{agent}: {token} in {around}");
            }
            assert!(!gemini_refuses(&rewrite), "{agent}: {rewrite}");
        }
    }
    // Claude Code's and Crush's shells keep their directory: theirs carries it back.
    let r = rewrites(&p, &tmp, "make test");
    let (claude, crush) = (r[0].1.clone().unwrap(), r[2].1.clone().unwrap());
    assert!(claude.contains(" --cwd-file="), "{claude}");
    assert!(crush.ends_with("; (exit $__hookd_status)"), "{crush}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// Whatever the model's command holds, the rewrite passes Gemini CLI's check (the command
    /// is one single-quoted word), with or without a directory channel.
    #[test]
    fn any_rewrite_passes_gemini_clis_check(text in "[ -~\t\n\\\\'\"`$(){}!*?;&|<>#]{0,60}") {
        let program = Path::new("/opt/it's/hookd");
        let channel = Path::new("/state/cwd/1-2-3");
        let decided = hookd::sandbox::Decided::in_project("/it's/p")
            .starting_in("/it's/p/$(x)")
            .user_home(Some("/h`o`me".into()))
            .config_dir(Some("/c<(f)".into()))
            .read_only(true)
            .session(&text);
        // The agent's session is carried only when it is a plain word (letters, digits, `._:-`).
        let plain = !text.is_empty()
            && text.chars().all(|c| c.is_ascii_alphanumeric() || "._:-".contains(c));
        proptest::prop_assert_eq!(decided.session.is_some(), plain);
        for c in [None, Some(channel)] {
            let rewrite = hookd::sandbox::shell_rewrite(program, &text, &decided, c);
            proptest::prop_assert!(!gemini_refuses(&rewrite), "{}", rewrite);
        }
    }
}

/// The channel file a rewrite names.
fn channel_of(rewrite: &str) -> String {
    let start = rewrite.find("--cwd-file='").unwrap() + "--cwd-file='".len();
    let len = rewrite[start..].find('\'').unwrap();
    rewrite[start..start + len].to_string()
}

#[test]
fn a_confined_command_cannot_forge_the_directory_channel() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let home = p.home.path().canonicalize().unwrap();
    let root = p.path().canonicalize().unwrap();
    // The command tries every way to make the agent's shell end in the home directory: the
    // channel file by name, its directory, the report descriptor after removing the trap that
    // writes the real directory, and every descriptor of `hookd exec` and of the agent's shell
    // under /proc; it then goes there itself.
    let probe = bash_reply(&p, &tmp, "true")["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let dir = Path::new(&channel_of(&probe))
        .parent()
        .unwrap()
        .to_path_buf();
    let attack = format!(
        "H={home}; trap - EXIT\n\
         for f in {dir}/*; do printf '%s\\n' \"$H\" > \"$f\" && echo FORGED-FILE; done\n\
         printf '%s\\n' \"$H\" > {dir}/forged && echo FORGED-DIR\n\
         agent=$(awk '{{print $4}}' /proc/$PPID/stat)\n\
         for f in /proc/$PPID/fd/* /proc/$agent/fd/*; do\n\
           case $f in */0|*/1|*/2) continue;; esac\n\
           printf '%s\\n' \"$H\" >> \"$f\" && echo \"FORGED-PROC $f\"\n\
         done\n\
         printf '%s\\n' \"$H\" >&3\n\
         cd \"$H\"",
        home = home.display(),
        dir = dir.display()
    );
    let rewritten = bash_reply(&p, &tmp, &attack)["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap()
        .to_string();
    let out = as_the_agent(&p, &tmp, &rewritten);
    assert!(!out.contains("FORGED"), "{out}");
    assert!(
        out.contains(&format!("status=0 cwd={}\n", root.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "hookd: the command ended in {}, which is not a directory inside the project {}; \
             the shell stays where the call started\n",
            home.display(),
            root.display()
        )),
        "{out}"
    );
    assert!(!dir.join("forged").exists());
    // Without the trap's report, a command ending in the project is not carried either, and a
    // command that ends inside the project is (its own `cd` is all it takes).
    std::fs::create_dir_all(p.path().join("sub")).unwrap();
    let r = bash_reply(&p, &tmp, "cd sub && pwd");
    let cmd = r["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap();
    let out = as_the_agent(&p, &tmp, cmd);
    assert!(
        out.contains(&format!("status=0 cwd={}\n", root.join("sub").display())),
        "{out}"
    );
}

#[test]
fn the_exit_status_and_output_come_through_the_rewrite() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    for (command, status, out, err) in [
        ("echo out; echo err >&2; exit 7", 7, "out\n", "err\n"),
        ("kill -TERM $$", 143, "", ""),
        ("kill -KILL $$", 137, "", ""),
    ] {
        let r = bash_reply(&p, &tmp, command);
        let cmd = r["hookSpecificOutput"]["updatedInput"]["command"]
            .as_str()
            .unwrap();
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("{cmd}\necho \"status=$?\""))
            .current_dir(p.path())
            .env("HOME", p.home.path())
            .env("TMPDIR", &tmp)
            .env("HOOKD_STATE_DIR", p.state.path())
            .output()
            .unwrap();
        assert_eq!(stdout(&o), format!("{out}status={status}\n"), "{command}");
        assert_eq!(stderr(&o), err, "{command}");
    }
}

#[test]
fn a_substitution_gemini_cli_would_refuse_is_refused_under_the_sandbox_too() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    // Quoted inside the rewrite, the model's substitution would be hidden from Gemini CLI's
    // check: hookd refuses it as Gemini CLI would have.
    let payload = serde_json::json!({
        "session_id": "s", "cwd": p.path(), "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command", "tool_input": {"command": "echo $(id)"},
    });
    let o = with_stdin(
        hookd(&p, &tmp, &["adapter", "gemini", "--no-daemon"]),
        &payload.to_string(),
    );
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(r["decision"], "deny", "{r}");
    assert_eq!(
        r["reason"],
        "hookd refused this run_shell_command call: it holds command substitution ($(), \
         backticks, <() or >()), which Gemini CLI does not run",
        "{r}"
    );
    // Claude Code runs substitutions itself: confined, the call goes ahead.
    let r = bash_reply(&p, &tmp, "echo $(id)");
    assert!(r["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap()
        .contains("--shell='echo $(id)'"));
}

#[test]
fn a_state_directory_confined_commands_may_write_carries_no_directory() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    // hookd's state directory inside the writable temporary directory: hidden from confined
    // commands, but one can move the directory above it away and write a channel file at its
    // old path, so the rewrite names none.
    let state = tmp.join("a/state");
    let mut adapter = hookd(&p, &tmp, &["adapter", "claude-code", "--no-daemon"]);
    adapter.env("HOOKD_STATE_DIR", &state);
    // The attack: the confined command reads the channel's name from `hookd exec`'s command
    // line, moves the directory above the state directory away, and writes the home directory
    // at the channel's path.
    let attack = "f=$(tr '\\0' '\\n' < /proc/$PPID/cmdline | sed -n 's/^--cwd-file=//p'); \
                  mv \"$TMPDIR/a\" \"$TMPDIR/moved\" && mkdir -p \"${f%/*}\" && \
                  printf '%s\\n' \"$HOME\" > \"$f\"; mkdir -p sub && cd sub";
    let input = serde_json::json!({"command": attack});
    let r = crate::support::claude_pre_tool(adapter, p.path(), "Bash", input);
    let cmd = r["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("{cmd}\necho \"cwd=$PWD\""))
        .current_dir(p.path())
        .env("HOME", p.home.path())
        .env("TMPDIR", &tmp)
        .env("HOOKD_STATE_DIR", &state)
        .output()
        .unwrap();
    let root = p.path().canonicalize().unwrap();
    assert!(
        stdout(&out).ends_with(&format!("cwd={}\n", root.display())),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(
        cmd,
        format!(
            "'{}' exec --project='{root}' --start-dir='{root}' --user-home='{}' --session='s' --shell={}",
            env!("CARGO_BIN_EXE_hookd"),
            p.home.path().display(),
            hookd::sandbox::shell_quote(attack),
            root = p.path().display(),
        )
    );
    // And `hookd exec` refuses such a channel when asked for one.
    let file = state.join("cwd/x");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_hookd"))
        .args(["exec", "--shell", "mkdir -p sub && cd sub"])
        .arg(format!("--cwd-file={}", file.display()))
        .current_dir(p.path())
        .env("HOME", p.home.path())
        .env("TMPDIR", &tmp)
        .env("HOOKD_STATE_DIR", &state)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let tmp_real = tmp.canonicalize().unwrap();
    assert_eq!(
        stderr(&o),
        format!(
            "hookd: the directory channel's directory {}/a/state/cwd is inside {}, where confined \
             commands write; the shell stays where the call started\n",
            tmp_real.display(),
            tmp_real.display()
        )
    );
    assert!(!file.exists());
}
