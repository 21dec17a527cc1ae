//! Helpers for the sandbox conformance suite: a scratch area per test and a builder that runs a
//! real program under the real `shellgate sandbox` binary.
//!
//! The scratch area lives under `CARGO_TARGET_TMPDIR`, *not* under `/tmp`: `/tmp` is a writable
//! root of the workspace-write policy, so an "outside" directory there would not be outside.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub const SHELLGATE: &str = env!("CARGO_BIN_EXE_shellgate");
pub const PYTHON: &str = "/usr/bin/python3";

/// Exit statuses of shellgate's own failures (see `src/error.rs`).
pub const SANDBOX_UNAVAILABLE: i32 = 211;
pub const SANDBOX_EXEC_FAILED: i32 = 212;

/// One test's directories: `ws` (the workspace), `outside` (not writable), `tmpdir` (`$TMPDIR`)
/// and `home` (`$HOME`, outside every writable root).
///
/// `tmpdir` lives under `/var/tmp`: the launcher accepts `$TMPDIR` as a writable root only
/// beneath `/tmp`, `/var/tmp` or `/run/user/<uid>`, and one under `/tmp` would be writable anyway.
pub struct Scratch {
    _dir: tempfile::TempDir,
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub ws: PathBuf,
    pub outside: PathBuf,
    pub tmpdir: PathBuf,
    pub home: PathBuf,
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix("sandbox-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("scratch dir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical scratch dir");
        let sub = |name: &str| {
            let path = root.join(name);
            std::fs::create_dir_all(&path).expect("scratch subdir");
            path
        };
        let tmp = tempfile::Builder::new()
            .prefix("shellgate-test-tmpdir-")
            .tempdir_in("/var/tmp")
            .expect("scratch TMPDIR");
        Scratch {
            ws: sub("ws"),
            outside: sub("outside"),
            tmpdir: std::fs::canonicalize(tmp.path()).expect("canonical TMPDIR"),
            home: sub("home"),
            root,
            _dir: dir,
            _tmp: tmp,
        }
    }

    /// A sandbox run with `--workspace ws`, the scratch `$TMPDIR` and `$HOME`.
    pub fn sandbox(&self) -> Run {
        let mut run = Run::bare(self);
        run.flags(["--workspace".as_ref(), self.ws.as_os_str()]);
        run
    }

    /// Initialises `ws` as a git repository with one commit (outside any sandbox).
    pub fn git_repo(&self) {
        self.git(&self.ws, &["init", "-q", "-b", "main"]);
        std::fs::write(self.ws.join("README"), "hello\n").unwrap();
        self.git(&self.ws, &["add", "README"]);
        self.git(&self.ws, &["commit", "-qm", "initial"]);
    }

    /// Runs git outside the sandbox with the scratch identity.
    pub fn git(&self, dir: &Path, args: &[&str]) {
        let status = git_env(Command::new("git").args(args).current_dir(dir), &self.home)
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?} failed");
    }
}

fn git_env<'a>(command: &'a mut Command, home: &Path) -> &'a mut Command {
    command
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
}

/// A `shellgate sandbox` invocation being built.
pub struct Run {
    command: Command,
    stdin: Option<Vec<u8>>,
}

impl Run {
    /// No `--workspace`: the launcher resolves it from the working directory.
    pub fn bare(scratch: &Scratch) -> Run {
        let mut command = Command::new(SHELLGATE);
        command.arg("sandbox").current_dir(&scratch.ws);
        git_env(&mut command, &scratch.home).env("TMPDIR", &scratch.tmpdir);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("SHELLGATE_") {
                command.env_remove(key);
            }
        }
        Run {
            command,
            stdin: None,
        }
    }

    pub fn flags<I, S>(&mut self, flags: I) -> &mut Run
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command.args(flags);
        self
    }

    pub fn flag(&mut self, flag: &str) -> &mut Run {
        self.command.arg(flag);
        self
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

    /// Runs `program args` in the sandbox.
    pub fn run<I, S>(&mut self, program: &str, args: I) -> Outcome
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.command.arg("--").arg(program).args(args);
        self.command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            });
        let mut child = self.command.spawn().expect("shellgate starts");
        if let Some(bytes) = self.stdin.take() {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(&bytes).unwrap();
        }
        Outcome(child.wait_with_output().expect("shellgate finishes"))
    }

    /// `sh -c script` in the sandbox.
    pub fn sh(&mut self, script: &str) -> Outcome {
        self.run("/bin/sh", ["-c", script])
    }

    /// `python3 -c code args` in the sandbox.
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

    /// Asserts that the launcher refused to run anything: exit 211 (`SANDBOX_UNAVAILABLE`) and a
    /// single line on stderr naming the code. Returns that line for the test's own checks.
    #[track_caller]
    pub fn refused(&self) -> String {
        let stderr = self.stderr();
        assert_eq!(
            self.code(),
            Some(SANDBOX_UNAVAILABLE),
            "expected the launcher to refuse\nstdout: {}\nstderr: {stderr}",
            self.stdout()
        );
        assert_eq!(stderr.lines().count(), 1, "one line expected: {stderr}");
        assert!(
            stderr.starts_with("[shellgate] SANDBOX_UNAVAILABLE: "),
            "{stderr}"
        );
        stderr
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

/// Reads a file, or `None` when it does not exist.
pub fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Whether the tests run as root (some tests need it to set up their scene).
pub fn sandbox_is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A system program's path, when installed.
pub fn which(name: &str) -> Result<PathBuf, ()> {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|p| p.exists())
        .ok_or(())
}

/// The launcher run as `nobody` (uid 65534, through `setpriv`), so it takes the user-namespace
/// path and has no `CAP_DAC_OVERRIDE`: a git workspace and a copy of the binary under `/tmp`,
/// owned by `nobody`. Only when the tests run as root.
pub struct Nobody {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub ws: PathBuf,
    binary: PathBuf,
    setpriv: PathBuf,
}

impl Nobody {
    const ID: &str = "65534";

    /// `None` (and a note) when not root or `setpriv` is missing: the caller skips.
    pub fn new() -> Option<Nobody> {
        let setpriv = which("setpriv");
        if !sandbox_is_root() || setpriv.is_err() {
            eprintln!("needs root and setpriv; skipping");
            return None;
        }
        // Somewhere `nobody` can traverse.
        let dir = tempfile::Builder::new()
            .prefix("shellgate-nobody-")
            .tempdir_in("/tmp")
            .unwrap();
        let root = dir.path().to_path_buf();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        let binary = root.join("shellgate");
        std::fs::copy(SHELLGATE, &binary).unwrap();
        let owner = format!("{0}:{0}", Nobody::ID);
        let chown = Command::new("chown")
            .args(["-R", &owner])
            .arg(&root)
            .status()
            .unwrap();
        assert!(chown.success());
        Some(Nobody {
            _dir: dir,
            root,
            ws,
            binary,
            setpriv: setpriv.unwrap(),
        })
    }

    /// `shellgate sandbox --workspace ws -- sh -c script` as `nobody`, in `ws`.
    pub fn sandbox(&self, script: &str) -> Output {
        Command::new(&self.setpriv)
            .arg(format!("--reuid={}", Nobody::ID))
            .arg(format!("--regid={}", Nobody::ID))
            .args(["--clear-groups", "env"])
            .arg(format!("HOME={}", self.root.display()))
            .arg(&self.binary)
            .args(["sandbox", "--workspace"])
            .arg(&self.ws)
            .args(["--", "sh", "-c", script])
            .current_dir(&self.ws)
            .output()
            .unwrap()
    }

    /// `chmod` as root, outside any sandbox (to clean up after a test).
    pub fn chmod(&self, relative: &str, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            self.ws.join(relative),
            std::fs::Permissions::from_mode(mode),
        )
        .unwrap();
    }
}
