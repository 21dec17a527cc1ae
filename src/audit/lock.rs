//! Advisory `flock(2)` locks with a deadline.
//!
//! A process that holds a lock forever (stopped with SIGSTOP, hung on a dead NFS server) must not
//! make every shell line hang: after the deadline the caller gets an error and fails closed.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::thread;
use std::time::{Duration, Instant};

/// How long writers wait for the log or settings lock before giving up.
pub const LOCK_DEADLINE: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockKind {
    Shared,
    Exclusive,
}

/// Holds a `flock` on a file until dropped.
#[derive(Debug)]
pub struct FileLock<'a> {
    file: &'a File,
}

impl<'a> FileLock<'a> {
    /// Takes the lock, retrying until `deadline` has passed.
    pub fn acquire(file: &'a File, kind: LockKind, deadline: Duration) -> io::Result<FileLock<'a>> {
        flock_with_deadline(file, kind, deadline)?;
        Ok(FileLock { file })
    }
}

/// A lock file that owns its descriptor: the lock lasts until it is dropped (closing the file
/// releases a `flock`).
#[derive(Debug)]
pub struct LockFile {
    _file: File,
}

impl LockFile {
    pub fn acquire(file: File, kind: LockKind, deadline: Duration) -> io::Result<LockFile> {
        flock_with_deadline(&file, kind, deadline)?;
        Ok(LockFile { _file: file })
    }
}

/// `flock(2)` with `LOCK_NB`, retried with short, growing pauses until `deadline`: a blocking
/// `flock` could not be given up.
fn flock_with_deadline(file: &File, kind: LockKind, deadline: Duration) -> io::Result<()> {
    let operation = match kind {
        LockKind::Shared => libc::LOCK_SH,
        LockKind::Exclusive => libc::LOCK_EX,
    } | libc::LOCK_NB;
    let started = Instant::now();
    let mut pause = Duration::from_micros(50);
    loop {
        // SAFETY: `flock` only reads the descriptor number of a `File` borrowed for the whole
        // call; it touches no memory of ours.
        let status = unsafe { libc::flock(file.as_raw_fd(), operation) };
        if status == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) if started.elapsed() < deadline => {
                thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(2));
            }
            Some(libc::EWOULDBLOCK) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("still locked by another process after {deadline:?}"),
                ));
            }
            _ => return Err(err),
        }
    }
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        // SAFETY: as in `flock_with_deadline`; unlocking a descriptor we locked. A failure cannot be acted on
        // here, and closing the file releases the lock anyway.
        unsafe {
            libc::flock(self.file.as_raw_fd(), libc::LOCK_UN);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_lock_times_out_while_held_elsewhere() {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        let first = File::open(tmp.path()).unwrap();
        let second = File::open(tmp.path()).unwrap();
        let held = FileLock::acquire(&first, LockKind::Exclusive, LOCK_DEADLINE).unwrap();
        let err = FileLock::acquire(&second, LockKind::Shared, Duration::from_millis(30))
            .expect_err("a second open file description must not get the lock");
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        drop(held);
        FileLock::acquire(&second, LockKind::Shared, Duration::from_millis(30)).unwrap();
    }
}
