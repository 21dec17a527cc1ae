//! Where a line's package tools fetch from when the person or the project configured it: npm's
//! `registry` (and scoped registries) from `.npmrc` files and `npm_config_registry`, yarn's from
//! `.yarnrc.yml`, pip's and uv's index from their variables and config files, cargo's source
//! replacement and registries from its `.cargo/config.toml` files.
//!
//! As with git's remotes ([`super::remotes`]), the binary reads what the tool reads (the policy
//! reads no files: `src/registries.rs`), and [`resolve`] writes it into the line's commands the way
//! the tool will use it — `npm install` in a project whose `.npmrc` says
//! `registry=https://npm.corp.example/` is judged as `npm install --registry
//! https://npm.corp.example/` — so the rest of the policy grants exactly that host, by name
//! ([`super::needs`]: a registry or index named on the line replaces the public one). A registry
//! the line itself names is left as it is. The line that runs is the one typed; only its judgement
//! sees the configured registry.
//!
//! Why this never widens what a line reaches unseen: the host goes into the grant a person (or a
//! user's rule) approves, shown in the question; an `always` rule holds the hosts it was written
//! with, so a project that later names another registry is asked again. Where the tool would use
//! something else (a setting this does not read, a variable set on the line), the grant is
//! narrower than the tool's need and the proxy refuses the rest, named.

use crate::parse::Parsed;

/// The registries and indexes configured for the line's tools (URLs), as the binary read them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Registries {
    /// npm's `registry` (npm, npx, pnpm, yarn and bun read `.npmrc`).
    pub npm: Option<String>,
    /// npm's scoped registries (`@scope:registry=`), each used beside `npm`'s.
    pub npm_scoped: Vec<String>,
    /// yarn's registry: `npmRegistryServer` of a `.yarnrc.yml` (yarn 2 and later), else npm's.
    pub yarn: Option<String>,
    /// yarn's scoped registries (`npmScopes`), else npm's.
    pub yarn_scoped: Vec<String>,
    /// pip's `index-url`.
    pub pip_index: Option<String>,
    /// pip's `extra-index-url`s.
    pub pip_extra: Vec<String>,
    /// uv's default index (`UV_DEFAULT_INDEX`, `UV_INDEX_URL`).
    pub uv_index: Option<String>,
    /// uv's other indexes (`UV_INDEX`, `UV_EXTRA_INDEX_URL`).
    pub uv_extra: Vec<String>,
    /// cargo's index in place of crates.io's (`[source.crates-io] replace-with` a registry
    /// source: a mirror).
    pub cargo_index: Option<String>,
    /// cargo's other registries (`[registries.NAME] index`), beside it.
    pub cargo_extra: Vec<String>,
    /// crates.io replaced by a source on this machine (`local-registry`, `directory`: what
    /// `cargo vendor` configures): cargo fetches nothing from it.
    pub cargo_local: bool,
}

impl Registries {
    pub fn is_empty(&self) -> bool {
        *self == Registries::default()
    }
}

/// npm's programs, which read `.npmrc`.
const NPM_FAMILY: [&str; 6] = ["npm", "npx", "pnpm", "pnpx", "bun", "bunx"];

/// Which configuration a command fetches with, when it fetches at all (it needs the network, or
/// fetches on demand): only such commands are judged with a configured registry, so that
/// `npm test` or `python3 script.py` is judged — and matched by a user's rule — as typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fetcher {
    Npm,
    /// yarn: its `.yarnrc.yml`, else (yarn 1) npm's configuration.
    Yarn,
    Pip,
    Uv,
    /// cargo: its `.cargo/config.toml` files.
    Cargo,
}

/// The [`Fetcher`] of `command`, or `None`.
pub fn fetcher(command: &crate::parse::Command) -> Option<Fetcher> {
    let program = command.program.as_str();
    let kind = if NPM_FAMILY.contains(&program) {
        Fetcher::Npm
    } else if program == "yarn" {
        Fetcher::Yarn
    } else if matches!(program, "pip" | "pip3") || program.starts_with("python") {
        Fetcher::Pip
    } else if matches!(program, "uv" | "uvx") {
        Fetcher::Uv
    } else if program == "cargo" {
        Fetcher::Cargo
    } else {
        return None;
    };
    let fetches = super::network::needs_network(command).is_some()
        || super::network::fetches_on_demand(command);
    fetches.then_some(kind)
}

/// The options by which a line names the registry or index that replaces the public one.
pub const REPLACING: [&str; 4] = ["--registry", "-i", "--index-url", "--default-index"];

/// Whether `word` is one of [`REPLACING`], alone or with its value glued (`--registry=URL`).
pub fn is_replacing(word: &str) -> bool {
    REPLACING.iter().any(|option| {
        word == *option
            || word
                .strip_prefix(option)
                .is_some_and(|rest| rest.starts_with('=') && option.starts_with("--"))
    })
}

/// Writes the configured registries into each package command of `parsed` that names none itself.
pub fn resolve(parsed: &mut Parsed, registries: &Registries) {
    if registries.is_empty() {
        return;
    }
    for command in parsed.commands.iter_mut() {
        let Some(kind) = fetcher(command) else {
            continue;
        };
        let (main, main_flag, extra, extra_flag): (&Option<String>, &str, &[String], &str) =
            match kind {
                Fetcher::Npm => (
                    &registries.npm,
                    "--registry",
                    &registries.npm_scoped,
                    "--scoped-registry",
                ),
                Fetcher::Yarn => (
                    &registries.yarn,
                    "--registry",
                    &registries.yarn_scoped,
                    "--scoped-registry",
                ),
                Fetcher::Pip => (
                    &registries.pip_index,
                    "--index-url",
                    &registries.pip_extra,
                    "--extra-index-url",
                ),
                Fetcher::Uv => (
                    &registries.uv_index,
                    "--default-index",
                    &registries.uv_extra,
                    "--index",
                ),
                Fetcher::Cargo => (
                    &registries.cargo_index,
                    "--index-url",
                    &registries.cargo_extra,
                    "--extra-index-url",
                ),
            };
        if command.argv.iter().any(|w| is_replacing(w)) {
            continue;
        }
        let mut words: Vec<String> = Vec::new();
        // crates.io vendored on this machine: cargo fetches none of it, as with `--offline`
        // (another registry it fetches from is refused by the sandbox, and named).
        if kind == Fetcher::Cargo && registries.cargo_local && main.is_none() {
            words.push("--offline".to_owned());
        }
        if let Some(url) = main {
            words.push(format!("{main_flag}={url}"));
        }
        words.extend(extra.iter().map(|url| format!("{extra_flag}={url}")));
        for word in words {
            command.argv.push(word);
            if command.shapes.len() == command.argv.len() - 1 {
                command.shapes.push(Default::default());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ShellKind, parse};

    fn resolved(line: &str, registries: &Registries) -> Vec<Vec<String>> {
        let mut parsed = parse(line, ShellKind::Bash);
        resolve(&mut parsed, registries);
        parsed.commands.iter().map(|c| c.argv.clone()).collect()
    }

    #[test]
    fn configured_registries_are_written_into_the_tools_that_read_them() {
        let registries = Registries {
            npm: Some("https://npm.corp.example/".into()),
            npm_scoped: vec!["https://npm.pkg.github.com/".into()],
            pip_index: Some("https://pypi.corp.example/simple".into()),
            ..Registries::default()
        };
        assert_eq!(
            resolved("npm install && pip install x && ls", &registries),
            [
                vec![
                    "install",
                    "--registry=https://npm.corp.example/",
                    "--scoped-registry=https://npm.pkg.github.com/"
                ],
                vec![
                    "install",
                    "x",
                    "--index-url=https://pypi.corp.example/simple"
                ],
                vec![],
            ]
        );
        // A registry the line names itself is what the tool uses: left as it is.
        assert_eq!(
            resolved("npm install --registry=https://other.example/", &registries),
            [vec!["install", "--registry=https://other.example/"]]
        );
        assert_eq!(
            resolved("pip install -i https://other.example/simple x", &registries),
            [vec!["install", "-i", "https://other.example/simple", "x"]]
        );
        // A command that fetches nothing is judged as typed.
        assert_eq!(
            resolved("npm test && python3 script.py", &registries),
            [vec!["test"], vec!["script.py"]]
        );
        // cargo: a mirror in place of crates.io, another registry beside it; crates.io
        // vendored on this machine is judged as offline.
        let cargo = Registries {
            cargo_index: Some("https://mirror.example/".into()),
            cargo_extra: vec!["https://corp.example/".into()],
            ..Registries::default()
        };
        assert_eq!(
            resolved("cargo fetch && cargo fmt", &cargo),
            [
                vec![
                    "fetch",
                    "--index-url=https://mirror.example/",
                    "--extra-index-url=https://corp.example/"
                ],
                vec!["fmt"],
            ]
        );
        let vendored = Registries {
            cargo_local: true,
            ..Registries::default()
        };
        assert_eq!(
            resolved("cargo build", &vendored),
            [vec!["build", "--offline"]]
        );
        // Nothing configured: nothing written.
        assert_eq!(
            resolved("npm install", &Registries::default()),
            [vec!["install"]]
        );
    }
}
