#!/usr/bin/env bash
# hookd's main job on the shipped example configuration (config/example): validate it, then
# play one short agent session through `hookd dispatch`, showing each Outcome and the events.
# Every command is printed exactly as it runs (from the repository root).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
state=$(mktemp -d)
export HOOKD_STATE_DIR="$state"   # a fresh session state for the demo
events="$state/events.jsonl"
trap 'rm -rf "$state"' EXIT
session="demo-$$"

# Bold command lines on a terminal only; plain text in a log or a pipe.
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s$ %s%s\n' "$bold" "$*" "$plain"; }

step target/release/hookd check --config-dir config/example
target/release/hookd check --config-dir config/example

run() {
  local point=$1 ctx=$2
  step "echo '$ctx' | target/release/hookd dispatch $point --config-dir config/example --session-id $session --events $events --pretty"
  echo "$ctx" | target/release/hookd dispatch "$point" --config-dir config/example --session-id "$session" --events "$events" --pretty
}

run pre_session '{"prompt": "fix the failing test"}'
for _ in 1 2 3; do run pre_stream '{}'; done
run post_tool '{"tool": {"name": "Bash", "input": {"command": "cargo test"}, "failed": true}}'
run post_session '{}'

step "cat $events   # what a dashboard sees"
cat "$events"
