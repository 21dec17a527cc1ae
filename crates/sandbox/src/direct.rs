//! Named hosts a line reaches without its proxy: ssh's.
//!
//! ssh (and scp, sftp, rsync over ssh, git's ssh transport) reads no proxy variable: a grant that
//! named its host could only be held by the proxy if the client went through it. So these hosts
//! are held by address instead, and their names resolved by shellgate, never by the line:
//!
//! - before the line starts, shellgate resolves each granted name ([`resolve`]) with the host's
//!   resolver;
//! - the supervisor connects the line's sockets straight to those addresses on the granted port,
//!   and to nothing else on it (`notify`, `unix_connect::Reach::addresses`);
//! - the line's `/etc/hosts` is a read-only file of its own ([`hosts_file`]) that gives each name
//!   exactly those addresses, ahead of the host's entries; with no port grant the line has no
//!   DNS (its only sockets are TCP, and port 53 is not granted), so a name resolves in the line
//!   only if shellgate put it there.
//!
//! Why an address may stand for the name here: ssh routes nothing by name — the server at an
//! address and port is the one the client talks to. On HTTPS one address serves many names (a
//! CDN), so every other named host is held by the proxy, which checks the name the client asks
//! for. What this does not cover: another ssh server at the same address and port under another
//! name (the same server), and a name whose addresses change while the line runs (the line keeps
//! the ones resolved at its start).

use shellgate_core::policy::endpoint::{Endpoint, Host};
use std::io::Read;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// The most of the host's `/etc/hosts` carried into a line's.
const HOST_FILE_LIMIT: u64 = 1 << 20;

/// One granted name and the addresses shellgate resolved for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub name: String,
    pub port: u16,
    pub addresses: Vec<IpAddr>,
}

/// Resolves each exact name of `direct` (an address literal is itself); a name that does not
/// resolve gets no address, so the line cannot reach it.
pub fn resolve(direct: &[Endpoint]) -> Vec<Resolved> {
    direct
        .iter()
        .filter_map(|endpoint| match &endpoint.host {
            Some(Host::Exact(name)) => Some(Resolved {
                name: name.clone(),
                port: endpoint.port,
                addresses: addresses_of(name, endpoint.port),
            }),
            Some(Host::Beneath(_)) | None => None,
        })
        .collect()
}

fn addresses_of(name: &str, port: u16) -> Vec<IpAddr> {
    if let Ok(ip) = name.parse::<IpAddr>() {
        return vec![ip];
    }
    let mut addresses: Vec<IpAddr> = (name, port)
        .to_socket_addrs()
        .map(|found| found.map(|a| a.ip()).collect())
        .unwrap_or_default();
    addresses.sort();
    addresses.dedup();
    addresses
}

/// Where the supervisor may connect the line's sockets for these hosts.
pub fn socket_addresses(resolved: &[Resolved]) -> Vec<SocketAddr> {
    resolved
        .iter()
        .flat_map(|r| r.addresses.iter().map(|ip| SocketAddr::new(*ip, r.port)))
        .collect()
}

/// The line's `/etc/hosts`: each resolved name with its addresses, then the host's own entries
/// (`host`, at most 1 MiB of it). `None` when no name needs one (address literals only).
pub fn hosts_file(resolved: &[Resolved], host: &[u8]) -> Option<Vec<u8>> {
    let names: Vec<&Resolved> = resolved
        .iter()
        .filter(|r| r.name.parse::<IpAddr>().is_err())
        .collect();
    if names.is_empty() {
        return None;
    }
    let mut text = String::from(
        "# shellgate: the hosts this line reaches directly, as shellgate resolved them\n",
    );
    for r in names {
        for ip in &r.addresses {
            text.push_str(&format!("{ip} {}\n", r.name));
        }
    }
    text.push_str("# the machine's /etc/hosts\n");
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(host);
    Some(bytes)
}

/// The host's `/etc/hosts` (at most [`HOST_FILE_LIMIT`] bytes; nothing when it cannot be read).
pub fn host_file(path: &std::path::Path) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.take(HOST_FILE_LIMIT).read_to_end(&mut bytes);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_first_with_exactly_their_addresses() {
        let resolved = vec![
            Resolved {
                name: "box.example".into(),
                port: 22,
                addresses: vec!["192.0.2.7".parse().unwrap(), "2001:db8::7".parse().unwrap()],
            },
            Resolved {
                name: "192.0.2.9".into(),
                port: 2222,
                addresses: vec!["192.0.2.9".parse().unwrap()],
            },
        ];
        let file = hosts_file(&resolved, b"127.0.0.1 localhost\n").unwrap();
        let text = String::from_utf8(file).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines,
            [
                "192.0.2.7 box.example",
                "2001:db8::7 box.example",
                "127.0.0.1 localhost"
            ]
        );
        assert_eq!(
            socket_addresses(&resolved),
            [
                "192.0.2.7:22".parse().unwrap(),
                "[2001:db8::7]:22".parse().unwrap(),
                "192.0.2.9:2222".parse().unwrap()
            ]
        );
        // Address literals need no names.
        assert_eq!(hosts_file(&resolved[1..], b""), None);
    }

    #[test]
    fn names_are_resolved_and_addresses_are_themselves() {
        // `localhost` is in every /etc/hosts: no lookup leaves the machine.
        let endpoints = [
            Endpoint::parse("localhost:22").unwrap(),
            Endpoint::parse("192.0.2.9:2222").unwrap(),
            Endpoint::parse("*.example.com:22").unwrap(),
        ];
        let resolved = resolve(&endpoints);
        assert_eq!(resolved.len(), 2, "a wildcard is never reached directly");
        assert!(
            resolved[0].addresses.iter().all(IpAddr::is_loopback)
                && !resolved[0].addresses.is_empty(),
            "{resolved:?}"
        );
        assert_eq!(
            resolved[1].addresses,
            ["192.0.2.9".parse::<IpAddr>().unwrap()]
        );
    }
}
