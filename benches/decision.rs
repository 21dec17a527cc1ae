//! The decision core, in process: intake + parse + rules + mode routing for one line.
//!
//! Groups: `typical` (one benchmark per everyday agent line), `corpus` (every line of
//! `tests/corpus/dcg.jsonl` per iteration; throughput in lines), `adversarial` (4,000-character
//! lines built to be slow: deep nesting, long lists, many words, quoting, here-documents).
//! Goals: ≤ 5 µs median for typical lines, ≤ 200 µs for the worst 4,000-character line.
//! Run: `cargo bench --bench decision`. A bench of the core crate (crates/core): it links nothing
//! but the decision core, with the built-in rules and no config files.

// A test or benchmark may panic on what it set up itself; the lints are for the product code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use shellgate_core::mode::{Modes, SessionFacts, resolve};
use shellgate_core::parse::ShellKind;
use shellgate_core::policy::rules::builtin_rules;
use shellgate_core::policy::{PolicyConfig, decide_bytes};
use std::hint::black_box;

const TYPICAL: [&str; 12] = [
    "ls -la",
    "git status",
    "git diff HEAD~1 -- src/main.rs",
    "cargo build --release",
    "cat README.md | grep -n shellgate",
    "rg -n 'fn main' src",
    "npm test -- --watch=false",
    "cd src && ls -la && git log --oneline -5",
    "python3 -m pytest -q tests/test_x.py",
    "rm -rf target/debug/build",
    "find . -name '*.rs' -newer Cargo.toml",
    "echo \"$(date)\" >> notes.txt",
];

fn adversarial() -> Vec<(&'static str, String)> {
    let fill = |unit: &str| unit.repeat(4000 / unit.len());
    vec![
        (
            "and-chain",
            fill("ls && ").trim_end_matches("&& ").to_owned(),
        ),
        (
            "nested-subst",
            format!("{}x{}", "$(".repeat(1000), ")".repeat(1000)),
        ),
        (
            "nested-subshell",
            format!("{}x{}", "(".repeat(1999), ")".repeat(1999)),
        ),
        ("many-words", format!("echo {}", fill("ab "))),
        ("quotes", format!("echo {}", fill("'a'\"b\"$'c' "))),
        ("pipes", fill("cat | ").trim_end_matches("| ").to_owned()),
        ("bash-c-nest", {
            let mut l = "rm -rf x".to_owned();
            for _ in 0..8 {
                l = format!("bash -c '{}'", l.replace('\'', "'\\''"));
            }
            l
        }),
        (
            "heredoc",
            format!("bash <<'EOF'\n{}\nEOF", fill("rm -rf x\n")),
        ),
        ("unclosed-quotes", fill("\"$('")),
        ("wrappers", format!("{}rm -rf /", fill("sudo env nice "))),
    ]
    .into_iter()
    .map(|(name, line)| {
        let mut line = line;
        while line.chars().count() > 4000 {
            line.pop();
        }
        (name, line)
    })
    .collect()
}

/// The corpus, built in: a missing file is a build error, not an empty (and so meaninglessly
/// fast) benchmark.
const CORPUS: &str = include_str!("../tests/corpus/dcg.jsonl");

fn corpus() -> Vec<String> {
    CORPUS
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["line"].as_str().map(str::to_owned))
        .collect()
}

fn bench(c: &mut Criterion) {
    let rules = builtin_rules();
    let policy = PolicyConfig {
        rules: &rules,
        reviewer_configured: false,
        typed_by_a_person: false,
        remotes: None,
        registries: None,
        ssh: None,
    };
    let mode = resolve(Some("ask"), Modes::default(), SessionFacts::default());
    let decide = |line: &str| {
        decide_bytes(
            line.as_bytes(),
            ShellKind::Bash,
            "/work/project",
            policy,
            &mode,
        )
    };

    let mut typical = c.benchmark_group("typical");
    for line in TYPICAL {
        typical.bench_with_input(BenchmarkId::from_parameter(line), line, |b, l| {
            b.iter(|| decide(black_box(l)))
        });
    }
    typical.finish();

    let lines = corpus();
    if !lines.is_empty() {
        let mut group = c.benchmark_group("corpus");
        group.throughput(Throughput::Elements(lines.len() as u64));
        group.bench_function("dcg", |b| {
            b.iter(|| {
                for l in &lines {
                    black_box(decide(l));
                }
            })
        });
        group.finish();
    }

    let mut adv = c.benchmark_group("adversarial");
    adv.sample_size(20);
    for (name, line) in adversarial() {
        assert!(line.chars().count() <= 4000, "{name}");
        adv.bench_with_input(BenchmarkId::from_parameter(name), &line, |b, l| {
            b.iter(|| decide(black_box(l)))
        });
    }
    adv.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
