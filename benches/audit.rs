//! Audit log benchmarks: append throughput, and the cost of turning a 100k-event log into state.
//!
//! Run: `cargo bench --bench audit`. Figures are recorded in docs/audit.md.

// A test or benchmark may panic on what it set up itself; the lints are for the product code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use shellgate::audit::event::{
    ApprovalDecision, Decider, Decision, EventBody, ExecFinished, LineAsked, ReviewVerdict,
    Reviewer, RiskLevel,
};
use shellgate::audit::log::parse_log;
use shellgate::audit::{FoldParams, RequestId, Session, SessionId, StatePaths, fold};
use shellgate::error::Code;
use shellgate::mode::SandboxPolicy;
use std::hint::black_box;

const EVENTS: usize = 100_000;

/// The events of one reviewed line, in order.
fn line_events(index: usize) -> [EventBody; 4] {
    let line = format!("git push origin feature-{index} --force-with-lease");
    let decision = if index.is_multiple_of(4) {
        Decision::Deny
    } else {
        Decision::Allow
    };
    [
        EventBody::ApprovalAsked(LineAsked {
            line: line.clone(),
            program: "git".into(),
            cwd: "/home/dev/project".into(),
            mode: "auto".into(),
            sandbox: SandboxPolicy::WorkspaceWrite,
            grant: None,
            code: Code::NeedsReview,
            reason: "git push is routed to the reviewer".into(),
        }),
        EventBody::AutoReviewVerdict(ReviewVerdict {
            line,
            program: "git".into(),
            decision,
            risk: RiskLevel::Medium,
            reason: "pushes a feature branch of this repository; no force over others' work".into(),
            reviewer: Reviewer {
                provider: "openai".into(),
                model: "qwen2.5-coder-1.5b".into(),
            },
            duration_ms: 900 + (index as u64 % 300),
            cached: index.is_multiple_of(7),
        }),
        EventBody::ApprovalDecided(ApprovalDecision {
            decision,
            by: Decider::Reviewer,
            code: if decision == Decision::Allow {
                Code::Allowed
            } else {
                Code::AutoReviewDenied
            },
            reason: "reviewer verdict".into(),
        }),
        EventBody::ExecFinished(ExecFinished {
            exit_code: Some(0),
            signal: None,
            duration_ms: 40,
            sandbox: SandboxPolicy::WorkspaceWrite,
        }),
    ]
}

/// Writes a log of `EVENTS` events through the real append path and returns its bytes.
fn write_log(dir: &std::path::Path) -> Vec<u8> {
    let session = Session::open(&StatePaths::at(dir), SessionId::parse("bench").unwrap()).unwrap();
    for index in 0..EVENTS / 4 {
        let request = RequestId::new_random();
        for body in line_events(index) {
            session.append(Some(&request), body).unwrap();
        }
    }
    std::fs::read(session.path()).unwrap()
}

fn append(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let session =
        Session::open(&StatePaths::at(dir.path()), SessionId::parse("a").unwrap()).unwrap();
    let request = RequestId::new_random();
    let mut group = c.benchmark_group("append");
    group.throughput(Throughput::Elements(1));
    let mut index = 0;
    group.bench_function("verdict event", |b| {
        b.iter_batched(
            || {
                index += 1;
                line_events(index)[1].clone()
            },
            |body| session.append(Some(&request), body).unwrap(),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn replay(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let bytes = write_log(dir.path());
    let events = parse_log(&bytes).events;
    assert_eq!(events.len(), EVENTS);
    let params = FoldParams::default();
    let mut group = c.benchmark_group("replay 100k events");
    group.sample_size(10);
    group.throughput(Throughput::Elements(EVENTS as u64));
    group.bench_function("fold", |b| b.iter(|| fold(black_box(&events), &params)));
    group.bench_function("parse", |b| b.iter(|| parse_log(black_box(&bytes))));
    group.bench_function("read, parse and fold", |b| {
        b.iter(|| {
            let path = dir.path().join("sessions/bench.jsonl");
            let contents = shellgate::audit::log::read_log(&path).unwrap();
            fold(&contents.events, &params)
        })
    });
    group.finish();
}

fn redaction(c: &mut Criterion) {
    let mut group = c.benchmark_group("redact");
    let clean = "git log --oneline --graph --decorate -n 20 -- src/audit";
    let secret =
        "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc' https://u:pw@api.example.com/x";
    group.bench_function("line without secrets", |b| {
        b.iter(|| shellgate::redact::redact(black_box(clean)))
    });
    group.bench_function("line with secrets", |b| {
        b.iter(|| shellgate::redact::redact(black_box(secret)))
    });
    group.finish();
}

criterion_group!(benches, append, replay, redaction);
criterion_main!(benches);
