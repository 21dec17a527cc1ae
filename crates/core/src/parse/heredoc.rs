//! Where a here-document ends, as the shells compute it.
//!
//! The delimiter is the word after `<<` with quote removal applied and nothing expanded (POSIX
//! 2.7.4): a backslash outside quotes quotes the next character and disappears, single quotes keep
//! everything literally (backslashes too), and inside double quotes a backslash only quotes `$`,
//! `` ` ``, `"`, `\` and newline. `$X`, `${X}` and `` `x` `` stay as written. The shells agree on all
//! of that (tested against bash 5.2, dash 0.5 and zsh 5.9 in `tests/suite/decision_corpus.rs`);
//! they disagree on `$'…'` (bash and zsh decode it, dash does not know it) and `$"…"` (bash reads
//! it as `"…"`, dash and zsh as `$` followed by `"…"`), so those delimiters have one reading per
//! shell. The here-document ends at the first line that equals the delimiter (after removing
//! leading tabs, for `<<-`), or at the end of the input.

use super::words;

/// Every reading of the delimiter word `raw` among bash, dash and zsh (one when they agree).
pub fn delimiters(raw: &str) -> Vec<String> {
    let mut out = Vec::with_capacity(3);
    for dialect in [Dialect::Bash, Dialect::Dash, Dialect::Zsh] {
        let delimiter = quote_removed(raw, dialect);
        if !out.contains(&delimiter) {
            out.push(delimiter);
        }
    }
    out
}

/// The delimiter `shell` (`bash`, `dash`/`sh`, `zsh`; anything else is read as bash) computes
/// from the word `raw`.
pub fn delimiter_for(raw: &str, shell: &str) -> String {
    let dialect = match shell {
        "dash" | "sh" => Dialect::Dash,
        "zsh" => Dialect::Zsh,
        _ => Dialect::Bash,
    };
    quote_removed(raw, dialect)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Bash,
    Dash,
    Zsh,
}

/// The delimiter word after quote removal, as `dialect` performs it.
fn quote_removed(raw: &str, dialect: Dialect) -> String {
    let chars: Vec<char> = raw.chars().collect();
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match (c, next) {
            ('\\', Some(quoted)) => {
                if quoted != '\n' {
                    out.push(quoted);
                }
                i += 2;
            }
            ('$', Some('\'')) if dialect != Dialect::Dash => {
                let (body, used) = ansi_c_body(&chars[i + 2..]);
                out.push_str(&words::ansi_c(&body));
                i += 2 + used;
            }
            ('$', Some('"')) if dialect == Dialect::Bash => {
                i += 1;
            }
            ('\'', _) => {
                let body: String = chars[i + 1..].iter().take_while(|&&c| c != '\'').collect();
                i += 1 + body.chars().count() + 1;
                out.push_str(&body);
            }
            ('"', _) => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    let escaped = chars[i] == '\\'
                        && matches!(chars.get(i + 1), Some('$' | '`' | '"' | '\\' | '\n'));
                    if escaped {
                        if chars[i + 1] != '\n' {
                            out.push(chars[i + 1]);
                        }
                        i += 2;
                    } else {
                        out.push(chars[i]);
                        i += 1;
                    }
                }
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// The body of `$'…'` up to its closing quote (a `\'` inside does not close it), and how many
/// characters that took, closing quote included.
fn ansi_c_body(chars: &[char]) -> (String, usize) {
    let mut body = String::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' if i + 1 < chars.len() => {
                body.push('\\');
                body.push(chars[i + 1]);
                i += 2;
            }
            '\'' => return (body, i + 1),
            c => {
                body.push(c);
                i += 1;
            }
        }
    }
    (body, i)
}

/// The byte offset where the line holding `at` starts.
pub fn line_start(src: &str, at: usize) -> usize {
    src.get(..at)
        .and_then(|before| before.rfind('\n'))
        .map_or(0, |newline| newline + 1)
}

/// Where a here-document whose body starts at the line beginning at `body_line` ends: the start of
/// its delimiter line and the offset just after that line, or `None` when no line matches (it
/// runs to the end of the input).
pub fn end_line(
    src: &str,
    body_line: usize,
    delimiter: &str,
    strip_tabs: bool,
) -> Option<(usize, usize)> {
    let mut at = body_line;
    let rest = src.get(body_line..)?;
    for line in rest.split_inclusive('\n') {
        let content = line.strip_suffix('\n').unwrap_or(line);
        let content = if strip_tabs {
            content.trim_start_matches('\t')
        } else {
            content
        };
        if content == delimiter {
            return Some((at, at + line.len()));
        }
        at += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_removal_without_expansion() {
        let cases: &[(&str, &[&str])] = &[
            ("EOF", &["EOF"]),
            ("'E\\OF'", &["E\\OF"]),
            ("E\\OF", &["EOF"]),
            ("\"E\\OF\"", &["E\\OF"]),
            ("\"E\\\\OF\"", &["E\\OF"]),
            ("E'O'F", &["EOF"]),
            ("$X", &["$X"]),
            ("\"$X\"", &["$X"]),
            ("E\\\\OF", &["E\\OF"]),
            ("'E\"F'", &["E\"F"]),
            ("\\EOF", &["EOF"]),
            ("'EOF'x", &["EOFx"]),
            ("E${X}F", &["E${X}F"]),
            ("E`x`F", &["E`x`F"]),
            ("''", &[""]),
            ("E\"\\$\"F", &["E$F"]),
            ("\"E\\$F\"", &["E$F"]),
            ("\\\\", &["\\"]),
            ("$'E\\nF'", &["E\nF", "$E\\nF"]),
            ("$'EF'", &["EF", "$EF"]),
            ("$\"EF\"", &["EF", "$EF"]),
        ];
        for (raw, want) in cases {
            assert_eq!(delimiters(raw), *want, "{raw}");
        }
    }

    #[test]
    fn the_end_line_is_found_as_the_shell_finds_it() {
        let src = "cat <<X\na\n\tX\nX\nafter\n";
        let body = line_start(src, 8);
        assert_eq!(end_line(src, body, "X", false), Some((13, 15)));
        assert_eq!(end_line(src, body, "X", true), Some((10, 13)));
        assert_eq!(end_line(src, body, "nope", false), None);
        assert_eq!(end_line("x\nEOF", 2, "EOF", false), Some((2, 5)));
    }
}
