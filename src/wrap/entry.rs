//! The shell entry point: shellgate answering to the name `bash`, `sh`, `dash`, `zsh` or `pwsh`.
//!
//! `wrap` mounts the shellgate binary over the real shells inside the wrapped agent, so an agent
//! that runs `/bin/bash -c LINE` by absolute path (Codex does) reaches shellgate. The entry point
//! reads its arguments the way that shell would, finds what would run, and has it judged: by the
//! `wrap` broker when there is one (outside the agent's sandbox), otherwise in this process. An
//! allowed line runs with the real shell and the caller's exact arguments.
//!
//! Nothing in the environment lets a shell through unjudged: lines the broker runs see the real
//! shells (their sandbox is built from the broker's own mount namespace), so the entry point is
//! only ever reached by the agent's own shells. The one exception is the agent's own process
//! ([`crate::wrap::enter::is_agent_process`]): an agent started through a shim script is that
//! script's shell first, and becomes the agent by `exec`.

use super::enter::{USER_BASHRC_ENV, is_agent_process, refuse};
use crate::error::{Code, Error};
use crate::gate::{self, Execution, LineRequest, Origin, Outcome};
use crate::parse::ShellKind;
use crate::parse::shell_args::{Invocation, parse_posix, parse_pwsh};
use crate::shell;
use crate::shell::{ACTIVE_ENV, real_shell};
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
        "dash" => Some(ShellKind::Sh),
        name => ShellKind::from_name(name),
    }
}

/// Run as the shell `kind` with these arguments (without argv\[0\]).
pub fn run(kind: ShellKind, args: Vec<OsString>) -> ExitCode {
    let stdin_tty = std::io::stdin().is_terminal();
    let invocation = match kind {
        ShellKind::Pwsh => parse_pwsh(&args, stdin_tty),
        _ => parse_posix(&args, stdin_tty),
    };
    // An interactive shell gets the hook, even as the agent itself (`wrap -- bash`).
    if invocation == Invocation::Interactive {
        return interactive(kind, &args);
    }
    if is_agent_process() {
        return exec_real(kind, &args, None);
    }
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
        words.push(crate::parse::posix_quote(&a.to_string_lossy()));
    }
    let _ = path;
    words.join(" ").into_bytes()
}

fn judge_and_run(kind: ShellKind, line: Vec<u8>, args: Vec<OsString>) -> ExitCode {
    let cwd = crate::session::working_dir(None);
    // Inside `wrap` the broker judges it (`broker::route`).
    let request = LineRequest::new(&line, kind, &cwd, Origin::Run, Execution::ShellArgs(args));
    match crate::broker::route(&request, &shell::side(kind, Origin::Run)) {
        Outcome::Ran { status, .. } => ExitCode::from(gate::exit_code(&status)),
        Outcome::Refused(e) => refuse(&e),
        Outcome::RunInShell { .. } => ExitCode::SUCCESS,
    }
}

/// An interactive shell inside a wrapped agent gets the hooks: bash reads shellgate's rc file
/// (which sources the user's `~/.bashrc`, or the `--rcfile` given, first), zsh shellgate's
/// ZDOTDIR. A shell that would skip them (`bash --norc` is handled; zsh's `-f`, bash's POSIX
/// mode, an interactive `sh` or `pwsh`, which shellgate has no hook for here) is refused: it would
/// be a shell whose lines nobody judges.
fn interactive(kind: ShellKind, args: &[OsString]) -> ExitCode {
    let Some(dir) = crate::env::get().own.wrap_dir.clone() else {
        return refuse(&Error::new(
            Code::SandboxExecFailed,
            format!(
                "an interactive {} reached shellgate's entry point outside wrap, where its lines                  could not be judged",
                kind.as_str()
            ),
        ));
    };
    match kind {
        ShellKind::Bash => match bash_with_hook(args, &dir) {
            Ok((args, user_rc)) => {
                let mut extra: Vec<(&str, OsString)> = Vec::new();
                if let Some(rc) = user_rc {
                    extra.push((USER_BASHRC_ENV, rc));
                }
                exec_real_with(kind, &args, &extra)
            }
            Err(e) => refuse(&e),
        },
        ShellKind::Zsh => match zsh_skips_startup_files(args) {
            Some(option) => refuse(&unhooked(kind, &option)),
            None => exec_real_with(kind, args, &[("ZDOTDIR", dir.join("zdotdir").into())]),
        },
        ShellKind::Sh | ShellKind::Pwsh => refuse(&Error::new(
            Code::SandboxExecFailed,
            format!(
                "an interactive {} cannot be gated inside wrap (shellgate has no hook for it \
                 here), so it was not started: use bash or zsh",
                kind.as_str()
            ),
        )),
    }
}

fn unhooked(kind: ShellKind, option: &str) -> Error {
    Error::new(
        Code::SandboxExecFailed,
        format!(
            "an interactive {} started with {option} would not read shellgate's hook, so none of its \
             lines would be judged; it was not started (start it without {option})",
            kind.as_str()
        ),
    )
}

/// bash's arguments with shellgate's rc file in place of the user's (`--norc`, `--rcfile F`,
/// `--init-file F` are taken out; F, or nothing, is what shellgate's rc file sources first), and
/// the rc file the user asked for: `Some("")` for `--norc`, `None` for the default `~/.bashrc`.
/// POSIX mode reads `$ENV` instead of any rc file: refused.
fn bash_with_hook(
    args: &[OsString],
    dir: &Path,
) -> Result<(Vec<OsString>, Option<OsString>), Error> {
    let mut rest = Vec::new();
    let mut user_rc = None;
    let mut i = 0;
    // bash takes its long options first, before any single-letter one.
    while let Some(word) = args.get(i) {
        match word.as_bytes() {
            b"--norc" => user_rc = Some(OsString::new()),
            b"--rcfile" | b"--init-file" => {
                i += 1;
                user_rc = Some(args.get(i).cloned().unwrap_or_default());
            }
            b"--posix" => return Err(unhooked(ShellKind::Bash, "--posix")),
            w if w.starts_with(b"--") && w != b"--" => rest.push(word.clone()),
            _ => break,
        }
        i += 1;
    }
    let tail = &args[i..];
    let posix_option = tail.windows(2).any(|w| w[0] == "-o" && w[1] == "posix");
    if posix_option {
        return Err(unhooked(ShellKind::Bash, "-o posix"));
    }
    let mut out: Vec<OsString> = vec!["--rcfile".into(), dir.join("bashrc").into()];
    out.extend(rest);
    out.extend_from_slice(tail);
    Ok((out, user_rc))
}

/// The zsh option that makes it skip its startup files (`-f`, alone or in a cluster, `--no-rcs`,
/// `-o norcs`, `+o rcs`, in any of zsh's spellings), if any, before its first operand.
fn zsh_skips_startup_files(args: &[OsString]) -> Option<String> {
    // zsh ignores case, `_` and `-` in option names; `no` in front negates.
    let skips = |name: &[u8], unset: bool| {
        let name: Vec<u8> = name
            .iter()
            .filter(|b| **b != b'_' && **b != b'-')
            .map(u8::to_ascii_lowercase)
            .collect();
        (name == b"norcs" && !unset) || (name == b"rcs" && unset)
    };
    let shown = |w: &[u8]| String::from_utf8_lossy(w).into_owned();
    let mut i = 0;
    while let Some(word) = args.get(i).map(|w| w.as_bytes()) {
        if word == b"--" || word == b"-" || !(word.starts_with(b"-") || word.starts_with(b"+")) {
            break;
        }
        if let Some(long) = word.strip_prefix(b"--") {
            if skips(long, false) {
                return Some(shown(word));
            }
            i += 1;
            continue;
        }
        let unset = word[0] == b'+';
        let letters = &word[1..];
        for (k, letter) in letters.iter().enumerate() {
            if *letter == b'f' && !unset {
                return Some(shown(word));
            }
            if *letter == b'o' {
                // The option's name is the rest of the cluster, or else the next word.
                let name = if k + 1 < letters.len() {
                    letters[k + 1..].to_vec()
                } else {
                    i += 1;
                    args.get(i)
                        .map(|v| v.as_bytes().to_vec())
                        .unwrap_or_default()
                };
                if skips(&name, unset) {
                    return Some(format!("{} {}", shown(word), shown(&name)));
                }
                break;
            }
        }
        i += 1;
    }
    None
}

/// Replace this process with the real shell.
fn exec_real(kind: ShellKind, args: &[OsString], zdotdir: Option<PathBuf>) -> ExitCode {
    match zdotdir {
        Some(dir) => exec_real_with(kind, args, &[("ZDOTDIR", dir.into())]),
        None => exec_real_with(kind, args, &[]),
    }
}

/// Replace this process with the real shell, with these variables set (and never
/// `SHELLGATE_ACTIVE`, which would turn a wrapped shell's hook off).
fn exec_real_with(kind: ShellKind, args: &[OsString], vars: &[(&str, OsString)]) -> ExitCode {
    let Some(real) = real_shell(kind).filter(|p| !is_this_binary(p)) else {
        return refuse(&Error::new(
            Code::SandboxExecFailed,
            format!(
                "the real {} is hidden behind shellgate and {} does not name it",
                kind.as_str(),
                crate::own_env::real_shell_env(kind)
            ),
        ));
    };
    let mut command = std::process::Command::new(&real);
    command.args(args).env_remove(ACTIVE_ENV);
    for (key, value) in vars {
        command.env(key, value);
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

    fn words(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn zsh_options_that_skip_the_hook_are_found() {
        for args in [
            &["-f"][..],
            &["-if"],
            &["--no-rcs"],
            &["--NO_RCS"],
            &["-o", "norcs"],
            &["-onorcs"],
            &["+o", "rcs"],
            &["-i", "-o", "No_Rcs"],
        ] {
            assert!(zsh_skips_startup_files(&words(args)).is_some(), "{args:?}");
        }
        for args in [
            &["-i"][..],
            &["+o", "norcs"],
            &["-o", "rcs"],
            &["script", "-f"],
            &["-c", "x"],
        ] {
            assert_eq!(zsh_skips_startup_files(&words(args)), None, "{args:?}");
        }
    }

    #[test]
    fn bash_gets_shellgates_rc_file_in_place_of_the_users() {
        let dir = Path::new("/w");
        let (args, rc) = bash_with_hook(&words(&["--norc", "-i"]), dir).unwrap();
        assert_eq!(args, words(&["--rcfile", "/w/bashrc", "-i"]));
        assert_eq!(rc, Some(OsString::new()));
        let (args, rc) =
            bash_with_hook(&words(&["--rcfile", "my rc", "--login", "-i"]), dir).unwrap();
        assert_eq!(args, words(&["--rcfile", "/w/bashrc", "--login", "-i"]));
        assert_eq!(rc, Some(OsString::from("my rc")));
        let (args, rc) = bash_with_hook(&words(&[]), dir).unwrap();
        assert_eq!(args, words(&["--rcfile", "/w/bashrc"]));
        assert_eq!(rc, None);
        assert!(bash_with_hook(&words(&["--posix"]), dir).is_err());
        assert!(bash_with_hook(&words(&["-i", "-o", "posix"]), dir).is_err());
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
