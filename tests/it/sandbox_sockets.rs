//! Issue 40, item 1 and item 6's temporary directory: a confined command reaches no Unix socket
//! made outside (tmux's in /tmp, an agent's in `$TMPDIR`, the session bus in
//! `$XDG_RUNTIME_DIR`, gpg-agent's, git's credential cache and screen's in the home, hookd's own
//! daemon, an abstract one), opens no socket of a family off the allow-list, injects no input
//! into a terminal, gets no variable naming such a socket, and has a temporary directory of its
//! own. Each attack is performed for real: unconfined first (a listener outside records the
//! connection, a marker proves it), then through `hookd exec`, where it must fail; what a test
//! suite does with sockets of its own keeps working.
//!
//! Replayed from the peers' suites: Codex's
//! `codex-rs/linux-sandbox/tests/suite/managed_proxy_unix_sockets_tests.rs`
//! (`managed_proxy_allow_all_unix_sockets_preserves_network_isolation`: a host Unix socket is
//! refused by default and reachable once granted by path; `AF_NETLINK` and `AF_VSOCK` refused)
//! and Anthropic's sandbox-runtime `test/sandbox/unix-socket-allowlist.test.ts` ("connects to a
//! socket inside an allow-listed directory", "refuses a socket outside the allowlist",
//! "resolves a symlink before matching", "refuses the abstract namespace", "leaves TCP connect,
//! bind and listen alone") and `test/sandbox/seccomp-filter.test.ts` ("should allow TCP socket
//! creation" with the network on).

use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::sandbox::{confinable, hookd, project};
use crate::support::{stderr, stdout, Project};

/// A Python client: for each target (a path, or `@name` for an abstract socket), connect and
/// say hello; print `TARGET connected` or `TARGET ERRNO`. Reached is what `connect` says: a
/// server that closed before the hello (EPIPE on a loaded machine) was reached all the same.
pub(crate) const CONNECT: &str = r#"
import errno, socket, sys
for target in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    addr = "\0" + target[1:] if target.startswith("@") else target
    try:
        s.connect(addr)
    except OSError as e:
        print(target, errno.errorcode.get(e.errno, e.errno))
        continue
    print(target, "connected")
    try:
        s.sendall(b"hello")
    except OSError:
        pass
"#;

/// A listener outside the sandbox: each connection it accepts leaves the marker `name` in
/// `out`.
pub(crate) struct Listener {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Listener {
    fn on(listener: UnixListener, out: &Path, name: &str) -> Listener {
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, marker) = (stop.clone(), out.join(name));
        let thread = std::thread::spawn(move || {
            // Accepted connections are kept open until the listener stops: one closed at once
            // could reach a client still sending its hello (EPIPE) on a loaded machine.
            let mut open = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        std::fs::write(&marker, "accepted").unwrap();
                        open.push(stream);
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Listener {
            stop,
            thread: Some(thread),
        }
    }

    pub(crate) fn path(path: &Path, out: &Path, name: &str) -> Listener {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        Listener::on(UnixListener::bind(path).unwrap(), out, name)
    }

    fn abstract_(name: &str, out: &Path) -> Listener {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        Listener::on(UnixListener::bind_addr(&addr).unwrap(), out, name)
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub(crate) fn markers(out: &Path) -> Vec<String> {
    let mut m: Vec<String> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    m.sort();
    m
}

/// Wait until the listeners have recorded what they accepted.
pub(crate) fn settle() {
    std::thread::sleep(Duration::from_millis(100));
}

/// `python3 -c CONNECT TARGETS` in the project, unconfined, with `env`.
pub(crate) fn unconfined(p: &Project, env: &[(&str, &Path)], targets: &[String]) -> Output {
    Command::new("python3")
        .arg("-c")
        .arg(CONNECT)
        .args(targets)
        .current_dir(p.path())
        .env("HOME", p.home.path())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap()
}

/// The same through `hookd exec`.
pub(crate) fn confined(
    p: &Project,
    tmp: &Path,
    env: &[(&str, &Path)],
    targets: &[String],
) -> Output {
    let mut args = vec!["exec", "--", "python3", "-c", CONNECT];
    args.extend(targets.iter().map(String::as_str));
    let mut c = hookd(p, tmp, &args);
    c.envs(env.iter().map(|(k, v)| (k, v)));
    c.output().unwrap()
}

/// The daemon, as a user starts it (`hookd serve`, its socket where hookd puts it when there is
/// no runtime directory: `~/.infer/hookd.sock`, its token beside it).
fn daemon(p: &Project) -> std::process::Child {
    daemon_at(p, &p.home.path().join(".infer/hookd.sock"))
}

/// The daemon, its socket at `socket` (`hookd serve --socket`).
fn daemon_at(p: &Project, socket: &Path) -> std::process::Child {
    std::fs::create_dir_all(socket.parent().unwrap()).unwrap();
    let mut child = p
        .cmd(&["serve", "--socket", socket.to_str().unwrap()])
        .args(["--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.starts_with("hookd: listening on unix:"), "{line}");
    // The rest of what it says, read so that it never writes to a closed pipe.
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    child
}

#[test]
fn a_confined_command_reaches_no_socket_made_outside() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let runtime = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let slash_tmp = tempfile::tempdir_in("/tmp").unwrap();
    let home = p.home.path();
    let abstract_name = format!("hookd-test-{}", std::process::id());
    let places: Vec<(&str, PathBuf)> = vec![
        ("tmux", slash_tmp.path().join("tmux-0/default")),
        ("ssh-agent", tmp.join("ssh-XXXX/agent.1")),
        ("session-bus", runtime.path().join("bus")),
        ("gpg-agent", home.join(".gnupg/S.gpg-agent")),
        (
            "git-credential-cache",
            home.join(".cache/git/credential/socket"),
        ),
        ("screen", home.join(".screen/S-user/1.pts-0.host")),
        // The attack round of 2026-11-27: agents and container engines in the home.
        ("1password", home.join(".1password/agent.sock")),
        ("bitwarden", home.join(".bitwarden-ssh-agent.sock")),
        ("colima", home.join(".colima/default/docker.sock")),
        ("rancher", home.join(".rd/docker.sock")),
    ];
    let listeners: Vec<Listener> = places
        .iter()
        .map(|(name, path)| Listener::path(path, out.path(), name))
        .chain([Listener::abstract_(&abstract_name, out.path())])
        .collect();
    let mut daemon = daemon(&p);
    // A link in the project to tmux's socket (the sandbox-runtime case: resolved, then judged).
    std::os::unix::fs::symlink(&places[0].1, p.path().join("tmux.link")).unwrap();
    let mut targets: Vec<String> = places
        .iter()
        .map(|(_, path)| path.display().to_string())
        .collect();
    let hookd_socket = home.join(".infer/hookd.sock");
    targets.push(hookd_socket.display().to_string());
    targets.push(format!("@{abstract_name}"));
    targets.push(p.path().join("tmux.link").display().to_string());
    let env = [("XDG_RUNTIME_DIR", runtime.path())];

    // Unconfined, every one of them answers.
    let o = unconfined(&p, &env, &targets);
    settle();
    let text = stdout(&o);
    assert_eq!(
        text.matches(" connected\n").count(),
        targets.len(),
        "{text}"
    );
    let mut all: Vec<String> = places.iter().map(|(n, _)| n.to_string()).collect();
    all.push(abstract_name.clone());
    all.sort();
    assert_eq!(markers(out.path()), all);
    for m in &all {
        std::fs::remove_file(out.path().join(m)).unwrap();
    }

    // Confined, none does; hookd's token is not readable either.
    let o = confined(&p, &tmp, &env, &targets);
    settle();
    let text = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!text.contains(" connected"), "{text}");
    assert_eq!(text.lines().count(), targets.len(), "{text}");
    assert_eq!(markers(out.path()), Vec::<String>::new(), "{text}");
    let token = home.join(".infer/hookd.token");
    assert!(!std::fs::read_to_string(&token).unwrap().is_empty());
    let o = hookd(&p, &tmp, &["exec", "--", "cat", token.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "", "{}", stderr(&o));
    let _ = daemon.kill();
    let _ = daemon.wait();
    drop(listeners);
}

/// What test suites do with sockets keeps working: a pair, a socket bound in the command's own
/// temporary directory and in the project, an abstract one, each reached by the command itself.
#[test]
fn a_confined_command_keeps_the_sockets_it_makes() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let script = r#"
import os, socket, tempfile
a, b = socket.socketpair(); a.sendall(b"x"); assert b.recv(1) == b"x"; print("pair ok")
for place in (tempfile.mkdtemp(), os.getcwd()):
    path = os.path.join(place, "own.sock")
    l = socket.socket(socket.AF_UNIX); l.bind(path); l.listen(1)
    c = socket.socket(socket.AF_UNIX); c.connect(path); l.accept(); os.unlink(path)
    print("bound ok", place == os.getcwd())
l = socket.socket(socket.AF_UNIX); l.bind("\0hookd-own-%d" % os.getpid()); l.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect("\0hookd-own-%d" % os.getpid()); print("abstract ok")
"#;
    let o = hookd(&p, &tmp, &["exec", "--", "python3", "-c", script])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&o),
        "pair ok\nbound ok False\nbound ok True\nabstract ok\n",
        "{}",
        stderr(&o)
    );
}

/// Each family: `NAME ok` when a socket of it opens, else `NAME ERRNO`.
const FAMILIES: &str = r#"
import errno, socket
for name, family, kind, proto in (
    ("unix", socket.AF_UNIX, socket.SOCK_STREAM, 0),
    ("inet", socket.AF_INET, socket.SOCK_STREAM, 0),
    ("inet6", socket.AF_INET6, socket.SOCK_STREAM, 0),
    ("netlink-route", socket.AF_NETLINK, socket.SOCK_RAW, 0),
    ("netlink-audit", socket.AF_NETLINK, socket.SOCK_RAW, 9),
    ("packet", socket.AF_PACKET, socket.SOCK_RAW, 0),
    ("vsock", 40, socket.SOCK_STREAM, 0),
):
    try:
        socket.socket(family, kind, proto).close()
        print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
"#;

fn families(o: &Output) -> Vec<(String, String)> {
    stdout(o)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn socket_families_are_an_allow_list() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let open = families(
        &Command::new("python3")
            .args(["-c", FAMILIES])
            .output()
            .unwrap(),
    );
    // Unconfined (as root on the test machines), every family opens; where one does not
    // (no vsock module, no CAP_NET_RAW), its refusal below proves nothing and is skipped.
    assert!(open.iter().any(|(n, r)| n == "packet" && r == "ok") || !nix_root());
    let expect = |network: bool| -> Vec<(String, String)> {
        open.iter()
            .map(|(name, r)| {
                let allowed = name == "unix"
                    || network && ["inet", "inet6", "netlink-route"].contains(&name.as_str());
                let want = if allowed || r != "ok" {
                    r.clone()
                } else {
                    "EACCES".into()
                };
                (name.clone(), want)
            })
            .collect()
    };
    let o = hookd(&p, &tmp, &["exec", "--", "python3", "-c", FAMILIES])
        .output()
        .unwrap();
    assert_eq!(families(&o), expect(false), "{}", stderr(&o));
    p.write_home("config.yaml", "sandbox: {network: true}\n");
    let o = hookd(&p, &tmp, &["exec", "--", "python3", "-c", FAMILIES])
        .output()
        .unwrap();
    assert_eq!(families(&o), expect(true), "{}", stderr(&o));
}

fn nix_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// `TIOCSTI` types into a terminal; `TIOCLINUX` reaches the console's selection.
#[test]
fn terminal_injection_is_refused() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let script = r#"
import errno, fcntl, os, termios
m, s = os.openpty()
for name, req in (("TIOCSTI", termios.TIOCSTI), ("TIOCLINUX", 0x541C)):
    try:
        fcntl.ioctl(s, req, b"\x02")
        print(name, "injected")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
"#;
    let o = Command::new("python3")
        .args(["-c", script])
        .output()
        .unwrap();
    let unconfined = stdout(&o);
    // As root, or where `dev.tty.legacy_tiocsti` is 1, the injection works unconfined.
    if !unconfined.starts_with("TIOCSTI injected\n") {
        eprintln!("skipped: TIOCSTI does not work unconfined here: {unconfined}");
        return;
    }
    let o = hookd(&p, &tmp, &["exec", "--", "python3", "-c", script])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&o),
        "TIOCSTI EACCES\nTIOCLINUX EACCES\n",
        "{}",
        stderr(&o)
    );
}

/// No variable naming a socket or session outside reaches the command; `TMPDIR` is its own.
/// A socket listed in the user's `sandbox.unix_sockets` is reachable, and a variable naming it
/// is kept; a project's config.yaml cannot list one.
#[test]
fn socket_variables_go_and_the_users_listed_socket_is_reachable() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let slash_tmp = tempfile::tempdir_in("/tmp").unwrap();
    let agent = slash_tmp.path().join("agent.sock");
    let other = slash_tmp.path().join("other.sock");
    let _l = [
        Listener::path(&agent, out.path(), "agent"),
        Listener::path(&other, out.path(), "other"),
    ];
    let vars = [
        ("SSH_AUTH_SOCK", other.as_path()),
        (
            "DBUS_SESSION_BUS_ADDRESS",
            Path::new("unix:path=/run/user/0/bus"),
        ),
        ("TMUX", Path::new("/tmp/tmux-0/default,1,0")),
        ("DOCKER_HOST", Path::new("unix:///var/run/docker.sock")),
        ("GPG_AGENT_INFO", Path::new("/run/user/0/gnupg/S.gpg-agent")),
    ];
    let env_of = |o: &Output| -> Vec<String> {
        stdout(o)
            .lines()
            .filter(|l| {
                vars.iter().any(|(k, _)| l.starts_with(&format!("{k}=")))
                    || l.starts_with("TMPDIR=")
            })
            .map(String::from)
            .collect()
    };
    let mut c = hookd(&p, &tmp, &["exec", "--", "env"]);
    c.envs(vars.iter().map(|(k, v)| (k, v)));
    let o = c.output().unwrap();
    assert_eq!(
        env_of(&o),
        [format!("TMPDIR={}", tmp.display())],
        "{}",
        stderr(&o)
    );

    // Listed by the user: reachable, and SSH_AUTH_SOCK naming it is kept. The project lists the
    // other one: ignored, with a warning at its line.
    p.write_home(
        "config.yaml",
        &format!("sandbox:\n  unix_sockets: ['{}']\n", agent.display()),
    );
    p.write(
        "config.yaml",
        &format!("sandbox:\n  unix_sockets:\n    - '{}'\n", other.display()),
    );
    let targets = [agent.display().to_string(), other.display().to_string()];
    let o = confined(&p, &tmp, &[("SSH_AUTH_SOCK", &agent)], &targets);
    settle();
    assert_eq!(
        stdout(&o),
        format!("{} connected\n{} ENOENT\n", targets[0], targets[1]),
        "{}",
        stderr(&o)
    );
    assert_eq!(markers(out.path()), ["agent"]);
    let o = p.run(&["check"]);
    assert!(
        stderr(&o).contains(&format!(
            "warning: a project cannot widen which sockets confined commands reach; `{}` is ignored\n  --> .infer/config.yaml:3:",
            other.display()
        )),
        "{}",
        stderr(&o)
    );
    let mut c = hookd(&p, &tmp, &["exec", "--", "env"]);
    c.env("SSH_AUTH_SOCK", &agent);
    let o = c.output().unwrap();
    assert!(
        stdout(&o).contains(&format!("SSH_AUTH_SOCK={}\n", agent.display())),
        "{}",
        stdout(&o)
    );
}

/// Claude Code keeps `$TMPDIR/claude-XXXX-cwd` and writes the shell's directory to it after
/// every call, following links: a confined command that plants one there to `~/.bashrc` would
/// have the agent's own shell write it. Its temporary directory is its own, so it cannot.
#[test]
fn a_confined_command_cannot_plant_links_in_the_agents_temporary_directory() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let cwd_file = tmp.join("claude-ab12-cwd");
    let bashrc = p.home.path().join(".bashrc");
    let plant = format!(
        "ln -sf '{}' '{}'; ln -sf '{}' \"$TMPDIR/claude-ab12-cwd\"",
        bashrc.display(),
        cwd_file.display(),
        bashrc.display()
    );
    // What Claude Code's shell runs after each call.
    let agent_writes = || {
        let ok = Command::new("bash")
            .arg("-c")
            .arg(format!("pwd -P >| '{}'", cwd_file.display()))
            .current_dir(p.path())
            .status()
            .unwrap()
            .success();
        assert!(ok);
    };
    std::fs::write(&cwd_file, "/somewhere\n").unwrap();
    // Unconfined, the planted link makes the agent write the home's .bashrc.
    let ok = Command::new("bash")
        .args(["-c", &plant])
        .env("TMPDIR", &tmp)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    agent_writes();
    assert!(bashrc.exists());
    std::fs::remove_file(&bashrc).unwrap();
    std::fs::remove_file(&cwd_file).unwrap();

    std::fs::write(&cwd_file, "/somewhere\n").unwrap();
    let o = hookd(&p, &tmp, &["exec", "--", "bash", "-c", &plant])
        .output()
        .unwrap();
    agent_writes();
    assert!(!bashrc.exists(), "{}", stderr(&o));
    assert!(!cwd_file.symlink_metadata().unwrap().is_symlink());
}

/// Item 6: a home below the temporary directory (here `/tmp`, with no `TMPDIR`) keeps its
/// files: shown again read-only through the command's own `/tmp`, its credential stores hidden.
#[test]
fn a_home_below_the_temporary_directory_keeps_its_files() {
    if !confinable() {
        return;
    }
    let (p, _tmp) = project();
    let home = tempfile::tempdir_in("/tmp").unwrap();
    std::fs::create_dir_all(home.path().join(".ssh")).unwrap();
    std::fs::write(home.path().join(".ssh/id_ed25519"), "PRIVATE KEY\n").unwrap();
    std::fs::write(home.path().join(".profile"), "original\n").unwrap();
    let attack = "echo pwned >> \"$HOME/.bashrc\"; echo pwned >> \"$HOME/.profile\"; \
                  cat \"$HOME/.ssh/id_ed25519\"; cat \"$HOME/.profile\"";
    let run = |confine: bool| {
        let mut c = if confine {
            let mut c = p.cmd(&["exec", "--", "bash", "-c", attack]);
            c.env_remove("TMPDIR");
            c
        } else {
            let mut c = Command::new("bash");
            c.args(["-c", attack]).current_dir(p.path());
            c
        };
        c.env("HOME", home.path()).output().unwrap()
    };
    let o = run(false);
    assert_eq!(stdout(&o), "PRIVATE KEY\noriginal\npwned\n");
    std::fs::remove_file(home.path().join(".bashrc")).unwrap();
    std::fs::write(home.path().join(".profile"), "original\n").unwrap();

    let o = run(true);
    assert_eq!(stdout(&o), "original\n", "{}", stderr(&o));
    assert!(!home.path().join(".bashrc").exists());
    assert_eq!(
        std::fs::read_to_string(home.path().join(".profile")).unwrap(),
        "original\n"
    );
    assert!(
        stderr(&o).contains("Read-only file system"),
        "{}",
        stderr(&o)
    );
}

/// A hook run confined gets the same: no variable naming a socket outside, its own `TMPDIR`,
/// and no socket made outside.
#[test]
fn a_confined_hook_gets_no_socket_outside() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let slash_tmp = tempfile::tempdir_in("/tmp").unwrap();
    let agent = slash_tmp.path().join("agent.sock");
    let _l = Listener::path(&agent, out.path(), "agent");
    std::fs::write(p.path().join("connect.py"), CONNECT).unwrap();
    let script = format!(
        "env > hook-env.txt; python3 connect.py '{}' > hook-connect.txt",
        agent.display()
    );
    std::fs::write(p.path().join("hook.sh"), &script).unwrap();
    p.write_home(
        "config.yaml",
        "sandbox: {enabled: true}\ntools: {bash: {mode: {all: {allow: ['^sh hook\\.sh$']}}}}\n",
    );
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: h, hook: post_session, command: 'sh hook.sh'}]\n",
    );
    let mut c = hookd(&p, &tmp, &["dispatch", "post_session"]);
    c.env("SSH_AUTH_SOCK", &agent)
        .env("TMUX", "/tmp/tmux-0/default,1,0");
    let o = crate::support::with_stdin(c, "{}");
    assert!(o.status.success(), "{}", stderr(&o));
    settle();
    let env = std::fs::read_to_string(p.path().join("hook-env.txt")).unwrap();
    assert!(
        !env.contains("SSH_AUTH_SOCK=") && !env.contains("TMUX="),
        "{env}"
    );
    assert!(
        env.contains(&format!("TMPDIR={}\n", tmp.display())),
        "{env}"
    );
    let connect = std::fs::read_to_string(p.path().join("hook-connect.txt")).unwrap();
    assert_eq!(connect, format!("{} ENOENT\n", agent.display()));
    assert_eq!(markers(out.path()), Vec::<String>::new());
}

/// A project below `/tmp` shows through the command's own `/tmp`, and the working directory is
/// entered again through it: `..` leads to the command's `/tmp`, not the host's (where tmux's
/// socket is).
#[test]
fn a_project_below_tmp_leads_to_the_commands_own_tmp_only() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let base = tempfile::tempdir_in("/tmp").unwrap();
    let proj = base.path().join("proj");
    std::fs::create_dir_all(proj.join("src")).unwrap();
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&proj)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let _l = Listener::path(&base.path().join("tmux.sock"), out.path(), "tmux");
    std::fs::write(proj.join("connect.py"), CONNECT).unwrap();
    let script = "python3 connect.py ../tmux.sock; cd src && pwd -P && git status --short | wc -l";
    let run = |confine: bool| {
        let mut c = if confine {
            hookd(&p, &tmp, &["exec", "--", "sh", "-c", script])
        } else {
            let mut c = Command::new("sh");
            c.args(["-c", script]);
            c
        };
        c.current_dir(&proj).output().unwrap()
    };
    let expected =
        |result: &str| format!("../tmux.sock {result}\n{}\n1\n", proj.join("src").display());
    let o = run(false);
    settle();
    assert_eq!(stdout(&o), expected("connected"));
    assert_eq!(markers(out.path()), ["tmux"]);
    std::fs::remove_file(out.path().join("tmux")).unwrap();
    let o = run(true);
    settle();
    assert_eq!(stdout(&o), expected("ENOENT"), "{}", stderr(&o));
    assert_eq!(markers(out.path()), Vec::<String>::new());
}

/// A daemon started with `--socket PATH` (not `HOOKD_SOCKET`) ran its confined hooks with its
/// own socket reachable: a hook read the event stream (the operator's hints), forged events and
/// could dispatch the user's hooks (attack round of 2026-11-27). Its socket is hidden from its
/// hooks wherever `--socket` puts it.
#[test]
fn a_daemons_hooks_do_not_reach_its_socket() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let _ = &tmp;
    std::fs::write(p.path().join("connect.py"), CONNECT).unwrap();
    let socket = p.path().join("hookd.sock");
    std::fs::write(
        p.path().join("hook.sh"),
        format!(
            "python3 connect.py '{}' > hook-connect.txt",
            socket.display()
        ),
    )
    .unwrap();
    let hooks = "enabled: true\nhooks: [{name: h, hook: post_session, command: 'sh hook.sh'}]\n";
    p.write_home("hooks.yaml", hooks);
    let dispatch = |config: &str| {
        p.write_home("config.yaml", config);
        // What a hook that did not run would leave: the last run's answer.
        let _ = std::fs::remove_file(p.path().join("hook-connect.txt"));
        let d = crate::support::daemon::start(&p, &[]);
        assert_eq!(d.socket, socket);
        let body = serde_json::json!({"point": "post_session", "context": {"session_id": "s"}});
        let (status, answer) =
            crate::support::daemon::unix(&d.socket, "POST", "/v1/dispatch", &body.to_string());
        assert_eq!(status, 200, "{answer}");
        std::fs::read_to_string(p.path().join("hook-connect.txt")).unwrap()
    };
    let allow = "tools: {bash: {mode: {all: {allow: ['^sh hook\\.sh$']}}}}\n";
    // Unconfined, the hook reaches the daemon (the attack works).
    assert_eq!(dispatch(allow), format!("{} connected\n", socket.display()));
    let confined = dispatch(&format!("sandbox: {{enabled: true}}\n{allow}"));
    assert!(
        !confined.contains("connected"),
        "the confined hook reached its daemon: {confined}"
    );
}

/// The user's other terminals (the agent's, an ssh session's, a tmux pane's) were open to a
/// confined command by path under the host's `/dev/pts`: it printed a fake password prompt into
/// one and read what was typed there (attack round of 2026-11-27). It has a devpts instance of
/// its own; the terminals it opens itself work.
#[test]
fn the_users_other_terminals_are_not_reachable() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    use std::os::fd::{FromRawFd, OwnedFd};
    let (mut m, mut s) = (-1, -1);
    let mut name = [0 as nix::libc::c_char; 128];
    // SAFETY: openpty writes two descriptors and the slave's name into these buffers.
    let r = unsafe {
        nix::libc::openpty(
            &mut m,
            &mut s,
            name.as_mut_ptr(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0);
    // SAFETY: both descriptors were just opened by openpty and are owned here.
    let (master, _slave) = unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) };
    // SAFETY: openpty wrote a NUL-terminated name.
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
    let name = PathBuf::from(name.to_str().unwrap());
    struct Pty {
        master: OwnedFd,
    }
    let pty = Pty { master };
    let script = format!(
        "printf 'typed-into-it\\n' > '{}' && echo reached; python3 -c 'import os; m, s = os.openpty(); os.write(m, b\"own\\n\"); print(os.read(s, 4))'",
        name.display()
    );
    let read_master = || {
        nix::fcntl::fcntl(
            &pty.master,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
        )
        .unwrap();
        let mut buf = [0u8; 64];
        let n = nix::unistd::read(&pty.master, &mut buf).unwrap_or(0);
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    // Unconfined, the other terminal gets the text (the attack works).
    let o = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert!(stdout(&o).starts_with("reached\n"), "{}", stderr(&o));
    assert!(read_master().contains("typed-into-it"));
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", &script])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "b'own\\n'\n", "{}", stderr(&o));
    assert_eq!(
        read_master(),
        "",
        "the confined command wrote the other terminal"
    );
}

/// `/dev/shm` was the host's: a confined command overwrote an unconfined program's shared
/// state and planted a link there (attack round of 2026-11-27). It is the command's own, as its
/// temporary directory is.
#[test]
fn shared_memory_is_the_commands_own() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let name = format!("hookd-test-{}", std::process::id());
    let state = Path::new("/dev/shm").join(&name);
    let link = Path::new("/dev/shm").join(format!("{name}.log"));
    let mine = Path::new("/dev/shm").join(format!("{name}.mine"));
    let script = format!(
        "echo PWNED > '{}'; ln -s /etc/hostname '{}'; echo own > '{}' && cat '{}'",
        state.display(),
        link.display(),
        mine.display(),
        mine.display()
    );
    std::fs::write(&state, "SAFE\n").unwrap();
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", &script])
        .output()
        .unwrap();
    let after = std::fs::read_to_string(&state).unwrap();
    let linked = link.symlink_metadata().is_ok();
    let _ = std::fs::remove_file(&state);
    let _ = std::fs::remove_file(&link);
    assert_eq!(stdout(&o), "own\n", "{}", stderr(&o));
    assert_eq!(after, "SAFE\n", "the host's shared memory was written");
    assert!(!linked, "a link was planted in the host's /dev/shm");
    assert!(!mine.exists());
}

/// A daemon at a socket `HOOKD_SOCKET` names (anywhere): its token, events trail and fallback
/// mark beside it are hidden from a confined command as the default places' are. Read for real:
/// unconfined the token is read, confined it is not.
#[test]
fn a_custom_sockets_token_is_hidden() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let dir = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let socket = dir.path().join("d.sock");
    let mut daemon = daemon_at(&p, &socket);
    let token = dir.path().join("d.token");
    let secret = std::fs::read_to_string(&token).unwrap();
    assert!(!secret.is_empty());
    std::fs::write(dir.path().join("d.events"), "{}\n").unwrap();
    std::fs::write(dir.path().join("d.fallback"), "x\n").unwrap();
    let read = format!(
        "cat {0}/d.token {0}/d.events {0}/d.fallback",
        dir.path().display()
    );
    let o = std::process::Command::new("sh")
        .args(["-c", &read])
        .output()
        .unwrap();
    assert!(stdout(&o).starts_with(&secret), "{}", stderr(&o));
    let o = hookd(&p, &tmp, &["exec", "--", "sh", "-c", &read])
        .env("HOOKD_SOCKET", &socket)
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "", "{}", stderr(&o));
    let _ = daemon.kill();
    let _ = daemon.wait();
}

/// A socket a socket variable names, wherever it is: the variable was not handed on, but the
/// confined command reached the socket by its path, as it could see it (attack round 10 of
/// 2026-11-27): Docker Desktop for Linux's `~/.docker/desktop/docker.sock` through `DOCKER_HOST`
/// (the engine, and with it every file the VM shares), an `ssh-agent -a` socket in the home
/// through `SSH_AUTH_SOCK`, a session bus through `DBUS_SESSION_BUS_ADDRESS`.
#[test]
fn a_socket_a_socket_variable_names_is_not_reachable() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let home = p.home.path();
    let places: Vec<(&str, PathBuf)> = vec![
        ("docker-desktop", home.join(".docker/desktop/docker.sock")),
        ("ssh-agent", home.join(".cache/agent.sock")),
        ("bus", home.join("run/bus")),
    ];
    let listeners: Vec<Listener> = places
        .iter()
        .map(|(name, path)| Listener::path(path, out.path(), name))
        .collect();
    let targets: Vec<String> = places
        .iter()
        .map(|(_, p)| p.display().to_string())
        .collect();
    let docker = format!("unix://{}", places[0].1.display());
    let bus = format!("unix:path={},guid=0", places[2].1.display());
    let with_vars = |mut c: Command| {
        c.env("DOCKER_HOST", &docker)
            .env("SSH_AUTH_SOCK", &places[1].1)
            .env("DBUS_SESSION_BUS_ADDRESS", &bus);
        c.output().unwrap()
    };
    // Unconfined, each answers.
    let mut c = Command::new("python3");
    c.arg("-c")
        .arg(CONNECT)
        .args(&targets)
        .current_dir(p.path());
    let o = with_vars(c);
    settle();
    assert_eq!(
        stdout(&o).matches(" connected\n").count(),
        3,
        "{}",
        stdout(&o)
    );
    for (name, _) in &places {
        std::fs::remove_file(out.path().join(name)).unwrap();
    }
    // Confined, none.
    let mut args = vec!["exec", "--", "python3", "-c", CONNECT];
    args.extend(targets.iter().map(String::as_str));
    let o = with_vars(hookd(&p, &tmp, &args));
    settle();
    let text = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!text.contains(" connected"), "{text}");
    assert_eq!(markers(out.path()), Vec::<String>::new(), "{text}");
    drop(listeners);
}

/// A `sandbox.unix_sockets` entry in a place confined commands may write was followed as a
/// link: one confined command made `app.sock` in the project a link to the session bus in the
/// runtime directory, which is hidden, and the next one connected to it as listed (the
/// held-out replay of 2026-11-28, L4; sandbox-runtime's `unix-socket-allowlist.test.ts` drops
/// an entry the sandbox can also write). Such an entry is left out, and said.
#[test]
fn a_listed_socket_in_a_place_the_command_may_write_is_left_out() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let runtime = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let bus = runtime.path().join("bus");
    let _l = Listener::path(&bus, out.path(), "bus");
    let listed = p.path().canonicalize().unwrap().join("app.sock");
    p.write_home(
        "config.yaml",
        &format!("sandbox:\n  unix_sockets: ['{}']\n", listed.display()),
    );
    // What the earlier confined command left (a link in the project is one `ln -s` away).
    std::os::unix::fs::symlink(&bus, &listed).unwrap();
    let env = [("XDG_RUNTIME_DIR", runtime.path())];
    let targets = [listed.display().to_string()];
    let o = unconfined(&p, &env, &targets);
    settle();
    assert_eq!(stdout(&o), format!("{} connected\n", targets[0]));
    std::fs::remove_file(out.path().join("bus")).unwrap();
    let o = confined(&p, &tmp, &env, &targets);
    settle();
    assert!(
        !stdout(&o).contains("connected"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    assert_eq!(markers(out.path()), Vec::<String>::new());
    assert!(
        stderr(&o).contains(&format!(
            "hookd: the `sandbox.unix_sockets` entry {} lies in a place confined commands may write (one could put a link to another socket there): it was not reachable by the command; list a socket outside the places it may write\n",
            listed.display()
        )),
        "{}",
        stderr(&o)
    );
}

/// A runtime directory inside hookd's state (a user's `XDG_RUNTIME_DIR` there, as the held-out
/// replay had it): every confined command failed ("its sandbox could not be set up"), the
/// runtime directory's cover made after the state was hidden. It is hidden with the state now:
/// the command runs, and what the runtime directory holds is out of its reach.
#[test]
fn a_runtime_directory_inside_hookds_state_is_hidden_with_it() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let state = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let runtime = state.path().join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::write(runtime.join("secret"), "the user's").unwrap();
    let secret = runtime.join("secret");
    let mut c = hookd(
        &p,
        &tmp,
        &["exec", "--", "sh", "-c", "echo ran; cat \"$1\"", "sh"],
    );
    c.arg(&secret)
        .env("HOOKD_STATE_DIR", state.path())
        .env("XDG_RUNTIME_DIR", &runtime);
    let o = c.output().unwrap();
    assert_eq!(stdout(&o), "ran\n", "{}", stderr(&o));
    assert!(
        stderr(&o).contains("No such file or directory"),
        "{}",
        stderr(&o)
    );
}

/// Attack round 15's F2: a send with `MSG_FASTOPEN` connects an unconnected TCP socket with no
/// `connect` call, which Landlock's TCP rule does not see (a command nested in a confined agent
/// used the agent's proxy so). Refused to every confined command (EACCES), the network on
/// included; unconfined, the same call reaches the listener.
#[test]
fn tcp_fast_open_is_refused() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let (l, port) = crate::sandbox::listener();
    l.set_nonblocking(true).unwrap();
    let script = r#"
import errno, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
try:
    s.sendto(b"GET / HTTP/1.0\r\n\r\n", socket.MSG_FASTOPEN, ("127.0.0.1", int(sys.argv[1])))
    print("sent")
except OSError as e:
    print(errno.errorcode[e.errno])
"#;
    let port = port.to_string();
    let accepted = || {
        std::thread::sleep(Duration::from_millis(100));
        l.accept().is_ok()
    };
    let o = Command::new("python3")
        .args(["-c", script, &port])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "sent\n", "{}", stderr(&o));
    assert!(accepted(), "unconfined, the send connects");
    p.write_home("config.yaml", "sandbox: {network: true}\n");
    let o = hookd(&p, &tmp, &["exec", "--", "python3", "-c", script, &port])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "EACCES\n", "{}", stderr(&o));
    assert!(!accepted());
}
