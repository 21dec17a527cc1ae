//! What the decision needs to know of the git repository a line runs in: its remotes
//! ([`crate::policy::remotes`]), read from its config file the way git finds it — the nearest
//! `.git` above the working directory, a directory or a `gitdir:` file, and a linked worktree's
//! common directory. Reading it is all this does: nothing here runs git.
//!
//! The file is the workspace's, so a line may have written it: it is opened without blocking
//! (a FIFO there must not hang the gate), read only when it is a regular file, and at most
//! [`MAX_CONFIG_BYTES`]. What it says only narrows a grant (see the policy's module).

use crate::policy::remotes::Remotes;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The most of a config file read; a larger one is not read at all.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The remotes of the repository at `cwd`, when `line` may run git (it names it); `None`
/// otherwise, or when there is no repository or its config cannot be read.
pub fn remotes_for_line(line: &[u8], cwd: &Path) -> Option<Remotes> {
    let names = |word: &[u8]| line.windows(word.len()).any(|w| w == word);
    // Only a line that may connect to a remote reads anything: `git status`, typed or sent many
    // times a session, pays nothing.
    if !names(b"git")
        || !crate::policy::remotes::CONNECTING
            .iter()
            .any(|w| names(w.as_bytes()))
    {
        return None;
    }
    let text = read_small_file(&config_file(cwd)?)?;
    Some(Remotes::from_config(&text))
}

/// A config file's text, read as [`remotes_for_line`] reads it (see [`read_small_file`]).
pub fn read_config(file: &Path) -> Option<String> {
    read_small_file(file)
}

/// The config file of the repository `cwd` is in (the one [`remotes_for_line`] reads).
pub fn config_file(cwd: &Path) -> Option<PathBuf> {
    for dir in cwd.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        let git_dir = if meta.is_dir() {
            dot_git
        } else {
            linked_git_dir(dir, &read_small_file(&dot_git)?)?
        };
        let common = read_small_file(&git_dir.join("commondir"))
            .map(|text| git_dir.join(text.trim_end_matches(['\n', '\r'])));
        return Some(common.unwrap_or(git_dir).join("config"));
    }
    None
}

/// The directory a `.git` file points to (`gitdir: PATH`, relative to `dir`).
fn linked_git_dir(dir: &Path, text: &str) -> Option<PathBuf> {
    let target = text.strip_prefix("gitdir:")?.trim();
    (!target.is_empty()).then(|| dir.join(target))
}

/// A regular file's text, up to [`MAX_CONFIG_BYTES`]; `None` for anything else. The last
/// component is not followed (`O_NOFOLLOW`): a line's symlink named `.git` or `config` cannot make
/// the gate open a device, whose open alone may act (a watchdog, a tape); a FIFO opens without
/// blocking and is then not read.
fn read_small_file(path: &Path) -> Option<String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_CONFIG_BYTES {
        return None;
    }
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws/.git")).unwrap();
        std::fs::create_dir_all(dir.path().join("ws/src/deep")).unwrap();
        std::fs::write(
            dir.path().join("ws/.git/config"),
            "[remote \"origin\"]\n\turl = /srv/r.git\n",
        )
        .unwrap();
        dir
    }

    #[test]
    fn the_nearest_repository_above_the_working_directory_gives_its_remotes() {
        let dir = repo();
        let deep = dir.path().join("ws/src/deep");
        let remotes = remotes_for_line(b"git push", &deep).unwrap();
        assert_eq!(
            remotes,
            Remotes::from_config("[remote \"origin\"]\nurl = /srv/r.git\n")
        );
        // A line that cannot connect to a remote reads nothing.
        assert!(remotes_for_line(b"ls -la", &deep).is_none());
        assert!(remotes_for_line(b"git status", &deep).is_none());
    }

    #[test]
    fn a_linked_worktree_reads_its_common_directory() {
        let dir = repo();
        let wt_git = dir.path().join("ws/.git/worktrees/wt");
        std::fs::create_dir_all(&wt_git).unwrap();
        std::fs::write(wt_git.join("commondir"), "../..\n").unwrap();
        std::fs::create_dir_all(dir.path().join("wt")).unwrap();
        std::fs::write(
            dir.path().join("wt/.git"),
            format!("gitdir: {}\n", wt_git.display()),
        )
        .unwrap();
        let remotes = remotes_for_line(b"git push", &dir.path().join("wt")).unwrap();
        assert!(!remotes.is_empty());
    }

    #[test]
    fn a_config_that_is_no_regular_file_is_not_read() {
        let dir = repo();
        let config = dir.path().join("ws/.git/config");
        std::fs::remove_file(&config).unwrap();
        let fifo = std::ffi::CString::new(config.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) with a valid NUL-terminated path; no memory is shared.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        // Returns at once (no writer would ever come) and reads nothing.
        assert!(remotes_for_line(b"git push", &dir.path().join("ws")).is_none());
        // Nor through a symlink (to a device, whose open alone may act).
        std::fs::remove_file(&config).unwrap();
        std::os::unix::fs::symlink("/dev/null", &config).unwrap();
        assert!(remotes_for_line(b"git push", &dir.path().join("ws")).is_none());
    }
}
