//! The plan of the sandbox's mount tree: what is writable, what stays read-only inside it, what
//! is hidden, and which missing names are watched.
//!
//! The tree is built **read-only by construction**: in the private mount namespace every mount is
//! made read-only, recursively (so every other mount of the workspace is read-only too), and only
//! the writable roots are attached again, writable, as copies of themselves taken before. Landlock
//! then adds the inode-level layer on top. What this module plans is the rest:
//!
//! * **layers**: the writable roots, and the *protected trees* that must stay read-only even when
//!   they lie beneath a writable root (a home, `$XDG_CONFIG_HOME`, `$ZDOTDIR`, `$BASH_ENV`'s file,
//!   shellgate's config, state and binary — a home under `/tmp` in a test, say). A writable root
//!   inside a protected tree is attached again after it;
//! * **read-only paths inside writable roots**: the git files that git outside the sandbox executes
//!   or reads configuration from (`.git/config`, `.git/hooks`, `config.worktree`, `commondir`, the
//!   same in linked worktrees' and submodules' git dirs, a `.git` pointer file), `.gitmodules` and
//!   shellgate's project file. Missing `config` and `hooks/` of a repository are created (empty,
//!   as git would) so they can be bound read-only;
//! * **pins**: the directories between a writable root and such a path are bound onto themselves,
//!   so they cannot be renamed away and replaced (`mv .git x; mkdir .git`);
//! * **guarded names**: the protected names that do not exist and cannot be created without
//!   littering (`.git/commondir`, `.gitmodules`, a missing `$ZDOTDIR/.zshrc` …). The guard
//!   ([`crate::guard`]) watches them while the line runs and checks them after it,
//!   quarantining whatever appeared;
//! * **hidden paths**: the credential stores ([`crate::credentials`]).
//!
//! A protected path reached through a symlink that lives in a writable root cannot be pinned (a
//! symlink cannot be a mount point, and the program could swap it): the launch is refused. A path
//! whose existence cannot be established (`EACCES` after `chmod 000 .git`, `EIO`) refuses too,
//! instead of counting as missing.

use crate::error::{Code, Error, Result};
use crate::git;
use crate::policy::{Policy, Protection, Spec};
use crate::sys;
use serde::Serialize;
use std::path::{Component, Path, PathBuf};

/// Project files protected at the top of every writable root that is a workspace.
const PROJECT_FILES: [&str; 2] = [
    ".gitmodules",
    shellgate_core::policy::own_config::PROJECT_FILE,
];

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
    /// Create it (empty) and protect it: git would create it anyway.
    Create(Kind),
    /// Leave it and guard the name: the program could create it.
    Guard,
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
    fn guarded(path: PathBuf) -> Candidate {
        Candidate {
            path,
            missing: Missing::Guard,
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

/// Where the user's own files live: what must stay read-only even beneath a writable root. A
/// plain value, resolved above the sandbox (the binary's `spec::home_env`: the environment, the
/// password database, shellgate's own paths) and handed in with the [`crate::Spec`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HomeEnv {
    /// `$HOME`, and the home the password database gives the effective uid when it differs. In
    /// hook mode the launcher inherits the agent's environment, where `HOME` can name anything:
    /// the real home must be protected whatever it says.
    pub homes: Vec<PathBuf>,
    /// Trees read by programs that run later: the homes, `$XDG_CONFIG_HOME`, `$ZDOTDIR`,
    /// `$BASH_ENV`'s file, shellgate's own config and state directories and its binary.
    pub trees: Vec<PathBuf>,
    /// shellgate's own config and state directories (also in `trees`): never a workspace.
    pub own_dirs: Vec<PathBuf>,
    /// `$HOME` and `$XDG_CONFIG_HOME` as the environment names them (absolute or not): where git
    /// finds its global config, for the check of git's surface after a line (`surface`).
    pub git_home: Option<PathBuf>,
    pub git_xdg_config: Option<PathBuf>,
}

/// One layer of the tree, applied shallow first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "path")]
pub enum Layer {
    /// A writable root, attached as a writable copy of itself.
    Writable(PathBuf),
    /// A protected tree beneath a writable root, bound read-only.
    ReadOnly(PathBuf),
}

/// What the mount namespace has to do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Writable roots and protected trees, shallow first (see [`Layer`]).
    pub layers: Vec<Layer>,
    /// Directories to bind onto themselves (top-down), so they cannot be renamed or removed.
    pub pins: Vec<PathBuf>,
    /// Existing protected paths inside writable roots, bound read-only onto themselves.
    pub read_only: Vec<PathBuf>,
    /// Protected names that do not exist, in writable places: guarded.
    pub guarded: Vec<PathBuf>,
    /// Credential stores covered by an empty read-only view.
    pub hidden: Vec<PathBuf>,
}

impl Plan {
    /// The writable roots, shallow first.
    pub fn writable_roots(&self) -> impl Iterator<Item = &Path> {
        self.layers.iter().filter_map(|layer| match layer {
            Layer::Writable(path) => Some(path.as_path()),
            Layer::ReadOnly(_) => None,
        })
    }
}

/// Works out the plan for `spec`, creating the missing git paths it may create.
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
    let mut plan = Plan {
        hidden: spec.hidden.clone(),
        ..Plan::default()
    };
    if spec.policy == Policy::ReadOnly {
        return Ok(plan);
    }
    let trees: Vec<PathBuf> = env
        .trees
        .iter()
        .chain(&spec.read_only_trees)
        .cloned()
        .collect();
    plan.layers = layers(&spec.writable_roots(), &spec.writable_mounts, &trees);
    let writable_layer = |path: &PathBuf| {
        plan.layers
            .iter()
            .any(|layer| matches!(layer, Layer::Writable(p) if p == path))
    };
    if let Some(kept_read_only) = spec.writable_mounts.iter().find(|m| !writable_layer(m)) {
        return Err(Error::new(
            Code::SandboxUnavailable,
            format!(
                "the mount {} lies in a protected tree, so it cannot be kept writable",
                kept_read_only.display()
            ),
        ));
    }
    if spec.dropped.contains(&Protection::ProtectedPaths) {
        return Ok(plan);
    }
    let mut targets = Vec::new();
    // Candidates share a handful of parents (each root, each git dir): place each once.
    let mut placed_parents: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    for candidate in candidates(spec, env)? {
        let (Some(parent), Some(name)) = (candidate.path.parent(), candidate.path.file_name())
        else {
            continue;
        };
        let placed_parent = match placed_parents.iter().find(|(p, _)| p == parent) {
            Some((_, placed)) => placed.clone(),
            None => {
                let placed = place(parent, &plan)?;
                placed_parents.push((parent.to_path_buf(), placed.clone()));
                placed
            }
        };
        let Some(path) = placed_parent.map(|p| p.join(name)) else {
            continue;
        };
        // Outside every writable place, the read-only tree keeps it read-only.
        if !writable_at(&plan.layers, &path) {
            continue;
        }
        match resolve(&path, candidate.missing, creating)? {
            Some(path) => targets.push(path),
            None if candidate.missing == Missing::Guard => plan.guarded.push(path),
            None => {}
        }
    }
    // Parents before children; equal paths adjacent, so `dedup` removes every duplicate.
    targets.sort_by(|a, b| depth(a).cmp(&depth(b)).then_with(|| a.cmp(b)));
    targets.dedup();
    for target in targets {
        for pin in pins_for(&target, &plan.layers) {
            if !plan.pins.contains(&pin) {
                plan.pins.push(pin);
            }
        }
        plan.read_only.push(target);
    }
    plan.pins.sort_by_key(|p| depth(p));
    plan.guarded.sort();
    plan.guarded.dedup();
    Ok(plan)
}

/// The layers for these writable roots, writable mounts and protected trees, shallow first: an
/// outermost root; a protected tree whose nearest enclosing layer is writable; a root whose
/// nearest enclosing layer is read-only, or that is a mount of its own (the mounts beneath a
/// writable root are made read-only); a writable mount (a mount of its own, see
/// [`Spec::writable_mounts`]) whose nearest enclosing layer is writable, never one in a protected
/// tree. Anything else is already what its enclosing layer makes it.
fn layers(roots: &[PathBuf], mounts: &[PathBuf], trees: &[PathBuf]) -> Vec<Layer> {
    let mut all: Vec<Layer> = roots
        .iter()
        .chain(mounts)
        .cloned()
        .map(Layer::Writable)
        .chain(
            trees
                .iter()
                .filter(|t| t.exists())
                .cloned()
                .map(Layer::ReadOnly),
        )
        .collect();
    all.sort_by(|a, b| {
        let (a, b) = (layer_path(a), layer_path(b));
        depth(a).cmp(&depth(b)).then_with(|| a.cmp(b))
    });
    let mut layers: Vec<Layer> = Vec::new();
    for layer in all {
        let path = layer_path(&layer);
        let writable_here = writable_at(&layers, path);
        let keep = match layer {
            Layer::Writable(_) if mounts.iter().any(|m| m == path) => writable_here,
            Layer::Writable(_) => !writable_here || is_mount_root(path),
            Layer::ReadOnly(_) => writable_here,
        };
        if keep && !layers.iter().any(|l| layer_path(l) == path) {
            layers.push(layer);
        }
    }
    layers
}

/// Whether `path` is the root of a mount (an unreadable or absent path is not).
fn is_mount_root(path: &Path) -> bool {
    sys::is_mount_root(path).unwrap_or(false)
}

fn layer_path(layer: &Layer) -> &Path {
    match layer {
        Layer::Writable(p) | Layer::ReadOnly(p) => p,
    }
}

/// Whether `path` is writable under these layers: its nearest enclosing layer is a writable root.
fn writable_at(layers: &[Layer], path: &Path) -> bool {
    layers
        .iter()
        .filter(|l| path.starts_with(layer_path(l)))
        .max_by_key(|l| depth(layer_path(l)))
        .is_some_and(|l| matches!(l, Layer::Writable(_)))
}

fn candidates(spec: &Spec, env: &HomeEnv) -> Result<Vec<Candidate>> {
    let mut list = Vec::new();
    let roots = spec.workspace.iter().chain(&spec.writable);
    for root in roots {
        let dot_git = root.join(".git");
        let dot_git_meta = sys::missing_as_none(dot_git.symlink_metadata())
            .map_err(|e| unchecked(&dot_git, &e))?;
        if dot_git_meta.is_none() {
            // Not a repository yet: a `.git` the line creates (`git init`, or a planted one)
            // would hold config and hooks that git outside runs later (`core.fsmonitor` on the
            // next `git status`), and nothing of it could be protected in advance.
            list.push(Candidate::guarded(dot_git.clone()));
        } else if dot_git_meta.is_some_and(|meta| !meta.is_dir()) {
            // A pointer file decides which git dir git uses: it must not be redirected, even when
            // what it points to is missing or unreadable now. A symlink is refused (`resolve`):
            // git follows it and a mount cannot pin it.
            list.push(Candidate::guarded(dot_git.clone()));
        }
        if git::is_git_dir(root).map_err(|e| unchecked(root, &e))? {
            // A bare repository granted as a root (a push to one on this machine): its objects
            // and refs are the grant, its config and hooks, which git runs later, are not.
            list.extend(git_dir_candidates(root)?);
        }
        let layout = git::inspect(root).map_err(|e| unchecked(&dot_git, &e))?;
        if let Some(layout) = layout {
            for dir in layout.dirs() {
                list.extend(git_dir_candidates(dir)?);
            }
        }
        for name in PROJECT_FILES {
            list.push(Candidate::guarded(root.join(name)));
        }
    }
    for dir in &spec.git_dirs {
        list.extend(git_dir_candidates(dir)?);
    }
    // Protected trees that do not exist yet: their names are guarded where they would appear.
    for tree in &env.trees {
        list.push(Candidate::guarded(tree.clone()));
    }
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
            Candidate::guarded(git_dir.join("config")),
            Candidate::guarded(git_dir.join("hooks")),
        ]
    };
    let mut list = Vec::from(config_and_hooks);
    list.push(Candidate::guarded(git_dir.join("config.worktree")));
    list.push(Candidate::guarded(git_dir.join("commondir")));
    // Other linked worktrees' per-worktree config and common-dir pointers.
    for admin in subdirs(&git_dir.join("worktrees"))? {
        list.push(Candidate::probed(admin.join("config.worktree")));
        list.push(Candidate::probed(admin.join("commondir")));
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
/// not searched.
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

/// Walks `path` from `/`, resolving symlinks that live in read-only places (a symlinked `$HOME`
/// is fine) and refusing one that lives in a writable place: the program could replace that
/// symlink, and a symlink cannot be a mount point. Returns the path with every existing component
/// resolved, missing components kept as written; `None` for a relative path or a dangling link.
fn place(path: &Path, plan: &Plan) -> Result<Option<PathBuf>> {
    if !path.is_absolute() {
        return Ok(None);
    }
    // Layers are canonical: a candidate built beneath one needs checking only below it.
    let start = plan
        .layers
        .iter()
        .map(layer_path)
        .filter(|root| path.starts_with(root))
        .max_by_key(|root| depth(root));
    let (mut placed, rest) = match start {
        Some(root) => (root.to_path_buf(), path.strip_prefix(root).unwrap_or(path)),
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
                if writable_at(&plan.layers, &placed) {
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
            Missing::Guard | Missing::Probe => Ok(None),
        },
        Err(e) => Err(unchecked(placed, &e)),
    }
}

/// Creates an empty protected file or directory, as git (`hooks/`, `config`) would, so it can be
/// mounted read-only. `false` when its parent does not exist (nothing to create it in). Only ever
/// called for paths inside a writable root: the launcher creates nothing outside them.
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
            "cannot enforce read-only protected path {}: it is a symlink in a writable \
             directory, which a mount cannot pin; choices: replace the symlink with the file, or \
             drop the protection explicitly with --drop-protection {}",
            path.display(),
            Protection::ProtectedPaths
        ),
    )
}

/// The directories between the nearest writable layer containing `target` and `target`, which
/// must be pinned: every ancestor strictly below that layer.
fn pins_for(target: &Path, layers: &[Layer]) -> Vec<PathBuf> {
    let Some(nearest) = layers
        .iter()
        .map(layer_path)
        .filter(|r| target.starts_with(r))
        .max_by_key(|r| depth(r))
    else {
        return Vec::new();
    };
    let mut pins: Vec<PathBuf> = target
        .ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(nearest) && *a != nearest)
        .map(Path::to_path_buf)
        .collect();
    pins.reverse();
    pins
}

fn depth(path: &Path) -> usize {
    path.components().count()
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

    fn spec(ws: &Path) -> Spec {
        let mut spec = Spec::new(SandboxPolicy::WorkspaceWrite, Some(ws)).unwrap();
        // The scratch repositories live under /tmp, itself a writable root by default.
        spec.temp_dirs.clear();
        spec
    }

    #[test]
    fn a_writable_mount_is_a_layer_only_where_its_enclosing_layer_is_writable() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let (home, agent) = (root.join("home"), root.join("home/.agent"));
        fs::create_dir_all(&agent).unwrap();
        // A protected home inside the root, the agent's own directory a root inside the home.
        let mounts = [agent.join("state.json"), home.join("x.json")];
        let got = layers(
            &[root.clone(), agent.clone()],
            &mounts,
            std::slice::from_ref(&home),
        );
        let writable = |path: &Path| {
            got.iter()
                .any(|l| matches!(l, Layer::Writable(p) if p == path))
        };
        assert!(writable(&agent), "{got:?}");
        assert!(writable(&agent.join("state.json")), "{got:?}");
        assert!(!writable(&home.join("x.json")), "{got:?}");
    }

    #[test]
    fn git_paths_are_created_and_protected() {
        let (_dir, ws) = repo();
        let plan = plan(&spec(&ws), &HomeEnv::default()).unwrap();
        assert!(plan.read_only.contains(&ws.join(".git/config")));
        assert!(plan.read_only.contains(&ws.join(".git/hooks")));
        assert!(ws.join(".git/hooks").is_dir(), "hooks dir materialised");
        assert_eq!(fs::read(ws.join(".git/config")).unwrap(), b"");
        assert!(plan.pins.contains(&ws.join(".git")));
        for guarded in [".gitmodules", ".git/commondir", ".git/config.worktree"] {
            assert!(plan.guarded.contains(&ws.join(guarded)), "{guarded}");
        }
        assert_eq!(plan.layers, vec![Layer::Writable(ws.clone())]);
    }

    #[test]
    fn existing_git_paths_are_protected_without_head() {
        let (_dir, ws) = repo();
        fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        fs::write(ws.join(".git/config"), "").unwrap();
        fs::create_dir_all(ws.join(".git/modules/a/b/hooks")).unwrap();
        fs::write(ws.join(".git/modules/a/b/config"), "").unwrap();
        fs::remove_file(ws.join(".git/HEAD")).unwrap();
        let plan = plan(&spec(&ws), &HomeEnv::default()).unwrap();
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
        fs::write(modules.join("HEAD"), "").unwrap();
        fs::write(modules.join("libs/HEAD"), "").unwrap();
        let plan = plan(&spec(&ws), &HomeEnv::default()).unwrap();
        for path in ["logs/config", "logs/hooks", "libs/a/config", "libs/a/hooks"] {
            assert!(plan.read_only.contains(&modules.join(path)), "{path}");
        }
    }

    #[test]
    fn nothing_is_created_in_a_git_dir_without_head() {
        let (_dir, ws) = repo();
        fs::remove_file(ws.join(".git/HEAD")).unwrap();
        let plan = plan(&spec(&ws), &HomeEnv::default()).unwrap();
        assert!(!ws.join(".git/config").exists());
        assert!(!ws.join(".git/hooks").exists());
        assert!(plan.guarded.contains(&ws.join(".git/config")));
    }

    #[test]
    fn preview_creates_nothing() {
        let (_dir, ws) = repo();
        let preview = preview(&spec(&ws), &HomeEnv::default()).unwrap();
        assert!(preview.read_only.contains(&ws.join(".git/hooks")));
        assert!(!ws.join(".git/hooks").exists());
        assert!(!ws.join(".git/config").exists());
        assert!(preview.guarded.contains(&ws.join(".shellgate.toml")));
    }

    #[test]
    fn symlinked_protected_path_refuses() {
        let (dir, ws) = repo();
        let decoy = dir.path().join("decoy");
        fs::write(&decoy, "").unwrap();
        std::os::unix::fs::symlink(&decoy, ws.join(".gitmodules")).unwrap();
        let err = plan(&spec(&ws), &HomeEnv::default()).unwrap_err();
        assert_eq!(err.code, Code::SandboxUnavailable);
        assert!(err.reason.contains(".gitmodules"), "{}", err.reason);
    }

    #[test]
    fn a_home_beneath_a_writable_root_is_a_read_only_layer() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        let ws = home.join("code/ws");
        fs::create_dir_all(&ws).unwrap();
        let env = HomeEnv {
            homes: vec![home.clone()],
            trees: vec![home.clone(), home.join(".zdotdir-missing")],
            own_dirs: Vec::new(),
            ..HomeEnv::default()
        };
        let mut spec = Spec::new(SandboxPolicy::WorkspaceWrite, Some(&ws)).unwrap();
        spec.temp_dirs = vec![root.clone()];
        let plan = plan(&spec, &env).unwrap();
        assert_eq!(
            plan.layers,
            vec![
                Layer::Writable(root.clone()),
                Layer::ReadOnly(home.clone()),
                Layer::Writable(ws.clone()),
            ]
        );
        // Missing trees are guarded only where something could create them.
        assert!(!plan.guarded.contains(&home.join(".zdotdir-missing")));
    }

    #[test]
    fn home_outside_the_roots_needs_no_layer() {
        let (dir, ws) = repo();
        let home = fs::canonicalize(dir.path()).unwrap().join("home");
        fs::create_dir_all(&home).unwrap();
        let env = HomeEnv {
            homes: vec![home.clone()],
            trees: vec![home.clone()],
            own_dirs: Vec::new(),
            ..HomeEnv::default()
        };
        let plan = plan(&spec(&ws), &env).unwrap();
        assert_eq!(plan.layers, vec![Layer::Writable(ws)]);
    }

    #[test]
    fn symlinked_dot_git_refuses() {
        let (dir, ws) = repo();
        let real = dir.path().join("real-git");
        fs::rename(ws.join(".git"), &real).unwrap();
        std::os::unix::fs::symlink(&real, ws.join(".git")).unwrap();
        let err = plan(&spec(&ws), &HomeEnv::default()).unwrap_err();
        assert!(err.reason.contains(".git"), "{}", err.reason);
    }

    #[test]
    fn pins_stop_at_the_nearest_writable_layer() {
        let layers = vec![
            Layer::Writable(PathBuf::from("/t")),
            Layer::Writable(PathBuf::from("/t/ws")),
        ];
        assert_eq!(
            pins_for(Path::new("/t/ws/.git/hooks"), &layers),
            vec![PathBuf::from("/t/ws/.git")]
        );
        assert!(pins_for(Path::new("/t/.bashrc"), &layers).is_empty());
    }
}
