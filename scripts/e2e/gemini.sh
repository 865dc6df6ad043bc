#!/usr/bin/env bash
# Opt-in end-to-end test: the real Gemini CLI (from npm) runs the model's shell calls confined by
# hookd's sandbox, against a scripted Gemini API on 127.0.0.1 (scripts/e2e/fake_gemini.py). Not
# run by CI (a download of about 200 MB). Usage: scripts/e2e/gemini.sh [gemini-cli version]
# GEMINI=/path/to/gemini uses an installed one; HOOKD=/path/to/hookd skips the release build.
set -euo pipefail
# The places' variables of the machine running this (a CI image's TF_CLI_CONFIG_FILE): a daemon
# started with `env -i` below would refuse an agent that has them (it would not hide their
# stores), as it must. The scenarios set what they need.
unset CLOUDSDK_CONFIG AZURE_CONFIG_DIR GRADLE_USER_HOME NPM_CONFIG_USERCONFIG HF_HOME \
  PASSWORD_STORE_DIR KAGGLE_CONFIG_DIR PULUMI_HOME TF_CLI_CONFIG_FILE RCLONE_CONFIG \
  SOPS_AGE_KEY_FILE GOOGLE_APPLICATION_CREDENTIALS KUBECONFIG DOCKER_CONFIG GNUPGHOME NETRC \
  GH_CONFIG_DIR AWS_SHARED_CREDENTIALS_FILE AWS_CONFIG_FILE CODEX_HOME
cd "$(dirname "$0")/../.."
root=$PWD
version=${1:-0.61.0}
if [ -n "${HOOKD:-}" ]; then
  hookd=$HOOKD
else
  hookd=$(scripts/build-static.sh)   # the shipped binary: statically linked
fi
work=$(mktemp -d)
# Gemini CLI takes system settings only from directories root alone can write (not /tmp).
mkdir -p target; etc=$(mktemp -d "$PWD/target/e2e-etc.XXXXXX"); chmod 755 "$etc"
server_pid=""; daemon_pid=""; runtime_ours=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null
  [ -n "$runtime_ours" ] && rm -rf "$runtime_ours"
  rm -rf "$work" "$etc"
}
trap cleanup EXIT
# The temporary directory is writable in the sandbox: keep the home and hookd's state out of it.
mkdir -p "$work/tmp" "$work/home/.gemini" "$work/home/.infer"

if [ -n "${GEMINI:-}" ]; then
  gemini=$GEMINI
else
  echo "== installing @google/gemini-cli@$version"
  npm install --silent --no-audit --no-fund --prefix "$work/npm" "@google/gemini-cli@$version" >/dev/null
  gemini="$work/npm/node_modules/.bin/gemini"
fi
echo "gemini $("$gemini" --version)"

if ! "$hookd" exec -- true 2>/dev/null; then
  echo "skipped: this kernel cannot confine (hookd check says why)"
  exit 0
fi

FAKE_TOOL_COMMAND_FILE="$work/commands" python3 scripts/e2e/fake_gemini.py --port-file "$work/port" \
  --seconds 600 --dump "$work/requests.jsonl" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")

project="$work/project"; mkdir -p "$project"
cd "$project"
git init -q .
git config user.email e2e@example.com
git config user.name e2e
printf 'test:\n\t@echo "make-test-output-$$((6*7))"\nescape:\n\techo pwned > %s/escaped\n' "$work/home" > Makefile
HOME="$work/home" "$hookd" install gemini >/dev/null 2>&1
# Gemini CLI offline: an API key it never checks, and the project trusted (else it ignores the
# project's settings, hooks included).
printf '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"disableAutoUpdate": true}, "privacy": {"usageStatisticsEnabled": false}}\n' \
  > "$work/home/.gemini/settings.json"
printf '{"%s": "TRUST_FOLDER"}\n' "$project" > "$work/home/.gemini/trustedFolders.json"
cat > "$work/home/.infer/config.yaml" <<'YAML'
sandbox: {enabled: true}
tools: {bash: {mode: {all: {allow: ['^make test$', '^make escape$', '^git add -A$', '^git commit -m x$', '^pwd$', '^echo in-dir-path$']}}}}
YAML
printf 'enabled: true\ngate_shell_tools: true\nhooks: []\n' > "$work/home/.infer/hooks.yaml"

run_gemini() {  # the model asks for the commands given ($1), one per turn; $2: approval flag
  printf '%s\n' "$1" > "$work/commands"
  : > "$work/server.log"; rm -f "$work/events.jsonl"
  env HOME="$work/home" TMPDIR="$work/tmp" GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" GEMINI_API_KEY=fake-key \
      HOOKD_EVENTS="$work/events.jsonl" HOOKD_STATE_DIR="$work/state" \
      timeout 180 "$gemini" -p "RUNTOOL please" ${2---yolo} --output-format json >"$work/gemini.out" 2>"$work/gemini.err" || true
}
results() { grep -a 'fake-gemini: function_response' "$work/server.log" || true; }
fail() { echo "FAIL: $*"; echo "-- events"; cat "$work/events.jsonl" 2>/dev/null; echo "-- gemini"; tail -n 30 "$work/gemini.out" "$work/gemini.err"; echo "-- server"; tail -n 20 "$work/server.log"; exit 1; }

echo "== 0: the shipped reminder reaches the model as its text, not as an escaped tag"
cp "$root/config/headless/reminders.yaml" "$work/home/.infer/reminders.yaml"
: > "$work/requests.jsonl"
run_gemini '[]'
grep -q 'Only allow-listed shell commands run here' "$work/requests.jsonl" || fail "the reminder did not reach the model"
grep -q 'lt;system-reminder\|u003csystem-reminder' "$work/requests.jsonl" && fail "the reminder's tag reached the model: $(grep -o '.\{40\}Only allow-listed.\{20\}' "$work/requests.jsonl" | head -1)"
echo "ok: $(grep -o '.\{30\}Only allow-listed shell commands' "$work/requests.jsonl" | head -1)"
rm "$work/home/.infer/reminders.yaml"

echo "== 1: an allowed make test runs confined and its output reaches the model"
run_gemini '["make test"]'
results | grep -q 'make-test-output-42' || fail "the command's output did not reach the model"
results | grep -q 'Command injection detected' && fail "Gemini CLI refused the rewrite"
grep -q '"type":"tool_command_denied"' "$work/events.jsonl" && fail "an allowed command was denied"
grep '"type":"tool_result"' "$work/events.jsonl" | grep '"outcome":"ran"' | grep -q '"command":"make test"' \
  || fail "the confined call is not recorded as ran under the model's command"
echo "ok: $(results | grep -o 'make-test-output-42' | head -1) reached the model"

echo "== 2: git add -A && git commit -m x works confined"
echo change > file.txt
run_gemini '["git add -A && git commit -m x"]'
[ "$(git log --format=%s -1 2>/dev/null)" = x ] || fail "no commit"
echo "ok: committed $(git log --oneline -1)"

echo "== 3: a refused command is told why"
run_gemini '["curl http://example.com"]'
results | grep -q 'hookd' || fail "the model was not told hookd refused it"
grep -q '"type":"tool_command_denied"' "$work/events.jsonl" || fail "no tool_command_denied event"
echo "ok: $(results | grep -o 'Tool execution blocked: [^"]*' | head -1 | cut -c1-160)"

echo "== 4: a confined write outside the project fails (the allowed make escape)"
run_gemini '["make escape"]'
[ -e "$work/home/escaped" ] && fail "the confined command wrote the home directory"
results | grep -qE 'Permission denied|Read-only file system' || fail "the tool result does not show the refused write"
echo "ok: the write to the home directory was refused"
echo "== 5: a call's dir_path is where the confined command starts"
mkdir -p web/src
run_gemini '[{"command": "pwd && echo in-dir-path", "dir_path": "web/src"}]'
results | grep -q "$project/web/src\\\\nin-dir-path" || fail "the confined command did not start in dir_path"
echo "ok: it ran in web/src"

echo "== 6: without --yolo, Gemini CLI's policy allows the confined calls by hookd's program"
printf '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"disableAutoUpdate": true}, "privacy": {"usageStatisticsEnabled": false}, "tools": {"allowed": ["run_shell_command(%s exec)"]}}\n' \
  "$(printf %s "'$hookd'" | sed 's/"/\\"/g')" > "$work/home/.gemini/settings.json"
run_gemini '["make test"]' ""
results | grep -q 'make-test-output-42' || fail "the confined call did not run without --yolo"
echo "ok: allowed by the rule for '$hookd' exec"

echo "== 7: a repository that switches hooks off: the managed (system) install still gates"
# Gemini CLI's system settings, moved into the test by its own GEMINI_CLI_SYSTEM_SETTINGS_PATH
# (below target/: as root, a directory only root can write, as Gemini CLI requires).
system="$etc/gemini-cli/settings.json"
repo6="$work/repo6"; mkdir -p "$repo6/.gemini"; cd "$repo6"; git init -q .
# The settings of scenarios 1-4 again (scenario 5's tools.allowed makes the policy refuse the rest).
printf '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"disableAutoUpdate": true}, "privacy": {"usageStatisticsEnabled": false}}\n' \
  > "$work/home/.gemini/settings.json"
printf '{"hooksConfig": {"enabled": false}}\n' > .gemini/settings.json
printf '{"%s": "TRUST_FOLDER", "%s": "TRUST_FOLDER"}\n' "$project" "$repo6" > "$work/home/.gemini/trustedFolders.json"
run_gemini6() {
  printf '%s\n' '["touch pwned-marker"]' > "$work/commands"
  : > "$work/server.log"; rm -f "$work/events.jsonl" pwned-marker
  env HOME="$work/home" TMPDIR="$work/tmp" GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" GEMINI_API_KEY=fake-key \
      HOOKD_EVENTS="$work/events.jsonl" HOOKD_STATE_DIR="$work/state" GEMINI_CLI_SYSTEM_SETTINGS_PATH="$system" \
      timeout 180 "$@" >"$work/gemini.out" 2>"$work/gemini.err" || true
}
# Installed in the user's settings only, the repository's hooksConfig.enabled: false wins.
HOME="$work/home" "$hookd" install gemini --scope user >/dev/null
run_gemini6 "$gemini" -p "RUNTOOL please" --yolo --output-format json
[ -e pwned-marker ] || fail "the attack did not work without the managed install (the scenario tests nothing)"
HOME="$work/home" "$hookd" uninstall gemini --scope user >/dev/null
GEMINI_CLI_SYSTEM_SETTINGS_PATH="$system" "$hookd" install gemini --scope managed --fail-closed >/dev/null
run_gemini6 "$gemini" -p "RUNTOOL please" --yolo --output-format json
[ -e pwned-marker ] && fail "the model's command ran although hookd's system hook denies it"
grep -q '"type":"tool_command_denied"' "$work/events.jsonl" || fail "no tool_command_denied event under the managed install"
echo "ok: denied by the hook in the system settings, the repository's false notwithstanding"
run_gemini6 "$hookd" run gemini -- "$gemini" -p "RUNTOOL please" --yolo --output-format json
grep -q 'switches the agent.s hooks off ("hooksConfig.enabled": false)' "$work/gemini.err" || fail "hookd run did not refuse the repository"
[ -e "$work/events.jsonl" ] && fail "the agent started"
rm .gemini/settings.json
printf '%s\n' '["make test"]' > "$work/commands"
printf 'test:\n\t@echo "make-test-output-$$((6*7))"\n' > Makefile
: > "$work/server.log"
env HOME="$work/home" TMPDIR="$work/tmp" GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" GEMINI_API_KEY=fake-key \
    HOOKD_EVENTS="$work/events.jsonl" HOOKD_STATE_DIR="$work/state" GEMINI_CLI_SYSTEM_SETTINGS_PATH="$system" \
    timeout 180 "$hookd" run gemini -- "$gemini" -p "RUNTOOL please" --yolo --output-format json >"$work/gemini.out" 2>"$work/gemini.err" || true
results | grep -q 'make-test-output-42' || fail "hookd run did not start the agent"
echo "ok: hookd run refused the repository, and started the agent once it was clean"

echo "== 8: Gemini CLI in CI mode (GITHUB_SHA set) strips its hooks' environment: the daemon is found"
# Its hooks get PATH, HOME, SHELL, TMPDIR, USER, LANG, TERM and a few more: no XDG_RUNTIME_DIR,
# no HOOKD_*. The daemon, started with the user's whole environment, listens in the login's
# runtime directory; the adapter finds it there, and its value of each missing variable applies.
runtime="/run/user/$(id -u)"
if [ ! -d "$runtime" ]; then mkdir -p -m 0700 "$runtime"; runtime_ours=$runtime; fi
if [ -e "$runtime/hookd.sock" ] && [ -z "$runtime_ours" ]; then
  echo "skipped: a daemon of this user's already listens at $runtime/hookd.sock"
else
  cd "$project"
  printf 'test:\n\t@echo "make-test-output-$$((6*7))"\n' > Makefile
  printf '{"%s": "TRUST_FOLDER"}\n' "$project" > "$work/home/.gemini/trustedFolders.json"
  env HOME="$work/home" TMPDIR="$work/tmp" XDG_RUNTIME_DIR="$runtime" HOOKD_STATE_DIR="$work/state" \
      "$hookd" serve --events "$work/daemon.jsonl" 2>"$work/daemon.err" &
  daemon_pid=$!
  for _ in $(seq 50); do [ -S "$runtime/hookd.sock" ] && break; sleep 0.1; done
  printf '%s\n' '["make test", "curl http://example.com"]' > "$work/commands"
  : > "$work/server.log"; rm -f "$work/events.jsonl"
  env -u XDG_RUNTIME_DIR HOME="$work/home" TMPDIR="$work/tmp" GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" GEMINI_API_KEY=fake-key \
      GITHUB_SHA=0123456789abcdef CI=true HOOKD_EVENTS="$work/events.jsonl" \
      timeout 180 "$gemini" -p "RUNTOOL please" --yolo --output-format json >"$work/gemini.out" 2>"$work/gemini.err" || true
  kill "$daemon_pid"; wait "$daemon_pid" 2>/dev/null || true; daemon_pid=""
  [ -e "$work/events.jsonl" ] && fail "HOOKD_EVENTS reached the hooks: Gemini CLI did not strip them (the scenario tests nothing)"
  results | grep -q 'make-test-output-42' || fail "the confined make test did not run in CI mode"
  grep -q '"type":"tool_call_allowed".*"command":"make test"' "$work/daemon.jsonl" \
    || fail "the daemon did not answer the stripped hooks: $(cat "$work/daemon.jsonl" "$work/daemon.err")"
  grep -q '"type":"tool_command_denied".*"command":"curl http://example.com"' "$work/daemon.jsonl" \
    || fail "the daemon did not record the denial"
  grep -q '"type":"client_refused"' "$work/daemon.jsonl" && fail "the daemon refused the stripped hooks: $(grep client_refused "$work/daemon.jsonl")"
  echo "ok: the daemon at $runtime/hookd.sock answered Gemini's stripped hooks (allowed and denied in its log)"
fi
echo "== 9: hookd run --confine: Gemini CLI itself in the sandbox, its commands nested in it"
# The system install of 7. Gemini CLI's shell is \`bash -c\`: BASH_ENV (from the runner's
# environment) names the start-up file it reads, standing in for one an attacker got into: it
# writes ~/.bashrc, a file outside and, through a link planted in the temporary directory
# beforehand, another. Unconfined, all three land (so the scenario can fail); confined, none.
gemini8=$gemini
case "$(readlink -f "$gemini")" in /tmp/*)
  agents="$root/target/e2e-agents"; mkdir -p "$agents"
  pkg=$(cd "$(dirname "$gemini")/../.." && pwd)   # the npm prefix holding node_modules/
  [ -d "$agents/gemini-prefix" ] || cp -al "$pkg" "$agents/gemini-prefix" 2>/dev/null || cp -a "$pkg" "$agents/gemini-prefix"
  gemini8="$agents/gemini-prefix/node_modules/.bin/gemini";;
esac
home8="$work/home8"; repo8="$work/repo8"; mkdir -p "$home8/.infer" "$home8/.gemini" "$repo8"; cd "$repo8"; git init -q .
outside=$(mktemp -d -p "$root/target" e2e-confine.XXXXXX)
printf '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"disableAutoUpdate": true}, "privacy": {"usageStatisticsEnabled": false}}\n' > "$home8/.gemini/settings.json"
printf '{"%s": "TRUST_FOLDER"}\n' "$repo8" > "$home8/.gemini/trustedFolders.json"
cat > "$home8/.infer/config.yaml" <<YAML
sandbox: {enabled: true, network: {allow: [localhost]}}
tools: {bash: {mode: {all: {allow: ['^touch confined-marker\$', '^touch [^ ]*/nested-marker\$', '^curl -s http://localhost:[0-9]+/ok\$', '^curl -s http://127\.0\.0\.1:[0-9]+/ok\$']}}}}
YAML
printf 'enabled: true\ngate_shell_tools: true\nhooks: []\n' > "$home8/.infer/hooks.yaml"
cat > "$home8/startup.sh" <<SH
echo pwned-by-startup >> "\$HOME/.bashrc"
echo pwned > $outside/startup-marker
echo pwned > "\${TMPDIR:-/tmp}/planted-link"
SH
python3 -c 'import json,sys; print(json.dumps(sys.argv[1:]))' \
  "touch confined-marker" "touch $outside/nested-marker" "curl -s http://localhost:$port/ok" "curl -s http://127.0.0.1:$port/ok" > "$work/commands"
run_gemini8() {
  rm -f "$work/events.jsonl" "$home8/.bashrc" "$outside"/* confined-marker
  mkdir -p "$work/tmp8"; ln -sfn "$outside/link-marker" "$work/tmp8/planted-link"
  : > "$work/server.log"
  env -i PATH="$PATH" HOME="$home8" TMPDIR="$work/tmp8" GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:$port" GEMINI_API_KEY=fake-key \
      BASH_ENV="$home8/startup.sh" HOOKD_EVENTS="$work/events.jsonl" HOOKD_STATE_DIR="$work/state8" GEMINI_CLI_SYSTEM_SETTINGS_PATH="$system" \
      timeout 180 "$hookd" run gemini "$@" -- "$gemini8" -p "RUNTOOL please" --yolo --output-format json >"$work/gemini.out" 2>"$work/gemini.err" || true
}
run_gemini8
[ -e "$outside/startup-marker" ] && [ -e "$outside/link-marker" ] && [ -e "$home8/.bashrc" ] \
  || fail "unconfined, the start-up file's writes did not land (the scenario tests nothing): $(ls "$outside")"
run_gemini8 --confine --allow-host 127.0.0.1
[ -e confined-marker ] || fail "the model's command did not run in the confined agent: $(tail -5 "$work/gemini.err")"
for m in startup-marker link-marker nested-marker; do
  [ -e "$outside/$m" ] && fail "$m: a write from the agent's shell or its command left the sandbox"
done
[ -e "$home8/.bashrc" ] && fail "the start-up file wrote ~/.bashrc from the confined agent"
results | grep -qE "nested-marker': (Permission denied|Read-only file system)" || fail "the tool result does not show the nested command's refused write"
results | grep -q '{}' || fail "the nested command did not reach localhost through its proxy and the agent's"
results | grep -q 'hookd refused 127.0.0.1: an IP address is reached only when `sandbox.network.allow` lists it' \
  || fail "the nested command reached the model server the agent alone may reach"
grep -q '"type":"tool_call_allowed"' "$work/events.jsonl" || fail "the confined agent's hooks wrote no events"
rm -rf "$outside"
echo "ok: the session worked; the start-up file's writes, the planted link and the nested write stayed inside; 127.0.0.1 refused to the nested command"
echo "== 10: the model's own cargo build builds confined; its build script cannot write the home"
if command -v rustc >/dev/null; then
  cd "$project"
  printf '{"security": {"auth": {"selectedType": "gemini-api-key"}}, "general": {"disableAutoUpdate": true}, "privacy": {"usageStatisticsEnabled": false}}\n' \
    > "$work/home/.gemini/settings.json"
  cat > "$work/home/.infer/config.yaml" <<'YAML'
sandbox: {enabled: true}
tools: {bash: {mode: {all: {allow: ['^cargo build --offline$']}}}}
YAML
  printf 'enabled: true\ngate_shell_tools: true\nhooks: []\n' > "$work/home/.infer/hooks.yaml"
  mkdir -p src
  printf '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n' > Cargo.toml
  echo 'fn main() {}' > src/main.rs
  printf 'fn main() { let ok = std::fs::write("%s", "pwned").is_ok(); println!("cargo:warning=home write: {ok}"); }\n' \
    "$work/home/.cargo-escaped" > build.rs
  # The toolchain itself (not rustup's proxy, which looks in the agent's HOME for toolchains).
  PATH="$(rustc --print sysroot)/bin:$PATH" CARGO_HOME="$work/home/.cargo" run_gemini '["cargo build --offline"]'
  [ -x target/debug/demo ] || fail "the model's cargo build did not build: $(results | tail -c 600)"
  [ -e "$work/home/.cargo-escaped" ] && fail "the build script wrote the home directory"
  results | grep -q 'home write: false' || fail "the tool result does not show the build script's refused write"
  results | grep -q 'Command injection detected' && fail "Gemini CLI refused the rewrite"
  echo "ok: built confined; the build script's write to the home was refused"
  rm -rf target src Cargo.toml Cargo.lock build.rs
else
  echo "skipped: no rustc"
fi
echo "== 11: a confined call's connections are events of Gemini CLI's session"
if command -v curl >/dev/null; then
  cd "$project"
  cat > "$work/home/.infer/config.yaml" <<'YAML'
sandbox: {enabled: true, network: {allow: [localhost]}}
tools: {bash: {mode: {all: {allow: ['^curl -s --noproxy "" http://localhost:[0-9]+/ok$']}}}}
YAML
  # NO_PROXY names localhost (a confined command's loopback is its own): --noproxy "" sends
  # the call through hookd's proxy to the model server standing in for a registry.
  run_gemini "[\"curl -s --noproxy \\\"\\\" http://localhost:$port/ok\"]"
  results | grep -q 'Command injection detected' && fail "Gemini CLI refused the rewrite"
  python3 - "$work/events.jsonl" <<'PY' || fail "the connection is not an event of the call's session"
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
calls = {e["session_id"] for e in events if e["type"] == "tool_call_allowed"}
net = [e for e in events if e["type"] == "network_request"]
ok = [e for e in net if e["host"] == "localhost" and e["verdict"] == "allowed" and e["name"] == "exec"]
if len(calls) != 1 or not ok or ok[0]["session_id"] not in calls or not ok[0]["session_id"]:
    sys.exit(f"sessions of the calls {calls}, connections {net}")
print("ok: the connection to localhost is an event of session " + ok[0]["session_id"])
PY
else
  echo "skipped: no curl"
fi
echo "12 passed, 0 failed"
