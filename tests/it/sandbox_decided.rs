//! Issue 40 item 5: the policy a confined call runs under is the one the adapter decided. The
//! rewrite carries the adapter's project, start directory, user home and `--config-dir` to
//! `hookd exec`, which takes them from there and never from the agent's shell (whose HOME a
//! repository may set, and whose directory a confined command may steer into a directory with
//! its own `.git`). Each attack is performed for real, through the adapter's reply and the
//! shell that runs it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::sandbox::{confinable, hookd, project};
use crate::support::{claude_pre_tool, stderr, stdout, Project};

/// The agent's shell: its environment (`env`, as the agent set it) and directory; runs the
/// adapter's rewrite and prints where the shell ends.
fn agent_shell(p: &Project, tmp: &Path, cwd: &Path, env: &[(&str, &Path)], cmd: &str) -> String {
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(format!("{cmd}\necho \"status=$? cwd=$PWD\""))
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", p.home.path())
        .env("TMPDIR", tmp)
        .env("HOOKD_STATE_DIR", p.state.path())
        .env("HOOKD_TRUST_PROJECT", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    format!("{}{}", stdout(&o), stderr(&o))
}

/// The Claude Code adapter's rewrite of a Bash call of `command` made in `cwd`.
fn rewrite(adapter: Command, cwd: &Path, command: &str) -> String {
    let r = claude_pre_tool(adapter, cwd, "Bash", json!({ "command": command }));
    r["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("not rewritten: {r}"))
        .to_string()
}

/// The rewrite as it was before the adapter's decision was carried: `hookd exec --shell`.
fn undecided(command: &str) -> String {
    format!(
        "'{}' exec --shell={}",
        env!("CARGO_BIN_EXE_hookd"),
        hookd::sandbox::shell_quote(command)
    )
}

#[test]
fn a_home_the_repository_sets_does_not_choose_the_policy_of_a_confined_call() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let root = p.path().to_path_buf();
    // The sandbox is on in the project's own layer (trusted here): the user's layer is the
    // user database's home, which a test must not write.
    p.write("config.yaml", "sandbox: {enabled: true}\n");
    // The repository plants a home whose policy makes everything writable, and sets HOME to
    // it for its agent (Claude Code gives `env` to its hooks and to its shell alike).
    let planted = root.join("planted");
    std::fs::create_dir_all(planted.join(".infer")).unwrap();
    std::fs::write(
        planted.join(".infer/config.yaml"),
        "sandbox: {enabled: true, write: ['/']}\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    let settings = json!({"env": {"HOME": planted}}).to_string();
    std::fs::write(root.join(".claude/settings.json"), settings).unwrap();
    let outside = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let marker = outside.path().join("pwned");
    // The shell's environment: the repository's HOME (the adapter is also told the project,
    // as Claude Code tells its hooks; the shell is not).
    let env: [(&str, &Path); 1] = [("HOME", &planted)];
    let adapter = || {
        let mut a = hookd(&p, &tmp, &["adapter", "claude-code", "--no-daemon"]);
        a.env("HOME", &planted).env("CLAUDE_PROJECT_DIR", &root);
        a
    };
    // A confined command makes a directory with a `.git` of its own and steers the shell
    // there through the directory channel.
    let first = rewrite(adapter(), &root, "mkdir -p nest/.git && cd nest");
    let out = agent_shell(&p, &tmp, &root, &env, &first);
    let nest = root.join("nest");
    assert!(
        out.contains(&format!("status=0 cwd={}\n", nest.display())),
        "{out}"
    );
    // The `.git` it made below the project, which cannot be held, is moved aside once the
    // command has ended, and said; the attack below makes it again (a repository is no
    // boundary the command can draw).
    assert!(
        out.contains(&format!(
            "hookd: the confined command made {}/.git (a repository below the project,",
            nest.display()
        )),
        "{out}"
    );
    let attack = format!("touch {}", marker.display());
    // The attacker's next call makes it again (it only exists while that call runs): here it
    // stands as made.
    std::fs::create_dir_all(nest.join(".git")).unwrap();
    // There, `hookd exec` as the shell would find it reads the planted home's policy: the
    // attack works without the adapter's decision.
    let out = agent_shell(&p, &tmp, &nest, &env, &undecided(&attack));
    assert!(marker.exists(), "the planted policy did not apply: {out}");
    std::fs::remove_file(&marker).unwrap();
    // The adapter's rewrite runs under the adapter's configuration: the write fails.
    let second = rewrite(adapter(), &nest, &attack);
    assert!(
        second.contains(&format!(" --project='{}' ", root.display())),
        "{second}"
    );
    let out = agent_shell(&p, &tmp, &nest, &env, &second);
    assert!(!marker.exists(), "{out}");
    assert!(
        out.contains("Read-only file system") || out.contains("Permission denied"),
        "{out}"
    );
    // Nor does a `--user-home` name it once it is not the adapter's: hookd exec takes the user
    // database's home when the rewrite names none.
    let home = std::process::Command::new("sh")
        .args(["-c", "getent passwd \"$(id -u)\" | cut -d: -f6"])
        .output()
        .unwrap();
    let home = String::from_utf8(home.stdout).unwrap();
    let bare = second.replace(&format!(" --user-home='{}'", home.trim()), "");
    let out = agent_shell(&p, &tmp, &nest, &env, &bare);
    assert!(!marker.exists(), "{bare}\n{out}");
}

#[test]
fn an_adapters_config_dir_is_the_policy_of_its_confined_calls() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let root = p.path().to_path_buf();
    let secrets = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    std::fs::write(secrets.path().join("secret"), "TOPSECRET\n").unwrap();
    // The adapter's own configuration hides the secrets; ~/.infer's does not (and opens the
    // network).
    let cfg = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let text = format!(
        "sandbox: {{enabled: true, read_deny: ['{}']}}\n",
        secrets.path().display()
    );
    std::fs::write(cfg.path().join("config.yaml"), text).unwrap();
    p.write_home("config.yaml", "sandbox: {enabled: true, network: true}\n");
    let command = format!("cat {}/secret", secrets.path().display());
    // Without the adapter's decision, `hookd exec` applies ~/.infer's policy: the attack works.
    let out = agent_shell(&p, &tmp, &root, &[], &undecided(&command));
    assert!(out.contains("TOPSECRET"), "{out}");
    let cfg_arg = format!("--config-dir={}", cfg.path().display());
    let adapter = hookd(
        &p,
        &tmp,
        &["adapter", "claude-code", "--no-daemon", &cfg_arg],
    );
    let rewritten = rewrite(adapter, &root, &command);
    assert!(
        rewritten.contains(&format!(" --config-dir='{}' ", cfg.path().display())),
        "{rewritten}"
    );
    let out = agent_shell(&p, &tmp, &root, &[], &rewritten);
    assert!(!out.contains("TOPSECRET"), "{out}");
    assert!(out.contains("secret: "), "{out}");
}

#[test]
fn gemini_clis_dir_path_is_where_its_confined_call_starts() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    std::fs::create_dir_all(p.path().join("web/src")).unwrap();
    let payload = json!({
        "session_id": "s", "cwd": p.path(), "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command", "tool_input": {"command": "pwd", "dir_path": "web/./src"},
    });
    let o = crate::support::with_stdin(
        hookd(&p, &tmp, &["adapter", "gemini", "--no-daemon"]),
        &payload.to_string(),
    );
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let cmd = r["hookSpecificOutput"]["tool_input"]["command"]
        .as_str()
        .unwrap();
    let src: PathBuf = p.path().join("web/src");
    assert!(
        cmd.contains(&format!(" --start-dir='{}' ", src.display())),
        "{cmd}"
    );
    // Gemini CLI runs it from the project's root here: the command still starts in dir_path.
    let out = agent_shell(&p, &tmp, p.path(), &[], cmd);
    assert!(out.starts_with(&format!("{}\n", src.display())), "{out}");
}

#[test]
fn the_directory_channel_is_refused_in_a_directory_others_may_write() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let adapter = || hookd(&p, &tmp, &["adapter", "claude-code", "--no-daemon"]);
    let root = p.path().canonicalize().unwrap();
    let channel = p.state.path().join("cwd");
    let _ = rewrite(adapter(), p.path(), "true");
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path, m: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(m)).unwrap()
    };
    // The channel's directory open to others: the rewrite names no channel, the shell stays.
    mode(&channel, 0o733);
    let cmd = rewrite(adapter(), p.path(), "mkdir -p sub && cd sub");
    assert!(!cmd.contains("--cwd-file"), "{cmd}");
    let out = agent_shell(&p, &tmp, p.path(), &[], &cmd);
    assert!(
        out.ends_with(&format!("cwd={}\n", p.path().display())),
        "{out}"
    );
    // `hookd exec` asked for a channel there refuses it, saying why.
    let file = channel.join("x");
    let forged = format!(
        "'{}' exec --project='{}' --cwd-file='{}' --shell='cd sub'",
        env!("CARGO_BIN_EXE_hookd"),
        p.path().display(),
        file.display()
    );
    let out = agent_shell(&p, &tmp, p.path(), &[], &forged);
    let uid = nix::unistd::geteuid();
    assert!(
        out.contains(&format!(
            "hookd: the directory channel's directory {} is not a directory of this user's alone (owner {uid}, mode 733; it must be owned by user {uid} with mode 700); the shell stays where the call started\n",
            channel.display()
        )),
        "{out}"
    );
    assert!(!file.exists());
    // The state directory above it writable by others: refused too.
    mode(&channel, 0o700);
    mode(p.state.path(), 0o777);
    let out = agent_shell(&p, &tmp, p.path(), &[], &forged);
    assert!(
        out.contains(&format!(
            "hookd: the state directory {} may be written by another user (owner {uid}, mode 777; it must be owned by user {uid} and not group- or other-writable); the shell stays where the call started\n",
            p.state.path().display()
        )),
        "{out}"
    );
    mode(p.state.path(), 0o700);
    // Restored, the channel carries the directory back again.
    let cmd = rewrite(adapter(), p.path(), "cd sub");
    let out = agent_shell(&p, &tmp, p.path(), &[], &cmd);
    assert!(
        out.ends_with(&format!("status=0 cwd={}/sub\n", root.display())),
        "{out}"
    );
}

#[test]
fn crushs_call_starts_in_its_shells_directory_inside_the_project_only() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let root = p.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    // Crush's payload names its session's directory, not its shell's (which keeps its own).
    let payload = json!({
        "event": "PreToolUse", "cwd": p.path(), "session_id": "c",
        "tool_name": "bash", "tool_input": {"command": "pwd"},
    });
    let o = crate::support::with_stdin(
        hookd(&p, &tmp, &["adapter", "crush", "--no-daemon"]),
        &payload.to_string(),
    );
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let cmd = r["updated_input"]["command"].as_str().unwrap();
    assert!(
        cmd.contains(&format!(" exec --project='{}' ", p.path().display())),
        "{cmd}"
    );
    assert!(!cmd.contains("--start-dir"), "{cmd}");
    // The shell in sub/ (where a previous call left it): the command starts there.
    let out = agent_shell(&p, &tmp, &root.join("sub"), &[], cmd);
    assert!(
        out.starts_with(&format!("{}/sub\n", root.display())),
        "{out}"
    );
    // The shell outside the project: the command starts at the project's root.
    let out = agent_shell(&p, &tmp, p.home.path(), &[], cmd);
    assert!(
        out.starts_with(&format!("{}\n", p.path().display())),
        "{out}"
    );
}

#[test]
fn hookd_exec_refuses_a_decision_it_cannot_take_as_given() {
    let (p, tmp) = project();
    let root = p.path().display().to_string();
    // `--project` after the command: the scrub read no project before the arguments were
    // parsed, so the decision is refused, not half applied.
    let o = hookd(
        &p,
        &tmp,
        &["exec", "--shell", "true", &format!("--project={root}")],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: --project must be given before the command, as `--project=DIR`\n"
    );
    let o = hookd(
        &p,
        &tmp,
        &[
            "exec",
            &format!("--project={root}"),
            "--start-dir=sub",
            "--",
            "true",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "error: --start-dir sub is not an absolute path to a directory\n"
    );
}
