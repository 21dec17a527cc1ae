#!/usr/bin/env python3
"""Where a line's time goes: per-phase wall-clock times of `shellgate sandbox -- /bin/true` and
`shellgate run -- 'echo hi'`, beside the floor launcher, all in the same recording.

Each phase boundary is a uprobe on a function of shellgate (entry and return), with the kernel's
own process events (exec, fork, exit) and clone system calls, recorded system-wide by `perf
record -a` (per-CPU events: nothing is copied into each new process, which would slow every clone
of a per-task recording). The commands take turns, 20 ms apart; each row is the median over the
rounds of the time between two named events of the same launch (the first of each). A uprobe
costs a few microseconds per hit (a trap), so a launch is a little slower than without them, and
the parent and the sandbox's processes overlap on two CPUs: compare phases with each other and
with the floor of the same recording, not with other benches.

Needs root, perf, nm and readelf, and a binary with its symbol table (the release profile strips
it):
  CARGO_TARGET_DIR=target/sym CARGO_PROFILE_RELEASE_STRIP=none \\
      cargo build --release --target x86_64-unknown-linux-musl
Usage: benches/phases.py BINARY ROUNDS WORKSPACE [FLOOR]
  Run from a scratch HOME with its own XDG dirs (as benches/common.sh sets them); WORKSPACE is a
  git workspace outside /tmp. FLOOR is a floor launcher (`FLOOR WS PROG ARGS...`, see
  issue 27), run with /bin/true and with bash -c 'echo hi'.
"""

import collections
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile

TRACEFS = "/sys/kernel/tracing"
GROUP = "sgphase"
# Probe name -> function; entry and return probes unless the name is in ENTRY_ONLY.
FUNCTIONS = {
    "main": "main",
    "cli": "shellgate::cli::main",
    "config": "shellgate::config::load_for",
    "ctx": "shellgate::session::Context::load_with",
    "fold": "shellgate::audit::memo::fold_log",
    "decide": "shellgate_core::policy::decide",
    "append": "shellgate::audit::log::Session::append",
    "linespec": "shellgate::spec::line_spec",
    "creds": "shellgate_sandbox::credentials::hidden_paths",
    "spawn": "shellgate_sandbox::launch::spawn",
    "plan": "shellgate_sandbox::protected::plan_with",
    "landlock": "shellgate_sandbox::landlock::prepare",
    "assemble": "shellgate_sandbox::seccomp::assemble",
    "mountsteps": "shellgate_sandbox::launch::mount_steps",
    "scan": "shellgate_sandbox::surface::Surface::scan",
    "initentry": "shellgate_sandbox::child::init_entry",
    "startprog": "shellgate_sandbox::child::start_program",
    "wait": "shellgate_sandbox::launch::Running::wait",
    "check": "shellgate_sandbox::surface::Watch::check",
}
ENTRY_ONLY = {"main", "initentry", "startprog", "mountsteps"}


def file_offsets(binary):
    """Function name -> file offset of its entry, for the uprobes."""
    segments = []
    for line in subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOAD":
            segments.append((int(fields[2], 16), int(fields[1], 16), int(fields[4], 16)))
    wanted = {v: k for k, v in FUNCTIONS.items()}
    offsets = {}
    for line in subprocess.run(["nm", "-C", binary], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        parts = line.split(" ", 2)
        if len(parts) != 3 or parts[1] not in "tT":
            continue
        name = re.sub(r"::h[0-9a-f]{16}$", "", parts[2])
        if name in wanted:
            address = int(parts[0], 16)
            for vaddr, offset, size in segments:
                if vaddr <= address < vaddr + size:
                    offsets[wanted[name]] = address - vaddr + offset
    return offsets


def set_probes(binary):
    offsets = file_offsets(binary)
    missing = set(FUNCTIONS) - set(offsets)
    if missing:
        print(f"phases.py: not in {binary}'s symbols: {sorted(missing)}", file=sys.stderr)
    for name, offset in offsets.items():
        write_probe(f"p:{GROUP}/{name} {binary}:0x{offset:x}")
        if name not in ENTRY_ONLY:
            write_probe(f"r:{GROUP}/{name}_r {binary}:0x{offset:x}")


def write_probe(definition):
    """One line to tracefs' uprobe_events (appended: the probes of others stay)."""
    fd = os.open(f"{TRACEFS}/uprobe_events", os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, definition.encode() + b"\n")
    finally:
        os.close(fd)


def clear_probes():
    with open(f"{TRACEFS}/uprobe_events") as events:
        ours = [line.split()[0].split(":", 1)[1] for line in events if f":{GROUP}/" in line]
    for name in ours:
        write_probe(f"-:{name}")


def record(commands, rounds, data):
    turn = "; ".join(f"{c} >/dev/null 2>&1; sleep 0.02" for c in commands)
    script = f"for i in $(seq {rounds}); do {turn}; done"
    return record_while(["sh", "-c", script], data)


def record_while(command, data):
    """The probes' and the kernel's process events, system-wide, while `command` runs: a list of
    (time in ms, pid, event, its text, comm)."""
    subprocess.run(
        ["perf", "record", "-q", "-a", "-o", data, "-e", f"{GROUP}:*",
         "-e", "sched:sched_process_exec", "-e", "sched:sched_process_exit",
         "-e", "sched:sched_process_fork", "-e", "syscalls:sys_enter_clone",
         "-e", "syscalls:sys_exit_clone", "--", *command],
        check=True,
    )
    out = subprocess.run(["perf", "script", "-i", data, "-F", "comm,pid,tid,time,event,trace"],
                         capture_output=True, text=True, check=True).stdout
    events = []
    for line in out.splitlines():
        m = re.match(r"\s*(.+?)\s+(\d+)/(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)", line)
        if m:
            comm, pid, _tid, t, name, rest = m.groups()
            events.append((float(t) * 1000, int(pid), name.split(":")[-1], rest, comm))
    return events


def launches(events, program):
    """Each launch of `program` (a path) as its sequence of (time, role:event#n)."""
    result = []
    i = 0
    while i < len(events):
        t, pid, name, rest, _comm = events[i]
        if name == "sched_process_exec" and rest.startswith(f"filename={program} "):
            roles = {pid: "main"}
            seen = collections.Counter()
            sequence = []
            for tj, pj, nj, rj, _cj in events[i:]:
                if pj not in roles:
                    continue
                role = roles[pj]
                if nj == "sched_process_fork":
                    child = int(re.search(r"child_pid=(\d+)", rj).group(1))
                    roles[child] = {"main": "init", "init": "program"}.get(role, "other")
                label = f"{role}:{nj}"
                seen[label] += 1
                sequence.append((tj, f"{label}#{seen[label]}"))
                if nj == "sched_process_exit" and role == "main":
                    break
            result.append(sequence)
        i += 1
    return result


# Phases as (from, to, what): each the median, over the launches, of the time between the first
# occurrence of two events of the same launch (role:event, `_r` for a function's return). The
# parent and the sandbox's processes run at once on two CPUs, so the phases of different roles
# overlap; the rows are in the order a launch reaches them.
SANDBOX_PHASES = [
    ("main:sched_process_exec", "main:main", "start-up: execve to main (static-PIE relocation)"),
    ("main:main", "main:cli", "main: signal dispositions, panic hook, argv"),
    ("main:cli", "main:config", "clap: the arguments"),
    ("main:config", "main:config_r", "config: load"),
    ("main:linespec", "main:creds", "line_spec: workspace, homes"),
    ("main:creds", "main:creds_r", "line_spec: credential stores"),
    ("main:creds_r", "main:spawn", "spec to spawn"),
    ("main:spawn", "main:plan", "spawn: Landlock ABI, seccomp, namespaces"),
    ("main:plan", "main:plan_r", "spawn: protected plan"),
    ("main:plan_r", "main:landlock", "spawn: streams checked, layers opened"),
    ("main:landlock", "main:landlock_r", "spawn: Landlock ruleset"),
    ("main:assemble", "main:assemble_r", "spawn: seccomp program assembled"),
    ("main:assemble_r", "main:mountsteps", "spawn: supervisor pair"),
    ("main:mountsteps", "main:scan", "spawn: mount steps, exec plan, guard"),
    ("main:scan", "main:scan_r", "spawn: git surface read (before)"),
    ("main:scan_r", "main:sys_enter_clone", "spawn: pipes, stacks, plan"),
    ("main:sys_enter_clone", "main:sched_process_fork", "clone into new mount, IPC, PID namespaces"),
    ("main:sched_process_fork", "init:initentry", "the init first runs (another CPU)"),
    ("init:initentry", "init:sys_enter_clone", "init: mount tree, private /dev, /proc, pid_max"),
    ("init:sys_enter_clone", "program:startprog", "init: clone of the program's process"),
    ("program:startprog", "program:sched_process_exec", "program: streams, Landlock, seccomp, execve"),
    ("program:sched_process_exec", "program:sched_process_exit", "the program runs"),
    ("program:sched_process_exit", "main:wait_r", "status to the parent, its checks"),
    ("main:check", "main:check_r", "  of which: git surface read (after)"),
    ("main:wait_r", "main:sched_process_exit", "exit"),
    ("main:sched_process_exec", "main:sched_process_exit", "total: execve to exit"),
]
RUN_PHASES = [
    ("main:sched_process_exec", "main:main", "start-up: execve to main (static-PIE relocation)"),
    ("main:main", "main:cli", "main: signal dispositions, panic hook, argv"),
    ("main:cli", "main:ctx", "clap: the arguments; the line read"),
    ("main:ctx", "main:fold", "session: config, settings, log opened"),
    ("main:fold", "main:fold_r", "session: the log's fold (memo and tail)"),
    ("main:decide", "main:decide_r", "decision: intake, parse, rules"),
    ("main:decide_r", "main:append", "audit: the events built"),
    ("main:append", "main:append_r", "audit: line/asked appended"),
    ("main:append_r", "main:linespec", "audit: decided appended; the sandbox's command"),
    ("main:linespec", "main:creds", "line_spec: workspace, homes"),
    ("main:creds", "main:creds_r", "line_spec: credential stores"),
    ("main:creds_r", "main:spawn", "audit: sandbox/started appended"),
    ("main:spawn", "main:assemble", "spawn: ABI, plan, layers, Landlock ruleset"),
    ("main:assemble", "main:assemble_r", "spawn: seccomp program assembled"),
    ("main:assemble_r", "main:sys_enter_clone", "spawn: mount steps, exec plan, pipes, stacks"),
    ("main:sys_enter_clone", "main:sched_process_fork", "clone into new mount, IPC, PID namespaces"),
    ("main:sched_process_fork", "init:initentry", "the init first runs (another CPU)"),
    ("init:initentry", "init:sys_enter_clone", "init: mount tree, private /dev, /proc, pid_max"),
    ("init:sys_enter_clone", "program:startprog", "init: clone of the program's process"),
    ("program:startprog", "program:sched_process_exec", "program: streams, Landlock, seccomp, execve"),
    ("program:sched_process_exec", "program:sched_process_exit", "bash -c 'echo hi' runs"),
    ("program:sched_process_exit", "main:wait_r", "status to the parent"),
    ("main:wait_r", "main:sched_process_exit", "audit: finished appended; exit"),
    ("main:sched_process_exec", "main:sched_process_exit", "total: execve to exit"),
]
FLOOR_PHASES = [
    ("main:sched_process_exec", "main:sys_enter_clone", "start-up (static glibc), Landlock ruleset"),
    ("main:sys_enter_clone", "main:sched_process_fork", "clone into new mount, PID namespaces"),
    ("main:sched_process_fork", "init:sys_exit_clone", "the child first runs"),
    ("init:sys_exit_clone", "init:sched_process_exec", "child: mounts, Landlock, seccomp, execve"),
    ("init:sched_process_exec", "init:sched_process_exit", "the program runs (as PID 1)"),
    ("init:sched_process_exit", "main:sched_process_exit", "namespaces torn down, waitpid, exit"),
    ("main:sched_process_exec", "main:sched_process_exit", "total: execve to exit"),
]


def report(title, runs, phases):
    firsts = []
    for sequence in runs:
        first = {}
        for t, label in sequence:
            first.setdefault(label.rsplit("#", 1)[0], t)
        firsts.append(first)
    print(f"{title} ({len(runs)} launches; medians)")
    for a, b, what in phases:
        times = [f[b] - f[a] for f in firsts if a in f and b in f]
        if times:
            print(f"  {statistics.median(times):7.3f} ms  {what}")


def main(argv):
    if len(argv) not in (4, 5):
        sys.exit(__doc__)
    binary, rounds, workspace = os.path.abspath(argv[1]), int(argv[2]), argv[3]
    floor = os.path.abspath(argv[4]) if len(argv) == 5 else None
    q = shlex.quote
    commands = [f"{q(binary)} sandbox -- /bin/true", f"{q(binary)} run -- 'echo hi'"]
    if floor:
        commands += [f"{q(floor)} {q(workspace)} /bin/true",
                     f"{q(floor)} {q(workspace)} /bin/bash -c 'echo hi'"]
    clear_probes()
    set_probes(binary)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            events = record(commands, rounds, os.path.join(scratch, "perf.data"))
    finally:
        clear_probes()
    ours = launches(events, binary)
    report("sandbox -- /bin/true", [r for r in ours if not any("decide" in l for _, l in r)],
           SANDBOX_PHASES)
    report("run -- 'echo hi'", [r for r in ours if any("decide" in l for _, l in r)],
           RUN_PHASES)
    if floor:
        floors = launches(events, floor)
        report("floor /bin/true", floors[0::2], FLOOR_PHASES)
        report("floor bash -c 'echo hi'", floors[1::2], FLOOR_PHASES)


if __name__ == "__main__":
    main(sys.argv)
