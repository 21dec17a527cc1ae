#!/usr/bin/env bash
# How many of the ordinary developer lines in eval/developer-lines.txt a person is asked about
# in mode ask, and how many of those questions come from the network rule (issue 25's budget:
# at most 3 network questions on 100 ordinary lines). Decided with `shellgate check` in a scratch
# git workspace holding a package.json, with a config of its own; nothing runs.
#
# Then the same lines as a person who answers "always" wherever a question offers it (the rule
# `check --json` reports as "always" is appended to the scratch config, as the terminal's `a`
# does): the questions of that first session, and of the next one, when every such rule is in.
#
# Last, the same lines as a person types them in their own hooked shell (`check --typed`): what
# the sandbox holds by name (the hosts a line names, the public registries) is not asked there.
#
# Both in two workspaces: one with no remote, one whose origin is an https URL (as most are):
# a git line is judged by where its remote points.
#   eval/network-questions.sh [path/to/shellgate]   (default: target/debug/shellgate)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "${1:-$here/../target/debug/shellgate}")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
ws=$scratch/ws
export XDG_CONFIG_HOME=$scratch/config
config=$XDG_CONFIG_HOME/shellgate/config.toml

# One pass over the lines: prints each question, then "asked network remembered".
# $1: yes to write the rule an "always" offers; $2: a label; $3: --typed, or nothing.
pass() {
  local remember=$1 label=$2 typed=${3-} asked=0 network=0 remembered=0 line verdict rule
  while IFS= read -r line; do
    [[ -z $line || $line == \#* ]] && continue
    verdict=$(cd "$ws" && { "$bin" check --mode ask --json $typed "$line" 2>/dev/null || true; })
    [[ $verdict == *'"decision":"ask"'* ]] || continue
    asked=$((asked + 1))
    if [[ $verdict == *builtin.network* ]]; then
      network=$((network + 1))
      echo "$label network: $line" >&2
    else
      echo "$label other:   $line ($(sed -n "s/.*\"rule\":\"\([^\"]*\)\".*/\1/p" <<<"$verdict"))" >&2
    fi
    if [[ $remember == yes && $verdict == *'"always":'* ]]; then
      rule=$(python3 -c '
import json, sys
always = json.loads(sys.argv[1])["always"]
field = "line" if "line" in always else "program"
# Every character but a letter or digit as \x{..}: a pattern that is the text and nothing else.
pattern = "^" + "".join(c if c.isascii() and c.isalnum() else "\\x{%x}" % ord(c) for c in always[field]) + "$"
needs = always.get("needs", {})
print("[[rules]]")
print(f"id = \"eval-always-{sys.argv[2]}\"")
print("pattern = " + json.dumps(pattern))
print(f"field = \"{field}\"\npolicy = \"allow\"\nreason = \"always, in the eval\"")
if needs:
    print("needs = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in needs.items()) + " }")
' "$verdict" "$asked")
      printf '\n%s\n' "$rule" >>"$config"
      remembered=$((remembered + 1))
    fi
  done <"$here/developer-lines.txt"
  echo "$asked $network $remembered"
}

# A fresh workspace and config; $1: the origin's URL, or nothing for none.
fresh() {
  rm -rf "$ws" "$XDG_CONFIG_HOME"
  mkdir -p "$ws" "$XDG_CONFIG_HOME/shellgate"
  git -C "$ws" init -q
  [[ -n $1 ]] && git -C "$ws" remote add origin "$1"
  echo '{"name": "demo"}' >"$ws/package.json"
}

lines=$(grep -cv '^\(#.*\)\?$' "$here/developer-lines.txt")
for origin in "" https://git.example.com/team/demo.git; do
  fresh "$origin"
  echo "== origin: ${origin:-none}"
  read -r asked network _ < <(pass no once)
  echo "lines=$lines asked=$asked network=$network"
  read -r asked network remembered < <(pass yes first)
  echo "answering always where offered: first session asked=$asked network=$network (always offered on $remembered)"
  read -r asked network _ < <(pass no next)
  echo "the next session: asked=$asked network=$network"
  fresh "$origin"
  read -r asked network _ < <(pass no typed --typed)
  echo "typed by a person in their own shell: asked=$asked network=$network"
done
