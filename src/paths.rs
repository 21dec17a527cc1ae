//! The one place that says where shellgate's own files are: its config directory, its state
//! directory and its binary.
//!
//! The config loader, the audit log, the sandbox (which keeps all three read-only and never makes
//! them a workspace) and the tamper rule all ask here, so a security control cannot drift from
//! where the files really are.
//!
//! The locations are `$XDG_CONFIG_HOME/shellgate` and `$XDG_STATE_HOME/shellgate` when those are
//! absolute, else `.config/shellgate` and `.local/state/shellgate` in the user's home **from the
//! password database** (`$HOME` only when the database has no usable entry): a line that sets
//! `HOME` does not move shellgate's config or audit log. A line cannot move the XDG directories
//! either without a person: `HOME`, `XDG_CONFIG_HOME` and `XDG_STATE_HOME` are hook state (asked
//! in every mode, and a change a sandboxed line makes is applied to the shell only with the
//! person's yes), and under `shellgate wrap` every line is decided by the broker with the
//! locations in effect when the person started it.

use std::path::{Path, PathBuf};

/// The names are the core's: the tamper rule matches lines by them.
pub use shellgate_core::policy::own_config::{DIR_NAME, PROJECT_FILE};

/// Where shellgate's files are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnPaths {
    /// `$XDG_CONFIG_HOME/shellgate` or `$HOME/.config/shellgate`.
    pub config_dir: Option<PathBuf>,
    /// `$XDG_STATE_HOME/shellgate` or `$HOME/.local/state/shellgate`.
    pub state_dir: Option<PathBuf>,
}

/// The locations in effect.
pub fn own() -> OwnPaths {
    from_env()
}

/// The locations the environment names.
pub fn from_env() -> OwnPaths {
    let env = crate::env::get();
    let abs = |name: &str| env.absolute(name);
    let home = password_home().or_else(|| abs("HOME"));
    let base =
        |xdg: &str, fallback: &str| abs(xdg).or_else(|| home.as_ref().map(|h| h.join(fallback)));
    OwnPaths {
        config_dir: base("XDG_CONFIG_HOME", ".config").map(|b| b.join(DIR_NAME)),
        state_dir: base("XDG_STATE_HOME", ".local/state").map(|b| b.join(DIR_NAME)),
    }
}

/// A directory as the config and grants write it: `~/x` beneath `$HOME` (`None` without one: a
/// home-relative directory then names nothing), any other as written. The one reading of `~/`.
pub fn home_relative(dir: &str) -> Option<PathBuf> {
    match dir.strip_prefix("~/") {
        Some(rest) => crate::env::get().home().map(|home| home.join(rest)),
        None => Some(PathBuf::from(dir)),
    }
}

/// Where the lines' package caches of `workspace` are: `~/.cache/shellgate-lines/<name>-<hash>`,
/// a directory of that workspace's own (lines without a workspace share `no-workspace`). What a
/// line writes there only later lines of the same workspace read, and those may write the
/// workspace itself: a line in one project cannot choose what an install in another puts into
/// that project. `None` without a home.
pub fn lines_caches_of(workspace: Option<&Path>) -> Option<PathBuf> {
    let key = match workspace {
        Some(ws) => {
            use sha2::{Digest, Sha256};
            let base: String = ws
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .take(32)
                .collect();
            let digest = Sha256::digest(ws.as_os_str().as_encoded_bytes());
            let hash: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
            format!("{base}-{hash}")
        }
        None => "no-workspace".to_owned(),
    };
    home_relative(crate::policy::needs::LINES_CACHES_ROOT).map(|root| root.join(key))
}

/// A directory as a grant names it, for a line in `workspace`: one of the lines' package caches
/// (`~/.cache/shellgate-lines/npm`, see [`crate::policy::needs::LINE_CACHES`]) is the workspace's
/// own ([`lines_caches_of`]); any other is [`home_relative`].
pub fn grant_dir(dir: &str, workspace: Option<&Path>) -> Option<PathBuf> {
    match crate::policy::needs::line_cache_name(dir) {
        Some(name) => lines_caches_of(workspace).map(|root| root.join(name)),
        None => home_relative(dir),
    }
}

/// The lines' package cache `dir` (as a grant names it) of whichever workspace `path` lies in:
/// that cache's directory, or `None` when `path` is in none (or `dir` is no such cache).
pub fn lines_cache_holding(dir: &str, path: &Path) -> Option<PathBuf> {
    let name = crate::policy::needs::line_cache_name(dir)?;
    let root = home_relative(crate::policy::needs::LINES_CACHES_ROOT)?;
    let mut parts = path.strip_prefix(&root).ok()?.components();
    let key = parts.next()?;
    (parts.next()?.as_os_str() == name).then(|| root.join(key).join(name))
}

/// Whether `path` lies in the cache directory `dir` (as a grant names it): one of the lines'
/// caches of any workspace, or the directory itself.
pub fn in_cache(dir: &str, path: &Path) -> bool {
    lines_cache_holding(dir, path).is_some()
        || home_relative(dir).is_some_and(|d| path.starts_with(d))
}

/// Whether `path` is the cache directory `dir` itself (of any workspace, for the lines' own).
pub fn is_cache(dir: &str, path: &Path) -> bool {
    lines_cache_holding(dir, path).is_some_and(|c| c == path)
        || home_relative(dir).is_some_and(|d| d == path)
}

/// Makes `path` and its missing parents, readable by the user alone; best effort (a home that
/// cannot hold it leaves the tool to say so in the line).
pub fn make_private_dir(path: &Path) {
    use std::os::unix::fs::DirBuilderExt;
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path);
}

/// The effective user's home directory in the password database, when it has an absolute one.
pub fn password_home() -> Option<PathBuf> {
    password_entry_home()
        .ok()
        .flatten()
        .filter(|d| d.is_absolute() && d != Path::new("/nonexistent"))
}

/// The home directory the password database gives the effective user: `Ok(None)` without an
/// entry, the OS error of a failed lookup. Looked up once per process (an NSS lookup reads files
/// and may ask a daemon), for every caller: shellgate's own paths and the homes the sandbox
/// protects cannot come from two lookups that disagree.
pub fn password_entry_home() -> Result<Option<PathBuf>, i32> {
    static ENTRY: std::sync::OnceLock<Result<Option<PathBuf>, i32>> = std::sync::OnceLock::new();
    ENTRY
        .get_or_init(|| {
            crate::sandbox::passwd_home(crate::sandbox::geteuid())
                .map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))
        })
        .clone()
}

/// The config and state directories (those that can be named).
pub fn own_dirs() -> Vec<PathBuf> {
    let own = own();
    own.config_dir.into_iter().chain(own.state_dir).collect()
}

/// The running binary, canonical.
pub fn binary() -> Option<PathBuf> {
    std::fs::canonicalize("/proc/self/exe").ok()
}

/// Whether `path` is one of shellgate's own directories or lies beneath one.
pub fn is_own(path: &Path) -> bool {
    own_dirs().iter().any(|dir| path.starts_with(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_leading_tilde_slash_is_the_home() {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        assert_eq!(home_relative("~/.npm"), home.map(|h| h.join(".npm")));
        assert_eq!(
            home_relative("/srv/cache"),
            Some(PathBuf::from("/srv/cache"))
        );
        assert_eq!(home_relative("~user/x"), Some(PathBuf::from("~user/x")));
    }

    /// Each workspace has its own lines' caches; lines without one share one; any other
    /// directory is read as written.
    #[test]
    fn a_lines_cache_is_the_workspaces_own() {
        let Some(home) = crate::env::get().home() else {
            return;
        };
        let npm = "~/.cache/shellgate-lines/npm";
        let a = grant_dir(npm, Some(Path::new("/w/app"))).unwrap();
        let b = grant_dir(npm, Some(Path::new("/other/app"))).unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with(home.join(".cache/shellgate-lines")));
        assert!(a.file_name().is_some_and(|n| n == "npm"));
        assert!(a.parent().unwrap().to_string_lossy().contains("/app-"));
        assert_eq!(
            grant_dir(npm, None).unwrap(),
            home.join(".cache/shellgate-lines/no-workspace/npm")
        );
        assert_eq!(
            grant_dir("~/.cargo/registry", Some(Path::new("/w/app"))),
            home_relative("~/.cargo/registry")
        );
        assert!(is_cache(npm, &a) && in_cache(npm, &a));
        assert!(in_cache(npm, &a.join("_cacache/x")) && !is_cache(npm, &a.join("_cacache")));
        assert!(!in_cache(npm, a.parent().unwrap()));
        assert!(!in_cache("~/.cache/shellgate-lines/pip", &a));
        assert!(!in_cache(npm, &home.join(".npm")));
        assert!(in_cache("~/.npm", &home.join(".npm/x")) && is_cache("~/.npm", &home.join(".npm")));
    }
}
