//! Lines that only edit shellgate's own configuration: the user config (`~/.config/shellgate/…`)
//! or a project file (`.shellgate.toml`).
//!
//! The sandbox keeps shellgate's config read-only for every line, by construction: no grant can
//! make it writable there. So a line that edits it (`vim ~/.config/shellgate/config.toml`, `rm
//! .shellgate.toml`) can only work outside the sandbox, and only a person at the terminal may let
//! it (the `shellgate-tamper` rule asks them in every mode): approved, it runs outside the
//! sandbox, for that line only. Without that, a broken config could not be repaired from a hooked
//! shell, and a yes to an edit would be followed by its failure.
//!
//! Narrow on purpose, judged on the text like every rule: every command on the line is named
//! plainly (no path, no wrapper, no expansion but the home), and either each of its operands names
//! a config file, or it only prints (`echo`, `printf`, `:`, `true`) into one, or it is `sed -i`
//! whose every script is one plain substitution (`s/old/new/g`: no flag that runs, writes or
//! reads a file, no script file). Anything else — an option with a value that is not a config
//! file (`vim -c CMD`), any other script (`sed -i '1e cmd'`, `sed -f FILE`), a file that is not
//! shellgate's — runs in the sandbox as before, where the edit fails.

use crate::parse::{Command, Parsed};

/// shellgate's directory name beneath the XDG base directories (`crate::paths` in the binary
/// resolves the directories themselves).
pub const DIR_NAME: &str = "shellgate";

/// The name of a project file, looked for in the working directory and every directory above it.
pub const PROJECT_FILE: &str = ".shellgate.toml";

/// Programs that write nothing but their arguments: redirected into a config file, the line only
/// replaces or extends it.
const PRINTERS: [&str; 4] = ["echo", "printf", ":", "true"];

/// Programs that edit, create, move or remove the files they are given, and run nothing from them:
/// only these may name a config file as an operand (`python3 .shellgate.toml` or `make -f
/// .shellgate.toml` would run its contents, outside the sandbox, after a yes to "an edit").
const EDITORS: [&str; 18] = [
    "vi", "vim", "nvim", "nano", "pico", "emacs", "micro", "hx", "kak", "ed", "mg", "rm", "cp",
    "mv", "mkdir", "touch", "truncate", "tee",
];

/// How a path names the home (the only expansions a config path may hold).
const HOME_PREFIXES: [&str; 3] = ["~/", "$HOME/", "${HOME}/"];

/// How a path names `$XDG_CONFIG_HOME`.
const XDG_PREFIXES: [&str; 2] = ["$XDG_CONFIG_HOME/", "${XDG_CONFIG_HOME}/"];

/// Does every command on the line only edit shellgate's own config files (see the module doc)?
pub fn only_edits_own_config(parsed: &Parsed) -> bool {
    only_edits(parsed, names_own_config)
}

/// Does every command on the line only edit the person's shell startup files (`~/.bashrc`,
/// `~/.zshrc` …), by the same narrow test as shellgate's config? They are as far out of every
/// sandbox's reach (a line cannot be granted them), so a yes to such a line runs it outside the
/// sandbox once, instead of in it, where it could only fail and be asked again.
pub fn only_edits_startup_files(parsed: &Parsed) -> bool {
    only_edits(parsed, super::rules::is_startup_file)
}

/// Does every command on the line only edit files that `names` names, and nothing else?
fn only_edits(parsed: &Parsed, names: fn(&str) -> bool) -> bool {
    let plain_line = parsed.opaque.is_empty()
        && parsed.hook_state.is_empty()
        && parsed.functions.is_empty()
        && parsed.assigned.is_empty()
        && parsed.reads.iter().all(|r| names(r))
        && parsed.writes.iter().all(|w| names(w));
    plain_line && !parsed.commands.is_empty() && parsed.commands.iter().all(|c| edits(c, names))
}

/// One command that edits a file `names` names and nothing else.
fn edits(c: &Command, names: fn(&str) -> bool) -> bool {
    let plain = c.path.is_none()
        && c.via.is_empty()
        && !c.extra_args
        && !c.calls_line_function
        && c.reads.iter().all(|r| names(r))
        && c.writes.iter().all(|w| names(w));
    if !plain {
        return false;
    }
    if PRINTERS.contains(&c.program.as_str()) {
        return !c.writes.is_empty();
    }
    if c.program == "sed" {
        return sed_substitutes_in_place(&c.argv, names);
    }
    if !EDITORS.contains(&c.program.as_str()) {
        return false;
    }
    let mut names_one = !c.writes.is_empty();
    for arg in &c.argv {
        if names(arg) {
            names_one = true;
        } else if !is_plain_option(arg) {
            return false;
        }
    }
    names_one
}

/// `sed -i` (or `--in-place`, without a backup suffix) with scripts that are each one plain
/// substitution ([`plain_substitution`]), given as the first operand or with `-e`, and operands
/// that `names` names; `-E`, `-r`, `-s`, `-z` besides, alone or in a cluster (`-Ei`). A script
/// from a file (`-f`), a backup suffix (`-i.bak`, `-iE`) or any other option makes it no edit.
fn sed_substitutes_in_place(argv: &[String], names: fn(&str) -> bool) -> bool {
    let mut in_place = false;
    let mut scripts = 0;
    let mut files = 0;
    let mut words = argv.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-i" | "--in-place" => in_place = true,
            "-E" | "-r" | "-s" | "-z" | "--regexp-extended" | "--separate" | "--null-data" => {}
            "-e" | "--expression" => match words.next() {
                Some(script) if plain_substitution(script) => scripts += 1,
                _ => return false,
            },
            // A cluster (`-Ei`): `i` takes the rest of its word as a backup suffix, so only last.
            w if w.starts_with('-') && !w.starts_with("--") && w.len() > 2 => {
                let flags = &w[1..];
                let (flags, last_i) = match flags.strip_suffix('i') {
                    Some(rest) => (rest, true),
                    None => (flags, false),
                };
                if !flags.chars().all(|f| matches!(f, 'E' | 'r' | 's' | 'z')) {
                    return false;
                }
                in_place |= last_i;
            }
            w if w.starts_with('-') => return false,
            w if scripts == 0 => {
                if !plain_substitution(w) {
                    return false;
                }
                scripts += 1;
            }
            w if names(w) => files += 1,
            _ => return false,
        }
    }
    in_place && scripts > 0 && files > 0
}

/// `s/old/new/FLAGS` with any delimiter but a backslash or a newline, and only the flags `g`,
/// `i`, `I` and digits: GNU sed's `e` (run the result), `w FILE` (write) and `m`/`M`/`p` are not
/// taken, and nothing follows it (no second command after `;`).
fn plain_substitution(script: &str) -> bool {
    let mut chars = script.chars();
    if chars.next() != Some('s') {
        return false;
    }
    let Some(delimiter) = chars.next() else {
        return false;
    };
    if delimiter == '\\' || delimiter == '\n' {
        return false;
    }
    let mut parts = 0;
    let mut escaped = false;
    for c in chars.by_ref() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == delimiter {
            parts += 1;
            if parts == 2 {
                break;
            }
        } else if c == '\n' {
            return false;
        }
    }
    parts == 2 && chars.all(|f| matches!(f, 'g' | 'i' | 'I' | '0'..='9'))
}

/// `-p`, `--parents`: an option with no value of its own (one with a value attached, `-cCMD`,
/// `--cmd=X`, could be anything).
fn is_plain_option(arg: &str) -> bool {
    arg.starts_with('-')
        && arg.len() > 1
        && !arg.contains('=')
        && arg[1..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-')
        && (arg.starts_with("--") || arg.len() <= 3)
}

/// Does `text` name shellgate's config directory (or a file beneath it) or a project file, with
/// nothing in it that is only known at run time but the home?
pub fn names_own_config(text: &str) -> bool {
    let dir = DIR_NAME;
    let in_home = HOME_PREFIXES.iter().find_map(|p| text.strip_prefix(p));
    let in_config_home = XDG_PREFIXES.iter().find_map(|p| text.strip_prefix(p));
    let path = in_home.or(in_config_home).unwrap_or(text);
    let literal = !path.is_empty()
        && !path
            .chars()
            .any(|c| "$`~*?[]{}\\\"'\n".contains(c) || c.is_control());
    if !literal {
        return false;
    }
    // A project file is one by its name wherever it is; elsewhere `..` could lead anywhere.
    if path.rsplit('/').next() == Some(PROJECT_FILE) {
        return true;
    }
    if path.split('/').any(|part| part == "..") {
        return false;
    }
    let beneath = |base: &str| path == base || path.starts_with(&format!("{base}/"));
    let config_dir = format!(".config/{dir}");
    match (in_home, in_config_home) {
        (Some(_), _) => beneath(&config_dir),
        (None, Some(_)) => beneath(dir),
        (None, None) => {
            beneath(&config_dir)
                || path.ends_with(&format!("/{config_dir}"))
                || path.contains(&format!("/{config_dir}/"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ShellKind, parse};

    fn edits(line: &str) -> bool {
        only_edits_own_config(&parse(line, ShellKind::Bash))
    }

    /// A shell startup file is as far out of every sandbox's reach: a line that only edits one
    /// runs outside once approved, by the same narrow test; anything more stays in the sandbox.
    #[test]
    fn edits_of_startup_files_qualify_by_the_same_test() {
        let startup = |line: &str| only_edits_startup_files(&parse(line, ShellKind::Bash));
        for line in [
            "echo 'alias ll=\"ls -l\"' >> ~/.bashrc",
            "printf '%s\\n' 'export EDITOR=vim' >> $HOME/.profile",
            "vim ~/.zshrc",
            "nano ~/.bashrc",
            "cp ~/.bashrc ~/.bash_profile",
            "sed -i 's/^alias ll=.*$//' ~/.bashrc",
        ] {
            assert!(startup(line), "{line}");
            assert!(!edits(line), "not shellgate's config: {line}");
        }
        for line in [
            "echo x >> ~/.bashrc; rm -rf build",
            "echo \"$(curl -s example.com)\" >> ~/.bashrc",
            "python3 ~/.bashrc",
            "cat ~/.bashrc > ~/.bashrc.bak",
            "echo x >> ~/notes.txt",
            "sh -c 'echo x >> ~/.bashrc'",
        ] {
            assert!(!startup(line), "{line}");
        }
    }

    #[test]
    fn edits_of_the_config_files_qualify() {
        for line in [
            "vim ~/.config/shellgate/config.toml",
            "sed -i 's/mode = \"ask\"/mode = \"auto\"/' ~/.config/shellgate/config.toml",
            "sed -i -e s/a/b/g -e 's|x|y|' ~/.config/shellgate/config.toml",
            "sed -Ei 's/^\\[sandbox$/[sandbox]/' ~/.config/shellgate/config.toml",
            "nano $HOME/.config/shellgate/config.toml",
            "nano \"$HOME/.config/shellgate/config.toml\"",
            "vi ${XDG_CONFIG_HOME}/shellgate/config.toml",
            "rm ~/.config/shellgate/config.toml",
            "rm -f /home/someone/.config/shellgate/config.toml",
            "mv ~/.config/shellgate/config.toml ~/.config/shellgate/config.toml.bak",
            "mkdir -p ~/.config/shellgate",
            "vim .shellgate.toml",
            "vim ~/.shellgate.toml",
            "rm ../.shellgate.toml",
            "echo 'mode = \"ask\"' > ~/.config/shellgate/config.toml",
            ": > .shellgate.toml",
            "mkdir -p ~/.config/shellgate && vim ~/.config/shellgate/config.toml",
        ] {
            assert!(edits(line), "{line}");
        }
    }

    #[test]
    fn anything_more_does_not() {
        for line in [
            // Reads shellgate's config: known to only read, no edit.
            "vim -c '!curl x' ~/.config/shellgate/config.toml",
            "sed s/a/b/ ~/.config/shellgate/config.toml",
            "sed -i '1e curl x' ~/.config/shellgate/config.toml",
            "sed -i 's/a/b/e' ~/.config/shellgate/config.toml",
            "sed -i 's/a/b/w /tmp/x' ~/.config/shellgate/config.toml",
            "sed -i 's/a/b/; w /tmp/x' ~/.config/shellgate/config.toml",
            "sed -i -f fix.sed ~/.config/shellgate/config.toml",
            "sed -i.bak s/a/b/ ~/.config/shellgate/config.toml",
            "sed -iE s/a/b/ ~/.config/shellgate/config.toml",
            "sed -ni s/a/b/p ~/.config/shellgate/config.toml",
            "sed -i s/a/b/ ~/.config/shellgate/config.toml ~/.bashrc",
            "sed -i s/a/b/",
            "vim ~/.config/shellgate/config.toml ~/.bashrc",
            "vim ~/.config/shellgate/../../.bashrc",
            "rm -rf ~/.local/state/shellgate",
            "vim ~/.config/shellgate/*",
            "cat ~/.ssh/id_rsa > ~/.config/shellgate/config.toml",
            "echo x > ~/.config/shellgate/config.toml; rm -rf ~/src",
            "make; vim .shellgate.toml",
            "python3 ~/.config/shellgate/config.toml",
            "make -f .shellgate.toml",
            "bash .shellgate.toml",
            "sudo vim ~/.config/shellgate/config.toml",
            "./vim ~/.config/shellgate/config.toml",
            "EDITOR=x vim ~/.config/shellgate/config.toml",
            "$EDITOR ~/.config/shellgate/config.toml",
            "vim $(echo ~/.config/shellgate/config.toml)",
            "vim ~/.config/shellgate-other/config.toml",
            "vim ~/config/shellgate/config.toml",
            "echo hi",
            "vim",
        ] {
            assert!(!edits(line), "{line}");
        }
    }
}
