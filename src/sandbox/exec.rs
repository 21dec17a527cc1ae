//! The launcher: what `shellgate sandbox` does between parsing its arguments and `execvp`.
//!
//! The order matters and is fixed:
//!
//! 1. the fail-closed check of what the kernel offers;
//! 2. the private mount namespace, with fd hygiene (needs capabilities, so it comes first);
//! 3. dropping every capability, then `no_new_privs`;
//! 4. Landlock, then seccomp (seccomp last: it forbids the mount and namespace calls above);
//! 5. `execvp` — nothing else runs in between, and the process is single-threaded throughout,
//!    so there is no other thread that could escape the restrictions or hold a lock.
//!
//! Because the launcher *becomes* the program, the program's exit status and signal death are
//! the launcher's by construction. Only when the program cannot be started does the launcher
//! exit with a status of its own (`SANDBOX_UNAVAILABLE` 211, `SANDBOX_EXEC_FAILED` 212).

use crate::error::{Code, Error, Result};
use crate::sandbox::abi::DetectedAbi;
use crate::sandbox::landlock::{self, Grants};
use crate::sandbox::policy::{Policy, Protection, Spec};
use crate::sandbox::protected::{self, HomeEnv, Plan};
use crate::sandbox::requirements::{self, Gap};
use crate::sandbox::{caps, mounts, seccomp, sys};
use std::ffi::{OsStr, OsString};
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

/// Set in the sandboxed program's environment to the policy's name (`workspace-write`,
/// `read-only`): lets shell hooks see that a process already runs inside shellgate's sandbox.
/// Informational only: a nested sandbox is enforced by the kernel, not by this variable.
pub const SANDBOXED_ENV: &str = "SHELLGATE_SANDBOXED";

/// Set by [`crate::sandbox::spawn`]: the number of an inherited pipe on which the launcher
/// writes one JSON line when it fails. Removed from the program's environment.
pub const REPORT_FD_ENV: &str = "SHELLGATE_SANDBOX_REPORT_FD";

/// Builds the spec, enters the sandbox and execs `program`. Returns only on failure, with the
/// error already sent to the report pipe (if any); the caller prints it and exits.
pub fn launch(spec: impl FnOnce() -> Result<Spec>, program: &OsStr, args: &[OsString]) -> Error {
    let report = Report::from_env();
    let error = match spec().and_then(|spec| enter(&spec).map(|ready| (spec, ready))) {
        Ok((spec, ready)) => exec(&spec, &ready, program, args),
        Err(error) => error,
    };
    report.send(&error);
    error
}

/// What the sandbox hands to the exec step.
struct Ready {
    /// Read-only's private temp dir, exported as `TMPDIR`.
    private_tmp: Option<PathBuf>,
    /// A line for the program's stderr about something the caller may not expect (printed only
    /// when the program is started, so a refusal stays one line).
    note: Option<String>,
}

fn enter(spec: &Spec) -> Result<Ready> {
    let abi = DetectedAbi::detect();
    // seccomp support is not probed here: installing the filter fails (closed) if it is missing.
    let gaps = requirements::kernel_gaps(&abi, true, spec.network, &spec.dropped);
    requirements::refuse(&abi, &gaps)?;
    let private_tmp = match spec.policy {
        Policy::WorkspaceWrite => {
            protect_paths(spec, &abi)?;
            None
        }
        Policy::ReadOnly => Some(private_tmp()?),
    };
    caps::drop_all()?;
    caps::set_no_new_privs()?;
    let mut writable = spec.writable_roots();
    writable.extend(private_tmp.clone());
    let grants = Grants {
        writable,
        terminals: std_terminals(),
        network: spec.network,
    };
    landlock::restrict(&abi, &grants)?;
    seccomp::install(spec.network)?;
    caps::verify()?;
    Ok(Ready {
        private_tmp,
        note: ignored_tmpdir_note(spec),
    })
}

/// A `$TMPDIR` that was not accepted as a writable root (see [`crate::sandbox::policy::TempDirs`])
/// and is not writable otherwise: writing there will fail, so say why and what to do.
fn ignored_tmpdir_note(spec: &Spec) -> Option<String> {
    let tmpdir = spec.ignored_tmpdir.as_ref()?;
    let canonical = std::fs::canonicalize(tmpdir).ok()?;
    if spec
        .writable_roots()
        .iter()
        .any(|r| canonical.starts_with(r))
    {
        return None;
    }
    Some(format!(
        "[shellgate] note: $TMPDIR ({}) is not writable in this sandbox: only a TMPDIR beneath \
         /tmp, /var/tmp or /run/user/{} is; name another temp dir in the configuration's \
         sandbox.writable",
        tmpdir.display(),
        sys::geteuid()
    ))
}

/// Workspace-write: the read-only binds of the protected paths, unless dropped explicitly.
fn protect_paths(spec: &Spec, abi: &DetectedAbi) -> Result<()> {
    if spec.dropped.contains(&Protection::ProtectedPaths) {
        return Ok(());
    }
    let plan = protected::plan(spec, &HomeEnv::from_env()?)?;
    if !plan.needs_mounts() {
        return Ok(());
    }
    // Descriptors opened before the namespace see the mounts *under* the read-only binds.
    check_std_fds(&plan)?;
    close_inherited_fds(&plan)?;
    if let Err(why) = mounts::enter() {
        return Err(Error::new(
            Code::SandboxUnavailable,
            requirements::describe(abi, &[Gap::Namespace(why)]),
        ));
    }
    mounts::apply(&plan)
}

/// Read-only: a tmpfs in a private mount namespace, or a fresh directory where no namespace can
/// be made (nested in another sandbox).
fn private_tmp() -> Result<PathBuf> {
    let mount_point = mounts::private_tmp_mount_point()?;
    match mounts::enter() {
        Ok(_) => {
            mounts::mount_private_tmp(&mount_point)?;
            Ok(mount_point)
        }
        Err(_) => mounts::fresh_private_dir(),
    }
}

fn exec(spec: &Spec, ready: &Ready, program: &OsStr, args: &[OsString]) -> Error {
    let mut command = Command::new(program);
    command
        .args(args)
        .env(SANDBOXED_ENV, spec.policy.as_str())
        .env_remove(REPORT_FD_ENV);
    if let Some(tmp) = &ready.private_tmp {
        command.env("TMPDIR", tmp);
    }
    if let Some(note) = &ready.note {
        eprintln!("{note}");
    }
    // `CommandExt::exec` is execvp plus restoring SIGPIPE to its default (Rust ignores it), so
    // the program sees the signal dispositions it would have without shellgate.
    let error = command.exec();
    let name = program.to_string_lossy();
    let reason = match error.kind() {
        std::io::ErrorKind::NotFound => format!("cannot start `{name}`: no such program"),
        std::io::ErrorKind::PermissionDenied => format!(
            "cannot start `{name}`: permission denied (not executable, or not executable \
             inside the sandbox)"
        ),
        _ => format!("cannot start `{name}`: {error}"),
    };
    Error::new(Code::SandboxExecFailed, reason)
}

/// A standard stream that is a directory would be a handle on the host's mount tree below the
/// protected-path binds (`openat(0, ".git/config")`), and one on a protected file could be
/// reopened for writing (`echo x >> /proc/self/fd/0`): refuse rather than guess. Neither can be
/// closed, as the program expects its standard streams.
fn check_std_fds(plan: &Plan) -> Result<()> {
    for (fd, name) in [(0, "stdin"), (1, "stdout"), (2, "stderr")] {
        if sys::fd_file_type(fd) == Some(libc::S_IFDIR) {
            return Err(Error::new(
                Code::SandboxUnavailable,
                format!("{name} is a directory, which would bypass the read-only protected paths"),
            ));
        }
        if let Some(path) = protected_target(fd, plan) {
            return Err(Error::new(
                Code::SandboxUnavailable,
                format!(
                    "{name} is {}, beneath a read-only protected path: the program could reopen \
                     it for writing through /proc/self/fd/{fd}",
                    path.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Inherited descriptors opened before the mount namespace existed refer to the mounts *below*
/// the read-only binds. Directory and `O_PATH` ones reach every path beneath them, and one on a
/// protected file (even opened read-only) can be reopened for writing through
/// `/proc/self/fd/N`: close those. Other files, pipes and sockets stay.
fn close_inherited_fds(plan: &Plan) -> Result<()> {
    let unlisted = |e: std::io::Error| {
        Error::new(
            Code::SandboxUnavailable,
            format!(
                "cannot list the inherited file descriptors in /proc/self/fd ({e}), some of \
                 which could reach beneath the read-only protected paths"
            ),
        )
    };
    let mut fds: Vec<RawFd> = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").map_err(unlisted)? {
        let name = entry.map_err(unlisted)?.file_name();
        if let Some(fd) = name.to_str().and_then(|n| n.parse().ok())
            && fd > 2
        {
            fds.push(fd);
        }
    }
    // The listing's own descriptor is among them, already closed again: closing it is a no-op.
    for fd in fds {
        let is_dir = sys::fd_file_type(fd) == Some(libc::S_IFDIR);
        let is_path = sys::fd_status_flags(fd).is_some_and(|f| f & libc::O_PATH != 0);
        if is_dir || is_path || protected_target(fd, plan).is_some() {
            sys::close_inherited(fd);
        }
    }
    Ok(())
}

/// The path of an fd's file when it lies beneath a protected path of the plan. `readlink` of an
/// open fd's `/proc/self/fd` entry only fails when the fd is not open (nothing to close).
fn protected_target(fd: RawFd, plan: &Plan) -> Option<PathBuf> {
    let target = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    plan.read_only
        .iter()
        .chain(&plan.already_enforced)
        .any(|protected| target.starts_with(protected))
        .then_some(target)
}

/// The terminal devices behind stdin/stdout/stderr, so a program can reopen its own terminal.
fn std_terminals() -> Vec<PathBuf> {
    (0..=2)
        .filter_map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok())
        .filter(|p| p.starts_with("/dev/") && !p.starts_with("/dev/pts"))
        .filter(|p| !landlock::DEVICES.iter().any(|d| p.as_os_str() == *d))
        .filter(|p| {
            std::fs::metadata(p).is_ok_and(|m| {
                use std::os::unix::fs::FileTypeExt;
                m.file_type().is_char_device()
            })
        })
        .collect()
}

/// The failure-report pipe handed over by [`crate::sandbox::spawn`], if any.
struct Report(Option<RawFd>);

impl Report {
    fn from_env() -> Report {
        let fd = std::env::var(REPORT_FD_ENV)
            .ok()
            .and_then(|v| v.parse::<RawFd>().ok())
            .filter(|fd| *fd > 2 && sys::fd_file_type(*fd) == Some(libc::S_IFIFO));
        // Close-on-exec right away: the program must never inherit it, and its closing on a
        // successful exec is exactly what tells the caller "the program started".
        let fd = fd.filter(|fd| sys::set_cloexec(*fd, true).is_ok());
        Report(fd)
    }

    fn send(&self, error: &Error) {
        if let Some(fd) = self.0 {
            let mut line = serde_json::to_string(error).unwrap_or_default();
            line.push('\n');
            sys::write_raw(fd, line.as_bytes());
        }
    }
}
