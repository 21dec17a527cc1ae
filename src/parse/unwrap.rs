//! Unwrapping: from a simple command as written to the command that really runs.
//!
//! `sudo env FOO=1 nice -n 5 /usr/bin/rm -rf x` runs `rm`; `bash -lc 'rm x'` and `eval 'rm x'` run
//! the script inside them; `find . -exec rm {} ;` and `xargs rm` run `rm`. Every wrapper is stripped
//! here, by reading its options the way the wrapper itself does, and recorded in `via`. Where the
//! program or script is only known at run time the line becomes opaque instead.

use super::Command;
use super::bash::{Input, RawCommand, Walker};
use super::words::Word;
use regex::Regex;
use std::ops::Range;
use std::sync::LazyLock;

/// Wrappers stripped in a row before the line is declared opaque.
const MAX_WRAPPERS: usize = 16;

/// Shells whose `-c` script is parsed with the bash grammar.
const POSIX_SHELLS: [&str; 9] = [
    "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh",
];

/// Variables that make a program load code the line does not show, when set for one command.
const CODE_LOADING_VARS: [&str; 24] = [
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "BASH_ENV",
    "ENV",
    "ZDOTDIR",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    "NODE_OPTIONS",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "PAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
];

/// Shell variables that belong to shellgate's hooks or decide what the next shell loads.
const HOOK_VARIABLES: [&str; 22] = [
    "PS0",
    "PS1",
    "PS2",
    "PS4",
    "PROMPT_COMMAND",
    "BASH_ENV",
    "ENV",
    "ZDOTDIR",
    "HISTCONTROL",
    "HISTIGNORE",
    "HISTFILE",
    "SHELLOPTS",
    "BASHOPTS",
    "POSIXLY_CORRECT",
    "SHELL",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "LD_AUDIT",
    "precmd_functions",
    "preexec_functions",
    "chpwd_functions",
    "zle_highlight",
];

/// Function names that are hooks of bash, zsh, PowerShell or shellgate itself.
const HOOK_FUNCTIONS: [&str; 8] = [
    "preexec",
    "precmd",
    "chpwd",
    "zshaddhistory",
    "command_not_found_handle",
    "command_not_found_handler",
    "PSConsoleHostReadLine",
    "prompt",
];

/// Builtins whose purpose is to change the shell's own behaviour or hooks.
const HOOK_BUILTINS: [&str; 16] = [
    "trap",
    "shopt",
    "enable",
    "disable",
    "bind",
    "bindkey",
    "zle",
    "add-zsh-hook",
    "add-zle-hook-widget",
    "setopt",
    "unsetopt",
    "unfunction",
    "zmodload",
    "emulate",
    "unhash",
    "hash",
];

/// What one wrapper does to the words after it.
enum Step {
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
    /// The wrapper splits this text into words and runs them (`env -S`).
    Split {
        text: Word,
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
    pub(super) fn resolve(&mut self, raw: RawCommand) {
        self.check_prefix_assignments(&raw.assignments);
        let Some(mut name) = raw.name else {
            return;
        };
        let mut args = raw.args;
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
            if path.is_none() && self.line_functions.contains(&program) {
                self.check_hidden_code_in(&args);
                let mut command = make_command(program, path, &args, &via, &raw.writes);
                command.calls_line_function = true;
                self.out.commands.push(command);
                return;
            }
            let step = classify(&program, &args, &raw.stdin);
            match step {
                Step::Final => {
                    self.check_hidden_code_in(&args);
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
                    let mut command = make_command(program, path, &args, &via, &raw.writes);
                    command.args_dynamic |= extra_args;
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
                        self.check_hidden_code_in(&args);
                        let command = make_command(program, path, &args, &via, &raw.writes);
                        self.out.commands.push(command);
                        return;
                    }
                    self.check_hidden_code_in(&args[..skip]);
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
                Step::Split { text, rest, label } => {
                    if !text.is_literal() {
                        self.out.add_opaque(format!(
                            "`{label}` splits a string only known at run time into a command"
                        ));
                        return;
                    }
                    self.check_hidden_code_in(&args[..rest.min(args.len())]);
                    let mut split: Vec<Word> =
                        text.text.split_whitespace().map(Word::quoted).collect();
                    split.extend(args.split_off(rest.min(args.len())));
                    if split.is_empty() {
                        return;
                    }
                    name = split.remove(0);
                    args = split;
                    via.push(label);
                }
                Step::Spawns(ranges) => {
                    for (i, word) in args.iter().enumerate() {
                        if !ranges.iter().any(|r| r.contains(&i)) {
                            self.check_hidden_code(word);
                        }
                    }
                    let command = make_command(program.clone(), path, &args, &via, &raw.writes);
                    self.out.commands.push(command);
                    for range in ranges {
                        let mut words = args[range].to_vec().into_iter();
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
                    let command = make_command(program, path, &args, &via, &raw.writes);
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
            self.check_hidden_code(value);
            if CODE_LOADING_VARS.contains(&name.as_str()) {
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
        let changes_hooks = match program {
            p if HOOK_BUILTINS.contains(&p) => true,
            "set" => args.iter().any(|a| a.text.starts_with(['-', '+'])),
            "alias" | "unalias" => {
                program == "unalias" || args.iter().any(|a| a.text.contains('='))
            }
            "printf" | "read" | "mapfile" | "readarray" => args
                .iter()
                .any(|a| HOOK_VARIABLES.contains(&a.text.as_str())),
            _ => false,
        };
        if changes_hooks {
            self.out.add_hook_state(format!(
                "`{program}` changes the shell's own behaviour or hooks"
            ));
        }
    }

    /// A variable assigned on its own or by `export`/`declare`/`local`/`readonly`.
    pub(super) fn check_assigned_variable(&mut self, name: &str) {
        self.check_shell_variable(name);
    }

    pub(super) fn check_shell_variable(&mut self, name: &str) {
        if HOOK_VARIABLES.contains(&name) || name.starts_with("SHELLGATE") {
            self.out
                .add_hook_state(format!("the line changes the shell variable `{name}`"));
        }
    }

    pub(super) fn check_function_name(&mut self, name: &str) {
        let hooked = HOOK_FUNCTIONS.contains(&name)
            || name.starts_with("__shellgate")
            || name.starts_with("_shellgate")
            || name.starts_with("TRAP")
            || name == "shellgate";
        if hooked {
            self.out
                .add_hook_state(format!("the line defines or removes the function `{name}`"));
        }
    }
}

fn make_command(
    program: String,
    path: Option<String>,
    args: &[Word],
    via: &[String],
    writes: &[String],
) -> Command {
    Command {
        program,
        argv: args.iter().map(|a| a.text.clone()).collect(),
        path,
        via: via.to_vec(),
        writes: writes.to_vec(),
        args_dynamic: args.iter().any(|a| a.dynamic),
        args_glob: args.iter().any(|a| a.glob),
        calls_line_function: false,
    }
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
        "sudo" => options_then_command(args, "sudo", SUDO_VALUE_OPTS, true),
        "doas" => options_then_command(args, "doas", &["-u", "-C"], false),
        "env" => env(args),
        "nohup" | "builtin" | "coproc" | "noglob" | "nocorrect" | "unbuffer" | "catchsegv" => {
            strip(0, program)
        }
        "setsid" => options_then_command(args, "setsid", &[], false),
        "stdbuf" => options_then_command(args, "stdbuf", &["-i", "-o", "-e"], false),
        "time" => options_then_command(args, "time", &["-f", "-o", "--format", "--output"], false),
        "nice" => nice(args),
        "ionice" => options_then_command(args, "ionice", &["-c", "-n", "-p", "-P", "-u"], false),
        "timeout" => timeout(args),
        "command" => command_builtin(args),
        "exec" => options_then_command(args, "exec", &["-a"], false),
        "busybox" if !args.is_empty() => strip(0, program),
        "xargs" => xargs(args),
        "find" => find(args),
        "watch" => watch(args),
        "script" => script_c(args),
        "su" | "runuser" => su(args),
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

fn strip(skip: usize, label: &str) -> Step {
    Step::Strip {
        skip,
        label: label.to_owned(),
        assignments: Vec::new(),
        extra_args: false,
    }
}

const SUDO_VALUE_OPTS: &[&str] = &[
    "-u",
    "-g",
    "-h",
    "-p",
    "-r",
    "-t",
    "-C",
    "-D",
    "-U",
    "-T",
    "-R",
    "--user",
    "--group",
    "--host",
    "--prompt",
    "--role",
    "--type",
    "--close-from",
    "--chdir",
    "--other-user",
    "--command-timeout",
    "--chroot",
];

/// Skip options (and the values of `value_opts`), optionally `NAME=value` assignments, and strip.
fn options_then_command(
    args: &[Word],
    label: &str,
    value_opts: &[&str],
    assignments_allowed: bool,
) -> Step {
    let mut i = 0;
    let mut assignments = Vec::new();
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if a.starts_with('-') && a.len() > 1 {
            i += if value_opts.contains(&a) { 2 } else { 1 };
            continue;
        }
        break;
    }
    if assignments_allowed {
        while i < args.len() {
            match assignment(&args[i]) {
                Some(pair) => {
                    assignments.push(pair);
                    i += 1;
                }
                None => break,
            }
        }
    }
    Step::Strip {
        skip: i,
        label: label.to_owned(),
        assignments,
        extra_args: false,
    }
}

/// `NAME=value` as a word.
fn assignment(word: &Word) -> Option<(String, Word)> {
    let (name, value) = word.text.split_once('=')?;
    let valid = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    valid.then(|| {
        (
            name.to_owned(),
            Word {
                text: value.to_owned(),
                dynamic: word.dynamic,
                glob: word.glob,
                hidden_code: word.hidden_code,
            },
        )
    })
}

fn env(args: &[Word]) -> Step {
    let mut i = 0;
    let mut assignments = Vec::new();
    while i < args.len() {
        let a = args[i].text.as_str();
        match a {
            "--" => {
                i += 1;
                break;
            }
            "-S" | "--split-string" => {
                return match args.get(i + 1) {
                    Some(text) => Step::Split {
                        text: text.clone(),
                        rest: i + 2,
                        label: "env -S".to_owned(),
                    },
                    None => Step::Final,
                };
            }
            "-u" | "--unset" | "-C" | "--chdir" => i += 2,
            _ if a.starts_with("--split-string=") || (a.starts_with("-S") && a.len() > 2) => {
                let text = a
                    .strip_prefix("--split-string=")
                    .or_else(|| a.strip_prefix("-S"))
                    .unwrap_or("");
                return Step::Split {
                    text: Word {
                        text: text.to_owned(),
                        dynamic: args[i].dynamic,
                        glob: false,
                        hidden_code: args[i].hidden_code,
                    },
                    rest: i + 1,
                    label: "env -S".to_owned(),
                };
            }
            _ if a.starts_with('-') && a.len() > 1 => i += 1,
            _ => match assignment(&args[i]) {
                Some(pair) => {
                    assignments.push(pair);
                    i += 1;
                }
                None => break,
            },
        }
    }
    Step::Strip {
        skip: i,
        label: "env".to_owned(),
        assignments,
        extra_args: false,
    }
}

fn nice(args: &[Word]) -> Step {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "-n" || a == "--adjustment" {
            i += 2;
        } else if a == "--" {
            i += 1;
            break;
        } else if a.starts_with('-') && a.len() > 1 {
            i += 1;
        } else {
            break;
        }
    }
    strip(i, "nice")
}

fn timeout(args: &[Word]) -> Step {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "-s" || a == "-k" || a == "--signal" || a == "--kill-after" {
            i += 2;
        } else if a == "--" {
            i += 1;
            break;
        } else if a.starts_with('-') && a.len() > 1 {
            i += 1;
        } else {
            break;
        }
    }
    // The first operand is the duration.
    strip(i + 1, "timeout")
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

const XARGS_VALUE_OPTS: [&str; 16] = [
    "-a",
    "--arg-file",
    "-d",
    "--delimiter",
    "-E",
    "-I",
    "--replace",
    "-L",
    "--max-lines",
    "-n",
    "--max-args",
    "-P",
    "--max-procs",
    "-s",
    "--max-chars",
    "--process-slot-var",
];

fn xargs(args: &[Word]) -> Step {
    let mut i = 0;
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "--" {
            i += 1;
            break;
        }
        if !a.starts_with('-') || a.len() == 1 {
            break;
        }
        i += if XARGS_VALUE_OPTS.contains(&a) { 2 } else { 1 };
    }
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

/// `script -c CMD` runs CMD with the user's shell.
fn script_c(args: &[Word]) -> Step {
    value_of_option(args, &["-c", "--command"]).map_or(Step::Final, |(at, script)| Step::Script {
        script,
        label: "script -c".to_owned(),
        opaque: None,
        args_used: at..at + 1,
    })
}

fn su(args: &[Word]) -> Step {
    value_of_option(args, &["-c", "--command"]).map_or(Step::Final, |(at, script)| Step::Script {
        script,
        label: "su -c".to_owned(),
        opaque: None,
        args_used: at..at + 1,
    })
}

/// `flock FILE CMD…` or `flock FILE -c 'CMD'`.
fn flock(args: &[Word]) -> Step {
    if let Some((at, script)) = value_of_option(args, &["-c", "--command"]) {
        return Step::Script {
            script,
            label: "flock -c".to_owned(),
            opaque: None,
            args_used: at..at + 1,
        };
    }
    let mut i = 0;
    while i < args.len() && args[i].text.starts_with('-') {
        i += if matches!(
            args[i].text.as_str(),
            "-w" | "--timeout" | "-E" | "--conflict-exit-code"
        ) {
            2
        } else {
            1
        };
    }
    // The lock file comes first; a bare descriptor number means there is no command.
    if args
        .get(i)
        .is_some_and(|w| w.text.chars().all(|c| c.is_ascii_digit()))
    {
        return Step::Final;
    }
    strip(i + 1, "flock")
}

/// The value of `-c X`, `--command X` or `--command=X`, and the index of the word holding it.
fn value_of_option(args: &[Word], names: &[&str]) -> Option<(usize, Word)> {
    for (i, a) in args.iter().enumerate() {
        if names.contains(&a.text.as_str()) {
            return args.get(i + 1).map(|value| (i + 1, value.clone()));
        }
        for name in names.iter().filter(|n| n.starts_with("--")) {
            let value = a
                .text
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('='));
            if let Some(value) = value {
                let word = Word {
                    text: value.to_owned(),
                    dynamic: a.dynamic,
                    glob: false,
                    hidden_code: a.hidden_code,
                };
                return Some((i, word));
            }
        }
    }
    None
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
        Step::Opaque("`ssh` runs a command on another machine".to_owned())
    } else {
        Step::Final
    }
}

/// bash/sh/zsh …: `-c SCRIPT` (with any cluster containing `c`, like `-lc` or `-xec`) runs the
/// script; a script fed on standard input is opaque unless it is a literal here-document.
fn shell(program: &str, args: &[Word], stdin: &Input) -> Step {
    let mut i = 0;
    let mut has_c = false;
    let mut reads_stdin = false;
    while i < args.len() {
        let a = args[i].text.as_str();
        if a == "--" || a == "-" {
            i += 1;
            break;
        }
        if matches!(a, "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file") {
            i += 2;
            continue;
        }
        if a.starts_with("--") {
            i += 1;
            continue;
        }
        if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
            has_c |= a.starts_with('-') && a.contains('c');
            reads_stdin |= a.starts_with('-') && a.contains('s');
            i += 1;
            continue;
        }
        break;
    }
    if has_c {
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

/// Interpreters run inline code (`python -c`, `node -e`, `perl -e` …) whose effect the shell
/// parser cannot see, or a script from standard input.
fn interpreter(program: &str, args: &[Word], stdin: &Input) -> Step {
    let inline_flags: &[&str] =
        match program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.') {
            "python" | "pypy" => &["-c"],
            "node" | "nodejs" | "bun" => &["-e", "--eval", "-p", "--print"],
            "deno" => &["eval", "-e"],
            "perl" => &["-e", "-E"],
            "ruby" | "lua" | "luajit" | "Rscript" | "osascript" | "julia" => &["-e", "--eval"],
            "php" => &["-r"],
            "tclsh" => &[],
            "pwsh" | "powershell" => &["-c", "-command", "-encodedcommand", "-e", "-ec", "-cwa"],
            "fish" => &["-c", "--command"],
            _ => &[],
        };
    for a in args {
        let flag = a.text.to_ascii_lowercase();
        let clustered_e = program.starts_with("perl")
            && flag.starts_with('-')
            && !flag.starts_with("--")
            && flag.contains(['e', 'E']);
        let prefixed = inline_flags
            .iter()
            .any(|f| flag == *f || (f.starts_with("--") && flag.starts_with(&format!("{f}="))));
        if prefixed || clustered_e {
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
