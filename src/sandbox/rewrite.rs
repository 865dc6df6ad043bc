//! The model's shell call rewritten so that the agent runs it confined, in its own shell, and
//! how `hookd exec --shell` carries the directory the command ends in back to that shell.
//!
//! The rewrite uses no command substitution, backticks or process substitution (Gemini CLI
//! refuses any shell call that holds one outside single quotes), and only shell builtins around
//! the command (no program a repository's `PATH` could replace runs unconfined). The directory
//! comes back through a file in hookd's state directory, which confined commands cannot see:
//! `hookd exec` writes it after the command has ended, and only with a directory inside the
//! project; the agent's shell reads it with the `read` builtin.

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use nix::libc;

use super::{RunError, SandboxPolicy};

/// The descriptor on which the confined shell reports the directory it ends in to `hookd exec`.
const REPORT_FD: i32 = 3;

/// The directory of hookd's state directory that holds the channel files.
const CHANNEL_DIR: &str = "cwd";

/// Channel files older than this are removed by the next `hookd exec` that carries one.
const STALE: Duration = Duration::from_secs(600);

/// How much of the report is read: its end, where the last line is.
const REPORT_TAIL: u64 = 8192;

/// Gemini CLI's shell tool. Gemini CLI runs each call in a new shell, in the directory the call
/// names (`dir_path`): there is no directory to carry back, so its rewrite is the bare
/// `hookd exec` call (its policy engine also asks the user about any redirection in a call it
/// would otherwise allow). It refuses a call that holds command substitution; the rewrite
/// quotes the model's command, so hookd refuses such a call itself ([`gemini_refuses`]).
pub const GEMINI_SHELL_TOOL: &str = "run_shell_command";

/// Crush's shell tool. Crush keeps its shell's directory from one call to the next, and its
/// hook payload's `cwd` is the session's directory, fixed when its hook runner is built
/// (charmbracelet/crush `internal/hooks/runner.go`), not its shell's: its rewrite names no
/// start directory, and `hookd exec` starts in the shell's own when that is inside the project.
pub const CRUSH_SHELL_TOOL: &str = "bash";

/// The rewrite of a model's call of the shell tool `tool` with `command` (see
/// [`shell_rewrite`]), or why it cannot run confined: the kernel cannot confine, there is no
/// hookd `program` to run it with, or Gemini CLI would have refused it. A shell that keeps its
/// directory gets it back through a channel file in hookd's state directory (`policy.state`)
/// when that directory is one confined commands cannot write (see [`channel_dir`]); else the
/// directory is not carried.
pub fn confined_call(
    program: Option<&Path>,
    policy: &SandboxPolicy,
    decided: &Decided,
    tool: &str,
    command: &str,
) -> Result<String, String> {
    let missing = super::missing_for(policy);
    if !missing.is_empty() {
        return Err(format!(
            "the sandbox is on and this machine's kernel cannot confine it (it lacks {})",
            missing.join(" and ")
        ));
    }
    let Some(program) = program else {
        return Err(
            "the sandbox is on and this hookd has no program to run it confined with".into(),
        );
    };
    if tool == GEMINI_SHELL_TOOL && gemini_refuses(command) {
        return Err(
            "it holds command substitution ($(), backticks, <() or >()), which Gemini CLI does \
             not run"
                .into(),
        );
    }
    let channel = match tool {
        GEMINI_SHELL_TOOL => None,
        _ => channel_dir(policy, &decided.project)
            .ok()
            .map(|d| channel_file(&d)),
    };
    Ok(shell_rewrite(program, command, decided, channel.as_deref()))
}

/// What the adapter decided for a confined shell call, carried in its rewrite so that
/// `hookd exec` takes it from there and never from the agent's shell (whose environment a
/// repository may set, and whose directory a confined command may have steered into a
/// directory with a `.git` of its own).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Decided {
    /// The project (`--project`): where confined commands write, and the only place the
    /// directory channel may name.
    pub project: PathBuf,
    /// Where the command starts (`--start-dir`): the agent's directory for the call, when the
    /// agent says it (Claude Code's payload `cwd`, Gemini CLI's `dir_path`). `None`: the
    /// shell's own directory, accepted only inside the project (Crush's payload names the
    /// session's directory, not its shell's).
    pub start: Option<PathBuf>,
    /// The user's configuration directory when the adapter was started with `--config-dir`.
    pub config_dir: Option<PathBuf>,
    /// The home whose `.infer/` is the user's layer (`--user-home`), as the adapter decided it.
    pub user_home: Option<PathBuf>,
    /// Nothing but hookd's temporary directory writable (`--read-only`: the call's mode asks
    /// for it, `sandbox.read_only_modes`).
    pub read_only: bool,
    /// The agent's session the call belongs to (`--session`), as hookd's events name it: the
    /// call's connections through hookd's proxy are that session's `network_request` events.
    /// Carried only when it is made of letters, digits and `._:-` (agents' ids are), so the
    /// rewrite stays one plain word an agent's own checks accept.
    pub session: Option<String>,
}

impl Decided {
    /// A call in `project`, started in the shell's directory (inside the project), read-write,
    /// with no other decision carried.
    pub fn in_project(project: impl Into<PathBuf>) -> Decided {
        Decided {
            project: project.into(),
            ..Decided::default()
        }
    }

    /// Started in `start`.
    pub fn starting_in(mut self, start: impl Into<PathBuf>) -> Decided {
        self.start = Some(start.into());
        self
    }

    /// With the user's layer from `--config-dir` `dir`.
    pub fn config_dir(mut self, dir: Option<PathBuf>) -> Decided {
        self.config_dir = dir;
        self
    }

    /// With the user's layer in `home`'s `.infer/`.
    pub fn user_home(mut self, home: Option<PathBuf>) -> Decided {
        self.user_home = home;
        self
    }

    /// Read-only or not.
    pub fn read_only(mut self, read_only: bool) -> Decided {
        self.read_only = read_only;
        self
    }

    /// In the agent's session `session` (as [`crate::state::session_key`] names it); not
    /// carried when empty or made of other characters than letters, digits and `._:-`.
    pub fn session(mut self, session: &str) -> Decided {
        self.session = session_word(session).map(str::to_string);
        self
    }

    /// The `hookd exec` flags that carry this decision, each one shell word.
    fn flags(&self) -> String {
        let path = |p: &Path| shell_quote(&p.display().to_string());
        let mut out = format!("--project={}", path(&self.project));
        if let Some(s) = &self.start {
            out.push_str(&format!(" --start-dir={}", path(s)));
        }
        if let Some(h) = &self.user_home {
            out.push_str(&format!(" --user-home={}", path(h)));
        }
        if let Some(d) = &self.config_dir {
            out.push_str(&format!(" --config-dir={}", path(d)));
        }
        if let Some(s) = &self.session {
            out.push_str(&format!(" --session={}", shell_quote(s)));
        }
        if self.read_only {
            out.push_str(" --read-only");
        }
        out
    }
}

/// `session` as the rewrite carries it: its key, when that is made of letters, digits and
/// `._:-` alone (at most [`crate::state::MAX_SESSION_KEY_BYTES`] of them).
fn session_word(session: &str) -> Option<&str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-');
    (!session.is_empty()
        && session.len() <= crate::state::MAX_SESSION_KEY_BYTES
        && session.chars().all(plain))
    .then_some(session)
}

/// Whether Gemini CLI refuses `command` as "Command injection detected": its
/// `stripShellWrapper` then `detectBashSubstitution` (`packages/core/src/utils/shell-utils.ts`,
/// applied by `packages/core/src/tools/shell.ts`; the same in the 0.61.0 release). A
/// double-quoted `bash -c "…"` is judged with its backslashes removed (Gemini CLI unescapes it
/// with shell-quote's parser), which refuses at least what it refuses.
pub fn gemini_refuses(command: &str) -> bool {
    static WRAPPER: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let wrapper = WRAPPER.get_or_init(|| {
        regex::Regex::new(
            r"(?i)^\s*(?:(?:(?:\S+/)?(?:sh|bash|zsh))\s+-c|cmd\.exe\s+/c|powershell(?:\.exe)?\s+(?:-NoProfile\s+)?-Command|pwsh(?:\.exe)?\s+(?:-NoProfile\s+)?-Command)\s+",
        )
        .ok()
    });
    let Some(m) = wrapper.as_ref().and_then(|w| w.find(command)) else {
        return bash_substitution(command.trim());
    };
    let rest = command[m.end()..].trim();
    let quoted = |q: char| rest.len() >= 2 && rest.starts_with(q) && rest.ends_with(q);
    if quoted('"') {
        let inner = &rest[1..rest.len() - 1];
        bash_substitution(inner) || bash_substitution(&inner.replace('\\', ""))
    } else if quoted('\'') {
        bash_substitution(&rest[1..rest.len() - 1])
    } else {
        bash_substitution(rest)
    }
}

/// Gemini CLI's `detectBashSubstitution`, line for line: `$(`, or `<(`/`>(` outside double
/// quotes, or a backtick, outside single quotes and not escaped. JavaScript walks UTF-16 code
/// units; every character it looks at is ASCII, so walking chars is the same.
fn bash_substitution(command: &str) -> bool {
    let c: Vec<char> = command.chars().collect();
    let (mut single, mut double) = (false, false);
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '\'' && !double {
            single = !single;
            i += 1;
            continue;
        }
        if ch == '"' && !single {
            double = !double;
            i += 1;
            continue;
        }
        if single {
            i += 1;
            continue;
        }
        if ch == '\\'
            && i + 1 < c.len()
            && (!double || ['$', '`', '"', '\\', '\n'].contains(&c[i + 1]))
        {
            i += 2;
            continue;
        }
        let next = c.get(i + 1) == Some(&'(');
        if (ch == '$' && next) || (!double && (ch == '<' || ch == '>') && next) || ch == '`' {
            return true;
        }
        i += 1;
    }
    false
}

/// `text` as one single-quoted shell word: every byte as it is, `'` written `'\''`.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A model's shell call rewritten so that the agent runs it confined, in the agent's own shell:
/// `PROGRAM exec DECIDED --shell='COMMAND'`, where `COMMAND` is, byte for byte, the one that
/// was checked, and `DECIDED` the adapter's decision ([`Decided`]: `--project='P'
/// --start-dir='S'` (where the agent names it), then `--user-home='H'`, `--config-dir='D'`,
/// `--session='ID'`, `--read-only` where it has them), every value one single-quoted word.
///
/// With a `channel` (a file [`channel_file`] named), the words after it carry back the
/// directory the command ends in (agents such as Claude Code and Crush keep their shell's
/// directory from one call to the next) and its exit status:
/// `PROGRAM exec DECIDED --cwd-file='CHANNEL' --shell='COMMAND'; __hookd_status=$?; REPLY=;
/// read -r 2>/dev/null <'CHANNEL'; [ -n "$REPLY" ] && cd "$REPLY" 2>/dev/null;
/// (exit $__hookd_status)`. Builtins only, no substitution of any kind; the command's stdout
/// and stderr stay where they were.
pub fn shell_rewrite(
    program: &Path,
    command: &str,
    decided: &Decided,
    channel: Option<&Path>,
) -> String {
    let program = shell_quote(&program.display().to_string());
    let command = shell_quote(command);
    let decided = decided.flags();
    match channel {
        None => format!("{program} exec {decided} --shell={command}"),
        Some(file) => {
            let file = shell_quote(&file.display().to_string());
            format!(
                "{program} exec {decided} --cwd-file={file} --shell={command}; \
                 __hookd_status=$?; REPLY=; read -r 2>/dev/null <{file}; \
                 [ -n \"$REPLY\" ] && cd \"$REPLY\" 2>/dev/null; (exit $__hookd_status)"
            )
        }
    }
}

/// A new channel file's name in the channel directory `dir` ([`channel_dir`]), unique to this
/// call.
pub fn channel_file(dir: &Path) -> PathBuf {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    dir.join(format!("{nanos:x}-{:x}-{n:x}", std::process::id()))
}

/// The argv `hookd exec --shell COMMAND` runs: bash with `COMMAND` as its script, preceded,
/// with `report`, by a trap that writes the directory it ends in to descriptor 3.
pub fn shell_argv(command: &str, report: bool) -> Vec<String> {
    let script = if report {
        format!("trap 'pwd -P >&{REPORT_FD} 2>/dev/null' EXIT\n{command}")
    } else {
        command.to_string()
    };
    vec!["bash".into(), "-c".into(), script]
}

/// What [`run_shell`] did.
#[derive(Debug)]
#[non_exhaustive]
pub struct ShellRun {
    /// The command's exit status as a shell reports it (128 + N when signal N ended it).
    pub status: i32,
    /// Why the directory was not carried back, for the agent's shell's stderr.
    pub note: Option<String>,
    /// The connections it made through hookd's proxy (under a host list).
    pub network: Vec<super::NetworkRequest>,
    /// What it left that git would have run later, moved aside (see [`super::Ran::moved`]).
    pub moved: Vec<String>,
}

/// Run the shell `command` confined by `policy` in `cwd` (see [`super::run`]); with a
/// `channel`, write there, once it has ended, the directory it ended in, if that is a directory
/// inside `project`. The channel must be in hookd's state directory (`policy.state`), which
/// confined commands cannot see, and that directory must lie outside every place they may write.
pub fn run_shell(
    policy: &SandboxPolicy,
    project: &Path,
    command: &str,
    cwd: &Path,
    channel: Option<&Path>,
    host: &crate::host::Host,
) -> Result<ShellRun, RunError> {
    let mut note = None;
    let channel = match channel.map(|c| open_channel(policy, project, c)) {
        Some(Ok(c)) => Some(c),
        Some(Err(why)) => {
            note = Some(format!(
                "hookd: {why}; the shell stays where the call started"
            ));
            None
        }
        None => None,
    };
    let report = match channel {
        Some(_) => Some(report_file().map_err(|source| RunError::Start {
            program: "bash".into(),
            source,
        })?),
        None => None,
    };
    let argv = shell_argv(command, report.is_some());
    let confinement = std::sync::Arc::new(super::prepare_to_start(policy, project, cwd)?);
    // The report channel is the command's descriptor REPORT_FD, its only one but stdio.
    let keep = report.as_ref().map(|fd| (fd.as_raw_fd(), REPORT_FD));
    let status = super::started(
        policy,
        "bash",
        hookd_sandbox::run_command_keeping(confinement.clone(), &argv, cwd, keep, host.vars()),
    )?;
    use std::os::unix::process::ExitStatusExt;
    let status = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    if let (Some(file), Some(report)) = (channel, report) {
        if let Err(why) = carry_back(project, report, &file) {
            note = Some(format!(
                "hookd: {why}; the shell stays where the call started"
            ));
        }
    }
    let network = confinement.network_requests_settled();
    Ok(ShellRun {
        status,
        note,
        network,
        moved: confinement.settle(),
    })
}

/// An anonymous file the confined shell reports its directory to: whatever the command writes
/// there is only read as a directory to check, never run.
fn report_file() -> std::io::Result<OwnedFd> {
    use nix::sys::memfd::{memfd_create, MFdFlags};
    memfd_create(c"hookd-cwd", MFdFlags::MFD_CLOEXEC).map_err(std::io::Error::from)
}

/// The channel directory of `policy`'s hookd state directory, created (0700) when absent, or
/// why it cannot be a channel no confined command writes: there is no state directory, it is
/// reached through a symlink or `..`, or it lies inside a place confined commands may write
/// (they could write the channel file the agent's shell reads).
pub fn channel_dir(policy: &SandboxPolicy, project: &Path) -> Result<PathBuf, String> {
    let Some(state) = &policy.state else {
        return Err("hookd has no state directory for the directory channel".into());
    };
    let dir = state.join(CHANNEL_DIR);
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| format!("the directory channel's directory {}: {e}", dir.display()))?;
    if dir.canonicalize().ok().as_deref() != Some(&dir) {
        return Err(format!(
            "the directory channel's directory {} is reached through a symlink or `..`",
            dir.display()
        ));
    }
    owned_and_private(&dir)?;
    let writable = super::writable_places(policy, project);
    if let Some(w) = writable
        .iter()
        .map(|w| w.canonicalize().unwrap_or_else(|_| w.clone()))
        .find(|w| dir.starts_with(w))
    {
        return Err(format!(
            "the directory channel's directory {} is inside {}, where confined commands write",
            dir.display(),
            w.display()
        ));
    }
    Ok(dir)
}

/// Whether the channel directory `dir` is this user's alone: a directory (not a link) owned by
/// this user with no rights for group or others, in a directory (the state directory) that no
/// other user may write (owned by this user or root, not group- or other-writable). Another
/// user who could write either could put a channel file there for the agent's shell to read.
fn owned_and_private(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let me = nix::unistd::geteuid().as_raw();
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("the directory channel's directory {}: {e}", dir.display()))?;
    if !meta.is_dir() || meta.uid() != me || meta.mode() & 0o077 != 0 {
        return Err(format!(
            "the directory channel's directory {} is not a directory of this user's alone (owner {}, mode {:o}; it must be owned by user {me} with mode 700)",
            dir.display(),
            meta.uid(),
            meta.mode() & 0o7777
        ));
    }
    let parent = dir.parent().unwrap_or(Path::new("/"));
    let up = std::fs::metadata(parent)
        .map_err(|e| format!("the state directory {}: {e}", parent.display()))?;
    if (up.uid() != me && up.uid() != 0) || up.mode() & 0o022 != 0 {
        return Err(format!(
            "the state directory {} may be written by another user (owner {}, mode {:o}; it must be owned by user {me} and not group- or other-writable)",
            parent.display(),
            up.uid(),
            up.mode() & 0o7777
        ));
    }
    Ok(())
}

/// Check that `file` is a channel no confined command writes (in [`channel_dir`]), and make it
/// ready: no file of that name is left, and stale ones are swept.
fn open_channel(policy: &SandboxPolicy, project: &Path, file: &Path) -> Result<PathBuf, String> {
    let dir = channel_dir(policy, project)?;
    if file.parent() != Some(dir.as_path()) {
        return Err(format!(
            "the directory channel {} is not in {}",
            file.display(),
            dir.display()
        ));
    }
    match std::fs::remove_file(file) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("the directory channel {}: {e}", file.display())),
    }
    sweep(&dir);
    Ok(file.to_path_buf())
}

/// Remove channel files older than [`STALE`] (the agent's shell reads them and leaves them).
fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > STALE);
        if old {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Read the directory the confined shell reported last and, when it is a directory inside
/// `project`, write it (resolved) to the channel `file`, which must not exist yet.
fn carry_back(project: &Path, report: OwnedFd, file: &Path) -> Result<(), String> {
    let mut report = std::fs::File::from(report);
    let len = report.seek(SeekFrom::End(0)).unwrap_or(0);
    let mut text = Vec::new();
    let _ = report.seek(SeekFrom::Start(len.saturating_sub(REPORT_TAIL)));
    let _ = report.read_to_end(&mut text);
    let text = String::from_utf8_lossy(&text);
    let Some(last) = text.lines().rev().find(|l| !l.is_empty()) else {
        // No report: the command replaced the trap, or its shell did not start.
        return Ok(());
    };
    let project = project
        .canonicalize()
        .map_err(|e| format!("the project {}: {e}", project.display()))?;
    let dir = Path::new(last)
        .canonicalize()
        .ok()
        .filter(|d| Path::new(last).is_absolute() && d.is_dir() && d.starts_with(&project))
        .ok_or_else(|| {
            format!(
                "the command ended in {last}, which is not a directory inside the project {}",
                project.display()
            )
        })?;
    let line = format!("{}\n", dir.display());
    if line.matches('\n').count() != 1 {
        return Err(format!(
            "the command ended in {last:?}, a name with a newline"
        ));
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(file)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| format!("the directory channel {}: {e}", file.display()))
}
