//! Issue 25, the agents' side: the model's shell calls are rewritten to run confined, and its
//! file tools are held by the sandbox's write policy, each performed for real.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::sandbox::{confinable, hookd, project};
use crate::support::{claude_pre_tool, stderr, stdout, with_stdin, Project};

/// The Claude Code adapter's reply to a `Write` of `path`.
fn write_reply(p: &Project, tmp: &Path, tool: &str, path: &str) -> Value {
    let adapter = hookd(p, tmp, &["adapter", "claude-code", "--no-daemon"]);
    let input = serde_json::json!({"file_path": path, "content": "x"});
    claude_pre_tool(adapter, p.path(), tool, input)
}

#[test]
fn the_models_file_tools_are_held_by_the_sandboxs_write_policy() {
    let (p, tmp) = project();
    // The sandbox alone, without gate_shell_tools: the file tools are still held.
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let home = p.home.path().display().to_string();
    std::os::unix::fs::symlink(p.home.path().join(".bashrc"), p.path().join("rc")).unwrap();
    std::fs::create_dir_all(p.path().join("src")).unwrap();
    std::os::unix::fs::symlink(p.home.path(), p.path().join("src/up")).unwrap();
    for (tool, path) in [
        ("Write", format!("{home}/.bashrc")),
        ("Edit", ".git/config".to_string()),
        ("Write", ".git/hooks/pre-commit".to_string()),
        ("Write", ".claude/settings.json".to_string()),
        ("Write", "rc".to_string()),
        ("MultiEdit", "src/up/.profile".to_string()),
        ("Write", "src/../../elsewhere.txt".to_string()),
    ] {
        let r = write_reply(&p, &tmp, tool, &path);
        assert_eq!(
            r["hookSpecificOutput"]["permissionDecision"], "deny",
            "{tool} {path}: {r}"
        );
    }
    let r = write_reply(&p, &tmp, "Write", &format!("{home}/.bashrc"));
    let reason = r["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("is outside the places the sandbox lets commands write"),
        "{reason}"
    );
    for path in ["src/main.rs", "notes.md", "target/x/y.txt"] {
        assert_eq!(
            write_reply(&p, &tmp, "Write", path),
            serde_json::json!({}),
            "{path}"
        );
    }
    let in_tmp = tmp.join("scratch.txt").display().to_string();
    assert_eq!(
        write_reply(&p, &tmp, "Write", &in_tmp),
        serde_json::json!({})
    );
}

/// The Claude Code adapter's reply to a Bash call of `command`.
pub(crate) fn bash_reply(p: &Project, tmp: &Path, command: &str) -> Value {
    let adapter = hookd(p, tmp, &["adapter", "claude-code", "--no-daemon"]);
    let input = serde_json::json!({"command": command, "description": "run it"});
    claude_pre_tool(adapter, p.path(), "Bash", input)
}

/// Run `command` the way the agent's shell does, then print where that shell ends up.
pub(crate) fn as_the_agent(p: &Project, tmp: &Path, command: &str) -> String {
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!("{command}\necho \"status=$? cwd=$PWD\""))
        .current_dir(p.path())
        .env("HOME", p.home.path())
        .env("TMPDIR", tmp)
        .env("HOOKD_STATE_DIR", p.state.path())
        .output()
        .unwrap();
    format!("{}{}", stdout(&o), stderr(&o))
}

#[test]
fn the_models_shell_calls_are_rewritten_to_run_confined() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let home = p.home.path().display().to_string();
    let original = format!(
        "mkdir -p sub && cd sub && touch made && echo pwned >> {home}/.bashrc; echo \"it's $((6*7))\"; exit 3"
    );
    // Unconfined, the call writes the home directory.
    as_the_agent(&p, &tmp, &original);
    assert!(p.home.path().join(".bashrc").exists());
    std::fs::remove_file(p.home.path().join(".bashrc")).unwrap();
    std::fs::remove_dir_all(p.path().join("sub")).unwrap();

    let r = bash_reply(&p, &tmp, &original);
    let hso = &r["hookSpecificOutput"];
    // The gate did not judge it: Claude Code's own permissions decide, on the rewrite.
    assert!(hso.get("permissionDecision").is_none(), "{r}");
    assert_eq!(hso["updatedInput"]["description"], "run it");
    let rewritten = hso["updatedInput"]["command"].as_str().unwrap();
    assert!(
        rewritten.contains(&hookd::sandbox::shell_quote(&original)),
        "{rewritten}"
    );
    let out = as_the_agent(&p, &tmp, rewritten);
    // It ran, confined: the work in the project happened, the home was not written, the
    // command's output, exit status and final directory are the agent's.
    assert!(p.path().join("sub/made").exists(), "{out}");
    assert!(!p.home.path().join(".bashrc").exists(), "{out}");
    assert!(out.contains("it's 42\n"), "{out}");
    assert!(
        out.contains(&format!(
            "status=3 cwd={}\n",
            p.path().join("sub").canonicalize().unwrap().display()
        )),
        "{out}"
    );
    // Landlock refuses it (EACCES), or, where the test's home lies below the temporary
    // directory (a checkout under /tmp), the home is held read-only (EROFS).
    assert!(
        out.contains("Permission denied") || out.contains("Read-only file system"),
        "{out}"
    );

    // The words around the command are builtins: programs a repository put first on the agent's
    // PATH do not run outside the sandbox (here, each would write the home directory).
    let fake = p.path().join("fakebin");
    std::fs::create_dir_all(&fake).unwrap();
    for tool in ["mktemp", "cat", "rm", "mv", "sh", "env", "bash"] {
        let path = fake.join(tool);
        std::fs::write(
            &path,
            format!("#!/bin/sh\necho {tool} >> {home}/hijacked\n"),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let hijacked = format!("PATH={}:$PATH; {rewritten}", fake.display());
    as_the_agent(&p, &tmp, &hijacked);
    assert!(!p.home.path().join("hijacked").exists());

    // Gated and admitted: hookd's allow-list decided, so the rewrite is allowed.
    p.write_home("hooks.yaml", "gate_shell_tools: true\n");
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^git status$']}}}}\n",
    );
    let r = bash_reply(&p, &tmp, "git status");
    assert_eq!(
        r["hookSpecificOutput"]["permissionDecision"], "allow",
        "{r}"
    );
    let rewritten = r["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap();
    assert!(as_the_agent(&p, &tmp, rewritten).contains("status=0"));
    // Denied stays denied, and is not rewritten.
    let r = bash_reply(&p, &tmp, "curl http://x");
    assert_eq!(r["hookSpecificOutput"]["permissionDecision"], "deny", "{r}");
    assert!(r["hookSpecificOutput"].get("updatedInput").is_none());

    // Gemini CLI's run_shell_command: its tool_input is replaced the same way.
    let payload = serde_json::json!({
        "session_id": "s", "cwd": p.path(), "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command", "tool_input": {"command": "git status", "dir_path": "."},
    });
    let o = with_stdin(
        hookd(&p, &tmp, &["adapter", "gemini", "--no-daemon"]),
        &payload.to_string(),
    );
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let cmd = r["hookSpecificOutput"]["tool_input"]["command"]
        .as_str()
        .unwrap();
    // Gemini CLI runs each call in a new shell in `dir_path`: nothing to carry back.
    assert_eq!(
        cmd,
        format!(
            "'{}' exec --project='{root}' --start-dir='{root}' --user-home='{}' --session='s' --shell='git status'",
            env!("CARGO_BIN_EXE_hookd"),
            p.home.path().display(),
            root = p.path().display(),
        ),
        "{r}"
    );
    assert_eq!(r["hookSpecificOutput"]["tool_input"]["dir_path"], ".");

    // Crush's bash tool: `updated_input`.
    let payload = serde_json::json!({
        "event": "PreToolUse", "cwd": p.path(), "session_id": "c",
        "tool_name": "bash", "tool_input": {"command": "git status"},
    });
    let o = with_stdin(
        hookd(&p, &tmp, &["adapter", "crush", "--no-daemon"]),
        &payload.to_string(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let cmd = r["updated_input"]["command"].as_str().unwrap();
    assert!(cmd.ends_with("(exit $__hookd_status)"), "{r}");
    assert!(as_the_agent(&p, &tmp, cmd).contains("status=0"));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// What runs inside is exactly the command that was checked: any text, quoted by hookd and
    /// read back by bash, is the same bytes.
    #[test]
    fn a_quoted_command_reads_back_as_the_same_bytes(text in "[ -~\t\n\\\\'\"`$(){}!*?;&|<>#]{0,60}") {
        let o = Command::new("bash")
            .arg("-c")
            .arg(format!("printf %s {}", hookd::sandbox::shell_quote(&text)))
            .output()
            .unwrap();
        proptest::prop_assert_eq!(String::from_utf8(o.stdout).unwrap(), text);
    }
}

/// Issue 41 item 5: with the sandbox on, hookd answers `allow` for the rewritten call, which
/// Claude Code's own rules would not match: the user's `permissions.deny` and `ask` rules are
/// applied to the model's own command first (whole and part by part), as Claude Code would.
/// Performed through the adapter, then the reply is run as the agent would run it.
#[test]
fn the_users_own_claude_code_rules_still_hold_for_a_confined_call() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^git( .*)?$', '^touch [a-z-]+$']}}}}\n",
    );
    p.write_home("hooks.yaml", "gate_shell_tools: true\nhooks: []\n");
    std::fs::create_dir_all(p.home.path().join(".claude")).unwrap();
    std::fs::write(
        p.home.path().join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(git add:*)"], "ask": ["Bash(git push *)"]}}"#,
    )
    .unwrap();
    // The deny rule refuses `git add`, alone or as a part.
    for command in ["git add -A", "touch made-here && git add -A"] {
        let r = bash_reply(&p, &tmp, command);
        assert_eq!(
            r["hookSpecificOutput"]["permissionDecision"], "deny",
            "{command}: {r}"
        );
        assert_eq!(
            r["hookSpecificOutput"]["permissionDecisionReason"],
            "Permission to use Bash has been denied by your Claude Code rule Bash(git add:*)"
        );
        assert!(r["hookSpecificOutput"].get("updatedInput").is_none(), "{r}");
    }
    assert!(!p.path().join("made-here").exists());
    // The ask rule: Claude Code asks (or refuses in -p mode), about the confined call.
    let r = bash_reply(&p, &tmp, "git push origin main");
    assert_eq!(r["hookSpecificOutput"]["permissionDecision"], "ask", "{r}");
    assert_eq!(
        r["hookSpecificOutput"]["permissionDecisionReason"],
        "your Claude Code rule Bash(git push *) asks before this command; it runs in hookd's sandbox"
    );
    let asked = r["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap_or_default();
    assert!(
        asked.contains("exec") && asked.contains("--shell='git push origin main'"),
        "{r}"
    );
    // A repository's own ask rule for every command cannot make its calls run unconfined:
    // each is still rewritten to run in the sandbox, and asked about.
    std::fs::create_dir_all(p.path().join(".claude")).unwrap();
    std::fs::write(
        p.path().join(".claude/settings.json"),
        r#"{"permissions": {"ask": ["Bash"]}}"#,
    )
    .unwrap();
    let r = bash_reply(&p, &tmp, "touch made-by-ask");
    assert_eq!(r["hookSpecificOutput"]["permissionDecision"], "ask", "{r}");
    let asked = r["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap_or_default();
    assert!(
        asked.contains("exec") && asked.contains("--shell='touch made-by-ask'"),
        "{r}"
    );
    std::fs::remove_file(p.path().join(".claude/settings.json")).unwrap();
    // Other commands are rewritten and allowed, and run confined as before.
    let r = bash_reply(&p, &tmp, "git status --short");
    assert_eq!(
        r["hookSpecificOutput"]["permissionDecision"], "allow",
        "{r}"
    );
    let rewritten = r["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap();
    assert!(rewritten.contains("exec"), "{rewritten}");
    assert!(as_the_agent(&p, &tmp, rewritten).contains("status=0"));
}

/// An organisation's deny rule in Claude Code's managed settings holds for a confined call
/// too (found in review: only user, project and local settings were read). Needs root to
/// write /etc/claude-code, and is skipped where the file is already there (not ours to touch).
#[test]
fn the_organisations_managed_deny_rule_holds_for_a_confined_call() {
    let managed = Path::new("/etc/claude-code/managed-settings.json");
    if !confinable() || managed.exists() {
        return;
    }
    if std::fs::create_dir_all("/etc/claude-code").is_err() {
        crate::support::unavailable("root", "writing /etc/claude-code needs root");
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^true managed-probe$']}}}}\n",
    );
    p.write_home("hooks.yaml", "gate_shell_tools: true\nhooks: []\n");
    std::fs::write(
        managed,
        r#"{"permissions": {"deny": ["Bash(true managed-probe)"]}}"#,
    )
    .unwrap();
    let r = bash_reply(&p, &tmp, "true managed-probe");
    std::fs::remove_file(managed).unwrap();
    let _ = std::fs::remove_dir("/etc/claude-code");
    assert_eq!(r["hookSpecificOutput"]["permissionDecision"], "deny", "{r}");
    assert_eq!(
        r["hookSpecificOutput"]["permissionDecisionReason"],
        "Permission to use Bash has been denied by your Claude Code rule Bash(true managed-probe)"
    );
}

/// Found in review: Claude Code started in `repo/web` reads `repo/web/.claude/settings*.json`,
/// below the project hookd finds (the repository's `.git`), so a deny rule there was missed and
/// hookd answered `allow`; a compound rule (`Bash(a && b)`) was dropped; a user settings file
/// hookd could not read was skipped without a word. Each is performed through the adapter.
#[test]
fn claude_codes_rules_below_the_project_compound_and_unread_still_hold() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^touch [a-z-]+$', '^true$']}}}}\n",
    );
    p.write_home("hooks.yaml", "gate_shell_tools: true\nhooks: []\n");
    let web = p.path().join("web");
    std::fs::create_dir_all(web.join(".claude")).unwrap();
    std::fs::write(
        web.join(".claude/settings.local.json"),
        r#"{"permissions": {"deny": ["Bash(touch web-denied)", "Bash(true && touch both)"]}}"#,
    )
    .unwrap();
    let reply = |command: &str| {
        let adapter = hookd(&p, &tmp, &["adapter", "claude-code", "--no-daemon"]);
        let input = serde_json::json!({"command": command, "description": "run it"});
        claude_pre_tool(adapter, &web, "Bash", input)
    };
    for (command, rule) in [
        ("touch web-denied", "Bash(touch web-denied)"),
        ("true && touch both", "Bash(true && touch both)"),
    ] {
        let r = reply(command);
        assert_eq!(
            r["hookSpecificOutput"]["permissionDecisionReason"],
            format!("Permission to use Bash has been denied by your Claude Code rule {rule}"),
            "{command}: {r}"
        );
        assert_eq!(r["hookSpecificOutput"]["permissionDecision"], "deny");
    }
    assert_eq!(
        reply("touch other")["hookSpecificOutput"]["permissionDecision"],
        "allow"
    );
    // The user's own settings file, there but not JSON: its rules are unknown, so denied.
    std::fs::create_dir_all(p.home.path().join(".claude")).unwrap();
    let user = p.home.path().join(".claude/settings.json");
    std::fs::write(
        &user,
        "{\"permissions\": {\"deny\": [\"Bash(touch other)\"]",
    )
    .unwrap();
    let r = reply("touch other");
    assert_eq!(r["hookSpecificOutput"]["permissionDecision"], "deny", "{r}");
    assert_eq!(
        r["hookSpecificOutput"]["permissionDecisionReason"],
        format!(
            "Permission to use Bash has been denied: hookd cannot read the Claude Code settings {}, whose rules apply to it",
            user.display()
        )
    );
}

/// The Outcome no longer echoes a large input back: the user's Claude Code rules are still
/// applied to a confined command of 70,000 bytes (read back from the rewrite). The shell gate
/// refuses commands over 8 KiB, so this is a call the sandbox confines without the gate.
#[test]
fn claude_codes_rules_hold_for_a_command_too_large_to_echo() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    std::fs::create_dir_all(p.home.path().join(".claude")).unwrap();
    std::fs::write(
        p.home.path().join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(git add:*)"]}}"#,
    )
    .unwrap();
    let command = format!("git add {}", "x".repeat(70_000));
    let r = bash_reply(&p, &tmp, &command);
    let text = r.to_string();
    assert_eq!(
        r["hookSpecificOutput"]["permissionDecisionReason"],
        "Permission to use Bash has been denied by your Claude Code rule Bash(git add:*)",
        "{}",
        &text[..text.len().min(300)]
    );
}
