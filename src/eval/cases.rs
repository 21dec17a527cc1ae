//! Case files: TOML (`[[case]]` tables) and JSON lines (one case object per line, such as the
//! dcg corpus in `tests/corpus/`). Both share one schema, [`CaseSpec`]; a malformed file is an
//! error naming the file, line and column, and nothing is evaluated.

use crate::config::line_column;
use crate::error::{Code, Error};
use crate::mode::SandboxPolicy;
use crate::parse::ShellKind;
use crate::policy::grant::Network;
use crate::policy::{Route, Verdict};
use serde::de::{self, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// The longest case id (it names the case's trace file).
const MAX_ID_CHARS: usize = 100;

/// One labelled case, validated.
#[derive(Debug, Clone)]
pub struct Case {
    pub id: String,
    /// Where the case is written (`file:line:column`).
    pub source: String,
    pub line: String,
    /// The directory the line is decided in, relative to the case's scratch workspace.
    pub cwd: PathBuf,
    pub shell: ShellKind,
    /// The mode to decide in; `None`: the `--mode` flag, else the config's.
    pub mode: Option<String>,
    /// Files seeded into the scratch workspace (relative path, contents).
    pub files: Vec<(PathBuf, String)>,
    pub category: Option<String>,
    pub description: Option<String>,
    pub expect: Expect,
}

/// What the case expects. Every field that is set must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Expect {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<ExpectedDecision>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Code>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<Route>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason_contains: Option<String>,
    /// The sandbox the line must be given (`read-only`, `workspace-write`, `full-access`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxPolicy>,
    /// The network the line must be granted (`"off"`, `"on"` or TCP ports).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<Network>,
    /// The extra writable directories it must be granted (exactly these).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub writable: Option<Vec<String>>,
}

impl Expect {
    fn is_empty(&self) -> bool {
        *self == Expect::default()
    }

    /// Every way `actual` misses this expectation, in words; empty when it holds.
    pub fn misses(&self, actual: &super::Actual) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(want) = self.decision
            && !want.admits(actual.decision)
        {
            out.push(format!(
                "decision: expected {}, got {}",
                want.as_str(),
                actual.decision.as_str()
            ));
        }
        if let Some(want) = self.code
            && want != actual.code
        {
            out.push(format!("code: expected {want}, got {}", actual.code));
        }
        if let Some(want) = self.route
            && want != actual.route
        {
            out.push(format!(
                "route: expected {}, got {}",
                want.as_str(),
                actual.route.as_str()
            ));
        }
        if let Some(want) = &self.rule
            && actual.rule.as_deref() != Some(want.as_str())
        {
            out.push(format!(
                "rule: expected {want}, got {}",
                actual.rule.as_deref().unwrap_or("none")
            ));
        }
        if let Some(want) = &self.reason_contains
            && !actual.reason.contains(want.as_str())
        {
            out.push(format!("reason: does not contain {want:?}"));
        }
        if let Some(want) = self.sandbox
            && want != actual.grant.sandbox
        {
            out.push(format!(
                "sandbox: expected {want}, got {}",
                actual.grant.sandbox
            ));
        }
        if let Some(want) = &self.network
            && *want != actual.grant.network
        {
            out.push(format!(
                "network: expected {want}, got {}",
                actual.grant.network
            ));
        }
        if let Some(want) = &self.writable
            && *want != actual.grant.writable
        {
            out.push(format!(
                "writable: expected {want:?}, got {:?}",
                actual.grant.writable
            ));
        }
        out
    }

    /// The expectation in one line: `decision deny, code NEVER_POLICY`.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(d) = self.decision {
            parts.push(format!("decision {}", d.as_str()));
        }
        if let Some(c) = self.code {
            parts.push(format!("code {c}"));
        }
        if let Some(r) = self.route {
            parts.push(format!("route {}", r.as_str()));
        }
        if let Some(r) = &self.rule {
            parts.push(format!("rule {r}"));
        }
        if let Some(r) = &self.reason_contains {
            parts.push(format!("reason contains {r:?}"));
        }
        if let Some(sandbox) = self.sandbox {
            parts.push(format!("sandbox {sandbox}"));
        }
        if let Some(network) = &self.network {
            parts.push(format!("network {network}"));
        }
        if let Some(writable) = &self.writable {
            parts.push(format!("writable {}", writable.join(", ")));
        }
        parts.join(", ")
    }
}

/// The decision a case expects: one outcome, or (as in dcg's corpus) one it must not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExpectedDecision {
    Allow,
    Deny,
    Ask,
    Review,
    /// Anything but `allow`: denied, or waiting for a person or the reviewer.
    NotAllowed,
    /// Anything but `deny`.
    NotDenied,
}

impl ExpectedDecision {
    pub const ALL: [ExpectedDecision; 6] = [
        ExpectedDecision::Allow,
        ExpectedDecision::Deny,
        ExpectedDecision::Ask,
        ExpectedDecision::Review,
        ExpectedDecision::NotAllowed,
        ExpectedDecision::NotDenied,
    ];

    pub fn admits(self, actual: Verdict) -> bool {
        match self {
            ExpectedDecision::Allow => actual == Verdict::Allow,
            ExpectedDecision::Deny => actual == Verdict::Deny,
            ExpectedDecision::Ask => actual == Verdict::Ask,
            ExpectedDecision::Review => actual == Verdict::Review,
            ExpectedDecision::NotAllowed => actual != Verdict::Allow,
            ExpectedDecision::NotDenied => actual != Verdict::Deny,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ExpectedDecision::Allow => "allow",
            ExpectedDecision::Deny => "deny",
            ExpectedDecision::Ask => "ask",
            ExpectedDecision::Review => "review",
            ExpectedDecision::NotAllowed => "not-allowed",
            ExpectedDecision::NotDenied => "not-denied",
        }
    }
}

/// `expect` is a table or, as shorthand for `{ decision = … }`, a decision string.
impl<'de> Deserialize<'de> for Expect {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Expect, D::Error> {
        struct ExpectVisitor;
        impl<'de> Visitor<'de> for ExpectVisitor {
            type Value = Expect;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a decision (allow, deny, ask, review, not-allowed, not-denied) or a table \
                     { decision, code, route, rule, reason_contains, sandbox, network, writable }",
                )
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<Expect, E> {
                let decision = ExpectedDecision::deserialize(text.into_deserializer())?;
                Ok(Expect {
                    decision: Some(decision),
                    ..Expect::default()
                })
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Expect, A::Error> {
                let table = ExpectTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Expect {
                    decision: table.decision,
                    code: table.code,
                    route: table.route,
                    rule: table.rule,
                    reason_contains: table.reason_contains,
                    sandbox: table.sandbox,
                    network: table.network,
                    writable: table.writable,
                })
            }
        }
        deserializer.deserialize_any(ExpectVisitor)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExpectTable {
    #[serde(default)]
    decision: Option<ExpectedDecision>,
    #[serde(default)]
    code: Option<Code>,
    #[serde(default)]
    route: Option<Route>,
    #[serde(default)]
    rule: Option<String>,
    #[serde(default)]
    reason_contains: Option<String>,
    #[serde(default)]
    sandbox: Option<SandboxPolicy>,
    #[serde(default)]
    network: Option<Network>,
    #[serde(default)]
    writable: Option<Vec<String>>,
}

/// A case as written, before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseSpec {
    #[serde(default)]
    id: Option<String>,
    line: String,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    shell: Option<ShellKind>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    description: Option<String>,
    expect: Expect,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlFile {
    #[serde(default)]
    case: Vec<toml::Spanned<CaseSpec>>,
    /// Session cases: another kind of file (`shellgate eval --sessions`, `eval::sessions`).
    #[serde(default)]
    session: Vec<toml::Value>,
}

/// The case files among `paths`: files as given, directories searched (recursively, sorted) for
/// `*.toml` and `*.jsonl`.
pub fn case_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            collect_dir(path, &mut out)?;
        } else if path.is_file() {
            out.push(path.clone());
        } else {
            return Err(usage(format!(
                "{}: no such case file or directory",
                path.display()
            )));
        }
    }
    Ok(out)
}

fn collect_dir(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| usage(format!("{}: cannot be listed: {e}", dir.display())))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect_dir(&path, out)?;
        } else if format_of(&path).is_some() {
            out.push(path);
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Toml,
    JsonLines,
}

fn format_of(path: &Path) -> Option<Format> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("toml") => Some(Format::Toml),
        Some("jsonl") => Some(Format::JsonLines),
        _ => None,
    }
}

/// Loads every case of every file; ids must be unique across all of them. Files of session
/// cases (`[[session]]` tables) are not line-case files: their paths come back as the second
/// value, for the caller to say they were left out.
pub fn load(files: &[PathBuf]) -> Result<(Vec<Case>, Vec<PathBuf>), Error> {
    let mut cases = Vec::new();
    let mut sessions = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    for file in files {
        let Some(file_cases) = load_file(file)? else {
            sessions.push(file.clone());
            continue;
        };
        for case in file_cases {
            if let Some(first) = seen.insert(case.id.clone(), case.source.clone()) {
                return Err(usage(format!(
                    "{}: case id `{}` is already used at {first}",
                    case.source, case.id
                )));
            }
            cases.push(case);
        }
    }
    if cases.is_empty() {
        let hint = if sessions.is_empty() {
            ""
        } else {
            " (they hold session cases: run them with --sessions)"
        };
        return Err(usage(format!(
            "no cases: the case files given hold none{hint}"
        )));
    }
    Ok((cases, sessions))
}

/// The cases of one file, or `None` for a file of session cases.
fn load_file(path: &Path) -> Result<Option<Vec<Case>>, Error> {
    let Some(format) = format_of(path) else {
        return Err(usage(format!(
            "{}: a case file is TOML (.toml) or JSON lines (.jsonl)",
            path.display()
        )));
    };
    let bytes = std::fs::read(path)
        .map_err(|e| usage(format!("{}: cannot be read: {e}", path.display())))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| usage(format!("{}: not valid UTF-8", path.display())))?;
    match format {
        Format::Toml => load_toml(path, &text),
        Format::JsonLines => load_json_lines(path, &text).map(Some),
    }
}

fn load_toml(path: &Path, text: &str) -> Result<Option<Vec<Case>>, Error> {
    let file: TomlFile = toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map_or((1, 1), |span| line_column(text, span.start));
        usage(format!(
            "{}:{line}:{column}: {}",
            path.display(),
            e.message().trim_end()
        ))
    })?;
    if !file.session.is_empty() {
        if !file.case.is_empty() {
            return Err(usage(format!(
                "{}: holds both line cases ([[case]]) and session cases ([[session]]); put them \
                 in files of their own",
                path.display()
            )));
        }
        return Ok(None);
    }
    file.case
        .into_iter()
        .map(|spanned| {
            let (line, column) = line_column(text, spanned.span().start);
            let source = format!("{}:{line}:{column}", path.display());
            let spec = spanned.into_inner();
            let Some(id) = spec.id.clone() else {
                return Err(usage(format!("{source}: the case has no `id`")));
            };
            validate(spec, id, source)
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn load_json_lines(path: &Path, text: &str) -> Result<Vec<Case>, Error> {
    let stem = default_id_stem(path);
    let mut cases = Vec::new();
    for (index, row) in text.lines().enumerate() {
        let number = index + 1;
        if row.trim().is_empty() {
            continue;
        }
        let spec: CaseSpec = serde_json::from_str(row).map_err(|e| {
            usage(format!(
                "{}:{number}:{}: {}",
                path.display(),
                e.column().max(1),
                json_message(&e)
            ))
        })?;
        let source = format!("{}:{number}:1", path.display());
        let id = spec
            .id
            .clone()
            .unwrap_or_else(|| format!("{stem}-{number}"));
        cases.push(validate(spec, id, source)?);
    }
    Ok(cases)
}

/// serde_json's message without its own ` at line 1 column N` (the location is given in front).
fn json_message(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(cut) => text[..cut].to_owned(),
        None => text,
    }
}

/// `dcg` for `…/dcg.jsonl`: the file stem with anything but `[A-Za-z0-9._-]` made `_`.
fn default_id_stem(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let cleaned: String = stem
        .chars()
        .map(|c| if id_char(c) { c } else { '_' })
        .collect();
    if cleaned.is_empty() || cleaned.starts_with('.') {
        format!("case{cleaned}")
    } else {
        cleaned
    }
}

fn id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

fn validate(spec: CaseSpec, id: String, source: String) -> Result<Case, Error> {
    let fail = |why: String| usage(format!("{source}: case `{}`: {why}", id.escape_debug()));
    if id.is_empty()
        || id.chars().count() > MAX_ID_CHARS
        || !id.chars().all(id_char)
        || id.starts_with('.')
    {
        return Err(fail(format!(
            "an id is 1 to {MAX_ID_CHARS} of A-Z a-z 0-9 . _ - and does not start with `.`"
        )));
    }
    if spec.expect.is_empty() {
        return Err(fail(
            "`expect` sets nothing, so the case could not fail: give a decision, code, route, \
             rule, reason_contains or sandbox"
                .to_owned(),
        ));
    }
    if let Some(mode) = &spec.mode
        && !crate::mode::is_valid_mode_id(mode)
    {
        return Err(fail(format!(
            "`{}` is not a mode (ask, auto, untrusted, full, read-only, custom or profile:<id>)",
            mode.escape_debug()
        )));
    }
    let cwd = match &spec.cwd {
        Some(cwd) => relative_path(cwd).map_err(|why| fail(format!("cwd: {why}")))?,
        None => PathBuf::new(),
    };
    let mut files = Vec::with_capacity(spec.files.len());
    for (name, contents) in spec.files {
        let path = relative_path(&name).map_err(|why| fail(format!("files: {why}")))?;
        if path.as_os_str().is_empty() {
            return Err(fail("files: a file needs a name".to_owned()));
        }
        files.push((path, contents));
    }
    Ok(Case {
        id,
        source,
        line: spec.line,
        cwd,
        shell: spec.shell.unwrap_or(ShellKind::Bash),
        mode: spec.mode,
        files,
        category: spec.category,
        description: spec.description,
        expect: spec.expect,
    })
}

/// A path inside the scratch workspace: relative, no `..`, no NUL.
fn relative_path(text: &str) -> Result<PathBuf, String> {
    let path = Path::new(text);
    if text.contains('\0') {
        return Err(format!(
            "{:?} contains NUL",
            text.escape_debug().to_string()
        ));
    }
    for component in path.components() {
        match component {
            Component::Normal(_) | Component::CurDir => {}
            _ => {
                return Err(format!(
                    "{:?} must stay inside the case's workspace (relative, without `..`)",
                    text.escape_debug().to_string()
                ));
            }
        }
    }
    Ok(path.components().collect())
}

fn usage(reason: String) -> Error {
    Error::new(Code::Usage, reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toml_cases(text: &str) -> Result<Vec<Case>, Error> {
        load_toml(Path::new("cases.toml"), text).map(Option::unwrap_or_default)
    }

    #[test]
    fn a_full_toml_case() {
        let cases = toml_cases(
            r#"
[[case]]
id = "rm-home"
line = "rm -rf ~"
cwd = "src"
shell = "zsh"
mode = "auto"
files = { "src/main.rs" = "fn main() {}" }
category = "destructive"
expect = { decision = "deny", code = "NEVER_POLICY", route = "rule", rule = "builtin.rm-home", reason_contains = "home" }
"#,
        )
        .unwrap();
        let case = &cases[0];
        assert_eq!(case.id, "rm-home");
        assert_eq!(case.source, "cases.toml:2:1");
        assert_eq!(case.cwd, PathBuf::from("src"));
        assert_eq!(case.shell, ShellKind::Zsh);
        assert_eq!(case.files[0].0, PathBuf::from("src/main.rs"));
        assert_eq!(case.expect.decision, Some(ExpectedDecision::Deny));
        assert_eq!(case.expect.code, Some(Code::NeverPolicy));
        assert_eq!(case.expect.route, Some(Route::Rule));
    }

    #[test]
    fn json_lines_with_the_shorthand_expectation() {
        let cases = load_json_lines(
            Path::new("/x/dcg.jsonl"),
            "{\"line\": \"ls\", \"expect\": \"not-denied\", \"category\": \"c\", \"description\": \"d\"}\n\n\
             {\"line\": \"rm -rf /\", \"expect\": {\"decision\": \"deny\"}}\n",
        )
        .unwrap();
        assert_eq!(cases[0].id, "dcg-1");
        assert_eq!(cases[1].id, "dcg-3");
        assert_eq!(cases[0].expect.decision, Some(ExpectedDecision::NotDenied));
    }

    fn error_of(result: Result<Vec<Case>, Error>) -> String {
        match result {
            Err(e) => {
                assert_eq!(e.code, Code::Usage);
                e.reason
            }
            Ok(cases) => panic!("accepted: {cases:?}"),
        }
    }

    #[test]
    fn malformed_toml_names_line_and_column() {
        let text = "[[case]]\nid = \"a\"\nline = \"ls\"\nexpect = { decision = \"maybe\" }\n";
        let e = error_of(toml_cases(text));
        assert!(e.starts_with("cases.toml:4:23: "), "{e}");
        assert!(e.contains("maybe"), "{e}");
        let e = error_of(toml_cases(
            "[[case]]\nid = \"a\"\nline = \"ls\"\nexpct = \"deny\"\n",
        ));
        assert!(e.starts_with("cases.toml:4:1: "), "{e}");
        let e = error_of(toml_cases("[[case]\n"));
        assert!(e.starts_with("cases.toml:1:"), "{e}");
    }

    #[test]
    fn malformed_json_lines_name_line_and_column() {
        let e = error_of(load_json_lines(
            Path::new("c.jsonl"),
            "{\"line\": \"ls\", \"expect\": \"allow\"}\n{\"line\": \"ls\", \"expect\": \"sometimes\"}\n",
        ));
        assert!(e.starts_with("c.jsonl:2:"), "{e}");
        assert!(e.contains("sometimes"), "{e}");
        let e = error_of(load_json_lines(
            Path::new("c.jsonl"),
            "{\"line\": \"ls\",\n",
        ));
        assert!(e.starts_with("c.jsonl:1:"), "{e}");
    }

    #[test]
    fn cases_that_could_not_fail_or_escape_are_refused() {
        let cases = [
            ("id = \"a\"\nline = \"ls\"\nexpect = {}", "could not fail"),
            ("line = \"ls\"\nexpect = \"allow\"", "no `id`"),
            (
                "id = \"a b\"\nline = \"ls\"\nexpect = \"allow\"",
                "an id is",
            ),
            (
                "id = \"a\"\nline = \"ls\"\nmode = \"aut\"\nexpect = \"allow\"",
                "not a mode",
            ),
            (
                "id = \"a\"\nline = \"ls\"\ncwd = \"../x\"\nexpect = \"allow\"",
                "cwd",
            ),
            (
                "id = \"a\"\nline = \"ls\"\ncwd = \"/etc\"\nexpect = \"allow\"",
                "cwd",
            ),
            (
                "id = \"a\"\nline = \"ls\"\nfiles = { \"../../x\" = \"\" }\nexpect = \"allow\"",
                "files",
            ),
        ];
        for (body, want) in cases {
            let e = error_of(toml_cases(&format!("\n[[case]]\n{body}\n")));
            assert!(e.starts_with("cases.toml:2:1: "), "{e}");
            assert!(e.contains(want), "{body}: {e}");
        }
    }

    #[test]
    fn duplicate_ids_name_both_places() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.toml");
        std::fs::write(
            &a,
            "[[case]]\nid = \"x\"\nline = \"ls\"\nexpect = \"allow\"\n",
        )
        .unwrap();
        let b = dir.path().join("b.jsonl");
        std::fs::write(
            &b,
            "{\"id\": \"x\", \"line\": \"ls\", \"expect\": \"allow\"}\n",
        )
        .unwrap();
        let e = load(&[a.clone(), b]).unwrap_err().reason;
        let sessions = dir.path().join("s.toml");
        std::fs::write(&sessions, "[[session]]\nid = \"s\"\n").unwrap();
        let (cases, skipped) = load(&[a.clone(), sessions.clone()]).unwrap();
        assert_eq!((cases.len(), skipped), (1, vec![sessions]));
        assert!(e.contains("b.jsonl:1:1"), "{e}");
        assert!(e.contains(&format!("{}:1:1", a.display())), "{e}");
    }

    #[test]
    fn expectations_admit_what_they_say() {
        use ExpectedDecision::*;
        assert!(NotAllowed.admits(Verdict::Review));
        assert!(NotAllowed.admits(Verdict::Deny));
        assert!(!NotAllowed.admits(Verdict::Allow));
        assert!(NotDenied.admits(Verdict::Ask));
        assert!(!NotDenied.admits(Verdict::Deny));
        assert!(Review.admits(Verdict::Review));
        assert!(!Deny.admits(Verdict::Review));
    }
}
