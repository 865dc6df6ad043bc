#!/usr/bin/env bash
# hookd's main job on the shipped example configuration (config/example): validate it, then
# play one short agent session through `hookd dispatch`, showing each Outcome and the events.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
hookd="$PWD/target/release/hookd"
cfg="$PWD/config/example"
state=$(mktemp -d)
export HOOKD_STATE_DIR="$state"   # a fresh session state for the demo
events="$state/events.jsonl"
trap 'rm -rf "$state"' EXIT
session="demo-$$"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }

step hookd check --config-dir config/example
"$hookd" check --config-dir "$cfg"

run() {
  local point=$1 ctx=$2
  step "echo '$ctx' | hookd dispatch $point --session-id $session --events events.jsonl"
  echo "$ctx" | "$hookd" dispatch "$point" --config-dir "$cfg" --session-id "$session" --events "$events"
}

run pre_session '{"prompt": "fix the failing test"}'
for _ in 1 2 3; do run pre_stream '{}'; done
run post_tool '{"tool": {"name": "Bash", "input": {"command": "cargo test"}, "failed": true}}'
run post_session '{}'

step "cat events.jsonl   # what a dashboard sees"
cat "$events"
