//! The shell-argument scanner (`parse::shell_args`) against the real shells: every argument list is
//! run through bash, dash and zsh, and what runs must be what the scanner said would.

use shellgate::parse::shell_args::{Invocation, ShellFamily, invocation, posix_shell_options};
use std::ffi::OsString;

#[test]
fn posix_options_match_the_real_bash() {
    options_match_the_real_shell("bash", ShellFamily::Bourne);
}

#[test]
#[cfg_attr(not(has_dash), ignore = "dash is not installed (apt-get install dash)")]
fn posix_options_match_the_real_dash() {
    options_match_the_real_shell("dash", ShellFamily::Bourne);
}

#[test]
#[cfg_attr(not(has_zsh), ignore = "zsh is not installed (apt-get install zsh)")]
fn posix_options_match_the_real_zsh() {
    options_match_the_real_shell("zsh", ShellFamily::Zsh);
}

/// Every argument list is run through the real shell (with harmless commands): whatever runs
/// is what the scanner said would run. The shell gets a clean environment (no inherited
/// BASH_ENV, ENV or ZDOTDIR of the person running the tests).
fn options_match_the_real_shell(shell: &str, family: ShellFamily) {
    let dir = std::env::temp_dir().join(format!("shellgate-args-{shell}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("x");
    std::fs::write(&file, "echo RAN-FILE\n").unwrap();
    let file = file.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["-c", "echo RAN-C"],
        vec!["-C", file, "-c", "echo RAN-C"],
        vec!["-V", "-c", "echo RAN-C"],
        vec!["-eo", "pipefail", "-c", "echo RAN-C"],
        vec!["-oe", "pipefail", "-c", "echo RAN-C"],
        vec!["-O", "extglob", "-c", "echo RAN-C"],
        vec!["-O", file, "-c", "echo RAN-C"],
        vec!["-b", "-c", "echo RAN-C"],
        vec!["-b", file],
        vec!["+c", "echo RAN-C"],
        vec!["-co", "pipefail", "echo RAN-C"],
        vec!["-x", "--", file],
        vec!["-", file],
        vec![file, "-c", "echo RAN-C"],
        vec!["-s", "-c", "echo RAN-C"],
        vec!["--norc", "-c", "echo RAN-C"],
        vec!["-ocoo", "-c", "echo RAN-C"],
        vec!["-onoclobber", "-c", "echo RAN-C"],
    ];
    for args in &cases {
        let output = std::process::Command::new(shell)
            .args(args)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &dir)
            .env("ZDOTDIR", &dir)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {shell}: {e}"));
        let output = String::from_utf8_lossy(&output.stdout).into_owned();
        let owned: Vec<OsString> = args.iter().map(OsString::from).collect();
        let expected = match invocation(&posix_shell_options(family, args), &owned, false) {
            Invocation::Command { script } if script == "echo RAN-C" => "RAN-C",
            Invocation::Script { path } if path == file => "RAN-FILE",
            Invocation::Script { .. } | Invocation::Unknown(_) | Invocation::Info => "",
            other => panic!("{shell} {args:?}: unexpected {other:?}"),
        };
        // A shell may refuse what the scanner reads as valid (bash has no `-V`):
        // nothing runs. What does run must be what the scanner said.
        let ran = output.trim();
        assert!(
            ran.is_empty() || ran == expected,
            "{shell} {args:?}: ran {ran:?}, the scanner said {expected:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
