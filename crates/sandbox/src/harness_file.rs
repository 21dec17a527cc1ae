//! The one file an agent harness writes besides its line: Claude Code's working-directory file
//! (`pwd -P >| <temp dir>/claude-XXXX-cwd` after every line; docs/parsing.md, "Agent
//! harnesses"). Claude Code reads the shell's directory from it after the line, then deletes it.
//!
//! A read-only line must not need a writable temp dir for it, and a line must not be able to
//! pass off another file as it: the parser accepts only Claude's name for it, and here it is
//! opened outside the sandbox — only in the temp dir the agent's environment gives Claude Code,
//! only beneath `/tmp` or `/var/tmp`, never through a symlink, only a regular file of the user's
//! own with no other name — then handed to the line as a descriptor. The line's sandbox grants
//! nothing for it. Every check that fails refuses the line and says which.

use super::sys;
use crate::error::{Code, Error, Result};
use crate::parse::harness::HarnessWrite;
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Where Claude Code puts its working-directory file, as it computes it from the environment of
/// the shell it starts (the same as its own): `CLAUDE_CODE_TMPDIR`, else its runtime's temp dir
/// (`TMPDIR`, `TMP`, `TEMP`, else `/tmp`; the first one set and not empty), without a trailing
/// slash.
pub fn claude_temp_dir(env: &[(OsString, OsString)]) -> String {
    let var = |name: &str| {
        env.iter()
            .rev()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.to_string_lossy().into_owned())
            .filter(|value| !value.is_empty())
    };
    let dir = ["CLAUDE_CODE_TMPDIR", "TMPDIR", "TMP", "TEMP"]
        .iter()
        .find_map(|name| var(name))
        .unwrap_or_else(|| "/tmp".to_owned());
    match dir.strip_suffix('/') {
        Some(trimmed) if !trimmed.is_empty() => trimmed.to_owned(),
        _ => dir,
    }
}

/// Opens the file `write` names for the line to write through a descriptor (created when
/// missing, emptied as `>|` would), after checking that it is Claude Code's and nothing else.
pub fn open(write: &HarnessWrite, env: &[(OsString, OsString)]) -> Result<OwnedFd> {
    let refuse = |why: String| {
        Error::new(
            Code::SandboxExecFailed,
            format!(
                "cannot hand the line Claude Code's working-directory file {}: {why}",
                write.path
            ),
        )
    };
    let (dir, name) = write
        .dir_and_name()
        .ok_or_else(|| refuse("it is not an absolute path".to_owned()))?;
    let expected = claude_temp_dir(env);
    if dir != expected {
        return Err(refuse(format!(
            "it is not in the agent's temp dir ({expected}), where Claude Code writes it"
        )));
    }
    if !is_beneath_a_temp_base(dir) {
        return Err(refuse(format!(
            "the agent's temp dir {dir} is not /tmp, /var/tmp or beneath them"
        )));
    }
    let dir_fd = sys::open_path_no_symlinks(Path::new(dir)).map_err(|e| {
        refuse(format!(
            "cannot open {dir} without following a symlink: {e}"
        ))
    })?;
    let fd = sys::open_for_writing_in(std::os::fd::AsFd::as_fd(&dir_fd), OsStr::new(name), 0o600)
        .map_err(|e| refuse(format!("cannot open it without following a symlink: {e}")))?;
    let file = std::fs::File::from(fd);
    let meta = file
        .metadata()
        .map_err(|e| refuse(format!("cannot read what was opened: {e}")))?;
    if !meta.is_file() || meta.uid() != sys::geteuid() || meta.nlink() != 1 {
        return Err(refuse(
            "it is not a regular file of the user's own with one name (a link to another file?)"
                .to_owned(),
        ));
    }
    file.set_len(0)
        .map_err(|e| refuse(format!("cannot empty it: {e}")))?;
    Ok(OwnedFd::from(file))
}

/// `/tmp`, `/var/tmp` or a directory beneath one, by the path as written (which has no `.`, `..`
/// or empty component, and is opened without following symlinks).
fn is_beneath_a_temp_base(dir: &str) -> bool {
    ["/tmp", "/var/tmp"]
        .iter()
        .any(|base| dir == *base || dir.strip_prefix(base).is_some_and(|r| r.starts_with('/')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn the_temp_dir_is_claude_codes() {
        assert_eq!(claude_temp_dir(&[]), "/tmp");
        assert_eq!(claude_temp_dir(&env(&[("TMPDIR", "/tmp/x/")])), "/tmp/x");
        assert_eq!(claude_temp_dir(&env(&[("TMPDIR", "/")])), "/");
        assert_eq!(
            claude_temp_dir(&env(&[
                ("TMPDIR", "/tmp/a"),
                ("CLAUDE_CODE_TMPDIR", "/tmp/b")
            ])),
            "/tmp/b"
        );
        assert_eq!(
            claude_temp_dir(&env(&[("TMPDIR", ""), ("TEMP", "/var/tmp")])),
            "/var/tmp"
        );
    }

    #[test]
    fn only_temp_bases_and_beneath() {
        assert!(is_beneath_a_temp_base("/tmp"));
        assert!(is_beneath_a_temp_base("/var/tmp/x"));
        assert!(!is_beneath_a_temp_base("/tmpx"));
        assert!(!is_beneath_a_temp_base("/home/u/tmp"));
        assert!(!is_beneath_a_temp_base("/"));
    }
}
