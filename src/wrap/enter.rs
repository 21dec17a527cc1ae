//! `wrap-enter` and `wrap-agent`: the agent's side of `wrap`, single-threaded, between `wrap` and
//! the agent.
//!
//! `wrap-enter` makes the private mount namespace (a tmpfs with the hook files and the real shells,
//! shellgate over the shells' usual paths, the agent's file mounts), then starts `wrap-agent` — in
//! the workspace-write sandbox, or as is — which marks its own process as the agent
//! ([`AGENT_ENV`]) and becomes the agent.

use crate::error::{Code, Error, Reader, Result, print_refusal};
use crate::parse::ShellKind;
use crate::sandbox::mounts;
use crate::shell::templates::{self, HookShell};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The real shells `wrap` hides, by the path the entry point is mounted on.
pub const SHELLS: [(ShellKind, &str, &str); 3] = [
    (ShellKind::Bash, "bash", "/usr/bin/bash"),
    (ShellKind::Sh, "sh", "/usr/bin/dash"),
    (ShellKind::Zsh, "zsh", "/usr/bin/zsh"),
];

/// See [`crate::own_env`], where every one of shellgate's variables is listed with its trust.
pub use crate::own_env::AGENT_ENV;

/// What `wrap-enter` is asked to do: `wrap`'s own argument list for it (built by `wrap`'s
/// `agent_command`, parsed by `cmd::wrap`).
#[derive(Debug, Clone, Default)]
pub struct EnterOptions {
    /// The private directory the tmpfs is mounted on (hook files, the real shells).
    pub dir: PathBuf,
    /// Whether the agent runs in the workspace-write sandbox.
    pub contain: bool,
    /// Extra directories the contained agent may write.
    pub writable: Vec<PathBuf>,
    /// Read-only inside a writable directory (an agent's shell snapshots, which only the broker
    /// writes).
    pub read_only: Vec<PathBuf>,
    /// Credential stores the contained agent may read (its own login; its lines still cannot).
    pub unhide: Vec<PathBuf>,
    /// `SOURCE=TARGET`: SOURCE (a file) mounted writable over TARGET in the agent's namespace.
    pub bind: Vec<OsString>,
    /// The agent and its arguments.
    pub agent: Vec<OsString>,
}

pub fn run(options: &EnterOptions) -> ExitCode {
    let ready = this_binary().and_then(|exe| {
        let binds = options
            .bind
            .iter()
            .map(split_bind)
            .collect::<Result<Vec<_>>>()?;
        prepare(options, &exe, &binds)?;
        Ok((exe, binds))
    });
    match ready {
        Ok((exe, binds)) => launch(options, &exe, &binds),
        Err(e) => refuse(&e),
    }
}

/// The private mount namespace: a tmpfs with the hook files and the real shells, shellgate over
/// the shells' usual paths, and the agent's file mounts (`binds`: `(source, target)`).
fn prepare(options: &EnterOptions, exe: &Path, binds: &[(PathBuf, PathBuf)]) -> Result<()> {
    mounts::enter().map_err(|why| {
        Error::new(
            Code::SandboxUnavailable,
            format!("wrap needs a private mount namespace to put shellgate in front of the shells: {why}"),
        )
    })?;
    mounts::mount_private_tmp(&options.dir)?;
    write_hook_files(&options.dir, exe)?;
    for (_, name, path) in SHELLS {
        let Ok(real) = std::fs::canonicalize(path) else {
            continue;
        };
        let hidden = options.dir.join(name);
        std::fs::write(&hidden, b"").map_err(|e| io_error(&hidden, &e))?;
        mounts::bind_file_read_only(&real, &hidden)?;
        mounts::bind_file_read_only(exe, &real)?;
    }
    mounts::remount_tmpfs_read_only(&options.dir)?;
    for (source, target) in binds {
        mounts::bind_file(source, target)?;
    }
    Ok(())
}

fn split_bind(bind: &OsString) -> Result<(PathBuf, PathBuf)> {
    let bytes = bind.as_bytes();
    let eq = bytes
        .iter()
        .position(|b| *b == b'=')
        .ok_or_else(|| Error::usage("--bind takes SOURCE=TARGET"))?;
    let path = |b: &[u8]| PathBuf::from(std::ffi::OsStr::from_bytes(b));
    Ok((path(&bytes[..eq]), path(&bytes[eq + 1..])))
}

fn this_binary() -> Result<PathBuf> {
    std::fs::canonicalize("/proc/self/exe")
        .map_err(|e| Error::internal(format!("cannot locate the shellgate binary: {e}")))
}

fn write_hook_files(dir: &Path, exe: &Path) -> Result<()> {
    let exe = exe.to_string_lossy();
    let hook_bash = dir.join("hook.bash");
    let hook_zsh = dir.join("hook.zsh");
    let zdotdir = dir.join("zdotdir");
    let files: [(PathBuf, String); 5] = [
        (
            hook_bash.clone(),
            format!(
                "{BASH_AGENT_GUARD}{}",
                templates::render(HookShell::Bash, &exe)
            ),
        ),
        (
            hook_zsh.clone(),
            format!(
                "{ZSH_AGENT_GUARD}{}",
                templates::render(HookShell::Zsh, &exe)
            ),
        ),
        (
            dir.join("bashrc"),
            // The user's own rc file first (`--rcfile FILE` names another, `--norc` none), then
            // the hook, which is not loaded twice.
            format!(
                "if [ -n \"${{{rc}+set}}\" ]; then\n  \
                   [ -n \"${rc}\" ] && [ -f \"${rc}\" ] && . \"${rc}\"\n  \
                   unset {rc}\n\
                 elif [ -f ~/.bashrc ]; then\n  . ~/.bashrc\nfi\n. {hook}\n",
                rc = USER_BASHRC_ENV,
                hook = crate::parse::posix_quote(&hook_bash.to_string_lossy())
            ),
        ),
        (
            zdotdir.join(".zshenv"),
            format!(
                ". {hook}\nZDOTDIR=\"${{SHELLGATE_USER_ZDOTDIR:-$HOME}}\"\n[[ -f \"$ZDOTDIR/.zshenv\" ]] && . \"$ZDOTDIR/.zshenv\"\n[[ -o interactive ]] && ZDOTDIR={zdotdir}\n",
                hook = crate::parse::posix_quote(&hook_zsh.to_string_lossy()),
                zdotdir = crate::parse::posix_quote(&zdotdir.to_string_lossy()),
            ),
        ),
        (
            zdotdir.join(".zshrc"),
            format!(
                "ZDOTDIR=\"${{SHELLGATE_USER_ZDOTDIR:-$HOME}}\"\n[[ -f \"$ZDOTDIR/.zshrc\" ]] && . \"$ZDOTDIR/.zshrc\"\n. {}\n",
                crate::parse::posix_quote(&hook_zsh.to_string_lossy())
            ),
        ),
    ];
    std::fs::create_dir_all(&zdotdir).map_err(|e| io_error(&zdotdir, &e))?;
    for (path, text) in files {
        std::fs::write(&path, text).map_err(|e| io_error(&path, &e))?;
    }
    Ok(())
}

/// The first lines of wrap's copy of the bash hook: the agent's own process running a script (a
/// shim run by bash, which reads `BASH_ENV` first) returns before the hook, which would otherwise run the
/// whole script as one gated line, and with it the agent, in a line's sandbox.
const BASH_AGENT_GUARD: &str = r#"if [[ $- != *i* && -n ${SHELLGATE_WRAP_AGENT-} ]] && read -r __sg_stat < /proc/$$/stat 2>/dev/null; then
  read -ra __sg_fields <<< "${__sg_stat##*) }"
  if [[ "$$:${__sg_fields[19]-}" == "$SHELLGATE_WRAP_AGENT" ]]; then
    unset __sg_stat __sg_fields
    return 0 2>/dev/null
  fi
  unset __sg_stat __sg_fields
fi
"#;

/// The same for zsh (`.zshenv` sources the hook first).
const ZSH_AGENT_GUARD: &str = r#"if [[ ! -o interactive && -n ${SHELLGATE_WRAP_AGENT-} ]] && read -r __sg_stat < /proc/$$/stat 2>/dev/null; then
  __sg_fields=(${=${__sg_stat##*) }})
  if [[ "$$:${__sg_fields[20]-}" == "$SHELLGATE_WRAP_AGENT" ]]; then
    unset __sg_stat __sg_fields
    return 0 2>/dev/null
  fi
  unset __sg_stat __sg_fields
fi
"#;

/// See [`crate::own_env`], where every one of shellgate's variables is listed with its trust.
pub use crate::own_env::USER_BASHRC_ENV;

fn io_error(path: &Path, e: &std::io::Error) -> Error {
    Error::new(
        Code::SandboxUnavailable,
        format!("wrap cannot prepare {}: {e}", path.display()),
    )
}

/// Start `wrap-agent`: inside the workspace-write sandbox (network on), or as is.
fn launch(options: &EnterOptions, exe: &Path, binds: &[(PathBuf, PathBuf)]) -> ExitCode {
    let mut command = if options.contain {
        let mut command = Command::new(exe);
        command
            .arg0("shellgate")
            .args(["sandbox", "--policy", "workspace-write", "--network"]);
        // The broker's socket, the one unix socket the agent may reach (its shells hand it
        // their lines).
        if let Some(broker) = crate::broker::broker_path() {
            command.arg("--unix-socket").arg(broker);
        }
        for w in &options.writable {
            command.arg("--writable").arg(w);
        }
        for r in &options.read_only {
            command.arg("--read-only").arg(r);
        }
        for u in &options.unhide {
            command.arg("--unhide").arg(u);
        }
        // The agent's own file mounts (made in `prepare`) lie beneath its writable roots, where
        // every other mount is read-only.
        for (_, target) in binds {
            command.arg("--writable-mount").arg(target);
        }
        command.arg("--").arg(exe);
        command
    } else {
        let mut command = Command::new(exe);
        command.arg0("shellgate");
        command
    };
    command.arg("wrap-agent").arg("--").args(&options.agent);
    let error = command.exec();
    refuse(&Error::new(
        Code::SandboxExecFailed,
        format!("cannot start the agent: {error}"),
    ))
}

/// `wrap-agent`: mark this process as the agent, and become it.
pub fn become_agent(agent: &[OsString]) -> ExitCode {
    let Some((program, rest)) = agent.split_first() else {
        return refuse(&Error::usage("wrap needs an agent to run"));
    };
    let Some(mark) = own_mark() else {
        return refuse(&Error::internal(
            "cannot read this process's start time from /proc/self/stat",
        ));
    };
    let error = Command::new(program)
        .args(rest)
        .env(AGENT_ENV, mark)
        .env_remove(crate::shell::ACTIVE_ENV)
        .exec();
    refuse(&Error::new(
        Code::SandboxExecFailed,
        format!(
            "cannot start the agent {}: {error}",
            program.to_string_lossy()
        ),
    ))
}

/// Becomes `agent` without marking it (a `wrap` inside a wrapped agent).
pub fn exec_unmarked(agent: &[OsString]) -> ExitCode {
    let Some((program, rest)) = agent.split_first() else {
        return refuse(&Error::usage("wrap needs an agent to run"));
    };
    let error = Command::new(program)
        .args(rest)
        .env_remove(AGENT_ENV)
        .exec();
    refuse(&Error::new(
        Code::SandboxExecFailed,
        format!(
            "cannot start the agent {}: {error}",
            program.to_string_lossy()
        ),
    ))
}

/// `PID:START` of this process.
fn own_mark() -> Option<String> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    Some(format!("{}:{}", std::process::id(), start_time(&stat)?))
}

/// Field 22 (`starttime`) of `/proc/PID/stat`; the command name (field 2) may hold spaces and
/// parentheses, so fields are counted after its last `)`.
fn start_time(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(19)?.parse().ok()
}

/// Is this process the wrapped agent's own (see [`AGENT_ENV`])?
pub fn is_agent_process() -> bool {
    match (&crate::env::get().own.agent, own_mark()) {
        (Some(expected), Some(mine)) => *expected == *mine,
        _ => false,
    }
}

/// A refusal inside the wrapped agent: for the agent to read, with its exit status (also the
/// shell entry point's, `entry`).
pub(super) fn refuse(e: &Error) -> ExitCode {
    ExitCode::from(print_refusal(e, Reader::Agent))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_is_field_22_after_the_name() {
        let stat = "4242 (a) b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 \
                    200 18446744073709551615";
        assert_eq!(start_time(stat), Some(987654));
        assert_eq!(start_time("garbage"), None);
        let mine = own_mark().unwrap();
        assert!(mine.starts_with(&format!("{}:", std::process::id())));
    }

    #[test]
    fn binds_split_at_the_first_equals() {
        let (s, t) =
            split_bind(&OsString::from("/h/.claude.json=/h/.claude/.claude.json")).unwrap();
        assert_eq!(s, PathBuf::from("/h/.claude.json"));
        assert_eq!(t, PathBuf::from("/h/.claude/.claude.json"));
        assert!(split_bind(&OsString::from("nothing")).is_err());
    }
}
