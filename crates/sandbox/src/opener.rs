//! Opening for writing, made by the supervisor: a line never gets a writable descriptor of a file
//! that has a second name (a hard link).
//!
//! **Why.** Landlock and the mount tree decide by the *name* a file is reached through. A file in
//! a writable root that is also linked from outside it (pnpm and uv install packages as hard links
//! into a store in the home; `cp -al`; `git clone` of a local path) is one inode under both
//! names: a write through the workspace's name changes the file under every name, for every
//! project that links it. No layer that decides by name can tell the two apart.
//!
//! **How.** Every open for writing (`open`, `openat`, `creat` with `O_WRONLY`, `O_RDWR`, `O_CREAT`
//! or `O_TRUNC`) and every `truncate` by name already comes to the supervisor (the observed writes
//! of [`super::seccomp`]). Instead of letting the call go on, a thread of the supervisor that
//! holds the line's own Landlock rules, no capabilities and `no_new_privs` makes the open itself
//! (the supervisor's own thread first reads the call: a Landlock domain may not look into
//! processes outside it, and the line's domain is not the opener's).
//! It resolves the line's path in the line's own root and working directory (`/proc/TID/root`,
//! `/proc/TID/cwd`, or the descriptor the call names), so the same mounts (the read-only ones
//! included) and the same Landlock rules decide as for the line; magic links are not followed
//! (only the line's own descriptors, by their usual names `/dev/stdout`, `/dev/fd/N`,
//! `/proc/self/fd/N`, are reopened, from the line's descriptor). Then it looks at **what it
//! opened** (`fstat` of its own descriptor, not of a name): a regular file with more than one link
//! is closed and the call fails `EACCES`, named as a [`Denial::SecondName`]; anything else is
//! truncated if asked and handed to the line with `SECCOMP_IOCTL_NOTIF_ADDFD` and
//! `SECCOMP_ADDFD_FLAG_SEND`, which installs it and answers the call in one step.
//!
//! **Why this is complete.** A file's content changes only through a descriptor open for writing
//! (`write`, `pwrite`, a shared writable `mmap`, `fallocate`, `copy_file_range`, `splice`, `FICLONE`
//! all need one) or through `truncate` by name. Every such descriptor the line gets is made here:
//! `openat2` fails `ENOSYS` in the filter (programs fall back to `openat`), `io_uring` is refused,
//! `open_by_handle_at` needs a capability the line does not have, and what the line inherits is its
//! terminal and pipes. The check is made on the inode already opened, so renaming or swapping names
//! between a look and the call cannot change what was checked. The line also cannot make a new
//! name for an outside file: Landlock refuses a link from a tree without the `REFER` right.
//!
//! **Exceptions**, each argued where it is made: an open that would wait ([`wait_on_a_thread`]),
//! `/dev/tty` ([`DEV_TTY`]), `O_PATH` handles ([`Call::of`]), a sandbox nested in the line
//! ([`announcement`]: it has no supervisor of its own, so its opens are made here, held to its
//! rules too).
//!
//! **Not covered**: a second name's *metadata* — mode, owner, times, extended attributes
//! (`chmod`, `touch` through the workspace's name) — which name-based calls change on the shared
//! inode.

use super::notify::{Denial, WriteScope};
use super::raw;
use super::seccomp::{Arch, Sys};
use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

/// The calls this module answers: the observed writes that open or truncate a file by name.
pub fn makes(nr: i64, args: &[u64; 6]) -> bool {
    Call::of(nr, args).is_some()
}

/// A call to make here, as read from its registers.
#[derive(Debug, Clone, Copy)]
enum Call {
    /// `open`/`openat`/`creat`: a descriptor relative to `dir` (`None`: the working directory).
    Open {
        dir: Option<i32>,
        path: u64,
        flags: i32,
        mode: u32,
    },
    /// `truncate(path, length)`.
    Truncate { path: u64, length: i64 },
}

/// `open`'s flags that make an open one for writing.
const WRITE_FLAGS: i32 = libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC;

impl Call {
    fn of(nr: i64, args: &[u64; 6]) -> Option<Call> {
        let arch = Arch::native()?;
        let is = |sys: Sys| sys.number(arch) == nr;
        let flags = |i: usize| args[i] as i32;
        let call = if is(Sys::Openat) {
            Call::Open {
                dir: Some(args[0] as i32),
                path: args[1],
                flags: flags(2),
                mode: args[3] as u32,
            }
        } else if is(Sys::Open) {
            Call::Open {
                dir: None,
                path: args[0],
                flags: flags(1),
                mode: args[2] as u32,
            }
        } else if is(Sys::Creat) {
            Call::Open {
                dir: None,
                path: args[0],
                flags: libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC,
                mode: args[1] as u32,
            }
        } else if is(Sys::Truncate) {
            Call::Truncate {
                path: args[0],
                length: args[1] as i64,
            }
        } else {
            return None;
        };
        match call {
            // `O_PATH` ignores every other flag but three: a handle, never opened for writing,
            // and never a new file (the kernel decides it, as any handle).
            Call::Open { flags, .. } if flags & WRITE_FLAGS == 0 || flags & libc::O_PATH != 0 => {
                None
            }
            call => Some(call),
        }
    }
}

/// A call ready to be made: what the line's thread named, read on the supervisor's own thread
/// (the opener's Landlock domain is not the line's, so it may not look into the line's
/// processes), with the directories it is resolved from, held open.
struct Request {
    id: u64,
    what: What,
    name: Vec<u8>,
    at: At,
    /// The line thread's umask, when the call may create a file.
    umask: Option<u32>,
}

#[derive(Debug, Clone, Copy)]
enum What {
    Open { flags: i32, mode: u32 },
    Truncate { length: i64 },
}

/// Where the name is resolved from.
enum At {
    /// The line's own descriptor, named by `/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`:
    /// reopened from the descriptor itself (`O_PATH`).
    Own(OwnedFd),
    /// An absolute name, in the line's root.
    Root(Arc<OwnedFd>),
    /// A relative name, beneath the line's working directory or the call's descriptor (`start`);
    /// from the line's root (`root`) when it goes above it.
    Beneath { start: OwnedFd, root: Arc<OwnedFd> },
}

impl Request {
    /// The call of thread `tid` (whose call the kernel holds meanwhile) naming `name`, with
    /// where it is resolved from; `root` is the line's root directory.
    fn gather(
        id: u64,
        tid: u32,
        call: Call,
        name: Vec<u8>,
        root: &Arc<OwnedFd>,
    ) -> Result<Request, libc::c_int> {
        let (what, dir) = match call {
            Call::Open {
                dir, flags, mode, ..
            } => (What::Open { flags, mode }, dir),
            Call::Truncate { length, .. } => (What::Truncate { length }, None),
        };
        let at = match own_descriptor(&name) {
            Some(n) => At::Own(proc_of(tid, &format!("fd/{n}"), libc::O_PATH)?),
            None if name.starts_with(b"/") => At::Root(Arc::clone(root)),
            None => {
                let start = match dir {
                    None | Some(libc::AT_FDCWD) => "cwd".to_owned(),
                    Some(fd) => format!("fd/{fd}"),
                };
                At::Beneath {
                    start: proc_of(tid, &start, libc::O_PATH)?,
                    root: Arc::clone(root),
                }
            }
        };
        let umask = match what {
            What::Open { flags, .. } if creates(flags) => Some(umask_of(tid)?),
            _ => None,
        };
        Ok(Request {
            id,
            what,
            name,
            at,
            umask,
        })
    }
}

fn creates(flags: i32) -> bool {
    flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE
}

/// Opens `/proc/TID/<what>` (the link followed: the line's file itself).
fn proc_of(tid: u32, what: &str, flags: i32) -> Result<OwnedFd, libc::c_int> {
    let path = c_string(format!("/proc/{tid}/{what}").as_bytes())?;
    raw::openat2_mode(libc::AT_FDCWD, &path, flags | libc::O_CLOEXEC, 0, 0).map(owned)
}

fn root_of(tid: u32) -> Result<OwnedFd, libc::c_int> {
    proc_of(tid, "root", libc::O_PATH | libc::O_DIRECTORY)
}

/// The opener of one line: its thread is started at the first open it is given.
#[derive(Debug)]
pub struct Opener {
    /// The line's Landlock ruleset, each opener thread's rules.
    ruleset: OwnedFd,
    jobs: Option<Jobs>,
    /// The rulesets of sandboxes nested in the line, as they announced themselves (see
    /// [`announcement`]), and the count of seccomp filters below which a caller is not in one.
    nested: Vec<OwnedFd>,
    outer_filters: u32,
    /// The thread for callers in a nested sandbox: the line's rules and every nested one's.
    nested_jobs: Option<Jobs>,
    /// More sandboxes nested in the line than [`MAX_NESTED`]: their callers are refused.
    failed_nested: bool,
    /// What the threads refused, for the line's report.
    denials: Arc<Mutex<Vec<Denial>>>,
    /// Why a thread could not start, once one failed: every open is then refused.
    failed: Option<String>,
    /// The line's root directory: the same for every process of the line, which can change
    /// neither its root nor its mounts. Taken from the first caller.
    root: Option<Arc<OwnedFd>>,
}

/// Sandboxes nested in a line whose rules the opener holds (see [`announcement`]).
const MAX_NESTED: usize = 8;

/// What [`Opener::make`] did with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// Handed to an opener thread, which answers it.
    Made,
    /// A nested sandbox's announcement: to be answered `ENOENT`, as the kernel would, and not
    /// noted as a write.
    Announcement,
    /// `/dev/tty`, the caller's own controlling terminal: only the kernel, in the caller, knows
    /// which that is. The call goes on (`CONTINUE`): the name cannot lead elsewhere in the
    /// line's root, whose `/dev` the line may not change (see [`DEV_TTY`]).
    ControllingTerminal,
}

/// The controlling terminal's name. The line's Landlock rules give it no right to make, remove
/// or rename anything in `/dev`, and it can change neither its root nor its mounts, so this exact
/// name always resolves to the device `5:0`, which the kernel opens as the caller's own terminal.
/// Any other name of that device is refused (`ENXIO`): opened here, it would be the supervisor's.
const DEV_TTY: &[u8] = b"/dev/tty";

impl Opener {
    /// An opener with the line's Landlock `ruleset` (complete once the line's process has sent
    /// its listener: that process adds its own rules before).
    pub fn new(ruleset: OwnedFd) -> Opener {
        Opener {
            root: None,
            ruleset,
            jobs: None,
            nested: Vec::new(),
            outer_filters: u32::MAX,
            nested_jobs: None,
            failed_nested: false,
            denials: Arc::new(Mutex::new(Vec::new())),
            failed: None,
        }
    }

    /// Makes the call of notification `notif` (one [`makes`] accepts) on an opener thread,
    /// which answers it, naming what `scope` refuses as a refused write. `Err(errno)`: the call
    /// is to be answered with it here (refused, never let through).
    pub fn make(
        &mut self,
        listener: &OwnedFd,
        notif: &libc::seccomp_notif,
        scope: &WriteScope,
    ) -> Result<Taken, libc::c_int> {
        let call = Call::of(notif.data.nr as i64, &notif.data.args).ok_or(libc::ENOSYS)?;
        let (path, dir) = match call {
            Call::Open { path, dir, .. } => (path, dir),
            Call::Truncate { path, .. } => (path, None),
        };
        let name = match read_path(notif.pid, path) {
            Err(libc::ENOENT) => return self.announced(notif.pid, dir).ok_or(libc::ENOENT),
            name => name?,
        };
        if name == DEV_TTY && matches!(call, Call::Open { .. }) {
            return Ok(Taken::ControllingTerminal);
        }
        let root = match &self.root {
            Some(root) => Arc::clone(root),
            None => Arc::clone(self.root.insert(Arc::new(root_of(notif.pid)?))),
        };
        let request = Request::gather(notif.id, notif.pid, call, name, &root)?;
        let nested = !self.nested.is_empty() && filters_of(notif.pid)? > self.outer_filters;
        if nested && self.failed_nested {
            return Err(libc::EACCES);
        }
        // What was read by thread id was the caller's only if its call still waits (not a
        // process that reused the id after the caller died); else there is nothing to answer.
        if !super::notify::still_pending(listener, notif.id) {
            return Ok(Taken::Made);
        }
        let jobs = self.start(listener, nested, scope).ok_or(libc::EACCES)?;
        jobs.send(request)?;
        Ok(Taken::Made)
    }

    /// Whether thread `tid` runs in a sandbox nested in the line that announced itself (more
    /// seccomp filters than the line's own; see [`announcement`]). A thread whose count cannot
    /// be read is taken for one.
    pub(super) fn is_nested_caller(&self, tid: u32) -> bool {
        !self.nested.is_empty() && filters_of(tid).map_or(true, |n| n > self.outer_filters)
    }

    /// The empty name relative to a descriptor: a nested sandbox's announcement when that
    /// descriptor is a Landlock ruleset (see [`announcement`]), kept for every later caller in
    /// a nested sandbox; `None` otherwise (answered `ENOENT`, as the kernel would).
    fn announced(&mut self, tid: u32, dir: Option<i32>) -> Option<Taken> {
        let (ruleset, filters) = announcement(tid, dir?)?;
        // Each ruleset is a descriptor here and a Landlock layer (at most 16) on the thread:
        // beyond MAX_NESTED, callers in a nested sandbox are refused every open.
        if self.nested.len() >= MAX_NESTED {
            self.failed_nested = true;
        } else {
            self.nested.push(ruleset);
        }
        self.outer_filters = self.outer_filters.min(filters.saturating_sub(1));
        // The next caller in a nested sandbox gets a thread with every ruleset so far.
        self.nested_jobs = None;
        Some(Taken::Announcement)
    }

    /// What the threads refused so far (each once).
    pub fn take_denials(&self) -> Vec<Denial> {
        match self.denials.lock() {
            Ok(mut list) => std::mem::take(&mut *list),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }

    /// Why a thread could not start, as a denial, if one could not.
    pub fn failed(&self) -> Option<Denial> {
        self.failed.as_ref().map(|reason| Denial::OpenerFailed {
            reason: reason.clone(),
        })
    }

    fn start(&mut self, listener: &OwnedFd, nested: bool, scope: &WriteScope) -> Option<&Jobs> {
        let started = if nested {
            self.nested_jobs.is_some()
        } else {
            self.jobs.is_some()
        };
        if !started && self.failed.is_none() {
            let mut rulesets = vec![&self.ruleset];
            if nested {
                rulesets.extend(&self.nested);
            }
            match spawn(listener, &rulesets, &self.denials, scope) {
                Ok(jobs) if nested => self.nested_jobs = Some(jobs),
                Ok(jobs) => self.jobs = Some(jobs),
                Err(e) => self.failed = Some(e.to_string()),
            }
        }
        if nested {
            self.nested_jobs.as_ref()
        } else {
            self.jobs.as_ref()
        }
    }
}

/// Starts an opener thread under `rulesets` (each a Landlock layer, the line's first).
fn spawn(
    listener: &OwnedFd,
    rulesets: &[&OwnedFd],
    denials: &Arc<Mutex<Vec<Denial>>>,
    scope: &WriteScope,
) -> io::Result<Jobs> {
    let notes = Notes {
        denials: Arc::clone(denials),
        scope: Arc::new(scope.clone()),
    };
    let rulesets: Vec<OwnedFd> = rulesets
        .iter()
        .map(|r| r.try_clone())
        .collect::<io::Result<_>>()?;
    let listener = listener.try_clone()?;
    let (queue, receive) = std::sync::mpsc::channel::<Request>();
    let (bell, ringing) = doorbell()?;
    let (ready, started) = std::sync::mpsc::sync_channel::<io::Result<()>>(1);
    std::thread::Builder::new()
        .name("sandbox-open".into())
        .spawn(move || {
            let setup = confine(&rulesets);
            drop(rulesets);
            let ok = setup.is_ok();
            let _ = ready.send(setup);
            if ok {
                serve(&listener, &receive, &ringing, &notes);
            }
        })?;
    started
        .recv()
        .map_err(|_| io::Error::other("the opener's thread ended before it started"))??;
    Ok(Jobs { queue, bell })
}

/// A sandbox nested in the line announces its Landlock ruleset, once it is complete and before
/// its program runs, by an open for writing of the empty name relative to the ruleset (which
/// fails `ENOENT` wherever nobody listens for it; see `child::install_seccomp`): nested, it has
/// no supervisor of its own (the kernel gives a second listener to no one), so this one makes its
/// opens, and must hold them to its rules too. The ruleset (a copy of the caller's descriptor)
/// and the caller's count of seccomp filters. Anything announced can only narrow: each ruleset is
/// one more Landlock layer on the opener's thread for callers in a nested sandbox, which are told
/// by their count of seccomp filters (one that only grows): more than the fewest an announcer
/// had, less its own. Rulesets are kept for the rest of the line: which ruleset is whose cannot
/// be told, so every nested caller is held to all of them (two nested sandboxes, at once or one
/// after the other, each to both — never to neither). Dropping one when its sandbox seemed gone
/// would let a process left in it announce a ruleset that allows everything and shed its own.
fn announcement(tid: u32, dir: i32) -> Option<(OwnedFd, u32)> {
    if dir < 0 {
        return None;
    }
    let tgid = status_field(tid, b"Tgid:", 10).ok()? as libc::pid_t;
    let pid = super::sys::pidfd_open(tgid).ok()?;
    let ruleset = super::unix_connect::take_descriptor(&pid, dir).ok()?;
    let kind = std::fs::read_link(format!("/proc/self/fd/{}", ruleset.as_raw_fd())).ok()?;
    if kind.as_os_str() != "anon_inode:[landlock-ruleset]" {
        return None;
    }
    Some((ruleset, filters_of(tid).ok()?))
}

/// How many seccomp filters thread `tid` runs under.
fn filters_of(tid: u32) -> Result<u32, libc::c_int> {
    status_field(tid, b"Seccomp_filters:", 10)
}

/// Takes on the line's limits in this thread only: its own umask, no capabilities,
/// `no_new_privs`, the line's Landlock rules (and a nested sandbox's). Each of them is per thread.
fn confine(rulesets: &[OwnedFd]) -> io::Result<()> {
    // SAFETY: unshare with CLONE_FS only gives this thread its own root, cwd and umask.
    if unsafe { libc::unshare(libc::CLONE_FS) } != 0 {
        return Err(io::Error::last_os_error());
    }
    raw::prctl(libc::PR_SET_NO_NEW_PRIVS, 1).map_err(io::Error::from_raw_os_error)?;
    raw::drop_capabilities().map_err(io::Error::from_raw_os_error)?;
    for ruleset in rulesets {
        raw::landlock_restrict_self(ruleset.as_raw_fd(), 0)
            .map_err(io::Error::from_raw_os_error)?;
    }
    Ok(())
}

/// Where an opener thread notes what the sandbox refused: a second name, and a write the
/// sandbox refuses (outside the writable roots, or in a protected path).
#[derive(Clone)]
struct Notes {
    denials: Arc<Mutex<Vec<Denial>>>,
    scope: Arc<WriteScope>,
}

impl Notes {
    fn record(&self, denial: Denial) {
        match self.denials.lock() {
            Ok(mut list) => super::notify::record(&mut list, denial),
            Err(poisoned) => super::notify::record(&mut poisoned.into_inner(), denial),
        }
    }

    /// A write refused where the sandbox refuses writes, named by the path it was asked for
    /// (lexically, from where the line started: what it named, not where links led).
    fn refused(&self, request: &Request) {
        let base = match &request.at {
            // The line's own descriptors: their refusals are the kernel's, never a grant's.
            At::Own(_) => return,
            At::Root(_) => Some(PathBuf::from("/")),
            At::Beneath { start, .. } => own_name(start).ok(),
        };
        let Some(base) = base else { return };
        let path = super::notify::lexical(&base, Path::new(OsStr::from_bytes(&request.name)));
        if self.scope.refuses(&path) {
            let operation = match request.what {
                What::Open { .. } => "writing",
                What::Truncate { .. } => "truncating",
            };
            self.record(Denial::Write { path, operation });
        }
    }
}

fn serve(listener: &OwnedFd, jobs: &Receiver<Request>, ringing: &OwnedFd, notes: &Notes) {
    let waiting = Arc::new(AtomicUsize::new(0));
    while rung(ringing) {
        while let Ok(request) = jobs.try_recv() {
            serve_one(listener, request, notes, &waiting);
        }
    }
    // The opener is gone: what it sent before is still answered.
    while let Ok(request) = jobs.try_recv() {
        serve_one(listener, request, notes, &waiting);
    }
}

fn serve_one(listener: &OwnedFd, request: Request, notes: &Notes, waiting: &Arc<AtomicUsize>) {
    {
        let id = request.id;
        if let Some(request) = answer(listener, request, notes)
            && wait_on_a_thread(listener, request, notes, waiting).is_err()
        {
            respond(listener, id, -libc::EAGAIN);
        }
    }
}

/// The queue of an opener thread, and its doorbell: a pipe the thread sleeps on. A pipe's
/// wake-up tells the scheduler that the writer is about to sleep (the supervisor goes back to its
/// listener), so the opener runs on the same CPU at once; a futex's (a channel's own) does not,
/// and the handover cost ≈ 60 µs a call in a VM.
#[derive(Debug)]
struct Jobs {
    queue: Sender<Request>,
    bell: OwnedFd,
}

impl Jobs {
    fn send(&self, request: Request) -> Result<(), libc::c_int> {
        self.queue.send(request).map_err(|_| libc::EACCES)?;
        // SAFETY: writes one byte from a valid buffer to a pipe this process owns.
        let wrote = unsafe { libc::write(self.bell.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
        if wrote == 1 {
            Ok(())
        } else {
            Err(libc::EACCES)
        }
    }
}

/// A pipe: the end rung, the end waited on.
fn doorbell() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((owned(fds[1]), owned(fds[0])))
}

/// Waits for the doorbell; `false` once it is gone (the opener dropped its end).
fn rung(ringing: &OwnedFd) -> bool {
    let mut buf = [0u8; 64];
    loop {
        // SAFETY: reads into a valid buffer of the length given, from a pipe this thread holds.
        let n = unsafe { libc::read(ringing.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n > 0 {
            return true;
        }
        if n == 0 || errno() != libc::EINTR {
            return false;
        }
    }
}

/// Makes the request's call and answers it; gives the request back when its open would wait
/// (a FIFO without a reader, a lease being broken), unanswered.
fn answer(listener: &OwnedFd, request: Request, notes: &Notes) -> Option<Request> {
    let result = match request.what {
        What::Open { flags, mode } => open(&request, flags, mode),
        What::Truncate { length } => truncate(&request, length).map(|()| Made::Nothing),
    };
    let id = request.id;
    match result {
        Ok(Made::Descriptor(fd, cloexec)) => hand_over(listener, id, &fd, cloexec),
        Ok(Made::Nothing) => respond(listener, id, 0),
        Err(Refused::Errno(errno)) => {
            if [libc::EACCES, libc::EPERM, libc::EROFS].contains(&errno) {
                notes.refused(&request);
            }
            respond(listener, id, -errno);
        }
        Err(Refused::SecondName(denial)) => {
            notes.record(denial);
            respond(listener, id, -libc::EACCES);
        }
        Err(Refused::WouldWait) => return Some(request),
    }
    None
}

/// Threads waiting for opens at once, at most: beyond, an open that would wait fails `EAGAIN`.
const MAX_WAITING: usize = 64;
/// How often a waiting open is tried again.
const WAIT_STEP: std::time::Duration = std::time::Duration::from_millis(2);

/// An open that would wait, tried again on a thread of its own (which has this thread's Landlock
/// domain, capabilities and `no_new_privs`: a new thread inherits them) until it no longer would,
/// or the caller stopped waiting (it died, or a signal interrupted its call). Never blocked in
/// the kernel: a FIFO whose reader never comes costs a thread only while its writer waits.
fn wait_on_a_thread(
    listener: &OwnedFd,
    request: Request,
    notes: &Notes,
    waiting: &Arc<AtomicUsize>,
) -> io::Result<()> {
    if waiting.fetch_add(1, Ordering::SeqCst) >= MAX_WAITING {
        waiting.fetch_sub(1, Ordering::SeqCst);
        return Err(io::Error::from_raw_os_error(libc::EAGAIN));
    }
    let listener = listener.try_clone()?;
    let notes = notes.clone();
    let count = Arc::clone(waiting);
    let spawned = std::thread::Builder::new()
        .name("sandbox-open-wait".into())
        .spawn(move || {
            // Its own umask, as the opener's (see `confine`).
            // SAFETY: unshare with CLONE_FS only gives this thread its own root, cwd and umask.
            let own = unsafe { libc::unshare(libc::CLONE_FS) } == 0;
            let mut request = Some(request);
            while let Some(waiting) = request.take() {
                if !own {
                    respond(&listener, waiting.id, -libc::EAGAIN);
                    break;
                }
                if !super::notify::still_pending(&listener, waiting.id) {
                    break;
                }
                std::thread::sleep(WAIT_STEP);
                request = answer(&listener, waiting, &notes);
            }
            count.fetch_sub(1, Ordering::SeqCst);
        });
    if spawned.is_err() {
        waiting.fetch_sub(1, Ordering::SeqCst);
    }
    spawned.map(drop)
}

/// What a call made.
enum Made {
    /// A descriptor for the line, to be marked close-on-exec there or not.
    Descriptor(OwnedFd, bool),
    Nothing,
}

/// Why a call was not made.
enum Refused {
    Errno(libc::c_int),
    /// A regular file with another name.
    SecondName(Denial),
    /// A FIFO without a reader or a lease being broken, opened without `O_NONBLOCK`: to be tried
    /// again where it may wait.
    WouldWait,
}

impl From<libc::c_int> for Refused {
    fn from(errno: libc::c_int) -> Refused {
        Refused::Errno(errno)
    }
}

/// The flags `openat2` accepts (it refuses unknown ones, which `openat` ignores).
const OPEN_FLAGS: i32 = libc::O_ACCMODE
    | libc::O_CREAT
    | libc::O_EXCL
    | libc::O_NOCTTY
    | libc::O_TRUNC
    | libc::O_APPEND
    | libc::O_NONBLOCK
    | libc::O_DSYNC
    | libc::O_SYNC
    | libc::O_ASYNC
    | libc::O_DIRECT
    | libc::O_LARGEFILE
    | libc::O_DIRECTORY
    | libc::O_NOFOLLOW
    | libc::O_NOATIME
    | libc::O_CLOEXEC
    | libc::O_TMPFILE;

fn open(request: &Request, flags: i32, mode: u32) -> Result<Made, Refused> {
    if let Some(umask) = request.umask {
        // SAFETY: umask only sets this thread's (unshared, see `confine`) file-creation mask.
        unsafe { libc::umask(umask & 0o777) };
    }
    // Never waiting here: a FIFO without a reader fails ENXIO instead, a lease being broken
    // EWOULDBLOCK, and the open is tried again where it may wait. The truncation is made only
    // once the file has been seen to have one name.
    let added_nonblock = flags & libc::O_NONBLOCK == 0;
    let mut how = (flags & OPEN_FLAGS & !libc::O_TRUNC) | libc::O_CLOEXEC | libc::O_NOCTTY;
    if added_nonblock {
        how |= libc::O_NONBLOCK;
    }
    let mode = if creates(flags) {
        u64::from(mode & 0o7777)
    } else {
        0
    };
    let fd = match open_as_line(&request.at, &request.name, how, mode) {
        Err(libc::ENXIO | libc::EWOULDBLOCK) if added_nonblock => return Err(Refused::WouldWait),
        result => result?,
    };
    let stat = fstat(&fd)?;
    refuse_second_name(&fd, &stat)?;
    if is_controlling_terminal(&stat) {
        return Err(Refused::Errno(libc::ENXIO));
    }
    if added_nonblock {
        clear_nonblock(&fd)?;
    }
    let fd = if flags & libc::O_TRUNC != 0 && is_regular(&stat) {
        truncated(fd, flags)?
    } else {
        fd
    };
    Ok(Made::Descriptor(fd, flags & libc::O_CLOEXEC != 0))
}

fn truncate(request: &Request, length: i64) -> Result<(), Refused> {
    let how = libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOCTTY | libc::O_NONBLOCK;
    let fd = open_as_line(&request.at, &request.name, how, 0)?;
    let stat = fstat(&fd)?;
    if stat.st_mode & libc::S_IFMT == libc::S_IFDIR {
        return Err(Refused::Errno(libc::EISDIR));
    }
    if !is_regular(&stat) {
        return Err(Refused::Errno(libc::EINVAL));
    }
    refuse_second_name(&fd, &stat)?;
    // SAFETY: `fd` is an open descriptor this thread owns.
    if unsafe { libc::ftruncate(fd.as_raw_fd(), length) } != 0 {
        return Err(Refused::Errno(errno()));
    }
    Ok(())
}

/// The device `5:0` (`/dev/tty` by another name: see [`DEV_TTY`]).
fn is_controlling_terminal(stat: &libc::stat) -> bool {
    stat.st_mode & libc::S_IFMT == libc::S_IFCHR && stat.st_rdev == libc::makedev(5, 0)
}

fn is_regular(stat: &libc::stat) -> bool {
    stat.st_mode & libc::S_IFMT == libc::S_IFREG
}

/// A regular file with more than one link is not opened for writing.
fn refuse_second_name(fd: &OwnedFd, stat: &libc::stat) -> Result<(), Refused> {
    if !is_regular(stat) || links(stat) <= 1 {
        return Ok(());
    }
    let path = std::fs::read_link(format!("/proc/thread-self/fd/{}", fd.as_raw_fd()))
        .unwrap_or_else(|_| PathBuf::from("a file"));
    Err(Refused::SecondName(Denial::SecondName {
        path,
        links: links(stat),
    }))
}

/// The link count, as the kernel counts it (`nlink_t` is 64 bits on some targets, 32 on others).
#[allow(clippy::useless_conversion)]
fn links(stat: &libc::stat) -> u64 {
    u64::from(stat.st_nlink)
}

/// `O_TRUNC`, made on the file already checked: `ftruncate` when it is open for writing, else
/// (`O_RDONLY | O_TRUNC`, which Linux truncates) a reopen of that very file with the flags.
fn truncated(fd: OwnedFd, flags: i32) -> Result<OwnedFd, Refused> {
    if flags & libc::O_ACCMODE != libc::O_RDONLY {
        // SAFETY: `fd` is an open descriptor this thread owns.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), 0) } != 0 {
            return Err(Refused::Errno(errno()));
        }
        return Ok(fd);
    }
    let how = (flags & OPEN_FLAGS & !(libc::O_CREAT | libc::O_EXCL)) | libc::O_CLOEXEC;
    Ok(reopen(&fd, how, 0)?)
}

fn clear_nonblock(fd: &OwnedFd) -> Result<(), Refused> {
    // SAFETY: F_GETFL/F_SETFL on an open descriptor this thread owns.
    unsafe {
        let status = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if status < 0 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, status & !libc::O_NONBLOCK) < 0
        {
            return Err(Refused::Errno(errno()));
        }
    }
    Ok(())
}

/// Opens `name` as the line would, from `at`, following no magic link.
fn open_as_line(at: &At, name: &[u8], flags: i32, mode: u64) -> Result<OwnedFd, libc::c_int> {
    let path = c_string(name)?;
    match at {
        At::Own(fd) => reopen(fd, flags, mode),
        At::Root(root) => openat2(root.as_raw_fd(), &path, flags, mode, IN_ROOT),
        At::Beneath { start, root } => {
            match openat2(start.as_raw_fd(), &path, flags, mode, BENEATH) {
                // `..` above the start, or an absolute symlink: resolved again from the line's
                // root, through the start's name there. A rename meanwhile changes only which of
                // the line's own files is opened (and checked), never the root or the rules.
                Err(libc::EXDEV) => {
                    let start_name = own_name(start)?.into_os_string();
                    let mut joined = start_name.into_encoded_bytes();
                    if !joined.starts_with(b"/") || joined.ends_with(b" (deleted)") {
                        return Err(libc::ENOENT);
                    }
                    joined.push(b'/');
                    joined.extend_from_slice(name);
                    openat2(root.as_raw_fd(), &c_string(&joined)?, flags, mode, IN_ROOT)
                }
                result => result,
            }
        }
    }
}

const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_BENEATH: u64 = 0x08;
const RESOLVE_IN_ROOT: u64 = 0x10;
/// Within the line's root, as its own lookups are.
const IN_ROOT: u64 = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
/// Beneath its working directory or descriptor: exactly its own lookup wherever this succeeds.
const BENEATH: u64 = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;

/// `openat2` with a mode, retried when a rename raced with a `..` (`EAGAIN`).
fn openat2(
    dir: RawFd,
    path: &CString,
    flags: i32,
    mode: u64,
    resolve: u64,
) -> Result<OwnedFd, libc::c_int> {
    let mut tries = 0;
    loop {
        match raw::openat2_mode(dir, path, flags, mode, resolve) {
            Err(libc::EAGAIN) if tries < 3 => tries += 1,
            result => return result.map(owned),
        }
    }
}

/// Opens again the very file `fd` refers to (its magic link in this thread's `/proc`).
fn reopen(fd: &OwnedFd, flags: i32, mode: u64) -> Result<OwnedFd, libc::c_int> {
    let again = c_string(format!("/proc/thread-self/fd/{}", fd.as_raw_fd()).as_bytes())?;
    openat2(libc::AT_FDCWD, &again, flags, mode, 0)
}

/// The name of `fd`'s file, as this thread's `/proc` gives it.
fn own_name(fd: &OwnedFd) -> Result<PathBuf, libc::c_int> {
    std::fs::read_link(format!("/proc/thread-self/fd/{}", fd.as_raw_fd())).map_err(|_| libc::ENOENT)
}

/// `/dev/stdin`, `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`,
/// `/proc/thread-self/fd/N`: the line's own descriptor `N`.
fn own_descriptor(name: &[u8]) -> Option<u32> {
    let named = [
        (&b"/dev/stdin"[..], 0),
        (b"/dev/stdout", 1),
        (b"/dev/stderr", 2),
    ];
    if let Some((_, n)) = named.iter().find(|(path, _)| *path == name) {
        return Some(*n);
    }
    ["/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"]
        .iter()
        .find_map(|prefix| name.strip_prefix(prefix.as_bytes()))
        .filter(|digits| !digits.is_empty() && digits.iter().all(u8::is_ascii_digit))
        .and_then(|digits| std::str::from_utf8(digits).ok()?.parse().ok())
}

fn c_string(bytes: &[u8]) -> Result<CString, libc::c_int> {
    CString::new(bytes).map_err(|_| libc::EINVAL)
}

fn owned(fd: RawFd) -> OwnedFd {
    // SAFETY: `fd` was just returned by the kernel and is owned by no one else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// The first read of a name, in bytes.
const SHORT_NAME: usize = 256;

/// The path argument at `address` in the memory of `tid` (whose call the kernel holds).
fn read_path(tid: u32, address: u64) -> Result<Vec<u8>, libc::c_int> {
    if address == 0 {
        return Err(libc::EFAULT);
    }
    // Most names are short: the first read copies little, a longer name is read again whole.
    let mut bytes = super::notify::read_memory(tid, address, SHORT_NAME).ok_or(libc::EFAULT)?;
    if !bytes.contains(&0) {
        bytes = super::notify::read_memory(tid, address, libc::PATH_MAX as usize)
            .ok_or(libc::EFAULT)?;
    }
    let end = bytes
        .iter()
        .position(|b| *b == 0)
        .ok_or(libc::ENAMETOOLONG)?;
    if end == 0 {
        return Err(libc::ENOENT);
    }
    Ok(bytes[..end].to_vec())
}

/// The umask of the line's thread `tid`.
fn umask_of(tid: u32) -> Result<u32, libc::c_int> {
    status_field(tid, b"Umask:", 8)
}

/// A number in `/proc/TID/status`, in `radix`.
fn status_field(tid: u32, field: &[u8], radix: u32) -> Result<u32, libc::c_int> {
    use std::io::Read;
    let mut file = std::fs::File::open(format!("/proc/{tid}/status")).map_err(|_| libc::ESRCH)?;
    // One read of a page: the fields asked for (`Umask`, `Tgid`, `Seccomp_filters`) lie well
    // within the first.
    let mut page = [0u8; 4096];
    let n = file.read(&mut page).map_err(|_| libc::ESRCH)?;
    page[..n]
        .split(|b| *b == b'\n')
        .find_map(|line| line.strip_prefix(field))
        .and_then(|value| std::str::from_utf8(value).ok())
        .and_then(|value| u32::from_str_radix(value.trim(), radix).ok())
        .ok_or(libc::ESRCH)
}

fn fstat(fd: &OwnedFd) -> Result<libc::stat, libc::c_int> {
    // SAFETY: stat is plain old data; all-zero is a valid value, which fstat fills in.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open and `stat` is a valid, writable stat.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) } != 0 {
        return Err(errno());
    }
    Ok(stat)
}

fn errno() -> libc::c_int {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Installs `fd` in the line and answers the call with its number, in one step.
fn hand_over(listener: &OwnedFd, id: u64, fd: &OwnedFd, cloexec: bool) {
    let addfd = libc::seccomp_notif_addfd {
        id,
        flags: libc::SECCOMP_ADDFD_FLAG_SEND as u32,
        srcfd: fd.as_raw_fd() as u32,
        newfd: 0,
        newfd_flags: if cloexec { libc::O_CLOEXEC as u32 } else { 0 },
    };
    // SAFETY: `addfd` is a valid seccomp_notif_addfd the ioctl only reads; `listener` is a
    // seccomp listener this process owns. On success the call is answered with the new number.
    let ret = unsafe {
        libc::ioctl(
            listener.as_raw_fd(),
            libc::SECCOMP_IOCTL_NOTIF_ADDFD,
            &addfd,
        )
    };
    if ret >= 0 {
        return;
    }
    match errno() {
        // The caller died: nothing to answer.
        libc::ENOENT => {}
        // A kernel before 5.14 has no SEND: the descriptor is installed, then the call answered.
        libc::EINVAL => {
            let addfd = libc::seccomp_notif_addfd { flags: 0, ..addfd };
            // SAFETY: as above.
            let fd = unsafe {
                libc::ioctl(
                    listener.as_raw_fd(),
                    libc::SECCOMP_IOCTL_NOTIF_ADDFD,
                    &addfd,
                )
            };
            if fd < 0 {
                respond(listener, id, -errno());
            } else {
                respond_value(listener, id, i64::from(fd));
            }
        }
        // The line's descriptors are full (EMFILE), or another failure: the call fails with it.
        e => respond(listener, id, -e),
    }
}

/// Answers the call with `result` (`0` or `-errno`); the call does not run.
fn respond(listener: &OwnedFd, id: u64, result: i32) {
    super::notify::send_answer(listener, id, 0, result.min(0));
}

/// Answers the call with the value `val` (its result: a descriptor's number).
fn respond_value(listener: &OwnedFd, id: u64, val: i64) {
    super::notify::send_answer(listener, id, val, 0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_own_descriptors_are_known_by_their_usual_names() {
        assert_eq!(own_descriptor(b"/dev/stdout"), Some(1));
        assert_eq!(own_descriptor(b"/dev/stderr"), Some(2));
        assert_eq!(own_descriptor(b"/dev/fd/63"), Some(63));
        assert_eq!(own_descriptor(b"/proc/self/fd/7"), Some(7));
        assert_eq!(own_descriptor(b"/proc/thread-self/fd/3"), Some(3));
        assert_eq!(own_descriptor(b"/dev/fd/"), None);
        assert_eq!(own_descriptor(b"/dev/fd/1/x"), None);
        assert_eq!(own_descriptor(b"/proc/self/root/etc/passwd"), None);
        assert_eq!(own_descriptor(b"dev/stdout"), None);
    }

    #[test]
    fn only_opens_for_writing_and_truncations_are_made_here() {
        let Some(arch) = Arch::native() else { return };
        let openat = Sys::Openat.number(arch);
        let args = |flags: i32| [0, 0, flags as u64, 0, 0, 0];
        assert!(!makes(openat, &args(libc::O_RDONLY)));
        assert!(!makes(openat, &args(libc::O_RDONLY | libc::O_CLOEXEC)));
        assert!(makes(openat, &args(libc::O_WRONLY)));
        assert!(makes(openat, &args(libc::O_RDWR)));
        assert!(makes(openat, &args(libc::O_CREAT)));
        assert!(makes(openat, &args(libc::O_TRUNC)));
        assert!(!makes(
            openat,
            &args(libc::O_PATH | libc::O_WRONLY | libc::O_CREAT)
        ));
        assert!(makes(Sys::Truncate.number(arch), &[0; 6]));
        assert!(!makes(Sys::Unlinkat.number(arch), &[0; 6]));
    }
}
