//! The shell variables shellgate gives a meaning to, in one table, and what each is to it.
//!
//! Four roles, each a question a part of shellgate asks about a name:
//!
//! * **hook** — does a line that assigns it change what the hooks depend on, or what the next
//!   shell loads? bash's prompts and prompt command, startup files, history (the bash hook reads
//!   a line from it when it cannot capture it), word splitting, options, the search path and home;
//!   zsh's hook arrays, its function, alias, command and option tables, search paths and prompts;
//!   the loader's `LD_*`; where shellgate's config and state live. The decision sends such a line
//!   to a person in every mode (`builtin.hook-state`, [`super::hooks`]).
//! * **seal** — is a change to it never inert when it comes back from a line's sandboxed shell
//!   into the person's? Every variable bash or zsh reads itself (their manuals' "Shell Variables"
//!   and "Parameters Used By The Shell": a change changes what the shell does, often what it runs
//!   — the prompts, `MAILPATH`'s messages, `TEXTDOMAINDIR`'s translations of `$"…"`,
//!   `READNULLCMD`, `STTY`), the loader's `LD_*`, the `XDG_*` directories programs take their
//!   configuration from, and shellgate's own. Such a change is asked, default no
//!   (the binary's `shell::state::seal`; zsh's own special parameters count too, by zsh's mark).
//!
//! * **runs** — is its value code the shell runs unasked, before a prompt or at an event? The
//!   prompt strings (expanded before each prompt; under zsh's `prompt_subst` or bash's
//!   `promptvars` a substitution in one runs), the prompt command and zsh's hook arrays. What such
//!   a value calls may never be redefined by a line (the binary's `shell::state::seal::Unasked`
//!   follows it).
//! * **loads** — set for one command or assigned on the line, does it make a program load code the
//!   line does not show (`PATH=. ls` runs `./ls`, `PYTHONPATH`, `LD_PRELOAD`, `GIT_PAGER`)? The
//!   line is then opaque ([`super::unwrap`]). Not only the shell's own variables: any program's.
//!
//! Families go by prefix (`HIST*`, `LC_*`, `LD_*` …) or suffix (zsh's `*_functions` hook arrays).

/// What a variable's name is to shellgate (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Roles {
    pub hook: bool,
    pub seal: bool,
    pub runs: bool,
    pub loads: bool,
}

impl Roles {
    const NONE: Roles = Roles {
        hook: false,
        seal: false,
        runs: false,
        loads: false,
    };

    const fn or(self, other: Roles) -> Roles {
        Roles {
            hook: self.hook || other.hook,
            seal: self.seal || other.seal,
            runs: self.runs || other.runs,
            loads: self.loads || other.loads,
        }
    }
}

const HOOK: Roles = Roles {
    hook: true,
    ..Roles::NONE
};
const SEAL: Roles = Roles {
    seal: true,
    ..Roles::NONE
};
const BOTH: Roles = HOOK.or(SEAL);
const RUNS: Roles = Roles {
    runs: true,
    ..Roles::NONE
};
const LOADS: Roles = Roles {
    loads: true,
    ..Roles::NONE
};

/// Each name with its roles.
const NAMES: [(&str, Roles); 144] = [
    // bash
    ("PS0", BOTH.or(RUNS)),
    ("PS1", BOTH.or(RUNS)),
    ("PS2", BOTH.or(RUNS)),
    ("PS3", BOTH.or(RUNS)),
    ("PS4", BOTH.or(RUNS).or(LOADS)),
    ("PROMPT_COMMAND", BOTH.or(RUNS).or(LOADS)),
    ("PROMPT_DIRTRIM", BOTH),
    ("BASH_ENV", BOTH.or(LOADS)),
    ("ENV", BOTH.or(LOADS)),
    ("HOME", BOTH),
    ("PATH", BOTH.or(LOADS)),
    ("IFS", BOTH),
    ("SHELLOPTS", BOTH.or(LOADS)),
    ("BASHOPTS", BOTH.or(LOADS)),
    ("POSIXLY_CORRECT", BOTH),
    ("SHELL", BOTH),
    ("BASH_COMPAT", BOTH),
    ("BASH_XTRACEFD", BOTH),
    ("BASH_LOADABLES_PATH", BOTH),
    ("BASH_ARGV0", BOTH),
    ("EXECIGNORE", BOTH),
    ("FUNCNEST", BOTH),
    ("GLOBIGNORE", BOTH),
    ("INPUTRC", BOTH),
    ("READLINE_LINE", HOOK),
    ("READLINE_POINT", HOOK),
    ("BASH_ALIASES", HOOK),
    ("BASH_CMDS", HOOK),
    ("TMOUT", BOTH),
    ("histchars", BOTH),
    ("LD_PRELOAD", HOOK.or(LOADS)),
    ("LD_LIBRARY_PATH", HOOK.or(LOADS)),
    ("LD_AUDIT", HOOK.or(LOADS)),
    ("XDG_CONFIG_HOME", HOOK),
    ("XDG_STATE_HOME", HOOK),
    ("CDPATH", SEAL),
    ("CHILD_MAX", SEAL),
    ("COMPREPLY", SEAL),
    ("EMACS", SEAL),
    ("FCEDIT", SEAL),
    ("FIGNORE", SEAL),
    ("GLOBSORT", SEAL),
    ("HOSTFILE", SEAL),
    ("IGNOREEOF", SEAL),
    ("INSIDE_EMACS", SEAL),
    ("LANG", SEAL),
    ("LANGUAGE", SEAL),
    ("MAIL", SEAL),
    ("MAILCHECK", SEAL),
    ("MAILPATH", SEAL),
    ("TERM", SEAL),
    ("TERMINFO", SEAL),
    ("TERMINFO_DIRS", SEAL),
    ("TEXTDOMAIN", SEAL),
    ("TEXTDOMAINDIR", SEAL),
    ("TIMEFORMAT", SEAL),
    ("auto_resume", SEAL),
    ("LOCPATH", SEAL),
    ("NLSPATH", SEAL),
    ("FPATH", BOTH),
    // zsh
    ("ZDOTDIR", BOTH.or(LOADS)),
    ("precmd_functions", BOTH.or(RUNS)),
    ("preexec_functions", BOTH.or(RUNS)),
    ("chpwd_functions", BOTH.or(RUNS)),
    ("periodic_functions", BOTH.or(RUNS)),
    ("zshaddhistory_functions", BOTH.or(RUNS)),
    ("zshexit_functions", BOTH.or(RUNS)),
    ("zsh_directory_name_functions", BOTH),
    ("functions", HOOK),
    ("functions_source", HOOK),
    ("dis_functions", HOOK),
    ("aliases", HOOK),
    ("galiases", HOOK),
    ("saliases", HOOK),
    ("dis_aliases", HOOK),
    ("dis_galiases", HOOK),
    ("dis_saliases", HOOK),
    ("commands", HOOK),
    ("options", HOOK),
    ("builtins", HOOK),
    ("dis_builtins", HOOK),
    ("reswords", HOOK),
    ("dis_reswords", HOOK),
    ("widgets", HOOK),
    ("keymaps", HOOK),
    ("parameters", HOOK),
    ("path", BOTH),
    ("fpath", BOTH),
    ("module_path", BOTH),
    ("MODULE_PATH", BOTH),
    ("zle_highlight", BOTH),
    ("PROMPT", BOTH.or(RUNS)),
    ("PROMPT2", BOTH.or(RUNS)),
    ("PROMPT3", BOTH.or(RUNS)),
    ("PROMPT4", BOTH.or(RUNS)),
    ("RPROMPT", BOTH.or(RUNS)),
    ("RPROMPT2", BOTH.or(RUNS)),
    ("RPS1", BOTH.or(RUNS)),
    ("RPS2", BOTH.or(RUNS)),
    ("prompt", BOTH.or(RUNS)),
    ("POSTEDIT", BOTH),
    ("SPROMPT", SEAL.or(RUNS)),
    ("PROMPT_EOL_MARK", SEAL.or(RUNS)),
    ("READNULLCMD", SEAL),
    ("NULLCMD", SEAL),
    ("STTY", SEAL),
    ("TIMEFMT", SEAL),
    ("WATCH", SEAL),
    ("watch", SEAL),
    ("WATCHFMT", SEAL),
    ("LOGCHECK", SEAL),
    ("PERIOD", SEAL),
    ("REPORTTIME", SEAL),
    ("REPORTMEMORY", SEAL),
    ("TMPPREFIX", SEAL),
    ("WORDCHARS", SEAL),
    ("ZBEEP", SEAL),
    ("KEYTIMEOUT", SEAL),
    ("KEYBOARD_HACK", SEAL),
    ("LISTMAX", SEAL),
    ("DIRSTACKSIZE", SEAL),
    ("CORRECT_IGNORE", SEAL),
    ("CORRECT_IGNORE_FILE", SEAL),
    ("SAVEHIST", SEAL),
    ("MANPATH", SEAL),
    ("manpath", SEAL),
    ("cdpath", SEAL),
    ("fignore", SEAL),
    ("mailpath", SEAL),
    ("psvar", SEAL),
    // Other programs' variables that make them load code.
    ("PYTHONSTARTUP", LOADS),
    ("PYTHONPATH", LOADS),
    ("PERL5OPT", LOADS),
    ("PERL5LIB", LOADS),
    ("RUBYOPT", LOADS),
    ("NODE_OPTIONS", LOADS),
    ("GIT_SSH_COMMAND", LOADS),
    ("GIT_EXTERNAL_DIFF", LOADS),
    ("GIT_PAGER", LOADS),
    ("PAGER", LOADS),
    ("EDITOR", LOADS),
    ("VISUAL", LOADS),
    ("GIT_EDITOR", LOADS),
    ("GIT_SEQUENCE_EDITOR", LOADS),
];

/// Families by prefix: history (`HISTFILE`, `HISTCONTROL` …), shellgate's own, locales, zsh's
/// line editor, readline's, the dynamic loader's and the XDG directories.
const PREFIXES: [(&str, Roles); 11] = [
    ("HIST", BOTH),
    ("SHELLGATE_", BOTH),
    ("SHELLGATE", HOOK),
    ("__shellgate", HOOK),
    ("_shellgate", HOOK),
    ("__Shellgate", HOOK),
    ("LC_", SEAL),
    ("ZLE_", SEAL),
    ("READLINE_", SEAL),
    ("LD_", SEAL),
    ("XDG_", SEAL),
];

/// Families by suffix: zsh's hook arrays (`precmd_functions` …).
const SUFFIXES: [(&str, Roles); 1] = [("_functions", SEAL)];

/// The roles of the variable `name` (a plain name: no subscript).
pub fn roles(name: &str) -> Roles {
    let listed = NAMES
        .iter()
        .filter(|(n, _)| *n == name)
        .fold(Roles::NONE, |acc, (_, r)| acc.or(*r));
    let prefixed = PREFIXES
        .iter()
        .filter(|(p, _)| name.starts_with(p))
        .fold(Roles::NONE, |acc, (_, r)| acc.or(*r));
    let suffixed = SUFFIXES
        .iter()
        .filter(|(s, _)| name.ends_with(s))
        .fold(Roles::NONE, |acc, (_, r)| acc.or(*r));
    listed.or(prefixed).or(suffixed)
}

/// The variables whose value the shell runs unasked (the `runs` role), each once.
pub fn names_that_run() -> impl Iterator<Item = &'static str> {
    NAMES
        .iter()
        .filter(|(_, roles)| roles.runs)
        .map(|(name, _)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_listed_once() {
        let mut names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(names.len(), before);
    }

    #[test]
    fn names_and_families_have_their_roles() {
        assert_eq!(roles("PS0"), BOTH.or(RUNS));
        assert_eq!(roles("MAILPATH"), SEAL);
        assert_eq!(roles("BASH_ALIASES"), HOOK);
        assert_eq!(roles("HISTFILE"), BOTH);
        assert_eq!(roles("LC_ALL"), SEAL);
        assert_eq!(roles("LD_PRELOAD"), BOTH.or(LOADS));
        assert_eq!(roles("precmd_functions"), BOTH.or(RUNS));
        assert_eq!(roles("__shellgate_rl"), HOOK);
        assert_eq!(roles("EDITOR"), LOADS);
        assert_eq!(roles("PS4"), BOTH.or(RUNS).or(LOADS));
        assert_eq!(roles("TERM_PROGRAM"), Roles::NONE);
    }

    /// The two roles that were lists of their own (in `unwrap` and the seal) hold exactly those
    /// names: no family adds to them.
    #[test]
    fn runs_and_loads_are_exactly_their_names() {
        let loads: Vec<&str> = NAMES
            .iter()
            .filter(|(n, _)| roles(n).loads)
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(loads.len(), 25, "{loads:?}");
        let runs: Vec<&str> = names_that_run().collect();
        assert_eq!(runs.len(), 23, "{runs:?}");
        for name in [
            "PS1",
            "RPROMPT",
            "PROMPT_COMMAND",
            "zshexit_functions",
            "prompt",
        ] {
            assert!(runs.contains(&name), "{name}");
        }
        for name in [
            "PATH",
            "LD_PRELOAD",
            "PYTHONPATH",
            "GIT_PAGER",
            "EDITOR",
            "ZDOTDIR",
        ] {
            assert!(loads.contains(&name), "{name}");
        }
        // A family member is not named: only names the table lists load code or run.
        assert!(!roles("LD_BIND_NOW").loads && !roles("foo_functions").runs);
    }
}
