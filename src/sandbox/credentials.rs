//! Credential stores: hidden inside the sandbox behind an empty, read-only view.
//!
//! Landlock cannot deny a read beneath a directory it lets the program read (it only ever
//! grants), so hiding is done in the mount namespace: each store that exists is covered by an
//! empty read-only directory or file. A line that only reads then cannot print a private key,
//! whatever path it names it by in this tree — `~/.ssh//id_rsa`, `cd ~/.ssh && cat id_rsa`,
//! a glob, or a symlink that leads there (the store is hidden where it really is).
//!
//! The list is relative to each home (`$HOME` and the password database's), extended and
//! narrowed by `[sandbox] hide` / `[sandbox] unhide` in the user config; `doctor` lists what is
//! hidden on this machine.

use std::path::{Path, PathBuf};

/// Stores hidden whole, relative to a home.
pub const HIDDEN: [&str; 37] = [
    ".aws",
    ".gnupg",
    ".config/gh",
    ".config/hub",
    ".kube",
    ".docker/config.json",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".config/gcloud",
    ".azure",
    ".oci",
    ".config/doctl",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".password-store",
    ".local/share/keyrings",
    ".pki",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    // Coding agents' own sign-in tokens.
    ".codex/auth.json",
    ".claude/.credentials.json",
    ".config/claude/.credentials.json",
    ".gemini/oauth_creds.json",
    ".config/github-copilot",
    ".config/op",
    ".config/rclone",
    ".s3cfg",
    ".boto",
];

/// In `~/.ssh`, what is not secret and what ssh needs to connect: everything else there (the
/// private keys, whatever their names) is hidden.
const SSH_PUBLIC: [&str; 4] = [
    "config",
    "known_hosts",
    "known_hosts.old",
    "authorized_keys",
];

/// What to hide, for the given homes and the config's additions and exceptions. Only paths that
/// exist are returned, canonical (a store reached through a symlink is hidden where it is).
pub fn hidden_paths(homes: &[PathBuf], extra: &[PathBuf], unhide: &[PathBuf]) -> Vec<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    for home in homes {
        // Most stores do not exist: one listing of the home rules out those whose first
        // component is not there, without a lookup each (a home that cannot be listed is
        // checked store by store).
        let top = top_level_names(home);
        let present = |rel: &str| {
            let first = rel.split_once('/').map_or(rel, |(first, _)| first);
            top.as_ref()
                .is_none_or(|names| names.contains(std::ffi::OsStr::new(first)))
        };
        candidates.extend(
            HIDDEN
                .iter()
                .filter(|rel| present(rel))
                .map(|rel| home.join(rel)),
        );
        if present(".ssh") {
            candidates.extend(ssh_secrets(&home.join(".ssh")));
        }
    }
    candidates.extend(extra.iter().cloned());
    let unhidden: Vec<PathBuf> = unhide
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    let mut hidden: Vec<PathBuf> = Vec::new();
    for candidate in candidates {
        // One lstat says whether it exists, before the resolution of every component.
        if std::fs::symlink_metadata(&candidate).is_err() {
            continue;
        }
        let Ok(real) = std::fs::canonicalize(&candidate) else {
            continue;
        };
        if unhidden.iter().any(|u| real.starts_with(u)) || hidden.contains(&real) {
            continue;
        }
        hidden.push(real);
    }
    // A store inside another hidden one is hidden with it.
    let all = hidden.clone();
    hidden.retain(|p| !all.iter().any(|q| q != p && p.starts_with(q)));
    hidden.sort();
    hidden
}

/// The names in `dir`, or `None` when it cannot be listed whole (an entry that fails to read
/// must not make a store look absent).
fn top_level_names(dir: &Path) -> Option<std::collections::HashSet<std::ffi::OsString>> {
    std::fs::read_dir(dir)
        .ok()?
        .map(|entry| entry.map(|entry| entry.file_name()))
        .collect::<std::io::Result<_>>()
        .ok()
}

/// The entries of `~/.ssh` that are not known to be public.
fn ssh_secrets(ssh: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(ssh) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            !(SSH_PUBLIC.contains(&name.as_ref()) || name.ends_with(".pub"))
        })
        .map(|entry| entry.path())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn hides_private_keys_and_stores_but_not_public_ssh_files() {
        let dir = tempfile::tempdir().unwrap();
        let home = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(home.join(".ssh")).unwrap();
        for name in [
            "id_ed25519",
            "id_ed25519.pub",
            "known_hosts",
            "config",
            "work.pem",
        ] {
            fs::write(home.join(".ssh").join(name), "x").unwrap();
        }
        fs::create_dir_all(home.join(".aws")).unwrap();
        fs::create_dir_all(home.join(".codex")).unwrap();
        fs::write(home.join(".codex/auth.json"), "{}").unwrap();
        fs::write(home.join(".codex/config.toml"), "").unwrap();
        let hidden = hidden_paths(std::slice::from_ref(&home), &[], &[]);
        for secret in [
            ".ssh/id_ed25519",
            ".ssh/work.pem",
            ".aws",
            ".codex/auth.json",
        ] {
            assert!(hidden.contains(&home.join(secret)), "{secret}: {hidden:?}");
        }
        for public in [
            ".ssh/id_ed25519.pub",
            ".ssh/known_hosts",
            ".ssh/config",
            ".codex",
        ] {
            assert!(!hidden.contains(&home.join(public)), "{public}");
        }
        let unhidden = hidden_paths(std::slice::from_ref(&home), &[], &[home.join(".aws")]);
        assert!(!unhidden.contains(&home.join(".aws")));
    }

    #[test]
    fn a_symlinked_store_is_hidden_where_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let (home, real) = (root.join("home"), root.join("vault/aws"));
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&real).unwrap();
        std::os::unix::fs::symlink(&real, home.join(".aws")).unwrap();
        assert_eq!(hidden_paths(&[home], &[], &[]), vec![real]);
    }
}
