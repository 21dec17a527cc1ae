//! The interactive shell's state around a gated line: what the line sees, and what it changed.
//!
//! A line typed in a hooked bash or zsh runs in the sandbox, in a fresh non-interactive shell.
//! For it to behave as it would have in the person's shell, that shell's state goes in with it,
//! and for the line to have its effect on the shell (`cd`, `export`, `source .venv/bin/activate`),
//! its state comes back out:
//!
//! 1. **In.** The hook's function dumps the shell's state with builtins only ([`State`]: variables,
//!    functions, aliases, options, umask, working directory, `$?` and `PIPESTATUS`) to a private
//!    file. shellgate parses it and writes the script the sandboxed shell sources first
//!    ([`render_input`]): everything but what must not be copied (the shell's own dynamic
//!    variables, shellgate's names, read-only specials).
//! 2. **Out.** After the line, the sandboxed shell dumps its state the same way on descriptor 3.
//!    That text was written inside the sandbox by whatever the line ran: it is **untrusted**. It
//!    is parsed with limits ([`Limits`]), compared with what went in ([`changes`]), and each change
//!    gets a [`Treatment`]: applied silently (the working directory, ordinary variables and
//!    exports, unsets, ordinary options, the umask), applied only after the person says yes
//!    (functions and aliases — they can later run outside every sandbox, from the prompt, a
//!    completion or a trap — and the names [`seal::is_shell_read`] asks about), or never (shellgate's
//!    own names, read-only variables, anything that would unhook the shell).
//! 3. **Apply.** shellgate writes the script the hook's function sources in the person's shell
//!    ([`render_apply`]), generated here with every name validated and every value single-quoted:
//!    no text from the sandbox is ever executed there, except a function definition the person
//!    accepted, and only after the shell's own parser checked it is exactly one definition of that
//!    name ([`bash::verify_functions`]; zsh parses `functions[name]=body` without running it).

pub mod bash;
pub mod seal;
pub mod zsh;

use std::collections::BTreeMap;

/// Which shell's dump and scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Bash,
    Zsh,
}

/// A variable's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Declared without a value (`declare -x NAME`).
    Unset,
    Scalar(String),
    /// An indexed array: (index, element), as the shell listed them.
    Indexed(Vec<(u64, String)>),
    /// An associative array: (key, value), as the shell listed them.
    Assoc(Vec<(String, String)>),
}

/// The attributes shellgate acts on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attrs {
    pub exported: bool,
    pub readonly: bool,
    /// Integer or float: an assignment is evaluated as arithmetic, which can run code
    /// (`a[$(cmd)]`), so such a variable is unset before a value from the sandbox is assigned.
    pub arithmetic: bool,
    pub nameref: bool,
    /// A zsh special parameter (tied, or with a meaning to the shell).
    pub special: bool,
    /// The shell's own attribute letters (bash) or type words (zsh), for the input script.
    pub raw: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Var {
    pub attrs: Attrs,
    pub value: Value,
}

/// Which alias table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AliasKind {
    Regular,
    /// zsh `alias -g`: expanded anywhere on a line.
    Global,
    /// zsh `alias -s`: a file suffix.
    Suffix,
}

/// Which option table (bash has two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OptionKind {
    /// bash `set -o`, zsh `setopt`.
    Set,
    /// bash `shopt`.
    Shopt,
}

/// One shell's state, as dumped by the hook's dump function.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    pub vars: BTreeMap<String, Var>,
    /// Name → definition (bash: the `declare -f` text; zsh: the body).
    pub functions: BTreeMap<String, String>,
    /// The functions were over [`Limits::functions_bytes`] and left out.
    pub functions_omitted: bool,
    pub aliases: BTreeMap<(AliasKind, String), String>,
    pub options: BTreeMap<(OptionKind, String), bool>,
    pub umask: Option<String>,
    pub cwd: Option<String>,
    /// Builtins turned off (`enable -n`, `disable`).
    pub disabled: Vec<String>,
    /// `$?` then each `PIPESTATUS`/`pipestatus` element, at the time of the dump.
    pub status: Vec<i32>,
    /// The shell sent the names of its variables and functions, not their values and bodies
    /// (zsh's `__shellgate_dump names`; aliases, options and the rest are whole): enough to plan
    /// a line that needs none of the state ([`crate::shell::stateless`]), and nothing else. Only
    /// the person's shell sends one ([`State::parse_snapshot`]); a line's dump never is one.
    pub names_only: bool,
}

/// `$?` then each `PIPESTATUS` element, as a shell wrote them (`"1 0 1"`): at most 256, each a
/// number, or none at all.
pub fn statuses(text: &str) -> Vec<i32> {
    let numbers: Option<Vec<i32>> = text
        .split_ascii_whitespace()
        .take(256)
        .map(|n| n.parse().ok())
        .collect();
    numbers.unwrap_or_default()
}

/// Bounds on what is read: the shell's own dump, and the untrusted one from the sandbox.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The whole dump.
    pub total_bytes: usize,
    /// The function definitions; beyond this they are left out, and the person told once.
    pub functions_bytes: usize,
    /// Variables, functions, aliases and options, each.
    pub entries: usize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        total_bytes: 8 << 20,
        functions_bytes: 1 << 20,
        entries: 20_000,
    };
}

/// Why a dump could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpError(pub String);

impl std::fmt::Display for DumpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl State {
    /// The value of the scalar variable `name`, if the state has one.
    pub fn scalar(&self, name: &str) -> Option<&str> {
        match &self.vars.get(name)?.value {
            Value::Scalar(text) => Some(text),
            _ => None,
        }
    }

    /// Parses a whole dump of `dialect`'s dump function: the state a line leaves in the sandbox,
    /// where a dump of names only ([`State::names_only`]) is refused.
    pub fn parse(dialect: Dialect, dump: &[u8], limits: Limits) -> Result<State, DumpError> {
        let state = State::parse_snapshot(dialect, dump, limits)?;
        if state.names_only {
            return Err(DumpError("the shell state holds names only".into()));
        }
        Ok(state)
    }

    /// Parses what the person's shell sent before a line: a whole dump, or its names only.
    pub fn parse_snapshot(
        dialect: Dialect,
        dump: &[u8],
        limits: Limits,
    ) -> Result<State, DumpError> {
        if dump.len() > limits.total_bytes {
            return Err(DumpError(format!(
                "the shell state is larger than {} bytes",
                limits.total_bytes
            )));
        }
        match dialect {
            Dialect::Bash => bash::parse(dump, limits),
            Dialect::Zsh => zsh::parse(dump, limits),
        }
    }

    /// Whether a word of `line` (a token between blanks and operators, quotes and all: a quoted
    /// word is not expanded) is one of zsh's global aliases, which expand anywhere on a line.
    pub fn global_alias_in(&self, line: &str) -> bool {
        self.aliases
            .keys()
            .filter(|(kind, _)| *kind == AliasKind::Global)
            .any(|(_, name)| {
                line.split(|c: char| c.is_whitespace() || ";|&<>()".contains(c))
                    .any(|w| w == name)
            })
    }

    /// Whether `name` is one of [`State::shadowing_names`], looked up without listing them.
    pub fn shadows(&self, name: &str) -> bool {
        self.aliases
            .contains_key(&(AliasKind::Regular, name.to_owned()))
            || self.functions.contains_key(name)
            || self.disabled.iter().any(|d| d == name)
            || self.vars.get(name).is_some_and(|v| v.attrs.arithmetic)
    }

    /// Names that, in this shell, are not what they look like: aliases, functions and builtins
    /// turned off (a line whose command is one of them must not run in the shell as if it were
    /// the builtin: an alias `cd='…'` runs whatever it says), and variables with the integer
    /// attribute (assigning one is arithmetic).
    pub fn shadowing_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .aliases
            .keys()
            .filter(|(kind, _)| *kind == AliasKind::Regular)
            .map(|(_, name)| name.clone())
            .collect();
        names.extend(self.functions.keys().cloned());
        names.extend(self.disabled.iter().cloned());
        // An assignment to a variable with the integer attribute evaluates arithmetic: `export`
        // or `unset` of one never runs in the shell as if it were plain (see `in_shell`).
        names.extend(
            self.vars
                .iter()
                .filter(|(_, v)| v.attrs.arithmetic)
                .map(|(n, _)| n.clone()),
        );
        names
    }
}

/// The variables every dump leaves out and every diff ignores: the shell's own dynamic and
/// per-process variables, which differ between the person's shell and the sandboxed one by
/// nature (`SHLVL` is one more there, `BASHPID` another process), and what the sandbox itself
/// sets (`TMPDIR` for read-only lines, `SHELLGATE_SANDBOXED`, `RES_OPTIONS` with a port grant,
/// the proxy variables naming the line's own proxy, which is gone with the line: applied to the
/// person's shell they would send every program started from it to a closed port).
pub fn is_shell_own(dialect: Dialect, name: &str) -> bool {
    const COMMON: [&str; 13] = [
        "_",
        "PWD",
        "SHLVL",
        "PPID",
        "UID",
        "EUID",
        "RANDOM",
        "SECONDS",
        "LINENO",
        "COLUMNS",
        "LINES",
        "TMPDIR",
        "RES_OPTIONS",
    ];
    const BASH: [&str; 32] = [
        "BASH",
        "BASHOPTS",
        "BASHPID",
        "BASH_ALIASES",
        "BASH_ARGC",
        "BASH_ARGV",
        "BASH_ARGV0",
        "BASH_CMDS",
        "BASH_COMMAND",
        "BASH_EXECUTION_STRING",
        "BASH_LINENO",
        "BASH_REMATCH",
        "BASH_SOURCE",
        "BASH_SUBSHELL",
        "BASH_VERSINFO",
        "BASH_VERSION",
        "DIRSTACK",
        "EPOCHREALTIME",
        "EPOCHSECONDS",
        "FUNCNAME",
        "GROUPS",
        "HISTCMD",
        "HOSTNAME",
        "HOSTTYPE",
        "MACHTYPE",
        "OSTYPE",
        "PIPESTATUS",
        "SHELLOPTS",
        "SRANDOM",
        "COMP_WORDBREAKS",
        "OPTIND",
        "OPTERR",
    ];
    const ZSH: [&str; 21] = [
        "0",
        "ZSH_ARGZERO",
        "ZSH_SUBSHELL",
        "ZSH_EXECUTION_STRING",
        "ZSH_EVAL_CONTEXT",
        "ZSH_NAME",
        "ZSH_VERSION",
        "ZSH_PATCHLEVEL",
        "EPOCHSECONDS",
        "EPOCHREALTIME",
        "HISTCMD",
        "TTY",
        "TTYIDLE",
        "status",
        "pipestatus",
        "argv",
        "ARGC",
        "funcstack",
        "funcfiletrace",
        "funcsourcetrace",
        "functrace",
    ];
    if name.starts_with("__shellgate") || name.starts_with(crate::shell::SHELLGATE_VAR_PREFIX) {
        return true;
    }
    if name.starts_with("READLINE_") || name.starts_with("COMP_") {
        return true;
    }
    COMMON.contains(&name)
        || crate::sandbox::proxy::VARIABLES.contains(&name)
        || match dialect {
            Dialect::Bash => BASH.contains(&name),
            Dialect::Zsh => ZSH.contains(&name) || name.starts_with("ZSH_EVAL"),
        }
}

/// What becomes of one change the line made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Treatment {
    /// Applied without asking.
    Silent,
    /// Applied only after the person says yes.
    Ask,
    /// Never applied; the reason is told to the person.
    Never(&'static str),
}

/// What changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Cwd(String),
    /// Set (new or changed): the variable as it is after the line.
    Var(String, Var),
    Unset(String),
    Function(String, String),
    FunctionRemoved(String),
    Alias(AliasKind, String, String),
    AliasRemoved(AliasKind, String),
    Option(OptionKind, String, bool),
    Umask(String),
}

impl Change {
    /// How the person sees it in the question: `PATH`, `deactivate()`, `alias ll`.
    pub fn label(&self) -> String {
        match self {
            Change::Cwd(dir) => format!("the directory ({dir})"),
            Change::Var(name, _) | Change::Unset(name) => name.clone(),
            Change::Function(name, _) | Change::FunctionRemoved(name) => format!("{name}()"),
            Change::Alias(_, name, _) | Change::AliasRemoved(_, name) => format!("alias {name}"),
            Change::Option(_, name, _) => format!("option {name}"),
            Change::Umask(_) => "the umask".to_owned(),
        }
    }

    /// The verb of the question: "changed", "defined", "removed".
    fn verb(&self) -> &'static str {
        match self {
            Change::Unset(_) | Change::FunctionRemoved(_) | Change::AliasRemoved(..) => "removed",
            Change::Function(..) | Change::Alias(..) => "defined",
            _ => "changed",
        }
    }
}

/// Everything the line changed in the shell's state, from `before` (what went into the sandbox)
/// to `after` (what came out). Only what went in is compared: a variable the input left out, or
/// the functions when they were omitted, cannot come back changed.
pub fn changes(dialect: Dialect, before: &State, after: &State) -> Vec<Change> {
    let mut out = Vec::new();
    if let Some(cwd) = &after.cwd
        && before.cwd.as_ref() != Some(cwd)
    {
        out.push(Change::Cwd(cwd.clone()));
    }
    let sent = |name: &str| !is_shell_own(dialect, name);
    for (name, var) in &after.vars {
        if !sent(name) {
            continue;
        }
        match before.vars.get(name) {
            Some(old) if !var_differs(old, var) => {}
            Some(old) if skipped_on_input(dialect, name, old) => {}
            _ if set_by_the_gate(name, var) => {}
            _ => out.push(Change::Var(name.clone(), var.clone())),
        }
    }
    for (name, old) in &before.vars {
        if sent(name) && !skipped_on_input(dialect, name, old) && !after.vars.contains_key(name) {
            out.push(Change::Unset(name.clone()));
        }
    }
    if !before.functions_omitted && !after.functions_omitted {
        for (name, text) in &after.functions {
            if name.starts_with("__shellgate") {
                continue;
            }
            if before
                .functions
                .get(name)
                .is_none_or(|old| !same_function(dialect, old, text))
            {
                out.push(Change::Function(name.clone(), text.clone()));
            }
        }
        for name in before.functions.keys() {
            if !name.starts_with("__shellgate") && !after.functions.contains_key(name) {
                out.push(Change::FunctionRemoved(name.clone()));
            }
        }
    }
    for ((kind, name), value) in &after.aliases {
        if before.aliases.get(&(*kind, name.clone())) != Some(value) {
            out.push(Change::Alias(*kind, name.clone(), value.clone()));
        }
    }
    for (kind, name) in before.aliases.keys() {
        if !after.aliases.contains_key(&(*kind, name.clone())) {
            out.push(Change::AliasRemoved(*kind, name.clone()));
        }
    }
    for ((kind, name), on) in &after.options {
        if let Some(was) = before.options.get(&(*kind, name.clone()))
            && was != on
            && option_sent(dialect, *kind, name)
        {
            out.push(Change::Option(*kind, name.clone(), *on));
        }
    }
    if let Some(umask) = &after.umask
        && before.umask.as_ref() != Some(umask)
    {
        out.push(Change::Umask(umask.clone()));
    }
    out
}

/// A variable with the value the gate gave the line: the settings of a line that fetches on
/// demand ([`crate::policy::network::FAIL_FETCHES_AT_ONCE`]) and the lines' own package caches
/// ([`crate::policy::needs::LINE_CACHES`]). They are the line's, not the person's (a person's
/// own value of one went in with the input and came back unchanged).
fn set_by_the_gate(name: &str, var: &Var) -> bool {
    let Value::Scalar(value) = &var.value else {
        return false;
    };
    crate::policy::network::FAIL_FETCHES_AT_ONCE
        .iter()
        .any(|(n, v)| *n == name && value == v)
        || crate::policy::needs::LINE_CACHES.iter().any(|cache| {
            let path = std::path::Path::new(value);
            cache.variable == name
                && crate::paths::lines_cache_holding(cache.dir, path).is_some_and(|c| c == path)
        })
}

/// zsh prints a function's body re-indented, and an autoload stub differently from the function
/// once defined from the same text: bodies are compared line by line without the indentation.
fn same_function(dialect: Dialect, old: &str, new: &str) -> bool {
    match dialect {
        Dialect::Bash => old == new,
        Dialect::Zsh => old
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .eq(new.lines().map(str::trim).filter(|l| !l.is_empty())),
    }
}

fn var_differs(old: &Var, new: &Var) -> bool {
    old.value != new.value
        || old.attrs.exported != new.attrs.exported
        || old.attrs.readonly != new.attrs.readonly
}

/// Variables the input script does not copy into the sandbox (see [`bash::render_input`] and
/// [`zsh::render_input`]): a difference there says nothing about the line.
fn skipped_on_input(dialect: Dialect, name: &str, var: &Var) -> bool {
    match dialect {
        Dialect::Bash => false,
        Dialect::Zsh => zsh::skipped_on_input(name, var),
    }
}

/// Options the input script sets in the sandbox; only those can be compared.
pub fn option_sent(dialect: Dialect, kind: OptionKind, name: &str) -> bool {
    match dialect {
        Dialect::Bash => bash::option_sent(kind, name),
        Dialect::Zsh => zsh::option_sent(name),
    }
}

/// The zsh hook arrays: a change that drops shellgate's own entry would unhook the shell.
const ZSH_HOOK_ARRAYS: [&str; 4] = [
    "precmd_functions",
    "preexec_functions",
    "zshaddhistory_functions",
    "chpwd_functions",
];

/// What the treatment of a change depends on besides the change: the shell's state when the line
/// started, what that shell runs unasked, and what the typed line spells out.
pub struct Context<'a> {
    pub before: &'a State,
    pub unasked: &'a seal::Unasked,
    pub typed: &'a Typed,
    /// The values of `PATH` and the prompts the shell has had when a line started (the current
    /// ones among them).
    pub held: &'a Held,
}

/// Values a variable had when earlier lines started, by name (see [`seal::set_back`]).
pub type Held = BTreeMap<String, Vec<String>>;

/// What the typed line spells out literally: what the person read on the line they typed. Such a
/// change is inert (see [`seal`]).
#[derive(Debug, Default)]
pub struct Typed {
    /// Variables the line assigns a literal value (`export EDITOR=vim`): (name, value).
    pub assignments: Vec<(String, String)>,
    /// Aliases the line defines with a literal value (`alias ll='ls -l'`): (name, value).
    pub aliases: Vec<(String, String)>,
    /// Options the line turns on or off by a literal name (`shopt -s globstar`, `set -o vi`,
    /// `setopt autocd`, `unsetopt beep`): (name as the typed word has it, on).
    pub options: Vec<(String, bool)>,
}

impl Typed {
    /// What `parsed`'s commands spell out: the builtins themselves (not through `sudo` or
    /// `eval`), with literal arguments.
    pub fn of(parsed: &crate::parse::Parsed) -> Typed {
        let mut typed = Typed {
            assignments: parsed.literal_assignments.clone(),
            ..Typed::default()
        };
        for c in &parsed.commands {
            if c.args_dynamic || c.path.is_some() || !c.via.is_empty() {
                continue;
            }
            let args: Vec<&str> = c.argv.iter().map(String::as_str).collect();
            match c.program.as_str() {
                "alias" => typed.aliases.extend(
                    args.iter()
                        .filter(|a| !a.starts_with('-'))
                        .filter_map(|a| a.split_once('='))
                        .map(|(n, v)| (n.to_owned(), v.to_owned())),
                ),
                "shopt" => {
                    let on = args.contains(&"-s");
                    let off = args.contains(&"-u");
                    if on != off {
                        typed.options.extend(
                            args.iter()
                                .filter(|a| !a.starts_with('-'))
                                .map(|n| ((*n).to_owned(), on)),
                        );
                    }
                }
                "set" => {
                    for pair in args.windows(2) {
                        if let [flag @ ("-o" | "+o"), name] = pair {
                            typed.options.push(((*name).to_owned(), *flag == "-o"));
                        }
                    }
                }
                "setopt" | "unsetopt" => typed.options.extend(
                    args.iter()
                        .filter(|a| !a.starts_with(['-', '+']))
                        .map(|n| ((*n).to_owned(), c.program == "setopt")),
                ),
                _ => {}
            }
        }
        typed
    }

    fn alias(&self, name: &str, value: &str) -> bool {
        self.aliases.iter().any(|(n, v)| n == name && v == value)
    }

    /// Whether the line turned option `name` `on` (or off) by name. zsh reads a name without
    /// case or underscores, and a leading `no` inverts it (`setopt nobeep`): either reading of
    /// the typed word counts, as both are what the person typed.
    fn option(&self, name: &str, on: bool) -> bool {
        let plain = |n: &str| -> String {
            n.chars()
                .filter(|c| *c != '_')
                .map(|c| c.to_ascii_lowercase())
                .collect()
        };
        let name = plain(name);
        self.options.iter().any(|(typed, typed_on)| {
            let typed = plain(typed);
            (typed == name && *typed_on == on)
                || (typed.strip_prefix("no") == Some(name.as_str()) && *typed_on != on)
        })
    }
}

/// How a change is treated (see [`seal`] for the allow-list of what is inert).
pub fn treatment(dialect: Dialect, change: &Change, cx: &Context) -> Treatment {
    match change {
        Change::Cwd(_) | Change::Umask(_) => Treatment::Silent,
        Change::Var(name, var) => var_treatment(name, Some(var), cx),
        Change::Unset(name) => var_treatment(name, None, cx),
        Change::Function(name, _) | Change::FunctionRemoved(name)
            if name.starts_with("__shellgate") =>
        {
            Treatment::Never("shellgate's own hook")
        }
        // zsh runs a function named TRAPINT, TRAPDEBUG, TRAPEXIT … as a trap.
        Change::Function(name, _) if dialect == Dialect::Zsh && name.starts_with("TRAP") => {
            Treatment::Never("zsh runs it as a trap")
        }
        Change::Function(name, _) if cx.unasked.calls(name) => Treatment::Never(UNASKED),
        Change::Function(..) => Treatment::Ask,
        Change::FunctionRemoved(_) => Treatment::Silent,
        Change::Alias(_, name, _) | Change::AliasRemoved(_, name)
            if name.starts_with("__shellgate") || !valid_alias_name(name) =>
        {
            Treatment::Never("not an alias name shellgate applies")
        }
        Change::Alias(_, name, _) if cx.unasked.calls(name) => Treatment::Never(UNASKED),
        Change::Alias(_, name, value) if cx.typed.alias(name, value) => Treatment::Silent,
        Change::Alias(..) => Treatment::Ask,
        Change::AliasRemoved(..) => Treatment::Silent,
        Change::Option(kind, name, on) => match option_class(dialect, *kind, name, *on) {
            never @ Treatment::Never(_) => never,
            _ if cx.typed.option(name, *on) => Treatment::Silent,
            _ => Treatment::Ask,
        },
    }
}

/// Why a function or an alias the prompt (or a hook) may call is never applied.
const UNASKED: &str = "your prompt or a hook of the shell calls that name, so it would run at \
                       every prompt: define it in your startup file";

/// How an option is classed for a person typing it at the prompt: `Silent` for an ordinary one
/// (it may be set in the shell itself), `Ask` for one that changes tracing, history or the
/// prompt, `Never` for one that would unhook the shell. A line's change to any option is asked
/// (options are not on the inert list).
pub fn option_class(dialect: Dialect, kind: OptionKind, name: &str, on: bool) -> Treatment {
    match dialect {
        Dialect::Bash => bash::option_treatment(kind, name, on),
        Dialect::Zsh => zsh::option_treatment(name),
    }
}

fn var_treatment(name: &str, new: Option<&Var>, cx: &Context) -> Treatment {
    if name.starts_with("__shellgate") {
        return Treatment::Never("shellgate's own hook");
    }
    if name.starts_with(crate::shell::SHELLGATE_VAR_PREFIX) {
        return Treatment::Never("shellgate's own setting: change it in your startup file");
    }
    if !valid_identifier(name) {
        return Treatment::Never("not a variable name shellgate applies");
    }
    let old = cx.before.vars.get(name);
    if old.is_some_and(|v| v.attrs.readonly) || new.is_some_and(|v| v.attrs.readonly) {
        return Treatment::Never("read-only variables are never applied");
    }
    if old.is_some_and(|v| v.attrs.nameref) || new.is_some_and(|v| v.attrs.nameref) {
        return Treatment::Never("name references are never applied");
    }
    if ZSH_HOOK_ARRAYS.contains(&name) {
        let kept = |v: &Var| match &v.value {
            Value::Indexed(items) => items.iter().any(|(_, f)| f.starts_with("__shellgate")),
            _ => false,
        };
        if old.is_some_and(kept) && !new.is_some_and(kept) {
            return Treatment::Never("it would remove shellgate's hook");
        }
    }
    if seal::set_back(name, old, new, cx.held) {
        return Treatment::Silent;
    }
    if seal::is_shell_read(name, old, new) {
        // A prompt string whose new value runs nothing when the shell expands it changes how
        // the prompt looks, nothing more (see `parse::hooks::inert_prompt`).
        let inert_prompt = seal::is_prompt_name(name)
            && new.is_some_and(|v| match &v.value {
                Value::Scalar(text) => !v.attrs.exported && crate::parse::hooks::inert_prompt(text),
                _ => false,
            });
        return if inert_prompt {
            Treatment::Silent
        } else {
            Treatment::Ask
        };
    }
    let Some(var) = new else {
        return Treatment::Silent;
    };
    if seal::value_holds_code(&var.value) {
        return Treatment::Ask;
    }
    let typed = match &var.value {
        Value::Scalar(text) => cx
            .typed
            .assignments
            .iter()
            .any(|(n, v)| n == name && v == text),
        _ => false,
    };
    if var.attrs.exported && !typed && !seal::is_builtin_result(name) {
        return Treatment::Ask;
    }
    Treatment::Silent
}

/// `[A-Za-z_][A-Za-z0-9_]*`: the only variable names an apply script assigns.
pub fn valid_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && name.len() <= 256
}

/// Function names an apply script defines: identifiers, plus `-`, `.`, `:` and `+` after the
/// first character (`git-foo`, `my.func`, `__git_ps1` …), nothing a shell would read as syntax.
pub fn valid_function_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b"_-.:+@".contains(&b))
        && name.len() <= 256
}

/// Alias names an apply script defines (same characters as functions, plus a leading digit).
pub fn valid_alias_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 256
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.:+@%,".contains(&b))
        && !name.starts_with('-')
}

/// One POSIX single-quoted word (bash and zsh read it the same way): nothing inside is expanded.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The person's question for the changes that need a yes: one line per change, saying what it
/// grants, then "apply to this shell?" (whose default is no):
///
/// ```text
/// shellgate: the line left changes that would act outside the sandbox:
///   export GIT_CONFIG_COUNT='1'  (exported: programs this shell starts read it)
///   defined deactivate()  (a function: runs outside the sandbox whenever it is called)
/// apply to this shell?
/// ```
pub fn question(asked: &[&Change], cx: &Context) -> String {
    let mut out =
        String::from("shellgate: the line left changes that would act outside the sandbox:\n");
    for change in asked {
        out.push_str("  ");
        // One line per change, whatever a name holds (the values are made visible already).
        out.push_str(&crate::intake::visible_line(&describe(change, cx)));
        out.push('\n');
    }
    out.push_str("apply to this shell?");
    out
}

/// One asked change, as the question shows it: what it is, and why it is asked.
fn describe(change: &Change, cx: &Context) -> String {
    let old = |name: &str| cx.before.vars.get(name);
    match change {
        Change::Var(name, var) => {
            let verb = if var.attrs.exported { "export " } else { "" };
            let why = if seal::is_shell_read(name, old(name), Some(var)) {
                "the shell itself reads it"
            } else if seal::value_holds_code(&var.value) {
                "its value holds code the shell would run if it evaluated it"
            } else {
                "exported: programs this shell starts outside the sandbox read it"
            };
            format!("{verb}{name}={}  ({why})", seal::shown_value(&var.value))
        }
        Change::Unset(name) => format!("unset {name}  (the shell itself reads it)"),
        Change::Function(name, _) => {
            format!(
                "defined {name}()  (a function: runs outside the sandbox whenever it is called)"
            )
        }
        Change::Alias(_, name, value) => format!(
            "alias {name}={}  (expands outside the sandbox wherever it is typed)",
            seal::shown_value(&Value::Scalar(value.clone()))
        ),
        Change::Option(_, name, on) => format!(
            "option {name} {}  (changes how the shell reads and runs lines)",
            if *on { "on" } else { "off" }
        ),
        other => format!("{} {}", other.verb(), other.label()),
    }
}

/// The apply script: the changes to make (silent ones, and asked ones the person accepted), then
/// the line's status. `functions` holds the definitions to run, already checked (bash) or parsed
/// without running (zsh).
pub fn render_apply(dialect: Dialect, changes: &[Change], before: &State) -> String {
    match dialect {
        Dialect::Bash => bash::render_apply(changes, before),
        Dialect::Zsh => zsh::render_apply(changes, before),
    }
}

/// The statement by which the input script ([`render_input`]) defines one variable, or `None` for
/// one it leaves out.
pub fn input_variable(dialect: Dialect, name: &str, var: &Var) -> Option<String> {
    match dialect {
        Dialect::Bash => bash::input_variable(name, var),
        Dialect::Zsh => zsh::input_variable(name, var),
    }
}

/// The script the sandboxed shell sources before the line: the person's state.
pub fn render_input(dialect: Dialect, state: &State) -> String {
    match dialect {
        Dialect::Bash => bash::render_input(state),
        Dialect::Zsh => zsh::render_input(state),
    }
}

/// Splits `text` at NUL bytes, refusing more than `max` fields.
fn nul_fields(text: &[u8], max: usize) -> Result<Vec<&[u8]>, DumpError> {
    let mut fields: Vec<&[u8]> = text.split(|b| *b == 0).collect();
    if fields.len() > max {
        return Err(DumpError("the shell state has too many entries".into()));
    }
    // The dump ends with a NUL: the last, empty field is not one.
    if fields.last().is_some_and(|f| f.is_empty()) {
        fields.pop();
    }
    Ok(fields)
}

fn utf8(field: &[u8]) -> Result<&str, DumpError> {
    std::str::from_utf8(field).map_err(|_| DumpError("the shell state is not UTF-8".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(value: &str) -> Var {
        Var {
            attrs: Attrs::default(),
            value: Value::Scalar(value.into()),
        }
    }

    #[test]
    fn changes_are_treated_by_name() {
        let mut before = State::default();
        before.vars.insert("A".into(), scalar("1"));
        before.vars.insert("GONE".into(), scalar("1"));
        before.vars.insert("PATH".into(), scalar("/bin"));
        before.cwd = Some("/w".into());
        let mut after = before.clone();
        after.vars.insert("A".into(), scalar("2"));
        after.vars.remove("GONE");
        after.vars.insert("PATH".into(), scalar("/evil:/bin"));
        after.vars.insert("SHLVL".into(), scalar("9"));
        after.vars.insert("SHELLGATE_SESSION".into(), scalar("x"));
        after
            .functions
            .insert("deactivate".into(), "deactivate () \n{ \n    :\n}".into());
        after.cwd = Some("/w/sub".into());
        let found = changes(Dialect::Bash, &before, &after);
        let unasked = seal::Unasked::of(&[&before, &after]);
        let cx = Context {
            before: &before,
            unasked: &unasked,
            typed: &Typed::default(),
            held: &Held::new(),
        };
        let treated: Vec<(String, Treatment)> = found
            .iter()
            .map(|c| (c.label(), treatment(Dialect::Bash, c, &cx)))
            .collect();
        assert!(treated.contains(&("the directory (/w/sub)".into(), Treatment::Silent)));
        assert!(treated.contains(&("A".into(), Treatment::Silent)));
        assert!(treated.contains(&("GONE".into(), Treatment::Silent)));
        assert!(treated.contains(&("PATH".into(), Treatment::Ask)));
        assert!(treated.contains(&("deactivate()".into(), Treatment::Ask)));
        // The shell's own variables and shellgate's are never even compared.
        assert!(
            !treated
                .iter()
                .any(|(l, _)| l == "SHLVL" || l == "SHELLGATE_SESSION")
        );
        let asked: Vec<&Change> = found
            .iter()
            .filter(|c| treatment(Dialect::Bash, c, &cx) == Treatment::Ask)
            .collect();
        assert_eq!(
            question(&asked, &cx),
            "shellgate: the line left changes that would act outside the sandbox:\n  \
             PATH='/evil:/bin'  (the shell itself reads it)\n  \
             defined deactivate()  (a function: runs outside the sandbox whenever it is called)\n\
             apply to this shell?"
        );
    }

    /// `PATH` set back to a value the shell had (a venv's `deactivate`) applies unasked; a value
    /// it never had, one that brings back a directory the shell has since left, or a change of
    /// its export, is asked.
    #[test]
    fn path_set_back_to_a_value_the_shell_had_is_not_asked() {
        let venv = "/w/.venv/bin:/usr/bin:/bin";
        let plain = "/usr/bin:/bin";
        let prompt = "\\u $(__git_ps1)$ ";
        let held: Held = [
            ("PATH".to_owned(), vec![plain.to_owned(), venv.to_owned()]),
            (
                "PS1".to_owned(),
                vec![prompt.to_owned(), format!("(.venv) {prompt}")],
            ),
        ]
        .into_iter()
        .collect();
        let exported = |value: &str| Var {
            attrs: Attrs {
                exported: true,
                ..Attrs::default()
            },
            value: Value::Scalar(value.into()),
        };
        let treat = |name: &str, from: &str, to: Var, held: &Held| {
            let mut before = State::default();
            before.vars.insert(name.into(), exported(from));
            let unasked = seal::Unasked::of(&[&before]);
            let cx = Context {
                before: &before,
                unasked: &unasked,
                typed: &Typed::default(),
                held,
            };
            treatment(Dialect::Bash, &Change::Var(name.into(), to), &cx)
        };
        assert_eq!(
            treat("PATH", venv, exported(plain), &held),
            Treatment::Silent
        );
        assert_eq!(
            treat("PATH", plain, exported(venv), &held),
            Treatment::Ask,
            "brings back a directory"
        );
        assert_eq!(
            treat("PATH", venv, exported("/bin:/usr/bin"), &held),
            Treatment::Ask,
            "never had"
        );
        assert_eq!(
            treat("PATH", venv, scalar(plain), &held),
            Treatment::Ask,
            "no longer exported"
        );
        assert_eq!(
            treat("PATH", venv, exported(plain), &Held::new()),
            Treatment::Ask,
            "nothing held"
        );
        // A prompt set back to the person's own (venv's deactivate), code and all.
        let venv_prompt = format!("(.venv) {prompt}");
        assert_eq!(
            treat("PS1", &venv_prompt, exported(prompt), &held),
            Treatment::Silent
        );
        assert_eq!(
            treat("PS1", prompt, exported("$(touch /tmp/x)$ "), &held),
            Treatment::Ask,
            "a prompt the shell never had"
        );
        // Forward again (the venv's prompt after its deactivate) is asked: the shell had it
        // after its current value.
        assert_eq!(
            treat("PS1", prompt, exported(&venv_prompt), &held),
            Treatment::Ask
        );
        // A current value the shell never had when a line started: nothing is "back".
        assert_eq!(
            treat("PS1", "other$ ", exported(prompt), &held),
            Treatment::Ask
        );
        // Other variables the shell reads are not set back unasked.
        let ifs: Held = [("IFS".to_owned(), vec![":".to_owned()])]
            .into_iter()
            .collect();
        assert_eq!(treat("IFS", " ", exported(":"), &ifs), Treatment::Ask);
    }

    /// An alias or an option the typed line spells out literally applies without a second
    /// question (the line itself was asked); one it does not spell out, or one the prompt calls,
    /// does not.
    #[test]
    fn what_the_typed_line_spells_out_applies_without_a_second_question() {
        let mut before = State::default();
        before.vars.insert("PS1".into(), scalar("$(__git_ps1)$ "));
        before.functions.insert(
            "__git_ps1".into(),
            "__git_ps1 () \n{ \n    git status\n}".into(),
        );
        let unasked = seal::Unasked::of(&[&before]);
        let typed_of =
            |line: &str| Typed::of(&crate::parse::parse(line, crate::parse::ShellKind::Bash));
        let alias = |n: &str, v: &str| Change::Alias(AliasKind::Regular, n.into(), v.into());
        let shopt = |n: &str, on: bool| Change::Option(OptionKind::Shopt, n.into(), on);
        let set = |n: &str, on: bool| Change::Option(OptionKind::Set, n.into(), on);
        for (line, dialect, change, want) in [
            (
                "alias ll='ls -l'",
                Dialect::Bash,
                alias("ll", "ls -l"),
                Treatment::Silent,
            ),
            (
                "alias ll='ls -l'",
                Dialect::Bash,
                alias("ll", "ls -la"),
                Treatment::Ask,
            ),
            (
                "alias ll=\"$X\"",
                Dialect::Bash,
                alias("ll", "ls -l"),
                Treatment::Ask,
            ),
            (
                ". ./aliases.sh",
                Dialect::Bash,
                alias("ll", "ls -l"),
                Treatment::Ask,
            ),
            (
                "sudo alias ll='ls -l'",
                Dialect::Bash,
                alias("ll", "ls -l"),
                Treatment::Ask,
            ),
            (
                "shopt -s globstar",
                Dialect::Bash,
                shopt("globstar", true),
                Treatment::Silent,
            ),
            (
                "shopt -s globstar",
                Dialect::Bash,
                shopt("globstar", false),
                Treatment::Ask,
            ),
            (
                "shopt -u globstar",
                Dialect::Bash,
                shopt("globstar", false),
                Treatment::Silent,
            ),
            (
                "shopt -s globstar",
                Dialect::Bash,
                shopt("dotglob", true),
                Treatment::Ask,
            ),
            (
                "set -o vi",
                Dialect::Bash,
                set("vi", true),
                Treatment::Silent,
            ),
            (
                "set +o vi",
                Dialect::Bash,
                set("vi", false),
                Treatment::Silent,
            ),
            (
                "setopt AUTO_CD",
                Dialect::Zsh,
                set("autocd", true),
                Treatment::Silent,
            ),
            (
                "setopt nobeep",
                Dialect::Zsh,
                set("beep", false),
                Treatment::Silent,
            ),
            (
                "unsetopt beep",
                Dialect::Zsh,
                set("beep", false),
                Treatment::Silent,
            ),
            (
                "setopt beep",
                Dialect::Zsh,
                set("beep", false),
                Treatment::Ask,
            ),
        ] {
            let typed = typed_of(line);
            let cx = Context {
                before: &before,
                unasked: &unasked,
                typed: &typed,
                held: &Held::new(),
            };
            assert_eq!(treatment(dialect, &change, &cx), want, "{line}: {change:?}");
        }
        // Never stays never: an alias named like what the prompt calls, spelled out or not.
        let typed = typed_of("alias git='curl x | sh'");
        let cx = Context {
            before: &before,
            unasked: &unasked,
            typed: &typed,
            held: &Held::new(),
        };
        assert!(matches!(
            treatment(Dialect::Bash, &alias("git", "curl x | sh"), &cx),
            Treatment::Never(_)
        ));
    }

    /// The inert allow-list (issue 24, part B): exports, shell-read names, values that hold code,
    /// functions and aliases the prompt calls, options.
    #[test]
    fn only_what_is_inert_is_applied_unasked() {
        let mut before = State::default();
        before
            .vars
            .insert("PS1".into(), scalar("[$?] $(__git_ps1)$ "));
        before.functions.insert(
            "__git_ps1".into(),
            "__git_ps1 () \n{ \n    __git_eread; git status\n}".into(),
        );
        let exported = |v: &str| {
            let mut var = scalar(v);
            var.attrs.exported = true;
            var
        };
        let typed = Typed {
            assignments: vec![("EDITOR".to_owned(), "vim".to_owned())],
            ..Typed::default()
        };
        let unasked = seal::Unasked::of(&[&before]);
        let cx = Context {
            before: &before,
            unasked: &unasked,
            typed: &typed,
            held: &Held::new(),
        };
        let treat = |c: Change| treatment(Dialect::Bash, &c, &cx);
        for (change, want) in [
            (Change::Var("x".into(), scalar("plain")), Treatment::Silent),
            (Change::Var("x".into(), scalar("a[$(id)]")), Treatment::Ask),
            (
                Change::Var("GIT_CONFIG_COUNT".into(), exported("1")),
                Treatment::Ask,
            ),
            (Change::Var("BROWSER".into(), exported("x")), Treatment::Ask),
            (
                Change::Var("EDITOR".into(), exported("vim")),
                Treatment::Silent,
            ),
            (
                Change::Var("EDITOR".into(), exported("emacs")),
                Treatment::Ask,
            ),
            (
                Change::Var("OLDPWD".into(), exported("/w")),
                Treatment::Silent,
            ),
            (
                Change::Var("MAILPATH".into(), scalar("/m?hi")),
                Treatment::Ask,
            ),
            (Change::Var("MAILCHECK".into(), scalar("0")), Treatment::Ask),
            (
                Change::Var("TEXTDOMAINDIR".into(), scalar("/w")),
                Treatment::Ask,
            ),
            (
                Change::Var("prompt".into(), scalar("$(id)")),
                Treatment::Ask,
            ),
            (Change::Unset("MAILPATH".into()), Treatment::Ask),
            (Change::Unset("x".into()), Treatment::Silent),
            (
                Change::Function("deploy".into(), String::new()),
                Treatment::Ask,
            ),
            (
                Change::Alias(AliasKind::Regular, "ll".into(), "ls -l".into()),
                Treatment::Ask,
            ),
            (
                Change::Option(OptionKind::Shopt, "globstar".into(), true),
                Treatment::Ask,
            ),
            (Change::Cwd("/w".into()), Treatment::Silent),
            (Change::Umask("0077".into()), Treatment::Silent),
        ] {
            let label = change.label();
            assert_eq!(treat(change), want, "{label}");
        }
        for name in ["__git_ps1", "__git_eread", "git", "precmd"] {
            assert!(
                matches!(
                    treat(Change::Function(name.into(), String::new())),
                    Treatment::Never(_)
                ),
                "{name}"
            );
        }
        assert!(matches!(
            treat(Change::Alias(AliasKind::Regular, "git".into(), "x".into())),
            Treatment::Never(_)
        ));
    }

    #[test]
    fn read_only_and_own_names_are_never_applied() {
        let mut before = State::default();
        let mut ro = scalar("1");
        ro.attrs.readonly = true;
        before.vars.insert("R".into(), ro);
        let unasked = seal::Unasked::of(&[&before]);
        let cx = Context {
            before: &before,
            unasked: &unasked,
            typed: &Typed::default(),
            held: &Held::new(),
        };
        let never = |c: &Change| matches!(treatment(Dialect::Bash, c, &cx), Treatment::Never(_));
        assert!(never(&Change::Var("R".into(), scalar("2"))));
        assert!(never(&Change::Unset("R".into())));
        assert!(never(&Change::Var("__shellgate_x".into(), scalar("2"))));
        assert!(never(&Change::Function(
            "__shellgate_run".into(),
            String::new()
        )));
        assert!(never(&Change::Var("a-b".into(), scalar("2"))));
        let hooked = Var {
            attrs: Attrs::default(),
            value: Value::Indexed(vec![(1, "__shellgate_precmd".into())]),
        };
        let mut zsh_before = State::default();
        zsh_before
            .vars
            .insert("precmd_functions".into(), hooked.clone());
        let dropped = Change::Var(
            "precmd_functions".into(),
            Var {
                attrs: Attrs::default(),
                value: Value::Indexed(vec![]),
            },
        );
        let zsh_unasked = seal::Unasked::of(&[&zsh_before]);
        let zcx = Context {
            before: &zsh_before,
            unasked: &zsh_unasked,
            typed: &Typed::default(),
            held: &Held::new(),
        };
        assert!(matches!(
            treatment(Dialect::Zsh, &dropped, &zcx),
            Treatment::Never(_)
        ));
        let extended = Change::Var(
            "precmd_functions".into(),
            Var {
                attrs: Attrs::default(),
                value: Value::Indexed(vec![(1, "__shellgate_precmd".into()), (2, "x".into())]),
            },
        );
        assert_eq!(treatment(Dialect::Zsh, &extended, &zcx), Treatment::Ask);
    }

    #[test]
    fn zsh_trap_functions_are_never_applied() {
        let before = State::default();
        let unasked = seal::Unasked::of(&[&before]);
        let cx = Context {
            before: &before,
            unasked: &unasked,
            typed: &Typed::default(),
            held: &Held::new(),
        };
        let trap = Change::Function("TRAPDEBUG".into(), "print hi".into());
        assert!(matches!(
            treatment(Dialect::Zsh, &trap, &cx),
            Treatment::Never(_)
        ));
    }

    #[test]
    fn quoting_is_one_word() {
        assert_eq!(quote("it's $(x)"), "'it'\\''s $(x)'");
    }
}

/// The dump functions in their real shells: a state dumped, written as an input script, sourced
/// by a fresh shell and dumped again comes back without a single change.
#[cfg(test)]
mod round_trip {
    use super::*;

    const SETUP_BASH: &str = r#"
a="x\"y\$z\`w\\v it's"; b=$'l1\nl2\tt\001'; declare -a c=([0]="p q" [5]=$'n\nl')
declare -A d=([$'x\ny']=z ['q"]']=1 [*]=2 [k]=v ["s p"]=w); declare -i e=5; declare -x f
export g=exported; declare -r ro=1; greet() { echo "hi $1"; }; alias ll='ls -l' q="echo 'x'"
shopt -s extglob; set -o noclobber; umask 0027
"#;

    fn run(program: &str, args: &[&str], script: &str) -> Vec<u8> {
        let out = std::process::Command::new(program)
            .args(args)
            .arg(script)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("LANG", "C.UTF-8")
            .output()
            .expect("the shell runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    }

    fn round_trip(
        dialect: Dialect,
        program: &str,
        args: &[&str],
        setup: &str,
        dump_fn: &str,
    ) -> State {
        let first = run(
            program,
            args,
            &format!("{dump_fn}\n{setup}\n__shellgate_dump"),
        );
        let before = State::parse(dialect, &first, Limits::DEFAULT).unwrap();
        assert!(before.functions.contains_key("greet"), "{before:?}");
        let input = render_input(dialect, &before);
        let second = run(
            program,
            args,
            &format!("{dump_fn}\n{input}\n__shellgate_dump"),
        );
        let after = State::parse(dialect, &second, Limits::DEFAULT).unwrap();
        let found = changes(dialect, &before, &after);
        assert!(found.is_empty(), "{found:#?}\n--- input:\n{input}");
        before
    }

    #[test]
    fn bash_state_survives_the_input_script() {
        let before = round_trip(
            Dialect::Bash,
            "bash",
            &["--norc", "--noprofile", "-c"],
            SETUP_BASH,
            bash::DUMP_FUNCTION,
        );
        assert_eq!(
            before.options.get(&(OptionKind::Shopt, "extglob".into())),
            Some(&true)
        );
        assert_eq!(
            before.options.get(&(OptionKind::Set, "noclobber".into())),
            Some(&true)
        );
    }

    #[test]
    #[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
    fn zsh_state_survives_the_input_script() {
        let setup = r#"
a="x\"y\$z it's"; b=$'l1\nl2\t\C-A'; typeset -a c=("p q" $'n\nl'); typeset -A d=(k v "s p" w)
integer e=5; export g=exported; typeset -r ro=1; greet() { print "hi $1" }; alias ll='ls -l'
alias -g G='| grep'; setopt autocd ksharrays shwordsplit; umask 027; PATH=/usr/bin:/bin:/opt/x
"#;
        let before = round_trip(
            Dialect::Zsh,
            "zsh",
            &["-f", "-c"],
            setup,
            zsh::DUMP_FUNCTION,
        );
        // Read even with KSH_ARRAYS on (a subscript-less `${(kv)options}` is one element then).
        for option in ["ksharrays", "shwordsplit", "autocd"] {
            assert_eq!(
                before.options.get(&(OptionKind::Set, option.into())),
                Some(&true),
                "{option}"
            );
        }
    }
}
