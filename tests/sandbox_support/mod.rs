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
pub struct Scratch {
    _dir: tempfile::TempDir,
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
        Scratch {
            ws: sub("ws"),
            outside: sub("outside"),
            tmpdir: sub("tmpdir"),
            home: sub("home"),
            root,
            _dir: dir,
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
