//! Brace expansion: any word, never a panic, never more words than the bound.
#![no_main]
use libfuzzer_sys::fuzz_target;
use shellgate_core::parse::braces::{MAX_BRACE_WORDS, expand};
use shellgate_core::parse::words::unquoted;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.len() > 4000 {
        return;
    }
    let mut budget = MAX_BRACE_WORDS;
    if let Ok(words) = expand(unquoted(text), &mut budget) {
        assert!(words.len() <= MAX_BRACE_WORDS);
    }
});
