fn main() -> std::process::ExitCode {
    shellgate::cli::main()
}
