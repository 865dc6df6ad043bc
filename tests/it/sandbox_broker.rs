//! Issue 40, item 1, below Landlock ABI 9 (`crates/hookd-sandbox/src/broker.rs`): a confined
//! command connects to no pathname Unix socket made outside, wherever it is (not only in the
//! places hookd names), and to every one it made itself; the checked connection is the one
//! made, whatever the command changes meanwhile; a connection that never completes does not
//! keep `hookd exec` from ending. Each attack is performed for real: unconfined first (a
//! listener outside records the connection), then through `hookd exec`.
//!
//! Replayed from the peers' suites (the held-out replay of 2026-11-28, L3):
//! sandbox-runtime `test/sandbox/unix-socket-allowlist.test.ts` at 2484fe1c ("refuses a socket
//! outside the allowlist", "blocks unix sockets outright when no allowlist is given"),
//! `test/sandbox/integration.test.ts` at d35b813 line 143 ("should block Unix socket
//! connections with seccomp"), and Codex's
//! `codex-rs/linux-sandbox/tests/suite/managed_proxy_unix_sockets_tests.rs` at ea218f5c
//! (`AF_UNIX` refused by default).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::sandbox::{confinable, hookd, project};
use crate::sandbox_sockets::{confined, markers, settle, unconfined, Listener};
use crate::support::{stderr, stdout};

/// A listener outside the sandbox (in a directory hookd does not name), which leaves the marker
/// `outside` in `out` when it accepts.
struct Outside {
    out: tempfile::TempDir,
    socket: PathBuf,
    _elsewhere: tempfile::TempDir,
    _listener: Listener,
}

impl Outside {
    /// `python3 -c SCRIPT SOCKET ARGS…` through `hookd exec` in the project: what it printed,
    /// once the listener is seen to have accepted nothing.
    fn attacked(
        &self,
        p: &crate::support::Project,
        tmp: &std::path::Path,
        script: &str,
        args: &[&str],
    ) -> String {
        let mut all = vec![
            "exec",
            "--",
            "python3",
            "-c",
            script,
            self.socket.to_str().unwrap(),
        ];
        all.extend(args);
        let o = hookd(p, tmp, &all).output().unwrap();
        settle();
        assert_eq!(
            markers(self.out.path()),
            Vec::<String>::new(),
            "{}",
            stdout(&o)
        );
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    }

    fn listening() -> Outside {
        let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
        let elsewhere = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
        let socket = elsewhere.path().join("o.sock");
        let listener = Listener::path(&socket, out.path(), "outside");
        Outside {
            out,
            socket,
            _elsewhere: elsewhere,
            _listener: listener,
        }
    }
}

/// Landlock ABI 9 refuses these itself; below it the broker does. Either way they must fail.
#[test]
fn a_socket_made_outside_is_refused_wherever_it_is() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let out = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let elsewhere = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let home = p.home.path();
    let places: Vec<(&str, PathBuf)> = vec![
        // A directory hookd does not name (the held-out replay's `$O/other.sock`).
        ("other", elsewhere.path().join("other.sock")),
        // The home, where 1Password-style agents keep theirs under names hookd cannot know.
        ("app", home.join(".local/share/app/app.sock")),
        // The project itself: a service the user started there, before the command.
        ("in-project", p.path().join("run/db.sock")),
    ];
    let _listeners: Vec<Listener> = places
        .iter()
        .map(|(name, path)| Listener::path(path, out.path(), name))
        .collect();
    // A link in the project to the one elsewhere, and a relative spelling of the project's.
    std::os::unix::fs::symlink(&places[0].1, p.path().join("other.link")).unwrap();
    let mut targets: Vec<String> = places
        .iter()
        .map(|(_, path)| path.display().to_string())
        .collect();
    targets.push("other.link".into());
    targets.push("run/db.sock".into());

    let o = unconfined(&p, &[], &targets);
    settle();
    assert_eq!(
        stdout(&o).matches(" connected\n").count(),
        targets.len(),
        "{}",
        stdout(&o)
    );
    assert_eq!(markers(out.path()), ["app", "in-project", "other"]);
    for (name, _) in &places {
        std::fs::remove_file(out.path().join(name)).unwrap();
    }

    let o = confined(&p, &tmp, &[], &targets);
    settle();
    let expected: String = targets.iter().map(|t| format!("{t} EACCES\n")).collect();
    assert_eq!(stdout(&o), expected, "{}", stderr(&o));
    assert_eq!(markers(out.path()), Vec::<String>::new());

    // Listed by the user: that one is reached, the others still not.
    p.write_home(
        "config.yaml",
        &format!("sandbox:\n  unix_sockets: ['{}']\n", places[1].1.display()),
    );
    let o = confined(&p, &tmp, &[], &targets[..2]);
    settle();
    assert_eq!(
        stdout(&o),
        format!("{} EACCES\n{} connected\n", targets[0], targets[1]),
        "{}",
        stderr(&o)
    );
    assert_eq!(markers(out.path()), ["app"]);
}

/// What a test suite does with sockets of its own: bound from its directory (relative and
/// absolute), from a subdirectory, in its temporary directory, from a second thread, with its
/// umask, by one process
/// and reached by another, by a process that made itself non-dumpable (ssh-agent does); streams
/// and sequenced packets; datagrams refused (EACCES) since each `sendmsg` may name another
/// socket where seccomp cannot see it.
#[test]
fn the_commands_own_sockets_work_and_datagrams_are_refused() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let script = r#"
import errno, os, socket, subprocess, sys, tempfile
def roundtrip(path, kind=socket.SOCK_STREAM):
    l = socket.socket(socket.AF_UNIX, kind); l.bind(path); l.listen(1)
    c = socket.socket(socket.AF_UNIX, kind); c.connect(path)
    s, _ = l.accept(); c.sendall(b"x"); assert s.recv(1) == b"x"
    mode = oct(os.stat(path).st_mode & 0o777); os.unlink(path); return mode
os.makedirs("sub", exist_ok=True)
print("relative", roundtrip("own.sock"))
print("absolute", roundtrip(os.path.join(os.getcwd(), "own.sock")))
print("tmp", roundtrip(os.path.join(tempfile.mkdtemp(), "own.sock")))
os.chdir("sub"); print("sub", roundtrip("own.sock")); os.chdir("..")
print("seqpacket", roundtrip("seq.sock", socket.SOCK_SEQPACKET))
import threading
t = threading.Thread(target=lambda: print("thread", roundtrip("thr.sock"))); t.start(); t.join()
os.umask(0o077); print("umask", roundtrip("um.sock")); os.umask(0o022)
l = socket.socket(socket.AF_UNIX); l.bind("shared.sock"); l.listen(1)
child = 'import socket; c = socket.socket(socket.AF_UNIX); c.connect("shared.sock"); c.sendall(b"y")'
subprocess.run([sys.executable, "-c", child], check=True)
s, _ = l.accept(); print("another process", s.recv(1))
for make in (lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM),
             lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM),
             lambda: socket.socket(socket.AF_UNIX, socket.SOCK_RAW)):
    try:
        make(); print("datagram made")
    except OSError as e:
        print("datagram", errno.errorcode[e.errno])
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET); a.sendall(b"z"); print("pair", b.recv(1))
import ctypes
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0, as ssh-agent and gpg-agent do
print("non-dumpable", roundtrip("nd.sock"))
"#;
    let o = hookd(&p, &tmp, &["exec", "--", "python3", "-c", script])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&o),
        "relative 0o755\nabsolute 0o755\ntmp 0o755\nsub 0o755\nseqpacket 0o755\nthread 0o755\numask 0o700\n\
         another process b'y'\ndatagram EACCES\ndatagram EACCES\ndatagram EACCES\npair b'z'\n\
         non-dumpable 0o755\n",
        "{}",
        stderr(&o)
    );
}

/// The check and the connection are one: a second thread rewrites the address between the
/// command's own socket and one outside, and a third swaps a link between the two, while the
/// first connects again and again. Some connections reach the command's own socket (the race
/// ran); none reaches the one outside.
#[test]
fn a_connection_cannot_be_switched_after_it_was_checked() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let o = Outside::listening();
    let script = r#"
import ctypes, os, socket, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
outside = sys.argv[1].encode()
own = os.path.join(os.getcwd(), "own.sock").encode().ljust(len(outside), b"\0")
outside = outside.ljust(len(own), b"\0")
l = socket.socket(socket.AF_UNIX); l.bind(own.rstrip(b"\0")); l.listen(128)
def drain():
    while True:
        l.accept()[0].close()
threading.Thread(target=drain, daemon=True).start()
addr = ctypes.create_string_buffer(2 + len(own) + 1)
addr[0:2] = socket.AF_UNIX.to_bytes(2, "little")
addr[2:2 + len(own)] = own
stop = False
def flip():
    while not stop:
        ctypes.memmove(ctypes.addressof(addr) + 2, outside, len(outside))
        ctypes.memmove(ctypes.addressof(addr) + 2, own, len(own))
def swap():
    while not stop:
        for target in (own, outside):
            os.symlink(target.rstrip(b"\0"), b"link.new")
            os.rename(b"link.new", b"link")
threads = [threading.Thread(target=flip), threading.Thread(target=swap)]
for t in threads:
    t.start()
reached = refused = 0
for i in range(400):
    s = socket.socket(socket.AF_UNIX)
    if libc.connect(s.fileno(), addr, len(addr)) == 0:
        reached += 1
    else:
        refused += 1
    s.close()
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect("link")
        reached += 1
    except OSError:
        refused += 1
    s.close()
stop = True
for t in threads:
    t.join()
print("reached", reached > 0, "refused", refused > 0)
"#;
    assert_eq!(
        o.attacked(&p, &tmp, script, &[]),
        "reached True refused True\n"
    );
}

/// A connection pid 1 makes for the command and that never completes (a listener of the
/// command's own, its queue full, never accepting) does not outlive the command: `hookd exec`
/// ends with it, and nothing is left.
#[test]
fn a_connection_that_never_completes_does_not_hold_the_end() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let script = r#"
import os, socket, time
l = socket.socket(socket.AF_UNIX); l.bind("full.sock"); l.listen(0)
if os.fork() == 0:
    for i in range(8):
        socket.socket(socket.AF_UNIX).connect("full.sock")  # blocks once the queue is full
    os._exit(0)
time.sleep(0.5)
print("done")
"#;
    let started = Instant::now();
    let o = hookd(&p, &tmp, &["exec", "--", "python3", "-c", script])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "done\n", "{}", stderr(&o));
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

/// Attack round 14's F1: a command gave itself one more seccomp filter (so that the broker took
/// it for a command nested in a confined agent, whose TCP calls it then left to the kernel),
/// asked to connect an IPv4 socket to an IPv4 address, and a second thread swapped a Unix
/// socket onto the descriptor and an outside path into the address meanwhile: the kernel, reading
/// both again, connected to a socket outside (10 of 10 runs, with the network on). No call is
/// left to the kernel now: every one is made by the helper, on what it took and read.
#[test]
fn a_command_that_makes_itself_look_nested_reaches_nothing_outside() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    p.write_home("config.yaml", "sandbox:\n  network: true\n");
    let o = Outside::listening();
    let script = r#"
import ctypes, os, random, socket, struct, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
class F(ctypes.Structure): _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]
class P(ctypes.Structure): _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(F))]
allow = (F * 1)(F(6, 0, 0, 0x7fff0000))
assert libc.prctl(22, 2, ctypes.byref(P(1, allow)), 0, 0) == 0  # PR_SET_SECCOMP, one more filter
un = struct.pack("<H", socket.AF_UNIX) + sys.argv[1].encode() + b"\0"
inet = struct.pack("<H", socket.AF_INET) + struct.pack("!H", 1) + bytes([127, 0, 0, 1])
buf = ctypes.create_string_buffer(128)
N = 100
state = {"go": False, "unix": None, "delay": 0.0}
def swapper():
    while True:
        while not state["go"]:
            time.sleep(0)
        end = time.perf_counter() + state["delay"]
        while time.perf_counter() < end:
            pass
        os.dup2(state["unix"].fileno(), N)
        ctypes.memmove(buf, un, len(un))
        state["go"] = False
threading.Thread(target=swapper, daemon=True).start()
reached = 0
for i in range(int(sys.argv[2])):
    a, u = socket.socket(socket.AF_INET), socket.socket(socket.AF_UNIX)
    os.dup2(a.fileno(), N)
    ctypes.memset(buf, 0, 128); ctypes.memmove(buf, inet, len(inet))
    state["unix"], state["delay"], state["go"] = u, random.random() * 0.0015, True
    r = libc.connect(N, buf, 110)
    while state["go"]:
        time.sleep(0)
    if r == 0 and socket.socket(fileno=os.dup(N)).family == socket.AF_UNIX:
        reached += 1
    a.close(); u.close(); os.close(N)
print("reached", reached)
"#;
    assert_eq!(o.attacked(&p, &tmp, script, &["300"]), "reached 0\n");
}

/// Attack round 14's F2: pid 1 took a POLLERR from its listener (which the kernel says when a
/// signal, here a helper's or an orphan's SIGCHLD, interrupts its poll) for the end and stopped
/// answering: every later `connect` and `bind` waited for ever (4 of 6 runs of 8 threads
/// binding 15,000 times). A storm of orphans ending and of binds, then a connection by path:
/// it is made, and `hookd exec` ends.
#[test]
fn signals_to_pid_one_do_not_stop_the_answers() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let script = r#"
import os, socket, threading
def orphans():
    for _ in range(200):
        if os.fork() == 0:
            if os.fork() == 0:
                os._exit(0)  # an orphan of pid 1: its SIGCHLD goes there
            os._exit(0)
        os.wait()
def binds(t):
    for i in range(800):
        s = socket.socket(socket.AF_UNIX); s.bind("\0storm-%d-%d-%d" % (os.getpid(), t, i)); s.close()
orphans()
threads = [threading.Thread(target=binds, args=(t,)) for t in range(8)] + [threading.Thread(target=orphans)]
for t in threads: t.start()
for t in threads: t.join()
l = socket.socket(socket.AF_UNIX); l.bind("after.sock"); l.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect("after.sock"); print("connected after the storm")
"#;
    let c = hookd(&p, &tmp, &["exec", "--", "python3", "-c", script]);
    // Still there after a minute: it hangs (the answers stopped).
    let o = output_within(c, Duration::from_secs(60));
    assert_eq!(stdout(&o), "connected after the storm\n", "{}", stderr(&o));
}

/// `c`'s output, killed after `limit` (what it printed by then).
fn output_within(mut c: std::process::Command, limit: Duration) -> std::process::Output {
    let child = c
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(limit);
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    });
    let o = child.wait_with_output().unwrap();
    drop(watchdog);
    o
}

/// Attack round 15's F6 (`/work/scratch-r15/g7/killpool.py`): the command killed pid 1's
/// helpers as they appeared while six threads bound and connected in a loop; a helper killed
/// just as the kernel handed it a call had not yet marked itself busy, and that call was never
/// answered: every looping thread stuck, 4 of 4 runs. Pid 1 answers (EINTR) whatever call a
/// dead helper had taken, by the id in its memory: every thread ends.
#[test]
fn a_helper_killed_as_it_takes_a_call_leaves_no_call_waiting() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let script = r#"
import os, signal, socket, threading, time
stop = time.time() + 2
def helpers():
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and d != "1" and int(d) != os.getpid():
            try:
                stat = open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()
                if stat[1] == "1" and b"hookd" in open("/proc/%s/cmdline" % d, "rb").read():
                    out.append(int(d))
            except OSError:
                pass
    return out
kills = [0]
def killer():
    while time.time() < stop:
        for h in helpers():
            try:
                os.kill(h, signal.SIGKILL); kills[0] += 1
            except OSError:
                pass
        time.sleep(0.002)
def work(i):
    while time.time() < stop:
        name = "\0f6-%d-%d" % (os.getpid(), i)
        s = socket.socket(socket.AF_UNIX)
        try:
            s.bind(name); s.listen(1)
        except OSError:
            pass
        c = socket.socket(socket.AF_UNIX)
        try:
            c.connect(name)
        except OSError:
            pass
        s.close(); c.close()
workers = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(6)]
k = threading.Thread(target=killer, daemon=True)
k.start()
for t in workers: t.start()
for t in workers: t.join(8)
stuck = [i for i, t in enumerate(workers) if t.is_alive()]
print("killed", "some" if kills[0] else "none", "stuck", stuck, flush=True)
os._exit(0)
"#;
    let c = hookd(&p, &tmp, &["exec", "--", "python3", "-c", script]);
    let o = output_within(c, Duration::from_secs(60));
    assert_eq!(stdout(&o), "killed some stuck []\n", "{}", stderr(&o));
}

/// Pid 1 could not start a helper (the command's user at its process limit, its own processes
/// holding every one): the call was left in the listener and pid 1 polled it for ever (the
/// `bind` below still waiting after 40 s, and pid 1 spinning). It is refused now (EAGAIN), as a
/// `fork` at the limit is. As root the limit does not hold: the command runs as nobody.
#[test]
fn a_call_no_helper_can_take_is_refused_not_left_waiting() {
    if !confinable() {
        return;
    }
    if !nix::unistd::geteuid().is_root() {
        // Another user's limit counts all its processes on the machine: not a test's to set.
        crate::support::unavailable("root", "the process limit is set for nobody, by root");
        return;
    }
    let (p, tmp) = project();
    let script = r#"
import os, socket, time
kids = []
while True:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
s = socket.socket(socket.AF_UNIX)
try:
    s.bind("at-the-limit.sock")
    print("bound", flush=True)
except OSError as e:
    print("refused", e.errno, flush=True)
for k in kids:
    os.kill(k, 9)
"#;
    let c = hookd(&p, &tmp, &["exec", "--", "python3", "-c", script]);
    let mut limited = std::process::Command::new("prlimit");
    limited
        .arg("--nproc=60")
        .arg(c.get_program())
        .args(c.get_args());
    limited.env_clear().current_dir(p.path());
    for (k, v) in c.get_envs() {
        if let Some(v) = v {
            limited.env(k, v);
        }
    }
    let c =
        crate::places_below::as_a_plain_user(&limited, &[p.path(), p.home.path(), p.state.path()]);
    let started = Instant::now();
    let o = output_within(c, Duration::from_secs(25));
    assert_eq!(
        stdout(&o),
        format!("refused {}\n", nix::libc::EAGAIN),
        "{}",
        stderr(&o)
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}

/// Attack round 14's F3: a thread that unshared its descriptors (`unshare(CLONE_FILES)`) asked
/// to connect its socket, and pid 1 took the descriptor of that number from its process's
/// table: another socket was connected, and the thread was told it was. The thread's own table
/// is used (`PIDFD_THREAD`).
#[test]
fn a_thread_with_descriptors_of_its_own_connects_its_own_socket() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let script = r#"
import ctypes, os, socket, threading
libc = ctypes.CDLL(None, use_errno=True)
l = socket.socket(socket.AF_UNIX); l.bind("t.sock"); l.listen(4)
N = 77
def thread():
    assert libc.unshare(0x400) == 0  # CLONE_FILES: a table of its own, a copy
    mine = socket.socket(socket.AF_UNIX)
    os.dup2(mine.fileno(), N)
    r = libc.connect(N, b"\x01\x00t.sock\x00", 9)
    peer = socket.socket(fileno=os.dup(N)).getpeername()
    print("thread", r, repr(peer))
leader = socket.socket(socket.AF_UNIX)
os.dup2(leader.fileno(), N)  # the same number in the process's table: a socket left alone
t = threading.Thread(target=thread); t.start(); t.join()
try:
    print("leader", repr(socket.socket(fileno=os.dup(N)).getpeername()))
except OSError as e:
    print("leader", e.errno)
"#;
    let o = hookd(&p, &tmp, &["exec", "--", "python3", "-c", script])
        .output()
        .unwrap();
    let unconnected = libc_enotconn();
    assert_eq!(
        stdout(&o),
        format!("thread 0 't.sock'\nleader {unconnected}\n"),
        "{}",
        stderr(&o)
    );
}

fn libc_enotconn() -> i32 {
    nix::libc::ENOTCONN
}

/// The library's `hookd::sandbox::command` starts the command by a `fork` of pid 1, not by
/// `vfork.rs` (its caller may change the `Command` after), and the listener is handed to pid 1
/// over a socket pair: there too a socket made outside is refused and the command's own works.
#[test]
fn a_command_the_library_starts_is_brokered_too() {
    if !confinable() {
        return;
    }
    let dir = tempfile::tempdir_in(crate::support::outside_tmp()).unwrap();
    let o = Outside::listening();
    let mut policy = hookd::config::SandboxPolicy::default();
    policy.enabled = true;
    let c = hookd::sandbox::prepare(&policy, dir.path()).unwrap();
    let script = r#"
import errno, socket, sys
for path in (sys.argv[1], "own.sock"):
    if path == "own.sock":
        l = socket.socket(socket.AF_UNIX); l.bind(path); l.listen(1)
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path); print("connected")
    except OSError as e:
        print(errno.errorcode[e.errno])
"#;
    let argv = ["python3", "-c", script, o.socket.to_str().unwrap()].map(String::from);
    let out = hookd::sandbox::command(std::sync::Arc::new(c), &argv, dir.path(), None, [])
        .output()
        .unwrap();
    settle();
    assert_eq!(stdout(&out), "EACCES\nconnected\n", "{}", stderr(&out));
    assert_eq!(markers(o.out.path()), Vec::<String>::new());
}

/// The helper reads the caller's thread group and umask from `/proc/TID/status`, whose first
/// line is the process's name, which the process chooses: a name spelling later lines
/// (`\nUmask:\t0000`) does not change what is read (the kernel writes a newline in a name as
/// `\n`), so its socket is made with its real umask.
#[test]
fn a_process_name_cannot_spell_its_status() {
    if !confinable() {
        return;
    }
    let (p, tmp) = project();
    let script = r#"
import ctypes, os, socket
ctypes.CDLL(None).prctl(15, b"x\nUmask:\t0000\nTgid:\t1", 0, 0, 0)  # PR_SET_NAME
os.umask(0o077)
l = socket.socket(socket.AF_UNIX); l.bind("named.sock")
print(oct(os.stat("named.sock").st_mode & 0o777))
"#;
    let o = hookd(&p, &tmp, &["exec", "--", "python3", "-c", script])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "0o700\n", "{}", stderr(&o));
}

/// What `hookd exec -- true` starts, counted by `strace`: the sandbox's pid 1 and the command,
/// nothing else. The namespaces' probe (a child of its own in new namespaces, waited for) is
/// for `hookd check` and the library's callers that do not start at once, and a broker helper
/// is started for a call, not for the command's end: each came back once unnoticed (533d42e
/// made every command run the probe again; pid 1 took the listener's hang-up at the command's
/// exit for a call, and started a helper to kill it at once), 0.2 to 0.5 ms of every command.
/// Five runs: the hang-up raced the command's reaping, and a helper was started in some only.
#[test]
fn a_confined_command_starts_its_pid_one_and_itself_only() {
    if !confinable() {
        return;
    }
    if !std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        crate::support::unavailable("strace", "strace is not installed here");
        return;
    }
    let (p, tmp) = project();
    for run in 0..5 {
        let log = p.state.path().join(format!("clones-{run}.log"));
        let exec = hookd(&p, &tmp, &["exec", "--", "true"]);
        let mut c = std::process::Command::new("strace");
        c.args(["-f", "-qq", "-e", "trace=clone,clone3,fork,vfork", "-o"])
            .arg(&log)
            .arg(exec.get_program())
            .args(exec.get_args())
            .env_clear()
            .envs(exec.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .current_dir(exec.get_current_dir().unwrap());
        let out = c.output().unwrap();
        assert!(out.status.success(), "run {run}: {}", stderr(&out));
        let trace = std::fs::read_to_string(&log).unwrap();
        // The calls that made a process (a thread is not one), each once: strace writes a call
        // interrupted by another process's line again as "resumed".
        let started: Vec<&str> = (trace.lines())
            .filter(|l| {
                ["clone(", "clone3(", "fork(", "vfork("]
                    .iter()
                    .any(|c| l.contains(c))
            })
            .filter(|l| !l.contains("resumed>") && !l.contains("CLONE_THREAD"))
            .collect();
        assert_eq!(
            started.len(),
            2,
            "run {run}: hookd exec -- true started more than its pid 1 and the command:\n{trace}"
        );
    }
}
