//! PowerShell lines, parsed with tree-sitter-powershell.
//!
//! Commands are extracted from pipelines, statement lists, script blocks passed as arguments
//! (`ForEach-Object { … }`) or invoked (`& { … }`), sub-expressions (`$(…)`) and `&`/`.`
//! invocations, then unwrapped by the
//! same unwrapper as bash lines (so `bash -c '…'` or `sudo rm` inside a PowerShell line is judged
//! the same way). Limits, documented in `docs/parsing.md`: .NET method calls
//! (`[IO.File]::Delete()`), `Invoke-Expression` of anything but one literal, dot-sourcing, variables
//! in command position and `--%` are opaque; aliases defined in the user's profile are not known.

use super::bash::{Input, RawCommand, Walker};
use super::words::Word;
use super::{MAX_SCRIPT_DEPTH, Parsed};
use std::cell::RefCell;
use tree_sitter::{Node, Tree};

/// PowerShell's grammar nests about a dozen expression levels around every argument, so its bound
/// is higher than bash's; see the stack test.
const MAX_NESTING: usize = 192;

/// Assignment targets that reach shellgate's PowerShell hook or the session itself: the scope and
/// provider drives (`$global:x`, `${env:PATH}`, `$function:prompt`, `$alias:ls`,
/// `$variable:x`; at the prompt `$script:` is the global scope), the engine objects, PSReadLine,
/// and shellgate's own names.
const HOOK_MARKERS: [&str; 11] = [
    "global:",
    "script:",
    "env:",
    "function:",
    "alias:",
    "variable:",
    "executioncontext",
    "psconsolehostreadline",
    "psreadline",
    "psdefaultparametervalues",
    "shellgate",
];

/// Expressions that reach into the engine: what they call or change can replace the hook, define
/// functions or run code (`$ExecutionContext.InvokeCommand…`, `[scriptblock]::Create`).
const ENGINE_MARKERS: [&str; 9] = [
    "$executioncontext",
    "${executioncontext}",
    "$host.",
    "[scriptblock]",
    "[powershell]",
    "runspace",
    "management.automation",
    "psreadline",
    "psconsolehostreadline",
];

/// The provider drives whose items are the session's functions, aliases, variables and
/// environment.
const SESSION_DRIVES: [&str; 4] = ["env:", "function:", "alias:", "variable:"];

/// Cmdlets (and their aliases) that change the session's variables, aliases, key handling,
/// modules or engine events, whatever their arguments.
const SESSION_CMDLETS: [&str; 30] = [
    "set-variable",
    "sv",
    "set",
    "new-variable",
    "nv",
    "remove-variable",
    "rv",
    "clear-variable",
    "clv",
    "set-alias",
    "sal",
    "new-alias",
    "nal",
    "remove-alias",
    "import-alias",
    "ipal",
    "set-psreadlineoption",
    "set-psreadlinekeyhandler",
    "remove-psreadlinekeyhandler",
    "import-module",
    "ipmo",
    "remove-module",
    "rmo",
    "set-psdebug",
    "set-psbreakpoint",
    "sbp",
    "register-engineevent",
    "register-objectevent",
    "update-typedata",
    "add-type",
];

/// Item cmdlets (and aliases): on a session drive (`Set-Item function:prompt …`) they change the
/// session.
const ITEM_CMDLETS: [&str; 34] = [
    "set-item",
    "si",
    "new-item",
    "ni",
    "remove-item",
    "ri",
    "rm",
    "del",
    "erase",
    "rd",
    "rmdir",
    "clear-item",
    "cli",
    "rename-item",
    "rni",
    "ren",
    "copy-item",
    "cpi",
    "copy",
    "cp",
    "move-item",
    "mi",
    "move",
    "mv",
    "set-content",
    "sc",
    "add-content",
    "ac",
    "clear-content",
    "clc",
    "set-itemproperty",
    "sp",
    "new-itemproperty",
    "remove-itemproperty",
];

/// Does this command change the PowerShell session's hook state?
fn changes_session(name: &str, args: &[Word]) -> bool {
    let lower = name.to_ascii_lowercase();
    if SESSION_CMDLETS.contains(&lower.as_str()) {
        return true;
    }
    ITEM_CMDLETS.contains(&lower.as_str())
        && args.iter().any(|a| {
            let text = a.text.to_ascii_lowercase();
            let text = text.trim_start_matches(['\'', '"']);
            !a.is_literal() && text.contains(':')
                || SESSION_DRIVES.iter().any(|d| text.starts_with(d))
                || text.contains("shellgate")
        })
}

thread_local! {
    static PARSER: super::ParserSlot = const { RefCell::new(None) };
}

fn syntax_tree(src: &str) -> Option<Tree> {
    super::parse_with(&PARSER, tree_sitter_powershell::LANGUAGE.into(), src)
}

/// Does `src` parse as PowerShell without errors? (Used to check the PowerShell hook template.)
pub fn is_valid_powershell(src: &str) -> bool {
    syntax_tree(src).is_some_and(|t| !t.root_node().has_error())
}

pub(super) fn parse_into(line: &str, out: &mut Parsed) {
    parse_script(line, 0, out);
}

fn parse_script(src: &str, depth: usize, out: &mut Parsed) {
    if depth > MAX_SCRIPT_DEPTH {
        out.add_opaque(format!(
            "scripts are nested more than {MAX_SCRIPT_DEPTH} levels deep"
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
            "the line has a PowerShell syntax error; what would run cannot be determined",
        );
    }
    let mut ps = PwshWalker {
        src,
        depth,
        inner: Walker {
            src: "",
            depth,
            via: Vec::new(),
            out,
            line_functions: Vec::new(),
        },
    };
    ps.walk(root, Input::Inherited, 0);
}

struct PwshWalker<'a> {
    src: &'a str,
    depth: usize,
    /// The shared unwrapper (and its output) used for every extracted command.
    inner: Walker<'a>,
}

impl PwshWalker<'_> {
    fn text(&self, node: Node) -> &str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    fn walk(&mut self, node: Node, stdin: Input, nest: usize) {
        if nest > MAX_NESTING {
            self.inner
                .out
                .add_opaque("the line is nested too deeply to be analysed");
            return;
        }
        match node.kind() {
            "comment" => {}
            "command" => self.command(node, stdin, nest),
            "pipeline_chain" => {
                let mut cursor = node.walk();
                for (index, child) in node.named_children(&mut cursor).enumerate() {
                    let input = if index == 0 {
                        stdin.clone()
                    } else {
                        Input::Pipe
                    };
                    self.walk(child, input, nest + 1);
                }
            }
            "invokation_expression" => {
                self.inner.out.add_opaque(
                    "the line calls a .NET or object method, whose effect the parser cannot see",
                );
                self.check_engine_access(node);
                self.walk_children(node, nest);
            }
            "member_access" => {
                self.check_engine_access(node);
                self.walk_children(node, nest);
            }
            "assignment_expression" | "function_statement" => {
                let lowered = self.text(node).to_ascii_lowercase();
                // The assigned target (`${global:x}` holds a brace), or the function's name.
                let target = match node.named_child(0) {
                    Some(left) if node.kind() == "assignment_expression" => {
                        self.text(left).to_ascii_lowercase()
                    }
                    _ => lowered.split('{').next().unwrap_or("").to_owned(),
                };
                if HOOK_MARKERS.iter().any(|m| target.contains(m)) {
                    self.inner
                        .out
                        .add_hook_state("the line changes PowerShell hook state");
                }
                self.walk_children(node, nest);
            }
            "redirection" => self.redirection(node, &mut Vec::new()),
            _ => self.walk_children(node, nest),
        }
    }

    /// `$ExecutionContext.InvokeCommand…`, `[scriptblock]::Create(…)`, `$Host.…`: reaching into the
    /// engine, even as an argument, can replace the hook or run code.
    fn check_engine_access(&mut self, node: Node) {
        let lowered = self.text(node).to_ascii_lowercase();
        if ENGINE_MARKERS.iter().any(|m| lowered.contains(m)) {
            self.inner
                .out
                .add_hook_state("the line reaches into the PowerShell engine or PSReadLine");
        }
    }

    fn walk_children(&mut self, node: Node, nest: usize) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.walk(child, Input::Inherited, nest + 1);
        }
    }

    fn command(&mut self, node: Node, stdin: Input, nest: usize) {
        let mut raw = RawCommand {
            stdin,
            ..RawCommand::default()
        };
        let mut dot_source = false;
        let mut script_block = false;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "command_invokation_operator" => dot_source = self.text(child).trim() == ".",
                // `& { … }` and `. { … }` run the block: its commands are what runs.
                "command_name_expr" if has_descendant(child, &["script_block"]) => {
                    script_block = true;
                    self.walk_children(child, nest);
                }
                "command_name" | "command_name_expr" => {
                    raw.name = Some(self.name_word(child, nest));
                }
                "command_elements" => self.elements(child, &mut raw, nest),
                _ => self.walk(child, Input::Inherited, nest + 1),
            }
        }
        if dot_source {
            self.inner
                .out
                .add_opaque("dot-sourcing runs a script in the current session");
            self.inner.out.add_hook_state(
                "dot-sourcing runs code in the session itself, where it can replace the hook",
            );
        }
        if script_block {
            return;
        }
        if let Some(name) = &raw.name
            && is_foreach(&name.text)
            && calls_member(&raw.args)
        {
            self.inner.out.add_opaque(format!(
                "`{}` with a member name calls that method (or reads that property) on each \
                 object: a method call whose effect the parser cannot see",
                name.text
            ));
        }
        if let Some(name) = &raw.name
            && is_invoke_expression(&name.text)
        {
            self.invoke_expression(&raw.args);
            return;
        }
        if let Some(name) = &raw.name
            && changes_session(&name.text, &raw.args)
        {
            self.inner.out.add_hook_state(format!(
                "`{}` changes the PowerShell session's variables, aliases, functions or key \
                 handling",
                name.text
            ));
        }
        self.inner.resolve(raw);
    }

    /// `iex 'literal'` is parsed like `eval 'literal'`; anything else is opaque.
    fn invoke_expression(&mut self, args: &[Word]) {
        match args {
            [script] if script.is_literal() => {
                let text = script.text.clone();
                parse_script(&text, self.depth + 1, self.inner.out);
            }
            _ => {
                self.inner.out.add_opaque(
                    "`Invoke-Expression` of anything but one literal string runs code only known at run time",
                );
                self.inner.out.add_hook_state(
                    "`Invoke-Expression` of a string only known at run time runs it in the session itself",
                );
            }
        }
    }

    /// The command's name: a literal, or — a variable, a sub-expression, a parenthesised
    /// expression (`& (Get-Command Remove-Item)`), a member — a program only known at run time.
    fn name_word(&mut self, node: Node, nest: usize) -> Word {
        let text = self.text(node).trim().to_owned();
        let computed = [
            "variable",
            "sub_expression",
            "braced_variable",
            "parenthesized_expression",
            "member_access",
            "invokation_expression",
            "pipeline",
        ];
        if has_descendant(node, &computed) || text.starts_with('(') {
            self.walk_children(node, nest);
            return Word::dynamic(text);
        }
        Word::literal(unquote(&text))
    }

    fn elements(&mut self, node: Node, raw: &mut RawCommand, nest: usize) {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "command_argument_sep" => {}
                "command_parameter" | "generic_token" => {
                    raw.args.push(Word::literal(self.text(child).to_owned()));
                }
                "redirection" => self.redirection(child, &mut raw.writes),
                // `Remove-Item @p`: the arguments are a hashtable's or array's, only known at
                // run time (the destructive rules cannot see a splatted `-Recurse`).
                _ if is_splat(self.text(child)) => {
                    self.inner.out.add_opaque(format!(
                        "splatting (`{}`) passes arguments only known at run time",
                        self.text(child).trim()
                    ));
                    raw.args.push(Word::dynamic(self.text(child).to_owned()));
                }
                "stop_parsing" => self
                    .inner
                    .out
                    .add_opaque("`--%` passes the rest of the line unparsed"),
                _ => raw.args.push(self.argument(child, nest)),
            }
        }
    }

    /// An argument that is an expression: a literal string or number is its value; anything else
    /// is dynamic, and the commands inside it (script blocks, sub-expressions) are walked.
    fn argument(&mut self, node: Node, nest: usize) -> Word {
        let text = self.text(node).to_owned();
        let literal = literal_value(node).map(|n| self.text(n).to_owned());
        self.walk(node, Input::Inherited, nest + 1);
        match literal {
            // Quoted: the text may still reach bash (`bash -c '…' _ 'a[$(…)]'`).
            Some(value) if !(value.starts_with('"') && value.contains(['$', '`'])) => {
                Word::quoted(unquote(&value))
            }
            _ => Word::dynamic(text),
        }
    }

    fn redirection(&mut self, node: Node, writes: &mut Vec<String>) {
        let mut operator = String::new();
        let mut target = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "file_redirection_operator" => operator = self.text(child).to_owned(),
                "redirected_file_name" => target = Some(self.text(child).trim().to_owned()),
                _ => {}
            }
        }
        let Some(target) = target else {
            return;
        };
        let target = unquote(&target);
        let writes_file = operator.contains('>') && !target.eq_ignore_ascii_case("$null");
        if writes_file {
            writes.push(target.clone());
            if !self.inner.out.writes.contains(&target) {
                self.inner.out.writes.push(target);
            }
        }
    }
}

/// `@name` (also `@{…}`/`@(…)` are not splats: those are literals): a splatted variable.
fn is_splat(text: &str) -> bool {
    let text = text.trim();
    text.strip_prefix('@').is_some_and(|rest| {
        !rest.is_empty()
            && rest
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == ':')
    })
}

fn is_foreach(name: &str) -> bool {
    ["foreach-object", "%", "foreach"]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
}

/// `ForEach-Object Delete`, `% Delete`, `ForEach-Object -MemberName Delete`: a member name
/// instead of a script block.
fn calls_member(args: &[Word]) -> bool {
    args.iter().any(|a| {
        let text = a.text.trim();
        text.eq_ignore_ascii_case("-membername")
            || (!text.starts_with('-') && !text.starts_with('{') && !text.is_empty())
    })
}

fn is_invoke_expression(name: &str) -> bool {
    name.eq_ignore_ascii_case("iex") || name.eq_ignore_ascii_case("invoke-expression")
}

/// `'it''s'` → `it's`; `"x"` → `x` (callers only do this for strings without expansions).
fn unquote(text: &str) -> String {
    let t = text.trim();
    if t.len() >= 2 && t.starts_with('\'') && t.ends_with('\'') {
        return t[1..t.len() - 1].replace("''", "'");
    }
    if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
        return t[1..t.len() - 1].replace("`\"", "\"").replace("\"\"", "\"");
    }
    t.to_owned()
}

/// The string or number literal an argument expression consists of, if that is all it is.
fn literal_value(node: Node) -> Option<Node> {
    let mut n = node;
    loop {
        match n.kind() {
            "string_literal" | "decimal_integer_literal" | "integer_literal" | "real_literal" => {
                return Some(n);
            }
            "array_literal_expression" | "unary_expression" if n.named_child_count() == 1 => {
                n = n.named_child(0)?;
            }
            _ => return None,
        }
    }
}

fn has_descendant(node: Node, kinds: &[&str]) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if kinds.contains(&n.kind()) {
            return true;
        }
        let mut cursor = n.walk();
        stack.extend(n.named_children(&mut cursor));
    }
    false
}
