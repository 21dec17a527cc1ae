//! Running a decided line: its shell's arguments and environment, the sandbox of its grant (or
//! none, for confirmed Full access), the spawn, its streams and descriptors, the signals the gate
//! ignores while it runs, the wait (or the cancel) and its exit status — with `exec/started`
//! in the session log before anything runs and `exec/finished` after.

use super::*;

/// The environment of the line's caller, as it came: the broker's caller's, or this process's.
pub(super) fn caller_env(req: &LineRequest) -> Vec<(OsString, OsString)> {
    match req.env {
        Some(env) => env.to_vec(),
        None => crate::env::get().vars().to_vec(),
    }
}

/// The environment the line runs with, for every door and every sandbox (Full access too) — the
/// one place it is built: the caller's, with the credentials withheld
/// ([`policy::environment::withhold`]) except those the configuration passes (`[sandbox]
/// pass_env`) and those the line's grant passes (a person's yes: [`Grant::allowed_by`]), and
/// shellgate's mark of a judged line set to this request.
pub(super) fn line_environment(
    ctx: &Context,
    req: &LineRequest,
    grant: &Grant,
    request: &RequestId,
) -> policy::environment::LineEnv {
    let mut env = caller_env(req);
    env.retain(|(key, _)| key != ACTIVE_ENV);
    let mut passed = ctx.config.sandbox.pass_env.clone();
    passed.extend(grant.env.iter().cloned());
    // The ssh agent's socket is found by this variable: granting the one is passing the other.
    if grant.sockets.iter().any(|s| s == SSH_AGENT) {
        passed.push(SSH_AUTH_SOCK.to_owned());
    }
    let mut line = policy::environment::withhold(env, &passed);
    line.vars.push((ACTIVE_ENV.into(), request.as_str().into()));
    line
}

/// The grant's named hosts that the line's programs reach without a proxy (ssh's and git's over
/// ssh, see `needs::direct_endpoints`): the sandbox holds those by the addresses it resolves.
pub(super) fn direct_hosts(
    grant: &policy::grant::Grant,
    commands: &[ParsedCommand],
) -> Vec<policy::endpoint::Endpoint> {
    let named = grant.network.named_hosts();
    if named.is_empty() {
        return Vec::new();
    }
    policy::needs::direct_endpoints(commands)
        .into_iter()
        .filter(|e| named.contains(e))
        .collect()
}

/// A sandboxed line's package tools use the lines' own caches of its workspace
/// ([`policy::needs::LINE_CACHES`], [`crate::paths::lines_caches_of`]: only that workspace's
/// lines read them, so nothing a line writes there runs outside later), whatever the caller set.
/// Each is made when missing, so that a tool without the grant finds its cache (read-only)
/// rather than failing to create it.
fn use_the_lines_caches(
    env: &mut Vec<(OsString, OsString)>,
    workspace: Option<&Path>,
    commands: &[ParsedCommand],
) {
    let Some(root) = crate::paths::lines_caches_of(workspace).filter(|r| r.is_absolute()) else {
        return;
    };
    for cache in policy::needs::LINE_CACHES.iter() {
        let path = root.join(cache.name());
        if !path.is_dir() {
            crate::paths::make_private_dir(&path);
        }
        if cache.applies_to(commands) {
            env.retain(|(key, _)| key != cache.variable);
            env.push((cache.variable.into(), path.into_os_string()));
        }
    }
}

pub(super) const SSH_AUTH_SOCK: &str = "SSH_AUTH_SOCK";

/// The unix sockets a grant names, as paths: [`SSH_AGENT`] is the one `SSH_AUTH_SOCK` names in
/// the line's environment (left out when it names none, or not by an absolute path), any other
/// is its path.
pub(super) fn granted_sockets(grant: &Grant, env: &[(OsString, OsString)]) -> Vec<PathBuf> {
    grant
        .sockets
        .iter()
        .filter_map(|name| {
            if name != SSH_AGENT {
                return Some(PathBuf::from(name));
            }
            env.iter()
                .find(|(key, _)| key == SSH_AUTH_SOCK)
                .map(|(_, value)| PathBuf::from(value))
        })
        .filter(|path| path.is_absolute())
        .collect()
}

/// A command that fetches on demand runs first without the network, told to fail a fetch at once
/// ([`policy::network::FAIL_FETCHES_AT_ONCE`]).
pub(super) fn fail_fetches_at_once(env: &mut Vec<(std::ffi::OsString, std::ffi::OsString)>) {
    use policy::network::FAIL_FETCHES_AT_ONCE as SETTINGS;
    env.retain(|(key, _)| !SETTINGS.iter().any(|(name, _)| key == name));
    env.extend(SETTINGS.iter().map(|(k, v)| ((*k).into(), (*v).into())));
}

/// How a line that ran ended, and what the sandbox refused it meanwhile.
pub(super) struct Ran {
    pub(super) status: ExitStatus,
    /// Each program's status, for a pipeline started without a shell (empty otherwise).
    pub(super) pipeline: Vec<ExitStatus>,
    pub(super) denials: Vec<crate::sandbox::Denial>,
}

pub(super) fn spawn_and_wait(run: &Decided, grant: &Grant) -> Result<Ran> {
    let Decided {
        ctx,
        req,
        side,
        decision,
        request,
        line,
    } = *run;
    let shell = side.program.clone().ok_or_else(|| {
        Error::new(
            Code::SandboxExecFailed,
            format!("no {} is installed to run the line", req.shell.as_str()),
        )
    })?;
    let policy::environment::LineEnv {
        vars: mut env,
        withheld,
    } = line_environment(ctx, req, grant, request);
    if !decision.on_demand.is_empty() && grant.network.is_off() {
        fail_fetches_at_once(&mut env);
    }
    let args = shell_args(req, line);
    let taken: Vec<RawFd> = side.passed.map(|p| p.numbers()).unwrap_or_default();
    let (args, harness_fd) = match &decision.harness_write {
        Some(write) => {
            let (args, fd) = hand_harness_file(write, &env, line, args, &taken)?;
            (args, Some(fd))
        }
        None => (args, None),
    };
    // Without the sandbox a pipeline runs in its shell (only the sandbox starts one itself).
    let direct = match &req.execution {
        Execution::Program { pipeline, .. }
            if harness_fd.is_none()
                && (pipeline.len() == 1 || grant.sandbox != SandboxPolicy::FullAccess) =>
        {
            direct_pipeline(pipeline, &env)
        }
        _ => None,
    };
    let started = EventBody::ExecStarted(ExecStarted {
        sandbox: grant.sandbox,
        grant: Some(grant.clone()),
        shell: req.shell.as_str().to_owned(),
        program: direct.as_ref().map(|(first, later)| {
            std::iter::once(first)
                .chain(later)
                .map(|p| p.program.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" | ")
        }),
        pid: None,
        withheld,
    });
    // The shell runs under its own name, as a person's `bash` and an agent's `bash -c` do: bash
    // then reports an error as `bash: x: command not found`, not `/usr/bin/bash: line 1: …`.
    // A program started directly gets the word that named it, as the shell gives it, and none
    // of the descriptors the caller passes for the shell's own use.
    let started_directly = direct.is_some();
    let (shell, name, args, later) = match direct {
        Some((first, later)) => {
            // The shell sets `_` to the program it starts, in that program's environment.
            env.retain(|(key, _)| key != "_");
            let later: Vec<crate::sandbox::Stage> = later
                .into_iter()
                .map(|d| crate::sandbox::Stage {
                    env: with_underscore(env.clone(), &d.program),
                    program: d.program,
                    arg0: d.name,
                    args: d.args,
                })
                .collect();
            env = with_underscore(env, &first.program);
            (first.program, first.name, first.args, later)
        }
        None => {
            let name = shell.file_name().unwrap_or(shell.as_os_str()).to_owned();
            (shell, name, args, Vec::new())
        }
    };
    if grant.sandbox == SandboxPolicy::FullAccess {
        let mut command = Command::new(&shell);
        std::os::unix::process::CommandExt::arg0(&mut command, &name);
        command
            .args(&args)
            .env_clear()
            .envs(env)
            .current_dir(req.cwd);
        if let Some((fd, number)) = &harness_fd {
            pass_descriptor(&mut command, fd.as_raw_fd(), *number);
        }
        // A line for a caller that may go away runs in the caller's process group, or in one
        // of its own, so that all of it can be ended with the caller.
        let group = req
            .process_group
            .or_else(|| req.cancel.is_some().then_some(0));
        if let Some(group) = group {
            std::os::unix::process::CommandExt::process_group(&mut command, group);
        }
        attach_streams(&mut command, req.streams)?;
        record(ctx, request, started)?;
        let timer = Instant::now();
        let status = run_unsandboxed(command, &shell, req.cancel, group == Some(0))?;
        record_finished(ctx, request, grant, &status, timer);
        return Ok(Ran {
            status,
            pipeline: Vec::new(),
            denials: Vec::new(),
        });
    }
    let mut spec = crate::spec::grant_spec(
        grant,
        &ctx.cwd,
        entered_dir(&decision.commands, &ctx.cwd).as_deref(),
        req.workspace,
        &ctx.config.sandbox,
    )?;
    spec = spec.with_direct(&direct_hosts(grant, &decision.commands));
    spec.host_processes = req.origin == Origin::Hook && acts_on_processes(&decision.commands);
    spec.unix_sockets = granted_sockets(grant, &env);
    use_the_lines_caches(&mut env, spec.workspace.as_deref(), &decision.commands);
    let mut passed = match side.passed {
        Some(per_run) if !started_directly => per_run.for_run()?,
        _ => Vec::new(),
    };
    passed.extend(harness_fd);
    let command = crate::sandbox::Command {
        arg0: name,
        program: shell,
        args,
        env,
        cwd: req.cwd.to_path_buf(),
        stdio: stream_fds(req.streams)?,
        passed,
        process_group: req.process_group,
        pipeline: later,
    };
    record(ctx, request, started)?;
    let timer = Instant::now();
    let mut running = crate::sandbox::spawn(&spec, command)?;
    if req.process_exits_after {
        running.leave_init_at_exit();
    }
    // Ignore Ctrl-C only once the child exists; it starts with the dispositions shellgate had.
    let _foreground = ForegroundSignals::ignore();
    let finished = running.wait(req.cancel)?;
    let status = finished.status;
    if finished.left_running {
        tell_line_stderr(
            req.streams,
            "[shellgate] processes this line left running were stopped with it (a line's \
             processes end when it does); run a server as a line of its own that stays in the \
             foreground\n",
        );
    }
    record_finished(ctx, request, grant, &status, timer);
    if let Some(refusal) = violation_refusal(&finished.violations) {
        for violation in &finished.violations {
            // A violation the log cannot take fails the line as an audit failure, naming what
            // was moved aside, since the log will not.
            record(
                ctx,
                request,
                EventBody::SandboxViolation(SandboxViolation {
                    path: violation.path.to_string_lossy().into_owned(),
                    quarantined: violation
                        .quarantined
                        .as_ref()
                        .map(|p| p.to_string_lossy().into_owned()),
                    what: violation.what.clone(),
                }),
            )
            .map_err(|logged| {
                Error::new(
                    logged.code,
                    format!("{}; not recorded: {}", logged.reason, refusal.reason),
                )
            })?;
        }
        return Err(refusal);
    }
    if let Some(refusal) = crate::sandbox::limit_refusal(&status, &spec.limits) {
        return Err(refusal);
    }
    let pipeline = if started_directly && finished.pipeline.len() > 1 {
        finished.pipeline
    } else {
        Vec::new()
    };
    Ok(Ran {
        status,
        pipeline,
        denials: finished.denials,
    })
}

/// An environment without `_`, with `_` set to the program started.
fn with_underscore(
    mut env: Vec<(OsString, OsString)>,
    program: &Path,
) -> Vec<(OsString, OsString)> {
    env.push(("_".into(), program.as_os_str().to_owned()));
    env
}

/// The programs a line starts without its shell ([`Execution::Program`]), each as
/// [`direct_program`] finds it: the first, and the later ones of a pipeline. `None` (the line's
/// shell runs it) when one is not found, or there is none.
fn direct_pipeline(
    pipeline: &[Vec<OsString>],
    env: &[(OsString, OsString)],
) -> Option<(Direct, Vec<Direct>)> {
    let mut programs = pipeline
        .iter()
        .map(|argv| direct_program(argv, env))
        .collect::<Option<Vec<Direct>>>()?
        .into_iter();
    let first = programs.next()?;
    Some((first, programs.collect()))
}

/// A program a line starts without its shell ([`Execution::Program`]).
struct Direct {
    program: PathBuf,
    name: OsString,
    args: Vec<OsString>,
}

/// The program `argv` names, found on the line's `PATH` as the shell finds it, when the kernel
/// starts it by itself: an ELF binary, or a script with a `#!` line. (A file without either is
/// one the shell would run with `sh`; a name not found, no `PATH`, or a relative entry in it are
/// the shell's to report or search.) `None` runs the line's shell instead.
fn direct_program(argv: &[OsString], env: &[(OsString, OsString)]) -> Option<Direct> {
    use std::os::unix::fs::OpenOptionsExt;
    let (name, args) = argv.split_first()?;
    let path_var = env
        .iter()
        .find(|(key, _)| key == "PATH")
        .map(|(_, value)| value.as_os_str())?;
    if std::env::split_paths(path_var).any(|dir| !dir.is_absolute()) {
        return None;
    }
    let program = crate::sandbox::resolve_program(name, Some(path_var)).ok()?;
    // Opened without waiting (a FIFO put in the file's place since it was found would hold this
    // process, and the person's shell, until a writer came), and read only if it is still a
    // regular file.
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&program)
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut head = [0u8; 4];
    let read = std::io::Read::read(&mut file, &mut head).ok()?;
    let starts = head[..read].starts_with(b"#!") || head[..read] == *b"\x7fELF";
    starts.then(|| Direct {
        program,
        name: name.clone(),
        args: args.to_vec(),
    })
}

/// A recognised agent harness's own write (Claude Code's working-directory file), given to the
/// line as exactly that one file: opened here ([`crate::sandbox::harness_file`]: in the agent's
/// temp dir, never through a symlink, never another file), passed as a descriptor numbered 3–9
/// (not one of `taken`), and the line's `>| FILE` run as `>&N`. The sandbox grants nothing for it,
/// so a read-only line stays read-only; without a sandbox (Full access) the harness still cannot
/// name a file elsewhere, which its inner line's rules never saw. What does not fit refuses the
/// line. Returns the shell's arguments and the descriptor with its number.
pub(super) fn hand_harness_file(
    write: &crate::parse::harness::HarnessWrite,
    env: &[(OsString, OsString)],
    line: &str,
    mut args: Vec<OsString>,
    taken: &[RawFd],
) -> Result<(Vec<OsString>, (OwnedFd, RawFd))> {
    let refuse = |why: &str| {
        Error::new(
            Code::SandboxExecFailed,
            format!("cannot hand the line Claude Code's working-directory file: {why}"),
        )
    };
    let number = (3u8..=9)
        .find(|n| !taken.contains(&RawFd::from(*n)))
        .ok_or_else(|| refuse("no descriptor number is free"))?;
    let rewritten = crate::parse::harness::with_write_to_descriptor(line, write, number)
        .ok_or_else(|| refuse("the line does not hold the redirection it was judged with"))?;
    // The shell's arguments hold the line once (`-c LINE`); anything else is not what was judged.
    let mut at = args
        .iter()
        .enumerate()
        .filter(|(_, a)| a.as_os_str() == line)
        .map(|(index, _)| index);
    let (Some(index), None) = (at.next(), at.next()) else {
        return Err(refuse(
            "the shell's arguments do not hold the line exactly once",
        ));
    };
    let slot = args
        .get_mut(index)
        .ok_or_else(|| refuse("the shell's arguments changed"))?;
    *slot = rewritten.into();
    let fd = crate::sandbox::harness_file::open(write, env)?;
    Ok((args, (fd, RawFd::from(number))))
}

/// Gives an unsandboxed line `fd` as descriptor `number`, as the sandbox gives a sandboxed one
/// its passed descriptors (`fd` is close-on-exec; the copy at `number` is not).
pub(super) fn pass_descriptor(command: &mut Command, fd: RawFd, number: RawFd) {
    // SAFETY: the closure runs in the child between fork and exec and calls only dup2 and fcntl,
    // which are async-signal-safe; `fd` stays open in the parent until the spawn returns (the
    // caller owns it past `run_unsandboxed`).
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(command, move || {
            // dup2 onto itself would keep close-on-exec: clear the flag instead.
            let done = if fd == number {
                libc::fcntl(number, libc::F_SETFD, 0)
            } else {
                libc::dup2(fd, number)
            };
            if done < 0 {
                Err(std::io::Error::last_os_error())
            } else {
                Ok(())
            }
        });
    }
}

/// Confirmed Full access: the shell runs as it is, with no sandbox.
pub(super) fn run_unsandboxed(
    mut command: Command,
    shell: &Path,
    cancel: Option<BorrowedFd>,
    own_group: bool,
) -> Result<ExitStatus> {
    let mut child = command.spawn().map_err(|e| {
        Error::new(
            Code::SandboxExecFailed,
            format!("cannot start {}: {e}", shell.display()),
        )
    })?;
    let _foreground = ForegroundSignals::ignore();
    wait_or_cancel(&mut child, cancel, own_group)?;
    child
        .wait()
        .map_err(|e| Error::internal(format!("cannot wait for the line: {e}")))
}

pub(super) fn record_finished(
    ctx: &Context,
    request: &RequestId,
    grant: &Grant,
    status: &ExitStatus,
    started: Instant,
) {
    let finished = EventBody::ExecFinished(ExecFinished {
        exit_code: status.code(),
        signal: std::os::unix::process::ExitStatusExt::signal(status),
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        sandbox: grant.sandbox,
    });
    if let Err(e) = record(ctx, request, finished) {
        // The line already ran; its status is still the truth for the caller.
        eprintln!("[shellgate] warning: the end of this line could not be logged: {e}");
    }
}

/// The refusal for a line whose guard moved something aside: the line fails closed.
pub fn violation_refusal(violations: &[crate::sandbox::Violation]) -> Option<Error> {
    if violations.is_empty() {
        return None;
    }
    let what: Vec<String> = violations.iter().map(|v| v.describe()).collect();
    Some(Error::new(
        Code::SandboxViolation,
        format!(
            "the line created or changed a file that git or a shell outside the sandbox would \
             run or read configuration from: {}",
            what.join("; ")
        ),
    ))
}

/// The process's exit for a program's status: its code, or the same signal death (the default
/// disposition restored first), as a shell reports and a caller expects.
pub fn end_like(status: &ExitStatus) -> std::process::ExitCode {
    use std::os::unix::process::ExitStatusExt;
    if let Some(signal) = status.signal() {
        // SAFETY: restores the default disposition of a valid signal number and sends it to this
        // process; no Rust code runs as a handler.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::kill(libc::getpid(), signal);
        }
    }
    std::process::ExitCode::from(exit_code(status))
}

/// Writes a note to the stream the line's stderr was.
pub(super) fn tell_line_stderr(streams: Streams, note: &str) {
    use std::io::Write;
    match streams {
        Streams::Fds([_, _, stderr]) => {
            if let Ok(fd) = stderr.try_clone() {
                let _ = std::fs::File::from(fd).write_all(note.as_bytes());
            }
        }
        Streams::Terminal => match OpenOptions::new().write(true).open("/dev/tty") {
            Ok(mut tty) => {
                let _ = tty.write_all(note.as_bytes());
            }
            Err(_) => eprint!("{note}"),
        },
        Streams::Inherit => eprint!("{note}"),
    }
}

/// The descriptors the line's standard streams are, when they are not this process's own.
pub(crate) fn stream_fds(streams: Streams) -> Result<Option<[OwnedFd; 3]>> {
    let dup = |fd: BorrowedFd| {
        fd.try_clone_to_owned()
            .map_err(|e| Error::internal(format!("cannot pass the streams on: {e}")))
    };
    match streams {
        Streams::Inherit => Ok(None),
        Streams::Fds([stdin, stdout, stderr]) => Ok(Some([
            dup(stdin.as_fd())?,
            dup(stdout.as_fd())?,
            dup(stderr.as_fd())?,
        ])),
        Streams::Terminal => match OpenOptions::new().read(true).write(true).open("/dev/tty") {
            Ok(tty) => {
                let tty = OwnedFd::from(tty);
                Ok(Some([dup(tty.as_fd())?, dup(tty.as_fd())?, tty]))
            }
            // No terminal (an interactive shell driven over pipes): keep stdin, send output to
            // stderr, since the hook's stdout is captured by PS0.
            Err(_) => {
                let stdin = dup(std::io::stdin().as_fd())?;
                let stderr = dup(std::io::stderr().as_fd())?;
                Ok(Some([stdin, dup(stderr.as_fd())?, stderr]))
            }
        },
    }
}

/// Wait for the child, killing it if the caller hangs up first. Without a cancel descriptor this
/// returns at once and the caller waits normally. The child's end is seen through a pidfd, so
/// neither event waits for a timer.
pub(super) fn wait_or_cancel(
    child: &mut std::process::Child,
    cancel: Option<BorrowedFd>,
    own_group: bool,
) -> Result<()> {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let Some(cancel) = cancel else {
        return Ok(());
    };
    let pid = i32::try_from(child.id())
        .map_err(|_| Error::internal("the line's process id is out of range"))?;
    let pidfd = crate::sandbox::pidfd_open(pid)
        .map_err(|e| Error::internal(format!("cannot watch the line: {e}")))?;
    loop {
        let mut fds = [
            PollFd::new(pidfd.as_fd(), PollFlags::POLLIN),
            PollFd::new(cancel, PollFlags::POLLIN),
        ];
        if poll(&mut fds, PollTimeout::NONE).is_err() {
            continue;
        }
        let ended = fds[0].revents().is_some_and(|r| !r.is_empty());
        let gone = fds[1].revents().is_some_and(|r| {
            r.intersects(PollFlags::POLLHUP | PollFlags::POLLIN | PollFlags::POLLERR)
        });
        if ended {
            return Ok(());
        }
        if gone {
            if own_group {
                // SAFETY: kill(2) on the process group this function's caller created for the
                // line (process_group(0) makes its pid the group id); no memory is involved.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                }
            }
            let _ = child.kill();
            return Ok(());
        }
    }
}

pub(super) fn shell_args(req: &LineRequest, line: &str) -> Vec<OsString> {
    match &req.execution {
        Execution::ShellArgs(args)
        | Execution::Program {
            shell_args: args, ..
        } => args.clone(),
        Execution::ShellC { positional } => {
            let mut args: Vec<OsString> = match req.shell {
                ShellKind::Pwsh => vec!["-NoProfile".into(), "-Command".into(), line.into()],
                _ => vec!["-c".into(), line.into()],
            };
            args.extend(positional.iter().cloned());
            args
        }
    }
}

pub(super) fn attach_streams(command: &mut Command, streams: Streams) -> Result<()> {
    let dup = |fd: &OwnedFd| {
        fd.try_clone()
            .map_err(|e| Error::internal(format!("cannot pass the caller's streams on: {e}")))
    };
    match streams {
        Streams::Inherit => return Ok(()),
        Streams::Fds([stdin, stdout, stderr]) => {
            command
                .stdin(dup(stdin)?)
                .stdout(dup(stdout)?)
                .stderr(dup(stderr)?);
            return Ok(());
        }
        Streams::Terminal => {}
    }
    match OpenOptions::new().read(true).write(true).open("/dev/tty") {
        Ok(tty) => {
            let out = clone(&tty)?;
            let err = clone(&tty)?;
            command.stdin(tty).stdout(out).stderr(err);
        }
        // No terminal (an interactive shell driven over pipes): keep stdin, send output to stderr,
        // since the hook's stdout is captured by PS0.
        Err(_) => {
            let stderr = std::io::stderr()
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| Error::internal(format!("cannot duplicate stderr: {e}")))?;
            command.stdout(Stdio::from(stderr));
        }
    }
    Ok(())
}

pub(super) fn clone(file: &File) -> Result<File> {
    file.try_clone()
        .map_err(|e| Error::internal(format!("cannot share the terminal with the line: {e}")))
}

/// While a line runs in the foreground, Ctrl-C and Ctrl-\ are for the line, not for shellgate:
/// like a shell waiting for its foreground job, shellgate ignores SIGINT and SIGQUIT until the
/// line ends (the line itself gets the default dispositions back at exec).
pub struct ForegroundSignals {
    int: libc::sighandler_t,
    quit: libc::sighandler_t,
}

impl ForegroundSignals {
    pub fn ignore() -> ForegroundSignals {
        // SAFETY: `signal` with SIG_IGN installs no Rust code as a handler, and the previous
        // dispositions are restored on drop. Called only after the child was spawned, so the
        // child keeps its own dispositions.
        unsafe {
            ForegroundSignals {
                int: libc::signal(libc::SIGINT, libc::SIG_IGN),
                quit: libc::signal(libc::SIGQUIT, libc::SIG_IGN),
            }
        }
    }
}

impl Drop for ForegroundSignals {
    fn drop(&mut self) {
        // SAFETY: restores the dispositions saved in `ignore`.
        unsafe {
            libc::signal(libc::SIGINT, self.int);
            libc::signal(libc::SIGQUIT, self.quit);
        }
    }
}

/// The exit status a caller of `run` sees: the line's own, or 128 + signal, as shells report it.
pub fn exit_code(status: &ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => u8::try_from(code & 0xff).unwrap_or(1),
        (None, Some(signal)) => u8::try_from(128 + signal).unwrap_or(255),
        (None, None) => 1,
    }
}
