#!/usr/bin/env bash
# Whole-process benchmark of the sandbox: what a user feels per line.
#
# In ONE hyperfine run, side by side, in a git workspace:
#   - bare:     bash -c 'echo hi'                                   (the baseline)
#   - sandbox:  shellgate sandbox -- bash -c 'echo hi'              (the OS sandbox only)
#   - run:      shellgate run -- 'echo hi'                          (the whole path: config, session
#               log and its events, decision, sandbox, bash)
#   - bwrap:    bwrap --ro-bind / / --dev /dev --proc /proc --bind WS WS --unshare-net
#               --unshare-pid --die-with-parent bash -c 'echo hi'   (a bubblewrap sandbox doing
#               the same job)
# and, in a second run, /bin/true bare against `shellgate sandbox -- /bin/true` and two floors (one
# more process; mount and PID namespaces without a sandbox, by `unshare`); in a third, a
# line that opens for writing 2,000 times (WRITE_RUNS times, default 30) /dev/null, and a
# workspace file it truncates: bare and in the sandbox, where the supervisor makes every open for
# writing itself (crates/sandbox/src/opener.rs). /dev/null keeps the disk out of the first: what is
# measured is the cost of an open made by the supervisor. With BASELINE_BIN set, that binary's
# sandbox runs the same two lines in the same run (an earlier build, to compare with).
#
# Two schedules, both reported:
#   - paced (default): hyperfine's --prepare sleeps 20 ms before every timed run. A sandbox's
#     mount namespace is torn down after the line, and the kernel then holds the global mount lock
#     through an RCU grace period: back to back, every launch (shellgate's and bwrap's alike) waits
#     for the previous one's teardown. Lines typed by a person or sent by an agent are seconds
#     apart, so the paced figure is the one a user feels.
#   - back-to-back (BACK_TO_BACK=1): no pause, the worst case.
#
# Prints medians, the time added over bare and the ratio to bare (same run), and the peak RSS of
# `shellgate run` (GNU time, max of 50 runs).
#
# Usage: benches/sandbox.sh              (build first: ./install.sh, or cargo build --release)
#   RUNS=1000 benches/sandbox.sh
#   BACK_TO_BACK=1 benches/sandbox.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benches/common.sh
. "$root/benches/common.sh"
bench_binary sandbox
runs=${RUNS:-300}
for tool in hyperfine python3 git bash bwrap unshare env /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "sandbox.sh: $tool is required" >&2; exit 1; }
done

export SHELLGATE_SESSION=bench
bench_setup sandbox

bw="bwrap --ro-bind / / --dev /dev --proc /proc --bind $work/ws $work/ws --unshare-net --unshare-pid --die-with-parent"
hyperfine -N --warmup 30 --runs "$runs" "${prepare[@]}" --export-json "$work/lines.json" \
    -n bare "bash -c 'echo hi'" \
    -n sandbox "$bin sandbox -- bash -c 'echo hi'" \
    -n run "$bin run -- 'echo hi'" \
    -n bwrap "$bw bash -c 'echo hi'" >/dev/null
# Two floors beside it: one more process that only execs /bin/true (`env`), and util-linux's
# `unshare` making mount and PID namespaces and forking into them, no sandbox at all (a user
# namespace too when not root). Any launcher that is a process of its own and gives the line
# those namespaces pays at least that.
userns=$([ "$(id -u)" = 0 ] || echo -r)
hyperfine -N --warmup 30 --runs "$runs" "${prepare[@]}" --export-json "$work/true.json" \
    -n true /bin/true \
    -n env-true "env /bin/true" \
    -n unshare-true "unshare $userns -m -p -f /bin/true" \
    -n sandbox-true "$bin sandbox -- /bin/true" >/dev/null

# shellcheck disable=SC2016 # expanded by the bash that runs the line
writes='for i in $(seq 2000); do : > /dev/null; done'
# shellcheck disable=SC2016
files='for i in $(seq 2000); do : > f; done'
baseline=()
if [ -n "${BASELINE_BIN:-}" ]; then
    baseline=(-n baseline-writes "$BASELINE_BIN sandbox -- bash -c '$writes'"
        -n baseline-files "$BASELINE_BIN sandbox -- bash -c '$files'")
fi
hyperfine -N --warmup 3 --runs "${WRITE_RUNS:-30}" --export-json "$work/writes.json" \
    -n bare-writes "bash -c '$writes'" \
    -n sandbox-writes "$bin sandbox -- bash -c '$writes'" \
    -n bare-files "bash -c '$files'" \
    -n sandbox-files "$bin sandbox -- bash -c '$files'" \
    "${baseline[@]}" >/dev/null

# Peak RSS of the shellgate process itself (GNU time's %M, in KB), largest of 50 runs. (Python's
# getrusage of its children also counts the memory of whatever forked them.)
rss=0
for _ in $(seq 50); do
    kb=$(/usr/bin/time -f %M "$bin" run -- 'echo hi' 2>&1 >/dev/null | tail -1)
    [ "$kb" -gt "$rss" ] && rss=$kb
done

python3 - "$work/lines.json" "$work/true.json" "$schedule" "$runs" "$rss" "$work/writes.json" <<'PY'
import json, statistics, sys
lines, true, schedule, runs, rss, writes = sys.argv[1:7]
def medians(path):
    return {r["command"]: statistics.median(r["times"]) * 1000 for r in json.load(open(path))["results"]}
print(f"schedule: {schedule}, {runs} runs each; medians")
for path, base in ((lines, "bare"), (true, "true"), (writes, None)):
    m = medians(path)
    for name, ms in m.items():
        # The opens: each against its own bare line (`*-writes`, `*-files`).
        own = base or ("bare-writes" if name.endswith("-writes") else "bare-files")
        b = m[own]
        extra = "" if name == own else f"  +{ms - b:.2f} ms  {ms / b:.2f}x {own}"
        print(f"  {name:<16} {ms:6.2f} ms{extra}")
m = medians(lines)
print(f"  run vs bwrap: {m['run'] / m['bwrap']:.2f}x   sandbox vs bwrap: {m['sandbox'] / m['bwrap']:.2f}x")
print(f"peak RSS of shellgate run (largest child of 50): {int(rss) / 1024:.1f} MB")
PY
