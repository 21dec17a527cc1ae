fn main() -> std::process::ExitCode {
    // Before anything changes them: the dispositions a sandboxed program is started with.
    shellgate::sandbox::record_startup_signals();
    // Rust ignores SIGPIPE, which turns `shellgate rules | head` into a panic on the next write.
    // Restore the default disposition so shellgate ends quietly like every other CLI tool.
    // SAFETY: `signal` is called before any other thread exists, with a valid signal number and
    // the default handler; no Rust invariant depends on SIGPIPE's disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    shellgate::cli::main()
}
