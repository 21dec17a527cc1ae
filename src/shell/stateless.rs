//! Lines typed in a hooked shell that need none of the shell's own state, and change none of it:
//! they run in the sandbox as `bash -c LINE` / `zsh -f -c LINE` would, without the person's
//! state sourced first and without a dump of it after (issue 27: in bash that is ≈ 1.5 ms of a
//! typed line, in zsh ≈ 4.8 ms). Only the line's `$?` and `PIPESTATUS` come back.
//!
//! Why such a line behaves as it would with the state (the argument, one class at a time):
//! - **What it runs.** Every command is a program looked up on `PATH` (or by its path), or one of
//!   a few builtins that read no state ([`PURE_BUILTINS`]); none is an alias, a function, a
//!   disabled builtin, a shell keyword, or a builtin that reads or sets the shell's state. `PATH`
//!   and every other exported variable are in the line's environment either way.
//! - **What its words become.** No expansion that reads the shell's state: no `$` (variables,
//!   `$?`, command and arithmetic substitution), no backquote, no `~` (the home, zsh's named
//!   directories), no glob or brace characters (whose meaning the shell's options change), no
//!   `!`, `#` or `^` (history, comments, zsh's extended globs), no `((`, no zsh `=cmd`. Quotes and
//!   backslashes mean the same with any options (zsh's `RC_QUOTES` aside, checked below).
//! - **How it runs.** The `set -o` / `setopt` options that change how such a line runs or what
//!   its status is (`errexit`, `pipefail`, `noclobber`, `xtrace`, `autocd` …) are at the
//!   sandboxed shell's defaults ([`DEFAULTS_BASH`], [`DEFAULTS_ZSH`]), and there is no
//!   command-not-found handler, no zsh global or suffix alias that could apply.
//! - **What the gate sets.** The person's shell has none of the variables the gate sets for a
//!   line (a build's fetch settings, the lines' package caches), whose value the state would
//!   restore over the gate's.
//! - **What it changes.** No assignment, no function definition, nothing the parser says could
//!   change the hook ([`crate::parse::Parsed::hook_state`]), no builtin that sets state: a program
//!   cannot change its parent shell, so the state after the line is the state before it.
//!
//! Anything else takes the path that carries the whole state both ways
//! ([`super::function`]). The decision, the grant and the sandbox are the same on both paths:
//! only what the sandboxed shell sources and reports differs.

use crate::parse::Parsed;
use crate::shell::state::{AliasKind, Dialect, OptionKind, State};

/// Builtins that read no state of the shell's and change none, with literal arguments.
const PURE_BUILTINS: [&str; 4] = ["true", "false", ":", "pwd"];

/// Characters whose meaning on the line depends on the shell's state or options.
const STATEFUL_CHARACTERS: &[char] = &['$', '`', '~', '*', '?', '[', ']', '{', '}', '!', '#', '^'];

/// Words that open a compound command (a loop assigns its variable) or time it.
const KEYWORDS: [&str; 12] = [
    "for", "select", "case", "while", "until", "if", "function", "coproc", "time", "repeat",
    "foreach", "[[",
];

/// bash's `set -o` options that change how a line of programs runs or what its status is, and
/// their value in `bash --norc -c`.
const DEFAULTS_BASH: [(OptionKind, &str, bool); 13] = [
    (OptionKind::Set, "errexit", false),
    (OptionKind::Set, "noclobber", false),
    (OptionKind::Set, "nounset", false),
    (OptionKind::Set, "pipefail", false),
    (OptionKind::Set, "posix", false),
    (OptionKind::Set, "xtrace", false),
    (OptionKind::Set, "verbose", false),
    (OptionKind::Set, "noexec", false),
    (OptionKind::Set, "physical", false),
    (OptionKind::Set, "keyword", false),
    (OptionKind::Set, "onecmd", false),
    (OptionKind::Shopt, "autocd", false),
    (OptionKind::Shopt, "extglob", false),
];

/// zsh's options of the same kind (as `$options` names them), and their value in `zsh -f -c`.
const DEFAULTS_ZSH: [(OptionKind, &str, bool); 11] = [
    (OptionKind::Set, "errexit", false),
    (OptionKind::Set, "clobber", true),
    (OptionKind::Set, "nounset", false),
    (OptionKind::Set, "pipefail", false),
    (OptionKind::Set, "xtrace", false),
    (OptionKind::Set, "verbose", false),
    (OptionKind::Set, "exec", true),
    (OptionKind::Set, "multios", true),
    (OptionKind::Set, "rcquotes", false),
    (OptionKind::Set, "cshjunkiequotes", false),
    (OptionKind::Set, "autocd", false),
];

/// The functions a shell runs for a command it cannot find.
const NOT_FOUND_HANDLERS: [&str; 2] = ["command_not_found_handle", "command_not_found_handler"];

/// Whether `line` (parsed as `parsed`), typed in a shell whose state is `before`, needs none of
/// that state and changes none of it (see the module).
pub fn needs_no_state(dialect: Dialect, line: &str, parsed: &Parsed, before: &State) -> bool {
    words_need_no_state(dialect, line)
        && changes_nothing(parsed)
        && commands_are_programs(dialect, parsed, before)
        && options_are_defaults(dialect, before)
        && !NOT_FOUND_HANDLERS
            .iter()
            .any(|h| before.functions.contains_key(*h))
        && !before
            .aliases
            .keys()
            .any(|(kind, _)| matches!(kind, AliasKind::Global | AliasKind::Suffix))
        && !sets_what_the_gate_sets(before)
}

/// Whether the person's shell has a variable the gate sets for a line (a build's fetch settings,
/// the lines' package caches): with the state, the person's value is restored over the gate's,
/// as the person set it; without it, the gate's would stand.
fn sets_what_the_gate_sets(before: &State) -> bool {
    let gate = crate::policy::network::FAIL_FETCHES_AT_ONCE
        .iter()
        .map(|(name, _)| *name)
        .chain(
            crate::policy::needs::LINE_CACHES
                .iter()
                .map(|cache| cache.variable),
        );
    gate.into_iter().any(|name| before.vars.contains_key(name))
}

fn words_need_no_state(dialect: Dialect, line: &str) -> bool {
    let words: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || ";|&<>()".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    !line.contains(STATEFUL_CHARACTERS)
        && !line.contains("((")
        && !line.contains("@(")
        && !line.contains("+(")
        && !words.iter().any(|w| KEYWORDS.contains(w))
        && (dialect == Dialect::Bash
            || !words.iter().any(|w| w.starts_with('='))
                && !line.trim_start().starts_with(['<', '>']))
}

fn changes_nothing(parsed: &Parsed) -> bool {
    parsed.opaque.is_empty()
        && parsed.hook_state.is_empty()
        && parsed.assigned.is_empty()
        && parsed.functions.is_empty()
        && !parsed.commands.is_empty()
}

fn commands_are_programs(dialect: Dialect, parsed: &Parsed, before: &State) -> bool {
    let builtin = |name: &str| match dialect {
        Dialect::Bash => crate::shell::state::bash::BUILTINS.contains(&name),
        Dialect::Zsh => crate::shell::state::zsh::BUILTINS.contains(&name),
    };
    let shadowed = before.shadowing_names();
    parsed.commands.iter().all(|c| {
        !c.program.is_empty()
            && !c.calls_line_function
            && !shadowed.contains(&c.program)
            && (!builtin(&c.program) || PURE_BUILTINS.contains(&c.program.as_str()))
            && c.via.iter().all(|v| !builtin(v) && !shadowed.contains(v))
    })
}

fn options_are_defaults(dialect: Dialect, before: &State) -> bool {
    let defaults: &[(OptionKind, &str, bool)] = match dialect {
        Dialect::Bash => &DEFAULTS_BASH,
        Dialect::Zsh => &DEFAULTS_ZSH,
    };
    defaults.iter().all(|(kind, name, default)| {
        before
            .options
            .get(&(*kind, (*name).to_owned()))
            .is_none_or(|on| on == default)
    })
}

/// The program the sandboxed shell runs with `-c` for such a line, which is its first argument:
/// the line, then its `$?` and `PIPESTATUS` on descriptor 3 (moved out of the way of the line's
/// own redirections first), read in the same `eval` as the line so that `PIPESTATUS` is the
/// line's and not `eval`'s.
pub fn runner(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Bash => {
            "builtin exec {__shellgate_out}>&3 3>&-; \
             builtin eval -- \"$1\"$'\\n''__shellgate_ps=\"$? ${PIPESTATUS[*]}\"'; \
             builtin printf '%s' \"$__shellgate_ps\" >&\"$__shellgate_out\"; \
             builtin exit \"${__shellgate_ps%% *}\""
        }
        Dialect::Zsh => {
            "exec {__shellgate_out}>&3 3>&-; \
             builtin eval -- \"$1\"$'\\n''__shellgate_ps=\"$? ${pipestatus[*]}\"'; \
             builtin print -rn -- \"$__shellgate_ps\" >&$__shellgate_out; \
             exit ${__shellgate_ps%% *}"
        }
    }
}

/// `$?` and each `PIPESTATUS` element as the runner reported them (`"1 0 1"`), when they are
/// numbers; empty otherwise.
pub fn reported_status(bytes: &[u8]) -> Vec<i32> {
    let text = String::from_utf8_lossy(bytes);
    let numbers: Option<Vec<i32>> = text.split_whitespace().map(|n| n.parse().ok()).collect();
    numbers.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ShellKind, parse};

    fn state_with(f: impl FnOnce(&mut State)) -> State {
        let mut state = State::default();
        f(&mut state);
        state
    }

    fn free(dialect: Dialect, line: &str, before: &State) -> bool {
        let shell = match dialect {
            Dialect::Bash => ShellKind::Bash,
            Dialect::Zsh => ShellKind::Zsh,
        };
        needs_no_state(dialect, line, &parse(line, shell), before)
    }

    #[test]
    fn programs_with_literal_words_need_no_state() {
        let empty = State::default();
        for line in [
            "ls -la",
            "git status && git log --oneline -5",
            "cargo test -- --test-threads=2",
            "ls -a | wc -l",
            "true | false",
            "sh -c 'ls -a' | true; true | false",
            "./run.sh build > out.txt 2>&1",
            "npm run build",
        ] {
            assert!(free(Dialect::Bash, line, &empty), "{line}");
            assert!(free(Dialect::Zsh, line, &empty), "{line}");
        }
    }

    #[test]
    fn what_reads_or_changes_the_shells_state_does_not() {
        let empty = State::default();
        for line in [
            // Expansions and patterns.
            "echo $HOME",
            "echo \"$x\"",
            "ls `pwd`",
            "ls ~/src",
            "ls *.rs",
            "ls src/?.rs",
            "echo {a,b}",
            "ls !$",
            "ls @(a|b)",
            // Builtins that read or set state, keywords, assignments, functions.
            "cd src",
            "echo hi",
            "printf '%s' x",
            "export A=1",
            "FOO=1",
            "FOO=1 make",
            "for x in a b; do ls; done",
            "if true; then ls; fi",
            "f() { ls; }",
            "(( n++ ))",
            "exec ls",
            "command ls",
            "builtin pwd",
            "source venv/bin/activate",
            "history",
            "set -o vi",
        ] {
            assert!(!free(Dialect::Bash, line, &empty), "{line}");
        }
        for line in ["ls =ls", "< notes.txt", "ls ^a", "ls a#"] {
            assert!(!free(Dialect::Zsh, line, &empty), "{line}");
        }
    }

    #[test]
    fn the_persons_aliases_functions_and_options_take_the_state_along() {
        let alias = state_with(|s| {
            s.aliases
                .insert((AliasKind::Regular, "ls".into()), "ls --color".into());
        });
        assert!(!free(Dialect::Bash, "ls -a", &alias));
        assert!(free(Dialect::Bash, "git status", &alias));
        let function = state_with(|s| {
            s.functions.insert("git".into(), "git() { :; }".into());
        });
        assert!(!free(Dialect::Bash, "git status", &function));
        assert!(!free(Dialect::Bash, "nice git status", &function));
        let handler = state_with(|s| {
            s.functions
                .insert("command_not_found_handle".into(), "x".into());
        });
        assert!(!free(Dialect::Bash, "ls", &handler));
        let global = state_with(|s| {
            s.aliases
                .insert((AliasKind::Global, "G".into()), "| grep".into());
        });
        assert!(!free(Dialect::Zsh, "ls G x", &global));
        for (kind, name, on) in [
            (OptionKind::Set, "pipefail", true),
            (OptionKind::Set, "errexit", true),
            (OptionKind::Set, "noclobber", true),
            (OptionKind::Shopt, "autocd", true),
        ] {
            let set = state_with(|s| {
                s.options.insert((kind, name.into()), on);
            });
            assert!(!free(Dialect::Bash, "ls -a", &set), "{name}");
        }
        let unset = state_with(|s| {
            s.options.insert((OptionKind::Set, "clobber".into()), false);
        });
        assert!(!free(Dialect::Zsh, "ls > out", &unset));
        let cache = state_with(|s| {
            let var = crate::shell::state::Var {
                attrs: Default::default(),
                value: crate::shell::state::Value::Scalar("7".into()),
            };
            s.vars.insert("CARGO_NET_RETRY".into(), var);
        });
        assert!(!free(Dialect::Bash, "cargo build", &cache));
        let defaults = state_with(|s| {
            s.options
                .insert((OptionKind::Set, "pipefail".into()), false);
            s.options.insert((OptionKind::Set, "multios".into()), true);
        });
        assert!(free(Dialect::Bash, "ls -a", &defaults));
        assert!(free(Dialect::Zsh, "ls -a", &defaults));
    }

    #[test]
    fn the_reported_status_is_numbers_or_nothing() {
        assert_eq!(reported_status(b"1 0 1"), [1, 0, 1]);
        assert_eq!(reported_status(b"0"), [0]);
        assert!(reported_status(b"1 x").is_empty());
        assert!(reported_status(b"").is_empty());
    }
}
