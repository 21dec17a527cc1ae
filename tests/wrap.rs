//! `shellgate wrap` with real programs that start shells (make, git aliases, xargs, script, a
//! Python "agent" that runs `/bin/bash -c` by absolute path), and with the real Claude Code and
//! Codex CLI driven by a scripted model (`../shared/real-agent/`). Effects are checked: marker
//! files, what the agent got back as its tool result, the session log.

// The `never` lines these tests expect to be refused are harmless if a bug ever let them run
// (`mkfs.ext4` of a path that does not exist fails): a test must not be able to damage the machine.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const SHELLGATE: &str = env!("CARGO_BIN_EXE_shellgate");

struct Fixture {
    _tmp: tempfile::TempDir,
    _outside_tmp: tempfile::TempDir,
    home: PathBuf,
    ws: PathBuf,
    outside: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let outside_tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let home = tmp.path().join("home");
        let ws = tmp.path().join("ws");
        for d in [&home, &ws] {
            std::fs::create_dir_all(d).unwrap();
        }
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&ws)
            .status()
            .unwrap();
        assert!(git.success());
        let outside = outside_tmp.path().to_owned();
        Fixture {
            _tmp: tmp,
            _outside_tmp: outside_tmp,
            home,
            ws,
            outside,
        }
    }

    /// `shellgate wrap [flags] -- program args` in the workspace, with no terminal.
    fn wrap(&self, flags: &[&str], agent: &[&str]) -> Output {
        let mut c = Command::new(SHELLGATE);
        c.arg("wrap").args(flags).arg("--").args(agent);
        c.current_dir(&self.ws)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::null());
        setsid(&mut c);
        c.output().unwrap()
    }

    /// The session log as text (one session per wrap).
    fn log(&self) -> String {
        let dir = self.home.join(".local/state/shellgate/sessions");
        let mut text = String::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            text.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
        }
        text
    }
}

fn setsid(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid is async-signal-safe and touches no memory: the child loses the test's
    // controlling terminal, as an agent started from CI would have none.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A stand-in agent: runs each argument with `/bin/bash -c` by absolute path (as Codex does), and
/// prints `rc=<status>` after each.
fn python_agent(f: &Fixture, lines: &[&str]) -> Output {
    let script = [
        "import subprocess, sys",
        "for line in sys.argv[1:]:",
        "    p = subprocess.run(['/bin/bash', '-c', line], capture_output=True, text=True)",
        "    print('out=' + p.stdout.strip().replace('\\n', '|'))",
        "    print('err=' + p.stderr.strip().replace('\\n', '|'))",
        "    print('rc=' + str(p.returncode))",
    ]
    .join("\n");
    let mut agent = vec!["/usr/bin/python3", "-c", &script];
    agent.extend_from_slice(lines);
    f.wrap(&[], &agent)
}

#[test]
fn shells_started_by_absolute_path_are_gated() {
    let f = Fixture::new();
    let out = python_agent(
        &f,
        &[
            "ls -a",
            "touch made; mkfs.ext4 /nonexistent/shellgate-test-disk",
            "x=rm; $x -rf nothing",
        ],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let runs: Vec<&str> = stdout.lines().collect();
    // ls -a: known-safe, ran, output back to the agent.
    assert_eq!(runs[0], "out=.|..|.git", "{all}");
    assert_eq!(runs[2], "rc=0");
    // The never line: nothing of it ran, the refusal is the tool output, exit 202.
    assert!(
        runs[4].contains("[auto-review-never] NEVER_POLICY"),
        "{all}"
    );
    assert_eq!(runs[5], "rc=202");
    assert!(!f.ws.join("made").exists());
    // The opaque line needs a person; there is none.
    assert!(runs[7].contains("APPROVAL_UNAVAILABLE"), "{all}");
    assert_eq!(runs[8], "rc=210");
    // Every line is in the session log (kept by wrap, outside the agent's sandbox).
    let log = f.log();
    assert!(
        log.contains("mkfs.ext4 /nonexistent/shellgate-test-disk") && log.contains("NEVER_POLICY"),
        "{log}"
    );
}

#[test]
fn the_agent_itself_is_contained_unless_told_not_to() {
    let f = Fixture::new();
    let marker = f.outside.join("direct");
    let agent = ["/usr/bin/touch", marker.to_str().unwrap()];
    let out = f.wrap(&[], &agent);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        !marker.exists(),
        "the contained agent wrote outside the workspace"
    );
    let out = f.wrap(&["--no-contain"], &agent);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(marker.exists());
    // The agent cannot write shellgate's state (the log it is judged by) either.
    let state = f.home.join(".local/state/shellgate/forged");
    let out = f.wrap(&[], &["/usr/bin/touch", state.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0));
    assert!(!state.exists(), "the agent wrote into shellgate's state");
}

#[test]
fn the_agents_exit_status_is_wraps() {
    let f = Fixture::new();
    let out = f.wrap(&[], &["/usr/bin/python3", "-c", "raise SystemExit(7)"]);
    assert_eq!(out.status.code(), Some(7));
}

#[test]
fn make_recipes_are_gated() {
    let f = Fixture::new();
    std::fs::write(
        f.ws.join("Makefile"),
        "safe:\n\tls -a\nbad:\n\ttouch recipe-marker; mkfs.ext4 /nonexistent/shellgate-test-disk\n",
    )
    .unwrap();
    let out = f.wrap(&[], &["/usr/bin/make", "-s", "safe"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Makefile"));
    let out = f.wrap(&[], &["/usr/bin/make", "bad"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("NEVER_POLICY"),
        "{}",
        text(&out)
    );
    assert!(!f.ws.join("recipe-marker").exists());
}

#[test]
fn git_shell_aliases_are_gated() {
    let f = Fixture::new();
    let out = f.wrap(
        &[],
        &[
            "/usr/bin/git",
            "-c",
            "alias.boom=!touch alias-marker; mkfs.ext4 /nonexistent/shellgate-test-disk",
            "boom",
        ],
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("NEVER_POLICY"),
        "{}",
        text(&out)
    );
    assert!(!f.ws.join("alias-marker").exists());
}

#[test]
fn xargs_sh_c_and_script_c_are_gated() {
    let f = Fixture::new();
    let out = f.wrap(
        &[],
        &["/usr/bin/python3", "-c", "import subprocess; subprocess.run(['/usr/bin/xargs', '/bin/sh', '-c', 'touch xargs-marker; mkfs.ext4 /nonexistent/shellgate-test-disk'], input=b'x\\n')"],
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("NEVER_POLICY"),
        "{}",
        text(&out)
    );
    assert!(!f.ws.join("xargs-marker").exists());
    let out = f.wrap(
        &[],
        &[
            "/usr/bin/script",
            "-q",
            "-e",
            "-c",
            "touch script-marker; mkfs.ext4 /nonexistent/shellgate-test-disk",
            "/dev/null",
        ],
    );
    assert!(!f.ws.join("script-marker").exists(), "{}", text(&out));
    assert!(
        f.log().contains("script-marker"),
        "the line never reached shellgate"
    );
}

// ------------------------------------------------------------------------------------------------
// Real agents (Claude Code, Codex CLI) against a scripted model in a loopback-only namespace.

fn real_agent(runner: &str, line: &str, expect: &str) -> (Output, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real-agent");
    let run_dir = tempfile::tempdir().unwrap();
    let out = Command::new(dir.join(runner))
        .env("WRAP_PREFIX", format!("{SHELLGATE} wrap --"))
        .env("EXPECT", expect)
        .env("LINE", line)
        .env("RUN_DIR", run_dir.path())
        .env("AGENT_TIMEOUT", "120")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let tool_result =
        std::fs::read_to_string(run_dir.path().join("log/tool_result.txt")).unwrap_or_default();
    (out, tool_result)
}

fn real_agent_lines(runner: &str) {
    // A destructive line never takes effect, and the refusal is what the agent gets back.
    let (out, result) = real_agent(
        runner,
        "echo pwned > marker; mkfs.ext4 /nonexistent/shellgate-test-disk",
        "absent",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\ntool result: {result}",
        text(&out)
    );
    assert!(
        result.contains("[auto-review-never] NEVER_POLICY"),
        "{result}"
    );
    // So does an opaque one (the harness's default line).
    let (out, result) = real_agent(
        runner,
        "echo pwned > marker; x=rm; $x -rf nothing",
        "absent",
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\ntool result: {result}",
        text(&out)
    );
    assert!(result.contains("APPROVAL_UNAVAILABLE"), "{result}");
    // A known-safe line still works, and its output is the tool result.
    let (out, result) = real_agent(runner, "ls -a && cat README", "absent");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\ntool result: {result}",
        text(&out)
    );
    assert!(result.contains("scratch workspace"), "{result}");
}

#[test]
fn claude_code_under_wrap() {
    real_agent_lines("run-claude.sh");
}

#[test]
fn codex_under_wrap() {
    real_agent_lines("run-codex.sh");
}

#[test]
fn a_line_dies_with_the_shell_that_asked_for_it() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.home.join(".config/shellgate")).unwrap();
    std::fs::write(
        f.home.join(".config/shellgate/config.toml"),
        "[[rules]]\nid = \"t\"\npattern = \"^(sleep|touch)$\"\nfield = \"program\"\npolicy = \"allow\"\nreason = \"test\"\n",
    )
    .unwrap();
    // The agent gives its shell one second, then kills it (as agents do on a tool timeout).
    let script = [
        "import subprocess",
        "try:",
        "    subprocess.run(['/bin/bash', '-c', 'sleep 3; touch late'], timeout=1)",
        "except subprocess.TimeoutExpired:",
        "    print('timed out')",
    ]
    .join("\n");
    let out = f.wrap(&[], &["/usr/bin/python3", "-c", &script]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("timed out"),
        "{}",
        text(&out)
    );
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert!(
        !f.ws.join("late").exists(),
        "the line outlived the shell that asked for it"
    );
}

#[test]
fn the_sandbox_stays_anchored_where_the_agent_started() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.home.join(".config/shellgate")).unwrap();
    std::fs::write(
        f.home.join(".config/shellgate/config.toml"),
        "[[rules]]\nid = \"t\"\npattern = \"^touch$\"\nfield = \"program\"\npolicy = \"allow\"\nreason = \"test\"\n",
    )
    .unwrap();
    let marker = f.outside.join("moved");
    // The agent moves to / and runs an allowed line there: its sandbox is still the workspace.
    let script = format!(
        "import subprocess; p = subprocess.run(['/bin/bash', '-c', 'touch {}'], cwd='/'); print('rc', p.returncode)",
        marker.display()
    );
    let out = f.wrap(&["--no-contain"], &["/usr/bin/python3", "-c", &script]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("rc "),
        "{}",
        text(&out)
    );
    assert!(
        !marker.exists(),
        "a line's sandbox followed the agent out of its workspace"
    );
}
