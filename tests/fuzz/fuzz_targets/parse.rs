//! The parsers (tree-sitter-bash and tree-sitter-powershell, the walkers and the unwrapper) must
//! never panic, and what they report must be consistent: one shape per argument, and a command
//! whose program is known only at run time is never reported as a program.
#![no_main]
use libfuzzer_sys::fuzz_target;
use shellgate_core::parse::{ShellKind, parse};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.chars().count() > shellgate_core::intake::MAX_LINE_CHARS {
        return;
    }
    for shell in [ShellKind::Bash, ShellKind::Zsh, ShellKind::Sh, ShellKind::Pwsh] {
        let parsed = parse(text, shell);
        for command in &parsed.commands {
            assert_eq!(command.argv.len(), command.shapes.len(), "{text:?}");
        }
    }
});
