#!/usr/bin/env bash
# Whole-process costs of `hookd dispatch`, measured with hyperfine against baselines in the
# same run (the machine is shared and noisy: compare ratios and medians, not absolutes).
# Usage: scripts/bench.sh [extra hyperfine args]   (needs hyperfine: apt-get install hyperfine)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (apt-get install hyperfine)" >&2; exit 1; }
cargo build --release --quiet
bin="$PWD/target/release/hookd"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 50 hooks and 20 reminders at points other than post_queue_drain; a 100-entry allow-list.
busy="$work/busy"; mkdir -p "$busy"
{
  echo "tools:"; echo "  bash:"; echo "    mode:"; echo "      all:"; echo "        allow:"
  echo "          - '^true\$'"
  for i in $(seq 1 99); do echo "          - '^tool$i (build|test)( --[a-z-]+)*\$'"; done
} > "$busy/config.yaml"
{
  echo "enabled: true"; echo "hooks:"
  pts=(pre_session post_stream pre_tool post_tool post_session)
  for i in $(seq 0 49); do echo "  - {name: h$i, hook: ${pts[$((i % 5))]}, command: 'tool$i build'}"; done
} > "$busy/hooks.yaml"
{
  echo "enabled: true"; echo "reminders:"
  for i in $(seq 0 19); do echo "  - {name: r$i, trigger: on_failure, text: t$i}"; done
} > "$busy/reminders.yaml"

# One hook at post_session that runs `true`.
one="$work/one"; mkdir -p "$one"
printf "tools: {bash: {mode: {all: {allow: ['^true\$']}}}}\n" > "$one/config.yaml"
printf "enabled: true\nhooks: [{name: t, hook: post_session, command: 'true'}]\n" > "$one/hooks.yaml"

export HOOKD_STATE_DIR="$work/state"
echo "## dispatch with nothing due (50 hooks, 20 reminders elsewhere) vs /bin/true"
hyperfine -N --warmup 50 --runs 500 "$@" \
  "/bin/true" \
  "$bin dispatch post_queue_drain --config-dir $busy" \
  --export-markdown "$work/nothing-due.md"
echo
echo "## one \`true\` hook through hookd vs spawning true directly"
hyperfine -N --warmup 50 --runs 500 "$@" \
  "/bin/true" \
  "$bin dispatch post_queue_drain --config-dir $one" \
  "$bin dispatch post_session --config-dir $one" \
  --export-markdown "$work/one-hook.md"
