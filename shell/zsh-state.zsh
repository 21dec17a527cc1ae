# The shell's state for shellgate, as records of NUL-separated fields (src/shell/state/zsh.rs
# reads them), from the zsh/parameter hashes: no subshell. The options are read (into a plain
# array: with KSH_ARRAYS an associative copy fails) before `emulate -L zsh` gives this function
# zsh's defaults. The records are gathered in one array and written with one `print`, and
# functions, aliases and options are a record each (its field count, then names and values): a
# `print` per record was a write each, and a shell with compinit has about a thousand functions
# (6.7 ms a dump that way, 4.3 ms this way). The caller sets __shellgate_st to
# "$? ${pipestatus[*]}" first.
#
# `__shellgate_dump names LINE` is the names of the state only (a different header): parameters
# with their type (and the values of CDPATH, IFS and each scalar the line names as `$NAME` or
# `${NAME}`), function names, and the aliases, options, directory, umask and status whole. It is
# what a line that may need none of the state is sent first (src/shell/stateless.rs): a tenth of
# the whole dump's cost, which is mostly reading every value and function body.
__shellgate_dump() {
  local -a __shellgate_o
  __shellgate_o=("${(@kv)options[@]}")
  emulate -L zsh
  local __shellgate_n __shellgate_t
  local -a __shellgate_a __shellgate_r
  if [[ ${1-} == names ]]; then
    __shellgate_a=("${(@kv)parameters}")
    __shellgate_r=("shellgate-zsh-names 1" NS ${#__shellgate_a} "${__shellgate_a[@]}")
    # The values the check reads: CDPATH (with autocd, a name may be found through it), IFS, and
    # each scalar the line may expand (the text after each `$`, to the end of a name).
    __shellgate_r+=(V CDPATH "${parameters[CDPATH]-scalar}" "${CDPATH-}")
    for __shellgate_n in IFS ${(u)${${${(@s:$:)2}[2,-1]}#\{}%%[^A-Za-z0-9_]*}; do
      __shellgate_t=${parameters[$__shellgate_n]-}
      [[ $__shellgate_n != __shellgate* && $__shellgate_t == scalar* ]] || continue
      __shellgate_r+=(V $__shellgate_n $__shellgate_t "${${(P)__shellgate_n}//$'\0'}")
    done
    __shellgate_a=("${(@k)functions}")
    __shellgate_r+=(FN ${#__shellgate_a} "${__shellgate_a[@]}")
  else
    __shellgate_r=("shellgate-zsh-state 1")
    for __shellgate_n in ${(k)parameters}; do
      [[ $__shellgate_n == __shellgate* ]] && continue
      __shellgate_t=${parameters[$__shellgate_n]}
      # Hidden specials are zsh's own tables; "undefined" ones are parameters of modules not loaded
      # yet (terminfo, userdirs …), which reading would load (and `commands` would hash PATH).
      [[ $__shellgate_t == *hide* || $__shellgate_t == *local* || $__shellgate_t == undefined ]] && continue
      case $__shellgate_t in
        array*)
          __shellgate_a=("${(@P)__shellgate_n}")
          __shellgate_r+=(A $__shellgate_n $__shellgate_t ${#__shellgate_a} "${(@)__shellgate_a//$'\0'}")
          ;;
        association*)
          __shellgate_a=("${(@kvP)__shellgate_n}")
          __shellgate_r+=(H $__shellgate_n $__shellgate_t ${#__shellgate_a} "${(@)__shellgate_a//$'\0'}")
          ;;
        *)
          __shellgate_r+=(V $__shellgate_n $__shellgate_t "${${(P)__shellgate_n}//$'\0'}")
          ;;
      esac
    done
    __shellgate_a=("${(@kv)functions}")
    __shellgate_r+=(FS ${#__shellgate_a} "${(@)__shellgate_a//$'\0'}")
  fi
  __shellgate_a=("${(@kv)aliases}")
  __shellgate_r+=(LS a ${#__shellgate_a} "${(@)__shellgate_a//$'\0'}")
  __shellgate_a=("${(@kv)galiases}")
  __shellgate_r+=(LS g ${#__shellgate_a} "${(@)__shellgate_a//$'\0'}")
  __shellgate_a=("${(@kv)saliases}")
  __shellgate_r+=(LS s ${#__shellgate_a} "${(@)__shellgate_a//$'\0'}")
  __shellgate_r+=(OS ${#__shellgate_o} "${__shellgate_o[@]}")
  print -rn -- "${(pj:\0:)__shellgate_r}"$'\0'U$'\0'
  builtin umask
  print -rn -- $'\0'D$'\0'$PWD$'\0'
  for __shellgate_n in ${(k)dis_builtins}; do
    print -rn -- B$'\0'$__shellgate_n$'\0'
  done
  print -rn -- S$'\0'"${__shellgate_st-}"$'\0'E$'\0'
}
