//! Where the hooks are set up: the startup files that load them (`install.sh --hook` writes the
//! line [`crate::shell::templates::startup_line`] gives, marked with
//! [`crate::shell::templates::STARTUP_MARK`]) and the files `install.sh` puts beside the binary.
//! `shellgate uninstall` removes them again.

use crate::shell::templates::STARTUP_MARK;
use std::path::{Path, PathBuf};

/// The startup files a hook line may be in: `~/.bashrc`, and zsh's `.zshrc` and `.zshenv` (in
/// `$ZDOTDIR` when it is set, else the home).
pub fn startup_files(home: &Path, zdotdir: Option<&Path>) -> Vec<PathBuf> {
    let zdot = zdotdir.unwrap_or(home);
    vec![
        home.join(".bashrc"),
        zdot.join(".zshrc"),
        zdot.join(".zshenv"),
    ]
}

/// Whether `line` is a startup line shellgate gave: it loads a hook (`… init bash|zsh …`) and
/// ends with the mark.
pub fn is_startup_line(line: &str) -> bool {
    line.trim_end().ends_with(&format!("  {STARTUP_MARK}"))
        && (line.contains(" init bash ") || line.contains(" init zsh "))
}

/// `text` without its startup lines, and how many there were.
pub fn without_startup_lines(text: &str) -> (String, usize) {
    let mut removed = 0;
    let mut kept = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if is_startup_line(line) {
            removed += 1;
        } else {
            kept.push_str(line);
        }
    }
    (kept, removed)
}

/// Removes the startup lines from `file` (rewritten in place, so its owner and mode stay); the
/// number removed, 0 for a file that does not exist.
pub fn remove_startup_lines(file: &Path) -> std::io::Result<usize> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let (kept, removed) = without_startup_lines(&text);
    if removed > 0 {
        std::fs::write(file, kept)?;
    }
    Ok(removed)
}

/// What `install.sh` installs for the binary at `binary` (`PREFIX/bin/shellgate`): the binary, and
/// its completions and manual page beneath `PREFIX/share`.
pub fn installed_files(binary: &Path) -> Vec<PathBuf> {
    let mut files = vec![binary.to_path_buf()];
    let prefix = binary
        .parent()
        .filter(|dir| dir.file_name() == Some(std::ffi::OsStr::new("bin")))
        .and_then(Path::parent);
    if let Some(prefix) = prefix {
        let share = prefix.join("share");
        files.push(share.join("bash-completion/completions/shellgate"));
        files.push(share.join("zsh/site-functions/_shellgate"));
        files.push(share.join("man/man1/shellgate.1"));
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::templates::{HookShell, startup_line};

    #[test]
    fn only_the_marked_lines_are_removed() {
        let bash = startup_line(HookShell::Bash, "$HOME/.local/bin/shellgate").unwrap();
        let zsh = startup_line(HookShell::Zsh, "/opt/sg/bin/shellgate").unwrap();
        let text = format!(
            "alias ll='ls -l'\n{bash}\n# shellgate\neval \"$(shellgate init bash)\"\n{zsh}\nexport X=1"
        );
        let (kept, removed) = without_startup_lines(&text);
        assert_eq!(removed, 2);
        assert_eq!(
            kept,
            "alias ll='ls -l'\n# shellgate\neval \"$(shellgate init bash)\"\nexport X=1"
        );
    }

    #[test]
    fn installed_files_are_beside_the_binary() {
        let files = installed_files(Path::new("/home/u/.local/bin/shellgate"));
        assert_eq!(files.len(), 4);
        assert!(files.contains(&PathBuf::from("/home/u/.local/share/man/man1/shellgate.1")));
        assert_eq!(installed_files(Path::new("/x/shellgate")).len(), 1);
    }
}
