# The shell's state for shellgate, written by bash's own listing builtins, one section each,
# separated by NUL bytes (src/shell/state/bash.rs reads it). Builtins only: no subshell, no loop.
# The caller sets __shellgate_st to "$? ${PIPESTATUS[*]}" first.
__shellgate_dump() {
  builtin printf 'shellgate-bash-state 1\0'
  builtin declare -p || :
  builtin printf '\0'
  builtin declare -f || :
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
