//! The OS sandbox: Landlock + seccomp + read-only protected paths, entered by re-executing
//! shellgate as `shellgate sandbox <flags> -- PROGRAM ARGS`.
//!
//! A caller (possibly multi-threaded: tokio, an HTTP client) never restricts itself. It builds a
//! [`Spec`], gets a [`Command`] from [`command`] and spawns it, or uses [`spawn`] to also learn
//! reliably whether the *launcher* failed (exit 211/212) or the *program* ran and exited with
//! whatever status. The launcher process is single-threaded, applies every layer and `execvp`s
//! the program with nothing in between (see [`exec`]).
//!
//! Layout: [`policy`] (what to enforce), [`abi`] (what the kernel offers), `requirements`
//! (fail-closed decision), `protected` + `mounts` (protected paths), `caps`, `landlock`,
//! `seccomp`, `exec` (the launcher), [`support`] (detection for `doctor`/`status`).

pub mod abi;
mod caps;
pub mod exec;
mod git;
mod landlock;
pub mod mounts;
pub mod policy;
mod protected;
mod requirements;
pub mod seccomp;
pub mod support;
mod sys;

pub use abi::{ABI_MAX_ENV, DetectedAbi, Feature};
pub use exec::{REPORT_FD_ENV, SANDBOXED_ENV, launch};
pub use mounts::NO_NAMESPACES_ENV;
pub use policy::{Policy, Protection, Spec};
pub use protected::Plan;
pub use support::{Support, detect};

/// What the launcher would protect for `spec` (read-only binds, names it cannot protect because
/// they are missing, paths already read-only), without creating anything: for `doctor`.
pub fn preview_protected_paths(spec: &Spec) -> Result<Plan> {
    protected::preview(spec, &protected::HomeEnv::from_env()?)
}

/// The workspace of a working directory: its git top-level, else the directory itself.
pub fn workspace_of(cwd: &Path) -> PathBuf {
    git::toplevel(cwd).unwrap_or_else(|| cwd.to_owned())
}

use crate::error::{Code, Error, Result};
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};

/// The `shellgate sandbox` arguments (everything before `--`) that reproduce `spec`.
pub fn launcher_args(spec: &Spec) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "sandbox".into(),
        "--policy".into(),
        spec.policy.as_str().into(),
        "--workspace".into(),
        spec.workspace.clone().into(),
    ];
    for dir in &spec.writable {
        args.push("--writable".into());
        args.push(dir.clone().into());
    }
    if spec.network {
        args.push("--network".into());
    }
    for protection in &spec.dropped {
        args.push("--drop-protection".into());
        args.push(protection.as_str().into());
    }
    args
}

/// A command that runs `program args` inside the sandbox described by `spec`, by re-executing
/// the current binary. The caller may still set the working directory, environment and stdio.
/// Temp dirs are re-derived by the launcher from the environment the command gets.
pub fn command<I, S>(spec: &Spec, program: impl AsRef<OsStr>, args: I) -> Result<Command>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let exe = std::env::current_exe().map_err(|e| {
        Error::new(
            Code::SandboxExecFailed,
            format!("cannot locate shellgate's own executable to enter the sandbox: {e}"),
        )
    })?;
    Ok(command_with_launcher(&exe, spec, program, args))
}

/// Like [`command`], with an explicit path to the `shellgate` binary (tests, or a caller that is
/// not shellgate itself).
pub fn command_with_launcher<I, S>(
    launcher: &Path,
    spec: &Spec,
    program: impl AsRef<OsStr>,
    args: I,
) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(launcher);
    // Named `shellgate` whatever path it was reached by: inside `wrap`, this binary is also mounted
    // over the shells and answers to their names.
    command
        .arg0("shellgate")
        .args(launcher_args(spec))
        .arg("--")
        .arg(program)
        .args(args);
    command
}

/// A sandboxed child started by [`spawn`].
#[derive(Debug)]
pub struct Running {
    child: Child,
    report: std::io::PipeReader,
    started: Option<std::result::Result<(), Error>>,
}

/// Spawns a command from [`command`] with a failure-report pipe: the launcher writes its error
/// there, and a successful `execvp` closes it. Safe to call from a multi-threaded process.
pub fn spawn(mut command: Command) -> Result<Running> {
    let (report, writer) = std::io::pipe().map_err(|e| spawn_error(&e))?;
    let fd = writer.as_raw_fd();
    command.env(REPORT_FD_ENV, fd.to_string());
    // SAFETY: the closure runs in the child between fork and exec. It only calls fcntl (async-
    // signal-safe) on an fd number copied in by value, touching no locks or shared memory, so it
    // is sound even when the parent has other threads.
    unsafe {
        command.pre_exec(move || clear_cloexec(fd));
    }
    let child = command.spawn().map_err(|e| spawn_error(&e))?;
    // The parent's copy must go, or the pipe never reports EOF.
    drop(writer);
    Ok(Running {
        child,
        report,
        started: None,
    })
}

fn clear_cloexec(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl with F_GETFD/F_SETFD takes and returns integers only.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    // SAFETY: as above.
    if flags == -1 || unsafe { libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

fn spawn_error(e: &std::io::Error) -> Error {
    Error::new(
        Code::SandboxExecFailed,
        format!("cannot start the sandbox launcher: {e}"),
    )
}

impl Running {
    /// The child process (its pid, stdio handles).
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Blocks until the launcher has either started the program (`Ok`) or failed (`Err` with
    /// `SANDBOX_UNAVAILABLE` / `SANDBOX_EXEC_FAILED` and the launcher's reason).
    pub fn started(&mut self) -> Result<()> {
        if let Some(result) = &self.started {
            return result.clone();
        }
        let mut line = String::new();
        let result = match self.report.read_to_string(&mut line) {
            Ok(_) if line.trim().is_empty() => Ok(()),
            Ok(_) => Err(parse_report(&line)),
            Err(e) => Err(Error::internal(format!(
                "cannot read the launcher's report: {e}"
            ))),
        };
        self.started = Some(result.clone());
        result
    }

    /// Waits for the program. `Err` means it never started (the launcher's error); `Ok` is the
    /// program's own exit status, whatever its value — log it.
    pub fn wait(mut self) -> Result<ExitStatus> {
        let started = self.started();
        let status = self
            .child
            .wait()
            .map_err(|e| Error::internal(format!("cannot wait for the sandboxed program: {e}")))?;
        started.map(|()| status)
    }
}

/// The launcher's JSON line (`{"code":"SANDBOX_UNAVAILABLE","reason":"..."}`) back into an error.
fn parse_report(line: &str) -> Error {
    let value: serde_json::Value = serde_json::from_str(line.trim()).unwrap_or_default();
    let code = value["code"]
        .as_str()
        .and_then(|name| Code::ALL.into_iter().find(|c| c.as_str() == name))
        .unwrap_or(Code::SandboxUnavailable);
    let reason = value["reason"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| line.trim().to_string());
    Error::new(code, reason)
}
