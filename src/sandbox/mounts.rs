//! The private mount namespace: read-only binds for protected paths, pins against renames, and
//! read-only's private temp dir.
//!
//! Root (with `CAP_SYS_ADMIN`) gets a plain mount namespace; anyone else gets a user namespace
//! that maps only their own uid and gid, which is enough to own a mount namespace. Everything is
//! marked as a *slave* first so no mount made here propagates back to the host. Mount targets are
//! opened with `RESOLVE_NO_SYMLINKS` and mounted through `/proc/self/fd/N`, so a path cannot be
//! swapped for a symlink between the check and the mount.

use crate::error::{Code, Error, Result};
use crate::sandbox::policy::TempDirs;
use crate::sandbox::protected::Plan;
use crate::sandbox::sys;
use serde::Serialize;
use std::io;
use std::path::{Path, PathBuf};

/// Environment variable that makes the launcher behave as if no mount namespace could be
/// created (for tests of the fail-closed path). Like the ABI seam it can only take away.
pub const NO_NAMESPACES_ENV: &str = "SHELLGATE_SANDBOX_NO_NAMESPACES";

/// How the private mount namespace was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Namespace {
    /// `unshare(CLONE_NEWNS)` with `CAP_SYS_ADMIN` (root).
    Mount,
    /// `unshare(CLONE_NEWUSER | CLONE_NEWNS)`, mapping only the caller's uid and gid.
    UserAndMount,
}

/// Enters a private mount namespace, or says why it could not (one sentence).
pub fn enter() -> std::result::Result<Namespace, String> {
    if std::env::var_os(NO_NAMESPACES_ENV).is_some() {
        return Err(format!(
            "mount namespaces are disabled by {NO_NAMESPACES_ENV}"
        ));
    }
    let namespace = match sys::unshare(libc::CLONE_NEWNS) {
        Ok(()) => Namespace::Mount,
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
            enter_user_namespace().map_err(|e| {
                format!(
                    "cannot create a user namespace for a private mount namespace ({e}); user \
                     namespaces may be disabled (user.max_user_namespaces, \
                     kernel.unprivileged_userns_clone, AppArmor's \
                     apparmor_restrict_unprivileged_userns) or this is a nested sandbox"
                )
            })?;
            Namespace::UserAndMount
        }
        Err(e) => return Err(format!("cannot create a private mount namespace: {e}")),
    };
    // Stop mounts made from here on from propagating to the host's mount namespace.
    sys::mount(
        None,
        Path::new("/"),
        None,
        libc::MS_REC | libc::MS_SLAVE,
        None,
    )
    .map_err(|e| format!("cannot make the mount namespace private: {e}"))?;
    Ok(namespace)
}

fn enter_user_namespace() -> io::Result<()> {
    let (uid, gid) = (sys::geteuid(), sys::getegid());
    sys::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS)?;
    // An unprivileged gid_map needs setgroups denied first (user_namespaces(7)).
    match std::fs::write("/proc/self/setgroups", "deny") {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1\n"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1\n"))
}

/// Makes the plan's mounts. The caller has entered the namespace.
pub fn apply(plan: &Plan) -> Result<()> {
    for pin in &plan.pins {
        bind(pin, true)?;
    }
    for target in &plan.read_only {
        // Recursive, so mounts beneath a protected path stay visible (`wrap` keeps a read-only
        // tmpfs inside shellgate's state directory); they keep their own flags.
        bind(target, true)?;
        remount_read_only(target)?;
    }
    rechdir()
}

fn bind(path: &Path, recursive: bool) -> Result<()> {
    let fd = sys::open_path_no_symlinks(path).map_err(|e| mount_error(path, "open", &e))?;
    let at = sys::proc_fd_path(&fd);
    let flags = libc::MS_BIND | if recursive { libc::MS_REC } else { 0 };
    sys::mount(Some(&at), &at, None, flags, None).map_err(|e| mount_error(path, "bind", &e))
}

fn remount_read_only(path: &Path) -> Result<()> {
    // Re-open: the path now resolves to the new bind mount, which is what gets remounted.
    let fd = sys::open_path_no_symlinks(path).map_err(|e| mount_error(path, "open", &e))?;
    let at = sys::proc_fd_path(&fd);
    let current = sys::mount_flags(&at).map_err(|e| mount_error(path, "statvfs", &e))?;
    // A remount in a user namespace must keep the flags it cannot change (nosuid, nodev, ...).
    let flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | kept_flags(current);
    sys::mount(None, &at, None, flags, None).map_err(|e| mount_error(path, "remount", &e))?;
    let now = sys::mount_flags(path).map_err(|e| mount_error(path, "statvfs", &e))?;
    if now & libc::ST_RDONLY == 0 {
        return Err(Error::new(
            Code::SandboxUnavailable,
            format!(
                "{} is still writable after the read-only remount",
                path.display()
            ),
        ));
    }
    Ok(())
}

/// `statvfs` flags translated to the `MS_*` flags a remount must repeat.
fn kept_flags(st: libc::c_ulong) -> libc::c_ulong {
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st_flag, _)| st & st_flag != 0)
        .fold(0, |acc, (_, ms_flag)| acc | ms_flag)
}

/// The working directory was resolved before the mounts; resolve it again so relative paths go
/// through the pins and read-only binds rather than the mounts underneath them. If that fails
/// (the directory was removed, a path too long), the program would start *under* the binds:
/// inside a protected directory, `echo x > pre-commit` would reach the writable one. Refuse.
fn rechdir() -> Result<()> {
    let refuse = |what: String, e: io::Error| {
        Error::new(
            Code::SandboxUnavailable,
            format!(
                "{what}: {e}; the program would start beneath the read-only protected paths \
                 instead of on them; choices: run it from an existing directory"
            ),
        )
    };
    let cwd = std::env::current_dir()
        .map_err(|e| refuse("cannot read the working directory".into(), e))?;
    std::env::set_current_dir(&cwd).map_err(|e| {
        refuse(
            format!("cannot re-enter the working directory {}", cwd.display()),
            e,
        )
    })
}

/// The fixed, per-user mount point of read-only's private temp dir: an empty `0700` directory on
/// the host, with a fresh tmpfs over it inside each sandbox.
pub fn private_tmp_mount_point() -> Result<PathBuf> {
    let uid = sys::geteuid();
    let path = TempDirs::base().join(format!(".shellgate-private-{uid}"));
    match std::fs::create_dir(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(tmp_error(&path, &e.to_string())),
    }
    check_private_dir(&path, uid)?;
    Ok(path)
}

fn check_private_dir(path: &Path, uid: u32) -> Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = path
        .symlink_metadata()
        .map_err(|e| tmp_error(path, &e.to_string()))?;
    if !meta.is_dir() || meta.uid() != uid {
        return Err(tmp_error(path, "not a directory owned by this user"));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| tmp_error(path, &e.to_string()))?;
    }
    Ok(())
}

/// Mounts a fresh tmpfs on the private temp mount point (inside the namespace).
pub fn mount_private_tmp(path: &Path) -> Result<()> {
    let fd = sys::open_path_no_symlinks(path).map_err(|e| mount_error(path, "open", &e))?;
    let at = sys::proc_fd_path(&fd);
    sys::mount(
        Some(Path::new("tmpfs")),
        &at,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some("mode=0700"),
    )
    .map_err(|e| mount_error(path, "mount tmpfs on", &e))
}

/// Without a mount namespace (e.g. a read-only sandbox nested in another sandbox), read-only's
/// private temp dir is a fresh directory instead; it is left behind when the program exits.
pub fn fresh_private_dir() -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = TempDirs::base();
    let pid = std::process::id();
    for attempt in 0..100u32 {
        let path = base.join(format!("shellgate-ro-{pid}-{attempt}"));
        match std::fs::DirBuilder::new().mode(0o700).create(&path) {
            Ok(()) => return Ok(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(tmp_error(&path, &e.to_string())),
        }
    }
    Err(tmp_error(&base, "no free name for a private temp dir"))
}

fn mount_error(path: &Path, what: &str, e: &io::Error) -> Error {
    let hint = if e.raw_os_error() == Some(libc::ELOOP) {
        " (a symlink appeared in the path)"
    } else {
        ""
    };
    Error::new(
        Code::SandboxUnavailable,
        format!(
            "cannot make protected path {} read-only: {what} failed: {e}{hint}",
            path.display()
        ),
    )
}

fn tmp_error(path: &Path, why: &str) -> Error {
    Error::new(
        Code::SandboxUnavailable,
        format!(
            "cannot prepare the private temp dir {}: {why}",
            path.display()
        ),
    )
}

/// `wrap`: puts `source` (a file) over `target` (an existing file), read-only, in this private
/// mount namespace. Both paths are opened without following symlinks in any component, so the
/// caller passes canonical paths.
pub fn bind_file_read_only(source: &Path, target: &Path) -> Result<()> {
    let from = sys::open_path_no_symlinks(source).map_err(|e| mount_error(source, "open", &e))?;
    let to = sys::open_path_no_symlinks(target).map_err(|e| mount_error(target, "open", &e))?;
    sys::mount(
        Some(&sys::proc_fd_path(&from)),
        &sys::proc_fd_path(&to),
        None,
        libc::MS_BIND,
        None,
    )
    .map_err(|e| mount_error(target, "bind", &e))?;
    remount_read_only(target)
}

/// `wrap`: a read-only remount of the tmpfs at `path`, once its files are in place.
pub fn remount_tmpfs_read_only(path: &Path) -> Result<()> {
    let fd = sys::open_path_no_symlinks(path).map_err(|e| mount_error(path, "open", &e))?;
    let at = sys::proc_fd_path(&fd);
    let flags = libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
    sys::mount(None, &at, None, flags, Some("mode=0755"))
        .map_err(|e| mount_error(path, "remount read-only", &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remount_keeps_locked_flags() {
        let st = libc::ST_NOSUID | libc::ST_NODEV | libc::ST_RELATIME;
        assert_eq!(
            kept_flags(st),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_RELATIME
        );
        assert_eq!(kept_flags(0), 0);
    }
}
