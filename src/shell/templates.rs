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
    let hint = crate::shell::stateless::zsh_hint();
    let bash_hint = crate::shell::stateless::bash_hint();
    template
        .replace("@SHELLGATE_BIN@", &quote(binary))
        .replace(
            "@SHELLGATE_BASH_STATEFUL_CHARACTERS@",
            &bash_hint.characters,
        )
        .replace("@SHELLGATE_BASH_OTHER_BUILTINS@", &bash_hint.other_builtins)
        .replace("@SHELLGATE_BASH_STATELESS_SHELL@", &bash_hint.shell)
        .replace("@SHELLGATE_STATEFUL_CHARACTERS@", &hint.characters)
        .replace("@SHELLGATE_PURE_BUILTINS@", &hint.pure_builtins)
        .replace("@SHELLGATE_STATELESS_SHELL@", &hint.shell)
        .replace(
            "@SHELLGATE_REPO_ROOT@",
            crate::shell::prompt_path::REPO_ROOT_FUNCTION.trim_end(),
        )
        .replace(
            "@SHELLGATE_BASH_SHAPE@",
            crate::shell::shape::BASH_QUICK_SHAPE.trim_end(),
        )
        .replace(
            "@SHELLGATE_BASH_DUMP@",
            crate::shell::state::bash::DUMP_FUNCTION.trim_end(),
        )
        .replace(
            "@SHELLGATE_ZSH_DUMP@",
            crate::shell::state::zsh::DUMP_FUNCTION.trim_end(),
        )
}

/// The mark at the end of every startup line shellgate gives (`install.sh --uninstall` removes
/// the lines that carry it).
pub const STARTUP_MARK: &str = "# shellgate";

/// The line for a startup file (`~/.bashrc`, `~/.zshrc`, `~/.zshenv`) that loads the hook from
/// the binary at `binary`: an absolute path, or `$HOME/…`. The line names the binary by its path,
/// never through `PATH`: a login shell on stock Debian and Ubuntu reads `~/.bashrc` before
/// `~/.profile` puts `~/.local/bin` on `PATH`, and zsh never reads `~/.profile`.
///
/// When the binary is missing, the line does not run the shell unhooked: an agent's shell (not
/// interactive) exits 127; an interactive shell asks the person on the terminal before each line
/// whether to run it ungated (no terminal, or no yes: the line does not run), so they can repair
/// the setup or leave. `None` for PowerShell (its profile line is in the README), and for a path
/// that is not plain enough to be written into the line's quotes.
pub fn startup_line(shell: HookShell, binary: &str) -> Option<String> {
    let plain = |text: &str| {
        text.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._+-".contains(&b))
    };
    let path_ok = match binary.strip_prefix("$HOME/") {
        Some(rest) => plain(rest),
        None => binary.starts_with('/') && plain(binary),
    };
    if !path_ok {
        return None;
    }
    let missing = format!("shellgate is not installed at {binary}: this shell is not gated");
    let fallback = match shell {
        HookShell::Bash => format!(
            "shellgate_missing() {{ local a; echo \"{missing}\" >&2; read -rp \"Run this line without it? [y/N] \" a </dev/tty && [[ $a == [yY]* ]] || kill -INT $$; }}; [[ $- == *i* ]] && PS0=\"\\$(shellgate_missing)\" || exit 127"
        ),
        HookShell::Zsh => format!(
            "shellgate_missing() {{ local a; print -u2 \"{missing}\"; read -q \"a?Run this line without it? [y/N] \" </dev/tty; print -u2; [[ $a == y ]] || kill -INT $$ }}; preexec_functions=(${{preexec_functions:#shellgate_missing}} shellgate_missing); [[ -o interactive ]] || exit 127"
        ),
        HookShell::Powershell => return None,
    };
    let name = match shell {
        HookShell::Bash => "bash",
        _ => "zsh",
    };
    Some(format!(
        "eval \"$(\"{binary}\" init {name} 2>/dev/null || echo '{fallback}')\"  {STARTUP_MARK}"
    ))
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
