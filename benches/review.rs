//! The reviewer's own cost, against the scripted local server that answers at once.
//!
//! - `overhead/*`: one review in process (`review::review`: prompt, runtime, client, request,
//!   response, strict parsing, risk policy), next to the baseline `overhead/raw round-trip`, a bare
//!   HTTP/1.1 POST of a same-sized body to the same server over a new connection with `std::net`.
//!   The difference is shellgate's overhead on top of the server's latency.
//! - `whole process/*`: `shellgate check` as a process: a known-safe line (the baseline), a line
//!   whose verdict is cached, and a line reviewed by the scripted server.
//!
//! `cargo bench --bench review`; numbers in docs/reviewer.md.

// A test or benchmark may panic on what it set up itself; the lints are for the product code.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/review_support/mod.rs"]
mod review_support;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use review_support::{ScriptedServer, anthropic_verdict, openai_verdict};
use shellgate::audit::{RequestId, SessionId, SessionState, StatePaths};
use shellgate::config::{Config, ReviewerConfig};
use shellgate::mode::{self, SessionFacts};
use shellgate::parse::ShellKind;
use shellgate::policy;
use shellgate::review::{self, ReviewRequest};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn reviewer(provider: &str, server: &ScriptedServer, extra: &str) -> ReviewerConfig {
    toml::from_str(&format!(
        "provider = \"{provider}\"\nbase_url = \"{}\"\nmodel = \"bench\"\n{extra}\n",
        server.base_url()
    ))
    .expect("reviewer config")
}

/// One review of `line` without a session (nothing appended, no cache).
fn review_once(config: &ReviewerConfig, workspace: &Path, line: &str) {
    let full = Config {
        reviewer: Some(config.clone()),
        ..Config::builtin()
    };
    let resolved = mode::resolve(Some("auto"), full.modes(), SessionFacts::default());
    let cwd = workspace.to_string_lossy();
    let decision = policy::decide_bytes(
        line.as_bytes(),
        ShellKind::Bash,
        &cwd,
        full.policy(),
        &resolved,
    );
    let state = SessionState::new(review::fold_params(config, true));
    let request = RequestId::new_random();
    let outcome = review::review(&ReviewRequest::new(
        line, workspace, &decision, config, &state, &request,
    ));
    assert!(outcome.runs(), "{outcome:?}");
}

/// The baseline: a POST of `body_len` bytes on a new connection, reading the whole answer.
fn raw_round_trip(port: u16, body: &[u8]) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("write");
    stream.write_all(body).expect("write");
    let mut response = Vec::new();
    let mut buf = [0u8; 8192];
    // The scripted server keeps the connection open: read until the body's declared length.
    loop {
        let n = stream.read(&mut buf).expect("read");
        if n == 0 {
            break;
        }
        response.extend_from_slice(&buf[..n]);
        if complete(&response) {
            break;
        }
    }
}

fn complete(response: &[u8]) -> bool {
    let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&response[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    response.len() >= end + 4 + length
}

fn overhead(c: &mut Criterion) {
    let server = ScriptedServer::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = dir.path();
    let line = "cargo update --workspace";
    let mut group = c.benchmark_group("overhead");
    // The baseline body: the size of a real review request.
    server.always(openai_verdict("allow", "low", "builds"));
    review_once(&reviewer("openai", &server, ""), workspace, line);
    let body = server.received()[0].body.clone();
    group.bench_function("raw round-trip", |b| {
        b.iter(|| raw_round_trip(server.port(), &body))
    });
    let openai = reviewer("openai", &server, "");
    group.bench_function("review openai", |b| {
        b.iter(|| review_once(&openai, workspace, line))
    });
    server.clear();
    server.always(anthropic_verdict("allow", "low", "builds"));
    let anthropic = reviewer("anthropic", &server, "");
    group.bench_function("review anthropic", |b| {
        b.iter(|| review_once(&anthropic, workspace, line))
    });
    group.finish();
    server.clear();
}

/// A state root, a config and a session for `shellgate check` processes.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new(server: &ScriptedServer, extra: &str) -> Home {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("home/.config/shellgate");
        std::fs::create_dir_all(&config).expect("mkdir");
        std::fs::create_dir_all(dir.path().join("work")).expect("mkdir");
        std::fs::write(
            config.join("config.toml"),
            format!(
                "mode = \"auto\"\n[reviewer]\nprovider = \"openai\"\nbase_url = \"{}\"\n\
                 model = \"bench\"\n{extra}\n",
                server.base_url()
            ),
        )
        .expect("config");
        Home { dir }
    }

    fn state(&self) -> StatePaths {
        StatePaths::at(self.dir.path().join("home/.local/state/shellgate"))
    }

    fn check(&self, line: &str) -> i32 {
        Command::new(env!("CARGO_BIN_EXE_shellgate"))
            .args(["check", "--", line])
            .current_dir(self.dir.path().join("work"))
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_STATE_HOME", self.dir.path().join("home/.local/state"))
            .env("SHELLGATE_SESSION", "bench")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("spawn shellgate")
            .code()
            .unwrap_or(-1)
    }
}

fn whole_process(c: &mut Criterion) {
    let server = ScriptedServer::start();
    server.always(openai_verdict("allow", "low", "builds"));
    let home = Home::new(&server, "");
    // Prime the cache, then keep the session log at that one event for every iteration, so that
    // neither line pays for a log that grows with the benchmark.
    assert_eq!(home.check("cargo fetch"), 0);
    let log = home
        .state()
        .session_log(&SessionId::parse("bench").expect("id"));
    let template = std::fs::read(&log).expect("log");
    let restore = || std::fs::write(&log, &template).expect("restore log");
    let mut group = c.benchmark_group("whole process");
    group.bench_function("check known-safe line", |b| {
        b.iter_batched(
            restore,
            |()| assert_eq!(home.check("ls -la"), 0),
            BatchSize::PerIteration,
        )
    });
    group.bench_function("check cached verdict", |b| {
        b.iter_batched(
            restore,
            |()| assert_eq!(home.check("cargo fetch"), 0),
            BatchSize::PerIteration,
        )
    });
    assert_eq!(
        server.request_count(),
        1,
        "the cached path never reached the server"
    );
    let uncached = Home::new(&server, "cache_ttl_s = 0");
    uncached.check("cargo fetch");
    let log = uncached
        .state()
        .session_log(&SessionId::parse("bench").expect("id"));
    let template = std::fs::read(&log).expect("log");
    group.bench_function("check reviewed by the scripted server", |b| {
        b.iter_batched(
            || std::fs::write(&log, &template).expect("restore log"),
            |()| assert_eq!(uncached.check("cargo fetch"), 0),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(40)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = overhead, whole_process
}
criterion_main!(benches);
