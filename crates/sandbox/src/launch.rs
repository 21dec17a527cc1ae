//! Entering the sandbox, the parent's half: prepare everything, clone once, supervise.
//!
//! [`spawn`] does all the work that may allocate or fail in an ordinary way *before* the clone:
//! the fail-closed check of what the kernel offers, the plan of the mount tree, opening every path
//! it names once (no symlinks followed) and recording its identity, the Landlock ruleset (built on
//! those descriptors), the seccomp program, `argv`/`envp` as C strings, the checks of the standard
//! streams and the guard's snapshot. Then one `clone` into new mount and PID namespaces runs the
//! [`child`] code, which only executes that plan with async-signal-safe calls and `execve`s the
//! program: nothing is re-executed, no second binary starts in between.
//!
//! [`Running`] tells the launch's own failure (`SANDBOX_UNAVAILABLE`, `SANDBOX_EXEC_FAILED`, with
//! the step and the path) apart from the program's exit, and [`Running::wait`] returns the
//! program's status, whether it left processes running (they were killed with the line), and the
//! guard's violations.

use super::child::{self, ChildPlan, Exec, FileId, Shape, Step, Target, UserMap};
use super::guard::{Guard, Violation};
use super::landlock::{self, Grants};
use super::notify::{self, Denial};
use super::policy::{Policy, Protection, Spec};
use super::protected::{self, Layer, Plan};
use super::requirements::{self, Gap};
use super::{abi::DetectedAbi, raw, seccomp, surface, sys};
use crate::error::{Code, Error, Result};
use std::ffi::{CString, OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::OnceLock;

/// See [`shellgate_core::own_env`], where every one of shellgate's variables is listed with its trust.
pub use crate::own_env::SANDBOXED_ENV;

/// The private `/dev/shm`: read-only lines' only writable directory (their `TMPDIR`).
const SHM: &str = "/dev/shm";

/// What runs in the sandbox, and with what.
#[derive(Debug)]
pub struct Command {
    /// The program, absolute (see [`resolve_program`]).
    pub program: PathBuf,
    /// `argv[0]`.
    pub arg0: OsString,
    pub args: Vec<OsString>,
    /// The program's environment, exactly (the sandbox adds [`SANDBOXED_ENV`], and `TMPDIR` for
    /// read-only).
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
    /// Its standard streams: this process's own, or these descriptors.
    pub stdio: Option<[OwnedFd; 3]>,
    /// Descriptors passed explicitly besides the standard streams, as `(descriptor, number in
    /// the program)`, the number 3–9 (at most [`child::MAX_PASSED`]). Nothing else the caller
    /// holds open reaches the program.
    pub passed: Vec<(OwnedFd, RawFd)>,
    /// The process group the line runs in (the caller's, for a broker): a terminal's foreground
    /// job reads it and gets its Ctrl-C. `None`: this process's own.
    pub process_group: Option<libc::pid_t>,
    /// The programs after this one in a pipeline (at most [`child::MAX_STAGES`] − 1), as a
    /// shell's `a | b | c` starts them: each reads what the one before writes; the first reads
    /// the standard input, the last writes the standard output, and all share the standard
    /// error, the environment's other entries, the directory and the sandbox. None of them gets
    /// [`Command::passed`].
    pub pipeline: Vec<Stage>,
}

/// A later program of a pipeline ([`Command::pipeline`]).
#[derive(Debug)]
pub struct Stage {
    /// The program, absolute (see [`resolve_program`]).
    pub program: PathBuf,
    /// `argv[0]`.
    pub arg0: OsString,
    pub args: Vec<OsString>,
    /// Its environment, exactly (as [`Command::env`]).
    pub env: Vec<(OsString, OsString)>,
}

impl Command {
    /// `program args…` with this environment (the crate reads none of its own) and this
    /// process's standard streams.
    pub fn new(
        program: PathBuf,
        args: Vec<OsString>,
        cwd: PathBuf,
        env: Vec<(OsString, OsString)>,
    ) -> Command {
        Command {
            arg0: program.as_os_str().to_owned(),
            program,
            args,
            env,
            cwd,
            stdio: None,
            passed: Vec::new(),
            process_group: None,
            pipeline: Vec::new(),
        }
    }
}

/// Finds `name` the way `execvp` would: a name with a slash is taken as is; otherwise the first
/// executable regular file of that name in `$PATH`.
pub fn resolve_program(name: &OsStr, path_var: Option<&OsStr>) -> Result<PathBuf> {
    let not_found = || {
        Error::new(
            Code::SandboxExecFailed,
            format!("cannot start `{}`: no such program", name.to_string_lossy()),
        )
    };
    if name.as_bytes().contains(&b'/') {
        return std::path::absolute(name).map_err(|_| not_found());
    }
    let dirs = path_var.unwrap_or(OsStr::new("/usr/local/bin:/usr/bin:/bin"));
    std::env::split_paths(dirs)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable_file(candidate))
        .ok_or_else(not_found)
}

fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The signal dispositions this process was started with, recorded by
/// [`record_startup_signals`]: the program gets these, not the ones shellgate set for itself
/// (`wrap` ignores SIGINT; a shell waiting for a line does too).
static STARTUP_SIGNALS: OnceLock<Vec<(libc::c_int, bool)>> = OnceLock::new();

const INHERITED_SIGNALS: [libc::c_int; 8] = [
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGHUP,
    libc::SIGTERM,
    libc::SIGPIPE,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
];

/// Records the signal dispositions shellgate started with. Call first thing in `main`.
pub fn record_startup_signals() {
    let _ = STARTUP_SIGNALS.set(
        INHERITED_SIGNALS
            .iter()
            .map(|&s| (s, sys::is_ignored(s)))
            .collect(),
    );
}

/// The dispositions to start a program with: the caller's, as [`record_startup_signals`] saw them
/// (shellgate's `main` runs before any runtime of Rust's could change SIGPIPE's), else the
/// defaults (the library used without shellgate's `main`, as in the unit tests).
fn startup_signals() -> Vec<(libc::c_int, bool)> {
    STARTUP_SIGNALS
        .get()
        .cloned()
        .unwrap_or_else(|| INHERITED_SIGNALS.iter().map(|&s| (s, false)).collect())
}

/// How the namespaces are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Namespaces {
    /// New mount and PID namespaces (root with `CAP_SYS_ADMIN`).
    Own,
    /// The same inside a new user namespace that maps only the caller's uid and gid.
    OwnWithUser,
    /// Inside shellgate's own sandbox already: the outer one's mounts and PID namespace stay; this
    /// one adds its Landlock and seccomp layers (which can only narrow).
    Nested,
    /// A configuration dropped the mount-namespace layer explicitly.
    None,
}

/// A launched sandbox.
#[derive(Debug)]
pub struct Running {
    pid: libc::pid_t,
    setup: Option<std::fs::File>,
    status: std::fs::File,
    /// Held open for the init: when this process dies, the init sees it hang up.
    _lifeline: OwnedFd,
    steps: Vec<String>,
    /// The line's programs, in order (one but for a pipeline), for the launch's error.
    programs: Vec<PathBuf>,
    cwd: PathBuf,
    started: Option<Result<()>>,
    guard: Guard,
    /// The git surface before the line, when it could write one.
    surface: Option<surface::Watch>,
    reaped: bool,
    /// This process ends soon after the line (see [`Running::leave_init_at_exit`]).
    leave_init: bool,
    /// Our end of the socket the seccomp listener arrives on, until it has.
    supervisor: Option<OwnedFd>,
    /// The listener reported refusals come to, once received.
    listener: Option<OwnedFd>,
    /// Makes the line's opens for writing (see [`super::opener`]), with the line's ruleset.
    opener: super::opener::Opener,
    /// The line's proxy, when it is granted named hosts; it stops when the line is done.
    proxy: Option<super::proxy::Proxy>,
    denials: Vec<Denial>,
    /// Where writes are allowed: for the notes on observed calls.
    scope: notify::WriteScope,
    /// What the init reads in this process's memory; `None` once it has been reaped (or handed
    /// to the thread that reaps it).
    memory: Option<ChildMemory>,
}

/// What the sandbox's processes read in this process's memory, which they share (`CLONE_VM`):
/// the plan (and the strings and arrays it points to), the seccomp programs, the init's stack.
/// It must stay alive and unchanged until the init has been reaped: only then is nothing left
/// that could read it.
#[derive(Debug)]
struct ChildMemory {
    _plan: Box<ChildPlan>,
    _seccomp: (Option<seccompiler::BpfProgram>, seccompiler::BpfProgram),
    _stack: sys::Stack,
}

/// How the program ended.
#[derive(Debug)]
pub struct Finished {
    /// The line's status: its last program's.
    pub status: ExitStatus,
    /// Each program's status, in order (one for a program alone; see [`Command::pipeline`]).
    pub pipeline: Vec<ExitStatus>,
    /// Processes of the line were still running when it ended, and were killed with it.
    pub left_running: bool,
    /// What the guard found and moved aside.
    pub violations: Vec<Violation>,
    /// What the sandbox refused that the line tried (connections, UDP), when reported.
    pub denials: Vec<Denial>,
}

/// Enters the sandbox `spec` describes and starts `command` in it.
pub fn spawn(spec: &Spec, command: Command) -> Result<Running> {
    let abi = DetectedAbi::detect();
    let gaps = requirements::kernel_gaps(&abi, seccomp::available(), spec.network, &spec.dropped);
    requirements::refuse(&abi, &gaps)?;
    let namespaces = namespaces(spec)?;
    let home = spec.home_or_refuse()?;
    let plan = protected::plan(spec, home)?;
    let stdio: Vec<RawFd> = match &command.stdio {
        Some(fds) => fds.iter().map(AsRawFd::as_raw_fd).collect(),
        None => vec![0, 1, 2],
    };
    check_streams(&stdio, &command.passed, &plan)?;
    let layers = open_layers(&plan)?;
    check_workspace_identity(spec, &layers)?;
    if let Some(anchor) = &spec.anchor {
        check_anchor_inside(spec, &layers, anchor)?;
    }
    if namespaces == Namespaces::Nested {
        check_already_enforced(&plan)?;
    }
    // The writable mounts lie beneath a writable root, whose rule covers them (and one that is a
    // file could take no directory rights): layers for the mount tree only.
    let writable: Vec<BorrowedFd> = layers
        .iter()
        .filter(|(layer, _, _)| match layer {
            Layer::Writable(path) => !spec.writable_mounts.contains(path),
            Layer::ReadOnly(_) => false,
        })
        .map(|(_, fd, _)| fd.as_fd())
        .collect();
    let terminals = terminals(&stdio);
    let grants = Grants {
        writable,
        terminals: terminals.iter().map(|(path, _)| path.clone()).collect(),
        network: spec.network,
        tcp_ports: spec.tcp_ports.clone(),
        signals: spec.host_processes,
    };
    let ruleset = landlock::prepare(&abi, &grants)?;
    // Named hosts are reached through the line's own proxy (see `proxy`), which the line's TCP
    // sockets are connected to by the supervisor.
    let proxy = proxied(spec)
        .then(|| super::proxy::Proxy::start(spec.hosts.clone()))
        .transpose()
        .map_err(|e| {
            Error::new(
                Code::SandboxUnavailable,
                format!("cannot start the proxy for the granted hosts: {e}"),
            )
        })?;
    // Named hosts reached without the proxy (ssh's): resolved here, before the line starts.
    let direct = if spec.network {
        Vec::new()
    } else {
        super::direct::resolve(&spec.direct)
    };
    let sockets = seccomp::Sockets {
        network: spec.network,
        tcp_ports: !spec.tcp_ports.is_empty() || proxy.is_some(),
        listen: !spec.network && !spec.listen.is_empty(),
        unix: !spec.unix_sockets.is_empty(),
    };
    // Every line has a supervisor: it makes the opens for writing (see `opener`); without the
    // network, refused connections are reported to it (see `notify`); with named unix sockets,
    // every connect is decided there (see `unix_connect`).
    let mut reported = seccomp::native_program(sockets, true)?;
    // The filter without reports is installed when the kernel refuses a second listener (EBUSY:
    // this process already runs under a filter with a listener, see `child::install_seccomp`;
    // that outer supervisor then makes the opens). A process under no filter at all cannot get
    // that answer, and is spared compiling it; the child then has an empty program, which the
    // kernel refuses.
    let filter = seccomp::filtered()
        .then(|| seccomp::native_program(sockets, false))
        .transpose()?;
    let (supervisor, supervisor_child) = supervisor_pair()?;
    let (steps, descriptions) = match namespaces {
        Namespaces::Own | Namespaces::OwnWithUser => {
            let terminal = terminals.into_iter().next().map(|(_, target)| target);
            let hosts = direct_hosts_file(&direct);
            mount_steps(spec, &plan, &layers, terminal, hosts)?
        }
        Namespaces::Nested | Namespaces::None => (Vec::new(), Vec::new()),
    };
    let variables = proxy.as_ref().map(super::proxy::Proxy::variables);
    let exec = exec_plan(spec, command.started(), variables.clone())?;
    if command.pipeline.len() >= child::MAX_STAGES {
        return Err(Error::new(
            Code::SandboxExecFailed,
            format!(
                "cannot start a pipeline of more than {} programs",
                child::MAX_STAGES
            ),
        ));
    }
    let stages = command
        .pipeline
        .iter()
        .map(|stage| exec_plan(spec, stage.started(), variables.clone()))
        .collect::<Result<Vec<Exec>>>()?;
    let stage_pipes = (0..stages.len())
        .map(|_| Pipes::high_pipe())
        .collect::<Result<Vec<(OwnedFd, OwnedFd)>>>()?;
    let cwd_path = std::fs::canonicalize(&command.cwd).unwrap_or_else(|_| command.cwd.clone());
    let cwd = open_target(&cwd_path).map_err(|e| {
        Error::new(
            Code::SandboxUnavailable,
            format!(
                "cannot enter the working directory {}: {e}",
                command.cwd.display()
            ),
        )
    })?;
    write_notes(spec, &plan, stdio[2]);
    note_unresolved(&direct, stdio[2]);
    let mut scope = write_scope(spec, &plan, sockets, proxy.as_ref())?;
    scope
        .addresses
        .extend(super::direct::socket_addresses(&direct));
    let guard = Guard::new(
        &plan.guarded,
        workspace_repo(spec)
            .as_ref()
            .map(|(w, g)| (w.as_path(), g.as_path())),
    );
    // What git outside would read or run, before the line: compared after it (see `surface`).
    // A read-only line writes nowhere git reads from.
    let surface = (spec.policy == Policy::WorkspaceWrite).then(|| {
        let writable = plan
            .writable_roots()
            .map(Path::to_path_buf)
            .chain(spec.writable_roots())
            .collect();
        surface::Watch::new(
            surface::Reach::line(spec.workspace.as_deref(), &cwd_path, home),
            writable,
        )
    });
    let pipes = Pipes::new()?;
    let passed = passed_fds(&command.passed)?;
    let mut plan_for_child = ChildPlan {
        user_map: (namespaces == Namespaces::OwnWithUser).then(user_map),
        steps,
        exec,
        stage_pipes: stage_pipes
            .iter()
            .map(|(r, w)| (r.as_raw_fd(), w.as_raw_fd()))
            .collect(),
        stage_pids: Default::default(),
        stage_stack: if stages.is_empty() {
            None
        } else {
            Some(sys::Stack::new(child::PROGRAM_STACK).map_err(no_stack)?)
        },
        stage_failed: Default::default(),
        stages,
        cwd: Some(cwd),
        stdio: match &command.stdio {
            Some(fds) => [fds[0].as_raw_fd(), fds[1].as_raw_fd(), fds[2].as_raw_fd()],
            None => [-1, -1, -1],
        },
        passed: {
            let mut slots = [(-1, -1); child::MAX_PASSED];
            for (slot, (fd, target)) in slots.iter_mut().zip(&passed) {
                *slot = (fd.as_raw_fd(), *target);
            }
            slots
        },
        signals: startup_signals(),
        ruleset: ruleset.fd.as_raw_fd(),
        landlock_flags: 0,
        shm_access: match namespaces {
            Namespaces::Own | Namespaces::OwnWithUser => ruleset.all_fs_access,
            Namespaces::Nested | Namespaces::None => 0,
        },
        pts_access: ruleset.terminal_dir_access,
        seccomp: libc::sock_fprog {
            len: 0,
            filter: std::ptr::null_mut(),
        },
        seccomp_reported: libc::sock_fprog {
            len: 0,
            filter: std::ptr::null_mut(),
        },
        supervisor: supervisor_child.as_raw_fd(),
        // Only nested in shellgate's own sandbox is another supervisor's listener (EBUSY) one
        // that makes this line's opens for writing (see `opener::announcement`): anywhere else,
        // the line must not run without its own.
        supervisor_required: !spec.unix_sockets.is_empty() || namespaces != Namespaces::Nested,
        lock_root: sys::geteuid() == 0
            && namespaces != Namespaces::OwnWithUser
            && !sys::root_locked(),
        setup: pipes.setup_write.as_raw_fd(),
        status: pipes.status_write.as_raw_fd(),
        lifeline: pipes.lifeline_read.as_raw_fd(),
        pid_namespace: matches!(namespaces, Namespaces::Own | Namespaces::OwnWithUser)
            && !spec.host_processes,
        await_group: command.process_group.is_some(),
        program_stack: sys::Stack::new(child::PROGRAM_STACK).map_err(no_stack)?,
        rlimits: [
            (RLIMIT_NPROC, spec.limits.processes),
            (RLIMIT_DATA, spec.limits.memory),
            (RLIMIT_FSIZE, spec.limits.file_size),
        ],
        pid_max: (matches!(namespaces, Namespaces::Own | Namespaces::OwnWithUser)
            && !spec.host_processes
            && sys::per_namespace_pid_max())
        .then(|| pid_max_text(spec.limits.processes)),
    };
    let mut filter = filter;
    if let Some(program) = filter.as_mut() {
        plan_for_child.seccomp = fprog(program)?;
    }
    plan_for_child.seccomp_reported = fprog(&mut reported)?;
    let plan = Box::new(plan_for_child);
    let stack = sys::Stack::new(child::INIT_STACK).map_err(no_stack)?;
    // CLONE_VM: the init shares this memory instead of a copy of it (no page table is copied,
    // nothing is copied on write afterwards); it reads only the plan, on a stack of its own.
    let mut flags = clone_flags(namespaces) | libc::CLONE_VM as libc::c_ulong;
    if spec.host_processes {
        // The person's own processes: the host's PID namespace (see `Spec::host_processes`).
        flags &= !(libc::CLONE_NEWPID as libc::c_ulong);
    }
    let arg = &*plan as *const ChildPlan as *mut libc::c_void;
    // The init starts with every signal blocked and keeps them so: a handler this process
    // installed (`wrap`'s, say) must never run in it, on this memory. SIGKILL still ends it.
    let blocked = sys::SignalsBlocked::all();
    // SAFETY: `init_entry` runs only the child module's async-signal-safe code, which touches
    // nothing but its own stack and the plan; `stack` is used by nothing else; both, and the
    // seccomp programs the plan points to, are kept unchanged in `ChildMemory` until the init
    // has been reaped (see `Running`).
    let cloned = unsafe { raw::spawn_on_stack(flags, child::init_entry, stack.top(), arg) };
    drop(blocked);
    let pid = match cloned {
        Ok(pid) => pid,
        Err(errno) => return Err(clone_error(namespaces, errno)),
    };
    let memory = ChildMemory {
        _plan: plan,
        _seccomp: (filter, reported),
        _stack: stack,
    };
    // The child has its own copies; these must go, or the pipes never report EOF.
    let Pipes {
        setup_read,
        setup_write,
        status_read,
        status_write,
        lifeline_read,
        lifeline_write,
    } = pipes;
    drop((setup_write, status_write, lifeline_read, stage_pipes));
    // The init has its own descriptors (no CLONE_FILES). The ruleset stays, for the opener.
    drop((layers, passed));
    let opener = super::opener::Opener::new(ruleset.fd);
    drop(supervisor_child);
    let group = command.process_group;
    let running = Running {
        pid,
        setup: Some(std::fs::File::from(setup_read)),
        status: std::fs::File::from(status_read),
        _lifeline: lifeline_write,
        steps: descriptions,
        programs: std::iter::once(command.program)
            .chain(command.pipeline.into_iter().map(|stage| stage.program))
            .collect(),
        cwd: command.cwd,
        started: None,
        guard,
        surface,
        reaped: false,
        leave_init: false,
        supervisor: Some(supervisor),
        listener: None,
        opener,
        proxy,
        denials: Vec::new(),
        scope,
        memory: Some(memory),
    };
    if let Some(group) = group {
        // On failure `running` is dropped: the init is killed and reaped first.
        join_group(pid, group, &running._lifeline)?;
    }
    Ok(running)
}

/// Where writes are allowed in this sandbox, for the notes on observed calls: the writable
/// layers and the private `/dev/shm`, except the read-only layers and protected paths.
fn write_scope(
    spec: &Spec,
    plan: &Plan,
    sockets: seccomp::Sockets,
    proxy: Option<&super::proxy::Proxy>,
) -> Result<notify::WriteScope> {
    let arch = seccomp::Arch::native().ok_or_else(|| {
        Error::new(
            Code::SandboxUnavailable,
            "no seccomp filter for this architecture",
        )
    })?;
    let mut writable: Vec<PathBuf> = plan.writable_roots().map(Path::to_path_buf).collect();
    if spec.policy == Policy::WorkspaceWrite {
        writable.extend(spec.writable_roots());
    }
    writable.push(PathBuf::from(SHM));
    let read_only = plan
        .layers
        .iter()
        .filter_map(|l| match l {
            Layer::ReadOnly(p) => Some(p.clone()),
            Layer::Writable(_) => None,
        })
        .chain(plan.read_only.iter().cloned())
        .collect();
    Ok(notify::WriteScope {
        filter: seccomp::Table::new(arch, sockets, false),
        writable,
        read_only,
        tcp_ports: if spec.network {
            Vec::new()
        } else {
            spec.tcp_ports.clone()
        },
        network: spec.network,
        listen: if spec.network {
            Vec::new()
        } else {
            spec.listen.clone()
        },
        unix_sockets: super::unix_connect::Allowed::new(&spec.unix_sockets),
        proxy: proxy.map(super::proxy::Proxy::door),
        addresses: if proxy.is_some() {
            spec.hosts.iter().flat_map(exact_addresses).collect()
        } else {
            Vec::new()
        },
    })
}

/// The addresses an endpoint names exactly: an address literal's, and `localhost`'s loopback
/// (`127.0.0.1` and `::1`). A name is resolved only by the proxy, and so reached only through it.
fn exact_addresses(
    endpoint: &shellgate_core::policy::endpoint::Endpoint,
) -> Vec<std::net::SocketAddr> {
    use shellgate_core::policy::endpoint::Host;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
    match &endpoint.host {
        Some(Host::Exact(name)) if name == "localhost" => vec![
            SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), endpoint.port),
            SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), endpoint.port),
        ],
        Some(Host::Exact(name)) => name
            .parse::<IpAddr>()
            .map(|ip| vec![SocketAddr::new(ip, endpoint.port)])
            .unwrap_or_default(),
        Some(Host::Beneath(_)) | None => Vec::new(),
    }
}

/// Whether the line reaches named hosts, through a proxy of its own (not with the whole network,
/// which reaches them anyway). A line with only direct hosts (ssh's) has one too: its supervisor
/// then makes every `connect`, to their addresses (the proxy admits no name).
fn proxied(spec: &Spec) -> bool {
    !spec.network && (!spec.hosts.is_empty() || !spec.direct.is_empty())
}

/// The line's own `/etc/hosts` for the direct hosts' names (see [`super::direct`]); `None` when
/// it needs none.
fn direct_hosts_file(direct: &[super::direct::Resolved]) -> Option<Vec<u8>> {
    if direct.is_empty() {
        return None;
    }
    super::direct::hosts_file(direct, &super::direct::host_file(Path::new(HOSTS)))
}

/// Tells the line's stderr which direct hosts did not resolve: the line cannot reach them.
fn note_unresolved(direct: &[super::direct::Resolved], stderr: RawFd) {
    for r in direct.iter().filter(|r| r.addresses.is_empty()) {
        let note = format!(
            "[shellgate] note: {}:{} was granted, but its name did not resolve here: this line \
             cannot reach it\n",
            r.name, r.port
        );
        sys::write_raw(stderr, note.as_bytes());
    }
}

/// The file whose names the line's own hosts file covers.
const HOSTS: &str = "/etc/hosts";

// The resources as the kernel numbers them (glibc types them `u32`, musl `c_int`).
#[allow(clippy::unnecessary_cast)]
const RLIMIT_NPROC: u32 = libc::RLIMIT_NPROC as u32;
#[allow(clippy::unnecessary_cast)]
const RLIMIT_DATA: u32 = libc::RLIMIT_DATA as u32;
#[allow(clippy::unnecessary_cast)]
const RLIMIT_FSIZE: u32 = libc::RLIMIT_FSIZE as u32;

/// The line's `pid_max` and the `ns_last_pid` it starts from (see [`ChildPlan::pid_max`]):
/// `processes + 300` (at least the kernel's minimum, 301), and a last pid somewhere in
/// `[300, pid_max)`, so the program's pid is not the same in every line.
fn pid_max_text(processes: u64) -> (CString, CString) {
    let pid_max = processes.saturating_add(300).clamp(301, 1 << 22);
    let mut random = [0u8; 8];
    let _ = getrandom::getrandom(&mut random);
    let last = 300 + u64::from_le_bytes(random) % (pid_max - 300);
    let text = |n: u64| CString::new(n.to_string()).unwrap_or_default();
    (text(pid_max), text(last))
}

fn fprog(program: &mut seccompiler::BpfProgram) -> Result<libc::sock_fprog> {
    Ok(libc::sock_fprog {
        len: u16::try_from(program.len()).map_err(|_| {
            Error::internal("the seccomp program is longer than the kernel accepts")
        })?,
        filter: program.as_mut_ptr().cast(),
    })
}

/// A stack for the sandbox's processes could not be mapped: the launch fails closed.
fn no_stack(e: std::io::Error) -> Error {
    Error::new(
        Code::SandboxUnavailable,
        format!("cannot map a stack for the sandbox's processes: {e}"),
    )
}

/// The unix socket pair the program's process sends its seccomp listener over: this process
/// keeps the first end, the child the second (numbered 10 and above, like the other pipes).
fn supervisor_pair() -> Result<(OwnedFd, OwnedFd)> {
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().map_err(pipe_error)?;
    let high = |s: std::os::unix::net::UnixStream| {
        sys::dup_high(OwnedFd::from(s).as_fd()).map_err(pipe_error)
    };
    Ok((high(ours)?, high(theirs)?))
}

fn namespaces(spec: &Spec) -> Result<Namespaces> {
    if spec.dropped.contains(&Protection::ProtectedPaths) {
        return Ok(Namespaces::None);
    }
    // The weaker nested mode needs the kernel's word that no namespace can be made here (the outer
    // filter refuses them), not only the environment's: a variable and some unrelated seccomp
    // filter must never choose it where the full sandbox could be built.
    let env = crate::process_env::process_env();
    if env.sandboxed && sys::confined() && sys::namespaces_refused() {
        return Ok(Namespaces::Nested);
    }
    // The test seam: it can only take the namespaces away, which refuses (it never weakens).
    if env.no_namespaces {
        let abi = DetectedAbi::detect();
        let why = format!(
            "mount namespaces are disabled by {}",
            super::NO_NAMESPACES_ENV
        );
        return Err(Error::new(
            Code::SandboxUnavailable,
            requirements::describe(&abi, &[Gap::Namespace(why)]),
        ));
    }
    const CAP_SYS_ADMIN: u64 = 1 << 21;
    let privileged = sys::geteuid() == 0
        && sys::capget().is_ok_and(|(effective, _, _)| effective & CAP_SYS_ADMIN != 0);
    Ok(if privileged {
        Namespaces::Own
    } else {
        Namespaces::OwnWithUser
    })
}

fn clone_flags(namespaces: Namespaces) -> libc::c_ulong {
    // A System V IPC namespace of its own too: the host's shared memory, semaphores and message
    // queues (and POSIX message queues) are not the line's to reach.
    let own = (libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC) as libc::c_ulong;
    match namespaces {
        Namespaces::Own => own,
        Namespaces::OwnWithUser => own | libc::CLONE_NEWUSER as libc::c_ulong,
        Namespaces::Nested | Namespaces::None => 0,
    }
}

fn clone_error(namespaces: Namespaces, errno: raw::Errno) -> Error {
    let e = std::io::Error::from_raw_os_error(errno);
    if namespaces == Namespaces::None || namespaces == Namespaces::Nested {
        return Error::new(
            Code::SandboxExecFailed,
            format!("cannot start the sandbox's process: {e}"),
        );
    }
    let why = match namespaces {
        Namespaces::OwnWithUser => format!(
            "cannot create a user namespace for the sandbox's private mount and PID namespaces \
             ({e}); user namespaces may be disabled (user.max_user_namespaces, \
             kernel.unprivileged_userns_clone, AppArmor's \
             apparmor_restrict_unprivileged_userns) or this is a nested sandbox"
        ),
        _ => format!("cannot create the sandbox's private mount and PID namespaces: {e}"),
    };
    let abi = DetectedAbi::detect();
    Error::new(
        Code::SandboxUnavailable,
        requirements::describe(&abi, &[Gap::Namespace(why)]),
    )
}

fn user_map() -> UserMap {
    let line = |id: u32| CString::new(format!("{id} {id} 1")).unwrap_or_default();
    UserMap {
        uid_map: line(sys::geteuid()),
        gid_map: line(sys::getegid()),
    }
}

/// Copies of the passed descriptors numbered 10 and above, checked.
fn passed_fds(passed: &[(OwnedFd, RawFd)]) -> Result<Vec<(OwnedFd, RawFd)>> {
    if passed.len() > child::MAX_PASSED {
        return Err(Error::internal(format!(
            "at most {} descriptors can be passed to a sandboxed program",
            child::MAX_PASSED
        )));
    }
    passed
        .iter()
        .map(|(fd, target)| {
            if !(3..=9).contains(target) {
                return Err(Error::internal(format!(
                    "a passed descriptor must become 3 to 9, not {target}"
                )));
            }
            Ok((sys::dup_high(fd.as_fd()).map_err(pipe_error)?, *target))
        })
        .collect()
}

fn pipe_error(e: std::io::Error) -> Error {
    Error::new(
        Code::SandboxExecFailed,
        format!("cannot create the sandbox's pipes: {e}"),
    )
}

struct Pipes {
    setup_read: OwnedFd,
    setup_write: OwnedFd,
    status_read: OwnedFd,
    status_write: OwnedFd,
    lifeline_read: OwnedFd,
    lifeline_write: OwnedFd,
}

impl Pipes {
    /// A pipe, `(read end, write end)`, both numbered 10 and above (see `ChildPlan::passed`).
    fn high_pipe() -> Result<(OwnedFd, OwnedFd)> {
        let (r, w) = std::io::pipe().map_err(pipe_error)?;
        let high = |fd: OwnedFd| sys::dup_high(fd.as_fd()).map_err(pipe_error);
        Ok((high(OwnedFd::from(r))?, high(OwnedFd::from(w))?))
    }

    fn new() -> Result<Pipes> {
        let (setup_read, setup_write) = Self::high_pipe()?;
        let (status_read, status_write) = Self::high_pipe()?;
        let (lifeline_read, lifeline_write) = Self::high_pipe()?;
        Ok(Pipes {
            setup_read,
            setup_write,
            status_read,
            status_write,
            lifeline_read,
            lifeline_write,
        })
    }
}

/// Moves the init into `group` before it starts the program (which inherits the group), then lets
/// it go on. A group that is gone, or in another session, fails the launch: the init is killed
/// before anything ran.
fn join_group(init: libc::pid_t, group: libc::pid_t, lifeline: &OwnedFd) -> Result<()> {
    if let Err(errno) = raw::setpgid(init, group) {
        let _ = raw::kill(init, libc::SIGKILL);
        let _ = raw::waitpid(init, libc::__WALL);
        return Err(Error::new(
            Code::SandboxUnavailable,
            format!(
                "cannot run the line in its caller's process group {group}: {}",
                std::io::Error::from_raw_os_error(errno)
            ),
        ));
    }
    raw::write_all(lifeline.as_raw_fd(), b"g");
    Ok(())
}

/// A path opened without following any symlink, and its identity.
fn open_target(path: &Path) -> std::io::Result<Target> {
    let fd = sys::open_path_no_symlinks(path)?;
    target_of(path, &fd)
}

fn target_of(path: &Path, fd: &OwnedFd) -> std::io::Result<Target> {
    let st = sys::fstat(fd.as_fd())?;
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "NUL in path"))?;
    Ok(Target {
        path: c_path,
        id: FileId {
            dev: st.st_dev,
            ino: st.st_ino,
        },
    })
}

fn layer_path(layer: &Layer) -> &Path {
    match layer {
        Layer::Writable(p) | Layer::ReadOnly(p) => p,
    }
}

/// Every layer opened once: the writable roots' descriptors become Landlock's rules, and their
/// identities what the child checks before it attaches anything.
fn open_layers(plan: &Plan) -> Result<Vec<(Layer, OwnedFd, Target)>> {
    plan.layers
        .iter()
        .map(|layer| {
            let path = layer_path(layer);
            let fd = sys::open_path_no_symlinks(path).map_err(|e| unopenable(path, &e))?;
            let target = target_of(path, &fd).map_err(|e| unopenable(path, &e))?;
            Ok((layer.clone(), fd, target))
        })
        .collect()
}

fn unopenable(path: &Path, e: &std::io::Error) -> Error {
    let hint = if e.raw_os_error() == Some(libc::ELOOP) {
        " (a symlink is in the path: the sandbox only uses paths without symlinks, so a swap \
         cannot redirect it)"
    } else {
        ""
    };
    Error::new(
        Code::SandboxUnavailable,
        format!("cannot open {} for the sandbox: {e}{hint}", path.display()),
    )
}

/// The workspace the sandbox opened must be the directory the spec was made for.
fn check_workspace_identity(spec: &Spec, layers: &[(Layer, OwnedFd, Target)]) -> Result<()> {
    let (Some(workspace), Some(id)) = (&spec.workspace, spec.workspace_id) else {
        return Ok(());
    };
    let opened = match layers
        .iter()
        .find(|(l, _, _)| layer_path(l) == workspace.as_path())
    {
        Some((_, _, target)) => target.id,
        None => open_target(workspace)
            .map(|t| t.id)
            .map_err(|e| unopenable(workspace, &e))?,
    };
    if opened.dev == id.dev && opened.ino == id.ino {
        return Ok(());
    }
    Err(Error::new(
        Code::SandboxUnavailable,
        format!(
            "the workspace {} was replaced while the sandbox was prepared (a rename or a swap); \
             nothing ran",
            workspace.display()
        ),
    ))
}

/// A workspace derived from a directory (the working directory, or where the line's first `cd`
/// goes) must contain it, checked on the descriptor the sandbox will use: that directory opened
/// beneath it (no `..`, no symlinks) must be the very directory named (this process's own when
/// it is the working directory). A directory renamed or swapped between finding the git
/// top-level and opening it fails here instead of becoming writable.
fn check_anchor_inside(
    spec: &Spec,
    layers: &[(Layer, OwnedFd, Target)],
    anchor: &Path,
) -> Result<()> {
    let Some(workspace) = &spec.workspace else {
        return Ok(());
    };
    let moved = || {
        Error::new(
            Code::SandboxUnavailable,
            format!(
                "the directory {} is no longer inside the workspace {} (something was \
                 renamed or swapped while the sandbox was prepared); nothing ran",
                anchor.display(),
                workspace.display()
            ),
        )
    };
    // The workspace's own layer when it has one (beneath `/tmp` it is part of that root's).
    let own;
    let fd = match layers
        .iter()
        .find(|(layer, _, _)| layer_path(layer) == workspace.as_path())
    {
        Some((_, fd, _)) => fd,
        None => {
            own = sys::open_path_no_symlinks(workspace).map_err(|_| moved())?;
            &own
        }
    };
    let relative = anchor.strip_prefix(workspace).map_err(|_| moved())?;
    let beneath = sys::open_beneath(fd.as_fd(), relative).map_err(|_| moved())?;
    let here = if std::env::current_dir().is_ok_and(|d| d == anchor) {
        std::fs::File::open(".").and_then(|f| sys::fstat(f.as_fd()))
    } else {
        sys::open_path_no_symlinks(anchor).and_then(|f| sys::fstat(f.as_fd()))
    }
    .map_err(|_| moved())?;
    let inside = sys::fstat(beneath.as_fd()).map_err(|_| moved())?;
    if (inside.st_dev, inside.st_ino) == (here.st_dev, here.st_ino) {
        Ok(())
    } else {
        Err(moved())
    }
}

/// The mount steps, in order, with a description of each for failure messages.
fn mount_steps(
    spec: &Spec,
    plan: &Plan,
    layers: &[(Layer, OwnedFd, Target)],
    terminal: Option<Target>,
    hosts: Option<Vec<u8>>,
) -> Result<(Vec<Step>, Vec<String>)> {
    let mut steps = vec![(
        Step::MakeRootSlave,
        "make the mount namespace private".to_owned(),
    )];
    let writable: Vec<&Target> = layers
        .iter()
        .filter(|(layer, _, _)| matches!(layer, Layer::Writable(_)))
        .map(|(_, _, target)| target)
        .collect();
    if writable.len() + 1 > child::MAX_SLOTS {
        return Err(Error::new(
            Code::SandboxUnavailable,
            format!(
                "too many writable roots ({}); at most {} are supported",
                writable.len(),
                child::MAX_SLOTS - 1
            ),
        ));
    }
    for (slot, target) in writable.iter().enumerate() {
        steps.push((
            Step::CloneTree {
                target: (*target).clone(),
                slot,
            },
            format!("copy the writable root {}", show(target)),
        ));
    }
    steps.push((
        Step::ReadOnlyEverything,
        "make every mount read-only".to_owned(),
    ));
    let mut slot = 0;
    for (layer, _, target) in layers {
        let step = match layer {
            Layer::Writable(_) => {
                let step = Step::Attach {
                    slot,
                    target: target.clone(),
                };
                slot += 1;
                (step, format!("attach the writable root {}", show(target)))
            }
            Layer::ReadOnly(_) => (
                Step::ReadOnlyBind {
                    target: target.clone(),
                },
                format!("keep {} read-only", show(target)),
            ),
        };
        steps.push(step);
    }
    // Only a line with direct hosts looks at the machine's hosts file: covered where it really
    // is (a link to it is followed); a missing one gets no cover, and ssh's names then do not
    // resolve in the line: fail closed.
    let hosts_target = hosts
        .as_ref()
        .and_then(|_| std::fs::canonicalize(HOSTS).ok())
        .and_then(|path| open_target(&path).ok());
    let hosts = hosts.filter(|_| hosts_target.is_some());
    let empty_source = (!plan.hidden.is_empty() || hosts.is_some()).then_some(writable.len());
    if let Some(slot) = empty_source {
        steps.push((
            Step::EmptySource { slot, hosts },
            "make the empty view that hides credential stores (and the line's hosts file)"
                .to_owned(),
        ));
    }
    let dev = open_target(Path::new("/dev")).map_err(|e| unopenable(Path::new("/dev"), &e))?;
    steps.push((
        Step::PrivateDev {
            target: dev,
            nodes: dev_nodes(),
            terminal,
            shm_under: empty_source,
        },
        "mount a private /dev (its devices, the line's terminal, its own devpts and /dev/shm)"
            .to_owned(),
    ));
    // With the host's processes the line keeps the host's /proc (read-only, like every mount).
    if !spec.host_processes {
        let proc =
            open_target(Path::new("/proc")).map_err(|e| unopenable(Path::new("/proc"), &e))?;
        steps.push((
            Step::Proc { target: proc },
            "mount /proc for the line's PID namespace".to_owned(),
        ));
    }
    if spec.policy == Policy::WorkspaceWrite {
        for pin in &plan.pins {
            let target = open_target(pin).map_err(|e| unopenable(pin, &e))?;
            steps.push((Step::Pin { target }, format!("pin {}", pin.display())));
        }
        for path in &plan.read_only {
            let target = open_target(path).map_err(|e| unopenable(path, &e))?;
            steps.push((
                Step::ReadOnlyBind { target },
                format!("keep {} read-only", path.display()),
            ));
        }
    }
    if let (Some(slot), Some(target)) = (empty_source, hosts_target) {
        steps.push((
            Step::Hosts { target, slot },
            "cover /etc/hosts with the line's own (the hosts it reaches directly)".to_owned(),
        ));
    }
    if let Some(source) = empty_source {
        for path in &plan.hidden {
            let target = open_target(path).map_err(|e| unopenable(path, &e))?;
            let shape = if path.is_dir() {
                Shape::Dir
            } else {
                Shape::File
            };
            steps.push((
                Step::Hide {
                    target,
                    shape,
                    slot: source,
                },
                format!("hide the credential store {}", path.display()),
            ));
        }
    }
    Ok(steps.into_iter().unzip())
}

fn show(target: &Target) -> String {
    target.path.to_string_lossy().into_owned()
}

/// Inside another shellgate sandbox no namespace can be made: everything this one would make
/// read-only — protected trees (the binary, the homes, shellgate's own directories), protected
/// paths, hidden stores — must already be a read-only mount of the outer one, and every directory
/// it would pin a mount point, or the launch is refused.
fn check_already_enforced(plan: &Plan) -> Result<()> {
    let read_only = |path: &Path| {
        sys::is_mount_root(path).unwrap_or(false)
            && sys::mount_flags(path).is_ok_and(|f| f & libc::ST_RDONLY != 0)
    };
    let pinned = |path: &Path| sys::is_mount_root(path).unwrap_or(false);
    let trees = plan.layers.iter().filter_map(|layer| match layer {
        Layer::ReadOnly(tree) => Some(tree),
        Layer::Writable(_) => None,
    });
    let missing = trees
        .chain(&plan.read_only)
        .chain(&plan.hidden)
        .find(|path| !read_only(path))
        .or_else(|| plan.pins.iter().find(|path| !pinned(path)));
    match missing {
        None => Ok(()),
        Some(path) => Err(Error::new(
            Code::SandboxUnavailable,
            format!(
                "this runs inside another sandbox, where no mount namespace can be made, and {} \
                 is not read-only there; run it outside, or from the outer sandbox's workspace",
                path.display()
            ),
        )),
    }
}

/// A standard stream (or a passed descriptor) that is a directory or an `O_PATH` handle would be
/// a handle on the host's tree below the read-only mounts (`openat(0, ".git/config")`), and one
/// on a protected file, or a file in a protected tree, could be reopened for writing through
/// `/proc/self/fd/N`, whose path is the caller's writable mount: refused rather than guessed.
fn check_streams(stdio: &[RawFd], passed: &[(OwnedFd, RawFd)], plan: &Plan) -> Result<()> {
    let streams = stdio
        .iter()
        .zip([(0, "stdin"), (1, "stdout"), (2, "stderr")])
        .map(|(fd, (number, name))| (*fd, name.to_owned(), number))
        .chain(passed.iter().map(|(fd, number)| {
            (
                fd.as_raw_fd(),
                format!("the passed descriptor {number}"),
                *number,
            )
        }));
    let protected: Vec<&Path> = plan
        .read_only
        .iter()
        .map(PathBuf::as_path)
        .chain(plan.layers.iter().filter_map(|layer| match layer {
            Layer::ReadOnly(tree) => Some(tree.as_path()),
            Layer::Writable(_) => None,
        }))
        .collect();
    for (fd, name, number) in streams {
        if sys::fd_file_type(fd) == Some(libc::S_IFDIR)
            || sys::fd_status_flags(fd).is_some_and(|f| f & libc::O_PATH != 0)
        {
            return Err(Error::new(
                Code::SandboxUnavailable,
                format!(
                    "{name} is a directory handle, which would reach beneath the sandbox's read-only mounts"
                ),
            ));
        }
        let target = match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            Ok(target) => target,
            // Not open: nothing to reopen.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(Error::new(
                    Code::SandboxUnavailable,
                    format!(
                        "cannot tell what {name} is (/proc/self/fd/{fd}: {e}), so it cannot be checked"
                    ),
                ));
            }
        };
        if protected.iter().any(|p| target.starts_with(p)) {
            return Err(Error::new(
                Code::SandboxUnavailable,
                format!(
                    "{name} is {}, a protected path: the program could reopen it for writing \
                     through /proc/self/fd/{number}",
                    target.display()
                ),
            ));
        }
    }
    Ok(())
}

/// The terminal devices behind the standard streams (`/dev/pts/3`, `/dev/ttyS0`), so a program
/// can reopen its own terminal: each opened by its path and checked to be the very node behind
/// the stream (a terminal closed since, whose name another took, is left out).
fn terminals(fds: &[RawFd]) -> Vec<(PathBuf, Target)> {
    let mut found: Vec<(PathBuf, Target)> = Vec::new();
    for &fd in fds {
        // SAFETY: isatty only asks the kernel about the descriptor (an ioctl that reads nothing
        // of ours).
        if unsafe { libc::isatty(fd) } != 1 {
            continue;
        }
        let Ok(path) = std::fs::read_link(format!("/proc/self/fd/{fd}")) else {
            continue;
        };
        if !path.starts_with("/dev/") || found.iter().any(|(p, _)| *p == path) {
            continue;
        }
        // SAFETY: fstat writes only into `st`, a zeroed stat of the right layout.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above; `fd` is one of the streams this process holds.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            continue;
        }
        match open_target(&path) {
            Ok(target) if target.id.dev == st.st_dev && target.id.ino == st.st_ino => {
                found.push((path, target));
            }
            _ => {}
        }
    }
    found
}

/// The host's device nodes the private `/dev` holds: [`landlock::DEVICES`] that exist here, but
/// `/dev/ptmx`, which is the private devpts' own (a link to `pts/ptmx`).
fn dev_nodes() -> Vec<child::DevNode> {
    use std::os::unix::fs::FileTypeExt;
    landlock::DEVICES
        .iter()
        .filter(|path| **path != "/dev/ptmx")
        .map(Path::new)
        .filter(|path| std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device()))
        .filter_map(|path| {
            let name = CString::new(path.file_name()?.as_bytes()).ok()?;
            let source = open_target(path).ok()?;
            Some(child::DevNode { name, source })
        })
        .take(child::MAX_DEV_NODES)
        .collect()
}

/// What [`exec_plan`] starts: a [`Command`]'s program, or a [`Stage`]'s.
struct Program<'a> {
    path: &'a Path,
    arg0: &'a OsStr,
    args: &'a [OsString],
    env: &'a [(OsString, OsString)],
}

impl Command {
    fn started(&self) -> Program<'_> {
        Program {
            path: &self.program,
            arg0: &self.arg0,
            args: &self.args,
            env: &self.env,
        }
    }
}

impl Stage {
    fn started(&self) -> Program<'_> {
        Program {
            path: &self.program,
            arg0: &self.arg0,
            args: &self.args,
            env: &self.env,
        }
    }
}

fn exec_plan(
    spec: &Spec,
    command: Program,
    proxy: Option<Vec<(&'static str, String)>>,
) -> Result<Exec> {
    let nul = |what: &str| {
        Error::new(
            Code::SandboxExecFailed,
            format!("cannot start the program: its {what} contains a NUL byte"),
        )
    };
    let path = CString::new(command.path.as_os_str().as_bytes()).map_err(|_| nul("path"))?;
    let mut strings: Vec<CString> = Vec::new();
    strings.push(CString::new(command.arg0.as_bytes()).map_err(|_| nul("name"))?);
    for arg in command.args {
        strings.push(CString::new(arg.as_bytes()).map_err(|_| nul("arguments"))?);
    }
    let argc = strings.len();
    // A port grant has no UDP: name lookups go over TCP (glibc's resolver option `use-vc`).
    let tcp_lookups = !spec.network && !spec.tcp_ports.is_empty();
    let overridden = |key: &OsStr| {
        key == SANDBOXED_ENV
            || (spec.policy == Policy::ReadOnly && key == "TMPDIR")
            || (tcp_lookups && key == "RES_OPTIONS")
            || (proxy.is_some() && super::proxy::VARIABLES.iter().any(|v| key == *v))
    };
    for (key, value) in command.env {
        if key.is_empty() || key.as_bytes().contains(&b'=') || overridden(key) {
            continue;
        }
        let mut pair = key.as_bytes().to_vec();
        pair.push(b'=');
        pair.extend_from_slice(value.as_bytes());
        strings.push(CString::new(pair).map_err(|_| nul("environment"))?);
    }
    strings.push(
        CString::new(format!("{SANDBOXED_ENV}={}", spec.policy.as_str())).unwrap_or_default(),
    );
    if spec.policy == Policy::ReadOnly {
        strings.push(CString::new(format!("TMPDIR={SHM}")).unwrap_or_default());
    }
    for (name, value) in proxy.iter().flatten() {
        strings.push(CString::new(format!("{name}={value}")).map_err(|_| nul("environment"))?);
    }
    if tcp_lookups {
        let options = command
            .env
            .iter()
            .find(|(k, _)| k == "RES_OPTIONS")
            .map(|(_, v)| v.to_string_lossy().into_owned());
        let options = match options {
            Some(o) if !o.split_whitespace().any(|w| w == "use-vc") => format!("{o} use-vc"),
            Some(o) => o,
            None => "use-vc".to_owned(),
        };
        strings
            .push(CString::new(format!("RES_OPTIONS={options}")).map_err(|_| nul("environment"))?);
    }
    let pointers: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
    let mut argv = pointers[..argc].to_vec();
    argv.push(std::ptr::null());
    let mut envp = pointers[argc..].to_vec();
    envp.push(std::ptr::null());
    Ok(Exec {
        path,
        _strings: strings,
        argv,
        envp,
    })
}

/// A line on the program's stderr about what it may not expect (printed before it starts).
fn write_notes(spec: &Spec, plan: &Plan, stderr: RawFd) {
    let Some(tmpdir) = &spec.ignored_tmpdir else {
        return;
    };
    let canonical = std::fs::canonicalize(tmpdir).unwrap_or_else(|_| tmpdir.clone());
    if plan.writable_roots().any(|r| canonical.starts_with(r)) {
        return;
    }
    let note = format!(
        "[shellgate] note: $TMPDIR ({}) is not writable in this sandbox: only a TMPDIR that is \
         a directory of your own beneath /tmp or /var/tmp, writable by nobody else (mktemp -d), \
         is; name another temp dir in the configuration's sandbox.writable\n",
        tmpdir.display()
    );
    sys::write_raw(stderr, note.as_bytes());
}

/// The workspace's repository (worktree, git dir), for the guard's gitlink check.
fn workspace_repo(spec: &Spec) -> Option<(PathBuf, PathBuf)> {
    let workspace = spec.workspace.as_ref()?;
    let layout = super::git::inspect(workspace).ok()??;
    Some((workspace.clone(), layout.git_dir))
}

impl Running {
    /// The init's pid (in this process's PID namespace).
    pub fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Blocks until the program has started (`Ok`) or the launch failed (`Err` with
    /// `SANDBOX_UNAVAILABLE` / `SANDBOX_EXEC_FAILED` and the step that failed).
    pub fn started(&mut self) -> Result<()> {
        if let Some(result) = &self.started {
            return result.clone();
        }
        let mut record = Vec::new();
        let result = match self.setup.take() {
            Some(mut pipe) => match pipe.read_to_end(&mut record) {
                Ok(_) if record.is_empty() => Ok(()),
                Ok(_) => Err(self.failure(&record)),
                Err(e) => Err(Error::internal(format!(
                    "cannot read the sandbox's setup report: {e}"
                ))),
            },
            None => Ok(()),
        };
        if result.is_ok() {
            self.receive_listener();
        }
        self.started = Some(result.clone());
        result
    }

    /// The program's process sent its seccomp listener before its exec (which is what ended the
    /// setup pipe), so it is there to be read now — or it never comes (a nested sandbox).
    fn receive_listener(&mut self) {
        let Some(socket) = self.supervisor.take() else {
            return;
        };
        self.listener = sys::receive_fd(socket.as_fd()).ok().flatten();
        if let Some(listener) = &self.listener {
            notify::wake_synchronously(listener);
        }
    }

    fn failure(&self, record: &[u8]) -> Error {
        let Some(failure) = child::Failure::parse(record) else {
            return Error::new(
                Code::SandboxUnavailable,
                "the sandbox failed to start and its report was unreadable",
            );
        };
        let program = self
            .programs
            .get(usize::from(failure.program))
            .or(self.programs.first())
            .map_or(Path::new(""), PathBuf::as_path);
        describe_failure(&failure, &self.steps, program, &self.cwd)
    }

    /// This process ends soon after the line (a command's own line, not the `wrap` broker's): an
    /// init still ending its namespaces once the line's status is in is left, with the memory it
    /// runs on (never freed), to whoever inherits it at this process's exit, instead of a thread
    /// started to wait for it, which cost ≈ 0.1 ms per line in a VM (its start, and its end at
    /// the exit; docs/sandbox.md, "Where a line's time goes"). Nothing of the line runs by then:
    /// the init reports only after it has reaped every other process of the line.
    pub fn leave_init_at_exit(&mut self) {
        self.leave_init = true;
    }

    /// Kills the line: its init, and with it every process of its PID namespace.
    pub fn kill(&self) {
        let _ = raw::kill(self.pid, libc::SIGKILL);
    }

    /// Waits for the program, watching the guarded names meanwhile. When `cancel` hangs up (the
    /// caller went away) the line is killed. `Err` means it never started (the launch's error).
    pub fn wait(mut self, cancel: Option<BorrowedFd>) -> Result<Finished> {
        self.started()?;
        let mut violations = Vec::new();
        let status = loop {
            match self.poll(cancel) {
                Event::Status => break self.read_status(),
                Event::Watch => {
                    let found = self.guard.check();
                    if !found.is_empty() {
                        // Fail closed: a line that plants what git or a shell outside would run
                        // does not go on.
                        self.kill();
                        violations.extend(found);
                    }
                }
                Event::Cancel => {
                    self.kill();
                    break self.read_status();
                }
                Event::Reported => self.answer_report(),
                Event::ListenerGone => self.listener = None,
            }
        };
        // Every process of the line has ended (the init reaps them all before it reports), so
        // nothing can plant anything after this check. The init itself exits on its own: waiting
        // for its namespaces to be torn down would only add their cost to the line.
        violations.extend(self.guard.check());
        if let Some(surface) = &self.surface {
            violations.extend(surface.check());
        }
        self.reap_if_done();
        let proxied = self.proxy.take().map(|p| p.take_denials());
        for denial in self
            .opener
            .take_denials()
            .into_iter()
            .chain(proxied.into_iter().flatten())
        {
            notify::record(&mut self.denials, denial);
        }
        let (pipeline, left_running) = status;
        let status = pipeline
            .last()
            .copied()
            .unwrap_or(ExitStatus::from_raw(libc::SIGKILL));
        Ok(Finished {
            status,
            pipeline,
            left_running,
            violations,
            denials: std::mem::take(&mut self.denials),
        })
    }

    /// A reported call: recorded and refused. A listener that fails (every process that could
    /// report is gone: `POLLHUP`, or an error) is closed; calls without a listener fail `ENOSYS`
    /// in the kernel, so nothing runs unanswered.
    fn answer_report(&mut self) {
        let Some(listener) = &self.listener else {
            return;
        };
        match notify::handle_one(listener, &self.scope, &mut self.opener) {
            Ok(Some(denial)) => notify::record(&mut self.denials, denial),
            Ok(None) => {}
            Err(_) => self.listener = None,
        }
    }

    fn poll(&self, cancel: Option<BorrowedFd>) -> Event {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        let interest = PollFlags::POLLIN | PollFlags::POLLHUP | PollFlags::POLLERR;
        let timeout = if self.guard.is_watching() {
            PollTimeout::try_from(super::guard::WATCH_INTERVAL).unwrap_or(PollTimeout::NONE)
        } else {
            PollTimeout::NONE
        };
        loop {
            let mut fds = vec![PollFd::new(self.status.as_fd(), interest)];
            if let Some(fd) = cancel {
                fds.push(PollFd::new(fd, interest));
            }
            if let Some(listener) = &self.listener {
                fds.push(PollFd::new(listener.as_fd(), PollFlags::POLLIN));
            }
            match poll(&mut fds, timeout) {
                Ok(0) => return Event::Watch,
                Ok(_) => {}
                Err(_) => continue,
            }
            let ready = |i: usize| {
                fds.get(i)
                    .and_then(|f| f.revents())
                    .is_some_and(|r| !r.is_empty())
            };
            // Reports first: the line is blocked in its call until it is answered, and the
            // status cannot come before that.
            let listener_index = 1 + usize::from(cancel.is_some());
            if self.listener.is_some() && ready(listener_index) {
                let pending = fds[listener_index]
                    .revents()
                    .is_some_and(|r| r.contains(PollFlags::POLLIN));
                // POLLHUP without POLLIN: no process is left that could report.
                return if pending {
                    Event::Reported
                } else {
                    Event::ListenerGone
                };
            }
            if ready(0) {
                return Event::Status;
            }
            if cancel.is_some() && ready(1) {
                return Event::Cancel;
            }
        }
    }

    /// The init's record: each program's wait status, in order, and whether processes were left
    /// running. Without one (the init was killed), the program died with it: reported as killed
    /// by SIGKILL.
    ///
    /// Exactly one record is read, not up to the end of the pipe: the init's write end is
    /// released only at the very end of its exit, after the kernel has torn down its mount, IPC
    /// and PID namespaces (a closing descriptor is released by the exiting task's deferred work,
    /// which runs after its namespaces go), and waiting for that end of file added the teardown,
    /// ≈ 0.5 ms, to every line (docs/sandbox.md, "Where a line's time goes"). The record is
    /// written once, after every process of the line was reaped, and is shorter than `PIPE_BUF`,
    /// so it arrives whole or not at all.
    fn read_status(&mut self) -> (Vec<ExitStatus>, bool) {
        let mut record = Vec::new();
        let _ = (&self.status)
            .take(child::Status::LEN as u64)
            .read_to_end(&mut record);
        match child::Status::parse(&record) {
            Some(status) => (
                status.wait_statuses[..usize::from(status.programs)]
                    .iter()
                    .map(|s| ExitStatus::from_raw(*s))
                    .collect(),
                status.left_running,
            ),
            None => (vec![ExitStatus::from_raw(libc::SIGKILL)], false),
        }
    }

    /// Reaps the init if it has exited already; otherwise a thread waits for it, so a long-lived
    /// caller (the `wrap` broker) keeps no zombies, and a short-lived one does not wait for the
    /// namespaces' teardown (or, [`Running::leave_init_at_exit`], it is left to this process's
    /// exit).
    fn reap_if_done(&mut self) {
        if self.reaped {
            return;
        }
        self.reaped = true;
        if matches!(raw::waitpid(self.pid, libc::WNOHANG), Ok((pid, _)) if pid == self.pid) {
            self.memory = None;
            return;
        }
        if self.leave_init {
            // Never freed: the init may still be running on it until this process exits.
            std::mem::forget(self.memory.take());
            return;
        }
        let pid = self.pid;
        // The init may still be running (ending its namespaces): its memory goes with the thread
        // that waits for it, and is freed only after that wait. Should no thread start, the
        // closure is dropped unrun and `ManuallyDrop` leaves the memory where it is: never freed,
        // which is safe.
        let memory = std::mem::ManuallyDrop::new(self.memory.take());
        let _ = std::thread::Builder::new()
            .name("sandbox-reaper".into())
            .spawn(move || {
                let _ = raw::waitpid(pid, 0);
                drop(std::mem::ManuallyDrop::into_inner(memory));
            });
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.reaped {
            // Never waited for: the line must not outlive its supervisor, and its memory must
            // outlive the line.
            self.kill();
            let _ = raw::waitpid(self.pid, 0);
        }
    }
}

enum Event {
    Status,
    Watch,
    Cancel,
    Reported,
    ListenerGone,
}

fn describe_failure(
    failure: &child::Failure,
    steps: &[String],
    program: &Path,
    cwd: &Path,
) -> Error {
    use child::{How, phase};
    let e = std::io::Error::from_raw_os_error(failure.errno);
    let name = program.display();
    if failure.step == phase::EXEC {
        let reason = match failure.errno {
            libc::ENOENT => format!("cannot start `{name}`: no such program"),
            libc::EACCES | libc::EPERM => format!(
                "cannot start `{name}`: permission denied (not executable, or not executable \
                 inside the sandbox)"
            ),
            _ => format!("cannot start `{name}`: {e}"),
        };
        return Error::new(Code::SandboxExecFailed, reason);
    }
    let what = match failure.step {
        phase::USER_MAP => "map the user into the sandbox's user namespace".to_owned(),
        phase::DEATH_SIGNAL => "tie the sandbox's lifetime to shellgate's".to_owned(),
        phase::FORK => "start the program's process".to_owned(),
        phase::STDIO => "install the standard streams".to_owned(),
        phase::CWD => format!("enter the working directory {}", cwd.display()),
        phase::SHM_RULE => "grant the private /dev/shm".to_owned(),
        phase::PRIVILEGES => "drop every capability".to_owned(),
        phase::NO_NEW_PRIVS => "set no_new_privs".to_owned(),
        phase::LANDLOCK => "enter the Landlock domain".to_owned(),
        phase::SECCOMP => "install the seccomp filter".to_owned(),
        phase::DESCRIPTORS => "close the inherited descriptors".to_owned(),
        phase::LIMITS => "set the line's limits (sandbox.limits)".to_owned(),
        index => steps
            .get(usize::from(index))
            .cloned()
            .unwrap_or_else(|| format!("step {index}")),
    };
    let reason = match failure.how {
        How::Replaced if failure.step == phase::CWD => format!(
            "cannot {what}: inside the sandbox it is another directory (it is hidden, as a \
             credential store, or was replaced); nothing ran"
        ),
        How::Replaced => format!(
            "cannot {what}: it was replaced while the sandbox was being built (a rename or a \
             symlink swap); nothing ran"
        ),
        How::Open if failure.errno == libc::ELOOP => {
            format!("cannot {what}: a symlink appeared in its path; nothing ran")
        }
        How::Open => format!("cannot {what}: opening it failed: {e}"),
        How::Operate if failure.step == phase::SECCOMP && failure.errno == libc::EBUSY => format!(
            "cannot {what}: this process already runs under another tool's seccomp supervisor, \
             and the kernel gives a line no second one; without its own, the sandbox could not \
             make the line's opens for writing (a file with a second name would be written \
             through); nothing ran"
        ),
        How::Operate => format!("cannot {what}: {e}"),
    };
    Error::new(Code::SandboxUnavailable, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_resolve_like_execvp() {
        let found = resolve_program(OsStr::new("sh"), Some(OsStr::new("relative:/bin"))).unwrap();
        assert_eq!(found, PathBuf::from("/bin/sh"));
        let missing = resolve_program(OsStr::new("no-such-program-xyz"), None).unwrap_err();
        assert_eq!(missing.code, Code::SandboxExecFailed);
        assert_eq!(
            resolve_program(OsStr::new("/bin/true"), None).unwrap(),
            PathBuf::from("/bin/true")
        );
    }

    /// The spec is plain data: what to protect of the user's files comes in it, and a spec that
    /// does not say is refused before anything starts (it would protect nothing).
    #[test]
    fn a_spec_without_a_home_is_refused() {
        let spec = Spec::new(crate::mode::SandboxPolicy::ReadOnly, None).unwrap();
        let command = Command::new(PathBuf::from("/bin/true"), vec![], "/".into(), vec![]);
        let Err(error) = spawn(&spec, command) else {
            panic!("a spec without a home was launched");
        };
        assert_eq!(
            error.code,
            crate::error::Code::SandboxUnavailable,
            "{error}"
        );
        assert!(error.reason.contains("no home to protect"), "{error}");
    }

    #[test]
    fn exec_plan_sets_the_marker_and_read_only_tmpdir() {
        let spec = Spec::new(crate::mode::SandboxPolicy::ReadOnly, None).unwrap();
        let mut command = Command::new(
            PathBuf::from("/bin/true"),
            vec!["x".into()],
            "/".into(),
            vec![],
        );
        command.env = vec![
            ("TMPDIR".into(), "/elsewhere".into()),
            ("A".into(), "1".into()),
        ];
        let exec = exec_plan(&spec, command.started(), None).unwrap();
        let env: Vec<String> = exec._strings[2..]
            .iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            env,
            ["A=1", "SHELLGATE_SANDBOXED=read-only", "TMPDIR=/dev/shm"]
        );
        assert_eq!(exec.argv.len(), 3);
        assert!(exec.argv[2].is_null() && exec.envp.last().is_some_and(|p| p.is_null()));
    }
}
