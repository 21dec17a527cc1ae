//! One option scanner for the known-safe allow-list, reading a program's arguments the way that
//! program's own parser does.
//!
//! A program is described by a [`Spec`]: the short and long options known only to read (with
//! whether they take a value), the long options known to write or run (listed so that an
//! abbreviation which could mean one of them is refused), how many operands it may have, and how
//! its parser behaves ([`Style`]). The scanner understands short-option clusters with attached
//! values (`-uo FILE`, `-n5`), `--opt=value` and `--opt value`, GNU long-option abbreviations
//! (`--outp=` is `--output=`; an abbreviation counts as *every* option it could abbreviate), `--`,
//! `-` as an operand, options after operands (GNU permutes them), and obsolete `-NUM` forms where
//! a program has them. Anything it does not know is a refusal, never a guess.
//!
//! It also refuses words whose value the text does not show where that matters: before `--`, a
//! word that may become several words (`$x`, `*`) or may start with a `-` it does not show (`"$d"`,
//! `${p:---pre=sh}`) could be an option; after `--` such words are operands, whose number is then
//! unknown.

use crate::parse::{ArgShape, Command};

/// How a program's parser reads its arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// glibc getopt_long: options anywhere (permuted) until `--`, unambiguous abbreviations of
    /// long options.
    Gnu,
    /// Options only before the first operand; long options only by their full name.
    Posix,
    /// clap (ripgrep): options anywhere until `--`, long options only by their full name.
    Clap,
    /// A program's own parser: options anywhere until `--`, full long names only, and a short
    /// option with a value must end its cluster (its value is the next word).
    Own,
}

/// How many operands the program may be given before one of them is written to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operands {
    Any,
    AtMost(usize),
}

/// What a program's options are.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Short options that only read and take no value, as one string (`"abl"`).
    pub flags: &'static str,
    /// Short options that only read and take a value (attached, or the next word).
    pub values: &'static str,
    /// Short options that only read and take an optional value, attached only.
    pub optional: &'static str,
    /// Long options that only read, without `--`: `name` takes no value, `name=` a value (the next
    /// word or attached), `name?` an optional value (attached only).
    pub long: &'static [&'static str],
    /// Long options that write, run something or change the system (names without `--`).
    pub long_unsafe: &'static [&'static str],
    pub operands: Operands,
    pub style: Style,
    /// `-NUM` (and a cluster starting with a digit) is an option, as in `head -5`.
    pub numbers: bool,
}

impl Spec {
    /// A GNU program with no operand limit and no obsolete forms.
    pub const fn gnu(
        flags: &'static str,
        values: &'static str,
        long: &'static [&'static str],
    ) -> Spec {
        Spec {
            flags,
            values,
            optional: "",
            long,
            long_unsafe: &[],
            operands: Operands::Any,
            style: Style::Gnu,
            numbers: false,
        }
    }
}

/// One argument as the scanner sees it.
#[derive(Debug, Clone, Copy)]
pub struct Arg<'a> {
    pub text: &'a str,
    pub shape: ArgShape,
}

/// Why a command is not known to be read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal(pub String);

/// What the scanner found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan<'a> {
    /// Each option given, by its name as written in the [`Spec`] (`"o"`, `"output"`), with its
    /// value if it took one.
    pub options: Vec<(&'static str, Option<&'a str>)>,
    pub operands: Vec<&'a str>,
    /// Some operand's number or value is only known at run time.
    pub operands_unknown: bool,
}

impl<'a> Scan<'a> {
    pub fn has(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| *n == name)
    }

    pub fn value(&self, name: &str) -> Option<&'a str> {
        self.options
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| *v)
    }
}

/// The arguments of a parsed command (a wrapper's run-time arguments, `xargs CMD`, come last and
/// are unknown).
pub fn args_of(command: &Command) -> Vec<Arg<'_>> {
    let mut args: Vec<Arg> = command
        .argv
        .iter()
        .enumerate()
        .map(|(i, text)| Arg {
            text,
            shape: command.shapes.get(i).copied().unwrap_or(ArgShape {
                multi: true,
                splits: true,
                start_unknown: true,
            }),
        })
        .collect();
    if command.extra_args {
        args.push(Arg {
            text: "",
            shape: ArgShape {
                multi: true,
                splits: true,
                start_unknown: true,
            },
        });
    }
    args
}

/// Read `args` as `spec`'s program reads them; a refusal says which word is not known to only
/// read.
pub fn scan<'a>(spec: &Spec, args: &[Arg<'a>]) -> Result<Scan<'a>, Refusal> {
    let mut out = Scan::default();
    let mut i = 0;
    let mut options_done = false;
    while i < args.len() {
        let arg = args[i];
        i += 1;
        if options_done {
            operand(&mut out, arg);
            continue;
        }
        if arg.shape.splits || arg.shape.start_unknown {
            return Err(Refusal(format!(
                "`{}` is only known at run time and could be an option",
                shown(arg.text)
            )));
        }
        let text = arg.text;
        // A pattern such as `src/*.rs` becomes operands that all start as it does.
        if arg.shape.multi && !text.starts_with('-') {
            operand(&mut out, arg);
            if spec.style == Style::Posix {
                options_done = true;
            }
            continue;
        }
        if text == "--" {
            options_done = true;
        } else if let Some(long) = text.strip_prefix("--") {
            i = long_option(spec, long, args, i, &mut out)?;
        } else if text.len() > 1 && text.starts_with('-') {
            i = short_cluster(spec, text, args, i, &mut out)?;
        } else {
            operand(&mut out, arg);
            if spec.style == Style::Posix {
                options_done = true;
            }
        }
    }
    if let Operands::AtMost(max) = spec.operands
        && (out.operands.len() > max || out.operands_unknown)
    {
        return Err(Refusal(format!(
            "more than {max} operand(s): the next one is written to"
        )));
    }
    Ok(out)
}

fn operand<'a>(out: &mut Scan<'a>, arg: Arg<'a>) {
    out.operands_unknown |= arg.shape.multi;
    out.operands.push(arg.text);
}

/// The value word at `args[at]` for an option: one word, whatever it holds.
fn value_word<'a>(args: &[Arg<'a>], at: usize, option: &str) -> Result<&'a str, Refusal> {
    match args.get(at) {
        Some(arg) if !arg.shape.multi => Ok(arg.text),
        Some(arg) => Err(Refusal(format!(
            "the value of `{option}` (`{}`) may become several words",
            shown(arg.text)
        ))),
        None => Err(Refusal(format!("`{option}` is missing its value"))),
    }
}

/// `--name`, `--name=value`, `--name value`, or an abbreviation of one. Returns the next index.
fn long_option<'a>(
    spec: &Spec,
    long: &'a str,
    args: &[Arg<'a>],
    next: usize,
    out: &mut Scan<'a>,
) -> Result<usize, Refusal> {
    let (name, attached) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (long, None),
    };
    let entry = resolve_long(spec, name)?;
    let (option, takes) = split_takes(entry);
    match (takes, attached) {
        (Takes::Value, Some(value)) | (Takes::Optional, Some(value)) => {
            out.options.push((option, Some(value)));
            Ok(next)
        }
        (Takes::Value, None) => {
            let value = value_word(args, next, &format!("--{option}"))?;
            out.options.push((option, Some(value)));
            Ok(next + 1)
        }
        (Takes::Optional | Takes::Nothing, None) => {
            out.options.push((option, None));
            Ok(next)
        }
        (Takes::Nothing, Some(_)) => Err(Refusal(format!("`--{option}` takes no value"))),
    }
}

/// The spec entry `--name` means: the exact option, or — for GNU parsers — the one option it
/// abbreviates. An abbreviation that could mean an option that writes or runs is refused even
/// when it could also mean a safe one.
fn resolve_long(spec: &Spec, name: &str) -> Result<&'static str, Refusal> {
    if spec.long_unsafe.contains(&name) {
        return Err(Refusal(format!("`--{name}` writes or runs something")));
    }
    if let Some(entry) = spec.long.iter().find(|entry| split_takes(entry).0 == name) {
        return Ok(entry);
    }
    if spec.style != Style::Gnu || name.is_empty() {
        return Err(Refusal(format!("`--{name}` is not known to only read")));
    }
    if let Some(unsafe_match) = spec.long_unsafe.iter().find(|u| u.starts_with(name)) {
        return Err(Refusal(format!(
            "`--{name}` may abbreviate `--{unsafe_match}`, which writes or runs something"
        )));
    }
    let mut candidates = spec
        .long
        .iter()
        .filter(|entry| split_takes(entry).0.starts_with(name));
    match (candidates.next(), candidates.next()) {
        (Some(entry), None) => Ok(entry),
        (Some(_), Some(_)) => Err(Refusal(format!("`--{name}` is an ambiguous abbreviation"))),
        (None, _) => Err(Refusal(format!("`--{name}` is not known to only read"))),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Takes {
    Nothing,
    Value,
    Optional,
}

fn split_takes(entry: &'static str) -> (&'static str, Takes) {
    if let Some(name) = entry.strip_suffix('=') {
        (name, Takes::Value)
    } else if let Some(name) = entry.strip_suffix('?') {
        (name, Takes::Optional)
    } else {
        (entry, Takes::Nothing)
    }
}

/// `-abc`, `-n5`, `-uo FILE`, `-5`. Returns the next index.
fn short_cluster<'a>(
    spec: &Spec,
    text: &'a str,
    args: &[Arg<'a>],
    next: usize,
    out: &mut Scan<'a>,
) -> Result<usize, Refusal> {
    let body = &text[1..];
    if spec.numbers && body.starts_with(|c: char| c.is_ascii_digit()) {
        out.options.push(("NUM", Some(body)));
        return Ok(next);
    }
    for (at, c) in body.char_indices() {
        let rest = &body[at + c.len_utf8()..];
        let name = short_name(c);
        if spec.values.contains(c) {
            if rest.is_empty() {
                let value = value_word(args, next, &format!("-{c}"))?;
                out.options.push((name, Some(value)));
                return Ok(next + 1);
            }
            if spec.style == Style::Own {
                return Err(Refusal(format!(
                    "`-{c}` in `{}`: where its value starts is not known",
                    shown(text)
                )));
            }
            out.options.push((name, Some(rest)));
            return Ok(next);
        }
        if spec.optional.contains(c) {
            out.options.push((name, (!rest.is_empty()).then_some(rest)));
            return Ok(next);
        }
        if !spec.flags.contains(c) {
            return Err(Refusal(format!(
                "`-{c}` (in `{}`) is not known to only read",
                shown(text)
            )));
        }
        out.options.push((name, None));
    }
    Ok(next)
}

/// The name of a short option as it appears in [`Scan::options`]: the character itself.
fn short_name(c: char) -> &'static str {
    const ASCII: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    ASCII
        .find(c)
        .and_then(|at| ASCII.get(at..at + 1))
        .unwrap_or("?")
}

/// A word for a refusal's message: shortened, and never the raw control characters (intake has
/// refused those, but a refusal must not depend on it).
fn shown(text: &str) -> String {
    let mut out: String = crate::intake::visible(text).chars().take(40).collect();
    if text.chars().count() > 40 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SORT: Spec = Spec {
        flags: "bcCdfghiMmnRrsuVz",
        values: "kSt",
        optional: "",
        long: &[
            "check?",
            "debug",
            "field-separator=",
            "files0-from=",
            "help",
            "key=",
            "reverse",
            "unique",
            "version",
        ],
        long_unsafe: &["output", "compress-program", "temporary-directory"],
        operands: Operands::Any,
        style: Style::Gnu,
        numbers: false,
    };

    const UNIQ: Spec = Spec {
        flags: "cdDiuz",
        values: "fsw",
        operands: Operands::AtMost(1),
        ..SORT
    };

    fn plain(words: &[&'static str]) -> Vec<Arg<'static>> {
        words
            .iter()
            .map(|text| Arg {
                text,
                shape: ArgShape::default(),
            })
            .collect()
    }

    fn ok(spec: &Spec, words: &[&'static str]) -> bool {
        scan(spec, &plain(words)).is_ok()
    }

    #[test]
    fn clusters_with_attached_values() {
        assert!(ok(&SORT, &["-ru", "f"]));
        assert!(ok(&SORT, &["-k2,2n", "f"]));
        assert!(ok(&SORT, &["-rk", "2", "f"]));
        assert!(!ok(&SORT, &["-uo", "out", "f"]));
        assert!(!ok(&SORT, &["-o", "out"]));
        assert!(!ok(&SORT, &["-ruo/tmp/x"]));
        // `-t o` is a value, not the option o.
        assert!(ok(&SORT, &["-to", "f"]));
        let scan = scan(&SORT, &plain(&["-rk2", "x"])).unwrap();
        assert_eq!(scan.options, [("r", None), ("k", Some("2"))]);
        assert_eq!(scan.operands, ["x"]);
    }

    #[test]
    fn long_options_and_abbreviations() {
        assert!(ok(&SORT, &["--reverse", "--key=2", "--key", "3"]));
        assert!(ok(&SORT, &["--rev", "--uniq"]));
        assert!(!ok(&SORT, &["--output=x"]));
        assert!(!ok(&SORT, &["--outp=x"]));
        assert!(!ok(&SORT, &["--o=x"]));
        assert!(!ok(&SORT, &["--co=cat"]));
        assert!(!ok(&SORT, &["--compress-program", "cat"]));
        assert!(!ok(&SORT, &["--t=/tmp"]));
        // `--de` can only be `--debug`.
        assert!(ok(&SORT, &["--de"]));
        assert!(ok(&SORT, &["--check=quiet"]));
        assert!(!ok(&SORT, &["--reverse=yes"]));
        assert!(!ok(&SORT, &["--nope"]));
        // An abbreviation matching several safe options is ambiguous to getopt: refused.
        assert!(!ok(&SORT, &["--f"]));
        let posix = Spec {
            style: Style::Posix,
            ..SORT
        };
        assert!(!ok(&posix, &["--rev"]));
        assert!(ok(&posix, &["--reverse"]));
    }

    #[test]
    fn double_dash_and_lone_dash_are_operands() {
        assert!(ok(&SORT, &["--", "-o"]));
        assert!(ok(&SORT, &["-", "f"]));
        assert!(ok(&UNIQ, &["-"]));
        assert!(!ok(&UNIQ, &["-", "out"]));
        assert!(!ok(&UNIQ, &["in", "out"]));
        assert!(!ok(&UNIQ, &["-c", "in", "--", "out"]));
        assert!(ok(&UNIQ, &["-c", "--", "-weird-name"]));
        // Permuted: an option after an operand is still an option.
        assert!(!ok(&SORT, &["f", "-o", "x"]));
        let posix = Spec {
            style: Style::Posix,
            ..SORT
        };
        assert!(ok(&posix, &["f", "-o", "x"]));
    }

    #[test]
    fn words_only_known_at_run_time() {
        let dynamic = |text: &'static str, splits: bool, pattern: bool, start_unknown| Arg {
            text,
            shape: ArgShape {
                multi: splits || pattern,
                splits,
                start_unknown,
            },
        };
        assert!(scan(&SORT, &[dynamic("$o", true, false, true)]).is_err());
        assert!(scan(&SORT, &[dynamic("\"$o\"", false, false, true)]).is_err());
        assert!(scan(&SORT, &[dynamic("-k$x", true, false, false)]).is_err());
        assert!(scan(&SORT, &[dynamic("*", false, true, true)]).is_err());
        // `src/*.rs` only becomes words that start with `src/`: operands, however many.
        assert!(scan(&SORT, &[dynamic("src/*.rs", false, true, false)]).is_ok());
        assert!(scan(&UNIQ, &[dynamic("src/*.rs", false, true, false)]).is_err());
        let mut after = plain(&["--"]);
        after.push(dynamic("*.rs", false, true, true));
        assert!(scan(&SORT, &after).is_ok());
        assert!(
            scan(&UNIQ, &after).is_err(),
            "the number of operands is unknown"
        );
        // A value may hold anything, as long as it stays one word.
        let mut value = plain(&["-t"]);
        value.push(dynamic("\"$sep\"", false, false, true));
        assert!(scan(&SORT, &value).is_ok());
        let mut value = plain(&["-t"]);
        value.push(dynamic("$sep", true, false, true));
        assert!(scan(&SORT, &value).is_err());
    }

    #[test]
    fn obsolete_numbers() {
        let head = Spec {
            flags: "qvz",
            values: "cn",
            numbers: true,
            ..SORT
        };
        assert!(ok(&head, &["-5", "f"]));
        assert!(ok(&head, &["-n", "-5", "f"]));
        assert!(!ok(&SORT, &["-5"]));
    }

    #[test]
    fn own_parsers_need_values_at_the_end_of_a_cluster() {
        let tree = Spec {
            flags: "ad",
            values: "LP",
            style: Style::Own,
            ..SORT
        };
        assert!(ok(&tree, &["-adL", "2"]));
        assert!(!ok(&tree, &["-L2o"]));
    }
}
