//! Issue 41 item 4: `hookd install --scope managed` writes the agents' managed settings (the
//! ones a project cannot switch off), and `hookd run AGENT -- PROGRAM ARGS` starts an unattended
//! agent only where hookd holds, refusing with the reasons otherwise. Gemini CLI's system
//! settings are moved by its own GEMINI_CLI_SYSTEM_SETTINGS_PATH, so these tests never touch /etc
//! (they go below Cargo's target directory: Gemini CLI, and `hookd run`, take system settings
//! only from directories that root alone can write, which /tmp is not).

use std::path::PathBuf;
use std::process::Command;

use crate::support::{stderr, stdout, Project};

/// Whether Cargo's target directory belongs to root (the tests run as root), as system
/// settings must.
fn root_owned_target() -> bool {
    use std::os::unix::fs::MetadataExt;
    let owned = std::fs::metadata(crate::support::outside_tmp()).is_ok_and(|m| m.uid() == 0);
    if !owned {
        crate::support::unavailable("root", "system settings must belong to root");
    }
    owned
}

/// A project (a git repository) with Gemini CLI's system settings below Cargo's target directory.
fn gemini_project() -> (Project, PathBuf) {
    let p = Project::new();
    std::fs::create_dir_all(p.path().join(".git")).unwrap();
    let etc = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let system = etc.path().join("gemini-cli/settings.json");
    std::mem::forget(etc); // below target/tmp: removed with the target directory
    (p, system)
}

/// `hookd ARGS` in `p` as `p.cmd` runs it, by a copy of hookd outside /tmp when the checkout
/// is below it: the managed install names the program that wrote it, and `hookd run` refuses
/// a program that is not root's alone (/tmp is anyone's).
pub(crate) fn hookd(p: &Project, system: &PathBuf, args: &[&str]) -> Command {
    let mut c = Command::new(program());
    c.args(args)
        .current_dir(p.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", p.home.path())
        .env("HOOKD_STATE_DIR", p.state.path())
        .env("HOOKD_TRUST_PROJECT", "1")
        .env("GEMINI_CLI_SYSTEM_SETTINGS_PATH", system)
        .stdin(std::process::Stdio::null());
    c
}

/// This hookd, or its copy outside /tmp when the build is below it.
fn program() -> PathBuf {
    crate::support::hookd_outside_tmp()
}

/// `hookd run gemini -- sh -c 'touch started'`: whether the agent (here: sh) started.
fn launch(p: &Project, system: &PathBuf) -> (bool, String) {
    let _ = std::fs::remove_file(p.path().join("started"));
    let o = hookd(
        p,
        system,
        &["run", "gemini", "--", "sh", "-c", "touch started"],
    )
    .output()
    .unwrap();
    let started = p.path().join("started").exists();
    assert_eq!(
        o.status.code(),
        Some(if started { 0 } else { 1 }),
        "{}",
        stderr(&o)
    );
    (started, stderr(&o))
}

fn trust_folder(p: &Project) {
    std::fs::create_dir_all(p.home.path().join(".gemini")).unwrap();
    let rules = serde_json::json!({ p.path().to_str().unwrap(): "TRUST_FOLDER" });
    std::fs::write(
        p.home.path().join(".gemini/trustedFolders.json"),
        rules.to_string(),
    )
    .unwrap();
}

#[test]
fn the_managed_install_writes_the_system_settings_with_hooks_switched_on() {
    if !root_owned_target() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let (p, system) = gemini_project();
    let o = hookd(
        &p,
        &system,
        &["install", "gemini", "--scope", "managed", "--fail-closed"],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!("hookd: added hookd's adapter to {}\n", system.display())
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&system).unwrap()).unwrap();
    assert_eq!(v["hooksConfig"]["enabled"], true, "{v}");
    let command = v["hooks"]["BeforeTool"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        command.ends_with(" adapter gemini --fail-closed"),
        "{command}"
    );
    // Read by the agent as any user.
    let mode = std::fs::metadata(&system).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644);
    // Again: nothing to do; an operator's `false` is turned back on.
    let o = hookd(
        &p,
        &system,
        &["install", "gemini", "--scope", "managed", "--fail-closed"],
    )
    .output()
    .unwrap();
    assert!(
        stdout(&o).contains("already runs hookd; nothing changed"),
        "{}",
        stdout(&o)
    );
    let text = std::fs::read_to_string(&system)
        .unwrap()
        .replace("\"enabled\": true", "\"enabled\": false");
    std::fs::write(&system, text).unwrap();
    let o = hookd(
        &p,
        &system,
        &["install", "gemini", "--scope", "managed", "--fail-closed"],
    )
    .output()
    .unwrap();
    assert!(
        stdout(&o).contains("added hookd's adapter"),
        "{}",
        stdout(&o)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&system).unwrap()).unwrap();
    assert_eq!(v["hooksConfig"]["enabled"], true, "{v}");
}

#[test]
fn crush_has_no_managed_scope() {
    let p = Project::new();
    let o = p.run(&["install", "crush", "--scope", "managed"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o).trim_end(),
        "error: Crush has no managed settings that a project cannot override; use Claude Code or Gemini CLI for `--scope managed` and `hookd run`"
    );
}

/// The launcher refuses until hookd holds, says each reason, and then starts the agent; a
/// repository that switches hooks off or brings its own is refused again.
#[test]
fn run_starts_the_agent_only_where_hookd_holds() {
    if !root_owned_target() {
        return;
    }
    let (p, system) = gemini_project();
    let dir = p.path().display().to_string();
    let (started, said) = launch(&p, &system);
    assert!(!started);
    assert_eq!(
        said.trim_end(),
        format!(
            "hookd run: sh not started: hookd would not hold in this run:\n  - {} does not run hookd's adapter: a project can switch off, or add hooks beside, every other settings file; run `hookd install gemini --scope managed` (as root)\n  - Gemini CLI runs no hooks, hookd's included, in a folder it does not trust, and {dir} is not trusted: add it to {} (\"{dir}\": \"TRUST_FOLDER\"), or pass --skip-trust",
            system.display(),
            p.home.path().join(".gemini/trustedFolders.json").display()
        )
    );
    let o = hookd(&p, &system, &["install", "gemini", "--scope", "managed"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    trust_folder(&p);
    let (started, said) = launch(&p, &system);
    assert!(started, "{said}");

    // The repository switches the hooks off and brings one of its own.
    std::fs::create_dir_all(p.path().join(".gemini")).unwrap();
    std::fs::write(
        p.path().join(".gemini/settings.json"),
        r#"{"hooksConfig": {"enabled": false, "disabled": ["hookd"]},
            "hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "./own-hook"}]}]}}"#,
    )
    .unwrap();
    let (started, said) = launch(&p, &system);
    assert!(!started);
    let file = p.path().join(".gemini/settings.json").display().to_string();
    assert_eq!(
        said.trim_end(),
        format!(
            "hookd run: sh not started: hookd would not hold in this run:\n  - {file} switches the agent's hooks off (\"hooksConfig.enabled\": false): hookd would not run\n  - {file} switches the agent's hooks off (\"hooksConfig.disabled\" lists hooks): hookd would not run\n  - {file} declares a hook of its own at BeforeTool: `./own-hook` runs beside hookd's, on no allow-list"
        )
    );
    // A folder Gemini CLI is told not to trust runs no hooks at all.
    std::fs::remove_file(p.path().join(".gemini/settings.json")).unwrap();
    let mut c = hookd(
        &p,
        &system,
        &["run", "gemini", "--", "sh", "-c", "touch started"],
    );
    let o = c
        .env("GEMINI_CLI_TRUST_WORKSPACE", "false")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(!p.path().join("started").exists());
    assert!(
        stderr(&o).contains("Gemini CLI runs no hooks, hookd's included, in a folder it does not trust, and GEMINI_RESTRICTED_MODE or GEMINI_CLI_TRUST_WORKSPACE tells it not to trust this one"),
        "{}",
        stderr(&o)
    );
}

/// The managed install's switch is what the launcher checks: with it turned off by hand (the
/// project's `false` would then win), the run is refused.
#[test]
fn run_refuses_a_managed_install_whose_switch_is_off() {
    if !root_owned_target() {
        return;
    }
    let (p, system) = gemini_project();
    hookd(&p, &system, &["install", "gemini", "--scope", "managed"])
        .output()
        .unwrap();
    trust_folder(&p);
    let text = std::fs::read_to_string(&system)
        .unwrap()
        .replace("\"enabled\": true", "\"enabled\": false");
    std::fs::write(&system, text).unwrap();
    let (started, said) = launch(&p, &system);
    assert!(!started);
    assert_eq!(
        said.trim_end(),
        format!(
            "hookd run: sh not started: hookd would not hold in this run:\n  - {} does not set \"hooksConfig.enabled\": true, so a project's `hooksConfig.enabled: false` would switch hookd off; run `hookd install gemini --scope managed` (as root)",
            system.display()
        )
    );
}

/// System settings in a directory others can write are refused (Gemini CLI would skip them).
#[test]
fn run_refuses_system_settings_others_can_write() {
    if !root_owned_target() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let (p, system) = gemini_project();
    hookd(&p, &system, &["install", "gemini", "--scope", "managed"])
        .output()
        .unwrap();
    trust_folder(&p);
    let dir = system.parent().unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let (started, said) = launch(&p, &system);
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(!started);
    assert_eq!(
        said.trim_end(),
        format!(
            "hookd run: sh not started: hookd would not hold in this run:\n  - {} is not the machine's to decide ({} is writable by its group or others (mode 777)): Gemini CLI skips such settings, and whoever can write them can take hookd out; make it and its directories root's, writable by root only",
            system.display(),
            dir.display()
        )
    );
    let (started, said) = launch(&p, &system);
    assert!(started, "{said}");
}

/// Claude Code's managed settings cannot be moved: without them the launcher names the file.
#[test]
fn run_claude_code_names_its_managed_settings() {
    let managed = std::path::Path::new("/etc/claude-code/managed-settings.json");
    if managed.exists() {
        return; // not ours to judge
    }
    let p = Project::new();
    let o = p
        .cmd(&["run", "claude-code", "--", "sh", "-c", "touch started"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(!p.path().join("started").exists());
    assert_eq!(
        stderr(&o).trim_end(),
        "hookd run: sh not started: hookd would not hold in this run:\n  - /etc/claude-code/managed-settings.json does not run hookd's adapter: a project can switch off, or add hooks beside, every other settings file; run `hookd install claude-code --scope managed` (as root)"
    );
}

/// The hookd the managed settings run must be root's alone: one anyone can replace decides
/// every verdict of the unattended run.
#[test]
fn run_refuses_a_hookd_program_others_can_write() {
    if !root_owned_target() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let (p, system) = gemini_project();
    let o = hookd(&p, &system, &["install", "gemini", "--scope", "managed"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    trust_folder(&p);
    assert!(
        launch(&p, &system).0,
        "the launcher refused a sound install"
    );
    // The same settings naming a hookd in a directory everyone may write.
    let open = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let planted = open.path().join("hookd");
    crate::support::copy_hookd(&planted);
    let text = std::fs::read_to_string(&system).unwrap();
    let named = serde_json::to_string(&program().display().to_string()).unwrap();
    let planted_json = serde_json::to_string(&planted.display().to_string()).unwrap();
    let named = &named[1..named.len() - 1];
    std::fs::write(
        &system,
        text.replace(named, &planted_json[1..planted_json.len() - 1]),
    )
    .unwrap();
    let (started, said) = launch(&p, &system);
    assert!(!started, "{said}");
    assert!(
        said.contains(&format!(
            "{} runs hookd at {}, which is not root's alone ({} is writable by its group or others (mode 777)): whoever can write it decides every verdict; install hookd where only root can write (e.g. /usr/local/bin), then run `hookd install gemini --scope managed` (as root)",
            system.display(),
            planted.display(),
            open.path().display()
        )),
        "{said}"
    );
}

/// What the agent's own command line hands it is checked as the project's files are: Claude
/// Code's `--settings` (text or file, its `env` included) and the directories `--add-dir` or
/// Gemini CLI's `--include-directories` add.
#[test]
fn run_refuses_agent_arguments_that_reopen_a_seam() {
    let p = Project::new();
    let other = p.path().join("other");
    std::fs::create_dir_all(other.join(".claude")).unwrap();
    std::fs::create_dir_all(other.join(".gemini")).unwrap();
    std::fs::write(
        other.join(".claude/settings.json"),
        r#"{"disableAllHooks": true}"#,
    )
    .unwrap();
    std::fs::write(
        other.join(".gemini/settings.json"),
        r#"{"hooksConfig": {"enabled": false}}"#,
    )
    .unwrap();
    let said = |agent: &str, args: &[&str]| {
        let mut all = vec!["run", agent, "--", "sh", "-c", "touch started"];
        all.extend_from_slice(args);
        let o = p.cmd(&all).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(!p.path().join("started").exists());
        stderr(&o)
    };
    let err = said(
        "claude-code",
        &[
            "--settings",
            r#"{"env": {"BASH_ENV": "x.sh"}, "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "./mine"}]}]}}"#,
            "--add-dir",
            "other",
        ],
    );
    for line in [
        "the agent's --settings argument sets BASH_ENV for the agent: its shell (or the loader) runs the repository's code before hookd can confine a call".to_string(),
        "the agent's --settings argument declares a hook of its own at PreToolUse: `./mine` runs beside hookd's, on no allow-list".to_string(),
        format!("{} switches the agent's hooks off (\"disableAllHooks\": true): hookd would not run", other.join(".claude/settings.json").display()),
    ] {
        assert!(err.contains(&format!("\n  - {line}\n")) || err.trim_end().ends_with(&line), "{line}\n{err}");
    }
    std::fs::write(
        p.path().join("s.json"),
        r#"{"env": {"LD_PRELOAD": "/x.so"}}"#,
    )
    .unwrap();
    let err = said("claude-code", &["--settings=s.json"]);
    assert!(
        err.contains(&format!(
            "{} sets LD_PRELOAD for the agent",
            p.path().join("s.json").display()
        )),
        "{err}"
    );
    let err = said("gemini", &["--include-directories", "other"]);
    assert!(
        err.contains(&format!(
            "{} switches the agent's hooks off (\"hooksConfig.enabled\": false)",
            other.join(".gemini/settings.json").display()
        )),
        "{err}"
    );
}

/// `hookd uninstall --scope managed` puts the switch back as it was before hookd set it, and
/// leaves one the operator set.
#[test]
fn uninstall_puts_the_switch_back_only_where_hookd_set_it() {
    if !root_owned_target() {
        return;
    }
    let (p, system) = gemini_project();
    let record = system.with_extension("json.hookd-switch");
    let read = || -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&system).unwrap()).unwrap()
    };
    let run = |args: &[&str]| {
        let o = hookd(&p, &system, args).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    };
    let install = ["install", "gemini", "--scope", "managed"];
    let uninstall = ["uninstall", "gemini", "--scope", "managed"];
    std::fs::create_dir_all(system.parent().unwrap()).unwrap();
    for (before, after) in [
        // Nothing there: the key (and the object made for it) goes.
        (
            r#"{"general": {"vimMode": true}}"#,
            serde_json::json!({"general": {"vimMode": true}}),
        ),
        // The operator's false comes back.
        (
            r#"{"hooksConfig": {"enabled": false, "notifications": true}}"#,
            serde_json::json!({"hooksConfig": {"enabled": false, "notifications": true}}),
        ),
        // The operator's true stays: hookd did not set it.
        (
            r#"{"hooksConfig": {"enabled": true}, "x": 1}"#,
            serde_json::json!({"hooksConfig": {"enabled": true}, "x": 1}),
        ),
    ] {
        std::fs::write(&system, before).unwrap();
        run(&install);
        assert_eq!(read()["hooksConfig"]["enabled"], true);
        run(&uninstall);
        assert_eq!(read(), after, "from {before}");
        assert!(!record.exists(), "from {before}");
    }
}
