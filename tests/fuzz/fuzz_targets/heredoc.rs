//! Here-document delimiters and ends: quote removal on any word, and the end search on any text,
//! must never panic and must return offsets inside the text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use shellgate_core::parse::heredoc;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (word, body) = text.split_once('\n').unwrap_or((text, ""));
    for delimiter in heredoc::delimiters(word) {
        for strip_tabs in [false, true] {
            if let Some((line, after)) = heredoc::end_line(body, 0, &delimiter, strip_tabs) {
                assert!(line <= after && after <= body.len());
            }
        }
    }
    for shell in ["bash", "dash", "zsh"] {
        let _ = heredoc::delimiter_for(word, shell);
    }
    let _ = heredoc::line_start(body, body.len() / 2);
});
