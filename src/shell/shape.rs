//! The shape of a line typed at an interactive bash prompt: whether the hook may hand it to its
//! function (`__shellgate_run`) instead of letting bash run it, and how.
//!
//! The bash hook asks this for every line a person accepts with Enter (`shellgate hook bash
//! --shape`), unless the line is plain enough for the hook to tell by itself. A line is taken
//! only when it is certainly one complete command line on its own: no parse error, nothing
//! missing (an open quote, `do` without `done`, a trailing `|` or `\`), no here-document (its
//! body would come on the following lines), no history expansion left for bash to do. When in
//! doubt the answer is "no": the line then takes the hook's backstop path (PS0), which still
//! judges it and runs it in the sandbox, only without returning its state to the shell.
//!
//! Besides "yes", the answer says how many commands a lone pipeline has (the hook reproduces
//! `PIPESTATUS` with as many), whether the line is one command sent to the background with `&`
//! (it becomes a background job of the shell), and the line's first word when bash would
//! expand an alias of that name there (the hook defines that alias for this one line so that
//! what the person typed stays on the screen and in history as typed).

use std::cell::RefCell;

/// The hook's own answer for the plainest lines (`__shellgate_quickshape`), which it gives without
/// asking this module; `tests/suite/hooks.rs` holds the two to the same answers.
pub const BASH_QUICK_SHAPE: &str = include_str!("../../shell/bash-shape.sh");
use tree_sitter::{Node, Tree};

/// How the hook runs a line it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// `&` at the end of the one command on the line.
    pub background: bool,
    /// The number of commands of the line's one pipeline (1 when it is not a lone pipeline).
    pub pipeline: usize,
    /// The first word, when bash would look it up as an alias.
    pub alias_word: Option<String>,
}

impl Shape {
    /// The hook's one-line form: `fg|bg PIPELINE WORD|-`.
    pub fn render(&self) -> String {
        format!(
            "{} {} {}",
            if self.background { "bg" } else { "fg" },
            self.pipeline,
            self.alias_word.as_deref().unwrap_or("-")
        )
    }
}

/// Words bash never expands as aliases in command position (reserved words), and the hook's own
/// names (an alias named like the hook's function would be circular).
const RESERVED: [&str; 22] = [
    "!", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if",
    "in", "select", "then", "time", "until", "while", "{", "}", "[[", "]]",
];

/// The shape of `line`, or `None` when the hook must leave it to bash (and its backstop).
/// `histexpand`: the shell has history expansion on (`set -H`), so a `!` may still change the
/// line after it was typed.
pub fn of_bash_line(line: &str, histexpand: bool) -> Option<Shape> {
    if line.contains(['\n', '\r']) || line.trim().is_empty() || ends_with_backslash(line) {
        return None;
    }
    if histexpand && may_expand_history(line) {
        return None;
    }
    let tree = syntax_tree(line)?;
    let root = tree.root_node();
    if root.has_error() || has_kind(root, &["heredoc_redirect", "heredoc_start"]) {
        return None;
    }
    let mut cursor = root.walk();
    let children: Vec<Node> = root
        .children(&mut cursor)
        .filter(|n| n.kind() != "comment")
        .collect();
    let statements: Vec<Node> = children.iter().copied().filter(Node::is_named).collect();
    let first = *statements.first()?;
    let separators: Vec<&str> = children
        .iter()
        .filter(|n| !n.is_named())
        .map(Node::kind)
        .collect();
    let background = statements.len() == 1 && separators == ["&"];
    // `PIPESTATUS` after the line is its last pipeline's when that one surely runs last: the
    // statements are separated by `;` only (with `&&`, `||` or `&` an earlier one may be last).
    let pipeline = match statements.last() {
        Some(last) if separators.iter().all(|s| *s == ";") => pipeline_length(*last),
        _ => 1,
    };
    Some(Shape {
        background,
        pipeline,
        alias_word: alias_word(line, first),
    })
}

/// The commands of a lone pipeline (`a | b |& c` is 3); anything else is one.
fn pipeline_length(node: Node) -> usize {
    if node.kind() != "pipeline" {
        return 1;
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).filter(Node::is_named).count()
}

/// The line's first word, if bash would expand an alias of that name: the first token of the
/// line, a plain unquoted name in command position (a command's name, or the name of a function
/// being defined), not a reserved word, directly followed by a blank, an operator or the end.
fn alias_word(line: &str, first: Node) -> Option<String> {
    let start = line.len() - line.trim_start().len();
    let mut node = first;
    let word_node = loop {
        match node.kind() {
            "redirected_statement" | "pipeline" | "list" => node = node.child(0)?,
            "command" => break node.child(0).filter(|n| n.kind() == "command_name")?,
            "function_definition" => break node.child(0).filter(|n| n.kind() == "word")?,
            _ => return None,
        }
    };
    if word_node.start_byte() != start {
        return None;
    }
    let word = line.get(word_node.start_byte()..word_node.end_byte())?;
    let plain = word
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.+:@%,-".contains(&b));
    let next = line[word_node.end_byte()..].bytes().next();
    let ends = next.is_none_or(|b| b" \t;|&<>()".contains(&b));
    (plain && ends && !RESERVED.contains(&word) && !word.starts_with("__shellgate"))
        .then(|| word.to_owned())
}

/// A backslash at the very end continues the line on the next one.
fn ends_with_backslash(line: &str) -> bool {
    line.bytes().rev().take_while(|b| *b == b'\\').count() % 2 == 1
}

/// Whether bash's history expansion could still rewrite the line: a `!` outside single quotes
/// that is not followed by a blank, `=`, `(` or the end, or a `^` first (quick substitution).
/// Deliberately broad: a false "yes" only sends the line down the backstop path.
fn may_expand_history(line: &str) -> bool {
    if line.trim_start().starts_with('^') {
        return true;
    }
    let bytes = line.as_bytes();
    let mut single = false;
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'\'' => single = !single,
            b'!' if !single => {
                let next = bytes.get(i + 1);
                if next.is_some_and(|n| !b" \t=(".contains(n)) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

fn has_kind(node: Node, kinds: &[&str]) -> bool {
    if kinds.contains(&node.kind()) {
        return true;
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).any(|c| has_kind(c, kinds))
}

thread_local! {
    static PARSER: RefCell<Option<tree_sitter::Parser>> = const { RefCell::new(None) };
}

/// tree-sitter-bash, with the same adjustment the decision core's parser makes first (see
/// `parse::bash::scanner_safe`: the grammar's scanner reads out of bounds on a code point above
/// 255 right after `{`, `.` or a digit): every non-ASCII character there is replaced by as many
/// `x` bytes, which keeps every byte offset.
fn syntax_tree(line: &str) -> Option<Tree> {
    let mut safe = String::with_capacity(line.len());
    let mut prev = ' ';
    for ch in line.chars() {
        if !ch.is_ascii() && (prev == '{' || prev == '.' || prev.is_ascii_digit()) {
            safe.extend(std::iter::repeat_n('x', ch.len_utf8()));
        } else {
            safe.push(ch);
        }
        prev = ch;
    }
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(&safe, None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(line: &str) -> Option<String> {
        of_bash_line(line, true).map(|s| s.render())
    }

    #[test]
    fn complete_lines_are_taken() {
        assert_eq!(shape("ls -la /etc").as_deref(), Some("fg 1 ls"));
        assert_eq!(shape("  git status; echo x").as_deref(), Some("fg 1 git"));
        assert_eq!(shape("true | false").as_deref(), Some("fg 2 true"));
        assert_eq!(shape("a | b |& c").as_deref(), Some("fg 3 a"));
        assert_eq!(shape("a | b; c").as_deref(), Some("fg 1 a"));
        assert_eq!(shape("a; b | c").as_deref(), Some("fg 2 a"));
        assert_eq!(shape("a && b | c").as_deref(), Some("fg 1 a"));
        assert_eq!(shape("sleep 30 &").as_deref(), Some("bg 1 sleep"));
        assert_eq!(shape("sleep 30 & echo x").as_deref(), Some("fg 1 sleep"));
        assert_eq!(shape("greet() { echo hi; }").as_deref(), Some("fg 1 greet"));
        assert_eq!(shape("ls>out").as_deref(), Some("fg 1 ls"));
        assert_eq!(shape("ls # a comment").as_deref(), Some("fg 1 ls"));
        assert_eq!(shape("(exit 7)").as_deref(), Some("fg 1 -"));
        assert_eq!(shape("./run.sh x").as_deref(), Some("fg 1 -"));
        assert_eq!(shape("FOO=1 env").as_deref(), Some("fg 1 -"));
        assert_eq!(shape("\\ls").as_deref(), Some("fg 1 -"));
        assert_eq!(shape("'ls' x").as_deref(), Some("fg 1 -"));
        assert_eq!(
            shape("for i in 1 2; do echo $i; done").as_deref(),
            Some("fg 1 -")
        );
        assert_eq!(shape("if true; then :; fi").as_deref(), Some("fg 1 -"));
        assert_eq!(shape("echo 'it!s'").as_deref(), Some("fg 1 echo"));
        assert_eq!(shape("echo hi!").as_deref(), Some("fg 1 echo"));
        assert_eq!(shape("__shellgate_run 5").as_deref(), Some("fg 1 -"));
    }

    #[test]
    fn unsure_lines_are_left_to_bash() {
        for line in [
            "",
            "   ",
            "for i in 1 2; do",
            "echo \"open",
            "echo 'open",
            "ls |",
            "ls &&",
            "echo a \\",
            "cat <<EOF",
            "echo $(",
            "if true; then",
            "a\nb",
            "!!",
            "echo !$",
            "^a^b",
            "case x in",
            "{ echo",
            "# only a comment",
        ] {
            assert_eq!(shape(line), None, "{line:?}");
        }
        // Without history expansion, `!` is an ordinary character.
        assert_eq!(
            of_bash_line("echo !$", false)
                .map(|s| s.render())
                .as_deref(),
            Some("fg 1 echo")
        );
    }

    #[test]
    fn non_ascii_after_a_brace_does_not_reach_the_scanner() {
        assert!(of_bash_line("echo {\u{10FFFF}", true).is_some_and(|s| s.pipeline == 1));
    }
}
