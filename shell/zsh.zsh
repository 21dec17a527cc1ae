# shellgate hook for zsh. Load it from ~/.zshrc (interactive shells) and ~/.zshenv (every zsh,
# including agent shells: zsh -c) with the line `shellgate init zsh --startup-line` prints (the
# README's), which names the binary by its path and, when the binary is missing, asks a person
# before each line and makes an agent's shell exit 127:
#     eval "$("$HOME/.local/bin/shellgate" init zsh 2>/dev/null || echo '...')"  # shellgate
#
# Interactive shells, two paths:
# * A complete line typed at the prompt (zsh's own parser accepts it as a function body) goes to
#   __shellgate_run: the accept-line widget makes, for that one line, an alias of its first word
#   (or of a zero-width word put in front) expand to `__shellgate_run TOKEN #`, with
#   interactivecomments on so the rest is a comment: the screen and history show what was typed.
#   The function dumps the shell's state and calls `shellgate hook zsh --shell-dir ...`, which
#   decides, runs the line in the sandbox with that state (or says it runs here), and writes an
#   apply script; the function sources it and returns the line's status. `$?`, pipestatus, `%?`
#   and the shell's state are the line's.
# * Every other line meets the backstop: preexec hands the whole line ($3, after alias and
#   history expansion) to `shellgate hook` before any of it runs. Exit status 0 = run it here as
#   typed; 1 = handled (run in the sandbox, or refused) and the binary has interrupted this
#   shell, which abandons the line (no state comes back); anything else = a failure, and the hook
#   interrupts the shell itself. preexec lets through exactly the function's call ($3 is what
#   will run), nothing else.
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
  # The shell's private directory (0700) for its state around each line; without it every line
  # takes the backstop path.
  typeset -gr __shellgate_dir="$("$__shellgate_bin" hook zsh --prepare --pid $$)"
  typeset -g __shellgate_token='' __shellgate_line='' __shellgate_word='' __shellgate_alias=''
  typeset -g __shellgate_saved='' __shellgate_had='' __shellgate_expect='' __shellgate_comments=''
  typeset -g __shellgate_histfix='' __shellgate_tok='' __shellgate_st='' __shellgate_done=''
  typeset -g __shellgate_light='' __shellgate_more=''
  typeset -gi __shellgate_seq=0 __shellgate_status=0
  typeset -ga __shellgate_pipestatus __shellgate_shape
  # The word put in front of a line whose first word cannot be an alias (`FOO=1 cmd`, `(cd x)`,
  # a quoted word): U+2009 THIN SPACE in a UTF-8 terminal (zle shows zero-width characters as
  # `<2060>`, so this one shows as a space).
  if [[ ${LC_ALL:-${LC_CTYPE:-${LANG:-}}} == *[Uu][Tt][Ff](-|)8* ]]; then
    typeset -gr __shellgate_prefix=$'\u2009'
  else
    typeset -gr __shellgate_prefix='__shellgate_line'
  fi

@SHELLGATE_ZSH_DUMP@

  # Called from the accept-line widget: hands a complete line typed at the prompt to
  # __shellgate_run (see the top of this file).
  __shellgate_consider() {
    # The person's options, before emulate gives this function zsh's defaults.
    local aliases_on=${options[aliases]} banghist_on=${options[banghist]} posix_on=${options[posixaliases]}
    # (The options and handler src/shell/stateless.rs requires at their defaults, for the hint
    # below.)
    local shell_free=''
    @SHELLGATE_STATELESS_SHELL@ && shell_free=1
    emulate -L zsh
    __shellgate_light=''
    [[ -x $__shellgate_bin ]] || return 0
    [[ -n $__shellgate_dir && -z $PREBUFFER && $BUFFER != *$'\n'* && $BUFFER == *[^[:space:]]* ]] || return 0
    [[ $aliases_on == on ]] || return 0
    [[ $banghist_on == on && $BUFFER == *'!'* ]] && return 0
    [[ ${BUFFER//<<</} == *'<<'* || $BUFFER == *\\ ]] && return 0
    # zsh's own parser: an incomplete or invalid line is no function body (nothing runs).
    { functions[__shellgate_probe]=$BUFFER } 2>/dev/null
    (( ${+functions[__shellgate_probe]} )) || return 0
    unfunction __shellgate_probe
    local kind=fg word=- tok compound='' first rest
    local -i pipes=1 seps=0 lists=0
    local -a toks
    toks=(${(z)BUFFER})
    if [[ ${toks[-1]} == ('&'|'&|'|'&!') ]]; then
      kind=bg
      toks[-1]=()
    fi
    # PIPESTATUS after the line is its last pipeline's when that one surely runs last: the
    # commands are separated by `;` only.
    for tok in $toks; do
      case $tok in
        ';') pipes=1 lists+=1 ;;
        '&'|'&&'|'||'|'&|'|'&!'|';;'|';&'|';|') seps+=1 ;;
        '|'|'|&') pipes+=1 ;;
        '('|')'|'{'|'}'|'(('|'))'|'[['|']]'|'!'|if|then|else|elif|fi|for|foreach|end|while|until|do|done|case|esac|select|repeat|function|coproc|time)
          compound=1 ;;
      esac
    done
    if (( seps )); then
      kind=fg
      pipes=1
    fi
    (( lists )) && kind=fg
    [[ -n $compound ]] && pipes=1
    # The first word, when zsh expands an alias there: an unquoted name or path (zsh's alias
    # names may hold `/`), or a reserved word unless POSIX_ALIASES is set.
    first=${toks[1]-}
    rest=${BUFFER#"${BUFFER%%[^[:space:]]*}"}
    if [[ -n $first && $first != *[^A-Za-z0-9_./~+:@%,-]* && $first != [-=]* && $first != __shellgate* ]] ||
      [[ ( $first == ('{'|'!'|'[[') ) && $posix_on == off ]]; then
      if [[ $rest == "$first" || $rest == "$first"[[:space:]\;\|\&\<\>\(\)]* ]] &&
        (( ! ${+galiases[$first]} )) &&
        ! [[ $posix_on == on && $first == (if|then|else|elif|fi|for|foreach|end|while|until|do|done|case|esac|select|repeat|function|coproc|time) ]]; then
        word=$first
      fi
    fi
    __shellgate_shape=($kind $pipes $word)
    # Whether __shellgate_run sends the state's names first: shellgate runs a line that needs
    # none of the state without it (src/shell/stateless.rs decides, and asks for the whole state
    # when the line needs it). A line that surely needs it (a character whose meaning depends on
    # the state, a `$` but in `$NAME` and `${NAME}`; a builtin, function or assignment first; an
    # option set that changes how a line runs) gets the whole state at once.
    if [[ -n $shell_free && $BUFFER != *@SHELLGATE_STATEFUL_CHARACTERS@* && $first != *=* ]] &&
      [[ $BUFFER != *'$'[^A-Za-z_{]* && $BUFFER != *'$' && $BUFFER != *[^\$]'{'* && $BUFFER != '{'* ]] &&
      { [[ $first == @SHELLGATE_PURE_BUILTINS@ ]] || (( ! ${+builtins[$first]} && ! ${+functions[$first]} )) }; then
      __shellgate_light=1
    fi
  }

  # Sets up the alias for the line (not under emulate: interactivecomments must stay on for the
  # line's parse). $1 fg|bg, $2 the pipeline's length, $3 the alias word or `-`.
  __shellgate_take() {
    local call tail='' word=$3
    local -i i
    __shellgate_seq+=1
    __shellgate_token=$RANDOM$RANDOM$__shellgate_seq
    # The typed line goes along, quoted, only to be shown by `jobs`; the function ignores it.
    call="__shellgate_run $__shellgate_token ${(qq)BUFFER}"
    # What preexec's $3 shows for the call (`;` becomes a newline there).
    __shellgate_expect=$call
    if [[ $1 == bg ]]; then
      call+=' &'
      __shellgate_expect+=' &'
    elif (( $2 > 1 )); then
      for (( i = 1; i <= $2; i++ )); do
        tail+="${tail:+ | }__shellgate_pipe $i"
      done
      call+="; $tail"
      __shellgate_expect+=$'\n'$tail
    fi
    __shellgate_line=$BUFFER
    __shellgate_histfix=''
    if [[ $word == - ]]; then
      word=$__shellgate_prefix
      BUFFER="$word $BUFFER"
      CURSOR+=$(( ${#word} + 1 ))
      __shellgate_histfix=1
    fi
    __shellgate_word=$word
    __shellgate_had=${+aliases[$word]}
    __shellgate_saved=${aliases[$word]-}
    __shellgate_alias="$call #"
    [[ -o interactivecomments ]] && __shellgate_comments=1 || __shellgate_comments=''
    setopt interactivecomments
    aliases[$word]=$__shellgate_alias
  }

  # Puts back the person's alias of the first word, and interactivecomments.
  __shellgate_restore() {
    [[ -n $__shellgate_word ]] || return 0
    if (( __shellgate_had )); then
      aliases[$__shellgate_word]=$__shellgate_saved
    else
      unalias -- $__shellgate_word 2>/dev/null
    fi
    [[ -n $__shellgate_comments ]] || unsetopt interactivecomments
    __shellgate_word=''
  }

  # The line the accept-line widget took: runs it through `shellgate hook` with this shell's
  # state and applies what the hook wrote. It runs only the pending line (the token must
  # match), and only what the hook's apply script says.
  __shellgate_run() {
    __shellgate_st="$? ${pipestatus[*]}"
    if [[ -z $__shellgate_token || ${1-} != $__shellgate_token ]]; then
      print -ru2 -- 'shellgate: __shellgate_run runs only a line the hook took from the prompt'
      return 126
    fi
    __shellgate_tok=$__shellgate_token
    __shellgate_token=''
    __shellgate_restore
    # (Locals named __shellgate*: the apply script's `typeset -g NAME` would set a local of the
    # person's name here instead of their variable.)
    local __shellgate_bg='' __shellgate_what=''
    (( ZSH_SUBSHELL )) && __shellgate_bg=1
    if [[ $__shellgate_line == *history* ]]; then
      # (fc -W writes at most SAVEHIST lines, often 0: all of them here.)
      SAVEHIST=$HISTSIZE builtin fc -W "$__shellgate_dir/$__shellgate_tok.history" 2>/dev/null
    fi
    # The state's names first when the line may need none of it (see __shellgate_consider); the
    # whole state when it does, or when shellgate asks for it (`__shellgate_more`: nothing ran).
    [[ -n $__shellgate_light && -z $__shellgate_bg ]] && __shellgate_what=names
    __shellgate_light=''
    while :; do
      if [[ -n $__shellgate_what ]]; then
        __shellgate_dump names "$__shellgate_line"
      else
        __shellgate_dump
      fi >| "$__shellgate_dir/$__shellgate_tok.snapshot"
      "$__shellgate_bin" hook zsh --pid $$ --shell-dir "$__shellgate_dir" --token "$__shellgate_tok" ${__shellgate_bg:+--background} -- "$__shellgate_line"
      __shellgate_status=$?
      __shellgate_done='' __shellgate_more=''
      if [[ -f $__shellgate_dir/$__shellgate_tok.apply ]]; then
        builtin source "$__shellgate_dir/$__shellgate_tok.apply"
      fi
      [[ -n $__shellgate_what && $__shellgate_more == $__shellgate_tok ]] || break
      __shellgate_what=''
    done
    if [[ $__shellgate_done != $__shellgate_tok ]]; then
      case $__shellgate_status in
        (145|148|149|150)
          print -ru2 -- 'shellgate: the line is stopped; `fg` continues it (its changes will not be applied to this shell)' ;;
        (*)
          print -ru2 -- "shellgate: the gate failed (status $__shellgate_status); the line may not have run"
          (( __shellgate_status )) || __shellgate_status=219 ;;
      esac
      __shellgate_pipestatus=($__shellgate_status)
    fi
    # The prompt's PATH and git now, not only from precmd_functions: zsh runs a `precmd`
    # function of the person's (a git prompt) before those.
    __shellgate_pin
    return $__shellgate_status
  }

  # One element of a pipeline line's pipestatus (the line's tail is a pipeline of these).
  __shellgate_pipe() {
    emulate -L zsh
    return ${__shellgate_pipestatus[$1]:-$__shellgate_status}
  }

  # `$?` as the previous line left it, for a line that runs in the shell.
  __shellgate_ret() {
    return $1
  }

  # History records what was typed, for a line with a word put in front.
  __shellgate_addhistory() {
    [[ -n $__shellgate_histfix ]] || return 0
    __shellgate_histfix=''
    if ! [[ -o histignorespace && $__shellgate_line == [[:space:]]* ]]; then
      print -sr -- "$__shellgate_line"
    fi
    return 1
  }

  __shellgate_accept_line() {
    __shellgate_unpin
    __shellgate_shape=()
    __shellgate_consider
    (( ${#__shellgate_shape[@]} == 3 )) && __shellgate_take "${__shellgate_shape[@]}"
    # An empty line runs nothing, and the next prompt's `precmd` function of the person's runs
    # before the hook's: the prompt's PATH and git are set here (a job may have made a
    # repository here meanwhile).
    [[ $BUFFER == *[![:space:]]* ]] || __shellgate_pin
    if (( ${+widgets[__shellgate_orig_accept_line]} )); then
      zle __shellgate_orig_accept_line -- "$@"
    else
      zle .accept-line -- "$@"
    fi
  }

  # While Full access is on in this session, a line before every prompt says so (the marker file
  # `shellgate mode full` writes beside this shell's directory: its end in Unix seconds, 0 for the
  # session). No fork; the session log, not this file, decides the mode.
  __shellgate_mark() {
    local end='' left f=${__shellgate_dir%-*}.full-access
    [[ -n $__shellgate_dir && -f $f ]] || return 0
    builtin read -r end <"$f" 2>/dev/null
    [[ $end == <-> ]] || return 0
    if ((end == 0)); then
      builtin print -ru2 -- '[shellgate: FULL ACCESS for this session: lines run unsandboxed; `shellgate mode ask` ends it]'
    elif ((end > EPOCHSECONDS)); then
      left=$((end - EPOCHSECONDS))
      builtin printf '[shellgate: FULL ACCESS, %dm%02ds left: lines run unsandboxed]\n' $((left / 60)) $((left % 60)) >&2
    fi
  }

  # Before every prompt: whatever the last line left pending (a background line's alias) is put
  # right.
  __shellgate_precmd() {
    __shellgate_token=''
    __shellgate_restore
    __shellgate_mark
  }

  # While the prompt is up, PATH has the directories lines may write (a venv's `bin`, `.`) moved
  # to its end (`shellgate hook --prompt-path`): the prompt, the precmd functions after this one
  # and completion find every name a directory lines cannot write has there, whatever a line puts
  # in the others. Computed again when PATH changes or a missing entry appears; accept-line (and
  # preexec, for a line it did not take) puts PATH back.
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
    builtin eval -- "$("$__shellgate_bin" hook zsh --prompt-path)" || :
    # The directory as this shell names it (through a symlink, the binary sees another name).
    __shellgate_prompt_pwd=$PWD __shellgate_prompt_root=$__shellgate_root
  }

  # A repository lines may have written (src/shell/prompt_path.rs): the prompt's git finds none,
  # and the person is told once per repository. A GIT_DIR of the person's own is left alone.
  __shellgate_pin_git() {
    [[ -n $__shellgate_prompt_git && -z ${GIT_DIR+x} ]] || return 0
    export GIT_DIR=/dev/null
    __shellgate_git_set=1
    if [[ $__shellgate_prompt_git != unknown && $__shellgate_prompt_git != "$__shellgate_git_told" ]]; then
      __shellgate_git_told=$__shellgate_prompt_git
      local m="your prompt's git does not read the repository at $__shellgate_prompt_git: lines may have written it (a temp dir, or nested in a workspace); git in a line you type still does, in the sandbox"
      print -ru2 -- "shellgate: $m"
    fi
  }

  # The end of a line run once outside the sandbox (its apply calls this last; so does the next
  # precmd, after a line interrupted before its end): the names it made refuse are removed, and
  # the PATH it ran with is the person's again unless the line changed it.
  __shellgate_outside_end() {
    local n
    for n in "${__shellgate_nowhere[@]}"; do
      builtin unfunction -- "$n" 2>/dev/null
    done
    __shellgate_nowhere=()
    [[ -z $__shellgate_outside_ordered || $PATH != "$__shellgate_outside_ordered" ]] || PATH=$__shellgate_outside_path
    __shellgate_outside_ordered=''
  }

  # The person's PATH again, unless the prompt's own code changed it (then that change stays).
  __shellgate_unpin() {
    if [[ -n $__shellgate_git_set ]]; then
      __shellgate_git_set=''
      [[ ${GIT_DIR-} != /dev/null ]] || unset GIT_DIR
    fi
    [[ -n $__shellgate_path_set ]] || return 0
    __shellgate_path_set=''
    [[ $PATH != "$__shellgate_prompt_path" || $PATH == "$__shellgate_real_path" ]] || PATH=$__shellgate_real_path
  }

  # The binary is gone (`shellgate uninstall`, or removed by hand) while this shell runs: the
  # person is asked on the terminal before each line whether to run it ungated. No terminal, or
  # anything but yes, and the line does not run.
  __shellgate_gone() {
    local answer=n
    print -ru2 -- "shellgate is gone ($__shellgate_bin was removed): this shell is not gated any more; new shells start without it"
    read -q 'answer?Run this line without it? [y/N] ' </dev/tty
    print -u2
    [[ $answer == y ]] && return 0
    builtin kill -INT $$ 2>/dev/null || command kill -INT $$
  }

  __shellgate_preexec() {
    __shellgate_unpin
    # The function's call the accept-line widget set up, exactly: it gates itself.
    if [[ -n $__shellgate_token && $3 == "$__shellgate_expect" ]]; then
      return 0
    fi
    if [[ ! -x $__shellgate_bin ]]; then
      __shellgate_gone
      return 0
    fi
    "$__shellgate_bin" hook zsh --pid "$$" -- "$3"
    case $? in
      0 | 1) ;;
      *) builtin kill -INT $$ 2>/dev/null || command kill -INT $$ ;;
    esac
  }

  if [[ ${widgets[accept-line]-} == user:* ]]; then
    zle -A accept-line __shellgate_orig_accept_line
  fi
  zle -N accept-line __shellgate_accept_line
  autoload -Uz add-zsh-hook
  zmodload -F zsh/datetime p:EPOCHSECONDS 2>/dev/null
  add-zsh-hook preexec __shellgate_preexec
  add-zsh-hook precmd __shellgate_precmd
  # The prompt's PATH first, before any precmd function of the person's (`vcs_info` runs git).
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
  __shellgate_nowhere=()
  __shellgate_outside_ordered=''
  __shellgate_outside_path=''
  # The first prompt's git too, before any prompt code of the person's runs (zsh runs a `precmd`
  # function of the person's before precmd_functions):
  # no repository lines may have written, from the start. (PATH is left as it is: the rest of
  # the startup file may still change it.)
  __shellgate_repo_root
  __shellgate_judge 2>/dev/null
  __shellgate_pin_git
  precmd_functions=(__shellgate_pin ${precmd_functions[@]:#__shellgate_pin})
  zshaddhistory_functions=(__shellgate_addhistory ${zshaddhistory_functions[@]:#__shellgate_addhistory})
fi
fi
