#!/usr/bin/env python3
"""What a Unix socket connection costs a confined command (below Landlock ABI 9, pid 1's broker
makes each `connect` and `bind`: crates/hookd-sandbox/src/broker/): a Python client connecting
to its own listener and the listener accepting, N times, unconfined and under `hookd exec` of
each binary given, the runs interleaved. Prints the median time per connection of each, and its
difference from the first binary's. Results: docs/benchmarks.md.

Usage: scripts/bench-unix-connect.py [--rounds N] [--connections N] NAME=HOOKD_BINARY ...
  e.g. scripts/bench-unix-connect.py base=/tmp/hookd-main new=target/release/hookd
"""
import argparse
import os
import statistics
import subprocess
import sys

import benchexec

CLIENT = r"""
import os, socket, sys, time
n = int(sys.argv[1])
l = socket.socket(socket.AF_UNIX); l.bind("bench.sock"); l.listen(128)
t = time.perf_counter()
for _ in range(n):
    c = socket.socket(socket.AF_UNIX); c.connect("bench.sock"); s, _ = l.accept(); s.close(); c.close()
print((time.perf_counter() - t) / n * 1e6)
os.unlink("bench.sock")
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--connections", type=int, default=1000)
    ap.add_argument("binaries", nargs="+", metavar="NAME=HOOKD_BINARY")
    a = ap.parse_args()
    with benchexec.project("bench-unix-connect.") as (_, proj, env):
        client = [sys.executable, "-c", CLIENT, str(a.connections)]
        cmds = [("unconfined", client)]
        for spec in a.binaries:
            name, _, binary = spec.partition("=")
            cmds.append((name, [os.path.abspath(binary), "exec", "--", *client]))
        times = {name: [] for name, _ in cmds}
        for _ in range(max(a.rounds, 1)):
            for name, argv in cmds:
                out = subprocess.run(argv, cwd=proj, env=env, capture_output=True, text=True)
                if out.returncode != 0:
                    print(f"{name}: failed: {out.stderr}", file=sys.stderr)
                    return 1
                times[name].append(float(out.stdout))
        first = statistics.median(times[cmds[1][0]])
        for name, _ in cmds:
            m = statistics.median(times[name])
            print(f"{name:12} median {m:8.1f} us per connection   {m - first:+8.1f} us")
        return 0


if __name__ == "__main__":
    sys.exit(main())
