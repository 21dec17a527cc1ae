//! A repository's named remotes, and git lines that name one resolved to where it points.
//!
//! `git push origin` says nothing about where it goes; git reads `remote.origin.url` (or
//! `pushurl`) from the repository's config before it connects. The gate reads those settings
//! (the binary's `git_config`; the policy reads no files) and [`resolve`] puts the URL where the name
//! was, as git does, so that the rest of the policy judges the destination: a path on this
//! machine needs no network ([`super::network`]), an HTTPS remote is granted its host by name,
//! an SSH one its port ([`super::needs`]).
//!
//! Why this never widens a grant: the URL comes from the same config git reads, so the grant
//! built from it is what git will use. Where they could differ — a rewrite
//! (`url.<base>.insteadOf`) in another config file, `-c`, `GIT_CONFIG_*`, a branch's own remote —
//! the grant is narrower than what git then does, and the sandbox refuses that part (named, and
//! offered by escalation). A line whose remote cannot be told for sure (`--all`, `-C DIR`, an
//! option whose value could be taken for the remote) is left as written, judged as before.

use crate::parse::Parsed;
use std::collections::BTreeMap;

/// One remote: where it fetches from, and where it pushes to when that differs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remote {
    pub url: Option<String>,
    pub push_url: Option<String>,
}

/// The remotes of the repository a line runs in, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remotes {
    by_name: BTreeMap<String, Remote>,
}

impl Remotes {
    /// The `[remote "NAME"]` sections of a git config file's text (the first `url` and `pushurl`
    /// of each; git uses the first for fetching and pushing). Other sections, includes and
    /// conditions are not followed: what they would change only narrows the grant (above).
    pub fn from_config(text: &str) -> Remotes {
        let mut remotes = Remotes::default();
        let mut current: Option<String> = None;
        for raw in text.lines() {
            let line = raw.trim();
            if line.starts_with('[') {
                current = remote_section(line);
                continue;
            }
            let Some(name) = &current else { continue };
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            let value = config_value(value);
            let remote = remotes.by_name.entry(name.clone()).or_default();
            match key.trim().to_ascii_lowercase().as_str() {
                "url" if remote.url.is_none() => remote.url = Some(value),
                "pushurl" if remote.push_url.is_none() => remote.push_url = Some(value),
                _ => {}
            }
        }
        remotes.by_name.retain(|_, r| r.url.is_some());
        remotes
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// Where each remote pushes to (its `pushurl`, else its `url`).
    pub fn push_urls(&self) -> impl Iterator<Item = &str> {
        self.by_name
            .values()
            .filter_map(|r| r.push_url.as_deref().or(r.url.as_deref()))
    }

    /// Where `name` fetches from, or pushes to.
    fn url_of(&self, name: &str, push: bool) -> Option<&str> {
        let remote = self.by_name.get(name)?;
        let push_url = remote.push_url.as_deref().filter(|_| push);
        push_url.or(remote.url.as_deref())
    }

    /// The remote a command that names none uses: `origin`, else the only one. (A branch may
    /// name another in `branch.<name>.remote`; then the grant is narrower than git's need.)
    fn default_name(&self) -> Option<&str> {
        if self.by_name.contains_key("origin") {
            return Some("origin");
        }
        match self.by_name.keys().collect::<Vec<_>>().as_slice() {
            [only] => Some(only.as_str()),
            _ => None,
        }
    }
}

/// `[remote "NAME"]` → NAME (git's section names are case-insensitive, subsections are not).
fn remote_section(line: &str) -> Option<String> {
    let inner = line.strip_prefix('[')?.strip_suffix(']')?.trim();
    let (section, rest) = inner.split_once(char::is_whitespace)?;
    if !section.eq_ignore_ascii_case("remote") {
        return None;
    }
    let name = rest.trim().strip_prefix('"')?.strip_suffix('"')?;
    (!name.is_empty() && !name.contains(['"', '\\'])).then(|| name.to_owned())
}

/// A config value as git reads a plain one: trimmed, a comment after it dropped, one pair of
/// quotes removed. A value git would unescape otherwise (backslashes) is kept as written; a path
/// or URL that needs them is then taken for neither and stays a network line.
fn config_value(value: &str) -> String {
    let value = value.trim();
    if let Some(quoted) = value.strip_prefix('"') {
        return quoted.split('"').next().unwrap_or_default().to_owned();
    }
    value
        .split([';', '#'])
        .next()
        .unwrap_or_default()
        .trim_end()
        .to_owned()
}

/// git's subcommands that connect to a remote named on the line, or to the default one.
pub const CONNECTING: [&str; 4] = ["fetch", "pull", "push", "ls-remote"];

/// Options of those subcommands whose value is the next word: with one of them the remote's place
/// among the words is not sure, and the line is left as written.
const VALUE_OPTIONS: [&str; 22] = [
    "-o",
    "--push-option",
    "--server-option",
    "--depth",
    "--deepen",
    "--shallow-since",
    "--shallow-exclude",
    "-j",
    "--jobs",
    "--upload-pack",
    "--receive-pack",
    "--exec",
    "--negotiation-tip",
    "--refmap",
    "-s",
    "--strategy",
    "-X",
    "--strategy-option",
    "--recurse-submodules-default",
    "--filter",
    "--sort",
    "--repo",
];

/// Replaces the remote a git command names (or uses by default) with its URL, in each command of
/// `parsed` where that can be told for sure.
///
/// A repository with no remotes at all has nothing to connect to: git takes the word a command
/// names for a path on disk (`git fetch origin`: "'origin' does not appear to be a git
/// repository"), and a command that names none stops before connecting ("No configured push
/// destination"). There the word is spelled as the path git reads it for (`./origin`), and a
/// command that names none gets `.`, the repository itself: neither needs the network, and none is
/// asked for. A URL or `host:path` on the line is left as it is. What could still send git out —
/// a `url.<base>.insteadOf` rewrite of the word in another config file, a branch whose
/// `branch.<name>.remote` is a URL — is then refused by the sandbox, which holds the network, and
/// offered by escalation (the same narrowing as above).
pub fn resolve(parsed: &mut Parsed, remotes: &Remotes) {
    for command in parsed.commands.iter_mut().filter(|c| c.program == "git") {
        let Some((at, url)) = resolution(&command.argv, remotes) else {
            continue;
        };
        match at {
            Place::Replace(i) => command.argv[i] = url,
            Place::Append => command.argv.push(url),
        }
        if command.shapes.len() == command.argv.len() - 1 {
            command.shapes.push(Default::default());
        }
    }
}

/// Where the URL goes among the words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Replace(usize),
    Append,
}

fn resolution(argv: &[String], remotes: &Remotes) -> Option<(Place, String)> {
    // The subcommand must be the first word: `git -C DIR push` runs in another repository.
    let subcommand = argv.first()?.as_str();
    if !CONNECTING.contains(&subcommand) {
        return None;
    }
    let rest = &argv[1..];
    let unsure = rest.iter().any(|w| {
        VALUE_OPTIONS.contains(&w.as_str())
            || matches!(w.as_str(), "--all" | "--multiple" | "--mirror" | "--")
    });
    if unsure {
        return None;
    }
    let push = subcommand == "push";
    let named = rest.iter().position(|w| !w.starts_with('-'));
    if remotes.is_empty() {
        return match named {
            Some(i) if is_a_remote_address(&rest[i]) => None,
            Some(i) if is_a_path(&rest[i]) => None,
            Some(i) => Some((Place::Replace(i + 1), format!("./{}", rest[i]))),
            None => Some((Place::Append, ".".to_owned())),
        };
    }
    match named {
        Some(i) => {
            let url = remotes.url_of(&rest[i], push)?;
            Some((Place::Replace(i + 1), url.to_owned()))
        }
        None => {
            let url = remotes.url_of(remotes.default_name()?, push)?;
            Some((Place::Append, url.to_owned()))
        }
    }
}

/// A URL (`https://…`, `ssh://…`, `file://…`) or git's `[user@]host:path`: where git goes by
/// the word itself, not by a remote's name. A colon before any slash makes the scp form (git's
/// own test; `./a:b` is a path).
fn is_a_remote_address(word: &str) -> bool {
    word.contains("://")
        || word
            .split_once(':')
            .is_some_and(|(host, _)| !host.is_empty() && !host.contains('/'))
}

/// A word git reads as a path already (`/srv/r.git`, `./r`, `../r`, `~/r`, `.`, `..`).
fn is_a_path(word: &str) -> bool {
    ["/", "./", "../", "~/"].iter().any(|p| word.starts_with(p)) || matches!(word, "." | "..")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ShellKind, parse};

    const CONFIG: &str = r#"
[core]
	bare = false
[remote "origin"]
	url = /home/dev/remote.git
	fetch = +refs/heads/*:refs/remotes/origin/*
[remote "hub"]
	url = "https://github.example/team/app.git" ; the main one
	pushurl = git@github.example:team/app.git
[Remote "Odd Name"]
	url = https://odd.example/x
[remote "empty"]
	fetch = +refs/heads/*:refs/remotes/empty/*
"#;

    fn resolved(line: &str) -> Vec<String> {
        let mut parsed = parse(line, ShellKind::Bash);
        resolve(&mut parsed, &Remotes::from_config(CONFIG));
        parsed.commands[0].argv.clone()
    }

    #[test]
    fn a_config_names_its_remotes_and_their_urls() {
        let remotes = Remotes::from_config(CONFIG);
        assert_eq!(
            remotes.url_of("origin", false),
            Some("/home/dev/remote.git")
        );
        assert_eq!(
            remotes.url_of("hub", false),
            Some("https://github.example/team/app.git")
        );
        assert_eq!(
            remotes.url_of("hub", true),
            Some("git@github.example:team/app.git")
        );
        assert_eq!(
            remotes.url_of("Odd Name", false),
            Some("https://odd.example/x")
        );
        // A remote without a URL is no remote to go to.
        assert_eq!(remotes.url_of("empty", false), None);
        assert_eq!(remotes.default_name(), Some("origin"));
    }

    #[test]
    fn a_named_or_default_remote_becomes_its_url() {
        assert_eq!(
            resolved("git push origin main"),
            ["push", "/home/dev/remote.git", "main"]
        );
        assert_eq!(
            resolved("git push -u hub HEAD"),
            ["push", "-u", "git@github.example:team/app.git", "HEAD"]
        );
        assert_eq!(
            resolved("git fetch hub"),
            ["fetch", "https://github.example/team/app.git"]
        );
        assert_eq!(resolved("git pull"), ["pull", "/home/dev/remote.git"]);
        assert_eq!(
            resolved("git push --force-with-lease"),
            ["push", "--force-with-lease", "/home/dev/remote.git"]
        );
    }

    #[test]
    fn what_cannot_be_told_for_sure_stays_as_written() {
        for line in [
            "git push unknown main",
            "git push -o ci.skip origin main",
            "git fetch --all",
            "git -C ../other push origin",
            "git status",
            "git push https://other.example/x.git",
        ] {
            let words: Vec<String> = parse(line, ShellKind::Bash).commands[0].argv.clone();
            assert_eq!(resolved(line), words, "{line}");
        }
    }

    #[test]
    fn a_repository_without_remotes_is_reached_as_a_path() {
        let none = |line: &str| {
            let mut parsed = parse(line, ShellKind::Bash);
            resolve(&mut parsed, &Remotes::default());
            parsed.commands[0].argv.clone()
        };
        assert_eq!(none("git push origin main"), ["push", "./origin", "main"]);
        assert_eq!(none("git fetch origin"), ["fetch", "./origin"]);
        assert_eq!(none("git pull"), ["pull", "."]);
        assert_eq!(none("git push -u"), ["push", "-u", "."]);
        assert_eq!(none("git ls-remote"), ["ls-remote", "."]);
        // Where git goes by the word itself, or what cannot be told for sure: as written.
        for line in [
            "git push https://other.example/x.git main",
            "git push git@host.example:team/app.git",
            "git fetch host.example:repo",
            "git push ../backup.git",
            "git fetch --all",
            "git -C ../other push origin",
            "git clone https://other.example/x.git",
        ] {
            let words: Vec<String> = parse(line, ShellKind::Bash).commands[0].argv.clone();
            assert_eq!(none(line), words, "{line}");
        }
    }
}
