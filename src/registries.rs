//! What the decision needs to know of where a line's package tools fetch from: the registries and
//! indexes the person or the project configured ([`crate::policy::registries`]), read where the
//! tools read them. Reading is all this does: nothing here runs npm or pip.
//!
//! - npm (and npx, pnpm, bun, which read the same files): `npm_config_registry` in the
//!   environment (any case, as npm reads it), else the project's `.npmrc` (beside the nearest
//!   `package.json` above the working directory), else the user's (`npm_config_userconfig`, else
//!   `~/.npmrc`); scoped registries (`@scope:registry=`) from all of them.
//! - yarn 2 and later: `YARN_NPM_REGISTRY_SERVER`, else `npmRegistryServer` of the nearest
//!   `.yarnrc.yml` above the working directory that sets it, else the home's; scoped registries
//!   from their `npmScopes` ([`yarnrc_registries`] reads that block-style subset of YAML and
//!   nothing else). Without any `.yarnrc.yml`, yarn 1 reads npm's configuration, as npm's.
//! - pip: `PIP_INDEX_URL` and `PIP_EXTRA_INDEX_URL`, else its config files, the later overriding
//!   the earlier (`/etc/xdg/pip/pip.conf`, `/etc/pip.conf`, `~/.pip/pip.conf`,
//!   `~/.config/pip/pip.conf`, the virtualenv's `pip.conf`; only `PIP_CONFIG_FILE` when set),
//!   `[global]` then `[install]`.
//! - uv: `UV_DEFAULT_INDEX` (or `UV_INDEX_URL`) and `UV_INDEX` (or `UV_EXTRA_INDEX_URL`), then its
//!   config files as uv finds them ([`uv_config_files`]): the project's (the nearest `uv.toml`, or
//!   `pyproject.toml` with a `[tool.uv]` table, above the working directory), the user's
//!   (`uv/uv.toml` in `XDG_CONFIG_HOME` or `~/.config`) and the system's (`/etc/uv/uv.toml`); only
//!   `UV_CONFIG_FILE` when set, none with `UV_NO_CONFIG`. From each, `[[index]]` (the one with
//!   `default = true` replaces PyPI, the others are beside it), `index-url`, `extra-index-url` and
//!   `find-links`; a value in an earlier file wins, lists are joined in that order.
//! - cargo: `.cargo/config.toml` (or `.cargo/config`) in the working directory and each above
//!   it, then the cargo home's ([`cargo_config_files`]); crates.io's source replacement (a
//!   mirror's index, or a vendored directory on this machine: nothing fetched) and the other
//!   registries' indexes ([`read_cargo`]). A registry's download host, which its index's
//!   `config.json` names, is not read: a download from another host than the index's is refused,
//!   named, and offered by escalation.
//!
//! Files are read as git's config is ([`crate::git_config::read_config`]: a regular file, not
//! through a final symlink, without blocking, at most 1 MiB). A value that names a variable
//! (`${NPM_REGISTRY}`) is not expanded and not used. What is not read here (a `.yarnrc.yml`
//! written in YAML's flow style, a variable set on the line itself) only
//! narrows the grant: the proxy refuses the host, named, and escalation offers it.

use crate::env::Env;
use crate::git_config::read_config;
use crate::parse::Command;
use crate::policy::registries::{Fetcher, Registries, fetcher};
use std::path::{Path, PathBuf};

/// The registries configured for the package tools among `commands` that fetch
/// ([`crate::policy::registries::fetcher`]) in `cwd`; `None` when none of them fetches (most
/// lines: nothing is read) or nothing is configured.
pub fn for_commands(commands: &[Command], cwd: &Path, env: &Env) -> Option<Registries> {
    let kinds: Vec<Fetcher> = commands.iter().filter_map(fetcher).collect();
    let mut registries = Registries::default();
    if kinds.contains(&Fetcher::Npm) {
        read_npm(cwd, env, &mut registries);
    }
    if kinds.contains(&Fetcher::Yarn) {
        read_yarn(cwd, env, &mut registries);
    }
    if kinds.contains(&Fetcher::Pip) {
        read_pip(env, &mut registries);
    }
    if kinds.contains(&Fetcher::Uv) {
        read_uv(cwd, env, &mut registries);
    }
    if kinds.contains(&Fetcher::Cargo) {
        read_cargo(cwd, env, &mut registries);
    }
    (!registries.is_empty()).then_some(registries)
}

fn read_npm(cwd: &Path, env: &Env, registries: &mut Registries) {
    let from_env = env
        .vars()
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("npm_config_registry"))
        .and_then(|(_, v)| v.to_str())
        .and_then(usable);
    let project = cwd
        .ancestors()
        .find(|dir| dir.join("package.json").is_file())
        .map(|dir| dir.join(".npmrc"));
    let user = env
        .vars()
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("npm_config_userconfig"))
        .map(|(_, v)| PathBuf::from(v))
        .or_else(|| env.home().map(|h| h.join(".npmrc")));
    let files: Vec<String> = [project, user]
        .into_iter()
        .flatten()
        .filter_map(|f| read_config(&f))
        .collect();
    registries.npm = from_env.or_else(|| {
        files
            .iter()
            .find_map(|text| npmrc_value(text, |key| key == "registry"))
    });
    for text in &files {
        let scoped = npmrc_values(text, |key| {
            key.starts_with('@') && key.ends_with(":registry")
        });
        add_new(&mut registries.npm_scoped, scoped);
    }
}

/// Adds each of `urls` that `list` does not hold yet, in order.
fn add_new(list: &mut Vec<String>, urls: impl IntoIterator<Item = String>) {
    for url in urls {
        if !list.contains(&url) {
            list.push(url);
        }
    }
}

fn read_yarn(cwd: &Path, env: &Env, registries: &mut Registries) {
    let files: Vec<String> = cwd
        .ancestors()
        .map(|dir| dir.join(".yarnrc.yml"))
        .chain(env.home().map(|h| h.join(".yarnrc.yml")))
        .filter_map(|f| read_config(&f))
        .collect();
    if files.is_empty() {
        // yarn 1 (no `.yarnrc.yml`) reads npm's configuration.
        let mut npm = Registries::default();
        read_npm(cwd, env, &mut npm);
        registries.yarn = npm.npm;
        registries.yarn_scoped = npm.npm_scoped;
        return;
    }
    let from_env = env
        .var("YARN_NPM_REGISTRY_SERVER")
        .and_then(|v| v.to_str())
        .and_then(usable);
    let read: Vec<(Option<String>, Vec<String>)> =
        files.iter().map(|t| yarnrc_registries(t)).collect();
    registries.yarn = from_env.or_else(|| read.iter().find_map(|(main, _)| main.clone()));
    add_new(
        &mut registries.yarn_scoped,
        read.into_iter().flat_map(|(_, scoped)| scoped),
    );
}

/// `npmRegistryServer` at the top of a `.yarnrc.yml`, and each `npmRegistryServer` inside its
/// `npmScopes` block, as usable URLs. Block style only (`key: value`, nesting by indentation,
/// `#` comments); anything else is not read, which only narrows the grant.
fn yarnrc_registries(text: &str) -> (Option<String>, Vec<String>) {
    let mut main = None;
    let mut scoped = Vec::new();
    let mut top = "";
    for raw in text.lines() {
        let line = raw.split(" #").next().unwrap_or(raw);
        let content = line.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let Some((key, value)) = content.split_once(':') else {
            continue;
        };
        let key = key.trim().trim_matches(['"', '\'']);
        let value = value.trim().trim_matches(['"', '\'']);
        if !raw.starts_with([' ', '\t']) {
            top = key;
            if key == "npmRegistryServer" {
                main = usable(value);
            }
        } else if top == "npmScopes" && key == "npmRegistryServer" {
            scoped.extend(usable(value));
        }
    }
    (main, scoped)
}

/// The first value of a key `wanted` accepts in an `.npmrc`'s text.
fn npmrc_value(text: &str, wanted: impl Fn(&str) -> bool) -> Option<String> {
    npmrc_values(text, wanted).into_iter().next()
}

/// Every usable value of the keys `wanted` accepts (`key=value` lines; `;` and `#` start
/// comments).
fn npmrc_values(text: &str, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with(';') && !l.starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .filter(|(key, _)| wanted(key.trim()))
        .filter_map(|(_, value)| usable(value.trim().trim_matches('"')))
        .collect()
}

/// Where a configured URL goes, as `scheme://host[:port]/`: no user or password (a registry URL
/// may carry a token, and an `.npmrc` or `pip.conf` in the home is a hidden credential store —
/// what is read here goes into questions, the log and `check --json`), no path. `None` when it
/// names a variable (not expanded here) or is no URL.
fn usable(value: &str) -> Option<String> {
    if value.contains('$') {
        return None;
    }
    let (scheme, rest) = value.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    (!scheme.is_empty() && !host_port.is_empty()).then(|| format!("{scheme}://{host_port}/"))
}

fn read_pip(env: &Env, registries: &mut Registries) {
    let mut index: Option<String> = None;
    let mut extra: Vec<String> = Vec::new();
    let files: Vec<PathBuf> = match env.absolute("PIP_CONFIG_FILE") {
        Some(file) => vec![file],
        None => {
            let home = env.home();
            let xdg = env
                .absolute("XDG_CONFIG_HOME")
                .or_else(|| home.as_ref().map(|h| h.join(".config")));
            [
                Some(PathBuf::from("/etc/xdg/pip/pip.conf")),
                Some(PathBuf::from("/etc/pip.conf")),
                home.map(|h| h.join(".pip/pip.conf")),
                xdg.map(|x| x.join("pip/pip.conf")),
                env.absolute("VIRTUAL_ENV").map(|v| v.join("pip.conf")),
            ]
            .into_iter()
            .flatten()
            .collect()
        }
    };
    for text in files.iter().filter_map(|f| read_config(f)) {
        for section in ["global", "install"] {
            if let Some(url) = ini_value(&text, section, "index-url").and_then(|v| usable(&v)) {
                index = Some(url);
            }
            if let Some(list) = ini_value(&text, section, "extra-index-url") {
                extra = list.split_whitespace().filter_map(usable).collect();
            }
        }
    }
    if let Some(url) = env
        .var("PIP_INDEX_URL")
        .and_then(|v| v.to_str())
        .and_then(usable)
    {
        index = Some(url);
    }
    if let Some(list) = env.var("PIP_EXTRA_INDEX_URL").and_then(|v| v.to_str()) {
        extra = list.split_whitespace().filter_map(usable).collect();
    }
    registries.pip_index = index;
    registries.pip_extra = extra;
}

/// The value of `key` in `[section]` of an ini file's text (pip's config), with its continuation
/// lines (indented) joined by a space.
fn ini_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut current = String::new();
    let mut value: Option<String> = None;
    let mut in_value = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.trim().to_owned();
            in_value = false;
            continue;
        }
        if in_value && raw.starts_with([' ', '\t']) && !line.is_empty() {
            if let Some(v) = value.as_mut() {
                v.push(' ');
                v.push_str(line);
            }
            continue;
        }
        in_value = false;
        let Some((k, v)) = line.split_once(['=', ':']) else {
            continue;
        };
        if current == section && k.trim() == key {
            value = Some(v.trim().to_owned());
            in_value = true;
        }
    }
    value
}

fn read_uv(cwd: &Path, env: &Env, registries: &mut Registries) {
    let text = |name: &str| env.var(name).and_then(|v| v.to_str());
    let mut default = text("UV_DEFAULT_INDEX")
        .or_else(|| text("UV_INDEX_URL"))
        .and_then(usable);
    // `UV_INDEX` entries may be named (`name=URL`).
    let mut extra: Vec<String> = text("UV_INDEX")
        .or_else(|| text("UV_EXTRA_INDEX_URL"))
        .map(|list| {
            list.split_whitespace()
                .map(|e| e.split_once('=').map_or(e, |(_, url)| url))
                .filter_map(usable)
                .collect()
        })
        .unwrap_or_default();
    for table in uv_config_files(cwd, env) {
        let found = uv_indexes(&table);
        default = default.or(found.default);
        add_new(&mut extra, found.extra);
    }
    if let Some(url) = &default {
        extra.retain(|e| e != url);
    }
    registries.uv_index = default;
    registries.uv_extra = extra;
}

/// uv's configuration tables, the first winning: `UV_CONFIG_FILE` alone when set; none with
/// `UV_NO_CONFIG`; else the project's (in the nearest directory above `cwd` with a `uv.toml`, or
/// a `pyproject.toml` holding `[tool.uv]`: a `pyproject.toml` without one is passed over), the
/// user's and the system's. A file that is not valid TOML gives nothing (uv refuses it); a project
/// `uv.toml` that is one still ends the search for the project's, as uv's does.
fn uv_config_files(cwd: &Path, env: &Env) -> Vec<toml::Table> {
    let set = |name: &str| {
        env.var(name)
            .and_then(|v| v.to_str())
            .is_some_and(|v| !v.is_empty() && !matches!(v, "0" | "false"))
    };
    let parse = |path: &Path| -> Option<toml::Table> { read_config(path)?.parse().ok() };
    if let Some(file) = env.absolute("UV_CONFIG_FILE") {
        return parse(&file).into_iter().collect();
    }
    if set("UV_NO_CONFIG") {
        return Vec::new();
    }
    let mut tables = Vec::new();
    for dir in cwd.ancestors() {
        let uv_toml = dir.join("uv.toml");
        if uv_toml.is_file() {
            tables.extend(parse(&uv_toml));
            break;
        }
        let in_pyproject = parse(&dir.join("pyproject.toml"))
            .and_then(|mut t| t.remove("tool"))
            .and_then(|tool| match tool {
                toml::Value::Table(mut tool) => tool.remove("uv"),
                _ => None,
            });
        if let Some(toml::Value::Table(table)) = in_pyproject {
            tables.push(table);
            break;
        }
    }
    let xdg = env
        .absolute("XDG_CONFIG_HOME")
        .or_else(|| env.home().map(|h| h.join(".config")));
    let user = xdg.map(|x| x.join("uv/uv.toml"));
    let system = Some(PathBuf::from("/etc/uv/uv.toml"));
    tables.extend(
        [user, system]
            .into_iter()
            .flatten()
            .filter_map(|f| parse(&f)),
    );
    tables
}

/// The indexes one uv configuration table names.
#[derive(Debug, Default)]
struct UvIndexes {
    /// The index that replaces PyPI: the `[[index]]` with `default = true`, else `index-url`.
    default: Option<String>,
    /// Every other `[[index]]`, `extra-index-url` and `find-links` URL.
    extra: Vec<String>,
}

fn uv_indexes(table: &toml::Table) -> UvIndexes {
    let mut found = UvIndexes::default();
    let strings = |key: &str| -> Vec<String> {
        match table.get(key) {
            Some(toml::Value::Array(items)) => items
                .iter()
                .filter_map(|v| v.as_str())
                .filter_map(usable)
                .collect(),
            Some(toml::Value::String(one)) => usable(one).into_iter().collect(),
            _ => Vec::new(),
        }
    };
    if let Some(toml::Value::Array(indexes)) = table.get("index") {
        for index in indexes.iter().filter_map(|i| i.as_table()) {
            let Some(url) = index.get("url").and_then(|u| u.as_str()).and_then(usable) else {
                continue;
            };
            let is_default = index.get("default").and_then(|d| d.as_bool()) == Some(true);
            if is_default && found.default.is_none() {
                found.default = Some(url);
            } else {
                found.extra.push(url);
            }
        }
    }
    if found.default.is_none() {
        found.default = strings("index-url").into_iter().next();
    }
    found.extra.extend(strings("extra-index-url"));
    found.extra.extend(strings("find-links"));
    found
}

/// cargo's configuration tables, the first winning as cargo merges them: `.cargo/config` (or
/// `.cargo/config.toml`) in `cwd` and each directory above it, then the cargo home's
/// (`CARGO_HOME`, else `~/.cargo`) when it is not one of those. A file that is not valid TOML
/// gives nothing (cargo refuses it).
fn cargo_config_files(cwd: &Path, env: &Env) -> Vec<toml::Table> {
    let home = env
        .absolute("CARGO_HOME")
        .or_else(|| env.home().map(|h| h.join(".cargo")));
    let mut dirs: Vec<PathBuf> = cwd.ancestors().map(|d| d.join(".cargo")).collect();
    if let Some(home) = home
        && !dirs.contains(&home)
    {
        dirs.push(home);
    }
    dirs.iter()
        .filter_map(|dir| {
            // cargo takes the older name when both are there.
            ["config", "config.toml"]
                .iter()
                .find_map(|name| read_config(&dir.join(name)))
        })
        .filter_map(|text| text.parse::<toml::Table>().ok())
        .collect()
}

/// How many `replace-with` steps are followed (a mirror of a mirror); a longer chain, or a loop,
/// is not judged by (cargo refuses a loop).
const REPLACEMENT_STEPS: usize = 4;

/// cargo's source replacement of crates.io (`[source.crates-io] replace-with = "NAME"`, then
/// `[source.NAME]`: `registry = URL`, a `sparse+` URL or a git index's, or `local-registry` /
/// `directory`, which are on this machine) and its other registries (`[registries.NAME] index`).
/// Only what is written in the files: `CARGO_REGISTRIES_*` variables are not read.
fn read_cargo(cwd: &Path, env: &Env, registries: &mut Registries) {
    let tables = cargo_config_files(cwd, env);
    let source = |name: &str| -> Option<&toml::Table> {
        tables
            .iter()
            .find_map(|t| t.get("source")?.as_table()?.get(name)?.as_table())
    };
    let mut name = "crates-io".to_owned();
    for _ in 0..REPLACEMENT_STEPS {
        let Some(next) = source(&name)
            .and_then(|s| s.get("replace-with"))
            .and_then(toml::Value::as_str)
        else {
            break;
        };
        name = next.to_owned();
        let Some(table) = source(&name) else {
            break;
        };
        if table.contains_key("local-registry") || table.contains_key("directory") {
            registries.cargo_local = true;
            break;
        }
        if let Some(url) = table.get("registry").and_then(toml::Value::as_str) {
            registries.cargo_index = cargo_url(url);
            break;
        }
    }
    for table in &tables {
        let named = table.get("registries").and_then(toml::Value::as_table);
        let indexes = named.into_iter().flat_map(|r| r.values()).filter_map(|r| {
            r.get("index")
                .and_then(toml::Value::as_str)
                .and_then(cargo_url)
        });
        add_new(&mut registries.cargo_extra, indexes.collect::<Vec<_>>());
    }
}

/// A cargo index URL as [`usable`] gives it, its protocol prefix (`sparse+`) taken off.
fn cargo_url(url: &str) -> Option<String> {
    usable(url.strip_prefix("sparse+").unwrap_or(url))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::of as env;

    /// What a line's commands read, as the gate asks after its first decision.
    fn for_line(line: &[u8], cwd: &Path, env: &Env) -> Option<Registries> {
        let text = std::str::from_utf8(line).unwrap();
        let parsed = crate::parse::parse(text, crate::parse::ShellKind::Bash);
        for_commands(&parsed.commands, cwd, env)
    }

    /// cargo: the nearest config's source replacement of crates.io wins over the home's; other
    /// registries from all of them; a vendored crates.io is on this machine.
    #[test]
    fn cargo_reads_its_config_files_nearest_first() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("app");
        std::fs::create_dir_all(project.join(".cargo")).unwrap();
        std::fs::create_dir_all(project.join("src")).unwrap();
        let home = dir.path().join("cargo-home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join("config.toml"),
            "[source.crates-io]\nreplace-with = \"mirror\"\n\n[source.mirror]\n\
             registry = \"sparse+https://u:tok@mirror.example/api/index/\"\n\n\
             [registries.corp]\nindex = \"sparse+https://cargo.corp.example/index/\"\n",
        )
        .unwrap();
        let vars = [
            ("CARGO_HOME", home.to_str().unwrap()),
            ("HOME", "/nonexistent"),
        ];
        let found = for_line(b"cargo build", &project.join("src"), &env(&vars)).unwrap();
        assert_eq!(
            found.cargo_index.as_deref(),
            Some("https://mirror.example/")
        );
        assert_eq!(found.cargo_extra, ["https://cargo.corp.example/"]);
        assert!(!found.cargo_local);
        // The project's own config: a mirror of a mirror, then a vendored directory.
        std::fs::write(
            project.join(".cargo/config.toml"),
            "[source.crates-io]\nreplace-with = \"team\"\n\n[source.team]\n\
             replace-with = \"vendored-sources\"\n\n[source.vendored-sources]\n\
             directory = \"vendor\"\n",
        )
        .unwrap();
        let found = for_line(b"cargo fetch", &project, &env(&vars)).unwrap();
        assert!(found.cargo_local);
        assert_eq!(found.cargo_index, None);
        // A line that runs no cargo that fetches reads nothing.
        assert!(for_line(b"cargo fmt", &project, &env(&vars)).is_none());
        // Not valid TOML: nothing from that file.
        std::fs::write(project.join(".cargo/config.toml"), "[source").unwrap();
        let found = for_line(b"cargo fetch", &project, &env(&vars)).unwrap();
        assert_eq!(
            found.cargo_index.as_deref(),
            Some("https://mirror.example/")
        );
    }

    #[test]
    fn npm_reads_the_projects_npmrc_then_the_users() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("app");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::write(project.join("package.json"), "{}").unwrap();
        std::fs::write(
            project.join(".npmrc"),
            "; the team's\nregistry = https://npm.corp.example/\n@gh:registry=https://npm.pkg.github.com/\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(".npmrc"),
            "registry=https://user.example/\n//npm.corp.example/:_authToken=${TOKEN}\n",
        )
        .unwrap();
        let home = dir.path().to_str().unwrap();
        let found = for_line(
            b"npm install",
            &project.join("src"),
            &env(&[("HOME", home)]),
        )
        .unwrap();
        assert_eq!(found.npm.as_deref(), Some("https://npm.corp.example/"));
        assert_eq!(found.npm_scoped, ["https://npm.pkg.github.com/"]);
        // A token in the URL never leaves the file.
        std::fs::write(
            project.join(".npmrc"),
            "registry=https://me:s3cret@npm.corp.example:8443/repo/npm/\n",
        )
        .unwrap();
        let found = for_line(b"npm install", &project, &env(&[("HOME", home)])).unwrap();
        assert_eq!(found.npm.as_deref(), Some("https://npm.corp.example:8443/"));
        // The environment first; a value naming a variable is not used.
        let found = for_line(
            b"npm ci",
            &project,
            &env(&[
                ("HOME", home),
                ("NPM_CONFIG_REGISTRY", "https://env.example/"),
            ]),
        )
        .unwrap();
        assert_eq!(found.npm.as_deref(), Some("https://env.example/"));
        std::fs::write(project.join(".npmrc"), "registry=${REG}\n").unwrap();
        let found = for_line(b"npm ci", &project, &env(&[("HOME", home)])).unwrap();
        assert_eq!(found.npm.as_deref(), Some("https://user.example/"));
        // A line that runs none of the tools reads nothing.
        assert!(for_line(b"ls -la", &project, &env(&[("HOME", home)])).is_none());
    }

    /// yarn 2+: the nearest `.yarnrc.yml`'s `npmRegistryServer` and `npmScopes`; without one,
    /// npm's configuration (yarn 1 reads `.npmrc`). npm itself keeps `.npmrc`'s.
    #[test]
    fn yarn_reads_its_yarnrc_else_npms_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("app");
        std::fs::create_dir_all(project.join("web")).unwrap();
        std::fs::write(project.join("package.json"), "{}").unwrap();
        std::fs::write(
            project.join(".npmrc"),
            "registry=https://npm.corp.example/\n",
        )
        .unwrap();
        let home = dir.path().to_str().unwrap();
        let found = for_line(b"yarn install", &project, &env(&[("HOME", home)])).unwrap();
        assert_eq!(found.yarn.as_deref(), Some("https://npm.corp.example/"));
        std::fs::write(
            project.join(".yarnrc.yml"),
            "# the team's\nnodeLinker: node-modules\nnpmRegistryServer: \"https://yarn.corp.example\"\n\
             npmScopes:\n  corp:\n    npmRegistryServer: 'https://scoped.example/npm/' # ours\n\
             \x20   npmAuthToken: x\nyarnPath: .yarn/releases/yarn.cjs\n",
        )
        .unwrap();
        let found = for_line(
            b"yarn install && npm install",
            &project.join("web"),
            &env(&[("HOME", home)]),
        )
        .unwrap();
        assert_eq!(found.yarn.as_deref(), Some("https://yarn.corp.example/"));
        assert_eq!(found.yarn_scoped, ["https://scoped.example/"]);
        assert_eq!(found.npm.as_deref(), Some("https://npm.corp.example/"));
        let found = for_line(
            b"yarn add left-pad",
            &project,
            &env(&[
                ("HOME", home),
                ("YARN_NPM_REGISTRY_SERVER", "https://env.example/"),
            ]),
        )
        .unwrap();
        assert_eq!(found.yarn.as_deref(), Some("https://env.example/"));
    }

    /// uv: the project's `pyproject.toml` (`[[tool.uv.index]]`), or its `uv.toml`, then the
    /// user's `uv.toml`; the variables first; none with `UV_NO_CONFIG`.
    #[test]
    fn uv_reads_the_projects_and_the_users_config() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("app");
        std::fs::create_dir_all(project.join("src/pkg")).unwrap();
        std::fs::write(
            project.join("pyproject.toml"),
            "[project]\nname = \"app\"\n\n[[tool.uv.index]]\nname = \"pytorch-cpu\"\n\
             url = \"https://download.pytorch.org/whl/cpu\"\nexplicit = true\n",
        )
        .unwrap();
        // A pyproject.toml without [tool.uv] (a package inside) is passed over.
        std::fs::write(
            project.join("src/pkg/pyproject.toml"),
            "[project]\nname = \"pkg\"\n",
        )
        .unwrap();
        let config = dir.path().join("config");
        std::fs::create_dir_all(config.join("uv")).unwrap();
        std::fs::write(
            config.join("uv/uv.toml"),
            "[[index]]\nurl = \"https://u:p@pypi.corp.example/simple\"\ndefault = true\n",
        )
        .unwrap();
        let xdg = config.to_str().unwrap();
        let found = for_line(
            b"uv sync",
            &project.join("src/pkg"),
            &env(&[("XDG_CONFIG_HOME", xdg)]),
        )
        .unwrap();
        assert_eq!(
            found.uv_index.as_deref(),
            Some("https://pypi.corp.example/")
        );
        assert_eq!(found.uv_extra, ["https://download.pytorch.org/"]);
        // The project's own uv.toml is its configuration; a default index there wins.
        std::fs::write(
            project.join("uv.toml"),
            "index-url = \"https://mirror.example/simple\"\nextra-index-url = [\"https://extra.example/simple\"]\n",
        )
        .unwrap();
        let found = for_line(
            b"uv pip install x",
            &project,
            &env(&[("XDG_CONFIG_HOME", xdg)]),
        )
        .unwrap();
        assert_eq!(found.uv_index.as_deref(), Some("https://mirror.example/"));
        assert_eq!(found.uv_extra, ["https://extra.example/"]);
        // The variables come first; UV_NO_CONFIG reads no file.
        let found = for_line(
            b"uv sync",
            &project,
            &env(&[
                ("XDG_CONFIG_HOME", xdg),
                ("UV_DEFAULT_INDEX", "https://env.example/simple"),
            ]),
        )
        .unwrap();
        assert_eq!(found.uv_index.as_deref(), Some("https://env.example/"));
        assert!(
            for_line(
                b"uv sync",
                &project,
                &env(&[("XDG_CONFIG_HOME", xdg), ("UV_NO_CONFIG", "1")]),
            )
            .is_none()
        );
        // Not valid TOML: nothing from it, and the project's search ends there (uv refuses
        // it; the pyproject.toml beside it is not the project's configuration).
        std::fs::write(project.join("uv.toml"), "index-url = [").unwrap();
        let found = for_line(b"uv sync", &project, &env(&[("XDG_CONFIG_HOME", xdg)])).unwrap();
        assert_eq!(
            found.uv_index.as_deref(),
            Some("https://pypi.corp.example/")
        );
        assert!(found.uv_extra.is_empty(), "{:?}", found.uv_extra);
    }

    #[test]
    fn pip_reads_its_config_files_then_its_variables() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("pip.conf");
        std::fs::write(
            &conf,
            "[global]\nindex-url = https://__token__:abc@pypi.corp.example/simple\nextra-index-url =\n    https://a.example/simple\n    https://b.example/simple\n",
        )
        .unwrap();
        let file = conf.to_str().unwrap();
        let found = for_line(
            b"pip install x",
            dir.path(),
            &env(&[("PIP_CONFIG_FILE", file)]),
        )
        .unwrap();
        assert_eq!(
            found.pip_index.as_deref(),
            Some("https://pypi.corp.example/")
        );
        assert_eq!(
            found.pip_extra,
            ["https://a.example/", "https://b.example/"]
        );
        let found = for_line(
            b"python3 -m pip install x",
            dir.path(),
            &env(&[
                ("PIP_CONFIG_FILE", file),
                ("PIP_INDEX_URL", "https://env.example/simple"),
            ]),
        )
        .unwrap();
        assert_eq!(found.pip_index.as_deref(), Some("https://env.example/"));
        let found = for_line(
            b"uv sync",
            dir.path(),
            &env(&[
                ("UV_DEFAULT_INDEX", "https://uv.example/simple"),
                ("UV_INDEX", "x=https://x.example/simple"),
            ]),
        )
        .unwrap();
        assert_eq!(found.uv_index.as_deref(), Some("https://uv.example/"));
        assert_eq!(found.uv_extra, ["https://x.example/"]);
    }
}
