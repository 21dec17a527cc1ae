//! Which paths stay read-only inside the writable roots, and what it takes to enforce that.
//!
//! Landlock only ever *grants*: once the workspace is writable, everything beneath it is. So the
//! protected paths are made read-only with bind mounts in a private mount namespace
//! ([`crate::sandbox::mounts`]), which the kernel enforces for every process in the sandbox:
//!
//! * each existing protected path is bind-mounted read-only onto itself: writes and creation
//!   beneath it fail with `EROFS`, and unlinking or renaming it fails with `EBUSY`;
//! * each directory between the outermost writable root and a protected path is *pinned* (bound
//!   onto itself) so it cannot be renamed away and replaced (`mv .git x; mkdir .git` would
//!   otherwise leave git reading a fresh, writable `.git/config`);
//! * missing paths inside a git dir (`hooks/`, `config`) and shellgate's own config/state dirs are
//!   created (empty, as git and shellgate would create them) so they can be protected;
//! * other missing paths (`.gitmodules`, `.shellgate.toml`, shell startup files) cannot be made
//!   uncreatable without leaving placeholder files in the user's workspace: they are reported in
//!   [`Plan::unenforced`] and documented as a known gap.
//!
//! A protected path reached through a symlink cannot be pinned (a symlink cannot be a mount
//! point), so it refuses to run unless the protection is dropped.

use crate::error::{Code, Error, Result};
use crate::sandbox::git::{self, GitLayout};
use crate::sandbox::policy::{Protection, Spec};
use crate::sandbox::sys;
use std::path::{Component, Path, PathBuf};

/// Shell startup files protected in every writable root and in `$HOME`.
pub const SHELL_STARTUP_FILES: [&str; 10] = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".zlogin",
    ".zlogout",
];

/// Project files protected at the top of every writable root.
pub const PROJECT_FILES: [&str; 2] = [".gitmodules", ".shellgate.toml"];

/// How deep `.git/modules/<name>/modules/...` is searched for submodule git dirs.
const SUBMODULE_DEPTH: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
}

/// A path that must stay read-only, and whether shellgate may create it when missing.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    path: PathBuf,
    create: Option<Kind>,
}

impl Candidate {
    fn existing(path: PathBuf) -> Candidate {
        Candidate { path, create: None }
    }

    fn created(path: PathBuf, kind: Kind) -> Candidate {
        Candidate {
            path,
            create: Some(kind),
        }
    }
}

/// The environment values the candidate list depends on (read once, passed in for tests).
#[derive(Debug, Clone, Default)]
pub struct HomeEnv {
    pub home: Option<PathBuf>,
    pub zdotdir: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
    pub xdg_state_home: Option<PathBuf>,
}

impl HomeEnv {
    pub fn from_env() -> HomeEnv {
        let abs = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        HomeEnv {
            home: abs("HOME"),
            zdotdir: abs("ZDOTDIR"),
            xdg_config_home: abs("XDG_CONFIG_HOME"),
            xdg_state_home: abs("XDG_STATE_HOME"),
        }
    }

    fn config_home(&self) -> Option<PathBuf> {
        self.xdg_config_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".config")))
    }

    fn state_home(&self) -> Option<PathBuf> {
        self.xdg_state_home
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".local/state")))
    }
}

/// What the mount namespace has to do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Directories to bind onto themselves (top-down), so they cannot be renamed or removed.
    pub pins: Vec<PathBuf>,
    /// Existing protected paths to bind read-only onto themselves.
    pub read_only: Vec<PathBuf>,
    /// Protected paths that were already read-only mount points (a nested sandbox).
    pub already_enforced: Vec<PathBuf>,
    /// Protected names that do not exist and cannot be created harmlessly: *not* enforced.
    pub unenforced: Vec<PathBuf>,
}

impl Plan {
    /// True when mounts must be made (and so a mount namespace is needed).
    pub fn needs_mounts(&self) -> bool {
        !self.pins.is_empty() || !self.read_only.is_empty()
    }
}

/// Works out the plan for `spec`, creating the missing git/shellgate paths it may create.
pub fn plan(spec: &Spec, env: &HomeEnv) -> Result<Plan> {
    let roots = spec.writable_roots();
    let mut plan = Plan::default();
    let mut targets = Vec::new();
    // Candidates share a handful of parents (each root, each git dir, $HOME): place each once.
    let mut placed_parents: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    for candidate in candidates(spec, env) {
        let (Some(parent), Some(name)) = (candidate.path.parent(), candidate.path.file_name())
        else {
            continue;
        };
        let placed_parent = match placed_parents.iter().find(|(p, _)| p == parent) {
            Some((_, placed)) => placed.clone(),
            None => {
                let placed = place(parent, &roots)?;
                placed_parents.push((parent.to_path_buf(), placed.clone()));
                placed
            }
        };
        let Some(path) = placed_parent.map(|p| p.join(name)) else {
            continue;
        };
        // Outside every writable root, Landlock alone keeps it read-only: no syscall needed.
        if !beneath_any(&path, &roots) {
            continue;
        }
        match resolve(&path, candidate.create)? {
            Some(path) => targets.push(path),
            None => plan.unenforced.push(path),
        }
    }
    targets.sort_by_key(|p| depth(p));
    targets.dedup();
    for target in targets {
        for pin in pins_for(&target, &roots) {
            if !plan.pins.contains(&pin) && !is_mount_root(&pin) {
                plan.pins.push(pin);
            }
        }
        if is_mount_root(&target) && is_read_only(&target) {
            plan.already_enforced.push(target);
        } else {
            plan.read_only.push(target);
        }
    }
    plan.pins.sort_by_key(|p| depth(p));
    plan.unenforced.dedup();
    Ok(plan)
}

fn candidates(spec: &Spec, env: &HomeEnv) -> Vec<Candidate> {
    let mut list = Vec::new();
    let mut roots = vec![spec.workspace.clone()];
    roots.extend(spec.writable.iter().cloned());
    for root in &roots {
        let dot_git = root.join(".git");
        if dot_git.is_symlink() {
            // Git follows it; we cannot pin it: `place` refuses it.
            list.push(Candidate::existing(dot_git));
        }
        if let Some(layout) = git::inspect(root) {
            list.extend(layout_candidates(&layout));
        }
        for name in PROJECT_FILES.iter().chain(&SHELL_STARTUP_FILES) {
            list.push(Candidate::existing(root.join(name)));
        }
    }
    for dir in &spec.git_dirs {
        list.extend(git_dir_candidates(dir));
    }
    list.extend(home_candidates(env));
    list
}

fn layout_candidates(layout: &GitLayout) -> Vec<Candidate> {
    let mut list = Vec::new();
    if layout.is_pointer() {
        // The pointer file decides which git dir git uses: it must not be redirected.
        list.push(Candidate::existing(layout.dot_git.clone()));
    }
    for dir in layout.dirs() {
        list.extend(git_dir_candidates(dir));
    }
    list
}

/// The files git executes or reads configuration from, inside one git dir.
fn git_dir_candidates(git_dir: &Path) -> Vec<Candidate> {
    // Only a real git dir gets paths created in it.
    if !git_dir.join("HEAD").exists() {
        return Vec::new();
    }
    let mut list = vec![
        Candidate::created(git_dir.join("config"), Kind::File),
        Candidate::created(git_dir.join("hooks"), Kind::Dir),
        Candidate::existing(git_dir.join("config.worktree")),
        Candidate::existing(git_dir.join("commondir")),
    ];
    // Other linked worktrees' per-worktree config and common-dir pointers.
    for admin in subdirs(&git_dir.join("worktrees")) {
        list.push(Candidate::existing(admin.join("config.worktree")));
        list.push(Candidate::existing(admin.join("commondir")));
    }
    list.extend(submodule_candidates(
        &git_dir.join("modules"),
        SUBMODULE_DEPTH,
    ));
    list
}

/// Submodule git dirs (`.git/modules/<name>`, nested): `git status` in the superproject runs
/// git in them, which reads their config (`core.fsmonitor` executes a program).
fn submodule_candidates(modules: &Path, depth: usize) -> Vec<Candidate> {
    if depth == 0 {
        return Vec::new();
    }
    let mut list = Vec::new();
    for dir in subdirs(modules) {
        if dir.join("HEAD").exists() {
            list.push(Candidate::existing(dir.join("config")));
            list.push(Candidate::existing(dir.join("hooks")));
            list.extend(submodule_candidates(&dir.join("modules"), depth - 1));
        } else {
            // Submodule names may contain slashes: `modules/a/b`.
            list.extend(submodule_candidates(&dir, depth - 1));
        }
    }
    list
}

fn home_candidates(env: &HomeEnv) -> Vec<Candidate> {
    let mut list = Vec::new();
    if let Some(home) = &env.home {
        for name in SHELL_STARTUP_FILES {
            list.push(Candidate::existing(home.join(name)));
        }
        list.push(Candidate::existing(home.join(".gitconfig")));
    }
    if let Some(zdotdir) = &env.zdotdir {
        for name in SHELL_STARTUP_FILES.iter().filter(|n| n.starts_with(".z")) {
            list.push(Candidate::existing(zdotdir.join(name)));
        }
    }
    if let Some(config) = env.config_home() {
        list.push(Candidate::existing(config.join("git")));
        list.push(Candidate::created(config.join("shellgate"), Kind::Dir));
    }
    if let Some(state) = env.state_home() {
        list.push(Candidate::created(state.join("shellgate"), Kind::Dir));
    }
    list
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}

/// Walks `path` from `/`, resolving symlinks that live *outside* the writable roots (a symlinked
/// `$HOME` is fine) and refusing one that lives inside them: the program could replace that
/// symlink, and a symlink cannot be a mount point. Returns the path with every existing component
/// resolved, missing components kept as written; `None` for a relative path or a dangling link.
fn place(path: &Path, roots: &[PathBuf]) -> Result<Option<PathBuf>> {
    if !path.is_absolute() {
        return Ok(None);
    }
    // Roots are canonical: a candidate built beneath one needs checking only below it.
    let start = roots
        .iter()
        .filter(|root| path.starts_with(root))
        .max_by_key(|root| depth(root));
    let (mut placed, rest) = match start {
        Some(root) => (root.clone(), path.strip_prefix(root).unwrap_or(path)),
        None => (PathBuf::from("/"), path),
    };
    let mut components = rest.components();
    while let Some(component) = components.next() {
        let name = match component {
            Component::Normal(name) => name,
            Component::ParentDir => {
                placed.pop();
                continue;
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => continue,
        };
        let next = placed.join(name);
        match next.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() => {
                if beneath_any(&placed, roots) {
                    return Err(symlinked(&next));
                }
                match std::fs::canonicalize(&next) {
                    Ok(target) => placed = target,
                    Err(_) => return Ok(None),
                }
            }
            Ok(_) => placed = next,
            Err(_) => {
                placed = next;
                placed.extend(components);
                return Ok(Some(placed));
            }
        }
    }
    Ok(Some(placed))
}

/// Checks one in-root protected path (its parent already placed): `Some(path)` when it exists (or
/// was created) and can be mounted on, `None` when it is missing and must stay unenforced. A
/// symlink here lives in a writable directory, so the program could swap it: refused.
fn resolve(placed: &Path, create: Option<Kind>) -> Result<Option<PathBuf>> {
    match placed.symlink_metadata() {
        Ok(meta) if meta.file_type().is_symlink() => Err(symlinked(placed)),
        Ok(_) => Ok(Some(placed.to_path_buf())),
        Err(_) => match create {
            Some(kind) if placed.parent().is_some_and(Path::is_dir) => {
                materialize(placed, kind)?;
                Ok(Some(placed.to_path_buf()))
            }
            _ => Ok(None),
        },
    }
}

/// Creates an empty protected file or directory, as git (`hooks/`, `config`) or shellgate (its
/// config and state dirs) would, so it can be mounted read-only.
fn materialize(path: &Path, kind: Kind) -> Result<()> {
    let made = match kind {
        Kind::Dir => std::fs::create_dir(path),
        Kind::File => std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map(drop),
    };
    match made {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::new(
            Code::SandboxUnavailable,
            format!(
                "cannot create protected path {} to make it read-only: {e}; choices: fix its \
                 parent's permissions, or drop the protection explicitly with \
                 --drop-protection protected-paths",
                path.display()
            ),
        )),
    }
}

fn symlinked(path: &Path) -> Error {
    Error::new(
        Code::SandboxUnavailable,
        format!(
            "cannot enforce read-only protected path {}: it is a symlink, which a mount cannot \
             pin; choices: replace the symlink with the file, or drop the protection explicitly \
             with --drop-protection {}",
            path.display(),
            Protection::ProtectedPaths
        ),
    )
}

/// The directories between the outermost writable root containing `target` and `target` that
/// must be pinned: every ancestor strictly below that root (their parents are writable).
fn pins_for(target: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    let Some(outermost) = roots
        .iter()
        .filter(|r| target.starts_with(r))
        .min_by_key(|r| depth(r))
    else {
        return Vec::new();
    };
    let mut pins: Vec<PathBuf> = target
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(outermost) && *a != outermost)
        .map(Path::to_path_buf)
        .collect();
    pins.reverse();
    pins
}

fn beneath_any(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| path.starts_with(r))
}

fn depth(path: &Path) -> usize {
    path.components().count()
}

fn is_mount_root(path: &Path) -> bool {
    sys::is_mount_root(path).unwrap_or(false)
}

fn is_read_only(path: &Path) -> bool {
    sys::mount_flags(path).is_ok_and(|f| f & libc::ST_RDONLY != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mode::SandboxPolicy;
    use std::fs;

    fn repo() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let ws = fs::canonicalize(dir.path()).unwrap().join("ws");
        fs::create_dir_all(ws.join(".git/objects")).unwrap();
        fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        (dir, ws)
    }

    #[test]
    fn git_paths_are_created_and_protected() {
        let (_dir, ws) = repo();
        let spec = Spec::new(SandboxPolicy::WorkspaceWrite, &ws).unwrap();
        let plan = plan(&spec, &HomeEnv::default()).unwrap();
        assert!(plan.read_only.contains(&ws.join(".git/config")));
        assert!(plan.read_only.contains(&ws.join(".git/hooks")));
        assert!(ws.join(".git/hooks").is_dir(), "hooks dir materialised");
        assert_eq!(fs::read(ws.join(".git/config")).unwrap(), b"");
        assert!(plan.pins.contains(&ws.join(".git")));
        assert!(plan.unenforced.contains(&ws.join(".gitmodules")));
    }

    #[test]
    fn existing_project_files_are_protected() {
        let (_dir, ws) = repo();
        fs::write(ws.join(".bashrc"), "echo hi\n").unwrap();
        fs::write(ws.join(".shellgate.toml"), "").unwrap();
        let spec = Spec::new(SandboxPolicy::WorkspaceWrite, &ws).unwrap();
        let plan = plan(&spec, &HomeEnv::default()).unwrap();
        assert!(plan.read_only.contains(&ws.join(".bashrc")));
        assert!(plan.read_only.contains(&ws.join(".shellgate.toml")));
        assert!(!plan.unenforced.contains(&ws.join(".bashrc")));
    }

    #[test]
    fn symlinked_protected_path_refuses() {
        let (dir, ws) = repo();
        let decoy = dir.path().join("decoy");
        fs::write(&decoy, "").unwrap();
        std::os::unix::fs::symlink(&decoy, ws.join(".zshrc")).unwrap();
        let spec = Spec::new(SandboxPolicy::WorkspaceWrite, &ws).unwrap();
        let err = plan(&spec, &HomeEnv::default()).unwrap_err();
        assert_eq!(err.code, Code::SandboxUnavailable);
        assert!(err.reason.contains(".zshrc"), "{}", err.reason);
    }

    #[test]
    fn home_outside_roots_is_left_to_landlock() {
        let (dir, ws) = repo();
        let home = fs::canonicalize(dir.path()).unwrap().join("home");
        fs::create_dir_all(&home).unwrap();
        fs::write(home.join(".bashrc"), "").unwrap();
        let env = HomeEnv {
            home: Some(home.clone()),
            ..HomeEnv::default()
        };
        let mut spec = Spec::new(SandboxPolicy::WorkspaceWrite, &ws).unwrap();
        // The test's home sits under /tmp, itself a writable root by default.
        spec.temp_dirs.clear();
        let plan = plan(&spec, &env).unwrap();
        assert!(!plan.read_only.contains(&home.join(".bashrc")));
        // Outside every writable root: nothing created there either.
        assert!(!home.join(".config/shellgate").exists());
    }

    #[test]
    fn home_inside_workspace_is_protected() {
        let (_dir, ws) = repo();
        fs::write(ws.join(".profile"), "").unwrap();
        fs::create_dir_all(ws.join(".config")).unwrap();
        let env = HomeEnv {
            home: Some(ws.clone()),
            ..HomeEnv::default()
        };
        let spec = Spec::new(SandboxPolicy::WorkspaceWrite, &ws).unwrap();
        let plan = plan(&spec, &env).unwrap();
        assert!(plan.read_only.contains(&ws.join(".config/shellgate")));
        assert!(plan.pins.contains(&ws.join(".config")));
        assert!(plan.read_only.contains(&ws.join(".profile")));
    }

    #[test]
    fn symlinked_dot_git_refuses() {
        let (dir, ws) = repo();
        let real = dir.path().join("real-git");
        fs::rename(ws.join(".git"), &real).unwrap();
        std::os::unix::fs::symlink(&real, ws.join(".git")).unwrap();
        let spec = Spec::new(SandboxPolicy::WorkspaceWrite, &ws).unwrap();
        let err = plan(&spec, &HomeEnv::default()).unwrap_err();
        assert!(err.reason.contains(".git"), "{}", err.reason);
    }

    #[test]
    fn symlink_above_the_roots_is_followed() {
        let (dir, ws) = repo();
        let root = fs::canonicalize(dir.path()).unwrap();
        std::os::unix::fs::symlink(&root, root.join("alias")).unwrap();
        let roots = vec![ws.clone()];
        // `alias` lives in the scratch dir, which is not beneath the root `ws`.
        let placed = place(&root.join("alias/ws/.bashrc"), &roots).unwrap();
        assert_eq!(placed, Some(ws.join(".bashrc")));
    }

    #[test]
    fn pins_stop_at_the_outermost_root() {
        let roots = vec![PathBuf::from("/t"), PathBuf::from("/t/ws")];
        assert_eq!(
            pins_for(Path::new("/t/ws/.git/hooks"), &roots),
            vec![PathBuf::from("/t/ws"), PathBuf::from("/t/ws/.git")]
        );
        assert!(pins_for(Path::new("/t/.bashrc"), &roots).is_empty());
    }
}
