//! What passed between shellgate and the reviewer in one review, for `shellgate eval`'s traces.
//!
//! Recording is opt-in ([`super::review_with_transcript`]): `check` and `run` never keep bodies in
//! memory. What is recorded is exactly what went over the wire: the request body as sent (so the
//! prompt after redaction), the response body as received (within the client's size cap), the
//! read-only tool calls with their results, and the token counts the server reported.

use serde::Serialize;
use serde_json::Value;

/// Every round of one review, in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Transcript {
    pub rounds: Vec<Round>,
}

/// One request to the reviewer and what came back.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Round {
    /// The request body exactly as sent.
    pub request: Value,
    /// The HTTP status; `None` when no answer came (timeout, connection error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The response body as received (lossy UTF-8); `None` when none was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response: Option<String>,
    /// The read-only tool calls the reply asked for, with what they returned.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolTrace>,
    /// Token counts from the response's `usage`, when the server sent them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Milliseconds from sending the request to having read the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
}

/// One tool call and its result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolTrace {
    pub call: String,
    pub result: String,
}

/// Tokens, as the server counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
}

impl Usage {
    /// `usage` of a Chat Completions (`prompt_tokens`/`completion_tokens`) or Messages
    /// (`input_tokens`/`output_tokens`) response; `None` when the body carries neither.
    pub fn from_body(body: &[u8]) -> Option<Usage> {
        let value: Value = serde_json::from_slice(body).ok()?;
        let usage = value.get("usage")?;
        let count = |names: [&str; 2]| names.iter().find_map(|n| usage.get(*n)?.as_u64());
        let input = count(["prompt_tokens", "input_tokens"]);
        let output = count(["completion_tokens", "output_tokens"]);
        (input.is_some() || output.is_some()).then(|| Usage {
            input: input.unwrap_or(0),
            output: output.unwrap_or(0),
        })
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;

    fn add(self, other: Usage) -> Usage {
        Usage {
            input: self.input + other.input,
            output: self.output + other.output,
        }
    }
}

impl Transcript {
    /// Starts a round for a request about to be sent.
    pub fn sent(&mut self, request: &Value) {
        self.rounds.push(Round {
            request: request.clone(),
            status: None,
            response: None,
            tool_calls: Vec::new(),
            usage: None,
            ms: None,
        });
    }

    /// Records the answer to the last request.
    pub fn received(&mut self, status: u16, body: &[u8], ms: u64) {
        if let Some(round) = self.rounds.last_mut() {
            round.status = Some(status);
            round.response = Some(String::from_utf8_lossy(body).into_owned());
            round.usage = Usage::from_body(body);
            round.ms = Some(ms);
        }
    }

    /// Records the tool calls the last answer asked for.
    pub fn tools(&mut self, calls: impl IntoIterator<Item = ToolTrace>) {
        if let Some(round) = self.rounds.last_mut() {
            round.tool_calls.extend(calls);
        }
    }

    /// Tokens over every round that reported them; `None` when none did.
    pub fn usage(&self) -> Option<Usage> {
        self.rounds
            .iter()
            .filter_map(|r| r.usage)
            .reduce(std::ops::Add::add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_from_both_wire_formats() {
        let openai = br#"{"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}"#;
        let anthropic = br#"{"usage":{"input_tokens":7,"output_tokens":2}}"#;
        assert_eq!(
            Usage::from_body(openai),
            Some(Usage {
                input: 12,
                output: 3
            })
        );
        assert_eq!(
            Usage::from_body(anthropic),
            Some(Usage {
                input: 7,
                output: 2
            })
        );
        assert_eq!(Usage::from_body(b"{}"), None);
        assert_eq!(Usage::from_body(b"not json"), None);
    }

    #[test]
    fn rounds_sum_their_usage() {
        let mut t = Transcript::default();
        assert_eq!(t.usage(), None);
        t.sent(&serde_json::json!({"n": 1}));
        t.received(200, br#"{"usage":{"input_tokens":5,"output_tokens":1}}"#, 3);
        t.sent(&serde_json::json!({"n": 2}));
        t.received(200, br#"{"usage":{"input_tokens":9,"output_tokens":2}}"#, 4);
        assert_eq!(
            t.usage(),
            Some(Usage {
                input: 14,
                output: 3
            })
        );
        assert_eq!(t.rounds[1].ms, Some(4));
    }
}
