//! Unix sockets by name, for a program that may reach exactly some of them (the contained agent
//! under `wrap`, which reaches the broker's socket and nothing else).
//!
//! Mounts cannot keep a program from connecting to a socket it can see (a socket on a read-only
//! mount still takes connections), and seccomp cannot read the address a `connect` names (it is
//! in memory). So such a program's filter sends every `connect` to the supervisor, which decides
//! on what cannot change under it: the *socket* the call is about, taken from the program with
//! `pidfd_getfd` — its family is fixed when it is made — and its own copy of the address. Then
//! the supervisor **makes the connection itself**, on that socket, and the program's call returns
//! its result without running: neither an address changed in memory after the look nor another
//! socket put under the same descriptor number by another thread (`dup2`) changes what is
//! connected. An internet socket is connected to the internet address read (the program has the
//! network); a unix socket only to an allowed socket, by the supervisor's own path for it. Any
//! other family, and a unix socket named anything else, is refused (`EACCES`).

use crate::sys;
use std::ffi::OsStr;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the supervisor does with a `connect`.
#[derive(Debug)]
pub enum Answer {
    /// Connect this socket (the supervisor's copy of the program's) to this address; the call
    /// returns the result ([`connect`]).
    Connect(OwnedFd, Address),
    /// Refused with this errno; the unix socket it named, when one could be read.
    Refused(i32, Option<PathBuf>),
}

/// Where the supervisor connects a socket.
#[derive(Debug)]
pub enum Address {
    /// An internet address, as the program gave it (`sockaddr_in` or `sockaddr_in6` bytes, their
    /// family checked against the socket's).
    Internet(Vec<u8>),
    /// An allowed unix socket: the socket file held since before the program started (see
    /// [`Allowed::new`]).
    Unix(Arc<OwnedFd>),
    /// The line's proxy (see [`super::proxy`]): the socket is bound to a loopback port the
    /// proxy is told to expect, then connected there.
    Proxy(Arc<super::proxy::Door>),
}

/// The sockets a program may connect to, each by its path and by the identity of its directory
/// (for a path given as `/proc/self/fd/N/NAME`, how a path longer than a socket address can be
/// is reached).
///
/// Each socket file is also **held** from the start (an `O_PATH` descriptor, opened before the
/// program runs, through the caller's own view of the path, following no symbolic link): the
/// supervisor connects through
/// `/proc/self/fd/N`, which reaches that very socket whatever the program does to the path
/// meanwhile. The path of a line's granted socket may lie in a directory the line can write (the
/// ssh agent's under `/tmp`): replaced by a symbolic link to another socket (the docker daemon's),
/// a connection by path would follow it.
#[derive(Debug, Clone, Default)]
pub struct Allowed {
    sockets: Vec<Socket>,
}

#[derive(Debug, Clone)]
struct Socket {
    path: PathBuf,
    /// The identity of its directory.
    dir: Option<(u64, u64)>,
    /// The socket file, held (`None`: it was not a socket when the program started).
    held: Option<Arc<OwnedFd>>,
}

impl Allowed {
    pub fn new(paths: &[PathBuf]) -> Allowed {
        let sockets = paths
            .iter()
            .map(|path| {
                let dir = path
                    .parent()
                    .and_then(|d| std::fs::metadata(d).ok())
                    .map(|m| {
                        use std::os::unix::fs::MetadataExt;
                        (m.dev(), m.ino())
                    });
                Socket {
                    path: path.clone(),
                    dir,
                    held: hold_socket(path).map(Arc::new),
                }
            })
            .collect();
        Allowed { sockets }
    }

    pub fn is_empty(&self) -> bool {
        self.sockets.is_empty()
    }

    /// The allowed socket `address` (a `sun_path` as the program wrote it, in process `pid`)
    /// names: an absolute path equal to one, or `/proc/self/fd/N/NAME` where the program's
    /// descriptor `N` is that socket's directory and `NAME` its name. Relative and abstract
    /// names are never allowed.
    fn resolve(&self, address: &[u8], pid: &OwnedFd) -> Option<&Socket> {
        let path = Path::new(OsStr::from_bytes(address));
        if let Some(socket) = self.sockets.iter().find(|s| s.path == path) {
            return Some(socket);
        }
        let rest = address.strip_prefix(b"/proc/self/fd/")?;
        let slash = rest.iter().position(|b| *b == b'/')?;
        let fd: RawFd = std::str::from_utf8(rest.get(..slash)?).ok()?.parse().ok()?;
        let name = OsStr::from_bytes(rest.get(slash + 1..)?);
        let dir = take_descriptor(pid, fd).ok()?;
        let st = sys::fstat(std::os::fd::AsFd::as_fd(&dir)).ok()?;
        self.sockets
            .iter()
            .find(|s| s.dir == Some((st.st_dev, st.st_ino)) && s.path.file_name() == Some(name))
    }
}

/// Where a program's internet sockets may connect.
#[derive(Debug, Clone, Copy)]
pub struct Reach<'a> {
    /// Anywhere.
    pub network: bool,
    /// Without `network`: to these ports (a line granted a socket and a port: ssh's agent and
    /// port 22; a line granted a port on any host beside named hosts).
    pub tcp_ports: &'a [u16],
    /// Without `network`: to the line's proxy, at its exact address.
    pub proxy: Option<&'a Arc<super::proxy::Door>>,
    /// Without `network`: to these exact addresses, which a grant names by address (`127.0.0.1:5432`,
    /// `localhost:5432`): reached without the proxy too, by clients that take none (a database's).
    pub addresses: &'a [std::net::SocketAddr],
}

/// Decides the `connect(fd, address, len)` the process `tid` made (`args` from its registers).
pub fn decide(tid: u32, args: &[u64; 6], allowed: &Allowed, reach: Reach) -> Answer {
    let Ok(pid) = pidfd_of(tid) else {
        return Answer::Refused(libc::EPERM, None);
    };
    let Ok(socket) = take_descriptor(&pid, args[0] as RawFd) else {
        return Answer::Refused(libc::EBADF, None);
    };
    match socket_family(&socket) {
        Some(family @ (libc::AF_INET | libc::AF_INET6)) => {
            let Some(address) = internet_address(tid, args[1], args[2] as usize, family) else {
                return Answer::Refused(libc::EINVAL, None);
            };
            let named = super::notify::socket_address(&address);
            let to_proxy = reach.proxy.filter(|door| {
                named == Some(std::net::SocketAddr::V4(door.address())) && family == libc::AF_INET
            });
            if let Some(door) = to_proxy {
                Answer::Connect(socket, Address::Proxy(door.clone()))
            } else if reach.network
                || named.is_some_and(|a| {
                    reach.tcp_ports.contains(&a.port()) || reach.addresses.contains(&a)
                })
            {
                Answer::Connect(socket, Address::Internet(address))
            } else {
                Answer::Refused(libc::EPERM, None)
            }
        }
        Some(libc::AF_UNIX) => {
            let Some(address) = unix_path(tid, args[1], args[2] as usize) else {
                return Answer::Refused(libc::EACCES, None);
            };
            match allowed.resolve(&address, &pid) {
                Some(allowed) => match &allowed.held {
                    Some(held) => Answer::Connect(socket, Address::Unix(held.clone())),
                    // Not a socket reached without a link when the program started: nothing
                    // to connect to (by its path now, it could be anything put there since).
                    None => Answer::Refused(libc::ECONNREFUSED, Some(allowed.path.clone())),
                },
                None => Answer::Refused(
                    libc::EACCES,
                    Some(PathBuf::from(OsStr::from_bytes(&address))),
                ),
            }
        }
        _ => Answer::Refused(libc::EPERM, None),
    }
}

/// Connects `socket` to `address`: `0`, or `-errno` (`-EINPROGRESS` for a non-blocking socket
/// whose connection goes on). A blocking socket blocks here, so the caller runs it on a thread
/// of its own.
pub fn connect(socket: &OwnedFd, address: &Address) -> i32 {
    match address {
        Address::Internet(bytes) => connect_raw(socket, bytes),
        Address::Unix(held) => connect_to(
            socket,
            Path::new(&format!("/proc/self/fd/{}", held.as_raw_fd())),
        ),
        Address::Proxy(door) => connect_to_proxy(socket, door),
    }
}

/// Binds the program's socket to a loopback port (unless it is bound already), tells the proxy
/// to expect a connection from there, and connects it to the proxy: `0`, or `-errno`.
fn connect_to_proxy(socket: &OwnedFd, door: &super::proxy::Door) -> i32 {
    let loopback = sockaddr_in(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0));
    // SAFETY: `loopback` is a sockaddr_in of the length passed, read only by the kernel. A
    // socket bound already keeps its address (EINVAL): its port is read below all the same.
    unsafe {
        libc::bind(
            socket.as_raw_fd(),
            (&raw const loopback).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
    }
    let Some(bound) = bound_address(socket).filter(|a| *a.ip() == Ipv4Addr::LOCALHOST) else {
        return -libc::EADDRNOTAVAIL;
    };
    door.expect(bound.port());
    let target = sockaddr_in(door.address());
    // SAFETY: `target` is a plain sockaddr_in; these are all its bytes.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            (&raw const target).cast::<u8>(),
            std::mem::size_of::<libc::sockaddr_in>(),
        )
    };
    let result = connect_raw(socket, bytes);
    if result != 0 && result != -libc::EINPROGRESS {
        door.forget(bound.port());
    }
    result
}

/// `address` as the kernel takes it.
fn sockaddr_in(address: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: address.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*address.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// The IPv4 address `socket` is bound to (`getsockname`).
fn bound_address(socket: &OwnedFd) -> Option<SocketAddrV4> {
    // SAFETY: sockaddr_in is plain old data; all-zero is valid.
    let mut address: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: `address` and `len` are writable and of the size `len` says.
    let ret = unsafe { libc::getsockname(socket.as_raw_fd(), (&raw mut address).cast(), &mut len) };
    (ret == 0 && i32::from(address.sin_family) == libc::AF_INET).then(|| {
        SocketAddrV4::new(
            Ipv4Addr::from(u32::from_be(address.sin_addr.s_addr)),
            u16::from_be(address.sin_port),
        )
    })
}

/// The socket file at `path`, held by an `O_PATH` descriptor, the path opened with no symbolic
/// link in any component ([`sys::open_path_no_symlinks`]); `None` when it is not a socket so
/// reached. A link is never followed: an earlier line may have replaced the agent's path in `/tmp`
/// (which lines may write) by a link to another socket, and following it here would grant that.
fn hold_socket(path: &Path) -> Option<OwnedFd> {
    let fd = sys::open_path_no_symlinks(path).ok()?;
    let st = sys::fstat(std::os::fd::AsFd::as_fd(&fd)).ok()?;
    (st.st_mode & libc::S_IFMT == libc::S_IFSOCK).then_some(fd)
}

/// The internet socket address at `pointer` (`len` bytes) in `tid`'s memory, when its family is
/// the socket's and it is long enough for it.
pub(super) fn internet_address(tid: u32, pointer: u64, len: usize, family: i32) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let wanted = if family == libc::AF_INET {
        std::mem::size_of::<libc::sockaddr_in>()
    } else {
        std::mem::size_of::<libc::sockaddr_in6>()
    };
    if len < wanted {
        return None;
    }
    let file = std::fs::File::open(format!("/proc/{tid}/mem")).ok()?;
    let mut bytes = vec![0u8; wanted];
    file.read_exact_at(&mut bytes, pointer).ok()?;
    let written = u16::from_ne_bytes(bytes.get(..2)?.try_into().ok()?);
    (i32::from(written) == family).then_some(bytes)
}

/// `connect(socket, bytes)`: `0`, or `-errno`.
fn connect_raw(socket: &OwnedFd, bytes: &[u8]) -> i32 {
    // SAFETY: `bytes` is a socket address of the length passed, read only by the kernel;
    // `socket` is a descriptor this process owns.
    let ret = unsafe {
        libc::connect(
            socket.as_raw_fd(),
            bytes.as_ptr().cast(),
            bytes.len() as libc::socklen_t,
        )
    };
    if ret == 0 {
        0
    } else {
        -io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::ECONNREFUSED)
    }
}

/// A pidfd for the thread group of `tid` (whose descriptor table its threads share).
pub(super) fn pidfd_of(tid: u32) -> io::Result<OwnedFd> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status"))?;
    let tgid = status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse::<libc::pid_t>().ok())
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ESRCH))?;
    sys::pidfd_open(tgid)
}

/// A copy of the process's descriptor `fd` (`pidfd_getfd`).
pub(super) fn take_descriptor(pid: &OwnedFd, fd: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_getfd takes a pidfd, a descriptor number and flags (0); on success it
    // returns a new descriptor this process owns.
    let ret = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pid.as_raw_fd(), fd, 0) };
    if ret < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `ret` is a descriptor the kernel just gave this process; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(ret as RawFd) })
}

/// The family of a socket (`SO_DOMAIN`); `None` for something that is not one.
pub(super) fn socket_family(socket: &OwnedFd) -> Option<i32> {
    let mut family: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `family` and `len` are writable and of the size `len` says.
    let ret = unsafe {
        libc::getsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_DOMAIN,
            (&raw mut family).cast(),
            &mut len,
        )
    };
    (ret == 0).then_some(family)
}

/// The `sun_path` of the `sockaddr_un` at `pointer` (`len` bytes) in `tid`'s memory, up to its
/// NUL; `None` for an abstract or empty name or one that cannot be read.
fn unix_path(tid: u32, pointer: u64, len: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    const PATH_AT: usize = 2;
    let len = len.min(std::mem::size_of::<libc::sockaddr_un>());
    let file = std::fs::File::open(format!("/proc/{tid}/mem")).ok()?;
    let mut bytes = vec![0u8; len];
    let read = file.read_at(&mut bytes, pointer).ok()?;
    bytes.truncate(read);
    let family = u16::from_ne_bytes(bytes.get(..PATH_AT)?.try_into().ok()?);
    if i32::from(family) != libc::AF_UNIX {
        return None;
    }
    let path = bytes.get(PATH_AT..)?;
    let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
    let path = path.get(..end)?;
    (!path.is_empty()).then(|| path.to_vec())
}

/// Connects the program's socket (this process's copy of it) to `path`, reached as this process
/// reaches it (through its directory's descriptor when the path is longer than an address may
/// be): `0`, or `-errno`.
fn connect_to(socket: &OwnedFd, path: &Path) -> i32 {
    let reached = match crate::socket_path::reachable_path(path) {
        Ok(reached) => reached,
        Err(_) => return -libc::ENAMETOOLONG,
    };
    let bytes = reached.0.as_os_str().as_bytes();
    // SAFETY: sockaddr_un is plain old data; all-zero is valid.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    if bytes.len() >= address.sun_path.len() {
        return -libc::ENAMETOOLONG;
    }
    for (slot, byte) in address.sun_path.iter_mut().zip(bytes) {
        *slot = *byte as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    // SAFETY: sockaddr_un is plain data; these are its first `len` bytes, within its size.
    let raw = unsafe { std::slice::from_raw_parts((&raw const address).cast::<u8>(), len) };
    connect_raw(socket, raw)
}
