//! The shell variables shellgate gives a meaning to, in one table, and what each is to it.
//!
//! Two roles, each a question a part of shellgate asks about a name:
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
//! Families go by prefix (`HIST*`, `LC_*`, `LD_*` …) or suffix (zsh's `*_functions` hook arrays).

/// What a variable's name is to shellgate (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Roles {
    pub hook: bool,
    pub seal: bool,
}

impl Roles {
    fn or(self, other: Roles) -> Roles {
        Roles {
            hook: self.hook || other.hook,
            seal: self.seal || other.seal,
        }
    }
}

const HOOK: Roles = Roles {
    hook: true,
    seal: false,
};
const SEAL: Roles = Roles {
    hook: false,
    seal: true,
};
const BOTH: Roles = Roles {
    hook: true,
    seal: true,
};

/// Each name with its roles.
const NAMES: [(&str, Roles); 130] = [
    // bash
    ("PS0", BOTH),
    ("PS1", BOTH),
    ("PS2", BOTH),
    ("PS3", BOTH),
    ("PS4", BOTH),
    ("PROMPT_COMMAND", BOTH),
    ("PROMPT_DIRTRIM", BOTH),
    ("BASH_ENV", BOTH),
    ("ENV", BOTH),
    ("HOME", BOTH),
    ("PATH", BOTH),
    ("IFS", BOTH),
    ("SHELLOPTS", BOTH),
    ("BASHOPTS", BOTH),
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
    ("LD_PRELOAD", HOOK),
    ("LD_LIBRARY_PATH", HOOK),
    ("LD_AUDIT", HOOK),
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
    ("ZDOTDIR", BOTH),
    ("precmd_functions", BOTH),
    ("preexec_functions", BOTH),
    ("chpwd_functions", BOTH),
    ("periodic_functions", BOTH),
    ("zshaddhistory_functions", BOTH),
    ("zshexit_functions", BOTH),
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
    ("PROMPT", BOTH),
    ("PROMPT2", BOTH),
    ("PROMPT3", BOTH),
    ("PROMPT4", BOTH),
    ("RPROMPT", BOTH),
    ("RPROMPT2", BOTH),
    ("RPS1", BOTH),
    ("RPS2", BOTH),
    ("prompt", BOTH),
    ("POSTEDIT", BOTH),
    ("SPROMPT", SEAL),
    ("PROMPT_EOL_MARK", SEAL),
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
        .fold(Roles::default(), |acc, (_, r)| acc.or(*r));
    let prefixed = PREFIXES
        .iter()
        .filter(|(p, _)| name.starts_with(p))
        .fold(Roles::default(), |acc, (_, r)| acc.or(*r));
    let suffixed = SUFFIXES
        .iter()
        .filter(|(s, _)| name.ends_with(s))
        .fold(Roles::default(), |acc, (_, r)| acc.or(*r));
    listed.or(prefixed).or(suffixed)
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
        assert_eq!(roles("PS0"), BOTH);
        assert_eq!(roles("MAILPATH"), SEAL);
        assert_eq!(roles("BASH_ALIASES"), HOOK);
        assert_eq!(roles("HISTFILE"), BOTH);
        assert_eq!(roles("LC_ALL"), SEAL);
        assert_eq!(roles("LD_PRELOAD"), BOTH);
        assert_eq!(roles("precmd_functions"), BOTH);
        assert_eq!(roles("__shellgate_rl"), HOOK);
        assert_eq!(roles("EDITOR"), Roles::default());
    }
}
