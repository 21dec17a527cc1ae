#!/usr/bin/env bash
# Issue 27's goal, measured in one run: shellgate against the floor of a per-line sandbox
# launcher, benches/floor.c (the project's own: new mount and PID namespaces, the tree read-only
# but the workspace, /tmp and /dev, a Landlock ruleset, a seccomp filter, exec), built here with
# `cc -O2 -static`.
#
# Every command runs once per round, in turn, 20 ms apart (benches/paired.py), in a git workspace
# outside /tmp with a scratch home:
#   bash          bash -c 'echo hi'
#   floor-bash    floor WS /bin/bash -c 'echo hi'
#   run           shellgate run -- 'echo hi'
#   bwrap-bash    bwrap (ro root, rw workspace, no network, PID namespace) bash -c 'echo hi'
#   true          /bin/true
#   floor-true    floor WS /bin/true
#   sandbox-true  shellgate sandbox -- /bin/true
# and prints the goal's ratios: run / floor-bash and sandbox-true / floor-true (goal ≤ 1.5×),
# run / bwrap-bash (goal < 1), then the peak RSS of `shellgate run` (goal < 8 MB). With
# BASELINE_BIN set, that binary's `run` and `sandbox` take their turns too (an earlier build).
#
# Usage: benches/floor.sh                 (build first: ./install.sh, or cargo build --release)
#   RUNS=300 SHELLGATE_BIN=path/to/shellgate BASELINE_BIN=/tmp/old benches/floor.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benches/common.sh
. "$root/benches/common.sh"
bench_binary floor
runs=${RUNS:-300}
for tool in cc python3 git bash bwrap /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "floor.sh: $tool is required" >&2; exit 1; }
done

export SHELLGATE_SESSION=bench
bench_setup floor
ws=$work/ws
floor=$work/floor
cc -O2 -static -o "$floor" "$root/benches/floor.c"
"$floor" "$ws" /bin/true || { echo "floor.sh: the floor launcher does not run here" >&2; exit 1; }

bw="bwrap --ro-bind / / --dev /dev --proc /proc --bind $ws $ws --unshare-net --unshare-pid --die-with-parent"
commands=(
    bash "bash -c 'echo hi'"
    floor-bash "$floor $ws /bin/bash -c 'echo hi'"
    run "$bin run -- 'echo hi'"
    bwrap-bash "$bw bash -c 'echo hi'"
    true /bin/true
    floor-true "$floor $ws /bin/true"
    sandbox-true "$bin sandbox -- /bin/true"
)
ratios=(--ratio run/floor-bash --ratio sandbox-true/floor-true --ratio run/bwrap-bash)
if [ -n "${BASELINE_BIN:-}" ]; then
    commands+=(baseline-run "$BASELINE_BIN run -- 'echo hi'"
        baseline-sandbox-true "$BASELINE_BIN sandbox -- /bin/true")
    ratios+=(--ratio baseline-run/floor-bash --ratio baseline-sandbox-true/floor-true)
fi
python3 "$root/benches/paired.py" "${ratios[@]}" "$runs" "${commands[@]}"

# Peak RSS of the shellgate process itself (GNU time's %M, in KB), largest of 50 runs.
rss=0
for _ in $(seq 50); do
    kb=$(/usr/bin/time -f %M "$bin" run -- 'echo hi' 2>&1 >/dev/null | tail -1)
    [ "$kb" -gt "$rss" ] && rss=$kb
done
echo "peak RSS of shellgate run (largest of 50): $((rss * 10 / 1024 / 10)).$((rss * 10 / 1024 % 10)) MB"
