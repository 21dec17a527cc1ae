//! `shellgate wrap` with real programs that start shells (make, git aliases, xargs, script, a
//! Python "agent" that runs `/bin/bash -c` by absolute path), and with the real Claude Code and
//! Codex CLI driven by a scripted model (`tests/agents/`). Effects are checked: marker files,
//! what the agent got back as its tool result, the session log. A test whose programs are
//! missing is ignored with the reason (`build.rs` finds them).

// The `never` lines these tests expect to be refused are harmless if a bug ever let them run
// (`mkfs.ext4` of a path that does not exist fails): a test must not be able to damage the machine.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const SHELLGATE: &str = env!("CARGO_BIN_EXE_shellgate");

/// A home of its own, a git workspace, and a directory outside every sandbox-writable root for
/// markers that must not appear; all outside /tmp (see [`support::scratch_dir`]).
struct Fixture {
    _tmp: tempfile::TempDir,
    user: support::Home,
    home: PathBuf,
    ws: PathBuf,
    outside: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture::with_home("home")
    }

    /// The fixture with the home at `name` beneath the scratch directory.
    fn with_home(name: &str) -> Fixture {
        let tmp = support::scratch_dir();
        let user = support::Home::at(tmp.path().join(name));
        let home = user.home.clone();
        let ws = tmp.path().join("ws");
        let outside = tmp.path().join("outside");
        for d in [&ws, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        let git = support::isolate(&mut Command::new("/usr/bin/git"), &user)
            .args(["init", "-q"])
            .current_dir(&ws)
            .status()
            .unwrap();
        assert!(git.success());
        Fixture {
            _tmp: tmp,
            user,
            home,
            ws,
            outside,
        }
    }

    /// `shellgate wrap [flags] -- program args` in the workspace, with no terminal.
    fn wrap(&self, flags: &[&str], agent: &[&str]) -> Output {
        let mut c = Command::new(SHELLGATE);
        c.arg("wrap").args(flags).arg("--").args(agent);
        support::isolate(&mut c, &self.user)
            .current_dir(&self.ws)
            .stdin(Stdio::null());
        support::detach(&mut c);
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
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
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

/// A home whose state directory's broker socket path is longer than a socket address can be
/// (108 bytes): the agent's lines still reach the broker and run.
#[test]
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
fn a_home_of_any_length_works() {
    let f = Fixture::with_home(&format!("home-{}", "h".repeat(140)));
    assert!(f.home.as_os_str().len() > 108);
    let out = python_agent(&f, &["echo made > made.txt && cat made.txt"]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("out=made\nerr=\nrc=0"),
        "{all}"
    );
    assert!(f.ws.join("made.txt").exists(), "{all}");
}

/// The contained agent reaches one unix socket, the broker's (its shells' lines still run), and
/// no other: not a stream socket a daemon outside listens on (by its path, or by a path through
/// `/proc/self/fd`), not a datagram socket. Without containment (`--no-contain`, the control) it
/// reaches them all.
#[test]
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
fn the_contained_agent_reaches_no_unix_socket_but_the_brokers() {
    use std::os::unix::net::{UnixDatagram, UnixListener};
    let f = Fixture::new();
    let stream_path = f.outside.join("daemon.sock");
    let dgram_path = f.outside.join("log.sock");
    let listener = UnixListener::bind(&stream_path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let datagrams = UnixDatagram::bind(&dgram_path).unwrap();
    datagrams.set_nonblocking(true).unwrap();
    // The network stays the agent's: a TCP connection to a listener on loopback is made.
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    tcp.set_nonblocking(true).unwrap();
    let agent = format!(
        "import os, socket, subprocess\n\
         for how, path in (('path', {stream:?}), ('fd', None)):\n\
         \x20   s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n\
         \x20   if path is None:\n\
         \x20       d = os.open({dir:?}, os.O_RDONLY)\n\
         \x20       path = '/proc/self/fd/%d/daemon.sock' % d\n\
         \x20   try:\n\
         \x20       s.connect(path)\n\
         \x20       s.send(b'hello')\n\
         \x20       print(how, 'connected')\n\
         \x20   except OSError as e:\n\
         \x20       print(how, 'refused', e.errno)\n\
         try:\n\
         \x20   d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n\
         \x20   d.sendto(b'hello', {dgram:?})\n\
         \x20   print('datagram sent')\n\
         except OSError as e:\n\
         \x20   print('datagram refused', e.errno)\n\
         try:\n\
         \x20   a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n\
         \x20   a.sendto(b'hello', {dgram:?})\n\
         \x20   print('pair datagram sent')\n\
         except OSError as e:\n\
         \x20   print('pair datagram refused', e.errno)\n\
         t = socket.create_connection(('127.0.0.1', {port}))\n\
         t.send(b'tcp')\n\
         print('tcp connected')\n\
         p = subprocess.run(['/bin/bash', '-c', 'echo through-the-broker'], capture_output=True, text=True)\n\
         print('line', p.stdout.strip(), p.returncode)\n",
        stream = stream_path.to_str().unwrap(),
        dir = f.outside.to_str().unwrap(),
        dgram = dgram_path.to_str().unwrap(),
    );
    let tcp_accepted = || std::iter::from_fn(|| tcp.accept().ok()).count();
    let reached = |listener: &UnixListener, datagrams: &UnixDatagram| {
        let mut connections = 0;
        while listener.accept().is_ok() {
            connections += 1;
        }
        let mut buf = [0u8; 16];
        let mut sent = 0;
        while datagrams.recv(&mut buf).is_ok() {
            sent += 1;
        }
        (connections, sent)
    };
    let control = f.wrap(&["--no-contain"], &["/usr/bin/python3", "-c", &agent]);
    let text_control = text(&control);
    assert!(text_control.contains("path connected"), "{text_control}");
    assert_eq!(
        reached(&listener, &datagrams),
        (2, 2),
        "control: {text_control}"
    );
    assert_eq!(tcp_accepted(), 1, "control: {text_control}");
    let out = f.wrap(&[], &["/usr/bin/python3", "-c", &agent]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("path refused 13"), "{all}");
    assert!(all.contains("fd refused 13"), "{all}");
    assert!(all.contains("\ndatagram refused 1"), "{all}");
    assert!(all.contains("pair datagram refused 1"), "{all}");
    assert!(all.contains("tcp connected"), "{all}");
    assert_eq!(tcp_accepted(), 1, "{all}");
    assert!(all.contains("line through-the-broker 0"), "{all}");
    assert_eq!(
        reached(&listener, &datagrams),
        (0, 0),
        "the agent reached them: {all}"
    );
}

#[test]
#[cfg_attr(not(has_git), ignore = "needs /usr/bin/git (apt-get install git)")]
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
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
fn the_agents_exit_status_is_wraps() {
    let f = Fixture::new();
    let out = f.wrap(&[], &["/usr/bin/python3", "-c", "raise SystemExit(7)"]);
    assert_eq!(out.status.code(), Some(7));
}

#[test]
#[cfg_attr(
    not(all(has_git, has_make)),
    ignore = "needs /usr/bin/git and /usr/bin/make (apt-get install git make)"
)]
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
#[cfg_attr(not(has_git), ignore = "needs /usr/bin/git (apt-get install git)")]
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
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
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

/// A stand-in agent started through a shell-script shim (as pyenv's `python3` is): the shim is
/// the agent's own process until it `exec`s, and must not make the agent's shells ungated.
#[test]
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
fn an_agent_started_through_a_shim_script_is_gated() {
    let f = Fixture::new();
    let shim_dir = f.outside.join("shims");
    std::fs::create_dir_all(&shim_dir).unwrap();
    let agent = shim_dir.join("agent.py");
    std::fs::write(
        &agent,
        "import subprocess, sys\n\
         for line in sys.argv[1:]:\n    \
             p = subprocess.run(['/bin/bash', '-c', line], capture_output=True, text=True)\n    \
             print('rc=' + str(p.returncode) + ' err=' + p.stderr.strip().replace('\\n', '|'))\n",
    )
    .unwrap();
    let shim = shim_dir.join("python3");
    support::write_executable(
        &shim,
        "#!/bin/bash\n# a version-manager shim\nexec /usr/bin/python3 \"$@\"\n",
    );
    let marker = f.outside.join("made");
    let out = f.wrap(
        &[],
        &[
            shim.to_str().unwrap(),
            agent.to_str().unwrap(),
            "touch made-inside",
            &format!(
                "touch {}; mkfs.ext4 /nonexistent/shellgate-test-disk",
                marker.display()
            ),
        ],
    );
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let runs: Vec<&str> = stdout.lines().collect();
    assert!(runs[0].starts_with("rc=0"), "{all}");
    assert!(f.ws.join("made-inside").exists(), "{all}");
    assert!(
        runs[1].starts_with("rc=202") && runs[1].contains("NEVER_POLICY"),
        "{all}"
    );
    assert!(!marker.exists(), "{all}");
    // Both lines were judged and logged; the shim itself was not a line (it is the agent).
    let log = f.log();
    assert!(log.contains("touch made-inside"), "{log}");
    assert!(log.contains("NEVER_POLICY"), "{log}");
    assert!(!log.contains("version-manager"), "{log}");
}

/// Nothing in the environment lets an agent's shell through unjudged: not `SHELLGATE_ACTIVE`
/// (the mark of a line already judged), not a copy of the agent's own mark.
#[test]
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
fn a_forged_environment_does_not_skip_the_gate() {
    let f = Fixture::new();
    let script = [
        "import os, subprocess",
        "for env in ({'SHELLGATE_ACTIVE': 'r0123456789abcdef'}, {}):",
        "    e = dict(os.environ, **env)",
        "    p = subprocess.run(['/bin/bash', '-c', 'mkfs.ext4 /nonexistent/shellgate-test-disk'], env=e, capture_output=True, text=True)",
        "    print('rc=' + str(p.returncode))",
    ]
    .join("\n");
    let out = f.wrap(&[], &["/usr/bin/python3", "-c", &script]);
    let all = text(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        ["rc=202", "rc=202"],
        "{all}"
    );
    let log = f.log();
    assert_eq!(
        log.matches("\"kind\":\"approval/asked\"").count(),
        2,
        "{log}"
    );
    assert!(log.matches("NEVER_POLICY").count() >= 2, "{log}");
}

/// `wrap` inside a wrapped agent starts its agent under the same broker: its shells are still
/// gated, in the same session log.
#[test]
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
fn wrap_inside_a_wrapped_agent_keeps_the_gate() {
    let f = Fixture::new();
    let script = [
        "import subprocess",
        &format!("p = subprocess.run(['{SHELLGATE}', 'wrap', '--', '/bin/bash', '-c', 'mkfs.ext4 /nonexistent/shellgate-test-disk'], capture_output=True, text=True)"),
        "print('rc=' + str(p.returncode))",
    ]
    .join("\n");
    let out = f.wrap(&[], &["/usr/bin/python3", "-c", &script]);
    let all = text(&out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("rc=202"),
        "{all}"
    );
    assert!(f.log().contains("NEVER_POLICY"), "{all}");
}

/// `wrap -- bash -i` (`--norc` unless `rc`) in a pseudo-terminal, the README's hook and the prompt
/// `wrapped$ ` in the fixture's `~/.bashrc`.
fn wrapped_interactive_bash(f: &Fixture, rc: bool) -> rexpect::session::PtySession {
    std::fs::write(
        f.home.join(".bashrc"),
        format!("eval \"$({SHELLGATE} init bash)\"\nPS1='wrapped$ '\n"),
    )
    .unwrap();
    let mut c = Command::new(SHELLGATE);
    c.args(["wrap", "--", "bash"]);
    if !rc {
        c.arg("--norc");
    }
    c.arg("-i");
    support::isolate(&mut c, &f.user)
        .current_dir(&f.ws)
        .env("TERM", "dumb")
        .env("PS1", "wrapped$ ");
    let mut pty = rexpect::session::spawn_command(c, Some(30_000)).unwrap();
    pty.process_mut().set_kill_timeout(Some(200));
    pty
}

/// `wrap -- bash -i` with the README's hook in `~/.bashrc`, in a real terminal: lines are gated
/// by the broker (not AUDIT_UNAVAILABLE), a foreground line reads the terminal, a question is
/// answered at the terminal without stopping `wrap`, and `--norc` does not turn the hook off.
#[test]
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
fn a_wrapped_interactive_bash_with_the_readme_hook_is_gated() {
    for rc in [true, false] {
        let f = Fixture::new();
        std::fs::create_dir_all(f.ws.join("doomed")).unwrap();
        let mut pty = wrapped_interactive_bash(&f, rc);
        // Without the user's rc file, the system's sets the prompt.
        let prompt = if rc { r"wrapped\$ $" } else { r"[#$] $" };
        pty.exp_regex(prompt).unwrap();
        // An ordinary line runs in the sandbox, from the terminal's foreground: it reads the tty.
        pty.send_line("read -r x; echo got-$x > from-tty; echo step-$((1+1))-done")
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(500));
        pty.send_line("typed").unwrap();
        pty.exp_string("step-2-done").unwrap();
        assert_eq!(
            std::fs::read_to_string(f.ws.join("from-tty")).unwrap_or_default(),
            "got-typed\n",
            "rc={rc}"
        );
        // Refused by a rule: the refusal is shown, nothing ran.
        pty.send_line("mkfs.ext4 /nonexistent/shellgate-test-disk")
            .unwrap();
        pty.exp_string("NEVER_POLICY").unwrap();
        pty.exp_regex(prompt).unwrap();
        // Asked: the question comes on the terminal and the answer counts; wrap is not stopped.
        pty.send_line("rm -r doomed && echo step-$((2+1))-done")
            .unwrap();
        pty.exp_string("Allow once? [y").unwrap();
        pty.send_line("y").unwrap();
        pty.exp_string("step-3-done").unwrap();
        assert!(!f.ws.join("doomed").exists(), "rc={rc}");
        pty.send_line("exit").unwrap();
        pty.exp_eof().unwrap();
        let log = f.log();
        assert!(
            log.contains("rm -r doomed") && log.contains("\"by\":\"person\""),
            "{log}"
        );
        assert!(!log.contains("AUDIT_UNAVAILABLE"), "{log}");
    }
}

/// A wrapped agent's shell on a terminal (`wrap -- bash -i`) is an agent's, not a person's own:
/// its line to a host is asked at the terminal though a person would type the same line unasked.
/// "Always" writes an allow rule for that line that declares that host; the same line again is
/// not asked and reaches it, while the same server under another name is asked again (the rule
/// holds the line and the name, not the address or port).
#[test]
#[cfg_attr(not(has_git), ignore = "needs /usr/bin/git (apt-get install git)")]
fn a_wrapped_shells_line_to_a_host_is_asked_and_always_holds_that_host() {
    let f = Fixture::new();
    let port = support::serve_on_loopback(support::SERVED);
    let mut pty = wrapped_interactive_bash(&f, true);
    let prompt = r"wrapped\$ $";
    pty.exp_regex(prompt).unwrap();
    let line = format!("curl -s http://localhost:{port}/health");
    pty.send_line(&line).unwrap();
    pty.exp_string(&format!(
        "a = always allow this line with network tcp:localhost:{port}"
    ))
    .unwrap();
    pty.send_line("a").unwrap();
    pty.exp_string("served").unwrap();
    pty.exp_regex(prompt).unwrap();
    let config = std::fs::read_to_string(f.home.join(".config/shellgate/config.toml")).unwrap();
    assert!(
        config.contains(&format!("needs = {{ network = [\"localhost:{port}\"] }}"))
            && config.contains("field = \"line\""),
        "{config}"
    );
    pty.send_line(&line).unwrap();
    let (_, first) = pty.exp_regex("Allow once|served").unwrap();
    assert_eq!(first, "served", "asked again");
    pty.exp_regex(prompt).unwrap();
    pty.send_line(&format!("curl -s http://127.0.0.1:{port}/health"))
        .unwrap();
    let (_, first) = pty.exp_regex("Allow once|served").unwrap();
    assert_eq!(first, "Allow once", "another name unasked");
    pty.send_line("n").unwrap();
    pty.exp_regex(prompt).unwrap();
    pty.send_line("exit").unwrap();
    pty.exp_eof().unwrap();
}

// ------------------------------------------------------------------------------------------------
// Real agents (Claude Code, Codex CLI) against a scripted model in a loopback-only namespace:
// tests/agents/run_agent.py installs each with npm into target/test-tools/agents when missing.

/// The npm prefixes of the agents: `target/test-tools/agents`, or `SHELLGATE_TEST_AGENTS_DIR` to
/// share one install between clones.
fn agents_dir() -> PathBuf {
    std::env::var_os("SHELLGATE_TEST_AGENTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_TARGET_TMPDIR"))
                .parent()
                .expect("target/tmp has a parent")
                .join("test-tools/agents")
        })
}

/// What one agent run left: the harness's output, each tool result the agent sent back, and the
/// run directory (`ws/` the workspace, `home/` the agent's home).
struct AgentRun {
    out: Output,
    tool_results: Vec<String>,
    dir: tempfile::TempDir,
}

impl AgentRun {
    fn describe(&self) -> String {
        format!(
            "{}\ntool results: {:#?}",
            text(&self.out),
            self.tool_results
        )
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("run/ws")
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("run/home")
    }
}

/// One headless turn of `agent` under `shellgate wrap`, whose scripted model asks for `lines`
/// one after the other, taking `delay` seconds per answer as a real one does (agents work in the
/// background meanwhile: shell snapshots, probes). The agent's home is outside /tmp, as a real
/// one is; `used_before` gives it the state directory of an earlier run. Its `PATH` starts with a
/// directory of the test's own holding `extra-tool`, which a login shell's `PATH` would lose.
fn real_agent(agent: &str, lines: &[&str], used_before: bool, delay: &str) -> AgentRun {
    let dir = support::scratch_dir();
    let bin = dir.path().join("extra-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let tool = bin.join("extra-tool");
    support::write_executable(&tool, "#!/bin/sh\necho extra-tool-ran\n");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
    );
    let harness = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents/run_agent.py");
    let mut c = Command::new("/usr/bin/python3");
    c.arg(harness)
        .arg(agent)
        .arg("--run-dir")
        .arg(dir.path().join("run"))
        .arg("--agents-dir")
        .arg(agents_dir())
        .args(["--expect", "absent", "--timeout", "150", "--delay", delay]);
    if used_before {
        c.arg("--used-before");
    }
    for line in lines {
        c.args(["--line", line]);
    }
    c.args(["--", SHELLGATE, "wrap", "--"]);
    // The harness builds the agent's environment from nothing but `PATH`. It keeps the machine's
    // own only for npm, which may need its registry settings, certificates or proxy (its cache
    // goes with the agents, not into the home).
    support::without_shell_state(&mut c).stdin(Stdio::null());
    c.env("PATH", path);
    support::detach(&mut c);
    let out = c.output().unwrap();
    let result = std::fs::read_to_string(dir.path().join("run/result.json")).unwrap_or_default();
    let tool_results = serde_json::from_str::<serde_json::Value>(&result)
        .ok()
        .and_then(|r| {
            r["tool_results"].as_array().map(|all| {
                all.iter()
                    .map(|t| t["content"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
        })
        .unwrap_or_default();
    AgentRun {
        out,
        tool_results,
        dir,
    }
}

/// Ordinary work through a real agent: a file written and a script run, a commit in the existing
/// repository, a tool found on the agent's own `PATH`; then what must never run (a `never` rule),
/// and what needs a person who is not there (an opaque line). Every effect is checked on disk.
fn real_agent_work(agent: &str, used_before: bool) {
    let run = real_agent(
        agent,
        &[
            "printf 'print(6*7)\\n' > calc.py && python3 calc.py > out.txt && cat out.txt",
            "git add calc.py out.txt && git commit -qm 'add calc' && git log --oneline | head -3",
            "extra-tool && command -v extra-tool",
            "echo pwned > marker; mkfs.ext4 /nonexistent/shellgate-test-disk",
            "echo pwned > marker; x=rm; $x -rf nothing",
        ],
        used_before,
        "2",
    );
    assert_eq!(run.out.status.code(), Some(0), "{}", run.describe());
    let [script, commit, tool, never, opaque] = run.tool_results.as_slice() else {
        panic!("five tool results expected: {}", run.describe());
    };
    // The work happened, and the agent saw its output.
    assert!(script.contains("42"), "{}", run.describe());
    assert_eq!(
        std::fs::read_to_string(run.ws().join("out.txt")).unwrap_or_default(),
        "42\n",
        "{}",
        run.describe()
    );
    assert!(commit.contains("add calc"), "{}", run.describe());
    let log = Command::new("git")
        .args(["log", "--format=%s", "-1"])
        .current_dir(run.ws())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&log.stdout),
        "add calc\n",
        "{}",
        run.describe()
    );
    assert!(tool.contains("extra-tool-ran"), "{}", run.describe());
    assert!(tool.contains("extra-bin/extra-tool"), "{}", run.describe());
    // What must not run did not, and the agent was told why.
    assert!(
        never.contains("[auto-review-never] NEVER_POLICY"),
        "{}",
        run.describe()
    );
    assert!(
        opaque.contains("APPROVAL_UNAVAILABLE"),
        "{}",
        run.describe()
    );
    assert!(!run.ws().join("marker").exists());
    // The agent's own state outlived the run.
    match agent {
        "claude" => {
            let global = std::fs::read_to_string(run.home().join(".claude.json")).unwrap();
            assert!(
                global.len() > 10,
                "~/.claude.json was never written: {global}"
            );
            let snapshots: Vec<_> = std::fs::read_dir(run.home().join(".claude/shell-snapshots"))
                .unwrap()
                .flatten()
                .collect();
            assert_eq!(snapshots.len(), 1, "{}", run.describe());
            let snapshot = std::fs::read_to_string(snapshots[0].path()).unwrap();
            assert!(snapshot.contains("export PATH='"), "{snapshot}");
            assert!(snapshot.contains("extra-bin"), "{snapshot}");
        }
        _ => {
            assert!(
                run.home().join(".codex/sessions").is_dir(),
                "{}",
                run.describe()
            );
        }
    }
}

#[test]
#[cfg_attr(
    not(all(has_npm, has_netns, has_python3, has_git)),
    ignore = "needs node and npm (apt-get install nodejs npm; the agents are installed from the npm registry), /usr/bin/python3, git and a network namespace (root, or unprivileged user namespaces)"
)]
fn claude_code_works_under_wrap_on_its_first_run() {
    real_agent_work("claude", false);
}

#[test]
#[cfg_attr(
    not(all(has_npm, has_netns, has_python3, has_git)),
    ignore = "needs node and npm (apt-get install nodejs npm; the agents are installed from the npm registry), /usr/bin/python3, git and a network namespace (root, or unprivileged user namespaces)"
)]
fn claude_code_works_under_wrap_used_before() {
    real_agent_work("claude", true);
}

#[test]
#[cfg_attr(
    not(all(has_npm, has_netns, has_python3, has_git)),
    ignore = "needs node and npm (apt-get install nodejs npm; the agents are installed from the npm registry), /usr/bin/python3, git and a network namespace (root, or unprivileged user namespaces)"
)]
fn codex_works_under_wrap_on_its_first_run() {
    real_agent_work("codex", false);
}

#[test]
#[cfg_attr(
    not(all(has_npm, has_netns, has_python3, has_git)),
    ignore = "needs node and npm (apt-get install nodejs npm; the agents are installed from the npm registry), /usr/bin/python3, git and a network namespace (root, or unprivileged user namespaces)"
)]
fn codex_works_under_wrap_used_before() {
    real_agent_work("codex", true);
}

#[test]
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
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
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
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

/// The session log's events of the first line whose text holds `needle`: (kind, data) in order.
fn events_of_line(log: &str, needle: &str) -> Vec<(String, serde_json::Value)> {
    let events: Vec<serde_json::Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let Some(request) = events
        .iter()
        .find(|e| {
            e["kind"] == "approval/asked"
                && e["data"]["line"]
                    .as_str()
                    .is_some_and(|line| line.contains(needle))
        })
        .map(|e| e["request"].clone())
    else {
        return Vec::new();
    };
    events
        .iter()
        .filter(|e| e["request"] == request)
        .map(|e| {
            (
                e["kind"].as_str().unwrap_or("").to_owned(),
                e["data"].clone(),
            )
        })
        .collect()
}

/// Claude Code's known-safe lines under `wrap` (found by the session evaluation, docs/eval.md):
/// `ls` is judged read-only, and Claude Code's own `pwd -P >| $TMPDIR/claude-XXXX-cwd` after it
/// was refused by the read-only sandbox (SANDBOX_DENIED, exit 1). Now the harness is handed that
/// one file: the read-only line runs, stays in the read-only sandbox, and Claude Code follows the
/// line's `cd` (it reads the file). Before the fix, results 1 and 3 were SANDBOX_DENIED and the
/// last `pwd` printed the workspace.
#[test]
#[cfg_attr(
    not(all(has_npm, has_netns, has_python3, has_git)),
    ignore = "needs node and npm (apt-get install nodejs npm; the agents are installed from the npm registry), /usr/bin/python3, git and a network namespace (root, or unprivileged user namespaces)"
)]
fn claude_codes_read_only_lines_run_under_wrap() {
    let run = real_agent(
        "claude",
        &["ls -a", "mkdir sub", "cd sub && ls -a", "pwd"],
        false,
        "1",
    );
    assert_eq!(run.out.status.code(), Some(0), "{}", run.describe());
    let [ls, _mkdir, cd_ls, pwd] = run.tool_results.as_slice() else {
        panic!("four tool results expected: {}", run.describe());
    };
    for result in &run.tool_results {
        assert!(
            !result.contains("SANDBOX_DENIED") && !result.contains("Exit code"),
            "{}",
            run.describe()
        );
    }
    assert!(ls.contains("README"), "{}", run.describe());
    assert!(cd_ls.contains(".."), "{}", run.describe());
    assert_eq!(
        pwd.trim(),
        run.ws().join("sub").to_str().unwrap(),
        "{}",
        run.describe()
    );
    // The read-only lines ran in the read-only sandbox, and ended well.
    let dir = run.home().join(".local/state/shellgate/sessions");
    let mut log = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        log.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    for needle in ["eval 'ls -a'", "eval 'cd sub && ls -a'"] {
        let events = events_of_line(&log, needle);
        let started = events.iter().find(|(k, _)| k == "exec/started");
        let finished = events.iter().find(|(k, _)| k == "exec/finished");
        assert_eq!(
            started.map(|(_, d)| d["sandbox"].clone()),
            Some("read-only".into()),
            "{needle}: {events:?}"
        );
        assert_eq!(
            finished.map(|(_, d)| d["exit_code"].clone()),
            Some(0.into()),
            "{needle}: {events:?}"
        );
        assert!(
            !events.iter().any(|(k, _)| k == "sandbox/denied"),
            "{needle}: {events:?}"
        );
    }
}

/// What `wrap` accepts as Claude Code's harness must not become a way to write elsewhere: the
/// agent controls the whole line (and its shell's `TMPDIR`). A stand-in agent runs, with
/// `/bin/bash -c`, harness-shaped lines around a read-only `ls`: the genuine one writes exactly
/// its file in the agent's temp dir; one naming another temp dir, a symlink planted at the name,
/// a hard link to another file at the name, and a `TMPDIR` outside the temp dirs are each refused
/// before anything runs, and nothing outside is written.
#[test]
#[cfg_attr(
    not(all(has_git, has_python3)),
    ignore = "needs /usr/bin/git and /usr/bin/python3 (apt-get install git python3)"
)]
fn claude_codes_working_directory_file_is_the_only_file_handed_over() {
    let f = Fixture::new();
    let temp = tempfile::Builder::new()
        .prefix("shellgate-test-agent-tmp-")
        .tempdir_in("/tmp")
        .unwrap();
    let other = tempfile::Builder::new()
        .prefix("shellgate-test-other-tmp-")
        .tempdir_in("/tmp")
        .unwrap();
    let t = temp.path().to_str().unwrap().to_owned();
    let o = other.path().to_str().unwrap().to_owned();
    // A file elsewhere that a symlink at the name points to, and one hard-linked at a name (the
    // same file system as the temp dir, as a hard link needs).
    let precious = f.outside.join("precious");
    std::fs::write(&precious, "precious\n").unwrap();
    std::os::unix::fs::symlink(&precious, temp.path().join("claude-cccc-cwd")).unwrap();
    let hard = other.path().join("hard");
    std::fs::write(&hard, "hard\n").unwrap();
    std::fs::hard_link(&hard, temp.path().join("claude-dddd-cwd")).unwrap();
    let outside = f.outside.to_str().unwrap().to_owned();
    let harness = |file: &str| format!("eval 'ls -a' < /dev/null && pwd -P >| {file}");
    let runs = serde_json::json!([
        [t, harness(&format!("{t}/claude-aaaa-cwd"))],
        [t, harness(&format!("{o}/claude-bbbb-cwd"))],
        [t, harness(&format!("{t}/claude-cccc-cwd"))],
        [t, harness(&format!("{t}/claude-dddd-cwd"))],
        [outside, harness(&format!("{outside}/claude-eeee-cwd"))],
    ]);
    let script = [
        "import json, os, subprocess, sys",
        "for tmpdir, line in json.loads(sys.argv[1]):",
        "    env = dict(os.environ, TMPDIR=tmpdir)",
        "    p = subprocess.run(['/bin/bash', '-c', line], env=env, capture_output=True, text=True)",
        "    print('rc=' + str(p.returncode) + ' out=' + p.stdout.strip().replace('\\n', '|') + ' err=' + p.stderr.strip().replace('\\n', '|'))",
    ]
    .join("\n");
    let out = f.wrap(&[], &["/usr/bin/python3", "-c", &script, &runs.to_string()]);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    let [genuine, elsewhere, symlink, hardlink, untemp] = lines.as_slice() else {
        panic!("five runs expected: {all}");
    };
    // The genuine harness: the read-only line ran, and its file holds the working directory.
    assert!(genuine.starts_with("rc=0 out=.|..|.git"), "{all}");
    assert_eq!(
        std::fs::read_to_string(temp.path().join("claude-aaaa-cwd")).unwrap(),
        format!("{}\n", std::fs::canonicalize(&f.ws).unwrap().display())
    );
    // Every other one is refused before it runs (no listing), saying which check failed.
    for (run, why) in [
        (elsewhere, "not in the agent's temp dir"),
        (symlink, "without following a symlink"),
        (hardlink, "one name"),
        (untemp, "not /tmp, /var/tmp or beneath them"),
    ] {
        assert!(
            run.starts_with("rc=212 out= err=") && run.contains("SANDBOX_EXEC_FAILED"),
            "{run}\n{all}"
        );
        assert!(run.contains(why), "{run}\n{all}");
    }
    assert!(!other.path().join("claude-bbbb-cwd").exists());
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious\n");
    assert_eq!(std::fs::read_to_string(&hard).unwrap(), "hard\n");
    assert!(!f.outside.join("claude-eeee-cwd").exists());
}

/// Under confirmed Full access there is no sandbox, and the harness's write is still not the inner
/// line's to judge: it is handed over the same way, so a harness naming a file outside the agent's
/// temp dir is refused (before, the line ran as written and wrote it), and the genuine one works.
#[test]
fn claude_codes_working_directory_file_is_checked_under_full_access() {
    let f = Fixture::new();
    let temp = tempfile::Builder::new()
        .prefix("shellgate-test-agent-tmp-")
        .tempdir_in("/tmp")
        .unwrap();
    let session = "harness-full";
    let command = |args: &[&str]| {
        let mut c = Command::new(SHELLGATE);
        support::isolate(&mut c, &f.user)
            .env("SHELLGATE_SESSION", session)
            .env("TMPDIR", temp.path())
            .env("TERM", "dumb")
            .current_dir(&f.ws)
            .args(args);
        c
    };
    // A person confirms Full access for the session, at a terminal.
    let mut pty =
        rexpect::session::spawn_command(command(&["mode", "full"]), Some(30_000)).unwrap();
    pty.exp_string("to confirm, anything else rejects").unwrap();
    pty.send_line("full").unwrap();
    pty.exp_eof().unwrap();
    let run = |line: &str| {
        let mut c = command(&["run", "--", line]);
        c.stdin(Stdio::null());
        support::detach(&mut c);
        c.output().unwrap()
    };
    // An inner line that writes, so that it runs unsandboxed (one that only reads would run in
    // the read-only sandbox even under Full access).
    let harness = |file: &str| format!("eval 'touch made' < /dev/null && pwd -P >| {file}");
    let outside = f.outside.join("claude-abcd-cwd");
    let out = run(&harness(outside.to_str().unwrap()));
    assert_eq!(out.status.code(), Some(212), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not in the agent's temp dir"),
        "{}",
        text(&out)
    );
    assert!(
        !outside.exists(),
        "the harness wrote outside under Full access"
    );
    assert!(!f.ws.join("made").exists(), "the refused line ran");
    let inside = temp.path().join("claude-aaaa-cwd");
    let out = run(&harness(inside.to_str().unwrap()));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(&inside).unwrap(),
        format!("{}\n", std::fs::canonicalize(&f.ws).unwrap().display())
    );
    assert!(f.ws.join("made").exists());
    let log = f.log();
    assert!(log.contains("\"sandbox\":\"full-access\""), "{log}");
}
