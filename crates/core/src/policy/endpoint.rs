//! Where a granted TCP connection may go: a port on any host, or a port on named hosts.
//!
//! A host is a DNS name (`registry.npmjs.org`), a wildcard for the names beneath a domain
//! (`*.githubusercontent.com`: `raw.githubusercontent.com`, `a.b.githubusercontent.com`, not the
//! domain itself), or an address literal (`127.0.0.1`, `[::1]`). Names are compared without case
//! and without a final dot. The sandbox holds a named host by its proxy (see `sandbox::proxy`),
//! which decides on the name the line asked for and resolves only that; a port on any host is
//! held by Landlock.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

/// A port, on any host or on the hosts `host` names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint {
    /// `None`: any host.
    pub host: Option<Host>,
    pub port: u16,
}

/// The hosts an endpoint names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Host {
    /// One name, or one address literal (IPv6 without brackets), lowercase.
    Exact(String),
    /// Every name strictly beneath this domain (`*.example.com` holds `example.com`).
    Beneath(String),
}

impl Endpoint {
    /// Any host on `port`.
    pub fn any(port: u16) -> Endpoint {
        Endpoint { host: None, port }
    }

    /// `port` on `host` (a name, `*.domain` or an address literal); `None` when `host` is none.
    pub fn named(host: &str, port: u16) -> Option<Endpoint> {
        let host = Host::parse(host.trim_start_matches('[').trim_end_matches(']'))?;
        (port != 0).then_some(Endpoint {
            host: Some(host),
            port,
        })
    }

    /// Reads `host:port`, `*.domain:port` or `[v6]:port`; `None` for anything else (no port,
    /// port 0, a host that is no name or address).
    pub fn parse(text: &str) -> Option<Endpoint> {
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (v6, port) = rest.split_once("]:")?;
            v6.parse::<Ipv6Addr>().ok()?;
            (v6, port)
        } else {
            text.rsplit_once(':')?
        };
        let port: u16 = port.parse().ok().filter(|p| *p != 0)?;
        Some(Endpoint {
            host: Some(Host::parse(host)?),
            port,
        })
    }

    /// Whether a connection to `host` (a name or an address literal, as a client asked for it)
    /// on `port` is one this endpoint gives.
    pub fn admits(&self, host: &str, port: u16) -> bool {
        self.port == port && self.host.as_ref().is_none_or(|h| h.admits(host))
    }

    /// What both give (`None`: nothing): the narrower of two endpoints when one holds the other.
    pub fn meet(&self, other: &Endpoint) -> Option<Endpoint> {
        if self.port != other.port {
            return None;
        }
        match (&self.host, &other.host) {
            (None, _) => Some(other.clone()),
            (_, None) => Some(self.clone()),
            (Some(a), Some(b)) if a.holds(b) => Some(other.clone()),
            (Some(a), Some(b)) if b.holds(a) => Some(self.clone()),
            _ => None,
        }
    }
}

impl Host {
    /// A name (letters, digits, `-`, `_`, dots between labels), `*.` before one, or an address.
    pub fn parse(text: &str) -> Option<Host> {
        let lower = normal(text);
        if lower.parse::<Ipv4Addr>().is_ok() || lower.parse::<Ipv6Addr>().is_ok() {
            return Some(Host::Exact(lower));
        }
        match lower.strip_prefix("*.") {
            Some(domain) if is_name(domain) => Some(Host::Beneath(domain.to_owned())),
            None if is_name(&lower) => Some(Host::Exact(lower)),
            _ => None,
        }
    }

    /// Whether the host a client asked for is one of these.
    pub fn admits(&self, asked: &str) -> bool {
        let asked = normal(asked.trim_start_matches('[').trim_end_matches(']'));
        match self {
            Host::Exact(name) => *name == asked,
            Host::Beneath(domain) => asked
                .strip_suffix(domain.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }

    /// Whether every host `other` names is one of these.
    fn holds(&self, other: &Host) -> bool {
        match other {
            Host::Exact(name) => self.admits(name),
            Host::Beneath(domain) => match self {
                Host::Exact(_) => false,
                Host::Beneath(mine) => domain == mine || Host::Beneath(mine.clone()).admits(domain),
            },
        }
    }
}

/// Lowercase, without a final dot.
fn normal(host: &str) -> String {
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

/// A DNS name: labels of letters, digits, `-` and `_`, 1 to 63 bytes, joined by dots.
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 253
        && text.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Exact(name) if name.contains(':') => write!(f, "[{name}]"),
            Host::Exact(name) => f.write_str(name),
            Host::Beneath(domain) => write!(f, "*.{domain}"),
        }
    }
}

/// `443` (any host) or `registry.npmjs.org:443`.
impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.host {
            None => write!(f, "{}", self.port),
            Some(host) => write!(f, "{host}:{}", self.port),
        }
    }
}

/// As written: `443` or `host:port` (a string, either way).
impl serde::Serialize for Endpoint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Endpoint {
        Endpoint::parse(text).unwrap()
    }

    #[test]
    fn endpoints_read_and_print_as_written() {
        for text in [
            "registry.npmjs.org:443",
            "*.githubusercontent.com:443",
            "127.0.0.1:8080",
            "[::1]:3000",
            "localhost:5432",
        ] {
            assert_eq!(at(text).to_string(), text);
        }
        assert_eq!(at("Example.COM.:80").to_string(), "example.com:80");
        for bad in [
            "example.com",
            "example.com:0",
            "example.com:x",
            "exa mple.com:80",
            "*.:443",
            "a.*.com:443",
            ":443",
            "[::1:443",
            "evil.com/x:443",
        ] {
            assert_eq!(Endpoint::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_named_host_admits_that_name_on_that_port_only() {
        let npm = at("registry.npmjs.org:443");
        assert!(npm.admits("registry.npmjs.org", 443));
        assert!(npm.admits("REGISTRY.npmjs.org.", 443));
        assert!(!npm.admits("registry.npmjs.org", 80));
        assert!(!npm.admits("evil.registry.npmjs.org", 443));
        assert!(!npm.admits("npmjs.org", 443));
        assert!(!npm.admits("104.16.0.1", 443));
        let wild = at("*.example.com:443");
        assert!(wild.admits("a.example.com", 443));
        assert!(wild.admits("a.b.example.com", 443));
        assert!(!wild.admits("example.com", 443));
        assert!(!wild.admits("badexample.com", 443));
        assert!(!wild.admits(".example.com", 443));
        assert!(at("[::1]:80").admits("::1", 80));
        assert!(at("[::1]:80").admits("[::1]", 80));
        assert!(Endpoint::any(22).admits("anything", 22));
        assert!(!Endpoint::any(22).admits("anything", 23));
    }

    #[test]
    fn endpoints_meet_at_the_narrower() {
        let any = Endpoint::any(443);
        let npm = at("registry.npmjs.org:443");
        let wild = at("*.npmjs.org:443");
        let deeper = at("*.x.npmjs.org:443");
        assert_eq!(any.meet(&npm), Some(npm.clone()));
        assert_eq!(npm.meet(&any), Some(npm.clone()));
        assert_eq!(wild.meet(&npm), Some(npm.clone()));
        assert_eq!(npm.meet(&wild), Some(npm.clone()));
        assert_eq!(wild.meet(&deeper), Some(deeper.clone()));
        assert_eq!(deeper.meet(&wild), Some(deeper.clone()));
        assert_eq!(npm.meet(&at("registry.npmjs.org:80")), None);
        assert_eq!(npm.meet(&at("example.com:443")), None);
        assert_eq!(deeper.meet(&npm), None);
    }
}
