//! Agent harnesses: the fixed wrapper a coding agent puts around every line it runs.
//!
//! Claude Code runs each line as
//! `source <snapshot> 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval '<line>' < /dev/null && pwd -P >| <cwd file>`.
//! Judged as written, every line would be opaque (it sources a file), so the one line the model
//! asked for is what must be judged. This module recognises exactly that shape, from the syntax
//! tree and word by word; anything that differs in any part is not a harness and is parsed as is.
//!
//! The harness writes one file of its own, the working-directory file, which the inner line does
//! not show: it is returned as a [`HarnessWrite`], so that the line can be given exactly that file
//! and nothing else ([`with_write_to_descriptor`]), whatever sandbox its inner line runs in.

use super::Parsed;
use super::bash::{Ctx, Walker, syntax_tree};
use super::words::Word;
use std::ops::Range;
use tree_sitter::Node;

/// The file a recognised harness writes besides what its inner line does: Claude Code's
/// working-directory file, `<temp dir>/claude-XXXX-cwd`, where it reads the shell's directory
/// after the line (and then deletes it). Not a write of the inner line: the caller decides where
/// it may go (the agent's own temp dir) and hands the line exactly that file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HarnessWrite {
    /// The file, absolute, with no `.`, `..` or empty component.
    pub path: String,
    /// Where the redirection that writes it (`>| FILE`) is in the line, in bytes.
    #[serde(skip)]
    pub redirect: Range<usize>,
}

impl HarnessWrite {
    /// The directory the file is in and its name.
    pub fn dir_and_name(&self) -> Option<(&str, &str)> {
        let (dir, name) = self.path.rsplit_once('/')?;
        Some((if dir.is_empty() { "/" } else { dir }, name))
    }
}

/// A recognised harness: its name, the inner line it runs, and the file it writes itself.
pub(super) struct Harness {
    pub name: &'static str,
    pub inner: String,
    pub write: HarnessWrite,
}

/// `line` with the harness's own redirection (`>| FILE`) replaced by a write to descriptor `fd`
/// (`>&3`), which the caller opens on exactly that file: the line then needs no right to write
/// the file's directory. `None` when `write` does not describe a redirection of `line`.
pub fn with_write_to_descriptor(line: &str, write: &HarnessWrite, fd: u8) -> Option<String> {
    let redirect = line.get(write.redirect.clone())?;
    let target = redirect
        .strip_prefix(">|")
        .or_else(|| redirect.strip_prefix('>'))?;
    // The redirection still names the file it was recognised with (a stale range, or one of
    // another line, changes nothing).
    if target.trim_start().is_empty() || !target.contains(write.dir_and_name()?.1) {
        return None;
    }
    let mut out = String::with_capacity(line.len());
    out.push_str(line.get(..write.redirect.start)?);
    out.push_str(&format!(">&{fd}"));
    out.push_str(line.get(write.redirect.end..)?);
    Some(out)
}

/// A redirection of a harness command: operator, literal target, and where it is in the line.
struct Redirect {
    op: String,
    target: String,
    span: Range<usize>,
}

/// One simple command of the harness: its words and its redirections.
struct Leaf {
    words: Vec<Word>,
    redirects: Vec<Redirect>,
}

impl Leaf {
    fn is(&self, expected: &[&str]) -> bool {
        self.words.len() == expected.len()
            && self
                .words
                .iter()
                .zip(expected)
                .all(|(w, e)| w.is_literal() && w.text == *e)
    }

    fn redirects_only(&self, allowed: &[(&str, &str)]) -> bool {
        self.redirects
            .iter()
            .all(|r| allowed.iter().any(|(o, t)| *o == r.op && *t == r.target))
    }
}

/// If `line` is a recognised agent harness: its name, the inner line it runs, its own write.
pub(super) fn unwrap_agent_harness(line: &str) -> Option<Harness> {
    // Cheap pre-filter; the decision below is made on the syntax tree.
    if !line.contains("claude-") || !line.contains("eval") {
        return None;
    }
    let tree = syntax_tree(line)?;
    let root = tree.root_node();
    if root.has_error() || root.named_child_count() != 1 {
        return None;
    }
    let mut nodes = Vec::new();
    flatten_and_or(root.named_child(0)?, &mut nodes)?;
    let mut scratch = Parsed::default();
    let mut walker = Walker {
        src: line,
        depth: 0,
        via: Vec::new(),
        out: &mut scratch,
        line_functions: Vec::new(),
    };
    let leaves: Vec<Leaf> = nodes
        .into_iter()
        .map(|n| leaf(&mut walker, n))
        .collect::<Option<_>>()?;
    // A command substitution anywhere in the harness words would run: not a harness.
    if !scratch.commands.is_empty() || scratch.is_opaque() {
        return None;
    }
    claude_code(&leaves).map(|(inner, write)| Harness {
        name: "claude-code",
        inner,
        write,
    })
}

/// `[source SNAP 2>/dev/null || true &&] [shopt -u extglob 2>/dev/null || true &&] eval 'L' [< /dev/null] && pwd -P >| F`
///
/// Claude Code sources its shell snapshot only when it managed to write one (its snapshot script
/// is longer than intake's limit, so under shellgate it has none), and turns extglob off in bash
/// (`setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL` in zsh, `setopt NO_EXTENDED_GLOB` before 2.1);
/// both prefixes are optional, the rest is fixed. `eval`'s `< /dev/null` is left out when the
/// line reads a here-document or redirects its own standard input.
fn claude_code(leaves: &[Leaf]) -> Option<(String, HarnessWrite)> {
    let mut rest = leaves;
    if let Some((source, tail)) = rest.split_first()
        && let [kw, snapshot] = source.words.as_slice()
        && kw.is_literal()
        && (kw.text == "source" || kw.text == ".")
    {
        if !is_snapshot_path(snapshot) || !source.redirects_only(&[("2>", "/dev/null")]) {
            return None;
        }
        rest = expect_true(tail)?;
    }
    if let Some((first, tail)) = rest.split_first() {
        let glob_off = first.is(&["shopt", "-u", "extglob"])
            || first.is(&["setopt", "NO_EXTENDED_GLOB", "NO_BARE_GLOB_QUAL"])
            || first.is(&["setopt", "NO_EXTENDED_GLOB"]);
        if glob_off && first.redirects_only(&[("2>", "/dev/null")]) {
            rest = expect_true(tail)?;
        }
    }
    let [eval, pwd] = rest else {
        return None;
    };
    let [kw, inner] = eval.words.as_slice() else {
        return None;
    };
    if !(kw.is_literal() && kw.text == "eval" && inner.is_literal()) {
        return None;
    }
    if !eval.redirects_only(&[("<", "/dev/null")]) || !pwd.is(&["pwd", "-P"]) {
        return None;
    }
    let [redirect] = pwd.redirects.as_slice() else {
        return None;
    };
    if !((redirect.op == ">|" || redirect.op == ">") && is_cwd_file(&redirect.target)) {
        return None;
    }
    let write = HarnessWrite {
        path: redirect.target.clone(),
        redirect: redirect.span.clone(),
    };
    Some((inner.text.clone(), write))
}

/// Claude Code's working-directory file: `claude-<id>-cwd`, `<id>` four lowercase hex digits (a
/// random 16-bit number), in its temporary directory — an absolute path with no `.`, `..` or
/// empty component. A relative one would overwrite a file in the working directory; any other
/// name is not Claude's. Which directory is Claude's is for the caller to check (it knows the
/// agent's environment; see `sandbox::harness_file`).
fn is_cwd_file(path: &str) -> bool {
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let Some((file, dirs)) = parts.split_last() else {
        return false;
    };
    let id = file
        .strip_prefix("claude-")
        .and_then(|f| f.strip_suffix("-cwd"))
        .unwrap_or("");
    id.len() == 4
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && dirs.iter().all(|d| !matches!(*d, "" | "." | ".."))
}

fn expect_true(leaves: &[Leaf]) -> Option<&[Leaf]> {
    let (first, tail) = leaves.split_first()?;
    (first.is(&["true"]) && first.redirects.is_empty()).then_some(tail)
}

/// Claude Code's shell snapshot: `<home>/.claude/shell-snapshots/snapshot-<shell>-<id>.sh`, an
/// absolute path in the user's home directory, where Claude Code writes it. The parser is pure and
/// does not know `$HOME`, so the home must have a home directory's shape: `/root`,
/// `/home/<user>` or `/Users/<user>`. A relative path, or one elsewhere, names a file the agent
/// may have written itself (`source .claude/shell-snapshots/…` in the workspace), which would then
/// run unreviewed.
fn is_snapshot_path(word: &Word) -> bool {
    if !word.is_literal() || word.hidden_code {
        return false;
    }
    if in_trusted_snapshot_dir(&word.text) {
        return true;
    }
    let Some(path) = word.text.strip_prefix('/') else {
        return false;
    };
    let parts: Vec<&str> = path.split('/').collect();
    let home = match parts.as_slice() {
        ["root", ..] => 1,
        ["home" | "Users", user, ..] if !matches!(*user, "" | "." | "..") => 2,
        _ => return false,
    };
    match &parts[home..] {
        [".claude", "shell-snapshots", file] => {
            file.starts_with("snapshot-") && file.ends_with(".sh")
        }
        _ => false,
    }
}

/// Snapshot directories this process knows to hold only what shellgate wrote: `wrap` writes Claude
/// Code's snapshots itself, into a directory the agent cannot write, and names it here once, at
/// start. A home of any shape is then recognised.
static TRUSTED_SNAPSHOT_DIRS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// Names the snapshot directories of this process (see [`TRUSTED_SNAPSHOT_DIRS`]); only the first
/// call counts.
pub fn trust_snapshot_dirs(dirs: Vec<String>) {
    let _ = TRUSTED_SNAPSHOT_DIRS.set(dirs);
}

fn in_trusted_snapshot_dir(path: &str) -> bool {
    let Some(dirs) = TRUSTED_SNAPSHOT_DIRS.get() else {
        return false;
    };
    let Some((dir, file)) = path.rsplit_once('/') else {
        return false;
    };
    dirs.iter().any(|d| d == dir)
        && file.starts_with("snapshot-")
        && file.ends_with(".sh")
        && !file.contains("..")
}

/// A command of the harness list and the redirections that apply to it.
type LeafNodes<'t> = (Node<'t>, Vec<Node<'t>>);

/// The commands of an `&&`/`||` list, left to right; `None` for any other construct.
///
/// tree-sitter-bash attaches a redirection that follows the last command of a list to the whole
/// list (`a && b < f` parses as `(a && b) < f`); bash applies it to `b` alone, and so do we here.
fn flatten_and_or<'t>(node: Node<'t>, out: &mut Vec<LeafNodes<'t>>) -> Option<()> {
    match node.kind() {
        "list" => {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                if child.is_named() {
                    flatten_and_or(child, out)?;
                } else if child.kind() != "&&" && child.kind() != "||" {
                    return None;
                }
            }
            Some(())
        }
        "redirected_statement" => {
            let body = node.child_by_field_name("body")?;
            let mut cursor = node.walk();
            let redirects: Vec<Node> = node
                .children_by_field_name("redirect", &mut cursor)
                .collect();
            if node.named_child_count() != redirects.len() + 1 {
                return None;
            }
            if body.kind() == "command" {
                out.push((body, redirects));
                return Some(());
            }
            flatten_and_or(body, out)?;
            out.last_mut()?.1.extend(redirects);
            Some(())
        }
        "command" => {
            out.push((node, Vec::new()));
            Some(())
        }
        _ => None,
    }
}

/// A harness leaf: a plain command, optionally with plain file redirections.
fn leaf(walker: &mut Walker, (command, redirect_nodes): LeafNodes) -> Option<Leaf> {
    let ctx = Ctx::default();
    let mut words = Vec::new();
    for (field, child) in super::bash::fields(command) {
        match field {
            Some("name") | Some("argument") => words.push(walker.word(child, &ctx)),
            _ if child.is_named() => return None,
            _ => {}
        }
    }
    let mut redirects = Vec::new();
    for r in redirect_nodes {
        redirects.push(file_redirect(walker, r, &ctx)?);
    }
    Some(Leaf { words, redirects })
}

/// `2>/dev/null` → ("2>", "/dev/null").
fn file_redirect(walker: &mut Walker, node: Node, ctx: &Ctx) -> Option<Redirect> {
    if node.kind() != "file_redirect" {
        return None;
    }
    let mut op = String::new();
    let mut target = None;
    for (field, child) in super::bash::fields(node) {
        match field {
            Some("descriptor") => op.insert_str(0, walker.src.get(child.byte_range())?),
            Some("destination") => target = Some(walker.word(child, ctx)),
            _ if !child.is_named() => op.push_str(child.kind()),
            _ => return None,
        }
    }
    let target = target?;
    (target.is_literal() && !target.hidden_code).then(|| Redirect {
        op,
        target: target.text,
        span: node.byte_range(),
    })
}
