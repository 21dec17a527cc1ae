//! The programs a hooked shell runs unasked come from files no sandboxed line could write.
//!
//! Between two typed lines the person's shell runs code nobody judges: the prompt command, the
//! prompt string's command substitutions (`__git_ps1` runs `git`), zsh's precmd functions
//! (`vcs_info`), completion functions. They find their programs on `PATH`, and a `PATH` may hold
//! a directory lines write: a virtual environment's `bin` (`source .venv/bin/activate` puts it
//! first), `node_modules/.bin`, `.` or a relative entry. A line in the sandbox — or a contained
//! agent, whose workspace is the same — could put a `git` there, and the next prompt would run
//! it with the person's rights (seen: a planted `.venv/bin/git` ran at the next prompt).
//!
//! The hook pins every name found in such a directory, for as long as the prompt is up, to the
//! file the name has in the first directory of `PATH` that lines cannot write (bash `hash -p`,
//! zsh `hash NAME=FILE`), or, when it has none there, to a path that does not exist — the name
//! then fails instead of running a file a line wrote. The pins are set before every prompt (the
//! precmd hook runs first) and cleared when a line is entered, so what the person types still
//! finds its programs as `PATH` says (and runs in the sandbox, or is checked by `gate::outside`
//! before it runs outside). They are computed again before a prompt when `PATH` changes (or, with a
//! relative entry, the directory), when a watched directory changed after the stamp the last
//! computation wrote (a name added or renamed there changes its modification time; a file
//! rewritten in place keeps its name, which is pinned already), or when a missing entry appeared.
//!
//! Not covered: a prompt command that assigns `PATH` itself (bash and zsh drop the pins then, for
//! that prompt), a name planted while a prompt is up (pinned from the next prompt on), a program
//! that runs by its full path, and what a pinned program itself runs later.

use crate::config::SandboxSettings;
use crate::shell::state::quote;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Where a name with no file outside the directories lines write is pinned: nothing runs.
const NOWHERE: &str = "/nonexistent/shellgate-kept-from-the-prompt";

/// What the hook needs to know when to compute the pins again: the directories of `PATH` that
/// lines may write (a new name in one changes its modification time) and the entries of `PATH`
/// that do not exist (one may appear).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Watched {
    pub writable: Vec<PathBuf>,
    pub missing: Vec<PathBuf>,
}

/// The directories of `path` to watch (see [`Watched`]).
pub fn watched(path: &OsStr, cwd: &Path, settings: &SandboxSettings) -> Watched {
    let mut watched = Watched::default();
    for dir in std::env::split_paths(path) {
        let dir = if dir.is_absolute() {
            dir
        } else {
            cwd.join(dir)
        };
        if !dir.exists() {
            watched.missing.push(dir);
        } else if crate::spec::writable_by_lines(&dir, settings).is_some() {
            watched.writable.push(dir);
        }
    }
    watched
}

/// A name and the file it runs while the prompt is up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub name: String,
    pub file: PathBuf,
}

/// The pins for a shell whose `PATH` is `path`, in the directory `cwd` (for relative entries).
pub fn prompt_pins(path: &OsStr, cwd: &Path, settings: &SandboxSettings) -> Vec<Pin> {
    let dirs: Vec<(PathBuf, bool)> = std::env::split_paths(path)
        .map(|dir| {
            let relative = !dir.is_absolute();
            let dir = if relative { cwd.join(&dir) } else { dir };
            let writable = relative || crate::spec::writable_by_lines(&dir, settings).is_some();
            (dir, writable)
        })
        .collect();
    let mut pins: Vec<Pin> = Vec::new();
    for (dir, _) in dirs.iter().filter(|(_, writable)| *writable) {
        for name in executables(dir) {
            if pins.iter().any(|p| p.name == name) {
                continue;
            }
            let file = dirs
                .iter()
                .filter(|(_, writable)| !writable)
                .map(|(safe, _)| safe.join(&name))
                .find(|candidate| is_executable(candidate))
                .unwrap_or_else(|| Path::new(NOWHERE).join(&name));
            pins.push(Pin { name, file });
        }
    }
    pins
}

/// The names of the executable files in `dir` a shell could run by name.
fn executables(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().map(str::to_owned))
        .filter(|name| is_a_command_name(name))
        .filter(|name| is_executable(&dir.join(name)))
        .collect();
    names.sort();
    names
}

/// A name the shell could look up on `PATH` and a `hash` entry can hold.
fn is_a_command_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._+-@%:,".contains(&b))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The shell code that records the pins (the hook's `__shellgate_pins`), with the `PATH` and, when
/// it has a relative entry, the directory they were computed for, and the directories to watch.
pub fn render(pins: &[Pin], watched: &Watched, path: &OsStr, cwd: &Path) -> String {
    let entries: Vec<String> = pins
        .iter()
        .map(|p| quote(&format!("{}={}", p.name, p.file.to_string_lossy())))
        .collect();
    let dirs = |dirs: &[PathBuf]| -> String {
        dirs.iter()
            .map(|d| quote(&d.to_string_lossy()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let relative = std::env::split_paths(path).any(|dir| !dir.is_absolute());
    format!(
        "__shellgate_pins=({})\n__shellgate_pin_dirs=({})\n__shellgate_pin_missing=({})\n\
         __shellgate_pins_for={}\n__shellgate_pins_pwd={}\n",
        entries.join(" "),
        dirs(&watched.writable),
        dirs(&watched.missing),
        quote(&String::from_utf8_lossy(path.as_bytes())),
        quote(&if relative {
            cwd.to_string_lossy().into_owned()
        } else {
            String::new()
        })
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn executable(dir: &Path, name: &str) {
        let file = dir.join(name);
        std::fs::write(&file, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn a_name_in_a_directory_lines_write_is_pinned_to_the_first_safe_file() {
        let planted = tempfile::tempdir_in("/tmp").unwrap();
        executable(planted.path(), "env");
        executable(planted.path(), "only-here");
        std::fs::write(planted.path().join("not-executable"), "").unwrap();
        let mut path = planted.path().as_os_str().to_owned();
        path.push(":/usr/bin:/bin");
        let pins = prompt_pins(&path, Path::new("/"), &SandboxSettings::default());
        assert_eq!(
            pins,
            vec![
                Pin {
                    name: "env".into(),
                    file: PathBuf::from("/usr/bin/env")
                },
                Pin {
                    name: "only-here".into(),
                    file: Path::new(NOWHERE).join("only-here")
                },
            ]
        );
        let watch = watched(&path, Path::new("/"), &SandboxSettings::default());
        assert_eq!(watch.writable, vec![planted.path().canonicalize().unwrap()]);
        let code = render(&pins, &watch, &path, Path::new("/"));
        assert!(code.contains("__shellgate_pin_dirs=('/tmp/"), "{code}");
        assert!(code.contains("'env=/usr/bin/env'"), "{code}");
        assert!(code.contains("__shellgate_pins_pwd=''"), "{code}");
    }

    #[test]
    fn a_path_of_safe_directories_pins_nothing() {
        let pins = prompt_pins(
            OsStr::new("/usr/bin:/bin"),
            Path::new("/"),
            &SandboxSettings::default(),
        );
        assert!(pins.is_empty(), "{pins:?}");
        let watch = watched(
            OsStr::new("/no/such/dir:/usr/bin"),
            Path::new("/"),
            &SandboxSettings::default(),
        );
        assert_eq!(watch.missing, vec![PathBuf::from("/no/such/dir")]);
        assert!(watch.writable.is_empty());
        let code = render(&pins, &watch, OsStr::new(".:/usr/bin"), Path::new("/w"));
        assert!(code.contains("__shellgate_pins_pwd='/w'"), "{code}");
    }
}
