//! `shellgate init bash|zsh|powershell`: the hook templates, with this binary's path and a fresh
//! session id filled in.

use crate::parse::{ShellKind, posix_quote};

const BASH: &str = include_str!("../../shell/bash.sh");
const ZSH: &str = include_str!("../../shell/zsh.zsh");
const POWERSHELL: &str = include_str!("../../shell/powershell.ps1");

/// The shells `init` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookShell {
    Bash,
    Zsh,
    Powershell,
}

impl HookShell {
    pub fn kind(self) -> ShellKind {
        match self {
            HookShell::Bash => ShellKind::Bash,
            HookShell::Zsh => ShellKind::Zsh,
            HookShell::Powershell => ShellKind::Pwsh,
        }
    }
}

/// The hook for `shell`, with `binary` filled in, quoted for that shell. (The session id is made
/// when the hook loads, so a hook saved to a file and sourced by many shells still gives each
/// interactive shell its own session.)
pub fn render(shell: HookShell, binary: &str) -> String {
    let (template, quote): (&str, fn(&str) -> String) = match shell {
        HookShell::Bash => (BASH, posix_quote),
        HookShell::Zsh => (ZSH, posix_quote),
        HookShell::Powershell => (POWERSHELL, pwsh_inner),
    };
    template
        .replace("@SHELLGATE_BIN@", &quote(binary))
        .replace(
            "@SHELLGATE_BASH_DUMP@",
            crate::shell::state::bash::DUMP_FUNCTION.trim_end(),
        )
        .replace(
            "@SHELLGATE_ZSH_DUMP@",
            crate::shell::state::zsh::DUMP_FUNCTION.trim_end(),
        )
}

/// The inside of a PowerShell single-quoted string (the template supplies the quotes).
fn pwsh_inner(text: &str) -> String {
    text.replace('\'', "''")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_all_replaced() {
        for shell in [HookShell::Bash, HookShell::Zsh, HookShell::Powershell] {
            let out = render(shell, "/opt/it's here/shellgate");
            assert!(!out.contains("@SHELLGATE_"), "{shell:?}");
        }
        assert!(
            render(HookShell::Bash, "/a b/shellgate").contains("__shellgate_bin='/a b/shellgate'")
        );
        assert!(render(HookShell::Powershell, "/it's").contains("'/it''s'"));
    }

    #[test]
    fn powershell_hook_parses() {
        let out = render(HookShell::Powershell, "/usr/local/bin/shellgate");
        assert!(
            crate::parse::is_valid_powershell(&out),
            "the PowerShell hook does not parse"
        );
        assert!(
            !crate::parse::is_valid_powershell("function f { "),
            "the parser check can fail"
        );
    }
}
