//! `shellgate hook bash|zsh|pwsh`: the interactive hooks' calls.
//!
//! * `--shell-dir DIR --token T -- LINE`: a line the hook's function took from the prompt; it
//!   runs with the shell's state and its changes come back (see [`crate::shell::function`]). The
//!   exit status is the line's (or its refusal's), and the function sources `DIR/T.apply`.
//! * `--shape -- LINE` (bash): whether the Enter binding hands the line to the function, and how
//!   (see [`crate::shell::shape`]); prints `fg|bg PIPELINE WORD|-`, or nothing and exits 1.
//! * `--prepare --pid PID`: creates the shell's private directory and prints it.
//! * otherwise, the backstop for every line that did not come through the function (PS0 in bash,
//!   preexec in zsh), below.
//!
//! Backstop exit status: 0 = the shell runs the line itself, as typed (it only changes the shell's state, or
//! Full access is confirmed); 1 = the line was handled here — run in the sandbox, or refused — and,
//! with `--pid`, this process has already interrupted the shell (SIGINT), which abandons the line
//! before any of it runs. Any other status means shellgate failed, and the hook interrupts the
//! shell itself: every way out but 0 runs nothing in the shell.
//!
//! bash expands PS0 once per command of an input (a pasted block of three lines expands it three
//! times), so the outcome is remembered per shell, prompt generation and line text: the block is
//! decided once, and the later expansions replay the same outcome. The text is part of the key so
//! that a generation that did not advance (something removed the prompt hook) can never replay an
//! old decision for a new line.

use crate::audit::StatePaths;
use crate::error::{Code, Error, Reader, print_refusal};
use crate::gate::{self, Execution, LineRequest, Origin, Outcome, Streams};
use crate::parse::ShellKind;
use crate::shell::function;
use clap::Args;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct HookArgs {
    /// The shell the hook runs in.
    #[arg(value_enum)]
    pub shell: ShellKind,
    /// The interactive shell's pid: it is sent SIGINT when the line must not run in it.
    #[arg(long)]
    pub pid: Option<i32>,
    /// The prompt generation (bash): one decision per generation.
    #[arg(long)]
    pub generation: Option<u64>,
    /// Run the line with the controlling terminal as its standard streams (bash: PS0's output is
    /// captured, so the line must not inherit it).
    #[arg(long)]
    pub tty_stdio: bool,
    /// Read the line from this environment variable (PowerShell: avoids native-argument quoting).
    #[arg(long)]
    pub line_from_env: Option<String>,
    /// The shell's private directory: the line comes from the hook's function.
    #[arg(long, requires = "token")]
    pub shell_dir: Option<PathBuf>,
    /// The line's token (names its files in the private directory).
    #[arg(long)]
    pub token: Option<String>,
    /// The function runs as a background job (`LINE &`): its changes are not applied.
    #[arg(long)]
    pub background: bool,
    /// Print the line's shape for the Enter binding (bash).
    #[arg(long, conflicts_with = "shell_dir")]
    pub shape: bool,
    /// History expansion is on in the shell (`--shape`).
    #[arg(long)]
    pub histexpand: bool,
    /// Create the shell's private directory and print it.
    #[arg(long, conflicts_with_all = ["shell_dir", "shape"])]
    pub prepare: bool,
    /// Print the prompt's `PATH` (`shell::prompt_path`): the shell's, with the directories lines may
    /// write moved to the end.
    #[arg(long, conflicts_with_all = ["shell_dir", "shape", "prepare"])]
    pub prompt_path: bool,
    /// Write what became of the line to this file: `shell` (run it in the shell), `ran N` or
    /// `refused N` (PowerShell: the host then reports that status).
    #[arg(long, conflicts_with = "shell_dir")]
    pub status_file: Option<PathBuf>,
    /// The line.
    #[arg(value_name = "LINE", allow_hyphen_values = true)]
    pub line: Option<OsString>,
}

/// `--prompt-path`: the prompt's `PATH` for this process's (the shell's, exported) and directory,
/// as shell code the hook evaluates.
fn prompt_path() -> ExitCode {
    let path = crate::env::get().var("PATH").unwrap_or_default();
    let cwd = crate::session::working_dir(None);
    let settings = crate::config::load_or_strictest(&cwd).sandbox;
    let prompt = crate::shell::prompt_path::prompt_path(path, &settings);
    // The hook tells the person, once per repository (`__shellgate_pin_git`).
    let untrusted = crate::shell::prompt_path::untrusted_repository(&cwd, &settings);
    let code = crate::shell::prompt_path::render(&prompt, path, untrusted.as_deref());
    print!("{code}");
    ExitCode::SUCCESS
}

/// Exit status: run the line in the shell.
const RUN_IN_SHELL: u8 = 0;
/// Exit status: handled here; the shell must not run it.
const HANDLED: u8 = 1;

pub fn run(args: HookArgs) -> ExitCode {
    if args.prepare {
        return prepare(args.pid);
    }
    if args.shape {
        return shape(&args);
    }
    if args.prompt_path {
        return prompt_path();
    }
    let line = match line_bytes(&args) {
        Ok(line) => line,
        Err(e) => return finish(refused(&e), args.pid),
    };
    if let (Some(dir), Some(token)) = (&args.shell_dir, &args.token) {
        return ExitCode::from(function::run(&function::Call {
            shell: args.shell,
            dir,
            token,
            line: &line,
            background: args.background,
        }));
    }
    let memo = args.generation.and_then(|g| Memo::new(args.pid?, g, &line));
    if let Some(outcome) = memo.as_ref().and_then(Memo::recall) {
        return finish(outcome, args.pid);
    }
    if let Some(file) = &args.status_file {
        // Nothing of an earlier line may stand for this one if this process fails.
        let _ = std::fs::remove_file(file);
    }
    let (outcome, status) = decide_and_run(&args, &line);
    if let Some(file) = &args.status_file {
        let _ = std::fs::write(file, format!("{status}\n"));
    }
    if let Some(memo) = &memo {
        memo.store(outcome);
    }
    finish(outcome, args.pid)
}

/// The backstop's outcome, and what became of the line for `--status-file`.
fn decide_and_run(args: &HookArgs, line: &[u8]) -> (u8, String) {
    let cwd = crate::session::working_dir(None);
    let execution = Execution::ShellC {
        positional: Vec::new(),
    };
    let streams = if args.tty_stdio {
        Streams::Terminal
    } else {
        Streams::Inherit
    };
    let request =
        LineRequest::new(line, args.shell, &cwd, Origin::Hook, execution).with_streams(streams);
    match crate::broker::route(&request, &crate::shell::side(args.shell, Origin::Hook)) {
        Outcome::RunInShell { .. } => match run_self_command(args, line) {
            Some(status) => (HANDLED, format!("ran {status}")),
            None => (RUN_IN_SHELL, "shell".to_owned()),
        },
        Outcome::Ran { status, .. } => (HANDLED, format!("ran {}", gate::exit_code(&status))),
        Outcome::Refused(e) => (refused(&e), format!("refused {}", e.code.exit_status())),
    }
}

/// shellgate's own command, allowed to run in the shell, runs here with this binary: the shell
/// would run whichever `shellgate` comes first on `PATH`. Its status; `None` for any other line.
fn run_self_command(args: &HookArgs, line: &[u8]) -> Option<u8> {
    let text = std::str::from_utf8(line).ok()?;
    let parsed = crate::parse::parse(text, args.shell);
    let [only] = parsed.commands.as_slice() else {
        return None;
    };
    crate::shell::in_shell::self_command(only)?;
    let binary = crate::paths::binary()?;
    let mut command = std::process::Command::new(binary);
    command.args(&only.argv);
    if args.tty_stdio
        && let Ok(tty) = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(crate::approval::CONTROLLING_TTY)
    {
        let (out, err) = (tty.try_clone().ok()?, tty.try_clone().ok()?);
        command.stdin(tty).stdout(out).stderr(err);
    }
    let status = command.status().map_or(1, |s| gate::exit_code(&s));
    Some(status)
}

fn prepare(pid: Option<i32>) -> ExitCode {
    let Some(pid) = pid.filter(|p| *p > 1) else {
        eprintln!("shellgate hook --prepare needs --pid");
        return ExitCode::from(Code::Usage.exit_status());
    };
    // Inside a wrapped agent shellgate's state is read-only, and a place a line could write is no
    // place for the scripts this shell sources: its lines take the backstop path, as said in the
    // docs, without a note at every shell's start.
    if crate::broker::broker_path().is_some() {
        return ExitCode::from(1);
    }
    // A new shell says at once when its lines are decided by the strictest built-in policy.
    if let Err(e) = crate::config::load_for(&crate::session::working_dir(None)) {
        eprintln!("shellgate: {}", crate::config::invalid_notice(&e));
    }
    match function::prepare_dir(pid) {
        Ok(dir) => {
            println!("{}", dir.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "shellgate: lines typed in this shell are still gated, but give back no state \
                 and $? is 130 after them: {} [{}]",
                e.reason, e.code
            );
            ExitCode::from(e.code.exit_status())
        }
    }
}

fn shape(args: &HookArgs) -> ExitCode {
    let line = args
        .line
        .as_ref()
        .and_then(|l| l.to_str())
        .unwrap_or_default();
    match crate::shell::shape::of_bash_line(line, args.histexpand) {
        Some(shape) => {
            println!("{}", shape.render());
            ExitCode::SUCCESS
        }
        None => ExitCode::from(1),
    }
}

fn line_bytes(args: &HookArgs) -> Result<Vec<u8>, Error> {
    let line = match (&args.line_from_env, &args.line) {
        (Some(var), _) => crate::env::get()
            .var(var)
            .map(OsStr::to_os_string)
            .unwrap_or_default(),
        (None, Some(line)) => line.clone(),
        (None, None) => OsString::new(),
    };
    if line.as_bytes().iter().all(u8::is_ascii_whitespace) {
        return Err(Error::new(
            Code::InputRejected,
            "the hook could not see this command line (readline did not capture it and history \
             did not record it), so it was not run. Retype it, or turn history back on",
        ));
    }
    Ok(line.as_bytes().to_vec())
}

/// A refusal, told to the person at the prompt (an agent driving an interactive shell reads the
/// same short text; the agent-facing block is for `run` and the non-interactive hooks).
fn refused(e: &Error) -> u8 {
    print_refusal(e, Reader::Person);
    HANDLED
}

fn finish(outcome: u8, pid: Option<i32>) -> ExitCode {
    if outcome == HANDLED
        && let Some(pid) = pid.filter(|p| *p > 1)
    {
        // SAFETY: kill(2) with a positive pid and a valid signal number has no memory effects;
        // the pid is the hook's own interactive shell ($$), our parent's parent.
        unsafe {
            libc::kill(pid, libc::SIGINT);
        }
    }
    ExitCode::from(outcome)
}

/// The remembered outcome of one line in one prompt generation of one shell.
struct Memo {
    file: PathBuf,
    key: String,
}

impl Memo {
    fn new(pid: i32, generation: u64, line: &[u8]) -> Option<Memo> {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(line);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let paths = StatePaths::from_env().ok()?;
        let session = crate::audit::SessionId::from_env().ok()??;
        let session = session.as_str();
        let dir = paths.root().join("hooks");
        crate::audit::paths::ensure_private_dir(&dir).ok()?;
        Some(Memo {
            file: dir.join(format!("{session}-{pid}")),
            key: format!("{generation}-{hex}"),
        })
    }

    fn recall(&self) -> Option<u8> {
        let text = std::fs::read_to_string(&self.file).ok()?;
        let (key, outcome) = text.trim().split_once(' ')?;
        (key == self.key)
            .then(|| outcome.parse::<u8>().ok())
            .flatten()
            .filter(|o| *o == RUN_IN_SHELL || *o == HANDLED)
    }

    fn store(&self, outcome: u8) {
        let _ = std::fs::write(&self.file, format!("{} {outcome}\n", self.key));
    }
}
