//! Parsing: from a validated line to every command that would run.
//!
//! bash, zsh and sh lines are parsed with tree-sitter-bash (the grammar Codex uses for its own
//! command-safety checks); PowerShell lines with tree-sitter-powershell. No regular expression ever
//! decides where a command starts. From the tree we extract every simple command that would run —
//! in pipelines, lists, subshells, groups, loops, `$(…)`, backticks, process substitutions,
//! functions defined on the line, here-documents fed to a shell — and unwrap the wrappers that hide
//! the real program (`sudo`, `env`, `bash -c`, `eval '…'`, `xargs`, `find -exec` …).
//!
//! What cannot be known from the text is reported, not guessed: a line is **opaque** when its effect
//! depends on run-time values or on code the parser cannot see (a variable in command position,
//! `eval "$x"`, `curl … | sh`, `python -c …`), and **touches hook state** when it could change the
//! interactive shell's own hooks. Neither kind of line is ever allowed by rules alone.

mod bash;
pub mod braces;
pub mod harness;
pub mod heredoc;
pub mod hooks;
mod pwsh;
pub mod shell_args;
pub mod shell_vars;
pub use pwsh::is_valid_powershell;
mod unwrap;
pub use unwrap::SSH_REMOTE_COMMAND;
pub mod words;
mod wrappers;

use serde::{Deserialize, Serialize};

/// The shell whose syntax a line is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum ShellKind {
    Bash,
    Zsh,
    Sh,
    Pwsh,
}

impl ShellKind {
    /// Every shell, each named once ([`ShellKind::as_str`] is its name everywhere: the command
    /// line, the broker's requests, `doctor`, the log).
    pub const ALL: [ShellKind; 4] = [
        ShellKind::Bash,
        ShellKind::Zsh,
        ShellKind::Sh,
        ShellKind::Pwsh,
    ];

    /// The shell named `name` (as [`ShellKind::as_str`] names it).
    pub fn from_name(name: &str) -> Option<ShellKind> {
        ShellKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// The shells a person's hook exists for (`shellgate init SHELL`); `sh` runs agents' lines only.
    pub fn has_hook(self) -> bool {
        self != ShellKind::Sh
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ShellKind::Bash => "bash",
            ShellKind::Zsh => "zsh",
            ShellKind::Sh => "sh",
            ShellKind::Pwsh => "pwsh",
        }
    }
}

/// One command that would run, after unwrapping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Command {
    /// The program name: quotes removed, directory stripped (`/usr/bin/rm` → `rm`).
    pub program: String,
    /// The arguments after quote removal; run-time expansions are kept as written (`$HOME`).
    pub argv: Vec<String>,
    /// The program as written when it was a path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The wrappers that were unwrapped to reach this command, outermost first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<String>,
    /// Files this command's redirections write to.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<String>,
    /// Files this command's redirections read from (`< FILE`, `<> FILE`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<String>,
    /// Some arguments are only known at run time (expansions, `xargs` input).
    #[serde(skip)]
    pub args_dynamic: bool,
    /// Some arguments are unquoted patterns (`*`, `{a,b}`).
    #[serde(skip)]
    pub args_glob: bool,
    /// Every argument is literal text and plain parameters' expansions at most (`src`, `$HOME`,
    /// `"${d}/x"`; see [`words::Word::is_plain_parameters`]): reading them runs nothing.
    #[serde(skip)]
    pub args_plain: bool,
    /// The program's name is also a function defined on the line. The call is judged as the
    /// program too: the definition may not have run (`false && rm() { :; }; rm -rf src`).
    #[serde(skip)]
    pub calls_line_function: bool,
    /// What the text of each argument does not tell about its value at run time (one per `argv`
    /// entry, in order).
    #[serde(skip)]
    pub shapes: Vec<ArgShape>,
    /// A wrapper appends arguments only known at run time (`xargs CMD`).
    #[serde(skip)]
    pub extra_args: bool,
}

/// What the text of one argument does not tell about its run-time value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArgShape {
    /// It may become several words, or none (an unquoted expansion or pattern).
    pub multi: bool,
    /// It holds an unquoted expansion, whose value is split into words: the words after the first
    /// can be anything (`sort -k$x` may become `sort -k1 -o out`). A pattern alone (`src/*.rs`)
    /// becomes words that all start as its text does.
    pub splits: bool,
    /// Its value may start with a character its text does not show, such as the `-` of an
    /// option (`$d`, `"$d"`, `${p:---pre=sh}`, `*`).
    pub start_unknown: bool,
}

impl Command {
    /// `program argv…` joined by single spaces, the text `field = "argv"` rules match against.
    pub fn argv_text(&self) -> String {
        let mut out = self.program.clone();
        for a in &self.argv {
            out.push(' ');
            out.push_str(a);
        }
        out
    }

    /// The command as one shell line: words with spaces, quotes or other shell characters are
    /// single-quoted, so word boundaries survive (what the reviewer is shown, redacted).
    pub fn quoted_text(&self) -> String {
        let mut out = quote_word(&self.program);
        for a in &self.argv {
            out.push(' ');
            out.push_str(&quote_word(a));
        }
        out
    }
}

/// A word as the shell would read it back: unchanged when it holds only plain characters, else
/// single-quoted (`'` written as `'\''`).
pub fn quote_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./:=@%+,~^".contains(c));
    if plain {
        word.to_owned()
    } else {
        posix_quote(word)
    }
}

/// `it's` → `'it'\''s'`: one POSIX single-quoted word.
pub fn posix_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// A function defined on the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionDef {
    pub name: String,
    /// The body calls the function itself.
    pub recursive: bool,
    /// The body backgrounds or pipes a command (with `recursive`: a fork bomb).
    pub forks: bool,
}

/// Everything the policy needs to know about a line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub commands: Vec<Command>,
    /// Why the effect of the line cannot be known from its text (empty: it can).
    pub opaque: Vec<String>,
    /// Why the line could change the interactive shell's hooks (empty: it cannot).
    pub hook_state: Vec<String>,
    /// Every file a redirection on the line writes to.
    pub writes: Vec<String>,
    /// Every file a redirection on the line reads from (`< FILE`, `<> FILE`).
    pub reads: Vec<String>,
    pub functions: Vec<FunctionDef>,
    /// Variables the line assigns or exports (on their own, before a command, through `env`,
    /// `export`, `declare` …), without subscripts: the programs it runs may read them.
    pub assigned: Vec<String>,
    /// The values the line assigns to variables (`k=~/.ssh/id_rsa; cat "$k"`): paths in them are
    /// looked at like arguments.
    pub values: Vec<String>,
    /// The parameters the line expands plainly (`$NAME`, `${NAME}`), by name, each once: what a
    /// line that runs in the shell reads there.
    pub parameters: Vec<String>,
    /// Variables the line assigns a literal value, by name (`X=1`, `export EDITOR=vim`): what
    /// the person reads on the line they typed. (Where the line assigns one several times, each.)
    pub literal_assignments: Vec<(String, String)>,
    /// Some assignment on the line is neither of a literal value nor of plain parameters to a
    /// plain name (`a[1]=x`, `X=$(cmd)`, `X=${y:-z}`): see [`Parsed::only_plain_assignments`].
    pub other_assignment: bool,
    /// The line's syntax is nothing but assignments, in lists (`A=1; B=2 && C=3`, `A=1 B=2`): no
    /// command, test, loop, group, subshell or redirection.
    pub assignments_only: bool,
    /// A recognised agent harness whose inner line is what was parsed (e.g. `claude-code`).
    pub harness: Option<&'static str>,
    /// The file that harness writes itself (not in `writes`: not the inner line's).
    pub harness_write: Option<harness::HarnessWrite>,
}

impl Parsed {
    pub fn is_opaque(&self) -> bool {
        !self.opaque.is_empty()
    }

    /// The line is nothing but assignments to plain names of literal values and plain
    /// parameters' expansions (`X=1`, `A=b C='d e'`, `D=$HOME/x`): its syntax assignments alone
    /// ([`Parsed::assignments_only`]), no other expansion in any value (reading a parameter runs
    /// nothing; a substitution runs code, `${x:=y}` assigns).
    pub fn only_plain_assignments(&self) -> bool {
        self.assignments_only
            && self.commands.is_empty()
            && !self.assigned.is_empty()
            && !self.other_assignment
            && self.harness.is_none()
    }

    fn add_opaque(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        if !self.opaque.contains(&reason) {
            self.opaque.push(reason);
        }
    }

    fn add_value(&mut self, value: &str) {
        if !value.is_empty() && self.values.len() < 256 && !self.values.iter().any(|v| v == value) {
            self.values.push(value.to_owned());
        }
    }

    fn add_parameter(&mut self, name: &str) {
        if !self.parameters.iter().any(|p| p == name) {
            self.parameters.push(name.to_owned());
        }
    }

    fn add_assigned(&mut self, name: &str) {
        if !self.assigned.iter().any(|a| a == name) {
            self.assigned.push(name.to_owned());
        }
    }

    fn add_literal_assignment(&mut self, name: &str, value: &words::Word) {
        let plain = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        if plain && value.is_literal() && !value.hidden_code && self.literal_assignments.len() < 256
        {
            self.literal_assignments
                .push((name.to_owned(), value.text.clone()));
        } else if !(plain && value.is_plain_parameters()) {
            self.other_assignment = true;
        }
    }

    fn add_hook_state(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        if !self.hook_state.contains(&reason) {
            self.hook_state.push(reason);
        }
    }
}

/// One tree-sitter parser per thread and grammar: creating a parser costs more than parsing a
/// short line.
type ParserSlot = std::cell::RefCell<Option<tree_sitter::Parser>>;

/// Parse `src` with the parser in `slot`, creating it for `language` on first use. `None` only if
/// the grammar cannot be loaded or parsing is cancelled, both of which callers treat as opaque.
fn parse_with(
    slot: &'static std::thread::LocalKey<ParserSlot>,
    language: tree_sitter::Language,
    src: &str,
) -> Option<tree_sitter::Tree> {
    slot.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&language).ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(src, None)
    })
}

/// How deeply `bash -c '…'`, `eval '…'` and friends are unwrapped before the line is opaque.
pub const MAX_SCRIPT_DEPTH: usize = 8;

/// Parse a line written in `shell`'s syntax.
pub fn parse(line: &str, shell: ShellKind) -> Parsed {
    let mut parsed = Parsed::default();
    match shell {
        ShellKind::Pwsh => pwsh::parse_into(line, &mut parsed),
        ShellKind::Bash | ShellKind::Zsh | ShellKind::Sh => {
            if let Some(found) = harness::unwrap_agent_harness(line) {
                parsed.harness = Some(found.name);
                parsed.harness_write = Some(found.write);
                bash::parse_script(&found.inner, 0, &[], &mut parsed);
            } else {
                bash::parse_script(line, 0, &[], &mut parsed);
            }
        }
    }
    parsed
}

#[cfg(test)]
mod tests;
