//! zsh: reading the dump of `__shellgate_dump` (`shell/zsh-state.zsh`), and writing the input and
//! apply scripts.
//!
//! zsh lists its state through the `zsh/parameter` hashes (`parameters`, `functions`, `aliases`,
//! `options` …), so the dump is records of NUL-separated fields, written by `print -rn` without a
//! subshell: `V name type value`, `A name type count elements…`, `H name type count keys-and-values…`,
//! `F name body`, `L a|g|s name value`, `O name on|off`, `U umask`, `D cwd`, `B builtin`,
//! `S "$? pipestatus…"`, and `E` at the end. (A NUL inside a zsh value is dropped by the dump.)
//! A dump of names only has its own header and `NS count name type…`, `FN count name…` instead of
//! the variables and functions.
//!
//! A function comes back as its body; the apply script defines it as `functions[name]=body`,
//! which zsh parses as a function body and never runs: no text of the line's can run in the
//! person's shell by being applied.

use super::{
    AliasKind, Attrs, Change, DumpError, Limits, OptionKind, State, Treatment, Value, Var, quote,
    valid_alias_name, valid_function_name, valid_identifier,
};

/// The first record of a dump.
pub const HEADER: &str = "shellgate-zsh-state 1";

/// The first record of a dump of names only (`__shellgate_dump names`: see [`State::names_only`]).
pub const NAMES_HEADER: &str = "shellgate-zsh-names 1";

/// The dump function, for the person's shell and the sandboxed one.
pub const DUMP_FUNCTION: &str = include_str!("../../../shell/zsh-state.zsh");

/// zsh's special parameters that a person sets and a line may change (the scalar side of tied
/// pairs: `PATH`, not `path`). Every other special is the shell's own and is neither copied into
/// the sandbox nor compared.
const SETTABLE_SPECIALS: [&str; 52] = [
    "PATH",
    "FPATH",
    "CDPATH",
    "MANPATH",
    "MODULE_PATH",
    "MAILPATH",
    "HISTFILE",
    "HISTSIZE",
    "SAVEHIST",
    "histchars",
    "PS1",
    "PS2",
    "PS3",
    "PS4",
    "PROMPT",
    "PROMPT2",
    "PROMPT3",
    "PROMPT4",
    "RPROMPT",
    "RPS1",
    "RPROMPT2",
    "RPS2",
    "SPROMPT",
    "IFS",
    "HOME",
    "WORDCHARS",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LC_COLLATE",
    "LC_MESSAGES",
    "LC_NUMERIC",
    "LC_TIME",
    "TERM",
    "TERMINFO",
    "KEYTIMEOUT",
    "LISTMAX",
    "MAILCHECK",
    "PERIOD",
    "READNULLCMD",
    "NULLCMD",
    "REPORTTIME",
    "TMOUT",
    "TIMEFMT",
    "TMPPREFIX",
    "DIRSTACKSIZE",
    "CORRECT_IGNORE",
    "POSTEDIT",
    "PROMPT_EOL_MARK",
    "ZBEEP",
    "ZDOTDIR",
    "FIGNORE",
];

/// zsh options fixed by how the shell was started, or meaningless in the sandboxed `zsh -f -c`,
/// or tracing (which would trace shellgate's own steps): not copied, not compared.
const FIXED_OPTIONS: [&str; 18] = [
    "interactive",
    "login",
    "shinstdin",
    "stdin",
    "onecmd",
    "singlecommand",
    "restricted",
    "privileged",
    "zle",
    "monitor",
    "rcs",
    "globalrcs",
    "xtrace",
    "verbose",
    "emacs",
    "vi",
    "exec",
    "sourcetrace",
];

pub(super) fn option_sent(name: &str) -> bool {
    !FIXED_OPTIONS.contains(&name)
}

pub(super) fn option_treatment(name: &str) -> Treatment {
    if name.contains("hist") || name == "promptsubst" || name == "debugbeforecmd" {
        Treatment::Ask
    } else {
        Treatment::Silent
    }
}

/// Variables the input script leaves out: the shell's own specials (all but
/// [`SETTABLE_SPECIALS`]) and read-only specials.
pub(super) fn skipped_on_input(name: &str, var: &Var) -> bool {
    var.attrs.special && (var.attrs.readonly || !SETTABLE_SPECIALS.contains(&name))
}

/// Parses the dump, or the last of several: a line the sandbox refused something is run again
/// with the grant after a yes, and each run writes its state on the same descriptor. The line's
/// state is the last run's; every dump must be complete.
pub(super) fn parse(dump: &[u8], limits: Limits) -> Result<State, DumpError> {
    let fields = super::nul_fields(dump, limits.entries * 64)?;
    let mut it = fields.into_iter().peekable();
    let mut state = parse_one(&mut it, limits)?;
    while it.peek().is_some() {
        state = parse_one(&mut it, limits)?;
    }
    Ok(state)
}

/// One dump, from its header to its `E` record.
fn parse_one<'a>(
    it: &mut impl Iterator<Item = &'a [u8]>,
    limits: Limits,
) -> Result<State, DumpError> {
    let mut next = || -> Result<&str, DumpError> {
        super::utf8(
            it.next()
                .ok_or_else(|| DumpError("the shell state ends early".into()))?,
        )
    };
    let names_only = match next()? {
        HEADER => false,
        NAMES_HEADER => true,
        _ => return Err(DumpError("the shell state has no shellgate header".into())),
    };
    let mut state = State {
        names_only,
        ..State::default()
    };
    let mut function_bytes = 0usize;
    loop {
        match next()? {
            "E" => return Ok(state),
            "V" => {
                let (name, kind, value) = (next()?, next()?, next()?);
                add_var(
                    &mut state,
                    name,
                    kind,
                    Value::Scalar(value.to_owned()),
                    limits,
                )?;
            }
            "A" => {
                let (name, kind) = (next()?, next()?);
                let count = count(next()?, limits)?;
                let mut items = Vec::with_capacity(count.min(1024));
                for i in 0..count {
                    items.push((i as u64 + 1, next()?.to_owned()));
                }
                add_var(&mut state, name, kind, Value::Indexed(items), limits)?;
            }
            "H" => {
                let (name, kind) = (next()?, next()?);
                let count = count(next()?, limits)?;
                let mut pairs = Vec::with_capacity((count / 2).min(1024));
                for _ in 0..count / 2 {
                    pairs.push((next()?.to_owned(), next()?.to_owned()));
                }
                if count % 2 == 1 {
                    next()?;
                }
                add_var(&mut state, name, kind, Value::Assoc(pairs), limits)?;
            }
            // One function, alias or option a record: what a shell whose hook was loaded
            // before the lists below (an older shellgate) still writes.
            "F" => {
                let (name, body) = (next()?, next()?);
                add_function(&mut state, &mut function_bytes, name, body, limits);
            }
            "L" => {
                let (kind, name, value) = (alias_kind(next()?)?, next()?, next()?);
                add_alias(&mut state, kind, name, value, limits);
            }
            "O" => {
                let (name, on) = (next()?, next()?);
                add_option(&mut state, name, on);
            }
            "FS" => {
                for _ in 0..pairs(next()?, limits)? {
                    let (name, body) = (next()?, next()?);
                    add_function(&mut state, &mut function_bytes, name, body, limits);
                }
            }
            // A dump of names only: each parameter's name and type (its value not known), and
            // each function's name (its body not known).
            "NS" if names_only => {
                for _ in 0..pairs(next()?, limits)? {
                    let (name, kind) = (next()?, next()?);
                    if !name.starts_with("__shellgate")
                        && !kind.contains("hide")
                        && kind != "undefined"
                    {
                        add_var(&mut state, name, kind, Value::Unset, limits)?;
                    }
                }
            }
            "FN" if names_only => {
                for _ in 0..count(next()?, limits)? {
                    add_function(&mut state, &mut function_bytes, next()?, "", limits);
                }
            }
            "LS" => {
                let kind = alias_kind(next()?)?;
                for _ in 0..pairs(next()?, limits)? {
                    let (name, value) = (next()?, next()?);
                    add_alias(&mut state, kind, name, value, limits);
                }
            }
            "OS" => {
                for _ in 0..pairs(next()?, limits)? {
                    let (name, on) = (next()?, next()?);
                    add_option(&mut state, name, on);
                }
            }
            "U" => {
                let umask = next()?.trim();
                state.umask = super::bash::valid_umask(umask).then(|| umask.to_owned());
            }
            "D" => {
                let cwd = next()?;
                state.cwd = cwd.starts_with('/').then(|| cwd.to_owned());
            }
            "B" => {
                let name = next()?;
                if valid_identifier(name) {
                    state.disabled.push(name.to_owned());
                }
            }
            "S" => {
                state.status = super::statuses(next()?);
            }
            other => {
                return Err(DumpError(format!(
                    "an unknown record {:?} in the shell state",
                    crate::intake::visible(other)
                )));
            }
        }
    }
}

/// The number of name and value pairs a record's field count says it holds.
fn pairs(field: &str, limits: Limits) -> Result<usize, DumpError> {
    let fields = count(field, limits)?;
    if fields % 2 == 1 {
        return Err(DumpError(
            "a list in the shell state has an odd number of fields".into(),
        ));
    }
    Ok(fields / 2)
}

fn add_function(
    state: &mut State,
    function_bytes: &mut usize,
    name: &str,
    body: &str,
    limits: Limits,
) {
    *function_bytes += body.len();
    if *function_bytes > limits.functions_bytes {
        state.functions_omitted = true;
        state.functions.clear();
    } else if !state.functions_omitted && valid_function_name(name) {
        state.functions.insert(name.to_owned(), body.to_owned());
    }
}

fn alias_kind(field: &str) -> Result<AliasKind, DumpError> {
    match field {
        "a" => Ok(AliasKind::Regular),
        "g" => Ok(AliasKind::Global),
        "s" => Ok(AliasKind::Suffix),
        _ => Err(DumpError("an unknown kind of alias".into())),
    }
}

fn add_alias(state: &mut State, kind: AliasKind, name: &str, value: &str, limits: Limits) {
    if state.aliases.len() < limits.entries {
        state
            .aliases
            .insert((kind, name.to_owned()), value.to_owned());
    }
}

fn add_option(state: &mut State, name: &str, on: &str) {
    if name.bytes().all(|b| b.is_ascii_lowercase()) && state.options.len() < 1024 {
        state
            .options
            .insert((OptionKind::Set, name.to_owned()), on == "on");
    }
}

fn count(field: &str, limits: Limits) -> Result<usize, DumpError> {
    field
        .parse::<usize>()
        .ok()
        .filter(|n| *n <= limits.entries * 8)
        .ok_or_else(|| DumpError("an array in the shell state has a bad length".into()))
}

fn add_var(
    state: &mut State,
    name: &str,
    kind: &str,
    value: Value,
    limits: Limits,
) -> Result<(), DumpError> {
    if state.vars.len() >= limits.entries {
        return Err(DumpError("the shell state has too many variables".into()));
    }
    // Positional and other punctuation parameters are the shell's own.
    if !valid_identifier(name) || kind.contains("local") {
        return Ok(());
    }
    let attrs = Attrs {
        exported: kind.contains("export"),
        readonly: kind.contains("readonly"),
        arithmetic: kind.starts_with("integer") || kind.starts_with("float"),
        nameref: kind.contains("nameref"),
        special: kind.contains("special"),
        raw: kind.to_owned(),
    };
    state.vars.insert(name.to_owned(), Var { attrs, value });
    Ok(())
}

fn array_words(items: &[(u64, String)]) -> String {
    let words: Vec<String> = items.iter().map(|(_, v)| quote(v)).collect();
    words.join(" ")
}

fn assoc_words(pairs: &[(String, String)]) -> String {
    let words: Vec<String> = pairs
        .iter()
        .flat_map(|(k, v)| [quote(k), quote(v)])
        .collect();
    words.join(" ")
}

/// `typeset` flags for a non-special variable's attributes.
fn typeset_flags(var: &Var) -> String {
    let mut flags = String::from("-g");
    if var.attrs.exported {
        flags.push('x');
    }
    if var.attrs.raw.starts_with("integer") {
        flags.push('i');
    } else if var.attrs.raw.starts_with("float") {
        flags.push('F');
    }
    flags
}

/// One variable as zsh statements (`readonly` adds `-r` at the end, for the input script only).
fn assign(name: &str, var: &Var, keep_readonly: bool) -> String {
    if var.attrs.special {
        return match &var.value {
            Value::Scalar(v) => format!("{name}={}", quote(v)),
            _ => String::new(),
        };
    }
    let flags = typeset_flags(var);
    let mut line = match &var.value {
        Value::Unset => format!("typeset {flags} {name}"),
        Value::Scalar(v) => format!("typeset {flags} {name}={}", quote(v)),
        Value::Indexed(items) => {
            format!("typeset {flags}a {name}; {name}=({})", array_words(items))
        }
        Value::Assoc(pairs) => format!("typeset {flags}A {name}; {name}=({})", assoc_words(pairs)),
    };
    if keep_readonly && var.attrs.readonly {
        line.push_str(&format!("; typeset -gr {name}"));
    }
    line
}

/// The input script's statement for one variable, or `None` for one it leaves out (the shell's
/// own, see [`super::is_shell_own`] and [`skipped_on_input`], or one with nothing to assign).
pub(super) fn input_variable(name: &str, var: &Var) -> Option<String> {
    if super::is_shell_own(super::Dialect::Zsh, name) || skipped_on_input(name, var) {
        return None;
    }
    Some(assign(name, var, true)).filter(|line| !line.is_empty())
}

pub(super) fn render_input(state: &State) -> String {
    // `zsh -f` starts with aliases of its own (`run-help`, `which-command`): only the person's.
    let mut out =
        String::from("builtin unalias -m '*' 2>/dev/null\nbuiltin unalias -s -m '*' 2>/dev/null\n");
    for (name, var) in &state.vars {
        if let Some(line) = input_variable(name, var) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    if !state.functions_omitted {
        for (name, body) in &state.functions {
            if !name.starts_with("__shellgate") {
                out.push_str(&format!("functions[{name}]={}\n", quote(body)));
            }
        }
    }
    for ((kind, name), value) in &state.aliases {
        if valid_alias_name(name) && !name.starts_with("__shellgate") {
            out.push_str(&alias_line(*kind, name, value));
            out.push('\n');
        }
    }
    let (on, off): (Vec<&str>, Vec<&str>) = state
        .options
        .iter()
        .filter(|((_, name), _)| option_sent(name))
        .fold(
            (Vec::new(), Vec::new()),
            |(mut on, mut off), ((_, name), set)| {
                if *set {
                    on.push(name);
                } else {
                    off.push(name);
                }
                (on, off)
            },
        );
    if !on.is_empty() {
        out.push_str(&format!("builtin setopt {} 2>/dev/null\n", on.join(" ")));
    }
    if !off.is_empty() {
        out.push_str(&format!("builtin unsetopt {} 2>/dev/null\n", off.join(" ")));
    }
    if let Some(umask) = &state.umask {
        out.push_str(&format!("builtin umask {umask}\n"));
    }
    out
}

fn alias_line(kind: AliasKind, name: &str, value: &str) -> String {
    let flag = match kind {
        AliasKind::Regular => "",
        AliasKind::Global => "-g ",
        AliasKind::Suffix => "-s ",
    };
    format!(
        "builtin alias {flag}-- {}",
        quote(&format!("{name}={value}"))
    )
}

pub(super) fn render_apply(changes: &[Change], before: &State) -> String {
    let mut out = String::new();
    for change in changes {
        let line = match change {
            Change::Cwd(dir) => format!(
                "builtin cd -- {} || builtin print -ru2 -- {}",
                quote(dir),
                quote("shellgate: the line's working directory is gone; staying here")
            ),
            Change::Var(name, var) if valid_identifier(name) => {
                let old = before.vars.get(name);
                let special = old.is_some_and(|o| o.attrs.special) || var.attrs.special;
                if special {
                    match &var.value {
                        Value::Scalar(v) => format!("{name}={}", quote(v)),
                        _ => continue,
                    }
                } else {
                    let kind = |v: &Value| match v {
                        Value::Indexed(_) => 1,
                        Value::Assoc(_) => 2,
                        _ => 0,
                    };
                    // Arithmetic on assignment can run code; a type cannot change in place.
                    let reset = old
                        .is_some_and(|o| o.attrs.arithmetic || kind(&o.value) != kind(&var.value));
                    let mut plain = var.clone();
                    plain.attrs.raw = String::new();
                    let mut line = String::new();
                    if reset {
                        line.push_str(&format!("builtin unset {name}; "));
                    }
                    line.push_str(&assign(name, &plain, false));
                    if !var.attrs.exported && old.is_some_and(|o| o.attrs.exported) && !reset {
                        line.push_str(&format!("; typeset -g +x {name}"));
                    }
                    line
                }
            }
            Change::Unset(name) if valid_identifier(name) => format!("builtin unset {name}"),
            Change::Function(name, body) if valid_function_name(name) => {
                format!("functions[{name}]={}", quote(body))
            }
            Change::FunctionRemoved(name) if valid_function_name(name) => {
                format!("builtin unfunction -- {name}")
            }
            Change::Alias(kind, name, value) if valid_alias_name(name) => {
                alias_line(*kind, name, value)
            }
            Change::AliasRemoved(kind, name) if valid_alias_name(name) => match kind {
                AliasKind::Suffix => format!("builtin unalias -s -- {name}"),
                _ => format!("builtin unalias -- {name}"),
            },
            Change::Option(_, name, on)
                if !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase()) =>
            {
                format!("builtin {} {name}", if *on { "setopt" } else { "unsetopt" })
            }
            Change::Umask(umask) if super::bash::valid_umask(umask) => {
                format!("builtin umask {umask}")
            }
            _ => continue,
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// zsh's builtins and reserved words: a function of one of these names is never applied.
pub const BUILTINS: [&str; 60] = [
    "builtin",
    "command",
    "exec",
    "noglob",
    "nocorrect",
    "eval",
    "source",
    ".",
    "emulate",
    "setopt",
    "unsetopt",
    "functions",
    "unfunction",
    "autoload",
    "typeset",
    "declare",
    "local",
    "export",
    "readonly",
    "integer",
    "float",
    "unset",
    "alias",
    "unalias",
    "trap",
    "cd",
    "chdir",
    "pushd",
    "popd",
    "print",
    "printf",
    "echo",
    "read",
    "set",
    "shift",
    "return",
    "exit",
    "bye",
    "logout",
    "zle",
    "bindkey",
    "zmodload",
    "enable",
    "disable",
    "whence",
    "where",
    "which",
    "type",
    "hash",
    "rehash",
    "kill",
    "wait",
    "jobs",
    "fg",
    "bg",
    "disown",
    "test",
    "[",
    "true",
    "false",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(fields: &[&str]) -> Vec<u8> {
        let mut out = Vec::new();
        for f in fields {
            out.extend_from_slice(f.as_bytes());
            out.push(0);
        }
        out
    }

    /// A line run again with a grant wrote two dumps: the last is the line's state; a dump cut
    /// short is refused.
    #[test]
    fn the_last_of_several_dumps_is_the_state() {
        let mut bytes = dump(&[HEADER, "D", "/first", "S", "1", "E"]);
        bytes.extend(dump(&[HEADER, "D", "/second", "S", "0", "E"]));
        let state = State::parse(super::super::Dialect::Zsh, &bytes, Limits::DEFAULT).unwrap();
        assert_eq!(
            (state.cwd.as_deref(), state.status),
            (Some("/second"), vec![0])
        );
        bytes.extend(dump(&[HEADER, "D", "/third"]));
        assert!(State::parse(super::super::Dialect::Zsh, &bytes, Limits::DEFAULT).is_err());
    }

    #[test]
    fn a_dump_is_read_and_rendered() {
        let bytes = dump(&[
            HEADER,
            "V",
            "a",
            "scalar",
            "it's",
            "V",
            "PATH",
            "scalar-tied-export-special",
            "/bin",
            "A",
            "path",
            "array-tied-special",
            "1",
            "/bin",
            "V",
            "RANDOM",
            "integer-special",
            "5",
            "A",
            "arr",
            "array",
            "2",
            "x y",
            "z",
            "H",
            "h",
            "association",
            "2",
            "k",
            "v",
            "V",
            "ro",
            "scalar-readonly",
            "1",
            "V",
            "#",
            "integer-readonly-special",
            "0",
            "FS",
            "2",
            "greet",
            "\tprint hi",
            "LS",
            "a",
            "2",
            "ll",
            "ls -l",
            "LS",
            "g",
            "2",
            "G",
            "| grep",
            "LS",
            "s",
            "0",
            "OS",
            "4",
            "autocd",
            "on",
            "interactive",
            "on",
            "U",
            "022\n",
            "D",
            "/home/u",
            "S",
            "1 1",
            "E",
        ]);
        let state = State::parse(super::super::Dialect::Zsh, &bytes, Limits::DEFAULT).unwrap();
        assert_eq!(state.cwd.as_deref(), Some("/home/u"));
        assert_eq!(state.status, vec![1, 1]);
        assert!(!state.vars.contains_key("#"));
        let input = render_input(&state);
        assert!(input.contains("typeset -g a='it'\\''s'\n"), "{input}");
        assert!(input.contains("PATH='/bin'\n"), "{input}");
        assert!(
            !input.contains("path=") && !input.contains("RANDOM"),
            "{input}"
        );
        assert!(
            input.contains("typeset -ga arr; arr=('x y' 'z')"),
            "{input}"
        );
        assert!(input.contains("typeset -gA h; h=('k' 'v')"), "{input}");
        assert!(
            input.contains("typeset -g ro='1'; typeset -gr ro"),
            "{input}"
        );
        assert!(input.contains("functions[greet]='\tprint hi'"), "{input}");
        assert!(input.contains("builtin alias -g -- 'G=| grep'"), "{input}");
        assert!(
            input.contains("builtin setopt autocd 2>/dev/null\n"),
            "{input}"
        );
        assert!(!input.contains("interactive"), "{input}");
        assert!(input.contains("builtin umask 022"), "{input}");
    }

    /// A shell whose hook an older shellgate loaded writes a record per function, alias and
    /// option: still read.
    #[test]
    fn a_dump_of_single_records_is_read() {
        let bytes = dump(&[
            HEADER, "F", "greet", "print hi", "L", "g", "G", "| grep", "O", "autocd", "on", "E",
        ]);
        let state = State::parse(super::super::Dialect::Zsh, &bytes, Limits::DEFAULT).unwrap();
        assert!(state.functions.contains_key("greet"));
        assert!(state.aliases.contains_key(&(AliasKind::Global, "G".into())));
        assert_eq!(
            state.options.get(&(OptionKind::Set, "autocd".into())),
            Some(&true)
        );
        // A list whose field count is odd is refused.
        let odd = dump(&[HEADER, "FS", "1", "greet", "E"]);
        assert!(State::parse(super::super::Dialect::Zsh, &odd, Limits::DEFAULT).is_err());
    }

    #[test]
    fn a_dump_of_names_is_read_from_the_shell_only() {
        let zsh = super::super::Dialect::Zsh;
        let bytes = dump(&[
            NAMES_HEADER,
            "NS",
            "8",
            "count",
            "integer",
            "__shellgate_tok",
            "scalar",
            "_comps",
            "association-hideval",
            "terminfo",
            "undefined",
            "FN",
            "1",
            "greet",
            "LS",
            "a",
            "2",
            "ll",
            "ls -l",
            "E",
        ]);
        let state = State::parse_snapshot(zsh, &bytes, Limits::DEFAULT).unwrap();
        assert!(state.names_only);
        assert_eq!(state.vars.keys().collect::<Vec<_>>(), ["count"]);
        assert_eq!(state.vars["count"].value, Value::Unset);
        // The type still says what assigning it does.
        assert!(state.shadows("count"));
        assert!(state.functions.contains_key("greet"));
        assert_eq!(
            state.aliases.get(&(AliasKind::Regular, "ll".into())),
            Some(&"ls -l".to_owned())
        );
        // Never as the state a line left: that is a whole dump.
        assert!(State::parse(zsh, &bytes, Limits::DEFAULT).is_err());
        // Its records belong to it alone.
        let mixed = dump(&[HEADER, "FN", "1", "greet", "E"]);
        assert!(State::parse_snapshot(zsh, &mixed, Limits::DEFAULT).is_err());
    }

    #[test]
    fn truncated_or_foreign_dumps_are_refused() {
        assert!(
            State::parse(
                super::super::Dialect::Zsh,
                &dump(&[HEADER, "V", "a"]),
                Limits::DEFAULT
            )
            .is_err()
        );
        assert!(
            State::parse(
                super::super::Dialect::Zsh,
                &dump(&["x", "E"]),
                Limits::DEFAULT
            )
            .is_err()
        );
        assert!(
            State::parse(
                super::super::Dialect::Zsh,
                &dump(&[HEADER, "Q", "E"]),
                Limits::DEFAULT
            )
            .is_err()
        );
        assert!(
            State::parse(
                super::super::Dialect::Zsh,
                &dump(&[HEADER, "A", "a", "array", "99999999", "E"]),
                Limits::DEFAULT
            )
            .is_err()
        );
    }
}
