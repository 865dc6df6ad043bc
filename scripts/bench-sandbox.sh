#!/usr/bin/env bash
# Whole-process cost of a confined command: `hookd exec -- true` (sandbox on) against
# `/bin/true` and, when CODEX_BIN names Codex's native binary (npm @openai/codex ships it under
# node_modules/@openai/codex-linux-x64/vendor/*/bin/codex), `codex sandbox` workspace-write, in
# one hyperfine run (the machine is shared and noisy: read medians and ratios). The in-process
# cost of confinement alone is `cargo bench --bench sandbox`. Results: docs/benchmarks.md.
# Usage: [CODEX_BIN=…] scripts/bench-sandbox.sh   (needs hyperfine: apt-get install hyperfine)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "hyperfine is not installed (apt-get install hyperfine)" >&2; exit 1; }
cargo build --release --quiet
bin="$PWD/target/release/hookd"
# Not below /tmp: Codex refuses to make its helper links there.
work=$(mktemp -d "$PWD/target/bench-sandbox.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/home/.infer" "$work/proj"
printf 'sandbox: {enabled: true}\n' > "$work/home/.infer/config.yaml"
git -C "$work/proj" init -q
cd "$work/proj"
export HOME="$work/home"
"$bin" exec -- true || { echo "this kernel cannot confine: see hookd check" >&2; exit 1; }
cmds=(/bin/true "$bin exec -- true")
if [ -n "${CODEX_BIN:-}" ]; then
  cmds+=("$CODEX_BIN sandbox -c sandbox_mode=\"workspace-write\" -- true")
fi
hyperfine -N --warmup 5 --runs "${RUNS:-80}" --export-json "$work/result.json" "${cmds[@]}"
python3 - "$work/result.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
base = next(r for r in results if "hookd" in r["command"])["median"]
for r in results:
    print(f'{r["command"][:70]:70}  median {r["median"] * 1000:7.2f} ms  ({r["median"] / base:.2f}x hookd exec)')
PY
