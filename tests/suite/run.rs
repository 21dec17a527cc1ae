//! `shellgate run` through the real binary: the line's own status and signal deaths pass through,
//! refusals start nothing and say why (block or JSON), a log that cannot be written stops the line,
//! and every step is in the session log.

// The `never` lines these tests expect to be refused are harmless if a bug ever let them run
// (`mkfs.ext4` of a path that does not exist fails): a test must not be able to damage the machine.

use crate::support;

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const SHELLGATE: &str = env!("CARGO_BIN_EXE_shellgate");

struct Env {
    dir: tempfile::TempDir,
    user: support::Home,
}

impl Env {
    /// A home of its own, a workspace, and a config that allows `touch`, `sh`, `kill`, `exit`
    /// without asking; outside /tmp (see [`support::scratch_dir`]).
    fn new() -> Env {
        let dir = support::scratch_dir();
        let user = support::Home::at(dir.path().join("home"));
        std::fs::create_dir_all(dir.path().join("home/.config/shellgate")).unwrap();
        support::workspace(&dir.path().join("work"));
        std::fs::write(
            dir.path().join("home/.config/shellgate/config.toml"),
            "[[rules]]\nid = \"test-allow\"\npattern = \"^(touch|sh|kill|exit|sleep)$\"\nfield = \"program\"\n\
             policy = \"allow\"\nreason = \"test programs\"\n",
        )
        .unwrap();
        Env { dir, user }
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    fn state(&self) -> PathBuf {
        self.user.state()
    }

    /// `shellgate ARGS` with this environment's home, in its workspace.
    fn shellgate(&self) -> Command {
        let mut c = Command::new(SHELLGATE);
        support::isolate(&mut c, &self.user).current_dir(self.work());
        c
    }

    fn run(&self, line: &str, extra_env: &[(&str, &str)]) -> Output {
        let mut c = self.shellgate();
        c.args(["run", "--", line])
            .env("SHELLGATE_SESSION", "run-tests")
            .stdin(Stdio::null());
        for (k, v) in extra_env {
            c.env(k, v);
        }
        c.output().unwrap()
    }

    fn events(&self) -> Vec<Value> {
        let path = self.state().join("shellgate/sessions/run-tests.jsonl");
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn kinds(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["kind"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[test]
fn the_lines_own_status_and_output_pass_through() {
    let env = Env::new();
    let out = env.run("echo out; echo err >&2; exit 7", &[]);
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "out\n");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "err\n");
    // A death by signal is reported as shells do: 128 + n.
    let out = env.run("sh -c 'kill -TERM $$'", &[]);
    assert_eq!(out.status.code(), Some(128 + 15));
    let events = env.events();
    assert_eq!(
        kinds(&events),
        [
            "approval/asked",
            "approval/decided",
            "exec/started",
            "exec/finished",
            "approval/asked",
            "approval/decided",
            "exec/started",
            "exec/finished"
        ]
    );
    assert_eq!(events[3]["data"]["exit_code"], 7);
    assert_eq!(events[7]["data"]["signal"], 15);
    // One request id links each line's chain.
    assert_eq!(events[0]["request"], events[3]["request"]);
    assert_ne!(events[0]["request"], events[4]["request"]);
}

#[test]
fn the_line_runs_in_the_sandbox() {
    let env = Env::new();
    let outside = support::scratch_dir();
    let marker = outside.path().join("marker");
    let out = env.run(&format!("touch inside; touch {}", marker.display()), &[]);
    assert_ne!(out.status.code(), Some(0));
    assert!(env.work().join("inside").exists());
    assert!(!marker.exists(), "run wrote outside the workspace");
}

/// `cd ~/proj && git commit`, typed from the home: the line's workspace is where its first `cd`
/// goes, as it would be for the line after a `cd` of its own — and only where the one resolver
/// accepts a workspace (never beneath one of the home's dot directories).
#[test]
fn a_line_that_starts_with_cd_gets_that_directorys_workspace() {
    let env = Env::new();
    let home = env.dir.path().join("home");
    let work = env.work();
    let nested = home.join("proj");
    support::workspace(&nested);
    let hidden = home.join(".config/evil");
    support::workspace(&hidden);
    // (where it is typed, the line, the file it makes, whether it may make it)
    let cases = [
        (
            &home,
            format!("cd {} && touch made", work.display()),
            work.join("made"),
            true,
        ),
        // Relative to the working directory, and through `~/`.
        (
            &home,
            "cd proj && touch relative".to_owned(),
            nested.join("relative"),
            true,
        ),
        (
            &env.dir.path().to_path_buf(),
            "cd ~/proj && touch tilde".to_owned(),
            nested.join("tilde"),
            true,
        ),
        // The `cd`s a line starts with, in turn; and where they lead to no workspace, the working
        // directory's stays (`cd ~ && …` typed in a project still writes the project).
        (
            &work,
            "cd ~ && cd proj && touch chained".to_owned(),
            nested.join("chained"),
            true,
        ),
        (
            &work,
            format!("cd ~ && touch {}", work.join("kept").display()),
            work.join("kept"),
            true,
        ),
        // Not a repository beneath a dot directory of the home, where config that runs later
        // lives.
        (
            &home,
            "cd .config/evil && touch planted".to_owned(),
            hidden.join("planted"),
            false,
        ),
        // A `cd` that is not the first command, or whose operand is known only at run time,
        // keeps the working directory's (none here: the home is never a workspace).
        (
            &home,
            "true && cd proj && touch second".to_owned(),
            nested.join("second"),
            false,
        ),
        (
            &home,
            "cd \"$D\" && touch dynamic".to_owned(),
            nested.join("dynamic"),
            false,
        ),
    ];
    for (cwd, line, made, allowed) in cases {
        let mut c = env.shellgate();
        c.current_dir(cwd)
            .args(["run", "--", &line])
            .env("SHELLGATE_SESSION", "run-tests")
            .env("D", &nested)
            .stdin(Stdio::null());
        let out = c.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code() == Some(0), allowed, "{line}: {stderr}");
        assert_eq!(made.exists(), allowed, "{line}: {stderr}");
    }
}

#[test]
fn refusals_start_nothing_and_say_why() {
    let env = Env::new();
    let out = env.run(
        "touch first; mkfs.ext4 /nonexistent/shellgate-test-disk",
        &[],
    );
    assert_eq!(out.status.code(), Some(202));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("[auto-review-never] NEVER_POLICY: "),
        "{err}"
    );
    assert!(
        err.contains("Do not try to achieve the same effect another way"),
        "{err}"
    );
    assert!(!env.work().join("first").exists());
    assert!(!kinds(&env.events()).contains(&"exec/started".to_owned()));
    // The same as one JSON object for headless callers.
    let out = env.run(
        "touch first; mkfs.ext4 /nonexistent/shellgate-test-disk",
        &[("SHELLGATE_JSON", "1")],
    );
    let refusal: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(refusal["code"], "NEVER_POLICY");
    assert_eq!(refusal["marker"], "[auto-review-never]");
    assert!(
        refusal["instruction"]
            .as_str()
            .unwrap()
            .contains("Do not try")
    );
    // Too long: intake refuses before anything else.
    let long = format!("touch x; echo {}", "a".repeat(4000));
    let out = env.run(&long, &[]);
    assert_eq!(out.status.code(), Some(205));
    assert!(!env.work().join("x").exists());
}

#[test]
fn a_review_decision_without_a_reviewer_is_denied_not_run() {
    let env = Env::new();
    std::fs::write(
        env.dir.path().join("home/.config/shellgate/config.toml"),
        "mode = \"auto\"\n",
    )
    .unwrap();
    // Destroying work in the workspace is for the reviewer in `auto`.
    std::fs::create_dir_all(env.work().join("d")).unwrap();
    let out = env.run("rm -r d", &[]);
    assert_eq!(out.status.code(), Some(208));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("[auto-review-fallback] REVIEWER_UNCONFIGURED")
    );
    assert!(env.work().join("d").exists());
}

#[test]
fn a_log_that_cannot_be_written_stops_the_line() {
    let env = Env::new();
    // The state directory is a file: nothing can be logged there.
    std::fs::create_dir_all(env.state()).unwrap();
    std::fs::write(env.state().join("shellgate"), "not a directory").unwrap();
    let out = env.run("touch marker", &[]);
    assert_eq!(
        out.status.code(),
        Some(213),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("AUDIT_UNAVAILABLE"));
    assert!(!env.work().join("marker").exists());
}

/// The binary as the release profile builds it where a panic is concerned (its `panic` strategy,
/// `abort`), with the panic seam (src/main.rs `panic_seam`): `cargo build --profile panic-check`
/// with `--cfg shellgate_panic_seam`, into this build's target directory (`panic-check/`), where
/// it is kept between runs. The first build compiles every dependency again, unoptimised.
fn panic_seam_binary() -> PathBuf {
    let target = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--locked", "--offline", "--quiet", "--profile"])
        .args(["panic-check", "--bin", "shellgate", "--manifest-path"])
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        // RUSTFLAGS is read only when the encoded form is not set.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("RUSTFLAGS", "--cfg shellgate_panic_seam")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the panic-check build failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.join("panic-check/shellgate")
}

/// A panic is a failure that says so, in the binary people install too: `INTERNAL` (219) and its
/// refusal naming the panic, from the main thread or another one; the line never runs. (With
/// `panic = "abort"` the process used to die of SIGABRT: `catch_unwind` never caught.)
#[test]
fn a_panic_ends_the_release_build_with_internal() {
    let binary = panic_seam_binary();
    let env = Env::new();
    let run = |panic: Option<&str>| {
        let mut c = Command::new(&binary);
        support::isolate(&mut c, &env.user)
            .current_dir(env.work())
            .args(["run", "--", "touch marker"])
            .env("SHELLGATE_SESSION", "run-tests")
            .stdin(Stdio::null());
        if let Some(place) = panic {
            c.env("SHELLGATE_TEST_PANIC", place);
        }
        c.output().unwrap()
    };
    for place in ["main", "thread"] {
        let out = run(Some(place));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(219),
            "{place}: {:?} {stderr}",
            out.status
        );
        assert!(
            stderr.contains("INTERNAL: shellgate panicked at src/main.rs:")
                && stderr.contains("the test seam's deliberate panic"),
            "{place}: {stderr}"
        );
        assert!(!env.work().join("marker").exists(), "{place}: the line ran");
    }
    // The control: the same binary without the seam's variable runs the line.
    let out = run(None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(env.work().join("marker").exists());
}

/// Makes the session log refuse every later append (its last megabyte holds no event), as a
/// full disk or a damaged file would.
fn break_the_log(env: &Env) {
    use std::io::Write;
    let path = env.state().join("shellgate/sessions/run-tests.jsonl");
    let mut log = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    log.write_all("x\n".repeat(1 << 20).as_bytes()).unwrap();
}

/// A sandbox violation the log cannot take fails the line as an audit failure that names the file
/// moved aside, instead of being dropped for the violation's own refusal: no audit event is lost
/// silently. The log breaks while the line runs (its start recorded, its violation not yet).
#[test]
fn a_violation_the_log_cannot_take_fails_as_an_audit_failure() {
    let env = Env::new();
    let mut c = env.shellgate();
    c.args(["run", "--"])
        .arg("echo x > .git/commondir; touch started; while [ ! -e go ]; do sleep 0.01; done")
        .env("SHELLGATE_SESSION", "run-tests")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    while !env.work().join("started").exists() {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    break_the_log(&env);
    std::fs::write(env.work().join("go"), "").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(213), "{stderr}");
    assert!(
        stderr.contains("AUDIT_UNAVAILABLE") && stderr.contains("commondir"),
        "{stderr}"
    );
    assert!(
        !env.work().join(".git/commondir").exists(),
        "not moved aside"
    );
}

/// A broken config is the strictest built-in policy for an agent (mode untrusted, built-in rules
/// only), never a refusal of everything and never looser: a line known to only read runs, with a
/// notice on stderr naming the file; a line the file's own rule allowed now needs a person, and
/// there is none; the notice is in every refusal.
#[test]
fn a_broken_config_is_the_strictest_policy_for_an_agent() {
    let env = Env::new();
    std::fs::write(
        env.dir.path().join("home/.config/shellgate/config.toml"),
        "mode = 3\n",
    )
    .unwrap();
    let out = env.run("ls", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("[shellgate] notice: shellgate's config is invalid"),
        "{err}"
    );
    assert!(err.contains("config.toml:1:8"), "{err}");
    let out = env.run("touch marker", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(210), "{err}");
    assert!(err.contains("APPROVAL_UNAVAILABLE"), "{err}");
    assert!(err.contains("mode untrusted"), "{err}");
    assert!(!env.work().join("marker").exists());
    // Repairing the config is a person's: an agent's edit is never run outside the sandbox.
    let config = env.dir.path().join("home/.config/shellgate/config.toml");
    let out = env.run(&format!("rm {}", config.display()), &[]);
    assert_eq!(out.status.code(), Some(210), "{out:?}");
    assert!(config.exists());
    let out = env.run("mkfs.ext4 /dev/nonexistent-sg", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(202), "{err}");
    assert!(
        err.contains("config.toml:1:8"),
        "the refusal names the file: {err}"
    );
}

/// `status` does not say "auto review: on" beside "reviewer: not configured": without a
/// `[reviewer]` the switch has no reviewer to turn on.
#[test]
fn status_says_there_is_no_reviewer_to_switch_on() {
    let env = Env::new();
    let out = env.run("ls", &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = env
        .shellgate()
        .arg("status")
        .env("SHELLGATE_SESSION", "run-tests")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("auto review: no reviewer"), "{text}");
    assert!(text.contains("REVIEWER_UNCONFIGURED"), "{text}");
    assert!(!text.contains("auto review: on"), "{text}");
}

#[test]
fn the_line_can_come_from_standard_input() {
    let env = Env::new();
    let mut c = env.shellgate();
    c.args(["run", "--", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = c.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"touch from-stdin\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(env.work().join("from-stdin").exists());
}

#[test]
fn without_a_session_each_run_gets_its_own_log() {
    let env = Env::new();
    let mut c = env.shellgate();
    c.args(["run", "--", "true"]);
    assert!(c.status().unwrap().success());
    let sessions = std::fs::read_dir(env.state().join("shellgate/sessions"))
        .unwrap()
        .count();
    assert_eq!(sessions, 1);
}
