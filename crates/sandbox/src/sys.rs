//! Thin wrappers around the Linux calls the launcher makes, so every `unsafe` block lives in one
//! file with the reason it is sound. Each wrapper returns `io::Result` and adds no policy; the
//! one rule about errors lives here too: only `ENOENT`/`ENOTDIR` mean "does not exist".

use super::raw;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

fn cstring(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// A libc call's result: `-1` is the error in `errno` (from an `int`, or `syscall`'s `long`).
fn check(ret: impl Into<i64>) -> io::Result<()> {
    if ret.into() == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `Ok(None)` for an answer that says the path does not exist (`ENOENT`, or `ENOTDIR`: a
/// component is not a directory, so it cannot exist either); any other error stays an error.
pub fn missing_as_none<T>(result: io::Result<T>) -> io::Result<Option<T>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(e) if is_missing(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether an error means "does not exist" rather than "could not be checked".
pub fn is_missing(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

/// `unshare(2)`.
pub fn unshare(flags: libc::c_int) -> io::Result<()> {
    // SAFETY: unshare takes only an integer and changes this process's namespaces; the launcher
    // is single-threaded when it calls this (CLONE_NEWUSER would fail otherwise).
    check(unsafe { libc::unshare(flags) })
}

/// `mount(2)`; `source`/`fstype` may be absent (remount, propagation changes).
pub fn mount(
    source: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> io::Result<()> {
    let source = source.map(cstring).transpose()?;
    let target = cstring(target)?;
    let fstype = fstype.map(|s| CString::new(s).unwrap_or_default());
    let data = data.map(|s| CString::new(s).unwrap_or_default());
    let ptr = |c: &Option<CString>| c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: every pointer is either null (allowed by mount(2) for these arguments) or points
    // to a NUL-terminated string that outlives the call.
    check(unsafe {
        libc::mount(
            ptr(&source),
            target.as_ptr(),
            ptr(&fstype),
            flags,
            ptr(&data).cast(),
        )
    })
}

/// Opens `path` with `O_PATH`, refusing a symlink in *any* component, so a path checked for
/// symlinks cannot be swapped for one before it is mounted on ([`raw::open_no_symlinks`]:
/// `openat2`, or a walk of `openat`s inside a sandbox that refuses `openat2`).
pub fn open_path_no_symlinks(path: &Path) -> io::Result<OwnedFd> {
    let c_path = cstring(path)?;
    let fd = raw::open_no_symlinks(&c_path, 0).map_err(io::Error::from_raw_os_error)?;
    // SAFETY: `fd` was just returned by the kernel and is owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens `relative` beneath the directory `dir` with `O_PATH`, refusing `..`, absolute paths and
/// symlinks ([`raw::open_dir_beneath`]).
pub fn open_beneath(dir: std::os::fd::BorrowedFd, relative: &Path) -> io::Result<OwnedFd> {
    let relative = if relative.as_os_str().is_empty() {
        Path::new(".")
    } else {
        relative
    };
    let c_path = cstring(relative)?;
    let fd =
        raw::open_dir_beneath(dir.as_raw_fd(), &c_path).map_err(io::Error::from_raw_os_error)?;
    // SAFETY: `fd` was just returned by the kernel and is owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The `/proc/self/fd/N` path of an fd: mounting on it acts on exactly the opened file.
pub fn proc_fd_path(fd: &OwnedFd) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// Whether `path` is the root of a mount in this mount namespace (`STATX_ATTR_MOUNT_ROOT`).
pub fn is_mount_root(path: &Path) -> io::Result<bool> {
    let c_path = cstring(path)?;
    // SAFETY: statx is plain old data; an all-zero value is valid.
    let mut buf: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `buf` is a valid, writable statx struct and `c_path` is NUL-terminated.
    check(unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c_path.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
            libc::STATX_BASIC_STATS,
            &mut buf,
        )
    })?;
    let bit = libc::STATX_ATTR_MOUNT_ROOT as u64;
    if buf.stx_attributes_mask & bit == 0 {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "kernel does not report STATX_ATTR_MOUNT_ROOT",
        ));
    }
    Ok(buf.stx_attributes & bit != 0)
}

/// The flags (`ST_*`) of the mount `path` is on, symlinks followed ([`raw::mount_flags`] on an
/// `O_PATH` handle).
pub fn mount_flags(path: &Path) -> io::Result<u64> {
    use std::os::unix::fs::OpenOptionsExt;
    let handle = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(path)?;
    raw::mount_flags(handle.as_raw_fd()).map_err(io::Error::from_raw_os_error)
}

/// `capget`/`capset` header and data (linux/capability.h, version 3: two 32-bit words).
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// The calling thread's (effective, permitted, inheritable) capability sets as 64-bit masks.
pub fn capget() -> io::Result<(u64, u64, u64)> {
    let mut header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: header and a two-element data array, the layout capget expects for version 3.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut header as *mut CapHeader,
            data.as_mut_ptr(),
        )
    };
    if ret != 0 {
        return Err(io::Error::last_os_error());
    }
    let join = |lo: u32, hi: u32| u64::from(lo) | (u64::from(hi) << 32);
    Ok((
        join(data[0].effective, data[1].effective),
        join(data[0].permitted, data[1].permitted),
        join(data[0].inheritable, data[1].inheritable),
    ))
}

pub fn geteuid() -> u32 {
    // SAFETY: geteuid cannot fail and touches no memory.
    unsafe { libc::geteuid() }
}

pub fn getegid() -> u32 {
    // SAFETY: getegid cannot fail and touches no memory.
    unsafe { libc::getegid() }
}

/// The home directory the password database gives `uid` (`getpwuid_r`), or `None` when it has no
/// entry for it.
pub fn passwd_home(uid: u32) -> io::Result<Option<std::path::PathBuf>> {
    let mut buf = vec![0u8; 1024];
    loop {
        // SAFETY: passwd is plain old data (integers and pointers); all-zero is a valid value.
        let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: `entry` and `found` are valid for writes, and `buf` is a writable buffer of the
        // length passed; the strings in `entry` point into `buf`, which outlives their use below.
        let ret = unsafe {
            libc::getpwuid_r(
                uid,
                &mut entry,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut found,
            )
        };
        match ret {
            libc::ERANGE if buf.len() < 1 << 20 => buf.resize(buf.len() * 2, 0),
            // No entry: glibc answers 0 and a null result; ENOENT is allowed by POSIX too.
            0 | libc::ENOENT if found.is_null() || entry.pw_dir.is_null() => return Ok(None),
            0 => {
                // SAFETY: pw_dir is a NUL-terminated string inside `buf` (checked non-null above).
                let dir = unsafe { std::ffi::CStr::from_ptr(entry.pw_dir) };
                let dir = std::ffi::OsStr::from_bytes(dir.to_bytes());
                return Ok(Some(std::path::PathBuf::from(dir)));
            }
            errno => return Err(io::Error::from_raw_os_error(errno)),
        }
    }
}

/// `fstat` of a raw fd's file type bits, or `None` when the fd is not open.
pub fn fd_file_type(fd: RawFd) -> Option<libc::mode_t> {
    // SAFETY: stat is plain old data; an all-zero value is valid.
    let mut buf: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `buf` is a valid, writable stat struct; an invalid fd yields EBADF.
    let ret = unsafe { libc::fstat(fd, &mut buf) };
    (ret == 0).then_some(buf.st_mode & libc::S_IFMT)
}

/// `F_GETFL` status flags of a raw fd.
pub fn fd_status_flags(fd: RawFd) -> Option<libc::c_int> {
    // SAFETY: F_GETFL takes and returns integers; an invalid fd yields EBADF.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    (flags != -1).then_some(flags)
}

/// Writes all of `bytes` to a raw fd (best effort; used only for the failure report).
pub fn write_raw(fd: RawFd, bytes: &[u8]) {
    let mut rest = bytes;
    while !rest.is_empty() {
        // SAFETY: `rest` is a valid readable buffer of the given length.
        let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
        if n <= 0 {
            return;
        }
        rest = &rest[n as usize..];
    }
}

/// `fstat(2)` of an open descriptor.
pub fn fstat(fd: std::os::fd::BorrowedFd) -> io::Result<libc::stat> {
    // SAFETY: stat is plain old data; an all-zero value is valid.
    let mut buf: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `buf` is a valid, writable stat struct; the descriptor is borrowed, so open.
    check(unsafe { libc::fstat(fd.as_raw_fd(), &mut buf) })?;
    Ok(buf)
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`: `None` when the name does not exist.
pub fn fstatat_nofollow(
    dir: std::os::fd::BorrowedFd,
    name: &std::ffi::OsStr,
) -> io::Result<Option<libc::stat>> {
    let c_name = CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name contains a NUL byte"))?;
    // SAFETY: stat is plain old data; an all-zero value is valid.
    let mut buf: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `buf` is writable, `c_name` NUL-terminated, the descriptor borrowed (open).
    let ret = unsafe {
        libc::fstatat(
            dir.as_raw_fd(),
            c_name.as_ptr(),
            &mut buf,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    missing_as_none(check(ret).map(|()| buf))
}

/// `renameat(dir, from, dir, to)` within one directory, refusing to replace an existing `to`.
pub fn rename_at(
    dir: std::os::fd::BorrowedFd,
    from: &std::ffi::OsStr,
    to: &std::ffi::OsStr,
) -> io::Result<()> {
    let nul = |_| io::Error::new(io::ErrorKind::InvalidInput, "name contains a NUL byte");
    let from = CString::new(from.as_bytes()).map_err(nul)?;
    let to = CString::new(to.as_bytes()).map_err(nul)?;
    // The system call itself: not every libc has a `renameat2` wrapper (musl before 1.2.5).
    // SAFETY: both names are NUL-terminated and outlive the call; the descriptor is open.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            dir.as_raw_fd(),
            from.as_ptr(),
            dir.as_raw_fd(),
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    check(ret)
}

/// Whether this process already runs with `no_new_privs` and a seccomp filter (as it does inside
/// shellgate's own sandbox), read from `/proc/self/status`.
pub fn confined() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .map(str::to_owned)
    };
    field("NoNewPrivs:").as_deref() == Some("1") && field("Seccomp:").as_deref() == Some("2")
}

/// Whether a seccomp filter this process runs under refuses to make namespaces: evidence from the
/// kernel, not from the environment, that a sandbox launched here cannot make its own. The probe
/// is an `unshare` the kernel itself would reject (`CLONE_VFORK` is no `unshare` flag: `EINVAL`,
/// nothing changes) but whose `CLONE_NEWNS` a filter refuses first (`EPERM`).
pub fn namespaces_refused() -> bool {
    // SAFETY: unshare takes no pointer; with an invalid flag it changes nothing.
    let ret = unsafe { libc::unshare(libc::CLONE_NEWNS | libc::CLONE_VFORK) };
    ret == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether this kernel keeps a `pid_max` per PID namespace (Linux 6.14): only then may a line's
/// init write its own. Before, the value is the whole machine's, and root writing it would lower
/// the host's limit.
pub fn per_namespace_pid_max() -> bool {
    // SAFETY: utsname is plain old data; uname fills it in.
    let mut name: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `name` is a writable utsname.
    if unsafe { libc::uname(&mut name) } != 0 {
        return false;
    }
    // SAFETY: uname NUL-terminates the release string within its array.
    let release = unsafe { std::ffi::CStr::from_ptr(name.release.as_ptr()) };
    kernel_at_least(&release.to_string_lossy(), (6, 14))
}

/// Whether a kernel release string (`6.18.44-fc`, `6.1.0-28-amd64`) is at least `version`.
fn kernel_at_least(release: &str, version: (u32, u32)) -> bool {
    let mut numbers = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|part| part.parse::<u32>().ok());
    match (numbers.next().flatten(), numbers.next().flatten()) {
        (Some(major), Some(minor)) => (major, minor) >= version,
        _ => false,
    }
}

/// The disposition of `signal` now: whether it is ignored.
pub fn is_ignored(signal: libc::c_int) -> bool {
    // SAFETY: sigaction is plain old data; all-zero is valid. A null new action only queries.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: `old` is writable; a null `act` changes nothing.
    let ret = unsafe { libc::sigaction(signal, std::ptr::null(), &mut old) };
    ret == 0 && old.sa_sigaction == libc::SIG_IGN
}

/// Whether root's capability rules are already switched off and locked for this process
/// (`SECBIT_NOROOT` and its lock: inside another sandbox), so they need not (and cannot) be set.
pub fn root_locked() -> bool {
    const NOROOT_AND_LOCK: libc::c_int = 0b11;
    // SAFETY: PR_GET_SECUREBITS takes no pointer and only reads this thread's securebits.
    let bits = unsafe { libc::prctl(libc::PR_GET_SECUREBITS, 0, 0, 0, 0) };
    bits >= 0 && bits & NOROOT_AND_LOCK == NOROOT_AND_LOCK
}

/// `openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)`: one path component, not followed if it
/// is a symlink (the descriptor then refers to the symlink itself; [`raw::open_component`]).
pub fn open_component(dir: std::os::fd::BorrowedFd, name: &std::ffi::OsStr) -> io::Result<OwnedFd> {
    let c_name = CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name contains a NUL byte"))?;
    let fd =
        raw::open_component(dir.as_raw_fd(), &c_name, 0).map_err(io::Error::from_raw_os_error)?;
    // SAFETY: `fd` was just returned by the kernel and is owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The target of the symlink `name` in `dir`.
pub fn read_link_at(
    dir: std::os::fd::BorrowedFd,
    name: &std::ffi::OsStr,
) -> io::Result<std::path::PathBuf> {
    let c_name = CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name contains a NUL byte"))?;
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: `buf` is writable for its length; the name is NUL-terminated; the descriptor open.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            c_name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(std::path::PathBuf::from(std::ffi::OsString::from_vec(buf)))
}

/// `openat(dir, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode)`:
/// a file in `dir` opened for writing, created when missing; a symlink is refused (`ELOOP`) and a
/// FIFO does not block the open. Nothing is truncated: the caller checks what it got first.
pub fn open_for_writing_in(
    dir: std::os::fd::BorrowedFd,
    name: &std::ffi::OsStr,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    let c_name = CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "name contains a NUL byte"))?;
    let flags = libc::O_WRONLY
        | libc::O_CREAT
        | libc::O_NOFOLLOW
        | libc::O_NONBLOCK
        | libc::O_NOCTTY
        | libc::O_CLOEXEC;
    // SAFETY: `c_name` is NUL-terminated and outlives the call; the descriptor is borrowed (open);
    // the mode is passed as the variadic argument O_CREAT reads.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c_name.as_ptr(),
            flags,
            mode as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by the kernel and is owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A close-on-exec copy of `fd` numbered 10 or above.
pub fn dup_high(fd: std::os::fd::BorrowedFd) -> io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC takes and returns integers; the descriptor is borrowed, so open.
    let new = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 10) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` was just returned by the kernel and is owned by no one else.
    Ok(unsafe { OwnedFd::from_raw_fd(new) })
}

/// Receives one descriptor sent with `SCM_RIGHTS` on `socket` without blocking: `None` when
/// nothing (or no descriptor) is there.
pub fn receive_fd(socket: std::os::fd::BorrowedFd) -> io::Result<Option<OwnedFd>> {
    use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([RawFd; 1]);
    let message = match recvmsg::<()>(
        socket.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_CMSG_CLOEXEC,
    ) {
        Ok(message) => message,
        Err(nix::errno::Errno::EAGAIN) => return Ok(None),
        Err(e) => return Err(io::Error::from(e)),
    };
    for control in message.cmsgs().map_err(io::Error::from)? {
        if let ControlMessageOwned::ScmRights(fds) = control {
            let mut owned: Vec<OwnedFd> = fds
                .into_iter()
                // SAFETY: the kernel just installed these descriptors in this process for this
                // message; nothing else owns them.
                .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) })
                .collect();
            return Ok(owned.pop());
        }
    }
    Ok(None)
}

/// `pidfd_open(pid, 0)`: a descriptor that becomes readable when the process `pid` ends.
pub fn pidfd_open(pid: libc::pid_t) -> io::Result<OwnedFd> {
    // SAFETY: a raw syscall with two integer arguments; on success it returns a new descriptor
    // this process owns and nothing else refers to.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by the kernel for this process and is owned only here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// A stack for a process started with `CLONE_VM` (see [`super::raw::spawn_on_stack`]): its own
/// anonymous mapping, with an inaccessible guard page below it, so an overflow faults instead of
/// writing over the parent's memory. Unmapped on drop: keep it until the process using it is gone.
#[derive(Debug)]
pub struct Stack {
    base: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned by this value alone; moving it to another thread moves ownership.
unsafe impl Send for Stack {}

impl Stack {
    /// `size` bytes of stack (rounded up to pages) above one guard page.
    pub fn new(size: usize) -> io::Result<Stack> {
        // SAFETY: sysconf only reads a system constant.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let len = size.div_ceil(page) * page + page;
        // SAFETY: a new private anonymous mapping at an address the kernel chooses; no existing
        // memory is touched.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = Stack {
            base: base.cast(),
            len,
        };
        // SAFETY: the lowest page of the mapping just made, owned by `stack`.
        check(unsafe { libc::mprotect(base, page, libc::PROT_NONE) })?;
        Ok(stack)
    }

    /// The top of the stack (it grows down), for `clone`.
    pub fn top(&self) -> *mut u8 {
        self.base.wrapping_add(self.len)
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: the mapping this value made and owns; nothing uses it any more (see the type).
        unsafe {
            libc::munmap(self.base.cast(), self.len);
        }
    }
}

/// Every signal blocked on the calling thread until dropped, when the mask it had is restored.
/// A process cloned meanwhile starts with every signal blocked (as `posix_spawn` does it): none of
/// this process's handlers can run in it before it sets its own dispositions.
pub struct SignalsBlocked {
    before: libc::sigset_t,
}

impl SignalsBlocked {
    pub fn all() -> SignalsBlocked {
        // SAFETY: sigset_t is plain data; sigfillset and sigemptyset initialise the two sets, and
        // pthread_sigmask only reads the first and writes the second (this thread's own mask).
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut before: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::sigemptyset(&mut before);
            libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut before);
            SignalsBlocked { before }
        }
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: restores this thread's own mask from the set saved above.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.before, std::ptr::null_mut());
        }
    }
}
