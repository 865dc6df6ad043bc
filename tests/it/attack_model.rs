//! An attacker's review of model commands (`gate_shell_tools`: compounds split at `&&`, `||`,
//! `;`, `|`, `|&`, `cd` admitted for the agent's shell). Each test performs one attack: it first
//! shows, with real `bash -c`, that the command does what the gate did not check (a marker file
//! appears, or a protected file is read), then asserts that the gate denies it. All four were
//! holes when the review found them; each failed before its fix.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{eventually, gated, stderr, stdout, with_stdin, Project};

/// The Claude Code adapter's reply to a Bash call of `command` in the project: `{}` admits it.
fn claude_reply(p: &Project, command: &str) -> Value {
    let payload =
        crate::support::pre_tool_payload(p.path(), "Bash", serde_json::json!({"command": command}));
    let o = with_stdin(
        p.cmd(&[
            "adapter",
            "claude-code",
            "--no-daemon",
            "--gate-shell-tools",
        ]),
        &payload.to_string(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_str(stdout(&o).lines().next().unwrap_or("null")).unwrap()
}

fn assert_denied(p: &Project, command: &str) {
    let reply = claude_reply(p, command);
    assert_eq!(
        reply["hookSpecificOutput"]["permissionDecision"], "deny",
        "admitted: {command:?} -> {reply}"
    );
}

/// What the agent's shell does with `command`: `bash -c`, non-interactive, in the project.
fn bash(p: &Project, command: &str) -> String {
    stdout(&p.bash(command))
}

fn exists(p: &Project, name: &str) -> bool {
    Path::new(&p.path().join(name)).exists()
}

/// `printf` and `test`/`[` are bash builtins missing from the gate's SHELL_ONLY list. `printf -v
/// NAME` assigns a shell variable and `test -v NAME` reads one; in both, an array subscript is
/// evaluated arithmetically, which runs a command substitution hidden in single quotes the gate
/// read as literal text. `printf -v PATH …` also changes which program a later admitted part
/// (`ls`) runs.
#[test]

fn builtins_that_assign_or_evaluate_variables_are_not_plain_programs() {
    let p = gated(&["^printf .*$", "^test .*$", "^ls( .*)?$"]);
    let attacks = [
        ("printf -v 'a[$(touch pwned-1)]' %s x", "pwned-1"),
        ("ls && test -v 'a[$(touch pwned-2)]'", "pwned-2"),
    ];
    for (command, marker) in attacks {
        bash(&p, command);
        assert!(
            exists(&p, marker),
            "bash did not run the hidden command of {command:?}"
        );
    }
    // PATH rebound by an admitted part: the next part's `ls` is the project's own script.
    std::fs::create_dir_all(p.path().join("bin")).unwrap();
    std::fs::write(p.path().join("bin/ls"), "#!/bin/sh\n: > pwned-3\n").unwrap();
    std::fs::set_permissions(
        p.path().join("bin/ls"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let rebind = "printf -v PATH %s bin && ls";
    bash(&p, rebind);
    assert!(exists(&p, "pwned-3"), "bash did not run bin/ls");
    for (command, _) in attacks {
        assert_denied(&p, command);
    }
    assert_denied(&p, rebind);
}

/// `names_protected` takes a `cd` part's target as its first word that is not `-L`, `-P` or
/// `--`, so `cd -- -P` (a directory named `-P`) is taken for `cd` alone (home): the directory the
/// command is really in is never a candidate, and a relative path from it reaches the project's
/// `.claude/settings.json`. `^cd( .*)?$` is what `Bash(cd:*)` imports to.
#[test]

fn cd_into_a_directory_named_like_an_option_is_followed() {
    let p = gated(&["^cd( .*)?$", "^cat [a-z./]+$"]);
    for d in ["-P", "-L", "--", ".claude"] {
        std::fs::create_dir_all(p.path().join(d)).unwrap();
    }
    std::fs::write(p.path().join(".claude/settings.json"), "SECRET-SETTINGS\n").unwrap();
    // The gate does protect the file when named from where the command is.
    assert_denied(&p, "cat .claude/settings.json");
    for command in [
        "cd -- -P && cat ../.claude/settings.json",
        "cd -P -- -L && cat ../.claude/settings.json",
        "cd -- -- && cat ../.claude/settings.json",
    ] {
        assert!(
            bash(&p, command).contains("SECRET-SETTINGS"),
            "bash did not read the file with {command:?}"
        );
        assert_denied(&p, command);
    }
}

/// The protected-path check resolves symlinks as they are when the call is judged; a compound
/// lets an earlier part create the link a later part goes through, in the same call.
#[test]

fn a_symlink_made_earlier_in_the_command_does_not_hide_a_protected_file() {
    let p = gated(&["^ln -s [a-z./]+ [a-z]+$", "^cat [a-z./]+$"]);
    std::fs::create_dir_all(p.path().join(".claude")).unwrap();
    std::fs::write(p.path().join(".claude/settings.json"), "SECRET-SETTINGS\n").unwrap();
    let command = "ln -s . x && cat x/.claude/settings.json";
    assert!(bash(&p, command).contains("SECRET-SETTINGS"));
    std::fs::remove_file(p.path().join("x")).unwrap();
    assert_denied(&p, command);
}

/// The protected-path check of an admitted command is quadratic in its words (every word
/// naming an existing directory is joined with every other word), and multiplied by every
/// directory a `cd` part may have moved to (up to 64): one 8 KiB command keeps the verdict busy
/// for seconds. A verdict must stay well under 100 ms; allow a generous second here.
#[test]

fn a_long_admitted_command_is_judged_quickly() {
    let p = gated(&["^cd [a-z]+$", "^ls( [a-z/.]+)*$"]);
    let cds = "cd a;cd b;cd c;cd d;cd e;cd f;";
    let words = " /tmp".repeat((8 * 1024 - cds.len() - 3) / 5);
    let command = format!("{cds}ls{words}");
    assert!(command.len() <= 8 * 1024);
    let payload =
        crate::support::pre_tool_payload(p.path(), "Bash", serde_json::json!({"command": command}));
    let mut child = p
        .cmd(&[
            "adapter",
            "claude-code",
            "--no-daemon",
            "--gate-shell-tools",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let start = Instant::now();
    let limit = Duration::from_secs(1);
    let done = eventually(limit * 10, || child.try_wait().unwrap().is_some());
    if !done {
        let _ = child.kill();
        let _ = child.wait();
    }
    let took = start.elapsed();
    assert!(
        done && took < limit,
        "verdict took {took:?}{} for a {} byte command",
        if done { "" } else { " (killed, unfinished)" },
        command.len()
    );
}

/// An archive extracted, or a directory's contents copied, writes files its words do not name:
/// `tar -xf x.tar -C ~` and `cp -r x/. ~` put the model's `.infer/config.yaml` over the user's
/// (the home directory may be named freely, `ls ~`, and the archive's members are not words of
/// the command). Each is first run for real with bash, then asked of the gate.
#[test]
fn archives_and_directory_contents_cannot_land_on_hookds_files() {
    let p = gated(&[
        "^tar .*",
        "^cp .*",
        "^rsync .*",
        "^unzip .*",
        "^cd [a-z]+$",
        "^busybox tar .*",
        "^git --work-tree=.*",
        "^python3 -m tarfile .*",
    ]);
    let home = p.home.path().display().to_string();
    std::fs::create_dir_all(p.path().join("x/.infer")).unwrap();
    std::fs::create_dir_all(p.path().join("build")).unwrap();
    std::fs::write(p.path().join("x/.infer/config.yaml"), "PLANTED\n").unwrap();
    let made = Command::new("tar")
        .args(["-cf", "x.tar", "-C", "x", "."])
        .current_dir(p.path())
        .status()
        .unwrap();
    assert!(made.success());
    let targets = [
        p.home.path().join(".infer/config.yaml"),
        p.infer().join("config.yaml"),
    ];
    let kept: Vec<Option<String>> = targets
        .iter()
        .map(|t| std::fs::read_to_string(t).ok())
        .collect();
    for command in [
        format!("tar -xf x.tar -C {home}"),
        format!("cp -r x/. {home}"),
        format!("cp -rT x {home}"),
        "tar xf x.tar".to_string(),
        format!("python3 -m tarfile -e x.tar {home}"),
    ] {
        bash(&p, &command);
        let planted = targets
            .iter()
            .any(|t| std::fs::read_to_string(t).is_ok_and(|text| text == "PLANTED\n"));
        assert!(planted, "{command} did not reach hookd's files when run");
        for (t, k) in targets.iter().zip(&kept) {
            match k {
                Some(text) => std::fs::write(t, text).unwrap(),
                None => {
                    let _ = std::fs::remove_file(t);
                }
            }
        }
        assert_denied(&p, &command);
    }
    for command in [
        format!("rsync -a x/ {home}"),
        format!("unzip -o x.zip -d {home}"),
        "unzip x.zip".to_string(),
        "tar -xPf x.tar".to_string(),
        "cd build && tar -xf ../x.tar -C ..".to_string(),
        "busybox tar xf x.tar".to_string(),
        format!("git --work-tree={home} checkout ."),
    ] {
        assert_denied(&p, &command);
    }
    // Into a directory that holds none of them, and what writes nothing, still goes.
    for command in [
        "tar -xf x.tar -C build",
        "tar -tf x.tar",
        "tar -cf y.tar build",
        "cp -r x build/copy",
        "unzip -l x.zip",
    ] {
        assert_eq!(claude_reply(&p, command), json!({}), "{command}");
    }
}

/// Issue 32, item 3: a short option's value may be attached to it (`cp -t.infer x` is
/// `cp -t .infer x`). After an allowed `cd ~`, `cp -t.infer config.yaml` replaced the user's
/// own `~/.infer/config.yaml` (run for real below), and `sort -o.claude/settings.local.json`
/// wrote the agent's settings, while the spaced forms were denied.
#[test]
fn attached_option_values_are_read_as_the_paths_they_are() {
    let p = gated(&[
        "^cd$",
        "^cp .*",
        "^sort .*",
        "^mv .*",
        "^install .*",
        "^ln .*",
    ]);
    let home = p.home.path();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join("config.yaml"), "PLANTED\n").unwrap();
    let kept = std::fs::read_to_string(home.join(".infer/config.yaml")).unwrap();
    bash(&p, "cd && cp -t.infer config.yaml");
    assert_eq!(
        std::fs::read_to_string(home.join(".infer/config.yaml")).unwrap(),
        "PLANTED\n",
        "the attack itself did not land"
    );
    std::fs::write(home.join(".infer/config.yaml"), &kept).unwrap();
    for command in [
        "cd && cp -t.infer config.yaml",
        "cd && mv -t.infer config.yaml",
        "cd && install -t.infer config.yaml",
        "cd && ln -sft.infer config.yaml",
        "cd && cp -rt.infer config.yaml",
        "cd && sort -o.claude/settings.local.json config.yaml",
        "sort -o.infer/config.yaml x",
    ] {
        let reply = claude_reply(&p, command);
        let reason = reply["hookSpecificOutput"]["permissionDecisionReason"].to_string();
        assert!(
            reason.contains("one of hookd's own files"),
            "{command}: {reply}"
        );
    }
    // Options whose letters only look like paths still go.
    for command in ["sort -r x", "cp -rt build x"] {
        std::fs::create_dir_all(p.path().join("build")).unwrap();
        assert_eq!(claude_reply(&p, command), json!({}), "{command}");
    }
}

/// The Claude Code adapter's reply to a call of `tool` with `input`, from `cwd`, with `env`
/// added to the adapter's environment.
fn reply_with(p: &Project, env: &[(&str, &Path)], cwd: &Path, tool: &str, input: Value) -> Value {
    let payload = crate::support::pre_tool_payload(cwd, tool, input);
    let mut c = p.cmd(&[
        "adapter",
        "claude-code",
        "--no-daemon",
        "--gate-shell-tools",
    ]);
    c.current_dir(cwd);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = with_stdin(c, &payload.to_string());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_str(stdout(&o).lines().next().unwrap_or("null")).unwrap()
}

/// Issue 32, item 2: the places `hookd install` writes hookd's hooks to, resolved as the agents
/// resolve them, are the model's to leave alone: the agents' own config-location variables
/// (`CLAUDE_CONFIG_DIR`, `GEMINI_CLI_HOME`, `CRUSH_GLOBAL_CONFIG`), a project-scope install made
/// from a subdirectory, Gemini's `~/.gemini/.env` and `~/.env` (the user's own environment), and
/// an `.infer` directory below the project root. Each install is made for real first; the
/// model's `Write` over it (which would leave the next session ungated) is denied, as is a
/// shell command naming it; files next to them stay writable.
#[test]
fn the_places_hookd_was_installed_to_are_protected_as_the_agents_find_them() {
    let p = gated(&["^cp .*", "^cat .*"]);
    let t = tempfile::tempdir().unwrap();
    let (cc, gh, crush) = (
        t.path().join("cc"),
        t.path().join("gh"),
        t.path().join("cr"),
    );
    let env: Vec<(&str, &Path)> = vec![
        ("CLAUDE_CONFIG_DIR", &cc),
        ("GEMINI_CLI_HOME", &gh),
        ("CRUSH_GLOBAL_CONFIG", &crush),
    ];
    let web = p.path().join("web");
    std::fs::create_dir_all(&web).unwrap();
    let install = |agent: &str, scope: &str, cwd: &Path| {
        let mut c = p.cmd(&["install", agent, "--scope", scope]);
        c.current_dir(cwd);
        for (k, v) in &env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{agent} {scope}: {}", stderr(&o));
    };
    install("claude-code", "user", p.path());
    install("gemini", "user", p.path());
    install("crush", "user", p.path());
    install("claude-code", "project", &web);
    install("gemini", "project", &web);
    install("crush", "project", &web);
    let installed = [
        cc.join("settings.json"),
        gh.join(".gemini/settings.json"),
        crush.join("crush.json"),
        web.join(".claude/settings.json"),
        web.join(".gemini/settings.json"),
        web.join("crush.json"),
    ];
    for file in &installed {
        let text = std::fs::read_to_string(file).unwrap();
        assert!(text.contains("adapter"), "{}: {text}", file.display());
    }
    let mut targets: Vec<String> = installed.iter().map(|f| f.display().to_string()).collect();
    targets.extend([
        "~/.gemini/.env".to_string(),
        "~/.env".to_string(),
        format!("{}/.gemini/.env", gh.display()),
        "sub/.infer/config.yaml".to_string(),
        "web/.claude/settings.local.json".to_string(),
        // The whole directory: its skills and agents declare hooks (issue 39).
        "web/.claude/skills/pwn/SKILL.md".to_string(),
        "web/.claude/commands/review.md".to_string(),
        "web/.env".to_string(),
        "web/.mcp.json".to_string(),
    ]);
    for target in &targets {
        let reply = reply_with(
            &p,
            &env,
            p.path(),
            "Write",
            json!({"file_path": target, "content": "{}"}),
        );
        assert_eq!(
            reply["hookSpecificOutput"]["permissionDecision"], "deny",
            "Write {target} admitted: {reply}"
        );
        let command = format!("cp /dev/null {target}");
        let reply = reply_with(&p, &env, p.path(), "Bash", json!({"command": command}));
        assert_eq!(
            reply["hookSpecificOutput"]["permissionDecision"], "deny",
            "{command} admitted: {reply}"
        );
    }
    // From inside web/, relative names reach the same files; moving the directory that holds
    // them away is a write too.
    for command in ["cp /dev/null .claude/settings.json", "cp -r /tmp .gemini"] {
        let reply = reply_with(&p, &env, &web, "Bash", json!({"command": command}));
        assert_eq!(
            reply["hookSpecificOutput"]["permissionDecision"], "deny",
            "{command} admitted: {reply}"
        );
    }
    // What sits next to them is the model's to write.
    for target in ["web/src/main.rs", "web/.env.example", "web/crush.json.md"] {
        let reply = reply_with(
            &p,
            &env,
            p.path(),
            "Write",
            json!({"file_path": target, "content": "x"}),
        );
        assert_eq!(reply, json!({}), "Write {target}");
    }
}

/// Issue 32, item 3: `hookd allow --model` gives the adapter's verdict, hookd's own files
/// included: it said "allowed" for `sort -o .infer/config.yaml x`, which the adapter denies.
#[test]
fn allow_model_gives_the_adapters_verdict_on_protected_files() {
    let p = gated(&["^sort .*", "^cd$"]);
    for command in [
        "sort -o .infer/config.yaml x",
        "sort -o.infer/config.yaml x",
        "cd && sort -o .claude/settings.json x",
    ] {
        assert_denied(&p, command);
        let o = p.run(&["allow", "--model", "--", command]);
        assert_eq!(o.status.code(), Some(1), "{command}: {}", stdout(&o));
        assert!(
            stdout(&o).starts_with("denied: protected_path: `"),
            "{command}: {}",
            stdout(&o)
        );
        let o = p.run(&["allow", "--model", "--json", "--", command]);
        let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!(v["allowed"], false, "{command}: {v}");
        assert_eq!(v["reason"], "protected_path", "{command}: {v}");
    }
    let o = p.run(&["allow", "--model", "--", "sort -o out.txt x"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// A repository's `.git/config` and `.git/hooks/` name programs git runs: the model's `Write`
/// of `core.fsmonitor` into `.git/config` ran its command the next time anyone ran `git status`
/// (the user's own allow-listed hook, the agent at start-up), past the gate. Performed for real
/// below, then denied as a protected place, by file tool and by shell command.
#[test]
fn the_repositorys_git_config_and_hooks_are_protected() {
    let p = gated(&["^cp .*", "^cat .*", "^git status$", "^tar .*"]);
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(p.path())
            .env("HOME", p.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap()
    };
    assert!(git(&["init", "-q"]).status.success());
    let marker = p.path().join("fsmonitor-ran");
    let config = p.path().join(".git/config");
    let kept = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        format!("{kept}[core]\n\tfsmonitor = touch {}\n", marker.display()),
    )
    .unwrap();
    git(&["status", "--short"]);
    assert!(marker.exists(), "the attack itself did not land");
    std::fs::write(&config, &kept).unwrap();
    for target in [".git/config", ".git/hooks/pre-commit", "web/.git/config"] {
        let reply = reply_with(
            &p,
            &[],
            p.path(),
            "Write",
            json!({"file_path": target, "content": "x"}),
        );
        assert_eq!(
            reply["hookSpecificOutput"]["permissionDecision"], "deny",
            "Write {target}: {reply}"
        );
        assert_denied(&p, &format!("cp x {target}"));
    }
    assert_denied(&p, "cp -r hooks .git");
    // An archive's members are not named: extracting into a directory that holds a repository
    // (or an agent's settings) could replace them.
    std::fs::create_dir_all(p.path().join("web/.git")).unwrap();
    std::fs::create_dir_all(p.path().join("build")).unwrap();
    assert_denied(&p, "tar -xf x.tar -C web");
    assert_eq!(claude_reply(&p, "tar -xf x.tar -C build"), json!({}));
    for command in ["cat .git/HEAD", "git status", "cat src/config"] {
        assert_eq!(claude_reply(&p, command), json!({}), "{command}");
    }
}
