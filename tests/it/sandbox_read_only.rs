//! Issue 40 item 9: read-only confinement for read-only work. `hookd exec --read-only`, and the
//! modes `sandbox.read_only_modes` names (a Claude Code `plan` call), leave nothing writable but
//! the command's own temporary directory: every write below is performed and must fail, every
//! read must work. A few cases replay Codex's Linux sandbox tests, each citing its source.

use std::path::Path;

use serde_json::json;

use crate::sandbox::{confinable, hookd, project};
use crate::sandbox_agents::as_the_agent;
use crate::support::{stderr, stdout, Project};

/// `hookd exec [--read-only] -- bash -c SCRIPT` in the project: (exit code, stdout + stderr).
fn exec(p: &Project, tmp: &Path, read_only: bool, script: &str) -> (i32, String) {
    let mut args = vec!["exec"];
    if read_only {
        args.push("--read-only");
    }
    args.extend(["--", "bash", "-c", script]);
    let o = hookd(p, tmp, &args).output().unwrap();
    let code = o.status.code().unwrap_or(-1);
    (code, format!("{}{}", stdout(&o), stderr(&o)))
}

#[test]
fn read_only_writes_nothing_but_its_own_temporary_directory_and_reads_everything() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    // The user lets confined commands write one more place: read-only takes that away too.
    let extra = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    p.write_home(
        "config.yaml",
        &format!(
            "sandbox: {{enabled: true, write: ['{}']}}\n",
            extra.path().display()
        ),
    );
    std::fs::write(p.path().join("README"), "hello\n").unwrap();
    let home = p.home.path().display().to_string();
    let writes = [
        (
            "project",
            "echo x > made".to_string(),
            p.path().join("made"),
        ),
        (
            "project subdirectory",
            "mkdir -p src/deep".to_string(),
            p.path().join("src"),
        ),
        (
            "a project file",
            "echo x >> README".to_string(),
            p.path().join("README.x"),
        ),
        (
            "home",
            format!("echo x > {home}/planted"),
            p.home.path().join("planted"),
        ),
        (
            "the host's temporary directory",
            format!("echo x > {}/leak", tmp.display()),
            tmp.join("leak"),
        ),
        (
            "the user's `write` place",
            format!("echo x > {}/w", extra.path().display()),
            extra.path().join("w"),
        ),
    ];
    // Read-write, each write lands where the policy allows it (the project, the `write`
    // place), so the checks below can fail.
    let (code, out) = exec(&p, &tmp, false, "echo x > made");
    assert_eq!(code, 0, "{out}");
    assert!(p.path().join("made").exists());
    std::fs::remove_file(p.path().join("made")).unwrap();
    let (code, out) = exec(&p, &tmp, false, &writes[5].1);
    assert_eq!(code, 0, "{out}");
    std::fs::remove_file(extra.path().join("w")).unwrap();
    for (place, script, marker) in &writes {
        let (code, out) = exec(&p, &tmp, true, script);
        // The host's temporary directory is covered by the command's own: the write lands
        // there, and is gone with it.
        if !place.contains("temporary") {
            assert_ne!(code, 0, "{place}: {out}");
        }
        assert!(!marker.exists(), "{place}: {out}");
    }
    assert_eq!(
        std::fs::read_to_string(p.path().join("README")).unwrap(),
        "hello\n"
    );
    // Reads work, and so do writes in the command's own temporary directory (gone after it).
    let (code, out) = exec(
        &p,
        &tmp,
        true,
        "cat README && ls / >/dev/null && git status --short >/dev/null && \
         echo scratch > \"$TMPDIR/s\" && cat \"$TMPDIR/s\" && echo x > /tmp/t && cat /tmp/t",
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(out, "hello\nscratch\nx\n");
    assert!(!tmp.join("s").exists() && !Path::new("/tmp/t").exists());
}

#[test]
fn codexs_read_only_cases_replayed() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let outside = tempfile::NamedTempFile::new_in(crate::support::outside_tmp()).unwrap();
    // openai/codex codex-rs/linux-sandbox/tests/suite/landlock.rs, `test_root_read`:
    // `ls -l /bin` succeeds.
    let (code, out) = exec(&p, &tmp, true, "ls -l /bin");
    assert_eq!(code, 0, "{out}");
    // Same file, `test_root_write` (should_panic): `echo blah > TMPFILE` outside the writable
    // roots fails, and the file stays empty.
    let script = format!("echo blah > {}", outside.path().display());
    let (code, out) = exec(&p, &tmp, true, &script);
    assert_ne!(code, 0, "{out}");
    assert_eq!(std::fs::read_to_string(outside.path()).unwrap(), "");
    // Same file, `test_dev_null_write`: `echo blah > /dev/null` succeeds.
    let (code, out) = exec(&p, &tmp, true, "echo blah > /dev/null");
    assert_eq!(code, 0, "{out}");
    // Same file, `sandbox_blocks_dev_tcp_redirection` (under `new_read_only_policy`): bash's
    // `/dev/tcp` does not connect, to a port that listens.
    let (_listener, port) = crate::sandbox::listener();
    let script = format!("echo hi > /dev/tcp/127.0.0.1/{port}");
    let (code, out) = exec(&p, &tmp, true, &script);
    assert_ne!(code, 0, "{out}");
}

/// The Claude Code adapter's reply to a `tool` call with `input` in permission mode `mode`.
fn reply(p: &Project, tmp: &Path, mode: &str, tool: &str, input: serde_json::Value) -> String {
    let adapter = hookd(p, tmp, &["adapter", "claude-code", "--no-daemon"]);
    let payload = json!({
        "session_id": "s", "cwd": p.path(), "hook_event_name": "PreToolUse",
        "permission_mode": mode, "tool_name": tool, "tool_input": input,
    });
    let o = crate::support::with_stdin(adapter, &payload.to_string());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn a_mode_the_user_names_runs_the_models_calls_read_only() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true, read_only_modes: [plan]}\n",
    );
    std::fs::write(p.path().join("README"), "hello\n").unwrap();
    let command = "echo x > made; cat README >/dev/null && echo read";
    let rewrite = |mode: &str| -> String {
        let r: serde_json::Value =
            serde_json::from_str(&reply(&p, &tmp, mode, "Bash", json!({"command": command})))
                .unwrap();
        r["hookSpecificOutput"]["updatedInput"]["command"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Claude Code's plan mode: the rewrite says --read-only, and the write fails.
    let plan = rewrite("plan");
    assert!(plan.contains(" --read-only "), "{plan}");
    let out = as_the_agent(&p, &tmp, &plan);
    assert!(!p.path().join("made").exists(), "{out}");
    assert!(out.contains("read\nstatus=0"), "{out}");
    // Its file tools too: a Write into the project is denied.
    let r = reply(
        &p,
        &tmp,
        "plan",
        "Write",
        json!({"file_path": "notes.md", "content": "x"}),
    );
    assert!(r.contains("\"permissionDecision\":\"deny\""), "{r}");
    assert!(
        r.contains("is outside the places the sandbox lets commands write"),
        "{r}"
    );
    // The default mode writes the project.
    let standard = rewrite("default");
    assert!(!standard.contains("--read-only"), "{standard}");
    let out = as_the_agent(&p, &tmp, &standard);
    assert!(p.path().join("made").exists(), "{out}");
    let r = reply(
        &p,
        &tmp,
        "default",
        "Write",
        json!({"file_path": "notes.md", "content": "x"}),
    );
    assert_eq!(r.trim(), "{}");
}

#[test]
fn a_trusted_project_may_add_read_only_modes_and_never_remove_one() {
    let (p, _tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true, read_only_modes: [plan]}\n",
    );
    let modes = |p: &Project| {
        let o = p.run(&["check"]);
        let said = stdout(&o);
        said.lines()
            .find(|l| l.starts_with("sandbox: on"))
            .and_then(|l| l.split("the model's calls in ").nth(1))
            .and_then(|l| l.split(" mode: read-only").next())
            .unwrap_or_else(|| panic!("{said}{}", stderr(&o)))
            .to_string()
    };
    assert_eq!(modes(&p), "plan");
    p.write("config.yaml", "sandbox: {read_only_modes: [auto]}\n");
    assert_eq!(modes(&p), "plan, auto");
    p.write("config.yaml", "sandbox: {read_only_modes: []}\n");
    assert_eq!(modes(&p), "plan");
    // A mode that does not exist is an error naming the nearest.
    p.write("config.yaml", "sandbox: {read_only_modes: [plna]}\n");
    let o = p.run(&["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("`sandbox.read_only_modes`: unknown mode `plna` (did you mean `plan`?); valid modes: standard, plan, auto, readonly, all"),
        "{}",
        stderr(&o)
    );
}
