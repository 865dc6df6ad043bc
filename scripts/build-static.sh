#!/usr/bin/env bash
# Build the hookd that is shipped and installed: release, statically linked. A static binary
# has no dynamic loader, so LD_PRELOAD, LD_LIBRARY_PATH and LD_AUDIT (which a repository can
# set for its agent, and so for the agent's hooks) load nothing into it. Prints its path.
# The explicit --target keeps the flag off build scripts and proc-macros (which must be dynamic).
set -euo pipefail
cd "$(dirname "$0")/.."
host=$(rustc -vV | sed -n 's/^host: //p')
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
  cargo build --release --quiet --bin hookd --target "$host" "$@"
echo "$PWD/target/$host/release/hookd"
