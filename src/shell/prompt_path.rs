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
//! when a missing entry appears, and when the directory changes.
//!
//! The prompt's `git` also reads the repository it finds from the directory, and runs what that
//! repository's configuration names (`core.fsmonitor` on `git status`, a clean filter …). The
//! sandbox guards the git files of a line's own workspace and checks every repository git
//! reaches from it before and after each line (`surface`), but a repository in a temp dir, in a
//! directory `[sandbox] writable` names, or nested in a workspace without being gitlinked is
//! any line's to write (seen: a line ran `git init sub` with a `core.fsmonitor`, and a `git
//! status` in `sub` outside ran it; so did one made by `git init .` where the person was,
//! which the hooks now notice by the repository root they find before each prompt). So while
//! the prompt is up in such a repository
//! ([`untrusted_repository`]: its root lies where lines may write), the hook sets `GIT_DIR` to
//! `/dev/null`: the prompt's `git` finds no repository and reads none of its files, and the
//! person is told once per repository. Enter takes it away again, as it puts `PATH` back: a line
//! the person types reads the repository as always, in the sandbox.
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
        if entry.is_absolute() && !entry.exists() {
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

/// The repository git would read from `cwd` (the first directory from it upwards that holds a
/// `.git`, or is a bare repository itself), when lines may write it: its root is beneath a temp
/// dir or a directory `[sandbox] writable` names, or beneath a workspace a line above it would
/// get (only that workspace's own `.git` is guarded: a repository nested in it is the lines' to
/// write). `None`: no repository, or one whose root no line can write. Git's own search stops
/// where this one does or earlier (`GIT_CEILING_DIRECTORIES`, a file system boundary), so it
/// never finds a repository this one missed.
pub fn untrusted_repository(cwd: &Path, settings: &SandboxSettings) -> Option<PathBuf> {
    let found = cwd.ancestors().find(|dir| holds_repository(dir))?;
    // Judged where it really is: a symlinked directory is the directory it names.
    let Ok(root) = std::fs::canonicalize(found) else {
        return Some(found.to_path_buf());
    };
    let writable =
        |path: &Path| !matches!(crate::spec::writable_by_lines(path, settings), Ok(None));
    // The root, judged by its parent, where a line that made it would have stood.
    let nested = root.parent().is_some_and(writable);
    // Its git directories (a `.git` symlink or `gitdir:` file, a worktree's common dir), which
    // may lie elsewhere: lines may write one unless it is a workspace's own `.git`.
    let elsewhere =
        git_dirs(&root)
            .iter()
            .any(|dir| match crate::spec::writable_by_lines(dir, settings) {
                Ok(None) => false,
                Ok(Some(owner)) => !dir.starts_with(owner.join(".git")),
                Err(_) => true,
            });
    (nested || elsewhere).then_some(root)
}

/// The git directory of the repository rooted at `root` (its `.git` followed, or a `gitdir:`
/// file's target; `root` itself for a bare one) and, for a worktree, its common directory; each
/// canonical. One that cannot be resolved is left out (git reads no files there either).
fn git_dirs(root: &Path) -> Vec<PathBuf> {
    let dot = root.join(".git");
    let git_dir = if dot.is_file() {
        std::fs::read_to_string(&dot).ok().and_then(|text| {
            let target = text.strip_prefix("gitdir:")?.trim();
            std::fs::canonicalize(root.join(target)).ok()
        })
    } else if dot.symlink_metadata().is_ok() {
        std::fs::canonicalize(&dot).ok()
    } else {
        Some(root.to_path_buf())
    };
    let Some(git_dir) = git_dir else {
        return Vec::new();
    };
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .and_then(|text| std::fs::canonicalize(git_dir.join(text.trim())).ok());
    std::iter::once(git_dir).chain(common).collect()
}

/// The hooks' own search for that root before each prompt (`__shellgate_repo_root`, the same
/// test as [`holds_repository`] on the directory as the shell names it): when the root changes,
/// they ask this module again.
pub const REPO_ROOT_FUNCTION: &str = include_str!("../../shell/repo-root.sh");

/// Whether git takes `dir` for a repository's root: a `.git` of any kind in it, or `dir` itself
/// a git directory (`HEAD`, `objects`, `refs`: a bare repository).
fn holds_repository(dir: &Path) -> bool {
    dir.join(".git").symlink_metadata().is_ok()
        || (dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir())
}

/// The shell code that records it for the hook: the prompt's `PATH`, the `PATH` it was computed
/// for, the missing entries to watch, and the repository the prompt must not read from the
/// directory (`''`: none). The hook records the directory itself, as it names it.
pub fn render(prompt: &PromptPath, path: &OsStr, untrusted: Option<&Path>) -> String {
    let text = |value: &OsStr| quote(&String::from_utf8_lossy(value.as_bytes()));
    let missing: Vec<String> = prompt.missing.iter().map(|d| text(d.as_os_str())).collect();
    format!(
        "__shellgate_prompt_path={}\n__shellgate_prompt_for={}\n\
         __shellgate_prompt_missing=({})\n__shellgate_prompt_git={}\n",
        text(&prompt.path),
        text(path),
        missing.join(" "),
        untrusted.map_or_else(|| "''".to_owned(), |root| text(root.as_os_str()))
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
        let code = render(&prompt, OsStr::new(&path), None);
        assert!(code.contains("__shellgate_prompt_git=''"), "{code}");
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
        assert!(prompt.missing.is_empty());
        let code = render(
            &prompt,
            OsStr::new("/usr/local/bin:/usr/bin:/bin"),
            Some(Path::new("/tmp/r")),
        );
        assert!(code.contains("__shellgate_prompt_git='/tmp/r'"), "{code}");
    }

    fn git_init(dir: &Path) {
        let status = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(dir)
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// A repository in a temp dir is the lines' to write, from any directory in it, and a bare
    /// one counts as one; no repository, nothing to leave unread. (A repository nested in a
    /// workspace, and the workspace's own, are tried in a real shell: `hooks::*_sealed_planted_
    /// repository`.)
    #[test]
    fn repositories_lines_may_write_are_not_read_by_the_prompt() {
        let settings = SandboxSettings::default();
        let tmp = tempfile::tempdir_in("/tmp").unwrap();
        let repo = tmp.path().join("repo");
        git_init(&repo);
        std::fs::create_dir_all(repo.join("deep/er")).unwrap();
        assert_eq!(
            untrusted_repository(&repo.join("deep/er"), &settings),
            Some(repo.clone())
        );
        let bare = tmp.path().join("bare.git");
        let status = std::process::Command::new("git")
            .args(["init", "-q", "--bare"])
            .arg(&bare)
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(untrusted_repository(&bare, &settings), Some(bare.clone()));
        let plain = tmp.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        assert_eq!(untrusted_repository(&plain, &settings), None);
        // A directory reached through a symlink is judged, and named, where it really is.
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&repo, &link).unwrap();
        assert_eq!(
            untrusted_repository(&link.join("deep"), &settings),
            Some(std::fs::canonicalize(&repo).unwrap())
        );
    }

    /// A repository whose `.git` is a `gitdir:` file naming a git directory in a temp dir is read
    /// from there: lines may write it, wherever the repository's root is.
    #[test]
    fn a_git_directory_elsewhere_is_found_where_it_is() {
        let tmp = tempfile::tempdir_in("/tmp").unwrap();
        let repo = tmp.path().join("repo");
        git_init(&repo);
        let dirs = git_dirs(&repo);
        assert_eq!(
            dirs,
            vec![std::fs::canonicalize(repo.join(".git")).unwrap()]
        );
        let worktree = tmp.path().join("wt");
        std::fs::create_dir_all(&worktree).unwrap();
        std::fs::write(
            worktree.join(".git"),
            format!("gitdir: {}\n", repo.join(".git").display()),
        )
        .unwrap();
        assert_eq!(git_dirs(&worktree), dirs);
    }
}
