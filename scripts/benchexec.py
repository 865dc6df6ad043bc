"""What scripts/bench-exec-ab.py and scripts/bench-floor.py share: the project `hookd exec --
true` runs in, and commands timed interleaved (each round runs every command once, in turn, so
that a burst of load from other processes on a shared machine hits all of them alike)."""
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


@contextlib.contextmanager
def project(prefix: str):
    """A git repository with the sandbox on in its user's layer (`sandbox: {enabled: true}`),
    below target/ (Codex refuses /tmp): yields (work directory, project, environment), removed
    after."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(os.path.join(root, "target"), exist_ok=True)
    work = tempfile.mkdtemp(prefix=prefix, dir=os.path.join(root, "target"))
    try:
        home, proj = os.path.join(work, "home"), os.path.join(work, "proj")
        os.makedirs(os.path.join(home, ".infer"))
        os.makedirs(proj)
        with open(os.path.join(home, ".infer", "config.yaml"), "w") as f:
            f.write("sandbox: {enabled: true}\n")
        subprocess.run(["git", "init", "-q", proj], check=True)
        yield work, proj, dict(os.environ, HOME=home)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def works(cmds, cwd: str, env: dict) -> bool:
    """Whether each of `cmds` ((name, argv), …) exits 0 (one that does not is said on stderr)."""
    for name, argv in cmds:
        if subprocess.run(argv, cwd=cwd, env=env).returncode != 0:
            print(f"{name}: `{' '.join(argv)}` failed (see hookd check)", file=sys.stderr)
            return False
    return True


def medians(cmds, rounds: int, cwd: str, env: dict):
    """Each of `cmds` ((name, argv), …) checked to work, then `rounds` (at least one) rounds of
    all of them in turn: the median of each in ms, or None where one failed."""
    if not works(cmds, cwd, env):
        return None
    times = {name: [] for name, _ in cmds}
    for _ in range(max(rounds, 1)):
        for name, argv in cmds:
            t = time.perf_counter()
            subprocess.run(argv, cwd=cwd, env=env)
            times[name].append(time.perf_counter() - t)
    return {name: statistics.median(v) * 1e3 for name, v in times.items()}
