# Sourced by the benches/*.sh scripts. bench_binary: the shellgate binary measured. bench_setup
# (benches/sandbox.sh and benches/wrap.sh): the scratch workspace and the schedule they share.
# Both expect `root` (the clone); bench_setup also `bin`. It sets `work` (removed on exit, with
# `ws` and `home` in it), `prepare` (hyperfine's pacing flags) and `schedule` (its name), and
# leaves the shell in "$work/ws", a git workspace, with HOME and the XDG state/config dirs of its
# own. Usage: bench_setup NAME
# shellcheck shell=bash disable=SC2034,SC2154 # sets and reads the caller's variables (see above)

# Sets `bin`: $SHELLGATE_BIN, else the newer of the two release builds here (./install.sh's
# static musl one, or glibc's), and says which. Usage: bench_binary NAME
bench_binary() {
    local musl glibc
    musl=$root/target/$(uname -m)-unknown-linux-musl/release/shellgate
    glibc=$root/target/release/shellgate
    bin=${SHELLGATE_BIN:-$glibc}
    if [ -z "${SHELLGATE_BIN:-}" ] && [ "$musl" -nt "$glibc" ]; then
        bin=$musl
    fi
    [ -x "$bin" ] || { echo "$1.sh: no $bin; run: ./install.sh, or cargo build --release" >&2; exit 1; }
    local linked=dynamic
    case $(ldd "$bin" 2>&1) in *"statically linked"* | *"not a dynamic"*) linked=static ;; esac
    echo "$1.sh: measuring $bin ($linked)" >&2
}

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
