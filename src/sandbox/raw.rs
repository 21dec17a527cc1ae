//! The system calls made between `clone` and `execve`, where only async-signal-safe code may run.
//!
//! The caller of the sandbox may be multi-threaded (a tokio runtime for the reviewer, the `wrap`
//! broker's threads): after `clone` the child has a copy of every other thread's memory, including
//! locks those threads held, so it must not allocate, lock, or call anything that might. Every
//! function here is one raw system call (or a loop around `write`), takes only pointers to data
//! the parent prepared before the clone, and reports failure as the raw `errno`. Nothing here
//! allocates, formats or panics.

use std::ffi::CStr;
use std::os::fd::RawFd;

/// A failed system call's `errno`.
pub type Errno = i32;

fn errno() -> Errno {
    // SAFETY: `__errno_location` returns the calling thread's errno slot, always valid to read;
    // reading it is async-signal-safe.
    unsafe { *libc::__errno_location() }
}

fn check(ret: libc::c_long) -> Result<libc::c_long, Errno> {
    if ret < 0 { Err(errno()) } else { Ok(ret) }
}

fn fd_of(ret: libc::c_long) -> Result<RawFd, Errno> {
    // A descriptor always fits an int; anything else would be a kernel bug.
    check(ret).map(|fd| fd as RawFd)
}

/// `openat2(dir, path, {flags, resolve})`.
pub fn openat2(dir: RawFd, path: &CStr, flags: libc::c_int, resolve: u64) -> Result<RawFd, Errno> {
    // SAFETY: open_how is plain old data (three u64 fields); all-zero is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.resolve = resolve;
    // SAFETY: `how` is a fully initialised open_how of the size passed; `path` is NUL-terminated
    // and outlives the call. The kernel only reads both.
    fd_of(unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            path.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    })
}

/// `fstat(fd)`: `(st_dev, st_ino, st_mode)`.
pub fn fstat(fd: RawFd) -> Result<(u64, u64, u32), Errno> {
    // SAFETY: stat is plain old data; all-zero is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid, writable stat buffer on this stack frame.
    check(unsafe { libc::fstat(fd, &mut st) } as libc::c_long)?;
    Ok((st.st_dev, st.st_ino, st.st_mode))
}

/// `open_tree(dir, path, flags)`: a detached copy of a mount tree (with `OPEN_TREE_CLONE`).
pub fn open_tree(dir: RawFd, path: &CStr, flags: u32) -> Result<RawFd, Errno> {
    // SAFETY: integer arguments and a NUL-terminated path that outlives the call.
    fd_of(unsafe { libc::syscall(libc::SYS_open_tree, dir, path.as_ptr(), flags) })
}

/// `move_mount(from, "", to, "", F_EMPTY_PATH | T_EMPTY_PATH)`: attaches the mount `from` on
/// exactly the object `to` refers to, with no path lookup that a rename could redirect.
pub fn move_mount_fds(from: RawFd, to: RawFd) -> Result<(), Errno> {
    let flags = libc::MOVE_MOUNT_F_EMPTY_PATH | libc::MOVE_MOUNT_T_EMPTY_PATH;
    // SAFETY: two descriptors, two empty NUL-terminated strings (static), integer flags.
    check(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            from,
            c"".as_ptr(),
            to,
            c"".as_ptr(),
            flags,
        )
    })
    .map(drop)
}

/// `mount_setattr(dir, path, flags, {attr_set, attr_clr, propagation})`.
pub fn mount_setattr(
    dir: RawFd,
    path: &CStr,
    flags: u32,
    attr_set: u64,
    propagation: u64,
) -> Result<(), Errno> {
    let attr = libc::mount_attr {
        attr_set,
        attr_clr: 0,
        propagation,
        userns_fd: 0,
    };
    // SAFETY: `attr` is a fully initialised mount_attr of the size passed; `path` outlives the
    // call. The kernel only reads both.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dir,
            path.as_ptr(),
            flags,
            &attr as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        )
    })
    .map(drop)
}

/// A new, detached instance of filesystem `fstype` (`fsopen` + `fsconfig` + `fsmount`), with one
/// optional string option.
pub fn new_fs(fstype: &CStr, option: Option<(&CStr, &CStr)>, attrs: u32) -> Result<RawFd, Errno> {
    // SAFETY: NUL-terminated name; the flags are integers.
    let fs = fd_of(unsafe { libc::syscall(libc::SYS_fsopen, fstype.as_ptr(), 0u32) })?;
    let configured = (|| {
        if let Some((key, value)) = option {
            // SAFETY: key and value are NUL-terminated strings that outlive the call.
            check(unsafe {
                libc::syscall(
                    libc::SYS_fsconfig,
                    fs,
                    libc::FSCONFIG_SET_STRING,
                    key.as_ptr(),
                    value.as_ptr(),
                    0,
                )
            })?;
        }
        // SAFETY: FSCONFIG_CMD_CREATE takes no pointers (null key and value).
        check(unsafe {
            libc::syscall(
                libc::SYS_fsconfig,
                fs,
                libc::FSCONFIG_CMD_CREATE,
                std::ptr::null::<libc::c_char>(),
                std::ptr::null::<libc::c_void>(),
                0,
            )
        })?;
        // SAFETY: integer arguments only.
        fd_of(unsafe { libc::syscall(libc::SYS_fsmount, fs, libc::FSMOUNT_CLOEXEC, attrs) })
    })();
    close(fs);
    configured
}

/// `mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL)`: nothing mounted from here on propagates
/// to the host's mount namespace.
pub fn make_root_slave() -> Result<(), Errno> {
    // SAFETY: null source, type and data are allowed for a propagation change; "/" is static.
    check(unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_SLAVE,
            std::ptr::null(),
        )
    } as libc::c_long)
    .map(drop)
}

/// `openat(dir, name, O_CREAT | O_EXCL | O_WRONLY, mode)`, closed again: an empty file.
pub fn create_empty_file(dir: RawFd, name: &CStr, mode: libc::mode_t) -> Result<(), Errno> {
    let flags = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC;
    // SAFETY: NUL-terminated name; integer flags and mode.
    let fd = fd_of(unsafe { libc::openat(dir, name.as_ptr(), flags, mode) } as libc::c_long)?;
    close(fd);
    Ok(())
}

/// `mkdirat(dir, name, mode)`.
pub fn mkdirat(dir: RawFd, name: &CStr, mode: libc::mode_t) -> Result<(), Errno> {
    // SAFETY: NUL-terminated name; integer mode.
    check(unsafe { libc::mkdirat(dir, name.as_ptr(), mode) } as libc::c_long).map(drop)
}

/// `close(fd)`, errors ignored (there is nothing to do about them here).
pub fn close(fd: RawFd) {
    // SAFETY: closing a descriptor this process owns; no Rust object owns it in the child.
    unsafe {
        libc::close(fd);
    }
}

/// `close_range(first, u32::MAX, CLOSE_RANGE_CLOEXEC)`: every descriptor from `first` on is closed
/// by the coming `execve`.
pub fn cloexec_from(first: u32) -> Result<(), Errno> {
    // SAFETY: integer arguments only.
    check(unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    })
    .map(drop)
}

/// Closes every descriptor from `first` on except those in `keep` (negative entries ignored),
/// with `close_range` over the gaps: no allocation.
pub fn close_all_except<const N: usize>(first: RawFd, mut keep: [RawFd; N]) {
    keep.sort_unstable();
    let mut from = first;
    for fd in keep {
        if fd < from {
            continue;
        }
        if fd > from {
            close_range(from as u32, (fd - 1) as u32);
        }
        from = fd + 1;
    }
    close_range(from as u32, u32::MAX);
}

fn close_range(first: u32, last: u32) {
    // SAFETY: integer arguments only; closes descriptors no Rust object owns in this child.
    unsafe {
        libc::syscall(libc::SYS_close_range, first, last, 0u32);
    }
}

/// `dup2(from, to)` (a no-op when they are equal, which must then have `FD_CLOEXEC` cleared).
pub fn dup2(from: RawFd, to: RawFd) -> Result<(), Errno> {
    if from == to {
        // SAFETY: F_SETFD with an integer flag.
        return check(unsafe { libc::fcntl(from, libc::F_SETFD, 0) } as libc::c_long).map(drop);
    }
    // SAFETY: two descriptors; dup2 clears FD_CLOEXEC on the new one.
    check(unsafe { libc::dup2(from, to) } as libc::c_long).map(drop)
}

/// `fchdir(fd)`.
pub fn fchdir(fd: RawFd) -> Result<(), Errno> {
    // SAFETY: one descriptor.
    check(unsafe { libc::fchdir(fd) } as libc::c_long).map(drop)
}

/// Reads one byte (retrying `EINTR`): `false` at end of file or on an error.
pub fn read_one(fd: RawFd) -> bool {
    let mut byte = 0u8;
    loop {
        // SAFETY: one byte of this stack frame, the length passed.
        let n = unsafe { libc::read(fd, (&raw mut byte).cast(), 1) };
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        return n == 1;
    }
}

/// `setpgid(pid, pgid)`.
pub fn setpgid(pid: libc::pid_t, pgid: libc::pid_t) -> Result<(), Errno> {
    // SAFETY: two integers; no memory is involved.
    check(unsafe { libc::setpgid(pid, pgid) } as libc::c_long).map(drop)
}

/// Writes all of `bytes` (retrying short writes and `EINTR`).
pub fn write_all(fd: RawFd, bytes: &[u8]) {
    let mut rest = bytes;
    while !rest.is_empty() {
        // SAFETY: `rest` is a valid readable buffer of the length passed.
        let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        if n <= 0 {
            return;
        }
        rest = &rest[n as usize..];
    }
}

/// Writes `bytes` to an already-open file (`/proc/self/uid_map` and the like) named by `path`.
pub fn write_file(path: &CStr, bytes: &[u8]) -> Result<(), Errno> {
    // SAFETY: NUL-terminated path; integer flags.
    let fd = fd_of(
        unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) } as libc::c_long,
    )?;
    // SAFETY: `bytes` is a valid readable buffer of the length passed.
    let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    let result = if n < 0 {
        Err(errno())
    } else if n as usize != bytes.len() {
        Err(libc::EIO)
    } else {
        Ok(())
    };
    close(fd);
    result
}

/// `prctl(option, arg2, 0, 0, 0)` with integer arguments.
pub fn prctl(option: libc::c_int, arg2: libc::c_ulong) -> Result<libc::c_int, Errno> {
    // SAFETY: the options used (PDEATHSIG, NO_NEW_PRIVS, SECUREBITS, CAP_AMBIENT) take integers.
    let ret = unsafe { libc::prctl(option, arg2, 0 as libc::c_ulong, 0 as libc::c_ulong, 0) };
    check(ret as libc::c_long).map(|r| r as libc::c_int)
}

/// `capset` with every set empty, then `capget` to confirm nothing is left.
pub fn drop_capabilities() -> Result<(), Errno> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let empty = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: a version-3 header and a two-element data array, the layout capset expects.
    check(unsafe { libc::syscall(libc::SYS_capset, &mut header as *mut Header, empty.as_ptr()) })?;
    let mut now = empty;
    header.version = VERSION_3;
    // SAFETY: as above, with a writable array for capget to fill.
    check(unsafe {
        libc::syscall(
            libc::SYS_capget,
            &mut header as *mut Header,
            now.as_mut_ptr(),
        )
    })?;
    if now
        .iter()
        .any(|d| d.effective | d.permitted | d.inheritable != 0)
    {
        return Err(libc::EPERM);
    }
    Ok(())
}

/// `landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, {access, parent_fd})`.
pub fn landlock_add_path_rule(ruleset: RawFd, parent: RawFd, access: u64) -> Result<(), Errno> {
    #[repr(C, packed)]
    struct PathBeneathAttr {
        allowed_access: u64,
        parent_fd: i32,
    }
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: parent,
    };
    const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
    // SAFETY: `attr` is a fully initialised, packed landlock_path_beneath_attr (the kernel's
    // layout); the kernel only reads it.
    check(unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    })
    .map(drop)
}

/// `landlock_restrict_self(ruleset, flags)`.
pub fn landlock_restrict_self(ruleset: RawFd, flags: u32) -> Result<(), Errno> {
    // SAFETY: integer arguments only.
    check(unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, flags) }).map(drop)
}

/// `seccomp(SECCOMP_SET_MODE_FILTER, 0, prog)`.
pub fn seccomp_filter(program: &libc::sock_fprog) -> Result<(), Errno> {
    const SECCOMP_SET_MODE_FILTER: libc::c_uint = 1;
    // SAFETY: `program` points to a sock_fprog whose filter array the parent built and keeps
    // alive (the child's copy of the parent's memory); the kernel copies it in.
    check(unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            0u32,
            program as *const libc::sock_fprog,
        )
    })
    .map(drop)
}

/// `seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, prog)`: the filter, and
/// the listener descriptor its reported calls go to.
pub fn seccomp_filter_with_listener(program: &libc::sock_fprog) -> Result<RawFd, Errno> {
    const SECCOMP_SET_MODE_FILTER: libc::c_uint = 1;
    // SAFETY: as for `seccomp_filter`; with NEW_LISTENER the kernel returns a new descriptor.
    fd_of(unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as libc::c_uint,
            program as *const libc::sock_fprog,
        )
    })
}

/// Sends descriptor `fd` over the unix socket `socket` (`SCM_RIGHTS`, one byte of data), with a
/// control buffer on the stack.
pub fn send_fd(socket: RawFd, fd: RawFd) -> Result<(), Errno> {
    #[repr(C)]
    struct Control {
        header: libc::cmsghdr,
        fd: RawFd,
    }
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: cmsghdr and msghdr are plain old data; all-zero is valid before filling them in.
    let mut control: Control = unsafe { std::mem::zeroed() };
    // SAFETY: CMSG_LEN only computes a length.
    control.header.cmsg_len = unsafe { libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) } as _;
    control.header.cmsg_level = libc::SOL_SOCKET;
    control.header.cmsg_type = libc::SCM_RIGHTS;
    control.fd = fd;
    // SAFETY: as above.
    let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
    message.msg_iov = &mut iov;
    message.msg_iovlen = 1;
    message.msg_control = (&mut control as *mut Control).cast();
    message.msg_controllen = std::mem::size_of::<Control>() as _;
    // SAFETY: every pointer in `message` points to a live stack value of the size given.
    check(unsafe { libc::sendmsg(socket, &message, 0) } as libc::c_long).map(drop)
}

/// Sets `signal`'s disposition to the default or to ignored.
pub fn set_disposition(signal: libc::c_int, ignore: bool) {
    let handler = if ignore { libc::SIG_IGN } else { libc::SIG_DFL };
    // SAFETY: installs no code as a handler (only SIG_DFL or SIG_IGN); async-signal-safe.
    unsafe {
        libc::signal(signal, handler);
    }
}

/// Unblocks every signal (the mask survives `execve`).
pub fn unblock_all_signals() {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it; sigprocmask only reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
}

/// The raw `clone(flags | SIGCHLD)` system call with no new stack: like `fork`, the child continues
/// on a copy of the caller's stack. `flags` may create namespaces.
pub fn clone(flags: libc::c_ulong) -> Result<libc::pid_t, Errno> {
    let flags = flags | libc::SIGCHLD as libc::c_ulong;
    // SAFETY: without CLONE_VM and with a null stack, clone behaves like fork: the child gets a
    // copy of the address space and returns 0 here. Every pointer argument (parent and child tid,
    // tls; their order differs between x86_64 and aarch64) is null. The caller runs only
    // async-signal-safe code in the child.
    let ret = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    check(ret).map(|pid| pid as libc::pid_t)
}

/// Starts `entry(arg)` in a new process that shares this one's memory until it execs or exits
/// (`CLONE_VM | CLONE_VFORK`, as `posix_spawn` does), on `stack`: no page table is copied, and
/// the caller is suspended until then. `entry` must only run async-signal-safe code and must
/// not return to the caller's frames (it ends in `execve` or `_exit`).
pub fn spawn_on_stack(
    entry: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    stack: &mut [u8],
    arg: *mut libc::c_void,
) -> Result<libc::pid_t, Errno> {
    // The stack grows down on every architecture we support: its top, 16-byte aligned.
    let top = (stack.as_mut_ptr() as usize + stack.len()) & !0xf;
    let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD;
    // SAFETY: glibc's clone wrapper only makes the system call and calls `entry` on the new stack
    // (no locks, no allocation); `stack` is memory of this address space that nothing else uses
    // while the child runs (the caller is suspended by CLONE_VFORK until the child execs or
    // exits); `arg` is passed through untouched.
    let pid = unsafe { libc::clone(entry, top as *mut libc::c_void, flags, arg) };
    if pid < 0 { Err(errno()) } else { Ok(pid) }
}

/// `waitpid(pid, &status, flags)`: `(pid, status)`; retries `EINTR`.
pub fn waitpid(pid: libc::pid_t, flags: libc::c_int) -> Result<(libc::pid_t, libc::c_int), Errno> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: `status` is a valid writable int on this stack frame.
        let ret = unsafe { libc::waitpid(pid, &mut status, flags) };
        if ret < 0 && errno() == libc::EINTR {
            continue;
        }
        return check(ret as libc::c_long).map(|p| (p as libc::pid_t, status));
    }
}

/// `kill(pid, signal)`; `Ok` when at least one process was signalled.
pub fn kill(pid: libc::pid_t, signal: libc::c_int) -> Result<(), Errno> {
    // SAFETY: integer arguments only.
    check(unsafe { libc::kill(pid, signal) } as libc::c_long).map(drop)
}

/// `poll` on one descriptor with a zero timeout: its `revents`.
pub fn poll_now(fd: RawFd, events: libc::c_short) -> libc::c_short {
    let mut pfd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: one valid pollfd on this stack frame.
    let n = unsafe { libc::poll(&mut pfd, 1, 0) };
    if n > 0 { pfd.revents } else { 0 }
}

/// `execve(path, argv, envp)`; returns only on failure.
pub fn execve(path: &CStr, argv: &[*const libc::c_char], envp: &[*const libc::c_char]) -> Errno {
    // SAFETY: `path` is NUL-terminated; `argv` and `envp` are null-terminated arrays of pointers
    // to NUL-terminated strings that the parent prepared and that live in this address space
    // until the exec replaces it.
    unsafe {
        libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr());
    }
    errno()
}

/// `_exit(status)`: ends the child without running destructors or atexit handlers (the parent's).
pub fn exit(status: libc::c_int) -> ! {
    // SAFETY: _exit is async-signal-safe and never returns.
    unsafe { libc::_exit(status) }
}
