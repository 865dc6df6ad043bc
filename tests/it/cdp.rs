//! A small DevTools-protocol client for headless Chromium: launch it, open a tab, evaluate
//! script, take a screenshot. Used by the dashboard's tests and by `examples/dashbench.rs`
//! (which includes this file), so both drive the page the same way.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Chromium, when installed (CI installs Debian's `chromium`).
pub fn chromium() -> Option<PathBuf> {
    std::env::var_os("HOOKD_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| {
            [
                "/usr/bin/chromium",
                "/usr/bin/chromium-browser",
                "/usr/bin/google-chrome",
            ]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
        })
}

/// Headless Chromium with the DevTools protocol on a port it picks.
pub struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    port: u16,
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Browser {
    pub fn launch(exe: &PathBuf) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let child = Command::new(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
                "--window-size=1400,800",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let file = profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        let port = loop {
            if let Some(port) = std::fs::read_to_string(&file)
                .ok()
                .and_then(|t| t.lines().next().and_then(|l| l.parse().ok()))
            {
                break port;
            }
            assert!(
                Instant::now() < deadline,
                "chromium did not open its DevTools port"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        Browser {
            child,
            _profile: profile,
            port,
        }
    }

    /// A new tab on `url`, driven over its DevTools WebSocket.
    pub fn open(&self, url: &str) -> Tab {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "PUT /json/new?{url} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            self.port
        )
        .unwrap();
        // Chromium keeps the connection open: read the head, then Content-Length bytes.
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut r = BufReader::new(s);
        let mut length = 0;
        let mut line = String::new();
        while r.read_line(&mut line).unwrap() > 0 && line != "\r\n" {
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap();
            }
            line.clear();
        }
        let mut body = vec![0; length];
        r.read_exact(&mut body).unwrap();
        let target: Value = serde_json::from_slice(&body).unwrap();
        let ws = target["webSocketDebuggerUrl"].as_str().unwrap();
        let (socket, _) = tungstenite::connect(ws).unwrap();
        if let tungstenite::stream::MaybeTlsStream::Plain(tcp) = socket.get_ref() {
            tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        }
        Tab { socket, id: 0 }
    }
}

pub struct Tab {
    socket: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>,
    id: u64,
}

impl Tab {
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.socket
            .send(tungstenite::Message::text(
                json!({"id": id, "method": method, "params": params}).to_string(),
            ))
            .unwrap();
        loop {
            let msg = self.socket.read().unwrap();
            let Ok(text) = msg.to_text() else { continue };
            let v: Value = serde_json::from_str(text).unwrap_or_default();
            if v["id"] == id {
                return v;
            }
        }
    }

    pub fn eval(&mut self, expression: &str) -> Value {
        self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        )["result"]["result"]["value"]
            .clone()
    }

    /// Poll `expression` until it is true (what the page shows can take a frame or a fetch).
    pub fn wait_for(&mut self, expression: &str, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.eval(expression) != json!(true) {
            assert!(
                Instant::now() < deadline,
                "the page never showed {what}; it shows:\n{}",
                self.eval("document.body.innerText")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
