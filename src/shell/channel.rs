//! The descriptor a sandboxed line's shell reports on (its state after the line, or its status),
//! and what is taken from it: the shell's own bytes, nothing a program of the line wrote.
//!
//! The line's shell and every program it starts share the descriptor (bash cannot close it on
//! exec), so the descriptor alone cannot tell who wrote what. With a memory file, a program of
//! the line — an install script run by `npm install` — rewrote the shell's report after the shell
//! wrote it and made the person's shell change to a directory of its choice, unasked, whose
//! repository the prompt's `git` then read outside the sandbox (a `core.fsmonitor` planted in
//! `/tmp` ran there; `hooks::a_program_of_the_line_cannot_write_the_shells_state`).
//!
//! So the descriptor is one end of a unix stream socket, and the other end, here, receives every
//! write with its writer's credentials (`SO_PASSCRED`): the kernel fills in the sending process's
//! PID, and a process can name another's only with `CAP_SYS_ADMIN` over its PID namespace, which
//! no line has. When the reader asks for credentials, a unix stream socket never hands two
//! writers' bytes to one read, so each read is one writer's. **The shell is the first writer**:
//! the first command of its `-c` program writes [`HELLO`], before anything of the line runs and
//! so before any other process of the line exists (before it, bash and zsh run only their
//! system-wide startup files and `BASH_ENV`, files no line may write). Every later byte from
//! another process — a program of the line, a subshell — is dropped and counted. A process can
//! make the shell write only by writing its memory, which the sandbox refuses (`ptrace` and
//! `process_vm_writev` are filtered, and `/proc/PID/mem` is not writable).
//!
//! A fresh socket serves each run of a line (one run again after a yes gets a new one, so the
//! last run's shell is the one heard), and a thread drains it while the line runs: a report
//! larger than the socket's buffer would otherwise stop the shell mid-write. The bound holds
//! whatever writes.

use crate::error::{Error, Result};
use std::io::IoSliceMut;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// What the line's shell writes first (`hello`): it names the shell as the report's writer.
pub const HELLO: &[u8] = b"shellgate-hello\0";

/// The descriptor number the shell's report is written to.
pub const NUMBER: RawFd = 3;

/// The first command of the sandboxed shell's `-c` program when it reports: [`HELLO`] on
/// descriptor 3. Silent where there is no descriptor 3 (a line run outside the sandbox gets no
/// channel: nothing comes back from it).
pub fn hello(dialect: crate::shell::state::Dialect) -> &'static str {
    match dialect {
        crate::shell::state::Dialect::Bash => {
            "{ builtin printf 'shellgate-hello\\0' >&3; } 2>/dev/null; "
        }
        crate::shell::state::Dialect::Zsh => {
            "{ builtin print -rn -- $'shellgate-hello\\0' >&3; } 2>/dev/null; "
        }
    }
}

/// What the shell reported.
#[derive(Debug, PartialEq, Eq)]
pub enum Collected {
    /// The shell's bytes, after [`HELLO`].
    Bytes(Vec<u8>),
    /// More than the bound: none of it counts.
    TooLong,
    /// Nothing usable came (the reason).
    Unreadable(String),
}

/// The shell's report, and how many bytes other processes of the line wrote (dropped).
#[derive(Debug)]
pub struct Report {
    pub collected: Collected,
    pub foreign: usize,
}

/// The report channel of one line: a socket per run, the last run's read.
#[derive(Debug)]
pub struct StateChannel {
    limit: usize,
    run: Mutex<Option<Run>>,
}

#[derive(Debug)]
struct Run {
    ours: Arc<OwnedFd>,
    reader: JoinHandle<Report>,
}

impl StateChannel {
    /// A channel whose reports are bounded by `limit` bytes.
    pub fn new(limit: usize) -> StateChannel {
        StateChannel {
            limit,
            run: Mutex::new(None),
        }
    }

    /// The last run's report (`None`: the line never ran). Every process of the line has ended
    /// when the gate returns, except where the line runs without its own PID namespace: reading
    /// stops here either way (what the shell wrote is already queued, since it has exited).
    pub fn collect(&self) -> Option<Report> {
        let run = self.run.lock().ok()?.take()?;
        Some(finish(run))
    }
}

impl crate::gate::PassedPerRun for StateChannel {
    fn numbers(&self) -> Vec<RawFd> {
        vec![NUMBER]
    }

    fn for_run(&self) -> Result<Vec<(OwnedFd, RawFd)>> {
        let mut slot = self
            .run
            .lock()
            .map_err(|_| Error::internal("the state channel's lock is poisoned"))?;
        if let Some(earlier) = slot.take() {
            // An earlier run of the line: its processes are gone, and its report is not the
            // line's (the last run's is).
            drop(finish(earlier));
        }
        let (run, theirs) = open(self.limit)?;
        *slot = Some(run);
        Ok(vec![(theirs, NUMBER)])
    }
}

/// A socket pair: ours, receiving with credentials and drained by a thread; theirs, for the line.
fn open(limit: usize) -> Result<(Run, OwnedFd)> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, setsockopt, socketpair, sockopt};
    let failed = |what: &str, e: nix::Error| {
        Error::internal(format!(
            "cannot make the channel for the line's state ({what}): {e}"
        ))
    };
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::Stream,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|e| failed("socketpair", e))?;
    // Before anything is written: every write is then sent with its writer's credentials.
    setsockopt(&ours, sockopt::PassCred, &true).map_err(|e| failed("SO_PASSCRED", e))?;
    let ours = Arc::new(ours);
    let reading = Arc::clone(&ours);
    let reader = std::thread::Builder::new()
        .name("state-channel".into())
        .spawn(move || read(&reading, limit))
        .map_err(|e| Error::internal(format!("cannot start the state channel's reader: {e}")))?;
    Ok((Run { ours, reader }, theirs))
}

/// Stops reading (after what is queued) and returns the run's report.
fn finish(run: Run) -> Report {
    // Wakes a read that waits for a writer that outlived the line; queued bytes are still read.
    let _ = nix::sys::socket::shutdown(run.ours.as_raw_fd(), nix::sys::socket::Shutdown::Read);
    run.reader.join().unwrap_or(Report {
        collected: Collected::Unreadable("its reader failed".into()),
        foreign: 0,
    })
}

/// Reads until every writer is gone (or reading is shut down): the first writer's bytes, which
/// must start with [`HELLO`], up to `limit`; every other writer's are counted and dropped. Reads
/// to the end whatever happens, so that no writer is ever stopped by a full socket.
fn read(ours: &OwnedFd, limit: usize) -> Report {
    let mut taker = Taker::new(limit);
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match receive(ours.as_raw_fd(), &mut buffer) {
            Ok((0, _)) => break,
            Ok((n, writer)) => taker.take(writer, &buffer[..n]),
            Err(nix::Error::EINTR) => {}
            Err(e) => {
                taker.fail(format!("reading it failed: {e}"));
                break;
            }
        }
    }
    taker.report()
}

/// One read: its length and its writer's PID (`None`: it came without credentials).
fn receive(fd: RawFd, buffer: &mut [u8]) -> nix::Result<(usize, Option<libc::pid_t>)> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
    let mut iov = [IoSliceMut::new(buffer)];
    // Room for the credentials only: descriptors a writer passes do not fit, and the kernel
    // closes them instead of installing them here.
    let mut space = nix::cmsg_space!(libc::ucred);
    let message = recvmsg::<()>(fd, &mut iov, Some(&mut space), MsgFlags::MSG_CMSG_CLOEXEC)?;
    let mut writer = None;
    for cmsg in message.cmsgs()? {
        match cmsg {
            ControlMessageOwned::ScmCredentials(credentials) => writer = Some(credentials.pid()),
            ControlMessageOwned::ScmRights(fds) => {
                for fd in fds {
                    // SAFETY: the kernel just installed `fd` in this process for this message;
                    // nothing else knows it, and it is closed once, here.
                    drop(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
                }
            }
            _ => {}
        }
    }
    Ok((message.bytes, writer))
}

/// The report being put together, one read at a time.
struct Taker {
    limit: usize,
    shell: Option<libc::pid_t>,
    bytes: Vec<u8>,
    too_long: bool,
    failure: Option<String>,
    foreign: usize,
}

impl Taker {
    fn new(limit: usize) -> Taker {
        Taker {
            limit,
            shell: None,
            bytes: Vec::new(),
            too_long: false,
            failure: None,
            foreign: 0,
        }
    }

    fn take(&mut self, writer: Option<libc::pid_t>, data: &[u8]) {
        match (self.shell, writer) {
            (None, Some(pid)) => {
                self.shell = Some(pid);
                // The shell's greeting, possibly with more of its report in the same read.
                match data.strip_prefix(HELLO) {
                    Some(rest) => self.append(rest),
                    None => self.fail("its first writer did not greet it as the shell does".into()),
                }
            }
            (Some(shell), Some(pid)) if pid == shell => self.append(data),
            _ => self.foreign += data.len(),
        }
    }

    fn append(&mut self, data: &[u8]) {
        if self.too_long || self.bytes.len() + data.len() >= self.limit {
            self.too_long = true;
            self.bytes = Vec::new();
        } else {
            self.bytes.extend_from_slice(data);
        }
    }

    fn fail(&mut self, reason: String) {
        self.failure.get_or_insert(reason);
    }

    fn report(self) -> Report {
        let collected = match (self.failure, self.too_long, self.shell) {
            (Some(reason), _, _) => Collected::Unreadable(reason),
            (None, true, _) => Collected::TooLong,
            (None, false, None) => Collected::Unreadable("the shell wrote nothing".into()),
            (None, false, Some(_)) => Collected::Bytes(self.bytes),
        };
        Report {
            collected,
            foreign: self.foreign,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::PassedPerRun;
    use std::io::Write;

    fn write_from_child(fd: &OwnedFd, data: &[u8]) {
        // A process of its own: the kernel names it, not this one, as the writer.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "cat >&3"])
            .stdin(std::process::Stdio::piped())
            .spawn_with_fd3(fd);
        child.stdin.take().unwrap().write_all(data).unwrap();
        assert!(child.wait().unwrap().success());
    }

    trait SpawnWithFd3 {
        fn spawn_with_fd3(&mut self, fd: &OwnedFd) -> std::process::Child;
    }

    impl SpawnWithFd3 for std::process::Command {
        fn spawn_with_fd3(&mut self, fd: &OwnedFd) -> std::process::Child {
            use std::os::unix::process::CommandExt;
            let raw = fd.as_raw_fd();
            // SAFETY: dup2 is async-signal-safe; it only gives the child `fd` as descriptor 3.
            unsafe {
                self.pre_exec(move || {
                    if libc::dup2(raw, 3) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                })
            };
            self.spawn().unwrap()
        }
    }

    /// The first writer's bytes after its greeting are the report; another process's bytes,
    /// before or after the first writer's, are dropped and counted.
    #[test]
    fn only_the_first_writers_bytes_are_kept() {
        let channel = StateChannel::new(1 << 20);
        let mut passed = channel.for_run().unwrap();
        let (theirs, number) = passed.pop().unwrap();
        assert_eq!(number, 3);
        let mut shell = std::fs::File::from(theirs.try_clone().unwrap());
        shell.write_all(HELLO).unwrap();
        shell.write_all(b"state ").unwrap();
        write_from_child(&theirs, b"forged state");
        shell.write_all(b"after").unwrap();
        drop(shell);
        drop(theirs);
        let report = channel.collect().unwrap();
        assert_eq!(report.collected, Collected::Bytes(b"state after".to_vec()));
        assert_eq!(report.foreign, b"forged state".len());
    }

    /// A first writer that does not greet as the shell does makes the report unreadable.
    #[test]
    fn a_report_without_the_greeting_is_unreadable() {
        let channel = StateChannel::new(1 << 20);
        let (theirs, _) = channel.for_run().unwrap().pop().unwrap();
        write_from_child(&theirs, b"shellgate-bash-state 1\0");
        drop(theirs);
        let report = channel.collect().unwrap();
        assert!(matches!(report.collected, Collected::Unreadable(_)));
    }

    /// More than the bound is too long, and the reader still drains the rest (a writer is
    /// never stopped by a full socket: this write is larger than any socket buffer).
    #[test]
    fn a_report_past_its_bound_is_too_long() {
        let channel = StateChannel::new(4096);
        let (theirs, _) = channel.for_run().unwrap().pop().unwrap();
        let mut shell = std::fs::File::from(theirs);
        shell.write_all(HELLO).unwrap();
        shell.write_all(&vec![b'a'; 4 << 20]).unwrap();
        drop(shell);
        assert_eq!(channel.collect().unwrap().collected, Collected::TooLong);
    }

    /// A second run gets a socket of its own, and its report is the line's.
    #[test]
    fn the_last_run_is_heard() {
        let channel = StateChannel::new(1 << 20);
        let (first, _) = channel.for_run().unwrap().pop().unwrap();
        let mut first = std::fs::File::from(first);
        first.write_all(HELLO).unwrap();
        first.write_all(b"first").unwrap();
        let (second, _) = channel.for_run().unwrap().pop().unwrap();
        let mut second = std::fs::File::from(second);
        second.write_all(HELLO).unwrap();
        second.write_all(b"second").unwrap();
        drop(second);
        // The first run's end outlives it (a writer left running): reading stops anyway.
        let report = channel.collect().unwrap();
        assert_eq!(report.collected, Collected::Bytes(b"second".to_vec()));
        drop(first);
    }
}
