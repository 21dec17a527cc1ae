//! From a line's grant to its sandbox: the one resolver of what a line may write and what stays
//! protected, above the sandbox crate (which enforces a [`Spec`] and reads nothing of the user's
//! to decide it).
//!
//! What of this machine a spec is built from: the homes (`$HOME` and the password database's),
//! the trees programs read later (`$XDG_CONFIG_HOME`, `$ZDOTDIR`, `$BASH_ENV`'s file, shellgate's
//! own directories and binary: [`home_env`]), the workspace a line's directory belongs to
//! ([`line_workspace`]: the homes, the configured projects and shellgate's own directories are
//! its anchors), the credential stores to hide ([`hidden_paths`]) and what a refused write may be
//! offered ([`grantable_dirs`]).

use crate::config::SandboxSettings;
use crate::error::{Code, Error, Result};
use crate::mode::SandboxPolicy;
use crate::sandbox::workspace::{self, Anchors, Workspace};
use crate::sandbox::{HomeEnv, Policy, Spec, credentials};
use std::path::{Path, PathBuf};

/// Where the user's own files are, from the environment and the password database, once per
/// process (every caller of one process sees the same answer). A failing lookup (not a missing
/// entry) refuses: the home it would name is what must be protected.
pub fn home_env() -> Result<HomeEnv> {
    static ONCE: std::sync::OnceLock<Result<HomeEnv>> = std::sync::OnceLock::new();
    ONCE.get_or_init(read_home_env).clone()
}

fn read_home_env() -> Result<HomeEnv> {
    let vars = crate::env::get();
    let abs = |name: &str| vars.absolute(name);
    let uid = crate::sandbox::geteuid();
    let passwd_home = crate::paths::password_entry_home()
        .map_err(|errno| {
            let e = std::io::Error::from_raw_os_error(errno);
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
        git_home: vars.home(),
        git_xdg_config: vars.var("XDG_CONFIG_HOME").map(PathBuf::from),
        ..HomeEnv::default()
    };
    for home in abs("HOME").into_iter().chain(passwd_home) {
        push_new(&mut env.homes, canonical_or_self(home));
    }
    for dir in crate::paths::own_dirs() {
        push_new(&mut env.own_dirs, canonical_or_self(dir));
    }
    // Each path is resolved once: the homes and own directories above already are.
    let named: Vec<PathBuf> = ["XDG_CONFIG_HOME", "ZDOTDIR", "BASH_ENV"]
        .into_iter()
        .filter_map(abs)
        .map(canonical_or_self)
        .collect();
    let binary = crate::paths::binary();
    for tree in env
        .homes
        .iter()
        .chain(&named)
        .chain(&env.own_dirs)
        .chain(&binary)
    {
        push_new(&mut env.trees, tree.clone());
    }
    Ok(env)
}

fn canonical_or_self(path: PathBuf) -> PathBuf {
    std::fs::canonicalize(&path).unwrap_or(path)
}

fn push_new(list: &mut Vec<PathBuf>, path: PathBuf) {
    if !list.contains(&path) {
        list.push(path);
    }
}

/// The workspace of a line in `cwd`: the one resolver, with the homes, configured projects and
/// shellgate's own directories of this machine. `fixed` is a caller's anchor (`wrap`).
pub fn workspace_of(cwd: &Path, fixed: Option<&Path>, settings: &SandboxSettings) -> Workspace {
    line_workspace(cwd, None, fixed, settings).0
}

/// The workspace of a line in `cwd` whose first commands `cd` into `entered` (canonical; see
/// `gate::entered_dir`): `entered`'s when one is found there, else `cwd`'s — the one resolver,
/// this machine's anchors read once. With the canonical directory it was derived from (which
/// the sandbox checks again, see [`Spec::anchor`]).
pub fn line_workspace(
    cwd: &Path,
    entered: Option<&Path>,
    fixed: Option<&Path>,
    settings: &SandboxSettings,
) -> (Workspace, PathBuf) {
    let (homes, own) = home_env()
        .map(|env| (env.homes, env.own_dirs))
        .unwrap_or_default();
    let projects: Vec<PathBuf> = settings
        .projects
        .iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect();
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let fixed = match fixed.map(|f| crate::sandbox::policy::open_dir(f, "workspace")) {
        Some(Ok((path, _))) => Some(path),
        Some(Err(e)) => return (Workspace::None { reason: e.reason }, cwd),
        None => None,
    };
    let anchors = Anchors {
        fixed: fixed.as_deref(),
        homes: &homes,
        projects: &projects,
        own_dirs: &own,
    };
    if let Some(dir) = entered {
        let found = workspace::resolve(dir, &anchors);
        if found.root().is_some() {
            return (found, dir.to_path_buf());
        }
    }
    (workspace::resolve(&cwd, &anchors), cwd)
}

/// Directories every sandboxed line may write, whatever its workspace.
const TEMP_DIRS: [&str; 3] = ["/tmp", "/var/tmp", "/dev/shm"];

/// The directory holding `path` that lines in the sandbox may write, if one does: a temp dir, a
/// directory the configuration makes writable for every line (`[sandbox] writable`), or the
/// workspace a line in `path`'s own directory would be given ([`workspace_of`]). What runs
/// outside the sandbox must not come from there: a person's one-off run outside
/// (`gate::outside`) and the programs a hooked shell's prompt runs (`shell::prompt_path`).
///
/// A path that cannot be resolved is an error, not "no": the callers deny (or treat it as
/// writable) rather than guess. Not seen: a directory one line was granted after a person's yes,
/// and a fixed workspace of a `wrap` session (where the agent started, when that is no
/// repository).
pub fn writable_by_lines(
    path: &Path,
    settings: &SandboxSettings,
) -> std::io::Result<Option<PathBuf>> {
    let path = std::fs::canonicalize(path)?;
    let configured = settings
        .writable
        .iter()
        .filter_map(|dir| std::fs::canonicalize(dir).ok());
    let always = TEMP_DIRS.iter().map(PathBuf::from).chain(configured);
    if let Some(root) = always.into_iter().find(|root| path.starts_with(root)) {
        return Ok(Some(root));
    }
    let dir = match path.parent() {
        Some(parent) if !path.is_dir() => parent,
        _ => path.as_path(),
    };
    Ok(workspace_of(dir, None, settings)
        .root()
        .filter(|root| path.starts_with(root))
        .map(Path::to_path_buf))
}

/// Whether a `PATH` entry is one no sandboxed line can put a program in: absolute (a relative
/// one depends on the directory), existing (a line may create a missing one) and not
/// [`writable_by_lines`] (one that cannot be resolved is not trusted either). What runs outside
/// the sandbox, or with a grant nobody was asked for, finds its programs only in such entries
/// (`shell::prompt_path`, `gate::own_remote`).
pub fn path_entry_safe(entry: &Path, settings: &SandboxSettings) -> bool {
    entry.is_absolute() && entry.exists() && matches!(writable_by_lines(entry, settings), Ok(None))
}

/// Whether no sandboxed line can write `path`, or create it when it is missing (then its nearest
/// existing directory is judged); a path that cannot be placed is not beyond them. What git reads
/// for a push nobody was asked about lies there (`gate::own_remote`).
pub fn beyond_lines(path: &Path, settings: &SandboxSettings) -> bool {
    let Some(existing) = path.ancestors().find(|p| p.symlink_metadata().is_ok()) else {
        return false;
    };
    matches!(writable_by_lines(existing, settings), Ok(None))
}

/// The credential stores to hide on this machine, with the configuration's additions and
/// exceptions.
pub fn hidden_paths(settings: &SandboxSettings) -> Vec<PathBuf> {
    let homes = home_env().map(|env| env.homes).unwrap_or_default();
    credentials::hidden_paths(&homes, &settings.hide, &settings.unhide)
}

/// The spec of a line allowed with `grant`: its policy in its workspace (see [`line_workspace`]),
/// the configuration's writable roots and the grant's (`~/` is the home; a missing one is not
/// created), its network (on, or TCP to its ports), the ports it listens on, credential stores
/// hidden.
pub fn grant_spec(
    grant: &shellgate_core::policy::grant::Grant,
    cwd: &Path,
    entered: Option<&Path>,
    fixed: Option<&Path>,
    settings: &SandboxSettings,
) -> Result<Spec> {
    use shellgate_core::policy::grant::Network;
    let mut spec = line_spec(
        grant.sandbox,
        cwd,
        entered,
        fixed,
        settings,
        grant.network == Network::On,
    )?;
    if let Network::Tcp(_) = &grant.network {
        spec = spec
            .with_tcp_ports(&grant.network.any_host_ports())
            .with_hosts(&grant.network.named_hosts());
    }
    if grant.network != Network::On {
        spec = spec.with_listen(&grant.listen.iter().copied().collect::<Vec<_>>());
    }
    if spec.policy == Policy::WorkspaceWrite {
        let workspace = spec.workspace.clone();
        for dir in &grant.writable {
            let Some(path) = crate::paths::grant_dir(dir, workspace.as_deref()) else {
                continue;
            };
            // The lines' own caches are shellgate's to make (a missing root is skipped).
            if shellgate_core::policy::needs::is_line_cache(dir) {
                crate::paths::make_private_dir(&path);
            }
            spec = spec.with_writable(&path)?;
        }
    }
    Ok(spec)
}

/// The directories to grant for a write the sandbox refused at `path`, as a grant names them
/// (`~/…`): the nearest existing directory holding it, when that lies beneath the user's home
/// (not the home itself, not beneath its hidden directories — `~/.config`, `~/.local/bin`,
/// `~/.ssh` — where configuration that runs later lives) and outside every protected tree (shell
/// startup and configuration directories, shellgate's own, credential stores). Anything else is
/// not for a line to write; a rule's `needs` can still name a cache such as `~/.cache/x`.
///
/// A write in a bare repository (a push to a repository on this machine) is granted the
/// repository: a push writes its objects, then its ref and a lock beside `HEAD`, and a grant of
/// the first directory alone fails the next write after the yes. Its `config` and `hooks`, which
/// git runs later, stay read-only in it as in every writable root that is a git dir
/// ([`protected`]).
pub fn grantable_dirs(path: &Path) -> Vec<String> {
    let Ok(env) = home_env() else {
        return Vec::new();
    };
    let Some(mut dir) = path.parent() else {
        return Vec::new();
    };
    while !dir.is_dir() {
        match dir.parent() {
            Some(parent) => dir = parent,
            None => return Vec::new(),
        }
    }
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return Vec::new();
    };
    let dir = dir
        .ancestors()
        // An unknown is not a repository: this only chooses what to offer; the sandbox protects
        // a granted one's config and hooks itself, refusing the line when it cannot tell.
        .find(|d| {
            crate::sandbox::is_git_dir(d).unwrap_or(false)
                && d.file_name() != Some(std::ffi::OsStr::new(".git"))
        })
        .unwrap_or(&dir);
    grantable(dir, &env).into_iter().collect()
}

/// `dir` as a grant names it, when a line may be granted it (see [`grantable_dirs`]).
fn grantable(dir: &Path, env: &HomeEnv) -> Option<String> {
    let home = env.homes.first()?;
    let below = dir.strip_prefix(home).ok()?;
    if below.as_os_str().is_empty() {
        return None;
    }
    let protected = env
        .trees
        .iter()
        .filter(|t| !env.homes.contains(t))
        .any(|t| dir.starts_with(t) || t.starts_with(dir));
    let hidden = credentials::hidden_paths(&env.homes, &[], &[])
        .iter()
        .any(|h| h.starts_with(dir) || dir.starts_with(h));
    let dot_git = dir.components().any(|c| c.as_os_str() == ".git");
    let dot_dir = env
        .homes
        .iter()
        .any(|h| workspace::beneath_a_hidden_dir_of(dir, h));
    if protected || hidden || dot_git || dot_dir {
        return None;
    }
    Some(format!("~/{}", below.display()))
}

/// The spec of a line: `policy` in its workspace (see [`line_workspace`]), the configuration's
/// extra writable roots, network as given, credential stores hidden.
pub fn line_spec(
    policy: SandboxPolicy,
    cwd: &Path,
    entered: Option<&Path>,
    fixed: Option<&Path>,
    settings: &SandboxSettings,
    network: bool,
) -> Result<Spec> {
    let (workspace, derived_from) = line_workspace(cwd, entered, fixed, settings);
    let mut spec = match &workspace {
        Workspace::Writable { root, source } => {
            let mut spec = Spec::new(policy, Some(root))?;
            if *source != workspace::Source::Fixed {
                spec.anchor = Some(derived_from);
            }
            spec
        }
        Workspace::None { reason } => {
            let mut spec = Spec::new(policy, None)?;
            spec.no_workspace = Some(reason.clone());
            spec
        }
    };
    if spec.policy == Policy::WorkspaceWrite {
        for dir in &settings.writable {
            spec = spec.with_writable(dir)?;
        }
    }
    spec.limits = settings.limits;
    Ok(spec
        .with_network(network)
        .with_hidden(hidden_paths(settings))
        .with_tmpdir(crate::env::get().var("TMPDIR").map(Path::new))
        .with_home(home_env()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_dirs_are_writable_by_lines() {
        let dir = tempfile::tempdir_in("/tmp").unwrap();
        let file = dir.path().join("ssh");
        std::fs::write(&file, "").unwrap();
        let settings = SandboxSettings::default();
        assert_eq!(
            writable_by_lines(&file, &settings).unwrap(),
            Some(PathBuf::from("/tmp"))
        );
        assert_eq!(
            writable_by_lines(dir.path(), &settings).unwrap(),
            Some(PathBuf::from("/tmp"))
        );
        assert_eq!(
            writable_by_lines(Path::new("/usr/bin/env"), &settings).unwrap(),
            None
        );
        // A path that cannot be resolved is an error, never taken for one lines cannot write.
        assert!(writable_by_lines(&dir.path().join("gone/ssh"), &settings).is_err());
    }

    #[test]
    fn a_missing_path_is_judged_by_the_directory_that_would_hold_it() {
        let settings = SandboxSettings::default();
        assert!(beyond_lines(Path::new("/usr/bin/env"), &settings));
        assert!(beyond_lines(Path::new("/usr/no-such/dir/file"), &settings));
        let dir = tempfile::tempdir_in("/tmp").unwrap();
        assert!(!beyond_lines(&dir.path().join("no-such/file"), &settings));
    }

    #[test]
    fn a_configured_writable_directory_is_writable_by_lines() {
        // No file is written: a system directory named in the configuration is enough.
        let env = Path::new("/usr/bin/env");
        let mut settings = SandboxSettings::default();
        assert_eq!(writable_by_lines(env, &settings).unwrap(), None);
        settings.writable.push(PathBuf::from("/usr/bin"));
        assert_eq!(
            writable_by_lines(env, &settings).unwrap(),
            Some(std::fs::canonicalize("/usr/bin").unwrap())
        );
    }
}
