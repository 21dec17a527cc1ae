//! Conformance suite for `shellgate sandbox`: every test runs a real program under the real binary
//! and checks the *effect* (file absent or unchanged, listener saw nothing), not only the status.
//!
//! Network rule: the only peers are listeners this test process opens on 127.0.0.1 / ::1.

mod sandbox_support;

use sandbox_support::*;
use shellgate::error::Code;
use shellgate::mode::SandboxPolicy;
use shellgate::sandbox::{self, Spec};
use std::fs;
use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::process::Command;
use std::time::Duration;

// ---------------------------------------------------------------------------------------------
// Filesystem: what may and may not be written.

#[test]
fn writes_inside_workspace_tmp_and_tmpdir_succeed() {
    let s = Scratch::new();
    let in_tmp = format!("/tmp/shellgate-test-{}", std::process::id());
    let script = format!(
        "echo ws > {ws}/a && echo tmpdir > \"$TMPDIR/b\" && echo tmp > {in_tmp} \
         && mkdir {ws}/d && mv {ws}/a {ws}/d/a && : > {ws}/d/a",
        ws = s.ws.display()
    );
    s.sandbox().sh(&script).ok();
    assert_eq!(read(&s.ws.join("d/a")).as_deref(), Some(""));
    assert_eq!(read(&s.tmpdir.join("b")).as_deref(), Some("tmpdir\n"));
    assert_eq!(read(in_tmp.as_ref()).as_deref(), Some("tmp\n"));
    fs::remove_file(&in_tmp).unwrap();
}

#[test]
fn write_outside_is_denied() {
    let s = Scratch::new();
    let target = s.outside.join("f");
    s.sandbox()
        .sh(&format!("echo x > {}", target.display()))
        .program_failed();
    assert!(!target.exists());
}

#[test]
fn truncating_outside_is_denied() {
    let s = Scratch::new();
    let victim = s.outside.join("victim");
    fs::write(&victim, "keep me\n").unwrap();
    let code = "import os, sys\ntry:\n    os.truncate(sys.argv[1], 0)\nexcept PermissionError:\n    sys.exit(3)";
    let out = s.sandbox().py(code, &[victim.to_str().unwrap()]);
    assert_eq!(out.code(), Some(3), "{}", out.stderr());
    assert_eq!(read(&victim).as_deref(), Some("keep me\n"));
}

#[test]
fn write_through_symlink_pointing_out_is_denied() {
    let s = Scratch::new();
    std::os::unix::fs::symlink(&s.outside, s.ws.join("link")).unwrap();
    s.sandbox().sh("echo x > link/f").program_failed();
    assert!(!s.outside.join("f").exists());
}

#[test]
fn hardlink_to_outside_file_is_denied() {
    let s = Scratch::new();
    let victim = s.outside.join("victim");
    fs::write(&victim, "original\n").unwrap();
    s.sandbox()
        .sh(&format!("ln {} hl", victim.display()))
        .program_failed();
    assert!(!s.ws.join("hl").exists());
    // Even if a link existed, writing through it must not reach the file.
    s.sandbox()
        .sh(&format!("echo changed >> {}", victim.display()))
        .program_failed();
    assert_eq!(read(&victim).as_deref(), Some("original\n"));
}

#[test]
fn rename_out_of_the_workspace_is_denied() {
    let s = Scratch::new();
    fs::write(s.ws.join("f"), "data\n").unwrap();
    s.sandbox()
        .sh(&format!("mv f {}/f", s.outside.display()))
        .program_failed();
    assert_eq!(read(&s.ws.join("f")).as_deref(), Some("data\n"));
    assert!(!s.outside.join("f").exists());
}

#[test]
fn rename_into_the_workspace_is_denied() {
    let s = Scratch::new();
    fs::write(s.outside.join("g"), "data\n").unwrap();
    s.sandbox()
        .sh(&format!("mv {}/g g", s.outside.display()))
        .program_failed();
    assert!(s.outside.join("g").exists());
    assert!(!s.ws.join("g").exists());
}

#[test]
fn proc_self_root_path_is_denied() {
    let s = Scratch::new();
    let target = s.outside.join("via-proc");
    s.sandbox()
        .sh(&format!("echo x > /proc/self/root{}", target.display()))
        .program_failed();
    assert!(!target.exists());
}

#[test]
fn dev_shm_is_not_writable() {
    let s = Scratch::new();
    let target = format!("/dev/shm/shellgate-test-{}", std::process::id());
    s.sandbox()
        .sh(&format!("echo x > {target}"))
        .program_failed();
    assert!(!std::path::Path::new(&target).exists());
}

#[test]
fn devices_work() {
    let s = Scratch::new();
    let out = s
        .sandbox()
        .sh("echo x > /dev/null && head -c 4 /dev/urandom | wc -c && head -c 2 /dev/zero | wc -c")
        .ok();
    assert_eq!(out.split_whitespace().collect::<Vec<_>>(), ["4", "2"]);
    // /dev/full opens for writing like outside; the write fails with ENOSPC, not EACCES.
    let code = "import os\nfd = os.open('/dev/full', os.O_WRONLY)\ntry:\n    os.write(fd, b'x')\nexcept OSError as e:\n    print(e.errno)";
    assert_eq!(
        s.sandbox().py(code, &[]).ok().trim(),
        libc::ENOSPC.to_string()
    );
}

#[test]
fn read_only_policy_writes_only_its_private_tmp() {
    let s = Scratch::new();
    let out = s
        .sandbox()
        .flags(["--policy", "read-only"])
        .sh(
            "echo secret > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo \"$TMPDIR\"; \
             echo x > ws-file; echo x > /tmp/shellgate-ro-test-$$; ls /tmp/shellgate-ro-test-$$",
        )
        .0;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("secret"));
    let private = lines.next().expect("TMPDIR printed");
    assert_ne!(
        private,
        s.tmpdir.to_str().unwrap(),
        "read-only must not use the host TMPDIR"
    );
    assert!(!out.status.success(), "the /tmp write must fail");
    assert!(!s.ws.join("ws-file").exists());
    // The private tmpfs is gone with the sandbox: nothing leaked to the host.
    assert!(!std::path::Path::new(private).join("t").exists());
}

#[test]
fn default_workspace_is_the_git_toplevel() {
    let s = Scratch::new();
    s.git_repo();
    let sub = s.ws.join("sub");
    fs::create_dir(&sub).unwrap();
    Run::bare(&s).cwd(&sub).sh("echo top > ../top-file").ok();
    assert_eq!(read(&s.ws.join("top-file")).as_deref(), Some("top\n"));
    Run::bare(&s)
        .cwd(&sub)
        .sh(&format!("echo x > {}/f", s.outside.display()))
        .program_failed();
    assert!(!s.outside.join("f").exists());
}

// ---------------------------------------------------------------------------------------------
// Protected paths inside the writable workspace.

#[test]
fn git_works_inside_while_hooks_and_config_stay_read_only() {
    let s = Scratch::new();
    // A first sandboxed run creates the repository from nothing.
    s.sandbox()
        .sh("git init -q -b main && echo one > f && git add f && git commit -qm one")
        .ok();
    let config = read(&s.ws.join(".git/config")).unwrap();
    // A second run works in the existing repository: commits and branch switches succeed ...
    s.sandbox()
        .sh(
            "echo two >> f && git commit -qam two && git checkout -qb feature \
             && git checkout -q main && git log --oneline | wc -l",
        )
        .ok();
    // ... while git's executable configuration cannot be touched.
    s.sandbox()
        .sh("echo '#!/bin/sh' > .git/hooks/pre-commit")
        .program_failed();
    s.sandbox()
        .sh("printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config")
        .program_failed();
    s.sandbox()
        .sh("git config core.fsmonitor evil")
        .program_failed();
    s.sandbox().sh("rm -rf .git/hooks").program_failed();
    // Renaming .git away to plant a fresh one fails too.
    s.sandbox().sh("mv .git old-git").program_failed();
    assert!(!s.ws.join(".git/hooks/pre-commit").exists());
    assert!(s.ws.join(".git/hooks").is_dir());
    assert!(!s.ws.join("old-git").exists());
    assert_eq!(read(&s.ws.join(".git/config")).unwrap(), config);
    let log = Command::new("git")
        .args(["log", "--oneline", "main"])
        .current_dir(&s.ws)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 2);
}

#[test]
fn inherited_directory_fd_cannot_reach_under_the_read_only_binds() {
    let s = Scratch::new();
    s.git_repo();
    let config = read(&s.ws.join(".git/config")).unwrap();
    // fd 3 is opened on the workspace *before* the sandbox's mount namespace exists.
    let script = format!(
        "exec 3< {ws}; {SHELLGATE} sandbox --workspace {ws} -- \
         sh -c 'echo evil >> /proc/self/fd/3/.git/config; cd /proc/self/fd/3 && echo evil >> .git/config'",
        ws = s.ws.display()
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(read(&s.ws.join(".git/config")).unwrap(), config);
}

#[test]
fn missing_hooks_dir_cannot_be_created() {
    let s = Scratch::new();
    s.git_repo();
    fs::remove_dir_all(s.ws.join(".git/hooks")).unwrap();
    s.sandbox()
        .sh("mkdir -p .git/hooks; echo evil > .git/hooks/post-checkout")
        .program_failed();
    assert!(!s.ws.join(".git/hooks/post-checkout").exists());
}

#[test]
fn shell_startup_and_project_files_stay_read_only() {
    let s = Scratch::new();
    for name in [
        ".bashrc",
        ".zshenv",
        ".profile",
        ".gitmodules",
        ".shellgate.toml",
    ] {
        fs::write(s.ws.join(name), "original\n").unwrap();
    }
    for name in [
        ".bashrc",
        ".zshenv",
        ".profile",
        ".gitmodules",
        ".shellgate.toml",
    ] {
        s.sandbox()
            .sh(&format!("echo evil >> {name}"))
            .program_failed();
        s.sandbox().sh(&format!("rm -f {name}")).program_failed();
        s.sandbox()
            .sh(&format!("echo evil > new && mv new {name}"))
            .program_failed();
        assert_eq!(
            read(&s.ws.join(name)).as_deref(),
            Some("original\n"),
            "{name}"
        );
    }
    // Ordinary files next to them remain writable.
    s.sandbox().sh("echo fine > .bashrc-notes").ok();
}

#[test]
fn linked_worktree_git_dirs_are_protected_and_commits_work() {
    let s = Scratch::new();
    s.git_repo();
    let wt = s.root.join("wt");
    s.git(
        &s.ws,
        &["worktree", "add", "-q", wt.to_str().unwrap(), "-b", "wt"],
    );
    let common = s.ws.join(".git");
    let config = read(&common.join("config")).unwrap();
    let run = |script: &str| {
        let mut run = Run::bare(&s);
        run.flags(["--workspace".as_ref(), wt.as_os_str()]).cwd(&wt);
        run.sh(script)
    };
    run("echo wt > w && git add w && git commit -qm in-worktree").ok();
    run(&format!(
        "echo '[core] fsmonitor = evil' >> {}/config",
        common.display()
    ))
    .program_failed();
    run(&format!("touch {}/hooks/pre-commit", common.display())).program_failed();
    run("echo 'gitdir: /elsewhere' > .git").program_failed();
    assert_eq!(read(&common.join("config")).unwrap(), config);
    assert!(!common.join("hooks/pre-commit").exists());
    assert!(read(&wt.join(".git")).unwrap().starts_with("gitdir: "));
}

#[test]
fn workspace_inside_tmp_cannot_be_renamed_away() {
    let dir = tempfile::Builder::new()
        .prefix("shellgate-pin-")
        .tempdir_in("/tmp")
        .unwrap();
    let ws = dir.path().join("ws");
    fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(ws.join(".git/config"), "").unwrap();
    let moved = dir.path().join("moved");
    let out = Command::new(SHELLGATE)
        .args(["sandbox", "--workspace"])
        .arg(&ws)
        .args(["--", "mv"])
        .arg(&ws)
        .arg(&moved)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(ws.join(".git/config").exists());
    assert!(!moved.exists());
}

#[test]
fn git_paths_stay_protected_after_head_is_moved_away() {
    let s = Scratch::new();
    s.git_repo();
    let config = read(&s.ws.join(".git/config")).unwrap();
    // Line 1 hides HEAD (allowed: .git is only pinned, not read-only) ...
    s.sandbox().sh("mv .git/HEAD head-aside").ok();
    // ... line 2 must still find .git/config and .git/hooks protected.
    s.sandbox()
        .sh("echo '#!/bin/sh' > .git/hooks/pre-commit")
        .program_failed();
    s.sandbox()
        .sh("printf '[core]\\n\\tfsmonitor = evil\\n' >> .git/config")
        .program_failed();
    s.sandbox().sh("mv head-aside .git/HEAD").ok();
    assert!(!s.ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(read(&s.ws.join(".git/config")).unwrap(), config);
}

#[test]
fn submodule_git_dir_stays_protected_after_its_head_is_moved_away() {
    let s = Scratch::new();
    s.git_repo();
    let module = s.ws.join(".git/modules/lib");
    fs::create_dir_all(module.join("hooks")).unwrap();
    fs::write(module.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(module.join("config"), "[core]\n").unwrap();
    s.sandbox().sh("mv .git/modules/lib/HEAD head-aside").ok();
    s.sandbox()
        .sh("echo '\tfsmonitor = evil' >> .git/modules/lib/config")
        .program_failed();
    s.sandbox()
        .sh("touch .git/modules/lib/hooks/post-checkout")
        .program_failed();
    assert_eq!(read(&module.join("config")).as_deref(), Some("[core]\n"));
    assert!(!module.join("hooks/post-checkout").exists());
}

#[test]
fn unreadable_git_dir_refuses_instead_of_unprotecting() {
    let Some(nobody) = Nobody::new() else {
        return;
    };
    let config = read(&nobody.ws.join(".git/config")).unwrap();
    // Line 1: make .git unsearchable for its owner (allowed: chmod is not a write).
    let out = nobody.sandbox("chmod 000 .git");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // Line 2: the launcher cannot tell what exists in .git, so it must not run anything.
    let out = nobody
        .sandbox("chmod 755 .git; echo '\tfsmonitor = evil' >> .git/config; touch .git/hooks/x");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(SANDBOX_UNAVAILABLE), "{stderr}");
    assert!(stderr.contains("cannot check protected path"), "{stderr}");
    nobody.chmod(".git", 0o755);
    assert_eq!(read(&nobody.ws.join(".git/config")).unwrap(), config);
    assert!(!nobody.ws.join(".git/hooks/x").exists());
}

#[test]
fn the_root_directory_is_never_a_writable_root() {
    let s = Scratch::new();
    let marker = s.outside.join("marker");
    let touch = format!("touch {}", marker.display());
    let stderr = Run::bare(&s)
        .flags(["--workspace", "/"])
        .sh(&touch)
        .refused();
    assert!(stderr.contains("whole filesystem"), "{stderr}");
    // The workspace derived from a working directory of `/` (e.g. a deleted one replaced by /).
    Run::bare(&s).cwd("/".as_ref()).sh(&touch).refused();
    s.sandbox().flags(["--writable", "/"]).sh(&touch).refused();
    assert!(!marker.exists());
    // The library refuses it too, for every caller.
    let error = Spec::new(SandboxPolicy::WorkspaceWrite, "/".as_ref()).unwrap_err();
    assert_eq!(error.code, Code::SandboxUnavailable);
}

#[test]
fn tmpdir_outside_the_temp_dirs_does_not_become_writable() {
    let s = Scratch::new();
    // `export TMPDIR=$HOME` in the agent's shell must not make $HOME writable for later lines.
    let out = s
        .sandbox()
        .env("TMPDIR", &s.home)
        .sh("echo x > \"$TMPDIR/planted\"");
    out.program_failed();
    assert!(!s.home.join("planted").exists());
    assert!(
        out.stderr().contains("TMPDIR") && out.stderr().contains("sandbox.writable"),
        "the launcher says why: {}",
        out.stderr()
    );
    // Nor through a symlink that lives under /tmp.
    let link_dir = tempfile::Builder::new()
        .prefix("shellgate-tmpdir-link-")
        .tempdir_in("/tmp")
        .unwrap();
    let link = link_dir.path().join("home");
    std::os::unix::fs::symlink(&s.home, &link).unwrap();
    s.sandbox()
        .env("TMPDIR", &link)
        .sh("echo x > \"$TMPDIR/planted\"")
        .program_failed();
    assert!(!s.home.join("planted").exists());
}

#[test]
fn the_password_database_home_is_protected_whatever_home_says() {
    if !sandbox_is_root() || which("unshare").is_err() {
        eprintln!("needs root and unshare; skipping");
        return;
    }
    let s = Scratch::new();
    // The real home (per /etc/passwd) lies beneath the workspace; $HOME names somewhere else.
    let real_home = s.ws.join("me");
    fs::create_dir_all(&real_home).unwrap();
    fs::write(real_home.join(".bashrc"), "original\n").unwrap();
    let passwd = s.root.join("passwd");
    fs::write(
        &passwd,
        format!("root:x:0:0:root:{}:/bin/sh\n", real_home.display()),
    )
    .unwrap();
    // A private mount namespace (outside the sandbox) with that passwd file in place.
    let script = format!(
        "mount --bind {passwd} /etc/passwd || exit 90; \
         [ \"$(getent passwd 0 | cut -d: -f6)\" = {home} ] || exit 91; \
         exec {SHELLGATE} sandbox --workspace {ws} -- sh -c 'echo evil >> {home}/.bashrc'",
        passwd = passwd.display(),
        home = real_home.display(),
        ws = s.ws.display()
    );
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .env("HOME", &s.home)
        .output()
        .unwrap();
    if matches!(out.status.code(), Some(90 | 91)) {
        eprintln!("cannot fake the password database here; skipping");
        return;
    }
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        read(&real_home.join(".bashrc")).as_deref(),
        Some("original\n")
    );
}

#[test]
fn deleted_working_directory_is_refused() {
    let s = Scratch::new();
    s.git_repo();
    // A working directory that cannot be re-resolved after the mounts stays on the mount *under*
    // the pins and read-only binds. (From this one, `..` happens to cross back into the pin: the
    // kernel follows a mount when `..` lands on its mount point.) Refuse rather than run there.
    let script = format!(
        "mkdir {ws}/.git/gone && cd {ws}/.git/gone && rmdir {ws}/.git/gone && \
         exec {SHELLGATE} sandbox --workspace {ws} -- touch {ws}/ran",
        ws = s.ws.display()
    );
    let out = Outcome(Command::new("sh").args(["-c", &script]).output().unwrap());
    let stderr = out.refused();
    assert!(stderr.contains("working directory"), "{stderr}");
    assert!(!s.ws.join("ran").exists());
    // Re-resolved, a working directory inside a protected directory is the read-only bind.
    let hooks = s.ws.join(".git/hooks");
    s.sandbox()
        .cwd(&hooks)
        .sh("echo '#!/bin/sh' > pre-commit")
        .program_failed();
    assert!(!hooks.join("pre-commit").exists());
}

#[test]
fn inherited_file_fds_on_protected_paths_cannot_be_reopened_for_writing() {
    let s = Scratch::new();
    s.git_repo();
    let config = read(&s.ws.join(".git/config")).unwrap();
    let hook = s.ws.join(".git/hooks/post-checkout");
    fs::write(&hook, "#!/bin/sh\n").unwrap();
    // Read-only fds opened before the sandbox, reopened for writing through /proc inside.
    let script = format!(
        "exec 3< {ws}/.git/config 4< {hook}; {SHELLGATE} sandbox --workspace {ws} -- \
         sh -c 'echo evil >> /proc/self/fd/3; echo evil >> /proc/self/fd/4'",
        ws = s.ws.display(),
        hook = hook.display()
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(read(&s.ws.join(".git/config")).unwrap(), config);
    assert_eq!(read(&hook).as_deref(), Some("#!/bin/sh\n"));
    // A standard stream on a protected file cannot be closed: the launcher refuses.
    fs::write(s.ws.join(".bashrc"), "original\n").unwrap();
    let script = format!(
        "{SHELLGATE} sandbox --workspace {ws} -- sh -c 'echo evil >> /proc/self/fd/0' \
         < {ws}/.bashrc",
        ws = s.ws.display()
    );
    let out = Outcome(Command::new("sh").args(["-c", &script]).output().unwrap());
    let stderr = out.refused();
    assert!(stderr.contains("stdin"), "{stderr}");
    assert_eq!(read(&s.ws.join(".bashrc")).as_deref(), Some("original\n"));
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

fn tcp_denied(addr: &str) {
    let s = Scratch::new();
    let listener = tcp_listener(addr);
    let local = listener.local_addr().unwrap();
    let out = s.sandbox().py(
        TCP_CONNECT,
        &[&local.ip().to_string(), &local.port().to_string()],
    );
    assert_eq!(out.code(), Some(3), "{} {}", out.stdout(), out.stderr());
    // EPERM from seccomp (first layer); Landlock's TCP rule would answer EACCES.
    assert_eq!(out.stdout().trim(), "denied 1");
    assert_no_connection(&listener);
}

fn udp_denied(addr: &str) {
    let s = Scratch::new();
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

#[test]
fn tcp_connect_ipv4_is_denied() {
    tcp_denied("127.0.0.1:0");
}

#[test]
fn tcp_connect_ipv6_is_denied() {
    tcp_denied("[::1]:0");
}

#[test]
fn udp_send_ipv4_is_denied() {
    udp_denied("127.0.0.1:0");
}

#[test]
fn udp_send_ipv6_is_denied() {
    udp_denied("[::1]:0");
}

#[test]
fn network_flag_allows_tcp_connect() {
    let s = Scratch::new();
    let listener = tcp_listener("127.0.0.1:0");
    let port = listener.local_addr().unwrap().port().to_string();
    let out = s
        .sandbox()
        .flag("--network")
        .py(TCP_CONNECT, &["127.0.0.1", &port]);
    assert_eq!(out.stdout().trim(), "connected", "{}", out.stderr());
    listener.set_nonblocking(false).unwrap();
    let (mut stream, _) = listener.accept().expect("the connection arrived");
    let mut got = String::new();
    use std::io::Read;
    stream.read_to_string(&mut got).unwrap();
    assert_eq!(got, "hello");
}

#[test]
fn unix_socketpair_works_without_network() {
    let s = Scratch::new();
    let code = "\
import os, socket
for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
    a, b = socket.socketpair(socket.AF_UNIX, kind)
    a.send(b'ping')
    os.write(a.fileno(), b'!')
    print(b.recv(4).decode() + b.recv(1).decode())
";
    assert_eq!(s.sandbox().py(code, &[]).ok(), "ping!\nping!\n");
}

// ---------------------------------------------------------------------------------------------
// seccomp: calls that fail with EPERM.

#[test]
fn ptrace_and_io_uring_fail_with_eperm() {
    let s = Scratch::new();
    let code = "\
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def errno_of(ret):
    return ctypes.get_errno() if ret == -1 else 0
print('ptrace', errno_of(libc.ptrace(ctypes.c_long(0), 0, None, None)))
params = ctypes.create_string_buffer(120)
print('io_uring_setup', errno_of(libc.syscall(ctypes.c_long(425), 1, params)))
print('process_vm_readv', errno_of(libc.syscall(ctypes.c_long(310 if os.uname().machine == 'x86_64' else 270), os.getppid(), None, 0, None, 0, 0)))
";
    let out = s.sandbox().py(code, &[]).ok();
    assert_eq!(out, "ptrace 1\nio_uring_setup 1\nprocess_vm_readv 1\n");
}

/// Makes a fresh pty the *controlling* terminal (TIOCSTI on any other tty needs CAP_SYS_ADMIN,
/// which would hide whether seccomp blocks it), then tries to inject a byte.
const TIOCSTI_PROBE: &str = "\
import fcntl, os, termios, tty
try:
    os.setsid()
except PermissionError:
    pass
master, slave = os.openpty()
tty_fd = os.open(os.ttyname(slave), os.O_RDWR)
fcntl.ioctl(tty_fd, termios.TIOCSCTTY, 0)
tty.setraw(tty_fd)
try:
    fcntl.ioctl(tty_fd, termios.TIOCSTI, b'X')
    result = 'allowed'
except PermissionError:
    result = 'eperm'
os.set_blocking(tty_fd, False)
try:
    injected = os.read(tty_fd, 1).decode()
except BlockingIOError:
    injected = ''
print(result, repr(injected))
";

#[test]
fn tiocsti_fails_with_eperm_and_injects_nothing() {
    let s = Scratch::new();
    // Control: outside the sandbox (as root) the probe does inject, so it can tell.
    let control = Command::new(PYTHON)
        .args(["-c", TIOCSTI_PROBE])
        .output()
        .unwrap();
    let control = String::from_utf8_lossy(&control.stdout).into_owned();
    let out = s.sandbox().py(TIOCSTI_PROBE, &[]).ok();
    assert_eq!(out.trim(), "eperm ''");
    if control.trim() != "allowed 'X'" {
        eprintln!("note: TIOCSTI is refused outside the sandbox too here: {control}");
    }
}

#[test]
fn namespaces_cannot_be_created_inside() {
    let s = Scratch::new();
    let code = "\
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for name, flag in (('user', 0x10000000), ('mount', 0x00020000), ('net', 0x40000000)):
    ret = libc.unshare(flag)
    print(name, ctypes.get_errno() if ret == -1 else 0)
";
    assert_eq!(s.sandbox().py(code, &[]).ok(), "user 1\nmount 1\nnet 1\n");
}

// ---------------------------------------------------------------------------------------------
// Processes: signals, children, nesting, status.

#[test]
fn signal_to_a_process_outside_fails() {
    let s = Scratch::new();
    let mut outside = Command::new("sleep").arg("30").spawn().unwrap();
    let out = s.sandbox().sh(&format!("kill -TERM {}", outside.id()));
    out.program_failed();
    std::thread::sleep(Duration::from_millis(100));
    let still_running = outside.try_wait().unwrap().is_none();
    outside.kill().unwrap();
    outside.wait().unwrap();
    assert!(
        still_running,
        "the outside process was killed from the sandbox"
    );
    // Inside the sandbox, signals between its own processes still work.
    let inside = s
        .sandbox()
        .sh("sleep 30 & kill -TERM $!; wait $!; echo $?")
        .ok();
    assert_eq!(inside.trim(), "143");
}

#[test]
fn children_inherit_the_sandbox() {
    let s = Scratch::new();
    let target = s.outside.join("from-grandchild");
    let out = s.sandbox().py(
        "import subprocess, sys\n\
         r = subprocess.run(['sh', '-c', 'sh -c \"echo x > ' + sys.argv[1] + '\"'])\n\
         print(r.returncode)",
        &[target.to_str().unwrap()],
    );
    assert_ne!(out.ok().trim(), "0");
    assert!(!target.exists());
}

#[test]
fn nested_sandbox_can_only_narrow() {
    let s = Scratch::new();
    s.git_repo();
    let inner = |flags: &str, script: &str| {
        format!(
            "{SHELLGATE} sandbox --workspace {} {flags} -- sh -c '{script}'",
            s.ws.display()
        )
    };
    // Widening attempt: the inner sandbox asks for `outside` to be writable.
    let widen = inner(
        &format!("--writable {}", s.outside.display()),
        &format!("echo x > {}/f", s.outside.display()),
    );
    s.sandbox().sh(&widen).program_failed();
    assert!(!s.outside.join("f").exists());
    // Narrowing: read-only inside workspace-write makes the workspace read-only.
    let narrow = inner("--policy read-only", "echo x > narrowed");
    s.sandbox().sh(&narrow).program_failed();
    assert!(!s.ws.join("narrowed").exists());
    // Same workspace again: protected paths are already read-only mounts and stay so.
    let same = inner("", "echo ok > nested-ok; echo evil >> .git/config");
    s.sandbox().sh(&same).program_failed();
    assert!(s.ws.join("nested-ok").exists());
    assert!(!read(&s.ws.join(".git/config")).unwrap().contains("evil"));
    // Network cannot be regained either.
    let listener = tcp_listener("127.0.0.1:0");
    let port = listener.local_addr().unwrap().port();
    let regain = format!(
        "{SHELLGATE} sandbox --workspace {} --network -- {PYTHON} -c \"$PROBE\" 127.0.0.1 {port}",
        s.ws.display()
    );
    let out = s.sandbox().env("PROBE", TCP_CONNECT).sh(&regain);
    assert_eq!(out.code(), Some(3), "{} {}", out.stdout(), out.stderr());
    assert_no_connection(&listener);
}

#[test]
fn exit_status_propagates() {
    let s = Scratch::new();
    assert_eq!(s.sandbox().sh("exit 7").code(), Some(7));
    assert_eq!(
        s.sandbox().run("/bin/false", [] as [&str; 0]).code(),
        Some(1)
    );
}

#[test]
fn signal_death_propagates() {
    let s = Scratch::new();
    let out = s.sandbox().sh("kill -TERM $$");
    assert_eq!(out.signal(), Some(libc::SIGTERM));
    let out = s.sandbox().sh("kill -KILL $$");
    assert_eq!(out.signal(), Some(libc::SIGKILL));
}

#[test]
fn no_new_privs_no_capabilities_and_marker_inside() {
    let s = Scratch::new();
    let out = s
        .sandbox()
        .sh(
            "grep -E '^(NoNewPrivs|CapInh|CapPrm|CapEff|CapBnd|CapAmb|Seccomp|SigIgn):' \
             /proc/self/status; echo marker=$SHELLGATE_SANDBOXED; env | grep -c REPORT_FD",
        )
        .0;
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .map(str::trim)
            .unwrap_or_else(|| panic!("{name} missing in {text}"))
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
        "SIGPIPE must not stay ignored"
    );
    assert!(text.contains("marker=workspace-write"));
    assert!(
        text.trim_end().ends_with('0'),
        "the report fd variable leaked: {text}"
    );
}

#[test]
fn file_capabilities_grant_nothing_inside() {
    if !sandbox_is_root() || which("setcap").is_err() {
        eprintln!("needs root and setcap; skipping");
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("shellgate-fcap-")
        .tempdir_in("/tmp")
        .unwrap();
    let cat = dir.path().join("cat");
    fs::copy("/bin/cat", &cat).unwrap();
    let setcap = Command::new(which("setcap").unwrap())
        .args(["cap_dac_override,cap_sys_admin+ep"])
        .arg(&cat)
        .status()
        .unwrap();
    assert!(setcap.success());
    let caps = |out: &[u8]| {
        String::from_utf8_lossy(out)
            .lines()
            .filter(|l| l.starts_with("CapEff:") || l.starts_with("CapPrm:"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // Control: outside, the file capabilities are granted (unless /tmp is mounted nosuid).
    let control = Command::new(&cat)
        .arg("/proc/self/status")
        .output()
        .unwrap();
    if caps(&control.stdout)
        .iter()
        .all(|l| l.ends_with("0000000000000000"))
    {
        eprintln!("file capabilities are not honoured on /tmp here; skipping");
        return;
    }
    let s = Scratch::new();
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
    let s = Scratch::new();
    let out = s
        .sandbox()
        .stdin(b"line one\nline two\n")
        .run("cat", [] as [&str; 0]);
    assert_eq!(out.ok(), "line one\nline two\n");
}

#[test]
fn the_terminal_works_inside() {
    let Ok(script) = which("script") else {
        eprintln!("script (util-linux) not installed; skipping");
        return;
    };
    let s = Scratch::new();
    // `script` gives the launcher a real pty as its controlling terminal.
    let inner = format!(
        "{SHELLGATE} sandbox --workspace {} -- sh -c 'tty; stty size >/dev/null && echo stty-ok; \
         echo via-dev-tty > /dev/tty'",
        s.ws.display()
    );
    let out = Command::new(script)
        .args(["-qec", &inner, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("/dev/pts/"), "{text}");
    assert!(text.contains("stty-ok"), "{text}");
    assert!(text.contains("via-dev-tty"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// Failing closed, and shellgate's own failures.

#[test]
fn missing_landlock_refuses_and_runs_nothing() {
    let s = Scratch::new();
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
    let s = Scratch::new();
    let out = s
        .sandbox()
        .env("SHELLGATE_LANDLOCK_ABI_MAX", "5")
        .sh("touch marker");
    let stderr = out.refused();
    assert!(stderr.contains("--drop-protection scope"), "{stderr}");
    assert!(!s.ws.join("marker").exists());
    // Dropping it explicitly runs, still confined otherwise.
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
    let s = Scratch::new();
    let out = s
        .sandbox()
        .env("SHELLGATE_LANDLOCK_ABI_MAX", "lots")
        .sh("touch marker");
    out.refused();
    assert!(!s.ws.join("marker").exists());
}

#[test]
fn missing_namespaces_refuse_when_paths_need_protection() {
    let s = Scratch::new();
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
        .sh("touch marker")
        .ok();
    assert!(s.ws.join("marker").exists());
}

#[test]
fn unstartable_program_exits_212() {
    let s = Scratch::new();
    let out = s
        .sandbox()
        .run("no-such-program-shellgate-test", [] as [&str; 0]);
    assert_eq!(out.code(), Some(SANDBOX_EXEC_FAILED));
    assert_eq!(out.stderr().lines().count(), 1);
    assert!(out.stderr().contains("no such program"));
}

#[test]
fn full_access_is_not_a_sandbox_policy() {
    let s = Scratch::new();
    let out = s
        .sandbox()
        .flags(["--policy", "full-access"])
        .sh("touch marker");
    assert_eq!(out.code(), Some(2));
    assert!(!s.ws.join("marker").exists());
}

#[test]
fn doctor_reports_an_enforceable_default() {
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("shellgate/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, "mode = \"ask\"\n").unwrap();
    let out = Command::new(SHELLGATE)
        .args(["doctor", "--json"])
        .env("XDG_CONFIG_HOME", home.path())
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
    assert_eq!(report["default_policy_enforceable"], true);
    assert!(report["landlock"]["effective"].as_u64().unwrap() >= 6);
    assert!(
        report["probes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["ok"] == true)
    );
    assert_eq!(
        report["config_files"],
        serde_json::json!([config.to_str().unwrap()])
    );
    let protections = report["protections"].as_array().unwrap();
    assert_eq!(protections.len(), 5);
    assert!(protections.iter().all(|p| p["enforceable"] == true));
    // And it says no when the default cannot be enforced.
    let refused = Command::new(SHELLGATE)
        .args(["doctor"])
        .env("SHELLGATE_LANDLOCK_ABI_MAX", "0")
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(SANDBOX_UNAVAILABLE));
}

#[test]
fn doctor_shows_what_the_workspace_leaves_unprotected_without_creating_anything() {
    let s = Scratch::new();
    s.git_repo();
    fs::remove_dir_all(s.ws.join(".git/hooks")).unwrap();
    fs::write(s.ws.join(".bashrc"), "").unwrap();
    let out = Command::new(SHELLGATE)
        .args(["doctor", "--json"])
        .current_dir(&s.ws)
        .env("HOME", &s.home)
        .env("TMPDIR", &s.home)
        .env_remove("SHELLGATE_LANDLOCK_ABI_MAX")
        .env_remove("SHELLGATE_SANDBOX_NO_NAMESPACES")
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let workspace = &report["workspace"];
    let listed = |key: &str, name: &str| {
        let path = s.ws.join(name);
        workspace[key]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p.as_str() == path.to_str())
    };
    assert_eq!(workspace["path"].as_str(), s.ws.to_str(), "{workspace}");
    assert!(listed("read_only", ".git/config"), "{workspace}");
    assert!(listed("read_only", ".git/hooks"), "{workspace}");
    assert!(listed("read_only", ".bashrc"), "{workspace}");
    assert!(listed("unenforced", ".gitmodules"), "{workspace}");
    assert!(listed("unenforced", ".shellgate.toml"), "{workspace}");
    assert_eq!(workspace["ignored_tmpdir"].as_str(), s.home.to_str());
    // Only a preview: the hooks dir the launcher would create is still missing.
    assert!(!s.ws.join(".git/hooks").exists());
}

// ---------------------------------------------------------------------------------------------
// The library API `run` uses.

fn spawn_in(s: &Scratch, spec: &Spec, script: &str, env: &[(&str, &str)]) -> sandbox::Running {
    let mut command =
        sandbox::command_with_launcher(SHELLGATE.as_ref(), spec, "/bin/sh", ["-c", script]);
    command
        .current_dir(&s.ws)
        .env("TMPDIR", &s.tmpdir)
        .stderr(std::process::Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    sandbox::spawn(command).expect("the launcher starts")
}

#[test]
fn spawn_tells_the_programs_status_from_the_launchers_failure() {
    let s = Scratch::new();
    let spec = Spec::new(SandboxPolicy::WorkspaceWrite, &s.ws).unwrap();
    // The program itself exits 211: that is its status, not a sandbox failure.
    let status = spawn_in(&s, &spec, "exit 211", &[]).wait().unwrap();
    assert_eq!(status.code(), Some(211));
    // The launcher refuses: the caller gets the error, with its code and reason.
    let error = spawn_in(
        &s,
        &spec,
        "touch marker",
        &[("SHELLGATE_LANDLOCK_ABI_MAX", "0")],
    )
    .wait()
    .unwrap_err();
    assert_eq!(error.code, Code::SandboxUnavailable);
    assert!(error.reason.contains("Landlock"), "{}", error.reason);
    assert!(!s.ws.join("marker").exists());
}

#[test]
fn spawn_reports_an_unstartable_program() {
    let s = Scratch::new();
    let spec = Spec::new(SandboxPolicy::WorkspaceWrite, &s.ws).unwrap();
    let mut command = sandbox::command_with_launcher(
        SHELLGATE.as_ref(),
        &spec,
        "no-such-program-shellgate-test",
        [] as [&str; 0],
    );
    command.stderr(std::process::Stdio::null());
    let error = sandbox::spawn(command).unwrap().wait().unwrap_err();
    assert_eq!(error.code, Code::SandboxExecFailed);
}

#[test]
fn spec_round_trips_through_the_launcher_arguments() {
    let s = Scratch::new();
    let spec = Spec::new(SandboxPolicy::WorkspaceWrite, &s.ws)
        .unwrap()
        .with_writable(&s.outside)
        .unwrap();
    // The extra writable root reaches the launcher.
    let target = s.outside.join("g");
    let script = format!("echo extra > {}", target.display());
    let mut running = spawn_in(&s, &spec, &script, &[]);
    running.started().unwrap();
    assert!(running.wait().unwrap().success());
    assert_eq!(read(&target).as_deref(), Some("extra\n"));
}

#[test]
fn unprivileged_user_gets_the_same_sandbox_through_a_user_namespace() {
    // Every other test already runs the user-namespace path when not root.
    let Some(nobody) = Nobody::new() else {
        return;
    };
    let out = nobody.sandbox(
        "echo ok > inside; echo evil >> .git/config; touch .git/hooks/x; \
         grep -E '^(CapEff|NoNewPrivs):' /proc/self/status",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("NoNewPrivs:\t1"),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("CapEff:\t0000000000000000"), "{stdout}");
    let ws = &nobody.ws;
    assert_eq!(read(&ws.join("inside")).as_deref(), Some("ok\n"));
    assert_eq!(read(&ws.join(".git/config")).as_deref(), Some("[core]\n"));
    assert!(!ws.join(".git/hooks/x").exists());
}
