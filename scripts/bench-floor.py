#!/usr/bin/env python3
"""The floor under `hookd exec -- true`: the kernel's part of confining a command, replayed
without hookd. `strace -f -X raw -y` records one real `hookd exec -- true` (the project and
configuration of scripts/bench-exec-ab.py); from it this script writes a C program that makes
the same confining system calls in the same order and nothing else: the stand-ins made and
removed at the project's root, the Landlock ruleset, pid 1 cloned into the same namespaces, its
id maps, every mount, `mount_setattr`, `open_tree`/`move_mount` and `mkdir`, its Landlock rules
and `landlock_restrict_self`, the same `prctl`s, `capset`, `keyctl`, `setsid`, a seccomp filter
as long as hookd's, then `true` started from a `vfork` and its end reported to the parent, which
removes the stand-ins and exits without waiting for pid 1 (as hookd does). No configuration, no
plan, no catalog, no walk: what no implementation of what hookd holds can do without.

It then times, interleaved (each round runs every command once, in turn; medians):
  plain   a C program that starts `true` from a `vfork` and waits for it (an unconfined runner)
  bare    the replay without the stand-ins (their links, binds and removals)
  floor   the replay
  hookd   `hookd exec -- true` itself
and prints the floor's cost over `plain`, and hookd's over the floor (docs/benchmarks.md).

Usage: scripts/bench-floor.py [--rounds N] [--keep DIR] HOOKD_BINARY
Needs strace and a C compiler (cc); run as the user who runs hookd (the replay makes the same
stand-ins in its own project below target/).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import benchexec

PRELUDE = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct attr { unsigned long long set, clr, prop, userns; };
struct rs { unsigned long long fs, net, scoped; };
struct pb { unsigned long long access; int fd; } __attribute__((packed));

static void map(const char *file, const char *text) {
    int fd = open(file, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) < 0) _exit(90);
    close(fd);
}
static void setattr(const char *path, unsigned flags, unsigned long long set, unsigned long long clr) {
    struct attr a = {set, clr, 0, 0};
    syscall(SYS_mount_setattr, AT_FDCWD, path, flags, &a, sizeof a);
}
static void cloned(const char *from, const char *to) {
    int t = syscall(SYS_open_tree, AT_FDCWD, from, 1 | O_CLOEXEC);
    if (t < 0) return;
    syscall(SYS_move_mount, t, "", AT_FDCWD, to, 4);
    close(t);
}
static void rule(int ruleset, const char *path, unsigned long long access) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return;
    struct pb b = {access, fd};
    syscall(SYS_landlock_add_rule, ruleset, 1, &b, 0);
    close(fd);
}
"""


def c(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def num(s: str) -> int:
    s = s.strip()
    if s in ("NULL", ""):
        return 0
    return int(s, 0)


def plain(call: str) -> str:
    """A traced call without the paths `-y` adds to its descriptors."""
    return re.sub(r"(-?\d+)<[^>]*>", r"\1", call)


def _tree(m, state):
    state["tree"] = m.group(1)


def _seccomp(m, state):
    state["seccomp"] = int(m.group(1))


def _prctl(m, _):
    args = [a.strip() for a in m.group(1).split(",")] + ["0"] * 5
    return f"    prctl({', '.join(args[:5])});"


# Pid 1's calls replayed: (pattern, matched against the call as traced (True) or without the
# paths `-y` adds (False), the C line it becomes, or None). The first that matches applies;
# calls none matches (its maps, descriptors, signals, directory) are not replayed or are
# written out before.
CHILD = [
    (r'mount\((NULL|"[^"]*"), "([^"]+)", (NULL|"[^"]*"), (0x[0-9a-f]+|0), (NULL|"[^"]*")\)', False,
     lambda m, _: f"    mount({m[1]}, {c(m[2])}, {m[3]}, {m[4]}, {m[5]});"),
    (r'mount_setattr\(-100, "([^"]+)", (0x[0-9a-f]+|0), \{attr_set=(0x[0-9a-f]+|0), attr_clr=(0x[0-9a-f]+|0)', False,
     lambda m, _: f"    setattr({c(m[1])}, {m[2]}, {m[3]}, {m[4]});"),
    (r'open_tree\(\d+<([^>]+)>, "", ', True, _tree),
    (r'move_mount\(\d+, "", -100, "([^"]+)", ', False,
     lambda m, state: f"    cloned({c(state['tree'])}, {c(m[1])});"),
    (r'mkdir\("([^"]+)", (0\d+)\)', False, lambda m, _: f"    mkdir({c(m[1])}, {m[2]});"),
    (r"landlock_add_rule\(\d+(<[^>]*>)?, 0x1, \{allowed_access=(0x[0-9a-f]+), parent_fd=\d+<([^>]+)>\}", True,
     lambda m, _: f"    rule(ruleset, {c(m[3])}, {m[2]});"),
    (r"prctl\(0x16, 0x2, \{len=(\d+)", False, _seccomp),
    (r"prctl\(([^)]*)\)", False, _prctl),
    (r"landlock_restrict_self\(", False,
     lambda m, _: "    syscall(SYS_landlock_restrict_self, ruleset, 0);"),
    (r"capset\(", False,
     lambda m, _: "    { unsigned hdr[2] = {0x20080522, 0}; unsigned d[6] = {0}; syscall(SYS_capset, hdr, d); }"),
    (r"keyctl\(", False, lambda m, _: "    syscall(SYS_keyctl, 1, 0);"),
    (r"setsid\(", False, lambda m, _: "    setsid();"),
]


def generate(trace: str, uid: int, gid: int) -> str:
    # `PID  CALL`: strace pads a pid to its widest, so split on the first run of spaces.
    lines = [tuple(l.split(None, 1)) for l in open(trace).read().splitlines() if " " in l]
    parent = lines[0][0]
    clone = next(call for who, call in lines if who == parent and call.startswith("clone("))
    pid1 = re.search(r"= (\d+)$", clone).group(1)
    flags = re.search(r"flags=(0x[0-9a-f]+)\|17", clone).group(1)
    before, child, after = [], [], []
    seen_clone = child_done = False
    for who, call in lines:
        if who == parent:
            if call.startswith("clone("):
                seen_clone = True
                continue
            (after if seen_clone else before).append(call)
        elif who == pid1 and not child_done:
            # Up to the command's start: what follows is pid 1 waiting.
            child_done = call.startswith(("vfork", "clone("))
            if not child_done:
                child.append(call)
    out = [PRELUDE, "int main(void) {", "  int pidfd = -1, report[2];"]
    # The parent before the clone: the stand-ins, the Landlock ruleset.
    first = None
    for call in before:
        raw, call = call, plain(call)
        m = re.match(r'mknodat\(-100, "([^"]+)", (0\d+)\) = 0', call)
        if m:
            first = m.group(1)
            out.append(f"  mknodat(AT_FDCWD, {c(first)}, {m.group(2)}, 0);")
        # A stand-in that is a file (`.git/commondir`): made new (O_CREAT|O_EXCL) and written.
        m = re.match(r'openat\(-100, "([^"]+)", (0x[0-9a-f]*c1), 0666\) = \d+', call)
        if m:
            out.append(f"  {{ int fd = open({c(m.group(1))}, {m.group(2)}, 0666); "
                       f"if (fd >= 0) {{ if (write(fd, \".\\n\", 2) < 0) return 97; close(fd); }} }}")
        m = re.match(r'linkat\(-100, "/proc/self/fd/\d+[^"]*", -100, "([^"]+)", 0x400\) = 0', call)
        if m:
            src = first or m.group(1)
            out.append(f"  linkat(AT_FDCWD, {c(src)}, AT_FDCWD, {c(m.group(1))}, 0);")
        m = re.match(r"landlock_create_ruleset\(\{handled_access_fs=(0x[0-9a-f]+)", call)
        if m:
            out.append(f"  struct rs r = {{{m.group(1)}, 0, 0}};")
            out.append("  int ruleset = syscall(SYS_landlock_create_ruleset, &r, 24, 0);")
            out.append("  if (ruleset < 0) return 91;")
        m = re.match(r"landlock_add_rule\(\d+(<[^>]*>)?, 0x1, \{allowed_access=(0x[0-9a-f]+), parent_fd=\d+<([^>]+)>\}", raw)
        if m:
            out.append(f"  rule(ruleset, {c(m.group(3))}, {m.group(2)});")
    out += [
        "  int sv[2];",
        "  if (pipe2(sv, O_CLOEXEC)) return 92;",
        f"  long pid = syscall(SYS_clone, {flags} | SIGCHLD | CLONE_PIDFD, 0, &pidfd, 0, 0);",
        "  if (pid < 0) return 93;",
        "  if (pid == 0) {",
        "    close(sv[0]);",
        f'    map("/proc/self/setgroups", "deny"); map("/proc/self/uid_map", "{uid} {uid} 1"); map("/proc/self/gid_map", "{gid} {gid} 1");',
    ]
    state = {"tree": "", "seccomp": 0}
    for call in child:
        for pattern, raw, replay in CHILD:
            m = re.match(pattern, call if raw else plain(call))
            if m:
                line = replay(m, state)
                out.extend([line] if line else [])
                break
    seccomp_len = state["seccomp"]
    if seccomp_len:
        out += [
            f"    struct sock_filter f[{seccomp_len}];",
            "    f[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0);",
            f"    for (int i = 1; i < {seccomp_len - 1}; i++) f[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x7fff0000 + i, 0, 0);",
            f"    f[{seccomp_len - 1}] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);",
            f"    struct sock_fprog p = {{{seccomp_len}, f}};",
            "    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p)) _exit(94);",
        ]
    out += [
        '    char *argv[] = {"true", 0}; extern char **environ;',
        "    pid_t cmd = vfork();",
        '    if (cmd == 0) { setpgid(0, 0); execve(TRUE, argv, environ); _exit(127); }',
        "    int status = 0; waitpid(cmd, &status, 0);",
        "    int r[2] = {status, 0}; if (write(sv[1], r, 8) < 0) _exit(95);",
        "    _exit(0);",
        "  }",
        "  close(sv[1]);",
        "  if (read(sv[0], report, 8) != 8) return 96;",
    ]
    for call in after:
        call = plain(call)
        m = re.match(r'unlink\("([^"]+)"\) = 0', call)
        if m:
            out.append(f"  unlink({c(m.group(1))});")
    out += ["  return report[0] >> 8;", "}"]
    return "\n".join(out) + "\n"


PLAIN = r"""
#define _GNU_SOURCE
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
    char *argv[] = {"true", 0}; extern char **environ;
    pid_t cmd = vfork();
    if (cmd == 0) { execve(TRUE, argv, environ); _exit(127); }
    int status = 0; waitpid(cmd, &status, 0);
    return status >> 8;
}
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--keep", help="write the generated C program and the trace here")
    ap.add_argument("hookd")
    a = ap.parse_args()
    for tool in ("strace", "cc", "true"):
        if not shutil.which(tool):
            print(f"{tool} is not installed", file=sys.stderr)
            return 1
    # The `true` hookd's command finds on PATH, which the C programs start by its path.
    true = os.path.realpath(shutil.which("true"))
    with benchexec.project("bench-floor.") as (work, proj, env):
        hookd = [os.path.abspath(a.hookd), "exec", "--", "true"]
        trace = os.path.join(work, "trace")
        subprocess.run(["strace", "-f", "-X", "raw", "-y", "-s", "400", "-o", trace] + hookd,
                       cwd=proj, env=env, check=True)
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            shutil.copy(trace, a.keep)
        src = generate(trace, os.getuid(), os.getgid())
        # The floor without the stand-ins (their links, binds and removals): what they cost.
        stands = set(re.findall(r'linkat\(AT_FDCWD, "[^"]+", AT_FDCWD, ("[^"]+")', src))
        stands |= set(re.findall(r'mknodat\(AT_FDCWD, ("[^"]+")', src))
        stands |= set(re.findall(r'open\(("[^"]+"), 0x[0-9a-f]*c1, 0666\)', src))
        bare = "\n".join(l for l in src.splitlines()
                         if not any(s in l for s in stands) or "rule(" in l) + "\n"
        for name, text in (("floor", src), ("plain", PLAIN), ("bare", bare)):
            with open(os.path.join(work, name + ".c"), "w") as f:
                f.write(text)
            subprocess.run(["cc", "-O2", f"-DTRUE={c(true)}", "-o", os.path.join(work, name),
                            os.path.join(work, name + ".c")], check=True)
        if a.keep:
            shutil.copy(os.path.join(work, "floor.c"), a.keep)
        cmds = [("plain", [os.path.join(work, "plain")]), ("bare", [os.path.join(work, "bare")]),
                ("floor", [os.path.join(work, "floor")]), ("hookd", hookd)]
        if not benchexec.works(cmds[:3], proj, env):
            return 1
        # hookd makes these once (to hold them) and leaves them; anything else is a stand-in.
        left = [n for n in os.listdir(proj) if n not in (".git", ".infer", ".claude", ".gemini")]
        if left:
            print(f"the replay left {left} in the project", file=sys.stderr)
            return 1
        med = benchexec.medians(cmds, a.rounds, proj, env)
        if med is None:
            return 1
        for name, _ in cmds:
            print(f"{name:6} median {med[name]:7.2f} ms")
        print(f"the stand-ins: {med['floor'] - med['bare']:+.2f} ms; "
              f"the floor over plain: {med['floor'] - med['plain']:+.2f} ms; "
              f"hookd over the floor: {med['hookd'] - med['floor']:+.2f} ms; "
              f"hookd over plain: {med['hookd'] - med['plain']:+.2f} ms")
        return 0

if __name__ == "__main__":
    sys.exit(main())
