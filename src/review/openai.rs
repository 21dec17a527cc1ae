//! OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`): OpenAI, DeepSeek,
//! Ollama, vLLM, llama.cpp's server, LM Studio, OpenRouter.
//!
//! Two ways to get a structured answer, chosen by `structured_output`:
//! - `json-schema` (default): `response_format` with the strict answer schema. The answer text is a
//!   verdict or an embedded tool request. Servers that enforce the schema by grammar (llama.cpp,
//!   vLLM) always produce parseable JSON, with or without native tool support.
//! - `tool-call`: native tools (`submit_verdict`, `read_file`, `glob`, `grep`) with
//!   `tool_choice: "required"`, and `submit_verdict` forced on the last round, for servers that
//!   support tools but not `response_format`.
//!
//! Native `tool_calls` in a response are honoured in both modes.

use super::failure::{FailureKind, ReviewFailure};
use super::verdict::{
    SUBMIT_VERDICT, ToolName, answer_schema, tool_arguments_schema, verdict_schema,
};
use super::{Reply, ToolCall};
use crate::config::{ReviewerConfig, StructuredOutput};
use serde_json::{Map, Value, json};

/// One review's conversation in Chat Completions form.
pub struct Dialogue {
    model: String,
    max_tokens: u32,
    output: StructuredOutput,
    messages: Vec<Value>,
    /// The assistant message of the last reply, replayed before its tool results.
    last_assistant: Option<Value>,
}

impl Dialogue {
    pub fn new(config: &ReviewerConfig, system: String, user: String) -> Dialogue {
        Dialogue {
            model: config.model.clone(),
            max_tokens: config.max_tokens,
            output: config.structured_output,
            messages: vec![
                json!({"role": "system", "content": system}),
                json!({"role": "user", "content": user}),
            ],
            last_assistant: None,
        }
    }

    /// The request body; `tools_allowed` is false on the last round.
    pub fn body(&self, tools_allowed: bool) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": self.messages,
            "max_tokens": self.max_tokens,
            "temperature": 0,
            "stream": false,
        });
        match self.output {
            StructuredOutput::JsonSchema => {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": {
                        "name": "shellgate_review",
                        "strict": true,
                        "schema": answer_schema(tools_allowed),
                    }
                });
            }
            StructuredOutput::ToolCall => {
                body["tools"] = native_tools();
                body["tool_choice"] = if tools_allowed {
                    json!("required")
                } else {
                    json!({"type": "function", "function": {"name": SUBMIT_VERDICT}})
                };
            }
        }
        body
    }

    /// Reads a successful response body into a reply, remembering the assistant turn.
    pub fn read(&mut self, body: &[u8]) -> Result<Reply, ReviewFailure> {
        let response: Value = serde_json::from_slice(body).map_err(|err| {
            ReviewFailure::new(
                FailureKind::Unparseable,
                format!("the response is not JSON: {err}"),
            )
        })?;
        if let Some(message) = error_message(&response) {
            return Err(ReviewFailure::new(
                FailureKind::Empty,
                "the response carries an error instead of an answer",
            )
            .with_provider_message(&message));
        }
        let choice = response["choices"]
            .as_array()
            .and_then(|choices| choices.first())
            .ok_or_else(|| ReviewFailure::new(FailureKind::Empty, "the response has no choices"))?;
        let message = &choice["message"];
        if let Some(refusal) = message["refusal"].as_str().filter(|r| !r.trim().is_empty()) {
            return Err(ReviewFailure::refusal(refusal));
        }
        check_finish(choice["finish_reason"].as_str(), self.max_tokens)?;
        let reply = match message["tool_calls"]
            .as_array()
            .filter(|calls| !calls.is_empty())
        {
            Some(calls) => native_reply(calls)?,
            None => Reply::from_answer_text(&content_text(&message["content"]))?,
        };
        self.last_assistant = Some(assistant_replay(message));
        Ok(reply)
    }

    /// Adds the assistant turn and the results of its tool calls.
    pub fn add_results(&mut self, results: &[(ToolCall, String)]) {
        if let Some(assistant) = self.last_assistant.take() {
            self.messages.push(assistant);
        }
        let native = results.iter().all(|(call, _)| call.id.is_some());
        if native {
            for (call, result) in results {
                self.messages.push(json!({
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": super::prompt::tool_result_block(&call.request.describe(), result),
                }));
            }
        } else {
            self.messages.push(json!({
                "role": "user",
                "content": super::prompt::tool_results_message(results),
            }));
        }
    }
}

/// `submit_verdict` plus the three read-only tools, as Chat Completions function tools.
fn native_tools() -> Value {
    let mut tools = vec![json!({
        "type": "function",
        "function": {
            "name": SUBMIT_VERDICT,
            "description": "Give the final verdict on the command line.",
            "parameters": verdict_schema(),
            "strict": true,
        }
    })];
    for tool in ToolName::ALL {
        tools.push(json!({
            "type": "function",
            "function": {
                "name": tool.as_str(),
                "description": tool.description(),
                "parameters": tool_arguments_schema(tool),
                "strict": true,
            }
        }));
    }
    Value::Array(tools)
}

/// `finish_reason` must say the answer is complete.
fn check_finish(finish: Option<&str>, max_tokens: u32) -> Result<(), ReviewFailure> {
    match finish {
        Some("stop" | "tool_calls") => Ok(()),
        Some("length") => Err(ReviewFailure::finish(
            "length",
            &format!("the answer was cut off at max_tokens ({max_tokens})"),
        )),
        Some("content_filter") => Err(ReviewFailure::finish(
            "content_filter",
            "the provider's content filter stopped the answer",
        )),
        Some(other) => Err(ReviewFailure::finish(other, "not a completed answer")),
        None => Err(ReviewFailure::new(
            FailureKind::FinishReason,
            "the response has no finish_reason, so the answer may be incomplete",
        )),
    }
}

/// The message text: a string, or the text parts of a content array.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| part["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Native tool calls: `function.name`, `id`, and `function.arguments` (a JSON string or object).
fn native_reply(calls: &[Value]) -> Result<Reply, ReviewFailure> {
    Reply::from_native_calls(calls.iter().map(|call| {
        let name = call["function"]["name"].as_str().unwrap_or_default();
        let id = call["id"].as_str().unwrap_or("call").to_owned();
        Ok((name, id, arguments_object(&call["function"]["arguments"])?))
    }))
}

/// Tool arguments arrive as a JSON string (OpenAI) or an object (some compatible servers).
fn arguments_object(arguments: &Value) -> Result<Map<String, Value>, ReviewFailure> {
    let value = match arguments {
        Value::String(text) => serde_json::from_str::<Value>(text).map_err(|err| {
            ReviewFailure::new(
                FailureKind::Unparseable,
                format!("tool call arguments are not JSON: {err}"),
            )
        })?,
        other => other.clone(),
    };
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ReviewFailure::new(
            FailureKind::Schema,
            "tool call arguments are not an object",
        )),
    }
}

/// The assistant message as it is sent back: only the fields the API accepts.
fn assistant_replay(message: &Value) -> Value {
    let mut replay = json!({"role": "assistant", "content": message["content"].clone()});
    if let Some(calls) = message["tool_calls"].as_array().filter(|c| !c.is_empty()) {
        let calls: Vec<Value> = calls
            .iter()
            .map(|call| {
                json!({
                    "id": call["id"],
                    "type": "function",
                    "function": {
                        "name": call["function"]["name"],
                        "arguments": match &call["function"]["arguments"] {
                            Value::String(text) => Value::String(text.clone()),
                            other => Value::String(other.to_string()),
                        },
                    }
                })
            })
            .collect();
        replay["tool_calls"] = Value::Array(calls);
    }
    replay
}

/// The provider's message in an error body: `{"error": {"message", "type", "code"}}` (OpenAI and
/// most compatible servers) or `{"error": "text"}`.
pub fn error_message(body: &Value) -> Option<String> {
    let error = body.get("error")?;
    if let Some(text) = error.as_str() {
        return Some(text.to_owned());
    }
    let message = error["message"].as_str().unwrap_or_default();
    let kind = error["type"]
        .as_str()
        .or_else(|| error["code"].as_str())
        .unwrap_or_default();
    match (kind.is_empty(), message.is_empty()) {
        (true, true) => Some(error.to_string()),
        (true, false) => Some(message.to_owned()),
        (false, true) => Some(kind.to_owned()),
        (false, false) => Some(format!("{kind}: {message}")),
    }
}
