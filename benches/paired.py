#!/usr/bin/env python3
"""Paired, interleaved whole-process comparison: every round runs each command once, in turn.

hyperfine runs all of one command's runs before the next command's, so a neighbour on the host
that gets busy halfway through moves one command's median and not the other's. Here the commands
take turns, 20 ms apart, and each is reported as the median of its per-round difference to the
first command (the baseline) of the same round. The figure includes Python's own cost of starting
a process, which is the same for every command and cancels in the differences.

Usage: benches/paired.py [--ratio A/B ...] ROUNDS NAME COMMAND [NAME COMMAND ...]
  COMMAND is split like a shell would (shlex), and runs with stdout and stderr to /dev/null.
  --ratio A/B also prints A's time over B's: the ratio of the two medians, and the median of the
  per-round ratios (each round's A over the same round's B).
  benches/paired.py 300 true /bin/true old "/tmp/old sandbox -- /bin/true" \
      new "target/release/shellgate sandbox -- /bin/true"
"""

import os
import shlex
import statistics
import subprocess
import sys
import time

WARMUP = 10
PAUSE = 0.02


def main(argv):
    ratios = []
    while len(argv) > 2 and argv[1] == "--ratio":
        ratios.append(tuple(argv[2].split("/", 1)))
        argv = argv[:1] + argv[3:]
    if len(argv) < 4 or len(argv) % 2 != 0 or any(len(r) != 2 for r in ratios):
        sys.exit(__doc__)
    rounds = int(argv[1])
    commands = {argv[i]: shlex.split(argv[i + 1]) for i in range(2, len(argv), 2)}
    times = {name: [] for name in commands}
    with open(os.devnull, "w") as null:
        for round_ in range(WARMUP + rounds):
            for name, command in commands.items():
                time.sleep(PAUSE)
                start = time.perf_counter()
                subprocess.run(command, stdout=null, stderr=null, check=False)
                elapsed = (time.perf_counter() - start) * 1000
                if round_ >= WARMUP:
                    times[name].append(elapsed)
    base = next(iter(commands))
    print(f"paired, interleaved, {rounds} rounds, {PAUSE * 1000:.0f} ms apart; medians")
    for name, samples in times.items():
        diffs = [a - b for a, b in zip(samples, times[base])]
        print(
            f"  {name:<14} {statistics.median(samples):6.3f} ms"
            f"  {statistics.median(diffs):+.3f} ms vs {base} (paired)"
        )
    for a, b in ratios:
        of_medians = statistics.median(times[a]) / statistics.median(times[b])
        per_round = statistics.median(x / y for x, y in zip(times[a], times[b]))
        print(f"  {a} / {b}: {of_medians:.2f}x (medians), {per_round:.2f}x (per round)")


if __name__ == "__main__":
    main(sys.argv)
