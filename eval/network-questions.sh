#!/usr/bin/env bash
# How many of the ordinary developer lines in eval/developer-lines.txt a person is asked about
# in mode ask, and how many of those questions come from the network rule (issue 25's budget:
# at most 3 network questions on 100 ordinary lines). Decided with `shellgate check` in a scratch
# git workspace holding a package.json; nothing runs.
#   eval/network-questions.sh [path/to/shellgate]   (default: target/debug/shellgate)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "${1:-$here/../target/debug/shellgate}")
ws=$(mktemp -d)
trap 'rm -rf "$ws"' EXIT
git -C "$ws" init -q
echo '{"name": "demo"}' >"$ws/package.json"
lines=0 asked=0 network=0
while IFS= read -r line; do
  [[ -z $line || $line == \#* ]] && continue
  lines=$((lines + 1))
  verdict=$(cd "$ws" && "$bin" check --mode ask --json "$line" 2>/dev/null || true)
  case $verdict in
    *'"decision":"ask"'*)
      asked=$((asked + 1))
      if [[ $verdict == *builtin.network* ]]; then
        network=$((network + 1))
        echo "network: $line"
      else
        echo "other:   $line"
      fi ;;
  esac
done <"$here/developer-lines.txt"
echo "lines=$lines asked=$asked network=$network"
