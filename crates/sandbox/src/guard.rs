//! The guard around a line: protected names that could not be made read-only in advance.
//!
//! A protected path that exists is a read-only mount, so nothing changes it. One that does not
//! exist cannot be made uncreatable without leaving a placeholder in the user's files — and an
//! empty `.git/commondir` would break git. Those names (`.git/commondir`, `.git/config.worktree`,
//! `.gitmodules`, `.shellgate.toml`, a missing `$ZDOTDIR` …) are *guarded*: before the line the
//! guard records what each name is (absent, or which file); while it runs it looks again every
//! [`WATCH_INTERVAL`] (a few `fstatat` calls; an inotify instance would cost up to tens of
//! milliseconds to close, on every line) and acts at once; after it — when every process of the line has ended,
//! because the line's PID namespace ends with it, so nothing can plant one later — it checks them
//! all again. Whatever appeared or was replaced is moved aside (quarantined, renamed to
//! `NAME.shellgate-quarantine-<time>` in the same directory), recorded as a sandbox violation, and
//! the line fails closed.
//!
//! Repositories nested in the workspace through *gitlinks* in its index are watched the same way
//! while the line runs (a plain `git status` in the superproject runs git in each of them): their
//! `.git` may not be replaced, nor the files in it that git executes or reads configuration from.
//! What the line leaves behind — new gitlinks, new repositories, includes, a `core.hooksPath`
//! in the worktree — is judged after it by the whole git surface (see [`super::surface`]); this
//! watch only shortens the time a concurrent git outside could see a change.

use crate::git;
use crate::sys;
use serde::Serialize;
use std::ffi::OsString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;
use std::time::{SystemTime, UNIX_EPOCH};

/// What a name was before the line: absent, or this file. A directory is only its identity:
/// git rewrites files in a `.git` directory (its index) on a plain `git status`, which changes the
/// directory's times but nothing git executes (the files in it that matter are watched
/// themselves).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    /// `(ctime, size)` of anything but a directory.
    content: Option<((i64, i64), i64)>,
}

/// One guarded name: `name` in the directory `dir` (opened once, without following symlinks).
#[derive(Debug)]
struct Item {
    dir: OwnedFd,
    dir_path: PathBuf,
    name: OsString,
    before: Option<Stamp>,
    /// Already moved aside during this line.
    handled: bool,
}

/// The files of a git dir that git executes or reads configuration from.
const GIT_DIR_FILES: [&str; 4] = ["config", "hooks", "commondir", "config.worktree"];

/// A guarded name that changed during the line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The path that appeared or changed.
    pub path: PathBuf,
    /// Where it was moved, or `None` when moving it failed (it is still there).
    pub quarantined: Option<PathBuf>,
    /// What happened, in words.
    pub what: String,
}

/// How often the guarded names are looked at while a line runs.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(20);

/// The guard of one line.
#[derive(Debug)]
pub struct Guard {
    items: Vec<Item>,
}

impl Guard {
    /// A guard that watches nothing.
    pub fn none() -> Guard {
        Guard { items: Vec::new() }
    }

    /// Records the guarded names (paths whose nearest existing ancestor is watched) and the
    /// repositories gitlinked from `repo`'s index (`(worktree, git dir)`).
    pub fn new(guarded: &[PathBuf], repo: Option<(&Path, &Path)>) -> Guard {
        let mut guard = Guard { items: Vec::new() };
        for path in guarded {
            guard.watch_first_missing(path);
        }
        if let Some((worktree, git_dir)) = repo
            && let Ok(Some(links)) = git::gitlinks_of(git_dir)
        {
            for link in links
                .iter()
                .filter(|l| super::surface::is_plain_relative(l))
            {
                guard.watch_nested(&worktree.join(link));
            }
        }
        guard
    }

    /// Whether there is anything to look at while the line runs.
    pub fn is_watching(&self) -> bool {
        !self.items.is_empty()
    }

    /// Checks every guarded name; moves aside what appeared or changed.
    pub fn check(&mut self) -> Vec<Violation> {
        let mut violations = Vec::new();
        for item in self.items.iter_mut().filter(|item| !item.handled) {
            let now = stamp_at(item.dir.as_fd(), &item.name);
            if now.is_none() || now == item.before {
                continue;
            }
            item.handled = true;
            let what = match item.before {
                None => "appeared during the line",
                Some(_) => "was changed during the line",
            };
            violations.push(quarantine(item, what));
        }
        violations
    }

    /// Guards `path`, or — when its parent is missing too — the first missing component of it.
    fn watch_first_missing(&mut self, path: &Path) {
        let mut current = path;
        while let Some(parent) = current.parent() {
            if parent.exists() {
                self.watch(parent, current);
                return;
            }
            current = parent;
        }
    }

    /// A nested repository's `.git` and the files in it git executes or reads config from.
    fn watch_nested(&mut self, worktree: &Path) {
        let dot_git = worktree.join(".git");
        self.watch(worktree, &dot_git);
        if dot_git.is_dir() {
            for name in GIT_DIR_FILES {
                self.watch(&dot_git, &dot_git.join(name));
            }
        } else if let Ok(Some(layout)) = git::inspect(worktree) {
            for name in GIT_DIR_FILES {
                self.watch(&layout.git_dir, &layout.git_dir.join(name));
            }
        }
    }

    fn watch(&mut self, dir: &Path, path: &Path) {
        let Some(name) = path.file_name() else {
            return;
        };
        let Ok(dir_fd) = sys::open_path_no_symlinks(dir) else {
            return;
        };
        let before = stamp_at(dir_fd.as_fd(), name);
        self.items.push(Item {
            dir: dir_fd,
            dir_path: dir.to_path_buf(),
            name: name.to_owned(),
            before,
            handled: false,
        });
    }
}

fn stamp_at(dir: BorrowedFd, name: &std::ffi::OsStr) -> Option<Stamp> {
    let st = sys::fstatat_nofollow(dir, name).ok()??;
    let is_dir = st.st_mode & libc::S_IFMT == libc::S_IFDIR;
    Some(Stamp {
        dev: st.st_dev,
        ino: st.st_ino,
        content: (!is_dir).then_some(((st.st_ctime, st.st_ctime_nsec), st.st_size)),
    })
}

pub(super) fn quarantine_name(name: &std::ffi::OsStr) -> OsString {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut moved = name.to_owned();
    moved.push(format!(
        ".shellgate-quarantine-{secs}-{}",
        std::process::id()
    ));
    moved
}

fn quarantine(item: &Item, what: &str) -> Violation {
    let path = item.dir_path.join(&item.name);
    let moved = quarantine_name(&item.name);
    let quarantined = sys::rename_at(item.dir.as_fd(), &item.name, &moved)
        .ok()
        .map(|()| item.dir_path.join(&moved));
    Violation {
        what: format!("{} {what}", path.display()),
        path,
        quarantined,
    }
}

impl Violation {
    /// One line for the person or agent.
    pub fn describe(&self) -> String {
        match &self.quarantined {
            Some(to) => format!("{}; it was moved aside to {}", self.what, to.display()),
            None => format!("{}; moving it aside failed: remove it by hand", self.what),
        }
    }
}
