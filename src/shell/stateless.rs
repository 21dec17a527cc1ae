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
//! - **What its words become.** No expansion that reads the shell's state but `$NAME` and
//!   `${NAME}` of variables with plain values, each defined for the line as the whole state's
//!   input defines it ([`Plan::variables`]; the argument at [`expanded_as_with_the_state`]): no
//!   other `$` (`$?`, positional and special parameters, `${x:-y}`, command and arithmetic
//!   substitution), no backquote, no `~` (the home, zsh's named directories), no glob or brace
//!   characters (whose meaning the shell's options change), no `!`, `#` or `^` (history,
//!   comments, zsh's extended globs), no `((`, no zsh `=cmd`. Quotes and backslashes mean the
//!   same with any options (zsh's `RC_QUOTES` aside, checked below).
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

use crate::parse::{Command as ParsedCommand, Parsed};
use crate::shell::state::{AliasKind, Dialect, OptionKind, State, Value};

/// Builtins that read no state of the shell's and change none, with literal arguments (`echo`
/// reads `xpg_echo`, zsh's `BSD_ECHO`: at their defaults, see [`DEFAULTS_BASH`]).
const PURE_BUILTINS: [&str; 5] = ["true", "false", ":", "pwd", "echo"];

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
    (OptionKind::Shopt, "xpg_echo", false),
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
    (OptionKind::Set, "bsdecho", false),
];

/// The functions a shell runs for a command it cannot find.
const NOT_FOUND_HANDLERS: [&str; 2] = ["command_not_found_handle", "command_not_found_handler"];

/// Text for zsh's hook (`shell/zsh.zsh`, filled in by `init`): the hook sends a line the names of
/// its state first only when the line may pass [`plan`] — none of [`STATEFUL_CHARACTERS`], a first
/// word that is no builtin but [`PURE_BUILTINS`], no function and no assignment, the options of
/// [`DEFAULTS_ZSH`] at their defaults and no not-found handler. [`plan`] decides; the hint only
/// spares a second call for lines that surely need the whole state.
pub struct ZshHint {
    /// A bracket expression of the characters.
    pub characters: String,
    /// An alternation of the pure builtins.
    pub pure_builtins: String,
    /// A condition on `$options` (read before `emulate`) and `$functions`.
    pub shell: String,
}

/// The same hint for bash's hook (`shell/bash.sh`): the characters as for zsh, the builtins other
/// than [`PURE_BUILTINS`] as a `case` pattern, and a condition on `set -o` and `shopt -q` for the
/// options of [`DEFAULTS_BASH`] and on the not-found handler.
pub struct BashHint {
    pub characters: String,
    pub other_builtins: String,
    pub shell: String,
}

pub fn bash_hint() -> BashHint {
    // Single-quoted: literal in a pattern, and `esac` among them is no keyword.
    let other_builtins: Vec<String> = crate::shell::state::bash::BUILTINS
        .iter()
        .filter(|b| !PURE_BUILTINS.contains(b))
        .map(|b| format!("'{b}'"))
        .collect();
    let mut set = Vec::new();
    let mut shopt = Vec::new();
    for (kind, name, on) in DEFAULTS_BASH {
        let not = if on { "" } else { "! " };
        match kind {
            OptionKind::Set => set.push(format!("{not}-o {name}")),
            OptionKind::Shopt => shopt.push(format!(" && {not}builtin shopt -q {name}")),
        }
    }
    let handlers: String = NOT_FOUND_HANDLERS
        .iter()
        .map(|name| format!(" && ! builtin declare -F {name} >/dev/null"))
        .collect();
    BashHint {
        characters: stateful_bracket(),
        other_builtins: other_builtins.join("|"),
        shell: format!("[[ {} ]]{}{handlers}", set.join(" && "), shopt.concat()),
    }
}

/// [`STATEFUL_CHARACTERS`] but `$`, `{` and `}` as a bracket expression, each escaped (a pattern
/// in bash and zsh). The hooks check those three apart: a `$` followed by a name or `{`, a `{`
/// only after a `$` (`$NAME`, `${NAME}`: see [`expansions`]).
fn stateful_bracket() -> String {
    let escaped: String = STATEFUL_CHARACTERS
        .iter()
        .filter(|c| !matches!(c, '$' | '{' | '}'))
        .flat_map(|c| ['\\', *c])
        .collect();
    format!("[{escaped}]")
}

pub fn zsh_hint() -> ZshHint {
    let options: Vec<String> = DEFAULTS_ZSH
        .iter()
        .map(|(_, name, on)| format!("${{options[{name}]}} == {}", if *on { "on" } else { "off" }))
        .collect();
    let handlers: Vec<String> = NOT_FOUND_HANDLERS
        .iter()
        .map(|name| format!("! ${{+functions[{name}]}}"))
        .collect();
    ZshHint {
        characters: stateful_bracket(),
        pure_builtins: format!("({})", PURE_BUILTINS.join("|")),
        shell: format!(
            "[[ {} ]] && (( {} ))",
            options.join(" && "),
            handlers.join(" && ")
        ),
    }
}

/// The words of each command of a stateless line (see [`plan`]) that is one command of plain
/// words, or a pipeline of such commands (`a | b`, at most [`crate::sandbox::MAX_STAGES`]), for
/// starting its programs without a shell ([`crate::gate::Execution::Program`]): what the
/// person's shell does with such a line is to exec each program with these words, connected by
/// pipes, and what the sandboxed shell's `-c` does with it too, after starting. Plain words are
/// ASCII letters, digits and `_ . / : = , + @ % -` separated by blanks, the commands separated by
/// single `|`: no quoting, expansion, redirection or other operator character, so splitting at
/// the `|` and the blanks is the shell's own parse of the line — and the parser must agree (as
/// many commands, each's program and arguments these words, no wrapper, no redirection). An
/// argument may also hold `$NAME` / `${NAME}` of a variable the person's shell has with a plain
/// value ([`Plan::values`]): expanded here as the shell would ([`expand_plain`]). The
/// person's plain aliases the plan follows are expanded as the shell expands them: each
/// command's first word replaced by the alias's words, each alias once. No program's word is a
/// builtin (the plan allows a few pure ones), an assignment, or a job (`%1`).
pub fn direct_pipeline(line: &str, parsed: &Parsed, plan: &Plan) -> Option<Vec<Vec<String>>> {
    let segments: Vec<&str> = line.split('|').collect();
    if segments.len() != parsed.commands.len() || segments.len() > crate::sandbox::MAX_STAGES {
        return None;
    }
    segments
        .iter()
        .zip(&parsed.commands)
        .map(|(segment, command)| direct_argv(segment, command, plan))
        .collect()
}

/// One command of [`direct_pipeline`]: its words as typed in `segment`, the person's aliases
/// expanded.
fn direct_argv(segment: &str, command: &ParsedCommand, plan: &Plan) -> Option<Vec<String>> {
    let typed: Vec<&str> = segment
        .split([' ', '\t'])
        .filter(|w| !w.is_empty())
        .collect();
    let (first, rest) = typed.split_first()?;
    let parser_agrees = command.via.is_empty()
        && command.writes.is_empty()
        && command.reads.is_empty()
        && first.rsplit('/').next() == Some(command.program.as_str())
        && command.argv == rest;
    if !parser_agrees {
        return None;
    }
    let mut words: Vec<String> = typed.iter().map(|w| (*w).to_owned()).collect();
    let mut expanded: Vec<&str> = Vec::new();
    while let Some((name, value)) = plan
        .aliases
        .iter()
        .find(|(name, _)| *name == words[0] && !expanded.contains(&name.as_str()))
    {
        expanded.push(name);
        let value: Vec<String> = value.split_whitespace().map(str::to_owned).collect();
        if value.is_empty() {
            return None;
        }
        words.splice(0..1, value);
    }
    // Each word's plain parameters replaced by their values, as the shell expands a word of plain
    // characters whose parameters hold plain values (no splitting, no pattern, no quote to
    // remove); a word of expansions alone that expands to nothing is no word, as unquoted.
    let mut expanded_words = Vec::with_capacity(words.len());
    for (i, word) in words.into_iter().enumerate() {
        if !word.contains('$') {
            expanded_words.push(word);
            continue;
        }
        let value = expand_plain(&word, &plan.values).filter(|_| i > 0)?;
        if !value.is_empty() {
            expanded_words.push(value);
        }
    }
    let words = expanded_words;
    let plain = !words.is_empty() && words.iter().all(|w| plain_word(w));
    let program = &words[0];
    let a_program = !program.contains('=')
        && !program.starts_with(['%', '-'])
        && !PURE_BUILTINS.contains(&program.as_str());
    (plain && a_program).then_some(words)
}

/// How a stateless line runs: the person's aliases it uses and the variables it expands, defined
/// first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Name and value of each alias the line's commands expand, in the order to define them.
    pub aliases: Vec<(String, String)>,
    /// The statement that defines each variable the line expands, as the whole state's input
    /// script writes it ([`crate::shell::state::input_variable`]).
    pub variables: Vec<String>,
    /// The name and (plain) value of each of those variables: for a program started directly,
    /// whose words are then expanded here as the shell would ([`expand_plain`]).
    pub values: Vec<(String, String)>,
}

/// `word` (plain characters and `$NAME` / `${NAME}`) with each parameter replaced by its value
/// in `values`; `None` when one has none there (a name the person's shell does not have: its
/// value would be the line's environment's, which the gate makes) or the word holds another `$`.
fn expand_plain(word: &str, values: &[(String, String)]) -> Option<String> {
    let (names, _) = expansions(Dialect::Zsh, word)?;
    let mut out = String::with_capacity(word.len());
    let mut rest = word;
    for name in names {
        let at = rest.find('$')?;
        out.push_str(&rest[..at]);
        let braced = rest[at + 1..].starts_with('{');
        let value = values.iter().find(|(n, _)| n == name)?;
        out.push_str(&value.1);
        rest = &rest[at + 1 + name.len() + if braced { 2 } else { 0 }..];
    }
    out.push_str(rest);
    Some(out)
}

/// How `line` (parsed as `parsed`), typed in a shell whose state is `before`, runs without that
/// state; `None` when it needs it or changes it (see the module).
pub fn plan(dialect: Dialect, line: &str, parsed: &Parsed, before: &State) -> Option<Plan> {
    let mut plan = Plan::default();
    let (names, rest) = expansions(dialect, line)?;
    let free = words_need_no_state(dialect, &rest)
        && expanded_as_with_the_state(dialect, &names, before, &mut plan)
        && changes_nothing(parsed)
        && commands_are_programs(dialect, parsed, before, &mut plan)
        && options_are_defaults(dialect, before)
        && !NOT_FOUND_HANDLERS
            .iter()
            .any(|h| before.functions.contains_key(*h))
        && !before.global_alias_in(line)
        && !suffix_alias_applies(parsed, before)
        && autocd_cannot_apply(dialect, parsed, before)
        && !sets_what_the_gate_sets(before);
    free.then_some(plan)
}

/// The directory a typed line changes to by `autocd`: with the option on, a line of one plain
/// word (letters, digits, `_ . / : , + @ % -`) that names a directory from this process's
/// directory (the shell's), and that is no alias, function, builtin or program on `PATH` — then
/// bash and zsh both `cd` there (zsh only when no command has the name).
pub fn autocd_directory(dialect: Dialect, line: &str, before: &State) -> Option<String> {
    if !autocd_on(dialect, before) {
        return None;
    }
    let word = line.trim_matches([' ', '\t']);
    let plain = plain_word(word) && !word.contains('=');
    let program_on_path = || {
        let path = crate::env::get().var("PATH");
        crate::sandbox::resolve_program(std::ffi::OsStr::new(word), path).is_ok()
    };
    let a_directory = plain
        && !word.starts_with(['%', '-'])
        && !before.shadows(word)
        && !builtin(dialect, word)
        && std::path::Path::new(word).is_dir()
        && (word.contains('/') || !program_on_path());
    a_directory.then(|| word.to_owned())
}

/// A word no shell quote-removes, expands or splits: ASCII letters, digits and `_ . / : = , + @ %
/// -` (the hook's own check in `shell/bash.sh` takes the same characters).
fn plain_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=,+@%-".contains(c))
}

fn autocd_on(dialect: Dialect, before: &State) -> bool {
    let option = match dialect {
        Dialect::Bash => (OptionKind::Shopt, "autocd".to_owned()),
        Dialect::Zsh => (OptionKind::Set, "autocd".to_owned()),
    };
    before.options.get(&option) == Some(&true)
}

/// The words a command of the line was named by, as written (a path, or the name).
fn command_words(parsed: &Parsed) -> impl Iterator<Item = &str> {
    parsed
        .commands
        .iter()
        .map(|c| c.path.as_deref().unwrap_or(c.program.as_str()))
}

/// Whether a zsh suffix alias applies to a command of the line (`alias -s txt=vim` runs
/// `vim notes.txt` for a command word `notes.txt`).
fn suffix_alias_applies(parsed: &Parsed, before: &State) -> bool {
    before
        .aliases
        .keys()
        .filter(|(kind, _)| *kind == AliasKind::Suffix)
        .any(|(_, suffix)| {
            command_words(parsed).any(|word| {
                word.strip_suffix(suffix.as_str())
                    .is_some_and(|text| text.len() > 1 && text.ends_with('.'))
            })
        })
}

/// With `autocd` on (oh-my-zsh sets it), a command word that names a directory changes to it
/// instead: such a line needs the state (its directory comes back). With `CDPATH` set the name
/// may be found elsewhere, so no line with `autocd` is taken then. A word is looked up from this
/// process's directory, the shell's.
fn autocd_cannot_apply(dialect: Dialect, parsed: &Parsed, before: &State) -> bool {
    if !autocd_on(dialect, before) {
        return true;
    }
    // Set to anything but the empty string (or of a value not known: a dump of names).
    let cdpath = before.vars.get("CDPATH").is_some_and(
        |v| !matches!(&v.value, crate::shell::state::Value::Scalar(text) if text.is_empty()),
    );
    !cdpath && !command_words(parsed).any(|word| std::path::Path::new(word).is_dir())
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

/// The names of the parameters `line` expands as `$NAME` or `${NAME}`, and the line with each
/// such expansion replaced by a plain `x` (for the checks on the rest of its characters); `None`
/// when it uses `$` any other way (`$?`, `$1`, `${x:-y}`, `$(…)`, `$((…))`, a `$` alone) or, in
/// zsh, puts a modifier after an unbraced name (`$HOME:h`, which `POSIX_IDENTIFIERS` turns off).
/// A `$` in single quotes or after a backslash is taken as an expansion too: the variable is then
/// only defined for nothing.
fn expansions(dialect: Dialect, line: &str) -> Option<(Vec<&str>, String)> {
    let mut names = Vec::new();
    let mut rest = String::with_capacity(line.len());
    let mut from = 0;
    while let Some(offset) = line[from..].find('$') {
        let at = from + offset;
        rest.push_str(&line[from..at]);
        let after = &line[at + 1..];
        let (braced, body) = match after.strip_prefix('{') {
            Some(body) => (true, body),
            None => (false, after),
        };
        let name = identifier_prefix(body)?;
        let tail = &body[name.len()..];
        if braced && !tail.starts_with('}') {
            return None;
        }
        if !braced && dialect == Dialect::Zsh && tail.starts_with(':') {
            return None;
        }
        names.push(name);
        rest.push('x');
        from = at + 1 + name.len() + if braced { 2 } else { 0 };
    }
    rest.push_str(&line[from..]);
    Some((names, rest))
}

/// The identifier `text` starts with (`[A-Za-z_][A-Za-z0-9_]*`), or `None`.
fn identifier_prefix(text: &str) -> Option<&str> {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let name = &text[..end];
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        .then_some(name)
}

/// Whether each of `names` expands without the state as it would with it, each variable of the
/// person's shell among them then defined in `plan` by the statement the whole state's input
/// script uses for it. The argument: with the same definition a `$NAME` has the same value on
/// both paths; a value of plain characters only ([`plain_word`]'s, or none) is not split (no
/// `IFS` character in it while `IFS` is whitespace, as checked) nor globbed (no pattern
/// character), so the options and `IFS` the state would restore change nothing about its word
/// (zsh's `GLOB_SUBST` and `SH_WORD_SPLIT`, which would act on the value itself, must be off).
/// A name the person's shell does not have is defined on neither path: its value, if any, is the
/// line's environment's, the same on both (checked plain as well). Not taken: a variable whose
/// value is not known (zsh sent only its name), an array, a name reference, one the input
/// script leaves out (the shell's own: `PWD`, `RANDOM` …).
fn expanded_as_with_the_state(
    dialect: Dialect,
    names: &[&str],
    before: &State,
    plan: &mut Plan,
) -> bool {
    if names.is_empty() {
        return true;
    }
    let plain = |value: &str| value.is_empty() || plain_word(value);
    let ifs_is_whitespace = match before.vars.get("IFS") {
        None => true,
        Some(var) => matches!(&var.value, Value::Scalar(v)
            if v.chars().all(|c| matches!(c, ' ' | '\t' | '\n' | '\0'))),
    };
    let option_on =
        |name: &str| before.options.get(&(OptionKind::Set, name.to_owned())) == Some(&true);
    if !ifs_is_whitespace
        || dialect == Dialect::Zsh && (option_on("globsubst") || option_on("shwordsplit"))
    {
        return false;
    }
    for name in names {
        let Some(var) = before.vars.get(*name) else {
            let environment = crate::env::get().var(name);
            if environment.is_some_and(|v| !v.to_str().is_some_and(plain)) {
                return false;
            }
            continue;
        };
        let Value::Scalar(value) = &var.value else {
            return false;
        };
        let Some(statement) = crate::shell::state::input_variable(dialect, name, var) else {
            return false;
        };
        if var.attrs.nameref || !plain(value) {
            return false;
        }
        if !plan.variables.contains(&statement) {
            plan.variables.push(statement);
            plan.values.push(((*name).to_owned(), value.clone()));
        }
    }
    true
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

/// What the sandboxed shell runs first for a stateless line: the variables it expands, then for
/// a line with aliases alias expansion on (bash turns it off in `-c`) and each alias, on lines of
/// their own before the line is parsed.
pub fn definitions(dialect: Dialect, plan: &Plan) -> String {
    let mut out = String::new();
    for statement in &plan.variables {
        out.push_str(statement);
        out.push('\n');
    }
    if plan.aliases.is_empty() {
        return out;
    }
    if dialect == Dialect::Bash {
        out.push_str("builtin shopt -s expand_aliases\n");
    }
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

    fn pipeline(dialect: Dialect, line: &str, before: &State) -> Option<Vec<Vec<String>>> {
        let shell = match dialect {
            Dialect::Bash => ShellKind::Bash,
            Dialect::Zsh => ShellKind::Zsh,
        };
        let parsed = parse(line, shell);
        let plan = plan(dialect, line, &parsed, before)?;
        direct_pipeline(line, &parsed, &plan)
    }

    /// The words of a line that is one command started directly.
    fn direct(dialect: Dialect, line: &str, before: &State) -> Option<Vec<String>> {
        match pipeline(dialect, line, before) {
            Some(mut programs) if programs.len() == 1 => programs.pop(),
            Some(programs) => panic!("{line}: a pipeline of {}", programs.len()),
            None => None,
        }
    }

    #[test]
    fn a_pipeline_of_plain_commands_starts_its_programs() {
        let empty = State::default();
        let words = |programs: &[&[&str]]| -> Option<Vec<Vec<String>>> {
            Some(
                programs
                    .iter()
                    .map(|p| p.iter().map(|w| (*w).to_owned()).collect())
                    .collect(),
            )
        };
        for dialect in [Dialect::Bash, Dialect::Zsh] {
            assert_eq!(
                pipeline(dialect, "ls -a | wc -l", &empty),
                words(&[&["ls", "-a"], &["wc", "-l"]])
            );
            assert_eq!(
                pipeline(dialect, "git log|grep fix|head -3", &empty),
                words(&[&["git", "log"], &["grep", "fix"], &["head", "-3"]])
            );
            let eight = ["cat"; 8].join(" | ");
            assert_eq!(pipeline(dialect, &eight, &empty).map(|p| p.len()), Some(8));
            for line in [
                // Nine programs, more than one launch starts.
                ["cat"; 9].join(" | "),
                // Other operators, and what is no pipeline of programs.
                "ls || wc".to_owned(),
                "ls |& wc".to_owned(),
                "ls | wc > out".to_owned(),
                "ls | true".to_owned(),
                "ls | nice wc".to_owned(),
                "ls | FOO=1 wc".to_owned(),
                "ls | 'wc'".to_owned(),
                "ls &".to_owned(),
            ] {
                assert_eq!(
                    pipeline(dialect, &line, &empty),
                    None,
                    "{dialect:?}: {line}"
                );
            }
        }
        // Each command's alias is expanded, as the shell expands it.
        let aliased = state_with(|s| {
            s.aliases
                .insert((AliasKind::Regular, "g".into()), "grep --color=auto".into());
        });
        assert_eq!(
            pipeline(Dialect::Zsh, "ls | g x", &aliased),
            words(&[&["ls"], &["grep", "--color=auto", "x"]])
        );
    }

    #[test]
    fn one_command_of_plain_words_starts_its_program() {
        let empty = State::default();
        for dialect in [Dialect::Bash, Dialect::Zsh] {
            assert_eq!(
                direct(dialect, "ls -a", &empty),
                Some(vec!["ls".to_owned(), "-a".to_owned()])
            );
            assert_eq!(
                direct(dialect, "  cargo\ttest --release -p=core  ", &empty),
                Some(vec![
                    "cargo".to_owned(),
                    "test".to_owned(),
                    "--release".to_owned(),
                    "-p=core".to_owned()
                ])
            );
            assert_eq!(
                direct(dialect, "./tools/run.sh a,b x@y 50%", &empty).map(|w| w.len()),
                Some(4)
            );
            for line in [
                // Quoting, operators and redirections are the shell's.
                "ls 'a b'", "ls \\a", "ls a\"b", "ls; ls", "ls > out", "ls 2>&1",
                // A wrapper, a builtin (also a pure one), an assignment, a job.
                "nice ls", "env ls", "true", "pwd", "kill 1", "FOO=1 ls", "%1",
            ] {
                assert_eq!(direct(dialect, line, &empty), None, "{dialect:?}: {line}");
            }
        }
        // The person's plain aliases are expanded as the shell expands them: an alias to
        // itself once, one leading to another; one to something not plain is the shell's.
        let aliased = state_with(|s| {
            for (name, value) in [("ls", "ls --color=auto"), ("ll", "ls -l"), ("t", "true")] {
                s.aliases
                    .insert((AliasKind::Regular, name.into()), value.into());
            }
        });
        assert_eq!(
            direct(Dialect::Bash, "ll -a", &aliased),
            Some(
                ["ls", "--color=auto", "-l", "-a"]
                    .map(str::to_owned)
                    .to_vec()
            )
        );
        assert_eq!(direct(Dialect::Zsh, "t", &aliased), None);
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
            // Expansions and patterns (`$NAME` aside: see plain_variables_expand_without_the_state).
            "echo ${HOME:-x}",
            "echo \"$?\"",
            "ls `pwd`",
            "ls ~/src",
            "ls *.rs",
            "ls src/?.rs",
            "echo {a,b}",
            "ls !$",
            "ls @(a|b)",
            // Builtins that read or set state, keywords, assignments, functions.
            "cd src",
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
        let definitions = definitions(
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
        // Only where one of its words is the alias (oh-my-zsh defines `...` for every shell).
        assert!(free(Dialect::Zsh, "ls x", &global));
        assert!(free(Dialect::Zsh, "ls 'G' xG", &global));
        let suffix = state_with(|s| {
            s.aliases
                .insert((AliasKind::Suffix, "txt".into()), "vim".into());
        });
        assert!(!free(Dialect::Zsh, "notes.txt", &suffix));
        assert!(!free(Dialect::Zsh, "ls; ./notes.txt", &suffix));
        assert!(free(Dialect::Zsh, "cat notes.txt", &suffix));
        // autocd (oh-my-zsh sets it) changes to a command word that names a directory (`src`
        // here, the crate's, this test's directory); any word when CDPATH may find one.
        for (dialect, kind) in [
            (Dialect::Bash, OptionKind::Shopt),
            (Dialect::Zsh, OptionKind::Set),
        ] {
            let autocd = state_with(|s| {
                s.options.insert((kind, "autocd".into()), true);
            });
            assert!(free(dialect, "ls -a src", &autocd));
            assert!(!free(dialect, "src", &autocd));
            assert!(!free(dialect, "ls | ./src", &autocd));
            let cdpath = state_with(|s| {
                s.options.insert((kind, "autocd".into()), true);
                let var = crate::shell::state::Var {
                    attrs: Default::default(),
                    value: crate::shell::state::Value::Scalar("/tmp".into()),
                };
                s.vars.insert("CDPATH".into(), var);
            });
            assert!(!free(dialect, "ls -a", &cdpath));
        }
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

    /// A variable of the person's shell as its dump gives it: `raw` its attribute letters.
    fn var(value: Value, raw: &str) -> crate::shell::state::Var {
        crate::shell::state::Var {
            attrs: crate::shell::state::Attrs {
                exported: raw.contains('x'),
                nameref: raw.contains('n'),
                raw: raw.to_owned(),
                ..Default::default()
            },
            value,
        }
    }

    fn planned_variables(dialect: Dialect, line: &str, before: &State) -> Option<Vec<String>> {
        let shell = match dialect {
            Dialect::Bash => ShellKind::Bash,
            Dialect::Zsh => ShellKind::Zsh,
        };
        plan(dialect, line, &parse(line, shell), before).map(|p| p.variables)
    }

    #[test]
    fn plain_variables_expand_without_the_state() {
        let before = state_with(|s| {
            s.vars
                .insert("HOME".into(), var(Value::Scalar("/home/u".into()), "x"));
            s.vars
                .insert("dir".into(), var(Value::Scalar("src/app".into()), "-"));
            s.vars
                .insert("EMPTY".into(), var(Value::Scalar(String::new()), "-"));
            s.vars
                .insert("spaced".into(), var(Value::Scalar("a b".into()), "-"));
            s.vars
                .insert("star".into(), var(Value::Scalar("*.rs".into()), "-"));
            s.vars
                .insert("ref".into(), var(Value::Scalar("dir".into()), "n"));
            s.vars.insert(
                "list".into(),
                var(Value::Indexed(vec![(0, "a".into())]), "a"),
            );
            s.vars
                .insert("PWD".into(), var(Value::Scalar("/w".into()), "x"));
            s.vars.insert("unknown".into(), var(Value::Unset, "scalar"));
        });
        // Each variable defined as the whole state's input defines it, once.
        assert_eq!(
            planned_variables(Dialect::Bash, "ls $dir \"${HOME}/x\" $dir", &before),
            Some(vec![
                "builtin declare -- dir='src/app'".to_owned(),
                "builtin declare -x HOME='/home/u'".to_owned(),
            ])
        );
        assert!(
            planned_variables(Dialect::Zsh, "echo $dir", &before)
                .is_some_and(|v| v.len() == 1 && v[0].ends_with(" dir='src/app'")),
        );
        assert_eq!(
            planned_variables(Dialect::Bash, "echo $EMPTY", &before),
            Some(vec!["builtin declare -- EMPTY=''".to_owned()])
        );
        // A name the shell does not have is defined on neither path.
        assert_eq!(
            planned_variables(Dialect::Bash, "echo $NOT_SET_IN_THIS_SHELL", &before),
            Some(vec![])
        );
        for line in [
            "echo $spaced",
            "echo \"$spaced\"",
            "ls $star",
            "echo $ref",
            "echo $list",
            "echo $PWD",
            "echo $unknown",
            "echo $?",
            "echo $1",
            "echo ${dir:-x}",
            "echo ${#dir}",
            "echo ${dir",
            "echo $(pwd)",
            "echo $((1+1))",
            "echo $",
            "echo {a,b}",
        ] {
            for dialect in [Dialect::Bash, Dialect::Zsh] {
                assert_eq!(planned_variables(dialect, line, &before), None, "{line}");
            }
        }
        // zsh applies a modifier after an unbraced name (unless POSIX_IDENTIFIERS).
        assert!(planned_variables(Dialect::Bash, "echo $dir:x", &before).is_some());
        assert_eq!(
            planned_variables(Dialect::Zsh, "echo $dir:h", &before),
            None
        );
        assert!(planned_variables(Dialect::Zsh, "echo ${dir}:h", &before).is_some());
        // A non-whitespace IFS splits a plain value; zsh's GLOB_SUBST and SH_WORD_SPLIT act on it.
        let ifs = state_with(|s| {
            s.vars
                .insert("dir".into(), var(Value::Scalar("src/app".into()), "-"));
            s.vars
                .insert("IFS".into(), var(Value::Scalar("/".into()), "-"));
        });
        assert_eq!(planned_variables(Dialect::Bash, "echo $dir", &ifs), None);
        assert!(planned_variables(Dialect::Bash, "echo dir", &ifs).is_some());
        for option in ["globsubst", "shwordsplit"] {
            let on = state_with(|s| {
                s.vars
                    .insert("dir".into(), var(Value::Scalar("src/app".into()), "-"));
                s.options.insert((OptionKind::Set, option.into()), true);
            });
            assert_eq!(planned_variables(Dialect::Zsh, "echo $dir", &on), None);
            assert!(planned_variables(Dialect::Bash, "echo $dir", &on).is_some());
        }
        // Started directly, the words expanded here as the shell would: a word of expansions
        // alone that is empty is no word; a name the shell does not have, or a program named by
        // a parameter, leaves it to the shell.
        for dialect in [Dialect::Bash, Dialect::Zsh] {
            assert_eq!(
                direct(dialect, "ls $dir ${HOME}/x $EMPTY -a", &before),
                Some(vec![
                    "ls".to_owned(),
                    "src/app".to_owned(),
                    "/home/u/x".to_owned(),
                    "-a".to_owned()
                ])
            );
            assert_eq!(direct(dialect, "ls $NOT_SET_IN_THIS_SHELL", &before), None);
            assert!(free(dialect, "ls $NOT_SET_IN_THIS_SHELL", &before));
            assert_eq!(direct(dialect, "$dir -a", &before), None);
        }
        // echo is pure while xpg_echo (zsh: BSD_ECHO) is at its default.
        let xpg = state_with(|s| {
            s.options
                .insert((OptionKind::Shopt, "xpg_echo".into()), true);
        });
        assert!(free(Dialect::Bash, "echo hi", &State::default()));
        assert!(!free(Dialect::Bash, "echo hi", &xpg));
    }

    #[test]
    fn a_directory_typed_with_autocd_is_a_cd() {
        // (This test runs in the crate's directory, where `src` and `tests` are directories.)
        for (dialect, kind) in [
            (Dialect::Bash, OptionKind::Shopt),
            (Dialect::Zsh, OptionKind::Set),
        ] {
            let off = State::default();
            assert_eq!(autocd_directory(dialect, "src", &off), None);
            let on = state_with(|s| {
                s.options.insert((kind, "autocd".into()), true);
            });
            assert_eq!(autocd_directory(dialect, " src ", &on), Some("src".into()));
            assert_eq!(
                autocd_directory(dialect, "./tests", &on),
                Some("./tests".into())
            );
            assert_eq!(autocd_directory(dialect, "..", &on), Some("..".into()));
            for line in ["src x", "'src'", "src;", "no-such-dir", "Cargo.toml", ""] {
                assert_eq!(autocd_directory(dialect, line, &on), None, "{line}");
            }
            let function = state_with(|s| {
                s.options.insert((kind, "autocd".into()), true);
                s.functions.insert("src".into(), String::new());
            });
            assert_eq!(autocd_directory(dialect, "src", &function), None);
        }
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
