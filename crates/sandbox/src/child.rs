//! The sandbox's own two processes, from `clone` to `execve`.
//!
//! The parent (see [`crate::launch`]) prepares a [`ChildPlan`] — every path as a C string,
//! every file identity, the Landlock ruleset, the seccomp program, `argv` and `envp` — and then
//! clones a child into new mount and PID namespaces (and a user namespace when it is not root).
//! That child is the namespace's *init* (PID 1):
//!
//! 1. it builds the mount tree: a private, recursively read-only copy of the host's, with only
//!    the writable roots attached writable, protected paths bound read-only inside them, credential
//!    stores covered by empty read-only views, a private `/dev/shm` and a `/proc` of its own;
//! 2. it forks the program's process, which installs the standard streams, the working directory,
//!    drops every capability, sets `no_new_privs`, enters Landlock, installs seccomp and `execve`s;
//! 3. it reaps every process of the namespace; when the program ends, whatever it left running is
//!    killed (the namespace ends with the line), and the program's wait status goes to the parent.
//!
//! Every path is opened once, with `RESOLVE_NO_SYMLINKS`, and checked against the identity the
//! parent recorded (device and inode); every mount acts on that descriptor, never on a name looked
//! up again. Everything here is async-signal-safe (see [`raw`]): no allocation, no locks. A failed
//! step writes a fixed-size [`Failure`] record to the setup pipe and exits.

use super::raw::{self, Errno};
use std::ffi::{CStr, CString};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The most detached mount trees one launch keeps at a time (writable roots and the empty source).
pub const MAX_SLOTS: usize = 32;

/// The most descriptors a caller may pass besides the standard streams.
pub const MAX_PASSED: usize = 2;

/// The most programs one line starts as a pipeline ([`ChildPlan::stages`]).
pub const MAX_STAGES: usize = 8;

/// A file's identity: what the parent saw when it decided to trust the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

/// A path the child opens and must find to be the same object the parent checked.
#[derive(Debug, Clone)]
pub struct Target {
    pub path: CString,
    pub id: FileId,
}

/// What an empty view replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Dir,
    File,
}

/// One step of building the mount tree, in order.
#[derive(Debug, Clone)]
pub enum Step {
    /// Stop mounts made from here on from propagating to the host.
    MakeRootSlave,
    /// A detached, recursive copy of the mount tree at `target` (still writable), kept in `slot`:
    /// a writable root, or a writable mount beneath one (a file mount too).
    CloneTree { target: Target, slot: usize },
    /// Every mount, recursively, read-only and nosuid.
    ReadOnlyEverything,
    /// Attach the copy in `slot` back on `target`: a writable root. Only its own mount stays
    /// writable; every mount beneath it is made read-only first.
    Attach { slot: usize, target: Target },
    /// A private `/dev` on `target` (the host's, which it covers): a read-only tmpfs holding only
    /// `nodes` (each the host's node the parent checked, bound in), the line's own terminal as
    /// `console`, the standard links (`fd`, `stdin`, `stdout`, `stderr`, `ptmx`), a devpts of its
    /// own on `pts` and a fresh tmpfs on `shm`. `shm_under`: the slot of the empty source,
    /// attached first on `shm`, so the tmpfs covers it: attached, the source is torn down with
    /// the namespace; closed detached, it would cost an RCU grace period (~0.13 ms here) on the
    /// way to `execve`.
    PrivateDev {
        target: Target,
        nodes: Vec<DevNode>,
        terminal: Option<Target>,
        shm_under: Option<usize>,
    },
    /// A `/proc` of this PID namespace on `target`.
    Proc { target: Target },
    /// A read-only tmpfs holding one empty file and one empty directory, kept in `slot`: the
    /// source of every empty view (attached beneath the private `/dev/shm`, see `PrivateDev`).
    /// With `hosts`, it also holds the line's `/etc/hosts` with those bytes (see `Hosts`).
    EmptySource { slot: usize, hosts: Option<Vec<u8>> },
    /// Cover `target` (the host's `/etc/hosts`) with the read-only hosts file of the source in
    /// `slot`: the names the line reaches without the proxy, as shellgate resolved them.
    Hosts { target: Target, slot: usize },
    /// Cover `target` with an empty read-only directory or file from the source in `slot`.
    Hide {
        target: Target,
        shape: Shape,
        slot: usize,
    },
    /// Bind `target` onto itself read-only (recursively): a protected path in a writable root.
    ReadOnlyBind { target: Target },
    /// Bind `target` onto itself: a mount point cannot be renamed or removed, so the directories
    /// above a protected path stay where they are.
    Pin { target: Target },
}

/// A device node of the host's that the private `/dev` holds: its name there, and the node the
/// parent checked.
#[derive(Debug, Clone)]
pub struct DevNode {
    pub name: CString,
    pub source: Target,
}

/// The most device nodes a private `/dev` holds (besides the terminal).
pub const MAX_DEV_NODES: usize = 8;

/// The user namespace's one-line maps (`"1000 1000 1"`), for a caller that is not root.
#[derive(Debug, Clone)]
pub struct UserMap {
    pub uid_map: CString,
    pub gid_map: CString,
}

/// The program and how it starts.
#[derive(Debug)]
pub struct Exec {
    pub path: CString,
    /// Owners of the strings `argv` and `envp` point into (never read: they only keep the
    /// pointers valid).
    pub _strings: Vec<CString>,
    /// Null-terminated.
    pub argv: Vec<*const libc::c_char>,
    /// Null-terminated.
    pub envp: Vec<*const libc::c_char>,
}

/// Everything the two processes need, prepared by the parent.
#[derive(Debug)]
pub struct ChildPlan {
    pub user_map: Option<UserMap>,
    pub steps: Vec<Step>,
    pub exec: Exec,
    /// The later programs of a pipeline (at most [`MAX_STAGES`] − 1): each reads, as its
    /// standard input, what the one before it writes to its standard output, through the pipe of
    /// the same index in [`ChildPlan::stage_pipes`]. Empty: the program alone.
    pub stages: Vec<Exec>,
    /// `(read end, write end)` of the pipe after each program but the last (close-on-exec).
    pub stage_pipes: Vec<(RawFd, RawFd)>,
    /// The pids of the later programs, written by the program's process as it starts them (it
    /// shares the init's memory until its exec) and read by the init after that exec.
    pub stage_pids: [AtomicI32; MAX_STAGES],
    /// The stack a later program's process starts on (one at a time: each is started with
    /// `CLONE_VFORK`), when there are any.
    pub stage_stack: Option<super::sys::Stack>,
    /// Set by a later program's process that failed before its exec (and reported it): the
    /// program's process then exits instead of starting its own program.
    pub stage_failed: AtomicBool,
    pub cwd: Option<Target>,
    /// Descriptors to install as 0, 1, 2 (`-1`: keep the inherited one).
    pub stdio: [RawFd; 3],
    /// Descriptors the caller passes explicitly, `(source, target)` (`-1`: none): installed as
    /// `target` (3–9) last, after every other descriptor was marked close-on-exec. Sources and the
    /// setup pipe are numbered 10 and above, so no installation can clobber them.
    pub passed: [(RawFd, RawFd); MAX_PASSED],
    /// Signal dispositions the program starts with: `(signal, ignored)`.
    pub signals: Vec<(libc::c_int, bool)>,
    pub ruleset: RawFd,
    pub landlock_flags: u32,
    /// Landlock access granted beneath the private `/dev/shm` (added inside, where it exists;
    /// `0`: no private `/dev`).
    pub shm_access: u64,
    /// Landlock access granted beneath the private `/dev/pts` (added inside too).
    pub pts_access: u64,
    pub seccomp: libc::sock_fprog,
    /// The variant of the filter whose reported calls go to a supervisor, and the unix socket the
    /// listener is sent over (`-1`: no supervision).
    pub seccomp_reported: libc::sock_fprog,
    pub supervisor: RawFd,
    /// The supervisor decides what the filter alone would let through (the named unix sockets a
    /// contained agent may reach): without it the line must not run.
    pub supervisor_required: bool,
    /// Root outside a user namespace: lock root's capability rules (securebits) before exec.
    pub lock_root: bool,
    /// Write end of the setup pipe (close-on-exec): a [`Failure`] record, or nothing.
    pub setup: RawFd,
    /// Write end of the status pipe: one [`Status`] record when the program has ended.
    pub status: RawFd,
    /// Read end of the lifeline: it hangs up when the parent is gone (the init closes its own
    /// copy of the write end with every other descriptor it does not need).
    pub lifeline: RawFd,
    /// The init is PID 1 of a namespace of its own: when the program ends, it kills what is
    /// left. Without one (a nested or namespace-less sandbox) it only waits for the program.
    pub pid_namespace: bool,
    /// The parent moves the init into another process group (the caller's, so that the line is
    /// the terminal's foreground job when its caller is): the init waits for the parent's one
    /// byte on the lifeline before it starts the program, which then inherits that group.
    pub await_group: bool,
    /// The stack the program's process starts on (it shares the init's memory until its exec).
    pub program_stack: super::sys::Stack,
    /// Resource limits the program's process sets on itself before its exec (`prlimit64` on
    /// itself, soft and hard): `(resource, value)`.
    pub rlimits: [(u32, u64); 3],
    /// The PID namespace's own `pid_max` (Linux 6.14 keeps one per namespace) and its
    /// `ns_last_pid`, written by the init as decimal text before it starts the program: once the
    /// last pid is past 300, pids are taken from `[300, pid_max)` only (as in every namespace),
    /// so the line's live processes and threads are at most `pid_max - 300`; and the program's
    /// pid (`$$`) differs from line to line.
    pub pid_max: Option<(CString, CString)>,
}

/// The size of [`ChildPlan::program_stack`]: the program's process runs a few small frames.
pub const PROGRAM_STACK: usize = 256 * 1024;

/// The size of the init's stack (see [`init_entry`]): it too runs a few small frames.
pub const INIT_STACK: usize = 256 * 1024;

// The plan is only read in the child, in the parent's memory (which it shares); the raw pointers
// point into `Exec::strings` of the same plan.
// SAFETY: the pointers are never dereferenced by Rust code, only passed to execve in the child.
unsafe impl Send for ChildPlan {}

/// Which step failed, for the parent's message. Steps of the mount list are their index.
pub mod phase {
    pub const USER_MAP: u16 = 0xff00;
    pub const DEATH_SIGNAL: u16 = 0xff01;
    pub const FORK: u16 = 0xff02;
    pub const STDIO: u16 = 0xff03;
    pub const CWD: u16 = 0xff04;
    pub const SHM_RULE: u16 = 0xff05;
    pub const PRIVILEGES: u16 = 0xff06;
    pub const NO_NEW_PRIVS: u16 = 0xff07;
    pub const LANDLOCK: u16 = 0xff08;
    pub const SECCOMP: u16 = 0xff09;
    pub const DESCRIPTORS: u16 = 0xff0a;
    pub const EXEC: u16 = 0xff0b;
    pub const LIMITS: u16 = 0xff0c;
}

/// How a step failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// The path could not be opened (a symlink appeared: `ELOOP`).
    Open = 1,
    /// The path is not the object the parent checked: something replaced it.
    Replaced = 2,
    /// The operation itself failed.
    Operate = 3,
}

/// The fixed-size record of a failed step: `[step u16][how u8][program u8][errno i32]`, little
/// endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    pub step: u16,
    pub how: How,
    /// Which program of the line the step was for: 0 the first (and every step before it), a
    /// later one of a pipeline its place in it.
    pub program: u8,
    pub errno: Errno,
}

impl Failure {
    pub const LEN: usize = 8;

    fn bytes(self) -> [u8; Self::LEN] {
        let s = self.step.to_le_bytes();
        let e = self.errno.to_le_bytes();
        [
            s[0],
            s[1],
            self.how as u8,
            self.program,
            e[0],
            e[1],
            e[2],
            e[3],
        ]
    }

    pub fn parse(bytes: &[u8]) -> Option<Failure> {
        let bytes: &[u8; Self::LEN] = bytes.get(..Self::LEN)?.try_into().ok()?;
        let how = match bytes[2] {
            1 => How::Open,
            2 => How::Replaced,
            3 => How::Operate,
            _ => return None,
        };
        Some(Failure {
            step: u16::from_le_bytes([bytes[0], bytes[1]]),
            how,
            program: bytes[3],
            errno: i32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]),
        })
    }
}

/// The init's final record: `[magic u32][left u8][programs u8][0; 2]` and then the wait status
/// of each program of the line, in order (`i32`, [`MAX_STAGES`] of them, unused ones 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// The raw wait status of each program (`wait_statuses[..programs]`); the last one is the
    /// line's, as a shell's pipeline status is its last command's.
    pub wait_statuses: [i32; MAX_STAGES],
    /// How many programs the line started (1 but for a pipeline).
    pub programs: u8,
    /// Processes were still running when the programs ended (they were killed).
    pub left_running: bool,
}

impl Status {
    pub const LEN: usize = 8 + 4 * MAX_STAGES;
    const MAGIC: u32 = 0x5347_5354; // "SGST"

    fn bytes(self) -> [u8; Self::LEN] {
        let mut out = [0u8; Self::LEN];
        out[..4].copy_from_slice(&Self::MAGIC.to_le_bytes());
        out[4] = u8::from(self.left_running);
        out[5] = self.programs;
        for (slot, status) in out[8..].chunks_exact_mut(4).zip(self.wait_statuses) {
            slot.copy_from_slice(&status.to_le_bytes());
        }
        out
    }

    pub fn parse(bytes: &[u8]) -> Option<Status> {
        let bytes: &[u8; Self::LEN] = bytes.get(..Self::LEN)?.try_into().ok()?;
        let (head, statuses) = bytes.split_at(8);
        if u32::from_le_bytes([head[0], head[1], head[2], head[3]]) != Self::MAGIC {
            return None;
        }
        let programs = head[5];
        if programs == 0 || usize::from(programs) > MAX_STAGES {
            return None;
        }
        let mut wait_statuses = [0; MAX_STAGES];
        for (status, chunk) in wait_statuses.iter_mut().zip(statuses.chunks_exact(4)) {
            *status = i32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        }
        Some(Status {
            wait_statuses,
            programs,
            left_running: head[4] != 0,
        })
    }
}

/// Exit statuses of the init when it fails before the program starts (the parent reads the
/// reason from the setup pipe; these only matter when that pipe is lost).
const EXIT_SETUP_FAILED: libc::c_int = 211;
const EXIT_EXEC_FAILED: libc::c_int = 212;

fn fail(plan: &ChildPlan, step: u16, how: How, errno: Errno) -> ! {
    fail_program(plan, 0, step, how, errno)
}

/// As [`fail`], for the step of the line's `program`th program (a later one of a pipeline).
fn fail_program(plan: &ChildPlan, program: u8, step: u16, how: How, errno: Errno) -> ! {
    let failure = Failure {
        step,
        how,
        program,
        errno,
    };
    raw::write_all(plan.setup, &failure.bytes());
    let status = if step == phase::EXEC {
        EXIT_EXEC_FAILED
    } else {
        EXIT_SETUP_FAILED
    };
    raw::exit(status)
}

/// Opens `target` without following any symlink and checks it is the object the parent saw.
fn open_checked(target: &Target, flags: libc::c_int) -> Result<RawFd, (How, Errno)> {
    let fd = raw::open_no_symlinks(&target.path, flags).map_err(|e| (How::Open, e))?;
    match raw::fstat(fd) {
        Ok((dev, ino, _)) if dev == target.id.dev && ino == target.id.ino => Ok(fd),
        Ok(_) => {
            raw::close(fd);
            Err((How::Replaced, libc::ESTALE))
        }
        Err(e) => {
            raw::close(fd);
            Err((How::Open, e))
        }
    }
}

fn op<T>(result: Result<T, Errno>) -> Result<T, (How, Errno)> {
    result.map_err(|e| (How::Operate, e))
}

const OPEN_TREE_CLONE: u32 = 1;
const AT_RECURSIVE: u32 = 0x8000;
const AT_EMPTY_PATH: u32 = 0x1000;
const MOUNT_ATTR_RDONLY: u64 = 0x01;
const MOUNT_ATTR_NOSUID: u64 = 0x02;
const MOUNT_ATTR_NODEV: u64 = 0x04;
const MOUNT_ATTR_NOEXEC: u64 = 0x08;
const MS_SLAVE: u64 = 1 << 19;
/// The name of the empty file in the empty source.
const EMPTY_FILE: &CStr = c"f";
/// The name of the empty directory in the empty source.
const EMPTY_DIR: &CStr = c"d";
/// The line's `/etc/hosts` in the empty views' source (see [`Step::Hosts`]).
const HOSTS_FILE: &CStr = c"hosts";

/// A detached copy of the mount at `fd` (recursive), made read-only.
fn read_only_copy(fd: RawFd, name: &CStr, recursive: bool) -> Result<RawFd, (How, Errno)> {
    let mut flags = OPEN_TREE_CLONE | libc::O_CLOEXEC as u32;
    if recursive {
        flags |= AT_RECURSIVE;
    }
    if name.is_empty() {
        flags |= AT_EMPTY_PATH;
    }
    let copy = op(raw::open_tree(fd, name, flags))?;
    let attr_flags = AT_EMPTY_PATH | if recursive { AT_RECURSIVE } else { 0 };
    if let Err(e) = raw::mount_setattr(copy, c"", attr_flags, MOUNT_ATTR_RDONLY, 0) {
        raw::close(copy);
        return Err((How::Operate, e));
    }
    Ok(copy)
}

/// The copy of a writable root, before it is attached: every mount beneath it (a bind mount of
/// some other directory, a second mount of the workspace) read-only, like everything outside the
/// writable roots; the root's own mount as it was (writable, unless it already was read-only).
fn only_the_root_writable(copy: RawFd) -> Result<(), (How, Errno)> {
    let was_read_only = op(raw::mount_flags(copy))? & libc::ST_RDONLY != 0;
    op(raw::mount_setattr(
        copy,
        c"",
        AT_EMPTY_PATH | AT_RECURSIVE,
        MOUNT_ATTR_RDONLY,
        0,
    ))?;
    if was_read_only {
        return Ok(());
    }
    op(raw::mount_clearattr(
        copy,
        c"",
        AT_EMPTY_PATH,
        MOUNT_ATTR_RDONLY,
    ))
}

/// Attaches `mount` (consumed) on `target_fd` (consumed).
fn attach(mount: RawFd, target_fd: RawFd) -> Result<(), (How, Errno)> {
    let result = op(raw::move_mount_fds(mount, target_fd));
    raw::close(mount);
    raw::close(target_fd);
    result
}

fn apply(step: &Step, slots: &mut [RawFd; MAX_SLOTS]) -> Result<(), (How, Errno)> {
    match step {
        Step::MakeRootSlave => op(raw::make_root_slave()),
        Step::CloneTree { target, slot } => {
            // A directory, or a file mount (a contained agent's own): what the parent opened,
            // which the identity check makes sure of.
            let fd = open_checked(target, 0)?;
            let flags = OPEN_TREE_CLONE | AT_RECURSIVE | AT_EMPTY_PATH | libc::O_CLOEXEC as u32;
            let copy = op(raw::open_tree(fd, c"", flags));
            raw::close(fd);
            slots[*slot] = copy?;
            Ok(())
        }
        Step::ReadOnlyEverything => op(raw::mount_setattr(
            libc::AT_FDCWD,
            c"/",
            AT_RECURSIVE,
            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID,
            MS_SLAVE,
        )),
        Step::Attach { slot, target } => {
            let fd = open_checked(target, 0)?;
            let mount = std::mem::replace(&mut slots[*slot], -1);
            if let Err(e) = only_the_root_writable(mount) {
                raw::close(mount);
                raw::close(fd);
                return Err(e);
            }
            attach(mount, fd)
        }
        Step::PrivateDev {
            target,
            nodes,
            terminal,
            shm_under,
        } => {
            let mut copies = [-1; MAX_DEV_NODES + 1];
            let result = private_dev(
                target,
                nodes,
                terminal.as_ref(),
                *shm_under,
                slots,
                &mut copies,
            );
            for fd in copies.into_iter().filter(|fd| *fd >= 0) {
                raw::close(fd);
            }
            result
        }
        Step::Proc { target } => {
            let fd = open_checked(target, libc::O_DIRECTORY)?;
            let attrs = (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC) as u32;
            match raw::new_fs(c"proc", &[], attrs) {
                Ok(fs) => attach(fs, fd),
                Err(e) => {
                    raw::close(fd);
                    Err((How::Operate, e))
                }
            }
        }
        Step::EmptySource { slot, hosts } => {
            let attrs = (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC) as u32;
            let fs = op(raw::new_fs(c"tmpfs", &[(c"mode", c"0555")], attrs))?;
            let made = op(raw::create_empty_file(fs, EMPTY_FILE, 0o400))
                .and_then(|()| op(raw::mkdirat(fs, EMPTY_DIR, 0o555)))
                .and_then(|()| match hosts {
                    Some(bytes) => op(raw::create_file(fs, HOSTS_FILE, 0o444, bytes)),
                    None => Ok(()),
                })
                .and_then(|()| {
                    op(raw::mount_setattr(
                        fs,
                        c"",
                        AT_EMPTY_PATH,
                        MOUNT_ATTR_RDONLY,
                        0,
                    ))
                });
            match made {
                Ok(()) => {
                    slots[*slot] = fs;
                    Ok(())
                }
                Err(e) => {
                    raw::close(fs);
                    Err(e)
                }
            }
        }
        Step::Hide {
            target,
            shape,
            slot,
        } => {
            let flags = match shape {
                Shape::Dir => libc::O_DIRECTORY,
                Shape::File => 0,
            };
            let fd = open_checked(target, flags)?;
            let name = match shape {
                Shape::Dir => EMPTY_DIR,
                Shape::File => EMPTY_FILE,
            };
            match read_only_copy(slots[*slot], name, false) {
                Ok(view) => attach(view, fd),
                Err(e) => {
                    raw::close(fd);
                    Err(e)
                }
            }
        }
        Step::Hosts { target, slot } => {
            let fd = open_checked(target, 0)?;
            match read_only_copy(slots[*slot], HOSTS_FILE, false) {
                Ok(view) => attach(view, fd),
                Err(e) => {
                    raw::close(fd);
                    Err(e)
                }
            }
        }
        Step::ReadOnlyBind { target } => {
            let fd = open_checked(target, 0)?;
            match read_only_copy(fd, c"", true) {
                Ok(copy) => attach(copy, fd),
                Err(e) => {
                    raw::close(fd);
                    Err(e)
                }
            }
        }
        Step::Pin { target } => {
            let fd = open_checked(target, libc::O_DIRECTORY)?;
            let flags = OPEN_TREE_CLONE | AT_RECURSIVE | AT_EMPTY_PATH | libc::O_CLOEXEC as u32;
            match raw::open_tree(fd, c"", flags) {
                Ok(copy) => attach(copy, fd),
                Err(e) => {
                    raw::close(fd);
                    Err((How::Operate, e))
                }
            }
        }
    }
}

/// Builds the private `/dev` (see [`Step::PrivateDev`]). `copies` holds the copies of the host's
/// nodes (the terminal's last) until they are attached; the caller closes what is left.
fn private_dev(
    target: &Target,
    nodes: &[DevNode],
    terminal: Option<&Target>,
    shm_under: Option<usize>,
    slots: &[RawFd; MAX_SLOTS],
    copies: &mut [RawFd; MAX_DEV_NODES + 1],
) -> Result<(), (How, Errno)> {
    // Copies of the nodes first, while the host's `/dev` is still in sight.
    for (node, copy) in nodes.iter().zip(copies.iter_mut()) {
        *copy = copy_of_node(&node.source)?;
    }
    if let Some(terminal) = terminal {
        copies[MAX_DEV_NODES] = copy_of_node(terminal)?;
    }
    let dev = open_checked(target, libc::O_DIRECTORY)?;
    let attrs = (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC) as u32;
    let fs = match raw::new_fs(c"tmpfs", &[(c"mode", c"0755")], attrs) {
        Ok(fs) => fs,
        Err(e) => {
            raw::close(dev);
            return Err((How::Operate, e));
        }
    };
    let attached = op(raw::move_mount_fds(fs, dev));
    raw::close(dev);
    let built = attached.and_then(|()| fill_dev(fs, nodes, terminal, shm_under, slots, copies));
    raw::close(fs);
    built
}

/// A detached copy of the mount of one node (a file), checked to be the node the parent saw.
fn copy_of_node(node: &Target) -> Result<RawFd, (How, Errno)> {
    let fd = open_checked(node, 0)?;
    let flags = OPEN_TREE_CLONE | AT_EMPTY_PATH | libc::O_CLOEXEC as u32;
    let copy = op(raw::open_tree(fd, c"", flags));
    raw::close(fd);
    copy
}

/// The private `/dev`'s contents, on the attached tmpfs `dev`, which ends read-only.
fn fill_dev(
    dev: RawFd,
    nodes: &[DevNode],
    terminal: Option<&Target>,
    shm_under: Option<usize>,
    slots: &[RawFd; MAX_SLOTS],
    copies: &mut [RawFd; MAX_DEV_NODES + 1],
) -> Result<(), (How, Errno)> {
    let links: [(&CStr, &CStr); 5] = [
        (c"fd", c"/proc/self/fd"),
        (c"stdin", c"/proc/self/fd/0"),
        (c"stdout", c"/proc/self/fd/1"),
        (c"stderr", c"/proc/self/fd/2"),
        (c"ptmx", c"pts/ptmx"),
    ];
    for (name, to) in links {
        op(raw::symlinkat(to, dev, name))?;
    }
    for (node, copy) in nodes.iter().zip(copies.iter_mut()) {
        bind_node(dev, &node.name, copy)?;
    }
    if terminal.is_some() {
        bind_node(dev, c"console", &mut copies[MAX_DEV_NODES])?;
    }
    op(raw::mkdirat(dev, c"pts", 0o755))?;
    let attrs = (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC) as u32;
    // Every mount of devpts is an instance of its own (Linux 4.7): only the line's terminals.
    let pts = op(raw::new_fs(
        c"devpts",
        &[(c"ptmxmode", c"0666"), (c"mode", c"0620")],
        attrs,
    ))?;
    match raw::open_component(dev, c"pts", libc::O_DIRECTORY) {
        Ok(at) => attach(pts, at)?,
        Err(e) => {
            raw::close(pts);
            return Err((How::Operate, e));
        }
    }
    op(raw::mkdirat(dev, c"shm", 0o755))?;
    let shm = op(raw::open_component(dev, c"shm", libc::O_DIRECTORY))?;
    if let Some(slot) = shm_under {
        // The slot keeps its descriptor: the empty views are copied from it afterwards.
        if let Err(e) = raw::move_mount_fds(slots[slot], shm) {
            raw::close(shm);
            return Err((How::Operate, e));
        }
    }
    let attrs = (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) as u32;
    match raw::new_fs(c"tmpfs", &[(c"mode", c"1777")], attrs) {
        Ok(fs) => attach(fs, shm)?,
        Err(e) => {
            raw::close(shm);
            return Err((How::Operate, e));
        }
    }
    op(raw::mount_setattr(
        dev,
        c"",
        AT_EMPTY_PATH,
        MOUNT_ATTR_RDONLY,
        0,
    ))
}

/// Binds the node copy in `copy` (consumed) onto a new empty file `name` in `dev`.
fn bind_node(dev: RawFd, name: &CStr, copy: &mut RawFd) -> Result<(), (How, Errno)> {
    op(raw::create_empty_file(dev, name, 0o600))?;
    let at = op(raw::open_component(dev, name, 0))?;
    attach(std::mem::replace(copy, -1), at)
}

/// The init's entry point for [`raw::spawn_on_stack`]: `arg` is the parent's `&ChildPlan`.
pub extern "C" fn init_entry(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `ChildPlan` the parent passed to the clone, which it keeps alive (and
    // unchanged) until this process has been reaped.
    let plan = unsafe { &*(arg as *const ChildPlan) };
    init(plan)
}

/// The namespace's init. Never returns. It runs with every signal blocked (the parent blocks them
/// around the clone, and the init never unblocks them) and no handler of the parent's installed:
/// it shares the parent's memory, so none of them may ever run here. It needs no signal: it waits with `waitpid`,
/// and SIGKILL, which cannot be blocked, still ends it.
fn init(plan: &ChildPlan) -> ! {
    // Blocking cannot hold every signal (glibc keeps two of its own unblockable), and the caller's
    // handlers are code in this shared memory: none of them may run here, or in the program's
    // process, which copies this table.
    raw::reset_caught_signals();
    // The parent's other descriptors (other lines' pipes and sockets, in the `wrap` broker) must
    // not stay open for as long as this line runs: a reader of one would wait for its EOF.
    let mut keep = [-1; 10 + 2 * (MAX_STAGES - 1)];
    let fixed = [
        plan.setup,
        plan.status,
        plan.lifeline,
        plan.ruleset,
        plan.stdio[0],
        plan.stdio[1],
        plan.stdio[2],
        plan.passed[0].0,
        plan.passed[1].0,
        plan.supervisor,
    ];
    let pipes = plan.stage_pipes.iter().flat_map(|(r, w)| [*r, *w]);
    for (slot, fd) in keep.iter_mut().zip(fixed.into_iter().chain(pipes)) {
        *slot = fd;
    }
    raw::close_all_except(3, keep);
    // The whole namespace dies with the thread that cloned it (`wrap`'s broker threads live as
    // long as their line). A parent that died before this line leaves the lifeline hung up.
    if let Err(e) = raw::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) {
        fail(plan, phase::DEATH_SIGNAL, How::Operate, e);
    }
    if raw::poll_now(plan.lifeline, libc::POLLIN) & (libc::POLLHUP | libc::POLLERR) != 0 {
        raw::exit(EXIT_SETUP_FAILED);
    }
    if let Some(map) = &plan.user_map {
        write_user_map(plan, map);
    }
    let mut slots = [-1; MAX_SLOTS];
    for (index, step) in plan.steps.iter().enumerate() {
        if let Err((how, errno)) = apply(step, &mut slots) {
            fail(plan, index as u16, how, errno);
        }
    }
    for fd in slots.into_iter().filter(|fd| *fd >= 0) {
        raw::close(fd);
    }
    if let Some((pid_max, last_pid)) = &plan.pid_max {
        let writes = [
            (c"/proc/sys/kernel/pid_max", pid_max),
            (c"/proc/sys/kernel/ns_last_pid", last_pid),
        ];
        for (path, text) in writes {
            if let Err(e) = raw::write_file(path, text.to_bytes()) {
                fail(plan, phase::LIMITS, How::Operate, e);
            }
        }
    }
    if plan.await_group && !raw::read_one(plan.lifeline) {
        // The parent is gone, or could not move this process: nothing may start.
        raw::exit(EXIT_SETUP_FAILED);
    }
    // The program's process shares this memory (as this one shares the parent's) on a stack of
    // its own; this one waits until its exec (CLONE_VFORK).
    let arg = plan as *const ChildPlan as *mut libc::c_void;
    let flags = (libc::CLONE_VM | libc::CLONE_VFORK) as libc::c_ulong;
    // SAFETY: the stack is the plan's, used by nothing else; `program_entry` runs only this
    // module's async-signal-safe code on the plan, which the parent keeps alive until this
    // process has been reaped.
    let program =
        match unsafe { raw::spawn_on_stack(flags, program_entry, plan.program_stack.top(), arg) } {
            Ok(pid) => pid,
            Err(e) => fail(plan, phase::FORK, How::Operate, e),
        };
    // The program holds its own copy of the setup pipe until its exec closes it.
    raw::close(plan.setup);
    raw::close(plan.ruleset);
    let passed = plan.passed.map(|(source, _)| source);
    let supervisor = [plan.supervisor];
    let pipes = plan.stage_pipes.iter().flat_map(|(r, w)| [*r, *w]);
    for fd in [0, 1, 2]
        .into_iter()
        .chain(plan.stdio)
        .chain(passed)
        .chain(supervisor)
        .chain(pipes)
    {
        if fd >= 0 {
            raw::close(fd);
        }
    }
    // The program's process started the later ones before its own exec, which ended the wait
    // above: their pids are in the plan now (0: one failed to start, and reported it).
    let mut programs = [0; MAX_STAGES];
    programs[0] = program;
    for (slot, pid) in programs[1..].iter_mut().zip(&plan.stage_pids) {
        *slot = pid.load(Ordering::Acquire);
    }
    reap(plan, &programs[..=plan.stages.len()])
}

fn write_user_map(plan: &ChildPlan, map: &UserMap) {
    // An unprivileged gid_map needs setgroups denied first (user_namespaces(7)).
    let maps = [
        (c"/proc/self/setgroups", c"deny"),
        (c"/proc/self/uid_map", map.uid_map.as_c_str()),
        (c"/proc/self/gid_map", map.gid_map.as_c_str()),
    ];
    for (path, text) in maps {
        if let Err(e) = raw::write_file(path, text.to_bytes()) {
            fail(plan, phase::USER_MAP, How::Operate, e);
        }
    }
}

/// How long, after the program ended, the line's other processes may take to end by themselves
/// before they are killed: git's detached auto-maintenance after a commit takes milliseconds, and
/// killed it leaves its locks and a notice on every commit.
const GRACE_MS: u64 = 300;
/// How often the init looks whether they have.
const GRACE_STEP_MS: u32 = 10;

/// Reaps every process of the namespace. When the programs have ended (all of a pipeline's, as a
/// shell waits for them all), the rest get [`GRACE_MS`] to end by themselves — a deadline on the
/// clock, which no stream of exiting children can stretch — and are then killed, again after
/// every process reaped (one forked while `kill(-1)` ran would escape a single one): a line's
/// processes end with the line, which ends only when they have. `programs` are the pids of the
/// line's programs, in order (0 for one that never started).
fn reap(plan: &ChildPlan, programs: &[libc::pid_t]) -> ! {
    let mut wait_statuses = [EXIT_SETUP_FAILED << 8; MAX_STAGES];
    let mut running = programs.iter().filter(|pid| **pid > 0).count();
    let mut left_running = false;
    let mut deadline = None;
    // Without a namespace of its own the init's children are the programs (and what a line
    // started as their sibling with `CLONE_PARENT`): it waits until the programs have ended.
    // Until ECHILD: nobody is left in the namespace.
    loop {
        let past = deadline.is_some_and(|d| raw::monotonic_ms() >= d);
        if past && raw::kill(-1, libc::SIGKILL).is_ok() {
            // In its own PID namespace, kill(-1) reaches exactly the line's processes.
            left_running = true;
        }
        let flags = if deadline.is_some() && !past {
            libc::__WALL | libc::WNOHANG
        } else {
            libc::__WALL
        };
        match raw::waitpid(-1, flags) {
            Err(_) => break,
            // Others still run, within the grace.
            Ok((0, _)) => raw::sleep_ms(GRACE_STEP_MS),
            Ok((pid, status)) => {
                let Some(index) = programs.iter().position(|p| *p == pid) else {
                    continue;
                };
                wait_statuses[index] = status;
                running -= 1;
                if running > 0 {
                    continue;
                }
                if !plan.pid_namespace {
                    break;
                }
                deadline = Some(raw::monotonic_ms().saturating_add(GRACE_MS));
            }
        }
    }
    report(plan, wait_statuses, programs.len(), left_running)
}

/// Writes the final record and exits.
fn report(
    plan: &ChildPlan,
    wait_statuses: [i32; MAX_STAGES],
    programs: usize,
    left_running: bool,
) -> ! {
    let status = Status {
        wait_statuses,
        programs: programs as u8,
        left_running,
    };
    raw::write_all(plan.status, &status.bytes());
    raw::exit(0)
}

extern "C" fn program_entry(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the init's `&ChildPlan`, alive (the init is suspended) until the exec.
    let plan = unsafe { &*(arg as *const ChildPlan) };
    start_program(plan)
}

/// The program's process: standard streams, working directory, privileges, Landlock, seccomp,
/// exec. Never returns.
fn start_program(plan: &ChildPlan) -> ! {
    raw::close(plan.status);
    raw::close(plan.lifeline);
    for (target, fd) in plan.stdio.iter().enumerate() {
        if *fd >= 0
            && let Err(e) = raw::dup2(*fd, target as RawFd)
        {
            fail(plan, phase::STDIO, How::Operate, e);
        }
    }
    // The init reset every handler before it cloned this process (which copied its table), and
    // every signal is still blocked (the clone inherited its mask).
    for (signal, ignored) in &plan.signals {
        raw::set_disposition(*signal, *ignored);
    }
    raw::unblock_all_signals();
    if let Some(cwd) = &plan.cwd {
        match open_checked(cwd, libc::O_DIRECTORY) {
            Ok(fd) => {
                let changed = raw::fchdir(fd);
                raw::close(fd);
                if let Err(e) = changed {
                    fail(plan, phase::CWD, How::Operate, e);
                }
            }
            Err((how, e)) => fail(plan, phase::CWD, how, e),
        }
    }
    if plan.shm_access != 0 {
        add_private_dev_rules(plan);
    }
    for (resource, value) in plan.rlimits {
        if let Err(e) = raw::set_own_rlimit(resource, value) {
            fail(plan, phase::LIMITS, How::Operate, e);
        }
    }
    drop_privileges(plan);
    if let Err(e) = raw::landlock_restrict_self(plan.ruleset, plan.landlock_flags) {
        fail(plan, phase::LANDLOCK, How::Operate, e);
    }
    install_seccomp(plan);
    // Only 0, 1 and 2 reach the program: every other descriptor (the ruleset, the pipes, whatever
    // the caller held open) is closed by the exec.
    if let Err(e) = raw::cloexec_from(3) {
        fail(plan, phase::DESCRIPTORS, How::Operate, e);
    }
    // A pipeline's later programs start here: confined, with every descriptor but 0, 1 and 2
    // close-on-exec, and before the passed ones are installed (they are the first program's).
    if let Some(&(_, first_pipe)) = plan.stage_pipes.first() {
        start_later_programs(plan);
        if plan.stage_failed.load(Ordering::Acquire) {
            // The launch failed (the later program said why): nothing of the line starts.
            raw::exit(EXIT_SETUP_FAILED);
        }
        if let Err(e) = raw::dup2(first_pipe, 1) {
            fail(plan, phase::STDIO, How::Operate, e);
        }
    }
    for (source, target) in plan.passed {
        if source >= 0
            && let Err(e) = raw::dup2(source, target)
        {
            fail(plan, phase::DESCRIPTORS, How::Operate, e);
        }
    }
    let errno = raw::execve(&plan.exec.path, &plan.exec.argv, &plan.exec.envp);
    fail(plan, phase::EXEC, How::Operate, errno)
}

/// A later program of a pipeline: which one, and the plan.
struct StageArg<'a> {
    plan: &'a ChildPlan,
    index: usize,
}

/// Starts the later programs of a pipeline from the program's process, now that it is confined:
/// each one is a copy of it (its Landlock domain, seccomp filter, dropped privileges, limits,
/// directory, signal dispositions and descriptors) that takes its pipes as its standard streams
/// and execs its own program. Each is the init's child (`CLONE_PARENT`), so that the init reaps
/// it and reports its status, as the program's own; and this process waits for each one's exec
/// (`CLONE_VFORK`: they run on one stack, in turn). Its pid goes into the plan for the init.
fn start_later_programs(plan: &ChildPlan) {
    let Some(stack) = &plan.stage_stack else {
        fail(plan, phase::FORK, How::Operate, libc::ENOMEM);
    };
    let flags = (libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PARENT) as libc::c_ulong;
    for index in 0..plan.stages.len() {
        let stage = StageArg { plan, index };
        let arg = &stage as *const StageArg as *mut libc::c_void;
        // SAFETY: the stack is the plan's, used by one later program at a time (this process is
        // suspended until that one's exec or exit); `stage_entry` runs only this module's
        // async-signal-safe code on `stage` and the plan, both alive while this process waits.
        match unsafe { raw::spawn_on_stack(flags, stage_entry, stack.top(), arg) } {
            Ok(pid) => plan.stage_pids[index].store(pid, Ordering::Release),
            Err(e) => fail(plan, phase::FORK, How::Operate, e),
        }
    }
}

extern "C" fn stage_entry(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the program's process's `StageArg`, alive (that process is suspended)
    // until this one's exec.
    let stage = unsafe { &*(arg as *const StageArg) };
    start_stage(stage.plan, stage.index)
}

/// A later program's process: the pipe before it as its standard input, the one after it (but
/// for the last) as its standard output, exec. Everything else it has from the program's
/// process, every other descriptor close-on-exec.
fn start_stage(plan: &ChildPlan, index: usize) -> ! {
    // Its place in the line: the first program is 0 (at most MAX_STAGES, which fits).
    let program = (index + 1) as u8;
    let input = plan.stage_pipes.get(index).map(|(read, _)| *read);
    let output = plan.stage_pipes.get(index + 1).map(|(_, write)| *write);
    for (fd, target) in [(input, 0), (output, 1)] {
        if let Some(fd) = fd
            && let Err(e) = raw::dup2(fd, target)
        {
            plan.stage_failed.store(true, Ordering::Release);
            fail_program(plan, program, phase::STDIO, How::Operate, e);
        }
    }
    let exec = &plan.stages[index];
    let errno = raw::execve(&exec.path, &exec.argv, &exec.envp);
    plan.stage_failed.store(true, Ordering::Release);
    fail_program(plan, program, phase::EXEC, How::Operate, errno)
}

/// The filter, with a listener sent to the supervisor when there is one. Inside another sandbox
/// whose filter already has a listener the kernel allows no second one (`EBUSY`): the filter
/// without reports is installed instead, and the refusals are the same, unreported — unless the
/// supervisor is required (the filter without it would let every unix `connect` through): then
/// the line fails at this step, saying so.
fn install_seccomp(plan: &ChildPlan) {
    if plan.supervisor >= 0 {
        match raw::seccomp_filter_with_listener(&plan.seccomp_reported) {
            Ok(listener) => {
                let sent = raw::send_fd(plan.supervisor, listener);
                raw::close(listener);
                raw::close(plan.supervisor);
                if let Err(e) = sent {
                    fail(plan, phase::SECCOMP, How::Operate, e);
                }
                return;
            }
            Err(libc::EBUSY) if !plan.supervisor_required => raw::close(plan.supervisor),
            Err(e) => fail(plan, phase::SECCOMP, How::Operate, e),
        }
    }
    if let Err(e) = raw::seccomp_filter(&plan.seccomp) {
        fail(plan, phase::SECCOMP, How::Operate, e);
    }
    // Here with a supervisor only when the kernel refused its listener (EBUSY: nested in
    // shellgate's own sandbox, see `supervisor_required`): the outer supervisor makes this line's
    // opens for writing, and holds them to this ruleset too once it is announced (see
    // `opener::announcement`). Nobody else answers it (ENOENT): the result is not looked at.
    if plan.supervisor >= 0 {
        raw::announce_ruleset(plan.ruleset);
    }
}

/// The Landlock rules for what exists only inside: the private `/dev/shm` (every right) and the
/// line's own devpts (its terminals' rights).
fn add_private_dev_rules(plan: &ChildPlan) {
    for (path, access) in [
        (c"/dev/shm", plan.shm_access),
        (c"/dev/pts", plan.pts_access),
    ] {
        let fd = match raw::open_no_symlinks(path, libc::O_DIRECTORY) {
            Ok(fd) => fd,
            Err(e) => fail(plan, phase::SHM_RULE, How::Open, e),
        };
        let added = raw::landlock_add_path_rule(plan.ruleset, fd, access);
        raw::close(fd);
        if let Err(e) = added {
            fail(plan, phase::SHM_RULE, How::Operate, e);
        }
    }
}

/// Root (outside a user namespace) would regain capabilities at exec: lock that rule off first.
const LOCKED_SECUREBITS: libc::c_ulong = 0b1110_1111;

fn drop_privileges(plan: &ChildPlan) {
    if plan.lock_root
        && let Err(e) = raw::prctl(libc::PR_SET_SECUREBITS, LOCKED_SECUREBITS)
    {
        fail(plan, phase::PRIVILEGES, How::Operate, e);
    }
    // Old kernels without ambient capabilities answer EINVAL: nothing to clear then.
    match raw::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
    ) {
        Err(e) if e != libc::EINVAL => fail(plan, phase::PRIVILEGES, How::Operate, e),
        _ => {}
    }
    if let Err(e) = raw::drop_capabilities() {
        fail(plan, phase::PRIVILEGES, How::Operate, e);
    }
    if let Err(e) = raw::prctl(libc::PR_SET_NO_NEW_PRIVS, 1) {
        fail(plan, phase::NO_NEW_PRIVS, How::Operate, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let f = Failure {
            step: phase::CWD,
            how: How::Replaced,
            program: 2,
            errno: libc::ESTALE,
        };
        assert_eq!(Failure::parse(&f.bytes()), Some(f));
        let s = Status {
            wait_statuses: [0x0100, 0, 0x0d, 0, 0, 0, 0, 0],
            programs: 3,
            left_running: true,
        };
        assert_eq!(Status::parse(&s.bytes()), Some(s));
        assert_eq!(Status::parse(&[0; Status::LEN]), None);
        let mut none = s.bytes();
        none[5] = 0;
        assert_eq!(Status::parse(&none), None, "a record of no program");
        none[5] = MAX_STAGES as u8 + 1;
        assert_eq!(
            Status::parse(&none),
            None,
            "more programs than a record holds"
        );
        assert_eq!(Failure::parse(&[1, 0, 9, 0, 0, 0, 0, 0]), None);
    }
}
