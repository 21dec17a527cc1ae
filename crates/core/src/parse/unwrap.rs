//! Unwrapping: from a simple command as written to the command that really runs.
//!
//! `sudo env FOO=1 nice -n 5 /usr/bin/rm -rf x` runs `rm`; `bash -lc 'rm x'` and `eval 'rm x'` run
//! the script inside them; `find . -exec rm {} ;` and `xargs rm` run `rm`. Every wrapper is stripped
//! here, by reading its options the way the wrapper itself does, and recorded in `via`. Where the
//! program or script is only known at run time the line becomes opaque instead.

use super::bash::{Input, RawCommand, Walker};
use super::braces;
use super::hooks;
use super::shell_args::{ShellFamily, posix_shell_options};
use super::shell_vars;
use super::words::Word;
use super::wrappers::{self, WrapperOptions, skip_options, unknown_option};
use super::{ArgShape, Command};
use regex::Regex;
use std::ops::Range;
use std::sync::LazyLock;

/// Wrappers stripped in a row before the line is declared opaque.
const MAX_WRAPPERS: usize = 16;

/// Shells whose `-c` script is parsed with the bash grammar.
const POSIX_SHELLS: [&str; 9] = [
    "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh",
];

/// What one wrapper does to the words after it.
pub(super) enum Step {
    /// Not a wrapper: this is the command.
    Final,
    /// The real command starts at `args[skip]`, with these variables set for it.
    Strip {
        skip: usize,
        label: String,
        assignments: Vec<(String, Word)>,
        extra_args: bool,
    },
    /// The wrapper runs this text as a shell script; `opaque` says why the line stays opaque even
    /// though the script is parsed (a here-document fed to a shell).
    Script {
        script: Word,
        label: String,
        opaque: Option<String>,
        /// The arguments the script was taken from (empty when it comes from standard input):
        /// their text is parsed, so code in them is seen rather than hidden.
        args_used: Range<usize>,
    },
    /// The wrapper splits this text into words that take the place of `args[before..rest]`
    /// among its own arguments (`env -S`), which are then read again.
    Split {
        text: Word,
        before: usize,
        rest: usize,
        label: String,
    },
    /// The wrapper runs the commands at these ranges of its arguments, and is itself a command
    /// (`find -exec`).
    Spawns(Vec<Range<usize>>),
    /// The effect cannot be known from the text; the command itself is still reported.
    Opaque(String),
}

impl Walker<'_> {
    /// Unwrap a simple command and record what it runs.
    pub(super) fn resolve(&mut self, mut raw: RawCommand) {
        self.check_prefix_assignments(&raw.assignments);
        let Some(name) = raw.name.take() else {
            return;
        };
        let args = std::mem::take(&mut raw.args);
        let mut words = if name.braces.is_empty() && args.iter().all(|a| a.braces.is_empty()) {
            let mut words = Vec::with_capacity(args.len() + 1);
            words.push(name);
            words.extend(args);
            words.into_iter()
        } else {
            match brace_expanded(name.clone(), args.clone()) {
                Some(words) => words.into_iter(),
                None => {
                    self.out.add_opaque(format!(
                        "brace expansion makes more than {} words of one command",
                        braces::MAX_BRACE_WORDS
                    ));
                    std::iter::once(name)
                        .chain(args)
                        .collect::<Vec<_>>()
                        .into_iter()
                }
            }
        };
        // Everything may expand to nothing (`{,}`): then no command runs.
        let Some(mut name) = words.next() else {
            return;
        };
        let mut args: Vec<Word> = words.collect();
        let mut via = self.via.clone();
        let mut extra_args = false;
        for _ in 0..MAX_WRAPPERS {
            self.check_hidden_code(&name);
            if !name.is_literal() {
                self.out.add_opaque(format!(
                    "the command name `{}` is only known at run time",
                    name.text
                ));
                return;
            }
            let (program, path) = split_program(&name.text);
            // Only the command's first word can call a function: `env rm`, `sudo rm`, `command
            // rm` run the program. The call is judged as the program as well (the definition may
            // not have run); the function's body was judged where it is defined.
            let calls_function = path.is_none()
                && via.len() == self.via.len()
                && self.line_functions.contains(&program);
            let step = classify(&program, &args, &raw.stdin);
            match step {
                Step::Final => {
                    self.check_hidden_code_in(&args);
                    // Before a POSIX special builtin (`PS0=x :`), assignments stay in the shell
                    // in dash and in bash's POSIX mode.
                    if is_special_builtin(&program) && via.len() == self.via.len() {
                        for (name, _) in &raw.assignments {
                            self.check_shell_variable(name);
                        }
                    }
                    // `read x <<<'a[$(…)]'; echo $((x))`: the text becomes a variable's value.
                    if matches!(program.as_str(), "read" | "mapfile" | "readarray")
                        && matches!(&raw.stdin, Input::Here(text) if text.hidden_code)
                    {
                        self.out.add_opaque(super::bash::HIDDEN_CODE);
                    }
                    self.check_builtin(&program, &args);
                    if via.iter().any(|v| v == "exec") {
                        self.out
                            .add_hook_state("`exec` replaces the shell with another program");
                    }
                    let mut command = make_command(program, path, &args, &via, &raw);
                    command.args_dynamic |= extra_args;
                    command.args_plain &= !extra_args;
                    command.extra_args = extra_args;
                    command.calls_line_function = calls_function;
                    self.out.commands.push(command);
                    return;
                }
                Step::Strip {
                    skip,
                    label,
                    assignments,
                    extra_args: more,
                } => {
                    self.check_prefix_assignments(&assignments);
                    if skip >= args.len() {
                        if program == "exec" {
                            self.out.add_hook_state(
                                "`exec` without a command changes the shell's own file descriptors",
                            );
                        }
                        self.check_hidden_code_in(&args);
                        let command = make_command(program, path, &args, &via, &raw);
                        self.out.commands.push(command);
                        return;
                    }
                    self.check_hidden_code_in(&args[..skip]);
                    // The wrapper's own words (`xargs -a FILE`, `sudo -D DIR`) name paths too.
                    for word in &args[..skip] {
                        self.out.add_value(&word.text);
                    }
                    name = args[skip].clone();
                    args = args.split_off(skip + 1);
                    via.push(label);
                    extra_args |= more;
                }
                Step::Script {
                    script,
                    label,
                    opaque,
                    args_used,
                } => {
                    for (i, word) in args.iter().enumerate() {
                        if !args_used.contains(&i) {
                            self.check_hidden_code(word);
                            self.out.add_value(&word.text);
                        }
                    }
                    if let Some(reason) = opaque {
                        self.out.add_opaque(reason);
                    }
                    via.push(label.clone());
                    if script.dynamic {
                        self.out.add_opaque(format!(
                            "`{label}` runs a script that is only known at run time"
                        ));
                    } else {
                        self.nested_script(&script.text, via);
                    }
                    return;
                }
                Step::Split {
                    text,
                    before,
                    rest,
                    label,
                } => {
                    if !text.is_literal() {
                        self.out.add_opaque(format!(
                            "`{label}` splits a string only known at run time into a command"
                        ));
                        return;
                    }
                    self.check_hidden_code(&text);
                    let tail = args.split_off(rest.min(args.len()));
                    args.truncate(before);
                    args.extend(text.text.split_whitespace().map(Word::quoted));
                    args.extend(tail);
                    via.push(label);
                }
                Step::Spawns(ranges) => {
                    for (i, word) in args.iter().enumerate() {
                        if !ranges.iter().any(|r| r.contains(&i)) {
                            self.check_hidden_code(word);
                        }
                    }
                    let command = make_command(program.clone(), path, &args, &via, &raw);
                    self.out.commands.push(command);
                    for range in ranges {
                        let mut words = args[range].iter().cloned();
                        let Some(child_name) = words.next() else {
                            continue;
                        };
                        let mut child_via = self.via.clone();
                        child_via.push(format!("{program} -exec"));
                        let saved = std::mem::replace(&mut self.via, child_via);
                        let child_raw = RawCommand {
                            name: Some(child_name),
                            args: words.collect(),
                            stdin: Input::Inherited,
                            ..RawCommand::default()
                        };
                        self.resolve(child_raw);
                        self.via = saved;
                    }
                    return;
                }
                Step::Opaque(reason) => {
                    self.out.add_opaque(reason);
                    self.check_builtin(&program, &args);
                    let command = make_command(program, path, &args, &via, &raw);
                    self.out.commands.push(command);
                    return;
                }
            }
        }
        self.out
            .add_opaque(format!("more than {MAX_WRAPPERS} wrappers in a row"));
    }

    fn check_prefix_assignments(&mut self, assignments: &[(String, Word)]) {
        for (name, value) in assignments {
            self.out.add_assigned(hooks::base_name(name));
            self.out.add_value(&value.text);
            self.check_hidden_code(value);
            if shell_vars::roles(name).loads {
                self.out.add_opaque(format!(
                    "`{name}=…` makes the command load code that the line does not show"
                ));
            }
        }
    }

    fn check_hidden_code_in(&mut self, words: &[Word]) {
        for word in words {
            self.check_hidden_code(word);
        }
    }

    /// Record hook-state changes made by a builtin.
    fn check_builtin(&mut self, program: &str, args: &[Word]) {
        if matches!(program, "mapfile" | "readarray")
            && args.iter().any(|a| {
                a.text.starts_with("-C") || (a.text.starts_with('-') && a.text.contains('C'))
            })
        {
            self.out.add_opaque(format!(
                "`{program} -C` evaluates a callback the line does not show"
            ));
        }
        self.check_declaration_command(program, args);
        let changes_hooks = hooks::builtin_changes_hooks(program, args)
            || match program {
                "printf" => printf_target(args).is_some_and(names_hook_variable),
                "read" | "mapfile" | "readarray" => read_targets(program, args)
                    .iter()
                    .any(|a| !a.is_literal() || hooks::is_hook_variable(&a.text)),
                "getopts" => args
                    .get(1)
                    .is_some_and(|a| !a.is_literal() || hooks::is_hook_variable(&a.text)),
                // Code run in the shell itself, unseen: a sourced file or a dynamic `eval`
                // (`eval "$(pyenv init -)"`, `source venv/bin/activate`) can set anything, hooks
                // included.
                "source" | "." | "eval" => !args.is_empty(),
                "let" => args.iter().any(|a| {
                    !a.is_literal() || a.text.split_once('=').is_some_and(|(n, _)| assigns_hook(n))
                }),
                _ => false,
            };
        if changes_hooks {
            self.out.add_hook_state(format!(
                "`{program}` changes the shell's own behaviour or hooks"
            ));
        }
        if program == "fc" && !args.iter().any(|a| a.text.starts_with("-l")) {
            self.out.add_opaque(
                "`fc` runs commands from the shell's history, which the line does not show",
            );
        }
    }

    /// `export`, `declare` … reached as a plain command (`builtin export PS0=x`, `\export …`,
    /// `command unset PS0`, `jobs -x export …`): the same checks as for the declaration syntax.
    fn check_declaration_command(&mut self, program: &str, args: &[Word]) {
        let declares = matches!(
            program,
            "export" | "declare" | "typeset" | "readonly" | "local" | "unset"
        );
        if !declares {
            return;
        }
        let options: Vec<&str> = args
            .iter()
            .map(|a| a.text.as_str())
            .filter(|t| t.starts_with(['-', '+']))
            .collect();
        let lists = program != "unset" && hooks::declaration_lists(&options);
        // `-n` is a nameref for declare/typeset/local (for export it removes the export).
        let nameref = matches!(program, "declare" | "typeset" | "local")
            && options
                .iter()
                .any(|o| o.starts_with('-') && o.contains('n'));
        if nameref {
            self.out.add_hook_state(format!(
                "`{program} -n` makes a name refer to another variable, which could be a hook's"
            ));
        }
        for arg in args.iter().filter(|a| !a.text.starts_with(['-', '+'])) {
            if !arg.is_literal() {
                self.out.add_hook_state(format!(
                    "`{program}` of a name only known at run time (`{}`), which could be a hook's",
                    arg.text
                ));
                continue;
            }
            match arg.text.split_once('=') {
                Some((name, value))
                    if hooks::is_prompt_string(name) && hooks::inert_prompt(value) =>
                {
                    // A literal prompt that runs nothing (`export PS1='\u@\h\$ '`): looks only.
                    self.out.add_assigned(hooks::base_name(name));
                    self.out.add_value(value);
                }
                Some((name, value)) => {
                    self.check_assigned_variable(name);
                    self.out.add_value(value);
                }
                None if lists => {}
                None => {
                    self.check_shell_variable(&arg.text);
                    if program == "unset" {
                        self.check_function_name(&arg.text);
                    }
                }
            }
        }
    }

    /// A variable assigned on its own or by `export`/`declare`/`local`/`readonly`: the commands
    /// after it on the line (and, exported, every program they start) see the new value.
    pub(super) fn check_assigned_variable(&mut self, name: &str) {
        let name = hooks::base_name(name);
        self.out.add_assigned(name);
        self.check_shell_variable(name);
        if shell_vars::roles(name).loads {
            self.out.add_opaque(format!(
                "`{name}=…` makes the commands after it load code that the line does not show"
            ));
        }
    }

    /// A variable assigned `value`: a prompt string given a literal value that runs nothing
    /// ([`hooks::inert_prompt`]) changes only how the prompt looks, which is no hook state; any
    /// other assignment is judged by its name ([`Self::check_assigned_variable`]).
    pub(super) fn check_assigned_value(&mut self, name: &str, value: &super::words::Word) {
        if hooks::is_prompt_string(name) && value.is_literal() && hooks::inert_prompt(&value.text) {
            self.out.add_assigned(hooks::base_name(name));
            return;
        }
        self.check_assigned_variable(name);
    }

    pub(super) fn check_shell_variable(&mut self, name: &str) {
        if hooks::is_hook_variable(name) {
            self.out.add_hook_state(format!(
                "the line changes the shell variable `{}`",
                hooks::base_name(name)
            ));
        }
    }

    pub(super) fn check_function_name(&mut self, name: &str) {
        if hooks::is_hook_function(name) {
            self.out
                .add_hook_state(format!("the line defines or removes the function `{name}`"));
        }
    }
}

/// POSIX special builtins: assignments before them persist (dash, bash `--posix`).
fn is_special_builtin(program: &str) -> bool {
    matches!(
        program,
        ":" | "."
            | "break"
            | "continue"
            | "eval"
            | "exec"
            | "exit"
            | "export"
            | "readonly"
            | "return"
            | "set"
            | "shift"
            | "times"
            | "trap"
            | "unset"
    )
}

/// The variables `read`/`mapfile` assign: their operands, and the array of `-a NAME`/`-aNAME`.
/// Options with a value (`-d DELIM`, `-p PROMPT`, `-u FD` …) take the next word or the rest of
/// their cluster.
fn read_targets(program: &str, args: &[Word]) -> Vec<Word> {
    // bash's `read` and `mapfile` take different options with a value (`-t` is a timeout for
    // `read`, a flag for `mapfile`).
    let values = if program == "read" {
        "adinNptu"
    } else {
        "dnOsuCc"
    };
    let mut out = Vec::new();
    let mut i = 0;
    let mut operands = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        let text = arg.text.as_str();
        if operands || !text.starts_with('-') || text == "-" {
            out.push(arg.clone());
            continue;
        }
        if text == "--" {
            operands = true;
            continue;
        }
        for (at, c) in text.char_indices().skip(1) {
            if !values.contains(c) {
                continue;
            }
            let rest = &text[at + c.len_utf8()..];
            let value = if rest.is_empty() {
                i += 1;
                args.get(i - 1).cloned()
            } else {
                Some(arg.part(rest))
            };
            if c == 'a'
                && let Some(name) = value
            {
                out.push(name);
            }
            break;
        }
    }
    out
}

/// The variable `printf -v NAME` (or `-vNAME`) assigns.
fn printf_target(args: &[Word]) -> Option<&Word> {
    let first = args.first()?;
    match first.text.strip_prefix("-v") {
        Some("") => args.get(1),
        Some(_) => Some(first),
        None => None,
    }
}

/// Is the word a hook variable, or a name only known at run time (which could be one)?
fn names_hook_variable(word: &Word) -> bool {
    let name = word.text.strip_prefix("-v").unwrap_or(&word.text);
    !word.is_literal() || hooks::is_hook_variable(name)
}

/// The left side of `let NAME op= …`: does it name a hook variable?
fn assigns_hook(left: &str) -> bool {
    let name = left.trim_end_matches(['+', '-', '*', '/', '%', '<', '>', '&', '^', '|', '!']);
    hooks::is_hook_variable(name.trim())
}

fn make_command(
    program: String,
    path: Option<String>,
    args: &[Word],
    via: &[String],
    raw: &RawCommand,
) -> Command {
    Command {
        program,
        argv: args.iter().map(|a| a.text.clone()).collect(),
        path,
        via: via.to_vec(),
        writes: raw.writes.clone(),
        reads: raw.reads.clone(),
        args_dynamic: args.iter().any(|a| a.dynamic),
        args_glob: args.iter().any(|a| a.glob || a.has_braces()),
        args_plain: args.iter().all(Word::is_plain_parameters),
        calls_line_function: false,
        shapes: args
            .iter()
            .map(|a| ArgShape {
                multi: a.may_split(),
                splits: a.splits,
                start_unknown: a.start_unknown(),
            })
            .collect(),
        extra_args: false,
    }
}

/// The words of a command after brace expansion (`{rm,-rf,src}` is `rm -rf src`), or `None`
/// when they would be more than [`braces::MAX_BRACE_WORDS`].
fn brace_expanded(name: Word, args: Vec<Word>) -> Option<Vec<Word>> {
    let mut budget = braces::MAX_BRACE_WORDS.max(args.len() + 1);
    let mut words = Vec::new();
    for word in std::iter::once(name).chain(args) {
        words.extend(braces::expand(word, &mut budget).ok()?);
    }
    Some(words)
}

/// `"/usr/bin/rm"` → (`"rm"`, `Some("/usr/bin/rm")`); `"rm"` → (`"rm"`, `None`).
fn split_program(text: &str) -> (String, Option<String>) {
    match text.rsplit_once('/') {
        Some((_, base)) if !base.is_empty() => (base.to_owned(), Some(text.to_owned())),
        _ => (text.to_owned(), None),
    }
}

/// How `program` treats the words after it.
fn classify(program: &str, args: &[Word], stdin: &Input) -> Step {
    match program {
        "sudo" => sudo(args),
        "doas" => doas(args),
        "env" => env(args),
        "nohup" | "builtin" | "coproc" | "noglob" | "nocorrect" | "unbuffer" | "catchsegv" => {
            strip(0, program)
        }
        "setsid" => options_then_command(args, "setsid", &SETSID, false),
        "stdbuf" => options_then_command(args, "stdbuf", &STDBUF, false),
        "time" => time(args),
        "nice" => nice(args),
        "ionice" => ionice(args),
        "timeout" => timeout(args),
        "command" => command_builtin(args),
        "exec" => options_then_command(args, "exec", &EXEC, false),
        "busybox" if !args.is_empty() => strip(0, program),
        "xargs" => xargs(args),
        "find" => find(args),
        "watch" => watch(args),
        "script" => wrappers::script(args),
        "su" => wrappers::su(args, "su"),
        "runuser" => wrappers::runuser(args),
        "chroot" => wrappers::chroot(args),
        "unshare" => wrappers::unshare(args),
        "nsenter" => wrappers::nsenter(args),
        "strace" => wrappers::strace(args),
        "pkexec" => wrappers::pkexec(args),
        "systemd-run" => wrappers::systemd_run(args),
        "run0" => wrappers::run0(args),
        "flatpak-spawn" => wrappers::flatpak_spawn(args),
        "jobs" => wrappers::jobs(args),
        "flock" => flock(args),
        "eval" => eval(args),
        "shellgate" => shellgate(args),
        "source" | "." => source(args),
        "ssh" => ssh(args),
        p if POSIX_SHELLS.contains(&p) => shell(p, args, stdin),
        p if is_interpreter(p) => interpreter(p, args, stdin),
        "awk" | "gawk" | "mawk" | "nawk" => awk(args),
        _ => Step::Final,
    }
}

pub(super) fn strip(skip: usize, label: &str) -> Step {
    Step::Strip {
        skip,
        label: label.to_owned(),
        assignments: Vec::new(),
        extra_args: false,
    }
}

const SUDO: WrapperOptions = WrapperOptions {
    value: &[
        "-a",
        "-C",
        "-c",
        "-D",
        "-g",
        "-h",
        "-p",
        "-R",
        "-r",
        "-T",
        "-t",
        "-U",
        "-u",
        "--chdir",
        "--chroot",
        "--close-from",
        "--command-timeout",
        "--group",
        "--host",
        "--login-class",
        "--other-user",
        "--prompt",
        "--role",
        "--type",
        "--user",
    ],
    flags: &[
        "-A",
        "-B",
        "-b",
        "-E",
        "-e",
        "-H",
        "-i",
        "-K",
        "-k",
        "-l",
        "-N",
        "-n",
        "-P",
        "-S",
        "-s",
        "-V",
        "-v",
        "--askpass",
        "--background",
        "--bell",
        "--edit",
        "--help",
        "--list",
        "--login",
        "--no-update",
        "--non-interactive",
        "--preserve-groups",
        "--remove-timestamp",
        "--reset-timestamp",
        "--set-home",
        "--shell",
        "--stdin",
        "--validate",
        "--version",
    ],
    optional: &["--preserve-env"],
};

/// `sudo [options] [VAR=value…] command`. With `-e` (sudoedit), `-l`, `-v`, `-K` or `-V` no
/// command runs: what follows is a file to edit or a command to look up. (`-k` with a command
/// still runs it.)
fn sudo(args: &[Word]) -> Step {
    const NO_COMMAND: [&str; 11] = [
        "-e",
        "--edit",
        "-l",
        "--list",
        "-v",
        "--validate",
        "-K",
        "--remove-timestamp",
        "-V",
        "--version",
        "--help",
    ];
    match skip_options(args, &SUDO) {
        Ok(scanned) if scanned.has(&NO_COMMAND) => Step::Final,
        Ok(_) => options_then_command(args, "sudo", &SUDO, true),
        Err(option) => unknown_option(&option, "sudo"),
    }
}

const DOAS: WrapperOptions = WrapperOptions {
    value: &["-C", "-u"],
    flags: &["-L", "-n", "-s"],
    optional: &[],
};

/// `doas -C config` checks the config and `-L` clears persisted logins: neither runs a command.
fn doas(args: &[Word]) -> Step {
    match skip_options(args, &DOAS) {
        Ok(scanned) if scanned.has(&["-C", "-L"]) => Step::Final,
        Ok(_) => options_then_command(args, "doas", &DOAS, false),
        Err(option) => unknown_option(&option, "doas"),
    }
}

const SETSID: WrapperOptions = WrapperOptions {
    value: &[],
    flags: &[
        "-c",
        "-f",
        "-w",
        "-h",
        "-V",
        "--ctty",
        "--fork",
        "--wait",
        "--help",
        "--version",
    ],
    optional: &[],
};

const STDBUF: WrapperOptions = WrapperOptions {
    value: &["-i", "-o", "-e", "--input", "--output", "--error"],
    flags: &["--help", "--version"],
    optional: &[],
};

/// GNU `time [options] COMMAND…`; with `-o FILE` it writes FILE, which its label says.
fn time(args: &[Word]) -> Step {
    match skip_options(args, &TIME) {
        Ok(scanned) if scanned.has(&["-o", "--output"]) => strip(scanned.operands, "time -o"),
        Ok(scanned) => strip(scanned.operands, "time"),
        Err(option) => unknown_option(&option, "time"),
    }
}

/// GNU time (bash's `time` keyword only knows `-p`).
const TIME: WrapperOptions = WrapperOptions {
    value: &["-f", "-o", "--format", "--output"],
    flags: &[
        "-a",
        "-p",
        "-q",
        "-v",
        "-V",
        "--append",
        "--portability",
        "--quiet",
        "--verbose",
        "--version",
        "--help",
    ],
    optional: &[],
};

const EXEC: WrapperOptions = WrapperOptions {
    value: &["-a"],
    flags: &["-c", "-l"],
    optional: &[],
};

const IONICE: WrapperOptions = WrapperOptions {
    value: &[
        "-c",
        "-n",
        "-p",
        "-P",
        "-u",
        "--class",
        "--classdata",
        "--pid",
        "--pgid",
        "--uid",
    ],
    flags: &["-t", "-h", "-V", "--ignore", "--help", "--version"],
    optional: &[],
};

/// `ionice -p/-P/-u …` changes running processes; its operands are more ids, not a command.
fn ionice(args: &[Word]) -> Step {
    match skip_options(args, &IONICE) {
        Ok(scanned) if scanned.has(&["-p", "-P", "-u", "--pid", "--pgid", "--uid"]) => Step::Final,
        Ok(_) => options_then_command(args, "ionice", &IONICE, false),
        Err(option) => unknown_option(&option, "ionice"),
    }
}

/// Skip the wrapper's options, then (for `sudo`) its `VAR=value` words, and strip: the command
/// starts at the next word.
fn options_then_command(
    args: &[Word],
    label: &str,
    opts: &WrapperOptions,
    assignments_allowed: bool,
) -> Step {
    let mut i = match skip_options(args, opts) {
        Ok(scanned) => scanned.operands,
        Err(option) => return unknown_option(&option, label),
    };
    let mut assignments = Vec::new();
    if assignments_allowed {
        i += leading_assignments(&args[i..], &mut assignments);
    }
    Step::Strip {
        skip: i,
        label: label.to_owned(),
        assignments,
        extra_args: false,
    }
}

/// `env` and `sudo` take every word with a `=` before the command as an assignment, whether or
/// not its name is a valid variable name; the valid ones are collected. Returns how many words.
fn leading_assignments(args: &[Word], out: &mut Vec<(String, Word)>) -> usize {
    let count = args.iter().take_while(|w| w.text.contains('=')).count();
    out.extend(args[..count].iter().filter_map(assignment));
    count
}

/// `NAME=value` as a word.
fn assignment(word: &Word) -> Option<(String, Word)> {
    let (name, value) = word.text.split_once('=')?;
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    valid.then(|| (name.to_owned(), word.part(value)))
}

const ENV: WrapperOptions = WrapperOptions {
    value: &[
        "-a",
        "-C",
        "-P",
        "-S",
        "-u",
        "--argv0",
        "--chdir",
        "--split-string",
        "--unset",
    ],
    flags: &[
        "-0",
        "-i",
        "-v",
        "--debug",
        "--help",
        "--ignore-environment",
        "--list-signal-handling",
        "--null",
        "--version",
    ],
    optional: &["--block-signal", "--default-signal", "--ignore-signal"],
};

/// `env [options] [-] [NAME=value…] command`. GNU env's `-a`/`--argv0` and BSD env's `-P` take a
/// value; `-S STRING` splits STRING into words that take its place among env's arguments.
fn env(args: &[Word]) -> Step {
    let scanned = match skip_options(args, &ENV) {
        Ok(scanned) => scanned,
        Err(option) => return unknown_option(&option, "env"),
    };
    if let Some(seen) = scanned
        .seen
        .iter()
        .find(|seen| matches!(seen.name, "-S" | "--split-string"))
    {
        return split_string(args, seen.at);
    }
    let mut i = scanned.operands;
    if args.get(i).is_some_and(|w| w.text == "-") {
        i += 1; // A lone `-` is `-i`.
    }
    let mut assignments = Vec::new();
    i += leading_assignments(&args[i..], &mut assignments);
    // `env -C DIR` runs the command in DIR: its relative paths are not the line's.
    let label = match scanned.value(&["-C", "--chdir"]) {
        Some((_, dir)) => format!("env -C {}", dir.text),
        None => "env".to_owned(),
    };
    Step::Strip {
        skip: i,
        label,
        assignments,
        extra_args: false,
    }
}

/// `env -S STRING` (also `-S` clustered, `--split-string=STRING`) at `args[at]`.
fn split_string(args: &[Word], at: usize) -> Step {
    let word = &args[at];
    let inline = match word.text.strip_prefix("--split-string") {
        Some(rest) => rest.strip_prefix('='),
        None => word.text.find('S').map(|s| &word.text[s + 1..]),
    };
    let (text, rest) = match inline {
        Some(value) if !value.is_empty() || word.text.starts_with("--") => {
            (word.part(value), at + 1)
        }
        _ => match args.get(at + 1) {
            Some(value) => (value.clone(), at + 2),
            None => return Step::Final,
        },
    };
    // env's own quoting, escapes and `${VAR}` inside the string are not reproduced here.
    if text.text.contains(['\'', '"', '\\', '$', '#']) {
        return Step::Opaque(
            "`env -S` splits a string with quotes, escapes or variables into a command".to_owned(),
        );
    }
    Step::Split {
        text,
        before: at,
        rest,
        label: "env -S".to_owned(),
    }
}

const NICE: WrapperOptions = WrapperOptions {
    value: &["-n", "--adjustment"],
    flags: &["--help", "--version"],
    optional: &[],
};

/// `nice [-n N] command`, and the obsolete `nice -N` / `nice --N` that GNU nice still accepts.
fn nice(args: &[Word]) -> Step {
    let numeric = |w: &Word| {
        w.text
            .strip_prefix('-')
            .map(|r| r.strip_prefix(['-', '+']).unwrap_or(r))
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    };
    let lead = args.iter().take_while(|w| numeric(w)).count();
    match skip_options(&args[lead..], &NICE) {
        Ok(scanned) => strip(lead + scanned.operands, "nice"),
        Err(option) => unknown_option(&option, "nice"),
    }
}

const TIMEOUT: WrapperOptions = WrapperOptions {
    value: &["-k", "-s", "--kill-after", "--signal"],
    flags: &[
        "-v",
        "--foreground",
        "--preserve-status",
        "--verbose",
        "--help",
        "--version",
    ],
    optional: &[],
};

/// `timeout [options] DURATION command`.
fn timeout(args: &[Word]) -> Step {
    match skip_options(args, &TIMEOUT) {
        Ok(scanned) => strip(scanned.operands + 1, "timeout"),
        Err(option) => unknown_option(&option, "timeout"),
    }
}

fn command_builtin(args: &[Word]) -> Step {
    let mut i = 0;
    while i < args.len() {
        match args[i].text.as_str() {
            "-v" | "-V" => return Step::Final,
            "-p" => i += 1,
            "--" => {
                i += 1;
                break;
            }
            _ => break,
        }
    }
    strip(i, "command")
}

const XARGS: WrapperOptions = WrapperOptions {
    value: &[
        "-a",
        "-d",
        "-E",
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-chars",
        "--max-lines",
        "--max-procs",
        "--process-slot-var",
    ],
    flags: &[
        "-0",
        "-o",
        "-p",
        "-r",
        "-t",
        "-x",
        "--exit",
        "--interactive",
        "--no-run-if-empty",
        "--null",
        "--open-tty",
        "--show-limits",
        "--verbose",
        "--help",
        "--version",
    ],
    optional: &["-e", "-i", "-l", "--eof", "--replace"],
};

fn xargs(args: &[Word]) -> Step {
    let i = match skip_options(args, &XARGS) {
        Ok(scanned) => scanned.operands,
        Err(option) => return unknown_option(&option, "xargs"),
    };
    if i >= args.len() {
        // `xargs` alone runs `echo` with its input.
        return Step::Final;
    }
    Step::Strip {
        skip: i,
        label: "xargs".to_owned(),
        assignments: Vec::new(),
        extra_args: true,
    }
}

/// `find … -exec CMD … ;` runs CMD for each file; so do `-execdir`, `-ok`, `-okdir`.
fn find(args: &[Word]) -> Step {
    let mut children = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        if matches!(a, "-exec" | "-execdir" | "-ok" | "-okdir") {
            let start = i + 1;
            let mut end = start;
            while end < args.len() && !matches!(args[end].text.as_str(), ";" | "+") {
                end += 1;
            }
            if end > start {
                children.push(start..end);
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    if children.is_empty() {
        Step::Final
    } else {
        Step::Spawns(children)
    }
}

/// `watch` joins its arguments and runs them with `sh -c` (unless `-x`).
fn watch(args: &[Word]) -> Step {
    let mut i = 0;
    let mut exec = false;
    while i < args.len() {
        let a = args[i].text.as_str();
        match a {
            "-n" | "--interval" | "-q" | "--equexit" => i += 2,
            "-x" | "--exec" => {
                exec = true;
                i += 1
            }
            "--" => {
                i += 1;
                break;
            }
            _ if a.starts_with('-') && a.len() > 1 => i += 1,
            _ => break,
        }
    }
    if exec {
        return strip(i, "watch -x");
    }
    let rest = &args[i.min(args.len())..];
    if rest.is_empty() {
        return Step::Final;
    }
    let mut script = Word::default();
    for (n, w) in rest.iter().enumerate() {
        if n > 0 {
            script.text.push(' ');
        }
        script.push(w.clone());
    }
    Step::Script {
        script,
        label: "watch".to_owned(),
        opaque: None,
        args_used: i..args.len(),
    }
}

const FLOCK: WrapperOptions = WrapperOptions {
    value: &["-E", "-w", "--conflict-exit-code", "--timeout"],
    flags: &[
        "-e",
        "-F",
        "-h",
        "-n",
        "-o",
        "-s",
        "-u",
        "-V",
        "-x",
        "--close",
        "--exclusive",
        "--help",
        "--no-fork",
        "--nonblock",
        "--shared",
        "--unlock",
        "--verbose",
        "--version",
    ],
    optional: &[],
};

/// `flock [options] FILE CMD…` or `flock [options] FILE -c 'CMD'` (`-c` right after the file, as
/// flock reads it); `flock [options] FD` runs nothing.
fn flock(args: &[Word]) -> Step {
    let i = match skip_options(args, &FLOCK) {
        Ok(scanned) => scanned.operands,
        Err(option) => return unknown_option(&option, "flock"),
    };
    let Some(file) = args.get(i) else {
        return Step::Final;
    };
    if file.text.chars().all(|c| c.is_ascii_digit()) {
        return Step::Final;
    }
    match args.get(i + 1).map(|w| w.text.as_str()) {
        Some("-c" | "--command") => match args.get(i + 2) {
            Some(script) => Step::Script {
                script: script.clone(),
                label: "flock -c".to_owned(),
                opaque: None,
                args_used: i + 2..i + 3,
            },
            None => Step::Final,
        },
        _ => strip(i + 1, "flock"),
    }
}

/// shellgate itself: `run -- LINE` runs the line (judged like `bash -c`); `sandbox -- PROGRAM…` and
/// `wrap -- AGENT…` run a program (unwrapped). Its other commands are plain commands.
fn shellgate(args: &[Word]) -> Step {
    let Some(sub) = args.first() else {
        return Step::Final;
    };
    let value_opts: &[&str] = match sub.text.as_str() {
        "run" => &["--mode", "--shell", "--cwd"],
        "sandbox" => &["--policy", "--workspace", "--writable", "--drop-protection"],
        "wrap" => &["--mode", "--writable"],
        _ => return Step::Final,
    };
    let mut i = 1;
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with("--") {
            break;
        }
        i += if value_opts.contains(&a) { 2 } else { 1 };
    }
    let label = format!("shellgate {}", sub.text);
    match (sub.text.as_str(), args.get(i)) {
        ("run", Some(line)) if line.text == "-" => {
            Step::Opaque("`shellgate run -` runs a line read from standard input".to_owned())
        }
        ("run", Some(line)) => Step::Script {
            script: line.clone(),
            label,
            opaque: None,
            args_used: i..i + 1,
        },
        (_, Some(_)) => strip(i, &label),
        (_, None) => Step::Final,
    }
}

/// `eval` runs its arguments joined by spaces as a script. One literal argument can be parsed like
/// `bash -c`; anything else cannot be known from the text.
fn eval(args: &[Word]) -> Step {
    match args {
        [] => Step::Final,
        [script] if script.is_literal() => Step::Script {
            script: script.clone(),
            label: "eval".to_owned(),
            opaque: None,
            args_used: 0..1,
        },
        _ => Step::Opaque(
            "`eval` of anything but one literal string runs code only known at run time".to_owned(),
        ),
    }
}

fn source(args: &[Word]) -> Step {
    match args.first() {
        Some(file) if file.dynamic => Step::Opaque(format!(
            "`source {}` runs code that is only known at run time in the current shell",
            file.text
        )),
        Some(file) => Step::Opaque(format!(
            "`source {}` runs the code in that file in the current shell",
            file.text
        )),
        None => Step::Final,
    }
}

/// What a line's `opaque` says of `ssh HOST CMD…`: CMD runs on another machine, which the
/// parser does not look into (an "always" answer may still be offered for it, see
/// `policy::always`).
pub const SSH_REMOTE_COMMAND: &str = "`ssh` runs a command on another machine";

/// `ssh HOST CMD…` runs CMD on another machine.
fn ssh(args: &[Word]) -> Step {
    const VALUE_OPTS: &str = "BbcDEeFIiJLlmOoPpQRSWw";
    let mut operands = 0;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        if operands == 0 && a.starts_with('-') && a.len() > 1 {
            let last = a.chars().last().unwrap_or('-');
            i += if a.len() == 2 && VALUE_OPTS.contains(last) {
                2
            } else {
                1
            };
            continue;
        }
        operands += 1;
        i += 1;
    }
    if operands >= 2 {
        Step::Opaque(SSH_REMOTE_COMMAND.to_owned())
    } else {
        Step::Final
    }
}

/// bash/sh/zsh …: `-c SCRIPT` (with any cluster containing `c`, like `-lc` or `-xec`) runs the
/// script; a script fed on standard input is opaque unless it is a literal here-document. The
/// options are read by the scanner the shell entry point uses ([`posix_shell_options`]).
fn shell(program: &str, args: &[Word], stdin: &Input) -> Step {
    let words: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
    let options = posix_shell_options(ShellFamily::of(program), &words);
    if options.info || options.missing_value.is_some() {
        return Step::Final;
    }
    let i = options.operand;
    if options.command {
        return match args.get(i) {
            Some(script) => Step::Script {
                script: script.clone(),
                label: format!("{program} -c"),
                opaque: None,
                args_used: i..i + 1,
            },
            None => Step::Final,
        };
    }
    let reads_stdin = options.stdin;
    let script_file = i < args.len() && !reads_stdin;
    if script_file {
        return Step::Final;
    }
    match stdin {
        // A here-document is parsed (so `never` rules see what it runs) and the line stays opaque.
        Input::Here(text) => Step::Script {
            script: text.clone(),
            label: format!("{program} <<here-document"),
            opaque: Some(format!("a script is fed to `{program}` on standard input")),
            args_used: 0..0,
        },
        Input::Pipe => Step::Opaque(format!(
            "the output of another command is run as a script by `{program}`"
        )),
        Input::Inherited => Step::Final,
    }
}

/// `args[first..]` are the arguments of a POSIX shell started by a wrapper (`su root -- -c CMD`):
/// a `-c` script among them is parsed; a script file is the wrapper's command.
pub(super) fn shell_arguments(args: &[Word], first: usize, label: &str) -> Step {
    let words: Vec<&str> = args[first..].iter().map(|w| w.text.as_str()).collect();
    let options = posix_shell_options(ShellFamily::of("sh"), &words);
    let at = first + options.operand;
    match args.get(at) {
        Some(script) if options.command && !options.info => Step::Script {
            script: script.clone(),
            label: format!("{label} -c"),
            opaque: None,
            args_used: at..at + 1,
        },
        _ => Step::Final,
    }
}

fn is_interpreter(program: &str) -> bool {
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    matches!(
        base,
        "python"
            | "pypy"
            | "node"
            | "nodejs"
            | "deno"
            | "bun"
            | "perl"
            | "ruby"
            | "php"
            | "lua"
            | "luajit"
            | "Rscript"
            | "osascript"
            | "tclsh"
            | "pwsh"
            | "powershell"
            | "fish"
            | "irb"
            | "jshell"
            | "julia"
    )
}

/// How an interpreter takes inline code on its command line.
struct InlineCode {
    /// Short options that take the code, alone or in a cluster (`python3 -Ic`, `ruby -we`,
    /// `perl -ne`, `node -pe`).
    letters: &'static str,
    /// Short options that take a value of their own: in a cluster, the rest is that value
    /// (`python3 -Wc` is the warning filter `c`).
    value_letters: &'static str,
    /// Long options (and subcommands) that take the code (`--eval`, `--eval=…`, `deno eval`).
    long: &'static [&'static str],
}

/// The interpreter's inline-code options, by its name without a version (`python3.12`).
fn inline_code(program: &str) -> Option<InlineCode> {
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let (letters, value_letters, long): (&str, &str, &[&str]) = match base {
        "python" | "pypy" => ("c", "mWXQ", &[]),
        "node" | "nodejs" | "bun" => ("ep", "r", &["--eval", "--print"]),
        "deno" => ("e", "", &["eval", "--eval"]),
        "perl" => ("eE", "IMmxdD", &[]),
        "ruby" => ("e", "CEFIKrxTWU0", &["--eval"]),
        "lua" | "luajit" => ("e", "lj", &[]),
        "Rscript" | "julia" | "osascript" => ("e", "", &["--eval"]),
        "php" => ("rBRFE", "cdfz", &[]),
        "fish" => ("c", "", &["--command", "--init-command"]),
        _ => return None,
    };
    Some(InlineCode {
        letters,
        value_letters,
        long,
    })
}

/// Does this argument give an interpreter inline code? A cluster of short options is read as
/// getopt reads it: each letter in turn, until one that takes a value.
fn gives_inline_code(code: &InlineCode, arg: &str) -> bool {
    if code
        .long
        .iter()
        .any(|f| arg == *f || (f.starts_with("--") && arg.starts_with(&format!("{f}="))))
    {
        return true;
    }
    let Some(cluster) = arg.strip_prefix('-').filter(|c| !c.starts_with('-')) else {
        return false;
    };
    for letter in cluster.chars() {
        if code.letters.contains(letter) {
            return true;
        }
        if code.value_letters.contains(letter) {
            return false;
        }
    }
    false
}

/// PowerShell takes any unambiguous prefix of a parameter's name, in any case, after `-`, `--`
/// or `/`: `-c`, `-Comm`, `-Command`, `-e`, `-ec`, `-enc`, `-EncodedCommand`, `-cwa`,
/// `-CommandWithArgs` all run the code that follows.
fn pwsh_inline_code(arg: &str) -> bool {
    let name = arg
        .strip_prefix("--")
        .or_else(|| arg.strip_prefix('-'))
        .or_else(|| arg.strip_prefix('/'))
        .unwrap_or("")
        .to_ascii_lowercase();
    !name.is_empty()
        && (["command", "encodedcommand", "commandwithargs"]
            .iter()
            .any(|full| full.starts_with(&name))
            || name == "ec"
            || name == "cwa"
            || name.starts_with("encodedarg"))
}

/// Interpreters run inline code (`python -c`, `node -e`, `perl -e` …) whose effect the shell
/// parser cannot see, or a script from standard input.
fn interpreter(program: &str, args: &[Word], stdin: &Input) -> Step {
    let base = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let pwsh = matches!(base, "pwsh" | "powershell");
    let code = inline_code(program);
    for a in args {
        let inline = if pwsh {
            pwsh_inline_code(&a.text)
        } else {
            code.as_ref().is_some_and(|c| gives_inline_code(c, &a.text))
        };
        if inline {
            return Step::Opaque(format!(
                "`{program} {}` runs inline code that the shell parser cannot see",
                a.text
            ));
        }
    }
    let has_operand = args.iter().any(|a| !a.text.starts_with('-'));
    match stdin {
        Input::Pipe | Input::Here(_) if !has_operand => {
            Step::Opaque(format!("a script is fed to `{program}` on standard input"))
        }
        _ => Step::Final,
    }
}

static AWK_RUNS_COMMANDS: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r#"system\s*\(|\|\s*&|\|\s*getline|\|\s*"|"\s*\|"#).ok());

/// An awk program can start commands (`system()`, pipes to or from a command string).
fn awk(args: &[Word]) -> Step {
    let program = args.iter().find(|a| !a.text.starts_with('-'));
    let runs_commands = match (program, AWK_RUNS_COMMANDS.as_ref()) {
        (Some(p), Some(re)) => re.is_match(&p.text),
        (Some(_), None) => true,
        (None, _) => false,
    };
    if runs_commands {
        Step::Opaque("the awk program starts commands (`system()` or a command pipe)".to_owned())
    } else {
        Step::Final
    }
}
