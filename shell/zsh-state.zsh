# The shell's state for shellgate, as records of NUL-separated fields (src/shell/state/zsh.rs
# reads them), from the zsh/parameter hashes: no subshell. The options are read (into a plain
# array: with KSH_ARRAYS an associative copy fails) before `emulate -L zsh` gives this function
# zsh's defaults. The caller sets __shellgate_st to
# "$? ${pipestatus[*]}" first.
__shellgate_dump() {
  local -a __shellgate_o
  __shellgate_o=("${(@kv)options[@]}")
  emulate -L zsh
  local __shellgate_n __shellgate_t
  local -a __shellgate_a
  print -rn -- "shellgate-zsh-state 1"$'\0'
  for __shellgate_n in ${(k)parameters}; do
    [[ $__shellgate_n == __shellgate* ]] && continue
    __shellgate_t=${parameters[$__shellgate_n]}
    # Hidden specials are zsh's own tables; "undefined" ones are parameters of modules not loaded
    # yet (terminfo, userdirs …), which reading would load (and `commands` would hash PATH).
    [[ $__shellgate_t == *hide* || $__shellgate_t == *local* || $__shellgate_t == undefined ]] && continue
    case $__shellgate_t in
      array*|association*)
        if [[ $__shellgate_t == array* ]]; then
          __shellgate_a=("${(@P)__shellgate_n}")
          print -rn -- A$'\0'$__shellgate_n$'\0'$__shellgate_t$'\0'${#__shellgate_a}$'\0'
        else
          __shellgate_a=("${(@kvP)__shellgate_n}")
          print -rn -- H$'\0'$__shellgate_n$'\0'$__shellgate_t$'\0'${#__shellgate_a}$'\0'
        fi
        (( ${#__shellgate_a} )) && print -rn -- "${(pj:\0:)${(@)__shellgate_a//$'\0'}}"$'\0'
        ;;
      *)
        print -rn -- V$'\0'$__shellgate_n$'\0'$__shellgate_t$'\0'"${${(P)__shellgate_n}//$'\0'}"$'\0'
        ;;
    esac
  done
  for __shellgate_n in ${(k)functions}; do
    print -rn -- F$'\0'$__shellgate_n$'\0'"${functions[$__shellgate_n]//$'\0'}"$'\0'
  done
  for __shellgate_n in ${(k)aliases}; do
    print -rn -- L$'\0'a$'\0'$__shellgate_n$'\0'"${aliases[$__shellgate_n]//$'\0'}"$'\0'
  done
  for __shellgate_n in ${(k)galiases}; do
    print -rn -- L$'\0'g$'\0'$__shellgate_n$'\0'"${galiases[$__shellgate_n]//$'\0'}"$'\0'
  done
  for __shellgate_n in ${(k)saliases}; do
    print -rn -- L$'\0's$'\0'$__shellgate_n$'\0'"${saliases[$__shellgate_n]//$'\0'}"$'\0'
  done
  for __shellgate_n __shellgate_t in "${__shellgate_o[@]}"; do
    print -rn -- O$'\0'$__shellgate_n$'\0'$__shellgate_t$'\0'
  done
  print -rn -- U$'\0'
  builtin umask
  print -rn -- $'\0'D$'\0'$PWD$'\0'
  for __shellgate_n in ${(k)dis_builtins}; do
    print -rn -- B$'\0'$__shellgate_n$'\0'
  done
  print -rn -- S$'\0'"${__shellgate_st-}"$'\0'E$'\0'
}
