//! `wrap`'s private mount namespace (the agent's side): shellgate over the shells, the hook files
//! on a tmpfs. The sandbox itself builds its tree in [`crate::launch`].
//!
//! Root (with `CAP_SYS_ADMIN`) gets a plain mount namespace; anyone else gets a user namespace
//! that maps only their own uid and gid, which is enough to own a mount namespace. Everything is
//! marked as a *slave* first so no mount made here propagates back to the host. Mount targets are
//! opened with `RESOLVE_NO_SYMLINKS` and mounted through `/proc/self/fd/N`, so a path cannot be
//! swapped for a symlink between the check and the mount.

use crate::error::{Code, Error, Result};
use crate::sys;
use serde::Serialize;
use std::io;
use std::path::Path;

/// See [`shellgate_core::own_env`], where every one of shellgate's variables is listed with its trust.
pub use crate::own_env::NO_NAMESPACES_ENV;

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
    if crate::process_env::process_env().no_namespaces {
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

/// `statvfs`'s `ST_RELATIME` (the kernel's value; the libc crate names it for glibc only).
const ST_RELATIME: libc::c_ulong = 4096;

/// `statvfs` flags translated to the `MS_*` flags a remount must repeat.
fn kept_flags(st: libc::c_ulong) -> libc::c_ulong {
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st_flag, _)| st & st_flag != 0)
        .fold(0, |acc, (_, ms_flag)| acc | ms_flag)
}

/// `wrap`: mounts a fresh tmpfs on `path` (inside the namespace).
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

fn mount_error(path: &Path, what: &str, e: &io::Error) -> Error {
    let hint = if e.raw_os_error() == Some(libc::ELOOP) {
        " (a symlink appeared in the path)"
    } else {
        ""
    };
    Error::new(
        Code::SandboxUnavailable,
        format!(
            "cannot set up {} in the private mount namespace: {what} failed: {e}{hint}",
            path.display()
        ),
    )
}

/// `wrap`: puts `source` (a file) over `target` (an existing file), read-only, in this private
/// mount namespace. Both paths are opened without following symlinks in any component, so the
/// caller passes canonical paths.
pub fn bind_file_read_only(source: &Path, target: &Path) -> Result<()> {
    bind_file(source, target)?;
    remount_read_only(target)
}

/// `wrap`: puts `source` (a file) over `target` (an existing file), as writable as `source` is,
/// in this private mount namespace (the agent's own global config, see `wrap::agents`). Both
/// paths are opened without following symlinks.
pub fn bind_file(source: &Path, target: &Path) -> Result<()> {
    let from = sys::open_path_no_symlinks(source).map_err(|e| mount_error(source, "open", &e))?;
    let to = sys::open_path_no_symlinks(target).map_err(|e| mount_error(target, "open", &e))?;
    sys::mount(
        Some(&sys::proc_fd_path(&from)),
        &sys::proc_fd_path(&to),
        None,
        libc::MS_BIND,
        None,
    )
    .map_err(|e| mount_error(target, "bind", &e))
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
        let st = libc::ST_NOSUID | libc::ST_NODEV | ST_RELATIME;
        assert_eq!(
            kept_flags(st),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_RELATIME
        );
        assert_eq!(kept_flags(0), 0);
    }
}
