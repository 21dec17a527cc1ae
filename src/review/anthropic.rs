//! The Anthropic Messages API (`POST {base_url}/messages`).
//!
//! The verdict is a `tool_use` block of the `submit_verdict` tool; `read_file`, `glob` and `grep`
//! are native tools. `tool_choice` is `any` (some tool must be used) and `submit_verdict` on the
//! last round. A server that ignores `tool_choice` and answers in text (llama.cpp's `/v1/messages`
//! with a small model) is read like an embedded answer: the text must still be a strict verdict or
//! tool request, else the review fails.

use super::failure::{FailureKind, ReviewFailure};
use super::verdict::{SUBMIT_VERDICT, ToolName, tool_arguments_schema, verdict_schema};
use super::{Reply, ToolCall};
use crate::config::ReviewerConfig;
use serde_json::{Value, json};

/// The API version sent in `anthropic-version`.
pub const API_VERSION: &str = "2023-06-01";

/// One review's conversation in Messages form.
pub struct Dialogue {
    model: String,
    max_tokens: u32,
    system: String,
    messages: Vec<Value>,
    last_assistant: Option<Value>,
}

impl Dialogue {
    pub fn new(config: &ReviewerConfig, system: String, user: String) -> Dialogue {
        Dialogue {
            model: config.model.clone(),
            max_tokens: config.max_tokens,
            system,
            messages: vec![json!({"role": "user", "content": user})],
            last_assistant: None,
        }
    }

    pub fn body(&self, tools_allowed: bool) -> Value {
        // Every tool stays declared on the last round (earlier turns refer to them); only the
        // choice is narrowed to the verdict.
        let tool_choice = if tools_allowed {
            json!({"type": "any"})
        } else {
            json!({"type": "tool", "name": SUBMIT_VERDICT})
        };
        json!({
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": self.system,
            "messages": self.messages,
            "tools": native_tools(),
            "tool_choice": tool_choice,
            "temperature": 0,
        })
    }

    pub fn read(&mut self, body: &[u8]) -> Result<Reply, ReviewFailure> {
        let response: Value = serde_json::from_slice(body).map_err(|err| {
            ReviewFailure::new(
                FailureKind::Unparseable,
                format!("the response is not JSON: {err}"),
            )
        })?;
        if response["type"] == "error" {
            let message = error_message(&response).unwrap_or_default();
            return Err(ReviewFailure::new(
                FailureKind::Empty,
                "the response carries an error instead of an answer",
            )
            .with_provider_message(&message));
        }
        let blocks = response["content"].as_array().cloned().unwrap_or_default();
        let text = text_of(&blocks);
        check_stop(response["stop_reason"].as_str(), self.max_tokens, &text)?;
        let calls: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "tool_use").collect();
        let reply = if calls.is_empty() {
            Reply::from_answer_text(&text)?
        } else {
            native_reply(&calls)?
        };
        self.last_assistant = Some(json!({"role": "assistant", "content": replay_blocks(&blocks)}));
        Ok(reply)
    }

    pub fn add_results(&mut self, results: &[(ToolCall, String)]) {
        if let Some(assistant) = self.last_assistant.take() {
            self.messages.push(assistant);
        }
        let native = results.iter().all(|(call, _)| call.id.is_some());
        if native {
            let blocks: Vec<Value> = results
                .iter()
                .map(|(call, result)| {
                    json!({
                        "type": "tool_result",
                        "tool_use_id": call.id,
                        "content": super::prompt::tool_result_block(&call.request.describe(), result),
                    })
                })
                .collect();
            self.messages
                .push(json!({"role": "user", "content": blocks}));
        } else {
            self.messages.push(json!({
                "role": "user",
                "content": super::prompt::tool_results_message(results),
            }));
        }
    }
}

fn native_tools() -> Value {
    let mut tools = vec![json!({
        "name": SUBMIT_VERDICT,
        "description": "Give the final verdict on the command line.",
        "input_schema": verdict_schema(),
    })];
    for tool in ToolName::ALL {
        tools.push(json!({
            "name": tool.as_str(),
            "description": tool.description(),
            "input_schema": tool_arguments_schema(tool),
        }));
    }
    Value::Array(tools)
}

/// `stop_reason` must say the answer is complete.
fn check_stop(stop: Option<&str>, max_tokens: u32, text: &str) -> Result<(), ReviewFailure> {
    match stop {
        Some("tool_use" | "end_turn") => Ok(()),
        Some("max_tokens") => Err(ReviewFailure::finish(
            "max_tokens",
            &format!("the answer was cut off at max_tokens ({max_tokens})"),
        )),
        Some("refusal") => Err(ReviewFailure::refusal(if text.trim().is_empty() {
            "refusal"
        } else {
            text
        })),
        Some(other) => Err(ReviewFailure::finish(other, "not a completed answer")),
        None => Err(ReviewFailure::new(
            FailureKind::FinishReason,
            "the response has no stop_reason, so the answer may be incomplete",
        )),
    }
}

fn text_of(blocks: &[Value]) -> String {
    blocks
        .iter()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("")
}

/// `tool_use` blocks: `name`, `id` and an `input` object.
fn native_reply(calls: &[&Value]) -> Result<Reply, ReviewFailure> {
    Reply::from_native_calls(calls.iter().map(|call| {
        let name = call["name"].as_str().unwrap_or_default();
        let id = call["id"].as_str().unwrap_or("toolu").to_owned();
        let input = call["input"].as_object().ok_or_else(|| {
            ReviewFailure::new(FailureKind::Schema, "a tool_use block has no input object")
        })?;
        Ok((name, id, input.clone()))
    }))
}

/// The assistant blocks as sent back: text and tool_use with only the fields the API accepts.
fn replay_blocks(blocks: &[Value]) -> Vec<Value> {
    blocks
        .iter()
        .filter_map(|block| match block["type"].as_str() {
            Some("text") => Some(json!({"type": "text", "text": block["text"]})),
            Some("tool_use") => Some(json!({
                "type": "tool_use",
                "id": block["id"],
                "name": block["name"],
                "input": block["input"],
            })),
            _ => None,
        })
        .collect()
}

/// The provider's message in an error body: `{"type": "error", "error": {"type", "message"}}`.
pub fn error_message(body: &Value) -> Option<String> {
    let error = body.get("error")?;
    let kind = error["type"].as_str().unwrap_or_default();
    let message = error["message"].as_str().unwrap_or_default();
    match (kind.is_empty(), message.is_empty()) {
        (true, true) => error.as_str().map(str::to_owned),
        (true, false) => Some(message.to_owned()),
        (false, true) => Some(kind.to_owned()),
        (false, false) => Some(format!("{kind}: {message}")),
    }
}
