//! The supervisor's side of the reported refusals: what a sandboxed line tried that the sandbox
//! refused, with as much precision as the kernel gives.
//!
//! Without the network, the seccomp filter sends `connect` (and the creation of a UDP socket,
//! which is how a DNS lookup starts) to a listener instead of failing it silently (see
//! [`crate::seccomp::Deny::Reported`]). The supervisor — the process that started the
//! sandbox, outside it — receives each call, reads the address the line passed from the line's
//! memory, records it, and answers with the refusal (`EPERM`) itself: the call never runs, so
//! nothing the line changes in its memory afterwards matters (no `CONTINUE` is ever sent). What
//! it records becomes the missing grant an escalation offers (see `gate`).
//!
//! Calls that change the filesystem are *observed* the same way, but never decided here: the
//! supervisor answers `CONTINUE`, and the kernel's own layers (the read-only mount tree, Landlock)
//! decide as if nobody had looked. It only notes the path when it lies outside the writable roots
//! or in a protected path, so a refused write can be named. Because the decision stays with the
//! kernel, a path the line changes between the look and the call only makes the note wrong, never
//! the sandbox weaker. Opens for writing and truncations are the exception: a thread holding the
//! line's own Landlock domain makes them, in the line's root, and refuses a file with a second
//! name (see [`super::opener`]).

use super::opener::Taken;
use crate::seccomp::{Arch, Sys, Table, Verdict};
use serde::Serialize;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

/// Something the sandbox refused that the line needed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Denial {
    /// A TCP connection to this address.
    Connect { address: SocketAddr },
    /// A TCP connection straight to this address by a line whose hosts are reached only through
    /// its proxy (see [`super::proxy`]): the program ignored the proxy variables.
    Direct { address: SocketAddr },
    /// A connection through the line's proxy to `host:port`, which its grant does not name.
    Host { host: String, port: u16 },
    /// A connection whose address could not be read (an unknown family, unreadable memory).
    ConnectElsewhere,
    /// A UDP socket: a DNS lookup, most often.
    Udp,
    /// Listening on this address (a `bind` or a `listen` of a socket bound there): a port not
    /// granted, or an address that is not loopback.
    Listen { address: SocketAddr },
    /// A connection to the unix socket `path` (by name), which is not one the program may reach.
    UnixSocket { path: PathBuf },
    /// A change to `path` outside the writable roots (or in a protected path).
    Write {
        path: PathBuf,
        operation: &'static str,
    },
    /// An open for writing of a regular file with `links` names (a hard link): it would change
    /// the file under its other names too (see [`super::opener`]). No grant gives it.
    SecondName { path: PathBuf, links: u64 },
    /// The supervisor could not make the line's opens for writing (see [`super::opener`]): each
    /// was refused.
    OpenerFailed { reason: String },
}

/// Where writes are allowed, for the notes on observed calls, and the filter's own rule table
/// (without a supervisor), which every notification is checked against again.
#[derive(Debug, Clone)]
pub struct WriteScope {
    /// What the filter would answer each call with nobody to report to: only a call it allows
    /// may go on (`CONTINUE`); anything else that reaches the supervisor is refused.
    pub filter: Table,
    /// Beneath these, writes are allowed (canonical).
    pub writable: Vec<PathBuf>,
    /// ...except beneath these (protected paths, read-only trees).
    pub read_only: Vec<PathBuf>,
    /// A port grant: connections to these TCP ports go on (Landlock decides); others are refused.
    pub tcp_ports: Vec<u16>,
    /// The network is on: an internet socket's `connect` goes on.
    pub network: bool,
    /// A listening grant: the TCP ports a `bind` and `listen` are made on, by the supervisor, on
    /// loopback (see [`super::listening`]). Empty: none is ever made.
    pub listen: Vec<u16>,
    /// The unix sockets the program may connect to by name (`wrap`'s broker, for its contained
    /// agent); empty: none, and unix sockets are never sent here.
    pub unix_sockets: super::unix_connect::Allowed,
    /// The line's proxy, when it is granted named hosts: every `connect` is then made here, to
    /// the proxy or a granted port (see [`super::proxy`]).
    pub proxy: Option<std::sync::Arc<super::proxy::Door>>,
    /// The addresses the line's grant names exactly (see [`super::unix_connect::Reach`]).
    pub addresses: Vec<SocketAddr>,
}

impl WriteScope {
    /// Whether a write at `path` is one the sandbox refuses, to be named.
    pub(super) fn refuses(&self, path: &Path) -> bool {
        // Devices, and the kernel's own trees: `/proc/self/fd/1` is the line's own stdout, and
        // nothing beneath them is a directory a grant could give. Writes there succeed or fail on
        // their own terms; noting them would turn a line's own exit status into a false refusal.
        if ["/dev", "/proc", "/sys"]
            .iter()
            .any(|p| path.starts_with(p))
        {
            return false;
        }
        let beneath = |list: &[PathBuf]| list.iter().any(|p| path.starts_with(p));
        !beneath(&self.writable) || beneath(&self.read_only)
    }
}

impl Denial {
    /// What the line tried, in words.
    pub fn describe(&self) -> String {
        match self {
            Denial::Connect { address } => format!("a connection to {address}"),
            Denial::Direct { address } => format!(
                "a connection straight to {address}: this line reaches its hosts only through \
                 shellgate's proxy (HTTPS_PROXY), which the program did not use"
            ),
            Denial::Host { host, port } if host.contains(':') => {
                format!("a connection to [{host}]:{port}")
            }
            Denial::Host { host, port } => format!("a connection to {host}:{port}"),
            Denial::ConnectElsewhere => "a network connection".to_owned(),
            Denial::Udp => "a UDP socket (a DNS lookup, most often)".to_owned(),
            Denial::Listen { address } if address.port() == 0 => format!(
                "listening on a port the kernel picks ({}); only a named port can be granted",
                address.ip()
            ),
            Denial::Listen { address } if !grantable_listener(address) => format!(
                "listening on {address}; only loopback (or the wildcard, bound as loopback) can \
                 be granted"
            ),
            Denial::Listen { address } => format!("listening on {address}"),
            Denial::UnixSocket { path } => {
                format!("a connection to the unix socket {}", path.display())
            }
            Denial::Write { path, operation } => format!("{operation} {}", path.display()),
            Denial::SecondName { path, links } => format!(
                "writing {}, a file with {links} names (a hard link): it would change the file \
                 under its other names too, which may lie outside the writable directories; no \
                 grant allows it (a copy of your own does: `cp --remove-destination`)",
                path.display()
            ),
            Denial::OpenerFailed { reason } => format!(
                "opening files for writing: the sandbox could not make the opens ({reason})"
            ),
        }
    }
}

/// Whether a listening grant could give `address`: a named port on loopback or the wildcard.
pub fn grantable_listener(address: &SocketAddr) -> bool {
    address.port() != 0
        && (address.ip().is_unspecified() || super::listening::is_loopback(address.ip()))
}

/// The most denials one line records (a loop of failing connects says no more after that).
const MAX_DENIALS: usize = 32;

/// Asks the kernel to hand a reported call to this process on the caller's CPU, and the answer
/// back the same way (`SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP`, Linux 6.6): the line waits for every
/// observed call, and a wake-up through the scheduler costs several times the answer itself.
/// Older kernels refuse the flag; the calls are then answered as before.
pub fn wake_synchronously(listener: &OwnedFd) {
    const SECCOMP_IOCTL_NOTIF_SET_FLAGS: libc::Ioctl = 0x4008_2104u32 as libc::Ioctl;
    const SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP: u64 = 1;
    // SAFETY: the ioctl takes the flags by value (a u64 argument); `listener` is a seccomp
    // listener this process owns.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            SECCOMP_IOCTL_NOTIF_SET_FLAGS,
            SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP,
        );
    }
}

/// Receives one notification from `listener` and answers it: a reported call with `EPERM`, an
/// observed one with `CONTINUE`. Returns what it noted, if anything (`None` also when the
/// notification was withdrawn: the process died, or a signal interrupted the call).
pub fn handle_one(
    listener: &OwnedFd,
    scope: &WriteScope,
    opener: &mut super::opener::Opener,
) -> io::Result<Option<Denial>> {
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
    let nr = notif.data.nr as i64;
    let (answer, denial) =
        if [libc::SYS_bind, libc::SYS_listen].contains(&nr) && !scope.listen.is_empty() {
            let decided = if nr == libc::SYS_bind {
                super::listening::decide_bind(notif.pid, &notif.data.args, &scope.listen)
            } else {
                super::listening::decide_listen(notif.pid, &notif.data.args, &scope.listen)
            };
            // The socket was taken by pid: only if the notification is still pending was that pid
            // the caller's (not a process that reused it).
            if !still_pending(listener, notif.id) {
                return Ok(None);
            }
            let result = super::listening::make(&decided);
            let denial = match decided {
                super::listening::Answer::Refused(_, denial) => denial,
                _ => None,
            };
            (Reply::Result(result), denial)
        } else if nr == libc::SYS_connect && connects_here(notif.pid, scope, opener) {
            match connect_by_name(&notif, scope) {
                Ok(refused) => refused,
                // Made on a thread of its own, which answers: a blocking connect must not hold up
                // the other calls this supervisor answers.
                Err((socket, address)) => {
                    // The descriptor and the address were taken by pid: only if the notification
                    // is still pending was that pid the caller's (not a process that reused it).
                    if !still_pending(listener, notif.id) {
                        return Ok(None);
                    }
                    if connect_on_a_thread(listener, notif.id, socket, address).is_ok() {
                        return Ok(None);
                    }
                    // No thread: the call is answered here, refused, rather than left waiting.
                    (Reply::Result(-libc::EAGAIN), None)
                }
            }
        } else if super::opener::makes(nr, &notif.data.args)
            && scope.filter.verdict(nr, &notif.data.args) == Verdict::Allow
        {
            // An open for writing or a truncation the filter allows: made by the opener, which
            // answers it (and names what the sandbox refused).
            match opener.make(listener, &notif, scope) {
                Ok(Taken::Made) => return Ok(None),
                Ok(Taken::Announcement) => (Reply::Result(-libc::ENOENT), None),
                Ok(Taken::ControllingTerminal) => (Reply::GoOn, None),
                Err(errno) => (Reply::Result(-errno), opener.failed()),
            }
        } else {
            match decide(&notif, scope) {
                (true, denial) => (Reply::GoOn, denial),
                (false, denial) => (Reply::Result(-libc::EPERM), denial),
            }
        };
    // The answer. A reported call fails with EPERM, as it would have without a supervisor; an
    // observed one goes on to the kernel's own checks; a connect made here returns its result.
    // A withdrawn notification (ENOENT) needs no answer.
    let response = match answer {
        Reply::GoOn => libc::seccomp_notif_resp {
            id: notif.id,
            val: 0,
            error: 0,
            flags: libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
        },
        Reply::Result(result) => libc::seccomp_notif_resp {
            id: notif.id,
            val: 0,
            error: result.min(0),
            flags: 0,
        },
    };
    // SAFETY: `response` is a valid seccomp_notif_resp; the ioctl only reads it.
    let ret = unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_SEND, &response) };
    if ret < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::ENOENT) {
        return Err(io::Error::last_os_error());
    }
    Ok(denial)
}

/// Whether the supervisor makes a `connect` of thread `tid` itself: with named unix sockets or a
/// proxy (see [`super::unix_connect`]). Not a caller in a sandbox nested in the line: its own
/// rules would not hold for a connection made here, so its connects are decided as without
/// either — by the kernel, where every Landlock layer decides (the line's proxy, named addresses
/// and unix sockets are nothing any layer allows, so it reaches none of them).
fn connects_here(tid: u32, scope: &WriteScope, opener: &super::opener::Opener) -> bool {
    (scope.proxy.is_some() || !scope.unix_sockets.is_empty()) && !opener.is_nested_caller(tid)
}

/// How a notification is answered.
enum Reply {
    /// `CONTINUE`: the kernel runs the call and its own layers decide.
    GoOn,
    /// The call does not run and returns this (`0`, or `-errno`).
    Result(i32),
}

/// A `connect` of a program that may reach some unix sockets by name (see
/// [`super::unix_connect`]): refused here (`Ok`), or to be made (`Err`: the socket and where).
fn connect_by_name(
    notif: &libc::seccomp_notif,
    scope: &WriteScope,
) -> Result<(Reply, Option<Denial>), (OwnedFd, super::unix_connect::Address)> {
    use super::unix_connect::{Answer, decide};
    let reach = super::unix_connect::Reach {
        network: scope.network,
        tcp_ports: &scope.tcp_ports,
        proxy: scope.proxy.as_ref(),
        addresses: &scope.addresses,
    };
    match decide(notif.pid, &notif.data.args, &scope.unix_sockets, reach) {
        Answer::Connect(socket, address) => Err((socket, address)),
        Answer::Refused(errno, Some(path)) => {
            Ok((Reply::Result(-errno), Some(Denial::UnixSocket { path })))
        }
        // An internet address refused: named as a refused connection is (straight past the
        // proxy, when the line has one).
        Answer::Refused(errno, None) => {
            let denial = match denial_of(notif) {
                Some(Denial::Connect { address }) if scope.proxy.is_some() => {
                    Some(Denial::Direct { address })
                }
                denial => denial,
            };
            Ok((Reply::Result(-errno), denial))
        }
    }
}

/// Whether notification `id` still waits for its answer (`SECCOMP_IOCTL_NOTIF_ID_VALID`): its
/// caller has not died, so its pid names it still.
pub(super) fn still_pending(listener: &OwnedFd, id: u64) -> bool {
    // SAFETY: the ioctl only reads the u64 `id` through the pointer; `listener` is a seccomp
    // listener this process owns.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ID_VALID,
            &id,
        ) == 0
    }
}

/// Makes the connection on a thread of its own, which then answers the notification with its
/// result (with its own copy of the listener: the thread may outlive this call).
fn connect_on_a_thread(
    listener: &OwnedFd,
    id: u64,
    socket: OwnedFd,
    address: super::unix_connect::Address,
) -> io::Result<()> {
    let listener = listener.try_clone()?;
    std::thread::Builder::new()
        .name("sandbox-connect".into())
        .spawn(move || {
            let result = super::unix_connect::connect(&socket, &address);
            send_answer(&listener, id, 0, result.min(0));
        })
        .map(drop)
}

/// Answers call `id` with the value `val` when `error` is 0, else with `error` (a negative
/// errno); the call itself does not run. A withdrawn notification (the caller died) answers
/// `ENOENT`, which needs nothing.
pub(super) fn send_answer(listener: &OwnedFd, id: u64, val: i64, error: i32) {
    let response = libc::seccomp_notif_resp {
        id,
        val,
        error,
        flags: 0,
    };
    // SAFETY: `response` is a valid seccomp_notif_resp; the ioctl only reads it.
    unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_SEND,
            &response,
        );
    }
}

/// Whether a notified call may go on (`CONTINUE`), and what to note. Decided on the call's
/// registers by the filter's own table without a supervisor ([`WriteScope::filter`]): a call it
/// would refuse is refused here too, whatever sent it (so a mistake in the program's order of
/// deny and notify cannot let one through). What it allows goes on when it is an observed write
/// (the kernel's layers decide; the note names a write outside the writable roots), or a
/// connection to a granted port (Landlock enforces the ports whatever the line changes in its
/// memory after this look); anything else is refused.
fn decide(notif: &libc::seccomp_notif, scope: &WriteScope) -> (bool, Option<Denial>) {
    let nr = notif.data.nr as i64;
    match scope.filter.verdict(nr, &notif.data.args) {
        Verdict::Allow => {}
        Verdict::Errno(_) | Verdict::Notify | Verdict::Kill => {
            let reported = [libc::SYS_socket, libc::SYS_connect, libc::SYS_bind].contains(&nr);
            return (false, reported.then(|| denial_of(notif)).flatten());
        }
    }
    if let Some(sys) = observed_call(nr) {
        return (true, write_outside(notif, sys, scope));
    }
    match denial_of(notif) {
        Some(Denial::Connect { address }) if scope.tcp_ports.contains(&address.port()) => {
            (true, None)
        }
        denial => (false, denial),
    }
}

/// The observed syscall `nr` is, on this architecture (`None`: not an observed write).
fn observed_call(nr: i64) -> Option<Sys> {
    let arch = Arch::native()?;
    crate::seccomp::observed_calls().find(|sys| sys.number(arch) == nr)
}

/// Which arguments of an observed call name what it changes: `(dirfd argument, path argument)`
/// pairs (`None` dirfd: relative to the working directory), or a descriptor argument.
enum Target {
    Paths(&'static [(Option<usize>, usize)]),
    Descriptor(usize),
}

fn target_of(sys: Sys) -> Target {
    use Sys::*;
    match sys {
        Open | Creat | Mkdir | Unlink | Rmdir | Mknod | Truncate | Chmod | Chown | Lchown
        | Setxattr | Lsetxattr | Removexattr | Lremovexattr | Access => Target::Paths(&[(None, 0)]),
        Openat | Openat2 | Mkdirat | Unlinkat | Mknodat | Fchmodat | Fchmodat2 | Fchownat
        | Utimensat | Faccessat | Faccessat2 => Target::Paths(&[(Some(0), 1)]),
        Rename => Target::Paths(&[(None, 0), (None, 1)]),
        Renameat | Renameat2 => Target::Paths(&[(Some(0), 1), (Some(2), 3)]),
        Link | Symlink => Target::Paths(&[(None, 1)]),
        Linkat => Target::Paths(&[(Some(2), 3)]),
        Symlinkat => Target::Paths(&[(Some(1), 2)]),
        _ => Target::Descriptor(0),
    }
}

/// The operation of a refused `mkdir` (see [`Denial::Write`]).
pub const CREATING_A_DIRECTORY: &str = "creating the directory";

fn operation_of(sys: Sys) -> &'static str {
    use Sys::*;
    match sys {
        Open | Openat | Openat2 | Creat | Access | Faccessat | Faccessat2 => "writing",
        Mkdir | Mkdirat => CREATING_A_DIRECTORY,
        Unlink | Unlinkat | Rmdir => "removing",
        Rename | Renameat | Renameat2 => "renaming",
        Link | Linkat | Symlink | Symlinkat | Mknod | Mknodat => "creating",
        Truncate => "truncating",
        Chmod | Fchmod | Fchmodat | Fchmodat2 => "changing the mode of",
        Chown | Lchown | Fchownat => "changing the owner of",
        Utimensat => "changing the times of",
        _ => "changing the attributes of",
    }
}

/// The path an observed call changes, when the sandbox refuses changes there.
fn write_outside(notif: &libc::seccomp_notif, sys: Sys, scope: &WriteScope) -> Option<Denial> {
    let pid = notif.pid;
    let args = notif.data.args;
    let paths: Vec<PathBuf> = match target_of(sys) {
        Target::Descriptor(arg) => {
            vec![std::fs::read_link(format!("/proc/{pid}/fd/{}", args[arg] as i32)).ok()?]
        }
        Target::Paths(pairs) => pairs
            .iter()
            .filter_map(|(dirfd, path)| resolve(pid, dirfd.map(|a| args[a] as i32), args[*path]))
            .collect(),
    };
    let path = paths
        .into_iter()
        .find(|p| scope.refuses(p) && !fails_as_existing(sys, p))?;
    Some(Denial::Write {
        path,
        operation: operation_of(sys),
    })
}

/// A call that makes a new name fails with `EEXIST` where the name exists, sandbox or not: no
/// refusal to note (`mkdir -p ~/a/b` makes `/home` first; naming it was noise). Only the note
/// depends on this look, never the call.
fn fails_as_existing(sys: Sys, path: &Path) -> bool {
    use Sys::*;
    matches!(
        sys,
        Mkdir | Mkdirat | Mknod | Mknodat | Symlink | Symlinkat | Link | Linkat
    ) && path.symlink_metadata().is_ok()
}

/// The absolute path a `(dirfd, path pointer)` pair names in process `pid`, made lexically
/// normal (`.` and `..` removed): what it names, not where symlinks would lead.
fn resolve(pid: u32, dirfd: Option<i32>, pointer: u64) -> Option<PathBuf> {
    if pointer == 0 {
        return None;
    }
    let bytes = read_memory(pid, pointer, libc::PATH_MAX as usize)?;
    let end = bytes.iter().position(|b| *b == 0)?;
    use std::os::unix::ffi::OsStrExt;
    let path = Path::new(std::ffi::OsStr::from_bytes(&bytes[..end]));
    let base = match dirfd {
        _ if path.is_absolute() => PathBuf::from("/"),
        None | Some(libc::AT_FDCWD) => std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?,
        Some(fd) => std::fs::read_link(format!("/proc/{pid}/fd/{fd}")).ok()?,
    };
    Some(lexical(&base, path))
}

/// `path` joined to `base` and made lexically normal (`.` and `..` removed): what it names, not
/// where symlinks would lead.
pub(super) fn lexical(base: &Path, path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in base.join(path).components() {
        match component {
            Component::ParentDir => {
                normal.pop();
            }
            Component::CurDir => {}
            other => normal.push(other),
        }
    }
    normal
}

/// Adds `denial` to `list` unless it is there already or the list is full.
pub fn record(list: &mut Vec<Denial>, denial: Denial) {
    if list.len() < MAX_DENIALS && !list.contains(&denial) {
        list.push(denial);
    }
}

fn denial_of(notif: &libc::seccomp_notif) -> Option<Denial> {
    let nr = notif.data.nr as i64;
    if nr == libc::SYS_socket {
        return Some(Denial::Udp);
    }
    // connect(fd, addr, len) and bind(fd, addr, len)
    let (pointer, len) = (notif.data.args[1], notif.data.args[2] as usize);
    let address = read_memory(notif.pid, pointer, len.min(128)).and_then(|b| socket_address(&b));
    if nr == libc::SYS_bind {
        // A bind of another family (a socketpair's unix socket) is not listening on a port.
        return address.map(|address| Denial::Listen { address });
    }
    Some(
        address.map_or(Denial::ConnectElsewhere, |address| Denial::Connect {
            address,
        }),
    )
}

/// `len` bytes at `address` in process `pid` (whose call is held by the kernel meanwhile).
pub(super) fn read_memory(pid: u32, address: u64, len: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let file = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut buf = vec![0u8; len];
    let n = file.read_at(&mut buf, address).ok()?;
    buf.truncate(n);
    Some(buf)
}

/// A `sockaddr_in` / `sockaddr_in6` as the kernel lays them out.
pub(super) fn socket_address(bytes: &[u8]) -> Option<SocketAddr> {
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

    /// A notification the filter's own table refuses is refused by the supervisor too, whatever
    /// sent it: a set-id chmod that reached it (as a wrong order of deny and notify in the program
    /// would send it) is not let go on, while an ordinary observed write is.
    #[test]
    fn a_call_the_table_refuses_never_goes_on() {
        let Some(arch) = Arch::native() else { return };
        let scope = WriteScope {
            filter: Table::new(arch, Default::default(), false),
            writable: vec![PathBuf::from("/")],
            read_only: Vec::new(),
            tcp_ports: Vec::new(),
            network: false,
            listen: Vec::new(),
            unix_sockets: Default::default(),
            proxy: None,
            addresses: Vec::new(),
        };
        // SAFETY: seccomp_notif is plain old data; all-zero is valid.
        let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        notif.pid = std::process::id();
        notif.data.nr = Sys::Fchmodat.number(arch) as i32;
        notif.data.args = [
            libc::AT_FDCWD as u64,
            0,
            u64::from(libc::S_ISUID) | 0o755,
            0,
            0,
            0,
        ];
        assert_eq!(decide(&notif, &scope), (false, None));
        notif.data.args[2] = 0o755;
        assert!(decide(&notif, &scope).0, "an ordinary chmod goes on");
        notif.data.nr = Sys::Ptrace.number(arch) as i32;
        assert_eq!(decide(&notif, &scope), (false, None));
    }

    #[test]
    fn writes_to_the_kernels_trees_are_never_noted() {
        let scope = WriteScope {
            filter: Table::new(Arch::X86_64, Default::default(), false),
            writable: vec![PathBuf::from("/ws")],
            read_only: Vec::new(),
            tcp_ports: Vec::new(),
            network: false,
            listen: Vec::new(),
            unix_sockets: Default::default(),
            proxy: None,
            addresses: Vec::new(),
        };
        for path in ["/proc/self/fd/1", "/dev/stdout", "/sys/kernel/x"] {
            assert!(!scope.refuses(Path::new(path)), "{path}");
        }
        assert!(scope.refuses(Path::new("/etc/passwd")));
        assert!(!scope.refuses(Path::new("/ws/out")));
    }
}
