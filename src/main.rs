//! shellgate's entry point.
//!
//! `#![no_main]`: shellgate starts once for every shell line, and the standard library's own
//! start-up (`lang_start`) reads `/proc/self/maps` to find the main thread's stack and maps an
//! alternate signal stack, about 0.07 ms of every line in a VM (`benches/sandbox.sh`), for a
//! nicer message on a stack overflow (which still faults on the kernel's guard gap without it).
//! The arguments are taken from `main`'s own `argc`/`argv` (the standard library gets them from
//! glibc without `lang_start`, not from musl). What `lang_start` would do that matters is done
//! here: SIGPIPE's default disposition, a panic as a failure that says so, and the exit through
//! `std::process::exit`, which flushes standard output.
//!
//! **A panic** is a bug in shellgate: the process ends with `INTERNAL`'s status (219) and its
//! refusal block, like every other failure (docs/exit-codes.md), from whichever thread panicked.
//! That is done in the panic hook, not by `catch_unwind`: the release profile builds with
//! `panic = "abort"`, where nothing unwinds and `catch_unwind` never returns an error (the
//! process would die of SIGABRT, 134); the hook runs under either strategy, before the abort.
//! A status of its own, in the 200 block, also keeps a panic apart from a line's own 101 (every
//! Rust program that panics, `cargo test` with a failing test).
// (Under `cargo test` the test harness brings its own `main`.)
#![cfg_attr(not(test), no_main)]

use std::process::ExitCode;

/// The allocator: dlmalloc, which keeps the memory it got from the kernel. musl's maps and unmaps
/// a page for nearly every size class a short process touches — about sixty `mmap`/`munmap`
/// pairs, each with its page fault, for one line — and glibc's is no better a fit for a process
/// that lives for one line. It takes one lock; shellgate allocates nothing between a fork or
/// clone and the exec that follows (docs/sandbox.md), so the lock is never inherited held.
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

/// The C entry point (see the module's documentation).
#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(argc: libc::c_int, argv: *const *const libc::c_char) -> libc::c_int {
    // Before anything changes them: the dispositions a sandboxed program is started with, and
    // the environment, read once here for the whole process (src/env.rs).
    shellgate::sandbox::record_startup_signals();
    shellgate::env::init();
    // A caller may have left SIGPIPE ignored, which turns `shellgate rules | head` into a panic on
    // the next write: the default disposition, so shellgate ends quietly like every other tool.
    // SAFETY: `signal` is called before any other thread exists, with a valid signal number and
    // the default handler; no Rust invariant depends on SIGPIPE's disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    end_panics_as_internal_failures();
    #[cfg(shellgate_panic_seam)]
    panic_seam();
    let args = arguments(argc, argv);
    let status = exit_status(shellgate::cli::main(args));
    std::process::exit(i32::from(status))
}

/// Installs the panic hook that ends the process as a failure (see the module's documentation):
/// `INTERNAL`'s refusal on standard error, naming where it panicked, then exit status 219 through
/// `std::process::exit` (standard output flushed, as on every other exit).
///
/// Except in the sandbox's program and init processes: they share this process's memory
/// (`CLONE_VM`) but are processes of their own, and an `exit` there would run this process's exit
/// handlers and flush its buffers from another process. There the default hook runs, as before
/// (the release build then aborts that process alone).
#[cfg(not(test))]
fn end_panics_as_internal_failures() {
    let shellgate_pid = std::process::id();
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::process::id() != shellgate_pid {
            default_hook(info);
            return;
        }
        let place = info
            .location()
            .map_or_else(String::new, |l| format!(" at {}:{}", l.file(), l.line()));
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("no message");
        let err = shellgate::error::Error::internal(format!(
            "shellgate panicked{place}: {message} (a bug in shellgate)"
        ));
        // Written here rather than with `error::print_refusal`: `eprint!` panics when standard
        // error fails, and a panic inside the panic hook aborts without the status.
        let text = shellgate::error::refusal_text(&err, shellgate::error::Reader::Whoever);
        let _ = std::io::Write::write_all(&mut std::io::stderr(), text.as_bytes());
        std::process::exit(i32::from(err.code.exit_status()))
    }));
}

/// A deliberate panic for the test that the release profile's binary ends a panic with
/// `INTERNAL` (tests/suite/run.rs, `a_panic_ends_the_release_build_with_internal`), compiled only
/// with `--cfg shellgate_panic_seam`, which that test's build alone passes: no binary `install.sh`
/// or a plain `cargo build` makes has it. `SHELLGATE_TEST_PANIC=main` panics here, on the main
/// thread; `=thread` on another thread, after which (if the process were still alive) the
/// command would go on as usual, so the test can see it did not.
#[cfg(all(not(test), shellgate_panic_seam))]
fn panic_seam() {
    let seam = shellgate::env::get().var(shellgate::own_env::TEST_PANIC_ENV);
    match seam.and_then(std::ffi::OsStr::to_str) {
        Some("main") => panic!("the test seam's deliberate panic"),
        Some("thread") => {
            let _ = std::thread::spawn(|| panic!("the test seam's deliberate panic on a thread"))
                .join();
        }
        _ => {}
    }
}

/// `argv` as the program received it.
#[cfg(not(test))]
fn arguments(argc: libc::c_int, argv: *const *const libc::c_char) -> Vec<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt;
    let count = usize::try_from(argc).unwrap_or(0);
    (0..count)
        .map(|i| {
            // SAFETY: the C runtime passes `argc` valid pointers in `argv`, each to a
            // NUL-terminated string that lives as long as the process.
            let arg = unsafe { std::ffi::CStr::from_ptr(*argv.add(i)) };
            std::ffi::OsStr::from_bytes(arg.to_bytes()).to_owned()
        })
        .collect()
}

/// The status an `ExitCode` stands for (the standard library has no stable way to read it back).
fn exit_status(code: ExitCode) -> u8 {
    (0..=u8::MAX)
        .find(|status| ExitCode::from(*status) == code)
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_read_back() {
        for status in [0, 1, 2, 101, 201, 217, 255] {
            assert_eq!(exit_status(ExitCode::from(status)), status);
        }
        assert_eq!(exit_status(ExitCode::SUCCESS), 0);
        assert_eq!(exit_status(ExitCode::FAILURE), 1);
    }
}
