//! The neutral form of an answer, before it is written in a format: text,
//! tool calls, usage; and the server-sent events every streamed format is
//! written as.

use serde::Serialize;
use serde_json::Value;

use super::request::CallInput;

/// A tool call to send.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplyCall {
    /// The call id (Gemini's answers carry none: the agent makes its own).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments: JSON, argument text, or a freeform tool's input
    /// (sent as OpenAI Responses' `custom_tool_call`; elsewhere as text).
    pub input: CallInput,
}

/// Token usage to report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReplyUsage {
    /// Input tokens, the cached ones included.
    pub input: u64,
    /// Of them, read from a prompt cache.
    pub cache_read: u64,
    /// Output tokens.
    pub output: u64,
}

/// One assistant message to send: text first, then the calls (several for
/// a `parallel:` step).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WireReply {
    /// Text for the user.
    pub text: Option<String>,
    /// Tool calls.
    pub calls: Vec<ReplyCall>,
    /// What it cost.
    pub usage: ReplyUsage,
}

impl WireReply {
    /// A text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// The text the answer is priced as (its output tokens): its text,
    /// then each call as `NAME:ARGS`, a line each.
    pub fn priced_text(&self) -> String {
        let mut output = self.text.clone().unwrap_or_default();
        for call in &self.calls {
            output.push('\n');
            output.push_str(&call.name);
            output.push(':');
            output.push_str(&call.input.to_text());
        }
        output
    }
}

/// What identifies one answer on the wire: the ids formats give a
/// response, and the model it claims to be. Given by the server, so that
/// answers are the same bytes run after run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// The answer's number in the server's life (1, 2, …): each format
    /// makes its ids of it (`msg_7`, `resp_7`, `chatcmpl-7`).
    pub serial: u64,
    /// The model named in the request.
    pub model: String,
}

/// Server-sent events being written: `event:` lines where the format
/// names its events, one `data:` line of compact JSON each.
#[derive(Debug, Default)]
pub(super) struct Sse {
    out: String,
}

impl Sse {
    /// An event with a name.
    pub(super) fn event(&mut self, name: &str, data: &Value) {
        self.out.push_str("event: ");
        self.out.push_str(name);
        self.out.push('\n');
        self.data(data);
    }

    /// A `data:` line alone.
    pub(super) fn data(&mut self, data: &Value) {
        self.out.push_str("data: ");
        self.out.push_str(&data.to_string());
        self.out.push_str("\n\n");
    }

    /// A `data:` line of literal text (`[DONE]`).
    pub(super) fn data_text(&mut self, text: &str) {
        self.out.push_str("data: ");
        self.out.push_str(text);
        self.out.push_str("\n\n");
    }

    /// The stream written.
    pub(super) fn finish(self) -> String {
        self.out
    }
}
