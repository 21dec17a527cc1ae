//! Brace expansion, as bash performs it before any other expansion: `{a,b}` and `{1..3}`.
//!
//! Words are judged after this step, because it can make options out of text that holds none:
//! `find . {-delete,}` runs `find . -delete`, and `{rm,-rf,src}` runs `rm -rf src`. Only the
//! unquoted `{`, `,` and `}` of a word take part (recorded in [`Word::braces`]); the expansion is
//! bounded, and a word that would expand to more than the bound is reported as such, never
//! truncated.
//!
//! Checked against bash 5.2 and zsh 5.9: alternatives nest (`a{b,c{d,e}f}g`), a `{` without a
//! matching `}` or without a top-level `,` is literal (`{a}`, `{}`), sequences count up or down
//! with an optional step (`{1..10..4}`, `{z..a}`, `{01..03}`), and a step of 0 counts as 1. bash
//! removes words that expand to nothing (`{-delete,}` is the one word `-delete`); zsh keeps them
//! as empty words, which no judgement here depends on. sh (dash) does no brace expansion: a line
//! for sh is expanded anyway, which can only find more commands than run.

use super::words::Word;

/// The most words one command's brace expansions may yield before the line is opaque.
pub const MAX_BRACE_WORDS: usize = 64;

/// The expansion exceeded [`MAX_BRACE_WORDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManyWords;

/// One character of a word, and whether it takes part in brace expansion.
type Piece = (char, bool);

/// Expand the braces of `word` into the words bash would see, at most `budget` of them (the
/// budget is shared by the words of one command and shrinks by what is produced). A word without
/// unquoted braces is returned as it is.
pub fn expand(word: Word, budget: &mut usize) -> Result<Vec<Word>, TooManyWords> {
    if word.braces.is_empty() {
        *budget = budget.checked_sub(1).ok_or(TooManyWords)?;
        return Ok(vec![word]);
    }
    let pieces = pieces_of(&word);
    if lower_bound(&pieces) > *budget {
        return Err(TooManyWords);
    }
    let mut texts = Vec::new();
    expand_from(&pieces, 0, &mut texts, *budget)?;
    texts.retain(|text| !text.is_empty());
    *budget = budget.checked_sub(texts.len()).ok_or(TooManyWords)?;
    Ok(texts
        .into_iter()
        .map(|text| Word {
            text,
            braces: Vec::new(),
            // Each result may still hold a pattern or an expansion of the original word.
            ..word.clone()
        })
        .collect())
}

/// A lower bound of how many words the expansion makes (before empty ones are dropped): the
/// product of the alternatives of each brace group that is not inside another. It refuses
/// `{a,b}{a,b}…` without expanding it.
fn lower_bound(pieces: &[Piece]) -> usize {
    let mut product: usize = 1;
    let mut at = 0;
    while let Some(open) = next_open(pieces, at) {
        match matching_close(pieces, open) {
            Some((close, commas)) => {
                product = product.saturating_mul(commas.len() + 1);
                at = close + 1;
            }
            None => at = open + 1,
        }
    }
    product
}

fn pieces_of(word: &Word) -> Vec<Piece> {
    let mut active = word.braces.iter().copied().peekable();
    word.text
        .char_indices()
        .map(|(at, c)| {
            let is_active = active.peek() == Some(&at);
            if is_active {
                active.next();
            }
            (c, is_active)
        })
        .collect()
}

/// Expand `pieces`, looking for a brace expression at or after `from`, into `out`.
fn expand_from(
    pieces: &[Piece],
    from: usize,
    out: &mut Vec<String>,
    limit: usize,
) -> Result<(), TooManyWords> {
    let mut start = from;
    while let Some(open) = next_open(pieces, start) {
        let Some((close, commas)) = matching_close(pieces, open) else {
            start = open + 1;
            continue;
        };
        let preamble = &pieces[..open];
        let postscript = &pieces[close + 1..];
        if !commas.is_empty() {
            let mut bounds = Vec::with_capacity(commas.len() + 2);
            bounds.push(open);
            bounds.extend(commas);
            bounds.push(close);
            for pair in bounds.windows(2) {
                let alternative = &pieces[pair[0] + 1..pair[1]];
                let joined = [preamble, alternative, postscript].concat();
                expand_from(&joined, open, out, limit)?;
            }
            return Ok(());
        }
        let body: String = pieces[open + 1..close].iter().map(|(c, _)| c).collect();
        if let Some(items) = sequence(&body, limit)? {
            for item in items {
                let literal: Vec<Piece> = item.chars().map(|c| (c, false)).collect();
                let joined = [preamble, &literal, postscript].concat();
                expand_from(&joined, open + literal.len(), out, limit)?;
            }
            return Ok(());
        }
        start = open + 1;
    }
    if out.len() >= limit {
        return Err(TooManyWords);
    }
    out.push(pieces.iter().map(|(c, _)| c).collect());
    Ok(())
}

fn next_open(pieces: &[Piece], from: usize) -> Option<usize> {
    (from..pieces.len()).find(|&i| pieces[i] == ('{', true))
}

/// The `}` matching the `{` at `open`, and the commas directly inside that pair.
fn matching_close(pieces: &[Piece], open: usize) -> Option<(usize, Vec<usize>)> {
    let mut depth = 0usize;
    let mut commas = Vec::new();
    for (i, piece) in pieces.iter().enumerate().skip(open) {
        match piece {
            ('{', true) => depth += 1,
            ('}', true) => {
                depth -= 1;
                if depth == 0 {
                    return Some((i, commas));
                }
            }
            (',', true) if depth == 1 => commas.push(i),
            _ => {}
        }
    }
    None
}

/// The items of a sequence expression body (`1..10`, `a..e`, `01..10..2`), `None` when the body
/// is not one.
fn sequence(body: &str, limit: usize) -> Result<Option<Vec<String>>, TooManyWords> {
    let parts: Vec<&str> = body.split("..").collect();
    let (first, last, step) = match parts.as_slice() {
        [a, b] => (*a, *b, None),
        [a, b, c] => (*a, *b, Some(*c)),
        _ => return Ok(None),
    };
    let step = match step {
        None => 1,
        Some(text) => match text.parse::<i64>() {
            Ok(n) => n.checked_abs().ok_or(TooManyWords)?.max(1),
            Err(_) => return Ok(None),
        },
    };
    if let (Ok(a), Ok(b)) = (first.parse::<i64>(), last.parse::<i64>()) {
        // bash pads every term to the longer bound's width when either bound has a leading zero.
        let padded = [first, last].iter().any(|t| {
            let digits = t.trim_start_matches('-');
            digits.len() > 1 && digits.starts_with('0')
        });
        let width = padded.then(|| first.len().max(last.len()));
        let numbers = stepped(a, b, step, limit)?;
        return Ok(Some(
            numbers
                .into_iter()
                .map(|n| match width {
                    Some(w) if n < 0 => format!("-{:0>w$}", -n, w = w - 1),
                    Some(w) => format!("{n:0>w$}"),
                    None => n.to_string(),
                })
                .collect(),
        ));
    }
    let (mut a, mut b) = (first.chars(), last.chars());
    match (a.next(), a.next(), b.next(), b.next()) {
        (Some(x), None, Some(y), None) if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() => {
            let codes = stepped(
                i64::from(u32::from(x)),
                i64::from(u32::from(y)),
                step,
                limit,
            )?;
            Ok(Some(
                codes
                    .into_iter()
                    .filter_map(|n| u32::try_from(n).ok().and_then(char::from_u32))
                    .map(String::from)
                    .collect(),
            ))
        }
        _ => Ok(None),
    }
}

/// `a, a±step, …` up to `b`, refusing more than `limit` numbers.
fn stepped(a: i64, b: i64, step: i64, limit: usize) -> Result<Vec<i64>, TooManyWords> {
    let span = a.abs_diff(b);
    let count = (span / step.unsigned_abs()).saturating_add(1);
    if count > limit as u64 {
        return Err(TooManyWords);
    }
    let direction = if b >= a { step } else { -step };
    Ok((0..count as i64).map(|k| a + k * direction).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::words::unquoted;

    fn texts(raw: &str) -> Vec<String> {
        let mut budget = MAX_BRACE_WORDS;
        expand(unquoted(raw), &mut budget)
            .unwrap()
            .into_iter()
            .map(|w| w.text)
            .collect()
    }

    /// The expected words are what bash 5.2 prints for `printf '[%s]' WORD`.
    #[test]
    fn expands_like_bash() {
        let cases: &[(&str, &[&str])] = &[
            ("{a,}", &["a"]),
            ("x{,}", &["x", "x"]),
            ("{,}", &[]),
            ("{a}", &["{a}"]),
            ("{}", &["{}"]),
            ("{a,b}{1,2}", &["a1", "a2", "b1", "b2"]),
            ("{1..3}", &["1", "2", "3"]),
            ("{a..c}", &["a", "b", "c"]),
            ("{1..10..4}", &["1", "5", "9"]),
            ("{-delete,}", &["-delete"]),
            ("{--pre,sh}", &["--pre", "sh"]),
            ("{x,{y,z}}", &["x", "y", "z"]),
            ("a{b,c{d,e}f}g", &["abg", "acdfg", "acefg"]),
            ("{01..03}", &["01", "02", "03"]),
            ("{3..1}", &["3", "2", "1"]),
            ("{a..e..2}", &["a", "c", "e"]),
            ("{-2..2..2}", &["-2", "0", "2"]),
            ("{1..3..0}", &["1", "2", "3"]),
            ("{1..}", &["{1..}"]),
            ("{rm,-rf,src}", &["rm", "-rf", "src"]),
            ("{a,b", &["{a,b"]),
            ("x}{a,b}", &["x}a", "x}b"]),
        ];
        for (raw, want) in cases {
            assert_eq!(texts(raw), *want, "{raw}");
        }
    }

    #[test]
    fn quoted_braces_do_not_expand() {
        let mut budget = MAX_BRACE_WORDS;
        let mut word = Word::quoted("{a,b}");
        word.push(unquoted("{1,2}"));
        let out: Vec<String> = expand(word, &mut budget)
            .unwrap()
            .into_iter()
            .map(|w| w.text)
            .collect();
        assert_eq!(out, ["{a,b}1", "{a,b}2"]);
        assert_eq!(texts(r"\{a,b}"), ["{a,b}"]);
    }

    #[test]
    fn the_bound_is_a_refusal_not_a_truncation() {
        let mut budget = MAX_BRACE_WORDS;
        assert_eq!(expand(unquoted("{1..65}"), &mut budget), Err(TooManyWords));
        let mut budget = MAX_BRACE_WORDS;
        let seven = "{a,b}".repeat(7);
        assert_eq!(expand(unquoted(&seven), &mut budget), Err(TooManyWords));
        let mut budget = MAX_BRACE_WORDS;
        assert_eq!(
            expand(unquoted("{1..64}"), &mut budget).map(|w| w.len()),
            Ok(64)
        );
        assert_eq!(budget, 0);
        assert_eq!(expand(unquoted("x"), &mut budget), Err(TooManyWords));
        let mut budget = MAX_BRACE_WORDS;
        let huge = format!("{{1..{}}}", i64::MAX);
        assert_eq!(expand(unquoted(&huge), &mut budget), Err(TooManyWords));
        let mut budget = MAX_BRACE_WORDS;
        let huge = format!("{{{}..{}}}", i64::MIN, i64::MAX);
        assert_eq!(expand(unquoted(&huge), &mut budget), Err(TooManyWords));
    }
}
