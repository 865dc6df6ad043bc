//! The library reads a `Host`, never the process: an embedder's engine sees the variables,
//! `PATH` and home it was given, and this test process's own are not consulted.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;

use hookd::events::Collector;
use hookd::host::Host;
use hookd::{Config, Context, Engine, HookPoint};

/// A configuration from text whose one hook, at `post_session`, runs `greet`.
fn greeting(project: &Path) -> Config {
    Config::from_yaml(
        project,
        Some((
            "config.yaml",
            "tools: {bash: {mode: {all: {allow: ['^greet$']}}}}",
        )),
        Some((
            "hooks.yaml",
            "enabled: true\nhooks: [{name: g, hook: post_session, command: greet}]",
        )),
        None,
    )
    .unwrap()
}

/// The `hook_command` event of the session's end.
fn session_end(builder: hookd::EngineBuilder) -> serde_json::Value {
    let events = Arc::new(Collector::default());
    let engine = builder.sink(events.clone()).build();
    let mut ctx = Context::new();
    ctx.set("session_id", "s");
    engine.dispatch(HookPoint::PostSession, &ctx).unwrap();
    let ran = events
        .events()
        .into_iter()
        .find(|e| e.event.kind() == "hook_command");
    serde_json::to_value(ran.expect("no hook_command event")).unwrap()
}

#[test]
fn a_hooks_environment_and_path_are_the_hosts_not_the_processs() {
    let t = tempfile::tempdir().unwrap();
    // Outside the project: a program of the project would be its code, run only if trusted.
    let bin = t.path().join("bin");
    let project = t.path().join("p");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    let greet = bin.join("greet");
    std::fs::write(&greet, "#!/bin/sh\necho \"hello from $GREETING\"\n").unwrap();
    std::fs::set_permissions(&greet, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Neither is this process's: only the host says them.
    assert!(std::env::var_os("GREETING").is_none());
    let path = std::env::var("PATH").unwrap_or_default();
    assert!(!path.contains(&*bin.to_string_lossy()));

    let host = Host::default()
        .with_var("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .with_var("GREETING", "the host")
        .with_cwd(&project);
    let ran = session_end(Engine::builder(greeting(&project)).host(host));
    assert_eq!(ran["exit_code"], 0, "{ran}");
    assert_eq!(ran["stdout"], "hello from the host\n", "{ran}");

    // Without a host, nothing of the process fills in: `greet` is on no PATH the engine knows.
    let ran = session_end(Engine::builder(greeting(&project)));
    assert_ne!(ran["exit_code"], 0, "{ran}");
    assert!(
        ran.to_string().contains("`greet` was not found on PATH"),
        "{ran}"
    );
}

/// With `gate_shell_tools`, the model's write to hookd's state in the home the host names is
/// refused; a host without a home still protects the user database's home.
#[test]
fn the_places_a_host_names_are_protected_and_a_bare_host_still_protects_the_users_home() {
    let t = tempfile::tempdir().unwrap();
    let (home, project) = (t.path().join("home"), t.path().join("p"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let gated = || {
        Config::from_yaml(
            &project,
            None,
            Some(("hooks.yaml", "gate_shell_tools: true")),
            None,
        )
        .unwrap()
    };
    let denied = crate::support::write_refused;
    // hookd's session state under the home (an agent's `.claude/settings*.json` is protected
    // wherever it is: no home needed for that one).
    let state = Path::new(".local/state/hookd/s.json");
    let settings = home.join(state);
    let named = Engine::builder(gated())
        .host(Host::default().with_var("HOME", &home).with_cwd(&project))
        .build();
    assert!(
        denied(&named, &settings),
        "the host's home was not protected"
    );
    assert!(
        !denied(&named, &home.join("notes.txt")),
        "a plain file was refused"
    );

    // No host at all: the home the user database names is protected (this process's HOME
    // is not read).
    let bare = Engine::builder(gated()).build();
    assert!(
        !denied(&bare, &settings),
        "a home nobody named was protected"
    );
    let users = nix_home().join(state);
    assert!(
        denied(&bare, &users),
        "the user's own home was not protected"
    );
}

/// The user database's home for this user.
fn nix_home() -> std::path::PathBuf {
    let out = std::process::Command::new("sh")
        .args(["-c", "getent passwd \"$(id -u)\" | cut -d: -f6"])
        .output()
        .unwrap();
    std::path::PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}
