//! Secret redaction, applied before anything is written to the audit log and before anything leaves
//! the machine (the reviewer's prompt and tool results).
//!
//! Two families of rules:
//! - **key-based**: a value next to a name that says it is secret (`token`, `password`, `api_key`,
//!   `authorization`, `*_KEY`, …) in the forms `KEY=value`, `KEY: value`, `"key": "value"`,
//!   `--key=value` and `--key value`;
//! - **content-based**: values that are secret by their shape wherever they appear (bearer tokens,
//!   cloud and SaaS tokens, private-key blocks, credentials in URLs, `mysql -pSECRET`, …).
//!
//! The replacement keeps what helps a reader understand the line (the key name, the token's kind
//! prefix such as `ghp_`, the URL's user) and replaces only the secret with [`MARKER`]. Redaction is
//! idempotent (`redact(redact(x)) == redact(x)`) so text that was already redacted, like an event read
//! back from the log, passes through unchanged.
//!
//! **Cost.** Compiling every pattern takes milliseconds — more than the rest of a shell line's
//! decision — and most text contains no secret. So each rule names its *needles*: literals, at least
//! one of which any text it matches must contain (compared ASCII-case-insensitively). A rule is
//! compiled, once, only when its needles occur in the text; text with none of any rule's needles
//! is returned borrowed after a few substring scans, without compiling anything. The needles are
//! looked for in the text folded as the patterns' `(?i)` folds it: ASCII lowercased, and the two
//! characters outside ASCII whose case folding reaches an ASCII letter (the Kelvin sign and the long
//! s) written as that letter; a unit test derives that pair from the regex engine's own folding. A
//! property test checks that no rule matches text its needles reject.

use regex::{Captures, Regex};
use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

/// What a secret is replaced with.
pub const MARKER: &str = "[REDACTED]";

/// Words that make a key name secret wherever they occur inside it (case-insensitive).
const SECRET_WORDS: &str = r"token|password|passwd|passphrase|secret|api[_-]?key|apikey|authorization|credentials?|private[_-]?key|access[_-]?key|session[_-]?key|cookie";

/// Suffixes that make a key name secret only at its end (`STRIPE_KEY`, `DB_PASS`, `MYSQL_PWD`), so
/// that `PRIMARY_KEY_ID` or `OLDPWD` stay readable.
const SECRET_SUFFIXES: &str = r"_key|_pass|_pwd";

/// The needles of the key-based rules: every word of [`SECRET_WORDS`] and [`SECRET_SUFFIXES`]
/// contains one of these (`passwd` and `_pass` contain `pass`; every `…key` word contains `key`).
const KEY_NEEDLES: &[&str] = &[
    "token",
    "pass",
    "secret",
    "key",
    "authorization",
    "credential",
    "cookie",
    "_pwd",
];

/// A key name: a run of name characters that contains a secret word, or ends in a secret suffix.
fn key_name_pattern() -> String {
    format!(
        r"[A-Za-z0-9_.-]*(?:{SECRET_WORDS})[A-Za-z0-9_.-]*|[A-Za-z0-9_.-]*(?:{SECRET_SUFFIXES})"
    )
}

/// One redaction rule: a pattern and how to rewrite each match.
struct Rule {
    /// For the tests' check that every rule fires on a sample.
    #[cfg_attr(not(test), allow(dead_code))]
    name: &'static str,
    /// Lowercase literals at least one of which every match contains (see the module doc).
    needles: &'static [&'static str],
    /// The rule finds a credential by its own shape (a token's prefix, a key block, a password in
    /// a URL), not by a name next to it or a command line around it: see [`is_credential`].
    shape: bool,
    regex: LazyRegex,
    rewrite: fn(&Captures<'_>) -> String,
}

impl Rule {
    /// Whether the rule can match text whose [`folded`] form is `lower`.
    fn admits(&self, lower: &str) -> bool {
        self.needles.iter().any(|needle| lower.contains(needle))
    }
}

/// A pattern compiled on first use.
struct LazyRegex {
    pattern: String,
    compiled: OnceLock<Regex>,
}

impl LazyRegex {
    fn get(&self) -> &Regex {
        self.compiled.get_or_init(|| compile_now(&self.pattern))
    }
}

/// The text the needles are looked for in: ASCII lowercased, and each character outside ASCII
/// that a case-insensitive pattern matches as an ASCII letter written as that letter (the needles
/// are ASCII, so no other character can take part in one).
fn folded(text: &str) -> String {
    text.chars().map(fold_char).collect()
}

/// Characters outside ASCII whose simple case folding is an ASCII letter: U+212A KELVIN SIGN is
/// `k` and U+017F LATIN SMALL LETTER LONG S is `s` under `(?i)`
/// (`tests::only_two_characters_outside_ascii_fold_into_it` derives this from the regex engine).
const FOLDS_INTO_ASCII: [(char, char); 2] = [('\u{212A}', 'k'), ('\u{017F}', 's')];

fn fold_char(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    FOLDS_INTO_ASCII
        .iter()
        .find(|(from, _)| *from == c)
        .map_or(c, |(_, to)| *to)
}

/// A quoted or bare value. Bare values stop at shell and JSON punctuation.
const VALUE: &str = r#""(?:[^"\\]|\\.)*"|'[^']*'|[^\s"',;&|)}]+"#;

fn compile(pattern: &str) -> LazyRegex {
    LazyRegex {
        pattern: pattern.to_owned(),
        compiled: OnceLock::new(),
    }
}

fn compile_now(pattern: &str) -> Regex {
    // The patterns are constants of this file, covered by the unit tests below: a failure here is
    // a programming error, caught by every test run, never by user input.
    Regex::new(pattern).unwrap_or_else(|err| panic!("redaction pattern {pattern:?}: {err}"))
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let key = key_name_pattern();
    vec![
        Rule {
            name: "private-key block",
            shape: true,
            needles: &["-----begin"],
            regex: compile(
                r"(?s)-----BEGIN (?P<label>[A-Z0-9 ]*PRIVATE KEY[A-Z0-9 ]*)-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY[A-Z0-9 ]*-----|\z)",
            ),
            rewrite: |c| format!("-----BEGIN {0}-----{MARKER}-----END {0}-----", &c["label"]),
        },
        Rule {
            name: "credentials in a URL",
            shape: true,
            needles: &["://"],
            regex: compile(
                r#"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@'"]*):(?P<secret>[^\s/'"]+)@"#,
            ),
            rewrite: |c| format!("{}:{MARKER}@", &c["head"]),
        },
        Rule {
            name: "AWS access key id with its secret",
            shape: true,
            needles: &["akia", "asia"],
            regex: compile(
                r#"\b(?P<id>(?:AKIA|ASIA)[A-Z0-9]{16})(?P<sep>[\s,:;='"]+)[A-Za-z0-9/+]{40}\b"#,
            ),
            rewrite: |c| format!("{}{MARKER}{}{MARKER}", &c["id"][..4], &c["sep"]),
        },
        Rule {
            name: "AWS secret access key",
            shape: false,
            needles: &["secret"],
            regex: compile(
                r#"(?i)(?P<head>secret_?access_?key["']?\s*[\s=:,]\s*["']?)[A-Za-z0-9/+]{40}\b"#,
            ),
            rewrite: |c| format!("{}{MARKER}", &c["head"]),
        },
        Rule {
            name: "AWS access key id",
            shape: true,
            needles: &[
                "akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "apka",
                "aroa", "asca",
            ],
            regex: compile(
                r"\b(?P<kind>AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z0-9]{16}\b",
            ),
            rewrite: |c| format!("{}{MARKER}", &c["kind"]),
        },
        Rule {
            name: "GitHub token",
            shape: true,
            needles: &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
            regex: compile(r"\b(?P<kind>gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,255}\b"),
            rewrite: |c| format!("{}{MARKER}", &c["kind"]),
        },
        Rule {
            name: "GitLab token",
            shape: true,
            needles: &[
                "glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glcbt-", "gloas-", "glimt-",
                "glsoat-", "glagent-",
            ],
            regex: compile(
                r"\b(?P<kind>gl(?:pat|dt|rt|ptt|ft|cbt|oas|imt|soat|agent)-)[A-Za-z0-9_-]{20,}",
            ),
            rewrite: |c| format!("{}{MARKER}", &c["kind"]),
        },
        Rule {
            name: "Slack token",
            shape: true,
            needles: &["xox", "xapp-"],
            regex: compile(r"\b(?P<kind>xox[abposre]-|xapp-)[A-Za-z0-9-]{10,}"),
            rewrite: |c| format!("{}{MARKER}", &c["kind"]),
        },
        Rule {
            name: "Slack webhook",
            shape: true,
            needles: &["hooks.slack.com/"],
            regex: compile(r"(?P<head>hooks\.slack\.com/(?:services|workflows)/)[A-Za-z0-9/_-]+"),
            rewrite: |c| format!("{}{MARKER}", &c["head"]),
        },
        Rule {
            name: "Anthropic key",
            shape: true,
            needles: &["sk-ant-"],
            regex: compile(r"\b(?P<kind>sk-ant-(?:[a-z]+\d*-)?)[A-Za-z0-9_-]{20,}"),
            rewrite: |c| format!("{}{MARKER}", &c["kind"]),
        },
        Rule {
            name: "OpenAI-style key",
            shape: true,
            needles: &["sk-"],
            regex: compile(r"\b(?P<kind>sk-(?:proj-|svcacct-|admin-)?)[A-Za-z0-9_-]{20,}"),
            rewrite: |c| format!("{}{MARKER}", &c["kind"]),
        },
        Rule {
            name: "bearer or basic credentials",
            shape: true,
            needles: &["bearer", "basic"],
            regex: compile(
                r"(?i)\b(?P<scheme>bearer|basic)(?P<sp>\s+)(?P<secret>[A-Za-z0-9._~+/-]{8,}=*)",
            ),
            rewrite: |c| {
                // "basic settings" is prose, "Basic dXNlcjpwYXNz" is a credential: a credential has
                // something besides lowercase letters.
                if c["secret"].chars().all(|ch| ch.is_ascii_lowercase()) {
                    c[0].to_string()
                } else {
                    format!("{}{}{MARKER}", &c["scheme"], &c["sp"])
                }
            },
        },
        Rule {
            name: "mysql-style -pPASSWORD",
            shape: false,
            needles: &["mysql", "mariadb"],
            regex: compile(
                r#"\b(?P<tool>mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlsh|mariadb|mariadb-dump|mariadb-admin)\b(?P<args>[^\n;&|]*)"#,
            ),
            rewrite: |c| format!("{}{}", &c["tool"], redact_attached_p(&c["args"])),
        },
        Rule {
            name: "sshpass -p",
            shape: false,
            needles: &["sshpass"],
            regex: compile(r#"\b(?P<head>sshpass\s+-p\s*)(?:"[^"]*"|'[^']*'|\S+)"#),
            rewrite: |c| format!("{}{MARKER}", &c["head"]),
        },
        Rule {
            name: "curl -u user:password",
            shape: false,
            needles: &["-u"],
            regex: compile(
                r#"(?P<head>(?:^|\s)(?:-u|--user|--proxy-user)\s*['"]?[^\s:'"/]+:)(?P<secret>[^\s'"/][^\s'"]*)"#,
            ),
            rewrite: |c| format!("{}{MARKER}", &c["head"]),
        },
        Rule {
            name: "secret key with = or :",
            shape: false,
            needles: KEY_NEEDLES,
            regex: compile(&format!(
                r#"(?i)(?P<key>{key})(?P<quote>["']?)(?P<sep>\s*[=:]\s*)(?P<value>(?:(?:bearer|basic|token)\s+)?(?:{VALUE}))"#
            )),
            rewrite: |c| {
                let kept = format!("{}{}{}", &c["key"], &c["quote"], &c["sep"]);
                format!("{kept}{}", redact_value(&c["value"]))
            },
        },
        Rule {
            name: "secret flag with a separate value",
            shape: false,
            needles: KEY_NEEDLES,
            regex: compile(&format!(
                r#"(?i)(?P<head>(?:^|\s)-{{1,2}}(?:{key})\s+)(?P<value>"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"'-][^\s"';&|)]*)"#
            )),
            rewrite: |c| format!("{}{}", &c["head"], redact_value(&c["value"])),
        },
    ]
});

static ATTACHED_P: LazyLock<Regex> =
    LazyLock::new(|| compile_now(r#"(?P<pre>\s)-p(?:"[^"]*"|'[^']*'|[^\s'"]\S*)"#));

static VARIABLE_REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| compile_now(r"^\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})$"));

/// `mysql -u root -pSECRET db`: the password is glued to `-p` (a lone `-p` makes mysql prompt).
fn redact_attached_p(args: &str) -> String {
    ATTACHED_P
        .replace_all(args, |c: &Captures<'_>| format!("{}-p{MARKER}", &c["pre"]))
        .into_owned()
}

/// Replaces a value, keeping its quotes, an auth scheme word in front of it, and references to
/// shell variables (`$TOKEN` is a name, not a secret, and the reviewer needs to see it).
fn redact_value(value: &str) -> String {
    let (scheme, rest) = split_scheme(value);
    let (open, inner, close) = split_quotes(rest);
    if inner == MARKER || VARIABLE_REFERENCE.is_match(inner) {
        return value.to_string();
    }
    format!("{scheme}{open}{MARKER}{close}")
}

/// Splits `Bearer abc` into (`Bearer `, `abc`).
fn split_scheme(value: &str) -> (&str, &str) {
    for scheme in ["bearer", "basic", "token"] {
        // `get` rather than slicing: the value may have a multi-byte character at that offset.
        let head = value.get(..scheme.len());
        if value.len() > scheme.len() && head.is_some_and(|head| head.eq_ignore_ascii_case(scheme))
        {
            let rest = &value[scheme.len()..];
            let trimmed = rest.trim_start();
            if trimmed.len() < rest.len() {
                return value.split_at(value.len() - trimmed.len());
            }
        }
    }
    ("", value)
}

/// Splits `"abc"` into (`"`, `abc`, `"`); unquoted values have empty quotes.
fn split_quotes(value: &str) -> (&str, &str, &str) {
    for quote in ["\"", "'"] {
        if value.len() >= 2 && value.starts_with(quote) && value.ends_with(quote) {
            return (quote, &value[1..value.len() - 1], quote);
        }
    }
    ("", value, "")
}

/// Applies every rule once, in order; a rule whose needles are absent is skipped uncompiled.
fn redact_once(text: &str) -> Cow<'_, str> {
    let mut lower = folded(text);
    let mut out = Cow::Borrowed(text);
    for rule in RULES.iter() {
        if !rule.admits(&lower) {
            continue;
        }
        let replaced = rule.regex.get().replace_all(&out, rule.rewrite);
        if let Cow::Owned(changed) = replaced {
            // Later rules look for their needles in the rewritten text.
            lower = folded(&changed);
            out = Cow::Owned(changed);
        }
    }
    out
}

/// Whether `text` is, or holds, a credential by its shape alone — a private-key block, a password
/// in a URL, a cloud or SaaS token (`AKIA…`, `ghp_…`, `glpat-…`, `xox…-`, `sk-…`), a bearer or basic
/// credential — as a variable's value may (`policy::environment`). The rules that need a name
/// beside the value (`password=…`) or a command line around it (`mysql -p…`) are not asked: their
/// patterns are the costliest to compile, and a value is not a command line.
pub fn is_credential(text: &str) -> bool {
    let lower = folded(text);
    RULES
        .iter()
        .filter(|rule| rule.shape && rule.admits(&lower))
        // A rule's rewrite may keep what it matched ("basic settings" is prose).
        .any(|rule| rule.regex.get().replace_all(text, rule.rewrite) != text)
}

/// Redacts every secret in `text`. Returns the text unchanged (borrowed) when there is none.
///
/// The rules are applied until nothing changes (at most a few rounds), which makes the result a
/// fixed point: redacting it again changes nothing.
pub fn redact(text: &str) -> Cow<'_, str> {
    const MAX_ROUNDS: usize = 4;
    let mut current = redact_once(text);
    for _ in 1..MAX_ROUNDS {
        let next = match redact_once(&current) {
            Cow::Borrowed(_) => None,
            Cow::Owned(next) => Some(next),
        };
        match next {
            Some(next) if next != *current => current = Cow::Owned(next),
            _ => break,
        }
    }
    current
}

/// The names of the rules that match `text` (the tests check every rule fires).
#[cfg(test)]
fn matching_rules(text: &str) -> Vec<&'static str> {
    let lower = folded(text);
    RULES
        .iter()
        .filter(|rule| rule.admits(&lower) && rule.regex.get().is_match(text))
        .map(|rule| rule.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Asserts that `secret` is gone from the redacted `input`, that `kept` survives, and that the
    /// result is a fixed point.
    fn check(input: &str, secret: &str, kept: &str) {
        let out = redact(input);
        assert!(!out.contains(secret), "{secret:?} survived in {out:?}");
        assert!(out.contains(MARKER), "no marker in {out:?}");
        assert!(out.contains(kept), "{kept:?} lost in {out:?}");
        assert_eq!(redact(&out), out, "not idempotent on {input:?}");
    }

    #[test]
    fn key_value_forms() {
        check(
            "export GITHUB_TOKEN=abc123def",
            "abc123def",
            "GITHUB_TOKEN=",
        );
        check("PASSWORD='hunter 2' ./run", "hunter 2", "PASSWORD='");
        check("db_passwd=\"s3cr3t\"", "s3cr3t", "db_passwd=\"");
        check("client_secret: xyz789", "xyz789", "client_secret: ");
        check(r#"{"api_key": "k-123456"}"#, "k-123456", r#""api_key": ""#);
        check(r#"{"apiKey":"k-123456"}"#, "k-123456", r#""apiKey":""#);
        check(
            "curl 'https://x/?access_token=abc123&x=1'",
            "abc123",
            "&x=1",
        );
        check("credentials=topsecret", "topsecret", "credentials=");
        check("private_key=MIIEv", "MIIEv", "private_key=");
    }

    #[test]
    fn suffix_assignments() {
        check(
            "STRIPE_KEY=rk_live_123 node app.js",
            "rk_live_123",
            "node app.js",
        );
        check("DB_PASS=letmein psql", "letmein", "DB_PASS=");
        check("MYSQL_PWD=letmein mysql", "letmein", "MYSQL_PWD=");
        check("MY_SECRET=abc", "abc", "MY_SECRET=");
        // Names that merely contain KEY or PWD are not secrets.
        assert_eq!(
            redact("PRIMARY_KEY_ID=7 OLDPWD=/tmp"),
            "PRIMARY_KEY_ID=7 OLDPWD=/tmp"
        );
    }

    #[test]
    fn flags() {
        check("app --password=hunter2 run", "hunter2", "--password=");
        check("app --token abc123 run", "abc123", "--token ");
        check("vault login --api-key 'a b c'", "a b c", "--api-key '");
        // A following flag is not a value.
        assert_eq!(redact("app --token --verbose"), "app --token --verbose");
    }

    #[test]
    fn authorization_headers() {
        check(
            "curl -H 'Authorization: Bearer eyJhbGciOi.J9.x' https://api",
            "eyJhbGciOi",
            "Authorization: Bearer ",
        );
        check(
            "curl -H 'Authorization: token ghx123456' u",
            "ghx123456",
            "token ",
        );
        check(
            "wget --header='X: Bearer abcDEF123456'",
            "abcDEF123456",
            "Bearer ",
        );
        check("Basic dXNlcjpwYXNz", "dXNlcjpwYXNz", "Basic ");
        // Prose is left alone.
        assert_eq!(redact("basic settings"), "basic settings");
    }

    #[test]
    fn variable_references_stay_visible() {
        let line = r#"curl -H "Authorization: Bearer $TOKEN" --password "${PW}""#;
        assert_eq!(redact(line), line);
    }

    #[test]
    fn cloud_and_saas_tokens() {
        check("aws s3 ls AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE", "AKIA");
        check(
            "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI",
            "AKIA",
        );
        check(
            "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI",
            "aws_secret_access_key ",
        );
        check(
            "git push https://ghp_1234567890abcdefghijABCDEFGHIJ123456@github.com/x",
            "1234567890abcdef",
            "ghp_",
        );
        check(
            "echo github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "11ABCDEFG",
            "github_pat_",
        );
        check(
            "glpat-abcdefghij0123456789",
            "abcdefghij0123456789",
            "glpat-",
        );
        check(
            "SLACK=xoxb-123456789012-abcdefghij",
            "123456789012",
            "SLACK=",
        );
        check(
            "post xoxb-123456789012-abcdefghij now",
            "123456789012",
            "xoxb-",
        );
        check(
            "curl https://hooks.slack.com/services/T000/B000/XXXXXXXX",
            "T000/B000",
            "hooks.slack.com/services/",
        );
        check(
            "echo sk-proj-abcdefghijklmnopqrstuvwxyz012345",
            "abcdefghijklmnop",
            "sk-proj-",
        );
        check(
            "echo sk-ant-api03-abcdefghijklmnopqrstuvwxyz",
            "abcdefghijklmnop",
            "sk-ant-",
        );
    }

    #[test]
    fn private_key_block() {
        let pem = "cat <<EOF\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA75\nabc+/=\n-----END RSA PRIVATE KEY-----\nEOF";
        check(pem, "MIIEpAIBAAKCAQEA75", "-----BEGIN RSA PRIVATE KEY-----");
        assert!(redact(pem).ends_with("EOF"));
        // A block cut off before its end is redacted to the end of the text.
        check(
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt",
            "b3BlbnNz",
            "OPENSSH",
        );
    }

    #[test]
    fn credentials_in_urls() {
        check(
            "git clone https://alice:s3cret@example.com/r.git",
            "s3cret",
            "https://alice:",
        );
        check("psql postgres://app:p@ss@db:5432/x", "p@ss", "@db:5432/x");
        check(
            "redis-cli -u redis://:pw123@localhost",
            "pw123",
            "redis://:",
        );
        assert_eq!(redact("ssh git@github.com"), "ssh git@github.com");
    }

    #[test]
    fn database_clients() {
        check("mysql -u root -pS3cret db", "S3cret", "-u root -p");
        check("mysqldump -h h -p'a b' db", "a b", "mysqldump");
        check("sshpass -p hunter2 ssh host", "hunter2", "ssh host");
        check("curl -u bob:hunter2 https://x", "hunter2", "-u bob:");
        // A lone -p makes mysql prompt: nothing to redact; -p is a port for other tools.
        assert_eq!(redact("mysql -u root -p db"), "mysql -u root -p db");
        assert_eq!(redact("ssh -p2222 host"), "ssh -p2222 host");
    }

    #[test]
    fn harmless_lines_are_borrowed() {
        for line in [
            "ls -la",
            "git log --oneline",
            "cargo test -p shellgate",
            "echo $HOME",
        ] {
            assert!(matches!(redact(line), Cow::Borrowed(_)), "{line}");
        }
    }

    #[test]
    fn every_rule_is_exercised_by_name() {
        let samples = [
            "-----BEGIN PRIVATE KEY-----x-----END PRIVATE KEY-----",
            "https://u:p@h",
            "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AKIAIOSFODNN7EXAMPLE",
            "ghp_abcdefghijklmnopqrstuvwxyz",
            "glpat-abcdefghijklmnopqrstuvwxyz",
            "xoxb-1234567890",
            "hooks.slack.com/services/x",
            "sk-ant-abcdefghijklmnopqrstuvwxyz",
            "sk-abcdefghijklmnopqrstuvwxyz",
            "Bearer abcdefgh1",
            "mysql -pX",
            "sshpass -p x",
            "curl -u a:b",
            "token=x",
            "--token x",
        ];
        let mut seen: Vec<&str> = samples.iter().flat_map(|s| matching_rules(s)).collect();
        seen.sort_unstable();
        seen.dedup();
        let mut all: Vec<&str> = RULES.iter().map(|rule| rule.name).collect();
        all.sort_unstable();
        assert_eq!(seen, all);
    }

    /// Fragments that combine into text close to real secrets, so the property tests hit the
    /// rules' edges rather than random noise that no rule matches.
    fn fragment() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("password".to_string()),
            Just("TOKEN".to_string()),
            Just("_KEY".to_string()),
            Just("--api-key".to_string()),
            Just("=".to_string()),
            Just(": ".to_string()),
            Just(" ".to_string()),
            Just("\"".to_string()),
            Just("'".to_string()),
            Just("\n".to_string()),
            Just("Bearer ".to_string()),
            Just("https://u:".to_string()),
            Just("@".to_string()),
            Just("mysql -p".to_string()),
            Just("-----BEGIN RSA PRIVATE KEY-----".to_string()),
            Just("-----END RSA PRIVATE KEY-----".to_string()),
            Just("ghp_".to_string()),
            Just("sk-ant-".to_string()),
            Just("AKIA".to_string()),
            Just(MARKER.to_string()),
            Just("$TOKEN".to_string()),
            Just("Cookie".to_string()),
            Just("DB_PWD".to_string()),
            Just("secret_access_key".to_string()),
            Just("-----BEGIN OPENSSH PRIVATE KEY-----".to_string()),
            Just("hooks.slack.com/services/".to_string()),
            Just("xoxb-".to_string()),
            Just("glpat-".to_string()),
            Just("sk-proj-".to_string()),
            Just("Basic ".to_string()),
            Just("sshpass -p ".to_string()),
            Just("mysql ".to_string()),
            Just(" --user ".to_string()),
            Just("ASIA".to_string()),
            Just("://".to_string()),
            // Letters a case-insensitive pattern reads as ASCII ones: `to\u{212A}en` is `token`.
            Just("to\u{212A}en".to_string()),
            Just("PA\u{017F}\u{017F}WORD".to_string()),
            Just("_\u{212A}EY".to_string()),
            Just("\u{017F}ecret".to_string()),
            "[A-Za-z0-9/+_-]{1,24}",
            "\\PC{0,8}",
        ]
    }

    /// The needles are looked for in [`folded`] text: every character outside ASCII that a
    /// case-insensitive pattern matches as an ASCII letter must be in [`FOLDS_INTO_ASCII`], or a
    /// secret spelled with it would skip its rule. Asked of the regex engine, over every character.
    #[test]
    fn only_two_characters_outside_ascii_fold_into_it() {
        let mut found = Vec::new();
        for letter in 'a'..='z' {
            let pattern = format!("(?i)^{letter}$");
            let Ok(regex) = Regex::new(&pattern) else {
                panic!("{pattern}")
            };
            for c in (0x80..=0x10FFFF).filter_map(char::from_u32) {
                if regex.is_match(c.encode_utf8(&mut [0; 4])) {
                    found.push((c, letter));
                }
            }
        }
        assert_eq!(found, FOLDS_INTO_ASCII.to_vec());
        assert_eq!(folded("\u{212A}EY \u{017F}k-ANT-é"), "key sk-ant-é");
    }

    /// A value outside ASCII no longer compiles every rule: its needles are found in its fold.
    #[test]
    fn text_outside_ascii_is_admitted_by_its_needles_only() {
        let lower = folded("caf\u{e9} \u{2060}");
        assert!(RULES.iter().all(|rule| !rule.admits(&lower)));
        // A case-insensitive rule still sees a secret spelled with the Kelvin sign.
        let text = format!("caf\u{e9} secret_access_\u{212A}ey={}", "A".repeat(40));
        assert_eq!(
            redact(&text),
            format!("caf\u{e9} secret_access_\u{212A}ey={MARKER}")
        );
    }

    proptest! {
        #[test]
        fn never_panics_and_is_idempotent(parts in proptest::collection::vec(fragment(), 0..16)) {
            let text: String = parts.concat();
            let once = redact(&text).into_owned();
            let twice = redact(&once).into_owned();
            prop_assert_eq!(once, twice);
        }

        /// The needles never hide a match: a rule that matches some text admits it.
        #[test]
        fn needles_admit_everything_a_rule_matches(parts in proptest::collection::vec(fragment(), 0..16)) {
            let text: String = parts.concat();
            let lower = folded(&text);
            for rule in RULES.iter() {
                if rule.regex.get().is_match(&text) {
                    prop_assert!(
                        rule.admits(&lower),
                        "{} matches {:?} without its needles", rule.name, text
                    );
                }
            }
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let once = redact(&text).into_owned();
            prop_assert_eq!(redact(&once).into_owned(), once);
        }
    }

    #[test]
    fn a_credential_by_its_shape_alone() {
        for text in [
            "ghp_0123456789abcdefghij0123456789abcdef",
            "postgres://app:hunter2@db/app",
            "AKIAIOSFODNN7EXAMPLE",
            "Bearer abcDEF123456",
            "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----",
        ] {
            assert!(is_credential(text), "{text}");
        }
        // A name beside a value, or a command line, is not a shape (redact still hides them).
        for text in [
            "password=hunter2",
            "mysql -u root -phunter2",
            "basic settings",
            "/usr/bin",
        ] {
            assert!(!is_credential(text), "{text}");
        }
    }
}
