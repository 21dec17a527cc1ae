//! Credential stores: which paths on a line name credentials, and which store they belong to.
//!
//! What a line reads can leave the machine through the agent, so naming a credential store is
//! never allowed by the rules alone (`builtin.credential-read`). Paths are compared after
//! lexical normalisation (`~/.ssh//id_rsa`, `$HOME/./.ssh/id_rsa` and `/home/dev/.ssh/id_rsa` are
//! the same file), through a change of directory on the line (`cd ~/.ssh && cat id_rsa`), inside
//! patterns (`cat ~/.ssh/*`, `cat ~/.*/id_rsa`), as option values (`--data-binary=@PATH`) and input
//! redirections (`cat < ~/.netrc`). A program that reads whole directory trees is flagged when it
//! is pointed at the home directory or `/` (`grep -r 'PRIVATE KEY' ~`, `rg token /`), and the
//! environment of processes counts as a store (`/proc/*/environ`, `ps e`).

use crate::parse::Command;

/// A credential store: what it is called in a reason, and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Store {
    pub name: &'static str,
    /// The path below the home directory (or an absolute path), `/`-separated.
    pub path: &'static str,
    /// Every file below `path` is a credential (else only `path` itself is one).
    pub tree: bool,
}

const fn store(name: &'static str, path: &'static str, tree: bool) -> Store {
    Store { name, path, tree }
}

/// The stores, by where they live below the home directory (absolute ones start with `/`). The
/// sandbox hides every one below a home ([`home_stores`]), and the policy flags a line that names
/// one: one list, so what is hidden and what is judged a credential read cannot drift apart.
pub const STORES: [Store; 86] = [
    store("SSH keys", ".ssh", true),
    store("GnuPG keys", ".gnupg", true),
    // Cloud providers.
    store("AWS credentials", ".aws", true),
    store("Azure credentials", ".azure", true),
    store("Google Cloud credentials", ".config/gcloud", true),
    store("Oracle Cloud credentials", ".oci", true),
    store("DigitalOcean tokens", ".config/doctl", true),
    store("Hetzner Cloud tokens", ".config/hcloud", true),
    store("Linode tokens", ".config/linode-cli", false),
    store("Scaleway credentials", ".config/scw", true),
    store("Alibaba Cloud credentials", ".aliyun", true),
    store("Fly.io tokens", ".fly", true),
    store("Netlify tokens", ".config/netlify", true),
    store("Vercel tokens", ".local/share/com.vercel.cli", true),
    store("Cloudflare tokens", ".wrangler", true),
    store("Cloudflare tokens", ".config/.wrangler", true),
    store("Cloudflare tunnel credentials", ".cloudflared", true),
    store("S3 credentials", ".s3cfg", false),
    store("boto credentials", ".boto", false),
    store("rclone remotes", ".config/rclone", true),
    store("1Password CLI sessions", ".config/op", true),
    // Code hosting, containers, clusters.
    store("GitHub CLI tokens", ".config/gh", true),
    store("GitHub Copilot tokens", ".config/github-copilot", true),
    store("hub tokens", ".config/hub", false),
    store("Docker registry credentials", ".docker/config.json", false),
    store(
        "container registry credentials",
        ".config/containers/auth.json",
        false,
    ),
    store("Kubernetes credentials", ".kube", true),
    store(
        "Helm repository credentials",
        ".config/helm/repositories.yaml",
        false,
    ),
    store("netrc passwords", ".netrc", false),
    store("git credentials", ".git-credentials", false),
    store("git credentials", ".config/git/credentials", false),
    // Database clients.
    store("PostgreSQL passwords", ".pgpass", false),
    store("PostgreSQL service passwords", ".pg_service.conf", false),
    store("MySQL passwords", ".my.cnf", false),
    store("MySQL login paths", ".mylogin.cnf", false),
    store("Cassandra passwords", ".cassandra/cqlshrc", false),
    store("InfluxDB tokens", ".influxdbv2", true),
    // Infrastructure as code, secret managers, encryption keys.
    store("Terraform tokens", ".terraformrc", false),
    store(
        "Terraform tokens",
        ".terraform.d/credentials.tfrc.json",
        false,
    ),
    store("Vault token", ".vault-token", false),
    store("password store", ".password-store", true),
    store("age keys", ".age", true),
    store("age keys", ".config/age", true),
    store("sops keys", ".config/sops", true),
    store("desktop keyrings", ".local/share/keyrings", true),
    store("certificate stores", ".pki", true),
    store("X display cookies", ".Xauthority", false),
    // Package registries.
    store("PyPI tokens", ".pypirc", false),
    store("pip index credentials", ".config/pip/pip.conf", false),
    store("pip index credentials", ".pip/pip.conf", false),
    store("Poetry credentials", ".config/pypoetry/auth.toml", false),
    store("npm tokens", ".npmrc", false),
    store("Yarn tokens", ".yarnrc", false),
    store("Yarn tokens", ".yarnrc.yml", false),
    store("RubyGems credentials", ".gem/credentials", false),
    store("Bundler credentials", ".bundle/config", false),
    store("Cargo registry tokens", ".cargo/credentials", false),
    store("Cargo registry tokens", ".cargo/credentials.toml", false),
    store("Composer tokens", ".composer/auth.json", false),
    store("Composer tokens", ".config/composer/auth.json", false),
    store("Gradle credentials", ".gradle/gradle.properties", false),
    store("Maven credentials", ".m2/settings.xml", false),
    store("Maven credentials", ".m2/settings-security.xml", false),
    store("NuGet credentials", ".nuget/NuGet/NuGet.Config", false),
    store("NuGet credentials", ".config/NuGet/NuGet.Config", false),
    store("Hex tokens", ".hex/hex.config", false),
    // Model hubs and AI services.
    store("Hugging Face tokens", ".cache/huggingface/token", false),
    store(
        "Hugging Face tokens",
        ".cache/huggingface/stored_tokens",
        false,
    ),
    store("Hugging Face tokens", ".huggingface/token", false),
    store("Kaggle tokens", ".kaggle/kaggle.json", false),
    store("Kaggle tokens", ".config/kaggle/kaggle.json", false),
    store("Ollama keys", ".ollama/id_ed25519", false),
    store("Modal tokens", ".modal.toml", false),
    store("Codex tokens", ".codex/auth.json", false),
    store("Claude Code tokens", ".claude/.credentials.json", false),
    store(
        "Claude Code tokens",
        ".config/claude/.credentials.json",
        false,
    ),
    store("Gemini CLI tokens", ".gemini/oauth_creds.json", false),
    // Environment files in the home directory.
    store("environment files", ".env", false),
    store("direnv environment files", ".envrc", false),
    // Browsers: cookies and saved passwords.
    store("Firefox profiles", ".mozilla", true),
    store("Chrome profiles", ".config/google-chrome", true),
    store("Chromium profiles", ".config/chromium", true),
    store("Brave profiles", ".config/BraveSoftware", true),
    // The system's own.
    store("shadow passwords", "/etc/shadow", false),
    store("shadow passwords", "/etc/gshadow", false),
    store("sudoers", "/etc/sudoers", false),
];

/// The stores below a home directory, as paths relative to it, for the sandbox to hide. `~/.ssh`
/// is not among them: the sandbox hides what is in it except the public files ssh needs.
pub fn home_stores() -> impl Iterator<Item = &'static str> {
    STORES
        .iter()
        .map(|s| s.path)
        .filter(|path| !path.starts_with('/') && *path != ".ssh")
}

/// Whether a file named `name` is the store `store_name` (a path's last component) or a copy of
/// it that holds the same secrets: a backup or a variant (`.netrc~`, `.netrc.bak`, `.netrc.orig`,
/// `.pgpass.save`, `.env.local`, `.env.production`, `credentials.toml.old`), an editor's swap or
/// auto-save file (`.credentials.swp`, `#.netrc#`). `~/.ssh`'s copies are copies too (`.ssh.bak`).
pub fn is_copy_name(name: &str, store_name: &str) -> bool {
    if name == store_name {
        return true;
    }
    if let Some(rest) = name.strip_prefix(store_name)
        && (rest == "~" || (rest.len() > 1 && rest.starts_with('.')))
    {
        return true;
    }
    if let Some(inner) = name.strip_prefix('#').and_then(|n| n.strip_suffix('#')) {
        return inner == store_name;
    }
    // vim's swap files for a name that does not start with a dot (`credentials` → `.credentials.swp`;
    // `.netrc.swp` is a variant above).
    name.strip_prefix('.')
        .and_then(|n| n.rsplit_once('.'))
        .is_some_and(|(inner, ext)| inner == store_name && matches!(ext, "swp" | "swo" | "swx"))
}

/// Public files inside an SSH directory.
const SSH_PUBLIC: [&str; 4] = [
    "known_hosts",
    "known_hosts.old",
    "config",
    "authorized_keys",
];

/// What a path names, credential-wise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// A credential, or a pattern that may match one.
    File(&'static str),
    /// A store's directory itself (`~/.ssh`): credentials for a program that reads what a
    /// directory holds, not for one that lists it.
    Directory(&'static str),
}

impl Named {
    pub fn store(self) -> &'static str {
        match self {
            Named::File(name) | Named::Directory(name) => name,
        }
    }
}

/// A path split into segments after lexical normalisation: the home directory as written
/// (`~`, `$HOME`, `${HOME}`, `/home/<user>`, `/root`, `/Users/<user>`) becomes `~`, empty and
/// `.` segments go, `..` removes the segment before it.
fn segments(path: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut parts = path.split('/').peekable();
    let absolute = path.starts_with('/');
    if absolute {
        parts.next();
    }
    let first = parts.peek().copied();
    match first {
        // `~user` is another home directory, as much a home as `~`.
        Some(home) if home.starts_with('~') || home == "$HOME" || home == "${HOME}" => {
            out.push("~");
            parts.next();
        }
        _ if absolute => out.push(""),
        _ => {}
    }
    for part in parts {
        match part {
            "" | "." => {}
            ".." => {
                if out.len() > 1 || out.first().is_some_and(|f| !f.is_empty() && *f != "~") {
                    out.pop();
                }
            }
            p => out.push(p),
        }
    }
    // `/home/<user>/…`, `/Users/<user>/…` and `/root/…` are a home directory.
    if out.first() == Some(&"") {
        let home = match out.get(1) {
            Some(&"home" | &"Users") if out.len() > 2 => Some(3),
            Some(&"root") => Some(2),
            _ => None,
        };
        if let Some(len) = home {
            out.splice(..len, ["~"]);
        }
    }
    out
}

/// What `path` names. Relative paths are relative to the working directory (or to a directory
/// the line changes to: the caller joins them).
pub fn named(path: &str) -> Option<Named> {
    let path = path.rsplit_once('=').map_or(path, |(_, value)| value);
    let path = path.strip_prefix('@').unwrap_or(path);
    // Every store is below the home directory or `/`: a word without a `/` names none.
    if !path.contains('/') {
        return None;
    }
    let segs = segments(path);
    if !matches!(segs.first(), Some(&"~" | &"")) {
        return None;
    }
    if let Some(found) = proc_environ(&segs) {
        return Some(found);
    }
    for store in STORES {
        if let Some(found) = in_store(&segs, store) {
            return Some(found);
        }
    }
    None
}

/// The store a path written to is in: as [`named`], and every file of an SSH directory
/// (`>> ~/.ssh/authorized_keys` lets someone in).
pub fn written_store(path: &str) -> Option<&'static str> {
    if let Some(found) = named(path) {
        return Some(found.store());
    }
    let segs = segments(path);
    (segs.len() > 2 && segs[0] == "~" && segs[1] == ".ssh").then_some("SSH keys")
}

/// `/proc/PID/environ`, `/proc/*/environ`, `/proc/self/task/TID/environ`: another process's
/// environment, where agents keep their API keys.
fn proc_environ(segs: &[&str]) -> Option<Named> {
    let is_proc = segs.first() == Some(&"") && segs.get(1) == Some(&"proc");
    let last = segs.last().copied().unwrap_or("");
    if is_proc && (last == "environ" || (is_pattern(last) && glob_matches(last, "environ"))) {
        return Some(Named::File("process environments (/proc/*/environ)"));
    }
    // `/etc/ssh/ssh_host_*_key`: the machine's SSH host keys (not their `.pub`).
    let host_key = segs.len() == 4
        && segs[..3] == ["", "etc", "ssh"]
        && (last.starts_with("ssh_host_") || is_pattern(last))
        && !last.ends_with(".pub")
        && !matches!(last, "ssh_config" | "sshd_config" | "moduli");
    host_key.then_some(Named::File("SSH host keys (/etc/ssh)"))
}

/// Does the path (segments, normalised) name `store` or something in it?
fn in_store(segs: &[&str], store: Store) -> Option<Named> {
    let (base, rest) = match store.path.strip_prefix('/') {
        Some(absolute) => ("", absolute),
        None => ("~", store.path),
    };
    // A store's own segments, then (for a tree) anything below it.
    let mut by_pattern = false;
    let mut matched = 0;
    let last = rest.split('/').count();
    for (i, expected) in std::iter::once(base).chain(rest.split('/')).enumerate() {
        matched = i + 1;
        let Some(actual) = segs.get(i) else {
            // The path is a parent of the store: `~`, `~/.config` — not the store itself.
            return None;
        };
        if *actual == expected || (i == last && is_copy_name(actual, expected)) {
            continue;
        }
        // A pattern segment that may match the store's segment (`~/.*/id_rsa`, `~/.ss?`), when
        // more follows it or it is the store's last segment.
        if i > 0 && is_pattern(actual) && glob_matches(actual, expected) {
            by_pattern = true;
            continue;
        }
        return None;
    }
    let below = &segs[matched..];
    match below.first() {
        None if store.tree => Some(Named::Directory(store.name)),
        None => Some(Named::File(store.name)),
        Some(_) if !store.tree => None,
        // `~/.ssh/config` is public; `~/.ss?/config` may be more than that directory's.
        Some(file)
            if store.path == ".ssh"
                && below.len() == 1
                && !by_pattern
                && is_public_ssh_file(file) =>
        {
            None
        }
        Some(_) => Some(Named::File(store.name)),
    }
}

fn is_public_ssh_file(name: &str) -> bool {
    !is_pattern(name) && (name.ends_with(".pub") || SSH_PUBLIC.contains(&name))
}

fn is_pattern(segment: &str) -> bool {
    segment.contains(['*', '?', '[', '{'])
}

/// Does a shell pattern (`*`, `?`, `[…]`; a brace list is taken as `*`) match `name`? Only used
/// to ask whether a pattern could reach a store, so it may say yes too often. As in bash (without
/// `dotglob`), a leading `.` must be matched by a literal `.`.
fn glob_matches(pattern: &str, name: &str) -> bool {
    if name.starts_with('.') && !pattern.starts_with('.') {
        return false;
    }
    fn go(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('*' | '{', rest)) => {
                let rest = if p[0] == '{' {
                    rest.iter()
                        .position(|c| *c == '}')
                        .map_or(rest, |end| &rest[end + 1..])
                } else {
                    rest
                };
                (0..=n.len()).any(|k| go(rest, &n[k..]))
            }
            Some(('?', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some(('[', rest)) => match rest.iter().position(|c| *c == ']') {
                Some(end) => !n.is_empty() && go(&rest[end + 1..], &n[1..]),
                None => n.first() == Some(&'[') && go(rest, &n[1..]),
            },
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // A pattern longer than any name it is compared with (4,000 characters at most) is cheap to
    // refuse; the recursion is bounded by the pattern's stars.
    p.iter().filter(|c| **c == '*').count() <= 16 && go(&p, &n)
}

/// Programs that only look at a directory's entries, never its files: given a store's directory
/// itself (`ls ~/.ssh`), they read no credentials.
const LISTS_DIRECTORIES: [&str; 11] = [
    "ls", "stat", "du", "cd", "pushd", "test", "[", "realpath", "readlink", "dirname", "basename",
];

/// Programs that read whole directory trees (with these options, where they need one).
fn reads_trees(c: &Command) -> bool {
    let has = |options: &[&str]| {
        c.argv.iter().any(|a| {
            options.contains(&a.as_str())
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && options
                        .iter()
                        .any(|o| o.len() == 2 && a[1..].contains(&o[1..])))
        })
    };
    match c.program.as_str() {
        "grep" | "egrep" | "fgrep" => has(&["-r", "-R", "--recursive", "--dereference-recursive"]),
        "rg" | "ag" | "ack" | "find" | "tar" | "rsync" | "zip" | "7z" | "bsdtar" => true,
        "cp" | "scp" => has(&["-r", "-R", "-a", "--recursive", "--archive"]),
        "git" => c.argv.iter().any(|a| a == "--no-index"),
        _ => false,
    }
}

/// The home directory or `/` itself.
fn is_home_or_root(path: &str) -> bool {
    let segs = segments(path.trim_end_matches("/*"));
    matches!(segs.as_slice(), ["~"] | [""]) || (segs.is_empty() && path.starts_with('/'))
}

/// Which store the command reads (or writes), if any; `dirs` are directories the line changes
/// to, which its relative paths are joined with.
pub fn store_named_by(c: &Command, dirs: &[String]) -> Option<(String, &'static str)> {
    let lists = LISTS_DIRECTORIES.contains(&c.program.as_str());
    if let Some(path) = c.writes.iter().find(|w| written_store(w).is_some()) {
        return written_store(path).map(|store| (path.clone(), store));
    }
    let paths = c.argv.iter().chain(c.reads.iter());
    let credential = |found: Option<Named>| match found {
        Some(Named::File(store)) => Some(store),
        Some(Named::Directory(store)) if !lists => Some(store),
        _ => None,
    };
    for arg in paths {
        if let Some(store) = credential(named(arg)) {
            return Some((arg.clone(), store));
        }
        // A path inside an argument is read too, though not as an operand: `date -f~/.netrc`,
        // awk's `ARGV[1]="/home/u/.netrc"` or `getline < "…"`, sed's `r ~/.netrc`.
        for piece in embedded_paths(arg) {
            let named_here = std::iter::once(piece.to_owned())
                .chain(candidates(piece, dirs).into_iter().skip(1))
                .find_map(|candidate| credential(named(&candidate)));
            if let Some(store) = named_here {
                return Some((arg.clone(), store));
            }
        }
        // Joined with the directories the line changes to, and by a credential's file name.
        let joinable = (!dirs.is_empty() && !arg.starts_with('-')) || arg.contains(['$', '`']);
        if joinable
            && let Some(store) = candidates(arg, dirs)
                .iter()
                .skip(1)
                .find_map(|candidate| credential(named(candidate)))
        {
            return Some((arg.clone(), store));
        }
    }
    if reads_trees(c)
        && let Some(arg) = c.argv.iter().find(|a| is_home_or_root(a))
    {
        return Some((
            arg.clone(),
            "every store in the home directory (a recursive read)",
        ));
    }
    if c.program == "ps"
        && c.argv.iter().any(|a| {
            !a.starts_with('-') && a.contains('e') && a.chars().all(|ch| ch.is_ascii_alphabetic())
        })
    {
        return Some(("e".to_owned(), "process environments (`ps e`)"));
    }
    None
}

/// The paths written inside an argument besides the argument itself: the value glued to a short
/// option (`-f~/.netrc` → `~/.netrc`), and each quoted, bracketed or separated part that starts like
/// a path (`BEGIN{ARGV[1]="/home/u/.netrc"}` → `/home/u/.netrc`) or names a credential file
/// (`ARGV[1]=".netrc"`, joined with the directories the line changes to by the caller).
fn embedded_paths(arg: &str) -> Vec<&str> {
    let separators = |c: char| c.is_whitespace() || "\"'`;(),=<>|&[]:".contains(c);
    let mut out: Vec<&str> = Vec::new();
    for piece in arg.split(separators).filter(|p| !p.is_empty() && *p != arg) {
        out.push(piece);
    }
    if let Some(short) = arg.strip_prefix('-').filter(|a| !a.starts_with('-'))
        && let Some(at) = short.find(['~', '/'])
    {
        out.push(&short[at..]);
    }
    out.retain(|p| {
        p.starts_with(['/', '~', '$']) || is_credential_name(p.rsplit('/').next().unwrap_or(p))
    });
    out
}

/// The path as written, and joined with each directory the line changes to.
pub fn candidates(arg: &str, dirs: &[String]) -> Vec<String> {
    let mut out = vec![arg.to_owned()];
    let value = arg.rsplit_once('=').map_or(arg, |(_, v)| v);
    let relative = !value.starts_with(['/', '~', '$', '-']);
    if relative && !value.is_empty() {
        out.extend(dirs.iter().map(|dir| format!("{dir}/{value}")));
    }
    // A path whose directory is only known at run time (`$(ls -d ~/.ssh)/id_rsa`) still names a
    // credential by its file name.
    if value.contains(['$', '`'])
        && let Some(name) = value.rsplit('/').next()
        && is_credential_name(name)
    {
        out.push(format!("~/.ssh/{name}"));
    }
    out
}

/// File names that are credentials wherever they are.
fn is_credential_name(name: &str) -> bool {
    const NAMES: [&str; 14] = [
        ".netrc",
        ".git-credentials",
        ".pgpass",
        ".pypirc",
        ".npmrc",
        ".vault-token",
        ".terraformrc",
        ".my.cnf",
        ".mylogin.cnf",
        ".env",
        "credentials",
        ".credentials.json",
        "oauth_creds.json",
        "id_rsa",
    ];
    NAMES.contains(&name)
        || (name.starts_with("id_") && !name.ends_with(".pub") && !name.contains(['$', '`']))
}

/// The directories a line changes to: `cd DIR`, `pushd DIR`, `env -C DIR`; `cd` alone (or
/// `cd ~`) is the home directory, and a directory only known at run time (`cd "$d"`, `cd -`)
/// may be the home directory too.
pub fn directories_entered(commands: &[Command]) -> Vec<String> {
    /// Bounds the joins of relative changes (`cd a; cd b; …`).
    const MAX_DIRS: usize = 32;
    let mut dirs: Vec<String> = Vec::new();
    let enter = |dirs: &mut Vec<String>, dir: &str| {
        let relative = !dir.starts_with(['/', '~', '$']);
        let joined: Vec<String> = if relative {
            dirs.iter().map(|d| format!("{d}/{dir}")).collect()
        } else {
            Vec::new()
        };
        for candidate in std::iter::once(dir.to_owned()).chain(joined) {
            if dirs.len() < MAX_DIRS && !dirs.contains(&candidate) {
                dirs.push(candidate);
            }
        }
    };
    for c in commands {
        if let Some(dir) = c.via.iter().find_map(|v| v.strip_prefix("env -C ")) {
            enter(&mut dirs, dir);
        }
        if !matches!(c.program.as_str(), "cd" | "pushd" | "chdir") {
            continue;
        }
        let target = c
            .argv
            .iter()
            .zip(c.shapes.iter())
            .find(|(a, _)| !a.starts_with('-') || *a == "-");
        match target {
            None => enter(&mut dirs, "~"),
            Some((dir, shape)) if dir == "-" || shape.multi || shape.start_unknown => {
                enter(&mut dirs, "~");
            }
            Some((dir, _)) if dir.starts_with('$') && !dir.starts_with("$HOME") => {
                enter(&mut dirs, "~");
            }
            Some((dir, _)) => enter(&mut dirs, dir),
        }
    }
    dirs
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_normalised_before_they_are_compared() {
        for path in [
            "~/.ssh/id_rsa",
            "~/.ssh//id_rsa",
            "~//.ssh/id_ed25519",
            "$HOME/./.ssh/id_rsa",
            "${HOME}/.ssh/../.ssh/id_rsa",
            "/home/dev/.ssh/id_ecdsa",
            "/root/.ssh/id_rsa",
            "/Users/me/.ssh/mykey",
            "~/.ssh/*",
            "~/.*/id_rsa",
            "~/.ss?/config2",
            "~/.terraformrc",
            "~/.my.cnf",
            "~/.env",
            "~/.env.production",
            "~/.netrc.bak",
            "~/.netrc~",
            "~/#.pgpass#",
            "~/.cargo/.credentials.toml.swp",
            "~/.aws.bak/credentials",
            "~/.ssh.old/id_rsa",
            "~/.cache/huggingface/token",
            "~/.config/sops/age/keys.txt",
            "~/.age/key.txt",
            "~/.kaggle/kaggle.json",
            "~/.aws/credentials",
            "~/.aws/sso/cache/x.json",
            "~/.config/gh/hosts.yml",
            "~/.docker/config.json",
            "~/.kube/config",
            "~/.netrc",
            "~/.git-credentials",
            "~/.npmrc",
            "~/.pypirc",
            "~/.cargo/credentials.toml",
            "~/.codex/auth.json",
            "~/.claude/.credentials.json",
            "~/.gnupg/private-keys-v1.d/x.key",
            "/etc/shadow",
            "/proc/1/environ",
            "/proc/self/environ",
            "/proc/*/environ",
            "/etc/ssh/ssh_host_ed25519_key",
            "~root/.ssh/id_rsa",
            "~bob/.aws/credentials",
            "@/home/dev/.ssh/id_rsa",
            "--data-binary=@~/.netrc",
            "~/.*rc",
        ] {
            assert!(matches!(named(path), Some(Named::File(_))), "{path}");
        }
        for path in ["~/.ssh", "~/.ssh/", "~/.gnupg", "~/.aws", "$HOME/.kube"] {
            assert!(matches!(named(path), Some(Named::Directory(_))), "{path}");
        }
        for path in [
            "~/.ssh/id_rsa.pub",
            "~/.ssh/known_hosts",
            "~/.ssh/config",
            "~",
            "~/.config",
            "src/credentials.rs",
            "README.md",
            "/proc/1/status",
            "/etc/ssh/ssh_host_ed25519_key.pub",
            "/etc/ssh/sshd_config",
            "/home/dev/project/.ssh-notes",
            "/home/dev/project/.env",
            ".env",
            "~/.envoy",
            "~/.netrcx",
            "~/.cache/huggingface/hub/x",
        ] {
            assert_eq!(named(path), None, "{path}");
        }
    }
}
