# The shape of a line typed at the prompt, when the hook can tell it without asking the binary
# (`shellgate hook bash --shape`, src/shell/shape.rs, forks a process): one command, or a
# pipeline of such, each of plain words, `$NAME` and `${NAME}`, double-quoted plain text and
# `$NAME`s, single-quoted text without `|`, after assignments of such words. None of these can
# hold an operator, so a pipeline's length is its `|` count plus one, and the first word is the
# command's name unless the line starts with an assignment (no alias then: `-`). A reserved word
# where a command begins (`time ls`, a lone `if`) is left to the binary. tests/suite/hooks.rs
# holds this to the binary's answers.
__shellgate_qs_var='[$]([A-Za-z_][A-Za-z0-9_]*|[{][A-Za-z_][A-Za-z0-9_]*[}])'
__shellgate_qs_arg="([A-Za-z0-9_.+:@%,/=~-]|$__shellgate_qs_var|\"([A-Za-z0-9_.+:@%,/=~ -]|$__shellgate_qs_var)*\"|'[^'|]*')+"
__shellgate_qs_asg="[A-Za-z_][A-Za-z0-9_]*=($__shellgate_qs_arg)?"
__shellgate_qs_simple="(($__shellgate_qs_asg)[[:space:]]+)*[A-Za-z0-9_][A-Za-z0-9_.+:@%,-]*([[:space:]]+$__shellgate_qs_arg)*|($__shellgate_qs_asg)([[:space:]]+$__shellgate_qs_asg)*"
__shellgate_plain="^[[:space:]]*($__shellgate_qs_simple)([[:space:]]*[|][[:space:]]*($__shellgate_qs_simple))*[[:space:]]*\$"
# Plain words only: the same shape, and a pattern bash compiles seven times faster (it compiles
# the pattern at every match: the longer one takes ≈ 0.5 ms, this one ≈ 0.07).
__shellgate_plain_words='^[[:space:]]*[A-Za-z0-9_][A-Za-z0-9_.+:@%,-]*([[:space:]]+[A-Za-z0-9_.+:@%,/=~-]+)*([[:space:]]*[|][[:space:]]*[A-Za-z0-9_][A-Za-z0-9_.+:@%,-]*([[:space:]]+[A-Za-z0-9_.+:@%,/=~-]+)*)*[[:space:]]*$'
__shellgate_reserved='(^|[|])[[:space:]]*(case|coproc|do|done|elif|else|esac|fi|for|function|if|in|select|then|time|until|while)([[:space:]]|[|]|$)'
unset __shellgate_qs_var __shellgate_qs_arg __shellgate_qs_asg __shellgate_qs_simple

# Sets __shellgate_qs to the shape of line $1 (`fg PIPELINE WORD`), or to nothing when the
# binary must be asked.
__shellgate_quickshape() {
  __shellgate_qs=''
  if ! [[ $1 =~ $__shellgate_plain_words ]]; then
    [[ $1 == *[\$\"\'=]* && $1 =~ $__shellgate_plain ]] || return 0
  fi
  local word=${1#"${1%%[![:space:]]*}"} pipes=${1//[^|]/} name
  [[ -n $pipes && $1 =~ $__shellgate_reserved ]] && return 0
  word=${word%%[[:space:]|]*}
  name=${word%%=*}
  if [[ $word == *=* && $name == [A-Za-z_]* && $name != *[!A-Za-z0-9_]* ]]; then
    word=-
  fi
  case $word in
    case | coproc | do | done | elif | else | 'esac' | fi | for | function | if | in | select | then | time | until | while)
      return 0 ;;
  esac
  __shellgate_qs="fg $((${#pipes} + 1)) $word"
}
