//! Fixtures for the sandbox conformance suite: a scene per test (a workspace, a directory outside
//! every writable root, a home), run as the test's own user and — when the tests run as root — as
//! `nobody` too, and a builder that runs a real program under the real `shellgate` binary or,
//! for the control, under no sandbox at all.
//!
//! **Where scenes live.** Not under `/tmp`, `/var/tmp` or `/dev/shm`: `/tmp` and `/var/tmp` are
//! writable roots of the workspace-write sandbox, so an "outside" directory there would not be
//! outside, and the sandbox has a private `/dev/shm`, so one there would not even be visible. The
//! base is `support::scratch_base` (`$SHELLGATE_TEST_SCRATCH`, else cargo's target dir when the
//! clone is not beneath a temp dir, else `/srv/shellgate-test-scratch` for root).
//!
//! **Controls.** [`conformance`] first runs an attack without the sandbox and requires its effect
//! to be seen from outside — so a check that cannot see the effect fails the test instead of
//! passing it — then runs it in the sandbox and requires that nothing happened.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The binary under test: `$SHELLGATE_TEST_BIN` when set (CI copies the binaries somewhere an
/// unprivileged user can read them, to run this suite as that user, and runs it against the
/// binary install.sh builds), else the one cargo built.
pub fn shellgate() -> PathBuf {
    std::env::var_os("SHELLGATE_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_shellgate")))
}
/// The system's Python (not a per-user shim another user could not run).
pub const PYTHON: &str = "/usr/bin/python3";

/// Exit statuses of shellgate's own failures (see `crates/core/src/error.rs`).
pub const SANDBOX_UNAVAILABLE: i32 = 211;
pub const SANDBOX_EXEC_FAILED: i32 = 212;
pub const SANDBOX_VIOLATION: i32 = 216;

/// Whose process runs the scene.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    /// The test process's own user (root in CI, or the unprivileged user CI creates).
    Me,
    /// `nobody` (uid and gid 65534), when the tests run as root: the user-namespace path, no
    /// capabilities at all.
    Nobody,
}

impl Who {
    pub const NOBODY: u32 = 65534;

    pub fn uid(self) -> u32 {
        match self {
            Who::Me => geteuid(),
            Who::Nobody => Who::NOBODY,
        }
    }

    pub fn is_root(self) -> bool {
        self.uid() == 0
    }

    /// Makes `command` run as this user (the test process must be root for `Nobody`).
    pub fn apply(self, command: &mut Command) {
        if self == Who::Nobody {
            let id = Who::NOBODY;
            // SAFETY: the closure runs between fork and exec and only calls setgroups, setresgid
            // and setresuid, which are async-signal-safe and touch no memory but their arguments.
            unsafe {
                command.pre_exec(move || {
                    if libc::setgroups(0, std::ptr::null()) != 0
                        || libc::setresgid(id, id, id) != 0
                        || libc::setresuid(id, id, id) != 0
                    {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
    }
}

/// The identities every conformance test runs as.
pub fn identities() -> Vec<Who> {
    if geteuid() == 0 {
        vec![Who::Me, Who::Nobody]
    } else {
        vec![Who::Me]
    }
}

pub fn geteuid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// The directory scenes are made in: the suite's one scratch base (see `support`).
pub fn scratch_base() -> &'static Path {
    crate::support::scratch_base()
}

/// A copy of the binary every identity can execute, outside every writable root: one per build
/// (named by the binary's size and modification time), shared by every test process of the run
/// and made by renaming a finished copy into place, so no test sees half a binary and the scratch
/// base holds one copy, not one per test.
pub fn binary() -> &'static Path {
    static COPY: OnceLock<PathBuf> = OnceLock::new();
    COPY.get_or_init(|| {
        use std::os::unix::fs::MetadataExt;
        let original = shellgate();
        let meta = std::fs::metadata(&original).unwrap();
        let dir = scratch_base().join(format!(
            "bin-{}-{}",
            meta.size(),
            meta.mtime_nsec() + meta.mtime() * 1_000_000_000
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let copy = dir.join("shellgate");
        if std::fs::metadata(&copy).is_ok_and(|m| m.len() == meta.size()) {
            return copy;
        }
        let partial = dir.join(format!("shellgate.partial-{}", std::process::id()));
        crate::support::copy_executable(&original, &partial);
        std::fs::rename(&partial, &copy).unwrap();
        copy
    })
}

/// One test's world, owned by `who`: `ws` (the workspace), `outside` (no writable root reaches
/// it), `home` (`$HOME`), `tmpdir` (an accepted `$TMPDIR` under `/var/tmp`), `victim` (a path the
/// git attacks try to make exist).
pub struct Scene {
    _dir: tempfile::TempDir,
    _tmp: tempfile::TempDir,
    pub who: Who,
    pub root: PathBuf,
    pub ws: PathBuf,
    pub outside: PathBuf,
    pub home: PathBuf,
    pub tmpdir: PathBuf,
    pub victim: PathBuf,
}

impl Scene {
    pub fn new(who: Who) -> Scene {
        let dir = tempfile::Builder::new()
            .prefix("scene-")
            .tempdir_in(scratch_base())
            .expect("scene dir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical scene dir");
        for sub in ["ws", "outside", "home"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
        }
        let tmp = tempfile::Builder::new()
            .prefix("shellgate-test-tmpdir-")
            .tempdir_in("/var/tmp")
            .expect("scratch TMPDIR");
        let tmpdir = std::fs::canonicalize(tmp.path()).unwrap();
        let scene = Scene {
            who,
            ws: root.join("ws"),
            outside: root.join("outside"),
            home: root.join("home"),
            victim: root.join("outside/VICTIM"),
            tmpdir,
            root,
            _dir: dir,
            _tmp: tmp,
        };
        scene.chown(&scene.root);
        scene.chown(&scene.tmpdir);
        std::fs::set_permissions(&scene.root, std::fs::Permissions::from_mode(0o755)).unwrap();
        scene
    }

    /// Gives `path` (recursively) to the scene's user.
    pub fn chown(&self, path: &Path) {
        if self.who == Who::Nobody {
            let owner = format!("{0}:{0}", Who::NOBODY);
            let ok = Command::new("chown")
                .args(["-R", &owner])
                .arg(path)
                .status()
                .unwrap()
                .success();
            assert!(ok, "chown {}", path.display());
        }
    }

    /// `mount --bind source at` (needs root), `at` made first.
    pub fn bind_mount(&self, source: &Path, at: &Path) {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .arg("--bind")
            .arg(source)
            .arg(at)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mount --bind {} {}", source.display(), at.display());
    }

    /// Unmounts `at` lazily (never busy, also after a run that failed half-way); nothing when it is
    /// not a mount any more.
    pub fn unmount(&self, at: &Path) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(at)
            .stderr(Stdio::null())
            .status();
    }

    /// Writes a file as the scene's user would have (creating parents).
    pub fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self.chown(path);
        if let Some(parent) = path.parent() {
            self.chown(parent);
        }
    }

    /// Initialises `ws` as a git repository with one commit.
    pub fn git_repo(&self) {
        self.git_in(&self.ws, &["init", "-q", "-b", "main"]);
        self.write(&self.ws.join("README"), "hello\n");
        self.git_in(&self.ws, &["add", "README"]);
        self.git_in(&self.ws, &["commit", "-qm", "initial"]);
    }

    /// Runs git outside any sandbox, as the scene's user, with the scene's home; asserts success.
    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git_output(dir, args);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs git outside any sandbox as the scene's user: whatever git outside would run, runs.
    pub fn git_output(&self, dir: &Path, args: &[&str]) -> Output {
        let mut command = Command::new("git");
        command.args(args).current_dir(dir);
        self.env(&mut command);
        self.who.apply(&mut command);
        command.stdin(Stdio::null()).output().expect("git runs")
    }

    fn env(&self, command: &mut Command) {
        command
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.home)
            .env("TMPDIR", &self.tmpdir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .env("XDG_CONFIG_HOME", self.root.join("config"))
            .env("XDG_STATE_HOME", self.root.join("state"));
    }

    /// `shellgate sandbox --workspace ws` as the scene's user, in `ws`.
    pub fn sandbox(&self) -> Run {
        let mut run = self.sandbox_auto();
        run.command.arg("--workspace").arg(&self.ws);
        run
    }

    /// `shellgate sandbox` with the workspace left to the resolver.
    pub fn sandbox_auto(&self) -> Run {
        self.sandbox_with(binary())
    }

    /// `shellgate sandbox --workspace ws` started from this copy of the binary.
    pub fn sandbox_with(&self, binary: &Path) -> Run {
        let mut command = Command::new(binary);
        command
            .arg0("shellgate")
            .arg("sandbox")
            .current_dir(&self.ws);
        self.env(&mut command);
        Run {
            command,
            who: self.who,
            sandboxed: true,
            stdin: None,
            stdin_file: None,
            extra_fd: None,
        }
    }

    /// The control: the same program as the same user with the same environment, no sandbox.
    pub fn bare(&self) -> Run {
        let mut command = Command::new("/usr/bin/env");
        command.current_dir(&self.ws);
        self.env(&mut command);
        Run {
            command,
            who: self.who,
            sandboxed: false,
            stdin: None,
            stdin_file: None,
            extra_fd: None,
        }
    }

    /// A process outside every sandbox (`sleep`), as the scene's user: a target for the attacks
    /// on other processes. Killed when dropped.
    pub fn bystander(&self) -> Bystander {
        let mut command = Command::new("/bin/sleep");
        command.arg("60").stdin(Stdio::null());
        self.who.apply(&mut command);
        Bystander(command.spawn().expect("sleep starts"))
    }
}

/// A process outside the sandbox.
pub struct Bystander(pub std::process::Child);

impl Bystander {
    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    /// A field of `/proc/<pid>/status`, or of `/proc/<pid>/limits` when `limits`.
    pub fn proc_text(&self, file: &str) -> String {
        std::fs::read_to_string(format!("/proc/{}/{file}", self.pid())).unwrap_or_default()
    }
}

impl Drop for Bystander {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A run being built: in the sandbox, or (the control) without one.
pub struct Run {
    pub command: Command,
    who: Who,
    sandboxed: bool,
    stdin: Option<Vec<u8>>,
    stdin_file: Option<std::fs::File>,
    extra_fd: Option<(std::fs::File, i32)>,
}

impl Run {
    pub fn flags<I, S>(&mut self, flags: I) -> &mut Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        assert!(self.sandboxed, "flags are for shellgate");
        self.command.args(flags);
        self
    }

    /// Whether this runs in the sandbox (not the control).
    pub fn is_sandboxed(&self) -> bool {
        self.sandboxed
    }

    pub fn env(&mut self, key: &str, value: impl AsRef<OsStr>) -> &mut Run {
        self.command.env(key, value);
        self
    }

    pub fn cwd(&mut self, dir: &Path) -> &mut Run {
        self.command.current_dir(dir);
        self
    }

    pub fn stdin(&mut self, bytes: &[u8]) -> &mut Run {
        self.stdin = Some(bytes.to_vec());
        self
    }

    /// Runs with `file` as standard input (as a calling shell's `< file` would).
    pub fn stdin_file(&mut self, file: std::fs::File) -> &mut Run {
        self.stdin_file = Some(file);
        self
    }

    /// Hands `file` to the program as descriptor `fd` (as a calling shell's `exec 7>>f` would).
    pub fn with_fd(&mut self, file: std::fs::File, fd: i32) -> &mut Run {
        self.extra_fd = Some((file, fd));
        self
    }

    /// Runs in a mount namespace of its own whose `/etc/hosts` is `hosts` (names the test makes
    /// up for loopback), when the test process is root: set up before the run drops to its user.
    /// `false` (nothing done) for an unprivileged test process.
    pub fn resolving(&mut self, hosts: &Path) -> bool {
        if geteuid() != 0 {
            return false;
        }
        crate::support::with_hosts_file(&mut self.command, hosts);
        true
    }

    /// Binds each `(source, target)` over its target for this run (root only; `false`
    /// otherwise, and nothing is bound).
    pub fn binding(&mut self, binds: &[(&Path, &Path)]) -> bool {
        if geteuid() != 0 {
            return false;
        }
        crate::support::with_binds(&mut self.command, binds);
        true
    }

    /// Runs `program args`.
    pub fn run<I, S>(&mut self, program: &str, args: I) -> Outcome
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        if self.sandboxed {
            self.command.arg("--");
        }
        self.command.arg(program).args(args);
        self.command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(match (&self.stdin, self.stdin_file.take()) {
                (Some(_), _) => Stdio::piped(),
                (None, Some(file)) => Stdio::from(file),
                (None, None) => Stdio::null(),
            });
        // Kept open in this process until the child has been spawned, then closed.
        let passed = self.extra_fd.take().map(|(file, target)| {
            use std::os::fd::AsRawFd;
            let raw = file.as_raw_fd();
            // SAFETY: dup2 and fcntl between fork and exec are async-signal-safe; `raw` is open
            // until after `spawn` (the `File` lives in `passed`). `dup2(fd, fd)` keeps the
            // close-on-exec flag, so a descriptor that already has the target number has the flag
            // cleared instead.
            unsafe {
                self.command.pre_exec(move || {
                    let done = if raw == target {
                        libc::fcntl(raw, libc::F_SETFD, 0)
                    } else {
                        libc::dup2(raw, target)
                    };
                    if done < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            file
        });
        self.who.apply(&mut self.command);
        let mut child = self.command.spawn().expect("the program starts");
        drop(passed);
        if let Some(bytes) = self.stdin.take() {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(&bytes).unwrap();
        }
        Outcome(child.wait_with_output().expect("the program finishes"))
    }

    /// `sh -c script`.
    pub fn sh(&mut self, script: &str) -> Outcome {
        self.run("/bin/sh", ["-c", script])
    }

    /// `python3 -c code args`.
    pub fn py(&mut self, code: &str, args: &[&str]) -> Outcome {
        let mut all = vec!["-c", code];
        all.extend_from_slice(args);
        self.run(PYTHON, all)
    }
}

/// A finished run.
pub struct Outcome(pub Output);

impl Outcome {
    pub fn code(&self) -> Option<i32> {
        self.0.status.code()
    }

    pub fn signal(&self) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        self.0.status.signal()
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }

    /// Asserts exit 0 and returns stdout.
    #[track_caller]
    pub fn ok(&self) -> String {
        assert_eq!(
            self.code(),
            Some(0),
            "expected success\nstdout: {}\nstderr: {}",
            self.stdout(),
            self.stderr()
        );
        self.stdout()
    }

    /// Asserts that shellgate refused to run anything with `code` (211 by default) and one line on
    /// stderr naming it. Returns that line.
    #[track_caller]
    pub fn refused_with(&self, code: i32, name: &str) -> String {
        let stderr = self.stderr();
        assert_eq!(
            self.code(),
            Some(code),
            "expected {name}\nstdout: {}\nstderr: {stderr}",
            self.stdout()
        );
        assert!(stderr.contains(&format!("{name}: ")), "{stderr}");
        stderr
    }

    #[track_caller]
    pub fn refused(&self) -> String {
        let line = self.refused_with(SANDBOX_UNAVAILABLE, "SANDBOX_UNAVAILABLE");
        assert_eq!(line.lines().count(), 1, "one line expected: {line}");
        line
    }

    /// Asserts a non-zero exit that is the *program's* (not shellgate's 211/212).
    #[track_caller]
    pub fn program_failed(&self) -> &Outcome {
        let code = self.code();
        assert!(
            code.is_some_and(|c| c != 0 && c != SANDBOX_UNAVAILABLE && c != SANDBOX_EXEC_FAILED),
            "expected the program to fail, got {code:?}\nstdout: {}\nstderr: {}",
            self.stdout(),
            self.stderr()
        );
        self
    }
}

/// One attack, run first as a control (no sandbox: its effect must be seen), then in the
/// sandbox (nothing may happen), for every identity in `who`.
pub struct Attack<'a> {
    pub name: &'a str,
    /// Which identities the attack applies to (its effect needs, for example, root).
    pub who: Vec<Who>,
    /// Prepares the scene, outside any sandbox.
    pub setup: &'a dyn Fn(&Scene),
    /// Runs the attack. `sandboxed` tells which half this is; `run` is the scene's runner for
    /// that half (`scene.sandbox()` or `scene.bare()`).
    pub act: &'a dyn Fn(&Scene, Run) -> Outcome,
    /// Looks from outside: `Some(what happened)` when the attack had its effect.
    pub effect: &'a dyn Fn(&Scene, &Outcome) -> Option<String>,
}

impl<'a> Attack<'a> {
    pub fn new(
        name: &'a str,
        setup: &'a dyn Fn(&Scene),
        act: &'a dyn Fn(&Scene, Run) -> Outcome,
        effect: &'a dyn Fn(&Scene, &Outcome) -> Option<String>,
    ) -> Attack<'a> {
        Attack {
            name,
            who: identities(),
            setup,
            act,
            effect,
        }
    }

    pub fn only(mut self, who: impl Fn(Who) -> bool) -> Attack<'a> {
        self.who.retain(|w| who(*w));
        self
    }
}

/// Runs `attack`'s control and sandboxed halves for each identity.
#[track_caller]
pub fn conformance(attack: Attack) {
    conformance_with(attack, |scene| scene.sandbox());
}

/// [`conformance`] with a sandboxed runner of the test's choosing.
#[track_caller]
pub fn conformance_with(attack: Attack, sandboxed: impl Fn(&Scene) -> Run) {
    assert!(
        !attack.who.is_empty(),
        "{}: no identity can run this attack here",
        attack.name
    );
    for who in &attack.who {
        let control = Scene::new(*who);
        (attack.setup)(&control);
        let outcome = (attack.act)(&control, control.bare());
        assert!(
            (attack.effect)(&control, &outcome).is_some(),
            "{} as {who:?}: the control (no sandbox) had no visible effect, so this test could \
             not tell an escape\nstdout: {}\nstderr: {}",
            attack.name,
            outcome.stdout(),
            outcome.stderr()
        );
        let scene = Scene::new(*who);
        (attack.setup)(&scene);
        let outcome = (attack.act)(&scene, sandboxed(&scene));
        if let Some(escape) = (attack.effect)(&scene, &outcome) {
            panic!(
                "{} as {who:?}: ESCAPED the sandbox: {escape}\nstdout: {}\nstderr: {}",
                attack.name,
                outcome.stdout(),
                outcome.stderr()
            );
        }
    }
}

/// Reads a file, or `None` when it does not exist.
pub fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// A system program's path, when installed.
pub fn which(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.exists())
}
