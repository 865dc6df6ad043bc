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
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--codex", help="Codex's native binary: `codex sandbox` workspace-write too")
    ap.add_argument("binaries", nargs="+", metavar="NAME=HOOKD_BINARY")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(os.path.join(root, "target"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="bench-exec-ab.", dir=os.path.join(root, "target"))
    try:
        home, proj = os.path.join(work, "home"), os.path.join(work, "proj")
        os.makedirs(os.path.join(home, ".infer"))
        os.makedirs(proj)
        with open(os.path.join(home, ".infer", "config.yaml"), "w") as f:
            f.write("sandbox: {enabled: true}\n")
        subprocess.run(["git", "init", "-q", proj], check=True)
        env = dict(os.environ, HOME=home)
        cmds = [("true", ["/bin/true"])]
        for spec in a.binaries:
            name, _, binary = spec.partition("=")
            cmds.append((name, [os.path.abspath(binary), "exec", "--", "true"]))
        if a.codex:
            cmds.append(("codex", [a.codex, "sandbox", "-c", "sandbox_mode=workspace-write", "--", "true"]))
        for name, argv in cmds:
            if subprocess.run(argv, cwd=proj, env=env).returncode != 0:
                print(f"{name}: `{' '.join(argv)}` failed (see hookd check)", file=sys.stderr)
                return 1
        times = {name: [] for name, _ in cmds}
        for _ in range(a.rounds):
            for name, argv in cmds:
                t = time.perf_counter()
                subprocess.run(argv, cwd=proj, env=env)
                times[name].append(time.perf_counter() - t)
        first = statistics.median(times[cmds[1][0]]) * 1e3
        for name, _ in cmds:
            m = statistics.median(times[name]) * 1e3
            print(f"{name:12} median {m:7.2f} ms   {m - first:+6.2f} ms   {m / first:5.2f}x {cmds[1][0]}")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
