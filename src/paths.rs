//! The one place that says where shellgate's own files are: its config directory, its state
//! directory and its binary.
//!
//! The config loader, the audit log, the sandbox (which keeps all three read-only and never makes
//! them a workspace) and the tamper rule all ask here, so a security control cannot drift from
//! where the files really are.
//!
//! The locations come from the environment shellgate was started with (`$XDG_CONFIG_HOME`,
//! `$XDG_STATE_HOME`, else `$HOME/.config`, `$HOME/.local/state`). An interactive hook does not
//! let a line move them: it records the locations in effect when it was loaded (in the startup
//! files, before any gated line) and hands them to `shellgate hook` on every line
//! ([`anchor`]), so `export XDG_CONFIG_HOME=/tmp/x` in the shell changes nothing for shellgate.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// shellgate's directory name beneath the XDG base directories.
pub const DIR_NAME: &str = "shellgate";

/// Where shellgate's files are, resolved once per process.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnPaths {
    /// `$XDG_CONFIG_HOME/shellgate` or `$HOME/.config/shellgate`.
    pub config_dir: Option<PathBuf>,
    /// `$XDG_STATE_HOME/shellgate` or `$HOME/.local/state/shellgate`.
    pub state_dir: Option<PathBuf>,
}

static ANCHORED: OnceLock<OwnPaths> = OnceLock::new();

/// Fixes the locations for this process (the interactive hook's recorded ones). Later calls and
/// the environment are ignored once set.
pub fn anchor(paths: OwnPaths) {
    let _ = ANCHORED.set(paths);
}

/// The locations in effect.
pub fn own() -> OwnPaths {
    if let Some(anchored) = ANCHORED.get() {
        return anchored.clone();
    }
    from_env()
}

/// The locations the environment names.
pub fn from_env() -> OwnPaths {
    let abs = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let home = abs("HOME");
    let base =
        |xdg: &str, fallback: &str| abs(xdg).or_else(|| home.as_ref().map(|h| h.join(fallback)));
    OwnPaths {
        config_dir: base("XDG_CONFIG_HOME", ".config").map(|b| b.join(DIR_NAME)),
        state_dir: base("XDG_STATE_HOME", ".local/state").map(|b| b.join(DIR_NAME)),
    }
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
