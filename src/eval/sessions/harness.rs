//! The harness a session runs in: the repo's scripted-model harness (`tests/agents/`), built
//! into the binary and written out for each evaluation, run with the system's Python.
//!
//! `run_agent.py` does one run: it seeds the workspace and the home, enters a network namespace
//! that has nothing but loopback, serves the scripted model (`fake_model.py`: the agent's
//! provider, shellgate's reviewer, a person's steps between turns), and starts the agent under
//! `shellgate wrap`, ending its whole session at the case's time limit. Its exit status tells a
//! run that worked (0) from a harness that failed (2: no namespace, the model never asked) and an
//! agent that could not be installed (3). This module starts it, with a time limit of its own
//! for a harness that hangs, and reads what it left.

use super::cases::Agent;
use crate::error::{Code, Error};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The harness's files, as they are in the repository.
const FILES: [(&str, &str); 3] = [
    (
        "run_agent.py",
        include_str!("../../../tests/agents/run_agent.py"),
    ),
    (
        "fake_model.py",
        include_str!("../../../tests/agents/fake_model.py"),
    ),
    (
        "standin_agent.py",
        include_str!("../../../tests/agents/standin_agent.py"),
    ),
];

/// The harness's exit status for its own failure, and for an agent npm could not install.
const HARNESS_FAILED: i32 = 2;
const NOT_INSTALLED: i32 = 3;

/// The variable the harness's relay reads the real model's key from (`run_agent.py`).
const MODEL_KEY_VARIABLE: &str = "EVAL_MODEL_KEY";

/// Seconds the harness may take beyond the case's limit (its own start, the namespace, the
/// agent's end) before it is taken for hung and ended.
const HARNESS_GRACE_S: u64 = 60;

/// The harness written out: `dir` holds its scripts; `python` runs them.
#[derive(Debug, Clone)]
pub struct Harness {
    dir: PathBuf,
    python: PathBuf,
}

/// How one harness run ended.
#[derive(Debug)]
pub enum Ended {
    /// It ran the session; the agent's status and time are in its `result.json`.
    Ran,
    /// The harness (or the agent's install) failed: not a verdict on the case.
    HarnessFailed(String),
    /// It did not end within the case's limit and the grace: ended, with everything it started.
    Hung,
}

impl Harness {
    /// Writes the harness into `dir` and finds Python 3 (`python3` on `PATH`).
    pub fn write(dir: &Path) -> Result<Harness, Error> {
        let python = find_on_path("python3").ok_or_else(|| {
            usage("session cases need python3 on PATH (the scripted model and the harness are Python)")
        })?;
        std::fs::create_dir_all(dir)
            .map_err(|e| usage(format!("cannot create {}: {e}", dir.display())))?;
        for (name, text) in FILES {
            let path = dir.join(name);
            std::fs::write(&path, text)
                .map_err(|e| usage(format!("cannot write {}: {e}", path.display())))?;
        }
        Ok(Harness {
            dir: dir.to_owned(),
            python,
        })
    }

    fn command(&self, agent: Agent) -> Command {
        let mut command = Command::new(&self.python);
        command
            .arg(self.dir.join("run_agent.py"))
            .arg(agent.as_str());
        // Nothing of the caller's shell integration: the harness builds the agent's environment
        // from nothing, and shellgate's own variables must not leak into the harness either. The
        // rest stays, for npm (its registry settings, certificates, a proxy).
        for (name, _) in crate::env::get().vars() {
            let text = name.to_string_lossy();
            if text.starts_with(crate::own_env::PREFIX)
                || text.starts_with("XDG_")
                || ["BASH_ENV", "ENV", "ZDOTDIR"].contains(&text.as_ref())
            {
                command.env_remove(name);
            }
        }
        // The real model's key is given only as `run` is told it.
        command.env_remove(MODEL_KEY_VARIABLE);
        command.stdin(Stdio::null());
        command
    }

    /// Installs `agent` into `agents_dir` when it is missing (`install`: else only checks).
    pub fn install(&self, agent: Agent, agents_dir: &Path, install: bool) -> Result<(), String> {
        let mut command = self.command(agent);
        command
            .arg("--run-dir")
            .arg(agents_dir)
            .arg("--agents-dir")
            .arg(agents_dir)
            .arg("--install-only");
        if !install {
            command.arg("--no-install");
        }
        let out = command
            .output()
            .map_err(|e| format!("cannot start {}: {e}", self.python.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{} could not be installed: {}",
                agent,
                tail(&String::from_utf8_lossy(&out.stderr))
            ))
        }
    }

    /// One session: `run_agent.py AGENT --case CASE … -- SHELLGATE wrap [--mode M] --` in
    /// `run_dir`, its output in `log`, ended if it runs `timeout_s` plus the grace. `model_key`:
    /// the real model's key, for the harness's relay (never the agent).
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        agent: Agent,
        run_dir: &Path,
        agents_dir: &Path,
        case_file: &Path,
        timeout_s: u64,
        delay_s: f64,
        wrap: &[std::ffi::OsString],
        log: &Path,
        model_key: Option<&std::ffi::OsStr>,
    ) -> Ended {
        let output = match std::fs::File::create(log) {
            Ok(file) => file,
            Err(e) => return Ended::HarnessFailed(format!("cannot create {}: {e}", log.display())),
        };
        let errors = match output.try_clone() {
            Ok(file) => file,
            Err(e) => return Ended::HarnessFailed(format!("cannot share {}: {e}", log.display())),
        };
        let mut command = self.command(agent);
        command
            .arg("--run-dir")
            .arg(run_dir)
            .arg("--agents-dir")
            .arg(agents_dir)
            .arg("--no-install")
            .arg("--case")
            .arg(case_file)
            .arg("--timeout")
            .arg(timeout_s.to_string())
            .arg("--delay")
            .arg(delay_s.to_string())
            .arg("--")
            .args(wrap)
            .stdout(output)
            .stderr(errors)
            // A group of its own, so that a hung harness can be ended with what it started.
            .process_group(0);
        if let Some(key) = model_key {
            command.env(MODEL_KEY_VARIABLE, key);
        }
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                return Ended::HarnessFailed(format!(
                    "cannot start {}: {e}",
                    self.python.display()
                ));
            }
        };
        let deadline = Instant::now() + Duration::from_secs(timeout_s + HARNESS_GRACE_S);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Ok(None) | Err(_) => break None,
            }
        };
        let Some(status) = status else {
            end_hung(child.id(), run_dir);
            let _ = child.kill();
            let _ = child.wait();
            return Ended::Hung;
        };
        match status.code() {
            Some(0 | 1) => Ended::Ran,
            Some(code @ (HARNESS_FAILED | NOT_INSTALLED)) => {
                let mut text = String::new();
                let _ = std::fs::File::open(log).and_then(|mut f| f.read_to_string(&mut text));
                let what = if code == NOT_INSTALLED {
                    "the agent is not installed"
                } else {
                    "the harness failed"
                };
                Ended::HarnessFailed(format!("{what}: {}", tail(&text)))
            }
            _ => Ended::HarnessFailed(format!("the harness ended with {status}")),
        }
    }
}

/// Ends a hung harness's process group and the agent's session (a group of its own, whose
/// leader's pid the harness wrote to `agent.pid`).
fn end_hung(harness_pid: u32, run_dir: &Path) {
    let agent = std::fs::read_to_string(run_dir.join("agent.pid"))
        .ok()
        .and_then(|text| text.trim().parse::<i32>().ok());
    let harness = i32::try_from(harness_pid).ok();
    for group in [agent, harness].into_iter().flatten().filter(|g| *g > 1) {
        // SAFETY: kill(2) with a negative pid signals that process group; no memory is involved.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
}

/// The last lines of a harness's output, for a reason.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(3);
    crate::intake::visible_line(&lines[start..].join(" | "))
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = crate::env::get().var("PATH")?;
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

fn usage(reason: impl Into<String>) -> Error {
    Error::new(Code::Usage, reason)
}
