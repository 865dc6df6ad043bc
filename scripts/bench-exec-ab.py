#!/usr/bin/env python3
"""`hookd exec -- true` (sandbox on) of two or more hookd binaries, interleaved: each round runs
every command once in turn, so that a burst of load from other processes on a shared machine
hits all of them alike (hyperfine runs all of one command before the next). Prints the median
of each and its difference from the first. The project and configuration are those of
scripts/bench-sandbox.sh (a git repository, `sandbox: {enabled: true}`), made below target/
(Codex refuses /tmp). Results: docs/benchmarks.md.

Usage: scripts/bench-exec-ab.py [--rounds N] [--codex PATH] NAME=HOOKD_BINARY ...
  e.g. scripts/bench-exec-ab.py base=/tmp/hookd-main new=target/release/hookd
"""
import argparse
import os
import sys

import benchexec


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--codex", help="Codex's native binary: `codex sandbox` workspace-write too")
    ap.add_argument("binaries", nargs="+", metavar="NAME=HOOKD_BINARY")
    a = ap.parse_args()
    with benchexec.project("bench-exec-ab.") as (_, proj, env):
        cmds = [("true", ["/bin/true"])]
        for spec in a.binaries:
            name, _, binary = spec.partition("=")
            cmds.append((name, [os.path.abspath(binary), "exec", "--", "true"]))
        if a.codex:
            cmds.append(("codex", [a.codex, "sandbox", "-c", "sandbox_mode=workspace-write", "--", "true"]))
        med = benchexec.medians(cmds, a.rounds, proj, env)
        if med is None:
            return 1
        first = med[cmds[1][0]]
        for name, _ in cmds:
            m = med[name]
            print(f"{name:12} median {m:7.2f} ms   {m - first:+6.2f} ms   {m / first:5.2f}x {cmds[1][0]}")
        return 0

if __name__ == "__main__":
    sys.exit(main())
