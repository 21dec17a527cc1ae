//! The whole decision core (intake, both parsers, unwrapping, rules, mode routing) must never
//! panic or crash, on any byte sequence.
#![no_main]
use libfuzzer_sys::fuzz_target;
use shellgate::config::Config;
use shellgate::mode::{SessionFacts, resolve};
use shellgate::parse::ShellKind;
use std::sync::LazyLock;

static CONFIG: LazyLock<Config> = LazyLock::new(Config::builtin);

fuzz_target!(|data: &[u8]| {
    let mode = resolve(Some("ask"), CONFIG.modes(), SessionFacts::default());
    for shell in [ShellKind::Bash, ShellKind::Pwsh] {
        let _ = shellgate::policy::decide_bytes(data, shell, "/w", CONFIG.policy(), &mode);
    }
});
