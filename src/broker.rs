//! The `wrap` broker: shells inside a wrapped agent hand their lines to the `wrap` process.
//!
//! A wrapped agent runs in the workspace-write sandbox, where shellgate's own state (the session log,
//! the settings) is read-only — so that neither the agent nor anything it starts can forge the log
//! or widen a setting. The shell entry point that replaces `/bin/bash` inside the agent therefore
//! does not decide anything itself: it sends the line, its arguments, working directory,
//! environment and its three standard streams to the `wrap` process over a Unix socket, and the
//! broker there — outside the agent's sandbox, with the person's terminal — decides, asks, runs the
//! line in its own sandbox with the caller's streams, records it, and replies with the status. A
//! caller that goes away (the agent kills its shell) takes its line with it.
//!
//! The socket is a path (`SHELLGATE_BROKER`), not an inherited descriptor: agents close every
//! descriptor but 0–2 when they start a shell. It lives in shellgate's state directory (0700), so
//! only the same user reaches it; inside the agent's sandbox that directory is read-only, which
//! does not stop `connect`. Protocol on one connection: the greeting [`HELLO`] carrying the
//! caller's stdin, stdout and stderr (SCM_RIGHTS); then one length-prefixed request; then a
//! two-byte reply.

use crate::error::{Code, Error, Result};
use crate::parse::ShellKind;
use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags, recvmsg, sendmsg};
use std::ffi::OsString;
use std::io::{IoSlice, IoSliceMut, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// Environment variable naming the broker's socket.
pub const BROKER_ENV: &str = "SHELLGATE_BROKER";

/// The greeting that carries the caller's descriptors.
const HELLO: &[u8] = b"shellgate-broker/1";

/// Largest request accepted (the environment is the big part).
const MAX_REQUEST_BYTES: usize = 1 << 20;

/// One line to decide and run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub line: Vec<u8>,
    pub shell: ShellKind,
    pub cwd: PathBuf,
    /// The arguments for the real shell (the caller's own, e.g. `-c LINE`).
    pub args: Vec<OsString>,
    /// The caller's environment, for the line.
    pub env: Vec<(OsString, OsString)>,
}

/// How the line ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// It ran; the caller exits with this status (128 + signal for a signal death).
    Exited(u8),
    /// It was refused (the broker already wrote the refusal to the caller's stderr); exit status.
    Refused(u8),
}

// ---------------------------------------------------------------------------------------------
// Encoding: a sequence of length-prefixed byte strings.

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn next(&mut self) -> Result<&'a [u8]> {
        let bad = || Error::internal("malformed broker request");
        let len_bytes: [u8; 4] = self
            .rest
            .get(..4)
            .ok_or_else(bad)?
            .try_into()
            .map_err(|_| bad())?;
        let len = u32::from_le_bytes(len_bytes) as usize;
        let field = self.rest.get(4..4 + len).ok_or_else(bad)?;
        self.rest = &self.rest[4 + len..];
        Ok(field)
    }

    fn count(&mut self) -> Result<usize> {
        let field = self.next()?;
        let bytes: [u8; 4] = field
            .try_into()
            .map_err(|_| Error::internal("malformed broker request count"))?;
        Ok(u32::from_le_bytes(bytes) as usize)
    }
}

impl Request {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put(&mut out, &self.line);
        put(&mut out, self.shell.as_str().as_bytes());
        put(&mut out, self.cwd.as_os_str().as_bytes());
        put(&mut out, &(self.args.len() as u32).to_le_bytes());
        for a in &self.args {
            put(&mut out, a.as_bytes());
        }
        put(&mut out, &(self.env.len() as u32).to_le_bytes());
        for (k, v) in &self.env {
            put(&mut out, k.as_bytes());
            put(&mut out, v.as_bytes());
        }
        out
    }

    pub fn decode(bytes: &[u8]) -> Result<Request> {
        let mut f = Fields { rest: bytes };
        let line = f.next()?.to_vec();
        let shell = match f.next()? {
            b"bash" => ShellKind::Bash,
            b"zsh" => ShellKind::Zsh,
            b"sh" => ShellKind::Sh,
            b"pwsh" => ShellKind::Pwsh,
            _ => return Err(Error::internal("unknown shell in broker request")),
        };
        let cwd = PathBuf::from(OsString::from_vec(f.next()?.to_vec()));
        let mut args = Vec::new();
        for _ in 0..f.count()?.min(MAX_REQUEST_BYTES) {
            args.push(OsString::from_vec(f.next()?.to_vec()));
        }
        let mut env = Vec::new();
        for _ in 0..f.count()?.min(MAX_REQUEST_BYTES) {
            let k = OsString::from_vec(f.next()?.to_vec());
            let v = OsString::from_vec(f.next()?.to_vec());
            env.push((k, v));
        }
        Ok(Request {
            line,
            shell,
            cwd,
            args,
            env,
        })
    }
}

impl Reply {
    fn encode(self) -> [u8; 2] {
        match self {
            Reply::Exited(code) => [0, code],
            Reply::Refused(code) => [1, code],
        }
    }

    fn decode(bytes: &[u8]) -> Result<Reply> {
        match bytes {
            [0, code] => Ok(Reply::Exited(*code)),
            [1, code] => Ok(Reply::Refused(*code)),
            _ => Err(Error::internal("malformed broker reply")),
        }
    }
}

fn os_error(what: &str, e: nix::Error) -> Error {
    Error::internal(format!("{what}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Client (the shell entry point inside the agent).

/// A socket address is at most 108 bytes (`sun_path`), and a home or state directory can be
/// longer. A long path is reached through its directory's descriptor instead
/// (`/proc/self/fd/N/NAME`), opened here and kept open by the caller for as long as the path is
/// used: there is then no limit on where the state directory lives.
pub fn reachable_path(path: &Path) -> Result<(PathBuf, Option<OwnedFd>)> {
    const SUN_PATH_MAX: usize = 107;
    if path.as_os_str().len() <= SUN_PATH_MAX {
        return Ok((path.to_path_buf(), None));
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(Error::internal(format!(
            "the broker socket path {} has no directory",
            path.display()
        )));
    };
    let fd: OwnedFd = std::fs::File::open(dir).map(OwnedFd::from).map_err(|e| {
        Error::new(
            Code::AuditUnavailable,
            format!("cannot open the broker's directory {}: {e}", dir.display()),
        )
    })?;
    let short = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd())).join(name);
    Ok((short, Some(fd)))
}

/// The broker socket named by the environment, if any.
pub fn broker_path() -> Option<PathBuf> {
    std::env::var_os(BROKER_ENV).map(PathBuf::from)
}

/// Send a line to the broker with this process's standard streams, and wait for its end.
pub fn submit(path: &Path, request: &Request) -> Result<Reply> {
    let unreachable = |e: &dyn std::fmt::Display| {
        Error::new(
            Code::AuditUnavailable,
            format!("cannot reach the wrap process that judges this agent's lines: {e}"),
        )
    };
    let (address, _dir) = reachable_path(path)?;
    let mut stream = UnixStream::connect(&address).map_err(|e| unreachable(&e))?;
    let fds = [0, 1, 2];
    let cmsg = [ControlMessage::ScmRights(&fds)];
    sendmsg::<()>(
        stream.as_raw_fd(),
        &[IoSlice::new(HELLO)],
        &cmsg,
        MsgFlags::empty(),
        None,
    )
    .map_err(|e| unreachable(&e))?;
    let payload = request.encode();
    stream
        .write_all(&(payload.len() as u32).to_le_bytes())
        .and_then(|()| stream.write_all(&payload))
        .map_err(|e| unreachable(&e))?;
    let mut reply = [0u8; 2];
    stream
        .read_exact(&mut reply)
        .map_err(|e| Error::internal(format!("no answer from the broker: {e}")))?;
    Reply::decode(&reply)
}

// ---------------------------------------------------------------------------------------------
// Server (the `wrap` process).

/// One accepted conversation: its socket and the caller's stdin, stdout, stderr.
pub struct Conversation {
    pub socket: UnixStream,
    pub streams: [OwnedFd; 3],
}

/// Receive the greeting of a new connection: the caller's three streams.
pub fn greet(socket: UnixStream) -> Result<Conversation> {
    let mut buf = [0u8; 64];
    let mut cmsg_space = nix::cmsg_space!([RawFd; 3]);
    let mut iov = [IoSliceMut::new(&mut buf)];
    let msg = recvmsg::<()>(
        socket.as_raw_fd(),
        &mut iov,
        Some(&mut cmsg_space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .map_err(|e| os_error("broker greeting", e))?;
    let mut fds: Vec<OwnedFd> = Vec::new();
    for cmsg in msg.cmsgs().map_err(|e| os_error("broker greeting", e))? {
        if let ControlMessageOwned::ScmRights(received) = cmsg {
            for fd in received {
                // SAFETY: the kernel just installed `fd` in this process for this message
                // (SCM_RIGHTS); nothing else owns it, so wrapping it takes ownership exactly once.
                fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    let len = msg.bytes;
    if buf.get(..len) != Some(HELLO) {
        return Err(Error::internal("malformed broker greeting"));
    }
    let streams: [OwnedFd; 3] = fds
        .try_into()
        .map_err(|_| Error::internal("the broker greeting must carry three descriptors"))?;
    Ok(Conversation { socket, streams })
}

/// The process group a line of this caller runs in: the caller's own, when it is in this
/// process's session (a wrapped interactive shell's job, so that the line is the terminal's
/// foreground job when its caller is). A caller in another session (an agent's detached shell)
/// or one that cannot be identified gets none: the line then has a group of its own.
pub fn caller_group(socket: &UnixStream) -> Option<libc::pid_t> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    use nix::unistd::{Pid, getpgid, getsid};
    let pid = Pid::from_raw(getsockopt(socket, PeerCredentials).ok()?.pid());
    if pid.as_raw() <= 0 || getsid(Some(pid)).ok()? != getsid(None).ok()? {
        return None;
    }
    getpgid(Some(pid)).ok().map(Pid::as_raw)
}

/// Read a conversation's one request.
pub fn read_request(socket: &mut UnixStream) -> Result<Request> {
    let mut len = [0u8; 4];
    socket
        .read_exact(&mut len)
        .map_err(|e| Error::internal(format!("cannot read the request: {e}")))?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_REQUEST_BYTES {
        return Err(Error::usage(format!(
            "the request is {len} bytes; at most {MAX_REQUEST_BYTES} are accepted"
        )));
    }
    let mut payload = vec![0u8; len];
    socket
        .read_exact(&mut payload)
        .map_err(|e| Error::internal(format!("cannot read the request: {e}")))?;
    Request::decode(&payload)
}

/// Send the reply.
pub fn send_reply(socket: &mut UnixStream, reply: Reply) {
    let _ = socket.write_all(&reply.encode());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip() {
        let request = Request {
            line: b"ls \xff".to_vec(),
            shell: ShellKind::Zsh,
            cwd: PathBuf::from("/w"),
            args: vec!["-c".into(), OsString::from_vec(b"ls \xff".to_vec())],
            env: vec![("A".into(), "1".into()), ("PATH".into(), "/bin".into())],
        };
        assert_eq!(Request::decode(&request.encode()).unwrap(), request);
        assert!(Request::decode(&request.encode()[..10]).is_err());
        assert!(Request::decode(b"").is_err());
        for reply in [Reply::Exited(0), Reply::Exited(137), Reply::Refused(202)] {
            assert_eq!(Reply::decode(&reply.encode()).unwrap(), reply);
        }
    }
}
