//! Messages exchanged between the loop and a model.

use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

use crate::tools::Content;
use crate::tools::ToolCall;
use crate::tools::ToolResult;

/// Why an assistant message ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished its answer.
    Stop,
    /// The model wants its tool calls executed.
    ToolUse,
    /// The output token limit cut the message: its calls are not executed.
    Length,
    /// The provider failed.
    Error,
    /// The request was aborted.
    Aborted,
}

/// Token usage of one response, as a provider reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens not served from the prompt cache.
    pub input: u64,
    /// Output tokens of the response.
    pub output: u64,
    /// Input tokens served from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
}

impl Usage {
    /// Every token of the request and the response.
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_read + self.cache_write
    }
}

/// One block of an assistant message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AssistantBlock {
    /// Text for the user.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call.
    ToolCall(ToolCall),
}

/// A message the model sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// Text and tool calls, in the order the model produced them.
    pub content: Vec<AssistantBlock>,
    /// Why it ended.
    pub stop_reason: StopReason,
    /// What it cost.
    pub usage: Usage,
    /// The provider's error, for `Error` and `Aborted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

impl AssistantMessage {
    /// The tool calls, in source order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|block| match block {
            AssistantBlock::ToolCall(call) => Some(call),
            AssistantBlock::Text { .. } => None,
        })
    }

    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![AssistantBlock::Text { text: text.into() }],
            stop_reason: StopReason::Stop,
            usage: Usage::default(),
            error_message: None,
        }
    }
}

/// The result of one tool call, as the model reads it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    /// The call it answers.
    pub tool_call_id: String,
    /// The tool that ran.
    pub tool_name: String,
    /// Blocks for the model.
    pub content: Vec<Content>,
    /// Facts for people and checks.
    pub details: Option<Value>,
    /// Whether the call failed.
    pub is_error: bool,
}

impl ToolResultMessage {
    /// The message for `result` of call `call`.
    pub fn new(call: &ToolCall, result: &ToolResult) -> Self {
        Self {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: result.content.clone(),
            details: result.details.clone(),
            is_error: result.is_error,
        }
    }

    /// The text blocks joined by newlines.
    pub fn text(&self) -> String {
        crate::tools::contract::text_of(&self.content)
    }
}

/// Anything in a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// The user's words.
    User {
        /// The text.
        text: String,
    },
    /// The model's message.
    Assistant(AssistantMessage),
    /// A tool's result.
    ToolResult(ToolResultMessage),
}
