//! What a server keeps of each request it received: the request read into
//! its neutral form, what it answered, and (when asked) the body as sent;
//! and the bounded JSON line `--log` writes of it.

use serde::Serialize;
use serde_json::Value;
use serde_json::json;

use crate::agent::wire::Api;
use crate::agent::wire::WireRequest;

use super::responder::Answer;
use super::responder::AnswerKind;

/// One request received and what became of it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Exchange {
    /// Its number, in the order received (1, 2, …).
    pub serial: u64,
    /// The HTTP method.
    pub method: String,
    /// The path and query, as sent (at most 2 KiB of it).
    pub path: String,
    /// The format its path speaks, if any.
    pub api: Option<Api>,
    /// The HTTP status answered.
    pub status: u16,
    /// The bytes of its body (as far as they were read).
    pub body_bytes: usize,
    /// The request, read.
    pub request: Option<WireRequest>,
    /// What it was answered, when it was.
    pub answer: Option<Answer>,
    /// Why it was refused, when it was.
    pub error: Option<String>,
    /// The body as sent (not UTF-8: replaced), when the server keeps
    /// bodies.
    pub body: Option<String>,
}

/// The longest path kept.
pub(super) const MAX_PATH_BYTES: usize = 2048;

impl Exchange {
    /// Whether it was a side call (a request without tools).
    pub fn is_side_call(&self) -> bool {
        self.answer
            .as_ref()
            .is_some_and(|answer| answer.kind == AnswerKind::Side)
    }

    /// The exchange as one line of JSON (no newline): everything but the
    /// read request, of which its model, stream flag, tool names and
    /// calls so far are kept, and the body cut to `max_body` bytes (at a
    /// character boundary, `body_truncated` then true).
    pub fn log_line(&self, max_body: usize) -> String {
        let request = self.request.as_ref().map(|request| {
            json!({
                "model": request.model,
                "stream": request.stream,
                "tools": request.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
                "history_items": request.history.len(),
                "history_calls": request.call_count(),
            })
        });
        let (body, truncated) = match &self.body {
            Some(body) => {
                let cut = floor_char_boundary(body, max_body);
                (Some(&body[..cut]), cut < body.len())
            }
            None => (None, false),
        };
        let mut line = json!({
            "serial": self.serial,
            "method": self.method,
            "path": self.path,
            "api": self.api,
            "status": self.status,
            "body_bytes": self.body_bytes,
            "request": request,
            "side_call": self.is_side_call(),
            "answer": self.answer,
            "error": self.error,
        });
        if let (Some(body), Value::Object(map)) = (body, &mut line) {
            map.insert("body".to_owned(), json!(body));
            map.insert("body_truncated".to_owned(), json!(truncated));
        }
        line.to_string()
    }
}

/// The largest index at most `max` that is a character boundary of `text`.
pub(super) fn floor_char_boundary(text: &str, max: usize) -> usize {
    if max >= text.len() {
        return text.len();
    }
    (0..=max)
        .rev()
        .find(|&index| text.is_char_boundary(index))
        .unwrap_or(0)
}
