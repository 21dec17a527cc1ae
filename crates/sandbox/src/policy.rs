//! What a sandbox is asked to enforce: the policy, its writable roots, the network switch and the
//! protections a person has explicitly dropped. Pure data plus the one function that resolves
//! defaults; applying it is the job of the other modules.

use crate::abi::Feature;
use crate::error::{Code, Error, Result};
use crate::git;
use crate::mode::SandboxPolicy;
use crate::workspace::{self, Anchors, Workspace};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

/// A policy the launcher can enforce. `full-access` is deliberately absent: it means "no sandbox",
/// which is decided (and confirmed by a person) outside this module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// Read and execute everywhere; write only to devices and a private temp dir.
    ReadOnly,
    /// Read and execute everywhere; write beneath the workspace, temp dirs and extra roots.
    WorkspaceWrite,
}

impl Policy {
    pub const ALL: [Policy; 2] = [Policy::WorkspaceWrite, Policy::ReadOnly];

    pub fn as_str(self) -> &'static str {
        match self {
            Policy::ReadOnly => "read-only",
            Policy::WorkspaceWrite => "workspace-write",
        }
    }

    /// Parses the command-line / config spelling. `full-access` is a usage error with a reason.
    pub fn parse(text: &str) -> Result<Policy> {
        match text {
            "read-only" => Ok(Policy::ReadOnly),
            "workspace-write" => Ok(Policy::WorkspaceWrite),
            "full-access" => Policy::try_from(SandboxPolicy::FullAccess),
            other => Err(Error::usage(format!(
                "unknown sandbox policy `{other}` (expected workspace-write or read-only)"
            ))),
        }
    }
}

impl TryFrom<SandboxPolicy> for Policy {
    type Error = Error;

    fn try_from(policy: SandboxPolicy) -> Result<Policy> {
        match policy {
            SandboxPolicy::ReadOnly => Ok(Policy::ReadOnly),
            SandboxPolicy::WorkspaceWrite => Ok(Policy::WorkspaceWrite),
            SandboxPolicy::FullAccess => Err(Error::usage(
                "full-access is not a sandbox policy: it means running without a sandbox, which \
                 only a person can confirm (outside `shellgate sandbox`)",
            )),
        }
    }
}

impl From<Policy> for SandboxPolicy {
    fn from(policy: Policy) -> SandboxPolicy {
        match policy {
            Policy::ReadOnly => SandboxPolicy::ReadOnly,
            Policy::WorkspaceWrite => SandboxPolicy::WorkspaceWrite,
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A protection layer that a configuration may drop *explicitly* when this system cannot enforce
/// it. Nothing is ever dropped implicitly: a missing layer that is not listed here refuses to run.
/// Landlock's filesystem rules and seccomp cannot be dropped at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Protection {
    /// The mount-namespace layer: the read-only tree, read-only protected paths inside the
    /// writable roots, hidden credential stores, the private `/dev` and PID and IPC namespaces.
    /// Needs a private mount namespace (root, or unprivileged user namespaces).
    ProtectedPaths,
    /// Landlock `TRUNCATE` (ABI 3).
    Truncate,
    /// Landlock TCP bind/connect rules (ABI 4); seccomp still blocks non-unix sockets.
    Tcp,
    /// Landlock `IOCTL_DEV` (ABI 5).
    IoctlDev,
    /// Landlock signal and abstract-unix-socket scoping (ABI 6).
    Scope,
}

impl Protection {
    pub const ALL: [Protection; 5] = [
        Protection::ProtectedPaths,
        Protection::Truncate,
        Protection::Tcp,
        Protection::IoctlDev,
        Protection::Scope,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Protection::ProtectedPaths => "protected-paths",
            Protection::Truncate => "truncate",
            Protection::Tcp => "tcp",
            Protection::IoctlDev => "ioctl-dev",
            Protection::Scope => "scope",
        }
    }

    /// The Landlock feature behind this protection, if it is one.
    pub fn landlock_feature(self) -> Option<Feature> {
        match self {
            Protection::ProtectedPaths => None,
            Protection::Truncate => Some(Feature::Truncate),
            Protection::Tcp => Some(Feature::Tcp),
            Protection::IoctlDev => Some(Feature::IoctlDev),
            Protection::Scope => Some(Feature::Scope),
        }
    }

    /// What the protection keeps the sandboxed program from doing, for messages.
    pub fn guards(self) -> &'static str {
        match self {
            Protection::ProtectedPaths => {
                "keeps every other mount read-only, .git/hooks and .git/config read-only, \
                 credential stores hidden, the line's processes in a PID namespace and its own \
                 /dev (no other terminal, no disk) and System V IPC"
            }
            Protection::Truncate => "stops truncating files outside the writable roots",
            Protection::Tcp => "denies TCP bind/connect in the kernel's Landlock layer",
            Protection::IoctlDev => "restricts ioctl on device files",
            Protection::Scope => {
                "stops signals and abstract-socket connections to processes outside"
            }
        }
    }
}

impl fmt::Display for Protection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything the launcher needs to confine one program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Spec {
    pub policy: Policy,
    /// The writable workspace (canonical), or none (see [`crate::workspace`]): then only
    /// the temp dirs and extra roots are writable.
    pub workspace: Option<PathBuf>,
    /// Why there is no workspace, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_workspace: Option<String>,
    /// The workspace's identity when it was first opened (checked again when the sandbox opens it).
    #[serde(skip)]
    pub workspace_id: Option<DirId>,
    /// The directory the workspace was derived from when the caller did not fix it (canonical:
    /// the working directory, or where the line's first `cd`s go, see `gate::entered_dir`). It must
    /// lie inside the workspace when the sandbox is built: a directory swapped in between the two
    /// lookups would otherwise choose what is writable.
    #[serde(skip)]
    pub anchor: Option<PathBuf>,
    /// Extra writable roots (canonical; `--writable`, `[sandbox] writable`). Empty for read-only.
    pub writable: Vec<PathBuf>,
    /// `/tmp`, and `$TMPDIR` when it is a private directory beneath `/tmp` or `/var/tmp` (see
    /// [`TempDirs`]),
    /// canonical and existing, for workspace-write; empty for read-only, which writes only to its
    /// private `/dev/shm`.
    pub temp_dirs: Vec<PathBuf>,
    /// `$TMPDIR` when it was *not* accepted as a writable root (workspace-write only), so the
    /// launcher can say why writing there fails.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored_tmpdir: Option<PathBuf>,
    /// A linked worktree's git dir and common dir, writable so `git commit` works there.
    pub git_dirs: Vec<PathBuf>,
    /// Allow network access (sockets of the internet families, Landlock TCP rules off).
    pub network: bool,
    /// With the network off: TCP connections to these ports are allowed (sorted, deduplicated).
    /// Landlock enforces the ports; connections elsewhere are refused and reported. No UDP, no
    /// listening: name lookups go over TCP (port 53 is always among them, `RES_OPTIONS=use-vc`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tcp_ports: Vec<u16>,
    /// With the network off: TCP connections to these named hosts (`host:port`), through the
    /// line's proxy only (see `sandbox::proxy`): the supervisor connects the line's sockets to
    /// the proxy and nowhere else, and the proxy resolves and reaches exactly these names.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<shellgate_core::policy::endpoint::Endpoint>,
    /// With the network off: named hosts reached **without** the proxy, by clients that read no
    /// proxy variable (ssh): shellgate resolves each name before the line starts, the supervisor
    /// connects the line's sockets straight to those addresses on that port and to nothing else
    /// of theirs, and the line's `/etc/hosts` gives the name exactly those addresses (see
    /// `sandbox::direct`). Only exact names and addresses; sorted, deduplicated.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub direct: Vec<shellgate_core::policy::endpoint::Endpoint>,
    /// With the network off: TCP ports the program may listen on, on loopback (sorted,
    /// deduplicated, never 0). Every `bind` and `listen` is made by the supervisor, on its copy
    /// of the socket, after checking the port and the address (a wildcard becomes loopback);
    /// without a supervisor both are refused. Landlock binds nothing (see `sandbox::listening`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub listen: Vec<u16>,
    /// Unix sockets the program may connect to by name (stream sockets, and seqpacket ones with
    /// the network or without any port; each `connect` is made by the supervisor, to exactly
    /// these): a contained agent's, the `wrap` broker's; a line's, those its grant names after
    /// a person's yes (the ssh agent's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unix_sockets: Vec<PathBuf>,
    /// Trees kept read-only inside writable roots besides the protected ones (canonical,
    /// existing): a contained agent's shell snapshots, which only the `wrap` broker writes.
    pub read_only_trees: Vec<PathBuf>,
    /// Mounts beneath a writable root that stay writable (canonical, each the root of a mount):
    /// a contained agent's own file mounts (`wrap`'s binds). Every other mount beneath a
    /// writable root is read-only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub writable_mounts: Vec<PathBuf>,
    /// Credential stores covered by empty read-only views (canonical, existing).
    pub hidden: Vec<PathBuf>,
    /// Protections a configuration dropped explicitly because this system cannot enforce them.
    pub dropped: BTreeSet<Protection>,
    /// What one line may take of the machine.
    pub limits: Limits,
    /// The person's own processes: the line sees the host's processes (no PID namespace of its
    /// own, the host's `/proc`) and may signal them (no Landlock signal scoping). Only for a line
    /// of process tools typed in a person's own shell (`ps`, `kill`…, see `gate`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub host_processes: bool,
    /// Where the user's own files are (homes, the trees programs read later, shellgate's own
    /// directories), resolved by the caller ([`Spec::with_home`]). A spec without it is refused
    /// at launch: a spec that does not say what to protect would protect nothing.
    #[serde(skip)]
    pub home: Option<crate::HomeEnv>,
}

/// What one line may take of the machine, so that no line can take it down: its live processes
/// (threads count), the memory of each process, the size of each file it writes. The defaults are
/// far above ordinary work (a parallel build, a test suite, a large download); `[sandbox.limits]`
/// changes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Live processes and threads of the line together.
    pub processes: u64,
    /// Bytes of data (heap and private writable mappings) of each process (`RLIMIT_DATA`).
    pub memory: u64,
    /// Bytes of each file a process writes (`RLIMIT_FSIZE`; past it, `SIGXFSZ`).
    pub file_size: u64,
}

impl Limits {
    /// Live processes and threads of a line, by default.
    pub const PROCESSES: u64 = 4096;
    /// The largest file a line may write, by default: 64 GiB.
    pub const FILE_SIZE: u64 = 64 << 30;

    /// The defaults on this machine: each process may use as much memory as the machine has, no
    /// more (a process past that would only push the machine into swap).
    pub fn machine_default() -> Limits {
        // SAFETY: sysconf only reads system constants.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        let memory = u64::try_from(pages)
            .ok()
            .zip(u64::try_from(page).ok())
            .and_then(|(pages, page)| pages.checked_mul(page))
            .filter(|bytes| *bytes > 0)
            .unwrap_or(u64::MAX);
        Limits {
            processes: Limits::PROCESSES,
            memory,
            file_size: Limits::FILE_SIZE,
        }
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::machine_default()
    }
}

/// Name lookups over TCP go to this port (a port grant always includes it).
pub const DNS_PORT: u16 = 53;

impl Spec {
    /// A spec for the workspace that contains `cwd`, resolved by the one resolver
    /// ([`crate::workspace::resolve`]).
    pub fn for_cwd(policy: SandboxPolicy, cwd: &Path, anchors: &Anchors) -> Result<Spec> {
        let cwd = canonical_dir(cwd, "working directory")?;
        match workspace::resolve(&cwd, anchors) {
            Workspace::Writable { root, .. } => Spec::new(policy, Some(&root)),
            Workspace::None { reason } => {
                let mut spec = Spec::new(policy, None)?;
                spec.no_workspace = Some(reason);
                Ok(spec)
            }
        }
    }

    /// A spec for an explicit workspace directory (or none), with the default temp dirs.
    pub fn new(policy: SandboxPolicy, workspace: Option<&Path>) -> Result<Spec> {
        let policy = Policy::try_from(policy)?;
        let (workspace, workspace_id) = match (policy, workspace) {
            (Policy::WorkspaceWrite, Some(dir)) => {
                let (dir, id) = open_dir(dir, "workspace")?;
                refuse_filesystem_root(&dir, "workspace")?;
                (Some(dir), Some(id))
            }
            (_, _) => (None, None),
        };
        let (temp, git_dirs) = match (policy, &workspace) {
            (Policy::ReadOnly, _) => (TempDirs::default(), Vec::new()),
            (Policy::WorkspaceWrite, Some(ws)) => {
                (TempDirs::for_tmpdir(None), worktree_git_dirs(ws)?)
            }
            (Policy::WorkspaceWrite, None) => (TempDirs::for_tmpdir(None), Vec::new()),
        };
        Ok(Spec {
            policy,
            workspace,
            workspace_id,
            no_workspace: None,
            anchor: None,
            writable: Vec::new(),
            temp_dirs: temp.writable,
            ignored_tmpdir: temp.ignored_tmpdir,
            git_dirs,
            network: false,
            tcp_ports: Vec::new(),
            hosts: Vec::new(),
            direct: Vec::new(),
            listen: Vec::new(),
            unix_sockets: Vec::new(),
            read_only_trees: Vec::new(),
            writable_mounts: Vec::new(),
            hidden: Vec::new(),
            dropped: BTreeSet::new(),
            limits: Limits::default(),
            host_processes: false,
            home: None,
        })
    }

    /// The temp dirs of workspace-write with the caller's `$TMPDIR` (see [`TempDirs`]); read-only
    /// has none. [`Spec::new`] gives `/tmp` alone.
    pub fn with_tmpdir(mut self, tmpdir: Option<&Path>) -> Spec {
        if self.policy == Policy::WorkspaceWrite {
            let temp = TempDirs::for_tmpdir(tmpdir);
            self.temp_dirs = temp.writable;
            self.ignored_tmpdir = temp.ignored_tmpdir;
        }
        self
    }

    /// The user's own files to protect (see [`Spec::home`]).
    pub fn with_home(mut self, home: crate::HomeEnv) -> Spec {
        self.home = Some(home);
        self
    }

    /// [`Spec::home`], or the refusal of a spec without it.
    pub fn home_or_refuse(&self) -> Result<&crate::HomeEnv> {
        self.home.as_ref().ok_or_else(|| {
            Error::new(
                Code::SandboxUnavailable,
                "the sandbox was given no home to protect (a spec without `home` would protect \
                 nothing of the user's startup files); this is a bug in the caller",
            )
        })
    }

    /// Adds a writable root. A root that does not exist is skipped (a configured cache dir may
    /// not exist yet); one that is not a directory is an error. Read-only takes none.
    pub fn with_writable(mut self, dir: &Path) -> Result<Spec> {
        if self.policy == Policy::ReadOnly {
            return Err(Error::usage(
                "read-only takes no writable roots (use workspace-write)",
            ));
        }
        if !dir.exists() {
            return Ok(self);
        }
        let dir = canonical_dir(dir, "writable root")?;
        refuse_filesystem_root(&dir, "writable root")?;
        if !self.writable.contains(&dir) {
            self.writable.push(dir);
        }
        Ok(self)
    }

    pub fn with_network(mut self, network: bool) -> Spec {
        self.network = network;
        self
    }

    /// TCP connections to `ports` (and 53, for name lookups over TCP), with the network off.
    pub fn with_tcp_ports(mut self, ports: &[u16]) -> Spec {
        if ports.is_empty() {
            self.tcp_ports.clear();
            return self;
        }
        let mut all: Vec<u16> = ports.iter().copied().chain([DNS_PORT]).collect();
        all.sort_unstable();
        all.dedup();
        self.tcp_ports = all;
        self
    }

    /// TCP connections to the named hosts of `endpoints` (through the proxy), with the network
    /// off. Endpoints on any host are [`Spec::with_tcp_ports`]'s.
    pub fn with_hosts(mut self, endpoints: &[shellgate_core::policy::endpoint::Endpoint]) -> Spec {
        self.hosts = endpoints
            .iter()
            .filter(|e| e.host.is_some())
            .cloned()
            .collect();
        self.hosts.sort();
        self.hosts.dedup();
        self
    }

    /// TCP connections straight to the exact named hosts of `endpoints`, by the addresses
    /// shellgate resolves for them (see [`Spec::direct`]), with the network off.
    pub fn with_direct(mut self, endpoints: &[shellgate_core::policy::endpoint::Endpoint]) -> Spec {
        use shellgate_core::policy::endpoint::Host;
        self.direct = endpoints
            .iter()
            .filter(|e| matches!(e.host, Some(Host::Exact(_))))
            .cloned()
            .collect();
        self.direct.sort();
        self.direct.dedup();
        self
    }

    /// Listening on loopback on `ports` (port 0, the kernel's pick, is never one), with the
    /// network off; the whole network already listens anywhere.
    pub fn with_listen(mut self, ports: &[u16]) -> Spec {
        let mut all: Vec<u16> = ports.iter().copied().filter(|p| *p != 0).collect();
        all.sort_unstable();
        all.dedup();
        self.listen = all;
        self
    }

    /// Keeps `dir` (when it exists) read-only inside the writable roots.
    pub fn with_read_only(mut self, dir: &Path) -> Result<Spec> {
        if !dir.exists() {
            return Ok(self);
        }
        let dir = canonical_dir(dir, "read-only tree")?;
        if !self.read_only_trees.contains(&dir) {
            self.read_only_trees.push(dir);
        }
        Ok(self)
    }

    /// Keeps the mount at `path` (a file or a directory, the root of a mount beneath a writable
    /// root added before it) writable: a contained agent's own file mount. Anything else is an
    /// error.
    pub fn with_writable_mount(mut self, path: &Path) -> Result<Spec> {
        let refuse =
            |why: &str| Error::usage(format!("--writable-mount {}: {why}", path.display()));
        if self.policy == Policy::ReadOnly {
            return Err(refuse("read-only takes no writable mounts"));
        }
        let canonical = std::fs::canonicalize(path).map_err(|e| refuse(&e.to_string()))?;
        match crate::sys::is_mount_root(&canonical) {
            Ok(true) => {}
            Ok(false) => return Err(refuse("not the root of a mount")),
            Err(e) => return Err(refuse(&format!("cannot tell whether it is a mount: {e}"))),
        }
        let beneath_a_root = self
            .writable_roots()
            .iter()
            .any(|root| canonical.starts_with(root) && canonical != *root);
        if !beneath_a_root {
            return Err(refuse("not beneath a writable root"));
        }
        if !self.writable_mounts.contains(&canonical) {
            self.writable_mounts.push(canonical);
        }
        Ok(self)
    }

    /// Lets the program read one credential store after all (a contained agent's own login).
    pub fn unhiding(mut self, path: &Path) -> Spec {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.hidden.retain(|h| h != &canonical && h != path);
        self
    }

    /// The credential stores to hide (see [`crate::credentials`]).
    pub fn with_hidden(mut self, hidden: Vec<PathBuf>) -> Spec {
        self.hidden = hidden;
        self
    }

    /// Drops one protection explicitly (a configuration's decision, never a default).
    pub fn dropping(mut self, protection: Protection) -> Spec {
        self.dropped.insert(protection);
        self
    }

    /// Every directory beneath which the program may write (devices and the private `/dev/shm`
    /// aside), deduplicated, in a stable order.
    pub fn writable_roots(&self) -> Vec<PathBuf> {
        if self.policy == Policy::ReadOnly {
            return Vec::new();
        }
        let mut roots: Vec<PathBuf> = Vec::new();
        for dir in self
            .workspace
            .iter()
            .chain(&self.writable)
            .chain(&self.temp_dirs)
            .chain(&self.git_dirs)
        {
            if !roots.contains(dir) {
                roots.push(dir.clone());
            }
        }
        roots
    }
}

/// Where temporary files may go: `/tmp`, and `$TMPDIR` only when it is (after resolving symlinks)
/// a directory strictly beneath `/tmp` or `/var/tmp`, owned by the caller and writable by nobody
/// else. Never `/var/tmp` itself, never `/run/user/<uid>`: the runtime dir holds the session bus,
/// the systemd user manager's units and agents' sockets.
///
/// The launcher inherits its environment from whoever starts it; in hook mode that is the
/// agent's shell, where one sandboxed line cannot but the agent itself can `export TMPDIR=$HOME`.
/// Taken as is, `$TMPDIR` would make any directory writable for every later line. Another temp
/// dir belongs in the configuration (`sandbox.writable`), which a person writes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TempDirs {
    /// The writable temp dirs, canonical and existing.
    pub writable: Vec<PathBuf>,
    /// `$TMPDIR` when it is set, absolute and existing but not a private temp dir (ignored).
    pub ignored_tmpdir: Option<PathBuf>,
}

impl TempDirs {
    /// `/tmp`, and `tmpdir` (the caller's `$TMPDIR`, resolved above the sandbox) when it is a
    /// private temp dir.
    pub fn for_tmpdir(tmpdir: Option<&Path>) -> TempDirs {
        let mut temp = TempDirs::default();
        if let Ok(tmp) = std::fs::canonicalize("/tmp")
            && tmp.is_dir()
        {
            temp.writable.push(tmp);
        }
        let Some(tmpdir) = tmpdir.filter(|dir| dir.is_absolute()) else {
            return temp;
        };
        let Ok(canonical) = std::fs::canonicalize(tmpdir) else {
            return temp;
        };
        if !canonical.is_dir() || temp.writable.contains(&canonical) {
            return temp;
        }
        if is_a_private_temp_dir(&canonical) {
            temp.writable.push(canonical);
        } else {
            temp.ignored_tmpdir = Some(tmpdir.to_path_buf());
        }
        temp
    }
}

/// Whether a canonical directory is a temp dir of the caller's own: strictly beneath `/tmp` or
/// `/var/tmp` (never `/var/tmp` itself, which every user and service shares), owned by the caller
/// and writable by nobody else (`mktemp -d` makes one). Anything wider would let `TMPDIR` make a
/// shared directory writable for every line.
fn is_a_private_temp_dir(canonical: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let strictly_beneath =
        temp_bases().any(|base| canonical.starts_with(&base) && canonical != base);
    strictly_beneath
        && std::fs::metadata(canonical)
            .is_ok_and(|m| m.uid() == super::sys::geteuid() && m.mode() & 0o022 == 0)
}

/// `/tmp` and `/var/tmp`, canonical.
fn temp_bases() -> impl Iterator<Item = PathBuf> {
    ["/tmp", "/var/tmp"]
        .iter()
        .filter_map(|base| std::fs::canonicalize(base).ok())
}

/// Whether a canonical directory is `/tmp` or `/var/tmp` or lies beneath one.
fn is_beneath_a_temp_dir(canonical: &Path) -> bool {
    temp_bases().any(|base| canonical.starts_with(base))
}

/// A linked worktree's git dirs, writable so `git commit` works there. `.git` must be readable:
/// the protected-path planner relies on the same answer.
fn worktree_git_dirs(workspace: &Path) -> Result<Vec<PathBuf>> {
    let layout = git::inspect(workspace).map_err(|e| {
        Error::new(
            Code::SandboxUnavailable,
            format!("cannot read {}: {e}", workspace.join(".git").display()),
        )
    })?;
    Ok(layout
        .map(|layout| git::linked_worktree_dirs(&layout))
        .unwrap_or_default())
}

/// A writable `/` would make the whole filesystem writable: that is Full access, which only a
/// person can confirm, not a sandbox. Checked here, where every spec is made, because a caller may
/// derive the workspace from a working directory that turned into `/` (deleted, or unreadable).
fn refuse_filesystem_root(canonical: &Path, what: &str) -> Result<()> {
    if canonical.parent().is_some() {
        return Ok(());
    }
    Err(Error::new(
        Code::SandboxUnavailable,
        format!(
            "the {what} is / (the whole filesystem): a workspace-write sandbox there would let \
             the program write every file; choices: run from a project directory or name one \
             with --workspace, or have a person confirm Full access (no sandbox)"
        ),
    ))
}

fn canonical_dir(dir: &Path, what: &str) -> Result<PathBuf> {
    open_dir(dir, what).map(|(path, _)| path)
}

/// A directory's identity (device and inode), as first opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirId {
    pub dev: u64,
    pub ino: u64,
}

/// Opens `dir` once and returns the canonical path of what was opened and its identity.
///
/// The path is resolved one component at a time, each opened relative to the directory before it
/// (so no rename can redirect a step already taken), and read back from the final descriptor. A
/// symlink on the way is followed only where nothing but the caller can change it: one in a
/// directory others may write (world-writable, owned by someone but the caller and root, or
/// beneath `/tmp` or `/var/tmp`, which sandboxed processes share) is refused, since whoever can
/// write there could swap it for one to anywhere between two lookups.
pub fn open_dir(dir: &Path, what: &str) -> Result<(PathBuf, DirId)> {
    use std::os::fd::AsFd;
    let fail = |e: std::io::Error| Error::usage(format!("{what} {}: {e}", dir.display()));
    let absolute = std::path::absolute(dir).map_err(fail)?;
    let mut current = std::fs::File::open("/")
        .map(std::os::fd::OwnedFd::from)
        .map_err(fail)?;
    let mut pending: std::collections::VecDeque<std::ffi::OsString> = components(&absolute);
    let mut links = 0;
    while let Some(name) = pending.pop_front() {
        let next = crate::sys::open_component(current.as_fd(), &name).map_err(fail)?;
        let st = crate::sys::fstat(next.as_fd()).map_err(fail)?;
        if st.st_mode & libc::S_IFMT != libc::S_IFLNK {
            current = next;
            continue;
        }
        links += 1;
        let parent = crate::sys::fstat(current.as_fd()).map_err(fail)?;
        let here = std::fs::read_link(crate::sys::proc_fd_path(&current)).map_err(fail)?;
        // Sandboxed processes (a contained agent, a line) share /tmp and /var/tmp: nothing
        // beneath them is trusted to stay as it is, whoever owns it.
        let others_may_write = parent.st_mode & libc::S_IWOTH != 0
            || (parent.st_uid != crate::sys::geteuid() && parent.st_uid != 0)
            || is_beneath_a_temp_dir(&here);
        if others_may_write || links > 40 {
            return Err(Error::new(
                Code::SandboxUnavailable,
                format!(
                    "the {what} {} is reached through the symlink {} in a directory another user \
                     may change, who could swap it for one to anywhere; name the directory itself",
                    dir.display(),
                    here.join(&name).display()
                ),
            ));
        }
        let target = crate::sys::read_link_at(current.as_fd(), &name).map_err(fail)?;
        let mut rest = components(&target);
        rest.extend(pending);
        pending = rest;
        if target.is_absolute() {
            current = std::fs::File::open("/")
                .map(std::os::fd::OwnedFd::from)
                .map_err(fail)?;
        }
    }
    let st = crate::sys::fstat(current.as_fd()).map_err(fail)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        return Err(Error::new(
            Code::Usage,
            format!("{what} {} is not a directory", dir.display()),
        ));
    }
    let canonical = std::fs::read_link(crate::sys::proc_fd_path(&current)).map_err(fail)?;
    Ok((
        canonical,
        DirId {
            dev: st.st_dev,
            ino: st.st_ino,
        },
    ))
}

/// The normal components of a path (`..` kept: it is resolved against the opened directory).
fn components(path: &Path) -> std::collections::VecDeque<std::ffi::OsString> {
    path.components()
        .filter_map(|c| match c {
            std::path::Component::Normal(n) => Some(n.to_owned()),
            std::path::Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_access_is_refused() {
        let err = Policy::try_from(SandboxPolicy::FullAccess).unwrap_err();
        assert_eq!(err.code, Code::Usage);
        assert_eq!(Policy::parse("full-access").unwrap_err().code, Code::Usage);
        assert_eq!(Policy::parse("read-only").unwrap(), Policy::ReadOnly);
    }

    #[test]
    fn workspace_write_roots_include_workspace_and_tmp() {
        let dir = tempfile::tempdir().unwrap();
        let spec = Spec::new(SandboxPolicy::WorkspaceWrite, Some(dir.path())).unwrap();
        let roots = spec.writable_roots();
        assert_eq!(roots[0], std::fs::canonicalize(dir.path()).unwrap());
        assert_eq!(spec.workspace.as_deref(), Some(roots[0].as_path()));
        assert!(roots.contains(&PathBuf::from("/tmp")));
    }

    #[test]
    fn tmpdir_counts_only_beneath_a_temp_dir() {
        let var_tmp = tempfile::tempdir_in("/var/tmp").unwrap();
        assert!(is_beneath_a_temp_dir(
            &std::fs::canonicalize(var_tmp.path()).unwrap()
        ));
        assert!(is_beneath_a_temp_dir(Path::new("/tmp")));
        assert!(!is_beneath_a_temp_dir(Path::new("/usr")));
        assert!(!is_beneath_a_temp_dir(Path::new("/")));
        assert!(!is_beneath_a_temp_dir(Path::new("/tmpfoo")));
    }

    #[test]
    fn read_only_has_no_writable_roots() {
        let dir = tempfile::tempdir().unwrap();
        let spec = Spec::new(SandboxPolicy::ReadOnly, Some(dir.path())).unwrap();
        assert!(spec.writable_roots().is_empty());
        assert_eq!(
            spec.with_writable(dir.path()).unwrap_err().code,
            Code::Usage
        );
    }

    #[test]
    fn missing_writable_root_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let spec = Spec::new(SandboxPolicy::WorkspaceWrite, Some(dir.path()))
            .unwrap()
            .with_writable(&dir.path().join("not-there"))
            .unwrap();
        assert!(spec.writable.is_empty());
    }

    #[test]
    fn the_filesystem_root_is_never_writable() {
        let root = Path::new("/");
        let error = Spec::new(SandboxPolicy::WorkspaceWrite, Some(root)).unwrap_err();
        assert_eq!(error.code, Code::SandboxUnavailable);
        assert!(
            error.reason.contains("whole filesystem"),
            "{}",
            error.reason
        );
        let dir = tempfile::tempdir().unwrap();
        let spec = Spec::new(SandboxPolicy::WorkspaceWrite, Some(dir.path())).unwrap();
        assert_eq!(
            spec.with_writable(root).unwrap_err().code,
            Code::SandboxUnavailable
        );
        // Read-only writes nothing there: `/` is a fine workspace for it.
        assert!(Spec::new(SandboxPolicy::ReadOnly, Some(root)).is_ok());
    }

    #[test]
    fn for_cwd_finds_git_toplevel() {
        let dir = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(dir.path()).unwrap().join("proj");
        std::fs::create_dir_all(top.join(".git")).unwrap();
        std::fs::create_dir_all(top.join("sub")).unwrap();
        let anchors = Anchors::default();
        let spec =
            Spec::for_cwd(SandboxPolicy::WorkspaceWrite, &top.join("sub"), &anchors).unwrap();
        assert_eq!(spec.workspace, Some(top));
        let plain = std::fs::canonicalize(dir.path()).unwrap();
        let spec = Spec::for_cwd(SandboxPolicy::WorkspaceWrite, &plain, &anchors).unwrap();
        assert_eq!(spec.workspace, None);
        assert!(spec.no_workspace.is_some());
    }

    #[test]
    fn run_user_is_never_a_temp_dir() {
        assert!(!is_beneath_a_temp_dir(Path::new("/run/user/0")));
    }
}
