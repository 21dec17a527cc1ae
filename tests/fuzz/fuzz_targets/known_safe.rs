//! The known-safe allow-list and the option scanner: arbitrary arguments for every program it
//! knows must never panic, and a command with an option cluster containing `o` for sort, or any
//! redirection into a file, is never known-safe.
#![no_main]
use libfuzzer_sys::fuzz_target;
use shellgate_core::parse::{ShellKind, parse};
use shellgate_core::policy::known_safe::{LineFacts, is_known_safe};

const PROGRAMS: [&str; 24] = [
    "ls", "cat", "sort", "uniq", "date", "file", "grep", "rg", "tree", "xxd", "jq", "sed", "awk",
    "find", "git", "ps", "printenv", "head", "tail", "shellgate", "declare", "set", "trap", "cut",
];

fuzz_target!(|data: &[u8]| {
    let Some((first, rest)) = data.split_first() else {
        return;
    };
    let Ok(args) = std::str::from_utf8(rest) else {
        return;
    };
    if args.len() > 2000 {
        return;
    }
    let program = PROGRAMS[usize::from(*first) % PROGRAMS.len()];
    let line = format!("{program} {args}");
    let parsed = parse(&line, ShellKind::Bash);
    let facts = LineFacts::of(&parsed, ShellKind::Bash);
    for command in &parsed.commands {
        let safe = is_known_safe(command, &facts);
        if !command.writes.is_empty() {
            assert!(!safe, "{line:?}");
        }
        if command.program == "sort" && command.argv.iter().any(|a| a == "-o" || a.starts_with("--output")) {
            assert!(!safe, "{line:?}");
        }
    }
});
