# shellgate hook for bash (>= 4.4). Load it from ~/.bashrc (interactive shells) and from
# ~/.bash_profile or BASH_ENV (agent shells: bash -c / bash -lc) with:
#     eval "$(shellgate init bash)"
# Interactive shells: PS0 hands every line to `shellgate hook` before any part of it runs. The
# binary answers with its exit status: 0 = run the line here as typed; 1 = the line was handled
# (run in the sandbox, or refused) and the binary has interrupted this shell, so nothing of it
# runs here; anything else = something failed, and the hook interrupts the shell itself.
# Non-interactive shells: the -c string is run (or refused) by `shellgate run` instead of bash.
if [[ -z ${__shellgate_loaded-} && -z ${SHELLGATE_ACTIVE-} ]]; then
__shellgate_loaded=1
__shellgate_bin=@SHELLGATE_BIN@

if [[ -n ${BASH_EXECUTION_STRING+x} ]]; then
  # bash -c / -lc / -ic: the string is what would run.
  exec "$__shellgate_bin" run --shell bash --from-hook -- "$BASH_EXECUTION_STRING" "$0" "$@"
elif [[ $- == *i* ]]; then
  # Every interactive shell is a session of its own: what a person confirms in it (Full access)
  # ends with it, even for a shell started from a hooked shell.
  SHELLGATE_SESSION=$("$__shellgate_bin" new-session) || SHELLGATE_SESSION=''
  export SHELLGATE_SESSION
  __shellgate_gen=0
  __shellgate_rl=''
  __shellgate_histnum=''

  # Bound to Enter: collects the text readline accepted, across PS2 continuation lines.
  __shellgate_capture() {
    __shellgate_rl+=${__shellgate_rl:+$'\n'}${READLINE_LINE}
    __shellgate_heal
  }

  # The number of the newest history entry (empty when history is off).
  __shellgate_histnumber() {
    local h
    h=$(HISTTIMEFORMAT='' builtin history 1 2>/dev/null) || return 0
    h=${h#"${h%%[![:space:]]*}"}
    builtin printf '%s' "${h%%[!0-9]*}"
  }

  # Re-installs the prompt hook if something removed it from PROMPT_COMMAND.
  __shellgate_heal() {
    local pc
    pc=$(builtin declare -p PROMPT_COMMAND 2>/dev/null) || pc=''
    # PROMPT_COMMAND is an array in bash >= 5.1 when the user made it one, else a string: both
    # forms are handled, which shellcheck cannot tell.
    # shellcheck disable=SC2128,SC2178
    case $pc in
      *__shellgate_precmd*) ;;
      'declare -a'*) PROMPT_COMMAND+=(__shellgate_precmd) ;;
      *) PROMPT_COMMAND="__shellgate_precmd${PROMPT_COMMAND:+$'\n'$PROMPT_COMMAND}" ;;
    esac
  }

  # Runs before every prompt: a new generation of input begins.
  __shellgate_precmd() {
    local status=$?
    __shellgate_gen=$((__shellgate_gen + 1))
    __shellgate_rl=''
    __shellgate_histnum=$(__shellgate_histnumber)
    return "$status"
  }

  # Expanded by PS0 in a forked command substitution, after a complete command was read and
  # before any of it runs. It prints nothing.
  __shellgate_ps0() {
    local line='' now h
    now=$(__shellgate_histnumber)
    if [[ -n $__shellgate_rl ]] && ! { [[ $- == *H* ]] && [[ $__shellgate_rl == *'!'* || $__shellgate_rl == '^'* ]]; }; then
      line=$__shellgate_rl
    elif [[ -n $now && $now != "$__shellgate_histnum" ]]; then
      h=$(HISTTIMEFORMAT='' builtin history 1)
      h=${h#"${h%%[![:space:]]*}"}
      h=${h#"${h%%[!0-9]*}"}
      line=${h#"${h%%[![:space:]]*}"}
    fi
    if [[ $(builtin trap -p INT) == *"''"* ]]; then
      builtin printf '%s\n' "shellgate: SIGINT is ignored in this shell, so a refused line could not be stopped; closing the shell." >&2
      builtin kill -KILL $$
    fi
    "$__shellgate_bin" hook bash --pid "$$" --generation "$__shellgate_gen" --tty-stdio -- "$line"
    case $? in
      0 | 1) ;;
      *) builtin kill -INT $$ 2>/dev/null || command kill -INT $$ ;;
    esac
  }

  __shellgate_heal
  PS0='$(__shellgate_ps0)'"${PS0-}"
  if [[ -o emacs || -o vi ]]; then
    for __shellgate_map in emacs vi-insert; do
      builtin bind -m "$__shellgate_map" -x '"\C-x\C-_S\a": __shellgate_capture'
      builtin bind -m "$__shellgate_map" '"\C-x\C-_A\a": accept-line'
      builtin bind -m "$__shellgate_map" '"\C-m": "\C-x\C-_S\a\C-x\C-_A\a"'
      builtin bind -m "$__shellgate_map" '"\C-j": "\C-x\C-_S\a\C-x\C-_A\a"'
    done
    unset __shellgate_map
  fi
  readonly PS0 __shellgate_bin
  readonly -f __shellgate_capture __shellgate_histnumber __shellgate_heal __shellgate_precmd __shellgate_ps0
else
  # A script file or standard input: its text is not known here, so it is refused unless it runs
  # inside a line shellgate already approved (SHELLGATE_ACTIVE, checked above).
  "$__shellgate_bin" run --shell bash --from-hook --script -- "${0}" "$@"
  exit $?
fi
fi
