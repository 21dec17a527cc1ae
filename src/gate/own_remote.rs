//! A push a person types into their own remote on this machine runs without a question.
//!
//! `git push` into a repository on this machine outside the workspace needs that repository
//! writable, and [`super::pushes_outside`] asks for it. When the person typed the line and the
//! repository is where their project's own config says to push, the question asks about nothing
//! the person did not already choose — and a person pushes many times a day. The grant is the same
//! one a yes gives (that repository writable; the sandbox keeps its config and hooks read-only,
//! as for every writable root); what this module adds is the argument that nothing but git's push
//! of this line can use it:
//!
//! 1. **The destination is the person's.** It is a push URL of a remote in the config of the
//!    workspace's own repository, where that config is the person's: the one git reads in the
//!    line's directory, a file the sandbox keeps read-only for every line (docs/sandbox.md,
//!    protected paths), in a repository no line can have made (its parent is no directory lines
//!    write: a repository a line makes inside the workspace has a config the line wrote). The
//!    config includes nothing and sets nothing of a remote but where it is and what is fetched
//!    (no `push` refspec, which may force or delete, no `mirror`, no `receivepack` program), so
//!    even a config a line did write could only send a push that neither forces nor deletes. The
//!    destination is a bare repository (its own git dir: not another project's `.git`, whose
//!    worktree would come with it) whose config names no hooks directory or included file (its
//!    hooks are then its own `hooks/`, read-only). An include or a rewrite git would follow makes
//!    git push elsewhere, where the kernel refuses: the grant is narrower, never wider.
//! 2. **The line is only the push.** Typed by the person in a hooked shell; every command a plain
//!    `git push` — no force, delete, mirror, program or option whose value could be a word git
//!    then reads as something else, all words fixed — or a text filter that writes no file and
//!    runs no program; no assignment, wrapper, program path, or name the shell has as an alias
//!    or function; no redirection but to `/dev/null` or a descriptor.
//! 3. **What it runs comes from nowhere a line writes.** Every `PATH` entry is
//!    [`crate::spec::path_entry_safe`], so no program any process of the line looks up by name
//!    can be planted — now, or by a background line while the push runs — and the environment
//!    has no `GIT_*` variable but inert ones (git's directories, config, exec path, ssh and
//!    askpass programs change what it runs) and no `LD_*` one (the loader's libraries).
//! 4. **What git runs on the way comes from nowhere a line writes.** Every item of the
//!    workspace's git surface (`sandbox::surface`: the config files git reads, transitively, and
//!    the hooks directory and its files) is a path the sandbox keeps read-only (the git dir's
//!    `config`, `config.worktree`, `commondir`, `hooks/`) or one no line may write. A hook in the
//!    worktree (husky's `core.hooksPath`) is rewritten back after a line, but a background line
//!    could rewrite it while the push runs: then the push is asked, as before.
//!
//! Anything else, and every push an agent makes, is asked as before; a push to a remote over the
//! network is a network question, unchanged.

use super::*;
use std::os::unix::ffi::OsStrExt;

/// Programs a pushing line may pipe into: they only read their input and files they are named,
/// and neither write a file nor run a program whatever their options.
const READING_FILTERS: [&str; 7] = ["grep", "head", "tail", "wc", "cut", "tr", "cat"];

/// `git push` options that change neither where the push goes nor what it may overwrite, and
/// take no value.
const PLAIN_PUSH_OPTIONS: [&str; 16] = [
    "-q",
    "--quiet",
    "-v",
    "--verbose",
    "--progress",
    "--no-progress",
    "--porcelain",
    "-n",
    "--dry-run",
    "--atomic",
    "--no-atomic",
    "--tags",
    "--follow-tags",
    "--no-follow-tags",
    "--verify",
    "--no-verify",
];

/// Whether every one of `destinations` (where the line's pushes go, canonical) is the person's
/// own remote on this machine and nothing but those pushes can use a grant to write it (see the
/// module's documentation); `false`, the push is asked, whenever that cannot be told.
pub(super) fn own_remote_pushes(
    decision: &Decision,
    ctx: &Context,
    req: &LineRequest,
    shadowed: &[String],
    destinations: &[PathBuf],
) -> bool {
    own_remotes(decision, ctx, req, shadowed, destinations).is_some()
}

fn own_remotes(
    decision: &Decision,
    ctx: &Context,
    req: &LineRequest,
    shadowed: &[String],
    destinations: &[PathBuf],
) -> Option<()> {
    let settings = &ctx.config.sandbox;
    let person = super::typed_by_a_person(ctx, req)
        && matches!(
            ctx.resolved.approval,
            ApprovalPolicy::Ask | ApprovalPolicy::Auto
        );
    if !person
        || decision.decision != Verdict::Allow
        || destinations.is_empty()
        || !only_pushes(decision, shadowed)
        || !clean_environment(req)
        || !safe_path(req, settings)
    {
        return None;
    }
    let root = crate::spec::workspace_of(req.cwd, req.workspace, settings)
        .root()?
        .to_path_buf();
    let layout = crate::sandbox::git_layout(&root).ok()??;
    let remotes = trusted_push_urls(&root, req.cwd, &layout, settings)?;
    // The caller canonicalized them; one it could not is matched by no canonical URL.
    let own = destinations
        .iter()
        .all(|d| remotes.contains(d) && bare_with_own_hooks(d));
    (own && surface_out_of_reach(&root, req.cwd, &layout, settings)).then_some(())
}

/// Every command a plain `git push` or a reading filter, at least one push, with fixed words,
/// by name, not shadowed, writing nothing.
fn only_pushes(decision: &Decision, shadowed: &[String]) -> bool {
    let fixed = |c: &ParsedCommand| {
        c.via.is_empty()
            && c.path.is_none()
            && !c.args_dynamic
            && !c.args_glob
            && !c.extra_args
            && !c.calls_line_function
            && !shadowed.contains(&c.program)
            && c.writes.iter().all(|w| w == "/dev/null")
    };
    let push = |c: &ParsedCommand| c.program == "git" && plain_push(&c.argv);
    let filter = |c: &ParsedCommand| READING_FILTERS.contains(&c.program.as_str());
    decision.assigned.is_empty()
        && decision.opaque.is_empty()
        && decision.commands.iter().any(push)
        && decision
            .commands
            .iter()
            .all(|c| fixed(c) && (push(c) || filter(c)))
}

/// `push`, then only [`PLAIN_PUSH_OPTIONS`], then the destination and refspecs that neither force
/// (`+`) nor delete (`:dst`).
fn plain_push(argv: &[String]) -> bool {
    let Some((first, rest)) = argv.split_first() else {
        return false;
    };
    first == "push"
        && rest.iter().all(|w| {
            if w.starts_with('-') {
                PLAIN_PUSH_OPTIONS.contains(&w.as_str())
            } else {
                !w.starts_with('+') && !w.starts_with(':')
            }
        })
}

/// git's variables that change nothing a push to a path runs or writes: the prompt's settings,
/// the pager and editor (a push runs neither), identities, reading less configuration, and the
/// certificates of HTTPS (a distribution may export `GIT_SSL_CAINFO` for every login).
const INERT_GIT_VARS: [&str; 11] = [
    "GIT_CONFIG_NOSYSTEM",
    "GIT_SSL_CAINFO",
    "GIT_SSL_CAPATH",
    "GIT_SSL_NO_VERIFY",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_TERMINAL_PROMPT",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
];

/// No variable that changes where git looks or what it runs (`GIT_*` but the inert ones:
/// directories, config, exec path, ssh and askpass programs) or what the loader loads (`LD_*`).
fn clean_environment(req: &LineRequest) -> bool {
    let vars = req.env.unwrap_or_else(|| crate::env::get().vars());
    !vars.iter().any(|(name, _)| {
        let bytes = name.as_bytes();
        let inert_git = name
            .to_str()
            .is_some_and(|n| INERT_GIT_VARS.contains(&n) || n.starts_with("GIT_PS1_"));
        (bytes.starts_with(b"GIT_") && !inert_git) || bytes.starts_with(b"LD_")
    })
}

/// Every entry of the line's `PATH` one no line can put a program in.
fn safe_path(req: &LineRequest, settings: &crate::config::SandboxSettings) -> bool {
    let Some(path) = outside::line_path(req) else {
        return false;
    };
    std::env::split_paths(&path).all(|entry| crate::spec::path_entry_safe(&entry, settings))
}

/// `remote.<name>.*` settings that change only where a remote is and what is fetched from it: a
/// remote with any other (`push` refspecs, which may force or delete; `mirror`; `receivepack`,
/// a program) is not pushed to unasked.
const PLAIN_REMOTE_KEYS: [&str; 7] = [
    "url",
    "pushurl",
    "fetch",
    "tagopt",
    "prune",
    "skipdefaultupdate",
    "skipfetchall",
];

/// The push URLs that are paths on this machine of the remotes in the workspace repository's own
/// config, when that config is the person's: the one git reads in `cwd` (not a repository nested
/// in the workspace, whose config a line may have written), kept read-only for every line (in
/// the workspace's git dir) or where no line writes, in a repository that was not made where
/// lines write (the workspace's parent is not writable by lines: a line cannot have run its
/// `git init`); and with no include and no remote setting but [`PLAIN_REMOTE_KEYS`] — so that
/// even a config a line did write (a `wrap` session's fixed workspace, which
/// `spec::writable_by_lines` does not see) could only send a push that neither forces nor
/// deletes.
fn trusted_push_urls(
    root: &Path,
    cwd: &Path,
    layout: &crate::sandbox::GitLayout,
    settings: &crate::config::SandboxSettings,
) -> Option<Vec<PathBuf>> {
    let common = layout.common_dir.as_ref().unwrap_or(&layout.git_dir);
    let config = std::fs::canonicalize(common.join("config")).ok()?;
    let nearest = std::fs::canonicalize(crate::git_config::config_file(cwd)?).ok()?;
    let unwritable =
        |path: &Path| matches!(crate::spec::writable_by_lines(path, settings), Ok(None));
    if nearest != config
        || !(config.starts_with(root) || unwritable(&config))
        || !root.parent().is_some_and(unwritable)
    {
        return None;
    }
    let text = crate::git_config::read_config(&config)?;
    let plain = crate::sandbox::gitconfig::parse(&text).iter().all(|e| {
        !e.is_include() && (e.section != "remote" || PLAIN_REMOTE_KEYS.contains(&e.name.as_str()))
    });
    if !plain {
        return None;
    }
    let remotes = crate::policy::remotes::Remotes::from_config(&text);
    Some(
        remotes
            .push_urls()
            .filter_map(|url| {
                let path = url.strip_prefix("file://").unwrap_or(url);
                Path::new(path)
                    .is_absolute()
                    .then(|| std::fs::canonicalize(path).ok())
                    .flatten()
            })
            .collect(),
    )
}

/// A bare repository (its own git dir, not named `.git`) whose config names no hooks directory and
/// includes no other file.
fn bare_with_own_hooks(repo: &Path) -> bool {
    if !matches!(crate::sandbox::is_git_dir(repo), Ok(true))
        || repo.file_name() == Some(OsStr::new(".git"))
    {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(repo.join("config")) else {
        return false;
    };
    !crate::sandbox::gitconfig::parse(&text)
        .iter()
        .any(|e| e.is_include() || e.is_hooks_path())
}

/// Every item of the git surface of the workspace's repository is kept read-only by the sandbox
/// or lies where no line writes.
fn surface_out_of_reach(
    root: &Path,
    cwd: &Path,
    layout: &crate::sandbox::GitLayout,
    settings: &crate::config::SandboxSettings,
) -> bool {
    use crate::sandbox::surface::{Reach, Surface};
    let Ok(home) = crate::spec::home_env() else {
        return false;
    };
    let surface = Surface::scan(&Reach::line(Some(root), cwd, &home));
    surface
        .items
        .keys()
        .all(|item| kept_read_only(item, root, layout) || crate::spec::beyond_lines(item, settings))
}

/// A path of the workspace's repository that the sandbox binds read-only (or guards) in every
/// line: `.git`, and in the git dir and the common dir `config`, `config.worktree`, `commondir`
/// and `hooks/` with what is in it.
fn kept_read_only(item: &Path, root: &Path, layout: &crate::sandbox::GitLayout) -> bool {
    item == root.join(".git")
        || layout.dirs().iter().any(|dir| {
            item == *dir
                || ["config", "config.worktree", "commondir"]
                    .iter()
                    .any(|name| item == dir.join(name))
                || item.starts_with(dir.join("hooks"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn a_plain_push_neither_forces_nor_deletes_nor_names_a_program() {
        for plain in [
            "push",
            "push -q origin HEAD",
            "push --tags /srv/r.git main:main",
            "push -n -v origin feature/x",
        ] {
            assert!(plain_push(&words(plain)), "{plain}");
        }
        for not in [
            "push --force origin main",
            "push -f origin main",
            "push -fq origin main",
            "push --force-with-lease origin main",
            "push origin +main",
            "push origin :main",
            "push --delete origin main",
            "push -d origin main",
            "push --mirror origin",
            "push --all origin",
            "push --prune origin",
            "push --receive-pack=/tmp/x origin",
            "push --exec /tmp/x origin",
            "push -u origin main",
            "push -o ci.skip origin main",
            "push --recurse-submodules=on-demand origin",
            "fetch origin",
            "",
        ] {
            assert!(!plain_push(&words(not)), "{not}");
        }
    }
}
