#!/usr/bin/env bash
# The daemon's memory under large hook outputs and stalled subscribers (issue 29): a daemon with
# --events, N dispatches (default 1200) whose post_session hook prints 65 KB, five SSE
# subscribers that connect and never read, then one that resumes after event 20 and must get
# every later event in order. Prints resident memory before, after the load and after the resume.
# With HOOKD_BASELINE_BIN=/path/to/other/hookd the same load runs against it too, in the same run.
# Extra arguments go to `hookd serve` (e.g. --ring-bytes 8M). Results: docs/benchmarks.md.
# Usage: [HOOKD_BASELINE_BIN=…] [N=1200] scripts/bench-memory.sh [SERVE ARGS…]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin hookd
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/proj/.infer" "$work/home"
head -c 66560 /dev/zero | tr '\0' 'x' > "$work/proj/big.txt"
printf "tools: {bash: {mode: {all: {allow: ['^cat big.txt\$']}}}}\n" > "$work/proj/.infer/config.yaml"
printf "enabled: true\nhooks:\n  - {name: big, hook: post_session, command: 'cat big.txt'}\n" > "$work/proj/.infer/hooks.yaml"
run() {
  rm -rf "$work/state" "$work"/events.jsonl*
  python3 - "$1" "$work" "${N:-1200}" "${@:2}" <<'PY'
import json, os, socket, subprocess, sys, threading, time
binary, work, n, extra = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
sock = f"{work}/hookd.sock"
env = {"PATH": os.environ["PATH"], "HOME": f"{work}/home", "HOOKD_STATE_DIR": f"{work}/state",
       "HOOKD_TRUST_PROJECT": "1"}
d = subprocess.Popen([binary, "serve", "--socket", sock, "--listen", "127.0.0.1:0", "--token", "t",
                      "--events", f"{work}/events.jsonl"] + extra,
                     cwd=f"{work}/proj", env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
port = int(d.stderr.readline().decode().strip().rsplit(":", 1)[1])
threading.Thread(target=lambda: [None for _ in d.stderr], daemon=True).start()
def rss():
    return next(int(l.split()[1]) for l in open(f"/proc/{d.pid}/status") if l.startswith("VmRSS")) / 1024
def dispatch(i):
    s = socket.socket(socket.AF_UNIX); s.connect(sock)
    body = json.dumps({"point": "post_session", "context": {"session_id": f"s{i % 7}"}})
    s.sendall(f"POST /v1/dispatch HTTP/1.1\r\nHost: hookd\r\nContent-Type: application/json\r\n"
              f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}".encode())
    answer = b""
    while (c := s.recv(65536)):
        answer += c
    assert b" 200 " in answer[:20], answer[:200]
def subscribe(last=None):
    s = socket.create_connection(("127.0.0.1", port))
    h = f"Last-Event-ID: {last}\r\n" if last is not None else ""
    s.sendall(f"GET /v1/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer t\r\n{h}\r\n".encode())
    return s
for i in range(10):
    dispatch(i)
time.sleep(0.5)
before = rss()
stalled = [subscribe() for _ in range(5)]
started = time.time()
workers = [threading.Thread(target=lambda k=k: [dispatch(i) for i in range(10 + k, n + 10, 8)]) for k in range(8)]
[w.start() for w in workers]; [w.join() for w in workers]
took = time.time() - started
time.sleep(1)
loaded = rss()
newest = max(json.loads(l)["seq"] for f in sorted(os.listdir(work)) if f.startswith("events.jsonl")
             for l in open(f"{work}/{f}"))
s = subscribe(20); s.settimeout(10)
buf, ids, missed = b"", [], 0
while not ids or ids[-1] < newest:
    try:
        c = s.recv(1 << 20)
    except socket.timeout:
        break
    if not c:
        break
    buf += c
    while b"\n\n" in buf:
        frame, buf = buf.split(b"\n\n", 1)
        for l in frame.split(b"\n"):
            if l.startswith(b"id: "):
                ids.append(int(l[4:]))
            missed += l.startswith(b"event: missed")
resumed = rss()
in_order = ids == list(range(21, newest + 1))
print(f"{binary}: resident {before:.0f} MB before, {loaded:.0f} MB after {n} dispatches "
      f"(+{loaded - before:.0f} MB, {took:.1f} s), {resumed:.0f} MB after the resume (+{resumed - before:.0f} MB); "
      f"resume from 20 got {len(ids)} of {newest - 20} events, {missed} missed notices, in order: {in_order}")
d.terminate(); d.wait()
PY
}
run "$PWD/target/release/hookd" "$@"
if [ -n "${HOOKD_BASELINE_BIN:-}" ]; then
  run "$HOOKD_BASELINE_BIN" "$@"
fi
