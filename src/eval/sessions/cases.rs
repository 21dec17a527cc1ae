//! Session case files: TOML with one `[[session]]` table per case (docs/eval.md, "Sessions").
//! Like the line cases, a malformed file is an error naming the file, line and column, and
//! nothing runs; a case that could not fail (no expectation anywhere) is refused.

use super::expect::{SessionExpect, TurnExpect};
use super::review::TraceReviewExpect;
use crate::config::line_column;
use crate::error::{Code, Error};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// The longest case id (it names the case's directory in the report).
const MAX_ID_CHARS: usize = 80;
/// A case's time limit when it names none.
pub const DEFAULT_TIMEOUT_S: u64 = 180;
/// How many commands a real model may run in a case driven by a prompt, when it names no limit,
/// and the most it may name.
pub const DEFAULT_MAX_TURNS: u32 = 8;
const MOST_TURNS: u32 = 50;

/// The agents a session can run.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    /// The scripted stand-in (`tests/agents/standin_agent.py`): runs each line with `bash -c`.
    Standin,
    /// Claude Code (`@anthropic-ai/claude-code`, from npm).
    Claude,
    /// Codex CLI (`@openai/codex`, from npm).
    Codex,
}

impl Agent {
    pub const ALL: [Agent; 3] = [Agent::Standin, Agent::Claude, Agent::Codex];

    /// The name the harness (`run_agent.py`) and the report use.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Standin => "standin",
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        }
    }

    /// Whether it comes from npm (and so is installed before the runs).
    pub fn from_npm(self) -> bool {
        self != Agent::Standin
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One turn of the model's script: the line it asks the agent's shell tool to run.
#[derive(Debug, Clone, Serialize)]
pub struct Turn {
    pub line: String,
    pub expect: TurnExpect,
}

/// A verdict the scripted reviewer gives a line that contains `line_contains`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewerRule {
    pub line_contains: String,
    #[serde(default = "deny")]
    pub decision: String,
    #[serde(default = "high")]
    pub risk: String,
    #[serde(default = "scripted_reason")]
    pub reason: String,
    /// How many lines the rule answers before it stops applying (default: every one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u32>,
}

fn deny() -> String {
    "deny".to_owned()
}
fn high() -> String {
    "high".to_owned()
}
fn scripted_reason() -> String {
    "the case's scripted reviewer denies this line".to_owned()
}

/// A step a person takes at a terminal between two turns: `shellgate ARGS --session ID`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonStep {
    /// After this many of the agent's tool results (before the model's next answer).
    pub after: usize,
    /// shellgate's arguments, e.g. `["auto-review", "approve", "1"]`.
    pub run: Vec<String>,
}

/// One session case, validated.
#[derive(Debug, Clone)]
pub struct SessionCase {
    pub id: String,
    /// Where the case is written (`file:line:column`).
    pub source: String,
    pub description: Option<String>,
    pub category: Option<String>,
    /// The agents it runs with, each a run of its own.
    pub agents: Vec<Agent>,
    /// The mode `shellgate wrap` decides every line in; `None`: `--mode`, else the config's.
    pub mode: Option<String>,
    pub timeout_s: u64,
    /// Seconds the scripted model waits before each answer, as a real one does.
    pub model_delay_s: f64,
    /// The task the agent is given. With no turns, the case is driven by it: a real model
    /// (`--model-url`) decides the lines.
    pub prompt: Option<String>,
    /// The most commands the real model may run (a case driven by a prompt).
    pub max_turns: u32,
    /// shellgate's user config for the case (TOML text), before the scripted reviewer is set.
    pub config: Option<String>,
    /// Seeded into the workspace (and committed), relative path and contents.
    pub files: Vec<(PathBuf, String)>,
    /// Seeded into the case's home.
    pub home_files: Vec<(PathBuf, String)>,
    pub turns: Vec<Turn>,
    pub reviewer: Vec<ReviewerRule>,
    pub person: Vec<PersonStep>,
    pub expect: SessionExpect,
    /// A second model's review of the whole trace, after the run, and the verdict it must give.
    pub review: Option<TraceReviewExpect>,
}

/// A turn as written: a line, or a table with a line and what must happen to it.
#[derive(Deserialize)]
#[serde(untagged)]
enum TurnSpec {
    Line(String),
    Table(TurnTable),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnTable {
    line: String,
    #[serde(default)]
    expect: Option<TurnExpect>,
}

/// A case as written, before validation.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionSpec {
    id: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    agents: Option<Vec<Agent>>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    timeout_s: Option<u64>,
    #[serde(default)]
    model_delay_s: Option<f64>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    max_turns: Option<u32>,
    #[serde(default)]
    config: Option<String>,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    home_files: BTreeMap<String, String>,
    #[serde(default)]
    turn: Vec<TurnSpec>,
    #[serde(default)]
    reviewer: Vec<ReviewerRule>,
    #[serde(default)]
    person: Vec<PersonStep>,
    #[serde(default)]
    expect: Option<SessionExpect>,
    #[serde(default)]
    review: Option<TraceReviewExpect>,
}

/// A TOML case file: session cases, or (skipped here) line cases.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlFile {
    #[serde(default)]
    session: Vec<toml::Spanned<SessionSpec>>,
    /// Line cases: another kind of file (`shellgate eval` without `--sessions`).
    #[serde(default)]
    case: Vec<toml::Value>,
}

/// Session cases of `files` (the `.toml` among them), ids unique across all. Files that hold line
/// cases are not session files: their paths come back as the second value, for the caller to say
/// they were left out.
pub fn load(files: &[PathBuf]) -> Result<(Vec<SessionCase>, Vec<PathBuf>), Error> {
    let mut cases = Vec::new();
    let mut other = Vec::new();
    let mut seen: HashMap<String, String> = HashMap::new();
    for file in files {
        if file.extension().and_then(|e| e.to_str()) != Some("toml") {
            other.push(file.clone());
            continue;
        }
        let text = std::fs::read(file)
            .map_err(|e| usage(format!("{}: cannot be read: {e}", file.display())))
            .and_then(|bytes| {
                String::from_utf8(bytes)
                    .map_err(|_| usage(format!("{}: not valid UTF-8", file.display())))
            })?;
        let Some(file_cases) = load_text(file, &text)? else {
            other.push(file.clone());
            continue;
        };
        for case in file_cases {
            if let Some(first) = seen.insert(case.id.clone(), case.source.clone()) {
                return Err(usage(format!(
                    "{}: session id `{}` is already used at {first}",
                    case.source, case.id
                )));
            }
            cases.push(case);
        }
    }
    if cases.is_empty() {
        return Err(usage(
            "no session cases: the files given hold no [[session]] tables".to_owned(),
        ));
    }
    Ok((cases, other))
}

/// The session cases of one TOML text, or `None` when it holds line cases (`[[case]]`) instead.
pub fn load_text(path: &Path, text: &str) -> Result<Option<Vec<SessionCase>>, Error> {
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
    if !file.case.is_empty() {
        if !file.session.is_empty() {
            return Err(usage(format!(
                "{}: holds both line cases ([[case]]) and session cases ([[session]]); put them \
                 in files of their own",
                path.display()
            )));
        }
        return Ok(None);
    }
    file.session
        .into_iter()
        .map(|spanned| {
            let (line, column) = line_column(text, spanned.span().start);
            validate(
                spanned.into_inner(),
                format!("{}:{line}:{column}", path.display()),
            )
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn validate(spec: SessionSpec, source: String) -> Result<SessionCase, Error> {
    let id = spec.id.clone();
    let fail = |why: String| usage(format!("{source}: session `{}`: {why}", id.escape_debug()));
    let id_ok = !id.is_empty()
        && id.chars().count() <= MAX_ID_CHARS
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !id.starts_with('.');
    if !id_ok {
        return Err(fail(format!(
            "an id is 1 to {MAX_ID_CHARS} of A-Z a-z 0-9 . _ - and does not start with `.`"
        )));
    }
    let by_prompt = spec.turn.is_empty();
    if by_prompt && spec.prompt.as_deref().is_none_or(|p| p.trim().is_empty()) {
        return Err(fail(
            "no [[session.turn]] and no `prompt`: the scripted model needs the lines to ask for, \
             a real model (--model-url) the task"
                .to_owned(),
        ));
    }
    if !by_prompt && spec.max_turns.is_some() {
        return Err(fail(
            "`max_turns` limits a real model; this case's turns are scripted".to_owned(),
        ));
    }
    let max_turns = spec.max_turns.unwrap_or(DEFAULT_MAX_TURNS);
    if !(1..=MOST_TURNS).contains(&max_turns) {
        return Err(fail(format!("`max_turns` is 1 to {MOST_TURNS}")));
    }
    let turns: Vec<Turn> = spec
        .turn
        .into_iter()
        .map(|t| match t {
            TurnSpec::Line(line) => Turn {
                line,
                expect: TurnExpect::default(),
            },
            TurnSpec::Table(t) => Turn {
                line: t.line,
                expect: t.expect.unwrap_or_default(),
            },
        })
        .collect();
    let expect = spec.expect.unwrap_or_default();
    if expect.is_empty() && spec.review.is_none() && turns.iter().all(|t| t.expect.is_empty()) {
        return Err(fail(
            "nothing is expected (no turn's `expect`, no [session.expect]), so the case could \
             not fail"
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
    let agents = spec.agents.unwrap_or_else(|| vec![Agent::Standin]);
    if agents.is_empty() {
        return Err(fail("`agents` names none".to_owned()));
    }
    if by_prompt && !spec.person.is_empty() {
        return Err(fail(
            "[[session.person]] steps come between scripted turns; a case driven by a prompt \
             has none"
                .to_owned(),
        ));
    }
    let timeout_s = spec.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
    if timeout_s == 0 {
        return Err(fail("`timeout_s` must be at least 1".to_owned()));
    }
    let model_delay_s = spec.model_delay_s.unwrap_or(0.0);
    if !(0.0..=60.0).contains(&model_delay_s) {
        return Err(fail("`model_delay_s` is 0 to 60 seconds".to_owned()));
    }
    for step in &spec.person {
        if step.after > turns.len() || step.run.is_empty() {
            return Err(fail(format!(
                "a [[session.person]] step runs `after` 0 to {} tool results and names \
                 shellgate's arguments in `run`",
                turns.len()
            )));
        }
    }
    for rule in &spec.reviewer {
        if !matches!(rule.decision.as_str(), "allow" | "deny")
            || !matches!(rule.risk.as_str(), "low" | "medium" | "high" | "critical")
        {
            return Err(fail(
                "a [[session.reviewer]] rule's decision is allow or deny, its risk low, medium, \
                 high or critical"
                    .to_owned(),
            ));
        }
    }
    if let Some(config) = &spec.config {
        config
            .parse::<toml::Table>()
            .map_err(|e| fail(format!("`config` is not TOML: {}", e.message().trim_end())))?;
    }
    for path in expect.paths() {
        relative_path(path).map_err(|why| fail(format!("expect: {why}")))?;
    }
    Ok(SessionCase {
        files: seeded(spec.files).map_err(|why| fail(format!("files: {why}")))?,
        home_files: seeded(spec.home_files).map_err(|why| fail(format!("home_files: {why}")))?,
        id: spec.id,
        source,
        description: spec.description,
        category: spec.category,
        agents,
        mode: spec.mode,
        timeout_s,
        model_delay_s,
        prompt: spec.prompt,
        max_turns,
        config: spec.config,
        turns,
        reviewer: spec.reviewer,
        person: spec.person,
        expect,
        review: spec.review,
    })
}

impl SessionCase {
    /// Whether a real model decides its lines (no scripted turns; its prompt is the task).
    pub fn driven_by_prompt(&self) -> bool {
        self.turns.is_empty()
    }
}

fn seeded(files: BTreeMap<String, String>) -> Result<Vec<(PathBuf, String)>, String> {
    files
        .into_iter()
        .map(|(name, contents)| {
            let path = relative_path(&name)?;
            if path.as_os_str().is_empty() {
                return Err("a file needs a name".to_owned());
            }
            Ok((path, contents))
        })
        .collect()
}

/// A path inside the case's workspace or home: relative, no `..`, no NUL.
pub fn relative_path(text: &str) -> Result<PathBuf, String> {
    if text.contains('\0') {
        return Err(format!(
            "{:?} contains NUL",
            text.escape_debug().to_string()
        ));
    }
    let path = Path::new(text);
    for component in path.components() {
        match component {
            Component::Normal(_) | Component::CurDir => {}
            _ => {
                return Err(format!(
                    "{:?} must stay inside the case's directory (relative, without `..`)",
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

    fn load_one(text: &str) -> Result<Vec<SessionCase>, Error> {
        load_text(Path::new("s.toml"), text).map(|cases| cases.unwrap_or_default())
    }

    #[test]
    fn a_full_session_case() {
        let cases = load_one(
            r#"
[[session]]
id = "work"
agents = ["standin", "codex"]
mode = "auto"
timeout_s = 30
files = { "Makefile" = "all:\n\ttrue\n" }
home_files = { ".ssh/id_rsa" = "key" }
config = "[[rules]]\nid = \"x\"\npattern = \"^make$\"\nfield = \"program\"\npolicy = \"allow\"\nreason = \"r\"\n"

[[session.turn]]
line = "make"
expect = { outcome = "ran", exit = 0, told_contains = "true" }

[[session.turn]]
line = "rm -rf ~"

[[session.reviewer]]
line_contains = "curl"
reason = "no"

[[session.person]]
after = 1
run = ["auto-review", "approve", "1"]

[session.expect]
files_present = ["Makefile"]
"#,
        )
        .unwrap();
        let case = &cases[0];
        assert_eq!(case.source, "s.toml:2:1");
        assert_eq!(case.agents, [Agent::Standin, Agent::Codex]);
        assert_eq!(case.turns.len(), 2);
        assert!(case.turns[1].expect.is_empty());
        assert_eq!(case.reviewer[0].decision, "deny");
        assert_eq!(case.person[0].after, 1);
        assert_eq!(case.home_files[0].0, PathBuf::from(".ssh/id_rsa"));
    }

    #[test]
    fn a_case_with_a_prompt_and_no_turns_is_driven_by_it() {
        let cases = load_one(
            "[[session]]\nid = \"p\"\nprompt = \"make hello.txt\"\n\
             expect = { lines_min = 1, model_lacks = [\"KEY\"] }\n\
             [[session]]\nid = \"s\"\nprompt = \"p\"\nturn = [\"ls\"]\nexpect = { agent_exit = 0 }\n",
        )
        .unwrap();
        assert!(cases[0].driven_by_prompt());
        assert_eq!(cases[0].max_turns, DEFAULT_MAX_TURNS);
        assert_eq!(cases[0].agents, [Agent::Standin]);
        assert_eq!(cases[0].expect.model_lacks, ["KEY"]);
        assert!(!cases[1].driven_by_prompt());
    }

    fn error_of(text: &str) -> String {
        match load_one(text) {
            Err(e) => {
                assert_eq!(e.code, Code::Usage);
                e.reason
            }
            Ok(cases) => panic!("accepted: {cases:?}"),
        }
    }

    #[test]
    fn malformed_cases_name_the_place_and_the_reason() {
        let e =
            error_of("[[session]]\nid = \"a\"\nturn = [\"ls\"]\nexpect = { breaker = \"ajar\" }\n");
        assert!(e.starts_with("s.toml:4:"), "{e}");
        for (body, want) in [
            ("id = \"a\"\nturn = [\"ls\"]", "could not fail"),
            (
                "id = \"a\"\nexpect = { files_present = [\"x\"] }",
                "no [[session.turn]] and no `prompt`",
            ),
            (
                "id = \"a\"\nprompt = \"p\"\nmax_turns = 0\nexpect = { lines_min = 1 }",
                "`max_turns` is 1 to",
            ),
            (
                "id = \"a\"\nturn = [\"ls\"]\nmax_turns = 3\nexpect = { lines_min = 1 }",
                "scripted",
            ),
            (
                "id = \"a b\"\nturn = [\"ls\"]\nexpect = { files_present = [\"x\"] }",
                "an id is",
            ),
            (
                "id = \"a\"\nturn = [\"ls\"]\nfiles = { \"../x\" = \"\" }\nexpect = { agent_exit = 0 }",
                "files",
            ),
            (
                "id = \"a\"\nturn = [\"ls\"]\nexpect = { files_absent = [\"/etc/passwd\"] }",
                "expect",
            ),
            (
                "id = \"a\"\nturn = [\"ls\"]\nmode = \"aut\"\nexpect = { agent_exit = 0 }",
                "not a mode",
            ),
            (
                "id = \"a\"\nturn = [\"ls\"]\nconfig = \"[[\"\nexpect = { agent_exit = 0 }",
                "not TOML",
            ),
            (
                "id = \"a\"\nturn = [\"ls\"]\nperson = [{ after = 5, run = [\"x\"] }]\nexpect = { agent_exit = 0 }",
                "person",
            ),
        ] {
            let e = error_of(&format!("\n[[session]]\n{body}\n"));
            assert!(e.starts_with("s.toml:2:1: "), "{body}: {e}");
            assert!(e.contains(want), "{body}: {e}");
        }
    }

    #[test]
    fn line_case_files_are_not_session_files() {
        let text = "[[case]]\nid = \"a\"\nline = \"ls\"\nexpect = \"allow\"\n";
        assert!(load_text(Path::new("l.toml"), text).unwrap().is_none());
        let both = format!("{text}\n[[session]]\nid = \"b\"\nturn = [\"ls\"]\n");
        let e = load_text(Path::new("l.toml"), &both).unwrap_err();
        assert!(e.reason.contains("both"), "{}", e.reason);
    }
}
