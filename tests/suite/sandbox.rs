//! The sandbox: what works inside it, and the conformance suite of attacks it must contain.
//!
//! Every test runs a real program under the real `shellgate` binary and checks the *effect* from
//! outside (a file absent or unchanged, a listener that saw nothing, a process untouched, a later
//! `git status` outside that ran nothing), not only an exit status. The attacks in the second half
//! each run first without the sandbox — their effect must then be seen, or the test fails for not
//! being able to tell — and then in it, as the test's own user and, when the tests run as root,
//! as `nobody` (the user-namespace path). See `sandbox_support` for where scenes live.
//!
//! Network rule: the only peers are listeners this test process opens on 127.0.0.1 / ::1 and unix
//! sockets it binds in its own scene.

use crate::support;

use crate::sandbox_support::*;
use std::fs;
use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn me() -> Scene {
    Scene::new(Who::Me)
}

// ---------------------------------------------------------------------------------------------
// What works inside.

#[test]
fn writes_inside_workspace_tmp_and_tmpdir_succeed() {
    for who in identities() {
        let s = Scene::new(who);
        let in_tmp = format!("/tmp/shellgate-test-{}-{who:?}", std::process::id());
        let script = format!(
            "echo ws > {ws}/a && echo tmpdir > \"$TMPDIR/b\" && echo tmp > {in_tmp} \
             && mkdir {ws}/d && mv {ws}/a {ws}/d/a && : > {ws}/d/a && echo shm > /dev/shm/s \
             && cat /dev/shm/s",
            ws = s.ws.display()
        );
        assert_eq!(s.sandbox().sh(&script).ok(), "shm\n");
        assert_eq!(read(&s.ws.join("d/a")).as_deref(), Some(""));
        assert_eq!(read(&s.tmpdir.join("b")).as_deref(), Some("tmpdir\n"));
        assert_eq!(read(in_tmp.as_ref()).as_deref(), Some("tmp\n"));
        fs::remove_file(&in_tmp).unwrap();
    }
}

#[test]
fn dev_shm_is_private_to_the_line() {
    let s = me();
    let name = format!("/dev/shm/shellgate-test-{}", std::process::id());
    s.sandbox().sh(&format!("echo x > {name}")).ok();
    assert!(
        !Path::new(&name).exists(),
        "the host's /dev/shm was written"
    );
    // And one line's /dev/shm is not the next one's.
    let out = s
        .sandbox()
        .sh(&format!("cat {name} 2>/dev/null || echo gone"))
        .ok();
    assert_eq!(out, "gone\n");
}

#[test]
fn devices_work() {
    let s = me();
    let out = s
        .sandbox()
        .sh("echo x > /dev/null && head -c 4 /dev/urandom | wc -c && head -c 2 /dev/zero | wc -c")
        .ok();
    assert_eq!(out.split_whitespace().collect::<Vec<_>>(), ["4", "2"]);
    let code = "import os\nfd = os.open('/dev/full', os.O_WRONLY)\ntry:\n    os.write(fd, b'x')\nexcept OSError as e:\n    print(e.errno)";
    assert_eq!(
        s.sandbox().py(code, &[]).ok().trim(),
        libc::ENOSPC.to_string()
    );
}

#[test]
fn read_only_policy_writes_only_its_private_dev_shm() {
    for who in identities() {
        let s = Scene::new(who);
        let in_tmp = format!("/tmp/shellgate-ro-{}-{who:?}", std::process::id());
        let out = s
            .sandbox()
            .flags(["--policy", "read-only"])
            .sh(&format!(
                "echo $TMPDIR; echo x > \"$TMPDIR/ok\" && cat \"$TMPDIR/ok\"; \
                 echo x > ws-file; echo x > {in_tmp}; cat README 2>/dev/null; ls {ws} >/dev/null && echo listed",
                ws = s.ws.display()
            ));
        assert_eq!(out.stdout(), "/dev/shm\nx\nlisted\n", "{}", out.stderr());
        assert!(!s.ws.join("ws-file").exists());
        assert!(!Path::new(&in_tmp).exists());
    }
}

#[test]
fn the_workspace_is_the_git_toplevel_of_the_working_directory() {
    let s = me();
    s.git_repo();
    fs::create_dir_all(s.ws.join("sub/dir")).unwrap();
    s.chown(&s.ws.join("sub"));
    s.sandbox_auto()
        .cwd(&s.ws.join("sub/dir"))
        .sh("echo x > ../../top && echo y > here")
        .ok();
    assert!(s.ws.join("top").exists());
    assert!(s.ws.join("sub/dir/here").exists());
}

#[test]
fn a_directory_outside_any_repository_has_no_writable_workspace() {
    let s = me();
    // No .git anywhere above `ws`, no configured project: only the temp dirs are writable.
    let out = s
        .sandbox_auto()
        .sh("echo x > f; echo $? ; echo t > \"$TMPDIR/t\" && echo tmp-ok");
    assert_eq!(
        out.stdout().lines().last(),
        Some("tmp-ok"),
        "{}",
        out.stderr()
    );
    assert!(!s.ws.join("f").exists());
    // A configured project root makes it writable.
    s.write(
        &s.root.join("config/shellgate/config.toml"),
        &format!("[sandbox]\nprojects = [\"{}\"]\n", s.ws.display()),
    );
    s.sandbox_auto().sh("echo x > f").ok();
    assert!(s.ws.join("f").exists());
}

#[test]
fn git_works_inside_while_hooks_and_config_stay_read_only() {
    for who in identities() {
        let s = Scene::new(who);
        s.git_repo();
        let out = s.sandbox().sh(
            "echo more >> README && git add README && git commit -qm second && git log --oneline | wc -l; \
             echo evil > .git/hooks/pre-commit; echo evil >> .git/config; \
             mv .git/hooks .git/h2; mv .git .git-moved; rm -rf .git/hooks; echo done",
        );
        let stdout = out.stdout();
        assert!(stdout.starts_with("2\n"), "{stdout} {}", out.stderr());
        assert!(stdout.ends_with("done\n"), "{stdout}");
        assert!(!s.ws.join(".git/hooks/pre-commit").exists());
        assert!(!read(&s.ws.join(".git/config")).unwrap().contains("evil"));
        assert!(s.ws.join(".git/hooks").is_dir());
        assert!(!s.ws.join(".git-moved").exists());
        assert_eq!(s.git_in(&s.ws, &["log", "--oneline"]).lines().count(), 2);
    }
}

#[test]
fn linked_worktree_git_dirs_are_writable_for_commits_but_not_their_config() {
    let s = me();
    s.git_repo();
    let wt = s.root.join("wt");
    s.git_in(&s.ws, &["worktree", "add", "-q", wt.to_str().unwrap()]);
    s.chown(&wt);
    let out = s
        .sandbox_auto()
        .flags(["--workspace", wt.to_str().unwrap()])
        .cwd(&wt)
        .sh("echo change >> README && git commit -qam wt && echo ok; echo evil >> $(git rev-parse --git-common-dir)/config");
    assert!(out.stdout().contains("ok"), "{}", out.stderr());
    assert!(!read(&s.ws.join(".git/config")).unwrap().contains("evil"));
}

#[test]
fn exit_status_and_signal_death_propagate() {
    let s = me();
    assert_eq!(s.sandbox().sh("exit 7").code(), Some(7));
    assert_eq!(
        s.sandbox().run("/bin/false", [] as [&str; 0]).code(),
        Some(1)
    );
    assert_eq!(
        s.sandbox().sh("kill -TERM $$").signal(),
        Some(libc::SIGTERM)
    );
    assert_eq!(
        s.sandbox().sh("kill -KILL $$").signal(),
        Some(libc::SIGKILL)
    );
}

#[test]
fn no_new_privs_no_capabilities_pid_one_is_the_init() {
    for who in identities() {
        let s = Scene::new(who);
        let out = s
            .sandbox()
            .sh(
                "grep -E '^(NoNewPrivs|CapInh|CapPrm|CapEff|CapAmb|Seccomp|SigIgn):' \
                 /proc/self/status; echo marker=$SHELLGATE_SANDBOXED; echo pid=$$; \
                 ls /proc | grep -c '^[0-9]'",
            )
            .ok();
        let field = |name: &str| {
            out.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}:")))
                .map(str::trim)
                .unwrap_or_else(|| panic!("{name} missing in {out}"))
                .to_string()
        };
        assert_eq!(field("NoNewPrivs"), "1");
        for caps in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
            assert_eq!(field(caps), "0000000000000000", "{caps}");
        }
        assert_eq!(field("Seccomp"), "2");
        let ignored = u64::from_str_radix(&field("SigIgn"), 16).unwrap();
        assert_eq!(
            ignored & (1 << (libc::SIGPIPE - 1)),
            0,
            "SIGPIPE stayed ignored"
        );
        assert!(out.contains("marker=workspace-write"));
        // The shell is the init's child, its pid past 300 (where the line's pids start, see
        // the limits); only the line's own processes are visible.
        let pid: u32 = out
            .lines()
            .find_map(|l| l.strip_prefix("pid="))
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no pid in {out}"));
        let per_namespace = fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|r| {
                let mut n = r
                    .split(|c: char| !c.is_ascii_digit())
                    .map(|p| p.parse::<u32>().unwrap_or(0));
                (n.next().unwrap_or(0), n.next().unwrap_or(0)) >= (6, 14)
            })
            .unwrap_or(false);
        assert!(if per_namespace { pid > 300 } else { pid == 2 }, "{out}");
        let visible: u32 = out.lines().last().unwrap().trim().parse().unwrap();
        assert!(visible <= 4, "{visible} processes visible: {out}");
    }
}

#[test]
fn file_capabilities_grant_nothing_inside() {
    let Some(setcap) = which("setcap") else {
        panic!("setcap is missing (apt-get install libcap2-bin)");
    };
    assert_eq!(
        geteuid(),
        0,
        "needs root to set file capabilities (--skip it when unprivileged)"
    );
    let s = me();
    let cat = s.ws.join("cat");
    support::copy_executable(Path::new("/bin/cat"), &cat);
    let ok = Command::new(setcap)
        .args(["cap_dac_override,cap_sys_admin+ep"])
        .arg(&cat)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let caps = |out: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(out)
            .lines()
            .filter(|l| l.starts_with("CapEff:") || l.starts_with("CapPrm:"))
            .map(str::to_string)
            .collect()
    };
    let control = Command::new(&cat)
        .arg("/proc/self/status")
        .output()
        .unwrap();
    assert!(
        caps(&control.stdout)
            .iter()
            .any(|l| !l.ends_with("0000000000000000")),
        "control: file capabilities are not honoured here"
    );
    let out = s
        .sandbox()
        .run(cat.to_str().unwrap(), ["/proc/self/status"]);
    let inside = caps(&out.0.stdout);
    assert_eq!(inside.len(), 2, "{}", out.stderr());
    assert!(
        inside.iter().all(|l| l.ends_with("0000000000000000")),
        "{inside:?}"
    );
}

#[test]
fn stdin_and_stdout_pass_through() {
    let s = me();
    let out = s
        .sandbox()
        .stdin(b"line one\nline two\n")
        .run("cat", [] as [&str; 0]);
    assert_eq!(out.ok(), "line one\nline two\n");
}

#[test]
fn the_terminal_works_inside() {
    let script = which("script").expect("script (util-linux) is installed");
    let s = me();
    // Its own terminal is reachable by the name `tty` prints (the private /dev binds it as
    // `console`), through /dev/tty, and new terminals (a pty of its own) work.
    s.write(
        &s.ws.join("term.sh"),
        &format!(
            "tty; stty size >/dev/null && echo stty-ok\n\
             echo via-dev-tty > /dev/tty; echo via-its-name > \"$(tty)\"\n\
             {PYTHON} -c 'import os, pty; m, s = pty.openpty(); os.write(m, b\"in\\n\"); \
             print(\"new pty\", os.ttyname(s), os.read(s, 8))'\n"
        ),
    );
    let inner = format!(
        "{} sandbox --workspace {1} -- sh {1}/term.sh",
        binary().display(),
        s.ws.display()
    );
    let out = Command::new(script)
        .args(["-qec", &inner, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("/dev/console"), "{text}");
    assert!(text.contains("stty-ok"), "{text}");
    assert!(text.contains("via-dev-tty"), "{text}");
    assert!(text.contains("via-its-name"), "{text}");
    assert!(text.contains("new pty /dev/pts/0 b'in\\n'"), "{text}");
}

#[test]
fn unix_socketpairs_work_without_network() {
    let s = me();
    let code = "\
import os, socket
for kind in (socket.SOCK_STREAM, socket.SOCK_SEQPACKET):
    a, b = socket.socketpair(socket.AF_UNIX, kind)
    a.send(b'ping')
    print(b.recv(4).decode())
";
    assert_eq!(s.sandbox().py(code, &[]).ok(), "ping\nping\n");
}

#[test]
fn pipes_jobs_and_signals_inside_work() {
    let s = me();
    let out = s
        .sandbox()
        .sh("sleep 30 & kill -TERM $!; wait $!; echo $?; seq 3 | wc -l")
        .ok();
    assert_eq!(out, "143\n3\n");
}

// ---------------------------------------------------------------------------------------------
// Failing closed, and shellgate's own failures.

#[test]
fn missing_landlock_refuses_and_runs_nothing() {
    let s = me();
    let out = s
        .sandbox()
        .env("SHELLGATE_LANDLOCK_ABI_MAX", "0")
        .sh("touch marker");
    let stderr = out.refused();
    assert!(!s.ws.join("marker").exists());
    assert!(stderr.contains("Landlock"), "{stderr}");
    assert!(stderr.contains("Full access"), "{stderr}");
}

#[test]
fn old_abi_refuses_unless_the_protection_is_dropped_explicitly() {
    let s = me();
    let out = s
        .sandbox()
        .env("SHELLGATE_LANDLOCK_ABI_MAX", "5")
        .sh("touch marker");
    let stderr = out.refused();
    assert!(stderr.contains("--drop-protection scope"), "{stderr}");
    assert!(!s.ws.join("marker").exists());
    s.sandbox()
        .env("SHELLGATE_LANDLOCK_ABI_MAX", "5")
        .flags(["--drop-protection", "scope"])
        .sh(&format!("touch marker; echo x > {}/f", s.outside.display()))
        .program_failed();
    assert!(s.ws.join("marker").exists());
    assert!(!s.outside.join("f").exists());
}

#[test]
fn garbage_abi_limit_fails_closed() {
    let s = me();
    s.sandbox()
        .env("SHELLGATE_LANDLOCK_ABI_MAX", "lots")
        .sh("touch marker")
        .refused();
    assert!(!s.ws.join("marker").exists());
}

#[test]
fn missing_namespaces_refuse_unless_the_layer_is_dropped_explicitly() {
    let s = me();
    s.git_repo();
    let out = s
        .sandbox()
        .env("SHELLGATE_SANDBOX_NO_NAMESPACES", "1")
        .sh("touch marker");
    let stderr = out.refused();
    assert!(
        stderr.contains("--drop-protection protected-paths"),
        "{stderr}"
    );
    assert!(!s.ws.join("marker").exists());
    s.sandbox()
        .env("SHELLGATE_SANDBOX_NO_NAMESPACES", "1")
        .flags(["--drop-protection", "protected-paths"])
        .sh(&format!("touch marker; echo x > {}/f", s.outside.display()))
        .program_failed();
    assert!(s.ws.join("marker").exists());
    assert!(!s.outside.join("f").exists(), "Landlock still holds");
}

#[test]
fn unstartable_program_exits_212() {
    let s = me();
    let out = s
        .sandbox()
        .run("no-such-program-shellgate-test", [] as [&str; 0]);
    assert_eq!(out.code(), Some(SANDBOX_EXEC_FAILED));
    assert_eq!(out.stderr().lines().count(), 1);
    assert!(out.stderr().contains("no such program"));
}

#[test]
fn full_access_is_not_a_sandbox_policy() {
    let s = me();
    let out = s
        .sandbox()
        .flags(["--policy", "full-access"])
        .sh("touch marker");
    assert_eq!(out.code(), Some(2));
    assert!(!s.ws.join("marker").exists());
}

#[test]
fn a_home_or_system_directory_is_never_the_workspace() {
    let s = me();
    for dir in [s.home.clone(), "/".into(), "/usr".into(), "/etc/ssh".into()] {
        let out = s
            .sandbox_auto()
            .flags(["--workspace", dir.to_str().unwrap()])
            .env("HOME", &s.home)
            .cwd(&s.root)
            .sh("echo ran");
        let stderr = out.refused();
        assert!(!out.stdout().contains("ran"), "{}", dir.display());
        assert!(
            stderr.contains("cannot be a writable workspace"),
            "{stderr}"
        );
    }
}

#[test]
fn a_working_directory_hidden_inside_the_sandbox_refuses() {
    let s = me();
    s.write(&s.home.join(".aws/credentials"), "secret\n");
    let out = s.sandbox().cwd(&s.home.join(".aws")).sh("cat credentials");
    let stderr = out.refused();
    assert!(!out.stdout().contains("secret"));
    assert!(stderr.contains("working directory"), "{stderr}");
}

#[test]
fn nested_sandbox_can_only_narrow() {
    let s = me();
    s.git_repo();
    let inner = |flags: &str, script: &str| {
        format!(
            "{} sandbox --workspace {} {flags} -- sh -c '{script}'",
            binary().display(),
            s.ws.display()
        )
    };
    let widen = inner(
        &format!("--writable {}", s.outside.display()),
        &format!("echo x > {}/f", s.outside.display()),
    );
    s.sandbox().sh(&widen).program_failed();
    assert!(!s.outside.join("f").exists());
    let narrow = inner("--policy read-only", "echo x > narrowed");
    s.sandbox().sh(&narrow).program_failed();
    assert!(!s.ws.join("narrowed").exists());
    let same = inner("", "echo ok > nested-ok; echo evil >> .git/config");
    let out = s.sandbox().sh(&same);
    assert!(s.ws.join("nested-ok").exists(), "{}", out.stderr());
    assert!(!read(&s.ws.join(".git/config")).unwrap().contains("evil"));
    let listener = tcp_listener("127.0.0.1:0");
    let port = listener.local_addr().unwrap().port();
    let regain = format!(
        "{} sandbox --workspace {} --network -- {PYTHON} -c \"$PROBE\" 127.0.0.1 {port}",
        binary().display(),
        s.ws.display()
    );
    let out = s.sandbox().env("PROBE", TCP_CONNECT).sh(&regain);
    assert_eq!(out.code(), Some(3), "{} {}", out.stdout(), out.stderr());
    assert_no_connection(&listener);
}

#[test]
fn doctor_reports_every_layer_and_what_the_workspace_protects() {
    let s = me();
    s.git_repo();
    s.write(&s.home.join(".ssh/id_ed25519"), "key\n");
    let out = Command::new(binary())
        .args(["doctor", "--json"])
        .current_dir(&s.ws)
        .env("HOME", &s.home)
        .env("XDG_CONFIG_HOME", s.root.join("config"))
        .env("XDG_STATE_HOME", s.root.join("state"))
        .env_remove("SHELLGATE_LANDLOCK_ABI_MAX")
        .env_remove("SHELLGATE_SANDBOX_NO_NAMESPACES")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The build it names is the one it is: static musl has no program interpreter.
    let build = report["build"].as_str().unwrap();
    assert_eq!(
        build.starts_with("static musl"),
        !has_interpreter(binary()),
        "{build}"
    );
    assert_eq!(report["default_policy_enforceable"], true);
    assert!(
        report["probes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["ok"] == true)
    );
    let ws = &report["workspace"];
    assert_eq!(ws["path"], s.ws.to_str().unwrap());
    let has = |key: &str, path: &Path| {
        ws[key]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == path.to_str().unwrap())
    };
    assert!(has("read_only", &s.ws.join(".git/config")), "{ws}");
    assert!(has("guarded", &s.ws.join(".git/commondir")), "{ws}");
    assert!(has("hidden", &s.home.join(".ssh/id_ed25519")), "{ws}");
    // Nothing was created by looking.
    assert!(s.ws.join(".git/hooks").exists());
    let refused = Command::new(binary())
        .args(["doctor"])
        .env("SHELLGATE_LANDLOCK_ABI_MAX", "0")
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(SANDBOX_UNAVAILABLE));
}

/// Whether the ELF64 executable at `path` names a program interpreter (`PT_INTERP`): a
/// dynamically linked one.
fn has_interpreter(path: &Path) -> bool {
    let elf = fs::read(path).unwrap();
    assert_eq!(&elf[..4], b"\x7fELF", "{}", path.display());
    let word = |at: usize, len: usize| {
        let mut bytes = [0u8; 8];
        bytes[..len].copy_from_slice(&elf[at..at + len]);
        u64::from_le_bytes(bytes) as usize
    };
    let (offset, size, count) = (word(0x20, 8), word(0x36, 2), word(0x38, 2));
    (0..count).any(|i| word(offset + i * size, 4) == 3)
}

// ---------------------------------------------------------------------------------------------
// Network.

const TCP_CONNECT: &str = "\
import socket, sys
family = socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET
try:
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    s.connect((sys.argv[1], int(sys.argv[2])))
    s.sendall(b'hello')
    s.close()
    print('connected')
except OSError as e:
    print('denied', e.errno)
    sys.exit(3)
";

const UDP_SEND: &str = "\
import socket, sys
family = socket.AF_INET6 if ':' in sys.argv[1] else socket.AF_INET
try:
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.sendto(b'hello', (sys.argv[1], int(sys.argv[2])))
    print('sent')
except OSError as e:
    print('denied', e.errno)
    sys.exit(3)
";

fn tcp_listener(addr: &str) -> TcpListener {
    let listener = TcpListener::bind(addr).expect("loopback listener");
    listener.set_nonblocking(true).unwrap();
    listener
}

fn assert_no_connection(listener: &TcpListener) {
    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        other => panic!("the listener saw a connection: {other:?}"),
    }
}

#[test]
fn tcp_and_udp_to_loopback_are_denied_without_the_network() {
    for addr in ["127.0.0.1:0", "[::1]:0"] {
        let s = me();
        let listener = tcp_listener(addr);
        let local = listener.local_addr().unwrap();
        let args = [local.ip().to_string(), local.port().to_string()];
        let args = [args[0].as_str(), args[1].as_str()];
        let control = s.bare().py(TCP_CONNECT, &args);
        assert_eq!(
            control.stdout().trim(),
            "connected",
            "control {}",
            control.stderr()
        );
        let _ = listener.accept();
        let out = s.sandbox().py(TCP_CONNECT, &args);
        assert_eq!(out.stdout().trim(), "denied 1", "{}", out.stderr());
        assert_no_connection(&listener);
        let socket = UdpSocket::bind(addr).expect("loopback udp");
        socket
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let local = socket.local_addr().unwrap();
        let out = s.sandbox().py(
            UDP_SEND,
            &[&local.ip().to_string(), &local.port().to_string()],
        );
        assert_eq!(out.code(), Some(3), "{} {}", out.stdout(), out.stderr());
        let mut buf = [0u8; 16];
        assert!(
            socket.recv_from(&mut buf).is_err(),
            "the UDP listener got a datagram"
        );
    }
}

#[test]
fn the_network_flag_allows_tcp() {
    let s = me();
    let listener = tcp_listener("127.0.0.1:0");
    let port = listener.local_addr().unwrap().port().to_string();
    let out = s
        .sandbox()
        .flags(["--network"])
        .py(TCP_CONNECT, &["127.0.0.1", &port]);
    assert_eq!(out.stdout().trim(), "connected", "{}", out.stderr());
    listener.set_nonblocking(false).unwrap();
    let (mut stream, _) = listener.accept().expect("the connection arrived");
    let mut got = String::new();
    use std::io::Read;
    stream.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hello");
}

/// A port grant: TCP to the granted port connects; to another port it is refused (Landlock, and
/// the supervisor reports it with its address); UDP stays refused. Shown first without the
/// sandbox (both connect), then as every identity.
#[test]
fn a_tcp_port_grant_allows_that_port_only() {
    for who in identities() {
        let s = Scene::new(who);
        let granted = tcp_listener("127.0.0.1:0");
        let other = tcp_listener("127.0.0.1:0");
        let (gp, op) = (
            granted.local_addr().unwrap().port().to_string(),
            other.local_addr().unwrap().port().to_string(),
        );
        for port in [&gp, &op] {
            let control = s.bare().py(TCP_CONNECT, &["127.0.0.1", port]);
            assert_eq!(
                control.stdout().trim(),
                "connected",
                "control {}",
                control.stderr()
            );
        }
        let _ = (granted.accept(), other.accept());
        let flags = ["--tcp-port", gp.as_str()];
        let out = s
            .sandbox()
            .flags(flags)
            .py(TCP_CONNECT, &["127.0.0.1", &gp]);
        assert_eq!(
            out.stdout().trim(),
            "connected",
            "{who:?}: {}",
            out.stderr()
        );
        granted.set_nonblocking(false).unwrap();
        let (mut stream, _) = granted.accept().expect("the granted connection arrived");
        let mut got = String::new();
        std::io::Read::read_to_string(&mut stream, &mut got).unwrap();
        assert_eq!(got, "hello");
        let out = s
            .sandbox()
            .flags(flags)
            .py(TCP_CONNECT, &["127.0.0.1", &op]);
        assert_eq!(
            out.code(),
            Some(3),
            "{who:?}: {} {}",
            out.stdout(),
            out.stderr()
        );
        assert_no_connection(&other);
        assert!(
            out.stderr()
                .contains(&format!("a connection to 127.0.0.1:{op}")),
            "{who:?}: {}",
            out.stderr()
        );
        let out = s.sandbox().flags(flags).py(UDP_SEND, &["127.0.0.1", &gp]);
        assert_eq!(
            out.code(),
            Some(3),
            "{who:?}: {} {}",
            out.stdout(),
            out.stderr()
        );
        // Name lookups go over TCP.
        let out = s.sandbox().flags(flags).sh("echo \"$RES_OPTIONS\"");
        assert_eq!(out.stdout().trim(), "use-vc");
    }
}

/// Nested in another sandbox (no supervisor for the inner one), the port grant still holds:
/// Landlock alone decides.
#[test]
fn a_tcp_port_grant_holds_without_a_supervisor() {
    let s = me();
    let granted = tcp_listener("127.0.0.1:0");
    let other = tcp_listener("127.0.0.1:0");
    let (gp, op) = (
        granted.local_addr().unwrap().port(),
        other.local_addr().unwrap().port(),
    );
    let inner = |port: u16| {
        format!(
            "{} sandbox --workspace {} --tcp-port {gp} -- {PYTHON} -c \"$PROBE\" 127.0.0.1 {port}",
            binary().display(),
            s.ws.display()
        )
    };
    // The outer sandbox grants both ports; the inner one only the first.
    let outer = ["--tcp-port", &gp.to_string(), "--tcp-port", &op.to_string()].map(str::to_owned);
    let out = s
        .sandbox()
        .flags(outer.clone())
        .env("PROBE", TCP_CONNECT)
        .sh(&inner(gp));
    assert_eq!(out.stdout().trim(), "connected", "{}", out.stderr());
    let out = s
        .sandbox()
        .flags(outer)
        .env("PROBE", TCP_CONNECT)
        .sh(&inner(op));
    assert_eq!(out.code(), Some(3), "{} {}", out.stdout(), out.stderr());
    assert_no_connection(&other);
}

/// A one-connection server: binds `HOST PORT` (`auto`: listens without binding, so the kernel
/// picks a port on every address), says where it is bound, serves `served` to one client.
const SERVE_ONCE: &str = "\
import socket, sys
host, port = sys.argv[1], int(sys.argv[2])
family = socket.AF_INET6 if ':' in host else socket.AF_INET
try:
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if host != 'auto':
        s.bind((host, port))
    s.listen(1)
except OSError as e:
    print('denied', e.errno, flush=True)
    sys.exit(3)
print('bound', s.getsockname()[0], flush=True)
s.settimeout(20)
c, _ = s.accept()
c.sendall(b'served')
c.close()
";

/// A TCP port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Connects to `address` from outside the sandbox, again and again for up to 20 s (the server is
/// starting meanwhile), and returns what it was sent. A connection that sends nothing is not the
/// test's server: another test's listener that was handed the same free port (it accepts into
/// its backlog and closes) — tried again.
fn fetch_from_outside(address: std::net::SocketAddr) -> std::thread::JoinHandle<Option<String>> {
    std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            if let Ok(mut stream) = std::net::TcpStream::connect(address) {
                let mut got = String::new();
                let _ = std::io::Read::read_to_string(&mut stream, &mut got);
                if !got.is_empty() {
                    return Some(got);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    })
}

/// A listening grant: a server the line starts on the granted port is reached from outside on
/// loopback, and a wildcard address is bound as loopback (checked from outside: the control
/// without the sandbox is bound on every address). Another port, no grant, and a port the kernel
/// picks are refused, each named. As every identity.
#[test]
fn a_listening_grant_serves_on_loopback_only() {
    for who in identities() {
        let s = Scene::new(who);
        let port = free_port();
        let p = port.to_string();
        let loopback: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
        // The control: without the sandbox the wildcard is every address.
        let client = fetch_from_outside(loopback);
        let control = s.bare().py(SERVE_ONCE, &["0.0.0.0", &p]);
        assert_eq!(
            control.stdout().trim(),
            "bound 0.0.0.0",
            "{}",
            control.stderr()
        );
        assert_eq!(client.join().unwrap().as_deref(), Some("served"));
        let listen = ["--listen", p.as_str()];
        let client = fetch_from_outside(loopback);
        let out = s.sandbox().flags(listen).py(SERVE_ONCE, &["0.0.0.0", &p]);
        assert_eq!(
            out.stdout().trim(),
            "bound 127.0.0.1",
            "{who:?}: {}",
            out.stderr()
        );
        assert_eq!(client.join().unwrap().as_deref(), Some("served"), "{who:?}");
        // IPv6, where this machine has it: `::` is bound as `::1`.
        if TcpListener::bind("[::1]:0").is_ok() {
            let client = fetch_from_outside((std::net::Ipv6Addr::LOCALHOST, port).into());
            let out = s.sandbox().flags(listen).py(SERVE_ONCE, &["::", &p]);
            assert_eq!(
                out.stdout().trim(),
                "bound ::1",
                "{who:?}: {}",
                out.stderr()
            );
            assert_eq!(client.join().unwrap().as_deref(), Some("served"), "{who:?}");
        }
        let other = free_port();
        for (flags, host, port, named) in [
            (
                &listen[..],
                "127.0.0.1",
                other,
                format!("listening on 127.0.0.1:{other}"),
            ),
            (
                &[][..],
                "127.0.0.1",
                port,
                format!("listening on 127.0.0.1:{port}"),
            ),
            (
                &listen[..],
                "auto",
                0,
                "listening on a port the kernel picks".to_owned(),
            ),
        ] {
            let out = s
                .sandbox()
                .flags(flags)
                .py(SERVE_ONCE, &[host, &port.to_string()]);
            assert_eq!(
                out.code(),
                Some(3),
                "{who:?} {host} {port}: {}",
                out.stdout()
            );
            assert!(out.stderr().contains(&named), "{who:?}: {}", out.stderr());
        }
    }
}

/// Nested in another sandbox (no supervisor for the inner one), nothing makes the bind: the
/// inner line cannot listen even on its granted port (fail closed), where the outer one can.
#[test]
fn a_listening_grant_without_a_supervisor_listens_nowhere() {
    let s = me();
    let port = free_port();
    let inner = format!(
        "{} sandbox --workspace {} --listen {port} -- {PYTHON} -c \"$PROBE\" 127.0.0.1 {port}",
        binary().display(),
        s.ws.display()
    );
    let out = s
        .sandbox()
        .flags(["--listen", &port.to_string()])
        .env("PROBE", SERVE_ONCE)
        .sh(&inner);
    assert_eq!(out.code(), Some(3), "{} {}", out.stdout(), out.stderr());
    assert!(out.stdout().contains("denied"), "{}", out.stdout());
}

/// Without the network, a stream socket of another protocol than TCP (SCTP, MPTCP) cannot be
/// made: Landlock's port rules hold TCP only.
#[test]
fn only_tcp_stream_sockets_are_made_without_the_network() {
    let probe = "import socket, sys\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_STREAM, int(sys.argv[1]))\n    print('made')\nexcept OSError as e:\n    print('denied', e.errno)\n";
    let s = me();
    for protocol in ["132", "262"] {
        let out = s
            .sandbox()
            .flags(["--tcp-port", "443"])
            .py(probe, &[protocol]);
        assert_eq!(
            out.stdout().trim(),
            "denied 1",
            "{protocol}: {}",
            out.stderr()
        );
    }
    let out = s.sandbox().flags(["--tcp-port", "443"]).py(probe, &["6"]);
    assert_eq!(out.stdout().trim(), "made", "{}", out.stderr());
}

// ---------------------------------------------------------------------------------------------
// Conformance: attacks, each first shown to work without the sandbox.

fn outside_file(s: &Scene, text: &str) -> std::path::PathBuf {
    let f = s.outside.join("f");
    s.write(&f, text);
    f
}

fn changed(path: &Path, text: &str) -> Option<String> {
    let now = read(path);
    (now.as_deref() != Some(text)).then(|| format!("{} is now {now:?}", path.display()))
}

fn mode_of(path: &Path) -> u32 {
    fs::symlink_metadata(path)
        .map(|m| m.permissions().mode())
        .unwrap_or(0)
}

#[test]
fn writing_truncating_and_renaming_outside() {
    let attacks: [(&str, &str); 6] = [
        ("write", "echo x > OUT/new"),
        ("append", "echo x >> OUT/f"),
        ("truncate", ": > OUT/f"),
        ("rename out", "mv OUT/f WS/stolen"),
        ("delete", "rm -f OUT/f"),
        ("via /proc/self/root", "echo x > /proc/self/rootOUT/f"),
    ];
    for (name, line) in attacks {
        conformance(Attack::new(
            name,
            &|s| {
                outside_file(s, "data\n");
            },
            &|s, mut run| {
                // One pass over the template: a scene's random name may itself hold "WS".
                let filled = line
                    .split("OUT")
                    .map(|part| part.replace("WS", s.ws.to_str().unwrap()))
                    .collect::<Vec<_>>()
                    .join(s.outside.to_str().unwrap());
                run.sh(&filled)
            },
            &|s, _| {
                changed(&s.outside.join("f"), "data\n")
                    .or_else(|| s.outside.join("new").exists().then(|| "new file".into()))
            },
        ));
    }
}

#[test]
fn symlinks_and_hardlinks_in_the_workspace_do_not_reach_outside() {
    conformance(Attack::new(
        "symlink",
        &|s| {
            outside_file(s, "data\n");
            std::os::unix::fs::symlink(s.outside.join("f"), s.ws.join("link")).unwrap();
        },
        &|_, mut run| run.sh("echo x >> link"),
        &|s, _| changed(&s.outside.join("f"), "data\n"),
    ));
    conformance(Attack::new(
        "hardlink",
        &|s| {
            outside_file(s, "data\n");
        },
        &|s, mut run| run.sh(&format!("ln {}/f h && echo x >> h", s.outside.display())),
        &|s, _| changed(&s.outside.join("f"), "data\n"),
    ));
}

/// A store outside with one package file, and the workspace's `node_modules/pkg.js` a second
/// name of it (a hard link), as pnpm and uv install packages.
fn linked_store(s: &Scene) -> std::path::PathBuf {
    let store = s.outside.join("store/pkg.js");
    s.write(&store, "original\n");
    let linked = s.ws.join("node_modules/pkg.js");
    fs::create_dir_all(linked.parent().unwrap()).unwrap();
    fs::hard_link(&store, &linked).unwrap();
    s.chown(&s.ws.join("node_modules"));
    store
}

/// A file in the workspace that is a second name of a file outside is never written through, by
/// any way of opening or truncating it by a name: the supervisor makes every open for writing
/// itself, in the line's root with the line's Landlock rules, and refuses a regular file with
/// more than one link (`sandbox/opener.rs`). Each way is shown to change the store without the
/// sandbox. (Before, every one of them did in the sandbox too.)
#[test]
fn a_second_name_of_a_file_outside_is_never_written_through() {
    let python_rw = format!(
        "{PYTHON} -c \"import os; fd = os.open('node_modules/pkg.js', os.O_RDWR); \
         os.write(fd, b'evil')\""
    );
    let python_truncate =
        format!("{PYTHON} -c \"import os; os.truncate('node_modules/pkg.js', 0)\"");
    let python_dir_fd = format!(
        "{PYTHON} -c \"import os; d = os.open('node_modules', os.O_RDONLY); \
         fd = os.open('pkg.js', os.O_WRONLY | os.O_TRUNC, dir_fd=d); os.write(fd, b'evil')\""
    );
    let python_rdonly_trunc = format!(
        "{PYTHON} -c \"import os; os.open('node_modules/pkg.js', os.O_RDONLY | os.O_TRUNC)\""
    );
    let ways: [(&str, &str); 12] = [
        ("redirection", "echo evil > node_modules/pkg.js"),
        ("append", "echo evil >> node_modules/pkg.js"),
        ("read-write", &python_rw),
        ("truncate by name", &python_truncate),
        ("read-only with O_TRUNC", &python_rdonly_trunc),
        ("openat beneath a directory descriptor", &python_dir_fd),
        (
            "the line's own descriptor reopened",
            "exec 3< node_modules/pkg.js; echo evil > /proc/self/fd/3",
        ),
        (
            "/dev/fd",
            "exec 4< node_modules/pkg.js; echo evil > /dev/fd/4",
        ),
        (
            "dot-dot from below",
            "mkdir -p d/e && cd d/e && echo evil > ../../node_modules/pkg.js",
        ),
        ("absolute", "echo evil > \"$PWD/node_modules/pkg.js\""),
        ("symlink", "ln -s node_modules/pkg.js s && echo evil > s"),
        (
            "renamed first",
            "mv node_modules/pkg.js mine.js && echo evil > mine.js",
        ),
    ];
    for (name, line) in ways {
        conformance(Attack::new(
            name,
            &|s| {
                linked_store(s);
            },
            &|_, mut run| run.sh(line),
            &|s, _| changed(&s.outside.join("store/pkg.js"), "original\n"),
        ));
    }
}

/// The refusal is named, and says that no grant gives it; the line goes on.
#[test]
fn a_refused_second_name_is_named() {
    for who in identities() {
        let s = Scene::new(who);
        linked_store(&s);
        let out = s
            .sandbox()
            .sh("echo evil > node_modules/pkg.js; echo status=$?; echo ok > mine; cat mine");
        assert!(
            out.stdout().contains("status=1") || out.stdout().contains("status=2"),
            "{who:?}: {}",
            out.stdout()
        );
        assert!(out.stdout().ends_with("ok\n"), "{who:?}: {}", out.stdout());
        let stderr = out.stderr();
        assert!(
            stderr.contains(&format!(
                "writing {}, a file with 2 names (a hard link)",
                s.ws.join("node_modules/pkg.js").display()
            )),
            "{who:?}: {stderr}"
        );
        assert!(stderr.contains("no grant allows it"), "{stderr}");
    }
}

/// With the supervisor making every open for writing, ordinary writes behave as the kernel's
/// own: the umask, appending, `O_EXCL` (noclobber), a FIFO that waits for its reader, the
/// line's own descriptors by name (`/dev/stderr`, a process substitution), devices, `..` from a
/// subdirectory, a directory descriptor, `O_TMPFILE`, `O_RDONLY | O_TRUNC`, `truncate(2)`.
#[test]
fn ordinary_writes_behave_as_the_kernels_own() {
    for who in identities() {
        let s = Scene::new(who);
        let code = "import os\n\
                    d = os.open('a', os.O_RDONLY)\n\
                    fd = os.open('rel.txt', os.O_WRONLY | os.O_CREAT, 0o640, dir_fd=d)\n\
                    os.write(fd, b'rel')\n\
                    fd = os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o600)\n\
                    print('tmpfile', os.write(fd, b'xy'))\n\
                    os.open('trunc.txt', os.O_RDONLY | os.O_TRUNC)\n\
                    print('rdonly-trunc', os.path.getsize('trunc.txt'))\n\
                    os.truncate('up.txt', 2)\n\
                    print('truncated', open('up.txt').read())\n\
                    try:\n    os.open('new.txt', os.O_WRONLY | os.O_CREAT | os.O_EXCL)\n\
                    except FileExistsError:\n    print('excl refused')\n";
        let script = format!(
            "umask 077; echo a > private; umask 022; echo b > public; stat -c '%a %n' private public; \
             echo one > new.txt; echo two >> new.txt; cat new.txt; \
             set -C; (echo x > new.txt) 2>/dev/null || echo noclobber; set +C; \
             mkfifo p; cat p > from-fifo & echo via-fifo > p; wait; cat from-fifo; \
             echo to-stderr | tee /dev/stderr > /dev/null; echo x > /dev/null; \
             echo substituted > >(cat > ps.txt); wait; \
             mkdir -p a/b && (cd a/b && echo up > ../../up.txt) && cat up.txt; \
             echo 12345 > trunc.txt; {PYTHON} -c \"$CODE\"; cat a/rel.txt; echo; stat -c '%a' a/rel.txt"
        );
        let run = |mut run: Run| {
            run.env("CODE", code)
                .run("/bin/bash", ["-c", script.as_str()])
        };
        let out = run(s.sandbox());
        assert_eq!(
            out.stdout(),
            "600 private\n644 public\none\ntwo\nnoclobber\nvia-fifo\nup\ntmpfile 2\n\
             rdonly-trunc 0\ntruncated up\nexcl refused\nrel\n640\n",
            "{who:?}: {}",
            out.stderr()
        );
        assert_eq!(read(&s.ws.join("ps.txt")).as_deref(), Some("substituted\n"));
        // Reopening the test's stderr (a pipe this process made) by name: as the kernel answers
        // without the sandbox (`nobody` may not open root's pipe by name).
        let bare = Scene::new(who);
        let control = run(bare.bare());
        assert_eq!(control.stdout(), out.stdout(), "{who:?}");
        assert_eq!(
            out.stderr().contains("to-stderr"),
            control.stderr().contains("to-stderr"),
            "{who:?}: {} / {}",
            out.stderr(),
            control.stderr()
        );
    }
}

/// A writer waiting for a FIFO's reader holds up none of the line's other opens for writing
/// (the supervisor tries it again on a thread of its own), and is let through once the reader
/// comes.
#[test]
fn a_writer_waiting_for_a_fifo_holds_up_nothing() {
    for who in identities() {
        let s = Scene::new(who);
        let out = s
            .sandbox()
            .sh("mkfifo p; echo waited > p & sleep 0.3; echo other > o; cat o; cat p; wait");
        assert_eq!(out.stdout(), "other\nwaited\n", "{who:?}: {}", out.stderr());
    }
}

/// `/dev/tty` is the line's own controlling terminal (a pseudo-terminal `script` makes here),
/// though the supervisor makes the line's opens for writing: that exact name goes on to the
/// kernel, in the line. The same device by another name is refused: opened by the supervisor, it
/// would have been the supervisor's terminal.
#[test]
fn the_controlling_terminal_is_the_lines_own() {
    for who in identities() {
        let s = Scene::new(who);
        let inner = format!(
            "{} sandbox --workspace {} -- sh -c 'echo to-tty > /dev/tty; echo status=$?; \
             ln -s /dev/tty t; echo x > t; echo second=$?'",
            binary().display(),
            s.ws.display()
        );
        let out = s
            .bare()
            .run("script", ["-qec", inner.as_str(), "/dev/null"]);
        let text = out.stdout().replace('\r', "");
        assert!(text.contains("to-tty\nstatus=0\n"), "{who:?}: {text}");
        assert!(
            text.contains("No such device or address"),
            "{who:?}: {text}"
        );
        assert!(text.contains("second=2"), "{who:?}: {text}");
    }
}

/// A sandbox nested in a line has no supervisor of its own: the outer one makes its opens for
/// writing, held to the nested sandbox's rules too (it announces its ruleset before its program
/// runs). A read-only nested sandbox writes nothing; the hard link is refused to a nested line as
/// well; a nested sandbox in the next line writes. Within one line every nested sandbox is held to
/// every ruleset announced in it (which is whose cannot be told): after a read-only one, another
/// writes nothing either.
#[test]
fn a_nested_sandboxs_opens_are_held_to_its_own_rules() {
    let s = me();
    linked_store(&s);
    let inner = |flags: &str, script: &str| {
        format!(
            "{} sandbox --workspace {} {flags} -- sh -c '{script}'",
            binary().display(),
            s.ws.display()
        )
    };
    let line = format!(
        "{}; {}; {}",
        inner("--policy read-only", "echo x > narrowed"),
        inner("", "echo evil > node_modules/pkg.js"),
        inner("", "echo x > after-read-only"),
    );
    let out = s.sandbox().sh(&line);
    assert!(!s.ws.join("narrowed").exists(), "{}", out.stderr());
    assert!(!s.ws.join("after-read-only").exists(), "{}", out.stderr());
    let out = s.sandbox().sh(&inner("", "echo ok > nested-ok"));
    assert_eq!(
        read(&s.ws.join("nested-ok")).as_deref(),
        Some("ok\n"),
        "{}",
        out.stderr()
    );
    assert_eq!(
        read(&s.outside.join("store/pkg.js")).as_deref(),
        Some("original\n")
    );
}

/// A process in a read-only nested sandbox announces a ruleset of its own that allows every write
/// (it handles only `EXECUTE`), then writes: still refused. Announcing only adds rules; had a
/// sandbox's rules been dropped once its other processes were gone (the first version), this one,
/// alone in it, shed its own and wrote.
#[test]
fn a_nested_process_cannot_shed_its_sandboxs_rules_by_announcing_others() {
    let s = me();
    let code = "import ctypes, os\n\
                libc = ctypes.CDLL(None, use_errno=True)\n\
                attr = ctypes.c_uint64(1)\n\
                fd = libc.syscall(444, ctypes.byref(attr), ctypes.c_size_t(8), 0)\n\
                assert fd >= 0, ctypes.get_errno()\n\
                try:\n    os.open('', os.O_WRONLY, dir_fd=fd)\n\
                except OSError as e:\n    print('announced', e.errno)\n\
                open('escaped', 'w').write('x')\n";
    let line = format!(
        "{} sandbox --workspace {} --policy read-only -- {PYTHON} -c \"$CODE\"",
        binary().display(),
        s.ws.display()
    );
    let out = s.sandbox().env("CODE", code).sh(&line);
    assert!(
        out.stdout().contains("announced 2"),
        "{} {}",
        out.stdout(),
        out.stderr()
    );
    assert!(!s.ws.join("escaped").exists(), "{}", out.stderr());
}

/// Under another tool's seccomp supervisor (a filter with a listener) the kernel gives the line no
/// listener of its own, and nobody would make its opens for writing: the line does not run, and
/// the refusal says why. The control, the same tool's filter without a listener, runs it.
#[test]
fn under_another_tools_seccomp_supervisor_nothing_runs() {
    for (listener, runs) in [(false, true), (true, false)] {
        let s = me();
        let out = Command::new(PYTHON)
            .args(["-c", FOREIGN_SUPERVISOR])
            .arg(if listener { "listener" } else { "none" })
            .arg(binary())
            .args(["sandbox", "--workspace"])
            .arg(&s.ws)
            .args(["--", "/bin/sh", "-c", "echo x > ran"])
            .current_dir(&s.ws)
            .env("HOME", &s.home)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            s.ws.join("ran").exists(),
            runs,
            "listener {listener}: {stderr}"
        );
        if listener {
            assert!(
                stderr.contains("another tool's seccomp supervisor"),
                "{stderr}"
            );
        }
    }
}

/// Installs an allow-everything seccomp filter, with a listener when `argv[1]` is `listener`
/// (kept open here: a filter whose listener is closed has none), then runs `argv[2:]` as a child.
const FOREIGN_SUPERVISOR: &str = "\
import ctypes, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
class Filter(ctypes.Structure):
    _fields_ = [('code', ctypes.c_ushort), ('jt', ctypes.c_ubyte), ('jf', ctypes.c_ubyte), ('k', ctypes.c_uint)]
class Prog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.POINTER(Filter))]
allow = (Filter * 1)(Filter(0x06, 0, 0, 0x7fff0000))
prog = Prog(1, allow)
assert libc.prctl(38, 1, 0, 0, 0) == 0
flags = 8 if sys.argv[1] == 'listener' else 0
fd = libc.syscall(317, 1, flags, ctypes.byref(prog))
assert fd >= 0, ctypes.get_errno()
sys.exit(subprocess.run(sys.argv[2:]).returncode)
";

#[test]
fn metadata_outside_does_not_change() {
    // chmod, utime, xattrs, POSIX ACLs, file flags: operations Landlock does not mediate, refused
    // by the read-only mount tree.
    let attacks: [(&str, &str); 6] = [
        ("chmod", "chmod 0606 F"),
        ("setuid bit", "chmod u+s F"),
        ("utime", "touch -d 2001-01-01 F"),
        (
            "xattr",
            "python3 -c \"import os; os.setxattr('F', 'user.x', b'1')\"",
        ),
        (
            "posix acl",
            "python3 -c \"import os,struct; os.setxattr('F', 'system.posix_acl_access', \
             struct.pack('<I', 2) + b''.join(struct.pack('<HHI', t, p, i) for t, p, i in \
             ((1, 6, 0xffffffff), (2, 7, 4242), (4, 4, 0xffffffff), (0x10, 7, 0xffffffff), \
             (0x20, 4, 0xffffffff))))\"",
        ),
        ("file flags", "chattr +A F"),
    ];
    for (name, line) in attacks {
        conformance(Attack::new(
            name,
            &|s| {
                let f = outside_file(s, "data\n");
                fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).unwrap();
            },
            &|s, mut run| run.sh(&line.replace('F', s.outside.join("f").to_str().unwrap())),
            &|s, _| {
                let f = s.outside.join("f");
                let meta = fs::metadata(&f).unwrap();
                let xattrs = Command::new(PYTHON)
                    .args([
                        "-c",
                        "import os,sys; print(sorted(os.listxattr(sys.argv[1])))",
                    ])
                    .arg(&f)
                    .output()
                    .unwrap();
                let xattrs = String::from_utf8_lossy(&xattrs.stdout).trim().to_string();
                let flags = Command::new("lsattr").arg(&f).output().unwrap();
                let flags = String::from_utf8_lossy(&flags.stdout).to_string();
                let flag_field = flags.split_whitespace().next().unwrap_or("");
                if meta.permissions().mode() & 0o7777 != 0o644 {
                    Some(format!("mode {:o}", meta.permissions().mode()))
                } else if std::os::unix::fs::MetadataExt::mtime(&meta) < 1_000_000_000 {
                    Some("mtime set back".into())
                } else if xattrs != "[]" {
                    Some(format!("xattrs {xattrs}"))
                } else if flag_field.contains('A') {
                    Some(format!("flags {flag_field}"))
                } else {
                    None
                }
            },
        ));
    }
}

#[test]
fn chown_outside_does_not_change() {
    assert_eq!(
        geteuid(),
        0,
        "needs root to change an owner (--skip it when unprivileged)"
    );
    conformance(
        Attack::new(
            "chown",
            &|s| {
                outside_file(s, "data\n");
            },
            &|s, mut run| run.sh(&format!("chown 4242:4242 {}/f", s.outside.display())),
            &|s, _| {
                let uid = std::os::unix::fs::MetadataExt::uid(
                    &fs::metadata(s.outside.join("f")).unwrap(),
                );
                (uid == 4242).then(|| "owner changed".into())
            },
        )
        .only(Who::is_root),
    );
}

#[test]
fn set_id_programs_cannot_be_made_in_the_workspace() {
    conformance(Attack::new(
        "setuid in workspace",
        &|_| {},
        &|_, mut run| run.sh("cp /bin/true t; chmod u+s t; chmod g+s t"),
        &|s, _| (mode_of(&s.ws.join("t")) & 0o6000 != 0).then(|| "set-id bit set".into()),
    ));
}

/// The bits in the mode of a file being created: `open(O_CREAT, 04755)`, `mknod` of a set-gid
/// fifo (a raw `openat2` is the known gap: its mode is out of the filter's sight).
#[test]
fn set_id_files_cannot_be_created_in_the_workspace() {
    const CREATE: &str = "import os, sys\n\
        for name, mode in (('u', 0o4755), ('g', 0o2755)):\n\
        \x20   try: os.close(os.open(name, os.O_CREAT | os.O_WRONLY, mode)); os.chmod(name, mode)\n\
        \x20   except OSError as e: print(name, e.errno)\n\
        try: os.mkfifo('f', 0o2644)\n\
        except OSError as e: print('f', e.errno)\n\
        import ctypes, struct\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        how = ctypes.create_string_buffer(struct.pack('QQQ', os.O_CREAT | os.O_WRONLY, 0o4755, 0))\n\
        fd = libc.syscall(437, -100, b'o', how, 24)\n\
        print('o', ctypes.get_errno()) if fd < 0 else os.close(fd)\n";
    conformance(Attack::new(
        "set-id mode at creation",
        &|_| {},
        &|_, mut run| run.py(CREATE, &[]),
        &|s, _| {
            // `o`: a raw `openat2`, whose mode the filter cannot read (it answers ENOSYS).
            ["u", "g", "f", "o"]
                .iter()
                .find(|n| mode_of(&s.ws.join(n)) & 0o6000 != 0)
                .map(|n| format!("{n} was created with a set-id bit"))
        },
    ));
}

#[test]
fn inherited_write_descriptors_do_not_reach_the_program() {
    conformance(Attack::new(
        "fd 7 from the caller",
        &|s| {
            outside_file(s, "data\n");
        },
        &|s, mut run| {
            let file = fs::OpenOptions::new()
                .append(true)
                .open(s.outside.join("f"))
                .unwrap();
            run.with_fd(file, 7).sh("echo x >&7")
        },
        &|s, _| changed(&s.outside.join("f"), "data\n"),
    ));
}

#[test]
fn a_second_mount_of_the_workspace_is_read_only() {
    assert_eq!(
        geteuid(),
        0,
        "needs root to bind-mount the workspace a second time (--skip it when unprivileged)"
    );
    conformance(Attack::new(
        "second mount",
        &|s| {
            s.git_repo();
            s.bind_mount(&s.ws, &s.root.join("alias"));
        },
        &|s, mut run| {
            let out = run.sh(&format!(
                "echo '[core] fsmonitor = evil' >> {0}/alias/.git/config; echo x > {0}/alias/.git/hooks/pre-commit",
                s.root.display()
            ));
            s.unmount(&s.root.join("alias"));
            out
        },
        &|s, _| {
            // Also when the attack's run failed before its own unmount.
            s.unmount(&s.root.join("alias"));
            let config = read(&s.ws.join(".git/config")).unwrap_or_default();
            (config.contains("evil") || s.ws.join(".git/hooks/pre-commit").exists())
                .then(|| "wrote .git through the second mount".into())
        },
    ));
}

#[test]
fn a_mount_beneath_the_workspace_is_read_only() {
    assert_eq!(
        geteuid(),
        0,
        "needs root to bind-mount an outside directory into the workspace (--skip it when \
         unprivileged)"
    );
    let mount_door = |s: &Scene| {
        s.git_repo();
        outside_file(s, "data\n");
        s.bind_mount(&s.outside, &s.ws.join("door"));
    };
    let unmount_door = |s: &Scene| s.unmount(&s.ws.join("door"));
    conformance(Attack::new(
        "mount beneath the workspace",
        &mount_door,
        &|s, mut run| {
            let out = run.sh("echo evil > door/f; echo new > door/new");
            unmount_door(s);
            out
        },
        &|s, _| {
            unmount_door(s);
            changed(&s.outside.join("f"), "data\n").or_else(|| {
                s.outside
                    .join("new")
                    .exists()
                    .then(|| "made a file through the mount".into())
            })
        },
    ));
    // The workspace around the mount stays writable.
    for who in identities() {
        let s = Scene::new(who);
        mount_door(&s);
        let out = s.sandbox().sh("echo x > beside && cat door/f");
        unmount_door(&s);
        assert_eq!(out.stdout(), "data\n", "{who:?}: {}", out.stderr());
        assert_eq!(
            read(&s.ws.join("beside")).as_deref(),
            Some("x\n"),
            "{who:?}"
        );
    }
    // Kept writable on purpose (`wrap`'s own file mounts), one mount and only that one; a path
    // that is not a mount is refused.
    let s = Scene::new(Who::Me);
    mount_door(&s);
    let door = s.ws.join("door");
    let out = s
        .sandbox()
        .flags(["--writable-mount", door.to_str().unwrap()])
        .sh("echo granted > door/f");
    let refused = s
        .sandbox()
        .flags(["--writable-mount", s.ws.to_str().unwrap()])
        .sh("true");
    unmount_door(&s);
    assert_eq!(out.code(), Some(0), "{}", out.stderr());
    assert_eq!(read(&s.outside.join("f")).as_deref(), Some("granted\n"));
    assert_eq!(refused.code(), Some(2), "{}", refused.stderr());
    assert!(
        refused.stderr().contains("not the root of a mount"),
        "{}",
        refused.stderr()
    );
}

#[test]
fn a_stream_on_a_file_in_a_protected_tree_cannot_be_reopened_for_writing() {
    // The home lies beneath a writable root (the whole scene), so it is a protected tree bound
    // read-only; a standard stream the caller opened on a file in it carries the caller's
    // writable mount, which `/proc/self/fd/0` would reopen.
    let attack = Attack::new(
        "stream on a protected tree",
        &|s| s.write(&s.home.join(".bashrc"), "# rc\n"),
        &|s, mut run| {
            let file = fs::File::open(s.home.join(".bashrc")).unwrap();
            run.stdin_file(file).sh("echo evil >> /proc/self/fd/0")
        },
        &|s, _| changed(&s.home.join(".bashrc"), "# rc\n"),
    );
    conformance_with(attack, |s| {
        let mut run = s.sandbox();
        run.flags(["--writable", s.root.to_str().unwrap()]);
        run
    });
}

#[test]
fn the_binary_beneath_a_writable_root_stays_read_only() {
    for who in identities() {
        let s = Scene::new(who);
        let copy = s.ws.join("bin/shellgate");
        fs::create_dir_all(copy.parent().unwrap()).unwrap();
        support::copy_executable(binary(), &copy);
        s.chown(&s.ws.join("bin"));
        let before = fs::read(&copy).unwrap();
        let out = s
            .sandbox_with(&copy)
            .flags(["--workspace", s.ws.to_str().unwrap()])
            .sh("echo evil > bin/shellgate; echo x > other && echo wrote-other");
        assert!(out.stdout().contains("wrote-other"), "{}", out.stderr());
        assert_eq!(
            fs::read(&copy).unwrap(),
            before,
            "the binary was replaced as {who:?}"
        );
    }
}

/// Installs a seccomp filter that allows every call (`SECCOMP_RET_ALLOW`), with `no_new_privs`,
/// then execs its arguments: some other tool's filter, not shellgate's.
const FOREIGN_SECCOMP: &str = "\
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Filter(ctypes.Structure):
    _fields_ = [('code', ctypes.c_ushort), ('jt', ctypes.c_ubyte), ('jf', ctypes.c_ubyte), ('k', ctypes.c_uint)]
class Prog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.POINTER(Filter))]
allow = (Filter * 1)(Filter(0x06, 0, 0, 0x7fff0000))
prog = Prog(1, allow)
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0, ctypes.get_errno()
os.execv(sys.argv[1], sys.argv[1:])
";

/// The weaker nested mode (no namespaces of its own, see docs/sandbox.md "Nesting") is chosen only
/// when the kernel refuses to make namespaces, never by the environment: under some other tool's
/// seccomp filter with `SHELLGATE_SANDBOXED` set, the full sandbox is built, so the binary beneath
/// the workspace stays read-only. (Before, the variable and any filter chose the nested mode, whose
/// check skipped the protected trees, and the line replaced the binary.)
#[test]
fn the_environment_cannot_choose_the_weaker_nested_mode() {
    for who in identities() {
        let s = Scene::new(who);
        let copy = s.ws.join("bin/shellgate");
        fs::create_dir_all(copy.parent().unwrap()).unwrap();
        support::copy_executable(binary(), &copy);
        s.chown(&s.ws.join("bin"));
        let before = fs::read(&copy).unwrap();
        let mut command = Command::new(PYTHON);
        command
            .args(["-c", FOREIGN_SECCOMP])
            .arg(&copy)
            .args(["sandbox", "--workspace"])
            .arg(&s.ws)
            .args(["--", "/bin/sh", "-c"])
            .arg("echo evil > bin/shellgate; echo x > other && echo wrote-other")
            .current_dir(&s.ws)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &s.home)
            .env("SHELLGATE_SANDBOXED", "workspace-write");
        who.apply(&mut command);
        let out = command.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("wrote-other"),
            "as {who:?}: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            fs::read(&copy).unwrap(),
            before,
            "the binary was replaced as {who:?}"
        );
    }
}

/// The sandbox's processes share the caller's memory, so none of the caller's signal handlers may
/// stay installed in them (blocking cannot hold every signal, and the program's process unblocks
/// them before its exec): the init catches nothing. Through the library, from a caller that
/// catches SIGUSR1 (as `wrap` catches SIGTERM and SIGHUP); the control is this process's own
/// status.
#[test]
fn the_sandbox_processes_keep_no_handler_of_the_caller() {
    extern "C" fn ignore(_: libc::c_int) {}
    let handler: extern "C" fn(libc::c_int) = ignore;
    // SAFETY: installs a handler that does nothing, for a signal nothing in this test sends.
    unsafe { libc::signal(libc::SIGUSR1, handler as libc::sighandler_t) };
    let caught = |status: &str| -> u64 {
        let line = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .unwrap_or_else(|| panic!("no SigCgt in {status}"));
        u64::from_str_radix(line.trim(), 16).unwrap()
    };
    let usr1 = 1 << (libc::SIGUSR1 - 1);
    assert_ne!(
        caught(&fs::read_to_string("/proc/self/status").unwrap()) & usr1,
        0,
        "control: this process does not catch SIGUSR1"
    );
    let s = me();
    let spec =
        shellgate::sandbox::Spec::new(shellgate::mode::SandboxPolicy::WorkspaceWrite, Some(&s.ws))
            .unwrap()
            .with_home(shellgate::spec::home_env().unwrap());
    let command = shellgate::sandbox::Command::new(
        "/bin/sh".into(),
        vec!["-c".into(), "grep SigCgt /proc/1/status".into()],
        s.ws.clone(),
        std::env::vars_os().collect(),
    );
    let (finished, status) = spawn_for_stdout(&s, &spec, command);
    assert!(finished.status.success());
    assert_eq!(caught(&status), 0, "the init kept handlers: {status}");
}

/// Runs `command` through the library with /dev/null as its input and error, and returns how it
/// ended and what it wrote.
fn spawn_for_stdout(
    s: &Scene,
    spec: &shellgate::sandbox::Spec,
    mut command: shellgate::sandbox::Command,
) -> (shellgate::sandbox::Finished, String) {
    let out = tempfile::NamedTempFile::new_in(&s.root).unwrap();
    let stdout = std::os::fd::OwnedFd::from(out.reopen().unwrap());
    let null = || std::os::fd::OwnedFd::from(fs::File::open("/dev/null").unwrap());
    command.stdio = Some([null(), stdout, null()]);
    let finished = shellgate::sandbox::spawn(spec, command)
        .unwrap()
        .wait(None)
        .unwrap();
    (finished, fs::read_to_string(out.path()).unwrap())
}

/// A pipeline started without a shell (`Command::pipeline`: a typed line of plain commands):
/// each later program is as confined as the first — seen from its own `/proc/self/status`
/// (seccomp filter, `no_new_privs`, no capability) and by what it cannot do (write outside the
/// workspace, which the same program does outside the sandbox: the control) — its statuses come
/// back in order, and a writer whose reader is gone ends by SIGPIPE, as under a shell.
#[test]
fn a_pipelines_later_programs_are_confined_as_the_first() {
    use std::os::unix::process::ExitStatusExt;
    let s = me();
    let target = s.outside.join("from-a-later-program");
    let script = format!(
        "read l; echo \"$l\" > {t}; echo wrote=$?; grep -E '^(Seccomp|NoNewPrivs|CapEff):' /proc/self/status; \
         for n in ipc mnt pid; do echo \"ns-$n=$(readlink /proc/self/ns/$n)\"; done",
        t = target.display()
    );
    let control = std::process::Command::new("/bin/sh")
        .args(["-c", &format!("echo hi | ( {script} )")])
        .output()
        .unwrap();
    assert_eq!(
        read(&target).as_deref(),
        Some("hi\n"),
        "control: {control:?}"
    );
    fs::remove_file(&target).unwrap();
    let spec =
        shellgate::sandbox::Spec::new(shellgate::mode::SandboxPolicy::WorkspaceWrite, Some(&s.ws))
            .unwrap()
            .with_home(shellgate::spec::home_env().unwrap());
    let env: Vec<_> = std::env::vars_os().collect();
    let run = |first: (&str, &[&str]), later: &[(&str, &[&str])]| {
        let argv = |args: &[&str]| args.iter().map(|a| (*a).into()).collect::<Vec<_>>();
        let mut command = shellgate::sandbox::Command::new(
            first.0.into(),
            argv(first.1),
            s.ws.clone(),
            env.clone(),
        );
        command.pipeline = later
            .iter()
            .map(|(program, args)| shellgate::sandbox::Stage {
                program: (*program).into(),
                arg0: (*program).into(),
                args: argv(args),
                env: env.clone(),
            })
            .collect();
        spawn_for_stdout(&s, &spec, command)
    };
    let (finished, out) = run(
        ("/bin/echo", &["hi"]),
        &[("/bin/cat", &[]), ("/bin/sh", &["-c", &script])],
    );
    assert_eq!(finished.pipeline.len(), 3, "{finished:?}");
    assert!(
        finished.pipeline.iter().all(|s| s.success()),
        "{finished:?}"
    );
    assert!(out.contains("wrote=") && !out.contains("wrote=0"), "{out}");
    assert!(out.contains("Seccomp:\t2"), "{out}");
    assert!(out.contains("NoNewPrivs:\t1"), "{out}");
    assert!(out.contains("CapEff:\t0000000000000000"), "{out}");
    // The line's own IPC, mount and PID namespaces, not this process's.
    for ns in ["ipc", "mnt", "pid"] {
        let here = fs::read_link(format!("/proc/self/ns/{ns}")).unwrap();
        let line = format!("ns-{ns}={}", here.display());
        assert!(
            out.contains(&format!("ns-{ns}=")) && !out.contains(&line),
            "{out}"
        );
    }
    assert!(
        !target.exists(),
        "a later program wrote outside the workspace"
    );
    // A later program that cannot start fails the launch, named (not the first program).
    let mut command = shellgate::sandbox::Command::new(
        "/bin/echo".into(),
        vec!["hi".into()],
        s.ws.clone(),
        env.clone(),
    );
    command.pipeline = vec![shellgate::sandbox::Stage {
        program: "/nonexistent/shellgate-later".into(),
        arg0: "later".into(),
        args: Vec::new(),
        env: env.clone(),
    }];
    let failed = shellgate::sandbox::spawn(&spec, command)
        .unwrap()
        .wait(None)
        .unwrap_err();
    assert!(
        failed.reason.contains("/nonexistent/shellgate-later"),
        "{}",
        failed.reason
    );
    let (finished, out) = run(("/usr/bin/yes", &[]), &[("/usr/bin/head", &["-1"])]);
    assert_eq!(out, "y\n");
    assert_eq!(
        finished.pipeline[0].signal(),
        Some(libc::SIGPIPE),
        "{finished:?}"
    );
    assert!(finished.pipeline[1].success() && finished.status.success());
}

#[test]
fn a_line_in_the_home_cannot_write_the_home() {
    // Even with a dotfiles repository at the home and the line started there.
    let line = "mkdir -p ~/.ssh ~/.local/bin ~/.config/systemd/user ~/.config/powershell; \
                echo k >> ~/.ssh/authorized_keys; echo x > ~/.local/bin/ls; \
                echo x > ~/.config/systemd/user/evil.service; echo x >> ~/.bash_aliases; \
                echo x >> ~/.bash_env; echo x > ~/.config/powershell/Microsoft.PowerShell_profile.ps1; \
                echo x >> ~/.bashrc";
    conformance_with(
        Attack::new(
            "home as cwd",
            &|s| {
                s.git_in(&s.home, &["init", "-q"]);
            },
            &|s, mut run| {
                run.cwd(&s.home)
                    .env("BASH_ENV", s.home.join(".bash_env"))
                    .sh(line)
            },
            &|s, _| {
                let planted = [
                    ".ssh/authorized_keys",
                    ".local/bin/ls",
                    ".config/systemd/user/evil.service",
                    ".bash_aliases",
                    ".bash_env",
                    ".config/powershell/Microsoft.PowerShell_profile.ps1",
                    ".bashrc",
                ];
                planted
                    .iter()
                    .find(|p| s.home.join(p).exists())
                    .map(|p| format!("~/{p} written"))
            },
        ),
        |s| s.sandbox_auto(),
    );
}

#[test]
fn a_home_beneath_a_writable_root_stays_read_only() {
    // A home under /tmp (as in many test setups): /tmp is writable, the home in it is not.
    for who in identities() {
        let home = tempfile::Builder::new()
            .prefix("sg-home-")
            .tempdir_in("/tmp")
            .unwrap();
        let s = Scene::new(who);
        s.chown(home.path());
        let out = s
            .sandbox()
            .env("HOME", home.path())
            .sh("echo x > ~/.bashrc; mkdir -p ~/.config/autostart && echo x > ~/.config/autostart/e.desktop; echo x > \"$HOME-fine\" && echo tmp-ok && rm \"$HOME-fine\"");
        assert!(out.stdout().contains("tmp-ok"), "{}", out.stderr());
        assert!(!home.path().join(".bashrc").exists(), "as {who:?}");
        assert!(!home.path().join(".config").exists(), "as {who:?}");
    }
}

#[test]
fn tmpdir_never_widens_the_writable_set() {
    for who in identities() {
        let s = Scene::new(who);
        // Neither an arbitrary directory, nor the runtime directory, nor /var/tmp itself, nor a
        // shared directory beneath it becomes writable; a private one (the scene's) does.
        let runtime = format!("/run/user/{}", who.uid());
        let made_runtime = !Path::new(&runtime).exists() && geteuid() == 0;
        if made_runtime {
            fs::create_dir_all(&runtime).unwrap();
            s.chown(Path::new(&runtime));
        }
        let shared = tempfile::Builder::new()
            .prefix("shellgate-test-shared-")
            .tempdir_in("/var/tmp")
            .unwrap();
        fs::set_permissions(shared.path(), fs::Permissions::from_mode(0o1777)).unwrap();
        let name = format!(
            "sg-tmpdir-{}",
            s.root.file_name().unwrap().to_string_lossy()
        );
        let script = format!("echo x > \"$TMPDIR/{name}\" && echo wrote; echo ran");
        let dirs = [
            s.outside.to_str().unwrap(),
            runtime.as_str(),
            "/var/tmp",
            shared.path().to_str().unwrap(),
        ];
        for dir in dirs {
            if !Path::new(dir).exists() {
                continue;
            }
            let target = Path::new(dir).join(&name);
            let control = s.bare().env("TMPDIR", dir).sh(&script);
            let writable = target.exists();
            let _ = fs::remove_file(&target);
            let out = s.sandbox().env("TMPDIR", dir).sh(&script);
            assert!(out.stdout().contains("ran"), "{dir}: {}", out.stderr());
            assert!(
                !target.exists(),
                "{dir} became writable as {who:?}: {}",
                out.stdout()
            );
            assert!(
                out.stderr().contains("is not writable in this sandbox"),
                "{dir}: no note: {}",
                out.stderr()
            );
            let _ = fs::remove_file(&target);
            if dir == "/var/tmp" {
                assert!(
                    writable,
                    "control: /var/tmp is not writable here: {}",
                    control.stderr()
                );
            }
        }
        let out = s.sandbox().env("TMPDIR", &s.tmpdir).sh(&script);
        assert!(out.stdout().contains("wrote"), "{}", out.stderr());
        assert!(s.tmpdir.join(&name).exists());
        if made_runtime {
            let _ = fs::remove_dir_all(&runtime);
        }
    }
}

/// Reads another process's memory, maps and binary link, and tries to attach to it: what the line
/// could do to the init, which shares the supervisor's memory (`CLONE_VM`), API keys and all.
/// The probe runs first on a child of its own (where it must succeed, or it proves nothing), then
/// on the pid given.
const PROCESS_PROBE: &str = "\
import ctypes, os, subprocess, sys
def probe(pid):
    out = []
    for name, read in (('mem', lambda: open(f'/proc/{pid}/mem', 'rb').read(0)),
                       ('maps', lambda: open(f'/proc/{pid}/maps').read(64)),
                       ('exe', lambda: os.readlink(f'/proc/{pid}/exe'))):
        try:
            read()
            out.append(name + ' read')
        except OSError:
            out.append(name + ' denied')
    libc = ctypes.CDLL(None, use_errno=True)
    out.append('ptrace attached' if libc.ptrace(16, pid, 0, 0) == 0 else 'ptrace denied')
    return ' '.join(out)
child = subprocess.Popen(['sleep', '10'])
try:
    print('own child:', probe(child.pid))
    if len(sys.argv) > 1:
        print('target:', probe(int(sys.argv[1])))
finally:
    child.kill()
";

#[test]
fn the_line_cannot_reach_the_memory_it_shares_with_the_supervisor() {
    let control = me().bare().py(PROCESS_PROBE, &[]);
    assert_eq!(
        control.stdout().trim(),
        "own child: mem read maps read exe read ptrace attached",
        "control: the probe cannot tell here: {}",
        control.stderr()
    );
    for who in identities() {
        let s = Scene::new(who);
        let out = s.sandbox().py(PROCESS_PROBE, &["1"]);
        assert_eq!(
            out.stdout().trim(),
            "own child: mem read maps read exe read ptrace denied\n\
             target: mem denied maps denied exe denied ptrace denied",
            "as {who:?}: {}",
            out.stderr()
        );
    }
}

/// The init shares the caller's memory, so none of the caller's signal handlers may run in it:
/// it keeps every signal blocked (SIGKILL cannot be). Read from its `/proc/1/status`, which a line
/// may read; the control is a program the line runs (`sed` reading its own status), which blocks
/// nothing. (Not the line's shell: dash blocks every signal for a moment around each `vfork`.)
#[test]
fn the_init_keeps_every_signal_blocked() {
    let blocked = |status: &str, who: &str| -> u64 {
        let line = status
            .lines()
            .find(|l| l.starts_with(&format!("{who} SigBlk:")))
            .unwrap_or_else(|| panic!("no SigBlk for {who} in {status}"));
        u64::from_str_radix(line.rsplit('\t').next().unwrap().trim(), 16).unwrap()
    };
    for who in identities() {
        let out = Scene::new(who)
            .sandbox()
            .sh("sed -n 's/^SigBlk:/init SigBlk:/p' /proc/1/status; \
                 sed -n 's/^SigBlk:/self SigBlk:/p' /proc/self/status")
            .ok();
        let init = blocked(&out, "init");
        for signal in [
            libc::SIGHUP,
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGUSR1,
            libc::SIGCHLD,
        ] {
            assert_ne!(
                init & (1 << (signal - 1)),
                0,
                "signal {signal} not blocked in the init as {who:?}: {out}"
            );
        }
        assert_eq!(
            blocked(&out, "self"),
            0,
            "control: a program of the line blocks nothing, as {who:?}: {out}"
        );
    }
}

/// System V IPC through ctypes: `make` creates a 0600 shared-memory segment and a 0600 message
/// queue and prints their ids; `attack SHM MSQ` writes into the segment and sends into the queue;
/// `look SHM MSQ` prints what the segment holds and the message waiting (`-` for none).
const SYSV_IPC: &str = "\
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
IPC_PRIVATE, IPC_CREAT, IPC_NOWAIT = 0, 0o1000, 0o4000
class Msg(ctypes.Structure):
    _fields_ = [('mtype', ctypes.c_long), ('mtext', ctypes.c_char * 8)]
cmd = sys.argv[1]
if cmd == 'make':
    shm = libc.shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
    msq = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
    print(shm, msq)
    sys.exit(0)
shm, msq = int(sys.argv[2]), int(sys.argv[3])
if cmd == 'attack':
    addr = libc.shmat(shm, None, 0)
    if addr not in (None, ctypes.c_void_p(-1).value):
        ctypes.memmove(addr, b'PWNED', 5)
        print('shm written')
    m = Msg(1, b'PWNED')
    if libc.msgsnd(msq, ctypes.byref(m), 8, IPC_NOWAIT) == 0:
        print('message sent')
else:
    addr = libc.shmat(shm, None, 0)
    data = ctypes.string_at(addr, 5) if addr not in (None, ctypes.c_void_p(-1).value) else b''
    m = Msg()
    got = libc.msgrcv(msq, ctypes.byref(m), 8, 0, IPC_NOWAIT) >= 0
    print(data.decode(errors='replace').strip(chr(0)) or '-', m.mtext.decode() if got else '-')
";

/// A line has a System V IPC namespace of its own: another process's 0600 shared memory and
/// message queue (its own user's) cannot be written or sent into, in either policy.
#[test]
fn system_v_ipc_outside_is_out_of_reach() {
    for policy in ["workspace-write", "read-only"] {
        let ids = std::cell::RefCell::new(String::new());
        let setup = |s: &Scene| {
            let out = s.bare().py(SYSV_IPC, &["make"]).ok();
            *ids.borrow_mut() = out.trim().to_owned();
        };
        let act = |_: &Scene, mut run: Run| {
            let ids = ids.borrow().clone();
            let mut args = vec!["attack"];
            args.extend(ids.split(' '));
            if run.is_sandboxed() {
                run.flags(["--policy", policy]);
            }
            run.py(SYSV_IPC, &args)
        };
        let effect = |s: &Scene, _: &Outcome| {
            let ids = ids.borrow().clone();
            let mut args = vec!["look"];
            args.extend(ids.split(' '));
            let seen = s.bare().py(SYSV_IPC, &args).ok();
            for (flag, id) in [("-m", 0), ("-q", 1)] {
                let _ = Command::new("ipcrm")
                    .args([flag, ids.split(' ').nth(id).unwrap_or("")])
                    .stderr(std::process::Stdio::null())
                    .status();
            }
            (seen.trim() != "- -").then(|| format!("{policy}: the segment and queue hold {seen}"))
        };
        conformance(Attack::new("System V IPC", &setup, &act, &effect));
    }
}

/// The line's /dev holds its devices, its own terminal and a devpts of its own, nothing else:
/// another terminal of the same user (a pty this test opens) can be neither read, written nor
/// reconfigured (its echo turned off), and as root no block device can be read.
#[test]
fn other_terminals_and_block_devices_are_out_of_reach() {
    let pty = std::cell::RefCell::new(None::<(std::fs::File, String)>);
    let setup = |s: &Scene| {
        let mut master = 0;
        let mut slave = 0;
        // SAFETY: openpty writes the two descriptors; no name, termios or window size is passed.
        let made = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(made, 0);
        let name = fs::read_link(format!("/proc/self/fd/{slave}")).unwrap();
        s.chown(&name);
        // SAFETY: both descriptors were just opened here; the master is owned by the File.
        let master = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(master) };
        // The slave stays open (leaked for the test's life) so the terminal exists.
        *pty.borrow_mut() = Some((master, name.display().to_string()));
    };
    let act = |_: &Scene, mut run: Run| {
        let name = pty.borrow().as_ref().unwrap().1.clone();
        run.sh(&format!(
            "stty -F {name} -echo 2>/dev/null && echo reconfigured; \
             echo INJECTED > {name} 2>/dev/null && echo written"
        ))
    };
    let effect = |_: &Scene, out: &Outcome| {
        let borrowed = pty.borrow();
        let (master, name) = borrowed.as_ref().unwrap();
        // SAFETY: tcgetattr writes into `t` only.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        let slave = fs::OpenOptions::new().read(true).open(name).unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: as above, on a descriptor this test holds.
        unsafe { libc::tcgetattr(slave.as_raw_fd(), &mut t) };
        let echo_off = t.c_lflag & libc::ECHO == 0;
        let mut seen = [0u8; 64];
        // SAFETY: a non-blocking read into `seen` from the master this test holds.
        let n = unsafe {
            let fd = master.as_raw_fd();
            libc::fcntl(fd, libc::F_SETFL, libc::O_NONBLOCK);
            libc::read(fd, seen.as_mut_ptr().cast(), seen.len())
        };
        let injected = n > 0 && String::from_utf8_lossy(&seen[..n as usize]).contains("INJECTED");
        (echo_off || injected || out.stdout().contains("written"))
            .then(|| format!("echo off: {echo_off}, text reached it: {injected}"))
    };
    conformance(Attack::new("another terminal", &setup, &act, &effect));

    // Reading the terminal's input: what the test types into the master must not reach the line.
    let s = me();
    setup(&s);
    let name = pty.borrow().as_ref().unwrap().1.clone();
    let out = s
        .sandbox()
        .sh(&format!("cat {name} 2>&1 | head -c 200; ls /dev"))
        .ok();
    assert!(out.contains("No such file"), "{out}");
    let listed: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        listed,
        [
            "fd", "full", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout",
            "tty", "urandom", "zero"
        ],
        "{out}"
    );

    if geteuid() == 0 {
        let root = Command::new("findmnt")
            .args(["-n", "-o", "SOURCE", "/"])
            .output()
            .unwrap();
        let device = String::from_utf8_lossy(&root.stdout).trim().to_owned();
        // Where root may read it outside (not every machine lets even root: then the listing
        // above, with no block device in it, is what shows it).
        let read = format!("head -c 512 {device} 2>/dev/null | wc -c");
        if device.starts_with("/dev/") && me().bare().sh(&read).ok().trim() == "512" {
            let out = me().sandbox().sh(&read);
            assert_eq!(
                out.stdout().trim(),
                "0",
                "{device} was read: {}",
                out.stderr()
            );
        }
    }
}

/// Makes each system call of a list and prints, per call, its name, result and errno. The list is
/// JSON on stdin: `[name, number, [args…], expected errno]`; an argument `"P"` is the address of
/// a path that does not exist (`/nonexistent-shellgate-probe/x`).
const SYSCALL_PROBE: &str = "\
import ctypes, json, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
path = ctypes.create_string_buffer(b'/nonexistent-shellgate-probe/x')
for name, nr, args, expected in json.load(sys.stdin):
    values = [ctypes.c_long(ctypes.addressof(path) if a == 'P' else a) for a in args]
    ctypes.set_errno(0)
    rc = libc.syscall(ctypes.c_long(nr), *values)
    print(name, rc, ctypes.get_errno() if rc == -1 else 0)
";

/// An argument of a probed call: a number, or the address of a path that does not exist.
#[derive(Clone, Copy)]
enum ProbeArg {
    N(i64),
    Path,
}

/// Arguments for each refused call that the kernel itself would reject harmlessly if the filter
/// let the call through (a bad descriptor, a null pointer, an invalid flag, a process that does
/// not exist), so the probe is safe to run outside the sandbox too, as root.
fn probe_defaults(sys: shellgate::sandbox::seccomp::Sys) -> Option<Vec<ProbeArg>> {
    use ProbeArg::{N, Path};
    use shellgate::sandbox::seccomp::Sys::*;
    let none = 0x7fff_ffff; // a pid that does not exist
    let fd = -1;
    Some(match sys {
        Socket => vec![N(libc::AF_INET.into()), N(libc::SOCK_STREAM.into()), N(0)],
        Socketpair => vec![
            N(libc::AF_UNIX.into()),
            N(libc::SOCK_STREAM.into()),
            N(0),
            N(0),
        ],
        Connect | Accept | Accept4 | Bind | Listen | Getpeername | Getsockname | Shutdown
        | Sendto | Sendmsg | Sendmmsg | Recvmmsg | Getsockopt | Setsockopt | IoUringEnter
        | IoUringRegister | Fsconfig | Fsmount | Fspick | OpenTree | OpenTreeAttr | MoveMount
        | MountSetattr | Setns | FinitModule | ProcessMadvise | ProcessMrelease | PidfdGetfd
        | Fchmod | Openat2 | Bpf | Keyctl => vec![N(fd), N(0), N(0), N(0), N(0), N(0)],
        Ptrace => vec![N(3), N(none), N(0), N(0)],
        ProcessVmReadv | ProcessVmWritev | MigratePages | MovePages => {
            vec![N(none), N(0), N(0), N(0), N(0), N(0)]
        }
        IoUringSetup | PerfEventOpen | AddKey | RequestKey | Mount | Umount2 | PivotRoot
        | Fsopen | InitModule | DeleteModule | Reboot | Swapon | Swapoff | Clone3 => {
            vec![N(0), N(0), N(0), N(0), N(0), N(0)]
        }
        Unshare => vec![N(libc::CLONE_VFORK.into())],
        Clone => vec![N(libc::CLONE_THREAD.into()), N(0), N(0), N(0), N(0)],
        KexecLoad => vec![N(0), N(0), N(0), N(0xffff_0000)],
        KexecFileLoad => vec![N(fd), N(fd), N(0), N(0), N(0xffff_ffff)],
        Ioctl => vec![N(fd), N(0), N(0)],
        Userfaultfd => vec![N(-1)],
        Prlimit64 => vec![N(1), N(libc::RLIMIT_FSIZE.into()), N(0), N(0)],
        Setpriority | IoprioSet => vec![N(99), N(0), N(0)],
        SchedSetaffinity | SchedSetscheduler | SchedSetparam | SchedSetattr => {
            vec![N(1), N(-1), N(0)]
        }
        Syslog => vec![N(10), N(0), N(0)],
        Chmod | Creat => vec![Path, N(0o644)],
        Fchmodat | Fchmodat2 => vec![N(libc::AT_FDCWD.into()), Path, N(0o644), N(0)],
        Open => vec![Path, N((libc::O_CREAT | libc::O_WRONLY).into()), N(0o644)],
        Openat => vec![
            N(libc::AT_FDCWD.into()),
            Path,
            N((libc::O_CREAT | libc::O_WRONLY).into()),
            N(0o644),
        ],
        Mknod => vec![Path, N(libc::S_IFREG.into()), N(0)],
        Mknodat => vec![
            N(libc::AT_FDCWD.into()),
            Path,
            N(libc::S_IFREG.into()),
            N(0),
        ],
        _ => return None,
    })
}

/// Every call the line's filter refuses — every rule of its table, each argument check of a rule
/// made true in turn, the calls that answer ENOSYS and the x32 range — is made for real inside a
/// sandbox, as each identity, and must fail with the table's errno. The list comes from the rule
/// table itself, so a rule cannot be added without its probe. The control runs the same calls
/// outside, where the kernel answers otherwise (a bad descriptor, a missing file, …) for most of
/// them: those the probe can tell apart.
#[test]
fn every_call_the_filter_refuses_is_refused_inside() {
    use shellgate::sandbox::seccomp::{self, ArgCheck, Deny, Sockets, Table, Verdict};
    let Some(arch) = seccomp::Arch::native() else {
        return;
    };
    let sockets = Sockets::default();
    let table = Table::new(arch, sockets, false);
    let mut probes: Vec<(String, i64, Vec<ProbeArg>, i32)> = Vec::new();
    let mut add = |name: String, nr: i64, args: Vec<ProbeArg>| {
        let mut values = [0u64; 6];
        for (slot, arg) in values.iter_mut().zip(&args) {
            *slot = match arg {
                ProbeArg::N(n) => *n as u64,
                ProbeArg::Path => 1,
            };
        }
        if let Verdict::Errno(errno) = table.verdict(nr, &values) {
            probes.push((name, nr, args, errno));
        }
    };
    for (sys, deny) in seccomp::rules(sockets) {
        let nr = sys.number(arch);
        if nr < 0 {
            continue;
        }
        let base = probe_defaults(sys).unwrap_or_else(|| panic!("no probe for {sys:?}: add one"));
        let checks: Vec<ArgCheck> = match &deny {
            Deny::Always | Deny::Reported => vec![ArgCheck::Any],
            Deny::When(checks) => checks.clone(),
            Deny::Checked(checks) => checks.iter().map(|(c, _)| *c).collect(),
        };
        for check in checks {
            let set = |arg: u8, f: &dyn Fn(i64) -> i64| {
                let mut args = base.clone();
                while args.len() <= usize::from(arg) {
                    args.push(ProbeArg::N(0));
                }
                let old = match args[usize::from(arg)] {
                    ProbeArg::N(n) => n,
                    ProbeArg::Path => 1,
                };
                args[usize::from(arg)] = ProbeArg::N(f(old));
                args
            };
            let variants: Vec<Vec<ProbeArg>> = match check {
                ArgCheck::Any => vec![base.clone()],
                ArgCheck::Equals { arg, value } => vec![set(arg, &|_| i64::from(value))],
                ArgCheck::NotEquals { arg, value } => {
                    vec![set(arg, &|old| {
                        if old as u32 == value {
                            i64::from(value ^ 1)
                        } else {
                            old
                        }
                    })]
                }
                ArgCheck::AnyBit { arg, mask } => (0..32)
                    .filter(|b| mask & (1 << b) != 0)
                    .map(|b| set(arg, &move |old| old | (1i64 << b)))
                    .collect(),
                ArgCheck::NonZero { arg } => vec![set(arg, &|_| 1)],
                ArgCheck::MaskedEquals { arg, mask, value } => {
                    vec![set(arg, &|old| (old & !i64::from(mask)) | i64::from(value))]
                }
                ArgCheck::MaskedNotEquals { arg, mask, value } => vec![set(arg, &|old| {
                    (old & !i64::from(mask)) | (i64::from(value.wrapping_add(1)) & i64::from(mask))
                })],
                ArgCheck::NotIn { arg, values } => {
                    let outside = [1u32, 3, 16].into_iter().find(|v| !values.contains(v));
                    vec![set(arg, &|old| outside.map_or(old, i64::from))]
                }
            };
            for args in variants {
                add(format!("{sys:?}"), nr, args);
            }
        }
    }
    for sys in [seccomp::Sys::Clone3, seccomp::Sys::Openat2] {
        add(
            format!("{sys:?}"),
            sys.number(arch),
            probe_defaults(sys).unwrap(),
        );
    }
    if arch == seccomp::Arch::X86_64 {
        add(
            "X32Getpid".into(),
            0x4000_0000 | libc::SYS_getpid,
            Vec::new(),
        );
    }
    assert!(probes.len() > 80, "only {} probes", probes.len());
    let list = format!(
        "[{}]",
        probes
            .iter()
            .map(|(name, nr, args, errno)| {
                let args: Vec<String> = args
                    .iter()
                    .map(|a| match a {
                        ProbeArg::N(n) => n.to_string(),
                        ProbeArg::Path => "\"P\"".to_owned(),
                    })
                    .collect();
                format!("[\"{name}\", {nr}, [{}], {errno}]", args.join(", "))
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    let results = |out: &Outcome| -> Vec<(i64, i32)> {
        let text = out.ok();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), probes.len(), "{text}");
        lines
            .iter()
            .map(|l| {
                let mut words = l.split(' ').skip(1);
                let mut number = || words.next().and_then(|w| w.parse().ok());
                let rc = number().unwrap_or_else(|| panic!("unreadable: {l}"));
                let errno = number().unwrap_or_else(|| panic!("unreadable: {l}"));
                (rc, errno as i32)
            })
            .collect()
    };
    let control = results(&me().bare().stdin(list.as_bytes()).py(SYSCALL_PROBE, &[]));
    let told_apart: Vec<bool> = control
        .iter()
        .zip(&probes)
        .map(|((rc, errno), (_, _, _, want))| *rc != -1 || errno != want)
        .collect();
    for who in identities() {
        let out = Scene::new(who)
            .sandbox()
            .stdin(list.as_bytes())
            .py(SYSCALL_PROBE, &[]);
        for ((rc, errno), (name, nr, args, want)) in results(&out).iter().zip(&probes) {
            let args: Vec<String> = args
                .iter()
                .map(|a| match a {
                    ProbeArg::N(n) => format!("{n:#x}"),
                    ProbeArg::Path => "path".into(),
                })
                .collect();
            assert!(
                *rc == -1 && errno == want,
                "as {who:?}: {name} (nr {nr}, {args:?}) gave {rc} errno {errno}, not errno {want}"
            );
        }
    }
    let apart = told_apart.iter().filter(|t| **t).count();
    eprintln!(
        "{} calls refused inside; outside, {apart} of them answered otherwise",
        probes.len()
    );
    assert!(
        apart * 2 > probes.len(),
        "control: outside, only {apart} of {} calls answered otherwise",
        probes.len()
    );
}

/// Writes `[sandbox.limits]` into the scene's user config (`XDG_CONFIG_HOME` is `root/config`).
fn limits(s: &Scene, table: &str) {
    s.write(
        &s.root.join("config/shellgate/config.toml"),
        &format!("[sandbox.limits]\n{table}\n"),
    );
}

/// A fork bomb stays below the line's process limit: with `processes = 64`, a line that starts
/// 300 sleeping processes has at most 64 alive (plus its init), as each identity; the control
/// starts them all.
#[test]
fn a_line_cannot_start_more_processes_than_its_limit() {
    let bomb = "\
import os, time
kids = []
for _ in range(300):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
alive = sum(1 for d in os.listdir('/proc') if d.isdigit())
print(len(kids), alive)
for kid in kids:
    os.kill(kid, 9)
";
    let control = me().bare().py(bomb, &[]).ok();
    assert!(control.starts_with("300 "), "control: {control}");
    for who in identities() {
        let s = Scene::new(who);
        limits(&s, "processes = 64");
        let out = s.sandbox().py(bomb, &[]).ok();
        let counts: Vec<u32> = out.split_whitespace().map(|n| n.parse().unwrap()).collect();
        // The program and its children: 64 at most; /proc shows the init besides.
        assert!(counts[0] < 64, "as {who:?}: started {}", counts[0]);
        assert!(counts[1] <= 65, "as {who:?}: {} alive", counts[1]);
    }
}

/// A file past the size limit ends the line with `SANDBOX_LIMIT` naming it, and stays at the
/// limit; the control writes it whole.
#[test]
fn a_file_past_the_size_limit_ends_the_line() {
    let write = "head -c 3000000 /dev/zero > big";
    let s = me();
    s.bare().sh(write).ok();
    assert_eq!(fs::metadata(s.ws.join("big")).unwrap().len(), 3_000_000);
    for who in identities() {
        let s = Scene::new(who);
        limits(&s, "file_size = \"1M\"");
        let out = s.sandbox().sh(write);
        let line = out.refused_with(218, "SANDBOX_LIMIT");
        assert!(line.contains("1048576 bytes"), "{line}");
        assert!(fs::metadata(s.ws.join("big")).unwrap().len() <= 1 << 20);
    }
}

/// A process cannot take more memory than its limit: a 300 MiB allocation fails under
/// `memory = "100M"` and succeeds outside.
#[test]
fn a_process_cannot_take_more_memory_than_its_limit() {
    let grab = "x = bytearray(300 * 1024 * 1024); print('got it')";
    assert_eq!(me().bare().py(grab, &[]).ok().trim(), "got it", "control");
    for who in identities() {
        let s = Scene::new(who);
        limits(&s, "memory = \"100M\"");
        let out = s.sandbox().py(grab, &[]);
        assert!(
            out.stderr().contains("MemoryError"),
            "as {who:?}: {}",
            out.stderr()
        );
        assert!(!out.stdout().contains("got it"));
    }
}

#[test]
fn processes_outside_cannot_be_touched() {
    // prlimit (RLIMIT_FSIZE would kill it), renice, CPU affinity, I/O priority, signals.
    let attacks: [(&str, &str); 5] = [
        ("prlimit", "prlimit --pid PID --fsize=1"),
        ("renice", "renice -n 15 -p PID"),
        ("affinity", "taskset -p 1 PID"),
        ("ioprio", "ionice -c 3 -p PID"),
        ("signal", "kill -STOP PID"),
    ];
    for (name, line) in attacks {
        let bystander = std::cell::RefCell::new(None::<Bystander>);
        let before = std::cell::RefCell::new(String::new());
        let snapshot = |b: &mut Bystander| {
            let status = b.proc_text("status");
            let affinity = status
                .lines()
                .find(|l| l.starts_with("Cpus_allowed_list"))
                .unwrap_or("")
                .to_string();
            let state = status
                .lines()
                .find(|l| l.starts_with("State"))
                .unwrap_or("")
                .to_string();
            let limits = b.proc_text("limits");
            let fsize = limits
                .lines()
                .find(|l| l.starts_with("Max file size"))
                .unwrap_or("")
                .to_string();
            let stat = b.proc_text("stat");
            let nice = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .nth(16)
                .unwrap_or("")
                .to_string();
            let ioprio = Command::new("ionice")
                .args(["-p", &b.pid().to_string()])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            format!("{affinity}|{state}|{fsize}|nice {nice}|{ioprio}")
        };
        if name == "affinity" && std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
            continue;
        }
        conformance(Attack::new(
            name,
            &|s| {
                let mut b = s.bystander();
                std::thread::sleep(Duration::from_millis(50));
                *before.borrow_mut() = snapshot(&mut b);
                *bystander.borrow_mut() = Some(b);
            },
            &|_, mut run| {
                let pid = bystander.borrow().as_ref().unwrap().pid().to_string();
                run.sh(&line.replace("PID", &pid))
            },
            &|_, _| {
                let mut guard = bystander.borrow_mut();
                let b = guard.as_mut().unwrap();
                let now = snapshot(b);
                let was = before.borrow().clone();
                (now != was).then(|| format!("{was} -> {now}"))
            },
        ));
    }
}

#[test]
fn userfaultfd_is_refused() {
    conformance(Attack::new(
        "userfaultfd",
        &|_| {},
        &|_, mut run| {
            run.py(
                "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nnr = 323 if os.uname().machine == 'x86_64' else 282\nfd = libc.syscall(ctypes.c_long(nr), 1)\nprint('fd' if fd >= 0 else 'errno %d' % ctypes.get_errno())",
                &[],
            )
        },
        &|_, out| (out.stdout().trim() == "fd").then(|| "got a userfaultfd".into()),
    ));
}

#[test]
fn unix_sockets_outside_are_out_of_reach() {
    use std::os::unix::net::{UnixDatagram, UnixListener};
    // A datagram to an outside socket (with a descriptor attached), a connection to an outside
    // listener (like tmux's or the session bus's), and the same on an abstract name.
    let send = "\
import socket, sys, array
path = sys.argv[1]
def attempt(kind, how):
    try:
        how()
        print(kind, 'sent')
    except OSError as e:
        print(kind, 'denied', e.errno)
attempt('dgram', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b'hi', path + '/dgram'))
def fds():
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendmsg([b'fd'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [0]))], 0, path + '/dgram')
attempt('scm_rights', fds)
def stream(address):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(address)
    s.sendall(b'hi')
attempt('stream', lambda: stream(path + '/stream'))
attempt('abstract', lambda: stream('\\0' + sys.argv[2]))
";
    let sockets = std::cell::RefCell::new(None::<(UnixDatagram, UnixListener, UnixListener)>);
    conformance(Attack::new(
        "unix sockets",
        &|s| {
            let d = UnixDatagram::bind(s.outside.join("dgram")).unwrap();
            d.set_nonblocking(true).unwrap();
            let l = UnixListener::bind(s.outside.join("stream")).unwrap();
            l.set_nonblocking(true).unwrap();
            use std::os::linux::net::SocketAddrExt;
            let name = format!("shellgate-test-{}-{}", std::process::id(), s.root.display());
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
            let a = UnixListener::bind_addr(&addr).unwrap();
            a.set_nonblocking(true).unwrap();
            s.chown(&s.outside);
            *sockets.borrow_mut() = Some((d, l, a));
        },
        &|s, mut run| {
            let name = format!("shellgate-test-{}-{}", std::process::id(), s.root.display());
            run.py(send, &[s.outside.to_str().unwrap(), &name])
        },
        &|_, _| {
            let guard = sockets.borrow();
            let (d, l, a) = guard.as_ref().unwrap();
            let mut buf = [0u8; 16];
            if d.recv(&mut buf).is_ok() {
                return Some("a datagram arrived".into());
            }
            if l.accept().is_ok() {
                return Some("a stream connection arrived".into());
            }
            a.accept()
                .is_ok()
                .then(|| "an abstract connection arrived".into())
        },
    ));
}

#[test]
fn processes_a_line_leaves_running_end_with_it() {
    conformance(Attack::new(
        "leftover process",
        &|_| {},
        &|s, mut run| {
            let out = run.sh(&format!(
                "(while true; do date +%s%N > {}/beat; sleep 0.05; done) >/dev/null 2>&1 & exit 0",
                s.ws.display()
            ));
            std::thread::sleep(Duration::from_millis(300));
            out
        },
        &|s, _| {
            // Alive: the loop writes its file again after the line ended. Waited for rather
            // than timed (a loaded machine can take long to start it in the control): up to
            // 5 s for a change, which a contained run pays in full.
            let beat = s.ws.join("beat");
            let first = read(&beat);
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            let mut alive = false;
            while !alive && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
                let now = read(&beat);
                alive = now.is_some() && now != first;
            }
            // Whatever was seen, nothing of the attack may outlive the test.
            let _ = Command::new("pkill")
                .args(["-f", &format!("{}/beat", s.ws.display())])
                .status();
            alive.then(|| "the background loop still runs".into())
        },
    ));
}

// ---------------------------------------------------------------------------------------------
// Git state that git outside executes later.

/// `git status` outside, as the scene's user, then whether the victim file exists.
fn git_status_ran_code(s: &Scene) -> Option<String> {
    let _ = s.git_output(&s.ws, &["status", "--porcelain"]);
    s.victim.exists().then(|| {
        format!(
            "git status outside ran planted code ({} exists)",
            s.victim.display()
        )
    })
}

fn fsmonitor(s: &Scene) -> String {
    format!("touch {}; false", s.victim.display())
}

/// A line that writes a config file setting [`fsmonitor`] at `file`.
fn write_fsmonitor_config(s: &Scene, file: &str) -> String {
    format!(
        "printf '[core]\\n\\tfsmonitor = \"{}\"\\n' > {file}",
        fsmonitor(s)
    )
}

#[test]
fn planted_commondir_runs_nothing_in_git_outside() {
    conformance(Attack::new(
        "commondir",
        &|s| {
            s.git_repo();
            let evil = s.root.join("evil.git");
            s.git_in(&s.root, &["init", "-q", "--bare", evil.to_str().unwrap()]);
            s.git_in(&evil, &["config", "core.fsmonitor", &fsmonitor(s)]);
            s.git_in(&evil, &["config", "core.bare", "false"]);
            s.chown(&evil);
        },
        &|s, mut run| {
            run.sh(&format!(
                "echo {}/evil.git > .git/commondir",
                s.root.display()
            ))
        },
        &|s, _| git_status_ran_code(s),
    ));
}

#[test]
fn planted_config_worktree_runs_nothing_in_git_outside() {
    conformance(Attack::new(
        "config.worktree",
        &|s| {
            s.git_repo();
            s.git_in(&s.ws, &["config", "extensions.worktreeConfig", "true"]);
        },
        &|s, mut run| run.sh(&write_fsmonitor_config(s, ".git/config.worktree")),
        &|s, _| git_status_ran_code(s),
    ));
}

/// A workspace that is not a repository yet: a `.git` the line creates there (with a hook and a
/// `core.fsmonitor`) is moved aside, so the next `git status` outside runs nothing.
#[test]
fn a_repository_created_in_a_plain_workspace_runs_nothing_in_git_outside() {
    conformance(Attack::new(
        "git init in a plain workspace",
        &|_| {},
        &|s, mut run| {
            run.sh(&format!(
                "git init -q . && git config core.fsmonitor '{}'",
                fsmonitor(s)
            ))
        },
        &|s, _| git_status_ran_code(s),
    ));
}

#[test]
fn a_nested_repository_staged_as_a_gitlink_runs_nothing_in_git_outside() {
    conformance(Attack::new(
        "gitlink",
        &|s| s.git_repo(),
        &|s, mut run| {
            run.sh(&format!(
                "git init -q sub && git -C sub commit -q --allow-empty -m x && \
                 git -C sub config core.fsmonitor '{}' && \
                 git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub",
                fsmonitor(s)
            ))
        },
        &|s, _| git_status_ran_code(s),
    ));
}

/// A nested repository staged the way `git add <repo>` stages one (a gitlink), outside.
fn embedded_repository(s: &Scene, name: &str) {
    s.git_repo();
    let sub = s.ws.join(name);
    fs::create_dir_all(&sub).unwrap();
    s.chown(&sub);
    s.git_in(&sub, &["init", "-q", "-b", "main"]);
    s.write(&sub.join("f"), "f\n");
    s.git_in(&sub, &["add", "f"]);
    s.git_in(&sub, &["commit", "-qm", "sub"]);
    s.git_in(&s.ws, &["add", name]);
    s.git_in(&s.ws, &["commit", "-qm", "embed"]);
}

/// The gitlinked directory renamed away and a new repository made in its place.
#[test]
fn a_gitlinked_repository_swapped_for_a_new_one_runs_nothing_in_git_outside() {
    conformance(Attack::new(
        "gitlinked repository swapped",
        &|s| embedded_repository(s, "sub"),
        &|s, mut run| {
            run.sh(&format!(
                "mv sub sub-old && git init -q sub && git -C sub config core.fsmonitor '{}'",
                fsmonitor(s)
            ))
        },
        &|s, _| git_status_ran_code(s),
    ));
}

/// A gitlink staged into a split index (`git update-index --split-index`), whose entries live in
/// a shared index the old guard never read.
#[test]
fn a_gitlink_staged_through_a_split_index_runs_nothing_in_git_outside() {
    conformance(Attack::new(
        "gitlink in a split index",
        &|s| {
            s.git_repo();
            s.git_in(&s.ws, &["update-index", "--split-index"]);
        },
        &|s, mut run| {
            run.sh(&format!(
                "git init -q sub && git -C sub commit -q --allow-empty -m x && \
                 git -C sub config core.fsmonitor '{}' && \
                 git update-index --split-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub",
                fsmonitor(s)
            ))
        },
        &|s, _| git_status_ran_code(s),
    ));
}

/// A repository made in one line and staged as a gitlink in the next.
#[test]
fn a_repository_made_in_one_line_and_staged_in_the_next_runs_nothing_in_git_outside() {
    conformance(Attack::new(
        "repository staged a line later",
        &|s| s.git_repo(),
        &|s, mut run| {
            let second = if run.is_sandboxed() {
                s.sandbox()
            } else {
                s.bare()
            };
            run.sh(&format!(
                "git init -q sub && git -C sub commit -q --allow-empty -m x && \
                 git -C sub config core.fsmonitor '{}'",
                fsmonitor(s)
            ));
            // The next line starts in a later second of the clock (the old guard compared whole
            // seconds): waited for by watching the clock, not for a fixed time.
            let second_of = || {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs()
            };
            let made = second_of();
            while second_of() == made {
                std::thread::sleep(Duration::from_millis(20));
            }
            let mut second = second;
            second.sh("git update-index --add --cacheinfo 160000,$(git -C sub rev-parse HEAD),sub")
        },
        &|s, _| git_status_ran_code(s),
    ));
}

/// `core.hooksPath` in the worktree (husky's `.husky`): a hook the line writes there would run at
/// the next `git commit` outside.
#[test]
fn a_hook_written_where_core_hooks_path_points_runs_nothing_in_git_outside() {
    conformance(Attack::new(
        "core.hooksPath in the worktree",
        &|s| {
            s.git_repo();
            s.git_in(&s.ws, &["config", "core.hooksPath", ".husky"]);
            fs::create_dir_all(s.ws.join(".husky")).unwrap();
            s.chown(&s.ws.join(".husky"));
        },
        &|s, mut run| {
            run.sh(&format!(
                "printf '#!/bin/sh\\ntouch {}\\n' > .husky/pre-commit && chmod +x .husky/pre-commit",
                s.victim.display()
            ))
        },
        &|s, _| {
            let _ = s.git_output(&s.ws, &["commit", "-q", "--allow-empty", "-m", "x"]);
            s.victim
                .exists()
                .then(|| "git commit outside ran a hook the line wrote".into())
        },
    ));
}

/// `include.path` naming a file in the worktree: a line that writes it sets `core.fsmonitor` for
/// the next `git status` outside.
#[test]
fn an_included_config_file_in_the_worktree_runs_nothing_in_git_outside() {
    conformance(Attack::new(
        "include.path in the worktree",
        &|s| {
            s.git_repo();
            s.git_in(&s.ws, &["config", "include.path", "../.gitconfig-local"]);
        },
        &|s, mut run| run.sh(&write_fsmonitor_config(s, ".gitconfig-local")),
        &|s, _| git_status_ran_code(s),
    ));
}

/// A planted `commondir` in a `.git` the line then makes read-only, so that moving it aside fails
/// for an owner without privileges (root is not stopped by the mode).
#[test]
fn a_planted_commondir_in_a_read_only_git_dir_runs_nothing_in_git_outside() {
    conformance(
        Attack::new(
            "commondir, then .git read-only",
            &|s| {
                s.git_repo();
                let evil = s.root.join("evil.git");
                s.git_in(&s.root, &["init", "-q", "--bare", evil.to_str().unwrap()]);
                s.git_in(&evil, &["config", "core.fsmonitor", &fsmonitor(s)]);
                s.git_in(&evil, &["config", "core.bare", "false"]);
                s.chown(&evil);
            },
            &|s, mut run| {
                run.sh(&format!(
                    "echo {}/evil.git > .git/commondir; chmod a-w .git",
                    s.root.display()
                ))
            },
            &|s, _| {
                let ran = git_status_ran_code(s);
                let _ = fs::set_permissions(s.ws.join(".git"), fs::Permissions::from_mode(0o755));
                ran
            },
        )
        .only(|who| !who.is_root()),
    );
}

/// A superproject holding an embedded repository whose index has stale stat data: `git status`
/// in the superproject refreshes it (git runs in the embedded repository and rewrites its index).
/// That is ordinary work: it must run, and nothing may be moved aside.
#[test]
fn git_status_in_a_superproject_with_an_embedded_repository_works() {
    for who in identities() {
        let s = Scene::new(who);
        embedded_repository(&s, "emb");
        // Stale stat data in both indexes.
        s.write(&s.ws.join("emb/f"), "f\n");
        s.write(&s.ws.join("README"), "hello\n");
        let out = s
            .sandbox()
            .sh("git status --porcelain; git -C emb status --porcelain; echo done");
        assert_eq!(out.code(), Some(0), "as {who:?}: {}", out.stderr());
        assert!(out.stdout().contains("done"), "{}", out.stderr());
        assert!(s.ws.join("emb/.git/config").exists());
        assert!(!out.stderr().contains("quarantine"), "{}", out.stderr());
    }
}

/// One step of git plumbing a line may take, for the property test below.
#[derive(Debug, Clone)]
enum GitStep {
    /// `git init` a repository at this place, with a `core.fsmonitor` that plants the victim.
    Init(&'static str),
    /// Stage the repository at this place as a gitlink.
    StageGitlink(&'static str),
    /// Switch the index to a split index, or back.
    SplitIndex(bool),
    /// Write hooks into the repository at this place (its `.git/hooks`).
    Hook(&'static str),
    /// Write a hook where `core.hooksPath` points (`.husky`, when the person configured it).
    HuskyHook,
    /// Write the file the workspace's config includes (when the person configured it).
    IncludedConfig,
    /// Set `core.hooksPath` and an include in the repository at this place.
    Configure(&'static str),
    /// Swap two places.
    Swap(&'static str, &'static str),
}

const PLACES: [&str; 4] = ["sub", "a/b", "sub2", "."];

fn git_step() -> impl proptest::strategy::Strategy<Value = GitStep> {
    use proptest::prelude::*;
    let place = proptest::sample::select(&PLACES[..]);
    prop_oneof![
        place.clone().prop_map(GitStep::Init),
        place.clone().prop_map(GitStep::StageGitlink),
        any::<bool>().prop_map(GitStep::SplitIndex),
        place.clone().prop_map(GitStep::Hook),
        Just(GitStep::HuskyHook),
        Just(GitStep::IncludedConfig),
        place.clone().prop_map(GitStep::Configure),
        (place.clone(), place).prop_map(|(a, b)| GitStep::Swap(a, b)),
    ]
}

/// The shell line for a step; `plant` is what the planted code runs.
fn git_step_line(step: &GitStep, plant: &str) -> String {
    let hook = format!("#!/bin/sh\\n{plant}\\n");
    match step {
        GitStep::Init(at) => format!(
            "mkdir -p {at} && git init -q {at} && git -C {at} commit -q --allow-empty -m x; \
             git -C {at} config core.fsmonitor '{plant}; false'"
        ),
        GitStep::StageGitlink(at) => {
            format!("git update-index --add --cacheinfo 160000,$(git -C {at} rev-parse HEAD),{at}")
        }
        GitStep::SplitIndex(on) => {
            let flag = if *on {
                "--split-index"
            } else {
                "--no-split-index"
            };
            format!("git update-index {flag}")
        }
        GitStep::Hook(at) => format!(
            "for h in pre-commit post-commit post-checkout; do printf '{hook}' > {at}/.git/hooks/$h; \
             chmod +x {at}/.git/hooks/$h; done"
        ),
        GitStep::HuskyHook => format!(
            "mkdir -p .husky && printf '{hook}' > .husky/pre-commit && chmod +x .husky/pre-commit"
        ),
        GitStep::IncludedConfig => {
            format!("printf '[core]\\n\\tfsmonitor = \"{plant}; false\"\\n' > .gitconfig-local")
        }
        GitStep::Configure(at) => format!(
            "git -C {at} config core.hooksPath .husky; \
             git -C {at} config include.path ../.gitconfig-local"
        ),
        GitStep::Swap(a, b) => format!("mv {a} {b}.moved; mv {b} {a}; mv {b}.moved {b}"),
    }
}

/// A scene for the git property: a repository, and — as a person might have set up outside —
/// `core.hooksPath` in the worktree (husky) and an include of a worktree file.
fn git_scene(husky: bool, include: bool) -> Scene {
    let s = me();
    s.git_repo();
    if husky {
        s.git_in(&s.ws, &["config", "core.hooksPath", ".husky"]);
    }
    if include {
        s.git_in(&s.ws, &["config", "include.path", "../.gitconfig-local"]);
    }
    s
}

/// `git status` and `git commit` outside, in the workspace: whether the victim appeared.
fn git_outside_ran_code(s: &Scene) -> bool {
    let _ = s.git_output(&s.ws, &["status", "--porcelain"]);
    let _ = s.git_output(&s.ws, &["commit", "-q", "--allow-empty", "-m", "after"]);
    s.victim.exists()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..proptest::prelude::ProptestConfig::default()
    })]

    /// Random sequences of git plumbing, each step a line in the sandbox (repositories made,
    /// staged as gitlinks with and without a split index, hooks written in `.git/hooks` and where
    /// `core.hooksPath` points, included config written, configuration set, directories
    /// swapped), in a workspace a person may have given husky's `core.hooksPath` and an include:
    /// afterwards a plain `git status` and `git commit` outside, in the workspace, run nothing a
    /// line planted. (The control, `git_plumbing_outside_does_plant`, shows the same steps
    /// outside do plant code; with the guard this replaced, 48 cases found an escape.)
    #[test]
    fn no_sequence_of_git_plumbing_in_lines_runs_code_in_git_outside(
        husky in proptest::prelude::any::<bool>(),
        include in proptest::prelude::any::<bool>(),
        steps in proptest::collection::vec(git_step(), 1..6),
    ) {
        let s = git_scene(husky, include);
        let plant = format!("touch {}", s.victim.display());
        for step in &steps {
            let _ = s.sandbox().sh(&git_step_line(step, &plant));
        }
        proptest::prop_assert!(
            !git_outside_ran_code(&s),
            "git outside ran what a line planted: husky {husky}, include {include}, {steps:?}"
        );
    }
}

/// The control of the property above: the same steps outside the sandbox do plant code that a
/// plain `git status` or `git commit` in the workspace runs.
#[test]
fn git_plumbing_outside_does_plant() {
    let controls: [(bool, bool, &[GitStep]); 6] = [
        (
            false,
            false,
            &[GitStep::Init("sub"), GitStep::StageGitlink("sub")],
        ),
        (
            false,
            false,
            &[
                GitStep::SplitIndex(true),
                GitStep::Init("a/b"),
                GitStep::StageGitlink("a/b"),
            ],
        ),
        (false, false, &[GitStep::Hook(".")]),
        (true, false, &[GitStep::HuskyHook]),
        (false, true, &[GitStep::IncludedConfig]),
        (false, false, &[GitStep::Configure("."), GitStep::HuskyHook]),
    ];
    for (husky, include, steps) in controls {
        let s = git_scene(husky, include);
        let plant = format!("touch {}", s.victim.display());
        for step in steps {
            let _ = s.bare().sh(&git_step_line(step, &plant));
        }
        assert!(git_outside_ran_code(&s), "control {steps:?}: nothing ran");
    }
}

#[test]
fn hooks_and_config_cannot_be_planted() {
    conformance(Attack::new(
        "hooks and config",
        &|s| s.git_repo(),
        &|s, mut run| {
            run.sh(&format!(
                "printf '#!/bin/sh\\ntouch {v}\\n' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout; \
                 git config core.fsmonitor '{f}'",
                v = s.victim.display(),
                f = fsmonitor(s)
            ))
        },
        &|s, _| {
            let _ = s.git_output(&s.ws, &["checkout", "-q", "-b", "other"]);
            git_status_ran_code(s)
        },
    ));
}

#[test]
fn a_guarded_name_planted_by_a_line_is_moved_aside_and_the_line_fails() {
    let s = me();
    s.git_repo();
    let out = s
        .sandbox()
        .sh("echo x > .git/commondir; echo '[[rules]]' > .shellgate.toml; echo ran");
    let stderr = out.refused_with(SANDBOX_VIOLATION, "SANDBOX_VIOLATION");
    assert!(stderr.contains("commondir"), "{stderr}");
    assert!(!s.ws.join(".git/commondir").exists());
    assert!(!s.ws.join(".shellgate.toml").exists());
    let moved: Vec<String> = fs::read_dir(s.ws.join(".git"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("commondir.shellgate-quarantine-"))
        .collect();
    assert_eq!(moved.len(), 1, "{moved:?}");
}

// ---------------------------------------------------------------------------------------------
// Secrets.

#[test]
fn credential_stores_are_unreadable() {
    let stores = [
        ".ssh/id_rsa",
        ".aws/credentials",
        ".gnupg/private-keys-v1.d/k.key",
        ".config/gh/hosts.yml",
        ".docker/config.json",
        ".kube/config",
        ".netrc",
        ".git-credentials",
        ".codex/auth.json",
        ".claude/.credentials.json",
    ];
    let line = "cat ~/.ssh/id_rsa ~/.ssh//id_rsa ~/.aws/credentials ~/.gnupg/private-keys-v1.d/k.key \
                ~/.config/gh/hosts.yml ~/.docker/config.json ~/.kube/config ~/.netrc ~/.git-credentials \
                ~/.codex/auth.json ~/.claude/.credentials.json; (cd ~/.ssh && cat id_rsa); \
                grep -r SECRET ~; ln -s ~/.ssh/id_rsa k && cat k; cat ~/.ssh/id_rsa.pub";
    conformance(Attack::new(
        "read secrets",
        &|s| {
            for store in stores {
                s.write(&s.home.join(store), &format!("SECRET {store}\n"));
            }
            s.write(&s.home.join(".ssh/id_rsa.pub"), "public key\n");
        },
        &|_, mut run| run.sh(line),
        &|_, out| {
            let text = out.stdout();
            text.lines()
                .find(|l| l.contains("SECRET"))
                .map(|l| format!("printed {l:?}"))
        },
    ));
    // A hidden key is an empty file only its owner may read (0400): ssh skips it without its
    // "UNPROTECTED PRIVATE KEY FILE" refusal (an empty 0444 view made ssh stop there).
    for who in identities() {
        let s = Scene::new(who);
        s.write(&s.home.join(".ssh/id_ed25519"), "SECRET key\n");
        let out = s
            .sandbox()
            .sh("stat -c %a ~/.ssh/id_ed25519; wc -c < ~/.ssh/id_ed25519")
            .ok();
        assert_eq!(
            out.split_whitespace().collect::<Vec<_>>(),
            ["400", "0"],
            "as {who:?}"
        );
    }
    // What is not secret stays readable.
    let s = me();
    s.write(&s.home.join(".ssh/id_rsa.pub"), "public key\n");
    s.write(&s.home.join(".ssh/known_hosts"), "host key\n");
    let out = s
        .sandbox()
        .sh("cat ~/.ssh/id_rsa.pub ~/.ssh/known_hosts")
        .ok();
    assert_eq!(out, "public key\nhost key\n");
}

// ---------------------------------------------------------------------------------------------
// Races: a helper outside swaps a directory for a symlink while shellgate starts the sandbox.

/// Exchanges `a` and `b` (`renameat2(RENAME_EXCHANGE)`) as fast as it can until told to stop.
struct Swapper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: Option<std::thread::JoinHandle<u64>>,
}

impl Swapper {
    fn start(a: &Path, b: &Path) -> Swapper {
        use std::os::unix::ffi::OsStrExt;
        use std::sync::atomic::Ordering;
        let a = std::ffi::CString::new(a.as_os_str().as_bytes()).unwrap();
        let b = std::ffi::CString::new(b.as_os_str().as_bytes()).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut swaps = 0;
            while !flag.load(Ordering::Relaxed) {
                // SAFETY: two NUL-terminated paths; renameat2 only reads them. The system call
                // itself: musl before 1.2.5 has no wrapper.
                let ret = unsafe {
                    libc::syscall(
                        libc::SYS_renameat2,
                        libc::AT_FDCWD,
                        a.as_ptr(),
                        libc::AT_FDCWD,
                        b.as_ptr(),
                        libc::RENAME_EXCHANGE,
                    )
                };
                if ret == 0 {
                    swaps += 1;
                }
            }
            swaps
        });
        Swapper {
            stop,
            handle: Some(handle),
        }
    }

    /// Stops swapping; how many swaps there were.
    fn stop(mut self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle.take().map(|h| h.join().unwrap()).unwrap_or(0)
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Launches `LAUNCHES` runs that each write one file beneath a directory a helper keeps swapping
/// for a symlink to `outside`; returns how many files landed outside.
fn race(s: &Scene, target: &str, sandboxed: bool) -> usize {
    const LAUNCHES: usize = 60;
    let base = tempfile::Builder::new()
        .prefix("sg-race-")
        .tempdir_in("/tmp")
        .unwrap();
    let real = base.path().join("d");
    let link = base.path().join("l");
    fs::create_dir_all(&real).unwrap();
    std::os::unix::fs::symlink(&s.outside, &link).unwrap();
    s.chown(base.path());
    let swapper = Swapper::start(&real, &link);
    for i in 0..LAUNCHES {
        let dest = real.join(format!("{target}{i}"));
        let line = format!("echo x > {}", dest.display());
        let mut run = match (sandboxed, target) {
            (false, _) => s.bare(),
            (true, "workspace") => {
                let mut run = s.sandbox_auto();
                run.flags(["--workspace", real.to_str().unwrap()]);
                run
            }
            (true, _) => s.sandbox(),
        };
        if target == "tmpdir" {
            run.env("TMPDIR", &real);
        }
        run.cwd(&s.root).sh(&line);
    }
    let swaps = swapper.stop();
    assert!(swaps > 0, "the swapper never swapped");
    fs::read_dir(&s.outside).unwrap().flatten().count()
}

#[test]
fn swapping_the_workspace_or_tmpdir_for_a_symlink_writes_nothing_outside() {
    for who in identities() {
        for target in ["workspace", "tmpdir"] {
            let control = Scene::new(who);
            let landed = race(&control, target, false);
            assert!(
                landed > 0,
                "control ({target}, {who:?}): no write landed outside"
            );
            let s = Scene::new(who);
            let landed = race(&s, target, true);
            assert_eq!(
                landed, 0,
                "{target} as {who:?}: {landed} writes landed outside"
            );
        }
    }
}

#[test]
fn a_descriptor_passed_explicitly_reaches_the_program_and_no_other_does() {
    // Through the library: the API a hook uses for its state channel (fd 3).
    let s = me();
    let (reader, writer) = std::io::pipe().unwrap();
    let stray = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(s.outside.join("stray"))
        .unwrap();
    let spec =
        shellgate::sandbox::Spec::new(shellgate::mode::SandboxPolicy::WorkspaceWrite, Some(&s.ws))
            .unwrap()
            .with_home(shellgate::spec::home_env().unwrap());
    let mut command = shellgate::sandbox::Command::new(
        "/bin/sh".into(),
        vec![
            "-c".into(),
            "echo through >&3; for fd in 4 5 6 7 8 9 10 11 12 13 14 15; do [ -e /proc/$$/fd/$fd ] && echo open $fd; done; exit 0".into(),
        ],
        s.ws.clone(),
        std::env::vars_os().collect(),
    );
    command.passed = vec![(std::os::fd::OwnedFd::from(writer), 3)];
    let out = tempfile::NamedTempFile::new_in(&s.root).unwrap();
    let stdout = std::os::fd::OwnedFd::from(out.reopen().unwrap());
    let null = || std::os::fd::OwnedFd::from(fs::File::open("/dev/null").unwrap());
    command.stdio = Some([null(), stdout, null()]);
    let running = shellgate::sandbox::spawn(&spec, command).unwrap();
    let finished = running.wait(None).unwrap();
    assert!(finished.status.success());
    assert_eq!(
        fs::read_to_string(out.path()).unwrap(),
        "",
        "other descriptors were open"
    );
    let mut got = String::new();
    use std::io::Read;
    let mut reader = reader;
    reader.read_to_string(&mut got).unwrap();
    assert_eq!(got, "through\n");
    drop(stray);
}

#[test]
fn refused_connections_are_reported_with_their_address() {
    let s = me();
    let listener = tcp_listener("127.0.0.1:0");
    let port = listener.local_addr().unwrap().port();
    let out = s
        .sandbox()
        .py(TCP_CONNECT, &["127.0.0.1", &port.to_string()]);
    assert_eq!(out.stdout().trim(), "denied 1", "{}", out.stderr());
    assert_no_connection(&listener);
    assert!(
        out.stderr()
            .contains(&format!("a connection to 127.0.0.1:{port}")),
        "{}",
        out.stderr()
    );
    // A DNS lookup starts with a UDP socket: reported too, though it has no address yet.
    let out = s.sandbox().py(
        "import socket\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\nexcept OSError as e:\n    print(e.errno)",
        &[],
    );
    assert_eq!(out.stdout().trim(), "1");
    assert!(out.stderr().contains("a UDP socket"), "{}", out.stderr());
}

#[test]
fn refused_writes_are_named() {
    for who in identities() {
        let s = Scene::new(who);
        let outside = s.outside.join("f");
        let out = s.sandbox().sh(&format!(
            "echo x > {0}; mkdir {1}/d; echo ok > inside; echo done",
            outside.display(),
            s.outside.display()
        ));
        assert!(out.stdout().contains("done"), "{}", out.stderr());
        assert!(s.ws.join("inside").exists());
        let stderr = out.stderr();
        assert!(
            stderr.contains(&format!("writing {}", outside.display())),
            "{who:?}: {stderr}"
        );
        assert!(
            stderr.contains(&format!("creating the directory {}/d", s.outside.display())),
            "{who:?}: {stderr}"
        );
        // Writes the sandbox allows are not named.
        assert!(!stderr.contains("inside"), "{stderr}");
        // Nor a directory that exists (`mkdir -p` makes every parent: EEXIST, sandbox or not).
        let out = s
            .sandbox()
            .sh(&format!("mkdir -p {}/d2/e", s.outside.display()));
        let stderr = out.stderr();
        let named: Vec<&str> = stderr
            .split([',', '\n'])
            .map(|n| {
                n.trim()
                    .trim_start_matches("[shellgate] the sandbox refused ")
            })
            .collect();
        assert!(
            named.contains(&format!("creating the directory {}/d2", s.outside.display()).as_str()),
            "{who:?}: {named:?}"
        );
        for existing in [&s.root, &s.outside] {
            let noise = format!("creating the directory {}", existing.display());
            assert!(!named.contains(&noise.as_str()), "{who:?}: {named:?}");
        }
    }
}

/// A program that asks first whether it may write (`access(W_OK)`) and gives up on the answer
/// never makes the write the sandbox would name: coreutils `rm` at a terminal does that for a user
/// who is not root (root may write any file, so it unlinks at once), and failed with "Read-only
/// file system" and nothing named. The probe is named as the write it asks about.
#[test]
fn a_write_asked_about_first_is_named() {
    for who in identities() {
        let s = Scene::new(who);
        let outside = s.outside.join("f");
        s.write(&outside, "x\n");
        let out = s.sandbox().py(
            "import os, subprocess, sys\n\
             primary, terminal = os.openpty()\n\
             r = subprocess.run(['rm', sys.argv[1]], stdin=terminal, capture_output=True, text=True)\n\
             print('rm', r.returncode, r.stderr.strip())\n\
             print('probe', os.access(sys.argv[1], os.W_OK))",
            &[outside.to_str().unwrap()],
        );
        assert!(outside.exists(), "{who:?}: rm removed a file outside");
        assert!(out.stdout().contains("rm 1"), "{who:?}: {}", out.stdout());
        assert!(
            out.stdout().contains("probe False"),
            "{who:?}: {}",
            out.stdout()
        );
        let stderr = out.stderr();
        assert!(
            stderr.contains(&format!("writing {}", outside.display()))
                || stderr.contains(&format!("removing {}", outside.display())),
            "{who:?}: nothing named: {stderr}"
        );
        // Asking whether a file inside may be written is no refusal.
        let inside = s.ws.join("g");
        s.write(&inside, "x\n");
        let out = s.sandbox().py(
            "import os, sys\nprint(os.access(sys.argv[1], os.W_OK))",
            &[inside.to_str().unwrap()],
        );
        assert_eq!(out.stdout().trim(), "True", "{who:?}: {}", out.stderr());
        assert!(
            !out.stderr().contains("refused"),
            "{who:?}: {}",
            out.stderr()
        );
    }
}

// ---- Named hosts: the line's own proxy -------------------------------------------------------

/// Fetches `argv[1]` with Python's urllib, which takes its proxy from the standard variables (a
/// CA file in `argv[2]` for HTTPS): `got BODY`, `refused STATUS` (the proxy's answer), or
/// `failed …`.
const FETCH: &str = "\
import sys, ssl, urllib.request, urllib.error
context = ssl.create_default_context(cafile=sys.argv[2]) if len(sys.argv) > 2 else None
try:
    print('got', urllib.request.urlopen(sys.argv[1], timeout=20, context=context).read().decode())
except urllib.error.HTTPError as e:
    print('refused', e.code)
except Exception as e:
    print('failed', type(e).__name__, e)
";

/// Opens a tunnel through the line's proxy to `argv[1]:argv[2]` by hand and starts TLS in it
/// asking for the name `argv[3]` (the CA in `argv[4]`): `got BODY` or `failed …`.
const FRONTED: &str = "\
import os, socket, ssl, sys
proxy = os.environ['HTTPS_PROXY'].rsplit('/', 1)[-1].rsplit(':', 1)
s = socket.create_connection((proxy[0], int(proxy[1])))
s.sendall(('CONNECT %s:%s HTTP/1.1\\r\\n\\r\\n' % (sys.argv[1], sys.argv[2])).encode())
print(s.recv(4096).split(b'\\r\\n')[0].decode(), file=sys.stderr)
context = ssl.create_default_context(cafile=sys.argv[4])
try:
    t = context.wrap_socket(s, server_hostname=sys.argv[3])
    t.sendall(b'GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')
    print('got', t.makefile('rb').read().split(b'\\r\\n\\r\\n', 1)[1].decode())
except Exception as e:
    print('failed', type(e).__name__, e)
";

/// Sends one plain HTTP request through the line's proxy by hand, for the URL `argv[1]` with the
/// `Host` header `argv[2]`: the status line it gets back.
const HOST_HEADER: &str = "\
import os, socket, sys
proxy = os.environ['HTTP_PROXY'].rsplit('/', 1)[-1].rsplit(':', 1)
s = socket.create_connection((proxy[0], int(proxy[1])))
s.sendall(('GET %s HTTP/1.1\\r\\nHost: %s\\r\\n\\r\\n' % (sys.argv[1], sys.argv[2])).encode())
print(s.makefile('rb').readline().decode().strip())
";

/// SOCKS5 by hand through the line's `ALL_PROXY` (`socks5h://…`): `CONNECT` to the name
/// `argv[1]`, port `argv[2]`, then an HTTP request in the tunnel: `got BODY`, or `refused N` with
/// the proxy's reply code.
const SOCKS_FETCH: &str = "\
import os, socket, struct, sys
scheme, address = os.environ['ALL_PROXY'].split('://')
assert scheme == 'socks5h', scheme
host, port = address.rsplit(':', 1)
s = socket.create_connection((host, int(port)), timeout=20)
s.sendall(b'\\x05\\x01\\x00')
assert s.recv(2) == b'\\x05\\x00'
name = sys.argv[1].encode()
s.sendall(b'\\x05\\x01\\x00\\x03' + bytes([len(name)]) + name + struct.pack('>H', int(sys.argv[2])))
reply = s.recv(10)
if reply[1] != 0:
    print('refused', reply[1])
    sys.exit(0)
s.sendall(('GET /x HTTP/1.1\\r\\nHost: %s:%s\\r\\nConnection: close\\r\\n\\r\\n' % (sys.argv[1], sys.argv[2])).encode())
print('got', s.makefile('rb').read().split(b'\\r\\n\\r\\n', 1)[-1].decode())
";

/// A SOCKS5 client (what reads `ALL_PROXY`) reaches a granted name through the line's proxy and
/// no other name of the same address: the refusal is SOCKS's "not allowed by ruleset", named in
/// the sandbox's report, and the server never sees it. (Names as in the test above.)
#[test]
fn socks5_through_the_lines_proxy_reaches_the_granted_name_only() {
    for who in identities() {
        let s = Scene::new(who);
        let hosts = s.root.join("hosts");
        fs::write(&hosts, "127.0.0.1 localhost granted.test other.test\n").unwrap();
        let (granted, other) = if geteuid() == 0 {
            ("granted.test", "other.test")
        } else {
            ("localhost", "127.0.0.1")
        };
        let (port, seen) = http_server();
        let grant = format!("{granted}:{port}");
        let fetch = |host: &str| {
            let mut run = s.sandbox();
            run.resolving(&hosts);
            run.flags(["--host", grant.as_str()])
                .py(SOCKS_FETCH, &[host, &port.to_string()])
        };
        let out = fetch(granted);
        assert_eq!(
            out.stdout().trim(),
            "got served",
            "{who:?}: {}",
            out.stderr()
        );
        let out = fetch(other);
        assert_eq!(
            out.stdout().trim(),
            "refused 2",
            "{who:?}: {}",
            out.stderr()
        );
        assert!(
            out.stderr()
                .contains(&format!("refused a connection to {other}:{port}")),
            "{who:?}: the refusal names {other}:{port}: {}",
            out.stderr()
        );
        assert_eq!(
            *seen.lock().unwrap(),
            [format!("{granted}:{port}")],
            "{who:?}: only the granted name arrived"
        );
    }
}

/// An HTTP server on loopback that answers every request `served` and keeps the `Host` header of
/// each: what reached it, seen from outside the sandbox.
fn http_server() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut host = String::from("(none)");
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(h) = line.strip_prefix("Host: ") {
                    host = h.trim().to_owned();
                }
            }
            kept.lock().unwrap().push(host);
            let _ = reader.get_mut().write_all(
                b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nserved",
            );
        }
    });
    (port, seen)
}

/// A line granted one host by name reaches it by that name, through its proxy, and by no other:
/// another name of the same address and the address itself are refused by the proxy (named, and
/// never reaching the server), a connection that ignores the proxy is refused by the sandbox, and
/// a port on any host is not implied. The names are the test's own, in the `/etc/hosts` of a
/// mount namespace it makes (as root; an unprivileged run uses `localhost` and the address).
/// Each is shown first without the sandbox, where every one of them reaches the server.
#[test]
fn a_host_grant_reaches_that_name_and_no_other_name_of_its_address() {
    for who in identities() {
        let s = Scene::new(who);
        let hosts = s.root.join("hosts");
        fs::write(&hosts, "127.0.0.1 localhost granted.test other.test\n").unwrap();
        let named = geteuid() == 0;
        let (granted, others): (&str, &[&str]) = if named {
            ("granted.test", &["other.test", "localhost", "127.0.0.1"])
        } else {
            ("localhost", &["127.0.0.1"])
        };
        let (port, seen) = http_server();
        let url = |host: &str| format!("http://{host}:{port}/x");
        for host in std::iter::once(&granted).chain(others) {
            let mut control = s.bare();
            control.resolving(&hosts);
            let out = control.py(FETCH, &[&url(host)]);
            assert_eq!(
                out.stdout().trim(),
                "got served",
                "control {host}: {}",
                out.stderr()
            );
        }
        seen.lock().unwrap().clear();
        let grant = format!("{granted}:{port}");
        let fetch = |host: &str| {
            let mut run = s.sandbox();
            run.resolving(&hosts);
            run.flags(["--host", grant.as_str()])
                .py(FETCH, &[&url(host)])
        };
        let out = fetch(granted);
        assert_eq!(
            out.stdout().trim(),
            "got served",
            "{who:?}: {}",
            out.stderr()
        );
        assert_eq!(*seen.lock().unwrap(), [format!("{granted}:{port}")]);
        for host in others {
            let out = fetch(host);
            assert_eq!(
                out.stdout().trim(),
                "refused 403",
                "{who:?} {host}: {}",
                out.stderr()
            );
            assert!(
                out.stderr()
                    .contains(&format!("refused a connection to {host}:{port}")),
                "{who:?}: the refusal names {host}:{port}: {}",
                out.stderr()
            );
        }
        assert_eq!(
            seen.lock().unwrap().len(),
            1,
            "{who:?}: only the granted name arrived"
        );
        // The granted URL with another name in its Host header (one server, many names).
        let mut run = s.sandbox();
        run.resolving(&hosts);
        let out = run
            .flags(["--host", grant.as_str()])
            .py(HOST_HEADER, &[&url(granted), &format!("other.test:{port}")]);
        assert!(
            out.stdout().contains(" 400 "),
            "{who:?}: {} {}",
            out.stdout(),
            out.stderr()
        );
        assert_eq!(
            seen.lock().unwrap().len(),
            1,
            "{who:?}: another Host arrived"
        );
        // Past the proxy: refused by the sandbox, and said so. (A grant of `localhost` is one of
        // loopback's addresses too, see `an_address_grant_is_reached_without_the_proxy_too`: the
        // unprivileged run goes past the proxy to another port.)
        let spare = tcp_listener("127.0.0.1:0");
        let past = if named {
            port
        } else {
            spare.local_addr().unwrap().port()
        };
        let mut run = s.sandbox();
        run.resolving(&hosts);
        let out = run
            .flags(["--host", grant.as_str()])
            .py(TCP_CONNECT, &["127.0.0.1", &past.to_string()]);
        assert!(
            out.stdout().starts_with("denied"),
            "{who:?}: {}",
            out.stdout()
        );
        assert!(
            out.stderr().contains("straight to 127.0.0.1") && out.stderr().contains("proxy"),
            "{who:?}: {}",
            out.stderr()
        );
        assert_eq!(
            seen.lock().unwrap().len(),
            1,
            "{who:?}: nothing arrived past the proxy"
        );
    }
}

/// A host reached without the proxy (ssh's: `--direct`) is reached by the addresses shellgate
/// resolved for its name, and nothing else on that port: its name resolves in the line from the
/// line's own `/etc/hosts`, and another name or address on the same port is refused and named.
/// The control: the same clients without the sandbox reach both servers, and a port grant (what
/// ssh had before) reaches both too. The names are the test's own (as root, in a mount namespace
/// of its own); an unprivileged run grants the address.
#[test]
fn a_direct_host_is_reached_by_its_resolved_addresses_only() {
    for who in identities() {
        let s = Scene::new(who);
        let hosts = s.root.join("hosts");
        fs::write(
            &hosts,
            "127.0.0.1 localhost\n127.0.0.2 box.test\n127.0.0.3 other.test\n",
        )
        .unwrap();
        let named = geteuid() == 0;
        let granted_server = tcp_listener("127.0.0.2:0");
        let port = granted_server.local_addr().unwrap().port();
        let other_server = tcp_listener(&format!("127.0.0.3:{port}"));
        let port_text = port.to_string();
        let (granted, others): (&str, &[&str]) = if named {
            ("box.test", &["other.test", "127.0.0.3"])
        } else {
            ("127.0.0.2", &["127.0.0.3"])
        };
        let connect = |run: &mut Run, host: &str| {
            if named {
                run.resolving(&hosts);
            }
            run.py(TCP_CONNECT, &[host, &port_text])
        };
        for host in std::iter::once(&granted).chain(others) {
            let out = connect(&mut s.bare(), host);
            assert_eq!(
                out.stdout().trim(),
                "connected",
                "control {host}: {}",
                out.stderr()
            );
        }
        let grant = format!("{granted}:{port}");
        let out = connect(
            s.sandbox().flags(["--tcp-port", port_text.as_str()]),
            others[0],
        );
        assert_eq!(
            out.stdout().trim(),
            "connected",
            "a port grant reaches any host"
        );
        while granted_server.accept().is_ok() {}
        while other_server.accept().is_ok() {}
        let out = connect(s.sandbox().flags(["--direct", grant.as_str()]), granted);
        assert_eq!(
            out.stdout().trim(),
            "connected",
            "{who:?}: {}",
            out.stderr()
        );
        assert!(granted_server.accept().is_ok(), "{who:?}: nothing arrived");
        for host in others {
            let out = connect(s.sandbox().flags(["--direct", grant.as_str()]), host);
            assert!(
                out.stdout().starts_with("denied"),
                "{who:?} {host}: {}",
                out.stdout()
            );
            assert!(
                out.stderr()
                    .contains(&format!("straight to 127.0.0.3:{port}")),
                "{who:?} {host}: the refusal names the address: {}",
                out.stderr()
            );
        }
        assert_no_connection(&other_server);
        if named {
            // The name resolves from the line's own hosts file, which shellgate wrote.
            let mut run = s.sandbox();
            run.resolving(&hosts);
            let out = run
                .flags(["--direct", grant.as_str()])
                .run("head", ["-2", "/etc/hosts"]);
            assert!(out.stdout().starts_with("# shellgate"), "{}", out.stdout());
            assert!(
                out.stdout().contains("127.0.0.2 box.test"),
                "{}",
                out.stdout()
            );
        }
    }
}

/// A granted name means what the machine's resolver says, not what the caller's environment
/// steers it to: with `HOSTALIASES` naming `sgalias` as `box.test` (which the test's DNS server
/// answers with 127.0.0.2, where a server listens), a direct grant of `sgalias` resolves to
/// nothing (the server knows no `sgalias`), and the line reaches nothing. The control: a client
/// outside the sandbox follows the alias and connects. Root only: the test's own hosts file and
/// resolver configuration, in a mount namespace of its own, point at the test's DNS server on
/// 127.0.0.1:53; no query goes anywhere else.
#[test]
fn a_granted_name_is_not_resolved_through_the_callers_alias_variables() {
    if geteuid() != 0 {
        return;
    }
    let dns = UdpSocket::bind("127.0.0.1:53").expect("the test's DNS server on 127.0.0.1:53");
    std::thread::spawn(move || answer_dns(&dns, "box.test", [127, 0, 0, 2]));
    for who in identities() {
        let s = Scene::new(who);
        let hosts = s.root.join("hosts");
        fs::write(&hosts, "127.0.0.1 localhost\n").unwrap();
        let resolv = s.root.join("resolv.conf");
        fs::write(
            &resolv,
            "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
        )
        .unwrap();
        let aliases = s.root.join("aliases");
        fs::write(&aliases, "sgalias box.test\n").unwrap();
        let server = tcp_listener("127.0.0.2:0");
        let port = server.local_addr().unwrap().port().to_string();
        let binds: [(&Path, &Path); 2] = [
            (&hosts, Path::new("/etc/hosts")),
            (&resolv, Path::new("/etc/resolv.conf")),
        ];
        let connect = |run: &mut Run| {
            assert!(run.binding(&binds));
            run.env("HOSTALIASES", &aliases)
                .py(TCP_CONNECT, &["sgalias", &port])
        };
        let out = connect(&mut s.bare());
        assert_eq!(
            out.stdout().trim(),
            "connected",
            "control: {}",
            out.stderr()
        );
        while server.accept().is_ok() {}
        let grant = format!("sgalias:{port}");
        let out = connect(s.sandbox().flags(["--direct", grant.as_str()]));
        assert!(
            out.stdout().starts_with("denied"),
            "{who:?}: the alias steered the grant: {} {}",
            out.stdout(),
            out.stderr()
        );
        assert_no_connection(&server);
    }
}

/// A DNS server for one name: an `A` query for `name` is answered with `address`; every other
/// query gets "no such name". Serves until the test process ends.
fn answer_dns(socket: &UdpSocket, name: &str, address: [u8; 4]) {
    let wire: Vec<u8> = name
        .split('.')
        .flat_map(|label| std::iter::once(label.len() as u8).chain(label.bytes()))
        .chain([0])
        .collect();
    let mut query = [0u8; 512];
    while let Ok((n, from)) = socket.recv_from(&mut query) {
        // Header (12 bytes), then the question: the name, its type and class (4 bytes).
        let Some(question) = query.get(12..n) else {
            continue;
        };
        let Some(end) = question.iter().position(|&b| b == 0) else {
            continue;
        };
        let Some(asked) = question.get(..end + 5) else {
            continue;
        };
        let known = asked[..=end].eq_ignore_ascii_case(&wire);
        let is_a = asked[end + 1..end + 3] == [0, 1];
        let mut reply = vec![query[0], query[1], 0x81, if known { 0x80 } else { 0x83 }];
        reply.extend_from_slice(&[0, 1, 0, u8::from(known && is_a), 0, 0, 0, 0]);
        reply.extend_from_slice(asked);
        if known && is_a {
            // A pointer to the question's name, type A, class IN, TTL 0, four bytes.
            reply.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4]);
            reply.extend_from_slice(&address);
        }
        let _ = socket.send_to(&reply, from);
    }
}

/// HTTPS to a granted name goes through the proxy's `CONNECT` and is not opened on the way: the
/// client checks the server's certificate (a test CA's) against the name it asked for, and gets
/// the server's answer; a name not granted gets the proxy's refusal instead.
#[test]
fn https_to_a_granted_host_tunnels_through_the_proxy() {
    const TLS_SERVER: &str = "\
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header('Content-Length', '6')
        self.end_headers()
        self.wfile.write(b'secure')
    def log_message(self, *a):
        pass
server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
";
    let s = Scene::new(Who::Me);
    let hosts = s.root.join("hosts");
    fs::write(&hosts, "127.0.0.1 localhost granted.test other.test\n").unwrap();
    let named = geteuid() == 0;
    let (granted, other) = if named {
        ("granted.test", "other.test")
    } else {
        ("localhost", "127.0.0.1")
    };
    let (cert, key) = (s.root.join("cert.pem"), s.root.join("key.pem"));
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"])
        .args(["-subj", "/CN=shellgate test", "-addext"])
        .arg("subjectAltName=DNS:granted.test,DNS:other.test,DNS:localhost,IP:127.0.0.1")
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    for f in [&cert, &key] {
        fs::set_permissions(f, fs::Permissions::from_mode(0o644)).unwrap();
    }
    let mut server = Command::new(PYTHON)
        .args(["-c", TLS_SERVER])
        .arg(&cert)
        .arg(&key)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut port = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let port = port.trim().to_owned();
    let url = |host: &str| format!("https://{host}:{port}/");
    let grant = format!("{granted}:{port}");
    let fetch = |host: &str| {
        let mut run = s.sandbox();
        run.resolving(&hosts);
        run.flags(["--host", grant.as_str()])
            .py(FETCH, &[&url(host), cert.to_str().unwrap()])
    };
    let out = fetch(granted);
    let refused = fetch(other);
    // A tunnel to the granted name whose TLS hello asks for another name (one server, many
    // names: domain fronting) is closed before anything is connected; the same tunnel asking for
    // the granted name is the control.
    let fronted = |sni: &str| {
        let mut run = s.sandbox();
        run.resolving(&hosts);
        run.flags(["--host", grant.as_str()])
            .py(FRONTED, &[granted, &port, sni, cert.to_str().unwrap()])
    };
    let same = fronted(granted);
    let other_name = fronted("other.test");
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(same.stdout().trim(), "got secure", "{}", same.stderr());
    assert!(
        other_name.stdout().starts_with("failed")
            && other_name
                .stderr()
                .contains(&format!("refused a connection to other.test:{port}")),
        "{} {}",
        other_name.stdout(),
        other_name.stderr()
    );
    assert_eq!(out.stdout().trim(), "got secure", "{}", out.stderr());
    // urllib reads the proxy's 403 to CONNECT as a failed tunnel.
    assert!(
        refused.stdout().contains("403") && refused.stderr().contains(&format!("{other}:{port}")),
        "{} {}",
        refused.stdout(),
        refused.stderr()
    );
}

/// A grant that names an address (`127.0.0.1:PORT`) or `localhost` is held by that address too:
/// a client that takes no proxy (a database's) connects straight to it, and to nothing else on
/// the port. Shown first without the sandbox, where both ports connect.
#[test]
fn an_address_grant_is_reached_without_the_proxy_too() {
    for who in identities() {
        let s = Scene::new(who);
        let granted = tcp_listener("127.0.0.1:0");
        let other = tcp_listener("127.0.0.1:0");
        let (gp, op) = (
            granted.local_addr().unwrap().port().to_string(),
            other.local_addr().unwrap().port().to_string(),
        );
        for port in [&gp, &op] {
            let control = s.bare().py(TCP_CONNECT, &["127.0.0.1", port]);
            assert_eq!(control.stdout().trim(), "connected", "{}", control.stderr());
        }
        let _ = (granted.accept(), other.accept());
        for grant in [format!("127.0.0.1:{gp}"), format!("localhost:{gp}")] {
            let flags = ["--host", grant.as_str()];
            let out = s
                .sandbox()
                .flags(flags)
                .py(TCP_CONNECT, &["127.0.0.1", &gp]);
            assert_eq!(
                out.stdout().trim(),
                "connected",
                "{who:?} {grant}: {}",
                out.stderr()
            );
            granted.set_nonblocking(false).unwrap();
            drop(granted.accept().expect("the granted connection arrived"));
            granted.set_nonblocking(true).unwrap();
            let out = s
                .sandbox()
                .flags(flags)
                .py(TCP_CONNECT, &["127.0.0.1", &op]);
            assert!(
                out.stdout().starts_with("denied"),
                "{who:?} {grant}: {}",
                out.stdout()
            );
            assert_no_connection(&other);
        }
    }
}

/// A line's proxy serves the line only: a process outside that finds its address (here, read from
/// the line's environment while the line runs) and asks it for the granted host gets nothing —
/// only a connection the supervisor made for the line is served. The line's own request is the
/// control.
#[test]
fn a_lines_proxy_serves_no_other_process() {
    use std::io::{Read, Write};
    let s = Scene::new(Who::Me);
    let (port, seen) = http_server();
    let grant = format!("localhost:{port}");
    let told = s.root.join("proxy-address");
    fs::write(&told, "").unwrap();
    fs::set_permissions(&told, fs::Permissions::from_mode(0o666)).unwrap();
    let script = format!(
        "echo \"$HTTPS_PROXY\" > {}; {PYTHON} -c \"$0\" http://localhost:{port}/ && sleep 3",
        told.display()
    );
    let mut run = s.sandbox();
    run.flags(["--host", grant.as_str(), "--writable"])
        .flags([s.root.to_str().unwrap()]);
    let line = std::thread::spawn(move || run.run("/bin/sh", ["-c", &script, FETCH]));
    let mut address = String::new();
    for _ in 0..200 {
        address = fs::read_to_string(&told).unwrap_or_default();
        if !address.trim().is_empty() && seen.lock().unwrap().len() == 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let address = address.trim().trim_start_matches("http://").to_owned();
    assert!(!address.is_empty(), "the line never told its proxy");
    let mut outsider = std::net::TcpStream::connect(&address).expect("the proxy listens");
    outsider
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    outsider
        .write_all(
            format!("GET http://localhost:{port}/ HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n")
                .as_bytes(),
        )
        .unwrap();
    let mut answer = Vec::new();
    let _ = outsider.read_to_end(&mut answer);
    let out = line.join().unwrap();
    assert!(
        out.stdout().contains("got served"),
        "the control: {}",
        out.stderr()
    );
    assert!(
        answer.is_empty(),
        "the outsider got {:?}",
        String::from_utf8_lossy(&answer)
    );
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "the outsider's request arrived"
    );
}

/// A sandbox nested in a line granted a host keeps its own rules for connections: the nested one
/// may connect to port 9 only (so its filter lets `connect` through to the line's supervisor,
/// where a connection made for it would skip its Landlock rules), and reaches the host neither
/// through the line's proxy (whose address is in the environment it inherits) nor past it,
/// though the line itself does (the control, in the same line).
#[test]
fn a_sandbox_nested_in_a_proxied_line_keeps_its_own_network_rules() {
    let s = me();
    s.git_repo();
    let (port, seen) = http_server();
    let url = format!("http://localhost:{port}/");
    let script = format!(
        "{PYTHON} -c \"$FETCH\" {url}; \
         {} sandbox --workspace {} --tcp-port 9 -- {PYTHON} -c \"$FETCH\" {url}; \
         {} sandbox --workspace {} --tcp-port 9 -- {PYTHON} -c \"$PROBE\" 127.0.0.1 {port}",
        binary().display(),
        s.ws.display(),
        binary().display(),
        s.ws.display(),
    );
    let grant = format!("localhost:{port}");
    let out = s
        .sandbox()
        .flags(["--host", grant.as_str()])
        .env("FETCH", FETCH)
        .env("PROBE", TCP_CONNECT)
        .sh(&script);
    let lines: Vec<String> = out.stdout().lines().map(str::to_owned).collect();
    assert_eq!(
        lines.first().map(String::as_str),
        Some("got served"),
        "{}",
        out.stderr()
    );
    assert!(
        lines.get(1).is_some_and(|l| l.starts_with("failed")),
        "the nested sandbox went through the line's proxy: {lines:?} {}",
        out.stderr()
    );
    assert!(
        lines.get(2).is_some_and(|l| l.starts_with("denied")),
        "the nested sandbox went past the proxy: {lines:?}"
    );
    assert_eq!(seen.lock().unwrap().len(), 1, "{lines:?}");
}

/// The same for a line whose connections the supervisor makes because it may reach a unix socket
/// by name (the ssh agent's, after a yes): a sandbox nested in it, allowed port 9, does not reach
/// the line's own port.
#[test]
fn a_sandbox_nested_in_a_line_with_a_unix_socket_keeps_its_own_network_rules() {
    let s = me();
    s.git_repo();
    let socket_path = s.root.join("agent.sock");
    let _agent = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    let listener = tcp_listener("127.0.0.1:0");
    let port = listener.local_addr().unwrap().port().to_string();
    let script = format!(
        "{PYTHON} -c \"$PROBE\" 127.0.0.1 {port}; \
         {} sandbox --workspace {} --tcp-port 9 -- {PYTHON} -c \"$PROBE\" 127.0.0.1 {port}",
        binary().display(),
        s.ws.display(),
    );
    let out = s
        .sandbox()
        .flags(["--tcp-port", port.as_str(), "--unix-socket"])
        .flags([socket_path.as_os_str()])
        .env("PROBE", TCP_CONNECT)
        .sh(&script);
    let stdout = out.stdout();
    let lines: Vec<&str> = stdout.lines().map(str::trim).collect();
    assert_eq!(
        lines.first().copied(),
        Some("connected"),
        "{}",
        out.stderr()
    );
    assert!(
        lines.get(1).is_some_and(|l| l.starts_with("denied")),
        "the nested sandbox reached the line's port: {lines:?} {}",
        out.stderr()
    );
    listener.set_nonblocking(false).unwrap();
    drop(listener.accept().expect("the line's own connection"));
    listener.set_nonblocking(true).unwrap();
    assert_no_connection(&listener);
}
