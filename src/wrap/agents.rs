//! The agents `wrap` knows, and what each needs to work inside it.
//!
//! A contained agent writes only its workspace, the temp dirs and what is listed here: its own
//! state directory, created on a first run (the sandbox no longer lets it create one in the
//! home). Its own login stays readable to it (never to its lines). Where an agent would wrap its
//! lines in something intake must refuse, or run them as login shells that reset `PATH`, `wrap`
//! starts it with its own settings that keep the lines plain:
//!
//! * **Codex CLI**: `-c features.shell_snapshot=false -c allow_login_shell=false` — no
//!   shell-snapshot script around every command (tens of thousands of characters), and
//!   `bash -c` instead of `bash -lc`, which keeps the agent's `PATH`.
//! * **Claude Code**: its snapshot script (which sources `~/.bashrc` and is longer than intake's
//!   limit) is not run; the broker writes the snapshot itself ([`claude_snapshot`]): the agent's
//!   `PATH`, nothing else. The snapshot directory is read-only to the agent, so what every command
//!   sources is what shellgate wrote. `~/.claude.json` is kept writable through
//!   `CLAUDE_CONFIG_DIR` (see [`Plan`]).
//!
//! An agent is known by its program's name (`claude`, `codex`), also after `env` and variable
//! assignments. Started another way (a shim, a script), it runs without these settings: its
//! lines are still all gated, but may be refused (the snapshot script is too long).

use crate::error::{Code, Error, Result};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// An agent `wrap` has settings for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    ClaudeCode,
    Codex,
}

/// What the contained agent gets besides the workspace and the temp dirs.
#[derive(Debug, Default)]
pub struct Plan {
    pub known: Option<Known>,
    /// The agent's command line, with its settings.
    pub argv: Vec<OsString>,
    /// Variables set for the agent.
    pub env: Vec<(OsString, OsString)>,
    /// Writable directories (created when missing).
    pub writable: Vec<PathBuf>,
    /// Read-only directories inside them.
    pub read_only: Vec<PathBuf>,
    /// The agent's own credential files: readable by the agent, hidden from its lines.
    pub unhidden: Vec<PathBuf>,
    /// `(source, target)`: a file mounted writable over another in the agent's namespace.
    pub binds: Vec<(PathBuf, PathBuf)>,
}

/// The agent's program, after `env`, its options and `NAME=VALUE` words.
pub fn identify(agent: &[OsString]) -> Option<Known> {
    match base_name(agent.get(program_index(agent))?.as_bytes()) {
        b"claude" => Some(Known::ClaudeCode),
        b"codex" => Some(Known::Codex),
        _ => None,
    }
}

fn base_name(word: &[u8]) -> &[u8] {
    word.rsplit(|b| *b == b'/').next().unwrap_or(word)
}

fn is_assignment(word: &[u8]) -> bool {
    match word.iter().position(|b| *b == b'=') {
        Some(eq) if eq > 0 => word[..eq]
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_'),
        _ => false,
    }
}

/// The plan for `agent`, run by a user whose home is `home` with these environment variables.
pub fn plan(
    agent: &[OsString],
    home: Option<&Path>,
    var: &dyn Fn(&str) -> Option<OsString>,
) -> Plan {
    let known = identify(agent);
    let mut plan = Plan {
        known,
        argv: agent.to_vec(),
        ..Plan::default()
    };
    let Some(home) = home else {
        return plan;
    };
    match known {
        Some(Known::ClaudeCode) => claude_code(&mut plan, home, var),
        Some(Known::Codex) => codex(&mut plan, home, var),
        None => {}
    }
    plan.writable.push(home.join(".cache"));
    plan
}

/// Claude Code keeps its settings, sessions and login in `~/.claude` (or `$CLAUDE_CONFIG_DIR`),
/// and its global state in `~/.claude.json`, which it replaces by writing a temporary file next
/// to it and renaming it — impossible in a read-only home. With `CLAUDE_CONFIG_DIR` set to the
/// state directory, Claude Code keeps that file inside it instead; `wrap` mounts the real
/// `~/.claude.json` there, so the rename fails on the mount point (`EBUSY`) and Claude Code
/// writes the file in place, which is the user's real file.
fn claude_code(plan: &mut Plan, home: &Path, var: &dyn Fn(&str) -> Option<OsString>) {
    let configured = var("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty());
    let dir = configured
        .as_ref()
        .map_or_else(|| home.join(".claude"), PathBuf::from);
    let snapshots = dir.join("shell-snapshots");
    if create_private_dir(&dir) && create_private_dir(&snapshots) {
        plan.read_only.push(snapshots);
    }
    plan.unhidden.push(dir.join(".credentials.json"));
    if configured.is_none()
        && let Some(target) = global_config_target(home, &dir)
    {
        plan.env
            .push(("CLAUDE_CONFIG_DIR".into(), dir.clone().into_os_string()));
        plan.binds.push((home.join(".claude.json"), target));
    }
    plan.writable.push(dir);
}

/// Where `~/.claude.json` is mounted: `DIR/.claude.json`, created empty (the mount point) unless
/// it is a file with contents of its own, which is then left alone (and `~/.claude.json` stays
/// read-only). `~/.claude.json` itself is created (`{}`) on a first run, so that the agent's
/// state outlives the run.
fn global_config_target(home: &Path, dir: &Path) -> Option<PathBuf> {
    let global = home.join(".claude.json");
    let target = dir.join(".claude.json");
    if !create_private_file(&global, b"{}\n") {
        return None;
    }
    match std::fs::symlink_metadata(&target) {
        Ok(meta) if meta.is_file() && meta.len() == 0 => Some(target),
        Ok(_) => None,
        Err(_) => create_private_file(&target, b"").then_some(target),
    }
}

/// Codex keeps everything in `$CODEX_HOME` (`~/.codex`).
fn codex(plan: &mut Plan, home: &Path, var: &dyn Fn(&str) -> Option<OsString>) {
    let dir = var("CODEX_HOME")
        .filter(|d| !d.is_empty())
        .map_or_else(|| home.join(".codex"), PathBuf::from);
    create_private_dir(&dir);
    plan.unhidden.push(dir.join("auth.json"));
    plan.writable.push(dir);
    let settings = [
        "features.shell_snapshot=false",
        "features.shell_snapshot_v2=false",
        "allow_login_shell=false",
    ];
    let at = program_index(&plan.argv) + 1;
    let mut argv = plan.argv[..at].to_vec();
    for setting in settings {
        argv.push("-c".into());
        argv.push(setting.into());
    }
    argv.extend_from_slice(&plan.argv[at..]);
    plan.argv = argv;
}

/// The index of the agent's program word: the first after `env`, its options and `NAME=VALUE`
/// words (`env -u NAME` takes `NAME` for the program: then no agent is known, and none of the
/// settings apply).
fn program_index(agent: &[OsString]) -> usize {
    let mut in_env = false;
    for (i, word) in agent.iter().enumerate() {
        let word = word.as_bytes();
        if base_name(word) == b"env" && (i == 0 || in_env) {
            in_env = true;
        } else if !(in_env && (word.starts_with(b"-") || is_assignment(word))) {
            return i;
        }
    }
    agent.len().saturating_sub(1)
}

/// A private directory (0700), not recursive: only where its parent exists. `false` if it is not
/// a directory afterwards.
fn create_private_dir(dir: &Path) -> bool {
    let _ = std::fs::DirBuilder::new().mode(0o700).create(dir);
    std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
}

/// A private file (0600) with `contents` unless it exists. `false` if it is not a regular file
/// afterwards (a symlink is never followed).
fn create_private_file(path: &Path, contents: &[u8]) -> bool {
    use std::io::Write;
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
        let _ = file.write_all(contents);
    }
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

// ---------------------------------------------------------------------------------------------
// Claude Code's shell snapshot.

/// The first line of Claude Code's snapshot script: `SNAPSHOT_FILE='<dir>/snapshot-<shell>-<ms>-<id>.sh'`.
const SNAPSHOT_PREFIX: &str = "SNAPSHOT_FILE=";

/// When `args` are Claude Code's snapshot invocation (`-c -l SCRIPT` whose first line names a
/// snapshot file in `snapshots`), the file it names. Nothing of the script runs: the caller
/// writes the snapshot with [`write_claude_snapshot`].
pub fn claude_snapshot(args: &[OsString], snapshots: &Path) -> Option<PathBuf> {
    let [c, l, script] = args else {
        return None;
    };
    if c != "-c" || l != "-l" {
        return None;
    }
    let first = script.as_bytes().split(|b| *b == b'\n').next()?;
    let word = std::str::from_utf8(first)
        .ok()?
        .strip_prefix(SNAPSHOT_PREFIX)?;
    // Claude Code quotes the path only when it needs quotes.
    let path = match word.strip_prefix('\'') {
        Some(quoted) => quoted.strip_suffix('\'').filter(|p| !p.contains('\''))?,
        None if word.bytes().all(is_plain) => word,
        None => return None,
    };
    let path = Path::new(path);
    (path.parent() == Some(snapshots) && is_snapshot_name(path.file_name()?))
        .then(|| path.to_owned())
}

/// A byte that needs no quoting in a shell word (what shell-quote leaves bare).
fn is_plain(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"/._-+@%:,=".contains(&b)
}

/// `snapshot-(bash|zsh|sh)-<digits>-<[a-z0-9]+>.sh`.
fn is_snapshot_name(name: &OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    let Some(rest) = name
        .strip_prefix("snapshot-")
        .and_then(|r| r.strip_suffix(".sh"))
    else {
        return false;
    };
    let mut parts = rest.split('-');
    let (Some(shell), Some(time), Some(id), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    matches!(shell, "bash" | "zsh" | "sh")
        && !time.is_empty()
        && time.bytes().all(|b| b.is_ascii_digit())
        && !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// Writes the snapshot Claude Code will source before every command: the agent's `PATH`. The
/// file is created new (never through a symlink, never over an existing file).
pub fn write_claude_snapshot(path: &Path, agent_path: Option<&OsStr>) -> Result<()> {
    use std::io::Write;
    let mut text =
        b"# Written by shellgate wrap in place of Claude Code's snapshot script, which it \
did not run.\n"
            .to_vec();
    if let Some(value) = agent_path {
        text.extend_from_slice(b"export PATH=");
        text.extend_from_slice(crate::parse::posix_quote(&value.to_string_lossy()).as_bytes());
        text.push(b'\n');
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| {
            Error::new(
                Code::SandboxExecFailed,
                format!(
                    "cannot write Claude Code's shell snapshot {}: {e}",
                    path.display()
                ),
            )
        })?;
    file.write_all(&text).map_err(|e| {
        Error::new(
            Code::SandboxExecFailed,
            format!(
                "cannot write Claude Code's shell snapshot {}: {e}",
                path.display()
            ),
        )
    })
}

/// Claude Code's snapshot directory for a user with this home and environment.
pub fn claude_snapshots(home: &Path, var: &dyn Fn(&str) -> Option<OsString>) -> PathBuf {
    var("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| home.join(".claude"), PathBuf::from)
        .join("shell-snapshots")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn agents_are_known_by_their_program() {
        assert_eq!(
            identify(&words(&["claude", "-p", "x"])),
            Some(Known::ClaudeCode)
        );
        assert_eq!(
            identify(&words(&["/opt/bin/codex", "exec"])),
            Some(Known::Codex)
        );
        assert_eq!(
            identify(&words(&["env", "A=1", "codex"])),
            Some(Known::Codex)
        );
        assert_eq!(
            identify(&words(&["env", "-i", "A=1", "claude"])),
            Some(Known::ClaudeCode)
        );
        assert_eq!(identify(&words(&["python3", "claude"])), None);
        assert_eq!(identify(&words(&["claude-shim"])), None);
    }

    #[test]
    fn codex_gets_plain_lines() {
        let plan = plan(
            &words(&["env", "X=1", "codex", "exec", "hi"]),
            None,
            &|_| None,
        );
        assert_eq!(plan.argv, words(&["env", "X=1", "codex", "exec", "hi"]));
        let dir = tempfile::tempdir().unwrap();
        let plan = super::plan(
            &words(&["env", "X=1", "codex", "exec", "hi"]),
            Some(dir.path()),
            &|_| None,
        );
        assert_eq!(
            plan.argv,
            words(&[
                "env",
                "X=1",
                "codex",
                "-c",
                "features.shell_snapshot=false",
                "-c",
                "features.shell_snapshot_v2=false",
                "-c",
                "allow_login_shell=false",
                "exec",
                "hi"
            ])
        );
        assert!(dir.path().join(".codex").is_dir());
        assert_eq!(plan.unhidden, vec![dir.path().join(".codex/auth.json")]);
    }

    #[test]
    fn claude_codes_global_config_is_mounted_into_its_state_dir() {
        let home = tempfile::tempdir().unwrap();
        let plan = plan(&words(&["claude"]), Some(home.path()), &|_| None);
        let dir = home.path().join(".claude");
        assert_eq!(
            std::fs::read(home.path().join(".claude.json")).unwrap(),
            b"{}\n"
        );
        assert_eq!(
            plan.binds,
            vec![(home.path().join(".claude.json"), dir.join(".claude.json"))]
        );
        assert_eq!(plan.read_only, vec![dir.join("shell-snapshots")]);
        assert!(
            plan.env
                .contains(&("CLAUDE_CONFIG_DIR".into(), dir.clone().into_os_string()))
        );
        // A state dir that already has a global config of its own is left alone.
        std::fs::write(dir.join(".claude.json"), "{\"x\":1}").unwrap();
        let plan = super::plan(&words(&["claude"]), Some(home.path()), &|_| None);
        assert!(plan.binds.is_empty() && plan.env.is_empty());
    }

    #[test]
    fn only_the_exact_snapshot_invocation_is_recognised() {
        let dir = Path::new("/home/u/.claude/shell-snapshots");
        let script = |first: &str| words(&["-c", "-l", &format!("{first}\n      source x\n")]);
        let ok =
            "SNAPSHOT_FILE='/home/u/.claude/shell-snapshots/snapshot-bash-1764585600000-ab12cd.sh'";
        assert_eq!(
            claude_snapshot(&script(ok), dir),
            Some(dir.join("snapshot-bash-1764585600000-ab12cd.sh"))
        );
        for bad in [
            "SNAPSHOT_FILE='/home/u/.claude/shell-snapshots/../x/snapshot-bash-1-a.sh'",
            "SNAPSHOT_FILE='/home/u/.claude/shell-snapshots/snapshot-bash-1-a.sh'; rm -rf ~",
            "SNAPSHOT_FILE=/home/u/.claude/shell-snapshots/snapshot-bash-1-a.sh;ls",
            "SNAPSHOT_FILE=/home/u/.claude/shell-snapshots/snapshot-bash-1-a.sh x",
            "SNAPSHOT_FILE='/home/u/.claude/shell-snapshots/snapshot-bash-1-a.sh'x'",
            "SNAPSHOT_FILE='/tmp/shell-snapshots/snapshot-bash-1-a.sh'",
            "SNAPSHOT_FILE='/home/u/.claude/shell-snapshots/snapshot-fish-1-a.sh'",
            "SNAPSHOT_FILE='/home/u/.claude/shell-snapshots/snapshot-bash-1-A.sh'",
            "X=1 SNAPSHOT_FILE='/home/u/.claude/shell-snapshots/snapshot-bash-1-a.sh'",
        ] {
            assert_eq!(claude_snapshot(&script(bad), dir), None, "{bad}");
        }
        let bare = "SNAPSHOT_FILE=/home/u/.claude/shell-snapshots/snapshot-zsh-17-z9.sh";
        assert_eq!(
            claude_snapshot(&script(bare), dir),
            Some(dir.join("snapshot-zsh-17-z9.sh"))
        );
        let mut other = script(ok);
        other[1] = "-lc".into();
        assert_eq!(claude_snapshot(&other, dir), None);
    }

    #[test]
    fn the_snapshot_is_written_new_and_quoted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("snapshot-bash-1-a.sh");
        write_claude_snapshot(&path, Some(OsStr::new("/a b:/it's"))).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with("export PATH='/a b:/it'\\''s'\n"), "{text}");
        assert!(
            write_claude_snapshot(&path, None).is_err(),
            "never over an existing file"
        );
        let link = dir.path().join("snapshot-bash-2-a.sh");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
        assert!(
            write_claude_snapshot(&link, None).is_err(),
            "never through a symlink"
        );
        assert!(!dir.path().join("elsewhere").exists());
    }
}
