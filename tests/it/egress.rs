//! Issue 43: egress by domain. A confined command under `sandbox.network: {allow, deny}` has
//! no network of its own: it reaches hosts only through hookd's proxy, which refuses what the
//! list does not allow and says why. A loopback HTTP server outside the sandbox stands in for
//! a registry (`localhost`, listed exactly, resolves to it); every way around the proxy is
//! tried for real and must leave no trace on that server.

use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::sandbox::{confinable, hookd, project};
use crate::support::{json_lines, stderr, stdout, with_stdin, Project};

/// A loopback HTTP server standing in for a host: answers every request with its path, and
/// records each request line it got.
struct Upstream {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Upstream {
    fn start() -> Upstream {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(mut c) = conn else { continue };
                let s = s.clone();
                std::thread::spawn(move || {
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
                });
            }
        });
        Upstream { port, seen }
    }

    fn seen(&self) -> Vec<String> {
        let mut v = self.seen.lock().unwrap().clone();
        v.sort();
        v
    }
}

/// The `network_request` events of an events file, and its text (for the failure's message).
fn connections_in(events: &Path) -> (Vec<Value>, String) {
    let text = std::fs::read_to_string(events).unwrap();
    let net = json_lines(&text)
        .into_iter()
        .filter(|e| e["type"] == "network_request")
        .collect();
    (net, text)
}

/// A post_tool hook `bash fetch.sh`, confined with `localhost` listed; `fetch.sh` is `script`.
fn fetching_hook(p: &Project, script: &str) {
    p.write_home(
        "config.yaml",
        "sandbox:\n  enabled: true\n  network:\n    allow: [localhost]\ntools: {bash: {mode: {all: {allow: ['^bash fetch\\.sh$']}}}}\n",
    );
    std::fs::write(p.path().join("fetch.sh"), script).unwrap();
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: fetch, hook: post_tool, command: 'bash fetch.sh'}]\n",
    );
}

fn has_curl() -> bool {
    let ok = std::process::Command::new("curl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::support::unavailable("curl", "curl is not installed");
    }
    ok
}

/// `script` run by bash under `hookd exec` with `PORT` and `UPORT` set: its output.
fn exec(p: &Project, tmp: &Path, script: &str, port: u16, uport: u16) -> std::process::Output {
    let script = format!("PORT={port}\nUPORT={uport}\n{script}");
    hookd(p, tmp, &["exec", "--", "bash", "-c", &script])
        .output()
        .unwrap()
}

const REFUSED_NAME: &str = "hookd refused example.com: not in `sandbox.network.allow` (add `example.com` there in your ~/.infer/config.yaml to allow it)";

#[test]
fn a_confined_command_reaches_listed_hosts_through_the_proxy_and_nothing_else() {
    if !confinable() || !has_curl() {
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox:\n  network:\n    allow: [localhost]\n",
    );
    let up = Upstream::start();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let uport = udp.local_addr().unwrap().port();
    // Each line prints what it got; the ways around the proxy print `ESCAPED` when they work.
    let script = r#"
echo "proxy=$HTTPS_PROXY no_proxy=$no_proxy cargo=$CARGO_HTTP_PROXY"
curl -sS --noproxy '' "http://localhost:$PORT/plain"
curl -sS --noproxy '' -p "http://localhost:$PORT/tunnel"
curl -sS --noproxy '' -v "http://example.com/" 2>&1 | grep -F '< HTTP/1.1 403'
curl -sS --noproxy '' -p -v "https://example.com/" 2>&1 | grep -F '< HTTP/1.1 403'
curl -sS --noproxy '' --socks5-hostname 127.0.0.1:3128 "http://localhost:$PORT/socks"
curl -sS --noproxy '' --socks5-hostname 127.0.0.1:3128 "http://example.com/" 2>&1
curl -sS --noproxy '' "http://127.0.0.1:$PORT/literal"
curl -sS --noproxy '' "http://[::1]:$PORT/literal6"
(exec 3<>"/dev/tcp/127.0.0.1/$PORT" && printf 'GET /direct HTTP/1.0\r\n\r\n' >&3 && echo ESCAPED tcp) 2>/dev/null
curl -sS --noproxy '*' --connect-timeout 3 "http://localhost:$PORT/direct-curl" 2>/dev/null && echo ESCAPED curl
echo x 2>/dev/null > "/dev/udp/127.0.0.1/$UPORT"
getent hosts example.com && echo ESCAPED dns
(exec 3<>/dev/tcp/127.0.0.1/3128 && printf 'HELLO\r\n\r\n' >&3 && head -c 15 <&3; echo)
"#;
    let o = exec(&p, &tmp, script, up.port, uport);
    let out = stdout(&o);
    let expected = format!(
        "proxy=http://127.0.0.1:3128 no_proxy=localhost,127.0.0.1,::1 cargo=http://127.0.0.1:3128\n\
         upstream saw GET /plain HTTP/1.1\n\
         upstream saw GET /tunnel HTTP/1.1\n\
         < HTTP/1.1 403 {REFUSED_NAME}\r\n\
         < HTTP/1.1 403 {REFUSED_NAME}\r\n\
         upstream saw GET /socks HTTP/1.1\n\
         curl: (97) Can't complete SOCKS5 connection to example.com. (2)\n\
         hookd refused 127.0.0.1: an IP address is reached only when `sandbox.network.allow` lists it (add `127.0.0.1` there in your ~/.infer/config.yaml to allow it)\n\
         hookd refused ::1: an IP address is reached only when `sandbox.network.allow` lists it (add `::1` there in your ~/.infer/config.yaml to allow it)\n\
         HTTP/1.1 400 `H\n"
    );
    assert_eq!(out, expected, "stderr: {}", stderr(&o));
    // The stand-in saw the two requests through the proxy and nothing else.
    assert_eq!(
        up.seen(),
        [
            "GET /plain HTTP/1.1",
            "GET /socks HTTP/1.1",
            "GET /tunnel HTTP/1.1"
        ],
        "{out}"
    );
    assert!(udp.recv(&mut [0u8; 16]).is_err(), "a datagram got out");
}

#[test]
fn deny_wins_and_a_project_only_narrows_the_list() {
    if !confinable() || !has_curl() {
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox:\n  network:\n    allow: [localhost, '*.example.org']\n",
    );
    p.write(
        "config.yaml",
        "sandbox:\n  network:\n    allow: [example.com]\n    deny: [localhost]\n",
    );
    let up = Upstream::start();
    let script = r#"
curl -sS --noproxy '' "http://localhost:$PORT/denied"
curl -sS --noproxy '' -o /dev/null -w '%{http_code}\n' "http://example.com/"
"#;
    let o = exec(&p, &tmp, script, up.port, 0);
    assert_eq!(
        stdout(&o),
        "hookd refused localhost: the sandbox's `sandbox.network.deny` lists `localhost` (remove it from your ~/.infer/config.yaml to allow the host)\n403\n",
        "{}",
        stderr(&o)
    );
    assert!(up.seen().is_empty());
    let check = p.run(&["check"]);
    assert!(
        stderr(&check).contains("warning: a project cannot widen which hosts confined commands reach; `example.com` is ignored\n  --> .infer/config.yaml:3:13"),
        "{}",
        stderr(&check)
    );
}

#[test]
fn each_host_entry_is_checked_at_its_line() {
    let p = Project::new();
    p.write_home(
        "config.yaml",
        "sandbox:\n  network:\n    allow:\n      - crates.io\n      - https://crates.io/\n      - '*'\n    denny: []\n",
    );
    let o = p.run(&["check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o).replace(&p.home.path().display().to_string(), "~");
    for want in [
        "error: `sandbox.network.allow` entry: `https://crates.io/` is not a host name, a `*.` wildcard or an IP address\n  --> ~/.infer/config.yaml:5:9\n",
        "  = help: write a name (`crates.io`), a wildcard for the names beneath one (`*.crates.io`) or an address (`10.0.0.7`)\n",
        "error: `sandbox.network.allow` entry: `*` alone would allow every host; write `network: true` for that, or list the hosts\n  --> ~/.infer/config.yaml:6:9",
        "unknown key `denny` in `sandbox.network` is ignored",
    ] {
        assert!(err.contains(want), "{want}\n---\n{err}");
    }
}

#[test]
fn a_hooks_connections_are_events() {
    if !confinable() || !has_curl() {
        return;
    }
    let (p, tmp) = project();
    let up = Upstream::start();
    p.write_home(
        "config.yaml",
        "sandbox:\n  enabled: true\n  network:\n    allow: [localhost]\ntools: {bash: {mode: {all: {allow: ['^bash fetch\\.sh$']}}}}\n",
    );
    std::fs::write(
        p.path().join("fetch.sh"),
        format!(
            "curl -sS --noproxy '' http://localhost:{}/hook\ncurl -sS --noproxy '' http://example.com/\n",
            up.port
        ),
    )
    .unwrap();
    p.write_home(
        "hooks.yaml",
        "enabled: true\nhooks: [{name: fetch, hook: post_session, command: 'bash fetch.sh'}]\n",
    );
    let o = with_stdin(
        hookd(&p, &tmp, &["dispatch", "post_session", "--events", "-"]),
        "{}",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let events = json_lines(&stderr(&o));
    let net: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "network_request")
        .collect();
    assert_eq!(net.len(), 2, "{}", stderr(&o));
    let allowed = net.iter().find(|e| e["verdict"] == "allowed").unwrap();
    assert_eq!(allowed["host"], "localhost");
    assert_eq!(allowed["port"], up.port);
    assert_eq!(allowed["name"], "fetch");
    assert_eq!(allowed["hook"], "post_session");
    assert!(allowed["bytes_in"].as_u64().unwrap() > 20, "{allowed}");
    assert!(allowed["bytes_out"].as_u64().unwrap() > 20, "{allowed}");
    let refused = net.iter().find(|e| e["verdict"] == "refused").unwrap();
    assert_eq!(refused["host"], "example.com");
    assert_eq!(refused["reason"], REFUSED_NAME);
    let ran = events.iter().find(|e| e["type"] == "hook_command").unwrap();
    assert!(
        ran["sandbox"]
            .as_str()
            .unwrap()
            .ends_with("; network: through hookd's proxy to localhost"),
        "{ran}"
    );
}

#[test]
fn hookd_check_says_which_hosts_and_a_project_narrows_network_on() {
    let p = Project::new();
    p.write_home(
        "config.yaml",
        "sandbox:\n  enabled: true\n  network:\n    allow: [crates.io, '*.crates.io']\n    deny: [evil.crates.io]\n",
    );
    let check = stdout(&p.run(&["check"]));
    assert!(
        check.contains("; network only through hookd's proxy, to crates.io, *.crates.io, never evil.crates.io; "),
        "{check}"
    );
    // Your `network: true`, a project's deny list: every name, through the proxy, less those.
    p.write_home(
        "config.yaml",
        "sandbox:\n  enabled: true\n  network: true\n",
    );
    p.write(
        "config.yaml",
        "sandbox:\n  network: {deny: [pastebin.com]}\n",
    );
    let check = stdout(&p.run(&["check"]));
    assert!(
        check.contains(
            "; network only through hookd's proxy, to every host name, never pastebin.com; "
        ),
        "{check}"
    );
}

/// `python3 -m http.server` on loopback serving `dir`, killed when dropped.
struct Static(std::process::Child, u16);

impl Static {
    fn serve(dir: &Path) -> Static {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("python3")
            .args([
                "-m",
                "http.server",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
            ])
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Static(child, port)
    }
}

impl Drop for Static {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn have(tool: &str) -> bool {
    let ok = std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::support::unavailable(tool, &format!("{tool} is not installed"));
    }
    ok
}

/// A registry's files on disk: a git repository for dumb HTTP, a PyPI simple index with one
/// wheel, an npm packument and its tarball (`PORT` in URLs replaced by the server's port).
fn registry(www: &Path, port: u16) {
    let git = |args: &[&str], dir: &Path| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    let src = www.join("src");
    std::fs::create_dir_all(&src).unwrap();
    git(&["init", "-q", "-b", "main"], &src);
    std::fs::write(src.join("f"), "from the repository\n").unwrap();
    git(&["add", "f"], &src);
    git(
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "x",
        ],
        &src,
    );
    git(&["clone", "-q", "--bare", "src", "repo.git"], www);
    git(&["update-server-info"], &www.join("repo.git"));
    // PyPI: a hand-made wheel (no build tools needed) in a simple index.
    let pkg = www.join("simple/tinypkg");
    std::fs::create_dir_all(&pkg).unwrap();
    let wheel = "tinypkg-0.1-py3-none-any.whl";
    let py = format!(
        "import zipfile\nz = zipfile.ZipFile({:?}, 'w')\nz.writestr('tinypkg/__init__.py', '')\nz.writestr('tinypkg-0.1.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 0.1\\n')\nz.writestr('tinypkg-0.1.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\nz.writestr('tinypkg-0.1.dist-info/RECORD', '')\nz.close()\n",
        pkg.join(wheel)
    );
    assert!(std::process::Command::new("python3")
        .args(["-c", &py])
        .status()
        .unwrap()
        .success());
    std::fs::write(
        pkg.join("index.html"),
        format!("<html><body><a href=\"{wheel}\">{wheel}</a></body></html>\n"),
    )
    .unwrap();
    // npm: a packument (served as /tinynpm/) and its tarball.
    let npm = www.join("tinynpm");
    std::fs::create_dir_all(npm.join("-")).unwrap();
    std::fs::create_dir_all(www.join("pkgsrc/package")).unwrap();
    std::fs::write(
        www.join("pkgsrc/package/package.json"),
        "{\"name\":\"tinynpm\",\"version\":\"1.0.0\"}\n",
    )
    .unwrap();
    std::fs::write(
        www.join("pkgsrc/package/index.js"),
        "module.exports = 42;\n",
    )
    .unwrap();
    let tgz = npm.join("-/tinynpm-1.0.0.tgz");
    assert!(std::process::Command::new("tar")
        .arg("-czf")
        .arg(&tgz)
        .arg("-C")
        .arg(www.join("pkgsrc"))
        .arg("package")
        .status()
        .unwrap()
        .success());
    let sha1 = std::process::Command::new("sha1sum")
        .arg(&tgz)
        .output()
        .unwrap();
    let sha1 = String::from_utf8_lossy(&sha1.stdout)
        .split(' ')
        .next()
        .unwrap()
        .to_string();
    std::fs::write(
        npm.join("index.html"),
        format!(
            "{{\"name\":\"tinynpm\",\"dist-tags\":{{\"latest\":\"1.0.0\"}},\"versions\":{{\"1.0.0\":{{\"name\":\"tinynpm\",\"version\":\"1.0.0\",\"dist\":{{\"tarball\":\"http://localhost:{port}/tinynpm/-/tinynpm-1.0.0.tgz\",\"shasum\":\"{sha1}\"}}}}}}}}"
        ),
    )
    .unwrap();
}

#[test]
fn git_pip_and_npm_fetch_through_the_proxy() {
    if !confinable() || !have("git") || !have("python3") || !have("pip") || !have("npm") {
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox:\n  network:\n    allow: [localhost]\n",
    );
    let www = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    // The port is known once the server runs; the packument names it.
    let server = Static::serve(www.path());
    registry(www.path(), server.1);
    std::fs::write(
        p.path().join("package.json"),
        "{\"name\":\"x\",\"version\":\"1.0.0\"}\n",
    )
    .unwrap();
    // Loopback is the command's own: the stand-in host is reached through the proxy only when
    // NO_PROXY does not send `localhost` around it.
    let script = r#"
export NO_PROXY= no_proxy=
git clone -q "http://localhost:$PORT/repo.git" cloned && cat cloned/f
pip download -q --no-cache-dir --no-deps --index-url "http://localhost:$PORT/simple/" -d dl tinypkg && ls dl
npm_config_registry="http://localhost:$PORT/" npm_config_cache="$TMPDIR/npm" npm install -s --no-audit --no-fund tinynpm && node -e 'console.log(require("tinynpm"))'
"#;
    let o = exec(&p, &tmp, script, server.1, 0);
    assert_eq!(
        stdout(&o),
        "from the repository\ntinypkg-0.1-py3-none-any.whl\n42\n",
        "{}",
        stderr(&o)
    );
    // The same, with `localhost` not on the list: each is refused.
    p.write_home(
        "config.yaml",
        "sandbox:\n  network:\n    allow: [example.org]\n",
    );
    let o = exec(
        &p,
        &tmp,
        "export NO_PROXY= no_proxy=\ngit clone -q \"http://localhost:$PORT/repo.git\" again",
        server.1,
        0,
    );
    assert!(stderr(&o).contains("403"), "{}", stderr(&o));
    assert!(!p.path().join("again").exists());
}

#[test]
fn a_write_entry_that_holds_code_later_builds_run_is_warned_about() {
    let p = Project::new();
    p.write_home(
        "config.yaml",
        "sandbox:\n  write:\n    - ~/.cargo/registry\n    - ~/.cargo/registry/cache\n    - ~/.npm/_cacache\n    - ~/go\n    - ~/.cache/hookd/cargo\n",
    );
    let o = p.run(&["check"]);
    let err = stderr(&o).replace(&p.home.path().display().to_string(), "~");
    // cargo unpacks a cached crate without checking it (the attack round of 2026-11-27
    // swapped one in `registry/cache`): the cache itself is no safe grant.
    for (entry, line) in [("~/.cargo/registry", 3), ("~/.cargo/registry/cache", 4)] {
        assert!(
            err.contains(&format!("warning: `sandbox.write` entry `{entry}` holds cargo's registry (~/.cargo/registry), whose cached crates a later cargo unpacks without checking them and whose index names where crates are downloaded from: a confined command could change what a later, unconfined build runs\n  --> ~/.infer/config.yaml:{line}:7")),
            "{err}"
        );
    }
    assert!(
        err.contains("  = help: give the agent a cargo home of its own (start it with `CARGO_HOME=~/.cache/hookd/cargo` and write `~/.cache/hookd/cargo`): what its commands download is then never what your own builds run\n"),
        "{err}"
    );
    assert!(
        err.contains("`sandbox.write` entry `~/go` holds Go's extracted module sources"),
        "{err}"
    );
    assert_eq!(
        err.matches("warning: `sandbox.write` entry").count(),
        3,
        "{err}"
    );
}

#[test]
fn the_daemon_runs_the_proxy_for_its_hooks_and_counts_their_connections() {
    if !confinable() || !has_curl() {
        return;
    }
    let (p, _tmp) = project();
    let up = Upstream::start();
    fetching_hook(
        &p,
        &format!(
            "curl -sS --noproxy '' http://localhost:{}/from-the-daemon\ncurl -sS --noproxy '' http://example.com/\n",
            up.port
        ),
    );
    let d = crate::support::daemon::start(&p, &[]);
    let o = p
        .cmd(&["dispatch", "post_tool", "--session-id", "net"])
        .env("HOOKD_SOCKET", &d.socket)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(up.seen(), ["GET /from-the-daemon HTTP/1.1"]);
    let (_, metrics) = crate::support::daemon::tcp(&d, "GET", "/metrics", "");
    for want in [
        "hookd_network_requests_total{verdict=\"allowed\"} 1\n",
        "hookd_network_requests_total{verdict=\"refused\"} 1\n",
    ] {
        assert!(metrics.contains(want), "{want}\n{metrics}");
    }
    assert!(
        !metrics.contains("hookd_network_bytes_total{direction=\"in\"} 0\n"),
        "{metrics}"
    );
}

#[test]
fn a_model_calls_connections_are_events_in_the_audit_file() {
    // `hookd exec --shell` (the model's call as the adapters rewrite it) records its
    // connections where hooks' events go: HOOKD_EVENTS.
    if !confinable() || !has_curl() {
        return;
    }
    let (p, tmp) = project();
    let up = Upstream::start();
    p.write_home(
        "config.yaml",
        "sandbox:\n  network:\n    allow: [localhost]\n",
    );
    let events = p.home.path().join("events.jsonl");
    let shell = format!(
        "--shell=curl -sS --noproxy '' http://localhost:{}/model; curl -sS --noproxy '' http://example.com/",
        up.port
    );
    let o = hookd(&p, &tmp, &["exec", &shell])
        .env("HOOKD_EVENTS", &events)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (net, text) = connections_in(&events);
    assert_eq!(net.len(), 2, "{text}");
    let allowed = net.iter().find(|e| e["verdict"] == "allowed").unwrap();
    assert_eq!(allowed["host"], "localhost");
    assert_eq!(allowed["port"], up.port);
    assert_eq!(allowed["name"], "exec");
    assert_eq!(allowed["hook"], "pre_tool");
    let refused = net.iter().find(|e| e["verdict"] == "refused").unwrap();
    assert_eq!(refused["host"], "example.com");
    assert_eq!(refused["reason"], REFUSED_NAME);
}

#[test]
fn a_model_calls_connections_reach_the_running_daemon() {
    // With a daemon running, `hookd exec` (the agent's shell runs it, not the daemon) hands
    // the call's connections to it: the daemon's stream, metrics and dashboard have them, in
    // the session the rewrite carries; `HOOKD_EVENTS` (the in-process path) does not.
    if !confinable() || !has_curl() {
        return;
    }
    let (p, tmp) = project();
    let up = Upstream::start();
    p.write_home(
        "config.yaml",
        "sandbox:\n  network:\n    allow: [localhost]\n",
    );
    let d = crate::support::daemon::start(&p, &[]);
    let events = p.home.path().join("events.jsonl");
    let shell = format!(
        "--shell=curl -sS --noproxy '' http://localhost:{}/model; curl -sS --noproxy '' http://example.com/",
        up.port
    );
    let o = hookd(&p, &tmp, &["exec", "--session=s-42", &shell])
        .env("HOOKD_SOCKET", &d.socket)
        .env("HOOKD_EVENTS", &events)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "nothing to say: the daemon took them");
    assert_eq!(up.seen(), ["GET /model HTTP/1.1"]);
    // Made before the command ran (so that the sandbox hides it), written by the daemon.
    assert_eq!(
        std::fs::read_to_string(&events).unwrap(),
        "",
        "written here"
    );
    let mut reader = crate::support::daemon::subscribe(&d, Some(0));
    let net: Vec<Value> = crate::support::daemon::read_events(&mut reader, 2)
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    let allowed = net.iter().find(|e| e["verdict"] == "allowed").unwrap();
    assert_eq!(allowed["type"], "network_request");
    assert_eq!(allowed["host"], "localhost");
    assert_eq!(allowed["name"], "exec");
    assert_eq!(allowed["hook"], "pre_tool");
    assert_eq!(allowed["session_id"], "s-42");
    let refused = net.iter().find(|e| e["verdict"] == "refused").unwrap();
    assert_eq!(refused["host"], "example.com");
    assert_eq!(refused["reason"], REFUSED_NAME);
    let (_, metrics) = crate::support::daemon::tcp(&d, "GET", "/metrics", "");
    for want in [
        "hookd_network_requests_total{verdict=\"allowed\"} 1\n",
        "hookd_network_requests_total{verdict=\"refused\"} 1\n",
    ] {
        assert!(metrics.contains(want), "{want}\n{metrics}");
    }
}

#[test]
fn the_adapters_rewrite_names_the_session_of_the_calls_connections() {
    // Claude Code's Bash call as the adapter rewrites it, run as the agent's shell runs it:
    // its connections are events of the agent's session (the rewrite carries it).
    if !confinable() || !has_curl() {
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox:\n  enabled: true\n  network:\n    allow: [localhost]\n",
    );
    let r =
        crate::sandbox_agents::bash_reply(&p, &tmp, "curl -sS --noproxy '' http://example.com/");
    let rewritten = r["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"));
    assert!(rewritten.contains(" --session='s' "), "{rewritten}");
    let events = p.home.path().join("events.jsonl");
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(rewritten)
        .current_dir(p.path())
        // The agent's shell: not the developer's environment (their daemon's socket included).
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("XDG_RUNTIME_DIR", p.state.path().join("run"))
        .env("HOME", p.home.path())
        .env("TMPDIR", &tmp)
        .env("HOOKD_STATE_DIR", p.state.path())
        .env("HOOKD_EVENTS", &events)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (net, text) = connections_in(&events);
    assert_eq!(net.len(), 1, "{text}");
    assert_eq!(net[0]["session_id"], "s", "{text}");
    assert_eq!(net[0]["host"], "example.com", "{text}");
}

#[test]
fn a_model_calls_connections_join_a_gone_daemons_events_file() {
    // The daemon at the socket went away (killed: its trail stays): `hookd exec` appends the
    // call's connections to the events file it was writing, as a client's dispatches do.
    if !confinable() || !has_curl() {
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox:\n  network:\n    allow: [localhost]\n",
    );
    let log = p.home.path().join("daemon.jsonl");
    let mut d = crate::support::daemon::start(&p, &["--events", log.to_str().unwrap()]);
    let socket = d.socket.clone();
    // An event in its file first (a trail naming an empty file is not appended to).
    let before = r#"{"session": "s-0", "connections": [{"host": "before.example", "port": 443, "verdict": "allowed"}]}"#;
    let (status, _) = crate::support::daemon::unix(&socket, "POST", "/v1/connections", before);
    assert_eq!(status, 200);
    d.child.kill().unwrap();
    d.child.wait().unwrap();
    let o = hookd(
        &p,
        &tmp,
        &[
            "exec",
            "--session=s-gone",
            "--shell=curl -sS --noproxy '' http://example.com/",
        ],
    )
    .env("HOOKD_SOCKET", &socket)
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let (net, text) = connections_in(&log);
    assert_eq!(net.len(), 2, "{text}");
    assert_eq!(net[1]["session_id"], "s-gone", "{text}");
    assert_eq!(net[1]["host"], "example.com", "{text}");
    assert_eq!(net[1]["seq"], 2, "numbered on: {text}");
}

#[test]
fn the_daemon_checks_a_connections_report() {
    let p = crate::support::daemon::project();
    let d = crate::support::daemon::start(&p, &[]);
    let post =
        |body: &str| crate::support::daemon::unix(&d.socket, "POST", "/v1/connections", body);
    let (status, body) = post(
        r#"{"session": "s", "connections": [{"host": "x.test", "port": 443, "verdict": "maybe"}]}"#,
    );
    assert_eq!(status, 400);
    assert_eq!(
        body,
        r#"{"error":"connection 0: `verdict` is `allowed` or `refused`, not `maybe`"}"#
    );
    let (status, body) = post(
        r#"{"session": "s", "connections": [{"host": "", "port": 443, "verdict": "allowed"}]}"#,
    );
    assert_eq!(
        (status, body.as_str()),
        (
            400,
            r#"{"error":"connection 0: `host` has 1 to 1024 bytes"}"#
        )
    );
    let (status, body) = post("[]");
    assert_eq!(status, 400, "{body}");
    assert!(body.starts_with(r#"{"error":"expected {\"session\": …, \"connections\": [{\"host\": …, \"port\": …, \"verdict\": …}]}: "#), "{body}");
    let big = format!(
        r#"{{"session": "s", "connections": [{{"host": "x", "port": 1, "verdict": "allowed", "reason": "{}"}}]}}"#,
        "r".repeat(1024 * 1024)
    );
    assert_eq!(post(&big).0, 413);
    let (status, body) = post(
        r#"{"session": "s", "connections": [{"host": "x.test", "port": 443, "verdict": "allowed", "bytes_in": 5}]}"#,
    );
    assert_eq!((status, body.as_str()), (200, r#"{"recorded":1}"#));
    let (_, metrics) = crate::support::daemon::tcp(&d, "GET", "/metrics", "");
    assert!(
        metrics.contains("hookd_network_requests_total{verdict=\"allowed\"} 1\n"),
        "{metrics}"
    );
}

#[test]
fn a_daemon_that_refuses_the_connections_leaves_them_to_the_audit_file() {
    // A daemon loaded with other settings (here: another --config-dir) is not this call's:
    // it refuses the report (412, a `client_refused` event), and `hookd exec` writes the
    // connections where they go without a daemon, saying so on stderr.
    if !confinable() || !has_curl() {
        return;
    }
    let (p, tmp) = project();
    p.write_home(
        "config.yaml",
        "sandbox:\n  network:\n    allow: [localhost]\n",
    );
    let other = tempfile::tempdir().unwrap();
    let d = crate::support::daemon::start(&p, &["--config-dir", other.path().to_str().unwrap()]);
    let events = p.home.path().join("events.jsonl");
    let o = hookd(
        &p,
        &tmp,
        &[
            "exec",
            "--session=s-7",
            "--shell=curl -sS --noproxy '' http://example.com/",
        ],
    )
    .env("HOOKD_SOCKET", &d.socket)
    .env("HOOKD_EVENTS", &events)
    .output()
    .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "hookd: the hookd daemon at {}: it answered 412: this daemon loaded its configuration with other settings than this client's",
            d.socket.display()
        )) && err.trim_end().ends_with("; this call's connections are written here"),
        "{err}"
    );
    let (net, text) = connections_in(&events);
    assert_eq!(net.len(), 1, "{text}");
    assert_eq!(net[0]["host"], "example.com");
    assert_eq!(net[0]["session_id"], "s-7");
    let mut reader = crate::support::daemon::subscribe(&d, Some(0));
    let (_, refused) = crate::support::daemon::read_events(&mut reader, 1).remove(0);
    assert_eq!(refused["type"], "client_refused", "{refused}");
    assert_eq!(refused["status"], 412, "{refused}");
    assert_eq!(refused["session_id"], "s-7", "{refused}");
}

#[test]
fn the_dashboard_lists_the_refused_hosts_in_chromium() {
    if !confinable() || !has_curl() {
        return;
    }
    let Some(exe) = crate::cdp::chromium() else {
        crate::support::unavailable(
            "chromium",
            "chromium not installed (apt-get install chromium)",
        );
        return;
    };
    let (p, _tmp) = project();
    let up = Upstream::start();
    fetching_hook(
        &p,
        &format!(
            "curl -sS --noproxy '' http://localhost:{}/ok\ncurl -sS --noproxy '' http://example.com/\ncurl -sS --noproxy '' http://example.com/again\n",
            up.port
        ),
    );
    let d = crate::support::daemon::start(&p, &[]);
    let o = p
        .cmd(&["dispatch", "post_tool", "--session-id", "net"])
        .env("HOOKD_SOCKET", &d.socket)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let browser = crate::cdp::Browser::launch(&exe);
    let mut tab = browser.open(d.dashboard.as_deref().unwrap());
    tab.wait_for(
        "document.querySelectorAll('#hosts tbody tr').length === 1",
        "the refused host's row",
    );
    let cells = tab.eval(
        "[...document.querySelectorAll('#hosts tbody tr td')].map(td => td.textContent).join(' | ')",
    );
    let cells = cells.as_str().unwrap();
    assert!(
        cells.starts_with("example.com:80 | 2 | ")
            && cells.ends_with(&format!(" | {REFUSED_NAME}")),
        "{cells}"
    );
    assert_eq!(
        tab.eval("document.getElementById('c-refused').textContent"),
        serde_json::json!("2")
    );
    // The reached host is a timeline row, not a refused one.
    assert_eq!(
        tab.eval("document.querySelectorAll('#timeline tr.refused').length"),
        serde_json::json!(2)
    );
}
