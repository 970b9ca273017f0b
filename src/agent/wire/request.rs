//! The neutral form every wire format's request is parsed into, and its
//! errors.
//!
//! A request as an agent sent it: which API, the model it named, whether it
//! asked for a stream, its system prompt, the tool definitions as sent, and
//! the conversation in order. Nothing here knows a format's field names.

use serde::Serialize;
use serde_json::Value;

/// The wire formats served.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Api {
    /// Anthropic Messages (`POST /v1/messages`): Claude Code, pi.
    AnthropicMessages,
    /// OpenAI Responses (`POST /v1/responses`): Codex, pi.
    OpenaiResponses,
    /// OpenAI Chat Completions (`POST /v1/chat/completions`): pi.
    OpenaiChat,
    /// Gemini (`POST /v1beta/models/M:streamGenerateContent` and
    /// `:generateContent`): Gemini CLI, pi.
    Gemini,
}

impl Api {
    /// Every API, in the order they are listed to users.
    pub const ALL: [Api; 4] = [
        Api::AnthropicMessages,
        Api::OpenaiResponses,
        Api::OpenaiChat,
        Api::Gemini,
    ];

    /// Its name on the command line and in files.
    pub fn name(self) -> &'static str {
        match self {
            Api::AnthropicMessages => "anthropic-messages",
            Api::OpenaiResponses => "openai-responses",
            Api::OpenaiChat => "openai-chat",
            Api::Gemini => "gemini",
        }
    }

    /// The API of a name ([`Api::name`]).
    pub fn from_name(name: &str) -> Option<Api> {
        Api::ALL.into_iter().find(|api| api.name() == name)
    }
}

impl std::fmt::Display for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A request that cannot be read: what is wrong and where (a path into
/// the body, `messages[2].content[0]`), worded for the agent's log.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{message}")]
pub struct WireError {
    /// The sentence.
    pub message: String,
}

impl WireError {
    /// An error with this sentence.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

/// How much of a request is read. Nesting is bounded by the JSON parser
/// (serde_json refuses more than 128 levels, before any of it is kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireLimits {
    /// The most bytes a body may have.
    pub max_body_bytes: usize,
}

impl Default for WireLimits {
    fn default() -> Self {
        Self {
            max_body_bytes: 32 * 1024 * 1024,
        }
    }
}

/// A tool definition as the agent sent it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolDef {
    /// Its name (for a tool without one, such as a provider's built-in
    /// search, its `type`).
    pub name: String,
    /// Whether its input is free text rather than JSON arguments (an
    /// OpenAI Responses `custom` tool, such as Codex's `apply_patch`).
    pub freeform: bool,
    /// The definition, exactly as sent.
    pub definition: Value,
}

/// The arguments of a tool call.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum CallInput {
    /// JSON arguments.
    Json(Value),
    /// Argument text that is not JSON (a cut-off stream, or a scripted
    /// mistake), as sent.
    Text(String),
    /// The raw input of a freeform tool (Codex's patch text).
    Freeform(String),
}

impl CallInput {
    /// The text the model produced for these arguments: compact JSON, or
    /// the text as sent.
    pub fn to_text(&self) -> String {
        match self {
            CallInput::Json(value) => value.to_string(),
            CallInput::Text(text) | CallInput::Freeform(text) => text.clone(),
        }
    }

    /// Arguments given as text: JSON when the text parses as JSON, else
    /// the text itself.
    pub fn from_arguments(text: &str) -> CallInput {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => CallInput::Json(value),
            Err(_) => CallInput::Text(text.to_owned()),
        }
    }

    /// The arguments as one JSON value, for formats that carry a value:
    /// text that does not parse is sent as a JSON string.
    pub fn to_value(&self) -> Value {
        match self {
            CallInput::Json(value) => value.clone(),
            CallInput::Text(text) | CallInput::Freeform(text) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
            }
        }
    }
}

/// An image in a message or a tool result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Image {
    /// Its MIME type (`image/png`).
    pub media_type: String,
    /// The base64 data.
    pub data: String,
}

/// A tool call the assistant made, as the agent sent it back.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCallItem {
    /// The call id (Gemini's calls may have none).
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// Its arguments.
    pub input: CallInput,
}

/// The result of a tool call, as the agent reported it to the model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolResultItem {
    /// The call it answers (Gemini's results may have none).
    pub id: Option<String>,
    /// The tool's name, where the format repeats it (Gemini).
    pub name: Option<String>,
    /// Its text parts, joined by newlines.
    pub text: String,
    /// Its images.
    pub images: Vec<Image>,
    /// Whether the agent marked it an error, where the format has a flag
    /// (Anthropic's `is_error`, Gemini's `response.error`); `None` where
    /// it has none (OpenAI's formats).
    pub is_error: Option<bool>,
}

/// One entry of the conversation, in the order sent.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Item {
    /// The user's words (text parts joined by newlines) and images.
    User {
        /// The text.
        text: String,
        /// The images.
        images: Vec<Image>,
    },
    /// The assistant's text (reasoning left out).
    Assistant {
        /// The text.
        text: String,
    },
    /// A tool call of the assistant.
    ToolCall(ToolCallItem),
    /// A tool result.
    ToolResult(ToolResultItem),
}

/// A request, in no format.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WireRequest {
    /// The format it came in.
    pub api: Api,
    /// The model it named.
    pub model: String,
    /// Whether it asked for a stream.
    pub stream: bool,
    /// The system prompt: every system and developer text, in order,
    /// joined by blank lines.
    pub system: String,
    /// The tool definitions, in the order sent.
    pub tools: Vec<ToolDef>,
    /// The conversation.
    pub history: Vec<Item>,
}

/// A tool call of the history with the result that answers it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnsweredCall<'a> {
    /// The call.
    pub call: &'a ToolCallItem,
    /// Its result, if the history has one.
    pub result: Option<&'a ToolResultItem>,
}

impl WireRequest {
    /// The tool calls already in the history: the step the agent is at.
    pub fn call_count(&self) -> usize {
        self.history
            .iter()
            .filter(|item| matches!(item, Item::ToolCall(_)))
            .count()
    }

    /// Whether this is a side call (a title, a router): a request with no
    /// tools, which a script never answers with a step.
    pub fn is_side_call(&self) -> bool {
        self.tools.is_empty()
    }

    /// The definition named `name`.
    pub fn tool(&self, name: &str) -> Option<&ToolDef> {
        self.tools.iter().find(|tool| tool.name == name)
    }

    /// Each tool call of the history, in order, with its result. A result
    /// answers the first call not yet answered that has its id; a result
    /// without an id (or with an id no call has) answers the first call
    /// not yet answered with its name, else the first not yet answered.
    pub fn answered_calls(&self) -> Vec<AnsweredCall<'_>> {
        let mut calls: Vec<AnsweredCall<'_>> = self
            .history
            .iter()
            .filter_map(|item| match item {
                Item::ToolCall(call) => Some(AnsweredCall { call, result: None }),
                _ => None,
            })
            .collect();
        for item in &self.history {
            let Item::ToolResult(result) = item else {
                continue;
            };
            let open = |call: &AnsweredCall<'_>| call.result.is_none();
            let slot = result
                .id
                .as_ref()
                .and_then(|id| {
                    calls
                        .iter()
                        .position(|c| open(c) && c.call.id.as_ref() == Some(id))
                })
                .or_else(|| {
                    result
                        .name
                        .as_ref()
                        .and_then(|name| calls.iter().position(|c| open(c) && &c.call.name == name))
                })
                .or_else(|| calls.iter().position(open));
            if let Some(index) = slot {
                calls[index].result = Some(result);
            }
        }
        calls
    }
}
