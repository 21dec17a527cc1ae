//! Read-only git: the subcommands that only read, each with its read-only options (git 2.47).
//!
//! git runs code configured in its config files (`core.fsmonitor`, `core.pager`, `diff.external`,
//! textconv drivers, hooks). The repository's own config is protected by the sandbox; what a line
//! can add is refused here: `-c`, `--config-env`, `-C DIR`, `--git-dir`, `--work-tree`,
//! `--exec-path`, `--bare` and a pager before the subcommand, and (checked by the caller) `GIT_*`,
//! `HOME` and `XDG_CONFIG_HOME` assigned or exported on the line, or a `cd` on it. After the
//! subcommand `--output`, `--ext-diff`, `--textconv` and `--open-files-in-pager` write or run
//! something; they are listed as unsafe, so abbreviations of them are refused too (git's
//! parse-options accepts unambiguous abbreviations).

use super::options::{Arg, Operands, Refusal, Spec, Style, scan};

/// Global options git reads before the subcommand that only read.
const GLOBAL_FLAGS: [&str; 10] = [
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-advice",
];

/// Is `git ARGS` read-only?
pub fn check(args: &[Arg]) -> Result<(), Refusal> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg.shape.multi || arg.shape.start_unknown {
            return Err(Refusal(format!(
                "`{}` is only known at run time and could be an option",
                arg.text
            )));
        }
        if GLOBAL_FLAGS.contains(&arg.text) {
            i += 1;
            continue;
        }
        if matches!(arg.text, "--version" | "version") && i + 1 == args.len() {
            return Ok(());
        }
        if arg.text.starts_with('-') {
            return Err(Refusal(format!(
                "git's option `{}` can configure it to run code or read another repository",
                arg.text
            )));
        }
        break;
    }
    let Some(sub) = args.get(i) else {
        return Err(Refusal("`git` without a subcommand".to_owned()));
    };
    let rest = &args[i + 1..];
    match sub.text {
        "status" => scan(&STATUS, rest).map(drop),
        "log" | "whatchanged" | "shortlog" | "rev-list" => scan(&LOG, rest).map(drop),
        "show" | "diff" | "diff-tree" | "diff-index" | "diff-files" => scan(&LOG, rest).map(drop),
        "blame" | "annotate" => scan(&BLAME, rest).map(drop),
        "rev-parse" => scan(&REV_PARSE, rest).map(drop),
        "ls-files" => scan(&LS_FILES, rest).map(drop),
        "ls-tree" => scan(&LS_TREE, rest).map(drop),
        "cat-file" => scan(&CAT_FILE, rest).map(drop),
        "show-ref" => scan(&SHOW_REF, rest).map(drop),
        "for-each-ref" => scan(&FOR_EACH_REF, rest).map(drop),
        "describe" => scan(&DESCRIBE, rest).map(drop),
        "merge-base" => scan(&MERGE_BASE, rest).map(drop),
        "name-rev" => scan(&NAME_REV, rest).map(drop),
        "grep" => scan(&GREP, rest).map(drop),
        "check-ignore" => scan(&CHECK_IGNORE, rest).map(drop),
        "count-objects" => scan(&COUNT_OBJECTS, rest).map(drop),
        "branch" => listing(&BRANCH, rest, "branch"),
        "tag" => listing(&TAG, rest, "tag"),
        "remote" => remote(rest),
        "stash" => stash(rest),
        "reflog" => reflog(rest),
        other => Err(Refusal(format!("`git {other}` is not known to only read"))),
    }
}

/// `git branch`/`git tag` list only without operands, or with `-l`/`--list` (then the operands
/// are patterns); with a name they create.
fn listing(spec: &Spec, args: &[Arg], what: &str) -> Result<(), Refusal> {
    let found = scan(spec, args)?;
    if found.operands.is_empty() || found.has("l") || found.has("list") {
        Ok(())
    } else {
        Err(Refusal(format!("`git {what}` with a name creates one")))
    }
}

/// `git remote`, `git remote -v`, `git remote get-url NAME`; `git remote show -n NAME` (without
/// `-n` it asks the remote).
fn remote(args: &[Arg]) -> Result<(), Refusal> {
    let texts: Vec<&str> = args.iter().map(|a| a.text).collect();
    if args.iter().any(|a| a.shape.multi || a.shape.start_unknown) {
        return Err(Refusal(
            "`git remote` with an argument only known at run time".to_owned(),
        ));
    }
    match texts.as_slice() {
        [] | ["-v" | "--verbose"] => Ok(()),
        ["get-url", rest @ ..]
            if rest
                .iter()
                .all(|a| matches!(*a, "--push" | "--all") || !a.starts_with('-')) =>
        {
            Ok(())
        }
        ["show", "-n", rest @ ..] if rest.iter().all(|a| !a.starts_with('-')) => Ok(()),
        _ => Err(Refusal(
            "this `git remote` form changes remotes or contacts one".to_owned(),
        )),
    }
}

/// `git stash list [log options]` and `git stash show [diff options] [STASH]`.
fn stash(args: &[Arg]) -> Result<(), Refusal> {
    match args.first().map(|a| a.text) {
        Some("list" | "show") => scan(&LOG, &args[1..]).map(drop),
        _ => Err(Refusal(
            "only `git stash list` and `git stash show` only read".to_owned(),
        )),
    }
}

/// `git reflog [show] [log options]`, `git reflog exists REF`; not `expire` or `delete`.
fn reflog(args: &[Arg]) -> Result<(), Refusal> {
    match args.first().map(|a| a.text) {
        None => Ok(()),
        Some("show") => scan(&LOG, &args[1..]).map(drop),
        Some("exists") => scan(&PATHS, &args[1..]).map(drop),
        Some(a) if a.starts_with('-') => scan(&LOG, args).map(drop),
        Some(_) => Err(Refusal(
            "`git reflog expire/delete` rewrites the reflog".to_owned(),
        )),
    }
}

/// git's parse-options: options anywhere until `--`, unambiguous abbreviations of long options.
const fn git(flags: &'static str, values: &'static str, long: &'static [&'static str]) -> Spec {
    Spec {
        flags,
        values,
        optional: "",
        long,
        long_unsafe: &UNSAFE,
        operands: Operands::Any,
        style: Style::Gnu,
        numbers: false,
    }
}

/// Options that write a file or run a program, wherever they appear.
const UNSAFE: [&str; 6] = [
    "output",
    "output-directory",
    "ext-diff",
    "textconv",
    "open-files-in-pager",
    "exec",
];

const PATHS: Spec = git("", "", &[]);

const STATUS: Spec = Spec {
    optional: "u",
    ..git(
        "bsvz",
        "",
        &[
            "ahead-behind",
            "branch",
            "column?",
            "find-renames?",
            "ignore-submodules?",
            "ignored?",
            "long",
            "no-ahead-behind",
            "no-column",
            "no-renames",
            "null",
            "porcelain?",
            "renames",
            "short",
            "show-stash",
            "untracked-files?",
            "verbose",
        ],
    )
};

/// `log`, `show`, `diff` and the other history and diff commands: revision and diff options.
const LOG: Spec = Spec {
    optional: "BCMU",
    numbers: true,
    ..git(
        "0123abcDEFghimpqRrstuwWz",
        "GILlnOS",
        &[
            "abbrev-commit",
            "abbrev?",
            "after=",
            "all",
            "all-match",
            "alternate-refs",
            "anchored=",
            "ancestry-path?",
            "author-date-order",
            "author=",
            "base",
            "basic-regexp",
            "before=",
            "binary",
            "bisect",
            "boundary",
            "branches?",
            "break-rewrites?",
            "cached",
            "cc",
            "check",
            "cherry",
            "cherry-mark",
            "cherry-pick",
            "children",
            "clear-decorations",
            "color-moved-ws=",
            "color-moved?",
            "color-words?",
            "color?",
            "combined-all-paths",
            "committer=",
            "compact-summary",
            "count",
            "cumulative",
            "date-order",
            "date=",
            "decorate-refs-exclude=",
            "decorate-refs=",
            "decorate?",
            "default-prefix",
            "dense",
            "diff-algorithm=",
            "diff-filter=",
            "diff-merges=",
            "dirstat-by-file?",
            "dirstat?",
            "do-walk",
            "dst-prefix=",
            "encoding=",
            "exclude-first-parent-only",
            "exclude=",
            "exit-code",
            "expand-tabs?",
            "extended-regexp",
            "find-copies-harder",
            "find-copies?",
            "find-object=",
            "find-renames?",
            "first-parent",
            "fixed-strings",
            "follow",
            "format=",
            "full-diff",
            "full-history",
            "full-index",
            "function-context",
            "glob=",
            "graph",
            "grep-reflog=",
            "grep=",
            "histogram",
            "ignore-all-space",
            "ignore-blank-lines",
            "ignore-cr-at-eol",
            "ignore-matching-lines=",
            "ignore-missing",
            "ignore-space-at-eol",
            "ignore-space-change",
            "ignore-submodules?",
            "indent-heuristic",
            "inter-hunk-context=",
            "invert-grep",
            "irreversible-delete",
            "ita-invisible-in-index",
            "ita-visible-in-index",
            "left-only",
            "left-right",
            "line-prefix=",
            "log-size",
            "mailmap",
            "max-age=",
            "max-count=",
            "max-parents=",
            "merge",
            "merge-base",
            "merges",
            "min-age=",
            "min-parents=",
            "minimal",
            "name-only",
            "name-status",
            "no-abbrev",
            "no-abbrev-commit",
            "no-color",
            "no-color-moved",
            "no-color-moved-ws",
            "no-decorate",
            "no-diff-merges",
            "no-expand-tabs",
            "no-ext-diff",
            "no-indent-heuristic",
            "no-index",
            "no-mailmap",
            "no-max-parents",
            "no-merges",
            "no-min-parents",
            "no-notes",
            "no-patch",
            "no-prefix",
            "no-relative",
            "no-renames",
            "no-textconv",
            "no-use-mailmap",
            "no-walk?",
            "not",
            "notes?",
            "numstat",
            "objects",
            "objects-edge",
            "oneline",
            "ours",
            "parents",
            "patch",
            "patch-with-raw",
            "patch-with-stat",
            "patience",
            "perl-regexp",
            "pickaxe-all",
            "pickaxe-regex",
            "pretty?",
            "quiet",
            "raw",
            "reflog",
            "regexp-ignore-case",
            "relative-date",
            "relative?",
            "remotes?",
            "reverse",
            "right-only",
            "rotate-to=",
            "shortstat",
            "show-linear-break?",
            "show-notes?",
            "show-pulls",
            "show-signature",
            "simplify-by-decoration",
            "simplify-merges",
            "since=",
            "single-worktree",
            "skip-to=",
            "skip=",
            "source",
            "sparse",
            "src-prefix=",
            "staged",
            "stat-count=",
            "stat-graph-width=",
            "stat-name-width=",
            "stat-width=",
            "stat?",
            "stdin",
            "submodule?",
            "summary",
            "tags?",
            "text",
            "theirs",
            "topo-order",
            "unified=",
            "until=",
            "use-mailmap",
            "walk-reflogs",
            "word-diff-regex=",
            "word-diff?",
            "ws-error-highlight=",
        ],
    )
};

const BLAME: Spec = Spec {
    optional: "CM",
    ..git(
        "bcefklnpsStw",
        "L",
        &[
            "abbrev?",
            "color-by-age",
            "color-lines",
            "contents=",
            "date=",
            "encoding=",
            "first-parent",
            "ignore-rev=",
            "ignore-revs-file=",
            "incremental",
            "line-porcelain",
            "minimal",
            "no-progress",
            "porcelain",
            "progress",
            "reverse=",
            "root",
            "score-debug",
            "show-email",
            "show-name",
            "show-number",
            "show-stats",
        ],
    )
};

/// rev-parse reads its arguments one by one, by their full names.
const REV_PARSE: Spec = Spec {
    style: Style::Clap,
    ..git(
        "q",
        "",
        &[
            "abbrev-ref?",
            "absolute-git-dir",
            "after=",
            "all",
            "before=",
            "branches?",
            "default=",
            "disambiguate=",
            "exclude=",
            "flags",
            "git-common-dir",
            "git-dir",
            "git-path=",
            "glob=",
            "is-bare-repository",
            "is-inside-git-dir",
            "is-inside-work-tree",
            "is-shallow-repository",
            "keep-dashdash",
            "local-env-vars",
            "no-flags",
            "no-revs",
            "not",
            "path-format=",
            "prefix=",
            "quiet",
            "remotes?",
            "resolve-git-dir=",
            "revs-only",
            "shared-index-path",
            "short?",
            "show-cdup",
            "show-object-format?",
            "show-prefix",
            "show-ref-format",
            "show-superproject-working-tree",
            "show-toplevel",
            "since=",
            "sq",
            "sq-quote",
            "stop-at-non-option",
            "symbolic",
            "symbolic-full-name",
            "tags?",
            "until=",
            "verify",
        ],
    )
};

const LS_FILES: Spec = git(
    "cdfikmostuvz",
    "xX",
    &[
        "abbrev?",
        "cached",
        "debug",
        "deduplicate",
        "deleted",
        "directory",
        "empty-directory",
        "eol",
        "error-unmatch",
        "exclude-from=",
        "exclude-per-directory=",
        "exclude-standard",
        "exclude=",
        "format=",
        "full-name",
        "ignored",
        "killed",
        "modified",
        "no-empty-directory",
        "others",
        "recurse-submodules",
        "resolve-undo",
        "sparse",
        "stage",
        "unmerged",
        "with-tree=",
        "zero",
    ],
);

const LS_TREE: Spec = git(
    "dlrtz",
    "",
    &[
        "abbrev?",
        "format=",
        "full-name",
        "full-tree",
        "long",
        "name-only",
        "name-status",
        "object-only",
    ],
);

const CAT_FILE: Spec = git(
    "epstZ",
    "",
    &[
        "allow-unknown-type",
        "batch-all-objects",
        "batch-check?",
        "batch?",
        "buffer",
        "follow-symlinks",
        "mailmap",
        "no-mailmap",
        "no-use-mailmap",
        "unordered",
        "use-mailmap",
    ],
);

const SHOW_REF: Spec = git(
    "dqs",
    "",
    &[
        "abbrev?",
        "branches",
        "dereference",
        "exclude-existing?",
        "exists",
        "hash?",
        "head",
        "heads",
        "quiet",
        "tags",
        "verify",
    ],
);

const FOR_EACH_REF: Spec = git(
    "",
    "",
    &[
        "color?",
        "contains?",
        "count=",
        "exclude=",
        "format=",
        "ignore-case",
        "include-root-refs",
        "merged?",
        "no-contains?",
        "no-merged?",
        "omit-empty",
        "perl",
        "points-at=",
        "python",
        "shell",
        "sort=",
        "stdin",
        "tcl",
    ],
);

const DESCRIBE: Spec = git(
    "",
    "",
    &[
        "abbrev=",
        "all",
        "always",
        "broken?",
        "candidates=",
        "contains",
        "debug",
        "dirty?",
        "exact-match",
        "exclude=",
        "first-parent",
        "long",
        "match=",
        "tags",
    ],
);

const MERGE_BASE: Spec = git(
    "a",
    "",
    &["all", "fork-point", "independent", "is-ancestor", "octopus"],
);

const NAME_REV: Spec = git(
    "",
    "",
    &[
        "all",
        "always",
        "annotate-stdin",
        "exclude=",
        "name-only",
        "no-undefined",
        "refs=",
        "tags",
    ],
);

const GREP: Spec = Spec {
    numbers: true,
    ..git(
        "acEFGhHiIlLnopPqrvwWz",
        "ABCefm",
        &[
            "after-context=",
            "all-match",
            "and",
            "basic-regexp",
            "before-context=",
            "break",
            "cached",
            "color?",
            "column",
            "context=",
            "count",
            "exclude-standard",
            "extended-regexp",
            "files-with-matches",
            "files-without-match",
            "fixed-strings",
            "full-name",
            "function-context",
            "heading",
            "ignore-case",
            "invert-match",
            "line-number",
            "max-count=",
            "max-depth=",
            "name-only",
            "no-color",
            "no-exclude-standard",
            "no-index",
            "no-recursive",
            "no-textconv",
            "not",
            "null",
            "only-matching",
            "or",
            "perl-regexp",
            "quiet",
            "recurse-submodules",
            "recursive",
            "show-function",
            "text",
            "threads=",
            "untracked",
            "word-regexp",
        ],
    )
};

const CHECK_IGNORE: Spec = git(
    "nqvz",
    "",
    &["no-index", "non-matching", "quiet", "stdin", "verbose"],
);

const COUNT_OBJECTS: Spec = Spec {
    operands: Operands::AtMost(0),
    ..git("Hv", "", &["human-readable", "verbose"])
};

const BRANCH: Spec = git(
    "airlv",
    "",
    &[
        "abbrev?",
        "all",
        "color?",
        "column?",
        "contains?",
        "format=",
        "ignore-case",
        "list",
        "merged?",
        "no-abbrev",
        "no-color",
        "no-column",
        "no-contains?",
        "no-merged?",
        "omit-empty",
        "points-at=",
        "remotes",
        "show-current",
        "sort=",
        "verbose",
    ],
);

const TAG: Spec = Spec {
    optional: "n",
    ..git(
        "il",
        "",
        &[
            "color?",
            "column?",
            "contains?",
            "format=",
            "ignore-case",
            "list",
            "merged?",
            "no-column",
            "no-contains?",
            "no-merged?",
            "omit-empty",
            "points-at=",
            "sort=",
        ],
    )
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::ArgShape;

    fn ok(line: &str) -> bool {
        let words: Vec<&str> = line.split_whitespace().collect();
        let args: Vec<Arg> = words
            .iter()
            .map(|text| Arg {
                text,
                shape: ArgShape::default(),
            })
            .collect();
        check(&args).is_ok()
    }

    #[test]
    fn reading_subcommands() {
        for line in [
            "status",
            "status -sb",
            "status --porcelain=v2",
            "log --oneline -20",
            "log -p",
            "log --graph --decorate --all",
            "log -5 --stat",
            "log --format=%H -n 3",
            "show HEAD",
            "show -p HEAD~1",
            "diff",
            "diff --cached",
            "diff HEAD~1 -- src/",
            "diff -U5 a b",
            "diff --no-ext-diff",
            "blame -L 1,40 src/main.rs",
            "rev-parse HEAD",
            "rev-parse --abbrev-ref HEAD",
            "rev-parse --show-toplevel",
            "remote",
            "remote -v",
            "remote get-url origin",
            "ls-files",
            "ls-files -m --others --exclude-standard",
            "stash list",
            "stash show -p",
            "tag",
            "tag -l",
            "tag -l v1.*",
            "tag --list --sort=-version:refname",
            "branch",
            "branch -a",
            "branch --show-current",
            "branch -vv",
            "branch --list feat/*",
            "describe --tags",
            "--no-pager log",
            "--version",
            "version",
            "reflog",
            "grep -n foo",
            "count-objects -v",
        ] {
            assert!(ok(line), "git {line}");
        }
    }

    #[test]
    fn writing_or_configurable_forms() {
        for line in [
            "-c core.pager=sh log",
            "-ccore.fsmonitor=x status",
            "--config-env=core.pager=X log",
            "-C /tmp/other status",
            "--git-dir=/tmp/x/.git status",
            "--work-tree=/tmp status",
            "--exec-path=/tmp status",
            "-p log",
            "--paginate log",
            "--bare log",
            "log --output=x",
            "log --outp=x",
            "log --out x",
            "diff --ext-diff",
            "diff --ext",
            "log --textconv -p",
            "log --textc",
            "grep -O foo",
            "grep --open-files-in-pager foo",
            "grep --open foo",
            "branch new-feature",
            "branch -D x",
            "branch -m a b",
            "tag v1",
            "tag -d v1",
            "tag -a v1 -m x",
            "remote add x y",
            "remote show origin",
            "remote set-url origin x",
            "stash",
            "stash drop",
            "stash pop",
            "reflog expire --all",
            "reflog delete HEAD@{1}",
            "checkout status",
            "push",
            "commit -m x",
            "reset --hard",
            "config --get user.name",
            "help log",
            "",
        ] {
            assert!(!ok(line), "git {line}");
        }
    }
}
