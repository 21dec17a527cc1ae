# shellgate hook for zsh. Load it from ~/.zshrc (interactive shells) and ~/.zshenv (every zsh,
# including agent shells: zsh -c) with:
#     eval "$(shellgate init zsh)"
# Interactive shells: preexec hands the whole line ($3, after alias and history expansion) to
# `shellgate hook` before any of it runs. Exit status 0 = run it here as typed; 1 = it was handled
# (run in the sandbox, or refused) and the binary has interrupted this shell, which abandons the
# line; anything else = something failed, and the hook interrupts the shell itself.
# zsh -c: the string is run (or refused) by `shellgate run` instead of zsh.
if [[ -z ${__shellgate_loaded-} && -z ${SHELLGATE_ACTIVE-} ]]; then
typeset -g __shellgate_loaded=1
typeset -gr __shellgate_bin=@SHELLGATE_BIN@

if [[ -n ${ZSH_EXECUTION_STRING-} ]]; then
  exec "$__shellgate_bin" run --shell zsh --from-hook -- "$ZSH_EXECUTION_STRING" "$ZSH_ARGZERO" "$@"
elif [[ -o interactive ]]; then
  # Every interactive shell is a session of its own: what a person confirms in it (Full access)
  # ends with it, even for a shell started from a hooked shell.
  export SHELLGATE_SESSION="$("$__shellgate_bin" new-session)"
  __shellgate_preexec() {
    "$__shellgate_bin" hook zsh --pid "$$" -- "$3"
    case $? in
      0 | 1) ;;
      *) builtin kill -INT $$ 2>/dev/null || command kill -INT $$ ;;
    esac
  }
  autoload -Uz add-zsh-hook
  add-zsh-hook preexec __shellgate_preexec
fi
fi
