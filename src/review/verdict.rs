//! The reviewer's answer: one schema, two shapes.
//!
//! Every answer is either the final **verdict** `{decision, riskLevel, reason}` or a **read-only tool
//! request** `{tool, path, pattern}`. Both are validated strictly: unknown fields, missing fields,
//! values outside their enums, an empty reason or an oversized field make the answer invalid, and an
//! invalid answer is a review failure (never a denial).
//!
//! Servers that enforce a JSON schema by grammar (llama.cpp, vLLM, OpenAI's `strict` mode) receive
//! [`answer_schema`]: an object with one property, `answer`, whose value is one of the two shapes.
//! The wrapper exists because OpenAI's strict mode refuses an `anyOf` at the root. The parser accepts
//! the wrapped and the bare shapes (a native tool call's arguments are bare).
//!
//! **Prose around the JSON** is accepted the way Codex accepts it: when the whole text is not JSON,
//! the slice from the first `{` to the last `}` is tried. Models wrap JSON in a sentence or a
//! Markdown fence often enough that refusing it would turn good verdicts into failures; the slice
//! must still pass the same strict validation, so prose can never change what the verdict says.

use crate::config::RiskLevel;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The longest reason accepted, in characters. A longer one is not a verdict we can show anyone.
pub const MAX_REASON_CHARS: usize = 4_000;
/// The longest path or pattern a tool request may carry.
pub const MAX_TOOL_ARG_CHARS: usize = 1_000;

/// Allow or deny, as the reviewer said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VerdictDecision {
    Allow,
    Deny,
}

/// The reviewer's final judgment of one line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub decision: VerdictDecision,
    pub risk_level: RiskLevel,
    pub reason: String,
    /// What the reviewer lets the line have (network, extra writable directories), when it says:
    /// held to what was asked for ([`Verdict::granted`]); absent means what was asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<crate::policy::grant::Needs>,
}

impl Verdict {
    /// The grant the line runs with: the one asked for, narrowed by the reviewer's own when it
    /// gave one (never widened: what the reviewer names beyond what was asked is dropped).
    pub fn granted(&self, asked: &crate::policy::grant::Grant) -> crate::policy::grant::Grant {
        match &self.grant {
            None => asked.clone(),
            Some(needs) => crate::policy::grant::Grant {
                sandbox: asked.sandbox,
                network: needs.network.clone(),
                listen: needs.listen.clone(),
                writable: needs.writable.clone(),
                env: needs.env.clone(),
                sockets: needs.sockets.clone(),
            }
            .narrowed_to(asked),
        }
    }
}

/// The read-only tools the reviewer may ask shellgate to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolName {
    ReadFile,
    Glob,
    Grep,
}

impl ToolName {
    pub const ALL: [ToolName; 3] = [ToolName::ReadFile, ToolName::Glob, ToolName::Grep];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolName::ReadFile => "read_file",
            ToolName::Glob => "glob",
            ToolName::Grep => "grep",
        }
    }

    pub fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|tool| tool.as_str() == name)
    }

    /// What the tool does, for the model.
    pub fn description(self) -> &'static str {
        match self {
            ToolName::ReadFile => {
                "Read a text file of the workspace (path relative to the workspace root). \
                 Returns at most 16 KiB."
            }
            ToolName::Glob => {
                "List workspace paths matching a glob (`*` within a name, `**` across \
                 directories, `?` one character). Returns at most 200 paths."
            }
            ToolName::Grep => {
                "Search workspace files under `path` (default: the root) for a regular \
                 expression. Returns at most 100 matching lines."
            }
        }
    }
}

/// One read-only tool request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolRequest {
    pub tool: ToolName,
    /// A path relative to the workspace (read_file, grep); empty for glob.
    pub path: String,
    /// The glob or regular expression (glob, grep); empty for read_file.
    pub pattern: String,
}

impl ToolRequest {
    /// `read_file src/main.rs`, `grep "rm -rf" in src`: how the request is named in results.
    pub fn describe(&self) -> String {
        match self.tool {
            ToolName::ReadFile => format!("read_file {}", self.path),
            ToolName::Glob => format!("glob {}", self.pattern),
            ToolName::Grep if self.path.is_empty() => format!("grep {:?}", self.pattern),
            ToolName::Grep => format!("grep {:?} in {}", self.pattern, self.path),
        }
    }
}

/// One parsed answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Verdict(Verdict),
    Tool(ToolRequest),
}

/// Why an answer is not valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerError {
    /// No answer text at all.
    Empty,
    /// Not JSON, even after taking the `{…}` slice.
    Unparseable(String),
    /// JSON, but not one of the two shapes.
    Schema(String),
}

/// Parses answer text: strict JSON, else the `{…}` slice (see the module doc).
pub fn parse_answer_text(text: &str) -> Result<Answer, AnswerError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(AnswerError::Empty);
    }
    let value = match serde_json::from_str::<Value>(trimmed) {
        Ok(value) => value,
        Err(whole) => json_slice(trimmed)
            .and_then(|slice| serde_json::from_str::<Value>(slice).ok())
            .ok_or_else(|| AnswerError::Unparseable(format!("not JSON: {whole}")))?,
    };
    parse_answer_value(&value)
}

/// The text from the first `{` to the last `}`, if there is one.
fn json_slice(text: &str) -> Option<&str> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    (end > start).then(|| &text[start..=end])
}

/// Validates a JSON answer: `{"answer": shape}` or a bare shape.
pub fn parse_answer_value(value: &Value) -> Result<Answer, AnswerError> {
    let object = as_object(value, "the answer")?;
    if let Some(inner) = object.get("answer") {
        if object.len() != 1 {
            return Err(schema("`answer` must be the only field of the wrapper"));
        }
        return parse_shape(as_object(inner, "`answer`")?);
    }
    parse_shape(object)
}

fn parse_shape(object: &Map<String, Value>) -> Result<Answer, AnswerError> {
    if object.contains_key("decision") {
        return parse_verdict(object).map(Answer::Verdict);
    }
    if object.contains_key("tool") {
        return parse_tool_request(object).map(Answer::Tool);
    }
    Err(schema(&format!(
        "neither a verdict (`decision`, `riskLevel`, `reason`) nor a tool request (`tool`); \
         fields: {}",
        field_list(object)
    )))
}

/// Validates a bare verdict object (also a native `submit_verdict` call's arguments).
pub fn parse_verdict(object: &Map<String, Value>) -> Result<Verdict, AnswerError> {
    only_fields(object, &["decision", "riskLevel", "reason", "grant"])?;
    let decision = match required_str(object, "decision")? {
        "allow" => VerdictDecision::Allow,
        "deny" => VerdictDecision::Deny,
        other => {
            return Err(schema(&format!(
                "`decision` must be \"allow\" or \"deny\", not {other:?}"
            )));
        }
    };
    let risk = required_str(object, "riskLevel")?;
    let Some(risk_level) = RiskLevel::ALL.into_iter().find(|r| r.as_str() == risk) else {
        return Err(schema(&format!(
            "`riskLevel` must be low, medium, high or critical, not {risk:?}"
        )));
    };
    let reason = required_str(object, "reason")?.trim();
    if reason.is_empty() {
        return Err(schema("`reason` is empty"));
    }
    if reason.chars().count() > MAX_REASON_CHARS {
        return Err(schema(&format!(
            "`reason` is longer than {MAX_REASON_CHARS} characters"
        )));
    }
    let grant = match object.get("grant") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            serde_json::from_value::<crate::policy::grant::Needs>(value.clone()).map_err(|e| {
                schema(&format!(
                    "`grant` must be {{\"network\": \"off\", \"on\" or [ports and \"host:port\"], \"writable\": [dirs]}}: {e}"
                ))
            })?,
        ),
    };
    Ok(Verdict {
        decision,
        risk_level,
        reason: reason.to_owned(),
        grant,
    })
}

/// Validates an embedded tool request `{tool, path, pattern}`.
fn parse_tool_request(object: &Map<String, Value>) -> Result<ToolRequest, AnswerError> {
    only_fields(object, &["tool", "path", "pattern"])?;
    let name = required_str(object, "tool")?;
    let tool = ToolName::parse(name).ok_or_else(|| {
        schema(&format!(
            "`tool` must be read_file, glob or grep, not {name:?}"
        ))
    })?;
    tool_request(tool, object)
}

/// Validates a native tool call's arguments for `tool` (the same fields minus `tool`).
pub fn parse_tool_arguments(
    tool: ToolName,
    object: &Map<String, Value>,
) -> Result<ToolRequest, AnswerError> {
    only_fields(object, &["path", "pattern"])?;
    tool_request(tool, object)
}

fn tool_request(tool: ToolName, object: &Map<String, Value>) -> Result<ToolRequest, AnswerError> {
    let path = optional_str(object, "path")?;
    let pattern = optional_str(object, "pattern")?;
    for (name, value) in [("path", path), ("pattern", pattern)] {
        if value.chars().count() > MAX_TOOL_ARG_CHARS {
            return Err(schema(&format!(
                "`{name}` is longer than {MAX_TOOL_ARG_CHARS} characters"
            )));
        }
    }
    let missing = match tool {
        ToolName::ReadFile if path.trim().is_empty() => Some("path"),
        ToolName::Glob | ToolName::Grep if pattern.is_empty() => Some("pattern"),
        _ => None,
    };
    if let Some(field) = missing {
        return Err(schema(&format!(
            "{} needs a non-empty `{field}`",
            tool.as_str()
        )));
    }
    Ok(ToolRequest {
        tool,
        path: path.to_owned(),
        pattern: pattern.to_owned(),
    })
}

fn as_object<'v>(value: &'v Value, what: &str) -> Result<&'v Map<String, Value>, AnswerError> {
    value
        .as_object()
        .ok_or_else(|| schema(&format!("{what} is {} instead of an object", kind(value))))
}

fn only_fields(object: &Map<String, Value>, allowed: &[&str]) -> Result<(), AnswerError> {
    match object.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(extra) => Err(schema(&format!(
            "unknown field {extra:?} (allowed: {})",
            allowed.join(", ")
        ))),
        None => Ok(()),
    }
}

fn required_str<'v>(object: &'v Map<String, Value>, field: &str) -> Result<&'v str, AnswerError> {
    match object.get(field) {
        None => Err(schema(&format!("missing field `{field}`"))),
        Some(Value::String(text)) => Ok(text),
        Some(other) => Err(schema(&format!(
            "`{field}` is {} instead of a string",
            kind(other)
        ))),
    }
}

fn optional_str<'v>(object: &'v Map<String, Value>, field: &str) -> Result<&'v str, AnswerError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(""),
        Some(_) => required_str(object, field),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn field_list(object: &Map<String, Value>) -> String {
    if object.is_empty() {
        return "none".to_owned();
    }
    object.keys().cloned().collect::<Vec<_>>().join(", ")
}

fn schema(message: &str) -> AnswerError {
    AnswerError::Schema(message.to_owned())
}

/// The verdict shape as a JSON schema (strict: every field required, nothing else allowed).
pub fn verdict_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "decision": {"type": "string", "enum": ["allow", "deny"]},
            "riskLevel": {"type": "string", "enum": ["low", "medium", "high", "critical"]},
            "reason": {"type": "string"}
        },
        "required": ["decision", "riskLevel", "reason"],
        "additionalProperties": false
    })
}

/// The embedded tool-request shape as a JSON schema.
pub fn tool_request_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tool": {"type": "string", "enum": ["read_file", "glob", "grep"]},
            "path": {"type": "string"},
            "pattern": {"type": "string"}
        },
        "required": ["tool", "path", "pattern"],
        "additionalProperties": false
    })
}

/// The schema sent as `response_format`: `{answer: verdict | tool request}`, or only the verdict
/// once no tool round is left.
pub fn answer_schema(tools_allowed: bool) -> Value {
    let answer = if tools_allowed {
        json!({"anyOf": [verdict_schema(), tool_request_schema()]})
    } else {
        verdict_schema()
    };
    json!({
        "type": "object",
        "properties": {"answer": answer},
        "required": ["answer"],
        "additionalProperties": false
    })
}

/// The arguments schema of a native tool (`read_file`, `glob`, `grep`).
pub fn tool_arguments_schema(tool: ToolName) -> Value {
    match tool {
        ToolName::ReadFile => json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": false
        }),
        ToolName::Glob => json!({
            "type": "object",
            "properties": {"pattern": {"type": "string"}},
            "required": ["pattern"],
            "additionalProperties": false
        }),
        ToolName::Grep => json!({
            "type": "object",
            "properties": {"pattern": {"type": "string"}, "path": {"type": "string"}},
            "required": ["pattern", "path"],
            "additionalProperties": false
        }),
    }
}

/// The name of the native tool that carries the verdict.
pub const SUBMIT_VERDICT: &str = "submit_verdict";

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(text: &str) -> Verdict {
        match parse_answer_text(text) {
            Ok(Answer::Verdict(verdict)) => verdict,
            other => panic!("{text}: {other:?}"),
        }
    }

    fn schema_error(text: &str) -> String {
        match parse_answer_text(text) {
            Err(AnswerError::Schema(message)) => message,
            other => panic!("{text}: expected a schema error, got {other:?}"),
        }
    }

    #[test]
    fn bare_and_wrapped_verdicts() {
        let bare = r#"{"decision":"deny","riskLevel":"high","reason":"deletes the repo"}"#;
        let v = verdict(bare);
        assert_eq!(v.decision, VerdictDecision::Deny);
        assert_eq!(v.risk_level, RiskLevel::High);
        assert_eq!(v.reason, "deletes the repo");
        assert_eq!(verdict(&format!(r#"{{"answer": {bare}}}"#)), v);
        for level in ["low", "medium", "high", "critical"] {
            let text = format!(r#"{{"decision":"allow","riskLevel":"{level}","reason":"r"}}"#);
            assert_eq!(verdict(&text).risk_level.as_str(), level);
        }
    }

    #[test]
    fn prose_around_json_is_sliced_and_still_strict() {
        let v = verdict(
            "Sure! Here is my verdict:\n```json\n{\"decision\":\"allow\",\"riskLevel\":\"low\",\"reason\":\"read-only\"}\n```\nThanks.",
        );
        assert_eq!(v.decision, VerdictDecision::Allow);
        // The slice passes the same validation: prose cannot smuggle in a bad verdict.
        schema_error("ok {\"decision\":\"yes\",\"riskLevel\":\"low\",\"reason\":\"x\"} done");
    }

    #[test]
    fn invalid_answers_are_classified() {
        assert_eq!(parse_answer_text("  \n"), Err(AnswerError::Empty));
        assert!(matches!(
            parse_answer_text("I think this is fine."),
            Err(AnswerError::Unparseable(_))
        ));
        assert!(matches!(
            parse_answer_text("{\"decision\": \"allow\""),
            Err(AnswerError::Unparseable(_))
        ));
        assert!(
            schema_error(r#"{"decision":"allow","reason":"x"}"#)
                .contains("missing field `riskLevel`")
        );
        assert!(schema_error(r#"{"decision":"allow","riskLevel":"low"}"#).contains("`reason`"));
        assert!(
            schema_error(r#"{"decision":"allow","riskLevel":"low","reason":"  "}"#)
                .contains("empty")
        );
        assert!(
            schema_error(r#"{"decision":"allow","riskLevel":"severe","reason":"x"}"#)
                .contains("severe")
        );
        assert!(
            schema_error(r#"{"decision":"maybe","riskLevel":"low","reason":"x"}"#)
                .contains("maybe")
        );
        assert!(
            schema_error(r#"{"decision":"allow","riskLevel":"low","reason":"x","extra":1}"#)
                .contains("extra")
        );
        assert!(
            schema_error(r#"{"decision":true,"riskLevel":"low","reason":"x"}"#).contains("boolean")
        );
        assert!(schema_error(r#"{"city":"San Francisco"}"#).contains("city"));
        assert!(schema_error("[1,2]").contains("array"));
        assert!(
            schema_error(r#"{"answer":{"decision":"allow","riskLevel":"low","reason":"x"},"x":1}"#)
                .contains("only field")
        );
        let long = "x".repeat(MAX_REASON_CHARS + 1);
        schema_error(&format!(
            r#"{{"decision":"allow","riskLevel":"low","reason":"{long}"}}"#
        ));
    }

    #[test]
    fn tool_requests() {
        let request = |text: &str| match parse_answer_text(text) {
            Ok(Answer::Tool(request)) => request,
            other => panic!("{text}: {other:?}"),
        };
        let read = request(r#"{"answer":{"tool":"read_file","path":"src/main.rs","pattern":""}}"#);
        assert_eq!(
            (read.tool, read.path.as_str()),
            (ToolName::ReadFile, "src/main.rs")
        );
        let grep = request(r#"{"tool":"grep","path":"","pattern":"rm -rf"}"#);
        assert_eq!(grep.tool, ToolName::Grep);
        assert!(
            schema_error(r#"{"tool":"write_file","path":"x","pattern":""}"#).contains("write_file")
        );
        assert!(schema_error(r#"{"tool":"read_file","path":"","pattern":""}"#).contains("path"));
        assert!(schema_error(r#"{"tool":"glob","path":"","pattern":""}"#).contains("pattern"));
        let args = serde_json::json!({"pattern": "**/*.rs"});
        let glob = parse_tool_arguments(ToolName::Glob, args.as_object().unwrap()).unwrap();
        assert_eq!(glob.pattern, "**/*.rs");
    }

    #[test]
    fn schemas_are_strict_objects() {
        for schema in [verdict_schema(), tool_request_schema(), answer_schema(true)] {
            assert_eq!(schema["type"], "object");
            assert_eq!(schema["additionalProperties"], false);
        }
        assert!(answer_schema(false)["properties"]["answer"]["anyOf"].is_null());
    }
}
