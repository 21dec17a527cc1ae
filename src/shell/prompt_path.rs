//! The programs a hooked shell runs unasked come from directories no sandboxed line can write.
//!
//! Between two typed lines the person's shell runs code nobody judges: the prompt command, the
//! prompt string's command substitutions (`__git_ps1` runs `git`), zsh's precmd functions
//! (`vcs_info`), completion functions. They find their programs on `PATH`, and a `PATH` may hold
//! a directory lines write: a virtual environment's `bin` (`source .venv/bin/activate` puts it
//! first), `node_modules/.bin`, `.` or another relative entry. A line in the sandbox — or a
//! contained agent, whose workspace is the same, or a background job still running — could put a
//! `git` there, and the next prompt would run it with the person's rights (seen: a planted
//! `.venv/bin/git` ran at the next prompt and wrote into the home).
//!
//! So while the prompt is up, `PATH` holds the same directories with every one that lines may
//! write moved to the end, in their order: first the directories lines cannot write (in their
//! order), then those they can (`spec::writable_by_lines`: a temp dir, or inside the workspace a
//! line there would get), relative entries, and entries that do not exist yet (a line may create
//! one). A name that any directory lines cannot write has is found there, whatever appears in the
//! others and whenever — there is no window between a check and a use; a name only those have
//! (`pytest` from a venv) is still found, and still completes. The hook sets this `PATH` before
//! every prompt (its precmd runs first) and puts the person's back when a line is entered, so
//! what the person types finds its programs as their `PATH` says (and runs in the sandbox, or is
//! checked by `gate::outside` before it runs outside). It is computed again when `PATH` changes,
//! when a missing entry appears, and, with a relative entry, when the directory changes.
//!
//! Not covered: a directory that becomes writable by lines without a change the hook sees (a
//! `git init` above `~/bin`), a program run by its full path, and what such a program runs later.

use crate::config::SandboxSettings;
use crate::shell::state::quote;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The prompt's `PATH` for a shell whose `PATH` is `path`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PromptPath {
    /// The same entries, those lines cannot write first.
    pub path: OsString,
    /// Entries that do not exist now (watched: one that appears makes the hook compute again).
    pub missing: Vec<PathBuf>,
    /// Whether an entry is relative (it then depends on the directory).
    pub relative: bool,
}

/// Orders `path` for the prompt (see the module's documentation).
pub fn prompt_path(path: &OsStr, settings: &SandboxSettings) -> PromptPath {
    let mut safe: Vec<PathBuf> = Vec::new();
    let mut last: Vec<PathBuf> = Vec::new();
    let mut prompt = PromptPath::default();
    for entry in std::env::split_paths(path) {
        if crate::spec::path_entry_safe(&entry, settings) {
            safe.push(entry);
            continue;
        }
        if !entry.is_absolute() {
            prompt.relative = true;
        } else if !entry.exists() {
            prompt.missing.push(entry.clone());
        }
        last.push(entry);
    }
    let mut ordered = OsString::new();
    for (i, entry) in safe.iter().chain(&last).enumerate() {
        if i > 0 {
            ordered.push(":");
        }
        ordered.push(entry);
    }
    prompt.path = ordered;
    prompt
}

/// The shell code that records it for the hook: the prompt's `PATH`, the `PATH` and (with a
/// relative entry) the directory it was computed for, and the missing entries to watch.
pub fn render(prompt: &PromptPath, path: &OsStr, cwd: &Path) -> String {
    let text = |value: &OsStr| quote(&String::from_utf8_lossy(value.as_bytes()));
    let missing: Vec<String> = prompt.missing.iter().map(|d| text(d.as_os_str())).collect();
    format!(
        "__shellgate_prompt_path={}\n__shellgate_prompt_for={}\n__shellgate_prompt_pwd={}\n\
         __shellgate_prompt_missing=({})\n",
        text(&prompt.path),
        text(path),
        if prompt.relative {
            text(cwd.as_os_str())
        } else {
            "''".to_owned()
        },
        missing.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_lines_may_write_go_last() {
        let planted = tempfile::tempdir_in("/tmp").unwrap();
        let dir = planted.path().to_str().unwrap();
        let path = format!("{dir}:/usr/bin:bin:/no/such/dir:/bin");
        let prompt = prompt_path(OsStr::new(&path), &SandboxSettings::default());
        assert_eq!(
            prompt.path,
            OsString::from(format!("/usr/bin:/bin:{dir}:bin:/no/such/dir"))
        );
        assert_eq!(prompt.missing, vec![PathBuf::from("/no/such/dir")]);
        assert!(prompt.relative);
        let code = render(&prompt, OsStr::new(&path), Path::new("/w"));
        assert!(code.contains("__shellgate_prompt_pwd='/w'"), "{code}");
        assert!(
            code.contains("__shellgate_prompt_missing=('/no/such/dir')"),
            "{code}"
        );
    }

    #[test]
    fn a_path_of_safe_directories_is_kept_as_it_is() {
        let prompt = prompt_path(
            OsStr::new("/usr/local/bin:/usr/bin:/bin"),
            &SandboxSettings::default(),
        );
        assert_eq!(prompt.path, OsString::from("/usr/local/bin:/usr/bin:/bin"));
        assert!(prompt.missing.is_empty() && !prompt.relative);
        let code = render(
            &prompt,
            OsStr::new("/usr/local/bin:/usr/bin:/bin"),
            Path::new("/"),
        );
        assert!(code.contains("__shellgate_prompt_pwd=''"), "{code}");
    }
}
