//! Issue 43 item 7: inside a confined agent (`hookd run --confine`), the model's calls and the
//! hooks get a sandbox nested in the agent's. A confined `hookd exec` with the launcher's
//! variable stands in for the agent here (the launcher itself needs root's managed settings;
//! `scripts/e2e/claude-code.sh` scenario 14 and `scripts/e2e/gemini.sh` scenario 8 run the real
//! agents under it): inside it, a second `hookd exec` with a narrower list must confine again.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use crate::sandbox::{confinable, hookd, project};
use crate::support::{stderr, stdout};

/// A loopback HTTP server that records each request line and answers with it.
fn upstream() -> (u16, Arc<Mutex<Vec<String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { continue };
            let mut buf = Vec::new();
            let mut chunk = [0u8; 1024];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                match c.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            let text = String::from_utf8_lossy(&buf).to_string();
            let line = text.lines().next().unwrap_or("(nothing)").to_string();
            s.lock().unwrap().push(line.clone());
            let body = format!("upstream saw {line}\n");
            let _ = write!(
                c,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, seen)
}

/// The hookd a confined command runs (its /tmp is its own: not one built below /tmp).
fn inner_hookd() -> String {
    crate::support::hookd_outside_tmp().display().to_string()
}

/// `argv` run as `hookd run --confine` runs an agent (the same policy and command, made by
/// `hookd::adapter::confine::{policy, command}` for Gemini CLI with `--allow-host
/// 127.0.0.1`), from the project, with `vars` besides: the command is the agent. (`hookd run`
/// itself refuses to start without the agent's system-wide install, which a test does not make.)
fn as_a_confined_agent(
    p: &crate::support::Project,
    tmp: &std::path::Path,
    argv: &[&str],
    vars: &[(&str, &str)],
) -> std::process::Output {
    let mut env: Vec<(std::ffi::OsString, std::ffi::OsString)> = vec![
        ("HOME".into(), p.home.path().into()),
        ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
        ("TMPDIR".into(), tmp.into()),
        ("HOOKD_TRUST_PROJECT".into(), "1".into()),
    ];
    env.extend(vars.iter().map(|(k, v)| ((*k).into(), (*v).into())));
    let host = hookd::host::Host::new(env, Some(p.path().to_path_buf()));
    let opts = hookd::LoadOptions::from_host(&host, None).unwrap();
    let config = hookd::load(&opts).unwrap();
    let agent = hookd::adapter::by_name("gemini").unwrap();
    let policy = hookd::adapter::confine::policy(
        agent,
        &config.policy.sandbox,
        &host,
        &config.project_dir,
        &["127.0.0.1".to_string()],
    )
    .unwrap();
    let c = hookd::sandbox::prepare_in(&policy, &config.project_dir, p.path()).unwrap();
    let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
    hookd::adapter::confine::command(Arc::new(c), &policy, &argv, p.path(), &host)
        .output()
        .unwrap()
}

fn has_curl() -> bool {
    std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_command_nested_in_a_confined_agent_is_confined_again_and_its_proxy_chains() {
    if !confinable() || !has_curl() {
        return;
    }
    let (p, tmp) = project();
    // The agent's list (the outer) has 127.0.0.1, as `--allow-host` gives the agent its model
    // server; the configuration its commands get (the inner) has only localhost.
    p.write_home(
        "config.yaml",
        "sandbox:\n  network:\n    allow: [localhost, 127.0.0.1]\n",
    );
    let inner = p.home.path().join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    // A secret the agent may read and its commands may not (as the agent's credentials): the
    // outer sandbox shows it, the inner's configuration hides it.
    let secret = p.home.path().join("agent-secret");
    std::fs::write(&secret, "SECRET\n").unwrap();
    // A link to it, and one to the directory holding it, from elsewhere: a rule made on a link
    // is made on its target.
    std::os::unix::fs::symlink(&secret, p.home.path().join("link-to-secret")).unwrap();
    std::os::unix::fs::symlink(p.home.path(), p.path().join("link-to-home")).unwrap();
    std::fs::write(
        inner.join("config.yaml"),
        format!(
            "sandbox:\n  network:\n    allow: [localhost]\n  read_deny: ['{}']\n",
            secret.display()
        ),
    )
    .unwrap();
    let (port, seen) = upstream();
    let script = format!(
        r#"
case "$HTTP_PROXY" in http://127.0.0.1:3128) echo "proxy: the agent's";; http://127.0.0.1:*) echo "proxy: its own";; esac
echo "no_proxy=[$NO_PROXY$no_proxy]"
curl -sS "http://localhost:{port}/nested"
curl -sS "http://127.0.0.1:{port}/literal"
curl -sS --noproxy '*' --connect-timeout 3 "http://127.0.0.1:3128/" >/dev/null 2>&1 || echo "the agent's proxy: not reached"
touch "$(dirname "$TMPDIR")/planted" 2>/dev/null || echo "the agent's temporary directory: not written"
touch "$H/.claude-state" 2>/dev/null || echo "the home: not written"
touch .infer/x 2>/dev/null || echo ".infer: held"
cat /proc/1/environ >/dev/null 2>&1 || echo "the agent's environment: not read"
kill -0 1 2>/dev/null || echo "the agent: not signalled"
cat "$H/agent-secret" 2>/dev/null || echo "the agent's secret: not read"
cat "$H/link-to-secret" link-to-home/agent-secret 2>/dev/null || echo "through links: not read"
cat "$H/inner/config.yaml" >/dev/null && echo "the rest: read"
echo in > inside && echo "the project: written"
"#
    );
    let home = p.home.path().display().to_string();
    let config_dir = inner.display().to_string();
    let argv = [
        &inner_hookd(),
        "exec",
        "--config-dir",
        &config_dir,
        "--",
        "bash",
        "-c",
        &script,
    ];
    let o = as_a_confined_agent(&p, &tmp, &argv, &[("H", &home)]);
    let expected =         "proxy: its own\n\
         no_proxy=[]\n\
         upstream saw GET /nested HTTP/1.1\n\
         hookd refused 127.0.0.1: an IP address is reached only when `sandbox.network.allow` lists it (add `127.0.0.1` there in your ~/.infer/config.yaml to allow it)\n\
         the agent's proxy: not reached\n\
         the agent's temporary directory: not written\n\
         the home: not written\n\
         .infer: held\n\
         the agent's environment: not read\n\
         the agent: not signalled\n\
         the agent's secret: not read\n\
         through links: not read\n\
         the rest: read\n\
         the project: written\n";
    assert_eq!(stdout(&o), expected, "stderr: {}", stderr(&o));
    assert_eq!(*seen.lock().unwrap(), ["GET /nested HTTP/1.1"]);
    assert!(p.path().join("inside").exists());
}

#[test]
fn the_agents_variable_alone_does_not_weaken_the_sandbox() {
    if !confinable() {
        return;
    }
    // Where the full sandbox can be made, the variable changes nothing: the credential stores
    // stay hidden (the nested sandbox, Landlock alone, could not hide them).
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let home = p.home.path().display().to_string();
    let o = hookd(&p, &tmp, &["exec", "--", "bash", "-c"])
        .arg(r#"cat "$H/.ssh/id_ed25519" 2>/dev/null || echo hidden"#)
        .env("HOOKD_CONFINED_AGENT", "1")
        .env("H", &home)
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "hidden\n", "stderr: {}", stderr(&o));
    // Where it cannot (inside another sandbox) but no confined agent is evidently around (here:
    // the host's network interfaces are there), the command is not run rather than run in the
    // weaker nested sandbox.
    let o = hookd(&p, &tmp, &["exec", "--", &inner_hookd(), "exec"])
        .args(["--", "bash", "-c", r#"cat "$H/.ssh/id_ed25519"; echo ran"#])
        .env("HOOKD_CONFINED_AGENT", "1")
        .env("H", &home)
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "", "stderr: {}", stderr(&o));
    assert_eq!(o.status.code(), Some(126), "stderr: {}", stderr(&o));
    assert!(
        stderr(&o).starts_with("hookd exec: not run: this kernel cannot confine it: it lacks unprivileged user namespaces"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_agents_sandbox_grants_its_own_state_hosts_and_key_and_nothing_of_the_projects() {
    use hookd::host::Host;
    use hookd::sandbox::SandboxPolicy;
    let home = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let project = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let h = home.path();
    let host = |events: &std::path::Path| {
        Host::new(
            [
                ("HOME".into(), h.as_os_str().to_owned()),
                ("HOOKD_STATE_DIR".into(), h.join("state").into_os_string()),
                ("ANTHROPIC_API_KEY".into(), "sk-x".into()),
                ("HOOKD_EVENTS".into(), events.as_os_str().to_owned()),
            ],
            Some(project.path().to_path_buf()),
        )
    };
    let claude = hookd::adapter::by_name("claude-code").unwrap();
    let mut base = SandboxPolicy::default();
    base.egress = Some(Default::default());
    let extra = ["127.0.0.1".to_string()];
    let p = hookd::adapter::confine::policy(
        claude,
        &base,
        &host(&h.join("ev.jsonl")),
        project.path(),
        &extra,
    )
    .unwrap();
    assert!(p.enabled);
    assert_eq!(p.egress.unwrap().allow, ["api.anthropic.com", "127.0.0.1"]);
    for w in [".claude", ".claude.json", "state", "ev.jsonl"] {
        assert!(
            p.write.contains(&h.join(w)),
            "{w} not writable: {:?}",
            p.write
        );
    }
    assert!(h.join("ev.jsonl").is_file(), "the events file was not made");
    // hookd's state is the agent's to write but for the walks' memory, which the next session's
    // sandbox trusts: made, and hidden.
    assert!(p.places.hidden.contains(&h.join("state/walks")));
    assert!(h.join("state/walks").is_dir());
    assert!(p
        .places
        .read_only
        .contains(&h.join(".claude/settings.json")));
    assert_eq!(p.keep_env, ["ANTHROPIC_API_KEY"]);
    // The whole network, an events file the commands could write, a host that is no host.
    base.network = true;
    let e = hookd::adapter::confine::policy(
        claude,
        &base,
        &host(&h.join("ev.jsonl")),
        project.path(),
        &[],
    );
    assert!(e
        .unwrap_err()
        .starts_with("`sandbox.network: true` in your ~/.infer/config.yaml would give the agent"));
    base.network = false;
    let inside = project.path().join("events.jsonl");
    let e = hookd::adapter::confine::policy(claude, &base, &host(&inside), project.path(), &[])
        .unwrap_err();
    assert!(
        e.starts_with("HOOKD_EVENTS ") && e.contains("lies in the project"),
        "{e}"
    );
    // An events file that is a link (to a start-up file, say) is not made, nor written through.
    let target = h.join(".bashrc-target");
    std::os::unix::fs::symlink(&target, h.join("ev-link.jsonl")).unwrap();
    let e = hookd::adapter::confine::policy(
        claude,
        &base,
        &host(&h.join("ev-link.jsonl")),
        project.path(),
        &[],
    )
    .unwrap_err();
    assert!(e.starts_with("HOOKD_EVENTS ") && e.contains("link"), "{e}");
    assert!(!target.exists(), "the link's target was made");
    let bad = ["https://x.example".to_string()];
    let e = hookd::adapter::confine::policy(
        claude,
        &base,
        &host(&h.join("ev.jsonl")),
        project.path(),
        &bad,
    );
    assert_eq!(
        e.unwrap_err(),
        "--allow-host: `https://x.example` is not a host name, a `*.` wildcard or an IP address"
    );
}

/// Inside the confined agent (a start-up file its shell reads, say), Gemini CLI's settings,
/// extensions, commands and policies were made where they did not exist yet, and the user's
/// next, unconfined Gemini session would have read them (attack round of 2026-11-27). They are
/// made (empty) before the agent starts, and held like the existing ones.
#[test]
fn the_agents_absent_settings_cannot_be_made_from_inside() {
    if !crate::sandbox::confinable() {
        return;
    }
    let (p, tmp) = crate::sandbox::project();
    let home = p.home.path();
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::write(
        home.join(".gemini/trustedFolders.json"),
        serde_json::json!({ p.path().to_str().unwrap(): "TRUST_FOLDER" }).to_string(),
    )
    .unwrap();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let sys = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let system = sys.path().join("settings.json");
    // By hookd's copy outside /tmp where the build is below it (`hookd run` refuses a
    // program that is not root's alone).
    let install = crate::launcher::hookd(&p, &system, &["install", "gemini", "--scope", "managed"])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    assert!(install.status.success(), "{}", stderr(&install));
    let attack = "echo '{\"mcpServers\":{\"evil\":{\"command\":\"touch\"}}}' > \"$HOME/.gemini/settings.json\"; \
                  mkdir -p \"$HOME/.gemini/extensions/evil\" \"$HOME/.gemini/policies\"; \
                  echo '{}' > \"$HOME/.gemini/extensions/evil/gemini-extension.json\"; \
                  echo x > \"$HOME/.gemini/policies/p.toml\"; true";
    let o = crate::launcher::hookd(
        &p,
        &system,
        &[
            "run",
            "gemini",
            "--confine",
            "--",
            "/bin/bash",
            "-c",
            attack,
        ],
    )
    .env("TMPDIR", &tmp)
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let settings = std::fs::read_to_string(home.join(".gemini/settings.json")).unwrap();
    assert_eq!(settings, "{}\n", "{}", stderr(&o));
    assert!(!home.join(".gemini/extensions/evil").exists());
    assert!(!home.join(".gemini/policies/p.toml").exists());
}

/// `hookd exec` starts the command without probing the namespaces first; where they cannot be
/// made (here: inside another sandbox, no confined agent said to be around), the start fails,
/// the probe then runs, and the kernel's lack is named as before: exit 126, nothing run, for
/// a plain command and for the model's rewritten shell call alike.
#[test]
fn where_the_namespaces_cannot_be_made_the_start_names_the_lack() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox: {enabled: true}\n");
    let lacks =
        "hookd exec: not run: this kernel cannot confine it: it lacks unprivileged user namespaces";
    for inner in [
        vec!["--", "sh", "-c", "touch ran"],
        vec!["--shell", "touch ran"],
    ] {
        let o = hookd(&p, &tmp, &["exec", "--", &inner_hookd(), "exec"])
            .args(&inner)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(126), "{inner:?}: {}", stderr(&o));
        assert!(stderr(&o).starts_with(lacks), "{inner:?}: {}", stderr(&o));
        assert!(!p.path().join("ran").exists(), "{inner:?}");
    }
}

/// Attack round 15's F7: a command nested in a confined agent has no PID namespace of its own
/// to end with it, and a `kill -9` (or a SIGTERM) of its `hookd exec` left it running until the
/// agent ended. Its waiter now ends it, and what it started, when that `hookd exec` dies.
#[test]
fn a_nested_command_ends_when_its_hookd_exec_is_killed() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox:\n  network:\n    allow: [localhost, 127.0.0.1]\n",
    );
    let script = r#"
left() { for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < "$f" 2>/dev/null; echo; done | grep -c "^sleep $1 " ; }
for sig in KILL TERM; do
  n=27.$(printf %d "'$sig")
  "$INNER" exec -- sh -c "sleep $n & sleep $n" &
  pid=$!
  sleep 1.5
  before=$(left $n)
  kill -$sig $pid
  wait $pid 2>/dev/null
  sleep 1
  echo "$sig: $before running before, $(left $n) after"
done
"#;
    let inner = inner_hookd();
    let o = as_a_confined_agent(&p, &tmp, &["bash", "-c", script], &[("INNER", &inner)]);
    assert_eq!(
        stdout(&o),
        "KILL: 2 running before, 0 after\nTERM: 2 running before, 0 after\n",
        "{}",
        stderr(&o)
    );
}
