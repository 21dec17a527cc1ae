//! Intake must never panic, on any byte sequence, and must only accept what it promises.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(line) = shellgate_core::intake::intake(data) {
        assert!(line.as_str().chars().count() <= shellgate_core::intake::MAX_LINE_CHARS);
        assert!(line.as_str().chars().all(|c| shellgate_core::intake::forbidden_name(c).is_none()));
    }
});
