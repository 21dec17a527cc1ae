# Sourced by benches/sandbox.sh and benches/wrap.sh: the scratch workspace and the schedule they
# share. Expects `root` (the clone) and `bin` (the shellgate binary); sets `work` (removed on exit,
# with `ws` and `home` in it), `prepare` (hyperfine's pacing flags) and `schedule` (its name), and
# leaves the shell in "$work/ws", a git workspace, with HOME and the XDG state/config dirs of its
# own. Usage: bench_setup NAME
# shellcheck shell=bash disable=SC2034,SC2154 # sets and reads the caller's variables (see above)

bench_setup() {
    # Outside /tmp: a workspace beneath a temp dir would be writable anyway, which is not the case
    # being measured.
    local base=${BENCH_DIR:-$root/target/bench}
    mkdir -p "$base"
    work=$(mktemp -d "$base/$1.XXXXXX")
    # shellcheck disable=SC2064 # expand now: the trap removes this run's directory.
    trap "rm -rf '$work'" EXIT
    mkdir -p "$work/ws" "$work/home"
    git -C "$work/ws" init -q
    cd "$work/ws" || exit 1
    export HOME=$work/home XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config
    "$bin" run -- 'echo hi' >/dev/null
    # Paced by default: a sandbox's mount namespace is torn down after the line, and back to
    # back every launch waits for the previous one's teardown (see benches/sandbox.sh).
    prepare=(--prepare 'sleep 0.02')
    schedule="paced (20 ms between runs)"
    if [ -n "${BACK_TO_BACK:-}" ]; then
        prepare=()
        schedule="back to back"
    fi
}
