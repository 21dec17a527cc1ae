//! The seccomp layer: syscalls no sandboxed command needs, refused with `EPERM`.
//!
//! The rules are data ([`rules`]) compiled by seccompiler into one BPF filter per architecture,
//! plus a tiny hand-written guard filter for the two cases that must answer `ENOSYS` instead
//! (`clone3`, whose flags live in memory seccomp cannot read, and the x32 syscall range on
//! x86_64). A denied call returns an error; nothing is killed, except a call made through a
//! *foreign* syscall ABI (e.g. `int 0x80` on x86_64), which seccompiler's architecture check kills
//! because no rule of ours would apply to it.
//!
//! Syscall numbers are written out per architecture (checked against `libc` for the native one
//! in the tests) so the aarch64 filter is built and tested on x86_64 too.

use crate::error::{Code, Error, Result};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};
use std::collections::BTreeMap;

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

    fn target(self) -> TargetArch {
        match self {
            Arch::X86_64 => TargetArch::x86_64,
            Arch::Aarch64 => TargetArch::aarch64,
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

/// The syscalls the filters mention, with their numbers on x86_64 and aarch64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Sys {
    Socket,
    Socketpair,
    Connect,
    Accept,
    Accept4,
    Bind,
    Listen,
    Getpeername,
    Getsockname,
    Shutdown,
    Sendto,
    Sendmmsg,
    Recvmmsg,
    Getsockopt,
    Setsockopt,
    Ptrace,
    ProcessVmReadv,
    ProcessVmWritev,
    IoUringSetup,
    IoUringEnter,
    IoUringRegister,
    Bpf,
    PerfEventOpen,
    Keyctl,
    AddKey,
    RequestKey,
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
    Unshare,
    Setns,
    Clone,
    Clone3,
    KexecLoad,
    KexecFileLoad,
    InitModule,
    FinitModule,
    DeleteModule,
    Reboot,
    Swapon,
    Swapoff,
    Ioctl,
}

impl Sys {
    /// `(x86_64, aarch64)` numbers, from the kernel's syscall tables.
    fn numbers(self) -> (i64, i64) {
        match self {
            Sys::Socket => (41, 198),
            Sys::Socketpair => (53, 199),
            Sys::Connect => (42, 203),
            Sys::Accept => (43, 202),
            Sys::Accept4 => (288, 242),
            Sys::Bind => (49, 200),
            Sys::Listen => (50, 201),
            Sys::Getpeername => (52, 205),
            Sys::Getsockname => (51, 204),
            Sys::Shutdown => (48, 210),
            Sys::Sendto => (44, 206),
            Sys::Sendmmsg => (307, 269),
            Sys::Recvmmsg => (299, 243),
            Sys::Getsockopt => (55, 209),
            Sys::Setsockopt => (54, 208),
            Sys::Ptrace => (101, 117),
            Sys::ProcessVmReadv => (310, 270),
            Sys::ProcessVmWritev => (311, 271),
            Sys::IoUringSetup => (425, 425),
            Sys::IoUringEnter => (426, 426),
            Sys::IoUringRegister => (427, 427),
            Sys::Bpf => (321, 280),
            Sys::PerfEventOpen => (298, 241),
            Sys::Keyctl => (250, 219),
            Sys::AddKey => (248, 217),
            Sys::RequestKey => (249, 218),
            Sys::Mount => (165, 40),
            Sys::Umount2 => (166, 39),
            Sys::PivotRoot => (155, 41),
            Sys::MoveMount => (429, 429),
            Sys::Fsmount => (432, 432),
            Sys::Fsopen => (430, 430),
            Sys::Fsconfig => (431, 431),
            Sys::Fspick => (433, 433),
            Sys::OpenTree => (428, 428),
            Sys::OpenTreeAttr => (467, 467),
            Sys::MountSetattr => (442, 442),
            Sys::Unshare => (272, 97),
            Sys::Setns => (308, 268),
            Sys::Clone => (56, 220),
            Sys::Clone3 => (435, 435),
            Sys::KexecLoad => (246, 104),
            Sys::KexecFileLoad => (320, 294),
            Sys::InitModule => (175, 105),
            Sys::FinitModule => (313, 273),
            Sys::DeleteModule => (176, 106),
            Sys::Reboot => (169, 142),
            Sys::Swapon => (167, 224),
            Sys::Swapoff => (168, 225),
            Sys::Ioctl => (16, 29),
        }
    }

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
}

/// One condition on one syscall argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgCheck {
    pub arg: u8,
    /// Compare only the low 32 bits. Required for `int` arguments (socket domain, ioctl request):
    /// the kernel ignores the high bits, so a 64-bit comparison could be dodged by setting them.
    pub dword: bool,
    pub test: ArgTest,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgTest {
    Equals(u64),
    NotEquals(u64),
    /// Any of these bits set.
    HasBits(u64),
}

/// The namespace flags of `clone`/`unshare` (linux/sched.h): creating any namespace is refused.
const NAMESPACE_FLAGS: [u64; 8] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    0x80, // CLONE_NEWTIME (not in every libc)
];

/// `TIOCSTI` (fake terminal input) and `TIOCLINUX` (console selection/paste) on every arch we
/// support (asm-generic/ioctls.h).
const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;

/// The rule table. `network == false` adds the socket rules.
pub fn rules(network: bool) -> Vec<(Sys, Deny)> {
    let mut table = always_denied();
    if !network {
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
    let new_namespace = Deny::When(
        NAMESPACE_FLAGS
            .iter()
            .map(|&flag| ArgCheck {
                arg: 0,
                dword: false,
                test: ArgTest::HasBits(flag),
            })
            .collect(),
    );
    table.push((Unshare, new_namespace.clone()));
    table.push((Clone, new_namespace));
    let fake_input = [TIOCSTI, TIOCLINUX].map(|request| ArgCheck {
        arg: 1,
        dword: true,
        test: ArgTest::Equals(request),
    });
    table.push((Ioctl, Deny::When(fake_input.to_vec())));
    table
}

fn network_denied() -> Vec<(Sys, Deny)> {
    use Sys::*;
    let not_unix = Deny::When(vec![ArgCheck {
        arg: 0,
        dword: true,
        test: ArgTest::NotEquals(libc::AF_UNIX as u64),
    }]);
    // The calls that reach out or accept from outside (after Codex's list). `recvfrom` stays
    // allowed so programs talking to their own children over a socketpair keep working.
    let reaching_out = [
        Connect,
        Accept,
        Accept4,
        Bind,
        Listen,
        Getpeername,
        Getsockname,
        Shutdown,
        Sendmmsg,
        Recvmmsg,
        Getsockopt,
        Setsockopt,
    ];
    let mut table = vec![(Socket, not_unix.clone()), (Socketpair, not_unix)];
    table.extend(reaching_out.into_iter().map(|s| (s, Deny::Always)));
    // `send()` is `sendto(fd, buf, len, flags, NULL, 0)`: like `write()` on an already connected
    // socket. Only an explicit destination address (argument 4) reaches somewhere new.
    table.push((
        Sendto,
        Deny::When(vec![ArgCheck {
            arg: 4,
            dword: false,
            test: ArgTest::NotEquals(0),
        }]),
    ));
    table
}

/// Compiles the rule table into seccompiler's filter for `arch`: allow by default, `EPERM` on a
/// match.
pub fn compile(arch: Arch, network: bool) -> Result<BpfProgram> {
    let mut map: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for (sys, deny) in rules(network) {
        let chain = match deny {
            // seccompiler: an empty chain matches every call.
            Deny::Always => Vec::new(),
            Deny::When(checks) => checks.iter().map(to_rule).collect::<Result<_>>()?,
        };
        map.insert(sys.number(arch), chain);
    }
    let filter = SeccompFilter::new(
        map,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch.target(),
    )
    .map_err(seccomp_error)?;
    BpfProgram::try_from(filter).map_err(seccomp_error)
}

fn to_rule(check: &ArgCheck) -> Result<SeccompRule> {
    let len = if check.dword {
        SeccompCmpArgLen::Dword
    } else {
        SeccompCmpArgLen::Qword
    };
    let (op, value) = match check.test {
        ArgTest::Equals(v) => (SeccompCmpOp::Eq, v),
        ArgTest::NotEquals(v) => (SeccompCmpOp::Ne, v),
        ArgTest::HasBits(bits) => (SeccompCmpOp::MaskedEq(bits), bits),
    };
    let condition = SeccompCondition::new(check.arg, len, op, value).map_err(seccomp_error)?;
    SeccompRule::new(vec![condition]).map_err(seccomp_error)
}

// Classic BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
/// Offsets in `struct seccomp_data`.
const DATA_NR: u32 = 0;
const DATA_ARCH: u32 = 4;
/// x86_64 syscalls with this bit set use the x32 ABI, under the same audit arch.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

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

/// The guard filter: `clone3` and (on x86_64) x32 syscalls answer `ENOSYS`, so libc falls back to
/// `clone`, whose flags the main filter can check. Other architectures' calls pass through here
/// and are killed by the main filter's architecture check.
pub fn guard(arch: Arch) -> BpfProgram {
    let enosys = SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    let clone3 = Sys::Clone3.number(arch) as u32;
    let x32_floor = match arch {
        Arch::X86_64 => X32_SYSCALL_BIT,
        // No such range: a floor no syscall number reaches.
        Arch::Aarch64 => u32::MAX,
    };
    vec![
        stmt(BPF_LD_W_ABS, DATA_ARCH),
        jump(BPF_JEQ_K, arch.audit_arch(), 1, 0),
        stmt(BPF_RET_K, SECCOMP_RET_ALLOW),
        stmt(BPF_LD_W_ABS, DATA_NR),
        jump(BPF_JEQ_K, clone3, 2, 0),
        jump(BPF_JGE_K, x32_floor, 1, 0),
        stmt(BPF_RET_K, SECCOMP_RET_ALLOW),
        stmt(BPF_RET_K, enosys),
    ]
}

/// Installs both filters on the calling (single) thread. `no_new_privs` must already be set.
pub fn install(network: bool) -> Result<()> {
    let arch = Arch::native().ok_or_else(|| {
        Error::new(
            Code::SandboxUnavailable,
            format!(
                "no seccomp filter for this architecture ({}); only x86_64 and aarch64 are supported",
                std::env::consts::ARCH
            ),
        )
    })?;
    let main = compile(arch, network)?;
    seccompiler::apply_filter(&guard(arch)).map_err(seccomp_error)?;
    seccompiler::apply_filter(&main).map_err(seccomp_error)
}

/// Whether this kernel accepts seccomp filters (`CONFIG_SECCOMP_FILTER`).
pub fn available() -> bool {
    // SAFETY: prctl(PR_GET_SECCOMP) only reads the calling thread's seccomp mode.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    // A filter-capable kernel also exposes the actions list; mode -1 means no seccomp at all.
    mode >= 0 && std::path::Path::new("/proc/sys/kernel/seccomp/actions_avail").exists()
}

fn seccomp_error(e: impl std::fmt::Display) -> Error {
    Error::new(Code::SandboxUnavailable, format!("seccomp: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `struct seccomp_data` a filter sees.
    struct Call {
        arch: Arch,
        nr: i64,
        args: [u64; 6],
    }

    impl Call {
        fn new(arch: Arch, sys: Sys, args: &[u64]) -> Call {
            let mut all = [0u64; 6];
            all[..args.len()].copy_from_slice(args);
            Call {
                arch,
                nr: sys.number(arch),
                args: all,
            }
        }

        /// The 32-bit word at `offset` of `struct seccomp_data` (little endian).
        fn word(&self, offset: u32) -> u32 {
            match offset {
                0 => self.nr as u32,
                4 => self.arch.audit_arch(),
                // instruction_pointer: 8..16; args start at 16.
                o if o >= 16 => {
                    let index = ((o - 16) / 8) as usize;
                    let arg = self.args[index];
                    if (o - 16) % 8 == 0 {
                        arg as u32
                    } else {
                        (arg >> 32) as u32
                    }
                }
                _ => 0,
            }
        }
    }

    /// A classic-BPF interpreter for the instructions seccompiler and [`guard`] emit.
    fn run(program: &[sock_filter], call: &Call) -> u32 {
        let (mut acc, mut pc) = (0u32, 0usize);
        loop {
            let ins = &program[pc];
            let class = ins.code & 0x07;
            match class {
                0x00 => acc = call.word(ins.k), // LD W ABS
                0x04 => match ins.code & 0xf0 {
                    0x50 => acc &= ins.k, // ALU AND K
                    op => panic!("alu op {op:#x}"),
                },
                0x05 => {
                    let taken = match ins.code & 0xf0 {
                        0x00 => {
                            pc += ins.k as usize + 1;
                            continue;
                        }
                        0x10 => acc == ins.k,
                        0x20 => acc > ins.k,
                        0x30 => acc >= ins.k,
                        op => panic!("jmp op {op:#x}"),
                    };
                    pc += 1 + if taken { ins.jt } else { ins.jf } as usize;
                    continue;
                }
                0x06 => return ins.k,
                _ => panic!("class {class:#x}"),
            }
            pc += 1;
        }
    }

    /// The combined verdict of both filters, as the kernel computes it (lowest action wins).
    fn verdict(arch: Arch, network: bool, sys: Sys, args: &[u64]) -> u32 {
        let call = Call::new(arch, sys, args);
        let main = run(&compile(arch, network).unwrap(), &call);
        let guard = run(&guard(arch), &call);
        action_min(main, guard)
    }

    fn action_min(a: u32, b: u32) -> u32 {
        // Higher-priority actions have lower values in the top 16 bits (as signed).
        let prio = |v: u32| (v & 0xffff_0000) as i32;
        if prio(a) <= prio(b) { a } else { b }
    }

    const EPERM: u32 = SECCOMP_RET_ERRNO | libc::EPERM as u32;
    const ENOSYS: u32 = SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
    const ALLOW: u32 = SECCOMP_RET_ALLOW;
    const ARCHES: [Arch; 2] = [Arch::X86_64, Arch::Aarch64];

    #[test]
    fn socket_families_without_network() {
        for arch in ARCHES {
            let unix = libc::AF_UNIX as u64;
            let inet = libc::AF_INET as u64;
            assert_eq!(verdict(arch, false, Sys::Socket, &[unix, 1]), ALLOW);
            assert_eq!(verdict(arch, false, Sys::Socketpair, &[unix, 1]), ALLOW);
            for family in [
                libc::AF_INET,
                libc::AF_INET6,
                libc::AF_PACKET,
                libc::AF_NETLINK,
            ] {
                let family = family as u64;
                assert_eq!(verdict(arch, false, Sys::Socket, &[family, 1]), EPERM);
            }
            // High bits are ignored by the kernel, so they must not dodge the check.
            let dodge = (1u64 << 32) | libc::AF_UNIX as u64;
            assert_eq!(verdict(arch, false, Sys::Socket, &[dodge, 1]), ALLOW);
            let dodge_inet = (1u64 << 32) | inet;
            assert_eq!(verdict(arch, false, Sys::Socket, &[dodge_inet, 1]), EPERM);
            assert_eq!(verdict(arch, false, Sys::Socketpair, &[inet, 1]), EPERM);
            assert_eq!(verdict(arch, true, Sys::Socket, &[inet, 1]), ALLOW);
        }
    }

    #[test]
    fn reaching_out_is_denied_without_network_only() {
        for arch in ARCHES {
            for sys in [
                Sys::Connect,
                Sys::Bind,
                Sys::Listen,
                Sys::Accept4,
                Sys::Sendmmsg,
            ] {
                assert_eq!(verdict(arch, false, sys, &[3]), EPERM, "{sys:?}");
                assert_eq!(verdict(arch, true, sys, &[3]), ALLOW, "{sys:?}");
            }
            // send() on a connected socket is fine; an explicit destination is not.
            assert_eq!(
                verdict(arch, false, Sys::Sendto, &[3, 0, 1, 0, 0, 0]),
                ALLOW
            );
            assert_eq!(
                verdict(arch, false, Sys::Sendto, &[3, 0, 1, 0, 0x7fff_0000, 16]),
                EPERM
            );
        }
    }

    #[test]
    fn recvfrom_stays_allowed() {
        let recvfrom = |arch| match arch {
            Arch::X86_64 => 45,
            Arch::Aarch64 => 207,
        };
        for arch in ARCHES {
            let call = Call {
                arch,
                nr: recvfrom(arch),
                args: [3, 0, 1, 0, 0, 0],
            };
            assert_eq!(run(&compile(arch, false).unwrap(), &call), ALLOW);
        }
    }

    #[test]
    fn always_denied_in_both_modes() {
        for arch in ARCHES {
            for network in [false, true] {
                for sys in [
                    Sys::Ptrace,
                    Sys::ProcessVmReadv,
                    Sys::IoUringSetup,
                    Sys::IoUringEnter,
                    Sys::IoUringRegister,
                    Sys::Bpf,
                    Sys::PerfEventOpen,
                    Sys::Keyctl,
                    Sys::Mount,
                    Sys::MoveMount,
                    Sys::Setns,
                    Sys::KexecLoad,
                    Sys::FinitModule,
                    Sys::Reboot,
                    Sys::Swapon,
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
            for flag in NAMESPACE_FLAGS {
                assert_eq!(verdict(arch, true, Sys::Clone, &[flag | sigchld]), EPERM);
                assert_eq!(verdict(arch, true, Sys::Unshare, &[flag]), EPERM);
            }
            assert_eq!(
                verdict(arch, true, Sys::Unshare, &[libc::CLONE_FILES as u64]),
                ALLOW
            );
            assert_eq!(verdict(arch, true, Sys::Clone3, &[]), ENOSYS);
        }
    }

    #[test]
    fn terminal_injection_ioctls() {
        for arch in ARCHES {
            assert_eq!(verdict(arch, true, Sys::Ioctl, &[0, TIOCSTI]), EPERM);
            assert_eq!(verdict(arch, true, Sys::Ioctl, &[0, TIOCLINUX]), EPERM);
            assert_eq!(
                verdict(arch, true, Sys::Ioctl, &[0, (1 << 32) | TIOCSTI]),
                EPERM
            );
            assert_eq!(verdict(arch, true, Sys::Ioctl, &[0, 0x5401]), ALLOW); // TCGETS
        }
    }

    #[test]
    fn x32_range_is_refused_on_x86_64() {
        let call = Call {
            arch: Arch::X86_64,
            nr: (X32_SYSCALL_BIT | 41) as i64,
            args: [libc::AF_INET as u64, 0, 0, 0, 0, 0],
        };
        assert_eq!(run(&guard(Arch::X86_64), &call), ENOSYS);
    }

    #[test]
    fn foreign_arch_is_killed_not_allowed() {
        let call = Call::new(Arch::Aarch64, Sys::Socket, &[libc::AF_INET as u64]);
        // The x86_64 filter sees an aarch64 audit arch: seccompiler kills the process.
        let verdict = run(&compile(Arch::X86_64, false).unwrap(), &call);
        assert_eq!(verdict, 0x8000_0000); // SECCOMP_RET_KILL_PROCESS
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
        let pairs: [(Sys, i64); 12] = [
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
