#!/usr/bin/env bash
# Whole-process benchmark of the hook path: what a known-safe line costs through shellgate.
#
# In ONE hyperfine run, side by side, for the known-safe line `ls -a` in a git workspace:
#   - bare:        bash -c 'ls -a'                       (the baseline)
#   - check:       shellgate check -- 'ls -a'             (decision only: config, parse, rules)
#   - sandbox:     shellgate sandbox -- bash -c 'ls -a'   (the OS sandbox only)
#   - run:         shellgate run -- 'ls -a'               (the whole path a hook takes: session log,
#                                                          decision, 4 audit events, sandbox, bash)
#   - run-pipe:    shellgate run -- 'ls -a | cat'         (a line a shell must run)
#   - run-expand, run-param, run-subst, run-assign, run-literal: shellgate run of `echo $HOME`,
#                  `ls $HOME`, `ls $(pwd)`, `FOO=$HOME`, `FOO=1`
# Prints medians, the time added over bare and the ratio to bare, all from that same run.
#
# Then, per line typed in an interactive shell (benches/hooks_interactive.py: bash -i and zsh -i
# in a pseudo-terminal, Enter to the next prompt): the shell with the README's init line and the
# same shell without it, taking turns line by line; medians, p95 and the ratio from that run, and
# for every line but `true` the ratio to `run` of the same line above ("x run").
#
# Usage: benches/hooks.sh              (build first: ./install.sh, or cargo build --release)
#   RUNS=500 benches/hooks.sh
#   STARTUP=completion|omz benches/hooks.sh   (heavier startup files in both shells, see below)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=benches/common.sh
. "$root/benches/common.sh"
bench_binary hooks
runs=${RUNS:-300}
for tool in hyperfine python3 git bash; do
    command -v "$tool" >/dev/null || { echo "hooks.sh: $tool is required" >&2; exit 1; }
done

work=$(mktemp -d /tmp/shellgate-hook-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/repo" "$work/home" "$work/bin"
# A copy named `shellgate`, whatever the measured binary is called (the hooked shells get one
# at the README's path below).
# shellcheck disable=SC2154 # bin is set by bench_binary (benches/common.sh)
cp "$bin" "$work/bin/shellgate"
bin=$work/bin/shellgate
git -C "$work/repo" init -q
cd "$work/repo"
export HOME=$work/home XDG_STATE_HOME=$work/state XDG_CONFIG_HOME=$work/config
# The README's init line names the binary by its path, where install.sh puts it.
mkdir -p "$HOME/.local/bin"
cp "$bin" "$HOME/.local/bin/shellgate"
# One session for the `run` rows, as a hooked shell has; it grows by 4 events per run.
export SHELLGATE_SESSION=bench-session

echo "kernel $(uname -r), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N --warmup 20 --runs "$runs" --export-json "$work/result.json" --style basic \
    --command-name "bare" "bash -c 'ls -a'" \
    --command-name "check" "$bin check -- 'ls -a'" \
    --command-name "sandbox" "$bin sandbox -- bash -c 'ls -a'" \
    --command-name "run" "$bin run -- 'ls -a'" \
    --command-name "run-pipe" "$bin run -- 'ls -a | cat'" \
    --command-name "run-expand" "$bin run -- 'echo \$HOME'" \
    --command-name "run-param" "$bin run -- 'ls \$HOME'" \
    --command-name "run-subst" "$bin run -- 'ls \$(pwd)'" \
    --command-name "run-assign" "$bin run -- 'FOO=\$HOME'" \
    --command-name "run-literal" "$bin run -- 'FOO=1'" \
    >"$work/hyperfine.log"
events=$(wc -l <"$XDG_STATE_HOME/shellgate/sessions/bench-session.jsonl")

python3 - "$work/result.json" "$events" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
median = {r["command"]: r["median"] * 1000 for r in results}
bare = median["bare"]
print(f"{'command':<10}{'median ms':>10}{'added ms':>10}{'x bare':>8}{'p95 ms':>8}")
for r in results:
    times = sorted(r["times"])
    p95 = times[int(len(times) * 0.95) - 1] * 1000
    m = median[r["command"]]
    print(f"{r['command']:<10}{m:>10.2f}{m - bare:>10.2f}{m / bare:>8.2f}{p95:>8.2f}")
print(f"(the session log held {sys.argv[2]} events at the end; each run replays it)")
PY

echo
echo "per line in an interactive shell (ms, Enter to the next prompt; $((runs / 5)) lines each):"
init_bash=$(grep -m1 '^eval "$("$HOME/.local/bin/shellgate" init bash ' "$root/README.md")
init_zsh=$(grep -m1 '^eval "$("$HOME/.local/bin/shellgate" init zsh ' "$root/README.md")
# The startup files both variants share (STARTUP): none; Debian's bash-completion and `ls`
# alias, zsh's compinit ("completion"); and with oh-my-zsh's autocd and global aliases ("omz").
case ${STARTUP:-plain} in
    plain) bash_rc=() zsh_rc=() ;;
    completion | omz)
        bash_rc=('. /usr/share/bash-completion/bash_completion' "alias ls='ls --color=auto'")
        zsh_rc=('autoload -U compinit; compinit -u')
        if [[ $STARTUP == omz ]]; then
            zsh_rc+=('setopt auto_cd auto_pushd' "alias -g ...='../..'" "alias -g ....='../../..'"
                "alias ls='ls --color=tty'" "alias ll='ls -lh'" "alias gst='git status'")
        fi
        ;;
    *) echo "hooks.sh: STARTUP is plain, completion or omz" >&2; exit 1 ;;
esac
for variant in bare hooked; do
    mkdir -p "$HOME/$variant"
    printf '%s\n' "${bash_rc[@]}" "PS1='[\$?]BENCH\\#\$ '" >"$HOME/$variant/.bashrc"
    printf '%s\n' "${zsh_rc[@]}" "PS1='[%?]BENCH%!\$ '" >"$HOME/$variant/.zshrc"
done
printf '%s\n' "$init_bash" >>"$HOME/hooked/.bashrc"
printf '%s\n' "$init_zsh" >>"$HOME/hooked/.zshrc"
unset SHELLGATE_SESSION
# The `run` rows' medians by the line they ran, for the typed lines' "x run" column.
RUN_LINES=$(python3 -c '
import json, sys
median = {r["command"]: r["median"] * 1000 for r in json.load(open(sys.argv[1]))["results"]}
rows = {"run": "ls -a", "run-pipe": "ls -a | cat", "run-expand": "echo $HOME",
        "run-param": "ls $HOME", "run-subst": "ls $(pwd)", "run-assign": "FOO=$HOME",
        "run-literal": "FOO=1"}
print(json.dumps({line: median[row] for row, line in rows.items()}))' "$work/result.json")
export RUN_LINES
python3 "$root/benches/hooks_interactive.py" "$bin" "$work/repo" "$HOME" "$((runs / 5))"
