//! `shellgate init bash|zsh|powershell`: the hook templates, with this binary's path and a fresh
//! session id filled in.

use crate::parse::ShellKind;

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

/// The hook for `shell`, with `binary` and `session` filled in, quoted for that shell.
pub fn render(shell: HookShell, binary: &str, session: &str) -> String {
    let (template, quote): (&str, fn(&str) -> String) = match shell {
        HookShell::Bash => (BASH, posix_quote),
        HookShell::Zsh => (ZSH, posix_quote),
        HookShell::Powershell => (POWERSHELL, pwsh_inner),
    };
    template
        .replace("@SHELLGATE_BIN@", &quote(binary))
        .replace("@SHELLGATE_SESSION@", &session_text(session))
}

/// The session id is validated where it is made (a short safe charset); anything else is dropped
/// here too, so the text can sit inside quotes in every template.
fn session_text(session: &str) -> String {
    session
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect()
}

/// `it's` → `'it'\''s'`: one POSIX single-quoted word.
pub fn posix_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
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
            let out = render(shell, "/opt/it's here/shellgate", "abc123");
            assert!(!out.contains("@SHELLGATE_"), "{shell:?}");
            assert!(out.contains("abc123"));
        }
        assert!(
            render(HookShell::Bash, "/a b/shellgate", "s")
                .contains("__shellgate_bin='/a b/shellgate'")
        );
        assert!(render(HookShell::Powershell, "/it's", "s").contains("'/it''s'"));
    }

    #[test]
    fn powershell_hook_parses() {
        let out = render(HookShell::Powershell, "/usr/local/bin/shellgate", "s1");
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
