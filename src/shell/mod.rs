//! Shell integration: the hook templates (`shell/` in the repository, embedded here), the parser of
//! bash/zsh/pwsh command-line arguments used by the shell entry point, and locating the real shells.

pub mod entry;
pub mod function;
pub mod in_shell;
pub mod setup;
pub mod shape;
pub mod state;
pub mod templates;

use crate::parse::ShellKind;
use std::path::PathBuf;

/// Environment variable that marks a process tree as running inside a line shellgate already
/// decided: hooks and the shell entry point let shells inside it run without a second gate (the
/// line was judged as a whole and runs in its sandbox). A line cannot set it: assignments to
/// `SHELLGATE_*` are hook state or make the line opaque, so neither is allowed by rules alone.
pub const ACTIVE_ENV: &str = "SHELLGATE_ACTIVE";

/// shellgate's own environment variables begin with this; a line's change to one is never applied
/// to the interactive shell.
pub const SHELLGATE_VAR_PREFIX: &str = "SHELLGATE_";

/// Environment variable naming `wrap`'s private directory (hook files, the real shells).
pub const WRAP_DIR_ENV: &str = "SHELLGATE_WRAP_DIR";

/// Environment variables through which `wrap` hands the shell entry point the real shells, which it
/// has hidden behind the entry point at their usual paths.
pub fn real_shell_env(kind: ShellKind) -> &'static str {
    match kind {
        ShellKind::Bash => "SHELLGATE_REAL_BASH",
        ShellKind::Zsh => "SHELLGATE_REAL_ZSH",
        ShellKind::Sh => "SHELLGATE_REAL_SH",
        ShellKind::Pwsh => "SHELLGATE_REAL_PWSH",
    }
}

/// The real shell binary that runs a line of `kind`: the one `wrap` named, else the first of the
/// usual locations that exists.
pub fn real_shell(kind: ShellKind) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(real_shell_env(kind)).map(PathBuf::from)
        && path.is_absolute()
        && path.is_file()
    {
        return Some(path);
    }
    let candidates: &[&str] = match kind {
        ShellKind::Bash => &["/usr/bin/bash", "/bin/bash", "/usr/local/bin/bash"],
        ShellKind::Zsh => &["/usr/bin/zsh", "/bin/zsh", "/usr/local/bin/zsh"],
        ShellKind::Sh => &["/usr/bin/sh", "/bin/sh"],
        ShellKind::Pwsh => &[
            "/usr/bin/pwsh",
            "/usr/local/bin/pwsh",
            "/opt/microsoft/powershell/7/pwsh",
        ],
    };
    candidates.iter().map(PathBuf::from).find(|p| p.is_file())
}
