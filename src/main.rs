//! shellgate's entry point.
//!
//! `#![no_main]`: shellgate starts once for every shell line, and the standard library's own
//! start-up (`lang_start`) reads `/proc/self/maps` to find the main thread's stack and maps an
//! alternate signal stack, about 0.07 ms of every line in a VM (`benches/sandbox.sh`), for a
//! nicer message on a stack overflow (which still faults on the kernel's guard gap without it).
//! The arguments are taken from `main`'s own `argc`/`argv` (the standard library gets them from
//! glibc without `lang_start`, not from musl). What `lang_start` would do that matters is done
//! here: SIGPIPE's default disposition, a panic as exit status 101, and the exit through
//! `std::process::exit`, which flushes standard output.
// (Under `cargo test` the test harness brings its own `main`.)
#![cfg_attr(not(test), no_main)]

use std::process::ExitCode;

/// The C entry point (see the module's documentation).
#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(argc: libc::c_int, argv: *const *const libc::c_char) -> libc::c_int {
    // Before anything changes them: the dispositions a sandboxed program is started with.
    shellgate::sandbox::record_startup_signals();
    // A caller may have left SIGPIPE ignored, which turns `shellgate rules | head` into a panic on
    // the next write: the default disposition, so shellgate ends quietly like every other tool.
    // SAFETY: `signal` is called before any other thread exists, with a valid signal number and
    // the default handler; no Rust invariant depends on SIGPIPE's disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = arguments(argc, argv);
    let status = match std::panic::catch_unwind(move || shellgate::cli::main(args)) {
        Ok(code) => exit_status(code),
        Err(_) => 101,
    };
    std::process::exit(i32::from(status))
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
