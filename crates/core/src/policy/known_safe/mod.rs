//! Known-safe commands: the ones known only to read, which run in the read-only sandbox without
//! anyone being asked.
//!
//! This is an allow-list. Each program is known with its read-only options, parsed the way the
//! program parses them ([`options`], [`programs`], [`git`], [`scripts`]); an option that is not
//! on the list, one that writes or runs something, an operand that would be written to, or a
//! word whose value the text does not show where an option could be, makes the command *not*
//! known-safe. Beyond its arguments a command is only known-safe when it is the system's program
//! (not `./ls`), no redirection writes a file, no wrapper changes who or where it runs (`sudo`,
//! `chroot`, `script`, …), and — for git and ripgrep — nothing on the line configures them to run
//! code. A line that defines a function is never known-safe: the function may run instead of the
//! program of that name.

pub mod git;
pub mod options;
pub mod programs;
pub mod scripts;

use super::environment;
use crate::parse::{Command, Parsed, ShellKind};
use options::{Arg, Refusal, args_of, scan};

/// What the rest of the line says about each of its commands.
#[derive(Debug, Clone, Copy)]
pub struct LineFacts<'a> {
    /// Variables the line assigns or exports.
    pub assigned: &'a [String],
    /// The line changes directory (`cd`, `pushd`, `popd`, `env -C`): relative paths after it are
    /// not the workspace's, and another directory's git or ripgrep config may apply.
    pub changes_dir: bool,
    /// The line defines a function.
    pub defines_function: bool,
    pub shell: ShellKind,
}

impl<'a> LineFacts<'a> {
    pub fn of(parsed: &'a Parsed, shell: ShellKind) -> LineFacts<'a> {
        LineFacts {
            assigned: &parsed.assigned,
            changes_dir: parsed.commands.iter().any(changes_dir),
            defines_function: !parsed.functions.is_empty(),
            shell,
        }
    }
}

/// Does this command change the directory later commands run in?
pub fn changes_dir(c: &Command) -> bool {
    matches!(c.program.as_str(), "cd" | "pushd" | "popd" | "chdir")
        || c.via.iter().any(|v| v.starts_with("env -C"))
}

/// Wrappers after which a command still runs as the line's user, in the line's directory and
/// root, with the arguments shown (plus, for `xargs`, unknown ones at the end).
const TRANSPARENT_WRAPPERS: [&str; 20] = [
    "env",
    "env -S",
    "nice",
    "timeout",
    "stdbuf",
    "command",
    "builtin",
    "ionice",
    "setsid",
    "noglob",
    "nocorrect",
    "time",
    "xargs",
    "watch",
    "watch -x",
    "find -exec",
    "eval",
    "coproc",
    "jobs -x",
    "shellgate run",
];

/// Shells whose `-c` script is parsed as part of the line (a new shell of the same user).
const SHELLS: [&str; 9] = [
    "bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh",
];

fn is_transparent(label: &str) -> bool {
    TRANSPARENT_WRAPPERS.contains(&label)
        || label
            .strip_suffix(" -c")
            .is_some_and(|shell| SHELLS.contains(&shell))
}

/// Is `program` one of the programs this module knows (to only read, at least in some forms)?
pub fn is_known_program(program: &str) -> bool {
    programs::spec(program).is_some()
        || matches!(
            program,
            "git"
                | "sed"
                | "awk"
                | "jq"
                | "find"
                | "xxd"
                | "ps"
                | "printenv"
                | "echo"
                | "printf"
                | "test"
                | "["
                | "true"
                | "false"
                | "env"
                | "sh"
                | "bash"
        )
}

/// Is this one command known to only read? (See [`refusal`] for why not.)
pub fn is_known_safe(c: &Command, line: &LineFacts) -> bool {
    refusal(c, line).is_none()
}

/// Why this command is not known to only read, or `None` when it is.
pub fn refusal(c: &Command, line: &LineFacts) -> Option<String> {
    let why = |text: &str| Some(text.to_owned());
    if !c.writes.is_empty() {
        return why("it redirects into a file");
    }
    if !is_system_program(c) {
        return why("it is not the system's program (a path outside /usr/bin and /bin)");
    }
    if c.reads.iter().any(|r| is_network_path(r)) {
        return why("it reads from the network through /dev/tcp or /dev/udp");
    }
    if let Some(wrapper) = c.via.iter().find(|v| !is_transparent(v)) {
        return Some(format!(
            "it runs through `{wrapper}`, which changes who, where or how it runs"
        ));
    }
    if line.defines_function || c.calls_line_function {
        return why("the line defines a function, which may run instead of a program");
    }
    if let Some(prints) = environment::prints_environment(c) {
        return Some(format!(
            "{prints}, as `printenv` alone does; credentials are withheld from lines, but a \
             secret under a name or in a value shellgate does not recognise is not"
        ));
    }
    if let Some(name) = c
        .argv
        .iter()
        .find_map(|a| environment::expanded_credential(a))
    {
        return Some(format!(
            "it expands `${name}`, which looks like a credential: withheld from lines unless a \
             person passes it"
        ));
    }
    if writes_terminal_control(c) {
        return why(
            "it writes terminal control sequences (an escape character), which make the \
             terminal act: set the clipboard or the title, or type a report back into the shell",
        );
    }
    arguments(c, line).err().map(|Refusal(text)| text)
}

/// Does the command write terminal control sequences to the terminal? An argument holding an
/// escape or C1 control character (`$'\e[2J'`), or, for programs that turn escapes in their
/// arguments into characters (`echo -e`, zsh's `echo`, `printf` and `%b`, awk, jq, sed, tr), an
/// escape spelled in one (`\e`, `\033`, `\x1b`, `\u001b`, `\c[`, and the C1 `\x9b` …), or a
/// character made from a number (awk's `%c`, jq's `implode`).
pub fn writes_terminal_control(c: &Command) -> bool {
    let control = |ch: char| {
        (ch.is_control() && ch != '\n' && ch != '\t') || ('\u{80}'..='\u{9f}').contains(&ch)
    };
    if c.argv.iter().any(|a| a.chars().any(control)) {
        return true;
    }
    const SPELLED: [&str; 17] = [
        "\\e",
        "\\033",
        "\\33",
        "\\x1b",
        "\\u001b",
        "\\u{1b}",
        "\\u0000001b",
        "\\c[",
        "\\x9b",
        "\\x9d",
        "\\x90",
        "\\u009b",
        "\\u009d",
        "\\u0090",
        "\\233",
        "\\235",
        "\\220",
    ];
    let spelled = |a: &String| {
        let lower = a.to_ascii_lowercase();
        SPELLED.iter().any(|s| lower.contains(s))
    };
    match c.program.as_str() {
        "echo" | "printf" | "sed" | "tr" => c.argv.iter().any(spelled),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => {
            c.argv.iter().any(|a| spelled(a) || a.contains("%c"))
        }
        "jq" => c.argv.iter().any(|a| spelled(a) || a.contains("implode")),
        _ => false,
    }
}

/// Is the program the system's own? A bare name is looked up in `PATH` (a line that changes
/// `PATH` is opaque); a path names whatever file is there, so only the system's program
/// directories count: `./ls`, `bin/echo` or `/tmp/evil/cat` can be anything.
fn is_system_program(c: &Command) -> bool {
    match &c.path {
        None => true,
        Some(path) => matches!(path.rsplit_once('/'), Some(("/usr/bin" | "/bin", _))),
    }
}

/// bash opens a redirection to `/dev/tcp/HOST/PORT` or `/dev/udp/…` as a network connection.
pub fn is_network_path(path: &str) -> bool {
    path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/")
}

fn refused<T>(text: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal(text.into()))
}

/// Are the command's arguments ones its program only reads with?
fn arguments(c: &Command, line: &LineFacts) -> Result<(), Refusal> {
    let args = args_of(c);
    let program = c.program.as_str();
    if line.shell == ShellKind::Pwsh && is_pwsh_read_only(program) {
        return pwsh_cmdlet(program, &args);
    }
    if let Some(spec) = programs::spec(program) {
        if program == "rg" {
            configurable(line, &["RIPGREP_CONFIG_PATH"])?;
        }
        let found = scan(spec, &args)?;
        return match program {
            "date" => date_operands(&found.operands),
            _ => Ok(()),
        };
    }
    match program {
        "git" => {
            configurable(line, &[])?;
            git::check(&args)
        }
        "sed" => scripts::sed(&args),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => scripts::awk(&args),
        "jq" => scripts::jq(&args),
        "find" => find(&args),
        "xxd" => xxd(&args),
        "ps" => ps(&args),
        "shellgate" => shellgate(&args),
        "echo" | "true" | "false" | ":" | "test" | "[" | "expr" | "type" | "dirs" | "fg" | "bg"
        | "wait" | "exit" | "logout" | "cd" | "pushd" | "popd" | "help" => Ok(()),
        // They assign the variables they name (a hook's variable is hook state, judged apart).
        "read" | "mapfile" | "readarray" => Ok(()),
        "printenv" => printenv(&args),
        "jobs" => match args
            .iter()
            .any(|a| a.text.starts_with('-') && a.text.contains('x'))
        {
            true => refused("`jobs -x` runs a command"),
            false => Ok(()),
        },
        // `printf -v NAME` assigns a shell variable (and evaluates a subscript in NAME).
        "printf" => match args.first() {
            Some(first) if first.text.starts_with("-v") || first.shape.start_unknown => {
                refused("`printf -v` assigns a variable")
            }
            _ => Ok(()),
        },
        "command" => match args.first().map(|a| a.text) {
            Some("-v" | "-V") => Ok(()),
            _ => refused("`command` runs a command"),
        },
        "declare" | "typeset" | "export" | "readonly" | "local" => listing_declaration(&args),
        "set" | "trap" | "shopt" | "bind" | "alias" | "hash" | "enable" | "setopt" | "unsetopt"
        | "bindkey" | "history" => shell_listing(program, c),
        _ => version_or_help(program, &args),
    }
}

/// git and ripgrep read configuration that can make them run programs. What the line itself
/// sets must not reach them: `GIT_*` (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_0=core.fsmonitor`),
/// `HOME` and `XDG_CONFIG_HOME` (another `.gitconfig`), `extra` (ripgrep's config file), or a
/// change of directory (another repository's config).
fn configurable(line: &LineFacts, extra: &[&str]) -> Result<(), Refusal> {
    let configures = line.assigned.iter().find(|name| {
        name.starts_with("GIT_")
            || matches!(name.as_str(), "HOME" | "XDG_CONFIG_HOME" | "PAGER")
            || extra.contains(&name.as_str())
    });
    if let Some(name) = configures {
        return refused(format!(
            "the line sets `{name}`, which can configure it to run code"
        ));
    }
    if line.changes_dir {
        return refused(
            "the line changes directory, where another repository's configuration may apply",
        );
    }
    Ok(())
}

/// `printenv NAME…`: the named variables, unless a name looks like a credential's (`printenv`
/// alone is judged with every command that prints the environment, in [`refusal`]).
fn printenv(args: &[Arg]) -> Result<(), Refusal> {
    let found = scan(&programs::PRINTENV, args)?;
    if found.has("help") || found.has("version") {
        return Ok(());
    }
    match found
        .operands
        .iter()
        .find(|name| environment::is_credential_name(name))
    {
        Some(name) => refused(format!("`{name}` looks like a credential")),
        None => Ok(()),
    }
}

/// `date` prints with `+FORMAT`; any other operand sets the clock.
fn date_operands(operands: &[&str]) -> Result<(), Refusal> {
    match operands.iter().find(|o| !o.starts_with('+')) {
        Some(operand) => refused(format!("`date {operand}` sets the system clock")),
        None => Ok(()),
    }
}

/// procps `ps` only lists processes, whatever its options, except that BSD-style `e` (`ps e`,
/// `ps auxe`) shows their environments, which hold credentials.
fn ps(args: &[Arg]) -> Result<(), Refusal> {
    let environment = args.iter().any(|a| {
        !a.text.starts_with('-')
            && a.text.contains('e')
            && a.text.chars().all(|c| c.is_ascii_alphabetic())
    });
    if environment {
        return refused("`ps e` shows the environment of processes, which holds credentials");
    }
    match args.iter().find(|a| a.shape.multi || a.shape.start_unknown) {
        Some(arg) => refused(format!("`{}` is only known at run time", arg.text)),
        None => Ok(()),
    }
}

/// `find` with tests, read-only options and the actions that print: every primary must be known
/// (its values counted), and none of `-exec`, `-execdir`, `-ok`, `-okdir`, `-delete`, `-fls`,
/// `-fprint`, `-fprint0`, `-fprintf`.
fn find(args: &[Arg]) -> Result<(), Refusal> {
    /// Primaries that take one value.
    const ONE_VALUE: [&str; 40] = [
        "-amin",
        "-anewer",
        "-atime",
        "-cmin",
        "-cnewer",
        "-context",
        "-ctime",
        "-fstype",
        "-gid",
        "-group",
        "-ilname",
        "-iname",
        "-inum",
        "-ipath",
        "-iregex",
        "-iwholename",
        "-links",
        "-lname",
        "-maxdepth",
        "-mindepth",
        "-mmin",
        "-mtime",
        "-name",
        "-newer",
        "-path",
        "-perm",
        "-printf",
        "-regex",
        "-regextype",
        "-samefile",
        "-size",
        "-type",
        "-uid",
        "-used",
        "-user",
        "-wholename",
        "-xtype",
        "-files0-from",
        "-D",
        "-newerXY",
    ];
    /// Primaries and operators without a value.
    const NO_VALUE: [&str; 30] = [
        "-depth",
        "-d",
        "-empty",
        "-executable",
        "-false",
        "-follow",
        "-ignore_readdir_race",
        "-ls",
        "-mount",
        "-noignore_readdir_race",
        "-noleaf",
        "-nogroup",
        "-nouser",
        "-nowarn",
        "-print",
        "-print0",
        "-prune",
        "-quit",
        "-readable",
        "-true",
        "-warn",
        "-writable",
        "-xdev",
        "-daystart",
        "-not",
        "-and",
        "-or",
        "-a",
        "-o",
        "-help",
    ];
    let mut i = 0;
    // Options before the starting points: -H, -L, -P, -D LIST, -Olevel.
    while let Some(arg) = args.get(i) {
        match arg.text {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            t if t.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let mut primaries = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        // Before the first primary, a pattern (`src/*`) is starting points that all start as
        // it does.
        let starting_points = !primaries && arg.shape.multi && !arg.shape.splits;
        if arg.shape.start_unknown || (arg.shape.multi && !starting_points) {
            return refused(format!(
                "`{}` is only known at run time and could be an action such as `-delete`",
                arg.text
            ));
        }
        let text = arg.text;
        primaries |= text.starts_with('-') || matches!(text, "(" | "!");
        if matches!(
            text,
            "(" | ")" | "!" | "," | "-version" | "--version" | "--help"
        ) {
            continue;
        }
        if !text.starts_with('-') {
            // A starting point, or a value already skipped.
            continue;
        }
        if ONE_VALUE.contains(&text) || (text.starts_with("-newer") && text.len() == 8) {
            match args.get(i) {
                Some(value) if !value.shape.multi => i += 1,
                _ => return refused(format!("the value of `{text}` may become several words")),
            }
        } else if !NO_VALUE.contains(&text) {
            return refused(format!(
                "`find {text}` is not known to only read (it may run, delete or write)"
            ));
        }
    }
    Ok(())
}

/// `xxd [options] [INFILE]`: a second operand is written to, and so is any `-r` output there.
/// xxd reads `--opt` as `-opt` and matches options by prefix (`-c`, `-cols`), with its value
/// attached or in the next word.
fn xxd(args: &[Arg]) -> Result<(), Refusal> {
    const FLAGS: [&str; 17] = [
        "-a",
        "-autoskip",
        "-b",
        "-bits",
        "-C",
        "-capitalize",
        "-d",
        "-E",
        "-EBCDIC",
        "-e",
        "-h",
        "-help",
        "-i",
        "-include",
        "-p",
        "-ps",
        "-u",
    ];
    const MORE_FLAGS: [&str; 5] = ["-postscript", "-plain", "-uppercase", "-v", "-version"];
    const VALUES: [char; 7] = ['c', 'g', 'l', 'n', 'o', 's', 'R'];
    let mut operands = 0;
    let mut i = 0;
    let mut options_done = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg.shape.multi || (!options_done && arg.shape.start_unknown) {
            return refused(format!("`{}` is only known at run time", arg.text));
        }
        let text = arg
            .text
            .strip_prefix('-')
            .filter(|t| t.starts_with('-'))
            .unwrap_or(arg.text);
        if options_done || !text.starts_with('-') || text == "-" {
            operands += 1;
            continue;
        }
        if text == "--" {
            options_done = true;
        } else if FLAGS.contains(&text) || MORE_FLAGS.contains(&text) {
        } else if text.chars().nth(1).is_some_and(|c| VALUES.contains(&c)) {
            // `-c 8` or `-c8` (and `-cols 8`: xxd matches by prefix).
            let attached = text.len() > 2 && !text[1..].chars().all(|c| c.is_ascii_alphabetic());
            if !attached {
                i += 1;
            }
        } else {
            return refused(format!("xxd's `{}` is not known to only read", arg.text));
        }
    }
    if operands > 1 {
        return refused("`xxd IN OUT` writes OUT");
    }
    Ok(())
}

/// shellgate's own subcommands that only read: `status`, `log`, `log verify`, `doctor`, `mode`
/// and `permissions` without an argument, `auto-review status`, `rules`, `config show`,
/// `config check`, `exit-codes`, `--version`, `--help`.
fn shellgate(args: &[Arg]) -> Result<(), Refusal> {
    if args.iter().any(|a| a.shape.multi || a.shape.start_unknown) {
        return refused("a shellgate argument is only known at run time");
    }
    let texts: Vec<&str> = args.iter().map(|a| a.text).collect();
    // Only a subcommand the table says has forms that only read; the forms follow.
    if let Some(sub) = texts.first().filter(|t| !t.starts_with('-'))
        && !super::own_commands::lookup(sub).is_some_and(|own| own.reads_only)
    {
        return refused("this shellgate command is not one that only reads");
    }
    // Options and their values, after the subcommand words.
    let only = |rest: &[&str], flags: &[&str], values: &[&str]| {
        let mut i = 0;
        while let Some(a) = rest.get(i) {
            let name = a.split_once('=').map_or(*a, |(n, _)| n);
            if flags.contains(a) {
                i += 1;
            } else if values.contains(&name) {
                i += if a.contains('=') { 1 } else { 2 };
            } else {
                return false;
            }
        }
        i <= rest.len()
    };
    let read_only = match texts.as_slice() {
        ["--version" | "-V" | "--help" | "-h" | "help"] | ["exit-codes"] => true,
        ["status" | "doctor", rest @ ..] => only(rest, &["--json"], &[]),
        ["mode" | "permissions", rest @ ..] => only(rest, &["--json"], &[]),
        ["log", "verify", rest @ ..] => only(rest, &["--json"], &["--session"]),
        ["log", rest @ ..] => only(
            rest,
            &["--json", "--follow"],
            &["--session", "--since", "--limit"],
        ),
        ["auto-review", "status", rest @ ..] => only(rest, &["--json"], &["--session"]),
        ["rules", rest @ ..] => only(rest, &["--json"], &["--cwd"]),
        ["config", "show" | "check", rest @ ..] => only(rest, &["--json"], &["--cwd"]),
        _ => false,
    };
    if read_only {
        Ok(())
    } else {
        refused("this shellgate command is not one that only reads")
    }
}

/// Tools whose `--version`/`--help` (and, for a few, `-V`/`version`) only print.
const VERSION_TOOLS: [&str; 52] = [
    "cargo",
    "rustc",
    "rustup",
    "rustfmt",
    "clippy-driver",
    "node",
    "npm",
    "npx",
    "pnpm",
    "yarn",
    "deno",
    "bun",
    "python",
    "python3",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "go",
    "java",
    "javac",
    "gcc",
    "g++",
    "cc",
    "c++",
    "clang",
    "clang++",
    "make",
    "cmake",
    "ninja",
    "meson",
    "git",
    "ruby",
    "gem",
    "bundle",
    "perl",
    "php",
    "composer",
    "dotnet",
    "docker",
    "podman",
    "kubectl",
    "terraform",
    "gh",
    "bash",
    "zsh",
    "fish",
    "curl",
    "wget",
    "ssh",
    "tmux",
    "jq",
];

/// `<tool> --version` and `<tool> --help` (and `go version`, `ssh -V`, `python -V`).
fn version_or_help(program: &str, args: &[Arg]) -> Result<(), Refusal> {
    let texts: Vec<&str> = args.iter().map(|a| a.text).collect();
    let tool = VERSION_TOOLS.contains(&program);
    let printing = match texts.as_slice() {
        ["--version" | "--help"] => tool,
        ["-V"] => matches!(
            program,
            "ssh" | "python" | "python3" | "cargo" | "rustc" | "tmux"
        ),
        ["version"] => matches!(
            program,
            "go" | "cargo" | "rustup" | "dotnet" | "terraform" | "kubectl"
        ),
        ["-v"] => matches!(program, "node" | "npm" | "perl" | "ruby" | "php"),
        ["version", "--client"] => program == "kubectl",
        _ => false,
    };
    if printing
        && args
            .iter()
            .all(|a| !a.shape.multi && !a.shape.start_unknown)
    {
        Ok(())
    } else {
        refused(format!("`{program}` is not a program known to only read"))
    }
}

/// `declare -p [NAME…]`, `export -p`, `typeset -f`: only print.
fn listing_declaration(args: &[Arg]) -> Result<(), Refusal> {
    let options: Vec<&str> = args
        .iter()
        .map(|a| a.text)
        .filter(|t| t.starts_with(['-', '+']))
        .collect();
    let names_only = args
        .iter()
        .all(|a| !a.shape.multi && !a.shape.start_unknown && !a.text.contains('='));
    if names_only && crate::parse::hooks::declaration_lists(&options) {
        Ok(())
    } else {
        refused("the declaration sets or changes variables")
    }
}

/// `set -o`, `trap -p`, `shopt`, `bind -P`, `alias`, `hash`, … in their listing forms only (see
/// [`crate::parse::hooks::builtin_changes_hooks`]).
fn shell_listing(program: &str, c: &Command) -> Result<(), Refusal> {
    let words: Vec<crate::parse::words::Word> = c
        .argv
        .iter()
        .zip(c.shapes.iter())
        .map(|(text, shape)| {
            if shape.multi || shape.start_unknown {
                crate::parse::words::Word::dynamic(text.clone())
            } else {
                crate::parse::words::Word::literal(text.clone())
            }
        })
        .collect();
    let prints = match program {
        // `set ARGS` sets the positional parameters (or options).
        "set" => match c.argv.as_slice() {
            [] => true,
            [option] => option == "-o" || option == "+o",
            _ => false,
        },
        "history" => c
            .argv
            .iter()
            .all(|a| a.chars().all(|ch| ch.is_ascii_digit())),
        _ => !crate::parse::hooks::builtin_changes_hooks(program, &words),
    };
    if prints && !c.extra_args {
        Ok(())
    } else {
        refused(format!(
            "`{program}` with these arguments changes the shell"
        ))
    }
}

/// PowerShell's read-only cmdlets and their aliases (compared case-insensitively).
const READ_ONLY_PWSH: [&str; 42] = [
    "get-childitem",
    "gci",
    "dir",
    "get-content",
    "gc",
    "type",
    "get-location",
    "gl",
    "get-item",
    "gi",
    "select-string",
    "sls",
    "measure-object",
    "measure",
    "get-date",
    "test-path",
    "resolve-path",
    "get-command",
    "gcm",
    "write-output",
    "write",
    "get-process",
    "gps",
    "split-path",
    "join-path",
    "sort-object",
    "select-object",
    "select",
    "where-object",
    "where",
    "format-table",
    "ft",
    "format-list",
    "fl",
    "out-string",
    "get-member",
    "gm",
    "convertto-json",
    "convertfrom-json",
    "get-filehash",
    "get-itemproperty",
    "get-help",
];

fn is_pwsh_read_only(program: &str) -> bool {
    let lower = program.to_ascii_lowercase();
    READ_ONLY_PWSH.contains(&lower.as_str())
}

/// A read-only cmdlet; `Get-Help -Online` opens a browser.
fn pwsh_cmdlet(program: &str, args: &[Arg]) -> Result<(), Refusal> {
    let online = program.eq_ignore_ascii_case("get-help")
        && args
            .iter()
            .any(|a| a.text.to_ascii_lowercase().starts_with("-o"));
    if online {
        refused("`Get-Help -Online` starts a browser")
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
