//! Lines that need the network, which the workspace-write sandbox does not give.
//!
//! In modes whose sandbox has no network such a line would only fail inside it, so it goes to
//! whoever approves lines (`builtin.network`); in modes with the network on the check does not
//! apply. What counts: programs whose purpose is to talk to other machines (`curl`, `wget`,
//! `ssh`, `scp`, `nc`, `dig`, cloud CLIs …), `rsync` to a host, the subcommands of package
//! managers and build tools that download (`npm install`, `pip install`, `cargo build`, `go get`,
//! `apt-get install` …, unless told to stay offline), git's remote subcommands (`clone`, `fetch`,
//! `pull`, `push`, `ls-remote`, `submodule update`), container pulls and runs, and bash's
//! `/dev/tcp`/`/dev/udp` redirections.

use super::known_safe::is_network_path;
use crate::parse::{Command, Parsed};

/// Programs that talk to other machines whatever their arguments.
const NETWORK_PROGRAMS: [&str; 45] = [
    "curl",
    "wget",
    "ssh",
    "scp",
    "sftp",
    "mosh",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "ftp",
    "lftp",
    "tftp",
    "dig",
    "nslookup",
    "host",
    "ping",
    "ping6",
    "traceroute",
    "tracepath",
    "mtr",
    "whois",
    "nmap",
    "aria2c",
    "http",
    "https",
    "xh",
    "gh",
    "hub",
    "glab",
    "aws",
    "gcloud",
    "gsutil",
    "az",
    "doctl",
    "flyctl",
    "heroku",
    "vercel",
    "netlify",
    "wrangler",
    "rclone",
    "ngrok",
    "cloudflared",
    "yt-dlp",
];

/// Programs whose subcommands or arguments decide whether they need the network (the `match`
/// in [`needs_network`]).
const SUBCOMMAND_TOOLS: [&str; 51] = [
    "rsync",
    "git",
    "npm",
    "pnpm",
    "npx",
    "pnpx",
    "bunx",
    "pipx",
    "uvx",
    "yarn",
    "bun",
    "pip",
    "pip3",
    "python",
    "python3",
    "uv",
    "poetry",
    "conda",
    "mamba",
    "micromamba",
    "cargo",
    "go",
    "gem",
    "bundle",
    "bundler",
    "composer",
    "mvn",
    "mvnw",
    "./mvnw",
    "gradle",
    "gradlew",
    "dotnet",
    "apt",
    "apt-get",
    "aptitude",
    "dnf",
    "yum",
    "zypper",
    "apk",
    "pacman",
    "yay",
    "paru",
    "brew",
    "snap",
    "flatpak",
    "docker",
    "podman",
    "nerdctl",
    "helm",
    "terraform",
    "tofu",
];

/// More of them.
const MORE_SUBCOMMAND_TOOLS: [&str; 7] =
    ["kubectl", "oc", "ollama", "svn", "hg", "deno", "openssl"];

/// Why a command needs the network, if it does.
pub fn needs_network(c: &Command) -> Option<String> {
    let program = c.program.as_str();
    if !NETWORK_PROGRAMS.contains(&program)
        && !SUBCOMMAND_TOOLS.contains(&program)
        && !MORE_SUBCOMMAND_TOOLS.contains(&program)
        && !program.starts_with("python")
    {
        return None;
    }
    let words: Vec<&str> = c.argv.iter().map(String::as_str).collect();
    let first = first_word(&words);
    let offline = words
        .iter()
        .any(|w| matches!(*w, "--offline" | "--frozen" | "--no-index"));
    let because = |what: &str| Some(format!("`{}` {what}", crate::intake::visible(&head(c))));
    if NETWORK_PROGRAMS.contains(&program) && !prints_only(&words) {
        return because("talks to other machines");
    }
    if program.starts_with("python") && served_port(&words).is_some() {
        return because("listens on a TCP port (a server to reach from this machine)");
    }
    let downloads = match program {
        "rsync" => words.iter().any(|w| is_remote_spec(w)),
        "git" => {
            (matches!(
                first,
                Some("clone" | "fetch" | "pull" | "push" | "ls-remote" | "submodule" | "archive")
            ) && !names_a_local_repository(&words))
                || (first == Some("remote")
                    && words.iter().any(|w| matches!(*w, "update" | "prune")))
                || (first == Some("remote") && words.contains(&"show") && !words.contains(&"-n"))
        }
        // `npm ci` installs what the lockfile pins, which the lines' npm cache may already hold:
        // it fetches on demand ([`fetches_on_demand`]).
        "npm" | "pnpm" if program == "npm" && first == Some("ci") => false,
        "npm" | "pnpm" => {
            matches!(
                first,
                Some(
                    "install"
                        | "i"
                        | "ci"
                        | "add"
                        | "update"
                        | "up"
                        | "upgrade"
                        | "publish"
                        | "dlx"
                        | "create"
                        | "outdated"
                        | "view"
                        | "info"
                        | "search"
                        | "audit"
                        | "login"
                        | "fetch"
                        | "rebuild"
                        | "link"
                )
            ) || (program == "pnpm" && first.is_none() && !prints_only(&words))
                || (program == "npm"
                    && matches!(first, Some("exec" | "x"))
                    && runs_a_script(&words))
                || (first == Some("init") && runs_an_initializer(&words))
        }
        // `npx TOOL` runs a project's own tool without the network ([`fetches_on_demand`]); a
        // script it is handed (`-c`) is not parsed here, so that one is still asked about.
        "npx" => runs_a_script(&words),
        "pnpx" | "bunx" | "pipx" | "uvx" => !prints_only(&words),
        "yarn" => {
            first.is_none() && !prints_only(&words)
                || matches!(
                    first,
                    Some(
                        "install" | "add" | "upgrade" | "up" | "dlx" | "npm" | "publish" | "create"
                    )
                )
        }
        "bun" => matches!(
            first,
            Some("install" | "i" | "add" | "update" | "x" | "create")
        ),
        "pip" | "pip3" => matches!(first, Some("install" | "download" | "wheel" | "search")),
        "python" | "python3" => python_module_network(&words),
        "uv" => matches!(
            first,
            Some("pip" | "sync" | "add" | "lock" | "run" | "tool")
        ),
        "poetry" => matches!(
            first,
            Some("install" | "add" | "update" | "lock" | "publish")
        ),
        "conda" | "mamba" | "micromamba" => {
            matches!(first, Some("install" | "create" | "update" | "search"))
        }
        // Builds fetch only what the cache lacks: they run without the network first
        // ([`fetches_on_demand`]); these always talk to a registry.
        "cargo" => {
            !offline
                && matches!(
                    first,
                    Some(
                        "fetch"
                            | "install"
                            | "update"
                            | "publish"
                            | "add"
                            | "search"
                            | "info"
                            | "login"
                            | "generate-lockfile"
                            | "vendor"
                    )
                )
        }
        // `build`, `test`, `run`, `vet` fetch only what the module cache lacks: on demand.
        "go" => matches!(first, Some("get" | "install" | "mod" | "generate")),
        "gem" => matches!(
            first,
            Some("install" | "update" | "fetch" | "push" | "search")
        ),
        "bundle" | "bundler" => matches!(first, Some("install" | "update" | "add" | "lock") | None),
        "composer" => matches!(
            first,
            Some("install" | "update" | "require" | "create-project")
        ),
        "mvn" | "mvnw" | "./mvnw" => !words.iter().any(|w| *w == "-o" || *w == "--offline"),
        "gradle" | "gradlew" => !offline && !prints_only(&words),
        "dotnet" => matches!(
            first,
            Some("restore" | "build" | "run" | "test" | "publish" | "add" | "tool" | "new")
        ),
        "apt" | "apt-get" | "aptitude" => matches!(
            first,
            Some(
                "install"
                    | "update"
                    | "upgrade"
                    | "dist-upgrade"
                    | "full-upgrade"
                    | "download"
                    | "source"
                    | "build-dep"
            )
        ),
        "dnf" | "yum" | "zypper" => matches!(
            first,
            Some("install" | "update" | "upgrade" | "download" | "makecache")
        ),
        "apk" => matches!(first, Some("add" | "update" | "upgrade" | "fetch")),
        "pacman" | "yay" | "paru" => words
            .iter()
            .any(|w| w.starts_with("-S") || w.starts_with("-U") || *w == "--sync"),
        "brew" => matches!(
            first,
            Some("install" | "update" | "upgrade" | "fetch" | "tap" | "reinstall")
        ),
        "snap" | "flatpak" => {
            matches!(first, Some("install" | "update" | "refresh" | "remote-add"))
        }
        "docker" | "podman" | "nerdctl" => matches!(
            first,
            Some(
                "pull"
                    | "push"
                    | "run"
                    | "build"
                    | "login"
                    | "compose"
                    | "buildx"
                    | "create"
                    | "search"
            )
        ),
        "helm" => matches!(
            first,
            Some("install" | "upgrade" | "repo" | "pull" | "push" | "dependency")
        ),
        "terraform" | "tofu" => matches!(
            first,
            Some("init" | "plan" | "apply" | "destroy" | "import" | "refresh" | "get" | "login")
        ),
        // `prints_only` covers `kubectl version --client`.
        "kubectl" | "oc" => !prints_only(&words),
        "ollama" => matches!(first, Some("pull" | "push" | "run")),
        "svn" => matches!(
            first,
            Some("checkout" | "co" | "update" | "up" | "commit" | "ci" | "export" | "import")
        ),
        "hg" => matches!(
            first,
            Some("clone" | "pull" | "push" | "incoming" | "outgoing")
        ),
        "deno" => matches!(first, Some("install" | "cache" | "add" | "upgrade")),
        "openssl" => matches!(first, Some("s_client" | "s_server" | "s_time" | "ocsp")),
        _ => false,
    };
    if downloads && !prints_only(&words) {
        return because("downloads or uploads");
    }
    None
}

/// The line's first word after options (a subcommand); `+toolchain` and option values are not
/// told apart from options, which only matters for odd lines.
fn first_word<'a>(words: &[&'a str]) -> Option<&'a str> {
    words
        .iter()
        .copied()
        .find(|w| !w.starts_with('-') && !w.starts_with('+'))
}

/// `TOOL --version`, `TOOL --help`, `TOOL -V`, `TOOL help …`.
fn prints_only(words: &[&str]) -> bool {
    matches!(
        words,
        ["--version" | "--help" | "-V" | "-v" | "-h" | "version" | "help"]
            | ["help", ..]
            | ["version", "--client"]
    )
}

/// `git clone|fetch|pull|push|ls-remote … REPOSITORY`, the repository a path on this machine
/// (`/srv/r.git`, `./r`, `../r`, `~/r`, `file://…`): the first word after the subcommand that is
/// not an option. An option's value taken for it (`git clone -b main …`) is a word that is no
/// such path, so the line stays a network line; a path taken for it wrongly only leaves the
/// network off, which the sandbox then holds (the line fails there, naming the connection).
fn names_a_local_repository(words: &[&str]) -> bool {
    let Some(at) = words
        .iter()
        .position(|w| !w.starts_with('-') && !w.starts_with('+'))
    else {
        return false;
    };
    if words[at] == "submodule" || words[at] == "archive" {
        return false;
    }
    words[at + 1..]
        .iter()
        .find(|w| !w.starts_with('-'))
        .is_some_and(|repository| {
            ["/", "./", "../", "~/", "file://"]
                .iter()
                .any(|p| repository.starts_with(p))
                || matches!(*repository, "." | "..")
        })
}

/// `npm init NAME` runs the initializer `create-NAME` (fetched, like `npx`); `npm init` and
/// `npm init -y` only write a `package.json`.
fn runs_an_initializer(words: &[&str]) -> bool {
    words
        .iter()
        .skip_while(|w| **w != "init")
        .skip(1)
        .any(|w| !w.starts_with('-'))
}

/// `host:path`, `user@host:path` or `rsync://…` (not a local path that merely holds a colon
/// after a slash).
fn is_remote_spec(word: &str) -> bool {
    if word.starts_with("rsync://") {
        return true;
    }
    match word.split_once(':') {
        Some((host, _)) => !host.is_empty() && !host.contains('/') && !word.starts_with('-'),
        None => false,
    }
}

/// `python -m pip install …`, `python -m smtpd`; `python -m venv` is local (and
/// `python -m http.server` listens: [`served_port`]).
fn python_module_network(words: &[&str]) -> bool {
    let module = words
        .iter()
        .position(|w| *w == "-m")
        .and_then(|at| words.get(at + 1).map(|m| (at, *m)));
    match module {
        Some((_, "smtpd" | "ftplib")) => true,
        Some((at, "pip")) => words
            .get(at + 2)
            .is_some_and(|sub| matches!(*sub, "install" | "download" | "wheel" | "search")),
        _ => false,
    }
}

/// The port `python -m http.server [-b ADDR] [-d DIR] [-p VERSION] [PORT]` listens on (8000
/// unless one is given), from the words after the program.
pub fn served_port(words: &[&str]) -> Option<u16> {
    let at = words.iter().position(|w| *w == "-m")?;
    if words.get(at + 1) != Some(&"http.server") {
        return None;
    }
    let mut rest = words.iter().skip(at + 2);
    while let Some(word) = rest.next() {
        match *word {
            "-b" | "--bind" | "-d" | "--directory" | "-p" | "--protocol" => {
                rest.next();
            }
            w if w.starts_with('-') => {}
            port => return port.parse().ok().filter(|p| *p != 0),
        }
    }
    Some(8000)
}

/// A command that reaches the network only to fetch what its cache or the project lacks: a
/// build (`cargo build`, `check`, `clippy`, `test`, `run`, `doc` …), `npx TOOL` / `npm exec`
/// (the project's own `node_modules/.bin/TOOL` when it has one, else a download), or `npm ci`
/// (the packages its lockfile pins, by their checksums, from the lines' npm cache when an earlier
/// install put them there; it removes `node_modules` first, as it always does). It is not
/// asked about, and runs without the network; only if the sandbox then refuses it a connection
/// (or a write inside the cache a fetch fills) is it offered again once with what a fetch needs
/// (see `gate::missing_grant`). Its writes otherwise stay in the workspace (`target/`) or, for
/// go's build cache, in the lines' own cache of the workspace (`super::needs::LINE_CACHES`),
/// which no build outside reads.
pub fn fetches_on_demand(c: &Command) -> bool {
    let words: Vec<&str> = c.argv.iter().map(String::as_str).collect();
    match c.program.as_str() {
        "cargo" => cargo_fetches_on_demand(&words),
        "go" => matches!(first_word(&words), Some("build" | "test" | "run" | "vet")),
        "npx" => !prints_only(&words) && !runs_a_script(&words),
        "npm" => {
            (matches!(first_word(&words), Some("exec" | "x")) && !runs_a_script(&words))
                || first_word(&words) == Some("ci")
        }
        _ => false,
    }
}

/// What a line with commands that fetch on demand is told in its first run, without the network:
/// its fetch can only fail, so it should fail at once rather than retry (cargo waits ≈ 10 s over
/// its retries before it gives up on a name it cannot look up, npm over a minute), and the person
/// is asked sooner. npm also looks up its own newest version, and writes a log into its cache and
/// removes old ones on every run: the lookup is off for that run and the log goes to `/dev/null`
/// (where npm gives up on it without a word; `logs-max=0` would still remove the old logs), so
/// that a project tool's own failure (`npx tsc` finding type errors) is not taken for a fetch.
/// And npm takes what its cache holds as it is (`prefer-offline`: no request to check that a
/// cached package document is still the newest; what is missing is still fetched, and refused):
/// `npm ci` installs the lockfile's packages from the cache, and `npx TOOL` runs the version the
/// cache has. Set by the gate; a person's shell never takes them back (`shell::state::changes`).
pub const FAIL_FETCHES_AT_ONCE: [(&str, &str); 5] = [
    ("CARGO_NET_RETRY", "0"),
    ("npm_config_fetch_retries", "0"),
    ("npm_config_update_notifier", "false"),
    ("npm_config_logs_dir", "/dev/null"),
    ("npm_config_prefer_offline", "true"),
];

/// `npx -c SCRIPT`, `npm exec --call=SCRIPT`: a shell script npm runs, which the parser does not
/// look into; such a line is judged as a download, as before `npx` fetched on demand.
fn runs_a_script(words: &[&str]) -> bool {
    words
        .iter()
        .take_while(|w| **w != "--")
        .any(|w| matches!(*w, "-c" | "--call") || w.starts_with("--call="))
}

/// A cargo command that talks to its registry only to read the index — it resolves versions
/// and writes the manifest or the lockfile (`cargo add`, `update`, `generate-lockfile`) or
/// prints what it found (`search`, `info`) — and downloads no crate, so builds nothing from
/// what it fetched: such a line gets a cargo home of the lines' own (see
/// `super::needs::LINE_CACHES`), never the person's.
pub fn cargo_reads_only_the_index(c: &Command) -> bool {
    let words: Vec<&str> = c.argv.iter().map(String::as_str).collect();
    c.program == "cargo"
        && matches!(
            first_word(&words),
            Some("add" | "update" | "generate-lockfile" | "search" | "info")
        )
}

fn cargo_fetches_on_demand(words: &[&str]) -> bool {
    let offline = words.iter().any(|w| matches!(*w, "--offline" | "--frozen"));
    !offline
        && matches!(
            first_word(words),
            Some(
                "build"
                    | "b"
                    | "check"
                    | "c"
                    | "test"
                    | "t"
                    | "run"
                    | "r"
                    | "bench"
                    | "doc"
                    | "d"
                    | "clippy"
                    | "tree"
                    | "fix"
                    | "metadata"
            )
        )
}

/// `program arg…` shortened, for a reason.
fn head(c: &Command) -> String {
    let text = c.argv_text();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(60).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// Why the line needs the network, if it does.
pub fn line_needs_network(parsed: &Parsed) -> Option<String> {
    if let Some(path) = parsed
        .reads
        .iter()
        .chain(parsed.writes.iter())
        .find(|p| is_network_path(p))
    {
        return Some(format!(
            "the redirection `{}` opens a network connection",
            crate::intake::visible(path)
        ));
    }
    parsed.commands.iter().find_map(needs_network)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ShellKind, parse};

    fn network(line: &str) -> bool {
        line_needs_network(&parse(line, ShellKind::Bash)).is_some()
    }

    #[test]
    fn network_lines() {
        for line in [
            "curl https://example.invalid",
            "wget -q x",
            "ssh host ls",
            "scp f host:",
            "rsync -a src/ host:/backup",
            "rsync -a rsync://host/x .",
            "npm install",
            "npm i left-pad",
            "pip install requests",
            "python3 -m pip install x",
            "python3 -m http.server 8000",
            "python3 -m http.server",
            "cargo fetch",
            "cargo install ripgrep",
            "cargo update",
            "git pull --rebase",
            "git push origin main",
            "git fetch",
            "git clone https://example.invalid/r.git",
            "git submodule update --init",
            "go get ./...",
            "apt-get install -y x",
            "docker pull alpine",
            "cat </dev/tcp/example.invalid/80",
            "echo x > /dev/udp/example.invalid/53",
            "dig example.invalid",
            "yarn",
            "pnpx create-react-app x",
            "npx -c 'rm -rf src'",
            "npx --yes --call='eslint .'",
            "npm exec -c 'git reset --hard'",
            "npm init vite",
            "npm init -y @scope/app",
            "git push backup main",
            "git clone -b main https://example.invalid/r.git",
            "git clone git@example.invalid:r.git",
            "git fetch ssh://example.invalid/r.git",
        ] {
            assert!(network(line), "{line}");
        }
        for line in [
            "cargo build",
            "cargo test --workspace",
            "npm ci",
            "go build ./...",
            "go test ./...",
            "cargo clippy --all-targets",
            "cargo build --offline",
            "cargo --version",
            "cargo fmt",
            "npm test",
            "npm run build",
            "git status",
            "git commit -m x",
            "rsync -a src/ backup/",
            "python3 -m venv .venv",
            "python3 -m pytest",
            "curl --version",
            "npm init -y",
            "npm init --yes",
            "pnpm init",
            "npx prettier -- -c x",
            "git push /srv/backup.git main",
            "git push ../backup.git",
            "git clone /srv/repo.git copy",
            "git clone --bare ./repo copy.git",
            "git pull file:///srv/repo.git main",
            "git fetch ~/mirror.git",
            "ls",
            "make",
            "npx tsc --noEmit",
            "npm exec -- eslint .",
        ] {
            assert!(!network(line), "{line}");
        }
    }

    #[test]
    fn builds_and_npx_fetch_on_demand_and_nothing_else_does() {
        let on_demand = |line: &str| {
            parse(line, ShellKind::Bash)
                .commands
                .iter()
                .any(fetches_on_demand)
        };
        for line in [
            "cargo build",
            "cargo b --release",
            "cargo check",
            "cargo clippy --all-targets -- -D warnings",
            "cargo test -p x",
            "cargo run -- --help",
            "cargo +nightly doc",
            "RUSTFLAGS=-g cargo build",
            "npx tsc --noEmit",
            "npx create-react-app x",
            "npm exec -- eslint .",
            "npm x prettier --check .",
            "go build ./...",
            "go test ./...",
            "go vet ./...",
            "go run ./cmd/x",
        ] {
            assert!(on_demand(line), "{line}");
        }
        for line in [
            "cargo build --offline",
            "cargo test --frozen",
            "cargo fetch",
            "cargo install x",
            "cargo add serde",
            "cargo fmt",
            "go mod tidy",
            "go get example.com/x",
            "npm test",
            "npm install",
            "npx --version",
            "pnpx create-react-app x",
            "npx -c 'rm -rf src'",
            "npm exec --call='git reset --hard'",
        ] {
            assert!(!on_demand(line), "{line}");
        }
    }
}
