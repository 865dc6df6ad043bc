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
bin="$PWD/target/release/hookd"
work=$(mktemp -d "$PWD/target/bench-egress.XXXXXX")
server=""
trap '[ -n "$server" ] && kill "$server"; rm -rf "$work"' EXIT
mkdir -p "$work/off/.infer" "$work/on/.infer" "$work/list/.infer" "$work/proj" "$work/www"
printf 'sandbox: {network: false}\n' > "$work/off/.infer/config.yaml"
printf 'sandbox: {network: true}\n' > "$work/on/.infer/config.yaml"
printf 'sandbox: {network: {allow: [localhost]}}\n' > "$work/list/.infer/config.yaml"
head -c 100000000 /dev/zero > "$work/www/big"
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
echo "== the proxy's start"
run "${RUNS:-100}" start \
  "env HOME=$work/off $bin exec -- true" \
  "env HOME=$work/list $bin exec -- true"
echo "== a small request"
run "${RUNS:-100}" small \
  "env HOME=$work/on $bin exec -- $curl http://localhost:$port/small" \
  "env HOME=$work/list $bin exec -- $curl http://localhost:$port/small"
echo "== 100 MB"
run "${BIG_RUNS:-15}" big \
  "$curl http://localhost:$port/big" \
  "env HOME=$work/on $bin exec -- $curl http://localhost:$port/big" \
  "env HOME=$work/list $bin exec -- $curl http://localhost:$port/big"
