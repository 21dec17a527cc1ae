//! The OS sandbox: a private, read-only mount tree with only the writable roots writable,
//! credential stores hidden, a PID namespace that ends with the line, Landlock and seccomp —
//! entered in one `clone` and one `execve`.
//!
//! A caller (possibly multi-threaded: tokio, an HTTP client, the `wrap` broker) builds a [`Spec`]
//! — usually with [`line_spec`], the one resolver of what a line may write — and hands it with a
//! [`Command`] to [`spawn`]. Everything is prepared in the caller, then one clone starts the
//! sandbox's init, which builds the mount tree with async-signal-safe calls, forks the program's
//! process and reaps it; the program's process enters Landlock and seccomp and execs (see
//! [`launch`] and `child`). [`Running::wait`] returns the program's status, whether processes it
//! left were killed, and what the guard found.
//!
//! Layout: [`policy`] (what to enforce), [`workspace`] (what a line may write), [`credentials`]
//! (what is hidden), `protected` (the plan of the mount tree), [`abi`] (what the kernel offers),
//! `requirements` (fail-closed decision), [`landlock`], [`seccomp`], [`launch`] (the parent's
//! half), `child` and `raw` (the sandbox's own processes), [`guard`] (names that could not be
//! pre-protected), `git` (just enough of git's layout), [`support`] (detection for `doctor`),
//! [`harness_file`] (the one file an agent harness writes, handed to a line as a descriptor).
//!
//! A crate of its own (`shellgate-sandbox`), on the decision core alone: it cannot reach the gate,
//! the config loader, the audit log or anything else of the binary's. Also here, because the
//! mount tree protects them: [`paths`] (where shellgate's own files are), [`settings`] (the
//! configuration's `[sandbox]`), [`socket_path`] (a socket's path that fits `sun_path`), and the
//! resolvers from a grant to a [`Spec`] below ([`line_workspace`], [`grant_spec`]).

// The core's vocabulary under the names the sandbox has always used (`crate::error` …); the
// sandbox's own `policy` is what to enforce, the core's (`shellgate_core::policy`) what was
// decided.
pub(crate) use shellgate_core::{error, mode, own_env, parse};

pub mod abi;
mod child;
pub mod credentials;
mod git;
mod gitconfig;
pub mod guard;
pub mod harness_file;
pub mod landlock;
pub mod launch;
mod listening;
pub mod mounts;
pub mod notify;
mod opener;
pub mod paths;
pub mod policy;
mod protected;
pub mod proxy;
mod raw;
mod requirements;
pub mod seccomp;
pub mod settings;
pub mod socket_path;
pub mod support;
pub mod surface;
pub(crate) mod sys;
mod unix_connect;
pub mod workspace;

pub use abi::{ABI_MAX_ENV, DetectedAbi, Feature};
pub use guard::Violation;
pub use launch::{
    Command, Finished, Running, SANDBOXED_ENV, record_startup_signals, resolve_program, spawn,
};
pub use mounts::NO_NAMESPACES_ENV;
pub use notify::{CREATING_A_DIRECTORY, Denial};
pub use policy::{Policy, Protection, Spec};
pub use protected::{HomeEnv, Layer, Plan};
pub use support::{Support, detect};
pub use sys::{geteuid, per_namespace_pid_max, pidfd_open};
pub use workspace::{Anchors, Workspace};

use crate::error::Result;
use crate::mode::SandboxPolicy;
use crate::settings::SandboxSettings;
use std::path::{Path, PathBuf};

/// What the sandbox would make for `spec` (layers, read-only paths, guarded names, hidden
/// stores), without creating anything: for `doctor`.
pub fn preview(spec: &Spec) -> Result<Plan> {
    protected::preview(spec, &HomeEnv::from_env()?)
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
    let (homes, own) = HomeEnv::from_env()
        .map(|env| (env.homes, env.own_dirs))
        .unwrap_or_default();
    let projects: Vec<PathBuf> = settings
        .projects
        .iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect();
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let fixed = match fixed.map(|f| policy::open_dir(f, "workspace")) {
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

/// The credential stores to hide on this machine, with the configuration's additions and
/// exceptions.
pub fn hidden_paths(settings: &SandboxSettings) -> Vec<PathBuf> {
    let homes = HomeEnv::from_env().map(|env| env.homes).unwrap_or_default();
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
        for path in grant
            .writable
            .iter()
            .filter_map(|d| crate::paths::home_relative(d))
        {
            spec = spec.with_writable(&path)?;
        }
    }
    Ok(spec)
}

/// The refusal for a line one of its limits ended: a process killed for writing past the file-size
/// limit (`SIGXFSZ`, or a shell's status for a command it killed, 153). Processes and memory past their limits fail in the line itself (`fork`
/// answers `EAGAIN`, an allocation `ENOMEM`), which its own error shows.
pub fn limit_refusal(
    status: &std::process::ExitStatus,
    limits: &policy::Limits,
) -> Option<crate::error::Error> {
    use std::os::unix::process::ExitStatusExt;
    // Killed by SIGXFSZ itself, or a shell reporting a command of it killed so (128 + 25).
    let killed =
        status.signal() == Some(libc::SIGXFSZ) || status.code() == Some(128 + libc::SIGXFSZ);
    killed.then(|| {
        crate::error::Error::new(
            crate::error::Code::SandboxLimit,
            format!(
                "the line wrote a file past its size limit ({} bytes, sandbox.limits.file_size) \
                 and was ended",
                limits.file_size
            ),
        )
    })
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
    let Ok(env) = HomeEnv::from_env() else {
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
            git::is_git_dir(d).unwrap_or(false)
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
        .with_hidden(hidden_paths(settings)))
}
