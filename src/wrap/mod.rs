//! `shellgate wrap -- AGENT [ARGS…]`: run an agent so that every shell it starts is gated.
//!
//! Inside the agent's private mount namespace, shellgate is mounted (read-only) over `/usr/bin/bash`,
//! `/usr/bin/dash` (so `/bin/sh`) and `/usr/bin/zsh`, so even a shell started by absolute path reaches
//! the shell entry point; the real shells stay reachable at read-only paths in a private tmpfs.
//! `SHELL`, `BASH_ENV` and `ZDOTDIR` point at shellgate too, for shells elsewhere. By default
//! (`--no-contain` drops it) the agent itself runs in the workspace-write sandbox — with the network
//! on, since it must reach its model — so what it starts without a shell is contained as well.
//!
//! Every line is decided outside that sandbox, by this process (the broker, see
//! [`crate::broker`]), which also keeps the session log the agent cannot write. The agent's exit
//! status is `wrap`'s.
//!
//! The agent's own process is marked ([`enter::AGENT_ENV`]): a shell started *as* the agent (a
//! shim script the agent is launched through, `exec`'d in place) is the agent, and runs as is; every
//! shell the agent starts is another process, and is gated. Started inside a wrapped agent, `wrap`
//! only starts the new agent, unmarked: its shells, the first one included, reach the outer broker.

pub mod agents;
pub mod enter;
pub mod entry;

use crate::audit::SessionId;
use crate::audit::paths::{SESSION_ENV, ensure_private_dir};
use crate::broker::{self, BROKER_ENV, Conversation, Reply};
use crate::error::{Code, Error, Result};
use crate::gate::{self, LineRequest, Outcome, Streams};
use crate::session::Context;
use crate::shell::{WRAP_DIR_ENV, real_shell_env};
use std::ffi::{OsStr, OsString};
use std::os::fd::AsFd;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

/// The agent's pid, for forwarding termination signals to it.
static AGENT_PID: AtomicI32 = AtomicI32::new(0);

/// What `shellgate wrap` is asked to do (its arguments, parsed by `cmd::wrap`).
#[derive(Debug, Clone, Default)]
pub struct WrapOptions {
    /// The mode every line of the agent is decided in (`None`: as for any session).
    pub mode: Option<String>,
    /// Whether the agent itself runs in the workspace-write sandbox (not only its shells gated).
    pub contain: bool,
    /// Extra directories the contained agent may write (its own state, caches).
    pub writable: Vec<PathBuf>,
    /// The agent and its arguments.
    pub agent: Vec<OsString>,
}

/// What every broker thread needs to know.
struct Broker {
    /// `wrap`'s own session, which decides and logs every line of the agent.
    session: SessionId,
    mode: Option<String>,
    /// Every line's sandbox is anchored here, wherever the agent has moved since.
    workspace: PathBuf,
    /// Where Claude Code's shell snapshots go (written by the broker, see [`agents`]).
    claude_snapshots: Option<PathBuf>,
}

pub fn run(options: &WrapOptions) -> Result<ExitCode> {
    let env = crate::env::get();
    if env.own.broker.is_some() && env.own.wrap_dir.is_some() {
        // Already inside a wrapped agent: this agent's shells reach the same broker. It is not
        // marked as an agent of its own (a shell as its program is judged like any other): it
        // was started by an agent, not by a person.
        return Ok(enter::exec_unmarked(&options.agent));
    }
    // A session of its own, whatever the environment names: every line the broker decides
    // belongs to it (passed with each line), and the agent's environment names it.
    let session = SessionId::new_random();
    let cwd = crate::session::working_dir(None);
    // Fail closed before the agent starts when there is no usable state directory. (A broken
    // config is not a refusal: it is the strictest built-in policy, see `config`.)
    let ctx = Context::open_session(&cwd, options.mode.as_deref(), session.clone())?;
    let paths = ctx.paths.clone().ok_or_else(|| {
        Error::new(
            Code::AuditUnavailable,
            "no state directory for the session log",
        )
    })?;
    let wrap_root = paths.root().join("wrap");
    let dir = wrap_root.join(session.as_str());
    ensure_private_dir(&dir)?;
    let socket = wrap_root.join(format!("{}.sock", session.as_str()));
    let (address, _dir) = broker::reachable_path(&socket)?;
    let listener = UnixListener::bind(&address).map_err(|e| {
        Error::new(
            Code::AuditUnavailable,
            format!("cannot create the broker socket {}: {e}", socket.display()),
        )
    })?;
    let home = env.home();
    let var = |name: &str| env.var(name).map(OsStr::to_os_string);
    let plan = agents::plan(&options.agent, home.as_deref(), &var);
    let temp = AgentTemp::new(&session)?;
    let mut child = agent_command(options, &plan, &session, &dir, &socket, temp.dir())?
        .spawn()
        .map_err(|e| {
            Error::new(
                Code::SandboxExecFailed,
                format!("cannot start the agent: {e}"),
            )
        })?;
    AGENT_PID.store(i32::try_from(child.id()).unwrap_or(0), Ordering::SeqCst);
    forward_termination_signals();
    let broker = Arc::new(Broker {
        session,
        mode: options.mode.clone(),
        workspace: crate::spec::workspace_of(&cwd, None, &ctx.config.sandbox)
            .root()
            .map_or_else(|| cwd.clone(), Path::to_path_buf),
        claude_snapshots: (plan.known == Some(agents::Known::ClaudeCode))
            .then(|| home.as_deref().map(|h| agents::claude_snapshots(h, &var)))
            .flatten(),
    });
    if let Some(dir) = &broker.claude_snapshots {
        crate::parse::harness::trust_snapshot_dirs(vec![dir.to_string_lossy().into_owned()]);
    }
    std::thread::spawn(move || serve(listener, broker));
    let status = child
        .wait()
        .map_err(|e| Error::internal(format!("cannot wait for the agent: {e}")))?;
    let _ = std::fs::remove_file(&socket);
    let _ = std::fs::remove_dir(&dir);
    drop(temp);
    Ok(ExitCode::from(gate::exit_code(&status)))
}

/// The agent's temporary directory, when `$TMPDIR` lies outside the temp dirs the sandbox makes
/// writable (`/tmp`, `/var/tmp`): a private one beneath `/tmp` for this session, removed at the
/// end. Agents write there, and so do their lines (Claude Code's working-directory file).
struct AgentTemp(Option<PathBuf>);

impl AgentTemp {
    fn new(session: &SessionId) -> Result<AgentTemp> {
        let Some(current) = crate::env::get().var("TMPDIR").map(PathBuf::from) else {
            return Ok(AgentTemp(None));
        };
        if current.starts_with("/tmp") || current.starts_with("/var/tmp") {
            return Ok(AgentTemp(None));
        }
        let dir = PathBuf::from(format!("/tmp/shellgate-wrap-{}", session.as_str()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| {
                Error::new(
                    Code::SandboxUnavailable,
                    format!("cannot create the agent's temp dir {}: {e}", dir.display()),
                )
            })?;
        Ok(AgentTemp(Some(dir)))
    }

    fn dir(&self) -> Option<&Path> {
        self.0.as_deref()
    }
}

impl Drop for AgentTemp {
    fn drop(&mut self) {
        if let Some(dir) = &self.0 {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// `shellgate wrap-enter …` with the environment the agent gets.
fn agent_command(
    options: &WrapOptions,
    plan: &agents::Plan,
    session: &SessionId,
    dir: &Path,
    socket: &Path,
    temp: Option<&Path>,
) -> Result<Command> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::internal(format!("cannot locate the shellgate binary: {e}")))?;
    let mut command = Command::new(&exe);
    command
        .arg0("shellgate")
        .arg("wrap-enter")
        .arg("--dir")
        .arg(dir);
    if options.contain {
        command.arg("--contain");
        for w in options.writable.iter().chain(&plan.writable) {
            if w.is_dir() {
                command.arg("--writable").arg(w);
            }
        }
        if let Some(temp) = temp {
            command.arg("--writable").arg(temp);
        }
        for r in &plan.read_only {
            command.arg("--read-only").arg(r);
        }
        for u in &plan.unhidden {
            command.arg("--unhide").arg(u);
        }
    }
    for (source, target) in &plan.binds {
        let mut spec = source.clone().into_os_string();
        spec.push("=");
        spec.push(target);
        command.arg("--bind").arg(spec);
    }
    command.arg("--").args(&plan.argv);
    let env = crate::env::get();
    command
        .env(SESSION_ENV, session.as_str())
        .env(BROKER_ENV, socket)
        .env(WRAP_DIR_ENV, dir)
        .env("SHELL", "/usr/bin/bash")
        .env("BASH_ENV", dir.join("hook.bash"))
        .env("ZDOTDIR", dir.join("zdotdir"))
        .env(
            crate::own_env::USER_ZDOTDIR_ENV,
            env.var("ZDOTDIR")
                .or_else(|| env.var("HOME"))
                .unwrap_or_default(),
        )
        .env_remove(crate::shell::ACTIVE_ENV);
    if let Some(temp) = temp {
        command.env("TMPDIR", temp);
    }
    for (key, value) in &plan.env {
        command.env(key, value);
    }
    for (kind, name, _) in enter::SHELLS {
        command.env(real_shell_env(kind), dir.join(name));
    }
    Ok(command)
}

/// Forward SIGTERM and SIGHUP to the agent; ignore SIGINT and SIGQUIT (they reach the agent
/// through the terminal's process group), and the terminal's stop signals.
fn forward_termination_signals() {
    extern "C" fn forward(signal: libc::c_int) {
        let pid = AGENT_PID.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill(2) is async-signal-safe; the pid is our own child's.
            unsafe {
                libc::kill(pid, signal);
            }
        }
    }
    // SAFETY: the handler only loads an atomic and calls kill(2), both async-signal-safe; the
    // dispositions are set before any broker thread exists.
    unsafe {
        libc::signal(libc::SIGTERM, forward as *const () as libc::sighandler_t);
        libc::signal(libc::SIGHUP, forward as *const () as libc::sighandler_t);
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGQUIT, libc::SIG_IGN);
        // `wrap` is never stopped by the terminal: it hands the terminal's foreground to a
        // question and back (see `approval`), which a stopped process could not.
        libc::signal(libc::SIGTTOU, libc::SIG_IGN);
        libc::signal(libc::SIGTTIN, libc::SIG_IGN);
    }
}

/// The broker loop: one thread per conversation, for as long as the agent runs.
fn serve(listener: UnixListener, broker: Arc<Broker>) {
    for stream in listener.incoming().flatten() {
        let broker = Arc::clone(&broker);
        std::thread::spawn(move || {
            if let Ok(conversation) = broker::greet(stream) {
                serve_one(conversation, &broker);
            }
        });
    }
}

fn serve_one(conversation: Conversation, broker: &Broker) {
    let Conversation {
        mut socket,
        streams,
        caller,
    } = conversation;
    let request = match broker::read_request(&mut socket) {
        Ok(r) => r,
        Err(e) => {
            broker::send_reply(&mut socket, &Reply::Refused(e.code, e.reason));
            return;
        }
    };
    if let Some(reply) = harness_step(broker, &request) {
        broker::send_reply(&mut socket, &reply);
        return;
    }
    let group = broker::caller_group(caller);
    let line = LineRequest::new(
        &request.line,
        request.shell,
        &request.cwd,
        request.origin,
        request.execution.clone(),
    )
    .with_mode(broker.mode.as_deref())
    .in_session(&broker.session)
    .with_streams(Streams::Fds(&streams))
    .for_broker_caller(&request.env, socket.as_fd(), &broker.workspace, group);
    let side = crate::shell::side(request.shell, request.origin);
    let reply = match crate::approval::on_behalf_of(group, || gate::handle(&line, &side)) {
        Outcome::Ran { status, .. } => Reply::Exited(gate::exit_code(&status)),
        Outcome::RunInShell { .. } => Reply::InShell,
        Outcome::Refused(e) => Reply::Refused(e.code, e.reason),
    };
    broker::send_reply(&mut socket, &reply);
}

/// A known agent's own start-up step that shellgate does in its place (Claude Code's shell
/// snapshot), recorded in the session log. `None`: an ordinary line.
fn harness_step(broker: &Broker, request: &broker::Request) -> Option<Reply> {
    let snapshots = broker.claude_snapshots.as_deref()?;
    let path = agents::claude_snapshot(request.shell_args(), snapshots)?;
    let agent_path = request
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_os_str());
    let result = agents::write_claude_snapshot(&path, agent_path);
    let _ = record_harness_step(broker, request, &path, result.as_ref().err());
    Some(match result {
        Ok(()) => Reply::Exited(0),
        Err(e) => Reply::Refused(e.code, e.reason),
    })
}

fn record_harness_step(
    broker: &Broker,
    request: &broker::Request,
    path: &Path,
    error: Option<&Error>,
) -> Result<()> {
    use crate::audit::event::{EventBody, HarnessStep};
    let ctx = Context::open_session(&request.cwd, broker.mode.as_deref(), broker.session.clone())?;
    ctx.log()?
        .append(
            None,
            EventBody::HarnessStep(HarnessStep {
                agent: "claude-code".to_owned(),
                step: "shell-snapshot".to_owned(),
                path: path.to_string_lossy().into_owned(),
                note: match error {
                    None => "written by shellgate with the agent's PATH; the agent's script \
                             (which sources ~/.bashrc) was not run"
                        .to_owned(),
                    Some(e) => e.reason.clone(),
                },
            }),
        )
        .map(drop)
}

/// The command line `wrap` shows for the agent (with the settings it added).
pub fn describe(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}
