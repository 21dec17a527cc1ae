#!/usr/bin/env python3
"""Per-line latency in an interactive shell, hooked and not, from the same run.

Drives `bash -i` (and `zsh -i` where installed) in a pseudo-terminal, the way a person types:
each line is sent with Enter and timed until the shell's next prompt is on the screen. The shell
with the README's init line in its startup file and the same shell without it take turns, line by
line, so that both see the same machine load. Prints the median and p95 per line and the ratio
hooked / bare.

Usage: hooks_interactive.py SHELLGATE_BIN WORKSPACE HOME RUNS
(benches/hooks.sh prepares the workspace and home and calls this.)
"""

import json
import os
import pty
import re
import select
import statistics
import sys
import time

# `$?` and the command number: a line editor may redraw the prompt with the typed line before it
# runs, so the line is done only when a prompt with the next number shows.
PROMPT = re.compile(rb"\[(\d+)\]BENCH(\d+)\$ ")
LINES = [
    ("true", "a builtin that runs in the shell"),
    ("ls -a", "a known-safe program (sandboxed)"),
    ("ls -a | cat", "a pipeline of programs (sandboxed, started directly)"),
    ("echo $HOME", "echo of a plain parameter (runs in the shell)"),
    ("ls $HOME", "a program given a plain parameter (sandboxed, started directly)"),
    ("ls $(pwd)", "a substitution (sandboxed, takes the state)"),
    ("FOO=$HOME", "an assignment of a plain parameter (runs in the shell)"),
    ("FOO=1", "an assignment of a literal (runs in the shell)"),
]


class Shell:
    def __init__(self, argv, env, cwd):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        self.buf = b""
        self.number = -1
        self.wait_prompt(30)

    def wait_prompt(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            m = PROMPT.search(self.buf)
            if m and int(m.group(2)) > self.number:
                self.buf = self.buf[m.end():]
                self.number = int(m.group(2))
                return int(m.group(1))
            if m:
                self.buf = self.buf[m.end():]
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise SystemExit(f"no prompt; the screen shows: {self.buf[-500:]!r}")
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                try:
                    self.buf += os.read(self.fd, 65536)
                except OSError:
                    raise SystemExit(f"the shell ended: {self.buf[-500:]!r}")

    def time_line(self, line):
        self.buf = b""
        start = time.perf_counter()
        os.write(self.fd, line.encode() + b"\r")
        self.wait_prompt(30)
        return (time.perf_counter() - start) * 1000

    def close(self):
        os.write(self.fd, b"exit\r")
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def main():
    binary, ws, home, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    env = {
        "HOME": home,
        "PATH": f"{os.path.dirname(binary)}:/usr/bin:/bin",
        "TERM": "dumb",
        "LANG": "C.UTF-8",
        "XDG_CONFIG_HOME": f"{home}/.config",
        "XDG_STATE_HOME": f"{home}/.local/state",
    }
    shells = [("bash", ["bash", "--noprofile", "--rcfile"], ".bashrc")]
    if any(os.access(f"{d}/zsh", os.X_OK) for d in ("/usr/bin", "/bin")):
        shells.append(("zsh", ["zsh", "-i"], ".zshrc"))
    # `shellgate run` of the same line, measured by hooks.sh in the same sitting (its `run…`
    # rows, as JSON: line -> ms), for the typed line's ratio to it (issue 27's goal: at most 1.5x).
    run_ms = {line: float(ms) for line, ms in json.loads(os.environ.get("RUN_LINES", "{}")).items()}
    print(f"{'shell':<6}{'line':<14}{'bare p50':>10}{'hooked p50':>12}{'ratio':>7}"
          f"{'bare p95':>10}{'hooked p95':>12}{'x run':>7}  what")
    for name, argv, rc in shells:
        pair = {}
        for variant in ("bare", "hooked"):
            rc_dir = f"{home}/{variant}"
            if name == "bash":
                cmd = argv + [f"{rc_dir}/.bashrc", "-i"]
                e = dict(env)
            else:
                cmd = argv
                e = dict(env, ZDOTDIR=rc_dir)
            pair[variant] = Shell(cmd, e, ws)
        for line, what in LINES:
            times = {"bare": [], "hooked": []}
            for _ in range(3):  # warm-up
                for variant in ("bare", "hooked"):
                    pair[variant].time_line(line)
            for _ in range(runs):
                for variant in ("bare", "hooked"):
                    times[variant].append(pair[variant].time_line(line))
            b = sorted(times["bare"])
            h = sorted(times["hooked"])
            p95 = lambda xs: xs[max(0, int(len(xs) * 0.95) - 1)]
            bm, hm = statistics.median(b), statistics.median(h)
            x_run = f"{hm / run_ms[line]:>7.2f}" if line in run_ms else f"{'':>7}"
            print(f"{name:<6}{line:<14}{bm:>10.2f}{hm:>12.2f}{hm / bm:>7.1f}"
                  f"{p95(b):>10.2f}{p95(h):>12.2f}{x_run}  {what}")
        for shell in pair.values():
            shell.close()


if __name__ == "__main__":
    main()
