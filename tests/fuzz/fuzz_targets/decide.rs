//! The whole decision core (intake, both parsers, unwrapping, rules, mode routing) must never
//! panic or crash, on any byte sequence.
#![no_main]
use libfuzzer_sys::fuzz_target;
use shellgate_core::mode::{Modes, SessionFacts, resolve};
use shellgate_core::parse::ShellKind;
use shellgate_core::policy::rules::{Rule, builtin_rules};
use shellgate_core::policy::{PolicyConfig, decide_bytes};
use std::sync::LazyLock;

/// The rules that apply with no config files.
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(builtin_rules);

fuzz_target!(|data: &[u8]| {
    let mode = resolve(Some("ask"), Modes::default(), SessionFacts::default());
    let policy = PolicyConfig {
        rules: &RULES,
        reviewer_configured: false,
        typed_by_a_person: false,
        remotes: None,
        registries: None,
        ssh: None,
    };
    for shell in [ShellKind::Bash, ShellKind::Pwsh] {
        let _ = decide_bytes(data, shell, "/w", policy, &mode);
    }
});
