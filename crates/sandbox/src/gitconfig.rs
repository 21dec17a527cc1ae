//! Just enough of git's config syntax to follow what a config file makes git read or run from
//! elsewhere: `include.path` and `includeIf.<condition>.path` (files git reads as config), and
//! `core.hooksPath` (the directory git runs hooks from). Everything else a config says is judged
//! by the file's content as a whole (see [`super::surface`]), so no list of dangerous keys is
//! kept here.
//!
//! The syntax follows `git-config(1)`: `[section]`, `[section "subsection"]` and the legacy
//! `[section.subsection]`; `name = value` or a bare `name` (true); values with `"…"` quoting,
//! the escapes `\n \t \b \" \\`, a backslash at the end of a line continuing it, and `#` or `;`
//! starting a comment outside quotes. Section and key names are case-insensitive, subsections
//! are not. A line this parser cannot read ends the file for it, as for git (which refuses the
//! whole file): whatever came before is kept.

/// One `section[.subsection].name = value` entry, the section and name lower-cased.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub section: String,
    pub subsection: Option<String>,
    pub name: String,
    pub value: String,
}

impl Entry {
    /// Whether this entry names a file git reads as config (`include.path`,
    /// `includeIf.<condition>.path`; the condition is not evaluated: every target counts).
    pub fn is_include(&self) -> bool {
        self.name == "path"
            && ((self.section == "include" && self.subsection.is_none())
                || (self.section == "includeif" && self.subsection.is_some()))
    }

    /// Whether this entry is `core.hooksPath`.
    pub fn is_hooks_path(&self) -> bool {
        self.section == "core" && self.subsection.is_none() && self.name == "hookspath"
    }
}

/// The entries of a config file's text, in order.
pub fn parse(text: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut section: Option<(String, Option<String>)> = None;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(rest) = trimmed.strip_prefix('[') {
            let Some((header, after)) = parse_header(rest) else {
                return entries;
            };
            section = Some(header);
            // A key may follow the header on the same line.
            let after = after.trim_start();
            if after.is_empty() || after.starts_with('#') || after.starts_with(';') {
                continue;
            }
            let Some(entry) = parse_key_value(after, &mut lines, section.as_ref()) else {
                return entries;
            };
            entries.push(entry);
            continue;
        }
        let Some(entry) = parse_key_value(trimmed, &mut lines, section.as_ref()) else {
            return entries;
        };
        entries.push(entry);
    }
    entries
}

/// `section "subsection"]` or `section.subsection]` (the `[` already taken): the lower-cased
/// section, the subsection, and what follows the `]`.
fn parse_header(rest: &str) -> Option<((String, Option<String>), &str)> {
    let name_end = rest.find(|c: char| c == ']' || c.is_whitespace())?;
    let name = &rest[..name_end];
    let after_name = rest[name_end..].trim_start();
    if let Some(after) = after_name.strip_prefix(']') {
        // `[section]` or the legacy `[section.subsection]` (subsection lower-cased by git).
        return Some(match name.split_once('.') {
            Some((s, sub)) => (
                (s.to_ascii_lowercase(), Some(sub.to_ascii_lowercase())),
                after,
            ),
            None => ((name.to_ascii_lowercase(), None), after),
        });
    }
    let quoted = after_name.strip_prefix('"')?;
    let mut subsection = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => subsection.push(chars.next()?.1),
            '"' => {
                let after = quoted[i + 1..].trim_start().strip_prefix(']')?;
                return Some(((name.to_ascii_lowercase(), Some(subsection)), after));
            }
            c => subsection.push(c),
        }
    }
    None
}

/// `name = value` (or a bare `name`), continuing onto following lines after a trailing backslash.
fn parse_key_value<'a>(
    line: &str,
    lines: &mut impl Iterator<Item = &'a str>,
    section: Option<&(String, Option<String>)>,
) -> Option<Entry> {
    let (section, subsection) = section?.clone();
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(line.len());
    let name = line[..name_end].to_ascii_lowercase();
    if name.is_empty() {
        return None;
    }
    let rest = line[name_end..].trim_start();
    let value = if rest.is_empty() || rest.starts_with('#') || rest.starts_with(';') {
        "true".to_owned()
    } else {
        parse_value(rest.strip_prefix('=')?, lines)?
    };
    Some(Entry {
        section,
        subsection,
        name,
        value,
    })
}

/// A value: quotes removed, escapes applied, comments dropped, surrounding blanks trimmed (inner
/// ones outside quotes kept as git keeps them), continued lines joined.
fn parse_value<'a>(first: &str, lines: &mut impl Iterator<Item = &'a str>) -> Option<String> {
    let mut value = String::new();
    // How much of `value` is certain to stay: quoted text, and blanks followed by more text.
    let mut kept = 0;
    let mut quoted = false;
    let mut line = first.to_owned();
    loop {
        let mut chars = line.chars();
        let mut continued = false;
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    None => {
                        continued = true;
                        break;
                    }
                    Some('n') => value.push('\n'),
                    Some('t') => value.push('\t'),
                    Some('b') => {
                        value.pop();
                    }
                    Some(c @ ('"' | '\\')) => value.push(c),
                    Some(_) => return None,
                },
                '"' => {
                    quoted = !quoted;
                    kept = value.len();
                    continue;
                }
                '#' | ';' if !quoted => break,
                c if c.is_whitespace() && !quoted => {
                    if !value.is_empty() {
                        value.push(c);
                    }
                    continue;
                }
                c => value.push(c),
            }
            kept = value.len();
        }
        if !continued {
            break;
        }
        line = lines.next()?.to_owned();
    }
    if quoted {
        return None;
    }
    value.truncate(kept);
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn includes(text: &str) -> Vec<String> {
        parse(text)
            .into_iter()
            .filter(Entry::is_include)
            .map(|e| e.value)
            .collect()
    }

    #[test]
    fn includes_in_every_spelling() {
        let text = "\
# a comment
[include]
\tpath = one.inc
[Include]
    PATH=\"two words.inc\" ; trailing comment
[includeIf \"gitdir:~/work/\"]
    path = ~/three.inc
[includeif \"onbranch:main\"] path = four.inc
[include] path = fi\\
ve.inc
[core]
    hooksPath = .husky/_
    fsmonitor
";
        assert_eq!(
            includes(text),
            [
                "one.inc",
                "two words.inc",
                "~/three.inc",
                "four.inc",
                "five.inc"
            ]
        );
        let hooks: Vec<String> = parse(text)
            .into_iter()
            .filter(Entry::is_hooks_path)
            .map(|e| e.value)
            .collect();
        assert_eq!(hooks, [".husky/_"]);
        let bare = parse(text).into_iter().find(|e| e.name == "fsmonitor");
        assert_eq!(bare.map(|e| e.value).as_deref(), Some("true"));
    }

    #[test]
    fn an_include_section_subsection_is_not_an_include() {
        // `[include "x"]` is not git's include; `includeIf` needs its condition.
        assert!(includes("[include \"x\"]\npath = a\n[includeIf]\npath = b\n").is_empty());
        // The legacy `[section.subsection]` header.
        let entries = parse("[includeIf.gitdir:/x/]\npath = c\n");
        assert_eq!(entries.len(), 1);
        assert!(entries[0].is_include());
    }

    #[test]
    fn values_are_read_as_git_reads_them() {
        let entries =
            parse("[a]\nx = \"q\\\"uo\\\\te\"  # c\ny =   spaced   out  \nz = \"  kept  \"\n");
        let values: Vec<&str> = entries.iter().map(|e| e.value.as_str()).collect();
        assert_eq!(values, ["q\"uo\\te", "spaced   out", "  kept  "]);
    }

    #[test]
    fn an_unreadable_line_ends_the_file() {
        let entries = parse("[include]\npath = a\n[broken\npath = b\n");
        assert_eq!(entries.len(), 1);
    }
}
