//! Lines that destroy work inside the workspace, which the workspace-write sandbox lets through:
//! recursive removal of the workspace or its sources, and git commands that throw away changes or
//! rewrite history.
//!
//! The sandbox contains a line to the workspace, so what it can still lose is the workspace
//! itself. `builtin.workspace-destructive` sends such lines to whoever approves lines: every
//! recursive removal but of a temporary directory (`rm -rf src`, `rm -rf .`, `rm -rf *`,
//! `rm -r "$dir"`, and build output too: what `rm -r` removes cannot be brought back), `rm` of a
//! pattern outside build output (`rm *.rs`; `rm *.o` is fine), `find … -delete` without a name
//! test, `git reset --hard`, `git clean -f…`, `git push --force`, `git rebase`,
//! `git filter-branch`/`filter-repo`, `git reflog expire/delete`, `git checkout [REV] -- PATH`,
//! `git restore PATH` (not `--staged` alone), `git stash drop/clear`, `git branch -D` and
//! `git gc --prune=now`.

use crate::parse::Command;

/// Directories that hold build output, caches and dependencies: removing them loses nothing a
/// build cannot make again.
const ARTIFACT_DIRS: [&str; 28] = [
    "target",
    "build",
    "dist",
    "out",
    "_build",
    "node_modules",
    ".cache",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    "coverage",
    ".coverage",
    "htmlcov",
    ".next",
    ".nuxt",
    ".turbo",
    ".parcel-cache",
    ".gradle",
    "bin",
    "obj",
    "tmp",
    "temp",
    ".eggs",
    "shellgate-eval",
    ".venv",
];

/// Extensions of files that are build output or leftovers (`rm *.o`, `rm -f *.log`).
const JUNK_EXTENSIONS: [&str; 14] = [
    "o", "a", "so", "pyc", "pyo", "class", "log", "tmp", "bak", "orig", "rej", "swp", "out", "d",
];

/// Is `path` build output, or outside the workspace in a temporary directory?
fn is_artifact(path: &str) -> bool {
    let path = path.trim_start_matches("./");
    if is_temporary(path) {
        return true;
    }
    let first = path.split('/').next().unwrap_or("");
    (ARTIFACT_DIRS.contains(&first) || first.ends_with(".egg-info")) && !path.contains("..")
}

fn is_pattern(path: &str) -> bool {
    path.contains(['*', '?', '['])
}

/// `*.o`, `build/*.log`: a pattern of junk files only.
fn is_junk_pattern(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.strip_prefix("*.")
        .is_some_and(|ext| JUNK_EXTENSIONS.contains(&ext))
}

/// Why the command destroys work in the workspace, if it does.
pub fn destroys_work(c: &Command) -> Option<String> {
    if let Some(paths) = super::rules::remove_item_recursive_paths(c) {
        return paths
            .iter()
            .find(|p| !is_temporary(p))
            .map(|p| {
                format!(
                    "`Remove-Item -Recurse` removes `{}`",
                    crate::intake::visible(p)
                )
            })
            .or_else(|| {
                paths
                    .is_empty()
                    .then(|| "`Remove-Item -Recurse`".to_owned())
            });
    }
    match c.program.as_str() {
        "rm" => rm(c),
        "find" => find_delete(c),
        "git" => git(c),
        "mv" => moves_out(c),
        _ => None,
    }
}

/// `mv src /tmp/x`: moving work into a temporary directory takes it out of the workspace (and a
/// later `rm -rf /tmp/x` would not be asked about).
fn moves_out(c: &Command) -> Option<String> {
    let mut target = None;
    let mut operands = Vec::new();
    let mut words = c.argv.iter();
    while let Some(word) = words.next() {
        if word == "-t" || word == "--target-directory" {
            target = words.next().map(String::as_str);
        } else if let Some(dir) = word.strip_prefix("--target-directory=") {
            target = Some(dir);
        } else if !word.starts_with('-') {
            operands.push(word.as_str());
        }
    }
    let target = match target {
        Some(dir) => dir,
        None => operands.pop()?,
    };
    let temporary = is_temporary(target) || matches!(target, "/tmp" | "/var/tmp" | "$TMPDIR");
    let source = operands.into_iter().find(|s| !is_temporary(s));
    match (temporary, source) {
        (true, Some(source)) => Some(format!(
            "`mv` moves `{}` out of the workspace",
            crate::intake::visible(source)
        )),
        _ => None,
    }
}

/// System directories: the sandbox lets nothing write there. (`/srv` is not one: projects live
/// there, and it may be a workspace.)
const SYSTEM_PREFIXES: [&str; 13] = [
    "/etc/",
    "/usr/",
    "/bin/",
    "/sbin/",
    "/lib/",
    "/lib64/",
    "/boot/",
    "/opt/",
    "/root/",
    "/var/lib/",
    "/var/log/",
    "/sys/",
    "/proc/",
];

/// The line's own open descriptors by their `/proc` name (`/proc/self/fd/1`,
/// `/proc/thread-self/fd/2`): the same as `>&1`, not a system file.
fn is_own_descriptor(path: &str) -> bool {
    ["/proc/self/fd/", "/proc/thread-self/fd/"]
        .iter()
        .filter_map(|p| path.strip_prefix(p))
        .any(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Devices that are not written to as files (`> /dev/null` is fine).
fn is_system_file(path: &str) -> bool {
    if is_own_descriptor(path) {
        return false;
    }
    let under = SYSTEM_PREFIXES
        .iter()
        .any(|p| path.starts_with(p) || path == p.trim_end_matches('/'));
    let device = path.starts_with("/dev/")
        && !matches!(
            path,
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero"
        )
        && !path.starts_with("/dev/fd/")
        && !path.starts_with("/dev/tcp/")
        && !path.starts_with("/dev/udp/");
    under || device
}

/// Programs that write the files they are given (the destination for `cp`, `mv`, `install` and
/// `ln`: their last operand).
fn written_operands(c: &Command) -> Vec<&str> {
    let writes = matches!(
        c.program.as_str(),
        "cp" | "mv"
            | "install"
            | "ln"
            | "rsync"
            | "tee"
            | "touch"
            | "truncate"
            | "chmod"
            | "chown"
            | "chgrp"
            | "rm"
            | "rmdir"
            | "mkdir"
            | "shred"
            | "patch"
            | "unlink"
            | "sed"
            | "perl"
            | "dd"
    );
    if !writes {
        return Vec::new();
    }
    let operands: Vec<&str> = c
        .argv
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with('-'))
        .collect();
    match c.program.as_str() {
        "cp" | "mv" | "install" | "ln" | "rsync" => operands.last().copied().into_iter().collect(),
        "tee" | "touch" | "truncate" | "chmod" | "chown" | "chgrp" | "rm" | "rmdir" | "mkdir"
        | "shred" | "patch" | "unlink" => operands,
        "sed" | "perl"
            if c.argv
                .iter()
                .any(|a| a.starts_with("-i") || a == "--in-place") =>
        {
            operands
        }
        "dd" => c
            .argv
            .iter()
            .filter_map(|a| a.strip_prefix("of="))
            .collect(),
        _ => Vec::new(),
    }
}

/// Why the line writes system files, if it does.
pub fn writes_system_files(parsed: &crate::parse::Parsed) -> Option<String> {
    if let Some(file) = parsed.writes.iter().find(|w| is_system_file(w)) {
        return Some(format!(
            "a redirection writes `{}`",
            crate::intake::visible(file)
        ));
    }
    parsed.commands.iter().find_map(|c| {
        written_operands(c)
            .into_iter()
            .find(|p| is_system_file(p))
            .map(|p| format!("`{}` writes `{}`", c.program, crate::intake::visible(p)))
    })
}

fn rm(c: &Command) -> Option<String> {
    let mut recursive = false;
    let mut operands = Vec::new();
    let mut options_done = false;
    for (i, a) in c.argv.iter().enumerate() {
        if !options_done && a == "--" {
            options_done = true;
        } else if !options_done && a.starts_with("--") {
            recursive |= a == "--recursive";
        } else if !options_done && a.starts_with('-') && a.len() > 1 {
            recursive |= a.contains(['r', 'R']);
        } else {
            operands.push((a, c.shapes.get(i).copied().unwrap_or_default()));
        }
    }
    // Recursive removal cannot be undone, build output included (`rm -rf node_modules` is
    // dcg's example too): only temporary directories are exempt. A path only known at run time
    // (`"$DIR"`) is not known to be one.
    if recursive {
        let lost = operands.iter().find(|(path, _)| !is_temporary(path));
        return match (lost, operands.is_empty()) {
            (Some((path, _)), _) => Some(format!(
                "`rm` removes `{}` recursively",
                crate::intake::visible(path)
            )),
            (None, true) => Some("`rm -r` removes what it is given recursively".to_owned()),
            (None, false) => None,
        };
    }
    let lost = operands.iter().find(|(path, shape)| {
        (is_pattern(path) || shape.multi) && !is_artifact(path) && !is_junk_pattern(path)
    });
    lost.map(|(path, _)| {
        format!(
            "`rm` removes every file `{}` matches",
            crate::intake::visible(path)
        )
    })
}

/// Below `/tmp`, `/var/tmp` or `$TMPDIR`, outside the workspace.
fn is_temporary(path: &str) -> bool {
    ["/tmp/", "/var/tmp/", "$TMPDIR/", "${TMPDIR}/"]
        .iter()
        .any(|t| path.starts_with(t) && path.len() > t.len())
        && !path.contains("..")
}

/// `find … -delete` or `-exec rm …`, unless it starts in build output or a temporary directory.
fn find_delete(c: &Command) -> Option<String> {
    let deletes = c.argv.iter().any(|a| a == "-delete")
        || c.argv
            .windows(2)
            .any(|w| w[0].starts_with("-exec") && w[1] == "rm");
    if !deletes {
        return None;
    }
    // A name test does not make it safe: `find src -name '*.rs' -delete` removes the sources.
    let starts: Vec<&String> = c
        .argv
        .iter()
        .take_while(|a| !a.starts_with('-') && !a.starts_with('(') && *a != "!")
        .collect();
    let in_artifacts = !starts.is_empty() && starts.iter().all(|s| is_artifact(s));
    (!in_artifacts).then(|| "`find` deletes the files it finds".to_owned())
}

fn git(c: &Command) -> Option<String> {
    let words: Vec<&str> = c.argv.iter().map(String::as_str).collect();
    // Skip git's own options before the subcommand (`-C dir`, `-c x=y`, `--git-dir=…`).
    let mut i = 0;
    while let Some(w) = words.get(i) {
        match *w {
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace" | "--config-env" => i += 2,
            w if w.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let sub = *words.get(i)?;
    let rest = &words[i + 1..];
    // git's parse-options takes an unambiguous abbreviation of a long option (`--ha` is
    // `--hard`): any `--prefix` of at least three letters of a listed long option counts.
    let has = |flags: &[&str]| {
        rest.iter().any(|w| {
            flags.iter().any(|f| {
                *w == *f
                    || (f.starts_with("--")
                        && w.starts_with("--")
                        && w.len() >= 4
                        && f.starts_with(w.split('=').next().unwrap_or(w)))
            })
        })
    };
    let short = |c: char| {
        rest.iter()
            .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains(c))
    };
    let everything = |w: &&str| matches!(*w, "." | "./" | ":/" | "*" | ":/*" | "./*");
    let why = match sub {
        "reset" if has(&["--hard", "--merge", "--keep"]) => "throws away uncommitted changes",
        "clean" if (short('f') || has(&["--force"])) && !(short('n') || has(&["--dry-run"])) => {
            "deletes untracked files"
        }
        "push"
            if short('f')
                || short('d')
                || has(&["--mirror", "--delete", "--prune", "--force"])
                || rest.iter().any(|w| {
                    w.starts_with("--force") || w.starts_with('+') || w.starts_with(':')
                }) =>
        {
            "overwrites or deletes history on the remote"
        }
        "rebase" if !has(&["--abort", "--quit", "--show-current-patch"]) => "rewrites history",
        "filter-branch" | "filter-repo" => "rewrites history",
        "reflog"
            if rest
                .first()
                .is_some_and(|w| matches!(*w, "expire" | "delete")) =>
        {
            "deletes the reflog, which recovers lost commits"
        }
        "gc" if rest.iter().any(|w| w.starts_with("--prune")) => "deletes unreachable commits",
        // `git checkout [REV] -- PATH…` and `git restore PATH…` (the working tree, the default)
        // overwrite uncommitted changes in those paths.
        "checkout" if has(&["-f", "--force", "--"]) || rest.iter().any(everything) => {
            "throws away uncommitted changes in the working tree"
        }
        "restore" if restores_worktree(rest) => {
            "throws away uncommitted changes in the working tree"
        }
        "switch" if has(&["-f", "--force", "--discard-changes"]) => {
            "throws away changes in the working tree"
        }
        "stash" if rest.first().is_some_and(|w| matches!(*w, "drop" | "clear")) => {
            "deletes stashed changes"
        }
        "branch"
            if short('D')
                || (short('d') && (short('f') || has(&["--force"])))
                || (has(&["--delete"]) && has(&["--force"])) =>
        {
            "deletes a branch that may not be merged"
        }
        "update-ref" => "moves or deletes a ref, which can lose commits",
        "worktree" if rest.first() == Some(&"remove") && (short('f') || has(&["--force"])) => {
            "deletes a worktree with its changes"
        }
        "rm" if (short('r') || has(&["-r"])) && !has(&["--cached"]) => "removes files recursively",
        _ => return None,
    };
    Some(format!("`git {sub}` {why}"))
}

/// `git restore` writes the working tree unless only `--staged`/`-S` is given.
fn restores_worktree(rest: &[&str]) -> bool {
    let short = |c: char| {
        rest.iter()
            .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains(c))
    };
    let staged = short('S') || rest.contains(&"--staged");
    let worktree = short('W') || rest.contains(&"--worktree");
    let paths = rest.iter().any(|w| !w.starts_with('-'));
    paths && (worktree || !staged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ShellKind, parse};

    fn destroys(line: &str) -> bool {
        parse(line, ShellKind::Bash)
            .commands
            .iter()
            .any(|c| destroys_work(c).is_some())
    }

    #[test]
    fn destructive_lines() {
        for line in [
            "rm -rf src",
            "rm -rf .",
            "rm -rf ./",
            "rm -rf *",
            "rm -r .git",
            "rm -fr ..",
            "rm -rf \"$DIR\"",
            "rm --recursive lib",
            "rm -f *",
            "rm *.rs",
            "find . -delete",
            "find . -type f -delete",
            "find src -exec rm {} +",
            "find . -name '*.pyc' -delete",
            "find src -name '*' -delete",
            "git reset --ha",
            "git push --for origin main",
            "git push -d origin old",
            "git branch -Dq x",
            "git update-ref refs/heads/main HEAD~3",
            "mv src /tmp/x",
            "mv -t /tmp src",
            "git reset --hard",
            "git reset --hard HEAD~3",
            "git clean -fdx",
            "git clean -f",
            "git push --force",
            "git push -f origin main",
            "git push --force-with-lease",
            "git push origin +main",
            "git push origin :old",
            "git rebase -i HEAD~5",
            "git rebase main",
            "git filter-branch --tree-filter x",
            "git reflog expire --expire=now --all",
            "git checkout -- .",
            "git checkout .",
            "git checkout -f main",
            "git restore .",
            "git restore --staged --worktree :/",
            "git checkout -- file.txt",
            "git checkout HEAD -- file.txt",
            "git restore file.txt",
            "git restore -W file.txt",
            "rm -rf target",
            "rm -rf node_modules dist",
            "rm -rf ./build",
            "echo yes | rm -rf",
            "git stash drop",
            "git stash clear",
            "git branch -D feature",
            "git branch -df feature",
            "git -C sub reset --hard",
            "git gc --prune=now",
        ] {
            assert!(destroys(line), "{line}");
        }
        for line in [
            "rm -rf /tmp/x",
            "rm -rf \"$TMPDIR/work\"",
            "rm notes.txt",
            "rm -f *.o",
            "rm -f build/*.log",
            "find target -delete",
            "find /tmp/x -name '*.o' -delete",
            "git reset HEAD~1",
            "git reset --soft HEAD~1",
            "git clean -n",
            "git clean -fdn",
            "git push origin main",
            "git rebase --abort",
            "git checkout main",
            "git restore --staged src/main.rs",
            "git stash",
            "git stash pop",
            "git branch -d merged",
            "git rm --cached -r x",
            "ls",
        ] {
            assert!(!destroys(line), "{line}");
        }
    }
}
