//! Which allowed lines an interactive hook runs in the shell itself instead of the sandbox.
//!
//! A handful of builtins only change or print the shell's own state (`cd`, `export`, `alias`,
//! `set -o vi`, `jobs`, `fg`, `trap -p`…): they start no program, so the sandbox has nothing to
//! contain, and some of them (`fg`, `jobs`, `kill %1`, `trap -p`, `bind -P`) are only meaningful
//! in the person's shell. A line made only of those, with literal arguments and no redirection,
//! runs in the shell. The hook's function runs it there with `eval`, inside the function, so
//! forms that would act on the function rather than the shell stay out (`typeset NAME=…` and
//! `declare NAME=…` make a local, `set -- …` sets the function's arguments): those run in the
//! sandbox, and their effect comes back as state.
//!
//! A name is the builtin only if nothing in the shell shadows it: the hook passes the names that
//! are aliases, functions or disabled builtins there, and a command of one of those names never
//! runs in the shell as if it were the builtin (an alias `cd='…'` runs whatever it says).
//!
//! shellgate's own commands (`status`, `log`, `doctor`, `mode`, …) run in the shell too, with
//! the binary the hook was installed with — never a `shellgate` found on `PATH` — and only as
//! the line's one command: they read shellgate's state, or ask the person on the terminal
//! themselves before writing it, and inside the sandbox they would see the sandbox instead of
//! the system (`doctor` would find it "not enforceable").

use crate::mode::{Resolved, SandboxPolicy};
use crate::parse::{Command, ShellKind};
use crate::policy::Decision;
use crate::shell::state::{Dialect, OptionKind, Treatment, option_class};

/// Builtins of both bash and zsh that may run in the shell with any literal arguments: none of
/// them evaluates an argument again (as arithmetic, a subscript or a name). `printf`, `test` and
/// `[` are not among them (`printf -v 'a[x]'`, `test -v 'a[x]'`, and zsh's arithmetic in
/// `printf %d x` and `test x -eq 1`, evaluate a variable's value), nor is anything whose
/// arguments must first be checked ([`builtin_form`]).
const STATE_BUILTINS: [&str; 13] = [
    "cd", "pushd", "popd", "dirs", "alias", "unalias", "umask", "true", "false", ":", "hash",
    "type", "pwd",
];

/// Builtins that may run in the shell with plain parameters among their arguments (`cd $proj`,
/// `echo "$HOME"`): reading a parameter runs nothing, and these take their arguments as a
/// directory or as text, never as code or a name to define (`alias a=$x`, `hash -p $x ls` would
/// turn a variable, which the seal applies as inert, into what the shell runs).
const PLAIN_PARAMETERS: [&str; 3] = ["cd", "pushd", "echo"];

/// May an allowed line run in the interactive shell itself? `shadowed`: the names the shell has
/// as aliases, functions or disabled builtins.
pub fn may_run_in_shell(
    decision: &Decision,
    mode: &Resolved,
    shell: ShellKind,
    shadowed: &[String],
) -> bool {
    if mode.sandbox == SandboxPolicy::FullAccess {
        return true;
    }
    // A line that runs in the shell runs inside the hook's function (`eval`): a parameter that
    // function changes (`$status`, `$pipestatus`, `$FUNCNAME`, `$LINENO`, `$_` — the shell's own
    // but `PWD`, which is the shell's there) would read the function's, not the line's.
    let dialect = match shell {
        ShellKind::Zsh => Dialect::Zsh,
        _ => Dialect::Bash,
    };
    let plain = decision.opaque.is_empty()
        && decision.hook_state.is_empty()
        && !decision
            .parameters
            .iter()
            .any(|name| name != "PWD" && crate::shell::state::is_shell_own(dialect, name));
    // An assignment to a variable with the integer attribute is arithmetic (`shadowed` names
    // those too).
    let arithmetic = decision.assigned.iter().any(|n| shadowed.contains(n));
    // Assignments of literal values and plain parameters alone (`FOO=1`, `D=$HOME/x`: reading a
    // parameter runs nothing) set the shell's variables, as `export
    // NAME=…` does: a variable the hooks depend on, or that makes what runs next load code, is
    // no plain line (the parser says so); one the shell reads itself (`NULLCMD`, `TMOUT`, the
    // prompts: the `seal` role of `parse::shell_vars`) goes through the sandbox, whose change to
    // it is asked about. Inside the hook's function a bare assignment sets the shell's global
    // variable.
    let shell_read = decision
        .assigned
        .iter()
        .any(|n| crate::parse::shell_vars::roles(n).seal);
    if plain && decision.only_plain_assignments && !arithmetic && !shell_read {
        return true;
    }
    if !plain || decision.commands.is_empty() {
        return false;
    }
    if let [only] = decision.commands.as_slice()
        && (self_command(only).is_some()
            || starts_agent(only) && !shadowed.iter().any(|n| n == "shellgate")
            || starts_own_shell(only, shell) && !shadowed.contains(&only.program))
    {
        return true;
    }
    if arithmetic {
        return false;
    }
    decision.commands.iter().all(|c| {
        c.writes.is_empty()
            && (!c.args_dynamic || c.args_plain && PLAIN_PARAMETERS.contains(&c.program.as_str()))
            && c.path.is_none()
            && !c.calls_line_function
            && c.via.iter().all(|v| v == "builtin" || v == "command")
            && !shadowed.contains(&c.program)
            && builtin_form(shell, c, shadowed)
    })
}

/// The subcommand, when `command` is `shellgate SUBCOMMAND …` typed by name with literal
/// arguments and no redirection.
pub fn self_command(command: &Command) -> Option<&str> {
    let sub = command.argv.first()?;
    (command.program == "shellgate"
        && command.path.is_none()
        && command.via.is_empty()
        && command.writes.is_empty()
        && !command.args_dynamic
        && crate::policy::own_commands::lookup(sub).is_some_and(|own| own.in_shell))
    .then_some(sub.as_str())
}

/// `shellgate wrap … -- AGENT`, typed by name: once a person allowed it, it runs in the shell (the
/// agent needs the network and a sandbox of its own, and every line it runs is gated by that
/// `wrap`), with the hook's binary.
pub fn starts_agent(command: &Command) -> bool {
    command.via.len() == 1 && command.via[0] == "shellgate wrap" && command.writes.is_empty()
}

/// The options that keep a new shell an interactive one that reads the person's startup files.
const OWN_SHELL_OPTIONS: [&str; 3] = ["-l", "--login", "-i"];

/// `bash` typed in a hooked bash, or `zsh` in a hooked zsh, by name, as a new interactive shell of
/// the person's: no operand, no redirection, only `-l`, `--login` or `-i`. It reads the same
/// startup files as the shell it is typed in, which load the hook, so its lines are judged like
/// this shell's (a new terminal does the same); in the sandbox it would be a shell whose lines
/// nobody judges (they carry the sandboxed line's mark) and that can write nothing outside the
/// workspace, until `exit`. The other shell's kind is left to the sandbox: its startup files may
/// not load the hook.
pub fn starts_own_shell(command: &Command, shell: ShellKind) -> bool {
    command.program == shell.as_str()
        && matches!(shell, ShellKind::Bash | ShellKind::Zsh)
        && command.path.is_none()
        && command.via.is_empty()
        && command.writes.is_empty()
        && command.reads.is_empty()
        && !command.args_dynamic
        && !command.args_glob
        && !command.extra_args
        && command
            .argv
            .iter()
            .all(|a| OWN_SHELL_OPTIONS.contains(&a.as_str()))
}

/// Whether this builtin, with these arguments, only changes or prints the shell's state and acts
/// on the shell (not on the hook's function) when run inside the function.
fn builtin_form(shell: ShellKind, c: &Command, shadowed: &[String]) -> bool {
    let args: Vec<&str> = c.argv.iter().map(String::as_str).collect();
    let bash = shell == ShellKind::Bash;
    let zsh = shell == ShellKind::Zsh;
    match c.program.as_str() {
        name if STATE_BUILTINS.contains(&name) => true,
        "echo" => true,
        // zsh evaluates `exit`'s and `logout`'s argument as arithmetic.
        "exit" | "logout" => args.iter().all(|a| is_number(a)),
        // Job specs, process ids and options: nothing evaluated.
        "jobs" | "fg" | "bg" | "wait" | "disown" | "history" => args
            .iter()
            .all(|a| a.starts_with('%') || a.starts_with('-') || is_number(a)),
        // Names only as plain identifiers (a subscript is arithmetic), none of them integer
        // variables here (assigning one is arithmetic).
        "export" | "unset" => args.iter().all(|a| {
            let name = a.split_once('=').map_or(*a, |(n, _)| n);
            a.starts_with('-')
                || (crate::shell::state::valid_identifier(name)
                    && !shadowed.iter().any(|s| s == name))
        }),
        "kill" => {
            args.iter().any(|a| a.starts_with('%'))
                && args
                    .iter()
                    .all(|a| a.starts_with('%') || a.starts_with('-'))
        }
        "set" => set_options_only(shell, &args),
        "trap" => matches!(args.first(), None | Some(&"-p") | Some(&"-l")),
        "declare" | "typeset" => args.iter().all(|a| match a.strip_prefix('-') {
            Some(flags) => !flags.is_empty() && flags.chars().all(|f| "pfF".contains(f)),
            None => crate::shell::state::valid_function_name(a),
        }),
        "help" if bash => true,
        "shopt" if bash => shopt_ordinary(&args),
        "bind" if bash => args
            .iter()
            .all(|a| ["-p", "-P", "-s", "-S", "-v", "-V", "-X", "-l"].contains(a)),
        "complete" if bash => args.first() == Some(&"-p"),
        "setopt" | "unsetopt" if zsh => args.iter().all(|a| {
            let name: String = a
                .trim_start_matches("no")
                .chars()
                .filter(|c| *c != '_')
                .map(|c| c.to_ascii_lowercase())
                .collect();
            !a.starts_with(['-', '+']) && ordinary_option(ShellKind::Zsh, OptionKind::Set, &name)
        }),
        "whence" | "where" | "which" | "rehash" if zsh => true,
        "functions" if zsh => args.iter().all(|a| !a.starts_with(['-', '+'])),
        "bindkey" if zsh => matches!(args.as_slice(), [] | ["-L"] | ["-l"]),
        _ => false,
    }
}

/// `12`: a number, as `exit` and the job builtins take.
fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// An option a line may change in the shell without asking (see [`crate::shell::state`]'s
/// treatments): the rest go through the sandbox, and come back as a change to confirm or refuse.
fn ordinary_option(shell: ShellKind, kind: OptionKind, name: &str) -> bool {
    let dialect = match shell {
        ShellKind::Zsh => Dialect::Zsh,
        _ => Dialect::Bash,
    };
    option_class(dialect, kind, name, true) == Treatment::Silent
        && option_class(dialect, kind, name, false) == Treatment::Silent
}

/// `set` that only lists, or turns ordinary options on and off (`-o vi`, `-eu`): not `set -- args`
/// or `set args`, which inside the hook's function would set its parameters.
fn set_options_only(shell: ShellKind, args: &[&str]) -> bool {
    /// Single-letter options that are ordinary (not `-H`, `-T`, `-E`, `-p`, `-m`, `-n`, `-t`).
    const LETTERS: &str = "abefhkuvxBCP";
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "-o" || a == "+o" {
            match args.get(i + 1) {
                // History on or off is the person's own choice, typed at their prompt (a
                // line's change to it comes back as a question instead).
                Some(name)
                    if *name == "history" || ordinary_option(shell, OptionKind::Set, name) =>
                {
                    i += 2
                }
                // `set -o` alone lists.
                None if args.len() == 1 => i += 1,
                _ => return false,
            }
            continue;
        }
        let flags = a.strip_prefix('-').or_else(|| a.strip_prefix('+'));
        match flags {
            Some(f) if !f.is_empty() && f.chars().all(|c| LETTERS.contains(c)) => i += 1,
            _ => return false,
        }
    }
    true
}

/// `shopt` listing (`shopt`, `shopt -p`, `shopt NAME`), or setting ordinary options.
fn shopt_ordinary(args: &[&str]) -> bool {
    let names = args.iter().filter(|a| !a.starts_with('-'));
    let setting = args
        .iter()
        .any(|a| a.starts_with("-s") || a.starts_with("-u"));
    !setting
        || names
            .into_iter()
            .all(|n| ordinary_option(ShellKind::Bash, OptionKind::Shopt, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::mode::SessionFacts;

    /// Whether `line` runs in the shell, taking the decision core's word for what is plain: this
    /// module's own restrictions are what is tested (the core may call `set -o vi` hook state;
    /// then it never gets here unless allowed, and what runs in the shell is still decided here).
    fn in_shell(line: &str, shell: ShellKind, shadowed: &[&str]) -> bool {
        let config = Config::builtin();
        let mode = crate::mode::resolve(Some("ask"), config.modes(), SessionFacts::default());
        let mut decision =
            crate::policy::decide_bytes(line.as_bytes(), shell, "/", config.policy(), &mode);
        decision.hook_state.clear();
        decision.opaque.clear();
        let shadowed: Vec<String> = shadowed.iter().map(|s| (*s).to_owned()).collect();
        may_run_in_shell(&decision, &mode, shell, &shadowed)
    }

    /// Whether `line` runs in the shell, with the decision as the core made it.
    fn in_shell_as_decided(line: &str, shell: ShellKind) -> bool {
        let config = Config::builtin();
        let mode = crate::mode::resolve(Some("ask"), config.modes(), SessionFacts::default());
        let decision =
            crate::policy::decide_bytes(line.as_bytes(), shell, "/", config.policy(), &mode);
        may_run_in_shell(&decision, &mode, shell, &[])
    }

    #[test]
    fn state_builtins_run_in_the_shell() {
        for line in [
            "cd /tmp",
            "cd /tmp && pwd",
            "export EDITOR=vim",
            "alias l=ls",
            "set -o vi",
            "set -eu",
            "set +o history",
            "set -o",
            "jobs",
            "history 20",
            "history -w",
            "fg %1",
            "kill %1",
            "kill -9 %2",
            "trap -p",
            "declare -p PS1",
            "declare -f greet",
            "shopt",
            "bind -P",
            "umask 022",
            "shellgate status",
            "shellgate doctor",
            "shellgate mode",
        ] {
            assert!(in_shell(line, ShellKind::Bash, &[]), "{line}");
        }
        assert!(in_shell("setopt autocd", ShellKind::Zsh, &[]));
        assert!(in_shell("which ls", ShellKind::Zsh, &[]));
    }

    #[test]
    fn literal_assignments_run_in_the_shell() {
        for shell in [ShellKind::Bash, ShellKind::Zsh] {
            // (A `~` is the home, as the shell expands it: no code runs; nor does reading a
            // parameter.)
            for line in [
                "FOO=1",
                "A=b C='d e'",
                "FOO=1; BAR=x.y",
                "FOO=~/x",
                "FOO=$x",
                "D=$HOME/src E=\"${D}:$x\"",
            ] {
                assert!(in_shell_as_decided(line, shell), "{shell:?}: {line}");
            }
            for line in [
                // A test, a loop, a group, a subshell besides the assignments.
                "FOO=1 && [[ -n $x ]]",
                "while [[ -n x ]]; do FOO=1; done",
                "for i in a b; do FOO=1; done",
                "FOO=1; case $x in a) B=1;; esac",
                "FOO=1; { BAR=2; }",
                "(FOO=1)",
                // A value that runs code or assigns, a special or positional parameter, a
                // pattern, a subscript (arithmetic), a redirection.
                "FOO=$(id)",
                "FOO=\"$x$(id)\"",
                "FOO=`id`",
                "FOO=$((1+1))",
                "FOO=${x:=y}",
                "FOO=${x:-$(id)}",
                "FOO=${#x}",
                "FOO=${a[$(id)]}",
                "FOO=$?",
                "FOO=$1",
                "FOO=$x*",
                "FOO=$x\"$(id)\"",
                "FOO='$(id)'$x",
                "a[1]=x",
                "FOO=1 > out",
                "FOO=1; ls",
                // What the hooks depend on, or makes what runs next load code.
                "PATH=/tmp",
                "IFS=x",
                "HISTFILE=/tmp/h",
                "PROMPT_COMMAND=x",
                "LD_PRELOAD=/tmp/x.so",
                "BASH_ENV=/tmp/x",
                "PS1='$(id)'",
                "SHELLGATE_MODE=full",
                // What the shell reads itself: its change is asked about.
                "PS1='$ '",
                "NULLCMD=x",
                "TMOUT=1",
            ] {
                assert!(!in_shell_as_decided(line, shell), "{shell:?}: {line}");
            }
        }
        // A variable with the integer attribute here: assigning it is arithmetic.
        assert!(!in_shell("n=x", ShellKind::Bash, &["n"]));
    }

    #[test]
    fn plain_parameters_of_a_directory_or_text_run_in_the_shell() {
        for line in ["echo \"$status\"", "echo $pipestatus", "FOO=$argv"] {
            assert!(!in_shell(line, ShellKind::Zsh, &[]), "{line}");
        }
        for shell in [ShellKind::Bash, ShellKind::Zsh] {
            for line in [
                "cd $HOME/src",
                "pushd \"${d}\"",
                "echo $HOME \"${x}:y\"",
                "cd $d; echo $d",
                "echo \"$PWD $SG_TEST_VAR\"",
            ] {
                assert!(in_shell(line, shell, &[]), "{shell:?}: {line}");
            }
        }
    }

    #[test]
    fn everything_else_runs_in_the_sandbox() {
        for line in [
            "ls",
            "cd /tmp && ls",
            "typeset X=1",
            "declare X=1",
            "declare -x X",
            "set -- a b",
            "set -o functrace",
            "shopt -u promptvars",
            "shopt -s extdebug",
            "set a",
            "kill 1234",
            "trap 'echo x' INT",
            "echo hi > f",
            "echo hi > ~/notes/a.txt",
            "cd .. && echo hi > ~/notes/a.txt",
            "echo hi >> \"$HOME/x\"",
            "printf x > /tmp/x",
            "history -w /tmp/h",
            "history -r ~/.bashrc",
            // Parameters other than plain ones, or where a value would become code or a name.
            "echo $(id)",
            "echo ${x:-y}",
            "echo $1",
            "cd $x*",
            "echo \"$x$(id)\"",
            "alias a=$x",
            "hash -p $x ls",
            "umask $x",
            "type $x",
            // What the hook's function changes.
            "echo $FUNCNAME",
            "echo \"$LINENO\"",
            "FOO=$BASH_COMMAND",
            "sudo cd /",
            "/usr/bin/cd x",
            "shellgate status; cd /tmp",
            "shellgate status | cat",
            "shellgate run -- ls",
            "which ls",
            // Builtins that evaluate an argument again (a subscript, arithmetic, a name).
            "test -v 'a[x]'",
            "[ -d x ]",
            "printf -v 'a[x]' %s 1",
            "printf '%d' x",
            "unset 'a[x]'",
            "export 'a[x]=1'",
            "exit x",
            "history x",
            "declare -p 'a[x]'",
        ] {
            assert!(!in_shell(line, ShellKind::Bash, &[]), "{line}");
        }
        // Re-evaluation anywhere on the line makes it opaque, which never runs in the shell.
        for line in [
            "cd . && (( x ))",
            "cd . && [[ -v a[x] ]]",
            "cd . && a[x]=1",
            "echo $\"hello\"",
            "cd . && echo ${!x}",
        ] {
            assert!(!in_shell_as_decided(line, ShellKind::Bash), "{line}");
        }
        for line in ["exit x", "test x -eq 1", "printf '%d' x"] {
            assert!(!in_shell(line, ShellKind::Zsh, &[]), "{line}");
        }
        // A variable with the integer attribute here: assigning it is arithmetic.
        assert!(!in_shell("export SECONDS=x", ShellKind::Bash, &["SECONDS"]));
        assert!(!in_shell("cd . && n=x", ShellKind::Bash, &["n"]));
        assert!(in_shell("export EDITOR=vim", ShellKind::Bash, &["SECONDS"]));
        // An alias or a function of that name is not the builtin.
        assert!(!in_shell("cd /tmp", ShellKind::Bash, &["cd"]));
        // shellgate's own commands run the hook's binary by its path: an alias or a function
        // named `shellgate` is not what runs.
        assert!(in_shell(
            "shellgate status",
            ShellKind::Bash,
            &["shellgate"]
        ));
    }
}
