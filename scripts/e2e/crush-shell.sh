#!/usr/bin/env bash
# Opt-in end-to-end test: the sandbox's rewrite of Crush's bash calls, run by the interpreter
# Crush runs them in (mvdan.cc/sh; scripts/e2e/crush_shell/main.go stands in for Crush's
# internal/shell, which keeps each call's final directory for the next). Needs Go and
# mvdan.cc/sh (Debian: golang-go golang-mvdan-sh-dev; else `go` fetches the module).
# Usage: scripts/e2e/crush-shell.sh; HOOKD=/path/to/hookd skips the release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
if [ -n "${HOOKD:-}" ]; then
  hookd=$HOOKD
else
  cargo build --release --quiet
  hookd="$PWD/target/release/hookd"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -d /usr/share/gocode/src/mvdan.cc/sh ]; then
  (cd scripts/e2e/crush_shell && GO111MODULE=off GOPATH=/usr/share/gocode go build -o "$work/crush_shell" main.go)
else
  (cd "$work" && cp "$root/scripts/e2e/crush_shell/main.go" . && go mod init crush_shell >/dev/null 2>&1 \
    && go get mvdan.cc/sh/v3@v3.13.1 >/dev/null 2>&1 && go build -o crush_shell .)
fi
if ! "$hookd" exec -- true 2>/dev/null; then
  echo "skipped: this kernel cannot confine (hookd check says why)"
  exit 0
fi

export HOME="$work/home" TMPDIR="$work/tmp" HOOKD_STATE_DIR="$work/state" HOOKD_TRUST_PROJECT=1
mkdir -p "$HOME/.infer" "$TMPDIR" "$work/project"
printf 'sandbox: {enabled: true}\n' > "$HOME/.infer/config.yaml"
project=$(cd "$work/project" && pwd -P)
cd "$project"
git init -q . && git config user.email e2e@example.com && git config user.name e2e
printf 'test:\n\t@echo "make-test-output-$$((6*7))"\n' > Makefile

rewrite() {  # Crush's PreToolUse payload for a bash call of $1, through hookd's Crush adapter
  python3 -c 'import json,sys; print(json.dumps({"event": "PreToolUse", "cwd": sys.argv[1], "session_id": "c", "tool_name": "bash", "tool_input": {"command": sys.argv[2]}}))' "$project" "$1" \
    | "$hookd" adapter crush --no-daemon \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["updated_input"]["command"])'
}
commands=(
  "make test"
  "git add -A && git commit -qm x && git log --format=%s"
  "mkdir -p sub && cd sub"
  "pwd"
  "exit 3"
  "echo pwned > $HOME/escaped"
  "trap - EXIT; echo $HOME >&3; cd $HOME"
)
rewrites=()
for c in "${commands[@]}"; do rewrites+=("$(rewrite "$c")"); done
"$work/crush_shell" "$project" "${rewrites[@]}" >"$work/out" 2>"$work/err" || true
fail() { echo "FAIL: $*"; echo "-- out"; cat "$work/out"; echo "-- err"; cat "$work/err"; exit 1; }
expected="make-test-output-42
status=0 cwd=$project
x
status=0 cwd=$project
status=0 cwd=$project/sub
$project/sub
status=0 cwd=$project/sub
status=3 cwd=$project/sub
status=1 cwd=$project/sub
status=0 cwd=$project/sub"
[ "$(cat "$work/out")" = "$expected" ] || fail "not the expected outputs, statuses and directories"
grep -qE "$HOME/escaped: (Permission denied|Read-only file system)" "$work/err" || fail "the write outside the project was not refused"
grep -q "hookd: the command ended in $HOME, which is not a directory inside the project" "$work/err" \
  || fail "the forged directory was not refused"
[ -e "$HOME/escaped" ] && fail "the confined command wrote the home directory"
echo "ok: output, git commit, the directory from one call to the next, exit 3, the refused write and the refused directory, in mvdan/sh"
