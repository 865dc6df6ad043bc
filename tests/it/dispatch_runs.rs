//! How hooks run under `hookd dispatch`: in order, killed on SIGINT and still reported, with
//! the caps and grace of hooks.yaml, bounded memory against a flood, no borrowed shell setup.

use crate::support::{eventually, json_lines, stderr, stdout, Project};

#[test]
fn twenty_hooks_at_one_point_run_in_config_order() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^echo [0-9]+$']}}}}\n",
    );
    let hooks: String = (0..20)
        .map(|i| format!("  - {{name: h{i}, hook: post_tool, command: 'echo {i}'}}\n"))
        .collect();
    p.write("hooks.yaml", &format!("enabled: true\nhooks:\n{hooks}"));
    let out = p.run(&["dispatch", "post_tool", "--events", "-"]);
    let ev = json_lines(&stderr(&out));
    assert_eq!(ev.len(), 20);
    for (i, e) in ev.iter().enumerate() {
        assert_eq!(e["output"], format!("{i}\n"));
        assert_eq!(e["seq"], i as u64 + 1);
    }
}

#[test]
fn sigint_kills_running_hooks_and_still_reports_them() {
    let p = Project::new();
    let script = p.path().join("slow.sh");
    std::fs::write(&script, "#!/bin/sh\nsleep 60 &\necho $! > \"$HOOKD_PROJECT_DIR/child.pid\"\necho $$ > \"$HOOKD_PROJECT_DIR/leader.pid\"\nwait\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./slow\\.sh$', '^true$']}}}}\n",
    );
    p.write("hooks.yaml", "enabled: true\nhooks:\n  - {name: slow, hook: post_session, command: ./slow.sh, timeout: 120}\n  - {name: never, hook: post_session, command: 'true'}\n");
    let events = p.path().join("events.jsonl");
    let child = p
        .cmd(&[
            "dispatch",
            "post_session",
            "--events",
            events.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid_file = p.path().join("child.pid");
    let start = std::time::Instant::now();
    let started = eventually(std::time::Duration::from_secs(10), || {
        pid_file.exists() && p.path().join("leader.pid").exists()
    });
    assert!(started, "hook never started");
    std::thread::sleep(std::time::Duration::from_millis(50));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(stderr(&out).contains("hookd: interrupted; running hooks were killed"));
    let ev = json_lines(&std::fs::read_to_string(&events).unwrap());
    assert_eq!(ev.len(), 1, "the second hook never starts: {ev:?}");
    assert_eq!(ev[0]["error"], "interrupted");
    assert_eq!(ev[0]["exit_code"], -1);
    let outcome: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(outcome["commands"].as_array().unwrap().len(), 1);
    for f in ["child.pid", "leader.pid"] {
        let pid: i32 = std::fs::read_to_string(p.path().join(f))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.rsplit(')').next().unwrap().trim_start().starts_with('Z'))
            .unwrap_or(false);
        assert!(!alive, "{f} {pid} survived");
    }
}

#[test]
fn output_caps_and_grace_come_from_hooks_yaml() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^head -c [0-9]+ /dev/zero$']}}}}\n",
    );
    p.write("hooks.yaml", "enabled: true\nmax_output: 100\ngrace: 1\nhooks:\n  - {name: a, hook: post_tool, command: 'head -c 1000 /dev/zero'}\n  - {name: b, hook: post_tool, command: 'head -c 1001 /dev/zero', max_output: 10}\n");
    let out = p.run(&["dispatch", "post_tool", "--events", "-"]);
    let ev = json_lines(&stderr(&out));
    assert_eq!(
        (
            ev[0]["stdout"].as_str().unwrap().len(),
            ev[0]["stdout_dropped_bytes"].as_u64()
        ),
        (100, Some(900))
    );
    assert_eq!(
        (
            ev[1]["stdout"].as_str().unwrap().len(),
            ev[1]["stdout_dropped_bytes"].as_u64()
        ),
        (10, Some(991))
    );
    assert_eq!(ev[1]["truncated"], true);
    p.write(
        "hooks.yaml",
        "enabled: true\nmax_output: 0\ngrace: 99\nhooks: []\n",
    );
    let out = p.run(&["check"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("error: max_output 0 is out of range\n  --> .infer/hooks.yaml:2:13"),
        "{err}"
    );
    assert!(
        err.contains("error: grace 99 is out of range\n  --> .infer/hooks.yaml:3:8"),
        "{err}"
    );
}

#[test]
fn a_timeout_of_zero_means_the_default() {
    let p = Project::new();
    p.write("hooks.yaml", "enabled: true\nhooks: [{name: z, hook: post_tool, command: 'true', timeout: 0}, {name: big, hook: post_tool, command: 'true', timeout: 3600}]\n");
    let out = stdout(&p.run(&["check"]));
    assert!(
        out.contains("hook z `true` (timeout 30s, .infer/hooks.yaml:2)")
            && out.contains("hook big `true` (timeout 3600s, .infer/hooks.yaml:2)"),
        "{out}"
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: z, hook: post_tool, command: 'true', timeout: 3601}]\n",
    );
    assert!(stderr(&p.run(&["check"]))
        .contains("error: timeout 3601 is over the maximum of 3600 seconds"));
}

#[test]
fn a_flooding_hook_keeps_memory_near_the_cap() {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^yes$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: flood, hook: post_tool, command: 'yes', timeout: 2}]\n",
    );
    let events = p.path().join("events.jsonl");
    // Events to a file: a pipe nobody reads while we sample would block hookd's write.
    let mut child = p
        .cmd(&[
            "dispatch",
            "post_tool",
            "--events",
            events.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // hookd's own peak resident set (VmHWM only grows), sampled until it exits.
    let status = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0u64;
    while child.try_wait().unwrap().is_none() {
        if let Ok(text) = std::fs::read_to_string(&status) {
            if let Some(line) = text.lines().find(|l| l.starts_with("VmHWM:")) {
                peak_kib = line
                    .split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(peak_kib);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let ev = json_lines(&std::fs::read_to_string(&events).unwrap());
    let dropped = ev[0]["stdout_dropped_bytes"].as_u64().unwrap();
    assert!(
        dropped > 50 * 1024 * 1024,
        "the flood was real: {dropped} bytes dropped"
    );
    assert_eq!(ev[0]["timed_out"], true);
    assert!(peak_kib > 0, "sampled hookd's memory");
    assert!(
        peak_kib < 32 * 1024,
        "hookd peaked at {peak_kib} KiB while dropping {dropped} bytes"
    );
}

#[test]
fn bash_env_and_exported_functions_do_not_affect_a_bash_hook() {
    let p = Project::new();
    let evil = p.path().join("evil.sh");
    std::fs::write(&evil, format!("touch {}/sourced\n", p.path().display())).unwrap();
    let script = p.path().join("hook.sh");
    std::fs::write(&script, "#!/bin/bash\necho \"output: $(echo hi)\"\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^\\./hook\\.sh$']}}}}\n",
    );
    p.write(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: h, hook: post_session, command: ./hook.sh}]\n",
    );
    let out = p
        .cmd(&["dispatch", "post_session", "--events", "-"])
        .env("BASH_ENV", &evil)
        .env("ENV", &evil)
        .env(
            "BASH_FUNC_echo%%",
            format!("() {{ touch {}/function-ran; }}", p.path().display()),
        )
        .output()
        .unwrap();
    let ev = json_lines(&stderr(&out));
    assert_eq!(ev[0]["stdout"], "output: hi\n", "{}", ev[0]);
    assert!(!p.path().join("sourced").exists(), "BASH_ENV was sourced");
    assert!(
        !p.path().join("function-ran").exists(),
        "an exported function replaced echo"
    );
}
