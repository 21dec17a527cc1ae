//! shellgate's attack corpus (`tests/corpus/shellgate-attacks.toml`, issue 12): every line of
//! every class is decided in every mode, and every miss is printed with its mode, class and line
//! before the test fails. Also here: the here-document delimiter, computed as shellgate computes
//! it, against the real bash, dash and zsh.

use serde::Deserialize;
use shellgate::config::Config;
use shellgate::error::Code;
use shellgate::mode::{Resolved, SandboxPolicy, SessionFacts, resolve};
use shellgate::parse::ShellKind;
use shellgate::parse::heredoc;
use shellgate::policy::{Decision, Route, Verdict, decide_bytes_routing};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Corpus {
    group: Vec<Group>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Group {
    class: String,
    #[allow(dead_code)]
    description: String,
    expect: Expectation,
    #[serde(default)]
    rule: Option<String>,
    #[serde(default)]
    shell: Option<ShellKind>,
    lines: Vec<String>,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum Expectation {
    KnownSafe,
    NotKnownSafe,
    Flagged,
    PersonEverywhere,
    DeniedEverywhere,
    RefusedByIntake,
}

const MODES: [&str; 5] = ["ask", "auto", "untrusted", "read-only", "full"];

fn corpus() -> Corpus {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/shellgate-attacks.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Why `d` misses `group`'s expectation in `mode`, if it does.
fn miss(group: &Group, mode: &str, d: &Decision) -> Option<String> {
    let rule_ok = group
        .rule
        .as_deref()
        .is_none_or(|want| d.rule.as_deref() == Some(want));
    let ok = match group.expect {
        Expectation::KnownSafe => {
            d.decision == Verdict::Allow
                && d.route == Route::KnownSafe
                && d.grant.sandbox == SandboxPolicy::ReadOnly
        }
        Expectation::NotKnownSafe => {
            let not_read_only = mode == "read-only" || d.grant.sandbox != SandboxPolicy::ReadOnly;
            let asked = !matches!(mode, "untrusted" | "read-only") || d.decision != Verdict::Allow;
            d.route != Route::KnownSafe && not_read_only && asked
        }
        Expectation::Flagged => match mode {
            "ask" | "untrusted" | "read-only" => d.decision == Verdict::Ask && rule_ok,
            "auto" => matches!(d.decision, Verdict::Review | Verdict::Ask) && rule_ok,
            // Full access runs what the rules send to `ai` (and has the network): it must only
            // never take such a line for one that just reads.
            _ => d.route != Route::KnownSafe,
        },
        Expectation::PersonEverywhere => d.decision == Verdict::Ask && rule_ok,
        Expectation::DeniedEverywhere => d.decision == Verdict::Deny && d.code == Code::NeverPolicy,
        Expectation::RefusedByIntake => {
            d.decision == Verdict::Deny && d.code == Code::InputRejected && d.reason.contains("U+")
        }
    };
    (!ok).then(|| {
        format!(
            "{:?}: {} {} route={} rule={} sandbox={}: {}",
            group.expect,
            d.decision.as_str(),
            d.code,
            d.route.as_str(),
            d.rule.as_deref().unwrap_or("-"),
            d.grant.sandbox,
            d.reason
        )
    })
}

fn resolved(mode: &str, config: &Config) -> Resolved {
    let r = resolve(
        Some(mode),
        config.modes(),
        SessionFacts {
            full_access_confirmed: true,
            review_disabled: false,
        },
    );
    assert_eq!(r.mode, mode);
    r
}

#[test]
fn the_attack_corpus_has_no_misses() {
    let corpus = corpus();
    let config = Config::builtin();
    let modes: Vec<(&str, Resolved)> = MODES.iter().map(|m| (*m, resolved(m, &config))).collect();
    let mut misses = Vec::new();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for group in &corpus.group {
        *counts.entry(group.class.as_str()).or_insert(0) += group.lines.len();
        let shell = group.shell.unwrap_or(ShellKind::Bash);
        for line in &group.lines {
            for (mode, resolved) in &modes {
                let d = decide_bytes_routing(
                    line.as_bytes(),
                    shell,
                    "/work/project",
                    &config.rules,
                    resolved,
                    true,
                );
                if let Some(why) = miss(group, mode, &d) {
                    misses.push(format!("[{mode}] {}: {line:?} → {why}", group.class));
                }
            }
        }
    }
    let total: usize = counts.values().sum();
    for (class, n) in &counts {
        println!("{class:<22} {n:>3} lines");
    }
    println!("{:<22} {total:>3} lines × {} modes", "total", MODES.len());
    for m in &misses {
        println!("MISS {m}");
    }
    assert!(misses.is_empty(), "{} misses (listed above)", misses.len());
    assert!(total >= 300, "the corpus should not shrink: {total} lines");
}

/// Each class of issue 12 has several variants.
#[test]
fn every_class_has_variants() {
    for group in corpus().group {
        assert!(group.lines.len() >= 3, "{}", group.class);
    }
}

/// Delimiter words and what each shell ends the here-document at (`None`: the shells differ,
/// which shellgate makes opaque; checked per shell below).
const DELIMITERS: [&str; 20] = [
    "EOF",
    "'E\\OF'",
    "E\\OF",
    "\"E\\OF\"",
    "\"E\\\\OF\"",
    "E'O'F",
    "$X",
    "\"$X\"",
    "E\\\\OF",
    "'E\"F'",
    "\\EOF",
    "'EOF'x",
    "E${X}F",
    "E`x`F",
    "''",
    "E\"\\$\"F",
    "\"E\\$F\"",
    "\\\\",
    "$'EF'",
    "$\"EF\"",
];

/// Run `script` with `shell -c` and return its standard output.
fn run(shell: &str, script: &str) -> String {
    let out = Command::new(shell)
        .arg("-c")
        .arg(script)
        .env("X", "zz")
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {shell}: {e}. Install it (apt-get install -y {shell}) to run this test"
            )
        });
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// For each delimiter word, the delimiter shellgate computes for `shell` ends the here-document in
/// the real shell: the body is printed, and the command after the delimiter line runs.
fn delimiters_match(shell: &str) {
    let mut misses = Vec::new();
    for raw in DELIMITERS {
        let delimiter = heredoc::delimiter_for(raw, shell);
        if delimiter.contains('\n') {
            continue;
        }
        let script = format!("cat <<{raw}\nbody\n{delimiter}\necho AFTER\n");
        let out = run(shell, &script);
        if out != "body\nAFTER\n" {
            misses.push(format!(
                "{raw:?}: shellgate says {delimiter:?}; {shell} printed {out:?}"
            ));
        }
    }
    for m in &misses {
        println!("MISS {m}");
    }
    assert!(misses.is_empty(), "{shell}: {} misses", misses.len());
}

#[test]
fn heredoc_delimiters_match_bash() {
    delimiters_match("bash");
}

#[test]
fn heredoc_delimiters_match_dash() {
    delimiters_match("dash");
}

#[test]
fn heredoc_delimiters_match_zsh() {
    delimiters_match("zsh");
}

/// Where tree-sitter ends a here-document elsewhere than the shells, what the shells run after it
/// is still judged: the hidden `rm -rf /` runs in bash, dash and zsh, and shellgate denies it.
#[test]
fn what_the_shells_run_after_a_here_document_is_judged() {
    let config = Config::builtin();
    let ask = resolved("ask", &config);
    for shell in ["bash", "dash", "zsh"] {
        let delimiter = heredoc::delimiter_for("'E\\OF'", shell);
        let script = format!("cat <<'E\\OF'\nbody\n{delimiter}\necho HIDDEN\nEOF\n");
        assert!(run(shell, &script).contains("HIDDEN"), "{shell}");
    }
    let line = "cat <<'E\\OF'\nbody\nE\\OF\nrm -rf /\nEOF";
    let d = decide_bytes_routing(
        line.as_bytes(),
        ShellKind::Bash,
        "/w",
        &config.rules,
        &ask,
        true,
    );
    assert_eq!(d.code, Code::NeverPolicy, "{}", d.reason);
}
