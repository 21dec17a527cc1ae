//! Hook state: what a line can change in the interactive shell it is typed into.
//!
//! shellgate's hooks live in that shell (bash's `PS0` and `PROMPT_COMMAND`, zsh's `preexec`,
//! PowerShell's `PSConsoleHostReadLine`). A line that changes the variables, functions, options,
//! traps or key bindings they depend on — or the variables that decide what the next shell loads —
//! could switch the gate off for every later line, so such a line goes to a person in every mode.
//! What only *prints* that state (`declare -p PS0`, `set -o`, `trap -p`, `shopt`, `bind -P`) is
//! not a change, and is known to be read-only.

use super::words::Word;

/// Is `name` (a subscript such as `PROMPT_COMMAND[1]` or `functions[f]` is its array's) a
/// variable the hooks depend on, or one that decides what the next shell loads? The `hook` role
/// of [`super::shell_vars`], where the names are: bash's prompts and prompt command, startup files,
/// history (every `HIST*`), word splitting, options, the search path and home; zsh's hook arrays
/// and tables; the loader's; shellgate's own (`SHELLGATE_*`, `__shellgate_*`).
pub fn is_hook_variable(name: &str) -> bool {
    super::shell_vars::roles(base_name(name)).hook
}

/// The prompt strings a person sets for looks: the shell expands them before each prompt (and
/// bash's `PS4` before each traced command), so a command substitution in one would run there,
/// outside every sandbox. One whose value is [`inert_prompt`] runs nothing.
const PROMPT_STRINGS: [&str; 12] = [
    "PS1", "PS2", "PS3", "PS4", "PROMPT", "PROMPT2", "PROMPT3", "PROMPT4", "RPROMPT", "RPROMPT2",
    "RPS1", "RPS2",
];

/// Is `name` a prompt string (`PS1`, zsh's `PROMPT`, `RPROMPT` …)? Not `PS0` (bash's hook
/// lives there) nor `PROMPT_COMMAND`.
pub fn is_prompt_string(name: &str) -> bool {
    PROMPT_STRINGS.contains(&base_name(name))
}

/// Does a prompt string with this value run nothing when the shell expands it? No command
/// substitution (`$(…)`, backquotes), no `${…}` (whose subscripts and operators can evaluate
/// code), no arithmetic (`$((…))`, `$[…]`, whose variables can hold subscripts that do): what is
/// left are plain parameters (`$?`, `$PWD`), the prompt escapes (`\u`, `\w`, `%~`, `%?`) and text.
/// A parameter's value is not expanded again, so `$PWD` holding `$(…)` runs nothing. bash decodes
/// its escapes before it expands, so an octal escape (`\044` is `$`) could spell a substitution:
/// none either.
pub fn inert_prompt(value: &str) -> bool {
    let bytes = value.as_bytes();
    let octal_escape = bytes
        .windows(2)
        .any(|w| w[0] == b'\\' && (b'0'..=b'7').contains(&w[1]));
    // zsh's `$~x`, `$=x`, `$^x`, `$+x` expand with flags (globbing, splitting) under
    // prompt_subst: nothing a look needs.
    let zsh_flag = ["$~", "$=", "$^", "$+"].iter().any(|f| value.contains(f));
    !value.contains('`')
        && !value.contains("$(")
        && !value.contains("${")
        && !value.contains("$[")
        && !octal_escape
        && !zsh_flag
        && !subscripted_parameter(bytes)
}

/// `$name[…]`: zsh takes the brackets for a subscript, which is arithmetic (a variable in it can
/// hold code that arithmetic runs).
fn subscripted_parameter(bytes: &[u8]) -> bool {
    bytes.iter().enumerate().any(|(i, b)| {
        *b == b'$' && {
            let name = bytes[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                .count();
            name > 0 && bytes.get(i + 1 + name) == Some(&b'[')
        }
    })
}

/// `PROMPT_COMMAND[1]` → `PROMPT_COMMAND`; `x+` (from `x+=…`) → `x`.
pub fn base_name(name: &str) -> &str {
    let name = name.split('[').next().unwrap_or(name);
    name.trim_end_matches('+')
}

/// Function names that are hooks of bash, zsh or PowerShell, and the builtins the hooks call
/// (a function of that name would run instead of the builtin).
const HOOK_FUNCTIONS: [&str; 48] = [
    "preexec",
    "precmd",
    "chpwd",
    "periodic",
    "zshaddhistory",
    "zshexit",
    "zsh_directory_name",
    "command_not_found_handle",
    "command_not_found_handler",
    "PSConsoleHostReadLine",
    "prompt",
    // Builtins the hooks call.
    "builtin",
    "command",
    "local",
    "declare",
    "typeset",
    "return",
    "kill",
    "printf",
    "print",
    "history",
    "fc",
    "trap",
    "readonly",
    "unset",
    "export",
    "eval",
    "exec",
    "source",
    ".",
    "set",
    "shopt",
    "bind",
    "enable",
    "hash",
    "alias",
    "unalias",
    "type",
    "read",
    "test",
    "[",
    "add-zsh-hook",
    "autoload",
    "emulate",
    "setopt",
    "zle",
    "bindkey",
    "zmodload",
];

/// Is `name` a function whose definition or removal changes the hooks?
pub fn is_hook_function(name: &str) -> bool {
    HOOK_FUNCTIONS.contains(&name)
        || name.starts_with("__shellgate")
        || name.starts_with("_shellgate")
        || name.starts_with("TRAP")
        || name == "shellgate"
}

/// Does this builtin, with these arguments, change the shell's own behaviour or hooks? Listings
/// (`trap -p`, `set -o`, `shopt`, `bind -P`, `alias`, `hash` …) do not.
pub fn builtin_changes_hooks(program: &str, args: &[Word]) -> bool {
    if !is_state_builtin(program) {
        return false;
    }
    if args.iter().any(|a| !a.is_literal()) {
        return true;
    }
    let texts: Vec<&str> = args.iter().map(|a| a.text.as_str()).collect();
    match program {
        "trap" => !trap_lists(&texts),
        "shopt" => texts
            .iter()
            .any(|a| a.starts_with('-') && a[1..].contains(['s', 'u'])),
        "set" => !matches!(texts.as_slice(), [] | ["-o"] | ["+o"]),
        "enable" => !texts.iter().all(|a| is_cluster_of(a, "anps")),
        "bind" => !bind_lists(&texts),
        "alias" => texts.iter().any(|a| a.contains('=')),
        "hash" => !matches!(texts.as_slice(), [] | ["-l"] | ["-t", ..]),
        "bindkey" => !texts.iter().all(|a| is_cluster_of(a, "lL")),
        "zle" => !matches!(texts.as_slice(), ["-l" | "-L" | "-lL" | "-Ll"]),
        "setopt" | "unsetopt" | "emulate" | "autoload" | "disable" => !texts.is_empty(),
        "zmodload" => !texts.iter().all(|a| is_cluster_of(a, "lL")),
        "add-zsh-hook" => texts.first() != Some(&"-L"),
        "functions" => texts.iter().any(|a| a.starts_with(['-', '+'])),
        "history" => texts.iter().any(|a| a.starts_with('-')),
        "unalias" | "unfunction" | "unhash" | "add-zle-hook-widget" => true,
        _ => false,
    }
}

/// The builtins [`builtin_changes_hooks`] reads.
fn is_state_builtin(program: &str) -> bool {
    matches!(
        program,
        "trap"
            | "shopt"
            | "set"
            | "enable"
            | "bind"
            | "alias"
            | "hash"
            | "bindkey"
            | "zle"
            | "setopt"
            | "unsetopt"
            | "emulate"
            | "autoload"
            | "disable"
            | "zmodload"
            | "add-zsh-hook"
            | "functions"
            | "history"
            | "unalias"
            | "unfunction"
            | "unhash"
            | "add-zle-hook-widget"
    )
}

/// `-abc` made only of the letters in `letters`.
fn is_cluster_of(word: &str, letters: &str) -> bool {
    word.len() > 1 && word.starts_with('-') && word[1..].chars().all(|c| letters.contains(c))
}

/// `trap`, `trap -p [SIGNAL…]`, `trap -l` print; anything else sets or resets a trap.
fn trap_lists(args: &[&str]) -> bool {
    match args {
        [] | ["-l"] => true,
        ["-p", ..] => true,
        ["--", rest @ ..] => rest.is_empty(),
        _ => false,
    }
}

/// `bind -l/-p/-P/-s/-S/-v/-V/-X` print (also with `-m KEYMAP`, `-q FUNCTION`); everything else
/// (`-f FILE`, `-x`, `-r`, `-u`, a binding) changes the key bindings.
fn bind_lists(args: &[&str]) -> bool {
    if args.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "-m" | "-q" => i += 2,
            a if is_cluster_of(a, "lpPsSvVX") => i += 1,
            _ => return false,
        }
    }
    true
}

/// Does a `declare`/`typeset`/`export`/`readonly`/`local` with these option words only print?
/// (`-p` lists variables, `-f`/`-F` functions; no assignment or other option.)
pub fn declaration_lists(options: &[&str]) -> bool {
    !options.is_empty() && options.iter().all(|o| is_cluster_of(o, "pfF"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_that_run_nothing_are_inert() {
        for value in [
            "[$?]PROMPT$ ",
            "\\u@\\h:\\w\\$ ",
            "%n@%m %~ %# ",
            "\\[\\e[32m\\]$PWD\\[\\e[0m\\] ",
            "%F{red}%?%f ",
        ] {
            assert!(inert_prompt(value), "{value}");
        }
        for value in [
            "$(id) ",
            "`id` ",
            "${x[$(id)]} ",
            "$((a[1])) ",
            "$[1+1] ",
            "\\044(id) ",
            "\\$(id) ",
            "$x[y] ",
            "$~x ",
            "$=x ",
        ] {
            assert!(!inert_prompt(value), "{value}");
        }
        assert!(is_prompt_string("PS1") && is_prompt_string("RPROMPT"));
        assert!(!is_prompt_string("PS0") && !is_prompt_string("PROMPT_COMMAND"));
    }

    fn words(args: &[&str]) -> Vec<Word> {
        args.iter().map(|a| Word::literal(*a)).collect()
    }

    #[test]
    fn listings_are_not_changes() {
        for (program, args) in [
            ("trap", &[][..]),
            ("trap", &["-p"][..]),
            ("trap", &["-p", "DEBUG"][..]),
            ("trap", &["-l"][..]),
            ("shopt", &[][..]),
            ("shopt", &["-p"][..]),
            ("shopt", &["extglob"][..]),
            ("shopt", &["-o"][..]),
            ("shopt", &["-q", "extglob"][..]),
            ("set", &[][..]),
            ("set", &["-o"][..]),
            ("set", &["+o"][..]),
            ("bind", &["-P"][..]),
            ("bind", &["-p"][..]),
            ("bind", &["-m", "vi", "-P"][..]),
            ("bind", &["-q", "accept-line"][..]),
            ("alias", &[][..]),
            ("alias", &["ll"][..]),
            ("hash", &[][..]),
            ("hash", &["-l"][..]),
            ("hash", &["-t", "ls"][..]),
            ("enable", &[][..]),
            ("enable", &["-a"][..]),
            ("bindkey", &[][..]),
            ("bindkey", &["-L"][..]),
            ("setopt", &[][..]),
            ("history", &[][..]),
            ("history", &["5"][..]),
        ] {
            assert!(
                !builtin_changes_hooks(program, &words(args)),
                "{program} {args:?}"
            );
        }
    }

    #[test]
    fn changes_are_changes() {
        for (program, args) in [
            ("trap", &["-", "DEBUG"][..]),
            ("trap", &["", "INT"][..]),
            ("trap", &["echo", "EXIT"][..]),
            ("shopt", &["-s", "extdebug"][..]),
            ("shopt", &["-u", "histappend"][..]),
            ("shopt", &["-qs", "x"][..]),
            ("set", &["-o", "vi"][..]),
            ("set", &["+o", "history"][..]),
            ("set", &["-e"][..]),
            ("bind", &["-x", "x"][..]),
            ("bind", &["-f", "f"][..]),
            ("bind", &["\"\\C-m\": x"][..]),
            ("alias", &["ls=rm"][..]),
            ("hash", &["-p", "/tmp/x", "ls"][..]),
            ("hash", &["-r"][..]),
            ("enable", &["-n", "cd"][..]),
            ("enable", &["-f", "x.so", "x"][..]),
            ("bindkey", &["^M", "x"][..]),
            ("setopt", &["no_rcs"][..]),
            ("history", &["-c"][..]),
            ("history", &["-s", "x"][..]),
            ("unalias", &["ls"][..]),
        ] {
            assert!(
                builtin_changes_hooks(program, &words(args)),
                "{program} {args:?}"
            );
        }
        assert!(builtin_changes_hooks("trap", &[Word::dynamic("$x")]));
    }

    #[test]
    fn variables_with_subscripts_are_their_arrays() {
        for name in [
            "PROMPT_COMMAND[1]",
            "functions[__shellgate_preexec]",
            "HISTFILE",
            "HISTSIZE",
            "precmd_functions",
            "path",
            "__shellgate_rl",
            "SHELLGATE_SESSION",
            "HOME",
            "IFS",
        ] {
            assert!(is_hook_variable(name), "{name}");
        }
        for name in ["x", "HOMEDIR", "MYPATH", "paths", "RUST_LOG"] {
            assert!(!is_hook_variable(name), "{name}");
        }
    }
}
