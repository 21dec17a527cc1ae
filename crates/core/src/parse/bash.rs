//! The bash/zsh/sh walker over the tree-sitter-bash syntax tree.
//!
//! The walker visits every node that can run a command and hands each simple command (with its
//! words after quote removal, its prefix assignments, its redirections and where its standard input
//! comes from) to the unwrapper in `unwrap.rs`.

use super::heredoc;
use super::hooks;
use super::words::{self, Word};
use super::{FunctionDef, MAX_SCRIPT_DEPTH, Parsed};
use std::cell::RefCell;
use tree_sitter::{Node, Tree};

/// Deeper syntax trees than this are not walked further; the line is opaque instead. Real lines
/// nest a handful of levels; the bound keeps the walker's stack use small (see the stack test).
const MAX_NESTING: usize = 64;

thread_local! {
    static PARSER: super::ParserSlot = const { RefCell::new(None) };
}

/// Parse `src` with tree-sitter-bash (see [`scanner_safe`] for the one adjustment made first).
pub(super) fn syntax_tree(src: &str) -> Option<Tree> {
    super::parse_with(
        &PARSER,
        tree_sitter_bash::LANGUAGE.into(),
        scanner_safe(src).as_ref(),
    )
}

/// tree-sitter-bash 0.25.1's external scanner passes the code point after `{`, after `{1..` and
/// after the digits of a brace range to C's `isdigit()`, which reads out of bounds for code points
/// above 255: `x {\u{10FFFF}` crashes the process (upstream issue tree-sitter-bash#337, fix
/// proposed in PR #348, unreleased). Every non-ASCII character right after `{`, `.` or an ASCII
/// digit is therefore replaced, for the parser only, by as many `x` bytes as it has: byte offsets
/// stay the same, so node text is still read from the original line, and to the grammar both are
/// ordinary word characters.
fn scanner_safe(src: &str) -> std::borrow::Cow<'_, str> {
    if src.is_ascii() {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut out = String::with_capacity(src.len());
    let mut prev = ' ';
    for ch in src.chars() {
        if !ch.is_ascii() && (prev == '{' || prev == '.' || prev.is_ascii_digit()) {
            out.extend(std::iter::repeat_n('x', ch.len_utf8()));
        } else {
            out.push(ch);
        }
        prev = ch;
    }
    std::borrow::Cow::Owned(out)
}

/// Parse one script (the whole line, or the body of `bash -c` / `eval`) into `out`.
pub(super) fn parse_script(src: &str, depth: usize, via: &[String], out: &mut Parsed) {
    if depth > MAX_SCRIPT_DEPTH {
        out.add_opaque(format!(
            "shell scripts are nested more than {MAX_SCRIPT_DEPTH} levels deep"
        ));
        return;
    }
    let Some(tree) = syntax_tree(src) else {
        out.add_opaque("the line could not be parsed");
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        out.add_opaque(
            "the line has a syntax error (or syntax the bash grammar does not know); \
             what would run cannot be determined from its text",
        );
    }
    if depth == 0 {
        out.assignments_only = assignments_only(root);
    }
    let mut walker = Walker {
        src,
        depth,
        via: via.to_vec(),
        out,
        line_functions: Vec::new(),
    };
    walker.walk(root, &Ctx::default());
}

/// Whether the syntax under `node` is assignments and the lists joining them, and nothing else
/// (see [`Parsed::assignments_only`]).
fn assignments_only(node: Node) -> bool {
    match node.kind() {
        "variable_assignment" | "comment" => true,
        "program" | "list" | "variable_assignments" => {
            node.named_children(&mut node.walk()).all(assignments_only)
        }
        _ => false,
    }
}

/// Where a command's standard input comes from.
#[derive(Debug, Clone, Default)]
pub(super) enum Input {
    #[default]
    Inherited,
    /// The output of another command.
    Pipe,
    /// A here-document or here-string; its text.
    Here(Word),
}

/// What the enclosing syntax says about the next command.
#[derive(Debug, Clone, Default)]
pub(super) struct Ctx {
    pub stdin: Input,
    /// Files written by redirections attached to the enclosing statement.
    pub writes: Vec<String>,
    /// Files read by redirections attached to the enclosing statement.
    pub reads: Vec<String>,
    nest: usize,
}

impl Ctx {
    fn nested(&self) -> Ctx {
        Ctx {
            stdin: self.stdin.clone(),
            writes: Vec::new(),
            reads: Vec::new(),
            nest: self.nest + 1,
        }
    }
}

/// A simple command as written, before unwrapping.
#[derive(Debug, Clone, Default)]
pub(super) struct RawCommand {
    pub name: Option<Word>,
    pub args: Vec<Word>,
    pub assignments: Vec<(String, Word)>,
    pub writes: Vec<String>,
    pub reads: Vec<String>,
    pub stdin: Input,
}

pub(super) struct Walker<'a> {
    pub src: &'a str,
    pub depth: usize,
    pub via: Vec<String>,
    pub out: &'a mut Parsed,
    /// Names of functions defined in this script, so calls to them are not mistaken for programs.
    pub line_functions: Vec<String>,
}

impl Walker<'_> {
    fn text(&self, node: Node) -> &str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    pub(super) fn walk(&mut self, node: Node, ctx: &Ctx) {
        if ctx.nest > MAX_NESTING {
            self.out
                .add_opaque("the line is nested too deeply to be analysed");
            return;
        }
        match node.kind() {
            "comment" | "heredoc_body" | "heredoc_start" | "heredoc_end" => {}
            "command" => self.command(node, ctx),
            "declaration_command" => self.declaration(node, ctx),
            "unset_command" => self.unset(node, ctx),
            "variable_assignment" => {
                let (name, value) = self.assignment(node, ctx);
                self.out.add_literal_assignment(&name, &value);
                self.check_assigned_value(&name, &value);
                self.check_hidden_code(&value);
                self.out.add_value(&value.text);
            }
            "function_definition" => self.function(node, ctx),
            "pipeline" => self.pipeline(node, ctx),
            "list" => self.list(node, ctx),
            "redirected_statement" => self.redirected(node, ctx),
            "command_substitution" | "process_substitution" => self.substitution(node, ctx),
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                let mut inner = ctx.nested();
                self.redirect(node, &mut inner);
            }
            // Words outside a simple command: `[[ … ]]` operands, `for` values, `case` patterns.
            // `[[ -v 'a[$(…)]' ]]` and `[[ 'a[$(…)]' -eq 1 ]]` evaluate their subscripts.
            "word" | "raw_string" | "ansi_c_string" | "string" | "concatenation"
            | "translated_string" => {
                let word = self.word(node, ctx);
                self.check_hidden_code(&word);
            }
            "expansion" => {
                self.check_prompt_expansion(node);
                self.check_expansion_assignment(node);
                self.check_expansion_reevaluation(node);
                self.walk_children(node, ctx);
            }
            "binary_expression" | "postfix_expression" | "unary_expression" => {
                self.check_arithmetic_assignment(node);
                self.walk_children(node, ctx);
            }
            // `(( … ))`, `for (( … ))`, `$(( … ))`, `$[ … ]`: arithmetic.
            "compound_statement" if self.text(node).starts_with("((") => {
                self.check_arithmetic(node);
                self.walk_children(node, ctx);
            }
            "c_style_for_statement" | "arithmetic_expansion" => {
                self.check_arithmetic(node);
                self.walk_children(node, ctx);
            }
            "subscript" => {
                self.check_subscript(node);
                self.walk_children(node, ctx);
            }
            "test_command" => {
                self.check_test_command(node);
                self.walk_children(node, ctx);
            }
            "ERROR" => self.error(node, ctx),
            // `for HOME in /tmp; do …` and `select PS0 in …` assign their variable.
            "for_statement" => {
                if let Some(variable) = node.child_by_field_name("variable") {
                    let name = self.text(variable).to_owned();
                    self.check_assigned_variable(&name);
                }
                self.walk_children(node, ctx);
            }
            _ => self.walk_children(node, ctx),
        }
    }

    /// What the grammar could not read. bash reads `{rm,-rf,/}` as one word, brace-expanded to
    /// `rm -rf /`; tree-sitter-bash takes its `{` for the start of a group and leaves an error
    /// with the rest as a command. A `{` glued to the command after it is put back in front of
    /// its name, so the words bash runs are judged (the line is opaque anyway).
    fn error(&mut self, node: Node, ctx: &Ctx) {
        let inner = ctx.nested();
        let children: Vec<Node> = {
            let mut cursor = node.walk();
            node.children(&mut cursor).collect()
        };
        // A here-document the grammar could not fit into a redirection (`cat <<$'EOF'`): where
        // the shells end it is still computed, and what follows is parsed.
        if children.iter().any(|c| c.kind() == "heredoc_start") {
            self.check_heredoc_end(node);
        }
        let mut i = 0;
        while i < children.len() {
            let child = children[i];
            let glued = children.get(i + 1).filter(|next| {
                child.kind() == "{"
                    && next.start_byte() == child.end_byte()
                    && matches!(next.kind(), "command" | "command_name")
            });
            if let Some(&next) = glued {
                let brace = words::unquoted("{");
                if next.kind() == "command" {
                    self.command_with_prefix(next, &inner, Some(brace));
                } else {
                    let mut name = brace;
                    name.push(self.word(next, &inner));
                    self.resolve(RawCommand {
                        name: Some(name),
                        stdin: inner.stdin.clone(),
                        ..RawCommand::default()
                    });
                }
                i += 2;
                continue;
            }
            if child.is_named() {
                self.walk(child, &inner);
            }
            i += 1;
        }
    }

    fn walk_children(&mut self, node: Node, ctx: &Ctx) {
        let inner = ctx.nested();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.walk(child, &inner);
        }
    }

    /// `a && b || c …`: tree-sitter nests lists to the left, one level per operator. Walk the
    /// spine iteratively so a long chain of commands does not count as deep nesting.
    fn list(&mut self, node: Node, ctx: &Ctx) {
        let mut spine = Vec::new();
        let mut leftmost = node;
        while leftmost.kind() == "list" {
            spine.push(leftmost);
            match leftmost.named_child(0) {
                Some(first) => leftmost = first,
                None => break,
            }
        }
        if leftmost.kind() != "list" {
            self.walk(leftmost, &ctx.nested());
        }
        for list in spine.into_iter().rev() {
            let mut cursor = list.walk();
            for child in list.named_children(&mut cursor).skip(1) {
                self.walk(child, &ctx.nested());
            }
        }
    }

    fn pipeline(&mut self, node: Node, ctx: &Ctx) {
        let mut cursor = node.walk();
        for (i, child) in node.named_children(&mut cursor).enumerate() {
            let mut inner = ctx.nested();
            if i > 0 {
                inner.stdin = Input::Pipe;
            }
            self.walk(child, &inner);
        }
    }

    fn redirected(&mut self, node: Node, ctx: &Ctx) {
        let mut inner = ctx.nested();
        let mut body = None;
        for (field, child) in fields(node) {
            if field == Some("body") {
                body = Some(child);
            } else if child.is_named() {
                self.redirect(child, &mut inner);
            }
        }
        let Some(body) = body else {
            return;
        };
        let before = self.out.commands.len();
        self.walk(body, &inner);
        if body.kind() == "command" {
            // A simple command takes its redirections itself (not its substitutions' commands).
            return;
        }
        // The redirection of a compound body (`{ a; b; } > f`, `(a) > f`, and `a && b > f`,
        // which tree-sitter reads as the list redirected) is every command's inside it: a body's
        // parts are walked in contexts of their own, which start with no redirection. A command
        // substitution's commands in the body get it too: more than bash does, never less.
        for command in &mut self.out.commands[before..] {
            for write in &inner.writes {
                if !command.writes.contains(write) {
                    command.writes.push(write.clone());
                }
            }
            for read in &inner.reads {
                if !command.reads.contains(read) {
                    command.reads.push(read.clone());
                }
            }
        }
    }

    /// Record what a redirection does: files written, here-text fed to standard input, and the
    /// statements tree-sitter attaches to a here-document (`cat <<EOF | bash`, `<<EOF && x`).
    fn redirect(&mut self, node: Node, ctx: &mut Ctx) {
        match node.kind() {
            "file_redirect" => self.file_redirect(node, ctx),
            "herestring_redirect" => {
                let mut word = Word::default();
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    word.push(self.word(child, ctx));
                }
                word.text.push('\n');
                ctx.stdin = Input::Here(word);
            }
            "heredoc_redirect" => self.heredoc(node, ctx),
            _ => self.walk(node, ctx),
        }
    }

    fn file_redirect(&mut self, node: Node, ctx: &mut Ctx) {
        let mut operator = "";
        let mut destination = None;
        for (field, child) in fields(node) {
            match field {
                Some("destination") => destination = Some(child),
                Some("descriptor") => {}
                _ if !child.is_named() => operator = child.kind(),
                _ => {}
            }
        }
        let Some(destination) = destination else {
            return;
        };
        let target = self.word(destination, ctx);
        if matches!(operator, "<" | "<>") {
            ctx.reads.push(target.text.clone());
            if !self.out.reads.contains(&target.text) {
                self.out.reads.push(target.text.clone());
            }
        }
        if !redirect_writes(operator, &target.text) {
            return;
        }
        ctx.writes.push(target.text.clone());
        if !self.out.writes.contains(&target.text) {
            self.out.writes.push(target.text);
        }
    }

    fn heredoc(&mut self, node: Node, ctx: &mut Ctx) {
        self.check_heredoc_end(node);
        let mut quoted = false;
        let mut body = Word::default();
        let mut cursor = node.walk();
        let mut follow_ups = Vec::new();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "heredoc_start" => quoted = self.text(child).contains(['\'', '"', '\\']),
                "heredoc_body" => body = self.heredoc_body(child, quoted, ctx),
                "pipeline" => follow_ups.push((child, true)),
                _ if child.is_named() && child.kind() != "heredoc_end" => {
                    follow_ups.push((child, false))
                }
                _ => {}
            }
        }
        ctx.stdin = Input::Here(body);
        for (child, piped) in follow_ups {
            let mut inner = ctx.nested();
            inner.stdin = Input::Inherited;
            if piped {
                let mut cursor = child.walk();
                for member in child.named_children(&mut cursor) {
                    let mut member_ctx = inner.nested();
                    member_ctx.stdin = Input::Pipe;
                    self.walk(member, &member_ctx);
                }
            } else {
                self.walk(child, &inner);
            }
        }
    }

    /// Does the here-document end where the shells end it? tree-sitter-bash reads some quoted
    /// delimiters differently (`<<'E\OF'` ends at `E\OF` in bash, dash and zsh, not at `EOF`), so
    /// the line where each shell ends it is computed from the delimiter as the shell computes it
    /// ([`heredoc::delimiters`]). Any disagreement — with tree-sitter, or between the shells —
    /// makes the line opaque, and the text after each shell's end is parsed as well: what a shell
    /// runs after the here-document is then seen (and `never` rules hold), whichever view is right.
    fn check_heredoc_end(&mut self, node: Node) {
        let mut start = None;
        let mut strip_tabs = false;
        let mut body_start = None;
        let mut end = None;
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "<<-" => strip_tabs = true,
                "heredoc_start" => start = Some(self.text(child).to_owned()),
                "heredoc_body" => body_start = Some(child.start_byte()),
                "heredoc_end" => end = Some(child.start_byte()),
                _ => {}
            }
        }
        let (Some(start), Some(first)) = (start, body_start.or(end)) else {
            return;
        };
        let body_line = heredoc::line_start(self.src, first);
        let tree_end = end.map(|at| heredoc::line_start(self.src, at));
        let candidates = heredoc::delimiters(&start);
        if candidates.len() > 1 {
            self.out.add_opaque(format!(
                "the here-document delimiter `{start}` is read differently by bash, dash and zsh"
            ));
        }
        for delimiter in candidates {
            let shell_end = heredoc::end_line(self.src, body_line, &delimiter, strip_tabs);
            if shell_end.map(|(line, _)| line) == tree_end {
                continue;
            }
            self.out.add_opaque(format!(
                "the shell ends the here-document `{start}` at another line than the parser does"
            ));
            if let Some((_, after)) = shell_end
                && let Some(rest) = self.src.get(after..)
                && !rest.trim().is_empty()
            {
                let rest = rest.to_owned();
                let via = self.via.clone();
                self.nested_script(&rest, via);
            }
        }
    }

    /// The text of a here-document. Unless its delimiter is quoted, expansions and command
    /// substitutions in it run when the shell reads it, so they are walked like any other.
    fn heredoc_body(&mut self, node: Node, quoted: bool, ctx: &Ctx) -> Word {
        let text = self.text(node).to_owned();
        if quoted {
            return Word::quoted(text);
        }
        let mut dynamic = false;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.kind() != "heredoc_content" {
                dynamic = true;
                self.word(child, ctx);
            }
        }
        // Only an escaped `\$(` or `` \` `` is left as text once the body is expanded.
        let hidden_code = text.contains("\\$(") || text.contains("\\`");
        Word {
            text,
            dynamic,
            hidden_code,
            ..Word::default()
        }
    }

    fn substitution(&mut self, node: Node, ctx: &Ctx) {
        let mut inner = ctx.nested();
        inner.stdin = Input::Inherited;
        for (field, child) in fields(node) {
            if !child.is_named() {
                continue;
            }
            if field == Some("redirect") {
                self.redirect(child, &mut inner);
            } else {
                self.walk(child, &inner);
            }
        }
    }

    fn command(&mut self, node: Node, ctx: &Ctx) {
        self.command_with_prefix(node, ctx, None);
    }

    /// A simple command; `prefix` is text glued before its name (see [`Walker::error`]).
    fn command_with_prefix(&mut self, node: Node, ctx: &Ctx, prefix: Option<Word>) {
        let mut raw = RawCommand {
            writes: ctx.writes.clone(),
            reads: ctx.reads.clone(),
            stdin: ctx.stdin.clone(),
            ..RawCommand::default()
        };
        let mut redirects = ctx.nested();
        redirects.stdin = ctx.stdin.clone();
        for (field, child) in fields(node) {
            if !child.is_named() {
                continue;
            }
            match field {
                Some("name") => raw.name = Some(self.word(child, ctx)),
                Some("argument") => raw.args.push(self.word(child, ctx)),
                Some("redirect") => self.redirect(child, &mut redirects),
                _ if child.kind() == "variable_assignment" => {
                    let assignment = self.assignment(child, ctx);
                    raw.assignments.push(assignment);
                }
                _ => self.walk(child, &ctx.nested()),
            }
        }
        raw.writes.extend(redirects.writes);
        raw.reads.extend(redirects.reads);
        if !matches!(redirects.stdin, Input::Inherited) {
            raw.stdin = redirects.stdin;
        }
        if let Some(mut glued) = prefix
            && let Some(name) = raw.name.take()
        {
            glued.push(name);
            raw.name = Some(glued);
        }
        self.check_builtin_reevaluation(&raw);
        self.resolve(raw);
    }

    /// `export`, `declare`, `typeset`, `local`, `readonly`. With only `-p`/`-f`/`-F` they print
    /// (`declare -p PS0`, `export -p`) and change nothing.
    fn declaration(&mut self, node: Node, ctx: &Ctx) {
        let mut program = String::new();
        let mut argv = Vec::new();
        let mut options = Vec::new();
        let mut names = Vec::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if !child.is_named() {
                if program.is_empty() {
                    program = child.kind().to_owned();
                }
                continue;
            }
            match child.kind() {
                "variable_assignment" => {
                    let (name, value) = self.assignment(child, ctx);
                    self.out.add_literal_assignment(&name, &value);
                    self.check_assigned_variable(&name);
                    self.check_hidden_code(&value);
                    self.out.add_value(&value.text);
                    argv.push(format!("{name}={}", value.text));
                }
                "variable_name" => {
                    let name = self.text(child).to_owned();
                    names.push(name.clone());
                    argv.push(name);
                }
                _ => {
                    let word = self.word(child, ctx);
                    if !word.is_literal() {
                        self.out.add_hook_state(format!(
                            "`{program}` of a variable named at run time (`{}`), which could be a \
                             hook's",
                            word.text
                        ));
                    }
                    match word.text.split_once('=') {
                        Some((name, value)) => {
                            self.out.add_literal_assignment(name, &word.part(value));
                            self.check_declared_name(&program, name);
                            self.check_assigned_variable(name);
                            self.out.add_value(value);
                        }
                        None if word.text.starts_with(['-', '+']) => {
                            options.push(word.text.clone())
                        }
                        None => {
                            self.check_declared_name(&program, &word.text);
                            names.push(word.text.clone());
                        }
                    }
                    self.check_hidden_code(&word);
                    self.check_name_subscript(&word.text);
                    argv.push(word.text);
                }
            }
        }
        let option_texts: Vec<&str> = options.iter().map(String::as_str).collect();
        let lists = hooks::declaration_lists(&option_texts);
        // `-n` is a nameref for declare/typeset/local (for export it removes the export).
        let nameref = matches!(program.as_str(), "declare" | "typeset" | "local")
            && options
                .iter()
                .any(|o| o.starts_with('-') && o.contains('n'));
        if nameref {
            self.out.add_hook_state(format!(
                "`{program} -n` makes a name refer to another variable, which could be a hook's"
            ));
        }
        if !lists {
            for name in &names {
                self.check_shell_variable(name);
                self.out.add_assigned(hooks::base_name(name));
            }
        }
        self.emit_builtin(program, argv, ctx);
    }

    fn unset(&mut self, node: Node, ctx: &Ctx) {
        let mut argv = Vec::new();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            let word = self.word(child, ctx);
            // `unset 'a[$(…)]'` evaluates the subscript, and so does `unset 'a[x]'` with x
            // holding `$(…)`.
            self.check_hidden_code(&word);
            self.check_name_subscript(&word.text);
            if !word.is_literal() {
                self.out.add_hook_state(format!(
                    "`unset` of a name only known at run time (`{}`), which could be a hook's",
                    word.text
                ));
            }
            argv.push(word.text);
        }
        let functions = argv.iter().any(|a| a == "-f");
        for name in argv.iter().filter(|a| !a.starts_with('-')) {
            if functions {
                self.check_function_name(name);
            } else {
                self.check_shell_variable(name);
                self.check_function_name(name);
            }
        }
        self.emit_builtin("unset".to_owned(), argv, ctx);
    }

    fn emit_builtin(&mut self, program: String, argv: Vec<String>, ctx: &Ctx) {
        let raw = RawCommand {
            name: Some(Word::literal(program)),
            args: argv.into_iter().map(Word::literal).collect(),
            writes: ctx.writes.clone(),
            reads: ctx.reads.clone(),
            stdin: ctx.stdin.clone(),
            ..RawCommand::default()
        };
        self.resolve(raw);
    }

    fn assignment(&mut self, node: Node, ctx: &Ctx) -> (String, Word) {
        let mut name = String::new();
        let mut value = Word::default();
        for (field, child) in fields(node) {
            match field {
                Some("name") => {
                    if child.kind() == "subscript" {
                        self.check_subscript(child);
                    }
                    name = self.text(child).to_owned();
                }
                Some("value") => value = self.word(child, ctx),
                _ => {}
            }
        }
        (name, value)
    }

    /// A name given to `export`/`declare`/… that is not a plain identifier (`{PS0,X}`, `$n`,
    /// `a*`) may become a hook's variable when the shell expands it.
    fn check_declared_name(&mut self, program: &str, name: &str) {
        let base = name.split('[').next().unwrap_or(name).trim_end_matches('+');
        let identifier = !base.is_empty()
            && base.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !base.starts_with(|c: char| c.is_ascii_digit());
        if !identifier {
            self.out.add_hook_state(format!(
                "`{program}` of `{}`, a name the shell expands, which could be a hook's",
                name
            ));
        }
    }

    /// `f() { …; }`, `function f { …; }`, zsh's `function f g { …; }` (which the grammar reads
    /// as an error holding the first names): each name is a function defined on the line.
    fn function(&mut self, node: Node, ctx: &Ctx) {
        let mut names = Vec::new();
        let mut body = None;
        for (field, child) in fields(node) {
            match field {
                Some("name") => names.push(self.word(child, ctx).text),
                Some("body") => body = Some(child),
                _ if child.kind() == "ERROR" => {
                    let mut cursor = child.walk();
                    for part in child.named_children(&mut cursor) {
                        if part.kind() == "word" {
                            names.push(self.word(part, ctx).text);
                        }
                    }
                }
                _ => {}
            }
        }
        for name in &names {
            self.check_function_name(name);
            self.line_functions.push(name.clone());
        }
        let before = self.out.commands.len();
        if let Some(body) = body {
            self.walk(body, &ctx.nested());
        }
        let forks = body.is_some_and(subtree_forks);
        for name in names {
            let recursive = self.out.commands[before..]
                .iter()
                .any(|c| c.program == name);
            self.out.functions.push(FunctionDef {
                name,
                recursive,
                forks,
            });
        }
    }

    /// The value of a word after quote removal; command substitutions inside it are walked.
    pub(super) fn word(&mut self, node: Node, ctx: &Ctx) -> Word {
        let text = self.text(node).to_owned();
        match node.kind() {
            "word" => words::unquoted(&text),
            "raw_string" => Word::quoted(strip_quotes(&text, 1, 1)),
            "ansi_c_string" => Word::quoted(words::ansi_c(strip_quotes(&text, 2, 1))),
            "string" => {
                self.check_translated(node);
                self.double_quoted(node, ctx)
            }
            "simple_expansion" | "expansion" | "arithmetic_expansion" => {
                if node.kind() == "expansion" {
                    self.check_prompt_expansion(node);
                    self.check_expansion_assignment(node);
                    self.check_expansion_reevaluation(node);
                } else if node.kind() == "arithmetic_expansion" {
                    self.check_arithmetic(node);
                }
                self.walk_children(node, ctx);
                let expansion = match plain_parameter(node, &text) {
                    Some(name) => {
                        self.out.add_parameter(name);
                        Word::parameter(text)
                    }
                    None => Word::dynamic(text),
                };
                // Unquoted: split into words (inside `"…"` this is undone below).
                Word {
                    splits: true,
                    ..expansion
                }
            }
            "command_substitution" => {
                self.substitution(node, ctx);
                Word {
                    splits: true,
                    ..Word::dynamic(text)
                }
            }
            "process_substitution" => {
                self.substitution(node, ctx);
                Word::dynamic(text)
            }
            // `{1..3}`: its outer braces take part in brace expansion.
            "brace_expression" => Word {
                braces: vec![0, text.len().saturating_sub(1)],
                text,
                ..Word::default()
            },
            "extglob_pattern" | "regex" => Word {
                text,
                glob: true,
                ..Word::default()
            },
            "number" if node.named_child_count() == 0 => Word::literal(text),
            "concatenation" | "command_name" | "translated_string" => {
                let mut word = Word::default();
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if child.is_named() {
                        word.push(self.word(child, ctx));
                    } else {
                        word.push(words::unquoted(self.text(child)));
                    }
                }
                word
            }
            _ => {
                self.walk_children(node, ctx);
                Word {
                    splits: true,
                    ..Word::dynamic(text)
                }
            }
        }
    }

    /// A `"…"` string: literal stretches get double-quote escape rules, expansions stay dynamic.
    fn double_quoted(&mut self, node: Node, ctx: &Ctx) -> Word {
        let mut word = Word::default();
        let start = node.start_byte() + 1;
        let end = node.end_byte().saturating_sub(1).max(start);
        let mut pos = start;
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if !child.is_named() {
                continue;
            }
            if child.start_byte() > pos {
                let gap = self.src.get(pos..child.start_byte()).unwrap_or("");
                word.push(Word::quoted(words::double_quoted_literal(gap)));
            }
            if child.kind() == "string_content" {
                word.push(Word::quoted(words::double_quoted_literal(self.text(child))));
            } else {
                let inner = self.word(child, ctx);
                // Inside double quotes nothing is a pattern, split or brace-expanded.
                word.push(Word {
                    glob: false,
                    splits: false,
                    braces: Vec::new(),
                    ..inner
                });
            }
            pos = child.end_byte();
        }
        if end > pos {
            let gap = self.src.get(pos..end).unwrap_or("");
            word.push(Word::quoted(words::double_quoted_literal(gap)));
        }
        word
    }

    /// Quoted text holding `$(` or a backtick, outside a script that is parsed, makes the line
    /// opaque (see [`Word::hidden_code`]).
    pub(super) fn check_hidden_code(&mut self, word: &Word) {
        if word.hidden_code {
            self.out.add_opaque(HIDDEN_CODE);
        }
    }

    /// `${NAME:=value}` and `${NAME=value}` assign NAME when it is unset (or empty): an assignment
    /// like any other.
    fn check_expansion_assignment(&mut self, node: Node) {
        let text = self.text(node);
        let Some(inner) = text.strip_prefix("${") else {
            return;
        };
        let name_end = inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len());
        let rest = &inner[name_end..];
        if name_end > 0 && (rest.starts_with(":=") || rest.starts_with('=')) {
            let name = inner[..name_end].to_owned();
            self.check_assigned_variable(&name);
        }
    }

    /// `(( HISTSIZE = 0 ))`, `$(( x += 1 ))`, `(( x++ ))`: arithmetic assigns variables too. (In
    /// `[[ a = b ]]` the left side is a word, not a variable name, and `=` compares.)
    fn check_arithmetic_assignment(&mut self, node: Node) {
        const ASSIGNING: [&str; 13] = [
            "=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", "++", "--",
        ];
        let mut target = None;
        let mut assigns = false;
        for (field, child) in fields(node) {
            match (field, child.kind()) {
                (Some("operator"), op) => assigns |= ASSIGNING.contains(&op),
                (_, "variable_name" | "subscript") if target.is_none() => target = Some(child),
                _ => {}
            }
        }
        if let (true, Some(target)) = (assigns, target) {
            let name = self.text(target).to_owned();
            self.check_assigned_variable(&name);
        }
    }

    /// Arithmetic (`(( … ))`, `$(( … ))`, `$[ … ]`, `for (( … ))`) whose operands are not all
    /// numbers: bash and zsh evaluate a variable's value (or a substitution's output) as
    /// arithmetic in turn, and expand a `$(…)` they find in an array subscript there — so
    /// `$((x))` runs whatever code `x` holds, as `eval "$x"` would. Numbers, operators and `$?`,
    /// `$#`, `$$`, `$!` evaluate nothing else.
    fn check_arithmetic(&mut self, node: Node) {
        let mut stack = vec![node];
        let mut visited = 0;
        while let Some(n) = stack.pop() {
            visited += 1;
            if visited > 10_000 {
                self.out.add_opaque(REEVAL_ARITHMETIC);
                return;
            }
            match n.kind() {
                "number"
                | "binary_expression"
                | "unary_expression"
                | "ternary_expression"
                | "parenthesized_expression"
                | "postfix_expression"
                | "arithmetic_expansion"
                | "compound_statement"
                | "c_style_for_statement"
                | "test_operator" => {}
                "do_group" => continue,
                "word" if numeric(self.text(n)) => {}
                "simple_expansion" if matches!(self.text(n), "$?" | "$#" | "$$" | "$!") => {
                    continue;
                }
                _ if !n.is_named() => continue,
                _ => {
                    self.out.add_opaque(REEVAL_ARITHMETIC);
                    return;
                }
            }
            let mut cursor = n.walk();
            stack.extend(n.children(&mut cursor));
        }
    }

    /// `${a[i]}`, `a[i]=…`: an indexed array's subscript is arithmetic (see
    /// [`Walker::check_arithmetic`]); only a number, `@` or `*` evaluates nothing.
    fn check_subscript(&mut self, node: Node) {
        if let Some(index) = node.child_by_field_name("index")
            && !inert_subscript(self.text(index))
        {
            self.out.add_opaque(REEVAL_SUBSCRIPT);
        }
    }

    /// A name given as a word to a builtin that takes variable names (`test -v 'a[x]'`,
    /// `unset`, `printf -v`, `read`, `declare` …) is evaluated with its subscript.
    fn check_name_subscript(&mut self, text: &str) {
        let name = text.split_once('=').map_or(text, |(n, _)| n);
        if let Some((_, rest)) = name.split_once('[') {
            let index = rest.strip_suffix(']').unwrap_or(rest);
            if !inert_subscript(index) {
                self.out.add_opaque(REEVAL_SUBSCRIPT);
            }
        }
    }

    /// `[[ … ]]`: `-eq`, `-lt` … evaluate both sides as arithmetic; `-v` evaluates a subscript.
    fn check_test_command(&mut self, node: Node) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            let mut cursor = n.walk();
            let children: Vec<Node> = n.children(&mut cursor).collect();
            let operator = children
                .iter()
                .find(|c| c.kind() == "test_operator")
                .map(|c| self.text(*c).to_owned());
            match (n.kind(), operator.as_deref()) {
                ("binary_expression", Some(op)) if ARITHMETIC_TESTS.contains(&op) => {
                    let operands = children
                        .iter()
                        .filter(|c| c.is_named() && c.kind() != "test_operator");
                    for operand in operands {
                        if !numeric(self.text(*operand)) && !special_number(self.text(*operand)) {
                            self.out.add_opaque(REEVAL_ARITHMETIC);
                        }
                    }
                }
                ("unary_expression", Some("-v")) => {
                    for operand in children.iter().filter(|c| c.kind() != "test_operator") {
                        let text = self.text(*operand).to_owned();
                        self.check_name_subscript(&text);
                    }
                }
                _ => stack.extend(children.into_iter().filter(|c| c.is_named())),
            }
        }
    }

    /// Builtins that evaluate their arguments again: `let` (arithmetic), `test`/`[` (`-v NAME`
    /// with a subscript; in zsh `-eq` … evaluate arithmetic), and those that take variable names
    /// (`printf -v`, `read`, `getopts`, `mapfile`, `wait -p`), whose subscripts are arithmetic.
    fn check_builtin_reevaluation(&mut self, raw: &RawCommand) {
        let Some(name) = &raw.name else {
            return;
        };
        let args: Vec<&str> = raw.args.iter().map(|a| a.text.as_str()).collect();
        match name.text.as_str() {
            "let" if args.iter().any(|a| !numeric(a)) => {
                self.out.add_opaque(REEVAL_ARITHMETIC);
            }
            "test" | "[" => {
                for (i, arg) in args.iter().enumerate() {
                    if *arg == "-v"
                        && let Some(next) = args.get(i + 1)
                    {
                        self.check_name_subscript(next);
                    }
                    if ARITHMETIC_TESTS.contains(arg) {
                        let around = [i.checked_sub(1).and_then(|j| args.get(j)), args.get(i + 1)];
                        if around
                            .iter()
                            .flatten()
                            .any(|a| !numeric(a) && !special_number(a))
                        {
                            self.out.add_opaque(REEVAL_ARITHMETIC);
                        }
                    }
                }
            }
            program => {
                for name in name_arguments(program, &args) {
                    self.check_name_subscript(name);
                }
            }
        }
    }

    /// `${!name}`: the value names another variable, read with its subscript (arithmetic);
    /// `${x:i:n}`: offsets are arithmetic. (`${!prefix*}` and `${!a[@]}` list names and keys.)
    fn check_expansion_reevaluation(&mut self, node: Node) {
        let text = self.text(node);
        if let Some(rest) = text.strip_prefix("${!")
            && !(rest.ends_with("*}") || rest.ends_with("@}") || rest.ends_with("[@]}"))
            && !rest.ends_with("[*]}")
        {
            self.out.add_opaque(REEVAL_INDIRECT);
        }
        let mut cursor = node.walk();
        let names = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "variable_name")
            .count();
        if names > 1 {
            self.out.add_opaque(REEVAL_ARITHMETIC);
        }
    }

    /// `$"…"`: bash looks the text up in the message catalog `TEXTDOMAIN` and `TEXTDOMAINDIR`
    /// name (in any locale but C) and expands what it finds there, `$(…)` included: the line
    /// shows a string, the shell runs the translation.
    fn check_translated(&mut self, node: Node) {
        let start = node.start_byte();
        let dollar = start > 0 && self.src.as_bytes().get(start - 1) == Some(&b'$');
        let escaped = start > 1 && self.src.as_bytes().get(start - 2) == Some(&b'\\');
        if dollar && !escaped || self.text(node).starts_with("$\"") {
            self.out.add_opaque(REEVAL_TRANSLATED);
        }
    }

    /// `${x@P}` expands `x` like a prompt, running the command substitutions in its value.
    fn check_prompt_expansion(&mut self, node: Node) {
        if self.text(node).ends_with("@P}") {
            self.out.add_opaque(
                "`${…@P}` expands a value like a prompt, running any command substitution in it",
            );
        }
    }

    /// Parse a script found inside the line (`bash -c`, `eval`, a here-document fed to a shell).
    pub(super) fn nested_script(&mut self, script: &str, via: Vec<String>) {
        parse_script(script, self.depth + 1, &via, self.out);
    }
}

/// Re-evaluation: text the shell evaluates again at run time, as code the line does not show.
pub(super) const REEVAL_ARITHMETIC: &str = "arithmetic on a value only known at run time: bash and \
     zsh evaluate a variable's value as arithmetic in turn and run a `$(…)` found in an array \
     subscript there, so it runs code the line does not show";
pub(super) const REEVAL_SUBSCRIPT: &str = "an array subscript that is not a number: the shell \
     evaluates it as arithmetic, which runs code a variable's value holds";
pub(super) const REEVAL_INDIRECT: &str = "indirect expansion (`${!name}`) reads the variable a \
     value names, with its subscript, which runs code that value holds";
pub(super) const REEVAL_TRANSLATED: &str = "`$\"…\"` is replaced by a translation from the \
     message catalog TEXTDOMAIN and TEXTDOMAINDIR name, and bash expands what that holds";

/// The arguments of a builtin that are variable names (the shell evaluates their subscripts):
/// `printf -v NAME`, `read … NAME…` (and `-a NAME`), `getopts OPTSTRING NAME`, `mapfile … NAME`,
/// `wait -p NAME`. Option values that are not names are skipped.
fn name_arguments<'a>(program: &str, args: &[&'a str]) -> Vec<&'a str> {
    let (takes_value, name_option, positional): (&str, &str, fn(usize) -> bool) = match program {
        "printf" => ("", "v", |_| false),
        "read" => ("dinNptu", "a", |_| true),
        "getopts" => ("", "", |i| i == 1),
        "mapfile" | "readarray" => ("dnOsuCc", "", |_| true),
        "wait" => ("", "p", |_| false),
        _ => return Vec::new(),
    };
    let mut names = Vec::new();
    let mut position = 0;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i];
        match arg
            .strip_prefix('-')
            .filter(|o| !o.is_empty() && position == 0)
        {
            Some(option) => {
                for (at, letter) in option.char_indices() {
                    if !(name_option.contains(letter) || takes_value.contains(letter)) {
                        continue;
                    }
                    let rest = &option[at + letter.len_utf8()..];
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i).copied()
                    } else {
                        Some(rest)
                    };
                    if name_option.contains(letter) {
                        names.extend(value);
                    }
                    break;
                }
            }
            None => {
                if positional(position) {
                    names.push(arg);
                }
                position += 1;
            }
        }
        i += 1;
    }
    names
}

/// `[[ … ]]` and `test` operators that compare arithmetic.
const ARITHMETIC_TESTS: [&str; 6] = ["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// An integer as text (`12`, `-3`): arithmetic on it evaluates nothing else.
fn numeric(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `$?`, `$#`, `$$`, `$!` (also quoted): the shell sets them to numbers.
fn special_number(text: &str) -> bool {
    matches!(
        text.trim_matches('"'),
        "$?" | "$#" | "$$" | "$!" | "${?}" | "${#}"
    )
}

/// A subscript that evaluates nothing: a number, `@` or `*` (also quoted).
fn inert_subscript(index: &str) -> bool {
    let index = index.trim_matches(|c| c == '"' || c == '\'');
    numeric(index) || index == "@" || index == "*"
}

/// Why quoted text holding code makes a line opaque.
pub(super) const HIDDEN_CODE: &str = "quoted text holds `$(` or a backtick, which bash runs if it \
     evaluates the text again (an array subscript in `test -v`, `printf -v`, `[[ … ]]`, `unset`, \
     arithmetic, or `${…@P}`)";

/// A node's children with their field names, read in one pass of a cursor (asking a node for a
/// child's field name by index walks the children again each time).
pub(super) fn fields<'t>(node: Node<'t>) -> Vec<(Option<&'t str>, Node<'t>)> {
    let mut out = Vec::with_capacity(node.child_count() as usize);
    let mut cursor = node.walk();
    if cursor.goto_first_child() {
        loop {
            out.push((cursor.field_name(), cursor.node()));
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
    out
}

/// Does this redirection write a file? Duplicating a descriptor, closing one, and writing to the
/// standard streams or `/dev/null` do not.
fn redirect_writes(operator: &str, target: &str) -> bool {
    const HARMLESS_TARGETS: [&str; 7] = [
        "/dev/null",
        "/dev/stdout",
        "/dev/stderr",
        "/dev/tty",
        "/dev/fd/1",
        "/dev/fd/2",
        "-",
    ];
    match operator {
        ">" | ">>" | ">|" | "&>" | "&>>" | "<>" => !HARMLESS_TARGETS.contains(&target),
        ">&" | "&>|" => {
            !(target.chars().all(|c| c.is_ascii_digit()) || HARMLESS_TARGETS.contains(&target))
        }
        _ => false,
    }
}

/// The name, when an expansion node (whose text is `text`) is a plain parameter's: `$NAME` or
/// `${NAME}`, a variable's name and nothing else (not `$?`, `$1`, `${x:-y}`, `${#x}`, `${a[0]}`).
fn plain_parameter<'t>(node: Node, text: &'t str) -> Option<&'t str> {
    // (Inside `"…"`, tree-sitter-bash's node for an expansion after a blank starts at the blank.)
    let text = text.trim_start_matches([' ', '\t']);
    let name = text
        .strip_prefix("${")
        .and_then(|t| t.strip_suffix('}'))
        .or_else(|| text.strip_prefix('$'))
        .unwrap_or_default();
    let identifier = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let only_a_name = identifier
        && node.named_child_count() == 1
        && node
            .named_child(0)
            .is_some_and(|child| child.kind() == "variable_name");
    let plain = match node.kind() {
        "simple_expansion" => only_a_name && node.child_count() == 2,
        "expansion" => only_a_name && node.child_count() == 3,
        _ => false,
    };
    plain.then_some(name)
}

fn strip_quotes(text: &str, open: usize, close: usize) -> &str {
    if text.len() >= open + close {
        text.get(open..text.len() - close).unwrap_or("")
    } else {
        ""
    }
}

/// Does a function body background or pipe anything? (Part of recognising a fork bomb.)
fn subtree_forks(node: Node) -> bool {
    let mut stack = vec![node];
    let mut visited = 0;
    while let Some(n) = stack.pop() {
        visited += 1;
        if visited > 10_000 {
            return true;
        }
        if n.kind() == "pipeline" || n.kind() == "&" {
            return true;
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    false
}
