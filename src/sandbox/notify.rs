//! The supervisor's side of the reported refusals: what a sandboxed line tried that the sandbox
//! refused, with as much precision as the kernel gives.
//!
//! Without the network, the seccomp filter sends `connect` (and the creation of a UDP socket,
//! which is how a DNS lookup starts) to a listener instead of failing it silently (see
//! [`crate::sandbox::seccomp::Deny::Reported`]). The supervisor — the process that started the
//! sandbox, outside it — receives each call, reads the address the line passed from the line's
//! memory, records it, and answers with the refusal (`EPERM`) itself: the call never runs, so
//! nothing the line changes in its memory afterwards matters (no `CONTINUE` is ever sent). What
//! it records becomes the missing grant an escalation offers (see `gate`).

use serde::Serialize;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd};

/// Something the sandbox refused that the line needed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Denial {
    /// A TCP connection to this address.
    Connect { address: SocketAddr },
    /// A connection whose address could not be read (an unknown family, unreadable memory).
    ConnectElsewhere,
    /// A UDP socket: a DNS lookup, most often.
    Udp,
}

impl Denial {
    /// What the line tried, in words.
    pub fn describe(&self) -> String {
        match self {
            Denial::Connect { address } => format!("a connection to {address}"),
            Denial::ConnectElsewhere => "a network connection".to_owned(),
            Denial::Udp => "a UDP socket (a DNS lookup, most often)".to_owned(),
        }
    }
}

/// The most denials one line records (a loop of failing connects says no more after that).
const MAX_DENIALS: usize = 32;

/// Receives one notification from `listener`, answers it with `EPERM`, and returns what it was.
/// `Ok(None)` when there was nothing to receive (the notification was withdrawn: the process
/// died, or a signal interrupted the call).
pub fn handle_one(listener: &OwnedFd) -> io::Result<Option<Denial>> {
    let fd = listener.as_raw_fd();
    // SAFETY: seccomp_notif is plain old data; the kernel requires it zeroed before RECV.
    let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
    // SAFETY: `notif` is a valid, writable seccomp_notif; the ioctl fills it in.
    let ret = unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut notif) };
    if ret < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::EINTR) => Ok(None),
            _ => Err(e),
        };
    }
    let denial = denial_of(&notif);
    // The answer: the call fails with EPERM, as it would have without a supervisor. A withdrawn
    // notification (ENOENT) needs no answer.
    let response = libc::seccomp_notif_resp {
        id: notif.id,
        val: 0,
        error: -libc::EPERM,
        flags: 0,
    };
    // SAFETY: `response` is a valid seccomp_notif_resp; the ioctl only reads it.
    let ret = unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_SEND, &response) };
    if ret < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::ENOENT) {
        return Err(io::Error::last_os_error());
    }
    Ok(Some(denial))
}

/// Adds `denial` to `list` unless it is there already or the list is full.
pub fn record(list: &mut Vec<Denial>, denial: Denial) {
    if list.len() < MAX_DENIALS && !list.contains(&denial) {
        list.push(denial);
    }
}

fn denial_of(notif: &libc::seccomp_notif) -> Denial {
    if notif.data.nr as i64 == libc::SYS_socket {
        return Denial::Udp;
    }
    // connect(fd, addr, len)
    let (pointer, len) = (notif.data.args[1], notif.data.args[2] as usize);
    read_memory(notif.pid, pointer, len.min(128))
        .and_then(|bytes| socket_address(&bytes))
        .map_or(Denial::ConnectElsewhere, |address| Denial::Connect {
            address,
        })
}

/// `len` bytes at `address` in process `pid` (whose call is held by the kernel meanwhile).
fn read_memory(pid: u32, address: u64, len: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut buf = vec![0u8; len];
    let n = file.read_at(&mut buf, address).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// A `sockaddr_in` / `sockaddr_in6` as the kernel lays them out.
fn socket_address(bytes: &[u8]) -> Option<SocketAddr> {
    let family = u16::from_ne_bytes(bytes.get(..2)?.try_into().ok()?);
    let port = u16::from_be_bytes(bytes.get(2..4)?.try_into().ok()?);
    match i32::from(family) {
        libc::AF_INET => {
            let ip: [u8; 4] = bytes.get(4..8)?.try_into().ok()?;
            Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::from(ip)), port))
        }
        libc::AF_INET6 => {
            let ip: [u8; 16] = bytes.get(8..24)?.try_into().ok()?;
            Some(SocketAddr::new(IpAddr::V6(Ipv6Addr::from(ip)), port))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_addresses_are_read_as_the_kernel_lays_them_out() {
        let mut v4 = vec![0u8; 16];
        v4[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        v4[2..4].copy_from_slice(&443u16.to_be_bytes());
        v4[4..8].copy_from_slice(&[93, 184, 216, 34]);
        assert_eq!(
            socket_address(&v4),
            Some("93.184.216.34:443".parse().unwrap())
        );
        let mut v6 = vec![0u8; 28];
        v6[..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
        v6[2..4].copy_from_slice(&22u16.to_be_bytes());
        v6[8..24].copy_from_slice(&Ipv6Addr::LOCALHOST.octets());
        assert_eq!(socket_address(&v6), Some("[::1]:22".parse().unwrap()));
        assert_eq!(socket_address(&[1, 0]), None);
    }
}
