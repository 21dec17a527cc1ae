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
//! caller's stdin, stdout and stderr (SCM_RIGHTS); then one length-prefixed request; then one
//! length-prefixed reply. The caller writes a refusal itself, to its own stderr.
//!
//! Every door a line can come through inside a wrapped agent ends here: each door hands its line
//! to [`route`], which forwards it when `SHELLGATE_BROKER` is set (the shell entry point; a hook,
//! or `shellgate run`, in a shell inside the agent, where shellgate's state is read-only).

use crate::error::{Code, Error, Result};
use crate::gate::{Execution, LineRequest, Origin, Outcome};
use crate::parse::ShellKind;
use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags, recvmsg, sendmsg};
use std::ffi::OsString;
use std::io::{IoSlice, IoSliceMut, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;

/// See [`crate::own_env`], where every one of shellgate's variables is listed with its trust.
pub use crate::own_env::BROKER_ENV;

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
    /// Which door the line came through (a hook's line may run in its shell).
    pub origin: Origin,
    /// How the real shell runs it (the entry point's caller's own arguments, or `-c LINE`).
    pub execution: Execution,
    /// The caller's environment, for the line.
    pub env: Vec<(OsString, OsString)>,
}

/// How the line ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// It ran; the caller exits with this status (128 + signal for a signal death).
    Exited(u8),
    /// It is allowed to run in the caller's own shell (a hook's `cd`, `export`).
    InShell,
    /// It was refused, and why: the caller says so (its stderr is what an agent reads).
    Refused(Code, String),
}

// ---------------------------------------------------------------------------------------------
// Encoding: a sequence of length-prefixed byte strings.

fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn put_list(out: &mut Vec<u8>, list: &[OsString]) {
    put(out, &(list.len() as u32).to_le_bytes());
    for a in list {
        put(out, a.as_bytes());
    }
}

struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn next(&mut self) -> Result<&'a [u8]> {
        let bad = || Error::internal("malformed broker message");
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
            .map_err(|_| Error::internal("malformed broker message count"))?;
        Ok(u32::from_le_bytes(bytes) as usize)
    }

    fn list(&mut self) -> Result<Vec<OsString>> {
        let mut list = Vec::new();
        for _ in 0..self.count()?.min(MAX_REQUEST_BYTES) {
            list.push(OsString::from_vec(self.next()?.to_vec()));
        }
        Ok(list)
    }

    fn text(&mut self) -> Result<String> {
        String::from_utf8(self.next()?.to_vec())
            .map_err(|_| Error::internal("malformed broker message text"))
    }
}

impl Request {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put(&mut out, &self.line);
        put(&mut out, self.shell.as_str().as_bytes());
        put(&mut out, self.cwd.as_os_str().as_bytes());
        put(
            &mut out,
            match self.origin {
                Origin::Run => b"run",
                Origin::Hook => b"hook",
            },
        );
        match &self.execution {
            // (A line under `wrap` takes its shell's state, never the direct start; were one
            // sent, its shell arguments run it the same.)
            Execution::ShellArgs(args)
            | Execution::Program {
                shell_args: args, ..
            } => {
                put(&mut out, b"args");
                put_list(&mut out, args);
            }
            Execution::ShellC { positional } => {
                put(&mut out, b"c");
                put_list(&mut out, positional);
            }
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
        let shell = std::str::from_utf8(f.next()?)
            .ok()
            .and_then(ShellKind::from_name)
            .ok_or_else(|| Error::internal("unknown shell in broker request"))?;
        let cwd = PathBuf::from(OsString::from_vec(f.next()?.to_vec()));
        let origin = match f.next()? {
            b"run" => Origin::Run,
            b"hook" => Origin::Hook,
            _ => return Err(Error::internal("unknown origin in broker request")),
        };
        let execution = match f.next()? {
            b"args" => Execution::ShellArgs(f.list()?),
            b"c" => Execution::ShellC {
                positional: f.list()?,
            },
            _ => return Err(Error::internal("unknown execution in broker request")),
        };
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
            origin,
            execution,
            env,
        })
    }

    /// The arguments the caller's real shell would get (empty for `-c LINE` executions).
    pub fn shell_args(&self) -> &[OsString] {
        match &self.execution {
            Execution::ShellArgs(args)
            | Execution::Program {
                shell_args: args, ..
            } => args,
            Execution::ShellC { .. } => &[],
        }
    }
}

impl Reply {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Reply::Exited(code) => {
                put(&mut out, b"exited");
                put(&mut out, &[*code]);
            }
            Reply::InShell => put(&mut out, b"in-shell"),
            Reply::Refused(code, reason) => {
                put(&mut out, b"refused");
                put(&mut out, code.as_str().as_bytes());
                put(&mut out, reason.as_bytes());
            }
        }
        out
    }

    fn decode(bytes: &[u8]) -> Result<Reply> {
        let mut f = Fields { rest: bytes };
        match f.next()? {
            b"exited" => match f.next()? {
                [code] => Ok(Reply::Exited(*code)),
                _ => Err(Error::internal("malformed broker reply")),
            },
            b"in-shell" => Ok(Reply::InShell),
            b"refused" => {
                let name = f.text()?;
                let code = Code::ALL
                    .into_iter()
                    .find(|c| c.as_str() == name)
                    .ok_or_else(|| Error::internal("unknown code in broker reply"))?;
                Ok(Reply::Refused(code, f.text()?))
            }
            _ => Err(Error::internal("malformed broker reply")),
        }
    }
}

fn os_error(what: &str, e: nix::Error) -> Error {
    Error::internal(format!("{what}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Client (the shell entry point inside the agent).

pub use crate::sandbox::socket_path::reachable_path;

/// The broker socket named by the environment, if any.
pub fn broker_path() -> Option<PathBuf> {
    crate::env::get().own.broker.clone()
}

/// Send a line to the broker with these standard streams, and wait for its end.
pub fn submit(path: &Path, request: &Request, streams: [RawFd; 3]) -> Result<Reply> {
    let unreachable = |e: &dyn std::fmt::Display| {
        Error::new(
            Code::AuditUnavailable,
            format!("cannot reach the wrap process that judges this agent's lines: {e}"),
        )
    };
    let (address, _dir) = reachable_path(path)?;
    let mut stream = UnixStream::connect(&address).map_err(|e| unreachable(&e))?;
    // Who is calling goes with the greeting, checked by the kernel (a process can name only
    // itself): the connection's own credentials are its connector's, which for a contained
    // agent is the supervisor that makes the connection for it (see `sandbox::unix_connect`).
    let credentials = nix::sys::socket::UnixCredentials::new();
    let cmsg = [
        ControlMessage::ScmRights(&streams),
        ControlMessage::ScmCredentials(&credentials),
    ];
    sendmsg::<()>(
        stream.as_raw_fd(),
        &[IoSlice::new(HELLO)],
        &cmsg,
        MsgFlags::empty(),
        None,
    )
    .map_err(|e| unreachable(&e))?;
    write_framed(&mut stream, &request.encode()).map_err(|e| unreachable(&e))?;
    let reply = read_framed(&mut stream, MAX_REQUEST_BYTES)
        .map_err(|e| Error::internal(format!("no answer from the broker: {e}")))?;
    Reply::decode(&reply)
}

fn write_framed(stream: &mut UnixStream, payload: &[u8]) -> std::io::Result<()> {
    stream.write_all(&(payload.len() as u32).to_le_bytes())?;
    stream.write_all(payload)
}

fn read_framed(stream: &mut UnixStream, limit: usize) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a message of {len} bytes; at most {limit} are accepted"),
        ));
    }
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload)?;
    Ok(payload)
}

/// A door's line, decided where it must be: inside a wrapped agent (`SHELLGATE_BROKER`), where
/// shellgate's state is read-only, by the `wrap` broker ([`forward`], which gets the line without
/// `side`'s descriptors: its protocol carries none, so the line still runs and nothing of its
/// state comes back; the broker finds the shell itself); anywhere else by this process's gate.
/// Every door but the broker itself chooses here, once.
pub fn route(req: &LineRequest, side: &crate::gate::ShellSide) -> Outcome {
    match &crate::env::get().own.broker {
        Some(path) => forward(path, req),
        None => crate::gate::handle(req, side),
    }
}

/// Hands `req` to the broker at `path` and waits for its end.
pub fn forward(path: &Path, req: &LineRequest) -> Outcome {
    match forward_or_fail(path, req) {
        Ok(Reply::Exited(code)) => Outcome::Ran {
            status: ExitStatus::from_raw(i32::from(code) << 8),
            pipeline: Vec::new(),
        },
        // The broker's caller runs it itself (a wrapped shell's backstop): no hook apply.
        Ok(Reply::InShell) => Outcome::RunInShell {
            once_outside: false,
        },
        Ok(Reply::Refused(code, reason)) => Outcome::Refused(Error::new(code, reason)),
        Err(e) => Outcome::Refused(e),
    }
}

fn forward_or_fail(path: &Path, req: &LineRequest) -> Result<Reply> {
    let request = Request {
        line: req.bytes.to_vec(),
        shell: req.shell,
        cwd: req.cwd.to_path_buf(),
        origin: req.origin,
        execution: req.execution.clone(),
        env: match req.env {
            Some(env) => env.to_vec(),
            None => crate::env::get().vars().to_vec(),
        },
    };
    let streams = crate::gate::stream_fds(req.streams)?;
    let fds = match &streams {
        Some([a, b, c]) => [a.as_raw_fd(), b.as_raw_fd(), c.as_raw_fd()],
        None => [0, 1, 2],
    };
    submit(path, &request, fds)
}

// ---------------------------------------------------------------------------------------------
// Server (the `wrap` process).

/// One accepted conversation: its socket, the caller's stdin, stdout, stderr, and its pid (in
/// this process's PID namespace) as the kernel vouched for it in the greeting.
pub struct Conversation {
    pub socket: UnixStream,
    pub streams: [OwnedFd; 3],
    pub caller: Option<libc::pid_t>,
}

/// Receive the greeting of a new connection: the caller's three streams.
pub fn greet(socket: UnixStream) -> Result<Conversation> {
    use nix::sys::socket::{setsockopt, sockopt::PassCred};
    setsockopt(&socket, PassCred, &true).map_err(|e| os_error("broker greeting", e))?;
    let mut buf = [0u8; 64];
    let mut cmsg_space = nix::cmsg_space!([RawFd; 3], libc::ucred);
    let mut iov = [IoSliceMut::new(&mut buf)];
    let msg = recvmsg::<()>(
        socket.as_raw_fd(),
        &mut iov,
        Some(&mut cmsg_space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .map_err(|e| os_error("broker greeting", e))?;
    let mut fds: Vec<OwnedFd> = Vec::new();
    let mut caller = None;
    for cmsg in msg.cmsgs().map_err(|e| os_error("broker greeting", e))? {
        match cmsg {
            ControlMessageOwned::ScmRights(received) => {
                for fd in received {
                    // SAFETY: the kernel just installed `fd` in this process for this message
                    // (SCM_RIGHTS); nothing else owns it, so wrapping it takes ownership exactly
                    // once.
                    fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
                }
            }
            // The kernel checked the pid against the sender and put it in this namespace (0: a
            // sender this namespace cannot see).
            ControlMessageOwned::ScmCredentials(credentials) => {
                caller = Some(credentials.pid()).filter(|pid| *pid > 0);
            }
            _ => {}
        }
    }
    let len = msg.bytes;
    if buf.get(..len) != Some(HELLO) {
        return Err(Error::internal("malformed broker greeting"));
    }
    let streams: [OwnedFd; 3] = fds
        .try_into()
        .map_err(|_| Error::internal("the broker greeting must carry three descriptors"))?;
    Ok(Conversation {
        socket,
        streams,
        caller,
    })
}

/// The process group a line of this caller runs in: the caller's own, when it is in this
/// process's session (a wrapped interactive shell's job, so that the line is the terminal's
/// foreground job when its caller is). A caller in another session (an agent's detached shell)
/// or one that cannot be identified gets none: the line then has a group of its own.
pub fn caller_group(caller: Option<libc::pid_t>) -> Option<libc::pid_t> {
    use nix::unistd::{Pid, getpgid, getsid};
    let pid = Pid::from_raw(caller?);
    if pid.as_raw() <= 0 || getsid(Some(pid)).ok()? != getsid(None).ok()? {
        return None;
    }
    getpgid(Some(pid)).ok().map(Pid::as_raw)
}

/// Read a conversation's one request.
pub fn read_request(socket: &mut UnixStream) -> Result<Request> {
    let payload = read_framed(socket, MAX_REQUEST_BYTES)
        .map_err(|e| Error::usage(format!("cannot read the request: {e}")))?;
    Request::decode(&payload)
}

/// Send the reply.
pub fn send_reply(socket: &mut UnixStream, reply: &Reply) {
    let _ = write_framed(socket, &reply.encode());
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
            origin: Origin::Run,
            execution: Execution::ShellArgs(vec![
                "-c".into(),
                OsString::from_vec(b"ls \xff".to_vec()),
            ]),
            env: vec![("A".into(), "1".into()), ("PATH".into(), "/bin".into())],
        };
        assert_eq!(Request::decode(&request.encode()).unwrap(), request);
        assert!(Request::decode(&request.encode()[..10]).is_err());
        assert!(Request::decode(b"").is_err());
        let hook = Request {
            origin: Origin::Hook,
            execution: Execution::ShellC {
                positional: vec!["$0".into()],
            },
            ..request
        };
        assert_eq!(Request::decode(&hook.encode()).unwrap(), hook);
        for reply in [
            Reply::Exited(0),
            Reply::Exited(137),
            Reply::InShell,
            Reply::Refused(Code::NeverPolicy, "no \u{1F600}".into()),
        ] {
            assert_eq!(Reply::decode(&reply.encode()).unwrap(), reply);
        }
        assert!(Reply::decode(b"").is_err());
    }
}
