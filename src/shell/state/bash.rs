//! bash: reading the dump of `__shellgate_dump` (`shell/bash-state.sh`), and writing the input and
//! apply scripts.
//!
//! The dump is the output of bash's own listing builtins, one section each, separated by NUL
//! bytes (which no bash string can contain): a header, `declare -p`, `declare -f`, `declare -F`,
//! `alias -p`, `shopt -p`, `set +o`, `umask`, `$PWD`, `compgen -A disabled`, and `$?` with
//! `PIPESTATUS`. Builtins only, no loop and no subshell: it costs the person's shell well under a
//! millisecond. The parser below reads exactly what bash 5 prints (double-quoted and `$'…'`
//! values, `[index]=value` arrays) and refuses anything else.

use super::{
    AliasKind, Attrs, Change, DumpError, Limits, OptionKind, State, Treatment, Value, Var, quote,
    valid_alias_name, valid_function_name, valid_identifier,
};
use std::collections::BTreeMap;
use std::path::Path;

/// The first section of a dump.
pub const HEADER: &str = "shellgate-bash-state 1";

/// The first section of a dump without the functions' bodies (`__shellgate_dump names`: see
/// [`State::names_only`]).
pub const NAMES_HEADER: &str = "shellgate-bash-names 1";

/// The sections of one dump (see `shell/bash-state.sh`).
const SECTIONS: usize = 11;

/// The dump function, sourced by the hook in the person's shell and by the sandboxed shell after
/// the line.
pub const DUMP_FUNCTION: &str = include_str!("../../../shell/bash-state.sh");

/// Parses the dump, or the last of several: a line the sandbox refused something is run again
/// with the grant after a yes, and each run writes its state on the same descriptor. The line's
/// state is the last run's. A dump is always 11 sections (bash's values hold no NUL), each
/// starting with the header.
pub(super) fn parse(dump: &[u8], limits: Limits) -> Result<State, DumpError> {
    let all = super::nul_fields(dump, 64)?;
    let sections = match all.len() {
        n if n > SECTIONS && n % SECTIONS == 0 => &all[n - SECTIONS..],
        _ => &all[..],
    };
    let [
        header,
        declared,
        functions,
        names,
        aliases,
        shopt,
        set,
        umask,
        cwd,
        disabled,
        status,
    ] = sections
    else {
        return Err(DumpError(format!(
            "the shell state has {} sections, not {SECTIONS}",
            sections.len()
        )));
    };
    let names_only = match *header {
        h if h == HEADER.as_bytes() => false,
        h if h == NAMES_HEADER.as_bytes() => true,
        _ => return Err(DumpError("the shell state has no shellgate header".into())),
    };
    let mut state = State {
        vars: parse_declare_p(super::utf8(declared)?, limits)?,
        names_only,
        ..State::default()
    };
    if names_only {
        // Each function by its name only (`declare -F`), its body not known.
        if !functions.is_empty() {
            return Err(DumpError("a dump of names holds function bodies".into()));
        }
        state.functions = super::utf8(names)?
            .lines()
            .take(limits.entries)
            .map(function_attribute_name)
            .filter(|name| !name.is_empty())
            .map(|name| (name.to_owned(), String::new()))
            .collect();
    } else if functions.len() > limits.functions_bytes {
        state.functions_omitted = true;
    } else {
        state.functions = split_functions(super::utf8(functions)?, super::utf8(names)?, limits)?;
    }
    state.aliases = parse_aliases(super::utf8(aliases)?, limits)?;
    for (kind, text) in [
        (OptionKind::Shopt, super::utf8(shopt)?),
        (OptionKind::Set, super::utf8(set)?),
    ] {
        for line in text.lines().take(limits.entries) {
            let mut words = line.split(' ');
            let (on, name) = match (words.next(), words.next(), words.next(), words.next()) {
                (Some("shopt"), Some("-s"), Some(name), None) => (true, name),
                (Some("shopt"), Some("-u"), Some(name), None) => (false, name),
                (Some("set"), Some("-o"), Some(name), None) => (true, name),
                (Some("set"), Some("+o"), Some(name), None) => (false, name),
                _ => return Err(DumpError(format!("unexpected option line {line:?}"))),
            };
            if valid_option_name(name) {
                state.options.insert((kind, name.to_owned()), on);
            }
        }
    }
    let umask = super::utf8(umask)?.trim();
    state.umask = valid_umask(umask).then(|| umask.to_owned());
    let cwd = super::utf8(cwd)?;
    state.cwd = cwd.starts_with('/').then(|| cwd.to_owned());
    state.disabled = super::utf8(disabled)?
        .lines()
        .filter(|n| valid_identifier(n))
        .map(str::to_owned)
        .collect();
    state.status = super::statuses(super::utf8(status)?);
    Ok(state)
}

fn valid_option_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b"_-".contains(&b))
}

pub(super) fn valid_umask(umask: &str) -> bool {
    (3..=4).contains(&umask.len()) && umask.bytes().all(|b| (b'0'..=b'7').contains(&b))
}

/// `declare -p`: one `declare -FLAGS NAME[=VALUE]` per variable.
fn parse_declare_p(text: &str, limits: Limits) -> Result<BTreeMap<String, Var>, DumpError> {
    let mut vars = BTreeMap::new();
    let mut r = Reader::new(text);
    loop {
        r.skip(|b| b == b'\n');
        if r.done() {
            return Ok(vars);
        }
        if vars.len() >= limits.entries {
            return Err(DumpError("the shell state has too many variables".into()));
        }
        if !r.eat("declare ") {
            return Err(r.error("`declare`"));
        }
        let flags = r.take_while(|b| b != b' ');
        let Some(flags) = flags.strip_prefix('-') else {
            return Err(r.error("attribute flags"));
        };
        let flags = if flags == "-" { "" } else { flags };
        if !flags.bytes().all(|b| b"aAilnrtux".contains(&b)) {
            return Err(r.error("known attribute flags"));
        }
        if !r.eat(" ") {
            return Err(r.error("a space"));
        }
        let name = r.take_while(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !valid_identifier(name) {
            return Err(r.error("a variable name"));
        }
        let value = if r.eat("=") {
            if r.eat("(") {
                parse_array(&mut r, flags.contains('A'), limits)?
            } else {
                Value::Scalar(r.word()?)
            }
        } else {
            Value::Unset
        };
        if !(r.done() || r.peek() == Some(b'\n')) {
            return Err(r.error("the end of the line"));
        }
        let attrs = Attrs {
            exported: flags.contains('x'),
            readonly: flags.contains('r'),
            arithmetic: flags.contains('i'),
            nameref: flags.contains('n'),
            special: false,
            raw: flags.to_owned(),
        };
        vars.insert(name.to_owned(), Var { attrs, value });
    }
}

fn parse_array(r: &mut Reader, assoc: bool, limits: Limits) -> Result<Value, DumpError> {
    let mut indexed = Vec::new();
    let mut pairs = Vec::new();
    loop {
        r.skip(|b| b == b' ');
        if r.eat(")") {
            break;
        }
        if indexed.len() + pairs.len() >= limits.entries * 8 {
            return Err(DumpError("an array in the shell state is too long".into()));
        }
        if !r.eat("[") {
            return Err(r.error("`[` or `)`"));
        }
        let key = r.key()?;
        if !r.eat("]=") {
            return Err(r.error("`]=`"));
        }
        let value = r.word()?;
        if assoc {
            pairs.push((key, value));
        } else {
            let index = key.parse().map_err(|_| r.error("an array index"))?;
            indexed.push((index, value));
        }
    }
    Ok(if assoc {
        Value::Assoc(pairs)
    } else {
        Value::Indexed(indexed)
    })
}

/// `declare -f`'s text, split into definitions by the names `declare -F` listed, in the same
/// (sorted) order: each definition begins with `NAME () ` on a line of its own.
fn split_functions(
    text: &str,
    names: &str,
    limits: Limits,
) -> Result<BTreeMap<String, String>, DumpError> {
    let names: Vec<&str> = names.lines().map(function_attribute_name).collect();
    if names.len() > limits.entries {
        return Err(DumpError("the shell state has too many functions".into()));
    }
    let mut out = BTreeMap::new();
    let mut rest = text;
    for (i, name) in names.iter().enumerate() {
        let header = format!("{name} () \n");
        let Some(body) = rest.strip_prefix(&header) else {
            return Err(DumpError(format!(
                "the definition of {name} is not where expected"
            )));
        };
        let end = match names.get(i + 1) {
            Some(next) => body
                .find(&format!("\n{next} () \n{{ "))
                .ok_or_else(|| DumpError(format!("the end of {name} was not found")))?,
            None => body.trim_end_matches('\n').len(),
        };
        // `declare -f` follows a function with attributes by `declare -fx NAME` / `-fr`.
        let mut text = &body[..end];
        if let Some((before, last)) = text.rsplit_once('\n')
            && function_attribute_name(last) == *name
        {
            text = before;
        }
        let definition = format!("{header}{text}");
        rest = body[end..].trim_start_matches('\n');
        if !name.is_empty() {
            out.insert((*name).to_owned(), definition);
        }
    }
    Ok(out)
}

/// The name in a `declare -f[ATTRS] NAME` line, or "".
fn function_attribute_name(line: &str) -> &str {
    line.strip_prefix("declare -f")
        .and_then(|rest| rest.split_once(' '))
        .filter(|(flags, _)| flags.bytes().all(|b| b.is_ascii_lowercase()))
        .map_or("", |(_, name)| name)
}

/// `alias -p`: `alias NAME='VALUE'` per alias (`'\''` for a quote inside).
fn parse_aliases(
    text: &str,
    limits: Limits,
) -> Result<BTreeMap<(AliasKind, String), String>, DumpError> {
    let mut out = BTreeMap::new();
    let mut r = Reader::new(text);
    loop {
        r.skip(|b| b == b'\n');
        if r.done() {
            return Ok(out);
        }
        if out.len() >= limits.entries {
            return Err(DumpError("the shell state has too many aliases".into()));
        }
        if !r.eat("alias ") {
            return Err(r.error("`alias`"));
        }
        r.eat("-- ");
        let name = r.take_while(|b| b != b'=' && b != b'\n');
        let name = name.to_owned();
        if !r.eat("=") {
            return Err(r.error("`=`"));
        }
        let value = r.word()?;
        out.insert((AliasKind::Regular, name), value);
    }
}

/// A cursor over a dump section.
struct Reader<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Reader<'a> {
    fn new(s: &'a str) -> Reader<'a> {
        Reader { s, i: 0 }
    }

    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.i..].starts_with(lit) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn skip(&mut self, what: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&what) {
            self.i += 1;
        }
    }

    fn take_while(&mut self, what: impl Fn(u8) -> bool) -> &'a str {
        let start = self.i;
        self.skip(what);
        &self.s[start..self.i]
    }

    fn error(&self, expected: &str) -> DumpError {
        DumpError(format!(
            "unexpected shell state at byte {}: expected {expected}",
            self.i
        ))
    }

    /// One word as bash prints it: `"…"`, `$'…'` and `'…'` segments and plain characters, up to a
    /// blank, a newline or `)`.
    fn word(&mut self) -> Result<String, DumpError> {
        let mut out = String::new();
        loop {
            match self.peek() {
                None | Some(b' ' | b'\n' | b')') => return Ok(out),
                Some(b'"') => {
                    self.i += 1;
                    self.double_quoted(&mut out)?;
                }
                Some(b'\'') => {
                    self.i += 1;
                    let end = self.s[self.i..]
                        .find('\'')
                        .ok_or_else(|| self.error("a closing `'`"))?;
                    out.push_str(&self.s[self.i..self.i + end]);
                    self.i += end + 1;
                }
                Some(b'$') if self.s[self.i..].starts_with("$'") => {
                    self.i += 2;
                    self.ansi_c(&mut out)?;
                }
                Some(b'\\') => {
                    let ch = self.s[self.i + 1..]
                        .chars()
                        .next()
                        .ok_or_else(|| self.error("a character after `\\`"))?;
                    out.push(ch);
                    self.i += 1 + ch.len_utf8();
                }
                Some(_) => {
                    let ch = self.s[self.i..].chars().next().unwrap_or(' ');
                    out.push(ch);
                    self.i += ch.len_utf8();
                }
            }
        }
    }

    /// An associative array's key, up to the `]` that closes it.
    fn key(&mut self) -> Result<String, DumpError> {
        let mut out = String::new();
        loop {
            match self.peek() {
                None | Some(b'\n') => return Err(self.error("`]`")),
                Some(b']') => return Ok(out),
                Some(b'"') => {
                    self.i += 1;
                    self.double_quoted(&mut out)?;
                }
                Some(b'$') if self.s[self.i..].starts_with("$'") => {
                    self.i += 2;
                    self.ansi_c(&mut out)?;
                }
                Some(_) => {
                    let ch = self.s[self.i..].chars().next().unwrap_or(' ');
                    out.push(ch);
                    self.i += ch.len_utf8();
                }
            }
        }
    }

    /// After the opening `"`: `\` escapes only `$`, `` ` ``, `"`, `\` and a newline.
    fn double_quoted(&mut self, out: &mut String) -> Result<(), DumpError> {
        loop {
            let ch = self.s[self.i..]
                .chars()
                .next()
                .ok_or_else(|| self.error("a closing `\"`"))?;
            self.i += ch.len_utf8();
            match ch {
                '"' => return Ok(()),
                '\\' => match self.peek() {
                    Some(b'$' | b'`' | b'"' | b'\\') => {
                        out.push(char::from(self.s.as_bytes()[self.i]));
                        self.i += 1;
                    }
                    Some(b'\n') => self.i += 1,
                    _ => out.push('\\'),
                },
                _ => out.push(ch),
            }
        }
    }

    /// After the opening `$'`: C escapes, as bash's `ansic_quote` writes them.
    fn ansi_c(&mut self, out: &mut String) -> Result<(), DumpError> {
        let mut bytes: Vec<u8> = Vec::new();
        let raw = self.s.as_bytes();
        loop {
            let b = *raw.get(self.i).ok_or_else(|| self.error("a closing `'`"))?;
            self.i += 1;
            match b {
                b'\'' => break,
                b'\\' => {
                    let e = *raw.get(self.i).ok_or_else(|| self.error("an escape"))?;
                    self.i += 1;
                    match e {
                        b'a' => bytes.push(7),
                        b'b' => bytes.push(8),
                        b'e' | b'E' => bytes.push(27),
                        b'f' => bytes.push(12),
                        b'n' => bytes.push(b'\n'),
                        b'r' => bytes.push(b'\r'),
                        b't' => bytes.push(b'\t'),
                        b'v' => bytes.push(11),
                        b'\\' | b'\'' | b'"' | b'?' => bytes.push(e),
                        b'0'..=b'7' => {
                            let mut n = u32::from(e - b'0');
                            for _ in 0..2 {
                                match raw.get(self.i) {
                                    Some(d @ b'0'..=b'7') => {
                                        n = n * 8 + u32::from(d - b'0');
                                        self.i += 1;
                                    }
                                    _ => break,
                                }
                            }
                            bytes.push(u8::try_from(n & 0xff).unwrap_or(0));
                        }
                        b'x' => {
                            let mut n = 0u32;
                            let mut digits = 0;
                            while digits < 2 {
                                match raw.get(self.i).and_then(|d| (*d as char).to_digit(16)) {
                                    Some(d) => {
                                        n = n * 16 + d;
                                        self.i += 1;
                                        digits += 1;
                                    }
                                    None => break,
                                }
                            }
                            bytes.push(u8::try_from(n).unwrap_or(0));
                        }
                        b'c' => {
                            let c = *raw
                                .get(self.i)
                                .ok_or_else(|| self.error("a control character"))?;
                            self.i += 1;
                            bytes.push(c & 0x1f);
                        }
                        _ => {
                            bytes.push(b'\\');
                            bytes.push(e);
                        }
                    }
                }
                _ => bytes.push(b),
            }
        }
        let text = String::from_utf8(bytes).map_err(|_| self.error("UTF-8 text"))?;
        out.push_str(&text);
        Ok(())
    }
}

/// Options set in the sandbox from the person's shell, and so compared afterwards. Left out:
/// what only an interactive shell has (`monitor`, line editing, `history`: the sandboxed shell
/// records nothing, it only lists the person's history), what would change the sandboxed shell
/// itself (`onecmd`, `privileged`, read-only `shopt`s), and tracing, which would trace
/// shellgate's own steps around the line.
pub(super) fn option_sent(kind: OptionKind, name: &str) -> bool {
    const SET: [&str; 9] = [
        "history",
        "monitor",
        "onecmd",
        "privileged",
        "xtrace",
        "verbose",
        "emacs",
        "vi",
        "noexec",
    ];
    const SHOPT: [&str; 3] = ["login_shell", "restricted_shell", "progcomp_alias"];
    match kind {
        OptionKind::Set => !SET.contains(&name),
        OptionKind::Shopt => !SHOPT.contains(&name),
    }
}

/// The line-editing mode is copied into the sandbox too, so that `set -o | grep vi` there shows
/// the person's; it means nothing to a non-interactive shell, so it is never compared.
fn option_shown(kind: OptionKind, name: &str) -> bool {
    option_sent(kind, name) || (kind == OptionKind::Set && (name == "emacs" || name == "vi"))
}

pub(super) fn option_treatment(kind: OptionKind, name: &str, on: bool) -> Treatment {
    if kind == OptionKind::Shopt && name == "promptvars" && !on {
        return Treatment::Never("it would turn off shellgate's hook (PS0)");
    }
    const ASKED: [&str; 11] = [
        "extdebug",
        "functrace",
        "errtrace",
        "history",
        "histexpand",
        "histappend",
        "histreedit",
        "histverify",
        "cmdhist",
        "lithist",
        "posix",
    ];
    if ASKED.contains(&name) {
        Treatment::Ask
    } else {
        Treatment::Silent
    }
}

/// The input script: the person's variables, functions, aliases, options and umask, for the
/// sandboxed bash to source before the line. Its text comes from the person's own shell.
pub(super) fn render_input(state: &State) -> String {
    let mut out = String::with_capacity(4096);
    for (name, var) in &state.vars {
        if let Some(line) = input_variable(name, var) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    // bash parses an extended pattern only while `extglob` is on, and a function's text is parsed
    // when it is defined: bash-completion's functions (`--!(no-*)dir*)`) were a syntax error that
    // stopped the input there, before the line's own helpers.
    if state
        .options
        .get(&(OptionKind::Shopt, "extglob".to_owned()))
        == Some(&true)
    {
        out.push_str("builtin shopt -s extglob\n");
    }
    if !state.functions_omitted {
        for (name, text) in &state.functions {
            if !name.starts_with("__shellgate") {
                out.push_str(text);
                out.push('\n');
            }
        }
    }
    for ((_, name), value) in &state.aliases {
        if valid_alias_name(name) && !name.starts_with("__shellgate") {
            out.push_str(&format!(
                "builtin alias -- {}\n",
                quote(&format!("{name}={value}"))
            ));
        }
    }
    for ((kind, name), on) in &state.options {
        if !option_shown(*kind, name) {
            continue;
        }
        out.push_str(&match kind {
            OptionKind::Shopt => format!("builtin shopt -{} {name}\n", if *on { 's' } else { 'u' }),
            OptionKind::Set => format!("builtin set {}o {name}\n", if *on { '-' } else { '+' }),
        });
    }
    if let Some(umask) = &state.umask {
        out.push_str(&format!("builtin umask {umask}\n"));
    }
    out
}

/// The input script's statement for one variable, or `None` for one it leaves out (the shell's
/// own, see [`super::is_shell_own`]).
pub(super) fn input_variable(name: &str, var: &Var) -> Option<String> {
    (!super::is_shell_own(super::Dialect::Bash, name))
        .then(|| declare(name, var, &var.attrs.raw, ""))
}

/// `declare` for one variable; `global` is `g` in the apply script (sourced inside a function).
/// An array's elements are a separate assignment: `builtin declare` does not take a compound
/// value (bash parses `declare a=(…)` specially only without `builtin`), and a plain `NAME=(…)`
/// assigns to the variable `declare -g` just made global. A read-only variable is made read-only
/// after its value is in.
fn declare(name: &str, var: &Var, flags: &str, global: &str) -> String {
    let readonly = flags.contains('r');
    let rest: String = flags.chars().filter(|c| *c != 'r').collect();
    let flags = format!("{global}{rest}");
    let flags = if flags.is_empty() {
        "--".to_owned()
    } else {
        format!("-{flags}")
    };
    let mut line = match &var.value {
        Value::Unset => format!("builtin declare {flags} {name}"),
        Value::Scalar(v) => format!("builtin declare {flags} {name}={}", quote(v)),
        Value::Indexed(items) => {
            let body: Vec<String> = items
                .iter()
                .map(|(i, v)| format!("[{i}]={}", quote(v)))
                .collect();
            format!(
                "builtin declare {flags} {name}; {name}=({})",
                body.join(" ")
            )
        }
        Value::Assoc(pairs) => {
            let body: Vec<String> = pairs
                .iter()
                .map(|(k, v)| format!("[{}]={}", quote(k), quote(v)))
                .collect();
            format!(
                "builtin declare {flags} {name}; {name}=({})",
                body.join(" ")
            )
        }
    };
    if readonly {
        line.push_str(&format!("; builtin declare -{global}r {name}"));
    }
    line
}

/// The apply script's lines for `changes` (already the ones to make), in order: the directory
/// first (so that `OLDPWD` from the sandbox is set after `cd` set its own), then the rest.
/// Every name was validated by [`super::treatment`]; every value is single-quoted.
pub(super) fn render_apply(changes: &[Change], before: &State) -> String {
    let mut out = String::new();
    for change in changes {
        let line = match change {
            Change::Cwd(dir) => format!(
                "builtin cd -- {} || builtin printf '%s\\n' {} >&2",
                quote(dir),
                quote("shellgate: the line's working directory is gone; staying here")
            ),
            Change::Var(name, var) if valid_identifier(name) => apply_var(name, var, before),
            Change::Unset(name) if valid_identifier(name) => {
                format!("builtin unset -v {name}")
            }
            Change::Function(name, text) if valid_function_name(name) => {
                format!("builtin eval -- {}", quote(text))
            }
            Change::FunctionRemoved(name) if valid_function_name(name) => {
                format!("builtin unset -f -- {name}")
            }
            Change::Alias(_, name, value) if valid_alias_name(name) => {
                format!("builtin alias -- {}", quote(&format!("{name}={value}")))
            }
            Change::AliasRemoved(_, name) if valid_alias_name(name) => {
                format!("builtin unalias -- {name}")
            }
            Change::Option(OptionKind::Set, name, on) if valid_option_name(name) => {
                format!("builtin set {}o {name}", if *on { '-' } else { '+' })
            }
            Change::Option(OptionKind::Shopt, name, on) if valid_option_name(name) => {
                format!("builtin shopt -{} {name}", if *on { 's' } else { 'u' })
            }
            Change::Umask(umask) if valid_umask(umask) => format!("builtin umask {umask}"),
            _ => continue,
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn apply_var(name: &str, var: &Var, before: &State) -> String {
    let old = before.vars.get(name);
    let kind = |v: &Value| match v {
        Value::Indexed(_) => 1,
        Value::Assoc(_) => 2,
        _ => 0,
    };
    // An arithmetic variable would evaluate the new value as arithmetic, which can run code
    // (`a[$(cmd)]`); an array cannot become another kind in place. Start from nothing.
    let reset = old.is_some_and(|o| o.attrs.arithmetic || kind(&o.value) != kind(&var.value));
    let mut flags = String::from(if var.attrs.exported { "x" } else { "" });
    match var.value {
        Value::Indexed(_) => flags.push('a'),
        Value::Assoc(_) => flags.push('A'),
        _ => {}
    }
    let mut line = String::new();
    if reset {
        line.push_str(&format!("builtin unset -v {name}; "));
    }
    line.push_str(&declare(name, var, &flags, "g"));
    if !var.attrs.exported && old.is_some_and(|o| o.attrs.exported) && !reset {
        line.push_str(&format!("; builtin declare -g +x {name}"));
    }
    line
}

/// bash's builtins and reserved words: a function of one of these names is never applied (it
/// would change what the hook's own code, and every script, calls by that name).
pub const BUILTINS: [&str; 76] = [
    ".",
    ":",
    "[",
    "alias",
    "bg",
    "bind",
    "break",
    "builtin",
    "caller",
    "cd",
    "command",
    "compgen",
    "complete",
    "compopt",
    "continue",
    "declare",
    "dirs",
    "disown",
    "echo",
    "enable",
    "eval",
    "exec",
    "exit",
    "export",
    "false",
    "fc",
    "fg",
    "getopts",
    "hash",
    "help",
    "history",
    "jobs",
    "kill",
    "let",
    "local",
    "logout",
    "mapfile",
    "popd",
    "printf",
    "pushd",
    "pwd",
    "read",
    "readarray",
    "readonly",
    "return",
    "set",
    "shift",
    "shopt",
    "source",
    "suspend",
    "test",
    "times",
    "trap",
    "true",
    "type",
    "typeset",
    "ulimit",
    "umask",
    "unalias",
    "unset",
    "wait",
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "case",
    "esac",
    "for",
    "select",
    "while",
    "until",
    "do",
    "done",
    "function",
    "time",
];

/// Has bash itself read each definition and print it back: a fresh bash (no startup files, an
/// empty environment, nothing executed) imports each one as an exported function, which bash
/// only does for a value that is exactly one function definition — a trailing command is
/// dropped or refused, never run — and prints it with `declare -f`. A definition is accepted
/// only when what bash printed is the same text: then it is exactly one definition of that
/// name, and that text is what the apply script defines. Returns the accepted names.
pub fn verify_functions(bash: &Path, functions: &[(String, String)]) -> Vec<String> {
    let candidates: Vec<&(String, String)> = functions
        .iter()
        .filter(|(name, text)| {
            valid_function_name(name)
                && !BUILTINS.contains(&name.as_str())
                && text.starts_with(&format!("{name} () \n{{ "))
        })
        .collect();
    if candidates.is_empty() {
        return Vec::new();
    }
    let mut command = std::process::Command::new(bash);
    command
        .args([
            "--norc",
            "--noprofile",
            "-c",
            "for f; do builtin declare -f -- \"$f\"; builtin printf '\\0'; done",
            "bash",
        ])
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for key in ["LANG", "LC_ALL", "LC_CTYPE"] {
        if let Some(value) = crate::env::get().var(key) {
            command.env(key, value);
        }
    }
    for (name, text) in &candidates {
        let body = &text[name.len() + " () \n".len()..];
        command.env(
            format!("BASH_FUNC_{name}%%"),
            format!("() {{{}", &body[1..]),
        );
        command.arg(name);
    }
    let Ok(output) = command.output() else {
        return Vec::new();
    };
    let printed: Vec<&[u8]> = output.stdout.split(|b| *b == 0).collect();
    candidates
        .iter()
        .zip(printed)
        .filter(|((_, text), printed)| {
            let printed = String::from_utf8_lossy(printed);
            printed.trim_end_matches('\n') == text.trim_end_matches('\n')
        })
        .map(|((name, _), _)| name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(sections: [&str; 11]) -> Vec<u8> {
        let mut out = Vec::new();
        for s in sections {
            out.extend_from_slice(s.as_bytes());
            out.push(0);
        }
        out
    }

    const DECLARED: &str = r#"declare -- a="x\"y\$z\`w\\v"
declare -- b=$'l1\nl2\tt\001'
declare -a c=([0]="p q" [5]=$'n\nl')
declare -A d=([$'x\ny']="z" ["q\"]"]="1" ["*"]="2" [k]="v" ["s p"]="w" )
declare -i e="5"
declare -x f
declare -r g="1"
declare -n h="a"
declare -a empt=()
declare -ax xa=([0]="1")
"#;

    #[test]
    fn declare_p_is_read_exactly() {
        let vars = parse_declare_p(DECLARED, Limits::DEFAULT).unwrap();
        let value = |n: &str| vars[n].value.clone();
        assert_eq!(value("a"), Value::Scalar("x\"y$z`w\\v".into()));
        assert_eq!(value("b"), Value::Scalar("l1\nl2\tt\u{1}".into()));
        assert_eq!(
            value("c"),
            Value::Indexed(vec![(0, "p q".into()), (5, "n\nl".into())])
        );
        assert_eq!(
            value("d"),
            Value::Assoc(vec![
                ("x\ny".into(), "z".into()),
                ("q\"]".into(), "1".into()),
                ("*".into(), "2".into()),
                ("k".into(), "v".into()),
                ("s p".into(), "w".into()),
            ])
        );
        assert!(vars["e"].attrs.arithmetic);
        assert_eq!(value("f"), Value::Unset);
        assert!(vars["f"].attrs.exported);
        assert!(vars["g"].attrs.readonly);
        assert!(vars["h"].attrs.nameref);
        assert_eq!(value("empt"), Value::Indexed(vec![]));
        assert!(vars["xa"].attrs.exported);
    }

    #[test]
    fn malformed_dumps_are_refused() {
        for bad in [
            "declare -- a=\"open\n",
            "declare -Z a=1\n",
            "declare -- a-b=1\n",
            "echo hi\n",
            "declare -a c=([x]=\"1\")\n",
            "declare -- a=\"1\" junk\n",
        ] {
            assert!(parse_declare_p(bad, Limits::DEFAULT).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn functions_and_aliases_are_split() {
        let functions = "f () \n{ \n    cat <<E\ng () \nE\n\n}\ndeclare -fr f\ng () \n{ \n    echo g\n}\ndeclare -fx g\n";
        let names = "declare -fr f\ndeclare -fx g\n";
        let split = split_functions(functions, names, Limits::DEFAULT).unwrap();
        assert_eq!(split["f"], "f () \n{ \n    cat <<E\ng () \nE\n\n}");
        assert_eq!(split["g"], "g () \n{ \n    echo g\n}");
        let aliases = parse_aliases(
            "alias ll='ls -l'\nalias x='echo \"q\" '\\''s'\\'''\n",
            Limits::DEFAULT,
        )
        .unwrap();
        assert_eq!(aliases[&(AliasKind::Regular, "ll".into())], "ls -l");
        assert_eq!(aliases[&(AliasKind::Regular, "x".into())], "echo \"q\" 's'");
    }

    #[test]
    fn a_dump_of_names_is_read_from_the_shell_only() {
        let names = dump([
            NAMES_HEADER,
            "declare -i n=\"3\"\n",
            "",
            "declare -f greet\ndeclare -fx big\n",
            "alias ll='ls -l'\n",
            "shopt -u autocd\n",
            "set +o errexit\n",
            "0022\n",
            "/w",
            "",
            "0",
        ]);
        let state =
            State::parse_snapshot(super::super::Dialect::Bash, &names, Limits::DEFAULT).unwrap();
        assert!(state.names_only);
        assert_eq!(state.functions.keys().collect::<Vec<_>>(), ["big", "greet"]);
        assert!(state.functions.values().all(String::is_empty));
        assert!(state.shadows("n"));
        assert!(State::parse(super::super::Dialect::Bash, &names, Limits::DEFAULT).is_err());
        let with_bodies = dump([
            NAMES_HEADER,
            "",
            "greet () \n{ \n    echo hi\n}\n",
            "declare -f greet\n",
            "",
            "",
            "",
            "0022\n",
            "/w",
            "",
            "0",
        ]);
        assert!(
            State::parse_snapshot(super::super::Dialect::Bash, &with_bodies, Limits::DEFAULT)
                .is_err()
        );
    }

    /// A line run again with a grant wrote two dumps: the last is the line's state; anything
    /// but whole dumps is refused.
    #[test]
    fn the_last_of_several_dumps_is_the_state() {
        let run = |cwd: &str, status: &str| {
            dump([HEADER, "", "", "", "", "", "", "0022\n", cwd, "", status])
        };
        let mut bytes = run("/first", "1");
        bytes.extend(run("/second", "0"));
        let state = State::parse(super::super::Dialect::Bash, &bytes, Limits::DEFAULT).unwrap();
        assert_eq!(
            (state.cwd.as_deref(), state.status),
            (Some("/second"), vec![0])
        );
        bytes.extend_from_slice(b"more\0");
        assert!(State::parse(super::super::Dialect::Bash, &bytes, Limits::DEFAULT).is_err());
    }

    #[test]
    fn a_whole_dump_round_trips_through_the_input_script() {
        let bytes = dump([
            HEADER,
            DECLARED,
            "f () \n{ \n    echo f\n}\n",
            "declare -f f\n",
            "alias ll='ls -l'\n",
            "shopt -s extglob\nshopt -u login_shell\n",
            "set -o braceexpand\nset +o monitor\n",
            "0027\n",
            "/home/u",
            "",
            "1 0 1",
        ]);
        let state = State::parse(super::super::Dialect::Bash, &bytes, Limits::DEFAULT).unwrap();
        assert_eq!(state.umask.as_deref(), Some("0027"));
        assert_eq!(state.cwd.as_deref(), Some("/home/u"));
        assert_eq!(state.status, vec![1, 0, 1]);
        let input = render_input(&state);
        assert!(
            input.contains("builtin declare -a c; c=([0]='p q' [5]='n\nl')"),
            "{input}"
        );
        assert!(input.contains("builtin declare -x f\n"), "{input}");
        assert!(input.contains("f () \n{ \n    echo f\n}\n"));
        assert!(input.contains("builtin alias -- 'll=ls -l'"));
        assert!(input.contains("builtin shopt -s extglob"));
        assert!(!input.contains("login_shell") && !input.contains("monitor"));
        assert!(input.contains("builtin umask 0027"));
    }

    #[test]
    fn applied_values_are_quoted_and_arithmetic_is_reset() {
        let mut before = State::default();
        before.vars.insert(
            "n".into(),
            Var {
                attrs: Attrs {
                    arithmetic: true,
                    ..Attrs::default()
                },
                value: Value::Scalar("1".into()),
            },
        );
        let evil = Var {
            attrs: Attrs::default(),
            value: Value::Scalar("a[$(touch pwned)]'x".into()),
        };
        let script = render_apply(
            &[
                Change::Var("n".into(), evil.clone()),
                Change::Var("p".into(), evil),
                Change::Var(
                    "bad name".into(),
                    Var {
                        attrs: Attrs::default(),
                        value: Value::Unset,
                    },
                ),
            ],
            &before,
        );
        assert_eq!(
            script,
            "builtin unset -v n; builtin declare -g n='a[$(touch pwned)]'\\''x'\n\
             builtin declare -g p='a[$(touch pwned)]'\\''x'\n"
        );
    }

    #[test]
    fn only_a_definition_bash_prints_back_unchanged_is_accepted() {
        let bash = crate::shell::real_shell(crate::parse::ShellKind::Bash).unwrap();
        let marker = std::env::temp_dir().join(format!("shellgate-verify-{}", std::process::id()));
        let run_marker = format!("touch {}", marker.display());
        let functions = vec![
            (
                "deactivate".to_owned(),
                "deactivate () \n{ \n    unset -f deactivate\n}".to_owned(),
            ),
            (
                "smuggle".to_owned(),
                format!("smuggle () \n{{ \n    :\n}}; {run_marker}"),
            ),
            (
                "two".to_owned(),
                "two () \n{ \n    :\n}\nls () \n{ \n    :\n}".to_owned(),
            ),
            ("builtin".to_owned(), "builtin () \n{ \n    :\n}".to_owned()),
            (
                "weird".to_owned(),
                "weird () \n{ \n    cat <<E\n}\nE\n\n}".to_owned(),
            ),
        ];
        let accepted = verify_functions(&bash, &functions);
        assert_eq!(accepted, ["deactivate", "weird"]);
        assert!(!marker.exists(), "verifying ran the definition");
    }
}
