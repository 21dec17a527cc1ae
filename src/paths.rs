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
}
