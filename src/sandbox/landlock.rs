//! The Landlock layer: one ruleset that handles every filesystem right of the effective ABI, TCP
//! bind/connect when the network is off, and signal / abstract-socket scoping, all in the same
//! ruleset (a second ruleset for the network would be a second, separately stacked domain).
//!
//! `CompatLevel::HardRequirement` everywhere: the launcher has already refused to run when the
//! ABI cannot express the policy, so any compatibility downgrade here would be a bug, and the
//! crate reports it as an error instead of silently enforcing less. The final `RulesetStatus`
//! must be `FullyEnforced`; `PartiallyEnforced` is treated as a failure.

use crate::error::{Code, Error, Result};
use crate::sandbox::abi::{DetectedAbi, Feature};
use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
};
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

/// Directories of terminal devices: new ptys (`openpty`) and the caller's own terminal.
const TERMINAL_DIRS: [&str; 1] = ["/dev/pts"];

/// What the ruleset grants beyond "read and execute everything".
#[derive(Debug, Clone, Default)]
pub struct Grants {
    /// Directories beneath which everything is allowed.
    pub writable: Vec<PathBuf>,
    /// The terminal devices of the launcher's stdin/stdout/stderr (e.g. `/dev/ttyS0`), which may
    /// live outside `/dev/pts`.
    pub terminals: Vec<PathBuf>,
    /// Keep TCP bind/connect unrestricted.
    pub network: bool,
}

/// Builds and enforces the ruleset on the calling thread. The caller must have set
/// `no_new_privs` (the kernel requires it for an unprivileged caller).
pub fn restrict(abi: &DetectedAbi, grants: &Grants) -> Result<()> {
    let ruleset = build(abi, grants)?;
    // The launcher set no_new_privs itself (and verifies it); no second prctl here.
    let status = ruleset
        .no_new_privs(false)
        .restrict_self()
        .map_err(landlock_error)?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok(()),
        other => Err(Error::new(
            Code::SandboxUnavailable,
            format!(
                "Landlock enforced the ruleset only {other:?} at ABI {}",
                abi.effective
            ),
        )),
    }
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
            .scope(Scope::from_all(version))
            .map_err(landlock_error)?;
    }
    let mut created = ruleset.create().map_err(landlock_error)?;
    created = allow(created, Path::new("/"), AccessFs::from_read(version))?;
    for root in &grants.writable {
        created = allow(created, root, all)?;
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
