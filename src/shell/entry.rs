//! The shell entry point: shellgate answering to the name `bash`, `sh`, `dash`, `zsh` or `pwsh`.
//!
//! `wrap` mounts the shellgate binary over the real shells inside the wrapped agent, so an agent
//! that runs `/bin/bash -c LINE` by absolute path (Codex does) reaches shellgate. The entry point
//! reads its arguments the way that shell would, finds what would run, and has it judged: by the
//! `wrap` broker when there is one (outside the agent's sandbox), otherwise in this process. An
//! allowed line runs with the real shell and the caller's exact arguments. Inside a line that was
//! already judged (`SHELLGATE_ACTIVE`), the real shell runs at once: the line was decided whole.

use super::args::{Invocation, parse_posix, parse_pwsh};
use super::{ACTIVE_ENV, real_shell};
use crate::broker::{self, Reply, Request};
use crate::error::{Code, Error, refusal_block};
use crate::gate::{self, Execution, LineRequest, Origin, Outcome, Streams};
use crate::parse::ShellKind;
use std::ffi::{OsStr, OsString};
use std::io::IsTerminal;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The shell this binary was invoked as, judging by `argv[0]`.
pub fn invoked_as(argv0: &OsStr) -> Option<ShellKind> {
    let name = Path::new(argv0).file_name()?.to_str()?;
    let name = name.strip_prefix('-').unwrap_or(name); // a login shell's `-bash`
    match name {
        "bash" => Some(ShellKind::Bash),
        "sh" | "dash" => Some(ShellKind::Sh),
        "zsh" => Some(ShellKind::Zsh),
        "pwsh" => Some(ShellKind::Pwsh),
        _ => None,
    }
}

/// Run as the shell `kind` with these arguments (without argv\[0\]).
pub fn run(kind: ShellKind, args: Vec<OsString>) -> ExitCode {
    if std::env::var_os(ACTIVE_ENV).is_some() {
        return exec_real(kind, &args, None);
    }
    let stdin_tty = std::io::stdin().is_terminal();
    let invocation = match kind {
        ShellKind::Pwsh => parse_pwsh(&args, stdin_tty),
        _ => parse_posix(&args, stdin_tty),
    };
    let line = match invocation {
        Invocation::Info => return exec_real(kind, &args, None),
        Invocation::Interactive => return interactive(kind, &args),
        Invocation::Command { script } => script.as_bytes().to_vec(),
        Invocation::Script { path } => script_line(kind, &path, &args),
        Invocation::Stdin => {
            format!("{} (reading a script from standard input)", kind.as_str()).into_bytes()
        }
        Invocation::Unknown(reason) => {
            return refuse(&Error::usage(format!(
                "{} arguments shellgate cannot interpret, so nothing was run: {reason}",
                kind.as_str()
            )));
        }
    };
    judge_and_run(kind, line, args)
}

/// A script file (or standard input) cannot be read ahead here: the invocation is what is judged.
fn script_line(kind: ShellKind, path: &OsStr, args: &[OsString]) -> Vec<u8> {
    let mut words = vec![kind.as_str().to_owned()];
    let from = args.iter().position(|a| a == path).unwrap_or(0);
    for a in &args[from..] {
        words.push(super::templates::posix_quote(&a.to_string_lossy()));
    }
    let _ = path;
    words.join(" ").into_bytes()
}

fn judge_and_run(kind: ShellKind, line: Vec<u8>, args: Vec<OsString>) -> ExitCode {
    let cwd = crate::cmd::working_dir(None);
    if let Some(path) = broker::broker_path() {
        let request = Request {
            line,
            shell: kind,
            cwd,
            args,
            env: std::env::vars_os().collect(),
        };
        return match broker::submit(&path, &request) {
            Ok(Reply::Exited(code) | Reply::Refused(code)) => ExitCode::from(code),
            Err(e) => refuse(&e),
        };
    }
    let request = LineRequest {
        bytes: &line,
        shell: kind,
        cwd: &cwd,
        mode: None,
        execution: Execution::ShellArgs(args),
        streams: Streams::Inherit,
        origin: Origin::Run,
        env: None,
        cancel: None,
        workspace: None,
    };
    match gate::handle(&request) {
        Outcome::Ran(status) => ExitCode::from(gate::exit_code(&status)),
        Outcome::Refused(e) => refuse(&e),
        Outcome::RunInShell => ExitCode::SUCCESS,
    }
}

/// An interactive shell inside a wrapped agent gets the hooks: bash reads shellgate's rc file
/// (which sources the user's `~/.bashrc` first), zsh shellgate's ZDOTDIR.
fn interactive(kind: ShellKind, args: &[OsString]) -> ExitCode {
    let Some(dir) = std::env::var_os(super::WRAP_DIR_ENV).map(PathBuf::from) else {
        return exec_real(kind, args, None);
    };
    match kind {
        ShellKind::Bash => {
            let mut with_rc: Vec<OsString> = vec!["--rcfile".into(), dir.join("bashrc").into()];
            with_rc.extend(args.iter().cloned());
            exec_real(kind, &with_rc, None)
        }
        ShellKind::Zsh => exec_real(kind, args, Some(dir.join("zdotdir"))),
        _ => exec_real(kind, args, None),
    }
}

/// Replace this process with the real shell.
fn exec_real(kind: ShellKind, args: &[OsString], zdotdir: Option<PathBuf>) -> ExitCode {
    let Some(real) = real_shell(kind).filter(|p| !is_this_binary(p)) else {
        return refuse(&Error::new(
            Code::SandboxExecFailed,
            format!(
                "the real {} is hidden behind shellgate and {} does not name it",
                kind.as_str(),
                super::real_shell_env(kind)
            ),
        ));
    };
    let mut command = std::process::Command::new(&real);
    command.args(args);
    if let Some(dir) = zdotdir {
        command.env("ZDOTDIR", dir);
    }
    let e = command.exec();
    refuse(&Error::new(
        Code::SandboxExecFailed,
        format!("cannot start {}: {e}", real.display()),
    ))
}

/// Is `path` this very binary (the entry point mounted over the shell)? Running it would loop.
fn is_this_binary(path: &Path) -> bool {
    let (Ok(exe), Ok(other)) = (std::fs::metadata("/proc/self/exe"), std::fs::metadata(path))
    else {
        return false;
    };
    exe.dev() == other.dev() && exe.ino() == other.ino()
}

fn refuse(e: &Error) -> ExitCode {
    eprint!("{}", refusal_block(e.code, &e.reason));
    ExitCode::from(e.code.exit_status())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv0_names() {
        assert_eq!(invoked_as(OsStr::new("/bin/bash")), Some(ShellKind::Bash));
        assert_eq!(invoked_as(OsStr::new("-bash")), Some(ShellKind::Bash));
        assert_eq!(invoked_as(OsStr::new("sh")), Some(ShellKind::Sh));
        assert_eq!(invoked_as(OsStr::new("/usr/bin/dash")), Some(ShellKind::Sh));
        assert_eq!(invoked_as(OsStr::new("zsh")), Some(ShellKind::Zsh));
        assert_eq!(invoked_as(OsStr::new("shellgate")), None);
        assert_eq!(invoked_as(OsStr::new("/usr/local/bin/shellgate")), None);
    }

    #[test]
    fn script_invocations_are_described() {
        let args: Vec<OsString> = vec!["-e".into(), "run me.sh".into(), "a".into()];
        assert_eq!(
            script_line(ShellKind::Bash, OsStr::new("run me.sh"), &args),
            b"bash 'run me.sh' 'a'".to_vec()
        );
    }
}
