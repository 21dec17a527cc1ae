#!/usr/bin/env bash
# Whole-process benchmark of a line under `shellgate wrap`: what an agent pays per command.
#
# Two hyperfine runs, each with its own baseline, in one git workspace:
#   1. inside `shellgate wrap -- hyperfine …` (the agent contained, as by default):
#        - bare: the real bash, `$SHELLGATE_REAL_BASH -c 'echo hi'` (no gate)
#        - wrap: `/bin/bash -c 'echo hi'`, which is shellgate's entry point: the line goes to the
#          broker, is decided, logged and run in its sandbox with the caller's streams
#   2. outside:
#        - bare: `bash -c 'echo hi'`
#        - run:  `shellgate run -- 'echo hi'` (the same decision, log and sandbox, no broker)
# Reported: medians, each line's cost over its run's bare, and wrap's cost over run's.
#
# Paced like benches/sandbox.sh (20 ms between runs; BACK_TO_BACK=1 for none).
# Usage: benches/wrap.sh   (build first: ./install.sh, or cargo build --release)   RUNS=300 by default
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benches/common.sh
. "$root/benches/common.sh"
bench_binary wrap
runs=${RUNS:-300}
for tool in hyperfine python3 git bash; do
    command -v "$tool" >/dev/null || { echo "wrap.sh: $tool is required" >&2; exit 1; }
done
hyperfine=$(command -v hyperfine)

bench_setup wrap

# Inside: hyperfine is the agent, started by a bash that is the agent's own process (so it runs
# ungated and can name the real bash, which wrap hides behind the entry point). Its results go to
# the workspace, which the agent may write.
export HYPERFINE=$hyperfine RUNS_EACH=$runs PACED=${prepare[*]:+1}
# shellcheck disable=SC2016  # expanded by the inner bash
"$bin" wrap -- /bin/bash -c '
    unset BASH_ENV  # else the real bash sources the hook copy of wrap: not part of the baseline
    exec "$HYPERFINE" -N --warmup 30 --runs "$RUNS_EACH" ${PACED:+--prepare "sleep 0.02"} \
        --export-json inside.json \
        -n bare "$SHELLGATE_REAL_BASH -c '\''echo hi'\''" \
        -n wrap "/bin/bash -c '\''echo hi'\''" >/dev/null'
mv inside.json "$work/ws/inside.json" 2>/dev/null || true
hyperfine -N --warmup 30 --runs "$runs" "${prepare[@]}" --export-json "$work/outside.json" \
    -n bare "bash -c 'echo hi'" \
    -n run "$bin run -- 'echo hi'" >/dev/null

python3 - "$work/ws/inside.json" "$work/outside.json" "$schedule" "$runs" <<'PY'
import json, statistics, sys
inside, outside, schedule, runs = sys.argv[1:5]
def medians(path):
    return {r["command"]: statistics.median(r["times"]) * 1000 for r in json.load(open(path))["results"]}
i, o = medians(inside), medians(outside)
print(f"schedule: {schedule}, {runs} runs each; medians")
print(f"  inside wrap:  bare {i['bare']:6.2f} ms   wrap {i['wrap']:6.2f} ms   +{i['wrap'] - i['bare']:.2f} ms  {i['wrap'] / i['bare']:.2f}x bare")
print(f"  outside:      bare {o['bare']:6.2f} ms   run  {o['run']:6.2f} ms   +{o['run'] - o['bare']:.2f} ms  {o['run'] / o['bare']:.2f}x bare")
extra_wrap, extra_run = i['wrap'] - i['bare'], o['run'] - o['bare']
print(f"  a line under wrap costs {extra_wrap - extra_run:+.2f} ms over the same line through run ({extra_wrap / extra_run:.2f}x run's cost)")
PY
