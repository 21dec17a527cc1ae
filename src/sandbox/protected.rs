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
//!   uncreatable without leaving placeholder files in the user's workspace: they are listed in
//!   [`Plan::unenforced`], which `shellgate doctor` shows for the current workspace ([`preview`]),
//!   and documented as a known gap.
//!
//! A protected path reached through a symlink cannot be pinned (a symlink cannot be a mount
//! point), so it refuses to run unless the protection is dropped.
//!
//! What the sandboxed program may have changed since the last launch decides nothing here: a
//! missing `HEAD` only means missing paths are not *created* (existing `config` and `hooks/` are
//! protected whatever `HEAD` says), and a path that cannot be checked (`EACCES` after a
//! `chmod 000 .git`, `EIO`) refuses to run instead of counting as missing.

use crate::audit::StatePaths;
use crate::config;
use crate::error::{Code, Error, Result};
use crate::sandbox::git;
use crate::sandbox::policy::{Protection, Spec};
use crate::sandbox::sys;
use serde::Serialize;
use std::path::{Component, Path, PathBuf};

/// Shell startup files protected in every writable root and in `$HOME`.
const SHELL_STARTUP_FILES: [&str; 10] = [
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
const PROJECT_FILES: [&str; 2] = [".gitmodules", config::PROJECT_FILE];

/// How many directory levels beneath `.git/modules` are searched for submodule git dirs (a nested
/// submodule takes two: `<name>/modules/<name>`).
const SUBMODULE_DEPTH: usize = 8;

/// Directories of a git dir that hold no submodule git dirs and can be large: not searched
/// inside a directory that has a `HEAD`.
const GIT_DIR_INTERNALS: [&str; 3] = ["objects", "refs", "logs"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
}

/// What to do about a protected path that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missing {
    /// Create it (empty) and protect it: git or shellgate would create it anyway.
    Create(Kind),
    /// Leave it: the program could create it (a known gap, listed in [`Plan::unenforced`]).
    Unenforced,
    /// Leave it silently: only probed in case it exists (`config` in a directory beneath
    /// `.git/modules` that may or may not be a submodule's git dir).
    Probe,
}

/// A path that must stay read-only, and what to do when it is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    path: PathBuf,
    missing: Missing,
}

impl Candidate {
    fn existing(path: PathBuf) -> Candidate {
        Candidate {
            path,
            missing: Missing::Unenforced,
        }
    }

    fn created(path: PathBuf, kind: Kind) -> Candidate {
        Candidate {
            path,
            missing: Missing::Create(kind),
        }
    }

    fn probed(path: PathBuf) -> Candidate {
        Candidate {
            path,
            missing: Missing::Probe,
        }
    }
}

/// Where the user's shell startup files and git's and shellgate's own configuration live. Read
/// once by [`HomeEnv::from_env`]; a plain value, so tests can pass their own.
#[derive(Debug, Clone, Default)]
pub struct HomeEnv {
    /// `$HOME`, and the home the password database gives the effective uid when it differs.
    /// In hook mode the launcher inherits the agent's environment, where `HOME` can name
    /// anything: the real home must be protected whatever it says.
    pub homes: Vec<PathBuf>,
    /// `$ZDOTDIR`, where zsh reads its startup files.
    pub zdotdir: Option<PathBuf>,
    /// Git's user configuration directories: `$XDG_CONFIG_HOME/git` and `.config/git` in each
    /// home.
    pub git_config_dirs: Vec<PathBuf>,
    /// shellgate's own directories, created when missing: the ones it really uses
    /// ([`config::config_dir`], [`StatePaths::from_env`]) and their defaults in the password
    /// database's home.
    pub shellgate_dirs: Vec<PathBuf>,
}

impl HomeEnv {
    /// From the environment and the password database. A failing lookup (not a missing entry)
    /// refuses: the home it would name is what must be protected.
    pub fn from_env() -> Result<HomeEnv> {
        let abs = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let uid = sys::geteuid();
        let passwd_home = sys::passwd_home(uid)
            .map_err(|e| {
                Error::new(
                    Code::SandboxUnavailable,
                    format!(
                        "cannot look up the home directory of uid {uid} in the password \
                         database (to protect its startup files): {e}"
                    ),
                )
            })?
            .filter(|p| p.is_absolute());
        let mut env = HomeEnv {
            zdotdir: abs("ZDOTDIR"),
            ..HomeEnv::default()
        };
        for home in abs("HOME").into_iter().chain(passwd_home.clone()) {
            push_new(&mut env.homes, home);
        }
        if let Some(config_home) = abs("XDG_CONFIG_HOME") {
            push_new(&mut env.git_config_dirs, config_home.join("git"));
        }
        for home in env.homes.clone() {
            push_new(&mut env.git_config_dirs, home.join(".config/git"));
        }
        let used = [
            config::config_dir().filter(|p| p.is_absolute()),
            StatePaths::from_env().ok().map(|p| p.root().to_path_buf()),
        ];
        let defaults = passwd_home.iter().flat_map(|home| {
            [
                home.join(".config").join(SHELLGATE_DIR),
                home.join(".local/state").join(SHELLGATE_DIR),
            ]
        });
        for dir in used.into_iter().flatten().chain(defaults) {
            push_new(&mut env.shellgate_dirs, dir);
        }
        Ok(env)
    }
}

/// The name of shellgate's directory under the XDG config and state dirs.
const SHELLGATE_DIR: &str = "shellgate";

fn push_new(list: &mut Vec<PathBuf>, path: PathBuf) {
    if !list.contains(&path) {
        list.push(path);
    }
}

/// What the mount namespace has to do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
    plan_with(spec, env, Creating::Yes)
}

/// The plan the launcher would make for `spec`, without creating anything (for `doctor`): paths
/// it would create count as read-only.
pub fn preview(spec: &Spec, env: &HomeEnv) -> Result<Plan> {
    plan_with(spec, env, Creating::No)
}

/// Whether planning may create the missing paths it protects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Creating {
    Yes,
    No,
}

fn plan_with(spec: &Spec, env: &HomeEnv, creating: Creating) -> Result<Plan> {
    let roots = spec.writable_roots();
    let mut plan = Plan::default();
    let mut targets = Vec::new();
    // Candidates share a handful of parents (each root, each git dir, $HOME): place each once.
    let mut placed_parents: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    for candidate in candidates(spec, env)? {
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
        match resolve(&path, candidate.missing, creating)? {
            Some(path) => targets.push(path),
            None if candidate.missing == Missing::Unenforced => plan.unenforced.push(path),
            None => {}
        }
    }
    // Parents before children; equal paths adjacent, so `dedup` removes every duplicate.
    targets.sort_by(|a, b| depth(a).cmp(&depth(b)).then_with(|| a.cmp(b)));
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

fn candidates(spec: &Spec, env: &HomeEnv) -> Result<Vec<Candidate>> {
    let mut list = Vec::new();
    let mut roots = vec![spec.workspace.clone()];
    roots.extend(spec.writable.iter().cloned());
    for root in &roots {
        let dot_git = root.join(".git");
        let dot_git_meta = sys::missing_as_none(dot_git.symlink_metadata())
            .map_err(|e| unchecked(&dot_git, &e))?;
        if dot_git_meta.is_some_and(|meta| !meta.is_dir()) {
            // A pointer file decides which git dir git uses: it must not be redirected, even when
            // what it points to is missing or unreadable now. A symlink is refused (`resolve`):
            // git follows it and a mount cannot pin it.
            list.push(Candidate::existing(dot_git.clone()));
        }
        let layout = git::inspect(root).map_err(|e| unchecked(&dot_git, &e))?;
        if let Some(layout) = layout {
            for dir in layout.dirs() {
                list.extend(git_dir_candidates(dir)?);
            }
        }
        for name in PROJECT_FILES.iter().chain(&SHELL_STARTUP_FILES) {
            list.push(Candidate::existing(root.join(name)));
        }
    }
    for dir in &spec.git_dirs {
        list.extend(git_dir_candidates(dir)?);
    }
    list.extend(home_candidates(env));
    Ok(list)
}

/// The files git executes or reads configuration from, inside one git dir.
///
/// `HEAD` only decides whether missing `config` and `hooks/` are *created* (in something that is
/// not a repository they would be litter): existing ones are protected either way, since the
/// program can move `HEAD` away in one command to unprotect them for the next.
fn git_dir_candidates(git_dir: &Path) -> Result<Vec<Candidate>> {
    let head = git_dir.join("HEAD");
    let is_repository = head.try_exists().map_err(|e| unchecked(&head, &e))?;
    let config_and_hooks = if is_repository {
        [
            Candidate::created(git_dir.join("config"), Kind::File),
            Candidate::created(git_dir.join("hooks"), Kind::Dir),
        ]
    } else {
        [
            Candidate::existing(git_dir.join("config")),
            Candidate::existing(git_dir.join("hooks")),
        ]
    };
    let mut list = Vec::from(config_and_hooks);
    list.push(Candidate::existing(git_dir.join("config.worktree")));
    list.push(Candidate::existing(git_dir.join("commondir")));
    // Other linked worktrees' per-worktree config and common-dir pointers.
    for admin in subdirs(&git_dir.join("worktrees"))? {
        list.push(Candidate::existing(admin.join("config.worktree")));
        list.push(Candidate::existing(admin.join("commondir")));
    }
    list.extend(submodule_candidates(&git_dir.join("modules"))?);
    Ok(list)
}

/// Submodule git dirs (`.git/modules/<name>`, nested): `git status` in the superproject runs
/// git in them, which reads their config (`core.fsmonitor` executes a program).
///
/// Every directory is probed for `config` and `hooks/` and searched further, whether or not it
/// has a `HEAD` now: a submodule's name may contain slashes (`modules/libs/a`), nested submodules
/// live in `<git dir>/modules/`, and `HEAD` files are the program's to move or plant. The one
/// thing a `HEAD` decides is that the big internals of a git dir (`objects`, `refs`, `logs`) are
/// not searched: planting one in `modules/libs` hides only submodules named `libs/objects/...`,
/// `libs/refs/...` or `libs/logs/...`.
fn submodule_candidates(modules: &Path) -> Result<Vec<Candidate>> {
    search_modules(modules, false, SUBMODULE_DEPTH)
}

fn search_modules(dir: &Path, is_git_dir: bool, depth: usize) -> Result<Vec<Candidate>> {
    if depth == 0 {
        return Ok(Vec::new());
    }
    let mut list = Vec::new();
    for sub in subdirs(dir)? {
        let internal = sub
            .file_name()
            .is_some_and(|name| GIT_DIR_INTERNALS.iter().any(|i| name == *i));
        if is_git_dir && internal {
            continue;
        }
        list.push(Candidate::probed(sub.join("config")));
        list.push(Candidate::probed(sub.join("hooks")));
        let head = sub.join("HEAD");
        let sub_is_git_dir = head.try_exists().map_err(|e| unchecked(&head, &e))?;
        list.extend(search_modules(&sub, sub_is_git_dir, depth - 1)?);
    }
    Ok(list)
}

fn home_candidates(env: &HomeEnv) -> Vec<Candidate> {
    let mut list = Vec::new();
    for home in &env.homes {
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
    for dir in &env.git_config_dirs {
        list.push(Candidate::existing(dir.clone()));
    }
    for dir in &env.shellgate_dirs {
        list.push(Candidate::created(dir.clone(), Kind::Dir));
    }
    list
}

/// The subdirectories of `dir` (none when it does not exist), sorted.
fn subdirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let Some(entries) =
        sys::missing_as_none(std::fs::read_dir(dir)).map_err(|e| unchecked(dir, &e))?
    else {
        return Ok(Vec::new());
    };
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| unchecked(dir, &e))?;
        let file_type = entry
            .file_type()
            .map_err(|e| unchecked(&entry.path(), &e))?;
        if file_type.is_dir() {
            dirs.push(entry.path());
        }
    }
    dirs.sort();
    Ok(dirs)
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
                match sys::missing_as_none(std::fs::canonicalize(&next)) {
                    Ok(Some(target)) => placed = target,
                    Ok(None) => return Ok(None),
                    Err(e) => return Err(unchecked(&next, &e)),
                }
            }
            Ok(_) => placed = next,
            Err(e) if sys::is_missing(&e) => {
                placed = next;
                placed.extend(components);
                return Ok(Some(placed));
            }
            Err(e) => return Err(unchecked(&next, &e)),
        }
    }
    Ok(Some(placed))
}

/// Checks one in-root protected path (its parent already placed): `Some(path)` when it exists (or
/// was created) and can be mounted on, `None` when it is missing and stays so. A symlink here
/// lives in a writable directory, so the program could swap it: refused.
fn resolve(placed: &Path, missing: Missing, creating: Creating) -> Result<Option<PathBuf>> {
    match placed.symlink_metadata() {
        Ok(meta) if meta.file_type().is_symlink() => Err(symlinked(placed)),
        Ok(_) => Ok(Some(placed.to_path_buf())),
        Err(e) if sys::is_missing(&e) => match missing {
            Missing::Create(_) if creating == Creating::No => Ok(Some(placed.to_path_buf())),
            // A missing parent (NotFound from the create) leaves it missing.
            Missing::Create(kind) => Ok(materialize(placed, kind)?.then(|| placed.to_path_buf())),
            Missing::Unenforced | Missing::Probe => Ok(None),
        },
        Err(e) => Err(unchecked(placed, &e)),
    }
}

/// Creates an empty protected file or directory, as git (`hooks/`, `config`) or shellgate (its
/// config and state dirs) would, so it can be mounted read-only. `false` when its parent does not
/// exist (nothing to create it in).
fn materialize(path: &Path, kind: Kind) -> Result<bool> {
    let made = match kind {
        Kind::Dir => std::fs::create_dir(path),
        Kind::File => std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map(drop),
    };
    match made {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(true),
        Err(e) if sys::is_missing(&e) => Ok(false),
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

/// A protected path whose existence could not be established: refuse rather than guess "missing".
fn unchecked(path: &Path, error: &std::io::Error) -> Error {
    Error::new(
        Code::SandboxUnavailable,
        format!(
            "cannot check protected path {}: {error}; choices: restore its permissions (or its \
             parent's), or drop the protection explicitly with --drop-protection {}",
            path.display(),
            Protection::ProtectedPaths
        ),
    )
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
    fn existing_git_paths_are_protected_without_head() {
        let (_dir, ws) = repo();
        fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        fs::write(ws.join(".git/config"), "").unwrap();
        fs::create_dir_all(ws.join(".git/modules/a/b/hooks")).unwrap();
        fs::write(ws.join(".git/modules/a/b/config"), "").unwrap();
        fs::remove_file(ws.join(".git/HEAD")).unwrap();
        let spec = Spec::new(SandboxPolicy::WorkspaceWrite, &ws).unwrap();
        let plan = plan(&spec, &HomeEnv::default()).unwrap();
        for path in [
            ".git/config",
            ".git/hooks",
            ".git/modules/a/b/config",
            ".git/modules/a/b/hooks",
        ] {
            assert!(plan.read_only.contains(&ws.join(path)), "{path}: {plan:?}");
        }
    }

    #[test]
    fn planted_heads_do_not_hide_submodule_git_dirs() {
        let (_dir, ws) = repo();
        let modules = ws.join(".git/modules");
        for name in ["logs", "libs/a"] {
            fs::create_dir_all(modules.join(name).join("hooks")).unwrap();
            fs::write(modules.join(name).join("config"), "").unwrap();
        }
        // Planted: `modules` and `modules/libs` look like git dirs now.
        fs::write(modules.join("HEAD"), "").unwrap();
        fs::write(modules.join("libs/HEAD"), "").unwrap();
        let spec = Spec::new(SandboxPolicy::WorkspaceWrite, &ws).unwrap();
        let plan = plan(&spec, &HomeEnv::default()).unwrap();
        for path in ["logs/config", "logs/hooks", "libs/a/config", "libs/a/hooks"] {
            assert!(plan.read_only.contains(&modules.join(path)), "{path}");
        }
    }

    #[test]
    fn nothing_is_created_in_a_git_dir_without_head() {
        let (_dir, ws) = repo();
        fs::remove_file(ws.join(".git/HEAD")).unwrap();
        let spec = Spec::new(SandboxPolicy::WorkspaceWrite, &ws).unwrap();
        let plan = plan(&spec, &HomeEnv::default()).unwrap();
        assert!(!ws.join(".git/config").exists());
        assert!(!ws.join(".git/hooks").exists());
        assert!(plan.unenforced.contains(&ws.join(".git/config")));
    }

    #[test]
    fn preview_creates_nothing() {
        let (_dir, ws) = repo();
        let spec = Spec::new(SandboxPolicy::WorkspaceWrite, &ws).unwrap();
        let preview = preview(&spec, &HomeEnv::default()).unwrap();
        assert!(preview.read_only.contains(&ws.join(".git/hooks")));
        assert!(!ws.join(".git/hooks").exists());
        assert!(!ws.join(".git/config").exists());
        assert!(preview.unenforced.contains(&ws.join(".shellgate.toml")));
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
            homes: vec![home.clone()],
            shellgate_dirs: vec![home.join(".config/shellgate")],
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
            homes: vec![ws.clone()],
            shellgate_dirs: vec![ws.join(".config/shellgate")],
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
