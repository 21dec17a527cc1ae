//! Where `ssh ALIAS` really goes: the person's `~/.ssh/config` read for the alias's `HostName` and
//! `Port`, so that the grant names the host ssh will connect to, not the alias.
//!
//! ssh resolves `Host` blocks itself: the first value of each keyword, from every block whose
//! patterns match the name as typed, wins. The binary reads the file (`src/ssh_config.rs`; the
//! policy reads no files) and [`resolve`] writes the result into the judged command — `ssh box
//! uptime` with `Host box` / `HostName 127.0.0.1` / `Port 2222` is judged as `ssh -p 2222
//! 127.0.0.1 uptime` — so the question shows the real host and the sandbox reaches it (its hosts
//! file names `HostName` when that is a name, which the line's ssh then looks up). The line that
//! runs is the one typed: its ssh reads the same file and goes to the same place.
//!
//! Narrow on purpose: a config that uses `Match` or `Include` is not followed at all (what they
//! select is not known without running or reading more), nor an alias whose blocks set
//! `ProxyJump` or `ProxyCommand` or whose `HostName` holds a token other than `%h`; those lines
//! are judged as typed, and the sandbox then refuses ssh's real connection, named, and escalation
//! offers exactly its address. scp, sftp and rsync are judged where their alias operands go
//! as far as one line can say it ([`resolve_copy`]).

use crate::parse::Parsed;

/// The `Host` blocks of an ssh config file, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SshConfig {
    blocks: Vec<Block>,
    /// It uses `Match` or `Include`: nothing of it is followed.
    unsure: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Block {
    /// `None`: the settings before the first `Host` line, which hold for every host.
    patterns: Option<Vec<String>>,
    /// Keyword (lowercase) and value, in order.
    settings: Vec<(String, String)>,
}

/// Where an alias goes, as its config says.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    host_name: Option<String>,
    port: Option<u16>,
}

impl SshConfig {
    /// The blocks of a config file's text.
    pub fn from_text(text: &str) -> SshConfig {
        let mut config = SshConfig {
            blocks: vec![Block::default()],
            unsure: false,
        };
        for raw in text.lines() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (keyword, value) = match line.split_once(|c: char| c == '=' || c.is_whitespace()) {
                Some((k, v)) => (
                    k.to_ascii_lowercase(),
                    v.trim().trim_start_matches('=').trim(),
                ),
                None => (line.to_ascii_lowercase(), ""),
            };
            let value = value.trim_matches('"').to_owned();
            match keyword.as_str() {
                "match" | "include" => config.unsure = true,
                "host" => config.blocks.push(Block {
                    patterns: Some(
                        value
                            .split_whitespace()
                            .map(str::to_ascii_lowercase)
                            .collect(),
                    ),
                    settings: Vec::new(),
                }),
                _ => {
                    if let Some(block) = config.blocks.last_mut() {
                        block.settings.push((keyword, value));
                    }
                }
            }
        }
        config
    }

    /// Where `name` goes, when the config says it goes elsewhere and that can be told.
    fn target(&self, name: &str) -> Option<Target> {
        if self.unsure {
            return None;
        }
        let name = name.to_ascii_lowercase();
        let first = |keyword: &str| {
            self.blocks
                .iter()
                .filter(|b| {
                    b.patterns
                        .as_ref()
                        .is_none_or(|p| matches_patterns(p, &name))
                })
                .flat_map(|b| b.settings.iter())
                .find(|(k, _)| k == keyword)
                .map(|(_, v)| v.clone())
        };
        if first("proxyjump").is_some_and(|v| !v.eq_ignore_ascii_case("none"))
            || first("proxycommand").is_some_and(|v| !v.eq_ignore_ascii_case("none"))
        {
            return None;
        }
        let host_name = match first("hostname") {
            Some(value) => Some(expand_host(&value, &name)?),
            None => None,
        };
        let port = match first("port") {
            Some(value) => Some(value.parse::<u16>().ok().filter(|p| *p != 0)?),
            None => None,
        };
        (host_name.is_some() || port.is_some()).then_some(Target { host_name, port })
    }
}

/// `HostName` with `%h` (the name as typed) and `%%` expanded; `None` for any other token.
fn expand_host(value: &str, name: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('h') => out.push_str(name),
            Some('%') => out.push('%'),
            _ => return None,
        }
    }
    Some(out)
}

/// Whether a `Host` line's patterns select `name`: one of them matches and no negated one does.
fn matches_patterns(patterns: &[String], name: &str) -> bool {
    let mut selected = false;
    for pattern in patterns {
        match pattern.strip_prefix('!') {
            Some(negated) if glob(negated, name) => return false,
            Some(_) => {}
            None => selected |= glob(pattern, name),
        }
    }
    selected
}

/// ssh's patterns: `*` any run of characters, `?` one.
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// Writes where each `ssh ALIAS` command (and scp's, sftp's and rsync's alias operands, see
/// [`resolve_copy`]) really goes into `parsed` (see the module).
pub fn resolve(parsed: &mut Parsed, config: &SshConfig) {
    for command in parsed
        .commands
        .iter_mut()
        .filter(|c| matches!(c.program.as_str(), "scp" | "sftp" | "rsync"))
    {
        resolve_copy(command, config);
    }
    for command in parsed.commands.iter_mut().filter(|c| c.program == "ssh") {
        let Some((at, has_port)) = destination(&command.argv) else {
            continue;
        };
        let destination = command.argv[at].clone();
        if destination.contains("://") {
            continue;
        }
        let (user, host) = match destination.rsplit_once('@') {
            Some((user, host)) => (Some(user), host),
            None => (None, destination.as_str()),
        };
        let Some(target) = config.target(host) else {
            continue;
        };
        if let Some(host_name) = &target.host_name {
            command.argv[at] = match user {
                Some(user) => format!("{user}@{host_name}"),
                None => host_name.clone(),
            };
        }
        if let (Some(port), false) = (target.port, has_port) {
            command.argv.insert(at, port.to_string());
            command.argv.insert(at, "-p".to_owned());
        }
        while command.shapes.len() < command.argv.len() {
            command.shapes.push(Default::default());
        }
    }
}

/// scp's and rsync's remote operands (`[user@]host:path`) and sftp's destination
/// (`[user@]host[:path]`) that name an alias, written as where they go, and the port the config
/// gives them as `-P N` (scp, sftp) when the line gives none. One port serves all of a line's
/// operands, so operands whose ports differ leave the line as typed; so does an rsync line whose
/// port is not 22 (rsync carries a port only in its own remote shell, `-e 'ssh -p N'`), and any
/// line whose words say ssh goes elsewhere or are expanded at run time.
fn resolve_copy(command: &mut crate::parse::Command, config: &SshConfig) {
    let words: Vec<&str> = command.argv.iter().map(String::as_str).collect();
    let args = super::ssh_args::scan(&command.program, &words);
    if args.expanded || args.elsewhere {
        return;
    }
    let sftp = command.program == "sftp";
    let mut rewritten: Vec<(usize, String)> = Vec::new();
    let mut ports: Vec<u16> = Vec::new();
    for (at, operand) in &args.operands {
        let Some(remote) = Remote::of(operand, sftp) else {
            continue;
        };
        let target = config.target(remote.host);
        ports.push(target.as_ref().and_then(|t| t.port).unwrap_or(22));
        if let Some(host_name) = target.and_then(|t| t.host_name) {
            rewritten.push((*at, remote.with_host(&host_name)));
        }
    }
    let port = match ports.split_first() {
        Some((first, rest)) if rest.iter().all(|p| p == first) => Some(*first),
        Some(_) => return,
        None => None,
    };
    let port_word = port.filter(|p| !args.sets_port && *p != 22);
    if command.program == "rsync" && port_word.is_some() {
        return;
    }
    for (at, word) in rewritten {
        command.argv[at] = word;
    }
    if let Some(port) = port_word {
        command.argv.insert(0, port.to_string());
        command.argv.insert(0, "-P".to_owned());
    }
    while command.shapes.len() < command.argv.len() {
        command.shapes.push(Default::default());
    }
}

/// A remote operand of scp, sftp or rsync, split around its host.
struct Remote<'a> {
    /// `user@`, or nothing.
    user: &'a str,
    host: &'a str,
    /// `:path`, or nothing (sftp).
    rest: &'a str,
}

impl<'a> Remote<'a> {
    /// `[user@]host:path` (sftp: `[user@]host[:path]`); `None` for a local path, a URL
    /// (`scp://`, `rsync://`), rsync's daemon (`host::module`) or a bracketed IPv6 address.
    fn of(operand: &'a str, sftp: bool) -> Option<Remote<'a>> {
        if operand.contains("://") || operand.contains("::") || operand.contains('[') {
            return None;
        }
        let (head, rest) = match operand.find(':') {
            Some(at) => (&operand[..at], &operand[at..]),
            None if sftp => (operand, ""),
            None => return None,
        };
        if head.is_empty() || head.contains('/') {
            return None;
        }
        let (user, host) = match head.rfind('@') {
            Some(at) => (&head[..=at], &head[at + 1..]),
            None => ("", head),
        };
        (!host.is_empty()).then_some(Remote { user, host, rest })
    }

    fn with_host(&self, host: &str) -> String {
        format!("{}{host}{}", self.user, self.rest)
    }
}

/// ssh's destination among its words ([`super::ssh_args`]), and whether the line gives a port
/// itself; `None` when it cannot be told (a word the shell expands, no destination) or the words
/// say ssh goes elsewhere (`-F` names another config; `-J`, `-o ProxyCommand=`): judged as typed.
fn destination(argv: &[String]) -> Option<(usize, bool)> {
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    let args = super::ssh_args::scan("ssh", &words);
    if args.expanded || args.elsewhere {
        return None;
    }
    let (at, _) = args.operands.first()?;
    Some((*at, args.sets_port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ShellKind, parse};

    const CONFIG: &str = "\
# the team's
Host box
    HostName 127.0.0.1
    Port 2222
Host *.corp !jump.corp
    HostName %h.example.com
Host jumped
    ProxyJump bastion
Host *
    User dev
    Port 22
";

    fn resolved(line: &str, text: &str) -> Vec<String> {
        let mut parsed = parse(line, ShellKind::Bash);
        resolve(&mut parsed, &SshConfig::from_text(text));
        parsed.commands[0].argv.clone()
    }

    #[test]
    fn an_alias_is_judged_where_it_goes() {
        assert_eq!(
            resolved("ssh box uptime", CONFIG),
            ["-p", "2222", "127.0.0.1", "uptime"]
        );
        assert_eq!(
            resolved("ssh -v me@box", CONFIG),
            ["-v", "-p", "2222", "me@127.0.0.1"]
        );
        // The line's own port wins, as in ssh.
        assert_eq!(
            resolved("ssh -p 2200 box", CONFIG),
            ["-p", "2200", "127.0.0.1"]
        );
        assert_eq!(
            resolved("ssh db.corp true", CONFIG),
            ["-p", "22", "db.corp.example.com", "true"]
        );
        // Negated, behind a jump host, or not an alias at all: as typed (the catch-all's port
        // alone changes nothing).
        for (line, expected) in [
            ("ssh jump.corp", vec!["-p", "22", "jump.corp"]),
            ("ssh jumped ls", vec!["jumped", "ls"]),
            ("ssh \"$HOST\"", vec!["$HOST"]),
            // ssh reads the line's own config instead, or goes through a jump host.
            ("ssh -F ./cfg box", vec!["-F", "./cfg", "box"]),
            ("ssh -J bastion box", vec!["-J", "bastion", "box"]),
        ] {
            assert_eq!(resolved(line, CONFIG), expected, "{line}");
        }
        // A config that uses Match or Include is not followed.
        let unsure = format!("Include ~/.ssh/more\n{CONFIG}");
        assert_eq!(resolved("ssh box", &unsure), ["box"]);
    }

    /// scp, sftp and rsync: each remote operand that is an alias, where it goes, with its port
    /// (one for the line); what cannot be carried is left as typed.
    #[test]
    fn copies_to_an_alias_are_judged_where_they_go() {
        assert_eq!(
            resolved("scp -r dist me@box:/srv/app", CONFIG),
            ["-P", "2222", "-r", "dist", "me@127.0.0.1:/srv/app"]
        );
        assert_eq!(
            resolved("scp db.corp:/var/log/x.log .", CONFIG),
            ["db.corp.example.com:/var/log/x.log", "."]
        );
        assert_eq!(resolved("sftp box", CONFIG), ["-P", "2222", "127.0.0.1"]);
        assert_eq!(
            resolved("rsync -av src/ db.corp:/srv/", CONFIG),
            ["-av", "src/", "db.corp.example.com:/srv/"]
        );
        // The line's own port wins; local paths stay.
        assert_eq!(
            resolved("scp -P 2200 ./a:b box:/tmp", CONFIG),
            ["-P", "2200", "./a:b", "127.0.0.1:/tmp"]
        );
        for (line, expected) in [
            // rsync has no word for ssh's port but its remote shell.
            ("rsync -av src/ box:/srv/", vec!["-av", "src/", "box:/srv/"]),
            // Two ports for one line.
            ("scp box:/a db.corp:/b", vec!["box:/a", "db.corp:/b"]),
            // Elsewhere, expanded, a daemon, behind a jump host.
            (
                "scp -J bastion f box:/tmp",
                vec!["-J", "bastion", "f", "box:/tmp"],
            ),
            ("scp f \"$H\":/tmp", vec!["f", "$H:/tmp"]),
            (
                "rsync -av src/ box::module",
                vec!["-av", "src/", "box::module"],
            ),
            ("scp f jumped:/tmp", vec!["f", "jumped:/tmp"]),
        ] {
            assert_eq!(resolved(line, CONFIG), expected, "{line}");
        }
    }

    #[test]
    fn patterns_are_sshs() {
        assert!(glob("*.corp", "db.corp") && glob("b?x", "box") && glob("*", "x"));
        assert!(!glob("*.corp", "corp") && !glob("b?x", "bx"));
        assert!(!matches_patterns(
            &["*.corp".into(), "!jump.corp".into()],
            "jump.corp"
        ));
        assert_eq!(expand_host("%h.x%%", "a"), Some("a.x%".to_owned()));
        assert_eq!(expand_host("%p.x", "a"), None);
    }
}
