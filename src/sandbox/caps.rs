//! Leaving no privilege behind: `no_new_privs`, and no capabilities in any set, even for root.
//!
//! The effective, permitted, inheritable and ambient sets are emptied. What stops the program
//! from getting capabilities back at `execve` is `no_new_privs`: with it set, the kernel caps the
//! new permitted set to the old one (`cap_bprm_creds_from_file`: `LSM_UNSAFE_NO_NEW_PRIVS`), which
//! is empty, whatever the file capabilities or setuid bits and even for uid 0. On top of that,
//! root's exec rule is switched off and locked (`SECBIT_NOROOT`, `SECBIT_NO_SETUID_FIXUP`,
//! `SECBIT_NO_CAP_AMBIENT_RAISE`). The bounding set is left as it is: under `no_new_privs` it can
//! only ever limit a gain that cannot happen, and emptying it costs one `prctl` per capability
//! (~40 syscalls, a measurable share of the launch time). [`verify`] re-checks the result.

use crate::error::{Code, Error, Result};
use crate::sandbox::sys;

const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
const SECBIT_KEEP_CAPS_LOCKED: libc::c_ulong = 1 << 5;
const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;

const LOCKED_BITS: libc::c_ulong = SECBIT_NOROOT
    | SECBIT_NOROOT_LOCKED
    | SECBIT_NO_SETUID_FIXUP
    | SECBIT_NO_SETUID_FIXUP_LOCKED
    | SECBIT_KEEP_CAPS_LOCKED
    | SECBIT_NO_CAP_AMBIENT_RAISE
    | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

/// Drops every capability this process holds or could regain through exec.
pub fn drop_all() -> Result<()> {
    let (_, permitted, _) = sys::capget().map_err(|e| caps_error("capget", &e))?;
    // Root regains capabilities at exec unless SECBIT_NOROOT is set; inside an outer sandbox it
    // already is (and locked), and there are no capabilities left to change it with.
    let root_unlocked = sys::geteuid() == 0 && securebits() & SECBIT_NOROOT == 0;
    if permitted != 0 || root_unlocked {
        sys::prctl(libc::PR_SET_SECUREBITS, LOCKED_BITS)
            .map_err(|e| caps_error("setting securebits", &e))?;
    }
    // Old kernels without ambient capabilities answer EINVAL: there is nothing to clear then.
    match sys::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
    ) {
        Err(e) if e.raw_os_error() != Some(libc::EINVAL) => {
            return Err(caps_error("clearing ambient capabilities", &e));
        }
        _ => {}
    }
    sys::capset_empty().map_err(|e| caps_error("capset", &e))
}

/// Sets `no_new_privs`: no setuid bit or file capability can raise privileges after exec.
pub fn set_no_new_privs() -> Result<()> {
    sys::prctl(libc::PR_SET_NO_NEW_PRIVS, 1)
        .map(drop)
        .map_err(|e| caps_error("setting no_new_privs", &e))
}

/// Fails unless the program will start with no capability and `no_new_privs` set.
pub fn verify() -> Result<()> {
    let (effective, permitted, inheritable) =
        sys::capget().map_err(|e| caps_error("capget", &e))?;
    if effective | permitted | inheritable != 0 {
        return Err(Error::new(
            Code::SandboxUnavailable,
            format!(
                "the sandbox retained capabilities (effective {effective:#x}, permitted \
                 {permitted:#x}, inheritable {inheritable:#x})"
            ),
        ));
    }
    let no_new_privs = sys::prctl(libc::PR_GET_NO_NEW_PRIVS, 0).unwrap_or(0);
    if no_new_privs != 1 {
        return Err(Error::new(
            Code::SandboxUnavailable,
            "no_new_privs is not set",
        ));
    }
    if sys::geteuid() == 0 && securebits() & SECBIT_NOROOT == 0 {
        return Err(Error::new(
            Code::SandboxUnavailable,
            "root would regain capabilities at exec (SECBIT_NOROOT not set)",
        ));
    }
    Ok(())
}

fn securebits() -> libc::c_ulong {
    sys::prctl(libc::PR_GET_SECUREBITS, 0).map_or(0, |bits| bits as libc::c_ulong)
}

fn caps_error(what: &str, e: &std::io::Error) -> Error {
    Error::new(
        Code::SandboxUnavailable,
        format!("cannot drop privileges: {what} failed: {e}"),
    )
}
