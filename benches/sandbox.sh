#!/usr/bin/env bash
# Whole-process benchmark of the sandbox launcher: what a user feels per command.
#
# In ONE hyperfine run, side by side: `/bin/true` and `sh -c 'echo hi > f'`
#   - bare,
#   - `/bin/true` through `env` (one extra exec hop through a small C program: the floor of any
#     re-exec launcher, for reference),
#   - under `shellgate sandbox` in a plain workspace (no protected path exists: no mount namespace),
#   - under `shellgate sandbox` in a git workspace (.git/config and .git/hooks bound read-only),
#   - under bwrap with the equivalent profile (ro-bind /, devices, writable workspace and /tmp,
#     the same read-only git paths, no network, new session).
# Prints medians, the time added over bare and the ratio to bare, all from that same run.
#
# Usage: benches/sandbox.sh            (build first: cargo build --release)
#   RUNS=1000 benches/sandbox.sh       more runs per command (default 300)
#   SHELLGATE_BIN=path benches/sandbox.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${SHELLGATE_BIN:-$root/target/release/shellgate}
runs=${RUNS:-300}

for tool in hyperfine python3 git; do
    command -v "$tool" >/dev/null || { echo "sandbox.sh: $tool is required" >&2; exit 1; }
done
[ -x "$bin" ] || { echo "sandbox.sh: no $bin; run: cargo build --release" >&2; exit 1; }

work=$(mktemp -d /tmp/shellgate-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
plain=$work/plain
repo=$work/repo
mkdir -p "$plain" "$repo"
git -C "$repo" init -q

sg() { echo "$bin sandbox --workspace $1 --"; }
bw() {
    echo "bwrap --ro-bind / / --dev-bind /dev /dev --bind $1 $1 --bind /tmp /tmp" \
        "--ro-bind $1/.git/config $1/.git/config --ro-bind $1/.git/hooks $1/.git/hooks" \
        "--unshare-net --new-session --die-with-parent --chdir $1"
}
write() { echo "sh -c 'echo hi > $1/f'"; }

names=() commands=()
add() { names+=("$1"); commands+=("$2"); }
add "true bare" "/bin/true"
add "true env-hop" "/usr/bin/env /bin/true"
add "true shellgate-plain" "$(sg "$plain") /bin/true"
add "true shellgate-git" "$(sg "$repo") /bin/true"
add "echo bare" "$(write "$plain")"
add "echo shellgate-plain" "$(sg "$plain") $(write "$plain")"
add "echo shellgate-git" "$(sg "$repo") $(write "$repo")"
if command -v bwrap >/dev/null; then
    add "true bwrap-git" "$(bw "$repo") /bin/true"
    add "echo bwrap-git" "$(bw "$repo") $(write "$repo")"
else
    echo "sandbox.sh: bwrap not installed; skipping its rows" >&2
fi

args=()
for i in "${!names[@]}"; do
    args+=(--command-name "${names[$i]}" "${commands[$i]}")
done

echo "kernel $(uname -r), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N --warmup 30 --runs "$runs" --export-json "$work/result.json" --style basic \
    "${args[@]}" >"$work/hyperfine.log"

python3 - "$work/result.json" <<'EOF'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
median = {r["command"]: r["median"] * 1000 for r in results}
print(f"{'command':<22}{'median ms':>10}{'added ms':>10}{'x bare':>8}{'p95 ms':>8}")
for r in results:
    name = r["command"]
    program = name.split()[0]
    bare = median[f"{program} bare"]
    times = sorted(r["times"])
    p95 = times[int(len(times) * 0.95) - 1] * 1000
    m = median[name]
    print(f"{name:<22}{m:>10.2f}{m - bare:>10.2f}{m / bare:>8.2f}{p95:>8.2f}")
EOF
