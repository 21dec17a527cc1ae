//! The read-only options of each known-safe program, as its own parser reads them.
//!
//! Taken from the programs' `--help` and manual pages (GNU coreutils 9.1, grep 3.8, diffutils 3.8,
//! file 5.44, procps-ng 4.0, tree 2.1, ripgrep 13/14, binutils' strings, util-linux' column). Every
//! option listed here only reads; anything missing is refused. Options that write, run a program
//! or change the system are listed in `long_unsafe` so an abbreviation of one is refused even
//! when it could also abbreviate a safe option: `sort -o`/`--output`, `sort -T` and
//! `--compress-program`, `date -s`/`--set`, `file -C`/`--compile` and `-p`/`--preserve-date`
//! (which rewrites access times), `tree -o` and `-R`, `rg --pre` and `--hostname-bin`.

use super::options::{Operands, Spec, Style};

const HELP: [&str; 2] = ["help", "version"];

/// The spec of a program whose options are all described by a [`Spec`], if it is one.
pub fn spec(program: &str) -> Option<&'static Spec> {
    Some(match program {
        "ls" | "dir" | "vdir" => &LS,
        "cat" => &CAT,
        "head" => &HEAD,
        "tail" => &TAIL,
        "wc" => &WC,
        "grep" | "egrep" | "fgrep" => &GREP,
        "rg" => &RG,
        "sort" => &SORT,
        "uniq" => &UNIQ,
        "cut" => &CUT,
        "tr" => &TR,
        "nl" => &NL,
        "tac" => &TAC,
        "rev" => &REV,
        "seq" => &SEQ,
        "du" => &DU,
        "df" => &DF,
        "diff" => &DIFF,
        "cmp" => &CMP,
        "md5sum" | "sha1sum" | "sha224sum" | "sha256sum" | "sha384sum" | "sha512sum" => &SUMS,
        "b2sum" => &B2SUM,
        "cksum" => &CKSUM,
        "stat" => &STAT,
        "uname" => &UNAME,
        "id" => &ID,
        "whoami" | "groups" | "nproc" | "arch" | "logname" => &PLAIN,
        "tty" => &TTY,
        "basename" => &BASENAME,
        "dirname" => &DIRNAME,
        "realpath" => &REALPATH,
        "readlink" => &READLINK,
        "od" => &OD,
        "strings" => &STRINGS,
        "fold" => &FOLD,
        "paste" => &PASTE,
        "join" => &JOIN,
        "comm" => &COMM,
        "base64" | "base32" => &BASE64,
        "expand" => &EXPAND,
        "unexpand" => &UNEXPAND,
        "column" => &COLUMN,
        "file" => &FILE,
        "tree" => &TREE,
        "hostname" => &HOSTNAME,
        "which" => &WHICH,
        "pwd" => &PWD,
        "date" => &DATE,
        _ => return None,
    })
}

const LS: Spec = Spec::gnu(
    "1ABCDFGHLNQRSUXZabcdfghiklmnopqrstuvx",
    "ITw",
    &[
        "all",
        "almost-all",
        "author",
        "block-size=",
        "classify?",
        "color?",
        "colour?",
        "context",
        "dereference",
        "dereference-command-line",
        "dereference-command-line-symlink-to-dir",
        "directory",
        "dired",
        "escape",
        "file-type",
        "format=",
        "full-time",
        "group-directories-first",
        "help",
        "hide-control-chars",
        "hide=",
        "human-readable",
        "hyperlink?",
        "ignore-backups",
        "ignore=",
        "indicator-style=",
        "inode",
        "kibibytes",
        "literal",
        "no-group",
        "numeric-uid-gid",
        "quote-name",
        "quoting-style=",
        "recursive",
        "reverse",
        "show-control-chars",
        "si",
        "size",
        "sort=",
        "tabsize=",
        "time-style=",
        "time=",
        "version",
        "width=",
        "zero",
    ],
);

const CAT: Spec = Spec::gnu(
    "AETbenstuv",
    "",
    &[
        "help",
        "number",
        "number-nonblank",
        "show-all",
        "show-ends",
        "show-nonprinting",
        "show-tabs",
        "squeeze-blank",
        "version",
    ],
);

const HEAD: Spec = Spec {
    numbers: true,
    ..Spec::gnu(
        "qvz",
        "cn",
        &[
            "bytes=",
            "help",
            "lines=",
            "quiet",
            "silent",
            "verbose",
            "version",
            "zero-terminated",
        ],
    )
};

const TAIL: Spec = Spec {
    numbers: true,
    ..Spec::gnu(
        "Ffqvz",
        "cns",
        &[
            "bytes=",
            "follow?",
            "help",
            "lines=",
            "max-unchanged-stats=",
            "pid=",
            "quiet",
            "retry",
            "silent",
            "sleep-interval=",
            "verbose",
            "version",
            "zero-terminated",
        ],
    )
};

const WC: Spec = Spec::gnu(
    "Lclmw",
    "",
    &[
        "bytes",
        "chars",
        "files0-from=",
        "help",
        "lines",
        "max-line-length",
        "total=",
        "version",
        "words",
    ],
);

const GREP: Spec = Spec {
    numbers: true,
    ..Spec::gnu(
        "EFGHILPRTUVZabchilnoqrsvwxyz",
        "ABCDdefm",
        &[
            "after-context=",
            "basic-regexp",
            "before-context=",
            "binary",
            "binary-files=",
            "byte-offset",
            "color?",
            "colour?",
            "context=",
            "count",
            "dereference-recursive",
            "devices=",
            "directories=",
            "exclude-dir=",
            "exclude-from=",
            "exclude=",
            "extended-regexp",
            "file=",
            "files-with-matches",
            "files-without-match",
            "fixed-strings",
            "group-separator=",
            "help",
            "ignore-case",
            "include=",
            "initial-tab",
            "invert-match",
            "label=",
            "line-buffered",
            "line-number",
            "line-regexp",
            "max-count=",
            "no-filename",
            "no-group-separator",
            "no-ignore-case",
            "no-messages",
            "null",
            "null-data",
            "only-matching",
            "perl-regexp",
            "quiet",
            "recursive",
            "regexp=",
            "silent",
            "text",
            "version",
            "with-filename",
            "word-regexp",
        ],
    )
};

/// ripgrep 13 and 14 (clap: full long names only, attached short values). `--pre` runs a program on every file and
/// `--hostname-bin` runs one to find the host name; `-z`/`--search-zip` runs the system's
/// decompressors, which is allowed.
const RG: Spec = Spec {
    style: Style::Clap,
    long_unsafe: &["pre", "hostname-bin"],
    ..Spec::gnu(
        ".0abcFHhIiLlNnopqSsUuVvwxz",
        "ABCdEefgjMmrTt",
        &[
            "after-context=",
            "auto-hybrid-regex",
            "before-context=",
            "binary",
            "block-buffered",
            "byte-offset",
            "case-sensitive",
            "color=",
            "colors=",
            "column",
            "context-separator=",
            "context=",
            "count",
            "count-matches",
            "crlf",
            "debug",
            "dfa-size-limit=",
            "encoding=",
            "engine=",
            "field-context-separator=",
            "field-match-separator=",
            "file=",
            "files",
            "files-with-matches",
            "files-without-match",
            "fixed-strings",
            "follow",
            "generate=",
            "glob-case-insensitive",
            "glob=",
            "heading",
            "help",
            "hidden",
            "hyperlink-format=",
            "iglob=",
            "ignore-case",
            "ignore-file-case-insensitive",
            "ignore-file=",
            "include-zero",
            "invert-match",
            "json",
            "line-buffered",
            "line-number",
            "line-regexp",
            "max-columns-preview",
            "max-columns=",
            "max-count=",
            "max-depth=",
            "max-filesize=",
            "mmap",
            "multiline",
            "multiline-dotall",
            "no-auto-hybrid-regex",
            "no-binary",
            "no-block-buffered",
            "no-byte-offset",
            "no-column",
            "no-config",
            "no-context-separator",
            "no-crlf",
            "no-encoding",
            "no-filename",
            "no-fixed-strings",
            "no-follow",
            "no-glob-case-insensitive",
            "no-heading",
            "no-hidden",
            "no-ignore",
            "no-ignore-dot",
            "no-ignore-exclude",
            "no-ignore-file-case-insensitive",
            "no-ignore-files",
            "no-ignore-global",
            "no-ignore-messages",
            "no-ignore-parent",
            "no-ignore-vcs",
            "no-include-zero",
            "no-invert-match",
            "no-json",
            "no-line-buffered",
            "no-line-number",
            "no-max-columns-preview",
            "no-messages",
            "no-mmap",
            "no-multiline",
            "no-multiline-dotall",
            "no-one-file-system",
            "no-pcre2",
            "no-pcre2-unicode",
            "no-pre",
            "no-require-git",
            "no-search-zip",
            "no-sort-files",
            "no-stats",
            "no-text",
            "no-trim",
            "no-unicode",
            "null",
            "null-data",
            "one-file-system",
            "only-matching",
            "passthru",
            "passthrough",
            "path-separator=",
            "pcre2",
            "pcre2-unicode",
            "pcre2-version",
            "pretty",
            "quiet",
            "regex-size-limit=",
            "regexp=",
            "replace=",
            "search-zip",
            "smart-case",
            "sort-files",
            "sort=",
            "sortr=",
            "stats",
            "text",
            "threads=",
            "trim",
            "type-add=",
            "type-clear=",
            "type-list",
            "type-not=",
            "type=",
            "unicode",
            "unrestricted",
            "version",
            "vimgrep",
            "with-filename",
            "word-regexp",
        ],
    )
};

const SORT: Spec = Spec {
    long_unsafe: &["output", "temporary-directory", "compress-program"],
    ..Spec::gnu(
        "bcCdfghiMmnRrsuVz",
        "kSt",
        &[
            "batch-size=",
            "buffer-size=",
            "check?",
            "debug",
            "dictionary-order",
            "field-separator=",
            "files0-from=",
            "general-numeric-sort",
            "help",
            "human-numeric-sort",
            "ignore-case",
            "ignore-leading-blanks",
            "ignore-nonprinting",
            "key=",
            "merge",
            "month-sort",
            "numeric-sort",
            "parallel=",
            "random-sort",
            "random-source=",
            "reverse",
            "sort=",
            "stable",
            "unique",
            "version",
            "version-sort",
            "zero-terminated",
        ],
    )
};

/// `uniq [INPUT [OUTPUT]]`: a second operand is written to.
const UNIQ: Spec = Spec {
    operands: Operands::AtMost(1),
    ..Spec::gnu(
        "cdDiuz",
        "fsw",
        &[
            "all-repeated?",
            "check-chars=",
            "count",
            "group?",
            "help",
            "ignore-case",
            "repeated",
            "skip-chars=",
            "skip-fields=",
            "unique",
            "version",
            "zero-terminated",
        ],
    )
};

const CUT: Spec = Spec::gnu(
    "nsz",
    "bcdf",
    &[
        "bytes=",
        "characters=",
        "complement",
        "delimiter=",
        "fields=",
        "help",
        "only-delimited",
        "output-delimiter=",
        "version",
        "zero-terminated",
    ],
);

const TR: Spec = Spec {
    operands: Operands::AtMost(2),
    ..Spec::gnu(
        "Ccdst",
        "",
        &[
            "complement",
            "delete",
            "help",
            "squeeze-repeats",
            "truncate-set1",
            "version",
        ],
    )
};

const NL: Spec = Spec::gnu(
    "p",
    "bdfhilnsvw",
    &[
        "body-numbering=",
        "footer-numbering=",
        "header-numbering=",
        "help",
        "join-blank-lines=",
        "line-increment=",
        "no-renumber",
        "number-format=",
        "number-separator=",
        "number-width=",
        "section-delimiter=",
        "starting-line-number=",
        "version",
    ],
);

const TAC: Spec = Spec::gnu(
    "br",
    "s",
    &["before", "help", "regex", "separator=", "version"],
);

const REV: Spec = Spec::gnu("hV", "", &["help", "version"]);

const SEQ: Spec = Spec {
    style: Style::Posix,
    ..Spec::gnu(
        "w",
        "fs",
        &["equal-width", "format=", "help", "separator=", "version"],
    )
};

const DU: Spec = Spec::gnu(
    "0DHLPSabchklmsx",
    "BXdt",
    &[
        "all",
        "apparent-size",
        "block-size=",
        "bytes",
        "count-links",
        "dereference",
        "dereference-args",
        "exclude-from=",
        "exclude=",
        "files0-from=",
        "help",
        "human-readable",
        "inodes",
        "max-depth=",
        "no-dereference",
        "null",
        "one-file-system",
        "separate-dirs",
        "si",
        "summarize",
        "threshold=",
        "time-style=",
        "time?",
        "total",
        "version",
    ],
);

const DF: Spec = Spec::gnu(
    "HPTahiklv",
    "Btx",
    &[
        "all",
        "block-size=",
        "exclude-type=",
        "help",
        "human-readable",
        "inodes",
        "local",
        "no-sync",
        "output?",
        "portability",
        "print-type",
        "si",
        "sync",
        "total",
        "type=",
        "version",
    ],
);

const DIFF: Spec = Spec::gnu(
    "abBcdeEilnNpqrstTuvwyZ",
    "CDFISUWXx",
    &[
        "GTYPE-group-format=",
        "LTYPE-line-format=",
        "brief",
        "changed-group-format=",
        "color?",
        "context?",
        "ed",
        "exclude-from=",
        "exclude=",
        "expand-tabs",
        "from-file=",
        "help",
        "horizon-lines=",
        "ifdef=",
        "ignore-all-space",
        "ignore-blank-lines",
        "ignore-case",
        "ignore-file-name-case",
        "ignore-matching-lines=",
        "ignore-space-change",
        "ignore-tab-expansion",
        "ignore-trailing-space",
        "initial-tab",
        "label=",
        "left-column",
        "line-format=",
        "minimal",
        "new-file",
        "new-group-format=",
        "new-line-format=",
        "no-dereference",
        "no-ignore-file-name-case",
        "normal",
        "old-group-format=",
        "old-line-format=",
        "paginate",
        "palette=",
        "rcs",
        "recursive",
        "report-identical-files",
        "show-c-function",
        "show-function-line=",
        "side-by-side",
        "speed-large-files",
        "starting-file=",
        "strip-trailing-cr",
        "suppress-blank-empty",
        "suppress-common-lines",
        "tabsize=",
        "text",
        "to-file=",
        "unchanged-group-format=",
        "unchanged-line-format=",
        "unidirectional-new-file",
        "unified?",
        "version",
        "width=",
    ],
);

const CMP: Spec = Spec::gnu(
    "blsv",
    "in",
    &[
        "bytes=",
        "help",
        "ignore-initial=",
        "print-bytes",
        "quiet",
        "silent",
        "verbose",
        "version",
    ],
);

const SUMS: Spec = Spec::gnu(
    "bctwz",
    "",
    &[
        "binary",
        "check",
        "help",
        "ignore-missing",
        "quiet",
        "status",
        "strict",
        "tag",
        "text",
        "version",
        "warn",
        "zero",
    ],
);

const B2SUM: Spec = Spec::gnu(
    "bctwz",
    "l",
    &[
        "binary",
        "check",
        "help",
        "ignore-missing",
        "length=",
        "quiet",
        "status",
        "strict",
        "tag",
        "text",
        "version",
        "warn",
        "zero",
    ],
);

const CKSUM: Spec = Spec::gnu(
    "cwz",
    "al",
    &[
        "algorithm=",
        "base64",
        "check",
        "debug",
        "help",
        "ignore-missing",
        "length=",
        "quiet",
        "raw",
        "status",
        "strict",
        "tag",
        "untagged",
        "version",
        "warn",
        "zero",
    ],
);

const STAT: Spec = Spec::gnu(
    "Lft",
    "c",
    &[
        "cached=",
        "dereference",
        "file-system",
        "format=",
        "help",
        "printf=",
        "terse",
        "version",
    ],
);

const UNAME: Spec = Spec {
    operands: Operands::AtMost(0),
    ..Spec::gnu(
        "aimnoprsv",
        "",
        &[
            "all",
            "hardware-platform",
            "help",
            "kernel-name",
            "kernel-release",
            "kernel-version",
            "machine",
            "nodename",
            "operating-system",
            "processor",
            "version",
        ],
    )
};

const ID: Spec = Spec::gnu(
    "GZagnruz",
    "",
    &[
        "context", "group", "groups", "help", "name", "real", "user", "version", "zero",
    ],
);

const PLAIN: Spec = Spec::gnu("", "", &HELP);

const TTY: Spec = Spec {
    operands: Operands::AtMost(0),
    ..Spec::gnu("s", "", &["help", "quiet", "silent", "version"])
};

const BASENAME: Spec = Spec::gnu(
    "az",
    "s",
    &["help", "multiple", "suffix=", "version", "zero"],
);

const DIRNAME: Spec = Spec::gnu("z", "", &["help", "version", "zero"]);

const REALPATH: Spec = Spec::gnu(
    "eLmPqsz",
    "",
    &[
        "canonicalize-existing",
        "canonicalize-missing",
        "help",
        "logical",
        "no-symlinks",
        "physical",
        "quiet",
        "relative-base=",
        "relative-to=",
        "strip",
        "version",
        "zero",
    ],
);

const READLINK: Spec = Spec::gnu(
    "efmnqsvz",
    "",
    &[
        "canonicalize",
        "canonicalize-existing",
        "canonicalize-missing",
        "help",
        "no-newline",
        "quiet",
        "silent",
        "verbose",
        "version",
        "zero",
    ],
);

/// `printenv` (its operands are checked by the caller).
pub const PRINTENV: Spec = Spec::gnu("0", "", &["help", "null", "version"]);

const OD: Spec = Spec {
    optional: "w",
    ..Spec::gnu(
        "abcdfilosvx",
        "ANSjt",
        &[
            "address-radix=",
            "endian=",
            "format=",
            "help",
            "output-duplicates",
            "read-bytes=",
            "skip-bytes=",
            "strings?",
            "traditional",
            "version",
            "width?",
        ],
    )
};

/// binutils' `strings` (getopt_long; `-NUM` is `-n NUM`).
const STRINGS: Spec = Spec {
    numbers: true,
    ..Spec::gnu(
        "adfhovVw",
        "eJnstTU",
        &[
            "all",
            "bytes=",
            "data",
            "encoding=",
            "help",
            "include-all-whitespace",
            "output-separator=",
            "print-file-name",
            "radix=",
            "target=",
            "unicode=",
            "version",
        ],
    )
};

const FOLD: Spec = Spec::gnu("bs", "w", &["bytes", "help", "spaces", "version", "width="]);

const PASTE: Spec = Spec::gnu(
    "sz",
    "d",
    &[
        "delimiters=",
        "help",
        "serial",
        "version",
        "zero-terminated",
    ],
);

const JOIN: Spec = Spec {
    operands: Operands::AtMost(2),
    ..Spec::gnu(
        "iz",
        "12aejotv",
        &[
            "check-order",
            "header",
            "help",
            "ignore-case",
            "nocheck-order",
            "version",
            "zero-terminated",
        ],
    )
};

const COMM: Spec = Spec {
    operands: Operands::AtMost(2),
    ..Spec::gnu(
        "123z",
        "",
        &[
            "check-order",
            "help",
            "nocheck-order",
            "output-delimiter=",
            "total",
            "version",
            "zero-terminated",
        ],
    )
};

const BASE64: Spec = Spec {
    operands: Operands::AtMost(1),
    ..Spec::gnu(
        "di",
        "w",
        &["decode", "help", "ignore-garbage", "version", "wrap="],
    )
};

const EXPAND: Spec = Spec::gnu("i", "t", &["help", "initial", "tabs=", "version"]);

const UNEXPAND: Spec = Spec::gnu("a", "t", &["all", "first-only", "help", "tabs=", "version"]);

/// util-linux 2.38 `column`.
const COLUMN: Spec = Spec::gnu(
    "eJLhntVx",
    "cdEHilNoOprRsTW",
    &[
        "fillrows",
        "help",
        "json",
        "keep-empty-lines",
        "output-separator=",
        "output-width=",
        "separator=",
        "table",
        "table-column=",
        "table-columns-limit=",
        "table-columns=",
        "table-empty-lines",
        "table-header-repeat",
        "table-hide=",
        "table-name=",
        "table-noextreme=",
        "table-noheadings",
        "table-order=",
        "table-right=",
        "table-truncate=",
        "table-wrap=",
        "tree-id=",
        "tree-parent=",
        "tree=",
        "version",
    ],
);

/// file 5.44. `-C` compiles a magic file (writes `*.mgc`), `-p` rewrites access times, and
/// `--no-sandbox` turns off file's own seccomp filter.
const FILE: Spec = Spec {
    long_unsafe: &["compile", "preserve-date", "no-sandbox"],
    ..Spec::gnu(
        "0bcdhiklLnNrsSvzZ",
        "efFmP",
        &[
            "apple",
            "brief",
            "checking-printout",
            "debug",
            "dereference",
            "exclude-quiet=",
            "exclude=",
            "extension",
            "files-from=",
            "help",
            "keep-going",
            "list",
            "magic-file=",
            "mime",
            "mime-encoding",
            "mime-type",
            "no-buffer",
            "no-dereference",
            "no-pad",
            "parameter=",
            "print0",
            "raw",
            "separator=",
            "special-files",
            "uncompress",
            "uncompress-noreport",
            "version",
        ],
    )
};

/// tree 2.1 (its own parser). `-o FILE` writes the listing to FILE, and `-R` re-runs tree with
/// `-o 00Tree.html` in every directory.
const TREE: Spec = Spec {
    style: Style::Own,
    long_unsafe: &["output"],
    ..Spec::gnu(
        "acdfghilnpqrstuvxACDFJNQSUX",
        "HILPT",
        &[
            "authority=",
            "charset=",
            "device",
            "dirsfirst",
            "du",
            "fflinks",
            "filelimit=",
            "filesfirst",
            "fromfile",
            "fromtabfile",
            "gitfile=",
            "gitignore",
            "help",
            "hintro=",
            "houtro=",
            "hyperlink",
            "ignore-case",
            "info",
            "infofile=",
            "inodes",
            "matchdirs",
            "metafirst",
            "nolinks",
            "noreport",
            "prune",
            "scheme=",
            "si",
            "sort=",
            "timefmt=",
            "version",
        ],
    )
};

/// net-tools/inetutils `hostname`: with an operand, `-F FILE` or `-b` it sets the host name.
const HOSTNAME: Spec = Spec {
    operands: Operands::AtMost(0),
    ..Spec::gnu(
        "aAdfiIsyV",
        "",
        &[
            "alias",
            "all-fqdns",
            "all-ip-addresses",
            "domain",
            "fqdn",
            "help",
            "ip-address",
            "long",
            "nis",
            "short",
            "version",
            "yp",
        ],
    )
};

/// Debian's `which` (a shell script: `-a` and `-s` only).
const WHICH: Spec = Spec {
    style: Style::Posix,
    ..Spec::gnu("as", "", &[])
};

/// bash's `pwd` builtin (and coreutils' `pwd`).
const PWD: Spec = Spec {
    operands: Operands::AtMost(0),
    ..Spec::gnu("LP", "", &["help", "logical", "physical", "version"])
};

/// GNU date; `-s`/`--set` sets the clock, and so does an operand that is not a `+FORMAT` (checked
/// by the caller).
const DATE: Spec = Spec {
    optional: "I",
    long_unsafe: &["set"],
    operands: Operands::AtMost(1),
    ..Spec::gnu(
        "Ru",
        "dfr",
        &[
            "date=",
            "debug",
            "file=",
            "help",
            "iso-8601?",
            "reference=",
            "resolution",
            "rfc-2822",
            "rfc-3339=",
            "rfc-email",
            "universal",
            "utc",
            "version",
        ],
    )
};

#[cfg(test)]
mod tests {
    use super::super::options::{Arg, scan};
    use super::*;
    use crate::parse::ArgShape;

    fn ok(program: &str, words: &[&'static str]) -> bool {
        let args: Vec<Arg> = words
            .iter()
            .map(|text| Arg {
                text,
                shape: ArgShape::default(),
            })
            .collect();
        let spec = spec(program).unwrap_or_else(|| panic!("no spec for {program}"));
        scan(spec, &args).is_ok()
    }

    /// The lines of issue 12, class by class, per program.
    #[test]
    fn writing_and_running_options_are_refused() {
        for (program, words) in [
            ("sort", &["-uo", "f", "x"][..]),
            ("sort", &["-o", "f"][..]),
            ("sort", &["--outp=f", "x"][..]),
            ("sort", &["--o=f", "x"][..]),
            ("sort", &["--co=cat", "x"][..]),
            ("sort", &["--compress-prog", "cat", "x"][..]),
            ("sort", &["-T", "/tmp", "x"][..]),
            ("sort", &["--t=/tmp", "x"][..]),
            ("sort", &["x", "-o", "y"][..]),
            ("date", &["-us", "2020-01-01"][..]),
            ("date", &["--s=2020-01-01"][..]),
            ("date", &["--se", "now"][..]),
            ("file", &["-kC", "-m", "x"][..]),
            ("file", &["--comp", "-m", "x"][..]),
            ("file", &["-p", "x"][..]),
            ("uniq", &["-", "out"][..]),
            ("uniq", &["in", "out"][..]),
            ("uniq", &["-c", "in", "out"][..]),
            ("rg", &["--pre", "sh", "x"][..]),
            ("rg", &["--pre=sh", "x"][..]),
            ("rg", &["--hostname-bin", "sh", "x"][..]),
            ("tree", &["-o", "out"][..]),
            ("tree", &["-ao", "out"][..]),
            ("tree", &["-R", "-H", "."][..]),
            ("hostname", &["evil"][..]),
            ("hostname", &["-F", "f"][..]),
            ("ls", &["--nope"][..]),
            ("cat", &["-z"][..]),
        ] {
            assert!(!ok(program, words), "{program} {words:?}");
        }
    }

    #[test]
    fn reading_forms_are_accepted() {
        for (program, words) in [
            ("sort", &["-u", "-k2,2n", "-t,", "f"][..]),
            ("sort", &["--rev", "--key=2", "f"][..]),
            ("sort", &["-c", "f"][..]),
            ("uniq", &["-c", "f"][..]),
            ("uniq", &["-"][..]),
            ("date", &["-u", "+%s"][..]),
            ("date", &["-d", "yesterday", "+%F"][..]),
            ("date", &["-Iseconds"][..]),
            ("file", &["-bi", "x"][..]),
            (
                "rg",
                &["-n", "--hidden", "-g", "*.rs", "-z", "foo", "src"][..],
            ),
            ("rg", &["--search-zip", "foo"][..]),
            ("tree", &["-a", "-L", "2", "src"][..]),
            ("tree", &["-adL", "2"][..]),
            ("head", &["-5", "f"][..]),
            ("head", &["-n", "5", "f"][..]),
            ("tail", &["-f", "log"][..]),
            ("grep", &["-rn", "--include=*.rs", "foo", "src"][..]),
            ("grep", &["-C3", "foo", "f"][..]),
            ("ls", &["-la", "--color=auto", "src"][..]),
            ("wc", &["-l", "f"][..]),
            ("cut", &["-d:", "-f1", "/etc/passwd"][..]),
            ("du", &["-sh", "."][..]),
            ("diff", &["-u", "a", "b"][..]),
        ] {
            assert!(ok(program, words), "{program} {words:?}");
        }
    }
}
