//! Credential stores: hidden inside the sandbox behind an empty, read-only view.
//!
//! Landlock cannot deny a read beneath a directory it lets the program read (it only ever
//! grants), so hiding is done in the mount namespace: each store that exists is covered by an
//! empty read-only directory or file. A line that only reads then cannot print a private key,
//! whatever path it names it by in this tree — `~/.ssh//id_rsa`, `cd ~/.ssh && cat id_rsa`,
//! a glob, or a symlink that leads there (the store is hidden where it really is).
//!
//! The list is relative to each home (`$HOME` and the password database's): the credential stores
//! of [`shellgate_core::policy::secrets::STORES`] (one list for what is hidden and what the policy calls a
//! credential read: cloud providers, code hosting and registries, database clients, Terraform,
//! age/sops keys, model hubs, agents' tokens, browsers, `.env` in the home…) and every copy of
//! one beside it ([`shellgate_core::policy::secrets::is_copy_name`]: `.netrc.bak`, `.env.local`,
//! `#.pgpass#`, `.aws.old`), plus the private files of `~/.ssh`. `[sandbox] hide` /
//! `[sandbox] unhide` in the user config extend and narrow it; `doctor` lists what is hidden on
//! this machine.

use shellgate_core::policy::secrets::{home_stores, is_copy_name};
use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

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
        candidates.extend(stores_in(home));
        candidates.extend(ssh_secrets(&home.join(".ssh")));
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

/// Every store in `home` and every copy of one (of `~/.ssh` too), found by listing each directory that holds
/// stores once and matching its entries by name (a copy's name is not known in advance). Most
/// stores do not exist: a directory is opened only when its parent's listing has its name
/// ([`Listings`]), and one that cannot be listed whole has its stores' own names checked instead.
fn stores_in(home: &Path) -> Vec<PathBuf> {
    let mut by_dir: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for rel in home_stores() {
        let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        by_dir.entry(dir).or_default().push(name);
    }
    let mut listings = Listings::new(home);
    let mut found: Vec<PathBuf> = match listings.of("") {
        Listing::Names(names) => names
            .iter()
            .filter(|n| *n != ".ssh" && is_copy_name(&n.to_string_lossy(), ".ssh"))
            .map(|n| home.join(n))
            .collect(),
        Listing::Absent | Listing::Unreadable => Vec::new(),
    };
    for (dir, names) in by_dir {
        let path = if dir.is_empty() {
            home.to_path_buf()
        } else {
            home.join(dir)
        };
        match listings.of(dir) {
            Listing::Names(entries) => found.extend(
                entries
                    .iter()
                    .filter(|entry| {
                        let entry = entry.to_string_lossy();
                        names.iter().any(|name| is_copy_name(&entry, name))
                    })
                    .map(|entry| path.join(entry)),
            ),
            Listing::Absent => {}
            Listing::Unreadable => found.extend(names.iter().map(|name| path.join(name))),
        }
    }
    found
}

/// The listings of a home's directories (`""` is the home), each made once: a directory whose
/// name is not in its parent's listing is absent without being opened (`~/.config/helm` when
/// `~/.config` has no `helm`); one beneath a directory that cannot be listed is opened.
struct Listings<'a> {
    home: &'a Path,
    made: std::collections::HashMap<String, Listing>,
}

impl<'a> Listings<'a> {
    fn new(home: &'a Path) -> Listings<'a> {
        Listings {
            home,
            made: std::collections::HashMap::new(),
        }
    }

    /// The listing of `dir`, relative to the home (components separated by `/`).
    fn of(&mut self, dir: &str) -> &Listing {
        if !self.made.contains_key(dir) {
            let listing = match dir.rsplit_once('/').unwrap_or(("", dir)) {
                _ if dir.is_empty() => listing(self.home),
                (parent, name) => match self.of(parent) {
                    Listing::Absent => Listing::Absent,
                    Listing::Names(names) if !names.contains(std::ffi::OsStr::new(name)) => {
                        Listing::Absent
                    }
                    Listing::Names(_) | Listing::Unreadable => listing(&self.home.join(dir)),
                },
            };
            self.made.insert(dir.to_owned(), listing);
        }
        &self.made[dir]
    }
}

/// What listing a directory of stores found.
#[derive(Debug)]
enum Listing {
    /// Every name in it.
    Names(HashSet<OsString>),
    /// It is not there (`ENOENT`; `ENOTDIR`: a file where a directory would be): nothing in it
    /// to hide.
    Absent,
    /// It is there but cannot be listed whole (`EACCES` on a directory one may still search; an
    /// entry that fails to read): its stores may exist, and must not look absent.
    Unreadable,
}

fn listing(dir: &Path) -> Listing {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
            return Listing::Absent;
        }
        Err(_) => return Listing::Unreadable,
    };
    entries
        .map(|entry| entry.map(|entry| entry.file_name()))
        .collect::<std::io::Result<_>>()
        .map_or(Listing::Unreadable, Listing::Names)
}

/// The entries of `~/.ssh` that are not known to be public (a copy of `~/.ssh` beside it,
/// `~/.ssh.bak`, is hidden whole: [`stores_in`]).
fn ssh_secrets(ssh: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(ssh) {
        Ok(entries) => entries
            .flatten()
            .filter(|entry| {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                !(SSH_PUBLIC.contains(&name.as_ref()) || name.ends_with(".pub"))
            })
            .map(|entry| entry.path())
            .collect(),
        Err(_) => Vec::new(),
    }
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

    /// The stores issue 25 found readable (terraform, database clients, model hubs, age/sops,
    /// `.env` in the home) and their backup names are hidden; names that only look alike are not.
    #[test]
    fn stores_and_their_copies_are_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let home = fs::canonicalize(dir.path()).unwrap();
        let hidden_files = [
            ".terraformrc",
            ".my.cnf",
            ".mylogin.cnf",
            ".pgpass.orig",
            ".env",
            ".env.local",
            ".env.bak",
            ".envrc",
            ".netrc~",
            "#.netrc#",
            ".cache/huggingface/token",
            ".config/sops/age/keys.txt",
            ".age/key.txt",
            ".cargo/.credentials.toml.swp",
            ".cargo/credentials.toml.old",
            ".aws.bak/credentials",
            ".ssh.old/id_rsa",
            ".config/gh.bak/hosts.yml",
        ];
        let visible = [
            ".envoy",
            ".environment",
            ".netrcx",
            ".cache/huggingface/hub/model.bin",
            ".cargo/config.toml",
            ".terraform.d/plugins/x",
            ".config/ghostty/config",
        ];
        for rel in hidden_files.iter().chain(visible.iter()) {
            let path = home.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, "SHELLGATE-CANARY").unwrap();
        }
        let hidden = hidden_paths(std::slice::from_ref(&home), &[], &[]);
        let covered = |rel: &str| hidden.iter().any(|h| home.join(rel).starts_with(h));
        for rel in hidden_files {
            assert!(covered(rel), "{rel} is not hidden: {hidden:?}");
        }
        for rel in visible {
            assert!(!covered(rel), "{rel} is hidden: {hidden:?}");
        }
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

    /// Only a directory that is not there is taken for one without stores: any other failure to
    /// list it keeps its stores' names, each then looked at on its own.
    #[test]
    fn only_a_directory_that_is_not_there_holds_no_stores() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::write(root.join("file"), "").unwrap();
        assert!(matches!(listing(&root.join("missing")), Listing::Absent));
        assert!(matches!(listing(&root.join("file/x")), Listing::Absent));
        // ENAMETOOLONG: there may be something there.
        assert!(matches!(
            listing(&root.join("x".repeat(300))),
            Listing::Unreadable
        ));
        assert!(matches!(listing(&root), Listing::Names(n) if n.len() == 1));
    }

    /// A directory one may search but not list (`--x`) still has its stores hidden, by name.
    /// (Root lists every directory; the unprivileged run checks the fallback.)
    #[test]
    fn a_store_beneath_a_directory_that_cannot_be_listed_is_hidden() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let home = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir_all(home.join(".config/pip")).unwrap();
        fs::write(home.join(".config/pip/pip.conf"), "token").unwrap();
        fs::set_permissions(home.join(".config/pip"), fs::Permissions::from_mode(0o111)).unwrap();
        let hidden = hidden_paths(std::slice::from_ref(&home), &[], &[]);
        fs::set_permissions(home.join(".config/pip"), fs::Permissions::from_mode(0o755)).unwrap();
        assert!(
            hidden.contains(&home.join(".config/pip/pip.conf")),
            "{hidden:?}"
        );
        // A directory beneath one that cannot be listed is still opened and listed.
        fs::create_dir_all(home.join(".config/gcloud")).unwrap();
        fs::write(home.join(".config/gcloud/credentials.db"), "token").unwrap();
        fs::set_permissions(home.join(".config"), fs::Permissions::from_mode(0o111)).unwrap();
        let hidden = hidden_paths(std::slice::from_ref(&home), &[], &[]);
        fs::set_permissions(home.join(".config"), fs::Permissions::from_mode(0o755)).unwrap();
        assert!(
            hidden
                .iter()
                .any(|h| home.join(".config/gcloud/credentials.db").starts_with(h)),
            "{hidden:?}"
        );
        assert!(
            hidden.contains(&home.join(".config/pip/pip.conf")),
            "{hidden:?}"
        );
    }
}
