//! Quote removal for the lexical pieces of a shell word.
//!
//! The parser (tree-sitter-bash) tells us which piece of a word is unquoted, single-quoted,
//! double-quoted or ANSI-C quoted; these functions apply bash's quote-removal rules to one piece.
//! They are total: any input yields a string, never a panic.

/// A word after quote removal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    /// The value after quote removal. Expansions that cannot be known from the text
    /// (`$VAR`, `$(…)`, `$((…))`) are kept as written.
    pub text: String,
    /// The word contains an expansion whose value is only known at run time.
    pub dynamic: bool,
    /// The word contains unquoted pattern characters (`*`, `?`, `[`, extended globs), so it may
    /// expand to several words. (Unquoted braces are in [`Word::braces`].)
    pub glob: bool,
    /// Quoted or escaped text holds `$(` or a backtick. Inert where it is written, it runs if bash
    /// evaluates the text again: as an array subscript (`test -v 'a[$(…)]'`, `printf -v`,
    /// `[[ … -eq … ]]`, `unset`, `$((x))` of a variable holding it) or in a prompt expansion
    /// (`${x@P}`). The unwrapper decides whether that makes the line opaque: a word that is
    /// itself parsed as a script (`bash -c '…'`, `eval '…'`) has its code seen.
    pub hidden_code: bool,
    /// The word holds an unquoted expansion (`$x`, `$(…)`, `${x:-…}`): the shell splits its value
    /// into words and expands patterns in them, so it may become several words, or none.
    pub splits: bool,
    /// The word holds an expansion other than a plain parameter's (`$NAME`, `${NAME}`): a
    /// command, process or arithmetic substitution, a special or positional parameter, `${x:-…}`
    /// and every other form. Every dynamic word is, unless the parser says otherwise.
    pub computed: bool,
    /// Byte offsets in `text` of the unquoted `{`, `,` and `}` that brace expansion reads (quoted
    /// or escaped ones are not listed: `"{a,b}"` and `\{a,b}` stay one word).
    pub braces: Vec<usize>,
}

impl Word {
    pub fn literal(text: impl Into<String>) -> Self {
        Word {
            text: text.into(),
            ..Word::default()
        }
    }

    /// Text from the line that quoting or escaping made literal (see [`Word::hidden_code`]).
    pub fn quoted(text: impl Into<String>) -> Self {
        let text = text.into();
        Word {
            hidden_code: holds_code(&text),
            text,
            ..Word::default()
        }
    }

    /// A word whose value is only known at run time, kept as written.
    pub fn dynamic(text: impl Into<String>) -> Self {
        Word {
            text: text.into(),
            dynamic: true,
            computed: true,
            ..Word::default()
        }
    }

    /// A plain parameter's expansion, `$NAME` or `${NAME}`, kept as written: its value is only
    /// known at run time, and reading it runs nothing.
    pub fn parameter(text: impl Into<String>) -> Self {
        Word {
            text: text.into(),
            dynamic: true,
            ..Word::default()
        }
    }

    /// A word made of part of this one's text (an option's value, an assignment's value): what is
    /// known about the run-time value is kept, the brace offsets (into the old text) are not.
    pub fn part(&self, text: impl Into<String>) -> Word {
        Word {
            text: text.into(),
            braces: Vec::new(),
            ..self.clone()
        }
    }

    /// A word whose value is fully known from the text.
    pub fn is_literal(&self) -> bool {
        !self.dynamic && !self.glob && !self.has_braces()
    }

    /// A word that is literal text and plain parameters' expansions at most (`x`, `$HOME/bin`,
    /// `"${a}:$b"`), none of them a pattern or a brace expansion, no code hidden in quotes.
    pub fn is_plain_parameters(&self) -> bool {
        !self.computed && !self.glob && !self.has_braces() && !self.hidden_code
    }

    /// Does the word hold an unquoted `{` that brace expansion may expand?
    pub fn has_braces(&self) -> bool {
        self.braces
            .iter()
            .any(|&at| self.text.as_bytes().get(at) == Some(&b'{'))
    }

    /// Could the word's value start with a character its text does not show — a `-` that makes it
    /// an option? True when it begins with an expansion (`$d`, `"$d"`, `${p:---pre=sh}`, `$(…)`)
    /// or a pattern character (`*`, `?`, `[`, an extended glob), which may match a file named
    /// `-delete`. (Quoted text that looks like an expansion is counted too: that only errs on the
    /// side of caution.)
    pub fn start_unknown(&self) -> bool {
        (self.dynamic || self.glob || self.has_braces())
            && self.text.starts_with([
                '$', '`', '*', '?', '[', '@', '!', '+', '(', '<', '{', '^', '=',
            ])
    }

    /// Could the word become several words, or none, at run time (word splitting, patterns)?
    pub fn may_split(&self) -> bool {
        self.splits || self.glob || self.has_braces()
    }

    pub fn push(&mut self, other: Word) {
        // `"\$"'(id)'` holds `$(` only once its pieces are joined.
        self.hidden_code |=
            other.hidden_code || (self.text.ends_with('$') && other.text.starts_with('('));
        let offset = self.text.len();
        self.braces.extend(other.braces.iter().map(|b| b + offset));
        self.text.push_str(&other.text);
        self.dynamic |= other.dynamic;
        self.computed |= other.computed;
        self.glob |= other.glob;
        self.splits |= other.splits;
    }
}

/// Would this text run a command if bash evaluated it again? (`$(…)` or a backtick.)
pub fn holds_code(text: &str) -> bool {
    text.contains("$(") || text.contains('`')
}

/// An unquoted word piece: a backslash quotes the next character, backslash-newline disappears,
/// unquoted `* ? [` make the word a pattern, and unquoted `{ , }` are recorded for brace
/// expansion.
pub fn unquoted(raw: &str) -> Word {
    let mut word = Word::default();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => word.text.push(next),
            },
            '{' | ',' | '}' => {
                word.braces.push(word.text.len());
                word.text.push(c);
            }
            '*' | '?' | '[' => {
                word.glob = true;
                word.text.push(c);
            }
            _ => word.text.push(c),
        }
    }
    // Only an escaped `\$(` or `` \` `` survives in an unquoted word's text.
    word.hidden_code = holds_code(&word.text);
    word
}

/// Literal text inside double quotes: a backslash only quotes `$ \` " \` and newline.
pub fn double_quoted_literal(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('$') | Some('`') | Some('"') | Some('\\') => {
                out.push(chars.next().unwrap_or('\\'));
            }
            Some('\n') => {
                chars.next();
            }
            _ => out.push('\\'),
        }
    }
    out
}

/// The body of a `$'…'` string (without `$'` and `'`), with its escapes decoded.
pub fn ansi_c(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let chars: Vec<char> = body.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' || i >= chars.len() {
            out.push(c);
            continue;
        }
        let e = chars[i];
        i += 1;
        match e {
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            'c' => {
                if i < chars.len() {
                    out.push(char::from((chars[i] as u32 & 0x1f) as u8));
                    i += 1;
                }
            }
            '0'..='7' => {
                let (value, used) = digits(&chars[i - 1..], 8, 3);
                i += used - 1;
                out.push(char::from_u32(value & 0xff).unwrap_or('\u{fffd}'));
            }
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let (value, used) = digits(&chars[i..], 16, max);
                if used == 0 {
                    out.push('\\');
                    out.push(e);
                } else {
                    i += used;
                    out.push(char::from_u32(value).unwrap_or('\u{fffd}'));
                }
            }
            _ => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    out
}

/// Parse up to `max` digits of `radix` from the start of `chars`; returns (value, digits used).
fn digits(chars: &[char], radix: u32, max: usize) -> (u32, usize) {
    let mut value: u32 = 0;
    let mut used = 0;
    for c in chars.iter().take(max) {
        match c.to_digit(radix) {
            Some(d) => {
                value = value.saturating_mul(radix).saturating_add(d);
                used += 1;
            }
            None => break,
        }
    }
    (value, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unquoted_removes_backslashes_and_flags_globs() {
        assert_eq!(unquoted(r"\rm").text, "rm");
        assert_eq!(unquoted("a\\\nb").text, "ab");
        assert!(unquoted("*.txt").glob);
        assert!(!unquoted("{a,b}").is_literal());
        assert!(!unquoted(r"\*").glob);
        assert_eq!(unquoted(r"\*").text, "*");
        assert!(unquoted(r"\$(id)").hidden_code);
        assert!(unquoted(r"a\`id\`").hidden_code);
        assert!(!unquoted("plain").hidden_code);
    }

    #[test]
    fn unquoted_braces_are_recorded_and_escaped_ones_are_not() {
        assert_eq!(unquoted("{a,b}").braces, [0, 2, 4]);
        assert!(unquoted(r"\{a\,b\}").braces.is_empty());
        let mut word = Word::quoted("{x,");
        word.push(unquoted("{a,b}"));
        assert_eq!(word.braces, [3, 5, 7]);
    }

    #[test]
    fn words_that_may_start_with_an_unseen_dash() {
        assert!(Word::dynamic("$d").start_unknown());
        assert!(unquoted("*.rs").start_unknown());
        assert!(unquoted("[-]x").start_unknown());
        assert!(!unquoted("src/*.rs").start_unknown());
        assert!(!Word::quoted("$d").start_unknown());
        assert!(!Word::literal("-x").start_unknown());
    }

    #[test]
    fn code_split_across_quoted_pieces_is_seen() {
        let mut word = Word::quoted("a[$");
        assert!(!word.hidden_code);
        word.push(Word::quoted("(id)]"));
        assert!(word.hidden_code);
        assert!(Word::quoted("`id`").hidden_code);
        assert!(!Word::literal("$(id)").hidden_code);
    }

    #[test]
    fn double_quotes_keep_other_backslashes() {
        assert_eq!(double_quoted_literal(r#"a\"b\$c\d"#), r#"a"b$c\d"#);
    }

    #[test]
    fn ansi_c_decodes_escapes() {
        assert_eq!(ansi_c(r"\x72\x6d"), "rm");
        assert_eq!(ansi_c(r"\162\155"), "rm");
        assert_eq!(ansi_c(r"\u0072m"), "rm");
        assert_eq!(ansi_c(r"a\nb\tc\'"), "a\nb\tc'");
        assert_eq!(ansi_c(r"\e[0m"), "\x1b[0m");
        assert_eq!(ansi_c(r"\xZZ"), r"\xZZ");
        assert_eq!(ansi_c("\\"), "\\");
    }
}
