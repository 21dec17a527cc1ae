//! The system calls made between `clone` and `execve`, where only async-signal-safe code may run.
//!
//! The sandbox's two processes share the parent's memory (`CLONE_VM`, see
//! [`crate::launch`]): no page table is copied, and the parent goes on running beside
//! them. So nothing here may allocate, lock, or write any memory but the caller's own stack — not
//! even `errno`: glibc's wrappers report failure through it, a thread-local variable, and these
//! processes run on the parent's thread pointer, so a wrapper would write the parent thread's
//! `errno` while that thread runs. Every function here is therefore one system call made with the
//! instruction itself ([`syscall`]), whose result comes back in a register as `-errno`; each takes
//! only pointers to data the parent prepared before the clone and keeps alive until the child is
//! gone. Nothing here allocates, formats or panics.

use std::ffi::CStr;
use std::os::fd::RawFd;

/// A failed system call's `errno`.
pub type Errno = i32;

/// The system call `number` with six arguments, made with the instruction itself: the kernel's
/// return value, `-errno` on failure. Touches no memory (no `errno`, no stack of its own).
///
/// # Safety
/// The arguments must be valid for that system call: every pointer among them points to memory
/// of the size and kind the kernel reads or writes, alive for the call.
#[cfg(target_arch = "x86_64")]
unsafe fn syscall(number: libc::c_long, args: [usize; 6]) -> isize {
    let ret: isize;
    // SAFETY: the x86_64 Linux system call convention: number in rax, arguments in rdi, rsi,
    // rdx, r10, r8, r9; the kernel returns in rax and clobbers rcx and r11 only. Memory is
    // accessed only as the caller's contract for this system call allows.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") number as isize => ret,
            in("rdi") args[0],
            in("rsi") args[1],
            in("rdx") args[2],
            in("r10") args[3],
            in("r8") args[4],
            in("r9") args[5],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack)
        );
    }
    ret
}

/// See the x86_64 version.
///
/// # Safety
/// As for the x86_64 version.
#[cfg(target_arch = "aarch64")]
unsafe fn syscall(number: libc::c_long, args: [usize; 6]) -> isize {
    let ret: isize;
    // SAFETY: the aarch64 Linux system call convention: number in x8, arguments in x0–x5; the
    // kernel returns in x0 and preserves every other register.
    unsafe {
        std::arch::asm!(
            "svc 0",
            in("x8") number,
            inlateout("x0") args[0] => ret,
            in("x1") args[1],
            in("x2") args[2],
            in("x3") args[3],
            in("x4") args[4],
            in("x5") args[5],
            options(nostack)
        );
    }
    ret
}

/// A system call's result: `Err(errno)` for the kernel's `-4095..=-1`.
fn check(ret: isize) -> Result<usize, Errno> {
    if (-4095..0).contains(&ret) {
        Err(-ret as Errno)
    } else {
        Ok(ret as usize)
    }
}

fn fd_of(ret: isize) -> Result<RawFd, Errno> {
    // A descriptor always fits an int; anything else would be a kernel bug.
    check(ret).map(|fd| fd as RawFd)
}

/// A pointer as a system call argument.
fn ptr<T>(p: *const T) -> usize {
    p as usize
}

/// An `int` argument, as the kernel reads it (the low 32 bits of the register).
fn int(value: libc::c_int) -> usize {
    value as isize as usize
}

/// `openat2(dir, path, {flags, resolve})`.
pub fn openat2(dir: RawFd, path: &CStr, flags: libc::c_int, resolve: u64) -> Result<RawFd, Errno> {
    openat2_mode(dir, path, flags, 0, resolve)
}

/// Announces the Landlock `ruleset` to a supervisor that makes this process's opens for writing:
/// `openat(ruleset, "", O_WRONLY)`, which fails (`ENOENT`) wherever nobody looks at it.
pub fn announce_ruleset(ruleset: RawFd) {
    let args = [
        int(ruleset),
        ptr(c"".as_ptr()),
        int(libc::O_WRONLY | libc::O_CLOEXEC),
        0,
        0,
        0,
    ];
    // SAFETY: openat with a NUL-terminated (empty) name that outlives the call; a descriptor it
    // might return is closed at once.
    if let Ok(fd) = fd_of(unsafe { syscall(libc::SYS_openat, args) }) {
        close(fd);
    }
}

/// `openat2(dir, path, {flags, mode, resolve})`: `mode` only with `O_CREAT` or `O_TMPFILE`.
pub fn openat2_mode(
    dir: RawFd,
    path: &CStr,
    flags: libc::c_int,
    mode: u64,
    resolve: u64,
) -> Result<RawFd, Errno> {
    // SAFETY: open_how is plain old data (three u64 fields); all-zero is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.mode = mode;
    how.resolve = resolve;
    let args = [
        int(dir),
        ptr(path.as_ptr()),
        ptr(&how),
        std::mem::size_of::<libc::open_how>(),
        0,
        0,
    ];
    // SAFETY: `how` is a fully initialised open_how of the size passed; `path` is NUL-terminated
    // and outlives the call. The kernel only reads both.
    fd_of(unsafe { syscall(libc::SYS_openat2, args) })
}

const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;
const RESOLVE_BENEATH: u64 = 0x08;
/// `openat2`'s flags: a handle. (Not `O_NOFOLLOW`: with `O_PATH` it would make `openat2` return a
/// trailing symlink itself instead of refusing it.)
const HANDLE_FLAGS: libc::c_int = libc::O_PATH | libc::O_CLOEXEC;
/// Each component of a walk: a handle, never followed if it is a symlink (checked after).
const COMPONENT_FLAGS: libc::c_int = HANDLE_FLAGS | libc::O_NOFOLLOW;

/// Opens the absolute `path` as an `O_PATH` handle (with `flags`, such as `O_DIRECTORY`),
/// refusing a symlink in any component, magic links included (`ELOOP`): `openat2` with
/// `RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`, or, where `openat2` is refused with `ENOSYS`
/// (inside a shellgate sandbox, whose filter refuses it), one `openat` per component, each
/// beneath the one before.
pub fn open_no_symlinks(path: &CStr, flags: libc::c_int) -> Result<RawFd, Errno> {
    let resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    match openat2(libc::AT_FDCWD, path, flags | HANDLE_FLAGS, resolve) {
        Err(libc::ENOSYS) => {
            let bytes = path.to_bytes();
            let Some(relative) = bytes.strip_prefix(b"/") else {
                return Err(libc::EINVAL);
            };
            walk(libc::AT_FDCWD, b"/", relative, flags, true)
        }
        result => result,
    }
}

/// Opens the directory `relative` beneath `dir` as an `O_PATH` handle, refusing `..`, an
/// absolute path (`EXDEV`) and symlinks (`ELOOP`): `openat2` with `RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS`, or a walk of `openat`s where `openat2` is refused with `ENOSYS`.
pub fn open_dir_beneath(dir: RawFd, relative: &CStr) -> Result<RawFd, Errno> {
    let flags = libc::O_DIRECTORY;
    let resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
    match openat2(dir, relative, flags | HANDLE_FLAGS, resolve) {
        Err(libc::ENOSYS) => {
            let bytes = relative.to_bytes();
            if bytes.starts_with(b"/") {
                return Err(libc::EXDEV);
            }
            walk(dir, b".", bytes, flags, false)
        }
        result => result,
    }
}

/// Opens `first` relative to `dir` (borrowed), then each `/`-separated component of `rest`
/// relative to the one before (each closed once the next is open); the last with `flags`, the
/// others as directories. A symlink anywhere is `ELOOP`; `..` is `EXDEV` unless `dotdot`.
fn walk(
    dir: RawFd,
    first: &[u8],
    rest: &[u8],
    flags: libc::c_int,
    dotdot: bool,
) -> Result<RawFd, Errno> {
    let rest = rest.split(|b| *b == b'/').filter(|n| !n.is_empty());
    let mut names = std::iter::once(first).chain(rest).peekable();
    // `dir` until the first component is open, then the descriptor this walk owns.
    let mut current = None;
    while let Some(name) = names.next() {
        let next = if name == b".." && !dotdot {
            Err(libc::EXDEV)
        } else {
            let wanted = if names.peek().is_some() {
                libc::O_DIRECTORY
            } else {
                flags
            };
            open_walked_component(current.unwrap_or(dir), name, wanted)
        };
        if let Some(fd) = current {
            close(fd);
        }
        current = Some(next?);
    }
    // `first` is always there, so the loop ran.
    current.ok_or(libc::EINVAL)
}

/// `openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC | flags)`: one path component as a
/// handle; a symlink is opened as itself.
pub fn open_component(dir: RawFd, name: &CStr, flags: libc::c_int) -> Result<RawFd, Errno> {
    let args = [
        int(dir),
        ptr(name.as_ptr()),
        int(flags | COMPONENT_FLAGS),
        0,
        0,
        0,
    ];
    // SAFETY: a NUL-terminated name and integer flags.
    fd_of(unsafe { syscall(libc::SYS_openat, args) })
}

/// One component of a walk ([`open_component`]), refusing a symlink (`ELOOP`) and, with
/// `O_DIRECTORY` in `flags`, anything but a directory (`ENOTDIR`).
fn open_walked_component(dir: RawFd, name: &[u8], flags: libc::c_int) -> Result<RawFd, Errno> {
    // NAME_MAX is 255: the name and its NUL fit, on this stack frame.
    let mut buf = [0u8; 256];
    let Some(slot) = buf.get_mut(..name.len()) else {
        return Err(libc::ENAMETOOLONG);
    };
    slot.copy_from_slice(name);
    let Ok(c_name) = CStr::from_bytes_until_nul(&buf) else {
        return Err(libc::ENAMETOOLONG);
    };
    // Opened without `O_DIRECTORY`, so that a symlink is always opened as itself and named as
    // one (`ELOOP`), then checked for being a directory when one is wanted.
    let fd = open_component(dir, c_name, flags & !libc::O_DIRECTORY)?;
    let refused = match fstat(fd) {
        Ok((_, _, mode)) if mode & libc::S_IFMT == libc::S_IFLNK => libc::ELOOP,
        Ok((_, _, mode))
            if flags & libc::O_DIRECTORY != 0 && mode & libc::S_IFMT != libc::S_IFDIR =>
        {
            libc::ENOTDIR
        }
        Ok(_) => return Ok(fd),
        Err(e) => e,
    };
    close(fd);
    Err(refused)
}

/// `fstat(fd)`: `(st_dev, st_ino, st_mode)`.
pub fn fstat(fd: RawFd) -> Result<(u64, u64, u32), Errno> {
    // SAFETY: stat is plain old data; all-zero is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let args = [
        int(fd),
        ptr(c"".as_ptr()),
        ptr(&raw mut st),
        int(libc::AT_EMPTY_PATH),
        0,
        0,
    ];
    // SAFETY: `newfstatat(fd, "", &st, AT_EMPTY_PATH)`: `st` is a writable stat buffer (the
    // kernel's layout on both architectures, which libc's `stat` is) on this stack frame.
    check(unsafe { syscall(libc::SYS_newfstatat, args) })?;
    Ok((st.st_dev, st.st_ino, st.st_mode))
}

/// The kernel's `struct statfs` on 64-bit architectures (asm-generic/statfs.h, which x86_64 and
/// aarch64 use): libc's own type hides `f_flags` on glibc.
#[repr(C)]
#[derive(Default)]
struct KernelStatfs {
    f_type: i64,
    f_bsize: i64,
    f_blocks: u64,
    f_bfree: u64,
    f_bavail: u64,
    f_files: u64,
    f_ffree: u64,
    f_fsid: [i32; 2],
    f_namelen: i64,
    f_frsize: i64,
    f_flags: i64,
    f_spare: [i64; 4],
}

/// `fstatfs(fd)`'s `f_flags`: the flags (`ST_RDONLY`, ...) of the mount `fd` is on.
pub fn mount_flags(fd: RawFd) -> Result<u64, Errno> {
    let mut st = KernelStatfs::default();
    let args = [int(fd), ptr(&raw mut st), 0, 0, 0, 0];
    // SAFETY: `fstatfs(fd, &st)`: `st` is a writable buffer of the kernel's statfs layout on this
    // stack frame.
    check(unsafe { syscall(libc::SYS_fstatfs, args) })?;
    Ok(st.f_flags as u64)
}

/// `open_tree(dir, path, flags)`: a detached copy of a mount tree (with `OPEN_TREE_CLONE`).
pub fn open_tree(dir: RawFd, path: &CStr, flags: u32) -> Result<RawFd, Errno> {
    let args = [int(dir), ptr(path.as_ptr()), flags as usize, 0, 0, 0];
    // SAFETY: integer arguments and a NUL-terminated path that outlives the call.
    fd_of(unsafe { syscall(libc::SYS_open_tree, args) })
}

/// `move_mount(from, "", to, "", F_EMPTY_PATH | T_EMPTY_PATH)`: attaches the mount `from` on
/// exactly the object `to` refers to, with no path lookup that a rename could redirect.
pub fn move_mount_fds(from: RawFd, to: RawFd) -> Result<(), Errno> {
    let flags = libc::MOVE_MOUNT_F_EMPTY_PATH | libc::MOVE_MOUNT_T_EMPTY_PATH;
    let args = [
        int(from),
        ptr(c"".as_ptr()),
        int(to),
        ptr(c"".as_ptr()),
        flags as usize,
        0,
    ];
    // SAFETY: two descriptors, two empty NUL-terminated strings (static), integer flags.
    check(unsafe { syscall(libc::SYS_move_mount, args) }).map(drop)
}

/// `mount_setattr(dir, path, flags, {attr_set, 0, propagation})`.
pub fn mount_setattr(
    dir: RawFd,
    path: &CStr,
    flags: u32,
    attr_set: u64,
    propagation: u64,
) -> Result<(), Errno> {
    mount_attrs(dir, path, flags, attr_set, 0, propagation)
}

/// `mount_setattr(dir, path, flags, {0, attr_clr, 0})`.
pub fn mount_clearattr(dir: RawFd, path: &CStr, flags: u32, attr_clr: u64) -> Result<(), Errno> {
    mount_attrs(dir, path, flags, 0, attr_clr, 0)
}

fn mount_attrs(
    dir: RawFd,
    path: &CStr,
    flags: u32,
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
) -> Result<(), Errno> {
    let attr = libc::mount_attr {
        attr_set,
        attr_clr,
        propagation,
        userns_fd: 0,
    };
    let args = [
        int(dir),
        ptr(path.as_ptr()),
        flags as usize,
        ptr(&attr),
        std::mem::size_of::<libc::mount_attr>(),
        0,
    ];
    // SAFETY: `attr` is a fully initialised mount_attr of the size passed; `path` outlives the
    // call. The kernel only reads both.
    check(unsafe { syscall(libc::SYS_mount_setattr, args) }).map(drop)
}

/// A new, detached instance of filesystem `fstype` (`fsopen` + `fsconfig` + `fsmount`), with
/// string options.
pub fn new_fs(fstype: &CStr, options: &[(&CStr, &CStr)], attrs: u32) -> Result<RawFd, Errno> {
    // SAFETY: NUL-terminated name; the flags are integers.
    let fs = fd_of(unsafe { syscall(libc::SYS_fsopen, [ptr(fstype.as_ptr()), 0, 0, 0, 0, 0]) })?;
    let configured = (|| {
        for (key, value) in options {
            let set = libc::FSCONFIG_SET_STRING as usize;
            let args = [int(fs), set, ptr(key.as_ptr()), ptr(value.as_ptr()), 0, 0];
            // SAFETY: key and value are NUL-terminated strings that outlive the call.
            check(unsafe { syscall(libc::SYS_fsconfig, args) })?;
        }
        let create = libc::FSCONFIG_CMD_CREATE as usize;
        // SAFETY: FSCONFIG_CMD_CREATE takes no pointers (null key and value).
        check(unsafe { syscall(libc::SYS_fsconfig, [int(fs), create, 0, 0, 0, 0]) })?;
        let args = [
            int(fs),
            libc::FSMOUNT_CLOEXEC as usize,
            attrs as usize,
            0,
            0,
            0,
        ];
        // SAFETY: integer arguments only.
        fd_of(unsafe { syscall(libc::SYS_fsmount, args) })
    })();
    close(fs);
    configured
}

/// `mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL)`: nothing mounted from here on propagates
/// to the host's mount namespace.
pub fn make_root_slave() -> Result<(), Errno> {
    let flags = (libc::MS_REC | libc::MS_SLAVE) as usize;
    let args = [0, ptr(c"/".as_ptr()), 0, flags, 0, 0];
    // SAFETY: null source, type and data are allowed for a propagation change; "/" is static.
    check(unsafe { syscall(libc::SYS_mount, args) }).map(drop)
}

/// `openat(dir, name, flags, mode)`.
fn openat(dir: RawFd, name: &CStr, flags: libc::c_int, mode: libc::mode_t) -> Result<RawFd, Errno> {
    let args = [
        int(dir),
        ptr(name.as_ptr()),
        int(flags),
        mode as usize,
        0,
        0,
    ];
    // SAFETY: NUL-terminated name that outlives the call; integer flags and mode.
    fd_of(unsafe { syscall(libc::SYS_openat, args) })
}

/// `openat(dir, name, O_CREAT | O_EXCL | O_WRONLY, mode)`, closed again: an empty file.
pub fn create_empty_file(dir: RawFd, name: &CStr, mode: libc::mode_t) -> Result<(), Errno> {
    let flags = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC;
    close(openat(dir, name, flags, mode)?);
    Ok(())
}

/// `openat(dir, name, O_CREAT | O_EXCL | O_WRONLY, mode)`, `bytes` written whole, closed: a new
/// file holding `bytes` (a short or failed write is an error, `EIO` when the kernel gave none).
pub fn create_file(dir: RawFd, name: &CStr, mode: libc::mode_t, bytes: &[u8]) -> Result<(), Errno> {
    let flags = libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC;
    let fd = openat(dir, name, flags, mode)?;
    let mut rest = bytes;
    let mut result = Ok(());
    while !rest.is_empty() {
        match write(fd, rest) {
            Ok(n) if n > 0 => rest = &rest[n..],
            Ok(_) => {
                result = Err(libc::EIO);
                break;
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    close(fd);
    result
}

/// `prlimit64(0, resource, {value, value}, NULL)`: this process's soft and hard limit.
pub fn set_own_rlimit(resource: u32, value: u64) -> Result<(), Errno> {
    let limit = [value, value];
    let args = [0, resource as usize, ptr(&limit), 0, 0, 0];
    // SAFETY: `limit` is a `struct rlimit64` (two u64) on this stack frame, read only; no old
    // limit is asked for.
    check(unsafe { syscall(libc::SYS_prlimit64, args) }).map(drop)
}

/// `symlinkat(target, dir, name)`.
pub fn symlinkat(target: &CStr, dir: RawFd, name: &CStr) -> Result<(), Errno> {
    let args = [ptr(target.as_ptr()), int(dir), ptr(name.as_ptr()), 0, 0, 0];
    // SAFETY: two NUL-terminated strings that outlive the call, and a descriptor.
    check(unsafe { syscall(libc::SYS_symlinkat, args) }).map(drop)
}

/// `mkdirat(dir, name, mode)`.
pub fn mkdirat(dir: RawFd, name: &CStr, mode: libc::mode_t) -> Result<(), Errno> {
    let args = [int(dir), ptr(name.as_ptr()), mode as usize, 0, 0, 0];
    // SAFETY: NUL-terminated name that outlives the call; integer mode.
    check(unsafe { syscall(libc::SYS_mkdirat, args) }).map(drop)
}

/// `close(fd)`, errors ignored (there is nothing to do about them here).
pub fn close(fd: RawFd) {
    // SAFETY: closing a descriptor this process owns; no Rust object owns it in the child.
    unsafe {
        syscall(libc::SYS_close, [int(fd), 0, 0, 0, 0, 0]);
    }
}

/// `close_range(first, u32::MAX, CLOSE_RANGE_CLOEXEC)`: every descriptor from `first` on is closed
/// by the coming `execve`.
pub fn cloexec_from(first: u32) -> Result<(), Errno> {
    let args = [
        first as usize,
        u32::MAX as usize,
        libc::CLOSE_RANGE_CLOEXEC as usize,
        0,
        0,
        0,
    ];
    // SAFETY: integer arguments only.
    check(unsafe { syscall(libc::SYS_close_range, args) }).map(drop)
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
        syscall(
            libc::SYS_close_range,
            [first as usize, last as usize, 0, 0, 0, 0],
        );
    }
}

/// `dup2(from, to)` (as `dup3`; when they are equal, `to` must have `FD_CLOEXEC` cleared).
pub fn dup2(from: RawFd, to: RawFd) -> Result<(), Errno> {
    if from == to {
        let args = [int(from), int(libc::F_SETFD), 0, 0, 0, 0];
        // SAFETY: F_SETFD with an integer flag.
        return check(unsafe { syscall(libc::SYS_fcntl, args) }).map(drop);
    }
    // SAFETY: two descriptors and no flags; the new descriptor has FD_CLOEXEC clear.
    check(unsafe { syscall(libc::SYS_dup3, [int(from), int(to), 0, 0, 0, 0]) }).map(drop)
}

/// `fchdir(fd)`.
pub fn fchdir(fd: RawFd) -> Result<(), Errno> {
    // SAFETY: one descriptor.
    check(unsafe { syscall(libc::SYS_fchdir, [int(fd), 0, 0, 0, 0, 0]) }).map(drop)
}

/// `read(fd, buf)`, retrying `EINTR`.
fn read(fd: RawFd, buf: &mut [u8]) -> Result<usize, Errno> {
    loop {
        let args = [int(fd), ptr(buf.as_mut_ptr()), buf.len(), 0, 0, 0];
        // SAFETY: `buf` is a writable buffer of the length passed.
        match check(unsafe { syscall(libc::SYS_read, args) }) {
            Err(libc::EINTR) => continue,
            other => return other,
        }
    }
}

/// `write(fd, bytes)`, retrying `EINTR`.
fn write(fd: RawFd, bytes: &[u8]) -> Result<usize, Errno> {
    loop {
        let args = [int(fd), ptr(bytes.as_ptr()), bytes.len(), 0, 0, 0];
        // SAFETY: `bytes` is a readable buffer of the length passed.
        match check(unsafe { syscall(libc::SYS_write, args) }) {
            Err(libc::EINTR) => continue,
            other => return other,
        }
    }
}

/// Reads one byte: `false` at end of file or on an error.
pub fn read_one(fd: RawFd) -> bool {
    let mut byte = [0u8; 1];
    read(fd, &mut byte) == Ok(1)
}

/// `setpgid(pid, pgid)`.
pub fn setpgid(pid: libc::pid_t, pgid: libc::pid_t) -> Result<(), Errno> {
    // SAFETY: two integers; no memory is involved.
    check(unsafe { syscall(libc::SYS_setpgid, [int(pid), int(pgid), 0, 0, 0, 0]) }).map(drop)
}

/// Writes all of `bytes` (retrying short writes).
pub fn write_all(fd: RawFd, bytes: &[u8]) {
    let mut rest = bytes;
    while !rest.is_empty() {
        match write(fd, rest) {
            Ok(n) if n > 0 => rest = &rest[n..],
            _ => return,
        }
    }
}

/// Writes `bytes` to an already-open file (`/proc/self/uid_map` and the like) named by `path`.
pub fn write_file(path: &CStr, bytes: &[u8]) -> Result<(), Errno> {
    let fd = openat(libc::AT_FDCWD, path, libc::O_WRONLY | libc::O_CLOEXEC, 0)?;
    let result = match write(fd, bytes) {
        Ok(n) if n == bytes.len() => Ok(()),
        Ok(_) => Err(libc::EIO),
        Err(e) => Err(e),
    };
    close(fd);
    result
}

/// `prctl(option, arg2, 0, 0, 0)` with integer arguments.
pub fn prctl(option: libc::c_int, arg2: libc::c_ulong) -> Result<libc::c_int, Errno> {
    let args = [int(option), arg2 as usize, 0, 0, 0, 0];
    // SAFETY: the options used (PDEATHSIG, NO_NEW_PRIVS, SECUREBITS, CAP_AMBIENT) take integers.
    check(unsafe { syscall(libc::SYS_prctl, args) }).map(|r| r as libc::c_int)
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
    let args = [ptr(&raw mut header), ptr(empty.as_ptr()), 0, 0, 0, 0];
    // SAFETY: a version-3 header and a two-element data array, the layout capset expects.
    check(unsafe { syscall(libc::SYS_capset, args) })?;
    let mut now = empty;
    header.version = VERSION_3;
    let args = [ptr(&raw mut header), ptr(now.as_mut_ptr()), 0, 0, 0, 0];
    // SAFETY: as above, with a writable array for capget to fill.
    check(unsafe { syscall(libc::SYS_capget, args) })?;
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
    let args = [
        int(ruleset),
        int(LANDLOCK_RULE_PATH_BENEATH),
        ptr(&attr),
        0,
        0,
        0,
    ];
    // SAFETY: `attr` is a fully initialised, packed landlock_path_beneath_attr (the kernel's
    // layout); the kernel only reads it.
    check(unsafe { syscall(libc::SYS_landlock_add_rule, args) }).map(drop)
}

/// `landlock_restrict_self(ruleset, flags)`.
pub fn landlock_restrict_self(ruleset: RawFd, flags: u32) -> Result<(), Errno> {
    let args = [int(ruleset), flags as usize, 0, 0, 0, 0];
    // SAFETY: integer arguments only.
    check(unsafe { syscall(libc::SYS_landlock_restrict_self, args) }).map(drop)
}

/// `seccomp(SECCOMP_SET_MODE_FILTER, flags, prog)`.
fn seccomp(flags: libc::c_ulong, program: &libc::sock_fprog) -> Result<usize, Errno> {
    const SECCOMP_SET_MODE_FILTER: usize = 1;
    let args = [
        SECCOMP_SET_MODE_FILTER,
        flags as usize,
        ptr(program),
        0,
        0,
        0,
    ];
    // SAFETY: `program` points to a sock_fprog whose filter array the parent built and keeps
    // alive until the child is gone; the kernel copies it in.
    check(unsafe { syscall(libc::SYS_seccomp, args) })
}

/// `seccomp(SECCOMP_SET_MODE_FILTER, 0, prog)`.
pub fn seccomp_filter(program: &libc::sock_fprog) -> Result<(), Errno> {
    seccomp(0, program).map(drop)
}

/// `seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, prog)`: the filter, and
/// the listener descriptor its reported calls go to.
pub fn seccomp_filter_with_listener(program: &libc::sock_fprog) -> Result<RawFd, Errno> {
    seccomp(libc::SECCOMP_FILTER_FLAG_NEW_LISTENER, program).map(|fd| fd as RawFd)
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
    // SAFETY: CMSG_LEN only computes a length (a const fn of its argument; no memory).
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
    let args = [int(socket), ptr(&message), 0, 0, 0, 0];
    // SAFETY: every pointer in `message` points to a live stack value of the size given.
    check(unsafe { syscall(libc::SYS_sendmsg, args) }).map(drop)
}

/// The kernel's `struct sigaction` for `rt_sigaction` (the same layout on x86_64 and aarch64).
#[repr(C)]
struct KernelSigaction {
    handler: usize,
    flags: libc::c_ulong,
    restorer: usize,
    mask: u64,
}

/// The size of the kernel's signal set, which `rt_sigaction` and `rt_sigprocmask` take.
const KERNEL_SIGSET: usize = 8;

/// Sets `signal`'s disposition to the default or to ignored.
pub fn set_disposition(signal: libc::c_int, ignore: bool) {
    let action = KernelSigaction {
        handler: if ignore { libc::SIG_IGN } else { libc::SIG_DFL },
        flags: 0,
        restorer: 0,
        mask: 0,
    };
    let args = [int(signal), ptr(&action), 0, KERNEL_SIGSET, 0, 0];
    // SAFETY: installs no code as a handler (only SIG_DFL or SIG_IGN, which need no restorer);
    // `action` is the kernel's layout, read only.
    unsafe {
        syscall(libc::SYS_rt_sigaction, args);
    }
}

/// The highest signal number the kernel has (`_NSIG - 1` on x86_64 and aarch64).
const LAST_SIGNAL: libc::c_int = 64;

/// Every signal this process catches goes back to its default disposition; ignored ones stay
/// ignored (as `execve` itself would leave them). The sandbox's processes start with a copy of the
/// caller's handlers, which are code in the memory they share with it: none of them may run here,
/// so this comes before any signal is unblocked.
pub fn reset_caught_signals() {
    for signal in 1..=LAST_SIGNAL {
        if signal == libc::SIGKILL || signal == libc::SIGSTOP {
            continue;
        }
        let mut old = KernelSigaction {
            handler: 0,
            flags: 0,
            restorer: 0,
            mask: 0,
        };
        let args = [int(signal), 0, ptr(&raw mut old), KERNEL_SIGSET, 0, 0];
        // SAFETY: a null new action only reads the current one into `old`, which is the kernel's
        // layout and writable.
        let read = check(unsafe { syscall(libc::SYS_rt_sigaction, args) });
        // A signal that cannot be read is reset all the same: the default is always safe here.
        if read.is_err() || (old.handler != libc::SIG_DFL && old.handler != libc::SIG_IGN) {
            set_disposition(signal, false);
        }
    }
}

/// Unblocks every signal (the mask survives `execve`).
pub fn unblock_all_signals() {
    let empty: u64 = 0;
    let args = [int(libc::SIG_SETMASK), ptr(&empty), 0, KERNEL_SIGSET, 0, 0];
    // SAFETY: an empty kernel signal set, read only; no old set is asked for.
    unsafe {
        syscall(libc::SYS_rt_sigprocmask, args);
    }
}

/// Starts `entry(arg)` in a new process on `stack` (its top, 16-byte aligned): `clone(flags |
/// SIGCHLD)` with a new stack, the child calling `entry` there and exiting with what it returns.
/// With `CLONE_VM` no page table is copied: the child shares this address space, so `entry` must
/// only run the async-signal-safe code of this module, touch no memory but its own stack and what
/// `arg` points to, and that memory must stay alive for as long as the child runs. The parent's
/// result: the child's pid.
///
/// # Safety
/// `stack` must be memory nothing else uses while the child runs (a [`super::sys::Stack`]), and
/// `entry` and `arg` must keep the contract above.
pub unsafe fn spawn_on_stack(
    flags: libc::c_ulong,
    entry: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    stack: *mut u8,
    arg: *mut libc::c_void,
) -> Result<libc::pid_t, Errno> {
    let flags = (flags | libc::SIGCHLD as libc::c_ulong) as usize;
    let top = (stack as usize) & !0xf;
    // SAFETY: the caller's contract; see `clone_call`.
    let ret = unsafe { clone_call(flags, top, entry, arg) };
    check(ret).map(|pid| pid as libc::pid_t)
}

/// The `clone` system call with a new stack. In the child (return value 0) the stack pointer is
/// `top`; it calls `entry(arg)` there, with no frame to return to, then `exit`s with the result.
///
/// # Safety
/// As for [`spawn_on_stack`].
#[cfg(target_arch = "x86_64")]
unsafe fn clone_call(
    flags: usize,
    top: usize,
    entry: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
) -> isize {
    let ret: isize;
    // SAFETY: x86_64 `clone(flags, newsp, parent_tid, child_tid, tls)`: rdi, rsi, rdx, r10, r8.
    // The parent returns with the pid in rax and every other register but rcx and r11 intact.
    // The child starts at the instruction after `syscall` on the new stack (16-byte aligned, so
    // `call` leaves it as the ABI expects), with r12 and r13 (kept by the kernel) holding the
    // argument and the entry; it never comes back into Rust code here.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "mov rdi, r12",
            "call r13",
            "mov edi, eax",
            "mov eax, {exit}",
            "syscall",
            "ud2",
            "2:",
            exit = const libc::SYS_exit,
            inlateout("rax") libc::SYS_clone as isize => ret,
            in("rdi") flags,
            in("rsi") top,
            in("rdx") 0usize,
            in("r10") 0usize,
            in("r8") 0usize,
            in("r12") arg,
            in("r13") entry,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack)
        );
    }
    ret
}

/// See the x86_64 version.
///
/// # Safety
/// As for [`spawn_on_stack`].
#[cfg(target_arch = "aarch64")]
unsafe fn clone_call(
    flags: usize,
    top: usize,
    entry: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
) -> isize {
    let ret: isize;
    // SAFETY: aarch64 `clone(flags, newsp, parent_tid, tls, child_tid)`: x0–x4, number in x8.
    // The parent returns with the pid in x0 and every other register intact. The child starts
    // after `svc` on the new stack (16-byte aligned), with x9 and x10 (kept by the kernel)
    // holding the argument and the entry; it never comes back into Rust code here.
    unsafe {
        std::arch::asm!(
            "svc 0",
            "cbnz x0, 2f",
            "mov x29, xzr",
            "mov x30, xzr",
            "mov x0, x9",
            "blr x10",
            "mov x8, {exit}",
            "svc 0",
            "brk #0",
            "2:",
            exit = const libc::SYS_exit,
            in("x8") libc::SYS_clone,
            inlateout("x0") flags => ret,
            in("x1") top,
            in("x2") 0usize,
            in("x3") 0usize,
            in("x4") 0usize,
            in("x9") arg,
            in("x10") entry,
            options(nostack)
        );
    }
    ret
}

/// `wait4(pid, &status, flags, NULL)`: `(pid, status)`; retries `EINTR`.
pub fn waitpid(pid: libc::pid_t, flags: libc::c_int) -> Result<(libc::pid_t, libc::c_int), Errno> {
    loop {
        let mut status: libc::c_int = 0;
        let args = [int(pid), ptr(&raw mut status), int(flags), 0, 0, 0];
        // SAFETY: `status` is a valid writable int on this stack frame; no rusage is asked for.
        match check(unsafe { syscall(libc::SYS_wait4, args) }) {
            Err(libc::EINTR) => continue,
            other => return other.map(|p| (p as libc::pid_t, status)),
        }
    }
}

/// `kill(pid, signal)`; `Ok` when at least one process was signalled.
pub fn kill(pid: libc::pid_t, signal: libc::c_int) -> Result<(), Errno> {
    // SAFETY: integer arguments only.
    check(unsafe { syscall(libc::SYS_kill, [int(pid), int(signal), 0, 0, 0, 0]) }).map(drop)
}

/// Milliseconds on `CLOCK_MONOTONIC`; `u64::MAX` if the clock cannot be read, so that a deadline
/// taken from it is already past (a wait is cut short, never stretched).
pub fn monotonic_ms() -> u64 {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let args = [int(libc::CLOCK_MONOTONIC), ptr(&raw mut time), 0, 0, 0, 0];
    // SAFETY: a valid writable timespec on this stack frame.
    if check(unsafe { syscall(libc::SYS_clock_gettime, args) }).is_err() {
        return u64::MAX;
    }
    let seconds = u64::try_from(time.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(time.tv_nsec).unwrap_or(0);
    seconds
        .saturating_mul(1000)
        .saturating_add(nanos / 1_000_000)
}

/// `nanosleep` for `ms` milliseconds (an interruption ends it early).
pub fn sleep_ms(ms: u32) {
    let time = libc::timespec {
        tv_sec: (ms / 1000).into(),
        tv_nsec: libc::c_long::from(ms % 1000) * 1_000_000,
    };
    // SAFETY: a valid timespec on this stack frame; no remainder is asked for.
    let _ = check(unsafe { syscall(libc::SYS_nanosleep, [ptr(&time), 0, 0, 0, 0, 0]) });
}

/// `ppoll` on one descriptor with a zero timeout: its `revents`.
pub fn poll_now(fd: RawFd, events: libc::c_short) -> libc::c_short {
    let mut pfd = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let args = [ptr(&raw mut pfd), 1, ptr(&now), 0, KERNEL_SIGSET, 0];
    // SAFETY: one valid pollfd and a zero timeout on this stack frame; no signal mask.
    match check(unsafe { syscall(libc::SYS_ppoll, args) }) {
        Ok(n) if n > 0 => pfd.revents,
        _ => 0,
    }
}

/// `execve(path, argv, envp)`; returns only on failure.
pub fn execve(path: &CStr, argv: &[*const libc::c_char], envp: &[*const libc::c_char]) -> Errno {
    let args = [
        ptr(path.as_ptr()),
        ptr(argv.as_ptr()),
        ptr(envp.as_ptr()),
        0,
        0,
        0,
    ];
    // SAFETY: `path` is NUL-terminated; `argv` and `envp` are null-terminated arrays of pointers
    // to NUL-terminated strings that the parent prepared and keeps alive while the child runs.
    match check(unsafe { syscall(libc::SYS_execve, args) }) {
        Err(e) => e,
        Ok(_) => libc::EINVAL,
    }
}

/// `exit_group(status)`: ends the child without running destructors or atexit handlers (the
/// parent's).
pub fn exit(status: libc::c_int) -> ! {
    loop {
        // SAFETY: exit_group takes an integer and does not return.
        unsafe {
            syscall(libc::SYS_exit_group, [int(status), 0, 0, 0, 0, 0]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    /// The walk that stands in for `openat2` where a sandbox refuses it (called directly: this
    /// kernel has `openat2`).
    fn walk_path(path: &std::path::Path, flags: libc::c_int) -> Result<RawFd, Errno> {
        let bytes = path.as_os_str().as_bytes();
        walk(libc::AT_FDCWD, b"/", &bytes[1..], flags, true)
    }

    fn inode(fd: RawFd) -> u64 {
        let (_, ino, _) = fstat(fd).unwrap();
        close(fd);
        ino
    }

    #[test]
    fn the_walk_opens_what_the_path_names_and_refuses_every_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("link")).unwrap();
        std::os::unix::fs::symlink(root.join("a/b/f"), root.join("a/b/flink")).unwrap();
        let expected = std::fs::metadata(root.join("a/b/f")).unwrap();
        let fd = walk_path(&root.join("a/b/f"), 0).unwrap();
        assert_eq!(inode(fd), std::os::unix::fs::MetadataExt::ino(&expected));
        // A symlink as a directory on the way, and as the last component.
        assert_eq!(walk_path(&root.join("link/b/f"), 0), Err(libc::ELOOP));
        assert_eq!(walk_path(&root.join("a/b/flink"), 0), Err(libc::ELOOP));
        // A magic link is a symlink too.
        assert_eq!(
            walk_path(std::path::Path::new("/proc/self/cwd"), 0),
            Err(libc::ELOOP)
        );
        // A file where a directory is wanted.
        assert_eq!(
            walk_path(&root.join("a/b/f"), libc::O_DIRECTORY),
            Err(libc::ENOTDIR)
        );
        // Beneath a directory: no `..`, no absolute path.
        let base = walk_path(&root.join("a"), libc::O_DIRECTORY).unwrap();
        let b = walk(base, b".", b"b", libc::O_DIRECTORY, false).unwrap();
        assert_eq!(
            inode(b),
            std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(root.join("a/b")).unwrap())
        );
        assert_eq!(
            walk(base, b".", b"b/../..", libc::O_DIRECTORY, false),
            Err(libc::EXDEV)
        );
        assert_eq!(open_dir_beneath(base, c"/etc"), Err(libc::EXDEV));
        close(base);
    }
}
