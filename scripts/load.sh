#!/usr/bin/env bash
# Load the daemon: round trip, throughput, fan-out to SSE subscribers (examples/loadgen.rs).
# Usage: scripts/load.sh [SUBSCRIBERS] [EVENTS_PER_SECOND] [SECONDS]   (defaults 100 5000 5)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin hookd --example loadgen
work=$(mktemp -d)
sock="$work/hookd.sock"
target/release/hookd serve --config-dir benches/load --socket "$sock" 2>"$work/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
target/release/examples/loadgen "$sock" "$@"
