#!/usr/bin/env bash
# Cost of egress by domain (issue 43): a confined command's connections through hookd's proxy
# (`sandbox.network: {allow: [localhost]}`) against the same command with `network: true`
# (direct), in one hyperfine run each: the proxy's start (`hookd exec -- true`, list against
# `network: false`), a small request, and a 100 MB download from a loopback server outside the
# sandbox. Results: docs/benchmarks.md.
# Usage: scripts/bench-egress.sh   (needs hyperfine, curl, python3)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (apt-get install hyperfine)" >&2; exit 1; }
[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet
bin="${BIN:-$PWD/target/release/hookd}"
work=$(mktemp -d "$PWD/target/bench-egress.XXXXXX")
server=""
trap '[ -n "$server" ] && kill "$server"; rm -rf "$work"' EXIT
mkdir -p "$work/off/.infer" "$work/on/.infer" "$work/list/.infer" "$work/proj" "$work/www"
printf 'sandbox: {network: false}\n' > "$work/off/.infer/config.yaml"
printf 'sandbox: {network: true}\n' > "$work/on/.infer/config.yaml"
printf 'sandbox: {network: {allow: [localhost]}}\n' > "$work/list/.infer/config.yaml"
head -c "${SIZE:-100000000}" /dev/zero > "$work/www/big"
echo small > "$work/www/small"
git -C "$work/proj" init -q
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/www" >/dev/null 2>&1 &
server=$!
sleep 1
cd "$work/proj"
curl="curl -sS --noproxy '' -o /dev/null"
run() { hyperfine -N --warmup 3 --runs "$1" --export-json "$work/$2.json" "${@:3}" >/dev/null; python3 - "$work/$2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
base = r[0]["median"]
for x in r:
    print(f'{x["command"][:90]:90}  median {x["median"] * 1000:8.2f} ms  ({x["median"] / base:.3f}x the first)')
PY
}
[ -n "${ONLY_INTERLEAVED:-}" ] || {
echo "== the proxy's start"
run "${RUNS:-100}" start \
  "env HOME=$work/off $bin exec -- true" \
  "env HOME=$work/list $bin exec -- true"
echo "== a small request"
run "${RUNS:-100}" small \
  "env HOME=$work/on $bin exec -- $curl http://localhost:$port/small" \
  "env HOME=$work/list $bin exec -- $curl http://localhost:$port/small"
echo "== ${SIZE:-100000000} bytes"
run "${BIG_RUNS:-15}" big \
  "$curl http://localhost:$port/big" \
  "env HOME=$work/on $bin exec -- $curl http://localhost:$port/big" \
  "env HOME=$work/list $bin exec -- $curl http://localhost:$port/big"
}
echo "== interleaved (each iteration runs every command once, in turn; medians)"
python3 - "${ROUNDS:-40}" \
  "env HOME=$work/off $bin exec -- true" \
  "env HOME=$work/list $bin exec -- true" \
  "env HOME=$work/on $bin exec -- $curl http://localhost:$port/big" \
  "env HOME=$work/list $bin exec -- $curl http://localhost:$port/big" <<'PY'
import shlex, statistics, subprocess, sys, time
rounds, cmds = int(sys.argv[1]), sys.argv[2:]
times = {c: [] for c in cmds}
for _ in range(rounds):
    for c in cmds:
        t = time.perf_counter()
        subprocess.run(shlex.split(c), check=True)
        times[c].append(time.perf_counter() - t)
for a, b in ((cmds[0], cmds[1]), (cmds[2], cmds[3])):
    ma, mb = statistics.median(times[a]), statistics.median(times[b])
    print(f"{a[-60:]:60} {ma*1000:8.2f} ms")
    print(f"{b[-60:]:60} {mb*1000:8.2f} ms  ({mb-ma:+.2f} s; {mb/ma:.3f}x)".replace(f"{mb-ma:+.2f} s", f"{(mb-ma)*1000:+.2f} ms"))
PY
