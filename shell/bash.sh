# shellgate hook for bash (>= 4.4). Load it from ~/.bashrc (interactive shells) and from a file
# named by BASH_ENV (agent shells: bash -c) with the line `shellgate init bash --startup-line`
# prints (the README's), which names the binary by its path and, when the binary is missing, asks
# a person before each line and makes an agent's shell exit 127:
#     eval "$("$HOME/.local/bin/shellgate" init bash 2>/dev/null || echo '...')"  # shellgate
#
# Interactive shells, two paths:
# * A complete line typed at the prompt (the Enter binding asks `shellgate hook --shape`, or sees
#   it is plain words) goes to __shellgate_run instead: for that one line an alias of its first
#   word (or of a zero-width word put in front) expands to `__shellgate_run TOKEN #`, the `#`
#   making the rest a comment, so the screen and history show what was typed. The function dumps
#   the shell's state, calls `shellgate hook bash --shell-dir ...`, which decides, runs the line in
#   the sandbox with that state (or says it runs here), and writes an apply script; the function
#   sources it and returns the line's status. `$?`, PIPESTATUS and the shell's state are the
#   line's.
# * Every other line (continued lines, pasted blocks, `!!`, input not read by readline) meets the
#   backstop: PS0 hands it to `shellgate hook` before any of it runs. Exit status 0 = run the line
#   here as typed; 1 = handled (run in the sandbox, or refused) and the binary has interrupted
#   this shell, so nothing of it runs here ($? is then 130, and no state comes back); anything
#   else = a failure, and the hook interrupts the shell itself.
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
  # The shell's private directory (0700) for its state around each line; without it every line
  # takes the backstop path.
  __shellgate_dir=$("$__shellgate_bin" hook bash --prepare --pid "$$") || __shellgate_dir=''
  __shellgate_gen=0
  __shellgate_rl=''
  __shellgate_histnum=''
  # The line the Enter binding handed to __shellgate_run (empty token: none pending).
  __shellgate_token=''
  # The token of that line, while PS0 may let it through without its check (__shellgate_take).
  builtin declare -gA __shellgate_taken
  __shellgate_line=''
  __shellgate_word=''
  __shellgate_alias=''
  __shellgate_saved=''
  __shellgate_had=''
  __shellgate_expect=''
  __shellgate_histfix=''
  __shellgate_seq=0
  __shellgate_tok=''
  # The prompt's PATH (`__shellgate_pin`), the PATH (and directory) it was made for, the missing
  # entries watched, and the person's PATH while the prompt's is set.
  __shellgate_prompt_path=''
  __shellgate_prompt_for=''
  __shellgate_prompt_pwd=''
  __shellgate_prompt_missing=()
  __shellgate_real_path=''
  __shellgate_path_set=''
  __shellgate_prompt_git=''
  __shellgate_git_set=''
  __shellgate_git_told=''
  __shellgate_root=''
  __shellgate_prompt_root=''
  # A line run once outside: the names it made refuse, its PATH and the person's (`__shellgate_outside_end`).
  __shellgate_nowhere=()
  __shellgate_outside_ordered=''
  __shellgate_outside_path=''
  __shellgate_st=''
  __shellgate_status=0
  __shellgate_backstop=''
  __shellgate_pipestatus=()
  __shellgate_done=''
  # Whether the line the binding took is sent the state's names first, which dump, and the token
  # shellgate answered "the whole state" for (__shellgate_run).
  __shellgate_light=''
  __shellgate_qs=''
  __shellgate_what=''
  __shellgate_more=''
  # The word put in front of a line whose first word cannot be an alias (`./run.sh`, `FOO=1 x`,
  # `for …`): U+2060 WORD JOINER, zero-width, in a UTF-8 terminal.
  case ${LC_ALL:-${LC_CTYPE:-${LANG:-}}} in
    *[Uu][Tt][Ff]-8* | *[Uu][Tt][Ff]8*) __shellgate_prefix=$'\xe2\x81\xa0' ;;
    *) __shellgate_prefix='__shellgate_line' ;;
  esac
@SHELLGATE_BASH_SHAPE@

@SHELLGATE_BASH_DUMP@

  # The binary is gone (`shellgate uninstall`, or removed by hand) while this shell runs: the
  # person is asked on the terminal before each line whether to run it ungated. No terminal, or
  # anything but yes, and the line does not run.
  __shellgate_gone() {
    local answer=''
    builtin printf 'shellgate is gone (%s was removed): this shell is not gated any more; new shells start without it\n' "$__shellgate_bin" >&2
    builtin read -rp 'Run this line without it? [y/N] ' answer </dev/tty && [[ $answer == [yY]* ]] && return 0
    builtin kill -INT $$ 2>/dev/null || command kill -INT $$
  }

  # Bound to Enter: collects the text readline accepted, across PS2 continuation lines, and hands
  # a complete line typed at the prompt to __shellgate_run.
  __shellgate_capture() {
    __shellgate_untake
    __shellgate_unpin
    __shellgate_heal
    [[ -x $__shellgate_bin ]] || return 0
    if [[ -n $__shellgate_rl ]]; then
      __shellgate_rl+=$'\n'${READLINE_LINE}
      return 0
    fi
    __shellgate_rl=$READLINE_LINE
    # An empty line runs nothing, and the person's own PROMPT_COMMAND entries may run before the
    # hook's: the prompt's PATH and git are set here (a job may have made a repository here).
    if [[ $READLINE_LINE != *[![:space:]]* ]]; then
      __shellgate_pin
      return 0
    fi
    # Only one line typed at the prompt (a pasted block takes the backstop path, decided once).
    [[ -n $__shellgate_dir && $READLINE_LINE == *[![:space:]]* && $READLINE_LINE != *$'\n'* ]] || return 0
    builtin shopt -q expand_aliases && builtin shopt -q interactive_comments || return 0
    if [[ -n $__shellgate_hist && ( $READLINE_LINE == *'!'* || $READLINE_LINE == '^'* ) ]]; then
      __shellgate_expand
    fi
    local shape word
    __shellgate_quickshape "$READLINE_LINE"
    if [[ -n $__shellgate_qs ]]; then
      shape=$__shellgate_qs
    else
      shape=$("$__shellgate_bin" hook bash --shape ${__shellgate_hist:+--histexpand} -- "$READLINE_LINE" 2>/dev/null) || return 0
    fi
    # Whether __shellgate_run sends the state's names first: shellgate runs a line that needs
    # none of the state without it (src/shell/stateless.rs decides, and asks for the whole state
    # when the line needs it). A line that surely needs it (a character whose meaning depends on
    # the state, a `$` but in `$NAME` and `${NAME}`; a builtin, function or assignment first; an
    # option set that changes how a line runs) gets the whole state at once.
    __shellgate_light=''
    word=${READLINE_LINE#"${READLINE_LINE%%[![:space:]]*}"}
    word=${word%%[[:space:]]*}
    if @SHELLGATE_BASH_STATELESS_SHELL@ &&
      [[ $READLINE_LINE != *@SHELLGATE_BASH_STATEFUL_CHARACTERS@* && $word != *=* ]] &&
      [[ $READLINE_LINE != *'$'[!A-Za-z_'{']* && $READLINE_LINE != *'$' &&
        $READLINE_LINE != *[!\$]'{'* && $READLINE_LINE != '{'* ]] &&
      ! builtin declare -F -- "$word" >/dev/null; then
      case $word in
        @SHELLGATE_BASH_OTHER_BUILTINS@) ;;
        *) __shellgate_light=1 ;;
      esac
    fi
    __shellgate_take "$shape"
  }

  # History expansion (`!!`, `!-2`, `!$`, `^old^new`), done here as bash would do it after Enter,
  # so that the expanded line is decided and run like any other line and bash finds nothing left
  # to expand. The line is left as typed — and the rest of the binding treats it as before (the
  # shape says whether a `!` may still expand; if so, bash and the backstop have it) — when bash
  # would do more than expand (`histverify` lets the person edit the result, a `:p` modifier only
  # prints it), when history is off, when expansion fails (bash then says why and runs nothing),
  # when nothing expands (a quoted `!`), and when the result still holds a `!`.
  # `history -p` drops the last entry first when the last line was recorded (it takes that entry
  # for its own command line); here, in the Enter binding, no line of its own was: a placeholder
  # entry is added and deleted first, in the substitution's subshell only, which leaves nothing to
  # drop (bash >= 5.0 for `history -d -1`; older, the placeholder shows and the line is left).
  __shellgate_expand() {
    local expanded
    builtin shopt -q histverify && return 0
    [[ -o history && $READLINE_LINE != *:p* ]] || return 0
    expanded=$(
      HISTCONTROL='' HISTIGNORE=''
      builtin history -s -- __shellgate_placeholder && builtin history -d -1 &&
        builtin history -p -- "$READLINE_LINE"
    ) 2>/dev/null || return 0
    [[ -n $expanded && $expanded != "$READLINE_LINE" && $expanded != *__shellgate_placeholder* &&
      $expanded != *'!'* && $expanded != '^'* && $expanded != *$'\n'* ]] || return 0
    READLINE_LINE=$expanded
    READLINE_POINT=${#expanded}
    __shellgate_rl=$expanded
  }

  # Hands the line to __shellgate_run (see the top of this file). $1: `fg|bg PIPELINE WORD|-`.
  __shellgate_take() {
    local kind=${1%% *} rest=${1#* } pipes word call i tail=''
    pipes=${rest%% *}
    word=${rest#* }
    __shellgate_seq=$((__shellgate_seq + 1))
    __shellgate_token=${SRANDOM:-$RANDOM}${__shellgate_seq}
    # The typed line goes along, quoted, only to be shown by `jobs`; the function ignores it.
    call="__shellgate_run $__shellgate_token ${READLINE_LINE@Q}"
    if [[ $kind == bg ]]; then
      call+=' &'
    elif ((pipes > 1)); then
      for ((i = 0; i < pipes; i++)); do
        tail+="${tail:+ | }__shellgate_pipe $i"
      done
      call+="; $tail"
    fi
    __shellgate_line=$READLINE_LINE
    __shellgate_histfix=''
    if [[ $word == - || $word == __shellgate* ]]; then
      word=$__shellgate_prefix
      READLINE_LINE="$word $READLINE_LINE"
      READLINE_POINT=$((READLINE_POINT + ${#word} + 1))
      __shellgate_histfix=$READLINE_LINE
    fi
    __shellgate_word=$word
    __shellgate_had=''
    __shellgate_saved=''
    if [[ -n ${BASH_ALIASES[$word]+x} ]]; then
      __shellgate_had=1
      __shellgate_saved=${BASH_ALIASES[$word]}
    fi
    __shellgate_alias="$call #"
    BASH_ALIASES[$word]=$__shellgate_alias
    __shellgate_expect=$READLINE_LINE
    __shellgate_rl=$READLINE_LINE
    # PS0 lets exactly this line through without forking its check when the line bash runs is
    # the one set up here: nothing but readline runs between this binding and PS0, and history
    # expansion, the one change bash makes to an accepted line, cannot apply to it (a
    # continuation line runs the binding again, which clears this first).
    if [[ -z $__shellgate_hist || ( $READLINE_LINE != *'!'* && $READLINE_LINE != '^'* ) ]]; then
      __shellgate_taken[$__shellgate_token]=''
    fi
  }

  # No line is let through PS0 unchecked: an associative array again, empty (whatever it was).
  __shellgate_untake() {
    builtin unset __shellgate_taken
    builtin declare -gA __shellgate_taken
  }

  # Puts back the person's alias the line's first word had (or none).
  __shellgate_restore() {
    [[ -n $__shellgate_word ]] || return 0
    if [[ -n $__shellgate_had ]]; then
      BASH_ALIASES[$__shellgate_word]=$__shellgate_saved
    else
      builtin unalias -- "$__shellgate_word" 2>/dev/null || :
    fi
    __shellgate_word=''
  }

  # History records what was typed: a line with a word put in front is replaced by its text
  # (`history -s` removes the last entry, this line's, before it adds; the person's HISTCONTROL
  # and HISTIGNORE apply to the text).
  __shellgate_fixhist() {
    [[ -n $__shellgate_histfix ]] || return 0
    __shellgate_histfix=''
    if [[ -o history ]]; then
      builtin history -s -- "$__shellgate_line"
    fi
    return 0
  }

  # The line the Enter binding took: runs it through `shellgate hook` with this shell's state and
  # applies what the hook wrote. It runs only the pending line (the token must match), and only
  # what the hook's apply script says.
  __shellgate_run() {
    __shellgate_st="$? ${PIPESTATUS[*]}"
    # After a line the backstop handled, `$?` is that line's, not the 130 of its interruption.
    [[ -z $__shellgate_backstop ]] || __shellgate_st=$__shellgate_backstop
    if [[ -z $__shellgate_token || ${1-} != "$__shellgate_token" ]]; then
      builtin printf '%s\n' 'shellgate: __shellgate_run runs only a line the hook took from the prompt' >&2
      return 126
    fi
    __shellgate_tok=$__shellgate_token
    __shellgate_token=''
    __shellgate_untake
    __shellgate_restore
    __shellgate_bg=''
    if [[ $BASHPID == "$$" ]]; then
      __shellgate_fixhist
    else
      __shellgate_bg=1
    fi
    if [[ $__shellgate_line == *history* ]]; then
      builtin history -w "$__shellgate_dir/$__shellgate_tok.history" 2>/dev/null || :
    fi
    # The state's names first when the line may need none of it (see __shellgate_capture); the
    # whole state when it does, or when shellgate asks for it (`__shellgate_more`: nothing ran).
    __shellgate_what=''
    [[ -n $__shellgate_light && -z $__shellgate_bg ]] && __shellgate_what=names
    __shellgate_light=''
    while :; do
      __shellgate_dump ${__shellgate_what:+"$__shellgate_what"} >|"$__shellgate_dir/$__shellgate_tok.snapshot"
      # A job stopped inside a loop (Ctrl-Z) makes bash leave the loop at once: the assignment
      # after the call never runs, and the line's status is then the stop's (128 + SIGTSTP).
      __shellgate_status=148
      "$__shellgate_bin" hook bash --pid "$$" --shell-dir "$__shellgate_dir" --token "$__shellgate_tok" ${__shellgate_bg:+--background} -- "$__shellgate_line"
      __shellgate_status=$?
      __shellgate_done='' __shellgate_more=''
      if [[ -f $__shellgate_dir/$__shellgate_tok.apply ]]; then
        builtin source "$__shellgate_dir/$__shellgate_tok.apply"
      fi
      [[ -n $__shellgate_what && $__shellgate_more == "$__shellgate_tok" ]] || break
      __shellgate_what=''
    done
    # The line is done: the next Enter starts a new one, even if the prompt hook was removed.
    __shellgate_rl=''
    __shellgate_bg=''
    if [[ $__shellgate_done != "$__shellgate_tok" ]]; then
      case $__shellgate_status in
        145 | 148 | 149 | 150)
          builtin printf '%s\n' 'shellgate: the line is stopped; `fg` continues it (its changes will not be applied to this shell)' >&2 ;;
        *)
          builtin printf 'shellgate: the gate failed (status %s); the line may not have run\n' "$__shellgate_status" >&2
          ((__shellgate_status)) || __shellgate_status=219 ;;
      esac
      __shellgate_pipestatus=("$__shellgate_status")
    fi
    # The prompt's PATH and git now, not only from PROMPT_COMMAND: the person's own entries may
    # run before the hook's (a git prompt).
    __shellgate_pin
    return "$__shellgate_status"
  }

  # One element of a pipeline line's PIPESTATUS (the line's tail is a pipeline of these).
  __shellgate_pipe() {
    return "${__shellgate_pipestatus[$1]:-$__shellgate_status}"
  }

  # `$?` as the previous line left it, for a line that runs in the shell.
  __shellgate_ret() {
    return "$1"
  }

  # Re-installs the prompt hook if something removed it from PROMPT_COMMAND (without a
  # subshell: this runs on every Enter).
  __shellgate_heal() {
    # PROMPT_COMMAND is an array in bash >= 5.1 when the user made it one, else a string: both
    # forms are handled, which shellcheck cannot tell.
    # shellcheck disable=SC2128,SC2178
    case " ${PROMPT_COMMAND[*]-} " in
      *__shellgate_precmd*) ;;
      *)
        if builtin declare -p PROMPT_COMMAND >/dev/null 2>&1 && [[ ${PROMPT_COMMAND@a} == *a* ]]; then
          PROMPT_COMMAND+=(__shellgate_precmd)
        else
          PROMPT_COMMAND="__shellgate_precmd${PROMPT_COMMAND:+$'\n'$PROMPT_COMMAND}"
        fi
        ;;
    esac
  }

  # While Full access is on in this session, a line before every prompt says so (the marker file
  # `shellgate mode full` writes beside this shell's directory: its end in Unix seconds, 0 for the
  # session). Builtins only; the session log, not this file, decides the mode.
  __shellgate_mark() {
    local end='' now left f=${__shellgate_dir%-*}.full-access
    [[ -n $__shellgate_dir && -f $f ]] || return 0
    builtin read -r end <"$f" 2>/dev/null
    [[ $end =~ ^[0-9]+$ ]] || return 0
    builtin printf -v now '%(%s)T' -1
    if ((end == 0)); then
      builtin printf '%s\n' '[shellgate: FULL ACCESS for this session: lines run unsandboxed; `shellgate mode ask` ends it]' >&2
    elif ((end > now)); then
      left=$((end - now))
      builtin printf '[shellgate: FULL ACCESS, %dm%02ds left: lines run unsandboxed]\n' $((left / 60)) $((left % 60)) >&2
    fi
  }

  # Runs before every prompt: a new generation of input begins, and whatever the last line left
  # pending (a background line's alias and history) is put right.
  __shellgate_precmd() {
    local status=$? outcome='' f="$__shellgate_dir/$__shellgate_gen.backstop"
    # A line the backstop ran or refused ends with the SIGINT that kept the shell from running it
    # ($? 130; bash keeps that for the prompt, whatever this function returns): its own status is
    # in the file the backstop wrote for this generation, and the next line gets it as its `$?`
    # (a later generation never reads the file; old files are cleaned up with the function's).
    __shellgate_backstop=''
    if [[ -n $__shellgate_dir && -f $f ]] && builtin read -r outcome <"$f"; then
      case $outcome in
        'ran '[0-9]* | 'refused '[0-9]*) __shellgate_backstop=${outcome#* } ;;
      esac
    fi
    __shellgate_gen=$((__shellgate_gen + 1))
    __shellgate_rl=''
    __shellgate_token=''
    __shellgate_untake
    __shellgate_restore
    __shellgate_fixhist
    [[ $- == *H* ]] && __shellgate_hist=1 || __shellgate_hist=''
    # The number the next history entry gets: PS0 sees it advance when the line was recorded.
    __shellgate_histnum=${HISTCMD-}
    __shellgate_mark
    __shellgate_pin
    return "$status"
  }

  # While the prompt is up, PATH has the directories lines may write (a venv's `bin`, `.`) moved
  # to its end (`shellgate hook --prompt-path`): the prompt, its command and completion find every
  # name a directory lines cannot write has there, whatever a line puts in the others. Computed
  # again when PATH changes or a missing entry appears; the Enter binding puts PATH back.
  __shellgate_pin() {
    local p stale=''
    # Set already at the end of the line this prompt follows, and nothing changed since.
    if [[ -n $__shellgate_path_set && $PATH == "$__shellgate_prompt_path" && $PWD == "$__shellgate_prompt_pwd" ]]; then
      return 0
    fi
    __shellgate_outside_end
    __shellgate_unpin
    __shellgate_repo_root
    if [[ $PATH != "$__shellgate_prompt_for" || $PWD != "$__shellgate_prompt_pwd" || $__shellgate_root != "$__shellgate_prompt_root" ]]; then
      stale=1
    fi
    for p in "${__shellgate_prompt_missing[@]}"; do
      [[ -e $p ]] && stale=1
    done
    if [[ -n $stale ]]; then
      __shellgate_judge
      # Without an answer, the system's directories alone: nothing of the person's runs unasked.
      [[ -n $__shellgate_prompt_path ]] || __shellgate_prompt_path=/usr/local/bin:/usr/bin:/bin
    fi
    __shellgate_real_path=$PATH
    __shellgate_path_set=1
    [[ $PATH == "$__shellgate_prompt_path" ]] || PATH=$__shellgate_prompt_path
    __shellgate_pin_git
  }

@SHELLGATE_REPO_ROOT@

  # Asks the binary for the prompt's PATH and the repository its git must not read, for this
  # PATH and directory (__shellgate_root, found first), and records what it asked for. Until the
  # answer says otherwise, the prompt's git reads no repository (fails closed).
  __shellgate_judge() {
    __shellgate_prompt_path='' __shellgate_prompt_git=unknown
    builtin eval -- "$("$__shellgate_bin" hook bash --prompt-path)" || :
    # The directory as this shell names it (through a symlink, the binary sees another name).
    __shellgate_prompt_pwd=$PWD __shellgate_prompt_root=$__shellgate_root
  }

  # A repository lines may have written (src/shell/prompt_path.rs): the prompt's git finds none,
  # and the person is told once per repository. A GIT_DIR of the person's own is left alone.
  __shellgate_pin_git() {
    [[ -n $__shellgate_prompt_git && -z ${GIT_DIR+x} ]] || return 0
    builtin export GIT_DIR=/dev/null
    __shellgate_git_set=1
    if [[ $__shellgate_prompt_git != unknown && $__shellgate_prompt_git != "$__shellgate_git_told" ]]; then
      __shellgate_git_told=$__shellgate_prompt_git
      local m="your prompt's git does not read the repository at $__shellgate_prompt_git: lines may have written it (a temp dir, or nested in a workspace); git in a line you type still does, in the sandbox"
      builtin printf 'shellgate: %s\n' "$m" >&2
    fi
  }

  # The end of a line run once outside the sandbox (its apply calls this last; so does the next
  # precmd, after a line interrupted before its end): the names it made refuse are removed, and
  # the PATH it ran with is the person's again unless the line changed it.
  __shellgate_outside_end() {
    local n
    for n in "${__shellgate_nowhere[@]}"; do
      builtin unset -f -- "$n" 2>/dev/null
    done
    __shellgate_nowhere=()
    [[ -z $__shellgate_outside_ordered || $PATH != "$__shellgate_outside_ordered" ]] || PATH=$__shellgate_outside_path
    __shellgate_outside_ordered=''
  }

  # The person's PATH again, unless the prompt's own code changed it (then that change stays).
  __shellgate_unpin() {
    if [[ -n $__shellgate_git_set ]]; then
      __shellgate_git_set=''
      [[ ${GIT_DIR-} != /dev/null ]] || builtin unset GIT_DIR
    fi
    [[ -n $__shellgate_path_set ]] || return 0
    __shellgate_path_set=''
    [[ $PATH != "$__shellgate_prompt_path" || $PATH == "$__shellgate_real_path" ]] || PATH=$__shellgate_real_path
  }

  # Expanded by PS0 in a forked command substitution, after a complete command was read and
  # before any of it runs. It prints nothing.
  __shellgate_ps0() {
    local line='' now=${HISTCMD-} h
    if [[ -n $__shellgate_rl ]] && ! { [[ $- == *H* ]] && [[ $__shellgate_rl == *'!'* || $__shellgate_rl == '^'* ]]; }; then
      line=$__shellgate_rl
    elif [[ -n $now && $now != "$__shellgate_histnum" ]]; then
      h=$(HISTTIMEFORMAT='' builtin history 1)
      h=${h#"${h%%[![:space:]]*}"}
      h=${h#"${h%%[!0-9]*}"}
      line=${h#"${h%%[![:space:]]*}"}
    elif [[ -n $__shellgate_rl ]]; then
      # History expansion that history did not record (`!!` repeating the last line under
      # ignoredups, a leading space under ignorespace, HISTIGNORE): expanded as bash just did,
      # against the same history list, which this line has not joined.
      line=$(builtin history -p -- "$__shellgate_rl" 2>/dev/null) || line=''
    fi
    # The line the Enter binding handed to __shellgate_run, exactly: it gates itself.
    if [[ -n $__shellgate_token && -n $__shellgate_word && $line == "$__shellgate_expect" ]] &&
      [[ ${BASH_ALIASES[$__shellgate_word]-} == "$__shellgate_alias" ]]; then
      return 0
    fi
    if [[ ! -x $__shellgate_bin ]]; then
      __shellgate_gone
      return 0
    fi
    if [[ $(builtin trap -p INT) == *"''"* ]]; then
      builtin printf '%s\n' "shellgate: SIGINT is ignored in this shell, so a refused line could not be stopped; closing the shell." >&2
      builtin kill -KILL $$
    fi
    "$__shellgate_bin" hook bash --pid "$$" --generation "$__shellgate_gen" --tty-stdio \
      ${__shellgate_dir:+--status-file "$__shellgate_dir/$__shellgate_gen.backstop"} -- "$line"
    case $? in
      0 | 1) ;;
      *) builtin kill -INT $$ 2>/dev/null || command kill -INT $$ ;;
    esac
  }

  __shellgate_heal
  [[ $- == *H* ]] && __shellgate_hist=1 || __shellgate_hist=''
  # The backstop, forked for every line but the one the Enter binding took (see
  # __shellgate_take): the token is digits, or 0 for none, which is never taken.
  PS0='${__shellgate_taken[${__shellgate_token:-0}]-$(__shellgate_ps0)}'"${PS0-}"
  if [[ -o emacs || -o vi ]]; then
    for __shellgate_map in emacs vi-insert vi-command; do
      builtin bind -m "$__shellgate_map" -x '"\C-x\C-_S\a": __shellgate_capture'
      builtin bind -m "$__shellgate_map" '"\C-x\C-_A\a": accept-line'
      builtin bind -m "$__shellgate_map" '"\C-m": "\C-x\C-_S\a\C-x\C-_A\a"'
      builtin bind -m "$__shellgate_map" '"\C-j": "\C-x\C-_S\a\C-x\C-_A\a"'
    done
    unset __shellgate_map
  fi
  # The first prompt's git too, before any prompt code of the person's runs (bash may run the person's
  # PROMPT_COMMAND entries before the hook's):
  # no repository lines may have written, from the start. (PATH is left as it is: the rest of
  # the startup file may still change it.)
  __shellgate_repo_root
  __shellgate_judge 2>/dev/null
  __shellgate_pin_git
  readonly PS0 __shellgate_bin __shellgate_dir __shellgate_prefix __shellgate_plain __shellgate_plain_words \
    __shellgate_reserved
  readonly -f __shellgate_capture __shellgate_expand __shellgate_take __shellgate_restore __shellgate_fixhist \
    __shellgate_run __shellgate_pipe __shellgate_ret __shellgate_dump __shellgate_untake \
    __shellgate_heal __shellgate_precmd __shellgate_ps0 __shellgate_mark __shellgate_gone __shellgate_pin __shellgate_unpin __shellgate_outside_end \
    __shellgate_quickshape __shellgate_pin_git __shellgate_repo_root __shellgate_judge
else
  # A script file or standard input: its text is not known here, so it is refused unless it runs
  # inside a line shellgate already approved (SHELLGATE_ACTIVE, checked above).
  "$__shellgate_bin" run --shell bash --from-hook --script -- "${0}" "$@"
  exit $?
fi
fi
