//! Credentials in the environment: which variables a line does not get, and which commands print
//! the environment.
//!
//! A line's output goes back to the agent, and from there to its model provider: a variable that
//! carries a credential must not be in a line's environment unless a person chose to pass it. So
//! every line, in every mode and through every door, runs without them ([`withhold`]: the one
//! function that decides; the gate applies it where it builds the line's environment, the hook
//! function to the shell state it restores):
//!
//! - **by name**: a name with `KEY`, `SECRET`, `TOKEN`, `PASSWORD`, `PASSWD`, `PASSPHRASE`,
//!   `CREDENTIAL`, `CREDS`, `AUTH` (not `AUTHOR`, `AUTHORITY`), `COOKIE`, `PRIVATE`, `JWT`, `DSN` or
//!   `WEBHOOK` in it (any case); a `_`-separated part `PASS`, `PWD` (`MYSQL_PWD`, not `PWD` or
//!   `OLDPWD`) or `PAT`; every `AWS_*`; `OP_SESSION_*` and `BW_SESSION`;
//! - **by value**: a value that is unmistakably a credential by its shape, as [`crate::redact`]
//!   recognises it: a private-key block, credentials in a URL (`postgres://u:p@h`), cloud and SaaS
//!   tokens (`AKIA…`, `ghp_…`, `glpat-…`, `sk-…`, `xox…-`, …), a bearer or basic credential.
//!
//! A withheld variable is **absent**, not replaced by a placeholder: a program then fails the way
//! it fails without credentials (`Unable to locate credentials`, `gh auth login`, `OPENAI_API_KEY
//! is not set`), which names the variable it wanted, instead of sending a placeholder to a server
//! as if it were a key and failing with an authentication error that names nothing. The names
//! withheld are in `SHELLGATE_WITHHELD` (names only), so an agent can tell why.

use crate::parse::Command;
use std::ffi::{OsStr, OsString};

/// The variable that tells a line which variables were withheld from it (names, `:`-separated).
pub const WITHHELD_ENV: &str = "SHELLGATE_WITHHELD";

/// Words that make a variable's name a credential's wherever they are in it.
const NAME_WORDS: [&str; 14] = [
    "KEY",
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "CREDS",
    "AUTH",
    "COOKIE",
    "PRIVATE",
    "JWT",
    "DSN",
    "WEBHOOK",
];

/// `_`-separated parts that name a credential only on their own (`DB_PASS`, `MYSQL_PWD`,
/// `GITHUB_PAT`), never as the whole name (`PWD` is the working directory).
const NAME_PARTS: [&str; 3] = ["PASS", "PWD", "PAT"];

/// Whole families of credentials by prefix, and single names.
const NAME_PREFIXES: [&str; 2] = ["AWS_", "OP_SESSION_"];
const NAMES: [&str; 1] = ["BW_SESSION"];

/// Why a variable is withheld.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Name,
    Value,
}

/// Whether a variable of this name carries a credential (see the module doc).
pub fn is_credential_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if NAMES.contains(&upper.as_str()) || NAME_PREFIXES.iter().any(|p| upper.starts_with(p)) {
        return true;
    }
    let parts: Vec<&str> = upper.split('_').filter(|p| !p.is_empty()).collect();
    let word_in_part = parts.iter().any(|part| {
        NAME_WORDS.iter().any(|word| match *word {
            // `AUTHOR`, `AUTHORITY`: not an `AUTH` of their own.
            "AUTH" => part
                .match_indices(word)
                .any(|(at, _)| !part[at + word.len()..].starts_with("OR")),
            _ => part.contains(word),
        })
    });
    word_in_part || (parts.len() > 1 && parts.iter().any(|p| NAME_PARTS.contains(p)))
}

/// Whether a value is unmistakably a credential: it holds one by its shape
/// ([`crate::redact::is_credential`]).
pub fn is_credential_value(value: &str) -> bool {
    !value.is_empty() && crate::redact::is_credential(value)
}

/// Why the variable `name=value` is withheld from lines, or `None`.
pub fn withheld_because(name: &OsStr, value: &OsStr) -> Option<Reason> {
    if is_credential_name(&name.to_string_lossy()) {
        return Some(Reason::Name);
    }
    is_credential_value(&value.to_string_lossy()).then_some(Reason::Value)
}

/// A line's environment with the credentials taken out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineEnv {
    pub vars: Vec<(OsString, OsString)>,
    /// The names taken out, in the order they were found.
    pub withheld: Vec<String>,
}

/// The environment a line gets from `env`: every credential withheld (see the module doc) except
/// the names in `passed` — those a person passed, in the configuration (`[sandbox] pass_env`) or
/// by approving a line whose grant names them — and [`WITHHELD_ENV`] set to what was withheld
/// (a caller's own `SHELLGATE_WITHHELD` is dropped: only this function says what was withheld).
pub fn withhold(env: Vec<(OsString, OsString)>, passed: &[String]) -> LineEnv {
    let mut out = LineEnv::default();
    for (name, value) in env {
        if name == WITHHELD_ENV {
            continue;
        }
        let is_passed = passed.iter().any(|p| OsStr::new(p) == name);
        if !is_passed && withheld_because(&name, &value).is_some() {
            let name = name.to_string_lossy().into_owned();
            if !out.withheld.contains(&name) {
                out.withheld.push(name);
            }
            continue;
        }
        out.vars.push((name, value));
    }
    if !out.withheld.is_empty() {
        out.vars
            .push((WITHHELD_ENV.into(), out.withheld.join(":").into()));
    }
    out
}

/// Whether `word` expands one of the variables `names` (`$DATABASE_URL`, `${DATABASE_URL:-x}`).
pub fn expands_any(word: &str, names: &[String]) -> bool {
    expansions(word).any(|name| names.iter().any(|n| *n == name))
}

/// The names of the variables `word` expands, as written (`$A`, `${A}`, `${A:-…}`, `${#A}`,
/// `${!A}`).
fn expansions(word: &str) -> impl Iterator<Item = &str> {
    word.match_indices('$').filter_map(move |(at, _)| {
        let rest = word[at + 1..].trim_start_matches(['{', '#', '!']);
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let name = &rest[..len];
        (!name.is_empty()).then_some(name)
    })
}

/// Why `c` prints the environment (or variables of it) wholesale, or `None`: `env` and `printenv`
/// without a name, `export` and `set` without operands, `declare`/`typeset`/`local`/`readonly`
/// that list (no operand, or `-p` with a credential's name), jq's `env`/`$ENV`, awk's `ENVIRON`. Such a command is judged like
/// `printenv` alone (never known to only read), and never runs in the person's own shell, where
/// nothing is withheld.
pub fn prints_environment(c: &Command) -> Option<&'static str> {
    let operands = c.argv.iter().filter(|a| !a.starts_with('-')).count();
    let help = c.argv.iter().any(|a| a == "--help" || a == "--version");
    match c.program.as_str() {
        _ if help => None,
        // A command after `env` is unwrapped by the parser: `env` itself prints the environment.
        "env" => Some("it prints the whole environment"),
        "printenv" if operands == 0 => Some("it prints the whole environment"),
        "export" | "set" if c.argv.iter().all(|a| a == "-p") => {
            Some("it prints the whole environment")
        }
        "declare" | "typeset" | "local" | "readonly" => {
            let flags: String = c.argv.iter().filter_map(|a| a.strip_prefix('-')).collect();
            let lists_functions = !flags.is_empty() && flags.chars().all(|f| "fF".contains(f));
            let names_credential = flags.contains('p')
                && c.argv
                    .iter()
                    .any(|a| !a.starts_with('-') && is_credential_name(a));
            (!lists_functions && (operands == 0 || names_credential))
                .then_some("it prints variables with their values")
        }
        "jq" | "gojq" | "jaq" if c.argv.iter().any(|a| names_jq_env(a)) => {
            Some("its filter reads the environment with `env` or `$ENV`")
        }
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk"
            if c.argv.iter().any(|a| a.contains("ENVIRON")) =>
        {
            Some("its program reads the environment through `ENVIRON`")
        }
        _ => None,
    }
}

/// A jq filter that reads the environment: `$ENV`, or `env` as a word of its own (not `.env`).
fn names_jq_env(filter: &str) -> bool {
    if filter.contains("$ENV") {
        return true;
    }
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    filter.match_indices("env").any(|(at, _)| {
        let before = filter[..at].chars().next_back();
        let after = filter[at + 3..].chars().next();
        !before.is_some_and(|c| is_word(c) || c == '.' || c == '$') && !after.is_some_and(is_word)
    })
}

/// The first variable that looks like a credential's (by name) that `word` expands (`$GH_TOKEN`,
/// `${AWS_SECRET_ACCESS_KEY:-}`, `${#GH_TOKEN}`), as written in an argument.
pub fn expanded_credential(word: &str) -> Option<String> {
    expansions(word)
        .find(|name| is_credential_name(name))
        .map(str::to_owned)
}

/// The credential variables `c` names (`$GH_TOKEN` in an argument, `printenv GH_TOKEN`): what
/// its grant asks to pass, which only a person can allow.
pub fn credentials_named(c: &Command) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let printed = (c.program == "printenv")
        .then(|| c.argv.iter().filter(|a| !a.starts_with('-')))
        .into_iter()
        .flatten()
        .filter(|a| is_credential_name(a))
        .cloned();
    let expanded = c.argv.iter().filter_map(|a| expanded_credential(a));
    for name in printed.chain(expanded) {
        if is_variable_name(&name) && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// A valid variable name (`[A-Za-z_][A-Za-z0-9_]*`), as `[sandbox] pass_env` and a rule's
/// `needs.env` must give.
pub fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names() {
        for name in [
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "AWS_SESSION_TOKEN",
            "AWS_PROFILE",
            "GH_TOKEN",
            "GITHUB_TOKEN",
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "openai_api_key",
            "PGPASSWORD",
            "MYSQL_PWD",
            "DB_PASS",
            "GITHUB_PAT",
            "NPM_TOKEN",
            "HF_TOKEN",
            "VAULT_TOKEN",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "AZURE_CLIENT_SECRET",
            "SSH_AUTH_SOCK",
            "REDISCLI_AUTH",
            "GITHUB_OAUTH",
            "SENTRY_DSN",
            "SLACK_WEBHOOK_URL",
            "CI_JOB_JWT",
            "OP_SESSION_my",
            "BW_SESSION",
            "SIGNING_PRIVATE_KEY",
            "APIKEY",
            "MY_PASSPHRASE",
        ] {
            assert!(is_credential_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "PWD",
            "OLDPWD",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "XAUTHORITY",
            "LANG",
            "TERM",
            "SHELL",
            "USER",
            "PASSAGE",
            "COMPASS_HOME",
            "DBUS_SESSION_BUS_ADDRESS",
            "SHELLGATE_ACTIVE",
            "PATH_TO_X",
        ] {
            assert!(!is_credential_name(name), "{name}");
        }
    }

    #[test]
    fn credential_values() {
        for value in [
            "postgres://app:hunter2@db.internal:5432/app",
            "ghp_0123456789abcdefghij0123456789abcdef",
            "sk-proj-0123456789abcdefghijklmnop",
            "AKIAIOSFODNN7EXAMPLE",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n-----END OPENSSH PRIVATE KEY-----",
            "xoxb-0123456789-abcdefghij",
        ] {
            assert!(is_credential_value(value), "{value}");
        }
        for value in ["/usr/bin:/bin", "en_US.UTF-8", "https://example.com/x", ""] {
            assert!(!is_credential_value(value), "{value}");
        }
    }

    #[test]
    fn withheld_unless_passed_and_named_in_shellgate_withheld() {
        let env: Vec<(OsString, OsString)> = [
            ("PATH", "/usr/bin"),
            ("GH_TOKEN", "canary"),
            ("DATABASE_URL", "postgres://u:pw@h/db"),
            ("NPM_TOKEN", "npm-canary"),
            ("SHELLGATE_WITHHELD", "forged"),
        ]
        .iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
        let line = withhold(env, &["NPM_TOKEN".to_owned()]);
        assert_eq!(line.withheld, ["GH_TOKEN", "DATABASE_URL"]);
        let names: Vec<&OsStr> = line.vars.iter().map(|(k, _)| k.as_os_str()).collect();
        assert_eq!(names, ["PATH", "NPM_TOKEN", "SHELLGATE_WITHHELD"]);
        assert_eq!(line.vars[2].1, "GH_TOKEN:DATABASE_URL");
        assert!(withhold(Vec::new(), &[]).vars.is_empty());
    }

    fn command(line: &str) -> Command {
        crate::parse::parse(line, crate::parse::ShellKind::Bash)
            .commands
            .remove(0)
    }

    #[test]
    fn commands_that_print_the_environment() {
        for line in [
            "env",
            "env -0",
            "printenv",
            "export",
            "export -p",
            "set",
            "declare",
            "declare -p",
            "declare -px",
            "typeset -p",
            "declare -p GH_TOKEN",
            "readonly",
            "jq -n env",
            "jq -n '$ENV.GH_TOKEN'",
            "jq -n 'env | keys'",
            "awk 'BEGIN { for (k in ENVIRON) print k, ENVIRON[k] }'",
        ] {
            assert!(prints_environment(&command(line)).is_some(), "{line}");
        }
        for line in [
            "printenv PATH",
            "export X=1",
            "set -o vi",
            "set -e",
            "declare -f",
            "declare -F",
            "declare -p PS0",
            "declare x=1",
            "jq .env config.json",
            "jq '.environment' x",
            "awk '{print $1}'",
            "env --help",
            "ls",
        ] {
            assert_eq!(prints_environment(&command(line)), None, "{line}");
        }
    }

    #[test]
    fn credential_expansions() {
        assert_eq!(
            expanded_credential("$AWS_SECRET_ACCESS_KEY").as_deref(),
            Some("AWS_SECRET_ACCESS_KEY")
        );
        assert_eq!(
            expanded_credential("Bearer ${GH_TOKEN:-x}").as_deref(),
            Some("GH_TOKEN")
        );
        assert_eq!(
            expanded_credential("${#GH_TOKEN}").as_deref(),
            Some("GH_TOKEN")
        );
        assert_eq!(expanded_credential("$HOME/$USER"), None);
        assert_eq!(expanded_credential("price: $5"), None);
    }

    #[test]
    fn expansions_of_withheld_variables() {
        let names = vec!["DATABASE_URL".to_owned()];
        for word in ["$DATABASE_URL", "${DATABASE_URL:-x}", "x=${#DATABASE_URL}"] {
            assert!(expands_any(word, &names), "{word}");
        }
        for word in ["$DATABASE_URLS", "DATABASE_URL", "$MY_DATABASE_URL"] {
            assert!(!expands_any(word, &names), "{word}");
        }
    }
}
