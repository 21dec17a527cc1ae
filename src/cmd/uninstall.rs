//! `shellgate uninstall`: remove the init lines from the startup files, then the binary with its
//! completions and manual page. The config, the audit log and the lines' package caches stay
//! (said where, and how to remove them). Typed in a hooked shell it is asked about (the
//! `shellgate-tamper` rule) and then runs in the shell, outside the sandbox, which could write
//! neither the startup files nor the binary.

use crate::shell::setup;
use std::path::PathBuf;
use std::process::ExitCode;

pub fn run() -> ExitCode {
    let env = crate::env::get();
    let Some(home) = env.home() else {
        eprintln!("shellgate uninstall: HOME is not set, so the startup files cannot be found");
        return ExitCode::from(crate::error::Code::Usage.exit_status());
    };
    let zdotdir = env.var("ZDOTDIR").map(PathBuf::from);
    let mut failed = false;
    for file in setup::startup_files(&home, zdotdir.as_deref()) {
        match setup::remove_startup_lines(&file) {
            Ok(0) => {}
            Ok(n) => println!("removed {n} init line(s) from {}", file.display()),
            Err(e) => {
                eprintln!("shellgate uninstall: cannot edit {}: {e}", file.display());
                failed = true;
            }
        }
    }
    // The startup files first: a shell started without the binary must not find a line that
    // loads it (it would ask before every line).
    if failed {
        eprintln!(
            "shellgate uninstall: the binary was left in place; fix the above and run it again"
        );
        return ExitCode::from(crate::error::Code::Internal.exit_status());
    }
    let binary = match crate::paths::binary() {
        Some(binary) => binary,
        None => {
            eprintln!("shellgate uninstall: cannot tell where this binary is");
            return ExitCode::from(crate::error::Code::Internal.exit_status());
        }
    };
    for file in setup::installed_files(&binary) {
        match std::fs::remove_file(&file) {
            Ok(()) => println!("removed {}", file.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                eprintln!("shellgate uninstall: cannot remove {}: {e}", file.display());
                failed = true;
            }
        }
    }
    let own = crate::paths::own();
    let lines_caches = crate::paths::home_relative(crate::policy::needs::LINES_CACHES_ROOT);
    let kept: Vec<String> = own
        .config_dir
        .iter()
        .chain(own.state_dir.iter())
        .chain(lines_caches.iter())
        .filter(|dir| dir.exists())
        .map(|dir| dir.display().to_string())
        .collect();
    if !kept.is_empty() {
        println!(
            "kept your config, audit log and the lines' package caches: {} (remove them with: \
             rm -rf {})",
            kept.join(", "),
            kept.join(" ")
        );
    }
    println!(
        "shells open now still have the hook: each asks before it runs a line without shellgate; \
         new shells start without it"
    );
    if failed {
        ExitCode::from(crate::error::Code::Internal.exit_status())
    } else {
        ExitCode::SUCCESS
    }
}
