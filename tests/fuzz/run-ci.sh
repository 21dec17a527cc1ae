#!/usr/bin/env bash
# Run every cargo-fuzz target of tests/fuzz for a bounded time each, and fail on the first crash.
#
# usage: tests/fuzz/run-ci.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  default 60 (or $FUZZ_SECONDS)
#   TARGET...           default: every target in tests/fuzz/Cargo.toml
#
# cargo-fuzz is installed from crates.io when it is missing. It needs nightly-only flags;
# RUSTC_BOOTSTRAP=1 lets the stable toolchain accept them. Builds take the shared cargo lock
# (/tmp/cargo.lock, or $CARGO_LOCK) so that no two cargo builds run at once on the machine; the
# fuzzing itself runs outside the lock. Crashes are left in tests/fuzz/artifacts/<target>/.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
seconds=${1:-${FUZZ_SECONDS:-60}}
shift || true
lock=${CARGO_LOCK:-/tmp/cargo.lock}
case $seconds in ''|*[!0-9]*) echo "run-ci.sh: seconds must be a number, got '$seconds'" >&2; exit 2;; esac

locked() { flock "$lock" "$@"; }

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "run-ci.sh: installing cargo-fuzz from crates.io" >&2
    locked cargo install --locked cargo-fuzz
fi

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(sed -n 's/^name = "\(.*\)"$/\1/p' tests/fuzz/Cargo.toml | grep -v '^shellgate-fuzz$')
fi

export RUSTC_BOOTSTRAP=1
status=0
for target in "${targets[@]}"; do
    echo "== fuzz $target (${seconds}s)" >&2
    # Build under the lock, then fuzz without holding it.
    locked cargo fuzz build --fuzz-dir tests/fuzz -O "$target"
    log=$(mktemp)
    if cargo fuzz run --fuzz-dir tests/fuzz -O "$target" -- -max_total_time="$seconds" >"$log" 2>&1; then
        runs=$(grep -Eo 'Done [0-9]+ runs' "$log" | tail -1 || true)
        echo "   ok: ${runs:-done} in ${seconds}s, no crash" >&2
    else
        status=1
        echo "   CRASH in $target (artifacts in tests/fuzz/artifacts/$target/):" >&2
        tail -40 "$log" >&2
    fi
    rm -f "$log"
done
exit "$status"
