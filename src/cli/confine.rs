//! `hookd run AGENT --confine -- PROGRAM ARGS…`: the agent started inside the sandbox
//! (`crate::adapter::confine`), hookd staying as its parent for the proxy it reaches its hosts
//! through, and exiting as the agent did.

use std::ffi::OsString;
use std::sync::Arc;

use super::error::{Done, Error};
use super::load::{load, ConfigArgs};
use crate::adapter::confine::policy;
use crate::adapter::Adapter;
use nix::sys::signal::{signal, SigHandler, Signal};

/// Start `command` (the agent's program and arguments) confined as `agent` needs, `hosts` its
/// `--allow-host` entries; its exit status (128 + N when signal N ended it).
pub(super) fn run(agent: &dyn Adapter, command: &[OsString], hosts: &[String]) -> Done {
    use std::os::unix::process::ExitStatusExt;
    let shown = |p: &OsString| crate::display::visible(&p.to_string_lossy()).into_owned();
    let program = command.first().map(shown).unwrap_or_default();
    let config = load(ConfigArgs {
        config_dir: None,
        trust_project: false,
        gate_shell_tools: false,
        fail_closed: false,
    })?;
    let host = config.host();
    let not_started =
        |why: String| Error::Cannot(format!("hookd run: {program} not started: {why}"));
    let project = &config.project_dir;
    let policy =
        policy(agent, &config.policy.sandbox, host, project, hosts).map_err(not_started)?;
    if let Some(why) = command.first().and_then(|p| in_temp(p, &policy)) {
        return Err(not_started(why));
    }
    let cwd = std::env::current_dir().map_err(Error::CurrentDir)?;
    let confinement = crate::sandbox::prepare_in(&policy, project, &cwd)
        .map_err(|e| not_started(e.to_string()))?;
    let confinement = Arc::new(confinement);
    let argv: Vec<String> = command
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let mut cmd = crate::adapter::confine::command(confinement.clone(), &policy, &argv, &cwd, host);
    // As `hookd exec`: Ctrl-C reaches the agent through its waiter; hookd waits for it.
    extern "C" fn wait_on(_: nix::libc::c_int) {}
    for sig in [Signal::SIGINT, Signal::SIGQUIT] {
        // SAFETY: the handler does nothing, so it is async-signal-safe.
        let _ = unsafe { signal(sig, SigHandler::Handler(wait_on)) };
    }
    let status = cmd
        .status()
        .map_err(|e| not_started(format!("it could not start confined: {e}")))?;
    for m in confinement.settle() {
        eprintln!("hookd run: {m}");
    }
    for r in confinement.network_requests_settled() {
        if r.verdict != "allowed" {
            eprintln!(
                "hookd run: the agent's connection to {}:{} was refused: {}",
                r.host, r.port, r.reason
            );
        }
    }
    Ok(status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1))
}

/// Why `program` cannot run confined when it lies in a temporary directory (the confined agent
/// gets its own, empty).
fn in_temp(program: &OsString, policy: &crate::sandbox::SandboxPolicy) -> Option<String> {
    let name = std::path::Path::new(program);
    let found = if name.components().count() > 1 {
        Some(name.to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
    }?;
    let real = found.canonicalize().ok()?;
    let temps = [
        std::path::PathBuf::from("/tmp"),
        crate::sandbox::temp_dir(policy),
    ];
    let temp = temps
        .iter()
        .filter_map(|t| t.canonicalize().ok())
        .find(|t| real.starts_with(t))?;
    Some(format!(
        "it is {}, in {}, which the confined agent gets as its own, empty temporary directory; install it elsewhere",
        real.display(),
        temp.display()
    ))
}
