//! Lines typed in a hooked shell that need none of the shell's own state, and change none of it:
//! they run in the sandbox as `bash -c LINE` / `zsh -f -c LINE` would, without the person's
//! state sourced first and without a dump of it after (issue 27: in bash that is ≈ 1.5 ms of a
//! typed line, in zsh ≈ 4.8 ms). Only the line's `$?` and `PIPESTATUS` come back.
//!
//! Why such a line behaves as it would with the state (the argument, one class at a time):
//! - **What it runs.** Every command is a program looked up on `PATH` (or by its path), or one of
//!   a few builtins that read no state ([`PURE_BUILTINS`]); none is a function, a disabled
//!   builtin, a shell keyword, or a builtin that reads or sets the shell's state. An alias is
//!   one of the person's plain ones (`ls='ls --color=auto'`: one command of literal words, to a
//!   program or another such alias): it is defined for the line ([`Plan::aliases`]), the one part
//!   of the state that goes along. `PATH` and every other exported variable are in the line's
//!   environment either way.
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
/// their value in `bash --norc -c`. (`extglob`, which bash-completion turns on, is not among
/// them: its patterns need `?`, `*`, `+(`, `@(` or `!`, none of which such a line has.)
const DEFAULTS_BASH: [(OptionKind, &str, bool); 12] = [
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

/// How a stateless line runs: the person's aliases it uses, defined first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Name and value of each alias the line's commands expand, in the order to define them.
    pub aliases: Vec<(String, String)>,
}

/// How `line` (parsed as `parsed`), typed in a shell whose state is `before`, runs without that
/// state; `None` when it needs it or changes it (see the module).
pub fn plan(dialect: Dialect, line: &str, parsed: &Parsed, before: &State) -> Option<Plan> {
    let mut plan = Plan::default();
    let free = words_need_no_state(dialect, line)
        && changes_nothing(parsed)
        && commands_are_programs(dialect, parsed, before, &mut plan)
        && options_are_defaults(dialect, before)
        && !NOT_FOUND_HANDLERS
            .iter()
            .any(|h| before.functions.contains_key(*h))
        && !before
            .aliases
            .keys()
            .any(|(kind, _)| matches!(kind, AliasKind::Global | AliasKind::Suffix))
        && !sets_what_the_gate_sets(before);
    free.then_some(plan)
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

fn commands_are_programs(
    dialect: Dialect,
    parsed: &Parsed,
    before: &State,
    plan: &mut Plan,
) -> bool {
    parsed.commands.iter().all(|c| {
        !c.program.is_empty()
            && !c.calls_line_function
            && c.via
                .iter()
                .all(|v| !builtin(dialect, v) && !before.shadows(v))
            && runs_a_program(dialect, &c.program, before, plan, 0)
    })
}

fn builtin(dialect: Dialect, name: &str) -> bool {
    match dialect {
        Dialect::Bash => crate::shell::state::bash::BUILTINS.contains(&name),
        Dialect::Zsh => crate::shell::state::zsh::BUILTINS.contains(&name),
    }
}

/// How deep an alias may lead to another.
const ALIAS_DEPTH: usize = 4;

/// Whether the command word `name` runs a program (or a pure builtin): directly, or through the
/// person's aliases, each of which is then added to `plan`. An alias is followed only when its
/// value is one command of literal words, as a line must be, that does not end in a blank
/// (which would expand the next word too); its first word is then the name, unless it is the
/// alias itself (not expanded again).
fn runs_a_program(
    dialect: Dialect,
    name: &str,
    before: &State,
    plan: &mut Plan,
    depth: usize,
) -> bool {
    if let Some(value) = before.aliases.get(&(AliasKind::Regular, name.to_owned())) {
        let first = value.split_whitespace().next().unwrap_or_default();
        let plain = depth < ALIAS_DEPTH
            && !value.ends_with(char::is_whitespace)
            && !value.contains(|c: char| ";|&<>()\\'\"\n".contains(c))
            && words_need_no_state(dialect, value);
        let follows = plain
            && (first == name
                && !before.functions.contains_key(name)
                && program_or_pure(dialect, name, before)
                || first != name && runs_a_program(dialect, first, before, plan, depth + 1));
        if follows && !plan.aliases.iter().any(|(n, _)| n == name) {
            plan.aliases.push((name.to_owned(), value.clone()));
        }
        return follows;
    }
    !before.shadows(name) && program_or_pure(dialect, name, before)
}

fn program_or_pure(dialect: Dialect, name: &str, before: &State) -> bool {
    !before.disabled.iter().any(|n| n == name)
        && (!builtin(dialect, name) || PURE_BUILTINS.contains(&name))
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

/// What the sandboxed shell runs first for a line with aliases: alias expansion on (bash turns
/// it off in `-c`), and each alias, on lines of their own before the line is parsed.
pub fn alias_definitions(dialect: Dialect, plan: &Plan) -> String {
    if plan.aliases.is_empty() {
        return String::new();
    }
    let mut out = match dialect {
        Dialect::Bash => "builtin shopt -s expand_aliases\n".to_owned(),
        Dialect::Zsh => String::new(),
    };
    for (name, value) in &plan.aliases {
        out.push_str(&format!(
            "builtin alias -- {}\n",
            crate::shell::state::quote(&format!("{name}={value}"))
        ));
    }
    out
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
        plan(dialect, line, &parse(line, shell), before).is_some()
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
            for (name, value) in [
                ("ls", "ls --color=auto"),
                ("ll", "ls -l"),
                ("g", "git"),
                ("up", "cd .."),
                ("lsd", "ls $HOME"),
                ("pager", "less "),
                ("both", "ls; ls"),
                ("greet", "hi"),
            ] {
                s.aliases
                    .insert((AliasKind::Regular, name.into()), value.into());
            }
            s.functions.insert("hi".into(), "hi() { :; }".into());
        });
        let planned = |line: &str| {
            plan(Dialect::Bash, line, &parse(line, ShellKind::Bash), &alias).map(|p| p.aliases)
        };
        let pair = |n: &str, v: &str| (n.to_owned(), v.to_owned());
        // Aliases of plain words to programs are defined for the line, one leading to another.
        assert_eq!(planned("ls -a"), Some(vec![pair("ls", "ls --color=auto")]));
        assert_eq!(
            planned("ll src"),
            Some(vec![pair("ls", "ls --color=auto"), pair("ll", "ls -l")])
        );
        assert_eq!(planned("git status"), Some(vec![]));
        assert_eq!(
            planned("g log | ls"),
            Some(vec![pair("g", "git"), pair("ls", "ls --color=auto")])
        );
        // To a builtin that sets state, with an expansion, ending in a blank, two commands, a
        // function: the state goes along.
        for line in ["up", "lsd", "pager x", "both", "greet"] {
            assert_eq!(planned(line), None, "{line}");
        }
        let definitions = alias_definitions(
            Dialect::Bash,
            &plan(Dialect::Bash, "ls", &parse("ls", ShellKind::Bash), &alias).unwrap(),
        );
        assert_eq!(
            definitions,
            "builtin shopt -s expand_aliases\nbuiltin alias -- 'ls=ls --color=auto'\n"
        );
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
        let completion = state_with(|s| {
            s.options
                .insert((OptionKind::Shopt, "extglob".into()), true);
        });
        assert!(free(Dialect::Bash, "ls -a", &completion));
        assert!(!free(Dialect::Bash, "ls !(x)", &completion));
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
        use crate::shell::state::statuses;
        assert_eq!(statuses("1 0 1"), [1, 0, 1]);
        assert_eq!(statuses("0"), [0]);
        assert!(statuses("1 x").is_empty());
        assert!(statuses("").is_empty());
    }
}
