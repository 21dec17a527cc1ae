//! The unwrapper, driven through every wrapper it knows: the first byte picks a wrapper, the rest
//! is its arguments (options, values, words), followed by `rm -rf /`. It must never panic, and
//! every command it reports has one shape per argument.
#![no_main]
use libfuzzer_sys::fuzz_target;
use shellgate_core::parse::{ShellKind, parse};

const WRAPPERS: [&str; 40] = [
    "sudo", "doas", "env", "nohup", "timeout 5", "nice", "ionice", "setsid", "stdbuf", "time",
    "command", "builtin", "exec", "coproc", "busybox", "noglob", "xargs", "find . -exec", "watch",
    "script", "su", "runuser", "flock /tmp/l", "eval", "bash -c", "sh -c", "zsh -c",
    "shellgate run --", "chroot /", "unshare", "nsenter", "strace", "pkexec", "systemd-run",
    "run0", "flatpak-spawn", "jobs -x", "env -S", "sudo -u root env", "script -qc",
];

fuzz_target!(|data: &[u8]| {
    let Some((first, rest)) = data.split_first() else {
        return;
    };
    let Ok(words) = std::str::from_utf8(rest) else {
        return;
    };
    if words.len() > 2000 || words.contains(['\n', ';', '&', '|', '#', '\'', '"', '`', '$', '(']) {
        return;
    }
    let wrapper = WRAPPERS[usize::from(*first) % WRAPPERS.len()];
    let line = format!("{wrapper} {words} rm -rf /");
    let parsed = parse(&line, ShellKind::Bash);
    for command in &parsed.commands {
        assert_eq!(command.argv.len(), command.shapes.len(), "{line:?}");
    }
});
