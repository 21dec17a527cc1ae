//! Known-safe commands: read-only programs (and read-only forms of a few others) that the rules
//! allow without review, when every command on a line is one of them and nothing writes a file.
//!
//! The list is deliberately short; every entry is read-only for all of its arguments except the
//! ones excluded below (options that write files, run programs or change system state).

use crate::parse::Command;

/// Programs that only read, whatever their arguments (beyond the exclusions in [`is_known_safe`]).
const READ_ONLY: [&str; 55] = [
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "pwd",
    "echo",
    "printf",
    "stat",
    "which",
    "uname",
    "id",
    "whoami",
    "date",
    "true",
    "false",
    "test",
    "[",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "cut",
    "tr",
    "sort",
    "uniq",
    "nl",
    "tac",
    "rev",
    "seq",
    "expr",
    "du",
    "df",
    "diff",
    "cmp",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "cd",
    "file",
    // Navigation and job control: they start nothing new (`fg` resumes a line already approved).
    "pushd",
    "popd",
    "dirs",
    "jobs",
    "fg",
    "bg",
    "wait",
    "exit",
    "logout",
    ":",
];

/// PowerShell's read-only cmdlets and their common aliases (compared case-insensitively).
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

/// Is the program one whose purpose is only to read? (Used where a path is merely looked at.)
pub fn is_read_only_program(c: &Command) -> bool {
    is_system_program(c)
        && (READ_ONLY.contains(&c.program.as_str()) || is_pwsh_read_only(&c.program))
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

fn is_pwsh_read_only(program: &str) -> bool {
    let lower = program.to_ascii_lowercase();
    READ_ONLY_PWSH.contains(&lower.as_str())
}

/// bash opens a redirection to `/dev/tcp/HOST/PORT` or `/dev/udp/…` as a network connection.
pub fn is_network_path(path: &str) -> bool {
    path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/")
}

/// Is this one command known to be read-only with these arguments?
pub fn is_known_safe(c: &Command) -> bool {
    if !c.writes.is_empty() || !is_system_program(c) {
        return false;
    }
    if c.reads.iter().any(|r| is_network_path(r)) {
        return false;
    }
    let args: Vec<&str> = c.argv.iter().map(String::as_str).collect();
    match c.program.as_str() {
        "find" => find_is_safe(&args),
        "git" => git_is_safe(&args),
        "rg" => !args.iter().any(|a| {
            a.starts_with("--pre")
                || a.starts_with("--hostname-bin")
                || *a == "-z"
                || *a == "--search-zip"
        }),
        // `--compress-program=PROG` runs PROG on the temporary files of a large sort.
        "sort" => !args.iter().any(|a| {
            a.starts_with("-o") || a.starts_with("--output") || a.starts_with("--compress-program")
        }),
        // `uniq IN OUT` writes OUT.
        "uniq" => args.iter().filter(|a| !a.starts_with('-')).count() <= 1,
        "date" => !args
            .iter()
            .any(|a| a.starts_with("-s") || a.starts_with("--set")),
        "file" => !args
            .iter()
            .any(|a| a.starts_with("-C") || *a == "--compile"),
        // `printf -v NAME` assigns a shell variable (and evaluates a subscript in NAME).
        "printf" => !args.first().is_some_and(|a| a.starts_with("-v")),
        "command" => args.first().is_some_and(|a| *a == "-v" || *a == "-V"),
        "hostname" | "tty" | "groups" => args.is_empty(),
        "type" => true,
        p if READ_ONLY.contains(&p) => true,
        p => is_pwsh_read_only(p),
    }
}

/// `find` without the actions that run programs, delete or write files.
fn find_is_safe(args: &[&str]) -> bool {
    const UNSAFE: [&str; 10] = [
        "-exec",
        "-execdir",
        "-ok",
        "-okdir",
        "-delete",
        "-fls",
        "-fprint",
        "-fprint0",
        "-fprintf",
        "-prune-and-delete",
    ];
    !args.iter().any(|a| UNSAFE.contains(a))
}

/// Read-only git: `status`, `log`, `diff`, `show`, and `branch` in its listing forms, with no
/// global option that can run code (`-c`, `--config-env`, `--exec-path`) and no option that writes
/// a file or starts a pager or external tool.
fn git_is_safe(args: &[&str]) -> bool {
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "-C" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            "--no-pager" | "--no-optional-locks" | "--bare" | "--literal-pathspecs" => i += 1,
            a if a.starts_with("--git-dir=") || a.starts_with("--work-tree=") => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else {
        return false;
    };
    let rest = &args[i + 1..];
    // `-p`/`--paginate` start a pager only before the subcommand, where the loop above stops at
    // them and they are not a known subcommand; after `log`/`show`/`diff`, `-p` means a patch.
    const WRITES_OR_RUNS: [&str; 4] = ["--output", "--ext-diff", "--textconv", "--exec"];
    if rest.iter().any(|a| {
        WRITES_OR_RUNS.iter().any(|w| {
            a.strip_prefix(w)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
        })
    }) {
        return false;
    }
    match *sub {
        "status" | "log" | "diff" | "show" => true,
        "branch" => rest.iter().all(|a| {
            matches!(
                *a,
                "--list"
                    | "-l"
                    | "-a"
                    | "--all"
                    | "-r"
                    | "--remotes"
                    | "-v"
                    | "-vv"
                    | "--verbose"
                    | "--show-current"
                    | "--no-color"
                    | "--color"
            ) || a.starts_with("--format=")
                || a.starts_with("--sort=")
                || a.starts_with("--contains")
                || a.starts_with("--merged")
                || a.starts_with("--no-merged")
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ShellKind, parse};

    fn safe(line: &str) -> bool {
        let p = parse(line, ShellKind::Bash);
        !p.commands.is_empty() && p.commands.iter().all(is_known_safe)
    }

    #[test]
    fn read_only_commands_are_safe() {
        for line in [
            "ls -la",
            "cat a b",
            "grep -rn foo src",
            "rg -n foo",
            "git status",
            "git log --oneline -5",
            "git diff HEAD~1",
            "git show HEAD",
            "git branch",
            "git branch --list",
            "git branch --show-current",
            "git -C sub status",
            "git --no-pager log",
            "git log -p",
            "git show -p HEAD",
            "git diff -p",
            "find . -name '*.rs'",
            "wc -l x",
            "echo hi",
            "pwd",
            "stat x",
            "which git",
            "uname -a",
            "id",
            "whoami",
            "date",
            "head -n 5 f",
            "sort f",
            "command -v git",
            "/usr/bin/ls -la",
            "/bin/cat x",
            "cat < in.txt",
        ] {
            assert!(safe(line), "{line}");
        }
    }

    #[test]
    fn writing_or_running_forms_are_not() {
        for line in [
            "git branch new-feature",
            "git branch -D x",
            "git checkout status",
            "git -c core.pager=sh log",
            "git -p log",
            "git --paginate log",
            "git -C x -p log",
            "git log --output=x",
            "git diff --ext-diff",
            "git push",
            "git commit -m x",
            "git reset --hard",
            "find . -delete",
            "find . -exec rm {} ;",
            "find . -fprint out",
            "rg --pre sh foo",
            "sort -o out f",
            "uniq in out",
            "date -s now",
            "hostname evil",
            "command rm x",
            "rm x",
            "cargo build",
            "sed -i s/a/b/ f",
            "env",
            "printenv",
            "tee x",
            "curl x",
            "ls > out",
            "printf -v x %s y",
            "printf -vx %s y",
            "./ls",
            "/tmp/evil/cat x",
            "bin/echo hi",
            "/usr/bin/../../tmp/ls",
            "sort --compress-program=./c.sh -S 16K in.txt",
            "sort --compress-program ./c.sh in.txt",
            "cat </dev/tcp/example.invalid/80",
            "cat 0</dev/udp/example.invalid/53",
        ] {
            assert!(!safe(line), "{line}");
        }
    }

    #[test]
    fn powershell_read_only_cmdlets() {
        let p = parse(
            "Get-ChildItem . | Select-String foo; get-content x",
            ShellKind::Pwsh,
        );
        assert!(p.commands.iter().all(is_known_safe));
        let p = parse("Remove-Item x", ShellKind::Pwsh);
        assert!(!p.commands.iter().all(is_known_safe));
    }
}
