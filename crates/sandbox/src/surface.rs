//! The git surface of a workspace: every file git outside will later read as configuration or
//! run as a hook, and every pointer it follows to a repository, found the way git finds them.
//!
//! git executes code in only two ways: a program named by a configuration value (`core.fsmonitor`,
//! `core.sshCommand`, filters and drivers, `credential.helper`, aliases, …) and a hook file. So
//! what a later `git status` or `git commit` outside can run is decided by (1) which repositories
//! it reaches — the one it discovers, every gitlinked one (submodules, embedded repositories, in
//! any index form, split index included), the linked worktrees of a common dir —, (2) which files
//! each reads as configuration — the common dir's `config`, the git dir's `config.worktree`, the
//! system and global files, and every `include.path` / `includeIf.*.path` target, transitively —,
//! and (3) which directory it runs hooks from (`core.hooksPath`, or the common dir's `hooks`).
//! This module reads exactly that set, following git's own rules rather than a list of names,
//! and fingerprints each item by *content* (no timestamps): [`Surface::scan`] before a line and
//! again after it — when its PID namespace is gone, so nothing of it runs any more — and
//! [`Surface::changes`] is what the line planted or changed that git would execute. The caller
//! fails the line closed on any change and moves what changed aside, only ever beneath a
//! writable root of that line (see `Watch::check`).
//!
//! Values are judged as whole files: a changed config file is a change whatever key changed, so
//! no list of dangerous keys can miss one.

use super::git;
use super::gitconfig;
use super::guard::Violation;
use super::sys;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// What one item of the surface was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Print {
    Missing,
    /// A directory (what git reads in it is an item of its own).
    Dir,
    /// A file: its permission bits and the SHA-256 of its content.
    File {
        mode: u32,
        digest: [u8; 32],
    },
    /// A symbolic link and its target.
    Symlink(PathBuf),
    /// Anything else (a socket, a device, a FIFO): its file type bits.
    Other(u32),
    /// It could not be read (`errno`): an unreadable item counts as itself, and a change to or
    /// from it is a change.
    Unreadable(i32),
}

/// The most a file of the surface is read (a hook or config larger than this is fingerprinted as
/// unreadable: `EFBIG`, the same before and after unless it changes size class).
const MAX_READ: u64 = 16 << 20;
/// How deep includes are followed (git's own limit is 10).
const MAX_INCLUDE_DEPTH: usize = 10;
/// The most repositories (worktrees) one surface reaches.
const MAX_WORKTREES: usize = 256;
/// The most files of a hooks directory read one by one (git knows about thirty hook names).
const MAX_HOOKS: usize = 4096;

/// Where a scan starts and what it needs to resolve git's paths.
#[derive(Debug, Clone, Default)]
pub struct Reach {
    /// Worktrees git will be run in: the workspace, and the directory a line starts in (git
    /// discovers the nearest `.git` above it).
    pub worktrees: Vec<PathBuf>,
    /// `$HOME`, for `~/` in paths and the global config.
    pub home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`, for the global config.
    pub xdg_config: Option<PathBuf>,
}

impl Reach {
    /// The scan of a line in `cwd` with workspace `workspace`, with git's home as the spec names
    /// it ([`crate::HomeEnv`]).
    pub fn line(workspace: Option<&Path>, cwd: &Path, home: &crate::HomeEnv) -> Reach {
        let mut worktrees: Vec<PathBuf> = workspace.map(Path::to_path_buf).into_iter().collect();
        if let Some(top) = git::toplevel(cwd)
            && !worktrees.contains(&top)
        {
            worktrees.push(top);
        }
        Reach {
            worktrees,
            home: home.git_home.clone(),
            xdg_config: home.git_xdg_config.clone(),
        }
    }
}

/// The items of a surface, by path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Surface {
    pub items: BTreeMap<PathBuf, Print>,
}

/// One way an item differs after a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// It was not there (or not reached) before.
    Appeared,
    /// It was there and is something else now.
    Changed,
}

impl Surface {
    /// Reads the surface reached from `reach`.
    pub fn scan(reach: &Reach) -> Surface {
        let mut scan = Scan {
            surface: Surface::default(),
            reach,
            queue: reach.worktrees.iter().cloned().collect(),
            seen_worktrees: BTreeSet::new(),
            seen_git_dirs: BTreeSet::new(),
        };
        let globals = scan.global_configs();
        let mut global_hooks = None;
        for file in &globals {
            global_hooks = scan.config(file, 0).or(global_hooks);
        }
        while let Some(worktree) = scan.queue.pop_front() {
            if scan.seen_worktrees.len() >= MAX_WORKTREES {
                break;
            }
            if scan.seen_worktrees.insert(worktree.clone()) {
                scan.worktree(&worktree, global_hooks.as_deref());
            }
        }
        scan.surface
    }

    /// What is new or different in `after` (removed items are not: what git no longer reads runs
    /// nothing), shallowest first.
    pub fn changes(&self, after: &Surface) -> Vec<(PathBuf, Change)> {
        after
            .items
            .iter()
            .filter(|(_, print)| **print != Print::Missing)
            .filter_map(|(path, print)| match self.items.get(path) {
                None | Some(Print::Missing) => Some((path.clone(), Change::Appeared)),
                Some(before) if before != print => Some((path.clone(), Change::Changed)),
                Some(_) => None,
            })
            .collect()
    }
}

struct Scan<'a> {
    surface: Surface,
    reach: &'a Reach,
    queue: VecDeque<PathBuf>,
    seen_worktrees: BTreeSet<PathBuf>,
    seen_git_dirs: BTreeSet<PathBuf>,
}

impl Scan<'_> {
    /// The system and global config files, as git reads them.
    fn global_configs(&self) -> Vec<PathBuf> {
        let mut files = vec![PathBuf::from("/etc/gitconfig")];
        let xdg = match (&self.reach.xdg_config, &self.reach.home) {
            (Some(xdg), _) if xdg.is_absolute() => Some(xdg.join("git/config")),
            (_, Some(home)) => Some(home.join(".config/git/config")),
            _ => None,
        };
        files.extend(xdg);
        files.extend(self.reach.home.as_ref().map(|h| h.join(".gitconfig")));
        files
    }

    /// One repository's surface: its `.git`, pointers, config files, hooks, and the worktrees it
    /// leads to (gitlinks of its index, its common dir's other worktrees).
    fn worktree(&mut self, worktree: &Path, global_hooks: Option<&Path>) {
        self.item(&worktree.join(".git"));
        let layout = match git::inspect(worktree) {
            Ok(Some(layout)) => layout,
            Ok(None) => return,
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.surface
                    .items
                    .insert(worktree.join(".git"), Print::Unreadable(errno));
                return;
            }
        };
        let git_dir = layout.git_dir.clone();
        let common = layout.common_dir.clone().unwrap_or_else(|| git_dir.clone());
        if !self.seen_git_dirs.insert(git_dir.clone()) {
            return;
        }
        self.item(&git_dir.join("commondir"));
        let mut hooks_path = global_hooks.map(Path::to_path_buf);
        for file in [common.join("config"), git_dir.join("config.worktree")] {
            hooks_path = self.config(&file, 0).or(hooks_path);
        }
        let hooks = match hooks_path {
            Some(path) => self.resolve(&path, worktree),
            None => common.join("hooks"),
        };
        self.directory(&hooks);
        self.gitlinks(worktree, &git_dir);
        if layout.common_dir.is_some() {
            // A linked worktree: the main checkout's index and the other worktrees share this
            // common dir.
            self.main_worktree(&common);
        }
        self.other_worktrees(&common);
    }

    /// The worktrees the index of `git_dir` gitlinks, queued; each `.git` is an item even when
    /// missing (a repository planted there later is then a change).
    fn gitlinks(&mut self, worktree: &Path, git_dir: &Path) {
        match git::gitlinks_of(git_dir) {
            Ok(Some(links)) => {
                for link in links.iter().filter(|l| is_plain_relative(l)) {
                    let nested = worktree.join(link);
                    self.item(&nested);
                    self.item(&nested.join(".git"));
                    self.queue.push_back(nested);
                }
            }
            Ok(None) => {}
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EINVAL);
                self.surface
                    .items
                    .insert(git_dir.join("index"), Print::Unreadable(errno));
            }
        }
    }

    /// The main checkout of a common dir (`<main>/.git`), queued.
    fn main_worktree(&mut self, common: &Path) {
        if common.file_name().is_some_and(|n| n == ".git")
            && let Some(main) = common.parent()
        {
            self.queue.push_back(main.to_path_buf());
        }
    }

    /// The linked worktrees registered in `<common>/worktrees/*`: their pointers and config, and
    /// the worktrees themselves, queued.
    fn other_worktrees(&mut self, common: &Path) {
        let Ok(entries) = std::fs::read_dir(common.join("worktrees")) else {
            return;
        };
        let mut dirs: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        dirs.sort();
        for dir in dirs {
            for name in ["commondir", "config.worktree", "gitdir"] {
                self.item(&dir.join(name));
            }
            let Ok(pointer) = std::fs::read_to_string(dir.join("gitdir")) else {
                continue;
            };
            if let Some(worktree) = Path::new(pointer.trim()).parent() {
                self.queue.push_back(worktree.to_path_buf());
            }
        }
    }

    /// A config file as an item, and every file it includes (transitively); returns its last
    /// `core.hooksPath`, if any.
    fn config(&mut self, file: &Path, depth: usize) -> Option<PathBuf> {
        let text = self.item_read(file)?;
        let text = String::from_utf8_lossy(&text);
        let base = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        let mut hooks = None;
        for entry in gitconfig::parse(&text) {
            if entry.is_hooks_path() {
                hooks = Some(PathBuf::from(&entry.value));
            } else if entry.is_include() && depth < MAX_INCLUDE_DEPTH {
                let target = self.resolve(Path::new(&entry.value), &base);
                hooks = self.config(&target, depth + 1).or(hooks);
            }
        }
        hooks
    }

    /// `~/x` against the home, a relative path against `base`, as git resolves these paths.
    fn resolve(&self, path: &Path, base: &Path) -> PathBuf {
        if let (Ok(rest), Some(home)) = (path.strip_prefix("~"), &self.reach.home) {
            return home.join(rest);
        }
        base.join(path)
    }

    /// A directory git runs files from (the hooks): itself and every entry in it (up to
    /// [`MAX_HOOKS`]; a directory with more counts as one unreadable item, the same before and
    /// after unless its size class changes).
    fn directory(&mut self, dir: &Path) {
        self.item(dir);
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let entries: Vec<PathBuf> = entries
            .flatten()
            .take(MAX_HOOKS + 1)
            .map(|e| e.path())
            .collect();
        if entries.len() > MAX_HOOKS {
            self.surface
                .items
                .insert(dir.join("*"), Print::Unreadable(libc::E2BIG));
            return;
        }
        // git runs a hook by its exact name, which never ends in `.sample` (the examples `git
        // init` writes): those are not read. Any other name is, so a sample renamed to its hook's
        // name is an item that appeared.
        for entry in entries
            .iter()
            .filter(|e| e.extension().is_none_or(|x| x != "sample"))
        {
            self.item(entry);
        }
    }

    /// One item: what `path` is now. A symlink's target is an item too (git follows it).
    fn item(&mut self, path: &Path) {
        if !self.surface.items.contains_key(path) {
            self.item_read(path);
        }
    }

    /// [`Scan::item`], returning the content of the file git reads at `path` (following a final
    /// symlink, as git does), read once for both.
    fn item_read(&mut self, path: &Path) -> Option<Vec<u8>> {
        if let Some(seen) = self.surface.items.get(path) {
            return match seen {
                Print::File { .. } | Print::Symlink(_) => read_limited(path).ok(),
                _ => None,
            };
        }
        let (print, content) = print(path);
        let target = match &print {
            Print::Symlink(target) => path.parent().map(|p| p.join(target)),
            _ => None,
        };
        self.surface.items.insert(path.to_path_buf(), print);
        match target {
            Some(target) if self.surface.items.len() < 100_000 => self.item_read(&target),
            Some(_) => None,
            None => content,
        }
    }
}

/// A path of an index entry git would use: relative, with only plain components (no `..`, no
/// `.git`). Anything else is not followed (git itself refuses such entries).
pub(super) fn is_plain_relative(path: &Path) -> bool {
    path.components().all(|c| match c {
        Component::Normal(name) => !name.eq_ignore_ascii_case(".git"),
        _ => false,
    }) && path.components().next().is_some()
}

/// What `path` is, read without following a final symlink, and a regular file's content.
fn print(path: &Path) -> (Print, Option<Vec<u8>>) {
    let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(libc::EIO);
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if sys::is_missing(&e) => return (Print::Missing, None),
        Err(e) => return (Print::Unreadable(errno(e)), None),
    };
    let kind = meta.mode() & libc::S_IFMT;
    match kind {
        libc::S_IFDIR => (Print::Dir, None),
        libc::S_IFLNK => match std::fs::read_link(path) {
            Ok(target) => (Print::Symlink(target), None),
            Err(e) => (Print::Unreadable(errno(e)), None),
        },
        libc::S_IFREG => match read_limited(path) {
            Ok(bytes) => (
                Print::File {
                    mode: meta.permissions().mode() & 0o7777,
                    digest: Sha256::digest(&bytes).into(),
                },
                Some(bytes),
            ),
            Err(e) => (Print::Unreadable(errno(e)), None),
        },
        other => (Print::Other(other), None),
    }
}

/// A file's content, refusing one larger than [`MAX_READ`] (`EFBIG`). Read in one go where the
/// size is known (a file that grows meanwhile is read on, up to the limit).
fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    if size > MAX_READ {
        return Err(std::io::Error::from_raw_os_error(libc::EFBIG));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0) + 1);
    file.take(MAX_READ + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_READ {
        return Err(std::io::Error::from_raw_os_error(libc::EFBIG));
    }
    Ok(bytes)
}

/// The surface of one line: taken before it starts, compared after it ended.
#[derive(Debug)]
pub struct Watch {
    reach: Reach,
    before: Surface,
    /// Where the line could write (canonical): the only places anything is moved aside.
    writable: Vec<PathBuf>,
}

impl Watch {
    /// The surface reached from `reach`, before the line.
    pub fn new(reach: Reach, writable: Vec<PathBuf>) -> Watch {
        let before = Surface::scan(&reach);
        Watch {
            reach,
            before,
            writable,
        }
    }

    /// What the line planted or changed in the surface, each moved aside. Only what lies beneath
    /// a writable root of the line counts (its directory opened without following a symlink):
    /// nothing else could have been written by it (a change elsewhere is someone else's, a person
    /// editing their `~/.gitconfig` meanwhile, say), and a path it crafted must never make
    /// shellgate act on someone else's files.
    pub fn check(&self) -> Vec<Violation> {
        let after = Surface::scan(&self.reach);
        let mut moved: Vec<PathBuf> = Vec::new();
        let mut violations = Vec::new();
        for (path, change) in self.before.changes(&after) {
            // Beneath something already moved aside: that move took it too.
            if moved.iter().any(|m| path.starts_with(m)) {
                continue;
            }
            let Some((dir, real)) = self.writable_parent(&path) else {
                continue;
            };
            let what = match change {
                Change::Appeared => "appeared where git outside reads configuration or hooks",
                Change::Changed => "was changed where git outside reads configuration or hooks",
            };
            let quarantined = move_aside(&dir, &real, &path);
            if quarantined.is_some() {
                moved.push(path.clone());
            }
            violations.push(Violation {
                what: format!("{} {what}", path.display()),
                path,
                quarantined,
            });
        }
        violations
    }

    /// The directory of `path`, opened without following a symlink, and where it really is,
    /// when that lies beneath a writable root of the line.
    fn writable_parent(&self, path: &Path) -> Option<(std::os::fd::OwnedFd, PathBuf)> {
        let dir = sys::open_path_no_symlinks(path.parent()?).ok()?;
        let real = std::fs::read_link(sys::proc_fd_path(&dir)).ok()?;
        self.writable
            .iter()
            .any(|root| real.starts_with(root))
            .then_some((dir, real))
    }
}

/// Renames `path` to `NAME.shellgate-quarantine-…` in its directory `dir` (really at `real`). A
/// directory the line made unwritable is given back its owner's write bit first (the owner is
/// the caller: only then).
fn move_aside(dir: &std::os::fd::OwnedFd, real: &Path, path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    let moved = super::guard::quarantine_name(name);
    if sys::rename_at(dir.as_fd(), name, &moved).is_err() {
        let st = sys::fstat(dir.as_fd()).ok()?;
        if st.st_uid != sys::geteuid() {
            return None;
        }
        std::fs::set_permissions(
            sys::proc_fd_path(dir),
            std::fs::Permissions::from_mode((st.st_mode & 0o7777) | 0o700),
        )
        .ok()?;
        sys::rename_at(dir.as_fd(), name, &moved).ok()?;
    }
    Some(real.join(moved))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    fn reach(ws: &Path, home: &Path) -> Reach {
        Reach {
            worktrees: vec![ws.to_path_buf()],
            home: Some(home.to_path_buf()),
            xdg_config: None,
        }
    }

    #[test]
    fn the_surface_follows_includes_hooks_paths_and_gitlinks() {
        let dir = tempfile::tempdir().unwrap();
        let (ws, home) = (dir.path().join("ws"), dir.path().join("home"));
        fs::create_dir_all(&ws).unwrap();
        fs::create_dir_all(&home).unwrap();
        git(&ws, &["init", "-q"]);
        // As husky and others do: a config file in the worktree, naming the hooks directory.
        git(&ws, &["config", "include.path", "../.gitconfig-shared"]);
        fs::write(
            ws.join(".gitconfig-shared"),
            "[core]\n\thooksPath = .husky\n",
        )
        .unwrap();
        fs::create_dir_all(ws.join(".husky")).unwrap();
        fs::write(ws.join(".husky/pre-commit"), "#!/bin/sh\n").unwrap();
        fs::create_dir_all(ws.join("sub")).unwrap();
        git(&ws.join("sub"), &["init", "-q"]);
        git(
            &ws.join("sub"),
            &["commit", "-q", "--allow-empty", "-m", "x"],
        );
        git(&ws, &["add", "sub"]);
        let surface = Surface::scan(&reach(&ws, &home));
        for item in [
            ws.join(".git/config"),
            ws.join(".git/../.gitconfig-shared"),
            ws.join(".husky/pre-commit"),
            ws.join("sub/.git"),
            ws.join("sub/.git/config"),
            ws.join("sub/.git/hooks"),
            home.join(".gitconfig"),
        ] {
            assert!(surface.items.contains_key(&item), "{item:?}: {surface:#?}");
        }
        // The hooks dir of the repository is the hooksPath one, not .git/hooks.
        assert!(!surface.items.contains_key(&ws.join(".git/hooks")));
    }

    #[test]
    fn only_what_appeared_or_changed_counts() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        fs::create_dir_all(&ws).unwrap();
        git(&ws, &["init", "-q"]);
        let reach = reach(&ws, dir.path());
        let before = Surface::scan(&reach);
        // Rewriting a file with the same content, or the index, changes nothing git runs.
        let config = fs::read(ws.join(".git/config")).unwrap();
        fs::write(ws.join(".git/config"), &config).unwrap();
        fs::write(ws.join("f"), "x").unwrap();
        git(&ws, &["add", "f"]);
        assert_eq!(before.changes(&Surface::scan(&reach)), []);
        fs::write(ws.join(".git/hooks/post-checkout"), "#!/bin/sh\n").unwrap();
        git(&ws, &["config", "core.fsmonitor", "touch x"]);
        let after = Surface::scan(&reach);
        assert_eq!(
            before.changes(&after),
            [
                (ws.join(".git/config"), Change::Changed),
                (ws.join(".git/hooks/post-checkout"), Change::Appeared)
            ]
        );
        // A removed hook runs nothing.
        fs::remove_file(ws.join(".git/hooks/post-checkout")).unwrap();
        let removed = Surface::scan(&reach);
        assert_eq!(after.changes(&removed), []);
    }

    /// A change found outside the line's writable roots (here an included file the test itself
    /// changes, as a person editing their config meanwhile would) is not the line's: neither
    /// reported nor moved. shellgate acts only where the line could write.
    #[test]
    fn nothing_outside_the_writable_roots_is_moved() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        fs::create_dir_all(&ws).unwrap();
        git(&ws, &["init", "-q"]);
        let outside = dir.path().join("outside.inc");
        fs::write(&outside, "").unwrap();
        git(&ws, &["config", "include.path", outside.to_str().unwrap()]);
        let writable = vec![fs::canonicalize(&ws).unwrap()];
        let watch = Watch::new(reach(&ws, dir.path()), writable);
        fs::write(&outside, "[core]\n\tfsmonitor = x\n").unwrap();
        fs::write(ws.join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        let found = watch.check();
        assert!(found.iter().all(|v| v.path != outside), "{found:?}");
        assert!(outside.exists());
        let hook = found
            .iter()
            .find(|v| v.path == ws.join(".git/hooks/pre-commit"))
            .unwrap();
        assert!(hook.quarantined.is_some());
        assert!(!ws.join(".git/hooks/pre-commit").exists());
    }

    /// An include through a symlink: the link is an item, and so is the file it points to,
    /// whose change counts (git reads through the link).
    #[test]
    fn an_include_through_a_symlink_is_followed() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        fs::create_dir_all(&ws).unwrap();
        git(&ws, &["init", "-q"]);
        fs::write(ws.join("real.inc"), "").unwrap();
        std::os::unix::fs::symlink("real.inc", ws.join("link.inc")).unwrap();
        git(&ws, &["config", "include.path", "../link.inc"]);
        // Relative to the directory of the path git opened (the link's): the worktree.
        fs::write(ws.join("real.inc"), "[include]\n\tpath = deeper.inc\n").unwrap();
        let reach = reach(&ws, dir.path());
        let before = Surface::scan(&reach);
        assert!(
            before.items.contains_key(&ws.join(".git/../real.inc")),
            "{before:#?}"
        );
        // The file the link's target includes is followed too.
        assert!(
            before.items.contains_key(&ws.join(".git/../deeper.inc")),
            "{before:#?}"
        );
        fs::write(ws.join("deeper.inc"), "[core]\n\tfsmonitor = x\n").unwrap();
        let changes = before.changes(&Surface::scan(&reach));
        assert_eq!(changes, [(ws.join(".git/../deeper.inc"), Change::Appeared)]);
    }

    #[test]
    fn crafted_gitlink_paths_are_not_followed() {
        for path in ["/etc", "../x", "a/../../b", ".git/x", "a/.GIT", ""] {
            assert!(!is_plain_relative(Path::new(path)), "{path}");
        }
        assert!(is_plain_relative(Path::new("deep/sub")));
    }
}
