# The shell's state for shellgate, written by bash's own listing builtins, one section each,
# separated by NUL bytes (src/shell/state/bash.rs reads it). Builtins only: no subshell, no loop.
# The caller sets __shellgate_st to "$? ${PIPESTATUS[*]}" first. `__shellgate_dump names` leaves
# out the functions' bodies (a different header; `declare -F` still names them): what a line that
# may need none of the state is sent first (src/shell/stateless.rs). Bodies are most of a dump
# (bash-completion's are 70 KB).
__shellgate_dump() {
  if [[ ${1-} == names ]]; then
    builtin printf 'shellgate-bash-names 1\0'
  else
    builtin printf 'shellgate-bash-state 1\0'
  fi
  builtin declare -p || :
  builtin printf '\0'
  [[ ${1-} == names ]] || builtin declare -f || :
  builtin printf '\0'
  builtin declare -F || :
  builtin printf '\0'
  builtin alias -p || :
  builtin printf '\0'
  builtin shopt -p || :
  builtin printf '\0'
  builtin set +o || :
  builtin printf '\0'
  builtin umask || :
  builtin printf '\0%s\0' "$PWD"
  builtin compgen -A disabled || :
  builtin printf '\0%s\0' "${__shellgate_st-}"
}
