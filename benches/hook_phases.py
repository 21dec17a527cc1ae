#!/usr/bin/env python3
"""Where a line typed in a hooked shell spends its time inside `shellgate hook`, phase by phase.

A hooked interactive bash (or zsh) in a pseudo-terminal (a scratch HOME whose .bashrc or .zshrc
loads the hook of BINARY) is sent `ls -a` ROUNDS times while `perf record -a` records uprobes on shellgate's
functions and the kernel's exec, fork and exit events, as benches/phases.py does (same probes,
plus the hook's own entry points). Each row is the median over the lines of the time between two
events of the same `shellgate hook` process or of its sandbox's processes (the sandboxed bash is
the program; `ls` is the program's child). The shell's own part of a typed line (the Enter
binding, PS0's command substitution, the state dump before the line, the apply script after it)
is outside these rows: compare the total with benches/hooks.sh's per-line figures.

Needs root, perf, nm and readelf, and a binary with its symbol table (see benches/phases.py).
After the phases (rows a stateless or directly started line has no events for show `--`), every
event's median time from the hook process's start, in order.

Usage: benches/hook_phases.py BINARY ROUNDS [bash|zsh]
  LINE=... sends that line instead of `ls -a` (`LINE='echo $HOME'`: a line that takes the state).
"""

import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import phases  # noqa: E402  (the probes, the recording's parser and the launches' roles)

phases.FUNCTIONS.update({
    "hookrun": "shellgate::shell::function::run",
    "route": "shellgate::broker::route",
    "held": "shellgate::shell::function::held_values",
    "splan": "shellgate::shell::stateless::plan",
    "lparse": "shellgate_core::parse::parse",
    "wpriv": "shellgate::audit::paths::write_private",
})

DRIVER = """
import os, pty, select, sys, time
home, ws, rounds, shell, line = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
env = {"HOME": home, "PATH": "/usr/bin:/bin", "TERM": "xterm",
       "XDG_STATE_HOME": home + "/.state", "XDG_CONFIG_HOME": home + "/.config"}
pid, fd = pty.fork()
if pid == 0:
    os.chdir(ws)
    os.execvpe(shell, [shell, "-i"], env)
def drain(seconds):
    end = time.time() + seconds
    while time.time() < end:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                os.read(fd, 65536)
            except OSError:
                return
drain(1)
for _ in range(rounds):
    os.write(fd, line.encode() + b"\\r")
    drain(0.1)
os.write(fd, b"exit\\r")
drain(0.3)
"""

# (from, to, what): events of one `shellgate hook` process (main), its sandbox's init and program
# (the sandboxed bash) and the program's child (`ls`, role "other").
PHASES = [
    ("main:sched_process_exec", "main:hookrun", "start-up, arguments"),
    ("main:hookrun", "main:route", "the shell's snapshot read and parsed, the input script written"),
    ("main:route", "main:sched_process_fork",
     "the gate: session, decision, audit, the line's spec, spawn to the clone"),
    ("main:sched_process_fork", "program:sched_process_exec", "init and program set up, to bash's exec"),
    ("program:sched_process_exec", "other:sched_process_exec",
     "sandboxed bash: start-up, the input sourced, to ls's exec"),
    ("other:sched_process_exec", "other:sched_process_exit", "ls runs"),
    ("other:sched_process_exit", "program:sched_process_exit", "sandboxed bash: the state dumped, exit"),
    ("program:sched_process_exit", "main:route_r", "status to the parent, audit"),
    ("main:route_r", "main:sched_process_exit", "the state compared, the apply script written, exit"),
    ("main:sched_process_exec", "main:sched_process_exit", "total: the hook process"),
]


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    binary, rounds = os.path.realpath(argv[1]), int(argv[2])
    shell = argv[3] if len(argv) == 4 else "bash"
    line = os.environ.get("LINE", "ls -a")
    phases.FUNCTIONS["stateparse"] = f"shellgate::shell::state::{shell}::parse"
    init = subprocess.run([binary, "init", shell], capture_output=True, text=True,
                          check=True).stdout
    with tempfile.TemporaryDirectory(dir="/var/tmp") as scratch:
        home, ws = os.path.join(scratch, "home"), os.path.join(scratch, "ws")
        os.makedirs(home)
        os.makedirs(ws)
        subprocess.run(["git", "init", "-q", ws], check=True)
        with open(os.path.join(home, ".bashrc" if shell == "bash" else ".zshrc"), "w") as rc:
            rc.write("PS1='$ '\n" + init)
        driver = os.path.join(scratch, "driver.py")
        with open(driver, "w") as f:
            f.write(DRIVER)
        data = os.path.join(scratch, "perf.data")
        phases.clear_probes()
        phases.set_probes(binary)
        try:
            events = phases.record_while(["python3", driver, home, ws, str(rounds), shell, line],
                                         data)
        finally:
            phases.clear_probes()
    lines = [launch for launch in phases.launches(events, binary)
             if any(label.startswith("main:hookrun#") for _, label in launch)
             and any(label.startswith("program:sched_process_exec#") for _, label in launch)]
    print(f"shellgate hook, a typed `{line}` in {shell} ({len(lines)} lines; medians)")
    for start, end, what in PHASES:
        spans = []
        for launch in lines:
            first = {}
            for t, label in launch:
                first.setdefault(label.rsplit("#", 1)[0], t)
            if start in first and end in first:
                spans.append(first[end] - first[start])
        shown = f"{statistics.median(spans):7.3f} ms" if spans else "     --   "
        print(f"  {shown}  {what}")
    # Every event's median time from the hook process's exec, in order: where the rest goes.
    print("timeline (ms from the hook's exec, medians):")
    offsets = {}
    for launch in lines:
        first = {}
        for t, label in launch:
            first.setdefault(label.rsplit("#", 1)[0], t)
        start = first.get("main:sched_process_exec")
        if start is None:
            continue
        for label, t in first.items():
            offsets.setdefault(label, []).append(t - start)
    for label, spans in sorted(offsets.items(), key=lambda kv: statistics.median(kv[1])):
        print(f"  {statistics.median(spans):7.3f}  {label}")


if __name__ == "__main__":
    main(sys.argv)
