//! A real `hookd serve` for tests: on a temporary socket and port 0, driven over raw HTTP/1.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::Project;
pub(crate) struct Daemon {
    pub(crate) child: Child,
    pub(crate) socket: PathBuf,
    pub(crate) port: u16,
    /// The generated HTTP token (`None` when the test gave --token).
    pub(crate) token: Option<String>,
    /// The dashboard's URL, as `hookd serve` printed it.
    pub(crate) dashboard: Option<String>,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start(p: &Project, extra: &[&str]) -> Daemon {
    start_with(p, extra, true)
}

/// `trusted: false` starts it as a user would, without HOOKD_TRUST_PROJECT.
pub(crate) fn start_with(p: &Project, extra: &[&str], trusted: bool) -> Daemon {
    start_with_env(p, extra, trusted, &[])
}

/// [`start_with`], with these variables in the daemon's environment.
pub(crate) fn start_with_env(
    p: &Project,
    extra: &[&str],
    trusted: bool,
    env: &[(&str, String)],
) -> Daemon {
    let socket = p.path().join("hookd.sock");
    let mut args = vec![
        "serve",
        "--socket",
        socket.to_str().unwrap(),
        "--grace",
        "2",
    ];
    if !extra.contains(&"--listen") {
        args.extend(["--listen", "127.0.0.1:0"]);
    }
    args.extend_from_slice(extra);
    let mut cmd = if trusted {
        p.cmd(&args)
    } else {
        p.cmd_untrusted(&args)
    };
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.starts_with("hookd: listening on unix:"), "{line}");
    let port = line.trim().rsplit(':').next().unwrap().parse().unwrap();
    // With HTTP: the token line, then `dashboard: URL`.
    let mut dashboard = None;
    if line.contains("http://") {
        for _ in 0..2 {
            line.clear();
            err.read_line(&mut line).unwrap();
            if let Some(url) = line.trim().strip_prefix("dashboard: ") {
                dashboard = Some(url.to_string());
            }
        }
    }
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let token = std::fs::read_to_string(p.path().join("hookd.token")).ok();
    Daemon {
        child,
        socket,
        port,
        token,
        dashboard,
    }
}

/// One request; `Host: hookd` and, on a POST, `Content-Type: application/json` unless
/// `headers` give their own.
pub(crate) fn request(
    stream: &mut (impl Read + Write),
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    hookd::daemon::client::exchange(stream, method, path, headers, body).unwrap()
}

/// Over HTTP as a legitimate client: the daemon's address as Host, its generated token.
pub(crate) fn tcp(d: &Daemon, method: &str, path: &str, body: &str) -> (u16, String) {
    let host = format!("127.0.0.1:{}", d.port);
    let auth = d.token.as_ref().map(|t| format!("Bearer {t}"));
    let mut headers = vec![("Host", host.as_str())];
    if let Some(a) = &auth {
        headers.push(("Authorization", a.as_str()));
    }
    request(
        &mut TcpStream::connect(("127.0.0.1", d.port)).unwrap(),
        method,
        path,
        &headers,
        body,
    )
}

pub(crate) fn unix(socket: &Path, method: &str, path: &str, body: &str) -> (u16, String) {
    request(
        &mut UnixStream::connect(socket).unwrap(),
        method,
        path,
        &[],
        body,
    )
}

pub(crate) fn project() -> Project {
    let p = Project::new();
    p.write(
        "config.yaml",
        "tools: {bash: {mode: {all: {allow: ['^echo [a-z0-9]+$', '^sleep 30$']}}}}\n",
    );
    p.write("hooks.yaml", "enabled: true\nhooks:\n  - {name: say, hook: post_tool, command: 'echo hello'}\n  - {name: long, hook: post_session, command: 'sleep 30'}\n");
    p
}

/// Read SSE `id:`/`data:` pairs from an open event stream until `n` events arrived.
pub(crate) fn read_events(reader: &mut impl BufRead, n: usize) -> Vec<(u64, Value)> {
    let mut out = Vec::new();
    let mut id = None;
    let mut line = String::new();
    while out.len() < n {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(v) = line.strip_prefix("id: ") {
            id = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("data: ") {
            if let (Some(i), Ok(json)) = (id.take(), serde_json::from_str(v.trim())) {
                super::valid_if_event(&json);
                out.push((i, json));
            }
        }
    }
    out
}

pub(crate) fn subscribe(d: &Daemon, last_id: Option<u64>) -> BufReader<TcpStream> {
    let mut s = TcpStream::connect(("127.0.0.1", d.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let last = last_id
        .map(|i| format!("Last-Event-ID: {i}\r\n"))
        .unwrap_or_default();
    let auth = d
        .token
        .as_ref()
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    s.write_all(
        format!(
            "GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n{auth}{last}\r\n",
            d.port
        )
        .as_bytes(),
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line}");
    r
}

/// A process of `d`'s (its descendant: other tests may run the same command meanwhile) whose
/// command line matches `pattern` (`pgrep -f`): the witness that a hook of the daemon runs.
pub fn running_below(d: &Daemon, pattern: &str) -> Option<i32> {
    let out = std::process::Command::new("pgrep")
        .args(["-f", pattern])
        .output()
        .unwrap();
    let daemon = d.child.id() as i32;
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse::<i32>().ok())
        .find(|p| descends_from(*p, daemon))
}

/// Whether process `pid` descends from `ancestor` (its parent chain in /proc).
fn descends_from(pid: i32, ancestor: i32) -> bool {
    let mut p = pid;
    for _ in 0..64 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            return false;
        };
        // `pid (comm) state ppid …`: the comm may hold spaces, so read after its `)`.
        let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|v| v.parse::<i32>().ok())
        else {
            return false;
        };
        if ppid == ancestor {
            return true;
        }
        if ppid <= 1 {
            return false;
        }
        p = ppid;
    }
    false
}
