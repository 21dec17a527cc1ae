//! Known-safe lines and the lines that must not be, through the real parser.

use super::*;
use crate::parse::{ShellKind, parse};

fn safe_in(line: &str, shell: ShellKind) -> bool {
    let p = parse(line, shell);
    let facts = LineFacts::of(&p, shell);
    !p.commands.is_empty() && p.commands.iter().all(|c| is_known_safe(c, &facts))
}

fn safe(line: &str) -> bool {
    safe_in(line, ShellKind::Bash)
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
        "git --no-pager log",
        "git log -p",
        "git show -p HEAD",
        "git diff -p",
        "find . -name '*.rs'",
        "find . -type f -newer Cargo.toml -print",
        "find src -maxdepth 2 \\( -name '*.rs' -o -name '*.toml' \\)",
        "wc -l x",
        "echo hi",
        "pwd",
        "stat x",
        "which git",
        "uname -a",
        "id",
        "whoami",
        "date",
        "date +%s",
        "head -n 5 f",
        "sort f",
        "command -v git",
        "/usr/bin/ls -la",
        "/bin/cat x",
        "cat < in.txt",
        // Issue 12's friction list.
        "jq . f.json",
        "jq -r '.name' package.json",
        "tree",
        "tree -L 2 src",
        "ps aux",
        "ps -ef",
        "printenv PATH",
        "cargo --version",
        "git blame src/main.rs",
        "git rev-parse HEAD",
        "git remote -v",
        "git ls-files",
        "git stash list",
        "git tag -l",
        "sed -n 1,40p f",
        "sed -n '/fn main/,/^}/p' src/main.rs",
        "awk '{print $1}' f",
        "xxd f",
        "xxd -l 64 f",
        "while read -r line; do echo \"$line\"; done < f",
        "shellgate status",
        "shellgate log",
        "shellgate log verify",
        "shellgate doctor",
        "shellgate mode",
        "shellgate auto-review status",
        "shellgate rules",
        "shellgate config show",
        "shellgate exit-codes",
        // Listings of shell state.
        "declare -p PS0",
        "set -o",
        "trap -p",
        "shopt",
        "bind -P",
        "alias",
        // Through transparent wrappers.
        "env LC_ALL=C sort f",
        "timeout 5 cat f",
        "bash -c 'ls -la'",
        "find . -name '*.rs' | xargs grep -n -- foo",
    ] {
        assert!(safe(line), "{line}");
    }
}

#[test]
fn writing_or_running_forms_are_not() {
    for line in [
        // What prints the environment is judged like `printenv` alone (policy::environment).
        "export -p",
        "set",
        "declare -p",
        "declare -p GH_TOKEN",
        "jq -n env",
        "awk 'BEGIN { print ENVIRON[\"GH_TOKEN\"] }'",
        "echo \"$AWS_SECRET_ACCESS_KEY\"",
        "printenv GH_TOKEN",
        "git branch new-feature",
        "git branch -D x",
        "git checkout status",
        "git -c core.pager=sh log",
        "git -p log",
        "git --paginate log",
        "git -C x -p log",
        "git -C x status",
        "git log --output=x",
        "git diff --ext-diff",
        "git push",
        "git commit -m x",
        "git reset --hard",
        "find . -delete",
        "find . -exec rm {} ;",
        "find . -fprint out",
        "find . -newer x -okdir rm {} +",
        "rg --pre sh foo",
        "sort -o out f",
        "uniq in out",
        "date -s now",
        "date 010100002030",
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
        // Issue 12: clusters, abbreviations, operands, `script`, `jobs -x`.
        "sort -uo f x",
        "sort --outp=f x",
        "sort --co=cat x",
        "date -us '2020-01-01'",
        "date --s=now",
        "file -kC -m x",
        "uniq - OUT",
        "uniq -c - OUT",
        "script -c ls out.txt",
        "script -qc ls",
        "jobs -x rm -rf src",
        "tree -o out",
        "xxd f out",
        "xxd -r dump bin",
        "jq -f prog.jq f.json",
        "sed -n 'w out' f",
        "awk '{print > \"out\"}' f",
        "awk '{system(\"id\")}' f",
        "ps e",
        "ps auxe",
        // Braces and options hidden in variables.
        "find . {-delete,}",
        "rg {--pre,sh} x",
        "d=-delete; find . $d",
        "find . \"$d\"",
        "rg ${p:---pre=sh} x",
        "find . $(echo -delete)",
        "sort * ",
        "ls | xargs find .",
        // Functions on the line.
        "rm() { :; }; env rm -rf src",
        "ls() { rm -rf src; }; ls",
        "false && cat() { :; }; cat f",
        // Configured git and ripgrep.
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=./x git status",
        "export GIT_DIR=/tmp/x; git status",
        "HOME=. git status",
        "XDG_CONFIG_HOME=. git log",
        "cd /tmp/other && git status",
        "RIPGREP_CONFIG_PATH=./rc rg foo",
        // Wrappers that change who, where or how.
        "sudo cat /etc/hosts",
        "chroot /mnt ls",
        "unshare -r ls",
        "strace -f ls",
        "nohup ls",
        "flock /tmp/l ls",
        "time -o t.txt ls",
        // Shell state changes.
        "set -o vi",
        "trap 'x' DEBUG",
        "shopt -s extdebug",
        "bind -x '\"\\C-m\": x'",
        "alias ls=rm",
        "declare PS0=x",
        // shellgate itself.
        "shellgate mode full",
        "shellgate auto-review off",
        "shellgate panel",
        "shellgate check -- ls",
    ] {
        assert!(!safe(line), "{line}");
    }
}

#[test]
fn powershell_read_only_cmdlets() {
    assert!(safe_in(
        "Get-ChildItem . | Select-String foo; get-content x",
        ShellKind::Pwsh
    ));
    assert!(!safe_in("Remove-Item x", ShellKind::Pwsh));
    assert!(!safe_in("Get-Help ls -Online", ShellKind::Pwsh));
    assert!(safe_in("git status", ShellKind::Pwsh));
}
