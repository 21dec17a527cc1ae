//! What a line's commands need from the sandbox: the built-in table, and the user's rules.
//!
//! Whether a command needs the network is decided in one place ([`super::network`]); this module
//! says *what* to grant it when it is allowed: the TCP ports its protocol uses when they are known
//! (package registries and HTTPS on 443, SSH on 22, a literal `http://` URL on 80, a literal port),
//! the whole network otherwise, and the caches the tool writes outside the workspace. A user rule
//! with `needs = {…}` adds its own when it matches (project files cannot: they only tighten). A
//! credential variable a command names (`$GH_TOKEN`) is asked for too: only a person's yes passes
//! it ([`super::grant::Grant::allowed_by`]).

use super::endpoint::Endpoint;
use super::grant::{Needs, Network};
use super::network::needs_network;
use super::rules::{LineContext, Rule, RuleSource};
use crate::parse::{Command, Parsed};

/// What the line needs: every command's, and every matching user rule's.
pub fn of_line(rules: &[Rule], context: &LineContext, parsed: &Parsed) -> Needs {
    let mut needs = Needs::default();
    for command in &parsed.commands {
        needs.add(&builtin(command));
        needs.add(&Needs {
            env: super::environment::credentials_named(command),
            ..Needs::default()
        });
    }
    for rule in rules.iter().filter(|r| r.needs.is_some()) {
        if let Some(extra) = &rule.needs
            && declares_needs(rule)
            && rule.finding(context).is_some()
        {
            needs.add(extra);
        }
    }
    needs
}

/// Whether the user's own rules already give what the line needs the network for: every command
/// that needs it is allowed by a user rule whose `needs` hold all of that command's built-in needs
/// (its hosts and ports, listening ports and cache directories) — a rule on the program or its
/// arguments, or one on the whole line (what an "always" answer writes, see [`super::always`]) —
/// and the line opens no `/dev/tcp` connection of its own. Then a person approved that grant when
/// the rule was written, and `builtin.network` does not ask again. A command that needs anything
/// more — another host, a registry named on the line, the whole network where the rule gives
/// ports — or a credential variable or socket (passed only on a person's yes to the line
/// itself), is not covered, and the line is asked as before.
pub fn network_declared_by_user(rules: &[Rule], context: &LineContext) -> bool {
    let parsed = context.parsed;
    let standing =
        |rule: &&Rule| declares_needs(rule) && rule.policy == super::rules::RulePolicy::Allow;
    let line_rules: Vec<&Needs> = persons_line_rules(rules, context)
        .filter_map(|r| r.needs.as_ref())
        .collect();
    !opens_a_connection(parsed)
        && parsed
            .commands
            .iter()
            .filter(|c| needs_network(c).is_some())
            .all(|c| {
                let needed = builtin(c);
                line_rules
                    .iter()
                    .any(|declared| holds(declared, &needed, Personal::Declared))
                    || rules.iter().filter(standing).any(|rule| {
                        super::allows_command(rule, c)
                            && rule
                                .needs
                                .as_ref()
                                .is_some_and(|d| holds(d, &needed, Personal::Refused))
                    })
            })
}

/// Whether the sandbox holds all the line needs the network for, so that a line a person types in
/// their own hooked shell is not asked about it (see `CONTAINED_FOR_A_PERSON`): every command
/// that needs the network reaches only named hosts on their ports — its own literal URLs, the
/// public registries of its package tools, a repository's remote — which the sandbox's proxy
/// holds by name (a name or address not granted is refused there, named, and escalation asks for
/// it); or listens on a loopback port; and writes nothing outside the workspace but the lines'
/// own caches ([`LINE_CACHES`]). Not held, and asked as before: the whole network or a port on
/// any host (`nc`, `docker`, a git remote whose URL is unknown), a credential variable or a socket
/// (the ssh agent: passed only on a person's yes to the line), the person's `~/.cargo/registry`,
/// a `/dev/tcp` connection of the line's own, and any host read from a file (`configured`: a
/// registry a project's `.npmrc` names is a host the project chose, and a project file may not
/// grant a host).
pub fn network_held_by_the_sandbox(context: &LineContext, configured: bool) -> bool {
    let parsed = context.parsed;
    let held = |needed: &Needs| {
        let named_hosts = match &needed.network {
            Network::Off => true,
            Network::Tcp(endpoints) => endpoints.iter().all(|e| e.host.is_some()),
            Network::On => false,
        };
        named_hosts
            && needed.env.is_empty()
            && needed.sockets.is_empty()
            && needed.writable.iter().all(|d| is_line_cache(d))
    };
    !configured
        && !opens_a_connection(parsed)
        && parsed
            .commands
            .iter()
            .filter(|c| needs_network(c).is_some())
            .all(|c| held(&builtin(c)) && super::environment::credentials_named(c).is_empty())
}

/// Whether the line opens a connection of its own (bash's `/dev/tcp` and `/dev/udp`).
fn opens_a_connection(parsed: &Parsed) -> bool {
    parsed
        .reads
        .iter()
        .chain(parsed.writes.iter())
        .any(|p| super::known_safe::is_network_path(p))
}

/// The person's own `allow` rules for exactly the line of `context` (`field = "line"`, what an
/// "always" answer writes).
fn persons_line_rules<'r>(
    rules: &'r [Rule],
    context: &LineContext,
) -> impl Iterator<Item = &'r Rule> {
    rules.iter().filter(|rule| {
        declares_needs(rule)
            && rule.policy == super::rules::RulePolicy::Allow
            && matches!(
                rule.matcher,
                super::rules::Matcher::Regex {
                    field: super::rules::Field::Line,
                    ..
                }
            )
            && rule.finding(context).is_some()
    })
}

/// Whether all the opaque check finds on the line is ssh's remote command
/// ([`crate::parse::SSH_REMOTE_COMMAND`]: its text is on the line, run on the other machine)
/// and the person's own rule for exactly this line allows it: the rule an "always" answer to it
/// wrote ([`super::always`]), which is a yes to that text for good.
pub fn remote_command_allowed_by_user(rules: &[Rule], context: &LineContext) -> bool {
    let parsed = context.parsed;
    !parsed.opaque.is_empty()
        && parsed
            .opaque
            .iter()
            .all(|o| o == crate::parse::SSH_REMOTE_COMMAND)
        && super::rules::lookalike_program(&parsed.commands).is_none()
        && persons_line_rules(rules, context).next().is_some()
}

/// Whether a rule may hold what only a person's yes to a line passes (credential variables,
/// sockets): the person's own rule for exactly that line may, when it declares them (what an
/// "always" answer writes, see [`super::always`]); a rule on a program or its arguments, which
/// other lines match too, never.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Personal {
    Declared,
    Refused,
}

/// Whether the rule `id` that allowed the line of `context` is the person's own rule for exactly
/// that line (`field = "line"`) and declares every credential variable and socket `grant`
/// passes: a person's yes to the line for good (see `Decision::a_persons_standing_yes`).
pub fn a_persons_standing_yes(
    rules: &[Rule],
    id: Option<&str>,
    context: &LineContext,
    grant: &super::grant::Grant,
) -> bool {
    let Some(id) = id else {
        return false;
    };
    let passes = !grant.env.is_empty() || !grant.sockets.is_empty();
    passes
        && persons_line_rules(rules, context).any(|rule| {
            rule.id == id
                && rule.needs.as_ref().is_some_and(|declared| {
                    grant.env.iter().all(|v| declared.env.contains(v))
                        && grant.sockets.iter().all(|s| declared.sockets.contains(s))
                })
        })
}

/// Whether `declared` gives everything `needed` asks for; what only a person's yes to a line
/// passes (credential variables, sockets) only where `personal` lets a rule declare it.
fn holds(declared: &Needs, needed: &Needs, personal: Personal) -> bool {
    let passed = |needed: &[String], declared: &[String]| match personal {
        Personal::Declared => needed.iter().all(|n| declared.contains(n)),
        Personal::Refused => needed.is_empty(),
    };
    passed(&needed.env, &declared.env)
        && passed(&needed.sockets, &declared.sockets)
        && needed.network.intersection(&declared.network) == needed.network
        && needed.listen.is_subset(&declared.listen)
        && needed
            .writable
            .iter()
            .all(|d| declared.writable.contains(d))
}

/// Only the user's own rules may widen the sandbox.
fn declares_needs(rule: &Rule) -> bool {
    matches!(rule.source, RuleSource::User(_))
}

/// What a fetch of the line's builds that fetch on demand would need (`cargo build`: TCP 443 and
/// its registry cache), given to such a line only when it turns out to fetch (see
/// [`super::network::fetches_on_demand`]); nothing for any other line.
pub fn on_demand(parsed: &Parsed) -> Needs {
    let mut needs = Needs::default();
    for command in parsed
        .commands
        .iter()
        .filter(|c| super::network::fetches_on_demand(c))
    {
        needs.add(&table(command));
    }
    needs
}

/// The built-in needs of one command: its table row when it needs the network; otherwise only the
/// lines' own cache it writes on every run (go's build cache; npm's, which npm rewrites as it
/// reads it — its index is compacted in place — and which `npm ci` installs from: the
/// workspace's own, no question needed, see [`LINE_CACHES`]), or nothing.
pub fn builtin(c: &Command) -> Needs {
    if needs_network(c).is_none() {
        let cache = match c.program.as_str() {
            "go" => Some(GO_BUILDS),
            "npm" | "npx" => Some(NPM_CACHE),
            _ => None,
        };
        return Needs {
            writable: cache.iter().map(|d| (*d).to_owned()).collect(),
            ..Needs::default()
        };
    }
    table(c)
}

/// The built-in table: what a command that talks to the network is granted.
fn table(c: &Command) -> Needs {
    let words: Vec<&str> = c.argv.iter().map(String::as_str).collect();
    if c.program.starts_with("python")
        && let Some(port) = super::network::served_port(&words)
    {
        return Needs {
            listen: [port].into(),
            ..Needs::default()
        };
    }
    let (endpoints, writable): (Option<Vec<Endpoint>>, &[&str]) = match c.program.as_str() {
        "npm" | "npx" => (registry(NPM), &[NPM_CACHE]),
        "pnpm" | "pnpx" => (registry(NPM), &[PNPM_STORE, PNPM_CACHE]),
        "yarn" => (registry(YARN), &[YARN_CACHE, YARN_GLOBAL]),
        "bun" | "bunx" => (registry(NPM), &[BUN_CACHE]),
        "cargo" if super::network::cargo_reads_only_the_index(c) => {
            (registry(CRATES), &[CARGO_HOME_OF_LINES])
        }
        "cargo" => (registry(CRATES), &["~/.cargo/registry", "~/.cargo/git"]),
        "pip" | "pip3" => (registry(PYPI), &[PIP_CACHE]),
        "python" | "python3" => (registry(PYPI), &[PIP_CACHE]),
        "uv" | "uvx" => (registry(PYPI), &[UV_CACHE]),
        "pipx" => (registry(PYPI), &[PIP_CACHE, "~/.local/share/pipx"]),
        "go" => (registry(GO), &[GO_MODULES, GO_BUILDS]),
        "gem" | "bundle" => (registry(GEMS), &["~/.gem", "~/.bundle"]),
        "git" => (Some(git_endpoints(&words)), &[]),
        // ssh takes no proxy: its hosts by name are reached directly (see
        // [`direct_endpoints`]); its port on any host where a host cannot be told.
        "ssh" | "scp" | "sftp" | "rsync" => (Some(ssh_endpoints(&c.program, &words)), &[]),
        "curl" | "wget" => (url_endpoints(&words), &[]),
        _ => (None, &[]),
    };
    // A registry or index named on the line (`--registry URL`, `-i URL`, or configured for the
    // project and written into the line, see [`super::registries`]) is where it fetches: in place
    // of the public one when it replaces it, beside it otherwise (a scoped registry, an extra
    // index).
    let endpoints = endpoints.map(|mut list| {
        if !matches!(
            c.program.as_str(),
            "git" | "curl" | "wget" | "ssh" | "scp" | "sftp" | "rsync"
        ) {
            if words.iter().any(|w| super::registries::is_replacing(w)) {
                list.clear();
            }
            list.extend(url_endpoints(&words).into_iter().flatten());
        }
        list
    });
    let network = endpoints.map_or(Network::On, Network::to);
    // ssh authenticates with the person's agent: its socket is asked for with ssh's port (and
    // passed only on a person's yes, see `Grant::allowed_by`); git's remote may be ssh when 22
    // is among its ports.
    let ssh = matches!(c.program.as_str(), "ssh" | "scp" | "sftp" | "rsync")
        || (c.program == "git" && matches!(&network, Network::Tcp(_) if network.reaches_port(22)));
    Needs {
        network,
        writable: writable.iter().map(|d| (*d).to_owned()).collect(),
        sockets: if ssh {
            vec![super::grant::SSH_AGENT.to_owned()]
        } else {
            Vec::new()
        },
        ..Needs::default()
    }
}

/// The package caches lines fill: shellgate's, beside the person's own, which lines never write.
///
/// A tool reads its cache back and runs what it finds there — cargo compiles
/// `~/.cargo/registry/src` as it finds it, pip installs from its wheel cache, go links its build
/// cache, npm installs from its own. Had a line written the person's caches (`~/.npm`,
/// `~/.cache/pip` …), the person's next install or build outside the sandbox would run what that
/// line put there. So every sandboxed line runs with these variables pointing its tools at caches
/// of its workspace's lines (set by the gate, never taken back into a person's shell; the binary's
/// `paths::grant_dir` places each in a directory of the workspace's own), and a grant writes
/// those: what a line writes there only later lines of that workspace read, and those may already
/// write the workspace the tools install into. The person's caches stay read-only to lines; a
/// first install in the sandbox downloads what their cache already had.
///
/// Cargo keeps its registry in `CARGO_HOME` with its config and installed programs, and has no
/// variable for the registry alone. A line whose cargo reads only the index
/// ([`super::network::cargo_reads_only_the_index`]: `cargo add`, `update` …) gets a cargo home
/// of the lines' own: it downloads no crate, so what it fetched is never built, and it needs
/// nothing else of the person's cargo home (cargo still reads `~/.cargo/config.toml` as the
/// config of an ancestor directory when the workspace is in the home; a workspace elsewhere
/// goes without it). A build that fetches still writes the person's `~/.cargo/registry` — its
/// later builds, inside the sandbox or out, compile what it fetched — and `a` is not offered
/// for it.
pub const LINE_CACHES: [LineCache; 11] = [
    LineCache::every_line("npm_config_cache", NPM_CACHE),
    LineCache {
        variable: "CARGO_HOME",
        dir: CARGO_HOME_OF_LINES,
        lines: Lines::ReadingOnlyTheCargoIndex,
    },
    // npm warns about an `npm_config_*` setting it does not know on every run: pnpm's own only
    // go to lines that run pnpm.
    LineCache::only_for("npm_config_store_dir", PNPM_STORE, &["pnpm", "pnpx"]),
    LineCache::only_for("npm_config_cache_dir", PNPM_CACHE, &["pnpm", "pnpx"]),
    LineCache::every_line("YARN_CACHE_FOLDER", YARN_CACHE),
    LineCache::every_line("YARN_GLOBAL_FOLDER", YARN_GLOBAL),
    LineCache::every_line("BUN_INSTALL_CACHE_DIR", BUN_CACHE),
    LineCache::every_line("PIP_CACHE_DIR", PIP_CACHE),
    LineCache::every_line("UV_CACHE_DIR", UV_CACHE),
    LineCache::every_line("GOMODCACHE", GO_MODULES),
    LineCache::every_line("GOCACHE", GO_BUILDS),
];

/// One of the lines' package caches: the variable that points a tool at it, the directory as a
/// grant spells it, and the lines that get the variable.
#[derive(Debug, Clone, Copy)]
pub struct LineCache {
    pub variable: &'static str,
    pub dir: &'static str,
    pub lines: Lines,
}

/// Which lines get a cache's variable.
#[derive(Debug, Clone, Copy)]
pub enum Lines {
    /// Every sandboxed line.
    Every,
    /// Lines that run one of these programs.
    Running(&'static [&'static str]),
    /// Lines with a cargo command that reads only the index
    /// ([`super::network::cargo_reads_only_the_index`]).
    ReadingOnlyTheCargoIndex,
}

impl LineCache {
    const fn every_line(variable: &'static str, dir: &'static str) -> LineCache {
        LineCache {
            variable,
            dir,
            lines: Lines::Every,
        }
    }

    const fn only_for(
        variable: &'static str,
        dir: &'static str,
        programs: &'static [&'static str],
    ) -> LineCache {
        LineCache {
            variable,
            dir,
            lines: Lines::Running(programs),
        }
    }

    /// The cache's own directory name, beneath each workspace's.
    pub fn name(&self) -> &'static str {
        self.dir.rsplit('/').next().unwrap_or(self.dir)
    }

    /// Whether a line running `commands` gets this variable.
    pub fn applies_to(&self, commands: &[Command]) -> bool {
        match self.lines {
            Lines::Every => true,
            Lines::Running(programs) => commands
                .iter()
                .any(|c| programs.contains(&c.program.as_str())),
            Lines::ReadingOnlyTheCargoIndex => commands
                .iter()
                .any(super::network::cargo_reads_only_the_index),
        }
    }
}

const NPM_CACHE: &str = "~/.cache/shellgate-lines/npm";
const CARGO_HOME_OF_LINES: &str = "~/.cache/shellgate-lines/cargo-home";
const PNPM_STORE: &str = "~/.cache/shellgate-lines/pnpm-store";
const PNPM_CACHE: &str = "~/.cache/shellgate-lines/pnpm";
const YARN_CACHE: &str = "~/.cache/shellgate-lines/yarn";
const YARN_GLOBAL: &str = "~/.cache/shellgate-lines/yarn-global";
const BUN_CACHE: &str = "~/.cache/shellgate-lines/bun";
const PIP_CACHE: &str = "~/.cache/shellgate-lines/pip";
const UV_CACHE: &str = "~/.cache/shellgate-lines/uv";
const GO_MODULES: &str = "~/.cache/shellgate-lines/go-mod";
const GO_BUILDS: &str = "~/.cache/shellgate-lines/go-build";

/// Where the lines' caches are, as a grant spells it; each workspace has its own directory
/// beneath it (the binary's `paths::lines_caches_of`).
pub const LINES_CACHES_ROOT: &str = "~/.cache/shellgate-lines";

/// Whether `dir` (as a grant spells it) is one of the lines' own caches ([`LINE_CACHES`]).
pub fn is_line_cache(dir: &str) -> bool {
    line_cache_name(dir).is_some()
}

/// The name of the lines' cache `dir` (as a grant spells it: `~/.cache/shellgate-lines/npm` is
/// `npm`), or `None` when it is none of [`LINE_CACHES`].
pub fn line_cache_name(dir: &str) -> Option<&'static str> {
    LINE_CACHES
        .iter()
        .find(|cache| cache.dir == dir)
        .map(|cache| cache.name())
}

/// The public registries of each ecosystem, where its tools fetch from unless configured
/// otherwise (a project's own registry is refused by name through the proxy, and the escalation
/// offers exactly that host).
const NPM: &[&str] = &["registry.npmjs.org"];
const YARN: &[&str] = &[
    "registry.yarnpkg.com",
    "registry.npmjs.org",
    "repo.yarnpkg.com",
];
const CRATES: &[&str] = &["index.crates.io", "static.crates.io", "crates.io"];
const PYPI: &[&str] = &["pypi.org", "files.pythonhosted.org"];
const GO: &[&str] = &["proxy.golang.org", "sum.golang.org"];
const GEMS: &[&str] = &["rubygems.org", "index.rubygems.org"];

/// `hosts` on HTTPS (443).
fn registry(hosts: &[&str]) -> Option<Vec<Endpoint>> {
    Some(
        hosts
            .iter()
            .filter_map(|h| Endpoint::named(h, 443))
            .collect(),
    )
}

/// The named hosts of `commands` that their programs reach without a proxy: ssh's, scp's, sftp's
/// and rsync's hosts, and git's remotes over ssh (`user@host:path`, `ssh://`). ssh reads no proxy
/// variable, so the sandbox holds these by address instead: shellgate resolves each name before
/// the line starts, lets the line connect straight to those addresses on that port, and gives it
/// an `/etc/hosts` where the name has exactly those addresses (`sandbox::Spec::direct`). ssh
/// routes nothing by name, so an address stands for the name there; on HTTPS it would not (one
/// address serves many names), which is why every other named host goes through the proxy.
pub fn direct_endpoints(commands: &[Command]) -> Vec<Endpoint> {
    let mut direct: Vec<Endpoint> = Vec::new();
    for c in commands {
        let words: Vec<&str> = c.argv.iter().map(String::as_str).collect();
        let endpoints = match c.program.as_str() {
            "ssh" | "scp" | "sftp" | "rsync" if needs_network(c).is_some() => {
                ssh_endpoints(&c.program, &words)
            }
            "git" if needs_network(c).is_some() => {
                words.iter().filter_map(|w| git_ssh_endpoint(w)).collect()
            }
            _ => Vec::new(),
        };
        direct.extend(endpoints.into_iter().filter(|e| e.host.is_some()));
    }
    direct.sort();
    direct.dedup();
    direct
}

/// Where an ssh-family command connects: each of its hosts by name on its port, when every host
/// can be told ([`ssh_hosts`]); its port on any host otherwise.
fn ssh_endpoints(program: &str, words: &[&str]) -> Vec<Endpoint> {
    let args = super::ssh_args::scan(program, words);
    let port = ssh_port(&args);
    let named: Option<Vec<Endpoint>> = ssh_hosts(program, &args)
        .filter(|hosts| !hosts.is_empty())
        .and_then(|hosts| hosts.iter().map(|h| Endpoint::named(h, port)).collect());
    named.unwrap_or_else(|| vec![Endpoint::any(port)])
}

/// The hosts an ssh-family command connects to, as the line spells them: ssh's destination
/// (`[user@]host`, `ssh://[user@]host[:port]`), scp's and sftp's remote operands
/// (`[user@]host:path`), rsync's (`[user@]host:path`). `None` where ssh may go elsewhere or
/// somewhere the line does not say ([`super::ssh_args::SshArgs::elsewhere`]: a jump host, a proxy
/// command, a host name set apart from the destination, a config file of the line's own, rsync's
/// own remote shell), to rsync's daemon (`host::module`, `rsync://`), or where a word is expanded
/// at run time. An alias in the person's `~/.ssh/config` has already been written as where it
/// goes ([`super::ssh_config::resolve`]) when the config could be followed.
fn ssh_hosts(program: &str, args: &super::ssh_args::SshArgs) -> Option<Vec<String>> {
    if args.elsewhere || args.expanded {
        return None;
    }
    let mut hosts = Vec::new();
    for (_, operand) in &args.operands {
        let host = match program {
            "ssh" => Some(ssh_destination_host(operand)?),
            "sftp" => Some(ssh_destination_host(
                operand.split_once(':').map_or(*operand, |(h, _)| h),
            )?),
            _ => remote_operand_host(operand, program == "rsync")?,
        };
        hosts.extend(host);
    }
    Some(hosts)
}

/// The host of ssh's destination: `[user@]host` or `ssh://[user@]host[:port]`.
fn ssh_destination_host(destination: &str) -> Option<String> {
    let authority = match destination.strip_prefix("ssh://") {
        Some(rest) => {
            let authority = rest.split('/').next()?;
            let host_port = authority.rsplit('@').next()?;
            return Some(match host_port.strip_prefix('[') {
                Some(v6) => v6.split(']').next()?.to_owned(),
                None => host_port.split(':').next()?.to_owned(),
            });
        }
        None => destination,
    };
    let host = authority.rsplit('@').next()?;
    (!host.is_empty() && !host.contains(['/', ':']) || host.parse::<std::net::Ipv6Addr>().is_ok())
        .then(|| host.to_owned())
}

/// The host of an scp or rsync operand: `Some(None)` for a local path (`./a:b`, `/x`, no colon),
/// `Some(Some(host))` for `[user@]host:path` (`[v6]:path` too, and `scp://[user@]host[:port]/`),
/// `None` for what cannot be told (rsync's daemon, `host::module` and `rsync://`).
fn remote_operand_host(operand: &str, rsync: bool) -> Option<Option<String>> {
    if rsync && (operand.starts_with("rsync://") || operand.contains("::")) {
        return None;
    }
    if let Some(rest) = operand.strip_prefix("scp://") {
        return ssh_destination_host(&format!("ssh://{rest}")).map(Some);
    }
    if let Some(v6) = operand.rsplit('@').next().and_then(|h| h.strip_prefix('[')) {
        let (host, after) = v6.split_once(']')?;
        return after.starts_with(':').then(|| Some(host.to_owned()));
    }
    match operand.split_once(':') {
        Some((head, _)) if !head.is_empty() && !head.contains('/') => {
            Some(Some(head.rsplit('@').next()?.to_owned()))
        }
        _ => Some(None),
    }
}

/// A git remote over ssh by name: `[user@]host:path` or `ssh://` / `git+ssh://` with its port.
fn git_ssh_endpoint(word: &str) -> Option<Endpoint> {
    if is_scp_like(word) {
        let (authority, _) = word.split_once(':')?;
        return Endpoint::named(authority.rsplit('@').next()?, 22);
    }
    let (scheme, rest) = word.split_once("://")?;
    if !matches!(scheme.to_ascii_lowercase().as_str(), "ssh" | "git+ssh") {
        return None;
    }
    let host = ssh_destination_host(&format!("ssh://{rest}"))?;
    Endpoint::named(&host, url_port(word)?)
}

/// The port ssh connects to, as the line spells it: `-p PORT` (`-P` for scp and sftp), `-o
/// Port=PORT`, or an `ssh://host:PORT` URL; 22 otherwise (a port only known at run time, in a
/// config file or inside rsync's `-e` command is then refused, and the escalation names it).
fn ssh_port(args: &super::ssh_args::SshArgs) -> u16 {
    args.port
        .or_else(|| {
            args.operands
                .iter()
                .find(|(_, w)| w.starts_with("ssh://"))
                .and_then(|(_, w)| url_port(w))
        })
        .unwrap_or(22)
}

/// git talks HTTPS or SSH to its remotes (`git://` is 9418), as its URLs say when they are on the
/// line: an HTTP(S) URL's host by name (git takes the proxy), an SSH one's host by name too
/// (reached directly, see [`direct_endpoints`]); a remote the line names by a name whose URL is
/// not known may be either, on any host.
fn git_endpoints(words: &[&str]) -> Vec<Endpoint> {
    let urls: Vec<&&str> = words
        .iter()
        .filter(|w| w.contains("://") || is_scp_like(w))
        .collect();
    let mut endpoints: Vec<Endpoint> = urls
        .iter()
        .filter_map(|u| git_ssh_endpoint(u).or_else(|| url_endpoint(u)))
        .collect();
    endpoints.sort();
    endpoints.dedup();
    if endpoints.is_empty() {
        vec![Endpoint::any(22), Endpoint::any(443)]
    } else {
        endpoints
    }
}

/// `user@host:path`, git's SSH shorthand.
fn is_scp_like(word: &str) -> bool {
    !word.contains("://")
        && word
            .split_once(':')
            .is_some_and(|(host, _)| host.contains('@') && !host.contains('/'))
}

/// Where the literal URLs on the line go; `None` (the whole network) when there is none, or one
/// whose port cannot be told.
fn url_endpoints(words: &[&str]) -> Option<Vec<Endpoint>> {
    let urls: Vec<&str> = words
        .iter()
        .map(|w| glued_value(w))
        .filter(|w| w.contains("://"))
        .collect();
    if urls.is_empty() {
        return None;
    }
    urls.iter().map(|u| url_endpoint(u)).collect()
}

/// An option's value glued to it (`--registry=URL` → `URL`); any other word as it is.
fn glued_value(word: &str) -> &str {
    match word.split_once('=') {
        Some((option, value)) if option.starts_with('-') && !option.contains("://") => value,
        _ => word,
    }
}

/// Where a URL goes: an HTTP(S) URL's host by name and its port (clients take the proxy there);
/// any other scheme's port, or one whose host is not spelled out (`https://$HOST/`), on any
/// host. `None` when the port cannot be told.
fn url_endpoint(url: &str) -> Option<Endpoint> {
    let port = url_port(url)?;
    let (scheme, rest) = url.split_once("://")?;
    let proxied = matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https");
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        host_port.split(':').next()?
    };
    Some(
        proxied
            .then(|| Endpoint::named(host, port))
            .flatten()
            .unwrap_or(Endpoint::any(port)),
    )
}

/// The port a URL connects to: its explicit one, or its scheme's.
fn url_port(url: &str) -> Option<u16> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    let explicit = if host_port.starts_with('[') {
        host_port.rsplit_once("]:").map(|(_, p)| p)
    } else {
        host_port.rsplit_once(':').map(|(_, p)| p)
    };
    if let Some(port) = explicit {
        return port.parse().ok().filter(|p| *p != 0);
    }
    match scheme.to_ascii_lowercase().as_str() {
        "https" | "wss" => Some(443),
        "http" | "ws" => Some(80),
        "ssh" | "git+ssh" | "sftp" => Some(22),
        "git" => Some(9418),
        "ftp" => Some(21),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ShellKind, parse};

    fn needs(line: &str) -> Needs {
        let parsed = parse(line, ShellKind::Bash);
        let mut all = Needs::default();
        for c in &parsed.commands {
            all.add(&builtin(c));
        }
        all
    }

    fn hosts(list: &[&str]) -> Network {
        Network::to(list.iter().map(|e| Endpoint::parse(e).unwrap()))
    }

    #[test]
    fn package_managers_get_their_registry_by_name_and_cache() {
        let n = needs("npm install");
        assert_eq!(n.network, hosts(&["registry.npmjs.org:443"]));
        assert_eq!(n.writable, ["~/.cache/shellgate-lines/npm"]);
        let crates = hosts(&[
            "crates.io:443",
            "index.crates.io:443",
            "static.crates.io:443",
        ]);
        let n = needs("cargo fetch");
        assert_eq!(n.network, crates);
        assert_eq!(n.writable, ["~/.cargo/registry", "~/.cargo/git"]);
        // cargo reading only its index: the lines' own cargo home, never the person's.
        for line in [
            "cargo add serde",
            "cargo +nightly update -p x",
            "cargo info serde",
        ] {
            let n = needs(line);
            assert_eq!(n.network, crates, "{line}");
            assert_eq!(n.writable, [CARGO_HOME_OF_LINES], "{line}");
        }
        assert_eq!(
            needs("pip install -r requirements.txt").writable,
            ["~/.cache/shellgate-lines/pip"]
        );
        assert!(needs("cargo build --offline").is_empty());
        assert!(needs("ls -la").is_empty());
        // A build fetches on demand: nothing up front, its fetch's needs if it turns out to.
        assert!(needs("cargo build --release").is_empty());
        let fetch = on_demand(&parse("cargo build --release && ls", ShellKind::Bash));
        assert_eq!(fetch.network, crates);
        // A registry or index the line names replaces the public one (npm, pip and uv then
        // fetch there only); an extra one is beside it; glued or not.
        assert_eq!(
            needs("npm view x --registry https://registry.yarnpkg.com/").network,
            hosts(&["registry.yarnpkg.com:443"])
        );
        assert_eq!(
            needs("npm install --registry=https://npm.corp.example/").network,
            hosts(&["npm.corp.example:443"])
        );
        assert_eq!(
            needs("pip install -i https://mirror.example/simple x").network,
            hosts(&["mirror.example:443"])
        );
        assert_eq!(
            needs("pip install --extra-index-url=https://extra.example/simple x").network,
            hosts(&[
                "pypi.org:443",
                "files.pythonhosted.org:443",
                "extra.example:443"
            ])
        );
        assert_eq!(
            needs("pip install requests").network,
            hosts(&["pypi.org:443", "files.pythonhosted.org:443"])
        );
        assert_eq!(fetch.writable, ["~/.cargo/registry", "~/.cargo/git"]);
        assert!(on_demand(&parse("cargo fetch", ShellKind::Bash)).is_empty());
        // npm's own lines write the workspace's lines' npm cache unasked (npm rewrites it as it
        // reads it), and nothing else.
        let test = needs("npm test");
        assert!(test.network.is_off() && test.writable == [NPM_CACHE]);
        // Go builds write the workspace's lines' build cache unasked, and fetch on demand.
        let build = needs("go build ./...");
        assert!(build.network.is_off() && build.writable == [GO_BUILDS]);
        let fetch = on_demand(&parse("go test ./...", ShellKind::Bash));
        assert_eq!(
            fetch.network,
            hosts(&["proxy.golang.org:443", "sum.golang.org:443"])
        );
        assert_eq!(fetch.writable, [GO_MODULES, GO_BUILDS]);
    }

    /// Every package manager that can be told where its cache is writes the lines' own
    /// (which only lines read), never the person's; each of the lines' caches is some tool's.
    #[test]
    fn package_managers_write_the_lines_caches_only() {
        for line in [
            "npm install",
            "npm ci",
            "pnpm install",
            "yarn install",
            "bun install",
            "pip install x",
            "python3 -m pip install x",
            "uv sync",
            "go mod download",
        ] {
            // `npm ci` fetches only what the lines' cache lacks: that fetch's needs.
            let written = if line == "npm ci" {
                on_demand(&parse(line, ShellKind::Bash)).writable
            } else {
                needs(line).writable
            };
            assert!(!written.is_empty(), "{line}");
            assert!(
                written.iter().all(|d| is_line_cache(d)),
                "{line}: {written:?}"
            );
        }
        let all: Vec<String> = [
            "npm i",
            "pnpm i",
            "yarn add x",
            "bun i",
            "pip install x",
            "uv sync",
            "go get x",
            "cargo update",
        ]
        .iter()
        .flat_map(|l| needs(l).writable)
        .collect();
        for cache in LINE_CACHES {
            assert_eq!(cache.dir, format!("{LINES_CACHES_ROOT}/{}", cache.name()));
            assert!(
                all.iter().any(|d| d == cache.dir),
                "{}: {} unused",
                cache.variable,
                cache.dir
            );
        }
        // A setting npm does not know goes only to the lines of the tool that does.
        let npm = parse("npm ci", ShellKind::Bash).commands;
        let pnpm = parse("pnpm i && npm ci", ShellKind::Bash).commands;
        let set = |commands: &[Command]| -> Vec<&str> {
            LINE_CACHES
                .iter()
                .filter(|c| c.applies_to(commands))
                .map(|c| c.variable)
                .collect()
        };
        assert!(set(&npm).contains(&"npm_config_cache"));
        assert!(
            !set(&npm)
                .iter()
                .any(|v| v.starts_with("npm_config_") && *v != "npm_config_cache")
        );
        assert!(set(&pnpm).contains(&"npm_config_store_dir"));
        // The lines' cargo home goes to a line with a cargo command that reads only the index
        // (all of its cargo commands then use it), never to a build's alone.
        for (line, home) in [
            ("cargo update", true),
            ("cargo update && cargo build", true),
            ("cargo build", false),
            ("cargo fetch", false),
            ("npm ci", false),
        ] {
            let commands = parse(line, ShellKind::Bash).commands;
            assert_eq!(set(&commands).contains(&"CARGO_HOME"), home, "{line}");
        }
        // Cargo's registry has no variable of its own: the person's, granted, and not a line's.
        assert!(!is_line_cache("~/.cargo/registry"));
    }

    #[test]
    fn urls_say_which_host_and_port() {
        assert_eq!(
            needs("curl -fsS https://example.invalid/x").network,
            hosts(&["example.invalid:443"])
        );
        assert_eq!(
            needs("curl http://127.0.0.1:8080/x").network,
            hosts(&["127.0.0.1:8080"])
        );
        assert_eq!(needs("curl http://[::1]:9/x").network, hosts(&["[::1]:9"]));
        assert_eq!(
            needs("wget http://a.invalid/ http://user@B.invalid:81/").network,
            hosts(&["a.invalid:80", "b.invalid:81"])
        );
        // A host not spelled out: its port on any host; a scheme without a proxy: its port.
        assert_eq!(needs("curl https://$HOST/x").network, Network::tcp([443]));
        assert_eq!(needs("curl ftp://x.invalid/f").network, Network::tcp([21]));
        assert_eq!(needs("curl \"$URL\"").network, Network::On);
        assert_eq!(needs("curl gopher://x.invalid/").network, Network::On);
        assert_eq!(
            needs("git clone https://example.invalid/r.git").network,
            hosts(&["example.invalid:443"])
        );
        assert_eq!(
            needs("git clone git@example.invalid:r.git").network,
            hosts(&["example.invalid:22"])
        );
        assert_eq!(
            needs("git fetch ssh://git@example.invalid:2222/r.git").network,
            hosts(&["example.invalid:2222"])
        );
        assert_eq!(needs("git pull").network, Network::tcp([22, 443]));
        assert_eq!(needs("ssh host uptime").network, hosts(&["host:22"]));
        // ssh's host and port as the line spells them.
        for (line, endpoint) in [
            ("ssh -p 2222 127.0.0.1 true", "127.0.0.1:2222"),
            ("ssh -p2222 host", "host:2222"),
            ("ssh -o Port=2200 host", "host:2200"),
            ("ssh -oPort=2201 dev@host", "host:2201"),
            ("ssh -vA -i key host ls", "host:22"),
            ("scp -P 2022 f host:", "host:2022"),
            ("scp -r dir me@box.example:/srv", "box.example:22"),
            ("scp 'me@[::1]:f' .", "[::1]:22"),
            ("sftp -P 2023 host", "host:2023"),
            ("sftp me@host:dir", "host:22"),
            ("ssh ssh://git@host:2424", "host:2424"),
            ("rsync -av src/ host:/srv/", "host:22"),
            ("ssh -v host", "host:22"),
            // Clustered flags; the remote command's own `-p` is not ssh's.
            ("ssh -vp2222 host", "host:2222"),
            ("ssh host ls -p 3000", "host:22"),
            ("ssh -o 'Port 2203' host", "host:2203"),
        ] {
            assert_eq!(needs(line).network, hosts(&[endpoint]), "{line}");
            assert_eq!(needs(line).sockets, ["ssh-agent"], "{line}");
        }
        // Where the host cannot be told from the line: the port on any host, as before.
        for (line, port) in [
            ("ssh -p \"$PORT\" \"$HOST\"", 22),
            ("ssh -J jump host", 22),
            ("ssh -o ProxyCommand='nc %h %p' host", 22),
            ("ssh -oHostName=other host", 22),
            ("ssh -F ./config host", 22),
            ("rsync -ave 'ssh -p 2' src/ host:/srv/", 22),
            ("rsync --rsh=ssh src/ host:/srv/", 22),
            ("rsync -av host::module/ dst/", 22),
        ] {
            assert_eq!(needs(line).network, Network::tcp([port]), "{line}");
        }
        // Reached directly (ssh takes no proxy): ssh's hosts, git's over ssh; not https.
        let direct = |line: &str| direct_endpoints(&parse(line, ShellKind::Bash).commands);
        assert_eq!(
            direct("ssh -p 2222 dev@box.example true; curl https://a.example/"),
            [Endpoint::parse("box.example:2222").unwrap()]
        );
        assert_eq!(
            direct("git push git@code.example:team/app.git"),
            [Endpoint::parse("code.example:22").unwrap()]
        );
        assert!(direct("git fetch https://code.example/app.git").is_empty());
        assert!(direct("ssh -J jump host").is_empty());
        assert!(direct("ssh-keygen -l -f key.pub").is_empty());
        // ssh and git over ssh ask for the person's agent with port 22; https does not.
        assert_eq!(needs("ssh host uptime").sockets, ["ssh-agent"]);
        assert_eq!(needs("git push origin main").sockets, ["ssh-agent"]);
        assert!(
            needs("git clone https://example.invalid/r.git")
                .sockets
                .is_empty()
        );
        assert!(needs("curl https://example.invalid/").sockets.is_empty());
        assert_eq!(needs("nc -l 9999").network, Network::On);
    }

    #[test]
    fn a_python_http_server_listens_on_its_port_and_reaches_nothing() {
        for (line, port) in [
            ("python3 -m http.server", 8000),
            ("python3 -m http.server 9001", 9001),
            ("python -m http.server -b 127.0.0.1 -d site 8080", 8080),
            ("python3 -m http.server --bind ::1 --directory dist", 8000),
        ] {
            let n = needs(line);
            assert_eq!(n.listen, [port].into(), "{line}");
            assert_eq!(n.network, Network::Off, "{line}");
            assert!(n.writable.is_empty(), "{line}");
        }
        assert!(needs("python3 -m venv .venv").is_empty());
    }
}
