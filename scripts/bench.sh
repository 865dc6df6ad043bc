#!/usr/bin/env bash
# Whole-process costs of `hookd dispatch`, measured with hyperfine against baselines in the
# same run (the machine is shared and noisy: compare ratios and medians, not absolutes).
# Usage: scripts/bench.sh [extra hyperfine args]   (needs hyperfine: apt-get install hyperfine)
# With HOOKD_BASELINE_BIN=/path/to/an/older/hookd, every hookd command is also run with that
# binary in the same hyperfine run, so a change is judged by a ratio measured side by side.
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

# Ten hooks at post_session that each run `true`: the per-command cost is the slope.
ten="$work/ten"; mkdir -p "$ten"
cp "$one/config.yaml" "$ten/"
{ echo "enabled: true"; echo "hooks:"; for i in $(seq 0 9); do echo "  - {name: t$i, hook: post_session, command: 'true'}"; done; } > "$ten/hooks.yaml"

export HOOKD_STATE_DIR="$work/state"
medians() { # print median, ratio to the first command, and the command, from hyperfine's JSON
  python3 - "$1" <<'PY'
import json, os, statistics, sys
rs = json.load(open(sys.argv[1]))["results"]
base = statistics.median(rs[0]["times"])
old = os.environ.get("HOOKD_BASELINE_BIN") or None
print(f"{'median ms':>10} {'x first':>10}  command")
prev = None
for r in rs:
    m = statistics.median(r["times"])
    line = f"{m*1000:10.3f} {m/base:10.2f}  {r['command']}"
    if old and old in r["command"] and prev:
        line += f"   (this build / baseline: {prev / m:.3f})"
    print(line)
    prev = m
PY
}
base="${HOOKD_BASELINE_BIN:-}"
run() {
  local name=$1; shift
  local cmds=("$@")
  if [ -n "$base" ]; then # each hookd command, then the same with the baseline binary
    cmds=(); for c in "$@"; do cmds+=("$c"); [[ $c == *"$bin"* ]] && cmds+=("${c//$bin/$base}"); done
  fi
  hyperfine -N --warmup 50 --runs 500 --export-json "$work/$name.json" "${extra[@]}" "${cmds[@]}" >/dev/null 2>&1
  medians "$work/$name.json"
}
extra=("$@")
# HOOKD_BENCH_ONLY=model,lefthook runs only those sections (names below).
want() { [ -z "${HOOKD_BENCH_ONLY:-}" ] || [[ ",$HOOKD_BENCH_ONLY," == *",$1,"* ]]; }

if want dispatch; then
echo "## dispatch with nothing due (50 hooks, 20 reminders elsewhere, 100 allow entries)"
run nothing-due /bin/true "$bin dispatch post_queue_drain --config-dir $busy"
echo
echo "## command hooks: per-command overhead = (ten hooks - no hook) / 10 - spawning true"
run hooks /bin/true "$bin dispatch post_queue_drain --config-dir $ten" "$bin dispatch post_session --config-dir $one" "$bin dispatch post_session --config-dir $ten"
python3 - "$work/hooks.json" <<'PY'
import json, statistics, sys
rs = json.load(open(sys.argv[1]))["results"]
m = [statistics.median(r["times"]) * 1000 for r in rs]
if len(m) == 7:  # with a baseline binary: 0 true, then (new, baseline) pairs
    for label, (n1, n10) in (("this build", (m[1], m[5])), ("baseline", (m[2], m[6]))):
        print(f"{label}: per command {(n10 - n1) / 10:.3f} ms; overhead over spawning true: {(n10 - n1) / 10 - m[0]:.3f} ms")
    sys.exit(0)
per_hook = (m[3] - m[1]) / 10
print(f"per command through hookd: {per_hook:.3f} ms; spawning true directly: {m[0]:.3f} ms; overhead: {per_hook - m[0]:.3f} ms")
PY
fi

if want adapter; then
echo
echo "## hookd adapter claude-code, nothing due, vs a python3 hook (each fed a PostToolUse payload)"
payload="$PWD/tests/fixtures/claude-code/post_tool_use.json"
empty="$work/empty"; mkdir -p "$empty"
# 50 hooks and 20 reminders at points Claude Code never reaches, and the 100-entry allow-list.
elsewhere="$work/elsewhere"; mkdir -p "$elsewhere"
cp "$busy/config.yaml" "$elsewhere/"
{ echo "enabled: true"; echo "hooks:"; for i in $(seq 0 49); do echo "  - {name: h$i, hook: pre_queue_drain, command: 'tool$i build'}"; done; } > "$elsewhere/hooks.yaml"
{ echo "enabled: true"; echo "reminders:"; for i in $(seq 0 19); do echo "  - {name: r$i, hook: pre_stream, text: t$i}"; done; } > "$elsewhere/reminders.yaml"
run adapter \
  "sh -c 'python3 -c pass < $payload'" \
  "sh -c '$bin adapter claude-code --config-dir $empty < $payload'" \
  "sh -c '$bin adapter claude-code --config-dir $elsewhere < $payload'"
fi

if want model; then
echo
echo "## a model's compound command through the adapter (gate_shell_tools): 100 allow entries vs 1"
# The command's three parts are admitted by the last three of 100 entries (the worst place),
# or by one entry of a one-entry list.
pretool="$work/pretool.json"
printf '{"session_id":"b","hook_event_name":"PreToolUse","tool_name":"Bash","cwd":"%s","tool_input":{"command":"cd web && cargo test 2>&1 | tail -50"}}\n' "$work" > "$pretool"
short="$work/short"; mkdir -p "$short"
printf "tools: {bash: {mode: {all: {allow: ['^(cd [a-z]+|cargo test|tail -[0-9]+)\$']}}}}\n" > "$short/config.yaml"
long="$work/long"; mkdir -p "$long"
{
  echo "tools:"; echo "  bash:"; echo "    mode:"; echo "      all:"; echo "        allow:"
  for i in $(seq 1 97); do echo "          - '^tool$i (build|test)( --[a-z-]+)*\$'"; done
  echo "          - '^cd [a-z]+\$'"; echo "          - '^cargo test\$'"; echo "          - '^tail -[0-9]+\$'"
} > "$long/config.yaml"
for d in "$short" "$long"; do # both must admit it, or the comparison means nothing
  out=$("$bin" adapter claude-code --gate-shell-tools --config-dir "$d" < "$pretool")
  [ "$out" = "{}" ] || { echo "the model command was not admitted with $d: $out" >&2; exit 1; }
done
run model \
  "sh -c '$bin adapter claude-code --gate-shell-tools --config-dir $short < $pretool'" \
  "sh -c '$bin adapter claude-code --gate-shell-tools --config-dir $long < $pretool'"
python3 - "$work/model.json" <<'PY'
import json, statistics, sys
rs = json.load(open(sys.argv[1]))["results"]
m = [statistics.median(r["times"]) * 1000 for r in rs]
if len(m) == 4:  # with a baseline binary: (new, baseline) for 1 entry, then for 100
    print(f"100 entries cost {m[2] - m[0]:.3f} ms over 1 entry, baseline {m[3] - m[1]:.3f} ms (target: at most 1 ms)")
else:
    print(f"100 entries cost {m[1] - m[0]:.3f} ms over 1 entry (target: at most 1 ms)")
PY
fi

if want lefthook; then
echo
echo "## yardstick: lefthook running one \`true\` hook, vs hookd dispatch running one"
# LEFTHOOK_BIN=/path/to/lefthook, or npm installs the npm package lefthook into the work dir.
lefthook="${LEFTHOOK_BIN:-}"
if [ -z "$lefthook" ] && command -v npm >/dev/null; then
  (cd "$work" && npm install --no-save --no-audit --no-fund lefthook >/dev/null 2>&1) || true
  lefthook=$(find "$work/node_modules" -path '*/bin/lefthook' -type f 2>/dev/null | head -n 1)
fi
if [ -z "$lefthook" ]; then
  echo "lefthook not available (set LEFTHOOK_BIN, or install npm): skipped"
else
  lh="$work/lh"; mkdir -p "$lh"; git -C "$lh" init -q
  printf "bench:\n  commands:\n    t:\n      run: 'true'\n" > "$lh/lefthook.yml"
  (cd "$lh" && "$lefthook" run bench --no-auto-install >/dev/null 2>&1) || { echo "lefthook run failed" >&2; exit 1; }
  run lefthook \
    "sh -c 'cd $lh && $lefthook run bench --no-auto-install'" \
    "sh -c 'cd $lh && $bin dispatch post_session --config-dir $one'"
fi
fi
