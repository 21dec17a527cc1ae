//! The Landlock layer: one ruleset that handles every filesystem right of the effective ABI, TCP
//! bind/connect when the network is off, and signal / abstract-socket scoping, all in the same
//! ruleset (a second ruleset for the network would be a second, separately stacked domain).
//!
//! `CompatLevel::HardRequirement` everywhere: the launcher has already refused to run when the
//! ABI cannot express the policy, so any compatibility downgrade here would be a bug, and the
//! crate reports it as an error instead of silently enforcing less (a ruleset created under a
//! hard requirement is enforced fully or not at all).
//!
//! The ruleset is built by the parent, from descriptors it opened once; the sandbox's program
//! process enforces it (`landlock_restrict_self`) just before its exec.

use crate::abi::{DetectedAbi, Feature};
use crate::error::{Code, Error, Result};
use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Character devices every program may read, write and `ioctl`.
pub const DEVICES: [&str; 7] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
];

/// Directories of terminal devices: new ptys (`openpty`), where the line sees the host's
/// `/dev` (no private one: a nested sandbox, or the mount layer dropped). With a private `/dev`
/// the host's is out of sight, and its own devpts gets its rule inside.
const TERMINAL_DIRS: [&str; 1] = ["/dev/pts"];

/// What the ruleset grants beyond "read and execute everything".
#[derive(Debug, Default)]
pub struct Grants<'a> {
    /// Directories beneath which everything is allowed, opened by the caller (the rule applies to
    /// the opened inode: no path is looked up again).
    pub writable: Vec<BorrowedFd<'a>>,
    /// The terminal devices of the launcher's stdin/stdout/stderr (`/dev/pts/3`, `/dev/ttyS0`):
    /// rules on their nodes, which the private `/dev` binds as `console`.
    pub terminals: Vec<PathBuf>,
    /// Keep TCP bind/connect unrestricted.
    pub network: bool,
    /// Without the network: TCP connections to these ports only.
    pub tcp_ports: Vec<u16>,
    /// Signals to processes outside the domain are allowed (the person's own processes, see
    /// [`crate::Spec::host_processes`]); abstract sockets stay scoped.
    pub signals: bool,
}

/// A ruleset ready to be enforced in the sandbox's program process, which calls
/// `landlock_restrict_self` on [`Ruleset::fd`] after adding the rules only it can add (the private
/// `/dev/shm` exists only inside).
#[derive(Debug)]
pub struct Prepared {
    pub fd: OwnedFd,
    /// Every filesystem right of the effective ABI, as the kernel's bit mask: what the private
    /// `/dev/shm` gets.
    pub all_fs_access: u64,
    /// What a terminal directory gets (read, write, list, truncate, device ioctl): the private
    /// `/dev/pts`.
    pub terminal_dir_access: u64,
}

/// Builds the ruleset (without enforcing it: the caller is not the sandboxed process).
pub fn prepare(abi: &DetectedAbi, grants: &Grants) -> Result<Prepared> {
    let created = build(abi, grants)?;
    let fd: Option<OwnedFd> = created.into();
    let fd = fd.ok_or_else(|| {
        Error::new(
            Code::SandboxUnavailable,
            format!("Landlock gave no ruleset at ABI {}", abi.effective),
        )
    })?;
    Ok(Prepared {
        fd,
        all_fs_access: AccessFs::from_all(abi.landlock_abi()).bits(),
        terminal_dir_access: device_access(abi.landlock_abi()).bits(),
    })
}

fn build(abi: &DetectedAbi, grants: &Grants) -> Result<RulesetCreated> {
    let version = abi.landlock_abi();
    let all = AccessFs::from_all(version);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(landlock_error)?;
    if !grants.network && abi.has(Feature::Tcp) {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(version))
            .map_err(landlock_error)?;
    }
    if abi.has(Feature::Scope) {
        ruleset = ruleset
            .scope(if grants.signals {
                Scope::from_all(version) & !Scope::Signal
            } else {
                Scope::from_all(version)
            })
            .map_err(landlock_error)?;
    }
    let mut created = ruleset.create().map_err(landlock_error)?;
    created = allow(created, Path::new("/"), AccessFs::from_read(version))?;
    for root in &grants.writable {
        created = created
            .add_rule(PathBeneath::new(*root, all))
            .map_err(landlock_error)?;
    }
    if !grants.network {
        for port in &grants.tcp_ports {
            created = created
                .add_rule(NetPort::new(*port, AccessNet::ConnectTcp))
                .map_err(landlock_error)?;
        }
    }
    let device = device_access(version);
    let files = DEVICES.iter().map(Path::new);
    for path in files.chain(grants.terminals.iter().map(PathBuf::as_path)) {
        created = allow_if_present(created, path, device & file_rights())?;
    }
    for dir in TERMINAL_DIRS.iter().map(Path::new) {
        created = allow_if_present(created, dir, device)?;
    }
    Ok(created)
}

/// Read, write and ioctl, plus listing for the terminal directories.
fn device_access(version: landlock::ABI) -> BitFlags<AccessFs> {
    let wanted = AccessFs::ReadFile
        | AccessFs::WriteFile
        | AccessFs::ReadDir
        | AccessFs::Truncate
        | AccessFs::IoctlDev;
    wanted & AccessFs::from_all(version)
}

/// A rule beneath `path`. `access` must suit the file type (directory-only rights on a file are
/// an error in the kernel): callers know it — roots are directories, devices are files.
fn allow(
    ruleset: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated> {
    let fd = PathFd::new(path).map_err(|e| {
        Error::new(
            Code::SandboxUnavailable,
            format!("cannot open {} for a Landlock rule: {e}", path.display()),
        )
    })?;
    ruleset
        .add_rule(PathBeneath::new(fd, access))
        .map_err(landlock_error)
}

/// Like [`allow`], but a missing device (no `/dev/full` in a minimal container) is not granted.
fn allow_if_present(
    ruleset: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated> {
    match PathFd::new(path) {
        Ok(fd) => ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map_err(landlock_error),
        Err(_) => Ok(ruleset),
    }
}

fn file_rights() -> BitFlags<AccessFs> {
    AccessFs::Execute
        | AccessFs::WriteFile
        | AccessFs::ReadFile
        | AccessFs::Truncate
        | AccessFs::IoctlDev
}

fn landlock_error(e: impl std::fmt::Display) -> Error {
    Error::new(Code::SandboxUnavailable, format!("Landlock: {e}"))
}
