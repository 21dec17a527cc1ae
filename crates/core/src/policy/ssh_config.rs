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
//! offers exactly its address. Only `ssh` itself; scp, sftp and rsync are judged as typed.

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

/// Writes where each `ssh ALIAS` command really goes into `parsed` (see the module).
pub fn resolve(parsed: &mut Parsed, config: &SshConfig) {
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
