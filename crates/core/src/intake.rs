//! Intake: the first gate. Turns raw bytes into a validated [`Line`] or refuses them.
//!
//! Nothing else in shellgate looks at a line that intake refused. The checks are deliberately simple
//! and total (no panics on any byte sequence): a length limit counted in Unicode scalar values, valid
//! UTF-8, and no character that can hide or rewrite what a person sees in a terminal.

use crate::error::{Code, Error};

/// The longest line shellgate accepts, in Unicode scalar values.
pub const MAX_LINE_CHARS: usize = 4000;

/// A command line that passed intake: valid UTF-8, at most [`MAX_LINE_CHARS`] characters, and free
/// of control, terminal, bidi and invisible characters (tab and newline are allowed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line(String);

impl Line {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// Why intake refused a line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    TooLong {
        chars: usize,
    },
    InvalidUtf8 {
        byte_offset: usize,
    },
    ForbiddenChar {
        ch: char,
        name: &'static str,
        line: usize,
        column: usize,
    },
}

impl Rejection {
    pub fn code(&self) -> Code {
        match self {
            Rejection::TooLong { .. } => Code::LineTooLong,
            _ => Code::InputRejected,
        }
    }

    pub fn reason(&self) -> String {
        match self {
            Rejection::TooLong { chars } => format!(
                "the line is {chars} characters long; the limit is {MAX_LINE_CHARS}. Nothing was run. \
                 Write the script to a file in the workspace and run that file instead"
            ),
            Rejection::InvalidUtf8 { byte_offset } => format!(
                "the line is not valid UTF-8 (first bad byte at offset {byte_offset}). Nothing was run"
            ),
            Rejection::ForbiddenChar {
                ch,
                name,
                line,
                column,
            } => format!(
                "the line contains {name} (U+{:04X}) at line {line}, column {column}; such characters \
                 can hide or rewrite what a person sees. Nothing was run. Remove it and retype the line",
                *ch as u32
            ),
        }
    }
}

impl From<Rejection> for Error {
    fn from(r: Rejection) -> Self {
        Error::new(r.code(), r.reason())
    }
}

/// Validate raw bytes as a command line.
pub fn intake(bytes: &[u8]) -> Result<Line, Rejection> {
    let text = std::str::from_utf8(bytes).map_err(|e| Rejection::InvalidUtf8 {
        byte_offset: e.valid_up_to(),
    })?;
    intake_str(text)
}

/// Validate a string as a command line (it is already valid UTF-8).
pub fn intake_str(text: &str) -> Result<Line, Rejection> {
    let chars = text.chars().count();
    if chars > MAX_LINE_CHARS {
        return Err(Rejection::TooLong { chars });
    }
    if let Some(rejection) = first_forbidden(text) {
        return Err(rejection);
    }
    Ok(Line(text.to_owned()))
}

fn first_forbidden(text: &str) -> Option<Rejection> {
    let mut line = 1;
    let mut column = 0;
    for ch in text.chars() {
        column += 1;
        if ch == '\n' {
            line += 1;
            column = 0;
            continue;
        }
        if let Some(name) = forbidden_name(ch) {
            return Some(Rejection::ForbiddenChar {
                ch,
                name,
                line,
                column,
            });
        }
    }
    None
}

/// The name of a character intake refuses, or `None` when it is allowed.
///
/// Refused: every C0 control but tab and newline (this includes ESC, so no terminal sequence gets
/// through, and CR, which can overwrite a displayed line), DEL, every C1 control, the bidi embedding,
/// override, isolate and mark characters, line and paragraph separators, the interlinear annotation
/// characters, and **every Unicode `Default_Ignorable_Code_Point`** (Unicode 15.1,
/// `DerivedCoreProperties.txt`): characters a terminal draws as nothing, so two lines that look the
/// same can differ — zero-width and invisible formatting characters, variation selectors, the
/// combining grapheme joiner, the Hangul fillers, the tag block used to smuggle invisible text to
/// models, and the unassigned code points reserved as default-ignorable (refused too: a future
/// Unicode version will make them invisible).
pub fn forbidden_name(ch: char) -> Option<&'static str> {
    // Printable ASCII is always allowed: decide it without walking the ranges below.
    if (' '..='~').contains(&ch) {
        return None;
    }
    let name = match ch {
        '\t' | '\n' => return None,
        '\0' => "a NUL byte",
        '\x1b' => "an ESC character (terminal escape sequence)",
        '\r' => "a carriage return",
        '\x7f' => "a DEL control character",
        '\x00'..='\x1f' => "a control character",
        '\u{80}'..='\u{9f}' => "a C1 control character",
        '\u{2028}' | '\u{2029}' => "a line/paragraph separator",
        '\u{fff9}'..='\u{fffb}' => "an interlinear annotation character",
        _ => return default_ignorable_name(ch),
    };
    Some(name)
}

/// The Unicode `Default_Ignorable_Code_Point` ranges, each with what it is.
fn default_ignorable_name(ch: char) -> Option<&'static str> {
    let name = match ch {
        '\u{202a}'..='\u{202e}' => "a bidi embedding/override character",
        '\u{2066}'..='\u{2069}' => "a bidi isolate character",
        '\u{200e}' | '\u{200f}' | '\u{061c}' => "a bidi mark",
        '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{180e}' => "a zero-width character",
        '\u{00ad}' => "a soft hyphen (invisible)",
        '\u{034f}' => "a combining grapheme joiner (invisible)",
        '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}' => "a Hangul filler (invisible)",
        '\u{17b4}' | '\u{17b5}' => "a Khmer inherent vowel (invisible)",
        '\u{180b}'..='\u{180d}' | '\u{180f}' => "a Mongolian variation selector (invisible)",
        '\u{2061}'..='\u{2064}' => "an invisible mathematical operator",
        '\u{2065}' => "a reserved invisible code point",
        '\u{206a}'..='\u{206f}' => "a deprecated invisible format character",
        '\u{fe00}'..='\u{fe0f}' | '\u{e0100}'..='\u{e01ef}' => "a variation selector (invisible)",
        '\u{fff0}'..='\u{fff8}' => "an unassigned code point reserved as invisible",
        '\u{1bca0}'..='\u{1bca3}' => "a shorthand format control (invisible)",
        '\u{1d173}'..='\u{1d17a}' => "a musical symbol format character (invisible)",
        '\u{e0000}'..='\u{e007f}' => "a Unicode tag character (invisible text)",
        '\u{e0080}'..='\u{e0fff}' => {
            "a reserved invisible code point (tag and variation selector blocks)"
        }
        _ => return None,
    };
    Some(name)
}

/// Render text for a person on one line: C0 controls in caret notation (`ESC` → `^[`, newline →
/// `^J`, `DEL` → `^?`), every other character intake refuses as `\u{…}`. A prompt, a log view or
/// a status line can then never be rewritten by the text it displays.
pub fn visible_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '\u{0}'..='\u{1f}' => {
                out.push('^');
                out.push(char::from(ch as u8 + 0x40));
            }
            '\u{7f}' => out.push_str("^?"),
            _ if forbidden_name(ch).is_some() => {
                out.push_str(&format!("\\u{{{:04x}}}", u32::from(ch)));
            }
            _ => out.push(ch),
        }
    }
    out
}

/// Render text for a person, keeping newlines and tabs: every character intake would refuse is
/// shown as a visible escape, so a prompt or a log view can never be rewritten by the text it
/// displays.
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '\n' | '\t' => out.push(ch),
            _ if forbidden_name(ch).is_some() => {
                out.push_str(&ch.escape_unicode().to_string());
            }
            _ => out.push(ch),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_lines_with_tab_and_newline() {
        let line = intake(b"ls -la\n\techo 'h\xc3\xa9'").unwrap();
        assert_eq!(line.as_str(), "ls -la\n\techo 'hé'");
    }

    #[test]
    fn length_is_counted_in_scalar_values() {
        let at_limit = "é".repeat(MAX_LINE_CHARS);
        assert!(
            intake_str(&at_limit).is_ok(),
            "4000 two-byte chars are 4000 characters"
        );
        let over = "a".repeat(MAX_LINE_CHARS + 1);
        let err = intake_str(&over).unwrap_err();
        assert_eq!(err, Rejection::TooLong { chars: 4001 });
        assert_eq!(err.code(), Code::LineTooLong);
        let reason = err.reason();
        assert!(reason.contains("4001") && reason.contains("4000") && reason.contains("file"));
    }

    #[test]
    fn invalid_utf8_is_rejected_with_offset() {
        let err = intake(b"ls \xff").unwrap_err();
        assert_eq!(err, Rejection::InvalidUtf8 { byte_offset: 3 });
        assert_eq!(err.code(), Code::InputRejected);
    }

    #[test]
    fn each_forbidden_class_is_named_with_its_column() {
        let cases: &[(&str, char, usize, usize)] = &[
            ("ls\0x", '\0', 1, 3),
            ("echo \x1b[2J", '\x1b', 1, 6),
            ("a\rb", '\r', 1, 2),
            ("ab\x07", '\x07', 1, 3),
            ("x\u{85}", '\u{85}', 1, 2),
            ("ls \u{202e}txt", '\u{202e}', 1, 4),
            ("ls\n  \u{2066}x", '\u{2066}', 2, 3),
            ("r\u{200b}m", '\u{200b}', 1, 2),
            ("\u{feff}ls", '\u{feff}', 1, 1),
            ("x\u{e0041}", '\u{e0041}', 1, 2),
            ("a\x7f", '\x7f', 1, 2),
        ];
        for &(text, ch, line, column) in cases {
            match intake_str(text) {
                Err(Rejection::ForbiddenChar {
                    ch: c,
                    line: l,
                    column: col,
                    ..
                }) => {
                    assert_eq!((c, l, col), (ch, line, column), "for {text:?}");
                }
                other => panic!("{text:?} gave {other:?}"),
            }
        }
    }

    /// Every `Default_Ignorable_Code_Point` of Unicode 15.1 (DerivedCoreProperties.txt), plus the
    /// interlinear annotation characters, is refused, with its code point in the reason.
    #[test]
    fn every_default_ignorable_code_point_is_refused() {
        const RANGES: [(u32, u32); 19] = [
            (0x00ad, 0x00ad),
            (0x034f, 0x034f),
            (0x061c, 0x061c),
            (0x115f, 0x1160),
            (0x17b4, 0x17b5),
            (0x180b, 0x180f),
            (0x200b, 0x200f),
            (0x202a, 0x202e),
            (0x2060, 0x206f),
            (0x3164, 0x3164),
            (0xfe00, 0xfe0f),
            (0xfeff, 0xfeff),
            (0xffa0, 0xffa0),
            (0xfff0, 0xfff8),
            (0xfff9, 0xfffb),
            (0x1bca0, 0x1bca3),
            (0x1d173, 0x1d17a),
            (0xe0000, 0xe0fff),
            (0x2028, 0x2029),
        ];
        for (low, high) in RANGES {
            for cp in low..=high {
                let Some(ch) = char::from_u32(cp) else {
                    continue;
                };
                let text = format!("ls{ch}x");
                let err = intake_str(&text).expect_err(&format!("U+{cp:04X} must be refused"));
                assert!(
                    err.reason().contains(&format!("U+{cp:04X}")),
                    "{}",
                    err.reason()
                );
            }
        }
        for ok in [
            '\u{00ac}',
            '\u{034e}',
            '\u{2070}',
            '\u{fe10}',
            '\u{fffc}',
            '\u{e1000}',
            'é',
        ] {
            assert!(intake_str(&format!("echo {ok}")).is_ok(), "{ok:?}");
        }
    }

    #[test]
    fn reason_names_the_character() {
        let err = intake_str("ls \u{202e}").unwrap_err();
        assert!(err.reason().contains("U+202E"), "{}", err.reason());
        assert!(err.reason().contains("column 4"), "{}", err.reason());
    }

    #[test]
    fn visible_line_uses_caret_notation_and_escapes() {
        assert_eq!(visible_line("a\x1b[31mb"), "a^[[31mb");
        assert_eq!(visible_line("x\ny\t\x7f"), "x^Jy^I^?");
        assert_eq!(visible_line("\u{202e}evil\u{9b}"), "\\u{202e}evil\\u{009b}");
        assert_eq!(visible_line("héllo ✓"), "héllo ✓");
    }

    #[test]
    fn visible_escapes_what_intake_refuses() {
        assert_eq!(visible("a\x1b[31mb"), "a\\u{1b}[31mb");
        assert_eq!(visible("ok\tline\n"), "ok\tline\n");
    }

    proptest::proptest! {
        #[test]
        fn intake_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..6000)) {
            let _ = intake(&bytes);
        }

        #[test]
        fn accepted_lines_contain_no_forbidden_chars(s in "\\PC{0,200}") {
            if let Ok(line) = intake_str(&s) {
                proptest::prop_assert!(line.as_str().chars().all(|c| forbidden_name(c).is_none()));
            }
        }
    }
}
