#!/usr/bin/env bash
# Can the dashboard keep up? A daemon, headless Chromium on its page, and dispatches producing
# EVENTS_PER_SECOND events for SECONDS (examples/dashbench.rs reports what the page received and
# how quickly it answered). Needs chromium (apt-get install chromium).
# Usage: scripts/dashboard-bench.sh [EVENTS_PER_SECOND] [SECONDS] [SESSIONS]   (defaults 1000 60 20)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin hookd --example dashbench
work=$(mktemp -d)
sock="$work/hookd.sock"
HOME="$work" target/release/hookd serve --config-dir benches/load --socket "$sock" \
  --listen 127.0.0.1:0 --ring 4096 2>"$work/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do grep -q '^dashboard: ' "$work/serve.log" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^dashboard: //p' "$work/serve.log")
[ -n "$url" ] || { cat "$work/serve.log" >&2; exit 1; }
target/release/examples/dashbench "$sock" "$url" "${1:-1000}" "${2:-60}" "${3:-20}"
