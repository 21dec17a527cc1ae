//! Shell integration: the hook templates (`shell/` in the repository, embedded here), the parser of
//! bash/zsh/pwsh command-line arguments used by the shell entry point, and locating the real shells.

pub mod channel;
pub mod function;
pub mod in_shell;
pub mod prompt_path;
pub mod setup;
pub mod shape;
pub mod state;
pub mod stateless;
pub mod templates;

use crate::parse::ShellKind;
use std::path::PathBuf;

/// See [`crate::own_env`], where every one of shellgate's variables is listed with its trust.
pub use crate::own_env::ACTIVE_ENV;

/// See [`crate::own_env`].
pub use crate::own_env::PREFIX as SHELLGATE_VAR_PREFIX;

/// See [`crate::own_env`], where every one of shellgate's variables is listed with its trust.
pub use crate::own_env::WRAP_DIR_ENV;

/// See [`crate::own_env`].
pub use crate::own_env::real_shell_env;

/// The door's choice of the shell for a line of `kind` from `origin`: the real shell that runs it
/// and, for a hooked shell's line, the judgement of which lines that shell runs itself.
pub fn side<'a>(kind: ShellKind, origin: crate::gate::Origin) -> crate::gate::ShellSide<'a> {
    let in_shell: crate::gate::InShell = in_shell::may_run_in_shell;
    crate::gate::ShellSide {
        program: real_shell(kind),
        in_shell: (origin == crate::gate::Origin::Hook).then_some(in_shell),
        ..crate::gate::ShellSide::default()
    }
}

/// The real shell binary that runs a line of `kind`: the one `wrap` named, else the first of the
/// usual locations that exists.
pub fn real_shell(kind: ShellKind) -> Option<PathBuf> {
    if let Some(path) = crate::env::get().real_shell(kind).cloned()
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
