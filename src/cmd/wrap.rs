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

use crate::audit::SessionId;
use crate::audit::paths::{SESSION_ENV, ensure_private_dir};
use crate::broker::{self, BROKER_ENV, Conversation, Reply};
use crate::error::{Code, Error, Result, refusal_block};
use crate::gate::{self, Execution, LineRequest, Origin, Outcome, Streams};
use crate::parse::ShellKind;
use crate::sandbox::mounts;
use crate::session::{Context, SessionUse};
use crate::shell::templates::{self, HookShell};
use crate::shell::{WRAP_DIR_ENV, real_shell_env};
use clap::Args;
use std::ffi::OsString;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicI32, Ordering};

#[derive(Args, Debug)]
pub struct WrapArgs {
    /// Mode every line of the agent is decided in (default: as for any session).
    #[arg(long)]
    pub mode: Option<String>,
    /// Do not run the agent itself in the sandbox (only its shells are gated).
    #[arg(long)]
    pub no_contain: bool,
    /// Extra directories the contained agent may write (its own state, caches).
    #[arg(long = "writable", value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    /// The agent and its arguments.
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub agent: Vec<OsString>,
}

/// Arguments of the hidden `wrap-enter` step (re-executed, single-threaded, to set up the mounts).
#[derive(Args, Debug)]
pub struct EnterArgs {
    #[arg(long)]
    pub dir: PathBuf,
    #[arg(long)]
    pub contain: bool,
    #[arg(long = "writable", value_name = "DIR")]
    pub writable: Vec<PathBuf>,
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, allow_hyphen_values = true)]
    pub agent: Vec<OsString>,
}

/// The real shells `wrap` hides, by the path the entry point is mounted on.
const SHELLS: [(ShellKind, &str, &str); 3] = [
    (ShellKind::Bash, "bash", "/usr/bin/bash"),
    (ShellKind::Sh, "sh", "/usr/bin/dash"),
    (ShellKind::Zsh, "zsh", "/usr/bin/zsh"),
];

/// The agent's pid, for forwarding termination signals to it.
static AGENT_PID: AtomicI32 = AtomicI32::new(0);

pub fn run(args: WrapArgs) -> ExitCode {
    super::exit_with(execute(&args))
}

fn execute(args: &WrapArgs) -> Result<ExitCode> {
    let session = SessionId::new_random();
    // SAFETY: no other thread exists yet (the broker threads start below), so nothing can read the
    // environment concurrently. Every line the broker decides belongs to this one session.
    unsafe {
        std::env::set_var(SESSION_ENV, session.as_str());
    }
    let cwd = super::working_dir(None);
    // Fail closed before the agent starts: a broken config, no usable state directory.
    let ctx = Context::load(&cwd, args.mode.as_deref(), SessionUse::Open)?;
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
    let mut child = agent_command(args, &dir, &socket)?.spawn().map_err(|e| {
        Error::new(
            Code::SandboxExecFailed,
            format!("cannot start the agent: {e}"),
        )
    })?;
    AGENT_PID.store(i32::try_from(child.id()).unwrap_or(0), Ordering::SeqCst);
    forward_termination_signals();
    let mode = args.mode.clone();
    let workspace = crate::sandbox::workspace_of(&cwd, None, &ctx.config.sandbox)
        .root()
        .map_or_else(|| cwd.clone(), Path::to_path_buf);
    std::thread::spawn(move || serve(listener, mode, workspace));
    let status = child
        .wait()
        .map_err(|e| Error::internal(format!("cannot wait for the agent: {e}")))?;
    let _ = std::fs::remove_file(&socket);
    let _ = std::fs::remove_dir(&dir);
    Ok(ExitCode::from(gate::exit_code(&status)))
}

/// `shellgate wrap-enter …` with the environment the agent gets.
fn agent_command(args: &WrapArgs, dir: &Path, socket: &Path) -> Result<Command> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::internal(format!("cannot locate the shellgate binary: {e}")))?;
    let mut command = Command::new(&exe);
    command
        .arg0("shellgate")
        .arg("wrap-enter")
        .arg("--dir")
        .arg(dir);
    if !args.no_contain {
        command.arg("--contain");
        for w in agent_writable(args) {
            command.arg("--writable").arg(w);
        }
    }
    command.arg("--").args(&args.agent);
    command
        .env(BROKER_ENV, socket)
        .env(WRAP_DIR_ENV, dir)
        .env("SHELL", "/usr/bin/bash")
        .env("BASH_ENV", dir.join("hook.bash"))
        .env("ZDOTDIR", dir.join("zdotdir"))
        .env(
            "SHELLGATE_USER_ZDOTDIR",
            std::env::var_os("ZDOTDIR")
                .or_else(|| std::env::var_os("HOME"))
                .unwrap_or_default(),
        );
    for (kind, name, _) in SHELLS {
        command.env(real_shell_env(kind), dir.join(name));
    }
    Ok(command)
}

/// The contained agent's writable directories: the given ones, plus the state directories of the
/// agents we know (they keep sessions and settings there). A known agent's state directory is
/// created (private) when it is missing: on its first run the agent would create it itself, which
/// the sandbox no longer lets it do in the home, and without it the agent cannot run a command.
fn agent_writable(args: &WrapArgs) -> Vec<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let mut dirs = args.writable.clone();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let agent = args
        .agent
        .first()
        .and_then(|a| Path::new(a).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(home) = home {
        let state = match agent.as_str() {
            "claude" => Some(home.join(".claude")),
            "codex" => Some(
                std::env::var_os("CODEX_HOME")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| home.join(".codex")),
            ),
            _ => None,
        };
        if let Some(state) = state {
            // Not recursive: only in a home (or beside a CODEX_HOME) that exists. A failure
            // leaves the directory missing, hence not writable, as before.
            let _ = std::fs::DirBuilder::new().mode(0o700).create(&state);
            dirs.push(state);
        }
        dirs.push(home.join(".cache"));
    }
    dirs.into_iter().filter(|d| d.is_dir()).collect()
}

/// Forward SIGTERM and SIGHUP to the agent; ignore SIGINT and SIGQUIT (they reach the agent
/// through the terminal's process group).
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
    }
}

/// The broker loop: one thread per conversation, for as long as the agent runs. Every line's
/// sandbox is anchored at the agent's workspace, wherever the agent has moved since.
fn serve(listener: UnixListener, mode: Option<String>, workspace: PathBuf) {
    for stream in listener.incoming().flatten() {
        let mode = mode.clone();
        let workspace = workspace.clone();
        std::thread::spawn(move || {
            if let Ok(conversation) = broker::greet(stream) {
                serve_one(conversation, mode, workspace);
            }
        });
    }
}

fn serve_one(conversation: Conversation, mode: Option<String>, workspace: PathBuf) {
    let Conversation {
        mut socket,
        streams,
    } = conversation;
    let request = match broker::read_request(&mut socket) {
        Ok(r) => r,
        Err(e) => {
            tell(&streams[2], &e);
            broker::send_reply(&mut socket, Reply::Refused(e.code.exit_status()));
            return;
        }
    };
    let line = LineRequest {
        bytes: &request.line,
        shell: request.shell,
        cwd: &request.cwd,
        mode: mode.as_deref(),
        execution: Execution::ShellArgs(request.args.clone()),
        streams: Streams::Fds(&streams),
        origin: Origin::Run,
        env: Some(&request.env),
        cancel: Some(socket.as_fd()),
        workspace: Some(&workspace),
    };
    let reply = match gate::handle(&line) {
        Outcome::Ran(status) => Reply::Exited(gate::exit_code(&status)),
        Outcome::RunInShell => Reply::Exited(0),
        Outcome::Refused(e) => {
            tell(&streams[2], &e);
            Reply::Refused(e.code.exit_status())
        }
    };
    broker::send_reply(&mut socket, reply);
}

/// Write the refusal to the caller's stderr, which is what the agent reads as the tool result.
fn tell(stderr: &OwnedFd, e: &Error) {
    if let Ok(fd) = stderr.try_clone() {
        let mut file = std::fs::File::from(fd);
        let _ = file.write_all(refusal_block(e.code, &e.reason).as_bytes());
    }
}

// ---------------------------------------------------------------------------------------------
// `wrap-enter`: the agent's side, single-threaded, between `wrap` and the agent.

pub fn enter(args: EnterArgs) -> ExitCode {
    match prepare(&args) {
        Ok(()) => launch(&args),
        Err(e) => {
            eprint!("{}", refusal_block(e.code, &e.reason));
            ExitCode::from(e.code.exit_status())
        }
    }
}

/// The private mount namespace: a tmpfs with the hook files and the real shells, and shellgate
/// over the shells' usual paths.
fn prepare(args: &EnterArgs) -> Result<()> {
    let exe = std::fs::canonicalize("/proc/self/exe")
        .map_err(|e| Error::internal(format!("cannot locate the shellgate binary: {e}")))?;
    mounts::enter().map_err(|why| {
        Error::new(
            Code::SandboxUnavailable,
            format!("wrap needs a private mount namespace to put shellgate in front of the shells: {why}"),
        )
    })?;
    mounts::mount_private_tmp(&args.dir)?;
    write_hook_files(&args.dir, &exe)?;
    for (_, name, path) in SHELLS {
        let Ok(real) = std::fs::canonicalize(path) else {
            continue;
        };
        let hidden = args.dir.join(name);
        std::fs::write(&hidden, b"").map_err(|e| io_error(&hidden, &e))?;
        mounts::bind_file_read_only(&real, &hidden)?;
        mounts::bind_file_read_only(&exe, &real)?;
    }
    mounts::remount_tmpfs_read_only(&args.dir)
}

fn write_hook_files(dir: &Path, exe: &Path) -> Result<()> {
    let exe = exe.to_string_lossy();
    let hook_bash = dir.join("hook.bash");
    let hook_zsh = dir.join("hook.zsh");
    let zdotdir = dir.join("zdotdir");
    let files: [(PathBuf, String); 5] = [
        (hook_bash.clone(), templates::render(HookShell::Bash, &exe)),
        (hook_zsh.clone(), templates::render(HookShell::Zsh, &exe)),
        (
            dir.join("bashrc"),
            format!(
                "[ -f ~/.bashrc ] && . ~/.bashrc\n. {}\n",
                templates::posix_quote(&hook_bash.to_string_lossy())
            ),
        ),
        (
            zdotdir.join(".zshenv"),
            format!(
                ". {hook}\nZDOTDIR=\"${{SHELLGATE_USER_ZDOTDIR:-$HOME}}\"\n[[ -f \"$ZDOTDIR/.zshenv\" ]] && . \"$ZDOTDIR/.zshenv\"\n[[ -o interactive ]] && ZDOTDIR={zdotdir}\n",
                hook = templates::posix_quote(&hook_zsh.to_string_lossy()),
                zdotdir = templates::posix_quote(&zdotdir.to_string_lossy()),
            ),
        ),
        (
            zdotdir.join(".zshrc"),
            format!(
                "ZDOTDIR=\"${{SHELLGATE_USER_ZDOTDIR:-$HOME}}\"\n[[ -f \"$ZDOTDIR/.zshrc\" ]] && . \"$ZDOTDIR/.zshrc\"\n. {}\n",
                templates::posix_quote(&hook_zsh.to_string_lossy())
            ),
        ),
    ];
    std::fs::create_dir_all(&zdotdir).map_err(|e| io_error(&zdotdir, &e))?;
    for (path, text) in files {
        std::fs::write(&path, text).map_err(|e| io_error(&path, &e))?;
    }
    Ok(())
}

fn io_error(path: &Path, e: &std::io::Error) -> Error {
    Error::new(
        Code::SandboxUnavailable,
        format!("wrap cannot prepare {}: {e}", path.display()),
    )
}

/// Exec the agent: inside the workspace-write sandbox (network on), or as is.
fn launch(args: &EnterArgs) -> ExitCode {
    let error = if args.contain {
        let mut command = Command::new("/proc/self/exe");
        command.arg0("shellgate").args([
            "sandbox",
            "--policy",
            "workspace-write",
            "--network",
            "--unix-sockets",
        ]);
        for w in &args.writable {
            command.arg("--writable").arg(w);
        }
        command.arg("--").args(&args.agent).exec()
    } else {
        let (program, rest) = match args.agent.split_first() {
            Some(parts) => parts,
            None => return ExitCode::from(Code::Usage.exit_status()),
        };
        Command::new(program).args(rest).exec()
    };
    let e = Error::new(
        Code::SandboxExecFailed,
        format!("cannot start the agent: {error}"),
    );
    eprint!("{}", refusal_block(e.code, &e.reason));
    ExitCode::from(e.code.exit_status())
}
