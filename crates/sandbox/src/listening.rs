//! Listening on a granted port, on loopback only: a line's dev server the person's browser
//! reaches, and nothing on the machine's other addresses.
//!
//! Landlock can hold the port of a `bind` but not its address, and seccomp cannot read the
//! address at all (it is in memory). So a line with a listening grant has its `bind` and `listen`
//! sent to the supervisor (refused where there is none), which **makes each call itself** on its
//! own copy of the socket (`pidfd_getfd`), as [`super::unix_connect`] does for `connect`:
//!
//! - `bind`: the supervisor reads the address once into its own memory; the port must be granted
//!   and the address loopback (`127.0.0.0/8`, `::1`, or their v4-mapped form), or the wildcard,
//!   which is bound as loopback of the socket's family (`0.0.0.0` as `127.0.0.1`, `::` as
//!   `::1`). Anything else is refused (`EACCES`) and reported, with the address asked for.
//! - `listen`: the socket must already be bound to a granted port on loopback — `listen` on an
//!   unbound socket would have the kernel bind it to a port of its own choosing on every address.
//!
//! Why that is all of it: a TCP socket takes connections only once it listens, and only these two
//! calls make it listen (Linux has no other way for a socket to be bound or listen: `connect`
//! binds an ephemeral port without listening, and `accept` needs a listening socket). Every
//! other socket a line can make is a TCP stream socket (the filter refuses UDP, raw and every
//! other protocol without the network), and Landlock refuses every `bind` the line makes itself
//! (the ruleset has no bind rule), so even a filter mistake could not bind. What is checked is
//! the supervisor's copy — of the socket (its family is fixed when it is made; a bound socket's
//! address never changes) and of the address — so neither memory the line changes after the
//! look nor another socket `dup2`-ed under the same number changes what is bound where.

use super::notify::Denial;
use super::unix_connect::{internet_address, pidfd_of, socket_family, take_descriptor};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// What the supervisor does with a `bind` or `listen`.
#[derive(Debug)]
pub enum Answer {
    /// Bind this socket (the supervisor's copy) to this address (`sockaddr_in`/`sockaddr_in6`
    /// bytes, already held to loopback).
    Bind(OwnedFd, Vec<u8>),
    /// Make this socket listen, with this backlog.
    Listen(OwnedFd, i32),
    /// Refused with this errno, and what the line asked for when it can be said.
    Refused(i32, Option<Denial>),
}

/// Decides the `bind(fd, address, len)` the process `tid` made, for a grant of `ports`.
pub fn decide_bind(tid: u32, args: &[u64; 6], ports: &[u16]) -> Answer {
    let socket = match internet_socket(tid, args[0]) {
        Ok(socket) => socket,
        Err(refused) => return refused,
    };
    let Some(family) = socket_family(&socket) else {
        return Answer::Refused(libc::ENOTSOCK, None);
    };
    let Some(mut bytes) = internet_address(tid, args[1], args[2] as usize, family) else {
        return Answer::Refused(libc::EINVAL, None);
    };
    let Some(asked) = super::notify::socket_address(&bytes) else {
        return Answer::Refused(libc::EINVAL, None);
    };
    match held_to_loopback(asked, ports) {
        Some(ip) => {
            write_ip(&mut bytes, ip);
            Answer::Bind(socket, bytes)
        }
        None => Answer::Refused(libc::EACCES, Some(Denial::Listen { address: asked })),
    }
}

/// Decides the `listen(fd, backlog)` the process `tid` made, for a grant of `ports`: only a
/// socket already bound where the grant allows.
pub fn decide_listen(tid: u32, args: &[u64; 6], ports: &[u16]) -> Answer {
    let socket = match internet_socket(tid, args[0]) {
        Ok(socket) => socket,
        Err(refused) => return refused,
    };
    let bound = match local_address(&socket) {
        Some(bound) => bound,
        None => return Answer::Refused(libc::EINVAL, None),
    };
    let granted = ports.contains(&bound.port()) && is_loopback(bound.ip());
    if !granted {
        return Answer::Refused(libc::EACCES, Some(Denial::Listen { address: bound }));
    }
    // The backlog is an `int`: its low 32 bits, as the kernel reads it.
    Answer::Listen(socket, args[1] as u32 as i32)
}

/// Makes the call decided: `0`, or `-errno`. Neither call blocks.
pub fn make(answer: &Answer) -> i32 {
    let ret = match answer {
        // SAFETY: `bytes` is a socket address of the length passed, read only by the kernel;
        // `socket` is a descriptor this process owns.
        Answer::Bind(socket, bytes) => unsafe {
            libc::bind(
                socket.as_raw_fd(),
                bytes.as_ptr().cast(),
                bytes.len() as libc::socklen_t,
            )
        },
        // SAFETY: listen takes a descriptor this process owns and an int.
        Answer::Listen(socket, backlog) => unsafe { libc::listen(socket.as_raw_fd(), *backlog) },
        Answer::Refused(errno, _) => return -errno,
    };
    if ret == 0 {
        0
    } else {
        -io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EACCES)
    }
}

/// The program's descriptor `fd` (the low 32 bits of the argument, an `int`), when it is an
/// internet socket; the refusal otherwise.
fn internet_socket(tid: u32, fd: u64) -> Result<OwnedFd, Answer> {
    let pid = pidfd_of(tid).map_err(|_| Answer::Refused(libc::EPERM, None))?;
    let socket = take_descriptor(&pid, fd as u32 as RawFd)
        .map_err(|_| Answer::Refused(libc::EBADF, None))?;
    match socket_family(&socket) {
        Some(libc::AF_INET | libc::AF_INET6) => Ok(socket),
        Some(_) => Err(Answer::Refused(libc::EACCES, None)),
        None => Err(Answer::Refused(libc::ENOTSOCK, None)),
    }
}

/// Where `asked` is bound under a grant of `ports`: its own address when that is loopback,
/// loopback of its family for the wildcard; `None` when the port is not granted or the address
/// is another of the machine's.
fn held_to_loopback(asked: SocketAddr, ports: &[u16]) -> Option<IpAddr> {
    if !ports.contains(&asked.port()) {
        return None;
    }
    match asked.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        IpAddr::V6(ip) if ip.is_unspecified() => Some(IpAddr::V6(Ipv6Addr::LOCALHOST)),
        ip if is_loopback(ip) => Some(ip),
        _ => None,
    }
}

/// `127.0.0.0/8`, `::1`, and `::ffff:127.x.y.z` (a v4 loopback address on a dual-stack socket).
pub fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => ip.is_loopback(),
        IpAddr::V6(ip) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Writes `ip` into the address field of a `sockaddr_in`/`sockaddr_in6` of the same family.
fn write_ip(bytes: &mut [u8], ip: IpAddr) {
    let (at, octets): (usize, Vec<u8>) = match ip {
        IpAddr::V4(ip) => (4, ip.octets().to_vec()),
        IpAddr::V6(ip) => (8, ip.octets().to_vec()),
    };
    if let Some(field) = bytes.get_mut(at..at + octets.len()) {
        field.copy_from_slice(&octets);
    }
}

/// The address `socket` is bound to (`getsockname`); port 0 when it is not bound.
fn local_address(socket: &OwnedFd) -> Option<SocketAddr> {
    // SAFETY: sockaddr_storage is plain old data; all-zero is valid.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: `storage` and `len` are writable and `len` is the size of `storage`.
    let ret = unsafe { libc::getsockname(socket.as_raw_fd(), (&raw mut storage).cast(), &mut len) };
    if ret != 0 {
        return None;
    }
    // SAFETY: the kernel wrote `len` bytes of `storage`, which is at least that long.
    let bytes =
        unsafe { std::slice::from_raw_parts((&raw const storage).cast::<u8>(), len as usize) };
    super::notify::socket_address(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn the_wildcard_is_bound_as_loopback_and_other_addresses_never() {
        let ports = [8000];
        let held = |a| held_to_loopback(addr(a), &ports);
        assert_eq!(held("0.0.0.0:8000"), Some("127.0.0.1".parse().unwrap()));
        assert_eq!(held("[::]:8000"), Some("::1".parse().unwrap()));
        assert_eq!(held("127.0.0.1:8000"), Some("127.0.0.1".parse().unwrap()));
        assert_eq!(held("127.1.2.3:8000"), Some("127.1.2.3".parse().unwrap()));
        assert_eq!(held("[::1]:8000"), Some("::1".parse().unwrap()));
        assert_eq!(
            held("[::ffff:127.0.0.1]:8000"),
            Some("::ffff:127.0.0.1".parse().unwrap())
        );
        for refused in [
            "127.0.0.1:8001",
            "0.0.0.0:0",
            "127.0.0.1:0",
            "192.168.1.5:8000",
            "10.0.0.1:8000",
            "[fe80::1]:8000",
            "[::ffff:0.0.0.0]:8000",
            "[::ffff:192.168.1.5]:8000",
        ] {
            assert_eq!(held(refused), None, "{refused}");
        }
    }

    #[test]
    fn the_address_is_rewritten_in_place_for_either_family() {
        let mut v4 = vec![0u8; std::mem::size_of::<libc::sockaddr_in>()];
        v4[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        v4[2..4].copy_from_slice(&8000u16.to_be_bytes());
        write_ip(&mut v4, IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(
            super::super::notify::socket_address(&v4),
            Some(addr("127.0.0.1:8000"))
        );
        let mut v6 = vec![0u8; std::mem::size_of::<libc::sockaddr_in6>()];
        v6[..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
        v6[2..4].copy_from_slice(&8000u16.to_be_bytes());
        write_ip(&mut v6, IpAddr::V6(Ipv6Addr::LOCALHOST));
        assert_eq!(
            super::super::notify::socket_address(&v6),
            Some(addr("[::1]:8000"))
        );
    }
}
