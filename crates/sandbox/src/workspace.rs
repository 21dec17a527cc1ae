//! Which directory a line may write: the trusted workspace.
//!
//! A line chooses its working directory with `cd`, so the working directory alone must never decide
//! what is writable: one `cd ~/.config/systemd/user` would otherwise make the next line able to
//! install a service that runs outside every sandbox. The workspace is therefore derived from
//! something a line cannot choose by `cd` alone, in this order:
//!
//! 1. a workspace fixed by the caller (`wrap` anchors it where the agent started; `shellgate
//!    sandbox --workspace DIR`, typed by a person);
//! 2. the git top-level of the working directory;
//! 3. a project root a person configured (`[sandbox] projects`) that contains it.
//!
//! and then checked: it is never `/`, a top-level directory, a system tree, a home (`$HOME` or the
//! password database's) or a parent of one, a directory beneath a home's hidden (dot) directories
//! (where configuration that runs later lives: `~/.config`, `~/.oh-my-zsh`, …), or shellgate's own
//! config and state. When no workspace passes, the line has **no workspace**: it still runs in the
//! sandbox, with only the temp dirs (and configured writable dirs) writable, and [`Workspace::None`]
//! says why, for the person and for `doctor`.

use std::path::{Component, Path, PathBuf};

/// Where the workspace came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// Fixed by the caller (`wrap`'s start directory, `--workspace`).
    Fixed,
    /// The git top-level of the working directory.
    GitTopLevel,
    /// A project root in the configuration.
    Configured,
}

/// The outcome of resolving a line's workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workspace {
    /// This directory (canonical) is writable.
    Writable { root: PathBuf, source: Source },
    /// Nothing but the temp dirs is writable, for this reason.
    None { reason: String },
}

impl Workspace {
    pub fn root(&self) -> Option<&Path> {
        match self {
            Workspace::Writable { root, .. } => Some(root),
            Workspace::None { .. } => None,
        }
    }
}

/// What the resolver needs besides the working directory.
#[derive(Debug, Clone, Default)]
pub struct Anchors<'a> {
    /// The caller's fixed workspace, if any.
    pub fixed: Option<&'a Path>,
    /// `$HOME` and the password database's home (canonical).
    pub homes: &'a [PathBuf],
    /// Configured project roots (canonical).
    pub projects: &'a [PathBuf],
    /// shellgate's own config and state directories (canonical).
    pub own_dirs: &'a [PathBuf],
}

/// Resolves the workspace of a line whose working directory is `cwd` (canonical).
pub fn resolve(cwd: &Path, anchors: &Anchors) -> Workspace {
    let (candidate, source) = match candidate(cwd, anchors) {
        Some(found) => found,
        None => {
            return Workspace::None {
                reason: format!(
                    "{} is not inside a git repository or a configured project root \
                     ([sandbox] projects), so no directory is writable for this line but the \
                     temp dirs",
                    cwd.display()
                ),
            };
        }
    };
    match unsuitable(&candidate, anchors) {
        Some(why) => Workspace::None {
            reason: format!(
                "{} cannot be a writable workspace: {why}; nothing but the temp dirs is \
                 writable for this line",
                candidate.display()
            ),
        },
        None => Workspace::Writable {
            root: candidate,
            source,
        },
    }
}

fn candidate(cwd: &Path, anchors: &Anchors) -> Option<(PathBuf, Source)> {
    if let Some(fixed) = anchors.fixed {
        return Some((fixed.to_path_buf(), Source::Fixed));
    }
    let git = crate::git::toplevel(cwd);
    let project = anchors
        .projects
        .iter()
        .filter(|p| cwd.starts_with(p))
        .max_by_key(|p| p.components().count());
    match (git, project) {
        // A repository inside a configured root is the narrower choice.
        (Some(git), Some(project)) if git.starts_with(project) => Some((git, Source::GitTopLevel)),
        (_, Some(project)) => Some((project.clone(), Source::Configured)),
        (Some(git), None) => Some((git, Source::GitTopLevel)),
        (None, None) => None,
    }
}

/// System trees nothing may be a workspace in (besides `/` and every top-level directory).
const SYSTEM_TREES: [&str; 12] = [
    "/usr", "/etc", "/boot", "/proc", "/sys", "/dev", "/run", "/bin", "/sbin", "/lib", "/lib64",
    "/snap",
];

/// Beneath `/var`, only these may hold workspaces.
const VAR_WORKSPACES: [&str; 2] = ["/var/tmp", "/var/www"];

/// Does `dir` lie beneath one of `home`'s hidden (dot) directories (`~/.config/…`, `~/.local/…`,
/// `~/.ssh`)? Configuration that runs later lives there: no workspace, and no grant, may be
/// there.
pub fn beneath_a_hidden_dir_of(dir: &Path, home: &Path) -> bool {
    dir.strip_prefix(home).is_ok_and(|rest| {
        rest.components()
            .next()
            .is_some_and(|c| c.as_os_str().to_string_lossy().starts_with('.'))
    })
}

/// Why `dir` (canonical) must not be writable, if it must not.
pub fn unsuitable(dir: &Path, anchors: &Anchors) -> Option<String> {
    let depth = dir
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count();
    if depth == 0 {
        return Some("it is / (the whole filesystem)".to_owned());
    }
    if depth == 1 {
        return Some("it is a top-level system directory".to_owned());
    }
    if let Some(tree) = SYSTEM_TREES.iter().find(|t| dir.starts_with(t)) {
        return Some(format!("it lies in the system tree {tree}"));
    }
    if dir.starts_with("/var")
        && !VAR_WORKSPACES
            .iter()
            .any(|v| dir.starts_with(v) && dir != Path::new(v))
    {
        return Some("it lies in /var, where system state lives".to_owned());
    }
    for home in anchors.homes {
        if dir == home {
            return Some(
                "it is a home directory, where shell startup files, ssh keys and \
                         autostart entries live"
                    .to_owned(),
            );
        }
        if home.starts_with(dir) {
            return Some(format!("it contains the home directory {}", home.display()));
        }
        if beneath_a_hidden_dir_of(dir, home) {
            return Some(format!(
                "it lies beneath a hidden directory of the home {} (configuration that runs \
                 later lives there)",
                home.display()
            ));
        }
    }
    for own in anchors.own_dirs {
        if dir.starts_with(own) || own.starts_with(dir) {
            return Some(format!(
                "it holds shellgate's own files ({})",
                own.display()
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn anchors<'a>(homes: &'a [PathBuf], projects: &'a [PathBuf]) -> Anchors<'a> {
        Anchors {
            fixed: None,
            homes,
            projects,
            own_dirs: &[],
        }
    }

    #[test]
    fn git_toplevel_is_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let repo = root.join("src/proj");
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(repo.join("a/b")).unwrap();
        let homes = [root.join("elsewhere")];
        let ws = resolve(&repo.join("a/b"), &anchors(&homes, &[]));
        assert_eq!(
            ws,
            Workspace::Writable {
                root: repo,
                source: Source::GitTopLevel
            }
        );
    }

    #[test]
    fn home_and_its_dot_dirs_are_never_workspaces() {
        let dir = tempfile::tempdir().unwrap();
        let home = fs::canonicalize(dir.path()).unwrap().join("home/me");
        for d in [
            ".git",
            ".config/nvim/.git",
            ".oh-my-zsh/.git",
            "code/p/.git",
        ] {
            fs::create_dir_all(home.join(d)).unwrap();
        }
        let homes = [home.clone()];
        let a = anchors(&homes, &[]);
        // A dotfiles repository at the home itself.
        assert!(matches!(resolve(&home, &a), Workspace::None { .. }));
        assert!(matches!(
            resolve(&home.join(".config/nvim"), &a),
            Workspace::None { .. }
        ));
        assert!(matches!(
            resolve(&home.join(".oh-my-zsh"), &a),
            Workspace::None { .. }
        ));
        assert!(matches!(
            resolve(&home.join("code/p"), &a),
            Workspace::Writable { .. }
        ));
        // A parent of the home.
        assert!(unsuitable(home.parent().unwrap(), &a).is_some());
    }

    #[test]
    fn system_places_are_refused() {
        let a = anchors(&[], &[]);
        for dir in [
            "/",
            "/tmp",
            "/usr/local/src",
            "/etc/x",
            "/var/lib/x",
            "/var/tmp",
        ] {
            assert!(unsuitable(Path::new(dir), &a).is_some(), "{dir}");
        }
        for dir in ["/var/tmp/ws", "/tmp/ws", "/srv/proj", "/opt/proj/x"] {
            assert_eq!(unsuitable(Path::new(dir), &a), None, "{dir}");
        }
    }

    #[test]
    fn no_repository_means_no_workspace_unless_configured() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let notes = root.join("work/notes");
        fs::create_dir_all(&notes).unwrap();
        assert!(matches!(
            resolve(&notes, &anchors(&[], &[])),
            Workspace::None { .. }
        ));
        let projects = [root.join("work")];
        assert_eq!(
            resolve(&notes, &anchors(&[], &projects)),
            Workspace::Writable {
                root: root.join("work"),
                source: Source::Configured
            }
        );
    }
}
