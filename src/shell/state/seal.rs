//! Sealed by construction: what a line's sandboxed shell gives back is applied to the person's
//! shell only from an allow-list of what is inert; everything else needs a yes (whose default is
//! no) or is never applied.
//!
//! **Inert** (applied without a question) means: nothing runs because of it, in the person's shell
//! or in a program that shell starts outside the sandbox, and it changes nothing those read as
//! configuration. Exactly:
//!
//! * the working directory (a `cd`) and the umask (an octal number);
//! * an unexported variable whose name the shell itself gives no meaning to ([`is_shell_read`]) and
//!   whose value holds no code ([`holds_code`]): only code that names the variable reads it, and
//!   no shell evaluates such a value again as code — not as arithmetic or an array subscript
//!   (where bash and zsh run a `$(…)` or backquote they find), not as a prompt;
//! * an exported variable whose name and value the typed line spells out literally
//!   (`export EDITOR=vim; make`): the person read exactly that on their line;
//! * likewise an alias the typed line defines with a literal value (`alias ll='ls -l'`) and an
//!   option it turns on or off by name (`shopt -s globstar`, `set -o vi`, `setopt autocd`): the
//!   person read exactly that on their line (see [`super::Typed`]);
//! * the variables the shell's own builtins set as results (`OLDPWD`, `REPLY`, `MAPFILE`,
//!   `OPTARG`), whose value holds no code;
//! * the removal of an ordinary variable, of a function or of an alias (nothing new runs: a name
//!   the shell no longer knows is a program or an error);
//! * `PATH` or a prompt string set back to a value this shell had when an earlier line started —
//!   for `PATH`, made only of directories the current `PATH` has (a venv's `deactivate`;
//!   [`set_back`]): every such value was the person's — from their startup files, typed, or applied
//!   after their yes — and it brings back no directory they have left.
//!
//! Everything else is **asked**, and the question defaults to no: exported variables (every
//! program the shell starts outside the sandbox reads them, and what they mean is each program's
//! business: git alone reads over a hundred `GIT_*` variables, several of which run programs or
//! write files — `GIT_CONFIG_COUNT`/`KEY`/`VALUE`, `GIT_CONFIG_PARAMETERS`, `GIT_TRACE2_EVENT` —
//! and so do `LD_*`, `BROWSER`, `STARSHIP_CONFIG`, `DIRENV_CONFIG`, `PYTHONSTARTUP`, …, so the
//! rule is the export, not a list), variables the shell reads ([`is_shell_read`]: prompts and the
//! prompt command, `MAILPATH`/`MAILCHECK`, `TEXTDOMAIN`/`TEXTDOMAINDIR`, locales, zsh's special
//! parameters …), values that hold code, functions, and aliases and options the typed line does
//! not spell out.
//!
//! **Never** applied, even after a yes: a function or an alias named like anything the code the
//! shell runs unasked calls ([`Unasked`]: the prompt and what it calls, hook functions), besides
//! the rules in [`super::treatment`] (traps are never copied; shellgate's own names; read-only
//! variables and name references).

use super::{State, Value, Var};
use std::collections::BTreeSet;

/// Is a change to `name` never inert? The `seal` role of [`crate::parse::shell_vars`] — every
/// variable bash or zsh reads itself (a change changes what the shell does, often what it runs:
/// the prompts and prompt command, `MAILPATH`'s messages, `TEXTDOMAINDIR`'s translations of
/// `$"…"`, `READNULLCMD`, `STTY`), the loader's `LD_*`, the `XDG_*` directories, shellgate's own
/// — and any parameter zsh marked special.
pub fn is_shell_read(name: &str, old: Option<&Var>, new: Option<&Var>) -> bool {
    crate::parse::shell_vars::roles(name).seal
        || old.is_some_and(|v| v.attrs.special)
        || new.is_some_and(|v| v.attrs.special)
}

/// Variables the shell's own builtins set as results (`cd`, `read`, `mapfile`, `getopts`): a
/// line that runs them changes them, and their value is data.
const RESULTS: [&str; 4] = ["OLDPWD", "REPLY", "MAPFILE", "OPTARG"];

pub fn is_builtin_result(name: &str) -> bool {
    RESULTS.contains(&name)
}

/// The variables a line may set back to a value the shell had without a question
/// ([`set_back`]): `PATH` and the prompt strings, which a venv's `activate` changes and its
/// `deactivate` restores.
pub fn held_name(name: &str) -> bool {
    name == "PATH" || is_prompt_name(name)
}

/// Does the line set a [`held_name`] back to a value the shell had, when an earlier line started
/// (`held`), before its current one? Every value the shell had was the person's (startup files, typed, or applied after
/// their yes). A prompt's text is all it runs, and the person's prompt ran it already (exported or
/// not: a venv's `activate` exports the prompt, and zsh does not report that on its specials). A
/// `PATH` value also names directories whose contents may have changed since: it must keep its
/// export and be made only of directories the current `PATH` has, so a line cannot bring back one
/// the person has left (an old venv's `bin`).
pub fn set_back(name: &str, old: Option<&Var>, new: Option<&Var>, held: &super::Held) -> bool {
    let (Some(old), Some(new)) = (old, new) else {
        return false;
    };
    let Value::Scalar(after) = &new.value else {
        return false;
    };
    // Back, not forward: to a value the shell had before its current one (the held values are in
    // the order the shell first had them). After a `deactivate`, a line that activates the venv
    // again is asked, prompt and all.
    let values = held.get(name).map_or(&[][..], Vec::as_slice);
    let position = |value: &str| values.iter().position(|v| v == value);
    let current = match &old.value {
        Value::Scalar(text) => position(text),
        _ => None,
    };
    let was_held = position(after)
        .zip(current)
        .is_some_and(|(at, now)| at < now);
    let narrows = match (name, &old.value) {
        ("PATH", Value::Scalar(before)) => {
            let current: Vec<&str> = before.split(':').collect();
            old.attrs.exported == new.attrs.exported
                && after.split(':').all(|dir| current.contains(&dir))
        }
        ("PATH", _) => false,
        _ => true,
    };
    held_name(name) && !new.attrs.readonly && was_held && narrows
}

/// Would this text run a command if the shell evaluated it again — as arithmetic or an array
/// subscript (bash and zsh expand `$(…)`, backquotes and `${…}` in a subscript, and a variable's
/// value in arithmetic is evaluated as arithmetic in turn), as a prompt (`${x@P}`, `prompt_subst`),
/// or as a `$"…"` translation? `$(`, a backquote, `${` or `$[` anywhere.
pub fn holds_code(text: &str) -> bool {
    text.contains("$(") || text.contains('`') || text.contains("${") || text.contains("$[")
}

/// Does any part of the value (an element, a key) hold code?
pub fn value_holds_code(value: &Value) -> bool {
    match value {
        Value::Unset => false,
        Value::Scalar(text) => holds_code(text),
        Value::Indexed(items) => items.iter().any(|(_, v)| holds_code(v)),
        Value::Assoc(pairs) => pairs.iter().any(|(k, v)| holds_code(k) || holds_code(v)),
    }
}

/// The names the code the shell runs unasked may call: every word of the prompt strings, the
/// prompt command, zsh's hook arrays and the hook functions (`precmd`, `preexec`, `chpwd`,
/// `TRAP*`, `command_not_found_handle(r)`, …), and of every function among those words, and so on
/// (a function the prompt calls may call another). A word is a maximal run of the characters a
/// function or alias name can have: the set holds more than the names really called (a variable
/// name, an option), never fewer — a function of one of these names, or an alias, would run
/// instead of what the prompt runs now (`__git_ps1`, `git`), so a line may never define one.
/// shellgate's own hook functions are not followed (their words are theirs).
pub struct Unasked {
    names: BTreeSet<String>,
}

/// Functions the shell runs by their name alone.
const HOOK_FUNCTIONS: [&str; 9] = [
    "precmd",
    "preexec",
    "chpwd",
    "periodic",
    "zshaddhistory",
    "zshexit",
    "zsh_directory_name",
    "command_not_found_handle",
    "command_not_found_handler",
];

impl Unasked {
    /// From the shell's state before the line and after it (a line that changes the prompt and
    /// defines what it calls is caught either way).
    pub fn of(states: &[&State]) -> Unasked {
        let mut names: BTreeSet<String> = HOOK_FUNCTIONS.iter().map(|s| (*s).to_owned()).collect();
        let mut queue: Vec<String> = Vec::new();
        for state in states {
            for name in crate::parse::shell_vars::names_that_run() {
                if let Some(var) = state.vars.get(name) {
                    for text in texts(&var.value) {
                        queue.extend(words(text));
                    }
                }
            }
            queue.extend(
                state
                    .functions
                    .keys()
                    .filter(|n| is_unasked_name(n))
                    .cloned(),
            );
        }
        queue.extend(names.iter().cloned());
        let mut followed: BTreeSet<String> = BTreeSet::new();
        // Every function body is followed at most once per state: bounded by the functions.
        while let Some(name) = queue.pop() {
            names.insert(name.clone());
            if name.starts_with("__shellgate") || !followed.insert(name.clone()) {
                continue;
            }
            for state in states {
                if let Some(body) = state.functions.get(&name) {
                    queue.extend(words(body).filter(|w| !followed.contains(w)));
                }
            }
        }
        Unasked { names }
    }

    /// Could the shell run something of this name unasked?
    pub fn calls(&self, name: &str) -> bool {
        is_unasked_name(name) || self.names.contains(name)
    }
}

/// A function the shell runs by its name alone: a hook (`precmd` …) or a zsh trap (`TRAPINT` …).
fn is_unasked_name(name: &str) -> bool {
    HOOK_FUNCTIONS.contains(&name) || name.starts_with("TRAP")
}

fn texts(value: &Value) -> Vec<&str> {
    match value {
        Value::Unset => Vec::new(),
        Value::Scalar(text) => vec![text.as_str()],
        Value::Indexed(items) => items.iter().map(|(_, v)| v.as_str()).collect(),
        Value::Assoc(pairs) => pairs.iter().map(|(_, v)| v.as_str()).collect(),
    }
}

/// The maximal runs of characters a function or alias name may hold.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || "_-.:+@%,".contains(c)))
        .filter(|w| !w.is_empty() && w.len() <= 256)
        .map(str::to_owned)
}

/// What the question shows for a value: at most 80 characters of it, quoted.
pub fn shown_value(value: &Value) -> String {
    let text = match value {
        Value::Unset => return "(no value)".to_owned(),
        Value::Scalar(text) => text.clone(),
        Value::Indexed(items) => {
            let parts: Vec<&str> = items.iter().map(|(_, v)| v.as_str()).collect();
            format!("({})", parts.join(" "))
        }
        Value::Assoc(pairs) => {
            let parts: Vec<String> = pairs.iter().map(|(k, v)| format!("[{k}]={v}")).collect();
            format!("({})", parts.join(" "))
        }
    };
    let mut shown: String = text.chars().take(80).collect();
    if shown.len() < text.len() {
        shown.push('…');
    }
    super::quote(&crate::intake::visible_line(&shown))
}

/// A prompt string of either shell (zsh's `prompt` and `SPROMPT` are bash's nothing, harmlessly).
pub fn is_prompt_name(name: &str) -> bool {
    crate::parse::hooks::is_prompt_string(name) || name == "prompt" || name == "SPROMPT"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::state::Attrs;

    fn scalar(text: &str) -> Var {
        Var {
            attrs: Attrs::default(),
            value: Value::Scalar(text.into()),
        }
    }

    #[test]
    fn code_in_a_value_is_seen() {
        for text in ["a[$(id)]", "`id`", "${x@P}", "a[${b}]", "$[1]"] {
            assert!(holds_code(text), "{text}");
        }
        for text in ["/usr/bin:/bin", "hello world", "$HOME", "a[1]", "50%"] {
            assert!(!holds_code(text), "{text}");
        }
    }

    #[test]
    fn what_the_prompt_calls_is_followed_through_functions() {
        let mut state = State::default();
        state
            .vars
            .insert("PS1".into(), scalar("[$?] $(__git_ps1 \" (%s)\")$ "));
        state.functions.insert(
            "__git_ps1".into(),
            "__git_ps1 () \n{ \n    __git_eread x; git rev-parse\n}".into(),
        );
        state.functions.insert(
            "__git_eread".into(),
            "__git_eread () \n{ \n    read r\n}".into(),
        );
        state
            .functions
            .insert("deploy".into(), "deploy () \n{ \n    make\n}".into());
        let unasked = Unasked::of(&[&state]);
        for name in [
            "__git_ps1",
            "__git_eread",
            "git",
            "precmd",
            "TRAPINT",
            "read",
        ] {
            assert!(unasked.calls(name), "{name}");
        }
        assert!(!unasked.calls("deploy") && !unasked.calls("make"));
        let mut zsh = State::default();
        zsh.vars.insert(
            "precmd_functions".into(),
            Var {
                attrs: Attrs::default(),
                value: Value::Indexed(vec![(1, "vcs_line".into())]),
            },
        );
        zsh.functions
            .insert("vcs_line".into(), "git status --porcelain".into());
        let unasked = Unasked::of(&[&zsh]);
        assert!(unasked.calls("vcs_line") && unasked.calls("git"));
    }

    #[test]
    fn shell_read_names_by_list_rule_and_zsh_mark() {
        for name in [
            "MAILPATH",
            "MAILCHECK",
            "TEXTDOMAINDIR",
            "HISTFILE",
            "LC_ALL",
            "prompt",
        ] {
            assert!(is_shell_read(name, None, None), "{name}");
        }
        assert!(!is_shell_read("x", None, None));
        let mut special = scalar("1");
        special.attrs.special = true;
        assert!(is_shell_read("WHATEVER", None, Some(&special)));
    }
}
