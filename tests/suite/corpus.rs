//! Walks `tests/corpus/dcg.jsonl` (destructive_command_guard's regression corpus, re-keyed and
//! vendored with its licence; see `tests/corpus/README.md`):
//! no `not-allowed` line may be decided `allow`; no `not-denied` line may be decided `deny`.
//! Every miss is printed with its line and category before the test fails.
//!
//! The one kind of `deny` a `not-denied` line may get is intake's length limit: the corpus holds a
//! 7,596-character `git commit -m '…'`, and shellgate refuses every line over 4,000 characters
//! before any rule looks at it. Those lines are listed, and must be refused for exactly that reason.

use serde::Deserialize;
use shellgate::config::Config;
use shellgate::error::Code;
use shellgate::intake::MAX_LINE_CHARS;
use shellgate::mode::{SessionFacts, resolve};
use shellgate::parse::ShellKind;
use shellgate::policy::{Verdict, decide_bytes_routing};
use std::path::PathBuf;

#[derive(Deserialize)]
struct Case {
    line: String,
    expect: String,
    category: String,
}

fn corpus() -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/dcg.jsonl");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the corpus at {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("corpus line is JSON"))
        .collect()
}

#[test]
fn dcg_corpus_has_no_misses() {
    let cases = corpus();
    assert!(
        cases.len() >= 400,
        "the corpus should have 430 lines, found {}",
        cases.len()
    );
    let config = Config::builtin();
    let mut misses = Vec::new();
    let mut length_refused = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    for mode in ["ask", "auto", "read-only"] {
        let resolved = resolve(Some(mode), config.modes(), SessionFacts::default());
        assert_eq!(resolved.mode, mode);
        for case in &cases {
            // Lines routed to `ai` are reported as `review`, as with a reviewer configured.
            let d = decide_bytes_routing(
                case.line.as_bytes(),
                ShellKind::Bash,
                "/work/project",
                &config.rules,
                &resolved,
                true,
            );
            *counts
                .entry((mode, case.expect.clone(), format!("{:?}", d.decision)))
                .or_insert(0) += 1;
            let miss = match case.expect.as_str() {
                "not-allowed" => d.decision == Verdict::Allow,
                "not-denied" if d.decision == Verdict::Deny && d.code == Code::LineTooLong => {
                    assert!(case.line.chars().count() > MAX_LINE_CHARS);
                    if mode == "ask" {
                        length_refused.push(case.line.chars().count());
                    }
                    false
                }
                "not-denied" => d.decision == Verdict::Deny,
                other => panic!("unknown expectation {other}"),
            };
            if miss {
                misses.push(format!(
                    "[{mode}] {} ({}): {:?} → {:?} {} {}",
                    case.expect, case.category, case.line, d.decision, d.code, d.reason
                ));
            }
        }
    }
    for ((mode, expect, verdict), n) in &counts {
        println!("{mode:<10} {expect:<12} {verdict:<7} {n}");
    }
    println!(
        "not-denied lines refused by intake's {MAX_LINE_CHARS}-character limit: {length_refused:?}"
    );
    for m in &misses {
        println!("MISS {m}");
    }
    assert!(misses.is_empty(), "{} misses (listed above)", misses.len());
}
