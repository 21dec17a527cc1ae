//! The seccomp layer: syscalls no sandboxed command needs, refused with `EPERM`.
//!
//! The rules are data ([`rules`]). [`assemble`] turns them into one compact classic-BPF filter per
//! architecture, loaded with seccompiler's `apply_filter`. The filter is written out here rather
//! than by seccompiler's compiler because its length is paid on every launch: the kernel
//! precomputes an allow-cache by running the filter for every syscall number, and seccompiler's
//! ~400 instructions for this table cost ~0.2 ms; ours are ~70. The unit tests compile the same
//! table with seccompiler and check both filters give the same verdict on every probe.
//!
//! Three answer `ENOSYS` instead of `EPERM`: `clone3` (its flags live in memory seccomp cannot
//! read; libc falls back to `clone`, whose flags are checked), `openat2` (its mode, set-id bits
//! among them, lives in memory too; programs fall back to `openat`, whose mode is checked, and
//! shellgate's own launcher nested in a sandbox walks its paths with `openat`), and the x32
//! syscall range on x86_64 (see [`ENOSYS_CALLS`]). A call through a *foreign* syscall ABI (e.g.
//! `int 0x80` on x86_64) is killed: no rule of ours would apply to it. Nothing else is ever
//! killed.
//!
//! Syscall numbers are written out per architecture (checked against `libc` for the native one
//! in the tests) so the aarch64 filter is built and tested on x86_64 too.

use crate::error::{Code, Error, Result};
use seccompiler::{BpfProgram, sock_filter};

/// Architectures we ship a filter for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    Aarch64,
}

impl Arch {
    /// The architecture this binary runs on.
    pub fn native() -> Option<Arch> {
        if cfg!(target_arch = "x86_64") {
            Some(Arch::X86_64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Arch::Aarch64)
        } else {
            None
        }
    }

    #[cfg(test)]
    fn target(self) -> seccompiler::TargetArch {
        match self {
            Arch::X86_64 => seccompiler::TargetArch::x86_64,
            Arch::Aarch64 => seccompiler::TargetArch::aarch64,
        }
    }

    fn audit_arch(self) -> u32 {
        // AUDIT_ARCH_* = EM_* | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE (linux/audit.h).
        match self {
            Arch::X86_64 => 62 | 0x8000_0000 | 0x4000_0000,
            Arch::Aarch64 => 183 | 0x8000_0000 | 0x4000_0000,
        }
    }
}

/// One table of the syscalls the filters mention: the variant, the kernel's name for it, and its
/// numbers on x86_64 and aarch64 ([`ABSENT`] where an architecture lacks the call), from the
/// kernel's syscall tables. The tests check every row against the kernel's headers for both
/// architectures (`every_number_matches_the_kernel_headers`).
macro_rules! syscalls {
    ($($variant:ident = $name:literal, $x86_64:expr, $aarch64:expr;)*) => {
        /// The syscalls the filters mention.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub enum Sys {
            $($variant,)*
        }

        impl Sys {
            /// Every syscall of the table.
            pub const ALL: &'static [Sys] = &[$(Sys::$variant,)*];

            /// `(x86_64, aarch64)` numbers.
            fn numbers(self) -> (i64, i64) {
                match self {
                    $(Sys::$variant => ($x86_64, $aarch64),)*
                }
            }

            /// The kernel's name (`__NR_<name>`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Sys::$variant => $name,)*
                }
            }
        }
    };
}

/// The number of a syscall an architecture does not have (aarch64 has no `chmod`).
const ABSENT: i64 = -1;

syscalls! {
    Socket = "socket", 41, 198;
    Socketpair = "socketpair", 53, 199;
    Connect = "connect", 42, 203;
    Accept = "accept", 43, 202;
    Accept4 = "accept4", 288, 242;
    Bind = "bind", 49, 200;
    Listen = "listen", 50, 201;
    Getpeername = "getpeername", 52, 205;
    Getsockname = "getsockname", 51, 204;
    Shutdown = "shutdown", 48, 210;
    Sendto = "sendto", 44, 206;
    Sendmsg = "sendmsg", 46, 211;
    Sendmmsg = "sendmmsg", 307, 269;
    Recvmmsg = "recvmmsg", 299, 243;
    Getsockopt = "getsockopt", 55, 209;
    Setsockopt = "setsockopt", 54, 208;
    Ptrace = "ptrace", 101, 117;
    ProcessVmReadv = "process_vm_readv", 310, 270;
    ProcessVmWritev = "process_vm_writev", 311, 271;
    IoUringSetup = "io_uring_setup", 425, 425;
    IoUringEnter = "io_uring_enter", 426, 426;
    IoUringRegister = "io_uring_register", 427, 427;
    Bpf = "bpf", 321, 280;
    PerfEventOpen = "perf_event_open", 298, 241;
    Keyctl = "keyctl", 250, 219;
    AddKey = "add_key", 248, 217;
    RequestKey = "request_key", 249, 218;
    Mount = "mount", 165, 40;
    Umount2 = "umount2", 166, 39;
    PivotRoot = "pivot_root", 155, 41;
    MoveMount = "move_mount", 429, 429;
    Fsmount = "fsmount", 432, 432;
    Fsopen = "fsopen", 430, 430;
    Fsconfig = "fsconfig", 431, 431;
    Fspick = "fspick", 433, 433;
    OpenTree = "open_tree", 428, 428;
    OpenTreeAttr = "open_tree_attr", 467, 467;
    MountSetattr = "mount_setattr", 442, 442;
    Unshare = "unshare", 272, 97;
    Setns = "setns", 308, 268;
    Clone = "clone", 56, 220;
    Clone3 = "clone3", 435, 435;
    KexecLoad = "kexec_load", 246, 104;
    KexecFileLoad = "kexec_file_load", 320, 294;
    InitModule = "init_module", 175, 105;
    FinitModule = "finit_module", 313, 273;
    DeleteModule = "delete_module", 176, 106;
    Reboot = "reboot", 169, 142;
    Swapon = "swapon", 167, 224;
    Swapoff = "swapoff", 168, 225;
    Ioctl = "ioctl", 16, 29;
    Userfaultfd = "userfaultfd", 323, 282;
    Prlimit64 = "prlimit64", 302, 261;
    Setpriority = "setpriority", 141, 140;
    SchedSetaffinity = "sched_setaffinity", 203, 122;
    SchedSetscheduler = "sched_setscheduler", 144, 119;
    SchedSetparam = "sched_setparam", 142, 118;
    SchedSetattr = "sched_setattr", 314, 274;
    IoprioSet = "ioprio_set", 251, 30;
    MigratePages = "migrate_pages", 256, 238;
    MovePages = "move_pages", 279, 239;
    ProcessMadvise = "process_madvise", 440, 440;
    ProcessMrelease = "process_mrelease", 448, 448;
    PidfdGetfd = "pidfd_getfd", 438, 438;
    Syslog = "syslog", 103, 116;
    Chmod = "chmod", 90, ABSENT;
    Fchmod = "fchmod", 91, 52;
    Fchmodat = "fchmodat", 268, 53;
    Fchmodat2 = "fchmodat2", 452, 452;
    Open = "open", 2, ABSENT;
    Openat = "openat", 257, 56;
    Openat2 = "openat2", 437, 437;
    Creat = "creat", 85, ABSENT;
    Mkdir = "mkdir", 83, ABSENT;
    Mkdirat = "mkdirat", 258, 34;
    Unlink = "unlink", 87, ABSENT;
    Unlinkat = "unlinkat", 263, 35;
    Rmdir = "rmdir", 84, ABSENT;
    Rename = "rename", 82, ABSENT;
    Renameat = "renameat", 264, 38;
    Renameat2 = "renameat2", 316, 276;
    Link = "link", 86, ABSENT;
    Linkat = "linkat", 265, 37;
    Symlink = "symlink", 88, ABSENT;
    Symlinkat = "symlinkat", 266, 36;
    Mknod = "mknod", 133, ABSENT;
    Mknodat = "mknodat", 259, 33;
    Truncate = "truncate", 76, 45;
    Chown = "chown", 92, ABSENT;
    Lchown = "lchown", 94, ABSENT;
    Fchownat = "fchownat", 260, 54;
    Utimensat = "utimensat", 280, 88;
    Setxattr = "setxattr", 188, 5;
    Lsetxattr = "lsetxattr", 189, 6;
    Removexattr = "removexattr", 197, 14;
    Lremovexattr = "lremovexattr", 198, 15;
    Access = "access", 21, ABSENT;
    Faccessat = "faccessat", 269, 48;
    Faccessat2 = "faccessat2", 439, 439;
}

impl Sys {
    pub fn number(self, arch: Arch) -> i64 {
        let (x86_64, aarch64) = self.numbers();
        match arch {
            Arch::X86_64 => x86_64,
            Arch::Aarch64 => aarch64,
        }
    }
}

/// When a syscall is denied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Deny {
    /// Every call.
    Always,
    /// Calls matching any of these argument checks.
    When(Vec<ArgCheck>),
    /// Every call, reported first: the supervisor outside the sandbox is told (a seccomp user
    /// notification, so it can say which address a refused `connect` went to) and answers with
    /// the refusal. Without a supervisor, the same `EPERM` as [`Deny::Always`].
    Reported,
    /// Calls matching any of these checks, in order: the first that matches decides whether the
    /// call is refused at once or reported first (see [`Deny::Reported`]).
    Checked(Vec<(ArgCheck, Refusal)>),
}

/// How a matching call is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `EPERM` at once.
    Denied,
    /// Reported to the supervisor, which refuses it.
    Reported,
    /// Not refused: shown to the supervisor, which lets it go on (the kernel's own checks then
    /// decide) and notes it when it would write outside the writable roots. Without a supervisor
    /// the call simply goes on.
    Observed,
    /// Allowed: what matches goes on, and no later check of the list applies.
    Allowed,
}

/// One condition on one syscall argument; a call matching *any* check of its syscall is denied.
///
/// `int` arguments (socket domain, ioctl request) are compared on their low 32 bits only: the
/// kernel ignores the high bits, so a 64-bit comparison could be dodged by setting them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgCheck {
    /// The low 32 bits equal `value`.
    Equals { arg: u8, value: u32 },
    /// The low 32 bits differ from `value`.
    NotEquals { arg: u8, value: u32 },
    /// Any bit of `mask` is set (flags that all live in the low 32 bits).
    AnyBit { arg: u8, mask: u32 },
    /// The whole 64-bit argument is not zero (a pointer).
    NonZero { arg: u8 },
    /// The low 32 bits, masked, equal `value` (a field inside an argument: a socket's type).
    MaskedEquals { arg: u8, mask: u32, value: u32 },
    /// The low 32 bits, masked, differ from `value`.
    MaskedNotEquals { arg: u8, mask: u32, value: u32 },
    /// The low 32 bits are neither of `values` (a socket family outside a set).
    NotIn { arg: u8, values: [u32; 2] },
    /// Every call (the last check of a [`Deny::Checked`] list: what the others leave).
    Any,
}

/// What the program may do with sockets: the two switches of a sandbox that reach the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sockets {
    /// Internet sockets (the network grant).
    pub network: bool,
    /// Without `network`: TCP connections to the ports Landlock allows (a port grant) — TCP
    /// sockets and their options, `connect` observed (reported, then decided by the
    /// supervisor; allowed when unsupervised, where Landlock alone decides); still no UDP, no
    /// listening.
    pub tcp_ports: bool,
    /// Without `network`: listening on granted TCP ports (a listening grant) — TCP sockets and
    /// their options as for a port grant; `bind` and `listen` reported, the supervisor makes them
    /// itself on loopback and a granted port (refused when unsupervised); `accept` allowed.
    pub listen: bool,
    /// Unix sockets beyond stream socketpairs: connecting to a socket by path, datagrams. Only a
    /// contained agent gets it (it reaches the `wrap` broker that way).
    pub unix: bool,
}

/// The namespace flags of `clone`/`unshare` (linux/sched.h): creating any namespace is refused.
const NAMESPACE_FLAGS: [u32; 8] = [
    libc::CLONE_NEWNS as u32,
    libc::CLONE_NEWCGROUP as u32,
    libc::CLONE_NEWUTS as u32,
    libc::CLONE_NEWIPC as u32,
    libc::CLONE_NEWUSER as u32,
    libc::CLONE_NEWPID as u32,
    libc::CLONE_NEWNET as u32,
    0x80, // CLONE_NEWTIME (not in every libc)
];

/// `TIOCSTI` (fake terminal input) and `TIOCLINUX` (console selection/paste) on every arch we
/// support (asm-generic/ioctls.h).
const TIOCSTI: u32 = 0x5412;
const TIOCLINUX: u32 = 0x541C;

/// The rule table for a sandbox with these socket switches.
pub fn rules(sockets: Sockets) -> Vec<(Sys, Deny)> {
    let mut table = always_denied();
    table.extend(socket_rules(sockets));
    if sockets.network {
        return table;
    }
    if sockets.tcp_ports || sockets.listen {
        table.extend(tcp_only(sockets.listen));
    } else {
        table.extend(network_denied());
    }
    table
}

fn always_denied() -> Vec<(Sys, Deny)> {
    use Sys::*;
    let always = [
        // Reading or writing other processes' memory.
        Ptrace,
        ProcessVmReadv,
        ProcessVmWritev,
        // io_uring performs socket and file operations without the syscalls filtered here.
        IoUringSetup,
        IoUringEnter,
        IoUringRegister,
        // Kernel attack surface no shell command needs.
        Bpf,
        PerfEventOpen,
        Keyctl,
        AddKey,
        RequestKey,
        // Changing the mount table (protected paths are read-only mounts).
        Mount,
        Umount2,
        PivotRoot,
        MoveMount,
        Fsmount,
        Fsopen,
        Fsconfig,
        Fspick,
        OpenTree,
        OpenTreeAttr,
        MountSetattr,
        // Entering existing namespaces.
        Setns,
        KexecLoad,
        KexecFileLoad,
        InitModule,
        FinitModule,
        DeleteModule,
        Reboot,
        Swapon,
        Swapoff,
    ];
    let mut table: Vec<(Sys, Deny)> = always.into_iter().map(|s| (s, Deny::Always)).collect();
    let new_namespace = Deny::When(vec![ArgCheck::AnyBit {
        arg: 0,
        mask: NAMESPACE_FLAGS.iter().fold(0, |mask, flag| mask | flag),
    }]);
    table.push((Unshare, new_namespace.clone()));
    table.push((Clone, new_namespace));
    let fake_input = [TIOCSTI, TIOCLINUX].map(|value| ArgCheck::Equals { arg: 1, value });
    table.push((Ioctl, Deny::When(fake_input.to_vec())));
    table.extend(other_processes_denied());
    table.extend(set_id_bits_denied());
    table
}

/// Acting on processes other than the caller: their limits (`prlimit` with `RLIMIT_FSIZE` kills a
/// process outside), priority, CPU affinity, scheduling, I/O priority and memory placement. The
/// PID namespace already hides every process outside; these refuse it in the filter too, so it
/// holds also where a namespace could not be made. Pid `0` means the caller itself.
fn other_processes_denied() -> Vec<(Sys, Deny)> {
    use Sys::*;
    let not_self = |arg| Deny::When(vec![ArgCheck::NotEquals { arg, value: 0 }]);
    let mut table: Vec<(Sys, Deny)> = [
        Prlimit64,
        SchedSetaffinity,
        SchedSetscheduler,
        SchedSetparam,
        SchedSetattr,
        MigratePages,
        MovePages,
    ]
    .into_iter()
    .map(|s| (s, not_self(0)))
    .collect();
    // setpriority(PRIO_PROCESS = 0, 0, …) is the caller; a process group or user is not.
    table.push((
        Setpriority,
        Deny::When(vec![
            ArgCheck::NotEquals { arg: 0, value: 0 },
            ArgCheck::NotEquals { arg: 1, value: 0 },
        ]),
    ));
    // ioprio_set(IOPRIO_WHO_PROCESS = 1, 0, …) is the caller.
    table.push((
        IoprioSet,
        Deny::When(vec![
            ArgCheck::NotEquals { arg: 0, value: 1 },
            ArgCheck::NotEquals { arg: 1, value: 0 },
        ]),
    ));
    // userfaultfd stalls the kernel at a page fault of the caller's choosing (a race widener);
    // pidfd_getfd, process_madvise and process_mrelease act on another process; syslog reads the
    // kernel log.
    for sys in [
        Userfaultfd,
        PidfdGetfd,
        ProcessMadvise,
        ProcessMrelease,
        Syslog,
    ] {
        table.push((sys, Deny::Always));
    }
    table
}

/// Setting the set-user-ID or set-group-ID bit, by chmod or in the mode of a file being created: a
/// file the program creates in the workspace would otherwise run with its owner's identity
/// (root's, for a root caller) when executed outside.
fn set_id_bits_denied() -> Vec<(Sys, Deny)> {
    use Sys::*;
    let mask = libc::S_ISUID | libc::S_ISGID;
    // The mode of a file being created: open(path, flags, mode), openat(dir, path, flags, mode),
    // creat(path, mode), mknod(path, mode, dev), mknodat(dir, path, mode, dev). (A mode passed
    // without O_CREAT is ignored by the kernel, and libc passes 0 then.)
    [
        (Chmod, 1),
        (Fchmod, 1),
        (Fchmodat, 2),
        (Fchmodat2, 2),
        (Open, 2),
        (Openat, 3),
        (Creat, 1),
        (Mknod, 1),
        (Mknodat, 2),
    ]
    .into_iter()
    .map(|(sys, arg)| (sys, Deny::When(vec![ArgCheck::AnyBit { arg, mask }])))
    .collect()
}

/// Sockets: no unix socket reaches anything by path (tmux, the session bus, docker, ssh-agent
/// listen on unix sockets, and a datagram can be sent to one by name from any datagram socket),
/// so only stream and seqpacket socketpairs — which talk to the program's own processes — are
/// allowed, unless [`Sockets::unix`]. Without the network no socket of any other family is
/// allowed either.
fn socket_rules(sockets: Sockets) -> Vec<(Sys, Deny)> {
    use Sys::*;
    let unix = libc::AF_UNIX as u32;
    let internet = [libc::AF_INET as u32, libc::AF_INET6 as u32];
    let dgram = ArgCheck::MaskedEquals {
        arg: 1,
        mask: 0xf,
        value: libc::SOCK_DGRAM as u32,
    };
    let socket = match sockets {
        // Without the network, only TCP sockets can be made, so that a `connect` is what fails
        // (and is reported with its address); they can never connect, bind or listen.
        // A UDP socket (a DNS lookup, most often) is refused with a report: without it the
        // line would only say "could not resolve host".
        Sockets {
            network: false,
            unix: false,
            ..
        } => {
            let family = ArgCheck::NotIn {
                arg: 0,
                values: internet,
            };
            let mut checks = vec![(family, Refusal::Denied)];
            checks.extend(tcp_stream_only(dgram));
            Deny::Checked(checks)
        }
        // Unix sockets by name beside TCP to granted ports (a line granted the ssh agent's socket
        // and port 22): unix stream sockets, and internet sockets as without the network above.
        // The conditions are checked in order, the first that holds decides.
        Sockets {
            network: false,
            unix: true,
            tcp_ports,
            listen,
        } if tcp_ports || listen => {
            // A unix socket's protocol is 0 and its type stream: it passes the TCP checks.
            let mut checks = tcp_stream_only(dgram);
            checks.extend([
                (
                    ArgCheck::Equals {
                        arg: 0,
                        value: unix,
                    },
                    Refusal::Allowed,
                ),
                (
                    ArgCheck::NotIn {
                        arg: 0,
                        values: internet,
                    },
                    Refusal::Denied,
                ),
                (ArgCheck::Any, Refusal::Allowed),
            ]);
            Deny::Checked(checks)
        }
        // Unix sockets by name (a contained agent's, which reaches `wrap`'s broker): stream and
        // seqpacket only, whose `connect` the supervisor makes itself (see `unix_connect`); a
        // datagram socket could send to any socket by name, which nobody could check.
        Sockets {
            network,
            unix: true,
            ..
        } => {
            let others = if network {
                Refusal::Allowed
            } else {
                Refusal::Denied
            };
            let kind = |kind: libc::c_int| ArgCheck::MaskedEquals {
                arg: 1,
                mask: 0xf,
                value: kind as u32,
            };
            Deny::Checked(vec![
                (
                    ArgCheck::NotEquals {
                        arg: 0,
                        value: unix,
                    },
                    others,
                ),
                (kind(libc::SOCK_STREAM), Refusal::Allowed),
                (kind(libc::SOCK_SEQPACKET), Refusal::Allowed),
                (ArgCheck::Any, Refusal::Denied),
            ])
        }
        Sockets {
            network: true,
            unix: false,
            ..
        } => Deny::When(vec![ArgCheck::Equals {
            arg: 0,
            value: unix,
        }]),
    };
    // A datagram socket of a pair can still send to any socket by name (`sendto`): never one.
    let pair = vec![
        ArgCheck::NotEquals {
            arg: 0,
            value: unix,
        },
        dgram,
    ];
    let mut table = vec![(Socket, socket), (Socketpair, Deny::When(pair))];
    if sockets.network && sockets.unix {
        // Every connect goes to the supervisor, which makes it itself on its copy of the socket
        // (without one, nested in another sandbox, it goes on).
        table.push((
            Connect,
            Deny::Checked(vec![(ArgCheck::Any, Refusal::Observed)]),
        ));
    }
    table
}

/// The checks, in order, that leave only TCP stream sockets of a socket's type and protocol: a
/// datagram socket (`dgram`: a DNS lookup, most often) reported, then refused; a protocol other
/// than TCP refused (Landlock's port rules hold TCP, and another stream protocol — SCTP, MPTCP —
/// would connect or listen beside them); any type but stream refused.
fn tcp_stream_only(dgram: ArgCheck) -> Vec<(ArgCheck, Refusal)> {
    vec![
        (dgram, Refusal::Reported),
        (
            ArgCheck::NotIn {
                arg: 2,
                values: [0, libc::IPPROTO_TCP as u32],
            },
            Refusal::Denied,
        ),
        (
            ArgCheck::MaskedNotEquals {
                arg: 1,
                mask: 0xf,
                value: libc::SOCK_STREAM as u32,
            },
            Refusal::Denied,
        ),
    ]
}

/// TCP to the granted ports: what [`network_denied`] refuses but a client needs (socket options,
/// `getsockopt(SO_ERROR)` after a non-blocking connect, addresses, `shutdown`) is allowed;
/// `connect` is observed; unconnected sends are not. Without `listen`, neither are accepting,
/// binding (reported) and listening. With it, `bind` and `listen` are reported — the supervisor makes each
/// itself, on its copy of the socket, to a granted port on loopback (see
/// `sandbox::listening`), and without a supervisor they are refused — and `accept` is allowed:
/// only a socket listening where the grant says can have connections to accept.
fn tcp_only(listen: bool) -> Vec<(Sys, Deny)> {
    use Sys::*;
    let server: &[Sys] = if listen {
        &[]
    } else {
        &[Accept, Accept4, Listen]
    };
    let mut table: Vec<(Sys, Deny)> = server
        .iter()
        .chain(&[Sendmmsg, Recvmmsg])
        .map(|s| (*s, Deny::Always))
        .collect();
    // Reported either way: made by the supervisor under a listening grant, refused with the
    // port it asked for (what a grant would need) otherwise.
    table.push((Bind, Deny::Reported));
    if listen {
        table.push((Listen, Deny::Reported));
    }
    table.push((
        Connect,
        Deny::Checked(vec![(ArgCheck::Any, Refusal::Observed)]),
    ));
    table.extend(fast_open_denied());
    table
}

/// `sendto` with a destination, and TCP Fast Open (a connect from `sendto`/`sendmsg`).
fn fast_open_denied() -> Vec<(Sys, Deny)> {
    use Sys::*;
    let fast_open = libc::MSG_FASTOPEN as u32;
    vec![
        (
            Sendto,
            Deny::When(vec![
                ArgCheck::NonZero { arg: 4 },
                ArgCheck::AnyBit {
                    arg: 3,
                    mask: fast_open,
                },
            ]),
        ),
        (
            Sendmsg,
            Deny::When(vec![ArgCheck::AnyBit {
                arg: 2,
                mask: fast_open,
            }]),
        ),
    ]
}

fn network_denied() -> Vec<(Sys, Deny)> {
    use Sys::*;
    // The calls that accept from outside or inspect sockets (after Codex's list). `recvfrom`
    // stays allowed so programs talking to their own children over a socketpair keep working.
    let reaching_out = [
        Accept,
        Accept4,
        Listen,
        Getpeername,
        Getsockname,
        Shutdown,
        Sendmmsg,
        Recvmmsg,
        Getsockopt,
    ];
    let mut table: Vec<(Sys, Deny)> = reaching_out
        .into_iter()
        .map(|s| (s, Deny::Always))
        .collect();
    // Where the line tried to connect, or the port it tried to listen on, is what it would need:
    // reported, then refused.
    table.push((Connect, Deny::Reported));
    table.push((Bind, Deny::Reported));
    // The options a server sets before its `bind` (Node's libuv, Python's socketserver) and a
    // client before its `connect` (Node's HTTP agents: no delay, keep-alive and its timings), so
    // that the `bind` or `connect` is reached and reported — refused at the option, a client
    // fails with a bare `EPERM` that names nothing and offers no grant. By level and number:
    // socket-level and TCP-level options only, numbers 0 to 7, 9 and 15, each harmless at either
    // level on a socket that can reach no one: TCP_NODELAY, TCP_MAXSEG, TCP_CORK, TCP_KEEPIDLE,
    // TCP_KEEPINTVL, TCP_KEEPCNT, TCP_SYNCNT, TCP_DEFER_ACCEPT, TCP_THIN_LINEAR_TIMEOUTS;
    // SO_DEBUG (which needs CAP_NET_ADMIN), SO_REUSEADDR, SO_TYPE and SO_ERROR (which cannot be
    // set), SO_DONTROUTE, SO_BROADCAST, SO_SNDBUF (within the kernel's limit), SO_KEEPALIVE,
    // SO_REUSEPORT. Not TCP Fast Open's (which would connect from `sendto`), not TCP_ULP or
    // TCP_REPAIR, not a device, a mark or a priority. Two masked checks hold 0–3 and 4–7 (the
    // filter must stay under 256 instructions).
    let low_bits = !3u32;
    let options: Vec<(ArgCheck, Refusal)> = vec![
        (
            ArgCheck::NotIn {
                arg: 1,
                values: [libc::SOL_SOCKET as u32, libc::IPPROTO_TCP as u32],
            },
            Refusal::Denied,
        ),
        (
            ArgCheck::MaskedEquals {
                arg: 2,
                mask: low_bits,
                value: 0,
            },
            Refusal::Allowed,
        ),
        (
            ArgCheck::MaskedEquals {
                arg: 2,
                mask: low_bits,
                value: 4,
            },
            Refusal::Allowed,
        ),
        (ArgCheck::Equals { arg: 2, value: 9 }, Refusal::Allowed),
        (ArgCheck::Equals { arg: 2, value: 15 }, Refusal::Allowed),
        (ArgCheck::Any, Refusal::Denied),
    ];
    table.push((Setsockopt, Deny::Checked(options)));
    // `send()` is `sendto(fd, buf, len, flags, NULL, 0)`: like `write()` on an already connected
    // socket. Only an explicit destination address (argument 4) reaches somewhere new, and TCP
    // Fast Open connects from `sendto`/`sendmsg` with `MSG_FASTOPEN`.
    table.extend(fast_open_denied());
    table
}

// Classic BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JA: u16 = 0x05;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_JSET_K: u16 = 0x45;
const BPF_ALU_AND_K: u16 = 0x54;
const BPF_RET_K: u16 = 0x06;
const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_USER_NOTIF: u32 = 0x7fc0_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
/// Offsets in `struct seccomp_data` (little endian on both architectures).
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
const DATA_ARGS: u32 = 16;
/// x86_64 syscalls with this bit set use the x32 ABI, under the same audit arch.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Where a jump goes: the next instruction, or a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum To {
    Next,
    Label(usize),
}

/// A tiny assembler: jumps name labels, resolved to relative offsets once the program is done.
#[derive(Default)]
struct Assembler {
    code: Vec<(u16, u32, To, To)>,
    labels: Vec<Option<usize>>,
}

impl Assembler {
    fn label(&mut self) -> To {
        self.labels.push(None);
        To::Label(self.labels.len() - 1)
    }

    fn bind(&mut self, label: To) {
        if let To::Label(id) = label {
            self.labels[id] = Some(self.code.len());
        }
    }

    fn load(&mut self, offset: u32) {
        self.code.push((BPF_LD_W_ABS, offset, To::Next, To::Next));
    }

    fn jump(&mut self, op: u16, k: u32, if_true: To, if_false: To) {
        self.code.push((op, k, if_true, if_false));
    }

    fn and(&mut self, mask: u32) {
        self.code.push((BPF_ALU_AND_K, mask, To::Next, To::Next));
    }

    fn goto(&mut self, to: To) {
        self.code.push((BPF_JA, 0, to, To::Next));
    }

    fn ret(&mut self, k: u32) {
        self.code.push((BPF_RET_K, k, To::Next, To::Next));
    }

    /// The program, every label resolved. An unbound label or a jump that does not fit is a bug
    /// in the filter's construction: an error (the line does not run), never a wrong filter.
    fn finish(self) -> Result<BpfProgram> {
        let labels: Vec<usize> = self
            .labels
            .iter()
            .map(|label| label.ok_or_else(|| malformed("a jump to an unbound label")))
            .collect::<Result<_>>()?;
        let mut linked = Linked {
            code: self.code,
            labels,
        };
        linked.lengthen_far_jumps();
        linked.encode()
    }
}

/// The assembled code with every label bound to an instruction index.
struct Linked {
    code: Vec<(u16, u32, To, To)>,
    labels: Vec<usize>,
}

impl Linked {
    /// The index `to` goes to from the instruction at `at`.
    fn target(&self, to: To, at: usize) -> usize {
        match to {
            To::Next => at + 1,
            To::Label(id) => self.labels[id],
        }
    }

    /// How many instructions the jump from `at` to `to` skips.
    fn reach(&self, to: To, at: usize) -> usize {
        self.target(to, at).saturating_sub(at + 1)
    }

    /// A conditional jump that reaches more than 255 instructions ahead: the branch (true first)
    /// that is too far, or `None`.
    fn far_branch(&self, at: usize) -> Option<bool> {
        let (code, _, if_true, if_false) = self.code[at];
        if !matches!(code, BPF_JEQ_K | BPF_JGE_K | BPF_JSET_K) {
            return None;
        }
        if self.reach(if_true, at) > 255 {
            Some(true)
        } else if self.reach(if_false, at) > 255 {
            Some(false)
        } else {
            None
        }
    }

    /// A conditional jump reaches at most 255 instructions ahead; a farther one goes through an
    /// unconditional `JA` (32-bit offset) placed right after it. Every far jump of a pass gets its
    /// trampoline in one rebuild of the code; the trampolines move what follows, which can put
    /// another jump out of reach, so passes repeat until every conditional jump fits (one or two
    /// in practice; each pass only adds instructions, so this ends).
    fn lengthen_far_jumps(&mut self) {
        loop {
            let far: Vec<(usize, bool)> = (0..self.code.len())
                .filter_map(|at| self.far_branch(at).map(|branch| (at, branch)))
                .collect();
            if far.is_empty() {
                return;
            }
            self.insert_trampolines(&far);
        }
    }

    /// Puts a trampoline after each of `far` (ascending instruction indices, each with the
    /// branch that is too far): that branch falls into the trampoline, the other skips it.
    fn insert_trampolines(&mut self, far: &[(usize, bool)]) {
        // Where old instruction `i` lands: after every trampoline inserted before it.
        let moved = |i: usize| i + far.partition_point(|&(at, _)| at < i);
        for label in &mut self.labels {
            *label = moved(*label);
        }
        let mut code = Vec::with_capacity(self.code.len() + far.len());
        let mut pending = far.iter().peekable();
        for (at, &(op, k, if_true, if_false)) in self.code.iter().enumerate() {
            let Some(&(_, true_is_far)) = pending.next_if(|&&(f, _)| f == at) else {
                code.push((op, k, if_true, if_false));
                continue;
            };
            // The instruction after the trampoline: where the old `at + 1` now is.
            self.labels.push(moved(at + 1));
            let after = To::Label(self.labels.len() - 1);
            let (new_true, new_false, far_to) = if true_is_far {
                (To::Next, after_or(if_false, after), if_true)
            } else {
                (after_or(if_true, after), To::Next, if_false)
            };
            code.push((op, k, new_true, new_false));
            code.push((BPF_JA, 0, far_to, To::Next));
        }
        self.code = code;
    }

    /// The instructions, each jump as the relative offset BPF wants.
    fn encode(&self) -> Result<BpfProgram> {
        let offset = |to: To, at: usize| -> Result<u32> {
            self.target(to, at)
                .checked_sub(at + 1)
                .and_then(|ahead| u32::try_from(ahead).ok())
                .ok_or_else(|| malformed("a jump that does not go forward"))
        };
        let short = |o: u32| {
            u8::try_from(o).map_err(|_| malformed("a conditional jump beyond 255 instructions"))
        };
        self.code
            .iter()
            .enumerate()
            .map(|(at, &(code, k, if_true, if_false))| match code {
                BPF_JA => Ok(stmt(code, offset(if_true, at)?)),
                BPF_JEQ_K | BPF_JGE_K | BPF_JSET_K => Ok(jump(
                    code,
                    k,
                    short(offset(if_true, at)?)?,
                    short(offset(if_false, at)?)?,
                )),
                _ => Ok(stmt(code, k)),
            })
            .collect()
    }
}

/// The error for a filter the assembler cannot encode (a bug, reported rather than installed).
fn malformed(what: &str) -> Error {
    Error::internal(format!("the seccomp filter is malformed: {what}"))
}

/// The near branch of a split jump: its own target, or — when that was the next instruction —
/// the one after the inserted trampoline.
fn after_or(to: To, after: To) -> To {
    match to {
        To::Next => after,
        label => label,
    }
}

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// The filter for `arch`: allow by default, `EPERM` for the rule table, `ENOSYS` for `clone3`,
/// `openat2` and x32 calls, kill for a foreign architecture (the tests' entry point; see
/// [`assemble`]).
#[cfg(test)]
pub fn program(arch: Arch, sockets: Sockets) -> BpfProgram {
    program_with(arch, sockets, false)
}

/// [`program`], with [`Deny::Reported`] calls sent to a supervisor (`SECCOMP_RET_USER_NOTIF`)
/// when `reported`.
#[cfg(test)]
pub fn program_with(arch: Arch, sockets: Sockets, reported: bool) -> BpfProgram {
    assemble(arch, sockets, reported).unwrap()
}

/// The filter for `arch`: allow by default, `EPERM` for the rule table, `ENOSYS` for
/// [`ENOSYS_CALLS`] and x32 calls, kill for a foreign architecture; with `reported`,
/// [`Deny::Reported`] calls are sent to a supervisor (`SECCOMP_RET_USER_NOTIF`), and the filter
/// must be installed with a listener.
pub fn assemble(arch: Arch, sockets: Sockets, reported: bool) -> Result<BpfProgram> {
    let mut asm = Assembler::default();
    let (allow, deny, enosys, kill) = (asm.label(), asm.label(), asm.label(), asm.label());
    let report = if reported { asm.label() } else { deny };
    let observe = if reported { report } else { allow };
    asm.load(DATA_ARCH);
    asm.jump(BPF_JEQ_K, arch.audit_arch(), To::Next, kill);
    asm.load(DATA_NR);
    if arch == Arch::X86_64 {
        asm.jump(BPF_JGE_K, X32_SYSCALL_BIT, enosys, To::Next);
    }
    // The calls this architecture has, by number.
    let table = numbered_rules(arch, sockets, reported);
    // Every mentioned number with where it goes, sorted for the search tree.
    let mut entries: Vec<(u32, To)> = ENOSYS_CALLS
        .iter()
        .filter_map(|sys| nr(*sys, arch))
        .map(|number| (number, enosys))
        .collect();
    let mut blocks: Vec<(To, Vec<(ArgCheck, To)>)> = Vec::new();
    for (number, rule) in &table {
        let checks: Vec<(ArgCheck, To)> = match rule {
            Deny::Always => {
                entries.push((*number, deny));
                continue;
            }
            Deny::Reported => {
                entries.push((*number, report));
                continue;
            }
            Deny::When(checks) => checks.iter().map(|c| (*c, deny)).collect(),
            Deny::Checked(checks) => checks
                .iter()
                .map(|(c, how)| {
                    let to = match how {
                        Refusal::Denied => deny,
                        Refusal::Reported => report,
                        Refusal::Observed => observe,
                        Refusal::Allowed => allow,
                    };
                    (*c, to)
                })
                .collect(),
        };
        // A call refused (or reported) whatever its arguments goes there straight from the tree.
        if let Some(&(ArgCheck::Any, to)) = checks.first() {
            entries.push((*number, to));
            continue;
        }
        let block = asm.label();
        blocks.push((block, checks));
        entries.push((*number, block));
    }
    entries.sort_by_key(|(number, _)| *number);
    entries.dedup_by_key(|(number, _)| *number);
    search_tree(&mut asm, &entries, allow);
    for (block, checks) in blocks {
        asm.bind(block);
        for (check, to) in checks {
            emit_check(&mut asm, check, to);
        }
        asm.goto(allow);
    }
    asm.bind(allow);
    asm.ret(SECCOMP_RET_ALLOW);
    asm.bind(deny);
    asm.ret(SECCOMP_RET_ERRNO | libc::EPERM as u32);
    asm.bind(enosys);
    asm.ret(SECCOMP_RET_ERRNO | libc::ENOSYS as u32);
    if reported {
        asm.bind(report);
        asm.ret(SECCOMP_RET_USER_NOTIF);
    }
    asm.bind(kill);
    asm.ret(SECCOMP_RET_KILL_PROCESS);
    asm.finish()
}

/// What the filter answers a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Refused with this `errno` (`EPERM`, or `ENOSYS`).
    Errno(i32),
    /// Sent to the supervisor (`SECCOMP_RET_USER_NOTIF`).
    Notify,
    /// A foreign syscall ABI: the process is killed.
    Kill,
}

/// The rule table of one filter, read as data: what the filter answers any call, decided from
/// the rules themselves rather than from the assembled program. The supervisor asks it again for
/// every notification (on the call's registers, which the line cannot change after the fact), so
/// that a mistake in the program's order of deny and notify could never let a refused call go
/// on; the tests hold the assembled programs to it on every probe.
#[derive(Debug, Clone)]
pub struct Table {
    arch: Arch,
    reported: bool,
    /// By number, in the table's order (the first rule of a number decides, as in the program).
    rules: Vec<(u32, Deny)>,
}

impl Table {
    /// The table [`assemble`] compiles for `arch`, `sockets` and `reported`.
    pub fn new(arch: Arch, sockets: Sockets, reported: bool) -> Table {
        Table {
            arch,
            reported,
            rules: numbered_rules(arch, sockets, reported),
        }
    }

    /// The verdict on the call numbered `call` (`seccomp_data.nr`) with `args`, made through
    /// this table's architecture.
    pub fn verdict(&self, call: i64, args: &[u64; 6]) -> Verdict {
        let number = call as u32;
        if self.arch == Arch::X86_64 && number >= X32_SYSCALL_BIT {
            return Verdict::Errno(libc::ENOSYS);
        }
        if ENOSYS_CALLS
            .iter()
            .any(|sys| nr(*sys, self.arch) == Some(number))
        {
            return Verdict::Errno(libc::ENOSYS);
        }
        let report = if self.reported {
            Verdict::Notify
        } else {
            Verdict::Errno(libc::EPERM)
        };
        let observe = if self.reported {
            Verdict::Notify
        } else {
            Verdict::Allow
        };
        let deny = Verdict::Errno(libc::EPERM);
        let Some((_, rule)) = self.rules.iter().find(|(n, _)| *n == number) else {
            return Verdict::Allow;
        };
        match rule {
            Deny::Always => deny,
            Deny::Reported => report,
            Deny::When(checks) => {
                if checks.iter().any(|c| c.matches(args)) {
                    deny
                } else {
                    Verdict::Allow
                }
            }
            Deny::Checked(checks) => match checks.iter().find(|(c, _)| c.matches(args)) {
                Some((_, Refusal::Denied)) => deny,
                Some((_, Refusal::Reported)) => report,
                Some((_, Refusal::Observed)) => observe,
                Some((_, Refusal::Allowed)) | None => Verdict::Allow,
            },
        }
    }
}

impl ArgCheck {
    /// Whether the call's arguments match, compared as the program compares them: `int`
    /// arguments on their low 32 bits, a pointer on all 64.
    fn matches(self, args: &[u64; 6]) -> bool {
        let low = |arg: u8| args.get(usize::from(arg)).map_or(0, |a| *a as u32);
        match self {
            ArgCheck::Equals { arg, value } => low(arg) == value,
            ArgCheck::NotEquals { arg, value } => low(arg) != value,
            ArgCheck::AnyBit { arg, mask } => low(arg) & mask != 0,
            ArgCheck::NonZero { arg } => args.get(usize::from(arg)).is_some_and(|a| *a != 0),
            ArgCheck::MaskedEquals { arg, mask, value } => low(arg) & mask == value,
            ArgCheck::MaskedNotEquals { arg, mask, value } => low(arg) & mask != value,
            ArgCheck::NotIn { arg, values } => !values.contains(&low(arg)),
            ArgCheck::Any => true,
        }
    }
}

/// The rule table for `arch` (with the observed writes when `reported`), by number: what
/// [`assemble`] compiles and [`Table`] reads.
fn numbered_rules(arch: Arch, sockets: Sockets, reported: bool) -> Vec<(u32, Deny)> {
    let mut table: Vec<(Sys, Deny)> = rules(sockets);
    // Writes are observed: opens for writing and truncations are made by the supervisor (see
    // `opener`), and what the sandbox refused is named.
    if reported {
        observe_writes(&mut table);
    }
    table
        .into_iter()
        .filter_map(|(sys, rule)| Some((nr(sys, arch)?, rule)))
        .collect()
}

/// Calls that answer `ENOSYS`, as on a kernel without them, so that libc and programs fall back
/// to the older call the filter can read: `clone3` (its flags, namespaces among them, are in
/// memory; `clone` has them in a register) and `openat2` (its mode, set-id bits among them, is in
/// memory; `openat` has it in a register). shellgate's own launcher, nested in a sandbox, walks
/// paths with `openat` instead ([`crate::raw::open_no_symlinks`]).
const ENOSYS_CALLS: [Sys; 2] = [Sys::Clone3, Sys::Openat2];

/// The calls that change the filesystem by path (or through a descriptor): observed, so that a
/// write the sandbox refuses outside the writable roots can be named. `openat` and `open` only
/// when they open for writing, creating or truncating; the `access` calls only when they ask
/// whether a file may be written (`W_OK`): a program that probes first (coreutils `rm` at a
/// terminal, `test -w`) gives up on the probe's refusal (`EROFS`) and never makes the write the
/// sandbox would have named. A call that already has a rule keeps it, observed for what the rule
/// lets through.
const OBSERVED_WRITES: [(Sys, Observed); 33] = [
    (Sys::Open, Observed::Bits(1, OPEN_WRITE_FLAGS)),
    (Sys::Openat, Observed::Bits(2, OPEN_WRITE_FLAGS)),
    (Sys::Creat, Observed::Always),
    (Sys::Mkdir, Observed::Always),
    (Sys::Mkdirat, Observed::Always),
    (Sys::Unlink, Observed::Always),
    (Sys::Unlinkat, Observed::Always),
    (Sys::Rmdir, Observed::Always),
    (Sys::Rename, Observed::Always),
    (Sys::Renameat, Observed::Always),
    (Sys::Renameat2, Observed::Always),
    (Sys::Link, Observed::Always),
    (Sys::Linkat, Observed::Always),
    (Sys::Symlink, Observed::Always),
    (Sys::Symlinkat, Observed::Always),
    (Sys::Mknod, Observed::Always),
    (Sys::Mknodat, Observed::Always),
    (Sys::Truncate, Observed::Always),
    (Sys::Chmod, Observed::Always),
    (Sys::Fchmod, Observed::Always),
    (Sys::Fchmodat, Observed::Always),
    (Sys::Fchmodat2, Observed::Always),
    (Sys::Chown, Observed::Always),
    (Sys::Lchown, Observed::Always),
    (Sys::Fchownat, Observed::Always),
    (Sys::Utimensat, Observed::Always),
    (Sys::Setxattr, Observed::Always),
    (Sys::Lsetxattr, Observed::Always),
    (Sys::Removexattr, Observed::Always),
    (Sys::Lremovexattr, Observed::Always),
    (Sys::Access, Observed::Bits(1, W_OK)),
    (Sys::Faccessat, Observed::Bits(2, W_OK)),
    (Sys::Faccessat2, Observed::Bits(2, W_OK)),
];

/// When an observed call goes to the supervisor: always, or when an argument has any of the bits.
#[derive(Clone, Copy)]
enum Observed {
    Always,
    Bits(u8, u32),
}

/// `access`'s question "may this be written?".
const W_OK: u32 = libc::W_OK as u32;

/// The calls observed for writes (see [`OBSERVED_WRITES`]).
pub fn observed_calls() -> impl Iterator<Item = Sys> {
    OBSERVED_WRITES.iter().map(|(sys, _)| *sys)
}

/// Opening for writing: `O_WRONLY | O_RDWR | O_CREAT | O_TRUNC`.
const OPEN_WRITE_FLAGS: u32 =
    (libc::O_WRONLY | libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC) as u32;

fn observe_writes(table: &mut Vec<(Sys, Deny)>) {
    for (sys, when) in OBSERVED_WRITES {
        let observed = match when {
            Observed::Bits(arg, mask) => ArgCheck::AnyBit { arg, mask },
            Observed::Always => ArgCheck::Any,
        };
        match table.iter_mut().find(|(s, _)| *s == sys) {
            Some((_, rule)) => {
                let mut checks: Vec<(ArgCheck, Refusal)> = match rule {
                    Deny::When(checks) => checks.iter().map(|c| (*c, Refusal::Denied)).collect(),
                    Deny::Checked(checks) => checks.clone(),
                    Deny::Always | Deny::Reported => continue,
                };
                checks.push((observed, Refusal::Observed));
                *rule = Deny::Checked(checks);
            }
            None => table.push((sys, Deny::Checked(vec![(observed, Refusal::Observed)]))),
        }
    }
}

/// A binary search over the syscall number in the accumulator: `JGE` splits until a handful of
/// numbers are left, which `JEQ` tests one by one; anything else goes to `otherwise`.
///
/// The kernel runs the filter once per syscall number when it is installed, to cache the ones it
/// always allows: a linear chain of ~80 comparisons makes that (and every unlisted call) walk all
/// of them, a tree about eight.
fn search_tree(asm: &mut Assembler, entries: &[(u32, To)], otherwise: To) {
    const LEAF: usize = 4;
    if entries.len() <= LEAF {
        for (number, to) in entries {
            asm.jump(BPF_JEQ_K, *number, *to, To::Next);
        }
        asm.goto(otherwise);
        return;
    }
    let (low, high) = entries.split_at(entries.len() / 2);
    let upper = asm.label();
    asm.jump(BPF_JGE_K, high[0].0, upper, To::Next);
    search_tree(asm, low, otherwise);
    asm.bind(upper);
    search_tree(asm, high, otherwise);
}

/// The number as BPF compares it (`seccomp_data.nr`, 32 bits); `None` where `arch` lacks the
/// call ([`ABSENT`]).
fn nr(sys: Sys, arch: Arch) -> Option<u32> {
    u32::try_from(sys.number(arch)).ok()
}

/// Falls through when the check does not match, jumps to `deny` when it does.
fn emit_check(asm: &mut Assembler, check: ArgCheck, deny: To) {
    let low = |arg: u8| DATA_ARGS + 8 * u32::from(arg);
    match check {
        ArgCheck::Equals { arg, value } => {
            asm.load(low(arg));
            asm.jump(BPF_JEQ_K, value, deny, To::Next);
        }
        ArgCheck::NotEquals { arg, value } => {
            asm.load(low(arg));
            asm.jump(BPF_JEQ_K, value, To::Next, deny);
        }
        ArgCheck::AnyBit { arg, mask } => {
            asm.load(low(arg));
            asm.jump(BPF_JSET_K, mask, deny, To::Next);
        }
        ArgCheck::NonZero { arg } => {
            asm.load(low(arg));
            asm.jump(BPF_JEQ_K, 0, To::Next, deny);
            asm.load(low(arg) + 4);
            asm.jump(BPF_JEQ_K, 0, To::Next, deny);
        }
        ArgCheck::MaskedEquals { arg, mask, value } => {
            asm.load(low(arg));
            asm.and(mask);
            asm.jump(BPF_JEQ_K, value, deny, To::Next);
        }
        ArgCheck::MaskedNotEquals { arg, mask, value } => {
            asm.load(low(arg));
            asm.and(mask);
            asm.jump(BPF_JEQ_K, value, To::Next, deny);
        }
        ArgCheck::Any => asm.goto(deny),
        ArgCheck::NotIn { arg, values } => {
            let inside = asm.label();
            asm.load(low(arg));
            for value in values {
                asm.jump(BPF_JEQ_K, value, inside, To::Next);
            }
            asm.goto(deny);
            asm.bind(inside);
        }
    }
}

/// The filter for this machine's architecture, ready for the sandbox's program process to
/// install (`seccomp(SECCOMP_SET_MODE_FILTER)`) just before its exec; with `reported`, the
/// variant whose reported calls go to a listener.
pub fn native_program(sockets: Sockets, reported: bool) -> Result<BpfProgram> {
    let arch = Arch::native().ok_or_else(|| {
        Error::new(
            Code::SandboxUnavailable,
            format!(
                "no seccomp filter for this architecture ({}); only x86_64 and aarch64 are supported",
                std::env::consts::ARCH
            ),
        )
    })?;
    assemble(arch, sockets, reported)
}

/// Installs the filter on the calling thread (`no_new_privs` must already be set): for a process
/// that confines itself rather than a child, such as `wrap`'s contained agent launcher.
pub fn install(sockets: Sockets) -> Result<()> {
    seccompiler::apply_filter(&native_program(sockets, false)?).map_err(seccomp_error)
}

/// Whether this kernel accepts seccomp filters (`CONFIG_SECCOMP_FILTER`).
pub fn available() -> bool {
    // SAFETY: prctl(PR_GET_SECCOMP) only reads the calling thread's seccomp mode.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    // A filter-capable kernel also exposes the actions list; mode -1 means no seccomp at all.
    mode >= 0 && std::path::Path::new("/proc/sys/kernel/seccomp/actions_avail").exists()
}

/// Whether this process already runs under a seccomp filter (mode 2, `SECCOMP_MODE_FILTER`).
pub fn filtered() -> bool {
    // SAFETY: prctl(PR_GET_SECCOMP) only reads the calling thread's seccomp mode.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) == 2 }
}

fn seccomp_error(e: impl std::fmt::Display) -> Error {
    Error::new(Code::SandboxUnavailable, format!("seccomp: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    };
    use std::collections::BTreeMap;

    /// The `struct seccomp_data` a filter sees.
    struct Call {
        arch: Arch,
        nr: i64,
        args: [u64; 6],
    }

    impl Call {
        fn new(arch: Arch, sys: Sys, args: &[u64]) -> Call {
            Call::raw(arch, sys.number(arch), args)
        }

        fn raw(arch: Arch, nr: i64, args: &[u64]) -> Call {
            let mut all = [0u64; 6];
            all[..args.len()].copy_from_slice(args);
            Call {
                arch,
                nr,
                args: all,
            }
        }

        /// The 32-bit word at `offset` of `struct seccomp_data` (little endian).
        fn word(&self, offset: u32) -> u32 {
            match offset {
                0 => self.nr as u32,
                4 => self.arch.audit_arch(),
                o if o >= DATA_ARGS => {
                    let arg = self.args[((o - DATA_ARGS) / 8) as usize];
                    if (o - DATA_ARGS).is_multiple_of(8) {
                        arg as u32
                    } else {
                        (arg >> 32) as u32
                    }
                }
                _ => 0,
            }
        }
    }

    /// A classic-BPF interpreter for the instructions both compilers emit.
    fn run(program: &[sock_filter], call: &Call) -> u32 {
        run_counting(program, call).0
    }

    /// The verdict and how many instructions ran to reach it.
    fn run_counting(program: &[sock_filter], call: &Call) -> (u32, usize) {
        let (mut acc, mut pc, mut steps) = (0u32, 0usize, 0usize);
        loop {
            steps += 1;
            let ins = &program[pc];
            match ins.code & 0x07 {
                0x00 => acc = call.word(ins.k), // LD W ABS
                0x04 => {
                    assert_eq!(ins.code & 0xf0, 0x50, "only ALU AND is emitted");
                    acc &= ins.k;
                }
                0x05 => {
                    let taken = match ins.code & 0xf0 {
                        0x00 => {
                            pc += ins.k as usize + 1;
                            continue;
                        }
                        0x10 => acc == ins.k,
                        0x20 => acc > ins.k,
                        0x30 => acc >= ins.k,
                        0x40 => acc & ins.k != 0,
                        op => panic!("jmp op {op:#x}"),
                    };
                    pc += 1 + if taken { ins.jt } else { ins.jf } as usize;
                    continue;
                }
                0x06 => return (ins.k, steps),
                class => panic!("class {class:#x}"),
            }
            pc += 1;
        }
    }

    fn verdict(arch: Arch, network: bool, sys: Sys, args: &[u64]) -> u32 {
        run(&program(arch, lines(network)), &Call::new(arch, sys, args))
    }

    /// A line's sockets: the network switch, never unix sockets by path.
    fn lines(network: bool) -> Sockets {
        Sockets {
            network,
            unix: false,
            tcp_ports: false,
            listen: false,
        }
    }

    /// The same rule table compiled by seccompiler, as a reference.
    fn reference(arch: Arch, sockets: Sockets) -> BpfProgram {
        let mut map: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
        for (sys, deny) in rules(sockets) {
            if sys.number(arch) == ABSENT {
                continue;
            }
            let chain = match deny {
                Deny::Always | Deny::Reported => Vec::new(),
                Deny::When(checks) => checks.iter().map(|c| reference_rule(*c)).collect(),
                // Observed calls are allowed without a supervisor.
                Deny::Checked(checks) => {
                    let denied: Vec<SeccompRule> = checks
                        .iter()
                        .filter(|(_, refusal)| *refusal != Refusal::Observed)
                        .map(|(c, _)| reference_rule(*c))
                        .collect();
                    if denied.is_empty() {
                        continue;
                    }
                    denied
                }
            };
            map.insert(sys.number(arch), chain);
        }
        let filter = SeccompFilter::new(
            map,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EPERM as u32),
            arch.target(),
        )
        .unwrap();
        BpfProgram::try_from(filter).unwrap()
    }

    fn reference_rule(check: ArgCheck) -> SeccompRule {
        use SeccompCmpArgLen::{Dword, Qword};
        let (arg, len, op, value) = match check {
            ArgCheck::Equals { arg, value } => (arg, Dword, SeccompCmpOp::Eq, u64::from(value)),
            ArgCheck::NotEquals { arg, value } => (arg, Dword, SeccompCmpOp::Ne, u64::from(value)),
            ArgCheck::AnyBit { arg, mask } => {
                // seccompiler has no "any bit": one masked compare per bit, OR'ed by the caller
                // would be needed; a single-bit mask is enough for the probes below.
                let bit = u64::from(mask & mask.wrapping_neg());
                (arg, Dword, SeccompCmpOp::MaskedEq(bit), bit)
            }
            ArgCheck::NonZero { arg } => (arg, Qword, SeccompCmpOp::Ne, 0),
            ArgCheck::MaskedEquals { arg, mask, value } => (
                arg,
                Dword,
                SeccompCmpOp::MaskedEq(u64::from(mask)),
                u64::from(value),
            ),
            ArgCheck::NotIn { arg, values } => {
                // Both "differs" conditions in one rule: seccompiler ANDs them.
                let conditions = values
                    .iter()
                    .map(|v| {
                        SeccompCondition::new(arg, Dword, SeccompCmpOp::Ne, u64::from(*v)).unwrap()
                    })
                    .collect();
                return SeccompRule::new(conditions).unwrap();
            }
            // seccompiler has no masked "differs": the socket rules using it are compared on
            // their own (`sockets_for_lines`), not against the reference.
            ArgCheck::MaskedNotEquals { arg, mask, .. } => (
                arg,
                Dword,
                SeccompCmpOp::MaskedEq(u64::from(mask)),
                u64::MAX,
            ),
            // Only in the observed (reported) variant, which is not compared with seccompiler.
            ArgCheck::Any => (0, Dword, SeccompCmpOp::Ge, 0),
        };
        SeccompRule::new(vec![SeccompCondition::new(arg, len, op, value).unwrap()]).unwrap()
    }

    const EPERM: u32 = SECCOMP_RET_ERRNO | libc::EPERM as u32;
    const ENOSYS: u32 = SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    const ALLOW: u32 = SECCOMP_RET_ALLOW;
    const ARCHES: [Arch; 2] = [Arch::X86_64, Arch::Aarch64];

    #[test]
    fn filter_is_short_to_run() {
        // The kernel runs the filter for every syscall number when it is installed (to cache the
        // ones always allowed), and every call not cached runs it again: what matters is the
        // path an ordinary call takes, and that every conditional jump fits its 8 bits.
        for arch in ARCHES {
            let ours = program(arch, lines(false));
            let theirs = reference(arch, lines(false));
            assert!(ours.len() < 256, "{arch:?}: {} instructions", ours.len());
            let longest = (0..460)
                .map(|nr| run_counting(&ours, &Call::raw(arch, nr, &[])).1)
                .max()
                .unwrap();
            let theirs_longest = (0..460)
                .map(|nr| run_counting(&theirs, &Call::raw(arch, nr, &[])).1)
                .max()
                .unwrap();
            eprintln!(
                "{arch:?}: {} instructions ({} with reported calls), longest path {longest} \
                 (seccompiler {theirs_longest})",
                ours.len(),
                program_with(arch, lines(false), true).len()
            );
            assert!(
                longest <= 24,
                "{arch:?}: a call runs {longest} instructions"
            );
            assert!(
                longest * 4 < theirs_longest,
                "{arch:?}: {longest} vs {theirs_longest}"
            );
        }
    }

    #[test]
    fn agrees_with_seccompiler_on_every_probe() {
        let values = [
            0u64,
            1,
            libc::AF_UNIX as u64,
            libc::AF_INET as u64,
            libc::AF_INET6 as u64,
            (1 << 32) | libc::AF_UNIX as u64,
            (1 << 32) | libc::AF_INET as u64,
            u64::from(TIOCSTI),
            u64::from(TIOCLINUX),
            (1 << 32) | u64::from(TIOCSTI),
            0x5401,
            libc::CLONE_NEWNS as u64,
            libc::SIGCHLD as u64,
            1 << 32,
            0x7fff_1234_0000,
        ];
        let probe_numbers = |arch: Arch| {
            let mut numbers: Vec<i64> = rules(lines(false))
                .iter()
                .map(|(s, _)| s.number(arch))
                .filter(|n| *n != ABSENT)
                .collect();
            numbers.extend([0, 1, 2, 3, 45, 59, 207, 221, 257, 500]);
            numbers.retain(|n| !ENOSYS_CALLS.iter().any(|sys| *n == sys.number(arch)));
            numbers
        };
        for arch in ARCHES {
            for sockets in [false, true]
                .into_iter()
                .flat_map(|network| [false, true].map(move |unix| (network, unix)))
                .flat_map(|(network, unix)| {
                    [(false, false), (true, false), (false, true)].map(
                        move |(tcp_ports, listen)| Sockets {
                            network,
                            unix,
                            tcp_ports,
                            listen,
                        },
                    )
                })
            {
                let (ours, theirs) = (program(arch, sockets), reference(arch, sockets));
                for nr in probe_numbers(arch) {
                    for (slot, value) in (0..5).flat_map(|s| values.map(|v| (s, v))) {
                        let mut args = [0u64; 6];
                        args[slot] = value;
                        let call = Call::raw(arch, nr, &args);
                        // Any-bit tests (namespace flags, set-id mode bits): the reference only
                        // knows the lowest bit; setsockopt's ordered checks (a level refused, then
                        // options allowed by masked number, then the rest refused) it cannot
                        // express. Compared on their own below and in
                        // `reaching_out_is_denied_without_network_only`.
                        if [
                            Sys::Setsockopt,
                            Sys::Socket,
                            Sys::Clone,
                            Sys::Unshare,
                            Sys::Chmod,
                            Sys::Fchmod,
                            Sys::Fchmodat,
                            Sys::Fchmodat2,
                        ]
                        .iter()
                        .any(|s| s.number(arch) == nr)
                        {
                            continue;
                        }
                        assert_eq!(
                            run(&ours, &call),
                            run(&theirs, &call),
                            "{arch:?} {sockets:?} nr={nr} arg{slot}={value:#x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn sockets_for_lines() {
        let (unix, inet) = (libc::AF_UNIX as u64, libc::AF_INET as u64);
        let (stream, dgram) = (libc::SOCK_STREAM as u64, libc::SOCK_DGRAM as u64);
        let seqpacket = libc::SOCK_SEQPACKET as u64;
        let cloexec_dgram = dgram | libc::SOCK_CLOEXEC as u64;
        for arch in ARCHES {
            for network in [false, true] {
                // No unix socket by path, ever; stream and seqpacket socketpairs always.
                assert_eq!(verdict(arch, network, Sys::Socket, &[unix, stream]), EPERM);
                assert_eq!(
                    verdict(arch, network, Sys::Socketpair, &[unix, stream]),
                    ALLOW
                );
                assert_eq!(
                    verdict(arch, network, Sys::Socketpair, &[unix, seqpacket]),
                    ALLOW
                );
                for datagram in [dgram, cloexec_dgram] {
                    assert_eq!(
                        verdict(arch, network, Sys::Socketpair, &[unix, datagram]),
                        EPERM
                    );
                }
                assert_eq!(
                    verdict(arch, network, Sys::Socketpair, &[inet, stream]),
                    EPERM
                );
            }
            // Without the network: a TCP socket can be made (its connect is what is reported and
            // refused), nothing else.
            for family in [libc::AF_INET, libc::AF_INET6] {
                let family = family as u64;
                assert_eq!(verdict(arch, false, Sys::Socket, &[family, stream]), ALLOW);
                assert_eq!(verdict(arch, false, Sys::Socket, &[family, dgram]), EPERM);
                let udp = run(
                    &program_with(arch, lines(false), true),
                    &Call::new(arch, Sys::Socket, &[family, dgram]),
                );
                assert_eq!(udp, SECCOMP_RET_USER_NOTIF);
                assert_eq!(verdict(arch, false, Sys::Socket, &[family, 3]), EPERM); // SOCK_RAW
                assert_eq!(verdict(arch, false, Sys::Connect, &[3, 0, 16]), EPERM);
                let reported = run(
                    &program_with(arch, lines(false), true),
                    &Call::new(arch, Sys::Connect, &[3, 0, 16]),
                );
                assert_eq!(reported, SECCOMP_RET_USER_NOTIF);
            }
            for family in [libc::AF_PACKET, libc::AF_NETLINK] {
                let family = family as u64;
                assert_eq!(verdict(arch, false, Sys::Socket, &[family, stream]), EPERM);
            }
            let fast_open = libc::MSG_FASTOPEN as u64;
            assert_eq!(
                verdict(arch, false, Sys::Sendmsg, &[3, 0, fast_open]),
                EPERM
            );
            assert_eq!(verdict(arch, false, Sys::Sendmsg, &[3, 0, 0]), ALLOW);
            assert_eq!(
                verdict(arch, false, Sys::Sendto, &[3, 0, 1, fast_open, 0, 0]),
                EPERM
            );
            assert_eq!(verdict(arch, true, Sys::Sendmsg, &[3, 0, fast_open]), ALLOW);
            assert_eq!(verdict(arch, true, Sys::Socket, &[inet, stream]), ALLOW);
            // High bits are ignored by the kernel, so they must not dodge the check.
            let dodge = (1u64 << 32) | unix;
            assert_eq!(verdict(arch, true, Sys::Socket, &[dodge, 1]), EPERM);
            // A contained agent reaches the broker over a unix socket.
            let agent = Sockets {
                network: true,
                unix: true,
                ..Sockets::default()
            };
            let call = Call::new(arch, Sys::Socket, &[unix, stream]);
            assert_eq!(run(&program(arch, agent), &call), ALLOW);
        }
    }

    #[test]
    fn writes_are_observed_only_with_a_supervisor() {
        let notify = SECCOMP_RET_USER_NOTIF;
        for arch in ARCHES {
            let watched = program_with(arch, lines(false), true);
            let plain = program(arch, lines(false));
            let wronly = libc::O_WRONLY as u64;
            let creat = libc::O_CREAT as u64;
            let call = |sys, args: &[u64]| Call::new(arch, sys, args);
            // Opening to read is never shown; opening to write, creating, renaming are.
            assert_eq!(run(&watched, &call(Sys::Openat, &[0, 0, 0])), ALLOW);
            assert_eq!(run(&watched, &call(Sys::Openat, &[0, 0, wronly])), notify);
            assert_eq!(run(&watched, &call(Sys::Openat, &[0, 0, creat])), notify);
            assert_eq!(run(&watched, &call(Sys::Renameat2, &[0, 0, 0, 0])), notify);
            assert_eq!(run(&watched, &call(Sys::Mkdirat, &[0, 0, 0o755])), notify);
            // The set-id refusal still comes first.
            let suid = u64::from(libc::S_ISUID) | 0o755;
            assert_eq!(run(&watched, &call(Sys::Fchmodat, &[0, 0, suid])), EPERM);
            assert_eq!(run(&watched, &call(Sys::Fchmodat, &[0, 0, 0o755])), notify);
            // Without a supervisor, nothing changes for them.
            assert_eq!(run(&plain, &call(Sys::Openat, &[0, 0, wronly])), ALLOW);
            assert_eq!(run(&plain, &call(Sys::Fchmodat, &[0, 0, suid])), EPERM);
        }
    }

    /// The verdict of the rule table read as data ([`Table`]), as the program's return value.
    fn expected(table: &Table, call: &Call) -> u32 {
        match table.verdict(call.nr, &call.args) {
            Verdict::Allow => ALLOW,
            Verdict::Errno(errno) => SECCOMP_RET_ERRNO | errno as u32,
            Verdict::Notify => SECCOMP_RET_USER_NOTIF,
            Verdict::Kill => SECCOMP_RET_KILL_PROCESS,
        }
    }

    /// Argument values that decide the rules: every value and every bit of every mask the table
    /// mentions, each one off, and some ordinary values, high bits set or not.
    fn probe_values(table: &[(Sys, Deny)]) -> Vec<u64> {
        let mut values: Vec<u64> = vec![0, 1, 2, 3, 0x42, 0o755, 1 << 32, u64::MAX];
        let mut mention = |v: u32| {
            values.extend([u64::from(v), u64::from(v ^ 1), (1 << 32) | u64::from(v)]);
        };
        let checks = table.iter().flat_map(|(_, deny)| match deny {
            Deny::When(checks) => checks.clone(),
            Deny::Checked(checks) => checks.iter().map(|(c, _)| *c).collect(),
            Deny::Always | Deny::Reported => Vec::new(),
        });
        for check in checks {
            match check {
                ArgCheck::Equals { value, .. } | ArgCheck::NotEquals { value, .. } => {
                    mention(value)
                }
                ArgCheck::AnyBit { mask, .. } => {
                    (0..32)
                        .filter(|b| mask & (1 << b) != 0)
                        .for_each(|b| mention(1 << b));
                }
                ArgCheck::MaskedEquals { mask, value, .. }
                | ArgCheck::MaskedNotEquals { mask, value, .. } => {
                    mention(value);
                    mention(value | !mask);
                }
                ArgCheck::NotIn { values, .. } => values.into_iter().for_each(&mut mention),
                ArgCheck::NonZero { .. } | ArgCheck::Any => {}
            }
        }
        values.extend([
            u64::from(OPEN_WRITE_FLAGS),
            u64::from(libc::S_ISUID) | 0o755,
        ]);
        values.sort_unstable();
        values.dedup();
        values
    }

    /// Every assembled program — both architectures, every socket switch, with and without a
    /// supervisor — gives exactly the verdict of its rule table on every probe: every number the
    /// table mentions and others, each argument slot set to each deciding value. Exact, so a
    /// deny that became a notify (or the reverse), or a check emitted in the wrong order, fails.
    #[test]
    fn every_program_gives_exactly_its_tables_verdict() {
        for arch in ARCHES {
            for network in [false, true] {
                for unix in [false, true] {
                    for (tcp_ports, listen) in [(false, false), (true, false), (false, true)] {
                        let sockets = Sockets {
                            network,
                            unix,
                            tcp_ports,
                            listen,
                        };
                        for reported in [false, true] {
                            let program = program_with(arch, sockets, reported);
                            let table = Table::new(arch, sockets, reported);
                            let values = probe_values(&rules(sockets));
                            let mut numbers: Vec<i64> = Sys::ALL
                                .iter()
                                .map(|s| s.number(arch))
                                .filter(|n| *n != ABSENT)
                                .collect();
                            numbers.extend([0, 1, 3, 39, 59, 60, 231, 500, 0x4000_0027]);
                            for nr in numbers {
                                let mut probes = vec![[0u64; 6]];
                                for slot in 0..6 {
                                    for value in &values {
                                        let mut args = [0u64; 6];
                                        args[slot] = *value;
                                        probes.push(args);
                                    }
                                }
                                for args in probes {
                                    let call = Call::raw(arch, nr, &args);
                                    assert_eq!(
                                        run(&program, &call),
                                        expected(&table, &call),
                                        "{arch:?} {sockets:?} reported={reported} nr={nr} \
                                         {args:x?}"
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// `#define __NR_<name> <number>` (and asm-generic's `__NR3264_<name>`) lines of a header.
    fn header_numbers(path: &str) -> BTreeMap<String, i64> {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
            panic!("{path}: {e} (the kernel's headers: apt-get install linux-libc-dev)")
        });
        text.lines()
            .filter_map(|line| {
                let rest = line.strip_prefix("#define __NR")?;
                let rest = rest
                    .strip_prefix('_')
                    .or_else(|| rest.strip_prefix("3264_"))?;
                let (name, number) = rest.split_once(char::is_whitespace)?;
                Some((name.to_owned(), number.trim().parse().ok()?))
            })
            .collect()
    }

    /// Every number of the table, on both architectures, is the kernel's: x86_64's from its
    /// `unistd_64.h`, aarch64's from `asm-generic/unistd.h` (which aarch64 uses), both from the
    /// kernel's headers rather than from this table. A call newer than the installed headers must
    /// be in the range every architecture shares since Linux 5.1 (424 on), with the same number
    /// on both.
    #[test]
    fn every_number_matches_the_kernel_headers() {
        let x86_64 = header_numbers("/usr/include/x86_64-linux-gnu/asm/unistd_64.h");
        let generic = header_numbers("/usr/include/asm-generic/unistd.h");
        let mut newer = Vec::new();
        for sys in Sys::ALL {
            let (ours_x86, ours_arm) = sys.numbers();
            for (header, ours, arch) in [
                (&x86_64, ours_x86, "x86_64"),
                (&generic, ours_arm, "aarch64"),
            ] {
                match header.get(sys.name()) {
                    Some(theirs) => assert_eq!(ours, *theirs, "{sys:?} on {arch}"),
                    None if ours == ABSENT => {}
                    None => newer.push((*sys, arch)),
                }
            }
            if ours_arm == ABSENT {
                assert!(
                    !generic.contains_key(sys.name()),
                    "{sys:?} exists on aarch64"
                );
            }
        }
        for (sys, arch) in newer {
            let (x, a) = sys.numbers();
            assert!(
                x >= 424 && x == a,
                "{sys:?} on {arch}: not in the headers, {x} / {a}"
            );
        }
    }

    #[test]
    fn other_processes_are_out_of_reach() {
        for arch in ARCHES {
            for sys in [
                Sys::Prlimit64,
                Sys::SchedSetaffinity,
                Sys::SchedSetscheduler,
                Sys::SchedSetparam,
                Sys::SchedSetattr,
                Sys::MigratePages,
                Sys::MovePages,
            ] {
                assert_eq!(verdict(arch, true, sys, &[0, 1]), ALLOW, "{sys:?} self");
                assert_eq!(verdict(arch, true, sys, &[4242, 1]), EPERM, "{sys:?} other");
            }
            assert_eq!(verdict(arch, true, Sys::Setpriority, &[0, 0, 10]), ALLOW);
            assert_eq!(verdict(arch, true, Sys::Setpriority, &[0, 77, 10]), EPERM);
            assert_eq!(verdict(arch, true, Sys::Setpriority, &[2, 0, 10]), EPERM);
            assert_eq!(verdict(arch, true, Sys::IoprioSet, &[1, 0, 4]), ALLOW);
            assert_eq!(verdict(arch, true, Sys::IoprioSet, &[1, 9, 4]), EPERM);
            assert_eq!(verdict(arch, true, Sys::IoprioSet, &[3, 0, 4]), EPERM);
            for sys in [
                Sys::Userfaultfd,
                Sys::PidfdGetfd,
                Sys::ProcessMadvise,
                Sys::Syslog,
            ] {
                assert_eq!(verdict(arch, true, sys, &[]), EPERM, "{sys:?}");
            }
        }
    }

    #[test]
    fn set_id_bits_cannot_be_set() {
        let suid = u64::from(libc::S_ISUID);
        let sgid = u64::from(libc::S_ISGID);
        for arch in ARCHES {
            assert_eq!(verdict(arch, true, Sys::Fchmod, &[3, 0o755]), ALLOW);
            assert_eq!(verdict(arch, true, Sys::Fchmod, &[3, 0o755 | suid]), EPERM);
            assert_eq!(
                verdict(arch, true, Sys::Fchmodat, &[3, 0, 0o644 | sgid]),
                EPERM
            );
            assert_eq!(verdict(arch, true, Sys::Fchmodat, &[3, 0, 0o644]), ALLOW);
            assert_eq!(
                verdict(arch, true, Sys::Fchmodat2, &[3, 0, 0o4755, 0]),
                EPERM
            );
        }
        assert_eq!(verdict(Arch::X86_64, true, Sys::Chmod, &[0, 0o4755]), EPERM);
        assert_eq!(verdict(Arch::X86_64, true, Sys::Chmod, &[0, 0o755]), ALLOW);
        // Created with the bits in its mode: open, openat, creat, mknod(at) (openat2's mode is in
        // memory the filter cannot read).
        let creat = libc::O_CREAT as u64 | libc::O_WRONLY as u64;
        for arch in ARCHES {
            assert_eq!(
                verdict(arch, true, Sys::Openat, &[3, 0, creat, 0o644]),
                ALLOW
            );
            assert_eq!(
                verdict(arch, true, Sys::Openat, &[3, 0, creat, 0o755 | suid]),
                EPERM
            );
            assert_eq!(verdict(arch, true, Sys::Mknodat, &[3, 0, 0o2755, 0]), EPERM);
        }
        assert_eq!(
            verdict(Arch::X86_64, true, Sys::Open, &[0, creat, 0o4755]),
            EPERM
        );
        assert_eq!(
            verdict(Arch::X86_64, true, Sys::Open, &[0, creat, 0o644]),
            ALLOW
        );
        assert_eq!(verdict(Arch::X86_64, true, Sys::Creat, &[0, 0o6755]), EPERM);
    }

    #[test]
    fn reaching_out_is_denied_without_network_only() {
        for arch in ARCHES {
            for sys in [Sys::Bind, Sys::Listen, Sys::Accept4, Sys::Sendmmsg] {
                assert_eq!(verdict(arch, false, sys, &[3]), EPERM, "{sys:?}");
                assert_eq!(verdict(arch, true, sys, &[3]), ALLOW, "{sys:?}");
            }
            // A server's address-reuse option and a client's no-delay and keep-alive are set,
            // so that its `bind` or `connect` is reached (and reported); every other option, and
            // every other level, stays refused.
            let sol_socket = libc::SOL_SOCKET as u64;
            let tcp = libc::IPPROTO_TCP as u64;
            for (level, option, expected) in [
                (sol_socket, libc::SO_REUSEADDR as u64, ALLOW),
                (sol_socket, libc::SO_REUSEPORT as u64, ALLOW),
                (sol_socket, libc::SO_KEEPALIVE as u64, ALLOW),
                (tcp, libc::TCP_NODELAY as u64, ALLOW),
                (tcp, libc::TCP_KEEPIDLE as u64, ALLOW),
                (tcp, libc::TCP_KEEPINTVL as u64, ALLOW),
                (tcp, libc::TCP_KEEPCNT as u64, ALLOW),
                (tcp, 0, ALLOW),
                (tcp, 7, ALLOW),
                (sol_socket, 8, EPERM),
                (sol_socket, 10, EPERM),
                (sol_socket, 16, EPERM),
                (tcp, 0x1_0000_0004, ALLOW),
                (tcp, 0x104, EPERM),
                (sol_socket, libc::SO_BINDTODEVICE as u64, EPERM),
                (sol_socket, libc::SO_MARK as u64, EPERM),
                (sol_socket, libc::SO_RCVBUF as u64, EPERM),
                (tcp, libc::TCP_FASTOPEN_CONNECT as u64, EPERM),
                (tcp, libc::TCP_FASTOPEN as u64, EPERM),
                (tcp, libc::TCP_ULP as u64, EPERM),
                (tcp, libc::TCP_REPAIR as u64, EPERM),
                (libc::IPPROTO_IP as u64, libc::TCP_NODELAY as u64, EPERM),
                (libc::IPPROTO_IPV6 as u64, libc::SO_REUSEADDR as u64, EPERM),
            ] {
                let args = [3, level, option, 0, 4];
                assert_eq!(verdict(arch, false, Sys::Setsockopt, &args), expected);
                assert_eq!(verdict(arch, true, Sys::Setsockopt, &args), ALLOW);
            }
            // send() on a connected socket is fine; an explicit destination is not.
            assert_eq!(
                verdict(arch, false, Sys::Sendto, &[3, 0, 1, 0, 0, 0]),
                ALLOW
            );
            for address in [0x7fff_0000, 1 << 40] {
                assert_eq!(
                    verdict(arch, false, Sys::Sendto, &[3, 0, 1, 0, address, 16]),
                    EPERM
                );
            }
        }
    }

    /// A port grant: a TCP client works (options, its peer, shutdown); it cannot listen, make UDP
    /// sockets, or connect from `sendto`; `connect` goes to the supervisor when there is one and
    /// to Landlock alone otherwise.
    #[test]
    fn a_port_grant_is_a_tcp_client() {
        let ports = Sockets {
            tcp_ports: true,
            ..Sockets::default()
        };
        let inet = libc::AF_INET as u64;
        for arch in ARCHES {
            let plain = program(arch, ports);
            let supervised = program_with(arch, ports, true);
            let call = |sys, args: &[u64]| Call::new(arch, sys, args);
            for sys in [
                Sys::Setsockopt,
                Sys::Getsockopt,
                Sys::Getpeername,
                Sys::Shutdown,
            ] {
                assert_eq!(run(&plain, &call(sys, &[3])), ALLOW, "{sys:?}");
            }
            for sys in [Sys::Bind, Sys::Listen, Sys::Accept4, Sys::Sendmmsg] {
                assert_eq!(run(&plain, &call(sys, &[3])), EPERM, "{sys:?}");
            }
            let tcp = call(Sys::Socket, &[inet, libc::SOCK_STREAM as u64]);
            assert_eq!(run(&plain, &tcp), ALLOW);
            let udp = call(Sys::Socket, &[inet, libc::SOCK_DGRAM as u64]);
            assert_eq!(run(&plain, &udp), EPERM);
            assert_eq!(run(&plain, &call(Sys::Connect, &[3, 0, 16])), ALLOW);
            assert_eq!(
                run(&supervised, &call(Sys::Connect, &[3, 0, 16])),
                SECCOMP_RET_USER_NOTIF
            );
            let fast_open = libc::MSG_FASTOPEN as u64;
            assert_eq!(
                run(&plain, &call(Sys::Sendto, &[3, 0, 1, fast_open, 0, 0])),
                EPERM
            );
        }
    }

    /// A listening grant: `bind` and `listen` go to the supervisor, which makes them itself, and
    /// are refused without one; `accept` is allowed; outgoing connections stay the supervisor's
    /// (and Landlock's) to refuse; a stream socket of another protocol than TCP is refused in
    /// every table without the network.
    #[test]
    fn a_listening_grant_binds_only_through_the_supervisor() {
        let listening = Sockets {
            listen: true,
            ..Sockets::default()
        };
        let inet = libc::AF_INET as u64;
        let stream = libc::SOCK_STREAM as u64;
        for arch in ARCHES {
            let plain = program(arch, listening);
            let supervised = program_with(arch, listening, true);
            let call = |sys, args: &[u64]| Call::new(arch, sys, args);
            for sys in [Sys::Bind, Sys::Listen] {
                assert_eq!(run(&plain, &call(sys, &[3, 0, 16])), EPERM, "{sys:?}");
                assert_eq!(
                    run(&supervised, &call(sys, &[3, 0, 16])),
                    SECCOMP_RET_USER_NOTIF,
                    "{sys:?}"
                );
            }
            for sys in [Sys::Accept, Sys::Accept4, Sys::Setsockopt, Sys::Getsockname] {
                assert_eq!(run(&plain, &call(sys, &[3])), ALLOW, "{sys:?}");
            }
            assert_eq!(
                run(&supervised, &call(Sys::Connect, &[3, 0, 16])),
                SECCOMP_RET_USER_NOTIF
            );
            assert_eq!(run(&plain, &call(Sys::Socket, &[inet, stream, 0])), ALLOW);
            let tcp = libc::IPPROTO_TCP as u64;
            assert_eq!(run(&plain, &call(Sys::Socket, &[inet, stream, tcp])), ALLOW);
            for sockets in [listening, lines(false)] {
                for protocol in [132, 262, (1 << 32) | 132] {
                    let other = call(Sys::Socket, &[inet, stream, protocol]);
                    assert_eq!(run(&program(arch, sockets), &other), EPERM, "{protocol}");
                }
            }
        }
    }

    #[test]
    fn recvfrom_stays_allowed() {
        for (arch, recvfrom) in [(Arch::X86_64, 45), (Arch::Aarch64, 207)] {
            let call = Call::raw(arch, recvfrom, &[3, 0, 1, 0, 0, 0]);
            assert_eq!(run(&program(arch, lines(false)), &call), ALLOW);
        }
    }

    #[test]
    fn always_denied_in_both_modes() {
        for arch in ARCHES {
            for network in [false, true] {
                for sys in [
                    Sys::Ptrace,
                    Sys::ProcessVmReadv,
                    Sys::ProcessVmWritev,
                    Sys::IoUringSetup,
                    Sys::IoUringEnter,
                    Sys::IoUringRegister,
                    Sys::Bpf,
                    Sys::PerfEventOpen,
                    Sys::Keyctl,
                    Sys::AddKey,
                    Sys::RequestKey,
                    Sys::Mount,
                    Sys::Umount2,
                    Sys::PivotRoot,
                    Sys::MoveMount,
                    Sys::OpenTree,
                    Sys::Setns,
                    Sys::KexecLoad,
                    Sys::KexecFileLoad,
                    Sys::InitModule,
                    Sys::FinitModule,
                    Sys::DeleteModule,
                    Sys::Reboot,
                    Sys::Swapon,
                    Sys::Swapoff,
                ] {
                    assert_eq!(verdict(arch, network, sys, &[]), EPERM, "{sys:?}");
                }
            }
        }
    }

    #[test]
    fn namespaces_cannot_be_created() {
        for arch in ARCHES {
            let sigchld = libc::SIGCHLD as u64;
            assert_eq!(verdict(arch, true, Sys::Clone, &[sigchld]), ALLOW);
            let thread = (libc::CLONE_VM | libc::CLONE_THREAD | libc::CLONE_SIGHAND) as u64;
            assert_eq!(verdict(arch, true, Sys::Clone, &[thread]), ALLOW);
            for flag in NAMESPACE_FLAGS.map(u64::from) {
                assert_eq!(verdict(arch, true, Sys::Clone, &[flag | sigchld]), EPERM);
                assert_eq!(verdict(arch, true, Sys::Unshare, &[flag]), EPERM);
            }
            assert_eq!(
                verdict(arch, true, Sys::Unshare, &[libc::CLONE_FILES as u64]),
                ALLOW
            );
            assert_eq!(verdict(arch, true, Sys::Clone3, &[]), ENOSYS);
            // And in both variants, whatever the arguments: `openat2`'s mode is out of reach.
            for reported in [false, true] {
                let program = program_with(arch, lines(false), reported);
                let call = Call::new(arch, Sys::Openat2, &[0, 0, 0, 24]);
                assert_eq!(run(&program, &call), ENOSYS, "{arch:?} reported={reported}");
            }
        }
    }

    #[test]
    fn terminal_injection_ioctls() {
        for arch in ARCHES {
            let (sti, linux) = (u64::from(TIOCSTI), u64::from(TIOCLINUX));
            assert_eq!(verdict(arch, true, Sys::Ioctl, &[0, sti]), EPERM);
            assert_eq!(verdict(arch, true, Sys::Ioctl, &[0, linux]), EPERM);
            assert_eq!(
                verdict(arch, true, Sys::Ioctl, &[0, (1 << 32) | sti]),
                EPERM
            );
            assert_eq!(verdict(arch, true, Sys::Ioctl, &[0, 0x5401]), ALLOW); // TCGETS
        }
    }

    #[test]
    fn x32_range_is_refused_on_x86_64() {
        let x32_socket = i64::from(X32_SYSCALL_BIT | 41);
        let call = Call::raw(Arch::X86_64, x32_socket, &[libc::AF_INET as u64]);
        assert_eq!(run(&program(Arch::X86_64, lines(true)), &call), ENOSYS);
    }

    #[test]
    fn foreign_arch_is_killed_not_allowed() {
        let call = Call::new(Arch::Aarch64, Sys::Socket, &[libc::AF_INET as u64]);
        assert_eq!(
            run(&program(Arch::X86_64, lines(false)), &call),
            SECCOMP_RET_KILL_PROCESS
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn numbers_match_libc_on_x86_64() {
        native_numbers_match(Arch::X86_64);
    }

    #[cfg(target_arch = "aarch64")]
    #[test]
    fn numbers_match_libc_on_aarch64() {
        native_numbers_match(Arch::Aarch64);
    }

    #[allow(dead_code)]
    fn native_numbers_match(arch: Arch) {
        let pairs: [(Sys, i64); 16] = [
            (Sys::Prlimit64, libc::SYS_prlimit64),
            (Sys::IoprioSet, libc::SYS_ioprio_set),
            (Sys::Userfaultfd, libc::SYS_userfaultfd),
            (Sys::Fchmodat, libc::SYS_fchmodat),
            (Sys::Socket, libc::SYS_socket),
            (Sys::Connect, libc::SYS_connect),
            (Sys::Sendto, libc::SYS_sendto),
            (Sys::Ptrace, libc::SYS_ptrace),
            (Sys::IoUringSetup, libc::SYS_io_uring_setup),
            (Sys::Mount, libc::SYS_mount),
            (Sys::Unshare, libc::SYS_unshare),
            (Sys::Clone, libc::SYS_clone),
            (Sys::Clone3, libc::SYS_clone3),
            (Sys::Ioctl, libc::SYS_ioctl),
            (Sys::Keyctl, libc::SYS_keyctl),
            (Sys::MountSetattr, libc::SYS_mount_setattr),
        ];
        for (sys, nr) in pairs {
            assert_eq!(sys.number(arch), nr, "{sys:?}");
        }
    }
}
