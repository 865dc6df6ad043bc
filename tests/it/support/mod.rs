//! Helpers: a project directory with `.infer/` files, and `hookd` runs isolated from the host.

pub mod daemon;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A temporary project with its own HOME and state directory.
pub struct Project {
    pub dir: tempfile::TempDir,
    pub home: tempfile::TempDir,
    pub state: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Self {
        let p = Project {
            dir: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(p.infer()).unwrap();
        p
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn infer(&self) -> PathBuf {
        self.dir.path().join(".infer")
    }

    pub fn write(&self, name: &str, text: &str) -> &Self {
        std::fs::write(self.infer().join(name), text).unwrap();
        self
    }

    pub fn write_home(&self, name: &str, text: &str) -> &Self {
        let d = self.home.path().join(".infer");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(name), text).unwrap();
        self
    }

    /// `hookd ARGS` in the project, with a clean environment. These projects are the tests'
    /// own, so they are trusted (HOOKD_TRUST_PROJECT=1); see `cmd_untrusted` for the rest.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = self.cmd_untrusted(args);
        c.env("HOOKD_TRUST_PROJECT", "1");
        c
    }

    /// `hookd ARGS` as an operator who has not trusted this project.
    pub fn cmd_untrusted(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hookd"));
        c.args(args)
            .current_dir(self.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("HOOKD_STATE_DIR", self.state.path())
            // A runtime directory of the test's own, absent: without it, a client looks for the
            // daemon in `/run/user/UID` (where the developer's own daemon may listen, and log
            // each test's refused client in its audit trail), and the sandbox hides that.
            .env("XDG_RUNTIME_DIR", self.state.path().join("run"))
            .stdin(Stdio::null());
        c
    }

    /// `command` run by bash in the project, as an agent's shell runs it: non-interactive,
    /// this project's home, no system git configuration.
    pub fn bash(&self, command: &str) -> Output {
        Command::new("bash")
            .arg("-c")
            .arg(command)
            .current_dir(self.path())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap()
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().unwrap()
    }

    /// `hookd ARGS` with `stdin` as its input.
    pub fn run_with_stdin(&self, args: &[&str], stdin: &str) -> Output {
        with_stdin(self.cmd(args), stdin)
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Parse JSON lines.
pub fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .inspect(valid_if_event)
        .collect()
}

/// An event (it has `seq` and `type`) must validate against the events schema: every event the
/// suite reads, from every real run, is checked.
pub fn valid_if_event(v: &serde_json::Value) {
    static EVENTS: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    if v.get("seq").is_none() || v.get("type").is_none() {
        return;
    }
    let schema = EVENTS.get_or_init(|| {
        jsonschema::draft202012::new(&hookd::events::schema()).expect("the events schema")
    });
    let errors: Vec<String> = schema
        .iter_errors(v)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "event does not match the events schema: {errors:?}\n{v}"
    );
}

/// Run `cmd` with `stdin` as its input and collect its output.
pub fn with_stdin(cmd: Command, stdin: &str) -> Output {
    with_bytes(cmd, stdin.as_bytes().to_vec())
}

/// Run `cmd` with raw bytes on stdin; a child that stops reading early is not an error here.
pub fn with_bytes(mut cmd: Command, input: Vec<u8>) -> Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// Wait until `fact` holds, looking every 10 ms, for at most `timeout`: whether it came to
/// hold. For waiting on a fact (a file written, a process ended, a daemon listening) instead
/// of sleeping a fixed time and hoping; a test that asserts that nothing happened still waits
/// its fixed time, after a positive witness that the thing could have happened.
pub fn eventually(timeout: std::time::Duration, mut fact: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if fact() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Wait for `child` to end, for at most `timeout`: its output, or `None` (and it is killed)
/// when it was still running.
pub fn ended_within(
    mut child: std::process::Child,
    timeout: std::time::Duration,
) -> Option<Output> {
    if eventually(timeout, || child.try_wait().unwrap().is_some()) {
        return Some(child.wait_with_output().unwrap());
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// The `NAME.marker` files in `dir` (the tests' proof that some code ran), by name, sorted.
pub fn markers(dir: &Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".marker").map(String::from)
        })
        .collect();
    found.sort();
    found
}

/// [`markers`], removing them: the next step starts with none.
pub fn take_markers(dir: &Path) -> Vec<String> {
    let found = markers(dir);
    for m in &found {
        std::fs::remove_file(dir.join(format!("{m}.marker"))).unwrap();
    }
    found
}

/// A project whose user gates the shell tools (`gate_shell_tools` in ~/.infer/hooks.yaml), with
/// these allow entries in ~/.infer/config.yaml.
pub fn gated(allow: &[&str]) -> Project {
    let p = Project::new();
    p.write_home("hooks.yaml", "enabled: true\ngate_shell_tools: true\n");
    let entries: Vec<String> = allow.iter().map(|e| format!("'{e}'")).collect();
    p.write_home(
        "config.yaml",
        &format!(
            "tools: {{bash: {{mode: {{all: {{allow: [{}]}}}}}}}}\n",
            entries.join(", ")
        ),
    );
    p
}

/// Claude Code's `PreToolUse` payload for session `s` in `cwd`: the model calls `tool` with
/// `input` (the one the tests share; a test that needs another field says so in its own).
pub fn pre_tool_payload(cwd: &Path, tool: &str, input: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse",
        "permission_mode": "default", "tool_name": tool, "tool_input": input,
    })
}

/// The first line of what `adapter` (a `hookd adapter claude-code …` command) answers to a
/// `PreToolUse` of `tool` with `input`, in `cwd`, as JSON: `{}` lets the call go.
pub fn claude_pre_tool(
    adapter: Command,
    cwd: &Path,
    tool: &str,
    input: serde_json::Value,
) -> serde_json::Value {
    let payload = pre_tool_payload(cwd, tool, input);
    let o = with_stdin(adapter, &payload.to_string());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_str(stdout(&o).lines().next().unwrap_or("null")).unwrap()
}

/// `s` with the regular expression's special characters escaped, for an allow entry naming a
/// temporary path.
pub fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if "\\.+*?()|[]{}^$".contains(c) {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect()
}

/// Whether `engine` refuses the model's Write of `path` at `pre_tool` (an embedded engine,
/// asked as an adapter would).
pub fn write_refused(engine: &hookd::Engine, path: &Path) -> bool {
    let mut ctx = hookd::Context::new();
    ctx.set("session_id", "s").set(
        "tool",
        serde_json::json!({"name": "Write", "input": {"file_path": path, "content": "{}"}}),
    );
    let outcome = engine.dispatch(hookd::HookPoint::PreTool, &ctx).unwrap();
    serde_json::to_value(&outcome).unwrap()["decision"]["deny"] == true
}

/// A test cannot run here for want of `feature` (`sandbox`, `chromium`, `promtool`,
/// `prometheus`, `root`, `curl`, `home`): it says "skipped" on stderr and the caller returns,
/// unless `HOOKD_TEST_REQUIRE` names the feature (a comma-separated list, or `all`): then the
/// test fails, so a run that must exercise it (`.ci/run` sets the variable) cannot pass
/// without it.
pub fn unavailable(feature: &str, why: &str) {
    let required = std::env::var("HOOKD_TEST_REQUIRE").unwrap_or_default();
    let required = required
        .split(',')
        .map(str::trim)
        .any(|f| f == feature || f == "all");
    assert!(
        !required,
        "HOOKD_TEST_REQUIRE names {feature}, which this machine lacks: {why}"
    );
    eprintln!("skipped: {why}");
}

/// A directory for test places that must lie outside the temporary directory (the sandbox gives
/// confined commands a /tmp of their own, and the launcher wants directories only root can
/// write): the target's temporary directory, or, when the checkout itself is below /tmp (a CI
/// clone there), `/var/lib/hookd-it` (root's; every ancestor root's and not world-writable).
pub(crate) fn outside_tmp() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let target = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        if !target.starts_with("/tmp") && !target.starts_with(std::env::temp_dir()) {
            return target;
        }
        let alt = std::path::PathBuf::from("/var/lib/hookd-it");
        match std::fs::create_dir_all(&alt) {
            Ok(()) => alt,
            Err(_) => target,
        }
    })
}

/// A copy of this hookd at `to`, made by `cp`: a file this process writes can be held open by
/// another test thread's fork (a spawn's child before its exec, a waiter, a sandbox's pid 1),
/// and exec'ing it then fails with ETXTBSY ("Text file busy"); `cp`'s descriptor is in `cp`
/// alone, closed when it exits.
pub(crate) fn copy_hookd(to: &Path) {
    let copied = Command::new("cp")
        .arg(env!("CARGO_BIN_EXE_hookd"))
        .arg(to)
        .status()
        .unwrap();
    assert!(copied.success(), "cp {} failed", to.display());
}

/// This hookd, or, when the build is below /tmp, its copy (named `hookd`) in a directory only
/// root writes outside it: a confined command has a /tmp of its own (so it cannot run a hookd
/// from the real one), and `hookd run` refuses a program that is not root's alone.
pub(crate) fn hookd_outside_tmp() -> std::path::PathBuf {
    static COPY: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    COPY.get_or_init(|| {
        let built = std::path::PathBuf::from(env!("CARGO_BIN_EXE_hookd"));
        if !built.starts_with("/tmp") && !built.starts_with(std::env::temp_dir()) {
            return built;
        }
        // Named hookd: an install's entries are hookd's by the program's name.
        let dir = outside_tmp()
            .join("hookd-bin")
            .join(std::process::id().to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let copy = dir.join("hookd");
        copy_hookd(&copy);
        copy
    })
    .clone()
}

#[cfg(test)]
mod tests {
    /// Run by `a_missing_feature_fails_the_run_that_requires_it` in a child process.
    #[test]
    #[ignore = "run as a child by the test below"]
    fn needs_a_feature_no_machine_has() {
        super::unavailable("no-machine-has-this", "a feature no machine has");
    }

    #[test]
    fn a_missing_feature_fails_the_run_that_requires_it() {
        let run = |require: Option<&str>| {
            let mut c = std::process::Command::new(std::env::current_exe().unwrap());
            c.args([
                "--exact",
                "support::tests::needs_a_feature_no_machine_has",
                "--ignored",
                "--nocapture",
            ]);
            c.env_remove("HOOKD_TEST_REQUIRE");
            if let Some(r) = require {
                c.env("HOOKD_TEST_REQUIRE", r);
            }
            c.output().unwrap()
        };
        let skipped = run(None);
        assert!(skipped.status.success(), "{}", super::stdout(&skipped));
        assert!(super::stderr(&skipped).contains("skipped: a feature no machine has"));
        for require in ["no-machine-has-this", "sandbox,no-machine-has-this", "all"] {
            let failed = run(Some(require));
            assert!(!failed.status.success(), "{require}");
            let said = format!("{}{}", super::stdout(&failed), super::stderr(&failed));
            assert!(
                said.contains(
                    "HOOKD_TEST_REQUIRE names no-machine-has-this, which this machine lacks: a feature no machine has"
                ),
                "{said}"
            );
        }
    }
}
