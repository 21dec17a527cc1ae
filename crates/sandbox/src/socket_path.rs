//! A unix socket's path that fits `sun_path`, however deep the directory holding it: the broker's
//! socket (wrap) and the sockets a line is granted (the supervisor's connects) are reached so.

use crate::error::{Code, Error, Result};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// A socket address is at most 108 bytes (`sun_path`), and a home or state directory can be
/// longer. A long path is reached through its directory's descriptor instead
/// (`/proc/self/fd/N/NAME`), opened here and kept open by the caller for as long as the path is
/// used: there is then no limit on where the state directory lives.
pub fn reachable_path(path: &Path) -> Result<(PathBuf, Option<OwnedFd>)> {
    const SUN_PATH_MAX: usize = 107;
    if path.as_os_str().len() <= SUN_PATH_MAX {
        return Ok((path.to_path_buf(), None));
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(Error::internal(format!(
            "the broker socket path {} has no directory",
            path.display()
        )));
    };
    let fd: OwnedFd = std::fs::File::open(dir).map(OwnedFd::from).map_err(|e| {
        Error::new(
            Code::AuditUnavailable,
            format!("cannot open the broker's directory {}: {e}", dir.display()),
        )
    })?;
    let short = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd())).join(name);
    Ok((short, Some(fd)))
}
